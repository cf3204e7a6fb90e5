/* Lowering a plan into pipelines and pipelines into task-graph nodes.
 *
 * As in DuckDB: a node with SL_OP_SINK ends the pipelines of its inputs; a node with
 * SL_OP_SOURCE starts one (after its own sinks have been finalized, if it has any);
 * SL_OP_STREAM nodes are chained in between. Every plan output gets a collect sink. A
 * node with several consumers ends its pipeline in a keeper, and each consumer's
 * pipeline starts at a reader of it (share.c).
 *
 * Graph shape per query:
 *   pipeline start node  --spawns-->  one morsel node per source task
 *   sink node's finalize node depends on the start nodes of all pipelines into it,
 *   runs combine for every local state, then finalize (which may spawn more work);
 *   a pipeline whose source has sinks depends on that source's finalize node.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec_int.h"
#include "gpu_int.h"
#include "text_buf.h"

int64_t sl__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---------------- lowering ---------------- */

static int check_consumers(struct sl_query *q)
{
    for (int i = 0; i < q->plan->n_nodes; i++) {
        const struct sl_op *op = q->plan->nodes[i];
        bool has_output = (op->def->flags & (SL_OP_SOURCE | SL_OP_STREAM)) != 0;
        int c = q->consumers[i];
        if (has_output && c == 0)
            return sl__query_fail(q, op->def->name, SL_EINVAL,
                                  "%snode %d (%s): its output is not used; connect it to another "
                                  "node or mark it as an output", op->where, i, op->def->name);
        if (!has_output && op->output_name)
            return sl__query_fail(q, op->def->name, SL_EINVAL,
                                  "%snode %d (%s) produces no rows, so it cannot be output '%s'",
                                  op->where, i, op->def->name, op->output_name);
    }
    return SL_OK;
}

/* The source of the pipeline that ends at `sink` and starts from node `producer`, and in
 * *depth the number of streaming nodes between. A walk back through single inputs stops
 * at a node that produces rows, or at a shared node (other than the one `sink` keeps),
 * whose rows the pipeline then reads through a reader of its own. NULL (the query
 * failed): a node on the way neither produces nor streams rows. */
static struct sl__opstate *pipeline_source(struct sl_query *q, const struct sl__opstate *sink,
                                           int producer, int *depth)
{
    *depth = 0;
    for (int cur = producer;; cur = q->plan->nodes[cur]->inputs[0]) {
        const struct sl_op *op = q->plan->nodes[cur];
        struct sl__opstate *keeper = sl__share_keeper(q, cur);
        if (keeper && keeper != sink) {
            struct sl__opstate *r = sl__share_reader(q, cur);
            if (!r)
                sl__query_fail(q, op->def->name, SL_EINTERNAL,
                               "node %d (%s) has more consumers than readers", cur, op->def->name);
            return r;
        }
        if (op->def->flags & SL_OP_SOURCE)
            return &q->ops[cur];
        if (!(op->def->flags & SL_OP_STREAM) || op->n_inputs != 1) {
            sl__query_fail(q, op->def->name, SL_EINVAL,
                           "node %d (%s) neither produces rows nor streams them", cur,
                           op->def->name);
            return NULL;
        }
        ++*depth;
    }
}

/* Adds the pipeline that ends at (sink, port) and starts from node `producer`. */
static int add_pipeline(struct sl_query *q, struct sl__opstate *sink, int port, int producer)
{
    struct sl__pipeline *p = &q->pipes[q->n_pipes];
    memset(p, 0, sizeof *p);
    p->id = q->n_pipes;
    p->sink = sink;
    p->sink_port = port;
    int depth;
    p->source = pipeline_source(q, sink, producer, &depth);
    if (!p->source)
        return q->err.code;
    p->chain = depth ? sl__calloc((size_t)depth, sizeof *p->chain) : NULL;
    if (depth && !p->chain)
        return sl__query_fail(q, "", SL_ENOMEM, "out of memory lowering the plan");
    p->n_chain = depth;
    int cur = producer;
    for (int k = depth - 1; k >= 0; k--) {
        p->chain[k] = &q->ops[cur];
        cur = q->plan->nodes[cur]->inputs[0];
    }
    p->device = -1;
    sl__pipeline_signature(p);
    if (sink->n_pipes_in++ == 0) /* a sink's pipelines are added one after another */
        sink->pipe0 = p->id;
    q->n_pipes++;
    return SL_OK;
}

