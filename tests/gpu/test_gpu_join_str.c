/* Tests strings on the GPU (issue 17): utf8 and large_utf8 columns uploaded and
 * downloaded (nulls, slices whose offsets do not start at 0, empty strings), and joins on
 * string keys compared with the CPU engine as row multisets: keys of 0..64 bytes with
 * empty strings and non-ASCII UTF-8, duplicates on both sides, no matches, composite keys
 * of a string and an int32, string payloads, every kind the GPU join runs (inner, left,
 * semi, anti, output=aggregate) and algorithm, inputs on the host and GPU-resident; DICT
 * keys whose dictionaries differ (remapped, then hashed); many distinct keys; and a weak
 * 8-bit hash (debug_join_weak_hash) whose collisions must be caught. Null keys stay on
 * the CPU. Cases skip without a GPU. */
#include <stdlib.h>
#include <string.h>

#include "join_test.h"

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

/* The string of key value v: 0..64 bytes (v % 65), starting with v's digits and padded
 * with ASCII and two-byte UTF-8 letters; v % 65 == 0 is the empty string. Different
 * values give different strings except where the length cuts the digits: those short
 * keys are shared by many values on purpose (duplicates; 1/65 of the rows are the empty
 * string). With `distinct` the digits are never cut, so every value has its own string. */
static int key_string(int64_t v, int distinct, char *out)
{
    int len = (int)(v % 65), n = snprintf(out, 80, "%lld", (long long)v);
    if (distinct && len < n)
        len = n;
    static const char pad[] = "x\xc3\xa9y\xe2\x82\xac"; /* x é y € */
    for (int i = 0; n < len; i++)
        out[n++] = pad[i % 7];
    return len; /* may cut a UTF-8 letter: bytes are compared, not validated, here */
}

struct str_spec {
    int64_t rows, key_range, key_offset;
    int large;                          /* keys as large_utf8 */
    int nulls;                          /* every 10th key null */
    int dict;                           /* keys as DICT: 1 ascending, 2 reversed dictionary */
    int distinct;                       /* one string per key value (key_string) */
    uint64_t seed;
};

/* Columns: k (string), k2 (int32 in {0, 1}), <side>1 (int32), <side>s (utf8 payload). */
static sl_table_t *make(const struct str_spec *sp, const char *side)
{
    char n1[8], ns[8];
    snprintf(n1, sizeof n1, "%s1", side);
    snprintf(ns, sizeof ns, "%ss", side);
    const char *names[] = {"k", "k2", n1, ns};
    enum sl_type ty[] = {sp->dict ? SL_TYPE_DICT : sp->large ? SL_TYPE_LARGE_UTF8 : SL_TYPE_UTF8,
                         SL_TYPE_INT32, SL_TYPE_INT32, SL_TYPE_UTF8};
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    /* DICT keys: one dictionary of the key_range strings, in key order or reversed */
    int32_t *doff = NULL;
    char *dchars = NULL;
    if (sp->dict) {
        doff = malloc((size_t)(sp->key_range + 1) * sizeof *doff);
        dchars = malloc((size_t)sp->key_range * 64 + 1);
        doff[0] = 0;
        for (int64_t c = 0; c < sp->key_range; c++) {
            int64_t v = (sp->dict == 2 ? sp->key_range - 1 - c : c) + sp->key_offset;
            doff[c + 1] = doff[c] + key_string(v, sp->distinct, dchars + doff[c]);
        }
    }
    uint64_t s = sp->seed * 0x9E3779B97F4A7C15ull + 1;
    const int64_t chunk = 30000;
    for (int64_t lo = 0; lo < sp->rows || lo == 0; lo += chunk) {
        int64_t m = sp->rows - lo < chunk ? sp->rows - lo : chunk;
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, 4, names, ty, m));
        char scratch[80];
        char *kc = sp->dict ? NULL : sl_batch_column_chars(b, 0, m * 64 + 1);
        char *pc = sl_batch_column_chars(b, 3, m * 8 + 1);
        assert_true(sp->dict || kc);
        assert_non_null(pc);
        int32_t *k2 = sl_batch_column_data(b, 1), *p1 = sl_batch_column_data(b, 2);
        int32_t *po = sl_batch_column_data(b, 3);
        int64_t at = 0, pat = 0;
        for (int64_t i = 0; i < m; i++) {
            int64_t v = (int64_t)(rnd(&s) % (uint64_t)sp->key_range) + sp->key_offset;
            char buf[80];
            int len = key_string(v, sp->distinct, buf);
            memcpy(kc ? kc + at : scratch, buf, (size_t)len);
            at += kc ? len : 0;
            if (sp->dict) {
                int64_t c = v - sp->key_offset;
                ((int32_t *)sl_batch_column_data(b, 0))[i] =
                    (int32_t)(sp->dict == 2 ? sp->key_range - 1 - c : c);
            } else if (sp->large)
                ((int64_t *)sl_batch_column_data(b, 0))[i + 1] = at;
            else
                ((int32_t *)sl_batch_column_data(b, 0))[i + 1] = (int32_t)at;
            k2[i] = (int32_t)(v % 2);
            p1[i] = (int32_t)(rnd(&s) % 1000);
            int pl = (int)(rnd(&s) % 8);
            for (int j = 0; j < pl; j++)
                pc[pat++] = (char)('a' + (v + j) % 26);
            po[i + 1] = (int32_t)pat;
        }
        if (sp->dict) /* a copy per batch: equal dictionaries, distinct objects */
            SL_ASSERT_OK(sl_batch_column_set_dictionary(b, 0, sp->key_range, doff, dchars));
        if (sp->nulls) {
            uint8_t *valid = sl_batch_column_validity(b, 0);
            for (int64_t i = 0; i < m; i += 10)
                valid[i / 8] &= (uint8_t) ~(1u << (i % 8));
        }
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
        if (m == 0)
            break;
    }
    free(doff);
    free(dchars);
    return t;
}

