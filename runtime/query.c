/* Queries: creating one from a plan, running it on the engine, its errors, progress,
 * results and profile. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engine_option_int.h"
#include "exec_int.h"
#include "gpu_int.h"

static void progress_now(const sl_query_t *q, struct sl_progress *p);

/* Guards every engine's list of queries and each query's link to its engine: a query
 * can be destroyed while its engine closes, so neither list nor link may belong to
 * the other's lock. Order: registry_mu, then a query's mu, then an engine's mu. */
static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static const char closed_msg[] = "the query's engine was closed (sl_engine_close)";

/* Whether the query's engine was closed; the owner's calls check it first. */
static bool detached(sl_query_t *q)
{
    pthread_mutex_lock(&q->mu);
    bool d = q->detached;
    pthread_mutex_unlock(&q->mu);
    return d;
}

static int query_failv(struct sl_query *q, const char *op_name, int device, int code,
                       const char *fmt, va_list ap)
{
    int native_device = -1;
    int native = code == SL_EDEVICE ? sl__device_error_take(&native_device) : 0;
    pthread_mutex_lock(&q->err_mu);
    if (!atomic_load(&q->failed)) {
        vsnprintf(q->err.msg, sizeof q->err.msg, fmt, ap);
        q->err.code = code;
        q->err_device = device >= 0 ? device : native_device;
        q->err_native = native;
        snprintf(q->err_op, sizeof q->err_op, "%s", op_name ? op_name : "");
        /* Release: workers that see `failed` also see the message. */
        atomic_store_explicit(&q->failed, 1, memory_order_release);
        if (q->graph_ready)
            sl__graph_skip(&q->graph);
    }
    pthread_mutex_unlock(&q->err_mu);
    return code;
}

int sl__query_fail(struct sl_query *q, const char *op_name, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    query_failv(q, op_name, -1, code, fmt, ap);
    va_end(ap);
    return code;
}

int sl__query_fail_on(struct sl_query *q, const char *op_name, int device, int code,
                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    query_failv(q, op_name, device, code, fmt, ap);
    va_end(ap);
    return code;
}

bool sl__query_past_deadline(struct sl_query *q)
{
    if (q->deadline_ns == 0 || sl__now_ns() < q->deadline_ns)
        return false;
    if (!atomic_load(&q->failed))
        sl__query_fail(q, "", SL_ETIMEDOUT, "the query's deadline of %" PRId64 " ms exceeded "
                       "(option deadline_ms)", q->opts.deadline_ms);
    return true;
}

/* Called once, by the last task of the query's graph. The engine counts the query as
 * running until here, not until somebody waits for it: sl_engine_close waits for this. */
static void on_graph_finish(struct sl__graph *g, void *user)
{
    struct sl_query *q = user;
    (void)g;
    q->end_ns = sl__now_ns();
    q->rc = atomic_load(&q->failed) ? q->err.code : SL_OK;
    if (q->counted)
        sl__engine_query_finished(q->eng);
}

static void free_states(struct sl_query *q)
{
    for (int i = 0; i < q->n_ops; i++) {
        struct sl__opstate *os = &q->ops[i];
        const struct sl_op_def *d = os->op ? os->op->def : NULL;
        if (!d)
            continue;
        for (int s = 0; os->lstates && s < q->n_slots; s++) {
            if (!os->lstates[s])
                continue;
            if (d->fini_local)
                d->fini_local(os->op, os->gstate, os->lstates[s]);
            sl__free(os->lstates[s], d->local_state_bytes);
        }
        sl__free(os->lstates, 0);
        os->lstates = NULL;
        if (os->gstate) {
            if (d->fini_global)
                d->fini_global(os->op, os->gstate);
            sl__free(os->gstate, d->global_state_bytes);
            os->gstate = NULL;
        }
    }
}

