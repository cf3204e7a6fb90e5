/* Tests the file operators: write.bin -> scan.bin and write.csv -> scan.csv round trips
 * on random tables (all four types, nulls, empty, one row, many batches, 1 and 2
 * threads, small morsels), projections, CSV quoting rules, parallel CSV parsing with
 * tiny ranges against one range, the XXH64 checksum against reference values, and
 * every error case (code and message: file, line, column), each followed by a good
 * query on the same engine. Files live in a temporary directory under /tmp that each
 * case removes. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../../operators/file/file_int.h"
#include "internal.h"
#include "sl_test.h"

static char g_dir[64];

static void dir_create(void)
{
    strcpy(g_dir, "/tmp/sluice-file-XXXXXX");
    assert_non_null(mkdtemp(g_dir));
}

static void dir_remove(void)
{
    DIR *d = opendir(g_dir);
    assert_non_null(d);
    struct dirent *e;
    char p[512];
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    assert_int_equal(rmdir(g_dir), 0);
}

/* Asserts the directory holds exactly n files (no temporary files left behind). */
static void dir_expect_files(int n)
{
    DIR *d = opendir(g_dir);
    int k = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        k += e->d_name[0] != '.';
    closedir(d);
    assert_int_equal(k, n);
}

static const char *fpath(const char *name)
{
    static char p[4][256];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof p[i], "%s/%s", g_dir, name);
    return p[i];
}

static void write_text(const char *name, const char *text, size_t len)
{
    FILE *f = fopen(fpath(name), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
}

static void assert_no_leaks(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

static sl_engine_t *open_engine(int threads, int64_t morsel)
{
    return sl_test_cpu_engine(threads, morsel);
}

/* ---------------- random tables ---------------- */

static uint64_t rng_next(uint64_t *s)
{
    *s += 0x9E3779B97F4A7C15ull;
    uint64_t z = *s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static const char *const k_names[] = {"id", "a", "b", "c", "d"};
static const enum sl_type k_types[] = {SL_TYPE_INT64, SL_TYPE_INT32, SL_TYPE_INT64,
                                       SL_TYPE_FLOAT32, SL_TYPE_FLOAT64};
#define K_COLS 5
#define K_SCHEMA "id int64, a int32, b int64, c float32, d float64"

/* A table of `rows` rows in batches of at most `batch` rows: id = row number (never
 * null), the others random (extremes included) with about 1 in 5 nulls. */
static sl_table_t *make_table(int64_t rows, int64_t batch, uint64_t seed)
{
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    int64_t done = 0;
    do {
        int64_t n = rows - done < batch ? rows - done : batch;
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, K_COLS, k_names, k_types, n));
        int64_t *id = sl_batch_column_data(b, 0);
        int32_t *a = sl_batch_column_data(b, 1);
        int64_t *bb = sl_batch_column_data(b, 2);
        float *c = sl_batch_column_data(b, 3);
        double *d = sl_batch_column_data(b, 4);
        uint8_t *valid[K_COLS] = {NULL};
        for (int k = 1; k < K_COLS; k++)
            valid[k] = n ? sl_batch_column_validity(b, k) : NULL;
        for (int64_t i = 0; i < n; i++) {
            uint64_t r = rng_next(&seed);
            id[i] = done + i;
            a[i] = (int32_t)r;
            bb[i] = (int64_t)rng_next(&seed);
            if (i % 97 == 3)
                a[i] = i % 2 ? INT32_MIN : INT32_MAX;
            if (i % 89 == 5)
                bb[i] = i % 2 ? INT64_MIN : INT64_MAX;
            c[i] = (float)((double)(int64_t)rng_next(&seed) / 3e7);
            d[i] = (double)(int64_t)rng_next(&seed) / 7e11;
            if (i % 101 == 7)
                d[i] = i % 2 ? 1e-310 : -1.7976931348623157e308;
            if (i % 103 == 9)
                c[i] = i % 2 ? 3.4028235e38f : 1e-40f;
            for (int k = 1; k < K_COLS; k++) {
                if (rng_next(&seed) % 5 == 0)
                    valid[k][i >> 3] &= (uint8_t) ~(1u << (i & 7));
            }
        }
        for (int k = 1; k < K_COLS; k++)
            b->cols[k].null_count = -1;
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
        done += n;
    } while (done < rows);
    return t;
}

/* A table flattened into rows ordered by its id column (column 0, int64). */
struct flat {
    int64_t n;
    int n_cols;
    enum sl_type types[K_COLS];
    uint64_t *vals[K_COLS]; /* values widened to 8 bytes (bits kept) */
    uint8_t *valid[K_COLS];
};

static uint64_t widen(const struct sl_column *c, int64_t i)
{
    int64_t r = c->offset + i;
    switch (c->type) {
    case SL_TYPE_INT32: return (uint64_t)(int64_t)((const int32_t *)c->data)[r];
    case SL_TYPE_FLOAT32: {
        uint32_t u;
        memcpy(&u, (const float *)c->data + r, 4);
        return u;
    }
    default: return ((const uint64_t *)c->data)[r];
    }
}

/* Flattens; `id_col` is the column holding the row number (-1: keep table order). */
static void flatten(sl_table_t *t, int id_col, struct flat *f)
{
    memset(f, 0, sizeof *f);
    f->n = sl_table_num_rows(t);
    if (sl_table_num_batches(t) == 0)
        return;
    f->n_cols = sl_batch_num_columns(sl_table_batch(t, 0));
    for (int k = 0; k < f->n_cols; k++) {
        f->vals[k] = calloc((size_t)f->n + 1, 8);
        f->valid[k] = calloc((size_t)f->n + 1, 1);
    }
    int64_t pos = 0;
    for (int64_t bi = 0; bi < sl_table_num_batches(t); bi++) {
        sl_batch_t *b = sl_table_batch(t, bi);
        struct sl_column idc;
        if (id_col >= 0)
            SL_ASSERT_OK(sl_batch_column(b, id_col, &idc));
        for (int64_t i = 0; i < sl_batch_num_rows(b); i++, pos++) {
            int64_t row = id_col >= 0 ? (int64_t)widen(&idc, i) : pos;
            assert_true(row >= 0 && row < f->n);
            for (int k = 0; k < f->n_cols; k++) {
                struct sl_column c;
                SL_ASSERT_OK(sl_batch_column(b, k, &c));
                f->types[k] = c.type;
                int64_t r = c.offset + i;
                int ok = !c.validity || ((c.validity[r >> 3] >> (r & 7)) & 1);
                assert_int_equal(f->valid[k][row], 0); /* each id once */
                f->valid[k][row] = (uint8_t)(ok ? 1 : 2);
                f->vals[k][row] = ok ? widen(&c, i) : 0;
            }
        }
    }
}

static void flat_free(struct flat *f)
{
    for (int k = 0; k < f->n_cols; k++) {
        free(f->vals[k]);
        free(f->valid[k]);
    }
}

/* got's column k must equal ref's column map[k] (map NULL: the same column). */
static void flat_expect_equal(const struct flat *ref, const struct flat *got, const int *map,
                              int n_cols)
{
    assert_int_equal(got->n, ref->n);
    if (got->n == 0)
        return;
    assert_int_equal(got->n_cols, n_cols);
    for (int k = 0; k < n_cols; k++) {
        int rk = map ? map[k] : k;
        assert_int_equal(got->types[k], ref->types[rk]);
        for (int64_t i = 0; i < ref->n; i++) {
            if (got->valid[k][i] != ref->valid[rk][i] ||
                (ref->valid[rk][i] == 1 && got->vals[k][i] != ref->vals[rk][i]))
                fail_msg("column %d row %lld: got %s %llx, want %s %llx", k, (long long)i,
                         got->valid[k][i] == 1 ? "value" : "null",
                         (unsigned long long)got->vals[k][i],
                         ref->valid[rk][i] == 1 ? "value" : "null",
                         (unsigned long long)ref->vals[rk][i]);
        }
    }
}

/* ---------------- running plans ---------------- */

static char g_msg[1024];

/* table -> op(opts). Returns the query's code; the message is in g_msg. */
static int run_write(sl_engine_t *e, sl_table_t *t, const char *op, const char *opts)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int src, w;
    SL_ASSERT_OK(sl_plan_add_table(p, t, &src));
    int in[] = {src};
    SL_ASSERT_OK(sl_plan_add(p, op, in, 1, opts, &w));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    int rc = sl_query_run(q);
    snprintf(g_msg, sizeof g_msg, "%s", rc ? sl_query_errmsg(q) : "");
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return rc;
}

