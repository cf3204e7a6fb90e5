/* k-means assignment kernels: nearest centroid of every point, and the per-centroid sums.
 *
 * argmin_c ||x - c||^2 = argmax_c (x.c - ||c||^2 / 2), so the inner loop is a small
 * matrix product. Points arrive column-major (one array per feature, as the batch holds
 * them), so 8 consecutive points fill one 256-bit vector and no transposition is needed.
 * The AVX2 kernel takes blocks of 24 points (3 vectors) x 4 centroids: 12 accumulators
 * start at -||c||^2/2 and take d FMAs each, with the points' features reloaded from L1
 * and each centroid value broadcast; per 4 centroids a compare, a max, an AND and an
 * integer max keep the best score and index per lane. The centroids (k x d floats, 4 KiB
 * for k=64 d=16) stay in L1. Each block is added to its centroids' float64 sums right
 * after it is assigned, while its points are still in L1, so the points are read from
 * memory once per iteration. This is built with __attribute__((target)) and picked at
 * run time, so the library needs no -march flag. */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "kmeans_int.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define KM_X86 1
#endif

/* Blocks ahead that assign_block_avx2 prefetches. */
#define KM_PREFETCH 2
/* Centroids a block is scored against at once (kp is a multiple of it). */
#define KM_CBLOCK 4

/* Portable: one point at a time, float32 accumulation as in the vector kernel. */
static void assign_f32_scalar(const float *const *cols, int64_t i0, int64_t n, int d,
                              const float *ct, const float *hn, int kp, int32_t *labels,
                              float *dist)
{
    for (int64_t i = i0; i < n; i++) {
        float xn = 0, best = -INFINITY;
        int32_t bi = 0;
        for (int j = 0; j < d; j++)
            xn += cols[j][i] * cols[j][i];
        for (int c = 0; c < kp; c++) {
            float s = -hn[c];
            for (int j = 0; j < d; j++)
                s += cols[j][i] * ct[c * d + j];
            if (s > best) {
                best = s;
                bi = c;
            }
        }
        labels[i] = bi;
        float dd = xn - 2 * best;
        dist[i] = dd > 0 ? dd : 0;
    }
}

#ifdef KM_X86
/* Scores of 24 points (3 vectors of 8) against all kp centroids, 4 centroids at a time:
 * 12 accumulators start at -||c||^2/2 and take d FMAs each (12 independent chains cover
 * the FMA latency on both pipes). Hot loop, kept long on purpose: the accumulators, the
 * 3 point vectors and the broadcast centroid value fill the 16 registers, so the best
 * score and index per lane live in L1 between groups of 4 centroids. The index is kept
 * with an AND and an integer max instead of a blend (a blend shares the FMA pipes on
 * AMD Zen): centroids come in increasing order, so where a later centroid scores
 * strictly higher its index is the larger one; ties keep the lowest index. */
