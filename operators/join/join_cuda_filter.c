/* join on a GPU: the probe side filtered before partitioning (issue 6, low match ratios).
 *
 * PHJ partitions both sides whole, so a probe side of which most rows have no partner
 * costs as much as one where all have. When the build keys are dense (surrogate keys:
 * unique and filling most of their range), one bit per key of the range marks them — 16
 * MB for 2^27 keys, held in L2 — and the probe rows whose key is marked are selected in
 * order; their keys and packed rows are gathered and partitioned instead. The filter is
 * exact (a probe row is kept iff its key is a build key), so inner and semi joins are
 * unchanged; anti and left outer joins need the rows it drops and are never filtered.
 *
 * Whether it pays is decided from samples (a few thousand keys of each side, one
 * synchronization): the build sample must look dense and at most FILTER_MAX_KEEP of the
 * probe sample may fall inside the build's range. Only then is the exact range read. */
#include <string.h>

#include "join_cuda_int.h"
#include "sluice_k/columns.h"
#include "sluice_k/join_filter.h"
#include "sluice_k/join_npj.h"

#define FILTER_SAMPLE 4096
#define FILTER_MIN_ROWS ((int64_t)1 << 20) /* smaller probe sides: not worth the syncs */
#define FILTER_MAX_KEEP 0.5                 /* probe rows in the build's range, sampled */
#define FILTER_MAX_RANGE ((int64_t)1 << 31) /* 256 MB of bitmap */

/* Strided samples of both sides' keys into host memory (one synchronization). */
static int samples(sl_task_t *t, const struct gj *g, const struct gj_side *sd[2], int64_t m[2],
                   uint64_t *h)
{
    size_t kw = g->k8 ? 8 : 4;
    void *d = sl_task_device_alloc(t, 2 * FILTER_SAMPLE * kw);
    if (!d)
        return SL_ENOMEM;
    cudaStream_t s = sl_task_stream(t);
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < 2 && e == cudaSuccess; i++) {
        m[i] = sd[i]->n < FILTER_SAMPLE ? sd[i]->n : FILTER_SAMPLE;
        int64_t stride = sd[i]->n / m[i];
        char *dst = (char *)d + (size_t)i * FILTER_SAMPLE * kw;
        e = g->k8 ? sl_k_strided_b64(sd[i]->keys, stride, (uint64_t *)dst, m[i], s)
                  : sl_k_strided_b32(sd[i]->keys, stride, (uint32_t *)dst, m[i], s);
    }
    unsigned char *raw = (unsigned char *)h; /* 64-bit slots, widened in place below */
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(raw, d, 2 * FILTER_SAMPLE * kw, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    sl_task_device_free(t, d);
    if (e != cudaSuccess)
        return gj_cuda_failed(t, e, "sampling keys");
    for (int i = 2 * FILTER_SAMPLE - 1; kw == 4 && i >= 0; i--) { /* back to front */
        uint32_t x;
        memcpy(&x, raw + (size_t)i * 4, 4);
        h[i] = x;
    }
    return SL_OK;
}

/* From the samples: does the build look dense, and how much of the probe side would the
 * filter keep? (Keys compared as unsigned values, as the kernels do.) */
static int worth_it(const struct gj *g, const uint64_t *h, const int64_t m[2])
{
    const struct gj_side *R = &g->s[g->build];
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int64_t i = 0; i < m[0]; i++) {
        lo = h[i] < lo ? h[i] : lo;
        hi = h[i] > hi ? h[i] : hi;
    }
    if (hi - lo >= (uint64_t)(2 * R->n)) /* the sample's spread already exceeds dense */
        return 0;
    int64_t in = 0;
    for (int64_t i = 0; i < m[1]; i++)
        in += h[FILTER_SAMPLE + i] >= lo && h[FILTER_SAMPLE + i] <= hi;
    return in <= FILTER_MAX_KEEP * (double)m[1];
}