static int init_states(struct sl_query *q)
{
    for (int i = 0; i < q->n_ops; i++) {
        struct sl__opstate *os = &q->ops[i];
        const struct sl_op_def *d = os->op->def;
        os->lstates = sl__calloc((size_t)q->n_slots, sizeof *os->lstates);
        os->home_gpu = -1;
        if (!os->lstates)
            return sl__query_fail(q, d->name, SL_ENOMEM, "out of memory");
        if (d->global_state_bytes) {
            os->gstate = sl__calloc(1, d->global_state_bytes);
            if (!os->gstate)
                return sl__query_fail(q, d->name, SL_ENOMEM, "out of memory");
        }
        int rc = d->init_global ? d->init_global(os->op, os->gstate) : SL_OK;
        if (rc < 0) {
            if (!atomic_load(&q->failed))
                sl__query_fail(q, d->name, rc, "%s: init_global failed: %s", d->name,
                               sl_strerror(rc));
            if (d->global_state_bytes == 0)
                os->gstate = NULL;
            return q->err.code;
        }
    }
    return SL_OK;
}

/* The query's operators: the plan's nodes, one collector per output, then the keepers
 * and readers of shared nodes (share.c). */
static int setup_ops(struct sl_query *q)
{
    sl_plan_t *p = q->plan;
    q->n_outputs = p->n_outputs;
    if (q->n_outputs) {
        q->collect_ops = sl__calloc((size_t)q->n_outputs, sizeof *q->collect_ops);
        if (!q->collect_ops)
            return SL_ENOMEM;
    }
    if (sl__count_consumers(q) != SL_OK)
        return SL_ENOMEM;
    int first_share = p->n_nodes + q->n_outputs;
    q->n_ops = first_share + sl__share_count(q);
    q->ops = sl__calloc((size_t)(q->n_ops ? q->n_ops : 1), sizeof *q->ops);
    if (!q->ops)
        return SL_ENOMEM;
    for (int i = 0; i < p->n_nodes; i++)
        q->ops[i].op = p->nodes[i];
    for (int k = 0; k < q->n_outputs; k++) {
        const struct sl__plan_output *o = &p->outputs[k];
        struct sl_op *c = &q->collect_ops[k];
        c->id = -1;
        c->def = o->device ? &sl__collect_device_def : &sl__collect_def;
        c->n_inputs = 1;
        c->inputs = (int *)&o->node; /* points into the plan, lives with it */
        c->schema = p->nodes[o->node]->schema;
        c->plan = p;
        c->output_name = o->name;
        c->rows_estimate = -1;
        q->ops[p->n_nodes + k].op = c;
    }
    return sl__share_setup(q, first_share);
}

/* Adds q to its engine's list (sl_engine_close detaches what is on it); false if the
 * engine is closing. */
static bool register_query(struct sl_query *q)
{
    sl_engine_t *eng = q->eng;
    pthread_mutex_lock(&registry_mu);
    bool open = !eng->closing;
    if (open) {
        q->eng_next = eng->queries;
        if (eng->queries)
            eng->queries->eng_prev = q;
        eng->queries = q;
    }
    pthread_mutex_unlock(&registry_mu);
    return open;
}

int sl_query_create(sl_engine_t *eng, sl_plan_t *plan, sl_query_t **out)
{
    SL__CHECK_ARGS(out);
    *out = NULL;
    if (!eng || !plan)
        return sl__set_last_error(SL_EINVAL, "sl_query_create: NULL engine or plan");
    if (plan->n_nodes == 0)
        return sl__errslot_set(&plan->err, SL_EINVAL, "the plan is empty");
    struct sl_query *q = sl__calloc(1, sizeof *q);
    if (!q)
        return sl__set_last_error(SL_ENOMEM, "out of memory creating a query");
    q->eng = eng;
    if (!register_query(q)) {
        sl__free(q, sizeof *q);
        return sl__set_last_error(SL_ESTATE, "sl_query_create: the engine is being closed");
    }
    q->plan = plan;
    sl__plan_ref(plan);
    sl__options_for_query(eng, plan, &q->opts);
    q->n_slots = sl__sched_num_workers(eng->sched);
    q->err_device = -1;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    pthread_mutex_init(&q->err_mu, NULL);
    pthread_mutex_init(&q->alloc_mu, NULL);
    pthread_mutex_init(&q->replica_mu, NULL);
    sl__graph_init(&q->graph, eng->sched);
    q->graph.on_finish = on_graph_finish;
    q->graph.on_finish_user = q;
    atomic_store(&plan->frozen, 1);
    int rc = setup_ops(q);
    if (rc != SL_OK)
        sl__query_fail(q, "", rc, "out of memory creating a query");
    if (rc == SL_OK)
        rc = sl__query_lower(q);
    if (rc == SL_OK)
        rc = init_states(q);
    if (rc == SL_OK)
        rc = sl__query_build_graph(q);
    q->graph_ready = true;
    if (rc == SL_OK && eng->cfg.trace_path)
        rc = sl_query_trace(q, eng->cfg.trace_path);
    if (rc != SL_OK) {
        /* Keep the message readable after the query is gone. */
        char msg[SL__MSG_MAX];
        snprintf(msg, sizeof msg, "%s", q->err.msg);
        sl_query_destroy(q);
        return sl__errslot_set(&plan->err, rc, "%s", msg);
    }
    *out = q;
    return SL_OK;
}

