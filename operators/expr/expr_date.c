/* Expressions: dates and timestamps. Civil-calendar conversions (proleptic Gregorian,
 * H. Hinnant's algorithms), date and timestamp literals, date ± INTERVAL (months and
 * years clamp the day to the month's end, as SQL and DuckDB do) and EXTRACT. */
#include <ctype.h>
#include <stdio.h>

#include "expr_int.h"

#define US_PER_DAY 86400000000LL

int64_t ex_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void ex_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    sl__xp_civil(z, y, m, d);
}

static bool leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned month_days(int64_t y, unsigned m)
{
    static const unsigned char days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && leap(y) ? 29 : days[m - 1];
}

/* Reads up to `max` digits at s[*p]; false when there are fewer than `min`. */
static bool digits(const char *s, int64_t len, int64_t *p, int min, int max, int64_t *out)
{
    int k = 0;
    *out = 0;
    while (*p < len && k < max && isdigit((unsigned char)s[*p])) {
        *out = *out * 10 + (s[(*p)++] - '0');
        k++;
    }
    return k >= min;
}

/* yyyy-mm-dd at s[*p] (a leading '-' for years before 1). */
static bool parse_ymd(const char *s, int64_t len, int64_t *p, int64_t *days)
{
    int64_t y, m, d;
    bool neg = *p < len && s[*p] == '-';
    *p += neg;
    if (!digits(s, len, p, 1, 6, &y) || *p >= len || s[(*p)++] != '-' ||
        !digits(s, len, p, 1, 2, &m) || *p >= len || s[(*p)++] != '-' ||
        !digits(s, len, p, 1, 2, &d))
        return false;
    y = neg ? -y : y;
    if (m < 1 || m > 12 || d < 1 || d > month_days(y, (unsigned)m))
        return false;
    *days = ex_days_from_civil(y, (unsigned)m, (unsigned)d);
    return *days >= INT32_MIN && *days <= INT32_MAX;
}

static int64_t skip_spaces(const char *s, int64_t len, int64_t p)
{
    while (p < len && isspace((unsigned char)s[p]))
        p++;
    return p;
}

bool ex_parse_date(const char *s, int64_t len, int64_t *days)
{
    int64_t p = skip_spaces(s, len, 0);
    return parse_ymd(s, len, &p, days) && skip_spaces(s, len, p) == len;
}

bool ex_parse_timestamp(const char *s, int64_t len, int64_t *us)
{
    int64_t p = skip_spaces(s, len, 0), days, h = 0, mi = 0, sec = 0, frac = 0;
    if (!parse_ymd(s, len, &p, &days))
        return false;
    if (p < len && (s[p] == ' ' || s[p] == 'T') && p + 1 < len &&
        isdigit((unsigned char)s[p + 1])) {
        p++;
        if (!digits(s, len, &p, 1, 2, &h) || p >= len || s[p++] != ':' ||
            !digits(s, len, &p, 1, 2, &mi))
            return false;
        if (p < len && s[p] == ':') {
            p++;
            if (!digits(s, len, &p, 1, 2, &sec))
                return false;
            if (p < len && s[p] == '.') {
                p++;
                int64_t start = p;
                if (!digits(s, len, &p, 1, 6, &frac))
                    return false;
                for (int64_t k = p - start; k < 6; k++)
                    frac *= 10;
            }
        }
        if (h > 23 || mi > 59 || sec > 59)
            return false;
    }
    if (skip_spaces(s, len, p) != len)
        return false;
    *us = days * US_PER_DAY + ((h * 60 + mi) * 60 + sec) * 1000000 + frac;
    return true;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* days + `months` calendar months, the day clamped to the month's length. */
static int64_t add_months(int64_t days, int64_t months)
{
    int64_t y;
    unsigned m, d;
    ex_civil_from_days(days, &y, &m, &d);
    int64_t total = y * 12 + (m - 1) + months;
    y = floor_div(total, 12);
    m = (unsigned)(total - y * 12) + 1;
    unsigned md = month_days(y, m);
    return ex_days_from_civil(y, m, d > md ? md : d);
}

bool ex_date_shift(int64_t v, bool ts, const struct ex_node *iv, bool sub, int64_t *out)
{
    int64_t count = sub ? -iv->ival : iv->ival;
    int64_t months = iv->unit == EX_YEAR ? count * 12 : iv->unit == EX_MONTH ? count : 0;
    int64_t dd = iv->unit == EX_DAY ? count : 0;
    int64_t day = ts ? floor_div(v, US_PER_DAY) : v;
    int64_t tod = ts ? v - day * US_PER_DAY : 0;
    day = months ? add_months(day, months) + dd : day + dd;
    if (day < INT32_MIN || day > INT32_MAX)
        return false;
    *out = ts ? day * US_PER_DAY + tod : day;
    return true;
}

int ex_date_add(struct ex_ctx *c, int i, const struct ex_node *n)
{
    bool a_is_ivl = c->e->nodes[n->a].vk == SL__VK_INTERVAL;
    const struct ex_node *iv = &c->e->nodes[a_is_ivl ? n->a : n->b];
    int d = a_is_ivl ? n->b : n->a;
    ex_merge_nulls(c, i, d, -1);
    const int64_t *x = ex_vals(c, d);
    int64_t *o = ex_vals(c, i);
    bool ts = n->vk == SL__VK_TS;
    for (int64_t r = 0; r < c->n; r++) {
        if (ex_null_at(c, i, r)) {
            o[r] = 0;
            continue;
        }
        if (!ex_date_shift(x[r], ts, iv, n->op == EX_SUB, &o[r]))
            return ex_fail(c, n, r, SL_EOVERFLOW, "date out of range after adding the interval");
    }
    return SL_OK;
}

int ex_extract(struct ex_ctx *c, int i, const struct ex_node *n)
{
    const struct ex_node *a = &c->e->nodes[n->a];
    const int64_t *x = ex_vals(c, n->a);
    int64_t *o = ex_vals(c, i);
    ex_merge_nulls(c, i, n->a, -1);
    for (int64_t r = 0; r < c->n; r++) {
        int64_t day = a->vk == SL__VK_TS ? floor_div(x[r], US_PER_DAY) : x[r], y;
        unsigned m, d;
        ex_civil_from_days(day, &y, &m, &d);
        o[r] = n->ival == EX_YEAR ? y : n->ival == EX_MONTH ? (int64_t)m : (int64_t)d;
    }
    return SL_OK;
}

int ex_date_text(int64_t days, char *buf, size_t len)
{
    int64_t y;
    unsigned m, d;
    ex_civil_from_days(days, &y, &m, &d);
    return snprintf(buf, len, "%s%04lld-%02u-%02u", y < 0 ? "-" : "", (long long)(y < 0 ? -y : y),
                    m, d);
}

int ex_ts_text(int64_t us, char *buf, size_t len)
{
    int64_t day = floor_div(us, US_PER_DAY), t = us - day * US_PER_DAY;
    int k = ex_date_text(day, buf, len);
    int64_t s = t / 1000000, f = t % 1000000;
    k += snprintf(buf + k, len - (size_t)k, " %02lld:%02lld:%02lld", (long long)(s / 3600),
                  (long long)(s / 60 % 60), (long long)(s % 60));
    if (f) {
        k += snprintf(buf + k, len - (size_t)k, ".%06lld", (long long)f);
        while (buf[k - 1] == '0')
            buf[--k] = 0;
    }
    return k;
}
