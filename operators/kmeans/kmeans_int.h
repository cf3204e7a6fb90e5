/* Internal header of the k-means operator: the assignment kernels (kmeans_dist.c). */
#ifndef SLUICE_KMEANS_INT_H
#define SLUICE_KMEANS_INT_H

#include <stdint.h>

/* Assigns rows [0, n) of a batch whose d feature columns are cols[j] (float32) to the
 * nearest of k centroids. ct holds the centroids row-major as float32 (kp rows of d,
 * kp = k rounded up to 4, padding rows zero) and hn[c] = ||c||^2 / 2 (+inf for padding).
 * Writes labels[i] and dist[i] = ||x - c||^2 (computed as ||x||^2 - 2 (x.c - hn[c]),
 * float32 accumulation). Ties go to the lowest centroid index. Uses AVX2+FMA when the
 * CPU has them (checked at run time), else portable code. */
void sl__km_assign_f32(const float *const *cols, int64_t n, int d, const float *ct,
                       const float *hn, int kp, int32_t *labels, float *dist);
/* The same for float64 columns and centroids (portable code, float64 throughout). */
void sl__km_assign_f64(const double *const *cols, int64_t n, int d, const double *ct,
                       const double *hn, int kp, int32_t *labels, double *dist);
/* Adds point i (features cols[j][i]) to sums[labels[i] * d + j] (float64) and counts
 * it in cnt[labels[i]], for i in [0, n), in row order (so results are the same on every
 * path). AVX2 path: 8 points x 8 features transposed in registers, then 4-wide float64
 * adds of each point's features. */
void sl__km_accumulate_f32(const float *const *cols, int64_t n, int d, const int32_t *labels,
                           double *sums, int64_t *cnt);
/* 1 if the AVX2+FMA kernel is used. */
int sl__km_have_avx2(void);

#endif /* SLUICE_KMEANS_INT_H */
