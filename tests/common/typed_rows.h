/* Test helpers for columns of every type: build a one-batch table from text cells, run
 * plan text over it, and print result rows as text ("a|NULL|12.50") to compare with
 * expectations written from SQL (DuckDB) semantics. Header-only, for unit tests. */
#ifndef SLUICE_TEST_TYPED_ROWS_H
#define SLUICE_TEST_TYPED_ROWS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/sluice.h>

#include "sl_test.h"

#define TR_MAX_ROWS 64

/* Column c of b gets cells[0..n): "NULL", an integer (decimals: the scaled integer),
 * a float, or a string (string types). DICT columns: the cells are the strings, coded
 * into a dictionary built in reverse order of first appearance (so codes do not follow
 * string order). */
static inline void tr_fill(sl_batch_t *b, int c, const char *const *cells, int n)
{
    struct sl_column col;
    SL_ASSERT_OK(sl_batch_column(b, c, &col));
    enum sl_type t = col.type;
    uint8_t *valid = NULL;
    for (int i = 0; i < n; i++)
        if (!strcmp(cells[i], "NULL") && !valid)
            valid = sl_batch_column_validity(b, c);
    for (int i = 0; valid && i < n; i++)
        if (!strcmp(cells[i], "NULL"))
            valid[i >> 3] &= (uint8_t)~(1u << (i & 7));
    void *d = sl_batch_column_data(b, c);
    if (t == SL_TYPE_UTF8 || t == SL_TYPE_LARGE_UTF8) {
        int64_t total = 0;
        for (int i = 0; i < n; i++)
            total += strcmp(cells[i], "NULL") ? (int64_t)strlen(cells[i]) : 0;
        char *chars = sl_batch_column_chars(b, c, total);
        assert_true(chars != NULL || total == 0);
        d = sl_batch_column_data(b, c);
        int64_t at = 0;
        for (int i = 0; i < n; i++) {
            if (strcmp(cells[i], "NULL")) {
                memcpy(chars + at, cells[i], strlen(cells[i]));
                at += (int64_t)strlen(cells[i]);
            }
            if (t == SL_TYPE_UTF8)
                ((int32_t *)d)[i + 1] = (int32_t)at;
            else
                ((int64_t *)d)[i + 1] = at;
        }
        return;
    }
    if (t == SL_TYPE_DICT) {
        const char *uniq[TR_MAX_ROWS];
        int nu = 0;
        for (int i = 0; i < n; i++) {
            int u = 0;
            while (u < nu && strcmp(uniq[u], cells[i]))
                u++;
            if (u == nu && strcmp(cells[i], "NULL"))
                uniq[nu++] = cells[i];
        }
        int32_t offs[TR_MAX_ROWS + 1] = {0};
        char chars[TR_MAX_ROWS * 16];
        for (int u = 0; u < nu; u++) { /* entry u holds uniq[nu - 1 - u] */
            size_t l = strlen(uniq[nu - 1 - u]);
            memcpy(chars + offs[u], uniq[nu - 1 - u], l);
            offs[u + 1] = offs[u] + (int32_t)l;
        }
        SL_ASSERT_OK(sl_batch_column_set_dictionary(b, c, nu, offs, chars));
        for (int i = 0; i < n; i++) {
            int u = 0;
            while (u < nu && strcmp(uniq[u], cells[i]))
                u++;
            ((int32_t *)d)[i] = u < nu ? nu - 1 - u : 0;
        }
        return;
    }
    for (int i = 0; i < n; i++) {
        const char *s = strcmp(cells[i], "NULL") ? cells[i] : "0";
        switch (SL_TYPE_ID(t)) {
        case SL_TYPE_FLOAT32: ((float *)d)[i] = strtof(s, NULL); break;
        case SL_TYPE_FLOAT64: ((double *)d)[i] = strtod(s, NULL); break;
        default: {
            __int128 v = strtoll(s, NULL, 10);
            memcpy((char *)d + (size_t)i * sl_type_width(t), &v, sl_type_width(t));
        }
        }
    }
}

/* A table of one batch of n rows; cols[c][i] is row i of column c. */
static inline sl_table_t *tr_table(int n_cols, const char *const *names, const enum sl_type *types,
                            const char *const *const *cols, int n)
{
    sl_batch_t *b;
    sl_table_t *t;
    SL_ASSERT_OK(sl_batch_create(&b, n_cols, names, types, n));
    for (int c = 0; c < n_cols; c++)
        tr_fill(b, c, cols[c], n);
    SL_ASSERT_OK(sl_table_create(&t));
    SL_ASSERT_OK(sl_table_append(t, b));
    sl_batch_unref(b);
    return t;
}

