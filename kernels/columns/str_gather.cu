/* Strings gathered on the GPU: views, lengths, a scan and the bytes. Contracts in
 * sluice_k/str_gather.h. */
#include "sluice_k/str_gather.h"

#include <cub/device/device_scan.cuh>

namespace {

constexpr int kBlock = 256;

__host__ __device__ inline int64_t grid_for(int64_t n)
{
    int64_t g = (n + kBlock - 1) / kBlock;
    return g < 65535 * 32 ? g : 65535 * 32;
}

template <typename O>
__global__ void str_views(const O *off, const char *chars, int64_t n, sl_k_strview_t *out)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        O a = off[i], b = off[i + 1];
        sl_k_strview_t v;
        v.p = chars + a;
        v.len = (uint32_t)(b - a);
        v.pad = 0;
        out[i] = v;
    }
}

__global__ void gather_lengths(const sl_k_strview_t *views, const uint32_t *ids, int64_t n,
                               int64_t valid, int64_t *len)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i <= n;
         i += (int64_t)gridDim.x * blockDim.x)
        len[i] = i < valid && i < n ? (int64_t)views[ids[i]].len : 0;
}

template <typename O>
__global__ void gather_bytes(const sl_k_strview_t *views, const uint32_t *ids, const int64_t *pos,
                             int64_t n, int64_t valid, char *chars, O *off)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i <= n;
         i += (int64_t)gridDim.x * blockDim.x) {
        off[i] = (O)pos[i];
        if (i >= n || i >= valid)
            continue;
        sl_k_strview_t v = views[ids[i]];
        char *dst = chars + pos[i];
        for (uint32_t j = 0; j < v.len; j++)
            dst[j] = v.p[j];
    }
}

template <typename O>
cudaError_t views(const O *off, const char *chars, int64_t n, sl_k_strview_t *out,
                  cudaStream_t stream)
{
    if (n < 0 || (n > 0 && (off == NULL || out == NULL)))
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    str_views<<<(unsigned)grid_for(n), kBlock, 0, stream>>>(off, chars, n, out);
    return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t sl_k_str_views_o32(const int32_t *d_off, const char *d_chars, int64_t n,
                                          sl_k_strview_t *d_out, cudaStream_t stream)
{
    return views(d_off, d_chars, n, d_out, stream);
}

extern "C" cudaError_t sl_k_str_views_o64(const int64_t *d_off, const char *d_chars, int64_t n,
                                          sl_k_strview_t *d_out, cudaStream_t stream)
{
    return views(d_off, d_chars, n, d_out, stream);
}

extern "C" cudaError_t sl_k_str_gather_lengths(const sl_k_strview_t *d_views,
                                               const uint32_t *d_ids, int64_t n, int64_t valid,
                                               int64_t *d_len, cudaStream_t stream)
{
    if (n < 0 || d_len == NULL)
        return cudaErrorInvalidValue;
    gather_lengths<<<(unsigned)grid_for(n + 1), kBlock, 0, stream>>>(d_views, d_ids, n, valid,
                                                                    d_len);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_scan_i64(void *d_temp, size_t *temp_bytes, const int64_t *d_in,
                                     int64_t *d_out, int64_t n, cudaStream_t stream)
{
    if (temp_bytes == NULL || n < 0 || n > INT32_MAX)
        return cudaErrorInvalidValue;
    return cub::DeviceScan::ExclusiveSum(d_temp, *temp_bytes, d_in, d_out, (int)n, stream);
}

extern "C" cudaError_t sl_k_str_gather_bytes(const sl_k_strview_t *d_views, const uint32_t *d_ids,
                                             const int64_t *d_pos, int64_t n, int64_t valid,
                                             char *d_chars, void *d_off, int off_bytes,
                                             cudaStream_t stream)
{
    if (n < 0 || d_pos == NULL || d_off == NULL || (off_bytes != 4 && off_bytes != 8))
        return cudaErrorInvalidValue;
    unsigned grid = (unsigned)grid_for(n + 1);
    if (off_bytes == 4)
        gather_bytes<<<grid, kBlock, 0, stream>>>(d_views, d_ids, d_pos, n, valid, d_chars,
                                                  (int32_t *)d_off);
    else
        gather_bytes<<<grid, kBlock, 0, stream>>>(d_views, d_ids, d_pos, n, valid, d_chars,
                                                  (int64_t *)d_off);
    return cudaGetLastError();
}
