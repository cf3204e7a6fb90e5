/* Expressions: CAST between the types, as DuckDB converts them: decimals round half away
 * from zero, floats to integers round half to even, strings are trimmed and parsed, and
 * a value that does not fit fails the query with a message naming it. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expr_int.h"

#define US_PER_DAY 86400000000LL

/* The range of an integer target type. */
static void int_range(enum sl_type t, int64_t *lo, int64_t *hi)
{
    switch (SL_TYPE_ID(t)) {
    case SL_TYPE_INT8: *lo = INT8_MIN; *hi = INT8_MAX; return;
    case SL_TYPE_INT16: *lo = INT16_MIN; *hi = INT16_MAX; return;
    case SL_TYPE_INT32: *lo = INT32_MIN; *hi = INT32_MAX; return;
    case SL_TYPE_UINT8: *lo = 0; *hi = UINT8_MAX; return;
    case SL_TYPE_UINT16: *lo = 0; *hi = UINT16_MAX; return;
    case SL_TYPE_UINT32: *lo = 0; *hi = UINT32_MAX; return;
    default: *lo = INT64_MIN; *hi = INT64_MAX; return;
    }
}

/* v of scale `from` at scale `to`, rounding half away from zero when decimals are dropped;
 * false when it does not fit int128. */
static bool rescale(__int128 v, int from, int to, __int128 *out)
{
    if (to >= from)
        return !__builtin_mul_overflow(v, ex_pow10(to - from), out);
    __int128 p = ex_pow10(from - to), q = v / p, rem = v % p;
    if ((rem < 0 ? -rem : rem) * 2 >= p)
        q += v < 0 ? -1 : 1;
    *out = q;
    return true;
}

/* Trimmed view of a string value. */
static struct sl__expr_str trim(struct sl__expr_str s)
{
    while (s.n && isspace((unsigned char)s.p[0]))
        s.p++, s.n--;
    while (s.n && isspace((unsigned char)s.p[s.n - 1]))
        s.n--;
    return s;
}

/* Decimal text ([+-]digits[.digits]) as a value of scale `scale` (extra decimals rounded
 * half away from zero); false when malformed or too long. */
static bool parse_dec(struct sl__expr_str s, int scale, __int128 *out)
{
    s = trim(s);
    int64_t p = 0;
    bool neg = p < s.n && s.p[p] == '-';
    p += p < s.n && (s.p[p] == '-' || s.p[p] == '+');
    __int128 v = 0;
    int digits = 0, frac = -1, seen = 0;
    for (; p < s.n; p++) {
        char ch = s.p[p];
        if (ch == '.' && frac < 0) {
            frac = 0;
            continue;
        }
        if (!isdigit((unsigned char)ch))
            return false;
        seen++;
        if (frac >= 0 && frac >= scale) { /* the first dropped digit rounds */
            if (frac == scale && ch >= '5')
                v += 1;
            frac++;
            continue;
        }
        if (v != 0 || ch != '0')
            digits++;
        if (digits > SL_DECIMAL_MAX_PRECISION)
            return false;
        v = v * 10 + (ch - '0');
        frac += frac >= 0;
    }
    if (!seen)
        return false;
    int have = frac < 0 ? 0 : frac > scale ? scale : frac;
    if (!rescale(v, have, scale, &v))
        return false;
    *out = neg ? -v : v;
    return true;
}

/* Python's repr of a double, which DuckDB's text of a double matches: the shortest text
 * that reads back, fixed-point from 1e-4 up to 1e16, with an exponent otherwise. */
