/* Tests of the hash group-by operator "aggregate" against a plain sort-based reference
 * on random inputs: empty input, one row, one group, all distinct, many groups (local
 * tables flushed into radix partitions), nulls in keys and values, several key columns,
 * int32/int64/float values, int64 extremes (an int64 sum that overflows is an error,
 * one whose partial sums overflow but whose total fits is not), Zipf skew, global
 * aggregates, bad options; 1 and 2 threads, small morsels. Integers compare exactly;
 * float sums and averages within a relative 1e-9 of the sum of absolute values. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate/agg_int.h"
#include "internal.h"
#include "plan_int.h"
#include "sl_test.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A test column: values (as int64 or double whatever the type) and validity bytes. */
struct tcol {
    const char *name;
    enum sl_type type;
    int64_t *i;
    double *f;
    uint8_t *valid;
};

static void tcol_alloc(struct tcol *c, const char *name, enum sl_type type, int64_t n)
{
    c->name = name;
    c->type = type;
    c->i = calloc((size_t)n + 1, 8);
    c->f = calloc((size_t)n + 1, 8);
    c->valid = malloc((size_t)n + 1);
    memset(c->valid, 1, (size_t)n + 1);
}

static void tcol_free(struct tcol *c)
{
    free(c->i);
    free(c->f);
    free(c->valid);
}

static bool is_int(enum sl_type t)
{
    return t == SL_TYPE_INT32 || t == SL_TYPE_INT64;
}

static sl_table_t *make_table(struct tcol *cols, int n_cols, int64_t n, int64_t max_batch)
{
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    const char *names[16];
    enum sl_type types[16];
    for (int c = 0; c < n_cols; c++) {
        names[c] = cols[c].name;
        types[c] = cols[c].type;
    }
    int64_t at = 0;
    do {
        int64_t len = n - at;
        if (max_batch > 0 && len > 0) {
            int64_t m = 1 + (int64_t)(rnd() % (uint64_t)max_batch);
            len = len < m ? len : m;
        }
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, n_cols, names, types, len));
        for (int c = 0; c < n_cols; c++) {
            void *d = sl_batch_column_data(b, c);
            bool any_null = false;
            for (int64_t r = 0; r < len; r++) {
                int64_t row = at + r;
                switch (types[c]) {
                case SL_TYPE_INT32: ((int32_t *)d)[r] = (int32_t)cols[c].i[row]; break;
                case SL_TYPE_INT64: ((int64_t *)d)[r] = cols[c].i[row]; break;
                case SL_TYPE_FLOAT32: ((float *)d)[r] = (float)cols[c].f[row]; break;
                default: ((double *)d)[r] = cols[c].f[row]; break;
                }
                any_null |= !cols[c].valid[row];
            }
            if (any_null) {
                uint8_t *v = sl_batch_column_validity(b, c);
                for (int64_t r = 0; r < len; r++)
                    if (!cols[c].valid[at + r])
                        v[r >> 3] &= (uint8_t) ~(1u << (r & 7));
            }
        }
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
        at += len;
    } while (at < n);
    return t;
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

