/* Tests of the expression language (operators/expr/expr.h) and the filter and project
 * operators: results against a plain row-by-row reference on random tables with nulls
 * (sizes 0, 1, below, at and above the morsel size and the evaluator's vector length;
 * 1 and 2 threads; all rows kept, none kept, runs kept), three-valued logic, integer
 * division by zero giving NULL, int64 overflow and out-of-range casts failing the query
 * (and the engine staying usable), and clear parse, name and type errors with
 * positions. Float results are compared exactly: the reference does the same double
 * operations in the same order. */
#include <stdio.h>

#include "../gen/gen_test_util.h"
#include "expr/expr.h"
#include "expr_test_util.h"

/* ---------------- random input ---------------- */

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Input columns: id int64 (row number, never null), a int32, b int64, x float64,
 * y float32; a, b, x, y null at null_pct percent. */
struct input {
    int64_t n;
    int64_t *a, *b;
    double *x, *y;
    uint8_t *va, *vb, *vx, *vy;
};

static void input_make(struct input *in, int64_t n, int null_pct)
{
    in->n = n;
    in->a = calloc((size_t)n + 1, 8);
    in->b = calloc((size_t)n + 1, 8);
    in->x = calloc((size_t)n + 1, 8);
    in->y = calloc((size_t)n + 1, 8);
    in->va = calloc((size_t)n + 1, 1);
    in->vb = calloc((size_t)n + 1, 1);
    in->vx = calloc((size_t)n + 1, 1);
    in->vy = calloc((size_t)n + 1, 1);
    for (int64_t r = 0; r < n; r++) {
        in->a[r] = (int64_t)(rnd() % 21) - 10;
        in->b[r] = (int64_t)(rnd() % 2001) - 1000;
        in->x[r] = (double)(rnd() >> 11) * 0x1.0p-53;
        in->y[r] = (float)((double)(rnd() >> 11) * 0x1.0p-52 - 1.0);
        in->va[r] = (int)(rnd() % 100) >= null_pct;
        in->vb[r] = (int)(rnd() % 100) >= null_pct;
        in->vx[r] = (int)(rnd() % 100) >= null_pct;
        in->vy[r] = (int)(rnd() % 100) >= null_pct;
    }
}

static void input_free(struct input *in)
{
    free(in->a);
    free(in->b);
    free(in->x);
    free(in->y);
    free(in->va);
    free(in->vb);
    free(in->vx);
    free(in->vy);
}

static void set_null(sl_batch_t *bt, int c, int64_t r)
{
    uint8_t *v = sl_batch_column_validity(bt, c);
    v[r >> 3] &= (uint8_t) ~(1u << (r & 7));
}

/* The input as a table cut into batches of random sizes up to max_batch. */
static sl_table_t *input_table(const struct input *in, int64_t max_batch)
{
    static const char *const names[] = {"id", "a", "b", "x", "y"};
    static const enum sl_type types[] = {SL_TYPE_INT64, SL_TYPE_INT32, SL_TYPE_INT64,
                                         SL_TYPE_FLOAT64, SL_TYPE_FLOAT32};
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    int64_t at = 0;
    do {
        int64_t len = in->n - at, m = 1 + (int64_t)(rnd() % (uint64_t)max_batch);
        len = len < m ? len : m;
        sl_batch_t *bt;
        SL_ASSERT_OK(sl_batch_create(&bt, 5, names, types, len));
        int64_t *id = sl_batch_column_data(bt, 0), *b = sl_batch_column_data(bt, 2);
        int32_t *a = sl_batch_column_data(bt, 1);
        double *x = sl_batch_column_data(bt, 3);
        float *y = sl_batch_column_data(bt, 4);
        for (int64_t r = 0; r < len; r++) {
            int64_t k = at + r;
            id[r] = k;
            a[r] = (int32_t)in->a[k];
            b[r] = in->b[k];
            x[r] = in->x[k];
            y[r] = (float)in->y[k];
        }
        for (int64_t r = 0; r < len; r++) {
            int64_t k = at + r;
            if (!in->va[k])
                set_null(bt, 1, r);
            if (!in->vb[k])
                set_null(bt, 2, r);
            if (!in->vx[k])
                set_null(bt, 3, r);
            if (!in->vy[k])
                set_null(bt, 4, r);
        }
        SL_ASSERT_OK(sl_table_append(t, bt));
        sl_batch_unref(bt);
        at += len;
    } while (at < in->n);
    return t;
}

