/* Tests the column types of 0.3: names and parsing, decimal precision and scale, widths,
 * and batches with string and dictionary columns (offsets, bytes, slices, sharing). */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "sl_test.h"

static void assert_no_leaks(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

SL_TEST(type_names_round_trip)
{
    static const char *const names[] = {"int32", "int64", "float32", "float64", "bool",
                                         "int8", "int16", "uint8", "uint16", "uint32",
                                         "uint64", "date32", "timestamp", "utf8",
                                         "large_utf8", "dict", "decimal(15,2)",
                                         "decimal(38,10)", "decimal(1,0)", "decimal(18,18)"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        enum sl_type t = SL_TYPE_INVALID;
        SL_ASSERT_OK(sl_type_parse(names[i], &t));
        assert_string_equal(sl_type_name(t), names[i]);
    }
    enum sl_type t;
    SL_ASSERT_OK(sl_type_parse("string", &t));
    assert_int_equal(t, SL_TYPE_UTF8);
    SL_ASSERT_OK(sl_type_parse("date", &t));
    assert_int_equal(t, SL_TYPE_DATE32);
    SL_ASSERT_OK(sl_type_parse("decimal(12)", &t));
    assert_int_equal(t, sl_type_decimal(12, 0));
    SL_ASSERT_OK(sl_type_parse("decimal(12, 3)", &t));
    assert_int_equal(t, sl_type_decimal(12, 3));
    static const char *const bad[] = {"decimal(39,2)", "decimal(5,6)", "decimal(0,0)",
                                      "decimal(15,2)x", "decimal", "int128", "", "utf"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(sl_type_parse(bad[i], &t), SL_EINVAL);
    assert_int_equal(sl_type_parse(NULL, &t), SL_EINVAL);
}

SL_TEST(decimal_types)
{
    enum sl_type d = sl_type_decimal(15, 2);
    assert_int_equal(SL_TYPE_ID(d), SL_TYPE_DECIMAL);
    assert_int_equal(sl_type_precision(d), 15);
    assert_int_equal(sl_type_scale(d), 2);
    assert_int_equal(sl_type_width(d), 8);
    assert_int_equal(sl_type_width(sl_type_decimal(18, 0)), 8);
    assert_int_equal(sl_type_width(sl_type_decimal(19, 0)), 16);
    assert_int_equal(sl_type_width(sl_type_decimal(38, 38)), 16);
    assert_int_equal(sl_type_decimal(39, 0), SL_TYPE_INVALID);
    assert_int_equal(sl_type_decimal(10, 11), SL_TYPE_INVALID);
    assert_int_equal(sl_type_decimal(10, -1), SL_TYPE_INVALID);
    assert_int_equal(sl_type_precision(SL_TYPE_INT64), 0);
    /* A bare decimal id without precision is not a type; nor are junk upper bits. */
    assert_int_equal(sl_type_width(SL_TYPE_DECIMAL), 0);
    assert_int_equal(sl_type_width((enum sl_type)(SL_TYPE_INT32 | 0x100)), 0);
    assert_string_equal(sl_type_name((enum sl_type)(SL_TYPE_INT32 | 0x100)), "invalid");
    assert_string_equal(sl_type_name((enum sl_type)99), "invalid");
}

SL_TEST(type_widths)
{
    assert_int_equal(sl_type_width(SL_TYPE_BOOL), 1);
    assert_int_equal(sl_type_width(SL_TYPE_INT8), 1);
    assert_int_equal(sl_type_width(SL_TYPE_UINT16), 2);
    assert_int_equal(sl_type_width(SL_TYPE_DATE32), 4);
    assert_int_equal(sl_type_width(SL_TYPE_TIMESTAMP), 8);
    assert_int_equal(sl_type_width(SL_TYPE_UINT64), 8);
    assert_int_equal(sl_type_width(SL_TYPE_DICT), 4);
    assert_int_equal(sl_type_width(SL_TYPE_UTF8), 0);
    assert_int_equal(sl_type_width(SL_TYPE_LARGE_UTF8), 0);
    assert_true(sl_type_is_string(SL_TYPE_UTF8) && sl_type_is_string(SL_TYPE_DICT) &&
                sl_type_is_string(SL_TYPE_LARGE_UTF8) && !sl_type_is_string(SL_TYPE_INT32));
}

/* Fills string column i of b with "", "a", "bb", ... (row r has r % 5 copies of 'a'+r%26). */
static void fill_strings(sl_batch_t *b, int i, int64_t n, int wide)
{
    int64_t total = 0;
    for (int64_t r = 0; r < n; r++)
        total += r % 5;
    char *chars = sl_batch_column_chars(b, i, total);
    assert_non_null(chars);
    void *off = sl_batch_column_data(b, i);
    int64_t at = 0;
    for (int64_t r = 0; r < n; r++) {
        for (int64_t k = 0; k < r % 5; k++)
            chars[at++] = (char)('a' + r % 26);
        if (wide)
            ((int64_t *)off)[r + 1] = at;
        else
            ((int32_t *)off)[r + 1] = (int32_t)at;
    }
}

static void check_string(const struct sl_column *c, const struct sl_strings *s, int64_t row,
                         int64_t want_row)
{
    int64_t lo, hi;
    if (c->type == SL_TYPE_UTF8) {
        lo = ((const int32_t *)c->data)[c->offset + row];
        hi = ((const int32_t *)c->data)[c->offset + row + 1];
    } else {
        lo = ((const int64_t *)c->data)[c->offset + row];
        hi = ((const int64_t *)c->data)[c->offset + row + 1];
    }
    assert_int_equal(hi - lo, want_row % 5);
    for (int64_t k = lo; k < hi; k++)
        assert_int_equal(s->chars[k], 'a' + want_row % 26);
}

SL_TEST(string_columns)
{
    const char *names[] = {"s", "l", "k"};
    enum sl_type types[] = {SL_TYPE_UTF8, SL_TYPE_LARGE_UTF8, SL_TYPE_INT64};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 3, names, types, 100));
    /* Offsets start as all zero: every value the empty string. */
    const int32_t *off0 = sl_batch_column_data(b, 0);
    for (int r = 0; r <= 100; r++)
        assert_int_equal(off0[r], 0);
    fill_strings(b, 0, 100, 0);
    fill_strings(b, 1, 100, 1);
    /* Only string columns have bytes. */
    assert_null(sl_batch_column_chars(b, 2, 10));
    sl_batch_t *s = sl__batch_slice(b, 37, 20);
    assert_non_null(s);
    assert_null(sl_batch_column_chars(s, 0, 4)); /* a slice shares: not writable */
    for (int col = 0; col < 2; col++) {
        struct sl_column c;
        struct sl_strings st;
        SL_ASSERT_OK(sl_batch_column(s, col, &c));
        SL_ASSERT_OK(sl_batch_column_strings(s, col, &st));
        assert_int_equal(c.offset, 37);
        assert_non_null(st.chars);
        assert_null(st.dict_offsets);
        for (int64_t r = 0; r < 20; r++)
            check_string(&c, &st, r, 37 + r);
    }
    struct sl_strings st;
    SL_ASSERT_OK(sl_batch_column_strings(s, 2, &st));
    assert_null(st.chars);
    assert_int_equal(sl_batch_column_strings(s, 3, &st), SL_EINVAL);
    sl_batch_unref(b);
    sl_batch_unref(s);
    assert_no_leaks();
}