static sl_table_t *run_agg(sl_engine_t *e, sl_table_t *in, const char *opts, int *rc_out)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int s, a;
    SL_ASSERT_OK(sl_plan_add_table(p, in, &s));
    SL_ASSERT_OK(sl_plan_add(p, "aggregate", &s, 1, opts, &a));
    SL_ASSERT_OK(sl_plan_output(p, a, "r"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    int rc = sl_query_run(q);
    sl_table_t *r = NULL;
    if (rc == SL_OK)
        SL_ASSERT_OK(sl_query_result(q, "r", &r));
    if (rc_out)
        *rc_out = rc;
    else if (rc != SL_OK)
        fail_msg("query failed: %d %s", rc, sl_query_errmsg(q));
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return r;
}

/* Reads column `name` of a result into c; returns the rows. */
static int64_t read_col(sl_table_t *t, const char *name, struct tcol *c)
{
    int64_t n = t ? sl_table_num_rows(t) : 0;
    tcol_alloc(c, name, SL_TYPE_INT64, n);
    int64_t at = 0;
    for (int64_t b = 0; t && b < sl_table_num_batches(t); b++) {
        sl_batch_t *bt = sl_table_batch(t, b);
        struct sl_column v;
        int idx = sl_batch_column_index(bt, name);
        if (idx < 0)
            fail_msg("no output column %s", name);
        SL_ASSERT_OK(sl_batch_column(bt, idx, &v));
        c->type = v.type;
        for (int64_t r = 0; r < v.length; r++, at++) {
            int64_t k = v.offset + r;
            switch (v.type) {
            case SL_TYPE_INT32: c->i[at] = ((const int32_t *)v.data)[k]; break;
            case SL_TYPE_INT64: c->i[at] = ((const int64_t *)v.data)[k]; break;
            case SL_TYPE_FLOAT32: c->f[at] = ((const float *)v.data)[k]; break;
            default: c->f[at] = ((const double *)v.data)[k]; break;
            }
            c->valid[at] = !v.validity || ((v.validity[k >> 3] >> (k & 7)) & 1);
        }
    }
    return n;
}

/* ---------------- the reference ---------------- */

static struct tcol *ref_keys;
static int ref_nk;

static int cmp_key_rows(const struct tcol *ka, int64_t a, const struct tcol *kb, int64_t b, int nk)
{
    for (int j = 0; j < nk; j++) {
        bool va = ka[j].valid[a], vb = kb[j].valid[b];
        if (va != vb)
            return va ? 1 : -1;
        if (va && ka[j].i[a] != kb[j].i[b])
            return ka[j].i[a] < kb[j].i[b] ? -1 : 1;
    }
    return 0;
}

static int cmp_rows(const void *x, const void *y)
{
    return cmp_key_rows(ref_keys, *(const int64_t *)x, ref_keys, *(const int64_t *)y, ref_nk);
}

struct ref_group {
    int64_t first;        /* a row of the group */
    int64_t cnt, cnt_v;
    __int128 isum;
    double fsum, fabs_sum;
    int64_t imin, imax;
    double fmin, fmax;
};

/* Groups rows by the keys (sorting row ids) and computes the aggregates of v. */
static int64_t reference(struct tcol *keys, int nk, const struct tcol *v, int64_t n,
                         struct ref_group **out)
{
    int64_t *perm = malloc((size_t)(n + 1) * sizeof *perm);
    for (int64_t r = 0; r < n; r++)
        perm[r] = r;
    ref_keys = keys;
    ref_nk = nk;
    qsort(perm, (size_t)n, sizeof *perm, cmp_rows);
    struct ref_group *g = calloc((size_t)n + 1, sizeof *g);
    int64_t ng = 0;
    for (int64_t q = 0; q < n; q++) {
        int64_t r = perm[q];
        if (q == 0 || cmp_key_rows(keys, perm[q - 1], keys, r, nk) != 0)
            g[ng++].first = r;
        struct ref_group *x = &g[ng - 1];
        x->cnt++;
        if (!v->valid[r])
            continue;
        if (is_int(v->type)) {
            int64_t y = v->i[r];
            if (x->cnt_v == 0 || y < x->imin)
                x->imin = y;
            if (x->cnt_v == 0 || y > x->imax)
                x->imax = y;
            x->isum += y;
        } else {
            double y = v->f[r];
            if (x->cnt_v == 0 || y < x->fmin)
                x->fmin = y;
            if (x->cnt_v == 0 || y > x->fmax)
                x->fmax = y;
            x->fsum += y;
            x->fabs_sum += fabs(y);
        }
        x->cnt_v++;
    }
    if (nk == 0 && ng == 0)
        ng = 1; /* a global aggregate has one row */
    free(perm);
    *out = g;
    return ng;
}

static void check_float(double got, double want, double scale, const char *what, int64_t g)
{
    double tol = 1e-9 * (scale > 1 ? scale : 1);
    if (fabs(got - want) > tol)
        fail_msg("group %lld %s: got %.17g, want %.17g", (long long)g, what, got, want);
}

/* Runs the aggregate over keys + v and compares every group with the reference. */
/* The rows r where w > w_gt (w not null) of keys and v, copied into fk and fv (for the
 * where= cases' reference); returns their count. */
static int64_t filter_rows(const struct tcol *keys, int nk, const struct tcol *v,
                           const struct tcol *w, int64_t w_gt, int64_t n, struct tcol *fk,
                           struct tcol *fv)
{
    for (int j = 0; j < nk; j++)
        tcol_alloc(&fk[j], keys[j].name, keys[j].type, n);
    tcol_alloc(fv, v->name, v->type, n);
    int64_t m = 0;
    for (int64_t r = 0; r < n; r++) {
        if (!w->valid[r] || w->i[r] <= w_gt)
            continue;
        for (int j = 0; j < nk; j++) {
            fk[j].i[m] = keys[j].i[r];
            fk[j].valid[m] = keys[j].valid[r];
        }
        fv->i[m] = v->i[r];
        fv->f[m] = v->f[r];
        fv->valid[m] = v->valid[r];
        m++;
    }
    return m;
}

static void check_result(sl_table_t *out, struct tcol *keys, int nk, struct tcol *v, int64_t n);
/* The aggregates the cases ask for: every one, or only counts and sums (the sink's fused
 * loop, agg_table.c fused_rows, takes vectors of those). */
static const char *const all_aggs = "count(*), count(v), sum(v), min(v), max(v), avg(v)";
static const char *const sum_aggs = "count(*), count(v), sum(v), avg(v)";
static const char *case_aggs = all_aggs;

/* Runs the aggregate over keys + v and compares every group with the reference; with w,
 * the aggregate's where="w > w_gt" against the reference of the passing rows. */
static void check_groupby_w(sl_engine_t *e, struct tcol *keys, int nk, struct tcol *v,
                            const struct tcol *w, int64_t w_gt, int64_t n, int64_t max_batch)
{
    struct tcol all[10];
    char kl[128] = "";
    for (int j = 0; j < nk; j++) {
        all[j] = keys[j];
        snprintf(kl + strlen(kl), sizeof kl - strlen(kl), "%s%s", j ? "," : "", keys[j].name);
    }
    all[nk] = *v;
    if (w)
        all[nk + 1] = *w;
    sl_table_t *in = make_table(all, nk + 1 + (w != NULL), n, max_batch);
    char opts[320], where[64] = "";
    if (w)
        snprintf(where, sizeof where, "where=\"%s > %lld\" ", w->name, (long long)w_gt);
    snprintf(opts, sizeof opts, "%skeys=\"%s\" aggs=\"%s\"", where, kl, case_aggs);
    sl_table_t *out = run_agg(e, in, opts, NULL);
    sl_table_unref(in);
    if (!w) {
        check_result(out, keys, nk, v, n);
    } else {
        struct tcol fk[8], fv;
        int64_t m = filter_rows(keys, nk, v, w, w_gt, n, fk, &fv);
        check_result(out, fk, nk, &fv, m);
        for (int j = 0; j < nk; j++)
            tcol_free(&fk[j]);
        tcol_free(&fv);
    }
    sl_table_unref(out);
}

static void check_groupby(sl_engine_t *e, struct tcol *keys, int nk, struct tcol *v, int64_t n,
                          int64_t max_batch)
{
    check_groupby_w(e, keys, nk, v, NULL, 0, n, max_batch);
}

/* Every group of `out` against the reference of keys + v (n rows). */
static void check_result(sl_table_t *out, struct tcol *keys, int nk, struct tcol *v, int64_t n)
{
    struct ref_group *rg;
    int64_t ng = reference(keys, nk, v, n, &rg);
    struct tcol ok[8], cs, cv, sm, mn, mx, av;
    int64_t got = n == 0 && nk > 0 ? 0 : ng;
    for (int j = 0; j < nk; j++)
        assert_int_equal(read_col(out, keys[j].name, &ok[j]), got);
    assert_int_equal(read_col(out, "count", &cs), got);
    bool minmax = case_aggs == all_aggs;
    read_col(out, "count_v", &cv);
    read_col(out, "sum_v", &sm);
    read_col(minmax ? out : NULL, "min_v", &mn);
    read_col(minmax ? out : NULL, "max_v", &mx);
    read_col(out, "avg_v", &av);
    /* Output rows in key order, to walk beside the reference. */
    int64_t *perm = malloc((size_t)(got + 1) * sizeof *perm);
    for (int64_t r = 0; r < got; r++)
        perm[r] = r;
    ref_keys = ok;
    ref_nk = nk;
    qsort(perm, (size_t)got, sizeof *perm, cmp_rows);
    for (int64_t q = 0; q < got; q++) {
        int64_t r = perm[q];
        const struct ref_group *x = &rg[q];
        if (nk && cmp_key_rows(ok, r, keys, x->first, nk) != 0)
            fail_msg("group %lld: keys differ from the reference", (long long)q);
        if (q && nk && cmp_key_rows(ok, perm[q - 1], ok, r, nk) == 0)
            fail_msg("group %lld: key appears twice in the output", (long long)q);
        assert_int_equal(cs.i[r], x->cnt);
        assert_int_equal(cv.i[r], x->cnt_v);
        assert_int_equal(sm.valid[r], x->cnt_v > 0);
        assert_int_equal(!minmax || mn.valid[r], x->cnt_v > 0 || !minmax);
        assert_int_equal(!minmax || mx.valid[r], x->cnt_v > 0 || !minmax);
        assert_int_equal(av.valid[r], x->cnt_v > 0);
        if (!x->cnt_v)
            continue;
        if (is_int(v->type)) {
            assert_true(sm.i[r] == (int64_t)x->isum);
            assert_true(!minmax || mn.i[r] == x->imin);
            assert_true(!minmax || mx.i[r] == x->imax);
            check_float(av.f[r], (double)x->isum / (double)x->cnt_v, fabs((double)x->isum), "avg", q);
        } else {
            check_float(sm.f[r], x->fsum, x->fabs_sum, "sum", q);
            check_float(av.f[r], x->fsum / (double)x->cnt_v, x->fabs_sum, "avg", q);
            assert_true(!minmax || mn.f[r] == x->fmin);
            assert_true(!minmax || mx.f[r] == x->fmax);
        }
    }
    for (int j = 0; j < nk; j++)
        tcol_free(&ok[j]);
    tcol_free(&cs);
    tcol_free(&cv);
    tcol_free(&sm);
    tcol_free(&mn);
    tcol_free(&mx);
    tcol_free(&av);
    free(perm);
    free(rg);
}

/* Fills a key column with `groups` distinct random values (Zipf-like skew when zipf > 0)
 * and null_pct percent nulls. */
static void fill_keys(struct tcol *c, int64_t n, int64_t groups, double zipf, int null_pct)
{
    if (groups > n)
        groups = n > 0 ? n : 1; /* as many groups as rows: (almost) all distinct */
    int64_t *dict = malloc((size_t)groups * sizeof *dict);
    for (int64_t g = 0; g < groups; g++)
        dict[g] = c->type == SL_TYPE_INT32 ? (int32_t)rnd() : (int64_t)rnd();
    for (int64_t r = 0; r < n; r++) {
        int64_t g;
        if (zipf > 0) {
            double u = (double)(rnd() >> 11) * 0x1.0p-53;
            g = (int64_t)pow((double)groups, pow(u, zipf)) - 1; /* skewed towards 0 */
            if (g >= groups)
                g = groups - 1;
            if (g < 0)
                g = 0;
        } else if (groups == n) {
            g = r;
        } else {
            g = (int64_t)(rnd() % (uint64_t)groups);
        }
        c->i[r] = dict[g];
        c->valid[r] = (int)(rnd() % 100) >= null_pct;
    }
    free(dict);
}

static void fill_values(struct tcol *c, int64_t n, int null_pct)
{
    for (int64_t r = 0; r < n; r++) {
        uint64_t x = rnd();
        c->i[r] = c->type == SL_TYPE_INT32 ? (int32_t)x : (int64_t)(x >> 20) - (1ll << 42);
        c->f[r] = c->type == SL_TYPE_FLOAT32 ? (float)((double)(int64_t)x / 1e15)
                                              : (double)(int64_t)x / 1e12;
        c->valid[r] = (int)(rnd() % 100) >= null_pct;
    }
}

/* One int key column with `groups` groups and a value column of type vt. */
static void one_key_case(sl_engine_t *e, enum sl_type kt, enum sl_type vt, int64_t n,
                         int64_t groups, double zipf, int knull, int vnull, int64_t max_batch)
{
    struct tcol k, v;
    tcol_alloc(&k, "k", kt, n);
    tcol_alloc(&v, "v", vt, n);
    fill_keys(&k, n, groups, zipf, knull);
    fill_values(&v, n, vnull);
    check_groupby(e, &k, 1, &v, n, max_batch);
    tcol_free(&k);
    tcol_free(&v);
}

SL_TEST(agg_edge_sizes)
{
    int64_t sizes[] = {0, 1, 2, 63, 64, 65, 1000, 1001};
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = open_engine(th, 64);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            one_key_case(e, SL_TYPE_INT32, SL_TYPE_INT64, sizes[s], 10, 0, 0, 0, 37);
        sl_engine_close(e);
    }
    assert_no_leaks();
}

