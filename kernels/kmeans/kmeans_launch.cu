/* Launchers of GPU k-means: the only place with <<< >>> for kmeans. Contracts in
 * sluice_k/kmeans.h. */
#include "sluice_k/kmeans.h"

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include "kmeans_kernels.cuh"

using namespace sluice_k::kmeans;

/* Shared memory a fused block may use; above it the multi-pass form runs. 100 KiB
 * keeps two blocks per SM on an H100 (227 KiB per SM). */
static const size_t kFusedSmemCap = 100 * 1024;
/* Shared memory for one centroid chunk of the multi-pass kernels. */
static const size_t kChunkSmem = 40 * 1024;

static size_t align_up(size_t x)
{
    return (x + 255) & ~(size_t)255;
}

static int dims_simt(int d)
{
    return d <= 4 ? 4 : d <= 8 ? 8 : d <= 16 ? 16 : d <= 32 ? 32 : d <= 64 ? 64 : 0;
}

/* Per-warp copies of a fused block's partial sums when they fit (kmeans_kernels.cuh,
 * warp_update); bench/meson.build also builds gpu_kmeans_bench_shared with 0 (one shared
 * copy with shared atomics) to compare. */
#ifndef SL_K_KMEANS_PRIVATE_SUMS
#define SL_K_KMEANS_PRIVATE_SUMS 1
#endif

/* nw: copies of the block's partial sums (kmeans_kernels.cuh, warp_update). */
static size_t simt_fused_smem(int D, int k, int nw)
{
    const size_t kc = (size_t)((k + 3) & ~3), sx = D + 4;
    return (kc * D + kc + (size_t)nw * ((size_t)k * (D + 1) + k) +
            (size_t)kWarps * 32 * (sx + 1)) * 4;
}

static int dims_tile(int d)
{
    return d <= 4 ? 4 : d <= 8 ? 8 : d <= 16 ? 16 : d <= 32 ? 32 : 0;
}

/* Shared memory a tile_kernel block may use: 113 KB keeps two blocks (8 warps) per SM on
 * an H100; k = 64 takes 71 KB (three blocks). */
static const size_t kTileSmemCap = 113 * 1024;

/* tile_kernel: centroids (k4 rows of D), half norms, counts; per warp the partial sums
 * [k + 1][32], the staged residuals (32 * P rows of D = kTilePD * 32 floats) and labels. */
static size_t tile_smem(int D, int k)
{
    const size_t k4 = (size_t)((k + 3) & ~3), tp = (size_t)32 * (kTilePD / D);
    const size_t sw = (size_t)tile_sum_row(D); /* 32, or 16 for the ONE variant at d = 16 */
    return (k4 * (D + 2) + (size_t)kTileWarps * (sw * (size_t)(k + 1) + tp * D + tp)) * 4;
}

static int dims_mma(int d)
{
    return d <= 8 ? 8 : d <= 16 ? 16 : 0;
}

/* mma_kernel: B fragments (hi and lo parts) and half norms of k8 centroids, float32
 * centroids and nw copies of the partial sums and counts (row stride D + 1), the warps'
 * staged points (row stride D + 4) and labels. */
static size_t mma_smem(int D, int k, int nw)
{
    const size_t k8 = (size_t)((k + 7) & ~7), sf = D + 1;
    return (k8 * D * 2 + k8 + (size_t)k * sf + (size_t)nw * ((size_t)k * sf + k) +
            (size_t)kWarps * 32 * (D + 4 + 1)) * 4;
}

extern "C" int sl_k_kmeans_supported(int method, int d, int k)
{
    if (d < 1 || d > SL_K_KMEANS_MAX_DIMS || k < 1)
        return 0;
    switch (method) {
    case SL_K_KMEANS_FUSED:
        return dims_simt(d) && simt_fused_smem(dims_simt(d), k, 1) <= kFusedSmemCap;
    case SL_K_KMEANS_MULTIPASS:
        return 1;
    case SL_K_KMEANS_MMA_FUSED:
        return dims_mma(d) && k <= kMmaMaxK && mma_smem(dims_mma(d), k, 1) <= kFusedSmemCap;
    case SL_K_KMEANS_TILE:
    case SL_K_KMEANS_TILE_PM:
        return dims_tile(d) && tile_smem(dims_tile(d), k) <= kTileSmemCap;
    default:
        return 0;
    }
}

