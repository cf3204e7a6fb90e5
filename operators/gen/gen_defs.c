/* The CPU-only definitions of the generators, from the table SL__GEN_TABLE (gen_int.h).
 * CUDA builds register gen_cuda.c's instead, which add the GPU sources. */
#include "gen_int.h"

int64_t sl__gen_share_tasks(const sl_task_t *t, int64_t rows)
{
    int64_t m = sl_task_morsel_rows(t), lo, hi;
    sl__rank_share(t, rows, &lo, &hi);
    return (hi - lo) / m + ((hi - lo) % m != 0); /* rounded up without overflowing */
}

int64_t sl__gen_tasks(sl_task_t *t)
{
    /* the row count is the bind data's first member */
    return sl__gen_share_tasks(t, *(const int64_t *)sl_op_data(sl_task_op(t)));
}

void sl__gen_morsel(const sl_task_t *t, int64_t rows, int64_t *first, int64_t *n)
{
    int64_t m = sl_task_morsel_rows(t), lo, hi;
    sl__rank_share(t, rows, &lo, &hi);
    *first = lo + sl_task_index(t) * m;
    *n = sl__morsel_len(hi - lo, m, sl_task_index(t));
}

#define CPU_DEF(id, name_, doc_, n_options_, cost_, split_, can_cuda_)                     \
    static const struct sl_impl id##_impls[] = {                                           \
        {.device = SL_DEVICE_CPU, .run = sl__gen_##id##_source}};                          \
    SL__GEN_DEF(sl__gen_##id##_def, id, name_, doc_, n_options_, cost_, split_, id##_impls);
SL__GEN_TABLE(CPU_DEF)
