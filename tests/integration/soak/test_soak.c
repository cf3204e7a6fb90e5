/* Soak test: client threads run a mix of queries on several engines at once for a fixed
 * time (SLUICE_SOAK_SECONDS, default 10): runs to completion, runs cancelled at a random
 * moment, runs abandoned to sl_query_destroy, results taken out through Arrow, and
 * queries over a budget too small for them. Plans are shared between threads (a frozen
 * plan backs many queries at once) or parsed per query. Every successful result is
 * compared with a reference run's; every failure must be the expected kind (SL_ECANCELED
 * after a cancel, SL_EBUDGET on the small-budget engine). The test fails on a wrong
 * result or code, on a client that makes no progress for HANG_SECONDS, and on anything
 * left allocated after the engines close. CI runs it under ASan/UBSan and TSan. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sluice/sluice.h>

#include "internal.h"
#include "sl_test.h"
#include "table_hash.h"

#define N_CLIENTS 6
#define N_ENGINES 3
#define BUDGET_ENGINE 2 /* the engine whose host budget is too small for WL_BIG */
#define HANG_SECONDS 60

enum { WL_GROUPBY, WL_JOIN, WL_SORT, WL_TOPK, WL_SUM, WL_BIG, N_WORKLOADS };
static const char *const workloads[N_WORKLOADS] = {
    "a = gen.keys rows=20000 kind=m2m distinct=500 seed=1 payloads=1 null_rate=0.1\n"
    "r = aggregate(a) keys=k aggs=\"count(*), sum(p1), min(p1)\"\noutput r\n",
    "b = gen.keys rows=5000 kind=unique seed=2 payloads=1\n"
    "a = gen.keys rows=20000 kind=fk pk_rows=6000 match=0.8 seed=3 payloads=1\n"
    "r = join(a, b) on=k kind=left\noutput r\n",
    "a = gen.keys rows=30000 kind=m2m distinct=2^30 seed=4 payloads=1\n"
    "r = sort(a) by=k\noutput r\n",
    "n = gen.sequence rows=50000 column=x\nf = filter(n) where=\"x % 3 = 1\"\n"
    "p = project(f) columns=\"x, y = x % 1000\"\nr = sort.topk(p) keys=\"y DESC, x\" limit=50\n"
    "output r\n",
    "n = gen.sequence rows=2^21 column=x\nr = aggregate.sum(n) column=x\noutput r\n",
    "a = gen.keys rows=400000 kind=m2m distinct=300000 seed=5 payloads=2\n"
    "r = aggregate(a) keys=k aggs=\"count(*), sum(p1), max(p2)\"\noutput r\n",
};

static sl_engine_t *engines[N_ENGINES];
static sl_plan_t *shared_plans[N_WORKLOADS];
static struct sl_test_rows want[N_WORKLOADS];
static atomic_int failed;
static atomic_int_fast64_t progress; /* operations finished, all clients */
static atomic_int_fast64_t n_ok, n_cancelled, n_budget, n_abandoned;
static double deadline;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void report(const char *what, int wl, int eng, int rc, const char *msg)
{
    fprintf(stderr, "soak: workload %d on engine %d: %s: %s (%s)\n", wl, eng, what,
            sl_err_name(rc), msg ? msg : "");
    atomic_store(&failed, 1);
}

/* Checks a finished query: its code is allowed here, and a result is the reference's. */
static void check(sl_query_t *q, int rc, int wl, int eng, bool cancelled, bool arrow)
{
    if (rc == SL_ECANCELED && cancelled) {
        atomic_fetch_add(&n_cancelled, 1);
        return;
    }
    if (rc == SL_EBUDGET && eng == BUDGET_ENGINE) {
        atomic_fetch_add(&n_budget, 1);
        return;
    }
    if (rc != SL_OK) {
        report("unexpected failure", wl, eng, rc, sl_query_errmsg(q));
        return;
    }
    sl_table_t *t;
    if ((rc = sl_query_result(q, "r", &t)) != SL_OK) {
        report("no result", wl, eng, rc, sl_last_errmsg());
        return;
    }
    if (arrow) {
        struct ArrowArrayStream s;
        sl_table_t *back = NULL;
        if ((rc = sl_table_export_stream(t, &s)) == SL_OK &&
            (rc = sl_table_import_stream(&s, &back)) != SL_OK)
            s.release(&s);
        sl_table_unref(t);
        if (rc != SL_OK) {
            report("arrow round trip", wl, eng, rc, sl_last_errmsg());
            return;
        }
        t = back;
    }
    struct sl_test_rows got;
    sl_test_table_hash(t, &got);
    sl_table_unref(t);
    if (got.rows != want[wl].rows || got.hash != want[wl].hash) {
        fprintf(stderr, "soak: workload %d on engine %d: %lld rows, want %lld (or other values)\n",
                wl, eng, (long long)got.rows, (long long)want[wl].rows);
        atomic_store(&failed, 1);
        return;
    }
    atomic_fetch_add(&n_ok, 1);
}

