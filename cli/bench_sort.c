/* sluice bench sort: sorts N random keys (int32 or int64) carrying P payload columns
 * of the key's width (docs/BENCH_PROTOCOL.md, "Sort"). --resident device copies the
 * input to GPU 0 before timing and leaves the result there (the check reads it back after
 * the timed span); GPU runs report the operator's phases (gpu_concat, gpu_sort,
 * gpu_gather: CUDA events) and peak_device_bytes. Keys and payloads are generated outside
 * the timed span; each repeat times one query (create, run, result) of table ->
 * sort(by=k) -> output from the same input table. The checksum covers every output
 * value; the output is checked to be sorted within each batch and to hold the input's
 * values. The floor (bench_floor.c) is that of the residency: every row read and written
 * once in host memory (CPU), in device memory (--resident device), or sent up and back
 * down the link (host-resident GPU runs). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int usage(void)
{
    printf("usage: sluice bench sort [--rows N] [--key-bytes 4|8] [--payloads P] [--desc]\n"
           "                         [--repeat R] [--seed S] [--threads N]\n"
           "                         [--placement cpu|gpu|auto] [--resident host|device]\n"
           "                         [--pageable] [--gpu-mem BYTES] [--engine-time] [--json]\n"
           "                         [--budgets B1,B2,... [--then \"OPTION=VALUE ...\"]...]\n"
           "Sorts N random keys with P payload columns of the key's width (defaults: 2^24,\n"
           "4, 1, 5 repeats after one warm-up) and prints the protocol's JSON line. GPU runs\n"
           "on host-resident input pin it first (unless --pageable) and print the transfer\n"
           "floor (bytes up and down over the link bandwidths measured in the same run);\n"
           "--gpu-mem below the data sorts out of core (docs/OUT_OF_CORE.md). --engine-time\n"
           "adds the host's time in query creation, run and result as phases and prints the\n"
           "last repeat's query profile on stderr.\n"
           "--budgets: one engine per GPU budget (--gpu-mem of each), all open at once, and\n"
           "R rounds, each timing one query per budget (and per --then: the same with those\n"
           "engine options set, then restored), interleaved, the order rotated each round\n"
           "(issue 23: the spread between processes hid differences between budgets). One\n"
           "JSON line per budget and variant (its median, every sample), then one per\n"
           "variant with \"summary\":\"budgets\": the medians by budget, and monotone_ratio,\n"
           "the largest t(larger budget) / t(next smaller) over adjacent budgets, each the\n"
           "median of its rounds' ratios (1 or less: never slower with more memory; the\n"
           "ratio of the medians is median_ratio), with the rounds the larger was faster.\n");
    return 0;
}

/* 1 if every batch of t is sorted by column 0 (ascending unless desc). */
static int batches_sorted(sl_table_t *t, int desc)
{
    for (int64_t b = 0; b < sl_table_num_batches(t); b++) {
        struct sl_column c;
        sl_batch_column(sl_table_batch(t, b), 0, &c);
        for (int64_t i = 1; i < c.length; i++) {
            int64_t x, y;
            if (c.type == SL_TYPE_INT32) {
                x = ((const int32_t *)c.data)[c.offset + i - 1];
                y = ((const int32_t *)c.data)[c.offset + i];
            } else {
                x = ((const int64_t *)c.data)[c.offset + i - 1];
                y = ((const int64_t *)c.data)[c.offset + i];
            }
            if (desc ? x < y : x > y)
                return 0;
        }
    }
    return 1;
}

struct sort_check {
    int64_t n;
    uint64_t in_sum;
    int desc;
};

static int check_host(const struct sort_check *c, sl_table_t *out, struct bench_result *res);

/* The output has every input row (by count and checksum) and is in order. */
static int check_sorted(void *user, sl_table_t *out, struct bench_result *res)
{
    const struct sort_check *c = user;
    sl_table_t *host;
    if (sl_table_to_host(out, &host) != SL_OK) /* a device result (--resident device) */
        return cli_fail("bench sort: %s", sl_last_errmsg()), SL_EINTERNAL;
    int rc = check_host(c, host, res);
    sl_table_unref(host);
    return rc;
}

