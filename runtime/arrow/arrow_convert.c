/* Value conversions at the Arrow boundary, for the types whose sluice layout differs
 * from Arrow's (docs/TYPES.md): bit-packed booleans, decimal128 of precision <= 18,
 * timestamps in other units, dictionary indexes of other widths. Foreign buffers may
 * have any alignment, so values are read with memcpy. */
#include "arrow_int.h"

int64_t sl__bit_count_zeros(const uint8_t *bits, int64_t off, int64_t n)
{
    int64_t zeros = 0;
    for (int64_t i = off; i < off + n; i++)
        zeros += !sl__bit(bits, i);
    return zeros;
}

struct sl__buf *sl__bits_copy(const uint8_t *bits, int64_t off, int64_t n)
{
    struct sl__buf *b = sl__buf_new((n + 7) / 8);
    if (!b)
        return NULL;
    uint8_t *d = b->ptr;
    memset(d, 0, (size_t)b->bytes);
    if ((off & 7) == 0) {
        memcpy(d, bits + off / 8, (size_t)b->bytes);
        return b;
    }
    for (int64_t i = 0; i < n; i++)
        d[i >> 3] |= (uint8_t)(sl__bit(bits, off + i) << (i & 7));
    return b;
}

struct sl__buf *sl__bits_to_bytes(const uint8_t *bits, int64_t off, int64_t n)
{
    struct sl__buf *b = sl__buf_new(n);
    if (!b)
        return NULL;
    uint8_t *d = b->ptr;
    for (int64_t i = 0; i < n; i++)
        d[i] = sl__bit(bits, off + i);
    return b;
}

struct sl__buf *sl__bytes_to_bits(const uint8_t *bytes, int64_t n)
{
    struct sl__buf *b = sl__buf_new((n + 7) / 8);
    if (!b)
        return NULL;
    uint8_t *d = b->ptr;
    memset(d, 0, (size_t)b->bytes);
    for (int64_t i = 0; i < n; i++)
        d[i >> 3] |= (uint8_t)((bytes[i] != 0) << (i & 7));
    return b;
}

static inline bool row_valid(const uint8_t *validity, int64_t voff, int64_t i)
{
    return !validity || sl__bit(validity, voff + i);
}

bool sl__dec128_narrow(const uint8_t *src, int64_t n, int precision, const uint8_t *validity,
                       int64_t voff, int64_t *dst, int64_t *bad)
{
    int64_t max = 1;
    for (int k = 0; k < precision; k++)
        max *= 10;
    max -= 1; /* the largest value of `precision` digits */
    for (int64_t i = 0; i < n; i++) {
        uint64_t lo, hi;
        memcpy(&lo, src + 16 * i, 8);
        memcpy(&hi, src + 16 * i + 8, 8);
        if (!row_valid(validity, voff, i)) {
            dst[i] = 0;
            continue;
        }
        /* Fits in int64 when the high word is the sign extension of the low one. */
        if (hi != ((int64_t)lo < 0 ? UINT64_MAX : 0) || (int64_t)lo > max ||
            (int64_t)lo < -max) {
            *bad = i;
            return false;
        }
        dst[i] = (int64_t)lo;
    }
    return true;
}

void sl__dec64_widen(const int64_t *src, int64_t n, uint8_t *dst)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t lo = (uint64_t)src[i], hi = src[i] < 0 ? UINT64_MAX : 0;
        memcpy(dst + 16 * i, &lo, 8);
        memcpy(dst + 16 * i + 8, &hi, 8);
    }
}

bool sl__ts_scale(const uint8_t *src, int64_t n, const uint8_t *validity, int64_t voff,
                  int64_t mul, int64_t div, int64_t *dst, int64_t *bad)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t v;
        memcpy(&v, src + 8 * i, 8);
        if (!row_valid(validity, voff, i)) {
            dst[i] = 0;
            continue;
        }
        if ((div > 1 && v % div != 0) || __builtin_mul_overflow(v, mul, &dst[i])) {
            *bad = i;
            return false;
        }
        dst[i] /= div;
    }
    return true;
}

static int64_t load_index(const uint8_t *p, int width, bool is_signed)
{
    switch (width) {
    case 1:
        return is_signed ? (int64_t)(int8_t)p[0] : (int64_t)p[0];
    case 2: {
        uint16_t v;
        memcpy(&v, p, 2);
        return is_signed ? (int64_t)(int16_t)v : (int64_t)v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, p, 4);
        return is_signed ? (int64_t)(int32_t)v : (int64_t)v;
    }
    default: {
        uint64_t v;
        memcpy(&v, p, 8);
        /* An unsigned index above INT64_MAX is out of any dictionary's range: -1. */
        return is_signed || v <= INT64_MAX ? (int64_t)v : -1;
    }
    }
}

bool sl__codes_to_i32(const uint8_t *src, int width, bool is_signed, int64_t n,
                      const uint8_t *validity, int64_t voff, int64_t dict_n, int32_t *dst,
                      int64_t *bad)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t v = 0;
        if (row_valid(validity, voff, i)) {
            v = load_index(src + (size_t)width * (size_t)i, width, is_signed);
            if (v < 0 || v >= dict_n) {
                *bad = i;
                return false;
            }
        }
        if (dst)
            dst[i] = (int32_t)v;
    }
    return true;
}

bool sl__offsets_check(const uint8_t *offsets, bool large, int64_t first, int64_t n,
                       int64_t *last, int64_t *bad)
{
    int64_t prev = 0;
    for (int64_t k = 0; k <= n; k++) {
        int64_t v;
        if (large) {
            memcpy(&v, offsets + 8 * (first + k), 8);
        } else {
            int32_t w;
            memcpy(&w, offsets + 4 * (first + k), 4);
            v = w;
        }
        if (v < 0 || (k > 0 && v < prev)) {
            *bad = k;
            return false;
        }
        prev = v;
    }
    *last = prev;
    return true;
}
