/* sort.topk on a GPU: the sink's CUDA implementation; combine, finalize and source are
 * topk.c's CPU bodies (they see at most workers x limit rows).
 *
 * A device batch of more than `limit` rows is cut to its candidates on the GPU: int64
 * codes of the first key (sluice_k/topk.h: any mapping that keeps the key's order) are
 * sorted with their row ids (CUB, descending for a DESC key, nulls coded to go where
 * NULLS FIRST/LAST puts them), and the rows up to the end of the run of the limit-th
 * code are kept: every row that can be among the first `limit`, as no row outside has
 * a code as good. Only these (the limit and the ties of the last) reach the host, where
 * the CPU's heap (sl__topk_keep_best) orders them by every key. Their columns are
 * gathered on the GPU and downloaded when every column is fixed-width without a
 * validity bitmap; otherwise the batch is downloaded and the candidates taken on the
 * host.
 *
 * The GPU sink takes a first key of a type sl_k_topk_codes reads (4- and 8-byte
 * integers, dates, timestamps, decimals, floats; strings and small integers keep the
 * CPU sink) and batches of more than `limit` rows and under 2^31: device batches of
 * more than MIN_DEVICE_ROWS, host ones (which it uploads first) of more than
 * MIN_HOST_ROWS. Smaller ones go to the CPU sink as they are (the runtime downloads a
 * device batch on its copy stream): the heap's comparisons (some 30 ns a row) cost
 * less than the GPU's synchronizations there. */
#include <cuda_runtime_api.h>

#include "sluice_k/sort.h"
#include "sluice_k/columns.h"
#include "sluice_k/topk.h"
#include "gpu_ext.h"
#include "topk_op.h"

#define ALIGN_UP(x) (((x) + 255) & ~(size_t)255)
#define MIN_DEVICE_ROWS 4096
#define MIN_HOST_ROWS 65536

static int key_kind(enum sl_type t, enum sl_k_topk_key *kind)
{
    switch (SL_TYPE_ID(t)) {
    case SL_TYPE_INT32: case SL_TYPE_DATE32: *kind = SL_K_TOPK_I32; return 1;
    case SL_TYPE_INT64: case SL_TYPE_TIMESTAMP: *kind = SL_K_TOPK_I64; return 1;
    case SL_TYPE_DECIMAL:
        *kind = sl_type_width(t) == 8 ? SL_K_TOPK_I64 : SL_K_TOPK_I128;
        return 1;
    case SL_TYPE_FLOAT32: *kind = SL_K_TOPK_F32; return 1;
    case SL_TYPE_FLOAT64: *kind = SL_K_TOPK_F64; return 1;
    default: return 0;
    }
}

static int topk_gpu_sink_can_run(const sl_task_t *t)
{
    const sl_op_t *op = sl_task_op((sl_task_t *)t);
    const struct topk_data *d = sl_op_data(op);
    enum sl_type type;
    enum sl_k_topk_key kind;
    sl_schema_field(sl_op_output_schema(op), d->spec.keys[0].col, NULL, &type);
    if (d->spec.n_keys == 0 || !key_kind(type, &kind))
        return 0;
    const sl_batch_t *b = sl_task_input(t);
    if (!b) /* placement: no batch yet */
        return 1;
    int64_t n = sl_batch_num_rows(b);
    return n > d->limit && n < INT32_MAX &&
           n > (sl_batch_device(b) >= 0 ? MIN_DEVICE_ROWS : MIN_HOST_ROWS);
}

/* The candidates of device batch b (n > limit rows): *m row ids at *d_ids, inside
 * scratch (device memory the caller frees). SL_OK or the failure recorded. */