SL_TEST(agg_one_group_and_all_distinct)
{
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = open_engine(th, 1000);
        one_key_case(e, SL_TYPE_INT64, SL_TYPE_INT64, 5000, 1, 0, 0, 0, 777);
        one_key_case(e, SL_TYPE_INT64, SL_TYPE_INT32, 5000, 1 << 30, 0, 0, 0, 777);
        sl_engine_close(e);
    }
    assert_no_leaks();
}

SL_TEST(agg_many_groups_partitioned)
{
    /* More distinct keys than a local table holds: flushes and the partitioned merge. */
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = open_engine(th, 8192);
        one_key_case(e, SL_TYPE_INT32, SL_TYPE_INT64, 120000, 60000, 0, 0, 0, 0);
        one_key_case(e, SL_TYPE_INT64, SL_TYPE_FLOAT64, 90000, 1 << 30, 0, 5, 5, 0);
        sl_engine_close(e);
    }
    assert_no_leaks();
}

SL_TEST(agg_nulls_and_types)
{
    enum sl_type vts[] = {SL_TYPE_INT32, SL_TYPE_INT64, SL_TYPE_FLOAT32, SL_TYPE_FLOAT64};
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = open_engine(th, 100);
        for (int t = 0; t < 4; t++) {
            one_key_case(e, SL_TYPE_INT32, vts[t], 3000, 50, 0, 10, 20, 333);
            one_key_case(e, SL_TYPE_INT64, vts[t], 3000, 3, 0, 50, 90, 333);
            one_key_case(e, SL_TYPE_INT64, vts[t], 500, 20, 0, 0, 100, 333); /* all-null values */
        }
        sl_engine_close(e);
    }
    assert_no_leaks();
}