/* One operation of a client, chosen by r. */
static void operate(unsigned r)
{
    int wl = (int)(r % N_WORKLOADS), eng = (int)((r / N_WORKLOADS) % N_ENGINES);
    unsigned kind = (r >> 8) % 20;
    if (wl == WL_BIG && eng != BUDGET_ENGINE)
        wl = WL_SUM; /* only where the budget stops it early */
    sl_plan_t *own = NULL, *plan = shared_plans[wl];
    if (kind % 4 == 0) { /* a plan of its own now and then */
        if (sl_plan_create(&own) != SL_OK || sl_plan_parse(own, workloads[wl], "soak") != SL_OK) {
            report("parse", wl, eng, -1, sl_last_errmsg());
            sl_plan_destroy(own);
            return;
        }
        plan = own;
    }
    sl_query_t *q;
    int rc = sl_query_create(engines[eng], plan, &q);
    if (rc != SL_OK) {
        report("query_create", wl, eng, rc, sl_last_errmsg());
        sl_plan_destroy(own);
        return;
    }
    if (kind < 10) { /* to the end */
        check(q, sl_query_run(q), wl, eng, false, kind < 3);
    } else if (kind < 17) { /* cancelled after 0 to 4 ms */
        if ((rc = sl_query_start(q)) == SL_OK) {
            usleep((r >> 16) % 4000);
            sl_query_cancel(q);
            rc = sl_query_wait(q);
        }
        check(q, rc, wl, eng, true, false);
    } else { /* started and left to destroy */
        if ((rc = sl_query_start(q)) != SL_OK)
            report("start", wl, eng, rc, sl_query_errmsg(q));
        atomic_fetch_add(&n_abandoned, 1);
    }
    sl_query_destroy(q);
    sl_plan_destroy(own);
    atomic_fetch_add(&progress, 1);
}

static atomic_int clients_done;

static void *client(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u + 1;
    while (now() < deadline && !atomic_load(&failed)) {
        seed = seed * 1103515245u + 12345u;
        operate(seed >> 1);
    }
    atomic_fetch_add(&clients_done, 1);
    return NULL;
}

static void open_engines(void)
{
    for (int i = 0; i < N_ENGINES; i++) {
        struct sl_engine_config cfg;
        sl_engine_config_init(&cfg);
        cfg.n_gpus = 0;
        cfg.n_threads = i == 1 ? 1 : 2;
        cfg.morsel_rows_cpu = i == 1 ? 1000 : 0;
        cfg.host_mem_limit = i == BUDGET_ENGINE ? (int64_t)4 << 20 : 0;
        SL_ASSERT_OK(sl_test_engine_open(&engines[i], &cfg));
    }
}

/* The reference result of each workload: engine 0, one query at a time. */
static void reference_runs(void)
{
    for (int w = 0; w < N_WORKLOADS; w++) {
        shared_plans[w] = sl_test_plan_parse(workloads[w]);
        sl_query_t *q;
        sl_table_t *t;
        SL_ASSERT_OK(sl_query_create(engines[0], shared_plans[w], &q));
        SL_ASSERT_OK(sl_query_run(q));
        SL_ASSERT_OK(sl_query_result(q, "r", &t));
        sl_test_table_hash(t, &want[w]);
        sl_table_unref(t);
        sl_query_destroy(q);
    }
}

SL_TEST(mixed_load)
{
    sl_test_config_off(1); /* the budget engine's size is this test's point */
    const char *s = getenv("SLUICE_SOAK_SECONDS");
    double seconds = s ? atof(s) : 10;
    open_engines();
    reference_runs();
    deadline = now() + seconds;
    pthread_t t[N_CLIENTS];
    for (int i = 0; i < N_CLIENTS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, client, (void *)(uintptr_t)i), 0);
    int64_t last = -1;
    double last_change = now();
    /* The clients stop at the deadline; one that finishes nothing for HANG_SECONDS is
     * a hang (abort: a core or the sanitizer shows every thread). */
    while (atomic_load(&clients_done) < N_CLIENTS) {
        int64_t p = atomic_load(&progress);
        if (p != last) {
            last = p;
            last_change = now();
        } else if (now() - last_change > HANG_SECONDS) {
            fprintf(stderr, "soak: no query finished for %d s: a hang\n", HANG_SECONDS);
            abort();
        }
        usleep(100000);
    }
    for (int i = 0; i < N_CLIENTS; i++)
        pthread_join(t[i], NULL);
    printf("soak: %lld operations in %.0f s: %lld results checked, %lld cancelled, "
           "%lld over budget, %lld abandoned to destroy\n",
           (long long)atomic_load(&progress), seconds, (long long)atomic_load(&n_ok),
           (long long)atomic_load(&n_cancelled), (long long)atomic_load(&n_budget),
           (long long)atomic_load(&n_abandoned));
    assert_int_equal(atomic_load(&failed), 0);
    assert_true(atomic_load(&n_ok) > 0);
    assert_true(atomic_load(&n_cancelled) > 0);
    assert_true(atomic_load(&n_budget) > 0);
    for (int w = 0; w < N_WORKLOADS; w++)
        sl_plan_destroy(shared_plans[w]);
    for (int i = 0; i < N_ENGINES; i++)
        sl_engine_close(engines[i]);
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}
