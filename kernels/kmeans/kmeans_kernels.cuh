/* __global__ entry points of GPU k-means (see sluice_k/kmeans.h for the contracts). */
#ifndef SLUICE_K_KMEANS_KERNELS_CUH
#define SLUICE_K_KMEANS_KERNELS_CUH

#include <math.h>
#include <stdint.h>

#include <cub/block/block_scan.cuh>

#include "sluice_k/kmeans.h"

namespace sluice_k {
namespace kmeans {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

/* Feature column pointers by value (kernel parameter space: read through the constant
 * cache, no device-side pointer table to allocate). */
template <int N>
struct Cols {
    const float *p[N];
};

__device__ __forceinline__ double warp_sum(double v)
{
#pragma unroll
    for (int o = 16; o; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* Adds the block's sum of v to *out (one atomic per block). All threads must call. */
__device__ __forceinline__ void block_add(double v, double *out)
{
    __shared__ double s_w[kWarps];
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0)
        s_w[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        double t = 0;
        for (int i = 0; i < kWarps; i++)
            t += s_w[i];
        atomicAdd(out, t);
    }
}

/* ||c||^2 / 2 in float32, summed in feature order without contraction: the CPU
 * operator's prepare_kernel does the same (fn += v * v; fn / 2). */
__device__ __forceinline__ float half_norm(const float *c, int d)
{
    float fn = 0.f;
    for (int j = 0; j < d; j++)
        fn = __fadd_rn(fn, __fmul_rn(c[j], c[j]));
    return fn * 0.5f;
}

__device__ __forceinline__ uint32_t to_tf32(float v)
{
    uint32_t u;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(v));
    return u;
}

/* Rows [c0, c0 + kc) of the centroids into shared memory with row stride SD (padding
 * features and rows zero); half norms (+inf for rows past k, so padding never wins). */
template <int D, int SD>
__device__ void load_chunk(float *s_c, float *s_hn, const float *__restrict__ cent, int d,
                           int k, int c0, int kc)
{
    for (int e = threadIdx.x; e < kc * D; e += kThreads) {
        int r = e / D, j = e % D, c = c0 + r;
        s_c[r * SD + j] = (c < k && j < d) ? cent[(int64_t)c * d + j] : 0.f;
    }
    for (int r = threadIdx.x; r < kc; r += kThreads) {
        int c = c0 + r;
        s_hn[r] = c < k ? half_norm(cent + (int64_t)c * d, d) : INFINITY;
    }
}

/* Loads P points (rows base + p * kThreads + tid) of D features, zero past d and n. */
template <int D, int P>
__device__ __forceinline__ void load_points(const Cols<D> &cols, int d, int64_t n, int64_t base,
                                            float (&x)[P][D])
{
#pragma unroll
    for (int p = 0; p < P; p++) {
        int64_t i = base + (int64_t)p * kThreads + threadIdx.x;
#pragma unroll
        for (int j = 0; j < D; j++)
            x[p][j] = (j < d && i < n) ? __ldg(cols.p[j] + i) : 0.f;
    }
}

/* The partial sums of a fused block: residual x - c per feature (row stride D + 1, odd,
 * so different labels spread over the banks) and counts, in nw copies of k * (D + 1)
 * floats and k counts each: one per warp (nw = kWarps, written without atomics) when
 * they fit shared memory, else one shared by the block (nw = 1, shared atomics). A warp
 * adds its 32 staged points (wx: row stride SD, float32; wl: labels, -1 = none) with the
 * features across the lanes (paper-004's Partitioned Features layout): one warp
 * instruction touches the D features of G = 32 / D points. In a private copy the only
 * lanes that can meet on an address are those of the G points of one step: with G = 2
 * (D = 16) the two half-warps compare labels and the first adds both values; with G > 2
 * (D < 16) they use shared atomics on the warp's copy; with G = 1 nothing collides. A
 * float atomicAdd on shared memory is a compare-and-swap loop, so the shared copy
 * (nw = 1) serializes whenever lanes or warps meet. */
template <int D, int SD, int CS = D> /* CS: row stride of the centroids cf */
__device__ __forceinline__ void warp_update(const float *wx, const int *wl, float *s_sum,
                                            unsigned *s_cnt, const float *cf, int d, int k,
                                            int nw)
{
    constexpr int G = D >= 32 ? 1 : 32 / D; /* points per step */
    constexpr int F = D > 32 ? D / 32 : 1;  /* features per lane */
    const int lane = threadIdx.x & 31;
    const int j0 = D >= 32 ? lane : lane % D, q = D >= 32 ? 0 : lane / D;
    if (nw > 1) {
        const int w = threadIdx.x >> 5;
        s_sum += (size_t)w * k * (D + 1);
        s_cnt += (size_t)w * k;
    }
    for (int p0 = 0; p0 < 32; p0 += G) {
        const int p = p0 + q;
        const int l = wl[p];
        if (nw > 1 && G == 2) {
            /* half-warps: lane and lane ^ 16 hold feature j0 of points p0 and p0 + 1 */
            const int ol = __shfl_xor_sync(0xffffffffu, l, 16);
#pragma unroll
            for (int f = 0; f < F; f++) {
                const int j = j0 + f * 32;
                const float v = l >= 0 ? wx[p * SD + j] - cf[l * CS + j] : 0.f;
                const float ov = __shfl_xor_sync(0xffffffffu, v, 16);
                if (l < 0 || j >= d || (l == ol && q == 1))
                    continue;
                s_sum[l * (D + 1) + j] += l == ol ? v + ov : v;
            }
            if (l >= 0 && j0 == 0 && !(l == ol && q == 1))
                s_cnt[l] += l == ol ? 2u : 1u;
            __syncwarp(); /* the next step's lanes may touch the same entries */
            continue;
        }
        if (l < 0)
            continue;
#pragma unroll
        for (int f = 0; f < F; f++) {
            const int j = j0 + f * 32;
            if (j >= d)
                continue;
            const float v = wx[p * SD + j] - cf[l * CS + j];
            if (nw > 1 && G == 1)
                s_sum[l * (D + 1) + j] += v;
            else
                atomicAdd(&s_sum[l * (D + 1) + j], v);
        }
        if (j0 == 0) {
            if (nw > 1 && G == 1)
                s_cnt[l] += 1u;
            else
                atomicAdd(&s_cnt[l], 1u);
        }
    }
}

/* Zeroes the nw copies of a fused block's partials. */
template <int D>
__device__ __forceinline__ void fused_zero(float *s_sum, unsigned *s_cnt, int k, int nw)
{
    for (int e = threadIdx.x; e < nw * k * (D + 1); e += kThreads)
        s_sum[e] = 0.f;
    for (int c = threadIdx.x; c < nw * k; c += kThreads)
        s_cnt[c] = 0;
}

/* Merges a fused block's partials (nw copies) into the global float64 accumulators. */
template <int D>
__device__ void fused_flush(const float *s_sum, const unsigned *s_cnt, int d, int k, int nw,
                            double *sums, unsigned long long *counts)
{
    __syncthreads();
    for (int e = threadIdx.x; e < k * d; e += kThreads) {
        float v = 0.f;
        for (int w = 0; w < nw; w++)
            v += s_sum[(size_t)w * k * (D + 1) + (e / d) * (D + 1) + e % d];
        if (v != 0.f)
            atomicAdd(&sums[e], (double)v);
    }
    for (int c = threadIdx.x; c < k; c += kThreads) {
        unsigned v = 0;
        for (int w = 0; w < nw; w++)
            v += s_cnt[(size_t)w * k + c];
        if (v)
            atomicAdd(&counts[c], (unsigned long long)v);
    }
}

/* a[p] = h - x[p].c for row c of the shared centroids (row stride D), for a thread's P
 * points in registers: FMAs in feature order (the negation of the CPU's -hn + x.c, so
 * equal bits), each float4 of the row read once for all P points. */
template <int D, int P>
__device__ __forceinline__ void centroid_scores(const float *s_c, float h, int c,
                                                const float (&x)[P][D], float (&a)[P])
{
    const float4 *cc = (const float4 *)(s_c + c * D);
#pragma unroll
    for (int p = 0; p < P; p++)
        a[p] = h;
#pragma unroll
    for (int j4 = 0; j4 < D / 4; j4++) {
        const float4 v = cc[j4];
#pragma unroll
        for (int p = 0; p < P; p++) {
            a[p] = fmaf(-x[p][4 * j4], v.x, a[p]);
            a[p] = fmaf(-x[p][4 * j4 + 1], v.y, a[p]);
            a[p] = fmaf(-x[p][4 * j4 + 2], v.z, a[p]);
            a[p] = fmaf(-x[p][4 * j4 + 3], v.w, a[p]);
        }
    }
}

/* Scores row c of the shared centroids (half norm h; centroid index ci) for a thread's
 * P points (centroid_scores); strict < keeps the lowest index. */
template <int D, int P>
__device__ __forceinline__ void score_centroid(const float *s_c, float h, int c, int ci,
                                               const float (&x)[P][D], float (&best)[P],
                                               int (&bi)[P])
{
    float a[P];
    centroid_scores<D, P>(s_c, h, c, x, a);
#pragma unroll
    for (int p = 0; p < P; p++)
        if (a[p] < best[p]) {
            best[p] = a[p];
            bi[p] = ci;
        }
}

/* Scores rows c and c + 1 of the shared centroids (half norms h0, h1) as score_centroid
 * does (the same FMAs in the same order, so the same float32 scores), but keeps only
 * the pair's minimum: best = min(best, min(s_c, s_c+1)) and bi = c (the pair's first
 * index) when that minimum is strictly below best. Two instructions a score for the
 * argmin instead of three (FMNMX of the pair, then FSETP, FMNMX, SEL per pair); the
 * caller finds which of the two won with pair_pick. Measured slower (H100, 2026-11-28,
 * 2^26 x 16, k = 64, gpu_kmeans_bench, same processes, medians of 5 in 12 alternating
 * rounds over two runs): 4.85-4.91 ms an iteration against TILE's 4.49-4.54, although
 * its SASS has 1.7% fewer instructions (loop 343 against 360 per 4 centroids x 4 points;
 * about 30 more a point after the scan for pair_pick). Not FMNMX's cost: the pair's
 * minimum by FSETP + FSEL (351 instructions a loop step; a bench variant, since
 * removed) was slower still (5.04-5.07). Not tried: keeping the winning pair's first
 * score in the scan instead of pair_pick's re-score (its scattered centroid rows double
 * the staging's shared-memory wavefronts). */
template <int D, int P>
__device__ __forceinline__ void score_pair(const float *s_c, float h0, float h1, int c,
                                           const float (&x)[P][D], float (&best)[P],
                                           int (&bi)[P])
{
    float a[P], b[P];
    centroid_scores<D, P>(s_c, h0, c, x, a);
    centroid_scores<D, P>(s_c, h1, c + 1, x, b);
#pragma unroll
    for (int p = 0; p < P; p++) {
        const float m = fminf(a[p], b[p]); /* a NaN score loses, as with a strict < */
        if (m < best[p])
            bi[p] = c;
        best[p] = fminf(best[p], m);
    }
}

/* The label of a point after score_pair's scan: bi is the first index of the winning
 * pair, best its minimum (exactly one of the pair's two scores). Scores row bi again
 * (the same FMAs, so the same bits) and takes bi when it equals best (== also holds for
 * -0 against +0, which the strict < of score_centroid would not have told apart either:
 * ties go to the lower index), else bi + 1. best == +inf: no score was ever below +inf,
 * and score_centroid's label is 0 (bi was never set). */
template <int D>
__device__ __forceinline__ int pair_pick(const float *s_c, const float *s_hn, int bi, float best,
                                         const float (&x)[D])
{
    const float4 *cc = (const float4 *)(s_c + bi * D);
    float a = s_hn[bi];
#pragma unroll
    for (int j4 = 0; j4 < D / 4; j4++) {
        const float4 v = cc[j4];
        a = fmaf(-x[4 * j4], v.x, a);
        a = fmaf(-x[4 * j4 + 1], v.y, a);
        a = fmaf(-x[4 * j4 + 2], v.z, a);
        a = fmaf(-x[4 * j4 + 3], v.w, a);
    }
    return (best < INFINITY && !(a == best)) ? bi + 1 : bi;
}

/* Float32 SIMT assignment: each thread keeps P points of D features in registers and
 * scans the centroids (shared memory, broadcast float4 reads); score = hn - x.c with
 * FMAs in feature order (the negation of the CPU's -hn + x.c, so equal bits), strict <
 * keeps the lowest index on ties. FUSE: all centroids in one chunk (kc >= k) and the
 * block's partial sums in shared memory; else chunks of kc centroids stream through
 * shared memory and labels go to memory. The tile loop's trip count is the same for all
 * threads of a block, so the __syncthreads around chunk loads are safe. */
template <int D, int P, bool FUSE>
__global__ void __launch_bounds__(kThreads)
    simt_kernel(Cols<D> cols, int d, int64_t n, const float *__restrict__ cent, int k, int kc,
                int nw, double *sums, unsigned long long *counts, double *inertia,
                int32_t *labels, const int32_t *stop)
{
    constexpr int SX = D + 4; /* staging row stride */
    if (stop && *stop)
        return; /* the Lloyd loop has stopped (sl_k_kmeans_check) */
    extern __shared__ __align__(16) float smem[];
    float *s_c = smem;
    float *s_hn = s_c + kc * D;
    float *s_sum = s_hn + kc;                                /* FUSE: nw * k * (D + 1) */
    unsigned *s_cnt = (unsigned *)(s_sum + (FUSE ? nw * k * (D + 1) : 0)); /* nw * k */
    float *s_x = (float *)(s_cnt + (FUSE ? nw * k : 0));     /* FUSE: kWarps * 32 * SX */
    int *s_l = (int *)(s_x + (FUSE ? kWarps * 32 * SX : 0)); /* FUSE: kWarps * 32 */
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int nchunks = (k + kc - 1) / kc;
    if (FUSE)
        fused_zero<D>(s_sum, s_cnt, k, nw);
    if (nchunks == 1)
        load_chunk<D, D>(s_c, s_hn, cent, d, k, 0, kc);
    __syncthreads();
    double my_in = 0;
    const int64_t tile = (int64_t)kThreads * P;
    for (int64_t base = (int64_t)blockIdx.x * tile; base < n; base += (int64_t)gridDim.x * tile) {
        float x[P][D];
        load_points<D, P>(cols, d, n, base, x);
        float best[P];
        int bi[P];
#pragma unroll
        for (int p = 0; p < P; p++) {
            best[p] = INFINITY;
            bi[p] = 0;
        }
        for (int ch = 0; ch < nchunks; ch++) {
            const int c0 = ch * kc;
            if (nchunks > 1) {
                __syncthreads();
                load_chunk<D, D>(s_c, s_hn, cent, d, k, c0, kc);
                __syncthreads();
            }
            const int cend = min(kc, (k - c0 + 3) & ~3);
#pragma unroll 2
            for (int c = 0; c < cend; c++)
                score_centroid<D, P>(s_c, s_hn[c], c, c0 + c, x, best, bi);
        }
#pragma unroll
        for (int p = 0; p < P; p++) {
            const int64_t i = base + (int64_t)p * kThreads + threadIdx.x;
            if (i < n) {
                float xn = 0.f;
#pragma unroll
                for (int j = 0; j < D; j++)
                    xn = fmaf(x[p][j], x[p][j], xn);
                const float dd = fmaf(2.f, best[p], xn);
                my_in += dd > 0.f ? dd : 0.f;
                if (labels)
                    labels[i] = bi[p];
            }
            if (FUSE) {
                /* stage the warp's 32 points, add them feature-across-lanes */
                float *wx = s_x + warp * 32 * SX;
                int *wl = s_l + warp * 32;
#pragma unroll
                for (int j = 0; j < D; j++)
                    wx[lane * SX + j] = x[p][j];
                wl[lane] = i < n ? bi[p] : -1;
                __syncwarp();
                warp_update<D, SX>(wx, wl, s_sum, s_cnt, s_c, d, k, nw);
                __syncwarp();
            }
        }
    }
    if (FUSE)
        fused_flush<D>(s_sum, s_cnt, d, k, nw, sums, counts);
    block_add(my_in, inertia);
}

/* ---- SL_K_KMEANS_TILE: float32 fused, each tile's update interleaved with the next ---- */

/* A block of kTileWarps independent warps. Each warp takes tiles of 32 * P points (thread
 * per point, P points of D features in registers, P * D = SL_K_KMEANS_TILE_PD = 64),
 * scores them against every centroid as simt_kernel does (same
 * FMA order and tie rule, so the same labels), then stages the residuals x - c of its
 * tile in shared memory. The adds of those residuals into the warp's partial sums are
 * P * D steps of G = 32 / D points with the features across the lanes, and they run
 * inside the NEXT tile's centroid loop (one after each centroid), where their
 * shared-memory latency hides under the FMAs: the separate update phase of simt_kernel,
 * latency-bound and taken by all warps at once, is gone. Lane L of a warp only ever
 * touches column L of its partial sums (layout [k][G][D]: G copies, one per point of a
 * step), so consecutive steps need no __syncwarp and lanes never collide. Counts: one
 * native shared integer atomic per point, block-wide. */
constexpr int kTileWarps = 4;
constexpr int kTileThreads = kTileWarps * 32;
/* Two knobs measured off (H100, 2026-11-27 08:24 UTC, 2^26 x 16, k = 64, same run): the
 * next tile's points prefetched into L2 4.60 ms, __launch_bounds__ asking for two blocks
 * an SM (about 140 registers) 4.62, both 4.67, neither 4.58 (that build with an explicit
 * second bound of 1: 139 registers; the plain bound below gives 128, 4.52 ms at 08:00). */
#ifndef SL_K_KMEANS_TILE_PREFETCH
#define SL_K_KMEANS_TILE_PREFETCH 0 /* 1: bench variant gpu_kmeans_bench_pf */
#endif
#ifndef SL_K_KMEANS_TILE_MINB
#define SL_K_KMEANS_TILE_MINB 1 /* 2: bench variant gpu_kmeans_bench_minb2 */
#endif
#ifndef SL_K_KMEANS_TILE_PD
#define SL_K_KMEANS_TILE_PD 64 /* P * D: bench variants gpu_kmeans_bench_p2 (32), _wide (128) */
#endif
constexpr int kTilePD = SL_K_KMEANS_TILE_PD;

/* Float offset of 16-byte chunk j4 of staged row p (rows of D floats, D <= 32): chunk j4
 * goes to chunk j4 ^ ((p / RPL) % CPR) of its row (CPR chunks a row, RPL = 8 / CPR rows
 * per 128 bytes), so that a quarter-warp's 16-byte stores of 8 consecutive rows and a
 * step's reads of G consecutive rows, features across the lanes, hit distinct banks. */
template <int D>
__device__ __forceinline__ int tile_swz(int p, int j4)
{
    constexpr int CPR = D / 4, RPL = 8 / CPR;
    return p * D + 4 * (j4 ^ ((p / RPL) % CPR));
}

/* Update step st + u of the staged tile: step s takes the G points G*s .. G*s+G-1, lane
 * q*D + j adding feature j of point G*s + q to column `lane` of its label's row (col: the
 * byte address of s_sum + lane). By tile_swz (p / RPL = s), that feature sits at float
 * (32 s + lane) ^ ((4 s) & (D - 1)). With st a multiple of 4 (GRP), the XOR is st's part
 * ((4 st) & 16, only for D = 32) and u's, whose byte offsets roff[u] = 4 * ((lane ^
 * ((4 u) & (D - 1))) + 32 u) the caller keeps in registers (u constant after unrolling). */
template <int D, bool GRP, int R, int SW = 32>
__device__ __forceinline__ void tile_step(const float *s_r, const int *s_l, char *col, int st,
                                          int u, int lane, const int (&roff)[R])
{
    constexpr int G = 32 / D;
    const int xs = GRP ? (D == 32 ? (4 * st) & 16 : 0) : (4 * st) & (D - 1);
    const char *rb = (const char *)(s_r + 32 * st);
    const int l = s_l[G * (st + u) + lane / D];
    const int ro = (GRP && D < 32) ? roff[u] : 4 * (((lane ^ xs) ^ ((4 * u) & (D - 1))) + 32 * u);
    const float r = *(const float *)(rb + ro);
    *(float *)(col + l * (SW * 4)) += r;
}

#if SL_K_KMEANS_TILE_MINB > 1
#define SL_K_TILE_BOUNDS __launch_bounds__(kTileThreads, SL_K_KMEANS_TILE_MINB)
#else
#define SL_K_TILE_BOUNDS __launch_bounds__(kTileThreads) /* 128 registers (a second 1: 139) */
#endif
/* SL_K_KMEANS_TILE_ONE (bench variant gpu_kmeans_bench_one): at d = 16 one copy of a
 * warp's partial sums ([k + 1][16] instead of [k + 1][32]; the two points of a step merged
 * when their labels are equal, see the staging), 55 KB a block at k = 64: four blocks
 * (16 warps) an SM instead of three, at most 128 registers, the same 360-instruction loop
 * step (SASS). Slower: TILE 4.67-4.69 ms against 4.52-4.54 in the default build, same
 * minutes (H100, 2026-11-28 01:00 UTC, 2^26 x 16, k = 64; TILE_PM 4.86-4.88 against
 * 4.88-4.91), labels and counts equal to FUSED's: a fourth warp a scheduler does not
 * raise the issue rate, so the kernel is not short of warps to hide latency. */
#ifndef SL_K_KMEANS_TILE_ONE
#define SL_K_KMEANS_TILE_ONE 0
#endif
/* Floats a row of a tile block's partial sums (32 lanes: G copies of D; ONE at D = 16: D). */
__host__ __device__ constexpr int tile_sum_row(int D)
{
    return SL_K_KMEANS_TILE_ONE && D == 16 ? D : 32;
}

#if SL_K_KMEANS_TILE_ONE /* four blocks an SM need at most 128 registers */
#undef SL_K_TILE_BOUNDS
#define SL_K_TILE_BOUNDS __launch_bounds__(kTileThreads, 4)
#endif

/* PM: the argmin by pairs (score_pair, pair_pick; the same labels), SL_K_KMEANS_TILE_PM. */
template <int D, int P, bool PM>
__global__ void SL_K_TILE_BOUNDS
    tile_kernel(Cols<D> cols, int d, int64_t n, const float *__restrict__ cent, int k,
                double *sums, unsigned long long *counts, double *inertia, int32_t *labels,
                const int32_t *stop)
{
    constexpr int TP = 32 * P;             /* points of a warp tile */
    constexpr int NST = P * D;             /* update steps of a tile (TP / G) */
    constexpr int SPI = NST / 16;          /* steps every four centroids: all by c = 64 */
    constexpr bool GRP = SPI % 4 == 0;     /* st stays a multiple of 4 (tile_step) */
    static_assert(P * D == kTilePD, "P * D");
    constexpr int SW = tile_sum_row(D); /* floats a row of the sums */
    constexpr bool ONE = SW != 32;      /* one copy: steps' equal labels merged at staging */
    if (stop && *stop)
        return; /* the Lloyd loop has stopped (sl_k_kmeans_check) */
    extern __shared__ __align__(16) float smem[];
    __shared__ double s_red[kTileWarps];
    const int k4 = (k + 3) & ~3;
    const int64_t wf = SW * (int64_t)(k + 1) + TP * D + TP; /* floats per warp */
    float *s_c = smem;                             /* k4 * D */
    float *s_hn = s_c + k4 * D;                    /* k4 */
    unsigned *s_cnt = (unsigned *)(s_hn + k4);     /* k4 */
    float *s_w0 = (float *)(s_cnt + k4);           /* kTileWarps * wf */
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float *s_sum = s_w0 + warp * wf;               /* [k + 1][SW]: row k takes points past n */
    float *s_r = s_sum + SW * (k + 1);             /* TP * D, 16-byte aligned */
    int *s_l = (int *)(s_r + TP * D);              /* TP */
    char *col = (char *)(s_sum + lane % SW);       /* this lane's column of the sums */
    int roff[SPI];                                 /* tile_step */
#pragma unroll
    for (int u = 0; u < SPI; u++)
        roff[u] = 4 * ((lane ^ ((4 * u) & (D - 1))) + 32 * u);
    for (int64_t e = threadIdx.x; e < kTileWarps * wf; e += kTileThreads)
        s_w0[e] = 0.f; /* labels too: 0 (+0.f bits) */
    for (int c = threadIdx.x; c < k4; c += kTileThreads) {
        s_cnt[c] = 0;
        s_hn[c] = c < k ? half_norm(cent + (int64_t)c * d, d) : INFINITY;
    }
    for (int e = threadIdx.x; e < k4 * D; e += kTileThreads) {
        const int c = e / D, j = e % D;
        s_c[e] = (c < k && j < d) ? cent[(int64_t)c * d + j] : 0.f;
    }
    __syncthreads();
    double my_in = 0;
    const int64_t ntiles = (n + TP - 1) / TP;
    int nst = 0; /* steps left over from the previous tile */
    for (int64_t t = (int64_t)blockIdx.x * kTileWarps + warp; t < ntiles;
         t += (int64_t)gridDim.x * kTileWarps) {
        const int64_t base = t * TP;
        float x[P][D];
#pragma unroll
        for (int p = 0; p < P; p++) {
            const int64_t i = base + p * 32 + lane;
#pragma unroll
            for (int j = 0; j < D; j++)
                x[p][j] = (j < d && i < n) ? __ldg(cols.p[j] + i) : 0.f;
        }
        if (SL_K_KMEANS_TILE_PREFETCH) {
            /* the warp's next tile into L2 while this one is scanned: its P * D lines of
             * 128 bytes, row `lane` of each feature (lanes < P; the feature index stays a
             * constant, so the column pointers stay in parameter space) */
            const int64_t i = base + (int64_t)gridDim.x * kTileWarps * TP + lane * 32;
#pragma unroll
            for (int j = 0; j < D; j++)
                if (lane < P && j < d && i < n)
                    asm volatile("prefetch.global.L2 [%0];" ::"l"(cols.p[j] + i));
        }
        float best[P];
        int bi[P];
#pragma unroll
        for (int p = 0; p < P; p++) {
            best[p] = INFINITY;
            bi[p] = 0;
        }
        int st = 0;
#pragma unroll 1
        for (int c = 0; c < k4; c += 4) {
            const float4 h = *(const float4 *)(s_hn + c);
            if (st + SPI <= nst) {
                /* a step after each centroid: the steps' shared-memory chains spread
                 * between the FMAs (PM: two after each pair) */
#pragma unroll
                for (int u = 0; u < 4; u += PM ? 2 : 1) {
                    if (PM)
                        score_pair<D, P>(s_c, (&h.x)[u], (&h.x)[u + 1], c + u, x, best, bi);
                    else
                        score_centroid<D, P>(s_c, (&h.x)[u], c + u, c + u, x, best, bi);
#pragma unroll
                    for (int v = u * SPI / 4; v < (u + (PM ? 2 : 1)) * SPI / 4; v++)
                        tile_step<D, GRP, SPI, SW>(s_r, s_l, col, st, v, lane, roff);
                }
                st += SPI;
            } else {
#pragma unroll
                for (int u = 0; u < 4; u += PM ? 2 : 1) {
                    if (PM)
                        score_pair<D, P>(s_c, (&h.x)[u], (&h.x)[u + 1], c + u, x, best, bi);
                    else
                        score_centroid<D, P>(s_c, (&h.x)[u], c + u, c + u, x, best, bi);
                }
            }
        }
        for (; st < nst; st++)
            tile_step<D, false, SPI, SW>(s_r, s_l, col, st, 0, lane, roff);
        __syncwarp(); /* every lane has read the staged tile */
        /* tile_swz of row p * 32 + lane: 32 / RPL is a multiple of CPR */
        const int sw = (lane / (32 / D)) % (D / 4);
        /* PM: which centroid of each winning pair (the P re-scores independent) */
        if (PM) {
#pragma unroll
            for (int p = 0; p < P; p++)
                bi[p] = pair_pick<D>(s_c, s_hn, bi[p], best[p], x[p]);
        }
        /* stage this tile: residuals x - c, labels (row k for points past n), counts */
#pragma unroll
        for (int p = 0; p < P; p++) {
            const int64_t i = base + p * 32 + lane;
            const bool ok = i < n;
            const int l = bi[p];
            const float4 *cl = (const float4 *)(s_c + l * D);
            int sl = ok ? l : k; /* the row the steps add this point to */
            /* ONE (one copy of the sums): the two points of a step (lanes 2m, 2m + 1)
             * must not add to the same row; where their rows are equal the even lane adds
             * both residuals and the odd one goes to row k (whose sums are never read) */
            bool same = false, any_same = false;
            if (ONE) {
                same = __shfl_xor_sync(0xffffffffu, sl, 1) == sl;
                any_same = __any_sync(0xffffffffu, same);
            }
            float dd = 0.f;
#pragma unroll
            for (int j4 = 0; j4 < D / 4; j4++) {
                const float4 cv = cl[j4];
                float4 r;
                r.x = x[p][4 * j4] - cv.x;
                r.y = x[p][4 * j4 + 1] - cv.y;
                r.z = x[p][4 * j4 + 2] - cv.z;
                r.w = x[p][4 * j4 + 3] - cv.w;
                dd = fmaf(r.x, r.x, dd);
                dd = fmaf(r.y, r.y, dd);
                dd = fmaf(r.z, r.z, dd);
                dd = fmaf(r.w, r.w, dd);
                if (ONE && any_same) { /* warp-uniform */
                    float4 o;
                    o.x = __shfl_xor_sync(0xffffffffu, r.x, 1);
                    o.y = __shfl_xor_sync(0xffffffffu, r.y, 1);
                    o.z = __shfl_xor_sync(0xffffffffu, r.z, 1);
                    o.w = __shfl_xor_sync(0xffffffffu, r.w, 1);
                    if (same && !(lane & 1)) {
                        r.x += o.x;
                        r.y += o.y;
                        r.z += o.z;
                        r.w += o.w;
                    }
                }
                *(float4 *)(s_r + (p * 32 + lane) * D + 4 * (j4 ^ sw)) = r; /* tile_swz */
            }
            if (same && (lane & 1))
                sl = k;
            s_l[p * 32 + lane] = sl;
            if (ok) {
                my_in += dd;
                atomicAdd(&s_cnt[l], 1u);
                if (labels)
                    labels[i] = l;
            }
        }
        __syncwarp(); /* the staged tile is visible to every lane */
        nst = NST;
    }
    for (int st = 0; st < nst; st++)
        tile_step<D, false, SPI, SW>(s_r, s_l, col, st, 0, lane, roff);
    __syncthreads();
    /* the block's partials: kTileWarps warps x G copies of [k][D] */
    for (int e = threadIdx.x; e < k * d; e += kTileThreads) {
        const int c = e / d, j = e % d;
        float v = 0.f;
        for (int w = 0; w < kTileWarps; w++)
#pragma unroll
            for (int q = 0; q < SW / D; q++)
                v += s_w0[w * wf + c * SW + q * D + j];
        if (v != 0.f)
            atomicAdd(&sums[e], (double)v);
    }
    for (int c = threadIdx.x; c < k; c += kTileThreads)
        if (s_cnt[c])
            atomicAdd(&counts[c], (unsigned long long)s_cnt[c]);
    my_in = warp_sum(my_in);
    if (lane == 0)
        s_red[warp] = my_in;
    __syncthreads();
    if (threadIdx.x == 0) {
        double tot = 0;
        for (int w = 0; w < kTileWarps; w++)
            tot += s_red[w];
        atomicAdd(inertia, tot);
    }
}

/* ---- SL_K_KMEANS_MMA_FUSED: 2xTF32 tensor-core scores, packed top-2, exact re-check ---- */

/* c += a b on tensor cores: one m16n8k8 product of TF32 operands, float32 accumulation. */
__device__ __forceinline__ void mma_tf32(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

#ifndef SL_K_KMEANS_MMA_NO_RECHECK
#define SL_K_KMEANS_MMA_NO_RECHECK 0
#endif
constexpr int kMmaMaxK = 256; /* centroid indices packed into the low 8 bits of a score */
/* Half norm of a padding centroid (index k..k8-1): finite, so that packed keys stay
 * ordered numbers, and far above any score of real data that does not overflow. */
constexpr float kMmaPad = 0x1p126f;

/* A warp's 32 points as mma A fragments (m16n8k8, row = point, column = feature), two
 * 16-row tiles: x[mt][ks][q] = feature ks*8 + t + 4*(q >> 1) of row base + mt*16 + g +
 * 8*(q & 1) (lane = 4g + t), zero past d and n. One load instruction reads 8 consecutive
 * rows of 4 columns: whole 32-byte sectors. pc[ks][h]: column ks*8 + t + 4h, or NULL. */
template <int D>
__device__ __forceinline__ void mma_load(const float *const (&pc)[D / 8][2], int64_t n,
                                         int64_t base, int g, float (&x)[2][D / 8][4])
{
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int ks = 0; ks < D / 8; ks++)
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const int64_t i = base + mt * 16 + g + 8 * (q & 1);
                const float *p = pc[ks][q >> 1];
                x[mt][ks][q] = (p && i < n) ? __ldg(p + i) : 0.f;
            }
}

/* Keeps the two smallest packed keys of a row: the score with its low bits replaced by
 * the centroid index (distinct keys, index recoverable; changes the score by at most
 * 2^-15 of its magnitude for indices below 256). */
__device__ __forceinline__ void mma_top2(float v, int c, unsigned imask, float &b1, float &b2)
{
    const float key = __int_as_float((__float_as_int(v) & ~(int)imask) | c);
    const float m = fmaxf(b1, key);
    b1 = fminf(b1, key);
    b2 = fminf(b2, m);
}

/* The exact float32 label of the point xrow (the CPU operator's score hn - x.c with FMAs
 * in feature order, ties to the lowest index), the warp together: lane l scores centroids
 * l, l + 32, ...; the (score, index) minimum over the warp. All lanes return it. */
template <int D>
__device__ int mma_rescan(const float *xrow, const float *s_cf, const float *s_hn, int k,
                          int lane)
{
    constexpr int SF = D + 1;
    float xr[D];
#pragma unroll
    for (int j = 0; j < D; j++)
        xr[j] = xrow[j]; /* the row staged in shared memory (zero past d), a broadcast */
    float best = INFINITY;
    int bi = 0x7fffffff;
    for (int c = lane; c < k; c += 32) {
        float a = s_hn[c];
#pragma unroll
        for (int j = 0; j < D; j++)
            a = fmaf(-xr[j], s_cf[c * SF + j], a);
        if (a < best) {
            best = a;
            bi = c;
        }
    }
#pragma unroll
    for (int o = 16; o; o >>= 1) {
        const float ob = __shfl_xor_sync(0xffffffffu, best, o);
        const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
        if (ob < best || (ob == best && oi < bi)) {
            best = ob;
            bi = oi;
        }
    }
    return bi == 0x7fffffff ? 0 : bi;
}

/* Fused assignment + update with the scores on tensor cores (kmeans.h, MMA_FUSED).
 * Each warp takes 32 points at a time (the next 32 are loaded while it works) as mma A
 * fragments of x rounded to TF32; the centroids are the B operand split in two TF32
 * parts (c = ch + cl to 2^-22), preformatted in shared memory, the half norms the
 * accumulator input, so one score hn - x.c costs two mma per 8 features. A lane keeps,
 * for each of its 4 rows, the two smallest scores with the centroid index packed into
 * their low bits (4 instructions a score); the quad merges them. Error: x's rounding
 * moves a score difference s(c) - s(c1) by at most 2^-11 ||x|| ||c - c1||, and a
 * centroid that could beat c1 in float32 lies within about r1 = ||x - c1|| of x, so
 * with ||c - c1|| <= 2 r1 the label c1 is exact when the gap to the second key exceeds
 * E = 2^-9 ||x|| r1 + slack (||x|| cmax + hmax) (the last term: TF32 products and
 * accumulation, the low part of c, the packed index, float32 rounding; a margin of 2
 * or more on each; the packed keys' term grows with k). Rows within E (near-ties, equal
 * centroids, overflow) are scored again exactly by the whole warp (mma_rescan). The
 * residuals x - c go to the warp's partial sums through warp_update; inertia is
 * sum (x - c)^2. On an H100 (2^26 x 16, k = 64) 7.4 ms an iteration, of which the
 * re-checks take 0.6 ms (3-6% of the rows of the benchmark's blobs are within E: a blob
 * holding two centroids; 2.2 ms while they read the row from global memory); shared
 * float atomics instead of warp_update measured about the same (8.7 against 8.9 ms
 * then). */
template <int D>
__global__ void __launch_bounds__(kThreads, 2)
    mma_kernel(Cols<D> cols, int d, int64_t n, const float *__restrict__ cent, int k, int nw,
               double *sums, unsigned long long *counts, double *inertia, int32_t *labels,
               const int32_t *stop)
{
    if (stop && *stop)
        return;
    constexpr int KS = D / 8, SF = D + 1, SX = D + 4;
    const int k8 = (k + 7) & ~7, nts = k8 / 8;
    extern __shared__ __align__(16) float smem[];
    float4 *s_b = (float4 *)smem;                      /* nts * KS * 32: {ch0, ch1, cl0, cl1} */
    float *s_hn = (float *)(s_b + (size_t)nts * KS * 32); /* k8 half norms (pad: kMmaPad) */
    float *s_cf = s_hn + k8;                           /* k * SF float32 centroids */
    float *s_sum = s_cf + (size_t)k * SF;              /* nw * k * SF residual sums */
    unsigned *s_cnt = (unsigned *)(s_sum + (size_t)nw * k * SF); /* nw * k */
    float *s_x = (float *)(s_cnt + (size_t)nw * k);    /* kWarps * 32 * SX staged points */
    int *s_l = (int *)(s_x + kWarps * 32 * SX);        /* kWarps * 32 labels */
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    for (int e = threadIdx.x; e < nts * KS * 32; e += kThreads) {
        const int l = e & 31, ks = (e >> 5) % KS, c = ((e >> 5) / KS) * 8 + (l >> 2);
        const int j0 = ks * 8 + (l & 3), j1 = j0 + 4;
        const float v0 = (c < k && j0 < d) ? cent[(int64_t)c * d + j0] : 0.f;
        const float v1 = (c < k && j1 < d) ? cent[(int64_t)c * d + j1] : 0.f;
        const float h0 = __uint_as_float(to_tf32(v0)), h1 = __uint_as_float(to_tf32(v1));
        s_b[e] = make_float4(h0, h1, __uint_as_float(to_tf32(v0 - h0)),
                             __uint_as_float(to_tf32(v1 - h1)));
    }
    for (int c = threadIdx.x; c < k8; c += kThreads)
        s_hn[c] = c < k ? half_norm(cent + (int64_t)c * d, d) : kMmaPad;
    for (int e = threadIdx.x; e < k * SF; e += kThreads) {
        const int c = e / SF, j = e % SF;
        s_cf[e] = j < d ? cent[(int64_t)c * d + j] : 0.f;
    }
    fused_zero<D>(s_sum, s_cnt, k, nw);
    __syncthreads();
    float hmax = 0.f;
    for (int c = 0; c < k; c++)
        hmax = fmaxf(hmax, s_hn[c]); /* NaN-free: inf stays inf */
    const float cmax = sqrtf(2.f * hmax);
    const int ib = 32 - __clz(k8 - 1); /* index bits of a key */
    const unsigned imask = (1u << ib) - 1u;
    /* bound's last term / (||x|| cmax + hmax): 2^-15 for products, accumulation, the low
     * part of c and float32 rounding (about 2^-17.2 together), 2^(ib - 21) for the two
     * packed keys (2^(ib - 23) each) */
    const float slack = 0x1p-15f + __int_as_float((127 + ib - 21) << 23);
    float *wx = s_x + warp * 32 * SX;
    int *wl = s_l + warp * 32;
    const float *pc[KS][2];
#pragma unroll
    for (int ks = 0; ks < KS; ks++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            pc[ks][h] = NULL; /* constant indices: no local copy of the parameters */
#pragma unroll
            for (int tt = 0; tt < 4; tt++)
                if (t == tt && ks * 8 + tt + 4 * h < d)
                    pc[ks][h] = cols.p[ks * 8 + tt + 4 * h];
        }

    double my_in = 0;
    const int64_t ntile = (n + 31) / 32, wstride = (int64_t)gridDim.x * kWarps;
    int64_t tile = (int64_t)blockIdx.x * kWarps + warp;
    float x[2][KS][4];
    mma_load<D>(pc, n, tile * 32, g, x);
    for (; tile < ntile; tile += wstride) {
        const int64_t base = tile * 32;
        float nx[2][KS][4];
        mma_load<D>(pc, n, (tile + wstride) * 32, g, nx); /* zeros past the end */
        uint32_t a[2][KS][4];
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
            for (int ks = 0; ks < KS; ks++)
#pragma unroll
                for (int q = 0; q < 4; q++)
                    a[mt][ks][q] = to_tf32(-x[mt][ks][q]);
        float b1[4], b2[4];
#pragma unroll
        for (int r = 0; r < 4; r++)
            b1[r] = b2[r] = INFINITY;
        for (int nt = 0; nt < nts; nt++) {
            const float2 h = ((const float2 *)s_hn)[nt * 4 + t];
            float4 bf[KS];
#pragma unroll
            for (int ks = 0; ks < KS; ks++)
                bf[ks] = s_b[(nt * KS + ks) * 32 + lane];
            const int c = nt * 8 + 2 * t;
            /* the two row tiles' chains interleaved (a warp issues in order): low parts
             * of c first, then the high parts */
            float acc[2][4];
#pragma unroll
            for (int mt = 0; mt < 2; mt++) {
                acc[mt][0] = acc[mt][2] = h.x;
                acc[mt][1] = acc[mt][3] = h.y;
            }
#pragma unroll
            for (int ks = 0; ks < KS; ks++)
#pragma unroll
                for (int mt = 0; mt < 2; mt++)
                    mma_tf32(acc[mt], a[mt][ks], __float_as_uint(bf[ks].z),
                             __float_as_uint(bf[ks].w));
#pragma unroll
            for (int ks = 0; ks < KS; ks++)
#pragma unroll
                for (int mt = 0; mt < 2; mt++)
                    mma_tf32(acc[mt], a[mt][ks], __float_as_uint(bf[ks].x),
                             __float_as_uint(bf[ks].y));
#pragma unroll
            for (int mt = 0; mt < 2; mt++) {
                mma_top2(acc[mt][0], c, imask, b1[2 * mt], b2[2 * mt]);
                mma_top2(acc[mt][1], c + 1, imask, b1[2 * mt], b2[2 * mt]);
                mma_top2(acc[mt][2], c, imask, b1[2 * mt + 1], b2[2 * mt + 1]);
                mma_top2(acc[mt][3], c + 1, imask, b1[2 * mt + 1], b2[2 * mt + 1]);
            }
        }
        /* slot r = 2 mt + h: row base + mt*16 + h*8 + g, features of x[mt][ks][h], [h + 2] */
        int idx[4];
        bool need[4];
#pragma unroll
        for (int r = 0; r < 4; r++) {
#pragma unroll
            for (int o = 1; o <= 2; o <<= 1) {
                const float o1 = __shfl_xor_sync(0xffffffffu, b1[r], o);
                const float o2 = __shfl_xor_sync(0xffffffffu, b2[r], o);
                b2[r] = fminf(fminf(b2[r], o2), fmaxf(b1[r], o1));
                b1[r] = fminf(b1[r], o1);
            }
            const int mt = r >> 1, h = r & 1, pr = mt * 16 + h * 8 + g;
            float xn = 0.f;
#pragma unroll
            for (int ks = 0; ks < KS; ks++)
#pragma unroll
                for (int hh = 0; hh < 2; hh++) {
                    const float xv = x[mt][ks][h + 2 * hh];
                    xn = fmaf(xv, xv, xn);
                    /* staged row-wise for the re-check and warp_update (conflict-free:
                     * rows g apart by SX = D + 4) */
                    wx[pr * SX + ks * 8 + t + 4 * hh] = xv;
                }
            xn += __shfl_xor_sync(0xffffffffu, xn, 1);
            xn += __shfl_xor_sync(0xffffffffu, xn, 2);
            idx[r] = __float_as_int(b1[r]) & (int)imask;
            const float xl = sqrtf(xn), big = fmaf(xl, cmax, hmax);
            const float r2 = fmaxf(0.f, fmaf(2.f, b1[r], xn) + 0x1p-9f * big);
            /* + 2^-118: tensor cores may flush subnormal products (2^-126 each) */
            const float bound = fmaf(0x1p-9f * xl, sqrtf(r2), fmaf(slack, big, 0x1p-118f));
            need[r] = base + pr < n && (!(b2[r] - b1[r] > bound) || idx[r] >= k);
        }
        __syncwarp();
        /* near-ties: exact float32 labels, one row at a time by the whole warp
         * (SL_K_KMEANS_MMA_NO_RECHECK: a benchmark variant that times the kernel without
         * them; its labels are not exact) */
#pragma unroll
        for (int r = 0; r < 4 && !SL_K_KMEANS_MMA_NO_RECHECK; r++) {
            unsigned m = __ballot_sync(0xffffffffu, need[r] && t == 0);
            while (m) {
                const int src = __ffs(m) - 1;
                m &= m - 1;
                const int pr = (r >> 1) * 16 + (r & 1) * 8 + (src >> 2);
                const int bi = mma_rescan<D>(wx + pr * SX, s_cf, s_hn, k, lane);
                if (g == (src >> 2))
                    idx[r] = bi;
            }
        }
        /* inertia sum (x - c)^2, labels; warp_update adds the residuals x - c to the
         * warp's partial sums without atomics */
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int mt = r >> 1, h = r & 1, pr = mt * 16 + h * 8 + g;
            const int64_t row = base + pr;
            const bool ok = row < n;
            const int l = ok ? idx[r] : 0;
            float dd = 0.f;
#pragma unroll
            for (int ks = 0; ks < KS; ks++)
#pragma unroll
                for (int hh = 0; hh < 2; hh++) {
                    const int j = ks * 8 + t + 4 * hh;
                    const float v = x[mt][ks][h + 2 * hh] - s_cf[l * SF + j];
                    dd = fmaf(v, v, dd);
                }
            dd += __shfl_xor_sync(0xffffffffu, dd, 1);
            dd += __shfl_xor_sync(0xffffffffu, dd, 2);
            if (t == 0) {
                wl[pr] = ok ? l : -1;
                if (ok) {
                    my_in += dd;
                    if (labels)
                        labels[row] = l;
                }
            }
        }
        __syncwarp();
        warp_update<D, SX, SF>(wx, wl, s_sum, s_cnt, s_cf, d, k, nw);
        __syncwarp(); /* wx, wl are refilled by the next tile */
#pragma unroll
        for (int e = 0; e < 8 * KS; e++) /* the prefetched tile becomes the current one */
            (&x[0][0][0])[e] = (&nx[0][0][0])[e];
    }
    fused_flush<D>(s_sum, s_cnt, d, k, nw, sums, counts);
    block_add(my_in, inertia);
}