static int check_host(const struct sort_check *c, sl_table_t *out, struct bench_result *res)
{
    res->output_rows = sl_table_num_rows(out);
    res->checksum = bench_checksum_table(out);
    if (res->output_rows != c->n || res->checksum != c->in_sum || !batches_sorted(out, c->desc))
        return cli_fail("bench sort: wrong result (%" PRId64 " rows)", res->output_rows),
               SL_EINTERNAL;
    return SL_OK;
}

#define MAX_BUDGETS 6
#define MAX_THEN 3
/* Longest --budgets list and --then spec: both are copied into 256-byte buffers to be
 * cut at commas or spaces (a longer one lost its tail silently), and a --then spec is
 * printed as "variant" into the 2,400-byte JSON lines of sort_budgets, whose appends
 * assume it short (a spec of some 2,000 characters wrote past them). */
#define MAX_SPEC 200

/* --then "OPTION=VALUE ...": sets the options on eng, or (restore) sets them back to what
 * they were (old, filled when setting). */
static int then_set(sl_engine_t *eng, const char *spec, char old[][128], int restore)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL, *tok;
    int n = 0;
    for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save), n++) {
        char *eq = strchr(tok, '=');
        if (eq)
            *eq = 0;
        if (!eq || n == 8 ||
            (!restore && sl_engine_option_get(eng, tok, old[n], sizeof old[n]) < 0) ||
            sl_engine_option_set(eng, tok, restore ? old[n] : eq + 1) < 0)
            return cli_fail("bench sort: --then '%s': cannot set '%s' (%s)", spec, tok,
                            sl_last_errmsg()), SL_EINVAL;
    }
    return SL_OK;
}

struct budgets_args {
    int64_t budget[MAX_BUDGETS];
    int nb;
    const char *then[MAX_THEN];
    int n_then;
};

/* --budgets B1,B2,...: at most MAX_BUDGETS counts (cli_parse_count). */
static int parse_budgets(const char *list, struct budgets_args *ba)
{
    char buf[256];
    if (strlen(list) > MAX_SPEC)
        return cli_fail("bench sort: --budgets: at most %d characters", MAX_SPEC);
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (ba->nb == MAX_BUDGETS || cli_parse_count(tok, &ba->budget[ba->nb]) < 0 ||
            ba->budget[ba->nb] <= 0)
            return cli_fail("bench sort: --budgets '%s': at most %d budgets (counts > 0, "
                            "e.g. 1Gi,512Mi,128Mi)", list, MAX_BUDGETS);
        ba->nb++;
    }
    return ba->nb ? 0 : cli_fail("bench sort: --budgets: none given");
}

/* The --budgets run: engines[b] has budget b; `in` is pinned once they are open (unless
 * pageable). Every
 * (budget, variant) pair warms up and is checked once, then `repeat` rounds each time
 * one query of every pair, in an order rotated by one each round. */
