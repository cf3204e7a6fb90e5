/* Tests the out-of-core GPU join (operators/join/join_cuda_ooc.c): with a GPU budget of
 * 24-48 MiB (engine config), joins of a few million rows cannot run in GPU memory and
 * must run out of core on the GPU (partition pass streamed from host memory, blocks
 * spilled to pinned host memory, pairs read back and joined). Results must equal the
 * CPU join (row multisets; exact aggregates) for uniform keys, Zipf skew, duplicates on
 * both sides (a build partition too large for the GPU goes to the CPU), 8-byte keys and
 * payloads, no matches and an empty side; the pool's peak must stay within the budget,
 * cross-checked with cudaMemGetInfo. Also: a host-resident join that fits runs in GPU
 * memory and equals the CPU. Skipped without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda/cuda_int.h"
#include "exec_int.h"
#include "join_test.h"
#include "sl_test.h"

struct spec {
    int64_t rows;
    int key64, n_pay, pay64;
    int64_t key_range;                  /* keys drawn from [0, key_range); 0 = a permutation */
    int64_t key_offset;                 /* added to every key (no-match cases) */
    int skew;                           /* 1: 90% of rows take key 7 */
    int nulls;                          /* 1: every 10th key is null */
    int huge;                           /* int64 payloads up to 2^50 (sums overflow int64) */
    int zipf;                           /* keys Zipf-distributed (s = 1) over key_range */
    uint64_t seed;
};

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static sl_table_t *make(const struct spec *sp, const char *side)
{
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    char names[5][16];
    const char *np[5];
    enum sl_type ty[5];
    int nc = 1 + sp->n_pay;
    for (int c = 0; c < nc; c++) {
        snprintf(names[c], sizeof names[c], c ? "%s%d" : "k", side, c);
        np[c] = names[c];
        ty[c] = c == 0 ? (sp->key64 ? SL_TYPE_INT64 : SL_TYPE_INT32)
                       : (sp->pay64 ? SL_TYPE_INT64 : SL_TYPE_INT32);
    }
    uint64_t s = sp->seed * 0x9E3779B97F4A7C15ull + 1;
    int64_t *keys = malloc((size_t)(sp->rows + 1) * sizeof *keys);
    for (int64_t i = 0; i < sp->rows; i++)
        keys[i] = i;
    for (int64_t i = sp->rows - 1; i > 0 && !sp->key_range; i--) {
        int64_t j = (int64_t)(rnd(&s) % (uint64_t)(i + 1)), x = keys[i];
        keys[i] = keys[j];
        keys[j] = x;
    }
    for (int64_t i = 0; i < sp->rows; i++) {
        if (sp->key_range)
            keys[i] = (int64_t)(rnd(&s) % (uint64_t)sp->key_range);
        if (sp->zipf) /* rank r with probability ~ 1/r: r = range^u - 1 */
            keys[i] = (int64_t)pow((double)sp->key_range, (double)(rnd(&s) >> 11) / 9007199254740992.0) - 1;
        if (sp->skew && rnd(&s) % 10 < 9)
            keys[i] = 7;
        keys[i] += sp->key_offset;
    }
    const int64_t chunk = 1 << 18; /* several batches, and batches of other sizes than morsels */
    for (int64_t lo = 0; lo < sp->rows || lo == 0; lo += chunk) {
        int64_t m = sp->rows - lo < chunk ? sp->rows - lo : chunk;
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, nc, np, ty, m));
        for (int c = 0; c < nc; c++) {
            void *d = sl_batch_column_data(b, c);
            for (int64_t i = 0; i < m; i++) {
                int64_t v = c == 0 ? keys[lo + i]
                                   : (int64_t)(rnd(&s) % 2000001) - 1000000 +
                                         (sp->pay64 ? (int64_t)(rnd(&s) % 1000) << (sp->huge ? 40 : 20) : 0);
                if (ty[c] == SL_TYPE_INT64)
                    ((int64_t *)d)[i] = v;
                else
                    ((int32_t *)d)[i] = (int32_t)v;
            }
        }
        if (sp->nulls) {
            uint8_t *valid = sl_batch_column_validity(b, 0);
            for (int64_t i = 0; i < m; i += 10)
                valid[i / 8] &= (uint8_t) ~(1u << (i % 8));
        }
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
        if (m == 0)
            break;
    }
    free(keys);
    return t;
}