static int double_text(double x, char *buf, size_t len)
{
    if (isnan(x))
        return snprintf(buf, len, "nan");
    if (isinf(x))
        return snprintf(buf, len, x < 0 ? "-inf" : "inf");
    char e[40];
    int prec = 1;
    for (; prec <= 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, x);
        if (strtod(e, NULL) == x)
            break;
    }
    char dig[24];
    int nd = 0;
    const char *q = e + (e[0] == '-');
    for (; *q && *q != 'e'; q++)
        if (isdigit((unsigned char)*q))
            dig[nd++] = *q;
    int exp = atoi(q + 1);
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    int k = 0;
    if (x < 0 || (x == 0 && signbit(x)))
        buf[k++] = '-';
    if (exp < -4 || exp >= 16) {
        buf[k++] = dig[0];
        if (nd > 1) {
            buf[k++] = '.';
            for (int j = 1; j < nd; j++)
                buf[k++] = dig[j];
        }
        return k + snprintf(buf + k, len - (size_t)k, "e%c%02d", exp < 0 ? '-' : '+',
                            exp < 0 ? -exp : exp);
    }
    if (exp < 0) {
        buf[k++] = '0';
        buf[k++] = '.';
        for (int j = 0; j < -exp - 1; j++)
            buf[k++] = '0';
        for (int j = 0; j < nd; j++)
            buf[k++] = dig[j];
    } else {
        for (int j = 0; j <= exp; j++)
            buf[k++] = j < nd ? dig[j] : '0';
        buf[k++] = '.';
        if (nd <= exp + 1)
            buf[k++] = '0';
        for (int j = exp + 1; j < nd; j++)
            buf[k++] = dig[j];
    }
    buf[k] = 0;
    return k;
}

/* Text of row r of operand node a (not a string), for messages and CAST to strings. */
static int value_text(struct ex_ctx *c, const struct ex_node *a, int ai, int64_t r, char *buf,
                      size_t len)
{
    const void *v = ex_vals(c, ai);
    switch (a->vk) {
    case SL__VK_FLOAT: return double_text(((const double *)v)[r], buf, len);
    case SL__VK_DEC:
        ex_dec_text(((const __int128 *)v)[r], sl_type_scale(a->type), buf, len);
        return (int)strlen(buf);
    case SL__VK_BOOL: return snprintf(buf, len, "%s", ((const uint8_t *)v)[r] ? "true" : "false");
    case SL__VK_DATE: return ex_date_text(((const int64_t *)v)[r], buf, len);
    case SL__VK_TS: return ex_ts_text(((const int64_t *)v)[r], buf, len);
    case SL__VK_STR: {
        const struct sl__expr_str *s = v;
        return snprintf(buf, len, "'%.*s'", (int)(s[r].n > 60 ? 60 : s[r].n), s[r].p);
    }
    default: return snprintf(buf, len, "%lld", (long long)((const int64_t *)v)[r]);
    }
}

static int cast_fail(struct ex_ctx *c, const struct ex_node *n, int64_t r, int code,
                     const char *why)
{
    char buf[96];
    value_text(c, &c->e->nodes[n->a], n->a, r, buf, sizeof buf);
    return ex_fail(c, n, r, code, "CAST(%s AS %s): %s", buf, sl_type_name(n->type), why);
}

/* Row r of the operand as an exact int128 of scale `scale` (numbers, bools, strings).
 * Returns 0, or an error code with *why set. */
static int exact_of(struct ex_ctx *c, const struct ex_node *a, int ai, int64_t r, int scale,
                    __int128 *out, const char **why)
{
    const void *v = ex_vals(c, ai);
    *why = "does not fit";
    switch (a->vk) {
    case SL__VK_DEC:
        return rescale(((const __int128 *)v)[r], sl_type_scale(a->type), scale, out)
                   ? 0 : SL_EOVERFLOW;
    case SL__VK_FLOAT: {
        double x = ((const double *)v)[r] * (double)ex_pow10(scale);
        if (!isfinite(x) || fabs(x) >= 1e38)
            return SL_EOVERFLOW;
        *out = (__int128)round(x);
        return 0;
    }
    case SL__VK_BOOL: *out = ((const uint8_t *)v)[r] * ex_pow10(scale); return 0;
    case SL__VK_STR: {
        struct sl__expr_str t = trim(((const struct sl__expr_str *)v)[r]);
        *why = "not a number";
        if (parse_dec(t, scale, out))
            return 0;
        char buf[64], *end; /* with an exponent ('1e3'): as a float, rounded */
        if (t.n == 0 || t.n >= (int64_t)sizeof buf)
            return SL_EINVAL;
        memcpy(buf, t.p, (size_t)t.n);
        buf[t.n] = 0;
        double x = strtod(buf, &end) * (double)ex_pow10(scale);
        if (*end || isnan(x))
            return SL_EINVAL;
        *why = "out of range";
        if (!isfinite(x) || fabs(x) >= 1e38)
            return SL_EOVERFLOW;
        *out = (__int128)round(x);
        return 0;
    }
    default: return rescale(((const int64_t *)v)[r], 0, scale, out) ? 0 : SL_EOVERFLOW;
    }
}

