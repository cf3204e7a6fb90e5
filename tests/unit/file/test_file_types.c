/* Tests every column type through the file operators: random tables with nulls and
 * extreme values round-trip through write.csv/scan.csv and write.bin/scan.bin (compared
 * value by value as sl_batch_value_format prints them); TPC-H .tbl files (`|`, trailing
 * delimiter, no header) read with a schema of names and types; the text forms of dates,
 * timestamps, decimals and booleans; and malformed values (a bad date, a decimal with
 * too many digits, invalid UTF-8) fail naming file, line and column, with the engine
 * still usable afterwards. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file/file_int.h"
#include "internal.h"
#include "sl_test.h"
#include "value_text.h"

static char g_dir[64], g_path[256], g_msg[1024];

static const char *fpath(const char *name)
{
    snprintf(g_path, sizeof g_path, "%s/%s", g_dir, name);
    return g_path;
}

static void write_text(const char *name, const char *text)
{
    FILE *f = fopen(fpath(name), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    fclose(f);
}

static sl_engine_t *engine(int64_t morsel)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/sl-ftypes-XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = 2;
    cfg.n_gpus = 0;
    cfg.morsel_rows_cpu = morsel;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_engine_open(&e, &cfg));
    return e;
}

static void engine_close(sl_engine_t *e)
{
    sl_engine_close(e);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    assert_int_equal(system(cmd), 0);
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

/* Runs `op opts` on table t (NULL: no input) and returns the result (NULL for a writer).
 * The code is returned; the message is in g_msg. */
