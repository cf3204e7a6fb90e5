/* Shared by the GPU join operator tests (test_gpu_join_op.c, test_gpu_join_ooc.c,
 * test_gpu_join_late.c, ...): a join's result as a row multiset fingerprint, one join
 * run through a plan, and the same join compared on a CPU and a GPU engine. */
#ifndef SLUICE_TESTS_JOIN_TEST_H
#define SLUICE_TESTS_JOIN_TEST_H

#include <string.h>

#include "exec_int.h"
#include "gpu_test.h"
#include "sl_test.h"

/* Rows as a multiset: count and the sum of a hash of each row (nulls hash apart). */
struct fp {
    int64_t rows;
    uint64_t hash;
    uint64_t col[16]; /* each of the first 16 columns alone, as a multiset (diagnostics) */
};

static struct fp fingerprint(sl_table_t *t)
{
    struct fp f = {0, 0, {0}};
    for (int64_t bi = 0; bi < sl_table_num_batches(t); bi++) {
        sl_batch_t *b = sl_table_batch(t, bi);
        int nc = sl_batch_num_columns(b);
        for (int64_t r = 0; r < sl_batch_num_rows(b); r++) {
            uint64_t h = 0x243F6A8885A308D3ull;
            for (int c = 0; c < nc; c++) {
                struct sl_column col;
                sl_batch_column(b, c, &col);
                int64_t i = col.offset + r;
                uint64_t v;
                struct sl_strings str;
                if (col.validity && !(col.validity[i / 8] >> (i % 8) & 1))
                    v = 0xDEADBEEFCAFEull;
                else if (col.type == SL_TYPE_UTF8 || col.type == SL_TYPE_LARGE_UTF8) {
                    SL_ASSERT_OK(sl_batch_column_strings(b, c, &str));
                    int64_t lo, hi;
                    if (col.type == SL_TYPE_UTF8) {
                        lo = ((const int32_t *)col.data)[i];
                        hi = ((const int32_t *)col.data)[i + 1];
                    } else {
                        lo = ((const int64_t *)col.data)[i];
                        hi = ((const int64_t *)col.data)[i + 1];
                    }
                    v = 0xcbf29ce484222325ull ^ (uint64_t)(hi - lo); /* as DICT's, plus length */
                    for (int64_t k = lo; k < hi; k++)
                        v = (v ^ (uint8_t)str.chars[k]) * 0x100000001b3ull;
                } else if (col.type == SL_TYPE_DICT) { /* the string, not its code */
                    SL_ASSERT_OK(sl_batch_column_strings(b, c, &str));
                    int32_t code = ((const int32_t *)col.data)[i];
                    assert_true(code >= 0 && code < str.dict_length);
                    v = 0xcbf29ce484222325ull;
                    for (int32_t k = str.dict_offsets[code]; k < str.dict_offsets[code + 1]; k++)
                        v = (v ^ (uint8_t)str.dict_chars[k]) * 0x100000001b3ull;
                } else if (sl_type_width(col.type) == 16) { /* decimal128: both words */
                    uint64_t w[2];
                    memcpy(w, (const char *)col.data + i * 16, 16);
                    v = w[0] ^ (w[1] * 0xC2B2AE3D27D4EB4Full);
                } else if (sl_type_width(col.type) == 8)
                    memcpy(&v, (const char *)col.data + i * 8, 8);
                else if (sl_type_width(col.type) == 2)
                    v = (uint64_t)(int64_t)((const int16_t *)col.data)[i];
                else if (sl_type_width(col.type) == 1)
                    v = ((const uint8_t *)col.data)[i];
                else
                    v = (uint64_t)(int64_t)((const int32_t *)col.data)[i];
                h = (h ^ v) * 0x9E3779B97F4A7C15ull;
                h ^= h >> 31;
                if (c < 16)
                    f.col[c] += (v ^ (v >> 29)) * 0xBF58476D1CE4E5B9ull;
            }
            f.rows++;
            f.hash += h;
        }
    }
    return f;
}

/* The profile of the last query run() ran (the GPU join's choices are in its "values"). */
static char last_profile[16384];

/* Runs left JOIN right with `opts`, the left side through a filter `where` first (NULL:
 * none), and returns the result's fingerprint; *on_gpu says whether the join finalized
 * on the GPU. */
/* run_where with the filter forced to the CPU when filter_on_cpu (a left side that
 * reaches the join in host memory). */
