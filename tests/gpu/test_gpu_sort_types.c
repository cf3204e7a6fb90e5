/* Tests the GPU sort, partition and merge on the integer-like types of issue 17 (date32,
 * timestamp, decimal(15,2), bool, int8, int16, uint8..uint64) against the same plans on
 * the CPU engine, row for row (all three are stable, so the outputs must be identical).
 * Keys of every such type, ascending and descending, with extreme values (INT64_MIN,
 * uint64 max, negative decimals, dates before 1970), few distinct values (duplicates:
 * payload `row` is the input position, so stability shows), payloads of every width
 * (1, 2, 4, 8 bytes), empty input and one row; host and GPU-resident inputs. With nulls
 * the GPU leaves the finalize to the CPU, which must still give the CPU's rows. Whether
 * the GPU finalized is read from the operator's state. Dictionary-encoded and wide-decimal
 * columns, which the GPU sort leaves to the CPU, still sort right under GPU placement
 * (strings compared, not codes). Skipped without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_test.h"
#include "sl_test.h"
#include "sort_test.h"

#define N_COLS 8

/* Column 0 is the key; the others cover every width and kind of payload. */
static const char *const names[N_COLS] = {"k", "row", "b", "i8", "u16", "u64", "dec", "dt"};

struct spec {
    enum sl_type key;
    int64_t rows;
    int few;        /* keys from 7 values (duplicates) */
    int nulls;      /* every 9th key and every 5th `u64` null */
    int sorted;     /* keys ascending (merge runs) */
    int n_cols;     /* 0: all N_COLS; 2: key and `row` only */
    uint64_t seed;
};

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static enum sl_type col_type(const struct spec *sp, int c)
{
    static const enum sl_type pay[N_COLS] = {SL_TYPE_INVALID, SL_TYPE_INT32, SL_TYPE_BOOL,
                                             SL_TYPE_INT8, SL_TYPE_UINT16, SL_TYPE_UINT64,
                                             SL_TYPE_INVALID, SL_TYPE_DATE32};
    if (c == 0)
        return sp->key;
    return c == 6 ? sl_type_decimal(15, 2) : pay[c];
}

/* A random value of the type as 64 bits (sign-extended where signed), extremes often. */
static uint64_t value_of(enum sl_type t, uint64_t *s, int few)
{
    uint64_t r = rnd(s), pick = rnd(s) % 8;
    const int64_t dec_max = 999999999999999LL; /* decimal(15,2): 15 digits */
    switch (SL_TYPE_ID(t)) {
    case SL_TYPE_BOOL: return r & 1;
    case SL_TYPE_INT8:
        return few ? (uint64_t)(int64_t)((int)(r % 7) - 3) : (uint64_t)(int64_t)(int8_t)r;
    case SL_TYPE_UINT8: return few ? r % 7 : (uint8_t)r;
    case SL_TYPE_INT16: return few ? (uint64_t)(int64_t)((int)(r % 7) * 1000 - 3000)
                                   : (uint64_t)(int64_t)(int16_t)r;
    case SL_TYPE_UINT16: return few ? r % 7 * 10000 : (uint16_t)r;
    case SL_TYPE_UINT32: {
        const uint32_t ex[] = {0, 1, 0x7fffffffu, 0x80000000u, UINT32_MAX};
        return few ? ex[r % 5] : pick < 3 ? ex[pick] : (uint32_t)r;
    }
    case SL_TYPE_UINT64: {
        const uint64_t ex[] = {0, 1, (uint64_t)INT64_MAX, (uint64_t)INT64_MIN, UINT64_MAX};
        return few ? ex[r % 5] : pick < 3 ? ex[pick + 2] : r;
    }
    case SL_TYPE_INT32: return (uint64_t)(int64_t)(few ? (int32_t)(r % 7) - 3 : (int32_t)r);
    case SL_TYPE_DATE32: /* 1900-01-01 .. 2100-01-01, both sides of 1970 */
        return (uint64_t)(int64_t)(few ? (int32_t)(r % 7) * 3000 - 9000
                                       : (int32_t)(r % 73049) - 25567);
    case SL_TYPE_TIMESTAMP: {
        const int64_t ex[] = {INT64_MIN, INT64_MAX, 0, -1, -2208988800000000LL};
        return (uint64_t)(few ? ex[r % 5] : pick < 3 ? ex[pick] : (int64_t)r);
    }
    case SL_TYPE_DECIMAL: {
        const int64_t ex[] = {-dec_max, dec_max, 0, -1, -5}; /* -0.05 */
        int64_t any = (int64_t)(r % (2 * (uint64_t)dec_max + 1)) - dec_max;
        return (uint64_t)(few ? ex[r % 5] : pick < 3 ? ex[pick] : any);
    }
    default: { /* int64 */
        const int64_t ex[] = {INT64_MIN, INT64_MAX, 0, -1, 1};
        return (uint64_t)(few ? ex[r % 5] : pick < 3 ? ex[pick] : (int64_t)r);
    }
    }
}

