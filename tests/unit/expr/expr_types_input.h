/* The input of the expression type tests (expr_types_cases.h, generated from DuckDB) as
 * a table, and results as the generator's text: shared by tests/unit/expr and the GPU
 * expression test. Include expr_types_cases.h first. */
#ifndef SLUICE_TEST_EXPR_TYPES_INPUT_H
#define SLUICE_TEST_EXPR_TYPES_INPUT_H

#include <math.h>
#include <stdio.h>

#include "common/values.h"
#include "expr/expr_int.h"

/* ---------------- input ---------------- */

static inline __int128 dec_parse(const char *t, int scale)
{
    __int128 v = 0;
    int frac = -1;
    bool neg = *t == '-';
    for (t += neg; *t; t++) {
        if (*t == '.') {
            frac = 0;
            continue;
        }
        v = v * 10 + (*t - '0');
        frac += frac >= 0;
    }
    for (int k = frac < 0 ? 0 : frac; k < scale; k++)
        v *= 10;
    return neg ? -v : v;
}

/* Fills column c of the unshared batch bt from et_input. */
static inline void fill_column(sl_batch_t *bt, int c)
{
    enum sl_type t = et_type(c);
    void *data = sl_batch_column_data(bt, c);
    const char *const *in = et_input[c];
    size_t w = sl_type_width(t);
    if (t == SL_TYPE_UTF8) {
        int32_t *off = data;
        int64_t total = 0;
        for (int r = 0; r < ET_ROWS; r++)
            total += in[r] ? (int64_t)strlen(in[r]) : 0;
        char *chars = sl_batch_column_chars(bt, c, total);
        assert_non_null(chars);
        off[0] = 0;
        for (int r = 0; r < ET_ROWS; r++) {
            size_t n = in[r] ? strlen(in[r]) : 0;
            memcpy(chars + off[r], in[r] ? in[r] : "", n);
            off[r + 1] = off[r] + (int32_t)n;
        }
    } else if (t == SL_TYPE_DICT) { /* a dictionary in an order of its own */
        static const char *const dict[] = {"green", "blue", "red", "forest", "unused"};
        int32_t offs[6] = {0};
        char chars[64] = "";
        for (int k = 0; k < 5; k++) {
            strcat(chars, dict[k]);
            offs[k + 1] = (int32_t)strlen(chars);
        }
        SL_ASSERT_OK(sl_batch_column_set_dictionary(bt, c, 5, offs, chars));
        for (int r = 0; r < ET_ROWS; r++) {
            int32_t code = 0;
            for (int k = 0; in[r] && k < 5; k++)
                if (strcmp(in[r], dict[k]) == 0)
                    code = k;
            ((int32_t *)data)[r] = code;
        }
    }
    for (int r = 0; r < ET_ROWS; r++) {
        char *at = (char *)data + (size_t)r * w;
        const char *x = in[r] ? in[r] : "0";
        int64_t v = 0;
        switch (SL_TYPE_ID(t)) {
        case SL_TYPE_INT8: *(int8_t *)at = (int8_t)atoi(x); break;
        case SL_TYPE_UINT64: *(uint64_t *)at = strtoull(x, NULL, 10); break;
        case SL_TYPE_FLOAT64: *(double *)at = strtod(x, NULL); break;
        case SL_TYPE_BOOL: *at = strcmp(x, "true") == 0; break;
        case SL_TYPE_DATE32:
            if (in[r])
                assert_true(ex_parse_date(x, (int64_t)strlen(x), &v));
            *(int32_t *)at = (int32_t)v;
            break;
        case SL_TYPE_TIMESTAMP:
            if (in[r])
                assert_true(ex_parse_timestamp(x, (int64_t)strlen(x), &v));
            *(int64_t *)at = v;
            break;
        case SL_TYPE_DECIMAL: {
            __int128 d = dec_parse(x, sl_type_scale(t));
            if (w == 8)
                *(int64_t *)at = (int64_t)d;
            else
                memcpy(at, &d, 16);
            break;
        }
        default: break;
        }
        if (!in[r]) {
            uint8_t *valid = sl_batch_column_validity(bt, c);
            valid[r >> 3] &= (uint8_t) ~(1u << (r & 7));
        }
    }
}

