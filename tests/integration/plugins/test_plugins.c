/* Tests plugin loading and the operator ABI version 1 (include/sluice/plugin.h): the v1
 * fixture plugin (abi_v1/fixture_v1.c) loads and runs through the API and in a plan
 * file; each way a load can fail gives its code and a clear message, registers nothing
 * and leaves the engine usable; the host table is complete; and the example plugin's
 * topk (examples/plugin/topk.c) matches a plain reference on random inputs.
 *
 * This program links sluice statically (sl__ symbols are hidden in the shared library),
 * so it also shows that plugins load into an embedder without sluice's symbols: the
 * plugins are linked with -z defs and reach sluice only through the host table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin_int.h"
#include "sl_test.h"

#define PLUGIN(name) SL_FIXTURE_DIR "/" name

static void assert_no_leaks(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

static sl_engine_t *open_engine(int threads)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = threads;
    cfg.n_gpus = 0;
    cfg.morsel_rows_cpu = 1000; /* many tasks, so sinks run on several workers */
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    return e;
}

/* Runs `plan` and returns its output `name` (caller unrefs). */
static sl_table_t *run_plan(sl_engine_t *e, sl_plan_t *plan, const char *name)
{
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, plan, &q));
    int rc = sl_query_run(q);
    if (rc != SL_OK)
        fail_msg("query failed: %s", sl_query_errmsg(q));
    sl_table_t *t;
    SL_ASSERT_OK(sl_query_result(q, name, &t));
    sl_query_destroy(q);
    return t;
}

static int64_t cell_i64(sl_table_t *t, int col, int64_t row)
{
    for (int64_t b = 0; b < sl_table_num_batches(t); b++) {
        sl_batch_t *batch = sl_table_batch(t, b);
        if (row < sl_batch_num_rows(batch)) {
            struct sl_column c;
            SL_ASSERT_OK(sl_batch_column(batch, col, &c));
            return ((const int64_t *)c.data)[c.offset + row];
        }
        row -= sl_batch_num_rows(batch);
    }
    fail_msg("row out of range");
    return 0;
}

/* count and sum of fixture.range rows=n -> fixture.add k -> aggregate.sum. */
static void check_fixture_sum(sl_engine_t *e, int64_t n, int64_t k)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    char opts[64];
    snprintf(opts, sizeof opts, "rows=%lld", (long long)n);
    int r, a, s;
    SL_ASSERT_OK(sl_plan_add(p, "fixture.range", NULL, 0, opts, &r));
    snprintf(opts, sizeof opts, "k=%lld", (long long)k);
    SL_ASSERT_OK(sl_plan_add(p, "fixture.add", &r, 1, opts, &a));
    SL_ASSERT_OK(sl_plan_add(p, "aggregate.sum", &a, 1, "column=x", &s));
    SL_ASSERT_OK(sl_plan_output(p, s, "out"));
    sl_table_t *t = run_plan(e, p, "out");
    assert_int_equal(cell_i64(t, 0, 0), n);
    if (n > 0)
        assert_int_equal(cell_i64(t, 1, 0), n * (n - 1) / 2 + k * n);
    sl_table_unref(t);
    sl_plan_destroy(p);
}

