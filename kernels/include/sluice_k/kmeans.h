/* GPU k-means (issue 7; paper-004 ch. 5). STYLE.md §8.
 *
 * Points are float32 columns (column-major, one device array per feature, rows [0, n)),
 * centroids float32 row-major (k rows of d). One Lloyd step accumulates, over the points,
 *   d_sums[c * d + j] += x_j - cent[c * d + j]   (float64: the residual feature sum)
 *   d_counts[c]       += 1                       (mass sum)
 *   d_inertia[0]      += ||x - cent[c]||^2       (float64)
 * for c = the nearest centroid of x, and writes the label when d_labels is not NULL.
 * Summing residuals instead of raw features keeps the float32 block partials exact to
 * the data's spread, not to its magnitude; the new centroid is cent + sums / counts
 * (sl_k_kmeans_update). The accumulators are only added to, so a caller streaming the
 * points in chunks calls the step once per chunk and the sums stay on the GPU; zero
 * them (sl_k_kmeans_clear) once per iteration.
 *
 * Nearest centroid: argmin_c (||c||^2 / 2 - x.c), float32, ties to the lowest index,
 * the same formula, order of operations and tie rule as the CPU operator
 * (operators/kmeans/kmeans_dist.c), so labels equal the CPU's except for near-ties.
 *
 * Methods:
 *   SL_K_KMEANS_FUSED      single pass (paper-004 ch. 5): each block keeps all centroids
 *                          and its partial sums and counts in shared memory, assigns
 *                          its points (float32 FMAs, points in registers) and adds them
 *                          to its partials with shared atomics; one merge per block.
 *   SL_K_KMEANS_MULTIPASS  when k*d does not fit shared memory: centroids stream through
 *                          shared memory in chunks, labels go to memory (d_labels or
 *                          temp), a second pass adds the points into global sums.
 *   SL_K_KMEANS_MMA_FUSED  single pass, d <= 16, k <= 256: scores on tensor cores with x
 *                          in TF32 and the centroids as two TF32 parts (2xTF32), each row's
 *                          two best scores kept with the centroid index packed into their
 *                          low bits; a row whose gap is within the error bound
 *                          (kmeans_kernels.cuh, mma_kernel) is scored again exactly in
 *                          float32 by its warp, so labels are the float32 ones. Residual
 *                          sums per warp in shared memory; one merge per block.
 *   SL_K_KMEANS_TILE       single pass, d <= 32, while its block state fits (k <= 137 at
 *                          d = 16): independent warps, each scoring tiles of points as
 *                          FUSED does (same float32 labels) and adding a tile's staged
 *                          residuals to its partial sums during the next tile's scan,
 *                          features across the lanes (kmeans_kernels.cuh, tile_kernel).
 *   SL_K_KMEANS_TILE_PM    TILE with the argmin taken by pairs of centroids (the pair's
 *                          minimum against the best, the winner of the pair found by
 *                          scoring its first centroid again): the same labels, fewer
 *                          instructions a score (kmeans_kernels.cuh, score_pair). Not
 *                          chosen by AUTO: slower on an H100 (2^26 x 16, k = 64: 4.85-
 *                          4.91 ms an iteration against TILE's 4.49-4.54 in the same
 *                          processes, 2026-11-28) although its SASS has 1.7% fewer
 *                          instructions.
 *   SL_K_KMEANS_AUTO       sl_k_kmeans_pick(d, k) (from measurements on an H100).
 * d <= 64 for FUSED, d <= 16 for MMA_FUSED; MULTIPASS takes d up to SL_K_KMEANS_MAX_DIMS.
 * (Numbers 3 and 4 were 3xTF32 tensor-core kernels, fused and multi-pass, which AUTO never
 * chose: removed; sl_k_kmeans_supported says 0 for them.)
 *
 * Temp storage: two-call pattern (d_temp NULL sets *temp_bytes); the multi-pass method
 * without d_labels need n labels of temp. Launchers never allocate or synchronize and
 * return cudaGetLastError(); a size they cannot serve is cudaErrorInvalidValue.
 */
#ifndef SLUICE_K_KMEANS_H
#define SLUICE_K_KMEANS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SL_K_KMEANS_MAX_DIMS 256

enum {
    SL_K_KMEANS_AUTO = 0,
    SL_K_KMEANS_FUSED = 1,
    SL_K_KMEANS_MULTIPASS = 2,
    SL_K_KMEANS_MMA_FUSED = 5, /* the number the option debug_kmeans_method takes */
    SL_K_KMEANS_TILE = 6,
    SL_K_KMEANS_TILE_PM = 7
};

/* The method AUTO runs for d features and k clusters (host only, no CUDA call). */
int sl_k_kmeans_pick(int d, int k);
/* 1 if `method` can run d, k (a fused method needs its shared memory to fit). */
int sl_k_kmeans_supported(int method, int d, int k);

