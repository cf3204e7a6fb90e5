/* Short string join keys: a utf8 or large_utf8 key of at most 16 bytes travels in the
 * join's tuples as two zero-padded words beside a hash that holds its length (struct
 * join_t32), so partitions are probed and matched exactly, without going back to the
 * input's offsets and bytes for every candidate (random reads that cost more than the
 * rest of the join), and the fused aggregate may carry payloads inline.
 *
 * The sink measures each batch (join_str16_rows) while it is still in cache; finalize
 * picks the layout when every row of both sides fits (join.c). */
#include <string.h>

#include "join_int.h"

/* The longest string of rows [0, n) of offsets o (Arrow layout, offset applied). */
#define MAX_LEN(T, o, n, out)                                                              \
    do {                                                                                   \
        const T *o_ = (o);                                                                 \
        T m_ = 0;                                                                          \
        for (int64_t i_ = 0; i_ < (n); i_++) {                                             \
            T l_ = o_[i_ + 1] - o_[i_];                                                    \
            m_ = l_ > m_ ? l_ : m_;                                                        \
        }                                                                                  \
        (out) = (int64_t)m_;                                                               \
    } while (0)

int64_t join_str16_rows(const sl_batch_t *b, int col)
{
    struct sl__colview v;
    if (sl__colview_get(b, col, &v) < 0)
        return 0;
    int64_t n = b->n_rows, m;
    if (v.c.type == SL_TYPE_UTF8)
        MAX_LEN(int32_t, (const int32_t *)v.c.data + v.c.offset, n, m);
    else if (v.c.type == SL_TYPE_LARGE_UTF8)
        MAX_LEN(int64_t, (const int64_t *)v.c.data + v.c.offset, n, m);
    else
        return 0;
    return m <= JOIN_STR16_BYTES ? n : 0;
}

/* The first len (<= 8) bytes of word x, the rest zero. */
static inline uint64_t low_bytes(uint64_t x, int64_t len)
{
    return len >= 8 ? x : x & (((uint64_t)1 << (8 * len)) - 1);
}

/* Hash of a short string's words and length, the length in the low 5 bits: the words
 * are multiplied by odd constants and folded (partitions take the top bits). */
static inline uint64_t str16_key(uint64_t w0, uint64_t w1, int64_t len)
{
    uint64_t h = w0 * 0x9E3779B97F4A7C15ull ^ (w1 + (uint64_t)len) * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 32;
    h *= 0x165667B19E3779F9ull;
    h ^= h >> 29;
    return (h & ~(uint64_t)31) | (uint64_t)len;
}

/* Words of string p (len <= 16 bytes): two 8-byte loads when `room` bytes of the buffer
 * follow p, a byte copy near its end. */
static inline void str16_words(const char *p, int64_t len, int64_t room, uint64_t *w)
{
    uint64_t a = 0, b = 0;
    if (room >= 16) {
        memcpy(&a, p, 8);
        memcpy(&b, p + 8, 8);
    } else {
        char buf[16] = {0};
        if (len)
            memcpy(buf, p, (size_t)len);
        memcpy(&a, buf, 8);
        memcpy(&b, buf + 8, 8);
    }
    w[0] = low_bytes(a, len);
    w[1] = len > 8 ? low_bytes(b, len - 8) : 0;
}

/* The loop of join_str16_load for offsets of type T; a null row loads as "" (its nul
 * flag sends it to the null bucket). */
#define LOAD(T)                                                                            \
    do {                                                                                   \
        const T *o = (const T *)v->c.data + v->c.offset + lo;                              \
        int64_t end = (int64_t)((const T *)v->c.data)[v->c.offset + v->c.length];          \
        for (int64_t i = 0; i < n; i++) {                                                  \
            int64_t s = (int64_t)o[i], len = (int64_t)o[i + 1] - s;                        \
            nul[i] = !sl__colview_valid(v, lo + i);                                        \
            nulls += nul[i];                                                               \
            if (nul[i])                                                                    \
                len = 0;                                                                   \
            str16_words(v->s.chars + s, len, end - s, &w[2 * i]);                          \
            k[i] = str16_key(w[2 * i], w[2 * i + 1], len);                                 \
        }                                                                                  \
    } while (0)

int64_t join_str16_load(const struct sl__colview *v, int64_t lo, int64_t n, uint64_t *k,
                        uint64_t *w, uint8_t *nul)
{
    int64_t nulls = 0;
    if (v->c.type == SL_TYPE_UTF8)
        LOAD(int32_t);
    else
        LOAD(int64_t);
    return nulls;
}
