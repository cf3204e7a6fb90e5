/* Launchers of sl_k_radix_rows_*: CUB onesweep radix sort of (key, packed row) pairs on a
 * bit range, i.e. stable partitioning (few bits) or a full sort (all key bits). Contract
 * in sluice_k/join_gftr.h. */
#include "sluice_k/join_gftr.h"
#include "sluice_k/partition.h"

#include <cub/device/device_radix_sort.cuh>

#include "sluice_k/rows.cuh"
#include "partition_chain.cuh"

using sluice_k::rows::RowT;
namespace pchain = sluice_k::pchain;

template <typename K, typename R>
static cudaError_t sort_rows(void *d_temp, size_t *temp_bytes, const K *kin, K *kout,
                             const void *rin, void *rout, int64_t n, int b0, int b1,
                             cudaStream_t stream)
{
    size_t need = 0;
    cudaError_t e = cub::DeviceRadixSort::SortPairs((void *)NULL, need, kin, kout, (const R *)rin,
                                                    (R *)rout, n, b0, b1, stream);
    if (e != cudaSuccess)
        return e;
    if (d_temp == NULL) {
        *temp_bytes = need;
        return cudaSuccess;
    }
    if (*temp_bytes < need || (n > 0 && (!kin || !kout || !rin || !rout)))
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    e = cub::DeviceRadixSort::SortPairs(d_temp, need, kin, kout, (const R *)rin, (R *)rout, n, b0,
                                        b1, stream);
    return e != cudaSuccess ? e : cudaGetLastError();
}

template <typename K>
static cudaError_t radix_rows(void *d_temp, size_t *temp_bytes, const K *kin, K *kout,
                              const void *rin, void *rout, int row_bytes, int64_t n, int b0,
                              int b1, cudaStream_t stream)
{
    if (temp_bytes == NULL || n < 0 || n >= ((int64_t)1 << 32) || b0 < 0 || b1 <= b0 ||
        b1 > (int)(8 * sizeof(K)) || row_bytes < 0 || row_bytes > 16 || (row_bytes & 3))
        return cudaErrorInvalidValue;
    if (row_bytes == 0) {
        size_t need = 0;
        cudaError_t e =
            cub::DeviceRadixSort::SortKeys((void *)NULL, need, kin, kout, n, b0, b1, stream);
        if (e != cudaSuccess)
            return e;
        if (d_temp == NULL) {
            *temp_bytes = need;
            return cudaSuccess;
        }
        if (*temp_bytes < need || (n > 0 && (!kin || !kout)))
            return cudaErrorInvalidValue;
        if (n == 0)
            return cudaSuccess;
        e = cub::DeviceRadixSort::SortKeys(d_temp, need, kin, kout, n, b0, b1, stream);
        return e != cudaSuccess ? e : cudaGetLastError();
    }
    switch (row_bytes / 4) {
    case 1:
        return sort_rows<K, RowT<1>::T>(d_temp, temp_bytes, kin, kout, rin, rout, n, b0, b1, stream);
    case 2:
        return sort_rows<K, RowT<2>::T>(d_temp, temp_bytes, kin, kout, rin, rout, n, b0, b1, stream);
    case 3:
        return sort_rows<K, RowT<3>::T>(d_temp, temp_bytes, kin, kout, rin, rout, n, b0, b1, stream);
    default:
        return sort_rows<K, RowT<4>::T>(d_temp, temp_bytes, kin, kout, rin, rout, n, b0, b1, stream);
    }
}

extern "C" cudaError_t sl_k_radix_rows_k32(void *d_temp, size_t *temp_bytes,
                                           const uint32_t *d_keys_in, uint32_t *d_keys_out,
                                           const void *d_rows_in, void *d_rows_out, int row_bytes,
                                           int64_t n, int begin_bit, int end_bit,
                                           cudaStream_t stream)
{
    return radix_rows<uint32_t>(d_temp, temp_bytes, d_keys_in, d_keys_out, d_rows_in, d_rows_out,
                                row_bytes, n, begin_bit, end_bit, stream);
}

