/* Tests the out-of-core sort on a GPU (operators/sort/sort_cuda_ooc.c, ooc_runs_cuda.c,
 * ooc_merge.c): host-resident inputs larger than the engine's GPU budget (8 to 64 MiB)
 * are sorted in several runs on the GPU and merged (buckets re-sorted on the GPU, or
 * ranges on CPU threads: ooc_gpu_and_cpu_merge forces each; the buckets read by copies,
 * batched copies or the zero-copy kernel: ooc_gpu_merge_gathers); the result must equal the
 * CPU sort row for row (both are stable; payload p1 is the input position). Keys: int32
 * and int64, random, few distinct (duplicates), one heavy key, power-law (Zipf-like)
 * skew, already sorted, reversed, extremes; ascending and descending; 0, 1 and 4 payload
 * columns (int32, int64, float64, float32); empty input, one row. Every case checks that
 * the sort went out of core (the operator's state), that the pool's peak stayed within
 * the budget, cross-checked with cudaMemGetInfo, and that every device block went back.
 * A budget too small even for one run falls back to the CPU sort (same result) and the
 * engine stays usable. Also small cases for compute-sanitizer. Skipped without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "exec_int.h"
#include "gpu_test.h"
#include "gpu_worker_int.h"
#include "sort/sort_op.h"

enum { K_RANDOM, K_FEW, K_HEAVY, K_ZIPF, K_SORTED, K_REVERSE, K_EXTREME };

struct spec {
    int64_t rows;
    int key64, n_pay, keys;
    int64_t chunk;  /* rows per input batch (0: 65536) */
    uint64_t seed;
};

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static int64_t key_of(const struct spec *sp, int64_t i, uint64_t *s)
{
    uint64_t x = rnd(s);
    switch (sp->keys) {
    case K_FEW: return (int64_t)(x % 100) - 50;
    case K_HEAVY: return x % 3 ? 7 : (int64_t)rnd(s);
    case K_ZIPF: { /* P(key >= k) ~ 1/k: a power law, a few keys very frequent */
        double u = (double)(x >> 11) / 9007199254740992.0;
        return (int64_t)(1.0 / (u + 1e-9));
    }
    case K_SORTED: return i / 5 - sp->rows / 10;
    case K_REVERSE: return sp->rows - i;
    case K_EXTREME: {
        int64_t ex[] = {sp->key64 ? INT64_MIN : INT32_MIN, sp->key64 ? INT64_MAX : INT32_MAX,
                        0, -1};
        return x % 2 ? ex[x % 4] : (int64_t)rnd(s);
    }
    default: return (int64_t)x;
    }
}

static sl_table_t *make(const struct spec *sp)
{
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    const char *names[5] = {"k", "p1", "p2", "p3", "p4"};
    enum sl_type ty[5] = {sp->key64 ? SL_TYPE_INT64 : SL_TYPE_INT32, SL_TYPE_INT32,
                          SL_TYPE_INT64, SL_TYPE_FLOAT64, SL_TYPE_FLOAT32};
    int nc = 1 + sp->n_pay;
    uint64_t s = sp->seed * 0x9E3779B97F4A7C15ull + 1;
    int64_t chunk = sp->chunk ? sp->chunk : 65536, row = 0;
    for (int64_t lo = 0; lo < sp->rows || lo == 0; lo += chunk) {
        int64_t m = sp->rows - lo < chunk ? sp->rows - lo : chunk;
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, nc, names, ty, m));
        for (int64_t i = 0; i < m; i++, row++) {
            int64_t k = key_of(sp, row, &s);
            if (sp->key64)
                ((int64_t *)sl_batch_column_data(b, 0))[i] = k;
            else
                ((int32_t *)sl_batch_column_data(b, 0))[i] = (int32_t)k;
            for (int c = 1; c < nc; c++) {
                void *p = sl_batch_column_data(b, c);
                if (c == 1)
                    ((int32_t *)p)[i] = (int32_t)row; /* the input position: stability */
                else if (c == 2)
                    ((int64_t *)p)[i] = (int64_t)rnd(&s);
                else if (c == 3)
                    ((double *)p)[i] = (double)(int64_t)rnd(&s) / 1e6;
                else
                    ((float *)p)[i] = (float)(rnd(&s) % 100000) / 7.0f;
            }
        }
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
        if (m == 0)
            break;
    }
    return t;
}

/* A table's rows as one array of 8-byte words per column, in order. */
struct flat {
    int64_t rows;
    int cols;
    uint64_t *v; /* cols x rows */
};

static struct flat flatten(sl_table_t *t)
{
    struct flat f = {sl_table_num_rows(t), 0, NULL};
    int64_t at = 0;
    for (int64_t bi = 0; bi < sl_table_num_batches(t); bi++) {
        sl_batch_t *b = sl_table_batch(t, bi);
        if (!f.v) {
            f.cols = sl_batch_num_columns(b);
            f.v = calloc((size_t)(f.rows * f.cols + 1), 8);
        }
        for (int c = 0; c < f.cols; c++) {
            struct sl_column col;
            sl_batch_column(b, c, &col);
            assert_null(col.validity);
            for (int64_t r = 0; r < col.length; r++) {
                int64_t i = col.offset + r;
                uint64_t v = 0;
                if (sl_type_width(col.type) == 8)
                    memcpy(&v, (const char *)col.data + i * 8, 8);
                else
                    memcpy(&v, (const char *)col.data + i * 4, 4);
                f.v[(size_t)c * (size_t)f.rows + (size_t)(at + r)] = v;
            }
        }
        at += sl_batch_num_rows(b);
    }
    return f;
}

/* The out-of-core merge the engines force (option debug_ooc_sort_merge), how its GPU
 * merge reads buckets (debug_ooc_sort_gather), and their pinned result memory
 * (gpu_result_pinned: -1 = none, so buckets go through pinned blocks and copy tasks). */
static const char *force_merge = "auto", *force_gather = "auto";
static const char *graded = "false"; /* debug_ooc_graded_runs */
static const char *unpacked = "false"; /* debug_ooc_unpacked_runs */
static const char *run_buckets = "false"; /* debug_ooc_run_buckets */
static const char *graded_buckets = "false"; /* debug_ooc_graded_buckets */
static const char *narrow_runs = "auto"; /* debug_ooc_narrow_runs */
static const char *narrow_tops = "check"; /* debug_ooc_narrow_tops: pass 1's against the
                                             tables' in every case */
