/* The task context that phase implementations see, and running one phase. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engine_option_int.h"
#include "exec_int.h"
#include "gpu_int.h"

const struct sl_impl *sl__phase_impl(const struct sl_phase *ph, enum sl_device_kind kind,
                                     const sl_task_t *t)
{
    if (!ph)
        return NULL;
    for (unsigned i = 0; i < ph->n_impls; i++) {
        const struct sl_impl *im = &ph->impls[i];
        if (im->device == kind && im->run && (!im->can_run || im->can_run(t)))
            return im;
    }
    return NULL;
}

int sl__task_run_phase(sl_task_t *t, const struct sl_phase *ph)
{
    return sl__task_run_impl(t, ph, sl__phase_impl(ph, t->kind, t));
}

int sl__task_run_impl(sl_task_t *t, const struct sl_phase *ph, const struct sl_impl *im)
{
    if (!im)
        return sl__query_fail(t->q, t->os->op->def->name, SL_EUNSUPPORTED,
                              "%s has no %s implementation for this phase",
                              t->os->op->def->name, t->kind == SL_DEVICE_CPU ? "CPU" : "CUDA");
    int64_t t0 = sl__now_ns();
    int rc;
    sl__device_error_clear(); /* a device error noted before this task is not its own */
    for (;;) {
        rc = im->run(t);
        if (atomic_load_explicit(&t->q->failed, memory_order_relaxed))
            break;
        if (rc == SL_BLOCKED) {
            /* count -> allocate -> write: the implementation enqueued work whose result it
             * must read (a count); wait for the task's stream, then call it again. */
            if (t->stream && (rc = sl__gpu_stream_wait(t)) < 0)
                break;
            continue;
        }
        if (rc != SL_HAVE_OUTPUT)
            break;
    }
    atomic_fetch_add_explicit(&t->os->busy_ns, sl__now_ns() - t0, memory_order_relaxed);
    atomic_fetch_add_explicit(&t->os->tasks, 1, memory_order_relaxed);
    atomic_fetch_or_explicit(&t->os->device_mask, t->kind == SL_DEVICE_CPU ? 1 : 2,
                             memory_order_relaxed);
    if (rc < 0 && !atomic_load(&t->q->failed)) {
        if (!sl__err_known(rc)) /* a plugin's -1 or -errno: say so, not "SL_E?" */
            sl__query_fail(t->q, t->os->op->def->name, SL_EINTERNAL, "%s failed with %d, which "
                           "is not a sluice error code", t->os->op->def->name, rc);
        else
            sl__query_fail(t->q, t->os->op->def->name, rc, "%s failed: %s",
                           t->os->op->def->name, sl_strerror(rc));
        rc = sl__err_known(rc) ? rc : SL_EINTERNAL;
    }
    return rc < 0 ? rc : SL_OK;
}

void *sl__task_lstate(sl_task_t *t)
{
    const struct sl_op_def *d = t->os->op->def;
    if (!d->local_state_bytes)
        return NULL;
    int slot = t->worker ? t->worker->id : 0;
    void *ls = t->os->lstates[slot];
    if (ls)
        return ls;
    ls = sl__calloc(1, d->local_state_bytes);
    if (!ls) {
        sl__query_fail(t->q, d->name, SL_ENOMEM, "out of memory for local state");
        return NULL;
    }
    int rc = d->init_local ? d->init_local(t->os->op, t->os->gstate, ls) : SL_OK;
    if (rc < 0) {
        sl__free(ls, d->local_state_bytes);
        if (!atomic_load(&t->q->failed))
            sl__query_fail(t->q, d->name, rc, "%s: init_local failed: %s", d->name,
                           sl_strerror(rc));
        return NULL;
    }
    t->os->lstates[slot] = ls;
    return ls;
}

/* ---------------- public task API ---------------- */

