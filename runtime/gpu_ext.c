/* Runtime services for streaming GPU operators (gpu_ext.h). CUDA builds only. */
#include "gpu_ext.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "engine_int.h"
#include "gpu_worker_int.h"
#include "stage.h"
#include "trace.h"

static int64_t class_of(int64_t bytes)
{
    int64_t c = (int64_t)1 << 16;
    while (c < bytes)
        c <<= 1;
    return c;
}

void *sl__task_pinned_alloc(sl_task_t *t, int64_t bytes)
{
    if (!t->gpu) {
        sl_task_fail(t, SL_ESTATE, "pinned spill memory: not a GPU task");
        return NULL;
    }
    int64_t c = class_of(bytes);
    if (sl__engine_charge_host(t->q->eng, c) != SL_OK) {
        sl_task_fail(t, SL_EBUDGET, "%lld bytes of pinned spill memory do not fit the "
                     "engine's host budget of %lld bytes", (long long)c,
                     (long long)t->q->eng->host_limit);
        return NULL;
    }
    void *h = NULL;
    int rc = sl__pinned_alloc(t->gpu->spill, c, &h);
    if (rc < 0 || !h) {
        sl__engine_release_host(t->q->eng, c);
        sl_task_fail(t, rc < 0 ? rc : SL_ENOMEM, "pinned spill memory: %s", sl_last_errmsg());
        return NULL;
    }
    return h;
}

void sl__task_pinned_free(sl_task_t *t, void *h, int64_t bytes)
{
    if (!h)
        return;
    int64_t c = class_of(bytes);
    sl__pinned_free(t->gpu->spill, h, c);
    sl__engine_release_host(t->q->eng, c);
}

int sl__task_streams_get(sl_task_t *t, int n, void **out)
{
    if (n < 1 || n > SL__TASK_STREAMS_MAX || !out)
        return sl_task_fail(t, SL_EINVAL, "extra streams: %d asked, 1 to %d allowed", n,
                            SL__TASK_STREAMS_MAX);
    for (int i = 0; i < n; i++)
        out[i] = NULL;
    struct sl__gpu *g = t->gpu;
    if (!g)
        return sl_task_fail(t, SL_ESTATE, "extra streams: not a GPU task");
    int have = 0;
    pthread_mutex_lock(&g->side_mu);
    while (have < n && g->n_side > 0)
        out[have++] = g->side[--g->n_side];
    pthread_mutex_unlock(&g->side_mu);
    if (have == n)
        return SL_OK;
    cudaStream_t fresh[SL__TASK_STREAMS_MAX];
    int rc = sl__cuda_streams_create(g->ordinal, n - have, fresh);
    if (rc < 0) {
        rc = sl_task_fail(t, rc, "extra streams: %s", sl_last_errmsg());
        sl__task_streams_put(t, have, out);
        return rc;
    }
    for (int i = have; i < n; i++)
        out[i] = fresh[i - have];
    return SL_OK;
}

/* Puts the n items (NULL entries skipped) back into a pool of g (under side_mu) of
 * *n_pool entries, at most cap; those it cannot take go to destroy. Clears items[]. */
static void pool_put(struct sl__gpu *g, void **pool, int *n_pool, int cap, int n, void **items,
                     void (*destroy)(void *))
{
    pthread_mutex_lock(&g->side_mu);
    for (int i = 0; i < n; i++) {
        if (items[i] && *n_pool < cap) {
            pool[(*n_pool)++] = items[i];
            items[i] = NULL;
        }
    }
    pthread_mutex_unlock(&g->side_mu);
    for (int i = 0; i < n; i++) { /* the pool is full: these go */
        if (items[i]) {
            destroy(items[i]);
            items[i] = NULL;
        }
    }
}

static void stream_destroy(void *s)
{
    cudaStream_t one = s;
    (void)sl__cuda_streams_destroy(1, &one);
}

static void event_destroy(void *e)
{
    sl__cuda_event_destroy(e);
}

void sl__task_streams_put(sl_task_t *t, int n, void **s)
{
    if (t->gpu && s)
        pool_put(t->gpu, t->gpu->side, &t->gpu->n_side, SL__GPU_SIDE_MAX, n, s,
                 stream_destroy);
}