static struct fp run_where_placed(sl_engine_t *e, sl_table_t *l, sl_table_t *r,
                                  const char *where, bool filter_on_cpu, const char *opts,
                                  int output_device, int *on_gpu)
{
    sl_plan_t *p;
    int nl, nr, nf, nj;
    SL_ASSERT_OK(sl_plan_create(&p));
    SL_ASSERT_OK(sl_plan_add_table(p, l, &nl));
    SL_ASSERT_OK(sl_plan_add_table(p, r, &nr));
    if (where) {
        char fo[256];
        snprintf(fo, sizeof fo, "where=\"%s\"", where);
        SL_ASSERT_OK(sl_plan_add(p, "filter", &nl, 1, fo, &nf));
        if (filter_on_cpu)
            SL_ASSERT_OK(sl_plan_place(p, nf, SL_PLACE_CPU));
        nl = nf;
    }
    SL_ASSERT_OK(sl_plan_add(p, "join", (int[]){nl, nr}, 2, opts, &nj));
    SL_ASSERT_OK(output_device ? sl_plan_output_device(p, nj, "o") : sl_plan_output(p, nj, "o"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    int rc = sl_query_run(q);
    if (rc != SL_OK)
        fail_msg("query failed: %s", sl_query_errmsg(q));
    if (on_gpu)
        *on_gpu = q->ops[nj].home_gpu >= 0;
    snprintf(last_profile, sizeof last_profile, "%s", sl_query_profile_json(q));
    sl_table_t *out, *host;
    SL_ASSERT_OK(sl_query_result(q, "o", &out));
    SL_ASSERT_OK(sl_table_to_host(out, &host));
    struct fp f = fingerprint(host);
    sl_table_unref(host);
    sl_table_unref(out);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return f;
}

static struct fp run_where(sl_engine_t *e, sl_table_t *l, sl_table_t *r, const char *where,
                           const char *opts, int output_device, int *on_gpu)
{
    return run_where_placed(e, l, r, where, false, opts, output_device, on_gpu);
}

static struct fp run(sl_engine_t *e, sl_table_t *l, sl_table_t *r, const char *opts,
                     int output_device, int *on_gpu)
{
    return run_where(e, l, r, NULL, opts, output_device, on_gpu);
}

/* The join on the CPU engine (*want: inputs and output on the host) and on the GPU engine
 * (*got, *on_gpu: inputs uploaded first with in_dev, the output left on the GPU with
 * out_dev). */
static inline void join_both(sl_engine_t *cpu, sl_engine_t *gpu, sl_table_t *l, sl_table_t *r,
                             const char *opts, int in_dev, int out_dev, struct fp *want,
                             struct fp *got, int *on_gpu)
{
    *want = run(cpu, l, r, opts, 0, NULL);
    sl_table_t *gl = l, *gr = r;
    if (in_dev) {
        SL_ASSERT_OK(sl_table_to_device(gpu, l, 0, &gl));
        SL_ASSERT_OK(sl_table_to_device(gpu, r, 0, &gr));
    }
    *on_gpu = -1;
    *got = run(gpu, gl, gr, opts, out_dev, on_gpu);
    if (in_dev) {
        sl_table_unref(gl);
        sl_table_unref(gr);
    }
}

/* The join on the CPU engine and on the GPU engine (inputs on the host, or GPU-resident
 * with the output left on the GPU), compared as row multisets; expect_gpu: whether the
 * GPU must have finalized it. */
static inline void join_check_on(sl_engine_t *cpu, sl_engine_t *gpu, sl_table_t *l,
                                 sl_table_t *r, const char *opts, int expect_gpu, int resident)
{
    struct fp want, got;
    int on_gpu;
    join_both(cpu, gpu, l, r, opts, resident, resident, &want, &got, &on_gpu);
    if (got.rows != want.rows || got.hash != want.hash || on_gpu != expect_gpu)
        printf("MISMATCH %s (resident %d): cpu %lld rows, gpu %lld rows, on the GPU: %d\n",
               opts, resident, (long long)want.rows, (long long)got.rows, on_gpu);
    assert_int_equal(got.rows, want.rows);
    assert_true(got.hash == want.hash);
    assert_int_equal(on_gpu, expect_gpu);
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    sl_engine_mem_stats(gpu, &ms);
    assert_int_equal(ms.gpu_in_use, 0);
}

#endif /* SLUICE_TESTS_JOIN_TEST_H */
