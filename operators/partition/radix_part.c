/* Radix partitioning kernels: partition ids, the write-combining scatter and the plain
 * single-threaded one- or two-pass partitioner. */
#include <stdlib.h>
#include <string.h>

#include "part_int.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* bits = floor(log2(L1 / 2 / 64 / n_cols)), at least 4: the scatter of one column
 * keeps 2^bits lines in L1 while the source streams through. Columns are scattered
 * one after another, so n_cols is 1 for the partitioner here. */
int sl__part_bits_per_pass(int n_cols)
{
    int64_t lines = sl__cpu_cache_bytes(1) / 2 / 64 / (n_cols > 0 ? n_cols : 1);
    int bits = 0;
    while (((int64_t)2 << bits) <= lines)
        bits++;
    if (bits < 4)
        bits = 4;
    return bits > SL__PART_MAX_BITS_PER_PASS ? SL__PART_MAX_BITS_PER_PASS : bits;
}

/* ---------------- kernels ---------------- */

void sl__part_ids(const struct sl__part_fn *f, const void *keys, int64_t lo, int64_t hi,
                  uint16_t *pid)
{
    if (f->key_bytes == 4) {
        const uint32_t *k = keys;
        for (int64_t i = lo; i < hi; i++)
            pid[i - lo] = (uint16_t)sl__part_radix(f, k[i]);
    } else {
        const uint64_t *k = keys;
        for (int64_t i = lo; i < hi; i++)
            pid[i - lo] = (uint16_t)sl__part_radix(f, k[i]);
    }
}

size_t sl__part_scratch_bytes(int64_t fanout)
{
    return (size_t)fanout * (64 + sizeof(int64_t));
}

static inline void copy_line(void *dst, const void *src, int stream)
{
#if defined(__SSE2__)
    if (stream) {
        const __m128i *s = src;
        __m128i *d = dst;
        _mm_stream_si128(d + 0, _mm_load_si128(s + 0));
        _mm_stream_si128(d + 1, _mm_load_si128(s + 1));
        _mm_stream_si128(d + 2, _mm_load_si128(s + 2));
        _mm_stream_si128(d + 3, _mm_load_si128(s + 3));
        return;
    }
#endif
    memcpy(dst, src, 64);
}

/* The write-combining scatter for one width: see radix_sort.c for the line rules. */
#define DEFINE_PSCATTER(NAME, T)                                                          \
    static void NAME(const T *src, T *dst, const uint16_t *pid, int64_t lo, int64_t hi,   \
                     int64_t *pos, int64_t fanout, void *scratch, int stream)             \
    {                                                                                     \
        enum { PER = 64 / sizeof(T) };                                                    \
        T(*buf)[PER] = scratch;                                                           \
        int64_t *start = (int64_t *)((char *)scratch + (size_t)fanout * 64);              \
        memcpy(start, pos, (size_t)fanout * sizeof *start);                              \
        for (int64_t i = lo; i < hi; i++) {                                               \
            unsigned b = pid[i - lo];                                                     \
            int64_t p = pos[b]++;                                                         \
            unsigned slot = (unsigned)p & (PER - 1);                                      \
            buf[b][slot] = src[i];                                                        \
            if (slot == PER - 1) {                                                        \
                int64_t base = p - (PER - 1);                                             \
                if (base >= start[b]) {                                                   \
                    copy_line(dst + base, buf[b], stream);                                \
                } else {                                                                  \
                    int64_t k = start[b] - base;                                          \
                    memcpy(dst + start[b], &buf[b][k], (size_t)(PER - k) * sizeof(T));    \
                }                                                                         \
            }                                                                             \
        }                                                                                 \
        for (int64_t b = 0; b < fanout; b++) {                                            \
            int64_t end = pos[b], base = end & ~(int64_t)(PER - 1);                       \
            int64_t from = base > start[b] ? base : start[b];                             \
            if (end > from)                                                               \
                memcpy(dst + from, &buf[b][from - base], (size_t)(end - from) * sizeof(T)); \
        }                                                                                 \
    }

DEFINE_PSCATTER(scatter_w4, uint32_t)
DEFINE_PSCATTER(scatter_w8, uint64_t)

