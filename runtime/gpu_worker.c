/* The GPU worker (see gpu_int.h). Built only with CUDA; gpu_stub.c stands in otherwise.
 *
 * Per GPU: streams h2d, compute and d2h. Per in-flight task (a ring of `depth` slots):
 * a completion event, timing events for the trace, the pinned staging blocks its
 * uploads used (freed when the task retires), and a status word in pinned, mapped host
 * memory that kernels may set to a negative sluice code to fail the query (DESIGN.md:
 * "errors found on the device go to a per-task status word").
 *
 * Ordering: uploads go on h2d; compute waits for them through an event; a task's
 * completion event is recorded on compute (after making compute wait for any d2h work
 * of the task), so when it fires every copy and kernel of the task is done. Device
 * buffers are freed stream-ordered on compute, after all work that used them. */
#include <stdio.h>
#include <string.h>

#include "gpu_worker_int.h"
#include "stage.h"
#include "trace.h"

int sl__gpu_cuda_fail(struct sl_query *q, cudaError_t e, const char *what, const char *file,
                      int line)
{
    char msg[256];
    int rc = sl__cuda_check(e, what, file, line, msg, sizeof msg);
    if (q)
        sl__query_fail(q, "", rc, "%s", msg);
    return rc;
}

#define cuda_fail(q, e, what) GPU_CUDA_FAIL(q, e, what)

/* The pinned result memory of one GPU (option gpu_result_pinned): 0 chooses host_mem / 8,
 * at most 8 GiB, enough to keep a 2^28-row sort's result with room to spare while a
 * tenth of a large host's RAM stays unpinned; logical devices split their GPU's share. */
static int64_t result_pinned_cap(const sl_engine_t *eng, int share)
{
    int64_t cap = eng->cfg.gpu_result_pinned;
    if (cap == 0) {
        cap = eng->host_limit / 8;
        cap = cap < ((int64_t)8 << 30) ? cap : (int64_t)8 << 30;
    }
    return share > 1 && cap > 0 ? cap / share : cap;
}

int sl__gpu_create(struct sl__gpu **out, sl_engine_t *eng, int ordinal, int64_t mem_limit,
                   int share, int depth)
{
    int stage_threads = eng->n_threads / 2 < 6 ? eng->n_threads / 2 : 6;
    *out = NULL;
    struct sl__gpu *g = sl__calloc(1, sizeof *g);
    if (!g)
        return SL_ENOMEM;
    g->ordinal = ordinal;
    g->eng = eng;
    pthread_mutex_init(&g->side_mu, NULL);
    g->depth = depth > 0 ? depth : SL__GPU_DEPTH_DEFAULT;
    int prev = -1, rc;
    if ((rc = sl__cuda_set_device(ordinal, &prev)) < 0)
        goto fail;
    if (mem_limit <= 0) {
        size_t free_b = 0, total_b = 0;
        if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
            rc = sl__set_last_error(SL_EDEVICE, "cannot read free memory of GPU %d", ordinal);
            goto fail;
        }
        mem_limit = (int64_t)(free_b / 10 * 9);
    }
    if (share > 1) /* a logical device: its part of the physical GPU's budget */
        mem_limit /= share;
    if ((rc = sl__dpool_create(&g->pool, ordinal, mem_limit)) < 0 ||
        (rc = sl__pinned_results_create(&g->results, result_pinned_cap(eng, share))) < 0 ||
        (rc = sl__pinned_create(&g->pinned, (int64_t)1 << 30)) < 0 ||
        (rc = sl__pinned_create(&g->spill, (int64_t)1 << 40)) < 0 || /* bound: host budget */
        (sl__pinned_set_mapped(g->spill), 0) ||
        (rc = sl__cuda_streams_create(ordinal, 3, g->s)) < 0 ||
        (rc = sl__cuda_event_create(ordinal, true, &g->zero)) < 0)
        goto fail;
    g->slots = sl__calloc((size_t)g->depth, sizeof *g->slots);
    if (!g->slots) {
        rc = SL_ENOMEM;
        goto fail;
    }
    /* Staging pageable uploads at link speed takes several threads (a core copies about
     * 5-10 GB/s); they sleep when there is nothing to stage. */
    if ((rc = sl__stager_create(&g->stager, stage_threads)) < 0)
        goto fail;
    size_t words = (size_t)g->depth + SL__GPU_SYNC_WORDS;
    cudaError_t e = cudaHostAlloc((void **)&g->h_status_all, sizeof(int32_t) * words,
                                  cudaHostAllocMapped | cudaHostAllocPortable);
    if (e != cudaSuccess) {
        g->h_status_all = NULL;
        rc = cuda_fail(NULL, e, "cudaHostAlloc(status words)");
        goto fail;
    }
    memset(g->h_status_all, 0, sizeof(int32_t) * words);
    void *d_all = NULL;
    if ((e = cudaHostGetDevicePointer(&d_all, g->h_status_all, 0)) != cudaSuccess) {
        rc = cuda_fail(NULL, e, "cudaHostGetDevicePointer");
        goto fail;
    }
    g->d_status_all = d_all;
    for (int i = 0; i < g->depth; i++) {
        struct slot *s = &g->slots[i];
        s->h_status = &g->h_status_all[i]; /* zeroed above */
        s->d_status = g->d_status_all + i;
        if ((rc = sl__cuda_event_create(ordinal, false, &s->kd)) < 0 ||
            (rc = sl__cuda_event_create(ordinal, true, &s->d0)) < 0 ||
            (rc = sl__cuda_event_create(ordinal, true, &s->d1)) < 0 ||
            (rc = sl__cuda_event_create(ordinal, false, &s->done)) < 0 ||
            (rc = sl__cuda_event_create(ordinal, true, &s->k0)) < 0 ||
            (rc = sl__cuda_event_create(ordinal, true, &s->k1)) < 0 ||
            (rc = sl__cuda_event_create(ordinal, true, &s->c0)) < 0 ||
            (rc = sl__cuda_event_create(ordinal, true, &s->c1)) < 0)
            goto fail;
    }
    /* The trace's clock: an event whose completion time is known on the host clock. */
    if ((rc = sl__cuda_event_record(g->zero, g->s[S_COMPUTE])) < 0 ||
        (rc = sl__cuda_stream_sync(g->s[S_COMPUTE])) < 0)
        goto fail;
    g->zero_ns = sl__now_ns();
    sl__cuda_set_device(prev, NULL);
    *out = g;
    return SL_OK;
fail:
    if (prev >= 0)
        sl__cuda_set_device(prev, NULL);
    sl__gpu_destroy(g);
    return rc < 0 ? rc : SL_EDEVICE;
}

void sl__gpu_destroy(struct sl__gpu *g)
{
    if (!g)
        return;
    int prev = -1;
    sl__cuda_set_device(g->ordinal, &prev);
    for (int i = 0; g->s[S_COMPUTE] && i < 3; i++)
        sl__cuda_stream_sync(g->s[i]);
    for (int i = 0; g->slots && i < g->depth; i++) {
        struct slot *s = &g->slots[i];
        cudaEvent_t evs[] = {s->done, s->k0, s->k1, s->c0, s->c1, s->d0, s->d1, s->kd};
        for (int k = 0; k < 8; k++)
            if (evs[k])
                sl__cuda_event_destroy(evs[k]);
        sl__free(s->defer, 0);
    }
    if (g->zero)
        sl__cuda_event_destroy(g->zero);
    sl__gpu_side_streams_destroy(g);
    sl__gpu_timing_events_destroy(g);
    sl__cuda_streams_destroy(3, g->s);
    if (g->h_status_all)
        cudaFreeHost(g->h_status_all);
    sl__pinned_destroy(g->pinned);
    sl__pinned_destroy(g->spill);
    sl__pinned_results_release(g->results); /* results still held keep their blocks */
    sl__dpool_destroy(g->pool);
    if (prev >= 0)
        sl__cuda_set_device(prev, NULL);
    sl__stager_destroy(g->stager);
    sl__free(g->slots, 0);
    pthread_mutex_destroy(&g->side_mu);
    sl__free(g, sizeof *g);
}

