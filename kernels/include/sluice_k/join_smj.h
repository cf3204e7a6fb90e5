/* GPU sort-merge join (SMJ) with GFTR materialization (issue 6). STYLE.md §8 launchers.
 *
 * Plan: sort (key, row) of both sides with sl_k_radix_rows_* over all key bits (rows =
 * packed payloads, sl_k_pack_rows, or none), then
 *  1. sl_k_smj_count_*: for every S row (the LEFT/probe side) the range of equal keys in
 *     sorted R (binary search for the first S row of a thread, galloping from the
 *     previous row for the next ones), rows it emits per `kind`, an exclusive scan of
 *     those into output offsets (kept in d_temp), and d_count[0] = total rows,
 *     d_count[1] = rows with an R partner (0 for SEMI/ANTI).
 *  2. (caller) allocate d_count[0] rows (count -> allocate -> write).
 *  3. sl_k_smj_write_*: load-balanced expansion over OUTPUT positions (each thread finds
 *     its S row by a search in the offsets), so duplicates on both sides (FK-FK, heavy
 *     hitters) cost the same per output row and there is no capacity limit. Writes rows
 *     [0, min(count, capacity)) in sorted key order: key, r_pos/s_pos (positions in the
 *     sorted arrays: clustered GFTR gathers with sl_k_gather_*), and the packed payload
 *     rows unpacked into out->r / out->s columns.
 * Kinds (join_types.h): INNER, SEMI, ANTI, LEFT; unmatched LEFT rows have r_pos =
 * SL_K_NULL_POS and R columns 0 (they are interleaved in key order: the R side's
 * validity is r_pos != SL_K_NULL_POS, so request r_pos for LEFT).
 *
 * d_temp of count and write is the same buffer, sized by the NULL call of count for ns
 * (12 bytes per S row + scan temp); it must not be changed between the two calls.
 * Limits: nr, ns < 2^32 - 1; rows of row_bytes 0, 4, 8, 12, 16 on both sides.
 * Never allocates or synchronizes; returns cudaGetLastError().
 */
#ifndef SLUICE_K_JOIN_SMJ_H
#define SLUICE_K_JOIN_SMJ_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "sluice_k/join_types.h"

#ifdef __cplusplus
extern "C" {
#endif

cudaError_t sl_k_smj_count_k32(void *d_temp, size_t *temp_bytes, const uint32_t *d_r_keys,
                               int64_t nr, const uint32_t *d_s_keys, int64_t ns, int kind,
                               unsigned long long *d_count, cudaStream_t stream);
cudaError_t sl_k_smj_count_k64(void *d_temp, size_t *temp_bytes, const uint64_t *d_r_keys,
                               int64_t nr, const uint64_t *d_s_keys, int64_t ns, int kind,
                               unsigned long long *d_count, cudaStream_t stream);

cudaError_t sl_k_smj_write_k32(void *d_temp, size_t temp_bytes, const uint32_t *d_r_keys,
                               const void *d_r_rows, int64_t nr, const uint32_t *d_s_keys,
                               const void *d_s_rows, int64_t ns, int row_bytes, int kind,
                               const sl_k_join_out_t *out, cudaStream_t stream);
cudaError_t sl_k_smj_write_k64(void *d_temp, size_t temp_bytes, const uint64_t *d_r_keys,
                               const void *d_r_rows, int64_t nr, const uint64_t *d_s_keys,
                               const void *d_s_rows, int64_t ns, int row_bytes, int kind,
                               const sl_k_join_out_t *out, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_K_JOIN_SMJ_H */
