/* Tests of the kmeans operator against a plain float64 Lloyd reference: from given
 * initial centroids (option or second input) on well-separated blobs, the centroids
 * agree within a relative 1e-4 and the assignments are equal (no ties on such data);
 * float32 and float64 features; 1 and 2 threads and small morsels give identical
 * results; kmeans++ and random init are deterministic for a seed; a cluster with no
 * points keeps its centroid; bad options (k=0, k > rows, non-float feature, bad init)
 * fail with clear errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sl_test.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static double unit(void)
{
    return (double)(rnd() >> 11) * 0x1.0p-53;
}

static const char *const fnames[] = {"f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7"};

/* n points in d dims around k centres spread over [-50, 50]^d, noise +-1; row-major. */
static double *blobs(int64_t n, int d, int k, double *centres)
{
    for (int c = 0; c < k; c++)
        for (int j = 0; j < d; j++)
            centres[c * d + j] = unit() * 100 - 50;
    double *x = malloc((size_t)(n * d + 1) * sizeof *x);
    for (int64_t i = 0; i < n; i++) {
        int c = (int)(rnd() % (uint64_t)k);
        for (int j = 0; j < d; j++)
            x[i * d + j] = centres[c * d + j] + (unit() * 2 - 1);
    }
    return x;
}

/* A table of the points (float32 or float64 columns f0..), plus an int "id" column. */
static sl_table_t *points_table(const double *x, int64_t n, int d, enum sl_type ty, int64_t batch)
{
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    const char *names[9];
    enum sl_type types[9];
    for (int j = 0; j < d; j++) {
        names[j] = fnames[j];
        types[j] = ty;
    }
    names[d] = "id";
    types[d] = SL_TYPE_INT64;
    for (int64_t at = 0; at < n || (n == 0 && at == 0); at += batch) {
        int64_t len = n - at < batch ? n - at : batch;
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, d + 1, names, types, len));
        for (int j = 0; j < d; j++) {
            void *v = sl_batch_column_data(b, j);
            for (int64_t r = 0; r < len; r++) {
                if (ty == SL_TYPE_FLOAT32)
                    ((float *)v)[r] = (float)x[(at + r) * d + j];
                else
                    ((double *)v)[r] = x[(at + r) * d + j];
            }
        }
        int64_t *id = sl_batch_column_data(b, d);
        for (int64_t r = 0; r < len; r++)
            id[r] = at + r;
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
        if (n == 0)
            break;
    }
    return t;
}

/* The float64 reference: Lloyd from c (k x d, updated in place) with the operator's
 * stopping rule; returns iterations and fills labels, sizes. */
static int64_t ref_lloyd(const double *x, int64_t n, int d, int k, double *c, int64_t max_iter,
                         double tol, int32_t *labels, int64_t *size)
{
    double *s = malloc((size_t)k * d * sizeof *s);
    int64_t it = 0;
    for (;;) {
        memset(s, 0, (size_t)k * d * sizeof *s);
        memset(size, 0, (size_t)k * sizeof *size);
        for (int64_t i = 0; i < n; i++) {
            double best = INFINITY;
            int bi = 0;
            for (int q = 0; q < k; q++) {
                double dd = 0;
                for (int j = 0; j < d; j++)
                    dd += (x[i * d + j] - c[q * d + j]) * (x[i * d + j] - c[q * d + j]);
                if (dd < best) {
                    best = dd;
                    bi = q;
                }
            }
            labels[i] = bi;
            size[bi]++;
            for (int j = 0; j < d; j++)
                s[bi * d + j] += x[i * d + j];
        }
        double shift = 0, norm = 0;
        for (int q = 0; q < k; q++)
            for (int j = 0; j < d; j++) {
                double old = c[q * d + j], nv = size[q] ? s[q * d + j] / size[q] : old;
                shift += (nv - old) * (nv - old);
                norm += old * old;
                c[q * d + j] = nv;
            }
        it++;
        if (it >= max_iter || shift <= tol * tol * norm)
            break;
    }
    free(s);
    return it;
}

static sl_engine_t *open_engine(int threads, int64_t morsel)
{
    return sl_test_cpu_engine(threads, morsel);
}

