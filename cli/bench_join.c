/* sluice bench join: the equi-join of docs/BENCH_PROTOCOL.md ("Join"). Build keys are unique
 * (shuffled primary keys), probe keys are foreign keys drawn uniformly from them (Zipf
 * with --zipf), a fraction --match-ratio of them with a partner; payloads are derived
 * from the row position. Inputs are generated before timing into tables; the timed span
 * is one query: two table scans -> join -> its output. Public API only. Inputs are
 * generated on all cores (2^28-row sides in seconds). With --resident device each
 * table is one batch (one device buffer per column, as an embedder's GPU columns are),
 * and the GPU join's phase times come from the query profile (debug_join_phase_times). */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

struct join_args {
    int64_t build_rows, probe_rows, payloads, key_bytes, repeat, seed;
    double match_ratio, zipf;
    const char *algo, *output, *kind, *resident;
    const char *key_type;               /* int (--key-bytes), utf8 or dict: 16-byte strings */
    int pageable;                       /* host-resident GPU inputs left pageable */
    int payload_only;                   /* the output: payload columns, not the key */
    int64_t sequence, dim_rows;         /* --sequence N (bench_joinseq.c) */
    const char *then[4];                /* --then "ALGO [OPTION=VALUE ...]": more runs */
    int n_then;
};

