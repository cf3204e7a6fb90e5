/* Tests GPU k-means (kernels/kmeans, issue 7) against a plain CPU reference
 * (kmeans_ref.h): kernel level through the launchers (every method: fused, multi-pass,
 * tensor-core fused; small k and d, k = 1, k = n, d = 16 k = 64, large
 * k*d, d > 64, ties, empty input, bad arguments, Lloyd loops with the update kernel,
 * k-means++ picks) and operator level (the op_ cases). Labels must equal the
 * reference except near-ties, new centroids within relative 1e-4 (DESIGN.md), counts
 * exactly when labels agree; the operator (kmeans_cuda.c) with placement gpu against
 * placement cpu, with the same initial centroids (given, random, k-means++). Cases skip
 * without a usable GPU.
 *
 * Plain cudaMalloc here (not the runtime's pools): the launchers are what is tested. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_int.h"
#include "exec_int.h"
#include "kmeans_ref.h"
#include "gpu_test.h"
#include "sl_test.h"
#include "sluice_k/kmeans.h"

static const int methods[] = {SL_K_KMEANS_FUSED, SL_K_KMEANS_MULTIPASS, SL_K_KMEANS_MMA_FUSED,
                              SL_K_KMEANS_TILE, SL_K_KMEANS_TILE_PM};
/* The tile kernel and its variant with the argmin by pairs (the same labels). */
static const int tile_methods[] = {SL_K_KMEANS_TILE, SL_K_KMEANS_TILE_PM};

static double unit(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return (double)(*x >> 11) * 0x1.0p-53;
}

struct pts {
    int64_t n;
    int d;
    float *h[SL_K_KMEANS_MAX_DIMS];
    float *dv[SL_K_KMEANS_MAX_DIMS];
};

/* Every generated value is multiplied by this (extreme magnitudes; 1 otherwise). */
static float pts_scale = 1.f;

/* Blobs: kt centres in [-10, 10]^d, uniform noise +-1; integer values when grid. */
static void pts_make(struct pts *p, int64_t n, int d, int kt, uint64_t seed, int grid)
{
    p->n = n;
    p->d = d;
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 7;
    float *ctr = malloc((size_t)kt * d * sizeof *ctr);
    for (int e = 0; e < kt * d; e++)
        ctr[e] = (float)(unit(&x) * 20 - 10);
    for (int j = 0; j < d; j++)
        p->h[j] = malloc((size_t)(n ? n : 1) * 4);
    for (int64_t i = 0; i < n; i++) {
        int w = (int)(unit(&x) * kt);
        for (int j = 0; j < d; j++) {
            float v = ctr[w * d + j] + (float)(unit(&x) * 2 - 1);
            p->h[j][i] = (grid ? floorf(v) : v) * pts_scale;
        }
    }
    for (int j = 0; j < d; j++) {
        CU(cudaMalloc((void **)&p->dv[j], (size_t)(n ? n : 1) * 4));
        CU(cudaMemcpy(p->dv[j], p->h[j], (size_t)n * 4, cudaMemcpyHostToDevice));
    }
    CU(cudaDeviceSynchronize()); /* legacy-stream copies land before s's kernels */
    free(ctr);
}

static void pts_free(struct pts *p)
{
    for (int j = 0; j < p->d; j++) {
        free(p->h[j]);
        cudaFree(p->dv[j]);
    }
}

/* k rows of the points as centroids; with dup, pairs of equal centroids (ties): 1: rows
 * 2i and 2i + 1 equal, 2: rows 2i + 1 and 2i + 2 (across TILE_PM's pairs of centroids). */
static float *pick_centroids(const struct pts *p, int k, uint64_t seed, int dup)
{
    float *c = calloc((size_t)k * p->d, sizeof *c);
    for (int r = 0; r < k && p->n > 0; r++) {
        int64_t row = (int64_t)(kmr_rng(&seed) % (uint64_t)p->n);
        if (dup)
            row = (int64_t)(((r + (dup == 2)) / 2) * 7919 % p->n);
        for (int j = 0; j < p->d; j++)
            c[(size_t)r * p->d + j] = p->h[j][row];
    }
    return c;
}

struct acc {
    double *sums, *inertia, *c64, *shift;
    unsigned long long *counts;
    float *cent;
    int32_t *labels;
    void *temp;
    size_t temp_bytes;
};

static void acc_init(struct acc *a, int64_t n, int d, int k)
{
    CU(cudaMalloc((void **)&a->sums, (size_t)k * d * 8));
    CU(cudaMalloc((void **)&a->c64, (size_t)k * d * 8));
    CU(cudaMalloc((void **)&a->counts, (size_t)k * 8));
    CU(cudaMalloc((void **)&a->inertia, 8));
    CU(cudaMalloc((void **)&a->shift, 16));
    CU(cudaMalloc((void **)&a->cent, (size_t)k * d * 4));
    CU(cudaMalloc((void **)&a->labels, (size_t)(n ? n : 1) * 4));
    a->temp_bytes = (size_t)(n ? n : 1) * 4 + 4096;
    CU(cudaMalloc(&a->temp, a->temp_bytes));
}

static void acc_fini(struct acc *a)
{
    cudaFree(a->sums); cudaFree(a->c64); cudaFree(a->counts); cudaFree(a->inertia);
    cudaFree(a->shift); cudaFree(a->cent); cudaFree(a->labels); cudaFree(a->temp);
}