/* op(opts) -> result. Returns the code of sl_plan_add or of the query (*out set on
 * success); the message is in g_msg. */
static int run_scan(sl_engine_t *e, const char *op, const char *opts, sl_table_t **out)
{
    *out = NULL;
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int s;
    int rc = sl_plan_add(p, op, NULL, 0, opts, &s);
    if (rc != SL_OK) {
        snprintf(g_msg, sizeof g_msg, "%s", sl_plan_errmsg(p));
        sl_plan_destroy(p);
        return rc;
    }
    SL_ASSERT_OK(sl_plan_output(p, s, "r"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    rc = sl_query_run(q);
    snprintf(g_msg, sizeof g_msg, "%s", rc ? sl_query_errmsg(q) : "");
    if (rc == SL_OK)
        SL_ASSERT_OK(sl_query_result(q, "r", out));
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return rc;
}

static void expect_msg(const char *a, const char *b, const char *c)
{
    const char *parts[] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        if (parts[i] && !strstr(g_msg, parts[i]))
            fail_msg("message \"%s\" lacks \"%s\"", g_msg, parts[i]);
    }
}

/* A good query after an error: a small CSV file read back. */
static void expect_engine_usable(sl_engine_t *e)
{
    write_text("good.csv", "x\n1\n2\n3\n", 8);
    char opts[512];
    snprintf(opts, sizeof opts, "path=\"%s\" columns=\"x int32\"", fpath("good.csv"));
    sl_table_t *t;
    SL_ASSERT_OK(run_scan(e, "scan.csv", opts, &t));
    assert_int_equal(sl_table_num_rows(t), 3);
    sl_table_unref(t);
    unlink(fpath("good.csv"));
}

/* ---------------- checksum ---------------- */

SL_TEST(xxh64_reference_values)
{
    assert_true(sl__xxh64("", 0) == 0xef46db3751d8e999ull);
    assert_true(sl__xxh64("a", 1) == 0xd24ec4f1a98c6e5bull);
    assert_true(sl__xxh64("abc", 3) == 0x44bc2cf5ad770999ull);
    uint8_t buf[1000];
    for (int i = 0; i < 1000; i++)
        buf[i] = (uint8_t)(i * 7);
    for (int i = 0; i < 100; i++)
        buf[i] = (uint8_t)i;
    assert_true(sl__xxh64(buf, 100) == 0x6ac1e58032166597ull);
    for (int i = 0; i < 1000; i++)
        buf[i] = (uint8_t)(i * 7 % 256);
    uint64_t want = 0x25275608a9cfc168ull;
    assert_true(sl__xxh64(buf, 1000) == want);
    /* Streaming in any split gives the same hash. */
    uint64_t seed = 1;
    for (int trial = 0; trial < 200; trial++) {
        struct sl__xxh64 s;
        sl__xxh64_init(&s);
        size_t off = 0;
        while (off < 1000) {
            size_t k = rng_next(&seed) % 70;
            if (k > 1000 - off)
                k = 1000 - off;
            sl__xxh64_update(&s, buf + off, k);
            off += k;
        }
        assert_true(sl__xxh64_final(&s) == want);
    }
}

/* ---------------- binary round trips ---------------- */

static void bin_round_trip(sl_engine_t *e, int64_t rows, int64_t batch, uint64_t seed)
{
    sl_table_t *t = make_table(rows, batch, seed);
    char opts[512];
    snprintf(opts, sizeof opts, "path=\"%s\"", fpath("t.slcf"));
    SL_ASSERT_OK(run_write(e, t, "write.bin", opts));
    dir_expect_files(1);
    sl_table_t *r;
    SL_ASSERT_OK(run_scan(e, "scan.bin", opts, &r));
    struct flat fr, fg;
    flatten(t, 0, &fr);
    flatten(r, 0, &fg);
    flat_expect_equal(&fr, &fg, NULL, K_COLS);
    flat_free(&fr);
    flat_free(&fg);
    /* The writer keeps source order: read back with one thread, ids are 0, 1, 2... */
    sl_table_unref(r);
    sl_table_unref(t);
}

SL_TEST(bin_round_trip_random_tables)
{
    dir_create();
    int64_t sizes[] = {0, 1, 7, 64, 1000, 5003};
    int threads[] = {1, 2};
    int64_t morsels[] = {7, 1000, 122880};
    for (int ti = 0; ti < 2; ti++) {
        for (int mi = 0; mi < 3; mi++) {
            sl_engine_t *e = open_engine(threads[ti], morsels[mi]);
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
                bin_round_trip(e, sizes[si], 333, 17 + si);
            sl_engine_close(e);
        }
    }
    dir_remove();
    assert_no_leaks();
}

SL_TEST(bin_keeps_source_order)
{
    dir_create();
    sl_engine_t *e = open_engine(2, 10);
    sl_table_t *t = make_table(2000, 37, 5);
    char opts[512];
    snprintf(opts, sizeof opts, "path=\"%s\"", fpath("o.slcf"));
    SL_ASSERT_OK(run_write(e, t, "write.bin", opts));
    sl_engine_close(e);
    e = open_engine(1, 100000);
    sl_table_t *r;
    SL_ASSERT_OK(run_scan(e, "scan.bin", opts, &r));
    struct flat fr, fg;
    flatten(t, -1, &fr);
    flatten(r, -1, &fg); /* file order, not by id */
    flat_expect_equal(&fr, &fg, NULL, K_COLS);
    flat_free(&fr);
    flat_free(&fg);
    sl_table_unref(r);
    sl_table_unref(t);
    sl_engine_close(e);
    dir_remove();
    assert_no_leaks();
}

SL_TEST(bin_projection_and_empty_schema)
{
    dir_create();
    sl_engine_t *e = open_engine(2, 100);
    sl_table_t *t = make_table(777, 100, 3);
    char opts[512];
    snprintf(opts, sizeof opts, "path=\"%s\"", fpath("p.slcf"));
    SL_ASSERT_OK(run_write(e, t, "write.bin", opts));
    snprintf(opts, sizeof opts, "path=\"%s\" columns=\"id,d, a\" verify=false", fpath("p.slcf"));
    sl_table_t *r;
    SL_ASSERT_OK(run_scan(e, "scan.bin", opts, &r));
    struct flat fr, fg;
    flatten(t, 0, &fr);
    flatten(r, 0, &fg);
    int map[] = {0, 4, 1};
    flat_expect_equal(&fr, &fg, map, 3);
    flat_free(&fr);
    flat_free(&fg);
    sl_table_unref(r);
    /* An unknown projected column fails at plan time. */
    snprintf(opts, sizeof opts, "path=\"%s\" columns=\"id,zz\"", fpath("p.slcf"));
    assert_int_equal(run_scan(e, "scan.bin", opts, &r), SL_ENOTFOUND);
    expect_msg("zz", NULL, NULL);
    sl_table_unref(t);
    /* An empty table keeps its schema in the file. */
    t = make_table(0, 10, 1);
    snprintf(opts, sizeof opts, "path=\"%s\"", fpath("e.slcf"));
    SL_ASSERT_OK(run_write(e, t, "write.bin", opts));
    sl_plan_t *p;
    int s;
    SL_ASSERT_OK(sl_plan_create(&p));
    SL_ASSERT_OK(sl_plan_add(p, "scan.bin", NULL, 0, opts, &s));
    const sl_schema_t *sc = sl_plan_node_schema(p, s);
    assert_int_equal(sl_schema_num_fields(sc), K_COLS);
    for (int k = 0; k < K_COLS; k++) {
        const char *name;
        enum sl_type type;
        SL_ASSERT_OK(sl_schema_field(sc, k, &name, &type));
        assert_string_equal(name, k_names[k]);
        assert_int_equal(type, k_types[k]);
    }
    sl_plan_destroy(p);
    SL_ASSERT_OK(run_scan(e, "scan.bin", opts, &r));
    assert_int_equal(sl_table_num_rows(r), 0);
    sl_table_unref(r);
    sl_table_unref(t);
    sl_engine_close(e);
    dir_remove();
    assert_no_leaks();
}

/* The result table outlives the query, the plan and the engine: the mapping stays alive
 * through the buffers. */
SL_TEST(bin_result_outlives_query)
{
    dir_create();
    sl_engine_t *e = open_engine(2, 50);
    sl_table_t *t = make_table(300, 300, 9);
    char opts[512];
    snprintf(opts, sizeof opts, "path=\"%s\"", fpath("k.slcf"));
    SL_ASSERT_OK(run_write(e, t, "write.bin", opts));
    sl_table_t *r;
    SL_ASSERT_OK(run_scan(e, "scan.bin", opts, &r));
    sl_engine_close(e);
    unlink(fpath("k.slcf"));
    struct flat fr, fg;
    flatten(t, 0, &fr);
    flatten(r, 0, &fg);
    flat_expect_equal(&fr, &fg, NULL, K_COLS);
    flat_free(&fr);
    flat_free(&fg);
    sl_table_unref(r);
    sl_table_unref(t);
    dir_remove();
    assert_no_leaks();
}

/* ---------------- CSV round trips ---------------- */

static void csv_round_trip(sl_engine_t *e, int64_t rows, const char *wopts_extra,
                           const char *ropts_extra, uint64_t seed)
{
    sl_table_t *t = make_table(rows, 211, seed);
    char opts[512];
    snprintf(opts, sizeof opts, "path=\"%s\" %s", fpath("t.csv"), wopts_extra);
    SL_ASSERT_OK(run_write(e, t, "write.csv", opts));
    dir_expect_files(1);
    snprintf(opts, sizeof opts, "path=\"%s\" columns=\"" K_SCHEMA "\" %s", fpath("t.csv"),
             ropts_extra);
    sl_table_t *r;
    SL_ASSERT_OK(run_scan(e, "scan.csv", opts, &r));
    struct flat fr, fg;
    flatten(t, 0, &fr);
    flatten(r, 0, &fg);
    flat_expect_equal(&fr, &fg, NULL, K_COLS);
    flat_free(&fr);
    flat_free(&fg);
    sl_table_unref(r);
    sl_table_unref(t);
}

SL_TEST(csv_round_trip_random_tables)
{
    dir_create();
    int64_t sizes[] = {0, 1, 7, 1000, 3001};
    int threads[] = {1, 2};
    for (int ti = 0; ti < 2; ti++) {
        sl_engine_t *e = open_engine(threads[ti], ti ? 100 : 122880);
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            csv_round_trip(e, sizes[si], "", "", 40 + si);
            csv_round_trip(e, sizes[si], "header=false delimiter=\";\" null=NA",
                           "header=false delimiter=\";\" null=NA range_bytes=333", 50 + si);
            csv_round_trip(e, sizes[si], "delimiter=\\t", "delimiter=tab range_bytes=64",
                           60 + si);
        }
        sl_engine_close(e);
    }
    dir_remove();
    assert_no_leaks();
}

