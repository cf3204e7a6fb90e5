/* scan.table: the source over an in-memory table (sl_plan_add_table). Each task emits a
 * zero-copy slice of at most one morsel. */
#include "operators.h"

struct scan_table_global {
    int64_t n_tasks;
    int64_t morsel;
    int64_t *first_task; /* per batch: index of its first task */
};

static int64_t morsels_of(int64_t rows, int64_t morsel)
{
    return rows == 0 ? 0 : (rows + morsel - 1) / morsel;
}

static int scan_table_bind(sl_bind_t *b)
{
    sl_table_t *t = sl_op_data(sl__bind_op(b));
    const char *name = "";
    int rc = sl_bind_option_str(b, "name", &name);
    if (rc < 0)
        return rc;
    if (!t && *name) {
        t = sl__bind_named_table(b, name);
        if (!t)
            return sl_bind_fail(b, SL_ENOTFOUND, "no table named '%s' is registered in the "
                                "plan (sl_plan_register_table)", name);
        sl_table_ref(t);
    }
    if (!t)
        return sl_bind_fail(b, SL_EINVAL, "needs a table: name=TABLE (sl_plan_register_table) "
                            "or sl_plan_add_table");
    sl_bind_set_data(b, t, (void (*)(void *))sl_table_unref);
    if (!t->schema)
        return sl_bind_fail(b, SL_EINVAL, "the table is empty and has no schema");
    for (int i = 0; i < t->schema->n_fields; i++) {
        rc = sl_bind_add_column(b, t->schema->fields[i].name, t->schema->fields[i].type);
        if (rc < 0)
            return rc;
    }
    sl_bind_set_rows(b, t->n_rows);
    return SL_OK;
}

static void scan_table_fini_global(const sl_op_t *op, void *gs)
{
    (void)op;
    struct scan_table_global *g = gs;
    sl__free(g->first_task, 0);
}

static int64_t scan_table_tasks(sl_task_t *task)
{
    struct scan_table_global *g = sl_task_gstate(task);
    sl_table_t *t = sl_op_data(sl_task_op(task));
    g->morsel = sl_task_morsel_rows(task);
    g->first_task = sl__calloc((size_t)(t->n_batches + 1), sizeof *g->first_task);
    if (!g->first_task)
        return sl_task_fail(task, SL_ENOMEM, "out of memory");
    int64_t n = 0;
    for (int64_t i = 0; i < t->n_batches; i++) {
        g->first_task[i] = n;
        n += morsels_of(t->batches[i]->n_rows, g->morsel);
    }
    g->first_task[t->n_batches] = n;
    g->n_tasks = n;
    return n;
}

static int scan_table_source(sl_task_t *t)
{
    struct scan_table_global *g = sl_task_gstate(t);
    sl_table_t *tab = sl_op_data(sl_task_op(t));
    int64_t task = sl_task_index(t);
    /* Find the batch holding this task: binary search over first_task. */
    int64_t lo = 0, hi = tab->n_batches - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (g->first_task[mid] <= task)
            lo = mid;
        else
            hi = mid - 1;
    }
    sl_batch_t *b = tab->batches[lo];
    int64_t off = (task - g->first_task[lo]) * g->morsel;
    int64_t len = b->n_rows - off < g->morsel ? b->n_rows - off : g->morsel;
    sl_batch_t *s = sl__batch_slice(b, off, len);
    if (!s)
        return sl_task_fail(t, SL_ENOMEM, "out of memory slicing a batch");
    return sl_task_emit(t, s);
}

static const struct sl_option_def scan_table_options[] = {
    {"name", SL_OPT_STRING, "", "name of a table registered in the plan"},
};

static const struct sl_impl scan_table_impls[] = {{.device = SL_DEVICE_CPU, .run = scan_table_source}};
static const struct sl_phase scan_table_phase = {scan_table_impls, 1, sl__cost_linear};

const struct sl_op_def sl__scan_table_def = {
    .abi_version = SL_OP_ABI_VERSION,
    .flags = SL_OP_SOURCE,
    .name = "scan.table",
    .doc = "scans an in-memory table: one registered by name (sl_plan_register_table) or "
           "given with sl_plan_add_table",
    .options = scan_table_options,
    .n_options = 1,
    .min_inputs = 0,
    .max_inputs = 0,
    .bind = scan_table_bind,
    .global_state_bytes = sizeof(struct scan_table_global),
    .fini_global = scan_table_fini_global,
    .source_tasks = scan_table_tasks,
    .source = &scan_table_phase,
    .can_split = sl__split_yes,
};
