/* String columns on a GPU: views and the gather by row ids (str_cuda.h). */
#include <string.h>

#include "str_cuda.h"

int sl__str_views(sl_task_t *t, const sl_batch_t *b, int col, sl_k_strview_t *out)
{
    const struct sl__col *c = &b->cols[col];
    if (b->n_rows == 0)
        return SL_OK;
    const char *chars = c->chars ? c->chars->ptr : NULL;
    cudaStream_t s = sl_task_stream(t);
    cudaError_t e =
        c->type == SL_TYPE_UTF8
            ? sl_k_str_views_o32(sl__col_values(b, col), chars, b->n_rows, out, s)
            : sl_k_str_views_o64(sl__col_values(b, col), chars, b->n_rows, out, s);
    return e == cudaSuccess ? SL_OK : SL_TASK_CUDA_FAIL(t, e, "string views");
}

int sl__str_attach_chars(sl_task_t *t, sl_batch_t *b, int oc, int64_t bytes)
{
    if (bytes == 0)
        return SL_OK;
    sl_schema_t *sc = sl__schema_new(1);
    if (!sc || sl__schema_set(sc, 0, "chars", SL_TYPE_UINT8) < 0) {
        sl__schema_free(sc);
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    }
    sl_batch_t *cb = sl_task_new_batch(t, sc, bytes);
    sl__schema_free(sc);
    if (!cb)
        return SL_ENOMEM;
    sl__buf_ref(cb->cols[0].data);
    sl__buf_unref(b->cols[oc].chars);
    b->cols[oc].chars = cb->cols[0].data;
    sl_batch_unref(cb);
    return SL_OK;
}

/* Scratch of a gather: one lengths array (reused column after column), each column's
 * offsets as int64 (n_cols arrays), CUB's scan storage and the columns' byte totals. */
struct gather_mem {
    int64_t *len, **pos, *d_tot, *tot;
    void *temp;
};

/* Each column's offsets (scanned lengths) and its bytes in total (one read-back). */
static int size_columns(sl_task_t *t, const struct sl__str_gather *cols, int n_cols,
                        const uint32_t *ids, int64_t n, int64_t valid, struct gather_mem *m,
                        size_t need)
{
    cudaStream_t s = sl_task_stream(t);
    cudaError_t e = cudaSuccess;
    for (int c = 0; c < n_cols && e == cudaSuccess; c++) {
        size_t tb = need;
        e = SL_TASK_CUDA_CALL(sl_k_str_gather_lengths(cols[c].views, ids, n, valid, m->len, s));
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(sl_k_scan_i64(m->temp, &tb, m->len, m->pos[c], n + 1, s));
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(cudaMemcpyAsync(m->d_tot + c, m->pos[c] + n, 8,
                                                  cudaMemcpyDeviceToDevice, s));
    }
    if (e == cudaSuccess)
        e = SL_TASK_CUDA_CALL(cudaMemcpyAsync(m->tot, m->d_tot, (size_t)n_cols * 8,
                                              cudaMemcpyDeviceToHost, s));
    if (e == cudaSuccess)
        e = SL_TASK_CUDA_CALL(cudaStreamSynchronize(s));
    return e == cudaSuccess ? SL_OK : SL_TASK_CUDA_FAIL(t, e, "sizing gathered strings");
}

static int gather_bytes(sl_task_t *t, const struct sl__str_gather *g, const uint32_t *ids,
                        int64_t n, int64_t valid, const int64_t *pos, int64_t total, sl_batch_t *b,
                        const char *what)
{
    struct sl__col *oc = &b->cols[g->oc];
    if (oc->type == SL_TYPE_UTF8 && total > INT32_MAX)
        return sl_task_fail(t, SL_EOVERFLOW, "%s column %d: %lld bytes of strings do not fit "
                            "utf8's 32-bit offsets (use large_utf8)", what, g->oc,
                            (long long)total);
    int rc = sl__str_attach_chars(t, b, g->oc, total);
    if (rc < 0)
        return rc;
    cudaError_t e = SL_TASK_CUDA_CALL(sl_k_str_gather_bytes(
        g->views, ids, pos, n, valid, oc->chars ? oc->chars->ptr : NULL, sl__col_values(b, g->oc),
        oc->type == SL_TYPE_UTF8 ? 4 : 8, sl_task_stream(t)));
    return e == cudaSuccess ? SL_OK : SL_TASK_CUDA_FAIL(t, e, "gathering strings");
}

int sl__str_gather_columns(sl_task_t *t, const struct sl__str_gather *cols, int n_cols,
                           const uint32_t *ids, int64_t n, int64_t valid, sl_batch_t *b,
                           const char *what)
{
    if (n_cols <= 0)
        return SL_OK;
    struct gather_mem m;
    memset(&m, 0, sizeof m);
    size_t need = 0;
    cudaError_t e = sl_k_scan_i64(NULL, &need, NULL, NULL, n + 1, sl_task_stream(t));
    if (e != cudaSuccess)
        return SL_TASK_CUDA_FAIL(t, e, "scan size");
    m.pos = sl_task_alloc(t, (size_t)n_cols * sizeof *m.pos);
    m.tot = sl_task_alloc(t, (size_t)n_cols * sizeof *m.tot);
    if (m.pos)
        memset(m.pos, 0, (size_t)n_cols * sizeof *m.pos);
    m.len = sl_task_device_alloc(t, (size_t)(n + 1) * 8);
    m.d_tot = sl_task_device_alloc(t, (size_t)n_cols * 8);
    m.temp = sl_task_device_alloc(t, need ? need : 8);
    int rc = m.pos && m.tot && m.len && m.d_tot && m.temp ? SL_OK : SL_ENOMEM;
    for (int c = 0; c < n_cols && rc == SL_OK; c++)
        if (!(m.pos[c] = sl_task_device_alloc(t, (size_t)(n + 1) * 8)))
            rc = SL_ENOMEM;
    if (rc == SL_OK)
        rc = size_columns(t, cols, n_cols, ids, n, valid, &m, need);
    for (int c = 0; c < n_cols && rc == SL_OK; c++)
        rc = gather_bytes(t, &cols[c], ids, n, valid, m.pos[c], m.tot[c], b, what);
    /* stream-ordered frees: after the kernels that read them */
    sl_task_device_free(t, m.len);
    sl_task_device_free(t, m.d_tot);
    sl_task_device_free(t, m.temp);
    for (int c = 0; m.pos && c < n_cols; c++)
        sl_task_device_free(t, m.pos[c]);
    sl_task_free(t, m.pos);
    sl_task_free(t, m.tot);
    return rc;
}