SL_TEST(fixture_runs_through_api)
{
    SL_ASSERT_OK(sl_plugin_load(PLUGIN("fixture_v1.so")));
    SL_ASSERT_OK(sl_plugin_load(PLUGIN("fixture_v1.so"))); /* already loaded: a no-op */
    const struct sl_op_def *d = sl_registry_find(sl_registry_global(), "fixture.add");
    assert_non_null(d);
    assert_int_equal(d->abi_version, 1);
    sl_engine_t *e = open_engine(4);
    check_fixture_sum(e, 0, 3);
    check_fixture_sum(e, 1, 3);
    check_fixture_sum(e, 123457, -7);
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(fixture_runs_in_plan_file)
{
    SL_ASSERT_OK(sl_plugin_load(PLUGIN("fixture_v1.so")));
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    const char *text = "r = fixture.range rows=5000\n"
                       "a = fixture.add(r) k=2 column=x\n"
                       "s = aggregate.sum(a) column=x\n"
                       "output s as out\n";
    int rc = sl_plan_parse(p, text, "fixture.plan");
    if (rc != SL_OK)
        fail_msg("%s", sl_plan_errmsg(p));
    sl_engine_t *e = open_engine(2);
    sl_table_t *t = run_plan(e, p, "out");
    assert_int_equal(cell_i64(t, 1, 0), 5000LL * 4999 / 2 + 2 * 5000);
    sl_table_unref(t);
    sl_plan_destroy(p);
    /* Its options are checked like a built-in's, before anything runs. */
    SL_ASSERT_OK(sl_plan_create(&p));
    assert_int_equal(sl_plan_parse(p, "r = fixture.range rows=5 colour=red\n", "bad.plan"),
                     SL_EINVAL);
    assert_non_null(strstr(sl_plan_errmsg(p), "colour"));
    sl_plan_destroy(p);
    sl_engine_close(e);
    assert_no_leaks();
}

/* Loads `file`, expects `code` and `needle` in the message, and that the engine and
 * the already-registered operators still work. */
static void expect_load_error(const char *file, int code, const char *needle)
{
    int rc = sl_plugin_load(file);
    const char *msg = sl_last_errmsg();
    if (rc != code || !strstr(msg, needle))
        fail_msg("loading %s: got %s '%s', want %s containing '%s'", file, sl_err_name(rc), msg,
                 sl_err_name(code), needle);
    sl_engine_t *e = open_engine(2);
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int g, s;
    SL_ASSERT_OK(sl_plan_add(p, "gen.sequence", NULL, 0, "rows=1000", &g));
    SL_ASSERT_OK(sl_plan_add(p, "aggregate.sum", &g, 1, "column=x", &s));
    SL_ASSERT_OK(sl_plan_output(p, s, "out"));
    sl_table_t *t = run_plan(e, p, "out");
    assert_int_equal(cell_i64(t, 1, 0), 999 * 1000 / 2);
    sl_table_unref(t);
    sl_plan_destroy(p);
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(newer_abi_refused)
{
    expect_load_error(PLUGIN("fixture_newer.so"), SL_EABI, "built for operator ABI 4");
    assert_null(sl_registry_find(sl_registry_global(), "fixnew.range"));
}

SL_TEST(undeclared_abi_refused)
{
    expect_load_error(PLUGIN("fixture_nodeclare.so"), SL_EABI, "did not declare");
    assert_null(sl_registry_find(sl_registry_global(), "fixnodecl.range"));
}

SL_TEST(missing_entry_refused)
{
    expect_load_error(PLUGIN("fixture_noentry.so"), SL_ENOTFOUND,
                      "exports neither sl_plugin_entry nor sl_fixture_noentry_entry");
}

SL_TEST(derived_entry_name)
{
    SL_ASSERT_OK(sl_plugin_load(PLUGIN("libfixture_named.so")));
    assert_non_null(sl_registry_find(sl_registry_global(), "fixnamed.range"));
}

SL_TEST(failing_entry_registers_nothing)
{
    expect_load_error(PLUGIN("fixture_fail.so"), SL_EINVAL, "entry failed with SL_EINVAL");
    assert_null(sl_registry_find(sl_registry_global(), "fixfail.range"));
    assert_null(sl_registry_find(sl_registry_global(), "fixfail.add"));
}

SL_TEST(duplicate_name_refused)
{
    SL_ASSERT_OK(sl_plugin_load(PLUGIN("fixture_v1.so")));
    expect_load_error(PLUGIN("fixture_dup.so"), SL_EEXIST,
                      "operator 'fixture.add' is already registered");
    /* The first plugin's operators are untouched. */
    sl_engine_t *e = open_engine(2);
    check_fixture_sum(e, 10, 1);
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(not_a_shared_object)
{
    char path[] = "/tmp/sluice_not_a_plugin_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "hello\n", 6), 6);
    close(fd);
    expect_load_error(path, SL_EFORMAT, "is not a shared object");
    unlink(path);
    expect_load_error("/nonexistent/plugin.so", SL_ENOTFOUND, "No such file");
    expect_load_error("/tmp", SL_EFORMAT, "not a regular file");
    assert_int_equal(sl_plugin_load(NULL), SL_EINVAL);
}

/* Definitions built for ABI 0 (before the freeze) or a newer one are refused. */
static int dummy_bind(sl_bind_t *b)
{
    (void)b;
    return SL_OK;
}

SL_TEST(registry_checks_versions)
{
    struct sl_op_def d = {.abi_version = 0, .name = "test.v0", .bind = dummy_bind};
    assert_int_equal(sl_registry_add(sl_registry_global(), &d), SL_EABI);
    assert_non_null(strstr(sl_last_errmsg(), "ABI 0"));
    d.abi_version = SL_OP_ABI_VERSION + 1;
    assert_int_equal(sl_registry_add(sl_registry_global(), &d), SL_EABI);
    assert_null(sl_registry_find(sl_registry_global(), "test.v0"));
}

/* sl_op_def.can_split came in version 2: a version 1 definition is never split, even if
 * the bytes past its end happen to be set (the host does not read them). */
SL_TEST(can_split_read_from_version_2_only)
{
    SL_ASSERT_OK(sl_plugin_load(PLUGIN("fixture_v1.so")));
    const struct sl_op_def *v1 = sl_registry_find(sl_registry_global(), "fixture.add");
    assert_non_null(v1);
    assert_int_equal(sl__op_call_can_split(v1, NULL), 0);
    const struct sl_op_def *f = sl_registry_find(sl_registry_global(), "filter");
    assert_non_null(f);
    assert_int_equal(sl__op_call_can_split(f, NULL), 1);
    struct sl_op_def old = *f;
    old.abi_version = 1;
    assert_int_equal(sl__op_call_can_split(&old, NULL), 0);
    old.abi_version = 2;
    old.can_split = NULL;
    assert_int_equal(sl__op_call_can_split(&old, NULL), 0);
}

SL_TEST(host_table_complete)
{
    const struct sl_host_api *h = sl__host_api();
    assert_int_equal(h->abi_version, SL_OP_ABI_VERSION);
    assert_int_equal(h->size, sizeof *h);
    /* Every member after the two header words is a function pointer, and set. */
    const char *base = (const char *)h + offsetof(struct sl_host_api, declare_abi);
    size_t n = (sizeof *h - offsetof(struct sl_host_api, declare_abi)) / sizeof(void (*)(void));
    for (size_t i = 0; i < n; i++) {
        void (*fn)(void);
        memcpy(&fn, base + i * sizeof fn, sizeof fn);
        if (!fn)
            fail_msg("host table member %zu is NULL", i);
    }
    assert_true(h->task_emit == sl_task_emit && h->batch_device == sl_batch_device);
}

/* ---- topk from examples/plugin against a reference ---- */

static uint64_t rng_next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 17;
}

struct topk_case {
    int64_t rows, k;
    int64_t key_range; /* keys drawn from [0, key_range): small ranges give ties */
    bool asc, float_key, nulls;
};

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* Input: id int64 (unique, = row), v (int32 or float64 key, some null), w = 3*id. */
static sl_table_t *make_input(const struct topk_case *tc, double *keys, bool *valid, uint64_t seed)
{
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    const char *names[] = {"id", "v", "w"};
    enum sl_type types[] = {SL_TYPE_INT64, tc->float_key ? SL_TYPE_FLOAT64 : SL_TYPE_INT32,
                            SL_TYPE_INT64};
    int64_t done = 0;
    do { /* several batches of uneven size, and one empty batch when rows == 0 */
        int64_t n = tc->rows - done < 1777 ? tc->rows - done : 1777;
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, 3, names, types, n));
        int64_t *id = sl_batch_column_data(b, 0), *w = sl_batch_column_data(b, 2);
        uint8_t *vmask = tc->nulls && n > 0 ? sl_batch_column_validity(b, 1) : NULL;
        for (int64_t i = 0; i < n; i++) {
            int64_t row = done + i;
            id[i] = row;
            w[i] = 3 * row;
            int64_t r = (int64_t)(rng_next(&seed) % (uint64_t)tc->key_range) - tc->key_range / 2;
            if (tc->float_key) {
                double x = (double)r / 4;
                ((double *)sl_batch_column_data(b, 1))[i] = x;
                keys[row] = x;
            } else {
                ((int32_t *)sl_batch_column_data(b, 1))[i] = (int32_t)r;
                keys[row] = (double)r;
            }
            valid[row] = !(vmask && rng_next(&seed) % 5 == 0);
            if (!valid[row])
                vmask[i >> 3] &= (uint8_t)~(1u << (i & 7));
        }
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
        done += n;
    } while (done < tc->rows);
    return t;
}

