/* Shared nodes: a node whose rows feed several consumers (inputs of other nodes, a
 * self-join's two sides, plan outputs) is computed once per query.
 *
 * Lowering (exec.c) ends the node's pipeline in a keeper, `core.share`: a collector
 * (collect.c) that keeps the node's batches in source-task order, where they were made
 * (a GPU pipeline's in that GPU's memory, so GPU consumers read them in place). Each
 * consumer's pipeline starts at a reader of its own, `core.share_read`, a source that
 * emits zero-copy slices of the kept batches (one morsel each, like scan.table) and
 * starts after the keeper's finalize, as a pipeline whose source has sinks does. The
 * batches are shared read-only by every reader; a `done` node after each reader pipeline
 * counts the readers down, and the last one lets the keeper's batches go, so they are
 * freed as soon as no consumer holds a slice. What the keeper keeps counts in the host
 * budget: its batches are charged by whoever made them (sl_task_new_batch), and those no
 * budget holds yet (a GPU result downloaded for the keeper) are charged by the keeper.
 *
 * Query operator layout: plan nodes, one collector per output, then per shared node its
 * keeper followed by its readers, one per consumer. */
#include <stdio.h>

#include "exec_int.h"

/* The most streaming nodes one pipeline chains. A batch passes a pipeline's stages by
 * nested calls (sl_task_emit), some 300 bytes of a worker's stack per stage: a chain of
 * 77,000 filters overflowed it. A longer chain is cut: its node at the limit is kept
 * as a shared node is, and the rest of the chain reads it (a few copies per 512 stages). */
#define MAX_CHAIN 512

/* The readers of node i: its consumers if it is shared or cuts a long chain, else 0. */
static int readers(const struct sl_query *q, int i)
{
    return q->consumers[i] > 1 || q->cut[i] ? q->consumers[i] : 0;
}

/* Marks in q->cut the nodes that end MAX_CHAIN streaming nodes in a row. Nodes come
 * in order (inputs before the nodes using them), so one pass finds every chain's length
 * (`depth`: streaming nodes since the pipeline's source, this one included). */
static void cut_long_chains(struct sl_query *q, int *depth)
{
    const sl_plan_t *p = q->plan;
    for (int i = 0; i < p->n_nodes; i++) {
        const struct sl_op *op = p->nodes[i];
        uint32_t f = op->def->flags;
        depth[i] = 0;
        if ((f & SL_OP_SOURCE) || !(f & SL_OP_STREAM) || op->n_inputs != 1)
            continue;
        int in = op->inputs[0];
        depth[i] = readers(q, in) ? 1 : depth[in] + 1;
        if (depth[i] >= MAX_CHAIN && q->consumers[i] == 1)
            q->cut[i] = 1;
    }
}

int sl__count_consumers(struct sl_query *q)
{
    const sl_plan_t *p = q->plan;
    size_t n = (size_t)(p->n_nodes ? p->n_nodes : 1);
    q->consumers = sl__calloc(n, sizeof *q->consumers);
    q->cut = sl__calloc(n, sizeof *q->cut);
    int *depth = sl__malloc(n * sizeof *depth);
    if (!q->consumers || !q->cut || !depth) {
        sl__free(depth, 0);
        return SL_ENOMEM;
    }
    for (int i = 0; i < p->n_outputs; i++)
        q->consumers[p->outputs[i].node]++;
    for (int i = 0; i < p->n_nodes; i++) {
        const struct sl_op *op = p->nodes[i];
        for (int k = 0; k < op->n_inputs; k++)
            q->consumers[op->inputs[k]]++;
    }
    cut_long_chains(q, depth);
    sl__free(depth, 0);
    return SL_OK;
}

int sl__share_count(const struct sl_query *q)
{
    int n = 0;
    for (int i = 0; i < q->plan->n_nodes; i++) {
        int c = readers(q, i);
        n += c ? 1 + c : 0;
    }
    return n;
}