static void put(void *data, size_t w, int64_t i, uint64_t v)
{
    memcpy((char *)data + (size_t)i * w, &v, w); /* little endian: the low bytes */
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Keys of a sorted run: sorted as the type orders them (codes flip the sign bit of
 * signed types, so that unsigned order of the codes is the key order). */
static void sort_keys(enum sl_type t, uint64_t *k, int64_t n)
{
    bool is_signed = !(t == SL_TYPE_BOOL || t == SL_TYPE_UINT8 || t == SL_TYPE_UINT16 ||
                       t == SL_TYPE_UINT32 || t == SL_TYPE_UINT64);
    for (int64_t i = 0; i < n && is_signed; i++)
        k[i] ^= 1ull << 63;
    qsort(k, (size_t)n, 8, cmp_u64);
    for (int64_t i = 0; i < n && is_signed; i++)
        k[i] ^= 1ull << 63;
}

static sl_table_t *make(const struct spec *sp)
{
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    int nc = sp->n_cols ? sp->n_cols : N_COLS;
    enum sl_type ty[N_COLS];
    for (int c = 0; c < nc; c++)
        ty[c] = col_type(sp, c);
    uint64_t s = sp->seed * 0x9E3779B97F4A7C15ull + 1;
    uint64_t *keys = malloc((size_t)(sp->rows + 1) * 8);
    assert_non_null(keys);
    for (int64_t i = 0; i < sp->rows; i++)
        keys[i] = value_of(sp->key, &s, sp->few);
    if (sp->sorted)
        sort_keys(sp->key, keys, sp->rows);
    const int64_t chunk = 30011;
    int64_t row = 0;
    for (int64_t lo = 0; lo < sp->rows || lo == 0; lo += chunk) {
        int64_t m = sp->rows - lo < chunk ? sp->rows - lo : chunk;
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, nc, names, ty, m));
        for (int64_t i = 0; i < m; i++, row++) {
            put(sl_batch_column_data(b, 0), sl_type_width(ty[0]), i, keys[row]);
            for (int c = 1; c < nc; c++)
                put(sl_batch_column_data(b, c), sl_type_width(ty[c]), i,
                    c == 1 ? (uint64_t)row : value_of(ty[c], &s, 0));
        }
        for (int64_t i = 0; sp->nulls && i < m; i++) {
            if ((lo + i) % 9 == 4)
                sl_batch_column_validity(b, 0)[i / 8] &= (uint8_t) ~(1u << (i % 8));
            if (nc > 5 && (lo + i) % 5 == 2)
                sl_batch_column_validity(b, 5)[i / 8] &= (uint8_t) ~(1u << (i % 8));
        }
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
        if (m == 0)
            break;
    }
    free(keys);
    return t;
}

/* `op` on the CPU engine and on the GPU engine (sort_test.h), one input or two (merge). */
static void check_ops(const struct spec *sp, const struct spec *sp2, const char *op,
                      const char *opts, int expect_gpu)
{
    sl_table_t *in[2] = {make(sp), sp2 ? make(sp2) : NULL};
    char what[96];
    snprintf(what, sizeof what, "key %s, %lld rows%s%s", sl_type_name(sp->key),
             (long long)sp->rows, sp->few ? ", few keys" : "", sp->nulls ? ", nulls" : "");
    check_tables(in, sp2 ? 2 : 1, op, opts, expect_gpu, 0, 0, what);
    for (int i = 0; i < (sp2 ? 2 : 1); i++)
        sl_table_unref(in[i]);
}

static const enum sl_type key_types[] = {
    SL_TYPE_DATE32, SL_TYPE_TIMESTAMP, SL_TYPE_DECIMAL /* decimal(15,2) below */,
    SL_TYPE_BOOL, SL_TYPE_INT8, SL_TYPE_INT16, SL_TYPE_UINT8, SL_TYPE_UINT16,
    SL_TYPE_UINT32, SL_TYPE_UINT64, SL_TYPE_INT64};

