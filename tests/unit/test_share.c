/* Shared nodes (runtime/share.c): a node feeding two or three consumers (a self-join's
 * two sides; an aggregate, a filter and an output of one node; shared nodes over shared
 * nodes) gives the rows of the same plan with the node written once per consumer, is
 * computed once (its profile rows), lets its kept rows go when its last reader is done,
 * fails cleanly under a small host budget or failing allocations, can be cancelled, and
 * shows in explain, the profile and the trace. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "sl_test.h"
#include "typed_rows.h"

static void assert_no_leaks(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

static sl_engine_t *open_engine(int threads, int64_t morsel, int64_t host_mem)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = threads;
    cfg.morsel_rows_cpu = morsel;
    cfg.n_gpus = 0;
    cfg.host_mem_limit = host_mem;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    return e;
}

/* Every row of t as "cell|cell|..." (heap strings), in table order. */
static char **table_rows(const sl_table_t *t, int64_t *n_out)
{
    int64_t n = sl_table_num_rows(t), at = 0;
    char **rows = calloc((size_t)(n ? n : 1), sizeof *rows);
    assert_non_null(rows);
    for (int64_t k = 0; k < sl_table_num_batches(t); k++) {
        const sl_batch_t *b = sl_table_batch(t, k);
        for (int64_t r = 0; r < sl_batch_num_rows(b); r++) {
            char row[256] = "", cell[64];
            for (int c = 0; c < sl_batch_num_columns(b); c++) {
                tr_cell(b, c, r, cell, sizeof cell);
                strcat(row, c ? "|" : "");
                strcat(row, cell);
            }
            rows[at] = strdup(row);
            assert_non_null(rows[at++]);
        }
    }
    assert_int_equal(at, n);
    *n_out = n;
    return rows;
}

static void free_rows(char **rows, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        free(rows[i]);
    free(rows);
}

/* Asserts that tables a and b hold the same rows: in the same order if `ordered`, else
 * as multisets. */
static void assert_same_rows(const char *what, const sl_table_t *a, const sl_table_t *b,
                             bool ordered)
{
    int64_t na, nb;
    char **ra = table_rows(a, &na), **rb = table_rows(b, &nb);
    if (!ordered) {
        qsort(ra, (size_t)na, sizeof *ra, tr_cmp_str);
        qsort(rb, (size_t)nb, sizeof *rb, tr_cmp_str);
    }
    if (na != nb)
        fail_msg("%s: %lld rows, the reference has %lld", what, (long long)na, (long long)nb);
    for (int64_t i = 0; i < na; i++)
        if (strcmp(ra[i], rb[i]))
            fail_msg("%s: row %lld is '%s', the reference's '%s'", what, (long long)i, ra[i],
                     rb[i]);
    free_rows(ra, na);
    free_rows(rb, nb);
}

/* rows_out of the profile entries of plan node `node` running operator `op` (summed:
 * a shared node has a reader per consumer); -1 if none. */
static long long profile_rows_out(const char *prof, int node, const char *op)
{
    char key[96];
    snprintf(key, sizeof key, "{\"node\":%d,\"op\":\"%s\"", node, op);
    long long sum = -1, rows;
    for (const char *at = strstr(prof, key); at; at = strstr(at + 1, key)) {
        assert_int_equal(sscanf(strstr(at, "\"rows_out\":"), "\"rows_out\":%lld", &rows), 1);
        sum = (sum < 0 ? 0 : sum) + rows;
    }
    return sum;
}

struct run {
    sl_plan_t *plan;
    sl_query_t *q;
};

/* Parses and runs plan text; the caller reads results and calls run_end. */
static int run_text(sl_engine_t *e, const char *text, struct run *r)
{
    r->plan = sl_test_plan_parse(text);
    r->q = NULL;
    int rc = sl_query_create(e, r->plan, &r->q);
    return rc == SL_OK ? sl_query_run(r->q) : rc;
}

static void run_end(struct run *r)
{
    sl_query_destroy(r->q);
    sl_plan_destroy(r->plan);
}

static sl_table_t *result(struct run *r, const char *name)
{
    sl_table_t *t;
    SL_ASSERT_OK(sl_query_result(r->q, name, &t));
    return t;
}

/* A plan whose `rows`-row sequence (x = 0, 1, ...) is read by two sums, s1 and s2; with
 * `shared` false the sequence is written once per sum (the reference). */
