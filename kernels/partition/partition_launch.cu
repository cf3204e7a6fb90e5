/* Launchers of the radix partitioner: the only place with <<< >>> for partition.
 * Contracts in sluice_k/partition.h. */
#include "sluice_k/partition.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "partition_chain.cuh"
#include "partition_kernels.cuh"

using namespace sluice_k::partition;

static size_t align_up(size_t x)
{
    return (x + 255) & ~(size_t)255;
}

template <typename K, typename V>
static cudaError_t partition_pairs(void *d_temp, size_t *temp_bytes, const K *keys_in,
                                   K *keys_out, const V *vals_in, V *vals_out, int64_t n,
                                   int begin_bit, int bits, int bpp, int method,
                                   cudaStream_t stream)
{
    if (temp_bytes == NULL || n < 0 || n >= ((int64_t)1 << 32) || bits < 1 || bits > 16 ||
        begin_bit < 0 || begin_bit + bits > (int)(8 * sizeof(K)))
        return cudaErrorInvalidValue;
    if (method == SL_K_PART_CUB) {
        size_t need = 0;
        cudaError_t e = cub::DeviceRadixSort::SortPairs(
            (void *)NULL, need, keys_in, keys_out, vals_in, vals_out, (int64_t)n, begin_bit,
            begin_bit + bits, stream);
        if (e != cudaSuccess)
            return e;
        if (d_temp == NULL) {
            *temp_bytes = need;
            return cudaSuccess;
        }
        if (*temp_bytes < need)
            return cudaErrorInvalidValue;
        if (n == 0)
            return cudaSuccess;
        e = cub::DeviceRadixSort::SortPairs(d_temp, need, keys_in, keys_out, vals_in, vals_out,
                                            (int64_t)n, begin_bit, begin_bit + bits, stream);
        if (e != cudaSuccess)
            return e;
        return cudaGetLastError();
    }
    if (method == SL_K_PART_CHAIN && n < sluice_k::pchain::kMaxRows)
        return sluice_k::pchain::run<K, V, true>(d_temp, temp_bytes, keys_in, keys_out,
                                                 sluice_k::pchain::RowPtr<V>{vals_in}, vals_out,
                                                 n, begin_bit, bits, stream);
    if (method == SL_K_PART_CHAIN)
        return partition_pairs<K, V>(d_temp, temp_bytes, keys_in, keys_out, vals_in, vals_out,
                                     n, begin_bit, bits, bpp, SL_K_PART_CUB, stream);
    if (method != SL_K_PART_OWN || bpp < 1 || bpp > kMaxPassBits)
        return cudaErrorInvalidValue;
    if (bpp > bits)
        bpp = bits;
    const int npass = (bits + bpp - 1) / bpp;
    const int64_t tiles = (n + kTileItems - 1) / kTileItems;
    const int64_t count_elems = tiles << bpp;
    size_t scan_bytes = 0;
    cudaError_t e = cub::DeviceScan::ExclusiveSum((void *)NULL, scan_bytes, (uint32_t *)NULL,
                                                  (uint32_t *)NULL, count_elems, stream);
    if (e != cudaSuccess)
        return e;
    const size_t tk_bytes = npass > 1 ? align_up((size_t)n * sizeof(K)) : 0;
    const size_t tv_bytes = npass > 1 ? align_up((size_t)n * sizeof(V)) : 0;
    const size_t c_bytes = align_up((size_t)count_elems * sizeof(uint32_t));
    const size_t need = tk_bytes + tv_bytes + c_bytes + align_up(scan_bytes) + 256;
    if (d_temp == NULL) {
        *temp_bytes = need;
        return cudaSuccess;
    }
    if (*temp_bytes < need)
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    char *p = (char *)d_temp;
    K *tk = (K *)p;
    V *tv = (V *)(p + tk_bytes);
    uint32_t *counts = (uint32_t *)(p + tk_bytes + tv_bytes);
    void *scan_tmp = p + tk_bytes + tv_bytes + c_bytes;

    const K *kin = keys_in;
    const V *vin = vals_in;
    for (int pass = 0; pass < npass; pass++) {
        const int shift = begin_bit + pass * bpp;
        const int b = (begin_bit + bits - shift) < bpp ? (begin_bit + bits - shift) : bpp;
        const bool to_out = ((npass - 1 - pass) % 2) == 0;
        K *kout = to_out ? keys_out : tk;
        V *vout = to_out ? vals_out : tv;
        const int64_t elems = tiles << b;
        hist_kernel<K><<<(unsigned)tiles, kBlockThreads, 0, stream>>>(kin, n, shift, b, counts,
                                                                     tiles);
        if ((e = cudaGetLastError()) != cudaSuccess)
            return e;
        size_t sb = scan_bytes;
        e = cub::DeviceScan::ExclusiveSum(scan_tmp, sb, counts, counts, elems, stream);
        if (e != cudaSuccess)
            return e;
        scatter_kernel<K, V><<<(unsigned)tiles, kBlockThreads, 0, stream>>>(
            kin, vin, kout, vout, n, shift, b, counts, tiles);
        if ((e = cudaGetLastError()) != cudaSuccess)
            return e;
        kin = kout;
        vin = vout;
    }
    return cudaGetLastError();
}

