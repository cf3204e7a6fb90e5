/* Launchers of sort.topk's GPU candidate selection (contracts in sluice_k/topk.h). */
#include "sluice_k/topk.h"

static int blocks_for(int64_t n)
{
    int64_t b = (n + 255) / 256;
    return (int)(b < 1 ? 1 : b > 65536 ? 65536 : b);
}

/* The signed-order code of a float's bits: negative floats have their magnitude bits
 * flipped, so that more negative means smaller. */
__device__ static int64_t float_code(double x)
{
    if (x != x)
        x = __longlong_as_double(0x7ff8000000000000ll); /* every NaN one, the largest */
    if (x == 0.0)
        x = 0.0;                                          /* -0.0 ties +0.0 */
    long long b = __double_as_longlong(x);
    return b < 0 ? (int64_t)(b ^ 0x7fffffffffffffffll) : (int64_t)b;
}

__device__ static int64_t clamp_i128(const int64_t *w) /* little-endian: low word first */
{
    int64_t hi = w[1];
    uint64_t lo = (uint64_t)w[0];
    if (hi == 0 && lo <= (uint64_t)INT64_MAX)
        return (int64_t)lo;
    if (hi == -1 && lo >= (uint64_t)INT64_MIN)
        return (int64_t)lo;
    return hi < 0 ? INT64_MIN : INT64_MAX;
}

__global__ void topk_codes(const void *keys, int kind, const uint8_t *valid, int64_t valid_off,
                           int64_t null_code, int64_t n, int64_t *codes)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t bit = valid_off + i;
        if (valid && !((valid[bit >> 3] >> (bit & 7)) & 1)) {
            codes[i] = null_code;
            continue;
        }
        int64_t c;
        switch (kind) {
        case SL_K_TOPK_I32: c = ((const int32_t *)keys)[i]; break;
        case SL_K_TOPK_I64: c = ((const int64_t *)keys)[i]; break;
        case SL_K_TOPK_I128: c = clamp_i128((const int64_t *)keys + 2 * i); break;
        case SL_K_TOPK_F32: c = float_code(((const float *)keys)[i]); break;
        default: c = float_code(((const double *)keys)[i]); break;
        }
        codes[i] = c;
    }
}

/* Exactly one i in [k, n] is where the run of sorted[k - 1] ends. */
__global__ void topk_run_end(const int64_t *sorted, int64_t n, int64_t k, int64_t *m)
{
    int64_t last = sorted[k - 1];
    for (int64_t i = k + blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i <= n;
         i += (int64_t)gridDim.x * blockDim.x)
        if (sorted[i - 1] == last && (i == n || sorted[i] != last))
            *m = i;
}

template <typename T>
__global__ void topk_gather(const T *src, const uint32_t *ids, int64_t m, T *dst)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < m;
         i += (int64_t)gridDim.x * blockDim.x)
        dst[i] = src[ids[i]];
}

extern "C" cudaError_t sl_k_topk_codes(const void *d_keys, enum sl_k_topk_key kind,
                                       const uint8_t *d_valid, int64_t valid_off,
                                       int64_t null_code, int64_t n, int64_t *d_codes,
                                       cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    if (!d_keys || !d_codes || kind < SL_K_TOPK_I32 || kind > SL_K_TOPK_F64)
        return cudaErrorInvalidValue;
    topk_codes<<<blocks_for(n), 256, 0, stream>>>(d_keys, (int)kind, d_valid, valid_off,
                                                  null_code, n, d_codes);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_topk_run_end(const int64_t *d_sorted, int64_t n, int64_t k,
                                         int64_t *d_m, cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    if (!d_sorted || !d_m || k < 1 || k > n)
        return cudaErrorInvalidValue;
    topk_run_end<<<blocks_for(n - k + 1), 256, 0, stream>>>(d_sorted, n, k, d_m);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_topk_gather(const void *d_src, int width, const uint32_t *d_ids,
                                        int64_t m, void *d_dst, cudaStream_t stream)
{
    if (m <= 0)
        return cudaSuccess;
    if (!d_src || !d_ids || !d_dst)
        return cudaErrorInvalidValue;
    int g = blocks_for(m);
    switch (width) {
    case 1: topk_gather<<<g, 256, 0, stream>>>((const uint8_t *)d_src, d_ids, m, (uint8_t *)d_dst); break;
    case 2: topk_gather<<<g, 256, 0, stream>>>((const uint16_t *)d_src, d_ids, m, (uint16_t *)d_dst); break;
    case 4: topk_gather<<<g, 256, 0, stream>>>((const uint32_t *)d_src, d_ids, m, (uint32_t *)d_dst); break;
    case 8: topk_gather<<<g, 256, 0, stream>>>((const uint64_t *)d_src, d_ids, m, (uint64_t *)d_dst); break;
    case 16: topk_gather<<<g, 256, 0, stream>>>((const uint4 *)d_src, d_ids, m, (uint4 *)d_dst); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