SL_TEST(csv_one_column_nulls_round_trip)
{
    dir_create();
    sl_engine_t *e = open_engine(2, 5);
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    const char *names[] = {"v"};
    enum sl_type types[] = {SL_TYPE_INT32};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 1, names, types, 20));
    int32_t *v = sl_batch_column_data(b, 0);
    uint8_t *valid = sl_batch_column_validity(b, 0);
    for (int i = 0; i < 20; i++) {
        v[i] = i;
        if (i % 3 == 0)
            valid[i >> 3] &= (uint8_t) ~(1u << (i & 7));
    }
    SL_ASSERT_OK(sl_table_append(t, b));
    sl_batch_unref(b);
    char opts[512];
    snprintf(opts, sizeof opts, "path=\"%s\"", fpath("one.csv"));
    SL_ASSERT_OK(run_write(e, t, "write.csv", opts));
    snprintf(opts, sizeof opts, "path=\"%s\" columns=\"v int32\" range_bytes=3",
             fpath("one.csv"));
    sl_table_t *r;
    SL_ASSERT_OK(run_scan(e, "scan.csv", opts, &r));
    assert_int_equal(sl_table_num_rows(r), 20);
    int64_t nulls = 0;
    for (int64_t bi = 0; bi < sl_table_num_batches(r); bi++) {
        struct sl_column c;
        SL_ASSERT_OK(sl_batch_column(sl_table_batch(r, bi), 0, &c));
        for (int64_t i = 0; i < c.length; i++) {
            int64_t k = c.offset + i;
            nulls += c.validity && !((c.validity[k >> 3] >> (k & 7)) & 1);
        }
    }
    assert_int_equal(nulls, 7);
    sl_table_unref(r);
    sl_table_unref(t);
    sl_engine_close(e);
    dir_remove();
    assert_no_leaks();
}

