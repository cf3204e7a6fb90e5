/* GPU no-partitioning hash join (NPJ) for small build sides (issue 6). STYLE.md §8.
 *
 * One open-addressing table in global memory (L2-resident while small): slots =
 * the next power of two >= 2 * nr (at least 1024), each a (key, R row) pair; build
 * inserts every R row (duplicates take their own slots: no capacity limit), the probe
 * streams S in its original order and walks each key's run of slots. No partitioning
 * of either side: r_pos / s_pos are ORIGINAL row numbers, payload columns are read
 * from the input columns directly (R: random reads into a small, cached relation; S:
 * in order). Use it when R is small: the threshold measured against PHJ is in
 * bench/results_gpujoinkern.md (the operator picks by nr).
 *
 *  sl_k_npj_build_*: fills the table (kept in d_temp; temp size depends on nr only).
 *  sl_k_npj_probe_*: same d_temp, kinds INNER/SEMI/ANTI/LEFT (join_types.h): rows at
 *    [0, count) in unspecified order, never at or past out->capacity; d_count: [0] all
 *    rows (also those that did not fit), [1] rows with an R partner. LEFT rows without
 *    a partner: r_pos = SL_K_NULL_POS, R columns 0 (validity = r_pos != NULL_POS).
 *    r_cols / s_cols: input payload columns; output column j of out->r / out->s takes
 *    input column j (out may list fewer columns; widths must be equal).
 * Limits: nr < 2^31, ns < 2^32. Never allocates or synchronizes.
 */
#ifndef SLUICE_K_JOIN_NPJ_H
#define SLUICE_K_JOIN_NPJ_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "sluice_k/join_types.h"

#ifdef __cplusplus
extern "C" {
#endif

cudaError_t sl_k_npj_build_k32(void *d_temp, size_t *temp_bytes, const uint32_t *d_r_keys,
                               int64_t nr, cudaStream_t stream);
cudaError_t sl_k_npj_build_k64(void *d_temp, size_t *temp_bytes, const uint64_t *d_r_keys,
                               int64_t nr, cudaStream_t stream);

cudaError_t sl_k_npj_probe_k32(void *d_temp, size_t temp_bytes, int64_t nr,
                               const sl_k_cols_t *r_cols, const uint32_t *d_s_keys, int64_t ns,
                               const sl_k_cols_t *s_cols, int kind, const sl_k_join_out_t *out,
                               unsigned long long *d_count, cudaStream_t stream);
cudaError_t sl_k_npj_probe_k64(void *d_temp, size_t temp_bytes, int64_t nr,
                               const sl_k_cols_t *r_cols, const uint64_t *d_s_keys, int64_t ns,
                               const sl_k_cols_t *s_cols, int kind, const sl_k_join_out_t *out,
                               unsigned long long *d_count, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_K_JOIN_NPJ_H */