/* ---------------- the reference ---------------- */

/* A reference value: null, or an integer / boolean (i) or a float (f). */
struct rv {
    bool null;
    int64_t i;
    double f;
};

static const struct rv RNULL = {true, 0, 0};

static struct rv ri(int64_t i)
{
    return (struct rv){false, i, 0};
}

static struct rv rf(double f)
{
    return (struct rv){false, 0, f};
}

static struct rv rand3(struct rv p, struct rv q)
{
    if ((!p.null && !p.i) || (!q.null && !q.i))
        return ri(0);
    return p.null || q.null ? RNULL : ri(1);
}

static struct rv ror3(struct rv p, struct rv q)
{
    if ((!p.null && p.i) || (!q.null && q.i))
        return ri(1);
    return p.null || q.null ? RNULL : ri(0);
}

static struct rv rnot(struct rv p)
{
    return p.null ? RNULL : ri(!p.i);
}

#define COL(v, arr, r) ((in)->v[r] ? ri((in)->arr[r]) : RNULL)
#define FCOL(v, arr, r) ((in)->v[r] ? rf((in)->arr[r]) : RNULL)
#define CMP(p, q, OP) ((p).null || (q).null ? RNULL : ri((p).i OP (q).i))
#define FCMP(p, q, OP) ((p).null || (q).null ? RNULL : ri((p).f OP (q).f))

static const char *const predicates[] = {
    "a > 0",
    "a > 0 AND b < 100",
    "a > 0 OR b IS NULL",
    "NOT (a = b)",
    "a IN (1, 2, 3, -4)",
    "a NOT IN (0, 5)",
    "x < 0.5 AND y >= -0.25",
    "b % 7 = 3 OR a / 3 = 1",
    "a / (b % 5) > 2",
    "CAST(x * 10 AS int32) = a",
    "x > 0",
    "a + b * 2 - 7 >= 0",
    "a IS NOT NULL AND NOT (x > 0.5 OR y IS NULL)",
    "a > 1000000",
    "id >= 0",
    "id < 10 OR id >= 2000",
    "y IN (-0.5, 0.25) OR -x <= -0.9",
};

#define N_GOOD_PREDICATES ((int)(sizeof predicates / sizeof predicates[0]))

static struct rv ref_pred(const struct input *in, int k, int64_t r)
{
    struct rv a = COL(va, a, r), b = COL(vb, b, r), x = FCOL(vx, x, r), y = FCOL(vy, y, r);
    switch (k) {
    case 0: return CMP(a, ri(0), >);
    case 1: return rand3(CMP(a, ri(0), >), CMP(b, ri(100), <));
    case 2: return ror3(CMP(a, ri(0), >), ri(b.null));
    case 3: return rnot(CMP(a, b, ==));
    case 4: return a.null ? RNULL : ri(a.i == 1 || a.i == 2 || a.i == 3 || a.i == -4);
    case 5: return a.null ? RNULL : ri(!(a.i == 0 || a.i == 5));
    case 6: return rand3(FCMP(x, rf(0.5), <), FCMP(y, rf(-0.25), >=));
    case 7: {
        struct rv m = b.null ? RNULL : ri(b.i % 7), d = a.null ? RNULL : ri(a.i / 3);
        return ror3(CMP(m, ri(3), ==), CMP(d, ri(1), ==));
    }
    case 8: {
        struct rv m = b.null ? RNULL : ri(b.i % 5);
        struct rv d = a.null || m.null || m.i == 0 ? RNULL : ri(a.i / m.i);
        return CMP(d, ri(2), >);
    }
    case 9: {
        struct rv c = x.null ? RNULL : ri((int64_t)nearbyint(x.f * 10)); /* half to even */
        return CMP(c, a, ==);
    }
    case 10: return FCMP(x, rf(0.0), >);
    case 11: {
        struct rv s = a.null || b.null ? RNULL : ri(a.i + b.i * 2 - 7);
        return CMP(s, ri(0), >=);
    }
    case 12: return rand3(ri(!a.null), rnot(ror3(FCMP(x, rf(0.5), >), ri(y.null))));
    case 13: return CMP(a, ri(1000000), >);
    case 14: return ri(1);
    case 15: return ri(r < 10 || r >= 2000);
    default:
        return ror3(y.null ? RNULL : ri(y.f == -0.5 || y.f == 0.25),
                    x.null ? RNULL : ri(-x.f <= -0.9));
    }
}

