/* The sort's multi-device shape (docs/MULTI_GPU.md), from what bind knows: the CUDA
 * finalize starts from it (sort_mg_cuda.c) and explain judges by it (its judge,
 * registered at bind: runtime/internal.h), so both say the same. Plain C, every build. */
#include "common/mgpu_choice.h"
#include "sort_op.h"

void sl__sort_mg_shape(const sl_op_t *op, struct sl__mg_shape *sh)
{
    const struct sort_data *d = sl_op_data(op);
    const sl_schema_t *in = sl_op_input_schema(op, 0);
    enum sl_type kt = SL_TYPE_INVALID, ct;
    sl_schema_field(in, d->spec.keys[0].col, NULL, &kt);
    int has_dict = 0; /* a DICT column (the multi-device sort does not carry them) */
    for (int c = 0; c < d->n_cols; c++)
        has_dict |= sl_schema_field(in, c, NULL, &ct) == SL_OK && ct == SL_TYPE_DICT;
    *sh = (struct sl__mg_shape){
        .n_keys = d->spec.n_keys, .key_width = sl__mg_int_key_width(kt),
        .key_signed8 = sl__type_signed_word(kt) && sl_type_width(kt) == 8,
        .kind_ok = !d->spec.keys[0].desc, .cols_ok = !has_dict};
}

void sl__sort_mg_judge(const sl_op_t *op, const struct sl__mg_env *env,
                       struct sl__mg_verdict *out)
{
    struct sl__mg_shape sh;
    sl__sort_mg_shape(op, &sh);
    sl__mg_judge(&sh, 1, env, out);
}
