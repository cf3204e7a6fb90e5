/* The group-by of every column type (agg_any.c) against results DuckDB gives on the same
 * rows (tests/unit/typed_table.h): string, dictionary and multi-type keys, nulls as one
 * group, exact decimal sums past int64 (decimal(38,s)), avg of decimals as float64,
 * min/max of strings, dates, bools, NaN as the largest float, count(DISTINCT) with NaN
 * equal to NaN, a global aggregate over no rows, dictionaries that differ between
 * batches, the types sum/avg refuse; 1 and 2 threads, 2-row morsels (so combine merges
 * workers). And the bound plan keeps why the GPU cannot run a where=. */
#include "typed_table.h"
#include "plan_int.h"
#include "../../../operators/aggregate/agg_int.h"

SL_TEST(agg_string_key_every_aggregate)
{
    static const char *const want[] = {
        "NULL|2|2|1001|19001|y|0|3|2|2|5.005|9",
        "a|2|1|250|19001|y|0|nan|1|-2|2.5|5",
        "b|3|3|51|18999|x|0|nan|1|18000000000000000001|0.17|262",
        "c|1|1|3|19000|z|1|0|1|3|0.03|7",
    };
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = tt_engine(th, 2);
        sl_table_t *t = tt_table();
        tr_expect(e, t,
                  "a = scan.table name=t\n"
                  "r = aggregate(a) keys=k aggs=\"count(*), count(d), sum(p), min(dt), max(d), "
                  "min(bo), max(f), count(DISTINCT d), sum(w), avg(p), sum(u8)\"\noutput r\n",
                  want, 4, 0);
        sl_table_unref(t);
        sl_engine_close(e);
    }
    tt_assert_no_leaks();
}

/* where= on the paths of every key type (utf8, DICT, bool keys; count(DISTINCT)): the
 * same rows as a filter before the aggregate. */
SL_TEST(agg_where_equals_filter_first)
{
    static const char *const preds[] = {"p > 1", "d = 'x' OR f > 0", "bo", "p IS NULL",
                                        "dt > DATE '2100-01-01'"};
    static const char *const groups[] = {
        "keys=k aggs=\"count(*), count(d), sum(p), min(dt), max(d), count(DISTINCT d), avg(p)\"",
        "keys=\"d, bo\" aggs=\"count(*), min(k), max(p), min(f)\"",
        "aggs=\"count(*), sum(w), max(k)\"",
    };
    static char a[TR_MAX_ROWS][160], b[TR_MAX_ROWS][160];
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = tt_engine(th, 2);
        sl_table_t *t = tt_table();
        for (size_t i = 0; i < sizeof preds / sizeof preds[0]; i++) {
            for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
                char fused[512], first[512];
                snprintf(fused, sizeof fused, "a = scan.table name=t\nr = aggregate(a) "
                         "where=\"%s\" %s\noutput r\n", preds[i], groups[g]);
                snprintf(first, sizeof first, "a = scan.table name=t\nf = filter(a) "
                         "where=\"%s\"\nr = aggregate(f) %s\noutput r\n", preds[i], groups[g]);
                sl_table_t *x, *y;
                SL_ASSERT_OK(tr_run(e, t, fused, &x));
                SL_ASSERT_OK(tr_run(e, t, first, &y));
                int m = tr_rows(x, a), n = tr_rows(y, b);
                sl_table_unref(x);
                sl_table_unref(y);
                qsort(a, (size_t)m, sizeof a[0], tr_cmp_rows);
                qsort(b, (size_t)n, sizeof b[0], tr_cmp_rows);
                assert_int_equal(m, n);
                for (int r = 0; r < m; r++)
                    if (strcmp(a[r], b[r]))
                        fail_msg("%s\nrow %d: %s, filter first: %s", fused, r, a[r], b[r]);
            }
        }
        sl_table_unref(t);
        sl_engine_close(e);
    }
    tt_assert_no_leaks();
}

/* where= must be a condition over the aggregate's input. */
SL_TEST(agg_where_refused)
{
    sl_engine_t *e = tt_engine(1, 2);
    sl_table_t *t = tt_table(), *out;
    assert_int_equal(tr_run(e, t, "a = scan.table name=t\nr = aggregate(a) where=\"p + 1\" "
                                  "aggs=\"count(*)\"\noutput r\n", &out), SL_ETYPE);
    assert_int_equal(tr_run(e, t, "a = scan.table name=t\nr = aggregate(a) where=\"nope > 1\" "
                                  "aggs=\"count(*)\"\noutput r\n", &out), SL_ENOTFOUND);
    assert_int_equal(tr_run(e, t, "a = scan.table name=t\nr = aggregate(a) where=\"count > 1\" "
                                  "aggs=\"count(*)\"\noutput r\n", &out), SL_ENOTFOUND);
    sl_table_unref(t);
    sl_engine_close(e);
    tt_assert_no_leaks();
}