/* Filters the input with predicate k and checks the kept rows (ids and every column). */
static void check_filter(sl_engine_t *e, const struct input *in, sl_table_t *t, int k)
{
    char opts[200];
    snprintf(opts, sizeof opts, "where=\"%s\"", predicates[k]);
    sl_table_t *res = run_on(e, t, "filter", opts, NULL, NULL, 0);
    struct gcol id, a, b, x, y;
    gcol_read(res, "id", &id);
    uint8_t *kept = calloc((size_t)in->n + 1, 1);
    if (id.n) {
        gcol_read(res, "a", &a);
        gcol_read(res, "b", &b);
        gcol_read(res, "x", &x);
        gcol_read(res, "y", &y);
        for (int64_t r = 0; r < id.n; r++) {
            int64_t i = id.i[r];
            assert_true(i >= 0 && i < in->n && !kept[i]);
            kept[i] = 1;
            assert_true(a.valid[r] == in->va[i] && (!a.valid[r] || a.i[r] == in->a[i]));
            assert_true(b.valid[r] == in->vb[i] && (!b.valid[r] || b.i[r] == in->b[i]));
            assert_true(x.valid[r] == in->vx[i] && (!x.valid[r] || x.f[r] == in->x[i]));
            assert_true(y.valid[r] == in->vy[i] && (!y.valid[r] || y.f[r] == in->y[i]));
        }
        gcol_free(&a);
        gcol_free(&b);
        gcol_free(&x);
        gcol_free(&y);
    }
    for (int64_t i = 0; i < in->n; i++) {
        struct rv want = ref_pred(in, k, i);
        bool keep = !want.null && want.i;
        if (keep != kept[i])
            fail_msg("where %s, n=%lld: row %lld %s but the reference says %s (%s)",
                     predicates[k], (long long)in->n, (long long)i, kept[i] ? "kept" : "dropped",
                     keep ? "keep" : "drop", want.null ? "NULL" : want.i ? "TRUE" : "FALSE");
    }
    free(kept);
    gcol_free(&id);
    sl_table_unref(res);
}

SL_TEST(filter_vs_reference)
{
    const int64_t sizes[] = {0, 1, 2, 100, 1023, 1024, 1025, 2500, 4100};
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = gt_open(th, th == 1 ? 1000 : 3000);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            struct input in;
            input_make(&in, sizes[s], s % 3 == 0 ? 0 : 15);
            sl_table_t *t = input_table(&in, s & 1 ? 700 : 5000);
            for (int k = 0; k < N_GOOD_PREDICATES; k++)
                check_filter(e, &in, t, k);
            sl_table_unref(t);
            input_free(&in);
        }
        gt_close(e);
    }
}

/* ---------------- project ---------------- */

static const char *const proj_cols =
    "id, a, s=a+b, m=b*a, d=b/a, r=b%a, f=x*2.5+y, c=CAST(b AS float32), i=CAST(x*100 AS int64), "
    "t=a > b, n=-a, k=CAST(a AS int64) * 1000000000000, a2=a, w=y / x, h=CAST(b AS int32) + 1, "
    "z=b IS NULL";

static const char *const proj_names[] = {"id", "a", "s", "m", "d", "r", "f", "c", "i", "t", "n",
                                         "k", "a2", "w", "h", "z"};
static const enum sl_type proj_types[] = {
    SL_TYPE_INT64, SL_TYPE_INT32, SL_TYPE_INT64, SL_TYPE_INT64, SL_TYPE_INT64, SL_TYPE_INT64,
    SL_TYPE_FLOAT64, SL_TYPE_FLOAT32, SL_TYPE_INT64, SL_TYPE_BOOL, SL_TYPE_INT64, SL_TYPE_INT64,
    SL_TYPE_INT32, SL_TYPE_FLOAT64, SL_TYPE_INT64, SL_TYPE_BOOL};

