/* Values as text and back: the one place where sluice reads and writes dates,
 * timestamps, decimals, booleans and UTF-8 (CSV reader and writer, plan options,
 * printing). Never installed. */
#ifndef SLUICE_VALUE_TEXT_H
#define SLUICE_VALUE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/data.h>

/* Parse results: 0 ok; negative values say what is wrong (for messages). */
enum sl__text_err {
    SL__TEXT_SYNTAX = -1,      /* not the expected form */
    SL__TEXT_RANGE = -2,       /* a date or time field out of range, or overflow */
    SL__TEXT_INT_DIGITS = -3,  /* decimal: more integer digits than precision - scale */
    SL__TEXT_FRAC_DIGITS = -4  /* decimal: more (nonzero) fractional digits than scale */
};
/* A short description of a parse result, for messages. */
const char *sl__text_err_str(int err);

/* Days since 1970-01-01 of a civil date, and back (proleptic Gregorian). */
int64_t sl__days_from_civil(int64_t y, int m, int d);
void sl__civil_from_days(int64_t days, int64_t *y, int *m, int *d);

/* "YYYY-MM-DD" (a year of 4 or more digits, optionally negative). */
int sl__date_parse(const char *s, size_t n, int32_t *out);
/* "YYYY-MM-DD[( |T)HH:MM:SS[.f{1,6}]]" as microseconds since 1970-01-01 00:00:00. */
int sl__timestamp_parse(const char *s, size_t n, int64_t *out);
/* "[-+]digits[.digits]" into the value * 10^scale; exact (never through a float).
 * Spaces around the number are allowed; trailing fractional zeros past the scale are
 * too (they do not change the value). */
int sl__decimal_parse(const char *s, size_t n, int precision, int scale, __int128 *out);
/* true/false/t/f/1/0 (any case). */
int sl__bool_parse(const char *s, size_t n, uint8_t *out);
/* Whether s[0..n) is well-formed UTF-8 (no overlongs, surrogates or values past
 * U+10FFFF); *bad gets the offset of the first bad byte. */
bool sl__utf8_valid(const char *s, size_t n, size_t *bad);

/* Formatting; each returns the length written (buf needs 48 bytes). */
size_t sl__date_format(int32_t days, char *buf);
size_t sl__timestamp_format(int64_t us, char *buf);
size_t sl__decimal_format(__int128 v, int scale, char *buf);

/* Value `row` (offset not applied) of a non-string column as text into buf (48 bytes
 * at least); returns the length. Strings are the caller's (they need no formatting). */
size_t sl__value_format(const struct sl_column *c, int64_t row, char *buf);

/* The decimal value at p (int64 for precision <= 18, int128 above; any alignment). */
static inline __int128 sl__decimal_load(enum sl_type type, const void *p)
{
    if (sl_type_width(type) == 8) {
        int64_t v;
        __builtin_memcpy(&v, p, 8);
        return v;
    }
    __int128 v;
    __builtin_memcpy(&v, p, 16);
    return v;
}

#endif /* SLUICE_VALUE_TEXT_H */