/* AUTO, from the H100 measurements (bench/RESULTS.md, 2^26 x 16, k = 64, ms per
 * iteration; 2026-11-23 20:31 UTC with per-warp sums and 3xTF32 (methods 3 and 4, since
 * removed: AUTO never chose them): fused 6.27, tensor-core
 * fused 11.9, multi-pass 85.7, tensor-core multi-pass 96.0; first run, k = 1024:
 * multi-pass 20.2, tensor-core 121). 2026-11-27 (s13-kmeans, gpu_kmeans_bench, same
 * run, 00:51 UTC): 2xTF32 fused (MMA_FUSED) against float32 fused, 2^26 x 16, k = 64:
 * 7.41 / 6.32; 2^24 x 16, k = 128 / 192 / 256: 2.53 / 2.55, 3.18 / 3.39, 3.72 / 4.19;
 * 2^24, k = 64, d = 4 / 8 / 13: 1.39 / 0.61, 1.44 / 1.00, 1.81 / 1.53. Its cost per
 * centroid is about 0.6 of the float32 one but its fixed cost per point (the update,
 * near-tie re-checks: 0.6 ms of the 7.41) is higher: even at k = 128 for
 * 9 <= d <= 16 (both kernels run 16 padded features there). 2026-11-27 (s15-kmeans,
 * H100 07:40 UTC, same run): TILE against FUSED, 2^26 x 16, k = 64: 4.87 / 6.29; 2^24,
 * k = 64, d = 4 / 8 / 13: 0.49 / 0.64, 0.79 / 1.04, 1.23 / 1.61; 2^24 x 16, k = 128:
 * 2.27 / 2.67 (MMA_FUSED 2.53 in s13's run). So: MMA_FUSED for 9 <= d <= 16 and
 * k >= 192 (up to its 256), else TILE while its block state fits (d <= 32, k <= 137 at
 * d = 16), else the float32 fused kernel while its state fits shared memory, else
 * float32 multi-pass. */
extern "C" int sl_k_kmeans_pick(int d, int k)
{
    if (d >= 9 && k >= 192 && sl_k_kmeans_supported(SL_K_KMEANS_MMA_FUSED, d, k))
        return SL_K_KMEANS_MMA_FUSED;
    if (sl_k_kmeans_supported(SL_K_KMEANS_TILE, d, k))
        return SL_K_KMEANS_TILE;
    if (sl_k_kmeans_supported(SL_K_KMEANS_FUSED, d, k))
        return SL_K_KMEANS_FUSED;
    return SL_K_KMEANS_MULTIPASS;
}

extern "C" cudaError_t sl_k_kmeans_clear(double *d_sums, unsigned long long *d_counts,
                                         double *d_inertia, int k, int d, cudaStream_t stream)
{
    cudaError_t e;
    if (k < 1 || d < 1)
        return cudaErrorInvalidValue;
    if ((e = cudaMemsetAsync(d_sums, 0, (size_t)k * d * sizeof(double), stream)) != cudaSuccess ||
        (e = cudaMemsetAsync(d_counts, 0, (size_t)k * sizeof(unsigned long long), stream)) !=
            cudaSuccess ||
        (e = cudaMemsetAsync(d_inertia, 0, sizeof(double), stream)) != cudaSuccess)
        return e;
    return cudaSuccess;
}

