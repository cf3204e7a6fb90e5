/* Tests the runtime with the test operators (tests/common/test_ops.c): dependency order
 * on random DAGs, a 100,000-task stress, stealing, tracing, a failing task, host
 * budgets, placement forced to the CPU, and that nothing leaks. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec_int.h"
#include "sl_test.h"
#include "test_ops.h"

static void assert_no_leaks(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

static sl_engine_t *open_engine(int threads, int64_t morsel, int64_t host_limit)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = threads;
    cfg.morsel_rows_cpu = morsel;
    cfg.n_gpus = 0;
    cfg.host_mem_limit = host_limit;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    return e;
}

/* ---- random DAGs through sl_engine_run_tasks ---- */

struct dag_rec {
    _Atomic int64_t clock;
    int64_t *finished_at; /* per task: clock value when it ran */
    const int64_t *off, *deps;
};

static void record_task(void *user, int64_t i)
{
    struct dag_rec *r = user;
    /* Every predecessor must have run already. */
    for (int64_t k = r->off[i]; k < r->off[i + 1]; k++)
        if (__atomic_load_n(&r->finished_at[r->deps[k]], __ATOMIC_ACQUIRE) == 0)
            __atomic_store_n(&r->finished_at[i], -1, __ATOMIC_RELEASE);
    if (__atomic_load_n(&r->finished_at[i], __ATOMIC_ACQUIRE) == 0)
        __atomic_store_n(&r->finished_at[i], atomic_fetch_add(&r->clock, 1) + 1, __ATOMIC_RELEASE);
}

static void run_random_dag(sl_engine_t *e, int64_t n, uint64_t seed)
{
    int64_t *off = calloc((size_t)n + 1, sizeof *off), *deps = calloc((size_t)n * 2 + 1, sizeof *deps);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        off[i] = k;
        int nd = i ? (int)(seed % 3) : 0;
        for (int d = 0; d < nd; d++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            deps[k++] = (int64_t)((seed >> 33) % (uint64_t)i);
        }
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    }
    off[n] = k;
    struct dag_rec r = {.finished_at = calloc((size_t)n, sizeof(int64_t)), .off = off, .deps = deps};
    struct sl_task_graph g = {.n_tasks = n, .dep_offsets = off, .deps = deps, .fn = record_task,
                              .user = &r};
    SL_ASSERT_OK(sl_engine_run_tasks(e, &g));
    for (int64_t i = 0; i < n; i++) {
        if (r.finished_at[i] <= 0)
            fail_msg("task %lld ran before a predecessor or not at all", (long long)i);
        for (int64_t j = off[i]; j < off[i + 1]; j++)
            assert_true(r.finished_at[deps[j]] < r.finished_at[i]);
    }
    free(off);
    free(deps);
    free(r.finished_at);
}

SL_TEST(random_dags_run_in_dependency_order)
{
    for (int threads = 1; threads <= 4; threads *= 2) {
        sl_engine_t *e = open_engine(threads, 0, 0);
        for (uint64_t seed = 1; seed <= 5; seed++)
            run_random_dag(e, 2000, seed);
        run_random_dag(e, 0, 1);
        run_random_dag(e, 1, 1);
        sl_engine_close(e);
    }
    assert_no_leaks();
}

