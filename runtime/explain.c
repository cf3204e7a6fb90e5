/* sl_query_explain: what the engine will do with a query, per pipeline: placement and
 * why, tasks, estimated cost per task, bytes to move between host and device, and
 * estimated peak memory against the budgets; after the run, what it measured.
 *
 * The memory estimate is deliberately simple (docs/CLI.md says so): every pipeline
 * breaker keeps its whole input until the query ends (joins, sorts, k-means and
 * outputs do; aggregates keep less), plus the batches in flight of the busiest
 * pipeline: one morsel in and one out per CPU worker, or per GPU slot. */
#include <stdio.h>
#include <string.h>

#include "exec_int.h"
#include "gpu_int.h"

struct sl__explain {
    struct sl_explain pub;
    struct sl_explain_pipeline *pipes;
    struct sl_explain_stage *stages;
};

static struct sl__opstate *stage_os(const struct sl__pipeline *p, int s)
{
    return s < 0 ? p->source : s < p->n_chain ? p->chain[s] : p->sink;
}

static const struct sl_phase *stage_phase(const struct sl__pipeline *p, int s)
{
    const struct sl_op_def *d = stage_os(p, s)->op->def;
    return s < 0 ? d->source : s < p->n_chain ? d->execute : d->sink;
}

/* Rows and schema that reach stage s (s >= 0): the output of the stage before it. */
static int64_t rows_into(const struct sl__pipeline *p, int s)
{
    return stage_os(p, s - 1)->op->rows_estimate;
}

/* Estimates saturate at INT64_MAX: a plan of 2^60 rows is "more than any budget", not a
 * wrapped negative size. Arguments are never negative. */
static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

static int64_t sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

static int64_t bytes_of(int64_t rows, int64_t width)
{
    return rows > 0 ? sat_mul(rows, width) : 0;
}

/* 1 if the state a pipeline's source reads was left on a GPU by the pipelines into it. */
static bool source_state_on_gpu(const struct sl_query *q, const struct sl__explain *ex,
                                const struct sl__pipeline *p)
{
    const struct sl__opstate *src = p->source;
    for (int k = src->pipe0; k < src->pipe0 + src->n_pipes_in; k++)
        if (ex->pipes[k].device >= 0 && ex->pipes[k].stages[ex->pipes[k].n_stages - 1].on_gpu)
            return true;
    return false;
}