static void run_step(struct pts *p, struct acc *a, int k, int method, int labels, cudaStream_t s)
{
    size_t tb = 0;
    const float *const *cols = (const float *const *)p->dv;
    CU(sl_k_kmeans_step_f32(NULL, &tb, cols, p->d, p->n, a->cent, k, method, a->sums, a->counts,
                            a->inertia, labels ? a->labels : NULL, s));
    assert_true(tb <= a->temp_bytes);
    CU(sl_k_kmeans_clear(a->sums, a->counts, a->inertia, k, p->d, s));
    CU(sl_k_kmeans_step_f32(a->temp, &tb, cols, p->d, p->n, a->cent, k, method, a->sums,
                            a->counts, a->inertia, labels ? a->labels : NULL, s));
}

/* One step of `method` against kmr_step; returns 0 (checking nothing) when the method
 * does not support the shape, 1 when it ran and matched. */
static int check_step(int64_t n, int d, int k, int kt, int method, uint64_t seed, int grid,
                      int dup)
{
    if (!sl_k_kmeans_supported(method, d, k))
        return 0;
    cudaStream_t s;
    CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    struct pts p;
    pts_make(&p, n, d, kt, seed, grid);
    struct acc a;
    acc_init(&a, n, d, k);
    float *cf = pick_centroids(&p, k, seed + 1, dup);
    CU(cudaMemcpy(a.cent, cf, (size_t)k * d * 4, cudaMemcpyHostToDevice));
    CU(cudaDeviceSynchronize()); /* legacy-stream copies land before s's kernels */
    run_step(&p, &a, k, method, 1, s);
    int32_t *gl = malloc((size_t)(n + 1) * 4), *rl = malloc((size_t)(n + 1) * 4);
    double *gs = malloc((size_t)k * d * 8), *rs = malloc((size_t)k * d * 8), gi = 0, ri = 0;
    unsigned long long *gc = malloc((size_t)k * 8);
    int64_t *rc = malloc((size_t)k * 8);
    CU(cudaMemcpyAsync(gl, a.labels, (size_t)n * 4, cudaMemcpyDeviceToHost, s));
    CU(cudaMemcpyAsync(gs, a.sums, (size_t)k * d * 8, cudaMemcpyDeviceToHost, s));
    CU(cudaMemcpyAsync(gc, a.counts, (size_t)k * 8, cudaMemcpyDeviceToHost, s));
    CU(cudaMemcpyAsync(&gi, a.inertia, 8, cudaMemcpyDeviceToHost, s));
    CU(cudaStreamSynchronize(s));
    kmr_step((const float *const *)p.h, n, d, cf, k, rl, rs, rc, &ri);
    int64_t diff = 0;
    for (int64_t i = 0; i < n; i++) {
        if (gl[i] == rl[i])
            continue;
        diff++;
        assert_in_range(gl[i], 0, k - 1);
        /* equal centroids tie exactly on any device: the lowest index (the reference's)
         * must win, not merely a centroid as close */
        if (!memcmp(cf + (size_t)gl[i] * d, cf + (size_t)rl[i] * d, (size_t)d * sizeof *cf))
            fail_msg("method %d: point %lld went to centroid %d, equal to centroid %d: ties "
                     "must go to the lowest index", method, (long long)i, gl[i], rl[i]);
        float sg = kmr_score((const float *const *)p.h, i, d, cf + (size_t)gl[i] * d);
        float sr = kmr_score((const float *const *)p.h, i, d, cf + (size_t)rl[i] * d);
        if (fabsf(sg - sr) > 1e-5f * (fabsf(sr) + 1.f))
            fail_msg("method %d n=%lld d=%d k=%d: point %lld label %d, reference %d (scores "
                     "%.9g vs %.9g): not a tie", method, (long long)n, d, k, (long long)i, gl[i],
                     rl[i], sg, sr);
    }
    for (int c = 0; c < k; c++) {
        if (diff == 0)
            assert_int_equal(gc[c], rc[c]);
        if (!gc[c] || !rc[c])
            continue;
        for (int j = 0; j < d; j++) {
            double g = cf[(size_t)c * d + j] + gs[(size_t)c * d + j] / (double)gc[c];
            double r = rs[(size_t)c * d + j] / (double)rc[c];
            if (fabs(g - r) > 1e-4 * (fabs(r) + 1.0))
                fail_msg("method %d n=%lld d=%d k=%d: centroid %d[%d] %.9g, reference %.9g",
                         method, (long long)n, d, k, c, j, g, r);
        }
    }
    /* the reference's xn + 2 score cancels: each point's term is off by a few ulps of
     * its ||x||^2 (k >= n: 0 against 1.5e-5); the tensor-core kernel sums (x - c)^2 */
    double xn_sum = 0;
    for (int64_t i = 0; i < n; i++)
        for (int j = 0; j < d; j++)
            xn_sum += (double)p.h[j][i] * p.h[j][i];
    if (fabs(gi - ri) > 1e-4 * fabs(ri) + 0x1p-21 * xn_sum + 1e-9)
        fail_msg("method %d: inertia %.9g, reference %.9g", method, gi, ri);
    free(gl); free(rl); free(gs); free(rs); free(gc); free(rc); free(cf);
    acc_fini(&a);
    pts_free(&p);
    CU(cudaStreamDestroy(s));
    return 1;
}

/* Every method that supports the shape; the multi-pass kernel supports all, so a shape
 * where it reports "unsupported" fails instead of passing with nothing checked. */
static void check_all(int64_t n, int d, int k, int kt, uint64_t seed, int grid, int dup)
{
    int ran = 0;
    for (unsigned m = 0; m < sizeof methods / sizeof methods[0]; m++)
        ran += check_step(n, d, k, kt, methods[m], seed, grid, dup);
    if (!sl_k_kmeans_supported(SL_K_KMEANS_MULTIPASS, d, k) || ran == 0)
        fail_msg("n=%lld d=%d k=%d: %d methods ran; the multi-pass kernel must take every "
                 "shape", (long long)n, d, k, ran);
}