static void release_all(struct sl_query *q)
{
    /* Node release order does not matter: dependencies hold nodes back. */
    for (int i = 0; i < q->n_ops; i++) {
        if (q->ops[i].finalize)
            sl__node_release(q->ops[i].finalize);
    }
    for (int k = 0; k < q->n_pipes; k++) {
        if (q->pipes[k].start) /* NULL when building failed part-way */
            sl__node_release(q->pipes[k].start);
        if (q->pipes[k].done)
            sl__node_release(q->pipes[k].done);
    }
}

int sl_query_trace(sl_query_t *q, const char *path)
{
    if (!q || !path || !*path)
        return sl__set_last_error(SL_EINVAL, "sl_query_trace: needs a query and a path");
    if (detached(q))
        return sl__set_last_error(SL_ESTATE, "sl_query_trace: %s", closed_msg);
    if (q->state != SL__Q_CREATED)
        return sl__set_last_error(SL_ESTATE, "sl_query_trace: the query has started");
    char *p = sl__strdup(path);
    if (!p)
        return sl__set_last_error(SL_ENOMEM, "out of memory");
    if (!q->trace_on && sl__trace_init(&q->trace, q->n_slots,
                                       sl__sched_num_cpu(q->eng->sched), sl__now_ns()) != SL_OK) {
        sl__free_str(p);
        return sl__set_last_error(SL_ENOMEM, "out of memory");
    }
    sl__free_str(q->trace_path);
    q->trace_path = p;
    q->trace_on = true;
    return SL_OK;
}

int sl_query_start(sl_query_t *q)
{
    if (!q)
        return sl__set_last_error(SL_EINVAL, "sl_query_start: NULL query");
    pthread_mutex_lock(&q->mu);
    if (q->detached || q->state != SL__Q_CREATED) {
        bool detached = q->detached;
        pthread_mutex_unlock(&q->mu);
        return detached ? sl__set_last_error(SL_ESTATE, "sl_query_start: %s", closed_msg)
                        : sl__set_last_error(SL_ESTATE, "the query was already started; "
                                             "create a new query to run the plan again");
    }
    q->state = SL__Q_RUNNING;
    q->counted = true; /* before the graph can finish: it cannot until sealed below */
    pthread_mutex_unlock(&q->mu);
    sl__engine_query_started(q->eng);
    for (int i = 0; q->trace_on && i < q->eng->n_gpus; i++) { /* GPU clocks drift */
        int dev = sl__gpu_ordinal(q->eng->gpus[i]);
        if (dev >= 0 && dev < SL__TRACE_MAX_GPU)
            q->trace.gpu_skew_ns[dev] = sl__gpu_clock_skew(q->eng->gpus[i]);
    }
    q->start_ns = sl__now_ns();
    int64_t ms = q->opts.deadline_ms;
    if (ms > 0) /* saturates: a deadline beyond INT64_MAX ns is none in practice */
        q->deadline_ns = ms > (INT64_MAX - q->start_ns) / 1000000 ? INT64_MAX
                                                                  : q->start_ns + ms * 1000000;
    release_all(q);
    sl__graph_seal(&q->graph);
    return SL_OK;
}

#define QUERY_SPIN_US 300
#define QUERY_SPIN_IDLE_US 20000

