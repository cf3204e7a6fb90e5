/* Launcher of sl_k_lower_bounds_i64 (sluice_k/sort.h): where each splitter of a
 * multi-device sort cuts a device's sorted keys. m is small (devices - 1). */
#include "sluice_k/sort.h"

__global__ void lower_bounds_i64(const int64_t *keys, int64_t n, const int64_t *values, int m,
                                 int64_t *pos)
{
    int j = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (j >= m)
        return;
    int64_t v = values[j], lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    pos[j] = lo;
}

extern "C" cudaError_t sl_k_lower_bounds_i64(const int64_t *d_sorted, int64_t n,
                                             const int64_t *d_values, int m, int64_t *d_pos,
                                             cudaStream_t stream)
{
    if (m <= 0)
        return cudaSuccess;
    if (!d_values || !d_pos || (n > 0 && !d_sorted))
        return cudaErrorInvalidValue;
    lower_bounds_i64<<<(m + 127) / 128, 128, 0, stream>>>(d_sorted, n, d_values, m, d_pos);
    return cudaGetLastError();
}