SL_TEST(agg_several_keys)
{
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = open_engine(th, 128);
        for (int nk = 2; nk <= 3; nk++) {
            int64_t n = 4000;
            struct tcol k[3], v;
            const char *names[] = {"a", "b", "c"};
            for (int j = 0; j < nk; j++) {
                tcol_alloc(&k[j], names[j], j == 1 ? SL_TYPE_INT32 : SL_TYPE_INT64, n);
                fill_keys(&k[j], n, 7, 0, 10);
            }
            tcol_alloc(&v, "v", SL_TYPE_INT64, n);
            fill_values(&v, n, 10);
            check_groupby(e, k, nk, &v, n, 100);
            for (int j = 0; j < nk; j++)
                tcol_free(&k[j]);
            tcol_free(&v);
        }
        sl_engine_close(e);
    }
    assert_no_leaks();
}

SL_TEST(agg_zipf_skew)
{
    double z[] = {0.5, 1.0, 1.5};
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = open_engine(th, 512);
        for (int i = 0; i < 3; i++)
            one_key_case(e, SL_TYPE_INT32, SL_TYPE_INT64, 20000, 5000, 1.0 / (1 + z[i]), 0, 0, 0);
        sl_engine_close(e);
    }
    assert_no_leaks();
}

/* Counts and sums only: a vector whose aggregated columns have no nulls takes the sink's
 * fused loop (agg_table.c fused_rows: group, row count and first sum in one pass) once the
 * table has more than AGG_FEW_GROUPS groups; others take the general loops. Against the
 * reference: empty, one row, one group, a few groups, 1,000 and 60,000 groups (flushed),
 * all keys distinct (rows written raw once the table was shrunk: sl__agg_table_raw),
 * nulls in keys or values in some batches only (1% of rows, batches of up to 100 rows),
 * int32 and int64 keys, int32, int64 and float values, negative keys, keys at the
 * types' extremes, Zipf skew; 1 and 2 threads. */
SL_TEST(agg_counts_and_sums)
{
    struct scase {
        enum sl_type kt, vt;
        int64_t n, groups;
        double zipf;
        int knull, vnull;
        int64_t batch;
    } cases[] = {
        {SL_TYPE_INT32, SL_TYPE_INT64, 0, 10, 0, 0, 0, 0},
        {SL_TYPE_INT32, SL_TYPE_INT64, 1, 10, 0, 0, 0, 0},
        {SL_TYPE_INT64, SL_TYPE_INT64, 5000, 1, 0, 0, 0, 777},
        {SL_TYPE_INT32, SL_TYPE_INT64, 5000, 40, 0, 0, 0, 777},
        {SL_TYPE_INT32, SL_TYPE_INT64, 50000, 1000, 0, 0, 0, 0},
        {SL_TYPE_INT64, SL_TYPE_INT32, 50000, 1000, 0, 0, 0, 3000},
        {SL_TYPE_INT32, SL_TYPE_FLOAT64, 50000, 1000, 0, 0, 0, 3000},
        {SL_TYPE_INT32, SL_TYPE_INT64, 20000, 500, 0, 1, 0, 100},
        {SL_TYPE_INT64, SL_TYPE_INT64, 20000, 500, 0, 0, 1, 100},
        {SL_TYPE_INT64, SL_TYPE_FLOAT32, 20000, 500, 0, 1, 1, 100},
        {SL_TYPE_INT32, SL_TYPE_INT64, 30000, 5000, 0.5, 0, 0, 0},
        {SL_TYPE_INT32, SL_TYPE_INT64, 120000, 60000, 0, 0, 0, 0},
        {SL_TYPE_INT64, SL_TYPE_INT64, 90000, 1 << 30, 0, 0, 1, 0},
        {SL_TYPE_INT64, SL_TYPE_FLOAT64, 90000, 1 << 30, 0, 0, 0, 0},
        {SL_TYPE_INT32, SL_TYPE_INT32, 90000, 1 << 30, 0, 1, 0, 0},
    };
    case_aggs = sum_aggs;
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = open_engine(th, 4096);
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            const struct scase *x = &cases[c];
            one_key_case(e, x->kt, x->vt, x->n, x->groups, x->zipf, x->knull, x->vnull,
                         x->batch);
        }
        /* Keys at the extremes of int32 and int64 and around zero, 200 groups. */
        for (int w = 0; w < 2; w++) {
            int64_t n = 30000;
            struct tcol k, v;
            tcol_alloc(&k, "k", w ? SL_TYPE_INT64 : SL_TYPE_INT32, n);
            tcol_alloc(&v, "v", SL_TYPE_INT64, n);
            int64_t lo = w ? INT64_MIN : INT32_MIN, hi = w ? INT64_MAX : INT32_MAX;
            for (int64_t r = 0; r < n; r++) {
                int64_t g = (int64_t)(rnd() % 200);
                k.i[r] = g < 70 ? lo + g : g < 140 ? hi - (g - 70) : g - 170;
            }
            fill_values(&v, n, 0);
            check_groupby(e, &k, 1, &v, n, 1000);
            tcol_free(&k);
            tcol_free(&v);
        }
        sl_engine_close(e);
    }
    case_aggs = all_aggs;
    assert_no_leaks();
}