int sl__query_lower(struct sl_query *q)
{
    int rc = check_consumers(q);
    if (rc != SL_OK)
        return rc;
    int max_pipes = q->n_outputs;
    for (int i = 0; i < q->plan->n_nodes; i++)
        max_pipes += q->plan->nodes[i]->n_inputs + (sl__share_keeper(q, i) != NULL);
    q->pipes = sl__calloc((size_t)(max_pipes ? max_pipes : 1), sizeof *q->pipes);
    if (!q->pipes)
        return sl__query_fail(q, "", SL_ENOMEM, "out of memory lowering the plan");
    for (int i = 0; i < q->plan->n_nodes; i++) {
        const struct sl_op *op = q->plan->nodes[i];
        struct sl__opstate *keeper = sl__share_keeper(q, i);
        if (keeper && (rc = add_pipeline(q, keeper, 0, i)) != SL_OK)
            return rc;
        if (!(op->def->flags & SL_OP_SINK))
            continue;
        for (int port = 0; port < op->n_inputs; port++) {
            rc = add_pipeline(q, &q->ops[i], port, op->inputs[port]);
            if (rc != SL_OK)
                return rc;
        }
    }
    for (int k = 0; k < q->n_outputs; k++) {
        struct sl__opstate *c = &q->ops[q->plan->n_nodes + k];
        rc = add_pipeline(q, c, 0, c->op->inputs[0]);
        if (rc != SL_OK)
            return rc;
    }
    return SL_OK;
}

/* ---------------- node functions ---------------- */

void sl__trace_span(struct sl_query *q, struct sl__worker *w, const char *name, int64_t t0,
                    int64_t rows)
{
    if (!q->trace_on || !w)
        return;
    struct sl__trace_event e = {.name = name, .device = -1, .lane = w->id, .start_ns = t0,
                                .end_ns = sl__now_ns(), .rows = rows, .kind = SL__TR_TASK};
    sl__trace_add(&q->trace, w->id, &e);
}

/* Co-processing: the GPU takes morsels from the front of the range, CPU workers from the
 * back, each when it is ready for one, so both devices stay busy until the range is
 * empty whatever the estimates said (a static split would leave one device idle when
 * they are off). The GPU gets the low indices: its copies stay sequential in the input.
 * Returns the morsel taken, or -1 when none is left. */
static int64_t split_claim(struct sl__pipeline *p, bool front)
{
    uint64_t r = atomic_load_explicit(&p->split_range, memory_order_relaxed), nr;
    do {
        uint64_t lo = r & 0xffffffffu, hi = r >> 32;
        if (lo >= hi)
            return -1;
        nr = front ? (hi << 32 | (lo + 1)) : ((hi - 1) << 32 | lo);
    } while (!atomic_compare_exchange_weak_explicit(&p->split_range, &r, nr,
                                                    memory_order_relaxed, memory_order_relaxed));
    return front ? (int64_t)(r & 0xffffffffu) : (int64_t)(r >> 32) - 1;
}

/* Morsel `index` through a pipeline. On a GPU worker the task only enqueues: its node
 * is held until the GPU has finished it (gpu_worker.c). */
static void morsel(struct sl__node *n, struct sl__worker *w, int64_t index)
{
    struct sl__pipeline *p = n->arg;
    int64_t rows = 0;
    sl_task_t t = {
        .q = n->graph->on_finish_user,
        .os = p->source,
        .pipe = p,
        .stage = -1,
        .gnode = n,
        .worker = w,
        .kind = SL_DEVICE_CPU,
        .index = index,
        .count = n->count,
        .rows_emitted = &rows,
    };
    if (atomic_load_explicit(&t.q->failed, memory_order_relaxed) ||
        sl__query_past_deadline(t.q))
        return;
    bool on_gpu = w && w->gpu >= 0;
    atomic_fetch_add_explicit(on_gpu ? &p->gpu_tasks : &p->cpu_tasks, 1, memory_order_relaxed);
    int64_t t0 = sl__now_ns();
    if (on_gpu) {
        t.kind = sl__stage_on_gpu(p, -1) ? SL_DEVICE_CUDA : SL_DEVICE_CPU;
        /* A CUDA implementation that cannot run this task leaves the stage to the host. */
        if (t.kind == SL_DEVICE_CUDA &&
            !sl__phase_impl(p->source->op->def->source, SL_DEVICE_CUDA, &t))
            t.kind = SL_DEVICE_CPU;
        if (sl__gpu_task_begin(&t) < 0)
            return;
        atomic_fetch_add_explicit(&p->source->gpu_tasks, 1, memory_order_relaxed);
    }
    sl__task_run_phase(&t, p->source->op->def->source);
    if (on_gpu) {
        sl__gpu_task_end(&t);
        return;
    }
    int64_t t1 = sl__now_ns();
    sl__cost_record(t.q->eng, p->signature, SL_DEVICE_CPU, rows, t1 - t0);
    sl__trace_span(t.q, w, p->sink->op->def->name, t0, rows);
    int64_t end = atomic_load_explicit(&p->end_ns, memory_order_relaxed);
    while (end < t1 && !atomic_compare_exchange_weak(&p->end_ns, &end, t1)) {
    }
}

