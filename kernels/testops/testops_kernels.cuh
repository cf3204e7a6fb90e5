/* __global__ entry points of the test kernels (see sluice_k/testops.h). */
#ifndef SLUICE_K_TESTOPS_KERNELS_CUH
#define SLUICE_K_TESTOPS_KERNELS_CUH

#include <stdint.h>

#include <cub/block/block_reduce.cuh>

namespace sluice_k {
namespace testops {

constexpr int kBlockThreads = 256;
/* Grid cap for grid-stride loops: enough blocks to fill any current GPU several times
 * over without launching one block per 256 items for huge n. */
constexpr int64_t kMaxBlocks = 4096;

/* Arithmetic in uint64 so that overflow wraps instead of being undefined. No
 * __restrict__: d_in and d_out may be the same buffer (each element is read, then
 * written, by one thread). */
__global__ void __launch_bounds__(kBlockThreads)
    affine_i64_kernel(const int64_t *d_in, int64_t *d_out, int64_t n, int64_t a, int64_t b)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        d_out[i] = (int64_t)((uint64_t)a * (uint64_t)d_in[i] + (uint64_t)b);
}

/* Each thread sums a grid-stride slice, BlockReduce (warp shuffles, then one warp over
 * the warp totals) combines the block, and thread 0 adds the block total to *d_sum. */
__global__ void __launch_bounds__(kBlockThreads)
    sum_i64_kernel(const int64_t *__restrict__ d_in, int64_t n, unsigned long long *d_sum)
{
    using BlockReduce =
        cub::BlockReduce<unsigned long long, kBlockThreads, cub::BLOCK_REDUCE_WARP_REDUCTIONS>;
    __shared__ typename BlockReduce::TempStorage temp;

    unsigned long long acc = 0;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        acc += (unsigned long long)d_in[i];
    unsigned long long block_sum = BlockReduce(temp).Sum(acc);
    if (threadIdx.x == 0)
        atomicAdd(d_sum, block_sum);
}

/* Counts the positive values (the "count" of count -> allocate -> write). */
__global__ void __launch_bounds__(kBlockThreads)
    count_positive_i64_kernel(const int64_t *__restrict__ d_in, int64_t n,
                              unsigned long long *d_count)
{
    using BlockReduce =
        cub::BlockReduce<unsigned long long, kBlockThreads, cub::BLOCK_REDUCE_WARP_REDUCTIONS>;
    __shared__ typename BlockReduce::TempStorage temp;
    unsigned long long c = 0;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        c += d_in[i] > 0;
    unsigned long long block_c = BlockReduce(temp).Sum(c);
    if (threadIdx.x == 0 && block_c)
        atomicAdd(d_count, block_c);
}

/* Writes the positive values through an atomic cursor (order not kept: a test op). */
__global__ void __launch_bounds__(kBlockThreads)
    select_positive_i64_kernel(const int64_t *__restrict__ d_in, int64_t n, int64_t *d_out,
                               unsigned long long *d_cursor)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        if (d_in[i] > 0)
            d_out[atomicAdd(d_cursor, 1ull)] = d_in[i];
}

} // namespace testops
} // namespace sluice_k

#endif /* SLUICE_K_TESTOPS_KERNELS_CUH */
