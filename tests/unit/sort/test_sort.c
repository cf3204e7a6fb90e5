/* Tests of the sort and merge operators and their kernels (radix sort, multiway merge)
 * against a qsort-based stable reference: empty input, one row, all-equal keys, nulls
 * first/last, negative keys, int64 extremes, floats with -0.0, infinities and NaN,
 * descending, several keys, sizes that are and are not multiples of the morsel size,
 * 1 and 2 threads. Stability is checked through a row-id payload ("rid").
 * NaN ordering: all NaNs are equal and sort after +inf ascending; -0.0 < +0.0. */
#include <stdio.h>

#include "merge/merge_int.h"
#include "sort_test_util.h"

/* ---------------- random columns ---------------- */

enum { V_SMALL, V_FULL, V_EXTREME };

static void fill(struct tcol *c, int64_t n, int mode, int null_pct)
{
    static const double fx[] = {0.0, -0.0, 1.5, -1.5, INFINITY, -INFINITY, NAN, -NAN, 1e300,
                                -1e-300, 3.0, 7.25};
    for (int64_t r = 0; r < n; r++) {
        uint64_t x = rnd();
        bool i32 = c->type == SL_TYPE_INT32;
        if (mode == V_SMALL)
            c->i[r] = (int64_t)(x % 11) - 5;
        else if (mode == V_FULL)
            c->i[r] = i32 ? (int32_t)x : (int64_t)x;
        else {
            int64_t ex[] = {i32 ? INT32_MIN : INT64_MIN, i32 ? INT32_MAX : INT64_MAX, 0, -1, 1,
                            i32 ? (int32_t)x : (int64_t)x};
            c->i[r] = ex[x % 6];
        }
        if (mode == V_SMALL)
            c->f[r] = (double)((int64_t)(x % 7) - 3) * 0.5;
        else if (mode == V_FULL)
            c->f[r] = ((double)(int64_t)x) / 1e9;
        else
            c->f[r] = fx[x % (sizeof fx / sizeof fx[0])];
        if (c->type == SL_TYPE_FLOAT32 && !isnan(c->f[r]))
            c->f[r] = (float)c->f[r];
        c->valid[r] = (int)((x >> 40) % 100) >= null_pct;
    }
}

/* ---------------- the reference ---------------- */

struct rkey {
    const struct tcol *c;
    int desc, nulls_first;
};
static struct rkey ref_keys[8];
static int ref_n_keys;

static int cmp_val(const struct tcol *c, int64_t a, int64_t b)
{
    if (c->type == SL_TYPE_INT32 || c->type == SL_TYPE_INT64)
        return c->i[a] < c->i[b] ? -1 : c->i[a] > c->i[b];
    double x = c->f[a], y = c->f[b];
    if (isnan(x) || isnan(y))
        return isnan(x) && isnan(y) ? 0 : isnan(x) ? 1 : -1;
    if (x != y)
        return x < y ? -1 : 1;
    return signbit(x) == signbit(y) ? 0 : signbit(x) ? -1 : 1;
}

static int cmp_rows(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    for (int k = 0; k < ref_n_keys; k++) {
        const struct rkey *rk = &ref_keys[k];
        bool va = rk->c->valid[a], vb = rk->c->valid[b];
        int r;
        if (!va || !vb)
            r = va == vb ? 0 : (!va ? (rk->nulls_first ? -1 : 1) : (rk->nulls_first ? 1 : -1));
        else
            r = rk->desc ? -cmp_val(rk->c, a, b) : cmp_val(rk->c, a, b);
        if (r)
            return r;
    }
    return a < b ? -1 : a > b; /* stable */
}

/* Sorts cols (the column named "rid" gets the row numbers) with the operator and checks every row
 * against the reference order. */
