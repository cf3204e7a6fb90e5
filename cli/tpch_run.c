/* The options of `sluice tpch` and `sluice bench tpch`, and one query's runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "tpch.h"

/* "1,6,22" or "all" into a->queries. */
static int parse_queries(struct tpch_args *a, const char *s)
{
    memset(a->queries, 0, sizeof a->queries);
    if (!strcmp(s, "all")) {
        for (int q = 1; q <= TPCH_QUERIES; q++)
            a->queries[q] = true;
        return 0;
    }
    while (*s) {
        char *end;
        long q = strtol(s, &end, 10);
        if (end == s || q < 1 || q > TPCH_QUERIES || (*end && *end != ','))
            return cli_usage_fail("--query: '%s' is not a list of query numbers 1..22, or all",
                                  s);
        a->queries[q] = true;
        s = *end ? end + 1 : end;
    }
    return 0;
}

static const char *sf_of_dir(const char *dir, char *buf, size_t len)
{
    const char *base = strrchr(dir, '/');
    base = base && base[1] ? base + 1 : dir;
    const char *sf = strstr(base, "sf");
    char *end;
    if (!sf || strtod(sf + 2, &end) <= 0 || (*end && *end != '/'))
        return "unknown";
    snprintf(buf, len, "%.*s", (int)(end - sf - 2), sf + 2);
    return buf;
}

int tpch_args_parse(struct tpch_args *a, int argc, char **argv, const char *what,
                    const char *usage)
{
    cli_common_init(&a->common);
    a->residency = "host";
    parse_queries(a, "all");
    static const char *const valued[] = {"--sf", "--data", "--cache", "--plans",
                                         "--residency", "--expected", "--query", "--repeat",
                                         "--trace-dir"};
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            fputs(usage, stdout);
            return 1;
        }
        if (!strcmp(o, "--print")) {
            a->print = true;
            continue;
        }
        if (!strcmp(o, "--explain") || !strcmp(o, "--explain-analyze")) {
            a->explain = o[9] ? TPCH_EXPLAIN_ANALYZE : TPCH_EXPLAIN_PLAN;
            continue;
        }
        int k = 0;
        while (k < 9 && strcmp(o, valued[k]))
            k++;
        if (k < 9) {
            if (i + 1 >= argc)
                return cli_usage_fail("%s needs a value", o);
            const char *v = argv[++i];
            const char **slot[] = {&a->sf, &a->data, &a->cache, &a->plans, &a->residency,
                                   &a->expected};
            if (k == 8) {
                a->trace = v;
            } else if (k < 6) {
                *slot[k] = v;
            } else if (k == 6) {
                if (parse_queries(a, v))
                    return CLI_EXIT_USAGE;
            } else if (cli_parse_count(v, &a->repeat) < 0 || a->repeat < 1 ||
                       a->repeat > BENCH_MAX_REPEAT) {
                return cli_usage_fail("--repeat: '%s' is not a count from 1 to %d", v,
                                      BENCH_MAX_REPEAT);
            }
            continue;
        }
        int r = cli_common_option(&a->common, argc, argv, &i);
        if (r < 0)
            return CLI_EXIT_USAGE;
        if (r == 0)
            return cli_usage_fail("%s: unknown option '%s' (see sluice %s --help)", what, o,
                                  what);
    }
    if (strcmp(a->residency, "host") && strcmp(a->residency, "pinned") &&
        strcmp(a->residency, "gpu"))
        return cli_usage_fail("--residency: '%s' is not host, pinned or gpu", a->residency);
    char *end;
    if (a->sf && (strtod(a->sf, &end) <= 0 || *end))
        return cli_usage_fail("--sf: '%s' is not a positive scale factor", a->sf);
    if (!a->sf) /* the label of --data DIR: its name's "sf<X>" (tpch-sf0.01), else unknown */
        a->sf = !a->data ? "1" : sf_of_dir(a->data, a->sf_buf, sizeof a->sf_buf);
    return 0;
}

struct check_ctx {
    const struct tpch_args *a;
    const char *name;
    struct tpch_run *r;
};

/* The warm-up's result: counted, summed, printed, compared with the expected answer. */
static int check_result(void *user, sl_table_t *out, struct bench_result *res)
{
    struct check_ctx *c = user;
    res->output_rows = sl_table_num_rows(out);
    res->checksum = bench_checksum_table(out);
    if (c->a->print)
        cli_print_table(c->name, out, CLI_TABLE, INT64_MAX);
    if (c->a->expected) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.csv", c->a->expected, c->name);
        c->r->checked = true;
        if (tpch_expected_compare(out, path, c->r->message, sizeof c->r->message))
            c->r->status = TPCH_WRONG;
    }
    return SL_OK;
}

static bool is_result(const char *output)
{
    return output && !strcmp(output, "result");
}

void tpch_run_query(sl_engine_t *eng, const struct tpch_args *a, const char *plans_dir,
                    const struct tpch_data *d, int query, struct tpch_run *r)
{
    memset(r, 0, sizeof *r);
    r->query = query;
    char name[8], path[4096];
    snprintf(name, sizeof name, "q%02d", query);
    snprintf(path, sizeof path, "%s/%s.plan", plans_dir, name);
    if (access(path, F_OK) != 0) {
        r->status = TPCH_MISSING;
        snprintf(r->message, sizeof r->message, "no plan %.480s", path);
        return;
    }
    /* Errors of the plan and the runs are printed by the helpers as they happen. */
    sl_plan_t *plan = cli_load_plan_tables(path, d->names, d->tables, TPCH_TABLES);
    if (!plan) {
        r->status = TPCH_ERROR;
        snprintf(r->message, sizeof r->message, "the plan %.460s does not load", path);
        return;
    }
    int n = 0;
    while (n < sl_plan_num_nodes(plan) && !is_result(sl_plan_output_name(plan, n)))
        n++;
    if (n == sl_plan_num_nodes(plan)) {
        r->status = TPCH_ERROR;
        snprintf(r->message, sizeof r->message, "the plan %.400s has no output 'result' "
                 "(output NODE as result)", path);
        cli_fail("%s", r->message);
        sl_plan_destroy(plan);
        return;
    }
    char *text = cli_read_plan_text(path);
    r->scan_bytes = text ? tpch_scan_bytes(text, d) : 0;
    free(text);
    struct bench_result res;
    bench_result_init(&res, 0);
    sl_engine_reset_peaks(eng);
    struct check_ctx ctx = {a, name, r};
    char what[16];
    snprintf(what, sizeof what, "tpch %s", name);
    if (bench_run_plan(eng, plan, "result", a->repeat, what, &res, check_result, &ctx) !=
        SL_OK) {
        r->status = TPCH_ERROR;
        snprintf(r->message, sizeof r->message, "the query failed (message above)");
    }
    sl_plan_destroy(plan);
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    r->gpu_peak_bytes = sl_engine_device_count(eng) > 1 && sl_engine_mem_stats(eng, &ms) == SL_OK
                            ? ms.gpu_peak : -1;
    r->runs = res.n;
    r->h2d_bytes = res.bytes_h2d;
    r->rows = res.output_rows;
    r->checksum = res.checksum;
    r->median_ms = bench_median(res.ms, res.n);
    r->cpu_ms = bench_median(res.cpu_ms, res.n);
    r->min_ms = r->max_ms = res.n ? res.ms[0] : 0;
    for (int i = 1; i < res.n; i++) {
        r->min_ms = res.ms[i] < r->min_ms ? res.ms[i] : r->min_ms;
        r->max_ms = res.ms[i] > r->max_ms ? res.ms[i] : r->max_ms;
    }
}
