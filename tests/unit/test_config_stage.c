/* What a configuration stage of CI changes (tests/configs/, scripts/test_config.sh): the
 * options its file sets are in effect in an engine a test opens, over the values the test
 * set, and reach the query's pipelines; in the default run the test's own values are.
 * scripts/test_config.sh names the configuration in SLUICE_TEST_CONFIG, and this case
 * fails unless that configuration changes at least one option from the default run's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/sluice.h>

#include "sl_test.h"

/* What the test sets, as the tests that run queries do. */
static void test_settings(struct sl_engine_config *cfg)
{
    sl_engine_config_init(cfg);
    cfg->n_threads = 2;
    cfg->n_gpus = 0;
    cfg->placement = SL_PLACE_AUTO;
    cfg->morsel_rows_cpu = 1000;
    cfg->morsel_rows_gpu = 50000;
}

/* The option's value in an engine opened, without the harness, with the test's settings
 * and `value` (if not NULL) for it. */
static void engine_value(const char *name, const char *value, char *out, size_t n)
{
    struct sl_engine_config cfg;
    test_settings(&cfg);
    if (value)
        SL_ASSERT_OK(sl_engine_config_set(&cfg, name, value));
    sl_engine_t *e;
    SL_ASSERT_OK(sl_engine_open(&e, &cfg));
    SL_ASSERT_OK(sl_engine_option_get(e, name, out, n));
    sl_engine_close(e);
}

SL_TEST(stage_options_in_effect)
{
    static const char *const names[] = {"placement", "gpus", "morsel_rows",
                                        "gpu_morsel_rows", "gpu_mem", "host_mem"};
    struct sl_engine_config cfg;
    test_settings(&cfg);
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    int changed = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char want[64], got[64], base[64];
        const char *forced = sl_test_forced_option(names[i]);
        engine_value(names[i], forced, want, sizeof want);
        engine_value(names[i], NULL, base, sizeof base);
        SL_ASSERT_OK(sl_engine_option_get(e, names[i], got, sizeof got));
        assert_string_equal(got, want);
        if (strcmp(got, base) != 0) {
            changed++;
            printf("%s = %s (the test set %s)\n", names[i], got, base);
        }
    }
    /* The query cuts the morsels the engine says. */
    sl_plan_t *p = sl_test_plan_parse("n = gen.sequence rows=100000 column=x\n"
                                      "s = aggregate.sum(n) column=x\noutput s\n");
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    const struct sl_explain *ex;
    SL_ASSERT_OK(sl_query_explain(q, &ex));
    char morsel[64];
    SL_ASSERT_OK(sl_engine_option_get(e, "morsel_rows", morsel, sizeof morsel));
    assert_int_equal(ex->pipelines[0].morsel_rows, strtoll(morsel, NULL, 10));
    sl_query_destroy(q);
    sl_plan_destroy(p);
    /* A forced host budget binds: a result of twice its size fails with SL_EBUDGET. */
    const char *host = sl_test_forced_option("host_mem");
    if (host) {
        char text[160], budget[64];
        SL_ASSERT_OK(sl_engine_option_get(e, "host_mem", budget, sizeof budget));
        snprintf(text, sizeof text, "n = gen.sequence rows=%lld column=x\noutput n\n",
                 strtoll(budget, NULL, 10) / 4);
        p = sl_test_plan_parse(text);
        SL_ASSERT_OK(sl_query_create(e, p, &q));
        assert_int_equal(sl_query_run(q), SL_EBUDGET);
        sl_query_destroy(q);
        sl_plan_destroy(p);
    }
    sl_engine_close(e);

    const char *stage = getenv("SLUICE_TEST_CONFIG");
    if (stage && *stage) {
        printf("configuration %s changes %d option(s)\n", stage, changed);
        if (!changed)
            fail_msg("configuration %s sets no option: its stage reruns the default run", stage);
    } else {
        assert_int_equal(changed, 0); /* the default run sets no option from outside */
    }
}