const sl_op_t *sl_task_op(const sl_task_t *t)
{
    if (!t)
        return NULL;
    return t->os->op;
}

void *sl_task_gstate(const sl_task_t *t)
{
    if (!t)
        return NULL;
    return t->os->gstate;
}

void *sl_task_lstate(sl_task_t *t)
{
    if (!t)
        return NULL;
    /* During combine the runtime hands over the local state being combined. */
    if (t->combine_lstate)
        return t->combine_lstate;
    return sl__task_lstate(t);
}

int64_t sl_task_index(const sl_task_t *t)
{
    if (!t)
        return -1;
    return t->index;
}

int64_t sl_task_count(const sl_task_t *t)
{
    if (!t)
        return 0;
    return t->count;
}

int sl_task_port(const sl_task_t *t)
{
    if (!t)
        return -1;
    return t->port;
}

sl_batch_t *sl_task_input(const sl_task_t *t)
{
    if (!t)
        return NULL;
    return t->input;
}

void *sl_task_arg(const sl_task_t *t)
{
    if (!t)
        return NULL;
    return t->arg;
}

enum sl_device_kind sl_task_device_kind(const sl_task_t *t)
{
    if (!t)
        return SL_DEVICE_CPU;
    return t->kind;
}

int sl_task_worker(const sl_task_t *t)
{
    if (!t)
        return -1;
    if (!t->worker)
        return 0;
    return t->worker->gpu >= 0 ? t->worker->gpu : t->worker->id;
}

int64_t sl_task_morsel_rows(const sl_task_t *t)
{
    if (!t)
        return 0;
    /* By where the pipeline runs, not the stage: a host-only source in a pipeline placed on
     * a GPU must cut the morsels its task count was made for (with the GPU's size). */
    if (t->pipe && t->pipe->morsel_rows > 0) /* co-processed: one size on both devices */
        return t->pipe->morsel_rows;
    bool gpu = t->kind == SL_DEVICE_CUDA || t->gpu;
    if (gpu && t->pipe && t->pipe->gpu_morsel_rows > 0) /* fitted to the GPU's budget */
        return t->pipe->gpu_morsel_rows;
    return gpu ? t->q->opts.morsel_rows_gpu : t->q->opts.morsel_rows_cpu;
}

int64_t sl__task_table_morsel_rows(const sl_task_t *t, const sl_table_t *tab)
{
    int64_t m = sl_task_morsel_rows(t);
    if (!t || !tab || t->source_gpu <= 0 || tab->n_batches == 0)
        return m;
    /* Large morsels only where every stage after the source runs on the GPU. A pipeline
     * with a host stage downloads every morsel: CPU-sized ones keep the downloads in
     * cached pinned blocks and overlapped with later kernels (one morsel of the filtered
     * lineitem took a 286 ms download in TPC-H Q21 at SF 10). */
    for (int s = 0; t->pipe && s <= t->pipe->n_chain; s++)
        if (!sl__stage_on_gpu(t->pipe, s))
            return t->q->opts.morsel_rows_cpu;
    for (int64_t i = 0; i < tab->n_batches; i++)
        if (sl_batch_device(tab->batches[i]) != t->source_gpu - 1)
            return m;
    return sl__options_resident_morsel_rows(&t->q->opts);
}

