/* Tests the pinned result memory (runtime/cuda/cuda_pinned_results.c, download_buf and
 * unpin in runtime/gpu_worker.c): results downloaded from a GPU keep the pinned blocks
 * they land in instead of being copied into pageable memory. A host-resident sort (the
 * engine's GPU in its memory, and out of core at budgets of 1/2, 1/4 and 1/16 of the
 * data) must equal the CPU sort row for row with the pool on (default cap), full part
 * way through the result (a cap of half its bytes: the rest is copied out) and off (-1); the
 * result's blocks must be the pool's exactly when it is on and large enough, counted in
 * the host budget while held and given back when the result goes. A result exported as
 * Arrow outlives its engine: read after sl_engine_close, released last. Host allocation
 * failures and CUDA failures (the pool's cudaHostAlloc among them) during a query on a
 * fresh engine fail it cleanly or give the right rows, and leave nothing allocated once
 * the engine is closed. A GPU join materialized to the host gives the CPU's rows with the
 * pool on, full and off. With the pool off, results copied out of staging blocks count in
 * the host budget too: past it the query fails with SL_EBUDGET and the engine runs the
 * next query; so do CPU tasks' downloads of a GPU-resident table's morsels. Skipped
 * without a GPU. */
#include "cuda/cuda_int.h"
#include "sluice/arrow.h"
#include "sort_test.h"
#include "table_hash.h"

#define MIB ((int64_t)1 << 20)

/* rows of (int32 key, int32 position) pairs with random keys, in batches of 2^16. */
static sl_table_t *pairs(int64_t rows, uint64_t seed)
{
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    const char *names[2] = {"k", "p"};
    enum sl_type ty[2] = {SL_TYPE_INT32, SL_TYPE_INT32};
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t lo = 0; lo < rows; lo += 65536) {
        int64_t m = rows - lo < 65536 ? rows - lo : 65536;
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, 2, names, ty, m));
        int32_t *k = sl_batch_column_data(b, 0), *p = sl_batch_column_data(b, 1);
        for (int64_t i = 0; i < m; i++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            k[i] = (int32_t)s;
            p[i] = (int32_t)(lo + i);
        }
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
    }
    return t;
}

/* The pairs of `in` sorted by k on a CPU engine: the reference of the GPU runs. */
static struct flat cpu_sorted(sl_table_t *in)
{
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0);
    struct flat want = run(cpu, &in, 1, "sort", "by=k", 0, NULL);
    sl_engine_close(cpu);
    return want;
}

static sl_engine_t *engine_with(enum sl_placement pl, int64_t gpu_mem, int64_t result_pinned)
{
    struct sl_engine_config cfg;
    gpu_test_config(&cfg, pl, gpu_mem);
    cfg.gpu_result_pinned = result_pinned;
    cfg.deadline_ms = 60000; /* a fault that hangs a query fails the case instead */
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    return e;
}

/* Bytes of t's buffers in blocks of a pinned result pool, and in other memory; a buffer
 * several batches share (slices of one out-of-core result) counts once. */
static void result_blocks(sl_table_t *t, int64_t *pooled, int64_t *other)
{
    *pooled = *other = 0;
    enum { MAX_SEEN = 4096 };
    static const struct sl__buf *seen[MAX_SEEN];
    int n_seen = 0;
    for (int64_t bi = 0; bi < sl_table_num_batches(t); bi++) {
        sl_batch_t *b = sl_table_batch(t, bi);
        for (int c = 0; c < b->n_cols; c++) {
            struct sl__buf *u = b->cols[c].data;
            int k = 0;
            while (k < n_seen && seen[k] != u)
                k++;
            if (k < n_seen)
                continue;
            assert_true(n_seen < MAX_SEEN);
            seen[n_seen++] = u;
            *(sl__pinned_results_owns(u) ? pooled : other) += u->bytes;
        }
    }
}

static int64_t host_in_use(sl_engine_t *e)
{
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    SL_ASSERT_OK(sl_engine_mem_stats(e, &ms));
    return ms.host_in_use;
}

/* The GPU sort of `in` under budget gpu_mem with result pool cap `pool` equals `want`;
 * where the sort fits in GPU memory its result is in the pool's blocks as the cap
 * allows; the bytes the pool holds count in the host budget until the result goes. */