/* Row r of column c as text into buf. */
static inline void tr_cell(const sl_batch_t *b, int c, int64_t r, char *buf, size_t cap)
{
    struct sl_column col;
    struct sl_strings s;
    SL_ASSERT_OK(sl_batch_column(b, c, &col));
    SL_ASSERT_OK(sl_batch_column_strings(b, c, &s));
    int64_t i = col.offset + r;
    if (col.validity && !(col.validity[i >> 3] >> (i & 7) & 1)) {
        snprintf(buf, cap, "NULL");
        return;
    }
    const void *x = (const char *)col.data + (size_t)i * sl_type_width(col.type);
    switch (SL_TYPE_ID(col.type)) {
    case SL_TYPE_UTF8: {
        const int32_t *o = col.data;
        snprintf(buf, cap, "%.*s", (int)(o[i + 1] - o[i]), s.chars + o[i]);
        break;
    }
    case SL_TYPE_LARGE_UTF8: {
        const int64_t *o = col.data;
        snprintf(buf, cap, "%.*s", (int)(o[i + 1] - o[i]), s.chars + o[i]);
        break;
    }
    case SL_TYPE_DICT: {
        int32_t k = ((const int32_t *)col.data)[i];
        snprintf(buf, cap, "%.*s", (int)(s.dict_offsets[k + 1] - s.dict_offsets[k]),
                 s.dict_chars + s.dict_offsets[k]);
        break;
    }
    case SL_TYPE_FLOAT32: snprintf(buf, cap, "%g", *(const float *)x); break;
    case SL_TYPE_FLOAT64: snprintf(buf, cap, "%.10g", *(const double *)x); break;
    case SL_TYPE_UINT64: snprintf(buf, cap, "%llu", *(const unsigned long long *)x); break;
    default: {
        __int128 v = 0;
        size_t w = sl_type_width(col.type);
        memcpy(&v, x, w);
        if (w < 16 && SL_TYPE_ID(col.type) != SL_TYPE_BOOL && SL_TYPE_ID(col.type) != SL_TYPE_UINT8 &&
            SL_TYPE_ID(col.type) != SL_TYPE_UINT16 && SL_TYPE_ID(col.type) != SL_TYPE_UINT32) {
            int sh = 128 - 8 * (int)w; /* sign-extend */
            v = (__int128)((unsigned __int128)v << sh) >> sh;
        }
        char tmp[48];
        int at = 47;
        tmp[at] = 0;
        unsigned __int128 u = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;
        do {
            tmp[--at] = (char)('0' + (int)(u % 10));
            u /= 10;
        } while (u);
        if (v < 0)
            tmp[--at] = '-';
        snprintf(buf, cap, "%s", tmp + at);
    }
    }
}

/* Every row of t as "cell|cell|..." into rows (at most TR_MAX_ROWS); returns the count. */
static inline int tr_rows(const sl_table_t *t, char rows[][160])
{
    int n = 0;
    for (int64_t k = 0; k < sl_table_num_batches(t); k++) {
        const sl_batch_t *b = sl_table_batch(t, k);
        for (int64_t r = 0; r < sl_batch_num_rows(b); r++, n++) {
            assert_true(n < TR_MAX_ROWS);
            rows[n][0] = 0;
            for (int c = 0; c < sl_batch_num_columns(b); c++) {
                char cell[64];
                tr_cell(b, c, r, cell, sizeof cell);
                if (c)
                    strcat(rows[n], "|");
                strcat(rows[n], cell);
            }
        }
    }
    return n;
}

static inline int tr_cmp_rows(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* qsort order of an array of char pointers. */
static inline int tr_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs plan text with table `in` registered as "t"; *out gets result "r" (NULL if the
 * query failed); returns the code of the first failing step. */
static inline int tr_run(sl_engine_t *e, sl_table_t *in, const char *plan_text, sl_table_t **out)
{
    sl_plan_t *p;
    sl_query_t *q = NULL;
    *out = NULL;
    SL_ASSERT_OK(sl_plan_create(&p));
    SL_ASSERT_OK(sl_plan_register_table(p, "t", in));
    int rc = sl_plan_parse(p, plan_text, "test.plan");
    if (rc == SL_OK)
        rc = sl_query_create(e, p, &q);
    if (rc == SL_OK)
        rc = sl_query_run(q);
    if (rc == SL_OK)
        rc = sl_query_result(q, "r", out);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return rc;
}

/* Asserts that result r of plan_text over `in` has exactly the rows want[0..n) (in
 * order if `ordered`, else as a multiset). */
static inline void tr_expect(sl_engine_t *e, sl_table_t *in, const char *plan_text,
                      const char *const *want, int n, int ordered)
{
    sl_table_t *out;
    SL_ASSERT_OK(tr_run(e, in, plan_text, &out));
    static char got[TR_MAX_ROWS][160], exp[TR_MAX_ROWS][160];
    int m = tr_rows(out, got);
    sl_table_unref(out);
    for (int i = 0; i < n; i++)
        snprintf(exp[i], sizeof exp[i], "%s", want[i]);
    if (!ordered) {
        qsort(got, (size_t)m, sizeof got[0], tr_cmp_rows);
        qsort(exp, (size_t)n, sizeof exp[0], tr_cmp_rows);
    }
    for (int i = 0; i < m || i < n; i++) {
        if (i >= m || i >= n || strcmp(got[i], exp[i]))
            fail_msg("%s\nrow %d: got '%s', want '%s' (%d rows, want %d)", plan_text, i,
                     i < m ? got[i] : "(none)", i < n ? exp[i] : "(none)", m, n);
    }
}

#endif /* SLUICE_TEST_TYPED_ROWS_H */
