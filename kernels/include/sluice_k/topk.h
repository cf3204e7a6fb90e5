/* GPU candidates of sort.topk (operators/sort/topk_cuda.c): the rows that can be among
 * the first k in the order of a key, found by sorting int64 codes of that key (any
 * mapping that keeps the key's order, ties allowed, serves: rows tied on the code are
 * all kept and the CPU orders them by every key).
 * STYLE.md §8: stream last, never allocates or synchronizes, returns cudaGetLastError();
 * n == 0 launches nothing. */
#ifndef SLUICE_K_TOPK_H
#define SLUICE_K_TOPK_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How sl_k_topk_codes reads a key: 4- or 8-byte signed integers (int32, date32, int64,
 * timestamp, decimal(p <= 18)), 16-byte decimals (clamped to the int64 range), floats
 * (NaN the largest, -0.0 equal to +0.0, as the CPU sort orders them). */
enum sl_k_topk_key { SL_K_TOPK_I32, SL_K_TOPK_I64, SL_K_TOPK_I128, SL_K_TOPK_F32, SL_K_TOPK_F64 };

/* d_codes[i] = a code of key i whose signed order is the key's (ascending); a null row
 * (bit valid_off + i of d_valid clear; d_valid NULL: none) gets null_code. */
cudaError_t sl_k_topk_codes(const void *d_keys, enum sl_k_topk_key kind, const uint8_t *d_valid,
                            int64_t valid_off, int64_t null_code, int64_t n, int64_t *d_codes,
                            cudaStream_t stream);

/* *d_m = the end of the run of codes equal to d_sorted[k - 1] in d_sorted (n codes in
 * sorted order, either direction): the rows [0, *d_m) are the first k and their ties.
 * 1 <= k <= n. */
cudaError_t sl_k_topk_run_end(const int64_t *d_sorted, int64_t n, int64_t k, int64_t *d_m,
                              cudaStream_t stream);

/* d_dst[i] = value d_ids[i] of d_src for i in [0, m): values of `width` bytes (1, 2, 4,
 * 8 or 16), the candidates' columns gathered before their download. */
cudaError_t sl_k_topk_gather(const void *d_src, int width, const uint32_t *d_ids, int64_t m,
                             void *d_dst, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_K_TOPK_H */
