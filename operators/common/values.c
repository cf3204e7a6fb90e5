/* Values of every column type: order, hash, gather and concatenation (values.h). */
#include "values.h"

#include <math.h>

#include "internal.h"

int sl__colview_get(const sl_batch_t *b, int i, struct sl__colview *v)
{
    int rc = sl_batch_column(b, i, &v->c);
    if (rc == SL_OK)
        rc = sl_batch_column_strings(b, i, &v->s);
    return rc;
}

#define CMP(x, y) (((x) > (y)) - ((x) < (y)))

static int cmp_f64(double x, double y)
{
    bool nx = isnan(x), ny = isnan(y);
    if (nx || ny)
        return nx - ny; /* NaN is the largest value and equal to itself */
    return CMP(x, y);
}

/* An int128 decimal as its two little-endian halves: signed high, unsigned low. */
static int cmp_i128(const void *a, const void *b)
{
    int64_t ah, bh;
    uint64_t al, bl;
    memcpy(&al, a, 8);
    memcpy(&ah, (const char *)a + 8, 8);
    memcpy(&bl, b, 8);
    memcpy(&bh, (const char *)b + 8, 8);
    return ah != bh ? CMP(ah, bh) : CMP(al, bl);
}

int sl__val_cmp(const struct sl__colview *a, int64_t ra, const struct sl__colview *b,
                int64_t rb)
{
    if (sl_type_is_string(a->c.type)) {
        int64_t al, bl;
        /* One shared dictionary: equal codes are equal strings (unequal ones still need
         * the bytes for their order). */
        if (a->c.type == SL_TYPE_DICT && b->c.type == SL_TYPE_DICT &&
            a->s.dict_offsets == b->s.dict_offsets &&
            ((const int32_t *)a->c.data)[a->c.offset + ra] ==
                ((const int32_t *)b->c.data)[b->c.offset + rb])
            return 0;
        const char *as = sl__colview_str(a, ra, &al), *bs = sl__colview_str(b, rb, &bl);
        return sl__str_cmp(as, al, bs, bl);
    }
    const void *x = sl__colview_at(a, ra), *y = sl__colview_at(b, rb);
    switch (SL_TYPE_ID(a->c.type)) {
    case SL_TYPE_BOOL:
    case SL_TYPE_UINT8: return CMP(*(const uint8_t *)x, *(const uint8_t *)y);
    case SL_TYPE_INT8: return CMP(*(const int8_t *)x, *(const int8_t *)y);
    case SL_TYPE_INT16: return CMP(*(const int16_t *)x, *(const int16_t *)y);
    case SL_TYPE_UINT16: return CMP(*(const uint16_t *)x, *(const uint16_t *)y);
    case SL_TYPE_INT32:
    case SL_TYPE_DATE32: return CMP(*(const int32_t *)x, *(const int32_t *)y);
    case SL_TYPE_UINT32: return CMP(*(const uint32_t *)x, *(const uint32_t *)y);
    case SL_TYPE_INT64:
    case SL_TYPE_TIMESTAMP: return CMP(*(const int64_t *)x, *(const int64_t *)y);
    case SL_TYPE_UINT64: return CMP(*(const uint64_t *)x, *(const uint64_t *)y);
    case SL_TYPE_FLOAT32: return cmp_f64(*(const float *)x, *(const float *)y);
    case SL_TYPE_FLOAT64: return cmp_f64(*(const double *)x, *(const double *)y);
    case SL_TYPE_DECIMAL:
        if (sl_type_width(a->c.type) == 8)
            return CMP(*(const int64_t *)x, *(const int64_t *)y);
        return cmp_i128(x, y);
    default: return 0;
    }
}

__int128 sl__val_i128(const struct sl__colview *v, int64_t r)
{
    const void *x = sl__colview_at(v, r);
    switch (SL_TYPE_ID(v->c.type)) {
    case SL_TYPE_BOOL:
    case SL_TYPE_UINT8: return *(const uint8_t *)x;
    case SL_TYPE_INT8: return *(const int8_t *)x;
    case SL_TYPE_INT16: return *(const int16_t *)x;
    case SL_TYPE_UINT16: return *(const uint16_t *)x;
    case SL_TYPE_INT32:
    case SL_TYPE_DATE32: return *(const int32_t *)x;
    case SL_TYPE_UINT32: return *(const uint32_t *)x;
    case SL_TYPE_INT64:
    case SL_TYPE_TIMESTAMP: return *(const int64_t *)x;
    case SL_TYPE_UINT64: return *(const uint64_t *)x;
    case SL_TYPE_DECIMAL: {
        if (sl_type_width(v->c.type) == 8)
            return *(const int64_t *)x;
        __int128 w;
        memcpy(&w, x, 16);
        return w;
    }
    default: return 0;
    }
}

