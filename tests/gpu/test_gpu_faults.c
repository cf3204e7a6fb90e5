/* CUDA fault sweep (issue 22; SQLite's malloc tests, on the GPU): for each plan, a clean
 * run on the GPU counts the checked CUDA calls it makes (k_max); then the k-th of them is
 * failed with cudaErrorMemoryAllocation (a non-sticky error: the context stays usable),
 * for every k up to a bound and a spread sample above it. Each run must either give the
 * rows of the same plan on the CPU or fail cleanly: SL_EDEVICE, SL_EBUDGET or SL_ENOMEM
 * with a message naming the CUDA error or the GPU, within the deadline_ms option (no
 * hang), with no device memory and no host allocation left once the query is destroyed,
 * and the engine still giving the right rows afterwards. Plans: GPU joins materialized
 * and aggregated, group-by, sort, filter + project, a join over host tables that it
 * uploads, and a join on string keys. Skipped without a GPU.
 *
 * SLUICE_CUDA_FAULTS=N (a test setting, read here only) tries at most N values of k:
 * every k when k_max <= N, else the first N/2 and N/2 spread over the rest (default 360;
 * a small N keeps a compute-sanitizer run short). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_int.h"
#include "gpu_int.h"
#include "gpu_test.h"
#include "internal.h"
#include "sl_test.h"
#include "table_hash.h"

#define DEFAULT_POINTS 360
#define DEADLINE_MS 10000
#define CHECK_EVERY 8 /* a clean run after every 8th failed one */
#define MAX_SHOWN 24  /* distinct error messages printed per case */

/* A plan of the sweep: plan text, or (host_inputs set) a join `host_join` over the
 * outputs a and b of host_inputs, computed on the CPU beforehand and added as tables. */
struct fault_plan {
    const char *text;
    const char *host_inputs;
    const char *host_join;
};

struct host_tables {
    sl_table_t *a, *b;
};

static sl_engine_t *engine_at(enum sl_placement pl)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = 2;
    cfg.placement = pl;
    cfg.morsel_rows_gpu = 1 << 13; /* several GPU tasks per input */
    cfg.deadline_ms = DEADLINE_MS;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    return e;
}

static void host_tables_make(const struct fault_plan *fp, struct host_tables *ht)
{
    *ht = (struct host_tables){NULL, NULL};
    if (!fp->host_inputs)
        return;
    sl_engine_t *e = sl_test_cpu_engine(2, 0);
    sl_plan_t *p;
    sl_query_t *q;
    SL_ASSERT_OK(sl_plan_create(&p));
    SL_ASSERT_OK(sl_plan_parse(p, fp->host_inputs, "inputs.plan"));
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    SL_ASSERT_OK(sl_query_run(q));
    SL_ASSERT_OK(sl_query_result(q, "a", &ht->a));
    SL_ASSERT_OK(sl_query_result(q, "b", &ht->b));
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_engine_close(e);
}

static int plan_build(const struct fault_plan *fp, const struct host_tables *ht, sl_plan_t *p)
{
    if (!fp->host_inputs)
        return sl_plan_parse(p, fp->text, "t.plan");
    int na, nb, nj, rc = sl_plan_add_table(p, ht->a, &na);
    if (rc == SL_OK)
        rc = sl_plan_add_table(p, ht->b, &nb);
    if (rc == SL_OK)
        rc = sl_plan_add(p, "join", (int[]){na, nb}, 2, fp->host_join, &nj);
    return rc == SL_OK ? sl_plan_output(p, nj, "r") : rc;
}

/* Runs the plan on e: SL_OK and the fingerprint of all outputs in *out, or the error
 * with its message in msg. *gpu_tasks (may be NULL): tasks that ran on a GPU. */
