/* Tests the ready-made workload plans (plans/workloads.c): each, built with the C API at
 * the size of its plan file, gives the same results as plans/files/<name>.plan (row
 * count and per-column sums), and the results are right where a plain fact says so
 * (every foreign key matches, 25% match ratio, group counts add up, sorted order). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plans.h"
#include "sl_test.h"

#define ROWS (1 << 20)

struct summary {
    int64_t rows;
    int n_cols;
    double sums[32];   /* per column; integers summed exactly while below 2^53 */
    bool sorted_first; /* column 0 non-decreasing */
};

static void summarize(sl_table_t *t, struct summary *s)
{
    memset(s, 0, sizeof *s);
    s->sorted_first = true;
    double prev = -INFINITY;
    for (int64_t b = 0; b < sl_table_num_batches(t); b++) {
        sl_batch_t *batch = sl_table_batch(t, b);
        s->n_cols = sl_batch_num_columns(batch);
        assert_true(s->n_cols <= 32);
        for (int c = 0; c < s->n_cols; c++) {
            struct sl_column col;
            SL_ASSERT_OK(sl_batch_column(batch, c, &col));
            for (int64_t i = 0; i < col.length; i++) {
                int64_t r = col.offset + i;
                if (col.validity && !(col.validity[r >> 3] >> (r & 7) & 1))
                    continue;
                double v = col.type == SL_TYPE_INT32   ? ((const int32_t *)col.data)[r]
                           : col.type == SL_TYPE_INT64 ? (double)((const int64_t *)col.data)[r]
                           : col.type == SL_TYPE_FLOAT32 ? ((const float *)col.data)[r]
                                                         : ((const double *)col.data)[r];
                s->sums[c] += v;
                if (c == 0) {
                    s->sorted_first &= v >= prev;
                    prev = v;
                }
            }
        }
        s->rows += sl_batch_num_rows(batch);
    }
}

static void run_output(sl_engine_t *e, sl_plan_t *p, const char *out, struct summary *s)
{
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    if (sl_query_run(q) != SL_OK)
        fail_msg("query failed: %s", sl_query_errmsg(q));
    sl_table_t *t;
    SL_ASSERT_OK(sl_query_result(q, out, &t));
    summarize(t, s);
    sl_table_unref(t);
    sl_query_destroy(q);
}

/* Builds the plan with `build`, and from plans/files/<file>, runs both, compares. */
static void compare(int (*build)(sl_plan_t *, const char *, int64_t), const char *workload,
                    int64_t rows, const char *file, const char *out, struct summary *s)
{
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, NULL));
    sl_plan_t *pc, *pf;
    SL_ASSERT_OK(sl_plan_create(&pc));
    SL_ASSERT_OK(sl_plan_create(&pf));
    if (build(pc, workload, rows) != SL_OK)
        fail_msg("building %s: %s", file, sl_plan_errmsg(pc));
    char path[512];
    snprintf(path, sizeof path, "%s/%s", SL_PLANS_DIR, file);
    if (sl_plan_parse(pf, sl_test_read_text(path), path) != SL_OK)
        fail_msg("%s", sl_plan_errmsg(pf));
    struct summary sf;
    run_output(e, pc, out, s);
    run_output(e, pf, out, &sf);
    assert_int_equal(s->rows, sf.rows);
    assert_int_equal(s->n_cols, sf.n_cols);
    for (int c = 0; c < s->n_cols; c++)
        if (fabs(s->sums[c] - sf.sums[c]) > 1e-9 * fabs(sf.sums[c]))
            fail_msg("%s column %d: C plan sums to %.17g, plan file to %.17g", file, c,
                     s->sums[c], sf.sums[c]);
    sl_plan_destroy(pc);
    sl_plan_destroy(pf);
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    sl_engine_mem_stats(e, &ms);
    assert_int_equal(ms.host_in_use, 0);
    sl_engine_close(e);
}

