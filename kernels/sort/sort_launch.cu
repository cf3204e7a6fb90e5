/* Launchers of sl_k_sort_pairs (CUB DeviceRadixSort of signed keys: CUB's own bit twiddle
 * orders int32/int64 correctly, with 0, 4 or 8 bytes of value) and of the partition
 * operator's partition numbers and bounds. Contracts in sluice_k/sort.h. */
#include "sluice_k/sort.h"

#include <cub/device/device_radix_sort.cuh>

template <typename K, typename V>
static cudaError_t sort_kv(void *d_temp, size_t *temp_bytes, int desc, const void *kin,
                           void *kout, const void *vin, void *vout, int64_t n,
                           cudaStream_t stream, int end_bit = (int)(8 * sizeof(K)))
{
    const K *ki = (const K *)kin;
    K *ko = (K *)kout;
    const V *vi = (const V *)vin;
    V *vo = (V *)vout;
    int nn = (int)n;
    /* With temp storage given, one call: CUB checks that *temp_bytes suffices itself
     * (cudaErrorInvalidValue if not), so no size query first (a second dispatch on the
     * host before the first kernel, in the span of every sort). */
    if (d_temp != NULL && (n > 0 && (!ki || !ko || !vi || !vo)))
        return cudaErrorInvalidValue;
    if (d_temp != NULL && n == 0)
        return cudaSuccess;
    cudaError_t e = desc ? cub::DeviceRadixSort::SortPairsDescending(d_temp, *temp_bytes, ki, ko,
                                                                     vi, vo, nn, 0,
                                                                     end_bit, stream)
                         : cub::DeviceRadixSort::SortPairs(d_temp, *temp_bytes, ki, ko, vi, vo,
                                                           nn, 0, end_bit, stream);
    return e != cudaSuccess || d_temp == NULL ? e : cudaGetLastError();
}

template <typename K>
static cudaError_t sort_k(void *d_temp, size_t *temp_bytes, int desc, const void *kin,
                          void *kout, int64_t n, cudaStream_t stream,
                          int end_bit = (int)(8 * sizeof(K)))
{
    const K *ki = (const K *)kin;
    K *ko = (K *)kout;
    int nn = (int)n;
    if (d_temp != NULL && (n > 0 && (!ki || !ko))) /* one call with temp: as sort_kv */
        return cudaErrorInvalidValue;
    if (d_temp != NULL && n == 0)
        return cudaSuccess;
    cudaError_t e = desc ? cub::DeviceRadixSort::SortKeysDescending(d_temp, *temp_bytes, ki, ko,
                                                                    nn, 0, end_bit,
                                                                    stream)
                         : cub::DeviceRadixSort::SortKeys(d_temp, *temp_bytes, ki, ko, nn, 0,
                                                          end_bit, stream);
    return e != cudaSuccess || d_temp == NULL ? e : cudaGetLastError();
}

template <typename K>
static cudaError_t sort_any(void *d_temp, size_t *temp_bytes, int desc, const void *kin,
                            void *kout, const void *vin, void *vout, int val_bytes, int64_t n,
                            cudaStream_t stream, int end_bit = (int)(8 * sizeof(K)))
{
    switch (val_bytes) {
    case 0: return sort_k<K>(d_temp, temp_bytes, desc, kin, kout, n, stream, end_bit);
    case 4:
        return sort_kv<K, uint32_t>(d_temp, temp_bytes, desc, kin, kout, vin, vout, n, stream,
                                    end_bit);
    default:
        return sort_kv<K, unsigned long long>(d_temp, temp_bytes, desc, kin, kout, vin, vout, n,
                                              stream, end_bit);
    }
}

extern "C" cudaError_t sl_k_sort_pairs(void *d_temp, size_t *temp_bytes, int key_bytes, int desc,
                                       const void *d_keys_in, void *d_keys_out,
                                       const void *d_vals_in, void *d_vals_out, int val_bytes,
                                       int64_t n, cudaStream_t stream)
{
    if (temp_bytes == NULL || n < 0 || n >= ((int64_t)1 << 31) ||
        (key_bytes != 4 && key_bytes != 8) || (val_bytes != 0 && val_bytes != 4 && val_bytes != 8))
        return cudaErrorInvalidValue;
    if (key_bytes == 4)
        return sort_any<int32_t>(d_temp, temp_bytes, desc, d_keys_in, d_keys_out, d_vals_in,
                                 d_vals_out, val_bytes, n, stream);
    return sort_any<long long>(d_temp, temp_bytes, desc, d_keys_in, d_keys_out, d_vals_in,
                               d_vals_out, val_bytes, n, stream);
}