extern "C" cudaError_t sl_k_kmeans_clear_if(double *d_sums, unsigned long long *d_counts,
                                            double *d_inertia, int k, int d,
                                            const int32_t *d_stop, cudaStream_t stream)
{
    if (k < 1 || d < 1 || !d_sums || !d_counts || !d_inertia)
        return cudaErrorInvalidValue;
    const int64_t kd = (int64_t)k * d;
    const int64_t blocks = (kd + 255) / 256;
    clear_kernel<<<(unsigned)(blocks < 1024 ? blocks : 1024), 256, 0, stream>>>(
        d_sums, kd, d_counts, k, d_inertia, d_stop);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_kmeans_check(const double *d_shift, double tol, int64_t max_iter,
                                         int32_t *d_state, cudaStream_t stream)
{
    if (!d_shift || !d_state || max_iter < 1 || !(tol >= 0))
        return cudaErrorInvalidValue;
    check_kernel<<<1, 1, 0, stream>>>(d_shift, tol * tol, max_iter, d_state);
    return cudaGetLastError();
}

/* Blocks for a grid-stride kernel: enough to fill the GPU, no more than tiles, and
 * enough that no block sees 2^31 points (its counts are 32-bit). */
template <typename K>
static cudaError_t grid_for(K kern, size_t smem, int64_t n, int64_t tile, unsigned *grid,
                           int threads = kThreads)
{
    cudaError_t e;
    int dev = 0, sms = 0, per_sm = 0;
    if (smem > 48 * 1024 &&
        (e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)smem)) != cudaSuccess)
        return e;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
        (e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, threads, smem)) !=
            cudaSuccess)
        return e;
    if (per_sm < 1)
        return cudaErrorInvalidConfiguration;
    int64_t tiles = (n + tile - 1) / tile, g = (int64_t)sms * per_sm;
    if (g > tiles)
        g = tiles;
    if (g < (n >> 30) + 1)
        g = (n >> 30) + 1;
    if (g < 1)
        g = 1;
    *grid = (unsigned)g;
    return cudaSuccess;
}

template <int N>
static Cols<N> cols_of(const float *const *h_cols, int d)
{
    Cols<N> c;
    for (int j = 0; j < N; j++)
        c.p[j] = j < d ? h_cols[j] : NULL;
    return c;
}

template <int D, int P>
static cudaError_t run_simt(bool fuse, const float *const *h_cols, int d, int64_t n,
                            const float *cent, int k, double *sums, unsigned long long *counts,
                            double *inertia, int32_t *labels, const int32_t *stop,
                            cudaStream_t stream)
{
    const int kp = (k + 3) & ~3;
    int kc = kp, nw = 1;
    size_t smem;
    if (fuse) {
        if (SL_K_KMEANS_PRIVATE_SUMS && simt_fused_smem(D, k, kWarps) <= kFusedSmemCap)
            nw = kWarps;
        smem = simt_fused_smem(D, k, nw);
    } else {
        int cap = (int)(kChunkSmem / ((D + 1) * 4)) & ~3;
        kc = kp < cap ? kp : cap;
        smem = (size_t)kc * (D + 1) * 4;
    }
    auto kern = fuse ? simt_kernel<D, P, true> : simt_kernel<D, P, false>;
    unsigned grid = 0;
    cudaError_t e = grid_for(kern, smem, n, (int64_t)kThreads * P, &grid);
    if (e != cudaSuccess)
        return e;
    kern<<<grid, kThreads, smem, stream>>>(cols_of<D>(h_cols, d), d, n, cent, k, kc, nw, sums,
                                           counts, inertia, labels, stop);
    return cudaGetLastError();
}

template <int D>
static cudaError_t run_mma(const float *const *h_cols, int d, int64_t n, const float *cent, int k,
                          double *sums, unsigned long long *counts, double *inertia,
                          int32_t *labels, const int32_t *stop, cudaStream_t stream)
{
    const int nw = SL_K_KMEANS_PRIVATE_SUMS && mma_smem(D, k, kWarps) <= kFusedSmemCap ? kWarps : 1;
    const size_t smem = mma_smem(D, k, nw);
    unsigned grid = 0;
    cudaError_t e = grid_for(mma_kernel<D>, smem, n, kThreads, &grid);
    if (e != cudaSuccess)
        return e;
    mma_kernel<D><<<grid, kThreads, smem, stream>>>(cols_of<D>(h_cols, d), d, n, cent, k, nw,
                                                   sums, counts, inertia, labels, stop);
    return cudaGetLastError();
}

