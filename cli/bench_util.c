/* Repeats, medians, checksums and the JSON line of the benchmarks. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

void bench_result_init(struct bench_result *r, int64_t input_rows)
{
    memset(r, 0, sizeof *r);
    r->input_rows = input_rows;
    r->peak_device_bytes = -1;
    r->join_algo = r->join_table = -1;
}

static int phase_index(struct bench_result *r, const char *name)
{
    for (int i = 0; i < r->n_phases; i++) {
        if (!strcmp(r->phase_names[i], name))
            return i;
    }
    if (r->n_phases == BENCH_MAX_PHASES)
        return -1;
    r->phase_names[r->n_phases] = name;
    return r->n_phases++;
}

void bench_add_phase(struct bench_result *r, const char *name, double ms)
{
    int i = phase_index(r, name);
    if (i >= 0 && r->n < BENCH_MAX_REPEAT)
        r->phase_ms[i][r->n] = ms;
}

void bench_add(struct bench_result *r, double ms)
{
    if (r->n < BENCH_MAX_REPEAT)
        r->ms[r->n++] = ms;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_median(const double *v, int n)
{
    if (n <= 0)
        return 0;
    double tmp[BENCH_MAX_REPEAT];
    memcpy(tmp, v, (size_t)n * sizeof *v);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
    return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

void bench_print_json(const char *bench, const struct bench_result *r, const char *extra)
{
    double med = bench_median(r->ms, r->n), lo = r->n ? r->ms[0] : 0, hi = lo;
    for (int i = 0; i < r->n; i++) {
        lo = r->ms[i] < lo ? r->ms[i] : lo;
        hi = r->ms[i] > hi ? r->ms[i] : hi;
    }
    printf("{\"bench\":\"%s\",\"time_ms\":%.3f,\"min_ms\":%.3f,\"max_ms\":%.3f,"
           "\"gtuples_per_s\":%.4f,\"output_rows\":%" PRId64 ",\"checksum\":%" PRIu64
           ",\"device\":\"%s\",\"repeat\":%d",
           bench, med, lo, hi, med > 0 ? r->input_rows / (med * 1e6) : 0.0, r->output_rows,
           r->checksum, r->device, r->n);
    if (r->peak_device_bytes >= 0)
        printf(",\"peak_device_bytes\":%" PRId64, r->peak_device_bytes);
    printf(",\"phases\":{");
    for (int i = 0; i < r->n_phases; i++)
        printf("%s\"%s\":%.3f", i ? "," : "", r->phase_names[i],
               bench_median(r->phase_ms[i], r->n));
    printf("}%s}\n", extra ? extra : "");
}

void bench_print_run(sl_engine_t *eng, bool gpu, const char *bench, struct bench_result *r,
                     const char *extra)
{
    if (gpu) {
        struct sl_mem_stats ms = SL_MEM_STATS_INIT;
        sl_engine_mem_stats(eng, &ms);
        r->peak_device_bytes = ms.gpu_peak;
    }
    bench_print_json(bench, r, extra);
}

/* FNV-1a of value i of column c as sl_batch_value_format prints it, and its length. */
static uint64_t text_hash(sl_batch_t *b, int c, int64_t i)
{
    char buf[256];
    int64_t n = sl_batch_value_format(b, c, i, buf, sizeof buf, NULL);
    uint64_t h = 1469598103934665603ull ^ (uint64_t)n;
    for (const char *p = buf; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return h;
}

sl_table_t *bench_table_of(sl_batch_t *b)
{
    sl_table_t *t = NULL;
    if (sl_table_create(&t) != SL_OK || sl_table_append(t, b) != SL_OK) {
        sl_table_unref(t);
        t = NULL;
    }
    sl_batch_unref(b);
    return t;
}

sl_table_t *bench_keys_table(int64_t n, int key_bytes, int payloads, uint64_t seed)
{
    const char *names[9] = {"k", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8"};
    enum sl_type types[9] = {SL_TYPE_INVALID};
    for (int c = 0; c <= payloads; c++)
        types[c] = key_bytes == 4 ? SL_TYPE_INT32 : SL_TYPE_INT64;
    sl_batch_t *b;
    if (sl_batch_create(&b, payloads + 1, names, types, n) != SL_OK)
        return NULL;
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int c = 0; c <= payloads; c++) {
        void *d = sl_batch_column_data(b, c);
        for (int64_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint64_t v = c == 0 ? x : (uint64_t)i * (uint64_t)(c + 1);
            if (key_bytes == 4)
                ((uint32_t *)d)[i] = (uint32_t)v;
            else
                ((uint64_t *)d)[i] = v;
        }
    }
    return bench_table_of(b);
}

int bench_to_device(sl_engine_t *eng, sl_table_t **t, const char *bench)
{
    sl_table_t *dev = NULL;
    int rc = sl_table_to_device(eng, *t, 0, &dev);
    if (rc < 0)
        return cli_fail("bench %s: --resident device: %s", bench, sl_last_errmsg()), rc;
    sl_table_unref(*t);
    *t = dev;
    return SL_OK;
}

uint64_t bench_checksum_table(sl_table_t *t)
{
    uint64_t sum = 0;
    for (int64_t b = 0; b < sl_table_num_batches(t); b++) {
        sl_batch_t *bt = sl_table_batch(t, b);
        for (int c = 0; c < sl_batch_num_columns(bt); c++) {
            struct sl_column col;
            sl_batch_column(bt, c, &col);
            for (int64_t i = 0; i < col.length; i++) {
                int64_t k = col.offset + i;
                if (col.validity && !((col.validity[k >> 3] >> (k & 7)) & 1))
                    continue;
                switch (col.type) {
                case SL_TYPE_INT32:
                    sum += (uint64_t)(int64_t)((const int32_t *)col.data)[k];
                    break;
                case SL_TYPE_INT64:
                    sum += (uint64_t)((const int64_t *)col.data)[k];
                    break;
                case SL_TYPE_FLOAT32: {
                    uint32_t u;
                    memcpy(&u, (const float *)col.data + k, 4);
                    sum += u;
                    break;
                }
                case SL_TYPE_FLOAT64: {
                    uint64_t u;
                    memcpy(&u, (const double *)col.data + k, 8);
                    sum += u;
                    break;
                }
                default: /* decimals, dates, strings...: a hash of the printed value */
                    sum += text_hash(bt, c, i);
                    break;
                }
            }
        }
    }
    return sum;
}

void bench_device_name(sl_engine_t *eng, enum sl_placement p, char *out, int len)
{
    struct sl_device_info d = SL_DEVICE_INFO_INIT;
    if (p != SL_PLACE_CPU) {
        for (int i = 1; i < sl_engine_device_count(eng); i++) {
            sl_engine_device_info(eng, i, &d);
            if (d.usable) {
                snprintf(out, (size_t)len, "%s", d.name);
                return;
            }
        }
    }
    sl_engine_device_info(eng, 0, &d);
    snprintf(out, (size_t)len, "%s (%d threads)", d.name, sl_engine_num_threads(eng));
}

int bench_count_option(int argc, char **argv, int *i, const struct bench_count_opt *opts,
                       int n_opts)
{
    for (int k = 0; k < n_opts; k++) {
        if (strcmp(argv[*i], opts[k].name) != 0 || *i + 1 >= argc)
            continue;
        if (cli_parse_count(argv[*i + 1], opts[k].value) < 0) {
            cli_fail("%s: '%s' is not a count", argv[*i], argv[*i + 1]);
            return -1;
        }
        (*i)++;
        return 1;
    }
    return 0;
}

int bench_option(int argc, char **argv, int *i, const struct bench_count_opt *counts,
                 int n_counts, struct cli_common *c, const char *bench)
{
    int r = bench_count_option(argc, argv, i, counts, n_counts);
    if (r == 0)
        r = cli_common_option(c, argc, argv, i);
    if (r < 0)
        return 2;
    return r == 0 ? cli_fail("bench %s: unknown option '%s'", bench, argv[*i]) : 0;
}

/* The "phases":{...} of the first operator named r->phase_op in a query profile, as
 * phases of the current repeat (the runtime's JSON: names without escapes). */
static void phases_from_profile(struct bench_result *r, const char *prof)
{
    char key[80];
    snprintf(key, sizeof key, "\"op\":\"%s\"", r->phase_op);
    const char *s = strstr(prof, key);
    const char *end = s ? strchr(s, '}') : NULL; /* end of the entry before "phases" */
    s = s ? strstr(s, "\"phases\":{") : NULL;
    if (!s || !end || s > end)
        return;
    s += strlen("\"phases\":{");
    while (*s == '"') {
        const char *q = strchr(s + 1, '"');
        if (!q || q[1] != ':')
            return;
        char name[48];
        snprintf(name, sizeof name, "%.*s", (int)(q - s - 1), s + 1);
        char *after;
        double ms = strtod(q + 2, &after);
        int i = 0;
        while (i < r->n_phases && strcmp(r->phase_names[i], name))
            i++;
        if (i == r->n_phases && i < BENCH_MAX_PHASES) /* phase_index keeps the pointer */
            snprintf(r->phase_store[i], sizeof r->phase_store[i], "%s", name);
        if (i < BENCH_MAX_PHASES)
            bench_add_phase(r, i < r->n_phases ? r->phase_names[i] : r->phase_store[i], ms);
        s = after + (*after == ',');
    }
}

/* The first co-processed pipeline of a profile: how many morsels each device ran. */
static void split_from_profile(struct bench_result *r, const char *profile)
{
    const char *p = profile ? strstr(profile, "\"split\":true,\"cpu_tasks\":") : NULL;
    r->split = p != NULL;
    if (p && sscanf(p, "\"split\":true,\"cpu_tasks\":%" SCNd64 ",\"gpu_tasks\":%" SCNd64,
                    &r->split_cpu_tasks, &r->split_gpu_tasks) != 2)
        r->split = 0;
}

int bench_run_plan(sl_engine_t *eng, sl_plan_t *plan, const char *output, int64_t repeat,
                   const char *bench, struct bench_result *res, bench_check_fn check, void *user)
{
    return bench_run_plan_from(eng, plan, output, -1, repeat, bench, res, check, user);
}

int bench_run_plan_from(sl_engine_t *eng, sl_plan_t *plan, const char *output, int64_t from,
                        int64_t repeat, const char *bench, struct bench_result *res,
                        bench_check_fn check, void *user)
{
    int rc = SL_OK;
    for (int64_t r = from; r < repeat && rc == SL_OK; r++) { /* r = -1: warm-up */
        sl_query_t *q = NULL;
        sl_table_t *out = NULL;
        int64_t t0 = cli_now_ns(), c0 = cli_cpu_ns();
        rc = sl_query_create(eng, plan, &q);
        int64_t t1 = cli_now_ns();
        if (rc == SL_OK)
            rc = cli_query_run(q);
        int64_t t2 = cli_now_ns();
        if (rc == SL_OK)
            rc = sl_query_result(q, output, &out);
        int64_t t3 = cli_now_ns(), c3 = cli_cpu_ns();
        double ms = (t3 - t0) / 1e6;
        if (rc != SL_OK)
            cli_fail("bench %s: %s", bench, q ? sl_query_errmsg(q) : sl_plan_errmsg(plan));
        else if (r == -1) /* checked once, outside the timed runs */
            rc = check(user, out, res);
        else {
            const char *prof = sl_query_profile_json(q);
            if (res->phase_op)
                phases_from_profile(res, prof);
            else
                bench_profile_phases(res, prof);
            split_from_profile(res, prof);
            /* the query's: first */
            res->bytes_h2d = (int64_t)bench_profile_value(prof, "bytes_h2d");
            if (res->engine_time) {
                bench_add_phase(res, "host_create", (t1 - t0) / 1e6);
                bench_add_phase(res, "host_run", (t2 - t1) / 1e6);
                bench_add_phase(res, "host_result", (t3 - t2) / 1e6);
                if (r == repeat - 1)
                    fprintf(stderr, "%s\n", prof);
            }
            if (res->n < BENCH_MAX_REPEAT)
                res->cpu_ms[res->n] = (c3 - c0) / 1e6;
            bench_add(res, ms);
        }
        sl_table_unref(out);
        sl_query_destroy(q);
    }
    return rc;
}

double bench_profile_value(const char *profile, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "\"%s\":", name);
    const char *p = profile ? strstr(profile, key) : NULL;
    return p ? strtod(p + strlen(key), NULL) : 0;
}

/* Phase names live as long as the process: the few distinct ones are kept here. */
static const char *phase_name_keep(const char *p, size_t n)
{
    static char names[BENCH_MAX_PHASES][32];
    static int n_names;
    for (int i = 0; i < n_names; i++)
        if (strlen(names[i]) == n && !strncmp(names[i], p, n))
            return names[i];
    if (n_names == BENCH_MAX_PHASES || n >= sizeof names[0])
        return NULL;
    memcpy(names[n_names], p, n);
    names[n_names][n] = 0;
    return names[n_names++];
}

void bench_profile_phases(struct bench_result *r, const char *profile)
{
    const char *p = profile;
    while (p && (p = strstr(p, "\"phases\":{")) != NULL) {
        p += 10;
        while (*p == '"') {
            const char *e = strchr(p + 1, '"');
            if (!e || e[1] != ':')
                return;
            const char *name = phase_name_keep(p + 1, (size_t)(e - p - 1));
            char *end;
            double ms = strtod(e + 2, &end);
            if (name)
                bench_add_phase(r, name, ms);
            p = *end == ',' ? end + 1 : end;
        }
    }
}
