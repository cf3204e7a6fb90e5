/* The group-by and sort of any type (agg_any.c, sort_any.c) against the parallel
 * integer paths on the same random rows (50,000 rows, nulls in keys and values, 2
 * threads, small morsels): a plan with an extra count(DISTINCT) or an int16 column takes
 * the any-type path, and its other columns must equal the integer path's. count(DISTINCT)
 * itself is checked against a count of distinct (key, value) pairs. */
#include "typed_table.h"

#define N 50000

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* k int32 (200 values, 5% null), v int64 (wide range, 5% null), s int16 (10 values). */
static sl_table_t *random_table(void)
{
    const char *names[] = {"k", "v", "s"};
    const enum sl_type types[] = {SL_TYPE_INT32, SL_TYPE_INT64, SL_TYPE_INT16};
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    for (int64_t at = 0; at < N;) {
        int64_t len = 1 + (int64_t)(rnd() % 7000);
        len = len < N - at ? len : N - at;
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, 3, names, types, len));
        int32_t *k = sl_batch_column_data(b, 0);
        int64_t *v = sl_batch_column_data(b, 1);
        int16_t *s = sl_batch_column_data(b, 2);
        uint8_t *kv = sl_batch_column_validity(b, 0), *vv = sl_batch_column_validity(b, 1);
        for (int64_t i = 0; i < len; i++) {
            k[i] = (int32_t)(rnd() % 200) - 100;
            v[i] = (int64_t)(rnd() % 2000001) - 1000000;
            s[i] = (int16_t)(rnd() % 10);
            if (rnd() % 20 == 0)
                kv[i >> 3] &= (uint8_t)~(1u << (i & 7));
            if (rnd() % 20 == 0)
                vv[i >> 3] &= (uint8_t)~(1u << (i & 7));
        }
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
        at += len;
    }
    return t;
}

/* Rows of a result as text, sorted (columns [0, n_cols) only). */
static char **sorted_rows(const sl_table_t *t, int n_cols, int64_t *n_out)
{
    int64_t n = sl_table_num_rows(t), r = 0;
    char **rows = calloc((size_t)n + 1, sizeof *rows);
    for (int64_t k = 0; k < sl_table_num_batches(t); k++) {
        const sl_batch_t *b = sl_table_batch(t, k);
        for (int64_t i = 0; i < sl_batch_num_rows(b); i++, r++) {
            rows[r] = calloc(1, 64 * (size_t)n_cols);
            for (int c = 0; c < n_cols; c++) {
                char cell[64];
                tr_cell(b, c, i, cell, sizeof cell);
                if (c)
                    strcat(rows[r], "|");
                strcat(rows[r], cell);
            }
        }
    }
    qsort(rows, (size_t)n, sizeof *rows, tr_cmp_str);
    *n_out = n;
    return rows;
}

static void free_rows(char **rows, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        free(rows[i]);
    free(rows);
}

/* Results of plans a and b agree on their first n_cols columns (as row multisets, or
 * in order). */
static void expect_same(sl_engine_t *e, sl_table_t *in, const char *a, const char *b,
                        int n_cols, int ordered)
{
    sl_table_t *ra, *rb;
    SL_ASSERT_OK(tr_run(e, in, a, &ra));
    SL_ASSERT_OK(tr_run(e, in, b, &rb));
    int64_t na, nb;
    char **x = ordered ? NULL : sorted_rows(ra, n_cols, &na);
    char **y = ordered ? NULL : sorted_rows(rb, n_cols, &nb);
    if (ordered) {
        /* In order: compare row by row without sorting. */
        assert_int_equal(sl_table_num_rows(ra), sl_table_num_rows(rb));
        int64_t i = 0;
        for (int64_t k = 0, k2 = 0, j = 0, j2 = 0; i < sl_table_num_rows(ra); i++) {
            const sl_batch_t *ba = sl_table_batch(ra, k), *bb = sl_table_batch(rb, k2);
            for (int c = 0; c < n_cols; c++) {
                char ca[64], cb[64];
                tr_cell(ba, c, j, ca, sizeof ca);
                tr_cell(bb, c, j2, cb, sizeof cb);
                if (strcmp(ca, cb))
                    fail_msg("row %lld column %d: %s vs %s", (long long)i, c, ca, cb);
            }
            if (++j == sl_batch_num_rows(ba))
                k++, j = 0;
            if (++j2 == sl_batch_num_rows(bb))
                k2++, j2 = 0;
        }
    } else {
        assert_int_equal(na, nb);
        for (int64_t i = 0; i < na; i++)
            if (strcmp(x[i], y[i]))
                fail_msg("row %lld: %s vs %s", (long long)i, x[i], y[i]);
        free_rows(x, na);
        free_rows(y, nb);
    }
    sl_table_unref(ra);
    sl_table_unref(rb);
}