static void check_topk(sl_engine_t *e, const struct topk_case *tc, uint64_t seed)
{
    double *keys = calloc((size_t)tc->rows + 1, sizeof *keys);
    bool *valid = calloc((size_t)tc->rows + 1, sizeof *valid);
    sl_table_t *in = make_input(tc, keys, valid, seed);
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int src, top;
    SL_ASSERT_OK(sl_plan_add_table(p, in, &src));
    char opts[96];
    snprintf(opts, sizeof opts, "column=v k=%lld order=%s", (long long)tc->k,
             tc->asc ? "asc" : "desc");
    SL_ASSERT_OK(sl_plan_add(p, "topk", &src, 1, opts, &top));
    SL_ASSERT_OK(sl_plan_output(p, top, "out"));
    sl_table_t *out = run_plan(e, p, "out");

    /* Reference: the valid keys, best first (asc: negate to reuse the sort), first k. */
    double *ref = calloc((size_t)tc->rows + 1, sizeof *ref);
    int64_t n_valid = 0;
    for (int64_t i = 0; i < tc->rows; i++)
        if (valid[i])
            ref[n_valid++] = tc->asc ? -keys[i] : keys[i];
    qsort(ref, (size_t)n_valid, sizeof *ref, cmp_desc);
    int64_t want = n_valid < tc->k ? n_valid : tc->k;
    assert_int_equal(sl_table_num_rows(out), want);

    bool *seen = calloc((size_t)tc->rows + 1, sizeof *seen);
    int64_t pos = 0;
    for (int64_t b = 0; b < sl_table_num_batches(out); b++) {
        sl_batch_t *batch = sl_table_batch(out, b);
        struct sl_column id, v, w;
        SL_ASSERT_OK(sl_batch_column(batch, 0, &id));
        SL_ASSERT_OK(sl_batch_column(batch, 1, &v));
        SL_ASSERT_OK(sl_batch_column(batch, 2, &w));
        assert_int_equal(v.type, tc->float_key ? SL_TYPE_FLOAT64 : SL_TYPE_INT32);
        for (int64_t i = 0; i < sl_batch_num_rows(batch); i++, pos++) {
            int64_t row = ((const int64_t *)id.data)[id.offset + i];
            double key = tc->float_key ? ((const double *)v.data)[v.offset + i]
                                       : ((const int32_t *)v.data)[v.offset + i];
            /* A real input row, each at most once, whole, with a valid key ... */
            assert_true(row >= 0 && row < tc->rows && !seen[row] && valid[row]);
            seen[row] = true;
            assert_true(key == keys[row]);
            assert_int_equal(((const int64_t *)w.data)[w.offset + i], 3 * row);
            /* ... in rank order: the multiset of kept keys is the reference's. */
            if ((tc->asc ? -key : key) != ref[pos])
                fail_msg("rank %lld: key %g, reference %g", (long long)pos, key,
                         tc->asc ? -ref[pos] : ref[pos]);
        }
    }
    assert_int_equal(pos, want);
    free(seen);
    free(ref);
    sl_table_unref(out);
    sl_plan_destroy(p);
    sl_table_unref(in);
    free(keys);
    free(valid);
}

