/* Device memory and batch movement for operators running on a GPU (CUDA builds only;
 * gpu_stub.c stands in otherwise): task scratch from the GPU's pool, batches moved
 * between host and GPU outside the in-flight slots of the GPU worker (combine and
 * finalize run on a CPU thread that drives the GPU's compute stream), and whole tables
 * copied to a GPU for plans over GPU-resident data. */
#include <string.h>

#include "engine_option_int.h"
#include "gpu_worker_int.h"

int sl__gpu_dalloc(sl_task_t *t, int64_t bytes, void **out, int *held)
{
    struct sl__gpu *g = t->gpu;
    *held = sl__gpu_held_slot(t);
    /* Replicas go while any do (TPC-H at SF 10 with gpu_mem=1Gi filled the budget with
     * replicas of lineitem's 122,880-row batches). */
    int rc = sl__gpu_alloc_evicting(g, t->q, bytes, (cudaStream_t)t->stream, out);
    if (rc < 0) {
        char held_text[256];
        sl__gpu_held_text(t->q, g, rc, held_text, sizeof held_text);
        return sl__query_fail(t->q, t->os ? t->os->op->def->name : "", rc, "%s%s",
                              sl_last_errmsg(), held_text);
    }
    sl__gpu_held_add(g, *held, bytes);
    return SL_OK;
}

void sl__gpu_dfree(struct sl__gpu *g, void *d_ptr, int64_t bytes, int held, void *stream)
{
    sl__gpu_held_add(g, held, -bytes);
    sl__dpool_free_async(g->pool, d_ptr, bytes, stream ? (cudaStream_t)stream : g->s[S_COMPUTE]);
}

int sl__gpu_ordinal(const struct sl__gpu *g)
{
    return g->ordinal;
}

int64_t sl__gpu_budget_left(struct sl__gpu *g)
{
    return sl__dpool_left(g->pool);
}

/* ---------------- strings (utf8, large_utf8) ---------------- */

int sl__gpu_str_range(struct sl_query *q, const struct sl__col *c, int64_t first, int64_t rows,
                      bool on_device, void *stream, int64_t *lo, int64_t *hi)
{
    size_t ow = c->type == SL_TYPE_UTF8 ? 4 : 8;
    const char *at = (const char *)c->data->ptr + (size_t)first * ow;
    unsigned char raw[2][8] = {{0}};
    if (on_device) {
        cudaStream_t st = (cudaStream_t)stream;
        cudaError_t e =
            SL__CUDA_RESULT(cudaMemcpyAsync(raw[0], at, ow, cudaMemcpyDeviceToHost, st));
        if (e == cudaSuccess)
            e = SL__CUDA_RESULT(cudaMemcpyAsync(raw[1], at + (size_t)rows * ow, ow,
                                                cudaMemcpyDeviceToHost, st));
        if (e == cudaSuccess)
            e = SL__CUDA_RESULT(cudaStreamSynchronize(st));
        if (e != cudaSuccess)
            return GPU_CUDA_FAIL(q, e, "reading string offsets");
    } else {
        memcpy(raw[0], at, ow);
        memcpy(raw[1], at + (size_t)rows * ow, ow);
    }
    int32_t a32, b32;
    if (ow == 4) {
        memcpy(&a32, raw[0], 4);
        memcpy(&b32, raw[1], 4);
        *lo = a32;
        *hi = b32;
    } else {
        memcpy(lo, raw[0], 8);
        memcpy(hi, raw[1], 8);
    }
    if (*lo < 0 || *hi < *lo || (*hi > *lo && (!c->chars || *hi > c->chars->bytes))) {
        static const char fmt[] = "string offsets [%lld, %lld) outside the column's bytes";
        return q ? sl__query_fail(q, "", SL_EINVAL, fmt, (long long)*lo, (long long)*hi)
                 : sl__set_last_error(SL_EINVAL, fmt, (long long)*lo, (long long)*hi);
    }
    return SL_OK;
}

void sl__gpu_str_rebase(void *offsets, enum sl_type t, int64_t n, int64_t lo)
{
    if (t == SL_TYPE_UTF8) {
        int32_t *o = offsets;
        for (int64_t i = 0; i < n; i++)
            o[i] -= (int32_t)lo;
    } else {
        int64_t *o = offsets;
        for (int64_t i = 0; i < n; i++)
            o[i] -= lo;
    }
}

