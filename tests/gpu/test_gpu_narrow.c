/* Tests narrow uploads (runtime/narrow.c, runtime/cuda/cuda_widen.cu): the widening
 * kernel against the host decoder for every pair of widths, bases at the types' extremes
 * and a grid-stride length; and a pinned table of every type that narrows (and some that
 * do not, nulls among them) read by a GPU filter in morsels at odd offsets: the same
 * rows as the CPU and as wide uploads (option debug_gpu_wide_upload), with fewer bytes
 * up. Skipped without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_expr_util.h"
#include "gpu_test.h"
#include "internal.h"

static uint64_t rng(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ull;
    return sl__gen_mix64(*s);
}

SL_TEST(widen_kernel_every_width)
{
    REQUIRE_GPU();
    static const int pairs[][2] = {{2, 1}, {4, 1}, {4, 2}, {4, 3}, {8, 1}, {8, 2}, {8, 3},
                                   {8, 4}};
    static const int64_t bases[] = {0, -1, INT64_MIN, INT64_MAX - 300, -123456789012ll,
                                    INT32_MIN, INT16_MIN};
    static const uint64_t steps[] = {1, 100, 7, 1ull << 40, UINT64_MAX};
    const int64_t n = 3000001; /* more values than the kernel's grid has threads */
    uint8_t *in = malloc((size_t)n * 4), *want = malloc((size_t)n * 8),
            *got = malloc((size_t)n * 8);
    assert_true(in && want && got);
    void *d_in, *d_out;
    CU(cudaMalloc(&d_in, (size_t)n * 4));
    CU(cudaMalloc(&d_out, (size_t)n * 8 + 8));
    uint64_t seed = 7;
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        int wide = pairs[p][0], width = pairs[p][1];
        for (size_t k = 0; k < sizeof bases / sizeof bases[0]; k++) {
            for (int64_t i = 0; i < n * width; i++)
                in[i] = (uint8_t)rng(&seed);
            memset(in, 0xff, (size_t)width); /* the largest offset, first */
            uint64_t step = steps[k % (sizeof steps / sizeof steps[0])];
            sl__narrow_decode(in, width, n, bases[k], step, wide, want);
            CU(cudaMemcpy(d_in, in, (size_t)(n * width), cudaMemcpyHostToDevice));
            CU(cudaMemset(d_out, 0xab, (size_t)n * 8 + 8));
            CU(sl__cuda_widen(d_out, wide, d_in, width, bases[k], step, n, 0));
            CU(cudaMemcpy(got, d_out, (size_t)(n * wide) + 8, cudaMemcpyDeviceToHost));
            if (memcmp(want, got, (size_t)(n * wide)))
                fail_msg("wide %d width %d base %lld step %llu: the GPU's values differ", wide,
                         width, (long long)bases[k], (unsigned long long)step);
            for (int j = 0; j < 8; j++) /* nothing written past the n values */
                assert_int_equal(got[n * wide + j], 0xab);
        }
    }
    CU(sl__cuda_widen(d_out, 8, d_in, 1, 0, 1, 0, 0)); /* nothing to do */
    assert_int_equal(sl__cuda_widen(d_out, 4, d_in, 4, 0, 1, 10, 0), cudaErrorInvalidValue);
    assert_int_equal(sl__cuda_widen(d_out, 2, d_in, 2, 0, 1, 10, 0), cudaErrorInvalidValue);
    assert_int_equal(sl__cuda_widen(d_out, 2, d_in, 3, 0, 1, 10, 0), cudaErrorInvalidValue);
    CU(cudaFree(d_in));
    CU(cudaFree(d_out));
    free(in);
    free(want);
    free(got);
}

/* Columns: what each narrows to (0: no copy). */
enum { C_ID, C_I16, C_U16, C_I32, C_U32, C_BIG, C_TS, C_DATE, C_DEC, C_DICT, C_F64, C_NUL,
       C_CONST, C_QTY, N_COLS };
