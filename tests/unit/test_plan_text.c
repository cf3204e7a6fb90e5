/* Tests plan files: valid text builds the same plan as the C API, and malformed text
 * gives the right code and a message with line and column, leaving nothing leaked. */
#include <string.h>

#include "internal.h"
#include "sl_test.h"

static void assert_no_leaks(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

SL_TEST(valid_plan_runs)
{
    const char *text = "# a comment line\n"
                       "\n"
                       "nums = gen.sequence rows=1000 start=1 column=v   # trailing comment\n"
                       "  total=aggregate.sum( nums ) column=\"v\"\n"
                       "output total as result\r\n"
                       "place total cpu\n";
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    SL_ASSERT_OK(sl_plan_parse(p, text, "t.plan"));
    assert_int_equal(sl_plan_num_nodes(p), 2);
    assert_string_equal(sl_plan_output_name(p, 1), "result");
    assert_null(sl_plan_output_name(p, 0));
    assert_string_equal(sl_plan_node_op(p, 0), "gen.sequence");
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = 2;
    cfg.n_gpus = 0;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    assert_non_null(strstr(sl_query_explain_json(q), "\"source\":\"gen.sequence\""));
    SL_ASSERT_OK(sl_query_run(q));
    sl_table_t *t;
    SL_ASSERT_OK(sl_query_result(q, "result", &t));
    struct sl_column c;
    SL_ASSERT_OK(sl_batch_column(sl_table_batch(t, 0), 1, &c));
    assert_int_equal(((const int64_t *)c.data)[0], 500500);
    sl_table_unref(t);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_engine_close(e);
    assert_no_leaks();
}

struct bad_case {
    const char *text;
    int code;
    const char *where;  /* "line:col" expected in the message */
    const char *words;  /* expected in the message */
};

static const struct bad_case bad[] = {
    {"a gen.sequence rows=1\n", SL_EPARSE, ":1:3:", "expected '='"},
    {"a = \n", SL_EPARSE, ":1:5:", "operator name"},
    {"a = gen.sequense rows=1\n", SL_ENOTFOUND, ":1:5:", "no operator named 'gen.sequense'"},
    {"a = gen.sequence\n", SL_EINVAL, ":1:", "required"},
    {"a = gen.sequence rows=1 colour=red\n", SL_EINVAL, ":1:", "colour"},
    {"a = gen.sequence rows=ten\n", SL_EINVAL, ":1:", "not an integer"},
    {"a = gen.sequence rows=1\nb = aggregate.sum(c) column=x\n", SL_EINVAL, ":2:19:", "unknown node 'c'"},
    {"a = gen.sequence rows=1\nb = aggregate.sum(a column=x\n", SL_EPARSE, ":2:", "expected ',' or ')'"},
    {"a = gen.sequence rows=1\nb = aggregate.sum(a) column=y\n", SL_ENOTFOUND, ":2:", "'y'"},
    {"a = gen.sequence rows=1\na = gen.sequence rows=2\n", SL_EINVAL, ":2:1:", "defined twice"},
    {"a = gen.sequence rows=1\noutput b\n", SL_EINVAL, ":2:8:", "unknown node 'b'"},
    {"a = gen.sequence rows=1\noutput a as\n", SL_EPARSE, ":2:", "output name"},
    {"a = gen.sequence rows=1\noutput a as x y\n", SL_EPARSE, ":2:", "unexpected text"},
    {"a = gen.sequence rows=1\noutput a\noutput a as a\n", SL_EEXIST, ":3:", "used twice"},
    {"a = gen.sequence rows=1\nplace a tpu\n", SL_EPARSE, ":2:9:", "not a placement"},
    {"a = gen.sequence rows=1\nplace a\n", SL_EPARSE, ":2:", "cpu, gpu or auto"},
    {"a = gen.sequence rows=1\nplace b gpu\n", SL_EINVAL, ":2:7:", "unknown node"},
    {"a = gen.sequence rows=1 column=\"x\n", SL_EPARSE, ":1:", "unterminated quote"},
    {"1a = gen.sequence rows=1\n", SL_EPARSE, ":1:1:", "expected a statement"},
    {"a = gen.sequence(x) rows=1\n", SL_EINVAL, ":1:18:", "unknown node 'x'"},
    {"a = gen.sequence rows=1\nb = aggregate.sum(a, a) column=x\n", SL_EINVAL, ":2:", "inputs"},
    {"a = gen.sequence rows=1 rows=2\n", SL_EINVAL, ":1:", "twice"},
    {"a = gen.sequence rows=1 =3\n", SL_EINVAL, ":1:", "key=value"},
    {"a = gen.sequence rows=1\n\n\n   b ! c\n", SL_EPARSE, ":4:6:", "expected '='"},
    {"a = gen.sequence type=float32 rows=1\n", SL_ETYPE, ":1:", "int32 or int64"},
    {"a = .x rows=1\n", SL_EPARSE, ":1:5:", "operator name"},
    {"output\n", SL_EPARSE, ":1:7:", "node to output"},
    {"a = aggregate.sum() column=x\n", SL_EINVAL, ":1:", "inputs"},
    {"a = gen.sequence rows=2^70\n", SL_EINVAL, ":1:", "out of range"},
    {"a = gen.sequence rows=99999999999999999999\n", SL_EINVAL, ":1:", "out of range"},
    {"a = gen.sequence rows=2^\n", SL_EINVAL, ":1:", "not an integer"},
    {"a = aggregate.sum(a) column=x\n", SL_EINVAL, ":1:19:", "its own input"},
    {"a = gen.sequence rows=1 column=\"\"\nb = aggregate.sum(a) column=x\n", SL_ENOTFOUND, ":2:", "'x'"},
    {"x = gen.sequence rows=1\ny = gen.sequence(x) rows=1\n", SL_EINVAL, ":2:", "inputs"},
};

SL_TEST(malformed_plans_give_positioned_errors)
{
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sl_plan_t *p;
        SL_ASSERT_OK(sl_plan_create(&p));
        int rc = sl_plan_parse(p, bad[i].text, "bad.plan");
        const char *msg = sl_plan_errmsg(p);
        if (rc != bad[i].code || !strstr(msg, bad[i].where) || !strstr(msg, bad[i].words))
            fail_msg("case %zu: rc=%s msg=\"%s\" (expected %s, \"%s\", \"%s\")", i,
                     sl_err_name(rc), msg, sl_err_name(bad[i].code), bad[i].where, bad[i].words);
        assert_non_null(strstr(msg, "bad.plan:"));
        sl_plan_destroy(p);
    }
    assert_no_leaks();
}