/* Rows [first, first + rows) of string column c into fresh buffers of d (offsets rebased
 * to 0, then the bytes they span), as copy_columns copies. A rebase of a host source goes
 * through a host copy; of a device source, in the host buffer once the copy is done. */
static int copy_strings(struct sl_query *q, struct sl__col *d, const struct sl__col *c,
                        int64_t first, int64_t rows,
                        int (*alloc)(void *ctx, int64_t bytes, struct sl__buf **out), void *ctx,
                        enum cudaMemcpyKind kind, cudaStream_t st)
{
    int64_t lo = 0, hi = 0, ow = c->type == SL_TYPE_UTF8 ? 4 : 8, ob = (rows + 1) * ow;
    bool from_dev = kind == cudaMemcpyDeviceToHost;
    int rc = sl__gpu_str_range(q, c, first, rows, from_dev, st, &lo, &hi);
    if (rc >= 0)
        rc = alloc(ctx, ob, &d->data);
    if (rc >= 0 && hi > lo)
        rc = alloc(ctx, hi - lo, &d->chars);
    if (rc < 0)
        return rc;
    const char *off = (const char *)c->data->ptr + first * ow;
    void *tmp = NULL;
    if (lo != 0 && !from_dev) {
        if (!(tmp = sl__malloc((size_t)ob)))
            return q ? sl__query_fail(q, "", SL_ENOMEM, "out of memory")
                     : sl__set_last_error(SL_ENOMEM, "out of memory");
        memcpy(tmp, off, (size_t)ob);
        sl__gpu_str_rebase(tmp, c->type, rows + 1, lo);
        off = tmp;
    }
    cudaError_t e = SL__CUDA_RESULT(cudaMemcpyAsync(d->data->ptr, off, (size_t)ob, kind, st));
    if (e == cudaSuccess && hi > lo)
        e = SL__CUDA_RESULT(cudaMemcpyAsync(d->chars->ptr, (const char *)c->chars->ptr + lo,
                                            (size_t)(hi - lo), kind, st));
    /* the host copy or the downloaded offsets are used below: wait for the copies */
    if (e == cudaSuccess && lo != 0)
        e = SL__CUDA_RESULT(cudaStreamSynchronize(st));
    sl__free(tmp, (size_t)ob);
    if (e != cudaSuccess)
        return GPU_CUDA_FAIL(q, e, "copying a string column");
    if (lo != 0 && from_dev)
        sl__gpu_str_rebase(d->data->ptr, c->type, rows + 1, lo);
    return SL_OK;
}

/* Copies the rows of src (values and bitmaps) into fresh buffers of dst, which has
 * src's schema, with cudaMemcpyAsync on `st`. `alloc` makes a buffer. A slice shares
 * its parent's whole buffers: only its rows are copied, from row offset - offset % 8 so
 * that a bitmap keeps its bit positions (dst's offset becomes offset % 8); buffers
 * smaller than that range (foreign layouts) are copied whole. Strings move as offsets
 * and the bytes of those rows (copy_strings). */
