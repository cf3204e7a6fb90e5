/* Applying a bound predicate to a batch: the selection and compaction shared by the
 * filter operator and the scans' where= option (predicates pushed into the scan). */
#include <stdio.h>
#include <string.h>

#include "common/values.h"
#include "expr.h"
#include "gpu_ext.h"
#include "operators.h"

void sl__pred_state_fini(struct sl__pred_state *s)
{
    sl__expr_scratch_fini(&s->scratch);
    sl__free(s->sel, (size_t)s->sel_cap * sizeof *s->sel);
    s->sel = NULL;
    s->sel_cap = 0;
}

/* Copies the selected rows of column c of `in` into column c of `out`: fixed widths
 * here (the fast path), strings and dictionaries through sl__col_take. */
static int gather_column(sl_batch_t *in, sl_batch_t *out, int c, const int64_t *sel, int64_t k)
{
    const struct sl__col *ic = &in->cols[c];
    size_t w = sl_type_width(ic->type);
    if (w == 0 || ic->type == SL_TYPE_DICT)
        return sl__col_take(out, c, in, c, sel, k);
#define GATHER(T)                                          \
    do {                                                   \
        const T *s = sl__col_values(in, c);                \
        T *d = sl__col_values(out, c);                     \
        for (int64_t j = 0; j < k; j++)                    \
            d[j] = s[sel[j]];                              \
    } while (0)
    switch (w) {
    case 1: GATHER(uint8_t); break;
    case 2: GATHER(uint16_t); break;
    case 4: GATHER(uint32_t); break;
    case 8: GATHER(uint64_t); break;
    default: { /* 16-byte decimals */
        const char *s = sl__col_values(in, c);
        char *d = sl__col_values(out, c);
        for (int64_t j = 0; j < k; j++)
            memcpy(d + j * 16, s + sel[j] * 16, 16);
        break;
    }
    }
#undef GATHER
    if (!ic->validity || ic->null_count == 0)
        return SL_OK;
    uint8_t *v = sl_batch_column_validity(out, c);
    if (!v)
        return SL_ENOMEM;
    int64_t nulls = 0;
    for (int64_t j = 0; j < k; j++) {
        if (!sl__col_valid(ic, sel[j])) {
            v[j >> 3] &= (uint8_t) ~(1u << (j & 7));
            nulls++;
        }
    }
    out->cols[c].null_count = nulls;
    return SL_OK;
}

/* Fills l->sel with the rows of `in` where the predicate is TRUE; returns their count or
 * a negative error (recorded on the task). */
static int64_t select_rows(sl_task_t *t, const struct sl__expr *e, struct sl__pred_state *l,
                           sl_batch_t *in, int64_t n)
{
    if (n > l->sel_cap) {
        int64_t *ns = sl__realloc(l->sel, (size_t)l->sel_cap * sizeof *ns, (size_t)n * sizeof *ns);
        if (!ns)
            return sl_task_fail(t, SL_ENOMEM, "out of memory selecting %lld rows", (long long)n);
        l->sel = ns;
        l->sel_cap = n;
    }
    if (!l->fast)
        sl__pred_fast_init(e, l, in->schema);
    int64_t k = l->fast > 0 ? sl__pred_fast_select(l, in, l->sel) : -1;
    if (k >= 0)
        return k;
    k = 0;
    for (int64_t s = 0; s < n; s += SL__EXPR_VEC) {
        int64_t len = n - s < SL__EXPR_VEC ? n - s : SL__EXPR_VEC;
        struct sl__expr_vec v;
        char err[400];
        int rc = sl__expr_eval(e, in, s, len, &l->scratch, &v, err, sizeof err);
        if (rc < 0)
            return sl_task_fail(t, rc, "where: %s", err);
        for (int64_t r = 0; r < len; r++) {
            l->sel[k] = s + r;
            k += v.b[r] & !(v.null && v.null[r]);
        }
    }
    return k;
}

int sl__pred_apply(sl_task_t *t, const struct sl__expr *e, struct sl__pred_state *l,
                   sl_batch_t *in, sl_batch_t **out)
{
    *out = NULL;
    int64_t n = sl_batch_num_rows(in);
    if (n == 0)
        return SL_OK;
    if (!l->scratch.mem && sl__expr_scratch_init(&l->scratch, e) < 0)
        return sl_task_fail(t, SL_ENOMEM, "out of memory evaluating a predicate");
    int64_t k = select_rows(t, e, l, in, n);
    if (k <= 0)
        return (int)k;
    if (k == n) { /* every row passes: the batch goes on as it is */
        sl_batch_ref(in);
        *out = in;
        return SL_OK;
    }
    if (l->sel[k - 1] - l->sel[0] == k - 1) { /* one run: a zero-copy slice */
        *out = sl__batch_slice(in, l->sel[0], k);
        return *out ? SL_OK : sl_task_fail(t, SL_ENOMEM, "out of memory");
    }
    /* Gathered here, on the CPU: a host batch also on a GPU task (the GPU group-by
     * aggregates its inputs moved to host memory so, agg_cuda_budget.c). */
    sl_batch_t *b = sl__task_new_host_batch(t, in->schema, k);
    if (!b)
        return SL_ENOMEM;
    for (int c = 0; c < in->n_cols; c++) {
        int rc = gather_column(in, b, c, l->sel, k);
        if (rc < 0) {
            sl_batch_unref(b);
            return sl_task_fail(t, rc, "where: %s copying the passing rows",
                                rc == SL_ENOMEM ? "out of memory" : sl_strerror(rc));
        }
    }
    *out = b;
    return SL_OK;
}

int sl__pred_bind(sl_bind_t *b, const char *text, struct sl__expr **out)
{
    return sl__pred_bind_to(b, text, sl_op_output_schema(sl__bind_op(b)), out);
}

int sl__pred_bind_to(sl_bind_t *b, const char *text, const sl_schema_t *schema,
                     struct sl__expr **out)
{
    *out = NULL;
    if (!text || !*text)
        return SL_OK;
    char err[400];
    struct sl__expr *e;
    int rc = sl__expr_parse(text, 0, -1, &e, err, sizeof err);
    if (rc < 0)
        return sl_bind_fail(b, rc, "where: %s", err);
    rc = sl__expr_bind(e, schema, err, sizeof err);
    if (rc < 0) {
        sl__expr_free(e);
        return sl_bind_fail(b, rc, "where: %s", err);
    }
    if (sl__expr_kind(e) != SL__VK_BOOL) {
        sl__expr_free(e);
        return sl_bind_fail(b, SL_ETYPE, "where: the predicate is not a condition (e.g. x > 3)");
    }
    *out = e;
    return SL_OK;
}