SL_TEST(arbitrary_bytes_never_crash)
{
    /* A tiny fuzz loop (the real fuzz target comes with issue #9): random printable
     * and structural bytes must give SL_OK or an error, never a crash or a leak. */
    const char alphabet[] = "ab =(),.\"#\n\t\\x1^rowsgen.sequenceaggregate.sumoutputplacecpu";
    uint64_t s = 12345;
    char text[256];
    for (int iter = 0; iter < 3000; iter++) {
        int n = (int)(s % 200);
        for (int i = 0; i < n; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            text[i] = alphabet[(s >> 33) % (sizeof alphabet - 1)];
        }
        text[n] = 0;
        sl_plan_t *p;
        SL_ASSERT_OK(sl_plan_create(&p));
        int rc = sl_plan_parse(p, text, "fuzz");
        assert_true(rc <= 0);
        sl_plan_destroy(p);
        struct sl__mem_counters mc;
        sl__mem_counters(&mc);
        if (mc.live_allocs != 0)
            fail_msg("leak after parsing \"%s\" (rc %s)", text, sl_err_name(rc));
    }
    assert_no_leaks();
}

/* Plan text scans tables registered by name; unknown names, duplicates and a frozen
 * plan are errors, and the plan's references are dropped with it. */
SL_TEST(named_tables)
{
    const char *names[] = {"v"};
    enum sl_type types[] = {SL_TYPE_INT64};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 1, names, types, 100));
    int64_t *v = sl_batch_column_data(b, 0);
    for (int i = 0; i < 100; i++)
        v[i] = i + 1;
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    SL_ASSERT_OK(sl_table_append(t, b));
    sl_batch_unref(b);
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    SL_ASSERT_OK(sl_plan_register_table(p, "nums", t));
    assert_int_equal(sl_plan_register_table(p, "nums", t), SL_EEXIST);
    assert_int_equal(sl_plan_register_table(p, "", t), SL_EINVAL);
    assert_int_equal(sl_plan_register_table(p, "x", NULL), SL_EINVAL);
    sl_table_unref(t); /* the plan holds its own reference */
    assert_int_equal(sl_plan_parse(p, "a = scan.table name=missing\n", "t.plan"), SL_ENOTFOUND);
    assert_non_null(strstr(sl_plan_errmsg(p), "no table named 'missing'"));
    SL_ASSERT_OK(sl_plan_parse(p, "a = scan.table name=nums\n"
                                  "s = aggregate.sum(a) column=v\n"
                                  "output s as total\n", "t.plan"));
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = 2;
    cfg.n_gpus = 0;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_engine_open(&e, &cfg));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    assert_int_equal(sl_plan_register_table(p, "late", t), SL_ESTATE); /* frozen */
    SL_ASSERT_OK(sl_query_run(q));
    sl_table_t *r;
    SL_ASSERT_OK(sl_query_result(q, "total", &r));
    struct sl_column c;
    SL_ASSERT_OK(sl_batch_column(sl_table_batch(r, 0), 1, &c));
    assert_int_equal(((const int64_t *)c.data)[0], 5050);
    sl_table_unref(r);
    sl_query_destroy(q);
    sl_engine_close(e);
    sl_plan_destroy(p);
    assert_no_leaks();
}
