/* sluice bench mixed: the scheduler's mixed workload (TARGETS.md "Scheduler", issue 8).
 * One plan whose pipelines favour different devices: a small-table join (too little work
 * for a GPU launch), a large join, a few-group aggregate and k-means, all from
 * generators. It runs with placement forced to the CPU, forced to the GPU and left to the
 * engine (auto), each a fresh engine, one warm-up then --repeat timed queries (creation
 * to the last output fetched); the JSON line gives the three medians and auto / min(cpu,
 * gpu) (target at most 1.1). Without a GPU all three run on the CPU. The exact outputs
 * (joins, aggregate) must have the same checksum under every placement. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"

static const char *const outputs[] = {"small_join", "large_join", "groupby", "kmeans"};
enum { N_OUT = 4, N_EXACT = 3 }; /* k-means' float centres may differ by device */

static int mixed_plan(sl_plan_t *p, int64_t rows, int64_t seed)
{
    char text[2048];
    int64_t sd = rows / 4096 > 16 ? rows / 4096 : 16, sf = rows / 256 > 16 ? rows / 256 : 16;
    int64_t pts = rows / 16 > 64 ? rows / 16 : 64;
    snprintf(text, sizeof text,
             "sdim  = gen.keys rows=%" PRId64 " kind=unique seed=%" PRId64 " payloads=1\n"
             "sfact = gen.keys rows=%" PRId64 " kind=fk pk_rows=%" PRId64 " seed=%" PRId64
             " payloads=1\n"
             "sj    = join(sfact, sdim) on=k output=aggregate\n"
             "output sj as small_join\n"
             "ldim  = gen.keys rows=%" PRId64 " kind=unique seed=%" PRId64 " payloads=1\n"
             "lfact = gen.keys rows=%" PRId64 " kind=fk pk_rows=%" PRId64 " seed=%" PRId64
             " payloads=1\n"
             "lj    = join(lfact, ldim) on=k output=aggregate\n"
             "output lj as large_join\n"
             "g     = gen.keys rows=%" PRId64 " kind=m2m distinct=16 seed=%" PRId64
             " payloads=1\n"
             "agg   = aggregate(g) keys=k aggs=\"count(*), sum(p1)\"\n"
             "output agg as groupby\n"
             "pts   = gen.blobs points=%" PRId64 " dims=16 k=64 seed=%" PRId64 "\n"
             "km    = kmeans(pts) k=64 max_iter=5 tol=0 seed=7\n"
             "output km as kmeans\n",
             sd, seed, sf, sd, seed + 1, rows, seed + 2, rows, rows, seed + 3, rows, seed + 4,
             pts, seed + 5);
    return sl_plan_parse(p, text, "mixed");
}

/* Where a finished query's pipelines ran, one letter each (C: CPU workers, G: a GPU, S:
 * split between both, -: no task), printed per timed auto query by --placements: a run
 * whose ratio stands out then shows whether the placement changed or only the time. */
static void mixed_print_placements(sl_query_t *q, double ms)
{
    const struct sl_explain *ex;
    char sig[64] = "";
    if (sl_query_explain(q, &ex) != SL_OK)
        return;
    int n = ex->n_pipelines < (int)sizeof sig - 1 ? ex->n_pipelines : (int)sizeof sig - 1;
    for (int i = 0; i < n; i++) {
        const struct sl_explain_pipeline *pp = &ex->pipelines[i];
        int64_t cpu = pp->cpu_tasks_measured, gpu = pp->gpu_tasks_measured;
        if (!pp->split && pp->tasks_measured > 0 && pp->device_measured >= 0)
            gpu = pp->tasks_measured;
        else if (!pp->split && pp->tasks_measured > 0)
            cpu = pp->tasks_measured;
        sig[i] = cpu && gpu ? 'S' : gpu ? 'G' : cpu ? 'C' : '-';
    }
    sig[n] = 0;
    fprintf(stderr, " %.2f:%s", ms, sig);
}

/* What --placements and --trace-dir ask of one engine's queries. */
struct mixed_diag {
    bool placements;       /* print each query's time and pipelines' devices to stderr */
    const char *trace_dir; /* each query's Chrome trace as DIR/<placement>_r<run>_q<n>.json */
    const char *label;     /* placement name */
    int64_t run;
};