/* One synthetic operator of shared node `node`: its keeper (reads the node) or a reader
 * (reads nothing of the plan: its rows come from the keeper). */
static void share_op_init(struct sl_op *o, const struct sl_op *node, bool keeper)
{
    o->id = -1;
    o->def = keeper ? &sl__share_def : &sl__share_read_def;
    o->n_inputs = keeper ? 1 : 0;
    o->inputs = (int *)&node->id; /* the plan node's own field: lives with the plan */
    o->schema = node->schema;
    o->plan = node->plan;
    o->rows_estimate = node->rows_estimate;
    snprintf(o->where, sizeof o->where, "%s", node->where);
    snprintf(o->name, sizeof o->name, "%s", node->name);
}

int sl__share_setup(struct sl_query *q, int first)
{
    sl_plan_t *p = q->plan;
    int n = sl__share_count(q);
    q->share_at = sl__malloc(2 * (size_t)(p->n_nodes ? p->n_nodes : 1) * sizeof *q->share_at);
    q->share_ops = n ? sl__calloc((size_t)n, sizeof *q->share_ops) : NULL;
    if (!q->share_at || (n && !q->share_ops))
        return SL_ENOMEM;
    int k = 0;
    for (int i = 0; i < p->n_nodes; i++) {
        int c = readers(q, i);
        q->share_at[2 * i] = q->share_at[2 * i + 1] = -1;
        if (c == 0)
            continue;
        int keeper = first + k;
        for (int r = 0; r <= c; r++, k++) {
            share_op_init(&q->share_ops[k], p->nodes[i], r == 0);
            q->ops[first + k].op = &q->share_ops[k];
            if (r)
                q->ops[first + k].share = &q->ops[keeper];
        }
        atomic_init(&q->ops[keeper].share_readers, c);
        q->share_at[2 * i] = keeper;
        q->share_at[2 * i + 1] = keeper + 1;
    }
    return SL_OK;
}

struct sl__opstate *sl__share_keeper(struct sl_query *q, int node)
{
    int at = q->share_at[2 * node];
    return at < 0 ? NULL : &q->ops[at];
}

struct sl__opstate *sl__share_reader(struct sl_query *q, int node)
{
    struct sl__opstate *keeper = sl__share_keeper(q, node);
    if (!keeper)
        return NULL;
    int at = q->share_at[2 * node + 1];
    /* Each consumer's pipeline is lowered once, so a node has a reader for each. */
    if (at >= q->n_ops || q->ops[at].share != keeper)
        return NULL;
    q->share_at[2 * node + 1]++;
    return &q->ops[at];
}

int sl__opstate_node(const struct sl_query *q, const struct sl__opstate *os)
{
    int i = (int)(os - q->ops);
    if (i < q->plan->n_nodes)
        return i;
    if (os->op->def == &sl__share_def)
        return os->op->inputs[0];
    return os->share ? os->share->op->inputs[0] : -1;
}

/* After a reader pipeline's last task: the last reader lets the kept batches go. Slices
 * its consumers still hold keep their buffers alive. */
static void run_share_done(struct sl__node *n, struct sl__worker *w)
{
    (void)w;
    struct sl__pipeline *p = n->arg;
    struct sl__opstate *keeper = p->source->share;
    if (atomic_fetch_sub(&keeper->share_readers, 1) == 1)
        sl__collect_drop(keeper->gstate);
}

int sl__share_graph(struct sl_query *q, struct sl__pipeline *p)
{
    struct sl__opstate *keeper = p->source->share;
    if (!keeper)
        return SL_OK;
    p->done = sl__node_new(&q->graph, run_share_done, p,
                           SL__NODE_CPU | (q->opts.debug_gpu_handoffs ? 0 : SL__NODE_FOLLOW));
    if (!p->done || sl__node_depend(keeper->finalize, p->start) != SL_OK ||
        sl__node_depend(p->start, p->done) != SL_OK)
        return sl__query_fail(q, "", SL_ENOMEM, "out of memory building the task graph");
    return SL_OK;
}

