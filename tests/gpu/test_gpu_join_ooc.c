/* Tests the out-of-core GPU join (operators/join/join_cuda_ooc.c): with a GPU budget of
 * 24-48 MiB (engine config), joins of a few million rows cannot run in GPU memory and
 * must run out of core on the GPU (partition pass streamed from host memory, blocks
 * spilled to pinned host memory, pairs read back and joined). Results must equal the
 * CPU join (row multisets; exact aggregates) for uniform keys, Zipf skew, duplicates on
 * both sides (a build partition too large for the GPU goes to the CPU), 8-byte keys and
 * payloads, no matches and an empty side; the pool's peak must stay within the budget,
 * cross-checked with cudaMemGetInfo. These engines turn the host-streamed join off
 * (debug_join_stream=off: it would take every join whose build side fits) and the profile
 * must show that the out-of-core join ran; both of its spills (debug_ooc_spill: DMA of
 * whole partitioned chunks, the default, and the append kernel's blocks) are checked, and
 * aggregates of 4-byte columns must have been summed by the join kernel (ooc_fused, the
 * default) except under debug_ooc_spill=dma (session 16's plan, also checked).
 * Budgets of 1/2, 1/4, 1/8 and 1/16 of the join state, and one-row sides. Also: a
 * host-resident join that fits runs in GPU memory and equals the CPU. Skipped without a
 * GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda/cuda_int.h"
#include "exec_int.h"
#include "gpu_worker_int.h"
#include "join_ooc_tables.h"
#include "join_test.h"
#include "sl_test.h"
#include "gpu_test.h"


static int spill_mode; /* debug_ooc_spill of check's GPU engines: 0 fused (the default), 1
                        * blocks, 2 dma_half, 3 dma (session 16's plan) */
static int fractions_dma; /* check_fractions also runs 1/16 with dma (session 16's plan) */
static int pin_tables; /* check pins its tables (their narrow copies go up, widened there) */

/* The join of tables l and r (made from ls and rs) on the GPU engine with `gpu_mem` (0:
 * the default) must give `want` within the budget; with need_gpu, the GPU must finalize
 * it, with need_gpu 2 out of core. */
static void check_gpu(const struct spec *ls, const struct spec *rs, sl_table_t *l, sl_table_t *r,
                      struct fp want, const char *opts, int64_t gpu_mem, int need_gpu)
{
    size_t free0 = 0, free1 = 0, total = 0;
    assert_int_equal(cudaMemGetInfo(&free0, &total), cudaSuccess);
    struct sl_engine_config cfg;
    gpu_test_config(&cfg, SL_PLACE_GPU, gpu_mem);
    cfg.debug_join_stream = 1; /* off */
    cfg.debug_ooc_spill = spill_mode;
    sl_engine_t *gpu;
    SL_ASSERT_OK(sl_test_engine_open(&gpu, &cfg));
    int on_gpu = -1;
    struct fp got = run(gpu, l, r, opts, 0, &on_gpu);
    int ooc = strstr(last_profile, "\"ooc_join\":1") != NULL;
    assert_int_equal(cudaMemGetInfo(&free1, &total), cudaSuccess);
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    sl_engine_mem_stats(gpu, &ms);
    /* What the engine's CUDA pool holds from the driver (its blocks, cached), and the
     * device's free memory once the engine (and so its pool) is gone: a loss that
     * outlives the pool is not the pool's. */
    struct sl__dpool_stats ps = {0};
    sl__dpool_stats(gpu->gpus[0]->pool, &ps);
    sl_engine_close(gpu);
    size_t free2 = 0;
    assert_int_equal(cudaMemGetInfo(&free2, &total), cudaSuccess);
    printf("%s (%lld x %lld rows, budget %lld MiB, spill %d): cpu %lld rows, gpu %lld rows, on "
           "the GPU %d, out of core %d, pool peak %.1f MiB, pool reserved %.1f MiB, device "
           "free memory %+.1f MiB (%+.1f once the engine closed)\n",
           opts, (long long)ls->rows, (long long)rs->rows, (long long)(gpu_mem >> 20),
           spill_mode, (long long)want.rows, (long long)got.rows, on_gpu, ooc,
           ms.gpu_peak / 1048576.0, ps.reserved_bytes / 1048576.0,
           ((double)free1 - (double)free0) / 1048576.0,
           ((double)free2 - (double)free0) / 1048576.0);
    if (ooc) {
        const char *v = strstr(last_profile, "\"ooc_parts\"");
        printf("  %.*s\n", v ? 120 : 0, v ? v : "");
    }
    assert_int_equal(got.rows, want.rows);
    assert_true(got.hash == want.hash);
    if (ooc && ls->rows > 0 && rs->rows > 0) {
        /* count and sums by the join kernel exactly where they can be: aggregates of
         * 4-byte keys and payloads, by default (debug_ooc_spill=fused) */
        int fusable = strstr(opts, "output=aggregate") && !ls->key64 && !ls->pay64 &&
                      !rs->key64 && !rs->pay64 && spill_mode == 0;
        assert_true(strstr(last_profile, fusable ? "\"ooc_fused\":1" : "\"ooc_fused\":0") != NULL);
    }
    if (need_gpu)
        assert_int_equal(on_gpu, 1);
    if (need_gpu == 2)
        assert_true(ooc);
    if (ooc && pin_tables && spill_mode == 0 && ls->rows > 0 && rs->rows > 0) {
        /* narrow copies went up: fewer bytes than the columns' */
        const char *u = strstr(last_profile, "\"ooc_upload_bytes\":");
        long long up = u ? atoll(u + strlen("\"ooc_upload_bytes\":")) : -1;
        long long full = (long long)(ls->rows * (ls->key64 ? 8 : 4) + ls->rows * (ls->pay64 ? 8 : 4) +
                                     rs->rows * (rs->key64 ? 8 : 4) + rs->rows * (rs->pay64 ? 8 : 4));
        printf("  pinned: %lld bytes up of %lld\n", up, full);
        assert_true(up > 0 && up < full);
    }
    assert_int_equal(ms.gpu_in_use, 0);
    if (gpu_mem > 0) {
        assert_true(ms.gpu_peak <= gpu_mem);
        /* Nothing allocates behind the pool: the device lost at most the budget (plus the
         * streams' and events' few MiB). */
        assert_true((double)free0 - (double)free1 <= (double)gpu_mem + 32.0 * 1048576);
    }
}

