/* Tests the messages of failing tasks: a run that returns a code sluice does not know
 * (a plugin's -1 or -errno) fails the query with SL_EINTERNAL and says which number it
 * was, instead of "SL_E?"/"unknown error"; a message that already starts with the
 * operator's name is not prefixed twice ("project: project: ..."). */
#include <string.h>

#include "sl_test.h"

#include <sluice/op.h>
#include <sluice/sluice.h>

static const struct sl_option_def fail_opts[] = {{"mode", SL_OPT_INT, "0", "0 or 1"}};

static int fail_bind(sl_bind_t *b)
{
    int64_t mode;
    int rc = sl_bind_option_int(b, "mode", &mode);
    if (rc < 0)
        return rc;
    sl_bind_set_data(b, (void *)(intptr_t)mode, NULL);
    sl_bind_set_rows(b, 1);
    return sl_bind_add_column(b, "k", SL_TYPE_INT64);
}

static int fail_run(sl_task_t *t)
{
    if ((intptr_t)sl_op_data(sl_task_op(t)) == 0)
        return -12345;
    return sl_task_fail(t, SL_EINVAL, "test.fail_task: named once");
}

static const struct sl_impl fail_impls[] = {{.device = SL_DEVICE_CPU, .run = fail_run}};
static const struct sl_phase fail_phase = {fail_impls, 1, NULL};
static const struct sl_op_def fail_def = {
    .abi_version = SL_OP_ABI_VERSION, .flags = SL_OP_SOURCE, .name = "test.fail_task",
    .doc = "a source whose task fails", .min_inputs = 0, .max_inputs = 0,
    .options = fail_opts, .n_options = 1, .bind = fail_bind, .source = &fail_phase,
};

static int run_mode(int mode, char *msg, size_t len)
{
    int rc = sl_registry_add(sl_registry_global(), &fail_def);
    assert_true(rc == SL_OK || rc == SL_EEXIST);
    char text[128];
    snprintf(text, sizeof text, "f = test.fail_task mode=%d\noutput f\n", mode);
    sl_plan_t *p = sl_test_plan_parse(text);
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = 1;
    cfg.n_gpus = 0;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    rc = sl_query_run(q);
    snprintf(msg, len, "%s", sl_query_errmsg(q));
    assert_string_not_equal(sl_err_name(rc), "SL_E?");
    assert_null(strstr(sl_query_profile_json(q), "SL_E?"));
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_engine_close(e);
    return rc;
}

SL_TEST(unknown_code_is_named)
{
    char msg[512];
    assert_int_equal(run_mode(0, msg, sizeof msg), SL_EINTERNAL);
    assert_non_null(strstr(msg, "-12345"));
    assert_non_null(strstr(msg, "not a sluice error code"));
}

SL_TEST(operator_name_not_doubled)
{
    char msg[512];
    assert_int_equal(run_mode(1, msg, sizeof msg), SL_EINVAL);
    assert_string_equal(msg, "test.fail_task: named once");
}
