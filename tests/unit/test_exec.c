/* Tests running plans end to end on the engine's workers: the first plan (generated
 * sequence -> count and sum) against a reference, several thread counts and morsel
 * sizes, tables as sources, errors during execution, cancellation, concurrent queries,
 * and that nothing leaks. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "sched_int.h"
#include "sl_test.h"

static void assert_no_leaks(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

static sl_engine_t *open_engine(int threads, int64_t morsel)
{
    return sl_test_cpu_engine(threads, morsel);
}

/* Runs gen.sequence(rows, start, step) -> aggregate.sum and returns count and sum. */
static int run_sum(sl_engine_t *e, const char *gen_opts, int64_t *count, int64_t *sum,
                   int *sum_null)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int g, a;
    SL_ASSERT_OK(sl_plan_add(p, "gen.sequence", NULL, 0, gen_opts, &g));
    int in[] = {g};
    SL_ASSERT_OK(sl_plan_add(p, "aggregate.sum", in, 1, "column=x", &a));
    SL_ASSERT_OK(sl_plan_output(p, a, "r"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    int rc = sl_query_run(q);
    if (rc == SL_OK) {
        sl_table_t *t;
        SL_ASSERT_OK(sl_query_result(q, "r", &t));
        assert_int_equal(sl_table_num_rows(t), 1);
        struct sl_column c0, c1;
        sl_batch_t *b = sl_table_batch(t, 0);
        SL_ASSERT_OK(sl_batch_column(b, 0, &c0));
        SL_ASSERT_OK(sl_batch_column(b, 1, &c1));
        *count = ((const int64_t *)c0.data)[c0.offset];
        *sum = ((const int64_t *)c1.data)[c1.offset];
        *sum_null = c1.validity && !((c1.validity[c1.offset >> 3] >> (c1.offset & 7)) & 1);
        sl_table_unref(t);
    }
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return rc;
}

SL_TEST(first_plan_matches_reference)
{
    int64_t sizes[] = {0, 1, 7, 1000, 4096, 4097, 100003};
    int64_t morsels[] = {1, 1000, 4096, 122880};
    int threads[] = {1, 2, 4};
    for (size_t ti = 0; ti < 3; ti++) {
        for (size_t mi = 0; mi < 4; mi++) {
            sl_engine_t *e = open_engine(threads[ti], morsels[mi]);
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                if (morsels[mi] == 1 && sizes[si] > 5000)
                    continue;
                char opts[96];
                snprintf(opts, sizeof opts, "rows=%lld start=-3 step=5", (long long)sizes[si]);
                int64_t count = -1, sum = -1;
                int null = -1;
                SL_ASSERT_OK(run_sum(e, opts, &count, &sum, &null));
                int64_t ref = 0;
                for (int64_t i = 0; i < sizes[si]; i++)
                    ref += -3 + 5 * i;
                assert_int_equal(count, sizes[si]);
                assert_int_equal(null, sizes[si] == 0);
                if (sizes[si])
                    assert_int_equal(sum, ref);
            }
            sl_engine_close(e);
        }
    }
    assert_no_leaks();
}