/* The fused loop's partial sums (int64, agg_table.c add_part) overflow and move into the
 * exact sums: 100 groups whose values run INT64_MAX, INT64_MAX, INT64_MIN + 1,
 * INT64_MIN + 1, ... (every total fits: 0, one 12,340), equal to the reference;
 * a group whose total does not fit int64 is SL_EOVERFLOW, and its avg is fine. */
SL_TEST(agg_fused_partial_sums_overflow)
{
    case_aggs = sum_aggs;
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = open_engine(th, 2048);
        int64_t n = 40000;
        struct tcol k, v;
        tcol_alloc(&k, "k", SL_TYPE_INT64, n);
        tcol_alloc(&v, "v", SL_TYPE_INT64, n);
        for (int64_t r = 0; r < n; r++) {
            k.i[r] = r % 100 - 50;
            v.i[r] = (r / 100) % 4 < 2 ? INT64_MAX : INT64_MIN + 1;
        }
        v.i[n - 1] = 12345; /* one group's total: INT64_MAX + (INT64_MIN + 1) - 5 + 12345 */
        v.i[n - 201] = -5;
        check_groupby(e, &k, 1, &v, n, 1000);
        /* group 7 of 100: INT64_MAX a row, its total overflows */
        for (int64_t r = 0; r < n; r++)
            v.i[r] = r % 100 == 7 ? INT64_MAX : (int64_t)(r % 1000);
        struct tcol both[2] = {k, v};
        sl_table_t *in = make_table(both, 2, n, 1000);
        int rc;
        sl_table_t *out = run_agg(e, in, "keys=k aggs=\"count(*), sum(v)\"", &rc);
        assert_int_equal(rc, SL_EOVERFLOW);
        assert_null(out);
        out = run_agg(e, in, "keys=k aggs=\"count(*), avg(v)\"", &rc);
        SL_ASSERT_OK(rc);
        sl_table_unref(out);
        sl_table_unref(in);
        tcol_free(&k);
        tcol_free(&v);
        sl_engine_close(e);
    }
    case_aggs = all_aggs;
    assert_no_leaks();
}

/* sum(w), count(*), sum(v), avg(f) and, in a second query, count(*) alone over key k
 * (cols: k, int32 w, int64 v, float64 f) against the reference of each column. */
static void several_sums_case(sl_engine_t *e, struct tcol *cols, int64_t n)
{
    sl_table_t *in = make_table(cols, 4, n, 5000);
    sl_table_t *out = run_agg(e, in, "keys=k aggs=\"sum(w), count(*), sum(v), avg(f)\"", NULL);
    sl_table_t *only = run_agg(e, in, "keys=k aggs=\"count(*)\"", NULL);
    sl_table_unref(in);
    struct ref_group *rw, *rv, *rf, *rc;
    int64_t ng = reference(&cols[0], 1, &cols[1], n, &rw);
    assert_int_equal(reference(&cols[0], 1, &cols[2], n, &rv), ng);
    assert_int_equal(reference(&cols[0], 1, &cols[3], n, &rf), ng);
    assert_int_equal(reference(&cols[0], 1, &cols[1], n, &rc), ng);
    struct tcol ok, sw, cs, sv, af, ok2, cs2;
    assert_int_equal(read_col(out, "k", &ok), ng);
    read_col(out, "sum_w", &sw);
    read_col(out, "count", &cs);
    read_col(out, "sum_v", &sv);
    read_col(out, "avg_f", &af);
    assert_int_equal(read_col(only, "k", &ok2), ng);
    read_col(only, "count", &cs2);
    int64_t *perm = malloc((size_t)ng * sizeof *perm), *perm2 = malloc((size_t)ng * sizeof *perm2);
    for (int64_t r = 0; r < ng; r++)
        perm[r] = perm2[r] = r;
    ref_nk = 1;
    ref_keys = &ok;
    qsort(perm, (size_t)ng, sizeof *perm, cmp_rows);
    ref_keys = &ok2;
    qsort(perm2, (size_t)ng, sizeof *perm2, cmp_rows);
    for (int64_t q = 0; q < ng; q++) {
        int64_t r = perm[q];
        assert_true(ok.i[r] == cols[0].i[rw[q].first]);
        assert_true(ok2.i[perm2[q]] == cols[0].i[rw[q].first]);
        assert_int_equal(cs.i[r], rw[q].cnt);
        assert_int_equal(cs2.i[perm2[q]], rw[q].cnt);
        assert_true(sw.i[r] == (int64_t)rw[q].isum);
        assert_true(sv.i[r] == (int64_t)rv[q].isum);
        check_float(af.f[r], rf[q].fsum / (double)rf[q].cnt_v, rf[q].fabs_sum, "avg", q);
    }
    free(perm);
    free(perm2);
    free(rw), free(rv), free(rf), free(rc);
    struct tcol *all[] = {&ok, &sw, &cs, &sv, &af, &ok2, &cs2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        tcol_free(all[i]);
    sl_table_unref(out);
    sl_table_unref(only);
}

/* Several sums in one vector: in the fused loop (the first there, the others over the
 * group ids; 1,000 groups) and in rows written raw (agg_table.c sl__agg_table_raw: the
 * first sum with the key, the others in passes of their own; 100,000 rows of distinct
 * keys); then, after rows went raw, a stretch of 50 groups that the sample sends back to
 * the table. 1 and 2 threads. */
SL_TEST(agg_fused_and_raw_several_sums)
{
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = open_engine(th, 4096);
        for (int layout = 0; layout < 3; layout++) {
            int64_t n = layout ? 140000 : 60000;
            struct tcol cols[4];
            tcol_alloc(&cols[0], "k", layout == 1 ? SL_TYPE_INT64 : SL_TYPE_INT32, n);
            tcol_alloc(&cols[1], "w", SL_TYPE_INT32, n);
            tcol_alloc(&cols[2], "v", SL_TYPE_INT64, n);
            tcol_alloc(&cols[3], "f", SL_TYPE_FLOAT64, n);
            fill_keys(&cols[0], n, layout ? n : 1000, 0, 0);
            if (layout == 2) /* the last 40,000 rows: 50 groups */
                for (int64_t r = 100000; r < n; r++)
                    cols[0].i[r] = (int64_t)(rnd() % 50) - 25;
            for (int c = 1; c < 4; c++)
                fill_values(&cols[c], n, 0);
            several_sums_case(e, cols, n);
            for (int c = 0; c < 4; c++)
                tcol_free(&cols[c]);
        }
        sl_engine_close(e);
    }
    assert_no_leaks();
}