SL_TEST(string_chars_resize_keeps_prefix)
{
    const char *names[] = {"s"};
    enum sl_type types[] = {SL_TYPE_UTF8};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 1, names, types, 2));
    char *c = sl_batch_column_chars(b, 0, 3);
    memcpy(c, "abc", 3);
    c = sl_batch_column_chars(b, 0, 1000);
    assert_non_null(c);
    assert_memory_equal(c, "abc", 3);
    assert_null(sl_batch_column_chars(b, 0, -1));
    sl_batch_unref(b);
    assert_no_leaks();
}

SL_TEST(dictionary_columns)
{
    const char *names[] = {"d", "e"};
    enum sl_type types[] = {SL_TYPE_DICT, SL_TYPE_DICT};
    sl_batch_t *b, *b2;
    SL_ASSERT_OK(sl_batch_create(&b, 1, names, types, 6));
    SL_ASSERT_OK(sl_batch_create(&b2, 1, names + 1, types + 1, 3));
    struct sl_strings st;
    SL_ASSERT_OK(sl_batch_column_strings(b, 0, &st));
    assert_int_equal(st.dict_length, 0); /* empty dictionary until set */
    const int32_t offs[] = {0, 5, 11, 11}; /* "apple", "banana", "" */
    SL_ASSERT_OK(sl_batch_column_set_dictionary(b, 0, 3, offs, "applebanana"));
    int32_t *codes = sl_batch_column_data(b, 0);
    for (int r = 0; r < 6; r++)
        codes[r] = r % 3;
    SL_ASSERT_OK(sl_batch_column_strings(b, 0, &st));
    assert_int_equal(st.dict_length, 3);
    assert_int_equal(st.dict_offsets[2] - st.dict_offsets[1], 6);
    assert_memory_equal(st.dict_chars + st.dict_offsets[1], "banana", 6);
    /* Shared: the same dictionary pointer, surviving the first batch. */
    SL_ASSERT_OK(sl_batch_share_dictionary(b2, 0, b, 0));
    struct sl_strings st2;
    SL_ASSERT_OK(sl_batch_column_strings(b2, 0, &st2));
    assert_ptr_equal(st2.dict_offsets, st.dict_offsets);
    sl_batch_unref(b);
    SL_ASSERT_OK(sl_batch_column_strings(b2, 0, &st2));
    assert_memory_equal(st2.dict_chars + st2.dict_offsets[0], "apple", 5);
    /* Bad dictionaries and non-dict targets are refused. */
    const int32_t bad[] = {0, 5, 3};
    assert_int_equal(sl_batch_column_set_dictionary(b2, 0, 2, bad, "apple"), SL_EINVAL);
    const char *n3[] = {"i"};
    enum sl_type t3[] = {SL_TYPE_INT32};
    sl_batch_t *b3;
    SL_ASSERT_OK(sl_batch_create(&b3, 1, n3, t3, 1));
    assert_int_equal(sl_batch_column_set_dictionary(b3, 0, 3, offs, "applebanana"), SL_EINVAL);
    assert_int_equal(sl_batch_share_dictionary(b3, 0, b2, 0), SL_EINVAL);
    sl_batch_unref(b2);
    sl_batch_unref(b3);
    assert_no_leaks();
}

