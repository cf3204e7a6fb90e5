/* Random string input of the expression program tests (host: test_expr_prog.c; GPU:
 * tests/gpu/test_gpu_expr_str.c): a batch with utf8 columns s and t, a large_utf8
 * column ls and an int32 column k. Strings are 0..60 bytes (empty ones often) of a few
 * ASCII letters, '%', '_', two- and three-byte UTF-8 letters and now and then a stray
 * lead byte (UTF-8 cut short: LIKE's '_' steps over it as the CPU does); about 10% of s,
 * t and ls are NULL. Random predicates over them: comparisons with literals and between
 * columns, IN lists, LIKE and NOT LIKE with prefix, suffix, contains,
 * '%a%b%' and '_' patterns, IS [NOT] NULL, LENGTH, CASE and COALESCE of strings, joined
 * by AND, OR and NOT. */
#ifndef SLUICE_TEST_EXPR_STR_INPUT_H
#define SLUICE_TEST_EXPR_STR_INPUT_H

#include <stdio.h>
#include <string.h>

#include "expr_random_input.h"

/* Pieces strings and patterns are made of: "é" and "€" are two and three bytes. */
static const char *const xs_pieces[] = {"a", "b", "c", "ab", "\xc3\xa9", "\xe2\x82\xac", " ",
                                        "%", "_", "\xc3"};
#define XS_PIECES 10

/* Up to `max` bytes of random pieces (stray lead bytes only when `stray`) into out. */
static inline int xs_string(uint64_t *seed, char *out, int max, bool stray)
{
    int len = 0, want = (int)(xr_next(seed) % (uint64_t)(max + 1));
    if (xr_next(seed) % 5 == 0)
        want = 0;
    while (len < want) {
        int k = (int)(xr_next(seed) % (stray ? XS_PIECES : XS_PIECES - 1));
        int pl = (int)strlen(xs_pieces[k]);
        if (len + pl > max)
            break;
        memcpy(out + len, xs_pieces[k], (size_t)pl);
        len += pl;
    }
    return len;
}

/* Appends row r's string to column c (utf8 or large_utf8) of b; *at: bytes so far. */
static inline void xs_put(sl_batch_t *b, int c, int64_t r, const char *s, int len, int64_t *at)
{
    enum sl_type t = b->schema->fields[c].type;
    char *chars = sl_batch_column_chars(b, c, *at + len + 1);
    memcpy(chars + *at, s, (size_t)len);
    *at += len;
    if (t == SL_TYPE_LARGE_UTF8)
        ((int64_t *)sl_batch_column_data(b, c))[r + 1] = *at;
    else
        ((int32_t *)sl_batch_column_data(b, c))[r + 1] = (int32_t)*at;
}

/* n random rows (n == 0: an empty batch). */
static inline sl_batch_t *xs_batch(int64_t n, uint64_t seed)
{
    const char *names[] = {"s", "t", "ls", "k"};
    enum sl_type types[] = {SL_TYPE_UTF8, SL_TYPE_UTF8, SL_TYPE_LARGE_UTF8, SL_TYPE_INT32};
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 4, names, types, n));
    int64_t at[3] = {0, 0, 0};
    int32_t *k = sl_batch_column_data(b, 3);
    for (int64_t r = 0; r < n; r++) {
        for (int c = 0; c < 3; c++) {
            char buf[64];
            int len = xs_string(&seed, buf, 60, true);
            xs_put(b, c, r, buf, len, &at[c]);
            if (xr_next(&seed) % 10 == 0) {
                uint8_t *valid = sl_batch_column_validity(b, c);
                valid[r >> 3] &= (uint8_t) ~(1u << (r & 7));
            }
        }
        k[r] = (int32_t)(xr_next(&seed) % 21) - 10;
    }
    return b;
}

/* A quoted literal of 0..max random bytes (no stray bytes: the text stays one literal). */
static inline int xs_literal(uint64_t *seed, char *out, int max)
{
    char s[64];
    int len = xs_string(seed, s, max, false);
    out[0] = '\'';
    memcpy(out + 1, s, (size_t)len);
    out[len + 1] = '\'';
    out[len + 2] = 0;
    return len + 2;
}

/* A LIKE pattern: one of the fast-path shapes or random pieces with '%' and '_'. */
static inline void xs_pattern(uint64_t *seed, char *out)
{
    char w[32], v[32];
    int wl = xs_string(seed, w, 4, false), vl = xs_string(seed, v, 3, false);
    w[wl] = v[vl] = 0;
    switch (xr_next(seed) % 8) {
    case 0: sprintf(out, "'%s%%'", w); break;
    case 1: sprintf(out, "'%%%s'", w); break;
    case 2: sprintf(out, "'%%%s%%'", w); break;
    case 3: sprintf(out, "'%%%s%%%s%%'", w, v); break;
    case 4: sprintf(out, "'%s_%s%%'", w, v); break;
    case 5: sprintf(out, "'%s'", w); break;
    case 6: sprintf(out, "'%s%%%s'", w, v); break;
    default: xs_literal(seed, out, 8); break;
    }
}

/* One random string predicate into out (room for 512 bytes); depth bounds nesting. */
static inline void xs_predicate(uint64_t *seed, char *out, int depth)
{
    static const char *const cols[] = {"s", "t", "ls"};
    static const char *const ops[] = {"=", "<>", "<", "<=", ">", ">="};
    const char *c = cols[xr_next(seed) % 3];
    char lit[80], a[256], b[256];
    switch (xr_next(seed) % (depth > 0 ? 11 : 8)) {
    case 0: case 1:
        xs_literal(seed, lit, 6);
        sprintf(out, "%s %s %s", c, ops[xr_next(seed) % 6], lit);
        break;
    case 2: {
        int n = 1 + (int)(xr_next(seed) % 4), at = 0;
        char list[300];
        for (int i = 0; i < n; i++) {
            if (i)
                at += sprintf(list + at, ", ");
            at += xs_literal(seed, list + at, 4);
        }
        sprintf(out, "%s %sIN (%s)", c, xr_next(seed) % 2 ? "NOT " : "", list);
        break;
    }
    case 3: case 4:
        xs_pattern(seed, lit);
        sprintf(out, "%s %sLIKE %s", c, xr_next(seed) % 3 == 0 ? "NOT " : "", lit);
        break;
    case 5: sprintf(out, "%s IS %sNULL", c, xr_next(seed) % 2 ? "NOT " : ""); break;
    case 6:
        sprintf(out, "LENGTH(%s) %s %d", c, ops[xr_next(seed) % 6], (int)(xr_next(seed) % 12));
        break;
    case 7: sprintf(out, "s %s %s", ops[xr_next(seed) % 6], xr_next(seed) % 2 ? "t" : "ls"); break;
    case 8:
        xs_pattern(seed, lit);
        sprintf(out, "COALESCE(%s, 'ab') LIKE %s", c, lit);
        break;
    case 9:
        xs_literal(seed, lit, 4);
        sprintf(out, "CASE WHEN k > 0 THEN s ELSE ls END %s %s", ops[xr_next(seed) % 6], lit);
        break;
    default:
        xs_predicate(seed, a, depth - 1);
        xs_predicate(seed, b, depth - 1);
        snprintf(out, 512, "(%.200s) %s %s(%.200s)", a, xr_next(seed) % 2 ? "AND" : "OR",
                 xr_next(seed) % 3 == 0 ? "NOT " : "", b);
        break;
    }
}

#endif /* SLUICE_TEST_EXPR_STR_INPUT_H */
