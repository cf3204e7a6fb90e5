/* Tests the GPU group-by's few-groups path (SL_K_AGG_SMALL: per-block shared hash tables
 * of stored keys, kernels/aggregate/aggregate_small.cuh) and its key and value types
 * (issues 17 and 19).
 *
 * Kernel level: the host driver with one int32 or int64 key and eight aggregates (count,
 * sum, min, max, avg of int64 and int32 values) against a plain reference: empty input,
 * one row, one group, 1,000 groups, keys at the type's extremes (the shared table's empty
 * marker among them), values at int64's extremes (they take the global 128-bit path),
 * skew, unaligned input with a tail that is not a multiple of four, a forced few-groups
 * path on many more groups than its tables hold, and a first batch whose sample sees ten
 * groups where the input has 50,000 (the table grows; the rerun takes the generic path).
 * Row counts packed with the first sum (SL_K_AGG_PACK): values about its bounds, counts
 * past a byte, no sum, against the unpacked kernels; the lean kernel of one sum
 * (SL_K_AGG_LEAN, the default for such specs). The partitioned method's big partition
 * table (SL_K_AGG_BIG) after the two-pass and the one-pass partitioners against the
 * reference and the smaller table; the cluster table (SL_K_AGG_CLUSTER: a partition's
 * table spread over a cluster of blocks; only when asked) against the reference.
 * The same for the kernel of a handful of groups (SL_K_AGG_FEW, aggregate_few.cuh), and
 * through the operator with two int32 keys, one and none.
 *
 * Operator level: date32, timestamp and decimal keys and values on the GPU equal the CPU
 * engine (decimal sums exact decimal(38, s), averages as the CPU), with and without nulls;
 * a bool key stays on the CPU (placement says so) with the same result. DICT keys (one
 * and composite with an int32 key, nulls, one group, 1,000 and 150,000 groups, no rows)
 * on one shared dictionary, on equal copies, on reordered dictionaries and on one holding
 * a string twice equal the CPU engine as row multisets, key column DICT.
 *
 * Small budgets (issue 18, agg_cuda_budget.c): with 24 MiB of GPU memory and small
 * morsels, few and many groups (where=, nulls, decimals, DICT keys) fold into host
 * memory, avg's batches go to the host, and a table the budget cannot hold sends its
 * chunk there; the profile says which (gpu_budget_folds, gpu_budget_host) and the rows
 * equal the CPU engine's. Skipped without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../operators/aggregate/agg_gpu.h"
#include "../common/typed_rows.h"
#include "exec_int.h"
#include "gpu_test.h"

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* ---------------- kernel level ---------------- */

static cudaStream_t g_stream;

static void *k_alloc(void *ctx, size_t b)
{
    (void)ctx;
    void *p = NULL;
    return cudaMallocAsync(&p, b, g_stream) == cudaSuccess ? p : NULL;
}