SL_TEST(new_fixed_width_columns)
{
    const char *names[] = {"b", "i8", "u16", "d", "ts", "dec", "wide"};
    enum sl_type types[] = {SL_TYPE_BOOL,   SL_TYPE_INT8,         SL_TYPE_UINT16,
                            SL_TYPE_DATE32, SL_TYPE_TIMESTAMP,    sl_type_decimal(15, 2),
                            sl_type_decimal(38, 4)};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 7, names, types, 33));
    for (int i = 0; i < 7; i++) {
        assert_non_null(sl_batch_column_data(b, i));
        struct sl_column c;
        SL_ASSERT_OK(sl_batch_column(b, i, &c));
        assert_int_equal(c.type, types[i]);
    }
    ((int64_t *)sl_batch_column_data(b, 6))[2 * 32 + 1] = -1; /* the last value's high half */
    sl_batch_unref(b);
    assert_no_leaks();
}

SL_TEST(batch_too_many_rows)
{
    const char *names[] = {"k"};
    enum sl_type types[] = {SL_TYPE_INT64};
    sl_batch_t *b = (sl_batch_t *)1;
    assert_int_equal(sl_batch_create(&b, 1, names, types, (int64_t)1 << 61), SL_ENOMEM);
    assert_null(b);
    assert_no_leaks();
}

