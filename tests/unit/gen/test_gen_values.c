/* Tests gen.values: strings with exactly the chosen number of distinct values and
 * lengths in range (utf8, large_utf8, and dict with one dictionary shared by every
 * batch), dates, timestamps and decimals inside their ranges with their scale, bools,
 * null rates, the same data whatever the morsel size, and bind errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sl_test.h"

static sl_table_t *gen(int64_t morsel, const char *opts, int *rc_out)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = 2;
    cfg.n_gpus = 0;
    cfg.morsel_rows_cpu = morsel;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_engine_open(&e, &cfg));
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int node;
    sl_table_t *t = NULL;
    int rc = sl_plan_add(p, "gen.values", NULL, 0, opts, &node);
    sl_query_t *q = NULL;
    if (rc == SL_OK && (rc = sl_plan_output(p, node, "r")) == SL_OK &&
        (rc = sl_query_create(e, p, &q)) == SL_OK && (rc = sl_query_run(q)) == SL_OK)
        SL_ASSERT_OK(sl_query_result(q, "r", &t));
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_engine_close(e);
    if (rc_out)
        *rc_out = rc;
    else if (rc != SL_OK)
        fail_msg("gen.values %s: %s", opts, sl_err_name(rc));
    return t;
}

/* Every value of the table as text, in row order ("\x01" for null). */
static char **texts(sl_table_t *t, int64_t *n)
{
    *n = sl_table_num_rows(t);
    char **v = calloc((size_t)*n + 1, sizeof *v);
    int64_t k = 0;
    for (int64_t bi = 0; bi < sl_table_num_batches(t); bi++) {
        sl_batch_t *b = sl_table_batch(t, bi);
        for (int64_t r = 0; r < sl_batch_num_rows(b); r++, k++) {
            char buf[256];
            int null;
            sl_batch_value_format(b, 0, r, buf, sizeof buf, &null);
            v[k] = strdup(null ? "\x01" : buf);
        }
    }
    return v;
}

static void texts_free(char **v, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void check_strings(const char *type)
{
    char opts[256];
    snprintf(opts, sizeof opts, "rows=5000 type=%s cardinality=37 min_len=1 max_len=6 "
             "null_rate=0.1 seed=3", type);
    sl_table_t *a = gen(100, opts, NULL), *b = gen(4096, opts, NULL);
    int64_t n, m;
    char **va = texts(a, &n), **vb = texts(b, &m);
    assert_int_equal(n, 5000);
    int64_t nulls = 0;
    for (int64_t i = 0; i < n; i++) {
        assert_string_equal(va[i], vb[i]); /* whatever the morsel size */
        nulls += va[i][0] == '\x01';
        size_t len = strlen(va[i]);
        if (va[i][0] != '\x01' && (len < 2 || len > 6)) /* 2: the base-36 digits of 36 */
            fail_msg("row %lld: \"%s\" has a length outside [2, 6]", (long long)i, va[i]);
    }
    assert_true(nulls > 350 && nulls < 650);
    qsort(va, (size_t)n, sizeof *va, cmp_str);
    int64_t distinct = 0;
    for (int64_t i = 0; i < n; i++)
        distinct += va[i][0] != '\x01' && (i == 0 || strcmp(va[i], va[i - 1]) != 0);
    assert_int_equal(distinct, 37);
    if (!strcmp(type, "dict")) { /* one dictionary for every batch */
        struct sl_strings s0, s1;
        assert_true(sl_table_num_batches(a) > 1);
        SL_ASSERT_OK(sl_batch_column_strings(sl_table_batch(a, 0), 0, &s0));
        SL_ASSERT_OK(sl_batch_column_strings(sl_table_batch(a, 1), 0, &s1));
        assert_ptr_equal(s0.dict_offsets, s1.dict_offsets);
        assert_int_equal(s0.dict_length, 37);
    }
    texts_free(va, n);
    texts_free(vb, m);
    sl_table_unref(a);
    sl_table_unref(b);
}

SL_TEST(strings_cardinality_and_lengths)
{
    check_strings("utf8");
    check_strings("large_utf8");
    check_strings("dict");
}

/* Values of a range type: all inside [lo, hi], comparing their first strlen(lo) bytes
 * (a timestamp may add a fraction). */
static void check_range(const char *opts, const char *lo, const char *hi)
{
    sl_table_t *t = gen(333, opts, NULL);
    int64_t n;
    char **v = texts(t, &n);
    assert_int_equal(n, 2000);
    for (int64_t i = 0; i < n; i++) {
        size_t k = strlen(lo);
        if (strlen(v[i]) < k || strncmp(v[i], lo, k) < 0 || strncmp(v[i], hi, k) > 0)
            fail_msg("%s: row %lld is \"%s\", outside [%s, %s]", opts, (long long)i, v[i], lo,
                     hi);
    }
    texts_free(v, n);
    sl_table_unref(t);
}

SL_TEST(dates_timestamps_decimals_bools_in_range)
{
    check_range("rows=2000 type=date32 min=\"1995-03-01\" max=\"1995-03-31\"", "1995-03-01",
                "1995-03-31");
    check_range("rows=2000 type=timestamp min=\"2001-01-01 10:00:00\" max=\"2001-01-01 "
                "10:59:59\"", "2001-01-01 10:00:00", "2001-01-01 10:59:59");
    check_range("rows=2000 type=\"decimal(15,2)\" min=100.00 max=999.99", "100.00", "999.99");
    check_range("rows=2000 type=\"decimal(38,10)\" min=1000000000000000000000000000 "
                "max=9999999999999999999999999999", "1000000000000000000000000000.0000000000",
                "9999999999999999999999999999.0000000000");
    sl_table_t *t = gen(100, "rows=2000 type=bool", NULL);
    int64_t n, trues = 0;
    char **v = texts(t, &n);
    for (int64_t i = 0; i < n; i++)
        trues += !strcmp(v[i], "true");
    assert_true(trues > 850 && trues < 1150);
    texts_free(v, n);
    sl_table_unref(t);
}

SL_TEST(bind_errors)
{
    int rc;
    assert_null(gen(100, "rows=10 type=int32", &rc));
    assert_int_equal(rc, SL_ETYPE);
    assert_null(gen(100, "rows=10 type=date32 min=\"1999-01-02\" max=\"1999-01-01\"", &rc));
    assert_int_equal(rc, SL_EINVAL);
    assert_null(gen(100, "rows=10 type=date32 min=\"1999-02-30\"", &rc));
    assert_int_equal(rc, SL_EINVAL);
    assert_null(gen(100, "rows=10 type=\"decimal(5,2)\" max=1000", &rc));
    assert_int_equal(rc, SL_EINVAL);
    assert_null(gen(100, "rows=10 type=utf8 cardinality=0", &rc));
    assert_int_equal(rc, SL_EINVAL);
    assert_null(gen(100, "rows=10 type=utf8 min_len=5 max_len=4", &rc));
    assert_int_equal(rc, SL_EINVAL);
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}