static struct rv ref_proj(const struct input *in, int c, int64_t r)
{
    struct rv a = COL(va, a, r), b = COL(vb, b, r), x = FCOL(vx, x, r), y = FCOL(vy, y, r);
    bool ab = a.null || b.null;
    switch (c) {
    case 0: return ri(r);
    case 1: case 12: return a;
    case 2: return ab ? RNULL : ri(a.i + b.i);
    case 3: return ab ? RNULL : ri(b.i * a.i);
    case 4: return ab || a.i == 0 ? RNULL : ri(b.i / a.i);
    case 5: return ab || a.i == 0 ? RNULL : ri(b.i % a.i);
    case 6: return x.null || y.null ? RNULL : rf(x.f * 2.5 + y.f);
    case 7: return b.null ? RNULL : rf((float)b.i);
    case 8: return x.null ? RNULL : ri((int64_t)nearbyint(x.f * 100));
    case 9: return ab ? RNULL : ri(a.i > b.i);
    case 10: return a.null ? RNULL : ri(-a.i);
    case 11: return a.null ? RNULL : ri(a.i * 1000000000000);
    case 13: return x.null || y.null ? RNULL : rf(y.f / x.f);
    case 14: return b.null ? RNULL : ri(b.i + 1);
    default: return ri(b.null);
    }
}

static void check_project(sl_engine_t *e, const struct input *in, sl_table_t *t)
{
    char opts[400];
    snprintf(opts, sizeof opts, "columns=\"%s\"", proj_cols);
    sl_table_t *res = run_on(e, t, "project", opts, NULL, NULL, 0);
    int nc = (int)(sizeof proj_names / sizeof proj_names[0]);
    struct gcol id;
    gcol_read(res, "id", &id);
    assert_int_equal(id.n, in->n);
    if (id.n)
        assert_int_equal(sl_batch_num_columns(sl_table_batch(res, 0)), nc);
    for (int c = 0; c < nc && id.n; c++) {
        struct gcol g;
        gcol_read(res, proj_names[c], &g);
        if (g.type != proj_types[c])
            fail_msg("column %s has type %s, expected %s", proj_names[c], sl_type_name(g.type),
                     sl_type_name(proj_types[c]));
        for (int64_t r = 0; r < g.n; r++) {
            struct rv want = ref_proj(in, c, id.i[r]);
            bool fl = g.type == SL_TYPE_FLOAT32 || g.type == SL_TYPE_FLOAT64;
            bool ok = want.null ? !g.valid[r]
                                : g.valid[r] && (fl ? (g.f[r] == want.f ||
                                                       (isnan(g.f[r]) && isnan(want.f)))
                                                    : g.i[r] == want.i);
            if (!ok)
                fail_msg("column %s, row id %lld: got %s %lld %g, expected %s %lld %g",
                         proj_names[c], (long long)id.i[r], g.valid[r] ? "" : "NULL",
                         (long long)g.i[r], g.f[r], want.null ? "NULL" : "", (long long)want.i,
                         want.f);
        }
        gcol_free(&g);
    }
    gcol_free(&id);
    sl_table_unref(res);
}

SL_TEST(project_vs_reference)
{
    const int64_t sizes[] = {0, 1, 3, 1000, 1024, 1500, 3333};
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = gt_open(th, 1024);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            struct input in;
            input_make(&in, sizes[s], s % 2 ? 20 : 0);
            sl_table_t *t = input_table(&in, s & 1 ? 300 : 2048);
            check_project(e, &in, t);
            sl_table_unref(t);
            input_free(&in);
        }
        gt_close(e);
    }
}

