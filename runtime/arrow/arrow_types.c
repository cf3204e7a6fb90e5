/* Arrow format strings and sluice types, both ways (docs/ARROW.md has the table).
 *
 * Import accepts every Arrow type whose values sluice can hold exactly: the integer and
 * float formats, bool, date32, timestamps without a time zone (seconds, milli- and
 * nanoseconds are converted to microseconds; nanoseconds only when exact), decimal128,
 * utf8, large_utf8 and dictionaries of utf8 / large_utf8 with any integer index. */
#include <stdio.h>

#include "arrow_int.h"

static const struct {
    char format;
    enum sl_type type;
} primitive[] = {
    {'b', SL_TYPE_BOOL},   {'c', SL_TYPE_INT8},    {'C', SL_TYPE_UINT8},
    {'s', SL_TYPE_INT16},  {'S', SL_TYPE_UINT16},  {'i', SL_TYPE_INT32},
    {'I', SL_TYPE_UINT32}, {'l', SL_TYPE_INT64},   {'L', SL_TYPE_UINT64},
    {'f', SL_TYPE_FLOAT32}, {'g', SL_TYPE_FLOAT64}, {'u', SL_TYPE_UTF8},
    {'U', SL_TYPE_LARGE_UTF8},
};

static enum sl_type primitive_type(const char *format)
{
    if (!format[0] || format[1])
        return SL_TYPE_INVALID;
    for (size_t k = 0; k < sizeof primitive / sizeof primitive[0]; k++)
        if (primitive[k].format == format[0])
            return primitive[k].type;
    return SL_TYPE_INVALID;
}

/* "d:P,S" or "d:P,S,128". */
static enum sl_type decimal_type(const char *format)
{
    int p = 0, s = 0, bits = 128, n = 0;
    if (sscanf(format, "d:%d,%d%n", &p, &s, &n) != 2)
        return SL_TYPE_INVALID;
    if (format[n] == ',') {
        int m = 0;
        if (sscanf(format + n, ",%d%n", &bits, &m) != 1)
            return SL_TYPE_INVALID;
        n += m;
    }
    if (format[n] || bits != 128)
        return SL_TYPE_INVALID;
    return sl_type_decimal(p, s);
}

static int unsupported(const char *fn, const struct ArrowSchema *f, int64_t i, const char *why)
{
    return sl__set_last_error(SL_EUNSUPPORTED, "%s: column %lld ('%s') has Arrow format '%s', "
                              "which sluice does not support%s", fn, (long long)i,
                              f->name ? f->name : "", f->format, why);
}

static const char supported_list[] =
    " (supported: b c C s S i I l L f g tdD tss: tsm: tsu: tsn: d:P,S u U, and dictionaries "
    "of u / U with integer indexes)";

/* Timestamps: "ts" unit ':' time zone. A time zone is refused: sluice timestamps are
 * local date-times without one, and dropping it would change what the values mean. */
static int timestamp_field(const char *fn, const struct ArrowSchema *f, int64_t i,
                           struct sl__arrow_field *out)
{
    const char *fmt = f->format;
    if (fmt[3] != ':')
        return unsupported(fn, f, i, supported_list);
    if (fmt[4])
        return unsupported(fn, f, i, ": a timestamp with a time zone (sluice timestamps have "
                           "none; convert to a zone-less timestamp first)");
    out->type = SL_TYPE_TIMESTAMP;
    out->conv = SL__ARROW_TS_SCALE;
    out->ts_mul = out->ts_div = 1;
    switch (fmt[2]) {
    case 's':
        out->ts_mul = 1000000;
        break;
    case 'm':
        out->ts_mul = 1000;
        break;
    case 'u':
        out->conv = SL__ARROW_SHARE;
        break;
    case 'n':
        out->ts_div = 1000;
        break;
    default:
        return unsupported(fn, f, i, supported_list);
    }
    return SL_OK;
}

