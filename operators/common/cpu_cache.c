/* The machine's data cache sizes (op_common.h), read once from sysfs, and the choice
 * of non-temporal stores that the sort and partition scatters make from them. */
#include <stdio.h>
#include <string.h>

#include "op_common.h"

static _Atomic int64_t cache_bytes[4];

static int64_t read_cache(int level)
{
    for (int idx = 0; idx < 8; idx++) {
        char path[96], buf[64];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", idx);
        FILE *f = fopen(path, "r");
        if (!f)
            break;
        int lv = 0;
        if (fscanf(f, "%d", &lv) != 1)
            lv = 0;
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", idx);
        f = fopen(path, "r");
        if (!f)
            continue;
        if (!fgets(buf, sizeof buf, f))
            buf[0] = 0;
        fclose(f);
        if (lv != level || !strncmp(buf, "Instruction", 11))
            continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", idx);
        f = fopen(path, "r");
        if (!f)
            continue;
        long long v = 0;
        char unit = 0;
        int got = fscanf(f, "%lld%c", &v, &unit);
        fclose(f);
        if (got >= 1 && v > 0)
            return unit == 'M' ? v << 20 : unit == 'K' ? v << 10 : v;
    }
    return level == 1 ? 48 << 10 : level == 2 ? 2 << 20 : 32 << 20;
}

int64_t sl__cpu_cache_bytes(int level)
{
    if (level < 1 || level > 3)
        return 0;
    int64_t v = atomic_load_explicit(&cache_bytes[level], memory_order_relaxed);
    if (!v) {
        /* Racing readers compute the same value; the store only caches it. */
        v = read_cache(level);
        atomic_store_explicit(&cache_bytes[level], v, memory_order_relaxed);
    }
    return v;
}

int sl__stream_stores(int64_t bytes)
{
    return bytes > 4 * sl__cpu_cache_bytes(2);
}