static uint64_t xs(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

struct par {
    void (*fn)(void *, int64_t, int64_t);
    void *arg;
    int64_t lo, hi;
};

static void *par_run(void *p)
{
    struct par *x = p;
    x->fn(x->arg, x->lo, x->hi);
    return NULL;
}

void bench_par_for(int64_t n, void (*fn)(void *, int64_t, int64_t), void *arg)
{
    enum { T = 16 };
    pthread_t th[T];
    struct par ps[T];
    int nt = n < ((int64_t)1 << 16) ? 1 : T, started[T] = {0};
    for (int i = 0; i < nt; i++) {
        ps[i] = (struct par){fn, arg, n * i / nt, n * (i + 1) / nt};
        started[i] = i > 0 && pthread_create(&th[i], NULL, par_run, &ps[i]) == 0;
        if (i > 0 && !started[i])
            par_run(&ps[i]);
    }
    par_run(&ps[0]);
    for (int i = 1; i < nt; i++)
        if (started[i])
            pthread_join(th[i], NULL);
}

struct fill {
    void *d;
    const int64_t *keys;
    int64_t base;
    int c, k8;
};

static void fill_range(void *p, int64_t lo, int64_t hi)
{
    const struct fill *f = p;
    for (int64_t i = lo; i < hi; i++) {
        int64_t v = f->c == 0 ? f->keys[f->base + i] : (f->base + i) * f->c + 1; /* position */
        if (f->k8)
            ((int64_t *)f->d)[i] = v;
        else
            ((int32_t *)f->d)[i] = (int32_t)v;
    }
}

/* String keys (--key-type utf8|dict): key value v as 16 bytes, "k" and 15 hex digits. */
#define KEY_STR_BYTES 16

static void key_str(int64_t v, char *out)
{
    char buf[24];
    snprintf(buf, sizeof buf, "k%015llx", (unsigned long long)v);
    memcpy(out, buf, KEY_STR_BYTES);
}

struct fill_str {
    char *chars;
    int32_t *off;
    const int64_t *keys;
    int64_t base;
};

static void fill_str_range(void *p, int64_t lo, int64_t hi)
{
    const struct fill_str *f = p;
    for (int64_t i = lo; i < hi; i++) {
        key_str(f->keys[f->base + i], f->chars + i * KEY_STR_BYTES);
        f->off[i + 1] = (int32_t)((i + 1) * KEY_STR_BYTES);
    }
}

/* The one dictionary of --key-type dict: the strings of key values 0..n-1 (build keys
 * and, past nb, the probe keys without a partner), code = key value. */
static sl_batch_t *make_dict_holder(int64_t n)
{
    const char *name = "k";
    enum sl_type t = SL_TYPE_DICT;
    sl_batch_t *b;
    int32_t *off = malloc((size_t)(n + 1) * sizeof *off);
    char *chars = malloc((size_t)n * KEY_STR_BYTES + 1);
    int64_t *vals = malloc((size_t)n * sizeof *vals);
    int rc = off && chars && vals ? sl_batch_create(&b, 1, &name, &t, 1) : SL_ENOMEM;
    if (rc == SL_OK) {
        *(int32_t *)sl_batch_column_data(b, 0) = 0; /* one row: a batch of none has no buffer */
        for (int64_t i = 0; i < n; i++)
            vals[i] = i;
        off[0] = 0;
        struct fill_str f = {chars, off, vals, 0};
        bench_par_for(n, fill_str_range, &f);
        rc = sl_batch_column_set_dictionary(b, 0, n, off, chars);
        if (rc < 0)
            sl_batch_unref(b);
    }
    free(off);
    free(chars);
    free(vals);
    return rc == SL_OK ? b : NULL;
}

/* Key column 0 of batch b (m rows from keys + lo) as --key-type says. */
static int fill_key(const struct join_args *a, sl_batch_t *b, const int64_t *keys, int64_t lo,
                    int64_t m, sl_batch_t *dict)
{
    if (!strcmp(a->key_type, "dict")) {
        struct fill f = {sl_batch_column_data(b, 0), keys, lo, 0, 0};
        bench_par_for(m, fill_range, &f);
        return sl_batch_share_dictionary(b, 0, dict, 0);
    }
    char *chars = sl_batch_column_chars(b, 0, m * KEY_STR_BYTES);
    if (!chars)
        return SL_ENOMEM;
    struct fill_str f = {chars, sl_batch_column_data(b, 0), keys, lo};
    bench_par_for(m, fill_str_range, &f);
    return SL_OK;
}

/* A table of n rows in batches of `chunk` rows: key column "k" and payload columns
 * p<i>_<side>. */
static sl_table_t *make_table(const struct join_args *a, int64_t n, const int64_t *keys,
                              const char *side, int64_t chunk, sl_batch_t *dict)
{
    sl_table_t *t;
    if (sl_table_create(&t) < 0)
        return NULL;
    int nc = 1 + (int)a->payloads;
    char names[17][16];
    const char *np[17];
    enum sl_type ty[17];
    enum sl_type kt = a->key_bytes == 8 ? SL_TYPE_INT64 : SL_TYPE_INT32;
    for (int c = 0; c < nc; c++) {
        snprintf(names[c], sizeof names[c], c ? "%s%d" : "k", side, c);
        np[c] = names[c];
        ty[c] = kt;
    }
    int str = strcmp(a->key_type, "int") != 0;
    if (str)
        ty[0] = !strcmp(a->key_type, "dict") ? SL_TYPE_DICT : SL_TYPE_UTF8;
    for (int64_t lo = 0; lo < n; lo += chunk) {
        int64_t m = n - lo < chunk ? n - lo : chunk;
        sl_batch_t *b;
        if (sl_batch_create(&b, nc, np, ty, m) < 0)
            return NULL;
        if (str && fill_key(a, b, keys, lo, m, dict) < 0) {
            sl_batch_unref(b);
            sl_table_unref(t);
            return NULL;
        }
        for (int c = str; c < nc; c++) {
            struct fill f = {sl_batch_column_data(b, c), keys, lo, c, kt == SL_TYPE_INT64};
            bench_par_for(m, fill_range, &f);
        }
        sl_table_append(t, b);
        sl_batch_unref(b);
    }
    return t;
}

static int parse_args(int argc, char **argv, struct join_args *a, struct cli_common *c)
{
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "--help")) {
            printf("usage: sluice bench join [--build-rows N] [--probe-rows N] [--payloads P]\n"
                   "  [--key-bytes 4|8] [--key-type int|utf8|dict] [--match-ratio F] [--zipf Z] [--algo auto|radix|nopart|"
                   "sortmerge]\n  [--output materialize|aggregate] [--kind inner|left|semi|anti]"
                   " [--repeat R]\n  [--placement cpu|gpu|auto] [--resident host|device]"
                   " [--threads N] [--json]\n  [--pageable] [--payload-only] [--gpu-mem BYTES]"
                   " [--trace FILE]\n  [--then \"ALGO [OPTION=VALUE ...]\"]...\n"
                   "  --then: the same inputs first with that algorithm and engine options"
                   " (A/B runs: a result\n  line each; the main run's line, the last, gives"
                   " their medians as then_ms)\n"
                   "  --resident device: inputs copied to GPU 0 before timing, the output left"
                   " in GPU memory\n  (the timed span ends when it is complete there;"
                   " the checksum is read afterwards)\n"
                   "  --resident host with --placement gpu: inputs pinned before timing unless"
                   " --pageable;\n  the transfer floors of docs/BENCH_PROTOCOL.md are measured"
                   " in the same run (JSON:\n  floor_ms, ooc_floor_ms with --gpu-mem below the"
                   " input)\n");
            return 1;
        }
        if (!strcmp(o, "--pageable")) {
            a->pageable = 1;
            continue;
        }
        if (!strcmp(o, "--payload-only")) {
            a->payload_only = 1;
            continue;
        }
        if (i + 1 < argc) {
            const char *v = argv[i + 1];
            int64_t *cnt = !strcmp(o, "--build-rows")  ? &a->build_rows
                           : !strcmp(o, "--probe-rows") ? &a->probe_rows
                           : !strcmp(o, "--payloads")   ? &a->payloads
                           : !strcmp(o, "--key-bytes")  ? &a->key_bytes
                           : !strcmp(o, "--repeat")     ? &a->repeat
                           : !strcmp(o, "--seed")       ? &a->seed
                           : !strcmp(o, "--sequence")   ? &a->sequence
                           : !strcmp(o, "--dim-rows")   ? &a->dim_rows
                                                        : NULL;
            if (cnt) {
                if (cli_parse_count(v, cnt) < 0)
                    return -cli_fail("%s: '%s' is not a count", o, v);
                i++;
                continue;
            }
            if (!strcmp(o, "--match-ratio") || !strcmp(o, "--zipf")) {
                *(!strcmp(o, "--zipf") ? &a->zipf : &a->match_ratio) = atof(v);
                i++;
                continue;
            }
            if (!strcmp(o, "--then")) {
                if (a->n_then == 4)
                    return -cli_fail("bench join: at most 4 --then");
                a->then[a->n_then++] = v;
                i++;
                continue;
            }
            const char **s = !strcmp(o, "--algo")       ? &a->algo
                             : !strcmp(o, "--output")   ? &a->output
                             : !strcmp(o, "--kind")     ? &a->kind
                             : !strcmp(o, "--resident") ? &a->resident
                             : !strcmp(o, "--key-type") ? &a->key_type
                                                        : NULL;
            if (s) {
                *s = v;
                i++;
                continue;
            }
        }
        int r = cli_common_option(c, argc, argv, &i);
        if (r < 0)
            return -1;
        if (r == 0)
            return -cli_fail("bench join: unknown option '%s'", o);
    }
    if (strcmp(a->resident, "host") && strcmp(a->resident, "device"))
        return -cli_fail("bench join: --resident must be host or device");
    if (strcmp(a->key_type, "int") && strcmp(a->key_type, "utf8") && strcmp(a->key_type, "dict"))
        return -cli_fail("bench join: --key-type must be int, utf8 or dict");
    if (a->key_bytes != 4 && a->key_bytes != 8)
        return -cli_fail("bench join: --key-bytes must be 4 or 8");
    if (a->payloads < 0 || a->payloads > 16 || a->repeat < 1 || a->build_rows < 1)
        return -cli_fail("bench join: bad --payloads, --repeat or --build-rows");
    return 0;
}

