/* Test kernels that prove the GPU runtime before real operators exist (the runtime's own
 * image probe is runtime/cuda/cuda_image.cu).
 *
 * Launchers follow STYLE.md §8: extern "C", int64 sizes, stream last, no allocation or
 * synchronization inside, and the result of cudaGetLastError() after the launch.
 * Kernels know nothing of the runtime; the runtime maps the cudaError_t they return.
 */
#ifndef SLUICE_K_TESTOPS_H
#define SLUICE_K_TESTOPS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* d_out[i] = a * d_in[i] + b for i in [0, n), wrapping modulo 2^64 on overflow.
 * d_in and d_out may be the same buffer. n == 0 launches nothing and returns
 * cudaSuccess; n < 0 returns cudaErrorInvalidValue. */
cudaError_t sl_k_affine_i64(const int64_t *d_in, int64_t *d_out, int64_t n, int64_t a,
                            int64_t b, cudaStream_t stream);

/* Adds the sum of d_in[0..n) to *d_sum (modulo 2^64; the caller zeroes *d_sum first if
 * it wants the plain sum). Grid-stride loop, block reduction over warp shuffles, one
 * atomicAdd per block. n == 0 launches nothing; n < 0 returns cudaErrorInvalidValue. */
cudaError_t sl_k_sum_i64(const int64_t *d_in, int64_t n, unsigned long long *d_sum,
                         cudaStream_t stream);

/* Adds the number of positive values of d_in to *d_count. */
cudaError_t sl_k_count_positive_i64(const int64_t *d_in, int64_t n, unsigned long long *d_count,
                                    cudaStream_t stream);
/* Writes the positive values of d_in to d_out[*d_cursor ...] (order not kept), advancing
 * *d_cursor; d_out must have room for all of them. */
cudaError_t sl_k_select_positive_i64(const int64_t *d_in, int64_t n, int64_t *d_out,
                                     unsigned long long *d_cursor, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_K_TESTOPS_H */
