/* The operator API for GPU memory and data movement (op.h, "GPU memory and data
 * movement"): checks, bookkeeping of a query's device blocks, and the calls into the
 * GPU worker (gpu_data.c; without CUDA, gpu_stub.c answers that there is no GPU). */
#include "engine_int.h"
#include "exec_int.h"
#include "gpu_int.h"

/* Device blocks are kept on a list of the query, so that those an operator did not free
 * go back to the pool when the query is destroyed. */
void *sl_task_device_alloc(sl_task_t *t, size_t bytes)
{
    if (!t)
        return NULL;
    if (t->kind != SL_DEVICE_CUDA || !t->gpu) {
        sl_task_fail(t, SL_ESTATE, "sl_task_device_alloc: not a GPU task");
        return NULL;
    }
    struct sl__dalloc *h = sl__malloc(sizeof *h);
    if (!h) {
        sl_task_fail(t, SL_ENOMEM, "out of memory");
        return NULL;
    }
    h->bytes = bytes ? (int64_t)bytes : 1; /* a unique pointer for zero bytes too */
    h->g = t->gpu;
    if (sl__gpu_dalloc(t, h->bytes, &h->ptr, &h->held) < 0) {
        sl__free(h, sizeof *h);
        return NULL;
    }
    pthread_mutex_lock(&t->q->alloc_mu);
    h->prev = NULL;
    h->next = t->q->dallocs;
    if (h->next)
        h->next->prev = h;
    t->q->dallocs = h;
    pthread_mutex_unlock(&t->q->alloc_mu);
    return h->ptr;
}

void sl_task_device_free(sl_task_t *t, void *d_ptr)
{
    if (!d_ptr)
        return;
    struct sl_query *q = t->q;
    pthread_mutex_lock(&q->alloc_mu);
    struct sl__dalloc *h = q->dallocs;
    while (h && h->ptr != d_ptr)
        h = h->next;
    if (h) {
        if (h->prev)
            h->prev->next = h->next;
        else
            q->dallocs = h->next;
        if (h->next)
            h->next->prev = h->prev;
    }
    pthread_mutex_unlock(&q->alloc_mu);
    if (!h) {
        sl_task_fail(t, SL_EINVAL, "sl_task_device_free: %p was not allocated by this query",
                     d_ptr);
        return;
    }
    sl__gpu_dfree(h->g, h->ptr, h->bytes, h->held, h->g == t->gpu ? t->stream : NULL);
    sl__free(h, sizeof *h);
}

void sl__query_free_device(struct sl_query *q)
{
    struct sl__dalloc *h = q->dallocs;
    while (h) {
        struct sl__dalloc *next = h->next;
        sl__gpu_dfree(h->g, h->ptr, h->bytes, h->held, NULL);
        sl__free(h, sizeof *h);
        h = next;
    }
    q->dallocs = NULL;
}

int64_t sl_task_device_budget(const sl_task_t *t)
{
    if (!t)
        return 0;
    return t->kind == SL_DEVICE_CUDA && t->gpu ? sl__gpu_budget_left(t->gpu) : 0;
}

int sl_batch_device(const sl_batch_t *b)
{
    for (int i = 0; b && i < b->n_cols; i++)
        if (b->cols[i].data)
            return b->cols[i].data->kind == SL__MEM_DEVICE ? b->cols[i].data->device : -1;
    return -1;
}

int sl_task_batch_to_host(sl_task_t *t, sl_batch_t *b, sl_batch_t **out)
{
    SL__CHECK_ARGS(t && out);
    *out = NULL;
    if (!b)
        return sl_task_fail(t, SL_EINVAL, "sl_task_batch_to_host: no batch");
    if (sl_batch_device(b) < 0) {
        sl_batch_ref(b);
        *out = b;
        return SL_OK;
    }
    return sl__gpu_batch_download(t, b, out);
}

int sl_task_batch_to_device(sl_task_t *t, sl_batch_t *b, sl_batch_t **out)
{
    SL__CHECK_ARGS(t && out);
    *out = NULL;
    if (!b)
        return sl_task_fail(t, SL_EINVAL, "sl_task_batch_to_device: no batch");
    if (t->kind != SL_DEVICE_CUDA || !t->gpu)
        return sl_task_fail(t, SL_ESTATE, "sl_task_batch_to_device: not a GPU task");
    int dev = sl_batch_device(b);
    if (dev >= 0 && dev != sl__gpu_ordinal(t->gpu))
        return sl_task_fail(t, SL_EUNSUPPORTED, "sl_task_batch_to_device: the batch is on GPU "
                            "%d, the task on GPU %d (copies between GPUs come with the "
                            "multi-GPU exchange)", dev, sl__gpu_ordinal(t->gpu));
    if (dev >= 0) {
        sl_batch_ref(b);
        *out = b;
        return SL_OK;
    }
    return t->sync_gpu ? sl__gpu_batch_upload_sync(t, b, out) : sl__gpu_batch_to_device(t, b, out);
}

sl_batch_t *sl_task_batch_slice(sl_task_t *t, sl_batch_t *b, int64_t offset, int64_t rows)
{
    if (!t)
        return NULL;
    if (!b || offset < 0 || rows < 0 || offset > b->n_rows || rows > b->n_rows - offset) {
        sl_task_fail(t, SL_EINVAL, "sl_task_batch_slice: rows [%lld, +%lld) outside a batch of "
                     "%lld", (long long)offset, (long long)rows, b ? (long long)b->n_rows : 0LL);
        return NULL;
    }
    sl_batch_t *s = sl__batch_slice(b, offset, rows);
    if (!s)
        sl_task_fail(t, SL_ENOMEM, "out of memory");
    return s;
}

int sl_table_to_device(sl_engine_t *eng, sl_table_t *t, int gpu, sl_table_t **out)
{
    SL__CHECK_ARGS(out);
    *out = NULL;
    if (!eng || !t)
        return sl__set_last_error(SL_EINVAL, "sl_table_to_device: bad arguments");
    int i = sl__engine_gpu_index(eng, gpu);
    if (i >= 0)
        return sl__gpu_table_to_device(eng->gpus[i], t, out);
    return sl__set_last_error(SL_ENODEV, "sl_table_to_device: the engine uses no GPU %d "
                              "(it has %d)", gpu, eng->n_gpus);
}