static int run(sl_engine_t *e, sl_table_t *t, const char *op, const char *opts, sl_table_t **out)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int in = -1, node;
    if (t)
        SL_ASSERT_OK(sl_plan_add_table(p, t, &in));
    int rc = sl_plan_add(p, op, t ? &in : NULL, t ? 1 : 0, opts, &node);
    g_msg[0] = '\0';
    if (rc != SL_OK) {
        snprintf(g_msg, sizeof g_msg, "%s", sl_plan_errmsg(p));
        sl_plan_destroy(p);
        return rc;
    }
    if (out)
        SL_ASSERT_OK(sl_plan_output(p, node, "r"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    rc = sl_query_run(q);
    if (rc != SL_OK)
        snprintf(g_msg, sizeof g_msg, "%s", sl_query_errmsg(q));
    if (rc == SL_OK && out)
        SL_ASSERT_OK(sl_query_result(q, "r", out));
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return rc;
}

/* ---------------- a table of every type ---------------- */

#define N_COLS 19
static const char *const k_names[N_COLS] = {
    "id", "b", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64", "d", "ts",
    "dec15_2", "dec38_10", "s", "ls", "dict"};

static enum sl_type col_type(int c)
{
    static const enum sl_type fixed[] = {
        SL_TYPE_INT64,  SL_TYPE_BOOL,   SL_TYPE_INT8,    SL_TYPE_INT16,   SL_TYPE_INT32,
        SL_TYPE_INT64,  SL_TYPE_UINT8,  SL_TYPE_UINT16,  SL_TYPE_UINT32,  SL_TYPE_UINT64,
        SL_TYPE_FLOAT32, SL_TYPE_FLOAT64, SL_TYPE_DATE32, SL_TYPE_TIMESTAMP};
    if (c < 14)
        return fixed[c];
    if (c == 14)
        return sl_type_decimal(15, 2);
    if (c == 15)
        return sl_type_decimal(38, 10);
    return c == 16 ? SL_TYPE_UTF8 : c == 17 ? SL_TYPE_LARGE_UTF8 : SL_TYPE_DICT;
}

static uint64_t rng(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ull;
    uint64_t z = *s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static const char *const k_words[] = {"", "a", "with,comma", "with \"quote\"", "two\nlines",
                                      "caf\xc3\xa9", "\xe4\xb8\xad\xe6\x96\x87", "NA",
                                      "  spaced  ", "\xf0\x9f\x98\x80"};
#define N_WORDS 10

/* A random string of 1 to 3 words; never empty, because an empty string reads back as
 * null with the default null text. */
static size_t rand_string(uint64_t *s, char *buf)
{
    size_t n = 0;
    for (int k = 0, m = 1 + (int)(rng(s) % 3); k < m; k++) {
        const char *w = k_words[1 + rng(s) % (N_WORDS - 1)];
        memcpy(buf + n, w, strlen(w));
        n += strlen(w);
    }
    return n;
}

static void fill_fixed(void *data, enum sl_type t, int64_t r, uint64_t *s)
{
    uint64_t x = rng(s);
    bool lo = r == 1, hi = r == 2; /* rows 1 and 2 hold the extremes */
    switch (SL_TYPE_ID(t)) {
    case SL_TYPE_BOOL:
        ((uint8_t *)data)[r] = x & 1;
        break;
    case SL_TYPE_INT8:
        ((int8_t *)data)[r] = lo ? INT8_MIN : hi ? INT8_MAX : (int8_t)x;
        break;
    case SL_TYPE_INT16:
        ((int16_t *)data)[r] = lo ? INT16_MIN : hi ? INT16_MAX : (int16_t)x;
        break;
    case SL_TYPE_INT32:
        ((int32_t *)data)[r] = lo ? INT32_MIN : hi ? INT32_MAX : (int32_t)x;
        break;
    case SL_TYPE_INT64:
        ((int64_t *)data)[r] = lo ? INT64_MIN : hi ? INT64_MAX : (int64_t)x;
        break;
    case SL_TYPE_UINT8:
        ((uint8_t *)data)[r] = hi ? UINT8_MAX : (uint8_t)x;
        break;
    case SL_TYPE_UINT16:
        ((uint16_t *)data)[r] = hi ? UINT16_MAX : (uint16_t)x;
        break;
    case SL_TYPE_UINT32:
        ((uint32_t *)data)[r] = hi ? UINT32_MAX : (uint32_t)x;
        break;
    case SL_TYPE_UINT64:
        ((uint64_t *)data)[r] = hi ? UINT64_MAX : x;
        break;
    case SL_TYPE_FLOAT32:
        ((float *)data)[r] = lo ? -3.4028235e38f : (float)((int64_t)x >> 20) / 7.0f;
        break;
    case SL_TYPE_FLOAT64:
        ((double *)data)[r] = hi ? 1.7976931348623157e308 : (double)(int64_t)x / 3.0;
        break;
    case SL_TYPE_DATE32: /* 0001-01-01 .. 9999-12-31 */
        ((int32_t *)data)[r] = lo ? -719162 : hi ? 2932896 : (int32_t)(x % 3652059) - 719162;
        break;
    case SL_TYPE_TIMESTAMP:
        ((int64_t *)data)[r] = (int64_t)(x % 400000000000000000ull) - 200000000000000000ll;
        break;
    default: /* decimals */
        if (sl_type_width(t) == 8) {
            int64_t m = 999999999999999;
            ((int64_t *)data)[r] = lo ? -m : hi ? m : (int64_t)(x % (2 * (uint64_t)m)) - m;
        } else {
            __int128 m = (__int128)10000000000000000000ull * 10000000000000000000ull - 1;
            __int128 v = lo ? -m : hi ? m : ((__int128)(int64_t)x * (int64_t)rng(s));
            memcpy((char *)data + 16 * r, &v, 16);
        }
    }
}

/* Column c of a batch of n rows, about a fifth of its rows null (never in column 0,
 * the row's id: id0 + its row). */
static void fill_column(sl_batch_t *b, int c, int64_t n, int64_t id0, uint64_t *s)
{
    enum sl_type t = col_type(c);
    void *data = sl_batch_column_data(b, c);
    if (c == 0) {
        for (int64_t r = 0; r < n; r++)
            ((int64_t *)data)[r] = id0 + r;
        return;
    }
    uint8_t *valid = sl_batch_column_validity(b, c);
    char *chars = NULL;
    int64_t used = 0;
    if (t == SL_TYPE_UTF8 || t == SL_TYPE_LARGE_UTF8)
        chars = sl_batch_column_chars(b, c, n * 40 + 1);
    for (int64_t r = 0; r < n; r++) {
        bool null = r > 2 && rng(s) % 5 == 0;
        if (null)
            valid[r >> 3] &= (uint8_t)~(1u << (r & 7));
        if (t == SL_TYPE_DICT) {
            ((int32_t *)data)[r] = 1 + (int32_t)(rng(s) % (N_WORDS - 1));
        } else if (chars) {
            used += null ? 0 : (int64_t)rand_string(s, chars + used);
            if (t == SL_TYPE_UTF8)
                ((int32_t *)data)[r + 1] = (int32_t)used;
            else
                ((int64_t *)data)[r + 1] = used;
        } else {
            fill_fixed(data, t, r, s);
        }
    }
    if (t == SL_TYPE_DICT) {
        int32_t off[N_WORDS + 1] = {0};
        char all[256];
        for (int k = 0; k < N_WORDS; k++) {
            memcpy(all + off[k], k_words[k], strlen(k_words[k]));
            off[k + 1] = off[k] + (int32_t)strlen(k_words[k]);
        }
        SL_ASSERT_OK(sl_batch_column_set_dictionary(b, c, N_WORDS, off, all));
    }
}

/* A table of `rows` rows in `n_batches` batches, each with its own dictionary. */
static sl_table_t *typed_table_in(int64_t rows, int n_batches, uint64_t seed)
{
    enum sl_type types[N_COLS];
    for (int c = 0; c < N_COLS; c++)
        types[c] = col_type(c);
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    for (int k = 0; k < n_batches; k++) {
        int64_t lo = rows * k / n_batches, n = rows * (k + 1) / n_batches - lo;
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, N_COLS, k_names, types, n));
        for (int c = 0; c < N_COLS; c++)
            fill_column(b, c, n, lo, &seed);
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
    }
    return t;
}