/* Morsel tasks are made as the query advances: a window of them when the pipeline
 * starts, and each one that ends makes the next, so memory and the time a cancel takes
 * depend on the window, not on the input (2^42 rows made 35.8 M tasks up front: 4 GB,
 * and 9 s to cancel). The window: 4 tasks per CPU worker keep every worker fed, as
 * tasks wait in the queues behind one another; a GPU gets twice its in-flight depth. */
static int64_t morsel_window(struct sl_query *q, bool gpu)
{
    int64_t w = gpu ? 2 * (int64_t)q->eng->cfg.gpu_depth : 4 * (int64_t)q->eng->n_threads;
    return w < 8 ? 8 : w;
}

/* A morsel node of pipeline p, child of the pipeline's start node. Its memory is reused
 * once it completes (the window's nodes recycle). */
static int add_morsel_node(struct sl__node *start, struct sl__pipeline *p, bool gpu,
                           int64_t index, int64_t tasks);

/* The task after `n`, if morsels are left and the query goes on. `n`'s parent, the
 * start node, cannot complete meanwhile: `n` has not completed. */
static void spawn_next(struct sl__node *n, struct sl__pipeline *p)
{
    struct sl_query *q = n->graph->on_finish_user;
    if (atomic_load_explicit(&q->failed, memory_order_relaxed))
        return;
    int64_t i = 0;
    if (p->split) { /* a GPU node: another while the range holds morsels */
        uint64_t r = atomic_load_explicit(&p->split_range, memory_order_relaxed);
        if ((r & 0xffffffffu) >= (r >> 32))
            return;
    } else if ((i = atomic_fetch_add_explicit(&p->next_morsel, 1, memory_order_relaxed)) >=
               n->count) {
        return;
    }
    if (add_morsel_node(n->parent, p, n->device >= 0, i, n->count) != SL_OK)
        sl__query_fail(q, p->source->op->def->name, SL_ENOMEM, "out of memory creating tasks");
}

/* A morsel node. Co-processed, a GPU node takes the next morsel from the front when the
 * GPU worker gets to it, and a CPU node loops over morsels from the back until none is
 * left (spawn_morsels makes fewer CPU nodes than workers: see there). */
static void run_morsel(struct sl__node *n, struct sl__worker *w)
{
    struct sl__pipeline *p = n->arg;
    if (!p->split) {
        morsel(n, w, n->index);
        spawn_next(n, p);
        return;
    }
    bool on_gpu = w && w->gpu >= 0;
    int64_t i;
    struct sl_query *q = n->graph->on_finish_user;
    while (!atomic_load_explicit(&q->failed, memory_order_relaxed) &&
           (i = split_claim(p, on_gpu)) >= 0) {
        morsel(n, w, i);
        if (on_gpu) { /* one task per GPU node: its node is held until the GPU is done */
            spawn_next(n, p);
            break;
        }
    }
}

/* GPU morsels fitted to the budget (issue 18): at SF 10 with gpu_mem=256Mi and tables in
 * pinned host memory, 16 Mi-row morsels of lineitem (64 MiB a column, four tasks in
 * flight) failed 12 of the 22 TPC-H queries, 3 with 1Gi, and 14 at SF 1 with 64Mi. */
int64_t sl__gpu_budget_morsel_rows(int64_t budget_left, int64_t row_bytes, int depth,
                                   int64_t morsel_rows)
{
    int64_t per_row = (row_bytes > 0 ? row_bytes : 1) * SL__GPU_MORSEL_COPIES *
                      (depth > 0 ? depth : 1);
    int64_t fit = budget_left > 0 ? budget_left / per_row : 0;
    fit = fit < SL__GPU_MORSEL_MIN ? SL__GPU_MORSEL_MIN : fit;
    return fit < morsel_rows ? fit : morsel_rows;
}

