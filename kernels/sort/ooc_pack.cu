/* Launchers and kernels of the out-of-core sort's packed runs (sluice_k/ooc_pack.h). */
#include "sluice_k/ooc_pack.h"

#include <cub/device/device_radix_sort.cuh>

namespace {

constexpr int THREADS = 256;

unsigned grid_for(int64_t n)
{
    int64_t b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b < 65536 ? (b > 0 ? b : 1) : 65536);
}

template <bool Desc> __device__ __forceinline__ uint32_t code_of(int32_t key)
{
    uint32_t c = (uint32_t)key ^ 0x80000000u;
    return Desc ? ~c : c;
}

template <bool Desc> __device__ __forceinline__ int32_t key_of(uint32_t code)
{
    return (int32_t)((Desc ? ~code : code) ^ 0x80000000u);
}

template <bool Desc>
__global__ void pack_kernel(const int32_t *keys, const uint32_t *vals, int64_t n, uint64_t *rows)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        rows[i] = (uint64_t)code_of<Desc>(keys[i]) << 32 | vals[i];
}

template <bool Desc>
__global__ void unpack_kernel(const uint64_t *rows, int64_t n, int32_t *keys, uint32_t *vals)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint64_t r = rows[i];
        keys[i] = key_of<Desc>((uint32_t)(r >> 32));
        vals[i] = (uint32_t)r;
    }
}

} // namespace

extern "C" cudaError_t sl_k_ooc_pack(const int32_t *d_keys, const uint32_t *d_vals, int desc,
                                     int64_t n, uint64_t *d_rows, cudaStream_t stream)
{
    if (n < 0 || (n > 0 && (!d_keys || !d_vals || !d_rows)))
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    if (desc)
        pack_kernel<true><<<grid_for(n), THREADS, 0, stream>>>(d_keys, d_vals, n, d_rows);
    else
        pack_kernel<false><<<grid_for(n), THREADS, 0, stream>>>(d_keys, d_vals, n, d_rows);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_ooc_unpack(const uint64_t *d_rows, int desc, int64_t n,
                                       int32_t *d_keys, uint32_t *d_vals, cudaStream_t stream)
{
    if (n < 0 || (n > 0 && (!d_keys || !d_vals || !d_rows)))
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    if (desc)
        unpack_kernel<true><<<grid_for(n), THREADS, 0, stream>>>(d_rows, n, d_keys, d_vals);
    else
        unpack_kernel<false><<<grid_for(n), THREADS, 0, stream>>>(d_rows, n, d_keys, d_vals);
    return cudaGetLastError();
}

static cudaError_t sort_packed(void *d_temp, size_t *temp_bytes, uint64_t *d_rows,
                               uint64_t *d_alt, int64_t n, int bits, int *in_alt,
                               cudaStream_t stream)
{
    if (temp_bytes == NULL || n < 0 || n >= ((int64_t)1 << 31) || bits < 1 || bits > 32)
        return cudaErrorInvalidValue;
    typedef unsigned long long K;
    cub::DoubleBuffer<K> db((K *)d_rows, (K *)d_alt);
    size_t need = 0;
    cudaError_t e =
        cub::DeviceRadixSort::SortKeys((void *)NULL, need, db, (int)n, 32, 32 + bits, stream);
    if (e != cudaSuccess)
        return e;
    if (d_temp == NULL) {
        *temp_bytes = need;
        return cudaSuccess;
    }
    if (*temp_bytes < need || in_alt == NULL || (n > 0 && (!d_rows || !d_alt)))
        return cudaErrorInvalidValue;
    *in_alt = 0;
    if (n == 0)
        return cudaSuccess;
    e = cub::DeviceRadixSort::SortKeys(d_temp, need, db, (int)n, 32, 32 + bits, stream);
    if (e != cudaSuccess)
        return e;
    *in_alt = db.Current() == (K *)d_alt;
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_ooc_sort_packed(void *d_temp, size_t *temp_bytes, uint64_t *d_rows,
                                            uint64_t *d_alt, int64_t n, int *in_alt,
                                            cudaStream_t stream)
{
    return sort_packed(d_temp, temp_bytes, d_rows, d_alt, n, 32, in_alt, stream);
}

extern "C" cudaError_t sl_k_ooc_sort_packed_bits(void *d_temp, size_t *temp_bytes,
                                                 uint64_t *d_rows, uint64_t *d_alt, int64_t n,
                                                 int bits, int *in_alt, cudaStream_t stream)
{
    return sort_packed(d_temp, temp_bytes, d_rows, d_alt, n, bits, in_alt, stream);
}
