/* Tests that a many-to-many join whose output is far larger than the engine's host
 * budget streams its output to the next operator in bounded batches instead of failing:
 * 2,000 x 2,000 rows on one key give 4,000,000 output rows (tens of MiB materialized)
 * under a 24 MiB budget; the sum downstream sees every row. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "sl_test.h"

SL_TEST(many_to_many_output_streams_under_host_budget)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = 2;
    cfg.n_gpus = 0;
    cfg.morsel_rows_cpu = 8192;
    cfg.host_mem_limit = 24 << 20;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    const char *text =
        "l = gen.keys rows=2000 kind=m2m distinct=1 seed=1 payloads=1 column=k\n"
        "r = gen.keys rows=2000 kind=m2m distinct=1 seed=2 payloads=1 column=k\n"
        "j = join(l, r) on=k output=materialize\n"
        "s = aggregate.sum(j) column=p1\n"
        "output s as r\n";
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    SL_ASSERT_OK(sl_plan_parse(p, text, "m2m.plan"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    sl__mem_reset_peak();
    int rc = sl_query_run(q);
    if (rc != SL_OK)
        fail_msg("the join failed instead of streaming: %s", sl_query_errmsg(q));
    sl_table_t *t;
    SL_ASSERT_OK(sl_query_result(q, "r", &t));
    struct sl_column c;
    SL_ASSERT_OK(sl_batch_column(sl_table_batch(t, 0), 0, &c));
    assert_int_equal(((const int64_t *)c.data)[0], 4000000);
    /* Every left row's payload appears once per right row: sum = 2000 * sum(left p1). */
    int64_t left_sum = 0;
    for (int64_t i = 0; i < 2000; i++)
        left_sum += i * 31 + 1; /* gen.keys payload j of row i: i*31 + j */
    SL_ASSERT_OK(sl_batch_column(sl_table_batch(t, 0), 1, &c));
    assert_int_equal(((const int64_t *)c.data)[0], 2000 * left_sum);
    sl_table_unref(t);
    struct sl_mem_stats st = SL_MEM_STATS_INIT;
    sl_engine_mem_stats(e, &st);
    struct sl__mem_counters mc0;
    sl__mem_counters(&mc0);
    printf("charged peak %lld bytes of a %lld-byte budget; allocator peak %lld bytes\n",
           (long long)st.host_peak, (long long)st.host_limit, (long long)mc0.peak_bytes);
    assert_true(st.host_peak <= st.host_limit);
    /* The 4,000,000 output rows (k, p1, p1_r) would take 48+ MiB materialized. */
    assert_true(mc0.peak_bytes < (int64_t)24 << 20);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_engine_close(e);
    struct sl__mem_counters mc;
    sl__mem_counters(&mc);
    assert_int_equal(mc.live_allocs, 0);
}