/* ---------------- CSV parsing rules ---------------- */

/* Parses text with the given options and flattens the result in file order (1 thread). */
static int parse_text(sl_engine_t *e, const char *text, const char *opts_extra, struct flat *f)
{
    write_text("in.csv", text, strlen(text));
    char opts[1024];
    snprintf(opts, sizeof opts, "path=\"%s\" %s", fpath("in.csv"), opts_extra);
    sl_table_t *r;
    int rc = run_scan(e, "scan.csv", opts, &r);
    if (rc == SL_OK) {
        flatten(r, -1, f);
        sl_table_unref(r);
    }
    return rc;
}

SL_TEST(csv_quotes_crlf_and_final_newline)
{
    dir_create();
    sl_engine_t *e = open_engine(1, 1000);
    /* The "note" field holds quoted text (delimiters, newlines, doubled quotes); it is
     * declared int32 but not selected, so it is skipped, never converted. */
    const char *text =
        "k,note,v\r\n"
        "1,\"a, b\",1.5\r\n"
        "\"2\",\"line1\nline2\r\nline3\",-2\r\n"
        "\n"
        " 3 ,\"say \"\"hi\"\"\",\" 3e2\"\r\n"
        "4,,\r\n"
        "5,\"\"\"\",7";
    struct flat f;
    SL_ASSERT_OK(parse_text(e, text, "columns=\"k int32, note int32, v float64\" select=\"k,v\"",
                            &f));
    assert_int_equal(f.n, 5);
    assert_int_equal(f.n_cols, 2);
    int64_t ks[] = {1, 2, 3, 4, 5};
    double vs[] = {1.5, -2, 300, 0, 7};
    for (int i = 0; i < 5; i++) {
        assert_int_equal((int64_t)f.vals[0][i], ks[i]);
        assert_int_equal(f.valid[1][i], i == 3 ? 2 : 1);
        double d;
        memcpy(&d, &f.vals[1][i], 8);
        if (i != 3)
            assert_true(d == vs[i]);
    }
    flat_free(&f);
    /* select reorders; header=false reads the first line as data. */
    SL_ASSERT_OK(parse_text(e, "7;8\n9;10", "header=false delimiter=; columns=\"p int64, q int32\" "
                            "select=\"q,p\"", &f));
    assert_int_equal(f.n, 2);
    assert_int_equal(f.types[0], SL_TYPE_INT32);
    assert_int_equal((int64_t)f.vals[0][0], 8);
    assert_int_equal((int64_t)f.vals[1][1], 9);
    flat_free(&f);
    /* Only a header: no rows. An empty file without header: no rows. */
    SL_ASSERT_OK(parse_text(e, "x,y\n", "columns=\"x int32, y int32\"", &f));
    assert_int_equal(f.n, 0);
    SL_ASSERT_OK(parse_text(e, "", "header=false columns=\"x int32\"", &f));
    assert_int_equal(f.n, 0);
    sl_engine_close(e);
    dir_remove();
    assert_no_leaks();
}

