/* Plans over several devices (docs/MULTI_GPU.md): the join and sort operators of a plan
 * run with gpus = 1, 2, 4 and 8 logical devices of one GPU (split_gpu) against the same
 * plan on the CPU engine. Joins (inner, semi, anti, left; 8- and 4-byte keys; the hash
 * join and, with algo=sortmerge, the multi-device sort-merge join) on uniform keys, Zipf
 * 1.0 probe keys, duplicates on both sides, no matches and empty sides, as row
 * multisets; sorts (stable, so row for row) on the same key sets. With several devices
 * the profile must show the multi-device path (multi_device = N, gpu_algo 0 or 2) where
 * the shape allows it, and its reason where not (a DESC sort). `option_4dev` and
 * `budget_4dev` check the option multi_gpu and the fallback when the devices' budgets
 * cannot hold a spread. Case `small_2dev` keeps inputs small for compute-sanitizer.
 * Skipped without a GPU. Run one case: test_gpu_multi_plan <case>. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mgpu.h"
#include "common/mgpu_choice.h"
#include "gpu_int.h"
#include "join_test.h"
#include "multi_keys.h"

enum dist { UNIFORM, ZIPF, DUPS, NOMATCH, N_DIST };
static const char *const dist_name[] = {"uniform", "zipf1.0", "dups", "nomatch"};
static const char *const kinds[] = {"inner", "semi", "anti", "left"};

/* A table (k, p64, p32) of n rows in batches of 30,000: keys by `dist` over `range`
 * (ZIPF: Zipf ranks on the probe side, keys 0, 1, ... on the build side), moved past
 * the build keys on NOMATCH's probe side, negative ones mixed in so that signed order
 * matters. */
static sl_table_t *make(enum dist dist, int probe, int64_t n, int64_t range, int key64,
                        uint64_t seed)
{
    rng_state = seed;
    int64_t *keys = malloc((size_t)(n + 1) * sizeof *keys);
    assert_non_null(keys);
    if (dist == ZIPF && probe)
        zipf_keys(keys, n, range);
    for (int64_t i = 0; i < n; i++) {
        if (dist != ZIPF)
            keys[i] = (int64_t)(rnd() % (uint64_t)range) - range / 3;
        else if (!probe)
            keys[i] = i % range;
        keys[i] += dist == NOMATCH && probe ? 10 * range : 0;
    }
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    const char *names[3] = {"k", probe ? "lp" : "rp", probe ? "lq" : "rq"};
    enum sl_type ty[3] = {key64 ? SL_TYPE_INT64 : SL_TYPE_INT32, SL_TYPE_INT64, SL_TYPE_INT32};
    for (int64_t lo = 0; lo < n || lo == 0; lo += 30000) {
        int64_t m = n - lo < 30000 ? n - lo : 30000;
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, 3, names, ty, m));
        for (int64_t i = 0; i < m; i++) {
            if (key64)
                ((int64_t *)sl_batch_column_data(b, 0))[i] = keys[lo + i] * 1000003;
            else
                ((int32_t *)sl_batch_column_data(b, 0))[i] = (int32_t)keys[lo + i];
            ((int64_t *)sl_batch_column_data(b, 1))[i] = lo + i - 7;
            ((int32_t *)sl_batch_column_data(b, 2))[i] = (int32_t)(rnd() % 1000);
        }
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
        if (m == 0)
            break;
    }
    free(keys);
    return t;
}

/* n_dev logical devices (0: the CPU engine) with the option multi_gpu = mode (0 auto,
 * 1 off, 2 on) sharing gpu_mem bytes (0: the default budget). */
static sl_engine_t *engine_with(int n_dev, int mode, int64_t gpu_mem)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = 2;
    cfg.placement = n_dev ? SL_PLACE_GPU : SL_PLACE_CPU;
    cfg.n_gpus = n_dev;
    cfg.split_gpu = n_dev > 0;
    cfg.multi_gpu = mode;
    cfg.gpu_mem_limit = gpu_mem;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    return e;
}