static enum sl_type key_type(int i)
{
    return key_types[i] == SL_TYPE_DECIMAL ? sl_type_decimal(15, 2) : key_types[i];
}

#define N_KEY_TYPES ((int)(sizeof key_types / sizeof key_types[0]))

/* Every key type, random and few distinct keys, both directions, all payload widths. */
SL_TEST(sort_every_integer_key_type)
{
    NEED_GPU();
    for (int i = 0; i < N_KEY_TYPES; i++) {
        struct spec a = {.key = key_type(i), .rows = 100000, .seed = 10 + (uint64_t)i};
        check_ops(&a, NULL, "sort", "by=k", 1);
        check_ops(&a, NULL, "sort", "by=\"k DESC\"", 1);
        a.few = 1;
        check_ops(&a, NULL, "sort", "by=k", 1);
        check_ops(&a, NULL, "sort", "by=\"k DESC\"", 1);
    }
}

/* One payload: CUB sorts (key, payload) into the output when the key is a signed word
 * and the payload 4 or 8 bytes; a coded key gathers both columns. */
SL_TEST(sort_one_payload)
{
    NEED_GPU();
    for (int i = 0; i < N_KEY_TYPES; i++) {
        struct spec a = {.key = key_type(i), .rows = 50000, .few = i % 2, .n_cols = 2,
                         .seed = 30 + (uint64_t)i};
        check_ops(&a, NULL, "sort", "by=k", 1);
        check_ops(&a, NULL, "sort", "by=\"k DESC\"", 1);
    }
}

/* Empty input (nothing to finalize) and one row. */
SL_TEST(sort_empty_and_one_row)
{
    NEED_GPU();
    for (int i = 0; i < N_KEY_TYPES; i++) {
        struct spec e = {.key = key_type(i), .rows = 0, .seed = 50};
        check_ops(&e, NULL, "sort", "by=k", 0);
        struct spec one = {.key = key_type(i), .rows = 1, .seed = 51};
        check_ops(&one, NULL, "sort", "by=\"k DESC\"", 1);
    }
}

/* Nulls in the key and a payload: the CPU finalizes (NULLS FIRST/LAST as asked). */
SL_TEST(sort_nulls_as_the_cpu)
{
    NEED_GPU();
    for (int i = 0; i < N_KEY_TYPES; i++) {
        struct spec a = {.key = key_type(i), .rows = 40000, .few = 1, .nulls = 1,
                         .seed = 60 + (uint64_t)i};
        check_ops(&a, NULL, "sort", "by=k", 0);
        check_ops(&a, NULL, "sort", "by=\"k DESC NULLS LAST\"", 0);
    }
}

/* Partition by date32, timestamp and decimal keys with 4- and 8-byte payloads (the
 * operator refuses narrower columns at bind). */
SL_TEST(partition_date_decimal_keys)
{
    NEED_GPU();
    const enum sl_type keys[] = {SL_TYPE_DATE32, SL_TYPE_TIMESTAMP, sl_type_decimal(15, 2)};
    for (int i = 0; i < 3; i++) {
        struct spec a = {.key = keys[i], .rows = 80000, .n_cols = 2, .seed = 70 + (uint64_t)i};
        check_ops(&a, NULL, "partition", "key=k bits=6", 1);
        check_ops(&a, NULL, "partition", "key=k bits=10 hash=true", 1);
    }
}

/* Merge of two sorted runs by keys of every 4- or 8-byte integer type: signed words on
 * the GPU, unsigned keys on the CPU (their order is not the GPU merge's). */
SL_TEST(merge_date_decimal_unsigned_keys)
{
    NEED_GPU();
    const enum sl_type gpu_keys[] = {SL_TYPE_DATE32, SL_TYPE_TIMESTAMP, sl_type_decimal(15, 2)};
    for (int i = 0; i < 3; i++) {
        struct spec a = {.key = gpu_keys[i], .rows = 40000, .few = 1, .sorted = 1, .n_cols = 2,
                         .seed = 80 + (uint64_t)i};
        struct spec b = a;
        b.rows = 25001;
        b.seed += 100;
        check_ops(&a, &b, "merge", "by=k", 1);
        a.few = b.few = 0;
        check_ops(&a, &b, "merge", "by=k", 1);
    }
    const enum sl_type cpu_keys[] = {SL_TYPE_UINT32, SL_TYPE_UINT64};
    for (int i = 0; i < 2; i++) {
        struct spec a = {.key = cpu_keys[i], .rows = 30000, .sorted = 1, .n_cols = 2,
                         .seed = 90 + (uint64_t)i};
        struct spec b = a;
        b.seed += 100;
        check_ops(&a, &b, "merge", "by=k", 0);
    }
}

