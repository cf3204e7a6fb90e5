/* GPU no-partitioning hash join (NPJ) for small build sides (issue 6). STYLE.md §8.
 *
 * One open-addressing table in global memory (L2-resident while small): slots =
 * the next power of two >= 2 * nr (at least 1024), each a (key, R row) pair, then a
 * word saying whether some key is in R twice; build inserts every R row (duplicates
 * take their own slots: no capacity limit) and sets that word; the probe streams S in
 * its original order and walks each key's run of slots (to its end only when R has
 * duplicates; else to the first match). Output rows of one block of S rows are
 * contiguous and ordered by S row within each warp's share (coalesced stores). No partitioning
 * of either side: r_pos / s_pos are ORIGINAL row numbers, payload columns are read
 * from the input columns directly (R: random reads into a small, cached relation; S:
 * in order). Use it when R is small: the threshold measured against PHJ is in
 * bench/RESULTS.md (the operator picks by the table's size: join_cuda.c).
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

/* Dense variant (a direct table, no hashing) for build keys that cover most of a small
 * range, as surrogate primary keys do:
 *  sl_k_npj_key_range_*: folds the keys into d_minmax[0] (smallest) and [1] (largest),
 *    compared as unsigned values; the caller presets them to all ones and 0, so several
 *    launches (one per batch) accumulate.
 *  sl_k_npj_dense_build_*: slot key - kmin of a table of `range` slots (range >
 *    largest - kmin) holds the key's R row; temp size depends on range only. Its last 16
 *    bytes are a word set nonzero when a key is in R twice: the table is then unusable
 *    and the caller builds the hash table instead.
 *  sl_k_npj_dense_probe_*: as sl_k_npj_probe_* (same kinds, outputs and order).
 * Limits: range < 2^32. Never allocates or synchronizes. */
cudaError_t sl_k_npj_key_range_k32(const uint32_t *d_keys, int64_t n, uint32_t *d_minmax,
                                   cudaStream_t stream);
cudaError_t sl_k_npj_key_range_k64(const uint64_t *d_keys, int64_t n, uint64_t *d_minmax,
                                   cudaStream_t stream);
cudaError_t sl_k_npj_dense_build_k32(void *d_temp, size_t *temp_bytes, const uint32_t *d_r_keys,
                                     int64_t nr, uint32_t kmin, int64_t range,
                                     cudaStream_t stream);
cudaError_t sl_k_npj_dense_build_k64(void *d_temp, size_t *temp_bytes, const uint64_t *d_r_keys,
                                     int64_t nr, uint64_t kmin, int64_t range,
                                     cudaStream_t stream);
cudaError_t sl_k_npj_dense_probe_k32(void *d_temp, size_t temp_bytes, int64_t nr, uint32_t kmin,
                                     int64_t range, const sl_k_cols_t *r_cols,
                                     const uint32_t *d_s_keys, int64_t ns,
                                     const sl_k_cols_t *s_cols, int kind,
                                     const sl_k_join_out_t *out, unsigned long long *d_count,
                                     cudaStream_t stream);
cudaError_t sl_k_npj_dense_probe_k64(void *d_temp, size_t temp_bytes, int64_t nr, uint64_t kmin,
                                     int64_t range, const sl_k_cols_t *r_cols,
                                     const uint64_t *d_s_keys, int64_t ns,
                                     const sl_k_cols_t *s_cols, int kind,
                                     const sl_k_join_out_t *out, unsigned long long *d_count,
                                     cudaStream_t stream);

/* Either table built in parts while R arrives (the host-streamed join): rows [from, to)
 * of the nr keys d_r_keys (all of R; only rows below `to` are read) go into d_temp, sized
 * as by sl_k_npj_build_* / sl_k_npj_dense_build_* for nr (range); a call with from 0 clears
 * the table first, so the parts are called in order, covering [0, nr). The hash table's
 * duplicate word is set by the call with to == nr (it reads all nr keys). The direct
 * table's word: bit 0 a key twice, bit 1 a key outside [kmin, kmin + range) (modulo the
 * key's width): either makes the table unusable. Same limits. */