/* Generic float32 assignment for any d (multi-pass only): one point per thread, its
 * features read through L1, centroids in shared-memory chunks of kc. Slow, but the
 * fast kernels cover d <= 64. */
__global__ void __launch_bounds__(kThreads)
    generic_assign_kernel(Cols<SL_K_KMEANS_MAX_DIMS> cols, int d, int64_t n,
                          const float *__restrict__ cent, int k, int kc, double *inertia,
                          int32_t *labels, const int32_t *stop)
{
    if (stop && *stop)
        return;
    extern __shared__ __align__(16) float smem[];
    float *s_c = smem, *s_hn = smem + kc * d;
    double my_in = 0;
    for (int64_t base = (int64_t)blockIdx.x * kThreads; base < n;
         base += (int64_t)gridDim.x * kThreads) {
        const int64_t i = base + threadIdx.x;
        float best = INFINITY;
        int bi = 0;
        for (int c0 = 0; c0 < k; c0 += kc) {
            __syncthreads();
            const int rows = min(kc, k - c0);
            for (int e = threadIdx.x; e < rows * d; e += kThreads)
                s_c[e] = cent[(int64_t)c0 * d + e];
            for (int r = threadIdx.x; r < rows; r += kThreads)
                s_hn[r] = half_norm(cent + (int64_t)(c0 + r) * d, d);
            __syncthreads();
            if (i >= n)
                continue;
            for (int c = 0; c < rows; c++) {
                float a = s_hn[c];
                for (int j = 0; j < d; j++)
                    a = fmaf(-__ldg(cols.p[j] + i), s_c[c * d + j], a);
                if (a < best) {
                    best = a;
                    bi = c0 + c;
                }
            }
        }
        if (i < n) {
            float xn = 0.f;
            for (int j = 0; j < d; j++) {
                float v = __ldg(cols.p[j] + i);
                xn = fmaf(v, v, xn);
            }
            const float dd = fmaf(2.f, best, xn);
            my_in += dd > 0.f ? dd : 0.f;
            labels[i] = bi;
        }
    }
    block_add(my_in, inertia);
}

