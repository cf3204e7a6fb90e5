/* Internal CPU kernels of radix partitioning (used by the partition operator, and by
 * joins and aggregates).
 *
 * A row's radix is r = key (as unsigned, zero-extended) or, with hashing,
 * r = (key * 0x9E3779B97F4A7C15) >> (64 - total_bits) (Fibonacci hashing: the high bits
 * of the product mix every key bit). Its partition is r & (fanout - 1), fanout =
 * 2^total_bits. With two passes, pass 1 uses bits [bits2, total_bits) of r and pass 2
 * the low bits2 bits within each pass-1 partition, so the result is the same as one
 * pass. Key 0 maps to partition 0 with and without hashing, so a caller that replaces
 * null keys by 0 gets every null key in partition 0 (the partition operator does).
 *
 * The result (struct sl__parts) is contiguous: partition p is rows [off[p], off[p+1])
 * of every output column; within a partition, rows keep their input order.
 */
#ifndef SLUICE_OPERATORS_PART_INT_H
#define SLUICE_OPERATORS_PART_INT_H

#include "common/op_common.h"

#define SL__PART_MAX_BITS_PER_PASS 12
#define SL__PART_MAX_BITS 20
#define SL__PART_HASH_MUL 0x9E3779B97F4A7C15ull

/* Bits a single partitioning pass should use at most: the write-combining buffers
 * (2^bits lines of 64 bytes per column) should take at most half of L1. */
int sl__part_bits_per_pass(int n_cols);

/* How rows map to partitions in one pass. */
struct sl__part_fn {
    int key_bytes;     /* 4 or 8 */
    int hash;          /* 1 = multiplicative hash, 0 = the key's own bits */
    int total_bits;    /* bits of the final partition number (both passes) */
    int shift, bits;   /* this pass uses bits [shift, shift + bits) of the radix */
};

static inline uint32_t sl__part_radix(const struct sl__part_fn *f, uint64_t key)
{
    uint64_t r = f->hash ? (key * SL__PART_HASH_MUL) >> (64 - f->total_bits) : key;
    return (uint32_t)(r >> f->shift) & ((1u << f->bits) - 1);
}

/* pid[i - lo] = partition (of this pass) of row i in [lo, hi). */
void sl__part_ids(const struct sl__part_fn *f, const void *keys, int64_t lo, int64_t hi,
                  uint16_t *pid);

/* Bytes of scratch sl__part_scatter needs for a fanout (64-byte aligned memory). */
size_t sl__part_scratch_bytes(int64_t fanout);

/* Moves rows [lo, hi) of a column of `width` bytes (4 or 8) from src to dst: row i goes
 * to dst[pos[pid[i - lo]]++]. Stable. Uses `scratch` (sl__part_scratch_bytes) as
 * write-combining buffers; full lines are written with non-temporal stores if `stream`
 * (dst must be 64-byte aligned for buffering, else plain stores are used). Thread-safe
 * on disjoint position ranges. */
void sl__part_scatter(const void *src, void *dst, int width, const uint16_t *pid, int64_t lo,
                      int64_t hi, int64_t *pos, int64_t fanout, void *scratch, int stream);

/* One single-threaded pass over rows [lo, hi) of the columns `in`: partition ids into
 * pid (hi - lo entries), counts, then each column scattered into out at rows
 * [lo, hi). off (2^f->bits + 1 entries) gets the absolute partition bounds; pos
 * (2^f->bits) and scratch (sl__part_scratch_bytes) are work space. */
void sl__part_pass(const struct sl__part_fn *f, int n_cols, const void *const *in,
                   const int *widths, int64_t lo, int64_t hi, void **out, int64_t *off,
                   uint16_t *pid, int64_t *pos, void *scratch, int stream);

/* The plain single-threaded form: partitions n rows of n_cols columns (column 0 the
 * key; widths 4 or 8) into out (n rows each, 64-byte aligned) in one or two passes
 * (passes = 2 also needs tmp columns like out). off gets fanout + 1 offsets. Returns
 * SL_OK or SL_ENOMEM. */
struct sl__part_spec {
    int key_bytes, hash, bits, passes;
    int stream;
};
int sl__partition(const struct sl__part_spec *sp, int n_cols, const void *const *in,
                  const int *widths, int64_t n, void **out, void **tmp, int64_t *off);

#endif /* SLUICE_OPERATORS_PART_INT_H */