static const char *presplit = "auto"; /* debug_ooc_presplit */
static const char *pass1_buffers = "auto"; /* debug_ooc_pass1_buffers */
static const char *sink_mode = "auto"; /* debug_sort_sink */
static const char *sets = "auto"; /* debug_ooc_sets */
static int64_t result_pinned = 0;
static int pin_input = 0; /* check(): the input table pinned (sl_table_pin) */

static sl_engine_t *engine(enum sl_placement pl, int64_t gpu_mem)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = 2;
    cfg.placement = pl;
    cfg.gpu_mem_limit = gpu_mem;
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "debug_ooc_sort_merge", force_merge));
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "debug_ooc_sort_gather", force_gather));
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "debug_ooc_graded_runs", graded));
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "debug_ooc_unpacked_runs", unpacked));
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "debug_ooc_run_buckets", run_buckets));
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "debug_ooc_graded_buckets", graded_buckets));
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "debug_ooc_narrow_runs", narrow_runs));
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "debug_ooc_narrow_tops", narrow_tops));
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "debug_ooc_presplit", presplit));
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "debug_ooc_pass1_buffers", pass1_buffers));
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "debug_sort_sink", sink_mode));
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "debug_ooc_sets", sets));
    cfg.gpu_result_pinned = result_pinned;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    return e;
}

/* Sorts `in` by `by`; *ooc / *gpu: how the GPU finalized it. */
static int last_gpu_merge; /* the last run's merge: 1 on the GPU, 0 on CPU threads */
static int64_t last_runs;  /* and its number of runs */
static int last_pass1_cuts; /* its GPU merge's cuts were found in pass 1 */
static int64_t last_gpu_batches; /* batches the sink kept on the GPU */
static int last_packed;          /* its runs were packed */
static int last_narrow;          /* and narrow */
static int64_t last_buckets;     /* the GPU merge's buckets */
static int last_sets;            /* pass 1's buffer sets */