/* The join on both engines; resident: 0 inputs and output on the host, 1 both in GPU
 * memory, 2 inputs in GPU memory and output on the host, 3 the other way round.
 * expect_gpu: 1 the GPU finalized it, 0 the CPU did (-1: either). Returns the CPU's row
 * count. */
static int check_soft, check_soft_failures; /* 1: check records a difference, the caller fails */

static int64_t check(sl_engine_t *cpu, sl_engine_t *gpu, sl_table_t *l, sl_table_t *r,
                     const char *opts, int expect_gpu, int resident)
{
    struct fp want, got;
    int on_gpu;
    join_both(cpu, gpu, l, r, opts, resident == 1 || resident == 2, resident == 1 || resident == 3,
              &want, &got, &on_gpu);
    int joined_on_gpu = on_gpu && strstr(last_profile, "\"gpu_algo\"") != NULL;
    printf("%-60s resident %d: cpu %lld rows, gpu %lld rows, joined on the GPU %d%s\n", opts,
           resident, (long long)want.rows, (long long)got.rows, joined_on_gpu,
           got.hash == want.hash ? "" : " HASH MISMATCH");
    if (check_soft && (got.rows != want.rows || got.hash != want.hash)) {
        check_soft_failures++; /* the caller asserts after trying every case */
        return want.rows;
    }
    for (int c = 0; c < 16 && got.hash != want.hash; c++)
        if (got.col[c] != want.col[c])
            printf("  output column %d differs\n", c);
    assert_int_equal(got.rows, want.rows);
    assert_true(got.hash == want.hash);
    if (expect_gpu >= 0)
        assert_int_equal(joined_on_gpu, expect_gpu);
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    sl_engine_mem_stats(gpu, &ms);
    assert_int_equal(ms.gpu_in_use, 0);
    return want.rows;
}

/* Strings and their bitmap through sl_table_to_device and back, whole batches and slices
 * (offsets not starting at 0, bit offsets not multiples of 8). The host batches of 30,000
 * rows arrive as one device batch (runtime/gpu_concat.c): values at their places, bitmaps
 * and string offsets rebuilt, and in the DICT case batches with dictionaries of their own
 * (a reversed copy every other batch) under one merged dictionary. */
SL_TEST(upload_download_round_trip)
{
    NEED_GPU();
    sl_engine_t *gpu = gpu_test_engine(SL_PLACE_GPU, 0);
    for (int kind = 0; kind < 3; kind++) {
        struct str_spec sp = {.rows = 70001, .key_range = 5000, .large = kind == 1,
                              .dict = kind == 2, .nulls = 1, .seed = 3};
        sl_table_t *t = make(&sp, "l"), *sliced, *other = NULL;
        if (kind == 2) { /* the same strings, other codes: dictionaries differ per batch */
            sp.dict = 2;
            other = make(&sp, "l");
        }
        SL_ASSERT_OK(sl_table_create(&sliced));
        for (int64_t i = 0; i < sl_table_num_batches(t); i++) {
            sl_batch_t *b = sl_table_batch(other && i % 2 ? other : t, i);
            int64_t n = sl_batch_num_rows(b), off = n > 13 ? 13 : 0;
            sl_batch_t *s = sl__batch_slice(b, off, n - off - (n > 20 ? 5 : 0));
            assert_non_null(s);
            SL_ASSERT_OK(sl_table_append(sliced, s));
            sl_batch_unref(s);
        }
        sl_table_t *src[] = {t, sliced};
        for (int k = 0; k < 2; k++) {
            sl_table_t *dev, *back;
            SL_ASSERT_OK(sl_table_to_device(gpu, src[k], 0, &dev));
            assert_true(sl_batch_device(sl_table_batch(dev, 0)) >= 0);
            assert_true(sl_table_num_batches(src[k]) > 1);
            assert_int_equal(sl_table_num_batches(dev), 1); /* one run */
            SL_ASSERT_OK(sl_table_to_host(dev, &back));
            struct fp a = fingerprint(src[k]), b = fingerprint(back);
            printf("%s, %s: %lld rows\n", kind == 2 ? "dict" : kind ? "large_utf8" : "utf8",
                   k ? "slices" : "whole", (long long)a.rows);
            assert_int_equal(a.rows, b.rows);
            assert_true(a.hash == b.hash);
            sl_table_unref(back);
            sl_table_unref(dev);
        }
        sl_table_unref(sliced);
        sl_table_unref(t);
        if (other)
            sl_table_unref(other);
    }
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    sl_engine_mem_stats(gpu, &ms);
    assert_int_equal(ms.gpu_in_use, 0);
    sl_engine_close(gpu);
}

