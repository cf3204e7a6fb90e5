/* Device-side helpers of the sort-family operators on a GPU (rows_cuda.h). */
#include <string.h>

#include "rows_cuda.h"
#include "sluice_k/columns.h"

int sl__rows_contiguous(const struct sl__rows *r, int c)
{
    const struct sl__col *c0 = &r->items[0].batch->cols[c];
    int64_t next = c0->offset;
    for (int64_t i = 0; i < r->n; i++) {
        const struct sl__col *col = &r->items[i].batch->cols[c];
        if (col->data != c0->data || col->offset != next)
            return 0;
        next += r->items[i].batch->n_rows;
    }
    return 1;
}

int64_t sl__rows_copy_bytes(const struct sl__rows *r, int n_cols, int64_t n)
{
    int64_t bytes = 0;
    for (int c = 0; c < n_cols; c++)
        if (!sl__rows_contiguous(r, c))
            bytes += (int64_t)sl_type_width(r->items[0].batch->cols[c].type) * n;
    return bytes;
}

int sl__rows_device_column(sl_task_t *t, const struct sl__rows *r, int c, int64_t n,
                           const void **out, void **owned)
{
    const sl_batch_t *b0 = r->items[0].batch;
    size_t w = (size_t)sl_type_width(b0->cols[c].type);
    *owned = NULL;
    if (sl__rows_contiguous(r, c)) {
        *out = sl__col_values(b0, c);
        return SL_OK;
    }
    char *d = sl_task_device_alloc(t, (size_t)n * w);
    if (!d)
        return SL_ENOMEM; /* recorded by sl_task_device_alloc */
    *owned = d;
    int64_t at = 0;
    for (int64_t i = 0; i < r->n; i++) {
        const sl_batch_t *b = r->items[i].batch;
        cudaError_t e = SL_TASK_CUDA_CALL(
            cudaMemcpyAsync(d + (size_t)at * w, sl__col_values(b, c), (size_t)b->n_rows * w,
                            cudaMemcpyDeviceToDevice, sl_task_stream(t)));
        if (e != cudaSuccess)
            return SL_TASK_CUDA_FAIL(t, e, "copying a column");
        at += b->n_rows;
    }
    *out = d;
    return SL_OK;
}

int64_t sl__rows_gpu_rows(const struct sl__rows *r, int n_cols)
{
    int64_t n = 0;
    for (int64_t i = 0; i < r->n; i++) {
        const sl_batch_t *b = r->items[i].batch;
        int dev = sl_batch_device(b);
        if (dev < 0 || dev != sl_batch_device(r->items[0].batch))
            return -1; /* host batches, or batches of several GPUs */
        for (int c = 0; c < n_cols; c++)
            if (b->cols[c].validity && b->cols[c].null_count != 0)
                return -1;
        n += b->n_rows;
    }
    return n < ((int64_t)1 << 31) ? n : -1;
}

void sl__gpu_work_init(struct sl__gpu_work *w, sl_task_t *t)
{
    memset(w, 0, sizeof *w);
    w->t = t;
    /* The runtime's pooled events: creating and destroying five each time were ten CUDA
     * calls of every GPU sort. Without them, no phase times; the work itself goes on. */
    w->ok = sl__task_events_get(t, SL__GPU_WORK_MARKS, (void **)w->ev) == SL_OK;
}

void sl__gpu_work_keep(struct sl__gpu_work *w, void *p)
{
    if (p && w->n_p < SL__GPU_WORK_PTRS)
        w->p[w->n_p++] = p;
    else if (p)
        sl_task_device_free(w->t, p);
}

void *sl__gpu_work_alloc(struct sl__gpu_work *w, size_t bytes)
{
    void *p = sl_task_device_alloc(w->t, bytes ? bytes : 1);
    sl__gpu_work_keep(w, p);
    return p;
}

void sl__gpu_work_mark(struct sl__gpu_work *w, int i)
{
    if (w->ok && cudaEventRecord(w->ev[i], sl_task_stream(w->t)) != cudaSuccess)
        w->ok = 0;
}