static sl_table_t *typed_table(int64_t rows, uint64_t seed)
{
    return typed_table_in(rows, 1, seed);
}

/* The columns= text declaring the typed table's columns ("id:int64, b:bool, ..."). */
static void columns_decl(char *buf, size_t len)
{
    size_t k = 0;
    for (int c = 0; c < N_COLS; c++)
        k += (size_t)snprintf(buf + k, len - k, "%s%s:%s", c ? ", " : "", k_names[c],
                              sl_type_name(col_type(c)));
}

/* Value (row, col) of a table, as text, found by the id column; "\x01" for null. */
static char *cell(sl_table_t *t, int64_t id, int c)
{
    static char buf[512];
    for (int64_t bi = 0; bi < sl_table_num_batches(t); bi++) {
        sl_batch_t *b = sl_table_batch(t, bi);
        struct sl_column idc;
        SL_ASSERT_OK(sl_batch_column(b, 0, &idc));
        for (int64_t r = 0; r < sl_batch_num_rows(b); r++) {
            if (((const int64_t *)idc.data)[idc.offset + r] != id)
                continue;
            int null = 0;
            assert_true(sl_batch_value_format(b, c, r, buf, sizeof buf, &null) >= 0);
            return null ? "\x01" : buf;
        }
    }
    fail_msg("row %lld not found", (long long)id);
    return NULL;
}

static void expect_same_tables(sl_table_t *want, sl_table_t *got, int64_t rows)
{
    assert_int_equal(sl_table_num_rows(got), rows);
    for (int64_t r = 0; r < rows; r++) {
        for (int c = 0; c < N_COLS; c++) {
            char w[512];
            snprintf(w, sizeof w, "%s", cell(want, r, c));
            const char *g = cell(got, r, c);
            if (strcmp(w, g) != 0)
                fail_msg("row %lld column %s: want \"%s\", got \"%s\"", (long long)r,
                         k_names[c], w, g);
        }
    }
}

SL_TEST(csv_every_type_round_trip)
{
    sl_engine_t *e = engine(37);
    char cols[1024], opts[2048];
    columns_decl(cols, sizeof cols);
    int64_t sizes[] = {0, 1, 3, 500};
    for (int k = 0; k < 4; k++) {
        sl_table_t *t = typed_table(sizes[k], 7 + (uint64_t)k);
        for (int tbl = 0; tbl < 2; tbl++) {
            const char *w = tbl ? "header=false delimiter=| null=NULL" : "";
            const char *rd = tbl ? "header=false delimiter=| null=NULL range_bytes=97" : "";
            snprintf(opts, sizeof opts, "path=\"%s\" %s", fpath("t.csv"), w);
            SL_ASSERT_OK(run(e, t, "write.csv", opts, NULL));
            snprintf(opts, sizeof opts, "path=\"%s\" columns=\"%s\" %s", fpath("t.csv"), cols,
                     rd);
            sl_table_t *r;
            if (run(e, NULL, "scan.csv", opts, &r) != SL_OK)
                fail_msg("%s", g_msg);
            expect_same_tables(t, r, sizes[k]);
            sl_table_unref(r);
        }
        sl_table_unref(t);
    }
    engine_close(e);
}