/* Zeroes sums (k*d), counts (k) and inertia (1). */
cudaError_t sl_k_kmeans_clear(double *d_sums, unsigned long long *d_counts, double *d_inertia,
                              int k, int d, cudaStream_t stream);

/* Fused methods keep one copy of the block's partial sums per warp when the copies fit
 * shared memory (no atomics: features across lanes, half-warp label collisions merged
 * by a shuffle), else one copy for the block updated with shared atomics. */
/* One assignment + accumulation step over n points; see above. h_cols: a host array of
 * d device pointers (the feature columns). */
cudaError_t sl_k_kmeans_step_f32(void *d_temp, size_t *temp_bytes, const float *const *h_cols,
                                 int d, int64_t n, const float *d_cent, int k, int method,
                                 double *d_sums, unsigned long long *d_counts,
                                 double *d_inertia, int32_t *d_labels, cudaStream_t stream);

/* The centroid update, CPU semantics: for each c with a count, c64 = cent + sums/count,
 * else c64 keeps its value; d_shift[0] = sum (c64' - c64)^2, d_shift[1] = sum c64^2
 * (old values); d_cent_out = (float)c64' (may equal d_cent_in). d_c64 is in/out. */
cudaError_t sl_k_kmeans_update(const float *d_cent_in, double *d_c64, const double *d_sums,
                               const unsigned long long *d_counts, int k, int d,
                               float *d_cent_out, double *d_shift, cudaStream_t stream);

/* Variants for a Lloyd loop that stays on the stream (no host round trip per
 * iteration): they do nothing once d_stop[0] != 0 (device int32; NULL = never stop), so
 * a caller may enqueue several iterations ahead and let sl_k_kmeans_check end the loop
 * on the device. sl_k_kmeans_clear_if zeroes with a kernel instead of memsets. */
cudaError_t sl_k_kmeans_clear_if(double *d_sums, unsigned long long *d_counts,
                                 double *d_inertia, int k, int d, const int32_t *d_stop,
                                 cudaStream_t stream);
cudaError_t sl_k_kmeans_step_f32_if(void *d_temp, size_t *temp_bytes,
                                    const float *const *h_cols, int d, int64_t n,
                                    const float *d_cent, int k, int method, double *d_sums,
                                    unsigned long long *d_counts, double *d_inertia,
                                    int32_t *d_labels, const int32_t *d_stop,
                                    cudaStream_t stream);
cudaError_t sl_k_kmeans_update_if(const float *d_cent_in, double *d_c64, const double *d_sums,
                                  const unsigned long long *d_counts, int k, int d,
                                  float *d_cent_out, double *d_shift, const int32_t *d_stop,
                                  cudaStream_t stream);
/* The CPU operator's stopping rule after an update (d_shift from it): unless d_state[0]
 * (stop) is set, d_state[1] (iterations done, int32) += 1, and d_state[0] = 1 when that
 * reaches max_iter or d_shift[0] <= tol^2 * d_shift[1]. Zero d_state before the loop. */
cudaError_t sl_k_kmeans_check(const double *d_shift, double tol, int64_t max_iter,
                              int32_t *d_state, cudaStream_t stream);

/* d_out[dst[r] * d + j] = cols[j][rows[r]] for r < m (float64): picks initial centroids. */
cudaError_t sl_k_kmeans_gather_f32(const float *const *h_cols, int d, const int64_t *d_rows,
                                   const int32_t *d_dst, int m, double *d_out,
                                   cudaStream_t stream);
/* Centroids for the step: d_cent[e] = (float)d_c64[e], e < k*d. */
cudaError_t sl_k_kmeans_to_f32(const double *d_c64, int64_t count, float *d_cent,
                               cudaStream_t stream);

/* k-means++ on the GPU, the CPU operator's rule. For rows [0, n) of a chunk:
 * d_d2[i] = min(first ? +inf : d_d2[i], sum_j (x_j - last_j)^2) in float64 (d_last:
 * the last chosen centroid, float64, device). */
cudaError_t sl_k_kmeans_pp_update_f32(const float *const *h_cols, int d, int64_t n,
                                      const double *d_last, int first, double *d_d2,
                                      cudaStream_t stream);
/* d_total[0] = sum of d_d2[0..n). Temp: two-call. */
cudaError_t sl_k_kmeans_pp_total(void *d_temp, size_t *temp_bytes, const double *d_d2,
                                 int64_t n, double *d_total, cudaStream_t stream);
/* d_pick[0] = the first i with prefix_sum(d_d2)[i] > u and d_d2[i] > 0, else n - 1 (the
 * CPU operator's scan). Temp: two-call. */
cudaError_t sl_k_kmeans_pp_pick(void *d_temp, size_t *temp_bytes, const double *d_d2,
                                int64_t n, double u, long long *d_pick, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_K_KMEANS_H */