template <typename K>
static cudaError_t partition_offsets(const K *keys, int64_t n, int begin_bit, int bits,
                                     int64_t *offsets, cudaStream_t stream)
{
    if (n < 0 || bits < 1 || bits > 16 || begin_bit < 0 ||
        begin_bit + bits > (int)(8 * sizeof(K)) || offsets == NULL)
        return cudaErrorInvalidValue;
    if (n == 0) {
        cudaError_t e = cudaMemsetAsync(offsets, 0, (((size_t)1 << bits) + 1) * sizeof(int64_t),
                                        stream);
        return e != cudaSuccess ? e : cudaGetLastError();
    }
    const int64_t parts = (int64_t)1 << bits;
    offsets_kernel<K><<<(unsigned)((parts + 1 + 255) / 256), 256, 0, stream>>>(keys, n, begin_bit,
                                                                             bits, offsets);
    return cudaGetLastError();
}

#define SL_K_PARTITION_DEF(SUF, KT, VT)                                                    \
    extern "C" cudaError_t sl_k_partition_pairs_##SUF(                                    \
        void *d_temp, size_t *temp_bytes, const KT *d_keys_in, KT *d_keys_out,            \
        const VT *d_vals_in, VT *d_vals_out, int64_t n, int begin_bit, int bits,          \
        int bits_per_pass, int method, cudaStream_t stream)                               \
    {                                                                                     \
        return partition_pairs<KT, VT>(d_temp, temp_bytes, d_keys_in, d_keys_out,         \
                                       d_vals_in, d_vals_out, n, begin_bit, bits,         \
                                       bits_per_pass, method, stream);                    \
    }

SL_K_PARTITION_DEF(k32_v32, uint32_t, uint32_t)
SL_K_PARTITION_DEF(k32_v64, uint32_t, uint64_t)
SL_K_PARTITION_DEF(k64_v32, uint64_t, uint32_t)
SL_K_PARTITION_DEF(k64_v64, uint64_t, uint64_t)

extern "C" cudaError_t sl_k_partition_offsets_k32(const uint32_t *d_keys, int64_t n,
                                                  int begin_bit, int bits, int64_t *d_offsets,
                                                  cudaStream_t stream)
{
    return partition_offsets<uint32_t>(d_keys, n, begin_bit, bits, d_offsets, stream);
}

extern "C" cudaError_t sl_k_partition_offsets_k64(const uint64_t *d_keys, int64_t n,
                                                  int begin_bit, int bits, int64_t *d_offsets,
                                                  cudaStream_t stream)
{
    return partition_offsets<uint64_t>(d_keys, n, begin_bit, bits, d_offsets, stream);
}