static int copy_columns(struct sl_query *q, sl_batch_t *dst, const sl_batch_t *src,
                        int (*alloc)(void *ctx, int64_t bytes, struct sl__buf **out), void *ctx,
                        enum cudaMemcpyKind kind, cudaStream_t st)
{
    sl__batch_share_dicts(dst, src); /* codes move; dictionaries stay in host memory */
    for (int i = 0; i < src->n_cols; i++) {
        const struct sl__col *c = &src->cols[i];
        struct sl__col *d = &dst->cols[i];
        int64_t w = (int64_t)sl_type_width(c->type), lo = c->offset - c->offset % 8;
        int64_t rows = c->offset % 8 + src->n_rows;
        int64_t from[2] = {lo * w, lo / 8}, bytes[2] = {rows * w, (rows + 7) / 8};
        struct sl__buf *parts[2] = {c->data, c->validity};
        int whole = 0;
        for (int k = 0; k < 2; k++)
            whole |= parts[k] && from[k] + bytes[k] > parts[k]->bytes;
        if (w == 0) { /* strings: their offsets and bytes; the bitmap below */
            int rc = c->data ? copy_strings(q, d, c, lo, rows, alloc, ctx, kind, st) : SL_OK;
            if (rc < 0)
                return rc;
            parts[0] = NULL;
            whole = c->validity && bytes[1] + from[1] > c->validity->bytes;
            if (whole && c->data) /* cannot happen for sluice's own bitmaps */
                return q ? sl__query_fail(q, "", SL_EINVAL, "a string column's bitmap is "
                                          "shorter than its rows")
                         : sl__set_last_error(SL_EINVAL, "a string column's bitmap is "
                                              "shorter than its rows");
        }
        d->offset = whole ? c->offset : c->offset % 8;
        d->null_count = c->null_count;
        struct sl__buf **to[2] = {&d->data, &d->validity};
        for (int k = 0; k < 2; k++) {
            if (!parts[k])
                continue;
            if (whole) {
                from[k] = 0;
                bytes[k] = parts[k]->bytes;
            }
            int rc = alloc(ctx, bytes[k], to[k]);
            if (rc < 0)
                return rc;
            if (bytes[k] == 0)
                continue;
            cudaError_t e = SL__CUDA_RESULT(
                cudaMemcpyAsync((*to[k])->ptr, (const char *)parts[k]->ptr + from[k],
                                (size_t)bytes[k], kind, st));
            if (e != cudaSuccess)
                return GPU_CUDA_FAIL(q, e, "cudaMemcpyAsync");
        }
    }
    return SL_OK;
}

/* A host buffer of a download, charged to the engine's host budget until it goes. */
static int host_alloc(void *ctx, int64_t bytes, struct sl__buf **out)
{
    sl_task_t *t = ctx;
    const char *op = t->os ? t->os->op->def->name : "";
    *out = sl__buf_new(bytes);
    if (!*out)
        return sl__query_fail(t->q, op, SL_ENOMEM, "out of memory for %lld bytes",
                              (long long)bytes);
    if (sl__engine_charge_buf(t->q->eng, *out) != SL_OK) {
        sl__buf_unref(*out);
        *out = NULL;
        return sl__query_fail(t->q, op, SL_EBUDGET, "downloading a batch from the GPU: %lld "
                              "more bytes of host memory do not fit the engine's host budget "
                              "(option host_mem: %lld bytes)", (long long)bytes,
                              (long long)t->q->eng->host_limit);
    }
    return SL_OK;
}

int sl__gpu_batch_download(sl_task_t *t, sl_batch_t *src, sl_batch_t **out)
{
    *out = NULL;
    /* On the task's stream, after the work that may still be making the batch, and waited
     * for there alone; a task without a stream (a CPU worker's) copies on its thread's
     * default stream. Either waits for no other stream of the device (a device-wide
     * synchronize serialized every stream of it). */
    cudaStream_t st = t->stream ? (cudaStream_t)t->stream : cudaStreamPerThread;
    sl_batch_t *b = sl__batch_new(src->schema, src->n_rows);
    if (!b)
        return sl__query_fail(t->q, "", SL_ENOMEM, "out of memory");
    int rc = copy_columns(t->q, b, src, host_alloc, t, cudaMemcpyDeviceToHost, st);
    cudaError_t e = SL__CUDA_RESULT(cudaStreamSynchronize(st));
    if (rc >= 0 && e != cudaSuccess)
        rc = GPU_CUDA_FAIL(t->q, e, "cudaStreamSynchronize");
    if (rc < 0) {
        sl_batch_unref(b);
        return rc;
    }
    *out = b;
    return SL_OK;
}

struct dev_ctx {
    struct sl__gpu *g;
    sl_task_t *t;
    cudaStream_t st;
    int rc;                          /* the code when there is no query to fail */
};

static int dev_alloc(void *ctx, int64_t bytes, struct sl__buf **out)
{
    struct dev_ctx *c = ctx;
    *out = sl__gpu_device_buf(c->g, c->t, bytes, c->st);
    if (*out)
        return SL_OK;
    return c->t->q && c->t->q->err.code ? c->t->q->err.code : c->rc;
}

