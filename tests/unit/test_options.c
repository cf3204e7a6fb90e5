/* Tests engine options by name (option.h): the list and its defaults, set and get on a
 * config, an open engine and a plan (plan-file `set` lines too), unknown names, bad
 * values and ranges, open options refused on an open engine, what operators read through
 * sl_task_option_*, that the library ignores the environment (an embedder's placement
 * stays), and the test harness's mapping of SLUICE_<NAME> onto options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "sl_test.h"

static void assert_no_leaks(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

static void assert_cfg_value(const struct sl_engine_config *cfg, const char *name,
                             const char *want)
{
    char got[256];
    SL_ASSERT_OK(sl_engine_config_get(cfg, name, got, sizeof got));
    if (strcmp(got, want) != 0)
        fail_msg("option %s is '%s', want '%s'", name, got, want);
}

static void assert_eng_value(sl_engine_t *e, const char *name, const char *want)
{
    char got[256];
    SL_ASSERT_OK(sl_engine_option_get(e, name, got, sizeof got));
    if (strcmp(got, want) != 0)
        fail_msg("engine option %s is '%s', want '%s'", name, got, want);
}

static void assert_fails(int rc, int want, const char *fragment)
{
    if (rc != want)
        fail_msg("returned %d (%s), want %s: %s", rc, sl_err_name(rc), sl_err_name(want),
                 sl_last_errmsg());
    if (!strstr(sl_last_errmsg(), fragment))
        fail_msg("message '%s' lacks '%s'", sl_last_errmsg(), fragment);
}

static sl_engine_t *open_engine(void)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "threads", "2"));
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "gpus", "0"));
    sl_engine_t *e;
    SL_ASSERT_OK(sl_engine_open(&e, &cfg)); /* not the harness: no test configuration */
    return e;
}

SL_TEST(list_is_complete_and_defaults_agree)
{
    int n = sl_engine_option_count();
    assert_true(n >= 19);
    assert_null(sl_engine_option_info(-1));
    assert_null(sl_engine_option_info(n));
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    for (int i = 0; i < n; i++) {
        const struct sl_engine_option_info *o = sl_engine_option_info(i);
        assert_non_null(o->name);
        assert_true(strlen(o->description) > 10);
        assert_ptr_equal(sl_engine_option_find(o->name), o);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(sl_engine_option_info(j)->name, o->name);
        /* the documented default is what sl_engine_config_init writes */
        assert_cfg_value(&cfg, o->name, o->default_value);
        assert_true((o->type == SL_ENGINE_OPT_ENUM) == (o->choices != NULL));
        if (strncmp(o->name, "debug_", 6) == 0)
            assert_true(o->flags & SL_ENGINE_OPT_DEBUG);
    }
    assert_null(sl_engine_option_find("no_such_option"));
}

SL_TEST(config_set_get_each_type)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "pin_threads", "off"));
    assert_int_equal(cfg.pin_threads, 0);
    assert_cfg_value(&cfg, "pin_threads", "false");
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "pin_threads", "YES"));
    assert_cfg_value(&cfg, "pin_threads", "true");
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "morsel_rows", "2^10"));
    assert_int_equal(cfg.morsel_rows_cpu, 1024);
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "gpu_mem", "3Gi"));
    assert_int_equal(cfg.gpu_mem_limit, (int64_t)3 << 30);
    assert_cfg_value(&cfg, "gpu_mem", "3221225472");
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "gpus", "-1"));
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "host_gbps", "42.5"));
    assert_true(cfg.host_gbps == 42.5);
    assert_cfg_value(&cfg, "host_gbps", "42.5");
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "placement", "CoProcess"));
    assert_int_equal(cfg.placement, SL_PLACE_COPROCESS);
    assert_cfg_value(&cfg, "placement", "coprocess");
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "trace", "/tmp/x.json"));
    assert_string_equal(cfg.trace_path, "/tmp/x.json");
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "trace", ""));
    assert_null(cfg.trace_path);
    assert_cfg_value(&cfg, "trace", "");
    /* a field written directly reads back by name */
    cfg.debug_ooc_sort_merge = 2;
    assert_cfg_value(&cfg, "debug_ooc_sort_merge", "gpu");
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "debug_ooc_sort_gather", "batch"));
    assert_int_equal(cfg.debug_ooc_sort_gather, 2);
    char small[3];
    assert_fails(sl_engine_config_get(&cfg, "placement", small, sizeof small), SL_EINVAL,
                 "buffer");
}

