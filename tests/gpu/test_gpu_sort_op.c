/* Tests the sort, partition and merge operators on a GPU (operators/sort/sort_cuda.c,
 * operators/partition/partition_cuda.c, operators/merge/merge_cuda.c) against the same
 * plan on the CPU, row for row (all three are stable, so the outputs must be identical).
 * Sort: empty input, one row, duplicates, all keys equal, already sorted, reverse
 * sorted, int32 and int64 keys with negative values and extremes, ascending and
 * descending, 0, 1 and 3 payloads of mixed widths (int32, int64, float64), odd batch
 * sizes; each with host-resident input and GPU-resident input (sl_table_to_device) with
 * the output left on the GPU, which the sort hands out in one resident-size morsel; two and
 * three keys in mixed directions. Then the cases the GPU leaves to the CPU, which must still
 * give the CPU's result: nulls in the key or in a payload, a float key, a GPU budget too
 * small. Partition: radix and hash, 1 to 16 bits; merge: two runs, an
 * unsorted run (the same error as the CPU). Whether the GPU finalized is read from the
 * operator's state. Last, cub_reference_times times CUB's radix sort alone for the
 * benchmark (docs/BENCH_PROTOCOL.md). Skipped without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda/cuda_int.h"
#include "gpu_test.h"
#include "sl_test.h"
#include "sluice_k/sort.h"
#include "sort_test.h"

enum { K_RANDOM, K_FEW, K_EQUAL, K_SORTED, K_REVERSE, K_EXTREME };

struct spec {
    int64_t rows;
    int key64, key_float;
    int n_pay;      /* payload c: int32, int64, float64 in turn */
    int keys;       /* K_* */
    int key_nulls;  /* every 7th key null */
    int pay_nulls;  /* every 5th value of payload 1 null */
    int64_t chunk;  /* rows per input batch (0: 40000) */
    uint64_t seed;
    int host_only;  /* skip the GPU-resident input (with device output) round */
};

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static int64_t key_of(const struct spec *sp, int64_t i, uint64_t *s)
{
    switch (sp->keys) {
    case K_FEW: return (int64_t)(rnd(s) % 50) - 25;
    case K_EQUAL: return -3;
    case K_SORTED: return i / 3 - sp->rows / 6;
    case K_REVERSE: return sp->rows - i / 2;
    case K_EXTREME: {
        int64_t ex[] = {sp->key64 ? INT64_MIN : INT32_MIN, sp->key64 ? INT64_MAX : INT32_MAX,
                        0, -1, 1};
        uint64_t x = rnd(s);
        return x % 3 ? ex[x % 5] : (int64_t)rnd(s);
    }
    default: return (int64_t)rnd(s);
    }
}

static sl_table_t *make(const struct spec *sp)
{
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    const char *names[5] = {"k", "p1", "p2", "p3", "p4"};
    enum sl_type ty[5];
    int nc = 1 + sp->n_pay;
    ty[0] = sp->key_float ? SL_TYPE_FLOAT64 : sp->key64 ? SL_TYPE_INT64 : SL_TYPE_INT32;
    for (int c = 1; c < nc; c++)
        ty[c] = c % 3 == 1 ? SL_TYPE_INT32 : c % 3 == 2 ? SL_TYPE_INT64 : SL_TYPE_FLOAT64;
    uint64_t s = sp->seed * 0x9E3779B97F4A7C15ull + 1;
    int64_t chunk = sp->chunk ? sp->chunk : 40000, row = 0;
    for (int64_t lo = 0; lo < sp->rows || lo == 0; lo += chunk) {
        int64_t m = sp->rows - lo < chunk ? sp->rows - lo : chunk;
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, nc, names, ty, m));
        for (int64_t i = 0; i < m; i++, row++) {
            int64_t k = key_of(sp, row, &s);
            void *d = sl_batch_column_data(b, 0);
            if (ty[0] == SL_TYPE_INT64)
                ((int64_t *)d)[i] = k;
            else if (ty[0] == SL_TYPE_INT32)
                ((int32_t *)d)[i] = (int32_t)k;
            else
                ((double *)d)[i] = (double)(k % 1000) * 0.5;
            for (int c = 1; c < nc; c++) {
                void *p = sl_batch_column_data(b, c);
                if (ty[c] == SL_TYPE_INT32)
                    ((int32_t *)p)[i] = (int32_t)row; /* the input position: stability */
                else if (ty[c] == SL_TYPE_INT64)
                    ((int64_t *)p)[i] = (int64_t)rnd(&s);
                else
                    ((double *)p)[i] = (double)(int64_t)rnd(&s) / 1e6;
            }
        }
        if (sp->key_nulls)
            for (int64_t i = 0; i < m; i += 7)
                sl_batch_column_validity(b, 0)[i / 8] &= (uint8_t) ~(1u << (i % 8));
        if (sp->pay_nulls && nc > 1)
            for (int64_t i = 0; i < m; i += 5)
                sl_batch_column_validity(b, 1)[i / 8] &= (uint8_t) ~(1u << (i % 8));
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
        if (m == 0)
            break;
    }
    return t;
}