static void check_sort(sl_engine_t *e, struct tcol *cols, int n_cols, int64_t n, int64_t max_batch,
                       const char *by, const struct rkey *keys, int n_keys)
{
    /* the row numbers go to the column named rid, wherever it is (not over a key) */
    int rid = 0;
    while (rid < n_cols && strcmp(cols[rid].name, "rid") != 0)
        rid++;
    assert_true(rid < n_cols);
    for (int64_t r = 0; r < n; r++) {
        cols[rid].i[r] = r;
        cols[rid].valid[r] = 1;
    }
    sl_table_t *in = make_table(cols, n_cols, n, max_batch);
    char opts[256];
    snprintf(opts, sizeof opts, "by=\"%s\"", by);
    sl_table_t *out = run_op(e, &in, 1, "sort", opts, NULL);
    sl_table_unref(in);
    int64_t *perm = malloc((size_t)(n + 1) * sizeof *perm);
    for (int64_t r = 0; r < n; r++)
        perm[r] = r;
    memcpy(ref_keys, keys, (size_t)n_keys * sizeof *keys);
    ref_n_keys = n_keys;
    qsort(perm, (size_t)n, sizeof *perm, cmp_rows);
    for (int c = 0; c < n_cols; c++) {
        struct tcol got;
        assert_int_equal(read_col(out, cols[c].name, &got), n);
        for (int64_t r = 0; r < n; r++) {
            if (!same_value(&got, r, &cols[c], perm[r]))
                fail_msg("by=%s n=%lld: column %s row %lld differs (expected input row %lld, "
                         "got rid %lld)", by, (long long)n, cols[c].name, (long long)r,
                         (long long)perm[r], c != rid ? -1LL : (long long)got.i[r]);
        }
        tcol_free(&got);
    }
    free(perm);
    sl_table_unref(out);
}

/* One key column k (type, values, nulls) plus a float payload, sorted by `by`. */
static void one_key_case(sl_engine_t *e, enum sl_type type, int mode, int null_pct, int64_t n,
                         int64_t max_batch, int desc, int nulls_first)
{
    struct tcol cols[3];
    tcol_alloc(&cols[0], "rid", SL_TYPE_INT64, n);
    tcol_alloc(&cols[1], "k", type, n);
    tcol_alloc(&cols[2], "p", SL_TYPE_FLOAT64, n);
    fill(&cols[1], n, mode, null_pct);
    fill(&cols[2], n, V_FULL, 10);
    char by[64];
    snprintf(by, sizeof by, "k %s NULLS %s", desc ? "DESC" : "ASC", nulls_first ? "FIRST" : "LAST");
    struct rkey k = {&cols[1], desc, nulls_first};
    check_sort(e, cols, 3, n, max_batch, by, &k, 1);
    for (int c = 0; c < 3; c++)
        tcol_free(&cols[c]);
}

SL_TEST(sort_edge_sizes)
{
    int64_t sizes[] = {0, 1, 2, 63, 64, 65, 100, 1000, 1001};
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = open_engine(th, 64);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            one_key_case(e, SL_TYPE_INT32, V_FULL, 0, sizes[s], 37, 0, 0);
        sl_engine_close(e);
    }
    assert_no_leaks();
}

SL_TEST(sort_all_equal_is_stable)
{
    sl_engine_t *e = open_engine(2, 100);
    struct tcol cols[2];
    int64_t n = 5000;
    tcol_alloc(&cols[0], "rid", SL_TYPE_INT64, n);
    tcol_alloc(&cols[1], "k", SL_TYPE_INT64, n);
    for (int64_t r = 0; r < n; r++)
        cols[1].i[r] = -7;
    struct rkey k = {&cols[1], 0, 0};
    check_sort(e, cols, 2, n, 300, "k", &k, 1);
    k.desc = 1;
    check_sort(e, cols, 2, n, 300, "k DESC", &k, 1);
    tcol_free(&cols[0]);
    tcol_free(&cols[1]);
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(sort_types_directions_nulls)
{
    enum sl_type types[] = {SL_TYPE_INT32, SL_TYPE_INT64, SL_TYPE_FLOAT32, SL_TYPE_FLOAT64};
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = open_engine(th, 128);
        for (int ti = 0; ti < 4; ti++) {
            for (int mode = 0; mode < 3; mode++) {
                for (int dn = 0; dn < 4; dn++)
                    one_key_case(e, types[ti], mode, mode == 1 ? 0 : 15, 777 + 100 * mode, 200,
                                 dn & 1, dn >> 1);
            }
        }
        sl_engine_close(e);
    }
    assert_no_leaks();
}