/* Builds a CSV text of n records where every third has a multi-line quoted note. */
static char *make_tricky_csv_bad(int n, int crlf, int bad)
{
    size_t cap = (size_t)n * 80 + 64, len = 0;
    char *s = malloc(cap);
    len += (size_t)snprintf(s + len, cap - len, "id,note,x%s", crlf ? "\r\n" : "\n");
    for (int i = 0; i < n; i++) {
        const char *note = i % 3 == 0 ? "\"a\n,b\"\"\n\nc\"" : i % 3 == 1 ? "\"\"" : "";
        len += (size_t)snprintf(s + len, cap - len, "%d,%s,%s%d%s", i, note, i == bad ? "z" : "",
                                i * 3 - 7, i + 1 == n ? "" : crlf ? "\r\n" : "\n");
    }
    return s;
}

static char *make_tricky_csv(int n, int crlf)
{
    return make_tricky_csv_bad(n, crlf, -1);
}

SL_TEST(csv_parallel_ranges_match_one_range)
{
    dir_create();
    for (int crlf = 0; crlf < 2; crlf++) {
        char *text = make_tricky_csv(700, crlf);
        write_text("tricky.csv", text, strlen(text));
        free(text);
        sl_engine_t *e1 = open_engine(1, 1 << 20);
        char opts[1024];
        const char *cols = "columns=\"id int64, note int32, x int32\" select=\"id,x\"";
        snprintf(opts, sizeof opts, "path=\"%s\" %s", fpath("tricky.csv"), cols);
        sl_table_t *r;
        SL_ASSERT_OK(run_scan(e1, "scan.csv", opts, &r));
        struct flat ref;
        flatten(r, 0, &ref);
        sl_table_unref(r);
        assert_int_equal(ref.n, 700);
        for (int i = 0; i < 700; i++)
            assert_int_equal((int32_t)ref.vals[1][i], i * 3 - 7);
        sl_engine_close(e1);
        sl_engine_t *e2 = open_engine(2, 13);
        int64_t ranges[] = {1, 2, 3, 5, 8, 17, 64, 1000};
        for (size_t k = 0; k < sizeof ranges / sizeof ranges[0]; k++) {
            snprintf(opts, sizeof opts, "path=\"%s\" %s range_bytes=%lld", fpath("tricky.csv"),
                     cols, (long long)ranges[k]);
            SL_ASSERT_OK(run_scan(e2, "scan.csv", opts, &r));
            struct flat got;
            flatten(r, 0, &got);
            flat_expect_equal(&ref, &got, NULL, 2);
            flat_free(&got);
            sl_table_unref(r);
        }
        flat_free(&ref);
        sl_engine_close(e2);
    }
    dir_remove();
    assert_no_leaks();
}

/* ---------------- CSV errors ---------------- */

/* Runs scan.csv over text with every range size in `ranges` and expects code and the
 * message parts each time. */
static void expect_csv_error(sl_engine_t *e, const char *text, const char *cols_opts, int code,
                             const char *m1, const char *m2, const char *m3)
{
    write_text("bad.csv", text, strlen(text));
    int64_t ranges[] = {1 << 20, 1, 4, 9};
    for (int k = 0; k < 4; k++) {
        char opts[1024];
        snprintf(opts, sizeof opts, "path=\"%s\" %s range_bytes=%lld", fpath("bad.csv"),
                 cols_opts, (long long)ranges[k]);
        sl_table_t *r;
        int rc = run_scan(e, "scan.csv", opts, &r);
        if (rc != code)
            fail_msg("range_bytes=%lld: got %s, want %s: %s", (long long)ranges[k],
                     sl_err_name(rc), sl_err_name(code), g_msg);
        expect_msg(m1, m2, m3);
        expect_msg("bad.csv", NULL, NULL);
        expect_engine_usable(e);
    }
}