static int run(sl_engine_t *e, const struct fault_plan *fp, const struct host_tables *ht,
               struct sl_test_rows *out, char *msg, size_t msg_len, int64_t *gpu_tasks)
{
    sl_plan_t *p = NULL;
    sl_query_t *q = NULL;
    *out = (struct sl_test_rows){0, 0};
    msg[0] = 0;
    int rc = sl_plan_create(&p);
    if (rc == SL_OK)
        rc = plan_build(fp, ht, p);
    if (rc == SL_OK)
        rc = sl_query_create(e, p, &q);
    if (rc == SL_OK)
        rc = sl_query_run(q);
    if (rc < 0)
        snprintf(msg, msg_len, "%s", q ? sl_query_errmsg(q) : sl_last_errmsg());
    for (int i = 0; rc == SL_OK && i < sl_plan_num_outputs(p); i++) {
        sl_table_t *t = NULL;
        rc = sl_query_result(q, sl_plan_output_at(p, i, NULL), &t);
        if (rc == SL_OK)
            sl_test_rows_add(out, t);
        sl_table_unref(t);
    }
    const struct sl_explain *ex;
    if (gpu_tasks && rc == SL_OK && sl_query_explain(q, &ex) == SL_OK) {
        *gpu_tasks = 0;
        for (int i = 0; i < ex->n_pipelines; i++)
            *gpu_tasks += ex->pipelines[i].gpu_tasks_measured;
    }
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return rc;
}

static int64_t live_allocs(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    return c.live_allocs;
}

static int64_t gpu_in_use(sl_engine_t *e)
{
    struct sl_mem_stats st = SL_MEM_STATS_INIT;
    SL_ASSERT_OK(sl_engine_mem_stats(e, &st));
    return st.gpu_in_use;
}

/* The i-th of n points of [0, k_max): every k when they fit, else the first n/2 and
 * n/2 spread evenly over the rest. */
static int64_t point_at(int64_t i, int64_t n, int64_t k_max)
{
    if (k_max <= n || i < n / 2)
        return i;
    int64_t dense = n / 2, rest = n - dense;
    return dense + (i - dense) * (k_max - dense) / rest;
}

static int64_t points_wanted(void)
{
    const char *s = getenv("SLUICE_CUDA_FAULTS");
    int64_t n = s && *s ? strtoll(s, NULL, 10) : DEFAULT_POINTS;
    return n > 1 ? n : 2;
}

/* A clean failure names what failed: the CUDA error, or the GPU. */
static int names_the_fault(const char *msg)
{
    return strstr(msg, "cudaError") || strstr(msg, "GPU") || strstr(msg, "device");
}

/* Prints msg the first time one with its first 72 characters is seen. */
static void show_once(int64_t k, int rc, const char *msg)
{
    static char seen[MAX_SHOWN][73];
    static int n_seen;
    for (int i = 0; i < n_seen; i++)
        if (strncmp(seen[i], msg, 72) == 0)
            return;
    if (n_seen >= MAX_SHOWN)
        return;
    snprintf(seen[n_seen++], 73, "%.72s", msg);
    printf("  k=%lld: %s: %s\n", (long long)k, sl_err_name(rc), msg);
}

/* What a sweep found wrong: every problem is printed (the first MAX_SHOWN of a case)
 * and the case fails at its end, so that one GPU run shows them all. */
static int n_problems;
#define PROBLEM(...)                                                                    \
    do {                                                                                \
        if (n_problems++ < MAX_SHOWN) {                                                 \
            printf("PROBLEM: " __VA_ARGS__);                                            \
            printf("\n");                                                               \
        }                                                                               \
    } while (0)

/* A sweep's reference and counters. */
struct sweep_state {
    struct sl_test_rows want;
    int64_t host_base; /* host allocations the engine keeps between queries */
    int64_t gpu_base;  /* GPU bytes in use between queries (0 expected) */
    int failed;
};