SL_TEST(sort_default_null_order)
{
    /* ASC puts nulls last, DESC first (nulls compare as the largest value). */
    sl_engine_t *e = open_engine(2, 50);
    struct tcol cols[2];
    int64_t n = 400;
    tcol_alloc(&cols[0], "rid", SL_TYPE_INT64, n);
    tcol_alloc(&cols[1], "k", SL_TYPE_INT32, n);
    fill(&cols[1], n, V_SMALL, 30);
    struct rkey k = {&cols[1], 0, 0};
    check_sort(e, cols, 2, n, 64, "k", &k, 1);
    k = (struct rkey){&cols[1], 1, 1};
    check_sort(e, cols, 2, n, 64, "k desc", &k, 1);
    tcol_free(&cols[0]);
    tcol_free(&cols[1]);
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(sort_multi_key)
{
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = open_engine(th, 100);
        int64_t n = 3000;
        struct tcol cols[5];
        tcol_alloc(&cols[0], "rid", SL_TYPE_INT64, n);
        tcol_alloc(&cols[1], "a", SL_TYPE_INT32, n);
        tcol_alloc(&cols[2], "b", SL_TYPE_FLOAT64, n);
        tcol_alloc(&cols[3], "c", SL_TYPE_INT64, n);
        tcol_alloc(&cols[4], "p", SL_TYPE_FLOAT32, n);
        fill(&cols[1], n, V_SMALL, 10);
        fill(&cols[2], n, V_SMALL, 10);
        fill(&cols[3], n, V_EXTREME, 5);
        fill(&cols[4], n, V_FULL, 20);
        struct rkey k[] = {{&cols[1], 1, 1}, {&cols[2], 0, 1}, {&cols[3], 1, 0}};
        check_sort(e, cols, 5, n, 250, "a DESC NULLS FIRST, b NULLS FIRST, c DESC NULLS LAST", k,
                   3);
        struct rkey k2[] = {{&cols[2], 0, 0}, {&cols[1], 0, 0}};
        check_sort(e, cols, 5, n, 0, "b, a", k2, 2);
        for (int c = 0; c < 5; c++)
            tcol_free(&cols[c]);
        sl_engine_close(e);
    }
    assert_no_leaks();
}