SL_TEST(unknown_names_and_bad_values)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    assert_fails(sl_engine_config_set(&cfg, "placment", "cpu"), SL_ENOTFOUND,
                 "did you mean 'placement'");
    assert_fails(sl_engine_config_set(&cfg, "xyzzy_frobnicate", "1"), SL_ENOTFOUND,
                 "no option named 'xyzzy_frobnicate'");
    char buf[64];
    assert_fails(sl_engine_config_get(&cfg, "nope", buf, sizeof buf), SL_ENOTFOUND, "nope");
    assert_fails(sl_engine_config_set(&cfg, "threads", "two"), SL_EINVAL, "not an integer");
    assert_fails(sl_engine_config_set(&cfg, "threads", "4x"), SL_EINVAL, "not an integer");
    assert_fails(sl_engine_config_set(&cfg, "threads", "-1"), SL_EINVAL, "out of range [0, 4096]");
    assert_fails(sl_engine_config_set(&cfg, "threads", "5000"), SL_EINVAL, "out of range");
    assert_fails(sl_engine_config_set(&cfg, "morsel_rows", "2^70"), SL_EINVAL, "out of range");
    assert_fails(sl_engine_config_set(&cfg, "debug_kmeans_method", "-2"), SL_EINVAL,
                 "out of range [-1, 63]");
    assert_fails(sl_engine_config_set(&cfg, "pin_threads", "maybe"), SL_EINVAL,
                 "not a boolean");
    assert_fails(sl_engine_config_set(&cfg, "placement", "tpu"), SL_EINVAL,
                 "not one of auto,cpu,gpu,coprocess");
    assert_fails(sl_engine_config_set(&cfg, "host_gbps", "fast"), SL_EINVAL, "not a number");
    assert_fails(sl_engine_config_set(&cfg, "host_gbps", "-3"), SL_EINVAL, "below the minimum");
    assert_fails(sl_engine_config_set(&cfg, "threads", NULL), SL_EINVAL, "NULL value");
    assert_fails(sl_engine_config_set(NULL, "threads", "1"), SL_EINVAL, "NULL config");
    /* nothing was changed by the failures */
    struct sl_engine_config dflt;
    sl_engine_config_init(&dflt);
    assert_memory_equal(&cfg, &dflt, sizeof cfg);
    /* a config of another size is refused, as sl_engine_open refuses it */
    cfg.size = 8;
    assert_fails(sl_engine_config_set(&cfg, "threads", "1"), SL_EABI, "config size");
    /* a field out of range written directly is refused when the engine opens */
    sl_engine_config_init(&cfg);
    cfg.coproc_cpu_workers = -3;
    sl_engine_t *e;
    assert_fails(sl_engine_open(&e, &cfg), SL_EINVAL, "option coproc_cpu_workers is out of range");
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(open_engine_get_set)
{
    sl_engine_t *e = open_engine();
    assert_eng_value(e, "threads", "2");
    assert_eng_value(e, "gpus", "0");
    assert_eng_value(e, "morsel_rows", "122880"); /* the default, resolved */
    assert_eng_value(e, "gpu_depth", "4");
    assert_eng_value(e, "placement", "auto");
    SL_ASSERT_OK(sl_engine_option_set(e, "morsel_rows", "4Ki"));
    assert_eng_value(e, "morsel_rows", "4096");
    SL_ASSERT_OK(sl_engine_option_set(e, "morsel_rows", "0"));
    assert_eng_value(e, "morsel_rows", "122880");
    SL_ASSERT_OK(sl_engine_option_set(e, "debug_join_phase_times", "on"));
    assert_eng_value(e, "debug_join_phase_times", "true");
    /* open options cannot change on an open engine; the value stays */
    int rc = sl_engine_option_set(e, "threads", "8");
    assert_fails(rc, SL_ESTATE, "option 'threads' is read when the engine opens");
    assert_non_null(strstr(sl_engine_errmsg(e), "read when the engine opens"));
    assert_eng_value(e, "threads", "2");
    assert_fails(sl_engine_option_set(e, "gpu_mem", "1Gi"), SL_ESTATE, "gpu_mem");
    assert_fails(sl_engine_option_set(e, "morsel_rowz", "1"), SL_ENOTFOUND,
                 "did you mean 'morsel_rows'");
    assert_fails(sl_engine_option_set(e, "placement", "gpuu"), SL_EINVAL, "not one of");
    assert_eng_value(e, "placement", "auto");
    char buf[8];
    assert_fails(sl_engine_option_get(e, "nope", buf, sizeof buf), SL_ENOTFOUND, "nope");
    sl_engine_close(e);
    assert_no_leaks();
}

