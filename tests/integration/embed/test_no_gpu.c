/* The library on a machine without a GPU (and without an NVIDIA driver): the engine
 * opens, device 0 is the CPU, no GPU is usable, and the first plan runs on the CPU.
 * Runs when SLUICE_EXPECT_NO_GPU=1 (scripts/test.sh and .ci/run set it when the machine
 * has no NVIDIA device node); skips otherwise, since on a GPU machine a GPU is found. */
#include <inttypes.h>
#include <string.h>

#include <sluice/sluice.h>

#include "sl_test.h"

static int expect_no_gpu(void)
{
    const char *v = getenv("SLUICE_EXPECT_NO_GPU");
    return v && strcmp(v, "1") == 0;
}

static sl_engine_t *open_engine(int n_threads)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = n_threads;
    sl_engine_t *eng = NULL;
    int rc = sl_test_engine_open(&eng, &cfg);
    if (rc != SL_OK)
        fail_msg("sl_engine_open: %s: %s", sl_err_name(rc),
                 eng ? sl_engine_errmsg(eng) : sl_last_errmsg());
    return eng;
}

SL_TEST(cpu_is_device_0_and_no_gpu_usable)
{
    if (!expect_no_gpu())
        SL_SKIP("SLUICE_EXPECT_NO_GPU is not 1");
    sl_engine_t *eng = open_engine(2);
    int n = sl_engine_device_count(eng);
    assert_true(n >= 1);

    struct sl_device_info info = SL_DEVICE_INFO_INIT;
    SL_ASSERT_OK(sl_engine_device_info(eng, 0, &info));
    assert_int_equal(info.kind, SL_DEVICE_CPU);
    assert_int_equal(info.ordinal, 0);
    assert_int_equal(info.usable, 1);
    assert_true(info.n_cores >= 1);
    assert_true(info.memory_bytes > 0);
    for (int i = 1; i < n; i++) {
        SL_ASSERT_OK(sl_engine_device_info(eng, i, &info));
        assert_int_equal(info.kind, SL_DEVICE_CUDA);
        if (info.usable)
            fail_msg("device %d (%s) is usable on a machine without a GPU", i, info.name);
        assert_true(info.reason[0] != '\0');
    }
    assert_int_equal(sl_engine_device_info(eng, n, &info), SL_EINVAL);
    assert_int_equal(sl_engine_num_threads(eng), 2);
    sl_engine_close(eng);
}

SL_TEST(first_plan_runs_on_cpu)
{
    if (!expect_no_gpu())
        SL_SKIP("SLUICE_EXPECT_NO_GPU is not 1");
    const int64_t n = 300000;
    sl_engine_t *eng = open_engine(2);
    sl_plan_t *plan = NULL;
    int gen, sum;
    char opts[64];
    snprintf(opts, sizeof opts, "rows=%" PRId64, n);
    SL_ASSERT_OK(sl_plan_create(&plan));
    SL_ASSERT_OK(sl_plan_add(plan, "gen.sequence", NULL, 0, opts, &gen));
    SL_ASSERT_OK(sl_plan_add(plan, "aggregate.sum", &gen, 1, "column=x", &sum));
    SL_ASSERT_OK(sl_plan_output(plan, sum, "total"));

    sl_query_t *q = NULL;
    SL_ASSERT_OK(sl_query_create(eng, plan, &q));
    int rc = sl_query_run(q);
    if (rc != SL_OK)
        fail_msg("sl_query_run: %s: %s", sl_err_name(rc), sl_query_errmsg(q));
    sl_table_t *res = NULL;
    SL_ASSERT_OK(sl_query_result(q, "total", &res));
    assert_int_equal(sl_table_num_rows(res), 1);

    sl_batch_t *b = sl_table_batch(res, 0);
    struct sl_column count, total;
    SL_ASSERT_OK(sl_batch_column(b, sl_batch_column_index(b, "count"), &count));
    SL_ASSERT_OK(sl_batch_column(b, sl_batch_column_index(b, "sum"), &total));
    assert_int_equal(count.type, SL_TYPE_INT64);
    assert_int_equal(total.type, SL_TYPE_INT64);
    assert_int_equal(((const int64_t *)count.data)[count.offset], n);
    assert_int_equal(((const int64_t *)total.data)[total.offset], n * (n - 1) / 2);

    sl_table_unref(res);
    sl_query_destroy(q);
    sl_plan_destroy(plan);
    sl_engine_close(eng);
}
