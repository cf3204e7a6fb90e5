/* Device-side helpers of the sort-family operators on a GPU (rows_cuda.h). */
#include <cuda_runtime_api.h>

#include "rows_cuda.h"

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
        cudaError_t e = cudaMemcpyAsync(d + (size_t)at * w, sl__col_values(b, c),
                                        (size_t)b->n_rows * w, cudaMemcpyDeviceToDevice,
                                        sl_task_stream(t));
        if (e != cudaSuccess)
            return sl_task_fail(t, SL_EDEVICE, "copying a column on the GPU: %s",
                                cudaGetErrorName(e));
        at += b->n_rows;
    }
    *out = d;
    return SL_OK;
}