/* Waits for the query's graph, reporting progress and enforcing the deadline meanwhile:
 * the waiting thread wakes at the deadline, so a query whose tasks are long still
 * fails then (the workers check it between morsels too). */
static void wait_graph(struct sl_query *q)
{
    /* A query on a GPU finishes on the GPU worker, whose last step wakes this thread:
     * polling briefly first saves that wake-up, tens of microseconds of a query of a few
     * hundred (issue 19's 1-row query). The core yields between looks. */
    if (q->eng->n_gpus > 0 && !q->opts.debug_gpu_handoffs &&
        sl__graph_spin_us(&q->graph, QUERY_SPIN_US))
        return;
    /* Past that, it goes on looking while every CPU worker sleeps (the query's work is on
     * the GPU and the cores idle: the look costs nobody a core), up to 20 ms, after which
     * a wake-up is a small part of the query: a 2^28-row sort on the GPU (9 ms) paid
     * tens of microseconds for it (issue 19). */
    for (int64_t spun = QUERY_SPIN_US;
         q->eng->n_gpus > 0 && !q->opts.debug_gpu_handoffs && !q->progress_cb &&
         spun < QUERY_SPIN_IDLE_US && sl__sched_cpu_idle(q->eng->sched);
         spun += 100)
        if (sl__graph_spin_us(&q->graph, 100))
            return;
    int every = q->progress_cb ? (q->progress_ms > 0 ? q->progress_ms : 100) : 0;
    bool deadline_open = q->deadline_ns != 0;
    struct sl_progress pr = SL_PROGRESS_INIT;
    for (;;) {
        int step = every;
        if (deadline_open) {
            int64_t left = (q->deadline_ns - sl__now_ns()) / 1000000 + 1;
            if (step == 0 || left < step)
                step = left > INT32_MAX ? INT32_MAX : (int)left;
        }
        if (step <= 0) {
            sl__graph_wait(&q->graph);
            return;
        }
        if (sl__graph_wait_ms(&q->graph, step))
            return;
        if (deadline_open && sl__query_past_deadline(q))
            deadline_open = false;
        if (q->progress_cb) {
            progress_now(q, &pr);
            q->progress_cb(q->progress_user, &pr);
        }
    }
}

/* The first thread past the graph's end finishes the query: its trace. The profile is
 * made when first asked for (sl_query_profile_json): its JSON took tens of microseconds
 * per query of a few dozen operators, in every run's time, for callers that never read
 * it. Under q->mu, with the engine attached. */
static void finish_locked(struct sl_query *q)
{
    if (q->state != SL__Q_RUNNING)
        return;
    q->state = SL__Q_DONE;
    if (q->trace_on) {
        char err[256];
        if (sl__trace_write(&q->trace, q->trace_path, err, sizeof err) != SL_OK)
            sl__engine_log(q->eng, 1, "%s", err);
    }
}

int sl_query_wait(sl_query_t *q)
{
    if (!q)
        return sl__set_last_error(SL_EINVAL, "sl_query_wait: NULL query");
    pthread_mutex_lock(&q->mu);
    enum sl__qstate st = q->state;
    bool detached = q->detached;
    if (!detached && st != SL__Q_CREATED)
        q->waiters++; /* sl_query_destroy frees q only after we have left */
    pthread_mutex_unlock(&q->mu);
    if (detached)
        return sl__set_last_error(SL_ESTATE, "sl_query_wait: %s", closed_msg);
    if (st == SL__Q_CREATED)
        return sl__set_last_error(SL_ESTATE, "the query was not started");
    if (st == SL__Q_RUNNING)
        wait_graph(q);
    pthread_mutex_lock(&q->mu);
    finish_locked(q);
    int rc = q->rc;
    char msg[SL__MSG_MAX] = "";
    if (rc != SL_OK)
        snprintf(msg, sizeof msg, "%s", q->err.msg);
    if (--q->waiters == 0)
        pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu); /* q may be freed from here on */
    if (rc != SL_OK)
        sl__set_last_error(rc, "%s", msg);
    return rc;
}

int sl_query_run(sl_query_t *q)
{
    int rc = sl_query_start(q);
    if (rc != SL_OK)
        return rc;
    return sl_query_wait(q);
}

