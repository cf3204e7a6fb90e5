/* Tests sl_query_explain (and its JSON): tasks, cost per task from the operators' cost
 * functions ("unknown" without one), placement reasons without a GPU, the memory
 * estimate against the host budget, and what a run measured beside the estimates. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sl_test.h"

/* A source with a cost function of 1 ns per row (estimates only: it emits nothing). */
static const struct sl_option_def src_opts[] = {{"rows", SL_OPT_INT, "1000", "rows"}};

static int src_bind(sl_bind_t *b)
{
    int64_t rows;
    int rc = sl_bind_option_int(b, "rows", &rows);
    if (rc < 0)
        return rc;
    sl_bind_set_rows(b, rows);
    return sl_bind_add_column(b, "k", SL_TYPE_INT64);
}

static int src_run(sl_task_t *t)
{
    (void)t;
    return SL_OK;
}

static double src_cost(const sl_op_t *op, enum sl_device_kind kind, int64_t rows)
{
    (void)op;
    (void)kind;
    return (double)rows * 1e-9;
}

static const struct sl_impl src_impls[] = {{.device = SL_DEVICE_CPU, .run = src_run}};
static const struct sl_phase src_phase = {src_impls, 1, src_cost};
static const struct sl_op_def src_def = {
    .abi_version = SL_OP_ABI_VERSION, .flags = SL_OP_SOURCE, .name = "test.explain_src",
    .doc = "explain test source", .min_inputs = 0, .max_inputs = 0, .options = src_opts,
    .n_options = 1, .bind = src_bind, .source = &src_phase,
};

/* The same source without a cost function: its cost is unknown. */
static const struct sl_phase nocost_phase = {src_impls, 1, NULL};
static const struct sl_op_def nocost_def = {
    .abi_version = SL_OP_ABI_VERSION, .flags = SL_OP_SOURCE, .name = "test.explain_nocost",
    .doc = "explain test source without a cost", .min_inputs = 0, .max_inputs = 0,
    .options = src_opts, .n_options = 1, .bind = src_bind, .source = &nocost_phase,
};

static sl_engine_t *open_engine(int64_t host_mem, enum sl_placement placement)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = 2;
    cfg.n_gpus = 0;
    cfg.morsel_rows_cpu = 100000;
    cfg.host_mem_limit = host_mem;
    cfg.placement = placement;
    sl_engine_t *e;
    /* not the harness: the expected tasks and costs are for these settings */
    SL_ASSERT_OK(sl_engine_open(&e, &cfg));
    return e;
}

/* A plan parsed from text, an engine and a query of it, explained. */
struct fx {
    sl_plan_t *p;
    sl_engine_t *e;
    sl_query_t *q;
};

static const struct sl_explain *fx_open(struct fx *f, const char *text, int64_t host_mem,
                                        enum sl_placement placement)
{
    f->p = sl_test_plan_parse(text);
    f->e = open_engine(host_mem, placement);
    SL_ASSERT_OK(sl_query_create(f->e, f->p, &f->q));
    const struct sl_explain *ex;
    SL_ASSERT_OK(sl_query_explain(f->q, &ex));
    return ex;
}

/* The explain JSON of q holds every string of want (NULL-terminated). */
static void json_has(sl_query_t *q, const char *const *want)
{
    const char *js = sl_query_explain_json(q);
    for (; *want; want++)
        if (!strstr(js, *want))
            fail_msg("no %s in %s", *want, js);
}

static void fx_close(struct fx *f)
{
    sl_query_destroy(f->q);
    sl_plan_destroy(f->p);
    sl_engine_close(f->e);
}