SL_TEST(step_small_k_and_d)
{
    REQUIRE_GPU();
    check_all(1000, 2, 3, 3, 1, 0, 0);
    check_all(4099, 5, 8, 8, 2, 0, 0);
    check_all(1, 3, 1, 1, 3, 0, 0);
    check_all(7, 16, 7, 3, 4, 0, 0); /* k = n */
}

/* Shapes of the tensor-core fused kernel's edges: d not a multiple of 4 or 8, k not a
 * multiple of 8, k > n, k at its limit (256: 8 index bits), one point per cluster. */
SL_TEST(step_mma_shapes)
{
    REQUIRE_GPU();
    check_all(20011, 5, 64, 64, 60, 0, 0);
    check_all(20011, 13, 37, 20, 61, 0, 0);
    check_all(9000, 9, 256, 64, 62, 0, 0);
    check_all(33, 16, 40, 8, 63, 0, 0);  /* k > n: centroids repeat points */
    check_all(3, 7, 64, 2, 64, 0, 0);    /* k far above n */
    check_all(100000, 16, 2, 2, 65, 0, 0);
    assert_true(sl_k_kmeans_supported(SL_K_KMEANS_MMA_FUSED, 16, 256));
    assert_false(sl_k_kmeans_supported(SL_K_KMEANS_MMA_FUSED, 16, 257));
    assert_false(sl_k_kmeans_supported(SL_K_KMEANS_MMA_FUSED, 17, 64));
}

/* Extreme magnitudes (no NaN in the data): 1e17 puts the scores near the top of the
 * float32 range (x.c ~ 1e37), 1e19 past it (scores inf - inf: every method and the
 * reference give label 0, the tensor-core kernel through its exact re-check), 1e-18 near
 * the bottom (products ~1e-34, the bound's terms subnormal). */
SL_TEST(step_extreme_values)
{
    REQUIRE_GPU();
    pts_scale = 1e17f;
    check_all(5000, 16, 64, 16, 66, 0, 0);
    pts_scale = 1e19f;
    check_all(3000, 16, 64, 16, 67, 0, 0);
    pts_scale = 1e-18f;
    check_all(5000, 16, 64, 16, 68, 0, 0);
    pts_scale = 1.f;
}

SL_TEST(step_k1)
{
    REQUIRE_GPU();
    check_all(30001, 16, 1, 4, 5, 0, 0);
    check_all(777, 1, 1, 2, 6, 0, 0);
}

SL_TEST(step_d16_k64)
{
    REQUIRE_GPU();
    check_all(1 << 16, 16, 64, 64, 7, 0, 0);
    check_all(100003, 16, 64, 16, 8, 0, 0);
    /* k = 256: the fused kernels' per-warp sums no longer fit, one shared copy */
    check_all(50000, 16, 256, 64, 16, 0, 0);
}

/* Small cases of the tile kernel (for compute-sanitizer): every warp takes two tiles or
 * more, so each adds a staged tile inside the next one's scan. */
SL_TEST(step_tile_small)
{
    REQUIRE_GPU();
    for (unsigned t = 0; t < sizeof tile_methods / sizeof tile_methods[0]; t++) {
        const int m = tile_methods[t];
        assert_true(check_step(20000, 16, 64, 16, m, 80, 0, 0));
        assert_true(check_step(7000, 3, 5, 4, m, 81, 1, 1));
        assert_true(check_step(9001, 17, 65, 30, m, 82, 0, 0));
        assert_true(check_step(3000, 8, 130, 30, m, 83, 0, 0));
    }
}

/* TILE_PM's argmin by pairs at its edges: ties inside a pair (dup 1) and across two pairs
 * (dup 2), on integer grid data (many equal scores of different centroids too), odd k
 * (the last pair takes a padding centroid), k = 1 and 2, n not a multiple of the warp
 * tile; labels must be the lowest index of the exact float32 minimum, as TILE's. */
SL_TEST(step_tile_pairs)
{
    REQUIRE_GPU();
    const int m = SL_K_KMEANS_TILE_PM;
    assert_true(check_step(30011, 16, 64, 4, m, 200, 1, 1));
    assert_true(check_step(30011, 16, 64, 4, m, 201, 1, 2));
    assert_true(check_step(20001, 16, 63, 8, m, 202, 1, 2));
    assert_true(check_step(20001, 5, 7, 3, m, 203, 1, 1));
    assert_true(check_step(20001, 5, 7, 3, m, 204, 1, 2));
    assert_true(check_step(4097, 16, 1, 1, m, 205, 0, 0));
    assert_true(check_step(4097, 16, 2, 1, m, 206, 1, 2));
    assert_true(check_step(4097, 32, 3, 2, m, 207, 1, 2));
    assert_true(check_step(129, 8, 64, 8, m, 208, 0, 2));
    assert_true(sl_k_kmeans_supported(m, 16, 137) && !sl_k_kmeans_supported(m, 16, 138));
    assert_int_equal(sl_k_kmeans_pick(16, 64), SL_K_KMEANS_TILE); /* not AUTO's (yet) */
}

/* The tile kernel's edges (issue 19): k around a multiple of 4 and its 64 in-loop
 * update steps (k < 64 leaves steps for after the scan, k > 64 ends them early), every
 * padded width (d = 1, 3 -> 4; 16; 17 -> 32) and past it (d = 64: not supported, the
 * other methods run), n around a warp and a warp tile (31, 33, 32 * P), one point, many
 * tiles a warp (2^20), duplicate points, empty clusters (k > the blobs, centroids that
 * are far from every point). */