SL_TEST(agg_dict_and_bool_keys)
{
    static const char *const want[] = {
        "x|1|2|b|150|1.5", "NULL|1|1|a|NULL|-1", "z|1|1|c|3|0",
        "y|0|1|a|250|nan", "y|NULL|1|NULL|999|NULL", "x|0|2|b|2|3",
    };
    sl_engine_t *e = tt_engine(2, 3);
    sl_table_t *t = tt_table();
    tr_expect(e, t,
              "a = scan.table name=t\n"
              "r = aggregate(a) keys=\"d, bo\" aggs=\"count(*), min(k), max(p), min(f)\"\n"
              "output r\n", want, 6, 0);
    sl_table_unref(t);
    sl_engine_close(e);
    tt_assert_no_leaks();
}

SL_TEST(agg_global_and_empty)
{
    /* avg(w) = 18000000000000000004 / 1000 / 7 as float64. */
    static const char *const all[] = {"1305|2.571428571e+15|c|-1|6"};
    static const char *const none[] = {"0|NULL|NULL|0"};
    const char *const plan = "a = scan.table name=t\nr = aggregate(a) aggs=\"sum(p), avg(w), "
                             "max(k), min(f), count(DISTINCT f)\"\noutput r\n";
    sl_engine_t *e = tt_engine(2, 2);
    sl_table_t *t = tt_table();
    tr_expect(e, t, plan, all, 1, 0);
    sl_table_unref(t);
    /* No rows: a sum over nothing is NULL, counts are 0. */
    const enum sl_type types[4] = {SL_TYPE_DICT, SL_TYPE_UTF8, sl_type_decimal(15, 2),
                                   SL_TYPE_DATE32};
    const char *names[4] = {"d", "k", "p", "dt"};
    const char *const *cols[4] = {tt_k, tt_k, tt_k, tt_k};
    t = tr_table(4, names, types, cols, 0);
    tr_expect(e, t, "a = scan.table name=t\nr = aggregate(a) aggs=\"count(*), sum(p), min(k), "
              "count(DISTINCT dt)\"\noutput r\n", none, 1, 0);
    sl_table_unref(t);
    sl_engine_close(e);
    tt_assert_no_leaks();
}

/* Two batches whose dictionaries differ: equal strings group together. */
SL_TEST(agg_dictionaries_differ_between_batches)
{
    static const char *const a[] = {"x", "y", "x"}, *const b[] = {"z", "x", "NULL", "y"};
    static const char *const ka[] = {"1", "2", "3"}, *const kb[] = {"4", "5", "6", "7"};
    const char *names[] = {"d", "v"};
    enum sl_type types[] = {SL_TYPE_DICT, SL_TYPE_INT32};
    const char *const *ca[] = {a, ka}, *const *cb[] = {b, kb};
    sl_table_t *t = tr_table(2, names, types, ca, 3), *t2 = tr_table(2, names, types, cb, 4);
    SL_ASSERT_OK(sl_table_append(t, sl_table_batch(t2, 0)));
    static const char *const want[] = {"x|3|9|x", "y|2|9|y", "z|1|4|z", "NULL|1|6|NULL"};
    sl_engine_t *e = tt_engine(1, 1 << 20);
    tr_expect(e, t, "a = scan.table name=t\nr = aggregate(a) keys=d aggs=\"count(*), sum(v), "
              "max(d)\"\noutput r\n", want, 4, 0);
    sl_table_unref(t2);
    sl_table_unref(t);
    sl_engine_close(e);
    tt_assert_no_leaks();
}

/* sum/avg where SQL defines none: refused at bind, naming the column and its type. */
SL_TEST(agg_refuses_undefined_aggregates)
{
    sl_engine_t *e = tt_engine(1, 64);
    sl_table_t *t = tt_table();
    static const char *const bad[][2] = {
        {"sum(dt)", "date32"}, {"avg(bo)", "bool"}, {"sum(k)", "utf8"}, {"avg(d)", "dict"}};
    for (int i = 0; i < 4; i++) {
        char text[256];
        snprintf(text, sizeof text, "a = scan.table name=t\nr = aggregate(a) keys=k aggs=\"%s\"\n"
                 "output r\n", bad[i][0]);
        sl_plan_t *p;
        SL_ASSERT_OK(sl_plan_create(&p));
        SL_ASSERT_OK(sl_plan_register_table(p, "t", t));
        assert_int_equal(sl_plan_parse(p, text, "test.plan"), SL_ETYPE);
        assert_non_null(strstr(sl_plan_errmsg(p), bad[i][1]));
        sl_plan_destroy(p);
    }
    sl_table_unref(t);
    sl_engine_close(e);
    tt_assert_no_leaks();
}

