/* gen.sequence: generates `rows` values start, start+step, ... in one column, in
 * parallel morsels (deterministic whatever the thread count). */
#include "gen_int.h"
#include "operators.h"

const struct sl_option_def sl__gen_sequence_options[] = {
    {"rows", SL_OPT_INT, NULL, "number of rows (e.g. 1000000 or 2^24)"},
    {"start", SL_OPT_INT, "0", "first value"},
    {"step", SL_OPT_INT, "1", "difference between consecutive values"},
    {"column", SL_OPT_STRING, "x", "column name"},
    {"type", SL_OPT_STRING, "int64", "int32 or int64"},
};

static void seq_free(void *p)
{
    sl__free(p, sizeof(struct sl__gen_sequence_data));
}

int sl__gen_sequence_bind(sl_bind_t *b)
{
    struct sl__gen_sequence_data d;
    const char *col, *type;
    int rc;
    if ((rc = sl_bind_option_int(b, "rows", &d.rows)) < 0 ||
        (rc = sl_bind_option_int(b, "start", &d.start)) < 0 ||
        (rc = sl_bind_option_int(b, "step", &d.step)) < 0 ||
        (rc = sl_bind_option_str(b, "column", &col)) < 0 ||
        (rc = sl_bind_option_str(b, "type", &type)) < 0)
        return rc;
    if (d.rows < 0)
        return sl_bind_fail(b, SL_EINVAL, "rows must be >= 0, got %lld", (long long)d.rows);
    if (sl_type_parse(type, &d.type) < 0 || (d.type != SL_TYPE_INT32 && d.type != SL_TYPE_INT64))
        return sl_bind_fail(b, SL_ETYPE, "type must be int32 or int64, got '%s'", type);
    /* The last value must fit the type: start + (rows-1)*step. */
    __int128 last = (__int128)d.start + (__int128)(d.rows ? d.rows - 1 : 0) * d.step;
    __int128 lo = d.type == SL_TYPE_INT32 ? INT32_MIN : INT64_MIN;
    __int128 hi = d.type == SL_TYPE_INT32 ? INT32_MAX : INT64_MAX;
    if (d.start < lo || d.start > hi || last < lo || last > hi)
        return sl_bind_fail(b, SL_EOVERFLOW, "values do not fit in %s", type);
    struct sl__gen_sequence_data *p = sl__malloc(sizeof *p);
    if (!p)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    *p = d;
    sl_bind_set_data(b, p, seq_free);
    sl_bind_set_rows(b, d.rows);
    return sl_bind_add_column(b, col, d.type);
}

int sl__gen_sequence_source(sl_task_t *t)
{
    const struct sl__gen_sequence_data *d = sl_op_data(sl_task_op(t));
    int64_t first, n;
    sl__gen_morsel(t, d->rows, &first, &n);
    sl_batch_t *b = sl_task_new_batch(t, sl_op_output_schema(sl_task_op(t)), n);
    if (!b)
        return SL_ENOMEM;
    int64_t v = d->start + first * d->step;
    if (d->type == SL_TYPE_INT64) {
        int64_t *out = sl__col_values(b, 0);
        for (int64_t i = 0; i < n; i++)
            out[i] = v + i * d->step;
    } else {
        int32_t *out = sl__col_values(b, 0);
        for (int64_t i = 0; i < n; i++)
            out[i] = (int32_t)(v + i * d->step);
    }
    return sl_task_emit(t, b);
}
