/* Tests of expressions on the column types of 0.3 (int8, uint64, bool, date32, timestamp,
 * decimal(15,2) and decimal(38,4), utf8 and dictionary strings, NaN and infinities, nulls
 * in every column; 12 picked rows and 36 random ones): every case of expr_types_cases.h
 * (generated from DuckDB by expr_types_expected.py) through project, its result type and
 * every row compared as text with DuckDB's; boolean cases also through filter, which must
 * carry every column unchanged; the errors of overflowing decimals, bad casts and misuse
 * name the value. */
#include <stdio.h>

#include "../gen/gen_test_util.h"
#include "common/values.h"
#include "expr/expr_int.h"
#include "expr_test_util.h"

#include "expr_types_cases.h"
#include "expr_types_input.h"

/* sluice's name of a DuckDB type ("DECIMAL(18,6)" -> "decimal(18,6)"). */
static const char *duck_type(const char *t, char *buf, size_t len)
{
    static const char *const map[][2] = {
        {"BIGINT", "int64"},  {"INTEGER", "int32"}, {"TINYINT", "int8"},  {"DOUBLE", "float64"},
        {"FLOAT", "float32"}, {"BOOLEAN", "bool"},  {"DATE", "date32"},   {"VARCHAR", "utf8"},
        {"TIMESTAMP", "timestamp"}, {"UBIGINT", "uint64"}, {"SMALLINT", "int16"},
        {"UTINYINT", "uint8"}, {"UINTEGER", "uint32"}};
    for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
        if (strcmp(t, map[k][0]) == 0)
            return map[k][1];
    int p, s;
    if (sscanf(t, "DECIMAL(%d,%d)", &p, &s) == 2)
        snprintf(buf, len, "decimal(%d,%d)", p, s);
    else
        snprintf(buf, len, "%s", t);
    return buf;
}

/* Where sluice's type differs from DuckDB's on purpose (docs/EXPRESSIONS.md): integer
 * arithmetic is int64, an integer CASE/COALESCE of one column keeps its type, uint64
 * joins decimals as decimal(20,0), date ± interval stays a date. */
static bool type_ok(const char *got, const char *want)
{
    if (strcmp(got, want) == 0)
        return true;
    static const char *const same[][2] = {{"int64", "int32"}, {"int8", "int32"},
                                          {"int64", "int8"}, {"int64", "int16"}};
    for (size_t k = 0; k < sizeof same / sizeof same[0]; k++)
        if (strcmp(got, same[k][0]) == 0 && strcmp(want, same[k][1]) == 0)
            return true;
    return false;
}

static void check_project(sl_engine_t *e, sl_table_t *t, const struct et_case *k)
{
    char opts[400], tb[64];
    snprintf(opts, sizeof opts, "columns=\"id, v=%s\"", k->expr);
    sl_table_t *res = run_on(e, t, "project", opts, NULL, NULL, 0);
    struct sl_column v;
    SL_ASSERT_OK(sl_batch_column(sl_table_batch(res, 0), 1, &v));
    const char *want_type = duck_type(k->type, tb, sizeof tb);
    if (!type_ok(sl_type_name(v.type), want_type))
        fail_msg("%s: type %s, DuckDB's is %s", k->expr, sl_type_name(v.type), want_type);
    char got[ET_ROWS][96];
    bool seen[ET_ROWS];
    result_texts(res, 1, got, seen);
    for (int r = 0; r < ET_ROWS; r++)
        if (!seen[r] || strcmp(got[r], k->want[r]) != 0)
            fail_msg("%s, row %d: got '%s', DuckDB gives '%s'", k->expr, r, got[r], k->want[r]);
    sl_table_unref(res);
}

/* A boolean case as a filter: the TRUE rows, every column as in the input. */
static void check_filter(sl_engine_t *e, sl_table_t *t, const struct et_case *k)
{
    char opts[400];
    snprintf(opts, sizeof opts, "where=\"%s\"", k->expr);
    sl_table_t *res = run_on(e, t, "filter", opts, NULL, NULL, 0);
    sl_batch_t *in = sl_table_batch(t, 0);
    for (int c = 1; c <= ET_COLS; c++) {
        char got[ET_ROWS][96], want[96];
        bool seen[ET_ROWS];
        result_texts(res, c, got, seen);
        for (int r = 0; r < ET_ROWS; r++) {
            if (seen[r] != (strcmp(k->want[r], "true") == 0))
                fail_msg("where %s: row %d %s, DuckDB says %s", k->expr, r,
                         seen[r] ? "kept" : "dropped", k->want[r]);
            value_text(in, c, r, want, sizeof want);
            if (seen[r] && strcmp(got[r], want) != 0)
                fail_msg("where %s: column %s of row %d is '%s', was '%s'", k->expr,
                         et_names[c - 1], r, got[r], want);
        }
    }
    sl_table_unref(res);
}

