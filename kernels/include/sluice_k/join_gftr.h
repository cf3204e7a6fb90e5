/* GPU partitioned hash join for any number of payload columns and every join kind
 * (issue 6, GFTR: "gather from transformed relations"). STYLE.md §8 launchers: two-call
 * temp storage (d_temp == NULL sets *temp_bytes only), stream last, never allocate or
 * synchronize, return cudaGetLastError(). Types: sluice_k/join_types.h.
 *
 * Plan for payload columns of 4 or 8 bytes, per side (measured choice, H100, 2^27 x 2^27,
 * 4 B keys: 2 payloads packed 10.3 ms vs 16.1 ms with one GFTR re-partition per column;
 * 3 payloads: 12 B rows 14.7 ms, 16 B padded 17.2, 8 B + GFTR 19.6; see
 * bench/results_gpujoinkern.md):
 *  1. Pack the first payload columns of the side, up to 16 bytes, into rows
 *     (sl_k_pack_rows; skip for one 4- or 8-byte column: the column is the row).
 *  2. Partition (key, row) with sl_k_radix_rows_* on bits [b, b + bits) (CUB onesweep,
 *     stable and deterministic), offsets with sl_k_partition_offsets_* (partition.h).
 *  3. sl_k_phj_join_*: joins the partitioned sides and writes key, R/S positions and
 *     the packed payloads unpacked into output columns (early materialization).
 *  4. Every further group of columns (past 16 bytes), GFTR: partition (key, group) again
 *     with the same launcher and bits (stability gives the same permutation as step 2)
 *     and gather it by the positions of step 3 (sl_k_gather_rows / sl_k_gather_cols:
 *     clustered reads, since positions index the partitioned arrays).
 * Both sides of one sl_k_phj_join_* call carry rows of the same width (row_bytes 0,
 * 4, 8, 12 or 16; pad the narrower side's pack).
 */
#ifndef SLUICE_K_JOIN_GFTR_H
#define SLUICE_K_JOIN_GFTR_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "sluice_k/join_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* rows[i] = the values of cols at row i, packed: column j at byte offset
 * sum(width[0..j)), little endian, zero padded to row_bytes (4, 8, 12 or 16, at least
 * the sum of the widths; at most 4 columns). d_rows aligned to row_bytes (16 for 12).
 * A 4-byte column with a NULL pointer is the source row's number (here i), the row id
 * of GFTR's late gathers, in both calls; an 8-byte column needs its pointer. */
cudaError_t sl_k_pack_rows(const sl_k_cols_t *cols, int64_t n, int row_bytes, void *d_rows,
                           cudaStream_t stream);
/* The same for selected rows: row i packs source row d_sel[i] of the columns (a 4-byte
 * column with a NULL pointer: the number d_sel[i] itself), so a filtered side is packed
 * once, only its kept rows. */
cudaError_t sl_k_pack_rows_sel(const sl_k_cols_t *cols, const uint32_t *d_sel, int64_t n,
                               int row_bytes, void *d_rows, cudaStream_t stream);

/* Stable LSD radix sort of (key, row) pairs on key bits [begin_bit, end_bit): with
 * end_bit - begin_bit <= 16 this is the partitioning of partition.h (same permutation
 * as sl_k_partition_pairs_* with SL_K_PART_CUB), with all key bits a full sort (SMJ).
 * row_bytes 0 (keys only: rows_in/rows_out ignored), 4, 8, 12 or 16. n < 2^32.
 * Deterministic: the same keys give the same permutation whatever the rows hold. */
cudaError_t sl_k_radix_rows_k32(void *d_temp, size_t *temp_bytes, const uint32_t *d_keys_in,
                                uint32_t *d_keys_out, const void *d_rows_in, void *d_rows_out,
                                int row_bytes, int64_t n, int begin_bit, int end_bit,
                                cudaStream_t stream);
cudaError_t sl_k_radix_rows_k64(void *d_temp, size_t *temp_bytes, const uint64_t *d_keys_in,
                                uint64_t *d_keys_out, const void *d_rows_in, void *d_rows_out,
                                int row_bytes, int64_t n, int begin_bit, int end_bit,
                                cudaStream_t stream);

/* Partitioned hash join of partitioned R (build) and S (probe, the LEFT side), as in
 * join.h (same work units: build chunks x probe chunks per partition, so no capacity
 * limit and Zipf probe sides are balanced), for any kind (join_types.h):
 *  INNER  rows of matching pairs at [0, count) in unspecified order.
 *  SEMI / ANTI  one row per (un)matched S row: key, s_pos, S columns.
 *  LEFT   inner rows at [0, d_count[1]) and then the unmatched S rows at
 *         [d_count[1], d_count[0]) with r_pos = SL_K_NULL_POS and R columns 0: the R
 *         side's Arrow validity is "row < d_count[1]".
 * d_count: 2 counters, set by the call: [0] = all rows (also those past capacity),
 * [1] = rows with an R partner (INNER/LEFT), 0 for SEMI/ANTI. Nothing is written at or
 * past out->capacity; count -> allocate -> write: call with capacity 0, read d_count[0],
 * call again with that capacity. PK-FK inner: count <= ns.
 * r_rows/s_rows: the partitioned rows (row_bytes each; NULL if row_bytes == 0). out->r
 * and out->s columns take the words of the row in order (widths must fit row_bytes).
 * ns = rows of S (temp holds a matched bitmap of ns bits for SEMI/ANTI/LEFT).
 * Limits: nr, ns < 2^32; 1 <= bits <= 16; bits <= part_shift <= key bits. */
cudaError_t sl_k_phj_join_k32(void *d_temp, size_t *temp_bytes, const uint32_t *d_r_keys,
                              const void *d_r_rows, const int64_t *d_r_offsets,
                              const uint32_t *d_s_keys, const void *d_s_rows,
                              const int64_t *d_s_offsets, int64_t ns, int row_bytes, int bits,
                              int part_shift, int kind, const sl_k_join_out_t *out,
                              unsigned long long *d_count, cudaStream_t stream);
cudaError_t sl_k_phj_join_k64(void *d_temp, size_t *temp_bytes, const uint64_t *d_r_keys,
                              const void *d_r_rows, const int64_t *d_r_offsets,
                              const uint64_t *d_s_keys, const void *d_s_rows,
                              const int64_t *d_s_offsets, int64_t ns, int row_bytes, int bits,
                              int part_shift, int kind, const sl_k_join_out_t *out,
                              unsigned long long *d_count, cudaStream_t stream);

/* GFTR materialization of one more payload group. For i in [0, n): with p = d_idx[i],
 * dst column j [i] = (p == SL_K_NULL_POS) ? 0 : value j of row p.
 *  _rows: the source is packed rows (row_bytes 4..16, e.g. partitioned by
 *         sl_k_radix_rows_*); dst columns take the row's words in order.
 *  _cols: the source is columns (src->width[j] == dst->width[j], src->n == dst->n).
 * Positions from a PHJ/SMJ join index the partitioned/sorted arrays, so reads are
 * clustered. n may be the count read back after the join; d_idx may also come from
 * d_count-sized buffers (rows past n are not read). */
cudaError_t sl_k_gather_rows(const void *d_rows, int row_bytes, const uint32_t *d_idx,
                             int64_t n, const sl_k_cols_t *dst, cudaStream_t stream);
cudaError_t sl_k_gather_cols(const sl_k_cols_t *src, const uint32_t *d_idx, int64_t n,
                             const sl_k_cols_t *dst, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_K_JOIN_GFTR_H */