/* Columns the GPU sort does not take go to the CPU sort under GPU placement, with the
 * CPU engine's rows: a dictionary-encoded payload (its codes travel to the GPU and back
 * with the dictionary shared), a dictionary key (ordered by its strings), a decimal of
 * precision 38 (16 bytes). */
SL_TEST(sort_dict_and_wide_decimal_on_the_cpu)
{
    NEED_GPU();
    enum { N = 20000, W = 50 };
    static char chars[W * 8];
    static int32_t offs[W + 1];
    for (int i = 0, at = 0; i <= W; i++) { /* codes in the reverse of the strings' order */
        offs[i] = at;
        if (i < W)
            at += snprintf(chars + at, sizeof chars - (size_t)at, "s%02d", W - 1 - i);
    }
    const char *cols3[3] = {"k", "s", "w"};
    enum sl_type ty[3] = {SL_TYPE_INT32, SL_TYPE_DICT, sl_type_decimal(38, 2)};
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    uint64_t s = 99;
    for (int part = 0; part < 2; part++) {
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, 3, cols3, ty, N));
        int32_t *k = sl_batch_column_data(b, 0), *code = sl_batch_column_data(b, 1);
        int64_t *w = sl_batch_column_data(b, 2);
        for (int64_t i = 0; i < N; i++) {
            k[i] = (int32_t)(rnd(&s) % 1000) - 500;
            code[i] = (int32_t)(rnd(&s) % W);
            w[2 * i] = (int64_t)rnd(&s);
            w[2 * i + 1] = (int64_t)(rnd(&s) % 7) - 3; /* high word: signs both ways */
        }
        if (part == 0)
            SL_ASSERT_OK(sl_batch_column_set_dictionary(b, 1, W, offs, chars));
        else
            SL_ASSERT_OK(sl_batch_share_dictionary(b, 1, sl_table_batch(t, 0), 1));
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
    }
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0), *gpu = gpu_test_engine(SL_PLACE_GPU, 0);
    const char *bys[3] = {"by=k", "by=\"s DESC\"", "by=w"};
    for (int i = 0; i < 3; i++) {
        int on_gpu = -1;
        struct flat want = run(cpu, &t, 1, "sort", bys[i], 0, &on_gpu);
        struct flat got = run(gpu, &t, 1, "sort", bys[i], 0, &on_gpu);
        printf("sort %s: %lld rows, on the GPU %d\n", bys[i], (long long)got.rows, on_gpu);
        assert_int_equal(got.rows, 2 * N);
        assert_int_equal(want.rows, 2 * N);
        assert_memory_equal(got.v, want.v, (size_t)(3 * 2 * N) * 8);
        assert_int_equal(on_gpu, 0);
        free(got.v);
        free(want.v);
    }
    sl_engine_close(cpu);
    sl_engine_close(gpu);
    sl_table_unref(t);
}

/* DICT keys and several keys on the GPU (sort_keys): a DICT key whose codes run against
 * its strings' order (ranked by the strings, as the CPU does), a second DICT column
 * with an empty string and prefixes of one another ("", "a", "ab", "abc", "b"), int8 and int32
 * keys, in mixed directions; `row` is the input position, so stability shows; two
 * batches sharing the dictionaries. Batches whose dictionaries differ (the same strings
 * in another order), a null in a DICT key, and a DICT key over an empty input and one
 * row: the CPU's rows, the first two on the CPU. The TPC-H Q16 shape last: count DESC,
 * two DICT strings, an int32. */