static void assert_no_leaks(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

/* Runs kmeans over in (and init, if not NULL); returns the result or NULL with *rc. */
static sl_table_t *run_km(sl_engine_t *e, sl_table_t *in, sl_table_t *init, const char *opts,
                          int *rc_out)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int ids[2], a;
    SL_ASSERT_OK(sl_plan_add_table(p, in, &ids[0]));
    if (init)
        SL_ASSERT_OK(sl_plan_add_table(p, init, &ids[1]));
    int rc = sl_plan_add(p, "kmeans", ids, init ? 2 : 1, opts, &a);
    sl_table_t *r = NULL;
    if (rc == SL_OK) {
        SL_ASSERT_OK(sl_plan_output(p, a, "r"));
        sl_query_t *q;
        SL_ASSERT_OK(sl_query_create(e, p, &q));
        rc = sl_query_run(q);
        if (rc == SL_OK)
            SL_ASSERT_OK(sl_query_result(q, "r", &r));
        else if (!rc_out)
            fail_msg("query failed: %s", sl_query_errmsg(q));
        sl_query_destroy(q);
    } else if (!rc_out) {
        fail_msg("plan failed: %s", sl_plan_errmsg(p));
    }
    if (rc_out)
        *rc_out = rc;
    sl_plan_destroy(p);
    return r;
}

/* Reads a numeric column of a result into a double array indexed by row. */
static double *read_col(sl_table_t *t, const char *name)
{
    int64_t n = sl_table_num_rows(t), at = 0;
    double *v = malloc((size_t)(n + 1) * sizeof *v);
    for (int64_t b = 0; b < sl_table_num_batches(t); b++) {
        sl_batch_t *bt = sl_table_batch(t, b);
        struct sl_column c;
        int idx = sl_batch_column_index(bt, name);
        assert_true(idx >= 0);
        SL_ASSERT_OK(sl_batch_column(bt, idx, &c));
        for (int64_t r = 0; r < c.length; r++, at++) {
            int64_t k = c.offset + r;
            switch (c.type) {
            case SL_TYPE_INT32: v[at] = ((const int32_t *)c.data)[k]; break;
            case SL_TYPE_INT64: v[at] = (double)((const int64_t *)c.data)[k]; break;
            case SL_TYPE_FLOAT32: v[at] = ((const float *)c.data)[k]; break;
            default: v[at] = ((const double *)c.data)[k]; break;
            }
        }
    }
    return v;
}

/* Centroids of a centroids result, row-major by cluster id. */
static double *result_centroids(sl_table_t *t, int d, int k, int64_t *size)
{
    assert_int_equal(sl_table_num_rows(t), k);
    double *c = malloc((size_t)k * d * sizeof *c), *cl = read_col(t, "cluster"),
           *sz = read_col(t, "size");
    for (int j = 0; j < d; j++) {
        double *f = read_col(t, fnames[j]);
        for (int q = 0; q < k; q++)
            c[(int)cl[q] * d + j] = f[q];
        free(f);
    }
    for (int q = 0; q < k && size; q++)
        size[(int)cl[q]] = (int64_t)sz[q];
    free(cl);
    free(sz);
    return c;
}

static void assert_close(const double *a, const double *b, int64_t m, double rel)
{
    for (int64_t i = 0; i < m; i++)
        if (fabs(a[i] - b[i]) > rel * fmax(1.0, fabs(b[i])))
            fail_msg("value %lld: %.9g vs reference %.9g", (long long)i, a[i], b[i]);
}

static char *centroid_text(const double *c, int k, int d)
{
    char *s = malloc((size_t)k * d * 32 + 16), *p = s;
    for (int q = 0; q < k; q++)
        for (int j = 0; j < d; j++)
            p += sprintf(p, "%.17g%s", c[q * d + j], j == d - 1 ? ";" : ",");
    return s;
}

