/* __global__ entry points of the radix partitioner (see sluice_k/partition.h). */
#ifndef SLUICE_K_PARTITION_KERNELS_CUH
#define SLUICE_K_PARTITION_KERNELS_CUH

#include <stdint.h>

#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>

namespace sluice_k {
namespace partition {

/* One block of 256 threads handles one tile of kTileItems pairs; 256 threads = one
 * thread per digit of an 8-bit pass, which keeps the per-tile digit scan trivial. */
constexpr int kBlockThreads = 256;
constexpr int kItemsPerThread = 16;
constexpr int kTileItems = kBlockThreads * kItemsPerThread; /* 4096 */
constexpr int kMaxPassBits = 8;

template <typename K>
__device__ __forceinline__ uint32_t digit_of(K key, int shift, uint32_t mask)
{
    return (uint32_t)(key >> shift) & mask;
}

/* counts[d * num_tiles + tile] = number of keys of the tile with digit d (digit-major,
 * so one exclusive scan over the whole matrix gives every (digit, tile) its global
 * output offset, tiles in order within a digit: the scatter is stable). */
template <typename K>
__global__ void __launch_bounds__(kBlockThreads)
    hist_kernel(const K *__restrict__ keys, int64_t n, int shift, int bits,
                uint32_t *__restrict__ counts, int64_t num_tiles)
{
    __shared__ uint32_t hist[1 << kMaxPassBits];
    const uint32_t mask = (1u << bits) - 1;
    const int64_t tile = blockIdx.x;
    const int64_t base = tile * kTileItems;
    hist[threadIdx.x] = 0;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kItemsPerThread; i++) {
        int64_t idx = base + (int64_t)i * kBlockThreads + threadIdx.x;
        if (idx < n)
            atomicAdd(&hist[digit_of(keys[idx], shift, mask)], 1u);
    }
    __syncthreads();
    if (threadIdx.x <= mask)
        counts[(int64_t)threadIdx.x * num_tiles + tile] = hist[threadIdx.x];
}

/* Ranks the tile stably by digit in shared memory (block radix sort on the pass's bits)
 * and writes each digit's run of the tile to its global offset: consecutive threads
 * write consecutive addresses of one partition (shared-memory write combining). */
template <typename K, typename V>
__global__ void __launch_bounds__(kBlockThreads)
    scatter_kernel(const K *__restrict__ keys_in, const V *__restrict__ vals_in,
                   K *__restrict__ keys_out, V *__restrict__ vals_out, int64_t n, int shift,
                   int bits, const uint32_t *__restrict__ offsets, int64_t num_tiles)
{
    using LoadK = cub::BlockLoad<K, kBlockThreads, kItemsPerThread, cub::BLOCK_LOAD_TRANSPOSE>;
    using LoadV = cub::BlockLoad<V, kBlockThreads, kItemsPerThread, cub::BLOCK_LOAD_TRANSPOSE>;
    using Sort = cub::BlockRadixSort<K, kBlockThreads, kItemsPerThread, V, 4>;
    using Scan = cub::BlockScan<uint32_t, kBlockThreads>;
    __shared__ union {
        typename LoadK::TempStorage lk;
        typename LoadV::TempStorage lv;
        typename Sort::TempStorage sort;
    } tmp;
    __shared__ typename Scan::TempStorage scan_tmp;
    __shared__ uint32_t hist[1 << kMaxPassBits];
    __shared__ uint32_t tstart[1 << kMaxPassBits];
    __shared__ uint32_t gbase[1 << kMaxPassBits];

    const uint32_t mask = (1u << bits) - 1;
    const int64_t tile = blockIdx.x;
    const int64_t base = tile * kTileItems;
    const int valid = (int)((n - base) < kTileItems ? (n - base) : kTileItems);

    K k[kItemsPerThread];
    V v[kItemsPerThread];
    /* Padding keys (all ones) sort after every valid key of the top digit, so valid
     * items occupy sorted ranks [0, valid). */
    LoadK(tmp.lk).Load(keys_in + base, k, valid, (K)~(K)0);
    __syncthreads();
    LoadV(tmp.lv).Load(vals_in + base, v, valid, (V)0);

    hist[threadIdx.x] = 0;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kItemsPerThread; i++)
        if (threadIdx.x * kItemsPerThread + i < valid)
            atomicAdd(&hist[digit_of(k[i], shift, mask)], 1u);
    __syncthreads();
    uint32_t mine = hist[threadIdx.x], excl;
    Scan(scan_tmp).ExclusiveSum(mine, excl);
    tstart[threadIdx.x] = excl;
    gbase[threadIdx.x] =
        threadIdx.x <= mask ? offsets[(int64_t)threadIdx.x * num_tiles + tile] : 0;
    /* The sort's own barriers order these shared writes before the reads below. */
    Sort(tmp.sort).SortBlockedToStriped(k, v, shift, shift + bits);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kItemsPerThread; i++) {
        int r = i * kBlockThreads + threadIdx.x;
        if (r < valid) {
            uint32_t d = digit_of(k[i], shift, mask);
            int64_t pos = (int64_t)gbase[d] + (r - (int)tstart[d]);
            keys_out[pos] = k[i];
            vals_out[pos] = v[i];
        }
    }
}

/* d_offsets[p] = first index of partition p in partitioned keys ([P] = n): one thread
 * per partition, binary search over the keys (sorted by partition id). O(P log n)
 * dependent loads, mostly from L2, instead of a pass over all keys. */
template <typename K>
__global__ void offsets_kernel(const K *__restrict__ keys, int64_t n, int shift, int bits,
                               int64_t *__restrict__ offsets)
{
    const uint32_t mask = (1u << bits) - 1;
    const int64_t parts = (int64_t)mask + 1;
    const int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p > parts)
        return;
    int64_t lo = 0, hi = n; /* first i with digit(keys[i]) >= p */
    while (lo < hi) {
        int64_t mid = (lo + hi) >> 1;
        if ((int64_t)digit_of(keys[mid], shift, mask) < p)
            lo = mid + 1;
        else
            hi = mid;
    }
    offsets[p] = lo;
}

} // namespace partition
} // namespace sluice_k

#endif /* SLUICE_K_PARTITION_KERNELS_CUH */