void sl__gpu_side_streams_destroy(struct sl__gpu *g)
{
    for (int i = 0; i < g->n_side; i++)
        stream_destroy(g->side[i]);
    g->n_side = 0;
}

int sl__task_events_get(sl_task_t *t, int n, void **out)
{
    if (n < 1 || n > SL__TASK_EVENTS_MAX || !out)
        return SL_EINVAL;
    for (int i = 0; i < n; i++)
        out[i] = NULL;
    struct sl__gpu *g = t->gpu;
    if (!g)
        return SL_ESTATE;
    int have = 0;
    pthread_mutex_lock(&g->side_mu);
    while (have < n && g->n_tev > 0)
        out[have++] = g->tev[--g->n_tev];
    pthread_mutex_unlock(&g->side_mu);
    for (; have < n; have++) {
        cudaEvent_t e = NULL;
        int rc = sl__cuda_event_create(g->ordinal, true, &e);
        if (rc < 0) {
            sl__task_events_put(t, have, out);
            return rc;
        }
        out[have] = e;
    }
    return SL_OK;
}

void sl__task_events_put(sl_task_t *t, int n, void **ev)
{
    if (t->gpu && ev)
        pool_put(t->gpu, t->gpu->tev, &t->gpu->n_tev, SL__GPU_TEV_MAX, n, ev,
                 event_destroy);
}

void sl__gpu_timing_events_destroy(struct sl__gpu *g)
{
    for (int i = 0; i < g->n_tev; i++)
        event_destroy(g->tev[i]);
    g->n_tev = 0;
}

int sl__task_host_room(const sl_task_t *t, int64_t bytes)
{
    const sl_engine_t *eng = t->q->eng;
    return atomic_load(&eng->hb->in_use) + bytes <= eng->host_limit;
}

int sl__upload_stage_open(sl_task_t *t, struct sl__upload_stage *us, int64_t bytes)
{
    memset(us, 0, sizeof *us);
    if (bytes <= 0 || !sl__task_host_room(t, 2 * class_of(bytes)))
        return SL_OK;
    us->bytes = bytes;
    for (int i = 0; i < 2; i++)
        if (!(us->buf[i] = sl__task_pinned_alloc(t, bytes))) {
            sl__upload_stage_close(t, us);
            return SL_ENOMEM;
        }
    /* Every core but the caller's, up to 15: the CPU workers are idle while a GPU
     * finalize streams. 1 GiB staged into two 32 MiB buffers while they upload, H100
     * host (bench/gpu/gpu_upload_micro, 2026-11-27): 18.7 GB/s on 4 threads, 39.5 on 8,
     * 48.9 on 15 (the link: 54). */
    int cpus = sl__host_threads(16);
    int helpers = cpus > 2 ? cpus - 1 : 1;
    if (sl__stager_create(&us->stager, helpers) < 0)
        sl__upload_stage_close(t, us);
    return SL_OK;
}

void sl__upload_stage_close(sl_task_t *t, struct sl__upload_stage *us)
{
    for (int i = 0; i < 2; i++)
        sl__task_pinned_free(t, us->buf[i], us->bytes);
    if (us->stager)
        sl__stager_destroy(us->stager);
    memset(us, 0, sizeof *us);
}

const void *sl__upload_stage_src(const struct sl__upload_stage *us, int slot, int64_t at,
                                 const struct sl__buf *b, const void *src, size_t bytes)
{
    if (!us->stager || b->kind != SL__MEM_HOST)
        return src;
    sl__stager_copy(us->stager, us->buf[slot] + at, src, bytes);
    return us->buf[slot] + at;
}

const void *sl__upload_stage_defer(struct sl__upload_stage *us, int slot, int64_t at,
                                   const struct sl__buf *b, const void *src, size_t bytes)
{
    if (!us->stager || b->kind != SL__MEM_HOST)
        return src;
    if (us->n_pend == STAGE_COPIES_MAX)
        return sl__upload_stage_src(us, slot, at, b, src, bytes);
    us->pend[us->n_pend++] = (struct sl__copy){us->buf[slot] + at, src, bytes};
    return us->buf[slot] + at;
}

void sl__upload_stage_flush(struct sl__upload_stage *us)
{
    if (us->n_pend > 0)
        sl__stager_copy_v(us->stager, us->pend, us->n_pend);
    us->n_pend = 0;
}