/* multi_gpu=on: these inputs are below the 2^20 rows that auto asks for. */
static sl_engine_t *engine(int n_dev)
{
    return engine_with(n_dev, 2, 0);
}

/* The profile says the multi-device path ran on n devices (want_multi), or why not. */
static void check_profile(int n_dev, int want_multi, int why)
{
    char want[64];
    if (n_dev > 1 && want_multi)
        snprintf(want, sizeof want, "\"multi_device\":%d", n_dev);
    else if (n_dev > 1 && why > 0)
        snprintf(want, sizeof want, "\"multi_device_fallback\":%d", why);
    else
        return;
    if (!strstr(last_profile, want))
        printf("profile without %s: %s\n", want, last_profile);
    assert_non_null(strstr(last_profile, want));
}

static const char *const algos[] = {"auto", "sortmerge"};

static void join_algo_case(sl_engine_t *cpu, sl_engine_t *gpu, int n_dev, sl_table_t *l,
                           sl_table_t *r, const char *kind, const char *algo, const char *what,
                           int want_multi)
{
    char opts[128];
    snprintf(opts, sizeof opts, "on=k kind=%s algo=%s", kind, algo);
    struct fp want = run(cpu, l, r, opts, 0, NULL);
    int on_gpu = -1;
    struct fp got = run(gpu, l, r, opts, 0, &on_gpu);
    printf("join %-5s %-9s %-8s gpus=%d: cpu %lld rows, gpu %lld rows%s\n", kind, algo, what,
           n_dev, (long long)want.rows, (long long)got.rows,
           got.rows == want.rows && got.hash == want.hash ? "" : " MISMATCH");
    assert_int_equal(got.rows, want.rows);
    assert_true(got.hash == want.hash);
    check_profile(n_dev, want_multi && on_gpu, 0);
    if (n_dev > 1 && want_multi && on_gpu) /* the multi-device SMJ for algo=sortmerge */
        assert_non_null(strstr(last_profile, strcmp(algo, "sortmerge") ? "\"gpu_algo\":0"
                                                                        : "\"gpu_algo\":2"));
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    sl_engine_mem_stats(gpu, &ms);
    assert_int_equal(ms.gpu_in_use, 0); /* every device block went back to its pool */
}

static void join_case(sl_engine_t *cpu, sl_engine_t *gpu, int n_dev, sl_table_t *l,
                      sl_table_t *r, const char *kind, const char *what, int want_multi)
{
    for (int a = 0; a < 2; a++)
        join_algo_case(cpu, gpu, n_dev, l, r, kind, algos[a], what, want_multi);
}

