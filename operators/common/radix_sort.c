/* LSD radix sort building blocks: per-range histograms and a stable scatter with
 * software write-combining (one cache line of items per bucket, written out whole,
 * with non-temporal stores when asked), plus a plain single-threaded sort.
 *
 * The scatter is the hot loop of every pass. Writing items straight to 2048 output
 * streams touches as many cache lines (and often as many TLB entries) per few items;
 * the buffers (2048 x 64 bytes = 128 KiB with 11-bit digits, inside L2, on the stack)
 * turn that into one full-line write per 64 bytes. A line that starts before this
 * chunk's first position in its bucket (shared with a neighbouring bucket or chunk,
 * perhaps on another thread) is written only from that position on, with plain stores,
 * so chunks never overwrite each other.
 */
#include "op_common.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#define HAVE_STREAM 1
#else
#define HAVE_STREAM 0
#endif

/* Copies one 64-byte line from src to the 64-byte aligned dst, non-temporally. */
static inline void line_stream(void *dst, const void *src)
{
#if HAVE_STREAM
    const __m128i *s = src;
    __m128i *d = dst;
    _mm_stream_si128(d + 0, _mm_load_si128(s + 0));
    _mm_stream_si128(d + 1, _mm_load_si128(s + 1));
    _mm_stream_si128(d + 2, _mm_load_si128(s + 2));
    _mm_stream_si128(d + 3, _mm_load_si128(s + 3));
#else
    memcpy(dst, src, 64);
#endif
}

static inline void stream_fence(void)
{
#if HAVE_STREAM
    _mm_sfence();
#endif
}

#define DIGIT32(x, shift) ((unsigned)((x) >> (shift)) & (SL__RS_BUCKETS - 1))

void sl__rsort_hist_k32(const uint64_t *it, int64_t lo, int64_t hi, int shift, int64_t *hist)
{
    for (int64_t i = lo; i < hi; i++)
        hist[DIGIT32(it[i], shift)]++;
}

void sl__rsort_hist_k64(const struct sl__kv64 *it, int64_t lo, int64_t hi, int shift,
                        int64_t *hist)
{
    for (int64_t i = lo; i < hi; i++)
        hist[DIGIT32(it[i].key, shift)]++;
}

void sl__rsort_hist_all_k32(const uint64_t *it, int64_t lo, int64_t hi, int64_t *hist)
{
    for (int64_t i = lo; i < hi; i++) {
        uint64_t x = it[i] >> 32;
        for (int d = 0; d < SL__RS_DIGITS_K32; d++)
            hist[d * SL__RS_BUCKETS + ((x >> (SL__RS_BITS * d)) & SL__RS_MASK)]++;
    }
}

void sl__rsort_hist_all_k64(const struct sl__kv64 *it, int64_t lo, int64_t hi, int64_t *hist)
{
    for (int64_t i = lo; i < hi; i++) {
        uint64_t x = it[i].key;
        for (int d = 0; d < SL__RS_DIGITS_K64; d++)
            hist[d * SL__RS_BUCKETS + ((x >> (SL__RS_BITS * d)) & SL__RS_MASK)]++;
    }
}

/* The write-combining scatter, instantiated for 8- and 16-byte items. PER_LINE items
 * fill a line. start[] remembers each bucket's first position (see the file comment). */
#define DEFINE_SCATTER(NAME, T, PER_LINE, KEYOF)                                           \
    void NAME(const T *src, T *dst, int64_t lo, int64_t hi, int shift, int64_t *pos,     \
              int stream)                                                                 \
    {                                                                                     \
        if (((uintptr_t)dst & 63) != 0 || hi - lo < 4096) {                               \
            for (int64_t i = lo; i < hi; i++)                                             \
                dst[pos[DIGIT32(KEYOF(src[i]), shift)]++] = src[i];                       \
            return;                                                                       \
        }                                                                                 \
        _Alignas(64) T buf[SL__RS_BUCKETS][PER_LINE];                                     \
        int64_t start[SL__RS_BUCKETS];                                                    \
        memcpy(start, pos, sizeof start);                                                 \
        for (int64_t i = lo; i < hi; i++) {                                               \
            T x = src[i];                                                                 \
            unsigned b = DIGIT32(KEYOF(x), shift);                                        \
            int64_t p = pos[b]++;                                                         \
            unsigned slot = (unsigned)p & (PER_LINE - 1);                                 \
            buf[b][slot] = x;                                                             \
            if (slot == PER_LINE - 1) {                                                   \
                int64_t base = p - (PER_LINE - 1);                                        \
                if (base >= start[b]) {                                                   \
                    if (stream)                                                           \
                        line_stream(dst + base, buf[b]);                                  \
                    else                                                                  \
                        memcpy(dst + base, buf[b], 64);                                   \
                } else {                                                                  \
                    int64_t k = start[b] - base;                                          \
                    memcpy(dst + start[b], &buf[b][k], (size_t)(PER_LINE - k) * sizeof(T)); \
                }                                                                         \
            }                                                                             \
        }                                                                                 \
        for (int b = 0; b < SL__RS_BUCKETS; b++) {                                        \
            int64_t end = pos[b], base = end & ~(int64_t)(PER_LINE - 1);                  \
            int64_t from = base > start[b] ? base : start[b];                             \
            if (end > from)                                                               \
                memcpy(dst + from, &buf[b][from - base], (size_t)(end - from) * sizeof(T)); \
        }                                                                                 \
        if (stream)                                                                       \
            stream_fence();                                                               \
    }