static int sort_budgets(struct cli_common *c, const struct budgets_args *ba, sl_table_t *in,
                        int pageable, sl_plan_t *plan, int64_t repeat, const struct sort_check *chk,
                        double bytes, const char *extra0)
{
    const int nb = ba->nb, nv = 1 + ba->n_then, np = nb * nv;
    sl_engine_t *eng[MAX_BUDGETS] = {NULL};
    struct bench_result *res = calloc((size_t)np, sizeof *res);
    static char old[8][128];
    int rc = res ? SL_OK : SL_ENOMEM;
    for (int b = 0; b < nb && rc == SL_OK; b++) {
        struct cli_common cb = *c;
        cb.gpu_mem = ba->budget[b];
        if (!(eng[b] = cli_open_engine(&cb)))
            rc = SL_EINVAL;
    }
    if (rc == SL_OK && !pageable && sl_table_pin(in) < 0) /* not timed, as bench_sort's */
        fprintf(stderr, "bench sort: cannot pin the input (%s); it stays pageable\n",
                sl_last_errmsg());
    for (int k = 0; k < np && rc == SL_OK; k++) { /* pair k: budget k % nb, variant k / nb */
        int b = k % nb, v = k / nb;
        bench_result_init(&res[k], chk->n);
        bench_device_name(eng[b], c->placement, res[k].device, sizeof res[k].device);
        if (v && (rc = then_set(eng[b], ba->then[v - 1], old, 0)) < 0)
            break;
        rc = bench_run_plan_from(eng[b], plan, "sorted", -1, 0, "sort", &res[k],
                                 check_sorted, (void *)chk);
        if (v && rc == SL_OK)
            rc = then_set(eng[b], ba->then[v - 1], old, 1);
    }
    for (int64_t r = 0; r < repeat && rc == SL_OK; r++)
        for (int j = 0; j < np && rc == SL_OK; j++) {
            int k = (int)((j + r) % np), b = k % nb, v = k / nb;
            if (v && (rc = then_set(eng[b], ba->then[v - 1], old, 0)) < 0)
                break;
            rc = bench_run_plan_from(eng[b], plan, "sorted", 0, 1, "sort", &res[k],
                                     check_sorted, (void *)chk);
            if (v && rc == SL_OK)
                rc = then_set(eng[b], ba->then[v - 1], old, 1);
        }
    struct bench_floor fl = {0};
    if (rc == SL_OK) /* one floor for all: the link's, measured once after the rounds */
        bench_floor_measure(eng[0], BENCH_LINK_SERIAL, bytes, bytes, &fl);
    for (int k = 0; k < np && rc == SL_OK; k++) {
        int b = k % nb, v = k / nb;
        double med = bench_median(res[k].ms, res[k].n);
        char extra[2400];
        int len = snprintf(extra, sizeof extra, "%s,\"data_gb_per_s\":%.3f", extra0,
                           bytes / (med * 1e6));
        len += bench_floor_json(&fl, med, extra + len, sizeof extra - (size_t)len);
        len += snprintf(extra + len, sizeof extra - (size_t)len,
                        ",\"gpu_mem\":%lld,\"variant\":\"%s\",\"samples_ms\":[",
                        (long long)ba->budget[b], v ? ba->then[v - 1] : "");
        for (int i = 0; i < res[k].n; i++)
            len += snprintf(extra + len, sizeof extra - (size_t)len, "%s%.3f", i ? "," : "",
                            res[k].ms[i]);
        snprintf(extra + len, sizeof extra - (size_t)len, "]");
        bench_print_run(eng[b], true, "sort", &res[k], extra);
    }
    /* Per variant: budgets from the largest down; each adjacent pair's ratio of medians,
     * the median of its per-round ratios (paired_ratio: drift between rounds cancels) and
     * the rounds in which the larger budget was the faster. monotone_ratio is the largest
     * paired ratio: on an H100 (session 20) the ratio of medians of 7 of two budgets that
     * ran one plan was 0.955 to 1.028 in four processes, the paired one 0.956 to 1.015. */
    for (int v = 0; v < nv && rc == SL_OK; v++) {
        int ord[MAX_BUDGETS];
        for (int b = 0; b < nb; b++)
            ord[b] = b;
        for (int i = 1; i < nb; i++)
            for (int j = i; j > 0 && ba->budget[ord[j]] > ba->budget[ord[j - 1]]; j--) {
                int x = ord[j];
                ord[j] = ord[j - 1];
                ord[j - 1] = x;
            }
        char line[2400];
        int len = snprintf(line, sizeof line,
                           "{\"bench\":\"sort\",\"summary\":\"budgets\",\"variant\":\"%s\","
                           "\"device\":\"%s\",\"rows\":%lld,\"repeat\":%lld,\"gpu_mem\":[",
                           v ? ba->then[v - 1] : "", res[0].device, (long long)chk->n,
                           (long long)repeat);
        for (int i = 0; i < nb; i++)
            len += snprintf(line + len, sizeof line - (size_t)len, "%s%lld", i ? "," : "",
                            (long long)ba->budget[ord[i]]);
        len += snprintf(line + len, sizeof line - (size_t)len, "],\"medians_ms\":[");
        double worst = 0, worst_med = 0, worst_x = 0;
        for (int i = 0; i < nb; i++) {
            const struct bench_result *x = &res[v * nb + ord[i]];
            double m = bench_median(x->ms, x->n);
            worst_x = fl.ms > 0 && m / fl.ms > worst_x ? m / fl.ms : worst_x;
            len += snprintf(line + len, sizeof line - (size_t)len, "%s%.3f", i ? "," : "", m);
        }
        len += snprintf(line + len, sizeof line - (size_t)len, "],\"pairs\":[");
        for (int i = 0; i + 1 < nb; i++) {
            const struct bench_result *hi = &res[v * nb + ord[i]], *lo = &res[v * nb + ord[i + 1]];
            double ratio = bench_median(hi->ms, hi->n) / bench_median(lo->ms, lo->n);
            int wins = 0, nr = 0;
            double per[BENCH_MAX_REPEAT];
            for (int r = 0; r < hi->n && r < lo->n; r++, nr++) {
                wins += hi->ms[r] < lo->ms[r];
                per[r] = hi->ms[r] / lo->ms[r];
            }
            double paired = bench_median(per, nr);
            worst = paired > worst ? paired : worst;
            worst_med = ratio > worst_med ? ratio : worst_med;
            len += snprintf(line + len, sizeof line - (size_t)len,
                            "%s{\"larger\":%lld,\"smaller\":%lld,\"ratio\":%.4f,"
                            "\"paired_ratio\":%.4f,\"larger_faster_rounds\":%d}", i ? "," : "",
                            (long long)ba->budget[ord[i]], (long long)ba->budget[ord[i + 1]],
                            ratio, paired, wins);
        }
        snprintf(line + len, sizeof line - (size_t)len,
                 "],\"monotone_ratio\":%.4f,\"median_ratio\":%.4f,\"floor_ms\":%.6g,"
                 "\"max_x_floor\":%.3f}\n",
                 nb > 1 ? worst : 1.0, nb > 1 ? worst_med : 1.0, fl.ms, worst_x);
        fputs(line, stdout);
    }
    for (int b = 0; b < nb; b++)
        sl_engine_close(eng[b]);
    free(res);
    return rc;
}