/* large_utf8 keys (ids of distinct strings, agg_str.c) on the paths of many groups: the
 * table shrunk, rows written raw, the partitioned merge into a batch a partition (the
 * strings of an output batch start at row 0), then a stretch of 20 groups. The string of
 * each key is the hex of an int64, so the reference groups the int64s. 1 and 2 threads. */
SL_TEST(agg_string_keys_many_groups)
{
    int64_t n = 100000;
    struct tcol k, v;
    tcol_alloc(&k, "k", SL_TYPE_INT64, n);
    tcol_alloc(&v, "v", SL_TYPE_INT64, n);
    fill_keys(&k, n, n, 0, 0);
    for (int64_t r = 70000; r < n; r++)
        k.i[r] = (int64_t)(rnd() % 20);
    fill_values(&v, n, 0);
    struct ref_group *rg;
    int64_t ng = reference(&k, 1, &v, n, &rg);
    const char *names[2] = {"k", "v"};
    enum sl_type types[2] = {SL_TYPE_LARGE_UTF8, SL_TYPE_INT64};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 2, names, types, n));
    int64_t *off = sl_batch_column_data(b, 0);
    char *chars = sl_batch_column_chars(b, 0, n * 16);
    for (int64_t r = 0; r < n; r++) {
        char text[17];
        snprintf(text, sizeof text, "%016llx", (unsigned long long)k.i[r]);
        memcpy(chars + 16 * r, text, 16);
        off[r + 1] = 16 * (r + 1);
        ((int64_t *)sl_batch_column_data(b, 1))[r] = v.i[r];
    }
    sl_table_t *in;
    SL_ASSERT_OK(sl_table_create(&in));
    SL_ASSERT_OK(sl_table_append(in, b));
    sl_batch_unref(b);
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = open_engine(th, 4096);
        sl_table_t *out = run_agg(e, in, "keys=k aggs=\"count(*), sum(v)\"", NULL);
        assert_int_equal(sl_table_num_rows(out), ng);
        struct tcol ok, cs, sm;
        tcol_alloc(&ok, "k", SL_TYPE_INT64, ng);
        int64_t at = 0;
        for (int64_t bi = 0; bi < sl_table_num_batches(out); bi++) {
            sl_batch_t *ob = sl_table_batch(out, bi);
            struct sl_column c;
            struct sl_strings st;
            SL_ASSERT_OK(sl_batch_column(ob, 0, &c));
            SL_ASSERT_OK(sl_batch_column_strings(ob, 0, &st));
            for (int64_t r = 0; r < c.length; r++, at++) {
                const int64_t *o = c.data;
                char text[17] = {0};
                assert_int_equal(o[c.offset + r + 1] - o[c.offset + r], 16);
                memcpy(text, st.chars + o[c.offset + r], 16);
                ok.i[at] = (int64_t)strtoull(text, NULL, 16);
            }
        }
        read_col(out, "count", &cs);
        read_col(out, "sum_v", &sm);
        int64_t *perm = malloc((size_t)ng * sizeof *perm);
        for (int64_t r = 0; r < ng; r++)
            perm[r] = r;
        ref_keys = &ok;
        ref_nk = 1;
        qsort(perm, (size_t)ng, sizeof *perm, cmp_rows);
        for (int64_t q = 0; q < ng; q++) {
            int64_t r = perm[q];
            assert_true(ok.i[r] == k.i[rg[q].first]);
            assert_int_equal(cs.i[r], rg[q].cnt);
            assert_true(sm.i[r] == (int64_t)rg[q].isum);
        }
        free(perm);
        tcol_free(&ok);
        tcol_free(&cs);
        tcol_free(&sm);
        sl_table_unref(out);
        sl_engine_close(e);
    }
    sl_table_unref(in);
    free(rg);
    tcol_free(&k);
    tcol_free(&v);
    assert_no_leaks();
}

/* where=: only the rows where the predicate is TRUE are aggregated (NULL and FALSE rows
 * are not): against the reference of the passing rows, with nulls in the predicate's
 * column, one and two keys and none, few and many groups (local tables flushed), all rows
 * passing, none passing, no rows, small batches, 1 and 2 threads. */
SL_TEST(agg_where)
{
    struct wcase {
        int64_t n, groups, w_gt;
        int nk, wnull;
    } cases[] = {
        {5000, 10, 0, 1, 10},   {5000, 4, 0, 2, 0},  {3000, 1, 0, 0, 20},
        {120000, 60000, 0, 1, 5}, {2000, 30, INT64_MIN + 1, 1, 0}, /* every row passes */
        {2000, 30, INT64_MAX - 1, 1, 10},                           /* none does */
        {2000, 30, INT64_MAX - 1, 0, 10}, {0, 30, 0, 1, 0},  {1, 1, 0, 1, 0},
    };
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = open_engine(th, 1024);
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            const struct wcase *x = &cases[c];
            struct tcol k[2], v, w;
            const char *names[] = {"a", "b"};
            for (int j = 0; j < x->nk; j++) {
                tcol_alloc(&k[j], names[j], j ? SL_TYPE_INT32 : SL_TYPE_INT64, x->n);
                fill_keys(&k[j], x->n, x->groups, 0, 5);
            }
            tcol_alloc(&v, "v", SL_TYPE_INT64, x->n);
            fill_values(&v, x->n, 10);
            tcol_alloc(&w, "w", SL_TYPE_INT64, x->n);
            fill_values(&w, x->n, x->wnull);
            check_groupby_w(e, k, x->nk, &v, &w, x->w_gt, x->n, 777);
            for (int j = 0; j < x->nk; j++)
                tcol_free(&k[j]);
            tcol_free(&v);
            tcol_free(&w);
        }
        sl_engine_close(e);
    }
    assert_no_leaks();
}