__attribute__((target("avx2,fma"))) static void assign_block_avx2(const float *const *cols,
                                                                 int64_t i, int d,
                                                                 const float *ct, const float *hn,
                                                                 int kp, int32_t *labels,
                                                                 float *dist)
{
    __m256 best[KM_BLOCK / 8];
    __m256i bidx[KM_BLOCK / 8];
    for (int v = 0; v < KM_BLOCK / 8; v++) {
        best[v] = _mm256_set1_ps(-INFINITY);
        bidx[v] = _mm256_setzero_si256();
    }
    /* The d columns are d sequential streams, more than the hardware prefetcher follows
     * at this slow pace: fetch the lines of the block KM_PREFETCH blocks ahead (2 lines
     * a column cover the block's 96 bytes however they straddle). Prefetching past the
     * end of a column is harmless. */
    for (int j = 0; j < d; j++) {
        const char *ahead = (const char *)(cols[j] + i + KM_PREFETCH * KM_BLOCK);
        __builtin_prefetch(ahead);
        __builtin_prefetch(ahead + 64);
    }
    /* a[v][q]: point vector v against centroid c + q. The loops over v and q are unrolled
     * (constant bounds), so the arrays live in registers. */
    for (int c = 0; c < kp; c += KM_CBLOCK) {
        const float *c0 = ct + (int64_t)c * d;
        __m256 a[KM_BLOCK / 8][KM_CBLOCK];
#pragma GCC unroll 4
        for (int q = 0; q < KM_CBLOCK; q++) {
            __m256 h = _mm256_set1_ps(-hn[c + q]);
#pragma GCC unroll 3
            for (int v = 0; v < KM_BLOCK / 8; v++)
                a[v][q] = h;
        }
        for (int j = 0; j < d; j++) {
            const float *x = cols[j] + i;
            __m256 xv[KM_BLOCK / 8];
#pragma GCC unroll 3
            for (int v = 0; v < KM_BLOCK / 8; v++)
                xv[v] = _mm256_loadu_ps(x + 8 * v);
#pragma GCC unroll 4
            for (int q = 0; q < KM_CBLOCK; q++) {
                __m256 w = _mm256_broadcast_ss(c0 + q * d + j);
#pragma GCC unroll 3
                for (int v = 0; v < KM_BLOCK / 8; v++)
                    a[v][q] = _mm256_fmadd_ps(xv[v], w, a[v][q]);
            }
        }
#pragma GCC unroll 3
        for (int v = 0; v < KM_BLOCK / 8; v++) {
#pragma GCC unroll 4
            for (int q = 0; q < KM_CBLOCK; q++) {
                __m256i m = _mm256_castps_si256(_mm256_cmp_ps(a[v][q], best[v], _CMP_GT_OQ));
                best[v] = _mm256_max_ps(a[v][q], best[v]);
                bidx[v] = _mm256_max_epi32(bidx[v], _mm256_and_si256(m, _mm256_set1_epi32(c + q)));
            }
        }
    }
    for (int v = 0; v < KM_BLOCK / 8; v++) {
        __m256 nn = _mm256_setzero_ps();
        for (int j = 0; j < d; j++) {
            __m256 x = _mm256_loadu_ps(cols[j] + i + 8 * v);
            nn = _mm256_fmadd_ps(x, x, nn);
        }
        __m256 dd = _mm256_fnmadd_ps(_mm256_set1_ps(2.0f), best[v], nn);
        _mm256_storeu_ps(dist + 8 * v, _mm256_max_ps(dd, _mm256_setzero_ps()));
        _mm256_storeu_si256((__m256i *)(labels + 8 * v), bidx[v]);
    }
}
#endif

static void accumulate_f32_scalar(const float *const *cols, int64_t i0, int64_t n, int j0, int d,
                                  const int32_t *labels, double *sums)
{
    for (int64_t i = i0; i < n; i++) {
        double *s = sums + (int64_t)labels[i] * d;
        for (int j = j0; j < d; j++)
            s[j] += cols[j][i];
    }
}

#ifdef KM_X86
/* Adds points [i, i + 8) to their centroids' sums (labels[q]: point i + q): 8 points x
 * 8 features transposed in registers, then 4-wide float64 adds of each point's features
 * (in point order, as the scalar code adds them). */
