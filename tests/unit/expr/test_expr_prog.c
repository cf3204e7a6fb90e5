/* Tests of the GPU expression programs on the host: every expression compiled by
 * sl__xp_compile and run by the interpreter the GPU kernels run (sluice_k/expr_prog.h,
 * here as plain C) must give the CPU evaluator's values and nulls on every row, and fail
 * exactly where it fails (overflow). Inputs: the DuckDB-checked type cases
 * (expr_types_cases.h) and random columns with nulls and extremes (expr_random_input.h),
 * also empty and one-row; random string predicates over utf8 and large_utf8 columns
 * (expr_str_input.h), also on a slice whose offsets do not start at 0. Constructs the
 * program does not cover are refused with a reason. The TPC-H plans' filters and
 * computed columns on utf8 columns (plans/tpch) compile, but for SUBSTRING. */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../gen/gen_test_util.h"
#include "expr/expr_prog.h"

#include "expr_types_cases.h"
#include "expr_types_input.h"
#include "expr_random_input.h"
#include "expr_str_input.h"

/* Evaluates e on rows [0, n) of b with the CPU evaluator: values and nulls into the
 * arrays (as the program's values), or the error code. */
static int cpu_values(const struct sl__expr *e, const sl_batch_t *b, sl_xp_val *vals,
                      uint8_t *nulls)
{
    struct sl__expr_scratch s;
    SL_ASSERT_OK(sl__expr_scratch_init(&s, e));
    int64_t n = sl_batch_num_rows(b);
    int rc = SL_OK;
    for (int64_t at = 0; at < n && rc == SL_OK; at += SL__EXPR_VEC) {
        int64_t len = n - at < SL__EXPR_VEC ? n - at : SL__EXPR_VEC;
        struct sl__expr_vec v;
        char err[400];
        rc = sl__expr_eval(e, b, at, len, &s, &v, err, sizeof err);
        for (int64_t r = 0; rc == SL_OK && r < len; r++) {
            sl_xp_val *o = &vals[at + r];
            o->d = 0;
            switch (v.vk) {
            case SL__VK_FLOAT: o->f = v.f[r]; break;
            case SL__VK_DEC: o->d = v.d[r]; break;
            case SL__VK_BOOL: o->i = v.b[r]; break;
            default: o->i = v.i[r]; break;
            }
            nulls[at + r] = v.null && v.null[r];
        }
    }
    sl__expr_scratch_fini(&s);
    return rc;
}

static bool same_value(int kind, sl_xp_val x, sl_xp_val y)
{
    if (kind == SL_XK_F)
        return memcmp(&x.f, &y.f, 8) == 0 || (isnan(x.f) && isnan(y.f));
    return kind == SL_XK_D ? x.d == y.d : x.i == y.i;
}

/* Programs that sl__xj_from_prog took (then checked row by row against the program). */
static int conj_programs;
/* Programs that sl__xr_from_prog took, and the rows sl__xr_row answered (each checked
 * against the program) or left to the interpreter. */
static int reg_programs;
static int64_t reg_rows, reg_unsure;

/* Compiles `text` over b's schema and compares the program with the CPU on every row,
 * and, where it is an OR of ANDs of simple tests (expr_conj.h), those tests with the program.
 * Returns whether it compiled; fails the test on any difference. */