cudaError_t sl_k_npj_build_rows_k32(void *d_temp, size_t *temp_bytes, const uint32_t *d_r_keys,
                                    int64_t nr, int64_t from, int64_t to, cudaStream_t stream);
cudaError_t sl_k_npj_build_rows_k64(void *d_temp, size_t *temp_bytes, const uint64_t *d_r_keys,
                                    int64_t nr, int64_t from, int64_t to, cudaStream_t stream);
cudaError_t sl_k_npj_dense_build_rows_k32(void *d_temp, size_t *temp_bytes,
                                          const uint32_t *d_r_keys, int64_t nr, int64_t from,
                                          int64_t to, uint32_t kmin, int64_t range,
                                          cudaStream_t stream);
cudaError_t sl_k_npj_dense_build_rows_k64(void *d_temp, size_t *temp_bytes,
                                          const uint64_t *d_r_keys, int64_t nr, int64_t from,
                                          int64_t to, uint64_t kmin, int64_t range,
                                          cudaStream_t stream);

/* The direct table with the values in it (issue 19: build sides past the L2 cache, where
 * each R row read by row number in the probe costs a random sector): a bitmap of the keys
 * present (range bits: 16 MiB for 2^27 keys, kept in L2) and one value per slot, never
 * cleared (read only where its bit is set). `values`:
 *  SL_K_NPJ_DVAL_NONE: no values (SEMI/ANTI, or INNER/LEFT writing no R column and no
 *    r_pos);
 *  SL_K_NPJ_DVAL_PACKED: R's row, r_cols packed into 4, 8 or 16 bytes (4- and 8-byte
 *    columns of at most 16 bytes in all; 12 take 16): the probe writes out->r (r_cols'
 *    columns, equal widths, no r_pos) from the value, one load per probe row.
 *  sl_k_npj_dval_build_*: sets each R key's bit and stores its value. Temp size depends
 *    on range, values and r_cols' widths; its last 16 bytes are the word of
 *    sl_k_npj_dense_build_rows_* (bit 0 a key twice, bit 1 a key outside the range: the
 *    table is then unusable).
 *  sl_k_npj_dval_probe_*: as sl_k_npj_dense_probe_* (same kinds, outputs and order), with
 *    the build's values and r_cols; loads an S key's bitmap word and value together (only
 *    INNER/LEFT load values).
 * Limits: range < 2^32, nr < 2^31. Never allocates or synchronizes. */
enum { SL_K_NPJ_DVAL_NONE = 0, SL_K_NPJ_DVAL_PACKED = 2 };
cudaError_t sl_k_npj_dval_build_k32(void *d_temp, size_t *temp_bytes, const uint32_t *d_r_keys,
                                    int values, const sl_k_cols_t *r_cols, int64_t nr,
                                    uint32_t kmin, int64_t range, cudaStream_t stream);
cudaError_t sl_k_npj_dval_build_k64(void *d_temp, size_t *temp_bytes, const uint64_t *d_r_keys,
                                    int values, const sl_k_cols_t *r_cols, int64_t nr,
                                    uint64_t kmin, int64_t range, cudaStream_t stream);
cudaError_t sl_k_npj_dval_probe_k32(void *d_temp, size_t temp_bytes, int64_t nr, uint32_t kmin,
                                    int64_t range, int values, const sl_k_cols_t *r_cols,
                                    const uint32_t *d_s_keys, int64_t ns,
                                    const sl_k_cols_t *s_cols, int kind,
                                    const sl_k_join_out_t *out, unsigned long long *d_count,
                                    cudaStream_t stream);
cudaError_t sl_k_npj_dval_probe_k64(void *d_temp, size_t temp_bytes, int64_t nr, uint64_t kmin,
                                    int64_t range, int values, const sl_k_cols_t *r_cols,
                                    const uint64_t *d_s_keys, int64_t ns,
                                    const sl_k_cols_t *s_cols, int kind,
                                    const sl_k_join_out_t *out, unsigned long long *d_count,
                                    cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_K_JOIN_NPJ_H */
