/* When a plan's join or sort runs over several devices (mgpu_choice.h). */
#include <stdbool.h>

#include "common/mgpu_choice.h"
#include "common/mgpu_plan.h"

/* Row ids ride as 32-bit gather indices after the exchange. */
#define MAX_ROWS (((int64_t)1 << 32) - 1)

/* Shape first (what cannot spread whatever the memory), then memory, then size. */
static enum sl__mg_why common(const struct sl__mg_shape *s, int sides)
{
    if (!s->kind_ok)
        return SL__MG_KIND;
    if (!s->cols_ok)
        return SL__MG_COLUMNS;
    int64_t rows = 0;
    for (int i = 0; i < sides; i++) {
        if (s->rows[i] >= MAX_ROWS)
            return SL__MG_ROWS;
        rows += s->rows[i];
    }
    if (!s->in_gpu)
        return SL__MG_NOT_IN_GPU;
    if (s->n_fit < 2)
        return SL__MG_BUDGET;
    return s->mode == SL__MG_AUTO && rows < SL__MG_MIN_ROWS ? SL__MG_SMALL : SL__MG_YES;
}

/* Before any shape check: the engine's devices and the option. */
static enum sl__mg_why devices(const struct sl__mg_shape *s)
{
    if (s->n_devices < 2)
        return SL__MG_ONE_DEVICE;
    return s->mode == SL__MG_MODE_OFF ? SL__MG_OFF : SL__MG_YES;
}

enum sl__mg_why sl__mg_join_choice(const struct sl__mg_shape *s)
{
    enum sl__mg_why w = devices(s);
    if (w != SL__MG_YES)
        return w;
    if (s->aggregate)
        return SL__MG_AGGREGATE;
    int kw = s->key_width;
    if (s->n_keys != 1 || (kw != 1 && kw != 2 && kw != 4 && kw != 8))
        return SL__MG_KEYS;
    return common(s, 2);
}

enum sl__mg_why sl__mg_sort_choice(const struct sl__mg_shape *s)
{
    enum sl__mg_why w = devices(s);
    if (w != SL__MG_YES)
        return w;
    if (s->n_keys != 1 || !s->key_signed8)
        return SL__MG_KEYS;
    return common(s, 1);
}

int sl__mg_fit_devices(const int64_t *room, int n, int self, int64_t bytes, int64_t fixed,
                       int *use)
{
    int order[SL__MG_MAX_DEV], m = 0;
    n = n > SL__MG_MAX_DEV ? SL__MG_MAX_DEV : n;
    int first = self >= 0 && self < n; /* order[0] is self, whatever its room */
    if (first)
        order[m++] = self;
    for (int d = 0; d < n; d++) { /* the others by room, largest first (insertion) */
        if (d == self)
            continue;
        int at = m++;
        while (at > first && room[order[at - 1]] < room[d]) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = d;
    }
    for (int k = n; k >= 2; k--) {
        int64_t need = fixed + 2 * (bytes / k + 1);
        bool fits = true;
        for (int i = 0; i < k; i++)
            fits &= room[order[i]] >= need;
        if (!fits)
            continue;
        bool in[SL__MG_MAX_DEV] = {0};
        for (int i = 0; i < k; i++)
            in[order[i]] = true;
        for (int d = 0, j = 0; d < n; d++)
            if (in[d])
                use[j++] = d;
        return k;
    }
    return 0;
}

const char *sl__mg_why_text(enum sl__mg_why w)
{
    static const char *const text[SL__MG_N_WHY] = {
        [SL__MG_YES] = "over all devices",
        [SL__MG_ONE_DEVICE] = "one device: the engine has one",
        [SL__MG_KEYS] = "one device: the key is not one integer the multi-device path takes",
        [SL__MG_KIND] = "one device: a join kind, residual or sort order it does not take",
        [SL__MG_COLUMNS] = "one device: an output column wider than 8 bytes (strings)",
        [SL__MG_AGGREGATE] = "one device: output=aggregate",
        [SL__MG_ROWS] = "one device: 2^32 - 1 rows or more on a side",
        [SL__MG_NOT_IN_GPU] = "one device: input not all in GPU memory or over the budget",
        [SL__MG_OFF] = "one device: multi_gpu=off",
        [SL__MG_BUDGET] = "one device: no two devices' memory budgets hold their shares",
        [SL__MG_SMALL] = "one device: fewer than 2^20 rows (multi_gpu=auto; on spreads them)",
    };
    return (unsigned)w < SL__MG_N_WHY ? text[w] : "?";
}

