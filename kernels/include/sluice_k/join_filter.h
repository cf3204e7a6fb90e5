/* Side filters for partitioned joins (issues 6 and 19: low match ratios): the rows of a
 * side whose key lies in the other side's key range [kmin, kmin + range), or is set in
 * an exact bitmap of the other side's keys over that range, are selected (in order) and
 * their keys and packed rows gathered, so rows that cannot have a partner are never
 * partitioned. STYLE.md §8.
 *
 *  sl_k_key_bitmap_*: sets bit k - kmin of d_bitmap ((range + 31) / 32 words, zeroed by
 *    the caller) for every key k with k - kmin < range (unsigned); range <= 2^40.
 *  sl_k_select_in_range_*: two-call temp storage; d_idx[0 .. *d_count) = the rows i (in
 *    increasing order) whose key k has k - kmin < range (unsigned) and, when d_bitmap is
 *    not NULL, bit k - kmin of d_bitmap set; d_count is one int64.
 *  sl_k_select_pack_*: two-call temp storage; the rows sl_k_select_in_range_* selects,
 *    in one pass: for the j-th selected row i, d_keys_out[j] = its key and, when
 *    row_bytes > 0 (4..16, a multiple of 4), d_rows_out[j] = row i packed from cols as
 *    sl_k_pack_rows packs it (at most 4 columns of 4 or 8 bytes; a 4-byte column without
 *    a pointer is the row number i); *d_count = the rows selected, of which only the
 *    first cap are written (the outputs hold cap rows; a count past cap asks for a
 *    second call with larger outputs). cols unused when row_bytes is 0.
 *  sl_k_gather_bytes: d_dst row j = d_src row d_idx[j], rows of `width` bytes (4, 8, 12
 *    or 16, 4-byte aligned).
 *  sl_k_select_mask_* and sl_k_select_write_*: the rows sl_k_select_in_range_* selects,
 *    in two passes over one temp storage (two-call: a NULL d_temp reports its size, which
 *    depends on n alone). _mask reads the keys, keeps a bit a row and the count of each
 *    tile of 4,096 rows in d_temp and sets *d_count (one int64) = the rows selected; then
 *    _write, given the same d_temp, keys and n, writes for the j-th selected row i
 *    d_keys_out[j] = its key and, when row_bytes > 0, d_rows_out[j] = row i packed from
 *    cols (as sl_k_select_pack_*); the outputs hold *d_count rows. With d_bitmap_out not
 *    NULL, _write also sets bit k - kmin of it for every selected key k with k - kmin <
 *    range (as sl_k_key_bitmap_* does; range <= 2^40).
 * Limits: n < 2^32. Never allocates or synchronizes.
 */
#ifndef SLUICE_K_JOIN_FILTER_H
#define SLUICE_K_JOIN_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "sluice_k/join_types.h"

#ifdef __cplusplus
extern "C" {
#endif

cudaError_t sl_k_key_bitmap_k32(const uint32_t *d_keys, int64_t n, uint32_t kmin, uint64_t range,
                                uint32_t *d_bitmap, cudaStream_t stream);
cudaError_t sl_k_key_bitmap_k64(const uint64_t *d_keys, int64_t n, uint64_t kmin, uint64_t range,
                                uint32_t *d_bitmap, cudaStream_t stream);
cudaError_t sl_k_select_in_range_k32(void *d_temp, size_t *temp_bytes, const uint32_t *d_keys,
                                     int64_t n, uint32_t kmin, uint64_t range,
                                     const uint32_t *d_bitmap, uint32_t *d_idx, int64_t *d_count,
                                     cudaStream_t stream);
cudaError_t sl_k_select_in_range_k64(void *d_temp, size_t *temp_bytes, const uint64_t *d_keys,
                                     int64_t n, uint64_t kmin, uint64_t range,
                                     const uint32_t *d_bitmap, uint32_t *d_idx, int64_t *d_count,
                                     cudaStream_t stream);
cudaError_t sl_k_select_pack_k32(void *d_temp, size_t *temp_bytes, const uint32_t *d_keys,
                                 int64_t n, uint32_t kmin, uint64_t range,
                                 const uint32_t *d_bitmap, const sl_k_cols_t *cols, int row_bytes,
                                 uint32_t *d_keys_out, void *d_rows_out, int64_t cap,
                                 int64_t *d_count, cudaStream_t stream);
cudaError_t sl_k_select_pack_k64(void *d_temp, size_t *temp_bytes, const uint64_t *d_keys,
                                 int64_t n, uint64_t kmin, uint64_t range,
                                 const uint32_t *d_bitmap, const sl_k_cols_t *cols, int row_bytes,
                                 uint64_t *d_keys_out, void *d_rows_out, int64_t cap,
                                 int64_t *d_count, cudaStream_t stream);
cudaError_t sl_k_select_mask_k32(void *d_temp, size_t *temp_bytes, const uint32_t *d_keys,
                                 int64_t n, uint32_t kmin, uint64_t range,
                                 const uint32_t *d_bitmap, int64_t *d_count, cudaStream_t stream);
cudaError_t sl_k_select_mask_k64(void *d_temp, size_t *temp_bytes, const uint64_t *d_keys,
                                 int64_t n, uint64_t kmin, uint64_t range,
                                 const uint32_t *d_bitmap, int64_t *d_count, cudaStream_t stream);
cudaError_t sl_k_select_write_k32(const void *d_temp, size_t temp_bytes, const uint32_t *d_keys,
                                  int64_t n, const sl_k_cols_t *cols, int row_bytes,
                                  uint32_t *d_keys_out, void *d_rows_out, uint32_t *d_bitmap_out,
                                  uint32_t kmin, uint64_t range, cudaStream_t stream);
cudaError_t sl_k_select_write_k64(const void *d_temp, size_t temp_bytes, const uint64_t *d_keys,
                                  int64_t n, const sl_k_cols_t *cols, int row_bytes,
                                  uint64_t *d_keys_out, void *d_rows_out, uint32_t *d_bitmap_out,
                                  uint64_t kmin, uint64_t range, cudaStream_t stream);
cudaError_t sl_k_gather_bytes(const void *d_src, int width, const uint32_t *d_idx, int64_t n,
                              void *d_dst, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_K_JOIN_FILTER_H */
