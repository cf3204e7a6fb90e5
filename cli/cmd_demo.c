/* sluice demo: the main job. Generated data through a join, a group-by and k-means
 * (plans/demo.c), with progress on a terminal and a summary of results and times. The
 * results are checked against what the generators guarantee. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "plans.h"

static int64_t cell_i64(sl_table_t *t, int col, int64_t row)
{
    for (int64_t b = 0; b < sl_table_num_batches(t); b++) {
        sl_batch_t *bt = sl_table_batch(t, b);
        if (row >= sl_batch_num_rows(bt)) {
            row -= sl_batch_num_rows(bt);
            continue;
        }
        struct sl_column c;
        sl_batch_column(bt, col, &c);
        return c.type == SL_TYPE_INT64 ? ((const int64_t *)c.data)[c.offset + row]
                                       : ((const int32_t *)c.data)[c.offset + row];
    }
    return 0;
}

static double cell_f64(sl_table_t *t, const char *name)
{
    sl_batch_t *bt = sl_table_batch(t, 0);
    struct sl_column c;
    if (!bt || sl_batch_column(bt, sl_batch_column_index(bt, name), &c) != SL_OK)
        return 0;
    return c.type == SL_TYPE_FLOAT64 ? ((const double *)c.data)[c.offset]
                                     : ((const int64_t *)c.data)[c.offset];
}

/* busy time of the first operator named `op` in the profile JSON, in ms */
static double busy_ms(const char *prof, const char *op)
{
    char key[64];
    snprintf(key, sizeof key, "\"op\":\"%s\"", op);
    const char *p = strstr(prof, key);
    double v = 0;
    if (p && (p = strstr(p, "\"busy_ms\":")))
        sscanf(p, "\"busy_ms\":%lf", &v);
    return v;
}

/* What the demo's three outputs say, checked against what the generators guarantee. */
struct demo_facts {
    int64_t rows, matches, groups, counted, clusters;
    double inertia, ms, join_ms, agg_ms, kmeans_ms;
    bool join_ok, groups_ok, kmeans_ok;
};

static int collect_facts(sl_query_t *q, int64_t rows, double ms, struct demo_facts *f)
{
    sl_table_t *j = NULL, *g = NULL, *k = NULL;
    if (sl_query_result(q, "join", &j) != SL_OK || sl_query_result(q, "groupby", &g) != SL_OK ||
        sl_query_result(q, "kmeans", &k) != SL_OK) {
        sl_table_unref(j);
        sl_table_unref(g);
        return cli_fail("the demo's outputs are missing");
    }
    memset(f, 0, sizeof *f);
    f->rows = rows;
    f->ms = ms;
    f->matches = cell_i64(j, 0, 0);
    f->groups = sl_table_num_rows(g);
    for (int64_t r = 0; r < f->groups; r++)
        f->counted += cell_i64(g, 1, r);
    f->clusters = sl_table_num_rows(k);
    f->inertia = cell_f64(k, "inertia");
    f->join_ok = f->matches == rows;
    /* 1,000 distinct keys: all appear once there are many more rows than keys. */
    f->groups_ok = f->groups <= 1000 && (rows < 100000 || f->groups == 1000) &&
                   f->counted == rows;
    f->kmeans_ok = f->clusters == 16;
    const char *prof = sl_query_profile_json(q);
    f->join_ms = busy_ms(prof, "join");
    f->agg_ms = busy_ms(prof, "aggregate");
    f->kmeans_ms = busy_ms(prof, "kmeans");
    sl_table_unref(j);
    sl_table_unref(g);
    sl_table_unref(k);
    return 0;
}

static bool facts_ok(const struct demo_facts *f)
{
    return f->join_ok && f->groups_ok && f->kmeans_ok;
}

static double rows_per_s(const struct demo_facts *f)
{
    return (3.0 * (double)f->rows + (double)f->rows / 4) / (f->ms / 1e3);
}

static void print_text(const struct demo_facts *f)
{
    printf("  join      %" PRId64 " x %" PRId64 " rows (PK-FK): %" PRId64
           " matches%s  [%.1f ms busy]\n",
           f->rows, f->rows, f->matches, f->join_ok ? "" : " (WRONG)", f->join_ms);
    printf("  group-by  %" PRId64 " rows -> %" PRId64 " groups, %" PRId64 " rows counted%s  "
           "[%.1f ms busy]\n",
           f->rows, f->groups, f->counted, f->groups_ok ? "" : " (WRONG)", f->agg_ms);
    printf("  k-means   %" PRId64 " points x 8 dims -> %" PRId64 " centroids, 10 iterations, "
           "inertia %.4g%s  [%.1f ms busy]\n",
           f->rows / 4, f->clusters, f->inertia, f->kmeans_ok ? "" : " (WRONG)", f->kmeans_ms);
    printf("  total     %.1f ms wall for the three (they run at once), %.2f G input rows/s\n",
           f->ms, rows_per_s(f) / 1e9);
    printf("  results   %s\n", !facts_ok(f) ? "WRONG" : "checked: every fact row found its key, "
                                                      "every row counted once, 16 centroids");
}

/* The placement the demo ran with: GPU by default where there is one, else as asked. */
static const char *demo_placement(bool have_gpu, bool given, enum sl_placement asked)
{
    if (!have_gpu)
        return "cpu";
    if (!given)
        return "gpu";
    return asked == SL_PLACE_GPU         ? "gpu"
           : asked == SL_PLACE_CPU       ? "cpu"
           : asked == SL_PLACE_COPROCESS ? "coprocess"
                                         : "auto";
}

