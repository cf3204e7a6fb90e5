/* The generators on a GPU (operators/gen/gen_cuda.c, kernels/gen) against the same
 * generator on the CPU, row by row: gen.keys (unique, fk with match ratios, m2m; int32
 * and int64 keys; payloads of every type; null rates 0 to 1), gen.uniform (every type,
 * full and narrow ranges, nulls), gen.sequence and gen.blobs, with several GPU morsel
 * sizes (rows never a multiple of them) and one-row outputs. Values and validity bits
 * must be equal; gen.blobs' float32 coordinates may be 1 float32 ulp apart (CUDA's log
 * and cos against glibc's; the count of such values is printed and must stay below 1 in
 * 10^4). Cases the GPU leaves to the CPU (Zipf keys, float64 blobs) must have run on the
 * CPU and still agree. Skipped without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_int.h"
#include "exec_int.h"
#include "sl_test.h"
#include "sluice_k/gen.h"
#include "gpu_test.h"

#define MAX_COLS 40

/* A table's columns, flattened in row order: values widened to 8 bytes (floats kept as
 * their bits: float32 in the low word), and one byte per row for validity. */
struct flat {
    int64_t rows;
    int n_cols;
    enum sl_type type[MAX_COLS];
    uint64_t *v[MAX_COLS];
    uint8_t *ok[MAX_COLS];
};

static void flatten(sl_table_t *t, struct flat *f)
{
    memset(f, 0, sizeof *f);
    f->rows = sl_table_num_rows(t);
    for (int64_t b = 0, at = 0; b < sl_table_num_batches(t); b++) {
        sl_batch_t *batch = sl_table_batch(t, b);
        f->n_cols = sl_batch_num_columns(batch);
        assert_true(f->n_cols <= MAX_COLS);
        for (int c = 0; c < f->n_cols; c++) {
            struct sl_column col;
            SL_ASSERT_OK(sl_batch_column(batch, c, &col));
            if (!f->v[c]) {
                f->v[c] = calloc((size_t)f->rows + 1, 8);
                f->ok[c] = calloc((size_t)f->rows + 1, 1);
                f->type[c] = col.type;
            }
            for (int64_t i = 0; i < col.length; i++) {
                int64_t r = col.offset + i;
                uint64_t v = 0;
                if (sl_type_width(col.type) == 8)
                    memcpy(&v, (const char *)col.data + r * 8, 8);
                else
                    memcpy(&v, (const char *)col.data + r * 4, 4);
                f->v[c][at + i] = v;
                f->ok[c][at + i] = !col.validity || (col.validity[r >> 3] >> (r & 7) & 1);
            }
        }
        at += sl_batch_num_rows(batch);
    }
}

static void flat_free(struct flat *f)
{
    for (int c = 0; c < MAX_COLS; c++) {
        free(f->v[c]);
        free(f->ok[c]);
    }
}

static sl_engine_t *engine(enum sl_placement pl, int64_t morsel)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = 2;
    cfg.placement = pl;
    cfg.morsel_rows_cpu = morsel;
    cfg.morsel_rows_gpu = morsel;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    return e;
}

/* Runs generator `gen` with `opts` on `e`; returns the output in host memory and in
 * *mask where it ran (1 CPU, 2 GPU). */
