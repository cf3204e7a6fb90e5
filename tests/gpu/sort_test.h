/* Shared by the GPU tests of the sort family (test_gpu_sort_op.c, test_gpu_sort_types.c):
 * a result as one 64-bit word per value, an engine with a placement and GPU budget, one
 * operator run through a plan, and the comparison of a GPU run with the CPU's, row for
 * row (sort, partition and merge are stable, so the outputs must be identical). */
#ifndef SLUICE_TESTS_SORT_TEST_H
#define SLUICE_TESTS_SORT_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/materialize.h"
#include "exec_int.h"
#include "gpu_test.h"
#include "sl_test.h"

/* A table's rows as one 64-bit word per value, in order: the value's bytes
 * zero-extended, a DICT value's string hashed (FNV-1a: strings compare, not codes), a
 * 16-byte decimal's two words mixed, a null as a marker. */
struct flat {
    int64_t rows;
    int cols;
    uint64_t *v; /* cols x rows */
};

static uint64_t flat_fnv(const char *chars, const int32_t *offsets, int32_t code)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int32_t k = offsets[code]; k < offsets[code + 1]; k++)
        h = (h ^ (uint8_t)chars[k]) * 0x100000001b3ull;
    return h;
}

static struct flat flatten(sl_table_t *t)
{
    struct flat f = {sl_table_num_rows(t), 0, NULL};
    int64_t at = 0;
    for (int64_t bi = 0; bi < sl_table_num_batches(t); bi++) {
        sl_batch_t *b = sl_table_batch(t, bi);
        if (!f.v) {
            f.cols = sl_batch_num_columns(b);
            f.v = calloc((size_t)(f.rows * f.cols + 1), 8);
            assert_non_null(f.v);
        }
        for (int c = 0; c < f.cols; c++) {
            struct sl_column col;
            sl_batch_column(b, c, &col);
            size_t w = sl_type_width(col.type);
            struct sl_strings str = {0};
            if (col.type == SL_TYPE_DICT)
                SL_ASSERT_OK(sl_batch_column_strings(b, c, &str));
            for (int64_t r = 0; r < col.length; r++) {
                int64_t i = col.offset + r;
                const uint64_t *words = (const uint64_t *)col.data + 2 * i;
                uint64_t v = 0;
                if (col.validity && !(col.validity[i / 8] >> (i % 8) & 1))
                    v = 0xDEADBEEFCAFEull;
                else if (col.type == SL_TYPE_DICT)
                    v = flat_fnv(str.dict_chars, str.dict_offsets, ((const int32_t *)col.data)[i]);
                else if (w == 16)
                    v = words[0] * 31 + words[1];
                else
                    memcpy(&v, (const char *)col.data + (size_t)i * w, w);
                f.v[(size_t)c * (size_t)f.rows + (size_t)(at + r)] = v;
            }
        }
        at += sl_batch_num_rows(b);
    }
    return f;
}

/* Plans `op` (sort, partition or merge) with `opts` over the tables `in`. */
static sl_query_t *query(sl_engine_t *e, sl_table_t **in, int n_in, const char *op,
                         const char *opts, int output_device, sl_plan_t **pp, int *node)
{
    sl_plan_t *p;
    int ni[2];
    SL_ASSERT_OK(sl_plan_create(&p));
    for (int i = 0; i < n_in; i++)
        SL_ASSERT_OK(sl_plan_add_table(p, in[i], &ni[i]));
    SL_ASSERT_OK(sl_plan_add(p, op, ni, n_in, opts, node));
    SL_ASSERT_OK(output_device ? sl_plan_output_device(p, *node, "o")
                               : sl_plan_output(p, *node, "o"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    *pp = p;
    return q;
}

/* The result "o" of the query that ran, flattened; destroys the query and its plan. */
static struct flat result_flat(sl_query_t *q, sl_plan_t *p)
{
    sl_table_t *out, *host;
    SL_ASSERT_OK(sl_query_result(q, "o", &out));
    SL_ASSERT_OK(sl_table_to_host(out, &host));
    struct flat f = flatten(host);
    sl_table_unref(host);
    sl_table_unref(out);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return f;
}

/* Runs `op` with `opts` on the tables `in`; *on_gpu (if not NULL): whether the GPU
 * finalized it. */
static struct flat run(sl_engine_t *e, sl_table_t **in, int n_in, const char *op,
                       const char *opts, int output_device, int *on_gpu)
{
    sl_plan_t *p;
    int ns;
    sl_query_t *q = query(e, in, n_in, op, opts, output_device, &p, &ns);
    if (sl_query_run(q) != SL_OK)
        fail_msg("%s %s: query failed: %s", op, opts, sl_query_errmsg(q));
    const void *gs = q->ops[ns].gstate;
    if (on_gpu)
        *on_gpu = ((const struct sl__mat *)gs)->gpu; /* each global state starts with one */
    return result_flat(q, p);
}

/* `op` on the CPU engine and on the GPU engine (host inputs, then, unless host_only,
 * GPU-resident inputs with the output left on the GPU), compared row for row; the GPU
 * must have finalized it iff expect_gpu, and given every device block back. `what`
 * names the case in the log. */
static __attribute__((unused)) void
check_tables(sl_table_t **in, int n_in, const char *op, const char *opts, int expect_gpu,
             int64_t gpu_mem, int host_only, const char *what)
{
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0), *gpu = gpu_test_engine(SL_PLACE_GPU, gpu_mem);
    struct flat want = run(cpu, in, n_in, op, opts, 0, NULL);
    int64_t rows = 0;
    for (int i = 0; i < n_in; i++)
        rows += sl_table_num_rows(in[i]);
    assert_int_equal(want.rows, rows);
    for (int resident = 0; resident < 2 - host_only; resident++) {
        sl_table_t *gin[2] = {in[0], n_in > 1 ? in[1] : NULL};
        for (int i = 0; i < n_in && resident; i++)
            SL_ASSERT_OK(sl_table_to_device(gpu, in[i], 0, &gin[i]));
        int on_gpu = -1;
        struct flat got = run(gpu, gin, n_in, op, opts, resident, &on_gpu);
        for (int i = 0; i < n_in && resident; i++)
            sl_table_unref(gin[i]);
        int64_t bad = -1;
        for (int64_t i = 0; got.rows == want.rows && i < want.rows * want.cols && bad < 0; i++)
            if (got.v[i] != want.v[i])
                bad = i;
        printf("%s %s, %s, resident %d: cpu %lld rows, gpu %lld rows, on the GPU: %d%s\n", op,
               opts, what, resident, (long long)want.rows, (long long)got.rows, on_gpu,
               bad >= 0 ? " MISMATCH" : "");
        if (bad >= 0)
            printf("  first difference: column %lld row %lld: cpu %llx gpu %llx\n",
                   (long long)(bad / want.rows), (long long)(bad % want.rows),
                   (unsigned long long)want.v[bad], (unsigned long long)got.v[bad]);
        assert_int_equal(got.rows, want.rows);
        assert_int_equal(got.cols, want.cols);
        assert_true(bad < 0);
        assert_int_equal(on_gpu, expect_gpu);
        free(got.v);
        struct sl_mem_stats ms = SL_MEM_STATS_INIT;
        sl_engine_mem_stats(gpu, &ms);
        assert_int_equal(ms.gpu_in_use, 0); /* every device block went back to the pool */
    }
    free(want.v);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

#endif /* SLUICE_TESTS_SORT_TEST_H */