/* `op` on the CPU engine and on the GPU engine (sort_test.h), one input or two (merge). */
static void check_ops(const struct spec *sp, const struct spec *sp2, const char *op,
                      const char *by, int expect_gpu, int64_t gpu_mem)
{
    sl_table_t *in[2] = {make(sp), sp2 ? make(sp2) : NULL};
    char what[64];
    snprintf(what, sizeof what, "%lld rows, %d payloads", (long long)sp->rows, sp->n_pay);
    check_tables(in, sp2 ? 2 : 1, op, by, expect_gpu, gpu_mem, sp->host_only, what);
    for (int i = 0; i < (sp2 ? 2 : 1); i++)
        sl_table_unref(in[i]);
}

static void check_op(const struct spec *sp, const char *op, const char *by, int expect_gpu,
                     int64_t gpu_mem)
{
    check_ops(sp, NULL, op, by, expect_gpu, gpu_mem);
}

static void check(const struct spec *sp, const char *by, int expect_gpu, int64_t gpu_mem)
{
    check_op(sp, "sort", by, expect_gpu, gpu_mem);
}

SL_TEST(empty_and_one_row)
{
    NEED_GPU();
    struct spec e = {.rows = 0, .n_pay = 1, .seed = 1};
    check(&e, "by=k", 0, 0); /* nothing to sort: the GPU result stays unset */
    struct spec one = {.rows = 1, .n_pay = 3, .seed = 2};
    check(&one, "by=k", 1, 0);
    one.key64 = 1;
    check(&one, "by=\"k DESC\"", 1, 0);
}

SL_TEST(int32_keys_payloads_0_1_3)
{
    NEED_GPU();
    for (int np = 0; np <= 3; np += np == 1 ? 2 : 1) {
        struct spec a = {.rows = 150000, .n_pay = np, .seed = 10 + (uint64_t)np};
        check(&a, "by=k", 1, 0);
        check(&a, "by=\"k DESC\"", 1, 0);
    }
}

SL_TEST(int64_keys_payloads_0_1_3)
{
    NEED_GPU();
    for (int np = 0; np <= 3; np += np == 1 ? 2 : 1) {
        struct spec a = {.rows = 120000, .key64 = 1, .n_pay = np, .seed = 20 + (uint64_t)np};
        check(&a, "by=k", 1, 0);
        check(&a, "by=\"k DESC\"", 1, 0);
    }
}

/* Source tasks of the pipeline reading `source` in a finished query's profile. */
static int64_t source_tasks(sl_query_t *q, const char *source)
{
    char key[64];
    snprintf(key, sizeof key, "\"source\":\"%s\",", source);
    const char *at = strstr(sl_query_profile_json(q), "\"pipelines\":[");
    assert_non_null(at);
    at = strstr(at, key);
    assert_non_null(at);
    const char *tasks = strstr(at, "\"tasks\":");
    assert_non_null(tasks);
    return atoll(tasks + 8);
}