static bool program_agrees(const char *text, const sl_batch_t *b)
{
    char err[400];
    struct sl__expr *e;
    if (sl__expr_parse(text, 0, -1, &e, err, sizeof err) < 0 ||
        sl__expr_bind(e, b->schema, err, sizeof err) < 0)
        fail_msg("%s: %s", text, err);
    struct sl__xp *x = sl__malloc(sizeof *x);
    assert_non_null(x);
    if (sl__xp_compile(e, b->schema, x, err, sizeof err) < 0) {
        assert_true(err[0] != 0); /* a refusal says why */
        sl__free(x, sizeof *x);
        sl__expr_free(e);
        return false;
    }
    int64_t n = sl_batch_num_rows(b);
    sl_xp_val *want = sl__malloc(sizeof *want * (size_t)(n + 1));
    uint8_t *want_null = sl__malloc((size_t)n + 1), tables[256];
    int cpu_rc = cpu_values(e, b, want, want_null);
    struct sl_xp_prog prog = x->prog;
    struct sl_xp_cols cols;
    int64_t used;
    SL_ASSERT_OK(sl__xp_tables(e, x, b, &prog, tables, sizeof tables, &used));
    sl__xp_cols(&prog, b, &cols);
    int kind = x->vk == SL__VK_FLOAT ? SL_XK_F : x->vk == SL__VK_DEC ? SL_XK_D : SL_XK_I;
    struct sl_xj_conj conj;
    bool is_conj = sl__xj_from_prog(&prog, &conj), failed = false;
    conj_programs += is_conj;
    struct sl_xr_prog reg;
    bool is_reg = sl__xr_from_prog(&prog, &reg);
    assert_int_equal(is_reg, x->reg_ok);
    reg_programs += is_reg;
    for (int64_t r = 0; r < n; r++) {
        sl_xp_val v;
        int null = 0, bad = -1;
        int rc = sl__xp_eval_row(&prog, &cols, tables, r, &v, &null, &bad);
        assert_true(rc == SL_XP_OK || rc == SL_XP_EOVERFLOW);
        failed |= rc != SL_XP_OK;
        if (is_conj && sl__xj_row(&conj, &cols, tables, r) != (rc == SL_XP_OK && !null && v.i))
            fail_msg("%s, row %lld: the OR of ANDs of tests (expr_conj.h) keeps the row %s",
                     text, (long long)r, rc == SL_XP_OK && !null && v.i ? "not" : "wrongly");
        int64_t rx;
        int rnull = 0;
        if (is_reg && sl__xr_row(&reg, &cols, r, &rx, &rnull) == SL_XR_OK) {
            reg_rows++;
            sl_xp_val rv;
            rv.d = rx;
            if (rc != SL_XP_OK || rnull != null || (!null && !same_value(kind, rv, v)))
                fail_msg("%s, row %lld: in registers %s%lld, the program %s%lld (rc %d)", text,
                         (long long)r, rnull ? "NULL " : "", (long long)rx,
                         null ? "NULL " : "", (long long)v.i, rc);
        } else {
            reg_unsure += is_reg;
        }
        if (rc != SL_XP_OK || cpu_rc != SL_OK)
            continue;
        if (null != want_null[r] || (!null && !same_value(kind, v, want[r])))
            fail_msg("%s, row %lld: the program gives %s%lld, the CPU %s%lld", text, (long long)r,
                     null ? "NULL " : "", (long long)v.i, want_null[r] ? "NULL " : "",
                     (long long)want[r].i);
    }
    if (failed != (cpu_rc != SL_OK))
        fail_msg("%s: the program %s, the CPU %s", text, failed ? "fails" : "does not fail",
                 cpu_rc != SL_OK ? "fails" : "does not");
    sl__free(want, sizeof *want * (size_t)(n + 1));
    sl__free(want_null, (size_t)n + 1);
    sl__free(x, sizeof *x);
    sl__expr_free(e);
    return true;
}

SL_TEST(type_cases_agree_with_the_cpu)
{
    sl_table_t *t = input_table();
    sl_batch_t *b = sl_table_batch(t, 0);
    int n = (int)(sizeof et_cases / sizeof et_cases[0]), compiled = 0;
    for (int k = 0; k < n; k++)
        compiled += program_agrees(et_cases[k].expr, b);
    print_message("%d of %d type cases compile to GPU programs and agree\n", compiled, n);
    assert_true(compiled >= n / 2);
    sl_table_unref(t);
}

SL_TEST(random_columns_agree_with_the_cpu)
{
    static const int64_t sizes[] = {3000, 1, 0};
    int n = (int)(sizeof xr_exprs / sizeof xr_exprs[0]);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        sl_batch_t *b = xr_batch(sizes[s], 42 + s);
        for (int k = 0; k < n; k++)
            if (!program_agrees(xr_exprs[k], b))
                fail_msg("%s is not compiled to a GPU program", xr_exprs[k]);
        sl_batch_unref(b);
    }
    print_message("%d expressions agree on 3000, 1 and 0 rows\n", n);
}

/* Every expression of `taken` compiles, agrees with the CPU, and is counted in *counter
 * (taken by the loop named `what`, which then agreed with the program); none of
 * `refused` is: on random columns of 3000, 1 and 0 rows. */
static void check_taken(const char *const *taken, size_t n_taken, const char *const *refused,
                        size_t n_refused, const int *counter, const char *what)
{
    static const int64_t sizes[] = {3000, 1, 0};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        sl_batch_t *b = xr_batch(sizes[s], 7 + s);
        for (size_t k = 0; k < n_taken + n_refused; k++) {
            const char *text = k < n_taken ? taken[k] : refused[k - n_taken];
            int before = *counter;
            assert_true(program_agrees(text, b));
            if (*counter != before + (k < n_taken))
                fail_msg("%s is %staken as %s", text, k < n_taken ? "not " : "", what);
        }
        sl_batch_unref(b);
    }
}