/* Second pass of the multi-pass methods: point i into sums[label] (float64 atomics of
 * the residual) and counts[label]. */
__global__ void accumulate_kernel(Cols<SL_K_KMEANS_MAX_DIMS> cols, int d, int64_t n,
                                  const float *__restrict__ cent, const int32_t *labels,
                                  double *sums, unsigned long long *counts, const int32_t *stop)
{
    if (stop && *stop)
        return;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int l = labels[i];
        atomicAdd(&counts[l], 1ull);
        for (int j = 0; j < d; j++)
            atomicAdd(&sums[(int64_t)l * d + j],
                      (double)(__ldg(cols.p[j] + i) - cent[(int64_t)l * d + j]));
    }
}

/* Centroid update (CPU operator's km_update), one element per thread. */
__global__ void update_kernel(const float *__restrict__ cent_in, double *c64,
                              const double *__restrict__ sums,
                              const unsigned long long *__restrict__ counts, int k, int d,
                              float *cent_out, double *shift, const int32_t *stop)
{
    if (stop && *stop)
        return;
    double sh = 0, nr = 0;
    const int64_t total = (int64_t)k * d;
    for (int64_t e = (int64_t)blockIdx.x * kThreads + threadIdx.x; e < total;
         e += (int64_t)gridDim.x * kThreads) {
        const unsigned long long cnt = counts[e / d];
        const double old = c64[e];
        const double nv = cnt ? (double)cent_in[e] + sums[e] / (double)cnt : old;
        sh += (nv - old) * (nv - old);
        nr += old * old;
        c64[e] = nv;
        cent_out[e] = (float)nv;
    }
    block_add(sh, shift);
    __syncthreads();
    block_add(nr, shift + 1);
}