/* From given centroids (near the true centres, or every point when k = n), compare centroids, sizes and assignments. */
static void given_case(sl_engine_t *e, enum sl_type ty, int64_t n, int d, int k, int64_t batch,
                       int via_table)
{
    double *centres = malloc((size_t)k * d * sizeof(double));
    double *x = blobs(n, d, k, centres);
    if (ty == SL_TYPE_FLOAT32)
        for (int64_t i = 0; i < n * d; i++)
            x[i] = (float)x[i];
    double *c0 = malloc((size_t)k * d * sizeof(double));
    for (int q = 0; q < k; q++)
        for (int j = 0; j < d; j++)
            c0[q * d + j] = k < n ? centres[q * d + j] + (unit() - 0.5) * 0.5
                                  : x[(int64_t)(q * 7919 % n) * d + j];
    sl_table_t *in = points_table(x, n, d, ty, batch);
    sl_table_t *init = via_table ? points_table(c0, k, d, ty, k) : NULL;
    char *ctext = centroid_text(c0, k, d), opts[256];
    char *o = malloc(strlen(ctext) + 256);
    sprintf(o, "k=%d init=given tol=0 max_iter=20 %s%s%s", k, via_table ? "" : "centroids=\"",
            via_table ? "" : ctext, via_table ? "" : "\"");
    sl_table_t *r = run_km(e, in, init, o, NULL);
    int32_t *lab = malloc((size_t)n * sizeof *lab);
    int64_t *rsize = malloc((size_t)k * sizeof *rsize), *gsize = malloc((size_t)k * sizeof *gsize);
    double *rc = malloc((size_t)k * d * sizeof *rc);
    memcpy(rc, c0, (size_t)k * d * sizeof *rc);
    int64_t it = ref_lloyd(x, n, d, k, rc, 20, 0, lab, rsize);
    double *got = result_centroids(r, d, k, gsize);
    assert_close(got, rc, (int64_t)k * d, 1e-4);
    for (int q = 0; q < k; q++)
        assert_int_equal(gsize[q], rsize[q]);
    double *iters = read_col(r, "iterations");
    assert_int_equal((int64_t)iters[0], it);
    free(iters);
    sl_table_unref(r);
    /* Assignments from the same start. */
    snprintf(opts, sizeof opts, " output=assignments");
    strcat(o, opts);
    r = run_km(e, in, init, o, NULL);
    assert_int_equal(sl_table_num_rows(r), n);
    double *id = read_col(r, "id"), *cl = read_col(r, "cluster");
    for (int64_t i = 0; i < n; i++)
        if ((int32_t)cl[i] != lab[(int64_t)id[i]])
            fail_msg("row %lld: cluster %d, reference %d", (long long)id[i], (int)cl[i],
                     lab[(int64_t)id[i]]);
    free(id);
    free(cl);
    sl_table_unref(r);
    sl_table_unref(in);
    sl_table_unref(init);
    free(centres);
    free(x);
    free(c0);
    free(ctext);
    free(o);
    free(lab);
    free(rsize);
    free(gsize);
    free(rc);
    free(got);
}

SL_TEST(km_given_matches_reference_f32)
{
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = open_engine(th, 1000);
        given_case(e, SL_TYPE_FLOAT32, 5000, 4, 5, 777, 0);
        given_case(e, SL_TYPE_FLOAT32, 3001, 8, 13, 1000, 1); /* k not a multiple of 4 */
        given_case(e, SL_TYPE_FLOAT32, 50, 3, 50, 7, 0);      /* k = rows */
        sl_engine_close(e);
    }
    assert_no_leaks();
}

SL_TEST(km_given_matches_reference_f64)
{
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = open_engine(th, 64);
        given_case(e, SL_TYPE_FLOAT64, 4000, 5, 6, 333, 0);
        given_case(e, SL_TYPE_FLOAT64, 999, 2, 3, 64, 1);
        sl_engine_close(e);
    }
    assert_no_leaks();
}

/* Same seed -> bitwise equal centroids, whatever the threads and morsels. */
static double *seeded_run(int threads, int64_t batch, const char *init, enum sl_type ty)
{
    rng = 12345;
    double centres[8 * 4];
    double *x = blobs(6000, 4, 8, centres);
    sl_engine_t *e = open_engine(threads, 500);
    sl_table_t *in = points_table(x, 6000, 4, ty, batch);
    char o[128];
    snprintf(o, sizeof o, "k=8 init=%s seed=7", init);
    sl_table_t *r = run_km(e, in, NULL, o, NULL);
    double *c = result_centroids(r, 4, 8, NULL);
    double *inertia = read_col(r, "inertia");
    assert_true(inertia[0] > 0);
    free(inertia);
    sl_table_unref(r);
    sl_table_unref(in);
    sl_engine_close(e);
    free(x);
    return c;
}

SL_TEST(km_deterministic_for_seed)
{
    const char *inits[] = {"kmeans++", "random"};
    for (int i = 0; i < 2; i++) {
        for (int t = 0; t < 2; t++) {
            enum sl_type ty = t ? SL_TYPE_FLOAT64 : SL_TYPE_FLOAT32;
            double *a = seeded_run(1, 500, inits[i], ty), *b = seeded_run(2, 500, inits[i], ty);
            double *c = seeded_run(2, 500, inits[i], ty);
            assert_memory_equal(a, b, 8 * 4 * sizeof(double));
            assert_memory_equal(a, c, 8 * 4 * sizeof(double));
            free(a);
            free(b);
            free(c);
        }
    }
    assert_no_leaks();
}

