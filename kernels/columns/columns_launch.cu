/* Column utilities: row ids, gathers, sums. Contracts in sluice_k/columns.h. */
#include "sluice_k/columns.h"

#include <cub/block/block_reduce.cuh>

#include "../common/grid.cuh"

namespace {

constexpr int kThreads = 256;

/* A 16-byte value (decimal128) as two words: 8-byte alignment is all a column promises. */
struct b128 {
    unsigned long long w[2];
};

unsigned grid_for(int64_t n)
{
    int64_t b = (n + kThreads - 1) / kThreads;
    return (unsigned)sl_grid::capped(b, 16); /* grid-stride beyond ~16 blocks/SM */
}

template <typename T>
__global__ void iota_kernel(T *out, int64_t n, T first)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        out[i] = first + (T)i;
}

template <typename T>
__global__ void gather_kernel(const T *__restrict__ src, const uint32_t *__restrict__ idx,
                              T *__restrict__ dst, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        dst[i] = src[idx[i]];
}

template <typename T>
__global__ void broadcast_kernel(const T *__restrict__ src, T *__restrict__ dst, int64_t n)
{
    T v = *src;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        dst[i] = v;
}

__global__ void broadcast_validity_kernel(const uint8_t *__restrict__ src, int64_t bit,
                                          uint32_t *__restrict__ dst, int64_t words)
{
    uint32_t w = !src || (src[bit >> 3] >> (bit & 7) & 1) ? ~0u : 0u;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < words;
         i += (int64_t)gridDim.x * blockDim.x)
        dst[i] = w;
}

/* Sum with the accumulator type A; one atomic per block. */
template <typename T, typename A>
__global__ void sum_kernel(const T *__restrict__ in, int64_t n, A *out)
{
    using R = cub::BlockReduce<A, kThreads>;
    __shared__ typename R::TempStorage tmp;
    A acc = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        acc += (A)in[i];
    A total = R(tmp).Sum(acc);
    if (threadIdx.x == 0)
        atomicAdd(out, total);
}

/* Zero bits of validity bits [off, off + n); one atomic per block. */
__global__ void count_nulls_kernel(const uint8_t *__restrict__ v, int64_t off, int64_t n,
                                   unsigned long long *out)
{
    using R = cub::BlockReduce<unsigned long long, kThreads>;
    __shared__ typename R::TempStorage tmp;
    unsigned long long acc = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t b = off + i;
        acc += !(v[b >> 3] >> (b & 7) & 1);
    }
    unsigned long long total = R(tmp).Sum(acc);
    if (threadIdx.x == 0 && total)
        atomicAdd(out, total);
}

/* Exact sum of int64 values as a 128-bit integer: each thread sums into an __int128,
 * the block reduces, and the block's total is added to the two-word accumulator with a
 * carry (low word first; the carry goes into the high word). */
__global__ void sum_i64_exact_kernel(const int64_t *__restrict__ in, int64_t n,
                                     unsigned long long *out)
{
    __shared__ __int128 part[kThreads];
    __int128 acc = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        acc += in[i];
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        unsigned __int128 u = (unsigned __int128)part[0];
        unsigned long long lo = (unsigned long long)u, hi = (unsigned long long)(u >> 64);
        unsigned long long old = atomicAdd(&out[0], lo);
        if (old + lo < old)
            hi += 1;
        atomicAdd(&out[1], hi);
    }
}

} // namespace