static int find_candidates(sl_task_t *t, const struct topk_data *d, const sl_batch_t *b,
                           void **scratch, const uint32_t **d_ids, int64_t *m)
{
    cudaStream_t s = sl_task_stream(t);
    const struct sl__sort_key *key = &d->spec.keys[0];
    const struct sl__col *kc = &b->cols[key->col];
    int64_t n = sl_batch_num_rows(b), k = d->limit;
    enum sl_k_topk_key kind = SL_K_TOPK_I64;
    if (!key_kind(kc->type, &kind)) /* can_run took only these */
        return sl_task_fail(t, SL_EINTERNAL, "sort.topk: a key of type %s on the GPU",
                            sl_type_name(kc->type));
    size_t temp_bytes = 0;
    SL_TASK_CUDA_TRY(t,
                     sl_k_sort_pairs(NULL, &temp_bytes, 8, key->desc, NULL, NULL, NULL, NULL,
                                     4, n, s),
                     "sort.topk: sizing the candidates' sort");
    size_t codes_at = 0, ids_at = ALIGN_UP(codes_at + 16 * (size_t)n);
    size_t m_at = ALIGN_UP(ids_at + 8 * (size_t)n), temp_at = ALIGN_UP(m_at + 8);
    char *p = sl_task_device_alloc(t, temp_at + temp_bytes);
    if (!p)
        return SL_ENOMEM; /* recorded by sl_task_device_alloc */
    *scratch = p;
    int64_t *codes = (int64_t *)(p + codes_at), *sorted = codes + n, *d_m = (int64_t *)(p + m_at);
    uint32_t *ids = (uint32_t *)(p + ids_at);
    /* Nulls go to the front of the sorted codes when they come first in the order. */
    int64_t null_code = key->nulls_first != key->desc ? INT64_MIN : INT64_MAX;
    const uint8_t *valid = kc->validity ? kc->validity->ptr : NULL;
    SL_TASK_CUDA_TRY(t,
                     sl_k_topk_codes(sl__col_values(b, key->col), kind, valid, kc->offset,
                                     null_code, n, codes, s),
                     "sort.topk: key codes");
    SL_TASK_CUDA_TRY(t, sl_k_iota_u32(ids, n, 0, s), "sort.topk: row ids");
    SL_TASK_CUDA_TRY(t,
                     sl_k_sort_pairs(p + temp_at, &temp_bytes, 8, key->desc, codes, sorted,
                                     ids, ids + n, 4, n, s),
                     "sort.topk: sorting the key codes");
    SL_TASK_CUDA_TRY(t, sl_k_topk_run_end(sorted, n, k, d_m, s), "sort.topk: the last tie");
    SL_TASK_CUDA_TRY(t, cudaMemcpyAsync(m, d_m, sizeof *m, cudaMemcpyDeviceToHost, s),
                     "sort.topk: downloading the candidate count");
    SL_TASK_CUDA_TRY(t, cudaStreamSynchronize(s), "sort.topk: candidates");
    *d_ids = ids + n;
    return SL_OK;
}

static bool gatherable(const sl_batch_t *b)
{
    for (int c = 0; c < b->n_cols; c++)
        if (b->cols[c].validity || sl_type_width(b->cols[c].type) == 0)
            return false;
    return true;
}

/* Rows d_ids[0..m) of device batch b, every column gathered on the GPU, as a host batch
 * (*out). SL_OK or the failure recorded. */
static int gather_to_host(sl_task_t *t, sl_batch_t *b, const uint32_t *d_ids, int64_t m,
                          sl_batch_t **out)
{
    cudaStream_t s = sl_task_stream(t);
    size_t bytes = 0;
    for (int c = 0; c < b->n_cols; c++)
        bytes += ALIGN_UP(sl_type_width(b->cols[c].type) * (size_t)m);
    char *dst = sl_task_device_alloc(t, bytes);
    sl_batch_t *h = dst ? sl__task_new_host_batch(t, b->schema, m) : NULL;
    int rc = h ? SL_OK : SL_ENOMEM;
    size_t at = 0;
    for (int c = 0; rc == SL_OK && c < b->n_cols; c++) {
        size_t w = sl_type_width(b->cols[c].type);
        int e = SL_TASK_CUDA_CALL(sl_k_topk_gather(sl__col_values(b, c), (int)w, d_ids, m,
                                                   dst + at, s));
        if (e == 0)
            e = SL_TASK_CUDA_CALL(cudaMemcpyAsync(sl__col_values(h, c), dst + at, w * (size_t)m,
                                                  cudaMemcpyDeviceToHost, s));
        if (e != 0)
            rc = SL_TASK_CUDA_FAIL(t, e, "sort.topk: gathering the candidates");
        at += ALIGN_UP(w * (size_t)m);
    }
    if (rc == SL_OK) {
        int e = SL_TASK_CUDA_CALL(cudaStreamSynchronize(s));
        if (e != 0)
            rc = SL_TASK_CUDA_FAIL(t, e, "sort.topk: downloading the candidates");
    }
    sl_task_device_free(t, dst);
    if (rc < 0) {
        sl_batch_unref(h);
        return rc;
    }
    for (int c = 0; c < h->n_cols; c++)
        h->cols[c].null_count = 0;
    sl__batch_share_dicts(h, b);
    *out = h;
    return SL_OK;
}

