/* Tests predicates pushed into the scans (where= on scan.bin and scan.csv): the rows kept
 * equal a reference filter, over many morsels, and a bad predicate is a bind error that
 * names the option. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "sl_test.h"

static void assert_no_leaks(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

static sl_engine_t *engine(int64_t morsel)
{
    return sl_test_cpu_engine(2, morsel);
}

static int run_text(sl_engine_t *e, const char *text, int64_t *count, int64_t *sum)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int rc = sl_plan_parse(p, text, "where.plan");
    sl_query_t *q = NULL;
    if (rc == SL_OK)
        rc = sl_query_create(e, p, &q);
    if (rc == SL_OK)
        rc = sl_query_run(q);
    if (rc == SL_OK && count) {
        sl_table_t *t;
        SL_ASSERT_OK(sl_query_result(q, "r", &t));
        struct sl_column c;
        sl_batch_column(sl_table_batch(t, 0), 0, &c);
        *count = ((const int64_t *)c.data)[c.offset];
        sl_batch_column(sl_table_batch(t, 0), 1, &c);
        *sum = ((const int64_t *)c.data)[c.offset];
        sl_table_unref(t);
    }
    if (rc != SL_OK)
        sl__set_last_error(rc, "%s", sl_plan_errmsg(p));
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return rc;
}

SL_TEST(where_pushed_into_scans_matches_reference)
{
    sl_engine_t *e = engine(1000);
    char bin[] = "/tmp/sl_where_XXXXXX", csv[64], text[1024];
    int fd = mkstemp(bin);
    assert_true(fd >= 0);
    close(fd);
    snprintf(csv, sizeof csv, "%s.csv", bin);
    const int64_t n = 25007;
    snprintf(text, sizeof text,
             "s = gen.sequence rows=%lld start=-500 column=x\nw = write.bin(s) path=%s\n", (long long)n, bin);
    SL_ASSERT_OK(run_text(e, text, NULL, NULL));
    snprintf(text, sizeof text,
             "s = gen.sequence rows=%lld start=-500 column=x\nw = write.csv(s) path=%s\n", (long long)n, csv);
    SL_ASSERT_OK(run_text(e, text, NULL, NULL));
    const char *preds[] = {"x % 3 = 0 AND x > 100", "x < 0", "x > 1000000", "x >= -500",
                           "x IN (1, 2, 3, 24000, -7)"};
    for (size_t k = 0; k < sizeof preds / sizeof preds[0]; k++) {
        int64_t rc = 0, rs = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t x = -500 + i;
            bool keep = k == 0 ? (x % 3 == 0 && x > 100) : k == 1 ? x < 0 : k == 2 ? x > 1000000
                        : k == 3 ? x >= -500 : (x == 1 || x == 2 || x == 3 || x == 24000 || x == -7);
            if (keep)
                rc++, rs += x;
        }
        for (int fmt = 0; fmt < 2; fmt++) {
            snprintf(text, sizeof text,
                     fmt == 0 ? "f = scan.bin path=%s where=\"%s\"\n" :
                                "f = scan.csv path=%s columns=\"x int64\" where=\"%s\"\n",
                     fmt == 0 ? bin : csv, preds[k]);
            strcat(text, "a = aggregate.sum(f) column=x\noutput a as r\n");
            int64_t cnt = -1, sum = -1;
            SL_ASSERT_OK(run_text(e, text, &cnt, &sum));
            if (cnt != rc || (rc > 0 && sum != rs))
                fail_msg("%s where \"%s\": count %lld sum %lld, expected %lld %lld",
                         fmt ? "csv" : "bin", preds[k], (long long)cnt, (long long)sum,
                         (long long)rc, (long long)rs);
        }
    }
    unlink(bin);
    unlink(csv);
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(bad_where_is_a_bind_error)
{
    sl_engine_t *e = engine(1000);
    char bin[] = "/tmp/sl_where_XXXXXX", text[512];
    int fd = mkstemp(bin);
    close(fd);
    snprintf(text, sizeof text, "s = gen.sequence rows=10 column=x\nw = write.bin(s) path=%s\n", bin);
    SL_ASSERT_OK(run_text(e, text, NULL, NULL));
    const char *bad[][2] = {{"y > 3", "where:"}, {"x +", "where:"}, {"x + 1", "not a condition"}};
    for (int k = 0; k < 3; k++) {
        snprintf(text, sizeof text, "f = scan.bin path=%s where=\"%s\"\noutput f as r\n", bin, bad[k][0]);
        int rc = run_text(e, text, NULL, NULL);
        assert_true(rc < 0);
        if (!strstr(sl_last_errmsg(), bad[k][1]))
            fail_msg("\"%s\": %s", bad[k][0], sl_last_errmsg());
    }
    unlink(bin);
    sl_engine_close(e);
    assert_no_leaks();
}