static void check(sl_table_t *in, const struct flat *want, int64_t gpu_mem, int64_t pool)
{
    sl_engine_t *e = engine_with(SL_PLACE_GPU, gpu_mem, pool);
    int64_t base = host_in_use(e);
    sl_plan_t *p;
    int ns;
    sl_query_t *q = query(e, &in, 1, "sort", "by=k", 0, &p, &ns);
    if (sl_query_run(q) != SL_OK)
        fail_msg("query failed: %s", sl_query_errmsg(q));
    sl_table_t *out;
    SL_ASSERT_OK(sl_query_result(q, "o", &out));
    sl_query_destroy(q);
    sl_plan_destroy(p);
    int64_t pooled = 0, other = 0, held = host_in_use(e) - base;
    result_blocks(out, &pooled, &other);
    struct flat got = flatten(out);
    printf("budget %lld MiB, result pool %lld: %lld rows, %.1f MiB in pool blocks, %.1f MiB "
           "elsewhere, %.1f MiB charged while held\n", (long long)(gpu_mem >> 20),
           (long long)pool, (long long)got.rows, pooled / 1048576.0, other / 1048576.0,
           held / 1048576.0);
    assert_int_equal(got.rows, want->rows);
    assert_int_equal(memcmp(got.v, want->v, (size_t)(want->rows * want->cols) * 8), 0);
    assert_true(held >= pooled + other);  /* every result byte counts in the host budget */
    if (pool < 0)
        assert_int_equal(pooled, 0);
    if (gpu_mem == 0 && pool == 0)        /* in GPU memory, default cap: all in the pool */
        assert_int_equal(other, 0);
    if (gpu_mem == 0 && pool > 0)         /* a cap smaller than the result: both */
        assert_true(pooled > 0 && pooled <= pool && other > 0);
    sl_table_unref(out);
    assert_int_equal(host_in_use(e), base); /* given back with the result */
    free(got.v);
    sl_engine_close(e);
}

SL_TEST(sort_equals_cpu_across_budgets_and_pools)
{
    NEED_GPU();
    const int64_t rows = (int64_t)1 << 23; /* 64 MiB of pairs */
    sl_table_t *in = pairs(rows, 1);
    struct flat want = cpu_sorted(in);
    const int64_t budgets[] = {0, 32 * MIB, 16 * MIB, 8 * MIB}; /* fits, 1/2, 1/4, 1/8 */
    const int64_t pools[] = {0, 32 * MIB, -1};                  /* default, full, off */
    for (int b = 0; b < 4; b++)
        for (int k = 0; k < 3; k++)
            check(in, &want, budgets[b], pools[k]);
    /* 1/16: 2^24 rows under 8 MiB (smaller budgets leave no room for a run). */
    sl_table_t *big = pairs(rows * 2, 2);
    struct flat want2 = cpu_sorted(big);
    check(big, &want2, 8 * MIB, 0);
    check(big, &want2, 8 * MIB, -1);
    free(want.v);
    free(want2.v);
    sl_table_unref(in);
    sl_table_unref(big);
}

/* The rows (an order-free fingerprint) of plan `text` on e; *pooled / *other: result
 * bytes in pool blocks and elsewhere. */
static struct sl_test_rows plan_rows(sl_engine_t *e, const char *text, int64_t *pooled,
                                     int64_t *other)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    SL_ASSERT_OK(sl_plan_parse(p, text, "join"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    if (sl_query_run(q) != SL_OK)
        fail_msg("join failed: %s", sl_query_errmsg(q));
    sl_table_t *out;
    SL_ASSERT_OK(sl_query_result(q, sl_plan_output_at(p, 0, NULL), &out));
    struct sl_test_rows rows = {0, 0};
    sl_test_rows_add(&rows, out);
    result_blocks(out, pooled, other);
    sl_table_unref(out);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return rows;
}

SL_TEST(join_equals_cpu_with_pool_on_full_off)
{
    NEED_GPU();
    const char *text = "b = gen.keys rows=2^20 kind=unique seed=1 payloads=1\n"
                       "a = gen.keys rows=2^21 kind=fk pk_rows=2^20 match=0.8 seed=2 payloads=1\n"
                       "r = join(a, b) on=k\noutput r\n";
    int64_t pooled = 0, other = 0;
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0);
    struct sl_test_rows want = plan_rows(cpu, text, &pooled, &other);
    sl_engine_close(cpu);
    assert_true(want.rows > 0);
    const int64_t pools[] = {0, 8 * MIB, -1}; /* default, full part way, off */
    for (int k = 0; k < 3; k++) {
        sl_engine_t *e = engine_with(SL_PLACE_GPU, 0, pools[k]);
        struct sl_test_rows got = plan_rows(e, text, &pooled, &other);
        printf("join, result pool %lld: %lld rows (want %lld), %.1f MiB in pool blocks, %.1f "
               "MiB elsewhere\n", (long long)pools[k], (long long)got.rows,
               (long long)want.rows, pooled / 1048576.0, other / 1048576.0);
        assert_int_equal(got.rows, want.rows);
        assert_true(got.hash == want.hash);
        if (pools[k] < 0)
            assert_int_equal(pooled, 0);
        if (pools[k] == 0) /* downloads land in the pool by default */
            assert_true(pooled > 0);
        assert_true(pools[k] <= 0 || pooled <= pools[k]);
        sl_engine_close(e);
    }
}