static struct flat run(sl_engine_t *e, sl_table_t *in, const char *by, int *ooc, int *gpu)
{
    sl_plan_t *p;
    int ni, ns;
    SL_ASSERT_OK(sl_plan_create(&p));
    SL_ASSERT_OK(sl_plan_add_table(p, in, &ni));
    SL_ASSERT_OK(sl_plan_add(p, "sort", &ni, 1, by, &ns));
    SL_ASSERT_OK(sl_plan_output(p, ns, "o"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    int rc = sl_query_run(q);
    if (rc != SL_OK)
        fail_msg("query failed: %s", sl_query_errmsg(q));
    const struct sort_global *g = q->ops[ns].gstate;
    if (ooc)
        *ooc = g->ooc;
    last_gpu_merge = g->gpu_merge;
    last_runs = g->n_ooc_runs;
    last_pass1_cuts = g->ooc_pass1_cuts;
    last_gpu_batches = g->ooc_gpu_batches;
    last_packed = g->ooc_packed;
    last_narrow = g->ooc_narrow;
    last_buckets = g->n_ooc_buckets;
    last_sets = g->ooc_sets;
    if (gpu)
        *gpu = g->m.gpu;
    sl_table_t *out;
    SL_ASSERT_OK(sl_query_result(q, "o", &out));
    struct flat f = flatten(out);
    sl_table_unref(out);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return f;
}

static void compare(const struct flat *want, const struct flat *got, const char *what)
{
    int64_t bad = -1;
    for (int64_t i = 0; got->rows == want->rows && i < want->rows * want->cols && bad < 0; i++)
        if (got->v[i] != want->v[i])
            bad = i;
    if (bad >= 0)
        printf("  %s: first difference: column %lld row %lld\n", what,
               (long long)(bad / want->rows), (long long)(bad % want->rows));
    assert_int_equal(got->rows, want->rows);
    assert_true(bad < 0);
}

/* The CPU sort vs the GPU engine with budget gpu_mem; expect_ooc: 1 out of core, 0 not,
 * -1 either. */
static void check(const struct spec *sp, const char *by, int64_t gpu_mem, int expect_ooc)
{
    sl_table_t *in = make(sp);
    if (pin_input)
        SL_ASSERT_OK(sl_table_pin(in));
    sl_engine_t *cpu = engine(SL_PLACE_CPU, 0);
    struct flat want = run(cpu, in, by, NULL, NULL);
    sl_engine_close(cpu);
    assert_int_equal(want.rows, sp->rows);
    size_t free0 = 0, free1 = 0, total = 0;
    CU(cudaMemGetInfo(&free0, &total));
    sl_engine_t *gpu = engine(SL_PLACE_GPU, gpu_mem);
    int ooc = -1, on_gpu = -1;
    struct flat got = run(gpu, in, by, &ooc, &on_gpu);
    CU(cudaMemGetInfo(&free1, &total));
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    sl_engine_mem_stats(gpu, &ms);
    printf("sort %s: %lld rows, key %d B, %d payloads, keys %d, budget %lld MiB: out of core "
           "%d (%lld runs, %d sets), in GPU %d, GPU merge %d, pool peak %.1f MiB, device free memory %+.1f MiB\n", by,
           (long long)sp->rows, sp->key64 ? 8 : 4, sp->n_pay, sp->keys,
           (long long)(gpu_mem >> 20), ooc, (long long)last_runs, last_sets, on_gpu, last_gpu_merge, ms.gpu_peak / 1048576.0,
           ((double)free1 - (double)free0) / 1048576.0);
    compare(&want, &got, by);
    if (expect_ooc >= 0)
        assert_int_equal(ooc, expect_ooc);
    assert_int_equal(ms.gpu_in_use, 0); /* every device block went back to the pool */
    /* The copy streams were borrowed from the runtime and given back: the GPU's pool
     * holds the two (pass 2 borrows pass 1's again) and the operator made none. */
    if (ooc == 1)
        assert_int_equal(gpu->gpus[0]->n_side, 2);
    assert_true(ms.gpu_peak <= gpu_mem);
    /* Nothing allocates behind the pool: the device lost at most the budget (plus the
     * streams' and events' few MiB). */
    assert_true((double)free0 - (double)free1 <= (double)gpu_mem + 32.0 * 1048576);
    sl_engine_close(gpu);
    free(want.v);
    free(got.v);
    sl_table_unref(in);
}

#define MIB ((int64_t)1 << 20)

SL_TEST(ooc_int32_random_budgets)
{
    REQUIRE_GPU();
    /* 2^22 rows x 8 B = 32 MiB of pairs: runs of 2^16..2^19 rows. */
    struct spec a = {.rows = (int64_t)1 << 22, .n_pay = 1, .seed = 1};
    check(&a, "by=k", 8 * MIB, 1);
    check(&a, "by=k", 16 * MIB, 1);
    check(&a, "by=\"k DESC\"", 24 * MIB, 1);
}

SL_TEST(ooc_int64_payloads)
{
    REQUIRE_GPU();
    struct spec a = {.rows = 3000000, .key64 = 1, .n_pay = 4, .chunk = 100003, .seed = 2};
    check(&a, "by=k", 32 * MIB, 1);
    check(&a, "by=\"k DESC\"", 64 * MIB, 1);
    struct spec b = {.rows = 2500000, .key64 = 1, .n_pay = 0, .seed = 3};
    check(&b, "by=k", 8 * MIB, 1);
    struct spec c = {.rows = 2500000, .n_pay = 4, .seed = 4};
    check(&c, "by=k", 16 * MIB, 1);
}

SL_TEST(ooc_duplicates_and_skew)
{
    REQUIRE_GPU();
    struct spec few = {.rows = 3000000, .n_pay = 1, .keys = K_FEW, .seed = 5};
    check(&few, "by=k", 8 * MIB, 1);
    struct spec heavy = {.rows = 3000000, .key64 = 1, .n_pay = 4, .keys = K_HEAVY, .seed = 6};
    check(&heavy, "by=\"k DESC\"", 32 * MIB, 1);
    struct spec zipf = {.rows = 3000000, .n_pay = 1, .keys = K_ZIPF, .seed = 7};
    check(&zipf, "by=k", 12 * MIB, 1);
    zipf.key64 = 1;
    check(&zipf, "by=k", 16 * MIB, 1);
}

SL_TEST(ooc_sorted_reversed_extremes)
{
    REQUIRE_GPU();
    struct spec s = {.rows = 2000000, .n_pay = 4, .keys = K_SORTED, .seed = 8};
    check(&s, "by=k", 16 * MIB, 1);
    s.keys = K_REVERSE;
    check(&s, "by=k", 16 * MIB, 1);
    check(&s, "by=\"k DESC\"", 16 * MIB, 1);
    struct spec x = {.rows = 2000000, .n_pay = 1, .keys = K_EXTREME, .seed = 9};
    check(&x, "by=k", 8 * MIB, 1);
    x.key64 = 1;
    check(&x, "by=\"k DESC\"", 16 * MIB, 1);
}

/* Empty input: nothing to sort on any device. One row: under 8 MiB the sink keeps it on
 * the host (less than its 16 MiB margin is left), so it is one run out of core; under
 * the default budget it is sorted in GPU memory. */
SL_TEST(ooc_empty_and_one_row)
{
    REQUIRE_GPU();
    struct spec e = {.rows = 0, .n_pay = 1, .seed = 10};
    check(&e, "by=k", 8 * MIB, 0);
    struct spec one = {.rows = 1, .n_pay = 4, .seed = 11};
    check(&one, "by=k", 8 * MIB, 1);
    check(&one, "by=\"k DESC\"", 1024 * MIB, 0);
}

/* A budget too small even for one run: the CPU sorts (can_run says no), same result;
 * then the same engine sorts out of core with a usable budget... of another engine, and
 * this one still runs queries. */
SL_TEST(ooc_budget_too_small_falls_back_to_cpu)
{
    REQUIRE_GPU();
    struct spec a = {.rows = 1000000, .n_pay = 1, .seed = 12};
    check(&a, "by=k", 5 * MIB, 0);
    sl_table_t *in = make(&a);
    sl_engine_t *e = engine(SL_PLACE_GPU, 5 * MIB);
    for (int i = 0; i < 2; i++) {
        int ooc = -1;
        struct flat got = run(e, in, "by=k", &ooc, NULL);
        assert_int_equal(got.rows, a.rows);
        assert_int_equal(ooc, 0);
        free(got.v);
    }
    sl_engine_close(e);
    sl_table_unref(in);
}

/* Tiny input for racecheck: 7 MiB leave 1 MiB for runs (two runs of 2^15 rows). */
SL_TEST(ooc_racecheck_tiny)
{
    REQUIRE_GPU();
    struct spec a = {.rows = 40000, .n_pay = 1, .keys = K_FEW, .chunk = 9999, .seed = 15};
    check(&a, "by=k", 7 * MIB, 1);
}

/* Small input for compute-sanitizer: several runs, two payload paths. */
SL_TEST(ooc_sanitize_small)
{
    REQUIRE_GPU();
    struct spec a = {.rows = 300000, .n_pay = 4, .keys = K_FEW, .chunk = 7777, .seed = 13};
    check(&a, "by=k", 8 * MIB, 1);
    struct spec b = {.rows = 300000, .key64 = 1, .n_pay = 1, .seed = 14};
    check(&b, "by=\"k DESC\"", 8 * MIB, 1);
}

/* Both merges forced (debug_ooc_sort_merge): buckets re-sorted on the GPU, ranges on
 * CPU threads; many runs, 8-byte keys with payloads, one heavy key (buckets larger than
 * a run, cut again at exact ranks), few keys, descending. */
SL_TEST(ooc_gpu_and_cpu_merge)
{
    REQUIRE_GPU();
    const char *modes[] = {"gpu", "cpu"};
    for (int m = 0; m < 2; m++) {
        force_merge = modes[m];
        struct spec a = {.rows = (int64_t)1 << 22, .n_pay = 1, .seed = 21};
        check(&a, "by=k", 8 * MIB, 1);
        assert_int_equal(last_gpu_merge, 1 - m);
        struct spec h = {.rows = 3000000, .key64 = 1, .n_pay = 4, .keys = K_HEAVY, .seed = 22};
        check(&h, "by=\"k DESC\"", 32 * MIB, 1);
        assert_int_equal(last_gpu_merge, 1 - m);
        struct spec f = {.rows = 3000000, .n_pay = 0, .keys = K_FEW, .chunk = 77777, .seed = 23};
        check(&f, "by=k", 8 * MIB, 1);
        struct spec z = {.rows = 2000000, .key64 = 1, .n_pay = 1, .keys = K_ZIPF, .seed = 24};
        check(&z, "by=k", 16 * MIB, 1);
    }
    force_merge = "auto";
}

/* The GPU merge with each way of reading a bucket's slices (debug_ooc_sort_gather), into
 * a pinned result and into a pageable one (pinned blocks, copy tasks): many runs,
 * 8-byte keys with 4- and 8-byte payloads, one heavy key (buckets of one run's slice,
 * the others empty), few keys without payloads, descending; then budgets from 7 to
 * 12 MiB in steps of 1/2 MiB, so that pass 2's tables fit beside whole runs or only
 * beside smaller buckets (or not at all: the CPU merges). */
SL_TEST(ooc_gpu_merge_gathers)
{
    REQUIRE_GPU();
    const char *how[] = {"copy", "batch", "kernel"};
    force_merge = "gpu";
    for (int m = 0; m < 3; m++) {
        force_gather = how[m];
        struct spec a = {.rows = (int64_t)1 << 22, .n_pay = 1, .seed = 31};
        check(&a, "by=k", 10 * MIB, 1);
        assert_int_equal(last_gpu_merge, 1);
        assert_true(last_runs >= 32);
        struct spec h = {.rows = 3000000, .key64 = 1, .n_pay = 4, .keys = K_HEAVY, .seed = 32};
        check(&h, "by=\"k DESC\"", 32 * MIB, 1);
        assert_int_equal(last_gpu_merge, 1);
        struct spec f = {.rows = 2000000, .n_pay = 0, .keys = K_FEW, .chunk = 77777, .seed = 33};
        result_pinned = -1;
        check(&f, "by=k", 8 * MIB, 1);
        assert_int_equal(last_gpu_merge, 1);
        struct spec z = {.rows = 1500000, .key64 = 1, .n_pay = 1, .keys = K_ZIPF, .seed = 34};
        check(&z, "by=\"k DESC\"", 12 * MIB, 1);
        result_pinned = 0;
    }
    force_gather = "kernel";
    struct spec b = {.rows = 1000000, .n_pay = 1, .keys = K_FEW, .seed = 35};
    for (int64_t kib = 7 * 1024; kib <= 12 * 1024; kib += 512)
        check(&b, "by=k", kib * 1024, -1);
    force_merge = force_gather = "auto";
}

/* By default the GPU merge takes more than 64 runs (batched copies, or the kernel): 2^24
 * rows under 16 MiB are well over 64 runs (runs of 2^17 rows or fewer), merged on the
 * GPU (up to 64 runs before, else on the CPU); the same with the kernel forced. */
SL_TEST(ooc_many_runs_merge_on_gpu)
{
    REQUIRE_GPU();
    const char *how[] = {"auto", "kernel"};
    for (int m = 0; m < 2; m++) {
        force_gather = how[m];
        struct spec a = {.rows = (int64_t)1 << 24, .n_pay = 1, .keys = K_ZIPF, .seed = 36};
        check(&a, "by=k", 16 * MIB, 1);
        assert_int_equal(last_gpu_merge, 1);
        assert_true(last_runs > 64);
    }
    force_gather = "auto";
}

/* The GPU merge's bucket cuts found in pass 1 (splitters sampled from the input, each
 * run split on the GPU as it is sorted) against those searched in the runs after it
 * (debug_ooc_sort_merge=late_cuts): both equal the CPU sort, on random, sorted,
 * reversed, few, heavy, Zipf and extreme keys of 4 and 8 bytes, ascending and
 * descending, batches of odd sizes, and pass 1's cuts taken where the runs are several
 * and every batch stayed on the host: budgets of at most 16 MiB, under which the sink
 * uploads none (sort_cuda.c; at 32 MiB it kept some on the GPU and the cuts were searched
 * after pass 1, H100 04:09 UTC). */
SL_TEST(ooc_pass1_cuts)
{
    REQUIRE_GPU();
    const struct spec cases[] = {
        {.rows = (int64_t)1 << 22, .n_pay = 1, .seed = 41},
        {.rows = 2000000, .n_pay = 1, .keys = K_SORTED, .chunk = 77777, .seed = 42},
        {.rows = 2000000, .key64 = 1, .n_pay = 0, .keys = K_REVERSE, .seed = 43},
        {.rows = 3000000, .n_pay = 1, .keys = K_FEW, .seed = 44},
        {.rows = 3000000, .key64 = 1, .n_pay = 4, .keys = K_HEAVY, .chunk = 100003, .seed = 45},
        {.rows = 3000000, .key64 = 1, .n_pay = 1, .keys = K_ZIPF, .seed = 46},
        {.rows = 2000000, .n_pay = 1, .keys = K_EXTREME, .seed = 47},
    };
    const char *by[] = {"by=k", "by=\"k DESC\""};
    const char *how[] = {"gpu", "late_cuts"};
    for (int h = 0; h < 2; h++) {
        force_merge = how[h];
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            check(&cases[i], by[i % 2], cases[i].n_pay == 4 ? 16 * MIB : 12 * MIB, 1);
            assert_int_equal(last_gpu_merge, 1);
            assert_true(last_runs >= 2);
            assert_int_equal(last_pass1_cuts, h == 0);
        }
    }
    force_merge = "auto";
}

/* Pass 1's cuts where the sink kept its first batches on the GPU (debug_sort_sink=upload,
 * budgets over 16 MiB: sort_cuda.c): the samples that fall in those batches are read by a
 * kernel (sl_k_gather_addrs), so pass 1 finds the cuts there too (before, such a sort
 * searched them in the runs after pass 1, as late_cuts still does). Equal to the CPU sort
 * on random, sorted, few, Zipf and heavy keys of 4 and 8 bytes, both directions, batches
 * of odd sizes. Then the default (auto): the whole input cannot sort in the budget, so
 * no batch goes up. */
SL_TEST(ooc_pass1_cuts_gpu_batches)
{
    REQUIRE_GPU();
    const struct spec cases[] = {
        {.rows = (int64_t)1 << 22, .n_pay = 1, .seed = 51},
        {.rows = 2000000, .n_pay = 1, .keys = K_SORTED, .chunk = 77777, .seed = 52},
        {.rows = 3000000, .key64 = 1, .n_pay = 1, .keys = K_ZIPF, .chunk = 100003, .seed = 53},
        {.rows = 3000000, .n_pay = 2, .keys = K_FEW, .seed = 54},
        {.rows = 2000000, .key64 = 1, .n_pay = 0, .keys = K_HEAVY, .seed = 55},
    };
    const char *by[] = {"by=k", "by=\"k DESC\""};
    const char *how[] = {"auto", "late_cuts"};
    sink_mode = "upload";
    for (int h = 0; h < 2; h++) {
        force_merge = how[h];
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            check(&cases[i], by[i % 2], i % 2 ? 48 * MIB : 32 * MIB, 1);
            assert_int_equal(last_gpu_merge, 1);
            assert_true(last_runs >= 2);
            assert_true(last_gpu_batches > 0);
            assert_int_equal(last_pass1_cuts, h == 0);
        }
    }
    force_merge = "auto";
    sink_mode = "auto";
    for (size_t i = 0; i < 2; i++) {
        check(&cases[i], by[i % 2], i % 2 ? 48 * MIB : 32 * MIB, 1);
        assert_int_equal(last_gpu_merge, 1);
        assert_int_equal(last_gpu_batches, 0);
        assert_int_equal(last_pass1_cuts, 1);
    }
}