/* One run with the k-th checked call failing; checks its outcome and what it left. */
static void fault_at(sl_engine_t *e, const struct fault_plan *fp, const struct host_tables *ht,
                     int64_t k, struct sweep_state *st)
{
    char msg[1024];
    struct sl_test_rows got;
    fprintf(stderr, "k=%lld\n", (long long)k); /* the last one names the call of a crash */
    sl__cuda_fail_after(k, cudaErrorMemoryAllocation);
    int rc = run(e, fp, ht, &got, msg, sizeof msg, NULL);
    sl__cuda_fail_after(-1, 0);
    if (rc == SL_OK && (got.rows != st->want.rows || got.hash != st->want.hash))
        PROBLEM("call %lld failing: %lld rows, want %lld (or other values)", (long long)k,
                (long long)got.rows, (long long)st->want.rows);
    if (rc != SL_OK && rc != SL_EDEVICE && rc != SL_EBUDGET && rc != SL_ENOMEM)
        PROBLEM("call %lld failing: %s (%s)", (long long)k, sl_err_name(rc), msg);
    else if (rc != SL_OK && !names_the_fault(msg))
        PROBLEM("call %lld failing: %s with a message naming neither the CUDA error nor the "
                "GPU: \"%s\"", (long long)k, sl_err_name(rc), msg);
    if (rc != SL_OK) {
        st->failed++;
        show_once(k, rc, msg);
    }
    int64_t left = gpu_in_use(e);
    if (left != st->gpu_base) {
        PROBLEM("call %lld failing: %lld bytes of GPU memory in use after the query, want "
                "%lld", (long long)k, (long long)left, (long long)st->gpu_base);
        st->gpu_base = left; /* report each leak once */
    }
    if (live_allocs() != st->host_base) {
        PROBLEM("call %lld failing: %lld host allocations left, want %lld", (long long)k,
                (long long)live_allocs(), (long long)st->host_base);
        st->host_base = live_allocs();
    }
    if (rc != SL_OK && st->failed % CHECK_EVERY == 0) { /* the engine still works */
        rc = run(e, fp, ht, &got, msg, sizeof msg, NULL);
        if (rc != SL_OK || got.rows != st->want.rows || got.hash != st->want.hash)
            PROBLEM("after call %lld failed: a clean run gives %s (%s), %lld rows of %lld",
                    (long long)k, sl_err_name(rc), msg, (long long)got.rows,
                    (long long)st->want.rows);
    }
}

/* Each GPU slot (a ring of gpu_depth, 4 by default) allocates its list of deferred
 * downloads when a task first uses it, and a failed run shifts which slots the next
 * tasks take: engine state, freed at close, that the first GPU run showed as one-time
 * "leaks" (at most depth - 1 per case). One-task queries between runs of the plan move
 * the ring so that every task of the plan meets every slot beforehand: alternately one
 * and two of them, because a plan of T tasks plus a fixed number can be a multiple of
 * the depth (the 3-task string-key join plus one is 4, which left its join on one slot
 * and failed the second GPU run); a pair moves the ring by 2T + 3, odd, so 2 * depth
 * runs meet every slot of a ring whose depth is a power of two. */
static void warm_slots(sl_engine_t *e, const struct fault_plan *fp,
                       const struct host_tables *ht)
{
    static const struct fault_plan one = {.text = "a = gen.keys rows=1000 kind=unique\n"
                                                  "output a\n"};
    char msg[1024];
    struct sl_test_rows got;
    for (int i = 0; i < 2 * SL__GPU_DEPTH_DEFAULT; i++) {
        for (int j = 0; j <= (i & 1); j++)
            SL_ASSERT_OK(run(e, &one, ht, &got, msg, sizeof msg, NULL));
        SL_ASSERT_OK(run(e, fp, ht, &got, msg, sizeof msg, NULL));
    }
}