SL_TEST(step_tile_shapes)
{
    REQUIRE_GPU();
    const int ks[] = {1, 2, 63, 64, 65, 256};
    const int ds[] = {1, 3, 16, 17, 64};
    const int64_t ns[] = {0, 1, 31, 33, 129, 5000};
    for (unsigned t = 0; t < sizeof tile_methods / sizeof tile_methods[0]; t++) {
        const int m = tile_methods[t];
        for (unsigned a = 0; a < sizeof ks / sizeof ks[0]; a++)
            for (unsigned b = 0; b < sizeof ds / sizeof ds[0]; b++)
                for (unsigned c = 0; c < sizeof ns / sizeof ns[0]; c++)
                    check_step(ns[c], ds[b], ks[a], 8, m, 100 + a * 64 + b * 8 + c, 0, 0);
        assert_true(check_step((int64_t)1 << 20, 16, 64, 64, m, 90, 0, 0));
        assert_true(check_step((int64_t)1 << 20, 3, 63, 16, m, 91, 0, 0));
        assert_true(check_step(300000, 17, 65, 200, m, 92, 0, 0));
        /* duplicates: integer grid data (many equal points) and equal centroid pairs */
        assert_true(check_step(70000, 16, 64, 4, m, 93, 1, 1));
        assert_true(check_step(70000, 8, 33, 2, m, 94, 1, 0));
        /* empty clusters: equal centroid pairs, the second of each never wins (32 of 64) */
        assert_true(check_step(40000, 16, 64, 2, m, 95, 0, 1));
    }
    assert_false(sl_k_kmeans_supported(SL_K_KMEANS_TILE, 64, 4));
    /* every method, the same shapes at the edges */
    check_all(33, 17, 65, 8, 96, 0, 0);
    check_all(31, 1, 2, 8, 97, 0, 0);
}

/* The device-side Lloyd loop: sl_k_kmeans_check's rule, and the _if launchers doing
 * nothing once the stop flag is set. */
SL_TEST(stop_flag_and_check_rule)
{
    REQUIRE_GPU();
    cudaStream_t s;
    CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int32_t *st, h[2];
    CU(cudaMalloc((void **)&st, 8));
    struct acc a;
    const int d = 16, k = 64;
    struct pts p;
    pts_make(&p, 5000, d, k, 17, 0);
    acc_init(&a, p.n, d, k);
    /* rule: max_iter, tol (shift <= tol^2 * norm), nothing after stop */
    double sh[2] = {1.0, 100.0};
    CU(cudaMemcpy(a.shift, sh, 16, cudaMemcpyHostToDevice));
    CU(cudaMemset(st, 0, 8));
    CU(cudaDeviceSynchronize()); /* legacy-stream copies land before s's kernels */
    CU(sl_k_kmeans_check(a.shift, 0.09, 100, st, s)); /* 1 > 0.81: go on */
    CU(sl_k_kmeans_check(a.shift, 0.1, 100, st, s));  /* 1 <= 1: stop */
    CU(sl_k_kmeans_check(a.shift, 0.1, 100, st, s));  /* stopped: unchanged */
    CU(cudaMemcpyAsync(h, st, 8, cudaMemcpyDeviceToHost, s));
    CU(cudaStreamSynchronize(s));
    assert_int_equal(h[0], 1);
    assert_int_equal(h[1], 2);
    CU(cudaMemset(st, 0, 8));
    CU(cudaDeviceSynchronize()); /* legacy-stream copies land before s's kernels */
    for (int i = 0; i < 4; i++)
        CU(sl_k_kmeans_check(a.shift, 0, 3, st, s));
    CU(cudaMemcpyAsync(h, st, 8, cudaMemcpyDeviceToHost, s));
    CU(cudaStreamSynchronize(s));
    assert_int_equal(h[0], 1);
    assert_int_equal(h[1], 3);
    assert_int_equal(sl_k_kmeans_check(a.shift, -1, 3, st, s), cudaErrorInvalidValue);
    assert_int_equal(sl_k_kmeans_check(a.shift, 0, 0, st, s), cudaErrorInvalidValue);
    /* stopped: clear, step (every method) and update leave everything as it was */
    float *cf = pick_centroids(&p, k, 18, 0);
    CU(cudaMemcpy(a.cent, cf, (size_t)k * d * 4, cudaMemcpyHostToDevice));
    CU(cudaMemset(a.sums, 0x41, (size_t)k * d * 8));
    CU(cudaMemset(a.counts, 0x42, (size_t)k * 8));
    CU(cudaMemset(a.inertia, 0x43, 8));
    CU(cudaMemset(a.c64, 0x44, (size_t)k * d * 8));
    CU(cudaDeviceSynchronize()); /* legacy-stream copies land before s's kernels */
    const float *const *cols = (const float *const *)p.dv;
    CU(sl_k_kmeans_clear_if(a.sums, a.counts, a.inertia, k, d, st, s));
    for (unsigned m = 0; m < sizeof methods / sizeof methods[0]; m++) {
        size_t tb = a.temp_bytes;
        CU(sl_k_kmeans_step_f32_if(a.temp, &tb, cols, d, p.n, a.cent, k, methods[m], a.sums,
                                   a.counts, a.inertia, NULL, st, s));
    }
    CU(sl_k_kmeans_update_if(a.cent, a.c64, a.sums, a.counts, k, d, a.cent, a.shift, st, s));
    double *hs = malloc((size_t)k * d * 8), *hc = malloc((size_t)k * d * 8), hi;
    unsigned long long *hn = malloc((size_t)k * 8);
    float *hf = malloc((size_t)k * d * 4);
    CU(cudaMemcpyAsync(hs, a.sums, (size_t)k * d * 8, cudaMemcpyDeviceToHost, s));
    CU(cudaMemcpyAsync(hc, a.c64, (size_t)k * d * 8, cudaMemcpyDeviceToHost, s));
    CU(cudaMemcpyAsync(hn, a.counts, (size_t)k * 8, cudaMemcpyDeviceToHost, s));
    CU(cudaMemcpyAsync(&hi, a.inertia, 8, cudaMemcpyDeviceToHost, s));
    CU(cudaMemcpyAsync(hf, a.cent, (size_t)k * d * 4, cudaMemcpyDeviceToHost, s));
    CU(cudaStreamSynchronize(s));
    for (int e = 0; e < k * d; e++) {
        unsigned char b[8];
        memcpy(b, &hs[e], 8);
        assert_int_equal(b[0], 0x41);
        memcpy(b, &hc[e], 8);
        assert_int_equal(b[7], 0x44);
        assert_true(hf[e] == cf[e]);
    }
    for (int c = 0; c < k; c++)
        assert_true(hn[c] == 0x4242424242424242ull);
    unsigned char bi[8];
    memcpy(bi, &hi, 8);
    assert_int_equal(bi[3], 0x43);
    /* running again (flag clear): clear_if zeroes, a step counts every point */
    CU(cudaMemset(st, 0, 8));
    CU(cudaDeviceSynchronize()); /* legacy-stream copies land before s's kernels */
    CU(sl_k_kmeans_clear_if(a.sums, a.counts, a.inertia, k, d, st, s));
    size_t tb = a.temp_bytes;
    CU(sl_k_kmeans_step_f32_if(a.temp, &tb, cols, d, p.n, a.cent, k, SL_K_KMEANS_AUTO, a.sums,
                               a.counts, a.inertia, NULL, st, s));
    CU(cudaMemcpyAsync(hn, a.counts, (size_t)k * 8, cudaMemcpyDeviceToHost, s));
    CU(cudaStreamSynchronize(s));
    unsigned long long tot = 0;
    for (int c = 0; c < k; c++)
        tot += hn[c];
    assert_true(tot == (unsigned long long)p.n);
    free(hs); free(hc); free(hn); free(hf); free(cf);
    acc_fini(&a);
    pts_free(&p);
    cudaFree(st);
    CU(cudaStreamDestroy(s));
}

