/* Helpers of the sort, merge and partition tests: random columns, tables cut into
 * batches, a test-only operator that keeps batch order, and reading results back. */
#ifndef SLUICE_TEST_SORT_UTIL_H
#define SLUICE_TEST_SORT_UTIL_H

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "operators.h"
#include "sl_test.h"
#include "common/op_common.h"

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* A column of a test: values (8 bytes per row whatever the type, read by type) and
 * validity (one byte per row, 1 = valid). */
struct tcol {
    const char *name;
    enum sl_type type;
    int64_t *i;   /* INT32/INT64 (and DATE32, UINT64 bits) values */
    double *f;    /* FLOAT32/FLOAT64 values */
    uint8_t *valid;
};

static void tcol_alloc(struct tcol *c, const char *name, enum sl_type type, int64_t n)
{
    c->name = name;
    c->type = type;
    c->i = calloc((size_t)n + 1, 8);
    c->f = calloc((size_t)n + 1, 8);
    c->valid = malloc((size_t)n + 1);
    memset(c->valid, 1, (size_t)n + 1);
}

static void tcol_free(struct tcol *c)
{
    free(c->i);
    free(c->f);
    free(c->valid);
}

/* A table of the columns, cut into batches of random sizes up to max_batch (the rows
 * are in order). */
static sl_table_t *make_table(struct tcol *cols, int n_cols, int64_t n, int64_t max_batch)
{
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    const char *names[16];
    enum sl_type types[16];
    for (int c = 0; c < n_cols; c++) {
        names[c] = cols[c].name;
        types[c] = cols[c].type;
    }
    int64_t at = 0;
    do {
        int64_t len = n - at;
        if (max_batch > 0 && len > 0) {
            int64_t m = 1 + (int64_t)(rnd() % (uint64_t)max_batch);
            len = len < m ? len : m;
        }
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, n_cols, names, types, len));
        for (int c = 0; c < n_cols; c++) {
            void *d = sl_batch_column_data(b, c);
            bool any_null = false;
            for (int64_t r = 0; r < len; r++) {
                int64_t row = at + r;
                switch (types[c]) {
                case SL_TYPE_INT32: ((int32_t *)d)[r] = (int32_t)cols[c].i[row]; break;
                case SL_TYPE_INT64: ((int64_t *)d)[r] = cols[c].i[row]; break;
                case SL_TYPE_FLOAT32: ((float *)d)[r] = (float)cols[c].f[row]; break;
                default: ((double *)d)[r] = cols[c].f[row]; break;
                }
                any_null |= !cols[c].valid[row];
            }
            if (any_null) {
                uint8_t *v = sl_batch_column_validity(b, c);
                for (int64_t r = 0; r < len; r++) {
                    if (!cols[c].valid[at + r])
                        v[r >> 3] &= (uint8_t) ~(1u << (r & 7));
                }
            }
        }
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
        at += len;
    } while (at < n);
    return t;
}

/* ---- test.ordered: passes batches through in the order of their source task index,
 * from one source task, so the collected table keeps the global order. ---- */

struct ordered_state {
    struct sl__rows rows;
};

static int ordered_bind(sl_bind_t *b)
{
    const sl_schema_t *in = sl_bind_input_schema(b, 0);
    for (int i = 0; i < sl_schema_num_fields(in); i++) {
        const char *name;
        enum sl_type type;
        sl_schema_field(in, i, &name, &type);
        int rc = sl_bind_add_column(b, name, type);
        if (rc < 0)
            return rc;
    }
    return SL_OK;
}

static void ordered_fini(const sl_op_t *op, void *gs)
{
    (void)op;
    sl__rows_fini(&((struct ordered_state *)gs)->rows);
}

static void ordered_fini_local(const sl_op_t *op, void *gs, void *ls)
{
    (void)op;
    (void)gs;
    sl__rows_fini(&((struct ordered_state *)ls)->rows);
}

static int ordered_sink(sl_task_t *t)
{
    struct ordered_state *ls = sl_task_lstate(t);
    return sl__rows_add(&ls->rows, sl_task_input(t), 0, sl_task_index(t));
}

static int ordered_combine(sl_task_t *t)
{
    struct ordered_state *gs = sl_task_gstate(t), *ls = sl_task_lstate(t);
    return sl__rows_move(&gs->rows, &ls->rows);
}

static int ordered_source(sl_task_t *t)
{
    struct ordered_state *gs = sl_task_gstate(t);
    sl__rows_order(&gs->rows);
    for (int64_t i = 0; i < gs->rows.n; i++) {
        sl_batch_t *b = gs->rows.items[i].batch;
        sl_batch_ref(b);
        int rc = sl_task_emit(t, b);
        if (rc < 0)
            return rc;
    }
    return SL_OK;
}

