/* Plain CPU reference of one k-means step and of k-means++ (the CPU operator's rules),
 * used by tests/gpu/test_gpu_kmeans.c (C and C++).
 * Points column-major float32 (cols[j][i]), centroids row-major float64. */
#ifndef SLUICE_TEST_KMEANS_REF_H
#define SLUICE_TEST_KMEANS_REF_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The CPU operator's float32 score hn - x.c (hn = sum v*v / 2 without contraction). */
static inline float kmr_score(const float *const *cols, int64_t i, int d, const float *c)
{
    volatile float fn = 0; /* volatile: no contraction into an FMA */
    for (int j = 0; j < d; j++) {
        volatile float sq = c[j] * c[j];
        fn = fn + sq;
    }
    float a = fn * 0.5f;
    for (int j = 0; j < d; j++)
        a = fmaf(-cols[j][i], c[j], a);
    return a;
}

/* Labels, float64 sums of x, counts, inertia of one step from float32 centroids cf. */
static inline void kmr_step(const float *const *cols, int64_t n, int d, const float *cf, int k,
                            int32_t *labels, double *sums, int64_t *counts, double *inertia)
{
    memset(sums, 0, (size_t)k * d * sizeof *sums);
    memset(counts, 0, (size_t)k * sizeof *counts);
    *inertia = 0;
    for (int64_t i = 0; i < n; i++) {
        float best = INFINITY;
        int bi = 0;
        for (int c = 0; c < k; c++) {
            float s = kmr_score(cols, i, d, cf + (size_t)c * d);
            if (s < best) {
                best = s;
                bi = c;
            }
        }
        float xn = 0;
        for (int j = 0; j < d; j++)
            xn = fmaf(cols[j][i], cols[j][i], xn);
        float dd = fmaf(2.f, best, xn);
        *inertia += dd > 0 ? dd : 0;
        labels[i] = bi;
        counts[bi]++;
        for (int j = 0; j < d; j++)
            sums[(size_t)bi * d + j] += cols[j][i];
    }
}

static inline uint64_t kmr_rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* k-means++ row picks of the CPU operator (init_plusplus) for seed; picks[k]. */
static inline void kmr_plusplus(const float *const *cols, int64_t n, int d, int k, uint64_t seed,
                                int64_t *picks)
{
    uint64_t s = seed;
    double *d2 = (double *)malloc((size_t)n * sizeof *d2);
    picks[0] = (int64_t)(kmr_rng(&s) % (uint64_t)n);
    for (int64_t r = 0; r < n; r++)
        d2[r] = INFINITY;
    for (int c = 1; c < k; c++) {
        int64_t last = picks[c - 1];
        double total = 0;
        for (int64_t r = 0; r < n; r++) {
            double dd = 0;
            for (int j = 0; j < d; j++) {
                double v = (double)cols[j][r] - (double)cols[j][last];
                dd += v * v;
            }
            if (dd < d2[r])
                d2[r] = dd;
            total += d2[r];
        }
        int64_t pick = (int64_t)(kmr_rng(&s) % (uint64_t)n);
        if (total > 0) {
            double u = (double)(kmr_rng(&s) >> 11) * 0x1.0p-53 * total, acc = 0;
            for (pick = 0; pick < n - 1; pick++) {
                acc += d2[pick];
                if (acc > u && d2[pick] > 0)
                    break;
            }
        }
        picks[c] = pick;
    }
    free(d2);
}

#endif /* SLUICE_TEST_KMEANS_REF_H */
