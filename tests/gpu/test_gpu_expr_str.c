/* Tests string predicates in the GPU filter (operators/expr/expr_cuda.c, the program of
 * sluice_k/expr_prog.h, the string gather of operators/common/str_cuda.c) against the
 * CPU engine: random predicates (expr_str_input.h: comparisons, IN, LIKE / NOT LIKE with
 * '%', '_' and '%a%b%', bytes >= 0x80, IS NULL, LENGTH, CASE and COALESCE of strings)
 * over utf8 and large_utf8 columns of 0..60 bytes with empty strings and nulls, in
 * batches of many rows, one row and none, GPU-resident; the kept rows compared as
 * multisets of whole rows, strings and nulls included; the filter must have run on the
 * GPU. Also: predicates that keep every row and none; TPC-H's '%special%requests%';
 * string predicates computed by project; host-resident input, uploaded strings and all;
 * and a selection from host batches, which stays on the host so that only the columns
 * selected go up. Skipped without a GPU. */
#include <stdlib.h>

#include "gpu_expr_util.h"
#include "gpu_test.h"

#include "../unit/expr/expr_str_input.h"

/* The rows the CPU's filter (project: `project`) gives from `host` equal those the GPU
 * engine's give from `dev`, and the GPU ran it exactly when gpu_ran. Returns the rows. */
static int64_t same_rows(sl_engine_t *cpu, sl_engine_t *gpu, sl_table_t *host, sl_table_t *dev,
                         bool project, const char *text, bool gpu_ran)
{
    const char *op = project ? "project" : "filter", *opt = project ? "columns" : "where";
    int rc1, rc2, m1 = 0, m2 = 0;
    char msg1[400], msg2[400];
    sl_table_t *want = op_on(cpu, host, op, opt, text, &rc1, &m1, msg1, sizeof msg1);
    sl_table_t *got = op_on(gpu, dev, op, opt, text, &rc2, &m2, msg2, sizeof msg2);
    if (rc1 != SL_OK)
        fail_msg("%s: %s", text, msg1);
    int64_t rows = 0;
    same_outcome(text, want, rc1, msg1, got, rc2, msg2, m2, gpu_ran, &rows);
    return rows;
}