/* Filters that are ORs of ANDs of simple tests are recognized (and agree with the
 * program on random columns with nulls and extremes, on 3000, 1 and 0 rows); those with
 * a test the program must run (a converted column, a wide decimal, an unsigned 64-bit
 * column, a constant past 64 bits at the column's scale, NOT, IN, an AND over an OR)
 * are not. */
SL_TEST(and_of_simple_tests_agrees_with_the_program)
{
    static const char *const taken[] = {
        "a > b", "d <= e", "dt BETWEEN DATE '1990-01-01' AND DATE '2010-12-31'", "dc = 'red'",
        "dt >= DATE '1994-01-01' AND dt < DATE '1995-01-01' AND d BETWEEN 0.05 AND 0.07 "
        "AND d < 24",
        "24 > d AND 10.5 <= e AND -3 < c", "b <> 3 AND (c <> 0 AND dc IN ('red', 'blue'))",
        "a < 9223372036854775807 AND a > -9223372036854775807 AND a = a",
        "d > -92233720368547758.08 AND e < 92233720368547758.07", "bo = true AND dt <= dt",
        "b > 0 OR c < 0",
        "(a > b AND dc = 'red') OR (c < 0 AND d > 10.5) OR dt < DATE '1975-01-01'",
        "a = 5 OR (b <> 3 AND c <> 0 AND e <= d) OR (dc = 'blue' OR dc > 'p')",
    };
    static const char *const refused[] = {
        "w > d", "u > 5", "d < 100000000000000000.5", "NOT (b < c)", "b IN (1, 2)",
        "bo AND b > 0", "dt < ts", "f < 1.5 AND b > 0", "b + 1 > c",
        "(b > 0 OR c < 0) AND a > 0", "a > 0 AND (b > 0 OR c < 0)", "dc IS NULL OR b > 0",
    };
    check_taken(taken, sizeof taken / sizeof taken[0], refused,
                sizeof refused / sizeof refused[0], &conj_programs,
                "an OR of ANDs of simple tests");
}

/* Programs of integer-like and 64-bit decimal arithmetic, comparisons and AND/OR/NOT
 * run in registers (expr_reg.h) and agree with the program on every row they answer
 * (random columns with nulls and extremes, 3000, 1 and 0 rows); rows past 64 bits or
 * at a decimal's precision are left to the interpreter; floats, strings, wide or
 * unsigned 64-bit columns, division, CASE, IN and a stack deeper than four are refused. */
SL_TEST(register_programs_agree_with_the_program)
{
    static const char *const taken[] = {
        "a + b", "a - b", "a * b", "b * 3 + c", "-a", "a > b", "c IS NULL",
        "c IS NOT NULL OR b > 0", "NOT (b < c)", "d + 0.05", "d * (1 - e)",
        "d * (1 - e) * (1 + e)", "d > 10.5", "dt + 30", "dt - 7 > DATE '1995-06-01'",
        "bo AND b > 0", "c * c * c * c * c", "a + (b + (c + a))",
    };
    static const char *const refused[] = {
        "a / b", "b % c", "f + 1.5", "u + d", "w - d", "CASE WHEN c > 0 THEN a END",
        "dc = 'red'", "b IN (1, 2)", "a + (b + (c + (a + b)))", "EXTRACT(YEAR FROM dt)",
        "COALESCE(c, b, 0)",
    };
    int64_t rows0 = reg_rows, unsure0 = reg_unsure;
    check_taken(taken, sizeof taken / sizeof taken[0], refused,
                sizeof refused / sizeof refused[0], &reg_programs, "a register program");
    print_message("register programs: %lld rows answered, %lld left to the interpreter\n",
                  (long long)(reg_rows - rows0), (long long)(reg_unsure - unsure0));
    assert_true(reg_rows - rows0 > 10000);
    assert_true(reg_unsure - unsure0 > 0);
}