SL_TEST(expressions_vs_duckdb)
{
    sl_engine_t *e = gt_open(1, 1024);
    sl_table_t *t = input_table();
    int n = (int)(sizeof et_cases / sizeof et_cases[0]);
    for (int k = 0; k < n; k++) {
        check_project(e, t, &et_cases[k]);
        if (strcmp(et_cases[k].type, "BOOLEAN") == 0)
            check_filter(e, t, &et_cases[k]);
    }
    print_message("%d expressions equal DuckDB's results\n", n);
    sl_table_unref(t);
    gt_close(e);
}

/* The same input sliced (offsets into strings, dictionaries and validity) and filtered
 * twice in a row (a filter's output as the next filter's input). */
SL_TEST(filter_chain_on_slices)
{
    sl_engine_t *e = gt_open(2, 5);
    sl_table_t *t = input_table(), *s;
    SL_ASSERT_OK(sl_table_create(&s));
    sl_batch_t *b = sl_table_batch(t, 0);
    sl_batch_t *p1 = sl__batch_slice(b, 0, 5), *p2 = sl__batch_slice(b, 5, ET_ROWS - 5);
    SL_ASSERT_OK(sl_table_append(s, p1));
    SL_ASSERT_OK(sl_table_append(s, p2));
    sl_batch_unref(p1);
    sl_batch_unref(p2);
    sl_table_t *r1 = run_on(e, s, "filter", "where=\"s IS NOT NULL OR ds = 'green'\"", NULL,
                            NULL, 0);
    sl_table_t *r2 = run_on(e, r1, "filter", "where=\"ds IN ('red', 'green') AND p > 0\"", NULL,
                            NULL, 0);
    char got[ET_ROWS][96], gotd[ET_ROWS][96];
    bool seen[ET_ROWS];
    result_texts(r2, 10, got, seen);
    result_texts(r2, 11, gotd, seen);
    int kept = 0;
    for (int r = 0; r < ET_ROWS; r++) {
        const char *sv = et_input[9][r], *dv = et_input[10][r], *pv = et_input[6][r];
        bool red = dv && strcmp(dv, "red") == 0, green = dv && strcmp(dv, "green") == 0;
        bool want = (sv || green) && (red || green) && pv && dec_parse(pv, 2) > 0;
        if (seen[r] != want)
            fail_msg("row %d %s", r, seen[r] ? "kept" : "dropped");
        if (want) {
            assert_string_equal(got[r], sv ? sv : "NULL");
            assert_string_equal(gotd[r], dv);
        }
        kept += want;
    }
    assert_true(kept >= 5); /* the hand-picked rows alone keep 5 */
    sl_table_unref(r1);
    sl_table_unref(r2);
    sl_table_unref(s);
    sl_table_unref(t);
    gt_close(e);
}

static void expect_error(sl_engine_t *e, sl_table_t *t, const char *op, const char *opts,
                         int code, const char *needle)
{
    int rc;
    char msg[600];
    sl_table_t *r = run_on(e, t, op, opts, &rc, msg, sizeof msg);
    sl_table_unref(r);
    if (rc != code)
        fail_msg("%s(%s): returned %s, expected %s; message: %s", op, opts, sl_err_name(rc),
                 sl_err_name(code), msg);
    if (!strstr(msg, needle))
        fail_msg("%s(%s): message '%s' does not mention '%s'", op, opts, msg, needle);
    print_message("%-60s -> %s\n", opts, msg);
}