/* Zeroes the accumulators of an iteration unless the loop has stopped. */
__global__ void clear_kernel(double *sums, int64_t kd, unsigned long long *counts, int k,
                             double *inertia, const int32_t *stop)
{
    if (stop && *stop)
        return;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < kd;
         e += (int64_t)gridDim.x * blockDim.x) {
        sums[e] = 0;
        if (e < k)
            counts[e] = 0;
        if (e == 0)
            *inertia = 0;
    }
}

/* The CPU operator's stopping rule on the device: one more iteration is done; stop
 * after max_iter of them or when the shift is within tol^2 of the norm. */
__global__ void check_kernel(const double *shift, double tol2, int64_t max_iter, int32_t *state)
{
    if (state[0])
        return;
    const int32_t it = state[1] + 1;
    state[1] = it;
    if (it >= max_iter || shift[0] <= tol2 * shift[1])
        state[0] = 1;
}

__global__ void gather_kernel(Cols<SL_K_KMEANS_MAX_DIMS> cols, int d, const int64_t *rows,
                              const int32_t *dst, int m, double *out)
{
    const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= (int64_t)m * d)
        return;
    const int r = (int)(e / d), j = (int)(e % d);
    out[(int64_t)dst[r] * d + j] = (double)cols.p[j][rows[r]];
}