/* Placement, tasks and costs of pipeline k. */
static void estimate_pipeline(struct sl_query *q, struct sl__explain *ex, int k,
                              struct sl_explain_stage *st)
{
    struct sl__pipeline *p = &q->pipes[k];
    struct sl_explain_pipeline *e = &ex->pipes[k];
    e->id = p->id;
    e->sink_port = p->sink_port;
    e->stages = st;
    e->n_stages = p->n_chain + 2;
    e->gpu_capable = sl__pipeline_gpu_capable(p);
    e->device = sl__place_pipeline_why(q, p, e->why, sizeof e->why);
    bool gpu = e->device >= 0;
    e->split = p->split;
    e->gpu_share = p->split ? p->split_gpu_share : -1;
    e->ms_estimated = sl__pipeline_estimate_ms(q, p, e->device, p->split);
    e->rows = p->source->op->rows_estimate;
    if (p->split) /* as run_pipeline_start will cut them (its morsel size is the same) */
        e->morsel_rows = sl__split_morsel_rows(q, p);
    else if (gpu)
        e->morsel_rows = sl__pipeline_gpu_morsel_rows(q, p, e->device);
    else
        e->morsel_rows = q->opts.morsel_rows_cpu;
    if (gpu && !p->split && e->morsel_rows < q->opts.morsel_rows_gpu) {
        size_t len = strlen(e->why);
        snprintf(e->why + len, sizeof e->why - len, "; morsels of %lld rows, not %lld, so "
                 "that %d in flight fit the GPU's budget", (long long)e->morsel_rows,
                 (long long)q->opts.morsel_rows_gpu, q->eng->cfg.gpu_depth);
    }
    /* One task per morsel of the estimated rows (sources decide at run time). */
    if (e->rows < 0)
        e->tasks = -1;
    else
        e->tasks = e->rows == 0 ? 1 /* no overflow near INT64_MAX rows: */
                   : e->rows / e->morsel_rows + (e->rows % e->morsel_rows != 0);
    int64_t task_rows = e->rows < 0 ? e->morsel_rows
                        : e->rows < e->morsel_rows ? e->rows : e->morsel_rows;
    double total = 0;
    bool known = true;
    for (int s = -1; s <= p->n_chain; s++) {
        struct sl_explain_stage *x = &st[s + 1];
        struct sl__opstate *os = stage_os(p, s);
        const struct sl_phase *ph = stage_phase(p, s);
        x->op = os->op->def->name;
        x->node = sl__opstate_node(q, os);
        x->on_gpu = gpu && sl__stage_on_gpu(p, s);
        if (x->on_gpu && s >= 0 && s < p->n_chain) { /* a streaming stage (filter, project) */
            /* Its CUDA implementation may refuse every batch (an expression the GPU
             * program does not cover): then the host runs it. */
            sl_task_t t = {.q = q, .os = os, .pipe = p, .stage = s, .kind = SL_DEVICE_CUDA};
            x->on_gpu = sl__phase_impl(ph, SL_DEVICE_CUDA, &t) != NULL;
        }
        enum sl_device_kind kind = x->on_gpu ? SL_DEVICE_CUDA : SL_DEVICE_CPU;
        x->task_seconds = ph && ph->cost ? ph->cost(os->op, kind, task_rows) : -1;
        if (x->task_seconds < 0) {
            x->task_seconds = -1;
            known = false;
        }
        total += x->task_seconds;
    }
    double hist = sl__pipeline_ns_per_row(q, p, gpu ? SL_DEVICE_CUDA : SL_DEVICE_CPU);
    e->task_seconds = known ? total : hist >= 0 ? hist * (double)task_rows / 1e9 : -1;
}

/* Several GPU devices: what the join or sort that pipeline k sinks into would do (its
 * operator's judge, registered at bind), with the budgets and rows known now. */
static void estimate_devices(struct sl_query *q, struct sl__explain *ex, int k)
{
    struct sl__pipeline *p = &q->pipes[k];
    struct sl_explain_pipeline *e = &ex->pipes[k];
    const struct sl_op *op = p->sink->op;
    const sl_engine_t *eng = q->eng;
    if (!op->mg_judge || eng->n_gpus < 2 || e->device < 0 || !e->stages[e->n_stages - 1].on_gpu)
        return;
    struct sl__mg_env env = {.mode = q->opts.multi_gpu, .self = -1, .rows = {-1, -1}};
    env.n_devices = eng->n_gpus < SL__MG_ENV_MAX_DEV ? eng->n_gpus : SL__MG_ENV_MAX_DEV;
    for (int d = 0; d < env.n_devices; d++)
        env.room[d] = sl__gpu_budget_left(eng->gpus[d]);
    int self = sl__engine_gpu_index(eng, e->device);
    env.self = self < env.n_devices ? self : -1;
    for (int i = 0; i < op->n_inputs && i < 2; i++)
        env.rows[i] = q->plan->nodes[op->inputs[i]]->rows_estimate;
    struct sl__mg_verdict v = {.rows = -1, .link_bytes = -1, .device_bytes = -1, .seconds = -1};
    op->mg_judge(op, &env, &v);
    e->multi_devices = v.devices;
    e->multi_why = v.why;
    snprintf(e->multi_why_text, sizeof e->multi_why_text, "%s", v.why_text ? v.why_text : "");
    e->multi_rows = v.rows;
    e->xchg_link_bytes = v.link_bytes;
    e->xchg_device_bytes = v.device_bytes;
    e->xchg_seconds = v.seconds;
}