/* Median time of `repeat` queries under one placement; the warm-up's exact checksums. */
static int mixed_run(struct cli_common *c, enum sl_placement pl, int64_t rows, int64_t seed,
                     int64_t repeat, double *med, uint64_t sums[N_OUT], char *dev, int dev_len,
                     const struct mixed_diag *dg)
{
    c->placement = pl;
    int64_t t_open = cli_now_ns();
    sl_engine_t *eng = cli_open_engine(c);
    if (!eng)
        return SL_EINVAL;
    if (dg->placements)
        fprintf(stderr, " [open %.1f ms]", (cli_now_ns() - t_open) / 1e6);
    sl_plan_t *p;
    sl_plan_create(&p);
    int rc = mixed_plan(p, rows, seed);
    if (rc != SL_OK)
        cli_fail("bench mixed: %s", sl_plan_errmsg(p));
    struct bench_result r;
    bench_result_init(&r, 0);
    if (dev)
        bench_device_name(eng, pl, dev, dev_len);
    for (int64_t rep = -1; rep < repeat && rc == SL_OK; rep++) {
        sl_query_t *q = NULL;
        sl_table_t *out[N_OUT] = {0};
        int64_t t0 = cli_now_ns();
        rc = sl_query_create(eng, p, &q);
        if (rc == SL_OK && dg->trace_dir) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s_r%" PRId64 "_q%" PRId64 ".json", dg->trace_dir,
                     dg->label, dg->run, rep + 1);
            rc = sl_query_trace(q, path);
        }
        if (rc == SL_OK)
            rc = cli_query_run(q);
        for (int i = 0; i < N_OUT && rc == SL_OK; i++)
            rc = sl_query_result(q, outputs[i], &out[i]);
        double ms = (cli_now_ns() - t0) / 1e6;
        if (rc != SL_OK)
            cli_fail("bench mixed: %s", q ? sl_query_errmsg(q) : sl_engine_errmsg(eng));
        for (int i = 0; i < N_OUT; i++) {
            if (rc == SL_OK && rep < 0)
                sums[i] = i < N_EXACT ? bench_checksum_table(out[i])
                                      : (uint64_t)sl_table_num_rows(out[i]);
            sl_table_unref(out[i]);
        }
        if (rc == SL_OK && rep >= 0)
            bench_add(&r, ms);
        if (rc == SL_OK && dg->placements)
            mixed_print_placements(q, ms);
        sl_query_destroy(q);
    }
    *med = rc == SL_OK ? bench_median(r.ms, r.n) : 0;
    sl_plan_destroy(p);
    int64_t t_close = cli_now_ns();
    sl_engine_close(eng);
    if (dg->placements)
        fprintf(stderr, " [close %.1f ms]", (cli_now_ns() - t_close) / 1e6);
    return rc;
}

