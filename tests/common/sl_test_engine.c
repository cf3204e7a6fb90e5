/* sl_test_engine_open: how the test configurations (the .env files of tests/configs/, run by
 * scripts/test_config.sh) reach the engines the tests open. The library reads no
 * environment variable; this harness maps SLUICE_<NAME> onto the engine option NAME
 * explicitly, over whatever the test set, so that a configuration stage changes what
 * every test runs with (a test that depends on a value reads sl_test_forced_option). */
#include <stdio.h>
#include <string.h>

#include <sluice/sluice.h>

#include "../../cli/option_env.h"
#include "sl_test.h"

static int config_off;

void sl_test_config_off(int on)
{
    config_off = on;
}

static int set_from_env(void *cfg, const char *name, const char *var, const char *value)
{
    int rc = sl_engine_config_set(cfg, name, value);
    if (rc != SL_OK)
        fprintf(stderr, "test config: %s: %s\n", var, sl_last_errmsg());
    return rc;
}

struct find {
    const char *name, *value;
};

static int find_option(void *user, const char *name, const char *var, const char *value)
{
    struct find *f = user;
    (void)var;
    if (strcmp(name, f->name) != 0)
        return 0;
    f->value = value;
    return 1;
}

const char *sl_test_forced_option(const char *name)
{
    struct find f = {name, NULL};
    option_env_foreach(find_option, &f);
    return f.value;
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
    int rc = config_off ? SL_OK : sl_test_config_from_env(&c);
    if (rc != SL_OK) {
        *out = NULL;
        return rc;
    }
    return sl_engine_open(out, &c);
}

char *sl_test_read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

sl_plan_t *sl_test_plan_parse(const char *text)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    if (sl_plan_parse(p, text, "t.plan") != SL_OK)
        fail_msg("parse: %s", sl_plan_errmsg(p));
    return p;
}

static sl_engine_t *cpu_engine(int threads, int64_t morsel_rows, int64_t host_mem)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = threads;
    cfg.n_gpus = 0;
    cfg.morsel_rows_cpu = morsel_rows;
    cfg.host_mem_limit = host_mem;
    sl_engine_t *e = NULL;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    return e;
}

sl_engine_t *sl_test_cpu_engine(int threads, int64_t morsel_rows)
{
    return cpu_engine(threads, morsel_rows, 0);
}

sl_engine_t *sl_test_cpu_engine_budget(int threads, int64_t host_mem)
{
    return cpu_engine(threads, 0, host_mem);
}