extern "C" cudaError_t sl_k_sort_pairs_bits(void *d_temp, size_t *temp_bytes, int key_bytes,
                                            int bits, const void *d_keys_in, void *d_keys_out,
                                            const void *d_vals_in, void *d_vals_out,
                                            int val_bytes, int64_t n, cudaStream_t stream)
{
    if (temp_bytes == NULL || n < 0 || n >= ((int64_t)1 << 31) ||
        (key_bytes != 4 && key_bytes != 8) || bits < 1 || bits > 8 * key_bytes ||
        (val_bytes != 0 && val_bytes != 4 && val_bytes != 8))
        return cudaErrorInvalidValue;
    if (key_bytes == 4)
        return sort_any<int32_t>(d_temp, temp_bytes, 0, d_keys_in, d_keys_out, d_vals_in,
                                 d_vals_out, val_bytes, n, stream, bits);
    return sort_any<long long>(d_temp, temp_bytes, 0, d_keys_in, d_keys_out, d_vals_in,
                               d_vals_out, val_bytes, n, stream, bits);
}

/* ---------------- sort codes of other integer keys ---------------- */

/* Widening keeps the order of signed and unsigned keys alike; flipping the top bit of
 * an unsigned key of the code's width maps unsigned order onto signed order. */
template <typename K, typename C>
__global__ void sort_codes_kernel(const K *keys, int64_t n, C flip, C *codes)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        codes[i] = (C)keys[i] ^ flip;
}

static unsigned grid_for(int64_t n, int threads)
{
    int64_t b = (n + threads - 1) / threads;
    return (unsigned)(b < 65536 ? (b > 0 ? b : 1) : 65536);
}

template <typename K, typename C>
static cudaError_t sort_codes(const void *keys, int64_t n, C flip, void *codes,
                              cudaStream_t stream)
{
    sort_codes_kernel<K, C><<<grid_for(n, 256), 256, 0, stream>>>((const K *)keys, n, flip,
                                                                  (C *)codes);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_sort_codes(const void *d_keys, int key_bytes, int is_signed,
                                       int64_t n, void *d_codes, cudaStream_t stream)
{
    if (n < 0 || (n > 0 && (!d_keys || !d_codes)))
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    const int32_t top32 = INT32_MIN;
    const long long top64 = (long long)INT64_MIN;
    switch (key_bytes * 2 + !!is_signed) {
    case 2: return sort_codes<uint8_t, int32_t>(d_keys, n, 0, d_codes, stream);
    case 3: return sort_codes<int8_t, int32_t>(d_keys, n, 0, d_codes, stream);
    case 4: return sort_codes<uint16_t, int32_t>(d_keys, n, 0, d_codes, stream);
    case 5: return sort_codes<int16_t, int32_t>(d_keys, n, 0, d_codes, stream);
    case 8: return sort_codes<uint32_t, int32_t>(d_keys, n, top32, d_codes, stream);
    case 9: return sort_codes<int32_t, int32_t>(d_keys, n, 0, d_codes, stream);
    case 16: return sort_codes<unsigned long long, long long>(d_keys, n, top64, d_codes, stream);
    case 17: return sort_codes<long long, long long>(d_keys, n, 0, d_codes, stream);
    default: return cudaErrorInvalidValue;
    }
}

/* ---------------- partition numbers and bounds (the partition operator) ---------------- */

template <typename K>
__global__ void part_ids_kernel(const K *keys, int64_t n, int bits, int hash, uint32_t *pid)
{
    const uint64_t mul = 0x9E3779B97F4A7C15ull, mask = (1ull << bits) - 1;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint64_t k = (uint64_t)keys[i];
        uint64_t r = hash ? (k * mul) >> (64 - bits) : k;
        pid[i] = (uint32_t)(r & mask);
    }
}

__global__ void part_bounds_kernel(const uint32_t *pid, int64_t n, int64_t fanout, int64_t *off)
{
    int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p > fanout)
        return;
    int64_t lo = 0, hi = n; /* first index whose pid >= p */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if ((int64_t)pid[mid] < p)
            lo = mid + 1;
        else
            hi = mid;
    }
    off[p] = lo;
}