__global__ void to_f32_kernel(const double *in, int64_t count, float *out)
{
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < count;
         e += (int64_t)gridDim.x * blockDim.x)
        out[e] = (float)in[e];
}

/* k-means++: squared distance (float64, feature order) to the last chosen centroid. */
__global__ void pp_update_kernel(Cols<SL_K_KMEANS_MAX_DIMS> cols, int d, int64_t n,
                                 const double *__restrict__ last, int first, double *d2)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        double dd = 0;
        for (int j = 0; j < d; j++) {
            const double v = (double)__ldg(cols.p[j] + i) - last[j];
            dd += v * v;
        }
        const double old = first ? INFINITY : d2[i];
        d2[i] = dd < old ? dd : old;
    }
}

constexpr int kPickThreads = 1024;
constexpr int kPickChunk = 2 * kPickThreads; /* rows per chunk sum */

__global__ void pp_chunk_sums_kernel(const double *__restrict__ d2, int64_t n, double *csum)
{
    __shared__ double s_w[kPickThreads / 32];
    const int64_t base = (int64_t)blockIdx.x * kPickChunk;
    double v = 0;
    for (int q = 0; q < 2; q++) {
        int64_t i = base + q * kPickThreads + threadIdx.x;
        if (i < n)
            v += d2[i];
    }
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0)
        s_w[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        double t = 0;
        for (int w = 0; w < kPickThreads / 32; w++)
            t += s_w[w];
        csum[blockIdx.x] = t;
    }
}

