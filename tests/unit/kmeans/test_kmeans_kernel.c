/* Tests of the k-means CPU kernel (operators/kmeans/kmeans_dist.c,
 * sl__km_assign_sum_f32) against a plain float64 reference on random inputs: sizes
 * around the kernel's block (0, 1, 23, 24, 25, ... points), dims and cluster counts that
 * are not multiples of the vector width or of 4, uniform points, blobs and large values.
 * Each label is the reference's nearest centroid, or one whose float64 distance is
 * within the float32 rounding of the nearest (a near-tie); each distance is within that
 * rounding of the float64 distance to the chosen centroid; the sums equal, bit for bit,
 * float64 sums of the points in row order under the kernel's labels, the counts theirs,
 * and the returned inertia the row-order float64 sum of the distances. Exact ties go to the lowest index, and a point gets the same label and
 * distance in a full block as in the zero-padded last one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kmeans/kmeans_int.h"
#include "sl_test.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    return sl_test_rand(&rng);
}
static double unit(void)
{
    return sl_test_unit(&rng);
}

/* The kernel's inputs: d columns of n points, kp centroid rows (k used), half norms. */
struct kcase {
    int64_t n;
    int d, k, kp;
    float **cols;
    float *ct, *hn;
};

static void case_init(struct kcase *c, int64_t n, int d, int k, double scale, bool blobs)
{
    c->n = n;
    c->d = d;
    c->k = k;
    c->kp = (k + 3) & ~3;
    c->cols = malloc((size_t)d * sizeof *c->cols);
    c->ct = calloc((size_t)c->kp * d, sizeof(float));
    c->hn = malloc((size_t)c->kp * sizeof(float));
    for (int q = 0; q < k; q++)
        for (int j = 0; j < d; j++)
            c->ct[q * d + j] = (float)((unit() * 2 - 1) * scale);
    for (int j = 0; j < d; j++) {
        c->cols[j] = malloc((size_t)(n + 1) * sizeof(float));
        for (int64_t i = 0; i < n; i++)
            c->cols[j][i] = (float)((unit() * 2 - 1) * scale);
    }
    if (blobs) /* points near centroids: far apart scores, the usual shape */
        for (int64_t i = 0; i < n; i++) {
            int q = (int)(rnd() % (uint64_t)k);
            for (int j = 0; j < d; j++)
                c->cols[j][i] = c->ct[q * d + j] + (float)((unit() * 2 - 1) * scale * 0.01);
        }
    /* As the operator prepares them (kmeans.c, prepare_kernel). */
    for (int q = 0; q < c->kp; q++) {
        float nn = 0;
        for (int j = 0; j < d && q < k; j++)
            nn += c->ct[q * d + j] * c->ct[q * d + j];
        c->hn[q] = q < k ? nn / 2 : INFINITY;
    }
}

static void case_free(struct kcase *c)
{
    for (int j = 0; j < c->d; j++)
        free(c->cols[j]);
    free(c->cols);
    free(c->ct);
    free(c->hn);
}

static double ref_dist(const struct kcase *c, int64_t i, int q)
{
    double s = 0;
    for (int j = 0; j < c->d; j++) {
        double e = (double)c->cols[j][i] - (double)c->ct[q * c->d + j];
        s += e * e;
    }
    return s;
}

/* The float32 rounding of ||x||^2 - 2 x.c + ||c||^2: a few units of 2^-24 per term of
 * the d-term sums, relative to (||x|| + ||c||)^2. */
static double tolerance(const struct kcase *c, int64_t i, int q)
{
    double nx = 0, nc = 0;
    for (int j = 0; j < c->d; j++) {
        nx += (double)c->cols[j][i] * c->cols[j][i];
        nc += (double)c->ct[q * c->d + j] * c->ct[q * c->d + j];
    }
    double r = sqrt(nx) + sqrt(nc);
    return 4.0 * (c->d + 2) * 0x1.0p-24 * r * r;
}

