/* filter: passes on the rows of each input batch where the predicate `where` is TRUE
 * (rows where it is FALSE or NULL are dropped). A batch whose rows all pass goes on
 * as it is, one whose passing rows form one run goes on as a zero-copy slice; others
 * are compacted into a new batch. Empty results emit nothing. */
#include <stdio.h>
#include <string.h>

#include "expr.h"
#include "operators.h"

struct filter_local {
    struct sl__expr_scratch scratch;
    int64_t *sel;
    int64_t sel_cap;
};

static const struct sl_option_def filter_options[] = {
    {"where", SL_OPT_STRING, NULL, "predicate, e.g. \"x > 3 AND y IN (1, 2)\""},
};

static void filter_free(void *p)
{
    sl__expr_free(p);
}

static int filter_bind(sl_bind_t *b)
{
    const char *where;
    int rc;
    if ((rc = sl_bind_option_str(b, "where", &where)) < 0)
        return rc;
    char err[400];
    struct sl__expr *e;
    if ((rc = sl__expr_parse(where, 0, -1, &e, err, sizeof err)) < 0)
        return sl_bind_fail(b, rc, "where: %s", err);
    const sl_schema_t *in = sl_bind_input_schema(b, 0);
    if ((rc = sl__expr_bind(e, in, err, sizeof err)) < 0) {
        sl__expr_free(e);
        return sl_bind_fail(b, rc, "where: %s", err);
    }
    if (sl__expr_kind(e) != SL__VK_BOOL) {
        enum sl_type type = sl__expr_type(e);
        sl__expr_free(e);
        return sl_bind_fail(b, SL_ETYPE, "where must be a condition, but \"%s\" gives %s values "
                            "(hint: compare it, e.g. %s != 0)", where, sl_type_name(type), where);
    }
    sl_bind_set_data(b, e, filter_free);
    sl_bind_set_rows(b, sl_bind_input_rows(b, 0));
    for (int i = 0; i < sl_schema_num_fields(in); i++) {
        const char *name;
        enum sl_type type;
        sl_schema_field(in, i, &name, &type);
        if ((rc = sl_bind_add_column(b, name, type)) < 0)
            return rc;
    }
    return SL_OK;
}

static void filter_fini_local(const sl_op_t *op, void *gs, void *ls)
{
    (void)op;
    (void)gs;
    struct filter_local *l = ls;
    sl__expr_scratch_fini(&l->scratch);
    sl__free(l->sel, (size_t)l->sel_cap * sizeof *l->sel);
}

/* Copies the selected rows of column c of `in` into column c of `out`. */
static int gather_column(sl_batch_t *in, sl_batch_t *out, int c, const int64_t *sel, int64_t k)
{
    const struct sl__col *ic = &in->cols[c];
    if (sl_type_width(ic->type) == 4) {
        const uint32_t *s = sl__col_values(in, c);
        uint32_t *d = sl__col_values(out, c);
        for (int64_t j = 0; j < k; j++)
            d[j] = s[sel[j]];
    } else {
        const uint64_t *s = sl__col_values(in, c);
        uint64_t *d = sl__col_values(out, c);
        for (int64_t j = 0; j < k; j++)
            d[j] = s[sel[j]];
    }
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
static int64_t select_rows(sl_task_t *t, const struct sl__expr *e, struct filter_local *l,
                           sl_batch_t *in, int64_t n)
{
    if (n > l->sel_cap) {
        int64_t *ns = sl__realloc(l->sel, (size_t)l->sel_cap * sizeof *ns, (size_t)n * sizeof *ns);
        if (!ns)
            return sl_task_fail(t, SL_ENOMEM, "filter: out of memory for %lld rows", (long long)n);
        l->sel = ns;
        l->sel_cap = n;
    }
    int64_t k = 0;
    for (int64_t s = 0; s < n; s += SL__EXPR_VEC) {
        int64_t len = n - s < SL__EXPR_VEC ? n - s : SL__EXPR_VEC;
        struct sl__expr_vec v;
        char err[400];
        int rc = sl__expr_eval(e, in, s, len, &l->scratch, &v, err, sizeof err);
        if (rc < 0)
            return sl_task_fail(t, rc, "filter: %s", err);
        for (int64_t r = 0; r < len; r++) {
            l->sel[k] = s + r;
            k += v.b[r] & !(v.null && v.null[r]);
        }
    }
    return k;
}

static int filter_execute(sl_task_t *t)
{
    const struct sl__expr *e = sl_op_data(sl_task_op(t));
    struct filter_local *l = sl_task_lstate(t);
    sl_batch_t *in = sl_task_input(t);
    int64_t n = sl_batch_num_rows(in);
    if (n == 0)
        return SL_OK;
    if (!l) /* the runtime recorded the failure */
        return SL_ENOMEM;
    if (!l->scratch.mem && sl__expr_scratch_init(&l->scratch, e) < 0)
        return sl_task_fail(t, SL_ENOMEM, "filter: out of memory");
    int64_t k = select_rows(t, e, l, in, n);
    if (k <= 0)
        return (int)k;
    if (k == n) {
        sl_batch_ref(in);
        return sl_task_emit(t, in);
    }
    sl_batch_t *out;
    if (l->sel[k - 1] - l->sel[0] == k - 1) {
        out = sl__batch_slice(in, l->sel[0], k);
        if (!out)
            return sl_task_fail(t, SL_ENOMEM, "filter: out of memory");
        return sl_task_emit(t, out);
    }
    out = sl_task_new_batch(t, sl_op_output_schema(sl_task_op(t)), k);
    if (!out)
        return SL_ENOMEM;
    for (int c = 0; c < in->n_cols; c++) {
        if (gather_column(in, out, c, l->sel, k) < 0) {
            sl_batch_unref(out);
            return sl_task_fail(t, SL_ENOMEM, "filter: out of memory");
        }
    }
    return sl_task_emit(t, out);
}

static const struct sl_impl filter_impls[] = {{.device = SL_DEVICE_CPU, .run = filter_execute}};
static const struct sl_phase filter_phase = {filter_impls, 1, NULL};

const struct sl_op_def sl__filter_def = {
    .abi_version = SL_OP_ABI_VERSION,
    .flags = SL_OP_STREAM,
    .name = "filter",
    .doc = "keeps the rows where the predicate `where` is true",
    .min_inputs = 1,
    .max_inputs = 1,
    .options = filter_options,
    .n_options = sizeof filter_options / sizeof filter_options[0],
    .bind = filter_bind,
    .local_state_bytes = sizeof(struct filter_local),
    .fini_local = filter_fini_local,
    .execute = &filter_phase,
};