static const char *col_names[N_COLS] = {"id", "i16", "u16", "i32", "u32", "big", "ts",
                                        "d", "dec", "dict", "f", "nul", "one", "qty"};
static const int col_width[N_COLS] = {3, 1, 1, 2, 0, 0, 4, 2, 2, 1, 0, 3, 1, 1};

/* Rows [first, first + n) of the table; `first` makes values differ between batches. */
static sl_batch_t *narrow_batch(int64_t first, int64_t n)
{
    enum sl_type types[N_COLS] = {SL_TYPE_INT64, SL_TYPE_INT16, SL_TYPE_UINT16, SL_TYPE_INT32,
                                  SL_TYPE_UINT32, SL_TYPE_INT64, SL_TYPE_TIMESTAMP,
                                  SL_TYPE_DATE32, sl_type_decimal(15, 2), SL_TYPE_DICT,
                                  SL_TYPE_FLOAT64, SL_TYPE_INT64, SL_TYPE_INT64,
                                  sl_type_decimal(15, 2)};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, N_COLS, col_names, types, n));
    int64_t *id = sl_batch_column_data(b, C_ID), *big = sl_batch_column_data(b, C_BIG);
    int16_t *i16 = sl_batch_column_data(b, C_I16);
    uint16_t *u16 = sl_batch_column_data(b, C_U16);
    int32_t *i32 = sl_batch_column_data(b, C_I32), *d = sl_batch_column_data(b, C_DATE);
    uint32_t *u32 = sl_batch_column_data(b, C_U32);
    int64_t *ts = sl_batch_column_data(b, C_TS), *dec = sl_batch_column_data(b, C_DEC);
    int32_t *dict = sl_batch_column_data(b, C_DICT);
    double *f = sl_batch_column_data(b, C_F64);
    int64_t *nul = sl_batch_column_data(b, C_NUL), *one = sl_batch_column_data(b, C_CONST);
    int64_t *qty = sl_batch_column_data(b, C_QTY);
    uint8_t *valid = sl_batch_column_validity(b, C_NUL);
    uint64_t seed = (uint64_t)first + 1;
    for (int64_t i = 0; i < n; i++) {
        int64_t r = first + i;
        uint64_t x = rng(&seed);
        id[i] = r;                                          /* 1.2M rows: 3 bytes */
        i16[i] = (int16_t)(INT16_MIN + (int)(x % 256));     /* a byte's range at the minimum */
        u16[i] = (uint16_t)(UINT16_MAX - (x >> 8) % 200);   /* negative as int16 bits */
        i32[i] = -40000 + (int32_t)((x >> 16) % 60000);     /* two bytes, negative */
        u32[i] = (uint32_t)(x >> 20);                       /* all 32 bits: no copy as int32 */
        big[i] = (int64_t)x;                                /* all 64 bits: none */
        ts[i] = (int64_t)1700000000000000ll + (int64_t)((x >> 8) % 4000000000ull);
        d[i] = 8035 + (int32_t)((x >> 24) % 2526);          /* 1992-01-01 .. 1998-12-01 */
        dec[i] = 100 + (int64_t)((x >> 32) % 4901);         /* 1.00 .. 50.00 by 0.01 */
        dict[i] = (int32_t)((x >> 40) % 3);
        f[i] = (double)(x >> 11) * 0x1p-53;
        nul[i] = (x >> 50) % 2 ? INT64_MIN / 2 + (int64_t)(x % 100000) : INT64_MIN / 2;
        if (x % 7 == 0)
            valid[i >> 3] &= (uint8_t) ~(1u << (i & 7)); /* null; its slot keeps a value */
        one[i] = -9;
        qty[i] = 100 * (1 + (int64_t)((x >> 44) % 50)); /* l_quantity: a byte of steps of 100 */
    }
    /* u32 as signed 32-bit bits spans the whole range only with both signs present */
    if (n >= 2)
        u32[0] = 0, u32[1] = UINT32_MAX;
    static const int32_t offs[] = {0, 1, 2, 5};
    SL_ASSERT_OK(sl_batch_column_set_dictionary(b, C_DICT, 3, offs, "RANxy"));
    return b;
}