/* Issue 23, "never slower with more memory": by default (debug_sort_sink=auto) one input
 * sorted out of core at budgets from 8 to 64 MiB has no batch on the GPU at any of them
 * (the sink uploads none: its input cannot sort in the budget), and the plan does not
 * shrink as the budget grows: runs never more, buckets never more (both capped at 32
 * runs' worth of rows, so the larger budgets run one plan), down to one run and no
 * merge where every row fits one (H100 00:37 UTC, session 20: the Zipf case at 64 MiB). Equal to the CPU sort at
 * each, in both sink modes; with debug_sort_sink=upload the sink's batches grow with
 * the budget (what made 1/2 slower than 1/4 on an H100). Random int32 pairs (packed,
 * narrow runs), Zipf int64 keys with two payloads. */
SL_TEST(ooc_budget_monotone_plan)
{
    REQUIRE_GPU();
    const struct spec cases[] = {
        {.rows = (int64_t)1 << 22, .n_pay = 1, .seed = 71},
        {.rows = 1000000, .key64 = 1, .n_pay = 2, .keys = K_ZIPF, .chunk = 50000, .seed = 72},
    };
    const int64_t budgets[] = {8 * MIB, 16 * MIB, 32 * MIB, 64 * MIB};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t runs = INT64_MAX, buckets = INT64_MAX, gpu_up = -1;
        int gpu_merge = 0;
        for (int b = 0; b < 4; b++) {
            sink_mode = "auto";
            check(&cases[i], i % 2 ? "by=\"k DESC\"" : "by=k", budgets[b], 1);
            printf("  auto at %lld MiB: %lld runs, GPU merge %d, %lld buckets, %lld GPU "
                   "batches\n", (long long)(budgets[b] >> 20), (long long)last_runs,
                   last_gpu_merge, (long long)last_buckets, (long long)last_gpu_batches);
            assert_int_equal(last_gpu_batches, 0);
            assert_true(last_runs <= runs);
            /* once merged on the GPU, there after, unless one run holds every row (no
             * merge: the Zipf case at 64 MiB) */
            assert_true(last_gpu_merge >= gpu_merge || last_runs == 1);
            if (last_gpu_merge && gpu_merge)
                assert_true(last_buckets <= buckets);
            runs = last_runs;
            gpu_merge = last_gpu_merge;
            buckets = last_gpu_merge ? last_buckets : INT64_MAX;
            sink_mode = "upload";
            check(&cases[i], i % 2 ? "by=\"k DESC\"" : "by=k", budgets[b], 1);
            printf("  upload at %lld MiB: %lld runs, %lld buckets, %lld GPU batches\n",
                   (long long)(budgets[b] >> 20), (long long)last_runs,
                   (long long)last_buckets, (long long)last_gpu_batches);
            if (b > 0)
                assert_true(last_gpu_batches >= gpu_up);
            gpu_up = last_gpu_batches;
        }
        assert_true(gpu_up > 0);
    }
    sink_mode = "auto";
}