/* --- operators/common/values.c --- */
#include "common/values.h"

static sl_batch_t *make_strings(enum sl_type type, const char *const *vals, int n)
{
    const char *names[] = {"s"};
    sl_batch_t *b;
    if (sl_batch_create(&b, 1, names, &type, n) != SL_OK)
        return NULL;
    int64_t total = 0;
    for (int i = 0; i < n; i++)
        total += vals[i] ? (int64_t)strlen(vals[i]) : 0;
    char *chars = sl_batch_column_chars(b, 0, total);
    void *off = sl_batch_column_data(b, 0);
    uint8_t *bits = sl_batch_column_validity(b, 0);
    int64_t at = 0;
    for (int i = 0; i < n; i++) {
        size_t l = vals[i] ? strlen(vals[i]) : 0;
        memcpy(chars + at, vals[i] ? vals[i] : "", l);
        at += (int64_t)l;
        if (type == SL_TYPE_UTF8)
            ((int32_t *)off)[i + 1] = (int32_t)at;
        else
            ((int64_t *)off)[i + 1] = at;
        if (!vals[i])
            bits[i >> 3] &= (uint8_t)~(1u << (i & 7));
    }
    return b;
}

SL_TEST(values_order_and_hash)
{
    const char *v[] = {"b", "ab", "a", "", "abc", "ab"};
    sl_batch_t *u = make_strings(SL_TYPE_UTF8, v, 6), *l = make_strings(SL_TYPE_LARGE_UTF8, v, 6);
    struct sl__colview cu, cl;
    SL_ASSERT_OK(sl__colview_get(u, 0, &cu));
    SL_ASSERT_OK(sl__colview_get(l, 0, &cl));
    /* "" < "a" < "ab" < "abc" < "b", byte order, prefix first */
    assert_int_equal(sl__val_cmp(&cu, 3, &cu, 2), -1);
    assert_int_equal(sl__val_cmp(&cu, 2, &cu, 1), -1);
    assert_int_equal(sl__val_cmp(&cu, 1, &cu, 4), -1);
    assert_int_equal(sl__val_cmp(&cu, 4, &cu, 0), -1);
    assert_int_equal(sl__val_cmp(&cu, 1, &cl, 5), 0); /* utf8 vs large_utf8 */
    assert_true(sl__val_hash(&cu, 1) == sl__val_hash(&cl, 5));
    assert_true(sl__val_hash(&cu, 1) != sl__val_hash(&cu, 4));
    /* floats: NaN largest and equal to itself; -0.0 == 0.0 */
    const char *names[] = {"f"};
    enum sl_type types[] = {SL_TYPE_FLOAT64};
    sl_batch_t *f;
    SL_ASSERT_OK(sl_batch_create(&f, 1, names, types, 4));
    double *d = sl_batch_column_data(f, 0);
    d[0] = NAN;
    d[1] = INFINITY;
    d[2] = -0.0;
    d[3] = 0.0;
    struct sl__colview cf;
    SL_ASSERT_OK(sl__colview_get(f, 0, &cf));
    assert_int_equal(sl__val_cmp(&cf, 0, &cf, 1), 1);
    assert_int_equal(sl__val_cmp(&cf, 0, &cf, 0), 0);
    assert_int_equal(sl__val_cmp(&cf, 2, &cf, 3), 0);
    assert_true(sl__val_hash(&cf, 2) == sl__val_hash(&cf, 3));
    /* int128 decimals: sign in the high half */
    enum sl_type dt[] = {sl_type_decimal(30, 2)};
    sl_batch_t *w;
    SL_ASSERT_OK(sl_batch_create(&w, 1, names, dt, 2));
    int64_t *h = sl_batch_column_data(w, 0);
    h[0] = 5, h[1] = -1; /* a negative value with a large low half */
    h[2] = 0, h[3] = 0;  /* zero */
    struct sl__colview cw;
    SL_ASSERT_OK(sl__colview_get(w, 0, &cw));
    assert_int_equal(sl__val_cmp(&cw, 0, &cw, 1), -1);
    sl_batch_unref(u);
    sl_batch_unref(l);
    sl_batch_unref(f);
    sl_batch_unref(w);
    assert_no_leaks();
}

