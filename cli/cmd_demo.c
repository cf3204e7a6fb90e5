/* sluice demo: the main job. Generates data, runs the ready-made plan, prints a summary.
 * For now the plan is the first end-to-end path (generated sequence -> count and sum);
 * the join, group-by and k-means demo replaces it as those operators land (issue #9). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "plans.h"

static void show_progress(void *user, const struct sl_progress *p)
{
    (void)user;
    if (p->tasks_total > 0)
        fprintf(stderr, "\r  running: %" PRId64 "/%" PRId64 " tasks", p->tasks_done,
                p->tasks_total);
}

int cmd_demo(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c);
    int64_t rows = (int64_t)1 << 27;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: sluice demo [--rows N] [--threads N] [--placement cpu|gpu|auto]\n"
                   "Runs the ready-made plan on generated data and prints a summary.\n");
            return 0;
        }
        if (!strcmp(argv[i], "--rows") && i + 1 < argc) {
            if (cli_parse_count(argv[++i], &rows) < 0)
                return cli_fail("--rows: '%s' is not a count", argv[i]);
            continue;
        }
        int r = cli_common_option(&c, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r == 0)
            return cli_fail("demo: unknown option '%s' (see sluice demo --help)", argv[i]);
    }
    sl_engine_t *eng = cli_open_engine(&c);
    if (!eng)
        return 1;
    struct sl_device_info gpu = {0};
    bool have_gpu = false;
    for (int i = 1; i < sl_engine_device_count(eng); i++) {
        sl_engine_device_info(eng, i, &gpu);
        if (gpu.usable) {
            have_gpu = true;
            break;
        }
    }
    printf("sluice %s demo on %d CPU threads%s%s\n", sl_version_string(),
           sl_engine_num_threads(eng), have_gpu ? " and GPU " : " (no GPU)",
           have_gpu ? gpu.name : "");

    sl_plan_t *plan;
    int rc;
    if ((rc = sl_plan_create(&plan)) != SL_OK)
        return cli_fail("%s", sl_last_errmsg());
    if ((rc = sl_plans_sequence_sum(plan, rows)) != SL_OK) {
        cli_fail("building the plan: %s", sl_plan_errmsg(plan));
        sl_plan_destroy(plan);
        sl_engine_close(eng);
        return 1;
    }
    sl_query_t *q;
    if ((rc = sl_query_create(eng, plan, &q)) != SL_OK) {
        cli_fail("%s", sl_plan_errmsg(plan));
        sl_plan_destroy(plan);
        sl_engine_close(eng);
        return 1;
    }
    if (isatty(2))
        sl_query_on_progress(q, show_progress, NULL, 100);
    int64_t t0 = cli_now_ns();
    rc = sl_query_run(q);
    double ms = (cli_now_ns() - t0) / 1e6;
    if (isatty(2))
        fprintf(stderr, "\r%40s\r", "");
    int exit_code = 0;
    if (rc != SL_OK) {
        exit_code = cli_fail("the demo failed: %s", sl_query_errmsg(q));
    } else {
        sl_table_t *t;
        sl_query_result(q, "result", &t);
        struct sl_column cnt, sum;
        sl_batch_column(sl_table_batch(t, 0), 0, &cnt);
        sl_batch_column(sl_table_batch(t, 0), 1, &sum);
        int64_t n = ((const int64_t *)cnt.data)[cnt.offset];
        int64_t s = ((const int64_t *)sum.data)[sum.offset];
        int64_t expect = rows * (rows - 1) / 2;
        printf("  plan: gen.sequence(rows=%" PRId64 ") -> aggregate.sum(x)\n", rows);
        printf("  count = %" PRId64 ", sum = %" PRId64 " (%s)\n", n, s,
               s == expect ? "correct" : "WRONG");
        printf("  time: %.1f ms, %.2f G rows/s\n", ms, rows / (ms * 1e6));
        if (s != expect)
            exit_code = 1;
        sl_table_unref(t);
    }
    sl_query_destroy(q);
    sl_plan_destroy(plan);
    sl_engine_close(eng);
    return exit_code;
}
