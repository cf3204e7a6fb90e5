/* Tests the GPU filter (operators/expr/expr_cuda.c, kernels/expr) against the CPU: the
 * random columns of expr_random_input.h (every fixed-width type, ~10% nulls, extremes,
 * a dictionary column; batches of many rows, one row and none) filtered by every
 * expression there on a CPU engine and on a GPU engine (placement forced), the kept
 * rows compared as multisets of whole rows, failures (overflow) by their code; and the
 * DuckDB-checked boolean type cases (expr_types_cases.h, without the utf8 column) on the
 * GPU against DuckDB's answers; the same for project (every computed column, all type
 * cases). The operators must have run on the GPU where the program takes the
 * expression. A filter over 21 columns (its gather in two kernels) equals the CPU's.
 * Skipped without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_int.h"
#include "expr/expr_prog.h"
#include "gpu_expr_util.h"
#include "gpu_test.h"
#include "sl_test.h"

#include "../unit/expr/expr_test_util.h"
#include "../unit/expr/expr_types_cases.h"
#include "../unit/expr/expr_types_input.h"
#include "../unit/expr/expr_random_input.h"

static sl_table_t *filter_on(sl_engine_t *e, sl_table_t *in, const char *where, int *rc,
                             int *mask, char *msg, size_t len)
{
    return op_on(e, in, "filter", "where", where, rc, mask, msg, len);
}

/* The predicate for expression x: itself when it is a condition, else "x IS NOT NULL"
 * (its nulls and errors still show). */
static void predicate_of(const char *x, const sl_schema_t *schema, char *buf, size_t len)
{
    char err[400];
    struct sl__expr *e;
    SL_ASSERT_OK(sl__expr_parse(x, 0, -1, &e, err, sizeof err));
    SL_ASSERT_OK(sl__expr_bind(e, schema, err, sizeof err));
    if (sl__expr_kind(e) == SL__VK_BOOL)
        snprintf(buf, len, "%s", x);
    else
        snprintf(buf, len, "(%s) IS NOT NULL", x);
    sl__expr_free(e);
}

SL_TEST(random_projects_match_the_cpu)
{
    NEED_GPU();
    sl_table_t *t = batches_table(xr_batch, 7);
    sl_engine_t *cpu = engine(SL_PLACE_CPU, 0), *gpu = engine(SL_PLACE_GPU, -1);
    int n = (int)(sizeof xr_exprs / sizeof xr_exprs[0]), failing = 0;
    int64_t rows = 0;
    for (int k = 0; k < n; k++) {
        char cols[400], m1[400], m2[400];
        snprintf(cols, sizeof cols, "a, dc, v = %s", xr_exprs[k]);
        int rc1, rc2, mask1 = 0, mask2 = 0;
        sl_table_t *want = op_on(cpu, t, "project", "columns", cols, &rc1, &mask1, m1, sizeof m1);
        sl_table_t *got = op_on(gpu, t, "project", "columns", cols, &rc2, &mask2, m2, sizeof m2);
        /* A projection that only selects fixed-width columns of a host batch stays on the
         * host (the next GPU stage uploads just those columns): "v = g" is one. */
        const char *x = xr_exprs[k];
        bool selection = strspn(x, "abcdefghijklmnopqrstuvwxyz") == strlen(x);
        failing += !same_outcome(cols, want, rc1, m1, got, rc2, m2, mask2, !selection, &rows);
    }
    print_message("%d projections equal on the GPU and the CPU (%d fail alike, %lld rows)\n", n,
                  failing, (long long)rows);
    assert_true(failing > 0 && failing < n);
    sl_table_unref(t);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

SL_TEST(random_filters_match_the_cpu)
{
    NEED_GPU();
    sl_table_t *t = batches_table(xr_batch, 7);
    sl_engine_t *cpu = engine(SL_PLACE_CPU, 0), *gpu = engine(SL_PLACE_GPU, -1);
    const sl_schema_t *schema = sl_table_batch(t, 0)->schema;
    int n = (int)(sizeof xr_exprs / sizeof xr_exprs[0]), failing = 0;
    int64_t kept = 0;
    for (int k = 0; k < n; k++) {
        char where[400], m1[400], m2[400];
        predicate_of(xr_exprs[k], schema, where, sizeof where);
        int rc1, rc2, mask1 = 0, mask2 = 0;
        sl_table_t *want = filter_on(cpu, t, where, &rc1, &mask1, m1, sizeof m1);
        sl_table_t *got = filter_on(gpu, t, where, &rc2, &mask2, m2, sizeof m2);
        failing += !same_outcome(where, want, rc1, m1, got, rc2, m2, mask2, true, &kept);
    }
    print_message("%d predicates equal on the GPU and the CPU (%d fail alike, %lld rows kept)\n",
                  n, failing, (long long)kept);
    assert_true(failing > 0 && failing < n);
    sl_table_unref(t);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

/* A batch of 21 columns (more than one gather kernel takes: SL_K_GATHER_COLS) of widths
 * 1, 2, 4, 8 and 16 bytes, every other one with about 10% nulls. */
#define WIDE_COLS 21
static sl_batch_t *wide_batch(int64_t n, uint64_t seed)
{
    static const enum sl_type cycle[5] = {SL_TYPE_INT8, SL_TYPE_INT16, SL_TYPE_INT32,
                                          SL_TYPE_INT64, SL_TYPE_DATE32};
    static char names[WIDE_COLS][8];
    const char *np[WIDE_COLS];
    enum sl_type types[WIDE_COLS];
    for (int c = 0; c < WIDE_COLS; c++) {
        snprintf(names[c], sizeof names[c], "w%d", c);
        np[c] = names[c];
        types[c] = c % 6 == 5 ? sl_type_decimal(38, 4) : cycle[c % 6 % 5];
    }
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, WIDE_COLS, np, types, n));
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int c = 0; c < WIDE_COLS; c++) {
        uint8_t *data = sl_batch_column_data(b, c);
        size_t w = sl_type_width(types[c]);
        for (int64_t i = 0; i < n * (int64_t)w; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            data[i] = (uint8_t)x;
        }
        if (types[c] == SL_TYPE_DATE32) /* valid days */
            for (int64_t i = 0; i < n; i++)
                ((int32_t *)data)[i] %= 100000;
        if (c % 2 == 1) {
            uint8_t *valid = sl_batch_column_validity(b, c);
            for (int64_t i = 0; i < n; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                if (x % 10 == 0)
                    valid[i / 8] &= (uint8_t) ~(1u << (i % 8));
            }
        }
    }
    return b;
}