/* Rows d_ids[0..m) of device batch b: b downloaded whole, the rows taken on the host. */
static int take_on_host(sl_task_t *t, sl_batch_t *b, const uint32_t *d_ids, int64_t m,
                        sl_batch_t **out)
{
    uint32_t *ids = sl__malloc((size_t)m * sizeof *ids);
    int64_t *idx = sl__malloc((size_t)m * sizeof *idx);
    int rc = ids && idx ? SL_OK : sl_task_fail(t, SL_ENOMEM, "sort.topk: out of memory");
    if (rc == SL_OK) {
        cudaStream_t s = sl_task_stream(t);
        int e = SL_TASK_CUDA_CALL(cudaMemcpyAsync(ids, d_ids, (size_t)m * sizeof *ids,
                                                  cudaMemcpyDeviceToHost, s));
        if (e == 0)
            e = SL_TASK_CUDA_CALL(cudaStreamSynchronize(s));
        if (e != 0)
            rc = SL_TASK_CUDA_FAIL(t, e, "sort.topk: downloading the candidates' ids");
    }
    for (int64_t i = 0; rc == SL_OK && i < m; i++)
        idx[i] = ids[i];
    sl_batch_t *h = NULL;
    if (rc == SL_OK)
        rc = sl_task_batch_to_host(t, b, &h);
    if (rc == SL_OK && (rc = sl__batch_take(h, idx, m, out)) < 0)
        rc = sl_task_fail(t, rc, "sort.topk: %s", sl_strerror(rc));
    sl_batch_unref(h);
    sl__free(ids, (size_t)m * sizeof *ids);
    sl__free(idx, (size_t)m * sizeof *idx);
    return rc;
}

static int topk_gpu_sink(sl_task_t *t)
{
    const struct topk_data *d = sl_op_data(sl_task_op(t));
    struct topk_state *ls = sl_task_lstate(t);
    sl_batch_t *b = sl_task_input(t), *rows = NULL;
    if (!ls)
        return SL_ENOMEM;
    int64_t n = sl_batch_num_rows(b);
    if (n == 0 || d->limit == 0)
        return SL_OK;
    int rc;
    if (n <= d->limit) { /* can_run sends these to the CPU; kept for callers that do not */
        rc = sl_task_batch_to_host(t, b, &rows);
    } else {
        void *scratch = NULL;
        const uint32_t *d_ids = NULL;
        int64_t m = 0;
        rc = find_candidates(t, d, b, &scratch, &d_ids, &m);
        if (rc == SL_OK)
            rc = gatherable(b) ? gather_to_host(t, b, d_ids, m, &rows)
                               : take_on_host(t, b, d_ids, m, &rows);
        sl_task_device_free(t, scratch);
    }
    if (rc == SL_OK && (rc = sl__topk_keep_best(d, &ls->best, rows)) < 0)
        rc = sl_task_fail(t, rc, "sort.topk: %s", sl_strerror(rc));
    sl_batch_unref(rows);
    return rc;
}

/* The definition CUDA builds register (operators/sort/meson.build). */
static const struct sl_impl topk_cuda_sink_impls[] = {
    SL__IMPL_CPU(sl__topk_sink), SL__IMPL_CUDA(topk_gpu_sink, topk_gpu_sink_can_run)};
SL__TOPK_DEF(sl__sort_topk_cuda_def, topk_cuda_sink_impls);