/* The two sides most cases join: utf8 keys of 0..64 bytes on the left, large_utf8 on
 * the right, duplicates on both, some keys on one side only. */
static const struct str_spec pair_l = {.rows = 100000, .key_range = 20000, .seed = 1};
static const struct str_spec pair_r = {.rows = 60000, .key_range = 30000, .large = 1, .seed = 2};

/* Every kind and algorithm on plain string keys, host and GPU-resident inputs. */
SL_TEST(string_keys_every_kind)
{
    NEED_GPU();
    setvbuf(stdout, NULL, _IOLBF, 0);
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0), *gpu = gpu_test_engine(SL_PLACE_GPU, 0);
    struct str_spec ls = pair_l, rs = pair_r;
    sl_table_t *l = make(&ls, "l"), *r = make(&rs, "r");
    const char *opts[] = {
        "on=k",
        "on=k kind=left",
        "on=k kind=semi",
        "on=k kind=anti",
        "on=k algo=nopart",
        "on=k algo=sortmerge",
        "on=k kind=left algo=nopart",
        "on=\"k,k2\"",
        "on=\"k,k2\" kind=anti",
        "on=k output=aggregate left_columns=l1 right_columns=r1",
        "on=k left_columns=\"ls,l1\" right_columns=rs",
        "on=k kind=left left_columns=l1 right_columns=\"rs,r1,k\"",
    };
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        for (int resident = 0; resident < 2; resident++)
            check(cpu, gpu, l, r, opts[i], 1, resident);
    sl_table_unref(l);
    sl_table_unref(r);
    /* No match at all; tiny and empty sides. */
    struct str_spec none = {.rows = 5000, .key_range = 1000, .key_offset = 1000000, .seed = 5};
    struct str_spec tiny = {.rows = 1, .key_range = 1, .seed = 6};
    struct str_spec empty = {.rows = 0, .key_range = 1, .seed = 7};
    sl_table_t *a = make(&ls, "l"), *b = make(&none, "r"), *c = make(&tiny, "r"),
               *d = make(&empty, "r");
    check(cpu, gpu, a, b, "on=k", 1, 0);
    check(cpu, gpu, a, b, "on=k kind=anti", 1, 1);
    check(cpu, gpu, a, c, "on=k", 1, 0);
    check(cpu, gpu, a, d, "on=k", -1, 0);
    check(cpu, gpu, a, d, "on=k kind=anti", 0, 0); /* empty right side: the CPU's */
    sl_table_unref(a);
    sl_table_unref(b);
    sl_table_unref(c);
    sl_table_unref(d);
    /* Null keys: the CPU joins. */
    struct str_spec nl = ls;
    nl.nulls = 1;
    sl_table_t *n = make(&nl, "l"), *r2 = make(&rs, "r");
    check(cpu, gpu, n, r2, "on=k", 0, 0);
    sl_table_unref(n);
    sl_table_unref(r2);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

/* Where the inputs and the output live does not change the rows: inputs uploaded by the
 * engine and results downloaded by it, or moved by sl_table_to_device/to_host. */
SL_TEST(string_join_residencies)
{
    NEED_GPU();
    setvbuf(stdout, NULL, _IOLBF, 0);
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0), *gpu = gpu_test_engine(SL_PLACE_GPU, 0);
    sl_table_t *l = make(&pair_l, "l"), *r = make(&pair_r, "r");
    check_soft = 1;
    check_soft_failures = 0;
    for (int resident = 0; resident < 4; resident++)
        check(cpu, gpu, l, r, "on=k", 1, resident);
    check_soft = 0;
    assert_int_equal(check_soft_failures, 0);
    sl_table_unref(l);
    sl_table_unref(r);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