/* A sort finalized on the GPU whose result stays there for GPU stages (an output kept
 * on the device) hands it out in morsels of gpu_resident_morsel_rows, as a GPU-resident
 * table's (runtime/task.c, sl__task_result_morsel_rows): one task here instead of four of
 * gpu_morsel_rows. Downloaded for a host output, it keeps the GPU morsel size. Both equal
 * the CPU's sort. */
SL_TEST(device_result_in_resident_morsels)
{
    NEED_GPU();
    struct spec sp = {.rows = 150000, .n_pay = 1, .chunk = 1 << 20, .seed = 90};
    sl_table_t *in = make(&sp);
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0);
    struct flat want = run(cpu, &in, 1, "sort", "by=k", 0, NULL);
    sl_engine_close(cpu);
    struct sl_engine_config cfg;
    gpu_test_config(&cfg, SL_PLACE_GPU, 0);
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "gpu_morsel_rows", "40000"));
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "gpu_resident_morsel_rows", "1048576"));
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    sl_table_t *din;
    SL_ASSERT_OK(sl_table_to_device(e, in, 0, &din));
    for (int device_out = 0; device_out < 2; device_out++) {
        sl_plan_t *p;
        int ns;
        sl_query_t *q = query(e, &din, 1, "sort", "by=k", device_out, &p, &ns);
        SL_ASSERT_OK(sl_query_run(q));
        assert_true(((const struct sl__mat *)q->ops[ns].gstate)->gpu);
        int64_t n = source_tasks(q, "sort");
        printf("sort of %lld GPU-resident rows, output on the %s: %lld source tasks\n",
               (long long)sp.rows, device_out ? "GPU" : "host", (long long)n);
        assert_int_equal(n, device_out ? 1 : 4);
        struct flat got = result_flat(q, p);
        assert_int_equal(got.rows, want.rows);
        assert_int_equal(got.cols, want.cols);
        assert_true(memcmp(got.v, want.v, (size_t)(want.rows * want.cols) * 8) == 0);
        free(got.v);
    }
    free(want.v);
    sl_table_unref(din);
    sl_table_unref(in);
    sl_engine_close(e);
}

/* Equal keys keep their input order (payload p1 is the input position). */
SL_TEST(duplicates_all_equal_stable)
{
    NEED_GPU();
    struct spec few = {.rows = 200000, .n_pay = 3, .keys = K_FEW, .seed = 30};
    check(&few, "by=k", 1, 0);
    check(&few, "by=\"k DESC\"", 1, 0);
    few.key64 = 1;
    check(&few, "by=k", 1, 0);
    struct spec eq = {.rows = 90000, .n_pay = 1, .keys = K_EQUAL, .seed = 31};
    check(&eq, "by=k", 1, 0);
    check(&eq, "by=\"k DESC\"", 1, 0);
}

SL_TEST(sorted_reverse_extremes)
{
    NEED_GPU();
    struct spec s = {.rows = 100000, .n_pay = 3, .keys = K_SORTED, .seed = 40};
    check(&s, "by=k", 1, 0);
    s.keys = K_REVERSE;
    check(&s, "by=k", 1, 0);
    check(&s, "by=\"k DESC\"", 1, 0);
    struct spec x = {.rows = 70000, .n_pay = 1, .keys = K_EXTREME, .seed = 41};
    check(&x, "by=k", 1, 0);
    x.key64 = 1;
    x.n_pay = 3;
    check(&x, "by=\"k DESC\"", 1, 0);
}

/* Batches of sizes that are not morsels (GPU: the columns are copied into one array). */
SL_TEST(odd_batch_sizes)
{
    NEED_GPU();
    struct spec a = {.rows = 77777, .n_pay = 2, .chunk = 1013, .seed = 50};
    check(&a, "by=k", 1, 0);
    a.chunk = 1 << 20; /* one batch */
    a.key64 = 1;
    check(&a, "by=\"k DESC\"", 1, 0);
}