int64_t sl__pipeline_gpu_morsel_rows(struct sl_query *q, const struct sl__pipeline *p,
                                     int device)
{
    sl_engine_t *eng = q->eng;
    int64_t m = q->opts.morsel_rows_gpu;
    int i = sl__engine_gpu_index(eng, device);
    return i < 0 ? m
                 : sl__gpu_budget_morsel_rows(sl__gpu_budget_left(eng->gpus[i]),
                                              sl__schema_row_bytes(p->source->op->schema),
                                              eng->cfg.gpu_depth, m);
}

/* Rows per morsel of a co-processed pipeline: both devices cut the same morsels, since a
 * source numbers its tasks by one size. The CPU's size would give the GPU many small
 * copies and launches, the GPU's would leave few morsels for the CPU workers and a long
 * tail; in between, about 32 morsels per CPU worker over the whole input keeps the tail
 * (one morsel per worker) short. The option coproc_morsel_rows sets it. */
int64_t sl__split_morsel_rows(struct sl_query *q, const struct sl__pipeline *p)
{
    const struct sl_engine_config *o = &q->opts;
    if (o->coproc_morsel_rows > 0)
        return o->coproc_morsel_rows;
    int64_t rows = p->source->op->rows_estimate, m = rows / (32 * (int64_t)q->eng->n_threads);
    if (rows < 0 || m < o->morsel_rows_cpu)
        m = o->morsel_rows_cpu;
    return m < o->morsel_rows_gpu ? m : o->morsel_rows_gpu;
}

/* CPU nodes of a co-processed pipeline: one per worker but one, since each loops over
 * morsels; the core left over runs the GPU worker and its staging threads, which the
 * GPU needs to keep its copies going (measured on the H100 host: all 16 workers busy
 * slowed the GPU's share by a third). The option coproc_cpu_workers sets the number. */
static int64_t split_cpu_nodes(struct sl_query *q, int64_t tasks)
{
    int64_t n = q->opts.coproc_cpu_workers > 0 ? q->opts.coproc_cpu_workers
                                               : q->eng->n_threads - 1;
    n = n < 1 ? 1 : n;
    return n < tasks ? n : tasks;
}

static int add_morsel_node(struct sl__node *start, struct sl__pipeline *p, bool gpu,
                           int64_t index, int64_t tasks)
{
    struct sl__node *m = sl__node_new(start->graph, run_morsel, p,
                                      (gpu ? SL__NODE_GPU : SL__NODE_CPU) | SL__NODE_REUSE);
    if (!m)
        return SL_ENOMEM;
    m->device = gpu ? p->device : -1;
    m->index = index;
    m->count = tasks;
    sl__node_adopt(start, m);
    sl__node_release(m);
    return SL_OK;
}

/* Spawns the first window of morsel nodes on the pipeline's device (spawn_next makes
 * the rest). A co-processed one gets a window of GPU nodes and split_cpu_nodes CPU
 * nodes, which take their morsels when they run (split_claim), so either device could
 * run them all. */
static int spawn_morsels(struct sl__node *n, struct sl__pipeline *p, int64_t tasks)
{
    struct sl_query *q = n->graph->on_finish_user;
    if (p->split)
        atomic_store(&p->split_range, (uint64_t)tasks << 32);
    /* GPU nodes first, so that the GPU worker starts while the CPU nodes are made. */
    for (int dev = 0; dev < (p->split ? 2 : 1); dev++) {
        bool gpu = p->device >= 0 && dev == 0;
        bool loops = p->split && !gpu; /* co-processing CPU nodes: no window, no refill */
        int64_t count = loops ? split_cpu_nodes(q, tasks) : tasks;
        if (!loops) {
            int64_t window = morsel_window(q, gpu);
            count = count < window ? count : window;
            atomic_store_explicit(&p->next_morsel, count, memory_order_relaxed);
        }
        for (int64_t i = 0; i < count; i++)
            if (add_morsel_node(n, p, gpu, i, tasks) != SL_OK)
                return SL_ENOMEM;
    }
    return SL_OK;
}

/* The source's task count as the device the tasks run on cuts it (its morsel size). */
static int64_t source_task_count(struct sl__node *n, struct sl__worker *w, struct sl__pipeline *p)
{
    const struct sl_op_def *d = p->source->op->def;
    bool gpu = p->device >= 0 && !p->split;
    sl_task_t t = {
        .q = n->graph->on_finish_user, .os = p->source, .pipe = p, .stage = -1, .gnode = n,
        .worker = w, .kind = gpu ? SL_DEVICE_CUDA : SL_DEVICE_CPU,
        .count = 1, .source_gpu = gpu ? p->device + 1 : 0,
    };
    return d->source_tasks ? d->source_tasks(&t) : 1;
}