SL_TEST(random_string_predicates_agree_with_the_cpu)
{
    sl_batch_t *big = xs_batch(2000, 99);
    sl_batch_t *batches[] = {big, xs_batch(1, 5), xs_batch(0, 6), sl__batch_slice(big, 37, 1500)};
    uint64_t seed = 1234;
    int n = 400;
    for (int k = 0; k < n; k++) {
        char where[512];
        xs_predicate(&seed, where, 2);
        for (size_t i = 0; i < sizeof batches / sizeof batches[0]; i++)
            if (!program_agrees(where, batches[i]))
                fail_msg("%s is not compiled to a GPU program", where);
    }
    for (size_t i = 0; i < sizeof batches / sizeof batches[0]; i++)
        sl_batch_unref(batches[i]);
    print_message("%d string predicates agree on 2000, 1, 0 rows and a slice\n", n);
}

/* The GPU's word-at-a-time search (sl__xp_find_words) and its byte-at-a-time one
 * (sl__xp_find_bytes, debug_gpu_generic) against the host's memmem (sl__xp_find) on random strings at every alignment, needles taken from the string or
 * random, empty ones, and starts past the end; each string lies flush against an
 * inaccessible page (before it or after it), so a read outside the string faults. */
SL_TEST(word_search_agrees_with_memmem)
{
    const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    assert_int_equal(mprotect(m, pg, PROT_NONE), 0);
    assert_int_equal(mprotect(m + 2 * pg, pg, PROT_NONE), 0);
    uint64_t seed = 77;
    int64_t hits = 0;
    for (int it = 0; it < 200000; it++) {
        int64_t sn = (int64_t)(xr_next(&seed) % 90);
        char *str = it & 1 ? m + 2 * pg - sn : m + pg; /* flush with the page after or before */
        for (int64_t i = 0; i < sn; i++)
            str[i] = (char)('a' + xr_next(&seed) % 3);
        char w[16];
        int64_t wn = (int64_t)(xr_next(&seed) % 7);
        if (sn > 0 && xr_next(&seed) % 2) { /* a piece of the string */
            int64_t at = (int64_t)(xr_next(&seed) % (uint64_t)sn);
            wn = wn > sn - at ? sn - at : wn;
            memcpy(w, str + at, (size_t)wn);
        } else {
            for (int64_t i = 0; i < wn; i++)
                w[i] = (char)('a' + xr_next(&seed) % 3);
        }
        int64_t from = (int64_t)(xr_next(&seed) % (uint64_t)(sn + 3));
        int64_t want = from <= sn ? sl__xp_find(str, sn, from, w, wn) : -1;
        int64_t got = sl__xp_find_words(str, sn, from, w, wn);
        if (from <= sn)
            assert_int_equal(sl__xp_find_bytes(str, sn, from, w, wn), want);
        if (got != want)
            fail_msg("find '%.*s' in '%.*s' from %lld: %lld, memmem %lld", (int)wn, w, (int)sn,
                     str, (long long)from, (long long)got, (long long)want);
        hits += got >= 0;
    }
    munmap(m, 3 * pg);
    print_message("200000 searches, %lld found\n", (long long)hits);
    assert_true(hits > 50000);
}

SL_TEST(refusals_say_why)
{
    static const char *const refused[][2] = {
        {"CAST(b AS float64) > 1.5", "CAST"},
        {"dt + INTERVAL '1' MONTH > DATE '2000-01-01'", "interval"},
        {"SUBSTRING(s, 1, 2) = 'ab'", "SUBSTRING"},
        {"s", "string result"},
    };
    enum sl_type types[] = {SL_TYPE_INT32, SL_TYPE_DATE32, SL_TYPE_UTF8};
    const char *names[] = {"b", "dt", "s"};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 3, names, types, 0));
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        char err[400], why[200];
        struct sl__expr *e;
        SL_ASSERT_OK(sl__expr_parse(refused[k][0], 0, -1, &e, err, sizeof err));
        SL_ASSERT_OK(sl__expr_bind(e, b->schema, err, sizeof err));
        struct sl__xp *x = sl__malloc(sizeof *x);
        assert_int_equal(sl__xp_compile(e, b->schema, x, why, sizeof why), SL_EUNSUPPORTED);
        if (!strcasestr(why, refused[k][1]))
            fail_msg("%s: the reason \"%s\" does not name %s", refused[k][0], why, refused[k][1]);
        sl__free(x, sizeof *x);
        sl__expr_free(e);
    }
    sl_batch_unref(b);
}

/* The columns of every TPC-H table (plans/tpch/schema.txt: "table col:type, ..." lines;
 * the names are unique across tables; decimals are all decimal(15,2)) as one schema. */