/* The same join on the CPU and on the GPU (check_gpu). */
static void check_on(const struct spec *ls, const struct spec *rs, const char *opts,
                     int64_t gpu_mem, int need_gpu)
{
    sl_table_t *l = make(ls, "l"), *r = make(rs, "r");
    if (pin_tables) {
        SL_ASSERT_OK(sl_table_pin(l));
        SL_ASSERT_OK(sl_table_pin(r));
    }
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0);
    struct fp want = run(cpu, l, r, opts, 0, NULL);
    sl_engine_close(cpu);
    check_gpu(ls, rs, l, r, want, opts, gpu_mem, need_gpu);
    sl_table_unref(l);
    sl_table_unref(r);
}

static void check(const struct spec *ls, const struct spec *rs, const char *opts,
                  int64_t gpu_mem)
{
    check_on(ls, rs, opts, gpu_mem, 2);
}

/* check with both spills. */
static void check_spills(const struct spec *ls, const struct spec *rs, const char *opts,
                         int64_t gpu_mem)
{
    for (spill_mode = 0; spill_mode < 2; spill_mode++)
        check(ls, rs, opts, gpu_mem);
    spill_mode = 0;
}

#define MIB ((int64_t)1 << 20)

/* Every other join kind over the same budget: the out-of-core path is inner-only, so these
 * run another way (in core in parts, or on the CPU), and must still equal the CPU join. */