/* filter and project after a generator, chained, with 2 threads. */
SL_TEST(filter_project_chain)
{
    sl_engine_t *e = gt_open(2, 256);
    sl_table_t *r = gt_run2(e, "gen.keys", "rows=5000 payloads=1 null_rate=0.1", "filter",
                            "where=\"k % 2 = 0 AND p1 > 31000\"", NULL);
    struct gcol k, p;
    gcol_read(r, "k", &k);
    gcol_read(r, "p1", &p);
    int64_t want = 0;
    struct sl__gen_perm perm;
    sl__gen_perm_init(&perm, 5000, 1);
    for (int64_t row = 0; row < 5000; row++) {
        bool null = sl__gen_unit(sl__gen_hash(1, SL__GEN_S_NULL, (uint64_t)row)) < 0.1;
        want += !null && sl__gen_perm_apply(&perm, (uint64_t)row) % 2 == 0 && row * 31 + 1 > 31000;
    }
    assert_int_equal(k.n, want);
    for (int64_t i = 0; i < k.n; i++)
        assert_true(k.valid[i] && k.i[i] % 2 == 0 && p.i[i] > 31000);
    gcol_free(&k);
    gcol_free(&p);
    sl_table_unref(r);
    r = gt_run2(e, "gen.uniform", "rows=3000 type=int32 min=-5 max=5", "project",
                "columns=\"x, sq = x * x, half = CAST(x AS float64) / 2\"", NULL);
    struct gcol x, sq, half;
    gcol_read(r, "x", &x);
    gcol_read(r, "sq", &sq);
    gcol_read(r, "half", &half);
    assert_int_equal(x.n, 3000);
    for (int64_t i = 0; i < x.n; i++)
        assert_true(sq.i[i] == x.i[i] * x.i[i] && half.f[i] == (double)x.i[i] / 2);
    gcol_free(&x);
    gcol_free(&sq);
    gcol_free(&half);
    sl_table_unref(r);
    gt_close(e);
}

/* ---------------- run-time errors ---------------- */

/* One-column int64 table "b" with values vals (INT64_MIN+1 marks a null). */
static sl_table_t *int_table(const int64_t *vals, int n)
{
    static const char *const names[] = {"b"};
    static const enum sl_type types[] = {SL_TYPE_INT64};
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    sl_batch_t *bt;
    SL_ASSERT_OK(sl_batch_create(&bt, 1, names, types, n));
    int64_t *d = sl_batch_column_data(bt, 0);
    for (int i = 0; i < n; i++) {
        d[i] = vals[i] == INT64_MIN + 1 ? INT64_MAX : vals[i];
        if (vals[i] == INT64_MIN + 1)
            set_null(bt, 0, i);
    }
    SL_ASSERT_OK(sl_table_append(t, bt));
    sl_batch_unref(bt);
    return t;
}

static void expect_run_error(sl_engine_t *e, sl_table_t *t, const char *op, const char *opts,
                             int code, const char *needle)
{
    int rc;
    char msg[600];
    sl_table_t *r = run_on(e, t, op, opts, &rc, msg, sizeof msg);
    if (rc != code)
        fail_msg("%s(%s): returned %d (%s), expected %s; %s", op, opts, rc, sl_err_name(rc),
                 sl_err_name(code), msg);
    if (!strstr(msg, needle))
        fail_msg("%s(%s): message '%s' does not mention '%s'", op, opts, msg, needle);
    sl_table_unref(r);
}

