/* Helpers shared by the expression tests. */
#ifndef SLUICE_TEST_EXPR_UTIL_H
#define SLUICE_TEST_EXPR_UTIL_H

#include "../gen/gen_test_util.h"

/* Runs table -> op(opts) and returns the result. On failure (at bind or run) returns
 * NULL with *rc_out and msg set; with rc_out NULL a failure fails the test. */
static inline sl_table_t *run_on(sl_engine_t *e, sl_table_t *in, const char *op, const char *opts,
                                 int *rc_out, char *msg, size_t msg_len)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int s, o;
    SL_ASSERT_OK(sl_plan_add_table(p, in, &s));
    int rc = sl_plan_add(p, op, &s, 1, opts, &o);
    if (rc != SL_OK) {
        if (!rc_out)
            fail_msg("%s(%s): %s", op, opts, sl_plan_errmsg(p));
        snprintf(msg, msg_len, "%s", sl_plan_errmsg(p));
        *rc_out = rc;
        sl_plan_destroy(p);
        return NULL;
    }
    SL_ASSERT_OK(sl_plan_output(p, o, "r"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    rc = sl_query_run(q);
    sl_table_t *r = NULL;
    if (rc == SL_OK)
        SL_ASSERT_OK(sl_query_result(q, "r", &r));
    else if (!rc_out)
        fail_msg("%s(%s) failed: %s", op, opts, sl_query_errmsg(q));
    if (msg)
        snprintf(msg, msg_len, "%s", rc ? sl_query_errmsg(q) : "");
    if (rc_out)
        *rc_out = rc;
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return r;
}

#endif /* SLUICE_TEST_EXPR_UTIL_H */
