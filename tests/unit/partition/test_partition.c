/* Tests of radix partitioning: the plain kernel (one and two passes, hashed or not)
 * against a simple reference, and the partition operator on random inputs (empty, one
 * row, all-equal keys, negative keys, null keys and payloads, sizes that are and are not
 * multiples of the morsel size and of the fanout, 1 and 2 threads). Within a partition
 * rows must keep their input order (checked with a row-id payload). Date keys partition
 * and merge as their integers; narrow columns are refused at bind. */
#include <stdio.h>

#include "../sort/sort_test_util.h"
#include "partition/part_int.h"

/* The reference partition of a key. */
static int64_t ref_part(int64_t key, int key_bytes, int hash, int bits)
{
    uint64_t k = key_bytes == 4 ? (uint64_t)(uint32_t)key : (uint64_t)key;
    uint64_t r = hash ? (bits ? (k * SL__PART_HASH_MUL) >> (64 - bits) : 0) : k;
    return (int64_t)(r & ((1ull << bits) - 1));
}

SL_TEST(kernel_matches_reference)
{
    int64_t sizes[] = {0, 1, 100, 4096, 100003};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (int cfg = 0; cfg < 8; cfg++) {
            int64_t n = sizes[s];
            int key_bytes = cfg & 1 ? 8 : 4, hash = (cfg >> 1) & 1, passes = cfg & 4 ? 2 : 1;
            int bits = passes == 2 ? 10 : 6;
            uint64_t *key = sl__malloc((size_t)(n + 8) * 8), *rid = sl__malloc((size_t)(n + 8) * 8);
            void *out[2], *tmp[2];
            for (int c = 0; c < 2; c++) {
                out[c] = sl__malloc((size_t)(n + 8) * 8);
                tmp[c] = sl__malloc((size_t)(n + 8) * 8);
            }
            for (int64_t i = 0; i < n; i++) {
                uint64_t x = rnd() % (s % 2 ? 1000 : UINT64_MAX);
                if (key_bytes == 4)
                    ((uint32_t *)key)[i] = (uint32_t)x;
                else
                    key[i] = x;
                rid[i] = (uint64_t)i;
            }
            int64_t *off = calloc((size_t)(1 << bits) + 1, 8);
            struct sl__part_spec sp = {key_bytes, hash, bits, passes, cfg & 1};
            const void *in[2] = {key, rid};
            int widths[2] = {key_bytes, 8};
            SL_ASSERT_OK(sl__partition(&sp, 2, in, widths, n, out, tmp, off));
            assert_int_equal(off[0], 0);
            assert_int_equal(off[1 << bits], n);
            for (int64_t p = 0; p < (1 << bits); p++) {
                int64_t prev = -1;
                for (int64_t i = off[p]; i < off[p + 1]; i++) {
                    int64_t r = (int64_t)((uint64_t *)out[1])[i];
                    int64_t k = key_bytes == 4 ? (int64_t)((uint32_t *)out[0])[i]
                                               : (int64_t)((uint64_t *)out[0])[i];
                    int64_t kin = key_bytes == 4 ? (int64_t)((uint32_t *)key)[r] : (int64_t)key[r];
                    assert_int_equal(k, kin);
                    assert_int_equal(ref_part(k, key_bytes, hash, bits), p);
                    assert_true(r > prev); /* input order within a partition */
                    prev = r;
                }
            }
            free(off);
            sl__free(key, 0);
            sl__free(rid, 0);
            for (int c = 0; c < 2; c++) {
                sl__free(out[c], 0);
                sl__free(tmp[c], 0);
            }
        }
    }
    assert_no_leaks();
}

/* Partitions (rid int64, k type, p float64) with the operator and checks: every input row
 * appears once; each batch holds one partition (the partition column), whose keys map
 * to it; rows keep their order within it; payloads and nulls travel with their rows. */
