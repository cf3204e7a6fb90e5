/* sluice bench aggregate: hash group-by of N rows on G distinct random 32-bit keys
 * (uniform, or Zipf with --zipf), int64 value column, count(*) and sum(v) per group
 * (docs/BENCH_PROTOCOL.md, "Aggregate"). --key-type utf8 or dict makes each key a 16-byte
 * string (the hex digits of two mixes of the group: utf8 values, or codes into one
 * dictionary of the G strings); --value-type decimal makes v a decimal(15,2) of the
 * same digits (cents), summed exactly into a decimal(38,2). The input table is generated outside the timed
 * span; each repeat times one query (create, run, result) of table -> aggregate -> output.
 * The result is checked once: the counts add up to N and the sums to the sum of v.
 * The floor (bench_floor.c) is that of the residency: the key and value columns read
 * once and the result written, in host memory (CPU runs), device memory (--resident
 * device) or over the link (host-resident input on the GPU); "x_floor" = median / floor.
 * GPU runs report the operator's phases (CUDA events, from the query profile).
 * --resident device copies the input to GPU 0 before timing and leaves the result there
 * (the check reads it back after the timed span); GPU runs add peak_device_bytes. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int usage(void)
{
    printf("usage: sluice bench aggregate [--rows N] [--groups G] [--zipf Z] [--repeat R]\n"
           "                              [--seed S] [--threads N] [--placement cpu|gpu|auto|coprocess]\n"
           "                              [--resident host|pinned|device] [--json]\n"
           "                              [--key-type int32|utf8|dict] [--value-type int64|decimal]\n"
           "                              [--engine-time]\n"
           "Groups N rows (default 2^24) by G distinct random 32-bit keys (default 1000),\n"
           "uniform or Zipf(Z), computing count(*) and sum(v) of an int64 column; 5 repeats\n"
           "after one warm-up; prints the protocol's JSON line. --resident pinned pins the\n"
           "host input (sl_table_pin) before timing; co-processed runs report the morsels\n"
           "each device ran (cpu_morsels, gpu_morsels). --key-type utf8|dict: 16-byte\n"
           "string keys (plain, or codes into one dictionary); --value-type decimal: v is a\n"
           "decimal(15,2), its sum exact. --engine-time adds the host's time in query\n"
           "creation, run and result to the phases (host_create, host_run, host_result)\n"
           "and prints the last query's profile to stderr.\n");
    return 0;
}

/* A bijection of 32-bit values: G distinct keys from 0..G-1. */
static uint32_t key_of(uint32_t i)
{
    i ^= i >> 16;
    i *= 0x7feb352dU;
    i ^= i >> 15;
    i *= 0x846ca68bU;
    i ^= i >> 16;
    return i;
}

static uint64_t next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

enum key_type { KEY_INT32, KEY_UTF8, KEY_DICT };
#define KEY_CHARS 16

/* Group g's 16-byte string key: hex digits of two bijective mixes, distinct for each g. */
static void key_text(uint32_t g, char out[KEY_CHARS + 1])
{
    snprintf(out, KEY_CHARS + 1, "%08x%08x", key_of(g), key_of(g ^ 0x5bd1e995U));
}

/* Turns the group numbers in k[] into the key column of `kt` (utf8: each row's string;
 * dict: the codes stay, the dictionary holds every group's string). */
static int string_keys(sl_batch_t *b, enum key_type kt, const int32_t *grp, int64_t n,
                       int64_t groups)
{
    char text[KEY_CHARS + 1];
    if (kt == KEY_DICT) {
        int32_t *codes = sl_batch_column_data(b, 0);
        memcpy(codes, grp, (size_t)n * sizeof *codes);
        int32_t *off = malloc((size_t)(groups + 1) * sizeof *off);
        char *chars = malloc((size_t)groups * KEY_CHARS + 1);
        int rc = off && chars ? SL_OK : SL_ENOMEM;
        for (int64_t g = 0; rc == SL_OK && g < groups; g++) {
            key_text((uint32_t)g, text);
            memcpy(chars + g * KEY_CHARS, text, KEY_CHARS);
            off[g] = (int32_t)(g * KEY_CHARS);
        }
        if (rc == SL_OK) {
            off[groups] = (int32_t)(groups * KEY_CHARS);
            rc = sl_batch_column_set_dictionary(b, 0, groups, off, chars);
        }
        free(off);
        free(chars);
        return rc;
    }
    int64_t *off = sl_batch_column_data(b, 0); /* large_utf8: 2^24 x 16 bytes pass 2^31 */
    char *chars = sl_batch_column_chars(b, 0, n * KEY_CHARS);
    if (!off || !chars)
        return SL_ENOMEM;
    for (int64_t i = 0; i < n; i++) {
        key_text((uint32_t)grp[i], text);
        memcpy(chars + i * KEY_CHARS, text, KEY_CHARS);
        off[i + 1] = (i + 1) * KEY_CHARS;
    }
    return SL_OK;
}