/* String options are copied when the engine opens: the caller's buffer may go. */
SL_TEST(open_copies_string_options)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/sl_test_options_cost.%d", (int)getpid());
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "threads", "1"));
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "gpus", "0"));
    SL_ASSERT_OK(sl_engine_config_set(&cfg, "cost_cache", path));
    sl_engine_t *e;
    SL_ASSERT_OK(sl_engine_open(&e, &cfg));
    char want[64];
    memcpy(want, path, sizeof want);
    memset(path, 'x', sizeof path - 1);
    assert_eng_value(e, "cost_cache", want);
    assert_eng_value(e, "trace", "");
    sl_engine_close(e);
    remove(want);
    assert_no_leaks();
}

/* The morsel size a query's first pipeline cuts (explain). */
static int64_t query_morsel_rows(sl_engine_t *e, sl_plan_t *p)
{
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    const struct sl_explain *ex;
    SL_ASSERT_OK(sl_query_explain(q, &ex));
    int64_t m = ex->pipelines[0].morsel_rows;
    sl_query_destroy(q);
    return m;
}

#define SUM_PLAN "n = gen.sequence rows=100000 column=x\ns = aggregate.sum(n) column=x\noutput s\n"

SL_TEST(queries_take_engine_then_plan_values)
{
    sl_engine_t *e = open_engine();
    sl_plan_t *p = sl_test_plan_parse(SUM_PLAN);
    assert_int_equal(query_morsel_rows(e, p), 122880);
    SL_ASSERT_OK(sl_engine_option_set(e, "morsel_rows", "1000"));
    assert_int_equal(query_morsel_rows(e, p), 1000);
    sl_plan_destroy(p);
    /* the plan's value wins over the engine's, for its queries only */
    p = sl_test_plan_parse("set morsel_rows = 2^9   # a comment\n" SUM_PLAN);
    assert_int_equal(query_morsel_rows(e, p), 512);
    sl_plan_t *other = sl_test_plan_parse(SUM_PLAN);
    assert_int_equal(query_morsel_rows(e, other), 1000);
    sl_plan_destroy(other);
    sl_plan_destroy(p);
    SL_ASSERT_OK(sl_plan_create(&p));
    SL_ASSERT_OK(sl_plan_option_set(p, "morsel_rows", "300"));
    SL_ASSERT_OK(sl_plan_option_set(p, "morsel_rows", "200")); /* the last value counts */
    SL_ASSERT_OK(sl_plan_parse(p, SUM_PLAN, "t.plan"));
    assert_int_equal(query_morsel_rows(e, p), 200);
    /* a plan in use by a query is frozen */
    assert_fails(sl_plan_option_set(p, "morsel_rows", "100"), SL_ESTATE, "in use");
    sl_plan_destroy(p);
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(plan_option_errors)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    assert_fails(sl_plan_option_set(p, "threads", "2"), SL_ESTATE, "cannot be set per plan");
    assert_fails(sl_plan_option_set(p, "morsel_rows", "-5"), SL_EINVAL, "out of range");
    assert_fails(sl_plan_option_set(p, "nope", "1"), SL_ENOTFOUND, "nope");
    assert_non_null(strstr(sl_plan_errmsg(p), "nope"));
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"set threads = 2\n", "t.plan:1:5: option 'threads' is read when the engine opens"},
        {"set morsel_rows = ten\n", "t.plan:1:19: option morsel_rows=ten: not an integer"},
        {"set morsel_rowz = 1\n", "t.plan:1:5: no option named 'morsel_rowz'"},
        {"set morsel_rows 10\n", "t.plan:1:17: expected '=' after the option name"},
        {"set morsel_rows =\n", "t.plan:1:18: expected a value after '='"},
        {"set morsel_rows = 1 2\n", "t.plan:1:21: unexpected text after the value"},
        {"set = 3\n", "t.plan:1:7: expected"}, /* `set` as a node name: a node line */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sl_plan_t *q;
        SL_ASSERT_OK(sl_plan_create(&q));
        assert_true(sl_plan_parse(q, bad[i].text, "t.plan") < 0);
        if (!strstr(sl_plan_errmsg(q), bad[i].msg))
            fail_msg("'%s': message '%s' lacks '%s'", bad[i].text, sl_plan_errmsg(q), bad[i].msg);
        sl_plan_destroy(q);
    }
    sl_plan_destroy(p);
    assert_no_leaks();
}

/* ---- what an operator reads: a source recording sl_task_option_* ---- */

static int64_t seen_threshold = -2, seen_placement = -2, seen_bad = 0;
static double seen_gbps = -2;

static int probe_bind(sl_bind_t *b)
{
    sl_bind_set_rows(b, 1);
    return sl_bind_add_column(b, "k", SL_TYPE_INT64);
}