/* The filter's gather in more than one kernel (21 columns, 16 a kernel): the kept rows
 * of every column equal the CPU's, nulls included. */
SL_TEST(wide_filters_match_the_cpu)
{
    NEED_GPU();
    sl_table_t *t = batches_table(wide_batch, 3);
    sl_engine_t *cpu = engine(SL_PLACE_CPU, 0), *gpu = engine(SL_PLACE_GPU, -1);
    static const char *const wheres[] = {"w3 > 0", "w2 < 0 AND w7 > 0", "w1 IS NULL OR w0 > 100"};
    int64_t kept = 0;
    for (size_t k = 0; k < sizeof wheres / sizeof wheres[0]; k++) {
        char m1[400], m2[400];
        int rc1, rc2, mask1 = 0, mask2 = 0;
        sl_table_t *want = filter_on(cpu, t, wheres[k], &rc1, &mask1, m1, sizeof m1);
        sl_table_t *got = filter_on(gpu, t, wheres[k], &rc2, &mask2, m2, sizeof m2);
        assert_true(same_outcome(wheres[k], want, rc1, m1, got, rc2, m2, mask2, true, &kept));
    }
    print_message("%lld rows kept of 21 columns, equal on the GPU and the CPU\n",
                  (long long)kept);
    assert_true(kept > 0);
    sl_table_unref(t);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

/* Type case c through project under GPU placement: every row equals DuckDB's text.
 * Returns 1 when the GPU project computed it, 0 when the CPU did or it reads s. */
static int project_case(sl_engine_t *gpu, sl_table_t *t, const struct et_case *c)
{
    char cols[400], msg[400];
    snprintf(cols, sizeof cols, "id, v = %s", c->expr);
    int rc, mask = 0;
    sl_table_t *res = op_on(gpu, t, "project", "columns", cols, &rc, &mask, msg, sizeof msg);
    if (rc == SL_ENOTFOUND)
        return 0;
    if (rc != SL_OK)
        fail_msg("project %s on the GPU: %s", cols, msg);
    char got[ET_ROWS][96];
    bool seen[ET_ROWS];
    result_texts(res, 1, got, seen);
    for (int r = 0; r < ET_ROWS; r++)
        if (!seen[r] || strcmp(got[r], c->want[r]) != 0)
            fail_msg("%s on the GPU, row %d: got '%s', DuckDB gives '%s'", c->expr, r, got[r],
                     c->want[r]);
    sl_table_unref(res);
    return (mask & 2) != 0;
}

SL_TEST(type_cases_on_the_gpu_equal_duckdb)
{
    NEED_GPU();
    sl_engine_t *cpu = engine(SL_PLACE_CPU, 0), *gpu = engine(SL_PLACE_GPU, -1);
    sl_table_t *full = input_table();
    /* The columns the GPU carries: all but the utf8 column s. */
    sl_table_t *t = run_on(cpu, full, "project",
                           "columns=\"id, i8, u64, f, b, d, ts, p, q, w, ds\"", NULL, NULL, 0);
    int n = (int)(sizeof et_cases / sizeof et_cases[0]), ran = 0, on_gpu = 0, projected = 0;
    for (int k = 0; k < n; k++) {
        const struct et_case *c = &et_cases[k];
        projected += project_case(gpu, t, c);
        if (strcmp(c->type, "BOOLEAN") != 0)
            continue;
        int rc, mask = 0;
        char msg[400];
        sl_table_t *res = filter_on(gpu, t, c->expr, &rc, &mask, msg, sizeof msg);
        if (rc == SL_ENOTFOUND) /* reads s */
            continue;
        if (rc != SL_OK)
            fail_msg("where %s on the GPU: %s", c->expr, msg);
        ran++;
        on_gpu += (mask & 2) != 0;
        sl_batch_t *in = sl_table_batch(t, 0);
        for (int col = 1; col < sl_batch_num_columns(in); col++) {
            char got[ET_ROWS][96], want[96];
            bool seen[ET_ROWS];
            result_texts(res, col, got, seen);
            for (int r = 0; r < ET_ROWS; r++) {
                if (seen[r] != (strcmp(c->want[r], "true") == 0))
                    fail_msg("where %s on the GPU: row %d %s, DuckDB says %s", c->expr, r,
                             seen[r] ? "kept" : "dropped", c->want[r]);
                value_text(in, col, r, want, sizeof want);
                if (seen[r] && strcmp(got[r], want) != 0)
                    fail_msg("where %s on the GPU: column %d of row %d is '%s', was '%s'",
                             c->expr, col, r, got[r], want);
            }
        }
        sl_table_unref(res);
    }
    print_message("%d boolean type cases equal DuckDB's under GPU placement, %d of them run by "
                  "the GPU filter; %d cases projected by the GPU equal DuckDB's\n", ran, on_gpu,
                  projected);
    assert_true(on_gpu > 0 && projected > 0);
    sl_table_unref(t);
    sl_table_unref(full);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}