SL_TEST(ooc_budget_every_kind_matches_cpu)
{
    NEED_GPU();
    struct spec pk = {.rows = 1 << 20, .n_pay = 1, .key_offset = 1 << 18, .seed = 21};
    struct spec fk = {.rows = 3 << 20, .n_pay = 1, .key_range = 1 << 20, .seed = 22};
    static const char *const kinds[] = {"on=k kind=left", "on=k kind=right", "on=k kind=full",
                                        "on=k kind=semi", "on=k kind=anti",
                                        "on=k kind=left algo=sortmerge"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        check_on(&fk, &pk, kinds[i], 32 * MIB, 0);
}

SL_TEST(ooc_uniform_pk_fk)
{
    NEED_GPU();
    struct spec pk = {.rows = 1 << 20, .n_pay = 1, .seed = 1};
    struct spec fk = {.rows = 3 << 20, .n_pay = 1, .key_range = 1 << 20, .seed = 2};
    check_spills(&fk, &pk, "on=k", 32 * MIB);
    check(&fk, &pk, "on=k", 24 * MIB);
    check_spills(&fk, &pk, "on=k output=aggregate", 32 * MIB); /* fused; blocks */
    spill_mode = 3; /* dma: session 16's plan, sums of materialized jobs */
    check(&fk, &pk, "on=k output=aggregate", 32 * MIB);
    spill_mode = 0;
}

/* Small input for compute-sanitizer: both spills, several chunks, cached and spilled. */
SL_TEST(ooc_sanitize_small)
{
    NEED_GPU();
    struct spec pk = {.rows = 300000, .n_pay = 1, .seed = 35};
    struct spec fk = {.rows = 1000000, .n_pay = 1, .key_range = 300000, .seed = 36};
    check_spills(&fk, &pk, "on=k", 20 * MIB);
    pin_tables = 1;
    check(&fk, &pk, "on=k", 20 * MIB);
    pin_tables = 0;
}

/* Budgets of 1/2, 1/4 and 1/8 of the join state (2^23 x 2^24 rows of 4-byte keys
 * and payloads: 192 MiB), so that several chunks are cached in GPU memory and the rest
 * spilled; and one-row sides. */
SL_TEST(ooc_budget_fractions_and_one_row)
{
    NEED_GPU();
    struct spec pk = {.rows = 1 << 23, .n_pay = 1, .seed = 31};
    struct spec fk = {.rows = 1 << 24, .n_pay = 1, .key_range = 1 << 23, .seed = 32};
    check(&fk, &pk, "on=k output=aggregate", 96 * MIB);
    check(&fk, &pk, "on=k output=aggregate", 48 * MIB);
    check_spills(&fk, &pk, "on=k", 24 * MIB);
    struct spec one = {.rows = 1, .n_pay = 1, .key_range = 1 << 20, .seed = 33};
    struct spec many = {.rows = 3 << 20, .n_pay = 1, .key_range = 1 << 20, .seed = 34};
    check(&many, &one, "on=k", 24 * MIB);
    check(&one, &many, "on=k output=aggregate", 24 * MIB);
    pin_tables = 1; /* narrow copies: keys below 2^24, payloads within +-10^6 */
    check(&fk, &pk, "on=k output=aggregate", 48 * MIB);
    check_spills(&fk, &pk, "on=k", 24 * MIB);
    check(&many, &one, "on=k", 24 * MIB);
    pin_tables = 0;
}

/* One join out of core at 1/2, 1/4 and 1/16 of its state (the key and payload bytes of
 * both sides: 384 MiB for 2^24 x 2^25 rows) by default (aggregates: fused sums), the
 * CPU's answer found once; at 1/4 also with the passes in half the budget (dma_half, the
 * plan before session 16), and with fractions_dma at 1/16 with session 16's plan (dma).
 * The profile's ooc_cached says how many chunks stayed in GPU memory. */
static void check_fractions(const struct spec *ls, const struct spec *rs, const char *opts)
{
    sl_table_t *l = make(ls, "l"), *r = make(rs, "r");
    if (pin_tables) {
        SL_ASSERT_OK(sl_table_pin(l));
        SL_ASSERT_OK(sl_table_pin(r));
    }
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0);
    struct fp want = run(cpu, l, r, opts, 0, NULL);
    sl_engine_close(cpu);
    int64_t state = ls->rows * ((ls->key64 ? 8 : 4) + (ls->pay64 ? 8 : 4)) +
                    rs->rows * ((rs->key64 ? 8 : 4) + (rs->pay64 ? 8 : 4));
    static const int frac[] = {2, 4, 16};
    for (int i = 0; i < 3; i++) {
        check_gpu(ls, rs, l, r, want, opts, state / frac[i], 2);
        const char *c = strstr(last_profile, "\"ooc_cached\":");
        if (i == 0 && ls->rows > 0 && rs->rows > 0) /* at 1/2 the cache holds chunks */
            assert_true(c && atoll(c + strlen("\"ooc_cached\":")) > 0);
    }
    spill_mode = 2;
    check_gpu(ls, rs, l, r, want, opts, state / 4, 2);
    if (fractions_dma) {
        spill_mode = 3; /* session 16's plan */
        check_gpu(ls, rs, l, r, want, opts, state / 16, 2);
    }
    spill_mode = 0;
    sl_table_unref(l);
    sl_table_unref(r);
}

/* Budgets of 1/2, 1/4 and 1/16 (issue 23): PK-FK (aggregated and materialized), every
 * build key twice (each job's result passes its PK-FK room: re-run), Zipf probe keys (the
 * first partition's probe side is sliced), no matches, and a one-row side against 2^25
 * rows (one job; 1/16 of 256 MiB). */
SL_TEST(ooc_budget_sweep)
{
    NEED_GPU();
    struct spec pk = {.rows = 1 << 24, .n_pay = 1, .seed = 111};
    struct spec fk = {.rows = 1 << 25, .n_pay = 1, .key_range = 1 << 24, .seed = 112};
    pin_tables = 1; /* as the benchmarks: narrow copies go up */
    fractions_dma = 1;
    check_fractions(&fk, &pk, "on=k output=aggregate");
    fractions_dma = 0;
    pin_tables = 0;
    check_fractions(&fk, &pk, "on=k");
    struct spec twice = {.rows = 1 << 24, .n_pay = 1, .key_range = 1 << 23, .seed = 113};
    struct spec fk2 = {.rows = 1 << 25, .n_pay = 1, .key_range = 1 << 23, .seed = 114};
    check_fractions(&fk2, &twice, "on=k output=aggregate");
    struct spec zipf = {.rows = 1 << 25, .n_pay = 1, .key_range = 1 << 24, .zipf = 1,
                        .seed = 115};
    check_fractions(&zipf, &pk, "on=k output=aggregate");
    struct spec none = {.rows = 1 << 24, .n_pay = 1, .key_offset = 1 << 26, .seed = 116};
    check_fractions(&fk, &none, "on=k");
    struct spec one = {.rows = 1, .n_pay = 1, .key_range = 1 << 20, .seed = 117};
    struct spec many = {.rows = 1 << 25, .n_pay = 1, .key_range = 1 << 20, .seed = 118};
    check_fractions(&many, &one, "on=k");
}

