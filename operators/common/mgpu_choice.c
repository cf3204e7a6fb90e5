/* When a plan's join or sort runs over several devices (mgpu_choice.h). */
#include "common/mgpu_choice.h"

/* Row ids ride as 32-bit gather indices after the exchange. */
#define MAX_ROWS (((int64_t)1 << 32) - 1)

static enum sl__mg_why common(const struct sl__mg_shape *s, int sides)
{
    if (s->n_devices < 2)
        return SL__MG_ONE_DEVICE;
    if (!s->kind_ok)
        return SL__MG_KIND;
    if (!s->cols_ok)
        return SL__MG_COLUMNS;
    for (int i = 0; i < sides; i++)
        if (s->rows[i] >= MAX_ROWS)
            return SL__MG_ROWS;
    return s->in_gpu ? SL__MG_YES : SL__MG_NOT_IN_GPU;
}

enum sl__mg_why sl__mg_join_choice(const struct sl__mg_shape *s)
{
    if (s->n_devices >= 2 && s->aggregate)
        return SL__MG_AGGREGATE;
    int w = s->key_width;
    if (s->n_devices >= 2 && (s->n_keys != 1 || (w != 1 && w != 2 && w != 4 && w != 8)))
        return SL__MG_KEYS;
    return common(s, 2);
}

enum sl__mg_why sl__mg_sort_choice(const struct sl__mg_shape *s)
{
    if (s->n_devices >= 2 && (s->n_keys != 1 || !s->key_signed8))
        return SL__MG_KEYS;
    return common(s, 1);
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
    };
    return (unsigned)w < SL__MG_N_WHY ? text[w] : "?";
}
