/* sluice devices: what the engine sees. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void print_json(sl_engine_t *eng)
{
    printf("{\"devices\":[");
    for (int i = 0; i < sl_engine_device_count(eng); i++) {
        struct sl_device_info d = SL_DEVICE_INFO_INIT;
        sl_engine_device_info(eng, i, &d);
        printf("%s{\"kind\":\"%s\",\"ordinal\":%d,\"name\":\"%s\",\"memory_bytes\":%lld,"
               "\"cores\":%d,\"numa\":%d,\"usable\":%s",
               i ? "," : "", d.kind == SL_DEVICE_CPU ? "cpu" : "cuda", d.ordinal, d.name,
               (long long)d.memory_bytes, d.n_cores, d.numa_node, d.usable ? "true" : "false");
        double copy = 0;
        if (d.kind == SL_DEVICE_CUDA && d.usable)
            sl_engine_measure_device_copy(eng, i, 256 << 20, &copy);
        if (d.kind == SL_DEVICE_CUDA)
            printf(",\"compute\":\"%d.%d\",\"reason\":\"%s\",\"h2d_gbps\":%.1f,\"d2h_gbps\":%.1f"
                   ",\"copy_gbps\":%.1f",
                   d.compute_major, d.compute_minor, d.reason, d.h2d_gbps, d.d2h_gbps, copy);
        printf("}");
    }
    printf("]}\n");
}

int cmd_devices(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: sluice devices [--json] [--threads N] [--gpus N [--split-gpu]]\n"
                   "Lists the CPU (cores, NUMA nodes) and the GPUs the engine sees; with\n"
                   "--split-gpu, how many logical devices it makes of them.\n");
            return 0;
        }
        int r = cli_common_option(&c, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r == 0)
            return cli_usage_fail("devices: unknown option '%s' (see sluice devices --help)", argv[i]);
    }
    sl_engine_t *eng = cli_open_engine(&c);
    if (!eng)
        return 1;
    if (sl_engine_measure_links(eng) != SL_OK)
        fprintf(stderr, "sluice: %s\n", sl_engine_errmsg(eng));
    if (c.json) {
        print_json(eng);
        sl_engine_close(eng);
        return 0;
    }
    int gpus = 0;
    for (int i = 0; i < sl_engine_device_count(eng); i++) {
        struct sl_device_info d = SL_DEVICE_INFO_INIT;
        sl_engine_device_info(eng, i, &d);
        if (d.kind == SL_DEVICE_CPU) {
            printf("cpu      %s: %d worker threads, %d NUMA node%s, %.1f GiB RAM\n", d.name,
                   d.n_cores, d.numa_node, d.numa_node == 1 ? "" : "s",
                   d.memory_bytes / 1073741824.0);
            continue;
        }
        gpus++;
        printf("gpu %-4d %s: %.1f GiB, %d SMs, compute %d.%d, NUMA node %d, %s", d.ordinal,
               d.name, d.memory_bytes / 1073741824.0, d.n_cores, d.compute_major, d.compute_minor,
               d.numa_node, d.usable ? "usable" : "NOT USED: ");
        if (!d.usable)
            printf("%s", d.reason);
        if (d.h2d_gbps > 0)
            printf(", host->device %.1f GB/s, device->host %.1f GB/s", d.h2d_gbps, d.d2h_gbps);
        double copy = 0; /* what an exchange between logical devices of this GPU moves at */
        if (d.usable && sl_engine_measure_device_copy(eng, i, 256 << 20, &copy) == SL_OK)
            printf(", device copy %.1f GB/s (read + write)", copy);
        printf("\n");
    }
    if (gpus == 0)
        printf("no GPU\n");
    /* Peer access between the GPUs: the exchange copies directly where it is on, through
     * the host where it is off. */
    for (int i = 1; i < sl_engine_device_count(eng); i++)
        for (int j = i + 1; j < sl_engine_device_count(eng); j++) {
            int ij = 0, ji = 0;
            if (sl_engine_device_peer(eng, i, j, &ij) == SL_OK &&
                sl_engine_device_peer(eng, j, i, &ji) == SL_OK)
                printf("peer     gpu %d <-> gpu %d: %s\n", i - 1, j - 1,
                       ij && ji ? "peer access" : ij || ji ? "peer access one way"
                                                          : "no peer access (via the host)");
        }
    char n_used[32] = "0", split[16] = "false";
    sl_engine_option_get(eng, "gpus", n_used, sizeof n_used);
    sl_engine_option_get(eng, "split_gpu", split, sizeof split);
    if (gpus > 0 && !strcmp(split, "true"))
        printf("logical devices: %s over %d GPU%s (split_gpu; each its part of its GPU's "
               "memory, its own streams and worker)\n", n_used, gpus, gpus == 1 ? "" : "s");
    sl_engine_close(eng);
    return 0;
}
