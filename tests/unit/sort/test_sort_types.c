/* The sort and sort.topk of every column type against DuckDB's ORDER BY on the same rows
 * (tests/common/typed_table.h): string keys in byte order, a dictionary in its strings'
 * order (its codes are not), dates, decimals (int64 and int128), bools, NaN as the
 * largest float, NULLS FIRST/LAST per key, ASC/DESC mixed, payload columns of every type;
 * top-k ties broken by the other columns; 1 and 2 threads with 2-row morsels. */
#include "typed_table.h"

struct sort_case {
    const char *plan;
    const char *want[TT_ROWS];
    int n;
};

/* Whole rows: k, d, dt, p, w, bo, f, u8 (tests/common/typed_table.h). */
static const struct sort_case cases[] = {
    {"a = scan.table name=t\nr = sort(a) by=\"k ASC NULLS LAST, p DESC NULLS FIRST\"\noutput r\n",
     {"a|NULL|19002|NULL|-7|1|-1|4", "a|y|19001|250|5|0|nan|1",
      "b|x|19000|150|9000000000000000000|1|1.5|255", "b|x|18999|1|1|0|nan|5",
      "b|x|19000|-100|9000000000000000000|1|2|2", "c|z|19000|3|3|1|0|7",
      "NULL|y|NULL|999|NULL|NULL|NULL|3", "NULL|x|19001|2|2|0|3|6"}, 8},
    /* d's dictionary codes run against its strings' order; equal keys keep input order. */
    {"a = scan.table name=t\nr = sort(a) by=\"d DESC NULLS LAST, dt ASC NULLS FIRST, k NULLS LAST\"\n"
     "output r\n",
     {"c|z|19000|3|3|1|0|7", "NULL|y|NULL|999|NULL|NULL|NULL|3", "a|y|19001|250|5|0|nan|1",
      "b|x|18999|1|1|0|nan|5", "b|x|19000|150|9000000000000000000|1|1.5|255",
      "b|x|19000|-100|9000000000000000000|1|2|2", "NULL|x|19001|2|2|0|3|6",
      "a|NULL|19002|NULL|-7|1|-1|4"}, 8},
    {"a = scan.table name=t\nr = sort(a) by=\"f DESC NULLS LAST, bo NULLS LAST, w NULLS LAST\"\n"
     "output r\n",
     {"b|x|18999|1|1|0|nan|5", "a|y|19001|250|5|0|nan|1", "NULL|x|19001|2|2|0|3|6",
      "b|x|19000|-100|9000000000000000000|1|2|2", "b|x|19000|150|9000000000000000000|1|1.5|255",
      "c|z|19000|3|3|1|0|7", "a|NULL|19002|NULL|-7|1|-1|4", "NULL|y|NULL|999|NULL|NULL|NULL|3"}, 8},
    /* Three rows tie on bo = 0: the other columns (k first) decide. */
    {"a = scan.table name=t\nr = sort.topk(a) keys=\"bo NULLS LAST\" limit=2\noutput r\n",
     {"a|y|19001|250|5|0|nan|1", "b|x|18999|1|1|0|nan|5"}, 2},
    {"a = scan.table name=t\nr = sort.topk(a) keys=\"f DESC NULLS LAST\" limit=3\noutput r\n",
     {"a|y|19001|250|5|0|nan|1", "b|x|18999|1|1|0|nan|5", "NULL|x|19001|2|2|0|3|6"}, 3},
    {"a = scan.table name=t\nr = sort.topk(a) keys=\"dt DESC NULLS FIRST, w\" limit=4\noutput r\n",
     {"NULL|y|NULL|999|NULL|NULL|NULL|3", "a|NULL|19002|NULL|-7|1|-1|4", "NULL|x|19001|2|2|0|3|6",
      "a|y|19001|250|5|0|nan|1"}, 4},
};

SL_TEST(sort_and_topk_every_type)
{
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = tt_engine(th, 2);
        sl_table_t *t = tt_table();
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            tr_expect(e, t, cases[i].plan, cases[i].want, cases[i].n, 1);
        sl_table_unref(t);
        sl_engine_close(e);
    }
    tt_assert_no_leaks();
}