SL_TEST(step_large_kd_fallbacks)
{
    REQUIRE_GPU();
    assert_false(sl_k_kmeans_supported(SL_K_KMEANS_FUSED, 16, 3000));
    assert_false(sl_k_kmeans_supported(SL_K_KMEANS_MMA_FUSED, 16, 3000));
    check_all(8192, 16, 3000, 50, 9, 0, 0); /* multi-pass, centroid chunks */
    check_all(4096, 64, 700, 20, 10, 0, 0);
    check_all(3000, 100, 20, 5, 11, 0, 0);  /* d > 64: generic multi-pass */
    check_all(2000, 33, 40, 10, 12, 0, 0);
}

SL_TEST(step_ties_lowest_index)
{
    REQUIRE_GPU();
    /* integer data and pairs of equal centroids: exact ties, lowest index wins */
    check_all(20000, 16, 64, 8, 13, 1, 1);
    check_all(5000, 4, 6, 3, 14, 1, 1);
}

SL_TEST(step_empty_input)
{
    REQUIRE_GPU();
    check_all(0, 16, 4, 4, 15, 0, 0);
}

SL_TEST(step_bad_arguments)
{
    REQUIRE_GPU();
    size_t tb = 0;
    const float *cols[1] = {NULL};
    double *ds = (double *)16;
    unsigned long long *dc = (unsigned long long *)16;
    assert_int_equal(sl_k_kmeans_step_f32(NULL, &tb, cols, 0, 10, (float *)16, 4, 0, ds, dc, ds,
                                          NULL, 0), cudaErrorInvalidValue);
    assert_int_equal(sl_k_kmeans_step_f32(NULL, &tb, cols, 1, 10, (float *)16, 0, 0, ds, dc, ds,
                                          NULL, 0), cudaErrorInvalidValue);
    assert_int_equal(sl_k_kmeans_step_f32(NULL, &tb, cols, 1, -1, (float *)16, 4, 0, ds, dc, ds,
                                          NULL, 0), cudaErrorInvalidValue);
    assert_int_equal(sl_k_kmeans_step_f32(NULL, &tb, cols, 16, 10, (float *)16, 100000,
                                          SL_K_KMEANS_FUSED, ds, dc, ds, NULL, 0),
                     cudaErrorInvalidValue);
    for (int m = 3; m <= 4; m++) /* the removed 3xTF32 kernels' numbers */
        assert_int_equal(sl_k_kmeans_step_f32(NULL, &tb, cols, 16, 10, (float *)16, 4, m, ds, dc,
                                              ds, NULL, 0),
                         cudaErrorInvalidValue);
    /* a NULL column is refused at the launch call */
    CU(sl_k_kmeans_step_f32(NULL, &tb, cols, 1, 10, (float *)16, 4, 0, ds, dc, ds, NULL, 0));
    void *t = NULL;
    CU(cudaMalloc(&t, tb));
    assert_int_equal(sl_k_kmeans_step_f32(t, &tb, cols, 1, 10, (float *)16, 4, 0, ds, dc, ds,
                                          NULL, 0), cudaErrorInvalidValue);
    cudaFree(t);
    assert_int_equal(sl_k_kmeans_pick(16, 64), SL_K_KMEANS_TILE);
    assert_int_equal(sl_k_kmeans_pick(16, 128), SL_K_KMEANS_TILE);
    assert_int_equal(sl_k_kmeans_pick(16, 256), SL_K_KMEANS_MMA_FUSED);
    assert_int_equal(sl_k_kmeans_pick(12, 200), SL_K_KMEANS_MMA_FUSED);
    assert_int_equal(sl_k_kmeans_pick(8, 256), SL_K_KMEANS_FUSED);
    assert_int_equal(sl_k_kmeans_pick(32, 64), SL_K_KMEANS_TILE);
    assert_int_equal(sl_k_kmeans_pick(33, 64), SL_K_KMEANS_MULTIPASS); /* fused: 104 KB */
    assert_int_equal(sl_k_kmeans_pick(33, 32), SL_K_KMEANS_FUSED);
    assert_int_equal(sl_k_kmeans_pick(32, 256), SL_K_KMEANS_MULTIPASS); /* 106 KB > 100 KB */
    assert_int_equal(sl_k_kmeans_pick(16, 3000), SL_K_KMEANS_MULTIPASS);
    assert_int_equal(sl_k_kmeans_pick(2, 64), SL_K_KMEANS_TILE);
    assert_int_equal(sl_k_kmeans_pick(200, 64), SL_K_KMEANS_MULTIPASS);
    assert_true(sl_k_kmeans_supported(SL_K_KMEANS_TILE, 16, 137));
    assert_false(sl_k_kmeans_supported(SL_K_KMEANS_TILE, 16, 138));
    assert_false(sl_k_kmeans_supported(SL_K_KMEANS_TILE, 33, 4));
}