/* Runs of one size against graded ones (debug_ooc_graded_runs: quarter and half runs at
 * both ends, four more), both equal to the CPU sort, merged on the GPU and on the CPU,
 * row counts that are and are not a multiple of the run size, random, sorted and Zipf
 * keys. */
SL_TEST(ooc_graded_runs)
{
    REQUIRE_GPU();
    const struct spec cases[] = {
        {.rows = (int64_t)1 << 22, .n_pay = 1, .seed = 61},
        {.rows = 3000001, .n_pay = 1, .keys = K_SORTED, .chunk = 77777, .seed = 62},
        {.rows = 2500000, .key64 = 1, .n_pay = 2, .keys = K_ZIPF, .seed = 63},
    };
    const char *merge[] = {"gpu", "cpu"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int m = 0; m < 2; m++) {
            force_merge = merge[m];
            graded = "false";
            check(&cases[i], i % 2 ? "by=\"k DESC\"" : "by=k", 10 * MIB, 1);
            int64_t even = last_runs;
            graded = "true";
            check(&cases[i], i % 2 ? "by=\"k DESC\"" : "by=k", 10 * MIB, 1);
            assert_true(even >= 4);
            assert_int_equal(last_runs, even + 4);
            assert_int_equal(last_gpu_merge, m == 0);
        }
    force_merge = "auto";
    graded = "false";
}

/* Graded buckets (debug_ooc_graded_buckets: pass 1's cuts with four more splitters, the
 * first and the last bucket in a quarter, a quarter and a half) against buckets of one
 * size: four more buckets, both equal to the CPU sort; random, sorted and few keys,
 * packed runs and two payloads, both directions. */
SL_TEST(ooc_graded_buckets)
{
    REQUIRE_GPU();
    const struct spec cases[] = {
        {.rows = (int64_t)1 << 22, .n_pay = 1, .seed = 101},
        {.rows = 3000001, .n_pay = 1, .keys = K_SORTED, .chunk = 77777, .seed = 102},
        {.rows = 2500000, .key64 = 1, .n_pay = 2, .keys = K_FEW, .seed = 103},
    };
    force_merge = "gpu";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *by = i % 2 ? "by=\"k DESC\"" : "by=k";
        graded_buckets = "false";
        check(&cases[i], by, 10 * MIB, 1);
        int64_t even = last_buckets;
        assert_int_equal(last_pass1_cuts, 1);
        graded_buckets = "true";
        check(&cases[i], by, 10 * MIB, 1);
        assert_int_equal(last_gpu_merge, 1);
        assert_int_equal(last_pass1_cuts, 1);
        assert_true(even >= 4);
        if (cases[i].keys != K_FEW) /* few keys: equal splitters drop empty buckets */
            assert_int_equal(last_buckets, even + 4);
    }
    graded_buckets = "false";
    force_merge = "auto";
}