/* Negative keys and payloads, aggregated: the join kernel's sums of 4-byte columns are
 * sign-extended (ooc_fused, the default); also with each build key about four times,
 * fused and materialized (debug_ooc_spill=dma). */
SL_TEST(ooc_fused_negative_keys)
{
    NEED_GPU();
    struct spec pk = {.rows = 1 << 20, .n_pay = 1, .key_offset = -(1 << 22), .seed = 121};
    struct spec fk = {.rows = 3 << 20, .n_pay = 1, .key_range = 1 << 20,
                      .key_offset = -(1 << 22), .seed = 122};
    check(&fk, &pk, "on=k output=aggregate", 32 * MIB);
    struct spec dup = {.rows = 1 << 20, .n_pay = 1, .key_range = 1 << 18, .key_offset = -(1 << 22),
                       .seed = 123};
    check(&fk, &dup, "on=k output=aggregate", 24 * MIB);
    spill_mode = 3; /* dma */
    check(&fk, &dup, "on=k output=aggregate", 24 * MIB); /* materialized sums */
    spill_mode = 0;
}

SL_TEST(ooc_zipf_probe_skew)
{
    NEED_GPU();
    struct spec pk = {.rows = 1 << 20, .n_pay = 1, .seed = 3};
    struct spec fk = {.rows = 3 << 20, .n_pay = 1, .key_range = 1 << 20, .zipf = 1, .seed = 4};
    check(&fk, &pk, "on=k", 32 * MIB);
    struct spec hot = {.rows = 3 << 20, .n_pay = 1, .key_range = 1 << 20, .skew = 1, .seed = 5};
    check(&hot, &pk, "on=k output=aggregate", 32 * MIB); /* 90% of the probe rows: one key */
}

SL_TEST(ooc_duplicates_both_sides)
{
    NEED_GPU();
    struct spec a = {.rows = 1 << 19, .n_pay = 1, .key_range = 1 << 17, .seed = 6};
    struct spec b = {.rows = 2 << 20, .n_pay = 1, .key_range = 1 << 17, .seed = 7};
    check_spills(&b, &a, "on=k", 32 * MIB);
    /* 90% of the build side is one key: that partition is joined by the CPU. */
    struct spec hot = {.rows = 1 << 20, .n_pay = 1, .key_range = 1 << 20, .skew = 1, .seed = 8};
    struct spec fk = {.rows = 2 << 20, .n_pay = 1, .key_range = 1 << 24, .seed = 9};
    check_spills(&fk, &hot, "on=k", 32 * MIB);
    check(&fk, &hot, "on=k output=aggregate", 32 * MIB);
}

SL_TEST(ooc_8_byte_keys_and_payloads)
{
    NEED_GPU();
    struct spec pk = {.rows = 1 << 20, .key64 = 1, .n_pay = 1, .pay64 = 1, .seed = 10};
    struct spec fk = {.rows = 2 << 20, .key64 = 1, .n_pay = 1, .pay64 = 1, .key_range = 1 << 20,
                      .seed = 11};
    check(&fk, &pk, "on=k", 32 * MIB);
    check(&fk, &pk, "on=k output=aggregate", 48 * MIB);
}

SL_TEST(ooc_no_matches_and_empty_side)
{
    NEED_GPU();
    struct spec pk = {.rows = 1 << 20, .n_pay = 1, .key_offset = 1 << 24, .seed = 12};
    struct spec fk = {.rows = 3 << 20, .n_pay = 1, .key_range = 1 << 20, .seed = 13};
    check(&fk, &pk, "on=k", 32 * MIB);
    struct spec empty = {.rows = 0, .n_pay = 1, .seed = 14};
    check_on(&fk, &empty, "on=k", 32 * MIB, 1);
    check_on(&fk, &empty, "on=k output=aggregate", 32 * MIB, 1);
}

/* Host-resident inputs (not --resident device) that fit: the in-GPU join, same result. */
SL_TEST(host_resident_in_budget)
{
    NEED_GPU();
    struct spec pk = {.rows = 1 << 20, .n_pay = 1, .seed = 15};
    struct spec fk = {.rows = 3 << 20, .n_pay = 1, .key_range = 1 << 20, .seed = 16};
    check_on(&fk, &pk, "on=k", 0, 1);
    check_on(&fk, &pk, "on=k", 1024 * MIB, 1);
}

/* ---------------- the host-streamed join (operators/join/join_cuda_stream.c) ---------------- */

