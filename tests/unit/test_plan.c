/* Tests plan building: option parsing and checking, binding errors reported before
 * anything runs, frozen plans, outputs. */
#include <string.h>

#include "internal.h"
#include "plan_int.h"
#include "sl_test.h"

static void assert_no_leaks(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

SL_TEST(options_parse)
{
    struct sl__opts o;
    char err[128];
    SL_ASSERT_OK(sl__opts_parse("rows=10, column=\"a b\\\"c\"  seed=7", &o, err, sizeof err));
    assert_int_equal(o.n, 3);
    assert_string_equal(sl__opts_get(&o, "rows"), "10");
    assert_string_equal(sl__opts_get(&o, "column"), "a b\"c");
    assert_string_equal(sl__opts_get(&o, "seed"), "7");
    assert_null(sl__opts_get(&o, "x"));
    sl__opts_free(&o);
    assert_int_equal(sl__opts_parse("rows", &o, err, sizeof err), SL_EINVAL);
    assert_non_null(strstr(err, "key=value"));
    assert_int_equal(sl__opts_parse("a=1 a=2", &o, err, sizeof err), SL_EINVAL);
    assert_non_null(strstr(err, "twice"));
    assert_int_equal(sl__opts_parse("a=\"open", &o, err, sizeof err), SL_EINVAL);
    assert_non_null(strstr(err, "unterminated"));
    SL_ASSERT_OK(sl__opts_parse("", &o, err, sizeof err));
    assert_int_equal(o.n, 0);
    assert_no_leaks();
}

SL_TEST(plan_errors_name_the_operator)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int n;
    assert_int_equal(sl_plan_add(p, "no.such_op", NULL, 0, "", &n), SL_ENOTFOUND);
    assert_non_null(strstr(sl_plan_errmsg(p), "no.such_op"));
    assert_int_equal(sl_plan_add(p, "gen.sequence", NULL, 0, "", &n), SL_EINVAL);
    assert_non_null(strstr(sl_plan_errmsg(p), "rows"));
    assert_int_equal(sl_plan_add(p, "gen.sequence", NULL, 0, "rows=10 colour=red", &n),
                     SL_EINVAL);
    assert_non_null(strstr(sl_plan_errmsg(p), "colour"));
    assert_int_equal(sl_plan_add(p, "gen.sequence", NULL, 0, "rows=ten", &n), SL_EINVAL);
    assert_non_null(strstr(sl_plan_errmsg(p), "not an integer"));
    assert_int_equal(sl_plan_add(p, "gen.sequence", NULL, 0, "rows=10 type=float32", &n),
                     SL_ETYPE);
    SL_ASSERT_OK(sl_plan_add(p, "gen.sequence", NULL, 0, "rows=2^10", &n));
    int in[] = {n};
    int a;
    assert_int_equal(sl_plan_add(p, "aggregate.sum", in, 1, "column=y", &a), SL_ENOTFOUND);
    assert_non_null(strstr(sl_plan_errmsg(p), "'y'"));
    int bad[] = {5};
    assert_int_equal(sl_plan_add(p, "aggregate.sum", bad, 1, "column=x", &a), SL_EINVAL);
    assert_int_equal(sl_plan_add(p, "aggregate.sum", NULL, 0, "column=x", &a), SL_EINVAL);
    SL_ASSERT_OK(sl_plan_add(p, "aggregate.sum", in, 1, "column=x", &a));
    assert_int_equal(sl_plan_num_nodes(p), 2);
    const sl_schema_t *s = sl_plan_node_schema(p, a);
    assert_int_equal(sl_schema_num_fields(s), 2);
    assert_int_equal(sl_schema_find(s, "sum"), 1);
    SL_ASSERT_OK(sl_plan_output(p, a, "out"));
    assert_int_equal(sl_plan_output(p, n, "out"), SL_EEXIST);
    /* A node may be several outputs (since 0.3); names stay unique. */
    SL_ASSERT_OK(sl_plan_output(p, a, "out2"));
    assert_int_equal(sl_plan_output(p, a, "out2"), SL_EEXIST);
    assert_int_equal(sl_plan_num_outputs(p), 2);
    int node = -1;
    assert_string_equal(sl_plan_output_at(p, 1, &node), "out2");
    assert_int_equal(node, a);
    assert_null(sl_plan_output_at(p, 2, &node));
    assert_string_equal(sl_plan_output_name(p, a), "out");
    sl_plan_destroy(p);
    assert_no_leaks();
}

SL_TEST(int_option_forms)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int n;
    SL_ASSERT_OK(sl_plan_add(p, "gen.sequence", NULL, 0, "rows=2^24", &n));
    SL_ASSERT_OK(sl_plan_add(p, "gen.sequence", NULL, 0, "rows=3k", &n));
    assert_int_equal(sl_plan_add(p, "gen.sequence", NULL, 0, "rows=2^99", &n), SL_EINVAL);
    assert_int_equal(sl_plan_add(p, "gen.sequence", NULL, 0, "rows=-5", &n), SL_EINVAL);
    assert_int_equal(sl_plan_add(p, "gen.sequence", NULL, 0,
                                 "rows=10 type=int32 start=2147483640", &n), SL_EOVERFLOW);
    sl_plan_destroy(p);
    assert_no_leaks();
}