/* Every kind on every key set with n_dev devices; rows of the probe (left) side. */
static void joins(int n_dev, int64_t rows, int key64)
{
    sl_engine_t *cpu = engine(0), *gpu = engine(n_dev);
    for (int dist = 0; dist < N_DIST; dist++) {
        int64_t range = dist == DUPS ? rows / 40 + 1 : rows / 2;
        sl_table_t *l = make(dist, 1, rows, range, key64, 11 + (uint64_t)dist);
        sl_table_t *r = make(dist, 0, rows / 4, range, key64, 99 + (uint64_t)dist);
        for (int k = 0; k < 4; k++)
            join_case(cpu, gpu, n_dev, l, r, kinds[k], dist_name[dist], 1);
        sl_table_unref(l);
        sl_table_unref(r);
    }
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

/* Empty sides: an empty right side sends anti and left joins to the CPU (join_cuda.c). */
static void empty_sides(int n_dev)
{
    sl_engine_t *cpu = engine(0), *gpu = engine(n_dev);
    sl_table_t *none = make(UNIFORM, 1, 0, 100, 1, 1), *some = make(UNIFORM, 0, 5000, 100, 1, 2);
    for (int k = 0; k < 4; k++) {
        join_case(cpu, gpu, n_dev, none, some, kinds[k], "empty-l", 1);
        join_case(cpu, gpu, n_dev, some, none, kinds[k], "empty-r", k < 2);
    }
    sl_table_unref(none);
    sl_table_unref(some);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

/* A table's rows in order, as one hash (exact order: sorts are stable). */
static uint64_t ordered_hash(sl_table_t *t, int64_t *rows)
{
    uint64_t h = 0;
    *rows = 0;
    for (int64_t bi = 0; bi < sl_table_num_batches(t); bi++) {
        sl_batch_t *b = sl_table_batch(t, bi);
        for (int64_t r = 0; r < sl_batch_num_rows(b); r++, ++*rows)
            for (int c = 0; c < sl_batch_num_columns(b); c++) {
                struct sl_column col;
                sl_batch_column(b, c, &col);
                uint64_t v = 0;
                memcpy(&v, (const char *)col.data + (col.offset + r) * sl_type_width(col.type),
                       sl_type_width(col.type));
                h = (h ^ v) * 0x100000001b3ull + (uint64_t)c;
            }
    }
    return h;
}

static uint64_t run_sort(sl_engine_t *e, sl_table_t *in, const char *opts, int64_t *rows)
{
    sl_plan_t *p;
    int ni, ns;
    SL_ASSERT_OK(sl_plan_create(&p));
    SL_ASSERT_OK(sl_plan_add_table(p, in, &ni));
    SL_ASSERT_OK(sl_plan_add(p, "sort", &ni, 1, opts, &ns));
    SL_ASSERT_OK(sl_plan_output(p, ns, "o"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    if (sl_query_run(q) != SL_OK)
        fail_msg("sort %s: query failed: %s", opts, sl_query_errmsg(q));
    snprintf(last_profile, sizeof last_profile, "%s", sl_query_profile_json(q));
    sl_table_t *out, *host;
    SL_ASSERT_OK(sl_query_result(q, "o", &out));
    SL_ASSERT_OK(sl_table_to_host(out, &host));
    uint64_t h = ordered_hash(host, rows);
    sl_table_unref(host);
    sl_table_unref(out);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return h;
}

static void sorts(int n_dev, int64_t rows, int n_dist)
{
    sl_engine_t *cpu = engine(0), *gpu = engine(n_dev);
    for (int dist = 0; dist < n_dist; dist++) {
        int64_t range = dist == DUPS ? rows / 40 + 1 : rows / 2;
        sl_table_t *t = make(dist, 1, rows, range, 1, 5 + (uint64_t)dist);
        /* ASC goes over the devices; DESC stays on one (SL__MG_KIND = 3) */
        for (int desc = 0; desc < 2; desc++) {
            const char *opts = desc ? "by=\"k DESC\"" : "by=k";
            int64_t nw, ng;
            uint64_t want = run_sort(cpu, t, opts, &nw), got = run_sort(gpu, t, opts, &ng);
            printf("sort %-10s %-8s gpus=%d: cpu %lld rows, gpu %lld rows%s\n", opts,
                   dist_name[dist], n_dev, (long long)nw, (long long)ng,
                   nw == ng && want == got ? "" : " MISMATCH");
            assert_int_equal(ng, nw);
            assert_true(got == want);
            check_profile(n_dev, !desc, 3);
        }
        sl_table_unref(t);
    }
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

/* Every join and sort case on n_dev devices. */
static void all_cases(int n_dev)
{
    joins(n_dev, 200000, 1);
    joins(n_dev, 100000, 0);
    empty_sides(n_dev);
    sorts(n_dev, 300000, N_DIST);
}

SL_TEST(plans_1dev)
{
    NEED_GPU();
    all_cases(1);
}

SL_TEST(plans_2dev)
{
    NEED_GPU();
    all_cases(2);
}

SL_TEST(plans_4dev)
{
    NEED_GPU();
    all_cases(4);
}

SL_TEST(plans_8dev)
{
    NEED_GPU();
    all_cases(8);
}

/* One join (hash, inner) and one sort on gpu, against the CPU; the profile must say
 * multi_device = n_dev (want_multi) or multi_device_fallback = why. */
static void join_and_sort(sl_engine_t *cpu, sl_engine_t *gpu, int n_dev, sl_table_t *l,
                          sl_table_t *r, int want_multi, int why)
{
    struct fp want = run(cpu, l, r, "on=k kind=inner", 0, NULL);
    struct fp got = run(gpu, l, r, "on=k kind=inner", 0, NULL);
    printf("join inner gpus=%d: cpu %lld rows, gpu %lld rows\n", n_dev, (long long)want.rows,
           (long long)got.rows);
    assert_int_equal(got.rows, want.rows);
    assert_true(got.hash == want.hash);
    check_profile(n_dev, want_multi, why);
    int64_t nw, ng;
    uint64_t sw = run_sort(cpu, l, "by=k", &nw), sg = run_sort(gpu, l, "by=k", &ng);
    assert_int_equal(ng, nw);
    assert_true(sg == sw);
    check_profile(n_dev, want_multi, why);
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    sl_engine_mem_stats(gpu, &ms);
    assert_int_equal(ms.gpu_in_use, 0);
}

/* The option multi_gpu: off keeps one device (multi_device_fallback 8), auto keeps
 * inputs under 2^20 rows on one (10), on spreads them. */
SL_TEST(option_4dev)
{
    NEED_GPU();
    sl_engine_t *cpu = engine(0);
    sl_table_t *l = make(UNIFORM, 1, 200000, 100000, 1, 31);
    sl_table_t *r = make(UNIFORM, 0, 50000, 100000, 1, 32);
    static const int why[3] = {10, 8, 0};
    for (int mode = 0; mode < 3; mode++) {
        sl_engine_t *gpu = engine_with(4, mode, 0);
        join_and_sort(cpu, gpu, 4, l, r, mode == 2, why[mode]);
        sl_engine_close(gpu);
    }
    sl_table_unref(l);
    sl_table_unref(r);
    sl_engine_close(cpu);
}

/* What explain says of the join (l, r) or, with r NULL, the sort of l on gpu (n_dev
 * devices): over want_dev devices (1: on one) for reason why, with the exchange's estimate
 * for their rows spread evenly; then the run's profile must say the same. */
static void check_explain(sl_engine_t *gpu, int n_dev, sl_table_t *l, sl_table_t *r,
                          int want_dev, int why)
{
    sl_plan_t *p;
    int in[2], node;
    SL_ASSERT_OK(sl_plan_create(&p));
    SL_ASSERT_OK(sl_plan_add_table(p, l, &in[0]));
    if (r)
        SL_ASSERT_OK(sl_plan_add_table(p, r, &in[1]));
    SL_ASSERT_OK(sl_plan_add(p, r ? "join" : "sort", in, r ? 2 : 1, r ? "on=k" : "by=k",
                             &node));
    SL_ASSERT_OK(sl_plan_output(p, node, "o"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(gpu, p, &q));
    const struct sl_explain *ex;
    SL_ASSERT_OK(sl_query_explain(q, &ex));
    int seen = 0;
    int64_t rows = sl_table_num_rows(l) + (r ? sl_table_num_rows(r) : 0);
    for (int i = 0; i < ex->n_pipelines; i++) {
        const struct sl_explain_pipeline *e = &ex->pipelines[i];
        if (e->multi_devices == 0)
            continue;
        printf("explain %s: %d of %d devices, why %d (%s), rows %lld, %lld B a link, "
               "%.4f ms\n", r ? "join" : "sort", e->multi_devices, n_dev, e->multi_why,
               e->multi_why_text, (long long)e->multi_rows, (long long)e->xchg_link_bytes,
               e->xchg_seconds * 1e3);
        seen++;
        assert_int_equal(e->multi_devices, want_dev);
        assert_int_equal(e->multi_why, why);
        assert_int_equal(e->multi_rows, rows);
        int k = want_dev;
        assert_int_equal(e->xchg_link_bytes, k > 1 ? rows / (k * k) * 16 : -1);
        assert_int_equal(e->xchg_device_bytes, k > 1 ? rows / (k * k) * 16 * (k - 1) : -1);
    }
    assert_int_equal(seen, r ? 2 : 1); /* the pipelines into the join or sort */
    const char *json = sl_query_explain_json(q);
    assert_non_null(strstr(json, "\"multi_device\":{\"devices\":"));
    if (sl_query_run(q) != SL_OK)
        fail_msg("explain case: query failed: %s", sl_query_errmsg(q));
    snprintf(last_profile, sizeof last_profile, "%s", sl_query_profile_json(q));
    check_profile(n_dev, 0, why);
    if (want_dev > 1) {
        char want[32];
        snprintf(want, sizeof want, "\"multi_device\":%d", want_dev);
        assert_non_null(strstr(last_profile, want));
    }
    sl_query_destroy(q);
    sl_plan_destroy(p);
}

/* explain knows the option multi_gpu, the 2^20-row rule and the budgets, and says what
 * the run then does: auto keeps these inputs on one device, off too, on spreads them. */
SL_TEST(explain_4dev)
{
    NEED_GPU();
    sl_table_t *l = make(UNIFORM, 1, 200000, 100000, 1, 51);
    sl_table_t *r = make(UNIFORM, 0, 50000, 100000, 1, 52);
    static const int why[3] = {10, 8, 0}, devs[3] = {1, 1, 4};
    for (int mode = 0; mode < 3; mode++) {
        sl_engine_t *gpu = engine_with(4, mode, 0);
        check_explain(gpu, 4, l, r, devs[mode], why[mode]);
        check_explain(gpu, 4, l, NULL, devs[mode], why[mode]);
        sl_engine_close(gpu);
    }
    sl_table_unref(l);
    sl_table_unref(r);
}

/* A sort that keeps a DICT column (which the multi-device sort does not carry) stays on
 * one device, and explain says so before the run: one device, reason 4 (a column the
 * spread cannot carry), as the run's profile then says; the result is the CPU's, row for
 * row. multi_gpu=on, 4 devices; 4 batches of (k int64, d DICT) sharing one dictionary. */
SL_TEST(dict_sort_4dev)
{
    NEED_GPU();
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    const char *names[2] = {"k", "d"};
    enum sl_type ty[2] = {SL_TYPE_INT64, SL_TYPE_DICT};
    static const char chars[] = "redgreenblue";
    static const int32_t offs[4] = {0, 3, 8, 12};
    sl_batch_t *first = NULL;
    rng_state = 77;
    for (int bi = 0; bi < 4; bi++) {
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, 2, names, ty, 30000));
        int64_t *k = sl_batch_column_data(b, 0);
        int32_t *c = sl_batch_column_data(b, 1);
        for (int64_t i = 0; i < 30000; i++) {
            k[i] = (int64_t)(rnd() % 5000) - 2000;
            c[i] = (int32_t)(rnd() % 3);
        }
        if (first)
            SL_ASSERT_OK(sl_batch_share_dictionary(b, 1, first, 1));
        else
            SL_ASSERT_OK(sl_batch_column_set_dictionary(b, 1, 3, offs, chars));
        SL_ASSERT_OK(sl_table_append(t, b));
        if (!first)
            first = b;
        else
            sl_batch_unref(b);
    }
    sl_engine_t *cpu = engine(0), *gpu = engine(4);
    check_explain(gpu, 4, t, NULL, 1, SL__MG_COLUMNS);
    int64_t nw, ng;
    uint64_t want = run_sort(cpu, t, "by=k", &nw), got = run_sort(gpu, t, "by=k", &ng);
    printf("sort by=k keeping a DICT column, gpus=4: cpu %lld rows, gpu %lld rows%s\n",
           (long long)nw, (long long)ng, nw == ng && want == got ? "" : " MISMATCH");
    assert_int_equal(ng, nw);
    assert_true(got == want);
    check_profile(4, 0, SL__MG_COLUMNS);
    sl_batch_unref(first);
    sl_table_unref(t);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

/* Fills device d's budget but for 64 MiB (as another query's memory would), less than a
 * share needs (64 MiB and more); *p and *bytes to free it with. */
static void fill_device(struct sl__mdev *m, int d, void **p, int64_t *bytes)
{
    int64_t in_use, peak, limit;
    sl__gpu_mem(m->gpu[d], &in_use, &peak, &limit);
    *bytes = limit - in_use - ((int64_t)64 << 20);
    SL_ASSERT_OK(sl__mdev_use(m, d));
    SL_ASSERT_OK(sl__mdev_alloc(m, d, *bytes, p));
    SL_ASSERT_OK(sl__mdev_sync(m, d));
}

/* Devices whose budgets cannot hold their share: with the inputs resident on device 0
 * (where the join and sort then run) and device 3's budget full, the join and the sort
 * spread over the other 3 (multi_device 3 next to multi_device_fallback 9); with devices
 * 1, 2 and 3 full, they stay on device 0 (multi_device_fallback 9). Results as the
 * CPU's either way. */
SL_TEST(budget_4dev)
{
    NEED_GPU();
    sl_engine_t *cpu = engine(0), *gpu = engine(4);
    sl_table_t *l = make(UNIFORM, 1, 200000, 100000, 1, 41);
    sl_table_t *r = make(UNIFORM, 0, 50000, 100000, 1, 42), *dl, *dr;
    SL_ASSERT_OK(sl_table_to_device(gpu, l, 0, &dl));
    SL_ASSERT_OK(sl_table_to_device(gpu, r, 0, &dr));
    struct sl__mdev m;
    SL_ASSERT_OK(sl__mdev_open(gpu, &m));
    void *p[4] = {0};
    int64_t bytes[4] = {0};
    struct fp want = run(cpu, l, r, "on=k kind=inner", 0, NULL);
    int64_t nw;
    uint64_t sw = run_sort(cpu, l, "by=k", &nw);
    for (int full = 1; full <= 3; full += 2) { /* devices 3, then 1 to 3 */
        for (int d = 4 - full; d < 4; d++)
            if (!p[d])
                fill_device(&m, d, &p[d], &bytes[d]);
        struct fp got = run(gpu, dl, dr, "on=k kind=inner", 0, NULL);
        printf("join with %d device(s) full: cpu %lld rows, gpu %lld rows\n", full,
               (long long)want.rows, (long long)got.rows);
        assert_int_equal(got.rows, want.rows);
        assert_true(got.hash == want.hash);
        check_profile(4, 0, 9);
        if (full == 1)
            assert_non_null(strstr(last_profile, "\"multi_device\":3"));
        int64_t ng;
        uint64_t sg = run_sort(gpu, dl, "by=k", &ng);
        assert_int_equal(ng, nw);
        assert_true(sg == sw);
        check_profile(4, 0, 9);
        if (full == 1)
            assert_non_null(strstr(last_profile, "\"multi_device\":3"));
        /* explain sees the full budgets too */
        check_explain(gpu, 4, dl, dr, full == 1 ? 3 : 1, 9);
        check_explain(gpu, 4, dl, NULL, full == 1 ? 3 : 1, 9);
    }
    for (int d = 0; d < 4; d++) {
        sl__mdev_use(&m, d);
        sl__mdev_free(&m, d, p[d], bytes[d]);
    }
    sl__mdev_close(&m);
    sl_table_unref(dl);
    sl_table_unref(dr);
    sl_table_unref(l);
    sl_table_unref(r);
    sl_engine_close(gpu);
    sl_engine_close(cpu);
}

/* Small inputs on 2 devices, for compute-sanitizer memcheck: duplicates on both sides
 * through every kind and algorithm, an empty build side, and a sort. */
SL_TEST(small_2dev)
{
    NEED_GPU();
    sl_engine_t *cpu = engine(0), *gpu = engine(2);
    sl_table_t *l = make(DUPS, 1, 3000, 80, 1, 21), *r = make(DUPS, 0, 750, 80, 1, 22);
    sl_table_t *none = make(UNIFORM, 0, 0, 100, 1, 23);
    for (int k = 0; k < 4; k++)
        join_case(cpu, gpu, 2, l, r, kinds[k], "dups", 1);
    join_case(cpu, gpu, 2, l, none, "inner", "empty-r", 1);
    sl_table_unref(l);
    sl_table_unref(r);
    sl_table_unref(none);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
    sorts(2, 5000, 1);
}