/* What the GPU does not do goes to the CPU, with the CPU's result. */
SL_TEST(fallbacks_to_cpu)
{
    NEED_GPU();
    struct spec kn = {.rows = 50000, .n_pay = 1, .keys = K_FEW, .key_nulls = 1, .seed = 60};
    check(&kn, "by=k", 0, 0);
    check(&kn, "by=\"k DESC NULLS LAST\"", 0, 0);
    struct spec pn = {.rows = 50000, .n_pay = 3, .pay_nulls = 1, .seed = 61};
    check(&pn, "by=k", 0, 0);
    struct spec two = {.rows = 50000, .n_pay = 2, .keys = K_FEW, .key_nulls = 1, .seed = 62};
    check(&two, "by=\"k, p2 DESC\"", 0, 0); /* two keys, one with nulls */
    struct spec fl = {.rows = 50000, .n_pay = 1, .key_float = 1, .seed = 63};
    check(&fl, "by=k", 0, 0);
}

/* Several keys (sort_keys: LSD passes of CUB sorts), as the CPU orders them: few
 * distinct values in the first key so that the later ones decide, mixed directions,
 * int32 and int64 keys, a payload key; p1 (the input position) shows stability. */
SL_TEST(several_keys_vs_cpu)
{
    NEED_GPU();
    struct spec two = {.rows = 50000, .n_pay = 2, .keys = K_FEW, .seed = 62};
    check(&two, "by=\"k, p2 DESC\"", 1, 0);
    check(&two, "by=\"k DESC, p1\"", 1, 0);
    struct spec three = {.rows = 130000, .n_pay = 3, .keys = K_FEW, .key64 = 1, .seed = 64};
    check(&three, "by=\"k DESC, p1 DESC, p2\"", 1, 0);
    struct spec eq = {.rows = 30000, .n_pay = 3, .keys = K_EQUAL, .chunk = 777, .seed = 65};
    check(&eq, "by=\"k, p2 DESC\"", 1, 0); /* the second key decides; p3 (float) carried */
    check(&eq, "by=\"k, p3\"", 0, 0);       /* a float key: the CPU */
    struct spec one = {.rows = 1, .n_pay = 2, .seed = 66};
    check(&one, "by=\"k, p2\"", 1, 0);
}

SL_TEST(small_budget_goes_to_cpu)
{
    NEED_GPU();
    /* 1M rows x 28 bytes: the in-GPU sort (input, output, row ids, CUB's temp storage)
     * does not fit 48 MiB, so the sort goes out of core (tests/gpu/test_gpu_sort_ooc.c):
     * a host result, not a device one (gpu = 0), equal to the CPU's. */
    struct spec a = {.rows = 1000000, .key64 = 1, .n_pay = 3, .seed = 70, .host_only = 1};
    check(&a, "by=k", 0, 48 << 20);
    /* The same rows already GPU-resident (28 MB held by the caller, charged to the same
     * 48 MiB) with the result asked for in GPU memory: a device result cannot fit beside
     * the input, so the out-of-core sort downloads its runs and merges them into a host
     * result (sl_plan_output_device keeps only batches a GPU produced on the GPU). The
     * budget holds throughout and the rows equal the CPU's. */
    sl_table_t *in = make(&a), *din;
    sl_engine_t *e = gpu_test_engine(SL_PLACE_GPU, 48 << 20);
    SL_ASSERT_OK(sl_table_to_device(e, in, 0, &din));
    SL_ASSERT_OK(sl_engine_reset_peaks(e));
    int on_gpu = -1;
    struct flat got = run(e, &din, 1, "sort", "by=k", 1, &on_gpu);
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    SL_ASSERT_OK(sl_engine_mem_stats(e, &ms));
    assert_int_equal(on_gpu, 0);
    assert_true(ms.gpu_peak <= ms.gpu_limit);
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0);
    struct flat want = run(cpu, &in, 1, "sort", "by=k", 0, NULL);
    assert_int_equal(got.rows, want.rows);
    assert_int_equal(got.cols, want.cols);
    assert_memory_equal(got.v, want.v, (size_t)(want.rows * want.cols) * 8);
    free(got.v);
    free(want.v);
    sl_engine_close(cpu);
    sl_table_unref(din);
    sl_engine_close(e);
    sl_table_unref(in);
}


