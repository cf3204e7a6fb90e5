/* sluice tpch and sluice bench tpch (docs/TPCH.md): load the TPC-H tables once, run
 * the plans of plans/tpch/ over them, print times (a table, or one JSON line a query
 * as docs/BENCH_PROTOCOL.md describes) and check answers against expected files. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "tpch.h"

static const char tpch_usage[] =
    "usage: sluice tpch [--sf X | --data DIR] [--cache DIR] [--query N,M|all]\n"
    "       [--placement cpu|gpu|auto] [--residency host|pinned|gpu] [--repeat N]\n"
    "       [--expected DIR] [--print] [--plans DIR] [--threads N] [--set NAME=VALUE ...]\n"
    "       [--explain | --explain-analyze [--trace-dir DIR]]\n"
    "Loads the eight TPC-H tables of DIR (or of the cache ./tpch-sf<X>, which tpchgen-cli\n"
    "fills when a file is missing; --sf 1 by default) once into memory, then runs each\n"
    "query's plan (plans/tpch/qNN.plan; a missing plan is reported, not an error): one\n"
    "warm-up, then --repeat timed runs (1 by default), printing the median. --expected\n"
    "compares each answer with DIR/qNN.csv (tests/tpch/tpch_check.py --write-expected\n"
    "DIR writes them) and exits 1 on a difference; --print shows the result rows.\n"
    "--explain prints, instead of the runs, each query's `sluice explain` report on the\n"
    "loaded tables (every pipeline, where it runs and why, tasks, costs, bytes);\n"
    "--explain-analyze runs each query once to warm up, then once measured, and adds what\n"
    "it measured beside the estimates; --trace-dir DIR writes that run's Chrome trace\n"
    "(sluice trace-render draws it) as DIR/qNN.json and its profile as qNN.profile.json.\n";

static const char bench_usage[] =
    "usage: sluice bench tpch [--sf X | --data DIR] [--query N,M|all] [--repeat N]\n"
    "       [--placement cpu|gpu|auto] [--residency host|pinned|gpu] [--expected DIR] ...\n"
    "The options of sluice tpch; prints a JSON line for the loading, one per query\n"
    "(query, sf, placement, residency, time_ms = median_ms of --repeat hot runs after a\n"
    "warm-up, 5 by default; status ok, missing, error or wrong) and one of geometric means.\n";

static const char *const status_names[] = {"ok", "missing", "error", "wrong"};

/* Runs the selected queries; prints each as it finishes. Returns the exit code. */
static int run_all(struct tpch_args *a, bool json)
{
    const char *plans = tpch_plans_dir(a);
    const char *dir = tpch_data_dir(a);
    if (!dir)
        return 1;
    sl_engine_t *eng = cli_open_engine(&a->common);
    if (!eng)
        return 1;
    struct tpch_data d;
    if (tpch_load(eng, plans, dir, a->residency, &d, !json)) {
        sl_engine_close(eng);
        return 1;
    }
    static const char *const places[] = {"auto", "cpu", "gpu", "coprocess"};
    const char *place = (unsigned)a->common.placement < 4 ? places[a->common.placement] : "?";
    char device[160];
    bench_device_name(eng, a->common.placement, device, sizeof device);
    struct sl_mem_stats loaded = SL_MEM_STATS_INIT; /* GPU bytes of resident tables */
    sl_engine_mem_stats(eng, &loaded);
    int64_t resident_bytes = loaded.gpu_in_use, total_rows = 0;
    for (int t = 0; t < TPCH_TABLES; t++)
        total_rows += d.rows[t];
    if (json) {
        printf("{\"bench\":\"tpch\",\"phase\":\"load\",\"sf\":\"%s\",\"source\":\"%s\","
               "\"residency\":\"%s\",\"load_ms\":%.3f,\"rows\":%" PRId64 ",\"tables\":{",
               a->sf, a->data ? "data" : "cache", a->residency, d.total_ms, total_rows);
        for (int t = 0; t < TPCH_TABLES; t++)
            printf("%s\"%s\":%.3f", t ? "," : "", d.names[t], d.ms[t]);
        printf("}}\n");
    } else {
        printf("loaded %d tables of %s (%" PRId64 " rows) in %.1f ms, residency %s\n",
               TPCH_TABLES, dir, total_rows, d.total_ms, a->residency);
    }
    fflush(stdout);
    if (a->explain) {
        int failed = 0;
        for (int q = 1; q <= TPCH_QUERIES; q++)
            failed |= a->queries[q] ? tpch_explain_query(eng, a, plans, &d, q) : 0;
        tpch_data_release(&d);
        sl_engine_close(eng);
        return failed;
    }
    /* The floor: reading each query's columns once where the data lives, at the memory's
     * or the link's bandwidth (measured once; docs/TPCH.md). */
    struct bench_floor fl = {0};
    bool cpu = a->common.placement == SL_PLACE_CPU || sl_engine_device_count(eng) < 2;
    enum bench_where where = cpu                                  ? BENCH_ON_CPU
                             : !strcmp(a->residency, "gpu")       ? BENCH_ON_GPU
                                                                  : BENCH_LINK;
    if (json)
        bench_floor_measure(eng, where, (double)((int64_t)1 << 30), 0, &fl);
    int n[4] = {0};
    double log_sum = 0, total_ms = 0;
    for (int q = 1; q <= TPCH_QUERIES; q++) {
        if (!a->queries[q])
            continue;
        struct tpch_run r;
        tpch_run_query(eng, a, plans, &d, q, &r);
        n[r.status]++;
        if (r.status == TPCH_OK) {
            log_sum += log(r.median_ms > 1e-6 ? r.median_ms : 1e-6);
            total_ms += r.median_ms;
        }
        if (json && (r.status == TPCH_MISSING || r.status == TPCH_ERROR)) {
            printf("{\"bench\":\"tpch\",\"query\":\"q%02d\",\"status\":\"%s\",\"sf\":\"%s\","
                   "\"placement\":\"%s\",\"message\":", q, status_names[r.status], a->sf, place);
            cli_put_json_string(r.message);
            printf("}\n");
        } else if (json) {
            printf("{\"bench\":\"tpch\",\"query\":\"q%02d\",\"status\":\"%s\",\"sf\":\"%s\","
                   "\"placement\":\"%s\",\"residency\":\"%s\",\"time_ms\":%.3f,"
                   "\"median_ms\":%.3f,\"min_ms\":%.3f,\"max_ms\":%.3f,\"cpu_ms\":%.3f,\"runs\":%d,"
                   "\"rows\":%" PRId64 ",\"checksum\":%" PRIu64 ",\"load_ms\":%.3f,"
                   "\"device\":\"%s\"",
                   q, status_names[r.status], a->sf, place, a->residency, r.median_ms,
                   r.median_ms, r.min_ms, r.max_ms, r.cpu_ms, r.runs, r.rows, r.checksum, d.total_ms,
                   device);
            if (r.checked)
                printf(",\"matches_expected\":%s", r.status == TPCH_WRONG ? "false" : "true");
            if (r.gpu_peak_bytes >= 0)
                printf(",\"gpu_peak_bytes\":%" PRId64 ",\"gpu_resident_bytes\":%" PRId64,
                       r.gpu_peak_bytes, resident_bytes);
            printf(",\"scan_bytes\":%" PRId64 ",\"h2d_bytes\":%" PRId64, r.scan_bytes,
                   r.h2d_bytes);
            /* Over the link, the columns may cross narrower than they are (pinned tables'
             * narrow copies: docs/TPCH.md): then what the query moved is its floor. */
            int64_t floor_bytes = where == BENCH_LINK && r.h2d_bytes > 0 &&
                                          r.h2d_bytes < r.scan_bytes
                                      ? r.h2d_bytes
                                      : r.scan_bytes;
            if (fl.kind && fl.in_gbps > 0) {
                double f_ms = (double)floor_bytes / (fl.in_gbps * 1e6);
                printf(",\"floor\":\"%s\",\"floor_gbps\":%.3f,\"floor_ms\":%.4f,"
                       "\"x_floor\":%.2f", fl.kind, fl.in_gbps, f_ms,
                       f_ms > 0 ? r.median_ms / f_ms : 0);
            }
            printf("}\n");
        } else if (r.status == TPCH_MISSING) {
            printf("q%02d  missing (%s)\n", q, r.message);
        } else if (r.status == TPCH_ERROR) {
            printf("q%02d  ERROR (%s)\n", q, r.message);
        } else {
            printf("q%02d  %8" PRId64 " rows %10.2f ms (median of %d, CPU %.2f ms)  %s%s\n", q,
                   r.rows, r.median_ms, r.runs, r.cpu_ms,
                   r.status == TPCH_WRONG ? "WRONG: " : r.checked ? "matches the expected answer"
                                                                  : "",
                   r.status == TPCH_WRONG ? r.message : "");
        }
        fflush(stdout);
    }
    double geo = n[TPCH_OK] ? exp(log_sum / n[TPCH_OK]) : 0;
    if (json)
        printf("{\"bench\":\"tpch\",\"summary\":true,\"sf\":\"%s\",\"placement\":\"%s\","
               "\"residency\":\"%s\",\"geomean_ms\":%.3f,\"total_ms\":%.3f,\"ok\":%d,"
               "\"missing\":%d,\"error\":%d,\"wrong\":%d,\"load_ms\":%.3f,\"device\":\"%s\"}\n",
               a->sf, place, a->residency, geo, total_ms, n[TPCH_OK], n[TPCH_MISSING],
               n[TPCH_ERROR], n[TPCH_WRONG], d.total_ms, device);
    else
        printf("%d ok, %d wrong, %d failed, %d missing; %.1f ms in all, geometric mean "
               "%.2f ms (%s, placement %s)\n", n[TPCH_OK], n[TPCH_WRONG], n[TPCH_ERROR],
               n[TPCH_MISSING], total_ms, geo, device, place);
    tpch_data_release(&d);
    sl_engine_close(eng);
    return n[TPCH_ERROR] || n[TPCH_WRONG] ? 1 : 0;
}

/* Both commands: their options, then the runs; `repeat` is the default of --repeat. */
static int tpch_main(int argc, char **argv, const char *what, const char *usage,
                     int64_t repeat, bool json)
{
    struct tpch_args a;
    memset(&a, 0, sizeof a);
    a.repeat = repeat;
    int rc = tpch_args_parse(&a, argc, argv, what, usage);
    if (rc)
        return rc == 1 ? 0 : rc;
    if (json && a.explain)
        return cli_usage_fail("%s: --explain is an option of sluice tpch", what);
    if (a.trace && a.explain != TPCH_EXPLAIN_ANALYZE)
        return cli_usage_fail("%s: --trace-dir goes with --explain-analyze", what);
    return run_all(&a, json);
}

int cmd_tpch(int argc, char **argv)
{
    return tpch_main(argc, argv, "tpch", tpch_usage, 1, false);
}

int bench_tpch(int argc, char **argv)
{
    return tpch_main(argc, argv, "bench tpch", bench_usage, 5, true);
}