static sl_table_t *generate(sl_engine_t *e, const char *gen, const char *opts, int *mask)
{
    sl_plan_t *p;
    int n;
    SL_ASSERT_OK(sl_plan_create(&p));
    SL_ASSERT_OK(sl_plan_add(p, gen, NULL, 0, opts, &n));
    SL_ASSERT_OK(sl_plan_output(p, n, "o"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    if (sl_query_run(q) != SL_OK)
        fail_msg("%s %s: %s", gen, opts, sl_query_errmsg(q));
    *mask = atomic_load(&q->ops[n].device_mask);
    sl_table_t *out, *host;
    SL_ASSERT_OK(sl_query_result(q, "o", &out));
    SL_ASSERT_OK(sl_table_to_host(out, &host));
    sl_table_unref(out);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return host;
}

/* 1 float32 ulp apart (or equal). */
static int near_f32(uint64_t a, uint64_t b)
{
    float x, y;
    uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
    memcpy(&x, &ua, 4);
    memcpy(&y, &ub, 4);
    return x == y || nextafterf(y, INFINITY) == x || nextafterf(y, -INFINITY) == x;
}

/* The GPU's output equals the CPU's (float32 columns within 1 ulp when `f32_ulp`); the
 * GPU made it when `want_gpu`, else the CPU did (its CUDA implementation said no). */
static void check(const char *gen, const char *opts, int want_gpu, int f32_ulp)
{
    static const int64_t morsels[] = {1 << 16, 100003, 1 << 20};
    sl_engine_t *cpu = engine(SL_PLACE_CPU, 0);
    int mask;
    sl_table_t *want_t = generate(cpu, gen, opts, &mask);
    assert_int_equal(mask & 2, 0);
    struct flat want;
    flatten(want_t, &want);
    for (size_t m = 0; m < sizeof morsels / sizeof morsels[0]; m++) {
        sl_engine_t *gpu = engine(SL_PLACE_GPU, morsels[m]);
        sl_table_t *got_t = generate(gpu, gen, opts, &mask);
        struct flat got;
        flatten(got_t, &got);
        int64_t ulps = 0, nulls = 0;
        assert_int_equal(got.rows, want.rows);
        assert_int_equal(got.n_cols, want.n_cols);
        for (int c = 0; c < want.n_cols; c++) {
            assert_int_equal(got.type[c], want.type[c]);
            for (int64_t r = 0; r < want.rows; r++) {
                nulls += !want.ok[c][r];
                if (got.ok[c][r] != want.ok[c][r])
                    fail_msg("%s %s morsel %lld: column %d row %lld: validity %d, CPU %d", gen,
                             opts, (long long)morsels[m], c, (long long)r, got.ok[c][r],
                             want.ok[c][r]);
                if (!want.ok[c][r] || got.v[c][r] == want.v[c][r])
                    continue;
                if (f32_ulp && want.type[c] == SL_TYPE_FLOAT32 &&
                    near_f32(got.v[c][r], want.v[c][r])) {
                    ulps++;
                    continue;
                }
                fail_msg("%s %s morsel %lld: column %d row %lld: 0x%llx, CPU 0x%llx", gen, opts,
                         (long long)morsels[m], c, (long long)r,
                         (unsigned long long)got.v[c][r], (unsigned long long)want.v[c][r]);
            }
        }
        printf("%s %s, morsel %lld: %lld rows equal (%lld nulls), %lld values 1 ulp apart, "
               "ran on %s\n", gen, opts, (long long)morsels[m], (long long)want.rows,
               (long long)nulls, (long long)ulps, mask == 2 ? "the GPU" : mask == 1 ? "the CPU" : "both");
        assert_true(ulps * 10000 <= want.rows * want.n_cols);
        if (want.rows > 0)
            assert_int_equal(mask, want_gpu ? 2 : 1);
        flat_free(&got);
        sl_table_unref(got_t);
        struct sl_mem_stats ms = SL_MEM_STATS_INIT;
        sl_engine_mem_stats(gpu, &ms);
        assert_int_equal(ms.gpu_in_use, 0); /* every device block went back to the pool */
        sl_engine_close(gpu);
    }
    flat_free(&want);
    sl_table_unref(want_t);
    sl_engine_close(cpu);
}

SL_TEST(keys_unique)
{
    NEED_GPU();
    check("gen.keys", "rows=1000003 kind=unique payloads=2 seed=3", 1, 0);
    check("gen.keys", "rows=300001 kind=unique type=int64 offset=-5 null_rate=0.1 payloads=1 "
                      "payload_type=float32", 1, 0);
    check("gen.keys", "rows=1 kind=unique payloads=1", 1, 0);
    check("gen.keys", "rows=2 kind=unique type=int64 offset=9223372036854775806", 1, 0);
}

SL_TEST(keys_fk)
{
    NEED_GPU();
    check("gen.keys", "rows=500001 kind=fk pk_rows=100000 match=0.6 payloads=3 "
                      "payload_type=int64 seed=9", 1, 0);
    check("gen.keys", "rows=400000 kind=fk type=int64 pk_rows=2^40 match=0.9 null_rate=0.05 "
                      "payloads=1 payload_type=float64", 1, 0);
    check("gen.keys", "rows=250000 kind=fk pk_rows=2147483647 payloads=1", 1, 0);
    check("gen.keys", "rows=250000 kind=fk pk_rows=7 match=0", 1, 0);
}

SL_TEST(keys_m2m_and_nulls)
{
    NEED_GPU();
    check("gen.keys", "rows=700001 kind=m2m distinct=1000 null_rate=0.5 payloads=1", 1, 0);
    check("gen.keys", "rows=200000 kind=m2m type=int64 distinct=1 payloads=2 "
                      "payload_type=float32", 1, 0);
    check("gen.keys", "rows=100000 kind=m2m distinct=50 null_rate=1", 1, 0);
    check("gen.keys", "rows=100000 kind=unique null_rate=0.999", 1, 0);
}

/* Zipf keys use log/exp: the CPU makes them, inside the GPU pipeline. */
SL_TEST(keys_zipf_stay_on_the_cpu)
{
    NEED_GPU();
    check("gen.keys", "rows=300000 kind=fk pk_rows=10000 zipf=1.1 match=0.8 payloads=1", 0, 0);
    check("gen.keys", "rows=300000 kind=m2m distinct=1000 zipf=0.5 type=int64 null_rate=0.1", 0, 0);
}

SL_TEST(uniform_every_type)
{
    NEED_GPU();
    check("gen.uniform", "rows=500001 type=int32 min=-5 max=100 seed=4", 1, 0);
    check("gen.uniform", "rows=500001 type=int64 min=-9223372036854775808 "
                         "max=9223372036854775807 null_rate=0.3", 1, 0);
    check("gen.uniform", "rows=300000 type=int64 min=-1000000000000 max=1000000000000", 1, 0);
    check("gen.uniform", "rows=500001 type=float32 min=-3 max=7.5 null_rate=0.2", 1, 0);
    check("gen.uniform", "rows=500001 type=float64 null_rate=0.01", 1, 0);
    check("gen.uniform", "rows=100000 type=float64 min=-1e300 max=1e300", 1, 0);
    check("gen.uniform", "rows=100000 type=float32 min=1 max=1.0000001", 1, 0);
    check("gen.uniform", "rows=100000 type=float32 min=2.5 max=2.5", 1, 0);
    check("gen.uniform", "rows=1 type=int32 min=0 max=0", 1, 0);
}

SL_TEST(sequence)
{
    NEED_GPU();
    check("gen.sequence", "rows=1000003 start=-7 step=3 type=int32", 1, 0);
    check("gen.sequence", "rows=400000 start=9000000000000000000 step=-1000000000000", 1, 0);
    check("gen.sequence", "rows=1", 1, 0);
}

SL_TEST(blobs)
{
    NEED_GPU();
    check("gen.blobs", "points=300001 dims=8 k=16 seed=4 label=true", 1, 1);
    check("gen.blobs", "points=100000 dims=20 k=3 spread=0.5", 1, 1);
    check("gen.blobs", "points=50000 dims=1 k=1 spread=0 label=true", 1, 1);
    check("gen.blobs", "points=1 dims=33 k=2", 1, 1);
    /* float64 would show the last-ulp differences: made on the CPU */
    check("gen.blobs", "points=100000 dims=3 k=4 type=float64", 0, 0);
}

/* The launchers' argument checks (sluice_k/gen.h). */
SL_TEST(launchers_reject_bad_arguments)
{
    NEED_GPU();
    struct sl__gen_keys k = {.kind = SL__GEN_FK, .domain = 10, .zipf = 1.0};
    assert_int_equal(sl_k_gen_keys(&k, 0, 0, 10, NULL, NULL, 0), cudaErrorInvalidValue);
    k.zipf = 0;
    assert_int_equal(sl_k_gen_keys(&k, 0, 0, 0, NULL, NULL, 0), cudaSuccess);
    struct sl__gen_uni u = {.type = SL__GEN_I32, .ispan = 5, .null_rate = 0.5};
    assert_int_equal(sl_k_gen_uniform(&u, 0, 10, NULL, NULL, 0), cudaErrorInvalidValue);
    assert_int_equal(sl_k_gen_payload((enum sl__gen_vtype)7, 1, 0, 10, NULL, 0),
                     cudaErrorInvalidValue);
    float *cols[1] = {NULL};
    assert_int_equal(sl_k_gen_blobs_f32(1, 2, 8, 1.0, 0, 10, 0, SL_K_GEN_BLOBS_COLS + 1, cols,
                                        NULL, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_gen_blobs_f32(1, 2, 8, 1.0, 0, 10, 4, 5, cols, NULL, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_gen_sequence(0, 1, 1, 0, -1, NULL, 0), cudaErrorInvalidValue);
}
