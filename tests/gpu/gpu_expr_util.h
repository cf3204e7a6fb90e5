/* Helpers of the GPU expression tests (test_gpu_expr.c, test_gpu_expr_str.c): engines
 * with CPU or GPU placement, one operator run over a table, rows as sorted hashes
 * compared between engines, and tables of random batches. */
#ifndef SLUICE_TESTS_GPU_EXPR_UTIL_H
#define SLUICE_TESTS_GPU_EXPR_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_int.h"
#include "sl_test.h"

#include "../unit/gen/gen_test_util.h"

static inline sl_engine_t *engine(enum sl_placement pl, int gpus)
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

/* Output "r" of finished query q, copied to host memory. */
static inline sl_table_t *result_on_host(sl_query_t *q)
{
    sl_table_t *r, *host;
    SL_ASSERT_OK(sl_query_result(q, "r", &r));
    SL_ASSERT_OK(sl_table_to_host(r, &host));
    sl_table_unref(r);
    return host;
}

/* Runs table -> op(option="text") on e: the result in host memory (NULL on failure,
 * with *rc and msg), where the operator ran (*mask: 1 CPU, 2 GPU) and, when h2d is not
 * NULL, the bytes the query uploaded. */
static inline sl_table_t *op_on_h2d(sl_engine_t *e, sl_table_t *in, const char *op,
                                    const char *option, const char *text, int *rc, int *mask,
                                    char *msg, size_t len, int64_t *h2d)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int s, o;
    char opts[600];
    snprintf(opts, sizeof opts, "%s=\"%s\"", option, text);
    SL_ASSERT_OK(sl_plan_add_table(p, in, &s));
    *rc = sl_plan_add(p, op, &s, 1, opts, &o);
    if (*rc != SL_OK) {
        snprintf(msg, len, "%s", sl_plan_errmsg(p));
        sl_plan_destroy(p);
        return NULL;
    }
    SL_ASSERT_OK(sl_plan_output(p, o, "r"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    *rc = sl_query_run(q);
    snprintf(msg, len, "%s", *rc ? sl_query_errmsg(q) : "");
    *mask = atomic_load(&q->ops[o].device_mask);
    const struct sl_explain *ex;
    if (h2d) {
        SL_ASSERT_OK(sl_query_explain(q, &ex));
        *h2d = ex->bytes_h2d_measured;
    }
    sl_table_t *host = *rc == SL_OK ? result_on_host(q) : NULL;
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return host;
}

static inline sl_table_t *op_on(sl_engine_t *e, sl_table_t *in, const char *op, const char *option,
                         const char *text, int *rc, int *mask, char *msg, size_t len)
{
    return op_on_h2d(e, in, op, option, text, rc, mask, msg, len, NULL);
}

/* A hash of every row (all columns' bytes, utf8/large_utf8 by their strings' bytes, NULL
 * as a marker; only column `only` when it is >= 0), sorted: equal arrays mean equal
 * multisets of rows. Returns the row count. */
static inline int64_t column_hashes(sl_table_t *t, int only, uint64_t **out)
{
    int64_t n = t ? sl_table_num_rows(t) : 0, at = 0;
    uint64_t *h = calloc((size_t)n + 1, 8);
    for (int64_t k = 0; t && k < sl_table_num_batches(t); k++) {
        sl_batch_t *b = sl_table_batch(t, k);
        for (int64_t r = 0; r < sl_batch_num_rows(b); r++, at++) {
            uint64_t x = 0x12345;
            for (int c = 0; c < sl_batch_num_columns(b); c++) {
                if (only >= 0 && c != only)
                    continue;
                struct sl_column v;
                SL_ASSERT_OK(sl_batch_column(b, c, &v));
                int64_t i = v.offset + r;
                size_t w = sl_type_width(v.type);
                const unsigned char *p = (const unsigned char *)v.data + (size_t)i * w;
                if (v.type == SL_TYPE_UTF8 || v.type == SL_TYPE_LARGE_UTF8) {
                    struct sl_strings s;
                    SL_ASSERT_OK(sl_batch_column_strings(b, c, &s));
                    bool o32 = v.type == SL_TYPE_UTF8;
                    int64_t lo = o32 ? ((const int32_t *)v.data)[i] : ((const int64_t *)v.data)[i];
                    int64_t hi = o32 ? ((const int32_t *)v.data)[i + 1]
                                     : ((const int64_t *)v.data)[i + 1];
                    p = (const unsigned char *)s.chars + lo;
                    w = (size_t)(hi - lo);
                }
                uint64_t part = 0x6e756c6c;
                if (!v.validity || ((v.validity[i >> 3] >> (i & 7)) & 1)) {
                    part = w;
                    for (size_t j = 0; j < w; j++)
                        part = part * 131 + p[j] + 1;
                }
                x = sl__gen_mix64(x ^ (part + (uint64_t)c * 0x9e3779b97f4a7c15ull));
            }
            h[at] = x;
        }
    }
    qsort(h, (size_t)n, 8, cmp_i64);
    *out = h;
    return n;
}

/* A table of batches of 70000, 1, 0 and 45000 random rows from make(rows, seed). */
static inline sl_table_t *batches_table(sl_batch_t *(*make)(int64_t, uint64_t), uint64_t seed)
{
    static const int64_t sizes[] = {70000, 1, 0, 45000};
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        sl_batch_t *b = make(sizes[k], seed + k);
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
    }
    return t;
}

/* The same rows (as multisets) or the same failure from both engines, the second having
 * run the operator on the GPU (mask2 & 2) exactly when want_gpu. Takes both tables;
 * adds the rows to *rows. */
static inline bool same_outcome(const char *what, sl_table_t *want, int rc1, const char *m1,
                                sl_table_t *got, int rc2, const char *m2, int mask2,
                                bool want_gpu, int64_t *rows)
{
    if (rc1 != rc2)
        fail_msg("%s: the CPU gives %s (%s), the GPU %s (%s)", what, sl_err_name(rc1), m1,
                 sl_err_name(rc2), m2);
    if (((mask2 & 2) != 0) != want_gpu)
        fail_msg("%s: ran on the %s", what, mask2 & 2 ? "GPU" : "CPU only");
    if (rc1 != SL_OK) {
        if (!strstr(m2, "position"))
            fail_msg("%s: the GPU's error \"%s\" names no position", what, m2);
        return false;
    }
    uint64_t *h1, *h2;
    int64_t n1 = column_hashes(want, -1, &h1), n2 = column_hashes(got, -1, &h2);
    if (n1 == n2 && memcmp(h1, h2, (size_t)n1 * 8) != 0) /* which columns differ */
        for (int c = 0; c < sl_batch_num_columns(sl_table_batch(want, 0)); c++) {
            uint64_t *c1, *c2;
            column_hashes(want, c, &c1);
            column_hashes(got, c, &c2);
            int64_t diff = 0;
            for (int64_t i = 0; i < n1; i++)
                diff += c1[i] != c2[i];
            if (diff)
                print_message("%s: column %d differs in %lld of the sorted values\n", what, c,
                              (long long)diff);
            free(c1);
            free(c2);
        }
    if (n1 != n2 || memcmp(h1, h2, (size_t)n1 * 8) != 0)
        fail_msg("%s: the GPU gives %lld rows, the CPU %lld%s", what, (long long)n2,
                 (long long)n1, n1 == n2 ? " (other rows or values)" : "");
    *rows += n1;
    free(h1);
    free(h2);
    sl_table_unref(want);
    sl_table_unref(got);
    return true;
}

#endif /* SLUICE_TESTS_GPU_EXPR_UTIL_H */