SL_TEST(stress_100000_tasks)
{
    sl_engine_t *e = open_engine(2, 0, 0);
    run_random_dag(e, 100000, 42);
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(malformed_task_graph)
{
    sl_engine_t *e = open_engine(2, 0, 0);
    int64_t off[] = {0, 1, 1};
    int64_t deps[] = {1}; /* task 0 depends on a later task */
    struct sl_task_graph g = {.n_tasks = 2, .dep_offsets = off, .deps = deps};
    assert_int_equal(sl_engine_run_tasks(e, &g), SL_EINVAL);
    assert_non_null(strstr(sl_last_errmsg(), "not an earlier task"));
    sl_engine_close(e);
    assert_no_leaks();
}

/* ---- stealing: all tasks are pushed by one thread to one worker's ring ---- */

struct steal_rec {
    _Atomic int64_t per_thread[64];
};

/* Each task counts itself for its worker, then waits (at most 5 s) until both workers
 * have run a task: the worker holding all the work in its ring cannot finish alone, so
 * the test does not depend on how the OS schedules threads on a loaded machine. */
static void spin_task(void *user, int64_t i)
{
    struct steal_rec *r = user;
    struct sl__worker *w = sl__sched_current();
    if (w)
        atomic_fetch_add(&r->per_thread[w->id], 1);
    for (int k = 0; i > 0 && k < 5000; k++) {
        if (atomic_load(&r->per_thread[0]) > 0 && atomic_load(&r->per_thread[1]) > 0)
            break;
        usleep(1000);
    }
}

SL_TEST(idle_workers_steal)
{
    sl_engine_t *e = open_engine(2, 0, 0);
    /* Task 0 releases 2000 successors from the worker running it: they all go to that
     * worker's ring, so the other worker only gets work by stealing. */
    int64_t n = 2001;
    int64_t *off = calloc((size_t)n + 1, sizeof *off), *deps = calloc((size_t)n, sizeof *deps);
    for (int64_t i = 1; i < n; i++) {
        off[i] = i - 1;
        deps[i - 1] = 0;
    }
    off[n] = n - 1;
    struct steal_rec r;
    memset(&r, 0, sizeof r);
    struct sl_task_graph g = {.n_tasks = n, .dep_offsets = off, .deps = deps, .fn = spin_task,
                              .user = &r};
    SL_ASSERT_OK(sl_engine_run_tasks(e, &g));
    int64_t stolen = 0;
    for (int i = 0; i < 2; i++)
        stolen += atomic_load(&sl__sched_worker(e->sched, i)->stolen);
    assert_true(atomic_load(&r.per_thread[0]) > 0 && atomic_load(&r.per_thread[1]) > 0);
    assert_true(stolen > 0);
    free(off);
    free(deps);
    sl_engine_close(e);
    assert_no_leaks();
}

/* ---- queries with the test operators ---- */

static sl_table_t *int64_table(int64_t rows, int batches)
{
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    const char *names[] = {"x"};
    enum sl_type types[] = {SL_TYPE_INT64};
    int64_t v = 0;
    for (int b = 0; b < batches; b++) {
        int64_t n = rows / batches + (b < rows % batches);
        sl_batch_t *bt;
        SL_ASSERT_OK(sl_batch_create(&bt, 1, names, types, n));
        int64_t *x = sl_batch_column_data(bt, 0);
        for (int64_t i = 0; i < n; i++)
            x[i] = v++ * 7 - 1000;
        SL_ASSERT_OK(sl_table_append(t, bt));
        sl_batch_unref(bt);
    }
    return t;
}

/* scan(table) -> test.affine(a, b) [-> test.fail(at)] -> test.sum */
static sl_plan_t *affine_sum_plan(sl_table_t *t, int64_t a, int64_t b, int fail_at,
                                  enum sl_placement where)
{
    SL_ASSERT_OK(sl_test_ops_register());
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int s, f, m, sum;
    char opts[64];
    snprintf(opts, sizeof opts, "a=%lld b=%lld", (long long)a, (long long)b);
    SL_ASSERT_OK(sl_plan_add_table(p, t, &s));
    SL_ASSERT_OK(sl_plan_add(p, "test.affine", (int[]){s}, 1, opts, &f));
    m = f;
    if (fail_at >= 0) {
        snprintf(opts, sizeof opts, "at=%d", fail_at);
        SL_ASSERT_OK(sl_plan_add(p, "test.fail", (int[]){f}, 1, opts, &m));
    }
    SL_ASSERT_OK(sl_plan_add(p, "test.sum", (int[]){m}, 1, "", &sum));
    SL_ASSERT_OK(sl_plan_output(p, sum, "r"));
    if (where != SL_PLACE_AUTO)
        SL_ASSERT_OK(sl_plan_place(p, f, where));
    return p;
}

static void expect_sum(sl_query_t *q, int64_t rows, int64_t a, int64_t b)
{
    sl_table_t *r;
    SL_ASSERT_OK(sl_query_result(q, "r", &r));
    struct sl_column c0, c1;
    SL_ASSERT_OK(sl_batch_column(sl_table_batch(r, 0), 0, &c0));
    SL_ASSERT_OK(sl_batch_column(sl_table_batch(r, 0), 1, &c1));
    uint64_t ref = 0;
    for (int64_t i = 0; i < rows; i++)
        ref += (uint64_t)a * (uint64_t)(i * 7 - 1000) + (uint64_t)b;
    assert_int_equal(((const int64_t *)c0.data)[0], rows);
    assert_int_equal((uint64_t)((const int64_t *)c1.data)[0], ref);
    sl_table_unref(r);
}

SL_TEST(test_operators_on_cpu_with_trace)
{
    sl_engine_t *e = open_engine(2, 1000, 0);
    sl_table_t *t = int64_table(25003, 3);
    sl_plan_t *p = affine_sum_plan(t, 3, -5, -1, SL_PLACE_CPU);
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    char path[] = "/tmp/sluice_trace_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    SL_ASSERT_OK(sl_query_trace(q, path));
    SL_ASSERT_OK(sl_query_run(q));
    expect_sum(q, 25003, 3, -5);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    unlink(path);
    assert_true(buf[0] == '[');
    assert_non_null(strstr(buf, "\"ph\":\"X\""));
    assert_non_null(strstr(buf, "test.sum"));
    assert_non_null(strstr(sl_query_profile_json(q), "\"op\":\"test.affine\""));
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_table_unref(t);
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(failing_task_fails_query_engine_stays_usable)
{
    sl_engine_t *e = open_engine(2, 100, 0);
    sl_table_t *t = int64_table(5000, 2);
    for (int rep = 0; rep < 2; rep++) {
        sl_plan_t *p = affine_sum_plan(t, 1, 0, 7, SL_PLACE_AUTO);
        sl_query_t *q;
        SL_ASSERT_OK(sl_query_create(e, p, &q));
        assert_int_equal(sl_query_run(q), SL_EFORMAT);
        assert_non_null(strstr(sl_query_errmsg(q), "planted failure at morsel 7"));
        struct sl_error_info info = SL_ERROR_INFO_INIT;
        assert_int_equal(sl_query_error(q, &info), SL_EFORMAT);
        assert_string_equal(info.op_name, "test.fail");
        assert_int_equal(info.device, 0); /* a CPU task failed */
        assert_int_equal(info.native_code, 0);
        sl_query_destroy(q);
        sl_plan_destroy(p);
    }
    sl_plan_t *p = affine_sum_plan(t, 2, 1, -1, SL_PLACE_AUTO);
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    SL_ASSERT_OK(sl_query_run(q));
    expect_sum(q, 5000, 2, 1);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_table_unref(t);
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(host_budget_is_enforced)
{
    /* 1,000-row int64 morsels are 8,000 bytes: a 4 KiB budget cannot hold one. */
    sl_test_config_off(1);
    sl_engine_t *e = open_engine(2, 1000, 4096);
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int g, a;
    SL_ASSERT_OK(sl_plan_add(p, "gen.sequence", NULL, 0, "rows=100000", &g));
    SL_ASSERT_OK(sl_plan_add(p, "aggregate.sum", (int[]){g}, 1, "column=x", &a));
    SL_ASSERT_OK(sl_plan_output(p, a, "r"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    assert_int_equal(sl_query_run(q), SL_EBUDGET);
    assert_non_null(strstr(sl_query_errmsg(q), "budget"));
    sl_query_destroy(q);
    struct sl_mem_stats st = SL_MEM_STATS_INIT;
    sl_engine_mem_stats(e, &st);
    assert_int_equal(st.host_in_use, 0); /* everything charged was given back */
    sl_engine_close(e);
    /* With room for a few morsels at a time it runs. */
    e = open_engine(2, 1000, 1 << 20);
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    SL_ASSERT_OK(sl_query_run(q));
    sl_engine_mem_stats(e, &st);
    assert_true(st.host_peak > 0 && st.host_peak <= (1 << 20));
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(placement_env_forces_cpu)
{
    setenv("SLUICE_PLACEMENT", "cpu", 1);
    sl_engine_t *e = open_engine(2, 1000, 0);
    sl_table_t *t = int64_table(3000, 1);
    sl_plan_t *p = affine_sum_plan(t, 1, 1, -1, SL_PLACE_AUTO);
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    SL_ASSERT_OK(sl_query_run(q));
    expect_sum(q, 3000, 1, 1);
    assert_non_null(strstr(sl_query_profile_json(q), "\"gpu_tasks\":0"));
    assert_null(strstr(sl_query_profile_json(q), "\"device\":\"gpu\""));
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_table_unref(t);
    sl_engine_close(e);
    unsetenv("SLUICE_PLACEMENT");
    assert_no_leaks();
}

SL_TEST(pin_table_without_gpu_is_clean)
{
    sl_engine_t *e = open_engine(2, 1000, 0);
    sl_table_t *t = int64_table(4000, 2);
    int rc = sl_table_pin(t);
    if (getenv("SLUICE_EXPECT_NO_GPU"))
        assert_int_equal(rc, SL_EUNSUPPORTED);
    else
        assert_true(rc == SL_OK || rc == SL_EUNSUPPORTED);
    /* Pinned or not, the table is scanned as before. */
    sl_plan_t *p = affine_sum_plan(t, 2, 3, -1, SL_PLACE_CPU);
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    SL_ASSERT_OK(sl_query_run(q));
    expect_sum(q, 4000, 2, 3);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_table_unref(t);
    sl_engine_close(e);
    assert_no_leaks();
}

/* scan(table: x = i*7 - 1000) -> test.positive -> test.sum: counts, returns SL_BLOCKED,
 * then allocates exactly and writes (count -> allocate -> write). */
SL_TEST(blocked_flow_count_allocate_write)
{
    SL_ASSERT_OK(sl_test_ops_register());
    sl_engine_t *e = open_engine(2, 333, 0);
    sl_table_t *t = int64_table(10000, 3);
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int s, f, u;
    SL_ASSERT_OK(sl_plan_add_table(p, t, &s));
    SL_ASSERT_OK(sl_plan_add(p, "test.positive", (int[]){s}, 1, "", &f));
    SL_ASSERT_OK(sl_plan_add(p, "test.sum", (int[]){f}, 1, "", &u));
    SL_ASSERT_OK(sl_plan_output(p, u, "r"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    SL_ASSERT_OK(sl_query_run(q));
    sl_table_t *r;
    SL_ASSERT_OK(sl_query_result(q, "r", &r));
    struct sl_column c0, c1;
    sl_batch_column(sl_table_batch(r, 0), 0, &c0);
    sl_batch_column(sl_table_batch(r, 0), 1, &c1);
    int64_t cnt = 0, sum = 0;
    for (int64_t i = 0; i < 10000; i++)
        if (i * 7 - 1000 > 0)
            cnt++, sum += i * 7 - 1000;
    assert_int_equal(((const int64_t *)c0.data)[0], cnt);
    assert_int_equal(((const int64_t *)c1.data)[0], sum);
    sl_table_unref(r);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_table_unref(t);
    sl_engine_close(e);
    assert_no_leaks();
}

#include "stage.h"

SL_TEST(stager_copies_exactly)
{
    for (int threads = 0; threads <= 3; threads++) {
        struct sl__stager *st;
        SL_ASSERT_OK(sl__stager_create(&st, threads));
        size_t sizes[] = {0, 1, 4095, (4u << 20) - 1, (4u << 20) + 12345, 37u << 20};
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            size_t n = sizes[k];
            unsigned char *a = malloc(n + 1), *b = malloc(n + 1);
            for (size_t i = 0; i < n; i++)
                a[i] = (unsigned char)(i * 2654435761u >> 13);
            memset(b, 0xee, n + 1);
            for (int rep = 0; rep < 3; rep++)
                sl__stager_copy(st, b, a, n);
            assert_memory_equal(a, b, n);
            assert_int_equal(b[n], 0xee); /* nothing written past the end */
            free(a);
            free(b);
        }
        sl__stager_destroy(st);
    }
    assert_no_leaks();
}

/* Several copies in one job (sl__stager_copy_v): sizes that cut into pieces of every
 * size the job picks, empty copies among them, each landing exactly (one buffer with
 * guard bytes between the destinations). */
SL_TEST(stager_copies_many_exactly)
{
    for (int threads = 0; threads <= 3; threads += 3) {
        struct sl__stager *st;
        SL_ASSERT_OK(sl__stager_create(&st, threads));
        size_t sizes[] = {(4u << 20) + 7, 0, 1, 3u << 20, 4095, (1u << 20) + 1, 0, 9u << 20};
        enum { N = sizeof sizes / sizeof sizes[0] };
        for (int n = 1; n <= N; n++) {
            size_t total = 0;
            for (int i = 0; i < n; i++)
                total += sizes[i] + 1;
            unsigned char *a = malloc(total), *b = malloc(total);
            for (size_t i = 0; i < total; i++)
                a[i] = (unsigned char)(i * 2654435761u >> 13);
            memset(b, 0xee, total);
            struct sl__copy v[N];
            size_t at = 0;
            for (int i = 0; i < n; i++) {
                v[i] = (struct sl__copy){b + at, a + at, sizes[i]};
                at += sizes[i] + 1;
            }
            sl__stager_copy_v(st, v, n);
            at = 0;
            for (int i = 0; i < n; i++) {
                assert_memory_equal(a + at, b + at, sizes[i]);
                assert_int_equal(b[at + sizes[i]], 0xee); /* the guard byte */
                at += sizes[i] + 1;
            }
            free(a);
            free(b);
        }
        sl__stager_destroy(st);
    }
    assert_no_leaks();
}
