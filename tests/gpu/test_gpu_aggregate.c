/* Tests the GPU group-by (issue 7).
 *
 * Kernel level: the host driver (operators/aggregate/agg_gpu.c) over the kernels of
 * kernels/aggregate with plain cudaMallocAsync memory, every method (table with shared
 * pre-aggregation, table without it, a table that must grow and replay rows, partitioned,
 * partitioned with more groups per partition than a block holds), against a plain
 * count/sum reference; and an int64 sum that overflows must write SL_EOVERFLOW to the
 * status word while one whose partial sums pass 2^63 but whose total fits must not.
 *
 * Operator level: the same plan placed on the GPU and on the CPU, results equal
 * (integers exactly, floats within a relative 1e-9): empty input, one row, all one
 * group, no key, 1,000 groups, more than 2^16 groups (the partitioned method), Zipf skew, null
 * keys and values with composite keys and every value type, GPU-resident input with the
 * output kept on the GPU, few groups under composite keys with nulls and with a warp's
 * partial sums past 2^64; an int64 overflow fails the query with SL_EOVERFLOW and a clear
 * message and the engine runs the next query. Skipped without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../operators/aggregate/agg_gpu.h"
#include "cuda/cuda_int.h"
#include "exec_int.h"
#include "gpu_test.h"
#include "sl_test.h"

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* ---------------- kernel level ---------------- */

static cudaStream_t g_stream;
static int64_t g_live;

static void *k_alloc(void *ctx, size_t b)
{
    (void)ctx;
    void *p = NULL;
    if (cudaMallocAsync(&p, b, g_stream) != cudaSuccess)
        return NULL;
    g_live++; /* live blocks: every one must come back */
    return p;
}

static void k_free(void *ctx, void *p)
{
    (void)ctx;
    if (!p)
        return;
    g_live--;
    CU(cudaFreeAsync(p, g_stream));
}

/* Device bytes the kernel-level driver may still take (0: no limit). */
static int64_t g_budget, g_last_grows, g_last_need, g_last_switched;
/* When set, the method threshold used by the adds (then set back before the output):
 * makes the sample's choice wrong on purpose. */
static int64_t g_add_threshold;

static int64_t k_budget(void *ctx)
{
    (void)ctx;
    return g_budget ? g_budget : INT64_MAX;
}

static void *h_alloc(void *ctx, size_t b)
{
    (void)ctx;
    return malloc(b);
}

static void h_free(void *ctx, void *p, size_t b)
{
    (void)ctx, (void)b;
    free(p);
}

struct kout {
    void *cols[3];
    uint32_t *valid[3];
    int64_t rows;
};

static int kout_fn(void *ctx, int64_t rows, struct sl_k_agg_out *out)
{
    struct kout *o = ctx;
    for (int c = 0; c < 3; c++) {
        k_free(NULL, o->cols[c]);
        k_free(NULL, o->valid[c]);
        o->valid[c] = NULL;
        o->cols[c] = out->d_cols[c] = k_alloc(NULL, (size_t)(rows + 1) * 8);
        if (c != 1)
            o->valid[c] = out->d_valid[c] = k_alloc(NULL, (size_t)(rows + 32) / 32 * 4);
    }
    o->rows = rows;
    return AGG_GDRV_OK;
}

/* count(*) and sum(v) of (int32 key, int64 value) through the driver, in `batches`
 * batches; compares with a reference over dense key ids. Returns the status word. */