static inline sl_table_t *input_table(void)
{
    const char *names[ET_COLS + 1] = {"id"};
    enum sl_type types[ET_COLS + 1] = {SL_TYPE_INT64};
    for (int c = 0; c < ET_COLS; c++) {
        names[c + 1] = et_names[c];
        types[c + 1] = et_type(c);
    }
    sl_batch_t *bt;
    SL_ASSERT_OK(sl_batch_create(&bt, ET_COLS + 1, names, types, ET_ROWS));
    for (int r = 0; r < ET_ROWS; r++)
        ((int64_t *)sl_batch_column_data(bt, 0))[r] = r;
    /* Fill through a batch of the value columns alone, then move them over. */
    sl_batch_t *vals;
    SL_ASSERT_OK(sl_batch_create(&vals, ET_COLS, names + 1, types + 1, ET_ROWS));
    for (int c = 0; c < ET_COLS; c++)
        fill_column(vals, c);
    int64_t idx[ET_ROWS];
    for (int r = 0; r < ET_ROWS; r++)
        idx[r] = r;
    for (int c = 0; c < ET_COLS; c++)
        SL_ASSERT_OK(sl__col_take(bt, c + 1, vals, c, idx, ET_ROWS));
    sl_batch_unref(vals);
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    SL_ASSERT_OK(sl_table_append(t, bt));
    sl_batch_unref(bt);
    return t;
}

/* ---------------- results as text (the generator's format) ---------------- */

static inline void value_text(const sl_batch_t *b, int c, int64_t r, char *buf, size_t len)
{
    struct sl__colview v;
    SL_ASSERT_OK(sl__colview_get(b, c, &v));
    if (!sl__colview_valid(&v, r)) {
        snprintf(buf, len, "NULL");
        return;
    }
    const void *at = sl__colview_at(&v, r);
    switch (SL_TYPE_ID(v.c.type)) {
    case SL_TYPE_INT8: snprintf(buf, len, "%d", *(const int8_t *)at); break;
    case SL_TYPE_INT16: snprintf(buf, len, "%d", *(const int16_t *)at); break;
    case SL_TYPE_UINT8: snprintf(buf, len, "%u", *(const uint8_t *)at); break;
    case SL_TYPE_UINT32: snprintf(buf, len, "%u", *(const uint32_t *)at); break;
    case SL_TYPE_INT32: snprintf(buf, len, "%d", *(const int32_t *)at); break;
    case SL_TYPE_INT64: snprintf(buf, len, "%lld", (long long)*(const int64_t *)at); break;
    case SL_TYPE_UINT64: snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)at); break;
    case SL_TYPE_BOOL: snprintf(buf, len, "%s", *(const uint8_t *)at ? "true" : "false"); break;
    case SL_TYPE_FLOAT32:
    case SL_TYPE_FLOAT64: {
        double x = v.c.type == SL_TYPE_FLOAT32 ? *(const float *)at : *(const double *)at;
        if (isnan(x))
            snprintf(buf, len, "nan");
        else
            snprintf(buf, len, "%.17g", x);
        break;
    }
    case SL_TYPE_DATE32: ex_date_text(*(const int32_t *)at, buf, len); break;
    case SL_TYPE_TIMESTAMP: ex_ts_text(*(const int64_t *)at, buf, len); break;
    case SL_TYPE_DECIMAL: {
        __int128 d;
        if (sl_type_width(v.c.type) == 8)
            d = *(const int64_t *)at;
        else
            memcpy(&d, at, 16);
        ex_dec_text(d, sl_type_scale(v.c.type), buf, len);
        break;
    }
    default: {
        int64_t n;
        const char *s = sl__colview_str(&v, r, &n);
        snprintf(buf, len, "%.*s", (int)n, s);
        break;
    }
    }
}

/* The rows of a result as (id, text of column c) in id order. */
static inline void result_texts(sl_table_t *res, int c, char out[ET_ROWS][96], bool seen[ET_ROWS])
{
    memset(seen, 0, ET_ROWS);
    for (int64_t k = 0; res && k < sl_table_num_batches(res); k++) {
        sl_batch_t *b = sl_table_batch(res, k);
        for (int64_t r = 0; r < sl_batch_num_rows(b); r++) {
            struct sl_column idc;
            SL_ASSERT_OK(sl_batch_column(b, 0, &idc));
            int64_t id = ((const int64_t *)idc.data)[idc.offset + r];
            assert_true(id >= 0 && id < ET_ROWS && !seen[id]);
            seen[id] = true;
            value_text(b, c, r, out[id], 96);
        }
    }
}

#endif /* SLUICE_TEST_EXPR_TYPES_INPUT_H */
