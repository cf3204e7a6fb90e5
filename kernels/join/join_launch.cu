/* Launchers of the partitioned hash join: the only place with <<< >>> for join.
 * Contracts in sluice_k/join.h. */
#include "sluice_k/join.h"

#include <cub/device/device_scan.cuh>

#include "join_kernels.cuh"

using namespace sluice_k::join;

static size_t align_up(size_t x)
{
    return (x + 255) & ~(size_t)255;
}

template <typename K, typename V, bool MAT, bool SX = false>
static cudaError_t phj(void *d_temp, size_t *temp_bytes, const K *r_keys, const V *r_vals,
                       const int64_t *r_off, const K *s_keys, const V *s_vals,
                       const int64_t *s_off, int bits, int part_shift, K *out_k, V *out_r,
                       V *out_s, int64_t cap, unsigned long long *count, cudaStream_t stream)
{
    if (temp_bytes == NULL || bits < 1 || bits > 16 || part_shift < bits ||
        part_shift > (int)(8 * sizeof(K)) || cap < 0)
        return cudaErrorInvalidValue;
    const int64_t parts = (int64_t)1 << bits;
    size_t scan_bytes = 0;
    cudaError_t e = cub::DeviceScan::ExclusiveSum((void *)NULL, scan_bytes, (int64_t *)NULL,
                                                  (int64_t *)NULL, parts + 1, stream);
    if (e != cudaSuccess)
        return e;
    const size_t u_bytes = align_up((size_t)(parts + 1) * sizeof(int64_t));
    const size_t need = u_bytes + align_up(scan_bytes) + 256;
    if (d_temp == NULL) {
        *temp_bytes = need;
        return cudaSuccess;
    }
    if (*temp_bytes < need || count == NULL || r_off == NULL || s_off == NULL ||
        (MAT && cap > 0 && (out_k == NULL || out_r == NULL || out_s == NULL)))
        return cudaErrorInvalidValue;
    char *p = (char *)d_temp;
    int64_t *units = (int64_t *)p;
    void *scan_tmp = p + u_bytes;
    unsigned long long *work = (unsigned long long *)(p + u_bytes + align_up(scan_bytes));

    if ((e = cudaMemsetAsync(work, 0, sizeof *work, stream)) != cudaSuccess)
        return e;
    if ((e = cudaMemsetAsync(count, 0, (MAT ? 1 : 4) * sizeof *count, stream)) != cudaSuccess)
        return e;
    units_kernel<<<(unsigned)((parts + 1 + 255) / 256), 256, 0, stream>>>(r_off, s_off, parts,
                                                                         units);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    size_t sb = scan_bytes;
    if ((e = cub::DeviceScan::ExclusiveSum(scan_tmp, sb, units, units, parts + 1, stream)) !=
        cudaSuccess)
        return e;

    const size_t smem = smem_bytes<K, V>();
    auto kern = join_kernel<K, V, MAT, SX>;
    if ((e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)smem)) != cudaSuccess)
        return e;
    int dev = 0, sms = 0, per_sm = 0;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
        (e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, Tune<K, V>::kThreads,
                                                           smem)) !=
            cudaSuccess)
        return e;
    if (per_sm < 1)
        return cudaErrorInvalidConfiguration;
    kern<<<(unsigned)(sms * per_sm), Tune<K, V>::kThreads, smem, stream>>>(
        r_keys, r_vals, r_off, s_keys, s_vals, s_off, parts, part_shift, units, work, out_k,
        out_r, out_s, cap, count);
    return cudaGetLastError();
}

#define SL_K_JOIN_DEF(SUF, KT, VT)                                                         \
    extern "C" cudaError_t sl_k_phj_materialize_##SUF(                                    \
        void *d_temp, size_t *temp_bytes, const KT *d_r_keys, const VT *d_r_vals,         \
        const int64_t *d_r_offsets, const KT *d_s_keys, const VT *d_s_vals,               \
        const int64_t *d_s_offsets, int bits, int part_shift, KT *d_out_keys,             \
        VT *d_out_r_vals, VT *d_out_s_vals, int64_t out_capacity,                         \
        unsigned long long *d_count, cudaStream_t stream)                                 \
    {                                                                                     \
        return phj<KT, VT, true>(d_temp, temp_bytes, d_r_keys, d_r_vals, d_r_offsets,     \
                                 d_s_keys, d_s_vals, d_s_offsets, bits, part_shift,       \
                                 d_out_keys, d_out_r_vals, d_out_s_vals, out_capacity,    \
                                 d_count, stream);                                        \
    }                                                                                     \
    extern "C" cudaError_t sl_k_phj_count_sum_##SUF(                                      \
        void *d_temp, size_t *temp_bytes, const KT *d_r_keys, const VT *d_r_vals,         \
        const int64_t *d_r_offsets, const KT *d_s_keys, const VT *d_s_vals,               \
        const int64_t *d_s_offsets, int bits, int part_shift,                             \
        unsigned long long *d_result, cudaStream_t stream)                                \
    {                                                                                     \
        return phj<KT, VT, false>(d_temp, temp_bytes, d_r_keys, d_r_vals, d_r_offsets,    \
                                  d_s_keys, d_s_vals, d_s_offsets, bits, part_shift,      \
                                  (KT *)NULL, (VT *)NULL, (VT *)NULL, 0, d_result,        \
                                  stream);                                                \
    }                                                                                     \
    extern "C" cudaError_t sl_k_phj_count_sum_sx_##SUF(                                   \
        void *d_temp, size_t *temp_bytes, const KT *d_r_keys, const VT *d_r_vals,         \
        const int64_t *d_r_offsets, const KT *d_s_keys, const VT *d_s_vals,               \
        const int64_t *d_s_offsets, int bits, int part_shift,                             \
        unsigned long long *d_result, cudaStream_t stream)                                \
    {                                                                                     \
        return phj<KT, VT, false, true>(d_temp, temp_bytes, d_r_keys, d_r_vals,           \
                                        d_r_offsets, d_s_keys, d_s_vals, d_s_offsets,     \
                                        bits, part_shift, (KT *)NULL, (VT *)NULL,         \
                                        (VT *)NULL, 0, d_result, stream);                 \
    }

SL_K_JOIN_DEF(k32_v32, uint32_t, uint32_t)
SL_K_JOIN_DEF(k32_v64, uint32_t, uint64_t)
SL_K_JOIN_DEF(k64_v32, uint64_t, uint32_t)
SL_K_JOIN_DEF(k64_v64, uint64_t, uint64_t)