int bench_mixed(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c);
    int64_t rows = (int64_t)1 << 25, repeat = 3, seed = 1, runs = 1, cpu_repeat = -1;
    bool placements = false;
    const char *trace_dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help")) {
            printf("usage: sluice bench mixed [--rows N] [--repeat R] [--runs K] [--cpu-repeat R]"
                   " [--seed S]\n       [--placements] [--threads N] [--gpu-mem BYTES] [--json]\n"
                   "One plan: a small join (N/256 x N/4096 rows), a large join (N x N), an"
                   " aggregate of N rows\ninto 16 groups and k-means (N/16 points, d = 16,"
                   " k = 64, 5 iterations), run with\nplacement cpu, gpu and auto, each a"
                   " fresh engine; prints the medians and auto / min(cpu, gpu)\n(target <= 1.1)."
                   " --runs K repeats the gpu and auto runs K times (fresh engines) and\n"
                   "reports every run's ratio and the worst; --cpu-repeat sets the CPU's"
                   " repeats (default --repeat).\n--placements prints to stderr, per auto"
                   " query (warm-up first), its time and where\neach pipeline ran (C cpu, G"
                   " gpu, S split),\nfor the gpu and auto engines, with each engine's open and close"
                   " times. --trace-dir DIR\nwrites every gpu and auto query's Chrome trace"
                   " as DIR/<placement>_r<run>_q<n>.json\n(q0 the warm-up; written when the"
                   " query ends, so inside its time).\n");
            return 0;
        }
        const struct bench_count_opt counts[] = {{"--rows", &rows},
                                                 {"--repeat", &repeat},
                                                 {"--seed", &seed},
                                                 {"--runs", &runs},
                                                 {"--cpu-repeat", &cpu_repeat}};
        if (!strcmp(argv[i], "--placements")) {
            placements = true;
            continue;
        }
        if (!strcmp(argv[i], "--trace-dir") && i + 1 < argc) {
            trace_dir = argv[++i];
            continue;
        }
        int r = bench_count_option(argc, argv, &i, counts, 5);
        if (r == 0)
            r = cli_common_option(&c, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r == 0)
            return cli_fail("bench mixed: unknown option '%s'", argv[i]);
    }
    if (cpu_repeat < 0)
        cpu_repeat = repeat;
    if (trace_dir && mkdir(trace_dir, 0777) != 0 && errno != EEXIST)
        return cli_fail("bench mixed: --trace-dir %s: %s", trace_dir, strerror(errno));
    if (rows < 1 || repeat < 1 || repeat > BENCH_MAX_REPEAT || cpu_repeat < 1 ||
        cpu_repeat > BENCH_MAX_REPEAT || runs < 1 || runs > BENCH_MAX_REPEAT)
        return cli_fail("bench mixed: --rows must be at least 1, --repeat, --cpu-repeat and "
                        "--runs 1..%d", BENCH_MAX_REPEAT);
    static const enum sl_placement pls[3] = {SL_PLACE_CPU, SL_PLACE_GPU, SL_PLACE_AUTO};
    static const char *const names[3] = {"cpu", "gpu", "auto"};
    double cpu_ms, gpu_ms[BENCH_MAX_REPEAT], auto_ms[BENCH_MAX_REPEAT];
    uint64_t sums[3][N_OUT];
    char dev[160] = "";
    struct mixed_diag dg[3] = {{false, NULL, names[0], 0},
                               {placements, trace_dir, names[1], 0},
                               {placements, trace_dir, names[2], 0}};
    int rc = mixed_run(&c, pls[0], rows, seed, cpu_repeat, &cpu_ms, sums[0], NULL, 0, &dg[0]);
    for (int64_t k = 0; k < runs && rc == SL_OK; k++) {
        dg[1].run = dg[2].run = k;
        if (placements)
            fprintf(stderr, "run %" PRId64 ": gpu", k);
        rc = mixed_run(&c, pls[1], rows, seed, repeat, &gpu_ms[k], sums[1], dev, sizeof dev,
                       &dg[1]);
        if (placements)
            fprintf(stderr, " = %.2f ms\n       auto", gpu_ms[k]);
        if (rc == SL_OK)
            rc = mixed_run(&c, pls[2], rows, seed, repeat, &auto_ms[k], sums[2], NULL, 0,
                           &dg[2]);
        if (placements && rc == SL_OK)
            fprintf(stderr, " = %.2f ms", auto_ms[k]);
        if (placements)
            fprintf(stderr, "\n");
        for (int p = 1; p < 3 && rc == SL_OK; p++)
            for (int i = 0; i < N_EXACT; i++)
                if (sums[p][i] != sums[0][i]) {
                    cli_fail("bench mixed: output %s: checksum %" PRIu64 " with placement %s "
                             "but %" PRIu64 " on the CPU",
                             outputs[i], sums[p][i], names[p], sums[0][i]);
                    rc = SL_EINVAL;
                }
    }
    if (rc != SL_OK)
        return 1;
    double ratios[BENCH_MAX_REPEAT], worst = 0;
    for (int64_t k = 0; k < runs; k++) {
        double best = cpu_ms < gpu_ms[k] ? cpu_ms : gpu_ms[k];
        ratios[k] = best > 0 ? auto_ms[k] / best : 0;
        worst = ratios[k] > worst ? ratios[k] : worst;
    }
    double g = bench_median(gpu_ms, (int)runs), a = bench_median(auto_ms, (int)runs);
    double best = cpu_ms < g ? cpu_ms : g;
    printf("{\"bench\":\"mixed\",\"rows\":%" PRId64 ",\"repeat\":%" PRId64 ",\"runs\":%" PRId64
           ",\"cpu_ms\":%.3f,\"gpu_ms\":%.3f,\"auto_ms\":%.3f,\"best_ms\":%.3f,\"ratio\":%.4f,"
           "\"worst_ratio\":%.4f,\"ratios\":[",
           rows, repeat, runs, cpu_ms, g, a, best, best > 0 ? a / best : 0, worst);
    for (int64_t k = 0; k < runs; k++)
        printf("%s%.4f", k ? "," : "", ratios[k]);
    printf("],\"target\":1.1,\"met\":%s,\"device\":\"%s\",\"checksums\":{",
           worst <= 1.1 ? "true" : "false", dev);
    for (int i = 0; i < N_OUT; i++)
        printf("%s\"%s\":%" PRIu64, i ? "," : "", outputs[i], sums[0][i]);
    printf("}}\n");
    return 0;
}