SL_TEST(topk_matches_reference)
{
    SL_ASSERT_OK(sl_plugin_load(SL_EXAMPLE_PLUGIN));
    sl_engine_t *e = open_engine(4);
    const struct topk_case cases[] = {
        {.rows = 0, .k = 5, .key_range = 100},                       /* empty */
        {.rows = 1, .k = 5, .key_range = 100},                       /* one row */
        {.rows = 1, .k = 0, .key_range = 100},                       /* k = 0 */
        {.rows = 20000, .k = 10, .key_range = 1},                    /* all duplicates */
        {.rows = 20000, .k = 100, .key_range = 7},                   /* ties at the cut */
        {.rows = 20000, .k = 37, .key_range = 1 << 30},              /* distinct keys */
        {.rows = 20000, .k = 37, .key_range = 1000, .asc = true},    /* smallest first */
        {.rows = 20000, .k = 50, .key_range = 500, .float_key = true},
        {.rows = 20000, .k = 64, .key_range = 50, .nulls = true},    /* null keys skipped */
        {.rows = 3000, .k = 5000, .key_range = 100, .nulls = true},  /* k > rows */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_topk(e, &cases[i], 1234 + i);
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(topk_bad_options)
{
    SL_ASSERT_OK(sl_plugin_load(SL_EXAMPLE_PLUGIN));
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int g, t;
    SL_ASSERT_OK(sl_plan_add(p, "gen.sequence", NULL, 0, "rows=10", &g));
    assert_int_equal(sl_plan_add(p, "topk", &g, 1, "column=nope", &t), SL_ENOTFOUND);
    assert_int_equal(sl_plan_add(p, "topk", &g, 1, "column=x k=-1", &t), SL_EINVAL);
    assert_int_equal(sl_plan_add(p, "topk", &g, 1, "column=x order=up", &t), SL_EINVAL);
    assert_non_null(strstr(sl_plan_errmsg(p), "order must be desc or asc"));
    sl_plan_destroy(p);
    assert_no_leaks();
}