/* A decimal(38,s) sum past 10^38 - 1 is an error, not a wrap. */
SL_TEST(agg_decimal_sum_overflow)
{
    const char *names[] = {"x"};
    enum sl_type types[] = {sl_type_decimal(38, 0)};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 1, names, types, 2));
    __int128 *x = sl_batch_column_data(b, 0);
    x[0] = x[1] = (__int128)9000000000000000000ll * 10000000000000000000ull; /* 9e37 */
    sl_table_t *t, *out;
    SL_ASSERT_OK(sl_table_create(&t));
    SL_ASSERT_OK(sl_table_append(t, b));
    sl_batch_unref(b);
    sl_engine_t *e = tt_engine(1, 64);
    assert_int_equal(tr_run(e, t, "a = scan.table name=t\nr = aggregate(a) aggs=\"sum(x)\"\n"
                            "output r\n", &out), SL_EOVERFLOW);
    assert_null(out);
    sl_table_unref(t);
    sl_engine_close(e);
    tt_assert_no_leaks();
}

/* date32, timestamp and decimal(p <= 18) keys and values take the parallel group table
 * (read as integers): decimal sums come out as decimal(38,s), avg of a decimal as
 * float64, min/max keep the type. */
SL_TEST(agg_table_dates_decimals_timestamps)
{
    const char *names[] = {"dt", "p", "w"};
    const enum sl_type types[] = {SL_TYPE_DATE32, sl_type_decimal(15, 2), SL_TYPE_TIMESTAMP};
    const char *const *cols[] = {tt_dt, tt_p, tt_w};
    static const char *const by_dt[] = {
        "NULL|1|999|9.99|999|NULL|NULL|NULL|0", "18999|1|1|0.01|1|18999|1|1|1",
        "19000|3|53|0.1766666667|-100|19000|3|9000000000000000000|3",
        "19001|2|252|1.26|2|19001|2|5|2", "19002|1|NULL|NULL|NULL|19002|-7|-7|1"};
    static const char *const by_p[] = {
        "NULL|1|-7", "-100|1|9000000000000000000", "1|1|1", "2|1|2", "3|1|3",
        "150|1|9000000000000000000", "250|1|5", "999|1|NULL"};
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = tt_engine(th, 2);
        sl_table_t *t = tr_table(3, names, types, cols, TT_ROWS);
        tr_expect(e, t, "a = scan.table name=t\nr = aggregate(a) keys=dt aggs=\"count(*), "
                  "sum(p), avg(p), min(p), max(dt), min(w), max(w), count(w)\"\noutput r\n",
                  by_dt, 5, 0);
        tr_expect(e, t, "a = scan.table name=t\nr = aggregate(a) keys=p aggs=\"count(*), "
                  "max(w)\"\noutput r\n", by_p, 8, 0);
        sl_table_unref(t);
        sl_engine_close(e);
    }
    tt_assert_no_leaks();
}

/* The bound plan keeps why the GPU cannot run its where= (it was discarded): a predicate
 * the GPU program refuses says why, one it takes has a program and no reason. */
SL_TEST(agg_where_why_kept)
{
    static const struct {
        const char *where;
        int gpu;
    } cases[] = {{"dt > DATE '2020-01-01'", 1}, {"k = 'a'", 1}, {"CAST(p AS float64) > 1.5", 0},
                 {"u8 > 3 AND CAST(p AS float64) < 9.5", 0}};
    sl_table_t *t = tt_table();
    sl_plan_t *p;
    int ni, na;
    SL_ASSERT_OK(sl_plan_create(&p));
    SL_ASSERT_OK(sl_plan_add_table(p, t, &ni));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char opts[200];
        snprintf(opts, sizeof opts, "where=\"%s\" keys=dt aggs=\"count(*)\"", cases[i].where);
        SL_ASSERT_OK(sl_plan_add(p, "aggregate", &ni, 1, opts, &na));
        const struct agg_plan *ap = sl_op_data(p->nodes[na]);
        printf("%s: program %d, why '%s'\n", cases[i].where, ap->where_xp != NULL, ap->where_why);
        assert_int_equal(ap->where_xp != NULL, cases[i].gpu);
        assert_int_equal(ap->where_why[0] != 0, !cases[i].gpu);
    }
    sl_plan_destroy(p);
    sl_table_unref(t);
    tt_assert_no_leaks();
}