static const char *two_sums(char *buf, size_t cap, long long rows, bool shared)
{
    char b[96] = "";
    if (!shared)
        snprintf(b, sizeof b, "b = gen.sequence rows=%lld column=x\n", rows);
    snprintf(buf, cap,
             "a = gen.sequence rows=%lld column=x\n%s"
             "s1 = aggregate.sum(a) column=x\n"
             "s2 = aggregate.sum(%s) column=x\n"
             "output s1 as s1\noutput s2 as s2\n",
             rows, b, shared ? "a" : "b");
    return buf;
}

/* Asserts that both sums of a two_sums run are those of 0..rows-1. */
static void assert_two_sums(struct run *r, long long rows)
{
    char want[64], cell[64];
    snprintf(want, sizeof want, "%lld", rows * (rows - 1) / 2);
    for (int k = 0; k < 2; k++) {
        sl_table_t *t = result(r, k ? "s2" : "s1");
        tr_cell(sl_table_batch(t, 0), 1, 0, cell, sizeof cell);
        assert_string_equal(cell, want);
        sl_table_unref(t);
    }
}

/* Runs `shared` and `reference` (the same plan with the shared node written once per
 * consumer) and compares outputs names[0..n); ordered[i] says whether row order counts.
 * Returns the shared run's profile rows_out of node `node` (operator `op`). */
static long long compare_plans(sl_engine_t *e, const char *shared, const char *reference,
                               const char *const *names, const bool *ordered, int n, int node,
                               const char *op)
{
    struct run s, ref;
    SL_ASSERT_OK(run_text(e, shared, &s));
    SL_ASSERT_OK(run_text(e, reference, &ref));
    for (int i = 0; i < n; i++) {
        sl_table_t *a = result(&s, names[i]), *b = result(&ref, names[i]);
        assert_true(sl_table_num_rows(b) > 0);
        assert_same_rows(names[i], a, b, ordered[i]);
        sl_table_unref(a);
        sl_table_unref(b);
    }
    long long rows = profile_rows_out(sl_query_profile_json(s.q), node, op);
    run_end(&s);
    run_end(&ref);
    return rows;
}

static const int threads[] = {1, 2, 4};
static const int64_t morsels[] = {1000, 777, 122880};

/* Two consumers, built with the C API: both sides of a self-join, and an output of the
 * same node under two names. */
SL_TEST(self_join_two_consumers_c_api)
{
    for (int v = 0; v < 3; v++) {
        sl_engine_t *e = open_engine(threads[v], morsels[v], 0);
        sl_plan_t *p, *ref;
        int a, j, a1, a2, jr;
        const char *gen = "rows=20000 kind=m2m distinct=5000 seed=3 payloads=1 column=k";
        SL_ASSERT_OK(sl_plan_create(&p));
        SL_ASSERT_OK(sl_plan_add(p, "gen.keys", NULL, 0, gen, &a));
        SL_ASSERT_OK(sl_plan_add(p, "join", (int[]){a, a}, 2, "on=k", &j));
        SL_ASSERT_OK(sl_plan_output(p, j, "r"));
        SL_ASSERT_OK(sl_plan_output(p, a, "raw"));
        SL_ASSERT_OK(sl_plan_output(p, a, "raw2"));
        SL_ASSERT_OK(sl_plan_create(&ref));
        SL_ASSERT_OK(sl_plan_add(ref, "gen.keys", NULL, 0, gen, &a1));
        SL_ASSERT_OK(sl_plan_add(ref, "gen.keys", NULL, 0, gen, &a2));
        SL_ASSERT_OK(sl_plan_add(ref, "join", (int[]){a1, a2}, 2, "on=k", &jr));
        SL_ASSERT_OK(sl_plan_output(ref, jr, "r"));
        SL_ASSERT_OK(sl_plan_output(ref, a1, "raw"));
        sl_query_t *q, *qr;
        SL_ASSERT_OK(sl_query_create(e, p, &q));
        SL_ASSERT_OK(sl_query_run(q));
        SL_ASSERT_OK(sl_query_create(e, ref, &qr));
        SL_ASSERT_OK(sl_query_run(qr));
        sl_table_t *r, *rr, *raw, *raw2, *rawr;
        SL_ASSERT_OK(sl_query_result(q, "r", &r));
        SL_ASSERT_OK(sl_query_result(qr, "r", &rr));
        assert_true(sl_table_num_rows(rr) > 20000);
        assert_same_rows("self-join", r, rr, false);
        SL_ASSERT_OK(sl_query_result(q, "raw", &raw));
        SL_ASSERT_OK(sl_query_result(q, "raw2", &raw2));
        SL_ASSERT_OK(sl_query_result(qr, "raw", &rawr));
        assert_same_rows("raw", raw, rawr, true); /* in generation order */
        assert_same_rows("raw2", raw2, rawr, true);
        /* Computed once: the generator made its rows once for four consumers. */
        assert_int_equal(profile_rows_out(sl_query_profile_json(q), a, "gen.keys"), 20000);
        sl_table_unref(r);
        sl_table_unref(rr);
        sl_table_unref(raw);
        sl_table_unref(raw2);
        sl_table_unref(rawr);
        sl_query_destroy(q);
        sl_query_destroy(qr);
        sl_plan_destroy(p);
        sl_plan_destroy(ref);
        sl_engine_close(e);
    }
    assert_no_leaks();
}