SL_TEST(agg_global_aggregate)
{
    sl_engine_t *e = open_engine(2, 64);
    for (int64_t n = 0; n <= 1000; n += 500) {
        struct tcol v;
        tcol_alloc(&v, "v", SL_TYPE_INT64, n);
        fill_values(&v, n, 10);
        check_groupby(e, NULL, 0, &v, n, 50);
        tcol_free(&v);
    }
    sl_engine_close(e);
    assert_no_leaks();
}

/* int64 extremes: min/max exact; partial sums that overflow but a total that fits are
 * fine; a total that does not fit is SL_EOVERFLOW. */
SL_TEST(agg_int64_extremes_and_overflow)
{
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = open_engine(th, 16);
        int64_t n = 400;
        struct tcol k, v;
        tcol_alloc(&k, "k", SL_TYPE_INT64, n);
        tcol_alloc(&v, "v", SL_TYPE_INT64, n);
        for (int64_t r = 0; r < n; r++) {
            int64_t q = (r / 2) % 4; /* rows 2i and 2i+1 share a group */
            k.i[r] = q == 0 ? INT64_MIN : q == 1 ? INT64_MAX : q - 3;
            v.i[r] = r % 2 ? INT64_MAX : INT64_MIN + 1; /* pairs cancel: totals fit */
        }
        check_groupby(e, &k, 1, &v, n, 0);
        /* One group: INT64_MAX twice overflows. */
        for (int64_t r = 0; r < n; r++) {
            k.i[r] = 5;
            v.i[r] = r < 2 ? INT64_MAX : 0;
        }
        sl_table_t *in;
        struct tcol both[2] = {k, v};
        in = make_table(both, 2, n, 50);
        int rc;
        sl_table_t *out = run_agg(e, in, "keys=k aggs=\"sum(v)\"", &rc);
        assert_int_equal(rc, SL_EOVERFLOW);
        assert_null(out);
        /* avg of the same is fine (float64 of the exact sum). */
        out = run_agg(e, in, "keys=k aggs=\"avg(v), count(*)\"", &rc);
        SL_ASSERT_OK(rc);
        sl_table_unref(out);
        sl_table_unref(in);
        tcol_free(&k);
        tcol_free(&v);
        /* The same overflow among 40,000 groups (the partitioned merge). */
        int64_t m = 40000;
        tcol_alloc(&k, "k", SL_TYPE_INT64, m);
        tcol_alloc(&v, "v", SL_TYPE_INT64, m);
        for (int64_t r = 0; r < m; r++) {
            k.i[r] = r < 2 ? -7 : r * 3;
            v.i[r] = r < 2 ? INT64_MAX : r;
        }
        struct tcol both2[2] = {k, v};
        in = make_table(both2, 2, m, 0);
        out = run_agg(e, in, "keys=k aggs=\"count(*), sum(v)\"", &rc);
        assert_int_equal(rc, SL_EOVERFLOW);
        assert_null(out);
        sl_table_unref(in);
        tcol_free(&k);
        tcol_free(&v);
        sl_engine_close(e);
    }
    assert_no_leaks();
}

SL_TEST(agg_bad_options)
{
    sl_engine_t *e = open_engine(1, 100);
    struct tcol c[2];
    tcol_alloc(&c[0], "k", SL_TYPE_INT32, 4);
    tcol_alloc(&c[1], "f", SL_TYPE_FLOAT64, 4);
    sl_table_t *t = make_table(c, 2, 4, 0);
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int s, o;
    SL_ASSERT_OK(sl_plan_add_table(p, t, &s));
    assert_int_equal(sl_plan_add(p, "aggregate", &s, 1, "keys=nope", &o), SL_ENOTFOUND);
    assert_non_null(strstr(sl_plan_errmsg(p), "nope"));
    /* Keys of any type (a float key groups by value, all NaNs one group); sum/avg only
     * where SQL defines them (tests/unit/aggregate/test_agg_types.c). */
    SL_ASSERT_OK(sl_plan_add(p, "aggregate", &s, 1, "keys=f", &o));
    assert_int_equal(sl_plan_add(p, "aggregate", &s, 1, "keys=k aggs=\"median(f)\"", &o), SL_EINVAL);
    assert_int_equal(sl_plan_add(p, "aggregate", &s, 1, "keys=k aggs=\"sum(zz)\"", &o), SL_ENOTFOUND);
    assert_int_equal(sl_plan_add(p, "aggregate", &s, 1, "keys=k aggs=\"sum f\"", &o), SL_EINVAL);
    SL_ASSERT_OK(sl_plan_add(p, "aggregate", &s, 1, "keys=k aggs=\"sum(f), min(k)\"", &o));
    sl_plan_destroy(p);
    sl_table_unref(t);
    tcol_free(&c[0]);
    tcol_free(&c[1]);
    sl_engine_close(e);
    assert_no_leaks();
}

/* The sink's cost estimates (seconds) let automatic placement choose the GPU for a large
 * group-by: per row the GPU's compute beats even 16 CPU workers, and 2 workers also with
 * the host-to-GPU copy at 25 GB/s that placement.c adds; a tiny one stays on the CPU. */
/* The GPU cost knows the types the GPU group-by takes (date32, timestamp, decimal keys and
 * values, DICT keys as codes, issue 17): others (a bool key, a bool sum, count(DISTINCT),
 * a DICT value) have no GPU cost, so automatic placement keeps them on the CPU and
 * explain says why. */
