/* sluice bench exchange: the exchange's throughput between ranks, as a fraction of
 * memcpy (docs/DISTRIBUTED.md), or between the GPU devices of one process, as a fraction
 * of the device-to-device copy (docs/MULTI_GPU.md).
 * Ranks: each rank generates its share of N rows (int64 key and payload) and sends them
 * through `exchange by=k` (a hash over every rank); rank 0 reports, over --repeat runs,
 * the fastest exchange's bytes sent per second by a rank (the exchange's own wall time,
 * from its profile: partitioning, sending and receiving overlap in it) against this
 * machine's memcpy of as many bytes. Start it under mpirun or with --ranks R (mpirun -n
 * R).
 * Devices (an engine with several GPU devices: --gpus N, with --split-gpu logical ones of
 * one GPU): N rows (int64 key and payload) sorted over every device (multi_gpu=on); the
 * sort's exchange moves (key, row id) pairs of 16 bytes between the devices, timed on
 * the GPU from the senders' first copy to their last (the profile's xchg_us, of the
 * bytes xchg_bytes); the fastest of --repeat runs against a device-to-device copy of as
 * many bytes (sl_engine_measure_device_copy). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"

static int usage(void)
{
    printf("usage: sluice bench exchange [--rows N] [--repeat R] [--ranks R] [--json]\n"
           "                             [engine options: --threads N, --gpus N --split-gpu,\n"
           "                             --set NAME=VALUE ...]\n"
           "Sends each rank's share of N rows (int64 key and payload; default 2^24) through\n"
           "exchange by=k and reports its throughput per rank against memcpy. With several\n"
           "GPU devices (--gpus N), sorts the N rows over them instead and reports the\n"
           "sort's exchange against a device-to-device copy of as many bytes.\n");
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

/* The MPI exchange's steps (profile values exchange_<step>_us, docs/DISTRIBUTED.md). */
static const char *const step_names[4] = {"route", "agree", "pack", "send"};

/* Runs plan 1 + repeat times (the first warms up) and keeps the fastest exchange: the
 * profile's value us_name (microseconds) as *best_s, bytes_name as *bytes, and that
 * run's steps in ms (steps[4], when not NULL; 0 where the profile has none). */
static int best_exchange(sl_engine_t *eng, sl_plan_t *plan, int64_t repeat, const char *us_name,
                         const char *bytes_name, double *best_s, double *bytes, double *steps)
{
    int rc = SL_OK;
    *best_s = *bytes = 0;
    for (int64_t r = 0; rc == SL_OK && r <= repeat; r++) {
        sl_query_t *q;
        if ((rc = sl_query_create(eng, plan, &q)) != SL_OK)
            break;
        if ((rc = sl_query_run(q)) != SL_OK) {
            cli_fail("bench exchange: %s", sl_query_errmsg(q));
        } else if (r > 0) {
            const char *prof = sl_query_profile_json(q);
            double s = bench_profile_value(prof, us_name) / 1e6;
            *bytes = bench_profile_value(prof, bytes_name);
            if (s > 0 && (*best_s == 0 || s < *best_s)) {
                *best_s = s;
                for (int k = 0; steps && k < 4; k++) {
                    char name[32];
                    snprintf(name, sizeof name, "exchange_%s_us", step_names[k]);
                    steps[k] = bench_profile_value(prof, name) / 1e3;
                }
            }
        }
        sl_query_destroy(q);
    }
    return rc;
}