void sl_query_cancel(sl_query_t *q)
{
    if (q)
        sl__query_fail(q, "", SL_ECANCELED, "the query was cancelled");
}

/* A query never started: its nodes drain without running. */
static void drain_unstarted(struct sl_query *q)
{
    if (q->graph_ready) {
        sl__graph_skip(&q->graph);
        if (q->ops && q->pipes)
            release_all(q);
        sl__graph_seal(&q->graph);
        sl__graph_wait(&q->graph);
    } else {
        sl__graph_seal(&q->graph);
    }
}

/* What the query holds of its engine: device memory, operator states (their fini may
 * give device memory back), host blocks charged to the engine's budget. Once. */
static void release_engine_parts(struct sl_query *q)
{
    sl__query_drop_replicas(q);
    sl__query_free_device(q);
    if (q->ops)
        free_states(q);
    struct sl__qalloc *h = q->allocs;
    while (h) {
        struct sl__qalloc *next = h->next;
        sl__engine_release_host(q->eng, h->bytes);
        sl__free(h, sizeof *h + (size_t)h->bytes);
        h = next;
    }
    q->allocs = NULL;
}

static void unlink_query(struct sl_query *q)
{
    if (q->eng_prev)
        q->eng_prev->eng_next = q->eng_next;
    else
        q->eng->queries = q->eng_next;
    if (q->eng_next)
        q->eng_next->eng_prev = q->eng_prev;
    q->eng_prev = q->eng_next = NULL;
}

void sl__engine_stop_queries(sl_engine_t *eng)
{
    pthread_mutex_lock(&registry_mu);
    eng->closing = true;
    for (struct sl_query *q = eng->queries; q; q = q->eng_next) {
        pthread_mutex_lock(&q->mu);
        bool running = q->state == SL__Q_RUNNING && !sl__graph_wait_ms(&q->graph, 0);
        pthread_mutex_unlock(&q->mu);
        if (running)
            sl__query_fail(q, "", SL_ECANCELED, "the engine was closed while the query ran");
    }
    pthread_mutex_unlock(&registry_mu);
    /* Cancelled, their queued tasks complete without running. */
    pthread_mutex_lock(&eng->mu);
    while (eng->running > 0)
        pthread_cond_wait(&eng->cv, &eng->mu);
    pthread_mutex_unlock(&eng->mu);
    pthread_mutex_lock(&registry_mu);
    while (eng->queries) {
        struct sl_query *q = eng->queries;
        pthread_mutex_lock(&q->mu);
        if (q->state == SL__Q_CREATED) {
            drain_unstarted(q);
        } else {
            sl__graph_wait(&q->graph); /* its last task may still be leaving */
            finish_locked(q);
        }
        release_engine_parts(q);
        unlink_query(q);
        q->detached = true;
        q->eng = NULL; /* a stray use fails loudly instead of reading freed memory */
        pthread_mutex_unlock(&q->mu);
    }
    pthread_mutex_unlock(&registry_mu);
}

void sl_query_destroy(sl_query_t *q)
{
    if (!q)
        return;
    pthread_mutex_lock(&q->mu);
    enum sl__qstate st = q->state;
    bool detached = q->detached;
    pthread_mutex_unlock(&q->mu);
    if (!detached && st == SL__Q_RUNNING)
        sl_query_wait(q);
    else if (!detached && st == SL__Q_CREATED)
        drain_unstarted(q);
    /* Other threads' sl_query_wait leave before the memory goes. */
    pthread_mutex_lock(&q->mu);
    while (q->waiters > 0)
        pthread_cond_wait(&q->cv, &q->mu);
    pthread_mutex_unlock(&q->mu);
    pthread_mutex_lock(&registry_mu);
    if (!q->detached)
        unlink_query(q);
    pthread_mutex_unlock(&registry_mu);
    if (!q->detached)
        release_engine_parts(q);
    sl__graph_fini(&q->graph);
    for (int k = 0; q->pipes && k < q->n_pipes; k++)
        sl__free(q->pipes[k].chain, 0);
    sl__free(q->pipes, 0);
    sl__free(q->ops, 0);
    sl__free(q->collect_ops, 0);
    sl__free(q->share_ops, 0);
    sl__free(q->share_at, 0);
    sl__free(q->consumers, 0);
    sl__free(q->cut, 0);
    sl__free(q->profile, 0);
    sl__free(q->explain, 0);
    sl__explain_free(q);
    if (q->trace_on)
        sl__trace_fini(&q->trace);
    sl__free_str(q->trace_path);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->err_mu);
    pthread_mutex_destroy(&q->alloc_mu);
    pthread_mutex_destroy(&q->replica_mu);
    sl__plan_unref(q->plan);
    sl__free(q, sizeof *q);
}