int bench_sort(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c);
    int64_t n = (int64_t)1 << 24, key_bytes = 4, payloads = 1, repeat = 5, seed = 42;
    int desc = 0, pageable = 0, engine_time = 0;
    const char *resident = "host";
    struct budgets_args ba = {.nb = 0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help"))
            return usage();
        if (!strcmp(argv[i], "--resident") && i + 1 < argc) {
            resident = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--desc")) {
            desc = 1;
            continue;
        }
        if (!strcmp(argv[i], "--pageable")) {
            pageable = 1;
            continue;
        }
        if (!strcmp(argv[i], "--engine-time")) {
            engine_time = 1;
            continue;
        }
        if (!strcmp(argv[i], "--budgets") && i + 1 < argc) {
            if (parse_budgets(argv[++i], &ba))
                return 2;
            continue;
        }
        if (!strcmp(argv[i], "--then") && i + 1 < argc) {
            if (ba.n_then == MAX_THEN)
                return cli_fail("bench sort: at most %d --then", MAX_THEN), 2;
            const char *spec = argv[++i];
            if (strlen(spec) > MAX_SPEC || strpbrk(spec, "\"\\"))
                return cli_fail("bench sort: --then: at most %d characters, no '\"' or "
                                "'\\' (printed as the JSON lines' variant)", MAX_SPEC), 2;
            ba.then[ba.n_then++] = spec;
            continue;
        }
        const struct bench_count_opt counts[] = {{"--rows", &n}, {"--key-bytes", &key_bytes},
            {"--payloads", &payloads}, {"--repeat", &repeat}, {"--seed", &seed}};
        int r = bench_option(argc, argv, &i, counts, 5, &c, "sort");
        if (r != 0)
            return r;
    }
    if (n < 1 || (key_bytes != 4 && key_bytes != 8) || payloads < 0 || payloads > 8 ||
        repeat < 1 || repeat > BENCH_MAX_REPEAT)
        return cli_fail("bench sort: need --rows >= 1, --key-bytes 4 or 8, --payloads 0..8, "
                        "--repeat 1..%d", BENCH_MAX_REPEAT);
    if ((ba.nb || ba.n_then) && (strcmp(resident, "host") || c.placement != SL_PLACE_GPU ||
                                 !ba.nb || engine_time))
        return cli_fail("bench sort: --budgets (and --then) need --placement gpu, host input, "
                        "no --engine-time"), 2;
    sl_table_t *in = bench_keys_table(n, (int)key_bytes, (int)payloads, (uint64_t)seed);
    if (!in)
        return cli_fail("bench sort: out of memory for the input");
    uint64_t in_sum = bench_checksum_table(in);
    if (ba.nb) {
        struct sort_check chk = {n, in_sum, desc};
        sl_plan_t *plan = NULL;
        int src, s, rc = sl_plan_create(&plan);
        if (rc == SL_OK)
            rc = sl_plan_add_table(plan, in, &src);
        if (rc == SL_OK)
            rc = sl_plan_add(plan, "sort", &src, 1, desc ? "by=\"k DESC\"" : "by=k", &s);
        if (rc == SL_OK)
            rc = sl_plan_output(plan, s, "sorted");
        double bytes = (double)n * (double)key_bytes * (double)(payloads + 1);
        char extra[400];
        snprintf(extra, sizeof extra,
                 ",\"rows\":%" PRId64 ",\"key_bytes\":%" PRId64 ",\"payloads\":%" PRId64
                 ",\"resident\":\"host\",\"pinned\":%d", n, key_bytes, payloads, !pageable);
        if (rc == SL_OK)
            rc = sort_budgets(&c, &ba, in, pageable, plan, repeat, &chk, bytes, extra);
        else
            cli_fail("bench sort: %s", sl_plan_errmsg(plan));
        sl_plan_destroy(plan);
        sl_table_unref(in);
        return rc == SL_OK ? 0 : 1;
    }
    sl_engine_t *eng = cli_open_engine(&c);
    if (!eng) {
        sl_table_unref(in);
        return 1;
    }
    int on_device = !strcmp(resident, "device");
    if (on_device && bench_to_device(eng, &in, "sort") < 0) {
        sl_engine_close(eng);
        sl_table_unref(in);
        return 1;
    }
    /* Host-resident GPU runs: pinned input (pinning is not timed); the floor is the
     * link's (docs/BENCH_PROTOCOL.md). */
    int host_gpu = !on_device && c.placement == SL_PLACE_GPU;
    if (host_gpu && !pageable && sl_table_pin(in) < 0)
        fprintf(stderr, "bench sort: cannot pin the input (%s); it stays pageable\n",
                sl_last_errmsg());
    sl_plan_t *plan;
    int src, s, rc = sl_plan_create(&plan);
    if (rc == SL_OK)
        rc = sl_plan_add_table(plan, in, &src);
    if (rc == SL_OK)
        rc = sl_plan_add(plan, "sort", &src, 1, desc ? "by=\"k DESC\"" : "by=k", &s);
    if (rc == SL_OK)
        rc = on_device ? sl_plan_output_device(plan, s, "sorted")
                       : sl_plan_output(plan, s, "sorted");
    struct bench_result res;
    bench_result_init(&res, n);
    res.engine_time = engine_time;
    bench_device_name(eng, c.placement, res.device, sizeof res.device);
    struct sort_check chk = {n, in_sum, desc};
    if (rc == SL_OK)
        rc = bench_run_plan(eng, plan, "sorted", repeat, "sort", &res, check_sorted, &chk);
    if (rc == SL_OK) {
        int threads = sl_engine_num_threads(eng);
        double med = bench_median(res.ms, res.n);
        double bytes = (double)n * (double)key_bytes * (double)(payloads + 1);
        /* The floor for the residency: every row read once and written once; over the
         * link, up and then down (the first sorted row needs the last input row). */
        struct bench_floor fl;
        bench_floor_measure(eng, on_device ? BENCH_ON_GPU
                                 : host_gpu ? BENCH_LINK_SERIAL
                                            : BENCH_ON_CPU,
                            bytes, bytes, &fl);
        char extra[800];
        int len = snprintf(extra, sizeof extra,
                           ",\"rows\":%" PRId64 ",\"key_bytes\":%" PRId64 ",\"payloads\":%" PRId64
                           ",\"threads\":%d,\"data_gb_per_s\":%.3f,\"resident\":\"%s\"",
                           n, key_bytes, payloads, threads, bytes / (med * 1e6), resident);
        len += bench_floor_json(&fl, med, extra + len, sizeof extra - (size_t)len);
        if (host_gpu)
            snprintf(extra + len, sizeof extra - (size_t)len, ",\"pinned\":%d,\"gpu_mem\":%lld",
                     !pageable, (long long)c.gpu_mem);
        bench_print_run(eng, on_device || c.placement == SL_PLACE_GPU, "sort", &res, extra);
    }
    sl_plan_destroy(plan);
    sl_table_unref(in);
    sl_engine_close(eng);
    return rc == SL_OK ? 0 : 1;
}