SL_TEST(overflow_errors)
{
    sl_engine_t *e = gt_open(2, 64);
    const int64_t big[] = {1, 2, INT64_MAX, -5};
    const int64_t small[] = {1, INT64_MIN, 3};
    sl_table_t *tb = int_table(big, 4), *ts = int_table(small, 3);
    expect_run_error(e, tb, "project", "columns=\"z=b+1\"", SL_EOVERFLOW, "overflow in");
    expect_run_error(e, tb, "project", "columns=\"z=b*2\"", SL_EOVERFLOW, "position 4");
    expect_run_error(e, tb, "filter", "where=\"b - -1 > 0\"", SL_EOVERFLOW, "overflow");
    expect_run_error(e, ts, "project", "columns=\"z=-b\"", SL_EOVERFLOW, "overflow");
    expect_run_error(e, ts, "project", "columns=\"z=b - 1\"", SL_EOVERFLOW, "row 1");
    expect_run_error(e, ts, "project", "columns=\"z=b / -1\"", SL_EOVERFLOW, "overflow");
    expect_run_error(e, tb, "project", "columns=\"z=CAST(b AS int32)\"", SL_EOVERFLOW, "int32");
    expect_run_error(e, tb, "project", "columns=\"z=CAST(CAST(b AS float64) * 4 AS int64)\"",
                     SL_EOVERFLOW, "out of range");
    /* The engine still works, and INT64_MIN % -1 is 0, not a trap. */
    sl_table_t *r = run_on(e, ts, "project", "columns=\"m=b % -1, q=b / 0, b\"", NULL, NULL, 0);
    struct gcol m, q;
    gcol_read(r, "m", &m);
    gcol_read(r, "q", &q);
    for (int i = 0; i < 3; i++)
        assert_true(m.valid[i] && m.i[i] == 0 && !q.valid[i]);
    gcol_free(&m);
    gcol_free(&q);
    sl_table_unref(r);
    /* Overflow in a NULL row is not an error. */
    const int64_t with_null[] = {1, INT64_MIN + 1, 2};
    sl_table_t *tn = int_table(with_null, 3);
    r = run_on(e, tn, "project", "columns=\"z=b+1, w=b*b\"", NULL, NULL, 0);
    gcol_read(r, "z", &m);
    assert_true(m.valid[0] && m.i[0] == 2 && !m.valid[1] && m.valid[2] && m.i[2] == 3);
    gcol_free(&m);
    sl_table_unref(r);
    sl_table_unref(tn);
    sl_table_unref(tb);
    sl_table_unref(ts);
    gt_close(e);
}

/* ---------------- bind errors ---------------- */

static void expect_bind(const char *op, const char *opts, int code, const char *needle)
{
    const int64_t vals[] = {1};
    static const char *const names[] = {"id", "a", "b", "x", "y"};
    static const enum sl_type types[] = {SL_TYPE_INT64, SL_TYPE_INT32, SL_TYPE_INT64,
                                         SL_TYPE_FLOAT64, SL_TYPE_FLOAT32};
    (void)vals;
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    sl_batch_t *bt;
    SL_ASSERT_OK(sl_batch_create(&bt, 5, names, types, 0));
    SL_ASSERT_OK(sl_table_append(t, bt));
    sl_batch_unref(bt);
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int s, o;
    SL_ASSERT_OK(sl_plan_add_table(p, t, &s));
    int rc = sl_plan_add(p, op, &s, 1, opts, &o);
    const char *msg = rc ? sl_plan_errmsg(p) : "";
    if (rc != code)
        fail_msg("%s(%s): returned %d (%s), expected %s; message: %s", op, opts, rc,
                 sl_err_name(rc), sl_err_name(code), msg);
    if (!strstr(msg, needle))
        fail_msg("%s(%s): message '%s' does not mention '%s'", op, opts, msg, needle);
    print_message("%-50s -> %s\n", opts, msg);
    sl_plan_destroy(p);
    sl_table_unref(t);
}