SL_TEST(agg_any_equals_table_path)
{
    sl_engine_t *e = tt_engine(2, 1000);
    sl_table_t *t = random_table();
    expect_same(e, t,
                "a = scan.table name=t\nr = aggregate(a) keys=k aggs=\"count(*), count(v), "
                "sum(v), min(v), max(v), avg(v)\"\noutput r\n",
                "a = scan.table name=t\nr = aggregate(a) keys=k aggs=\"count(*), count(v), "
                "sum(v), min(v), max(v), avg(v), count(DISTINCT s)\"\noutput r\n", 7, 0);
    /* A global aggregate. */
    expect_same(e, t,
                "a = scan.table name=t\nr = aggregate(a) aggs=\"count(*), sum(v), min(k)\"\n"
                "output r\n",
                "a = scan.table name=t\nr = aggregate(a) aggs=\"count(*), sum(v), min(k), "
                "count(DISTINCT k)\"\noutput r\n", 3, 0);
    /* count(DISTINCT s) per k: s has 10 values, so with ~250 rows per key almost every
     * group has all 10; compare with a plan grouping by (k, s) then counting per k. */
    expect_same(e, t,
                "a = scan.table name=t\nr = aggregate(a) keys=k aggs=\"count(DISTINCT s)\"\n"
                "output r\n",
                "a = scan.table name=t\ng = aggregate(a) keys=\"k, s\" aggs=\"count(*)\"\n"
                "r = aggregate(g) keys=k aggs=\"count(s)\"\noutput r\n", 2, 0);
    sl_table_unref(t);
    sl_engine_close(e);
    tt_assert_no_leaks();
}

SL_TEST(sort_any_equals_radix_sort)
{
    sl_engine_t *e = tt_engine(2, 1000);
    sl_table_t *t = random_table();
    /* The int16 payload s sends the second plan to sort_any; the first sorts only k and
     * v (radix). Rows that tie on (k, v) are equal in the columns compared. */
    expect_same(e, t, "a = scan.table name=t\np = project(a) columns=\"k, v\"\n"
                "r = sort(p) by=\"k DESC, v NULLS FIRST\"\noutput r\n",
                "a = scan.table name=t\nr = sort(a) by=\"k DESC, v NULLS FIRST\"\noutput r\n",
                2, 1);
    sl_table_unref(t);
    sl_engine_close(e);
    tt_assert_no_leaks();
}

/* 50,000 strings with ~40,000 distinct values (the rank table grows many times): sorted
 * descending by bytes, nulls first, every row kept (its int partner with it). */