extern "C" cudaError_t sl_k_part_ids(const void *d_keys, int key_bytes, int64_t n, int bits,
                                     int hash, uint32_t *d_pid, cudaStream_t stream)
{
    if (n < 0 || bits < 1 || bits > 20 || (key_bytes != 4 && key_bytes != 8) ||
        (n > 0 && (!d_keys || !d_pid)))
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    if (key_bytes == 4)
        part_ids_kernel<uint32_t><<<grid_for(n, 256), 256, 0, stream>>>(
            (const uint32_t *)d_keys, n, bits, hash, d_pid);
    else
        part_ids_kernel<uint64_t><<<grid_for(n, 256), 256, 0, stream>>>(
            (const uint64_t *)d_keys, n, bits, hash, d_pid);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_sort_pids(void *d_temp, size_t *temp_bytes, const uint32_t *d_pid_in,
                                      uint32_t *d_pid_out, const uint32_t *d_ids_in,
                                      uint32_t *d_ids_out, int bits, int64_t n,
                                      cudaStream_t stream)
{
    if (temp_bytes == NULL || n < 0 || n >= ((int64_t)1 << 31) || bits < 1 || bits > 32)
        return cudaErrorInvalidValue;
    int nn = (int)n;
    if (d_temp != NULL && /* one call with temp: CUB checks its size (as sort_kv) */
        (n > 0 && (!d_pid_in || !d_pid_out || !d_ids_in || !d_ids_out)))
        return cudaErrorInvalidValue;
    if (d_temp != NULL && n == 0)
        return cudaSuccess;
    cudaError_t e = cub::DeviceRadixSort::SortPairs(d_temp, *temp_bytes, d_pid_in, d_pid_out,
                                                    d_ids_in, d_ids_out, nn, 0, bits, stream);
    return e != cudaSuccess || d_temp == NULL ? e : cudaGetLastError();
}

/* Per-chunk histograms of partition numbers: block b counts tile b % tiles of chunk
 * b / tiles in shared memory, then adds its counts to the chunk's row of hist. */
#define PART_HIST_TILE 8192
#define PART_HIST_SHARED 4096
__global__ void part_hist_kernel(const uint32_t *pid, int64_t n, int64_t chunk_rows,
                                 int64_t tiles, int fanout, uint32_t *hist)
{
    __shared__ uint32_t h[PART_HIST_SHARED];
    int64_t chunk = blockIdx.x / tiles, tile = blockIdx.x % tiles;
    int64_t lo = chunk * chunk_rows + tile * PART_HIST_TILE;
    int64_t hi = min(min(lo + PART_HIST_TILE, (chunk + 1) * chunk_rows), n);
    for (int p = threadIdx.x; p < fanout; p += blockDim.x)
        h[p] = 0;
    __syncthreads();
    for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x)
        atomicAdd(&h[pid[i]], 1u);
    __syncthreads();
    uint32_t *row = hist + chunk * fanout;
    for (int p = threadIdx.x; p < fanout; p += blockDim.x)
        if (h[p])
            atomicAdd(&row[p], h[p]);
}

extern "C" cudaError_t sl_k_part_hist(const uint32_t *d_pid, int64_t n, int64_t chunk_rows,
                                      int64_t fanout, uint32_t *d_hist, cudaStream_t stream)
{
    if (n < 0 || chunk_rows < 1 || chunk_rows > UINT32_MAX || fanout < 1 ||
        fanout > PART_HIST_SHARED || !d_hist || (n > 0 && !d_pid))
        return cudaErrorInvalidValue;
    int64_t chunks = (n + chunk_rows - 1) / chunk_rows;
    int64_t tiles = (chunk_rows + PART_HIST_TILE - 1) / PART_HIST_TILE;
    cudaError_t e = cudaMemsetAsync(d_hist, 0, (size_t)(chunks * fanout) * 4, stream);
    if (e != cudaSuccess || n == 0)
        return e;
    if (chunks * tiles > INT32_MAX)
        return cudaErrorInvalidValue;
    part_hist_kernel<<<(unsigned)(chunks * tiles), 256, 0, stream>>>(d_pid, n, chunk_rows,
                                                                     tiles, (int)fanout,
                                                                     d_hist);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_part_bounds(const uint32_t *d_pid_sorted, int64_t n, int64_t fanout,
                                        int64_t *d_off, cudaStream_t stream)
{
    if (n < 0 || fanout < 1 || !d_off || (n > 0 && !d_pid_sorted))
        return cudaErrorInvalidValue;
    unsigned blocks = (unsigned)((fanout + 1 + 255) / 256);
    part_bounds_kernel<<<blocks, 256, 0, stream>>>(d_pid_sorted, n, fanout, d_off);
    return cudaGetLastError();
}