SL_TEST(km_empty_cluster_keeps_centroid)
{
    sl_engine_t *e = open_engine(2, 100);
    double centres[2 * 2];
    double *x = blobs(1000, 2, 2, centres);
    sl_table_t *in = points_table(x, 1000, 2, SL_TYPE_FLOAT64, 100);
    char o[256];
    snprintf(o, sizeof o, "k=3 init=given centroids=\"%.17g,%.17g; %.17g,%.17g; 1e6,1e6\"",
             centres[0], centres[1], centres[2], centres[3]);
    sl_table_t *r = run_km(e, in, NULL, o, NULL);
    int64_t size[3];
    double *c = result_centroids(r, 2, 3, size);
    assert_int_equal(size[2], 0);
    assert_int_equal(size[0] + size[1], 1000);
    assert_true(c[4] == 1e6 && c[5] == 1e6);
    free(c);
    sl_table_unref(r);
    sl_table_unref(in);
    sl_engine_close(e);
    free(x);
    assert_no_leaks();
}

/* Equal centroids tie exactly for every point: the lowest index wins (as scikit-learn's
 * and the GPU kernels' argmin), so the later copy gets no point. One iteration, so the
 * sizes are those of the given centroids' assignment. */
SL_TEST(km_ties_go_to_lowest_index)
{
    sl_engine_t *e = open_engine(2, 100);
    double centres[2 * 2];
    double *x = blobs(1000, 2, 2, centres);
    sl_table_t *in = points_table(x, 1000, 2, SL_TYPE_FLOAT64, 100);
    for (int later = 1; later <= 2; later++) {
        /* later = 1: A; A; B, later = 2: A; B; B */
        const double *c0 = centres, *c1 = centres + (later == 1 ? 0 : 2), *c2 = centres + 2;
        char o[320];
        snprintf(o, sizeof o,
                 "k=3 max_iter=1 tol=0 init=given centroids=\"%.17g,%.17g; %.17g,%.17g; "
                 "%.17g,%.17g\"", c0[0], c0[1], c1[0], c1[1], c2[0], c2[1]);
        sl_table_t *r = run_km(e, in, NULL, o, NULL);
        int64_t size[3];
        double *c = result_centroids(r, 2, 3, size);
        if (size[later] != 0 || size[later - 1] == 0)
            fail_msg("centroids %d and %d are equal: sizes %lld and %lld, want all on %d",
                     later - 1, later, (long long)size[later - 1], (long long)size[later],
                     later - 1);
        assert_int_equal(size[0] + size[1] + size[2], 1000);
        free(c);
        sl_table_unref(r);
    }
    sl_table_unref(in);
    sl_engine_close(e);
    free(x);
    assert_no_leaks();
}

SL_TEST(km_bad_options)
{
    sl_engine_t *e = open_engine(1, 100);
    double centres[4], *x = blobs(10, 2, 2, centres);
    sl_table_t *in = points_table(x, 10, 2, SL_TYPE_FLOAT32, 10);
    int rc;
    assert_null(run_km(e, in, NULL, "k=0", &rc));
    assert_int_equal(rc, SL_EINVAL);
    assert_null(run_km(e, in, NULL, "k=11", &rc)); /* more clusters than rows */
    assert_int_equal(rc, SL_EINVAL);
    assert_null(run_km(e, in, NULL, "k=2 features=\"f0,id\"", &rc));
    assert_int_equal(rc, SL_ETYPE);
    assert_null(run_km(e, in, NULL, "k=2 init=magic", &rc));
    assert_int_equal(rc, SL_EINVAL);
    assert_null(run_km(e, in, NULL, "k=2 init=given", &rc));
    assert_int_equal(rc, SL_EINVAL);
    assert_null(run_km(e, in, NULL, "k=2 init=given centroids=\"1,2;3\"", &rc));
    assert_int_equal(rc, SL_EINVAL);
    assert_null(run_km(e, in, NULL, "k=2 output=labels", &rc));
    assert_int_equal(rc, SL_EINVAL);
    sl_table_t *r = run_km(e, in, NULL, "k=10 features=\"f1\" max_iter=3", &rc);
    SL_ASSERT_OK(rc);
    sl_table_unref(r);
    sl_table_unref(in);
    sl_engine_close(e);
    free(x);
    assert_no_leaks();
}
