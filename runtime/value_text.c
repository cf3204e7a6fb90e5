/* Values as text and back (value_text.h): dates, timestamps, decimals, booleans, UTF-8.
 * Decimals are parsed and printed digit by digit in 128-bit integers, never through a
 * float, so every value of every precision round-trips exactly. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "value_text.h"

const char *sl__text_err_str(int err)
{
    switch (err) {
    case SL__TEXT_RANGE:
        return "out of range";
    case SL__TEXT_INT_DIGITS:
        return "more integer digits than the precision allows";
    case SL__TEXT_FRAC_DIGITS:
        return "more fractional digits than the scale";
    default:
        return "malformed";
    }
}

/* ---------------- calendar (Howard Hinnant's civil-date algorithms) ---------------- */

int64_t sl__days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void sl__civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static int days_in_month(int64_t y, int m)
{
    static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : dm[m - 1];
}

static void trim(const char **s, size_t *n)
{
    while (*n && ((*s)[0] == ' ' || (*s)[0] == '\t'))
        (*s)++, (*n)--;
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

/* Exactly `w` digits at s[*i], as a number. */
static bool digits(const char *s, size_t n, size_t *i, int w, int *out)
{
    int v = 0;
    for (int k = 0; k < w; k++, (*i)++) {
        if (*i >= n || (unsigned)(s[*i] - '0') > 9)
            return false;
        v = v * 10 + (s[*i] - '0');
    }
    *out = v;
    return true;
}

/* The date at the start of s; *used gets its length. */
static int date_prefix(const char *s, size_t n, int64_t *days, size_t *used)
{
    size_t i = 0;
    bool neg = i < n && s[i] == '-';
    i += neg;
    int64_t y = 0;
    size_t y0 = i;
    while (i < n && (unsigned)(s[i] - '0') <= 9 && i - y0 < 9)
        y = y * 10 + (s[i++] - '0');
    int m, d;
    if (i - y0 < 4 || i >= n || s[i] != '-')
        return SL__TEXT_SYNTAX;
    i++;
    if (!digits(s, n, &i, 2, &m) || i >= n || s[i] != '-')
        return SL__TEXT_SYNTAX;
    i++;
    if (!digits(s, n, &i, 2, &d))
        return SL__TEXT_SYNTAX;
    y = neg ? -y : y;
    if (m < 1 || m > 12 || d < 1 || d > days_in_month(y, m))
        return SL__TEXT_RANGE;
    *days = sl__days_from_civil(y, m, d);
    *used = i;
    return 0;
}

int sl__date_parse(const char *s, size_t n, int32_t *out)
{
    trim(&s, &n);
    int64_t days;
    size_t used;
    int rc = date_prefix(s, n, &days, &used);
    if (rc < 0)
        return rc;
    if (used != n)
        return SL__TEXT_SYNTAX;
    if (days < INT32_MIN || days > INT32_MAX)
        return SL__TEXT_RANGE;
    *out = (int32_t)days;
    return 0;
}

int sl__timestamp_parse(const char *s, size_t n, int64_t *out)
{
    trim(&s, &n);
    int64_t days;
    size_t i;
    int rc = date_prefix(s, n, &days, &i);
    if (rc < 0)
        return rc;
    int64_t us = 0;
    if (i < n) {
        int hh, mm, ss;
        if (s[i] != ' ' && s[i] != 'T')
            return SL__TEXT_SYNTAX;
        i++;
        if (!digits(s, n, &i, 2, &hh) || i >= n || s[i++] != ':' ||
            !digits(s, n, &i, 2, &mm) || i >= n || s[i++] != ':' || !digits(s, n, &i, 2, &ss))
            return SL__TEXT_SYNTAX;
        if (hh > 23 || mm > 59 || ss > 59)
            return SL__TEXT_RANGE;
        int64_t frac = 0;
        if (i < n && s[i] == '.') {
            int k = 0;
            for (i++; i < n && (unsigned)(s[i] - '0') <= 9; i++, k++) {
                if (k >= 6)
                    return SL__TEXT_SYNTAX; /* finer than a microsecond */
                frac = frac * 10 + (s[i] - '0');
            }
            if (k == 0)
                return SL__TEXT_SYNTAX;
            for (; k < 6; k++)
                frac *= 10;
        }
        if (i != n)
            return SL__TEXT_SYNTAX;
        us = ((int64_t)hh * 3600 + mm * 60 + ss) * 1000000 + frac;
    }
    if (__builtin_mul_overflow(days, (int64_t)86400000000, out) ||
        __builtin_add_overflow(*out, us, out))
        return SL__TEXT_RANGE;
    return 0;
}

int sl__decimal_parse(const char *s, size_t n, int precision, int scale, __int128 *out)
{
    trim(&s, &n);
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    unsigned __int128 v = 0;
    int int_digits = 0, frac_digits = 0;
    bool any = false;
    for (; i < n && s[i] == '0'; i++)
        any = true; /* leading zeros count for nothing */
    for (; i < n && (unsigned)(s[i] - '0') <= 9; i++, any = true) {
        if (++int_digits > precision - scale)
            return SL__TEXT_INT_DIGITS;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (i < n && s[i] == '.') {
        int zeros = 0; /* fractional zeros not yet applied: trailing ones are dropped */
        for (i++; i < n && (unsigned)(s[i] - '0') <= 9; i++, any = true) {
            if (s[i] == '0') {
                zeros++;
                continue;
            }
            if (frac_digits + zeros + 1 > scale)
                return SL__TEXT_FRAC_DIGITS;
            for (; zeros > 0; zeros--, frac_digits++)
                v *= 10;
            v = v * 10 + (unsigned)(s[i] - '0');
            frac_digits++;
        }
    }
    if (!any || i != n)
        return SL__TEXT_SYNTAX;
    for (; frac_digits < scale; frac_digits++)
        v *= 10;
    *out = neg ? -(__int128)v : (__int128)v;
    return 0;
}

int sl__bool_parse(const char *s, size_t n, uint8_t *out)
{
    trim(&s, &n);
    static const struct {
        const char *text;
        uint8_t v;
    } words[] = {{"true", 1}, {"false", 0}, {"t", 1}, {"f", 0}, {"1", 1}, {"0", 0}};
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++) {
        if (strlen(words[k].text) == n && strncasecmp(s, words[k].text, n) == 0) {
            *out = words[k].v;
            return 0;
        }
    }
    return SL__TEXT_SYNTAX;
}

bool sl__utf8_valid(const char *str, size_t n, size_t *bad)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        /* ASCII runs 8 bytes at a time. */
        if (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (!(w & 0x8080808080808080ull)) {
                i += 8;
                continue;
            }
        }
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        int len;
        unsigned lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
        if (c >= 0xc2 && c <= 0xdf) {
            len = 2;
        } else if (c >= 0xe0 && c <= 0xef) {
            len = 3;
            lo = c == 0xe0 ? 0xa0 : 0x80; /* no overlongs */
            hi = c == 0xed ? 0x9f : 0xbf; /* no surrogates */
        } else if (c >= 0xf0 && c <= 0xf4) {
            len = 4;
            lo = c == 0xf0 ? 0x90 : 0x80;
            hi = c == 0xf4 ? 0x8f : 0xbf; /* nothing past U+10FFFF */
        } else {
            *bad = i;
            return false;
        }
        if (i + (size_t)len > n || s[i + 1] < lo || s[i + 1] > hi) {
            *bad = i;
            return false;
        }
        for (int k = 2; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80) {
                *bad = i;
                return false;
            }
        }
        i += (size_t)len;
    }
    return true;
}