SL_TEST(parse_errors)
{
    expect_bind("filter", "where=\"\"", SL_EPARSE, "empty expression");
    expect_bind("filter", "where=\"a >\"", SL_EPARSE, "position 4");
    expect_bind("filter", "where=\"a > > 1\"", SL_EPARSE, "position 5");
    expect_bind("filter", "where=\"(a > 1\"", SL_EPARSE, "not closed");
    expect_bind("filter", "where=\"a > 1)\"", SL_EPARSE, "without a matching");
    expect_bind("filter", "where=\"a > 1 && b < 2\"", SL_EPARSE, "AND");
    expect_bind("filter", "where=\"a > 1 || b < 2\"", SL_EPARSE, "OR");
    expect_bind("filter", "where=\"a IN 1, 2\"", SL_EPARSE, "IN (1, 2, 3)");
    expect_bind("filter", "where=\"a IN (1, b)\"", SL_EPARSE, "literals");
    expect_bind("filter", "where=\"a IN (1 2)\"", SL_EPARSE, "',' or ')'");
    expect_bind("filter", "where=\"CAST(a int64) > 1\"", SL_EPARSE, "AS");
    expect_bind("filter", "where=\"CAST(a AS texty) > 1\"", SL_EPARSE, "int8..int64");
    expect_bind("filter", "where=\"a = 'x\"", SL_EPARSE, "unterminated");
    expect_bind("filter", "where=\"1abc > 2\"", SL_EPARSE, "malformed number");
    expect_bind("filter", "where=\"a IS 3\"", SL_EPARSE, "IS NULL");
    expect_bind("filter", "where=\"a < b < 3\"", SL_EPARSE, "AND");
    expect_bind("filter", "where=\"a ! b\"", SL_EPARSE, "NOT");
    expect_bind("filter", "where=\"99999999999999999999 > a\"", SL_EPARSE, "int64");
    expect_bind("filter", "where=\"a > 1 b\"", SL_EPARSE, "position 7");
    expect_bind("filter", "where=\"a @ 1\"", SL_EPARSE, "'@'");
    expect_bind("filter", "where=\"a NOT 1\"", SL_EPARSE, "NOT IN");
    expect_bind("filter", "where=\"()\"", SL_EPARSE, "')'");
    expect_bind("project", "columns=\"a,, b\"", SL_EPARSE, "empty column");
    expect_bind("project", "columns=\"a, c=b+\"", SL_EPARSE, "position 8");
    expect_bind("project", "columns=\"\"", SL_EPARSE, "empty column");
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

SL_TEST(name_and_type_errors)
{
    expect_bind("filter", "where=\"zz > 1\"", SL_ENOTFOUND, "unknown column 'zz'");
    expect_bind("filter", "where=\"a > 1 AND zz = 2\"", SL_ENOTFOUND, "position 11");
    expect_bind("filter", "where=\"a > 1.5e0\"", SL_ETYPE, "CAST");
    expect_bind("filter", "where=\"x > a\"", SL_ETYPE, "column a (int32)");
    expect_bind("filter", "where=\"a IN (1, 'x')\"", SL_ETYPE, "IN list compares");
    expect_bind("filter", "where=\"a IN (1.5e0)\"", SL_ETYPE, "float literals");
    expect_bind("filter", "where=\"a + 1\"", SL_ETYPE, "condition");
    expect_bind("filter", "where=\"a AND b > 1\"", SL_ETYPE, "AND");
    expect_bind("filter", "where=\"NOT a\"", SL_ETYPE, "NOT");
    expect_bind("filter", "where=\"-(a > 1) > 0\"", SL_ETYPE, "unary");
    expect_bind("filter", "where=\"(a > 1) + 1 > 0\"", SL_ETYPE, "cannot combine");
    expect_bind("filter", "where=\"CAST(a AS date32) > 1\"", SL_ETYPE, "CAST cannot");
    expect_bind("project", "columns=\"a, a\"", SL_EINVAL, "twice");
    expect_bind("project", "columns=\"c=zz * 2\"", SL_ENOTFOUND, "zz");
    expect_bind("project", "columns=\"c=x + b\"", SL_ETYPE, "mixes");
    /* Accepted: integer literals next to floats, float lists for float columns. */
    expect_bind("filter", "where=\"x > 1 AND y IN (1, -2) AND x * 2 < 3.5\"", SL_OK, "");
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

/* The evaluator alone: zero rows, literals only, deep nesting limits. */
SL_TEST(expr_eval_direct)
{
    struct sl__expr *e;
    char err[400];
    SL_ASSERT_OK(sl__expr_parse("1 + 2 * 3 - -4", 0, -1, &e, err, sizeof err));
    sl_schema_t *s = sl__schema_new(0);
    SL_ASSERT_OK(sl__expr_bind(e, s, err, sizeof err));
    assert_int_equal(sl__expr_type(e), SL_TYPE_INT64);
    struct sl__expr_scratch sc;
    SL_ASSERT_OK(sl__expr_scratch_init(&sc, e));
    sl_batch_t *b = sl__batch_new(s, 5);
    struct sl__expr_vec v;
    SL_ASSERT_OK(sl__expr_eval(e, b, 0, 5, &sc, &v, err, sizeof err));
    for (int i = 0; i < 5; i++)
        assert_int_equal(v.i[i], 11);
    assert_null(v.null);
    SL_ASSERT_OK(sl__expr_eval(e, b, 0, 0, &sc, &v, err, sizeof err));
    assert_int_equal(v.n, 0);
    sl__expr_scratch_fini(&sc);
    sl__expr_free(e);
    /* Keywords are case-insensitive; -9223372036854775808 is a literal. */
    SL_ASSERT_OK(sl__expr_parse("not (-9223372036854775808 < 0) or 1 in (1)", 0, -1, &e, err,
                                sizeof err));
    SL_ASSERT_OK(sl__expr_bind(e, s, err, sizeof err));
    SL_ASSERT_OK(sl__expr_scratch_init(&sc, e));
    SL_ASSERT_OK(sl__expr_eval(e, b, 0, 5, &sc, &v, err, sizeof err));
    assert_int_equal(v.vk, SL__VK_BOOL);
    assert_int_equal(v.b[4], 1);
    sl__expr_scratch_fini(&sc);
    sl__expr_free(e);
    /* Nesting: 150 parentheses parse, 1000 are refused cleanly. */
    char deep[2100];
    int n = 0;
    for (int i = 0; i < 150; i++)
        deep[n++] = '(';
    deep[n++] = '1';
    for (int i = 0; i < 150; i++)
        deep[n++] = ')';
    deep[n] = 0;
    SL_ASSERT_OK(sl__expr_parse(deep, 0, -1, &e, err, sizeof err));
    sl__expr_free(e);
    n = 0;
    for (int i = 0; i < 1000; i++)
        deep[n++] = '(';
    deep[n++] = '1';
    for (int i = 0; i < 1000; i++)
        deep[n++] = ')';
    deep[n] = 0;
    assert_int_equal(sl__expr_parse(deep, 0, -1, &e, err, sizeof err), SL_EPARSE);
    if (!strstr(err, "nested too deeply"))
        fail_msg("1000 parentheses: %s", err);
    sl_batch_unref(b);
    sl__schema_free(s);
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

/* Allocation failures anywhere in binding and running generator -> filter and
 * generator -> project fail cleanly: an error code, no crash, nothing leaked. */
static int run_failing(sl_engine_t *e, const char *src, const char *src_opts, const char *op,
                       const char *opts)
{
    sl_plan_t *p;
    int rc = sl_plan_create(&p);
    if (rc)
        return rc;
    int s, o;
    sl_query_t *q = NULL;
    if ((rc = sl_plan_add(p, src, NULL, 0, src_opts, &s)) == 0 &&
        (rc = sl_plan_add(p, op, &s, 1, opts, &o)) == 0 &&
        (rc = sl_plan_output(p, o, "r")) == 0 && (rc = sl_query_create(e, p, &q)) == 0 &&
        (rc = sl_query_run(q)) == 0) {
        sl_table_t *t;
        if ((rc = sl_query_result(q, "r", &t)) == 0)
            sl_table_unref(t);
    }
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return rc;
}

SL_TEST(allocation_failures)
{
    sl_test_config_off(1); /* 400 failure points are for 500-row morsels */
    sl_engine_t *e = gt_open(2, 500);
    int failed = 0, ok = 0;
    for (int64_t n = 0; n < 400; n++) {
        sl__mem_fail_after(n);
        int rc = run_failing(e, "gen.keys", "rows=3000 null_rate=0.1 payloads=2", "filter",
                             "where=\"k % 3 = 1 OR p1 IN (32, 63) AND NOT p2 > 50000\"");
        sl__mem_fail_after(n);
        int rc2 = run_failing(e, "gen.uniform", "rows=3000 type=int64 min=-9 max=9 null_rate=0.2",
                              "project", "columns=\"x, y = x * 2 + 1, z = x / (x - 1), w = x > 0\"");
        sl__mem_fail_after(-1);
        failed += (rc != 0) + (rc2 != 0);
        ok += (rc == 0) + (rc2 == 0);
        if ((rc && rc != SL_ENOMEM) || (rc2 && rc2 != SL_ENOMEM))
            fail_msg("after %lld allocations: %s / %s", (long long)n, sl_err_name(rc),
                     sl_err_name(rc2));
    }
    print_message("%d runs failed cleanly, %d succeeded\n", failed, ok);
    assert_true(failed > 0 && ok > 0);
    /* The engine still works. */
    assert_int_equal(run_failing(e, "gen.keys", "rows=100", "filter", "where=\"k >= 0\""), 0);
    gt_close(e);
}