static int dict_field(const char *fn, const struct ArrowSchema *f, int64_t i,
                      struct sl__arrow_field *out)
{
    static const char idx[] = "cCsSiIlL";
    const struct ArrowSchema *d = f->dictionary;
    const char *p = f->format[0] && !f->format[1] ? strchr(idx, f->format[0]) : NULL;
    if (!p)
        return unsupported(fn, f, i, ": a dictionary index must be an integer type");
    if (!d->format || (strcmp(d->format, "u") != 0 && strcmp(d->format, "U") != 0))
        return sl__set_last_error(SL_EUNSUPPORTED, "%s: column %lld ('%s') is a dictionary "
                                  "of Arrow format '%s'; sluice supports dictionaries of "
                                  "strings (u, U)", fn, (long long)i, f->name ? f->name : "",
                                  d->format ? d->format : "(null)");
    out->type = SL_TYPE_DICT;
    out->conv = SL__ARROW_DICT;
    out->index_width = 1 << (int)((p - idx) / 2);
    out->index_signed = ((p - idx) % 2) == 0;
    out->large_values = d->format[0] == 'U';
    return SL_OK;
}

int sl__arrow_field_parse(const char *fn, const struct ArrowSchema *f, int64_t i,
                          struct sl__arrow_field *out)
{
    const char *name = f->name ? f->name : "";
    memset(out, 0, sizeof *out);
    if (!f->format)
        return sl__set_last_error(SL_EFORMAT, "%s: column %lld ('%s') has no format string",
                                  fn, (long long)i, name);
    if (f->n_children != 0)
        return sl__set_last_error(SL_EUNSUPPORTED, "%s: column %lld ('%s') of format '%s' has "
                                  "%lld children; sluice columns are not nested", fn,
                                  (long long)i, name, f->format, (long long)f->n_children);
    if (f->dictionary)
        return dict_field(fn, f, i, out);
    const char *fmt = f->format;
    out->conv = SL__ARROW_SHARE;
    if ((out->type = primitive_type(fmt)) != SL_TYPE_INVALID) {
        if (out->type == SL_TYPE_BOOL)
            out->conv = SL__ARROW_BOOL_BITS;
        else if (sl_type_is_string(out->type))
            out->conv = SL__ARROW_STRINGS;
        return SL_OK;
    }
    if (strcmp(fmt, "tdD") == 0) {
        out->type = SL_TYPE_DATE32;
        return SL_OK;
    }
    if (strncmp(fmt, "ts", 2) == 0 && fmt[2])
        return timestamp_field(fn, f, i, out);
    if (fmt[0] == 'd' && fmt[1] == ':') {
        out->type = decimal_type(fmt);
        if (out->type == SL_TYPE_INVALID)
            return unsupported(fn, f, i, ": sluice has decimal128 of precision 1..38");
        if (sl_type_precision(out->type) <= SL_DECIMAL64_MAX_PRECISION)
            out->conv = SL__ARROW_DEC_NARROW;
        return SL_OK;
    }
    return unsupported(fn, f, i, supported_list);
}

const char *sl__arrow_format(enum sl_type type, char buf[32])
{
    switch (SL_TYPE_ID(type)) {
    case SL_TYPE_DATE32:
        return "tdD";
    case SL_TYPE_TIMESTAMP:
        return "tsu:";
    case SL_TYPE_DICT:
        return "i";
    case SL_TYPE_DECIMAL:
        if (sl_type_precision(type) == 0)
            return NULL;
        snprintf(buf, 32, "d:%d,%d", sl_type_precision(type), sl_type_scale(type));
        return buf;
    default:
        break;
    }
    for (size_t k = 0; k < sizeof primitive / sizeof primitive[0]; k++) {
        if (primitive[k].type == type) {
            buf[0] = primitive[k].format;
            buf[1] = '\0';
            return buf;
        }
    }
    return NULL;
}