SL_TEST(agg_gpu_cost_knows_types)
{
    const char *names[5] = {"d", "c", "b", "v", "k"};
    enum sl_type types[5] = {SL_TYPE_DATE32, sl_type_decimal(15, 2), SL_TYPE_BOOL, SL_TYPE_INT64,
                             SL_TYPE_DICT};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 5, names, types, 1));
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    SL_ASSERT_OK(sl_table_append(t, b));
    sl_batch_unref(b);
    const char *const opts[7] = {"keys=d aggs=\"count(*), sum(c), avg(c), min(d)\"",
                                 "keys=\"c,d\" aggs=\"sum(v), max(c)\"",
                                 "keys=\"k,d\" aggs=\"count(*), sum(v)\"", "keys=b aggs=\"count(*)\"",
                                 "keys=d aggs=\"sum(b)\"", "keys=d aggs=\"count(distinct v)\"",
                                 "keys=d aggs=\"min(k)\""};
    for (int i = 0; i < 7; i++) {
        sl_plan_t *p;
        int s, o;
        SL_ASSERT_OK(sl_plan_create(&p));
        SL_ASSERT_OK(sl_plan_add_table(p, t, &s));
        SL_ASSERT_OK(sl_plan_add(p, "aggregate", &s, 1, opts[i], &o));
        double gpu = sl__agg_cost(p->nodes[o], SL_DEVICE_CUDA, 1 << 20);
        printf("%s: gpu cost %g\n", opts[i], gpu);
        assert_true(sl__agg_cost(p->nodes[o], SL_DEVICE_CPU, 1 << 20) > 0);
        assert_true(i < 3 ? gpu > 0 : gpu < 0);
        sl_plan_destroy(p);
    }
    sl_table_unref(t);
    assert_no_leaks();
}

SL_TEST(agg_cost_prefers_gpu_for_large_inputs)
{
    struct tcol c[2];
    tcol_alloc(&c[0], "k", SL_TYPE_INT32, 4);
    tcol_alloc(&c[1], "v", SL_TYPE_INT64, 4);
    sl_table_t *t = make_table(c, 2, 4, 0);
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int s, o;
    SL_ASSERT_OK(sl_plan_add_table(p, t, &s));
    SL_ASSERT_OK(sl_plan_add(p, "aggregate", &s, 1, "keys=k aggs=\"count(*), sum(v)\"", &o));
    const sl_op_t *op = p->nodes[o];
    const double rows = (double)((int64_t)1 << 28);
    double cpu = sl__agg_cost(op, SL_DEVICE_CPU, (int64_t)rows);
    double gpu = sl__agg_cost(op, SL_DEVICE_CUDA, (int64_t)rows);
    printf("2^28 rows: cpu %.4f s (one worker), gpu %.4f s\n", cpu, gpu);
    assert_true(gpu > 0 && cpu > 0);
    /* The GPU's compute beats 16 workers; with the upload at 25 GB/s it beats 2. */
    assert_true(gpu < cpu / 16);
    assert_true(gpu + rows * 12 / 25e9 < cpu / 2);
    /* At least the bytes at the H100's peak bandwidth (a physical floor, not a value). */
    assert_true(gpu >= rows * 12 / 3.35e12);
    /* More rows never cost less, and 16 times the rows cost more on both devices. */
    for (int dev = 0; dev < 2; dev++) {
        enum sl_device_kind k = dev ? SL_DEVICE_CUDA : SL_DEVICE_CPU;
        double prev = 0;
        for (int64_t n = 1; n <= (int64_t)1 << 28; n <<= 4) {
            double c_n = sl__agg_cost(op, k, n);
            assert_true(c_n >= prev);
            if (n >= (int64_t)1 << 20)
                assert_true(c_n > prev);
            prev = c_n;
        }
    }
    assert_true(sl__agg_cost(op, SL_DEVICE_CUDA, 10) > sl__agg_cost(op, SL_DEVICE_CPU, 10));
    assert_true(sl__agg_cost(op, SL_DEVICE_CUDA, -1) < 0);
    sl_plan_destroy(p);
    sl_table_unref(t);
    tcol_free(&c[0]);
    tcol_free(&c[1]);
    assert_no_leaks();
}

/* A one-row batch whose DICT column 0 has the dictionary strs[0..n). */
static sl_batch_t *dict_batch(const char *const *strs, int n)
{
    const char *names[1] = {"k"};
    enum sl_type types[1] = {SL_TYPE_DICT};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 1, names, types, 1));
    int32_t offs[8] = {0};
    char chars[64];
    for (int e = 0; e < n; e++) {
        memcpy(chars + offs[e], strs[e], strlen(strs[e]));
        offs[e + 1] = offs[e] + (int32_t)strlen(strs[e]);
    }
    SL_ASSERT_OK(sl_batch_column_set_dictionary(b, 0, n, offs, chars));
    ((int32_t *)sl_batch_column_data(b, 0))[0] = 0;
    return b;
}

/* The maps the GPU sink remaps DICT codes with (sl__agg_dict_map): the first dictionary
 * and equal copies of it map to themselves (no remap); a reordered one or one holding a
 * string twice map onto the first one's codes, new strings appended. */
SL_TEST(dict_key_maps)
{
    static const char *const first[3] = {"x", "y", "z"}, *const rev[3] = {"z", "y", "x"},
                             *const dup[3] = {"x", "w", "x"};
    sl_batch_t *a = dict_batch(first, 3), *copy = dict_batch(first, 3), *r = dict_batch(rev, 3),
               *d = dict_batch(dup, 3);
    struct agg_global *gs = calloc(1, sizeof *gs);
    assert_non_null(gs);
    int64_t n;
    bool identity;
    const int32_t *m = sl__agg_dict_map(gs, 0, a, 0, &n, &identity);
    assert_non_null(m);
    assert_true(identity && n == 3);
    m = sl__agg_dict_map(gs, 0, copy, 0, &n, &identity);
    assert_true(identity && n == 3 && m[2] == 2);
    m = sl__agg_dict_map(gs, 0, r, 0, &n, &identity);
    assert_false(identity);
    assert_true(m[0] == 2 && m[1] == 1 && m[2] == 0);
    m = sl__agg_dict_map(gs, 0, d, 0, &n, &identity);
    assert_false(identity);
    assert_true(m[0] == 0 && m[1] == 3 && m[2] == 0);
    /* another key column keeps its own merged dictionary: r merges first there */
    m = sl__agg_dict_map(gs, 1, r, 0, &n, &identity);
    assert_true(identity && m[0] == 0);
    sl__agg_dicts_free(gs);
    free(gs);
    sl_batch_unref(a), sl_batch_unref(copy), sl_batch_unref(r), sl_batch_unref(d);
    assert_no_leaks();
}