static sl_schema_t *tpch_schema(void)
{
    FILE *f = fopen(SL_TPCH_PLANS_DIR "/schema.txt", "r");
    assert_non_null(f);
    char line[2048], names[128][48];
    enum sl_type types[128];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char *at = strchr(line, ' ');
        for (char *tok = strtok(at, ", \n"); tok && n < 128; tok = strtok(NULL, ", \n")) {
            char *colon = strchr(tok, ':');
            if (!colon) /* the "2)" of "decimal(15,2)" */
                continue;
            *colon = 0;
            if (strncmp(colon + 1, "decimal", 7) == 0)
                types[n] = sl_type_decimal(15, 2);
            else
                SL_ASSERT_OK(sl_type_parse(colon + 1, &types[n]));
            snprintf(names[n++], sizeof names[0], "%s", tok);
        }
    }
    fclose(f);
    sl_schema_t *sc = sl__schema_new(n);
    for (int i = 0; i < n; i++)
        SL_ASSERT_OK(sl__schema_set(sc, i, names[i], types[i]));
    return sc;
}

/* Whether expression `text` binds over sc and reads a utf8 column; then whether it
 * compiles (*compiled). */
static bool reads_utf8(const char *text, const sl_schema_t *sc, bool *compiled)
{
    char err[400];
    struct sl__expr *e;
    if (sl__expr_parse(text, 0, -1, &e, err, sizeof err) < 0)
        fail_msg("%s: %s", text, err);
    bool utf8 = false;
    if (sl__expr_bind(e, sc, err, sizeof err) == SL_OK) /* else: a computed column's */
        for (int i = 0; i < e->n_nodes; i++)
            utf8 |= e->nodes[i].op == EX_COL && sc->fields[e->nodes[i].col].type == SL_TYPE_UTF8;
    struct sl__xp *x = sl__malloc(sizeof *x);
    *compiled = utf8 && sl__xp_compile(e, sc, x, err, sizeof err) == SL_OK;
    sl__free(x, sizeof *x);
    sl__expr_free(e);
    return utf8;
}

/* Counts expression `text` (reading utf8 columns) into *reading and *compiled; fails
 * when it reads them and does not compile (SUBSTRING aside). */
static void check_tpch_expr(int q, const char *text, const sl_schema_t *sc, int *reading,
                            int *compiled)
{
    bool ok;
    if (!reads_utf8(text, sc, &ok))
        return;
    ++*reading;
    *compiled += ok;
    if (!ok && !strstr(text, "SUBSTRING"))
        fail_msg("q%02d: %s does not compile to a GPU program", q, text);
}

/* The expressions of a project's columns option: its "name = expression" items (split at
 * commas outside parentheses and quotes). */
static void check_tpch_columns(int q, char *text, const sl_schema_t *sc, int *reading,
                               int *compiled)
{
    int depth = 0;
    bool quoted = false;
    char *item = text;
    for (char *p = text;; p++) {
        if (*p == '\'')
            quoted = !quoted;
        depth += !quoted && *p == '(';
        depth -= !quoted && *p == ')';
        if (*p && (*p != ',' || depth || quoted))
            continue;
        char end = *p;
        *p = 0;
        size_t name = strspn(item, " abcdefghijklmnopqrstuvwxyz_0123456789");
        char *eq = strstr(item, " = ");
        if (eq && item + name >= eq)
            check_tpch_expr(q, eq + 3, sc, reading, compiled);
        if (!end)
            return;
        item = p + 1;
    }
}

SL_TEST(tpch_string_predicates_compile)
{
    sl_schema_t *sc = tpch_schema();
    int reading = 0, compiled = 0;
    for (int q = 1; q <= 22; q++) {
        char path[512], line[2048];
        snprintf(path, sizeof path, SL_TPCH_PLANS_DIR "/q%02d.plan", q);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        while (fgets(line, sizeof line, f)) {
            /* the option's text ends at the next double quote (other options follow) */
            char *w = strstr(line, "where=\""), *c = strstr(line, "columns=\"");
            char *text = w ? w + 7 : c ? c + 9 : NULL, *end = text ? strchr(text, '"') : NULL;
            if (line[0] == '#' || !end)
                continue;
            *end = 0;
            if (w)
                check_tpch_expr(q, text, sc, &reading, &compiled);
            else
                check_tpch_columns(q, text, sc, &reading, &compiled);
        }
        fclose(f);
    }
    print_message("%d of the %d TPC-H expressions on utf8 columns compile to GPU programs\n",
                  compiled, reading);
    assert_true(compiled >= 4);
    sl__schema_free(sc);
}
