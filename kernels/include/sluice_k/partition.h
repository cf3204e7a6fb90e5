/* GPU radix partitioning of (key, value) pairs (issue 6). STYLE.md §8 launchers.
 *
 * Partition id of a key = (key >> begin_bit) & ((1 << bits) - 1). The output holds the
 * pairs grouped by partition id, ascending, and is STABLE: pairs of one partition keep
 * their input order. Partitioning (key, col_1) and then (key, col_2) therefore applies
 * the same permutation to both columns (GFTR materialization relies on this).
 *
 * Two methods (chosen by `method`, decided per workload by measurement):
 *  SL_K_PART_CUB  CUB DeviceRadixSort::SortPairs over bits [begin_bit, begin_bit+bits)
 *                 (onesweep: one upfront histogram pass, then one fused
 *                 rank+scan+scatter pass per 8-bit digit, decoupled look-back);
 *                 bits_per_pass is ignored (CUB's policy picks it).
 *  SL_K_PART_OWN  our LSD partitioner: per pass a histogram kernel (per tile, per digit
 *                 counts), one device-wide exclusive scan over the digit-major count
 *                 matrix, and a scatter kernel that ranks the tile in shared memory
 *                 (stable block radix sort of the tile on the pass's digit) and writes
 *                 each digit's run of the tile contiguously (shared-memory write
 *                 combining). ceil(bits / bits_per_pass) passes, bits_per_pass in 1..8;
 *                 intermediate passes go to scratch inside d_temp.
 *
 *  SL_K_PART_CHAIN  chained-scan passes of at most 8 bits (issue 19): one histogram
 *                 kernel counts every pass's digits in one read of the keys, then one
 *                 kernel a pass ranks a tile in shared memory, takes each digit's offset
 *                 among the earlier tiles by a decoupled look-back and writes each
 *                 digit's run of the tile contiguously (onesweep's traffic, tiles staged
 *                 for write combining); bits_per_pass is ignored (8, the rest last).
 *                 Needs n < 2^30 (SL_K_PART_CHAIN_MAX_ROWS); from there it is
 *                 SL_K_PART_CUB. 1.6x slower than SL_K_PART_CUB a pass on the H100
 *                 (2026-11-27): not used by the join.
 *
 * Temp storage: two-call pattern. With d_temp == NULL only *temp_bytes is set (and
 * nothing is launched). Otherwise *temp_bytes must be at least the reported size.
 * Limits: 0 <= n < 2^32 (uint32 counters), 1 <= bits <= 16 (offsets array size),
 * begin_bit + bits <= 8 * sizeof(key). Inputs and outputs must not overlap; inputs are
 * never written. Never allocates or synchronizes; returns cudaGetLastError().
 */
#ifndef SLUICE_K_PARTITION_H
#define SLUICE_K_PARTITION_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { SL_K_PART_CUB = 0, SL_K_PART_OWN = 1, SL_K_PART_CHAIN = 2 };

#define SL_K_PARTITION_DECL(SUF, KT, VT)                                                  \
    cudaError_t sl_k_partition_pairs_##SUF(void *d_temp, size_t *temp_bytes,             \
                                           const KT *d_keys_in, KT *d_keys_out,           \
                                           const VT *d_vals_in, VT *d_vals_out, int64_t n, \
                                           int begin_bit, int bits, int bits_per_pass,    \
                                           int method, cudaStream_t stream);

/* k32/k64: 4- or 8-byte keys; v32/v64: 4- or 8-byte values. */
SL_K_PARTITION_DECL(k32_v32, uint32_t, uint32_t)
SL_K_PARTITION_DECL(k32_v64, uint32_t, uint64_t)
SL_K_PARTITION_DECL(k64_v32, uint64_t, uint32_t)
SL_K_PARTITION_DECL(k64_v64, uint64_t, uint64_t)

/* Partitioning of (key, packed row) pairs as the join's (sl_k_radix_rows_*) on key bits [begin_bit, begin_bit +
 * bits), 1 <= bits <= 16: the permutation of sl_k_radix_rows_* (sluice_k/join_gftr.h)
 * on that bit range, which is what SL_K_PART_CUB runs; SL_K_PART_CHAIN gives the same
 * arrays (both stable) with the passes above. row_bytes 0 (keys only), 4, 8, 12 or 16;
 * n < 2^32. Two-call temp storage as above; never allocates or synchronizes. */
cudaError_t sl_k_partition_rows_k32(void *d_temp, size_t *temp_bytes, const uint32_t *d_keys_in,
                                    uint32_t *d_keys_out, const void *d_rows_in,
                                    void *d_rows_out, int row_bytes, int64_t n, int begin_bit,
                                    int bits, int method, cudaStream_t stream);
cudaError_t sl_k_partition_rows_k64(void *d_temp, size_t *temp_bytes, const uint64_t *d_keys_in,
                                    uint64_t *d_keys_out, const void *d_rows_in,
                                    void *d_rows_out, int row_bytes, int64_t n, int begin_bit,
                                    int bits, int method, cudaStream_t stream);

/* The most rows SL_K_PART_CHAIN takes (its status words count in 30 bits). */
#define SL_K_PART_CHAIN_MAX_ROWS ((int64_t)1 << 30)
/* Partition boundaries of partitioned keys: d_offsets[p] = index of the first key of
 * partition p, d_offsets[1 << bits] = n (so partition p is [d_offsets[p],
 * d_offsets[p+1])). One binary search per partition over the keys (not a pass over
 * them); (1 << bits) + 1 entries. */
cudaError_t sl_k_partition_offsets_k32(const uint32_t *d_keys, int64_t n, int begin_bit,
                                       int bits, int64_t *d_offsets, cudaStream_t stream);
cudaError_t sl_k_partition_offsets_k64(const uint64_t *d_keys, int64_t n, int begin_bit,
                                       int bits, int64_t *d_offsets, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_K_PARTITION_H */