/* Payload columns of every type come along with their rows. */
SL_TEST(sort_carries_every_type)
{
    sl_engine_t *e = tt_engine(2, 3);
    sl_table_t *t = tt_table();
    static const char *const want[] = {
        "b|x|18999|1|1|0|nan|5", "b|x|19000|150|9000000000000000000|1|1.5|255",
        "c|z|19000|3|3|1|0|7", "b|x|19000|-100|9000000000000000000|1|2|2",
        "NULL|x|19001|2|2|0|3|6", "a|y|19001|250|5|0|nan|1", "a|NULL|19002|NULL|-7|1|-1|4",
        "NULL|y|NULL|999|NULL|NULL|NULL|3"};
    tr_expect(e, t, "a = scan.table name=t\nr = sort(a) by=\"dt, u8 DESC\"\noutput r\n", want, 8, 1);
    sl_table_unref(t);
    sl_engine_close(e);
    tt_assert_no_leaks();
}

SL_TEST(topk_limits)
{
    sl_engine_t *e = tt_engine(2, 2);
    sl_table_t *t = tt_table(), *out;
    char rows[TR_MAX_ROWS][160];
    /* A limit past the rows keeps them all, in order; limit=0 none; a negative one is
     * refused at bind. */
    SL_ASSERT_OK(tr_run(e, t, "a = scan.table name=t\nr = sort.topk(a) keys=\"u8 DESC\" "
                        "limit=100\noutput r\n", &out));
    assert_int_equal(tr_rows(out, rows), 8);
    assert_string_equal(rows[0], "b|x|19000|150|9000000000000000000|1|1.5|255");
    assert_string_equal(rows[7], "a|y|19001|250|5|0|nan|1");
    sl_table_unref(out);
    SL_ASSERT_OK(tr_run(e, t, "a = scan.table name=t\nr = sort.topk(a) keys=u8 limit=0\n"
                        "output r\n", &out));
    assert_int_equal(sl_table_num_rows(out), 0);
    sl_table_unref(out);
    assert_int_equal(tr_run(e, t, "a = scan.table name=t\nr = sort.topk(a) keys=u8 limit=-1\n"
                            "output r\n", &out), SL_EINVAL);
    sl_table_unref(t);
    sl_engine_close(e);
    tt_assert_no_leaks();
}

/* date32, decimal(p <= 18) and timestamp columns take the radix sort (as integers). */
SL_TEST(sort_radix_dates_decimals)
{
    const char *names[] = {"dt", "p", "w"};
    const enum sl_type types[] = {SL_TYPE_DATE32, sl_type_decimal(15, 2), SL_TYPE_TIMESTAMP};
    const char *const *cols[] = {tt_dt, tt_p, tt_w};
    static const char *const by_dt[] = {
        "19002|NULL|-7", "19001|2|2", "19001|250|5", "19000|-100|9000000000000000000",
        "19000|3|3", "19000|150|9000000000000000000", "18999|1|1", "NULL|999|NULL"};
    static const char *const by_p[] = {
        "NULL|19002|-7", "-100|19000|9000000000000000000", "1|18999|1", "2|19001|2",
        "3|19000|3", "150|19000|9000000000000000000", "250|19001|5", "999|NULL|NULL"};
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = tt_engine(th, 2);
        sl_table_t *t = tr_table(3, names, types, cols, TT_ROWS);
        tr_expect(e, t, "a = scan.table name=t\nr = sort(a) by=\"dt DESC NULLS LAST, p NULLS "
                  "FIRST\"\noutput r\n", by_dt, 8, 1);
        sl_table_unref(t);
        const char *names2[] = {"p", "dt", "w"};
        const enum sl_type types2[] = {sl_type_decimal(15, 2), SL_TYPE_DATE32, SL_TYPE_TIMESTAMP};
        const char *const *cols2[] = {tt_p, tt_dt, tt_w};
        t = tr_table(3, names2, types2, cols2, TT_ROWS);
        tr_expect(e, t, "a = scan.table name=t\nr = sort(a) by=\"p NULLS FIRST\"\noutput r\n",
                  by_p, 8, 1);
        sl_table_unref(t);
        sl_engine_close(e);
    }
    tt_assert_no_leaks();
}