int64_t sl__task_result_morsel_rows(const sl_task_t *t, const sl_batch_t *b)
{
    int64_t m = sl_task_morsel_rows(t);
    const struct sl__pipeline *p = t ? t->pipe : NULL;
    /* A host result that goes straight into an output's collector (no stage between),
     * which only keeps references: its morsels cost nothing but their tasks. A 2^28-row
     * out-of-core sort's result in morsels of 122,880 rows was 2,185 collect tasks, 6.7 ms
     * after its 116 ms finalize (H100, 16 workers); about 4 morsels a CPU worker instead. */
    if (p && b && !p->split && p->morsel_rows == 0 && p->n_chain == 0 && p->sink &&
        p->sink->op->def == &sl__collect_def && sl_batch_device(b) < 0) {
        int64_t per = b->n_rows / (4 * (int64_t)(t->q->eng->n_threads > 0 ? t->q->eng->n_threads : 1));
        return per > m ? per : m;
    }
    /* A co-processed or host-source pipeline has one morsel size of its own (morsel_rows);
     * p->device is where its tasks run, set before source_tasks is asked. */
    if (!p || !b || p->morsel_rows > 0 || p->split || p->device < 0 ||
        sl_batch_device(b) != p->device)
        return m;
    /* Every stage after the source on the GPU: a host stage downloads every morsel, which
     * CPU-sized ones keep overlapped (sl__task_table_morsel_rows). A 2^28-row sort's 16
     * morsels of 16 Mi were 16 GPU tasks in a row: 0.13 ms of a 9.0 ms query (H100). */
    for (int s = 0; s <= p->n_chain; s++)
        if (!sl__stage_on_gpu(p, s))
            return m;
    return sl__options_resident_morsel_rows(&t->q->opts);
}

int sl_task_option_int(const sl_task_t *t, const char *name, int64_t *out)
{
    const struct sl__option *o = sl__option_find(name);
    if (!o)
        return SL_ENOTFOUND;
    if (o->info.type == SL_ENGINE_OPT_FLOAT || o->info.type == SL_ENGINE_OPT_STRING)
        return sl__set_last_error(SL_ETYPE, "option %s is not an integer", name);
    *out = sl__option_int(o, &t->q->opts);
    return SL_OK;
}

int sl_task_option_float(const sl_task_t *t, const char *name, double *out)
{
    const struct sl__option *o = sl__option_find(name);
    if (!o)
        return SL_ENOTFOUND;
    if (o->info.type == SL_ENGINE_OPT_STRING)
        return sl__set_last_error(SL_ETYPE, "option %s is not a number", name);
    *out = sl__option_float(o, &t->q->opts);
    return SL_OK;
}

void *sl_task_stream(const sl_task_t *t)
{
    if (!t)
        return NULL;
    return t->stream;
}

int sl_task_cancelled(const sl_task_t *t)
{
    if (!t)
        return 0;
    return atomic_load_explicit(&t->q->failed, memory_order_relaxed) != 0;
}