SL_TEST(random_string_filters_match_the_cpu)
{
    NEED_GPU();
    sl_engine_t *cpu = engine(SL_PLACE_CPU, 0), *gpu = engine(SL_PLACE_GPU, -1);
    sl_table_t *host = batches_table(xs_batch, 11), *dev;
    SL_ASSERT_OK(sl_table_to_device(gpu, host, 0, &dev));
    int64_t total = sl_table_num_rows(host), kept = 0;
    int n = 150, none = 0, all = 0;
    uint64_t seed = 777;
    for (int k = 0; k < n; k++) {
        char where[512];
        xs_predicate(&seed, where, 2);
        int64_t m = same_rows(cpu, gpu, host, dev, false, where, true);
        none += m == 0;
        all += m == total;
        kept += m;
    }
    print_message("%d random string predicates equal on the GPU and the CPU (%lld of %lld rows "
                  "kept in all; %d keep none, %d keep all)\n", n, (long long)kept,
                  (long long)total * n, none, all);
    assert_true(kept > 0 && none > 0);
    sl_table_unref(dev);
    sl_table_unref(host);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

/* Every row kept, none kept, TPC-H Q13's pattern, and a few more (a short case, for
 * compute-sanitizer). */
SL_TEST(fixed_string_filters_match_the_cpu)
{
    NEED_GPU();
    sl_engine_t *cpu = engine(SL_PLACE_CPU, 0), *gpu = engine(SL_PLACE_GPU, -1);
    sl_table_t *host = batches_table(xs_batch, 11), *dev;
    SL_ASSERT_OK(sl_table_to_device(gpu, host, 0, &dev));
    static const char *const fixed[] = {
        "s IS NULL OR s IS NOT NULL", "s = 'no such string'", "s LIKE '%a%b%' OR ls NOT LIKE 'a%'",
        "t NOT LIKE '%special%requests%'", "ls LIKE '%\xc3\xa9_%' AND LENGTH(t) > 3",
    };
    int64_t kept[5];
    for (size_t k = 0; k < 5; k++)
        kept[k] = same_rows(cpu, gpu, host, dev, false, fixed[k], true);
    assert_int_equal(kept[0], sl_table_num_rows(host));
    assert_int_equal(kept[1], 0);
    assert_true(kept[2] > 0 && kept[3] > 0 && kept[4] > 0);
    sl_table_unref(dev);
    sl_table_unref(host);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

/* project computes string predicates on the GPU too (Q13's "keep = o_comment NOT LIKE
 * ..."), string columns passed on as they are. */
SL_TEST(string_predicates_project_like_the_cpu)
{
    NEED_GPU();
    sl_engine_t *cpu = engine(SL_PLACE_CPU, 0), *gpu = engine(SL_PLACE_GPU, -1);
    sl_table_t *host = batches_table(xs_batch, 11), *dev;
    SL_ASSERT_OK(sl_table_to_device(gpu, host, 0, &dev));
    uint64_t seed = 4242;
    for (int k = 0; k < 30; k++) {
        char where[512], cols[600];
        xs_predicate(&seed, where, 1);
        snprintf(cols, sizeof cols, "s, ls, v = %s, n = LENGTH(t)", where);
        assert_int_equal(same_rows(cpu, gpu, host, dev, true, cols, true), 115001);
    }
    sl_table_unref(dev);
    sl_table_unref(host);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

/* Under GPU placement, batches with strings in host memory are uploaded, strings too, and
 * filtered (projected) on the GPU: a host stage of a GPU task runs on one thread. */
SL_TEST(host_strings_go_to_the_gpu)
{
    NEED_GPU();
    sl_engine_t *cpu = engine(SL_PLACE_CPU, 0), *gpu = engine(SL_PLACE_GPU, -1);
    sl_table_t *host = batches_table(xs_batch, 11);
    int64_t kept = same_rows(cpu, gpu, host, host, false, "s LIKE '%a%' AND k > 0", true);
    assert_true(kept > 0);
    same_rows(cpu, gpu, host, host, true, "k, v = s LIKE '%a%'", true);
    sl_table_unref(host);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

/* table -> project(columns) -> filter(where) on e: the result in host memory, where each
 * operator ran (*pm, *fm: 1 CPU, 2 GPU) and the bytes the query uploaded. */
static sl_table_t *select_filter(sl_engine_t *e, sl_table_t *in, const char *columns,
                                 const char *where, int *pm, int *fm, int64_t *h2d)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int s, pr, f;
    char opt[300];
    SL_ASSERT_OK(sl_plan_add_table(p, in, &s));
    snprintf(opt, sizeof opt, "columns=\"%s\"", columns);
    SL_ASSERT_OK(sl_plan_add(p, "project", &s, 1, opt, &pr));
    snprintf(opt, sizeof opt, "where=\"%s\"", where);
    SL_ASSERT_OK(sl_plan_add(p, "filter", &pr, 1, opt, &f));
    SL_ASSERT_OK(sl_plan_output(p, f, "r"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    SL_ASSERT_OK(sl_query_run(q));
    *pm = atomic_load(&q->ops[pr].device_mask);
    *fm = atomic_load(&q->ops[f].device_mask);
    const struct sl_explain *ex;
    SL_ASSERT_OK(sl_query_explain(q, &ex));
    *h2d = ex->bytes_h2d_measured;
    sl_table_t *host = result_on_host(q);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return host;
}

/* A project that only selects columns of a host batch (TPC-H's first step over every
 * table) runs on the host, so the GPU filter after it uploads those columns alone, not
 * the table's other strings: pinned and pageable input, the same rows as the CPU. */
SL_TEST(host_selection_uploads_only_its_columns)
{
    NEED_GPU();
    sl_engine_t *cpu = engine(SL_PLACE_CPU, 0), *gpu = engine(SL_PLACE_GPU, -1);
    for (int pinned = 0; pinned < 2; pinned++) {
        sl_table_t *host = batches_table(xs_batch, 11 + pinned);
        if (pinned)
            SL_ASSERT_OK(sl_table_pin(host));
        int64_t n = sl_table_num_rows(host), all = 0, rows = 0, h2d, h2d_cpu;
        for (int64_t i = 0; i < sl_table_num_batches(host); i++)
            all += sl__batch_bytes(sl_table_batch(host, i));
        int pm, fm, pm_cpu, fm_cpu;
        sl_table_t *want = select_filter(cpu, host, "k, kk = k", "k > 2", &pm_cpu, &fm_cpu,
                                         &h2d_cpu);
        sl_table_t *got = select_filter(gpu, host, "k, kk = k", "k > 2", &pm, &fm, &h2d);
        print_message("pinned %d: project on %d, filter on %d, %lld bytes up for %lld rows "
                      "(%lld in the table)\n", pinned, pm, fm, (long long)h2d, (long long)n,
                      (long long)all);
        assert_int_equal(pm, 1);
        same_outcome("k > 2 after a selection", want, SL_OK, "", got, SL_OK, "", fm, true,
                     &rows);
        assert_true(rows > 0 && rows < n);
        /* two int32 columns sharing one buffer: at most 8 bytes a row, far below the
         * strings' (about 3 x 34 bytes a row) */
        assert_true(h2d > 0 && h2d <= n * 8 + 4096);
        /* one string column of three selected: it goes up, the others stay */
        want = select_filter(cpu, host, "k, s", "s LIKE '%a%'", &pm_cpu, &fm_cpu, &h2d_cpu);
        got = select_filter(gpu, host, "k, s", "s LIKE '%a%'", &pm, &fm, &h2d);
        print_message("with s: %lld bytes up\n", (long long)h2d);
        assert_int_equal(pm, 1);
        assert_true(h2d > n * 8 && h2d * 2 < all);
        same_outcome("s LIKE '%a%' after a selection", want, SL_OK, "", got, SL_OK, "", fm,
                     true, &rows);
        sl_table_unref(host);
    }
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}