SL_TEST(errors_name_the_value)
{
    sl_engine_t *e = gt_open(1, 1024);
    sl_table_t *t = input_table();
    expect_error(e, t, "project", "columns=\"v=w * w\"", SL_EOVERFLOW, "decimal overflow");
    expect_error(e, t, "project", "columns=\"v=p * p * p * p\"", SL_EOVERFLOW, "decimal(18,4)");
    expect_error(e, t, "project", "columns=\"v=CAST(s AS int32)\"", SL_EINVAL, "'abc'");
    expect_error(e, t, "project", "columns=\"v=CAST(i8 AS uint8)\"", SL_EOVERFLOW,
                 "CAST(-2 AS uint8)");
    expect_error(e, t, "project", "columns=\"v=CAST(p AS decimal(5,2))\"", SL_EOVERFLOW,
                 "99999999999.99");
    expect_error(e, t, "project", "columns=\"v=CAST(f AS int64)\"", SL_EOVERFLOW, "nan");
    expect_error(e, t, "project", "columns=\"v=CAST(s AS date32)\"", SL_EINVAL, "not a date");
    expect_error(e, t, "project", "columns=\"v=CAST(w AS int64)\"", SL_EOVERFLOW,
                 "12345678901234567890123456789012.3456");
    expect_error(e, t, "filter", "where=\"d > DATE '1998-13-40'\"", SL_EPARSE, "1998-13-40");
    expect_error(e, t, "filter", "where=\"d > 'nodate'\"", SL_ETYPE, "not a date");
    expect_error(e, t, "filter", "where=\"s > 1\"", SL_ETYPE, "cannot combine");
    expect_error(e, t, "filter", "where=\"i8 LIKE 'a%'\"", SL_ETYPE, "needs a string");
    expect_error(e, t, "filter", "where=\"s LIKE ds\"", SL_EPARSE, "pattern");
    expect_error(e, t, "filter", "where=\"EXTRACT(YEAR FROM s) > 1\"", SL_ETYPE, "date");
    expect_error(e, t, "filter", "where=\"CASE WHEN b THEN s ELSE p END = 'x'\"", SL_ETYPE,
                 "mixes");
    expect_error(e, t, "filter", "where=\"p + INTERVAL '1' DAY > 0\"", SL_ETYPE, "interval");
    expect_error(e, t, "filter", "where=\"d + INTERVAL '1' WEEK > d\"", SL_EPARSE, "DAY, MONTH");
    expect_error(e, t, "filter", "where=\"p % q > 0\"", SL_ETYPE, "decimals");
    expect_error(e, t, "filter", "where=\"CAST(d AS int32) > 0\"", SL_ETYPE, "CAST cannot");
    expect_error(e, t, "filter", "where=\"upper(s) = 'A'\"", SL_EPARSE, "unknown function");
    sl_table_unref(t);
    gt_close(e);
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

/* The evaluator directly: LIKE fast paths agree with the general matcher, SUBSTRING by
 * characters of multi-byte UTF-8, and a dictionary predicate reused across batches. */
SL_TEST(like_paths_agree)
{
    static const char *const pats[] = {"abc%", "%abc", "%abc%", "abc", "%", "", "%%", "a%c",
                                       "_bc%", "%b_", "a__", "%é%", "h_llo%", "a%b%", "%b%c",
                                       "a%%c", "abc%abc", "ab%bc", "%a%b%c%", "abc%cabc"};
    static const char *const strs[] = {"abc", "abcabc", "xabc", "ab", "", "aXc", "abcd",
                                       "héllo", "hello", "é", "bc", "abxbc", "abbc", "acb"};
    for (size_t p = 0; p < sizeof pats / sizeof pats[0]; p++) {
        struct ex_node fast = {.str = (char *)pats[p], .slen = (int64_t)strlen(pats[p])};
        struct ex_node slow = fast;
        fast.like = ex_like_kind(fast.str, fast.slen);
        slow.like = LIKE_GENERAL;
        for (size_t s = 0; s < sizeof strs / sizeof strs[0]; s++) {
            int64_t n = (int64_t)strlen(strs[s]);
            if (ex_like_match(&fast, strs[s], n) != ex_like_match(&slow, strs[s], n))
                fail_msg("'%s' LIKE '%s': fast path %d, general %d", strs[s], pats[p],
                         ex_like_match(&fast, strs[s], n), ex_like_match(&slow, strs[s], n));
        }
    }
    struct ex_node k = {.str = "h_llo%", .slen = 6, .like = LIKE_GENERAL};
    assert_true(ex_like_match(&k, "héllo", (int64_t)strlen("héllo")));
    assert_int_equal(ex_like_kind("abc%", 4), LIKE_PREFIX);
    assert_int_equal(ex_like_kind("%abc", 4), LIKE_SUFFIX);
    assert_int_equal(ex_like_kind("%abc%", 5), LIKE_CONTAINS);
    assert_int_equal(ex_like_kind("abc", 3), LIKE_EXACT);
    assert_int_equal(ex_like_kind("a%b%", 4), LIKE_SEGMENTS);
    assert_int_equal(ex_like_kind("%special%requests%", 18), LIKE_SEGMENTS);
    assert_int_equal(ex_like_kind("a_b%", 4), LIKE_GENERAL);
}

/* LIKE over a utf8 column, whose rows lie back to back, searches the pattern's first
 * literal run through the whole vector at once (expr_str.c): every row's answer must be
 * the general matcher's, with occurrences spanning two rows, rows holding the run but
 * not the pattern, empty rows and a null row; and from an offset (start > 0). */
SL_TEST(like_over_contiguous_rows)
{
    static const char *const rows[] = {"xxspe", "cialyy", "special requests", "", "requests special",
                                       "specia", "l", "nospecial", "specialrequests!", "spe",
                                       "cial requests", "a special b requests c", "special"};
    static const char *const pats[] = {"%special%requests%", "%special%", "%pec%", "%al%re%",
                                       "%cial", "%%special%"};
    int n = (int)(sizeof rows / sizeof rows[0]);
    const char *name = "s";
    enum sl_type type = SL_TYPE_UTF8;
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 1, &name, &type, n));
    int32_t *off = sl_batch_column_data(b, 0);
    int32_t total = 0;
    for (int r = 0; r < n; r++)
        total += (int32_t)strlen(rows[r]);
    char *chars = sl_batch_column_chars(b, 0, total);
    off[0] = 0;
    for (int r = 0; r < n; r++) {
        memcpy(chars + off[r], rows[r], strlen(rows[r]));
        off[r + 1] = off[r] + (int32_t)strlen(rows[r]);
    }
    uint8_t *valid = sl_batch_column_validity(b, 0);
    valid[0] &= (uint8_t)~(1u << 3); /* row 3 (empty) is null */
    b->cols[0].null_count = 1;
    for (size_t p = 0; p < sizeof pats / sizeof pats[0]; p++) {
        for (int neg = 0; neg < 2; neg++) {
            char text[96], err[200];
            snprintf(text, sizeof text, "s %sLIKE '%s'", neg ? "NOT " : "", pats[p]);
            struct sl__expr *e;
            SL_ASSERT_OK(sl__expr_parse(text, 0, -1, &e, err, sizeof err));
            SL_ASSERT_OK(sl__expr_bind(e, b->schema, err, sizeof err));
            struct sl__expr_scratch sc;
            SL_ASSERT_OK(sl__expr_scratch_init(&sc, e));
            struct ex_node g = {.str = (char *)pats[p], .slen = (int64_t)strlen(pats[p]),
                                .like = LIKE_GENERAL};
            for (int start = 0; start < 3; start++) {
                struct sl__expr_vec v;
                SL_ASSERT_OK(sl__expr_eval(e, b, start, n - start, &sc, &v, err, sizeof err));
                for (int r = start; r < n; r++) {
                    if (r == 3) {
                        assert_true(v.null && v.null[r - start]);
                        continue;
                    }
                    bool want = ex_like_match(&g, rows[r], (int64_t)strlen(rows[r])) != neg;
                    if (v.b[r - start] != want)
                        fail_msg("'%s' %s: %d, expected %d", rows[r], text, v.b[r - start], want);
                }
            }
            sl__expr_scratch_fini(&sc);
            sl__expr_free(e);
        }
    }
    sl_batch_unref(b);
}