static int probe_run(sl_task_t *t)
{
    sl_task_option_int(t, "agg_gpu_part_threshold", &seen_threshold);
    sl_task_option_int(t, "placement", &seen_placement);
    sl_task_option_float(t, "host_gbps", &seen_gbps);
    int64_t v = 0;
    double f = 0;
    seen_bad = (sl_task_option_int(t, "nope", &v) == SL_ENOTFOUND) +
               (sl_task_option_int(t, "host_gbps", &v) == SL_ETYPE) +
               (sl_task_option_float(t, "trace", &f) == SL_ETYPE) +
               (sl_task_option_float(t, "threads", &f) == SL_OK && f == 2);
    return SL_OK;
}

static const struct sl_impl probe_impls[] = {{.device = SL_DEVICE_CPU, .run = probe_run}};
static const struct sl_phase probe_phase = {probe_impls, 1, NULL};
static const struct sl_op_def probe_def = {
    .abi_version = SL_OP_ABI_VERSION, .flags = SL_OP_SOURCE, .name = "test.option_probe",
    .doc = "records the options its task reads", .min_inputs = 0, .max_inputs = 0,
    .bind = probe_bind, .source = &probe_phase,
};

SL_TEST(operators_read_options_of_their_query)
{
    int rc = sl_registry_add(sl_registry_global(), &probe_def);
    assert_true(rc == SL_OK || rc == SL_EEXIST);
    sl_engine_t *e = open_engine();
    SL_ASSERT_OK(sl_engine_option_set(e, "host_gbps", "12.5"));
    SL_ASSERT_OK(sl_engine_option_set(e, "placement", "cpu"));
    sl_plan_t *p = sl_test_plan_parse("set agg_gpu_part_threshold = 4096\n"
                         "n = test.option_probe\n"
                         "t = aggregate(n) keys=k aggs=\"count(*)\"\n"
                         "output t\n");
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    /* set after the query was created: the query keeps its values */
    SL_ASSERT_OK(sl_engine_option_set(e, "host_gbps", "99"));
    SL_ASSERT_OK(sl_query_run(q));
    assert_int_equal(seen_threshold, 4096);
    assert_int_equal(seen_placement, SL_PLACE_CPU);
    assert_true(seen_gbps == 12.5);
    assert_int_equal(seen_bad, 4);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_engine_close(e);
    assert_no_leaks();
}

/* Sets the variables of a NULL-ended list of NAME, VALUE pairs. */
static void set_env(const char *const *pairs)
{
    for (; pairs[0]; pairs += 2)
        setenv(pairs[0], pairs[1], 1);
}

/* The library reads no environment variable: an embedder's settings stay. */
SL_TEST(environment_does_not_reach_the_library)
{
    set_env((const char *const[]){"SLUICE_PLACEMENT", "gpu", "SLUICE_MORSEL_ROWS", "7",
                                  "SLUICE_GPU_MEM", "1024", NULL});
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = 2;
    cfg.n_gpus = 0;
    cfg.placement = SL_PLACE_CPU;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_engine_open(&e, &cfg));
    assert_eng_value(e, "placement", "cpu");
    assert_eng_value(e, "morsel_rows", "122880");
    assert_eng_value(e, "gpu_mem", "0");
    sl_plan_t *p = sl_test_plan_parse(SUM_PLAN);
    assert_int_equal(query_morsel_rows(e, p), 122880);
    sl_plan_destroy(p);
    sl_engine_close(e);
    assert_no_leaks();
}

/* The harness (sl_test_engine_open) maps SLUICE_<NAME> over the test's values. */
SL_TEST(harness_maps_environment_onto_options)
{
    unsetenv("SLUICE_GPU_MEM"); /* as a configuration stage may have set it */
    set_env((const char *const[]){"SLUICE_PLACEMENT", "cpu", "SLUICE_MORSEL_ROWS", "7",
                                  "SLUICE_GPU_MORSEL_ROWS", "1000", NULL});
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.placement = SL_PLACE_GPU;
    cfg.morsel_rows_gpu = 5000;
    SL_ASSERT_OK(sl_test_config_from_env(&cfg));
    assert_int_equal(cfg.placement, SL_PLACE_CPU);   /* the test set gpu: forced */
    assert_int_equal(cfg.morsel_rows_cpu, 7);        /* the test kept the default */
    assert_int_equal(cfg.morsel_rows_gpu, 1000);     /* the test set 5000: forced */
    assert_string_equal(sl_test_forced_option("morsel_rows"), "7");
    assert_null(sl_test_forced_option("gpu_mem"));
    setenv("SLUICE_MORSEL_ROWS", "many", 1);
    sl_engine_config_init(&cfg);
    assert_int_equal(sl_test_config_from_env(&cfg), SL_EINVAL);
    unsetenv("SLUICE_MORSEL_ROWS");
    unsetenv("SLUICE_GPU_MORSEL_ROWS");
    unsetenv("SLUICE_PLACEMENT");
}
