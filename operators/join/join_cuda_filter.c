/* join on a GPU: the probe side filtered before partitioning (issue 6, low match ratios).
 *
 * PHJ partitions both sides whole, so a probe side of which most rows have no partner
 * costs as much as one where all have. A probe row whose key lies outside the build
 * keys' range [min, max] cannot have one: when samples say that most probe rows are
 * outside it, the rows inside are selected in order and their keys and packed rows
 * gathered and partitioned instead (row ids in the rows keep their numbers, so columns
 * gathered by row id after the join still find theirs). Every row with a partner is
 * kept, so inner and semi joins are unchanged; anti and left outer joins need the rows
 * it drops and are never filtered.
 *
 * The samples (FILTER_SAMPLE strided keys of each side, one synchronization) also give
 * the build sample that picks the radix bits (gj_pick_bits), so a join that is not
 * filtered pays only the probe side's sample kernel. */

#include "join_cuda_int.h"
#include "sluice_k/join_filter.h"
#include "sluice_k/join_types.h"

#define FILTER_SAMPLE 4096
#define FILTER_MIN_ROWS ((int64_t)1 << 20) /* smaller probe sides: not worth the syncs */
#define FILTER_MAX_KEEP 0.5                 /* probe sample share inside the build's range */

/* Share of the probe sample inside the build sample's [min, max] (keys compared as
 * unsigned values, as the kernels do). */
static double kept_share(const uint64_t *h, const int64_t m[2])
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int64_t i = 0; i < m[0]; i++) {
        lo = h[i] < lo ? h[i] : lo;
        hi = h[i] > hi ? h[i] : hi;
    }
    int64_t in = 0;
    for (int64_t i = 0; i < m[1]; i++)
        in += h[FILTER_SAMPLE + i] >= lo && h[FILTER_SAMPLE + i] <= hi;
    return m[1] ? (double)in / (double)m[1] : 1.0;
}

/* The probe rows in [kmin, kmax] replace the probe side. */
static int select_rows(sl_task_t *t, struct gj *g, uint64_t kmin, uint64_t kmax)
{
    struct gj_side *S = &g->s[1 - g->build];
    cudaStream_t s = sl_task_stream(t);
    size_t kw = g->k8 ? 8 : 4, temp_bytes = 0;
    uint64_t range = kmax - kmin + 1; /* 0 (wrapped): every key */
    if (range == 0)
        return SL_OK;
    SL_TASK_CUDA_TRY(t,
                     g->k8 ? sl_k_select_in_range_k64(NULL, &temp_bytes, S->keys, S->n, kmin, range,
                                                      NULL, NULL, s)
                           : sl_k_select_in_range_k32(NULL, &temp_bytes, S->keys, S->n,
                                                      (uint32_t)kmin, range, NULL, NULL, s),
                     "filter size");
    uint32_t *idx = sl_task_device_alloc(t, (size_t)S->n * 4);
    int64_t *d_count = sl_task_device_alloc(t, sizeof *d_count), count = 0;
    void *temp = sl_task_device_alloc(t, temp_bytes ? temp_bytes : 8), *keys = NULL, *rows = NULL;
    int rc = idx && d_count && temp ? SL_OK : SL_ENOMEM;
    if (rc == SL_OK) {
        cudaError_t e = g->k8 ? sl_k_select_in_range_k64(temp, &temp_bytes, S->keys, S->n, kmin, range, idx,
                                                         d_count, s)
                              : sl_k_select_in_range_k32(temp, &temp_bytes, S->keys, S->n, (uint32_t)kmin,
                                                         range, idx, d_count, s);
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(
                cudaMemcpyAsync(&count, d_count, sizeof count, cudaMemcpyDeviceToHost, s));
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(cudaStreamSynchronize(s));
        if (e != cudaSuccess)
            rc = SL_TASK_CUDA_FAIL(t, e, "filtering the probe side");
    }
    int rb = S->rows ? g->row_bytes : 0;
    if (rc == SL_OK && count > 0) {
        keys = sl_task_device_alloc(t, (size_t)count * kw);
        rows = rb ? sl_task_device_alloc(t, (size_t)count * (size_t)rb) : NULL;
        if (!keys || (rb && !rows))
            rc = SL_ENOMEM;
        cudaError_t e = cudaSuccess;
        if (rc == SL_OK)
            e = SL_TASK_CUDA_CALL(sl_k_gather_bytes(S->keys, (int)kw, idx, count, keys, s));
        if (rc == SL_OK && e == cudaSuccess && rb)
            e = SL_TASK_CUDA_CALL(sl_k_gather_bytes(S->rows, rb, idx, count, rows, s));
        if (rc == SL_OK && e != cudaSuccess)
            rc = SL_TASK_CUDA_FAIL(t, e, "gathering the kept probe rows");
    }
    sl_task_device_free(t, idx);
    sl_task_device_free(t, d_count);
    sl_task_device_free(t, temp);
    if (rc < 0) {
        sl_task_device_free(t, keys);
        sl_task_device_free(t, rows);
        return rc;
    }
    sl_task_device_free(t, S->keys_own);
    sl_task_device_free(t, S->rows_own);
    S->keys = S->keys_own = keys;
    S->rows = S->rows_own = rows;
    S->n = count;
    return SL_OK;
}

int gj_filter_probe(sl_task_t *t, struct gj *g)
{
    struct gj_side *R = &g->s[g->build], *S = &g->s[1 - g->build];
    if (g->algo != GJ_PHJ || (g->kind != SL_K_JOIN_INNER && g->kind != SL_K_JOIN_SEMI) ||
        S->n < FILTER_MIN_ROWS || R->n < 2 || !R->keys || !S->keys)
        return SL_OK;
    const struct gj_side *sd[2] = {R, S};
    int64_t m[2];
    uint64_t *h = sl_task_alloc(t, 2 * FILTER_SAMPLE * sizeof *h);
    if (!h)
        return SL_ENOMEM;
    int rc = gj_sample_keys(t, g->k8, 2, sd, FILTER_SAMPLE, h, m);
    double share = 1.0;
    if (rc >= 0) {
        gj_bits_from_sample(g, h, m[0]); /* gj_pick_bits' work, from the same sample */
        share = kept_share(h, m);
    }
    sl_task_free(t, h);
    if (rc < 0 || share > FILTER_MAX_KEEP)
        return rc;
    uint64_t kmin = 0, kmax = 0;
    if ((rc = gj_range_of(t, g->k8, 1, &R->keys, &R->n, &kmin, &kmax)) < 0)
        return rc;
    return select_rows(t, g, kmin, kmax);
}