SL_TEST(costs_tasks_and_memory)
{
    int rc = sl_registry_add(sl_registry_global(), &src_def);
    assert_true(rc == SL_OK || rc == SL_EEXIST);
    struct fx f;
    const struct sl_explain *ex = fx_open(&f, "s = test.explain_src rows=1000000\n"
                                          "a = aggregate(s) keys=k aggs=\"count(*)\"\n"
                                          "output a\n", 0, SL_PLACE_AUTO);
    sl_query_t *q = f.q;
    assert_int_equal(ex->n_pipelines, 2);
    assert_int_equal(ex->n_threads, 2);
    assert_int_equal(ex->n_gpus, 0);
    assert_int_equal(ex->measured, 0);
    const struct sl_explain_pipeline *p0 = &ex->pipelines[0];
    assert_int_equal(p0->n_stages, 2);
    assert_string_equal(p0->stages[0].op, "test.explain_src");
    assert_string_equal(p0->stages[1].op, "aggregate");
    assert_int_equal(p0->stages[0].node, 0);
    assert_int_equal(p0->device, -1);
    assert_non_null(strstr(p0->why, "no GPU"));
    assert_int_equal(p0->rows, 1000000);
    assert_int_equal(p0->morsel_rows, 100000);
    assert_int_equal(p0->tasks, 10);
    /* Both stages have cost functions: the task costs their sum for one morsel. */
    assert_true(p0->stages[0].task_seconds > 0.99e-4 && p0->stages[0].task_seconds < 1.01e-4);
    assert_true(p0->stages[1].task_seconds > 0);
    assert_true(p0->task_seconds > p0->stages[0].task_seconds);
    /* Placement's estimate of the pipeline: its 10 tasks shared by the 2 workers (each
     * task's fixed 1 us included; the cost functions taken at 1M rows, near linear). */
    double est = (10 * p0->task_seconds * 1e3 + 10 * 1e-3) / 2;
    printf("estimated %.4f ms, from the tasks' cost %.4f ms\n", p0->ms_estimated, est);
    assert_true(p0->ms_estimated > 0.8 * est && p0->ms_estimated < 1.25 * est);
    assert_int_equal(p0->bytes_h2d, 0);
    assert_int_equal(p0->bytes_d2h, 0);
    /* The aggregate keeps its input (8-byte keys); two workers hold a morsel in, one out. */
    assert_int_equal(p0->host_bytes, 1000000 * 8 + 2 * 100000 * 16);
    assert_int_equal(p0->gpu_bytes, 0);
    /* The output pipeline: the aggregate's results into the collect sink. */
    const struct sl_explain_pipeline *p1 = &ex->pipelines[1];
    assert_int_equal(p1->stages[1].node, -1);
    assert_true(p1->stages[1].task_seconds > 0);
    assert_true(p1->task_seconds >= p1->stages[1].task_seconds);
    assert_true(ex->host_peak >= p0->host_bytes);
    assert_true(ex->host_peak < ex->host_budget);
    json_has(q, (const char *const[]){"\"tasks\":10,", "\"host_over_budget\":false", NULL});
    assert_null(strstr(sl_query_explain_json(q), "\"measured\""));
    fx_close(&f);
}

SL_TEST(over_budget_and_gpu_absent)
{
    /* The engine's placement (GPU here) is what the reason names: the force_cpu test
     * configuration's SLUICE_PLACEMENT would override it. */
    unsetenv("SLUICE_PLACEMENT");
    struct fx f;
    int rc = sl_registry_add(sl_registry_global(), &nocost_def);
    assert_true(rc == SL_OK || rc == SL_EEXIST);
    const struct sl_explain *ex = fx_open(&f, "n = test.explain_nocost rows=2^20\n"
                                          "t = aggregate(n) keys=k aggs=\"count(*)\"\n"
                                          "output t\n", 1 << 20, SL_PLACE_GPU);
    sl_query_t *q = f.q;
    assert_int_equal(ex->host_budget, 1 << 20);
    assert_true(ex->host_peak > ex->host_budget);
    const struct sl_explain_pipeline *p0 = &ex->pipelines[0];
    assert_int_equal(p0->device, -1);
    assert_non_null(strstr(p0->why, "no usable GPU"));
    assert_non_null(strstr(p0->why, "engine's placement"));
    assert_true(p0->stages[0].task_seconds < 0); /* the source has no cost function */
    assert_true(p0->task_seconds < 0);
    assert_true(p0->ms_estimated < 0);
    json_has(q, (const char *const[]){"\"host_over_budget\":true", "\"task_seconds\":null",
                                      "\"ms_estimated\":null", NULL});
    fx_close(&f);
}