/* Pass 2's buckets larger than the runs where its budget holds them (pass 1's buffers
 * limit the runs to a power of two: 2^17 rows of 2^23 under 16 MiB, where pass 2 fits
 * 3 x 2^16; under 14 MiB, session 16's choice, it did not: both cut 86 buckets, H100
 * 13:45 UTC; at 16 MiB it passed at 13:57) against buckets of the runs' size (debug_ooc_run_buckets): fewer
 * buckets, pass 1's cuts made for them, both equal to the CPU sort; random and few keys. */
SL_TEST(ooc_large_buckets)
{
    REQUIRE_GPU();
    const struct spec cases[] = {
        {.rows = (int64_t)1 << 23, .n_pay = 1, .seed = 71},
        {.rows = 5000000, .n_pay = 1, .keys = K_FEW, .chunk = 77777, .seed = 72},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_buckets = "true";
        check(&cases[i], i ? "by=\"k DESC\"" : "by=k", 16 * MIB, 1);
        int64_t old = last_buckets;
        assert_int_equal(last_gpu_merge, 1);
        run_buckets = "false";
        check(&cases[i], i ? "by=\"k DESC\"" : "by=k", 16 * MIB, 1);
        assert_int_equal(last_gpu_merge, 1);
        assert_int_equal(last_pass1_cuts, 1);
        printf("buckets %lld (runs' size: %lld)\n", (long long)last_buckets, (long long)old);
        assert_true(last_buckets < old);
    }
    run_buckets = "false";
}

/* Small input for compute-sanitizer: pass 1's cuts with samples read from batches the
 * sink kept on the GPU (sl_k_gather_addrs; debug_sort_sink=upload: by default the sink
 * uploads none of an input that cannot sort in the budget). */
SL_TEST(ooc_sanitize_gpu_batch_samples)
{
    REQUIRE_GPU();
    struct spec a = {.rows = 600000, .key64 = 1, .n_pay = 1, .keys = K_ZIPF, .chunk = 7777,
                     .seed = 56};
    sink_mode = "upload";
    check(&a, "by=k", 24 * MIB, 1);
    sink_mode = "auto";
    assert_int_equal(last_gpu_merge, 1);
    assert_true(last_gpu_batches > 0);
    assert_int_equal(last_pass1_cuts, 1);
}

/* Small input for compute-sanitizer: pass 1's cuts (the bounds kernel, the splits'
 * downloads). */
SL_TEST(ooc_sanitize_pass1_cuts)
{
    REQUIRE_GPU();
    force_merge = "gpu";
    struct spec a = {.rows = 300000, .key64 = 1, .n_pay = 1, .keys = K_ZIPF, .chunk = 7777,
                     .seed = 48};
    check(&a, "by=\"k DESC\"", 8 * MIB, 1);
    assert_int_equal(last_gpu_merge, 1);
    assert_int_equal(last_pass1_cuts, 1);
    force_merge = force_gather = "auto";
}

/* Small input for compute-sanitizer: the zero-copy gather of the GPU merge. */
SL_TEST(ooc_sanitize_gather)
{
    REQUIRE_GPU();
    force_merge = "gpu";
    force_gather = "kernel";
    struct spec a = {.rows = 300000, .key64 = 1, .n_pay = 4, .keys = K_FEW, .chunk = 7777,
                     .seed = 37};
    check(&a, "by=k", 8 * MIB, 1);
    assert_int_equal(last_gpu_merge, 1);
    force_merge = force_gather = "auto";
}

/* Packed runs (an int32 key's code and one 4-byte payload in one 8-byte row, issue 23)
 * against two-column runs (debug_ooc_unpacked_runs), both equal to the CPU sort: random
 * keys (half negative), few keys (duplicates), one heavy key (buckets past a run, cut
 * again at exact ranks in the packed runs), int32 extremes, sorted and reversed keys,
 * the key as the second column (by=p1), ascending and descending, odd batch and row
 * counts (uneven buckets and runs); merged on the GPU with each gather (batched copies
 * for every case, copies into a pageable result, the zero-copy kernel), with the cuts
 * searched after pass 1 (late_cuts), and on CPU threads. Packing only where the shape allows it:
 * never with an 8-byte key or two payloads. */
SL_TEST(ooc_packed_runs)
{
    REQUIRE_GPU();
    const struct spec cases[] = {
        {.rows = (int64_t)1 << 22, .n_pay = 1, .seed = 81},
        {.rows = 3000001, .n_pay = 1, .keys = K_FEW, .chunk = 77777, .seed = 82},
        {.rows = 2500000, .n_pay = 1, .keys = K_HEAVY, .chunk = 100003, .seed = 83},
        {.rows = 2000003, .n_pay = 1, .keys = K_EXTREME, .chunk = 9999, .seed = 84},
        {.rows = 2000000, .n_pay = 1, .keys = K_SORTED, .seed = 85},
        {.rows = 1999999, .n_pay = 1, .keys = K_REVERSE, .chunk = 65535, .seed = 86},
    };
    const char *by[] = {"by=k", "by=\"k DESC\"", "by=p1", "by=\"p1 DESC\""};
    const char *merge[] = {"gpu", "gpu", "gpu", "late_cuts", "cpu"};
    const char *gather[] = {"batch", "copy", "kernel", "auto", "auto"};
    /* each case: batched copies packed and not, and one of the other merges packed */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int v = 0; v < 3; v++) {
            int m = v < 2 ? 0 : 1 + (int)(i % 4), u = v == 1;
            force_merge = merge[m];
            force_gather = gather[m];
            result_pinned = m == 1 ? -1 : 0;
            unpacked = u ? "true" : "false";
            check(&cases[i], by[(i + (size_t)m) % 4], 10 * MIB, 1);
            assert_int_equal(last_packed, !u);
            assert_int_equal(last_gpu_merge, m < 4);
            assert_true(last_runs >= 2);
        }
    unpacked = "false";
    struct spec w = {.rows = 2000000, .key64 = 1, .n_pay = 1, .seed = 87};
    check(&w, "by=k", 10 * MIB, 1);
    assert_int_equal(last_packed, 0);
    struct spec two = {.rows = 2000000, .n_pay = 2, .seed = 88};
    check(&two, "by=k", 10 * MIB, 1);
    assert_int_equal(last_packed, 0);
    force_merge = force_gather = "auto";
    result_pinned = 0;
}