/* Three consumers: an aggregate and a filter of one node, joined, and an output of it. */
SL_TEST(aggregate_filter_and_output_of_one_node)
{
    const char *shared =
        "a = gen.keys rows=30000 kind=m2m distinct=300 seed=5 payloads=1 column=k\n"
        "s = aggregate(a) keys=k aggs=\"count(*), sum(p1)\"\n"
        "f = filter(a) where=\"p1 % 3 = 0\"\n"
        "j = join(f, s) on=k\n"
        "output j as r\n"
        "output a as raw\n";
    const char *reference =
        "a = gen.keys rows=30000 kind=m2m distinct=300 seed=5 payloads=1 column=k\n"
        "a2 = gen.keys rows=30000 kind=m2m distinct=300 seed=5 payloads=1 column=k\n"
        "a3 = gen.keys rows=30000 kind=m2m distinct=300 seed=5 payloads=1 column=k\n"
        "s = aggregate(a2) keys=k aggs=\"count(*), sum(p1)\"\n"
        "f = filter(a3) where=\"p1 % 3 = 0\"\n"
        "j = join(f, s) on=k\n"
        "output j as r\n"
        "output a as raw\n";
    const char *names[] = {"r", "raw"};
    const bool ordered[] = {false, true};
    for (int v = 0; v < 3; v++) {
        sl_engine_t *e = open_engine(threads[v], morsels[v], 0);
        assert_int_equal(compare_plans(e, shared, reference, names, ordered, 2, 0, "gen.keys"),
                         30000);
        sl_engine_close(e);
    }
    assert_no_leaks();
}

/* Shared nodes of every kind: a stream node (filter) over a shared source, a sink that
 * is a source (aggregate) shared by a join and another aggregate, each computed once. */