SL_TEST(tbl_files_with_a_schema)
{
    sl_engine_t *e = engine(2);
    write_text("lineitem.tbl",
               "1|155190|1996-03-13|21168.23|0.04|N|1996-02-12 10:30:00|true|egular courts|\n"
               "2|67310|1997-01-28|-45983.16|0.00|R|1997-01-28 00:00:00.5|0|ly final \"x\"|\n"
               "3|4297|1994-02-02|0.10|1|A|1994-02-02|t||\n");
    char opts[1024];
    snprintf(opts, sizeof opts, "path=\"%s\" header=false delimiter=| trailing_delimiter=true "
             "quote=\"\" columns=\"k:int64, p:int32, d:date32, price:decimal(15,2), disc:decimal(15,2), "
             "flag:dict, ts:timestamp, b:bool, c:utf8\"", fpath("lineitem.tbl"));
    sl_table_t *r;
    if (run(e, NULL, "scan.csv", opts, &r) != SL_OK)
        fail_msg("%s", g_msg);
    static const char *const want[3][9] = {
        {"1", "155190", "1996-03-13", "21168.23", "0.04", "N", "1996-02-12 10:30:00", "true",
         "egular courts"},
        {"2", "67310", "1997-01-28", "-45983.16", "0.00", "R", "1997-01-28 00:00:00.500000",
         "false", "ly final \"x\""},
        {"3", "4297", "1994-02-02", "0.10", "1.00", "A", "1994-02-02 00:00:00", "true", "\x01"},
    };
    for (int64_t row = 0; row < 3; row++)
        for (int c = 0; c < 9; c++)
            assert_string_equal(cell(r, row + 1, c) + 0, want[row][c]);
    sl_table_unref(r);
    /* Without the trailing delimiter the same file has one field too many. */
    snprintf(opts, sizeof opts, "path=\"%s\" header=false delimiter=| quote=\"\" columns=\"k int64, "
             "p int32, d date32, price decimal(15,2), disc decimal(15,2), flag dict, "
             "ts timestamp, b bool, c utf8\"", fpath("lineitem.tbl"));
    assert_int_equal(run(e, NULL, "scan.csv", opts, &r), SL_EPARSE);
    assert_non_null(strstr(g_msg, "too many fields"));
    engine_close(e);
}

/* The table's rows must be found by id = row number: cell() looks rows up by column 0. */
static void expect_error(sl_engine_t *e, const char *text, const char *cols, int code,
                         const char *m1, const char *m2)
{
    write_text("bad.csv", text);
    for (int k = 0; k < 2; k++) {
        char opts[1024];
        snprintf(opts, sizeof opts, "path=\"%s\" header=false columns=\"%s\" range_bytes=%d",
                 fpath("bad.csv"), cols, k ? 5 : 1 << 20);
        sl_table_t *r;
        int rc = run(e, NULL, "scan.csv", opts, &r);
        if (rc != code || !strstr(g_msg, m1) || !strstr(g_msg, m2) || !strstr(g_msg, "bad.csv"))
            fail_msg("got %s \"%s\", want %s with \"%s\" and \"%s\"", sl_err_name(rc), g_msg,
                     sl_err_name(code), m1, m2);
    }
    /* The engine still runs a good query. */
    write_text("good.csv", "1,2024-02-29\n");
    char opts[512];
    snprintf(opts, sizeof opts, "path=\"%s\" header=false columns=\"id int64, d date32\"",
             fpath("good.csv"));
    sl_table_t *r;
    SL_ASSERT_OK(run(e, NULL, "scan.csv", opts, &r));
    assert_string_equal(cell(r, 1, 1), "2024-02-29");
    sl_table_unref(r);
}