/* Packed runs at the edges: one row (one run, merged by the CPU), two thirds of the keys
 * equal (buckets cut at exact ranks), 2^20 + 2 rows (a last run of 2 rows where the runs
 * are 2^15); empty input stays off the GPU. */
SL_TEST(ooc_packed_edges)
{
    REQUIRE_GPU();
    struct spec one = {.rows = 1, .n_pay = 1, .keys = K_EXTREME, .seed = 89};
    check(&one, "by=k", 8 * MIB, 1);
    assert_int_equal(last_packed, 1);
    struct spec eq = {.rows = 1000000, .n_pay = 1, .keys = K_HEAVY, .seed = 90};
    force_merge = "gpu";
    check(&eq, "by=\"k DESC\"", 8 * MIB, 1);
    assert_int_equal(last_packed, 1);
    assert_int_equal(last_gpu_merge, 1);
    struct spec e = {.rows = 0, .n_pay = 1, .seed = 91};
    check(&e, "by=k", 8 * MIB, 0);
    struct spec odd = {.rows = ((int64_t)1 << 17) * 8 + 2, .n_pay = 1, .chunk = 4099, .seed = 92};
    check(&odd, "by=k", 8 * MIB, 1);
    assert_int_equal(last_packed, 1);
    force_merge = "auto";
}

/* Small input for compute-sanitizer: packed runs through pass 1 (pack, sort, the packed
 * bounds kernel) and pass 2 (batched copies and the zero-copy kernel, unpack). */
SL_TEST(ooc_sanitize_packed)
{
    REQUIRE_GPU();
    force_merge = "gpu";
    const char *gather[] = {"batch", "kernel"};
    for (int g = 0; g < 2; g++) {
        force_gather = gather[g];
        struct spec a = {.rows = 300000, .n_pay = 1, .keys = K_FEW, .chunk = 7777,
                         .seed = 93 + (uint64_t)g};
        check(&a, g ? "by=\"k DESC\"" : "by=k", 8 * MIB, 1);
        assert_int_equal(last_gpu_merge, 1);
        assert_int_equal(last_packed, 1);
    }
    force_merge = force_gather = "auto";
}

/* Narrow runs (6 bytes a row: the code's low 16 bits and the payload; the high 16 bits
 * in a table per run, issue 23), the default where pass 1 finds the GPU merge's cuts,
 * against 8-byte packed rows (debug_ooc_narrow_runs=off), both equal to the CPU sort:
 * random keys, few keys (two top-16 values: a table of long empty stretches), one heavy
 * key (buckets past the budget's rows cut again at exact ranks: the host searches the
 * narrow runs), int32 extremes, sorted and reversed keys, the key as the second column,
 * ascending and descending, odd batch and row counts; with batched copies, one copy
 * call a slice, into a pageable result (pinned blocks and copy tasks); narrow forced
 * (on) with the cuts searched after pass 1 (late_cuts) and with the CPU merge, which
 * read the narrow runs on the host. Never narrow with the gather kernel (it reads
 * 8-byte rows) or unpacked runs. */
SL_TEST(ooc_narrow_runs)
{
    REQUIRE_GPU();
    const struct spec cases[] = {
        {.rows = (int64_t)1 << 22, .n_pay = 1, .seed = 201},
        {.rows = 3000001, .n_pay = 1, .keys = K_FEW, .chunk = 77777, .seed = 202},
        {.rows = 2500000, .n_pay = 1, .keys = K_HEAVY, .chunk = 100003, .seed = 203},
        {.rows = 2000003, .n_pay = 1, .keys = K_EXTREME, .chunk = 9999, .seed = 204},
        {.rows = 2000000, .n_pay = 1, .keys = K_SORTED, .seed = 205},
        {.rows = 1999999, .n_pay = 1, .keys = K_REVERSE, .chunk = 65535, .seed = 206},
    };
    const char *by[] = {"by=k", "by=\"k DESC\"", "by=p1", "by=\"p1 DESC\""};
    /* variant: 0 auto, 1 off, 2 auto with copy calls, 3 auto into a pageable result,
     * 4 on with late cuts, 5 on with the CPU merge */
    const char *narrow[] = {"auto", "off", "auto", "auto", "on", "on"};
    const char *merge[] = {"gpu", "gpu", "gpu", "gpu", "late_cuts", "cpu"};
    const char *gather[] = {"auto", "auto", "copy", "auto", "auto", "auto"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int v = 0; v < 6; v++) {
            if (v >= 2 && (size_t)v != 2 + i % 4)
                continue; /* each case: auto, off and one of the others */
            narrow_runs = narrow[v];
            force_merge = merge[v];
            force_gather = gather[v];
            result_pinned = v == 3 ? -1 : 0;
            check(&cases[i], by[(i + (size_t)v) % 4], 10 * MIB, 1);
            assert_int_equal(last_packed, 1);
            assert_int_equal(last_narrow, v != 1);
            assert_int_equal(last_gpu_merge, v < 5);
            assert_true(last_runs >= 2);
        }
    narrow_runs = "on";
    force_merge = "gpu";
    force_gather = "kernel";
    check(&cases[0], "by=k", 10 * MIB, 1);
    assert_int_equal(last_narrow, 0);
    force_gather = "auto";
    unpacked = "true";
    check(&cases[1], "by=k", 10 * MIB, 1);
    assert_int_equal(last_narrow, 0);
    unpacked = "false";
    narrow_runs = "auto";
    force_merge = force_gather = "auto";
    result_pinned = 0;
}