SL_TEST(shared_nodes_over_shared_nodes)
{
    const char *shared =
        "a = gen.keys rows=25000 kind=m2m distinct=2000 seed=7 payloads=1 column=k\n"
        "f = filter(a) where=\"p1 % 2 = 0\"\n"
        "g = aggregate(a) keys=k aggs=\"sum(p1)\"\n"
        "h = join(f, g) on=k\n"
        "c = aggregate(f) aggs=\"count(*)\"\n"
        "d = aggregate(g) aggs=\"count(*), sum(sum_p1)\"\n"
        "output h as r\n"
        "output c as c\n"
        "output d as d\n"
        "output f as evens\n";
    const char *reference =
        "a1 = gen.keys rows=25000 kind=m2m distinct=2000 seed=7 payloads=1 column=k\n"
        "a2 = gen.keys rows=25000 kind=m2m distinct=2000 seed=7 payloads=1 column=k\n"
        "a3 = gen.keys rows=25000 kind=m2m distinct=2000 seed=7 payloads=1 column=k\n"
        "a4 = gen.keys rows=25000 kind=m2m distinct=2000 seed=7 payloads=1 column=k\n"
        "a5 = gen.keys rows=25000 kind=m2m distinct=2000 seed=7 payloads=1 column=k\n"
        "f1 = filter(a1) where=\"p1 % 2 = 0\"\n"
        "f2 = filter(a2) where=\"p1 % 2 = 0\"\n"
        "f3 = filter(a3) where=\"p1 % 2 = 0\"\n"
        "g1 = aggregate(a4) keys=k aggs=\"sum(p1)\"\n"
        "g2 = aggregate(a5) keys=k aggs=\"sum(p1)\"\n"
        "h = join(f1, g1) on=k\n"
        "c = aggregate(f2) aggs=\"count(*)\"\n"
        "d = aggregate(g2) aggs=\"count(*), sum(sum_p1)\"\n"
        "output h as r\n"
        "output c as c\n"
        "output d as d\n"
        "output f3 as evens\n";
    const char *names[] = {"r", "c", "d", "evens"};
    const bool ordered[] = {false, true, true, true};
    for (int v = 0; v < 3; v++) {
        sl_engine_t *e = open_engine(threads[v], morsels[v], 0);
        assert_int_equal(compare_plans(e, shared, reference, names, ordered, 4, 0, "gen.keys"),
                         25000);
        struct run s;
        SL_ASSERT_OK(run_text(e, shared, &s));
        const char *prof = sl_query_profile_json(s.q);
        /* The shared filter and aggregate made their rows once: as many as one copy of
         * them gives (the evens; d's count of groups). */
        sl_table_t *evens = result(&s, "evens"), *d = result(&s, "d");
        char groups[64];
        tr_cell(sl_table_batch(d, 0), 0, 0, groups, sizeof groups);
        assert_int_equal(profile_rows_out(prof, 1, "filter"), sl_table_num_rows(evens));
        assert_int_equal(profile_rows_out(prof, 2, "aggregate"), atoll(groups));
        assert_true(atoll(groups) > 1000);
        sl_table_unref(evens);
        sl_table_unref(d);
        run_end(&s);
        sl_engine_close(e);
    }
    assert_no_leaks();
}

/* One plan, several queries at once: each has its own keeper and readers. */
SL_TEST(one_plan_three_queries_at_once)
{
    sl_engine_t *e = open_engine(4, 5000, 0);
    char text[512];
    sl_plan_t *p = sl_test_plan_parse(two_sums(text, sizeof text, 200000, true));
    sl_query_t *q[3];
    for (int i = 0; i < 3; i++) {
        SL_ASSERT_OK(sl_query_create(e, p, &q[i]));
        SL_ASSERT_OK(sl_query_start(q[i]));
    }
    for (int i = 0; i < 3; i++) {
        SL_ASSERT_OK(sl_query_wait(q[i]));
        struct run r = {p, q[i]};
        assert_two_sums(&r, 200000);
        sl_query_destroy(q[i]);
    }
    sl_plan_destroy(p);
    sl_engine_close(e);
    assert_no_leaks();
}

/* The kept rows go when the last reader is done, not when the query is destroyed: after
 * the run, the budget holds only what the outputs hold. */
SL_TEST(kept_rows_freed_after_last_reader)
{
    sl_engine_t *e = open_engine(2, 100000, 0);
    char text[512];
    struct run r;
    SL_ASSERT_OK(run_text(e, two_sums(text, sizeof text, 1000000, true), &r));
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    SL_ASSERT_OK(sl_engine_mem_stats(e, &ms));
    assert_true(ms.host_peak >= 8000000); /* all rows were kept at once */
    assert_true(ms.host_in_use < 1000000);
    assert_two_sums(&r, 1000000);
    run_end(&r);
    sl_engine_close(e);
    assert_no_leaks();
}

/* Kept rows count in the host budget: what streams through 4 MiB fails when 16 MB must
 * be kept, with SL_EBUDGET, and the engine runs the next queries. */
SL_TEST(small_host_budget_fails_cleanly)
{
    sl_test_config_off(1); /* the budget is this case's own */
    sl_engine_t *e = open_engine(2, 65536, 4 << 20);
    char text[512];
    struct run r;
    assert_int_equal(run_text(e, two_sums(text, sizeof text, 2000000, true), &r), SL_EBUDGET);
    assert_non_null(strstr(sl_query_errmsg(r.q), "budget"));
    run_end(&r);
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    SL_ASSERT_OK(sl_engine_mem_stats(e, &ms));
    assert_int_equal(ms.host_in_use, 0);
    SL_ASSERT_OK(run_text(e, two_sums(text, sizeof text, 2000000, false), &r));
    assert_two_sums(&r, 2000000);
    run_end(&r);
    /* A shared node whose rows fit runs on the same engine. */
    SL_ASSERT_OK(run_text(e, two_sums(text, sizeof text, 100000, true), &r));
    assert_two_sums(&r, 100000);
    run_end(&r);
    sl_engine_close(e);
    assert_no_leaks();
}