SL_TEST(csv_errors_name_line_and_column)
{
    dir_create();
    sl_engine_t *e = open_engine(2, 4);
    const char *cols = "columns=\"a int32, b float64, c int64\"";
    /* Too few fields on line 4 (the record ends at column 4). */
    expect_csv_error(e, "a,b,c\n1,2,3\n4,5,6\n7,8\n9,9,9\n", cols, SL_EPARSE, "line 4, column 4",
                     "too few fields", NULL);
    /* Too many: the 4th field starts at line 3, column 7. */
    expect_csv_error(e, "a,b,c\n1,2,3\n4,5,6,7\n", cols, SL_EPARSE, "line 3, column 7",
                     "too many fields", NULL);
    /* A bad float after a skipped quoted field holding newlines and an empty line. */
    expect_csv_error(e, "a,n,b,c\n1,,2,3\n4,\"x\n,\"\"\n\",5,6\n\n8,,x1.5,9\n",
                     "columns=\"a int32, n int32, b float64, c int64\" select=\"c,b,a\"",
                     SL_EPARSE, "line 7, column 4", "field 3 ('b')", "\"x1.5\"");
    expect_csv_error(e, "a,b,c\n1,2,3\n4,5,6z\n", cols, SL_EPARSE, "line 3, column 5", "'c'",
                     "int64");
    /* Out of range for int32 and for int64 and float64. */
    expect_csv_error(e, "a,b,c\n1,2,3\n3000000000,5,6\n", cols, SL_EOVERFLOW,
                     "line 3, column 1", "out of range for int32", "'a'");
    expect_csv_error(e, "a,b,c\n1,2,99999999999999999999\n", cols, SL_EOVERFLOW,
                     "line 2, column 5", "int64", NULL);
    expect_csv_error(e, "a,b,c\n1,1e999,3\n", cols, SL_EOVERFLOW, "line 2, column 3",
                     "float64", NULL);
    /* Unterminated quote: reported where the field starts. */
    expect_csv_error(e, "a,b,c\n1,2,3\n4,\"5,6\n7,8,9\n", cols, SL_EPARSE, "line 3, column 3",
                     "unterminated", NULL);
    /* A quote inside an unquoted field, and text after a closing quote. */
    expect_csv_error(e, "a,b,c\n1,2\"x,3\n", cols, SL_EPARSE, "line 2, column 4", "quote",
                     NULL);
    expect_csv_error(e, "a,b,c\n1,\"2\"x,3\n", cols, SL_EPARSE, "line 2, column 6",
                     "after a closing quote", NULL);
    /* Header mismatch. */
    expect_csv_error(e, "a,x,c\n1,2,3\n", cols, SL_EFORMAT, "line 1, column 3", "'b'",
                     "header");
    expect_csv_error(e, "a,b\n1,2,3\n", cols, SL_EFORMAT, "header has 2 fields", NULL, NULL);
    sl_engine_close(e);
    dir_remove();
    assert_no_leaks();
}

/* Line numbers stay right across many ranges of a file whose quoted fields hold
 * newlines (ranges large enough for the word-at-a-time counting, and tiny ones). */
SL_TEST(csv_error_line_after_many_multiline_records)
{
    dir_create();
    sl_engine_t *e = open_engine(2, 16);
    for (int crlf = 0; crlf < 2; crlf++) {
        char *text = make_tricky_csv_bad(700, crlf, 650);
        /* Record i starts on line 2 + i + 3 * ceil(i / 3): every third note spans 4 lines. */
        int line = 2 + 650 + 3 * ((650 + 2) / 3);
        char want[64];
        snprintf(want, sizeof want, "line %d, column 6", line);
        expect_csv_error(e, text, "columns=\"id int64, note int32, x int32\" select=x", SL_EPARSE,
                         want, "\"z1943\"", "'x'");
        int64_t ranges[] = {100, 333, 1000, 4096};
        for (int k = 0; k < 4; k++) {
            char opts[512];
            snprintf(opts, sizeof opts, "path=\"%s\" columns=\"id int64, note int32, x int32\" "
                     "select=x range_bytes=%lld", fpath("bad.csv"), (long long)ranges[k]);
            sl_table_t *r;
            assert_int_equal(run_scan(e, "scan.csv", opts, &r), SL_EPARSE);
            expect_msg(want, NULL, NULL);
        }
        free(text);
    }
    sl_engine_close(e);
    dir_remove();
    assert_no_leaks();
}

SL_TEST(csv_missing_file_and_bad_options)
{
    dir_create();
    sl_engine_t *e = open_engine(2, 100);
    char opts[512];
    sl_table_t *r;
    snprintf(opts, sizeof opts, "path=\"%s\" columns=\"a int32\"", fpath("nope.csv"));
    assert_int_equal(run_scan(e, "scan.csv", opts, &r), SL_EIO);
    expect_msg("nope.csv", "No such file", NULL);
    expect_engine_usable(e);
    snprintf(opts, sizeof opts, "path=\"%s\" columns=\"a int32\"", g_dir);
    assert_int_equal(run_scan(e, "scan.csv", opts, &r), SL_EIO);
    expect_msg(g_dir, "not a regular file", NULL);
    snprintf(opts, sizeof opts, "path=\"%s\" columns=\"a int33\"", fpath("x.csv"));
    assert_int_equal(run_scan(e, "scan.csv", opts, &r), SL_EINVAL);
    expect_msg("int33", NULL, NULL);
    snprintf(opts, sizeof opts, "path=\"%s\" columns=\"a int32, a int64\"", fpath("x.csv"));
    assert_int_equal(run_scan(e, "scan.csv", opts, &r), SL_EINVAL);
    expect_msg("twice", NULL, NULL);
    snprintf(opts, sizeof opts, "path=x columns=\"a int32\" delimiter=\"ab\"");
    assert_int_equal(run_scan(e, "scan.csv", opts, &r), SL_EINVAL);
    snprintf(opts, sizeof opts, "path=x columns=\"a int32\" select=\"b\"");
    assert_int_equal(run_scan(e, "scan.csv", opts, &r), SL_ENOTFOUND);
    /* Empty file with header=true. */
    write_text("empty.csv", "", 0);
    snprintf(opts, sizeof opts, "path=\"%s\" columns=\"a int32\"", fpath("empty.csv"));
    assert_int_equal(run_scan(e, "scan.csv", opts, &r), SL_EFORMAT);
    expect_msg("empty", NULL, NULL);
    expect_engine_usable(e);
    sl_engine_close(e);
    dir_remove();
    assert_no_leaks();
}

/* ---------------- binary file errors ---------------- */

