/* Values of every column type (docs/TYPES.md) for the built-in operators: string views,
 * a total order and a hash over one value, and gathering rows into a new column. The one
 * place operators learn how a type is laid out, so that each operator handles every type
 * the same way. */
#ifndef SLUICE_OPERATORS_VALUES_H
#define SLUICE_OPERATORS_VALUES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <sluice/data.h>

/* A column as operators read it: the frozen view plus its string parts. */
struct sl__colview {
    struct sl_column c;
    struct sl_strings s;
};

/* Fills *v from column i of batch b; SL_EINVAL if i is out of range. */
int sl__colview_get(const sl_batch_t *b, int i, struct sl__colview *v);

/* Whether row r (0-based, offset not applied) is valid. */
static inline bool sl__colview_valid(const struct sl__colview *v, int64_t r)
{
    if (!v->c.validity)
        return true;
    int64_t bit = v->c.offset + r;
    return (v->c.validity[bit >> 3] >> (bit & 7)) & 1;
}

/* The bytes of string row r (UTF8, LARGE_UTF8 or DICT). */
static inline const char *sl__colview_str(const struct sl__colview *v, int64_t r, int64_t *len)
{
    int64_t i = v->c.offset + r;
    switch (v->c.type) {
    case SL_TYPE_UTF8: {
        const int32_t *o = v->c.data;
        *len = o[i + 1] - o[i];
        return v->s.chars + o[i];
    }
    case SL_TYPE_LARGE_UTF8: {
        const int64_t *o = v->c.data;
        *len = o[i + 1] - o[i];
        return v->s.chars + o[i];
    }
    default: { /* SL_TYPE_DICT */
        int32_t code = ((const int32_t *)v->c.data)[i];
        if (code < 0 || code >= v->s.dict_length) { /* a null row's code may be anything */
            *len = 0;
            return "";
        }
        *len = v->s.dict_offsets[code + 1] - v->s.dict_offsets[code];
        return v->s.dict_chars + v->s.dict_offsets[code];
    }
    }
}

/* Address of fixed-width row r's value (offset applied). */
static inline const void *sl__colview_at(const struct sl__colview *v, int64_t r)
{
    return (const char *)v->c.data + (size_t)(v->c.offset + r) * sl_type_width(v->c.type);
}

/* Byte-wise order of two strings, as SQL's default collation (memcmp, then length). */
static inline int sl__str_cmp(const char *a, int64_t alen, const char *b, int64_t blen)
{
    int64_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, (size_t)n) : 0;
    if (c)
        return c < 0 ? -1 : 1;
    return (alen > blen) - (alen < blen);
}

/* Compares valid row ra of a with valid row rb of b, of the same type (strings may mix
 * UTF8, LARGE_UTF8 and DICT): -1, 0 or 1. Floats order NaN above every other value and
 * equal to itself (DuckDB's and PostgreSQL's rule); -0.0 equals 0.0. Nulls are the
 * caller's business. */
int sl__val_cmp(const struct sl__colview *a, int64_t ra, const struct sl__colview *b,
                int64_t rb);

/* A hash of valid row r, equal for rows that sl__val_cmp calls equal (strings hash their
 * bytes whatever their encoding; all NaNs hash alike, -0.0 like 0.0). */
uint64_t sl__val_hash(const struct sl__colview *v, int64_t r);

/* Valid row r of an integer-like column (int*, uint*, bool, date32, timestamp, a
 * decimal's scaled integer) as 128 bits; 0 for other types. */
__int128 sl__val_i128(const struct sl__colview *v, int64_t r);
/* Valid row r of a numeric column (integer-like as above, floats, decimals divided by
 * 10^scale) as a double; 0 for other types. */
double sl__val_f64(const struct sl__colview *v, int64_t r);
/* 10^n as 128 bits, n in 0..38. */
__int128 sl__pow10_i128(int n);

/* Column dc of dst (a batch being built: unshared, host) gets rows idx[0..n) of column
 * sc of src, in order; idx[i] < 0 gives a null row (outer joins). Types must be equal
 * (SL_ETYPE otherwise). Strings are copied (chars sized to fit); a DICT column shares
 * src's dictionary. dst must have exactly n rows. Errors: SL_EINVAL, SL_ETYPE, SL_ENOMEM. */
int sl__col_take(sl_batch_t *dst, int dc, const sl_batch_t *src, int sc, const int64_t *idx,
                 int64_t n);

/* A new host batch (*out, caller's reference) of src's schema holding rows idx[0..n) of
 * src, every column gathered by sl__col_take. */
int sl__batch_take(const sl_batch_t *src, const int64_t *idx, int64_t n, sl_batch_t **out);

/* Merging dictionaries (struct sl__dict_union) is the runtime's: runtime/internal.h. */

/* A new host batch (*out, caller's reference) holding the rows of batches[0..n), in
 * order, all of one schema. A DICT column keeps its dictionary when every batch shares
 * it; otherwise it gets one merged dictionary of the distinct strings (codes remapped). */
int sl__batch_concat(sl_batch_t *const *batches, int64_t n, sl_batch_t **out);

#endif /* SLUICE_OPERATORS_VALUES_H */