static int to_int(struct ex_ctx *c, int i, const struct ex_node *n, const struct ex_node *a)
{
    int64_t lo, hi, *o = ex_vals(c, i);
    int_range(n->type, &lo, &hi);
    for (int64_t r = 0; r < c->n; r++) {
        o[r] = 0;
        if (ex_null_at(c, i, r))
            continue;
        if (a->vk == SL__VK_INT) {
            o[r] = ((const int64_t *)ex_vals(c, n->a))[r];
        } else if (a->vk == SL__VK_FLOAT) { /* half to even, as DuckDB */
            double x = nearbyint(((const double *)ex_vals(c, n->a))[r]);
            if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0))
                return cast_fail(c, n, r, SL_EOVERFLOW, "out of range");
            o[r] = (int64_t)x;
        } else {
            __int128 v;
            const char *why;
            int rc = exact_of(c, a, n->a, r, 0, &v, &why);
            if (rc == 0 && (v < INT64_MIN || v > INT64_MAX))
                rc = SL_EOVERFLOW, why = "out of range";
            if (rc)
                return cast_fail(c, n, r, rc, why);
            o[r] = (int64_t)v;
        }
        if (o[r] < lo || o[r] > hi)
            return cast_fail(c, n, r, SL_EOVERFLOW, "out of range");
    }
    return SL_OK;
}

/* To decimal(p,s) and to uint64 (a decimal of scale 0 in [0, 2^64)). */
static int to_dec(struct ex_ctx *c, int i, const struct ex_node *n, const struct ex_node *a)
{
    bool u64 = SL_TYPE_ID(n->type) == SL_TYPE_UINT64;
    int s = u64 ? 0 : sl_type_scale(n->type);
    __int128 lim = u64 ? (__int128)1 << 64 : ex_pow10(sl_type_precision(n->type));
    __int128 *o = ex_vals(c, i);
    for (int64_t r = 0; r < c->n; r++) {
        o[r] = 0;
        if (ex_null_at(c, i, r))
            continue;
        const char *why;
        int rc = exact_of(c, a, n->a, r, s, &o[r], &why);
        if (rc == 0 && (o[r] >= lim || (u64 ? o[r] < 0 : o[r] <= -lim)))
            rc = SL_EOVERFLOW, why = "out of range";
        if (rc)
            return cast_fail(c, n, r, rc, why);
    }
    return SL_OK;
}

static int to_float(struct ex_ctx *c, int i, const struct ex_node *n, const struct ex_node *a)
{
    double *o = ex_vals(c, i);
    bool f32 = SL_TYPE_ID(n->type) == SL_TYPE_FLOAT32;
    const double *x = a->vk == SL__VK_STR || a->vk == SL__VK_BOOL ? NULL : ex_as_f64(c, n->a, 0);
    for (int64_t r = 0; r < c->n; r++) {
        if (ex_null_at(c, i, r)) {
            o[r] = 0;
            continue;
        }
        if (a->vk == SL__VK_BOOL) {
            o[r] = ((const uint8_t *)ex_vals(c, n->a))[r];
        } else if (a->vk == SL__VK_STR) {
            struct sl__expr_str s = trim(((const struct sl__expr_str *)ex_vals(c, n->a))[r]);
            char buf[128], *end;
            if (s.n == 0 || s.n >= (int64_t)sizeof buf)
                return cast_fail(c, n, r, SL_EINVAL, "not a number");
            memcpy(buf, s.p, (size_t)s.n);
            buf[s.n] = 0;
            o[r] = strtod(buf, &end);
            if (*end)
                return cast_fail(c, n, r, SL_EINVAL, "not a number");
        } else {
            o[r] = x[r];
        }
        if (f32) {
            float f = (float)o[r];
            if (isinf(f) && isfinite(o[r]))
                return cast_fail(c, n, r, SL_EOVERFLOW, "out of range");
            o[r] = f;
        }
    }
    return SL_OK;
}