/* ---------------- partition (operators/partition/partition_cuda.c) ---------------- */

/* Radix and hash partitioning, int32/int64 keys, 1 to 16 bits (one and two CPU passes),
 * 0/1/3 payloads, empty partitions (few distinct keys), one row, odd batches: the same
 * rows in the same order as the CPU (partitions in order, input order within one). */
SL_TEST(partition_vs_cpu)
{
    NEED_GPU();
    struct spec a = {.rows = 150000, .n_pay = 3, .seed = 90};
    check_op(&a, "partition", "key=k bits=4", 1, 0);
    check_op(&a, "partition", "key=k bits=16 passes=2 hash=true", 1, 0);
    a.key64 = 1;
    check_op(&a, "partition", "key=k bits=1", 1, 0);
    check_op(&a, "partition", "key=k fanout=1024 hash=true", 1, 0);
    struct spec few = {.rows = 60000, .n_pay = 1, .keys = K_FEW, .chunk = 999, .seed = 91};
    check_op(&few, "partition", "key=k bits=8", 1, 0);
    check_op(&few, "partition", "key=k bits=12 hash=true", 1, 0);
    struct spec keys = {.rows = 30000, .n_pay = 0, .keys = K_EXTREME, .seed = 92};
    check_op(&keys, "partition", "key=k bits=6", 1, 0);
    struct spec one = {.rows = 1, .n_pay = 3, .seed = 93};
    check_op(&one, "partition", "key=k bits=5 hash=true", 1, 0);
    struct spec none = {.rows = 0, .n_pay = 1, .seed = 94};
    check_op(&none, "partition", "key=k bits=5", 0, 0);
}

/* Left to the CPU, with the CPU's result: null keys (partition 0), null payloads, one
 * partition (bits=0). */
SL_TEST(partition_fallbacks_to_cpu)
{
    NEED_GPU();
    struct spec kn = {.rows = 40000, .n_pay = 1, .key_nulls = 1, .seed = 95};
    check_op(&kn, "partition", "key=k bits=4", 0, 0);
    struct spec pn = {.rows = 40000, .n_pay = 2, .pay_nulls = 1, .seed = 96};
    check_op(&pn, "partition", "key=k bits=4 hash=true", 0, 0);
    struct spec a = {.rows = 40000, .n_pay = 1, .seed = 97};
    check_op(&a, "partition", "key=k fanout=1", 0, 0);
}

/* ---------------- merge (operators/merge/merge_cuda.c) ---------------- */

/* Two sorted runs (keys with duplicates within and across runs: equal keys come out run
 * 0 first), int32/int64, ascending/descending, 0/1/3 payloads, an empty or one-row run
 * (then one run: the CPU merges), odd batch sizes. */
SL_TEST(merge_two_runs_vs_cpu)
{
    NEED_GPU();
    struct spec a = {.rows = 100000, .n_pay = 3, .keys = K_SORTED, .seed = 100};
    struct spec b = {.rows = 70001, .n_pay = 3, .keys = K_SORTED, .chunk = 3333, .seed = 101};
    check_ops(&a, &b, "merge", "by=k", 1, 0);
    a.key64 = b.key64 = 1;
    a.n_pay = b.n_pay = 1;
    check_ops(&a, &b, "merge", "by=k", 1, 0);
    struct spec c = {.rows = 50000, .n_pay = 0, .keys = K_REVERSE, .seed = 102};
    struct spec e = {.rows = 20000, .n_pay = 0, .keys = K_REVERSE, .seed = 103};
    check_ops(&c, &e, "merge", "by=\"k DESC\"", 1, 0);
    struct spec one = {.rows = 1, .n_pay = 1, .keys = K_SORTED, .seed = 104};
    struct spec eq = {.rows = 5000, .n_pay = 1, .keys = K_EQUAL, .seed = 105};
    check_ops(&one, &eq, "merge", "by=k", 1, 0);
    check_ops(&eq, &eq, "merge", "by=k", 1, 0);
    struct spec none = {.rows = 0, .n_pay = 1, .seed = 106};
    check_ops(&none, &eq, "merge", "by=k", 0, 0); /* one run */
}