/* The same join on the CPU and on the GPU with `gpu_mem` (0: the default); the GPU must
 * finalize it, within the budget. */
static void check(const struct spec *ls, const struct spec *rs, const char *opts,
                  int64_t gpu_mem)
{
    sl_table_t *l = make(ls, "l"), *r = make(rs, "r");
    sl_engine_t *cpu = engine(SL_PLACE_CPU, 0);
    struct fp want = run(cpu, l, r, opts, 0, NULL);
    size_t free0 = 0, free1 = 0, total = 0;
    assert_int_equal(cudaMemGetInfo(&free0, &total), cudaSuccess);
    sl_engine_t *gpu = engine(SL_PLACE_GPU, gpu_mem);
    int on_gpu = -1;
    struct fp got = run(gpu, l, r, opts, 0, &on_gpu);
    assert_int_equal(cudaMemGetInfo(&free1, &total), cudaSuccess);
    struct sl_mem_stats ms;
    sl_engine_mem_stats(gpu, &ms);
    printf("%s (%lld x %lld rows, budget %lld MiB): cpu %lld rows, gpu %lld rows, on the GPU "
           "%d, pool peak %.1f MiB, device free memory %+.1f MiB\n", opts, (long long)ls->rows,
           (long long)rs->rows, (long long)(gpu_mem >> 20), (long long)want.rows,
           (long long)got.rows, on_gpu, ms.gpu_peak / 1048576.0,
           ((double)free1 - (double)free0) / 1048576.0);
    assert_int_equal(got.rows, want.rows);
    assert_true(got.hash == want.hash);
    assert_int_equal(on_gpu, 1);
    assert_int_equal(ms.gpu_in_use, 0);
    if (gpu_mem > 0) {
        assert_true(ms.gpu_peak <= gpu_mem);
        /* Nothing allocates behind the pool: the device lost at most the budget (plus the
         * streams' and events' few MiB). */
        assert_true((double)free0 - (double)free1 <= (double)gpu_mem + 32.0 * 1048576);
    }
    sl_engine_close(cpu);
    sl_engine_close(gpu);
    sl_table_unref(l);
    sl_table_unref(r);
}

#define NEED_GPU()                            \
    do {                                      \
        if (sl__cuda_device_count() == 0)     \
            SL_SKIP("no GPU");                \
    } while (0)

#define MIB ((int64_t)1 << 20)

SL_TEST(ooc_uniform_pk_fk)
{
    NEED_GPU();
    struct spec pk = {.rows = 1 << 20, .n_pay = 1, .seed = 1};
    struct spec fk = {.rows = 3 << 20, .n_pay = 1, .key_range = 1 << 20, .seed = 2};
    check(&fk, &pk, "on=k", 32 * MIB);
    check(&fk, &pk, "on=k", 24 * MIB);
    check(&fk, &pk, "on=k output=aggregate", 32 * MIB);
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
    check(&b, &a, "on=k", 32 * MIB);
    /* 90% of the build side is one key: that partition is joined by the CPU. */
    struct spec hot = {.rows = 1 << 20, .n_pay = 1, .key_range = 1 << 20, .skew = 1, .seed = 8};
    struct spec fk = {.rows = 2 << 20, .n_pay = 1, .key_range = 1 << 24, .seed = 9};
    check(&fk, &hot, "on=k", 32 * MIB);
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
    check(&fk, &empty, "on=k", 32 * MIB);
    check(&fk, &empty, "on=k output=aggregate", 32 * MIB);
}

/* Host-resident inputs (not --resident device) that fit: the in-GPU join, same result. */
SL_TEST(host_resident_in_budget)
{
    NEED_GPU();
    struct spec pk = {.rows = 1 << 20, .n_pay = 1, .seed = 15};
    struct spec fk = {.rows = 3 << 20, .n_pay = 1, .key_range = 1 << 20, .seed = 16};
    check(&fk, &pk, "on=k", 0);
    check(&fk, &pk, "on=k", 1024 * MIB);
}