struct probe_gen {
    const struct join_args *a;
    const int64_t *bk;
    int64_t *pk;
    const double *cdf;
    uint64_t seed;
};

/* Probe keys [lo, hi): their own random stream per range (seeded by its start). */
static void probe_range(void *p, int64_t lo, int64_t hi)
{
    const struct probe_gen *g = p;
    const struct join_args *a = g->a;
    int64_t nb = a->build_rows;
    uint64_t s = (g->seed ^ ((uint64_t)lo * 0xD1B54A32D192ED03ull)) | 1;
    for (int64_t i = lo; i < hi; i++) {
        double u = (xs(&s) >> 11) * (1.0 / 9007199254740992.0);
        if (u >= a->match_ratio) {
            g->pk[i] = nb + (int64_t)(xs(&s) % (uint64_t)nb);
            continue;
        }
        int64_t r;
        if (g->cdf) {
            double z = (xs(&s) >> 11) * (1.0 / 9007199254740992.0);
            int64_t l = 0, h = nb - 1;
            while (l < h) {
                int64_t mid = (l + h) / 2;
                if (g->cdf[mid] < z)
                    l = mid + 1;
                else
                    h = mid;
            }
            r = l;
        } else {
            r = (int64_t)(xs(&s) % (uint64_t)nb);
        }
        g->pk[i] = g->bk[r];
    }
}

