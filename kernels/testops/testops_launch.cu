/* Launchers of the test kernels: the only place with <<< >>> for testops. See
 * sluice_k/testops.h for the contracts. */
#include "sluice_k/testops.h"

#include "testops_kernels.cuh"

using namespace sluice_k::testops;

static unsigned grid_for(int64_t n)
{
    int64_t blocks = (n + kBlockThreads - 1) / kBlockThreads;
    return (unsigned)(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

extern "C" cudaError_t sl_k_affine_i64(const int64_t *d_in, int64_t *d_out, int64_t n,
                                       int64_t a, int64_t b, cudaStream_t stream)
{
    if (n < 0)
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    affine_i64_kernel<<<grid_for(n), kBlockThreads, 0, stream>>>(d_in, d_out, n, a, b);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_sum_i64(const int64_t *d_in, int64_t n, unsigned long long *d_sum,
                                    cudaStream_t stream)
{
    if (n < 0)
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    sum_i64_kernel<<<grid_for(n), kBlockThreads, 0, stream>>>(d_in, n, d_sum);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_count_positive_i64(const int64_t *d_in, int64_t n,
                                               unsigned long long *d_count, cudaStream_t stream)
{
    if (n < 0)
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    count_positive_i64_kernel<<<grid_for(n), kBlockThreads, 0, stream>>>(d_in, n, d_count);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_select_positive_i64(const int64_t *d_in, int64_t n, int64_t *d_out,
                                                unsigned long long *d_cursor,
                                                cudaStream_t stream)
{
    if (n < 0)
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    select_positive_i64_kernel<<<grid_for(n), kBlockThreads, 0, stream>>>(d_in, n, d_out,
                                                                          d_cursor);
    return cudaGetLastError();
}
