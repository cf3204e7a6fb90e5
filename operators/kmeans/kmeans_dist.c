/* k-means assignment kernels: nearest centroid of every point.
 *
 * argmin_c ||x - c||^2 = argmax_c (x.c - ||c||^2 / 2), so the inner loop is a small
 * matrix product. Points arrive column-major (one array per feature, as the batch holds
 * them), so 8 consecutive points fill one 256-bit vector and no transposition is needed.
 * The AVX2 micro-kernel takes 16 points (2 vectors) x 4 centroids: 8 accumulators
 * start at -||c||^2/2 and take d FMAs each, with the 16 points' features reloaded from
 * L1 and each centroid value broadcast; per 4 centroids a compare and two blends keep
 * the best score and index per lane. The centroids (k x d floats, 4 KiB for k=64 d=16)
 * stay in L1. This is built with __attribute__((target)) and picked at run time, so
 * the library needs no -march flag. Rows past the last multiple of 16 use the
 * portable code. */
#include <math.h>
#include <stdatomic.h>

#include "kmeans_int.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define KM_X86 1
#endif

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
/* Hot loop, kept long on purpose: the 8 accumulators must stay in registers. */
__attribute__((target("avx2,fma"))) static void assign_f32_avx2(const float *const *cols, int64_t n,
                                                                int d, const float *ct,
                                                                const float *hn, int kp,
                                                                int32_t *labels, float *dist)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 b0 = _mm256_set1_ps(-INFINITY), b1 = b0;
        __m256i i0 = _mm256_setzero_si256(), i1 = i0;
        for (int c = 0; c < kp; c += 4) {
            const float *c0 = ct + (int64_t)c * d;
            __m256 a00 = _mm256_set1_ps(-hn[c]), a01 = _mm256_set1_ps(-hn[c + 1]);
            __m256 a02 = _mm256_set1_ps(-hn[c + 2]), a03 = _mm256_set1_ps(-hn[c + 3]);
            __m256 a10 = a00, a11 = a01, a12 = a02, a13 = a03;
            for (int j = 0; j < d; j++) {
                __m256 x0 = _mm256_loadu_ps(cols[j] + i), x1 = _mm256_loadu_ps(cols[j] + i + 8);
                __m256 w = _mm256_broadcast_ss(c0 + j);
                a00 = _mm256_fmadd_ps(x0, w, a00);
                a10 = _mm256_fmadd_ps(x1, w, a10);
                w = _mm256_broadcast_ss(c0 + d + j);
                a01 = _mm256_fmadd_ps(x0, w, a01);
                a11 = _mm256_fmadd_ps(x1, w, a11);
                w = _mm256_broadcast_ss(c0 + 2 * d + j);
                a02 = _mm256_fmadd_ps(x0, w, a02);
                a12 = _mm256_fmadd_ps(x1, w, a12);
                w = _mm256_broadcast_ss(c0 + 3 * d + j);
                a03 = _mm256_fmadd_ps(x0, w, a03);
                a13 = _mm256_fmadd_ps(x1, w, a13);
            }
#define KM_TAKE(a, b, bi, q)                                                          \
    do {                                                                              \
        __m256 m_ = _mm256_cmp_ps(a, b, _CMP_GT_OQ);                                  \
        b = _mm256_max_ps(a, b); /* 1 uop instead of a blend; = blend where a > b */  \
        bi = _mm256_castps_si256(_mm256_blendv_ps(                                    \
            _mm256_castsi256_ps(bi), _mm256_castsi256_ps(_mm256_set1_epi32(c + q)), m_)); \
    } while (0)
            KM_TAKE(a00, b0, i0, 0);
            KM_TAKE(a10, b1, i1, 0);
            KM_TAKE(a01, b0, i0, 1);
            KM_TAKE(a11, b1, i1, 1);
            KM_TAKE(a02, b0, i0, 2);
            KM_TAKE(a12, b1, i1, 2);
            KM_TAKE(a03, b0, i0, 3);
            KM_TAKE(a13, b1, i1, 3);
#undef KM_TAKE
        }
        __m256 n0 = _mm256_setzero_ps(), n1 = n0;
        for (int j = 0; j < d; j++) {
            __m256 x0 = _mm256_loadu_ps(cols[j] + i), x1 = _mm256_loadu_ps(cols[j] + i + 8);
            n0 = _mm256_fmadd_ps(x0, x0, n0);
            n1 = _mm256_fmadd_ps(x1, x1, n1);
        }
        __m256 two = _mm256_set1_ps(2.0f), zero = _mm256_setzero_ps();
        _mm256_storeu_ps(dist + i, _mm256_max_ps(_mm256_fnmadd_ps(two, b0, n0), zero));
        _mm256_storeu_ps(dist + i + 8, _mm256_max_ps(_mm256_fnmadd_ps(two, b1, n1), zero));
        _mm256_storeu_si256((__m256i *)(labels + i), i0);
        _mm256_storeu_si256((__m256i *)(labels + i + 8), i1);
    }
    assign_f32_scalar(cols, i, n, d, ct, hn, kp, labels, dist);
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
__attribute__((target("avx2,fma"))) static void accumulate_f32_avx2(const float *const *cols,
                                                                    int64_t n, int d,
                                                                    const int32_t *labels,
                                                                    double *sums)
{
    int d8 = d & ~7;
    int64_t n8 = n & ~(int64_t)7;
    for (int64_t i = 0; i < n8; i += 8) {
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
                double *s = sums + (int64_t)labels[i + q] * d + jb;
                __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(o[q]));
                __m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(o[q], 1));
                _mm256_storeu_pd(s, _mm256_add_pd(_mm256_loadu_pd(s), lo));
                _mm256_storeu_pd(s + 4, _mm256_add_pd(_mm256_loadu_pd(s + 4), hi));
            }
        }
        if (d8 < d)
            accumulate_f32_scalar(cols, i, i + 8, d8, d, labels, sums);
    }
    accumulate_f32_scalar(cols, n8, n, 0, d, labels, sums);
}
#endif

void sl__km_accumulate_f32(const float *const *cols, int64_t n, int d, const int32_t *labels,
                           double *sums, int64_t *cnt)
{
    for (int64_t i = 0; i < n; i++)
        cnt[labels[i]]++;
#ifdef KM_X86
    if (sl__km_have_avx2()) {
        accumulate_f32_avx2(cols, n, d, labels, sums);
        return;
    }
#endif
    accumulate_f32_scalar(cols, 0, n, 0, d, labels, sums);
}

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

void sl__km_assign_f32(const float *const *cols, int64_t n, int d, const float *ct,
                       const float *hn, int kp, int32_t *labels, float *dist)
{
#ifdef KM_X86
    if (sl__km_have_avx2()) {
        assign_f32_avx2(cols, n, d, ct, hn, kp, labels, dist);
        return;
    }
#endif
    assign_f32_scalar(cols, 0, n, d, ct, hn, kp, labels, dist);
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
