/* sluice bench mixed: the scheduler's mixed workload (TARGETS.md "Scheduler", issue 8).
 * One plan whose pipelines favour different devices: a small-table join (too little work
 * for a GPU launch), a large join, a few-group aggregate and k-means, all from
 * generators. It runs with placement forced to the CPU, forced to the GPU and left to the
 * engine (auto), each a fresh engine, one warm-up then --repeat timed queries (creation
 * to the last output fetched); the JSON line gives the three medians and auto / min(cpu,
 * gpu) (target at most 1.1). Each of --runs runs opens a fresh gpu and a fresh auto
 * engine together and alternates their queries, so both medians are of the same
 * seconds (BENCH_PROTOCOL.md: both sides of a ratio measured in the same run); the CPU's
 * engine runs once, first. Without a GPU all three run on the CPU. The exact outputs
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

/* One fresh engine of the bench: its plan, its timed queries, and what --placements and
 * --trace-dir ask of them. */
struct mixed_eng {
    sl_engine_t *eng;
    sl_plan_t *p;
    struct bench_result r;
    uint64_t *sums;        /* the warm-up's exact checksums (N_OUT) */
    bool placements;       /* print each query's time and pipelines' devices to stderr */
    const char *trace_dir; /* each query's Chrome trace as DIR/<placement>_r<run>_q<n>.json */
    const char *label;     /* placement name */
    int64_t run;
};

static int mixed_open(struct cli_common *c, enum sl_placement pl, int64_t rows, int64_t seed,
                      struct mixed_eng *m, char *dev, int dev_len)
{
    c->placement = pl;
    int64_t t_open = cli_now_ns();
    m->eng = cli_open_engine(c);
    m->p = NULL;
    bench_result_init(&m->r, 0);
    if (!m->eng)
        return SL_EINVAL;
    if (m->placements)
        fprintf(stderr, " [%s open %.1f ms]", m->label, (cli_now_ns() - t_open) / 1e6);
    sl_plan_create(&m->p);
    int rc = mixed_plan(m->p, rows, seed);
    if (rc != SL_OK)
        cli_fail("bench mixed: %s", sl_plan_errmsg(m->p));
    if (dev)
        bench_device_name(m->eng, pl, dev, dev_len);
    return rc;
}

/* One query on m, timed from its creation to its last output fetched; rep < 0: the
 * warm-up, whose exact checksums are kept and whose time is not. */
static int mixed_query(struct mixed_eng *m, int64_t rep)
{
    sl_query_t *q = NULL;
    sl_table_t *out[N_OUT] = {0};
    int64_t t0 = cli_now_ns();
    int rc = sl_query_create(m->eng, m->p, &q);
    if (rc == SL_OK && m->trace_dir) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s_r%" PRId64 "_q%" PRId64 ".json", m->trace_dir,
                 m->label, m->run, rep + 1);
        rc = sl_query_trace(q, path);
    }
    if (rc == SL_OK)
        rc = cli_query_run(q);
    for (int i = 0; i < N_OUT && rc == SL_OK; i++)
        rc = sl_query_result(q, outputs[i], &out[i]);
    double ms = (cli_now_ns() - t0) / 1e6;
    if (rc != SL_OK)
        cli_fail("bench mixed: %s", q ? sl_query_errmsg(q) : sl_engine_errmsg(m->eng));
    for (int i = 0; i < N_OUT; i++) {
        if (rc == SL_OK && rep < 0)
            m->sums[i] = i < N_EXACT ? bench_checksum_table(out[i])
                                     : (uint64_t)sl_table_num_rows(out[i]);
        sl_table_unref(out[i]);
    }
    if (rc == SL_OK && rep >= 0)
        bench_add(&m->r, ms);
    if (rc == SL_OK && m->placements) {
        fprintf(stderr, " %c", m->label[0]);
        mixed_print_placements(q, ms);
    }
    sl_query_destroy(q);
    return rc;
}

/* Closes m; the median of its timed queries. */
static double mixed_close(struct mixed_eng *m)
{
    double med = m->r.n ? bench_median(m->r.ms, m->r.n) : 0;
    sl_plan_destroy(m->p);
    int64_t t_close = cli_now_ns();
    sl_engine_close(m->eng);
    if (m->placements && m->eng)
        fprintf(stderr, " [%s close %.1f ms]", m->label, (cli_now_ns() - t_close) / 1e6);
    m->eng = NULL;
    m->p = NULL;
    return med;
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
                   " [--seed S]\n       [--placements] [--trace-dir DIR] [--threads N]"
                   " [--gpu-mem BYTES] [--json]\n"
                   "One plan: a small join (N/256 x N/4096 rows), a large join (N x N), an"
                   " aggregate of N rows\ninto 16 groups and k-means (N/16 points, d = 16,"
                   " k = 64, 5 iterations), run with\nplacement cpu, gpu and auto, each a"
                   " fresh engine; prints the medians and auto / min(cpu, gpu)\n(target <= 1.1)."
                   " --runs K repeats the gpu and auto runs K times (fresh engines, both\n"
                   "open at once, their queries alternating) and reports every run's ratio"
                   " and the worst;\n--cpu-repeat sets the CPU's repeats (default --repeat).\n"
                   "--placements prints to stderr each gpu (g) and auto (a) query's time and"
                   " where each\npipeline ran (C cpu, G gpu, S split), warm-up first, and"
                   " each engine's open and close\ntimes. --trace-dir DIR writes every gpu"
                   " and auto query's Chrome trace as\nDIR/<placement>_r<run>_q<n>.json (q0"
                   " the warm-up; written when the query ends, so\ninside its time).\n");
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
        int r = bench_option(argc, argv, &i, counts, 5, &c, "mixed");
        if (r != 0)
            return r;
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
    struct mixed_eng m[3] = {{.label = names[0], .sums = sums[0]},
                             {.label = names[1], .sums = sums[1], .placements = placements,
                              .trace_dir = trace_dir},
                             {.label = names[2], .sums = sums[2], .placements = placements,
                              .trace_dir = trace_dir}};
    int rc = mixed_open(&c, pls[0], rows, seed, &m[0], NULL, 0);
    for (int64_t rep = -1; rep < cpu_repeat && rc == SL_OK; rep++)
        rc = mixed_query(&m[0], rep);
    cpu_ms = mixed_close(&m[0]);
    for (int64_t k = 0; k < runs && rc == SL_OK; k++) {
        /* Both engines open at once and their queries alternate (gpu first in even
         * repeats, auto first in odd ones and in the warm-up), so the two medians come
         * from the same seconds: one engine after the other, a disturbance of the
         * machine lasting a few queries (2-4x slower, H100 2026-11-27) landed on one
         * side only. */
        m[1].run = m[2].run = k;
        if (placements)
            fprintf(stderr, "run %" PRId64 ":", k);
        rc = mixed_open(&c, pls[1], rows, seed, &m[1], dev, sizeof dev);
        if (rc == SL_OK)
            rc = mixed_open(&c, pls[2], rows, seed, &m[2], NULL, 0);
        for (int64_t rep = -1; rep < repeat && rc == SL_OK; rep++) {
            int first = (rep & 1) ? 2 : 1;
            rc = mixed_query(&m[first], rep);
            if (rc == SL_OK)
                rc = mixed_query(&m[3 - first], rep);
        }
        if (m[2].eng)
            auto_ms[k] = mixed_close(&m[2]);
        if (m[1].eng)
            gpu_ms[k] = mixed_close(&m[1]);
        if (placements)
            fprintf(stderr, "\n  = gpu %.2f ms, auto %.2f ms\n", gpu_ms[k], auto_ms[k]);
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