/* Batches an operator made outside the budget (an aggregate's groups: 16 MB) count in
 * it once a shared node keeps them, until the last reader is done; with a budget that
 * holds everything but them, the keeper fails, naming the shared node. One thread, so
 * that the aggregate's own state is the same in both runs. */
SL_TEST(kept_rows_made_outside_the_budget_count_in_it)
{
    sl_test_config_off(1); /* the budget is this case's own */
    const char *text = "a = gen.sequence rows=1000000 column=x\n"
                       "p = aggregate(a) keys=x aggs=\"count(*)\"\n"
                       "s1 = aggregate.sum(p) column=x\n"
                       "s2 = aggregate.sum(p) column=x\n"
                       "output s1 as s1\n"
                       "output s2 as s2\n";
    sl_engine_t *e = open_engine(1, 65536, 0);
    struct run r;
    SL_ASSERT_OK(run_text(e, text, &r));
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    SL_ASSERT_OK(sl_engine_mem_stats(e, &ms));
    int64_t peak = ms.host_peak;
    assert_true(peak - ms.host_in_use >= 15000000); /* counted, then given back */
    run_end(&r);
    sl_engine_close(e);
    e = open_engine(1, 65536, peak - 8000000);
    assert_int_equal(run_text(e, text, &r), SL_EBUDGET);
    assert_non_null(strstr(sl_query_errmsg(r.q), "shared rows of node 1"));
    run_end(&r);
    SL_ASSERT_OK(sl_engine_mem_stats(e, &ms));
    assert_int_equal(ms.host_in_use, 0);
    sl_engine_close(e);
    assert_no_leaks();
}

/* Cancelling while the shared node's readers run (one task per row): the query stops
 * with SL_ECANCELED, nothing leaks, and the engine runs the plan again. */
SL_TEST(cancel_while_readers_run)
{
    sl_test_config_off(1); /* the task counts waited for are those of one-row morsels */
    sl_engine_t *e = open_engine(2, 1, 0);
    char text[512];
    two_sums(text, sizeof text, 100000, true);
    for (int late = 0; late < 2; late++) {
        sl_plan_t *p = sl_test_plan_parse(text);
        sl_query_t *q;
        SL_ASSERT_OK(sl_query_create(e, p, &q));
        SL_ASSERT_OK(sl_query_start(q));
        struct sl_progress pr = SL_PROGRESS_INIT;
        do {
            sl_query_progress(q, &pr);
        } while (pr.tasks_done < (late ? 120000 : 100));
        sl_query_cancel(q);
        assert_int_equal(sl_query_wait(q), SL_ECANCELED);
        const char *prof = sl_query_profile_json(q);
        long long gen_rows = profile_rows_out(prof, 0, "gen.sequence");
        long long read = profile_rows_out(prof, 0, "core.share_read");
        if (late) { /* the generator had finished; a reader had started */
            assert_int_equal(gen_rows, 100000);
            assert_true(read > 0 && read < 200000);
        } else {
            assert_true(gen_rows >= 90 && gen_rows < 100000);
        }
        sl_query_destroy(q);
        sl_plan_destroy(p);
    }
    struct run r;
    SL_ASSERT_OK(run_text(e, text, &r));
    assert_two_sums(&r, 100000);
    run_end(&r);
    sl_engine_close(e);
    assert_no_leaks();
}

/* The k-th allocation of building and running a shared plan fails, for every k until a
 * run succeeds: each attempt fails with SL_ENOMEM or gives the right sums, and nothing
 * leaks (the keeper, its readers and the kept batches are freed on every path). */