static int32_t kernel_run(int64_t n, int64_t groups, int mode, int shared, int bits,
                          int64_t init_cap, int batches, int64_t big_every)
{
    int32_t *hk = malloc((size_t)(n + 1) * 4);
    int64_t *hv = malloc((size_t)(n + 1) * 8), *rc_cnt = calloc((size_t)groups, 8);
    __int128 *rc_sum = calloc((size_t)groups, sizeof(__int128));
    uint64_t s = 0x1234567 + (uint64_t)n + (uint64_t)groups;
    for (int64_t i = 0; i < n; i++) {
        int64_t g = (int64_t)(rnd(&s) % (uint64_t)groups);
        hk[i] = (int32_t)(g * 7919 - 1000000);
        hv[i] = big_every && i % big_every == 0 ? INT64_MAX / 16 : (int64_t)(rnd(&s) % 2001) - 1000;
        rc_cnt[g]++;
        rc_sum[g] += hv[i];
    }
    int32_t *dk;
    int64_t *dv;
    int32_t *d_status;
    CU(cudaMalloc((void **)&dk, (size_t)(n + 1) * 4));
    CU(cudaMalloc((void **)&dv, (size_t)(n + 1) * 8));
    CU(cudaMalloc((void **)&d_status, 4));
    CU(cudaMemcpy(dk, hk, (size_t)n * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(dv, hv, (size_t)n * 8, cudaMemcpyHostToDevice));
    CU(cudaMemset(d_status, 0, 4));
    /* on the legacy stream, which g_stream (non-blocking) does not wait for; a pageable
     * cudaMemcpy may return before its DMA lands */
    CU(cudaDeviceSynchronize());
    struct sl_k_agg_spec sp = {.n_keys = 1, .key_type = {SL_K_I32}, .n_aggs = 2,
                               .fn = {SL_K_AGG_COUNT_STAR, SL_K_AGG_SUM},
                               .in_type = {SL_K_I64, SL_K_I64}};
    const struct agg_gdrv_mem mem = {k_alloc, k_free, h_alloc, h_free, NULL, k_budget};
    struct agg_gdrv d;
    assert_int_equal(agg_gdrv_init(&d, &sp, g_stream, &mem), 0);
    d.force_mode = mode;
    d.shared_groups = shared;
    d.force_bits = bits;
    d.direct_bits = bits; /* the record table's partitioning pass (0 = by its size) */
    d.init_cap = init_cap;
    d.part_threshold = g_add_threshold; /* 0 = the default */
    for (int b = 0; b < batches; b++) {
        int64_t lo = n * b / batches, hi = n * (b + 1) / batches;
        struct sl_k_agg_input in;
        memset(&in, 0, sizeof in);
        in.n = hi - lo;
        in.keys[0].d_data = dk + lo;
        in.vals[1].d_data = dv + lo;
        int rc = agg_gdrv_add(&d, &in);
        if (rc == AGG_GDRV_EBUDGET)
            break;
        if (rc)
            fail_msg("add: %d (%s: %s)", rc, d.what, cudaGetErrorName(d.cuerr));
    }
    d.part_threshold = 0; /* the adds saw g_add_threshold; the end checks the default */
    struct kout o;
    memset(&o, 0, sizeof o);
    int64_t ng = -1, nulls[3];
    int rc = d.need_groups ? AGG_GDRV_EBUDGET : agg_gdrv_output(&d, kout_fn, &o, d_status, &ng, nulls);
    g_last_switched = d.switched;
    g_last_grows = d.grows;
    g_last_need = d.need_groups;
    if (rc == AGG_GDRV_EBUDGET) { /* the table the groups need is over the budget */
        for (int c = 0; c < 3; c++) {
            k_free(NULL, o.cols[c]);
            k_free(NULL, o.valid[c]);
        }
        agg_gdrv_free(&d);
        CU(cudaStreamSynchronize(g_stream));
        assert_int_equal(g_live, 0);
        cudaFree(dk), cudaFree(dv), cudaFree(d_status);
        free(hk), free(hv), free(rc_cnt), free(rc_sum);
        return AGG_GDRV_EBUDGET;
    }
    if (rc)
        fail_msg("output: %d (%s: %s)", rc, d.what, cudaGetErrorName(d.cuerr));
    int32_t status;
    CU(cudaMemcpy(&status, d_status, 4, cudaMemcpyDeviceToHost));
    int32_t *ok = malloc((size_t)(ng + 1) * 4);
    int64_t *oc = malloc((size_t)(ng + 1) * 8), *os = malloc((size_t)(ng + 1) * 8);
    CU(cudaMemcpy(ok, o.cols[0], (size_t)ng * 4, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(oc, o.cols[1], (size_t)ng * 8, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(os, o.cols[2], (size_t)ng * 8, cudaMemcpyDeviceToHost));
    int64_t want_groups = 0;
    for (int64_t g = 0; g < groups; g++)
        want_groups += rc_cnt[g] > 0;
    printf("n=%lld groups=%lld mode=%d -> %d bits=%d grows=%lld replayed=%lld: %lld groups, "
           "status %d\n", (long long)n, (long long)groups, mode, d.mode, d.bits,
           (long long)d.grows, (long long)d.replayed, (long long)ng, status);
    assert_int_equal(ng, want_groups);
    assert_int_equal(nulls[0], 0);
    for (int64_t r = 0; r < ng && status == 0; r++) {
        int64_t g = ((int64_t)ok[r] + 1000000) / 7919;
        assert_true(g >= 0 && g < groups && (int32_t)(g * 7919 - 1000000) == ok[r]);
        assert_int_equal(oc[r], rc_cnt[g]);
        assert_true((__int128)os[r] == rc_sum[g]);
        rc_cnt[g] = -1; /* each group once */
    }
    for (int c = 0; c < 3; c++) {
        k_free(NULL, o.cols[c]);
        k_free(NULL, o.valid[c]);
    }
    agg_gdrv_free(&d);
    CU(cudaStreamSynchronize(g_stream));
    assert_int_equal(g_live, 0);
    cudaFree(dk);
    cudaFree(dv);
    cudaFree(d_status);
    free(hk), free(hv), free(rc_cnt), free(rc_sum), free(ok), free(oc), free(os);
    return status;
}

static void kernel_setup(void)
{
    if (!g_stream)
        CU(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
}

SL_TEST(kernel_methods)
{
    NEED_GPU();
    kernel_setup();
    static const int modes[] = {AGG_GDRV_AUTO, AGG_GDRV_TABLE, AGG_GDRV_PART, AGG_GDRV_DIRECT};
    for (int m = 0; m < 4; m++) {
        int mode = modes[m];
        assert_int_equal(kernel_run(0, 1, mode, 0, 0, 0, 1, 0), 0);
        assert_int_equal(kernel_run(1, 1, mode, 0, 0, 0, 1, 0), 0);
        assert_int_equal(kernel_run(100000, 1, mode, 0, 0, 0, 2, 0), 0);
        assert_int_equal(kernel_run(500000, 1000, mode, 0, 0, 0, 3, 0), 0);
        assert_int_equal(kernel_run(600000, 150000, mode, 0, 0, 0, 2, 0), 0);
    }
    /* No shared table; a tiny table that grows (spill + overflow replay); partitions
     * with more groups than a block holds (rounds). */
    assert_int_equal(kernel_run(300000, 5000, AGG_GDRV_TABLE, -1, 0, 0, 1, 0), 0);
    assert_int_equal(kernel_run(300000, 50000, AGG_GDRV_TABLE, 16, 0, 64, 3, 0), 0);
    assert_int_equal(kernel_run(300000, 50000, AGG_GDRV_PART, 0, 1, 0, 2, 0), 0);
    /* The record table partitioned first (one and three bits), unpartitioned, and one for
     * 64 groups that holds 50,000 (every batch runs again into bigger ones). */
    assert_int_equal(kernel_run(300000, 50000, AGG_GDRV_DIRECT, 0, 1, 0, 2, 0), 0);
    assert_int_equal(kernel_run(300001, 200000, AGG_GDRV_DIRECT, 0, 3, 0, 3, 0), 0);
    assert_int_equal(kernel_run(300000, 50000, AGG_GDRV_DIRECT, 0, -1, 0, 2, 0), 0);
    assert_int_equal(kernel_run(300000, 50000, AGG_GDRV_DIRECT, 0, 0, 64, 3, 0), 0);
    assert_true(g_last_grows >= 1);
}

/* A table sized from the sample that turns out too small (forced tiny here) is checked
 * once at the end and every batch runs again into a bigger one: exact results, no row
 * lost; a table the budget cannot hold is AGG_GDRV_EBUDGET, nothing leaked. */
SL_TEST(kernel_table_too_small_runs_again)
{
    NEED_GPU();
    kernel_setup();
    assert_int_equal(kernel_run(400000, 60000, AGG_GDRV_TABLE, 0, 0, 64, 7, 0), 0);
    assert_true(g_last_grows >= 2); /* 64 -> 256 -> ... -> 65536 */
    assert_int_equal(kernel_run(400000, 3000, AGG_GDRV_TABLE, 0, 0, 0, 9, 0), 0);
    assert_int_equal(g_last_grows, 0); /* the sampled estimate was enough */
    /* The sample chose the table (threshold raised for the adds); at the end the table
     * is past the real threshold: the kept batches are partitioned instead. */
    g_add_threshold = (int64_t)1 << 40;
    assert_int_equal(kernel_run(400000, 150000, AGG_GDRV_AUTO, 0, 0, 64, 5, 0), 0);
    assert_int_equal(g_last_switched, 1);
    g_add_threshold = 0;
    g_budget = (int64_t)1 << 20;
    assert_int_equal(kernel_run(400000, 60000, AGG_GDRV_TABLE, 0, 0, 1024, 3, 0),
                     AGG_GDRV_EBUDGET);
    assert_true(g_last_need > 1024);
    g_budget = 0;
}

SL_TEST(kernel_int64_overflow_in_status_word)
{
    NEED_GPU();
    kernel_setup();
    /* Every 3rd row is INT64_MAX / 16 in 3 groups: sums overflow int64. */
    assert_int_equal(kernel_run(3000, 3, AGG_GDRV_TABLE, 0, 0, 0, 1, 3), SL_EOVERFLOW);
    assert_int_equal(kernel_run(3000, 3, AGG_GDRV_PART, 0, 0, 0, 1, 3), SL_EOVERFLOW);
    assert_int_equal(kernel_run(3000, 3, AGG_GDRV_DIRECT, 0, 0, 0, 1, 3), SL_EOVERFLOW);
    assert_int_equal(kernel_run(3000, 3000, AGG_GDRV_DIRECT, 0, 0, 0, 1, 3), 0);
    /* About one big value per group (never 16 in one): the sums fit. */
    assert_int_equal(kernel_run(3000, 3000, AGG_GDRV_TABLE, 0, 0, 0, 1, 3), 0);
}

/* ---------------- operator level ---------------- */

struct tspec {
    int64_t rows, groups;
    double zipf;
    int nulls;          /* 1: null keys (10%) and null values (20%), composite keys */
    int overflow;       /* 1: int64 values that overflow one group's sum */
    int wide;           /* 1: runs of 64 rows in one group, vl +-(INT64_MAX / 4) by 16 */
    uint64_t seed;
};

static const char *const kNames[] = {"k", "k2", "vi", "vl", "vf", "vd"};

static sl_table_t *make(const struct tspec *sp)
{
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    enum sl_type ty[6] = {SL_TYPE_INT32, SL_TYPE_INT64, SL_TYPE_INT32, SL_TYPE_INT64,
                          SL_TYPE_FLOAT32, SL_TYPE_FLOAT64};
    double *cdf = NULL;
    if (sp->zipf > 0) {
        cdf = malloc((size_t)sp->groups * sizeof *cdf);
        double s = 0;
        for (int64_t g = 0; g < sp->groups; g++)
            cdf[g] = (s += pow((double)(g + 1), -sp->zipf));
        for (int64_t g = 0; g < sp->groups; g++)
            cdf[g] /= s;
    }
    uint64_t s = sp->seed * 0x9E3779B97F4A7C15ull + 1;
    const int64_t chunk = 70000;
    for (int64_t lo = 0; lo < sp->rows || lo == 0; lo += chunk) {
        int64_t m = sp->rows - lo < chunk ? sp->rows - lo : chunk;
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, 6, kNames, ty, m));
        int32_t *k = sl_batch_column_data(b, 0), *vi = sl_batch_column_data(b, 2);
        int64_t *k2 = sl_batch_column_data(b, 1), *vl = sl_batch_column_data(b, 3);
        float *vf = sl_batch_column_data(b, 4);
        double *vd = sl_batch_column_data(b, 5);
        for (int64_t i = 0; i < m; i++) {
            int64_t g;
            if (cdf) {
                double u = (double)(rnd(&s) >> 11) * 0x1.0p-53;
                int64_t a = 0, z = sp->groups - 1;
                while (a < z) {
                    int64_t mid = (a + z) / 2;
                    if (cdf[mid] < u)
                        a = mid + 1;
                    else
                        z = mid;
                }
                g = a;
            } else {
                g = (int64_t)(rnd(&s) % (uint64_t)sp->groups);
            }
            if (sp->wide) /* a warp's 32 rows: one group, 16 of +B then 16 of -B */
                g = (lo + i) / 64 % sp->groups;
            k[i] = (int32_t)(g * 2654435761u);
            k2[i] = sp->nulls ? (int64_t)(rnd(&s) % 3) << 35 : 0;
            vi[i] = (int32_t)(rnd(&s) % 2000001) - 1000000;
            vl[i] = sp->overflow && g == 0 ? INT64_MAX / 2 : (int64_t)(rnd(&s) % 2000001) - 1000000;
            if (sp->wide)
                vl[i] = (lo + i) / 16 % 2 ? -(INT64_MAX / 4) : INT64_MAX / 4;
            vf[i] = (float)((int64_t)(rnd(&s) % 20001) - 10000) / 8.0f;
            vd[i] = (double)((int64_t)(rnd(&s) % 2000001) - 1000000) / 16.0;
        }
        if (sp->nulls) {
            for (int c = 0; c < 6; c++) {
                uint8_t *valid = sl_batch_column_validity(b, c);
                for (int64_t i = 0; i < m; i++)
                    if (rnd(&s) % 100 < (c < 2 ? 10u : 20u))
                        valid[i / 8] &= (uint8_t) ~(1u << (i % 8));
            }
        }
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
        if (m == 0)
            break;
    }
    free(cdf);
    return t;
}

/* One output row: up to 2 keys then the aggregates, as doubles (ints exact below 2^53;
 * the int columns are also kept as int64) with null flags. */
struct orow {
    int64_t key[2];
    int knull[2];
    int64_t iv[16];
    double fv[16];
    int null[16];
};

static int nk_cmp;

static int row_cmp(const void *a, const void *b)
{
    const struct orow *x = a, *y = b;
    for (int j = 0; j < nk_cmp; j++) {
        if (x->knull[j] != y->knull[j])
            return x->knull[j] - y->knull[j];
        if (x->key[j] != y->key[j])
            return x->key[j] < y->key[j] ? -1 : 1;
    }
    return 0;
}

static struct orow *rows_of(sl_table_t *t, int nk, int64_t *n)
{
    *n = sl_table_num_rows(t);
    struct orow *r = calloc((size_t)*n + 1, sizeof *r);
    int64_t at = 0;
    for (int64_t bi = 0; bi < sl_table_num_batches(t); bi++) {
        sl_batch_t *b = sl_table_batch(t, bi);
        int nc = sl_batch_num_columns(b);
        for (int64_t i = 0; i < sl_batch_num_rows(b); i++, at++) {
            for (int c = 0; c < nc; c++) {
                struct sl_column col;
                sl_batch_column(b, c, &col);
                int64_t e = col.offset + i;
                int null = col.validity && !(col.validity[e / 8] >> (e % 8) & 1);
                int64_t iv = 0;
                double fv = 0;
                switch (col.type) {
                case SL_TYPE_INT32: iv = ((const int32_t *)col.data)[e]; fv = (double)iv; break;
                case SL_TYPE_INT64: iv = ((const int64_t *)col.data)[e]; fv = (double)iv; break;
                case SL_TYPE_FLOAT32: fv = ((const float *)col.data)[e]; break;
                default: fv = ((const double *)col.data)[e]; break;
                }
                if (c < nk) {
                    r[at].key[c] = null ? 0 : iv;
                    r[at].knull[c] = null;
                } else {
                    r[at].iv[c - nk] = null ? 0 : iv;
                    r[at].fv[c - nk] = null ? 0 : fv;
                    r[at].null[c - nk] = null;
                }
            }
        }
    }
    nk_cmp = nk;
    qsort(r, (size_t)*n, sizeof *r, row_cmp);
    return r;
}

static int64_t g_morsel_gpu; /* GPU morsel rows of new engines (0: default) */
static int g_no_big;         /* debug_agg_gpu_no_big_table of new engines */

static sl_engine_t *engine(enum sl_placement pl, int64_t gpu_mem)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.morsel_rows_gpu = g_morsel_gpu;
    cfg.debug_agg_gpu_no_big_table = g_no_big;
    cfg.n_threads = 2;
    cfg.placement = pl;
    cfg.gpu_mem_limit = gpu_mem;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    return e;
}

/* Runs in -> aggregate(opts) -> output; returns the query's code. */
static int run(sl_engine_t *e, sl_table_t *in, const char *opts, int output_device,
               sl_table_t **out, int *on_gpu, char *msg, size_t msg_cap)
{
    sl_plan_t *p;
    int ni, na;
    SL_ASSERT_OK(sl_plan_create(&p));
    SL_ASSERT_OK(sl_plan_add_table(p, in, &ni));
    SL_ASSERT_OK(sl_plan_add(p, "aggregate", &ni, 1, opts, &na));
    SL_ASSERT_OK(output_device ? sl_plan_output_device(p, na, "o") : sl_plan_output(p, na, "o"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    int rc = sl_query_run(q);
    if (msg)
        snprintf(msg, msg_cap, "%s", rc == SL_OK ? "" : sl_query_errmsg(q));
    if (on_gpu)
        *on_gpu = q->ops[na].home_gpu >= 0;
    *out = NULL;
    if (rc == SL_OK) {
        sl_table_t *o;
        SL_ASSERT_OK(sl_query_result(q, "o", &o));
        SL_ASSERT_OK(sl_table_to_host(o, out));
        sl_table_unref(o);
    }
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return rc;
}

static void compare(sl_table_t *want, sl_table_t *got, int nk)
{
    int64_t nw, ng;
    struct orow *w = rows_of(want, nk, &nw), *g = rows_of(got, nk, &ng);
    assert_int_equal(ng, nw);
    int nc = sl_batch_num_columns(sl_table_batch(want, 0)) - nk;
    for (int64_t r = 0; r < nw; r++) {
        assert_int_equal(row_cmp(&w[r], &g[r]), 0);
        for (int c = 0; c < nc; c++) {
            assert_int_equal(g[r].null[c], w[r].null[c]);
            assert_true(g[r].iv[c] == w[r].iv[c] || g[r].fv[c] != (double)g[r].iv[c]);
            double d = fabs(g[r].fv[c] - w[r].fv[c]);
            if (d > 1e-9 * fmax(1.0, fabs(w[r].fv[c])))
                fail_msg("row %lld column %d: gpu %.17g cpu %.17g", (long long)r, c, g[r].fv[c],
                         w[r].fv[c]);
        }
    }
    free(w);
    free(g);
}

static void check(const struct tspec *sp, const char *opts, int nk, int resident)
{
    sl_table_t *in = make(sp);
    sl_engine_t *cpu = engine(SL_PLACE_CPU, 0), *gpu = engine(SL_PLACE_GPU, 0);
    sl_table_t *want, *got, *gin = in;
    assert_int_equal(run(cpu, in, opts, 0, &want, NULL, NULL, 0), SL_OK);
    if (resident)
        SL_ASSERT_OK(sl_table_to_device(gpu, in, 0, &gin));
    int on_gpu = 0;
    char msg[256];
    int rc = run(gpu, gin, opts, resident, &got, &on_gpu, msg, sizeof msg);
    if (rc != SL_OK)
        fail_msg("GPU query failed: %s", msg);
    printf("%s rows=%lld groups=%lld: cpu %lld rows, gpu %lld rows, GPU finalize %d\n", opts,
           (long long)sp->rows, (long long)sp->groups, (long long)sl_table_num_rows(want),
           (long long)sl_table_num_rows(got), on_gpu);
    if (sp->rows > 0)
        assert_int_equal(on_gpu, 1);
    if (sl_table_num_rows(want) > 0)
        compare(want, got, nk);
    else
        assert_int_equal(sl_table_num_rows(got), 0);
    if (resident)
        sl_table_unref(gin);
    sl_table_unref(want);
    sl_table_unref(got);
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    sl_engine_mem_stats(gpu, &ms);
    assert_int_equal(ms.gpu_in_use, 0);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
    sl_table_unref(in);
}

/* Eight aggregates (the GPU's limit) over every value type, in two sets. */
#define ALL_AGGS "aggs=\"count(*), sum(vl), min(vl), max(vl), avg(vl), sum(vi), sum(vd), " \
                 "min(vf)\""
#define ALL_AGGS2 "aggs=\"count(vl), max(vi), min(vi), avg(vi), avg(vd), max(vd), max(vf), " \
                  "sum(vf)\""

SL_TEST(op_empty_one_row_one_group)
{
    NEED_GPU();
    struct tspec e = {.rows = 0, .groups = 1, .seed = 1};
    check(&e, "keys=k " ALL_AGGS, 1, 0);
    struct tspec one = {.rows = 1, .groups = 1, .seed = 2};
    check(&one, "keys=k " ALL_AGGS, 1, 0);
    struct tspec all = {.rows = 200000, .groups = 1, .seed = 3};
    check(&all, "keys=k " ALL_AGGS, 1, 0);
}

/* No key (a global aggregate, as TPC-H Q6's sum): one group on the GPU; without input
 * rows still one row (count 0, the others NULL), as on the CPU. Null values, many small
 * batches, and a GPU-resident input with the output kept there. */
SL_TEST(op_keyless)
{
    NEED_GPU();
    struct tspec e = {.rows = 0, .groups = 1, .seed = 31};
    check(&e, ALL_AGGS, 0, 0);
    check(&e, ALL_AGGS2, 0, 1);
    struct tspec one = {.rows = 1, .groups = 1, .seed = 32};
    check(&one, ALL_AGGS, 0, 0);
    struct tspec s = {.rows = 300000, .groups = 1000, .nulls = 1, .seed = 33};
    check(&s, ALL_AGGS, 0, 0);
    check(&s, ALL_AGGS2, 0, 1);
    g_morsel_gpu = 3000;
    check(&s, "aggs=\"count(*), sum(vl), avg(vd)\"", 0, 0);
    g_morsel_gpu = 0;
}

SL_TEST(op_1000_groups)
{
    NEED_GPU();
    struct tspec s = {.rows = 500000, .groups = 1000, .seed = 4};
    check(&s, "keys=k " ALL_AGGS, 1, 0);
    check(&s, "keys=k " ALL_AGGS2, 1, 0);
    check(&s, "keys=k aggs=\"count(*), sum(vl)\"", 1, 1); /* resident in and out */
}

/* A GPU-resident table under every placement: pipelines that CPU workers run (cpu, auto,
 * coprocess's host share) read device batches, which reach their host stages downloaded
 * (a CPU worker dereferenced device memory before: TPC-H with placement auto on
 * GPU-resident tables crashed in Q1). */
SL_TEST(resident_input_on_every_placement)
{
    NEED_GPU();
    struct tspec s = {.rows = 300000, .groups = 1000, .seed = 11};
    sl_table_t *in = make(&s);
    sl_engine_t *cpu = engine(SL_PLACE_CPU, 0);
    sl_table_t *want;
    assert_int_equal(run(cpu, in, "keys=k " ALL_AGGS, 0, &want, NULL, NULL, 0), SL_OK);
    const enum sl_placement pls[] = {SL_PLACE_CPU, SL_PLACE_AUTO, SL_PLACE_COPROCESS, SL_PLACE_GPU};
    for (size_t i = 0; i < sizeof pls / sizeof pls[0]; i++) {
        sl_engine_t *e = engine(pls[i], 0);
        sl_table_t *gin, *got;
        SL_ASSERT_OK(sl_table_to_device(e, in, 0, &gin));
        char msg[256];
        if (run(e, gin, "keys=k " ALL_AGGS, 0, &got, NULL, msg, sizeof msg) != SL_OK)
            fail_msg("placement %d: %s", (int)pls[i], msg);
        compare(want, got, 1);
        sl_table_unref(got);
        sl_table_unref(gin);
        struct sl_mem_stats ms = SL_MEM_STATS_INIT;
        sl_engine_mem_stats(e, &ms);
        assert_int_equal(ms.gpu_in_use, 0);
        sl_engine_close(e);
    }
    sl_table_unref(want);
    sl_engine_close(cpu);
    sl_table_unref(in);
}

SL_TEST(op_many_groups_partitioned)
{
    NEED_GPU();
    struct tspec s = {.rows = 800000, .groups = 300000, .seed = 5};
    check(&s, "keys=k " ALL_AGGS, 1, 0);
    check(&s, "keys=k aggs=\"count(*), sum(vl)\"", 1, 1);
    /* Past 2^20 estimated groups the partitioned method (the tile partitioner, two
     * passes) is chosen for one key without nulls: with the partition kernel's big table
     * (2^10 partitions) and with the smaller one (debug_agg_gpu_no_big_table). */
    struct tspec m = {.rows = 3000000, .groups = 2000000, .seed = 9};
    check(&m, "keys=k aggs=\"count(*), sum(vl), min(vi), max(vl)\"", 1, 1);
    g_no_big = 1;
    check(&m, "keys=k aggs=\"count(*), sum(vl), min(vi), max(vl)\"", 1, 1);
    g_no_big = 0;
}

SL_TEST(op_zipf)
{
    NEED_GPU();
    struct tspec s = {.rows = 600000, .groups = 100000, .zipf = 1.0, .seed = 6};
    check(&s, "keys=k " ALL_AGGS, 1, 0);
}

SL_TEST(op_null_and_composite_keys)
{
    NEED_GPU();
    struct tspec s = {.rows = 300000, .groups = 3000, .nulls = 1, .seed = 7};
    check(&s, "keys=\"k,k2\" " ALL_AGGS, 2, 0);
    check(&s, "keys=\"k,k2\" " ALL_AGGS2, 2, 0);
    check(&s, "keys=k " ALL_AGGS, 1, 0);
    struct tspec many = {.rows = 300000, .groups = 200000, .nulls = 1, .seed = 8};
    check(&many, "keys=k " ALL_AGGS, 1, 0);
    check(&many, "keys=\"k,k2\" " ALL_AGGS2, 2, 0);
}

/* Few groups under composite keys (TPC-H Q1's shape: the generic table kernel, whose
 * warps sum each group's rows before one shared atomic): with nulls; and with partial
 * sums of a warp's rows past 2^64 whose group totals fit (exact 128-bit partials). */
SL_TEST(op_few_groups_warp_partials)
{
    NEED_GPU();
    struct tspec s = {.rows = 300000, .groups = 4, .nulls = 1, .seed = 12};
    check(&s, "keys=\"k,k2\" " ALL_AGGS, 2, 0);
    check(&s, "keys=\"k,k2\" " ALL_AGGS2, 2, 1);
    struct tspec w = {.rows = 300000, .groups = 4, .wide = 1, .seed = 13};
    check(&w, "keys=\"k,k2\" aggs=\"count(*), sum(vl), min(vl), max(vl), sum(vi)\"", 2, 0);
    struct tspec one = {.rows = 1, .groups = 4, .nulls = 1, .seed = 14};
    check(&one, "keys=\"k,k2\" " ALL_AGGS, 2, 0);
}

SL_TEST(op_int64_overflow_fails_and_engine_stays_usable)
{
    NEED_GPU();
    struct tspec s = {.rows = 100000, .groups = 100, .overflow = 1, .seed = 9};
    sl_table_t *in = make(&s), *out;
    sl_engine_t *gpu = engine(SL_PLACE_GPU, 0);
    char msg[256];
    int rc = run(gpu, in, "keys=k aggs=\"count(*), sum(vl)\"", 0, &out, NULL, msg, sizeof msg);
    printf("overflow: rc %d, %s\n", rc, msg);
    assert_int_equal(rc, SL_EOVERFLOW);
    assert_non_null(strstr(msg, "overflow"));
    /* The engine runs the next query. */
    rc = run(gpu, in, "keys=k aggs=\"count(*), sum(vi)\"", 0, &out, NULL, msg, sizeof msg);
    assert_int_equal(rc, SL_OK);
    assert_int_equal(sl_table_num_rows(out), 100);
    sl_table_unref(out);
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    sl_engine_mem_stats(gpu, &ms);
    assert_int_equal(ms.gpu_in_use, 0);
    sl_engine_close(gpu);
    sl_table_unref(in);
}

/* Many device batches (small GPU morsels): the sink only launches, the table method
 * keeps every batch; results equal the CPU's. */
SL_TEST(op_many_batches)
{
    NEED_GPU();
    g_morsel_gpu = 3000;
    struct tspec s = {.rows = 700000, .groups = 1000, .seed = 10};
    check(&s, "keys=k " ALL_AGGS, 1, 0);
    check(&s, "keys=k aggs=\"count(*), sum(vl)\"", 1, 1);
    struct tspec z = {.rows = 500000, .groups = 200000, .zipf = 0.8, .seed = 11};
    check(&z, "keys=k aggs=\"count(*), sum(vl)\"", 1, 1);
    g_morsel_gpu = 0;
}

/* Automatic placement puts a large group-by on the GPU (sl__agg_cost) and its phases
 * reach the query profile. */
SL_TEST(op_auto_placement_picks_gpu)
{
    NEED_GPU();
    struct tspec s = {.rows = 4000000, .groups = 1000, .seed = 12};
    sl_table_t *in = make(&s), *out;
    sl_engine_t *e = engine(SL_PLACE_AUTO, 0);
    int on_gpu = 0;
    char msg[256];
    int rc = run(e, in, "keys=k aggs=\"count(*), sum(vl)\"", 0, &out, &on_gpu, msg, sizeof msg);
    printf("auto placement: rc %d on_gpu %d %s\n", rc, on_gpu, msg);
    assert_int_equal(rc, SL_OK);
    assert_int_equal(on_gpu, 1);
    assert_int_equal(sl_table_num_rows(out), 1000);
    sl_table_unref(out);
    sl_engine_close(e);
    sl_table_unref(in);
}