/* The rows of the devices' exchange; 0 on success (the report printed), 1 on failure. */
static int exchange_devices(sl_engine_t *eng, sl_plan_t *plan, int n_gpus, int64_t rows,
                            int64_t repeat, bool json)
{
    double best_s, bytes;
    int rc = best_exchange(eng, plan, repeat, "xchg_us", "xchg_bytes", &best_s, &bytes, NULL);
    if (rc == SL_OK && (best_s <= 0 || bytes <= 0))
        rc = cli_fail("bench exchange: the sort did not go over the %d devices (its profile "
                      "has no xchg_us: docs/MULTI_GPU.md)", n_gpus);
    double copy = 0; /* bytes read + written per second / 1e9: twice the bytes copied */
    if (rc == SL_OK && sl_engine_measure_device_copy(eng, 1, (int64_t)256 << 20, &copy) < 0)
        rc = cli_fail("bench exchange: measuring the device copy: %s", sl_engine_errmsg(eng));
    if (rc != SL_OK)
        return 1;
    char device[128];
    bench_device_name(eng, SL_PLACE_GPU, device, sizeof device);
    double gbps = bytes / best_s / 1e9, copy_gbps = copy / 2;
    if (json)
        printf("{\"bench\":\"exchange\",\"device\":\"%s\",\"devices\":%d,\"rows\":%lld,"
               "\"bytes\":%.0f,\"exchange_ms\":%.4f,\"exchange_gbps\":%.1f,"
               "\"device_copy_gbps\":%.1f,\"fraction_of_device_copy\":%.3f,"
               "\"floor\":\"device copy\",\"floor_ms\":%.4f}\n", device, n_gpus,
               (long long)rows, bytes, best_s * 1e3, gbps, copy_gbps, gbps / copy_gbps,
               bytes / (copy_gbps * 1e9) * 1e3);
    else
        printf("exchange over %d GPU devices: %.0f bytes in %.3f ms = %.1f GB/s; device copy "
               "%.1f GB/s; %.3f of the device copy\n", n_gpus, bytes, best_s * 1e3, gbps,
               copy_gbps, gbps / copy_gbps);
    return 0;
}

/* An engine with several GPU devices: the number, else 0. */
static int gpu_devices(sl_engine_t *eng, sl_plan_t *plan)
{
    sl_query_t *q = NULL;
    const struct sl_explain *ex;
    int n = 0;
    if (sl_query_create(eng, plan, &q) == SL_OK && sl_query_explain(q, &ex) == SL_OK)
        n = ex->n_gpus;
    if (q)
        sl_query_destroy(q);
    return n >= 2 ? n : 0;
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
    snprintf(text, sizeof text, "set multi_gpu = on\n"
             "r = gen.keys rows=%lld kind=unique type=int64 payloads=1\n"
             "s = sort(r) by=k\noutput s\n", (long long)rows);
    sl_plan_t *plan = NULL;
    int rc = sl_plan_create(&plan);
    if (rc == SL_OK && (rc = sl_plan_parse(plan, text, "bench exchange")) != SL_OK)
        cli_fail("bench exchange: %s", sl_plan_errmsg(plan));
    int n_gpus = rc == SL_OK ? gpu_devices(eng, plan) : 0;
    if (n_gpus) {
        rc = exchange_devices(eng, plan, n_gpus, rows, repeat, json);
        sl_plan_destroy(plan);
        sl_engine_close(eng);
        return rc;
    }
    sl_plan_destroy(plan);
    plan = NULL;
    snprintf(text, sizeof text, "r = gen.keys rows=%lld kind=unique type=int64 payloads=1\n"
             "x = exchange(r) by=k\noutput x\n", (long long)rows);
    if (rc == SL_OK && (rc = sl_plan_create(&plan)) == SL_OK &&
        (rc = sl_plan_parse(plan, text, "bench exchange")) != SL_OK)
        cli_fail("bench exchange: %s", sl_plan_errmsg(plan));
    double best_s = 0, bytes = 0, steps[4] = {0};
    if (rc == SL_OK)
        rc = best_exchange(eng, plan, repeat, "exchange_us", "exchange_bytes_sent", &best_s,
                           &bytes, steps);
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
               "\"fraction_of_memcpy\":%.3f,\"floor\":\"memcpy\",\"floor_ms\":%.3f,"
               "\"route_ms\":%.1f,\"agree_ms\":%.1f,\"pack_ms\":%.1f,\"send_ms\":%.1f}\n",
               device, ranks, (long long)rows, bytes, best_s * 1e3, gbps, mbps / 1e9,
               mbps > 0 ? gbps * 1e9 / mbps : 0, mbps > 0 ? bytes / mbps * 1e3 : 0, steps[0],
               steps[1], steps[2], steps[3]);
    else
        printf("exchange over %s ranks: %.0f bytes per rank in %.2f ms = %.2f GB/s per rank; "
               "memcpy %.2f GB/s; %.3f of memcpy (rank 0: route %.1f, agree %.1f, pack %.1f, "
               "send %.1f ms)\n", ranks, bytes, best_s * 1e3, gbps, mbps / 1e9,
               mbps > 0 ? gbps * 1e9 / mbps : 0, steps[0], steps[1], steps[2], steps[3]);
    return 0;
}