/* --json: one JSON object on stdout and nothing else (the profile inside it). */
static void print_json(const struct demo_facts *f, const char *placement, sl_query_t *q)
{
    printf("{\"version\":\"%s\",\"placement\":\"%s\",\"rows\":%" PRId64 ",\"ms\":%.3f,"
           "\"rows_per_s\":%.6g,\"checked\":%s,"
           "\"join\":{\"matches\":%" PRId64 ",\"ok\":%s,\"busy_ms\":%.3f},"
           "\"groupby\":{\"groups\":%" PRId64 ",\"counted\":%" PRId64 ",\"ok\":%s,"
           "\"busy_ms\":%.3f},"
           "\"kmeans\":{\"points\":%" PRId64 ",\"centroids\":%" PRId64 ",\"inertia\":%.17g,"
           "\"ok\":%s,\"busy_ms\":%.3f},\"profile\":%s}\n",
           sl_version_string(), placement, f->rows, f->ms, rows_per_s(f),
           facts_ok(f) ? "true" : "false", f->matches, f->join_ok ? "true" : "false",
           f->join_ms, f->groups, f->counted, f->groups_ok ? "true" : "false", f->agg_ms,
           f->rows / 4, f->clusters, f->inertia, f->kmeans_ok ? "true" : "false", f->kmeans_ms,
           sl_query_profile_json(q));
}

int cmd_demo(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c);
    int64_t rows = SL_PLANS_DEMO_ROWS; /* plans/files/demo.plan's size */
    bool placement_given = false;
    for (int i = 1; i < argc; i++) {
        placement_given |= !strcmp(argv[i], "--placement");
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: sluice demo [--rows N] [--threads N] [--placement cpu|gpu|auto]\n"
                   "           [--trace FILE] [--json]\n"
                   "Generates data and runs a join, a group-by and k-means on it\n"
                   "(plans/files/demo.plan, 2^20 rows unless --rows), then prints what came\n"
                   "out and how long it took; --json prints it as one JSON object instead.\n"
                   "With a GPU it runs there unless --placement says otherwise.\n");
            return 0;
        }
        if (!strcmp(argv[i], "--rows") && i + 1 < argc) {
            if (cli_parse_count(argv[++i], &rows) < 0 || rows < 16)
                return cli_usage_fail("--rows: '%s' is not a count of at least 16", argv[i]);
            continue;
        }
        int r = cli_common_option(&c, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r == 0)
            return cli_usage_fail("demo: unknown option '%s' (see sluice demo --help)", argv[i]);
    }
    sl_engine_t *eng = cli_open_engine(&c);
    if (!eng)
        return 1;
    struct sl_device_info gpu = SL_DEVICE_INFO_INIT;
    bool have_gpu = false;
    for (int i = 1; i < sl_engine_device_count(eng) && !have_gpu; i++) {
        sl_engine_device_info(eng, i, &gpu);
        have_gpu = gpu.usable;
    }
    if (!c.json)
        printf("sluice %s demo on %d CPU threads%s%s\n", sl_version_string(),
               sl_engine_num_threads(eng), have_gpu ? " and GPU " : " (no GPU)",
               have_gpu ? gpu.name : "");
    if (have_gpu && !c.json)
        printf("  (placement %s)\n",
               !placement_given               ? "gpu: the demo's default where there is a GPU"
               : c.placement == SL_PLACE_AUTO ? "auto: each pipeline where its cost estimate is "
                                                "lower"
               : c.placement == SL_PLACE_GPU  ? "gpu"
                                              : "cpu");
    sl_plan_t *plan;
    int rc;
    if ((rc = sl_plan_create(&plan)) != SL_OK)
        return cli_fail("%s", sl_last_errmsg());
    if ((rc = sl_plans_demo(plan, rows)) != SL_OK) {
        cli_fail("building the demo plan: %s", sl_plan_errmsg(plan));
        sl_plan_destroy(plan);
        sl_engine_close(eng);
        return 1;
    }
    /* The demo shows the GPU path when there is a GPU; --placement auto leaves it to the
     * engine's cost model, which keeps host-generated data on the CPU. */
    if (have_gpu && !placement_given)
        for (int id = 0; id < sl_plan_num_nodes(plan); id++)
            sl_plan_place(plan, id, SL_PLACE_GPU);
    sl_query_t *q;
    if ((rc = sl_query_create(eng, plan, &q)) != SL_OK) {
        cli_fail("%s", sl_plan_errmsg(plan));
        sl_plan_destroy(plan);
        sl_engine_close(eng);
        return 1;
    }
    struct cli_progress pr;
    cli_progress_start(&pr);
    if (isatty(2))
        sl_query_on_progress(q, cli_progress_draw, &pr, 100);
    int64_t t0 = cli_now_ns();
    rc = cli_query_run(q);
    double ms = (cli_now_ns() - t0) / 1e6;
    cli_progress_clear(&pr);
    struct demo_facts facts = {0};
    int exit_code = rc != SL_OK ? cli_fail("the demo failed: %s", sl_query_errmsg(q))
                                : collect_facts(q, rows, ms, &facts);
    if (exit_code == 0) {
        if (c.json)
            print_json(&facts, demo_placement(have_gpu, placement_given, c.placement), q);
        else
            print_text(&facts);
        exit_code = facts_ok(&facts) ? 0 : 1;
    }
    sl_query_destroy(q);
    sl_plan_destroy(plan);
    sl_engine_close(eng);
    return exit_code;
}