/* Places pipeline p and counts its source's tasks. A GPU pipeline whose source emits
 * host rows after finalizing on the host (sl__pipeline_source_on_host: a join the GPU
 * could not take) would run that source's tasks one at a time inside the GPU worker's
 * tasks, each probe then uploaded (TPC-H Q18 at SF 10: 110 probes of 1.3 ms in a row);
 * the CPU workers run them at once. A source of one task (a top-k's rows) stays with
 * the GPU pipeline: its rows are few, and the stages after it read device data. */
static int64_t place_and_count(struct sl__node *n, struct sl__worker *w, struct sl__pipeline *p)
{
    struct sl_query *q = n->graph->on_finish_user;
    p->device = sl__place_pipeline(q, p);
    p->morsel_rows = p->split ? sl__split_morsel_rows(q, p) : 0;
    p->gpu_morsel_rows = p->device >= 0 && !p->split ? sl__pipeline_gpu_morsel_rows(q, p, p->device) : 0;
    p->host_source = false;
    if (p->device < 0 || p->split || !sl__pipeline_source_on_host(q, p))
        return source_task_count(n, w, p);
    int gpu = p->device;
    p->device = -1; /* counted as the CPU cuts them */
    int64_t tasks = source_task_count(n, w, p);
    p->host_source = tasks != 1;
    if (tasks == 1) { /* back to the GPU, with the one morsel size both counts agree on */
        p->device = gpu;
        p->morsel_rows = q->opts.morsel_rows_cpu;
    }
    return tasks;
}

static void run_pipeline_start(struct sl__node *n, struct sl__worker *w)
{
    struct sl__pipeline *p = n->arg;
    struct sl_query *q = n->graph->on_finish_user;
    const struct sl_op_def *d = p->source->op->def;
    p->start_ns = sl__now_ns();
    p->started_on_gpu = w && w->gpu >= 0;
    int64_t tasks = place_and_count(n, w, p);
    if (tasks < 0) {
        if (!atomic_load(&q->failed))
            sl__query_fail(q, d->name, SL_EINTERNAL, "%s: source_tasks returned %" PRId64,
                           d->name, tasks);
        return;
    }
    p->n_tasks = tasks;
    if (p->split && tasks >= INT32_MAX) { /* split_range packs indices in 32 bits */
        p->split = false;
        p->device = -1;
    }
    if (spawn_morsels(n, p, tasks) != SL_OK)
        sl__query_fail(q, d->name, SL_ENOMEM, "out of memory creating tasks");
}

/* The GPU worker of a GPU that pipelines into node `os` ran on, if any, unless the node
 * is forced to the CPU: the GPU whose memory most likely holds what the sink collected. */
static struct sl__worker *sink_gpu_worker(struct sl_query *q, struct sl__opstate *os)
{
    if (os->op->placement == SL_PLACE_CPU)
        return NULL;
    int gpu = -1;
    for (int k = os->pipe0; k < os->pipe0 + os->n_pipes_in && gpu < 0; k++)
        if (q->pipes[k].device >= 0)
            gpu = q->pipes[k].device;
    for (int i = 0; gpu >= 0 && i < q->n_slots; i++) {
        struct sl__worker *sw = sl__sched_worker(q->eng->sched, i);
        if (sw->gpu == gpu && sw->gpu_ctx)
            return sw;
    }
    return NULL;
}

static void run_finalize(struct sl__node *n, struct sl__worker *w);

/* A sink's CPU finalize, handed to the CPU workers by a finalize node that runs on the GPU
 * worker (SL__NODE_FOLLOW) because the sink could not finalize on the GPU. */
static void run_finalize_cpu(struct sl__node *n, struct sl__worker *w)
{
    struct sl__opstate *os = n->arg;
    sl_task_t t = {
        .q = n->graph->on_finish_user, .os = os, .stage = -1, .gnode = n, .worker = w,
        .kind = SL_DEVICE_CPU, .count = 1,
    };
    int64_t t0 = sl__now_ns();
    sl__task_run_phase(&t, os->op->def->finalize);
    sl__trace_span(t.q, w, os->op->def->name, t0, 0);
}

/* Runs fn(n's opstate) as a child of finalize node n on the CPU workers: n completes
 * when it has (and whatever it spawns). */