void sl__task_pinned_owner(sl_task_t *t, struct sl__pinned_owner *o)
{
    o->pool = t->gpu ? t->gpu->spill : NULL;
    o->eng = t->q->eng;
}

void sl__pinned_owner_free(const struct sl__pinned_owner *o, void *h, int64_t bytes)
{
    if (!h || !o->pool)
        return;
    int64_t c = class_of(bytes);
    sl__pinned_free(o->pool, h, c);
    sl__engine_release_host(o->eng, c);
}

sl_batch_t *sl__task_new_host_batch(sl_task_t *t, const sl_schema_t *schema, int64_t rows)
{
    enum sl_device_kind k = t->kind;
    t->kind = SL_DEVICE_CPU; /* sl_task_new_batch makes host batches for CPU tasks */
    sl_batch_t *b = sl_task_new_batch(t, schema, rows);
    t->kind = k;
    return b;
}

/* Every column's values in a block of the pinned result pool; SL_EBUDGET when one does
 * not fit (the pool is off or full, or the host budget spent). */
static int result_columns(sl_task_t *t, sl_batch_t *b)
{
    for (int c = 0; c < b->n_cols; c++) {
        if (sl_type_width(b->cols[c].type) == 0)
            return SL_EBUDGET; /* strings: their bytes are not known yet */
        int64_t bytes = sl__col_data_bytes(b->cols[c].type, b->n_rows);
        int rc = sl__gpu_result_buf(t->gpu, t->q->eng, bytes > 0 ? bytes : 1, &b->cols[c].data);
        if (rc < 0)
            return rc;
    }
    return SL_OK;
}

sl_batch_t *sl__task_new_result_batch(sl_task_t *t, const sl_schema_t *schema, int64_t rows,
                                      int *pinned)
{
    *pinned = 0;
    sl_batch_t *b = t->gpu ? sl__batch_new(schema, rows) : NULL;
    int rc = b ? result_columns(t, b) : SL_EBUDGET;
    if (rc == SL_OK) {
        *pinned = 1;
        return b;
    }
    sl_batch_unref(b);
    if (rc != SL_EBUDGET) {
        sl_task_fail(t, rc, "pinned result memory: %s", sl_last_errmsg());
        return NULL;
    }
    return sl__task_new_host_batch(t, schema, rows);
}

const struct sl__narrow *sl__task_narrow_of(sl_task_t *t, const struct sl__buf *b, int wide,
                                            int64_t first, int64_t n)
{
    return t->q->opts.debug_gpu_wide_upload ? NULL : sl__narrow_of(b, wide, first, n);
}

int sl__task_widen(sl_task_t *t, void *d_out, const struct sl__narrow *nw, const void *d_in,
                   int64_t n, void *stream)
{
    cudaError_t e = SL__CUDA_RESULT(sl__cuda_widen(d_out, nw->wide, d_in, nw->width, nw->base,
                                                   nw->step, n, (cudaStream_t)stream));
    return e == cudaSuccess ? SL_OK
                            : SL_TASK_CUDA_FAIL(t, e, "widening a narrow upload (sl__cuda_widen)");
}

int sl__task_tracing(const sl_task_t *t)
{
    return t->q->trace_on && t->worker;
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

void sl__task_trace_gpu(sl_task_t *t, const char *name, int kind, int lane, void *ev0,
                        void *ev1, int64_t bytes, int64_t rows)
{
    if (!sl__task_tracing(t) || !t->gpu)
        return;
    struct sl__trace_event e = {.name = name, .device = t->gpu->ordinal, .lane = lane,
                                .bytes = bytes, .rows = rows, .kind = (enum sl__trace_kind)kind};
    e.start_ns = event_ns(t->gpu, (cudaEvent_t)ev0);
    e.end_ns = event_ns(t->gpu, (cudaEvent_t)ev1);
    /* The finalize's own worker appends (its buffer is written by this thread only). */
    if (e.start_ns >= 0 && e.end_ns >= e.start_ns)
        sl__trace_add(&t->q->trace, t->worker->id, &e);
}

int sl__task_cuda_fail(sl_task_t *t, int err, const char *what, const char *file, int line)
{
    char msg[SL__MSG_MAX];
    int rc = sl__cuda_check((cudaError_t)err, what, file, line, msg, sizeof msg);
    return rc < 0 ? sl_task_fail(t, rc, "%s", msg) : rc;
}