static const struct sl_impl ordered_sink_i[] = {{.device = SL_DEVICE_CPU, .run = ordered_sink}};
static const struct sl_impl ordered_comb_i[] = {{.device = SL_DEVICE_CPU, .run = ordered_combine}};
static const struct sl_impl ordered_src_i[] = {{.device = SL_DEVICE_CPU, .run = ordered_source}};
static const struct sl_phase ordered_sink_p = {ordered_sink_i, 1, NULL};
static const struct sl_phase ordered_comb_p = {ordered_comb_i, 1, NULL};
static const struct sl_phase ordered_src_p = {ordered_src_i, 1, NULL};
static const struct sl_op_def ordered_def = {
    .abi_version = SL_OP_ABI_VERSION,
    .flags = SL_OP_SINK | SL_OP_SOURCE,
    .name = "test.ordered",
    .doc = "keeps batches in source task order (tests only)",
    .min_inputs = 1,
    .max_inputs = 1,
    .bind = ordered_bind,
    .global_state_bytes = sizeof(struct ordered_state),
    .local_state_bytes = sizeof(struct ordered_state),
    .fini_global = ordered_fini,
    .fini_local = ordered_fini_local,
    .sink = &ordered_sink_p,
    .combine = &ordered_comb_p,
    .source = &ordered_src_p,
};

static sl_engine_t *open_engine(int threads, int64_t morsel)
{
    int rc = sl_registry_add(sl_registry_global(), &ordered_def);
    if (rc != SL_OK && rc != SL_EEXIST)
        fail_msg("registering test.ordered: %d", rc);
    return sl_test_cpu_engine(threads, morsel);
}

static void assert_no_leaks(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

/* Runs tables -> op(opts) -> test.ordered and returns the result (NULL and *rc set on
 * failure). */
static sl_table_t *run_op(sl_engine_t *e, sl_table_t **in, int n_in, const char *op,
                          const char *opts, int *rc_out)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int ids[16], s, o;
    for (int i = 0; i < n_in; i++)
        SL_ASSERT_OK(sl_plan_add_table(p, in[i], &ids[i]));
    SL_ASSERT_OK(sl_plan_add(p, op, ids, n_in, opts, &s));
    SL_ASSERT_OK(sl_plan_add(p, "test.ordered", &s, 1, "", &o));
    SL_ASSERT_OK(sl_plan_output(p, o, "r"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    int rc = sl_query_run(q);
    sl_table_t *r = NULL;
    if (rc == SL_OK)
        SL_ASSERT_OK(sl_query_result(q, "r", &r));
    if (rc_out)
        *rc_out = rc;
    else
        SL_ASSERT_OK(rc);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return r;
}

/* Reads column `name` of a result table into c (allocated for all rows). */
static int64_t read_col(sl_table_t *t, const char *name, struct tcol *c)
{
    int64_t n = t ? sl_table_num_rows(t) : 0;
    enum sl_type type = SL_TYPE_INT64;
    if (n) {
        struct sl_column v;
        int idx = sl_batch_column_index(sl_table_batch(t, 0), name);
        assert_true(idx >= 0);
        SL_ASSERT_OK(sl_batch_column(sl_table_batch(t, 0), idx, &v));
        type = v.type;
    }
    tcol_alloc(c, name, type, n);
    int64_t at = 0;
    for (int64_t b = 0; t && b < sl_table_num_batches(t); b++) {
        sl_batch_t *bt = sl_table_batch(t, b);
        struct sl_column v;
        SL_ASSERT_OK(sl_batch_column(bt, sl_batch_column_index(bt, name), &v));
        int64_t nulls = 0;
        for (int64_t r = 0; r < v.length; r++, at++) {
            int64_t k = v.offset + r;
            switch (v.type) {
            case SL_TYPE_INT32:
            case SL_TYPE_DATE32: c->i[at] = ((const int32_t *)v.data)[k]; break;
            case SL_TYPE_INT64:
            case SL_TYPE_UINT64: c->i[at] = ((const int64_t *)v.data)[k]; break;
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
    return n;
}

/* 1 if value a of column x equals value b of column y (same type; NaN == NaN, and
 * -0.0 != +0.0 by bits). */
static bool same_value(const struct tcol *x, int64_t a, const struct tcol *y, int64_t b)
{
    if (x->valid[a] != y->valid[b])
        return false;
    if (!x->valid[a])
        return true;
    if (x->type != SL_TYPE_FLOAT32 && x->type != SL_TYPE_FLOAT64)
        return x->i[a] == y->i[b];
    double p = x->f[a], q = y->f[b];
    if (isnan(p) || isnan(q))
        return isnan(p) && isnan(q);
    return p == q && signbit(p) == signbit(q);
}

#endif /* SLUICE_TEST_SORT_UTIL_H */