static void finalize_to_cpu(struct sl__node *n, sl__node_fn fn)
{
    struct sl_query *q = n->graph->on_finish_user;
    struct sl__node *c = sl__node_new(n->graph, fn, n->arg, SL__NODE_CPU);
    if (!c) {
        sl__query_fail(q, "", SL_ENOMEM, "out of memory building the task graph");
        return;
    }
    sl__node_adopt(n, c);
    sl__node_release(c);
}

/* Whether a finalize node running on the GPU worker w keeps the whole phase there: only
 * w's slot has a local state (every pipeline into the sink ran on the GPU alone), so
 * combine is that slot's and light. States of CPU workers (a co-processed or CPU
 * pipeline) may take long to merge: the CPU workers do it. */
static bool finalize_stays(struct sl_query *q, struct sl__opstate *os, struct sl__worker *w)
{
    for (int i = 0; i < q->n_slots; i++)
        if (os->lstates[i] && i != w->id)
            return false;
    return true;
}

/* The runtime's collectors finalize in microseconds (a sort of batch references): no
 * reason to leave the GPU worker for that. Other CPU finalizes go to the CPU workers,
 * even small ones: one may block on other ranks (an exchange's), and the GPU worker must
 * keep this rank's GPU pipelines going meanwhile. */
static bool finalize_light(const struct sl__opstate *os)
{
    const struct sl_op_def *d = os->op->def;
    return d == &sl__collect_def || d == &sl__collect_device_def || d == &sl__share_def;
}

static void run_finalize(struct sl__node *n, struct sl__worker *w)
{
    struct sl__opstate *os = n->arg;
    struct sl_query *q = n->graph->on_finish_user;
    const struct sl_op_def *d = os->op->def;
    bool on_gpu_worker = w && w->gpu >= 0;
    if (on_gpu_worker && !finalize_stays(q, os, w)) {
        finalize_to_cpu(n, run_finalize);
        return;
    }
    sl_task_t t = {
        .q = q,
        .os = os,
        .stage = -1,
        .gnode = n,
        .worker = w,
        .kind = SL_DEVICE_CPU,
        .count = 1,
    };
    int64_t t0 = sl__now_ns();
    /* Pipelines into this node have all finished; GPU ones recorded no end of their own. */
    for (int k = os->pipe0; k < os->pipe0 + os->n_pipes_in; k++)
        if (atomic_load(&q->pipes[k].end_ns) == 0)
            atomic_store(&q->pipes[k].end_ns, t0);
    if (d->combine) {
        for (int i = 0; i < q->n_slots; i++) {
            if (!os->lstates[i])
                continue;
            t.index = i;
            /* Combine sees the local state of slot i through sl_task_lstate. A GPU
             * worker's local state is combined by the CUDA implementation, if there is
             * one, on that GPU (its tasks have all completed by now). */
            t.combine_lstate = os->lstates[i];
            struct sl__worker *sw = sl__sched_worker(q->eng->sched, i);
            const struct sl_impl *cim = sw->gpu >= 0 && sw->gpu_ctx
                                            ? sl__phase_impl(d->combine, SL_DEVICE_CUDA, &t)
                                            : NULL;
            int rc;
            if (cim) {
                t.kind = SL_DEVICE_CUDA;
                rc = sl__gpu_run_sync(sw->gpu_ctx, &t, cim);
                t.kind = SL_DEVICE_CPU;
                t.gpu = NULL;
                t.stream = NULL;
                if (rc < 0 && !atomic_load(&q->failed))
                    sl__query_fail(q, d->name, rc, "%s: combine failed", d->name);
            } else {
                rc = sl__task_run_phase(&t, d->combine);
            }
            if (rc < 0)
                return;
        }
    }
    t.combine_lstate = NULL;
    t.index = 0;
    if (d->finalize) {
        /* A sink fed on a GPU finalizes there, when it can (op.h, "GPU placement"). */
        struct sl__worker *gw = sink_gpu_worker(q, os);
        const struct sl_impl *fim = NULL;
        if (gw) { /* can_run sees the task as it would run: on that GPU */
            t.kind = SL_DEVICE_CUDA;
            t.gpu = gw->gpu_ctx;
            fim = sl__phase_impl(d->finalize, SL_DEVICE_CUDA, &t);
            t.kind = SL_DEVICE_CPU;
            t.gpu = NULL;
        }
        if (fim) {
            t.kind = SL_DEVICE_CUDA;
            os->home_gpu = gw->gpu;
            atomic_fetch_or(&os->device_mask, 2);
            int rc = sl__gpu_run_sync(gw->gpu_ctx, &t, fim);
            if (rc < 0 && !atomic_load(&q->failed))
                sl__query_fail(q, d->name, rc, "%s: finalize failed", d->name);
        } else if (on_gpu_worker && !finalize_light(os)) {
            finalize_to_cpu(n, run_finalize_cpu);
        } else {
            sl__task_run_phase(&t, d->finalize);
        }
    }
    os->fin_start_ns = t0;
    os->fin_end_ns = sl__now_ns();
    sl__trace_span(q, w, d->name, t0, 0);
}