extern "C" cudaError_t sl_k_radix_rows_k64(void *d_temp, size_t *temp_bytes,
                                           const uint64_t *d_keys_in, uint64_t *d_keys_out,
                                           const void *d_rows_in, void *d_rows_out, int row_bytes,
                                           int64_t n, int begin_bit, int end_bit,
                                           cudaStream_t stream)
{
    return radix_rows<uint64_t>(d_temp, temp_bytes, d_keys_in, d_keys_out, d_rows_in, d_rows_out,
                                row_bytes, n, begin_bit, end_bit, stream);
}

/* SL_K_PART_CHAIN on rows of NW words (0: keys only). */
template <typename K, int NW>
static cudaError_t chain_rows(void *d_temp, size_t *temp_bytes, const K *kin, K *kout,
                              const void *rin, void *rout, int64_t n, int lo, int bits,
                              cudaStream_t stream)
{
    using R = typename RowT<NW == 0 ? 1 : NW>::T;
    return pchain::run<K, R, NW != 0>(d_temp, temp_bytes, kin, kout,
                                      pchain::RowPtr<R>{(const R *)rin}, (R *)rout, n, lo, bits,
                                      stream);
}

template <typename K>
static cudaError_t partition_rows(void *d_temp, size_t *temp_bytes, const K *kin, K *kout,
                                  const void *rin, void *rout, int row_bytes, int64_t n, int lo,
                                  int bits, int method, cudaStream_t stream)
{
    if (bits < 1 || bits > 16 || (method != SL_K_PART_CUB && method != SL_K_PART_CHAIN))
        return cudaErrorInvalidValue;
    if (method == SL_K_PART_CUB || n >= pchain::kMaxRows)
        return radix_rows<K>(d_temp, temp_bytes, kin, kout, rin, rout, row_bytes, n, lo,
                             lo + bits, stream);
    if (row_bytes < 0 || row_bytes > 16 || (row_bytes & 3))
        return cudaErrorInvalidValue;
    switch (row_bytes / 4) {
    case 0:
        return chain_rows<K, 0>(d_temp, temp_bytes, kin, kout, rin, rout, n, lo, bits, stream);
    case 1:
        return chain_rows<K, 1>(d_temp, temp_bytes, kin, kout, rin, rout, n, lo, bits, stream);
    case 2:
        return chain_rows<K, 2>(d_temp, temp_bytes, kin, kout, rin, rout, n, lo, bits, stream);
    case 3:
        return chain_rows<K, 3>(d_temp, temp_bytes, kin, kout, rin, rout, n, lo, bits, stream);
    default:
        return chain_rows<K, 4>(d_temp, temp_bytes, kin, kout, rin, rout, n, lo, bits, stream);
    }
}

extern "C" cudaError_t sl_k_partition_rows_k32(void *d_temp, size_t *temp_bytes,
                                               const uint32_t *d_keys_in, uint32_t *d_keys_out,
                                               const void *d_rows_in, void *d_rows_out,
                                               int row_bytes, int64_t n, int begin_bit, int bits,
                                               int method, cudaStream_t stream)
{
    return partition_rows<uint32_t>(d_temp, temp_bytes, d_keys_in, d_keys_out, d_rows_in,
                                    d_rows_out, row_bytes, n, begin_bit, bits, method, stream);
}

extern "C" cudaError_t sl_k_partition_rows_k64(void *d_temp, size_t *temp_bytes,
                                               const uint64_t *d_keys_in, uint64_t *d_keys_out,
                                               const void *d_rows_in, void *d_rows_out,
                                               int row_bytes, int64_t n, int begin_bit, int bits,
                                               int method, cudaStream_t stream)
{
    return partition_rows<uint64_t>(d_temp, temp_bytes, d_keys_in, d_keys_out, d_rows_in,
                                    d_rows_out, row_bytes, n, begin_bit, bits, method, stream);
}
