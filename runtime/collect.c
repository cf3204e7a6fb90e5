/* core.collect: the sink that gathers a plan output into a table. The runtime owns it
 * and adds one per output; it is an operator like any other (the operator ABI), but no
 * registry lists it.
 *
 * Row order: a query's output keeps the order of its source's tasks — batches emitted by
 * source task i come before those of task i+1, and one task's batches keep their order —
 * so outputs of order-producing operators (sort, merge) reach the user in order, while
 * unordered outputs lose nothing. Each worker keeps (task index, arrival number, batch)
 * entries; combine moves them into the global list; finalize sorts it and builds the
 * table. */
#include <stdlib.h>

#include "exec_int.h"

struct entry {
    int64_t task, seq;
    sl_batch_t *batch;
};

struct entries {
    int64_t n, cap;
    struct entry *e;
};

struct collect_global {
    struct entries all;
    sl_table_t *table;
};

struct collect_local {
    struct entries mine;
    int64_t seq;
};

static int entries_push(struct entries *l, int64_t task, int64_t seq, sl_batch_t *b)
{
    if (l->n == l->cap) {
        int64_t cap = l->cap ? l->cap * 2 : 64;
        struct entry *nv = sl__realloc(l->e, (size_t)l->cap * sizeof *nv, (size_t)cap * sizeof *nv);
        if (!nv)
            return SL_ENOMEM;
        l->e = nv;
        l->cap = cap;
    }
    l->e[l->n++] = (struct entry){task, seq, b};
    return SL_OK;
}

static void entries_free(struct entries *l)
{
    for (int64_t i = 0; i < l->n; i++)
        sl_batch_unref(l->e[i].batch);
    sl__free(l->e, 0);
    l->e = NULL;
    l->n = l->cap = 0;
}

static int collect_init_global(const sl_op_t *op, void *gs)
{
    struct collect_global *g = gs;
    int rc = sl_table_create(&g->table);
    if (rc < 0)
        return rc;
    /* The result has the node's schema even when no row comes (an empty Arrow stream
     * still says what its columns are). */
    const sl_schema_t *s = sl_op_input_schema(op, 0);
    if (s && !(g->table->schema = sl__schema_copy(s)))
        return SL_ENOMEM;
    return SL_OK;
}

static void collect_fini_global(const sl_op_t *op, void *gs)
{
    (void)op;
    struct collect_global *g = gs;
    entries_free(&g->all);
    sl_table_unref(g->table);
}

static void collect_fini_local(const sl_op_t *op, void *gs, void *ls)
{
    (void)op;
    (void)gs;
    entries_free(&((struct collect_local *)ls)->mine);
}

static int collect_sink(sl_task_t *t)
{
    struct collect_local *ls = sl_task_lstate(t);
    if (!ls)
        return SL_ENOMEM;
    sl_batch_t *b = sl_task_input(t);
    if (sl_batch_num_rows(b) == 0)
        return SL_OK;
    sl_batch_ref(b);
    if (entries_push(&ls->mine, sl_task_index(t), ls->seq++, b) < 0) {
        sl_batch_unref(b);
        return sl_task_fail(t, SL_ENOMEM, "out of memory collecting results");
    }
    return SL_OK;
}

static int collect_combine(sl_task_t *t)
{
    struct collect_global *gs = sl_task_gstate(t);
    struct collect_local *ls = sl_task_lstate(t);
    for (int64_t i = 0; i < ls->mine.n; i++) {
        struct entry *e = &ls->mine.e[i];
        if (entries_push(&gs->all, e->task, e->seq, e->batch) < 0)
            return sl_task_fail(t, SL_ENOMEM, "out of memory collecting results");
        e->batch = NULL; /* moved */
    }
    ls->mine.n = 0;
    return SL_OK;
}

static int by_task_then_arrival(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->task != y->task)
        return x->task < y->task ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int collect_finalize(sl_task_t *t)
{
    struct collect_global *gs = sl_task_gstate(t);
    if (gs->all.n > 1) /* qsort on an empty (NULL) list is undefined */
        qsort(gs->all.e, (size_t)gs->all.n, sizeof *gs->all.e, by_task_then_arrival);
    for (int64_t i = 0; i < gs->all.n; i++) {
        int rc = sl_table_append(gs->table, gs->all.e[i].batch);
        if (rc < 0)
            return sl_task_fail(t, rc, "%s", sl_last_errmsg());
    }
    return SL_OK;
}

/* Seconds to keep `rows` rows (references only, 0.3 ns a row on a CPU worker; a
 * collector on the host costs that whichever device feeds it). */
static double collect_cost(const sl_op_t *op, enum sl_device_kind kind, int64_t rows)
{
    (void)op;
    (void)kind;
    return rows < 0 ? -1 : (double)rows * 0.3e-9;
}