static void op_case(sl_engine_t *e, enum sl_type type, int64_t n, int64_t key_range,
                    int null_pct, const char *opts, int bits, int hash)
{
    struct tcol cols[3];
    tcol_alloc(&cols[0], "rid", SL_TYPE_INT64, n);
    tcol_alloc(&cols[1], "k", type, n);
    tcol_alloc(&cols[2], "p", SL_TYPE_FLOAT64, n);
    for (int64_t r = 0; r < n; r++) {
        cols[0].i[r] = r;
        uint64_t x = rnd();
        int64_t v = key_range ? (int64_t)(x % (uint64_t)key_range) - key_range / 2 : (int64_t)x;
        cols[1].i[r] = type == SL_TYPE_INT32 ? (int32_t)v : v;
        cols[1].valid[r] = (int)((x >> 50) % 100) >= null_pct;
        cols[2].f[r] = (double)(x >> 11) * 0.5;
        cols[2].valid[r] = (int)((x >> 30) % 100) >= null_pct;
    }
    sl_table_t *in = make_table(cols, 3, n, 97);
    sl_table_t *out = run_op(e, &in, 1, "partition", opts, NULL);
    sl_table_unref(in);
    int64_t got_n = out ? sl_table_num_rows(out) : 0;
    assert_int_equal(got_n, n);
    uint8_t *seen = calloc((size_t)n + 1, 1);
    int64_t last_part = -1;
    for (int64_t b = 0; out && b < sl_table_num_batches(out); b++) {
        sl_table_t *one;
        SL_ASSERT_OK(sl_table_create(&one));
        SL_ASSERT_OK(sl_table_append(one, sl_table_batch(out, b)));
        struct tcol rid, k, p, part;
        int64_t m = read_col(one, "rid", &rid);
        read_col(one, "k", &k);
        read_col(one, "p", &p);
        read_col(one, "partition", &part);
        assert_true(m > 0);
        int64_t pid = part.i[0];
        assert_true(pid > last_part); /* batches come in partition order */
        last_part = pid;
        for (int64_t i = 0; i < m; i++) {
            int64_t r = rid.i[i];
            assert_true(r >= 0 && r < n && !seen[r]);
            seen[r] = 1;
            assert_int_equal(part.i[i], pid);
            assert_true(same_value(&k, i, &cols[1], r));
            assert_true(same_value(&p, i, &cols[2], r));
            int64_t want = cols[1].valid[r] ? ref_part(cols[1].i[r], (int)sl_type_width(type),
                                                       hash, bits)
                                            : 0;
            assert_int_equal(want, pid);
            if (i)
                assert_true(rid.i[i - 1] < r);
        }
        tcol_free(&rid);
        tcol_free(&k);
        tcol_free(&p);
        tcol_free(&part);
        sl_table_unref(one);
    }
    free(seen);
    sl_table_unref(out);
    for (int c = 0; c < 3; c++)
        tcol_free(&cols[c]);
}

SL_TEST(operator_matches_reference)
{
    int64_t sizes[] = {0, 1, 63, 64, 1000, 20001};
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = open_engine(th, 64);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            op_case(e, SL_TYPE_INT32, sizes[s], 0, 0, "key=k bits=4", 4, 0);
            op_case(e, SL_TYPE_INT64, sizes[s], 100, 10, "key=k fanout=32 hash=true", 5, 1);
            op_case(e, SL_TYPE_INT32, sizes[s], 1000, 5, "key=k bits=8 passes=2", 8, 0);
            op_case(e, SL_TYPE_INT64, sizes[s], 0, 0, "key=k bits=11 passes=2 hash=true", 11, 1);
        }
        sl_engine_close(e);
    }
    assert_no_leaks();
}

SL_TEST(operator_all_equal_and_negative_keys)
{
    sl_engine_t *e = open_engine(2, 100);
    op_case(e, SL_TYPE_INT32, 5000, 1, 0, "key=k bits=6", 6, 0);      /* all keys 0 */
    op_case(e, SL_TYPE_INT64, 5000, 7, 0, "key=k bits=3 hash=true", 3, 1); /* -3..3 */
    op_case(e, SL_TYPE_INT64, 3000, 0, 50, "key=k bits=2", 2, 0);     /* many nulls */
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(operator_large_streaming)
{
    sl_engine_t *e = open_engine(2, 8192);
    op_case(e, SL_TYPE_INT32, 300000, 0, 0, "key=k bits=8", 8, 0);
    op_case(e, SL_TYPE_INT64, 300000, 0, 0, "key=k bits=12 passes=2 hash=true", 12, 1);
    sl_engine_close(e);
    assert_no_leaks();
}

SL_TEST(operator_bad_options)
{
    sl_engine_t *e = open_engine(1, 100);
    struct tcol c[2];
    tcol_alloc(&c[0], "k", SL_TYPE_INT32, 4);
    tcol_alloc(&c[1], "f", SL_TYPE_FLOAT64, 4);
    sl_table_t *t = make_table(c, 2, 4, 0);
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int s, o;
    SL_ASSERT_OK(sl_plan_add_table(p, t, &s));
    assert_int_equal(sl_plan_add(p, "partition", &s, 1, "key=f", &o), SL_ETYPE);
    assert_int_equal(sl_plan_add(p, "partition", &s, 1, "key=zz", &o), SL_ENOTFOUND);
    assert_int_equal(sl_plan_add(p, "partition", &s, 1, "key=k fanout=12", &o), SL_EINVAL);
    assert_int_equal(sl_plan_add(p, "partition", &s, 1, "key=k bits=16 passes=1", &o), SL_EINVAL);
    SL_ASSERT_OK(sl_plan_add(p, "partition", &s, 1, "key=k", &o));
    sl_plan_destroy(p);
    sl_table_unref(t);
    tcol_free(&c[0]);
    tcol_free(&c[1]);
    sl_engine_close(e);
    assert_no_leaks();
}

/* A one-batch table of columns "k" (key_type) and "v" (pay_type), k[i] = keys[i] and v[i] = i
 * (both stored at their width). */
static sl_table_t *typed_table(enum sl_type key_type, enum sl_type pay_type, const int32_t *keys,
                               int64_t n)
{
    const char *names[2] = {"k", "v"};
    enum sl_type types[2] = {key_type, pay_type};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 2, names, types, n));
    for (int64_t i = 0; i < n; i++) {
        int64_t k = keys[i];
        memcpy((char *)sl_batch_column_data(b, 0) + i * (int64_t)sl_type_width(key_type), &k,
               sl_type_width(key_type));
        uint64_t v = (uint64_t)i;
        memcpy((char *)sl_batch_column_data(b, 1) + i * (int64_t)sl_type_width(pay_type), &v,
               sl_type_width(pay_type));
    }
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    SL_ASSERT_OK(sl_table_append(t, b));
    sl_batch_unref(b);
    return t;
}

