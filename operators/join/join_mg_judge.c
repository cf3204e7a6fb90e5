/* The join's multi-device shape (docs/MULTI_GPU.md), from what bind knows: the CUDA
 * finalize starts from it (join_mg_cuda.c) and explain judges by it (its judge,
 * registered at bind: runtime/internal.h), so both say the same. Plain C, every build. */
#include "common/mgpu_choice.h"
#include "join_int.h"

void join_mg_shape(const struct join_data *d, struct sl__mg_shape *sh)
{
    int cols_ok = 1;
    for (int oc = 0; oc < d->n_out; oc++)
        cols_ok &= !sl_type_is_string(d->out[oc].type) && sl_type_width(d->out[oc].type) >= 1 &&
                   sl_type_width(d->out[oc].type) <= 8;
    *sh = (struct sl__mg_shape){
        .n_keys = d->n_keys,
        .key_width = d->ktype[0] == d->rktype[0] ? sl__mg_int_key_width(d->ktype[0]) : 0,
        .kind_ok = d->n_resid == 0 && (d->kind == JOIN_INNER || d->kind == JOIN_LEFT ||
                                       d->kind == JOIN_SEMI || d->kind == JOIN_ANTI),
        .cols_ok = cols_ok, .aggregate = d->aggregate};
}

void join_mg_judge(const sl_op_t *op, const struct sl__mg_env *env, struct sl__mg_verdict *out)
{
    struct sl__mg_shape sh;
    join_mg_shape(sl_op_data(op), &sh);
    sl__mg_judge(&sh, 2, env, out);
}