SL_TEST(overflow_is_an_error_and_engine_stays_usable)
{
    sl_engine_t *e = open_engine(2, 1000);
    int64_t count, sum;
    int null;
    /* Three values of 2^62: their sum does not fit in int64. */
    int rc = run_sum(e, "rows=3 start=4611686018427387904 step=0", &count, &sum, &null);
    assert_int_equal(rc, SL_EOVERFLOW);
    assert_non_null(strstr(sl_last_errmsg(), "overflow"));
    SL_ASSERT_OK(run_sum(e, "rows=100", &count, &sum, &null));
    assert_int_equal(sum, 4950);
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(table_source)
{
    sl_engine_t *e = open_engine(2, 7);
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    const char *names[] = {"x"};
    enum sl_type types[] = {SL_TYPE_INT32};
    int64_t ref = 0, n_valid = 0;
    for (int k = 0; k < 5; k++) {
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, 1, names, types, 10 * k + 3));
        int32_t *x = sl_batch_column_data(b, 0);
        uint8_t *v = sl_batch_column_validity(b, 0);
        for (int i = 0; i < 10 * k + 3; i++) {
            x[i] = i * (k + 1) - 7;
            if (i % 3 == 1)
                v[i >> 3] &= (uint8_t) ~(1u << (i & 7));
            else
                ref += x[i], n_valid++;
        }
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
    }
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int s, a;
    SL_ASSERT_OK(sl_plan_add_table(p, t, &s));
    sl_table_unref(t); /* the plan holds its own reference */
    int in[] = {s};
    SL_ASSERT_OK(sl_plan_add(p, "aggregate.sum", in, 1, "column=x", &a));
    SL_ASSERT_OK(sl_plan_output(p, a, "r"));
    for (int rep = 0; rep < 3; rep++) { /* a plan runs many times */
        sl_query_t *q;
        SL_ASSERT_OK(sl_query_create(e, p, &q));
        SL_ASSERT_OK(sl_query_run(q));
        sl_table_t *r;
        SL_ASSERT_OK(sl_query_result(q, "r", &r));
        struct sl_column c;
        SL_ASSERT_OK(sl_batch_column(sl_table_batch(r, 0), 0, &c));
        assert_int_equal(((const int64_t *)c.data)[0], n_valid);
        SL_ASSERT_OK(sl_batch_column(sl_table_batch(r, 0), 1, &c));
        assert_int_equal(((const int64_t *)c.data)[0], ref);
        sl_table_unref(r);
        assert_int_equal(sl_query_result(q, "nope", &r), SL_ENOTFOUND);
        assert_null(r);
        assert_int_equal(sl_query_run(q), SL_ESTATE); /* a query runs once */
        sl_query_destroy(q);
    }
    int x;
    assert_int_equal(sl_plan_add(p, "gen.sequence", NULL, 0, "rows=1", &x), SL_ESTATE);
    sl_plan_destroy(p);
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(unused_output_is_reported)
{
    sl_engine_t *e = open_engine(1, 100);
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int g;
    SL_ASSERT_OK(sl_plan_add(p, "gen.sequence", NULL, 0, "rows=10", &g));
    sl_query_t *q;
    assert_int_equal(sl_query_create(e, p, &q), SL_EINVAL);
    assert_null(q);
    assert_non_null(strstr(sl_plan_errmsg(p), "not used"));
    sl_plan_destroy(p);
    sl_engine_close(e);
    assert_no_leaks();
}

struct conc_arg {
    sl_engine_t *e;
    int64_t rows;
    int ok;
};

static void *conc_main(void *arg)
{
    struct conc_arg *a = arg;
    char opts[64];
    snprintf(opts, sizeof opts, "rows=%lld", (long long)a->rows);
    int64_t count = 0, sum = 0;
    int null;
    a->ok = 1;
    for (int i = 0; i < 20; i++) {
        sl_plan_t *p;
        if (sl_plan_create(&p) != SL_OK)
            a->ok = 0;
        int g, s;
        sl_plan_add(p, "gen.sequence", NULL, 0, opts, &g);
        int in[] = {g};
        sl_plan_add(p, "aggregate.sum", in, 1, "column=x", &s);
        sl_plan_output(p, s, "r");
        sl_query_t *q;
        if (sl_query_create(a->e, p, &q) != SL_OK || sl_query_run(q) != SL_OK) {
            a->ok = 0;
        } else {
            sl_table_t *t;
            sl_query_result(q, "r", &t);
            struct sl_column c;
            sl_batch_column(sl_table_batch(t, 0), 1, &c);
            sum = ((const int64_t *)c.data)[0];
            sl_batch_column(sl_table_batch(t, 0), 0, &c);
            count = ((const int64_t *)c.data)[0];
            sl_table_unref(t);
            if (count != a->rows || sum != a->rows * (a->rows - 1) / 2)
                a->ok = 0;
        }
        sl_query_destroy(q);
        sl_plan_destroy(p);
    }
    (void)null;
    return NULL;
}