static void k_free(void *ctx, void *p)
{
    (void)ctx;
    if (p)
        CU(cudaFreeAsync(p, g_stream));
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

enum { NA = 8, NC = 1 + NA };

struct kout {
    void *cols[NC];
    uint32_t *valid[NC];
};

static int kout_fn(void *ctx, int64_t rows, struct sl_k_agg_out *out)
{
    struct kout *o = ctx;
    for (int c = 0; c < NC; c++) {
        k_free(NULL, o->cols[c]);
        k_free(NULL, o->valid[c]);
        o->valid[c] = NULL;
        o->cols[c] = out->d_cols[c] = k_alloc(NULL, (size_t)(rows + 1) * 8);
        if (c >= 4)
            o->valid[c] = out->d_valid[c] = k_alloc(NULL, (size_t)(rows + 32) / 32 * 4);
    }
    return AGG_GDRV_OK;
}

struct kcase {
    int key64;            /* int64 key (else int32) */
    int64_t n, groups;
    int extremes;         /* the first groups' keys and values at the type's extremes */
    int skew;             /* 90% of the rows in group 0 */
    int offset;           /* columns start one element past an aligned address */
    int few_first;        /* the first batch (half the rows) holds only 10 groups */
    int64_t small;        /* driver's small_threshold (0 default, < 0 never) */
    int batches;
    int mode;             /* driver's force_mode (0: by the estimate) */
    int dbits;            /* record table: partitioning bits (0 by its size, < 0 none) */
    int64_t init_cap;     /* first table capacity (0: from the estimate) */
    int atom64;           /* shared sums as one 64-bit atomic: without SL_K_AGG_SMALL_SPLIT
                             (32-bit halves, the driver's default) */
    int sorted;           /* rows in runs of their group (clustered, as lineitem by
                             l_orderkey): 1 = row i in group i * groups / n; 2 = runs of
                             1..7 rows, the groups in turn (wrapping: a group may come
                             back) */
    int alt_big;          /* values INT64_MAX, INT64_MAX, -INT64_MAX, -INT64_MAX, ... (with
                             sorted = 1 and n = 4 * groups every group sums to 0, but a
                             run's partial sums overflow) */
    int strided;          /* the driver's strided_estimate (the estimate before the
                             key-change bound) */
    int want_mode;        /* the mode the driver must choose (0: not checked) */
    int want_clustered;   /* 1: the driver must see the input as clustered, -1: not */
    double est_within;    /* > 0: the estimate within a factor est_within of the groups */
    int pbits;            /* partitioned method: radix bits (driver's force_bits) */
    int rowpart;          /* partitioned method: the row-by-row partitioner */
    int64_t few;          /* driver's few_threshold (0 default, < 0 never) */
    int byrow;            /* rows read by number (d_rowidx, an aggregate's where=): every
                             row but each third (i % 3 == 2) */
    int naggs;            /* the first naggs of the eight aggregates (0: all): 3 (count(*),
                             count, sum: one moved value column) and 5 (and min, max:
                             three) take the tile partitioner, eight do not */
    int sum_first;        /* the sum second, the count third (count(*), sum, count, ...):
                             the value the shared-table kernels load with the keys */
    int64_t budget_groups; /* > 0: the driver's budget twice a record table of that many
                              groups (agg_gpu.c's fit_groups grows a table to them) */
    int packv;            /* int64 values about the packed sums' bounds (SL_K_AGG_PACK):
                             +-2^23 and one past, int32's extremes, values between (the
                             32-bit halves) and within +-2^23 */
    int pack;             /* with SL_K_AGG_PACK (the row counts packed with a sum; not the
                             driver's default) */
    int no_lean;          /* without SL_K_AGG_LEAN (the driver's default: the lean kernel
                             for one sum) */
    int no_sum;           /* the int64 sum replaced by a third count: with naggs 3 or 5 no
                             sum packs with the row counts */
    int big;              /* driver's big: 1 the partition kernel's big table (forced bits
                             too), -1 never */
    int one_pass;         /* driver's one_pass: the wide partitioner (with big) */
    int want_big;         /* 1: the driver must take the big table, -1: not */
    int cluster;          /* driver's cluster: blocks of the cluster table (2, 4, 8, 16;
                             forced bits too), -1 never, 0 from the estimate */
    int want_cluster;     /* the driver's cluster_on must be this (-1: 0, 0: not checked) */
    int big_strict;       /* driver's big_strict (debug_agg_gpu_big_strict) */
    int want_bits;        /* the driver's radix bits must be this (0: not checked) */
};

static int64_t g_budget;

static int64_t k_budget(void *ctx)
{
    (void)ctx;
    return g_budget;
}

struct ref {
    int64_t cnt, min, max, maxi;
    __int128 sum, sumi;
};

static int64_t key_of(const struct kcase *c, int64_t g)
{
    static const int64_t x32[] = {INT32_MIN, INT32_MAX, 0, -1, INT32_MIN + 1};
    static const int64_t x64[] = {INT64_MIN, INT64_MAX, 0, -1, INT32_MIN, (int64_t)1 << 32};
    if (c->extremes && !c->key64 && g < 5)
        return x32[g];
    if (c->extremes && c->key64 && g < 6)
        return x64[g];
    int64_t k = g * 7919 + 1000003;
    return c->key64 ? k * 1000003 : k;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void kcase_run(const struct kcase *c)
{
    const int64_t n = c->n, G = c->groups, off = c->offset ? 1 : 0;
    int64_t *hk = malloc((size_t)(n + 1) * 8), *hv = malloc((size_t)(n + 1) * 8);
    int32_t *hk32 = malloc((size_t)(n + 1) * 4), *hi = malloc((size_t)(n + 1) * 4);
    int64_t *gk = malloc((size_t)G * 2 * 8);
    struct ref *r = calloc((size_t)G, sizeof *r);
    for (int64_t g = 0; g < G; g++) {
        gk[2 * g] = key_of(c, g);
        gk[2 * g + 1] = g;
        r[g].min = INT64_MAX, r[g].max = INT64_MIN, r[g].maxi = INT64_MIN;
    }
    qsort(gk, (size_t)G, 16, cmp_i64);
    for (int64_t g = 1; g < G; g++)
        assert_true(gk[2 * g] != gk[2 * g - 2]); /* distinct keys */
    uint64_t s = 0x51ed2701 + (uint64_t)n * 31 + (uint64_t)G;
    int64_t run_g = 0, run_left = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t g = (int64_t)(rnd(&s) % (uint64_t)G);
        if (c->sorted == 1)
            g = (int64_t)((__int128)i * G / n);
        if (c->sorted == 2) {
            if (run_left == 0) {
                run_g = i ? (run_g + 1) % G : 0;
                run_left = 1 + (int64_t)(rnd(&s) % 7);
            }
            run_left--;
            g = run_g;
        }
        if (c->skew && rnd(&s) % 10 < 9)
            g = 0;
        if (c->few_first && i < n / 2)
            g %= 10;
        int64_t v = (int64_t)(rnd(&s) % 2000001) - 1000000;
        if (c->alt_big)
            v = (i >> 1 & 1) ? -INT64_MAX : INT64_MAX;
        if (c->packv) {
            static const int64_t edge[] = {(1 << 23) - 1, -(1 << 23), 1 << 23, -(1 << 23) - 1,
                                           INT32_MAX, INT32_MIN, 0, -1};
            const uint64_t u = rnd(&s);
            v = u % 4 == 0   ? edge[(u >> 8) % 8]
                : u % 4 == 1 ? (int64_t)((u >> 8) % (1ull << 31)) * ((u >> 40 & 1) ? 1 : -1)
                             : (int64_t)((u >> 8) % (1u << 24)) - (1 << 23);
        }
        if (c->extremes && i < 4) /* group 0: both extremes (the total fits) */
            g = 0, v = i == 0 ? INT64_MAX : i == 1 ? INT64_MIN : v;
        if (c->extremes && i % 97 == 5)
            v = (i & 1 ? 1 : -1) * ((int64_t)1 << 40); /* outside int32: global path */
        hk[i] = key_of(c, g);
        hk32[i] = (int32_t)hk[i];
        hv[i] = v;
        hi[i] = (int32_t)(rnd(&s) % 2000001) - 1000000;
        if (c->byrow && i % 3 == 2)
            continue; /* not among the rows given by number */
        struct ref *x = &r[g];
        x->cnt++;
        x->sum += v, x->sumi += hi[i];
        x->min = v < x->min ? v : x->min;
        x->max = v > x->max ? v : x->max;
        x->maxi = hi[i] > x->maxi ? hi[i] : x->maxi;
    }
    void *dk;
    int64_t *dv;
    int32_t *di, *d_status;
    uint32_t *didx = NULL;
    size_t kw = c->key64 ? 8 : 4;
    CU(cudaMalloc(&dk, (size_t)(n + 2) * kw));
    CU(cudaMalloc((void **)&dv, (size_t)(n + 2) * 8));
    CU(cudaMalloc((void **)&di, (size_t)(n + 2) * 4));
    CU(cudaMalloc((void **)&d_status, 4));
    CU(cudaMemcpy((char *)dk + off * kw, c->key64 ? (void *)hk : (void *)hk32, (size_t)n * kw,
                  cudaMemcpyHostToDevice));
    CU(cudaMemcpy(dv + off, hv, (size_t)n * 8, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(di + off, hi, (size_t)n * 4, cudaMemcpyHostToDevice));
    CU(cudaMemset(d_status, 0, 4));
    /* These uploads and the memset ran on the legacy stream, which g_stream (non-blocking)
     * does not wait for, and a pageable cudaMemcpy may return before its DMA lands: one
     * run in 38 on an H100 summed a column whose last upload had not landed (2026-11-27). */
    CU(cudaDeviceSynchronize());
    struct sl_k_agg_spec sp = {
        .n_keys = 1, .key_type = {c->key64 ? SL_K_I64 : SL_K_I32},
        .n_aggs = c->naggs ? c->naggs : NA,
        .fn = {SL_K_AGG_COUNT_STAR,
               c->sum_first && !c->no_sum ? SL_K_AGG_SUM : SL_K_AGG_COUNT,
               c->sum_first || c->no_sum ? SL_K_AGG_COUNT : SL_K_AGG_SUM, SL_K_AGG_MIN,
               SL_K_AGG_MAX,
               SL_K_AGG_AVG, SL_K_AGG_SUM, SL_K_AGG_MAX},
        .in_type = {SL_K_I64, SL_K_I64, SL_K_I64, SL_K_I64, SL_K_I64, SL_K_I64, SL_K_I32,
                    SL_K_I32}};
    g_budget = c->budget_groups ? 2 * (int64_t)sl_k_agg_direct_bytes(&sp, c->budget_groups) : 0;
    const struct agg_gdrv_mem mem = {k_alloc, k_free, h_alloc, h_free, NULL,
                                     c->budget_groups ? k_budget : NULL};
    struct agg_gdrv d;
    assert_int_equal(agg_gdrv_init(&d, &sp, g_stream, &mem), 0);
    d.small_threshold = c->small;
    d.few_threshold = c->few;
    d.force_mode = c->mode;
    d.direct_bits = c->dbits;
    d.init_cap = c->init_cap;
    d.strided_estimate = c->strided;
    d.force_bits = c->pbits;
    d.row_partition = c->rowpart;
    d.big = c->big;
    d.big_strict = c->big_strict;
    d.one_pass = c->one_pass;
    d.cluster = c->cluster;
    if (c->atom64)
        d.update_flags &= ~(SL_K_AGG_SMALL_SPLIT | SL_K_AGG_PACK);
    if (c->pack)
        d.update_flags |= SL_K_AGG_PACK;
    if (c->no_lean)
        d.update_flags &= ~SL_K_AGG_LEAN;
    uint32_t *hidx = malloc((size_t)(n + 1) * 4);
    int64_t n_idx = 0;
    if (c->byrow) { /* per batch: its rows' numbers from the batch's first row */
        for (int b = 0; b < c->batches; b++) {
            int64_t lo = n * b / c->batches, hi_ = n * (b + 1) / c->batches;
            for (int64_t i = lo; i < hi_; i++)
                if (i % 3 != 2)
                    hidx[n_idx++] = (uint32_t)(i - lo);
        }
        CU(cudaMalloc((void **)&didx, (size_t)(n_idx + 1) * 4));
        CU(cudaMemcpy(didx, hidx, (size_t)n_idx * 4, cudaMemcpyHostToDevice));
        CU(cudaDeviceSynchronize()); /* before g_stream's kernels read it (as above) */
    }
    int64_t at_idx = 0;
    for (int b = 0; b < c->batches; b++) {
        int64_t lo = n * b / c->batches, hi_ = n * (b + 1) / c->batches;
        struct sl_k_agg_input in;
        memset(&in, 0, sizeof in);
        in.n = hi_ - lo;
        if (c->byrow) {
            int64_t m = 0;
            for (int64_t i = lo; i < hi_; i++)
                m += i % 3 != 2;
            in.n = m;
            in.d_rowidx = didx + at_idx;
            at_idx += m;
        }
        in.keys[0].d_data = (const char *)dk + (size_t)(off + lo) * kw;
        for (int a = 1; a < 6; a++)
            in.vals[a].d_data = dv + off + lo;
        in.vals[6].d_data = in.vals[7].d_data = di + off + lo;
        int rc = agg_gdrv_add(&d, &in);
        if (rc)
            fail_msg("add: %d (%s: %s)", rc, d.what, cudaGetErrorName(d.cuerr));
    }
    struct kout o;
    memset(&o, 0, sizeof o);
    int64_t ng = -1, nulls[NC];
    int rc = agg_gdrv_output(&d, kout_fn, &o, d_status, &ng, nulls);
    if (rc)
        fail_msg("output: %d (%s: %s)", rc, d.what, cudaGetErrorName(d.cuerr));
    int32_t status;
    CU(cudaMemcpy(&status, d_status, 4, cudaMemcpyDeviceToHost));
    printf("key64=%d n=%lld groups=%lld extremes=%d skew=%d offset=%d few_first=%d small=%lld "
           "few=%lld: mode %d, %lld groups, grows %lld, status %d\n", c->key64, (long long)n,
           (long long)G, c->extremes, c->skew, c->offset, c->few_first, (long long)c->small,
           (long long)c->few, d.mode, (long long)ng, (long long)d.grows, status);
    printf("  estimate %.0f, clustered %d, bits %d, big %d, cluster %d (redone partitions "
           "go to the generic kernel)\n", d.g_est, d.clustered, d.bits, d.big_on, d.cluster_on);
    if (c->want_big && n > 0) /* no input: nothing chosen */
        assert_int_equal(d.big_on, c->want_big > 0);
    if (c->want_bits && n > 0)
        assert_int_equal(d.bits, c->want_bits);
    if (c->want_cluster && n > 0)
        assert_int_equal(d.cluster_on, c->want_cluster > 0 ? c->want_cluster : 0);
    if (c->want_mode)
        assert_int_equal(d.mode, c->want_mode);
    if (c->want_clustered)
        assert_int_equal(d.clustered, c->want_clustered > 0);
    if (c->est_within > 0)
        assert_true(d.g_est <= (double)G * c->est_within &&
                    d.g_est >= (double)G / c->est_within);
    assert_int_equal(status, 0);
    int64_t want = 0;
    for (int64_t g = 0; g < G; g++)
        want += r[g].cnt > 0;
    assert_int_equal(ng, want);
    const int nc = 1 + (c->naggs ? c->naggs : NA);
    int64_t *col[NC] = {0};
    for (int j = 0; j < nc; j++) {
        col[j] = malloc((size_t)(ng + 1) * 8);
        CU(cudaMemcpy(col[j], o.cols[j], (size_t)ng * 8, cudaMemcpyDeviceToHost));
    }
    const int32_t *k32 = (const int32_t *)col[0], *maxi = (const int32_t *)col[8];
    for (int64_t i = 0; i < ng; i++) {
        int64_t k = c->key64 ? col[0][i] : k32[i], lo = 0, hi_ = G - 1;
        while (lo < hi_) { /* group of k */
            int64_t m = (lo + hi_) / 2;
            if (gk[2 * m] < k)
                lo = m + 1;
            else
                hi_ = m;
        }
        assert_true(gk[2 * lo] == k);
        struct ref *x = &r[gk[2 * lo + 1]];
        assert_true(x->cnt > 0);
        const int sum_col = c->sum_first ? 2 : 3;
        assert_int_equal(col[1][i], x->cnt);
        assert_int_equal(col[5 - sum_col][i], x->cnt);
        if (c->no_sum)
            assert_int_equal(col[sum_col][i], x->cnt);
        else
            assert_true((__int128)col[sum_col][i] == x->sum);
        if (nc > 5) {
            assert_int_equal(col[4][i], x->min);
            assert_int_equal(col[5][i], x->max);
        }
        if (nc > 8) {
            double avg, want_avg = (double)x->sum / (double)x->cnt;
            memcpy(&avg, &col[6][i], 8);
            assert_true(fabs(avg - want_avg) <= 1e-9 * fmax(1.0, fabs(want_avg)));
            assert_true((__int128)col[7][i] == x->sumi);
            assert_int_equal(maxi[i], x->maxi);
        }
        x->cnt = -x->cnt; /* each group once */
    }
    for (int j = 0; j < NC; j++) {
        free(col[j]);
        k_free(NULL, o.cols[j]);
        k_free(NULL, o.valid[j]);
    }
    agg_gdrv_free(&d);
    CU(cudaStreamSynchronize(g_stream));
    cudaFree(dk), cudaFree(dv), cudaFree(di), cudaFree(d_status), cudaFree(didx);
    free(hk), free(hv), free(hk32), free(hi), free(gk), free(r), free(hidx);
}

static void kernel_setup(void)
{
    if (!g_stream)
        CU(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
}

SL_TEST(small_path_basic_cases)
{
    NEED_GPU();
    kernel_setup();
    for (int k64 = 0; k64 < 2; k64++) {
        const int64_t sizes[][2] = {{0, 1}, {1, 1}, {3, 2}, {100000, 1}, {300001, 1000}};
        for (int i = 0; i < 5; i++) {
            struct kcase c = {.key64 = k64, .n = sizes[i][0], .groups = sizes[i][1],
                              .batches = 1};
            kcase_run(&c);
        }
        struct kcase gen = {.key64 = k64, .n = 300001, .groups = 1000, .small = -1,
                            .batches = 2};
        kcase_run(&gen); /* the generic kernel on the same data */
    }
}

SL_TEST(small_path_extremes_skew_alignment)
{
    NEED_GPU();
    kernel_setup();
    for (int k64 = 0; k64 < 2; k64++) {
        struct kcase x = {.key64 = k64, .n = 200000, .groups = 700, .extremes = 1,
                          .batches = 3};
        kcase_run(&x);
        struct kcase sk = {.key64 = k64, .n = 250000, .groups = 1500, .skew = 1,
                           .batches = 1};
        kcase_run(&sk);
        struct kcase un = {.key64 = k64, .n = 100003, .groups = 300, .offset = 1,
                           .extremes = 1, .batches = 2};
        kcase_run(&un);
        /* The shared sums as one 64-bit atomic (every other case runs the default, two
         * 32-bit halves): negative values, wide values. */
        struct kcase sx = {.key64 = k64, .n = 200000, .groups = 700, .extremes = 1,
                           .batches = 2, .atom64 = 1};
        kcase_run(&sx);
        struct kcase ss = {.key64 = k64, .n = 250000, .groups = 1500, .skew = 1,
                           .batches = 1, .atom64 = 1};
        kcase_run(&ss);
    }
}

/* The estimate is wrong: the few-groups path forced on 50,000 groups (rows that find no
 * shared slot go to the global table), and a sample that saw ten groups. */
SL_TEST(small_path_wrong_estimates)
{
    NEED_GPU();
    kernel_setup();
    for (int k64 = 0; k64 < 2; k64++) {
        struct kcase forced = {.key64 = k64, .n = 400000, .groups = 50000,
                               .small = (int64_t)1 << 40, .batches = 2};
        kcase_run(&forced);
        struct kcase late = {.key64 = k64, .n = 400000, .groups = 50000, .few_first = 1,
                             .batches = 2};
        kcase_run(&late);
    }
}

/* The few-groups kernel (SL_K_AGG_FEW, aggregate_few.cuh: each thread's first four
 * groups in registers; these six aggregates with a state are the most it takes): no
 * rows, one row, four groups with keys and values at the extremes (the key equal to the
 * shared table's empty marker, values that leave int64 in a group's sum and 2^40: the
 * shared path), eight skewed groups (past a thread's four registers), unaligned
 * columns with a tail, the same data through the shared-table kernels (few < 0), and
 * the kernel forced on 50,000 groups (past the shared table's 256 slots: the global
 * table, which grows). */
SL_TEST(few_path_cases)
{
    NEED_GPU();
    kernel_setup();
    for (int k64 = 0; k64 < 2; k64++) {
        struct kcase cases[] = {
            {.key64 = k64, .n = 0, .groups = 1, .batches = 1},
            {.key64 = k64, .n = 1, .groups = 1, .batches = 1},
            {.key64 = k64, .n = 300001, .groups = 4, .extremes = 1, .batches = 2},
            {.key64 = k64, .n = 250000, .groups = 8, .skew = 1, .batches = 1},
            {.key64 = k64, .n = 250000, .groups = 8, .batches = 3},
            {.key64 = k64, .n = 100003, .groups = 3, .offset = 1, .extremes = 1, .batches = 2},
            {.key64 = k64, .n = 300001, .groups = 4, .extremes = 1, .batches = 2, .few = -1},
            {.key64 = k64, .n = 400000, .groups = 50000, .few = (int64_t)1 << 40,
             .small = -1, .batches = 2},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            kcase_run(&cases[i]);
    }
}

/* Rows read by number (d_rowidx: an aggregate's where=, every third row left out): the
 * few-groups kernel (extremes, skew past its registers, unaligned columns, forced on
 * 50,000 groups), the shared-table size of groups (the generic kernels read them), and
 * a first batch of 10 groups before 50,000 (the table grows past the partitioned
 * method's threshold instead of partitioning: the partitioners read rows in place). A
 * many-groups estimate refuses such an input (AGG_GDRV_EROWS, nothing added). */
SL_TEST(rows_by_number)
{
    NEED_GPU();
    kernel_setup();
    for (int k64 = 0; k64 < 2; k64++) {
        struct kcase cases[] = {
            {.key64 = k64, .n = 1, .groups = 1, .batches = 1, .byrow = 1},
            {.key64 = k64, .n = 300001, .groups = 4, .extremes = 1, .batches = 2, .byrow = 1},
            {.key64 = k64, .n = 250000, .groups = 8, .skew = 1, .batches = 1, .byrow = 1},
            {.key64 = k64, .n = 100003, .groups = 3, .offset = 1, .extremes = 1, .batches = 2,
             .byrow = 1},
            {.key64 = k64, .n = 300001, .groups = 4, .extremes = 1, .batches = 2, .few = -1,
             .byrow = 1},
            {.key64 = k64, .n = 400000, .groups = 50000, .few = (int64_t)1 << 40, .small = -1,
             .batches = 2, .byrow = 1},
            {.key64 = k64, .n = 200000, .groups = 1000, .batches = 2, .byrow = 1},
            {.key64 = k64, .n = 400000, .groups = 50000, .few_first = 1, .batches = 2,
             .byrow = 1, .want_mode = AGG_GDRV_TABLE},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            kcase_run(&cases[i]);
    }
    /* Many groups by the estimate: refused before anything is added. */
    const int64_t n = 100000;
    int32_t *hk = malloc((size_t)n * 4), *dk;
    uint32_t *hidx = malloc((size_t)n * 4), *didx;
    for (int64_t i = 0; i < n; i++)
        hk[i] = (int32_t)(i * 7919), hidx[i] = (uint32_t)i;
    CU(cudaMalloc((void **)&dk, (size_t)n * 4));
    CU(cudaMalloc((void **)&didx, (size_t)n * 4));
    CU(cudaMemcpy(dk, hk, (size_t)n * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(didx, hidx, (size_t)n * 4, cudaMemcpyHostToDevice));
    CU(cudaDeviceSynchronize()); /* before g_stream's kernels read them (kcase_run) */
    struct sl_k_agg_spec sp = {.n_keys = 1, .key_type = {SL_K_I32}, .n_aggs = 1,
                               .fn = {SL_K_AGG_COUNT_STAR}, .in_type = {SL_K_I64}};
    const struct agg_gdrv_mem mem = {k_alloc, k_free, h_alloc, h_free, NULL, NULL};
    struct agg_gdrv d;
    assert_int_equal(agg_gdrv_init(&d, &sp, g_stream, &mem), 0);
    struct sl_k_agg_input in;
    memset(&in, 0, sizeof in);
    in.n = n;
    in.keys[0].d_data = dk;
    in.d_rowidx = didx;
    assert_int_equal(agg_gdrv_add(&d, &in), AGG_GDRV_EROWS);
    assert_true(d.mode != AGG_GDRV_TABLE);
    assert_int_equal(d.rows, 0);
    agg_gdrv_free(&d);
    CU(cudaStreamSynchronize(g_stream));
    cudaFree(dk), cudaFree(didx);
    free(hk), free(hidx);
}

/* The record table (AGG_GDRV_DIRECT, many groups) on the same cases: empty, one row, all
 * rows in one group, keys and values at the extremes (the key equal to its empty marker,
 * 128-bit carries), skew, unaligned columns, many groups, with and without the
 * partitioning pass, and a first table far too small (runs again into bigger ones). */
SL_TEST(direct_path_cases)
{
    NEED_GPU();
    kernel_setup();
    const int D = AGG_GDRV_DIRECT;
    for (int k64 = 0; k64 < 2; k64++) {
        const int64_t sizes[][2] = {{0, 1}, {1, 1}, {3, 2}, {100000, 1}, {300001, 120000}};
        for (int i = 0; i < 5; i++)
            for (int dbits = -1; dbits <= 2; dbits += 3) {
                struct kcase c = {.key64 = k64, .n = sizes[i][0], .groups = sizes[i][1],
                                  .batches = 1, .mode = D, .dbits = dbits};
                kcase_run(&c);
            }
        struct kcase x = {.key64 = k64, .n = 200000, .groups = 700, .extremes = 1,
                          .batches = 3, .mode = D, .dbits = 3};
        kcase_run(&x);
        struct kcase sk = {.key64 = k64, .n = 250000, .groups = 100000, .skew = 1,
                           .batches = 1, .mode = D};
        kcase_run(&sk);
        struct kcase un = {.key64 = k64, .n = 100003, .groups = 30000, .offset = 1,
                           .extremes = 1, .batches = 2, .mode = D, .dbits = -1};
        kcase_run(&un);
        struct kcase grow = {.key64 = k64, .n = 400000, .groups = 90000, .batches = 3,
                             .mode = D, .init_cap = 16, .dbits = 1};
        kcase_run(&grow);
        /* The grown table's 2 * (groups + rows without room) = 600,000 groups do not fit
         * the budget: it takes the 120,000 that half of it holds, enough for all. */
        struct kcase fit = {.key64 = k64, .n = 300000, .groups = 100000, .batches = 3,
                            .mode = D, .init_cap = 2048, .budget_groups = 120000};
        kcase_run(&fit);
    }
}

/* Inputs clustered by key (issue 18: lineitem sorted by l_orderkey, 4 rows an order):
 * the estimate must see about the groups there are, not one a row (the sampled rows
 * are all distinct), and the record table then skips its partitioning pass and updates
 * each run of a key in a thread's rows once. Runs of 4 and of 1..7 rows (groups coming
 * back), both key widths, partial sums of a run that overflow int64 (the group sums
 * fit), groups that come back in later runs, the estimate before the key-change bound
 * on the same input (a table for one
 * group a row: same result), a sorted input with few groups (the sample sees no key
 * change: the estimate must still hold the distinct keys it saw), and an unclustered
 * one that must not look clustered. */
SL_TEST(direct_path_clustered_keys)
{
    NEED_GPU();
    kernel_setup();
    const int D = AGG_GDRV_DIRECT, T = AGG_GDRV_TABLE;
    for (int k64 = 0; k64 < 2; k64++) {
        struct kcase r4 = {.key64 = k64, .n = 1000000, .groups = 250000, .sorted = 1,
                           .batches = 1, .want_mode = D, .want_clustered = 1,
                           .est_within = 1.1};
        kcase_run(&r4);
        struct kcase r7 = {.key64 = k64, .n = 800003, .groups = 260000, .sorted = 2,
                           .batches = 1, .want_mode = D, .want_clustered = 1};
        kcase_run(&r7);
        /* Runs of 1..7 rows whose groups come back (1.5 runs a group): the key-change
         * bound is about the runs, above half the spread sample's estimate, so the
         * input is not taken as clustered; the estimate stays within the runs. */
        struct kcase wrap = {.key64 = k64, .n = 1200003, .groups = 200000, .sorted = 2,
                             .batches = 1, .want_mode = D, .est_within = 1.6};
        kcase_run(&wrap);
        struct kcase big = {.key64 = k64, .n = 800000, .groups = 200000, .sorted = 1,
                            .alt_big = 1, .batches = 1, .want_mode = D};
        kcase_run(&big);
        struct kcase old = {.key64 = k64, .n = 1000000, .groups = 250000, .sorted = 1,
                            .strided = 1, .batches = 1, .want_mode = D,
                            .want_clustered = -1};
        kcase_run(&old);
        struct kcase few = {.key64 = k64, .n = 2000000, .groups = 300, .sorted = 1,
                            .batches = 2, .want_mode = T};
        kcase_run(&few);
        struct kcase rnd_ = {.key64 = k64, .n = 1000000, .groups = 250000, .batches = 1,
                             .want_mode = D, .want_clustered = -1, .est_within = 1.2};
        kcase_run(&rnd_);
    }
}

/* The partitioned method against the reference (the eight aggregates move six value
 * columns, more than the tile partitioner takes: these cases partition row by row;
 * part_path_tile_partitioner_narrow below runs the tile partitioner, one pass up to 8
 * bits, two past it: 11 = 6 + 5, 13 = 7 + 6): empty, one row, a tail that is no
 * multiple of a tile, unaligned columns, keys and values at the extremes, skew (one
 * partition holds most rows, many of the second pass's partitions stay empty),
 * clustered keys, several batches, and partitions with more groups than a block's
 * shared table (the generic kernel redoes them). */
SL_TEST(part_path_tile_partitioner)
{
    NEED_GPU();
    kernel_setup();
    const int P = AGG_GDRV_PART;
    for (int k64 = 0; k64 < 2; k64++) {
        const int64_t sizes[][2] = {{0, 1}, {1, 1}, {3, 2}, {5001, 3000}, {300001, 120000}};
        const int bits[] = {3, 8, 11, 13};
        for (int i = 0; i < 5; i++)
            for (int b = 0; b < 4; b++) {
                struct kcase c = {.key64 = k64, .n = sizes[i][0], .groups = sizes[i][1],
                                  .batches = 1, .mode = P, .pbits = bits[b]};
                kcase_run(&c);
            }
        struct kcase x = {.key64 = k64, .n = 200000, .groups = 700, .extremes = 1,
                          .batches = 3, .mode = P, .pbits = 11};
        kcase_run(&x);
        struct kcase sk = {.key64 = k64, .n = 250000, .groups = 100000, .skew = 1,
                           .batches = 1, .mode = P, .pbits = 13};
        kcase_run(&sk);
        struct kcase un = {.key64 = k64, .n = 100003, .groups = 30000, .offset = 1,
                           .batches = 2, .mode = P, .pbits = 12};
        kcase_run(&un);
        struct kcase so = {.key64 = k64, .n = 1000000, .groups = 250000, .sorted = 2,
                           .batches = 2, .mode = P, .pbits = 13};
        kcase_run(&so);
        struct kcase redo = {.key64 = k64, .n = 300001, .groups = 120000, .batches = 2,
                             .mode = P, .pbits = 2};
        kcase_run(&redo);
        struct kcase rows = {.key64 = k64, .n = 300001, .groups = 120000, .batches = 2,
                             .mode = P, .pbits = 13, .rowpart = 1};
        kcase_run(&rows);
    }
    /* Chosen by the estimate: past 2^20 groups of an unclustered input, the partitioned
     * method; clustered, the record table (int64 keys: key_of's int32 keys stop at
     * 271,000 groups). */
    struct kcase many = {.key64 = 1, .n = 3000000, .groups = 2000000, .batches = 1,
                         .want_mode = P};
    kcase_run(&many);
    struct kcase many_sorted = {.key64 = 1, .n = 6000000, .groups = 1500000, .sorted = 1,
                                .batches = 1, .want_mode = AGG_GDRV_DIRECT,
                                .want_clustered = 1};
    kcase_run(&many_sorted);
}

/* The same partitioned method and record table with the aggregates the tile partitioner
 * takes: count(*), count and sum (one moved value column: the next tile loads while one
 * is written) and with min and max too (three: loaded a tile at a time). Each pass of
 * 3,000,001 rows gives a block several tiles and a tail; partitions of a few hundred rows
 * to several hundred thousand reach the partition kernel's four rows a thread with and
 * without a tail; values of 2^40 (extremes) make it give partitions up to the generic
 * kernel; skew, unaligned columns, several batches. */
SL_TEST(part_path_tile_partitioner_narrow)
{
    NEED_GPU();
    kernel_setup();
    const int P = AGG_GDRV_PART, D = AGG_GDRV_DIRECT;
    for (int na = 3; na <= 5; na += 2)
        for (int k64 = 0; k64 < 2; k64++) {
            const int64_t sizes[][2] = {{0, 1}, {1, 1}, {5001, 3000}, {3000001, 250000}};
            const int bits[] = {3, 8, 13};
            for (int i = 0; i < 4; i++)
                for (int b = 0; b < 3; b++) {
                    struct kcase c = {.key64 = k64, .n = sizes[i][0], .groups = sizes[i][1],
                                      .batches = 1, .mode = P, .pbits = bits[b], .naggs = na};
                    kcase_run(&c);
                }
            struct kcase x = {.key64 = k64, .n = 1000000, .groups = 700, .extremes = 1,
                              .batches = 3, .mode = P, .pbits = 11, .naggs = na};
            kcase_run(&x);
            struct kcase sk = {.key64 = k64, .n = 1500000, .groups = 100000, .skew = 1,
                               .batches = 1, .mode = P, .pbits = 13, .naggs = na};
            kcase_run(&sk);
            struct kcase un = {.key64 = k64, .n = 1100003, .groups = 30000, .offset = 1,
                               .batches = 2, .mode = P, .pbits = 12, .naggs = na};
            kcase_run(&un);
            struct kcase dr = {.key64 = k64, .n = 3000001, .groups = 250000, .batches = 2,
                               .mode = D, .dbits = 7, .naggs = na};
            kcase_run(&dr);
        }
}

/* The partition kernel's big table (SL_K_AGG_BIG: one block an SM, all its shared memory,
 * slots not a power of two) with the aggregates it takes (count(*), count, sum; and min,
 * max), after the two-pass tile partitioner and after the one-pass wide partitioner (a
 * global cursor per partition): empty, one row, a tail, bits from the estimate and
 * forced (3: partitions of more groups than the big table holds, done again by the
 * generic kernel; 11 and 12: 2^12 cells a block of the wide partitioner scans, most
 * partitions empty; 13), keys and values at the extremes (2^40 values give partitions
 * up), skew (one partition holds 90% of the rows), unaligned columns, several batches, a
 * first batch of ten groups where the input has 50,000 (the estimate low: two partitions
 * of 25,000 groups each), against the smaller table (big -1) on the same input; chosen
 * by the estimate for 6,000,000 groups (11 bits) and 1,500,000 (9 bits, the fewest; an
 * int64 key's slot takes 20 bytes) and 9,000,000 with min and max (13 bits at 0.3 of
 * 6,400 slots: 12 bits), not with debug_agg_gpu_no_big_table's big -1. */
SL_TEST(part_path_big_table)
{
    NEED_GPU();
    kernel_setup();
    const int P = AGG_GDRV_PART;
    for (int na = 3; na <= 5; na += 2)
        for (int k64 = 0; k64 < 2; k64++) {
            const int64_t sizes[][2] = {{0, 1}, {1, 1}, {5001, 3000}, {3000001, 250000}};
            const int bits[] = {0, 3, 11, 12, 13};
            for (int i = 0; i < 4; i++)
                for (int b = 0; b < 5; b++)
                    for (int op = 0; op < 2; op++) {
                        if (op && bits[b] > 12)
                            continue;
                        struct kcase c = {.key64 = k64, .n = sizes[i][0],
                                          .groups = sizes[i][1], .batches = 1, .mode = P,
                                          .pbits = bits[b], .naggs = na, .big = 1,
                                          .one_pass = op, .want_big = 1, .cluster = -1,
                                          .want_cluster = -1};
                        kcase_run(&c);
                    }
            struct kcase cases[] = {
                {.n = 1000000, .groups = 700, .extremes = 1, .batches = 3, .pbits = 11},
                {.n = 1500000, .groups = 100000, .skew = 1, .batches = 1, .pbits = 10},
                {.n = 1100003, .groups = 30000, .offset = 1, .batches = 2, .pbits = 12},
                {.n = 400000, .groups = 50000, .few_first = 1, .batches = 2},
                {.n = 3000001, .groups = 250000, .batches = 3, .pbits = 9, .sum_first = 1},
            };
            for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                cases[i].key64 = k64, cases[i].mode = P, cases[i].naggs = na;
                cases[i].big = 1, cases[i].want_big = 1, cases[i].cluster = -1;
                kcase_run(&cases[i]);
                cases[i].one_pass = 1;
                kcase_run(&cases[i]);
                cases[i].one_pass = 0;
                cases[i].big = -1, cases[i].want_big = -1; /* the smaller table */
                kcase_run(&cases[i]);
            }
        }
    struct kcase many[] = {
        {.key64 = 1, .n = 12000000, .groups = 6000000, .batches = 1, .naggs = 3,
         .want_mode = P, .want_big = 1, .cluster = -1, .want_cluster = -1},
        {.key64 = 1, .n = 12000000, .groups = 6000000, .batches = 2, .naggs = 5,
         .want_mode = P, .big = -1, .want_big = -1, .want_cluster = -1},
        {.key64 = 1, .n = 3000000, .groups = 1500000, .batches = 1, .naggs = 3,
         .want_mode = P, .want_big = 1, .cluster = -1, .want_cluster = -1},
        /* 13 bits by the estimate (6,400 slots): 12 at a load within BIG_MAX_LOAD, 13
         * and the smaller table with debug_agg_gpu_big_strict */
        {.key64 = 1, .n = 18000000, .groups = 9000000, .batches = 1, .naggs = 5,
         .want_mode = P, .want_big = 1, .want_bits = 12, .want_cluster = -1},
        {.key64 = 1, .n = 18000000, .groups = 9000000, .batches = 1, .naggs = 5,
         .want_mode = P, .big_strict = 1, .want_big = -1, .want_cluster = -1},
    };
    for (size_t i = 0; i < sizeof many / sizeof many[0]; i++)
        kcase_run(&many[i]);
}

/* The same on inputs small enough for compute-sanitizer (memcheck, racecheck): the big
 * table after both partitioners (the wide one's tiles, a tail, 2^12 partitions), and a
 * partition it gives up (a value of 2^40). */
SL_TEST(part_path_big_table_small)
{
    NEED_GPU();
    kernel_setup();
    const int P = AGG_GDRV_PART;
    struct kcase cases[] = {
        {.n = 20001, .groups = 3000, .batches = 1, .pbits = 4, .naggs = 3},
        {.n = 9000, .groups = 5000, .batches = 2, .pbits = 12, .naggs = 5},
        {.n = 20000, .groups = 700, .extremes = 1, .batches = 1, .pbits = 2, .naggs = 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int op = 0; op < 2; op++) {
            cases[i].mode = P, cases[i].big = 1, cases[i].want_big = 1;
            cases[i].one_pass = op, cases[i].cluster = -1;
            kcase_run(&cases[i]);
        }
}

/* Whether the GPU runs clusters of 8 blocks of the partition kernel's big table (else
 * the cluster tests say so and skip). */
static int have_clusters(void)
{
    const struct sl_k_agg_spec probe = {.n_keys = 1, .key_type = {SL_K_I32}, .n_aggs = 1,
                                        .fn = {SL_K_AGG_COUNT_STAR}};
    if (sl_k_agg_part_cluster_max(&probe, 8) > 0)
        return 1;
    printf("no clusters of 8 big blocks on this GPU: skipped\n");
    return 0;
}

/* The cluster table (SL_K_AGG_CLUSTER: a partition aggregated by a cluster of 2, 4, 8 or
 * 16 blocks in a table spread over their shared memory, remote atomics; the driver takes
 * it only when asked, agg_gdrv.cluster) with count(*), count and sum, int32 and int64
 * keys: empty, one row, a tail, bits from the cluster (8, one partitioning pass) and
 * forced (3 and 2: partitions of more groups than a cluster of 2 or 4 holds, done again
 * by the generic kernel; 10: two passes), keys and values at the extremes (the empty
 * marker as a key and 2^40 values give partitions up), skew (one partition holds 90% of
 * the rows), unaligned columns, several batches (2 and 8 blocks), the estimate low (a first batch of ten groups
 * where the input has 50,000) and high (1,000 groups, most of the 256 partitions empty),
 * against the reference. Not taken: with min and max (the big table instead), nor
 * unasked (6,000,000 groups). Skipped where the GPU has no clusters. */
SL_TEST(part_path_cluster_table)
{
    NEED_GPU();
    kernel_setup();
    if (!have_clusters())
        return;
    const int P = AGG_GDRV_PART;
    for (int k64 = 0; k64 < 2; k64++) {
        const int64_t sizes[][2] = {{0, 1}, {1, 1}, {5001, 3000}, {3000001, 250000}};
        const int cl[] = {2, 4, 8, 16};
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                const int bits[] = {0, j < 2 ? 3 : 2, 10};
                for (int b = 0; b < 3; b++) {
                    if (b == 2 && cl[j] != 8)
                        continue;
                    struct kcase c = {.key64 = k64, .n = sizes[i][0], .groups = sizes[i][1],
                                      .batches = 1, .mode = P, .pbits = bits[b], .naggs = 3,
                                      .cluster = cl[j], .want_big = 1, .want_cluster = cl[j]};
                    kcase_run(&c);
                }
            }
        struct kcase cases[] = {
            {.n = 1000000, .groups = 700, .extremes = 1, .batches = 3},
            {.n = 1500000, .groups = 100000, .skew = 1, .batches = 1},
            {.n = 1100003, .groups = 30000, .offset = 1, .batches = 2},
            {.n = 400000, .groups = 50000, .few_first = 1, .batches = 2},
            {.n = 3000001, .groups = 250000, .batches = 3, .sum_first = 1},
            {.n = 2000000, .groups = 1000, .batches = 2},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            for (int j = 0; j < 2; j++) { /* 2 and 8 blocks */
                cases[i].key64 = k64, cases[i].mode = P, cases[i].naggs = 3;
                cases[i].cluster = j ? 8 : 2, cases[i].want_cluster = cases[i].cluster;
                cases[i].want_big = 1;
                kcase_run(&cases[i]);
            }
    }
    struct kcase not_taken[] = {
        {.n = 3000001, .groups = 250000, .batches = 1, .mode = P, .pbits = 10, .naggs = 5,
         .cluster = 8, .want_big = 1, .want_cluster = -1},
        {.key64 = 1, .n = 400000, .groups = 50000, .batches = 2, .mode = P, .naggs = 5,
         .cluster = 2, .want_cluster = -1},
        {.key64 = 1, .n = 12000000, .groups = 6000000, .batches = 1, .naggs = 3,
         .want_mode = P, .want_big = 1, .want_cluster = -1},
    };
    for (size_t i = 0; i < sizeof not_taken / sizeof not_taken[0]; i++)
        kcase_run(&not_taken[i]);
}

/* The same on inputs small enough for compute-sanitizer (memcheck, racecheck): clusters
 * of 2 and 8 blocks, a tail,
 * several batches, and partitions they give up (a value of 2^40, the empty marker as a
 * key, more groups than 2 blocks hold). */
SL_TEST(part_path_cluster_table_small)
{
    NEED_GPU();
    kernel_setup();
    if (!have_clusters())
        return;
    const int P = AGG_GDRV_PART;
    struct kcase cases[] = {
        {.n = 20001, .groups = 3000, .batches = 1, .pbits = 4},
        {.n = 9000, .groups = 5000, .batches = 2, .pbits = 8},
        {.n = 20000, .groups = 700, .extremes = 1, .batches = 1, .pbits = 2},
        {.n = 100000, .groups = 80000, .batches = 1, .pbits = 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int j = 0; j < 2; j++) { /* 2 and 8 blocks */
            cases[i].mode = P, cases[i].naggs = 3, cases[i].cluster = j ? 8 : 2;
            cases[i].want_cluster = cases[i].cluster;
            cases[i].want_big = 1;
            kcase_run(&cases[i]);
        }
}

/* Row counts packed with the first integer sum (SL_K_AGG_PACK) against the plain
 * reference and the unpacked kernels, and the lean kernel of one sum: values
 * at the packed range's bounds and one past them, at int32's extremes (the 32-bit
 * halves) and 2^40 (the global path); 16 groups over 4,194,304 rows (about a thousand
 * rows a group in each block: the words' low byte wraps, and their sums carry and borrow
 * past 32 bits); 1,000 groups; the sum first or third, with min and max; no sum (the
 * words count rows alone, with and without min and max); all eight aggregates (too many
 * states: unpacked); the partitioned method's partition kernel. */
SL_TEST(small_path_packed_counts)
{
    NEED_GPU();
    kernel_setup();
    const int P = AGG_GDRV_PART;
    for (int k64 = 0; k64 < 2; k64++) {
        struct kcase cases[] = {
            {.n = 4194304, .groups = 16, .batches = 1, .packv = 1, .naggs = 5},
            {.n = 4194304, .groups = 16, .batches = 2, .packv = 1, .sum_first = 1, .naggs = 3},
            {.n = 4194304, .groups = 16, .batches = 1, .packv = 1, .naggs = 5, .pack = -1},
            {.n = 4194304, .groups = 16, .batches = 1, .naggs = 3},
            {.n = 4194304, .groups = 16, .batches = 1, .packv = 1}, /* eight: not packed */
            {.n = 1000003, .groups = 1000, .batches = 2, .packv = 1, .offset = 1, .naggs = 5},
            {.n = 1000003, .groups = 1000, .batches = 1, .packv = 1, .extremes = 1,
             .naggs = 3},
            {.n = 2000000, .groups = 200, .batches = 1, .naggs = 3, .no_sum = 1},
            {.n = 2000000, .groups = 200, .batches = 1, .naggs = 5, .no_sum = 1},
            {.n = 2000000, .groups = 200, .batches = 1, .naggs = 5, .no_sum = 1,
             .pack = -1},
            {.n = 4194304, .groups = 3000, .batches = 1, .packv = 1, .mode = P, .pbits = 4,
             .naggs = 5},
            {.n = 3000001, .groups = 250000, .batches = 2, .packv = 1, .mode = P,
             .pbits = 13, .naggs = 3},
            {.n = 3000001, .groups = 250000, .batches = 1, .mode = P, .pbits = 13,
             .naggs = 3, .no_sum = 1},
            {.n = 3000001, .groups = 250000, .batches = 1, .packv = 1, .mode = P,
             .pbits = 13, .naggs = 3, .pack = -1},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            cases[i].key64 = k64;
            cases[i].pack = cases[i].pack == 0; /* -1: the unpacked kernels */
            kcase_run(&cases[i]);
        }
        /* The driver's default: one sum (count(*), count, sum) takes the lean kernel;
         * values about int32's bounds (the global path past them), extremes, one row,
         * a tail, skew, against the general kernel (no_lean). */
        struct kcase lean[] = {
            {.n = 1, .groups = 1, .batches = 1, .naggs = 3},
            {.n = 4194304, .groups = 16, .batches = 1, .packv = 1, .naggs = 3},
            {.n = 1000003, .groups = 1000, .batches = 2, .packv = 1, .offset = 1, .naggs = 3},
            {.n = 1000003, .groups = 1000, .batches = 1, .extremes = 1, .naggs = 3},
            {.n = 1000003, .groups = 1000, .batches = 1, .extremes = 1, .naggs = 3,
             .sum_first = 1},
            {.n = 2000000, .groups = 1500, .batches = 1, .skew = 1, .naggs = 3},
            {.n = 400000, .groups = 50000, .batches = 2, .small = (int64_t)1 << 40, .naggs = 3},
            {.n = 1000003, .groups = 1000, .batches = 1, .packv = 1, .naggs = 3, .no_lean = 1},
        };
        for (size_t i = 0; i < sizeof lean / sizeof lean[0]; i++) {
            lean[i].key64 = k64;
            kcase_run(&lean[i]);
        }
    }
}

/* The same paths on inputs small enough for compute-sanitizer: packed values about
 * their bounds, a word's low byte past 255 rows (one block), no sum, the partition
 * kernel. */
SL_TEST(small_path_packed_small)
{
    NEED_GPU();
    kernel_setup();
    const int P = AGG_GDRV_PART;
    struct kcase cases[] = {
        {.n = 3001, .groups = 12, .batches = 1, .packv = 1, .naggs = 5},
        {.n = 20000, .groups = 300, .batches = 2, .packv = 1, .sum_first = 1, .naggs = 3},
        {.n = 5000, .groups = 40, .batches = 1, .naggs = 5, .no_sum = 1},
        {.n = 20001, .groups = 3000, .batches = 1, .packv = 1, .mode = P, .pbits = 4,
         .naggs = 5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cases[i].pack = 1;
        kcase_run(&cases[i]);
        cases[i].pack = 0; /* the driver's default: lean for one sum (naggs 3) */
        kcase_run(&cases[i]);
    }
}

/* The shared-table kernels with the sum among the values they load with the keys
 * (count(*), sum, count): 1,000 groups, values at the extremes (wide values take the
 * global path, or make the partition kernel give a partition up), one group holding 90%
 * of 10,000,000 rows, unaligned columns, and the partitioned method's partition kernel
 * on skewed, extreme and narrow inputs. */
SL_TEST(small_path_sum_loaded_with_keys)
{
    NEED_GPU();
    kernel_setup();
    const int P = AGG_GDRV_PART;
    for (int k64 = 0; k64 < 2; k64++) {
        struct kcase cases[] = {
            {.key64 = k64, .n = 300001, .groups = 1000, .batches = 1},
            {.key64 = k64, .n = 200000, .groups = 700, .extremes = 1, .batches = 3},
            {.key64 = k64, .n = 10000000, .groups = 1500, .skew = 1, .batches = 1},
            {.key64 = k64, .n = 100003, .groups = 300, .offset = 1, .batches = 2},
            {.key64 = k64, .n = 1500000, .groups = 100000, .skew = 1, .batches = 1, .mode = P,
             .pbits = 13},
            {.key64 = k64, .n = 1000000, .groups = 700, .extremes = 1, .batches = 2, .mode = P,
             .pbits = 11},
            {.key64 = k64, .n = 3000001, .groups = 250000, .batches = 1, .mode = P,
             .pbits = 13, .naggs = 3},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            cases[i].sum_first = 1;
            kcase_run(&cases[i]);
        }
    }
}

/* ---------------- operator level ---------------- */

/* A table holding batch b (the reference taken over). */
static sl_table_t *table_of(sl_batch_t *b)
{
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    SL_ASSERT_OK(sl_table_append(t, b));
    sl_batch_unref(b);
    return t;
}

/* Rows of kd (date32), kt (timestamp), kc (decimal(12,2)), v (int64), dv (decimal(15,2)),
 * dd (date32), groups groups; nulls: 10% of keys and 20% of values. */
static sl_table_t *typed_input(int64_t rows, int64_t groups, int nulls, uint64_t seed)
{
    const char *names[8] = {"kd", "kt", "kc", "v", "dv", "dd", "kb", "ke"};
    enum sl_type ty[8] = {SL_TYPE_DATE32, SL_TYPE_TIMESTAMP, sl_type_decimal(12, 2),
                          SL_TYPE_INT64, sl_type_decimal(15, 2), SL_TYPE_DATE32, SL_TYPE_BOOL,
                          SL_TYPE_INT32};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 8, names, ty, rows));
    int32_t *kd = sl_batch_column_data(b, 0), *dd = sl_batch_column_data(b, 5);
    int64_t *kt = sl_batch_column_data(b, 1), *kc = sl_batch_column_data(b, 2);
    int64_t *v = sl_batch_column_data(b, 3), *dv = sl_batch_column_data(b, 4);
    uint8_t *kb = sl_batch_column_data(b, 6);
    int32_t *ke = sl_batch_column_data(b, 7);
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
    for (int64_t i = 0; i < rows; i++) {
        int64_t g = (int64_t)(rnd(&s) % (uint64_t)groups);
        kd[i] = (int32_t)(g * 3 - 20000);                          /* days around 1915 */
        kt[i] = g * 86400000000ll + 123456;                        /* microseconds */
        kc[i] = g * 101 - 999999999ll;                             /* -9999999.99 .. */
        kb[i] = (uint8_t)(g & 1);
        ke[i] = (int32_t)(g / 2) - 1; /* with kd: a second int32 key */
        v[i] = (int64_t)(rnd(&s) % 2000001) - 1000000;
        dv[i] = (int64_t)(rnd(&s) % 999999999999999ull) - 499999999999999ll; /* 15 digits */
        dd[i] = (int32_t)(rnd(&s) % 40000) - 10000;
    }
    if (nulls)
        for (int c = 0; c < 8; c++) {
            uint8_t *valid = sl_batch_column_validity(b, c);
            for (int64_t i = 0; i < rows; i++)
                if (rnd(&s) % 100 < (c < 3 ? 10u : 20u))
                    valid[i / 8] &= (uint8_t) ~(1u << (i % 8));
        }
    return table_of(b);
}

/* Every row of t as "cell|cell|...", sorted. */
static char **rows_text(sl_table_t *t, int64_t *n)
{
    *n = sl_table_num_rows(t);
    char **r = calloc((size_t)*n + 1, sizeof *r);
    int64_t at = 0;
    for (int64_t bi = 0; bi < sl_table_num_batches(t); bi++) {
        const sl_batch_t *b = sl_table_batch(t, bi);
        for (int64_t i = 0; i < sl_batch_num_rows(b); i++, at++) {
            char line[1024] = "", cell[96];
            for (int c = 0; c < sl_batch_num_columns(b); c++) {
                tr_cell(b, c, i, cell, sizeof cell);
                strncat(line, cell, sizeof line - strlen(line) - 2);
                strcat(line, "|");
            }
            r[at] = strdup(line);
        }
    }
    qsort(r, (size_t)*n, sizeof *r, tr_cmp_str);
    return r;
}

/* A run's engine beside its placement: GPU budget and rows per GPU morsel (0: the
 * defaults), and what the aggregate's profile values said (NULL: not asked). */
struct run_cfg {
    int64_t gpu_mem, morsel;
    int64_t *folds, *host, *host_rows;
    int64_t *host_held, *kept; /* gpu_budget_host_held, gpu_kept_bytes */
    int64_t *gpu_peak;         /* the engine's GPU memory peak (the pool's statistic) */
    int may_fail;              /* a failed query returns its code (*out NULL) */
    int64_t host_mem;          /* the engine's host budget (0: the default) */
};

/* Value `name` of the query's profile (0 when the operator set none). */
static int64_t profile_value(sl_query_t *q, const char *name)
{
    const char *js = sl_query_profile_json(q);
    char key[80];
    snprintf(key, sizeof key, "\"%s\":", name);
    const char *at = js ? strstr(js, key) : NULL;
    return at ? strtoll(at + strlen(key), NULL, 10) : 0;
}

static int run_cfg_on(enum sl_placement pl, sl_table_t *in, const char *opts,
                      const struct run_cfg *rc_, sl_table_t **out, int *on_gpu);

static int run_on(enum sl_placement pl, sl_table_t *in, const char *opts, sl_table_t **out,
                  int *on_gpu)
{
    static const struct run_cfg none = {0};
    return run_cfg_on(pl, in, opts, &none, out, on_gpu);
}

static int run_cfg_on(enum sl_placement pl, sl_table_t *in, const char *opts,
                      const struct run_cfg *rc_, sl_table_t **out, int *on_gpu)
{
    struct sl_engine_config cfg;
    gpu_test_config(&cfg, pl, rc_->gpu_mem);
    cfg.morsel_rows_gpu = rc_->morsel;
    cfg.host_mem_limit = rc_->host_mem;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    sl_plan_t *p;
    int ni, na;
    SL_ASSERT_OK(sl_plan_create(&p));
    SL_ASSERT_OK(sl_plan_add_table(p, in, &ni));
    SL_ASSERT_OK(sl_plan_add(p, "aggregate", &ni, 1, opts, &na));
    SL_ASSERT_OK(sl_plan_output(p, na, "o"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    int rc = sl_query_run(q);
    if (rc != SL_OK && !rc_->may_fail)
        fail_msg("%s: %s", opts, sl_query_errmsg(q));
    if (rc != SL_OK)
        printf("%s: failed as it may: %s\n", opts, sl_query_errmsg(q));
    *on_gpu = q->ops[na].home_gpu >= 0;
    if (rc_->folds)
        *rc_->folds = profile_value(q, "gpu_budget_folds");
    if (rc_->host)
        *rc_->host = profile_value(q, "gpu_budget_host");
    if (rc_->host_rows)
        *rc_->host_rows = profile_value(q, "gpu_budget_host_rows");
    if (rc_->host_held)
        *rc_->host_held = profile_value(q, "gpu_budget_host_held");
    if (rc_->kept)
        *rc_->kept = profile_value(q, "gpu_kept_bytes");
    if (rc_->gpu_peak) {
        struct sl_mem_stats ms = SL_MEM_STATS_INIT;
        SL_ASSERT_OK(sl_engine_mem_stats(e, &ms));
        *rc_->gpu_peak = ms.gpu_peak;
    }
    *out = NULL;
    if (rc == SL_OK)
        SL_ASSERT_OK(sl_query_result(q, "o", out));
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_engine_close(e);
    return rc;
}

/* The plan on the CPU and on the GPU (engine rc_): equal rows; want_gpu: where the GPU
 * run must be (-1: either). */
static void typed_check_cfg(sl_table_t *in, const char *opts, int want_gpu,
                            const struct run_cfg *rc_)
{
    sl_table_t *want, *got;
    int on_gpu = 0;
    run_on(SL_PLACE_CPU, in, opts, &want, &on_gpu);
    run_cfg_on(SL_PLACE_GPU, in, opts, rc_, &got, &on_gpu);
    int64_t nw, ng;
    char **w = rows_text(want, &nw), **g = rows_text(got, &ng);
    printf("%s: %lld rows, on the GPU %d\n", opts, (long long)nw, on_gpu);
    if (want_gpu >= 0)
        assert_int_equal(on_gpu, want_gpu);
    assert_int_equal(ng, nw);
    for (int64_t i = 0; i < nw; i++) {
        if (strcmp(w[i], g[i]))
            fail_msg("%s: row %lld: cpu %s gpu %s", opts, (long long)i, w[i], g[i]);
        free(w[i]), free(g[i]);
    }
    free(w), free(g);
    sl_table_unref(want);
    sl_table_unref(got);
}

static void typed_check(sl_table_t *in, const char *opts, int want_gpu)
{
    static const struct run_cfg none = {0};
    typed_check_cfg(in, opts, want_gpu, &none);
}

#define TYPED_AGGS "aggs=\"count(*), sum(dv), avg(dv), min(dv), max(dv), min(dd), max(kt), " \
                   "sum(v)\""

SL_TEST(op_date_timestamp_decimal_keys_and_values)
{
    NEED_GPU();
    for (int nulls = 0; nulls < 2; nulls++) {
        sl_table_t *few = typed_input(300000, 1000, nulls, 21 + (uint64_t)nulls);
        typed_check(few, "keys=kd " TYPED_AGGS, 1);
        typed_check(few, "keys=kt " TYPED_AGGS, 1);
        typed_check(few, "keys=kc " TYPED_AGGS, 1);
        typed_check(few, "keys=\"kd,kc\" " TYPED_AGGS, 1);
        typed_check(few, TYPED_AGGS, 1); /* no key: exact decimal sums too (TPC-H Q6) */
        sl_table_unref(few);
        sl_table_t *many = typed_input(400000, 150000, nulls, 23 + (uint64_t)nulls);
        typed_check(many, "keys=kc " TYPED_AGGS, 1);
        sl_table_unref(many);
    }
}

/* The few-groups kernel (SL_K_AGG_FEW) through the operator: two int32 keys (TPC-H
 * Q1's shape: 4 groups, decimal sums exact, an average, min/max of a date and a
 * timestamp), one key and no key, with and without nulls (which send it to the
 * shared-table kernels); equal to the CPU engine. */
#define FEW_AGGS "aggs=\"count(*), sum(dv), avg(dv), min(dd), max(kt), sum(v)\""

SL_TEST(op_few_groups_two_keys)
{
    NEED_GPU();
    for (int nulls = 0; nulls < 2; nulls++) {
        sl_table_t *in = typed_input(300001, 4, nulls, 41 + (uint64_t)nulls);
        typed_check(in, "keys=\"kd,ke\" " FEW_AGGS, 1);
        typed_check(in, "keys=\"ke\" " FEW_AGGS, 1);
        typed_check(in, FEW_AGGS, 1);
        sl_table_unref(in);
        sl_table_t *eight = typed_input(200000, 8, nulls, 43 + (uint64_t)nulls);
        typed_check(eight, "keys=\"kd,ke\" " FEW_AGGS, 1);
        sl_table_unref(eight);
    }
}

/* where= on the GPU (the kernels read the passing rows by number): the few-groups kernel
 * (two keys, one, none), the table method's generic kernels (1,000 groups, or nulls),
 * the partitioned method (150,000 groups: the rows gathered first), every row passing,
 * none, a NULL predicate column; a predicate the GPU program does not take runs on the
 * CPU. Equal to the CPU engine. */
SL_TEST(op_where_rows_by_number)
{
    NEED_GPU();
    for (int nulls = 0; nulls < 2; nulls++) {
        sl_table_t *in = typed_input(300001, 4, nulls, 61 + (uint64_t)nulls);
        typed_check(in, "where=\"dd > DATE '1970-01-01'\" keys=\"kd,ke\" " FEW_AGGS, 1);
        typed_check(in, "where=\"dd > DATE '1970-01-01' AND v < 0\" keys=\"ke\" " FEW_AGGS, 1);
        typed_check(in, "where=\"dd < DATE '1960-01-01' OR dd > DATE '2030-01-01'\" " FEW_AGGS, 1);
        typed_check(in, "where=\"dd >= DATE '1940-01-01'\" keys=\"kd,ke\" " FEW_AGGS, 1); /* all */
        typed_check(in, "where=\"dd < DATE '1940-01-01'\" keys=\"kd,ke\" " FEW_AGGS, 1); /* none */
        typed_check(in, "where=\"dd < DATE '1940-01-01'\" " FEW_AGGS, 1);
        typed_check(in, "where=\"v * 2 > v + 5\" keys=\"kd,ke\" " FEW_AGGS, 1); /* interpreter */
        typed_check(in, "where=\"CAST(v AS float64) > 1.5\" keys=ke " FEW_AGGS, 0);
        sl_table_unref(in);
        sl_table_t *mid = typed_input(300000, 1000, nulls, 63 + (uint64_t)nulls);
        typed_check(mid, "where=\"v > 0\" keys=kd " TYPED_AGGS, 1);
        sl_table_unref(mid);
        sl_table_t *many = typed_input(400000, 150000, nulls, 65 + (uint64_t)nulls);
        typed_check(many, "where=\"v > 0\" keys=kc " TYPED_AGGS, 1);
        sl_table_unref(many);
    }
}

/* A type the GPU group-by does not take: the CPU runs it, results as the CPU's. */
SL_TEST(op_bool_key_stays_on_cpu)
{
    NEED_GPU();
    sl_table_t *in = typed_input(20000, 100, 1, 31);
    typed_check(in, "keys=kb aggs=\"count(*), sum(v)\"", 0);
    sl_table_unref(in);
}

/* ---------------- DICT keys (agg_cuda_dict.c) ---------------- */

/* How the batches of dict_input hold their key dictionary. */
enum dict_mode {
    DICT_SHARED,   /* one object */
    DICT_COPIES,   /* equal strings, an object per batch */
    DICT_OTHERS,   /* odd batches: the strings in reverse order (another dictionary) */
    DICT_REPEATS,  /* one object whose last entry repeats the first string */
};

/* `batches` batches of ks (DICT, "key-00042"), ki (int32), v (int64), s (DICT values),
 * `rows` rows in all, groups groups; nulls: 10% of ks and 20% of v. */
static sl_table_t *dict_input(int64_t rows, int64_t groups, int nulls, int batches,
                              enum dict_mode mode, uint64_t seed)
{
    const char *names[3] = {"ks", "ki", "v"};
    enum sl_type ty[3] = {SL_TYPE_DICT, SL_TYPE_INT32, SL_TYPE_INT64};
    int64_t entries = groups + (mode == DICT_REPEATS);
    int32_t *offs = malloc((size_t)(entries + 1) * sizeof *offs);
    char *chars = malloc((size_t)entries * 10 + 1), *fwd = chars;
    offs[0] = 0;
    for (int64_t e = 0; e < entries; e++)
        offs[e + 1] = offs[e] + snprintf(fwd + offs[e], 11, "key-%05lld",
                                         (long long)(e < groups ? e : 0));
    /* The reverse dictionary: entry e holds string groups - 1 - e. */
    char *rev = malloc((size_t)groups * 10 + 1);
    int32_t *roffs = malloc((size_t)(groups + 1) * sizeof *roffs);
    roffs[0] = 0;
    for (int64_t e = 0; e < groups; e++)
        roffs[e + 1] = roffs[e] + snprintf(rev + roffs[e], 11, "key-%05lld",
                                           (long long)(groups - 1 - e));
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    sl_batch_t *first = NULL;
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 5;
    for (int k = 0; k < batches; k++) {
        int64_t n = rows / batches + (k < rows % batches);
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, 3, names, ty, n));
        int reversed = mode == DICT_OTHERS && (k & 1);
        if (first && (mode == DICT_SHARED || mode == DICT_REPEATS))
            SL_ASSERT_OK(sl_batch_share_dictionary(b, 0, first, 0));
        else if (reversed)
            SL_ASSERT_OK(sl_batch_column_set_dictionary(b, 0, groups, roffs, rev));
        else
            SL_ASSERT_OK(sl_batch_column_set_dictionary(b, 0, entries, offs, chars));
        int32_t *ks = sl_batch_column_data(b, 0), *ki = sl_batch_column_data(b, 1);
        int64_t *v = sl_batch_column_data(b, 2);
        for (int64_t i = 0; i < n; i++) {
            int64_t g = (int64_t)(rnd(&s) % (uint64_t)groups);
            ks[i] = (int32_t)(reversed ? groups - 1 - g : g);
            if (mode == DICT_REPEATS && g == 0 && (i & 1))
                ks[i] = (int32_t)groups; /* the repeated "key-00000" */
            ki[i] = (int32_t)(g % 3);
            v[i] = (int64_t)(rnd(&s) % 2000001) - 1000000;
        }
        for (int c = 0; nulls && c < 3; c += 2) {
            uint8_t *valid = sl_batch_column_validity(b, c);
            for (int64_t i = 0; i < n; i++)
                if (rnd(&s) % 100 < (c == 0 ? 10u : 20u))
                    valid[i / 8] &= (uint8_t) ~(1u << (i % 8));
        }
        SL_ASSERT_OK(sl_table_append(t, b));
        if (!first)
            first = b;
        else
            sl_batch_unref(b);
    }
    sl_batch_unref(first);
    free(offs), free(chars), free(rev), free(roffs);
    return t;
}

#define DICT_AGGS "aggs=\"count(*), count(v), sum(v), min(v), max(v), avg(v)\""

/* typed_check, and the GPU's output column key_col (ks) is DICT as the CPU's. */
static void dict_check(sl_table_t *in, const char *opts, int want_gpu, int key_col)
{
    typed_check(in, opts, want_gpu);
    sl_table_t *got;
    int on_gpu = 0;
    run_on(SL_PLACE_GPU, in, opts, &got, &on_gpu);
    for (int64_t bi = 0; bi < sl_table_num_batches(got); bi++) {
        struct sl_column col;
        SL_ASSERT_OK(sl_batch_column(sl_table_batch(got, bi), key_col, &col));
        assert_int_equal(col.type, SL_TYPE_DICT);
    }
    sl_table_unref(got);
}

SL_TEST(op_dict_key_shared_dictionary)
{
    NEED_GPU();
    for (int nulls = 0; nulls < 2; nulls++) {
        sl_table_t *few = dict_input(300000, 1000, nulls, 4, DICT_SHARED, 41 + (uint64_t)nulls);
        dict_check(few, "keys=ks " DICT_AGGS, 1, 0);
        dict_check(few, "keys=\"ks,ki\" " DICT_AGGS, 1, 0);
        dict_check(few, "keys=\"ki,ks\" " DICT_AGGS, 1, 1);
        sl_table_unref(few);
        sl_table_t *one = dict_input(50000, 1, nulls, 2, DICT_SHARED, 43 + (uint64_t)nulls);
        dict_check(one, "keys=ks " DICT_AGGS, 1, 0);
        sl_table_unref(one);
        sl_table_t *many = dict_input(400000, 150000, nulls, 3, DICT_SHARED, 45 + (uint64_t)nulls);
        dict_check(many, "keys=ks " DICT_AGGS, 1, 0);
        sl_table_unref(many);
    }
    sl_table_t *empty = dict_input(0, 10, 0, 1, DICT_SHARED, 47);
    dict_check(empty, "keys=ks " DICT_AGGS, -1, 0);
    sl_table_unref(empty);
}

/* Equal dictionaries in distinct objects: codes as they are; a reordered dictionary and
 * one that holds a string twice (two codes, one group): remapped on the GPU. */
SL_TEST(op_dict_key_dictionaries_differ)
{
    NEED_GPU();
    sl_table_t *copies = dict_input(200000, 1000, 1, 4, DICT_COPIES, 51);
    dict_check(copies, "keys=ks " DICT_AGGS, 1, 0);
    dict_check(copies, "keys=\"ks,ki\" " DICT_AGGS, 1, 0);
    sl_table_unref(copies);
    sl_table_t *others = dict_input(200000, 1000, 1, 4, DICT_OTHERS, 53);
    dict_check(others, "keys=ks " DICT_AGGS, 1, 0);
    dict_check(others, "keys=\"ks,ki\" " DICT_AGGS, 1, 0);
    sl_table_unref(others);
    sl_table_t *repeats = dict_input(100000, 100, 1, 2, DICT_REPEATS, 55);
    dict_check(repeats, "keys=ks " DICT_AGGS, 1, 0);
    sl_table_unref(repeats);
}

/* Small inputs for compute-sanitizer: one shared dictionary with nulls (codes as they
 * are), reordered dictionaries (remapped), a composite key. */
SL_TEST(op_dict_key_small)
{
    NEED_GPU();
    sl_table_t *shared = dict_input(3000, 40, 1, 2, DICT_SHARED, 61);
    dict_check(shared, "keys=\"ks,ki\" " DICT_AGGS, 1, 0);
    sl_table_unref(shared);
    sl_table_t *others = dict_input(3000, 40, 1, 3, DICT_OTHERS, 63);
    dict_check(others, "keys=ks " DICT_AGGS, 1, 0);
    sl_table_unref(others);
}

/* ---------------- small GPU budgets (agg_cuda_budget.c, issue 18) ---------------- */

/* Aggregates whose groups are rebuilt from their output (no avg): the GPU folds. */
#define FOLD_AGGS "aggs=\"count(*), count(v), sum(dv), min(dv), max(dv), min(dd), max(kt), " \
                  "sum(v)\""

/* A budget of 24 MiB and GPU morsels of at most 2^16 rows: the kept batches pass their
 * share many times over an input of a million rows. */
#define SMALL_MEM ((int64_t)24 << 20)

/* The most bytes of input rows a budget run held in host memory at once
 * (gpu_budget_host_held) and the rows it moved there: set by budget_check_m. */
static int64_t g_host_held, g_host_rows;

static void budget_check_h(sl_table_t *in, const char *opts, int64_t morsel, int64_t host_mem,
                           int64_t *folds, int64_t *host)
{
    int64_t peak = 0;
    struct run_cfg rc_ = {.gpu_mem = SMALL_MEM, .morsel = morsel, .folds = folds, .host = host,
                          .host_rows = &g_host_rows, .host_held = &g_host_held,
                          .gpu_peak = &peak, .host_mem = host_mem};
    typed_check_cfg(in, opts, -1, &rc_); /* the profile values say where it ran */
    printf("  folds %lld, to the host %lld (%lld rows, at most %lld bytes at once), GPU peak "
           "%lld\n", (long long)*folds, (long long)*host, (long long)g_host_rows,
           (long long)g_host_held, (long long)peak);
    assert_true(peak > 0 && peak <= SMALL_MEM); /* the pool's peak: within the budget */
}

static void budget_check_m(sl_table_t *in, const char *opts, int64_t morsel, int64_t *folds,
                           int64_t *host)
{
    budget_check_h(in, opts, morsel, 0, folds, host);
}

static void budget_check(sl_table_t *in, const char *opts, int64_t *folds, int64_t *host)
{
    budget_check_m(in, opts, 1 << 16, folds, host);
}

/* Few groups (TPC-H Q1's shape: two keys, decimal sums, where=) and many (one decimal
 * key, 200,000 groups), with and without nulls: the driver's groups fold into host
 * memory as partial states and never go to the host as rows; equal to the CPU engine. */
SL_TEST(budget_folds_few_and_many_groups)
{
    NEED_GPU();
    for (int nulls = 0; nulls < 2; nulls++) {
        int64_t folds = 0, host = 0;
        sl_table_t *few = typed_input(1000000, 4, nulls, 81 + (uint64_t)nulls);
        budget_check(few, "keys=\"kd,ke\" " FOLD_AGGS, &folds, &host);
        assert_true(folds > 1);
        assert_int_equal(host, 0);
        budget_check(few, "where=\"dd > DATE '1970-01-01'\" keys=\"kd,ke\" " FOLD_AGGS, &folds,
                     &host);
        assert_true(folds > 1);
        assert_int_equal(host, 0);
        budget_check(few, FOLD_AGGS, &folds, &host); /* no key: one group */
        assert_true(folds > 1);
        sl_table_unref(few);
        sl_table_t *many = typed_input(1000000, 200000, nulls, 83 + (uint64_t)nulls);
        budget_check(many, "keys=kc " FOLD_AGGS, &folds, &host);
        assert_true(folds + host > 0);
        budget_check(many, "keys=\"kd,ke\" " FOLD_AGGS, &folds, &host); /* 100,000 pairs */
        assert_true(folds + host > 0);
        sl_table_unref(many);
    }
}

/* avg cannot be rebuilt from its output: past the share the kept batches and every later
 * one go to the host, where the CPU workers aggregate them (profile value 1); with
 * where= too. Equal to the CPU engine. */
SL_TEST(budget_avg_goes_to_the_host)
{
    NEED_GPU();
    for (int nulls = 0; nulls < 2; nulls++) {
        int64_t folds = 0, host = 0;
        sl_table_t *in = typed_input(1000000, 1000, nulls, 85 + (uint64_t)nulls);
        budget_check(in, "keys=kd " TYPED_AGGS, &folds, &host);
        assert_int_equal(host, 1);
        assert_int_equal(folds, 0);
        assert_true(g_host_rows > 500000);
        budget_check(in, "where=\"v > 0\" keys=\"kd,ke\" " TYPED_AGGS, &folds, &host);
        assert_int_equal(host, 1);
        sl_table_unref(in);
    }
}

/* avg of many batches (2^21 rows in morsels of 2^14) under a host budget of 512 MiB:
 * the inputs moved to the host wait for finalize's CPU tasks only up to a sixteenth of
 * it (32 MiB); past it those held are aggregated at once, so host memory holds at most
 * that and one batch (gpu_budget_host_held), not the whole input (92 MB, held until
 * finalize before); with where= and DICT keys (TPC-H Q1's shape) too. Equal to the CPU
 * engine. */
SL_TEST(budget_avg_many_batches_bounded_host_memory)
{
    NEED_GPU();
    int64_t folds = 0, host = 0;
    const int64_t morsel = 1 << 14, host_mem = (int64_t)512 << 20, cap = host_mem / 16;
    sl_table_t *in = typed_input(1 << 21, 1000, 1, 97); /* 46 bytes a row */
    budget_check_h(in, "keys=kd " TYPED_AGGS, morsel, host_mem, &folds, &host);
    assert_int_equal(host, 1);
    assert_true(g_host_rows > (1 << 20));
    assert_true(g_host_held > 0 && g_host_held <= cap + morsel * 48);
    budget_check_h(in, "where=\"v > 0\" keys=\"kd,ke\" " TYPED_AGGS, morsel, host_mem, &folds,
                   &host);
    assert_int_equal(host, 1);
    assert_true(g_host_held > 0 && g_host_held <= cap + morsel * 48);
    sl_table_unref(in);
    sl_table_t *dict = dict_input(1 << 22, 1000, 1, 16, DICT_SHARED, 99); /* 17 bytes a row */
    budget_check_h(dict, "where=\"v > 0\" keys=\"ks,ki\" " DICT_AGGS, morsel, host_mem, &folds,
                   &host);
    assert_int_equal(host, 1);
    assert_true(g_host_rows > (1 << 21));
    assert_true(g_host_held > 0 && g_host_held <= cap + morsel * 24);
    sl_table_unref(dict);
}

/* DICT keys under the budget: folds keep the merged codes (rebuilt as int32 codes on the
 * host), host batches are coded by the CPU sink; one dictionary and reordered ones. */
SL_TEST(budget_dict_keys)
{
    NEED_GPU();
    int64_t folds = 0, host = 0;
    sl_table_t *shared = dict_input(1000000, 150000, 1, 8, DICT_SHARED, 87);
    budget_check(shared, "keys=ks aggs=\"count(*), count(v), sum(v), min(v), max(v)\"", &folds,
                 &host);
    assert_true(folds + host > 0);
    budget_check(shared, "keys=\"ks,ki\" " DICT_AGGS, &folds, &host); /* avg: the host */
    assert_int_equal(host, 1);
    /* TPC-H Q1's shape: DICT keys and where= */
    budget_check(shared, "where=\"v > 0\" keys=\"ks,ki\" aggs=\"count(*), sum(v), min(v)\"",
                 &folds, &host);
    assert_true(folds + host > 0);
    budget_check(shared, "where=\"v > 0\" keys=\"ks,ki\" " DICT_AGGS, &folds, &host);
    assert_int_equal(host, 1);
    sl_table_unref(shared);
    sl_table_t *others = dict_input(1000000, 1000, 1, 8, DICT_OTHERS, 89);
    budget_check(others, "keys=ks aggs=\"count(*), sum(v), min(v)\"", &folds, &host);
    assert_true(folds > 1);
    assert_int_equal(host, 0);
    sl_table_unref(others);
}

/* A first morsel of ten groups, then every row a group of its own, with many aggregates:
 * the table sized for ten groups overflows and the one the chunk's rows need does not
 * fit the budget; the chunk's kept batches go to the host (profile value 2) and the
 * answer is still exact. */
SL_TEST(budget_table_over_the_budget)
{
    NEED_GPU();
    const int64_t rows = 600000;
    const char *names[2] = {"k", "v"};
    enum sl_type ty[2] = {SL_TYPE_INT64, SL_TYPE_INT64};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 2, names, ty, rows));
    int64_t *k = sl_batch_column_data(b, 0), *v = sl_batch_column_data(b, 1);
    uint64_t s = 91;
    for (int64_t i = 0; i < rows; i++) {
        k[i] = i < 20000 ? (int64_t)(i % 10) : i * 7919;
        v[i] = (int64_t)(rnd(&s) % 1000) - 500;
    }
    sl_table_t *in;
    SL_ASSERT_OK(sl_table_create(&in));
    SL_ASSERT_OK(sl_table_append(in, b));
    sl_batch_unref(b);
    int64_t folds = 0, host = 0;
    budget_check(in, "keys=k aggs=\"count(*), sum(v), min(v), max(v), count(v), sum(k), "
                     "min(k), max(k)\"", &folds, &host);
    assert_true(folds + host > 0);
    sl_table_unref(in);
}

/* Small inputs in morsels of 4,096 rows for compute-sanitizer: a fold of few groups with
 * where= and nulls, of many groups, and avg's batches to the host. */
SL_TEST(budget_small)
{
    NEED_GPU();
    int64_t folds = 0, host = 0;
    sl_table_t *in = typed_input(300000, 4, 1, 93);
    budget_check_m(in, "where=\"v > 0\" keys=\"kd,ke\" " FOLD_AGGS, 1 << 12, &folds, &host);
    assert_true(folds > 0);
    budget_check_m(in, "keys=kd " TYPED_AGGS, 1 << 12, &folds, &host);
    assert_int_equal(host, 1);
    sl_table_unref(in);
    sl_table_t *many = typed_input(300000, 50000, 1, 95);
    budget_check_m(many, "keys=kc " FOLD_AGGS, 1 << 12, &folds, &host);
    assert_true(folds + host > 0);
    sl_table_unref(many);
}

/* ---------------- the folds' sums, unkept inputs, DICT remaps (issue 18 review) -------- */

/* k (int32, `groups` groups), v (int64, every tenth null): rows [0, n/2) hold +big and
 * rows [n/2, n) -big + (i % 1000), row i + n/2 of the same group and nullness as row i,
 * so that every group's sum is small while a fold over the first half is not
 * (all_positive: every row +big, and the sums overflow int64). */
static sl_table_t *overflow_input(int64_t rows, int64_t groups, int64_t big, int all_positive)
{
    const char *names[2] = {"k", "v"};
    enum sl_type ty[2] = {SL_TYPE_INT32, SL_TYPE_INT64};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 2, names, ty, rows));
    int32_t *k = sl_batch_column_data(b, 0);
    int64_t *v = sl_batch_column_data(b, 1);
    uint8_t *valid = sl_batch_column_validity(b, 1);
    const int64_t half = rows / 2;
    for (int64_t i = 0; i < rows; i++) {
        const int64_t j = i % half;
        k[i] = (int32_t)(j % groups) - 7;
        v[i] = i < half || all_positive ? big : -big + i % 1000;
        if (j % 10 == 3)
            valid[i / 8] &= (uint8_t) ~(1u << (i % 8));
    }
    return table_of(b);
}

#define OVF_AGGS "aggs=\"count(*), count(v), sum(v), min(v), max(v)\""

/* A fold's partial sums leave at 128 bits: each group's first half sums past int64 in
 * every fold (4 groups of +2^50, 2^16 groups of +2^62; one group, no key) while its
 * total fits; the query failed with SL_EOVERFLOW before. Equal to the CPU engine. Sums
 * whose total does not fit still fail, on the CPU and on the GPU alike. */
SL_TEST(budget_fold_sums_past_int64)
{
    NEED_GPU();
    const int64_t rows = (int64_t)1 << 21;
    static const struct { int64_t groups, big; const char *keys; } cs[] = {
        {4, (int64_t)1 << 50, "keys=k "},
        {1 << 16, (int64_t)1 << 62, "keys=k "},
        {1, (int64_t)1 << 50, ""},
    };
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        char opts[200];
        snprintf(opts, sizeof opts, "%s" OVF_AGGS, cs[c].keys);
        int64_t folds = 0, host = 0;
        sl_table_t *in = overflow_input(rows, cs[c].groups, cs[c].big, 0);
        budget_check(in, opts, &folds, &host);
        assert_true(folds > 1);
        assert_int_equal(host, 0);
        sl_table_unref(in);
    }
    sl_table_t *in = overflow_input(rows, 4, (int64_t)1 << 50, 1);
    sl_table_t *out = NULL;
    int on_gpu = 0;
    int64_t folds = 0;
    struct run_cfg cpu = {.may_fail = 1},
                   gpu = {.gpu_mem = SMALL_MEM, .morsel = 1 << 16, .folds = &folds, .may_fail = 1};
    assert_int_equal(run_cfg_on(SL_PLACE_CPU, in, "keys=k " OVF_AGGS, &cpu, &out, &on_gpu),
                     SL_EOVERFLOW);
    assert_int_equal(run_cfg_on(SL_PLACE_GPU, in, "keys=k " OVF_AGGS, &gpu, &out, &on_gpu),
                     SL_EOVERFLOW);
    assert_true(folds > 1);
    sl_table_unref(in);
}

/* Without a GPU budget (gpu_mem 0) the partitioned method keeps no input (it copied each
 * into its partitions): profile gpu_kept_bytes 0; it kept them all before. Under a
 * budget of 4 GiB, which no fold needs, it keeps them (they may go to the host). Many
 * groups with nulls in morsels of 2^18 rows (the first batch's estimate takes the
 * partitioned method; one of 2^16 rows cannot estimate more than the 65,536 groups of
 * the table method's threshold), DICT keys remapped (their codes), where= (gathered
 * rows). Equal to the CPU engine. */
SL_TEST(budget_none_keeps_no_partitioned_input)
{
    NEED_GPU();
    sl_table_t *many = typed_input(1000000, 500000, 1, 101);
    sl_table_t *dict = dict_input(1000000, 90000, 1, 8, DICT_OTHERS, 103);
    struct {
        sl_table_t *in;
        const char *opts;
    } cs[] = {
        {many, "keys=kc " FOLD_AGGS},
        {many, "where=\"v > 0\" keys=kc " TYPED_AGGS},
        {dict, "keys=\"ks,ki\" " DICT_AGGS},
    };
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        int64_t kept = -1, host = 0;
        struct run_cfg none = {.morsel = 1 << 18, .host = &host, .kept = &kept};
        typed_check_cfg(cs[c].in, cs[c].opts, 1, &none);
        printf("  no budget: kept %lld bytes at most\n", (long long)kept);
        assert_int_equal(kept, 0);
        assert_int_equal(host, 0);
        struct run_cfg big = {.gpu_mem = (int64_t)4 << 30, .morsel = 1 << 18, .host = &host,
                              .kept = &kept};
        typed_check_cfg(cs[c].in, cs[c].opts, 1, &big);
        printf("  4 GiB budget: kept %lld bytes at most\n", (long long)kept);
        assert_true(kept > ((int64_t)8 << 20));
        assert_int_equal(host, 0);
    }
    sl_table_unref(many);
    sl_table_unref(dict);
}