/* left JOIN right on k after a filter on host-resident strings forced to the CPU: the
 * left side reaches the join in host memory, the right side may not; string outputs
 * are gathered on the GPU only when every input batch is in device memory. */
static struct fp run_filtered(sl_engine_t *e, sl_table_t *l, sl_table_t *r)
{
    return run_where_placed(e, l, r, "ls LIKE 'a%' OR l1 < 500", true, "on=k2", 0, NULL);
}

SL_TEST(string_outputs_with_a_host_side)
{
    NEED_GPU();
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0);
    struct str_spec ls = {.rows = 3000, .key_range = 500, .seed = 31};
    struct str_spec rs = {.rows = 2000, .key_range = 700, .seed = 32};
    sl_table_t *l = make(&ls, "l"), *r = make(&rs, "r");
    struct fp want = run_filtered(cpu, l, r);
    enum sl_placement pl[] = {SL_PLACE_GPU, SL_PLACE_AUTO};
    for (int i = 0; i < 2; i++) {
        sl_engine_t *gpu = gpu_test_engine(pl[i], 0);
        struct fp got = run_filtered(gpu, l, r);
        printf("placement %d: cpu %lld rows, gpu %lld rows%s\n", (int)pl[i], (long long)want.rows,
               (long long)got.rows, got.hash == want.hash ? "" : " HASH MISMATCH");
        assert_int_equal(got.rows, want.rows);
        assert_true(got.hash == want.hash);
        sl_engine_close(gpu);
    }
    sl_table_unref(l);
    sl_table_unref(r);
    sl_engine_close(cpu);
}

/* DICT keys whose dictionaries differ: remapped onto one merged dictionary, hashed and
 * joined on the GPU. */
SL_TEST(dict_keys_other_dictionaries)
{
    NEED_GPU();
    setvbuf(stdout, NULL, _IOLBF, 0);
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0), *gpu = gpu_test_engine(SL_PLACE_GPU, 0);
    struct str_spec ls = {.rows = 80000, .key_range = 5000, .dict = 1, .seed = 11};
    struct str_spec rs = {.rows = 50000, .key_range = 8000, .dict = 2, .seed = 12};
    sl_table_t *l = make(&ls, "l"), *r = make(&rs, "r");
    check(cpu, gpu, l, r, "on=k", 1, 0);
    check(cpu, gpu, l, r, "on=k kind=semi", 1, 1);
    check(cpu, gpu, l, r, "on=\"k,k2\" kind=left", 1, 0);
    sl_table_unref(l);
    sl_table_unref(r);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

/* Many distinct keys (a real 64-bit hash: no collision expected, and none may change a
 * row), then an 8-bit hash: collisions are certain, and the check must send the join to
 * the CPU (the profile says so) with the same rows. The many keys are one string per
 * value (distinct): 2^20 rows a side over 2^22 values match about 2^18 times. Keys whose
 * length cuts their digits would make a few short strings shared by 1/65 of the rows
 * each (the empty string: 16,000 rows a side), 3.2e8 result rows: 46 s and 11 GB for the
 * CPU's reference alone. */
SL_TEST(hash_collisions)
{
    NEED_GPU();
    setvbuf(stdout, NULL, _IOLBF, 0);
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0), *gpu = gpu_test_engine(SL_PLACE_GPU, 0);
    struct str_spec ls = {.rows = 1 << 20, .key_range = 1 << 22, .distinct = 1, .seed = 21};
    struct str_spec rs = {.rows = 1 << 20, .key_range = 1 << 22, .distinct = 1, .seed = 22};
    sl_table_t *l = make(&ls, "l"), *r = make(&rs, "r");
    int64_t rows = check(cpu, gpu, l, r, "on=k", 1, 1);
    assert_true(rows > (1 << 17) && rows < (1 << 19)); /* about 2^18 */
    assert_non_null(strstr(last_profile, "\"key_hash_seeds\":1"));
    sl_table_unref(l);
    sl_table_unref(r);
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = 2;
    cfg.placement = SL_PLACE_GPU;
    cfg.debug_join_weak_hash = 1;
    sl_engine_t *weak;
    SL_ASSERT_OK(sl_test_engine_open(&weak, &cfg));
    struct str_spec a = {.rows = 20000, .key_range = 3000, .seed = 23};
    struct str_spec b = {.rows = 20000, .key_range = 3000, .seed = 24};
    l = make(&a, "l");
    r = make(&b, "r");
    const char *opts[] = {"on=k", "on=k kind=semi", "on=k kind=anti", "on=\"k,k2\" kind=left"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        check(cpu, weak, l, r, opts[i], 0, 0);
        assert_non_null(strstr(last_profile, "\"key_hash_collided\""));
    }
    sl_table_unref(l);
    sl_table_unref(r);
    sl_engine_close(weak);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}
