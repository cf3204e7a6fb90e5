/* Launchers of the two-run merge (co-ranks by binary search) and its order check.
 * Contract in sluice_k/merge.h. */
#include "sluice_k/merge.h"

namespace {

template <typename K>
__global__ void check_kernel(const K *keys, int desc, int64_t n0, int64_t n,
                             unsigned long long *bad)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        if (i == 0 || i == n0)
            continue; /* the first row of a run */
        K p = keys[i - 1], c = keys[i];
        if (desc ? c > p : c < p)
            atomicMin(bad, (unsigned long long)i);
    }
}

/* Rows of run[0, m) that come before x: strictly (or_equal = 0) or also when equal. */
template <typename K>
__device__ int64_t rank_in(const K *run, int64_t m, K x, int desc, int or_equal)
{
    int64_t lo = 0, hi = m;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        K y = run[mid];
        bool before = desc ? (y > x || (or_equal && y == x)) : (y < x || (or_equal && y == x));
        if (before)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

template <typename K>
__global__ void merge_kernel(const K *keys, int desc, int64_t n0, int64_t n1, uint32_t *out)
{
    int64_t n = n0 + n1;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        K x = keys[i];
        int64_t pos = i < n0 ? i + rank_in(keys + n0, n1, x, desc, 0)
                             : (i - n0) + rank_in(keys, n0, x, desc, 1);
        out[pos] = (uint32_t)i;
    }
}

unsigned blocks_for(int64_t n)
{
    int64_t b = (n + 255) / 256;
    return (unsigned)(b < 65536 ? b : 65536);
}

} // namespace

extern "C" cudaError_t sl_k_merge_check(const void *d_keys, int key_bytes, int desc, int64_t n0,
                                        int64_t n1, unsigned long long *d_bad,
                                        cudaStream_t stream)
{
    int64_t n = n0 + n1;
    if (n0 < 0 || n1 < 0 || (key_bytes != 4 && key_bytes != 8) || !d_bad || (n > 0 && !d_keys))
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    if (key_bytes == 4)
        check_kernel<int32_t><<<blocks_for(n), 256, 0, stream>>>((const int32_t *)d_keys, desc,
                                                                 n0, n, d_bad);
    else
        check_kernel<long long><<<blocks_for(n), 256, 0, stream>>>((const long long *)d_keys,
                                                                   desc, n0, n, d_bad);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_merge_ids(const void *d_keys, int key_bytes, int desc, int64_t n0,
                                      int64_t n1, uint32_t *d_ids_out, cudaStream_t stream)
{
    int64_t n = n0 + n1;
    if (n0 < 0 || n1 < 0 || n >= ((int64_t)1 << 32) || (key_bytes != 4 && key_bytes != 8) ||
        (n > 0 && (!d_keys || !d_ids_out)))
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    if (key_bytes == 4)
        merge_kernel<int32_t><<<blocks_for(n), 256, 0, stream>>>((const int32_t *)d_keys, desc,
                                                                 n0, n1, d_ids_out);
    else
        merge_kernel<long long><<<blocks_for(n), 256, 0, stream>>>((const long long *)d_keys,
                                                                   desc, n0, n1, d_ids_out);
    return cudaGetLastError();
}