SL_TEST(values_take_and_concat)
{
    const char *v[] = {"x", NULL, "hello", "", "zz"};
    sl_batch_t *u = make_strings(SL_TYPE_UTF8, v, 5);
    const char *names[] = {"s"};
    enum sl_type types[] = {SL_TYPE_UTF8};
    sl_batch_t *t;
    SL_ASSERT_OK(sl_batch_create(&t, 1, names, types, 4));
    const int64_t idx[] = {2, -1, 1, 4};
    SL_ASSERT_OK(sl__col_take(t, 0, u, 0, idx, 4));
    struct sl__colview ct;
    SL_ASSERT_OK(sl__colview_get(t, 0, &ct));
    int64_t len;
    const char *s = sl__colview_str(&ct, 0, &len);
    assert_int_equal(len, 5);
    assert_memory_equal(s, "hello", 5);
    assert_false(sl__colview_valid(&ct, 1)); /* idx -1 */
    assert_false(sl__colview_valid(&ct, 2)); /* null source row */
    assert_true(sl__colview_valid(&ct, 3));
    s = sl__colview_str(&ct, 3, &len);
    assert_memory_equal(s, "zz", 2);
    /* type mismatch refused */
    enum sl_type it[] = {SL_TYPE_INT32};
    sl_batch_t *ib;
    SL_ASSERT_OK(sl_batch_create(&ib, 1, names, it, 4));
    assert_int_equal(sl__col_take(ib, 0, u, 0, idx, 4), SL_ETYPE);
    /* concat of a slice and a whole batch keeps order, bytes and nulls */
    sl_batch_t *sl = sl__batch_slice(u, 1, 3);
    sl_batch_t *parts[] = {sl, t}, *cat;
    SL_ASSERT_OK(sl__batch_concat(parts, 2, &cat));
    assert_int_equal(sl_batch_num_rows(cat), 7);
    struct sl__colview cc;
    SL_ASSERT_OK(sl__colview_get(cat, 0, &cc));
    assert_false(sl__colview_valid(&cc, 0));
    s = sl__colview_str(&cc, 1, &len);
    assert_memory_equal(s, "hello", 5);
    s = sl__colview_str(&cc, 6, &len);
    assert_int_equal(len, 2);
    assert_memory_equal(s, "zz", 2);
    assert_false(sl__colview_valid(&cc, 4));
    sl_batch_t *bad[] = {u, ib}, *none = NULL;
    assert_int_equal(sl__batch_concat(bad, 2, &none), SL_EINVAL);
    assert_null(none);
    sl_batch_unref(cat);
    sl_batch_unref(sl);
    sl_batch_unref(u);
    sl_batch_unref(t);
    sl_batch_unref(ib);
    assert_no_leaks();
}