int sl__mg_int_key_width(enum sl_type t)
{
    switch (SL_TYPE_ID(t)) {
    case SL_TYPE_BOOL: case SL_TYPE_INT8: case SL_TYPE_UINT8: return 1;
    case SL_TYPE_INT16: case SL_TYPE_UINT16: return 2;
    case SL_TYPE_INT32: case SL_TYPE_UINT32: case SL_TYPE_DATE32: return 4;
    case SL_TYPE_INT64: case SL_TYPE_UINT64: case SL_TYPE_TIMESTAMP: return 8;
    case SL_TYPE_DECIMAL: return sl_type_width(t) == 8 ? 8 : 0;
    default: return 0;
    }
}

/* The exchange's estimate for `rows` spread evenly over k devices: every device holds
 * rows / k and sends rows / k^2 to each (16 bytes a row: key and row id). */
static void judge_cost(int64_t rows, int k, struct sl__mg_verdict *v)
{
    int64_t count[SL__MG_MAX_DEV * SL__MG_MAX_DEV];
    for (int i = 0; i < k * k; i++)
        count[i] = rows / ((int64_t)k * k);
    struct sl__mg_cost c;
    sl__mg_cost(count, k, 16, SL__MG_LINK_GBPS, &c);
    v->link_bytes = c.link_bytes[1]; /* 0 -> 1: every link carries as much */
    v->device_bytes = c.total_bytes / k;
    v->seconds = c.seconds;
}

void sl__mg_judge(struct sl__mg_shape *s, int sides, const struct sl__mg_env *env,
                  struct sl__mg_verdict *out)
{
    bool known = true;
    int64_t rows = 0;
    for (int i = 0; i < sides; i++) { /* estimates may saturate: past 2^40 (too many
                                          * anyway) the bytes below could overflow */
        known &= env->rows[i] >= 0;
        s->rows[i] = env->rows[i] < 0 ? SL__MG_MIN_ROWS : env->rows[i];
        s->rows[i] = s->rows[i] > ((int64_t)1 << 40) ? (int64_t)1 << 40 : s->rows[i];
        rows += s->rows[i];
    }
    int n = env->n_devices < SL__MG_MAX_DEV ? env->n_devices : SL__MG_MAX_DEV;
    int64_t room[SL__MG_MAX_DEV], per_row = sides == 2 ? SL__MG_JOIN_ROW_BYTES
                                                       : SL__MG_SORT_ROW_BYTES;
    int64_t self_bytes = rows * (sides == 2 ? SL__MG_JOIN_SELF_ROW_BYTES
                                            : SL__MG_SORT_SELF_ROW_BYTES);
    for (int d = 0; d < n; d++)
        room[d] = env->room[d];
    int self = env->self >= 0 && env->self < n ? env->self : -1;
    s->in_gpu = self < 0 || self_bytes + SL__MG_DEV_FIXED <= room[self];
    if (self >= 0)
        room[self] -= self_bytes;
    int use[SL__MG_MAX_DEV];
    s->n_devices = env->n_devices;
    s->mode = env->mode;
    s->n_fit = sl__mg_fit_devices(room, n, self, per_row * rows, SL__MG_DEV_FIXED, use);
    enum sl__mg_why w = sides == 2 ? sl__mg_join_choice(s) : sl__mg_sort_choice(s);
    *out = (struct sl__mg_verdict){.devices = 1, .why = w, .why_text = sl__mg_why_text(w),
                                   .rows = known ? rows : -1, .link_bytes = -1,
                                   .device_bytes = -1, .seconds = -1};
    if (w != SL__MG_YES)
        return;
    out->devices = s->n_fit;
    if (s->n_fit < s->n_devices) { /* as the profile: multi_device k, fallback 9 */
        out->why = SL__MG_BUDGET;
        out->why_text = "over fewer devices: the others' memory budgets cannot hold shares";
    }
    if (known)
        judge_cost(rows, s->n_fit, out);
}