int sl__gpu_work_finish(struct sl__gpu_work *w, int rc, const char *const *names, int n_names,
                        const char *what)
{
    for (int i = 0; i < w->n_p; i++)
        sl_task_device_free(w->t, w->p[i]);
    w->n_p = 0;
    cudaError_t e = rc < 0 ? cudaSuccess : cudaStreamSynchronize(sl_task_stream(w->t));
    for (int i = 0; i < n_names && rc >= 0 && e == cudaSuccess && w->ok; i++) {
        float ms;
        if (names[i] && cudaEventElapsedTime(&ms, w->ev[i], w->ev[i + 1]) == cudaSuccess)
            sl_task_phase_time(w->t, names[i], ms);
    }
    float span_ms;
    if (w->span_name && rc >= 0 && e == cudaSuccess && w->ok &&
        cudaEventElapsedTime(&span_ms, w->ev[w->span_from], w->ev[w->span_to]) == cudaSuccess)
        sl_task_phase_time(w->t, w->span_name, span_ms);
    sl__task_events_put(w->t, SL__GPU_WORK_MARKS, (void **)w->ev);
    if (rc < 0)
        return rc;
    if (e != cudaSuccess)
        return SL_TASK_CUDA_FAIL(w->t, e, what);
    return SL_OK;
}

int sl__gpu_finalize_run(sl_task_t *t, struct sl__rows *rows, sl__gpu_body_fn body, void *arg,
                         const char *const *names, int n_names, const char *what)
{
    struct sl__gpu_work w;
    sl__gpu_work_init(&w, t);
    int rc = sl__gpu_work_finish(&w, body(&w, arg), names, n_names, what);
    if (rc >= 0)
        sl__rows_fini(rows);
    return rc;
}

int sl__rows_sink_fits(const sl_task_t *t)
{
    const sl_batch_t *b = sl_task_input(t);
    if (!b || sl_batch_device(b) >= 0)
        return 1;
    int64_t bytes = 0;
    for (int c = 0; c < sl_batch_num_columns(b); c++) {
        struct sl_column col;
        if (sl_batch_column(b, c, &col) == SL_OK)
            bytes += col.length * (int64_t)sl_type_width(col.type);
    }
    return 3 * bytes + ((int64_t)16 << 20) <= sl_task_device_budget(t);
}

int sl__gpu_work_columns(struct sl__gpu_work *w, const struct sl__rows *r, int n_cols,
                         int64_t n, const void **cols)
{
    for (int c = 0; c < n_cols; c++) {
        void *owned;
        int rc = sl__rows_device_column(w->t, r, c, n, &cols[c], &owned);
        sl__gpu_work_keep(w, owned);
        if (rc < 0)
            return rc;
    }
    return SL_OK;
}

int sl__gpu_gather_columns(sl_task_t *t, const void *const *cols, int n_cols, int skip,
                           const uint32_t *ids, sl_batch_t *out, int64_t n)
{
    cudaStream_t s = sl_task_stream(t);
    for (int c = 0; c < n_cols; c++) {
        if (c == skip)
            continue;
        int width = (int)sl_type_width(out->cols[c].type);
        SL_TASK_CUDA_TRY(t, sl_k_gather_width(cols[c], ids, sl__col_values(out, c), width, n, s),
                         "gathering");
    }
    return SL_OK;
}

int sl__mat_gpu_run(sl_task_t *t, struct sl__mat *m, sl__gpu_body_fn body, void *arg,
                    const char *const *names, int n_names, const char *what)
{
    int rc = sl__gpu_finalize_run(t, &m->rows, body, arg, names, n_names, what);
    m->gpu = rc >= 0;
    return rc;
}

struct sl__buf *sl__device_words(sl_task_t *t, int64_t words)
{
    return sl__device_values(t, SL_TYPE_INT32, words);
}

struct sl__buf *sl__device_values(sl_task_t *t, enum sl_type type, int64_t n)
{
    sl_schema_t *s = sl__schema_new(1);
    if (!s || sl__schema_set(s, 0, "v", type) != SL_OK) {
        sl__schema_free(s);
        sl_task_fail(t, SL_ENOMEM, "out of memory");
        return NULL;
    }
    sl_batch_t *vb = sl_task_new_batch(t, s, n);
    sl__schema_free(s);
    if (!vb)
        return NULL;
    struct sl__buf *buf = vb->cols[0].data;
    sl__buf_ref(buf);
    sl_batch_unref(vb);
    return buf;
}