/* Bytes to move and memory, once every pipeline is placed. *kept is the state the
 * pipeline leaves (kept until the query ends), on the host [0] and the GPU [1]. */
static void estimate_data(struct sl_query *q, struct sl__explain *ex, int k, int64_t kept_at[2])
{
    struct sl__pipeline *p = &q->pipes[k];
    struct sl_explain_pipeline *e = &ex->pipes[k];
    bool gpu = e->device >= 0;
    int64_t src_w = sl__schema_row_bytes(p->source->op->schema);
    bool upstream_gpu = p->source->op->n_inputs > 0 && source_state_on_gpu(q, ex, p);
    /* Where the rows are after each stage: on the GPU (true) or the host. */
    bool on_dev = e->stages[0].on_gpu && (p->source->op->n_inputs == 0 || upstream_gpu);
    if (e->stages[0].on_gpu && !on_dev)
        e->bytes_h2d = sat_add(e->bytes_h2d, bytes_of(e->rows, src_w));
    else if (!e->stages[0].on_gpu && upstream_gpu)
        e->bytes_d2h = sat_add(e->bytes_d2h, bytes_of(e->rows, src_w));
    for (int s = 0; s <= p->n_chain; s++) {
        const sl_schema_t *in_schema = stage_os(p, s - 1)->op->schema;
        int64_t in = bytes_of(rows_into(p, s), sl__schema_row_bytes(in_schema));
        bool here = e->stages[s + 1].on_gpu;
        if (here && !on_dev)
            e->bytes_h2d = sat_add(e->bytes_h2d, in);
        else if (!here && on_dev)
            e->bytes_d2h = sat_add(e->bytes_d2h, in);
        on_dev = here;
    }
    const struct sl__opstate *feed = stage_os(p, p->n_chain - 1);
    int64_t in_w = sl__schema_row_bytes(feed->op->schema);
    int64_t kept = bytes_of(feed->op->rows_estimate, in_w);
    /* An output collected on a GPU comes back to the host at the end. */
    if (on_dev && p->sink->op->def == &sl__collect_def)
        e->bytes_d2h = sat_add(e->bytes_d2h, kept);
    int64_t task_rows = e->rows < 0 || e->rows > e->morsel_rows ? e->morsel_rows : e->rows;
    int64_t flight = sat_mul(task_rows, src_w + in_w);
    kept_at[0] = on_dev ? 0 : kept;
    kept_at[1] = on_dev ? kept : 0;
    int depth = q->eng->cfg.gpu_depth > 0 ? q->eng->cfg.gpu_depth : 4;
    e->host_bytes = sat_add(kept_at[0], gpu ? 0 : sat_mul(flight, q->eng->n_threads));
    e->gpu_bytes = sat_add(kept_at[1], gpu ? sat_mul(flight, depth) : 0);
}