/* Build keys 0..n-1 shuffled; probe keys: uniform (or Zipf) picks among them, and
 * keys >= n (no partner) for a fraction 1 - match_ratio. */
static void gen_keys(const struct join_args *a, int64_t *bk, int64_t *pk)
{
    uint64_t s = (uint64_t)a->seed * 0x9E3779B97F4A7C15ull + 7;
    int64_t nb = a->build_rows;
    for (int64_t i = 0; i < nb; i++)
        bk[i] = i;
    for (int64_t i = nb - 1; i > 0; i--) {
        int64_t j = (int64_t)(xs(&s) % (uint64_t)(i + 1));
        int64_t x = bk[i];
        bk[i] = bk[j];
        bk[j] = x;
    }
    double *cdf = NULL;
    if (a->zipf > 0) {
        cdf = malloc((size_t)nb * sizeof *cdf);
        double tot = 0;
        for (int64_t i = 0; i < nb; i++)
            cdf[i] = tot += 1 / pow((double)(i + 1), a->zipf);
        for (int64_t i = 0; i < nb; i++)
            cdf[i] /= tot;
    }
    struct probe_gen g = {a, bk, pk, cdf, s};
    bench_par_for(a->probe_rows, probe_range, &g);
    free(cdf);
}

/* The GPU join's phases of a query, from the "phases" of its join operators in the
 * profile (summed: one join per join of a sequence), and the rest of the query's time as
 * "engine_other" (scans, graph, scheduling). */
void bench_join_phases(struct bench_result *r, const char *profile, double total_ms)
{
    /* "finalize" last (engine_other is the rest); the out-of-core sort-merge join's phases
     * (operators/join/join_smj_ooc.c) before it */
    static const char *const names[] = {"prepare", "partition", "join", "materialize",
                                        "ooc_gpu_runs", "ooc_gpu_merge", "ooc_gpu_merge_join",
                                        "ooc_cpu_merge_join", "prepare_keys", "prepare_sample",
                                        "prepare_range", "prepare_probe_mask", "prepare_probe",
                                        "prepare_build_mask", "prepare_build", "prepare_rows",
                                        "ooc_pass1", "ooc_pass2",
                                        "npj_range", "npj_table", "npj_probe",
                                        "smj_splitters", "ooc_presplit", "ooc_runs_up",
                                        "ooc_runs_down", "smj_pass2_up", "smj_pass2_down",
                                        "smj_p2_up_busy", "smj_p2_up_gap", "smj_p2_sort",
                                        "smj_p2_write", "smj_p2_down_busy", "smj_p2_wait",
                                        "smj_p2_host_up", "smj_p2_host_end", "smj_side0_cuts",
                                        "finalize"};
    enum { NP = sizeof names / sizeof names[0] };
    double v[NP] = {0};
    int seen[NP] = {0};
    for (const char *p = profile; p && (p = strstr(p, "\"op\":\"join\"")) != NULL; p++) {
        const char *ph = strstr(p, "\"phases\":{"), *end = ph ? strchr(ph, '}') : NULL;
        for (int i = 0; end && i < NP; i++) {
            char key[32];
            snprintf(key, sizeof key, "\"%s\":", names[i]);
            const char *at = strstr(ph, key);
            if (at && at < end) {
                v[i] += atof(at + strlen(key));
                seen[i] = 1;
            }
        }
    }
    for (int i = 0; i < NP; i++)
        if (seen[i])
            bench_add_phase(r, names[i], v[i]);
    const char *at = profile ? strstr(profile, "\"gpu_algo\":") : NULL;
    r->join_algo = at ? atoi(at + strlen("\"gpu_algo\":")) : -1;
    at = profile ? strstr(profile, "\"npj_kind\":") : NULL;
    r->join_table = at ? atoi(at + strlen("\"npj_kind\":")) : -1;
    if (seen[NP - 1])
        bench_add_phase(r, "engine_other", total_ms - v[NP - 1]);
}

void bench_join_phases_ask(struct cli_common *c)
{
    if (c->placement != SL_PLACE_CPU)
        cli_common_set(c, "debug_join_phase_times=on");
}

/* One query of a join benchmark (docs/BENCH_PROTOCOL.md): timed from its creation to its
 * output complete (in GPU memory when on_device); rep < 0 is the warm-up (not recorded);
 * the output's rows and checksum are read after the span. */