#define KEY_K32(x) (x)
#define KEY_K64(x) ((x).key)
DEFINE_SCATTER(sl__rsort_scatter_k32, uint64_t, 8, KEY_K32)
DEFINE_SCATTER(sl__rsort_scatter_k64, struct sl__kv64, 4, KEY_K64)

/* Serial sort: one histogram of all digits, then one scatter per non-trivial digit. */
#define DEFINE_SORT(NAME, T, HIST_ALL, SCATTER, N_DIGITS, SHIFT0)                          \
    T *NAME(T *a, T *tmp, int64_t n)                                                      \
    {                                                                                     \
        int64_t hist[N_DIGITS * SL__RS_BUCKETS];                                          \
        memset(hist, 0, sizeof hist);                                                     \
        HIST_ALL(a, 0, n, hist);                                                          \
        T *src = a, *dst = tmp;                                                           \
        for (int d = 0; d < N_DIGITS; d++) {                                              \
            int64_t *h = hist + d * SL__RS_BUCKETS, pos[SL__RS_BUCKETS], sum = 0;         \
            bool trivial = false;                                                         \
            for (int b = 0; b < SL__RS_BUCKETS; b++) {                                    \
                trivial |= h[b] == n;                                                     \
                pos[b] = sum;                                                             \
                sum += h[b];                                                              \
            }                                                                             \
            if (trivial)                                                                  \
                continue;                                                                 \
            SCATTER(src, dst, 0, n, SHIFT0 + SL__RS_BITS * d, pos, 0);                    \
            T *x = src;                                                                   \
            src = dst;                                                                    \
            dst = x;                                                                      \
        }                                                                                 \
        return src;                                                                       \
    }

DEFINE_SORT(sl__rsort_k32, uint64_t, sl__rsort_hist_all_k32, sl__rsort_scatter_k32,
            SL__RS_DIGITS_K32, 32)
DEFINE_SORT(sl__rsort_k64, struct sl__kv64, sl__rsort_hist_all_k64, sl__rsort_scatter_k64,
            SL__RS_DIGITS_K64, 0)

/* ---------------- gathers by permutation ---------------- */

#define DEFINE_GATHER(NAME, P, IDXOF)                                                     \
    int64_t NAME(const struct sl__rowsview *c, const P *perm, int64_t lo, int64_t hi,      \
                 void *out, uint8_t *out_valid)                                           \
    {                                                                                     \
        if (sl_type_width(c->type) == 4) {                                                \
            const uint32_t *s = c->data;                                                  \
            uint32_t *o = out;                                                            \
            for (int64_t i = lo; i < hi; i++)                                             \
                o[i] = s[IDXOF(perm[i])];                                                 \
        } else {                                                                          \
            const uint64_t *s = c->data;                                                  \
            uint64_t *o = out;                                                            \
            for (int64_t i = lo; i < hi; i++)                                             \
                o[i] = s[IDXOF(perm[i])];                                                 \
        }                                                                                 \
        if (!c->validity || !out_valid)                                                   \
            return 0;                                                                     \
        int64_t nulls = 0;                                                                \
        for (int64_t i = lo; i < hi; i += 8) {                                            \
            unsigned byte = 0;                                                            \
            for (int64_t k = 0; k < 8 && i + k < hi; k++) {                               \
                bool v = sl__rowsview_valid(c, (int64_t)IDXOF(perm[i + k]));               \
                byte |= (unsigned)v << k;                                                 \
                nulls += !v;                                                              \
            }                                                                             \
            out_valid[i >> 3] = (uint8_t)byte;                                            \
        }                                                                                 \
        return nulls;                                                                     \
    }

#define IDX_K32(x) ((x) & 0xffffffffu)
#define IDX_K64(x) ((x).idx)
DEFINE_GATHER(sl__gather_k32, uint64_t, IDX_K32)
DEFINE_GATHER(sl__gather_k64, struct sl__kv64, IDX_K64)
#define IDX_ROW(x) (x)
DEFINE_GATHER(sl__gather_rows, uint64_t, IDX_ROW)