int sl__gpu_worker_init(struct sl__worker *w, void *user)
{
    sl_engine_t *eng = user;
    /* GPU workers follow the CPU ones in the engine's GPU order (with logical devices
     * several share one ordinal). */
    int i = w->id - eng->n_threads;
    if (i >= 0 && i < eng->n_gpus && eng->gpus[i] && eng->gpus[i]->ordinal == w->gpu) {
        w->gpu_ctx = eng->gpus[i];
        eng->gpus[i]->worker = w;
    }
    return sl__cuda_set_device(w->gpu, NULL);
}

void sl__gpu_worker_fini(struct sl__worker *w, void *user)
{
    (void)user;
    while (w->gpu_ctx && sl__gpu_worker_poll(w, true) > 0) {
    }
}

static int64_t event_ns(struct sl__gpu *g, cudaEvent_t ev)
{
    float ms = 0;
    if (cudaEventElapsedTime(&ms, g->zero, ev) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    return g->zero_ns + (int64_t)((double)ms * 1e6);
}

int64_t sl__gpu_clock_skew(struct sl__gpu *g)
{
    int prev = -1;
    cudaEvent_t ev = NULL;
    int64_t skew = 0;
    if (sl__cuda_set_device(g->ordinal, &prev) < 0)
        return 0;
    if (sl__cuda_event_create(g->ordinal, true, &ev) == SL_OK &&
        sl__cuda_event_record(ev, cudaStreamPerThread) == SL_OK &&
        SL__CUDA_RESULT(cudaEventSynchronize(ev)) == cudaSuccess) {
        int64_t now = sl__now_ns(), t = event_ns(g, ev);
        skew = t >= 0 ? now - t : 0;
    }
    if (ev)
        sl__cuda_event_destroy(ev);
    sl__cuda_set_device(prev, NULL);
    return skew;
}

static void pinned_buf_release(struct sl__buf *b);

static bool batch_in_result_blocks(const sl_batch_t *b)
{
    for (int i = 0; i < b->n_cols; i++) {
        const struct sl__buf *parts[3] = {b->cols[i].data, b->cols[i].validity, b->cols[i].chars};
        for (int k = 0; k < 3; k++)
            if (parts[k] && !sl__pinned_results_owns(parts[k]))
                return false;
    }
    return true;
}

/* The host batch a download becomes. Blocks of the pinned result pool stay as they are
 * (the result keeps them). Staging blocks are copied into ordinary host memory, so that
 * results do not hold the staging pool; the staging threads share large copies: one
 * thread copying a 200 MB join result took longer than the join (H100 trace, 2026-11-23).
 * Those copies count in the host budget like any host batch (SL_EBUDGET past it). */
static int unpin(struct sl__gpu *g, sl_engine_t *eng, sl_batch_t *pb, sl_batch_t **out)
{
    if (batch_in_result_blocks(pb)) {
        sl_batch_ref(pb);
        *out = pb;
        return SL_OK;
    }
    sl_batch_t *b = sl__batch_new(pb->schema, pb->n_rows);
    if (!b)
        return SL_ENOMEM;
    sl__batch_share_dicts(b, pb);
    for (int i = 0; i < b->n_cols; i++) {
        /* a string column's bytes too: left pointing into the pinned pool, they were
         * overwritten by later downloads once their block went back */
        struct sl__buf *parts[3] = {pb->cols[i].data, pb->cols[i].validity, pb->cols[i].chars};
        struct sl__buf **dst[3] = {&b->cols[i].data, &b->cols[i].validity, &b->cols[i].chars};
        b->cols[i].offset = pb->cols[i].offset;
        b->cols[i].null_count = pb->cols[i].null_count;
        for (int k = 0; k < 3; k++) {
            if (!parts[k])
                continue;
            if (sl__pinned_results_owns(parts[k])) {
                sl__buf_ref(parts[k]);
                *dst[k] = parts[k];
                continue;
            }
            *dst[k] = sl__buf_new(parts[k]->bytes);
            int rc = !*dst[k] ? SL_ENOMEM : sl__engine_charge_buf(eng, *dst[k]);
            if (rc != SL_OK) {
                sl_batch_unref(b);
                return rc;
            }
            sl__stager_copy(g->stager, (*dst[k])->ptr, parts[k]->ptr, (size_t)parts[k]->bytes);
        }
    }
    *out = b;
    return SL_OK;
}

/* Runs the host stages that waited for downloads of this task (on the GPU worker). */
static void run_deferred(struct sl__gpu *g, struct slot *s)
{
    for (int i = 0; i < s->n_defer; i++) {
        struct deferred *d = &s->defer[i];
        sl_batch_unref(d->dev);
        sl_batch_t *hb = NULL;
        int64_t rows = d->pinned->n_rows;
        int rc = SL_OK;
        if (!atomic_load(&d->task.q->failed))
            rc = unpin(g, d->task.q->eng, d->pinned, &hb);
        sl_batch_unref(d->pinned);
        if (rc == SL_EBUDGET)
            sl__query_fail(d->task.q, "", rc, "a batch of %lld rows downloaded from the GPU "
                           "does not fit the engine's host budget of %lld bytes",
                           (long long)rows, (long long)d->task.q->eng->host_limit);
        else if (rc != SL_OK)
            sl__query_fail(d->task.q, "", rc, "out of memory for a download");
        if (!hb)
            continue;
        d->task.input = hb;
        int64_t t0 = sl__now_ns();
        sl__task_run_phase(&d->task, d->phase);
        /* Host work on the GPU worker's thread: a task in the trace, not a gap in it. */
        sl__trace_span(d->task.q, g->worker, d->task.os->op->def->name, t0, hb->n_rows);
        sl_batch_unref(hb);
    }
    s->n_defer = 0;
}

static void retire(struct sl__gpu *g, struct slot *s)
{
    struct sl_query *q = s->q;
    int32_t st = *s->h_status;
    if (st != 0 && q)
        sl__query_fail(q, s->name ? s->name : "", st < 0 ? st : SL_EINTERNAL,
                       "%s: the GPU kernel reported %s (status word %d)",
                       s->name ? s->name : "a GPU task", sl_strerror(st < 0 ? st : SL_EINTERNAL),
                       (int)st);
    if (q && q->trace_on && g->worker) {
        struct sl__trace_event e = {.name = s->name ? s->name : "task", .device = g->ordinal,
                                    .rows = s->rows, .kind = SL__TR_KERNEL, .lane = S_COMPUTE};
        e.start_ns = event_ns(g, s->k0);
        e.end_ns = event_ns(g, s->k1);
        if (e.start_ns >= 0 && e.end_ns >= e.start_ns)
            sl__trace_add(&q->trace, g->worker->id, &e);
        if (s->have_copy) {
            struct sl__trace_event c = {.name = "h2d", .device = g->ordinal,
                                        .bytes = s->bytes_h2d, .kind = SL__TR_COPY_H2D,
                                        .lane = S_H2D};
            c.start_ns = event_ns(g, s->c0);
            c.end_ns = event_ns(g, s->c1);
            if (c.start_ns >= 0 && c.end_ns >= c.start_ns)
                sl__trace_add(&q->trace, g->worker->id, &c);
        }
    }
    if (q && q->trace_on && g->worker && s->have_d2h) {
        struct sl__trace_event c = {.name = "d2h", .device = g->ordinal, .bytes = s->bytes_d2h,
                                    .kind = SL__TR_COPY_D2H, .lane = S_D2H};
        c.start_ns = event_ns(g, s->d0);
        c.end_ns = event_ns(g, s->d1);
        if (c.start_ns >= 0 && c.end_ns >= c.start_ns)
            sl__trace_add(&q->trace, g->worker->id, &c);
    }
    /* The kernel span, read once for the operator's time and the cost history. */
    int64_t k0 = -1, k1 = -1;
    if (s->os || (q && s->signature))
        k0 = event_ns(g, s->k0), k1 = event_ns(g, s->k1);
    if (s->os) {
        if (k0 >= 0 && k1 >= k0)
            atomic_fetch_add(&s->os->kernel_ns, k1 - k0);
        int64_t c0 = s->have_copy ? event_ns(g, s->c0) : -1, c1 = s->have_copy ? event_ns(g, s->c1) : -1;
        if (c0 >= 0 && c1 >= c0)
            atomic_fetch_add(&s->os->h2d_ns, c1 - c0);
        int64_t d0 = s->have_d2h ? event_ns(g, s->d0) : -1, d1 = s->have_d2h ? event_ns(g, s->d1) : -1;
        if (d0 >= 0 && d1 >= d0)
            atomic_fetch_add(&s->os->d2h_ns, d1 - d0);
        atomic_fetch_add(&s->os->bytes_h2d, s->bytes_h2d);
        atomic_fetch_add(&s->os->bytes_d2h, s->bytes_d2h);
    }
    run_deferred(g, s);
    if (q && s->signature) {
        if (k0 >= 0 && k1 >= k0)
            sl__cost_record(q->eng, s->signature, SL_DEVICE_CUDA, s->rows, k1 - k0);
    }
    if (q) {
        atomic_fetch_add(&q->bytes_h2d, s->bytes_h2d);
        atomic_fetch_add(&q->bytes_d2h, s->bytes_d2h);
    }
    for (int i = 0; i < s->n_staging; i++)
        sl__pinned_free(g->pinned, s->staging[i], s->staging_bytes[i]);
    s->n_staging = 0;
    struct sl__node *n = s->node;
    s->node = NULL;
    s->q = NULL;
    s->started = false;
    if (n)
        sl__node_unhold(n);
}

int sl__gpu_worker_poll(struct sl__worker *w, bool block)
{
    struct sl__gpu *g = w->gpu_ctx;
    if (!g)
        return 0;
    while (g->count > 0) {
        struct slot *s = &g->slots[g->head];
        cudaError_t e = block ? cudaEventSynchronize(s->done) : cudaEventQuery(s->done);
        if (e == cudaSuccess && s->have_d2h)
            e = block ? cudaEventSynchronize(s->d1) : cudaEventQuery(s->d1);
        if (e == cudaErrorNotReady)
            break;
        if (e != cudaSuccess)
            cuda_fail(s->q, e, "completing a GPU task");
        retire(g, s);
        g->head = (g->head + 1) % g->depth;
        g->count--;
        block = false; /* wait for one at most, then only take what is done */
    }
    return g->count;
}

int sl__gpu_task_begin(sl_task_t *t)
{
    struct sl__gpu *g = t->worker->gpu_ctx;
    if (g->count == g->depth)
        sl__gpu_worker_poll(t->worker, true);
    int idx = (g->head + g->count) % g->depth;
    struct slot *s = &g->slots[idx];
    memset((void *)s->h_status, 0, sizeof *s->h_status);
    s->q = t->q;
    s->node = t->gnode;
    s->name = t->os->op->def->name;
    s->os = t->os;
    for (int st = -1; t->pipe && st <= t->pipe->n_chain; st++) {
        if (sl__stage_on_gpu(t->pipe, st)) {
            s->os = st < 0 ? t->pipe->source
                    : st < t->pipe->n_chain ? t->pipe->chain[st] : t->pipe->sink;
            s->name = s->os->op->def->name;
            break;
        }
    }
    s->rows = 0;
    s->bytes_h2d = s->bytes_d2h = 0;
    s->have_copy = false;
    s->have_d2h = false;
    s->n_defer = 0;
    s->started = true;
    s->n_staging = 0;
    t->gpu = g;
    t->gpu_slot = idx;
    t->stream = g->s[S_COMPUTE];
    t->status = s->d_status;
    cudaError_t e = SL__CUDA_RESULT(cudaEventRecord(s->k0, g->s[S_COMPUTE]));
    if (e != cudaSuccess)
        return cuda_fail(t->q, e, "cudaEventRecord");
    return SL_OK;
}

void sl__gpu_task_end(sl_task_t *t)
{
    struct sl__gpu *g = t->gpu;
    struct slot *s = &g->slots[t->gpu_slot];
    /* `done` is recorded even when recording k1 failed: the slot retires when `done`
     * completes, and left unrecorded it would complete at once (its last recording),
     * retiring the slot while the task's work still runs (found by the CUDA fault sweep,
     * as compute-sanitizer's "cudaErrorNotReady on cudaEventElapsedTime" at retire). */
    cudaError_t e = SL__CUDA_RESULT(cudaEventRecord(s->k1, g->s[S_COMPUTE]));
    if (e != cudaSuccess)
        cuda_fail(t->q, e, "cudaEventRecord");
    if ((e = SL__CUDA_RESULT(cudaEventRecord(s->done, g->s[S_COMPUTE]))) != cudaSuccess)
        cuda_fail(t->q, e, "cudaEventRecord"); /* a sticky error: nothing left to wait for */
    if (s->have_d2h && (e = SL__CUDA_RESULT(cudaEventRecord(s->d1, g->s[S_D2H]))) != cudaSuccess)
        cuda_fail(t->q, e, "cudaEventRecord");
    s->rows = t->rows_emitted ? *t->rows_emitted : s->rows;
    s->signature = t->pipe ? t->pipe->signature : NULL;
    sl__node_hold(t->gnode);
    g->count++;
}

static void device_buf_release(struct sl__buf *b)
{
    struct sl__gpu *g = b->owner;
    sl__gpu_held_add(g, b->gpu_held, -b->bytes);
    sl__dpool_free_async(g->pool, b->ptr, b->bytes, g->s[S_COMPUTE]);
}

struct sl__buf *sl__gpu_device_buf(struct sl__gpu *g, sl_task_t *t, int64_t bytes, cudaStream_t st)
{
    void *d = NULL;
    int rc = sl__gpu_alloc_evicting(g, t->q, bytes, st, &d);
    const char *op = t->os ? t->os->op->def->name : "";
    if (rc < 0) {
        if (t->q) { /* else (a table copied to a GPU) the message stays in sl_last_errmsg */
            char held_text[256];
            sl__gpu_held_text(t->q, g, rc, held_text, sizeof held_text);
            sl__query_fail(t->q, op, rc, "%s: %s%s", op, sl_last_errmsg(), held_text);
        }
        return NULL;
    }
    struct sl__buf *b = sl__buf_wrap(d, bytes, SL__MEM_DEVICE, device_buf_release, g);
    if (!b) {
        sl__dpool_free_async(g->pool, d, bytes, st);
        if (t->q)
            sl__query_fail(t->q, "", SL_ENOMEM, "out of memory");
        else
            sl__set_last_error(SL_ENOMEM, "out of memory");
        return NULL;
    }
    b->device = g->ordinal;
    b->gpu_held = (uint8_t)sl__gpu_held_slot(t);
    sl__gpu_held_add(g, b->gpu_held, bytes);
    return b;
}

bool sl__batch_on_device(const sl_batch_t *b)
{
    for (int i = 0; i < b->n_cols; i++)
        if (b->cols[i].data && b->cols[i].data->kind != SL__MEM_DEVICE)
            return false;
    return b->n_cols > 0;
}

sl_batch_t *sl__gpu_batch_new(sl_task_t *t, const sl_schema_t *schema, int64_t rows)
{
    struct sl__gpu *g = t->gpu;
    sl_batch_t *b = sl__batch_new(schema, rows);
    if (!b) {
        sl__query_fail(t->q, "", SL_ENOMEM, "out of memory");
        return NULL;
    }
    for (int i = 0; i < b->n_cols; i++) {
        /* strings: rows + 1 offsets; the producer attaches their bytes once it knows them */
        b->cols[i].data = sl__gpu_device_buf(g, t, sl__col_data_bytes(b->cols[i].type, rows),
                                     g->s[S_COMPUTE]);
        if (!b->cols[i].data) {
            sl_batch_unref(b);
            return NULL;
        }
    }
    return b;
}

/* Copies one host column range to the device: pinned sources go directly, pageable ones
 * are staged through a pinned block (this thread copies, the copy engine moves). */
static int upload(struct sl__gpu *g, sl_task_t *t, struct slot *s, const void *src,
                  int64_t bytes, void *dst, enum sl__mem_kind kind)
{
    cudaError_t e;
    const void *from = src;
    if (kind != SL__MEM_PINNED && bytes > 0) {
        void *h = NULL;
        int rc = s->n_staging < MAX_STAGING ? sl__pinned_alloc(g->pinned, bytes, &h) : SL_ENOSPC;
        if (rc < 0) {
            /* No staging room: let the driver stage it (slower, still correct). */
            e = SL__CUDA_RESULT(
                cudaMemcpyAsync(dst, src, (size_t)bytes, cudaMemcpyHostToDevice, g->s[S_H2D]));
            return e == cudaSuccess ? SL_OK : cuda_fail(t->q, e, "cudaMemcpyAsync(h2d)");
        }
        sl__stager_copy(g->stager, h, src, (size_t)bytes);
        s->staging[s->n_staging] = h;
        s->staging_bytes[s->n_staging++] = bytes;
        from = h;
    }
    /* The copy span starts when the copy engine gets work, not while the host stages. */
    if (!s->copy_started) {
        if ((e = SL__CUDA_RESULT(cudaEventRecord(s->c0, g->s[S_H2D]))) != cudaSuccess)
            return cuda_fail(t->q, e, "cudaEventRecord");
        s->copy_started = true;
    }
    e = SL__CUDA_RESULT(
        cudaMemcpyAsync(dst, from, (size_t)bytes, cudaMemcpyHostToDevice, g->s[S_H2D]));
    if (e != cudaSuccess)
        return cuda_fail(t->q, e, "cudaMemcpyAsync(h2d)");
    s->bytes_h2d += bytes;
    return SL_OK;
}

/* A narrow upload waiting to be widened (struct sl__narrow, narrow.c): its values in
 * scratch device memory, to be written to `dst` in their own width. */
struct widen {
    const struct sl__narrow *nw;
    void *d_tmp;
    int64_t rows;
    void *dst;
    struct sl__buf *host, *dev;      /* a whole host buffer: its replica, once widened */
};

/* Values [first, first + rows) of a host buffer with narrow copy nw: the narrow bytes
 * cross the link into scratch memory (*wd), which widen_all writes out in their own width
 * once the compute stream has waited for the upload, so the copy stream moves the next
 * column meanwhile. 1 when queued; 0 when the scratch memory does not fit, to move the
 * wide values instead. */
static int upload_narrow(struct sl__gpu *g, sl_task_t *t, struct slot *s,
                         const struct sl__narrow *nw, int64_t first, int64_t rows, void *dst,
                         struct widen *wd)
{
    int64_t bytes = rows * nw->width;
    void *d_tmp = NULL;
    if (rows <= 0 || sl__dpool_alloc_async(g->pool, bytes, g->s[S_H2D], &d_tmp) < 0)
        return 0;
    const char *src = (const char *)nw->buf->ptr + (first - nw->first) * nw->width;
    int rc = upload(g, t, s, src, bytes, d_tmp, nw->buf->kind);
    if (rc < 0) {
        sl__dpool_free_async(g->pool, d_tmp, bytes, g->s[S_H2D]);
        return rc;
    }
    *wd = (struct widen){nw, d_tmp, rows, dst, NULL, NULL};
    return 1;
}

/* Widens the n queued narrow uploads on stream st (the compute stream, after the upload;
 * the copy stream when they are dropped after a failure) and frees their scratch there;
 * the first launch error, if any. */
static cudaError_t widen_all(struct sl__gpu *g, struct widen *wd, int n, cudaStream_t st,
                             bool launch)
{
    cudaError_t first = cudaSuccess;
    for (int k = 0; k < n; k++) {
        const struct sl__narrow *nw = wd[k].nw;
        if (launch && first == cudaSuccess)
            first = SL__CUDA_RESULT(sl__cuda_widen(wd[k].dst, nw->wide, wd[k].d_tmp, nw->width,
                                                   nw->base, nw->step, wd[k].rows, st));
        sl__dpool_free_async(g->pool, wd[k].d_tmp, wd[k].rows * nw->width, st);
    }
    return first;
}

/* Rows [first, first + rows) of host string column c into d on g: the offsets (rebased
 * to 0 through a host copy when they do not start there) and the bytes they span. */
static int upload_strings(struct sl__gpu *g, sl_task_t *t, struct slot *s,
                          const struct sl__col *c, int64_t first, int64_t rows, struct sl__col *d)
{
    int64_t lo = 0, hi = 0, ow = c->type == SL_TYPE_UTF8 ? 4 : 8, ob = (rows + 1) * ow;
    int rc = sl__gpu_str_range(t->q, c, first, rows, false, NULL, &lo, &hi);
    if (rc < 0)
        return rc;
    const char *off = (const char *)c->data->ptr + ow * first;
    void *tmp = NULL;
    if (lo != 0) {
        if (!(tmp = sl__malloc((size_t)ob)))
            return sl__query_fail(t->q, "", SL_ENOMEM, "out of memory");
        memcpy(tmp, off, (size_t)ob);
        sl__gpu_str_rebase(tmp, c->type, rows + 1, lo);
        off = tmp;
    }
    /* upload() has staged a pageable source before it returns: tmp may go then */
    d->data = sl__gpu_device_buf(g, t, ob, g->s[S_H2D]);
    rc = d->data ? upload(g, t, s, off, ob, d->data->ptr, tmp ? SL__MEM_HOST : c->data->kind)
                 : SL_ENOMEM;
    sl__free(tmp, (size_t)ob);
    if (rc >= 0 && hi > lo) {
        d->chars = sl__gpu_device_buf(g, t, hi - lo, g->s[S_H2D]);
        rc = d->chars ? upload(g, t, s, (const char *)c->chars->ptr + lo, hi - lo, d->chars->ptr,
                               c->chars->kind)
                      : SL_ENOMEM;
    }
    return rc;
}

/* The copies on g of the n host buffers (r[i] for host[i]; NULL: none, or host[i] NULL),
 * in one pass over q's replicas under its lock. */
static void replicas_find(struct sl_query *q, struct sl__gpu *g, struct sl__buf *const *host,
                          int n, struct sl__replica **r)
{
    for (int i = 0; i < n; i++)
        r[i] = NULL;
    pthread_mutex_lock(&q->replica_mu);
    for (int j = 0; j < q->n_replicas; j++) {
        struct sl__replica *x = q->replicas[j];
        for (int i = 0; i < n && x->g == g; i++)
            if (!r[i] && host[i] == x->host)
                r[i] = x;
    }
    pthread_mutex_unlock(&q->replica_mu);
}

static struct sl__replica *replica_find(struct sl_query *q, struct sl__buf *host,
                                        struct sl__gpu *g)
{
    struct sl__replica *r;
    replicas_find(q, g, &host, 1, &r);
    return r;
}

/* Remembers that `dev` is a copy of `host` on g, complete once the work queued so far
 * on stream st has run (the copy stream's upload; the compute stream's widening). */
static int replica_add(sl_task_t *t, struct sl__buf *host, struct sl__buf *dev, struct sl__gpu *g,
                       cudaStream_t st)
{
    struct sl_query *q = t->q;
    struct sl__replica *r = sl__calloc(1, sizeof *r);
    if (!r)
        return sl__query_fail(q, "", SL_ENOMEM, "out of memory");
    int rc = sl__cuda_event_create(g->ordinal, false, &r->ready);
    cudaError_t e = rc < 0 ? cudaSuccess : SL__CUDA_RESULT(cudaEventRecord(r->ready, st));
    if (rc < 0 || e != cudaSuccess) {
        if (r->ready)
            sl__cuda_event_destroy(r->ready);
        sl__free(r, sizeof *r);
        return rc < 0 ? sl__query_fail(q, "", rc, "%s", sl_last_errmsg())
                      : cuda_fail(q, e, "cudaEventRecord");
    }
    pthread_mutex_lock(&q->replica_mu);
    if (q->n_replicas == q->cap_replicas) {
        int cap = q->cap_replicas ? q->cap_replicas * 2 : 16;
        struct sl__replica **nv = sl__realloc(q->replicas, (size_t)q->cap_replicas * sizeof *nv,
                                              (size_t)cap * sizeof *nv);
        if (!nv) {
            pthread_mutex_unlock(&q->replica_mu);
            sl__cuda_event_destroy(r->ready);
            sl__free(r, sizeof *r);
            return sl__query_fail(q, "", SL_ENOMEM, "out of memory");
        }
        q->replicas = nv;
        q->cap_replicas = cap;
    }
    sl__buf_ref(host);
    sl__buf_ref(dev);
    r->host = host;
    r->dev = dev;
    r->g = g;
    q->replicas[q->n_replicas++] = r;
    pthread_mutex_unlock(&q->replica_mu);
    return SL_OK;
}

static void replica_drop(struct sl__replica *r)
{
    /* prev stays -1 when reading it failed: then there is nothing to restore, and
     * setting device -1 would be a second error (found by the CUDA fault sweep). The
     * frees below name their pool, stream and event: they need no current device. */
    int prev = -1;
    sl__cuda_set_device(r->g->ordinal, &prev);
    /* A copy sent ahead (upload_ahead) may still be on its way, on the copy stream: the
     * device memory and the pinned source go only once it has arrived (at once, almost
     * always). A failure leaves nothing to wait for (a sticky error). */
    int rc;
    SL__CUDA_CALL(rc, NULL, cudaEventSynchronize(r->ready));
    (void)rc;
    sl__buf_unref(r->dev); /* stream-ordered free on the GPU's compute stream */
    sl__cuda_event_destroy(r->ready);
    if (prev >= 0)
        sl__cuda_set_device(prev, NULL);
    sl__buf_unref(r->host);
    sl__free(r, sizeof *r);
}

int sl__gpu_evict_replicas(struct sl_query *q, struct sl__gpu *g)
{
    struct sl__replica *gone[64];
    int n_gone = 0, kept = 0;
    pthread_mutex_lock(&q->replica_mu);
    for (int i = 0; i < q->n_replicas; i++) {
        struct sl__replica *r = q->replicas[i];
        if (r->g == g && atomic_load(&r->dev->refs) == 1 && n_gone < 64)
            gone[n_gone++] = r;
        else
            q->replicas[kept++] = r;
    }
    q->n_replicas = kept;
    pthread_mutex_unlock(&q->replica_mu);
    for (int i = 0; i < n_gone; i++)
        replica_drop(gone[i]);
    return n_gone;
}

int sl__gpu_alloc_evicting(struct sl__gpu *g, struct sl_query *q, int64_t bytes,
                           cudaStream_t st, void **out)
{
    int rc = sl__dpool_alloc_async(g->pool, bytes, st, out);
    while (rc == SL_EBUDGET && q && sl__gpu_evict_replicas(q, g) > 0)
        rc = sl__dpool_alloc_async(g->pool, bytes, st, out);
    return rc;
}

void sl__query_drop_replicas(struct sl_query *q)
{
    for (int i = 0; i < q->n_replicas; i++)
        replica_drop(q->replicas[i]);
    sl__free(q->replicas, 0);
    q->replicas = NULL;
    q->n_replicas = q->cap_replicas = 0;
}

/* Waits for the copies already queued on stream `copies` into buffers about to be
 * dropped after a copy failed part way. Those buffers are freed at once (pinned ones back
 * to the cache) or in the compute stream's order (device ones), neither of which waits
 * for the copy stream (of the batch's direction): wait here, so that no copy writes into
 * memory that has been handed out again. The query has failed already; a failure of this
 * wait adds nothing to report (a sticky error is noted by the call that made it). */
static void wait_copies(cudaStream_t copies)
{
    int rc;
    SL__CUDA_CALL(rc, NULL, cudaStreamSynchronize(copies));
    (void)rc;
}

/* The buffer of column i in the table's next batch when column i of src is a whole
 * batch's column with a narrow copy linked to it (struct sl__narrow, next), else NULL:
 * then the next task reads a whole one too. */
static struct sl__buf *next_narrow(const sl_batch_t *src, int i)
{
    const struct sl__col *c = &src->cols[i];
    const struct sl__buf *b = c->data;
    bool whole = b && b->kind != SL__MEM_DEVICE && !c->validity && c->offset == 0 &&
                 sl__narrow_whole(b) && src->n_rows == b->narrow->n;
    struct sl__buf *nb = whole ? b->narrow->next : NULL;
    return nb && nb->narrow ? nb : NULL;
}

/* Uploads and widens host buffer nb through its narrow copy on the copy stream, as a
 * replica on g (upload_ahead). Skipped when g has no room for it. */
static int send_ahead(struct sl__gpu *g, sl_task_t *t, struct slot *s, struct sl__buf *nb)
{
    const struct sl__narrow *nn = nb->narrow;
    void *d = NULL;
    struct widen wd;
    if (sl__dpool_alloc_async(g->pool, nb->bytes, g->s[S_H2D], &d) < 0)
        return SL_OK;
    int rc = upload_narrow(g, t, s, nn, nn->first, nn->n, d, &wd);
    if (rc <= 0) { /* 0: no room for the narrow bytes */
        sl__dpool_free_async(g->pool, d, nb->bytes, g->s[S_H2D]);
        return rc;
    }
    /* widened on the copy stream: the replica is complete when the copies are */
    cudaError_t e = widen_all(g, &wd, 1, g->s[S_H2D], true);
    struct sl__buf *dev =
        e == cudaSuccess ? sl__buf_wrap(d, nb->bytes, SL__MEM_DEVICE, device_buf_release, g)
                         : NULL;
    if (!dev) {
        sl__dpool_free_async(g->pool, d, nb->bytes, g->s[S_H2D]);
        return e != cudaSuccess ? cuda_fail(t->q, e, "widening a narrow upload (sl__cuda_widen)")
                                : sl__query_fail(t->q, "", SL_ENOMEM, "out of memory");
    }
    dev->device = g->ordinal;
    sl__gpu_held_add(g, 0, nb->bytes); /* a replica: no operator's (gpu_held.c) */
    rc = replica_add(t, nb, dev, g, g->s[S_H2D]);
    if (rc < 0) /* dev goes in the compute stream's order */
        wait_copies(g->s[S_H2D]);
    sl__buf_unref(dev); /* the replica holds it */
    return rc < 0 ? rc : SL_OK;
}

/* Sends the next batch's copies of the narrow columns of src that have one (nw->next)
 * ahead, each as a replica of that column, complete once widened on the copy stream: the
 * next task of the scan finds it there and waits for it instead of uploading, so its
 * copy runs while this task computes (a GPU task's operators wait for their results, a
 * filter for its count: the worker then enqueues nothing, and each task's upload waited
 * for the previous task's kernels). Best effort: no room on the GPU, or a copy there or
 * on its way already, and the column is skipped. After this task's own uploads, so its
 * kernels do not wait for these. The replicas are looked up once for up to 16 columns. */
static int upload_ahead(struct sl__gpu *g, sl_task_t *t, struct slot *s, const sl_batch_t *src)
{
    for (int i0 = 0; i0 < src->n_cols; i0 += 16) {
        int m = src->n_cols - i0 < 16 ? src->n_cols - i0 : 16, rc;
        struct sl__buf *next[16];
        struct sl__replica *have[16];
        for (int k = 0; k < m; k++) { /* columns sharing a buffer send it once */
            next[k] = next_narrow(src, i0 + k);
            for (int j = 0; j < k && next[k]; j++)
                next[k] = next[j] == next[k] ? NULL : next[k];
        }
        replicas_find(t->q, g, next, m, have);
        for (int k = 0; k < m; k++)
            if (next[k] && !have[k] && (rc = send_ahead(g, t, s, next[k])) < 0)
                return rc;
    }
    return SL_OK;
}

/* Drops a batch whose copy on stream `copies` failed part way (wait_copies). */
static void drop_partial(sl_batch_t *b, cudaStream_t copies)
{
    wait_copies(copies);
    sl_batch_unref(b);
}

/* drop_partial for a batch with narrow uploads queued: their scratch goes back after the
 * copies into it (nothing widened). */
static void drop_widen(struct sl__gpu *g, sl_batch_t *b, struct widen *wd, int n_wd,
                       struct widen *wd_local)
{
    int n_cols = b->n_cols;
    drop_partial(b, g->s[S_H2D]);
    widen_all(g, wd, n_wd, g->s[S_H2D], false);
    if (wd != wd_local)
        sl__free(wd, (size_t)n_cols * sizeof *wd);
}

int sl__gpu_batch_to_device(sl_task_t *t, sl_batch_t *src, sl_batch_t **out)
{
    struct sl__gpu *g = t->gpu;
    struct slot *s = &g->slots[t->gpu_slot];
    *out = NULL;
    if (sl__batch_on_device(src)) {
        sl_batch_ref(src);
        *out = src;
        return SL_OK;
    }
    sl_batch_t *b = sl__batch_new(src->schema, src->n_rows);
    if (!b)
        return sl__query_fail(t->q, "", SL_ENOMEM, "out of memory");
    sl__batch_share_dicts(b, src); /* codes move; dictionaries stay in host memory */
    cudaError_t e;
    s->copy_started = false;
    struct widen wd_local[16], *wd = wd_local;
    int n_wd = 0;
    if (b->n_cols > 16 && !(wd = sl__malloc((size_t)b->n_cols * sizeof *wd))) {
        sl_batch_unref(b);
        return sl__query_fail(t->q, "", SL_ENOMEM, "out of memory");
    }
    for (int i = 0; i < b->n_cols; i++) {
        /* A column with a bitmap moves from the byte holding its first bit, so values and
         * bitmap keep one shared offset (< 8) on the device; others move exactly. */
        const struct sl__col *c = &src->cols[i];
        int64_t w = (int64_t)sl_type_width(c->type);
        int64_t lead = c->validity ? c->offset % 8 : 0, rows = src->n_rows + lead;
        b->cols[i].null_count = c->null_count;
        b->cols[i].offset = lead;
        /* A column that is a whole host buffer may already have a copy on this GPU. Only
         * buffers someone else also holds (a table's) are worth remembering: a morsel a
         * source just made is used once, and remembering it would keep it alive. */
        bool whole = w > 0 && !c->validity && c->offset == 0 && rows * w == c->data->bytes &&
                     atomic_load(&c->data->refs) > 1;
        if (w == 0) { /* strings: offsets and bytes (upload_strings); no replicas */
            if (c->data && upload_strings(g, t, s, c, c->offset - lead, rows, &b->cols[i]) < 0)
                goto fail;
        }
        struct sl__replica *r = whole ? replica_find(t->q, c->data, g) : NULL;
        if (r) {
            sl__buf_ref(r->dev);
            b->cols[i].data = r->dev;
            e = SL__CUDA_RESULT(cudaStreamWaitEvent(g->s[S_COMPUTE], r->ready, 0));
            if (e != cudaSuccess) {
                drop_widen(g, b, wd, n_wd, wd_local);
                return cuda_fail(t->q, e, "waiting for a replica");
            }
            atomic_fetch_add(&t->q->replica_hits, 1);
            continue;
        }
        if (w > 0 && !(b->cols[i].data = sl__gpu_device_buf(g, t, rows * w, g->s[S_H2D])))
            goto fail;
        /* A pinned table's column moves in its narrow form when it has one (narrow.c). */
        const struct sl__narrow *nw =
            w > 0 && !t->q->opts.debug_gpu_wide_upload
                ? sl__narrow_of(c->data, (int)w, c->offset - lead, rows)
                : NULL;
        int narrowed = nw ? upload_narrow(g, t, s, nw, c->offset - lead, rows,
                                          b->cols[i].data->ptr, &wd[n_wd])
                          : 0;
        if (narrowed < 0)
            goto fail;
        if (narrowed > 0 && whole) /* its replica is complete once widened */
            wd[n_wd].host = c->data, wd[n_wd].dev = b->cols[i].data;
        n_wd += narrowed > 0;
        if (w > 0 && !narrowed &&
            upload(g, t, s, (const char *)c->data->ptr + (c->offset - lead) * w, rows * w,
                   b->cols[i].data->ptr, c->data->kind) < 0)
            goto fail;
        if (whole && !narrowed && replica_add(t, c->data, b->cols[i].data, g, g->s[S_H2D]) < 0)
            goto fail;
        if (c->validity) {
            int64_t bytes = (rows + 7) / 8;
            b->cols[i].validity = sl__gpu_device_buf(g, t, bytes, g->s[S_H2D]);
            if (!b->cols[i].validity ||
                upload(g, t, s, (const uint8_t *)c->validity->ptr + c->offset / 8, bytes,
                       b->cols[i].validity->ptr, c->validity->kind) < 0)
                goto fail;
        }
    }
    if (!s->copy_started &&
        (e = SL__CUDA_RESULT(cudaEventRecord(s->c0, g->s[S_H2D]))) != cudaSuccess) {
        drop_widen(g, b, wd, n_wd, wd_local);
        return cuda_fail(t->q, e, "cudaEventRecord");
    }
    if ((e = SL__CUDA_RESULT(cudaEventRecord(s->c1, g->s[S_H2D]))) != cudaSuccess ||
        (e = SL__CUDA_RESULT(cudaStreamWaitEvent(g->s[S_COMPUTE], s->c1, 0))) != cudaSuccess ||
        (e = SL__CUDA_RESULT(cudaEventRecord(s->k0, g->s[S_COMPUTE]))) != cudaSuccess) {
        drop_widen(g, b, wd, n_wd, wd_local);
        return cuda_fail(t->q, e, "ordering the upload");
    }
    /* The narrow columns widen on the compute stream, the task's first kernels. */
    e = widen_all(g, wd, n_wd, g->s[S_COMPUTE], true);
    int rc = SL_OK;
    for (int k = 0; k < n_wd && e == cudaSuccess && rc == SL_OK; k++)
        if (wd[k].host)
            rc = replica_add(t, wd[k].host, wd[k].dev, g, g->s[S_COMPUTE]);
    if (wd != wd_local)
        sl__free(wd, (size_t)b->n_cols * sizeof *wd);
    s->have_copy = true;
    if (e != cudaSuccess || rc < 0) {
        sl_batch_unref(b); /* its buffers free in the compute stream's order */
        return rc < 0 ? rc : cuda_fail(t->q, e, "widening a narrow upload (sl__cuda_widen)");
    }
    if (!t->q->opts.debug_gpu_wide_upload && !t->q->opts.debug_gpu_no_upload_ahead &&
        (rc = upload_ahead(g, t, s, src)) < 0) {
        sl_batch_unref(b);
        return rc;
    }
    *out = b;
    return SL_OK;
fail:
    drop_widen(g, b, wd, n_wd, wd_local);
    return t->q->err.code ? t->q->err.code : SL_EDEVICE;
}

static void pinned_buf_release(struct sl__buf *b)
{
    struct sl__gpu *g = b->owner;
    sl__pinned_free(g->pinned, b->ptr, b->bytes);
}

int sl__gpu_stream_wait(sl_task_t *t)
{
    cudaError_t e = SL__CUDA_RESULT(cudaStreamSynchronize((cudaStream_t)t->stream));
    return e == cudaSuccess ? SL_OK : cuda_fail(t->q, e, "waiting for a blocked task");
}

int sl__gpu_result_buf(struct sl__gpu *g, sl_engine_t *eng, int64_t bytes, struct sl__buf **out)
{
    struct sl__buf *rb = NULL;
    int rc = sl__pinned_results_buf(g->results, bytes, &rb);
    if (rc < 0)
        return rc;
    if (sl__engine_charge_buf(eng, rb) != SL_OK) {
        sl__buf_unref(rb); /* back to the pool */
        return SL_EBUDGET;
    }
    *out = rb;
    return SL_OK;
}

/* A host buffer for `bytes` downloaded from g: a block of the pinned result pool, which
 * the result keeps and which counts in the host budget like any result buffer; or, when
 * that pool is off or full or the budget is spent, a staging block that unpin() copies
 * out of once the download is done. */
static int download_buf(struct sl__gpu *g, sl_task_t *t, int64_t bytes, struct sl__buf **out)
{
    bytes = bytes > 0 ? bytes : 1;
    int rc = sl__gpu_result_buf(g, t->q->eng, bytes, out);
    if (rc == SL_OK)
        return SL_OK;
    if (rc != SL_EBUDGET)
        return sl__query_fail(t->q, "", rc, "pinned result memory: %s", sl_last_errmsg());
    void *h = NULL; /* the pool is off or full, or the budget spent: copy out instead */
    rc = sl__pinned_alloc(g->pinned, bytes, &h);
    if (rc < 0)
        return sl__query_fail(t->q, "", rc, "%s", sl_last_errmsg());
    if (!(*out = sl__buf_wrap(h, bytes, SL__MEM_PINNED, pinned_buf_release, g))) {
        sl__pinned_free(g->pinned, h, bytes);
        return sl__query_fail(t->q, "", SL_ENOMEM, "out of memory");
    }
    return SL_OK;
}

/* Rows [first, first + rows) of device string column c into pinned buffers of d, waiting
 * for them: the offsets must be rebased on the host once they are there, and their byte
 * range read first (the work that made the column is waited for: this costs the overlap
 * of downloads with later tasks, for batches with strings only). */
static int download_strings(struct sl__gpu *g, sl_task_t *t, struct slot *s,
                            const struct sl__col *c, int64_t first, int64_t rows,
                            struct sl__col *d)
{
    int64_t lo = 0, hi = 0, ow = c->type == SL_TYPE_UTF8 ? 4 : 8, ob = (rows + 1) * ow;
    int rc = sl__gpu_str_range(t->q, c, first, rows, true, g->s[S_D2H], &lo, &hi);
    if (rc >= 0)
        rc = download_buf(g, t, ob, &d->data);
    if (rc >= 0 && hi > lo)
        rc = download_buf(g, t, hi - lo, &d->chars);
    if (rc < 0)
        return rc;
    cudaError_t e = SL__CUDA_RESULT(cudaMemcpyAsync(d->data->ptr,
                                                    (const char *)c->data->ptr + first * ow,
                                                    (size_t)ob, cudaMemcpyDeviceToHost,
                                                    g->s[S_D2H]));
    if (e == cudaSuccess && hi > lo)
        e = SL__CUDA_RESULT(cudaMemcpyAsync(d->chars->ptr, (const char *)c->chars->ptr + lo,
                                            (size_t)(hi - lo), cudaMemcpyDeviceToHost,
                                            g->s[S_D2H]));
    if (e == cudaSuccess)
        e = SL__CUDA_RESULT(cudaStreamSynchronize(g->s[S_D2H]));
    if (e != cudaSuccess)
        return cuda_fail(t->q, e, "downloading a string column");
    sl__gpu_str_rebase(d->data->ptr, c->type, rows + 1, lo);
    s->bytes_d2h += ob + hi - lo;
    return SL_OK;
}

int sl__gpu_defer_to_host(sl_task_t *t, sl_batch_t *src, sl_task_t *next,
                          const struct sl_phase *ph)
{
    struct sl__gpu *g = t->gpu;
    struct slot *s = &g->slots[t->gpu_slot];
    if (s->n_defer == s->cap_defer) {
        int cap = s->cap_defer ? s->cap_defer * 2 : 4;
        struct deferred *nv = sl__realloc(s->defer, (size_t)s->cap_defer * sizeof *nv,
                                          (size_t)cap * sizeof *nv);
        if (!nv)
            return sl__query_fail(t->q, "", SL_ENOMEM, "out of memory");
        s->defer = nv;
        s->cap_defer = cap;
    }
    sl_batch_t *b = sl__batch_new(src->schema, src->n_rows);
    if (!b)
        return sl__query_fail(t->q, "", SL_ENOMEM, "out of memory");
    sl__batch_share_dicts(b, src); /* codes move; dictionaries stay in host memory */
    cudaError_t e;
    if ((e = SL__CUDA_RESULT(cudaEventRecord(s->kd, g->s[S_COMPUTE]))) != cudaSuccess ||
        (e = SL__CUDA_RESULT(cudaStreamWaitEvent(g->s[S_D2H], s->kd, 0))) != cudaSuccess) {
        sl_batch_unref(b);
        return cuda_fail(t->q, e, "ordering the download");
    }
    if (!s->have_d2h && (e = SL__CUDA_RESULT(cudaEventRecord(s->d0, g->s[S_D2H]))) != cudaSuccess) {
        sl_batch_unref(b);
        return cuda_fail(t->q, e, "cudaEventRecord");
    }
    s->have_d2h = true;
    for (int i = 0; i < b->n_cols; i++) {
        /* Only the batch's rows move (a source's morsel is a slice of a large result): a
         * column with a bitmap from the byte holding its first bit, so that values and
         * bitmap keep one offset (< 8); others from their first row, at offset 0. */
        const struct sl__col *c = &src->cols[i];
        int64_t w = (int64_t)sl_type_width(c->type);
        int64_t lead = c->validity ? c->offset % 8 : 0, first = c->offset - lead;
        int64_t rows = src->n_rows + lead;
        struct sl__buf *parts[2] = {c->data, c->validity};
        struct sl__buf **dst[2] = {&b->cols[i].data, &b->cols[i].validity};
        int64_t from[2] = {first * w, first / 8}, len[2] = {rows * w, (rows + 7) / 8};
        b->cols[i].offset = lead;
        b->cols[i].null_count = c->null_count;
        if (w == 0) { /* strings: offsets and bytes, here and now (download_strings) */
            int rc = c->data ? download_strings(g, t, s, c, first, rows, &b->cols[i]) : SL_OK;
            if (rc < 0) {
                drop_partial(b, g->s[S_D2H]);
                return rc;
            }
            parts[0] = NULL;
        }
        for (int k = 0; k < 2; k++) {
            if (!parts[k])
                continue;
            if (from[k] + len[k] > parts[k]->bytes) /* never past the buffer */
                len[k] = parts[k]->bytes - from[k];
            if (download_buf(g, t, len[k], dst[k]) < 0) {
                drop_partial(b, g->s[S_D2H]);
                return t->q->err.code ? t->q->err.code : SL_ENOMEM;
            }
            if (len[k] > 0) {
                e = SL__CUDA_RESULT(cudaMemcpyAsync((*dst[k])->ptr,
                                                    (const char *)parts[k]->ptr + from[k],
                                                    (size_t)len[k], cudaMemcpyDeviceToHost,
                                                    g->s[S_D2H]));
                if (e != cudaSuccess) {
                    drop_partial(b, g->s[S_D2H]);
                    return cuda_fail(t->q, e, "cudaMemcpyAsync(d2h)");
                }
            }
            s->bytes_d2h += len[k];
        }
    }
    struct deferred *d = &s->defer[s->n_defer++];
    d->task = *next;
    d->task.gpu = NULL; /* the rest of the task runs on the host */
    d->task.stream = NULL;
    d->task.status = NULL;
    d->task.rows_emitted = NULL;
    d->task.kind = SL_DEVICE_CPU;
    d->phase = ph;
    d->pinned = b;
    sl_batch_ref(src);
    d->dev = src;
    return SL_OK;
}

int sl__host_register(void *ptr, int64_t bytes)
{
    cudaError_t e = cudaHostRegister(ptr, (size_t)bytes, cudaHostRegisterPortable);
    if (e != cudaSuccess) {
        char msg[256];
        return sl__cuda_check(e, "cudaHostRegister", __FILE__, __LINE__, msg, sizeof msg) < 0
                   ? sl__set_last_error(SL_EUNSUPPORTED, "cannot pin host memory: %s", msg)
                   : SL_EUNSUPPORTED;
    }
    return SL_OK;
}

void sl__host_unregister(void *ptr)
{
    if (cudaHostUnregister(ptr) != cudaSuccess)
        cudaGetLastError(); /* nothing to do about it while freeing */
}

int sl__gpu_measure(struct sl__gpu *g, double *h2d_gbps, double *d2h_gbps)
{
    const int64_t bytes = (int64_t)64 << 20;
    const int reps = 4;
    int prev = -1, rc = sl__cuda_set_device(g->ordinal, &prev);
    if (rc < 0)
        return rc;
    void *h = NULL, *d = NULL;
    cudaEvent_t a = NULL, b = NULL;
    cudaStream_t st = g->s[S_H2D];
    rc = sl__pinned_alloc(g->pinned, bytes, &h);
    if (rc == SL_OK)
        rc = sl__dpool_alloc_async(g->pool, bytes, st, &d);
    if (rc == SL_OK)
        rc = sl__cuda_event_create(g->ordinal, true, &a);
    if (rc == SL_OK)
        rc = sl__cuda_event_create(g->ordinal, true, &b);
    for (int dir = 0; rc == SL_OK && dir < 2; dir++) {
        memset(h, dir + 1, (size_t)bytes);
        cudaError_t e = cudaEventRecord(a, st);
        for (int i = 0; e == cudaSuccess && i < reps; i++)
            e = dir == 0 ? cudaMemcpyAsync(d, h, (size_t)bytes, cudaMemcpyHostToDevice, st)
                         : cudaMemcpyAsync(h, d, (size_t)bytes, cudaMemcpyDeviceToHost, st);
        float ms = 0;
        if (e == cudaSuccess)
            e = cudaEventRecord(b, st);
        if (e == cudaSuccess)
            e = cudaEventSynchronize(b);
        if (e == cudaSuccess)
            e = cudaEventElapsedTime(&ms, a, b);
        if (e != cudaSuccess) {
            rc = cuda_fail(NULL, e, "measuring the link");
            break;
        }
        double gbps = ms > 0 ? (double)bytes * reps / (ms * 1e6) : 0;
        *(dir == 0 ? h2d_gbps : d2h_gbps) = gbps;
    }
    if (d)
        sl__dpool_free_async(g->pool, d, bytes, st);
    cudaStreamSynchronize(st);
    if (h)
        sl__pinned_free(g->pinned, h, bytes);
    if (a)
        sl__cuda_event_destroy(a);
    if (b)
        sl__cuda_event_destroy(b);
    sl__cuda_set_device(prev, NULL);
    return rc;
}

/* A free sync status word of g (its index past the slots' words), or -1: taken with a
 * bit of g->sync_words_used, given back by sync_word_put. */
static int sync_word_take(struct sl__gpu *g)
{
    uint64_t used = atomic_load(&g->sync_words_used);
    while (~used) {
        int i = __builtin_ctzll(~used);
        if (atomic_compare_exchange_weak(&g->sync_words_used, &used, used | (1ull << i)))
            return i;
    }
    return -1;
}

static void sync_word_put(struct sl__gpu *g, int i)
{
    atomic_fetch_and(&g->sync_words_used, ~(1ull << i));
}

int sl__gpu_run_sync(struct sl__gpu *g, sl_task_t *t, const struct sl_impl *im)
{
    int prev = -1;
    int rc = sl__cuda_set_device(g->ordinal, &prev);
    if (rc < 0)
        return sl__query_fail(t->q, "", rc, "%s", sl_last_errmsg());
    t->gpu = g;
    t->stream = g->s[S_COMPUTE];
    t->sync_gpu = true;
    /* A status word of its own: several combine/finalize tasks may run at once. One of
     * the pinned, mapped sync words (read on the host after the wait: no memset and no
     * copy on the stream, two operations of every finalize), else one in device memory. */
    void *d_status = NULL;
    cudaEvent_t ev[2] = {NULL, NULL};
    cudaError_t e = cudaSuccess;
    int word = sync_word_take(g);
    volatile int32_t *h_word = word >= 0 ? &g->h_status_all[g->depth + word] : NULL;
    if (h_word) {
        *h_word = 0;
        d_status = g->d_status_all + g->depth + word;
        rc = SL_OK;
    } else if ((rc = sl__dpool_alloc_async(g->pool, sizeof(int32_t), g->s[S_COMPUTE],
                                           &d_status)) >= 0 &&
               (e = SL__CUDA_RESULT(cudaMemsetAsync(d_status, 0, sizeof(int32_t),
                                                    g->s[S_COMPUTE]))) != cudaSuccess) {
        rc = cuda_fail(t->q, e, "cudaMemsetAsync");
    } else if (rc < 0) {
        sl__query_fail(t->q, "", rc, "%s", sl_last_errmsg());
    }
    if (rc >= 0) {
        t->status = d_status;
        /* Timing events put the phase's GPU span in the trace (one kernel lane span). */
        if (t->q->trace_on) {
            cudaEventCreate(&ev[0]);
            cudaEventCreate(&ev[1]);
            if (ev[0])
                cudaEventRecord(ev[0], g->s[S_COMPUTE]);
        }
        sl__device_error_clear(); /* a device error noted before this task is not its own */
        rc = im->run(t);
        if (ev[1])
            cudaEventRecord(ev[1], g->s[S_COMPUTE]);
    }
    t->sync_gpu = false;
    t->status = NULL;
    int32_t status = 0;
    /* The status word's copy on the task's stream ends after the task's work: one wait
     * (a plain cudaMemcpy after the stream's wait was a second). */
    e = d_status && !h_word
            ? SL__CUDA_RESULT(cudaMemcpyAsync(&status, d_status, sizeof status,
                                              cudaMemcpyDeviceToHost, g->s[S_COMPUTE]))
            : cudaSuccess;
    if (e == cudaSuccess)
        e = SL__CUDA_RESULT(cudaStreamSynchronize(g->s[S_COMPUTE]));
    if (h_word) { /* the kernels' writes are visible once the stream has drained */
        status = e == cudaSuccess ? *h_word : 0;
        sync_word_put(g, word);
    } else if (d_status) {
        sl__dpool_free_async(g->pool, d_status, sizeof(int32_t), g->s[S_COMPUTE]);
    }
    if (e != cudaSuccess && rc >= 0)
        rc = cuda_fail(t->q, e, "cudaStreamSynchronize");
    if (ev[0] && ev[1] && e == cudaSuccess && g->worker) {
        struct sl__trace_event te = {.name = t->os ? t->os->op->def->name : "task",
                                     .device = g->ordinal, .kind = SL__TR_KERNEL,
                                     .lane = S_COMPUTE};
        te.start_ns = event_ns(g, ev[0]);
        te.end_ns = event_ns(g, ev[1]);
        if (te.start_ns >= 0 && te.end_ns >= te.start_ns)
            /* The calling thread's own buffer: the GPU worker's is its thread's alone. */
            sl__trace_add(&t->q->trace, t->worker ? t->worker->id : g->worker->id, &te);
    }
    for (int i = 0; i < 2; i++)
        if (ev[i])
            cudaEventDestroy(ev[i]);
    if (status < 0 && rc >= 0)
        rc = sl__query_fail(t->q, t->os ? t->os->op->def->name : "", status,
                            "%s: the GPU reported %s", t->os ? t->os->op->def->name : "task",
                            sl_strerror(status));
    sl__cuda_set_device(prev, NULL);
    return rc;
}

void sl__gpu_mem_reset_peak(struct sl__gpu *g)
{
    sl__dpool_reset_peak(g->pool);
}

void sl__gpu_mem(struct sl__gpu *g, int64_t *in_use, int64_t *peak, int64_t *limit)
{
    struct sl__dpool_stats st;
    sl__dpool_stats(g->pool, &st);
    *in_use = st.in_use_bytes;
    *peak = st.peak_bytes;
    *limit = st.limit_bytes;
}