int bench_join_query(const struct bench_join_query *j, struct bench_result *r)
{
    sl_query_t *q = NULL;
    int64_t t0 = cli_now_ns();
    int rc = sl_query_create(j->eng, j->plan, &q);
    if (rc == SL_OK)
        rc = cli_query_run(q);
    double ms = (cli_now_ns() - t0) / 1e6;
    if (rc != SL_OK) {
        cli_fail("%s: %s", j->what, q ? sl_query_errmsg(q) : sl_engine_errmsg(j->eng));
    } else {
        sl_table_t *out, *host = NULL;
        sl_query_result(q, "out", &out);
        if (j->phases && j->rep >= 0) /* the warm-up's are dropped */
            bench_join_phases(r, sl_query_profile_json(q), ms);
        if (j->rep >= 0)
            bench_add(r, ms);
        int check = j->check_every || j->rep < 0;
        if (check && j->on_device && sl_table_to_host(out, &host) == SL_OK) {
            sl_table_unref(out);
            out = host;
        }
        if (check) {
            r->output_rows = j->aggregate ? 1 : sl_table_num_rows(out);
            r->checksum = bench_checksum_table(out);
        }
        sl_table_unref(out);
    }
    sl_query_destroy(q);
    return rc;
}

/* --then "ALGO [OPTION=VALUE ...]": the algorithm into algo, the options set on eng
 * (restore: set back to the values they had). */
static int then_options(sl_engine_t *eng, const char *spec, char *algo, size_t cap, int restore)
{
    static char old[8][128];
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL, *tok = strtok_r(buf, " ", &save);
    if (!tok) {
        cli_fail("bench join: --then '%s': no algorithm", spec);
        return SL_EINVAL;
    }
    snprintf(algo, cap, "%s", tok);
    for (int n = 0; (tok = strtok_r(NULL, " ", &save)) != NULL; n++) {
        char *eq = strchr(tok, '=');
        if (eq)
            *eq = 0;
        if (!eq || n == 8 ||
            (!restore && sl_engine_option_get(eng, tok, old[n], sizeof old[n]) < 0) ||
            sl_engine_option_set(eng, tok, restore ? old[n] : eq + 1) < 0) {
            cli_fail("bench join: --then '%s': cannot set '%s' (%s)", spec, tok, sl_last_errmsg());
            return SL_EINVAL;
        }
    }
    return SL_OK;
}