static sl_table_t *make_input(int64_t n, int64_t groups, double zipf, uint64_t seed,
                              enum key_type kt, bool dec, int64_t *vsum)
{
    const char *names[2] = {"k", "v"};
    enum sl_type types[2] = {kt == KEY_UTF8   ? SL_TYPE_LARGE_UTF8
                             : kt == KEY_DICT ? SL_TYPE_DICT
                                              : SL_TYPE_INT32,
                             dec ? sl_type_decimal(15, 2) : SL_TYPE_INT64};
    sl_batch_t *b;
    int32_t *grp = kt != KEY_INT32 ? malloc((size_t)n * sizeof *grp) : NULL;
    if ((kt != KEY_INT32 && !grp) || sl_batch_create(&b, 2, names, types, n) != SL_OK) {
        free(grp);
        return NULL;
    }
    double *cdf = NULL;
    if (zipf > 0) {
        cdf = malloc((size_t)groups * sizeof *cdf);
        if (!cdf) {
            sl_batch_unref(b);
            free(grp);
            return NULL;
        }
        double s = 0;
        for (int64_t g = 0; g < groups; g++)
            cdf[g] = (s += pow((double)(g + 1), -zipf));
        for (int64_t g = 0; g < groups; g++)
            cdf[g] /= s;
    }
    int32_t *k = sl_batch_column_data(b, 0);
    int64_t *v = sl_batch_column_data(b, 1);
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    *vsum = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = next(&x);
        int64_t g;
        if (cdf) {
            double u = (double)(r >> 11) * 0x1.0p-53;
            int64_t lo = 0, hi = groups - 1;
            while (lo < hi) {
                int64_t mid = (lo + hi) / 2;
                if (cdf[mid] < u)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            g = lo;
        } else {
            g = (int64_t)(r % (uint64_t)groups);
        }
        if (grp)
            grp[i] = (int32_t)g;
        else
            k[i] = (int32_t)key_of((uint32_t)g);
        v[i] = (int64_t)(next(&x) % 1000);
        *vsum += v[i];
    }
    free(cdf);
    if (grp) {
        int rc = string_keys(b, kt, grp, n, groups);
        free(grp);
        if (rc != SL_OK) {
            sl_batch_unref(b);
            return NULL;
        }
    }
    return bench_table_of(b);
}

/* Sums the count and sum columns of the result. */
static void result_sums(sl_table_t *t, int64_t *cnt, int64_t *sum)
{
    *cnt = *sum = 0;
    for (int64_t b = 0; b < sl_table_num_batches(t); b++) {
        sl_batch_t *bt = sl_table_batch(t, b);
        struct sl_column c, s;
        sl_batch_column(bt, 1, &c);
        sl_batch_column(bt, 2, &s);
        bool wide = sl_type_width(s.type) == 16; /* a decimal(38, 2) sum */
        for (int64_t i = 0; i < c.length; i++) {
            *cnt += ((const int64_t *)c.data)[c.offset + i];
            if (wide) {
                __int128 w;
                memcpy(&w, (const char *)s.data + (s.offset + i) * 16, 16);
                *sum += (int64_t)w;
            } else {
                *sum += ((const int64_t *)s.data)[s.offset + i];
            }
        }
    }
}

struct agg_check {
    int64_t n, groups, vsum;
};

/* Every row is counted once, the values sum up, and there are no more groups than keys. */
static int check_groups(void *user, sl_table_t *out, struct bench_result *res)
{
    const struct agg_check *c = user;
    int64_t cnt, sum;
    sl_table_t *host;
    if (sl_table_to_host(out, &host) != SL_OK) /* a device result (--resident device) */
        return cli_fail("bench aggregate: %s", sl_last_errmsg()), SL_EINTERNAL;
    out = host;
    result_sums(out, &cnt, &sum);
    res->output_rows = sl_table_num_rows(out);
    res->checksum = bench_checksum_table(out);
    sl_table_unref(host);
    if (cnt != c->n || sum != c->vsum || res->output_rows > c->groups)
        return cli_fail("bench aggregate: wrong result (%" PRId64 " rows, count %" PRId64
                        ", sum %" PRId64 ")", res->output_rows, cnt, sum),
               SL_EINTERNAL;
    return SL_OK;
}