/* The join on the CPU and on a GPU engine with debug_join_stream = mode (0 auto, 2 on),
 * the tables pinned when `pin`; with `streamed` 1 the GPU must have streamed it (the
 * profile's host_streamed), with 0 it must not have. */
static int stream_slots; /* debug_join_stream_slots of check_stream's engines */
static int stream_table; /* their debug_join_stream_table (0 parts, 1 whole) */
static long long narrow_saved; /* the last streamed join's stream_narrow_saved */
/* the profile's stream_table that a streamed join must have (-1: any), or want_or */
static int want_table = -1, want_or = -1;

static void check_stream(const struct spec *ls, const struct spec *rs, const char *opts, int pin,
                         int mode, int64_t gpu_mem, int streamed)
{
    sl_table_t *l = make(ls, "l"), *r = make(rs, "r");
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0);
    struct fp want = run(cpu, l, r, opts, 0, NULL);
    struct sl_engine_config cfg;
    gpu_test_config(&cfg, SL_PLACE_GPU, gpu_mem);
    cfg.debug_join_stream = mode;
    cfg.debug_join_stream_slots = stream_slots;
    cfg.debug_join_stream_table = stream_table;
    sl_engine_t *gpu;
    SL_ASSERT_OK(sl_test_engine_open(&gpu, &cfg));
    if (pin) {
        SL_ASSERT_OK(sl_table_pin(l));
        SL_ASSERT_OK(sl_table_pin(r));
    }
    int on_gpu = -1;
    struct fp got = run(gpu, l, r, opts, 0, &on_gpu);
    int was = strstr(last_profile, "\"host_streamed\":1") != NULL;
    const char *how = strstr(last_profile, "\"stream_table\":");
    int table = how ? atoi(how + strlen("\"stream_table\":")) : -1;
    const char *nar = strstr(last_profile, "\"stream_narrow_saved\":");
    narrow_saved = nar ? atoll(nar + strlen("\"stream_narrow_saved\":")) : -1;
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    sl_engine_mem_stats(gpu, &ms);
    printf("%s (%lld x %lld rows, %s, mode %d, budget %lld MiB): cpu %lld rows, gpu %lld rows, "
           "on the GPU %d, streamed %d (table %d, narrow copies saved %lld bytes), pool peak "
           "%.1f MiB\n", opts, (long long)ls->rows, (long long)rs->rows,
           pin ? "pinned" : "pageable", mode, (long long)(gpu_mem >> 20), (long long)want.rows,
           (long long)got.rows, on_gpu, was, table, narrow_saved, ms.gpu_peak / 1048576.0);
    assert_int_equal(got.rows, want.rows);
    assert_true(got.hash == want.hash);
    if (streamed >= 0)
        assert_int_equal(was, streamed);
    if (was && want_table >= 0 && table != want_or)
        assert_int_equal(table, want_table);
    assert_int_equal(ms.gpu_in_use, 0);
    if (gpu_mem > 0)
        assert_true(ms.gpu_peak <= gpu_mem);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
    sl_table_unref(l);
    sl_table_unref(r);
}

/* Unique dense build keys (the direct table), materialized and aggregated, pinned and
 * pageable (staged), 4- and 8-byte keys, two payloads a side. */
SL_TEST(stream_pk_fk)
{
    NEED_GPU();
    struct spec pk = {.rows = 1 << 20, .n_pay = 1, .seed = 31};
    struct spec fk = {.rows = 3 << 20, .n_pay = 1, .key_range = 1 << 20, .seed = 32};
    for (int pin = 0; pin < 2; pin++) {
        check_stream(&fk, &pk, "on=k", pin, 2, 0, 1);
        check_stream(&fk, &pk, "on=k output=aggregate", pin, 2, 0, 1);
    }
    struct spec pk8 = {.rows = 1 << 19, .key64 = 1, .n_pay = 2, .pay64 = 1, .seed = 33};
    struct spec fk8 = {.rows = (1 << 21) + 5, .key64 = 1, .n_pay = 2, .key_range = 1 << 19,
                       .seed = 34};
    check_stream(&fk8, &pk8, "on=k", 1, 2, 0, 1);
    check_stream(&pk8, &fk8, "on=k output=aggregate", 0, 2, 0, 1);
    /* Build keys spread over 2^30 (the hash table, no duplicates), probe chunks of 2^22
     * rows and a last short one. */
    struct spec sparse = {.rows = 1 << 20, .n_pay = 1, .key_range = 1 << 30, .seed = 35};
    struct spec many = {.rows = (9 << 20) + 77, .n_pay = 1, .key_range = 1 << 30, .seed = 36};
    check_stream(&many, &sparse, "on=k", 1, 2, 0, 1);
}

/* Repeated build keys: the hash table with duplicates, chunks with more results than rows
 * (re-run with room for all), Zipf and one-key skew, and a result the budget cannot hold
 * (the CPU joins it). */
