/* core.collect: the sink that gathers a plan output into a table (internal; the
 * runtime adds one per output). Each worker appends to its own table; combine moves
 * the batches into the query's table. */
#include "exec_int.h"

struct collect_global {
    sl_table_t *table;
};

struct collect_local {
    sl_table_t *table;
};

static int collect_init_global(const sl_op_t *op, void *gs)
{
    (void)op;
    return sl_table_create(&((struct collect_global *)gs)->table);
}

static void collect_fini_global(const sl_op_t *op, void *gs)
{
    (void)op;
    sl_table_unref(((struct collect_global *)gs)->table);
}

static int collect_init_local(const sl_op_t *op, void *gs, void *ls)
{
    (void)op;
    (void)gs;
    return sl_table_create(&((struct collect_local *)ls)->table);
}

static void collect_fini_local(const sl_op_t *op, void *gs, void *ls)
{
    (void)op;
    (void)gs;
    sl_table_unref(((struct collect_local *)ls)->table);
}

static int collect_sink(sl_task_t *t)
{
    struct collect_local *ls = sl_task_lstate(t);
    if (!ls)
        return SL_ENOMEM;
    sl_batch_t *b = sl_task_input(t);
    if (sl_batch_num_rows(b) == 0)
        return SL_OK;
    int rc = sl_table_append(ls->table, b);
    return rc < 0 ? sl_task_fail(t, rc, "%s", sl_last_errmsg()) : SL_OK;
}

static int collect_combine(sl_task_t *t)
{
    struct collect_global *gs = sl_task_gstate(t);
    struct collect_local *ls = sl_task_lstate(t);
    for (int64_t i = 0; i < sl_table_num_batches(ls->table); i++) {
        int rc = sl_table_append(gs->table, sl_table_batch(ls->table, i));
        if (rc < 0)
            return sl_task_fail(t, rc, "%s", sl_last_errmsg());
    }
    return SL_OK;
}

static int collect_bind(sl_bind_t *b)
{
    (void)b;
    return SL_OK;
}

static const struct sl_impl collect_sink_impl[] = {{.device = SL_DEVICE_CPU, .run = collect_sink}};
static const struct sl_impl collect_combine_impl[] = {
    {.device = SL_DEVICE_CPU, .run = collect_combine}};
static const struct sl_phase collect_sink_phase = {collect_sink_impl, 1, NULL};
static const struct sl_phase collect_combine_phase = {collect_combine_impl, 1, NULL};

const struct sl_op_def sl__collect_def = {
    .abi_version = SL_OP_ABI_VERSION,
    .flags = SL_OP_SINK,
    .name = "core.collect",
    .doc = "collects a plan output into a table (added by the runtime)",
    .min_inputs = 1,
    .max_inputs = 1,
    .bind = collect_bind,
    .global_state_bytes = sizeof(struct collect_global),
    .local_state_bytes = sizeof(struct collect_local),
    .init_global = collect_init_global,
    .fini_global = collect_fini_global,
    .init_local = collect_init_local,
    .fini_local = collect_fini_local,
    .sink = &collect_sink_phase,
    .combine = &collect_combine_phase,
};

sl_table_t *sl__collect_result(void *gstate)
{
    return ((struct collect_global *)gstate)->table;
}