/* Narrow runs' bucket windows from the top values found on the GPU beside pass 1's cuts
 * (debug_ooc_narrow_tops=auto; the engine of every other case runs `check`: both, the
 * query failing where they differ) against the tables searched on the host (host), and
 * pass 2's splitters sampled while the first quarter of the runs go up, their cuts (and
 * top values) searched on the host (debug_ooc_presplit=auto), against sampled first
 * (first; with it pass 1 sorting over the upload buffers, debug_ooc_pass1_buffers=upload,
 * where the others sort over the output buffers): all equal to the CPU sort, with the sink's batches on the host (12 MiB) and on
 * the GPU (32 MiB: the samples read by a kernel before any run), random, few, one heavy
 * key (buckets cut at exact ranks: their windows searched), extreme, sorted and reversed
 * keys, both directions. */
SL_TEST(ooc_narrow_tops_presplit)
{
    REQUIRE_GPU();
    const struct spec cases[] = {
        {.rows = (int64_t)1 << 22, .n_pay = 1, .seed = 211},
        {.rows = 3000001, .n_pay = 1, .keys = K_FEW, .chunk = 77777, .seed = 212},
        {.rows = 2500000, .n_pay = 1, .keys = K_HEAVY, .chunk = 100003, .seed = 213},
        {.rows = 2000003, .n_pay = 1, .keys = K_EXTREME, .chunk = 9999, .seed = 214},
        {.rows = 2000000, .n_pay = 1, .keys = K_SORTED, .seed = 215},
        {.rows = 1999999, .n_pay = 1, .keys = K_REVERSE, .chunk = 65535, .seed = 216},
    };
    const char *by[] = {"by=k", "by=\"k DESC\"", "by=p1", "by=\"p1 DESC\""};
    /* variant: 0 check + auto, 1 check + first with the upload buffers as before
     * (debug_ooc_pass1_buffers=upload), 2 host + auto, 3 auto + auto */
    const char *tops[] = {"check", "check", "host", "auto"};
    const char *pre[] = {"auto", "first", "auto", "auto"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int v = 0; v < 4; v++) {
            narrow_tops = tops[v];
            presplit = pre[v];
            pass1_buffers = v == 1 ? "upload" : "auto";
            check(&cases[i], by[(i + (size_t)v) % 4], (i + (size_t)v) % 2 ? 32 * MIB : 12 * MIB, 1);
            assert_int_equal(last_narrow, 1);
            assert_int_equal(last_gpu_merge, 1);
            assert_int_equal(last_pass1_cuts, 1);
            assert_true(last_runs >= 4);
        }
    narrow_tops = "check";
    presplit = "auto";
    pass1_buffers = "auto";
}

/* Small input for compute-sanitizer: narrow runs through pass 1 (the table and narrowing
 * kernels, the download of both) and pass 2 (the tables' upload, decoding). */
SL_TEST(ooc_sanitize_narrow)
{
    REQUIRE_GPU();
    force_merge = "gpu";
    struct spec a = {.rows = 300000, .n_pay = 1, .keys = K_EXTREME, .chunk = 7777, .seed = 207};
    check(&a, "by=\"k DESC\"", 8 * MIB, 1);
    assert_int_equal(last_gpu_merge, 1);
    assert_int_equal(last_narrow, 1);
    force_merge = "auto";
}

/* Pass 1's buffer sets (debug_ooc_sets; ooc_runs_cuda.c plan_max_sets and
 * sl__ooc_pass1_pick): with the option at 3 and pinned input, three where the budget
 * holds three at the run size two take (24 and 32 MiB here), two where it does not (12
 * MiB: runs of 2^17 pairs, 1 MiB, two sets and CUB's buffers take some 7 of the 8 MiB
 * left); two by default, and with pageable input (staged through two buffers). Every
 * sort equal to the CPU's and within its budget (check): random, few, sorted, Zipf and
 * reversed keys of 4 and 8 bytes, both directions, run counts that are and are not a
 * multiple of three, narrow, packed (narrow off) and unpacked runs (8-byte keys, four
 * payloads: row ids and gathers a set), pass 1 sorting over the upload buffers
 * (debug_ooc_pass1_buffers=upload), merged on the GPU and on the CPU. */
SL_TEST(ooc_pass1_sets)
{
    REQUIRE_GPU();
    const struct spec a = {.rows = (int64_t)1 << 22, .n_pay = 1, .seed = 301};
    pin_input = 1;
    /* The budgets above are what the runs got with the sink's old rule (it uploads some
     * batches first; H100 2026-11-28 00:59 UTC); with debug_sort_sink=auto the runs would
     * get the sink's share too, and three sets might fit at 12 MiB. */
    sink_mode = "upload";
    check(&a, "by=k", 24 * MIB, 1); /* the default: two */
    assert_int_equal(last_sets, 2);
    sets = "3";
    check(&a, "by=k", 12 * MIB, 1); /* two fit, three do not */
    assert_int_equal(last_sets, 2);
    assert_true(last_runs >= 3);
    check(&a, "by=\"k DESC\"", 24 * MIB, 1);
    assert_int_equal(last_sets, 3);
    assert_int_equal(last_narrow, 1);
    assert_int_equal(last_gpu_merge, 1);
    const struct spec cases[] = {
        {.rows = 3000001, .n_pay = 1, .keys = K_FEW, .chunk = 77777, .seed = 302},
        {.rows = 2000003, .n_pay = 1, .keys = K_SORTED, .chunk = 99991, .seed = 303},
        {.rows = (int64_t)1 << 21, .key64 = 1, .n_pay = 4, .keys = K_ZIPF, .chunk = 100003,
         .seed = 304},
        {.rows = 2500000, .key64 = 1, .n_pay = 1, .keys = K_REVERSE, .seed = 305},
    };
    const char *by[] = {"by=k", "by=\"k DESC\""};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int v = 0; v < 3; v++) { /* 0 default, 1 packed 8-byte runs + the upload
                                         buffers + CPU merge, 2 the upload buffers */
            narrow_runs = v == 1 ? "off" : "auto";
            pass1_buffers = v >= 1 ? "upload" : "auto";
            force_merge = v == 1 ? "cpu" : "auto";
            check(&cases[i], by[(i + (size_t)v) % 2], 32 * MIB, 1);
            assert_int_equal(last_sets, 3);
            assert_true(last_runs >= 3);
            assert_int_equal(last_gpu_merge, v != 1);
        }
    narrow_runs = "auto";
    pass1_buffers = "auto";
    force_merge = "auto";
    pin_input = 0; /* pageable: two sets (two staging buffers) */
    check(&a, "by=k", 24 * MIB, 1);
    assert_int_equal(last_sets, 2);
    sets = "auto";
    sink_mode = "auto";
}