static size_t read_file(const char *name, uint8_t **out)
{
    FILE *f = fopen(fpath(name), "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    *out = malloc(n);
    assert_int_equal(fread(*out, 1, n, f), n);
    fclose(f);
    return n;
}

/* Writes a modified copy and expects scan.bin to fail with code and message parts. */
static void expect_bin_error(sl_engine_t *e, const uint8_t *bytes, size_t n, int code,
                             const char *m1, const char *m2)
{
    write_text("bad.slcf", (const char *)bytes, n);
    char opts[512];
    snprintf(opts, sizeof opts, "path=\"%s\"", fpath("bad.slcf"));
    sl_table_t *r;
    int rc = run_scan(e, "scan.bin", opts, &r);
    if (rc != code)
        fail_msg("got %s, want %s: %s", sl_err_name(rc), sl_err_name(code), g_msg);
    expect_msg(m1, m2, "bad.slcf");
    expect_engine_usable(e);
}

/* Recomputes the header checksum after an edit (to reach the checks behind it). */
static void reseal(uint8_t *p)
{
    uint32_t hb = sl__get_u32(p + 12);
    sl__put_u64(p + 32, 0);
    sl__put_u64(p + 32, sl__xxh64(p, hb));
}

SL_TEST(bin_errors_name_what_and_where)
{
    dir_create();
    sl_engine_t *e = open_engine(2, 64);
    sl_table_t *t = make_table(500, 500, 11);
    char opts[512];
    snprintf(opts, sizeof opts, "path=\"%s\"", fpath("good.slcf"));
    SL_ASSERT_OK(run_write(e, t, "write.bin", opts));
    sl_table_unref(t);
    uint8_t *f;
    size_t n = read_file("good.slcf", &f);
    uint8_t *m = malloc(n);

    memcpy(m, f, n);
    m[0] = 'X';
    expect_bin_error(e, m, n, SL_EFORMAT, "bad magic", "offset 0");
    memcpy(m, f, n);
    sl__put_u16(m + 4, 9);
    expect_bin_error(e, m, n, SL_EFORMAT, "unsupported format version 9", "offset 4");
    memcpy(m, f, n);
    expect_bin_error(e, m, 20, SL_EFORMAT, "truncated", "20 bytes");
    expect_bin_error(e, m, 100, SL_EFORMAT, "truncated", "header");
    expect_bin_error(e, m, n - 100, SL_EFORMAT, "truncated body", NULL);
    /* A flipped byte in the header: header checksum. */
    memcpy(m, f, n);
    m[SL__SLCF_FIXED_BYTES + 8] ^= 1;
    expect_bin_error(e, m, n, SL_EFORMAT, "header checksum mismatch", NULL);
    /* A flipped byte in column 4's values (found when the query runs). */
    memcpy(m, f, n);
    uint64_t voff = sl__get_u64(m + SL__SLCF_FIXED_BYTES + 3 * SL__SLCF_ENTRY_BYTES + 16);
    m[voff + 13] ^= 0x40;
    expect_bin_error(e, m, n, SL_EFORMAT, "column 4 'c': values section", "checksum mismatch");
    /* ... unless verify=false: then the data is read as is. */
    write_text("bad.slcf", (const char *)m, n);
    snprintf(opts, sizeof opts, "path=\"%s\" verify=false", fpath("bad.slcf"));
    sl_table_t *r;
    SL_ASSERT_OK(run_scan(e, "scan.bin", opts, &r));
    sl_table_unref(r);
    /* An unknown type code, with a valid header checksum. */
    memcpy(m, f, n);
    m[SL__SLCF_FIXED_BYTES + SL__SLCF_ENTRY_BYTES] = 99;
    reseal(m);
    expect_bin_error(e, m, n, SL_EFORMAT, "column 2 'a': unknown type code 0x00000063", NULL);
    /* Inconsistent sizes: a value section too short for the rows. */
    memcpy(m, f, n);
    sl__put_u64(m + SL__SLCF_FIXED_BYTES + 24, 8 * 499);
    reseal(m);
    expect_bin_error(e, m, n, SL_EFORMAT, "column 1 'id': values section has 3992 bytes",
                     "need 4000");
    /* 2^63 rows: named as too many, not "9223372036854775808 rows of int64 need 0"
     * (their byte count wrapped). */
    memcpy(m, f, n);
    sl__put_u64(m + 16, (uint64_t)1 << 63);
    reseal(m);
    expect_bin_error(e, m, n, SL_EFORMAT, "row count 9223372036854775808 is too large", NULL);
    /* A section running past the end of the file. */
    memcpy(m, f, n);
    sl__put_u64(m + SL__SLCF_FIXED_BYTES + 16, sl__align64(n));
    reseal(m);
    expect_bin_error(e, m, n, SL_EFORMAT, "column 1 'id': values section", "outside");
    /* Missing file. */
    snprintf(opts, sizeof opts, "path=\"%s\"", fpath("missing.slcf"));
    assert_int_equal(run_scan(e, "scan.bin", opts, &r), SL_EIO);
    expect_msg("missing.slcf", "No such file", NULL);
    free(m);
    free(f);
    expect_engine_usable(e);
    sl_engine_close(e);
    dir_remove();
    assert_no_leaks();
}

SL_TEST(writers_report_io_errors_with_the_path)
{
    dir_create();
    sl_engine_t *e = open_engine(2, 64);
    sl_table_t *t = make_table(100, 100, 1);
    char opts[512];
    snprintf(opts, sizeof opts, "path=\"%s/no/such/dir/x.bin\"", g_dir);
    assert_int_equal(run_write(e, t, "write.bin", opts), SL_EIO);
    expect_msg("no/such/dir/x.bin", "No such file", NULL);
    snprintf(opts, sizeof opts, "path=\"%s/no/such/dir/x.csv\"", g_dir);
    assert_int_equal(run_write(e, t, "write.csv", opts), SL_EIO);
    expect_msg("no/such/dir/x.csv", "No such file", NULL);
    dir_expect_files(0);
    expect_engine_usable(e);
    /* Writing replaces an existing file. */
    write_text("r.csv", "old", 3);
    snprintf(opts, sizeof opts, "path=\"%s\" header=false", fpath("r.csv"));
    SL_ASSERT_OK(run_write(e, t, "write.csv", opts));
    dir_expect_files(1);
    uint8_t *f;
    size_t n = read_file("r.csv", &f);
    assert_true(n > 100);
    assert_memory_equal(f, "0,", 2);
    free(f);
    sl_table_unref(t);
    sl_engine_close(e);
    dir_remove();
    assert_no_leaks();
}

/* ---------------- allocation failures ---------------- */

/* Runs one plan without asserting: 0 write.bin, 1 scan.bin, 2 write.csv, 3 scan.csv. */
static int try_plan(sl_engine_t *e, sl_table_t *t, int which)
{
    static const char *ops[] = {"write.bin", "scan.bin", "write.csv", "scan.csv"};
    char opts[512];
    const char *file = fpath(which < 2 ? "f.slcf" : "f.csv");
    snprintf(opts, sizeof opts, "path=\"%s\"%s", file,
             which == 3 ? " columns=\"" K_SCHEMA "\" range_bytes=500" : "");
    sl_plan_t *p;
    int rc = sl_plan_create(&p);
    if (rc < 0)
        return rc;
    int src = -1, node;
    if (which % 2 == 0)
        rc = sl_plan_add_table(p, t, &src);
    if (rc >= 0)
        rc = sl_plan_add(p, ops[which], which % 2 == 0 ? &src : NULL, which % 2 == 0, opts,
                         &node);
    if (rc >= 0 && which % 2)
        rc = sl_plan_output(p, node, "r");
    sl_query_t *q = NULL;
    if (rc >= 0)
        rc = sl_query_create(e, p, &q);
    if (rc >= 0)
        rc = sl_query_run(q);
    if (rc >= 0 && which % 2) {
        sl_table_t *r;
        rc = sl_query_result(q, "r", &r);
        if (rc >= 0) {
            if (sl_table_num_rows(r) != sl_table_num_rows(t))
                rc = SL_EINTERNAL;
            sl_table_unref(r);
        }
    }
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return rc;
}

SL_TEST(allocation_failures_fail_cleanly)
{
    dir_create();
    sl_engine_t *e = open_engine(2, 50);
    sl_table_t *t = make_table(300, 70, 2);
    for (int which = 0; which < 4; which++) {
        int n, rc = SL_ENOMEM;
        for (n = 0; n < 2000 && rc != SL_OK; n++) {
            sl__mem_fail_after(n);
            rc = try_plan(e, t, which);
            sl__mem_fail_after(-1);
            if (rc != SL_OK && rc != SL_ENOMEM)
                fail_msg("plan %d, allocation %d failing: %s", which, n, sl_err_name(rc));
            /* No temporary file is left behind; a writer that succeeded added its file. */
            static const int before[] = {0, 1, 1, 2};
            dir_expect_files(before[which] + (rc == SL_OK && which % 2 == 0));
        }
        assert_int_equal(rc, SL_OK);
        assert_true(n > 3);
    }
    sl_table_unref(t);
    expect_engine_usable(e);
    sl_engine_close(e);
    dir_remove();
    assert_no_leaks();
}

SL_TEST(csv_byte_order_mark_is_skipped)
{
    dir_create();
    sl_engine_t *e = open_engine(1, 100);
    struct flat f;
    SL_ASSERT_OK(parse_text(e, "\xEF\xBB\xBFx,y\n1,2\n", "columns=\"x int32, y int32\"", &f));
    assert_int_equal(f.n, 1);
    assert_int_equal((int64_t)f.vals[1][0], 2);
    flat_free(&f);
    assert_int_equal(parse_text(e, "\xEF\xBB\xBFx,y\nq,2\n", "columns=\"x int32, y int32\"", &f),
                     SL_EPARSE);
    expect_msg("line 2, column 1", NULL, NULL);
    sl_engine_close(e);
    dir_remove();
    assert_no_leaks();
}

/* Short decimals (the parser's fast path) and long ones (strtod) read back exactly as
 * strtod/strtof read them. */
SL_TEST(csv_floats_match_strtod)
{
    dir_create();
    sl_engine_t *e = open_engine(2, 1000);
    uint64_t seed = 77;
    int n = 5000;
    char *text = malloc((size_t)n * 80 + 16);
    double *want_d = malloc((size_t)n * sizeof *want_d);
    float *want_f = malloc((size_t)n * sizeof *want_f);
    size_t len = (size_t)sprintf(text, "i,f,d\n");
    for (int i = 0; i < n; i++) {
        char num[64];
        int digits = 1 + (int)(rng_next(&seed) % 22);
        int k = 0;
        if (rng_next(&seed) % 2)
            num[k++] = '-';
        int dot = (int)(rng_next(&seed) % (unsigned)(digits + 1));
        for (int j = 0; j < digits; j++) {
            if (j == dot && j > 0)
                num[k++] = '.';
            num[k++] = (char)('0' + rng_next(&seed) % 10);
        }
        if (rng_next(&seed) % 3 == 0)
            k += sprintf(num + k, "e%d", (int)(rng_next(&seed) % 46) - 30);
        num[k] = 0;
        want_d[i] = strtod(num, NULL);
        want_f[i] = strtof(num, NULL);
        len += (size_t)sprintf(text + len, "%d,%s,%s\n", i, num, num);
    }
    struct flat f;
    SL_ASSERT_OK(parse_text(e, text, "columns=\"i int32, f float32, d float64\"", &f));
    assert_int_equal(f.n, n);
    struct flat g;
    memset(&g, 0, sizeof g);
    for (int i = 0; i < n; i++) {
        int row = (int)(int32_t)f.vals[0][i];
        uint32_t fb;
        uint64_t db;
        memcpy(&fb, &want_f[row], 4);
        memcpy(&db, &want_d[row], 8);
        if ((uint32_t)f.vals[1][i] != fb || f.vals[2][i] != db)
            fail_msg("row %d: float32 %x want %x, float64 %llx want %llx", row,
                     (unsigned)f.vals[1][i], fb, (unsigned long long)f.vals[2][i],
                     (unsigned long long)db);
    }
    flat_free(&f);
    free(text);
    free(want_d);
    free(want_f);
    sl_engine_close(e);
    dir_remove();
    assert_no_leaks();
}