SL_TEST(stream_duplicates_and_skew)
{
    NEED_GPU();
    struct spec a = {.rows = 1 << 19, .n_pay = 1, .key_range = 1 << 17, .seed = 41};
    struct spec b = {.rows = 2 << 20, .n_pay = 1, .key_range = 1 << 17, .seed = 42};
    check_stream(&b, &a, "on=k", 1, 2, 0, 1);
    check_stream(&b, &a, "on=k output=aggregate", 0, 2, 0, 1);
    struct spec pk = {.rows = 1 << 20, .n_pay = 1, .seed = 43};
    struct spec zipf = {.rows = 3 << 20, .n_pay = 1, .key_range = 1 << 20, .zipf = 1, .seed = 44};
    check_stream(&zipf, &pk, "on=k", 1, 2, 0, 1);
    struct spec hot = {.rows = 1 << 20, .n_pay = 1, .key_range = 1 << 20, .skew = 1, .seed = 45};
    struct spec fk = {.rows = 2 << 20, .n_pay = 1, .key_range = 1 << 24, .seed = 46};
    check_stream(&fk, &hot, "on=k", 1, 2, 0, 1);
    /* 2^13 probe rows over 4 keys against 2^12 build rows over the same 4: 2^23 result
     * rows (96 MiB) under a 32 MiB budget. */
    struct spec few_b = {.rows = 1 << 12, .n_pay = 1, .key_range = 4, .seed = 47};
    struct spec few_p = {.rows = 1 << 13, .n_pay = 1, .key_range = 4, .seed = 48};
    check_stream(&few_p, &few_b, "on=k", 1, 2, 32 * MIB, -1);
}

/* No matches, an empty side, one row, null keys (not streamed: another path joins). */
SL_TEST(stream_edges)
{
    NEED_GPU();
    struct spec pk = {.rows = 1 << 20, .n_pay = 1, .key_offset = 1 << 24, .seed = 51};
    struct spec fk = {.rows = 3 << 20, .n_pay = 1, .key_range = 1 << 20, .seed = 52};
    check_stream(&fk, &pk, "on=k", 1, 2, 0, 1);
    check_stream(&fk, &pk, "on=k output=aggregate", 1, 2, 0, 1);
    struct spec empty = {.rows = 0, .n_pay = 1, .seed = 53};
    check_stream(&fk, &empty, "on=k", 1, 2, 0, -1);
    check_stream(&fk, &empty, "on=k output=aggregate", 0, 2, 0, -1);
    struct spec one = {.rows = 1, .n_pay = 1, .key_range = 1, .seed = 54};
    struct spec small = {.rows = 1000, .n_pay = 1, .key_range = 3, .seed = 55};
    check_stream(&small, &one, "on=k", 1, 2, 0, 1);
    check_stream(&one, &small, "on=k", 0, 2, 0, 1);
    struct spec nulls = {.rows = 1 << 20, .n_pay = 1, .key_range = 1 << 20, .nulls = 1,
                         .seed = 56};
    check_stream(&nulls, &pk, "on=k", 1, 2, 0, 0);
    /* semi and anti joins stream the left side through the right's table (issue 18);
     * with debug_join_stream=inner (3) they keep their paths, as left joins do */
    check_stream(&fk, &pk, "on=k kind=semi", 1, 2, 0, 1);
    check_stream(&fk, &pk, "on=k kind=anti", 1, 2, 0, 1);
    check_stream(&fk, &pk, "on=k kind=semi", 1, 3, 0, 0);
    check_stream(&fk, &pk, "on=k kind=left", 1, 2, 0, 0);
}

/* auto: sides past 32 MiB in host memory stream; small ones go up through the sink, and
 * so do pinned tables' batches with narrow copies (keys below 2^23 and payloads within
 * +-10^6 narrow to 3 bytes: the sink's upload moves those). */
SL_TEST(stream_auto)
{
    NEED_GPU();
    struct spec pk = {.rows = 1 << 23, .n_pay = 1, .seed = 61};
    struct spec fk = {.rows = 1 << 23, .n_pay = 1, .key_range = 1 << 23, .seed = 62};
    check_stream(&fk, &pk, "on=k", 1, 0, 0, 0);
    check_stream(&fk, &pk, "on=k", 0, 0, 0, 1);
    /* keys over 2^30 and payloads up to 2^50: no narrow copies, pinned, streamed */
    struct spec wpk = {.rows = 1 << 23, .n_pay = 1, .pay64 = 1, .huge = 1, .key_range = 1 << 30,
                       .seed = 65};
    struct spec wfk = {.rows = 1 << 23, .n_pay = 1, .pay64 = 1, .huge = 1, .key_range = 1 << 30,
                       .seed = 66};
    check_stream(&wfk, &wpk, "on=k", 1, 0, 0, 1);
    struct spec spk = {.rows = 1 << 20, .n_pay = 1, .seed = 63};
    struct spec sfk = {.rows = 1 << 20, .n_pay = 1, .key_range = 1 << 20, .seed = 64};
    check_stream(&sfk, &spk, "on=k", 1, 0, 0, 0);
    /* off: never */
    check_stream(&fk, &pk, "on=k", 1, 1, 0, 0);
}

