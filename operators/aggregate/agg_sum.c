/* aggregate.sum: global count and sum of one column (SQL COUNT(col), SUM(col)).
 * Nulls are skipped; the sum is null when no value was counted. Integer sums are int64,
 * accumulated exactly in 128 bits: only a total that does not fit int64 is an error
 * (SL_EOVERFLOW, never a wrap), whatever partial sums did. Float sums are float64.
 * Input: int32, int64, float32 or float64 (other types are refused at bind).
 * Each worker sums its morsels into local state; combine adds the locals. */
#include <string.h>

#include "operators.h"

struct sum_data {
    int col;
    enum sl_type type;
};

struct sum_state {
    int64_t count;
    __int128 isum;
    double fsum;
};

static const struct sl_option_def sum_options[] = {
    {"column", SL_OPT_STRING, NULL, "column to count and sum"},
};

static void sum_free(void *p)
{
    sl__free(p, sizeof(struct sum_data));
}

static int sum_bind(sl_bind_t *b)
{
    const char *col;
    int rc = sl_bind_option_str(b, "column", &col);
    if (rc < 0)
        return rc;
    const sl_schema_t *in = sl_bind_input_schema(b, 0);
    int idx = sl_schema_find(in, col);
    if (idx < 0)
        return sl_bind_fail(b, SL_ENOTFOUND, "no column '%s' in its input", col);
    struct sum_data *d = sl__malloc(sizeof *d);
    if (!d)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    d->col = idx;
    sl_schema_field(in, idx, NULL, &d->type);
    sl_bind_set_data(b, d, sum_free);
    sl_bind_set_rows(b, 1);
    bool is_int = d->type == SL_TYPE_INT32 || d->type == SL_TYPE_INT64;
    if (!is_int && d->type != SL_TYPE_FLOAT32 && d->type != SL_TYPE_FLOAT64)
        return sl_bind_fail(b, SL_ETYPE, "column '%s' is %s: aggregate.sum takes int32, int64, "
                            "float32 or float64 (aggregate aggs=sum(...) takes every type)",
                            col, sl_type_name(d->type));
    if ((rc = sl_bind_add_column(b, "count", SL_TYPE_INT64)) < 0)
        return rc;
    return sl_bind_add_column(b, "sum", is_int ? SL_TYPE_INT64 : SL_TYPE_FLOAT64);
}

/* Sums rows [0, n) of column c into st (a morsel's int64 sum is exact in 128 bits). */
static int sum_column(const sl_batch_t *b, int c, struct sum_state *st)
{
    const struct sl__col *col = &b->cols[c];
    const void *v = sl__col_values(b, c);
    int64_t n = b->n_rows;
    int64_t cnt = 0;
    __int128 isum = 0;
    double fsum = 0;
    switch (col->type) {
    case SL_TYPE_INT32: {
        const int32_t *x = v;
        /* An int32 morsel sums exactly in int64 (< 2^32 rows of < 2^31). */
        for (int64_t i = 0; i < n; i++) {
            if (sl__col_valid(col, i)) {
                isum += x[i];
                cnt++;
            }
        }
        break;
    }
    case SL_TYPE_INT64: {
        const int64_t *x = v;
        for (int64_t i = 0; i < n; i++) {
            if (sl__col_valid(col, i)) {
                isum += x[i];
                cnt++;
            }
        }
        break;
    }
    case SL_TYPE_FLOAT32: {
        const float *x = v;
        for (int64_t i = 0; i < n; i++) {
            if (sl__col_valid(col, i)) {
                fsum += x[i];
                cnt++;
            }
        }
        break;
    }
    case SL_TYPE_FLOAT64: {
        const double *x = v;
        for (int64_t i = 0; i < n; i++) {
            if (sl__col_valid(col, i)) {
                fsum += x[i];
                cnt++;
            }
        }
        break;
    }
    default:
        return -1;
    }
    st->count += cnt;
    st->fsum += fsum;
    st->isum += isum; /* < 2^63 rows of < 2^63: no 128-bit overflow */
    return 0;
}

static int sum_sink(sl_task_t *t)
{
    const struct sum_data *d = sl_op_data(sl_task_op(t));
    struct sum_state *ls = sl_task_lstate(t);
    if (!ls)
        return SL_ENOMEM;
    if (sum_column(sl_task_input(t), d->col, ls) < 0)
        return sl_task_fail(t, SL_ETYPE, "aggregate.sum: unexpected column type");
    return SL_OK;
}

static int sum_combine(sl_task_t *t)
{
    struct sum_state *gs = sl_task_gstate(t);
    const struct sum_state *ls = sl_task_lstate(t);
    gs->count += ls->count;
    gs->fsum += ls->fsum;
    gs->isum += ls->isum;
    return SL_OK;
}

static int sum_source(sl_task_t *t)
{
    const struct sum_data *d = sl_op_data(sl_task_op(t));
    const struct sum_state *gs = sl_task_gstate(t);
    bool is_int = d->type == SL_TYPE_INT32 || d->type == SL_TYPE_INT64;
    if (is_int && (gs->isum > INT64_MAX || gs->isum < INT64_MIN))
        return sl_task_fail(t, SL_EOVERFLOW, "aggregate.sum: the int64 sum overflows");
    sl_batch_t *b = sl__batch_new(sl_op_output_schema(sl_task_op(t)), 1);
    if (!b || sl__batch_alloc_columns(b) != SL_OK) {
        sl_batch_unref(b);
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    }
    *(int64_t *)sl__col_values(b, 0) = gs->count;
    if (is_int)
        *(int64_t *)sl__col_values(b, 1) = (int64_t)gs->isum;
    else
        *(double *)sl__col_values(b, 1) = gs->fsum;
    if (gs->count == 0) {
        uint8_t *valid = sl_batch_column_validity(b, 1);
        if (!valid) {
            sl_batch_unref(b);
            return sl_task_fail(t, SL_ENOMEM, "out of memory");
        }
        valid[0] = 0;
        b->cols[1].null_count = 1;
    }
    return sl_task_emit(t, b);
}

static const struct sl_impl sum_sink_impl[] = {{.device = SL_DEVICE_CPU, .run = sum_sink}};
static const struct sl_impl sum_combine_impl[] = {{.device = SL_DEVICE_CPU, .run = sum_combine}};
static const struct sl_impl sum_source_impl[] = {{.device = SL_DEVICE_CPU, .run = sum_source}};
static const struct sl_phase sum_sink_phase = {sum_sink_impl, 1, sl__cost_linear};
static const struct sl_phase sum_combine_phase = {sum_combine_impl, 1, NULL};
static const struct sl_phase sum_source_phase = {sum_source_impl, 1, sl__cost_linear_source};

const struct sl_op_def sl__aggregate_sum_def = {
    .abi_version = SL_OP_ABI_VERSION,
    .flags = SL_OP_SINK | SL_OP_SOURCE,
    .name = "aggregate.sum",
    .doc = "global COUNT and SUM of one column (nulls skipped; an int64 total that overflows errs)",
    .min_inputs = 1,
    .max_inputs = 1,
    .options = sum_options,
    .n_options = 1,
    .bind = sum_bind,
    .global_state_bytes = sizeof(struct sum_state),
    .local_state_bytes = sizeof(struct sum_state),
    .sink = &sum_sink_phase,
    .combine = &sum_combine_phase,
    .source = &sum_source_phase,
};