/* iters Lloyd iterations on the GPU (step + update kernel) against the CPU loop. */
static void check_lloyd(int64_t n, int d, int k, int method, int iters, uint64_t seed)
{
    cudaStream_t s;
    CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    struct pts p;
    pts_make(&p, n, d, k, seed, 0);
    struct acc a;
    acc_init(&a, n, d, k);
    float *cf = pick_centroids(&p, k, seed + 1, 0);
    double *c64 = malloc((size_t)k * d * 8), *rs = malloc((size_t)k * d * 8), ri;
    int64_t *rc = malloc((size_t)k * 8);
    int32_t *rl = malloc((size_t)n * 4);
    for (int e = 0; e < k * d; e++)
        c64[e] = cf[e];
    CU(cudaMemcpy(a.cent, cf, (size_t)k * d * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(a.c64, c64, (size_t)k * d * 8, cudaMemcpyHostToDevice));
    CU(cudaDeviceSynchronize()); /* legacy-stream copies land before s's kernels */
    for (int it = 0; it < iters; it++) {
        run_step(&p, &a, k, method, 0, s);
        CU(sl_k_kmeans_update(a.cent, a.c64, a.sums, a.counts, k, d, a.cent, a.shift, s));
        kmr_step((const float *const *)p.h, n, d, cf, k, rl, rs, rc, &ri);
        for (int e = 0; e < k * d; e++) {
            if (rc[e / d])
                c64[e] = rs[e] / (double)rc[e / d];
            cf[e] = (float)c64[e];
        }
    }
    double *g = malloc((size_t)k * d * 8);
    CU(cudaMemcpyAsync(g, a.c64, (size_t)k * d * 8, cudaMemcpyDeviceToHost, s));
    CU(cudaStreamSynchronize(s));
    for (int e = 0; e < k * d; e++)
        if (fabs(g[e] - c64[e]) > 1e-4 * (fabs(c64[e]) + 1.0))
            fail_msg("lloyd method %d: centroid value %d: %.9g, reference %.9g", method, e, g[e],
                     c64[e]);
    free(g); free(cf); free(c64); free(rs); free(rc); free(rl);
    acc_fini(&a);
    pts_free(&p);
    CU(cudaStreamDestroy(s));
}

SL_TEST(lloyd_matches_cpu)
{
    REQUIRE_GPU();
    for (unsigned m = 0; m < sizeof methods / sizeof methods[0]; m++)
        check_lloyd(20000, 16, 64, methods[m], 10, 21);
    check_lloyd(4096, 8, 1500, SL_K_KMEANS_AUTO, 4, 22);
}

SL_TEST(plusplus_matches_cpu)
{
    REQUIRE_GPU();
    const struct { int64_t n; int d, k; } cases[] = {{30000, 16, 16}, {5000, 4, 50}, {3, 2, 3}};
    for (unsigned q = 0; q < 3; q++) {
        int64_t n = cases[q].n;
        int d = cases[q].d, k = cases[q].k;
        uint64_t seed = 30 + q;
        struct pts p;
        pts_make(&p, n, d, 5, seed, q == 1);
        int64_t *ref = malloc((size_t)k * 8), *got = malloc((size_t)k * 8);
        kmr_plusplus((const float *const *)p.h, n, d, k, seed, ref);
        cudaStream_t s;
        CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        double *d2, *last, *total, *lh = malloc((size_t)d * 8);
        long long *pick;
        CU(cudaMalloc((void **)&d2, (size_t)n * 8));
        CU(cudaMalloc((void **)&last, (size_t)d * 8));
        CU(cudaMalloc((void **)&total, 8));
        CU(cudaMalloc((void **)&pick, 8));
        size_t t1 = 0, t2 = 0;
        CU(sl_k_kmeans_pp_total(NULL, &t1, d2, n, total, s));
        CU(sl_k_kmeans_pp_pick(NULL, &t2, d2, n, 0, pick, s));
        void *tmp;
        CU(cudaMalloc(&tmp, t1 > t2 ? t1 : t2));
        uint64_t r = seed;
        got[0] = (int64_t)(kmr_rng(&r) % (uint64_t)n);
        for (int c = 1; c < k; c++) {
            for (int j = 0; j < d; j++)
                lh[j] = p.h[j][got[c - 1]];
            CU(cudaMemcpyAsync(last, lh, (size_t)d * 8, cudaMemcpyHostToDevice, s));
            CU(sl_k_kmeans_pp_update_f32((const float *const *)p.dv, d, n, last, c == 1, d2, s));
            CU(sl_k_kmeans_pp_total(tmp, &t1, d2, n, total, s));
            double tot = 0;
            CU(cudaMemcpyAsync(&tot, total, 8, cudaMemcpyDeviceToHost, s));
            CU(cudaStreamSynchronize(s));
            int64_t pk = (int64_t)(kmr_rng(&r) % (uint64_t)n);
            if (tot > 0) {
                double u = (double)(kmr_rng(&r) >> 11) * 0x1.0p-53 * tot;
                long long v = 0;
                CU(sl_k_kmeans_pp_pick(tmp, &t2, d2, n, u, pick, s));
                CU(cudaMemcpyAsync(&v, pick, 8, cudaMemcpyDeviceToHost, s));
                CU(cudaStreamSynchronize(s));
                pk = v;
            }
            got[c] = pk;
        }
        for (int c = 0; c < k; c++)
            assert_int_equal(got[c], ref[c]);
        free(ref); free(got); free(lh);
        cudaFree(d2); cudaFree(last); cudaFree(total); cudaFree(pick); cudaFree(tmp);
        CU(cudaStreamDestroy(s));
        pts_free(&p);
    }
}

/* ---------------- operator level: kmeans with placement gpu vs cpu ---------------- */

static sl_table_t *points_table(int64_t n, int d, int kt, uint64_t seed, int grid, int64_t chunk)
{
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    char names[SL_K_KMEANS_MAX_DIMS][8];
    const char *np[SL_K_KMEANS_MAX_DIMS];
    enum sl_type ty[SL_K_KMEANS_MAX_DIMS];
    for (int j = 0; j < d; j++) {
        snprintf(names[j], sizeof names[j], "f%d", j);
        np[j] = names[j];
        ty[j] = SL_TYPE_FLOAT32;
    }
    struct pts p;
    memset(&p, 0, sizeof p);
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 7;
    float *ctr = malloc((size_t)kt * d * sizeof *ctr);
    for (int e = 0; e < kt * d; e++)
        ctr[e] = (float)(unit(&x) * 20 - 10);
    for (int64_t lo = 0; lo < n || lo == 0; lo += chunk) {
        int64_t m = n - lo < chunk ? n - lo : chunk;
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, d, np, ty, m));
        for (int64_t i = 0; i < m; i++) {
            int w = (int)(unit(&x) * kt);
            for (int j = 0; j < d; j++) {
                float v = ctr[w * d + j] + (float)(unit(&x) * 2 - 1);
                ((float *)sl_batch_column_data(b, j))[i] = grid ? floorf(v) : v;
            }
        }
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
        if (m == 0)
            break;
    }
    free(ctr);
    return t;
}