/* An unsorted run fails on the GPU as on the CPU, with the same message; runs=batch and
 * nulls (in a payload) go to the CPU. */
SL_TEST(merge_errors_and_fallbacks)
{
    NEED_GPU();
    struct spec a = {.rows = 30000, .n_pay = 1, .keys = K_SORTED, .seed = 110};
    struct spec r = {.rows = 30000, .n_pay = 1, .keys = K_FEW, .seed = 111};
    sl_table_t *in[2] = {make(&a), make(&r)};
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0), *gpu = gpu_test_engine(SL_PLACE_GPU, 0);
    char msg[2][512];
    for (int g = 0; g < 2; g++) {
        sl_plan_t *p;
        int node;
        sl_query_t *q = query(g ? gpu : cpu, in, 2, "merge", "by=k", 0, &p, &node);
        assert_int_equal(sl_query_run(q), SL_EINVAL);
        snprintf(msg[g], sizeof msg[g], "%s", sl_query_errmsg(q));
        printf("%s: %s\n", g ? "gpu" : "cpu", msg[g]);
        if (g)
            assert_true(q->ops[node].home_gpu >= 0); /* the GPU checked it */
        sl_query_destroy(q);
        sl_plan_destroy(p);
    }
    assert_string_equal(msg[0], msg[1]);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
    sl_table_unref(in[0]);
    sl_table_unref(in[1]);
    struct spec b = {.rows = 20000, .n_pay = 1, .keys = K_SORTED, .seed = 112};
    check_ops(&a, &b, "merge", "by=k runs=batch", 0, 0);
    struct spec pn = {.rows = 20000, .n_pay = 2, .keys = K_SORTED, .pay_nulls = 1, .seed = 113};
    struct spec a2 = a;
    a2.n_pay = 2;
    check_ops(&a2, &pn, "merge", "by=k", 0, 0);
}

/* Small inputs for compute-sanitizer (memcheck, racecheck): each GPU path once — sort
 * with three payloads gathered from copied (non-contiguous) columns, sort with one
 * payload sorted along (int64, descending), partition (hash), merge of two runs. */
SL_TEST(sanitize_small)
{
    NEED_GPU();
    struct spec a = {.rows = 3000, .n_pay = 3, .keys = K_FEW, .chunk = 700, .seed = 80};
    check(&a, "by=k", 1, 0);
    struct spec b = {.rows = 2000, .key64 = 1, .n_pay = 1, .chunk = 4096, .seed = 81};
    check(&b, "by=\"k DESC\"", 1, 0);
    check_op(&a, "partition", "key=k bits=5 hash=true", 1, 0);
    struct spec r0 = {.rows = 1500, .n_pay = 1, .keys = K_SORTED, .chunk = 500, .seed = 82};
    struct spec r1 = {.rows = 900, .n_pay = 1, .keys = K_SORTED, .seed = 83};
    check_ops(&r0, &r1, "merge", "by=k", 1, 0);
}

/* ---------------- the benchmark's reference (docs/BENCH_PROTOCOL.md, "Sort") ----------------
 * CUB's radix sort alone (sl_k_sort_pairs = one cub::DeviceRadixSort::SortPairs call) on
 * the pairs `sluice bench sort --payloads 1` sorts: 2^28 (int32, int32) and 2^27 (int64,
 * int64) random pairs, device-resident, CUDA events, median of 5 after a warm-up; also
 * with the output and temp from a pool (pool_alloc_in_span_ms, pool_alloc_before_span_ms),
 * the input from it too (pool_input_before_span_ms), the GPU's time alone with the stream
 * kept busy while the host launches (gpu_only_ms), and the host's time in the call
 * (host_call_us, medians).
 * Prints one JSON line per size; checks only that the keys come out sorted. */