/* Pool off: a GPU-resident sort's 8 MiB result is downloaded through staging blocks and
 * copied out; the copies count in the host budget, so under a 2 MiB budget the query
 * fails with SL_EBUDGET saying so, and the same engine then sorts a small table. */
SL_TEST(copied_out_results_respect_the_host_budget)
{
    NEED_GPU();
    struct sl_engine_config cfg;
    gpu_test_config(&cfg, SL_PLACE_GPU, 0);
    cfg.gpu_result_pinned = -1;
    cfg.host_mem_limit = 2 * MIB;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    sl_table_t *big = pairs((int64_t)1 << 20, 5), *small = pairs(1000, 6), *dbig, *dsmall;
    SL_ASSERT_OK(sl_table_to_device(e, big, 0, &dbig));
    SL_ASSERT_OK(sl_table_to_device(e, small, 0, &dsmall));
    sl_plan_t *p;
    int ns;
    sl_query_t *q = query(e, &dbig, 1, "sort", "by=k", 0, &p, &ns);
    assert_int_equal(sl_query_run(q), SL_EBUDGET);
    printf("1M rows under a 2 MiB host budget: %s\n", sl_query_errmsg(q));
    assert_non_null(strstr(sl_query_errmsg(q), "host budget"));
    sl_query_destroy(q);
    sl_plan_destroy(p);
    struct flat want = cpu_sorted(small);
    int64_t base = host_in_use(e);
    q = query(e, &dsmall, 1, "sort", "by=k", 0, &p, &ns);
    SL_ASSERT_OK(sl_query_run(q));
    sl_table_t *out;
    SL_ASSERT_OK(sl_query_result(q, "o", &out));
    int64_t pooled = 0, other = 0;
    result_blocks(out, &pooled, &other);
    assert_int_equal(pooled, 0);
    assert_true(host_in_use(e) - base >= other); /* the copies are charged while held */
    struct flat got = flatten(out);
    assert_int_equal(got.rows, want.rows);
    assert_int_equal(memcmp(got.v, want.v, (size_t)(want.rows * want.cols) * 8), 0);
    free(got.v);
    free(want.v);
    sl_table_unref(out);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_table_unref(dbig);
    sl_table_unref(dsmall);
    sl_table_unref(big);
    sl_table_unref(small);
    sl_engine_close(e);
}

/* CPU tasks over a GPU-resident table download their morsels (sl__gpu_batch_download,
 * as sl_task_batch_to_host does): the copies count in the host budget while held. 2^20
 * rows (8 MiB) in one morsel under a 2 MiB budget fail with SL_EBUDGET naming host_mem
 * (they were not charged: the query passed); the same engine then answers a small
 * table, and under a large budget the big one gives the right count and sum, with the
 * budget given back once the query is gone. */