__int128 sl__pow10_i128(int n)
{
    __int128 p = 1;
    while (n-- > 0)
        p *= 10;
    return p;
}

double sl__val_f64(const struct sl__colview *v, int64_t r)
{
    switch (SL_TYPE_ID(v->c.type)) {
    case SL_TYPE_FLOAT32: return *(const float *)sl__colview_at(v, r);
    case SL_TYPE_FLOAT64: return *(const double *)sl__colview_at(v, r);
    case SL_TYPE_DECIMAL:
        return (double)sl__val_i128(v, r) / (double)sl__pow10_i128(sl_type_scale(v->c.type));
    default: return (double)sl__val_i128(v, r);
    }
}


uint64_t sl__val_hash(const struct sl__colview *v, int64_t r)
{
    if (sl_type_is_string(v->c.type)) {
        int64_t len;
        const char *s = sl__colview_str(v, r, &len);
        return sl__hash_bytes(s, len);
    }
    const void *x = sl__colview_at(v, r);
    uint64_t w = 0;
    switch (SL_TYPE_ID(v->c.type)) {
    case SL_TYPE_FLOAT32:
    case SL_TYPE_FLOAT64: {
        double d = v->c.type == SL_TYPE_FLOAT32 ? *(const float *)x : *(const double *)x;
        if (isnan(d))
            d = NAN;
        else if (d == 0)
            d = 0; /* -0.0 hashes as 0.0 */
        memcpy(&w, &d, 8);
        break;
    }
    case SL_TYPE_INT8: w = (uint64_t)(int64_t)*(const int8_t *)x; break;
    case SL_TYPE_INT16: w = (uint64_t)(int64_t)*(const int16_t *)x; break;
    case SL_TYPE_INT32:
    case SL_TYPE_DATE32: w = (uint64_t)(int64_t)*(const int32_t *)x; break;
    default:
        if (sl_type_width(v->c.type) == 16)
            return sl__hash_bytes(x, 16);
        memcpy(&w, x, sl_type_width(v->c.type));
        break;
    }
    return sl__mix64(w);
}

static void take_fixed(void *dst, const void *src, size_t w, const int64_t *idx, int64_t n)
{
    switch (w) {
    case 1:
        for (int64_t i = 0; i < n; i++)
            ((uint8_t *)dst)[i] = idx[i] < 0 ? 0 : ((const uint8_t *)src)[idx[i]];
        break;
    case 2:
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)dst)[i] = idx[i] < 0 ? 0 : ((const uint16_t *)src)[idx[i]];
        break;
    case 4:
        for (int64_t i = 0; i < n; i++)
            ((uint32_t *)dst)[i] = idx[i] < 0 ? 0 : ((const uint32_t *)src)[idx[i]];
        break;
    case 8:
        for (int64_t i = 0; i < n; i++)
            ((uint64_t *)dst)[i] = idx[i] < 0 ? 0 : ((const uint64_t *)src)[idx[i]];
        break;
    default:
        for (int64_t i = 0; i < n; i++) {
            if (idx[i] < 0)
                memset((char *)dst + (size_t)i * w, 0, w);
            else
                memcpy((char *)dst + (size_t)i * w, (const char *)src + (size_t)idx[i] * w, w);
        }
    }
}

static int take_strings(sl_batch_t *dst, int dc, const struct sl__colview *v,
                        const int64_t *idx, int64_t n)
{
    int64_t total = 0, len;
    for (int64_t i = 0; i < n; i++) {
        if (idx[i] >= 0) {
            sl__colview_str(v, idx[i], &len);
            total += len;
        }
    }
    char *chars = sl_batch_column_chars(dst, dc, total);
    if (!chars)
        return total > INT32_MAX && v->c.type == SL_TYPE_UTF8 ? SL_EOVERFLOW : SL_ENOMEM;
    void *off = sl_batch_column_data(dst, dc);
    bool wide = v->c.type == SL_TYPE_LARGE_UTF8;
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        if (idx[i] >= 0) {
            const char *s = sl__colview_str(v, idx[i], &len);
            memcpy(chars + at, s, (size_t)len);
            at += len;
        }
        if (wide)
            ((int64_t *)off)[i + 1] = at;
        else
            ((int32_t *)off)[i + 1] = (int32_t)at;
    }
    if (wide)
        ((int64_t *)off)[0] = 0;
    else
        ((int32_t *)off)[0] = 0;
    return SL_OK;
}

