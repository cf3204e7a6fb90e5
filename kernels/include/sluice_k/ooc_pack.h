/* Packed runs of the out-of-core sort (issue 23): an int32 key and one 4-byte payload in
 * one 8-byte row, the key's code in the high half (its bits with the sign flipped, all
 * 32 inverted when descending: ooc_merge.c's code_at, so that codes ascend in the sort's
 * order) and the payload's bits in the low half. A keys-only radix sort of those rows on
 * bits [32, 64) orders them as the pair sort orders (key, payload), stably, moving the
 * same bytes; a bucket's slice of a packed run is one copy instead of two.
 * STYLE.md §8: never allocates or synchronizes, stream last, returns cudaGetLastError();
 * n == 0 launches nothing. Limits: n < 2^31 for the sort. */
#ifndef SLUICE_K_OOC_PACK_H
#define SLUICE_K_OOC_PACK_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* d_rows[i] = code(d_keys[i]) << 32 | d_vals[i], for i in [0, n). */
cudaError_t sl_k_ooc_pack(const int32_t *d_keys, const uint32_t *d_vals, int desc, int64_t n,
                          uint64_t *d_rows, cudaStream_t stream);
/* The inverse: d_keys[i] = the key of d_rows[i]'s code, d_vals[i] = its low half. */
cudaError_t sl_k_ooc_unpack(const uint64_t *d_rows, int desc, int64_t n, int32_t *d_keys,
                            uint32_t *d_vals, cudaStream_t stream);
/* Stable sort of n packed rows by their high half (CUB's DeviceRadixSort over a double
 * buffer: no copy of the rows in d_temp). The rows are in d_rows; d_alt (n rows) is the
 * other buffer; on return *in_alt says where the sorted rows are (0: d_rows, 1: d_alt;
 * known when the call returns, before the sort ran). d_temp == NULL: *temp_bytes = what
 * n rows need. */
cudaError_t sl_k_ooc_sort_packed(void *d_temp, size_t *temp_bytes, uint64_t *d_rows,
                                 uint64_t *d_alt, int64_t n, int *in_alt, cudaStream_t stream);
/* The same on the codes' low `bits` bits (1 to 32: bits [32, 32 + bits) of the rows)
 * only, for rows whose codes all share their higher bits: fewer radix passes. The temp
 * it needs is at most sl_k_ooc_sort_packed's for n. */
cudaError_t sl_k_ooc_sort_packed_bits(void *d_temp, size_t *temp_bytes, uint64_t *d_rows,
                                      uint64_t *d_alt, int64_t n, int bits, int *in_alt,
                                      cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_K_OOC_PACK_H */