static int build(struct sl_query *q)
{
    struct sl__explain *ex = sl__calloc(1, sizeof *ex);
    int n_stages = 0;
    for (int k = 0; k < q->n_pipes; k++)
        n_stages += q->pipes[k].n_chain + 2;
    if (!ex)
        return SL_ENOMEM;
    ex->pipes = sl__calloc((size_t)(q->n_pipes ? q->n_pipes : 1), sizeof *ex->pipes);
    ex->stages = sl__calloc((size_t)(n_stages ? n_stages : 1), sizeof *ex->stages);
    if (!ex->pipes || !ex->stages) {
        sl__free(ex->pipes, 0);
        sl__free(ex->stages, 0);
        sl__free(ex, sizeof *ex);
        return SL_ENOMEM;
    }
    struct sl_explain *pub = &ex->pub;
    pub->n_threads = q->eng->n_threads;
    pub->n_gpus = q->eng->n_gpus;
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    sl_engine_mem_stats(q->eng, &ms);
    pub->host_budget = ms.host_limit;
    pub->gpu_budget = ms.gpu_limit;
    pub->n_pipelines = q->n_pipes;
    pub->pipelines = ex->pipes;
    struct sl_explain_stage *st = ex->stages;
    for (int k = 0; k < q->n_pipes; k++) {
        estimate_pipeline(q, ex, k, st);
        estimate_devices(q, ex, k);
        st += q->pipes[k].n_chain + 2;
    }
    /* Kept states add up; batches in flight count for the busiest pipeline only. */
    int64_t flight[2] = {0, 0};
    for (int k = 0; k < q->n_pipes; k++) {
        int64_t kept[2];
        estimate_data(q, ex, k, kept);
        struct sl_explain_pipeline *e = &ex->pipes[k];
        pub->host_peak = sat_add(pub->host_peak, kept[0]);
        pub->gpu_peak = sat_add(pub->gpu_peak, kept[1]);
        if (e->host_bytes - kept[0] > flight[0])
            flight[0] = e->host_bytes - kept[0];
        if (e->gpu_bytes - kept[1] > flight[1])
            flight[1] = e->gpu_bytes - kept[1];
    }
    pub->host_peak = sat_add(pub->host_peak, flight[0]);
    pub->gpu_peak = sat_add(pub->gpu_peak, flight[1]);
    q->explain_st = ex;
    return SL_OK;
}

/* What the run measured, when it has finished. */
static void measure(struct sl_query *q, struct sl__explain *ex)
{
    pthread_mutex_lock(&q->mu);
    bool done = q->state == SL__Q_DONE;
    pthread_mutex_unlock(&q->mu);
    if (!done)
        return;
    struct sl_explain *pub = &ex->pub;
    pub->measured = 1;
    pub->status = q->rc;
    pub->ms_measured = (double)(q->end_ns - q->start_ns) / 1e6;
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    sl_engine_mem_stats(q->eng, &ms);
    pub->host_peak_measured = ms.host_peak;
    pub->gpu_peak_measured = ms.gpu_peak;
    pub->bytes_h2d_measured = atomic_load(&q->bytes_h2d);
    pub->bytes_d2h_measured = atomic_load(&q->bytes_d2h);
    for (int k = 0; k < q->n_pipes; k++) {
        struct sl__pipeline *p = &q->pipes[k];
        struct sl_explain_pipeline *e = &ex->pipes[k];
        int64_t end = atomic_load(&p->end_ns);
        e->measured = 1;
        e->device_measured = p->device;
        if (p->host_source) /* moved when it started (exec.c): say so beside the estimate */
            snprintf(e->why, sizeof e->why, "placed on GPU %d, but its source finalized on "
                     "the host: the CPU workers ran its %lld tasks", e->device,
                     (long long)p->n_tasks);
        e->ms_measured = p->start_ns && end > p->start_ns ? (double)(end - p->start_ns) / 1e6 : 0;
        e->rows_measured = atomic_load(&p->source->rows_out);
        e->tasks_measured = p->n_tasks;
        e->split = p->split;
        e->cpu_tasks_measured = atomic_load(&p->cpu_tasks);
        e->gpu_tasks_measured = atomic_load(&p->gpu_tasks);
    }
}

int sl_query_explain(sl_query_t *q, const struct sl_explain **out)
{
    if (!q || !out)
        return sl__set_last_error(SL_EINVAL, "sl_query_explain: NULL argument");
    if (!q->eng)
        return sl__set_last_error(SL_ESTATE, "sl_query_explain: the query's engine was closed");
    if (!q->explain_st && build(q) != SL_OK)
        return sl__set_last_error(SL_ENOMEM, "out of memory explaining the query");
    measure(q, q->explain_st);
    *out = &q->explain_st->pub;
    return SL_OK;
}

void sl__explain_free(struct sl_query *q)
{
    struct sl__explain *ex = q->explain_st;
    if (!ex)
        return;
    sl__free(ex->pipes, 0);
    sl__free(ex->stages, 0);
    sl__free(ex, sizeof *ex);
    q->explain_st = NULL;
}