SL_TEST(injected_allocation_failures)
{
    sl_test_config_off(1); /* the bound on k is for 100-row morsels */
    sl_engine_t *e = open_engine(2, 100, 0);
    int succeeded = 0, failed = 0;
    for (int k = 0; k < 1000 && !succeeded; k++) {
        sl_plan_t *p = NULL;
        sl_query_t *q = NULL;
        int g = -1, s1 = -1, s2 = -1;
        sl__mem_fail_after(k);
        int rc = sl_plan_create(&p);
        if (rc == SL_OK)
            rc = sl_plan_add(p, "gen.sequence", NULL, 0, "rows=1000", &g);
        if (rc == SL_OK)
            rc = sl_plan_add(p, "aggregate.sum", (int[]){g}, 1, "column=x", &s1);
        if (rc == SL_OK)
            rc = sl_plan_add(p, "aggregate.sum", (int[]){g}, 1, "column=x", &s2);
        if (rc == SL_OK)
            rc = sl_plan_output(p, s1, "s1");
        if (rc == SL_OK)
            rc = sl_plan_output(p, s2, "s2");
        if (rc == SL_OK)
            rc = sl_query_create(e, p, &q);
        if (rc == SL_OK)
            rc = sl_query_run(q);
        sl__mem_fail_after(-1);
        if (rc == SL_OK) {
            struct run r = {p, q};
            assert_two_sums(&r, 1000);
            succeeded = 1;
        } else if (rc != SL_ENOMEM) {
            fail_msg("k=%d: rc=%s (%s)", k, sl_err_name(rc), sl_last_errmsg());
        } else {
            failed++;
        }
        sl_query_destroy(q);
        sl_plan_destroy(p);
    }
    assert_true(succeeded);
    assert_true(failed > 50); /* the query's own allocations were reached too */
    sl_engine_close(e);
    assert_no_leaks();
}

/* explain: one pipeline ends at the shared node's keeper, one per consumer starts at a
 * reader of it; both name the shared node. The profile lists them too. */
SL_TEST(explain_shows_shared_node_and_consumers)
{
    sl_engine_t *e = open_engine(2, 1000, 0);
    sl_plan_t *p = sl_test_plan_parse(
        "a = gen.keys rows=5000 kind=m2m distinct=50 seed=1 payloads=1 column=k\n"
        "x = gen.sequence rows=10 column=y\n"
        "j = join(a, a) on=k output=aggregate\n"
        "s = aggregate(a) keys=k aggs=\"count(*)\"\n"
        "output j as j\noutput s as s\noutput a as a\noutput x as x\n");
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    const struct sl_explain *ex;
    SL_ASSERT_OK(sl_query_explain(q, &ex));
    int keepers = 0, readers = 0;
    for (int k = 0; k < ex->n_pipelines; k++) {
        const struct sl_explain_pipeline *pl = &ex->pipelines[k];
        const struct sl_explain_stage *src = &pl->stages[0], *sink = &pl->stages[pl->n_stages - 1];
        if (!strcmp(sink->op, "core.share")) {
            keepers++;
            assert_int_equal(sink->node, 0);
            assert_string_equal(src->op, "gen.keys");
        }
        if (!strcmp(src->op, "core.share_read")) {
            readers++;
            assert_int_equal(src->node, 0);
        }
        assert_true(strcmp(src->op, "gen.keys") || !strcmp(sink->op, "core.share"));
    }
    assert_int_equal(keepers, 1);
    assert_int_equal(readers, 4); /* the join's two sides, the aggregate, the output */
    assert_int_equal(ex->n_pipelines, 1 + 4 + 3); /* + outputs j, s, x */
    const char *json = sl_query_explain_json(q);
    assert_non_null(json);
    assert_non_null(strstr(json, "{\"op\":\"core.share\",\"node\":0,\"name\":\"a\""));
    assert_non_null(strstr(json, "{\"op\":\"core.share_read\",\"node\":0,\"name\":\"a\""));
    char trace[64];
    snprintf(trace, sizeof trace, "/tmp/sl_share_trace_%d.json", (int)getpid());
    SL_ASSERT_OK(sl_query_trace(q, trace));
    SL_ASSERT_OK(sl_query_run(q));
    /* The trace has the keeper's spans (its pipeline's tasks and finalize). */
    FILE *f = fopen(trace, "rb");
    assert_non_null(f);
    static char text[1 << 20];
    text[fread(text, 1, sizeof text - 1, f)] = 0;
    fclose(f);
    remove(trace);
    assert_non_null(strstr(text, "\"core.share\""));
    const char *prof = sl_query_profile_json(q);
    assert_int_equal(profile_rows_out(prof, 0, "gen.keys"), 5000);
    assert_int_equal(profile_rows_out(prof, 0, "core.share_read"), 4 * 5000); /* 4 readers */
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_engine_close(e);
    assert_no_leaks();
}