SL_TEST(concurrent_queries)
{
    sl_engine_t *e = open_engine(2, 512);
    pthread_t th[4];
    struct conc_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (struct conc_arg){e, 10000 + 777 * i, 0};
        pthread_create(&th[i], NULL, conc_main, &args[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_true(args[i].ok);
    }
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(cancel_mid_run)
{
    sl_engine_t *e = open_engine(2, 1);
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int g, a;
    SL_ASSERT_OK(sl_plan_add(p, "gen.sequence", NULL, 0, "rows=3000000", &g));
    int in[] = {g};
    SL_ASSERT_OK(sl_plan_add(p, "aggregate.sum", in, 1, "column=x", &a));
    SL_ASSERT_OK(sl_plan_output(p, a, "r"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    SL_ASSERT_OK(sl_query_start(q));
    struct sl_progress pr = SL_PROGRESS_INIT;
    do {
        sl_query_progress(q, &pr);
    } while (pr.tasks_done < 100);
    sl_query_cancel(q);
    assert_int_equal(sl_query_wait(q), SL_ECANCELED);
    sl_query_progress(q, &pr);
    assert_true(pr.finished);
    /* It stopped early: the generator ran far fewer than its 3,000,000 morsels. */
    const char *prof = sl_query_profile_json(q);
    const char *g_at = strstr(prof, "\"op\":\"gen.sequence\"");
    assert_non_null(g_at);
    long long ran = -1;
    assert_int_equal(sscanf(strstr(g_at, "\"tasks\":"), "\"tasks\":%lld", &ran), 1);
    assert_true(ran >= 100 && ran < 3000000);
    sl_table_t *t;
    assert_int_equal(sl_query_result(q, "r", &t), SL_ESTATE);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    /* The engine still runs queries. */
    int64_t count, sum;
    int null;
    SL_ASSERT_OK(run_sum(e, "rows=10", &count, &sum, &null));
    assert_int_equal(sum, 45);
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(destroy_unstarted_query)
{
    sl_engine_t *e = open_engine(2, 100);
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int g, a;
    SL_ASSERT_OK(sl_plan_add(p, "gen.sequence", NULL, 0, "rows=1000", &g));
    int in[] = {g};
    SL_ASSERT_OK(sl_plan_add(p, "aggregate.sum", in, 1, "column=x", &a));
    SL_ASSERT_OK(sl_plan_output(p, a, "r"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(injected_allocation_failures_during_query)
{
    sl_test_config_off(1); /* the bound on k is for 100-row morsels */
    sl_engine_t *e = open_engine(2, 100);
    /* Fail the k-th allocation of a whole plan build + run, for every k until one run
     * succeeds: each attempt must fail cleanly or succeed with the right answer. */
    int succeeded = 0;
    for (int k = 0; k < 400 && !succeeded; k++) {
        sl_plan_t *p = NULL;
        sl_query_t *q = NULL;
        sl__mem_fail_after(k);
        int rc = sl_plan_create(&p);
        int g = -1, a = -1;
        if (rc == SL_OK)
            rc = sl_plan_add(p, "gen.sequence", NULL, 0, "rows=1000", &g);
        if (rc == SL_OK)
            rc = sl_plan_add(p, "aggregate.sum", (int[]){g}, 1, "column=x", &a);
        if (rc == SL_OK)
            rc = sl_plan_output(p, a, "r");
        if (rc == SL_OK)
            rc = sl_query_create(e, p, &q);
        if (rc == SL_OK)
            rc = sl_query_run(q);
        sl__mem_fail_after(-1);
        if (rc == SL_OK) {
            sl_table_t *t;
            SL_ASSERT_OK(sl_query_result(q, "r", &t));
            struct sl_column c;
            SL_ASSERT_OK(sl_batch_column(sl_table_batch(t, 0), 1, &c));
            assert_int_equal(((const int64_t *)c.data)[0], 499500);
            sl_table_unref(t);
            succeeded = 1;
        } else {
            if (rc != SL_ENOMEM)
                fail_msg("k=%d: rc=%s (%s)", k, sl_err_name(rc), sl_last_errmsg());
        }
        sl_query_destroy(q);
        sl_plan_destroy(p);
    }
    assert_true(succeeded);
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(outputs_keep_source_task_order)
{
    /* gen.sequence with 7-row morsels on 2 threads: tasks finish in any order, but the
     * collected output is 0, 1, 2, ... in order. */
    sl_engine_t *e = open_engine(2, 7);
    for (int rep = 0; rep < 5; rep++) {
        sl_plan_t *p;
        SL_ASSERT_OK(sl_plan_create(&p));
        int g;
        SL_ASSERT_OK(sl_plan_add(p, "gen.sequence", NULL, 0, "rows=5003", &g));
        SL_ASSERT_OK(sl_plan_output(p, g, "r"));
        sl_query_t *q;
        SL_ASSERT_OK(sl_query_create(e, p, &q));
        SL_ASSERT_OK(sl_query_run(q));
        sl_table_t *t;
        SL_ASSERT_OK(sl_query_result(q, "r", &t));
        int64_t next = 0;
        for (int64_t b = 0; b < sl_table_num_batches(t); b++) {
            struct sl_column c;
            SL_ASSERT_OK(sl_batch_column(sl_table_batch(t, b), 0, &c));
            for (int64_t i = 0; i < c.length; i++)
                assert_int_equal(((const int64_t *)c.data)[c.offset + i], next++);
        }
        assert_int_equal(next, 5003);
        sl_table_unref(t);
        sl_query_destroy(q);
        sl_plan_destroy(p);
    }
    sl_engine_close(e);
    assert_no_leaks();
}

/* The waiting thread's poll (sl__graph_spin_us, query.c): false after about its time
 * while the graph runs, true at once when it has finished. */
SL_TEST(graph_spin_until_finished)
{
    struct sl__graph g;
    SL_ASSERT_OK(sl__graph_init(&g, NULL));
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    assert_false(sl__graph_spin_us(&g, 2000));
    clock_gettime(CLOCK_MONOTONIC, &b);
    assert_true((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 >= 2000);
    sl__graph_seal(&g); /* the builder's hold was the last node */
    assert_true(sl__graph_spin_us(&g, 0));
    sl__graph_fini(&g);
}

/* GPU workers' threads are pinned (option pin_gpu_workers) to the last allowed cores, one
 * each, and left to the OS without it or without pin_threads. The workers need no GPU
 * here: without hooks a GPU worker only sleeps until the scheduler stops. */
SL_TEST(gpu_workers_pinned_to_their_own_cores)
{
    cpu_set_t set;
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    int last = -1, before = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            before = last, last = c;
    const int ordinals[2] = {0, 1}, numa[2] = {-1, -1};
    struct sl__sched_config cfg = {.n_cpu = 1, .n_gpu = 2, .gpu_ordinals = ordinals,
                                   .pin = true, .pin_gpu = true, .gpu_numa = numa};
    struct sl__sched *s;
    SL_ASSERT_OK(sl__sched_create(&s, &cfg));
    assert_int_equal(sl__sched_worker(s, 1)->cpu, last);
    /* the second GPU worker takes the next core back, where there is one */
    assert_int_equal(sl__sched_worker(s, 2)->cpu, before >= 0 ? before : last);
    sl__sched_destroy(s);
    cfg.pin_gpu = false;
    SL_ASSERT_OK(sl__sched_create(&s, &cfg));
    assert_int_equal(sl__sched_worker(s, 1)->cpu, -1);
    sl__sched_destroy(s);
    cfg.pin_gpu = true, cfg.pin = false;
    SL_ASSERT_OK(sl__sched_create(&s, &cfg));
    assert_int_equal(sl__sched_worker(s, 1)->cpu, -1);
    assert_int_equal(sl__sched_worker(s, 0)->cpu, -1);
    sl__sched_destroy(s);
    assert_no_leaks();
}
