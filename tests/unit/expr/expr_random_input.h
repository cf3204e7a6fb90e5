/* Random input of the expression program tests (host: test_expr_prog.c; GPU:
 * tests/gpu/test_gpu_expr.c): one batch of every fixed-width type the GPU program reads,
 * with about 10% nulls, extremes (INT64_MIN/MAX, NaN, infinities, -0.0, the largest
 * decimals), and a dictionary string column; and the expressions run over it. */
#ifndef SLUICE_TEST_EXPR_RANDOM_INPUT_H
#define SLUICE_TEST_EXPR_RANDOM_INPUT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "sl_test.h"

#define XR_COLS 13
static const char *const xr_names[XR_COLS] = {"a", "b", "c", "f", "g", "d", "e", "w",
                                              "u", "dt", "ts", "bo", "dc"};

static inline enum sl_type xr_type(int c)
{
    static const enum sl_type t[XR_COLS] = {
        SL_TYPE_INT64, SL_TYPE_INT32, SL_TYPE_INT8, SL_TYPE_FLOAT64, SL_TYPE_FLOAT32,
        0, 0, 0, SL_TYPE_UINT64, SL_TYPE_DATE32, SL_TYPE_TIMESTAMP, SL_TYPE_BOOL, SL_TYPE_DICT};
    if (c == 5 || c == 6)
        return sl_type_decimal(15, 2);
    if (c == 7)
        return sl_type_decimal(38, 4);
    return t[c];
}

/* Expressions every GPU program takes (each compiles; some overflow on this data, and
 * must then fail on both devices). */
static const char *const xr_exprs[] = {
    "a + b", "a - b", "a * b", "b * 3 + c", "a / b", "a % b", "b / c", "b % c", "-a", "-b",
    "a > b", "b <= c", "c IS NULL", "c IS NOT NULL OR b > 0", "NOT (b < c)", "a = a",
    "f < g", "f = f", "f >= 0.5", "f + 1.5", "f * g - 2", "f / g", "f % 3.5", "g", "-f",
    "d + 0.05", "d - e", "d * e", "d * (1 - e)", "d * (1 - e) * (1 + e)", "d > 10.5",
    "d <= e", "w - d", "w * 2", "w > d", "u > 5", "u + d", "u = 9223372036854775807",
    "dt < DATE '2000-01-01'", "dt + 30", "dt - 7 > DATE '1995-06-01'", "dt - dt",
    "EXTRACT(YEAR FROM dt)", "EXTRACT(MONTH FROM ts)", "EXTRACT(DAY FROM dt)",
    "ts > DATE '1999-01-01'", "ts <= TIMESTAMP '2001-02-03 04:05:06'", "dt < ts",
    "dt BETWEEN DATE '1990-01-01' AND DATE '2010-12-31'", "b IN (1, 2, 3, -5)",
    "b NOT IN (0, 7)", "d IN (1.5, 2.25, -3)", "f NOT IN (1, 2.5)", "a IN (9223372036854775807)",
    "CASE WHEN b > 0 THEN d ELSE w END", "CASE WHEN c > 0 THEN a END",
    "CASE WHEN bo THEN f WHEN c < 0 THEN 1 ELSE g END", "COALESCE(c, b, 0)",
    "COALESCE(d, 0.5)", "COALESCE(f, g)", "bo AND b > 0", "bo OR c < 0", "NOT bo",
    "dc = 'red'", "dc IN ('red', 'blue')", "dc LIKE 'gr%'", "dc > 'c' AND b > 0",
    "dc <> 'forest' OR dc IS NULL", "a / 0", "b % 7 = 3", "a + a", "c * c * c * c * c",
    "(a > 0 AND b > 0) OR (c < 0 AND f > 0) OR NOT bo",
    "d * 100000000000000000.0 > w",
    /* ORs of ANDs of simple tests (the GPU filter's path without the program, expr_conj.h) */
    "dt >= DATE '1994-01-01' AND dt < DATE '2005-01-01' AND d BETWEEN 0.05 AND 700 AND d < 24",
    "24 > d AND 10.5 <= e AND -3 < c", "b <> 3 AND (c <> 0 AND dc IN ('red', 'blue'))",
    "d > -92233720368547758.08 AND e < 92233720368547758.07 AND a >= b",
    "(b > 0 AND dc = 'red') OR (c < 0 AND d > 10.5) OR dt < DATE '1975-01-01'",
};

static inline uint64_t xr_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A value for row r of column c: mostly small, sometimes extreme. */
static inline void xr_value(int c, uint64_t x, void *at)
{
    static const int64_t ext64[] = {INT64_MAX, INT64_MIN, 0, -1, 1};
    static const double extf[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0};
    bool ext = (x >> 60) == 0, small = (x >> 58) & 1;
    int64_t v = small ? (int64_t)(x % 21) - 10 : (int64_t)(x % 2000001) - 1000000;
    switch (c) {
    case 0: *(int64_t *)at = ext ? ext64[x % 5] : v; break;
    case 1: *(int32_t *)at = ext ? (x & 1 ? INT32_MAX : INT32_MIN) : (int32_t)v; break;
    case 2: *(int8_t *)at = (int8_t)(ext ? (x & 1 ? 127 : -128) : v % 100); break;
    case 3: *(double *)at = ext ? extf[x % 5] : (double)v / 64.0; break;
    case 4: *(float *)at = ext ? (float)extf[x % 5] : (float)v / 8.0f; break;
    case 5: case 6: /* decimal(15,2): up to the largest */
        *(int64_t *)at = ext ? (x & 1 ? 999999999999999LL : -999999999999999LL)
                             : c == 6 ? (int64_t)(x % 11) : v * 7;
        break;
    case 7: { /* decimal(38,4) */
        __int128 d = ext ? ((__int128)1 << 100) * (x & 1 ? 1 : -1) : (__int128)v * 10007;
        memcpy(at, &d, 16);
        break;
    }
    case 8: *(uint64_t *)at = ext ? UINT64_MAX : x % 100; break;
    case 9: *(int32_t *)at = (int32_t)(x % 40000) - 5000; break;          /* days */
    case 10: *(int64_t *)at = (int64_t)(x % 2000000000000000ull) - 300000000000000LL; break;
    case 11: *(uint8_t *)at = x & 1; break;
    default: *(int32_t *)at = (int32_t)(x % 4); break;                    /* dictionary codes */
    }
}

/* n random rows (n == 0 gives an empty batch), seed-reproducible. */
static inline sl_batch_t *xr_batch(int64_t n, uint64_t seed)
{
    enum sl_type types[XR_COLS];
    for (int c = 0; c < XR_COLS; c++)
        types[c] = xr_type(c);
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, XR_COLS, xr_names, types, n));
    static const char chars[] = "redbluegreenforest";
    const int32_t offs[] = {0, 3, 7, 12, 18};
    SL_ASSERT_OK(sl_batch_column_set_dictionary(b, XR_COLS - 1, 4, offs, chars));
    for (int c = 0; c < XR_COLS; c++) {
        char *data = sl_batch_column_data(b, c);
        size_t w = sl_type_width(types[c]);
        uint8_t *valid = NULL;
        for (int64_t r = 0; r < n; r++) {
            uint64_t x = xr_next(&seed);
            xr_value(c, x, data + (size_t)r * w);
            if (x % 10 == 3 && c != 0) { /* column a stays without nulls */
                if (!valid)
                    valid = sl_batch_column_validity(b, c);
                valid[r >> 3] &= (uint8_t) ~(1u << (r & 7));
            }
        }
    }
    return b;
}

#endif /* SLUICE_TEST_EXPR_RANDOM_INPUT_H */