__attribute__((target("avx2,fma"))) static void accumulate8_avx2(const float *const *cols,
                                                                int64_t i, int d,
                                                                const int32_t *labels,
                                                                double *sums)
{
    int d8 = d & ~7;
    for (int jb = 0; jb < d8; jb += 8) {
        __m256 r0 = _mm256_loadu_ps(cols[jb] + i), r1 = _mm256_loadu_ps(cols[jb + 1] + i);
        __m256 r2 = _mm256_loadu_ps(cols[jb + 2] + i), r3 = _mm256_loadu_ps(cols[jb + 3] + i);
        __m256 r4 = _mm256_loadu_ps(cols[jb + 4] + i), r5 = _mm256_loadu_ps(cols[jb + 5] + i);
        __m256 r6 = _mm256_loadu_ps(cols[jb + 6] + i), r7 = _mm256_loadu_ps(cols[jb + 7] + i);
        __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
        __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
        __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
        __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
        __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
        __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
        __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
        __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
        __m256 o[8];
        o[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
        o[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
        o[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
        o[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
        o[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
        o[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
        o[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
        o[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
        for (int q = 0; q < 8; q++) {
            double *s = sums + (int64_t)labels[q] * d + jb;
            __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(o[q]));
            __m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(o[q], 1));
            _mm256_storeu_pd(s, _mm256_add_pd(_mm256_loadu_pd(s), lo));
            _mm256_storeu_pd(s + 4, _mm256_add_pd(_mm256_loadu_pd(s + 4), hi));
        }
    }
    if (d8 < d)
        accumulate_f32_scalar(cols, i, i + 8, d8, d, labels - i, sums);
}

/* Blocks of KM_BLOCK points: assigned, then summed, counted and their distances added
 * (in row order) while they are still in L1. The last partial block is copied into a
 * zero-padded one, so every point goes through the same arithmetic whatever its
 * position. Returns the sum of the distances. */
__attribute__((target("avx2,fma"))) static double assign_sum_avx2(const float *const *cols,
                                                                  int64_t n, int d,
                                                                  const float *ct, const float *hn,
                                                                  int kp, int32_t *labels,
                                                                  float *dist, double *sums,
                                                                  int64_t *cnt)
{
    int64_t i = 0;
    double inertia = 0;
    for (; i + KM_BLOCK <= n; i += KM_BLOCK) {
        assign_block_avx2(cols, i, d, ct, hn, kp, labels + i, dist + i);
        for (int v = 0; v < KM_BLOCK; v += 8)
            accumulate8_avx2(cols, i + v, d, labels + i + v, sums);
        for (int q = 0; q < KM_BLOCK; q++) {
            cnt[labels[i + q]]++;
            inertia += dist[i + q];
        }
    }
    if (i == n)
        return inertia;
    float pad[KM_MAX_DIMS * KM_BLOCK];
    /* d of them are used; zeroed for -Wmaybe-uninitialized, which cannot see that. */
    const float *pcols[KM_MAX_DIMS] = {0};
    int32_t plab[KM_BLOCK];
    float pdist[KM_BLOCK];
    int r = (int)(n - i);
    for (int j = 0; j < d; j++) {
        float *col = pad + j * KM_BLOCK;
        memcpy(col, cols[j] + i, (size_t)r * sizeof(float));
        memset(col + r, 0, (size_t)(KM_BLOCK - r) * sizeof(float));
        pcols[j] = col;
    }
    assign_block_avx2(pcols, 0, d, ct, hn, kp, plab, pdist);
    memcpy(labels + i, plab, (size_t)r * sizeof(int32_t));
    memcpy(dist + i, pdist, (size_t)r * sizeof(float));
    accumulate_f32_scalar(cols, i, n, 0, d, labels, sums);
    for (int q = 0; q < r; q++) {
        cnt[plab[q]]++;
        inertia += pdist[q];
    }
    return inertia;
}
#endif

int sl__km_have_avx2(void)
{
#ifdef KM_X86
    /* Relaxed: every thread computes the same value; the atomic only keeps the
     * first-use race well defined. */
    static _Atomic int have = -1;
    int h = atomic_load_explicit(&have, memory_order_relaxed);
    if (h < 0) {
        __builtin_cpu_init();
        h = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        atomic_store_explicit(&have, h, memory_order_relaxed);
    }
    return h;
#else
    return 0;
#endif
}

double sl__km_assign_sum_f32(const float *const *cols, int64_t n, int d, const float *ct,
                             const float *hn, int kp, int32_t *labels, float *dist, double *sums,
                             int64_t *cnt)
{
#ifdef KM_X86
    if (sl__km_have_avx2())
        return assign_sum_avx2(cols, n, d, ct, hn, kp, labels, dist, sums, cnt);
#endif
    assign_f32_scalar(cols, 0, n, d, ct, hn, kp, labels, dist);
    accumulate_f32_scalar(cols, 0, n, 0, d, labels, sums);
    double inertia = 0;
    for (int64_t i = 0; i < n; i++) {
        cnt[labels[i]]++;
        inertia += dist[i];
    }
    return inertia;
}

void sl__km_assign_f64(const double *const *cols, int64_t n, int d, const double *ct,
                       const double *hn, int kp, int32_t *labels, double *dist)
{
    for (int64_t i = 0; i < n; i++) {
        double xn = 0, best = -INFINITY;
        int32_t bi = 0;
        for (int j = 0; j < d; j++)
            xn += cols[j][i] * cols[j][i];
        for (int c = 0; c < kp; c++) {
            double s = -hn[c];
            for (int j = 0; j < d; j++)
                s += cols[j][i] * ct[c * d + j];
            if (s > best) {
                best = s;
                bi = c;
            }
        }
        labels[i] = bi;
        double dd = xn - 2 * best;
        dist[i] = dd > 0 ? dd : 0;
    }
}