SL_TEST(sort_large_multi_chunk)
{
    /* Enough rows for many chunks and the write-combining scatter. */
    sl_engine_t *e = open_engine(2, 4096);
    one_key_case(e, SL_TYPE_INT32, V_FULL, 0, 300001, 70000, 0, 0);
    one_key_case(e, SL_TYPE_INT64, V_FULL, 3, 200003, 0, 1, 0);
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(sort_bad_options)
{
    sl_engine_t *e = open_engine(1, 100);
    struct tcol c;
    tcol_alloc(&c, "k", SL_TYPE_INT32, 4);
    sl_table_t *t = make_table(&c, 1, 4, 0);
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int s, o;
    SL_ASSERT_OK(sl_plan_add_table(p, t, &s));
    assert_int_equal(sl_plan_add(p, "sort", &s, 1, "by=nope", &o), SL_ENOTFOUND);
    assert_non_null(strstr(sl_plan_errmsg(p), "nope"));
    assert_int_equal(sl_plan_add(p, "sort", &s, 1, "by=\"k DESC NULLS MIDDLE\"", &o), SL_EINVAL);
    assert_int_equal(sl_plan_add(p, "sort", &s, 1, "by=\"k UP\"", &o), SL_EINVAL);
    sl_plan_destroy(p);
    sl_table_unref(t);
    tcol_free(&c);
    sl_engine_close(e);
    assert_no_leaks();
}

/* ---------------- kernels ---------------- */

static int cmp_u64_hi(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y; /* low bits = index: a total order that is stable */
}

SL_TEST(radix_kernels_match_qsort)
{
    int64_t sizes[] = {0, 1, 5, 4095, 4096, 50000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int64_t n = sizes[s];
        uint64_t *a = sl__malloc((size_t)(n + 8) * 8), *tmp = sl__malloc((size_t)(n + 8) * 8);
        uint64_t *ref = malloc((size_t)(n + 8) * 8);
        struct sl__kv64 *b = sl__malloc((size_t)(n + 4) * 16);
        struct sl__kv64 *btmp = sl__malloc((size_t)(n + 4) * 16);
        for (int64_t i = 0; i < n; i++) {
            uint32_t code = (uint32_t)(s % 2 ? rnd() % 1000 : rnd());
            a[i] = ref[i] = (uint64_t)code << 32 | (uint64_t)i;
            b[i] = (struct sl__kv64){rnd() % (s % 2 ? 50 : UINT64_MAX), (uint64_t)i};
        }
        uint64_t *orig = malloc((size_t)(n + 8) * 8);
        memcpy(orig, a, (size_t)n * 8);
        qsort(ref, (size_t)n, 8, cmp_u64_hi);
        uint64_t *res = sl__rsort_k32(a, tmp, n);
        for (int64_t i = 0; i < n; i++)
            assert_true(res[i] == ref[i]);
        /* One pass by hand in three chunks with non-temporal stores, as the operator
         * runs it: histograms per chunk, positions, scatters. */
        if (n > 0) {
            for (int64_t i = 0; i < n; i++)
                a[i] = orig[i];
            static int64_t h[3][SL__RS_BUCKETS];
            int64_t cuts[4] = {0, n / 3, 2 * n / 3, n}, sum = 0;
            memset(h, 0, sizeof h);
            for (int c = 0; c < 3; c++)
                sl__rsort_hist_k32(a, cuts[c], cuts[c + 1], 32, h[c]);
            for (int bk = 0; bk < SL__RS_BUCKETS; bk++) {
                for (int c = 0; c < 3; c++) {
                    int64_t x = h[c][bk];
                    h[c][bk] = sum;
                    sum += x;
                }
            }
            for (int c = 0; c < 3; c++)
                sl__rsort_scatter_k32(a, tmp, cuts[c], cuts[c + 1], 32, h[c], 1);
            for (int64_t i = 1; i < n; i++) {
                uint64_t x = tmp[i - 1], y = tmp[i];
                uint64_t dx = (x >> 32) & SL__RS_MASK, dy = (y >> 32) & SL__RS_MASK;
                assert_true(dx < dy || (dx == dy && (uint32_t)x < (uint32_t)y));
            }
        }
        struct sl__kv64 *r2 = sl__rsort_k64(b, btmp, n);
        for (int64_t i = 1; i < n; i++)
            assert_true(r2[i - 1].key < r2[i].key ||
                        (r2[i - 1].key == r2[i].key && r2[i - 1].idx < r2[i].idx));
        sl__free(a, 0);
        sl__free(tmp, 0);
        sl__free(b, 0);
        sl__free(btmp, 0);
        free(ref);
        free(orig);
    }
    assert_no_leaks();
}

SL_TEST(merge_kernel_coranks)
{
    /* Runs of different lengths with many ties; every split point must give the same
     * output as one merge, and that output must be the stable order. */
    enum { K = 5 };
    int64_t lens[K] = {0, 17, 300, 1, 1000};
    int64_t total = 0;
    for (int j = 0; j < K; j++)
        total += lens[j];
    uint64_t *keys = malloc((size_t)total * 8);
    struct sl__merge_run runs[K];
    int64_t at = 0;
    for (int j = 0; j < K; j++) {
        uint64_t v = 0;
        for (int64_t i = 0; i < lens[j]; i++) {
            v += rnd() % 3;
            keys[at + i] = v;
        }
        runs[j] = (struct sl__merge_run){keys, at, at + lens[j], at};
        at += lens[j];
    }
    for (int k = 1; k <= K; k++) {
        int64_t n = 0;
        for (int j = 0; j < k; j++)
            n += lens[j];
        uint64_t *whole = malloc((size_t)(n + 1) * 8), *parts = malloc((size_t)(n + 1) * 8);
        int64_t zero[K] = {0}, full[K];
        for (int j = 0; j < k; j++)
            full[j] = lens[j];
        sl__merge_runs(runs, k, zero, full, whole);
        for (int64_t i = 1; i < n; i++) {
            uint64_t a = whole[i - 1], b = whole[i];
            assert_true(keys[a] < keys[b] || (keys[a] == keys[b] && a < b));
        }
        int64_t cuts[] = {0, 1, n / 3, n / 2, n - 1, n};
        for (int c = 0; c + 1 < 6; c++) {
            int64_t lo = cuts[c] < 0 ? 0 : cuts[c], hi = cuts[c + 1] < lo ? lo : cuts[c + 1];
            int64_t f[K], t[K];
            sl__merge_corank(runs, k, lo, f);
            sl__merge_corank(runs, k, hi, t);
            sl__merge_runs(runs, k, f, t, parts + lo);
        }
        for (int64_t i = 0; i < n; i++)
            assert_true(parts[i] == whole[i]);
        free(whole);
        free(parts);
    }
    free(keys);
}

/* ---------------- merge operator ---------------- */

/* Makes `k` inputs, each sorted by its key (type, direction, nulls), merges them, and
 * compares with the stable sort of their concatenation. */
static void merge_case(sl_engine_t *e, int k, enum sl_type type, int mode, int null_pct, int desc,
                       int nulls_first, int by_batch)
{
    int64_t lens[8], total = 0;
    for (int j = 0; j < k; j++)
        total += lens[j] = (int64_t)(rnd() % 700) + (j == 1 ? 0 : 1);
    struct tcol all[3];
    tcol_alloc(&all[0], "rid", SL_TYPE_INT64, total);
    tcol_alloc(&all[1], "k", type, total);
    tcol_alloc(&all[2], "p", SL_TYPE_INT32, total);
    fill(&all[1], total, mode, null_pct);
    fill(&all[2], total, V_FULL, 0);
    struct rkey key = {&all[1], desc, nulls_first};
    ref_keys[0] = key;
    ref_n_keys = 1;
    /* Sort each input's rows with the reference, and renumber rid in run order. */
    int64_t *perm = malloc((size_t)(total + 1) * sizeof *perm), at = 0;
    for (int64_t r = 0; r < total; r++)
        perm[r] = r;
    for (int j = 0; j < k; j++) {
        qsort(perm + at, (size_t)lens[j], sizeof *perm, cmp_rows);
        at += lens[j];
    }
    struct tcol srt[3];
    for (int c = 0; c < 3; c++) {
        tcol_alloc(&srt[c], all[c].name, all[c].type, total);
        for (int64_t r = 0; r < total; r++) {
            srt[c].i[r] = all[c].i[perm[r]];
            srt[c].f[r] = all[c].f[perm[r]];
            srt[c].valid[r] = all[c].valid[perm[r]];
        }
    }
    for (int64_t r = 0; r < total; r++)
        srt[0].i[r] = r;
    sl_table_t *in[8];
    int n_in = by_batch ? 1 : k;
    at = 0;
    for (int j = 0; j < k; j++) {
        struct tcol part[3];
        for (int c = 0; c < 3; c++) {
            part[c] = srt[c];
            part[c].i += at;
            part[c].f += at;
            part[c].valid += at;
        }
        sl_table_t *t = make_table(part, 3, lens[j], 0);
        if (by_batch && j > 0) {
            if (lens[j])
                SL_ASSERT_OK(sl_table_append(in[0], sl_table_batch(t, 0)));
            sl_table_unref(t);
        } else {
            in[j] = t;
        }
        at += lens[j];
    }
    char opts[128];
    snprintf(opts, sizeof opts, "by=\"k %s NULLS %s\" runs=%s", desc ? "DESC" : "ASC",
             nulls_first ? "FIRST" : "LAST", by_batch ? "batch" : "input");
    sl_table_t *out = run_op(e, in, n_in, "merge", opts, NULL);
    for (int j = 0; j < n_in; j++)
        sl_table_unref(in[j]);
    /* Reference: stable sort of the concatenation in run order. */
    ref_keys[0].c = &srt[1];
    for (int64_t r = 0; r < total; r++)
        perm[r] = r;
    qsort(perm, (size_t)total, sizeof *perm, cmp_rows);
    for (int c = 0; c < 3; c++) {
        struct tcol got;
        assert_int_equal(read_col(out, srt[c].name, &got), total);
        for (int64_t r = 0; r < total; r++) {
            if (!same_value(&got, r, &srt[c], perm[r]))
                fail_msg("merge %s: column %s row %lld differs", opts, srt[c].name, (long long)r);
        }
        tcol_free(&got);
    }
    sl_table_unref(out);
    free(perm);
    for (int c = 0; c < 3; c++) {
        tcol_free(&all[c]);
        tcol_free(&srt[c]);
    }
}

SL_TEST(merge_inputs_and_batches)
{
    enum sl_type types[] = {SL_TYPE_INT32, SL_TYPE_INT64, SL_TYPE_FLOAT32, SL_TYPE_FLOAT64};
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = open_engine(th, 100);
        for (int ti = 0; ti < 4; ti++) {
            merge_case(e, 1, types[ti], V_FULL, 0, 0, 0, 0);
            merge_case(e, 2, types[ti], V_SMALL, 10, 0, 0, 0);
            merge_case(e, 3, types[ti], V_EXTREME, 10, 1, 1, 0);
            merge_case(e, 5, types[ti], V_SMALL, 0, 1, 0, 1);
            merge_case(e, 7, types[ti], V_EXTREME, 20, 0, 1, 1);
        }
        sl_engine_close(e);
    }
    assert_no_leaks();
}