template <int D, bool PM>
static cudaError_t run_tile(const float *const *h_cols, int d, int64_t n, const float *cent,
                           int k, double *sums, unsigned long long *counts, double *inertia,
                           int32_t *labels, const int32_t *stop, cudaStream_t stream)
{
    constexpr int P = kTilePD / D;
    const size_t smem = tile_smem(D, k);
    unsigned grid = 0;
    /* at least two warp tiles of 32 * P points a warp where n allows it, so that a warp
     * adds a staged tile inside the next one's scan (what the kernel is for; small inputs
     * exercise it too) */
    cudaError_t e = grid_for(tile_kernel<D, P, PM>, smem, n, (int64_t)kTileThreads * P * 2,
                             &grid, kTileThreads);
    if (e != cudaSuccess)
        return e;
    tile_kernel<D, P, PM><<<grid, kTileThreads, smem, stream>>>(
        cols_of<D>(h_cols, d), d, n, cent, k, sums, counts, inertia, labels, stop);
    return cudaGetLastError();
}

static cudaError_t run_generic(const float *const *h_cols, int d, int64_t n, const float *cent,
                               int k, double *inertia, int32_t *labels, const int32_t *stop,
                               cudaStream_t stream)
{
    int kc = (int)(kChunkSmem / ((size_t)(d + 1) * 4));
    if (kc > k)
        kc = k;
    const size_t smem = (size_t)kc * (d + 1) * 4;
    unsigned grid = 0;
    cudaError_t e = grid_for(generic_assign_kernel, smem, n, kThreads, &grid);
    if (e != cudaSuccess)
        return e;
    generic_assign_kernel<<<grid, kThreads, smem, stream>>>(
        cols_of<SL_K_KMEANS_MAX_DIMS>(h_cols, d), d, n, cent, k, kc, inertia, labels, stop);
    return cudaGetLastError();
}

static cudaError_t run_accumulate(const float *const *h_cols, int d, int64_t n,
                                  const float *cent, const int32_t *labels, double *sums,
                                  unsigned long long *counts, const int32_t *stop,
                                  cudaStream_t stream)
{
    int64_t blocks = (n + 255) / 256;
    if (blocks > 65536)
        blocks = 65536;
    accumulate_kernel<<<(unsigned)blocks, 256, 0, stream>>>(
        cols_of<SL_K_KMEANS_MAX_DIMS>(h_cols, d), d, n, cent, labels, sums, counts, stop);
    return cudaGetLastError();
}

/* The SIMT kernel for d <= 64 (fused or multi-pass), at its padded width. */
static cudaError_t run_simt_d(bool fuse, const float *const *h_cols, int d, int64_t n,
                              const float *cent, int k, double *sums,
                              unsigned long long *counts, double *inertia, int32_t *labels,
                              const int32_t *stop, cudaStream_t stream)
{
    auto run = [&](auto kern) {
        return kern(fuse, h_cols, d, n, cent, k, sums, counts, inertia, labels, stop, stream);
    };
    switch (dims_simt(d)) {
    case 4: return run(run_simt<4, 8>);
    case 8: return run(run_simt<8, 8>);
    case 16: return run(run_simt<16, 4>);
    case 32: return run(run_simt<32, 2>);
    case 64: return run(run_simt<64, 1>);
    default: return cudaErrorInvalidValue;
    }
}

extern "C" cudaError_t sl_k_kmeans_step_f32(void *d_temp, size_t *temp_bytes,
                                            const float *const *h_cols, int d, int64_t n,
                                            const float *d_cent, int k, int method,
                                            double *d_sums, unsigned long long *d_counts,
                                            double *d_inertia, int32_t *d_labels,
                                            cudaStream_t stream)
{
    return sl_k_kmeans_step_f32_if(d_temp, temp_bytes, h_cols, d, n, d_cent, k, method, d_sums,
                                   d_counts, d_inertia, d_labels, NULL, stream);
}