/* Two batches of a DICT key on dictionaries of 3.5 million strings, the second's in
 * another order: its codes need the map remapped on the GPU (14 MB), more than a budget
 * of 12 MiB holds. The input goes to the host (profile value 3) instead of a failed
 * allocation failing the query (as before); equal to the CPU engine. */
SL_TEST(budget_dict_remap_over_the_budget)
{
    NEED_GPU();
    const int64_t entries = 3500000, rows = 100000, groups = 1000;
    char *fwd = malloc((size_t)entries * 9), *rev = malloc((size_t)entries * 9);
    int32_t *offs = malloc((size_t)(entries + 1) * sizeof *offs);
    offs[0] = 0;
    for (int64_t e = 0; e < entries; e++) {
        char s[16];
        snprintf(s, sizeof s, "k%08lld", (long long)e);
        memcpy(fwd + e * 9, s, 9);
        snprintf(s, sizeof s, "k%08lld", (long long)(entries - 1 - e));
        memcpy(rev + e * 9, s, 9);
        offs[e + 1] = (int32_t)(e + 1) * 9;
    }
    const char *names[2] = {"ks", "v"};
    enum sl_type ty[2] = {SL_TYPE_DICT, SL_TYPE_INT64};
    sl_table_t *in;
    SL_ASSERT_OK(sl_table_create(&in));
    uint64_t s = 105;
    for (int k = 0; k < 2; k++) {
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, 2, names, ty, rows / 2));
        SL_ASSERT_OK(sl_batch_column_set_dictionary(b, 0, entries, offs, k ? rev : fwd));
        int32_t *ks = sl_batch_column_data(b, 0);
        int64_t *v = sl_batch_column_data(b, 1);
        for (int64_t i = 0; i < rows / 2; i++) {
            int64_t g = (int64_t)(rnd(&s) % (uint64_t)groups);
            ks[i] = (int32_t)(k ? entries - 1 - g : g);
            v[i] = (int64_t)(rnd(&s) % 2001) - 1000;
        }
        SL_ASSERT_OK(sl_table_append(in, b));
        sl_batch_unref(b);
    }
    free(fwd), free(rev), free(offs);
    int64_t folds = 0, host = 0, peak = 0;
    struct run_cfg rc_ = {.gpu_mem = (int64_t)12 << 20, .morsel = 1 << 16, .folds = &folds,
                          .host = &host, .gpu_peak = &peak};
    typed_check_cfg(in, "keys=ks aggs=\"count(*), sum(v), min(v)\"", 1, &rc_);
    printf("  to the host %lld, GPU peak %lld\n", (long long)host, (long long)peak);
    assert_int_equal(host, 3);
    assert_true(peak <= ((int64_t)12 << 20));
    sl_table_unref(in);
}