/* The device collector's sink on a GPU keeps the batches where they are: a launch-sized
 * constant. */
static double collect_device_cost(const sl_op_t *op, enum sl_device_kind kind, int64_t rows)
{
    if (kind == SL_DEVICE_CUDA && rows >= 0)
        return 5e-6;
    return collect_cost(op, kind, rows);
}

/* The collector takes batches from any device as they come: co-processing is fine. */
static int collect_can_split(const sl_op_t *op)
{
    (void)op;
    return 1;
}

static int collect_bind(sl_bind_t *b)
{
    (void)b;
    return SL_OK;
}

static const struct sl_impl collect_sink_impl[] = {{.device = SL_DEVICE_CPU, .run = collect_sink}};
static const struct sl_impl collect_combine_impl[] = {
    {.device = SL_DEVICE_CPU, .run = collect_combine}};
static const struct sl_impl collect_finalize_impl[] = {
    {.device = SL_DEVICE_CPU, .run = collect_finalize}};
static const struct sl_phase collect_sink_phase = {collect_sink_impl, 1, collect_cost};
static const struct sl_phase collect_combine_phase = {collect_combine_impl, 1, NULL};
static const struct sl_phase collect_finalize_phase = {collect_finalize_impl, 1, NULL};

/* What the host and the device collector share: all but the sink and can_split. */
#define COLLECT_DEF_COMMON                                                             \
    .abi_version = SL_OP_ABI_VERSION, .flags = SL_OP_SINK, .min_inputs = 1,            \
    .max_inputs = 1, .bind = collect_bind,                                             \
    .global_state_bytes = sizeof(struct collect_global),                               \
    .local_state_bytes = sizeof(struct collect_local), .init_global = collect_init_global, \
    .fini_global = collect_fini_global, .fini_local = collect_fini_local,              \
    .combine = &collect_combine_phase, .finalize = &collect_finalize_phase

const struct sl_op_def sl__collect_def = {
    COLLECT_DEF_COMMON,
    .name = "core.collect",
    .doc = "collects a plan output into a table, in source-task order (added by the runtime)",
    .sink = &collect_sink_phase,
    /* Host output: a GPU worker's batches reach this sink downloaded, like any other. */
    .can_split = collect_can_split,
};

sl_table_t *sl__collect_result(void *gstate)
{
    return ((struct collect_global *)gstate)->table;
}

void sl__collect_drop(void *gstate)
{
    struct collect_global *g = gstate;
    entries_free(&g->all);
    sl_table_unref(g->table);
    g->table = NULL;
}

/* The keeper of a shared node's rows (share.c) is a collector whose sink first counts in
 * the host budget what the kept batches hold outside it. */
static int share_sink(sl_task_t *t)
{
    int rc = sl__share_charge(t, sl_task_input(t));
    return rc < 0 ? rc : collect_sink(t);
}

/* On a GPU the keeper keeps device batches where they are, so consumers on that GPU
 * read them in place (share.c); a host batch is kept by the CPU implementation, never
 * uploaded only to be kept. With several GPUs a reader may run on another GPU than the
 * batches': there they are kept on the host, as before. */
static int share_sink_can_run_cuda(const sl_task_t *t)
{
    return t->q->eng->n_gpus == 1 && sl_batch_device(sl_task_input(t)) >= 0;
}

static const struct sl_impl share_sink_impl[] = {
    {.device = SL_DEVICE_CPU, .run = share_sink},
    {.device = SL_DEVICE_CUDA, .run = share_sink, .can_run = share_sink_can_run_cuda},
};
static const struct sl_phase share_sink_phase = {share_sink_impl, 2, collect_device_cost};

const struct sl_op_def sl__share_def = {
    COLLECT_DEF_COMMON,
    .name = "core.share",
    .doc = "keeps the rows of a node that feeds several consumers, for its readers (added "
           "by the runtime)",
    .sink = &share_sink_phase,
    .can_split = collect_can_split,
};

/* The same collector for sl_plan_output_device: its sink also runs on a GPU, where it
 * keeps the device batches as they are instead of having the runtime download them. */
static const struct sl_impl collect_device_sink_impl[] = {
    {.device = SL_DEVICE_CPU, .run = collect_sink},
    {.device = SL_DEVICE_CUDA, .run = collect_sink},
};
static const struct sl_phase collect_device_sink_phase = {collect_device_sink_impl, 2,
                                                         collect_device_cost};

const struct sl_op_def sl__collect_device_def = {
    COLLECT_DEF_COMMON,
    .name = "core.collect_device",
    .doc = "collects a plan output into a table, keeping GPU results in GPU memory",
    .sink = &collect_device_sink_phase,
};