/* Buffers of a kept batch that no budget holds: those only this batch references (made
 * by the query without charging, e.g. a GPU result downloaded for the keeper). A buffer
 * others hold too (a registered table's, sliced by scan.table) is not the query's to
 * count. With one holder, no other thread reads or writes `charged`. */
int sl__share_charge(sl_task_t *t, sl_batch_t *b)
{
    if (!b || b->n_rows == 0)
        return SL_OK;
    for (int i = 0; i < b->n_cols; i++) {
        struct sl__buf *bufs[3] = {b->cols[i].data, b->cols[i].validity, b->cols[i].chars};
        for (int k = 0; k < 3; k++) {
            struct sl__buf *u = bufs[k];
            if (!u || u->charged || u->kind == SL__MEM_DEVICE || u->kind == SL__MEM_FOREIGN ||
                atomic_load(&u->refs) != 1)
                continue;
            if (sl__engine_charge_buf(t->q->eng, u) != SL_OK)
                return sl_task_fail(t, SL_EBUDGET, "the shared rows of node %d do not fit the "
                                    "engine's host budget of %lld bytes",
                                    sl__opstate_node(t->q, t->os),
                                    (long long)t->q->eng->host_limit);
        }
    }
    return SL_OK;
}

/* ---------------- core.share_read ---------------- */

struct reader_global {
    struct sl__morsels m;
};

static int64_t reader_tasks(sl_task_t *t)
{
    struct reader_global *g = sl_task_gstate(t);
    sl_table_t *kept = sl__collect_result(t->os->share->gstate);
    /* Kept device batches read on their GPU are resident: large morsels, as scan.table's */
    int64_t n = sl__morsels_cut(&g->m, kept, sl__task_table_morsel_rows(t, kept));
    return n < 0 ? sl_task_fail(t, SL_ENOMEM, "out of memory") : n;
}

/* Task i emits a slice of one kept batch: a batch object of its own over the shared
 * buffers, so consumers never share a batch object (or its cached null counts). */
static int reader_source(sl_task_t *t)
{
    struct reader_global *g = sl_task_gstate(t);
    sl_table_t *kept = sl__collect_result(t->os->share->gstate);
    sl_batch_t *s = sl__morsels_slice(&g->m, kept, sl_task_index(t));
    if (!s)
        return sl_task_fail(t, SL_ENOMEM, "out of memory slicing a shared batch");
    return sl_task_emit(t, s);
}

static void reader_fini_global(const sl_op_t *op, void *gs)
{
    (void)op;
    sl__morsels_free(&((struct reader_global *)gs)->m);
}

/* Seconds per task: a slice per morsel, whatever its rows. */
static double reader_cost(const sl_op_t *op, enum sl_device_kind kind, int64_t rows)
{
    (void)op;
    (void)kind;
    return rows < 0 ? -1 : 1e-6;
}

static int reader_can_split(const sl_op_t *op)
{
    (void)op;
    return 1;
}

static int reader_bind(sl_bind_t *b)
{
    (void)b;
    return SL_OK;
}

static const struct sl_impl reader_impls[] = {{.device = SL_DEVICE_CPU, .run = reader_source}};
static const struct sl_phase reader_phase = {reader_impls, 1, reader_cost};

const struct sl_op_def sl__share_read_def = {
    .abi_version = SL_OP_ABI_VERSION,
    .flags = SL_OP_SOURCE,
    .name = "core.share_read",
    .doc = "reads the kept rows of a shared node for one of its consumers (added by the "
           "runtime)",
    .bind = reader_bind,
    .global_state_bytes = sizeof(struct reader_global),
    .fini_global = reader_fini_global,
    .source_tasks = reader_tasks,
    .source = &reader_phase,
    .can_split = reader_can_split,
};
