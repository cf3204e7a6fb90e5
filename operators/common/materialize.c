/* The shared phases of the materializing operators (materialize.h). */
#include "materialize.h"

int sl__mat_sink(sl_task_t *t)
{
    struct sl__mat_local *ls = sl_task_lstate(t);
    return ls ? sl__rows_sink(t, &ls->rows) : SL_ENOMEM;
}

int sl__mat_combine(sl_task_t *t)
{
    struct sl__mat *m = sl_task_gstate(t);
    struct sl__mat_local *ls = sl_task_lstate(t);
    return sl__rows_combine(t, &m->rows, &ls->rows);
}

void sl__mat_fini_local(const sl_op_t *op, void *gs, void *ls)
{
    (void)op;
    (void)gs;
    sl__rows_fini(&((struct sl__mat_local *)ls)->rows);
}

void sl__mat_fini(struct sl__mat *m)
{
    sl__rows_fini(&m->rows);
    sl_batch_unref(m->out);
}

/* The result goes in morsels as sl__task_result_morsel_rows cuts it: one morsel of up to
 * 2^28 rows where it stays on the GPU for GPU stages. */
int64_t sl__mat_morsel_tasks(sl_task_t *t)
{
    struct sl__mat *m = sl_task_gstate(t);
    if (!m->out)
        return 0;
    int64_t rows = sl__task_result_morsel_rows(t, m->out);
    return m->n / rows + (m->n % rows != 0); /* rounded up without overflow */
}

int sl__mat_emit_morsel(sl_task_t *t)
{
    struct sl__mat *m = sl_task_gstate(t);
    int64_t rows = sl__task_result_morsel_rows(t, m->out), i = sl_task_index(t);
    return sl__emit_rows(t, m->out, i * rows, sl__morsel_len(m->n, rows, i));
}

int sl__mat_out_on_gpu(const sl_task_t *t)
{
    return ((const struct sl__mat *)sl_task_gstate((sl_task_t *)t))->gpu;
}

int sl__mat_bind_columns(sl_bind_t *b)
{
    const sl_schema_t *in = sl_bind_input_schema(b, 0);
    for (int i = 0; i < sl_schema_num_fields(in); i++) {
        const char *name;
        enum sl_type type;
        sl_schema_field(in, i, &name, &type);
        int rc = sl_bind_add_column(b, name, type);
        if (rc < 0)
            return rc;
    }
    return SL_OK;
}

int sl__mat_bind_word_columns(sl_bind_t *b, const char *op)
{
    const sl_schema_t *in = sl_bind_input_schema(b, 0);
    for (int i = 0; i < sl_schema_num_fields(in); i++) {
        const char *name;
        enum sl_type type;
        sl_schema_field(in, i, &name, &type);
        size_t w = sl_type_width(type);
        if (sl_type_is_string(type) || (w != 4 && w != 8))
            return sl_bind_fail(b, SL_ETYPE, "column '%s' is %s: %s carries 4- and 8-byte "
                                "columns only (int32, int64, uint32, uint64, float32, float64, "
                                "date32, timestamp, decimal(p <= 18)); sort other types with "
                                "sort", name, sl_type_name(type), op);
    }
    return sl__mat_bind_columns(b);
}

int sl__mat_begin(sl_task_t *t, struct sl__mat *m, int n_cols)
{
    int rc = sl__rows_to_host(t, &m->rows);
    if (rc < 0)
        return rc;
    sl__rows_order(&m->rows);
    m->n = sl__rows_total(&m->rows);
    if (m->n == 0)
        return 0;
    m->n_cols = n_cols;
    m->chunk_rows = sl__chunk_rows(t, m->n);
    m->n_chunks = (m->n + m->chunk_rows - 1) / m->chunk_rows;
    m->views = sl_task_alloc(t, (size_t)n_cols * sizeof *m->views);
    return m->views ? 1 : SL_ENOMEM;
}

int sl__mat_spawn(sl_task_t *t, struct sl__mat *m, const struct sl_phase *work,
                  const struct sl_phase *step, int stage, int64_t n)
{
    m->stage = stage;
    return sl_task_spawn(t, work, n, m, step);
}

const struct sl_impl sl__mat_sink_cpu[1] = {SL__IMPL_CPU(sl__mat_sink)};
const struct sl_impl sl__mat_combine_cpu[1] = {SL__IMPL_CPU(sl__mat_combine)};