SL_TEST(sort_any_many_distinct_strings)
{
    const char *names[] = {"s", "x"};
    const enum sl_type types[] = {SL_TYPE_UTF8, SL_TYPE_INT64};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 2, names, types, N));
    char *chars = sl_batch_column_chars(b, 0, (int64_t)N * 12);
    int32_t *off = sl_batch_column_data(b, 0);
    int64_t *x = sl_batch_column_data(b, 1), sum = 0;
    uint8_t *valid = sl_batch_column_validity(b, 0);
    int at = 0;
    for (int i = 0; i < N; i++) {
        int64_t v = (int64_t)(rnd() % 100000);
        x[i] = v;
        sum += v;
        if (v % 50 == 0)
            valid[i >> 3] &= (uint8_t)~(1u << (i & 7));
        else
            at += snprintf(chars + at, 12, "%lld", (long long)v); /* "123" < "13" in bytes */
        off[i + 1] = at;
    }
    sl_table_t *t, *out;
    SL_ASSERT_OK(sl_table_create(&t));
    SL_ASSERT_OK(sl_table_append(t, b));
    sl_batch_unref(b);
    sl_engine_t *e = tt_engine(2, 1000);
    SL_ASSERT_OK(tr_run(e, t, "a = scan.table name=t\nr = sort(a) by=\"s DESC NULLS FIRST\"\n"
                        "output r\n", &out));
    assert_int_equal(sl_table_num_rows(out), N);
    char prev[64] = "", cur[64], xs[64];
    int64_t got = 0, row = 0;
    bool seen_value = false;
    for (int64_t k = 0; k < sl_table_num_batches(out); k++) {
        const sl_batch_t *ob = sl_table_batch(out, k);
        for (int64_t i = 0; i < sl_batch_num_rows(ob); i++, row++) {
            tr_cell(ob, 0, i, cur, sizeof cur);
            tr_cell(ob, 1, i, xs, sizeof xs);
            got += strtoll(xs, NULL, 10);
            bool null = !strcmp(cur, "NULL");
            if (null && seen_value)
                fail_msg("row %lld: a null after a value", (long long)row);
            if (!null && seen_value && strcmp(prev, cur) < 0)
                fail_msg("row %lld: '%s' after '%s'", (long long)row, cur, prev);
            if (!null && strcmp(cur, xs))
                fail_msg("row %lld: s '%s' lost its x %s", (long long)row, cur, xs);
            seen_value |= !null;
            snprintf(prev, sizeof prev, "%s", cur);
        }
    }
    assert_int_equal(got, sum);
    sl_table_unref(out);
    /* Grouped by s (the group slots grow many times): one group per distinct value plus
     * the null group, each non-null group's x equal to its string. */
    SL_ASSERT_OK(tr_run(e, t, "a = scan.table name=t\nr = aggregate(a) keys=s aggs=\"count(*), "
                        "min(x), max(x)\"\noutput r\n", &out));
    int64_t rows = 0, groups = 0, distinct = 0;
    static uint8_t present[100000];
    memset(present, 0, sizeof present);
    const sl_batch_t *in = sl_table_batch(t, 0);
    for (int i = 0; i < N; i++) {
        char c[64];
        tr_cell(in, 1, i, c, sizeof c);
        int64_t v = strtoll(c, NULL, 10);
        if (v % 50 && !present[v]++)
            distinct++;
    }
    for (int64_t k = 0; k < sl_table_num_batches(out); k++) {
        const sl_batch_t *ob = sl_table_batch(out, k);
        for (int64_t i = 0; i < sl_batch_num_rows(ob); i++, groups++) {
            char key[64], cnt[64], lo[64], hi[64];
            tr_cell(ob, 0, i, key, sizeof key);
            tr_cell(ob, 1, i, cnt, sizeof cnt);
            tr_cell(ob, 2, i, lo, sizeof lo);
            tr_cell(ob, 3, i, hi, sizeof hi);
            rows += strtoll(cnt, NULL, 10);
            if (strcmp(key, "NULL") && (strcmp(key, lo) || strcmp(key, hi)))
                fail_msg("group '%s': min %s max %s", key, lo, hi);
        }
    }
    assert_int_equal(rows, N);
    assert_int_equal(groups, distinct + 1);
    sl_table_unref(out);
    sl_table_unref(t);
    sl_engine_close(e);
    tt_assert_no_leaks();
}