const char *sl_query_errmsg(const sl_query_t *q)
{
    return q ? q->err.msg : "";
}

int sl_query_error(const sl_query_t *q, struct sl_error_info *out)
{
    if (!q)
        return sl__set_last_error(SL_EINVAL, "sl_query_error: NULL query");
    struct sl_error_info info = {
        .size = sizeof info,
        .code = q->err.code,
        .message = q->err.msg,
        .op_name = q->err_op,
        .device = q->err_device,
        .native_code = q->err_native,
    };
    int rc = sl__out_fill(out, &info, sizeof info, "sl_query_error");
    return rc < 0 ? rc : q->err.code;
}

/* Fills the library's full progress struct. */
static void progress_now(const sl_query_t *q, struct sl_progress *p)
{
    struct sl_query *mq = (struct sl_query *)q;
    p->size = sizeof *p;
    p->tasks_done = atomic_load(&mq->graph.completed);
    p->tasks_total = atomic_load(&mq->graph.created);
    p->bytes_done = atomic_load(&mq->bytes_done);
    p->bytes_total = atomic_load(&mq->bytes_total);
    pthread_mutex_lock(&mq->mu);
    p->finished = mq->state == SL__Q_DONE;
    pthread_mutex_unlock(&mq->mu);
}

int sl_query_progress(const sl_query_t *q, struct sl_progress *out)
{
    if (!q)
        return sl__set_last_error(SL_EINVAL, "sl_query_progress: NULL query");
    struct sl_progress p = SL_PROGRESS_INIT;
    progress_now(q, &p);
    return sl__out_fill(out, &p, sizeof p, "sl_query_progress");
}

int sl_query_on_progress(sl_query_t *q, void (*cb)(void *, const struct sl_progress *),
                         void *user, int interval_ms)
{
    if (!q || interval_ms < 0)
        return sl__set_last_error(SL_EINVAL, "sl_query_on_progress: bad arguments");
    q->progress_cb = cb;
    q->progress_user = user;
    q->progress_ms = interval_ms;
    return SL_OK;
}

int sl_query_result(sl_query_t *q, const char *name, sl_table_t **out)
{
    SL__CHECK_ARGS(out);
    *out = NULL;
    if (!q || !name)
        return sl__set_last_error(SL_EINVAL, "sl_query_result: NULL argument");
    pthread_mutex_lock(&q->mu);
    bool done = q->state == SL__Q_DONE, gone = q->detached;
    pthread_mutex_unlock(&q->mu);
    if (gone)
        return sl__set_last_error(SL_ESTATE, "sl_query_result: %s", closed_msg);
    if (!done || q->rc != SL_OK)
        return sl__set_last_error(SL_ESTATE, "the query has not finished successfully");
    for (int k = 0; k < q->n_outputs; k++) {
        struct sl__opstate *os = &q->ops[q->plan->n_nodes + k];
        if (strcmp(os->op->output_name, name) == 0) {
            sl_table_t *t = sl__collect_result(os->gstate);
            sl_table_ref(t);
            *out = t;
            return SL_OK;
        }
    }
    return sl__set_last_error(SL_ENOTFOUND, "the plan has no output named '%s'", name);
}

const char *sl_query_profile_json(sl_query_t *q)
{
    if (!q)
        return "{}";
    /* Made once, under q->mu: what it reads (counters, pipelines, the plan's operators,
     * which the query keeps a reference to) is final once the query is done. */
    pthread_mutex_lock(&q->mu);
    if (!q->profile && q->state == SL__Q_DONE)
        q->profile = sl__query_profile(q);
    const char *s = q->profile ? q->profile : "{}";
    pthread_mutex_unlock(&q->mu);
    return s;
}