/* ---------------- graph ---------------- */

/* Makes the pipelines' start nodes. On an engine with one GPU, a pipeline that runs
 * there starts on its worker from the outset, which spawns its tasks there (a CPU worker
 * would first have to wake it): with placement gpu every pipeline, left to the engine
 * those it is expected to place there (sl__place_guess; placed for real when they start).
 * Forced GPU at 2^22 rows, `bench mixed` took 6.7 ms with the starts on the GPU worker and
 * 8.4 without, which auto, without them, could not match (issue 23). */
static int start_devices(struct sl_query *q)
{
    uint32_t follow = SL__NODE_CPU | (q->opts.debug_gpu_handoffs ? 0 : SL__NODE_FOLLOW);
    bool one_gpu = q->eng->n_gpus == 1 && !q->opts.debug_gpu_handoffs;
    bool guess = one_gpu && q->opts.placement == SL_PLACE_AUTO;
    int *guesses = guess ? sl__calloc((size_t)q->n_pipes + 1, sizeof *guesses) : NULL;
    if (guess && !guesses)
        return sl__query_fail(q, "", SL_ENOMEM, "out of memory building the task graph");
    for (int k = 0; k < q->n_pipes; k++) {
        struct sl__pipeline *p = &q->pipes[k];
        p->start = sl__node_new(&q->graph, run_pipeline_start, p, follow);
        if (!p->start) {
            sl__free(guesses, ((size_t)q->n_pipes + 1) * sizeof *guesses);
            return sl__query_fail(q, "", SL_ENOMEM, "out of memory building the task graph");
        }
        if (guess)
            guesses[k] = sl__place_guess(q, p, guesses);
        p->start->device = !one_gpu ? -1
                           : guess  ? guesses[k]
                           : q->opts.placement == SL_PLACE_GPU ? q->eng->gpu_ordinals[0]
                                                               : -1;
    }
    sl__free(guesses, ((size_t)q->n_pipes + 1) * sizeof *guesses);
    return SL_OK;
}

int sl__query_build_graph(struct sl_query *q)
{
    struct sl__graph *g = &q->graph;
    /* Starts and finalizes may run on the GPU worker that makes them ready (sched_int.h). */
    uint32_t follow = SL__NODE_CPU | (q->opts.debug_gpu_handoffs ? 0 : SL__NODE_FOLLOW);
    for (int i = 0; i < q->n_ops; i++) {
        struct sl__opstate *os = &q->ops[i];
        if (os->op->def->flags & SL_OP_SINK) {
            os->finalize = sl__node_new(g, run_finalize, os, follow);
            if (!os->finalize)
                return sl__query_fail(q, "", SL_ENOMEM, "out of memory building the task graph");
        }
    }
    int rc = start_devices(q);
    if (rc != SL_OK)
        return rc;
    for (int k = 0; k < q->n_pipes; k++) {
        struct sl__pipeline *p = &q->pipes[k];
        if (p->source->finalize && sl__node_depend(p->source->finalize, p->start) != SL_OK)
            return sl__query_fail(q, "", SL_ENOMEM, "out of memory building the task graph");
        if (sl__node_depend(p->start, p->sink->finalize) != SL_OK)
            return sl__query_fail(q, "", SL_ENOMEM, "out of memory building the task graph");
        rc = sl__share_graph(q, p);
        if (rc != SL_OK)
            return rc;
    }
    return SL_OK;
}

/* ---------------- profile ---------------- */

