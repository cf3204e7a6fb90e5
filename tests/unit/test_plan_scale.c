/* Tests that plan processing is linear in the number of nodes (issue 22): plans of
 * 77,000 nodes, a long chain and a wide fan-in, parse, explain and run within a bound.
 * A time bound in a test is acceptable here only because the two behaviours differ by
 * 100x: quadratic passes (name lookups, consumer counts, pipelines into a sink) took
 * 51 s for the explain alone and minutes in all, linear ones take seconds. The bound is
 * on the process's CPU time, not the wall clock, and generous (30 s), so that sanitizer
 * builds and a loaded machine pass. The chain also proves that a long chain no longer
 * overflows a worker's stack (it is cut into pipelines of at most 512 stages). It is
 * of projections: a filter's state is larger (77,000 filters take 1.3 GB), which is
 * the operator's cost, not the plan's. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sl_test.h"

#include <sluice/sluice.h>

/* ThreadSanitizer's own allocator ran out on a 77,000-filter chain (its memory for
 * every lock and atomic the operators' states make); under it the plans are 10x smaller,
 * which still cuts chains and checks the results (the time is checked elsewhere). */
#ifdef SL_TEST_UNDER_TSAN
#define SCALE 10
#else
#define SCALE 1
#endif
#define N_NODES (77000 / SCALE)
#define BOUND_CPU_MS 30000

/* CPU time of the whole process (the workers' too). */
static int64_t cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct text {
    char *s;
    size_t len, cap;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct text *t, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if ((size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        t->cap = t->cap * 2 + 4096;
        t->s = realloc(t->s, t->cap);
        assert_non_null(t->s);
        t->s[t->len] = 0;
    }
}

/* Parses, explains and runs `text`; returns the number of rows of output "r" (and the
 * first int64 value of its column `col` in *first). */
static int64_t run_timed(const char *what, char *text, int col, int64_t *first)
{
    sl_engine_t *e = sl_test_cpu_engine(2, 0);
    int64_t t0 = cpu_ms();
    sl_plan_t *p = sl_test_plan_parse(text);
    int64_t t1 = cpu_ms();
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    const char *json = sl_query_explain_json(q);
    assert_non_null(strstr(json, "\"pipelines\""));
    int64_t t2 = cpu_ms();
    SL_ASSERT_OK(sl_query_run(q));
    int64_t t3 = cpu_ms();
    printf("%s, CPU time: parse %lld ms, create + explain %lld ms, run %lld ms\n", what,
           (long long)(t1 - t0), (long long)(t2 - t1), (long long)(t3 - t2));
    assert_true(t3 - t0 < BOUND_CPU_MS);
    sl_table_t *t;
    SL_ASSERT_OK(sl_query_result(q, "r", &t));
    int64_t rows = sl_table_num_rows(t);
    struct sl_column c;
    SL_ASSERT_OK(sl_batch_column(sl_table_batch(t, 0), col, &c));
    *first = ((const int64_t *)c.data)[c.offset];
    sl_table_unref(t);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_engine_close(e);
    return rows;
}

SL_TEST(chain_of_77000_nodes_is_linear)
{
    struct text t = {0};
    add(&t, "n0 = gen.sequence rows=1000\n");
    for (int i = 1; i < N_NODES - 1; i++)
        add(&t, "n%d = project(n%d) columns=\"x\"\n", i, i - 1);
    add(&t, "s = aggregate.sum(n%d) column=x\noutput s as r\n", N_NODES - 2);
    int64_t sum = 0;
    assert_int_equal(run_timed("chain", t.s, 1, &sum), 1);
    assert_int_equal(sum, 499500);
    free(t.s);
}

/* 75,776 sources merged by a tree of 16-input merges (the parser's most; 5,054 more
 * nodes). */
SL_TEST(fan_in_of_77000_nodes_is_linear)
{
    struct text t = {0};
    int n = 16 * 4736 / SCALE, level = 0;
    for (int i = 0; i < n; i++)
        add(&t, "l0_%d = gen.sequence rows=2 start=%d\n", i, i);
    while (n > 1) {
        int m = (n + 15) / 16;
        for (int j = 0; j < m; j++) {
            add(&t, "l%d_%d = merge(", level + 1, j);
            for (int k = j * 16; k < n && k < (j + 1) * 16; k++)
                add(&t, "%sl%d_%d", k == j * 16 ? "" : ", ", level, k);
            add(&t, ") by=x\n");
        }
        n = m;
        level++;
    }
    add(&t, "output l%d_0 as r\n", level);
    int64_t first = -1;
    assert_int_equal(run_timed("fan-in", t.s, 0, &first), 2 * (16 * 4736 / SCALE));
    assert_int_equal(first, 0);
    free(t.s);
}