/* Adapters to one signature. */
static int star(sl_plan_t *p, const char *w, int64_t n) { (void)w; return sl_plans_star_join(p, n); }
static int groupby(sl_plan_t *p, const char *w, int64_t n) { (void)w; return sl_plans_groupby(p, n); }
static int sort_(sl_plan_t *p, const char *w, int64_t n) { (void)w; return sl_plans_sort(p, n); }
static int kmeans(sl_plan_t *p, const char *w, int64_t n) { (void)w; return sl_plans_kmeans(p, n); }

SL_TEST(join_narrow)
{
    struct summary s;
    compare(sl_plans_join, "narrow", ROWS, "join_narrow.plan", "joined", &s);
    assert_int_equal(s.rows, ROWS); /* every foreign key has its primary key */
    assert_int_equal(s.n_cols, 3);
}

SL_TEST(join_wide)
{
    struct summary s;
    compare(sl_plans_join, "wide", ROWS, "join_wide.plan", "joined", &s);
    assert_int_equal(s.rows, ROWS);
    assert_int_equal(s.n_cols, 5);
}

SL_TEST(join_skew)
{
    struct summary s;
    compare(sl_plans_join, "skew", ROWS, "join_skew.plan", "joined", &s);
    assert_int_equal(s.rows, ROWS);
}

SL_TEST(join_match_ratio)
{
    struct summary s;
    compare(sl_plans_join, "match_ratio", ROWS, "join_match_ratio.plan", "joined", &s);
    assert_true(s.rows > ROWS / 5 && s.rows < ROWS * 3 / 10);
}

SL_TEST(join_8byte)
{
    struct summary s;
    compare(sl_plans_join, "8byte", ROWS, "join_8byte.plan", "joined", &s);
    assert_int_equal(s.rows, ROWS);
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    assert_int_equal(sl_plans_join(p, "nope", 10), SL_ENOTFOUND);
    sl_plan_destroy(p);
}

SL_TEST(star_join)
{
    struct summary s;
    compare(star, NULL, ROWS, "star_join.plan", "star", &s);
    assert_int_equal(s.rows, 1);
    assert_true(s.sums[0] == ROWS); /* count: every fact row finds all three dimensions */
}

SL_TEST(groupby)
{
    struct summary s;
    compare(groupby, NULL, ROWS, "groupby.plan", "groupby", &s);
    assert_int_equal(s.rows, 1000);
    assert_true(s.sums[1] == ROWS); /* the counts add up to the rows */
}

SL_TEST(sort)
{
    struct summary s;
    compare(sort_, NULL, ROWS, "sort.plan", "sorted", &s);
    assert_int_equal(s.rows, ROWS);
    assert_true(s.sorted_first);
}

SL_TEST(kmeans)
{
    struct summary s;
    compare(kmeans, NULL, 1 << 18, "kmeans.plan", "centroids", &s);
    assert_int_equal(s.rows, 16);
}

static int seqsum(sl_plan_t *p, const char *w, int64_t n) { (void)w; return sl_plans_sequence_sum(p, n); }
static int demo(sl_plan_t *p, const char *w, int64_t n) { (void)w; return sl_plans_demo(p, n); }

SL_TEST(sequence_sum)
{
    struct summary s;
    compare(seqsum, NULL, ROWS, "sequence_sum.plan", "result", &s);
    assert_int_equal(s.rows, 1);
    assert_true(s.sums[0] == ROWS);
    assert_true(s.sums[1] == (double)ROWS * (ROWS - 1) / 2);
}

/* The demo's three outputs (plans/demo.c against plans/files/demo.plan). */
SL_TEST(demo)
{
    struct summary s;
    compare(demo, NULL, ROWS, "demo.plan", "join", &s);
    assert_int_equal(s.rows, 1);
    assert_true(s.sums[0] == ROWS); /* count: every fact row finds its key */
    compare(demo, NULL, ROWS, "demo.plan", "groupby", &s);
    assert_int_equal(s.rows, 1000);
    assert_true(s.sums[1] == ROWS);
    compare(demo, NULL, ROWS, "demo.plan", "kmeans", &s);
    assert_int_equal(s.rows, 16);
}
