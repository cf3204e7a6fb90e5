/* scan.table: the source over an in-memory table (sl_plan_add_table). Each task emits a
 * zero-copy slice of at most one morsel; on a GPU that already holds the table, a morsel
 * is gpu_resident_morsel_rows (2^28 by default: nothing to copy, so fewer launches). */
#include "operators.h"

struct scan_table_global {
    struct sl__morsels m;
};

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
    sl__morsels_free(&((struct scan_table_global *)gs)->m);
}

static int64_t scan_table_tasks(sl_task_t *task)
{
    struct scan_table_global *g = sl_task_gstate(task);
    const sl_table_t *tab = sl_op_data(sl_task_op(task));
    int64_t n = sl__morsels_cut(&g->m, tab, sl__task_table_morsel_rows(task, tab));
    return n < 0 ? sl_task_fail(task, SL_ENOMEM, "out of memory") : n;
}

static int scan_table_source(sl_task_t *t)
{
    struct scan_table_global *g = sl_task_gstate(t);
    sl_batch_t *s = sl__morsels_slice(&g->m, sl_op_data(sl_task_op(t)), sl_task_index(t));
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