int bench_aggregate(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c);
    int64_t n = (int64_t)1 << 24, groups = 1000, repeat = 5, seed = 42;
    double zipf = 0;
    const char *resident = "host", *key_name = "int32", *value_name = "int64";
    int engine_time = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help"))
            return usage();
        if (!strcmp(argv[i], "--key-type") && i + 1 < argc) {
            key_name = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--value-type") && i + 1 < argc) {
            value_name = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--resident") && i + 1 < argc) {
            resident = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--engine-time")) {
            engine_time = 1;
            continue;
        }
        if (!strcmp(argv[i], "--zipf") && i + 1 < argc) {
            zipf = atof(argv[++i]);
            continue;
        }
        const struct bench_count_opt counts[] = {{"--rows", &n}, {"--groups", &groups},
                                                 {"--repeat", &repeat}, {"--seed", &seed}};
        int r = bench_option(argc, argv, &i, counts, 4, &c, "aggregate");
        if (r != 0)
            return r;
    }
    if (n < 1 || groups < 1 || groups > ((int64_t)1 << 32) || zipf < 0 || repeat < 1 ||
        repeat > BENCH_MAX_REPEAT)
        return cli_fail("bench aggregate: need --rows >= 1, --groups 1..2^32, --zipf >= 0, "
                        "--repeat 1..%d", BENCH_MAX_REPEAT);
    enum key_type kt = !strcmp(key_name, "utf8") ? KEY_UTF8
                       : !strcmp(key_name, "dict") ? KEY_DICT
                                                   : KEY_INT32;
    bool dec = !strcmp(value_name, "decimal");
    if ((kt == KEY_INT32 && strcmp(key_name, "int32")) || (!dec && strcmp(value_name, "int64")))
        return cli_usage_fail("bench aggregate: --key-type is int32, utf8 or dict and "
                              "--value-type int64 or decimal");
    if (kt == KEY_DICT && groups > ((int64_t)1 << 26))
        return cli_usage_fail("bench aggregate: --key-type dict takes at most 2^26 groups "
                              "(the dictionary's int32 offsets)");
    int64_t vsum;
    sl_table_t *in = make_input(n, groups, zipf, (uint64_t)seed, kt, dec, &vsum);
    if (!in)
        return cli_fail("bench aggregate: out of memory for the input");
    sl_engine_t *eng = cli_open_engine(&c);
    if (!eng) {
        sl_table_unref(in);
        return 1;
    }
    int on_device = !strcmp(resident, "device");
    if (!strcmp(resident, "pinned") && sl_table_pin(in) < 0) {
        cli_fail("bench aggregate: --resident pinned: %s", sl_last_errmsg());
        sl_engine_close(eng);
        sl_table_unref(in);
        return 1;
    }
    if (on_device && bench_to_device(eng, &in, "aggregate") < 0) {
        sl_engine_close(eng);
        sl_table_unref(in);
        return 1;
    }
    sl_plan_t *plan;
    int src, a, rc = sl_plan_create(&plan);
    if (rc == SL_OK)
        rc = sl_plan_add_table(plan, in, &src);
    if (rc == SL_OK)
        rc = sl_plan_add(plan, "aggregate", &src, 1, "keys=k aggs=\"count(*), sum(v)\"", &a);
    if (rc == SL_OK)
        rc = on_device ? sl_plan_output_device(plan, a, "groups")
                       : sl_plan_output(plan, a, "groups");
    if (rc != SL_OK)
        cli_fail("bench aggregate: %s", sl_plan_errmsg(plan));
    struct bench_result res;
    bench_result_init(&res, n);
    res.engine_time = engine_time;
    bench_device_name(eng, c.placement, res.device, sizeof res.device);
    struct agg_check chk = {n, groups, vsum};
    if (rc == SL_OK)
        rc = bench_run_plan(eng, plan, "groups", repeat, "aggregate", &res, check_groups, &chk);
    if (rc == SL_OK) {
        int threads = sl_engine_num_threads(eng);
        /* The floor of the residency (bench_floor.c): host-resident input read from
         * host memory on the CPU or sent over the link to a GPU; GPU-resident input
         * read once from device memory. */
        struct bench_floor fl;
        double key_bytes = kt == KEY_UTF8 ? KEY_CHARS + 8 : 4; /* bytes + large offset */
        bench_floor_measure(eng, on_device ? BENCH_ON_GPU
                                 : c.placement == SL_PLACE_GPU ? BENCH_LINK : BENCH_ON_CPU,
                            (double)n * (key_bytes + 8), (double)res.output_rows * 20, &fl);
        double med = bench_median(res.ms, res.n);
        char extra[600];
        int len = snprintf(extra, sizeof extra,
                 ",\"rows\":%" PRId64 ",\"groups\":%" PRId64 ",\"zipf\":%g,\"threads\":%d"
                 ",\"resident\":\"%s\",\"key_type\":\"%s\",\"value_type\":\"%s\"", n, groups,
                 zipf, threads, resident, key_name, value_name);
        len += bench_floor_json(&fl, med, extra + len, sizeof extra - (size_t)len);
        if (res.split && len > 0 && (size_t)len < sizeof extra)
            snprintf(extra + len, sizeof extra - (size_t)len,
                     ",\"cpu_morsels\":%" PRId64 ",\"gpu_morsels\":%" PRId64,
                     res.split_cpu_tasks, res.split_gpu_tasks);
        bench_print_run(eng, on_device || c.placement == SL_PLACE_GPU, "aggregate", &res, extra);
    }
    sl_plan_destroy(plan);
    sl_table_unref(in);
    sl_engine_close(eng);
    return rc == SL_OK ? 0 : 1;
}
