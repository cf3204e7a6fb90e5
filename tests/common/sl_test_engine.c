/* sl_test_engine_open: how the test configurations (the .env files of tests/configs/, run by
 * scripts/test_config.sh) reach the engines the tests open. The library reads no
 * environment variable; this harness maps SLUICE_<NAME> onto the engine option NAME
 * explicitly, where the test kept the option's default, so that a test which sets an
 * option keeps it. `placement` is the exception: a configuration forces it over the
 * test's (force_cpu: no task on a GPU), as the configurations always have. */
#include <stdio.h>
#include <string.h>

#include <sluice/sluice.h>

#include "../../cli/option_env.h"
#include "sl_test.h"

static int test_kept_default(const struct sl_engine_config *cfg, const char *name)
{
    struct sl_engine_config dflt;
    sl_engine_config_init(&dflt);
    char have[256], want[256];
    return sl_engine_config_get(cfg, name, have, sizeof have) == SL_OK &&
           sl_engine_config_get(&dflt, name, want, sizeof want) == SL_OK &&
           strcmp(have, want) == 0;
}

static int set_from_env(void *cfg, const char *name, const char *var, const char *value)
{
    if (strcmp(name, "placement") != 0 && !test_kept_default(cfg, name))
        return 0;
    int rc = sl_engine_config_set(cfg, name, value);
    if (rc != SL_OK)
        fprintf(stderr, "test config: %s: %s\n", var, sl_last_errmsg());
    return rc;
}

int sl_test_config_from_env(struct sl_engine_config *cfg)
{
    return option_env_foreach(set_from_env, cfg);
}

int sl_test_engine_open(sl_engine_t **out, const struct sl_engine_config *cfg)
{
    struct sl_engine_config c;
    if (cfg && cfg->size != sizeof c) /* a test of the size check itself */
        return sl_engine_open(out, cfg);
    if (cfg)
        c = *cfg;
    else
        sl_engine_config_init(&c);
    int rc = sl_test_config_from_env(&c);
    if (rc != SL_OK) {
        *out = NULL;
        return rc;
    }
    return sl_engine_open(out, &c);
}

sl_plan_t *sl_test_plan_parse(const char *text)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    if (sl_plan_parse(p, text, "t.plan") != SL_OK)
        fail_msg("parse: %s", sl_plan_errmsg(p));
    return p;
}