/* Validity of the taken rows: null where idx < 0 or the source row is null. */
static int take_validity(sl_batch_t *dst, int dc, const struct sl__colview *v,
                         const int64_t *idx, int64_t n)
{
    bool any = false;
    for (int64_t i = 0; i < n && !any; i++)
        any = idx[i] < 0 || !sl__colview_valid(v, idx[i]);
    if (!any)
        return SL_OK;
    uint8_t *bits = sl_batch_column_validity(dst, dc);
    if (!bits)
        return SL_ENOMEM;
    memset(bits, 0, (size_t)((n + 7) / 8));
    for (int64_t i = 0; i < n; i++) {
        if (idx[i] >= 0 && sl__colview_valid(v, idx[i]))
            bits[i >> 3] |= (uint8_t)(1u << (i & 7));
    }
    return SL_OK;
}

int sl__col_take(sl_batch_t *dst, int dc, const sl_batch_t *src, int sc, const int64_t *idx,
                 int64_t n)
{
    struct sl__colview v, d;
    int rc = sl__colview_get(src, sc, &v);
    if (rc == SL_OK)
        rc = sl__colview_get(dst, dc, &d);
    if (rc < 0)
        return rc;
    if (d.c.type != v.c.type || d.c.length != n)
        return SL_ETYPE;
    void *out = sl_batch_column_data(dst, dc);
    if (!out)
        return SL_EINVAL;
    if (v.c.type == SL_TYPE_UTF8 || v.c.type == SL_TYPE_LARGE_UTF8) {
        rc = take_strings(dst, dc, &v, idx, n);
    } else {
        size_t w = sl_type_width(v.c.type);
        take_fixed(out, (const char *)v.c.data + (size_t)v.c.offset * w, w, idx, n);
        if (v.c.type == SL_TYPE_DICT)
            rc = sl_batch_share_dictionary(dst, dc, src, sc);
    }
    return rc < 0 ? rc : take_validity(dst, dc, &v, idx, n);
}

int sl__batch_take(const sl_batch_t *src, const int64_t *idx, int64_t n, sl_batch_t **out)
{
    sl_batch_t *b = sl__batch_new(src->schema, n);
    int rc = b && sl__batch_alloc_columns(b) == SL_OK ? SL_OK : SL_ENOMEM;
    for (int c = 0; rc == SL_OK && c < b->n_cols; c++)
        rc = sl__col_take(b, c, src, c, idx, n);
    if (rc < 0) {
        sl_batch_unref(b);
        b = NULL;
    }
    *out = b;
    return rc;
}

/* The validity of column c of the concatenated batches (none if no batch has one). */
static int concat_validity(sl_batch_t *out, int c, sl_batch_t *const *bs, int64_t n)
{
    struct sl__colview v;
    bool nulls = false;
    for (int64_t k = 0; k < n; k++) {
        sl__colview_get(bs[k], c, &v);
        nulls |= v.c.validity != NULL;
    }
    uint8_t *bits = nulls ? sl_batch_column_validity(out, c) : NULL;
    if (nulls && !bits)
        return SL_ENOMEM;
    int64_t row = 0;
    for (int64_t k = 0; bits && k < n; k++) {
        sl__colview_get(bs[k], c, &v);
        for (int64_t i = 0; i < v.c.length; i++, row++) {
            if (sl__colview_valid(&v, i))
                bits[row >> 3] |= (uint8_t)(1u << (row & 7));
            else
                bits[row >> 3] &= (uint8_t)~(1u << (row & 7));
        }
    }
    return SL_OK;
}

/* Concatenates DICT column c of batches whose dictionaries differ: one merged
 * dictionary of their distinct strings (first seen first), codes remapped. */
