/* Launchers of sl_k_lower_bounds_i64 and sl_k_lower_bounds_codes (sluice_k/sort.h): where
 * splitters cut sorted keys (a multi-device sort's devices; the out-of-core sort's runs at
 * its pass-2 buckets). m is small next to n: one binary search per thread. Also
 * sl_k_gather_addrs: the out-of-core sort's samples of keys in GPU batches. */
#include "sluice_k/sort.h"

/* The value compared for key i: the key itself (Plain) or its code (Code<T, desc>). */
struct Plain {
    __device__ int64_t operator()(const int64_t *keys, int64_t i) const { return keys[i]; }
};
template <typename T, bool Desc> struct Code {
    __device__ uint64_t operator()(const T *keys, int64_t i) const
    {
        if (sizeof(T) == 4) {
            uint32_t c = (uint32_t)keys[i] ^ 0x80000000u;
            return Desc ? (uint32_t)~c : c;
        }
        uint64_t c = (uint64_t)keys[i] ^ 0x8000000000000000ull;
        return Desc ? ~c : c;
    }
};

/* A packed run's row (sluice_k/ooc_pack.h): its code is the high half. */
struct PackedCode {
    __device__ uint64_t operator()(const uint64_t *rows, int64_t i) const { return rows[i] >> 32; }
};

template <typename K, typename V, typename Of>
__global__ void lower_bounds(const K *keys, int64_t n, const V *values, int64_t m, int64_t *pos,
                             Of of)
{
    int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m)
        return;
    V v = values[j];
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (of(keys, mid) < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    pos[j] = lo;
}

template <typename K, typename V, typename Of>
static cudaError_t launch(const K *keys, int64_t n, const V *values, int64_t m, int64_t *pos,
                          cudaStream_t stream)
{
    if (m <= 0)
        return cudaSuccess;
    if (!values || !pos || (n > 0 && !keys))
        return cudaErrorInvalidValue;
    lower_bounds<<<(unsigned)((m + 127) / 128), 128, 0, stream>>>(keys, n, values, m, pos, Of());
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_lower_bounds_i64(const int64_t *d_sorted, int64_t n,
                                             const int64_t *d_values, int m, int64_t *d_pos,
                                             cudaStream_t stream)
{
    return launch<int64_t, int64_t, Plain>(d_sorted, n, d_values, m, d_pos, stream);
}

extern "C" cudaError_t sl_k_lower_bounds_codes(const void *d_sorted, int key_bytes, int desc,
                                               int64_t n, const uint64_t *d_codes, int64_t m,
                                               int64_t *d_pos, cudaStream_t stream)
{
    if (key_bytes == 4) {
        const int32_t *k = (const int32_t *)d_sorted;
        return desc ? launch<int32_t, uint64_t, Code<int32_t, true>>(k, n, d_codes, m, d_pos, stream)
                    : launch<int32_t, uint64_t, Code<int32_t, false>>(k, n, d_codes, m, d_pos,
                                                                      stream);
    }
    if (key_bytes != 8)
        return cudaErrorInvalidValue;
    const int64_t *k = (const int64_t *)d_sorted;
    return desc ? launch<int64_t, uint64_t, Code<int64_t, true>>(k, n, d_codes, m, d_pos, stream)
                : launch<int64_t, uint64_t, Code<int64_t, false>>(k, n, d_codes, m, d_pos, stream);
}

extern "C" cudaError_t sl_k_lower_bounds_packed(const uint64_t *d_sorted, int64_t n,
                                                const uint64_t *d_codes, int64_t m,
                                                int64_t *d_pos, cudaStream_t stream)
{
    return launch<uint64_t, uint64_t, PackedCode>(d_sorted, n, d_codes, m, d_pos, stream);
}

template <typename T>
__global__ void gather_addrs(const void *const *addrs, T *out, int64_t n)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        out[i] = *(const T *)addrs[i];
}

extern "C" cudaError_t sl_k_gather_addrs(const void *const *d_addrs, int width, void *d_out,
                                         int64_t n, cudaStream_t stream)
{
    if (n < 0 || (width != 4 && width != 8) || (n > 0 && (!d_addrs || !d_out)))
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    int64_t blocks = (n + 255) / 256;
    unsigned grid = (unsigned)(blocks < 4096 ? blocks : 4096);
    if (width == 4)
        gather_addrs<uint32_t><<<grid, 256, 0, stream>>>(d_addrs, (uint32_t *)d_out, n);
    else
        gather_addrs<uint64_t><<<grid, 256, 0, stream>>>(d_addrs, (uint64_t *)d_out, n);
    return cudaGetLastError();
}