int sl__gpu_batch_upload_sync(sl_task_t *t, sl_batch_t *src, sl_batch_t **out)
{
    *out = NULL;
    sl_batch_t *b = sl__batch_new(src->schema, src->n_rows);
    if (!b)
        return sl__query_fail(t->q, "", SL_ENOMEM, "out of memory");
    struct dev_ctx c = {t->gpu, t, (cudaStream_t)t->stream, SL_EDEVICE};
    int rc = copy_columns(t->q, b, src, dev_alloc, &c, cudaMemcpyHostToDevice, c.st);
    /* Pageable sources: cudaMemcpyAsync returns once the source was staged, so the host
     * batch may go; the device copy is ordered before later work on the stream. */
    if (rc < 0) {
        sl_batch_unref(b);
        return rc;
    }
    *out = b;
    return SL_OK;
}

int sl__gpu_table_to_device(struct sl__gpu *g, sl_table_t *t, sl_table_t **out)
{
    *out = NULL;
    int prev = -1;
    int rc = sl__cuda_set_device(g->ordinal, &prev);
    if (rc < 0)
        return rc;
    sl_table_t *dt = NULL;
    rc = sl_table_create(&dt);
    /* A task context only to carry errors: the table copy belongs to no query. */
    sl_task_t tk = {.gpu = g, .stream = g->s[S_COMPUTE]};
    struct dev_ctx c = {g, &tk, g->s[S_COMPUTE], SL_EBUDGET};
    /* Runs of small host batches become one device batch each (gpu_concat.c), up to a
     * resident morsel (sources cut at least one morsel per batch). */
    pthread_mutex_lock(&g->eng->mu); /* options may be set on the open engine */
    int64_t max_rows = sl__options_resident_morsel_rows(&g->eng->cfg);
    pthread_mutex_unlock(&g->eng->mu);
    max_rows = max_rows < SL__GPU_RUN_MAX_ROWS ? max_rows : SL__GPU_RUN_MAX_ROWS;
    for (int64_t i = 0, k = 1; rc >= 0 && i < t->n_batches; i += k) {
        sl_batch_t *src = t->batches[i], *b = NULL;
        k = sl__gpu_concat_run(t->batches + i, t->n_batches - i, max_rows);
        if (k > 1) {
            rc = sl__gpu_concat_to_device(t->batches + i, k, dev_alloc, &c, c.st, &b);
        } else if (!(b = sl__batch_new(src->schema, src->n_rows))) {
            rc = sl__set_last_error(SL_ENOMEM, "out of memory");
        } else {
            rc = copy_columns(NULL, b, src, dev_alloc, &c, cudaMemcpyHostToDevice, c.st);
        }
        if (rc >= 0)
            rc = sl_table_append(dt, b);
        sl_batch_unref(b);
    }
    cudaError_t e = SL__CUDA_RESULT(cudaStreamSynchronize(g->s[S_COMPUTE]));
    if (rc >= 0 && e != cudaSuccess)
        rc = GPU_CUDA_FAIL(NULL, e, "cudaStreamSynchronize");
    sl__cuda_set_device(prev, NULL);
    if (rc < 0) {
        sl_table_unref(dt);
        return rc;
    }
    *out = dt;
    return SL_OK;
}

int sl_table_to_host(sl_table_t *t, sl_table_t **out)
{
    SL__CHECK_ARGS(out);
    *out = NULL;
    if (!t)
        return sl__set_last_error(SL_EINVAL, "sl_table_to_host: no table");
    sl_table_t *ht = NULL;
    int rc = sl_table_create(&ht);
    for (int64_t i = 0; rc >= 0 && i < t->n_batches; i++) {
        sl_batch_t *src = t->batches[i], *b = src;
        if (sl_batch_device(src) >= 0) {
            if (!(b = sl__batch_new(src->schema, src->n_rows))) {
                rc = sl__set_last_error(SL_ENOMEM, "out of memory");
                break;
            }
            rc = copy_columns(NULL, b, src, sl__gpu_host_alloc, NULL, cudaMemcpyDeviceToHost, 0);
            cudaError_t e = SL__CUDA_RESULT(cudaStreamSynchronize(0));
            if (rc >= 0 && e != cudaSuccess)
                rc = GPU_CUDA_FAIL(NULL, e, "copying a table to the host");
        } else {
            sl_batch_ref(b);
        }
        if (rc >= 0)
            rc = sl_table_append(ht, b);
        sl_batch_unref(b);
    }
    if (rc < 0) {
        sl_table_unref(ht);
        return rc;
    }
    *out = ht;
    return SL_OK;
}
