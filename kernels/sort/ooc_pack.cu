/* Launchers and kernels of the out-of-core sort's packed runs (sluice_k/ooc_pack.h). */
#include "sluice_k/ooc_pack.h"

#include <cub/device/device_radix_sort.cuh>
#include <stdint.h>

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

/* Narrow runs: table[t] = the first row of n sorted packed rows whose top-16 code bits
 * are >= t. Row i (0..n; n: past the end) writes the entries between the previous row's
 * top and its own, so every entry is written once, in one pass over the rows. */
__global__ void narrow_table_kernel(const uint64_t *rows, int64_t n, uint32_t *table)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i <= n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t prev = i == 0 ? -1 : (int64_t)(rows[i - 1] >> 48);
        int64_t cur = i == n ? SL_K_OOC_NARROW_TOP - 1 : (int64_t)(rows[i] >> 48);
        for (int64_t t = prev + 1; t <= cur; t++)
            table[t] = (uint32_t)i;
    }
}

/* A narrow row: the code's low 16 bits, then the payload's 32, as three 16-bit words. */
__global__ void narrow_encode_kernel(const uint64_t *rows, int64_t n, uint16_t *out)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint64_t r = rows[i];
        out[3 * i] = (uint16_t)(r >> 32);
        out[3 * i + 1] = (uint16_t)r;
        out[3 * i + 2] = (uint16_t)(r >> 16);
    }
}

/* sl_k_ooc_split_tops: one thread a boundary. */
__global__ void split_tops_kernel(const uint64_t *rows, int64_t n, const int64_t *split,
                                  int64_t nc, int32_t *tops)
{
    for (int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; x < nc + 2;
         x += (int64_t)gridDim.x * blockDim.x) {
        int64_t b = x == 0 ? 0 : x <= nc ? split[x - 1] : n;
        tops[2 * x] = b > 0 ? (int32_t)(rows[b - 1] >> 48) : -1;
        tops[2 * x + 1] = b < n ? (int32_t)(rows[b] >> 48) : -1;
    }
}

/* The last index in [lo, hi] whose value is <= x (a[lo] <= x). */
template <typename T>
__device__ __forceinline__ int64_t last_le(const T *a, int64_t lo, int64_t hi, int64_t x)
{
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if ((int64_t)a[mid] <= x)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

__global__ void narrow_decode_kernel(const uint16_t *in, int64_t n, const uint32_t *win,
                                     int64_t pitch, int64_t top0, int64_t tops,
                                     const int64_t *lo, const int64_t *at, int64_t k,
                                     uint64_t *rows)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t j = last_le(at, 0, k - 1, i); /* the run whose slice holds row i */
        const int64_t p = lo[j] + (i - at[j]);      /* its row in that run */
        const uint64_t top = (uint64_t)(top0 + last_le(win + j * pitch, 0, tops - 1, p));
        const uint64_t code = top << 16 | in[3 * i];
        rows[i] = code << 32 | (uint64_t)in[3 * i + 2] << 16 | in[3 * i + 1];
    }
}

} // namespace

extern "C" cudaError_t sl_k_ooc_narrow_table(const uint64_t *d_rows, int64_t n,
                                             uint32_t *d_table, cudaStream_t stream)
{
    if (n < 0 || n > UINT32_MAX || !d_table || (n > 0 && !d_rows))
        return cudaErrorInvalidValue;
    narrow_table_kernel<<<grid_for(n + 1), THREADS, 0, stream>>>(d_rows, n, d_table);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_ooc_narrow_encode(const uint64_t *d_rows, int64_t n, void *d_out,
                                              cudaStream_t stream)
{
    if (n < 0 || (n > 0 && (!d_rows || !d_out)))
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    narrow_encode_kernel<<<grid_for(n), THREADS, 0, stream>>>(d_rows, n, (uint16_t *)d_out);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_ooc_split_tops(const uint64_t *d_rows, int64_t n,
                                           const int64_t *d_split, int64_t nc, int32_t *d_tops,
                                           cudaStream_t stream)
{
    if (n < 0 || nc < 0 || !d_tops || (n > 0 && !d_rows) || (nc > 0 && !d_split))
        return cudaErrorInvalidValue;
    split_tops_kernel<<<grid_for(nc + 2), THREADS, 0, stream>>>(d_rows, n, d_split, nc, d_tops);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_ooc_narrow_decode(const void *d_in, int64_t n, const uint32_t *d_win,
                                              int64_t pitch, int64_t top0, int64_t tops,
                                              const int64_t *d_lo, const int64_t *d_at, int64_t k,
                                              uint64_t *d_rows, cudaStream_t stream)
{
    if (n < 0 || k < 1 || tops < 1 || pitch < tops || top0 < 0 ||
        top0 + tops > SL_K_OOC_NARROW_TOP ||
        (n > 0 && (!d_in || !d_win || !d_lo || !d_at || !d_rows)))
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    narrow_decode_kernel<<<grid_for(n), THREADS, 0, stream>>>(
        (const uint16_t *)d_in, n, d_win, pitch, top0, tops, d_lo, d_at, k, d_rows);
    return cudaGetLastError();
}

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