static sl_table_t *dict_table(int64_t n, int other_dict, int null_row, uint64_t seed)
{
    enum { W = 50 };
    static char chars[W * 8], chars2[W * 8];
    static int32_t offs[W + 1], offs2[W + 1];
    for (int i = 0, at = 0, at2 = 0; i <= W; i++) {
        offs[i] = at; /* codes in the reverse of the strings' order */
        offs2[i] = at2; /* the same strings in their order */
        if (i < W) {
            at += snprintf(chars + at, sizeof chars - (size_t)at, "s%02d", W - 1 - i);
            at2 += snprintf(chars2 + at2, sizeof chars2 - (size_t)at2, "s%02d", i);
        }
    }
    static const char tchars[] = "babaabc"; /* "", "b", "ab", "a", "abc": codes out of order */
    static const int32_t toffs[6] = {0, 0, 1, 3, 4, 7};
    const char *cols[6] = {"s", "t", "k", "i8", "row", "v"};
    enum sl_type ty[6] = {SL_TYPE_DICT, SL_TYPE_DICT, SL_TYPE_INT32, SL_TYPE_INT8,
                          SL_TYPE_INT32, SL_TYPE_INT64};
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    uint64_t s = seed;
    for (int part = 0; part < 2; part++) {
        int64_t m = part == 0 ? (n + 1) / 2 : n / 2;
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, 6, cols, ty, m));
        int32_t *sc = sl_batch_column_data(b, 0), *tc = sl_batch_column_data(b, 1);
        int32_t *k = sl_batch_column_data(b, 2), *row = sl_batch_column_data(b, 4);
        int8_t *i8 = sl_batch_column_data(b, 3);
        int64_t *v = sl_batch_column_data(b, 5);
        for (int64_t i = 0; i < m; i++) {
            sc[i] = (int32_t)(rnd(&s) % W);
            tc[i] = (int32_t)(rnd(&s) % 5);
            k[i] = (int32_t)(rnd(&s) % 5) - 2;
            i8[i] = (int8_t)((int)(rnd(&s) % 7) - 3);
            row[i] = (int32_t)(part * ((n + 1) / 2) + i);
            v[i] = (int64_t)rnd(&s);
        }
        if (part == 0 || other_dict) {
            SL_ASSERT_OK(part == 0 ? sl_batch_column_set_dictionary(b, 0, W, offs, chars)
                                   : sl_batch_column_set_dictionary(b, 0, W, offs2, chars2));
            if (part == 1) /* the same strings in the other order: the codes follow them */
                for (int64_t i = 0; i < m; i++)
                    sc[i] = W - 1 - sc[i];
            SL_ASSERT_OK(sl_batch_column_set_dictionary(b, 1, 5, toffs, tchars));
        } else {
            SL_ASSERT_OK(sl_batch_share_dictionary(b, 0, sl_table_batch(t, 0), 0));
            SL_ASSERT_OK(sl_batch_share_dictionary(b, 1, sl_table_batch(t, 0), 1));
        }
        if (null_row >= 0 && part == 0 && null_row < m)
            sl_batch_column_validity(b, 1)[null_row / 8] &= (uint8_t) ~(1u << (null_row % 8));
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
    }
    return t;
}

SL_TEST(sort_dict_and_several_keys_on_the_gpu)
{
    NEED_GPU();
    const char *bys[] = {"by=s", "by=\"s DESC\"", "by=\"t, s DESC\"", "by=\"k DESC, t, row\"",
                         "by=\"i8 DESC, s\"", "by=\"t DESC, i8, k DESC\"", "by=\"k, v\""};
    sl_table_t *t = dict_table(60000, 0, -1, 7);
    for (size_t i = 0; i < sizeof bys / sizeof bys[0]; i++)
        check_tables(&t, 1, "sort", bys[i], 1, 0, 0, "dict keys");
    sl_table_unref(t);
    t = dict_table(20000, 1, -1, 8); /* dictionaries differ between the batches (host
                                       * input: sl_table_to_device merges them into one) */
    check_tables(&t, 1, "sort", "by=\"s, k\"", 0, 0, 1, "two dictionaries");
    sl_table_unref(t);
    t = dict_table(20000, 0, 11, 9); /* a null in t */
    check_tables(&t, 1, "sort", "by=\"t, k\"", 0, 0, 0, "a null DICT key");
    sl_table_unref(t);
    t = dict_table(1, 0, -1, 10);
    check_tables(&t, 1, "sort", "by=\"s DESC, k\"", 1, 0, 0, "one row");
    sl_table_unref(t);
}

/* Q16's sort: count DESC, then two DICT strings and an int32 (the group keys). */
SL_TEST(sort_q16_shape)
{
    NEED_GPU();
    sl_table_t *t = dict_table(27840, 0, -1, 11);
    check_tables(&t, 1, "sort", "by=\"i8 DESC, s, t, k\"", 1, 0, 0, "Q16 shape");
    sl_table_unref(t);
}