SL_TEST(csv_malformed_values_name_file_line_and_column)
{
    sl_engine_t *e = engine(3);
    const char *dc = "id int64, d date32";
    expect_error(e, "0,1998-01-01\n1,1998-13-40\n", dc, SL_EOVERFLOW, "line 2, column 3",
                 "1998-13-40");
    expect_error(e, "0,1999-02-29\n", dc, SL_EOVERFLOW, "line 1, column 3", "date32");
    expect_error(e, "0,98-01-01\n", dc, SL_EPARSE, "line 1, column 3", "cannot parse");
    const char *dec = "id int64, p decimal(5,2)";
    expect_error(e, "0,123.45\n1,1234.5\n", dec, SL_EOVERFLOW, "line 2, column 3",
                 "integer digits");
    expect_error(e, "0,1.234\n", dec, SL_EOVERFLOW, "line 1, column 3", "fractional digits");
    expect_error(e, "0,1e3\n", dec, SL_EPARSE, "line 1, column 3", "decimal(5,2)");
    expect_error(e, "0,ok\n1,b\xff" "d\n", "id int64, s utf8", SL_EPARSE, "line 2, column 3",
                 "invalid UTF-8");
    expect_error(e, "0,\xc0\xaf\n", "id int64, s dict", SL_EPARSE, "line 1, column 3",
                 "UTF-8");
    expect_error(e, "0,yes\n", "id int64, b bool", SL_EPARSE, "line 1, column 3", "bool");
    expect_error(e, "0,300\n", "id int64, b uint8", SL_EOVERFLOW, "line 1, column 3", "uint8");
    expect_error(e, "0,-1\n", "id int64, b uint64", SL_EPARSE, "line 1, column 3", "uint64");
    expect_error(e, "0,2020-01-01 24:00:00\n", "id int64, t timestamp", SL_EOVERFLOW,
                 "line 1, column 3", "timestamp");
    expect_error(e, "0,1|\n", "id int64, t int32", SL_EPARSE, "line 1", "int32");
    engine_close(e);
}

SL_TEST(text_forms_of_values)
{
    int32_t d;
    int64_t us;
    __int128 v;
    uint8_t b;
    char buf[64];
    assert_int_equal(sl__date_parse("1970-01-01", 10, &d), 0);
    assert_int_equal(d, 0);
    assert_int_equal(sl__date_parse("2000-03-01", 10, &d), 0);
    assert_int_equal(d, 11017);
    sl__date_format(-719162, buf);
    assert_string_equal(buf, "0001-01-01");
    sl__date_format(2932896, buf);
    assert_string_equal(buf, "9999-12-31");
    assert_int_equal(sl__date_parse("2000-02-30", 10, &d), SL__TEXT_RANGE);
    assert_int_equal(sl__timestamp_parse("1969-12-31 23:59:59.999999", 26, &us), 0);
    assert_true(us == -1);
    sl__timestamp_format(-1, buf);
    assert_string_equal(buf, "1969-12-31 23:59:59.999999");
    assert_int_equal(sl__timestamp_parse("2020-01-01 00:00:00.1234567", 27, &us),
                     SL__TEXT_SYNTAX);
    /* Decimals: exact at 38 digits, signs, no leading digit, trailing zeros past the scale. */
    const char *big = "-9999999999999999999999999999.9999999999";
    assert_int_equal(sl__decimal_parse(big, strlen(big), 38, 10, &v), 0);
    sl__decimal_format(v, 10, buf);
    assert_string_equal(buf, big);
    assert_int_equal(sl__decimal_parse(".5", 2, 15, 2, &v), 0);
    assert_true(v == 50);
    assert_int_equal(sl__decimal_parse("-0.50000", 8, 15, 2, &v), 0);
    assert_true(v == -50);
    sl__decimal_format(-5, 2, buf);
    assert_string_equal(buf, "-0.05");
    assert_int_equal(sl__decimal_parse("0.001", 5, 15, 2, &v), SL__TEXT_FRAC_DIGITS);
    assert_int_equal(sl__decimal_parse("-", 1, 15, 2, &v), SL__TEXT_SYNTAX);
    assert_int_equal(sl__decimal_parse("1.", 2, 15, 2, &v), 0);
    assert_int_equal(sl__bool_parse("TRUE", 4, &b), 0);
    assert_int_equal(b, 1);
    size_t bad = 0;
    assert_false(sl__utf8_valid("ab\xed\xa0\x80", 5, &bad)); /* a surrogate */
    assert_int_equal(bad, 2);
    assert_false(sl__utf8_valid("\xf4\x90\x80\x80", 4, &bad)); /* past U+10FFFF */
    assert_true(sl__utf8_valid("12345678\xf0\x9f\x98\x80", 12, &bad));
}