/* A batch of one DICT column "ds" with dictionary dict[0..nd) and the given codes. */
static sl_batch_t *dict_batch(const char *const *dict, int nd, const int32_t *codes, int n)
{
    const char *name = "ds";
    enum sl_type type = SL_TYPE_DICT;
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 1, &name, &type, n));
    int32_t offs[8] = {0};
    char chars[64] = "";
    for (int k = 0; k < nd; k++) {
        strcat(chars, dict[k]);
        offs[k + 1] = (int32_t)strlen(chars);
    }
    SL_ASSERT_OK(sl_batch_column_set_dictionary(b, 0, nd, offs, chars));
    memcpy(sl_batch_column_data(b, 0), codes, (size_t)n * sizeof *codes);
    return b;
}

/* Dictionary predicates are cached per dictionary: batches with other dictionaries (one
 * thread, so one cache sees them all) must each be evaluated against their own. */
SL_TEST(dictionary_predicates_per_dictionary)
{
    static const char *const d1[] = {"red", "blue"}, *const d2[] = {"blue", "x", "red"};
    static const int32_t c1[] = {0, 1, 0, 1}, c2[] = {2, 0, 1, 2, 2};
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    for (int rep = 0; rep < 3; rep++) { /* dictionaries freed and made again in turn */
        sl_batch_t *b = rep % 2 ? dict_batch(d2, 3, c2, 5) : dict_batch(d1, 2, c1, 4);
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
    }
    sl_engine_t *e = gt_open(1, 1 << 20);
    static const struct {
        const char *where;
        int64_t rows;
    } cases[] = {{"ds = 'red'", 2 + 3 + 2}, {"ds LIKE 'b%'", 2 + 1 + 2},
                 {"ds IN ('x', 'blue')", 2 + 2 + 2}, {"ds >= 'red'", 2 + 4 + 2}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char opts[100];
        snprintf(opts, sizeof opts, "where=\"%s\"", cases[k].where);
        sl_table_t *r = run_on(e, t, "filter", opts, NULL, NULL, 0);
        int64_t got = r ? sl_table_num_rows(r) : 0;
        if (got != cases[k].rows)
            fail_msg("where %s: %lld rows, expected %lld", cases[k].where, (long long)got,
                     (long long)cases[k].rows);
        sl_table_unref(r);
    }
    sl_table_unref(t);
    gt_close(e);
}