static void sweep(const struct fault_plan *fp)
{
    NEED_GPU();
    setvbuf(stdout, NULL, _IOLBF, 0);
    sl_test_config_off(1); /* the call counts are for these settings */
    struct host_tables ht;
    host_tables_make(fp, &ht);
    char msg[1024];
    struct sweep_state st = {.failed = 0};
    struct sl_test_rows got;
    sl_engine_t *cpu = engine_at(SL_PLACE_CPU);
    SL_ASSERT_OK(run(cpu, fp, &ht, &st.want, msg, sizeof msg, NULL));
    sl_engine_close(cpu);
    assert_true(st.want.rows > 0);

    sl_engine_t *e = engine_at(SL_PLACE_GPU);
    int64_t on_gpu = 0;
    warm_slots(e, fp, &ht); /* also fills the caches */
    int64_t calls0 = sl__cuda_checked_calls();
    SL_ASSERT_OK(run(e, fp, &ht, &got, msg, sizeof msg, &on_gpu));
    int64_t k_max = sl__cuda_checked_calls() - calls0;
    st.host_base = live_allocs();
    st.gpu_base = gpu_in_use(e);
    assert_true(got.rows == st.want.rows && got.hash == st.want.hash);
    printf("%lld checked CUDA calls, %lld tasks on the GPU, %lld rows; between queries %lld "
           "GPU bytes in use\n", (long long)k_max, (long long)on_gpu, (long long)st.want.rows,
           (long long)st.gpu_base);
    assert_true(on_gpu > 0 && k_max > 0);
    if (st.gpu_base != 0)
        PROBLEM("%lld bytes of GPU memory in use between queries", (long long)st.gpu_base);

    int64_t n = points_wanted(), tried = 0;
    for (int64_t i = 0; i < n && i < k_max; i++, tried++)
        fault_at(e, fp, &ht, point_at(i, n, k_max), &st);
    int rc = run(e, fp, &ht, &got, msg, sizeof msg, &on_gpu);
    if (rc != SL_OK || got.rows != st.want.rows || got.hash != st.want.hash)
        PROBLEM("after the sweep: a clean run gives %s (%s)", sl_err_name(rc), msg);
    printf("%lld of %lld calls failed in turn: %d queries failed cleanly, %lld gave the "
           "right rows; afterwards %lld tasks ran on the GPU\n", (long long)tried,
           (long long)k_max, st.failed, (long long)(tried - st.failed), (long long)on_gpu);
    sl_engine_close(e);
    sl_table_unref(ht.a);
    sl_table_unref(ht.b);
    if (live_allocs() != 0)
        PROBLEM("after closing the engine: %lld host allocations left", (long long)live_allocs());
    if (n_problems)
        fail_msg("%d problems (the first %d printed above)", n_problems, MAX_SHOWN);
    assert_true(st.failed > 0);
}

static void sweep_text(const char *text)
{
    sweep(&(struct fault_plan){.text = text});
}

#define JOIN_INPUTS                                                                     \
    "b = gen.keys rows=3000 kind=unique seed=1 payloads=1\n"                            \
    "a = gen.keys rows=20000 kind=fk pk_rows=4000 match=0.7 seed=2 payloads=1\n"

SL_TEST(join_materialized) { sweep_text(JOIN_INPUTS "r = join(a, b) on=k\noutput r\n"); }

SL_TEST(join_aggregated)
{
    sweep_text(JOIN_INPUTS "r = join(a, b) on=k output=aggregate\noutput r\n");
}

SL_TEST(group_by)
{
    sweep_text("a = gen.keys rows=20000 kind=m2m distinct=500 seed=3 payloads=1\n"
               "r = aggregate(a) keys=k aggs=\"count(*), sum(p1), min(p1), max(p1)\"\n"
               "output r\n");
}

SL_TEST(sort)
{
    sweep_text("a = gen.keys rows=20000 kind=m2m distinct=2^30 seed=5 payloads=1\n"
               "r = sort(a) by=k\noutput r\n");
}

SL_TEST(filter_project)
{
    sweep_text("a = gen.keys rows=20000 kind=m2m distinct=2^20 seed=6 payloads=2\n"
               "f = filter(a) where=\"p1 % 3 <> 0\"\n"
               "r = project(f) columns=\"k, v = p1 * 2 + p2\"\noutput r\n");
}

/* The join's inputs are host tables (made on the CPU), uploaded by the GPU worker. */
SL_TEST(host_join_uploads)
{
    sweep(&(struct fault_plan){.host_inputs = JOIN_INPUTS "output a\noutput b\n",
                               .host_join = "on=k"});
}

SL_TEST(string_key_join)
{
    sweep_text("a = gen.values rows=6000 type=utf8 cardinality=400 column=s seed=1\n"
               "b = gen.values rows=400 type=utf8 cardinality=400 column=s seed=1\n"
               "r = join(a, b) on=s\noutput r\n");
}