int sl_task_fail(sl_task_t *t, int code, const char *fmt, ...)
{
    if (!t)
        return sl__set_last_error(code < 0 ? code : SL_EINVAL, "sl_task_fail: NULL task");
    char msg[SL__MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int device = t->kind == SL_DEVICE_CPU ? 0 : t->gpu ? 1 + sl__gpu_ordinal(t->gpu) : -1;
    /* The operator's name goes first, once: some messages already start with it. */
    const char *name = t->os->op->def->name;
    size_t nl = strlen(name);
    bool named = strncmp(msg, name, nl) == 0 && msg[nl] == ':';
    return sl__query_fail_on(t->q, name, device, code < 0 ? code : SL_EINTERNAL, "%s%s%s",
                             named ? "" : name, named ? "" : ": ", msg);
}

int sl_task_emit(sl_task_t *t, sl_batch_t *b)
{
    SL__CHECK_ARGS(t);
    struct sl__pipeline *p = t->pipe;
    if (!b)
        return sl_task_fail(t, SL_EINVAL, "emitted a NULL batch");
    atomic_fetch_add_explicit(&t->os->rows_out, b->n_rows, memory_order_relaxed);
    if (!p) {
        sl_batch_unref(b);
        return sl_task_fail(t, SL_ESTATE, "emitted a batch outside a pipeline");
    }
    if (atomic_load_explicit(&t->q->failed, memory_order_relaxed)) {
        sl_batch_unref(b);
        return SL_ECANCELED;
    }
    if (t->stage == -1 && t->rows_emitted)
        *t->rows_emitted += b->n_rows;
    sl_task_t sub = *t;
    sub.stage = t->stage + 1;
    sub.arg = NULL;
    const struct sl_phase *ph;
    if (sub.stage < p->n_chain) {
        sub.os = p->chain[sub.stage];
        sub.port = 0;
        ph = sub.os->op->def->execute;
    } else {
        sub.os = p->sink;
        sub.port = p->sink_port;
        ph = sub.os->op->def->sink;
    }
    /* A segment boundary: on a GPU task, stages with a CUDA implementation run on the
     * GPU and the others on the host; the batch moves across as needed. */
    sub.kind = t->gpu && sl__stage_on_gpu(p, sub.stage) ? SL_DEVICE_CUDA : SL_DEVICE_CPU;
    sub.input = b;
    /* can_run is asked once per batch and stage: an answer may count the batch (a GPU
     * join's sink counts what it keeps on the GPU), so asking again after the upload
     * could count it twice and change the answer */
    const struct sl_impl *im = sub.kind == SL_DEVICE_CUDA ? sl__phase_impl(ph, SL_DEVICE_CUDA, &sub)
                                                          : NULL;
    if (sub.kind == SL_DEVICE_CUDA && !im)
        sub.kind = SL_DEVICE_CPU; /* its CUDA implementation cannot run this batch */
    if (sub.kind == SL_DEVICE_CPU && t->gpu && sl__batch_on_device(b)) {
        atomic_fetch_add_explicit(&sub.os->rows_in, b->n_rows, memory_order_relaxed);
        atomic_fetch_add_explicit(&sub.os->batches_in, 1, memory_order_relaxed);
        int drc = sl__gpu_defer_to_host(t, b, &sub, ph);
        sl_batch_unref(b);
        return drc;
    }
    sl_batch_t *moved = NULL;
    int mrc = SL_OK;
    if (sub.kind == SL_DEVICE_CUDA)
        mrc = sl__gpu_batch_to_device(t, b, &moved);
    else if (!t->gpu && sl__batch_on_device(b))
        /* a CPU worker's task over device memory (a GPU-resident table scanned by a
         * pipeline that auto or coprocess placement gave the CPU workers): the host
         * stages need the rows here */
        mrc = sl__gpu_batch_download(t, b, &moved);
    if (mrc < 0) {
        sl_batch_unref(b);
        return mrc;
    }
    if (moved) {
        sl_batch_unref(b);
        b = moved;
    }
    sub.input = b;
    atomic_fetch_add_explicit(&sub.os->rows_in, b->n_rows, memory_order_relaxed);
    atomic_fetch_add_explicit(&sub.os->batches_in, 1, memory_order_relaxed);
    int rc = sl__task_run_impl(&sub, ph, im ? im : sl__phase_impl(ph, sub.kind, &sub));
    sl_batch_unref(b);
    return rc;
}

void *sl_task_alloc(sl_task_t *t, size_t bytes)
{
    if (!t)
        return NULL;
    struct sl_query *q = t->q;
    if (bytes > (size_t)INT64_MAX - sizeof(struct sl__qalloc)) { /* would wrap below */
        sl_task_fail(t, SL_EBUDGET, "sl_task_alloc: %zu bytes exceed any host budget", bytes);
        return NULL;
    }
    if (sl__engine_charge_host(q->eng, (int64_t)bytes) != SL_OK) {
        sl_task_fail(t, SL_EBUDGET, "needs %zu more bytes of host memory, over the engine's "
                     "host budget of %lld bytes", bytes, (long long)q->eng->host_limit);
        return NULL;
    }
    struct sl__qalloc *h = sl__malloc(sizeof *h + bytes);
    if (!h) {
        sl__engine_release_host(q->eng, (int64_t)bytes);
        sl_task_fail(t, SL_ENOMEM, "out of memory allocating %zu bytes", bytes);
        return NULL;
    }
    h->bytes = (int64_t)bytes;
    pthread_mutex_lock(&q->alloc_mu);
    h->prev = NULL;
    h->next = q->allocs;
    if (q->allocs)
        q->allocs->prev = h;
    q->allocs = h;
    pthread_mutex_unlock(&q->alloc_mu);
    return h + 1;
}

void sl_task_free(sl_task_t *t, void *p)
{
    if (!p)
        return;
    struct sl_query *q = t->q;
    struct sl__qalloc *h = (struct sl__qalloc *)p - 1;
    pthread_mutex_lock(&q->alloc_mu);
    if (h->prev)
        h->prev->next = h->next;
    else
        q->allocs = h->next;
    if (h->next)
        h->next->prev = h->prev;
    pthread_mutex_unlock(&q->alloc_mu);
    sl__engine_release_host(q->eng, h->bytes);
    sl__free(h, sizeof *h + (size_t)h->bytes);
}

int sl__task_host_charge(sl_task_t *t, int64_t bytes)
{
    return bytes <= 0 ? SL_OK : sl__engine_charge_host(t->q->eng, bytes);
}

void sl__task_host_release(sl_task_t *t, int64_t bytes)
{
    if (bytes > 0)
        sl__engine_release_host(t->q->eng, bytes);
}

void sl__task_host_hand(sl_task_t *t, struct sl__buf *b)
{
    b->charged = t->q->eng->hb;
    atomic_fetch_add_explicit(&b->charged->refs, 1, memory_order_relaxed);
}

struct spawn_info {
    struct sl__opstate *os;
    const struct sl_phase *work, *then;
    void *arg;
};

/* The task of spawned node n on worker w (sl_task_spawn's work or then); false when the
 * query has failed already (nothing to run). */
static bool spawned_task(struct sl__node *n, struct sl__worker *w, int64_t index,
                         int64_t count, sl_task_t *t)
{
    struct spawn_info *si = n->arg;
    *t = (sl_task_t){
        .q = n->graph->on_finish_user,
        .os = si->os,
        .stage = -1,
        .gnode = n,
        .worker = w,
        .kind = SL_DEVICE_CPU,
        .index = index,
        .count = count,
        .arg = si->arg,
    };
    return !atomic_load_explicit(&t->q->failed, memory_order_relaxed);
}

static void run_spawned(struct sl__node *n, struct sl__worker *w)
{
    const struct spawn_info *si = n->arg;
    sl_task_t t;
    if (!spawned_task(n, w, n->index, n->count, &t))
        return;
    int64_t t0 = sl__now_ns();
    sl__task_run_phase(&t, si->work);
    sl__trace_span(t.q, w, si->os->op->def->name, t0, 0);
}

static void run_then(struct sl__node *n, struct sl__worker *w)
{
    const struct spawn_info *si = n->arg;
    sl_task_t t;
    if (spawned_task(n, w, 0, 1, &t))
        sl__task_run_phase(&t, si->then);
}

int sl_task_spawn(sl_task_t *t, const struct sl_phase *work, int64_t n, void *arg,
                  const struct sl_phase *then)
{
    SL__CHECK_ARGS(t);
    if (!work || n < 0)
        return sl_task_fail(t, SL_EINVAL, "sl_task_spawn: bad arguments");
    if (!t->gnode)
        return sl_task_fail(t, SL_ESTATE, "sl_task_spawn outside a task");
    struct spawn_info *si = sl_task_alloc(t, sizeof *si);
    if (!si)
        return SL_ENOMEM;
    si->os = t->os;
    si->work = work;
    si->then = then;
    si->arg = arg;
    struct sl__graph *g = t->gnode->graph;
    struct sl__node *then_node = NULL;
    if (then) {
        then_node = sl__node_new(g, run_then, si, SL__NODE_CPU);
        if (!then_node)
            return sl_task_fail(t, SL_ENOMEM, "out of memory spawning tasks");
        sl__node_adopt(t->gnode, then_node);
    }
    for (int64_t i = 0; i < n; i++) {
        struct sl__node *c = sl__node_new(g, run_spawned, si, SL__NODE_CPU);
        if (!c || (then_node && sl__node_depend(c, then_node) != SL_OK)) {
            if (then_node)
                sl__node_release(then_node);
            if (c) {
                sl__node_adopt(t->gnode, c);
                sl__node_release(c);
            }
            return sl_task_fail(t, SL_ENOMEM, "out of memory spawning tasks");
        }
        c->index = i;
        c->count = n;
        sl__node_adopt(t->gnode, c);
        sl__node_release(c);
    }
    if (then_node)
        sl__node_release(then_node);
    return SL_OK;
}

sl_batch_t *sl_task_new_batch(sl_task_t *t, const sl_schema_t *schema, int64_t rows)
{
    if (!t)
        return NULL;
    if (!schema || rows < 0) {
        sl_task_fail(t, SL_EINVAL, "sl_task_new_batch: bad arguments");
        return NULL;
    }
    if (t->kind == SL_DEVICE_CUDA && t->gpu)
        return sl__gpu_batch_new(t, schema, rows);
    sl_batch_t *b = sl__batch_new(schema, rows);
    if (!b || sl__batch_alloc_columns(b) != SL_OK) {
        sl_batch_unref(b);
        sl_task_fail(t, SL_ENOMEM, "out of memory for a batch of %lld rows", (long long)rows);
        return NULL;
    }
    /* Host batches count against the engine's host budget until their buffers go. */
    for (int i = 0; i < b->n_cols; i++) {
        if (sl__engine_charge_buf(t->q->eng, b->cols[i].data) != SL_OK) {
            sl_batch_unref(b);
            sl_task_fail(t, SL_EBUDGET, "a batch of %lld rows does not fit the engine's host "
                         "budget of %lld bytes", (long long)rows,
                         (long long)t->q->eng->host_limit);
            return NULL;
        }
    }
    return b;
}

int32_t *sl_task_status(const sl_task_t *t)
{
    if (!t)
        return NULL;
    return t->status;
}

/* The slot of `name` among an operator's named profile entries: taken by the first task
 * that reports the name (compare-and-swap, so concurrent tasks agree); -1 when all are
 * taken by other names. */
static int profile_slot(const char *_Atomic names[SL__OP_PHASES], const char *name)
{
    for (int i = 0; i < SL__OP_PHASES; i++) {
        const char *have = atomic_load(&names[i]);
        if (!have) {
            const char *none = NULL;
            if (atomic_compare_exchange_strong(&names[i], &none, name))
                have = name;
            else
                have = none; /* another task took the slot: maybe for the same name */
        }
        if (have == name || strcmp(have, name) == 0)
            return i;
    }
    return -1;
}

void sl_task_phase_time(sl_task_t *t, const char *name, double ms)
{
    if (!t || !name)
        return;
    int i = profile_slot(t->os->phase_name, name);
    if (i >= 0)
        atomic_fetch_add_explicit(&t->os->phase_ns[i], (int64_t)(ms * 1e6),
                                  memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&t->os->profile_dropped, 1, memory_order_relaxed);
}

void sl_task_profile_value(sl_task_t *t, const char *name, int64_t value)
{
    if (!t || !name)
        return;
    int i = profile_slot(t->os->value_name, name);
    if (i >= 0)
        atomic_store_explicit(&t->os->value[i], value, memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&t->os->profile_dropped, 1, memory_order_relaxed);
}

void sl_task_progress(sl_task_t *t, int64_t rows, int64_t bytes)
{
    if (!t)
        return;
    (void)rows;
    atomic_fetch_add_explicit(&t->q->bytes_done, bytes, memory_order_relaxed);
}