extern "C" cudaError_t sl_k_kmeans_step_f32_if(void *d_temp, size_t *temp_bytes,
                                               const float *const *h_cols, int d, int64_t n,
                                               const float *d_cent, int k, int method,
                                               double *d_sums, unsigned long long *d_counts,
                                               double *d_inertia, int32_t *d_labels,
                                               const int32_t *d_stop, cudaStream_t stream)
{
    if (temp_bytes == NULL || n < 0 || d < 1 || d > SL_K_KMEANS_MAX_DIMS || k < 1)
        return cudaErrorInvalidValue;
    if (method == SL_K_KMEANS_AUTO)
        method = sl_k_kmeans_pick(d, k);
    if (!sl_k_kmeans_supported(method, d, k))
        return cudaErrorInvalidValue;
    /* the multi-pass method's labels: d_labels, else temp */
    const size_t lab_bytes =
        (method == SL_K_KMEANS_MULTIPASS && d_labels == NULL) ? align_up((size_t)n * 4) : 0;
    const size_t need = lab_bytes ? lab_bytes : 256; /* never 0: NULL d_temp asks the size */
    if (d_temp == NULL) {
        *temp_bytes = need;
        return cudaSuccess;
    }
    if (*temp_bytes < need || h_cols == NULL || d_cent == NULL || d_sums == NULL ||
        d_counts == NULL || d_inertia == NULL)
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    for (int j = 0; j < d; j++)
        if (h_cols[j] == NULL)
            return cudaErrorInvalidValue;
    int32_t *lab = lab_bytes ? (int32_t *)d_temp : d_labels;
    if (method == SL_K_KMEANS_MMA_FUSED)
        return dims_mma(d) == 8 ? run_mma<8>(h_cols, d, n, d_cent, k, d_sums, d_counts,
                                             d_inertia, lab, d_stop, stream)
                                : run_mma<16>(h_cols, d, n, d_cent, k, d_sums, d_counts,
                                              d_inertia, lab, d_stop, stream);
    if (method == SL_K_KMEANS_TILE || method == SL_K_KMEANS_TILE_PM) {
        auto run = [&](auto kern) {
            return kern(h_cols, d, n, d_cent, k, d_sums, d_counts, d_inertia, lab, d_stop, stream);
        };
        if (method == SL_K_KMEANS_TILE_PM)
            switch (dims_tile(d)) {
            case 4: return run(run_tile<4, true>);
            case 8: return run(run_tile<8, true>);
            case 16: return run(run_tile<16, true>);
            default: return run(run_tile<32, true>);
            }
        switch (dims_tile(d)) {
        case 4: return run(run_tile<4, false>);
        case 8: return run(run_tile<8, false>);
        case 16: return run(run_tile<16, false>);
        default: return run(run_tile<32, false>);
        }
    }
    const bool fuse = method == SL_K_KMEANS_FUSED;
    cudaError_t e = !fuse && d > 64
                        ? run_generic(h_cols, d, n, d_cent, k, d_inertia, lab, d_stop, stream)
                        : run_simt_d(fuse, h_cols, d, n, d_cent, k, d_sums, d_counts, d_inertia,
                                     lab, d_stop, stream);
    if (e != cudaSuccess || fuse)
        return e;
    /* multi-pass: the second pass adds the labelled points into the sums */
    return run_accumulate(h_cols, d, n, d_cent, lab, d_sums, d_counts, d_stop, stream);
}

extern "C" cudaError_t sl_k_kmeans_update(const float *d_cent_in, double *d_c64,
                                          const double *d_sums,
                                          const unsigned long long *d_counts, int k, int d,
                                          float *d_cent_out, double *d_shift, cudaStream_t stream)
{
    return sl_k_kmeans_update_if(d_cent_in, d_c64, d_sums, d_counts, k, d, d_cent_out, d_shift,
                                 NULL, stream);
}