static int concat_dict_merged(sl_batch_t *out, int c, sl_batch_t *const *bs, int64_t n)
{
    struct sl__dict_union u;
    int rc = sl__dict_union_init(&u, bs, n, c);
    if (rc < 0)
        return rc;
    int32_t *data = sl_batch_column_data(out, c);
    int64_t row = 0;
    for (int64_t k = 0; k < n; k++) {
        struct sl__colview v;
        sl__colview_get(bs[k], c, &v);
        const int32_t *codes = (const int32_t *)v.c.data + v.c.offset;
        for (int64_t i = 0; i < v.c.length; i++)
            data[row + i] = sl__dict_union_code(&u, k, codes[i]);
        row += v.c.length;
    }
    rc = sl__dict_union_attach(&u, out, c);
    sl__dict_union_fini(&u);
    return rc < 0 ? rc : concat_validity(out, c, bs, n);
}

/* Copies column c of each batch after the previous one's rows into out's column c. */
static int concat_column(sl_batch_t *out, int c, sl_batch_t *const *bs, int64_t n)
{
    struct sl__colview v;
    enum sl_type type = out->cols[c].type;
    bool str = type == SL_TYPE_UTF8 || type == SL_TYPE_LARGE_UTF8;
    int64_t total = 0;
    for (int64_t k = 0; k < n; k++) {
        if (sl__colview_get(bs[k], c, &v) < 0)
            return SL_EINVAL;
        if (type == SL_TYPE_DICT && bs[k]->cols[c].dict != bs[0]->cols[c].dict)
            return concat_dict_merged(out, c, bs, n);
        if (str && v.c.length > 0) {
            int64_t lo, hi;
            if (type == SL_TYPE_UTF8) {
                lo = ((const int32_t *)v.c.data)[v.c.offset];
                hi = ((const int32_t *)v.c.data)[v.c.offset + v.c.length];
            } else {
                lo = ((const int64_t *)v.c.data)[v.c.offset];
                hi = ((const int64_t *)v.c.data)[v.c.offset + v.c.length];
            }
            total += hi - lo;
        }
    }
    char *chars = str ? sl_batch_column_chars(out, c, total) : NULL;
    if (str && !chars)
        return type == SL_TYPE_UTF8 && total > INT32_MAX ? SL_EOVERFLOW : SL_ENOMEM;
    char *data = sl_batch_column_data(out, c);
    size_t w = sl_type_width(type);
    int64_t row = 0, at = 0;
    for (int64_t k = 0; k < n; k++) {
        sl__colview_get(bs[k], c, &v);
        int64_t len = v.c.length;
        if (str && len > 0) {
            /* A slice's strings are one run of bytes: one copy, then its offsets moved. */
            int64_t o = v.c.offset, lo, hi;
            if (type == SL_TYPE_UTF8) {
                const int32_t *src = v.c.data;
                lo = src[o];
                hi = src[o + len];
                for (int64_t i = 0; i < len; i++)
                    ((int32_t *)data)[row + i + 1] = (int32_t)(at + src[o + i + 1] - lo);
            } else {
                const int64_t *src = v.c.data;
                lo = src[o];
                hi = src[o + len];
                for (int64_t i = 0; i < len; i++)
                    ((int64_t *)data)[row + i + 1] = at + src[o + i + 1] - lo;
            }
            if (hi > lo)
                memcpy(chars + at, v.s.chars + lo, (size_t)(hi - lo));
            at += hi - lo;
        } else if (!str && len > 0) {
            memcpy(data + (size_t)row * w, (const char *)v.c.data + (size_t)v.c.offset * w,
                   (size_t)len * w);
        }
        row += len;
    }
    int rc = type == SL_TYPE_DICT && n > 0 ? sl_batch_share_dictionary(out, c, bs[0], c) : SL_OK;
    return rc < 0 ? rc : concat_validity(out, c, bs, n);
}

int sl__batch_concat(sl_batch_t *const *batches, int64_t n, sl_batch_t **out)
{
    *out = NULL;
    if (n < 1 || !batches)
        return SL_EINVAL;
    int64_t rows = 0;
    for (int64_t k = 0; k < n; k++) {
        if (sl_batch_device(batches[k]) >= 0 ||
            !sl__schema_equal(batches[k]->schema, batches[0]->schema))
            return SL_EINVAL;
        rows += batches[k]->n_rows;
    }
    sl_batch_t *b = sl__batch_new(batches[0]->schema, rows);
    if (!b || sl__batch_alloc_columns(b) != SL_OK) {
        sl_batch_unref(b);
        return SL_ENOMEM;
    }
    for (int c = 0; c < b->n_cols; c++) {
        int rc = concat_column(b, c, batches, n);
        if (rc < 0) {
            sl_batch_unref(b);
            return rc;
        }
    }
    *out = b;
    return SL_OK;
}