template <typename T>
static cudaError_t iota(T *d_out, int64_t n, T first, cudaStream_t stream)
{
    if (n < 0)
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    iota_kernel<T><<<grid_for(n), kThreads, 0, stream>>>(d_out, n, first);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_iota_u32(uint32_t *d_out, int64_t n, uint32_t first,
                                     cudaStream_t stream)
{
    return iota(d_out, n, first, stream);
}

extern "C" cudaError_t sl_k_iota_u64(uint64_t *d_out, int64_t n, uint64_t first,
                                     cudaStream_t stream)
{
    return iota(d_out, n, first, stream);
}

template <typename T>
__global__ void strided_kernel(const T *__restrict__ src, int64_t stride, T *__restrict__ dst,
                               int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        dst[i] = src[i * stride];
}

template <typename T>
static cudaError_t strided(const T *src, int64_t stride, T *dst, int64_t n, cudaStream_t stream)
{
    if (n < 0 || stride < 1 || (n > 0 && (src == NULL || dst == NULL)))
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    strided_kernel<T><<<grid_for(n), kThreads, 0, stream>>>(src, stride, dst, n);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_strided_b32(const uint32_t *d_src, int64_t stride, uint32_t *d_dst,
                                        int64_t n, cudaStream_t stream)
{
    return strided(d_src, stride, d_dst, n, stream);
}

extern "C" cudaError_t sl_k_strided_b64(const uint64_t *d_src, int64_t stride, uint64_t *d_dst,
                                        int64_t n, cudaStream_t stream)
{
    return strided(d_src, stride, d_dst, n, stream);
}

template <typename T>
static cudaError_t gather(const T *src, const uint32_t *idx, T *dst, int64_t n,
                          cudaStream_t stream)
{
    if (n < 0)
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    gather_kernel<T><<<grid_for(n), kThreads, 0, stream>>>(src, idx, dst, n);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_gather_b32(const uint32_t *d_src, const uint32_t *d_idx,
                                       uint32_t *d_dst, int64_t n, cudaStream_t stream)
{
    return gather(d_src, d_idx, d_dst, n, stream);
}

extern "C" cudaError_t sl_k_gather_b64(const uint64_t *d_src, const uint32_t *d_idx,
                                       uint64_t *d_dst, int64_t n, cudaStream_t stream)
{
    return gather(d_src, d_idx, d_dst, n, stream);
}

extern "C" cudaError_t sl_k_gather_width(const void *d_src, const uint32_t *d_idx, void *d_dst,
                                         int width, int64_t n, cudaStream_t stream)
{
    switch (width) {
    case 1: return gather((const uint8_t *)d_src, d_idx, (uint8_t *)d_dst, n, stream);
    case 2: return gather((const uint16_t *)d_src, d_idx, (uint16_t *)d_dst, n, stream);
    case 4: return gather((const uint32_t *)d_src, d_idx, (uint32_t *)d_dst, n, stream);
    case 8: return gather((const uint64_t *)d_src, d_idx, (uint64_t *)d_dst, n, stream);
    case 16: return gather((const b128 *)d_src, d_idx, (b128 *)d_dst, n, stream);
    default: return cudaErrorInvalidValue;
    }
}

template <typename T>
static cudaError_t broadcast(const void *src, void *dst, int64_t n, cudaStream_t stream)
{
    if (n < 0)
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    broadcast_kernel<T><<<grid_for(n), kThreads, 0, stream>>>((const T *)src, (T *)dst, n);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_broadcast_width(const void *d_src, void *d_dst, int width, int64_t n,
                                            cudaStream_t stream)
{
    switch (width) {
    case 1: return broadcast<uint8_t>(d_src, d_dst, n, stream);
    case 2: return broadcast<uint16_t>(d_src, d_dst, n, stream);
    case 4: return broadcast<uint32_t>(d_src, d_dst, n, stream);
    case 8: return broadcast<uint64_t>(d_src, d_dst, n, stream);
    case 16: return broadcast<b128>(d_src, d_dst, n, stream);
    default: return cudaErrorInvalidValue;
    }
}

extern "C" cudaError_t sl_k_broadcast_validity(const uint8_t *d_src_validity, int64_t bit,
                                               uint32_t *d_dst, int64_t words, cudaStream_t stream)
{
    if (words < 0 || bit < 0)
        return cudaErrorInvalidValue;
    if (words == 0)
        return cudaSuccess;
    broadcast_validity_kernel<<<grid_for(words), kThreads, 0, stream>>>(d_src_validity, bit,
                                                                          d_dst, words);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_count_nulls(const uint8_t *d_validity, int64_t offset, int64_t n,
                                        unsigned long long *d_count, cudaStream_t stream)
{
    if (n < 0 || offset < 0)
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    count_nulls_kernel<<<grid_for(n), kThreads, 0, stream>>>(d_validity, offset, n, d_count);
    return cudaGetLastError();
}

template <typename T, typename A>
static cudaError_t sum(const T *in, int64_t n, A *out, cudaStream_t stream)
{
    if (n < 0)
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    sum_kernel<T, A><<<grid_for(n), kThreads, 0, stream>>>(in, n, out);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_sum_i32(const int32_t *d_in, int64_t n, long long *d_sum,
                                    cudaStream_t stream)
{
    return sum<int32_t, unsigned long long>(d_in, n, (unsigned long long *)d_sum, stream);
}

extern "C" cudaError_t sl_k_sum_f32(const float *d_in, int64_t n, double *d_sum,
                                    cudaStream_t stream)
{
    return sum<float, double>(d_in, n, d_sum, stream);
}

extern "C" cudaError_t sl_k_sum_f64(const double *d_in, int64_t n, double *d_sum,
                                    cudaStream_t stream)
{
    return sum<double, double>(d_in, n, d_sum, stream);
}

extern "C" cudaError_t sl_k_sum_i64_exact(const int64_t *d_in, int64_t n,
                                          unsigned long long *d_sum128, cudaStream_t stream)
{
    if (n < 0)
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    sum_i64_exact_kernel<<<grid_for(n), kThreads, 0, stream>>>(d_in, n, d_sum128);
    return cudaGetLastError();
}

namespace {

/* sl_k_copy_ranges: ranges cut into tiles of kCopyTile bytes, blocks grid-striding over
 * the tiles of all ranges; the ranges ride in the kernel's parameters (under 1 KiB). */
constexpr int64_t kCopyTile = (int64_t)256 << 10;

struct copy_ranges_arg {
    struct sl_k_copy_range r[SL_K_COPY_RANGES_MAX];
    int64_t first_tile[SL_K_COPY_RANGES_MAX + 1]; /* range i's tiles: [first_tile[i], [i + 1]) */
    int n;
};

template <typename T>
__device__ void copy_tile(const char *__restrict__ src, char *__restrict__ dst, int64_t bytes)
{
    const T *s = (const T *)src;
    T *d = (T *)dst;
    int64_t n = bytes / (int64_t)sizeof(T);
#pragma unroll 4
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        d[i] = s[i];
}

__global__ void copy_ranges_kernel(const copy_ranges_arg a)
{
    int64_t total = a.first_tile[a.n];
    for (int64_t t = blockIdx.x; t < total; t += gridDim.x) {
        int r = 0;
        while (a.first_tile[r + 1] <= t)
            r++;
        int64_t off = (t - a.first_tile[r]) * kCopyTile;
        int64_t len = a.r[r].bytes - off < kCopyTile ? a.r[r].bytes - off : kCopyTile;
        const char *s = (const char *)a.r[r].src + off;
        char *d = (char *)a.r[r].dst + off;
        uintptr_t align = (uintptr_t)s | (uintptr_t)d | (uintptr_t)len;
        if (align % 16 == 0)
            copy_tile<uint4>(s, d, len);
        else if (align % 8 == 0)
            copy_tile<uint2>(s, d, len);
        else
            copy_tile<unsigned char>(s, d, len);
    }
}

} // namespace

extern "C" cudaError_t sl_k_copy_ranges(const struct sl_k_copy_range *ranges, int n,
                                        cudaStream_t stream)
{
    if (n < 0 || n > SL_K_COPY_RANGES_MAX || (n > 0 && ranges == NULL))
        return cudaErrorInvalidValue;
    copy_ranges_arg a;
    a.n = 0;
    a.first_tile[0] = 0;
    for (int i = 0; i < n; i++) {
        if (ranges[i].bytes < 0)
            return cudaErrorInvalidValue;
        if (ranges[i].bytes == 0)
            continue;
        a.r[a.n] = ranges[i];
        a.first_tile[a.n + 1] = a.first_tile[a.n] + (ranges[i].bytes + kCopyTile - 1) / kCopyTile;
        a.n++;
    }
    if (a.n == 0)
        return cudaSuccess;
    int64_t tiles = a.first_tile[a.n];
    copy_ranges_kernel<<<(unsigned)sl_grid::capped(tiles, 4), kThreads, 0, stream>>>(a);
    return cudaGetLastError();
}
