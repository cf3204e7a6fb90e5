/* Probe-side filter for partitioned joins (issue 6: low match ratios): the probe rows
 * whose key lies in the build keys' range [kmin, kmin + range) are selected (in order)
 * and their keys and packed rows gathered, so the rows outside it, which cannot have a
 * partner, are never partitioned. STYLE.md §8.
 *
 *  sl_k_select_in_range_*: two-call temp storage; d_idx[0 .. *d_count) = the rows i (in
 *    increasing order) whose key k has k - kmin < range (unsigned); d_count is one int64.
 *  sl_k_gather_bytes: d_dst row j = d_src row d_idx[j], rows of `width` bytes (4, 8, 12
 *    or 16, 4-byte aligned).
 * Limits: n < 2^32. Never allocates or synchronizes.
 */
#ifndef SLUICE_K_JOIN_FILTER_H
#define SLUICE_K_JOIN_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

cudaError_t sl_k_select_in_range_k32(void *d_temp, size_t *temp_bytes, const uint32_t *d_keys,
                                     int64_t n, uint32_t kmin, uint64_t range, uint32_t *d_idx,
                                     int64_t *d_count, cudaStream_t stream);
cudaError_t sl_k_select_in_range_k64(void *d_temp, size_t *temp_bytes, const uint64_t *d_keys,
                                     int64_t n, uint64_t kmin, uint64_t range, uint32_t *d_idx,
                                     int64_t *d_count, cudaStream_t stream);
cudaError_t sl_k_gather_bytes(const void *d_src, int width, const uint32_t *d_idx, int64_t n,
                              void *d_dst, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_K_JOIN_FILTER_H */
