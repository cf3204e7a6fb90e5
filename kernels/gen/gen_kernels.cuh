/* The generators' kernels: one thread per row (grid-stride), every value from the shared
 * per-row functions of sluice_k/gen_math.h. Validity words come from a warp ballot: a
 * warp's 32 lanes are 32 consecutive rows starting at a multiple of 32, so the ballot of
 * "not NULL" is exactly the word of the bitmap (rows past n vote 1). */
#ifndef SLUICE_K_GEN_KERNELS_CUH
#define SLUICE_K_GEN_KERNELS_CUH

#include "sluice_k/gen.h"

namespace sl_gen {

constexpr int kThreads = 256;

/* Rows up to n rounded up to whole warps, so every lane of a warp runs each iteration. */
__device__ inline int64_t warp_rows(int64_t n)
{
    return (n + 31) & ~(int64_t)31;
}

__device__ inline void put_valid(uint32_t *valid, int64_t i, bool ok)
{
    unsigned w = __ballot_sync(0xffffffffu, ok);
    if ((threadIdx.x & 31) == 0)
        valid[i >> 5] = w;
}

template <typename K>
__global__ void keys_kernel(const sl__gen_keys k, int64_t first, int64_t n, K *__restrict__ out,
                            uint32_t *__restrict__ valid)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < warp_rows(n);
         i += (int64_t)gridDim.x * blockDim.x) {
        bool ok = true;
        if (i < n)
            out[i] = (K)sl__gen_keys_at(&k, (uint64_t)(first + i), &ok);
        if (valid)
            put_valid(valid, i, ok);
    }
}

/* int32 payloads keep the low 32 bits; the others convert (round to nearest). */
template <typename T>
__device__ inline T payload_value(int64_t v)
{
    return (T)v;
}
template <>
__device__ inline int32_t payload_value<int32_t>(int64_t v)
{
    return (int32_t)(uint32_t)(uint64_t)v;
}

template <typename T>
__global__ void payload_kernel(int j, int64_t first, int64_t n, T *__restrict__ out)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        out[i] = payload_value<T>(sl__gen_payload(first + i, j));
}

template <typename T>
__device__ inline T uni_value(const sl__gen_uni &u, uint64_t h);
template <>
__device__ inline int32_t uni_value<int32_t>(const sl__gen_uni &u, uint64_t h)
{
    return (int32_t)sl__gen_uni_int(&u, h);
}
template <>
__device__ inline int64_t uni_value<int64_t>(const sl__gen_uni &u, uint64_t h)
{
    return sl__gen_uni_int(&u, h);
}
template <>
__device__ inline float uni_value<float>(const sl__gen_uni &u, uint64_t h)
{
    return sl__gen_uni_f32(&u, h);
}
template <>
__device__ inline double uni_value<double>(const sl__gen_uni &u, uint64_t h)
{
    return sl__gen_uni_f64(&u, h);
}

template <typename T>
__global__ void uniform_kernel(const sl__gen_uni u, int64_t first, int64_t n,
                               T *__restrict__ out, uint32_t *__restrict__ valid)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < warp_rows(n);
         i += (int64_t)gridDim.x * blockDim.x) {
        uint64_t row = (uint64_t)(first + i);
        bool ok = !sl__gen_is_null(u.seed, u.null_rate, row);
        if (i < n)
            out[i] = ok ? uni_value<T>(u, sl__gen_hash(u.seed, SL__GEN_S_VALUE, row)) : T(0);
        if (valid)
            put_valid(valid, i, ok);
    }
}

template <typename T>
__global__ void sequence_kernel(int64_t start, int64_t step, int64_t first, int64_t n,
                                T *__restrict__ out)
{
    /* In wrapping uint64 arithmetic: exact whenever the value fits, as bind checked. */
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        out[i] = (T)(int64_t)((uint64_t)start + (uint64_t)(first + i) * (uint64_t)step);
}

struct blob_cols {
    float *p[SL_K_GEN_BLOBS_COLS];
};

__global__ void blobs_kernel(uint64_t seed, int64_t k, int dims, double spread, int64_t first,
                             int64_t n, int j0, int nd, const blob_cols cols,
                             int32_t *__restrict__ label)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint64_t row = (uint64_t)(first + i);
        int64_t c = sl__gen_blob_class(seed, k, row);
        for (int jj = 0; jj < nd; jj++) {
            int j = j0 + jj;
            double ctr = sl__gen_centre(seed, c, dims, j);
            cols.p[jj][i] = (float)sl__gen_blob_coord(seed, dims, spread, ctr, row, j);
        }
        if (label)
            label[i] = (int32_t)c;
    }
}

} // namespace sl_gen

#endif /* SLUICE_K_GEN_KERNELS_CUH */