char *sl__query_profile(struct sl_query *q)
{
    /* Grows as it goes: a size computed up front was overrun once fields were added. */
    struct sl__text_buf b = {0};
    sl__text_put(&b, "{\"status\":\"%s\",\"time_ms\":%.3f,\"tasks\":%" PRId64
                            ",\"bytes_h2d\":%" PRId64 ",\"bytes_d2h\":%" PRId64
                            ",\"replica_hits\":%" PRId64 ",\"operators\":[",
                            sl_err_name(q->rc), (q->end_ns - q->start_ns) / 1e6,
                            (int64_t)atomic_load(&q->graph.completed),
                            (int64_t)atomic_load(&q->bytes_h2d),
                            (int64_t)atomic_load(&q->bytes_d2h),
                            (int64_t)atomic_load(&q->replica_hits));
    for (int i = 0; i < q->n_ops; i++) {
        struct sl__opstate *os = &q->ops[i];
        int dm = atomic_load(&os->device_mask);
        sl__text_put(&b, "%s{\"node\":%d,\"op\":\"%s\",\"device\":\"%s\",\"tasks\":%" PRId64
            ",\"gpu_tasks\":%" PRId64 ",\"rows_in\":%" PRId64 ",\"rows_out\":%" PRId64
            ",\"busy_ms\":%.3f,\"kernel_ms\":%.3f,\"h2d_ms\":%.3f,\"d2h_ms\":%.3f"
            ",\"bytes_h2d\":%" PRId64 ",\"bytes_d2h\":%" PRId64 ",\"phases\":{",
            i ? "," : "", sl__opstate_node(q, os), os->op->def->name,
            dm == 3 ? "cpu+gpu" : dm == 2 ? "gpu" : "cpu", (int64_t)atomic_load(&os->tasks),
            (int64_t)atomic_load(&os->gpu_tasks), (int64_t)atomic_load(&os->rows_in),
            (int64_t)atomic_load(&os->rows_out), atomic_load(&os->busy_ns) / 1e6,
            atomic_load(&os->kernel_ns) / 1e6, atomic_load(&os->h2d_ns) / 1e6,
            atomic_load(&os->d2h_ns) / 1e6, (int64_t)atomic_load(&os->bytes_h2d),
            (int64_t)atomic_load(&os->bytes_d2h));
        for (int k = 0; k < SL__OP_PHASES; k++) {
            const char *name = atomic_load(&os->phase_name[k]);
            if (name) /* names are the operator's literals: no JSON escaping needed */
                sl__text_put(&b, "%s\"%.40s\":%.3f", k ? "," : "",
                                        name, atomic_load(&os->phase_ns[k]) / 1e6);
        }
        sl__text_put(&b, "},\"values\":{");
        for (int k = 0; k < SL__OP_PHASES; k++) {
            const char *name = atomic_load(&os->value_name[k]);
            if (name)
                sl__text_put(&b, "%s\"%.40s\":%" PRId64, k ? "," : "",
                                        name, (int64_t)atomic_load(&os->value[k]));
        }
        sl__text_put(&b, "}");
        if (os->fin_start_ns) /* microseconds from the query's start */
            sl__text_put(&b, ",\"finalize_us\":[%.1f,%.1f]",
                                    (os->fin_start_ns - q->start_ns) / 1e3,
                                    (os->fin_end_ns - q->start_ns) / 1e3);
        int64_t dropped = atomic_load(&os->profile_dropped);
        if (dropped)
            sl__text_put(&b, ",\"profile_dropped\":%" PRId64, dropped);
        sl__text_put(&b, "}");
    }
    sl__text_put(&b, "],\"pipelines\":[");
    for (int k = 0; k < q->n_pipes; k++) {
        struct sl__pipeline *p = &q->pipes[k];
        sl__text_put(&b, "%s{\"id\":%d,\"source\":\"%s\",\"sink\":\"%s\",\"tasks\":%" PRId64
                                ",\"device\":%d,\"split\":%s,\"cpu_tasks\":%" PRId64
                                ",\"gpu_tasks\":%" PRId64 ",\"start\":\"%s\""
                                ",\"start_us\":%.1f,\"end_us\":%.1f}",
                                k ? "," : "", p->id, p->source->op->def->name,
                                p->sink->op->def->name, p->n_tasks, p->device,
                                p->split ? "true" : "false", (int64_t)atomic_load(&p->cpu_tasks),
                                (int64_t)atomic_load(&p->gpu_tasks),
                                p->started_on_gpu ? "gpu" : "cpu",
                                p->start_ns ? (p->start_ns - q->start_ns) / 1e3 : -1.0,
                                atomic_load(&p->end_ns) ? (atomic_load(&p->end_ns) - q->start_ns) / 1e3
                                                        : -1.0);
    }
    sl__text_put(&b, "]}");
    return sl__text_take(&b);
}