/* ---------------- formatting ---------------- */

size_t sl__date_format(int32_t days, char *buf)
{
    int64_t y;
    int m, d;
    sl__civil_from_days(days, &y, &m, &d);
    return (size_t)snprintf(buf, 48, "%s%04" PRId64 "-%02d-%02d", y < 0 ? "-" : "",
                            y < 0 ? -y : y, m, d);
}

size_t sl__timestamp_format(int64_t us, char *buf)
{
    int64_t days = us / 86400000000, rem = us % 86400000000;
    if (rem < 0) {
        rem += 86400000000;
        days--;
    }
    size_t k = sl__date_format((int32_t)days, buf);
    int64_t secs = rem / 1000000, frac = rem % 1000000;
    k += (size_t)snprintf(buf + k, 48 - k, " %02d:%02d:%02d", (int)(secs / 3600),
                          (int)(secs / 60 % 60), (int)(secs % 60));
    if (frac)
        k += (size_t)snprintf(buf + k, 48 - k, ".%06d", (int)frac);
    return k;
}

size_t sl__decimal_format(__int128 v, int scale, char *buf)
{
    char digits_rev[48];
    unsigned __int128 u = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;
    int n = 0;
    do {
        digits_rev[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    while (n <= scale) /* at least one digit before the point */
        digits_rev[n++] = '0';
    size_t k = 0;
    if (v < 0)
        buf[k++] = '-';
    for (int i = n - 1; i >= 0; i--) {
        buf[k++] = digits_rev[i];
        if (i == scale && scale > 0)
            buf[k++] = '.';
    }
    buf[k] = '\0';
    return k;
}

size_t sl__value_format(const struct sl_column *c, int64_t row, char *buf)
{
    int64_t k = c->offset + row;
    const void *p = (const char *)c->data + (size_t)k * sl_type_width(c->type);
    int64_t i = 0;
    uint64_t u = 0;
    switch (SL_TYPE_ID(c->type)) {
    case SL_TYPE_BOOL:
        return (size_t)snprintf(buf, 48, "%s", *(const uint8_t *)p ? "true" : "false");
    case SL_TYPE_INT8:
        i = *(const int8_t *)p;
        break;
    case SL_TYPE_INT16:
        i = *(const int16_t *)p;
        break;
    case SL_TYPE_INT32:
        i = *(const int32_t *)p;
        break;
    case SL_TYPE_INT64:
        i = *(const int64_t *)p;
        break;
    case SL_TYPE_UINT8:
    case SL_TYPE_UINT16:
    case SL_TYPE_UINT32:
    case SL_TYPE_UINT64:
        memcpy(&u, p, sl_type_width(c->type)); /* little endian */
        return (size_t)snprintf(buf, 48, "%" PRIu64, u);
    case SL_TYPE_FLOAT32:
        return (size_t)snprintf(buf, 48, "%.9g", (double)*(const float *)p);
    case SL_TYPE_FLOAT64:
        return (size_t)snprintf(buf, 48, "%.17g", *(const double *)p);
    case SL_TYPE_DATE32:
        return sl__date_format(*(const int32_t *)p, buf);
    case SL_TYPE_TIMESTAMP:
        return sl__timestamp_format(*(const int64_t *)p, buf);
    case SL_TYPE_DECIMAL:
        return sl__decimal_format(sl__decimal_load(c->type, p), sl_type_scale(c->type), buf);
    default:
        buf[0] = '\0';
        return 0;
    }
    return (size_t)snprintf(buf, 48, "%" PRId64, i);
}

int64_t sl_batch_value_format(const sl_batch_t *b, int col, int64_t row, char *buf, size_t len,
                              int *is_null)
{
    struct sl_column c;
    if (!b || row < 0 || row >= b->n_rows || (!buf && len) || sl_batch_column(b, col, &c) < 0)
        return sl__set_last_error(SL_EINVAL, "sl_batch_value_format: bad arguments");
    bool valid = sl__col_valid(&b->cols[col], row);
    if (is_null)
        *is_null = !valid;
    const char *text = "";
    size_t n = 0;
    char tmp[48];
    if (valid && sl_type_is_string(c.type)) {
        struct sl_strings s;
        sl_batch_column_strings(b, col, &s);
        int64_t k = c.offset + row, lo, hi;
        if (c.type == SL_TYPE_DICT) {
            int32_t code = ((const int32_t *)c.data)[k];
            lo = s.dict_offsets[code];
            hi = s.dict_offsets[code + 1];
            text = s.dict_chars + lo;
        } else {
            bool large = c.type == SL_TYPE_LARGE_UTF8;
            lo = large ? ((const int64_t *)c.data)[k] : ((const int32_t *)c.data)[k];
            hi = large ? ((const int64_t *)c.data)[k + 1] : ((const int32_t *)c.data)[k + 1];
            text = s.chars + lo;
        }
        n = (size_t)(hi - lo);
    } else if (valid) {
        n = sl__value_format(&c, row, tmp);
        text = tmp;
    }
    if (len) {
        size_t w = n < len - 1 ? n : len - 1;
        memcpy(buf, text, w);
        buf[w] = '\0';
    }
    return (int64_t)n;
}