int bench_join(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c);
    c.placement = SL_PLACE_CPU;
    struct join_args a = {.build_rows = 1 << 24, .probe_rows = 1 << 24, .payloads = 1,
                          .key_bytes = 4, .repeat = 5, .seed = 42, .match_ratio = 1,
                          .zipf = 0, .algo = "auto", .output = "materialize", .kind = "inner",
                          .resident = "host", .key_type = "int", .sequence = -1};
    int pr = parse_args(argc, argv, &a, &c);
    if (pr != 0)
        return pr > 0 ? 0 : 1;
    if (a.sequence >= 0) {
        int given = 0;
        for (int i = 1; i < argc; i++)
            given |= !strcmp(argv[i], "--probe-rows");
        struct joinseq_args sa = {a.sequence, given ? a.probe_rows : (int64_t)1 << 27,
                                  a.dim_rows ? a.dim_rows : (int64_t)1 << 25, a.repeat, a.seed,
                                  a.algo, a.output, a.resident};
        return bench_join_sequence(&sa, &c);
    }
    int64_t *bk = malloc((size_t)a.build_rows * sizeof *bk);
    int64_t *pk = malloc((size_t)(a.probe_rows + 1) * sizeof *pk);
    if (!bk || !pk)
        return cli_fail("out of memory");
    gen_keys(&a, bk, pk);
    int on_device = !strcmp(a.resident, "device");
    int64_t chunk = on_device ? INT64_MAX / 2 : (int64_t)1 << 20;
    /* dict: one dictionary for both sides (probe keys without a partner are < 2 nb) */
    sl_batch_t *dict = strcmp(a.key_type, "dict") ? NULL : make_dict_holder(2 * a.build_rows);
    sl_table_t *bt = make_table(&a, a.build_rows, bk, "r", chunk, dict);
    sl_table_t *pt = make_table(&a, a.probe_rows, pk, "s", chunk, dict);
    sl_batch_unref(dict);
    free(bk);
    free(pk);
    if (!bt || !pt)
        return cli_fail("out of memory generating the inputs");
    bench_join_phases_ask(&c);
    sl_engine_t *eng = cli_open_engine(&c);
    if (!eng)
        return 1;
    if (on_device &&
        (bench_to_device(eng, &bt, "join") < 0 || bench_to_device(eng, &pt, "join") < 0)) {
        sl_engine_close(eng);
        sl_table_unref(bt);
        sl_table_unref(pt);
        return 1;
    }
    /* Host-resident GPU runs: pinned inputs (pinning is not timed) and the link's
     * bandwidths for the floors, measured now (docs/BENCH_PROTOCOL.md). */
    int host_gpu = !on_device && c.placement == SL_PLACE_GPU;
    struct sl_device_info di = SL_DEVICE_INFO_INIT;
    if (host_gpu) {
        if (!a.pageable && (sl_table_pin(bt) < 0 || sl_table_pin(pt) < 0))
            fprintf(stderr, "bench join: cannot pin the inputs (%s); they stay pageable\n",
                    sl_last_errmsg());
        if (sl_engine_measure_links(eng) == SL_OK && sl_engine_device_count(eng) > 1)
            sl_engine_device_info(eng, 1, &di);
    }
    int rc = SL_OK;
    char then_algo[64], then_ms[512] = "";
    const char *main_algo = a.algo;
    /* the --then runs first, each with its options set and then restored; the main run
     * last, its line (the last: what bench/run.py reads) with their medians */
    for (int v = a.n_then ? 1 : 0, left = a.n_then + 1; left > 0 && rc == SL_OK;
         left--, v = v == a.n_then ? 0 : v + 1) {
        if (v > 0 && (rc = then_options(eng, a.then[v - 1], then_algo, sizeof then_algo, 0)) < 0)
            break;
        a.algo = v > 0 ? then_algo : main_algo;
        char opts[512];
        int at_o = snprintf(opts, sizeof opts, "on=k kind=%s algo=%s output=%s", a.kind, a.algo,
                            a.output);
        for (int s = 0; a.payload_only && s < 2 && a.payloads > 0; s++) { /* s<i> and r<i> */
            at_o += snprintf(opts + at_o, sizeof opts - (size_t)at_o, " %s_columns=",
                             s ? "right" : "left");
            for (int64_t i = 1; i <= a.payloads; i++)
                at_o += snprintf(opts + at_o, sizeof opts - (size_t)at_o, "%s%s%lld", i > 1 ? "," : "",
                                 s ? "r" : "s", (long long)i);
        }
        struct bench_result r;
        bench_result_init(&r, a.build_rows + a.probe_rows);
        bench_device_name(eng, c.placement, r.device, sizeof r.device);
        for (int64_t rep = -1; rep < a.repeat && rc == SL_OK; rep++) {
            sl_plan_t *p;
            int nb, np, nj;
            sl_plan_create(&p);
            /* Probe (fact) side left, build (dimension) side right, as in SQL's s JOIN r. */
            if ((rc = sl_plan_add_table(p, pt, &np)) < 0 || (rc = sl_plan_add_table(p, bt, &nb)) < 0 ||
                (rc = sl_plan_add(p, "join", (int[]){np, nb}, 2, opts, &nj)) < 0 ||
                (rc = on_device ? sl_plan_output_device(p, nj, "out") : sl_plan_output(p, nj, "out")) < 0) {
                cli_fail("bench join: %s", sl_plan_errmsg(p));
                sl_plan_destroy(p);
                break;
            }
            struct bench_join_query jq = {eng, p, rep, on_device, c.placement != SL_PLACE_CPU, 1,
                                          !strcmp(a.output, "aggregate"), "bench join"};
            rc = bench_join_query(&jq, &r);
            sl_plan_destroy(p);
        }
        if (rc == SL_OK) {
            char extra[1024];
            int at = snprintf(extra, sizeof extra,
                     ",\"build_rows\":%" PRId64 ",\"probe_rows\":%" PRId64 ",\"payloads\":%" PRId64
                     ",\"key_bytes\":%" PRId64 ",\"key_type\":\"%s\",\"match_ratio\":%g,\"zipf\":%g,\"algo\":\"%s\","
                     "\"output\":\"%s\",\"kind\":\"%s\",\"resident\":\"%s\",\"payload_only\":%d,"
                     "\"threads\":%d",
                     a.build_rows, a.probe_rows, a.payloads, a.key_bytes, a.key_type, a.match_ratio, a.zipf,
                     a.algo, a.output, a.kind, a.resident, a.payload_only, sl_engine_num_threads(eng));
            if (on_device || c.placement != SL_PLACE_GPU) {
                /* GPU-resident or CPU run: inputs read once, output written once, in the
                 * memory they live in (bench_floor.c). */
                double w = (double)a.key_bytes;
                double in = (double)(a.build_rows + a.probe_rows) * w * (double)(1 + a.payloads);
                double out = strcmp(a.output, "aggregate")
                                 ? (double)r.output_rows * w * (double)(1 + 2 * a.payloads) : 0;
                struct bench_floor fl;
                bench_floor_measure(eng, on_device ? BENCH_ON_GPU : BENCH_ON_CPU, in, out, &fl);
                at += bench_floor_json(&fl, bench_median(r.ms, r.n), extra + at,
                                       sizeof extra - (size_t)at);
            }
            if (host_gpu && di.h2d_gbps > 0 && di.d2h_gbps > 0) {
                /* Floors: bytes over the link at the measured pinned bandwidths (one direction
                 * each; copies both ways at once are not measured here). Out of core: the
                 * state past the GPU budget crosses twice more (out and back in). */
                double w = (double)a.key_bytes, in = (double)(a.build_rows + a.probe_rows) *
                                                        w * (double)(1 + a.payloads);
                double out = strcmp(a.output, "aggregate") ? (double)r.output_rows * w *
                                                                 (double)(1 + 2 * a.payloads)
                                                           : 0;
                double spill = c.gpu_mem > 0 && in > (double)c.gpu_mem ? in - (double)c.gpu_mem : 0;
                double f_in = in / (di.h2d_gbps * 1e6), f_out = out / (di.d2h_gbps * 1e6);
                double o_in = (in + spill) / (di.h2d_gbps * 1e6);
                double o_out = (spill + out) / (di.d2h_gbps * 1e6);
                /* no row comes out before the whole build side is in */
                double f_build = (double)a.build_rows * w * (double)(1 + a.payloads) /
                                 (di.h2d_gbps * 1e6);
                f_out += f_build;
                o_out += f_build;
                double floor = f_in > f_out ? f_in : f_out, ooc = o_in > o_out ? o_in : o_out;
                double med = bench_median(r.ms, r.n);
                at += snprintf(extra + at, sizeof extra - (size_t)at,
                               ",\"pinned\":%d,\"h2d_gbps\":%.2f,\"d2h_gbps\":%.2f,\"floor\":\"link\""
                               ",\"floor_ms\":%.3f"
                               ",\"vs_floor\":%.3f,\"gpu_mem\":%lld,\"spill_bytes\":%.0f",
                               !a.pageable, di.h2d_gbps, di.d2h_gbps, floor, med / floor,
                               (long long)c.gpu_mem, spill);
                if (spill > 0)
                    snprintf(extra + at, sizeof extra - (size_t)at,
                             ",\"ooc_floor_ms\":%.3f,\"vs_ooc_floor\":%.3f", ooc, med / ooc);
            }
            if (r.join_algo >= 0)
                snprintf(extra + strlen(extra), sizeof extra - strlen(extra),
                         ",\"gpu_algo\":%d,\"npj_kind\":%d", r.join_algo, r.join_table);
            if (v > 0)
                snprintf(extra + strlen(extra), sizeof extra - strlen(extra), ",\"then\":\"%s\"",
                         a.then[v - 1]);
            if (v > 0)
                snprintf(then_ms + strlen(then_ms), sizeof then_ms - strlen(then_ms),
                         "%s\"%s\":%.3f", then_ms[0] ? "," : "", a.then[v - 1],
                         bench_median(r.ms, r.n));
            else if (then_ms[0])
                snprintf(extra + strlen(extra), sizeof extra - strlen(extra),
                         ",\"then_ms\":{%s}", then_ms);
            bench_print_run(eng, on_device || c.placement == SL_PLACE_GPU, "join", &r, extra);
            if (v > 0 &&
                (rc = then_options(eng, a.then[v - 1], then_algo, sizeof then_algo, 1)) < 0)
                break;
        }
    }
    sl_engine_close(eng);
    sl_table_unref(bt);
    sl_table_unref(pt);
    return rc == SL_OK ? 0 : 1;
}
