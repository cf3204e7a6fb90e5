/* Tests string predicates in the GPU filter (operators/expr/expr_cuda.c, the program of
 * sluice_k/expr_prog.h, the string gather of operators/common/str_cuda.c) against the
 * CPU engine: random predicates (expr_str_input.h: comparisons, IN, LIKE / NOT LIKE with
 * '%', '_' and '%a%b%', bytes >= 0x80, IS NULL, LENGTH, CASE and COALESCE of strings)
 * over utf8 and large_utf8 columns of 0..60 bytes with empty strings and nulls, in
 * batches of many rows, one row and none, GPU-resident; the kept rows compared as
 * multisets of whole rows, strings and nulls included; the filter must have run on the
 * GPU. Also: predicates that keep every row and none; TPC-H's '%special%requests%';
 * string predicates computed by project; and host-resident input, which the CPU takes
 * (strings are not uploaded just to be read). Skipped without a GPU. */
#include <stdlib.h>

#include "common/values.h"
#include "sluice_k/gen_math.h"
#include "exec_int.h"
#include "gpu_test.h"
#include "sl_test.h"

#include "../unit/expr/expr_str_input.h"

static sl_engine_t *engine(enum sl_placement pl, int gpus)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = 2;
    cfg.placement = pl;
    cfg.n_gpus = gpus;
    cfg.morsel_rows_cpu = 8192;
    cfg.morsel_rows_gpu = 30000;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    return e;
}

/* table -> filter(where=text) (project(columns=text) when `project`) on e: the result
 * in host memory, and where the operator ran (*mask: 1 CPU, 2 GPU). A failure fails the
 * test. */
static sl_table_t *op_on(sl_engine_t *e, sl_table_t *in, bool project, const char *text,
                         int *mask)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int s, o;
    char opts[700];
    snprintf(opts, sizeof opts, "%s=\"%s\"", project ? "columns" : "where", text);
    SL_ASSERT_OK(sl_plan_add_table(p, in, &s));
    if (sl_plan_add(p, project ? "project" : "filter", &s, 1, opts, &o) != SL_OK)
        fail_msg("%s: %s", text, sl_plan_errmsg(p));
    SL_ASSERT_OK(sl_plan_output(p, o, "r"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    if (sl_query_run(q) != SL_OK)
        fail_msg("%s: %s", text, sl_query_errmsg(q));
    *mask = atomic_load(&q->ops[o].device_mask);
    sl_table_t *r, *host;
    SL_ASSERT_OK(sl_query_result(q, "r", &r));
    SL_ASSERT_OK(sl_table_to_host(r, &host));
    sl_table_unref(r);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return host;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* A hash of every row (each column's value: string bytes, fixed-width bytes, or a NULL
 * marker),
 * sorted: equal arrays mean equal multisets of rows. Returns the row count. */
static int64_t row_hashes(sl_table_t *t, uint64_t **out)
{
    int64_t n = sl_table_num_rows(t), at = 0;
    uint64_t *h = calloc((size_t)n + 1, 8);
    for (int64_t k = 0; k < sl_table_num_batches(t); k++) {
        sl_batch_t *b = sl_table_batch(t, k);
        for (int64_t r = 0; r < sl_batch_num_rows(b); r++, at++) {
            uint64_t x = 0x12345;
            for (int c = 0; c < b->n_cols; c++) {
                struct sl__colview v;
                sl__colview_get(b, c, &v);
                uint64_t part = 0x6e756c6c;
                if (sl__colview_valid(&v, r)) {
                    int64_t len = (int64_t)sl_type_width(b->cols[c].type);
                    const char *p = sl_type_is_string(b->cols[c].type)
                                        ? sl__colview_str(&v, r, &len)
                                        : (const char *)sl__col_values(b, c) + r * len;
                    part = (uint64_t)len;
                    for (int64_t j = 0; j < len; j++)
                        part = part * 131 + (unsigned char)p[j] + 1;
                }
                x = sl__gen_mix64(x ^ (part + (uint64_t)c * 0x9e3779b97f4a7c15ull));
            }
            h[at] = x;
        }
    }
    qsort(h, (size_t)n, 8, cmp_u64);
    *out = h;
    return n;
}

/* The rows the CPU's filter (project) gives from `host` equal those the GPU engine's give
 * from `dev`, and the GPU ran it (gpu_ran; else the CPU must have). Returns the rows. */
static int64_t same_rows(sl_engine_t *cpu, sl_engine_t *gpu, sl_table_t *host, sl_table_t *dev,
                         bool project, const char *where, bool gpu_ran)
{
    int m1 = 0, m2 = 0;
    sl_table_t *want = op_on(cpu, host, project, where, &m1);
    sl_table_t *got = op_on(gpu, dev, project, where, &m2);
    if (gpu_ran != ((m2 & 2) != 0))
        fail_msg("%s: it ran on the %s", where, m2 & 2 ? "GPU" : "CPU");
    uint64_t *h1, *h2;
    int64_t n1 = row_hashes(want, &h1), n2 = row_hashes(got, &h2);
    if (n1 != n2 || memcmp(h1, h2, (size_t)n1 * 8) != 0)
        fail_msg("%s: the GPU keeps %lld rows, the CPU %lld%s", where, (long long)n2,
                 (long long)n1, n1 == n2 ? " (other rows or strings)" : "");
    free(h1);
    free(h2);
    sl_table_unref(want);
    sl_table_unref(got);
    return n1;
}

/* Batches of 70000, 1, 0 and 45000 random rows. */
static sl_table_t *random_table(void)
{
    static const int64_t sizes[] = {70000, 1, 0, 45000};
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        sl_batch_t *b = xs_batch(sizes[k], 11 + k);
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
    }
    return t;
}

SL_TEST(random_string_filters_match_the_cpu)
{
    NEED_GPU();
    sl_engine_t *cpu = engine(SL_PLACE_CPU, 0), *gpu = engine(SL_PLACE_GPU, -1);
    sl_table_t *host = random_table(), *dev;
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
    /* every row kept, none kept, and TPC-H Q13's pattern */
    static const char *const fixed[] = {
        "s IS NULL OR s IS NOT NULL", "s = 'no such string'", "s LIKE '%a%b%' OR ls NOT LIKE 'a%'",
        "t NOT LIKE '%special%requests%'", "ls LIKE '%\xc3\xa9_%' AND LENGTH(t) > 3",
    };
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
        kept += same_rows(cpu, gpu, host, dev, false, fixed[k], true);
    print_message("%d random string predicates equal on the GPU and the CPU (%lld of %lld rows "
                  "kept in all; %d keep none, %d keep all)\n", n, (long long)kept,
                  (long long)total * n, none, all);
    assert_true(kept > 0 && none > 0);
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
    sl_table_t *host = random_table(), *dev;
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

/* Under GPU placement, batches with strings in host memory are filtered (projected) by
 * the CPU, as before: strings are not uploaded just to be read. */
SL_TEST(host_strings_stay_with_the_cpu)
{
    NEED_GPU();
    sl_engine_t *cpu = engine(SL_PLACE_CPU, 0), *gpu = engine(SL_PLACE_GPU, -1);
    sl_table_t *host = random_table();
    int64_t kept = same_rows(cpu, gpu, host, host, false, "s LIKE '%a%' AND k > 0", false);
    assert_true(kept > 0);
    same_rows(cpu, gpu, host, host, true, "k, v = s LIKE '%a%'", false);
    sl_table_unref(host);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}