/* Runs kmeans(opts) over t; returns the result in host memory, or NULL with the error
 * code and message when the query fails. */
static sl_table_t *km_run(sl_engine_t *e, sl_table_t *t, const char *opts, int *on_gpu, int *rc,
                          char *msg, size_t msg_len)
{
    sl_plan_t *p;
    int ns, nk;
    SL_ASSERT_OK(sl_plan_create(&p));
    SL_ASSERT_OK(sl_plan_add_table(p, t, &ns));
    *rc = sl_plan_add(p, "kmeans", &ns, 1, opts, &nk);
    if (*rc != SL_OK) { /* found at bind (rows known): the same on every placement */
        snprintf(msg, msg_len, "%s", sl_last_errmsg());
        if (on_gpu)
            *on_gpu = 0;
        sl_plan_destroy(p);
        return NULL;
    }
    SL_ASSERT_OK(sl_plan_output(p, nk, "o"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    *rc = sl_query_run(q);
    sl_table_t *host = NULL;
    if (*rc == SL_OK) {
        sl_table_t *out;
        SL_ASSERT_OK(sl_query_result(q, "o", &out));
        SL_ASSERT_OK(sl_table_to_host(out, &host));
        sl_table_unref(out);
    } else {
        snprintf(msg, msg_len, "%s", sl_query_errmsg(q));
    }
    if (on_gpu)
        *on_gpu = q->ops[nk].home_gpu >= 0;
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return host;
}

static double cell(sl_table_t *t, int col, int64_t row)
{
    for (int64_t bi = 0; bi < sl_table_num_batches(t); bi++) {
        sl_batch_t *b = sl_table_batch(t, bi);
        if (row >= sl_batch_num_rows(b)) {
            row -= sl_batch_num_rows(b);
            continue;
        }
        struct sl_column c;
        sl_batch_column(b, col, &c);
        if (c.type == SL_TYPE_FLOAT64)
            return ((const double *)c.data)[c.offset + row];
        if (c.type == SL_TYPE_FLOAT32)
            return ((const float *)c.data)[c.offset + row];
        return (double)((const int64_t *)c.data)[c.offset + row];
    }
    fail_msg("row out of range");
    return 0;
}

/* The same kmeans on the CPU and the GPU (placement gpu, optionally GPU-resident input,
 * optionally a GPU budget): both fail alike, or centroids within relative 1e-4, sizes
 * equal (no ties in these inputs or ties broken alike), same iterations, inertia within
 * 1e-4; for output=assignments the clusters row by row. */
static void op_check(int64_t n, int d, int kt, uint64_t seed, int grid, const char *opts,
                     int resident, int64_t gpu_mem, int expect_gpu)
{
    sl_table_t *t = points_table(n, d, kt, seed, grid, 30000);
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0), *gpu = gpu_test_engine(SL_PLACE_GPU, gpu_mem);
    int rc_c, rc_g, on_gpu = -1;
    char m_c[512] = "", m_g[512] = "";
    sl_table_t *want = km_run(cpu, t, opts, NULL, &rc_c, m_c, sizeof m_c);
    sl_table_t *gt = t;
    if (resident)
        SL_ASSERT_OK(sl_table_to_device(gpu, t, 0, &gt));
    sl_table_t *got = km_run(gpu, gt, opts, &on_gpu, &rc_g, m_g, sizeof m_g);
    if (resident)
        sl_table_unref(gt);
    printf("kmeans %s n=%lld d=%d%s: cpu rc %d, gpu rc %d, on the GPU: %d %s %s\n", opts,
           (long long)n, d, resident ? " resident" : "", rc_c, rc_g, on_gpu, m_c, m_g);
    assert_int_equal(rc_g, rc_c);
    if (rc_c != SL_OK) {
        assert_string_equal(m_g, m_c);
        assert_int_equal(rc_c, expect_gpu); /* here: the expected error code */
    } else {
        assert_int_equal(on_gpu, expect_gpu);
        int64_t rows = sl_table_num_rows(want);
        assert_int_equal(sl_table_num_rows(got), rows);
        if (strstr(opts, "output=assignments")) {
            int64_t diff = 0;
            for (int64_t r = 0; r < rows; r++)
                diff += cell(got, d, r) != cell(want, d, r);
            assert_int_equal(diff, 0);
        } else {
            for (int64_t c = 0; c < rows; c++) {
                for (int j = 0; j < d; j++) {
                    double g = cell(got, j, c), w = cell(want, j, c);
                    if (fabs(g - w) > 1e-4 * (fabs(w) + 1.0))
                        fail_msg("centroid %lld feature %d: gpu %.9g, cpu %.9g", (long long)c, j,
                                 g, w);
                }
                assert_int_equal((int64_t)cell(got, d + 1, c), (int64_t)cell(want, d + 1, c));
                assert_int_equal((int64_t)cell(got, d + 3, c), (int64_t)cell(want, d + 3, c));
                double gi = cell(got, d + 2, c), wi = cell(want, d + 2, c);
                /* absolute slack for float rounding where the inertia is ~0 (k = n):
                 * the CPU's squared distances of points ~10 apart round at ~1e-5 */
                if (fabs(gi - wi) > 1e-4 * fabs(wi) + 1e-4)
                    fail_msg("inertia gpu %.9g, cpu %.9g", gi, wi);
            }
        }
    }
    if (want)
        sl_table_unref(want);
    if (got)
        sl_table_unref(got);
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    sl_engine_mem_stats(gpu, &ms);
    assert_int_equal(ms.gpu_in_use, 0);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
    sl_table_unref(t);
}

SL_TEST(op_d16_k64_init_modes)
{
    NEED_GPU();
    op_check(200000, 16, 64, 41, 0, "k=64 init=random seed=3 max_iter=10 tol=0", 0, 0, 1);
    op_check(200000, 16, 64, 41, 0, "k=64 init=random seed=3 max_iter=10 tol=0", 1, 0, 1);
    op_check(100000, 16, 64, 42, 0, "k=64 init=kmeans++ seed=5 max_iter=20", 0, 0, 1);
    op_check(50000, 16, 32, 43, 0, "k=32 init=kmeans++ seed=1 output=assignments", 0, 0, 1);
    /* converges after more than one window of iterations (the device-side stop) */
    op_check(200000, 16, 64, 41, 0, "k=64 init=random seed=3 max_iter=60 tol=1e-6", 1, 0, 1);
}

SL_TEST(op_small_k1_and_given)
{
    NEED_GPU();
    op_check(1000, 2, 3, 44, 0, "k=3 init=given centroids=\"0,0;5,5;-5,5\" max_iter=50", 0, 0, 1);
    op_check(70001, 16, 4, 45, 0, "k=1 init=random seed=9", 0, 0, 1);
    op_check(5, 3, 2, 46, 0, "k=5 init=random seed=2", 0, 0, 1); /* k = n */
}

SL_TEST(op_errors_as_cpu)
{
    NEED_GPU();
    op_check(5, 3, 2, 47, 0, "k=6 init=random", 0, 0, SL_EINVAL);   /* n < k */
    op_check(0, 3, 2, 48, 0, "k=2 init=kmeans++", 0, 0, SL_EINVAL); /* empty input */
}

SL_TEST(op_large_kd_and_ties)
{
    NEED_GPU();
    op_check(60000, 16, 200, 49, 0, "k=2000 init=random seed=4 max_iter=4 tol=0", 0, 0, 1);
    /* AUTO picks the tensor-core fused kernel (k >= 192): centroids, and labels row by row */
    op_check(100000, 16, 64, 53, 0, "k=200 init=random seed=6 max_iter=5 tol=0", 1, 0, 1);
    op_check(50000, 12, 64, 54, 0, "k=192 init=kmeans++ seed=2 max_iter=3 output=assignments", 0,
             0, 1);
    op_check(20000, 80, 10, 50, 0, "k=20 init=kmeans++ seed=4 max_iter=6", 0, 0, 1);
    /* integer points and two equal given centroids: exact ties, lowest index everywhere */
    op_check(30000, 2, 3, 51, 1, "k=3 init=given centroids=\"1,1;1,1;-3,4\" max_iter=3 tol=0", 0, 0,
             1);
}

SL_TEST(op_streams_past_the_budget)
{
    NEED_GPU();
    /* 2^20 points x 16 features (64 MiB) under a 48 MiB GPU budget: later batches are
     * kept in host memory and streamed through the GPU every iteration. */
    op_check(1 << 20, 16, 64, 52, 0, "k=64 init=random seed=8 max_iter=5 tol=0", 0,
             (int64_t)48 << 20, 1);
}
