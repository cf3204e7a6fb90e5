/* sluice bench: benchmarks measured as docs/BENCH_PROTOCOL.md defines; each prints one
 * JSON object last. bench/run.py runs them from the specs in bench/specs/. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Random DAG: task i depends on up to two earlier tasks, chosen from the last 64 so
 * that the graph stays wide enough to keep all workers busy. */
int bench_tasks(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c);
    int64_t n = 100000, repeat = 5, seed = 42;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help")) {
            printf("usage: sluice bench tasks [--tasks N] [--repeat R] [--threads N] [--json]\n"
                   "Runs a random DAG of N empty tasks (each depends on up to two earlier\n"
                   "ones) through the scheduler; reports wall time per task.\n");
            return 0;
        }
        const struct bench_count_opt counts[] = {{"--tasks", &n}, {"--repeat", &repeat},
                                                 {"--seed", &seed}};
        int r = bench_count_option(argc, argv, &i, counts, 3);
        if (r == 0)
            r = cli_common_option(&c, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r == 0)
            return cli_fail("bench tasks: unknown option '%s'", argv[i]);
    }
    if (n < 1 || repeat < 1)
        return cli_fail("bench tasks: --tasks and --repeat must be at least 1");
    int64_t *off = malloc((size_t)(n + 1) * sizeof *off);
    int64_t *deps = malloc((size_t)n * 2 * sizeof *deps);
    if (!off || !deps)
        return cli_fail("out of memory");
    uint64_t x = (uint64_t)seed * 0x9E3779B97F4A7C15ull + 1;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        off[i] = k;
        int nd = i == 0 ? 0 : (int)(x % 3);
        for (int d = 0; d < nd; d++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int64_t back = 1 + (int64_t)(x % 64);
            deps[k++] = i - back < 0 ? 0 : i - back;
        }
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    }
    off[n] = k;
    sl_engine_t *eng = cli_open_engine(&c);
    if (!eng)
        return 1;
    struct sl_task_graph g = {.n_tasks = n, .dep_offsets = off, .deps = deps};
    double *ms = calloc((size_t)repeat, sizeof *ms);
    int rc = sl_engine_run_tasks(eng, &g); /* warm-up */
    for (int64_t r = 0; r < repeat && rc == SL_OK; r++) {
        int64_t t0 = cli_now_ns();
        rc = sl_engine_run_tasks(eng, &g);
        ms[r] = (cli_now_ns() - t0) / 1e6;
    }
    if (rc != SL_OK) {
        cli_fail("bench tasks: %s", sl_last_errmsg());
    } else {
        qsort(ms, (size_t)repeat, sizeof *ms, cmp_double);
        double med = ms[repeat / 2];
        char device[160];
        bench_device_name(eng, SL_PLACE_CPU, device, sizeof device);
        printf("{\"bench\":\"tasks\",\"tasks\":%" PRId64 ",\"edges\":%" PRId64
               ",\"threads\":%d,\"time_ms\":%.3f,\"min_ms\":%.3f,\"max_ms\":%.3f,"
               "\"us_per_task\":%.3f,\"device\":\"%s\"}\n",
               n, k, sl_engine_num_threads(eng), med, ms[0], ms[repeat - 1], med * 1e3 / n,
               device);
    }
    free(ms);
    free(off);
    free(deps);
    sl_engine_close(eng);
    return rc == SL_OK ? 0 : 1;
}

/* The benchmarks; add one line per cli/bench_<what>.c. */
static const struct bench_entry benches[] = {
    {"tasks", "scheduler overhead on a random DAG of empty tasks", bench_tasks},
    {"join", "equi-join of a unique build side and a foreign-key probe side", bench_join},
    {"sort", "parallel radix sort of random keys with payload columns", bench_sort},
    {"partition", "radix partitioning of random keys with payload columns", bench_partition},
    {"aggregate", "hash group-by count and sum on random 32-bit keys", bench_aggregate},
    {"kmeans", "Lloyd k-means iterations on float32 blobs", bench_kmeans},
    {"mixed", "a plan of joins, an aggregate and k-means under placement cpu, gpu and auto",
     bench_mixed},
    {"exchange", "throughput of the exchange between MPI ranks against memcpy", bench_exchange},
    {"tpch", "TPC-H queries on loaded tables, one JSON line each (docs/TPCH.md)", bench_tpch},
};

int cmd_bench(int argc, char **argv)
{
    size_t n = sizeof benches / sizeof benches[0];
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        FILE *f = argc < 2 ? stderr : stdout; /* no benchmark named: an error */
        if (argc < 2)
            cli_fail("bench: which benchmark?");
        fprintf(f, "usage: sluice bench <what> [options]\n");
        for (size_t i = 0; i < n; i++)
            fprintf(f, "  %-10s %s\n", benches[i].name, benches[i].summary);
        fprintf(f, "Run 'sluice bench <what> --help' for the options of each.\n");
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(argv[1], benches[i].name))
            return benches[i].run(argc - 1, argv + 1);
    }
    return cli_usage_fail("bench: unknown benchmark '%s' (see sluice bench --help)", argv[1]);
}