extern "C" cudaError_t sl_k_kmeans_update_if(const float *d_cent_in, double *d_c64,
                                             const double *d_sums,
                                             const unsigned long long *d_counts, int k, int d,
                                             float *d_cent_out, double *d_shift,
                                             const int32_t *d_stop, cudaStream_t stream)
{
    if (k < 1 || d < 1 || !d_cent_in || !d_c64 || !d_sums || !d_counts || !d_cent_out || !d_shift)
        return cudaErrorInvalidValue;
    cudaError_t e = cudaMemsetAsync(d_shift, 0, 2 * sizeof(double), stream);
    if (e != cudaSuccess)
        return e;
    int64_t blocks = ((int64_t)k * d + kThreads - 1) / kThreads;
    if (blocks > 1024)
        blocks = 1024;
    update_kernel<<<(unsigned)blocks, kThreads, 0, stream>>>(d_cent_in, d_c64, d_sums, d_counts, k,
                                                             d, d_cent_out, d_shift, d_stop);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_kmeans_gather_f32(const float *const *h_cols, int d,
                                              const int64_t *d_rows, const int32_t *d_dst, int m,
                                              double *d_out, cudaStream_t stream)
{
    if (d < 1 || d > SL_K_KMEANS_MAX_DIMS || m < 0 || !h_cols)
        return cudaErrorInvalidValue;
    if (m == 0)
        return cudaSuccess;
    const int64_t total = (int64_t)m * d;
    gather_kernel<<<(unsigned)((total + 255) / 256), 256, 0, stream>>>(
        cols_of<SL_K_KMEANS_MAX_DIMS>(h_cols, d), d, d_rows, d_dst, m, d_out);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_kmeans_to_f32(const double *d_c64, int64_t count, float *d_cent,
                                          cudaStream_t stream)
{
    if (count < 0)
        return cudaErrorInvalidValue;
    if (count == 0)
        return cudaSuccess;
    int64_t blocks = (count + 255) / 256;
    to_f32_kernel<<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>(d_c64, count,
                                                                                d_cent);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_kmeans_pp_update_f32(const float *const *h_cols, int d, int64_t n,
                                                 const double *d_last, int first, double *d_d2,
                                                 cudaStream_t stream)
{
    if (d < 1 || d > SL_K_KMEANS_MAX_DIMS || n < 0 || !h_cols)
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    int64_t blocks = (n + 255) / 256;
    pp_update_kernel<<<(unsigned)(blocks < 65536 ? blocks : 65536), 256, 0, stream>>>(
        cols_of<SL_K_KMEANS_MAX_DIMS>(h_cols, d), d, n, d_last, first, d_d2);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_kmeans_pp_total(void *d_temp, size_t *temp_bytes, const double *d_d2,
                                            int64_t n, double *d_total, cudaStream_t stream)
{
    if (!temp_bytes || n < 1)
        return cudaErrorInvalidValue;
    size_t tb = 0;
    cudaError_t e = cub::DeviceReduce::Sum((void *)NULL, tb, d_d2, d_total, n, stream);
    if (e != cudaSuccess)
        return e;
    if (d_temp == NULL) {
        *temp_bytes = tb;
        return cudaSuccess;
    }
    if (*temp_bytes < tb)
        return cudaErrorInvalidValue;
    return cub::DeviceReduce::Sum(d_temp, tb, d_d2, d_total, n, stream);
}

extern "C" cudaError_t sl_k_kmeans_pp_pick(void *d_temp, size_t *temp_bytes, const double *d_d2,
                                           int64_t n, double u, long long *d_pick,
                                           cudaStream_t stream)
{
    if (!temp_bytes || n < 1)
        return cudaErrorInvalidValue;
    const int64_t nchunks = (n + kPickChunk - 1) / kPickChunk;
    size_t sb = 0;
    cudaError_t e = cub::DeviceScan::ExclusiveSum((void *)NULL, sb, (double *)NULL,
                                                  (double *)NULL, nchunks, stream);
    if (e != cudaSuccess)
        return e;
    const size_t cs = align_up((size_t)nchunks * sizeof(double));
    const size_t need = 2 * cs + align_up(sb);
    if (d_temp == NULL) {
        *temp_bytes = need;
        return cudaSuccess;
    }
    if (*temp_bytes < need || !d_pick)
        return cudaErrorInvalidValue;
    double *csum = (double *)d_temp, *cexcl = (double *)((char *)d_temp + cs);
    void *scan_tmp = (char *)d_temp + 2 * cs;
    pp_chunk_sums_kernel<<<(unsigned)nchunks, kPickThreads, 0, stream>>>(d_d2, n, csum);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    if ((e = cub::DeviceScan::ExclusiveSum(scan_tmp, sb, csum, cexcl, nchunks, stream)) !=
        cudaSuccess)
        return e;
    pp_search_kernel<<<1, kPickThreads, 0, stream>>>(d_d2, n, csum, cexcl, nchunks, u, d_pick);
    return cudaGetLastError();
}