static sl_table_t *narrow_table(void)
{
    /* small batches combined by the pin (one run, dictionaries merged), a large one alone */
    static const int64_t sizes[] = {70000, 1, 0, 45000, 1200000};
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    int64_t first = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        sl_batch_t *b = narrow_batch(first, sizes[k]);
        first += sizes[k];
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
    }
    return t;
}

static sl_engine_t *narrow_engine(enum sl_placement pl, bool wide)
{
    struct sl_engine_config cfg;
    gpu_test_config(&cfg, pl, 0);
    cfg.morsel_rows_cpu = 8192;
    cfg.morsel_rows_gpu = 30003; /* slices at offsets not a multiple of 8: bitmaps lead */
    cfg.debug_gpu_wide_upload = wide;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    return e;
}

/* table -> filter(where) on e: the result in host memory, where the filter ran and the
 * bytes the query uploaded. */
static sl_table_t *filter_on(sl_engine_t *e, sl_table_t *in, const char *where, int *mask,
                             int64_t *h2d)
{
    int rc;
    char msg[200];
    sl_table_t *r = op_on_h2d(e, in, "filter", "where", where, &rc, mask, msg, sizeof msg, h2d);
    if (rc != SL_OK)
        fail_msg("filter %s: %s", where, msg);
    return r;
}

SL_TEST(pinned_table_uploads_narrow)
{
    NEED_GPU();
    sl_table_t *t = narrow_table();
    SL_ASSERT_OK(sl_table_pin(t));
    assert_int_equal(sl_table_num_batches(t), 2);
    int64_t rows = sl_table_num_rows(t), narrow_row = 0, wide_row = 0;
    for (int64_t k = 0; k < sl_table_num_batches(t); k++) {
        sl_batch_t *b = sl_table_batch(t, k);
        for (int c = 0; c < N_COLS; c++) {
            const struct sl__narrow *nw = b->cols[c].data->narrow;
            int got = nw ? nw->width : 0;
            if (got != col_width[c])
                fail_msg("batch %lld column %s: narrow width %d, want %d", (long long)k,
                         col_names[c], got, col_width[c]);
            if (nw) {
                assert_int_equal(nw->step, c == C_QTY ? 100 : 1);
                assert_int_equal(nw->buf->kind, SL__MEM_PINNED);
                assert_int_equal(nw->n, sl_batch_num_rows(b));
            }
            if (k == 0) {
                int w = (int)sl_type_width(b->cols[c].type);
                narrow_row += got ? got : w;
                wide_row += w;
            }
        }
    }
    sl_engine_t *cpu = narrow_engine(SL_PLACE_CPU, false);
    sl_engine_t *gpu = narrow_engine(SL_PLACE_GPU, false);
    sl_engine_t *gpu_wide = narrow_engine(SL_PLACE_GPU, true);
    /* every row, then a third: each column's values through the filter's gather */
    static const char *wheres[] = {"id >= 0", "id % 3 = 1 OR i32 < -39000"};
    for (size_t k = 0; k < sizeof wheres / sizeof wheres[0]; k++) {
        int m_cpu, m, m_wide;
        int64_t h_cpu, h, h_wide, n = 0;
        sl_table_t *want = filter_on(cpu, t, wheres[k], &m_cpu, &h_cpu);
        sl_table_t *want2 = filter_on(cpu, t, wheres[k], &m_cpu, &h_cpu);
        sl_table_t *got = filter_on(gpu, t, wheres[k], &m, &h);
        sl_table_t *got_wide = filter_on(gpu_wide, t, wheres[k], &m_wide, &h_wide);
        print_message("%s: %lld bytes up narrow, %lld wide (%lld rows; %lld and %lld bytes "
                      "a row)\n", wheres[k], (long long)h, (long long)h_wide, (long long)rows,
                      (long long)narrow_row, (long long)wide_row);
        same_outcome(wheres[k], want, SL_OK, "", got, SL_OK, "", m, true, &n);
        same_outcome(wheres[k], want2, SL_OK, "", got_wide, SL_OK, "", m_wide, true, &n);
        if (k == 0)
            assert_int_equal(n, 2 * rows);
        /* the columns' values (a bitmap's byte more per morsel), nothing more */
        assert_true(h_wide >= rows * wide_row);
        assert_true(h >= rows * narrow_row && h <= rows * narrow_row + rows / 8 + 64 * 1024);
        assert_true(h < h_wide);
    }
    sl_engine_close(cpu);
    sl_engine_close(gpu);
    sl_engine_close(gpu_wide);
    sl_table_unref(t);
}