SL_TEST(task_downloads_respect_the_host_budget)
{
    NEED_GPU();
    const char *aggs = "aggs=\"count(*), sum(p)\"";
    sl_table_t *big = pairs((int64_t)1 << 20, 7), *small = pairs(1000, 8);
    for (int roomy = 0; roomy < 2; roomy++) {
        struct sl_engine_config cfg;
        gpu_test_config(&cfg, SL_PLACE_CPU, 0);
        cfg.host_mem_limit = roomy ? 512 * MIB : 2 * MIB;
        cfg.morsel_rows_cpu = 1 << 20;
        sl_engine_t *e;
        SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
        sl_table_t *dbig, *dsmall;
        SL_ASSERT_OK(sl_table_to_device(e, big, 0, &dbig));
        SL_ASSERT_OK(sl_table_to_device(e, small, 0, &dsmall));
        int64_t base = host_in_use(e);
        sl_plan_t *p;
        int ns;
        sl_query_t *q = query(e, &dbig, 1, "aggregate", aggs, 0, &p, &ns);
        int rc = sl_query_run(q);
        printf("2^20 GPU-resident rows, CPU tasks, host budget %s: %s\n",
               roomy ? "512 MiB" : "2 MiB", rc == SL_OK ? "ok" : sl_query_errmsg(q));
        if (!roomy) {
            assert_int_equal(rc, SL_EBUDGET);
            assert_non_null(strstr(sl_query_errmsg(q), "host_mem"));
            sl_query_destroy(q);
            sl_plan_destroy(p);
            q = query(e, &dsmall, 1, "aggregate", aggs, 0, &p, &ns);
            rc = sl_query_run(q);
        }
        SL_ASSERT_OK(rc);
        struct flat got = result_flat(q, p);
        int64_t n = roomy ? (int64_t)1 << 20 : 1000;
        assert_int_equal(got.rows, 1);
        assert_int_equal(got.v[0], n);
        assert_int_equal(got.v[1], n * (n - 1) / 2); /* p is the row's position */
        free(got.v);
        assert_int_equal(host_in_use(e), base);
        sl_table_unref(dbig);
        sl_table_unref(dsmall);
        sl_engine_close(e);
    }
    sl_table_unref(big);
    sl_table_unref(small);
}

/* A CPU task's download of a batch a GPU kernel wrote is ordered after that kernel. A
 * GPU-resident table of 2^24 pairs sorted on the GPU (CUB, about a millisecond), then a
 * filter forced to the CPU: its tasks download the sort's device result on their
 * thread's default stream (sl__gpu_batch_download), which waits for no other stream, so
 * only the runtime's order makes them read the sorted rows: the finalize waits for its
 * stream before the source's tasks start. A finalize that returned with CUB still
 * running, or a download issued before it, would read unsorted or unwritten output (the
 * output is new pool memory, the seed this case's own) and the rows would differ from
 * the CPU engine's sort. */
SL_TEST(cpu_task_download_follows_the_kernel)
{
    NEED_GPU();
    sl_table_t *in = pairs((int64_t)1 << 24, 23);
    struct flat want = cpu_sorted(in);
    sl_engine_t *e = engine_with(SL_PLACE_GPU, 0, 0);
    sl_table_t *din;
    SL_ASSERT_OK(sl_table_to_device(e, in, 0, &din));
    for (int round = 0; round < 3; round++) {
        sl_plan_t *p;
        int src, ns, nf;
        SL_ASSERT_OK(sl_plan_create(&p));
        SL_ASSERT_OK(sl_plan_add_table(p, din, &src));
        SL_ASSERT_OK(sl_plan_add(p, "sort", &src, 1, "by=k", &ns));
        SL_ASSERT_OK(sl_plan_add(p, "filter", &ns, 1, "where=\"p >= 0\"", &nf));
        SL_ASSERT_OK(sl_plan_place(p, nf, SL_PLACE_CPU));
        SL_ASSERT_OK(sl_plan_output(p, nf, "o"));
        sl_query_t *q;
        SL_ASSERT_OK(sl_query_create(e, p, &q));
        SL_ASSERT_OK(sl_query_run(q));
        assert_true(((const struct sl__mat *)q->ops[ns].gstate)->gpu); /* sorted by CUB */
        const char *prof = sl_query_profile_json(q);
        assert_non_null(strstr(prof, "\"op\":\"filter\",\"device\":\"cpu\""));
        if (round == 0)
            printf("sort on the GPU, filter on the CPU: %.300s\n", prof);
        sl_table_t *out;
        SL_ASSERT_OK(sl_query_result(q, "o", &out));
        struct flat got = flatten(out);
        assert_int_equal(got.rows, want.rows);
        assert_int_equal(memcmp(got.v, want.v, (size_t)(want.rows * want.cols) * 8), 0);
        free(got.v);
        sl_table_unref(out);
        sl_query_destroy(q);
        sl_plan_destroy(p);
    }
    free(want.v);
    sl_table_unref(din);
    sl_table_unref(in);
    sl_engine_close(e);
}

static int64_t live_allocs(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    return c.live_allocs;
}

/* The result's pinned blocks stay valid after sl_engine_close; the last release gives
 * them back and frees the pool (no allocation left). */