SL_TEST(place_node_gpu_without_gpu)
{
    struct fx f;
    const struct sl_explain *ex = fx_open(&f, "n = gen.sequence rows=1000 column=v\n"
                                          "t = aggregate.sum(n) column=v\n"
                                          "output t\n"
                                          "place t gpu\n", 0, SL_PLACE_AUTO);
    assert_non_null(strstr(ex->pipelines[0].why, "'place'"));
    assert_non_null(strstr(ex->pipelines[0].why, "falls back to the CPU"));
    fx_close(&f);
}

SL_TEST(analyze_adds_measured)
{
    struct fx f;
    const struct sl_explain *ex = fx_open(&f, "n = gen.sequence rows=250000 column=v\n"
                                          "t = aggregate.sum(n) column=v\n"
                                          "output t\n", 0, SL_PLACE_AUTO);
    sl_query_t *q = f.q;
    int64_t tasks = ex->pipelines[0].tasks, peak = ex->host_peak;
    assert_int_equal(tasks, 3);
    SL_ASSERT_OK(sl_query_run(q));
    SL_ASSERT_OK(sl_query_explain(q, &ex));
    assert_int_equal(ex->measured, 1);
    assert_int_equal(ex->status, SL_OK);
    assert_true(ex->ms_measured > 0);
    assert_true(ex->host_peak_measured > 0);
    /* The estimates are those taken before the run. */
    assert_int_equal(ex->pipelines[0].tasks, tasks);
    assert_int_equal(ex->host_peak, peak);
    const struct sl_explain_pipeline *p0 = &ex->pipelines[0];
    assert_int_equal(p0->measured, 1);
    assert_int_equal(p0->device_measured, -1);
    assert_int_equal(p0->rows_measured, 250000);
    assert_int_equal(p0->tasks_measured, 3);
    assert_true(p0->ms_measured > 0);
    assert_int_equal(ex->pipelines[1].rows_measured, 1);
    json_has(q, (const char *const[]){"\"measured\":{\"device\":\"cpu\",\"gpu\":-1,",
                                      "\"rows\":250000,\"tasks\":3}",
                                      "\"profile\":{\"status\":\"SL_OK\"", NULL});
    fx_close(&f);
}

SL_TEST(bad_arguments)
{
    const struct sl_explain *ex;
    assert_int_equal(sl_query_explain(NULL, &ex), SL_EINVAL);
    assert_string_equal(sl_query_explain_json(NULL), "{}");
}

/* String columns count in the memory estimates (offsets plus a guess at their bytes),
 * not as width 0: five times a date32 column's 4 bytes. */
SL_TEST(string_columns_have_a_width)
{
    struct fx f;
    const struct sl_explain *ex = fx_open(&f, "s = gen.values rows=1000000 type=date32\n"
                                          "output s\n", 0, SL_PLACE_AUTO);
    int64_t date_bytes = ex->pipelines[0].host_bytes;
    fx_close(&f);
    ex = fx_open(&f, "s = gen.values rows=1000000 type=utf8\noutput s\n", 0, SL_PLACE_AUTO);
    int64_t str_bytes = ex->pipelines[0].host_bytes;
    fx_close(&f);
    assert_true(date_bytes > 0);
    assert_int_equal(str_bytes, 5 * date_bytes);
}

SL_TEST(huge_row_counts_saturate_instead_of_wrapping)
{
    /* 2^60 rows of a sort: the estimate was -9 EB (rows x width wrapped); INT64_MAX rows
     * made the task count wrap too. Now sizes saturate and stay over any budget. */
    const char *plans[] = {"s = gen.sequence rows=2^60\no = sort(s) by=x\noutput o\n",
                           "s = gen.sequence rows=9223372036854775807\no = sort(s) by=x\n"
                           "output o\n"};
    for (int i = 0; i < 2; i++) {
        struct fx f;
        const struct sl_explain *ex = fx_open(&f, plans[i], 1 << 30, SL_PLACE_CPU);
        for (int k = 0; k < ex->n_pipelines; k++) {
            const struct sl_explain_pipeline *p = &ex->pipelines[k];
            assert_true(p->tasks > 0);
            assert_true(p->host_bytes > ex->host_budget);
            assert_true(p->bytes_h2d >= 0 && p->bytes_d2h >= 0 && p->gpu_bytes >= 0);
        }
        assert_true(ex->host_peak > ex->host_budget);
        json_has(f.q, (const char *const[]){"\"host_over_budget\":true", NULL});
        fx_close(&f);
    }
}