/* The smallest probe chunks (CHUNK_MIN, 4,096 rows): budgets around what the stream needs
 * with them (join_cuda_stream.c, stream_need: a build side of 2^16 rows of 8 bytes, its
 * 1 MiB table, two chunks in and out, 8 MiB of slack: 10,129,408 bytes). Just below,
 * the join does not stream and another path (or the CPU) gives the rows; at and just
 * above, it streams in 4,096-row chunks within the budget, so the stream's allocations
 * fit what it planned. None fails. (Finalize no longer goes on with CHUNK_MIN chunks that
 * do not fit a budget shrunk since can_run: it hands the join to the CPU.) */
SL_TEST(stream_smallest_chunks)
{
    NEED_GPU();
    struct spec pk = {.rows = 1 << 16, .n_pay = 1, .seed = 101};
    struct spec fk = {.rows = 1 << 20, .n_pay = 1, .key_range = 1 << 16, .seed = 102};
    const int64_t need = 10129408;
    const int64_t budgets[] = {need - 65536, need, need + 65536};
    int smallest = 0;
    for (int i = 0; i < 3; i++) {
        check_stream(&fk, &pk, "on=k", 0, 2, budgets[i], -1);
        const char *c = strstr(last_profile, "\"stream_chunk_rows\":");
        long long rows = c ? atoll(c + strlen("\"stream_chunk_rows\":")) : 0;
        int was = strstr(last_profile, "\"host_streamed\":1") != NULL;
        printf("  budget %lld bytes: streamed %d, chunks of %lld rows\n", (long long)budgets[i],
               was, rows);
        if (i == 0)
            assert_false(was && rows > 0);
        smallest += was && rows == 4096;
    }
    assert_true(smallest > 0);
}

/* Probe chunks in 1, 2, 3 and (0) as many input slots as the budget holds, over 3 chunks
 * of 2^22 rows and a short one: uploads ahead wrap around the slots; unique build keys
 * and repeated ones (each chunk's count waited for, re-runs into the same slot), pinned
 * and pageable, materialized and aggregated. */
SL_TEST(stream_slots_wrap)
{
    NEED_GPU();
    struct spec pk = {.rows = 1 << 20, .n_pay = 1, .seed = 81}; /* unique: not serial */
    struct spec many = {.rows = (13 << 20) + 5, .n_pay = 1, .key_range = 1 << 21, .seed = 82};
    struct spec dup = {.rows = 1 << 16, .n_pay = 1, .key_range = 1 << 15, .seed = 83};
    struct spec fkd = {.rows = (9 << 20) + 3, .n_pay = 1, .key_range = 1 << 15, .seed = 84};
    static const int slots[] = {1, 2, 3, 0};
    for (int i = 0; i < 4; i++) {
        stream_slots = slots[i];
        check_stream(&many, &pk, "on=k", i & 1, 2, 0, 1);
        check_stream(&many, &pk, "on=k output=aggregate", !(i & 1), 2, 0, 1);
        check_stream(&fkd, &dup, "on=k", i & 1, 2, 0, 1);
    }
    stream_slots = 0;
}

/* The table built in parts as the build side arrives (three chunks of 2^22 rows and a
 * short one), against the table built after it (debug_join_stream_table=whole, profile
 * stream_table 0): the direct table over the first chunk's range for shuffled keys and
 * ascending ones (1); a repeated key has it rebuilt whole (3: the hash table, the repeat
 * found); a key outside the direct table too (3: the direct table of the whole range),
 * unless the sink's batch order put it in the first chunk (1); sparse keys, some
 * repeated: the hash table in parts (2); semi and anti joins; a small budget (chunks of
 * fewer rows, so more parts). */