SL_TEST(merge_rejects_unsorted_input)
{
    sl_engine_t *e = open_engine(2, 100);
    struct tcol c[1];
    tcol_alloc(&c[0], "k", SL_TYPE_INT32, 10);
    for (int i = 0; i < 10; i++)
        c[0].i[i] = i == 6 ? -1 : i;
    sl_table_t *t = make_table(c, 1, 10, 0);
    int rc;
    sl_table_t *r = run_op(e, &t, 1, "merge", "by=k", &rc);
    assert_null(r);
    assert_int_equal(rc, SL_EINVAL);
    assert_non_null(strstr(sl_last_errmsg(), "row 6"));
    /* The engine stays usable. */
    c[0].i[6] = 6;
    sl_table_unref(t);
    t = make_table(c, 1, 10, 3);
    r = run_op(e, &t, 1, "merge", "by=k", NULL);
    assert_int_equal(sl_table_num_rows(r), 10);
    sl_table_unref(r);
    sl_table_unref(t);
    tcol_free(&c[0]);
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(sort_two_columns_carried_payload)
{
    /* A key and one payload without nulls: the payload rides in the sort items. */
    enum sl_type rt[] = {SL_TYPE_INT32, SL_TYPE_INT64, SL_TYPE_INT32, SL_TYPE_INT64};
    enum sl_type kt[] = {SL_TYPE_INT32, SL_TYPE_INT64, SL_TYPE_INT64, SL_TYPE_INT32};
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = open_engine(th, 1000);
        for (int v = 0; v < 4; v++) {
            for (int desc = 0; desc < 2; desc++) {
                int64_t n = 20000 + v;
                struct tcol cols[2];
                tcol_alloc(&cols[0], "rid", rt[v], n);
                tcol_alloc(&cols[1], "k", kt[v], n);
                fill(&cols[1], n, v % 2 ? V_SMALL : V_EXTREME, 0);
                struct rkey k = {&cols[1], desc, desc};
                check_sort(e, cols, 2, n, 3000, desc ? "k DESC" : "k", &k, 1);
                /* The key first in the schema, the payload (rid) second: the same
                 * unsorted keys (rid is found by name, never written over the key). */
                struct tcol swapped[3] = {cols[0], cols[1], cols[0]};
                check_sort(e, swapped + 1, 2, n, 0, desc ? "k DESC" : "k", &k, 1);
                tcol_free(&cols[0]);
                tcol_free(&cols[1]);
            }
        }
        sl_engine_close(e);
    }
    assert_no_leaks();
}
