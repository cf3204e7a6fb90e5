/* Expressions: decimals. Values evaluate as int128 scaled by their type's scale, so every
 * decimal up to precision 38 is exact; results are checked against their precision (a
 * result that does not fit is SL_EOVERFLOW, never a wrap). */
#include <stdio.h>
#include <string.h>

#include "expr_int.h"

__int128 ex_pow10(int k)
{
    __int128 p = 1;
    for (int i = 0; i < k; i++)
        p *= 10;
    return p;
}

/* Writes the decimal v of scale s into buf ("-12.345"). */
const char *ex_dec_text(__int128 v, int s, char *buf, size_t len)
{
    char d[48];
    int k = 0;
    unsigned __int128 m = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;
    do {
        d[k++] = (char)('0' + (int)(m % 10));
        m /= 10;
    } while (m || k <= s);
    size_t o = 0;
    if (v < 0 && o + 1 < len)
        buf[o++] = '-';
    while (k-- > 0 && o + 2 < len) {
        buf[o++] = d[k];
        if (k == s && s > 0)
            buf[o++] = '.';
    }
    buf[o] = 0;
    return buf;
}

/* The scale operand node x carries (0 for integers). */
static int scale_of(const struct ex_node *x)
{
    return x->vk == SL__VK_DEC ? sl_type_scale(x->type) : 0;
}

const __int128 *ex_as_dec(struct ex_ctx *c, int i, int scale, int tmp, bool saturate,
                          const struct ex_node *at)
{
    const struct ex_node *x = &c->e->nodes[i];
    int from = scale_of(x);
    if (x->vk == SL__VK_DEC && from == scale)
        return ex_vals(c, i);
    __int128 *o = ex_tmp(c, tmp), mul = ex_pow10(scale - from);
    __int128 lim = ((((__int128)1) << 126) - 1) / mul * 2; /* |v| * mul stays in range */
    if ((x->op == EX_INT || x->op == EX_DEC) && c->n > 0) {
        /* A literal (fill_literal wrote one value to every row, no nulls): converted
         * once, as `1 - l_discount` needs its 1 at scale 2 on every row of TPC-H Q1. */
        __int128 v = x->op == EX_DEC ? x->dval : x->ival;
        if (v <= lim && v >= -lim) {
            v *= mul;
            for (int64_t r = 0; r < c->n; r++)
                o[r] = v;
            return o;
        }
    }
    if (x->vk != SL__VK_DEC && mul <= INT64_MAX) {
        /* int64 operands and factor: 64 x 64 -> 128-bit products, which cannot overflow
         * (|v| < 2^63, mul < 2^63), instead of the 128-bit multiply. */
        const int64_t *xi = ex_vals(c, i);
        int64_t m64 = (int64_t)mul;
        for (int64_t r = 0; r < c->n; r++)
            o[r] = (__int128)xi[r] * m64;
        return o;
    }
    for (int64_t r = 0; r < c->n; r++) {
        __int128 v = x->vk == SL__VK_DEC ? ((const __int128 *)ex_vals(c, i))[r]
                                         : ((const int64_t *)ex_vals(c, i))[r];
        if (v > lim || v < -lim) {
            if (saturate) { /* beyond every decimal's range: keeps the order */
                __int128 big = ex_pow10(38) + 1;
                o[r] = v > 0 ? big : -big;
                continue;
            }
            if (ex_null_at(c, i, r)) {
                o[r] = 0;
                continue;
            }
            char buf[48];
            ex_fail(c, at, r, SL_EOVERFLOW, "decimal overflow: %s does not fit with %d decimals",
                    ex_dec_text(v, from, buf, sizeof buf), scale);
            return NULL;
        }
        o[r] = v * mul;
    }
    return o;
}

/* The fast path of ex_dec_arith for a result of at most 18 digits (|result| < lim <=
 * 10^18): where every operand fits int64, 64-bit arithmetic with overflow flags and the
 * range check, one pass without branches; false (o partly written) where a row does not
 * fit or is out of range (an error, or a null row's value), which the exact loop then
 * decides. TPC-H Q1's four decimal operations a row took 43% of its CPU time in the
 * 128-bit loop. */
static bool dec_arith64(enum ex_op op, const __int128 *x, const __int128 *y, __int128 *o,
                        int64_t len, int64_t lim)
{
    bool bad = false;
    for (int64_t r = 0; r < len; r++) {
        int64_t a = (int64_t)x[r], b = (int64_t)y[r], v;
        bool of = op == EX_ADD   ? __builtin_add_overflow(a, b, &v)
                  : op == EX_SUB ? __builtin_sub_overflow(a, b, &v)
                                 : __builtin_mul_overflow(a, b, &v);
        bad |= of | (a != x[r]) | (b != y[r]) | (v >= lim) | (v <= -lim);
        o[r] = v;
    }
    return !bad;
}

int ex_dec_arith(struct ex_ctx *c, int i, const struct ex_node *n)
{
    const struct ex_node *a = &c->e->nodes[n->a], *b = &c->e->nodes[n->b];
    int s = sl_type_scale(n->type), p = sl_type_precision(n->type);
    int sa = n->op == EX_MUL ? scale_of(a) : s, sb = n->op == EX_MUL ? scale_of(b) : s;
    const __int128 *x = ex_as_dec(c, n->a, sa, 0, false, n);
    const __int128 *y = x ? ex_as_dec(c, n->b, sb, 1, false, n) : NULL;
    if (!y)
        return SL_EOVERFLOW;
    ex_merge_nulls(c, i, n->a, n->b);
    const uint8_t *nu = ex_nulls(c, i);
    bool hn = *ex_has_null(c, i);
    __int128 *o = ex_vals(c, i), lim = ex_pow10(p);
    int64_t len = c->n;
    if (p <= SL_DECIMAL64_MAX_PRECISION && dec_arith64(n->op, x, y, o, len, (int64_t)lim))
        return SL_OK;
    for (int64_t r = 0; r < len; r++) {
        __int128 v;
        bool bad;
        if (n->op == EX_MUL && (int64_t)x[r] == x[r] && (int64_t)y[r] == y[r]) {
            /* Two 64-bit factors (every decimal(p <= 18)): one 64x64 -> 128-bit multiply
             * that cannot overflow, instead of the checked 128-bit one (a library call). */
            v = (__int128)(int64_t)x[r] * (int64_t)y[r];
            bad = false;
        } else {
            bad = n->op == EX_ADD   ? __builtin_add_overflow(x[r], y[r], &v)
                  : n->op == EX_SUB ? __builtin_sub_overflow(x[r], y[r], &v)
                                    : __builtin_mul_overflow(x[r], y[r], &v);
        }
        bad |= v >= lim || v <= -lim;
        if (SL__UNLIKELY(bad)) {
            if (hn && nu[r]) {
                o[r] = 0;
                continue;
            }
            char bx[48], by[48];
            return ex_fail(c, n, r, SL_EOVERFLOW, "decimal overflow in %s %c %s (the result "
                           "type %s holds %d digits)", ex_dec_text(x[r], sa, bx, sizeof bx),
                           n->op == EX_ADD ? '+' : n->op == EX_SUB ? '-' : '*',
                           ex_dec_text(y[r], sb, by, sizeof by), sl_type_name(n->type), p);
        }
        o[r] = v;
    }
    return SL_OK;
}