/* Results a and b (freed here) have `rows` rows with the same values in the named
 * columns, row for row. */
static void assert_same_columns(sl_table_t *a, sl_table_t *b, const char *const *names, int n,
                                int64_t rows)
{
    for (int c = 0; c < n; c++) {
        struct tcol x, y;
        assert_int_equal(read_col(a, names[c], &x), rows);
        assert_int_equal(read_col(b, names[c], &y), rows);
        for (int64_t r = 0; r < rows; r++)
            assert_true(same_value(&x, r, &y, r));
        tcol_free(&x);
        tcol_free(&y);
    }
    sl_table_unref(a);
    sl_table_unref(b);
}

static int cmp_i32_desc(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x > y ? -1 : x < y;
}

/* Date32 keys (before and after 1970) partition and merge as their int32 days: the same
 * partitions and row order as an int32 key of the same values; uint64 payloads ride
 * along; columns that are not 4 or 8 bytes (bool, int16) are refused at bind by both,
 * naming the column and its type. */
SL_TEST(operator_date_keys_and_word_columns)
{
    sl_engine_t *e = open_engine(2, 700);
    enum { N = 5000 };
    int32_t keys[N];
    uint64_t s = 7;
    for (int i = 0; i < N; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        keys[i] = (int32_t)(s % 40000) - 20000; /* 1915 .. 2024 */
    }
    for (int hash = 0; hash < 2; hash++) {
        const char *opts = hash ? "key=k bits=6 hash=true" : "key=k bits=6";
        sl_table_t *td = typed_table(SL_TYPE_DATE32, SL_TYPE_UINT64, keys, N);
        sl_table_t *ti = typed_table(SL_TYPE_INT32, SL_TYPE_UINT64, keys, N);
        sl_table_t *rd = run_op(e, &td, 1, "partition", opts, NULL);
        sl_table_t *ri = run_op(e, &ti, 1, "partition", opts, NULL);
        assert_same_columns(rd, ri, (const char *const[]){"partition", "k", "v"}, 3, N);
        sl_table_unref(td);
        sl_table_unref(ti);
    }
    /* merge of two date32 runs: the rows of the int32 merge of the same values. */
    int32_t run[2][N / 2];
    for (int r = 0; r < 2; r++) {
        for (int i = 0; i < N / 2; i++)
            run[r][i] = keys[r * (N / 2) + i];
        qsort(run[r], N / 2, sizeof(int32_t), cmp_i32_desc);
    }
    sl_table_t *md[2], *mi[2];
    for (int r = 0; r < 2; r++) {
        md[r] = typed_table(SL_TYPE_DATE32, SL_TYPE_UINT64, run[r], N / 2);
        mi[r] = typed_table(SL_TYPE_INT32, SL_TYPE_INT64, run[r], N / 2);
    }
    sl_table_t *rd = run_op(e, md, 2, "merge", "by=\"k DESC\"", NULL);
    sl_table_t *ri = run_op(e, mi, 2, "merge", "by=\"k DESC\"", NULL);
    assert_same_columns(rd, ri, (const char *const[]){"k", "v"}, 2, N);
    for (int r = 0; r < 2; r++) {
        sl_table_unref(md[r]);
        sl_table_unref(mi[r]);
    }
    const enum sl_type narrow[2] = {SL_TYPE_BOOL, SL_TYPE_INT16};
    for (int i = 0; i < 2; i++) {
        sl_table_t *t = typed_table(SL_TYPE_INT32, narrow[i], keys, 10);
        sl_plan_t *p;
        SL_ASSERT_OK(sl_plan_create(&p));
        int src, o;
        SL_ASSERT_OK(sl_plan_add_table(p, t, &src));
        assert_int_equal(sl_plan_add(p, "partition", &src, 1, "key=k", &o), SL_ETYPE);
        assert_non_null(strstr(sl_last_errmsg(), "column 'v'"));
        assert_int_equal(sl_plan_add(p, "merge", &src, 1, "by=k", &o), SL_ETYPE);
        assert_non_null(strstr(sl_last_errmsg(), sl_type_name(narrow[i])));
        sl_plan_destroy(p);
        sl_table_unref(t);
    }
    sl_engine_close(e);
    assert_no_leaks();
}