int gj_filter_probe(sl_task_t *t, struct gj *g)
{
    struct gj_side *R = &g->s[g->build], *S = &g->s[1 - g->build];
    if (g->algo != GJ_PHJ || (g->kind != SL_K_JOIN_INNER && g->kind != SL_K_JOIN_SEMI) ||
        g->composite || S->n < FILTER_MIN_ROWS || R->n < 2 || !R->keys || !S->keys)
        return SL_OK;
    const struct gj_side *sd[2] = {R, S};
    int64_t m[2];
    uint64_t *h = sl_task_alloc(t, 2 * FILTER_SAMPLE * sizeof *h);
    if (!h)
        return SL_ENOMEM;
    int rc = samples(t, g, sd, m, h);
    int go = rc >= 0 && worth_it(g, h, m);
    sl_task_free(t, h);
    if (!go)
        return rc;
    /* the exact range: the bitmap must cover every build key */
    uint64_t *mm = sl_task_device_alloc(t, 2 * sizeof *mm);
    if (!mm)
        return SL_ENOMEM;
    cudaStream_t s = sl_task_stream(t);
    size_t kw = g->k8 ? 8 : 4;
    uint64_t hm[2] = {0, 0};
    cudaError_t e = cudaMemsetAsync(mm, 0xFF, kw, s);
    if (e == cudaSuccess)
        e = cudaMemsetAsync((char *)mm + kw, 0, kw, s);
    if (e == cudaSuccess)
        e = g->k8 ? sl_k_npj_key_range_k64(R->keys, R->n, mm, s)
                  : sl_k_npj_key_range_k32(R->keys, R->n, (uint32_t *)mm, s);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(hm, mm, 2 * kw, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    sl_task_device_free(t, mm);
    if (e != cudaSuccess)
        return gj_cuda_failed(t, e, "key range");
    uint64_t kmin = g->k8 ? hm[0] : (uint32_t)hm[0], kmax = g->k8 ? hm[1] : (uint32_t)(hm[0] >> 32);
    if (kmax < kmin || kmax - kmin >= (uint64_t)(2 * R->n + 1024) ||
        kmax - kmin >= (uint64_t)FILTER_MAX_RANGE)
        return SL_OK;
    int64_t range = (int64_t)(kmax - kmin) + 1;
    /* bitmap, selection, and the gathered keys and rows */
    size_t words = (size_t)(range + 31) / 32, temp_bytes = 0;
    e = g->k8 ? sl_k_select_marked_k64(NULL, &temp_bytes, S->keys, S->n, kmin, range, NULL, NULL, NULL, s)
              : sl_k_select_marked_k32(NULL, &temp_bytes, S->keys, S->n, (uint32_t)kmin, range, NULL, NULL,
                                       NULL, s);
    if (e != cudaSuccess)
        return gj_cuda_failed(t, e, "filter size");
    uint32_t *bm = sl_task_device_alloc(t, words * 4), *idx = sl_task_device_alloc(t, (size_t)S->n * 4);
    int64_t *d_count = sl_task_device_alloc(t, sizeof *d_count), count = 0;
    void *temp = sl_task_device_alloc(t, temp_bytes ? temp_bytes : 8);
    void *keys = NULL, *rows = NULL;
    rc = bm && idx && d_count && temp ? SL_OK : SL_ENOMEM;
    if (rc == SL_OK) {
        e = cudaMemsetAsync(bm, 0, words * 4, s);
        if (e == cudaSuccess)
            e = g->k8 ? sl_k_bitmap_keys_k64(R->keys, R->n, kmin, range, bm, s)
                      : sl_k_bitmap_keys_k32(R->keys, R->n, (uint32_t)kmin, range, bm, s);
        if (e == cudaSuccess)
            e = g->k8 ? sl_k_select_marked_k64(temp, &temp_bytes, S->keys, S->n, kmin, range, bm, idx,
                                               d_count, s)
                      : sl_k_select_marked_k32(temp, &temp_bytes, S->keys, S->n, (uint32_t)kmin, range, bm,
                                               idx, d_count, s);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(&count, d_count, sizeof count, cudaMemcpyDeviceToHost, s);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(s);
        if (e != cudaSuccess)
            rc = gj_cuda_failed(t, e, "filtering the probe side");
    }
    int rb = S->rows ? g->row_bytes : 0;
    if (rc == SL_OK && count > 0) {
        keys = sl_task_device_alloc(t, (size_t)count * kw);
        rows = rb ? sl_task_device_alloc(t, (size_t)count * (size_t)rb) : NULL;
        if (!keys || (rb && !rows))
            rc = SL_ENOMEM;
        if (rc == SL_OK) {
            e = sl_k_gather_bytes(S->keys, (int)kw, idx, count, keys, s);
            if (e == cudaSuccess && rb)
                e = sl_k_gather_bytes(S->rows, rb, idx, count, rows, s);
            if (e != cudaSuccess)
                rc = gj_cuda_failed(t, e, "gathering the kept probe rows");
        }
    }
    sl_task_device_free(t, bm);
    sl_task_device_free(t, idx);
    sl_task_device_free(t, d_count);
    sl_task_device_free(t, temp);
    if (rc < 0) {
        sl_task_device_free(t, keys);
        sl_task_device_free(t, rows);
        return rc;
    }
    /* the filtered side replaces the whole one (row ids in its rows keep their numbers) */
    sl_task_device_free(t, S->keys_own);
    sl_task_device_free(t, S->rows_own);
    S->keys = S->keys_own = keys;
    S->rows = S->rows_own = rows;
    S->n = count;
    return SL_OK;
}