/* Two scans of the pinned table in one query, each into a GPU filter, on e: outputs r
 * and r2 in host memory, where the filters ran, and the query's replica hits. */
static void two_filters(sl_engine_t *e, sl_table_t *t, sl_table_t **r, sl_table_t **r2,
                        int *m1, int *m2, int64_t *hits)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int s1, s2, f1, f2;
    SL_ASSERT_OK(sl_plan_add_table(p, t, &s1));
    SL_ASSERT_OK(sl_plan_add_table(p, t, &s2));
    SL_ASSERT_OK(sl_plan_add(p, "filter", &s1, 1, "where=\"id % 2 = 0\"", &f1));
    SL_ASSERT_OK(sl_plan_add(p, "filter", &s2, 1, "where=\"dec > 20.5 AND d < DATE '1995-01-01'\"", &f2));
    SL_ASSERT_OK(sl_plan_output(p, f1, "r"));
    SL_ASSERT_OK(sl_plan_output(p, f2, "r2"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    SL_ASSERT_OK(sl_query_run(q));
    *m1 = atomic_load(&q->ops[f1].device_mask);
    *m2 = atomic_load(&q->ops[f2].device_mask);
    *hits = atomic_load(&q->replica_hits);
    sl_table_t *x;
    *r = result_on_host(q);
    SL_ASSERT_OK(sl_query_result(q, "r2", &x));
    SL_ASSERT_OK(sl_table_to_host(x, r2));
    sl_table_unref(x);
    sl_query_destroy(q);
    sl_plan_destroy(p);
}

/* Morsels of whole batches: a column's device copy (replica) serves the second scan, and
 * it is complete only once widened, which the second filter waits for: the same rows as
 * the CPU's. */
SL_TEST(pinned_replicas_wait_for_widening)
{
    NEED_GPU();
    sl_table_t *t = narrow_table();
    SL_ASSERT_OK(sl_table_pin(t));
    struct sl_engine_config cfg;
    gpu_test_config(&cfg, SL_PLACE_CPU, 0);
    sl_engine_t *cpu;
    SL_ASSERT_OK(sl_test_engine_open(&cpu, &cfg));
    sl_engine_t *gpu = gpu_test_engine(SL_PLACE_GPU, 0);
    for (int rep = 0; rep < 3; rep++) {
        sl_table_t *w1, *w2, *g1, *g2;
        int m1, m2, c1, c2;
        int64_t hits, cpu_hits, n = 0;
        two_filters(cpu, t, &w1, &w2, &c1, &c2, &cpu_hits);
        two_filters(gpu, t, &g1, &g2, &m1, &m2, &hits);
        print_message("replica hits: %lld\n", (long long)hits);
        assert_true(hits > 0);
        same_outcome("id % 2 = 0", w1, SL_OK, "", g1, SL_OK, "", m1, true, &n);
        same_outcome("dec > 20.5 AND d < DATE '1995-01-01'", w2, SL_OK, "", g2, SL_OK, "", m2, true, &n);
    }
    sl_engine_close(cpu);
    sl_engine_close(gpu);
    sl_table_unref(t);
}