SL_TEST(stream_table_parts)
{
    NEED_GPU();
    const int64_t nb = (3 << 22) + 5;
    struct spec pk = {.rows = nb, .n_pay = 1, .seed = 91};
    struct spec fk = {.rows = 4 << 22, .n_pay = 1, .key_range = nb + 1000, .seed = 92};
    struct spec up = {.rows = nb, .n_pay = 1, .sorted = 1, .seed = 93};
    struct spec dup = {.rows = nb, .n_pay = 1, .last_key = 5, .seed = 95};
    /* keys nb..2 nb - 1 and one at 2.6 nb: past the direct table the first chunk's range
     * gives (0.5 nb to 2.5 nb), within the dense rule's 2 nb slots of the whole range */
    struct spec out = {.rows = nb, .n_pay = 1, .key_offset = nb, .last_key = nb * 16 / 10,
                       .seed = 94};
    struct spec fko = {.rows = 4 << 22, .n_pay = 1, .key_range = nb * 17 / 10, .key_offset = nb,
                       .seed = 98};
    struct spec sparse = {.rows = nb, .n_pay = 1, .key_range = 1 << 30, .seed = 96};
    struct spec fks = {.rows = 4 << 22, .n_pay = 1, .key_range = 1 << 30, .seed = 97};
    for (int whole = 0; whole < 2; whole++) {
        stream_table = whole;
        want_table = whole ? 0 : 1;
        check_stream(&fk, &pk, "on=k", 1, 2, 0, 1);
        check_stream(&fk, &pk, "on=k output=aggregate", 0, 2, 0, 1);
        check_stream(&fk, &up, "on=k", 0, 2, 0, 1);
        check_stream(&fk, &pk, "on=k kind=semi", 1, 2, 0, 1);
        check_stream(&fk, &up, "on=k kind=anti", 1, 2, 0, 1);
        want_table = whole ? 0 : 3;
        check_stream(&fk, &dup, "on=k", 0, 2, 0, 1);
        check_stream(&fk, &dup, "on=k output=aggregate", 1, 2, 0, 1);
        want_or = whole ? -1 : 1;
        check_stream(&fko, &out, "on=k", 1, 2, 0, 1);
        check_stream(&fko, &out, "on=k kind=semi", 0, 2, 0, 1);
        want_or = -1;
        want_table = whole ? 0 : 2;
        check_stream(&fks, &sparse, "on=k", 1, 2, 0, 1);
    }
    stream_table = 0;
    want_table = -1;
    struct spec spk = {.rows = 1 << 20, .n_pay = 1, .seed = 98};
    struct spec sfk = {.rows = 3 << 20, .n_pay = 1, .key_range = 1 << 20, .seed = 99};
    check_stream(&sfk, &spk, "on=k", 1, 2, 48 * MIB, -1);
    check_stream(&sfk, &spk, "on=k output=aggregate", 0, 2, 48 * MIB, -1);
}

/* Small enough for compute-sanitizer, the table in parts: semi and anti joins build the
 * right side, here larger than the probe chunk (2^16 rows: two parts), with shuffled and
 * ascending keys, a key outside the first part's direct table and a repeated one. */
SL_TEST(stream_table_small)
{
    NEED_GPU();
    const int64_t nb = (1 << 16) + 3;
    struct spec fk = {.rows = (1 << 15) + 1, .n_pay = 1, .key_range = nb + 100, .seed = 101};
    struct spec pk = {.rows = nb, .n_pay = 1, .seed = 102};
    struct spec up = {.rows = nb, .n_pay = 1, .sorted = 1, .seed = 103};
    struct spec dup = {.rows = nb, .n_pay = 1, .last_key = 5, .seed = 105};
    struct spec out = {.rows = nb, .n_pay = 1, .key_offset = nb, .last_key = nb * 16 / 10,
                       .seed = 104};
    struct spec fko = {.rows = (1 << 15) + 1, .n_pay = 1, .key_range = nb * 17 / 10,
                       .key_offset = nb, .seed = 106};
    want_table = 1;
    check_stream(&fk, &pk, "on=k kind=semi", 1, 2, 0, 1);
    check_stream(&fk, &up, "on=k kind=anti", 0, 2, 0, 1);
    want_table = 3;
    check_stream(&fk, &dup, "on=k kind=anti", 1, 2, 0, 1);
    want_or = 1;
    check_stream(&fko, &out, "on=k kind=semi", 0, 2, 0, 1);
    want_or = -1;
    want_table = -1;
}

/* Small enough for compute-sanitizer: pinned and pageable, unique and repeated build
 * keys, materialized and aggregated. */
SL_TEST(stream_small)
{
    NEED_GPU();
    struct spec pk = {.rows = 1 << 14, .n_pay = 1, .seed = 71};
    struct spec fk = {.rows = (1 << 15) + 3, .n_pay = 1, .key_range = 1 << 14, .seed = 72};
    check_stream(&fk, &pk, "on=k", 1, 2, 0, 1);
    /* pinned keys below 2^14 and payloads within +-10^6: uploaded as narrow copies (2 and
     * 3 bytes), widened on the GPU: at least a byte saved a row of either side */
    assert_true(narrow_saved >= fk.rows + pk.rows);
    check_stream(&fk, &pk, "on=k output=aggregate", 0, 2, 0, 1);
    assert_int_equal(narrow_saved, 0); /* pageable: no narrow copies */
    /* 2^13 build rows over 2^11 keys: each of the 2^15 probe rows meets 4 (one chunk of
     * 2^16 rows, 2^17 results: re-run with room for them) */
    struct spec dup = {.rows = 1 << 13, .n_pay = 1, .key_range = 1 << 11, .seed = 73};
    struct spec fkd = {.rows = 1 << 15, .n_pay = 1, .key_range = 1 << 11, .seed = 74};
    check_stream(&fkd, &dup, "on=k", 1, 2, 0, 1);
}