/* Runs the kernel on c and checks it; returns the number of near-tie labels. */
static int64_t check_case(const struct kcase *c)
{
    int64_t n = c->n;
    int d = c->d;
    int32_t *lab = malloc((size_t)(n + 1) * sizeof *lab);
    float *dist = malloc((size_t)(n + 1) * sizeof *dist);
    double *sums = calloc((size_t)c->kp * d, sizeof(double));
    double *want = calloc((size_t)c->kp * d, sizeof(double));
    int64_t *cnt = calloc((size_t)c->kp, sizeof(int64_t));
    int64_t *wcnt = calloc((size_t)c->kp, sizeof(int64_t));
    double inertia = sl__km_assign_sum_f32((const float *const *)c->cols, n, d, c->ct, c->hn,
                                           c->kp, lab, dist, sums, cnt);
    int64_t near = 0;
    double want_inertia = 0;
    for (int64_t i = 0; i < n; i++) {
        int best = 0;
        for (int q = 1; q < c->k; q++)
            if (ref_dist(c, i, q) < ref_dist(c, i, best))
                best = q;
        int got = lab[i];
        if (got < 0 || got >= c->k)
            fail_msg("n=%lld d=%d k=%d point %lld: label %d out of range", (long long)n, d,
                     c->k, (long long)i, got);
        double dg = ref_dist(c, i, got), db = ref_dist(c, i, best);
        if (got != best) {
            if (dg - db > tolerance(c, i, got) + tolerance(c, i, best))
                fail_msg("n=%lld d=%d k=%d point %lld: label %d (%.9g), nearest %d (%.9g)",
                         (long long)n, d, c->k, (long long)i, got, dg, best, db);
            near++;
        }
        if (fabs((double)dist[i] - dg) > tolerance(c, i, got))
            fail_msg("n=%lld d=%d k=%d point %lld: distance %.9g, float64 %.9g", (long long)n,
                     d, c->k, (long long)i, (double)dist[i], dg);
        for (int j = 0; j < d; j++)
            want[(int64_t)got * d + j] += c->cols[j][i];
        wcnt[got]++;
        want_inertia += dist[i];
    }
    assert_memory_equal(&inertia, &want_inertia, sizeof inertia);
    assert_memory_equal(sums, want, (size_t)c->kp * d * sizeof(double));
    assert_memory_equal(cnt, wcnt, (size_t)c->kp * sizeof(int64_t));
    free(lab);
    free(dist);
    free(sums);
    free(want);
    free(cnt);
    free(wcnt);
    return near;
}

SL_TEST(km_kernel_matches_float64_reference)
{
    const int64_t ns[] = {0, 1, 7, 23, 24, 25, 48, 50, 1000, 1003};
    const int ds[] = {1, 2, 3, 7, 8, 9, 16, 17};
    const int ks[] = {1, 2, 3, 5, 8, 64, 65};
    int64_t near = 0, points = 0;
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
        for (size_t b = 0; b < sizeof ds / sizeof *ds; b++)
            for (size_t e = 0; e < sizeof ks / sizeof *ks; e++) {
                struct kcase c;
                case_init(&c, ns[a], ds[b], ks[e], 10.0, (a + b + e) % 2 == 0);
                near += check_case(&c);
                points += ns[a];
                case_free(&c);
            }
    /* Near-ties are rare on random data; many would mean a wrong kernel hiding inside
     * the tolerance. */
    if (near * 1000 > points)
        fail_msg("%lld of %lld labels are near-ties", (long long)near, (long long)points);
}

SL_TEST(km_kernel_large_and_small_values)
{
    const double scales[] = {1e-6, 1e6, 1e15};
    for (size_t s = 0; s < sizeof scales / sizeof *scales; s++) {
        struct kcase c;
        case_init(&c, 997, 16, 64, scales[s], true);
        check_case(&c);
        case_free(&c);
    }
}

/* Centroid 5 is a copy of centroid 1: its scores equal 1's exactly, so no point goes
 * to 5, as in the float64 reference (lowest index). */
SL_TEST(km_kernel_exact_ties_take_lowest_index)
{
    struct kcase c;
    case_init(&c, 500, 16, 8, 10.0, true);
    memcpy(c.ct + 5 * 16, c.ct + 1 * 16, 16 * sizeof(float));
    c.hn[5] = c.hn[1];
    int32_t lab[500];
    float dist[500];
    double sums[8 * 16] = {0};
    int64_t cnt[8] = {0};
    sl__km_assign_sum_f32((const float *const *)c.cols, 500, 16, c.ct, c.hn, 8, lab, dist, sums,
                          cnt);
    assert_int_equal(cnt[5], 0);
    assert_true(cnt[1] > 0);
    case_free(&c);
}

/* Points 0..49 in one call and points 0..29 in another (a zero-padded last block of 6):
 * the shared points get the same labels and distances, bit for bit. */
SL_TEST(km_kernel_padded_block_equals_full)
{
    struct kcase c;
    case_init(&c, 50, 9, 13, 10.0, false);
    int32_t l1[50], l2[50];
    float d1[50], d2[50];
    double s1[16 * 9] = {0}, s2[16 * 9] = {0};
    int64_t n1[16] = {0}, n2[16] = {0};
    sl__km_assign_sum_f32((const float *const *)c.cols, 50, 9, c.ct, c.hn, c.kp, l1, d1, s1, n1);
    sl__km_assign_sum_f32((const float *const *)c.cols, 30, 9, c.ct, c.hn, c.kp, l2, d2, s2, n2);
    assert_memory_equal(l1, l2, 30 * sizeof(int32_t));
    assert_memory_equal(d1, d2, 30 * sizeof(float));
    case_free(&c);
}