/* A DICT batch of n rows with dictionary dict[0..nd) and codes (-1: a null row). */
static sl_batch_t *make_dict(const char *const *dict, int nd, const int32_t *codes, int n)
{
    const char *names[] = {"d"};
    enum sl_type type = SL_TYPE_DICT;
    sl_batch_t *b;
    if (sl_batch_create(&b, 1, names, &type, n) != SL_OK)
        return NULL;
    int32_t offs[8] = {0};
    char chars[64];
    for (int e = 0; e < nd; e++) {
        size_t l = strlen(dict[e]);
        memcpy(chars + offs[e], dict[e], l);
        offs[e + 1] = offs[e] + (int32_t)l;
    }
    int32_t *data = sl_batch_column_data(b, 0);
    uint8_t *bits = sl_batch_column_validity(b, 0);
    for (int i = 0; i < n; i++) {
        data[i] = codes[i] < 0 ? 77 : codes[i]; /* a null row's code may be anything */
        if (codes[i] < 0)
            bits[i >> 3] &= (uint8_t)~(1u << (i & 7));
    }
    if (sl_batch_column_set_dictionary(b, 0, nd, offs, chars) != SL_OK) {
        sl_batch_unref(b);
        return NULL;
    }
    return b;
}

/* Batches with different dictionaries (a table read in parts) get one merged dictionary:
 * each distinct string once, every code mapped to the same string. */
SL_TEST(values_dictionary_union)
{
    const char *d1[] = {"MAIL", "SHIP", "AIR"}, *d2[] = {"AIR", "TRUCK", "", "MAIL"};
    const int32_t c1[] = {0, 1, 2, -1, 1}, c2[] = {3, 2, 1, 0, -1, 2};
    sl_batch_t *a = make_dict(d1, 3, c1, 5), *b = make_dict(d2, 4, c2, 6);
    assert_non_null(a);
    assert_non_null(b);
    sl_batch_t *a2 = sl__batch_slice(a, 2, 3); /* shares a's dictionary */
    sl_batch_t *parts[] = {a, b, a2};
    struct sl__dict_union u;
    SL_ASSERT_OK(sl__dict_union_init(&u, parts, 3, 0));
    assert_int_equal(u.dict->n, 5); /* MAIL SHIP AIR TRUCK "" */
    assert_int_equal(u.src[2].base, u.src[0].base);
    const int32_t *uo = u.dict->offsets->ptr;
    const char *uc = u.dict->chars->ptr;
    for (int k = 0; k < 3; k++) {
        struct sl__colview v;
        SL_ASSERT_OK(sl__colview_get(parts[k], 0, &v));
        for (int64_t r = 0; r < v.c.length; r++) {
            if (!sl__colview_valid(&v, r))
                continue;
            int64_t len;
            const char *s = sl__colview_str(&v, r, &len);
            int32_t code = ((const int32_t *)v.c.data)[v.c.offset + r];
            int32_t m = sl__dict_union_code(&u, k, code);
            assert_int_equal(uo[m + 1] - uo[m], len);
            assert_memory_equal(uc + uo[m], s, (size_t)len);
        }
    }
    assert_int_equal(sl__dict_union_code(&u, 0, 77), 0); /* outside: a null row's code */
    sl__dict_union_fini(&u);
    /* concat goes through the union: strings and nulls kept in order */
    sl_batch_t *cat;
    SL_ASSERT_OK(sl__batch_concat(parts, 3, &cat));
    assert_int_equal(sl_batch_num_rows(cat), 14);
    struct sl__colview cc;
    SL_ASSERT_OK(sl__colview_get(cat, 0, &cc));
    const char *want[] = {"MAIL", "SHIP", "AIR", NULL, "SHIP", "MAIL", "",
                          "TRUCK", "AIR", NULL, "", "AIR", NULL, "SHIP"};
    for (int r = 0; r < 14; r++) {
        assert_int_equal(sl__colview_valid(&cc, r), want[r] != NULL);
        if (!want[r])
            continue;
        int64_t len;
        const char *s = sl__colview_str(&cc, r, &len);
        assert_int_equal(len, (int64_t)strlen(want[r]));
        assert_memory_equal(s, want[r], (size_t)len);
    }
    sl_batch_unref(cat);
    sl_batch_unref(a2);
    sl_batch_unref(a);
    sl_batch_unref(b);
    assert_no_leaks();
}