SL_TEST(arrow_export_outlives_engine)
{
    NEED_GPU();
    sl_table_t *in = pairs((int64_t)1 << 20, 3);
    struct flat want = cpu_sorted(in);
    int64_t base = live_allocs();
    sl_engine_t *e = engine_with(SL_PLACE_GPU, 0, 0);
    sl_plan_t *p;
    int ns;
    sl_query_t *q = query(e, &in, 1, "sort", "by=k", 0, &p, &ns);
    SL_ASSERT_OK(sl_query_run(q));
    sl_table_t *out;
    SL_ASSERT_OK(sl_query_result(q, "o", &out));
    int64_t pooled = 0, other = 0;
    result_blocks(out, &pooled, &other);
    assert_true(pooled > 0);
    struct ArrowArrayStream st;
    SL_ASSERT_OK(sl_table_export_stream(out, &st));
    sl_table_unref(out);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_engine_close(e);
    int64_t row = 0;
    for (;;) {
        struct ArrowArray a;
        assert_int_equal(st.get_next(&st, &a), 0);
        if (!a.release)
            break;
        assert_int_equal(a.n_children, 2);
        for (int c = 0; c < 2; c++) {
            const int32_t *v = (const int32_t *)a.children[c]->buffers[1] + a.children[c]->offset;
            for (int64_t i = 0; i < a.length; i++)
                assert_true((uint64_t)(uint32_t)v[i] == want.v[(size_t)c * (size_t)want.rows +
                                                                (size_t)(row + i)]);
        }
        row += a.length;
        a.release(&a);
    }
    st.release(&st);
    assert_int_equal(row, want.rows);
    assert_int_equal(live_allocs(), base); /* the pool went with its last block */
    free(want.v);
    sl_table_unref(in);
}

/* One sort on a fresh engine (so that the pool grows: its cudaHostAlloc calls are among
 * the query's) with `fail` arming an injector; the right rows or a clean failure. */
static void fault_run(sl_table_t *in, const struct flat *want, int cuda, int64_t k, int *failed)
{
    int64_t base = live_allocs();
    sl_engine_t *e = engine_with(SL_PLACE_GPU, 0, 0);
    sl_plan_t *p;
    int ns;
    sl_query_t *q = query(e, &in, 1, "sort", "by=k", 0, &p, &ns);
    if (cuda)
        sl__cuda_fail_after(k, cudaErrorMemoryAllocation);
    else
        sl__mem_fail_after(k);
    int rc = sl_query_run(q);
    sl__cuda_fail_after(-1, 0);
    sl__mem_fail_after(-1);
    if (rc == SL_OK) {
        sl_table_t *out;
        SL_ASSERT_OK(sl_query_result(q, "o", &out));
        struct flat got = flatten(out);
        assert_int_equal(got.rows, want->rows);
        assert_int_equal(memcmp(got.v, want->v, (size_t)(want->rows * want->cols) * 8), 0);
        free(got.v);
        sl_table_unref(out);
    } else {
        if (rc != SL_ENOMEM && rc != SL_EDEVICE && rc != SL_EBUDGET)
            fail_msg("%s fault %lld: %s (%s)", cuda ? "CUDA" : "host", (long long)k,
                     sl_err_name(rc), sl_query_errmsg(q));
        (*failed)++;
    }
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_engine_close(e);
    assert_int_equal(live_allocs(), base);
}

SL_TEST(faults_while_downloading_into_the_pool)
{
    NEED_GPU();
    sl_test_config_off(1);
    sl_table_t *in = pairs((int64_t)1 << 18, 4);
    struct flat want = cpu_sorted(in);
    /* how many checked CUDA calls and host allocations one query makes */
    sl_engine_t *e = engine_with(SL_PLACE_GPU, 0, 0);
    sl_plan_t *p;
    int ns;
    sl_query_t *q = query(e, &in, 1, "sort", "by=k", 0, &p, &ns);
    int64_t calls0 = sl__cuda_checked_calls();
    struct sl__mem_counters c0, c1;
    sl__mem_counters(&c0);
    SL_ASSERT_OK(sl_query_run(q));
    sl__mem_counters(&c1);
    int64_t n_calls = sl__cuda_checked_calls() - calls0, n_allocs = c1.total_allocs - c0.total_allocs;
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_engine_close(e);
    int failed_cuda = 0, failed_host = 0;
    const int points = 24;
    for (int i = 0; i < points; i++) {
        fault_run(in, &want, 1, n_calls * i / points, &failed_cuda);
        fault_run(in, &want, 0, n_allocs * i / points, &failed_host);
    }
    printf("%lld checked CUDA calls and %lld host allocations a query; %d points each: %d "
           "and %d queries failed cleanly, the others gave the right rows\n",
           (long long)n_calls, (long long)n_allocs, points, failed_cuda, failed_host);
    assert_true(failed_cuda > 0 && failed_host > 0);
    free(want.v);
    sl_table_unref(in);
}
