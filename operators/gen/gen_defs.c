/* The CPU-only definitions of the generators, from the table SL__GEN_TABLE (gen_int.h).
 * CUDA builds register gen_cuda.c's instead, which add the GPU sources. */
#include "gen_int.h"

int64_t sl__gen_tasks(sl_task_t *t)
{
    int64_t rows = *(const int64_t *)sl_op_data(sl_task_op(t)); /* the data's first member */
    int64_t m = sl_task_morsel_rows(t);
    return rows / m + (rows % m != 0); /* rounded up without rows + m - 1 overflowing */
}

#define CPU_DEF(id, name_, doc_, n_options_, cost_, split_, can_cuda_)                     \
    static const struct sl_impl id##_impls[] = {                                           \
        {.device = SL_DEVICE_CPU, .run = sl__gen_##id##_source}};                          \
    SL__GEN_DEF(sl__gen_##id##_def, id, name_, doc_, n_options_, cost_, split_, id##_impls);
SL__GEN_TABLE(CPU_DEF)
