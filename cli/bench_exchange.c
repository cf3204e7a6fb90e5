/* sluice bench exchange: the exchange's throughput between ranks, as a fraction of
 * memcpy (docs/DISTRIBUTED.md). Each rank generates its share of N rows (int64 key and
 * payload) and sends them through `exchange by=k` (a hash over every rank); rank 0
 * reports, over --repeat runs, the fastest exchange's bytes sent per second by a rank
 * (the exchange's own wall time, from its profile: partitioning, sending and receiving
 * overlap in it) against this machine's memcpy of as many bytes. Start it under mpirun
 * or with --ranks R (mpirun -n R). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"

static int usage(void)
{
    printf("usage: sluice bench exchange [--rows N] [--repeat R] [--ranks R] [--json]\n"
           "                             [engine options: --threads N, --set NAME=VALUE ...]\n"
           "Sends each rank's share of N rows (int64 key and payload; default 2^24) through\n"
           "exchange by=k and reports its throughput per rank against memcpy.\n");
    return 0;
}

/* Bytes per second of memcpy over `bytes` (best of 5; the buffers touched first). */
static double memcpy_bps(size_t bytes)
{
    char *a = malloc(bytes), *b = malloc(bytes);
    double best = 0;
    if (a && b) {
        memset(a, 1, bytes);
        memset(b, 2, bytes);
        for (int r = 0; r < 5; r++) {
            int64_t t0 = cli_now_ns();
            memcpy(b, a, bytes);
            double s = (double)(cli_now_ns() - t0) / 1e9;
            if (s > 0 && bytes / s > best)
                best = (double)bytes / s;
        }
    }
    free(a);
    free(b);
    return best;
}

/* A number of the exchange node's "values" in a query profile (0 if absent). */
static double profile_value(const char *json, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "\"%s\":", name);
    const char *p = strstr(json, key);
    return p ? strtod(p + strlen(key), NULL) : 0;
}

int bench_exchange(int argc, char **argv)
{
    int64_t rows = (int64_t)1 << 24, repeat = 5;
    bool json = false;
    struct cli_common c;
    cli_common_init(&c);
    for (int i = 1; i < argc; i++) {
        int k = cli_common_option(&c, argc, argv, &i);
        if (k < 0)
            return CLI_EXIT_USAGE;
        if (k)
            continue;
        const struct bench_count_opt counts[] = {{"--rows", &rows}, {"--repeat", &repeat}};
        int r = bench_count_option(argc, argv, &i, counts, 2);
        if (r < 0)
            return CLI_EXIT_USAGE;
        if (r)
            continue;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return usage();
        if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--ranks") && i + 1 < argc) {
            char **args = calloc((size_t)argc + 2, sizeof *args);
            if (!args)
                return cli_fail("out of memory");
            args[0] = "bench";
            memcpy(args + 1, argv, (size_t)argc * sizeof *args);
            return cli_ranks_exec(atoi(argv[i + 1]), argc + 1, args);
        } else {
            return cli_usage_fail("bench exchange: unknown argument '%s'", argv[i]);
        }
    }
    json |= c.json; /* --json is also a common option */
    sl_engine_t *eng = cli_open_engine(&c);
    if (!eng)
        return 1;
    char text[256];
    snprintf(text, sizeof text, "r = gen.keys rows=%lld kind=unique type=int64 payloads=1\n"
             "x = exchange(r) by=k\noutput x\n", (long long)rows);
    sl_plan_t *plan = NULL;
    int rc = sl_plan_create(&plan);
    if (rc == SL_OK && (rc = sl_plan_parse(plan, text, "bench exchange")) != SL_OK)
        cli_fail("bench exchange: %s", sl_plan_errmsg(plan));
    double best_s = 0, bytes = 0;
    for (int64_t r = 0; rc == SL_OK && r <= repeat; r++) { /* run 0 warms up */
        sl_query_t *q;
        if ((rc = sl_query_create(eng, plan, &q)) != SL_OK)
            break;
        if ((rc = sl_query_run(q)) != SL_OK) {
            cli_fail("bench exchange: %s", sl_query_errmsg(q));
        } else if (r > 0) {
            const char *prof = sl_query_profile_json(q);
            double s = profile_value(prof, "exchange_us") / 1e6;
            bytes = profile_value(prof, "exchange_bytes_sent");
            if (s > 0 && (best_s == 0 || s < best_s))
                best_s = s;
        }
        sl_query_destroy(q);
    }
    int rank = cli_engine_rank(eng);
    char device[128];
    bench_device_name(eng, SL_PLACE_CPU, device, sizeof device);
    char ranks[32] = "1";
    sl_engine_option_get(eng, "ranks", ranks, sizeof ranks);
    sl_plan_destroy(plan);
    sl_engine_close(eng);
    if (rc != SL_OK || rank != 0)
        return rc != SL_OK;
    double mbps = memcpy_bps(bytes > 0 ? (size_t)bytes : 1 << 20);
    double gbps = best_s > 0 ? bytes / best_s / 1e9 : 0;
    if (json)
        printf("{\"bench\":\"exchange\",\"device\":\"%s\",\"ranks\":%s,\"rows\":%lld,\"bytes_per_rank\":%.0f,"
               "\"exchange_ms\":%.3f,\"exchange_gbps\":%.3f,\"memcpy_gbps\":%.3f,"
               "\"fraction_of_memcpy\":%.3f,\"floor\":\"memcpy\",\"floor_ms\":%.3f}\n", device, ranks,
               (long long)rows, bytes, best_s * 1e3, gbps, mbps / 1e9,
               mbps > 0 ? gbps * 1e9 / mbps : 0, mbps > 0 ? bytes / mbps * 1e3 : 0);
    else
        printf("exchange over %s ranks: %.0f bytes per rank in %.2f ms = %.2f GB/s per rank; "
               "memcpy %.2f GB/s; %.3f of memcpy\n", ranks, bytes, best_s * 1e3, gbps,
               mbps / 1e9, mbps > 0 ? gbps * 1e9 / mbps : 0);
    return 0;
}
