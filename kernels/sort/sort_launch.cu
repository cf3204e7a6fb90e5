/* Launcher of sl_k_sort_pairs: CUB DeviceRadixSort of signed keys (CUB's own bit twiddle
 * orders int32/int64 correctly) with 0, 4 or 8 bytes of value. Contract in
 * sluice_k/sort.h. */
#include "sluice_k/sort.h"

#include <cub/device/device_radix_sort.cuh>

template <typename K, typename V>
static cudaError_t sort_kv(void *d_temp, size_t *temp_bytes, int desc, const void *kin,
                           void *kout, const void *vin, void *vout, int64_t n,
                           cudaStream_t stream)
{
    const K *ki = (const K *)kin;
    K *ko = (K *)kout;
    const V *vi = (const V *)vin;
    V *vo = (V *)vout;
    int nn = (int)n;
    size_t need = 0;
    cudaError_t e = desc ? cub::DeviceRadixSort::SortPairsDescending((void *)NULL, need, ki, ko,
                                                                     vi, vo, nn, 0,
                                                                     (int)(8 * sizeof(K)), stream)
                         : cub::DeviceRadixSort::SortPairs((void *)NULL, need, ki, ko, vi, vo, nn,
                                                           0, (int)(8 * sizeof(K)), stream);
    if (e != cudaSuccess)
        return e;
    if (d_temp == NULL) {
        *temp_bytes = need;
        return cudaSuccess;
    }
    if (*temp_bytes < need || (n > 0 && (!ki || !ko || !vi || !vo)))
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    e = desc ? cub::DeviceRadixSort::SortPairsDescending(d_temp, need, ki, ko, vi, vo, nn, 0,
                                                         (int)(8 * sizeof(K)), stream)
             : cub::DeviceRadixSort::SortPairs(d_temp, need, ki, ko, vi, vo, nn, 0,
                                               (int)(8 * sizeof(K)), stream);
    return e != cudaSuccess ? e : cudaGetLastError();
}

template <typename K>
static cudaError_t sort_k(void *d_temp, size_t *temp_bytes, int desc, const void *kin,
                          void *kout, int64_t n, cudaStream_t stream)
{
    const K *ki = (const K *)kin;
    K *ko = (K *)kout;
    int nn = (int)n;
    size_t need = 0;
    cudaError_t e = desc ? cub::DeviceRadixSort::SortKeysDescending((void *)NULL, need, ki, ko, nn,
                                                                    0, (int)(8 * sizeof(K)),
                                                                    stream)
                         : cub::DeviceRadixSort::SortKeys((void *)NULL, need, ki, ko, nn, 0,
                                                          (int)(8 * sizeof(K)), stream);
    if (e != cudaSuccess)
        return e;
    if (d_temp == NULL) {
        *temp_bytes = need;
        return cudaSuccess;
    }
    if (*temp_bytes < need || (n > 0 && (!ki || !ko)))
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    e = desc ? cub::DeviceRadixSort::SortKeysDescending(d_temp, need, ki, ko, nn, 0,
                                                        (int)(8 * sizeof(K)), stream)
             : cub::DeviceRadixSort::SortKeys(d_temp, need, ki, ko, nn, 0, (int)(8 * sizeof(K)),
                                              stream);
    return e != cudaSuccess ? e : cudaGetLastError();
}

template <typename K>
static cudaError_t sort_any(void *d_temp, size_t *temp_bytes, int desc, const void *kin,
                            void *kout, const void *vin, void *vout, int val_bytes, int64_t n,
                            cudaStream_t stream)
{
    switch (val_bytes) {
    case 0: return sort_k<K>(d_temp, temp_bytes, desc, kin, kout, n, stream);
    case 4: return sort_kv<K, uint32_t>(d_temp, temp_bytes, desc, kin, kout, vin, vout, n, stream);
    default:
        return sort_kv<K, unsigned long long>(d_temp, temp_bytes, desc, kin, kout, vin, vout, n,
                                              stream);
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