/* One block: the first chunk whose inclusive prefix passes u, then a block scan inside
 * it (and the next ones, if rounding or zero distances push the pick further). */
__global__ void __launch_bounds__(kPickThreads)
    pp_search_kernel(const double *__restrict__ d2, int64_t n, const double *__restrict__ csum,
                     const double *__restrict__ cexcl, int64_t nchunks, double u,
                     long long *pick)
{
    typedef cub::BlockScan<double, kPickThreads> Scan;
    __shared__ typename Scan::TempStorage tmp;
    __shared__ unsigned long long s_first;
    __shared__ double s_carry;
    if (threadIdx.x == 0)
        s_first = (unsigned long long)nchunks;
    __syncthreads();
    for (int64_t b = threadIdx.x; b < nchunks; b += kPickThreads)
        if (cexcl[b] + csum[b] > u) {
            atomicMin(&s_first, (unsigned long long)b);
            break;
        }
    __syncthreads();
    const int64_t b0 = (int64_t)s_first;
    __syncthreads(); /* every thread has read s_first before it is reused */
    if (threadIdx.x == 0) {
        s_carry = b0 < nchunks ? cexcl[b0] : 0;
        s_first = (unsigned long long)n;
    }
    __syncthreads();
    for (int64_t b = b0; b < nchunks; b++) {
        const int64_t i0 = b * kPickChunk + 2 * threadIdx.x;
        double v[2] = {i0 < n ? d2[i0] : 0, i0 + 1 < n ? d2[i0 + 1] : 0};
        double incl[2], total;
        Scan(tmp).InclusiveSum(v, incl, total);
        const double carry = s_carry;
        for (int q = 0; q < 2; q++)
            if (i0 + q < n && carry + incl[q] > u && v[q] > 0)
                atomicMin(&s_first, (unsigned long long)(i0 + q));
        __syncthreads();
        if (s_first < (unsigned long long)n)
            break;
        if (threadIdx.x == 0)
            s_carry = carry + total;
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *pick = s_first < (unsigned long long)n ? (long long)s_first : (long long)(n - 1);
}

} // namespace kmeans
} // namespace sluice_k

#endif /* SLUICE_K_KMEANS_KERNELS_CUH */
