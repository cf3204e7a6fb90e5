/* Probe-side filter for partitioned joins whose build keys are dense (issue 6: low match
 * ratios). A bitmap with one bit per key of the build's range [kmin, kmin + range) marks
 * the build keys; the probe rows whose key is marked are selected (in order) and their
 * keys and packed rows gathered, so the rows without a partner are never partitioned.
 * STYLE.md §8.
 *
 *  sl_k_bitmap_keys_*: sets bit key - kmin of d_bitmap (ceil(range / 32) words, zeroed by
 *    the caller) for every key in the range.
 *  sl_k_select_marked_*: two-call temp storage; d_idx[0 .. *d_count) = the rows i (in
 *    increasing order) whose key is in the range with its bit set; d_count is one int64.
 *  sl_k_gather_bytes: d_dst row j = d_src row d_idx[j], rows of `width` bytes (4, 8, 12
 *    or 16, 4-byte aligned).
 * Limits: range < 2^32, n < 2^32. Never allocates or synchronizes.
 */
#ifndef SLUICE_K_JOIN_FILTER_H
#define SLUICE_K_JOIN_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

cudaError_t sl_k_bitmap_keys_k32(const uint32_t *d_keys, int64_t n, uint32_t kmin, int64_t range,
                                 uint32_t *d_bitmap, cudaStream_t stream);
cudaError_t sl_k_bitmap_keys_k64(const uint64_t *d_keys, int64_t n, uint64_t kmin, int64_t range,
                                 uint32_t *d_bitmap, cudaStream_t stream);
cudaError_t sl_k_select_marked_k32(void *d_temp, size_t *temp_bytes, const uint32_t *d_keys,
                                   int64_t n, uint32_t kmin, int64_t range,
                                   const uint32_t *d_bitmap, uint32_t *d_idx, int64_t *d_count,
                                   cudaStream_t stream);
cudaError_t sl_k_select_marked_k64(void *d_temp, size_t *temp_bytes, const uint64_t *d_keys,
                                   int64_t n, uint64_t kmin, int64_t range,
                                   const uint32_t *d_bitmap, uint32_t *d_idx, int64_t *d_count,
                                   cudaStream_t stream);
cudaError_t sl_k_gather_bytes(const void *d_src, int width, const uint32_t *d_idx, int64_t n,
                              void *d_dst, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_K_JOIN_FILTER_H */
