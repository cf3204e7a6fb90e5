/* Helpers of the generator and expression tests: engines, running a one- or two-node
 * plan, reading result columns back into plain arrays, order-insensitive checksums. */
#ifndef SLUICE_TEST_GEN_UTIL_H
#define SLUICE_TEST_GEN_UTIL_H

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen_int.h"
#include "internal.h"
#include "sl_test.h"

static inline sl_engine_t *gt_open(int threads, int64_t morsel)
{
    return sl_test_cpu_engine(threads, morsel);
}

static inline void gt_close(sl_engine_t *e)
{
    sl_engine_close(e);
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

/* Runs op(opts) (a source), optionally followed by op2(opts2), and returns the result
 * table; NULL with *rc_out set if the query fails (rc_out NULL: failure fails the test). */
static inline sl_table_t *gt_run2(sl_engine_t *e, const char *op, const char *opts, const char *op2,
                           const char *opts2, int *rc_out)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int s, o;
    int rc = sl_plan_add(p, op, NULL, 0, opts, &s);
    if (rc != SL_OK)
        fail_msg("%s(%s): %s", op, opts, sl_plan_errmsg(p));
    o = s;
    if (op2) {
        rc = sl_plan_add(p, op2, &s, 1, opts2, &o);
        if (rc != SL_OK)
            fail_msg("%s(%s): %s", op2, opts2, sl_plan_errmsg(p));
    }
    SL_ASSERT_OK(sl_plan_output(p, o, "r"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    rc = sl_query_run(q);
    sl_table_t *r = NULL;
    if (rc == SL_OK)
        SL_ASSERT_OK(sl_query_result(q, "r", &r));
    else if (!rc_out)
        fail_msg("query %s(%s) failed: %s", op, opts, sl_query_errmsg(q));
    if (rc_out)
        *rc_out = rc;
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return r;
}

static inline sl_table_t *gt_run(sl_engine_t *e, const char *op, const char *opts)
{
    return gt_run2(e, op, opts, NULL, NULL, NULL);
}

/* Tries to add op(opts) to a fresh plan; returns the code and copies the message. */
static inline int gt_bind(const char *op, const char *opts, char *msg, size_t msg_len)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int id;
    int rc = sl_plan_add(p, op, NULL, 0, opts, &id);
    snprintf(msg, msg_len, "%s", rc ? sl_plan_errmsg(p) : "");
    sl_plan_destroy(p);
    return rc;
}

/* One result column in plain arrays: integers in i, floats in f, valid (1 = valid). */
struct gcol {
    enum sl_type type;
    int64_t n;
    int64_t *i;
    double *f;
    uint8_t *valid;
};

static inline void gcol_free(struct gcol *c)
{
    free(c->i);
    free(c->f);
    free(c->valid);
}

/* Reads column `name` of t (all batches, in table order). */
static inline void gcol_read(sl_table_t *t, const char *name, struct gcol *c)
{
    int64_t n = t ? sl_table_num_rows(t) : 0;
    c->n = n;
    c->type = SL_TYPE_INVALID;
    c->i = calloc((size_t)n + 1, 8);
    c->f = calloc((size_t)n + 1, 8);
    c->valid = calloc((size_t)n + 1, 1);
    int64_t at = 0;
    for (int64_t b = 0; t && b < sl_table_num_batches(t); b++) {
        sl_batch_t *bt = sl_table_batch(t, b);
        int idx = sl_batch_column_index(bt, name);
        if (idx < 0)
            fail_msg("no column %s in the result", name);
        struct sl_column v;
        SL_ASSERT_OK(sl_batch_column(bt, idx, &v));
        c->type = v.type;
        int64_t nulls = 0;
        for (int64_t r = 0; r < v.length; r++, at++) {
            int64_t k = v.offset + r;
            switch (v.type) {
            case SL_TYPE_INT32: c->i[at] = ((const int32_t *)v.data)[k]; break;
            case SL_TYPE_INT64: c->i[at] = ((const int64_t *)v.data)[k]; break;
            case SL_TYPE_BOOL: c->i[at] = ((const uint8_t *)v.data)[k]; break;
            case SL_TYPE_FLOAT32: c->f[at] = ((const float *)v.data)[k]; break;
            default: c->f[at] = ((const double *)v.data)[k]; break;
            }
            c->valid[at] = !v.validity || ((v.validity[k >> 3] >> (k & 7)) & 1);
            nulls += !c->valid[at];
        }
        if (v.null_count >= 0)
            assert_int_equal(v.null_count, nulls);
    }
    assert_int_equal(at, n);
}

/* The bits of row r of c (0 for nulls, with a null marker). */
static inline uint64_t gcol_bits(const struct gcol *c, int64_t r)
{
    if (!c->valid[r])
        return 0x6e756c6cull;
    if (c->type == SL_TYPE_INT32 || c->type == SL_TYPE_INT64)
        return (uint64_t)c->i[r];
    uint64_t u;
    memcpy(&u, &c->f[r], 8);
    return u;
}

/* An order-insensitive checksum of whole rows: the sum over rows of a hash of the row's
 * values in every column (so equal multisets of rows give equal sums). */
static inline uint64_t gt_checksum(sl_table_t *t)
{
    int64_t n = t ? sl_table_num_rows(t) : 0;
    if (!n)
        return 0;
    const sl_schema_t *s = NULL;
    sl_batch_t *b0 = sl_table_batch(t, 0);
    int nc = sl_batch_num_columns(b0);
    (void)s;
    uint64_t *h = calloc((size_t)n, 8);
    for (int c = 0; c < nc; c++) {
        struct sl_column v;
        SL_ASSERT_OK(sl_batch_column(b0, c, &v));
        struct gcol g;
        gcol_read(t, v.name, &g);
        for (int64_t r = 0; r < n; r++)
            h[r] = sl__gen_mix64(h[r] ^ (gcol_bits(&g, r) + (uint64_t)c * 0x9e3779b97f4a7c15ull));
        gcol_free(&g);
    }
    uint64_t sum = (uint64_t)n;
    for (int64_t r = 0; r < n; r++)
        sum += sl__gen_mix64(h[r]);
    free(h);
    return sum;
}

static inline int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

#endif /* SLUICE_TEST_GEN_UTIL_H */