void sl__part_scatter(const void *src, void *dst, int width, const uint16_t *pid, int64_t lo,
                      int64_t hi, int64_t *pos, int64_t fanout, void *scratch, int stream)
{
    if (((uintptr_t)dst & 63) || !scratch) {
        if (width == 4) {
            const uint32_t *s = src;
            uint32_t *d = dst;
            for (int64_t i = lo; i < hi; i++)
                d[pos[pid[i - lo]]++] = s[i];
        } else {
            const uint64_t *s = src;
            uint64_t *d = dst;
            for (int64_t i = lo; i < hi; i++)
                d[pos[pid[i - lo]]++] = s[i];
        }
        return;
    }
    if (width == 4)
        scatter_w4(src, dst, pid, lo, hi, pos, fanout, scratch, stream);
    else
        scatter_w8(src, dst, pid, lo, hi, pos, fanout, scratch, stream);
#if defined(__SSE2__)
    if (stream)
        _mm_sfence();
#endif
}

/* ---------------- the plain form ---------------- */

void sl__part_pass(const struct sl__part_fn *f, int n_cols, const void *const *in,
                     const int *widths, int64_t lo, int64_t hi, void **out, int64_t *off,
                     uint16_t *pid, int64_t *pos, void *scratch, int stream)
{
    int64_t fanout = (int64_t)1 << f->bits;
    sl__part_ids(f, in[0], lo, hi, pid);
    memset(pos, 0, (size_t)fanout * sizeof *pos);
    for (int64_t i = 0; i < hi - lo; i++)
        pos[pid[i]]++;
    int64_t sum = lo;
    for (int64_t b = 0; b < fanout; b++) {
        int64_t c = pos[b];
        off[b] = sum;
        sum += c;
    }
    off[fanout] = sum;
    for (int c = 0; c < n_cols; c++) {
        memcpy(pos, off, (size_t)fanout * sizeof *pos);
        sl__part_scatter(in[c], out[c], widths[c], pid, lo, hi, pos, fanout, scratch, stream);
    }
}

int sl__partition(const struct sl__part_spec *sp, int n_cols, const void *const *in,
                  const int *widths, int64_t n, void **out, void **tmp, int64_t *off)
{
    int passes = sp->passes == 2 && sp->bits >= 2 ? 2 : 1;
    int bits2 = passes == 2 ? sp->bits / 2 : 0, bits1 = sp->bits - bits2;
    int64_t f1 = (int64_t)1 << bits1, f2 = (int64_t)1 << bits2;
    int64_t fmax = f1 > f2 ? f1 : f2;
    uint16_t *pid = sl__malloc((size_t)(n ? n : 1) * sizeof *pid);
    int64_t *pos = sl__malloc((size_t)fmax * sizeof *pos);
    int64_t *off1 = sl__malloc((size_t)(f1 + 1) * sizeof *off1);
    void *scratch = sl__malloc(sl__part_scratch_bytes(fmax));
    int rc = SL_ENOMEM;
    if (!pid || !pos || !off1 || !scratch)
        goto done;
    struct sl__part_fn f = {sp->key_bytes, sp->hash, sp->bits, bits2, bits1};
    if (passes == 1) {
        sl__part_pass(&f, n_cols, in, widths, 0, n, out, off, pid, pos, scratch, sp->stream);
    } else {
        /* Pass 1 into tmp; pass 2 partitions each pass-1 partition into out. */
        sl__part_pass(&f, n_cols, in, widths, 0, n, tmp, off1, pid, pos, scratch, sp->stream);
        struct sl__part_fn g = {sp->key_bytes, sp->hash, sp->bits, 0, bits2};
        for (int64_t p = 0; p < f1; p++)
            sl__part_pass(&g, n_cols, (const void *const *)tmp, widths, off1[p], off1[p + 1],
                     out, off + p * f2, pid, pos, scratch, sp->stream);
        off[f1 * f2] = n;
    }
    rc = SL_OK;
done:
    sl__free(pid, 0);
    sl__free(pos, 0);
    sl__free(off1, 0);
    sl__free(scratch, 0);
    return rc;
}