#define CU(x)                                                                           \
    do {                                                                                \
        cudaError_t e_ = (x);                                                           \
        if (e_ != cudaSuccess)                                                          \
            fail_msg("%s -> %s", #x, cudaGetErrorName(e_));                             \
    } while (0)

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

static void cub_reference(int64_t n, int w)
{
    size_t bytes = (size_t)n * (size_t)w;
    uint64_t *h = malloc(bytes), st = 42;
    assert_non_null(h);
    for (size_t i = 0; i < bytes / 8; i++)
        h[i] = rnd(&st);
    void *kin, *kout, *vin, *vout, *temp;
    CU(cudaMalloc(&kin, bytes));
    CU(cudaMalloc(&kout, bytes));
    CU(cudaMalloc(&vin, bytes));
    CU(cudaMalloc(&vout, bytes));
    CU(cudaMemcpy(kin, h, bytes, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(vin, h, bytes, cudaMemcpyHostToDevice));
    size_t tb = 0;
    CU(sl_k_sort_pairs(NULL, &tb, w, 0, kin, kout, vin, vout, w, n, 0));
    CU(cudaMalloc(&temp, tb));
    cudaEvent_t e0, e1;
    CU(cudaEventCreate(&e0));
    CU(cudaEventCreate(&e1));
    float ms[5], call_us[5], gpu_ms[5];
    for (int r = -1; r < 5; r++) {
        CU(cudaEventRecord(e0, 0));
        struct timespec c0, c1;
        clock_gettime(CLOCK_MONOTONIC, &c0);
        CU(sl_k_sort_pairs(temp, &tb, w, 0, kin, kout, vin, vout, w, n, 0));
        clock_gettime(CLOCK_MONOTONIC, &c1);
        CU(cudaEventRecord(e1, 0));
        CU(cudaEventSynchronize(e1));
        if (r >= 0) {
            CU(cudaEventElapsedTime(&ms[r], e0, e1));
            call_us[r] = (float)((c1.tv_sec - c0.tv_sec) * 1e6 + (c1.tv_nsec - c0.tv_nsec) / 1e3);
        }
    }
    qsort(ms, 5, sizeof ms[0], cmp_float);
    qsort(call_us, 5, sizeof call_us[0], cmp_float);
    /* The GPU's time alone: the stream busy (a memset of the temp storage, which CUB
     * initializes itself) while the host enqueues CUB's work, so the span holds no wait
     * for the host's launches (what cub_sort_pairs_ms includes, as the operator's
     * gpu_sort does). */
    for (int r = -1; r < 5; r++) {
        CU(cudaMemsetAsync(temp, 0, tb, 0));
        CU(cudaEventRecord(e0, 0));
        CU(sl_k_sort_pairs(temp, &tb, w, 0, kin, kout, vin, vout, w, n, 0));
        CU(cudaEventRecord(e1, 0));
        CU(cudaEventSynchronize(e1));
        if (r >= 0)
            CU(cudaEventElapsedTime(&gpu_ms[r], e0, e1));
    }
    qsort(gpu_ms, 5, sizeof gpu_ms[0], cmp_float);
    /* The same sort on a stream of its own with its output and temp storage taken from a
     * stream-ordered pool (as the operator takes them) inside the timed span, and just
     * before it: what allocating costs the operator's gpu_sort phase (H100, 2026-11-27:
     * 8.747 and 8.729 ms against 8.704 for 2^28 int32 pairs). */
    float ms_in[5], ms_before[5], ms_pool_in[5];
    cudaMemPool_t pool;
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    CU(cudaMemPoolCreate(&pool, &props));
    uint64_t keep = UINT64_MAX;
    CU(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    cudaStream_t pst;
    CU(cudaStreamCreateWithFlags(&pst, cudaStreamNonBlocking));
    /* The input in the pool too (the operator's input is a GPU-resident table in the
     * engine's pool): pool_input_before_span_ms. */
    void *pin[2];
    CU(cudaMallocFromPoolAsync(&pin[0], bytes, pool, pst));
    CU(cudaMallocFromPoolAsync(&pin[1], bytes, pool, pst));
    CU(cudaMemcpyAsync(pin[0], kin, bytes, cudaMemcpyDeviceToDevice, pst));
    CU(cudaMemcpyAsync(pin[1], vin, bytes, cudaMemcpyDeviceToDevice, pst));
    for (int after_alloc = 0; after_alloc < 3; after_alloc++)
        for (int r = -1; r < 5; r++) {
            void *po[3];
            if (!after_alloc)
                CU(cudaEventRecord(e0, pst));
            CU(cudaMallocFromPoolAsync(&po[0], bytes, pool, pst));
            CU(cudaMallocFromPoolAsync(&po[1], bytes, pool, pst));
            CU(cudaMallocFromPoolAsync(&po[2], tb, pool, pst));
            if (after_alloc)
                CU(cudaEventRecord(e0, pst));
            CU(sl_k_sort_pairs(po[2], &tb, w, 0, after_alloc == 2 ? pin[0] : kin, po[0],
                               after_alloc == 2 ? pin[1] : vin, po[1], w, n, pst));
            CU(cudaEventRecord(e1, pst));
            for (int k = 0; k < 3; k++)
                CU(cudaFreeAsync(po[k], pst));
            CU(cudaEventSynchronize(e1));
            if (r >= 0)
                CU(cudaEventElapsedTime(after_alloc == 2 ? &ms_pool_in[r]
                                        : after_alloc ? &ms_before[r] : &ms_in[r], e0, e1));
        }
    CU(cudaFreeAsync(pin[0], pst));
    CU(cudaFreeAsync(pin[1], pst));
    CU(cudaStreamSynchronize(pst));
    CU(cudaStreamDestroy(pst));
    CU(cudaMemPoolDestroy(pool));
    qsort(ms_in, 5, sizeof ms_in[0], cmp_float);
    qsort(ms_before, 5, sizeof ms_before[0], cmp_float);
    qsort(ms_pool_in, 5, sizeof ms_pool_in[0], cmp_float);
    printf("{\"cub_sort_pairs_ms\":%.3f,\"min_ms\":%.3f,\"rows\":%lld,\"key_bytes\":%d,"
           "\"value_bytes\":%d,\"pool_alloc_in_span_ms\":%.3f,\"pool_alloc_before_span_ms\":%.3f,"
           "\"pool_input_before_span_ms\":%.3f,\"gpu_only_ms\":%.3f,\"host_call_us\":%.1f}\n",
           ms[2], ms[0], (long long)n, w, w, ms_in[2], ms_before[2], ms_pool_in[2], gpu_ms[2],
           call_us[2]);
    /* The first and last 2^20 keys are in order (a cheap check that it sorted). */
    size_t m = (size_t)1 << 20, k = m * (size_t)w;
    CU(cudaMemcpy(h, kout, k, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy((char *)h + k, (char *)kout + bytes - k, k, cudaMemcpyDeviceToHost));
    for (size_t i = 1; i < 2 * m; i++)
        if (i != m)
            assert_true(w == 4 ? ((int32_t *)h)[i - 1] <= ((int32_t *)h)[i]
                               : ((int64_t *)h)[i - 1] <= ((int64_t *)h)[i]);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(kin), cudaFree(kout), cudaFree(vin), cudaFree(vout), cudaFree(temp);
    free(h);
}

SL_TEST(cub_reference_times)
{
    NEED_GPU();
    cub_reference((int64_t)1 << 28, 4);
    cub_reference((int64_t)1 << 27, 8);
}