static int to_bool(struct ex_ctx *c, int i, const struct ex_node *n, const struct ex_node *a)
{
    uint8_t *o = ex_vals(c, i);
    for (int64_t r = 0; r < c->n; r++) {
        o[r] = 0;
        if (ex_null_at(c, i, r))
            continue;
        const void *v = ex_vals(c, n->a);
        switch (a->vk) {
        case SL__VK_BOOL: o[r] = ((const uint8_t *)v)[r]; break;
        case SL__VK_FLOAT: o[r] = ((const double *)v)[r] != 0; break;
        case SL__VK_STR: {
            struct sl__expr_str s = trim(((const struct sl__expr_str *)v)[r]);
            static const char *const yes[] = {"true", "t", "1"}, *const no[] = {"false", "f", "0"};
            bool ok = false;
            for (int k = 0; k < 3; k++) {
                if ((int64_t)strlen(yes[k]) == s.n && strncasecmp(s.p, yes[k], (size_t)s.n) == 0)
                    o[r] = 1, ok = true;
                if ((int64_t)strlen(no[k]) == s.n && strncasecmp(s.p, no[k], (size_t)s.n) == 0)
                    ok = true;
            }
            if (!ok)
                return cast_fail(c, n, r, SL_EINVAL, "not a boolean (true or false)");
            break;
        }
        default: o[r] = ((const int64_t *)v)[r] != 0; break;
        }
    }
    return SL_OK;
}

static int to_datetime(struct ex_ctx *c, int i, const struct ex_node *n, const struct ex_node *a)
{
    int64_t *o = ex_vals(c, i);
    const int64_t *x = ex_vals(c, n->a);
    bool ts = n->vk == SL__VK_TS;
    for (int64_t r = 0; r < c->n; r++) {
        o[r] = 0;
        if (ex_null_at(c, i, r))
            continue;
        if (a->vk == SL__VK_STR) {
            struct sl__expr_str s = ((const struct sl__expr_str *)ex_vals(c, n->a))[r];
            if (!(ts ? ex_parse_timestamp(s.p, s.n, &o[r]) : ex_parse_date(s.p, s.n, &o[r])))
                return cast_fail(c, n, r, SL_EINVAL, ts ? "not a timestamp" : "not a date "
                                 "(yyyy-mm-dd)");
        } else if (a->vk == n->vk) {
            o[r] = x[r];
        } else if (ts) {
            o[r] = x[r] * US_PER_DAY;
        } else {
            o[r] = x[r] / US_PER_DAY - (x[r] % US_PER_DAY < 0);
        }
    }
    return SL_OK;
}

static int to_str(struct ex_ctx *c, int i, const struct ex_node *n, const struct ex_node *a)
{
    struct sl__expr_str *o = ex_vals(c, i);
    if (a->vk == SL__VK_STR) {
        memcpy(o, ex_vals(c, n->a), (size_t)c->n * sizeof *o);
        return SL_OK;
    }
    enum { W = 64 }; /* longer than any number, date or timestamp text */
    char *buf = ex_str_room(c, i, (size_t)c->n * W);
    if (!buf)
        return ex_fail(c, n, 0, SL_ENOMEM, "out of memory");
    for (int64_t r = 0; r < c->n; r++) {
        int k = ex_null_at(c, i, r) ? 0 : value_text(c, a, n->a, r, buf + r * W, W);
        o[r] = (struct sl__expr_str){buf + r * W, k};
    }
    return SL_OK;
}

int ex_cast(struct ex_ctx *c, int i, const struct ex_node *n)
{
    const struct ex_node *a = &c->e->nodes[n->a];
    ex_merge_nulls(c, i, n->a, -1);
    switch (n->vk) {
    case SL__VK_INT: return to_int(c, i, n, a);
    case SL__VK_DEC: return to_dec(c, i, n, a);
    case SL__VK_FLOAT: return to_float(c, i, n, a);
    case SL__VK_BOOL: return to_bool(c, i, n, a);
    case SL__VK_DATE: case SL__VK_TS: return to_datetime(c, i, n, a);
    case SL__VK_STR: return to_str(c, i, n, a);
    default: return SL_EINTERNAL;
    }
}