/* ---------------- the binary format ---------------- */

SL_TEST(bin_every_type_round_trip)
{
    sl_engine_t *e = engine(41);
    char opts[512];
    int64_t sizes[] = {0, 1, 3, 700};
    for (int k = 0; k < 4; k++) {
        /* Three batches with their own dictionaries: write.bin merges them into one. */
        sl_table_t *t = typed_table_in(sizes[k], k == 3 ? 3 : 1, 11 + (uint64_t)k);
        snprintf(opts, sizeof opts, "path=\"%s\"", fpath("t.slcf"));
        if (run(e, t, "write.bin", opts, NULL) != SL_OK)
            fail_msg("%s", g_msg);
        sl_table_t *r;
        if (run(e, NULL, "scan.bin", opts, &r) != SL_OK)
            fail_msg("%s", g_msg);
        expect_same_tables(t, r, sizes[k]);
        /* One dictionary per file, shared by every batch read from it. */
        struct sl_strings s0, s1;
        if (sl_table_num_batches(r) > 1) {
            SL_ASSERT_OK(sl_batch_column_strings(sl_table_batch(r, 0), N_COLS - 1, &s0));
            SL_ASSERT_OK(sl_batch_column_strings(sl_table_batch(r, 1), N_COLS - 1, &s1));
            assert_ptr_equal(s0.dict_offsets, s1.dict_offsets);
            assert_int_equal(s0.dict_length, N_WORDS);
        }
        /* And back out again from what was read (zero-copy batches over the mapping). */
        snprintf(opts, sizeof opts, "path=\"%s\"", fpath("t2.slcf"));
        sl_table_t *r2;
        if (sl_table_num_batches(r) > 0) {
            SL_ASSERT_OK(run(e, r, "write.bin", opts, NULL));
            SL_ASSERT_OK(run(e, NULL, "scan.bin", opts, &r2));
            expect_same_tables(t, r2, sizes[k]);
            sl_table_unref(r2);
        }
        sl_table_unref(r);
        sl_table_unref(t);
    }
    engine_close(e);
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

SL_TEST(bin_reads_version_1)
{
    /* A version-1 file made by hand: one int64 column "x" of 3 rows, no nulls. */
    static uint8_t f[192];
    memset(f, 0, sizeof f);
    memcpy(f, "SLCF", 4);
    f[4] = 1;     /* version */
    f[8] = 1;     /* n_cols */
    f[12] = 105;  /* header bytes: 40 + 64 + 1 */
    f[16] = 3;    /* n_rows */
    put_u64(f + 24, sizeof f);
    uint8_t *e = f + 40;
    e[0] = SL_TYPE_INT64;
    e[4] = 1;
    put_u64(e + 16, 128);
    put_u64(e + 24, 24);
    put_u64(e + 32, 192);
    int64_t vals[3] = {7, -1, INT64_MAX};
    memcpy(f + 128, vals, 24);
    put_u64(e + 48, sl__xxh64(vals, 24));
    put_u64(e + 56, sl__xxh64(NULL, 0));
    f[104] = 'x';
    put_u64(f + 32, sl__xxh64(f, 105));
    sl_engine_t *e2 = engine(2);
    FILE *fp = fopen(fpath("v1.slcf"), "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(f, 1, sizeof f, fp), sizeof f);
    fclose(fp);
    char opts[512];
    snprintf(opts, sizeof opts, "path=\"%s\"", fpath("v1.slcf"));
    sl_table_t *r;
    if (run(e2, NULL, "scan.bin", opts, &r) != SL_OK)
        fail_msg("%s", g_msg);
    assert_int_equal(sl_table_num_rows(r), 3);
    char buf[32];
    int64_t row = 0;
    for (int64_t bi = 0; bi < sl_table_num_batches(r); bi++) {
        sl_batch_t *b = sl_table_batch(r, bi);
        for (int64_t i = 0; i < sl_batch_num_rows(b); i++, row++) {
            sl_batch_value_format(b, 0, i, buf, sizeof buf, NULL);
            assert_int_equal(strtoll(buf, NULL, 10), vals[row]);
        }
    }
    sl_table_unref(r);
    engine_close(e2);
}

/* The file's bytes, changed by `patch`, written back; then scan.bin (verify=false, so
 * the value checks, not the checksums, find the damage) must fail naming `what`. */
static void expect_corrupt(sl_engine_t *e, const uint8_t *good, size_t n, int col,
                           int section, uint64_t at, uint8_t byte, const char *what)
{
    uint8_t *m = malloc(n);
    assert_non_null(m);
    memcpy(m, good, n);
    const uint8_t *entry = m + SL__SLCF_FIXED_BYTES + (size_t)col * SL__SLCF_ENTRY_BYTES;
    uint64_t off = sl__get_u64(entry + (section == 2 ? 64 : 16));
    m[off + at] = byte;
    FILE *fp = fopen(fpath("bad.slcf"), "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(m, 1, n, fp), n);
    fclose(fp);
    free(m);
    char opts[512];
    snprintf(opts, sizeof opts, "path=\"%s\" verify=false", fpath("bad.slcf"));
    sl_table_t *r;
    int rc = run(e, NULL, "scan.bin", opts, &r);
    if (rc != SL_EFORMAT || !strstr(g_msg, what) || !strstr(g_msg, k_names[col]))
        fail_msg("got %s \"%s\", want SL_EFORMAT naming '%s' and \"%s\"", sl_err_name(rc),
                 g_msg, k_names[col], what);
    snprintf(opts, sizeof opts, "path=\"%s\" verify=true", fpath("bad.slcf"));
    assert_int_equal(run(e, NULL, "scan.bin", opts, &r), SL_EFORMAT);
    assert_non_null(strstr(g_msg, "checksum mismatch"));
}

SL_TEST(bin_corrupt_values_are_refused)
{
    sl_engine_t *e = engine(50);
    sl_table_t *t = typed_table(64, 5);
    char opts[512];
    snprintf(opts, sizeof opts, "path=\"%s\"", fpath("t.slcf"));
    SL_ASSERT_OK(run(e, t, "write.bin", opts, NULL));
    FILE *fp = fopen(fpath("t.slcf"), "rb");
    assert_non_null(fp);
    static uint8_t good[1 << 16];
    size_t n = fread(good, 1, sizeof good, fp);
    fclose(fp);
    assert_true(n > 0 && n < sizeof good);
    /* utf8 column 16: the offset of row 5 made huge; a byte of the data made invalid. */
    expect_corrupt(e, good, n, 16, 0, 4 * 6 + 3, 0x7f, "string offset");
    expect_corrupt(e, good, n, 16, 2, 0, 0xff, "UTF-8");
    /* large_utf8 column 17 and the dictionary of column 18. */
    expect_corrupt(e, good, n, 17, 0, 8 * 64, 0x01, "string offset");
    expect_corrupt(e, good, n, 18, 2, 4 * (N_WORDS + 1) + 2, 0xc0, "dictionary string");
    /* A code of row 0 (never null) past the dictionary; a bool of 2; a decimal(15,2) of
     * 16 digits. */
    expect_corrupt(e, good, n, 18, 0, 0, 0x7f, "dictionary code");
    expect_corrupt(e, good, n, 1, 0, 0, 2, "bool");
    expect_corrupt(e, good, n, 14, 0, 6, 0x7f, "digits");
    /* The good file still reads. */
    sl_table_t *r;
    SL_ASSERT_OK(run(e, NULL, "scan.bin", opts, &r));
    expect_same_tables(t, r, 64);
    sl_table_unref(r);
    sl_table_unref(t);
    engine_close(e);
}
