/* The GPU filter and project: one thread per row runs the expression program (the
 * interpreter of sluice_k/expr_prog.h, the same code the host test runs; an OR of ANDs of
 * simple tests, sluice_k/expr_conj.h, and integer/decimal arithmetic, sluice_k/expr_arith.h,
 * by their own loops), grid-stride;
 * validity words are built by warp ballots. Contracts in sluice_k/expr.h. */
#include "sluice_k/expr.h"

#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "../common/grid.cuh"

namespace {

constexpr int kThreads = 256;

unsigned grid_for(int64_t n)
{
    int64_t b = (n + kThreads - 1) / kThreads;
    return (unsigned)sl_grid::capped(b, 8);
}

__device__ void report(sl_k_expr_err *err, int code, int ins, int64_t r)
{
    if (atomicCAS(&err->code, 0, code) == 0) {
        err->ins = ins;
        err->row = r;
    }
}

__global__ void flags_kernel(const __grid_constant__ sl_xp_prog prog,
                             const __grid_constant__ sl_xp_cols cols,
                             const uint8_t *__restrict__ tables, int64_t n,
                             uint8_t *__restrict__ flags, sl_k_expr_err *err)
{
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < n;
         r += (int64_t)gridDim.x * blockDim.x) {
        sl_xp_val v;
        int null = 0, bad = 0;
        int rc = sl__xp_eval_row(&prog, &cols, tables, r, &v, &null, &bad);
        if (rc != SL_XP_OK)
            report(err, rc, bad, r);
        flags[r] = rc == SL_XP_OK && !null && v.i != 0;
    }
}

/* The filter's flags for a predicate that is an OR of ANDs of simple tests (expr_conj.h). */
__global__ void conj_flags_kernel(const __grid_constant__ sl_xj_conj conj,
                                  const __grid_constant__ sl_xp_cols cols,
                                  const uint8_t *__restrict__ tables, int64_t n,
                                  uint8_t *__restrict__ flags)
{
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < n;
         r += (int64_t)gridDim.x * blockDim.x)
        flags[r] = (uint8_t)sl__xj_row(&conj, &cols, tables, r);
}

__device__ void store_value(void *out, int store, int64_t r, sl_xp_val v, int null)
{
    if (null)
        v.d = 0;
    switch (store) {
    case SL_XS_I8: case SL_XS_U8: case SL_XS_BOOL: ((int8_t *)out)[r] = (int8_t)v.i; break;
    case SL_XS_I16: case SL_XS_U16: ((int16_t *)out)[r] = (int16_t)v.i; break;
    case SL_XS_I32: case SL_XS_U32: ((int32_t *)out)[r] = (int32_t)v.i; break;
    case SL_XS_F32: ((float *)out)[r] = null ? 0.0f : (float)v.f; break;
    case SL_XS_F64: ((double *)out)[r] = null ? 0.0 : v.f; break;
    case SL_XS_U64: ((uint64_t *)out)[r] = (uint64_t)v.d; break;
    case SL_XS_D64: ((int64_t *)out)[r] = (int64_t)v.d; break;
    case SL_XS_D128: ((__int128 *)out)[r] = v.d; break;
    default: ((int64_t *)out)[r] = v.i; break;
    }
}

/* Rows are walked in whole warps (r rounded up to 32) so that a ballot makes each word.
 * ARITH: the program is integer/decimal arithmetic (expr_arith.h), run with its stack in
 * registers. */
template <bool ARITH>
__global__ void project_kernel(const __grid_constant__ sl_xp_prog prog,
                               const __grid_constant__ sl_xp_cols cols,
                               const uint8_t *__restrict__ tables, int64_t n, int store,
                               void *out, uint32_t *valid, sl_k_expr_err *err)
{
    int64_t n32 = (n + 31) & ~(int64_t)31;
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < n32;
         r += (int64_t)gridDim.x * blockDim.x) {
        int ok = 0;
        if (r < n) {
            sl_xp_val v;
            int null = 0, bad = 0;
            int rc = ARITH ? sl__xa_eval_row(&prog, &cols, r, &v, &null, &bad)
                           : sl__xp_eval_row(&prog, &cols, tables, r, &v, &null, &bad);
            if (rc != SL_XP_OK)
                report(err, rc, bad, r);
            store_value(out, store, r, v, null || rc != SL_XP_OK);
            ok = rc == SL_XP_OK && !null;
        }
        unsigned w = __ballot_sync(0xffffffffu, ok);
        if ((threadIdx.x & 31) == 0)
            valid[r >> 5] = w;
    }
}

__global__ void gather_valid_kernel(const uint8_t *__restrict__ in, int64_t voff,
                                    const uint32_t *__restrict__ idx, uint32_t *out, int64_t k)
{
    int64_t k32 = (k + 31) & ~(int64_t)31;
    for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < k32;
         j += (int64_t)gridDim.x * blockDim.x) {
        int bit = 0;
        if (j < k) {
            int64_t b = voff + idx[j];
            bit = (in[b >> 3] >> (b & 7)) & 1;
        }
        unsigned w = __ballot_sync(0xffffffffu, bit);
        if ((threadIdx.x & 31) == 0)
            out[j >> 5] = w;
    }
}

/* All columns of g at the same rows: each row's index is read once. */
__global__ void gather_cols_kernel(const __grid_constant__ sl_k_gather_cols g,
                                   const uint32_t *__restrict__ idx, int64_t k)
{
    for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < k;
         j += (int64_t)gridDim.x * blockDim.x) {
        uint32_t i = idx[j];
        for (int c = 0; c < g.n; c++) {
            switch (g.width[c]) {
            case 1: ((uint8_t *)g.dst[c])[j] = ((const uint8_t *)g.src[c])[i]; break;
            case 2: ((uint16_t *)g.dst[c])[j] = ((const uint16_t *)g.src[c])[i]; break;
            case 4: ((uint32_t *)g.dst[c])[j] = ((const uint32_t *)g.src[c])[i]; break;
            case 8: ((uint64_t *)g.dst[c])[j] = ((const uint64_t *)g.src[c])[i]; break;
            default: ((uint4 *)g.dst[c])[j] = ((const uint4 *)g.src[c])[i]; break;
            }
        }
    }
}

} // namespace

extern "C" cudaError_t sl_k_expr_flags(const struct sl_xp_prog *prog, const struct sl_xp_cols *cols,
                                       const uint8_t *d_tables, int64_t n, uint8_t *d_flags,
                                       struct sl_k_expr_err *d_err, cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    flags_kernel<<<grid_for(n), kThreads, 0, stream>>>(*prog, *cols, d_tables, n, d_flags, d_err);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_expr_conj_flags(const struct sl_xj_conj *conj,
                                            const struct sl_xp_cols *cols,
                                            const uint8_t *d_tables, int64_t n, uint8_t *d_flags,
                                            cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    conj_flags_kernel<<<grid_for(n), kThreads, 0, stream>>>(*conj, *cols, d_tables, n, d_flags);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_expr_select(void *d_temp, size_t *temp_bytes, const uint8_t *d_flags,
                                        uint32_t *d_idx, int32_t *d_count, int64_t n,
                                        cudaStream_t stream)
{
    thrust::counting_iterator<uint32_t> rows(0);
    cudaError_t e = cub::DeviceSelect::Flagged(d_temp, *temp_bytes, rows, d_flags, d_idx, d_count,
                                               (int)n, stream);
    if (e != cudaSuccess || !d_temp)
        return e;
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_expr_gather_valid(const uint8_t *d_valid, int64_t voff,
                                              const uint32_t *d_idx, uint32_t *d_out, int64_t k,
                                              cudaStream_t stream)
{
    if (k <= 0)
        return cudaSuccess;
    gather_valid_kernel<<<grid_for(k), kThreads, 0, stream>>>(d_valid, voff, d_idx, d_out, k);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_expr_gather_cols(const struct sl_k_gather_cols *g,
                                              const uint32_t *d_idx, int64_t k,
                                              cudaStream_t stream)
{
    if (g->n < 0 || g->n > SL_K_GATHER_COLS)
        return cudaErrorInvalidValue;
    for (int c = 0; c < g->n; c++)
        if (g->width[c] != 1 && g->width[c] != 2 && g->width[c] != 4 && g->width[c] != 8 &&
            g->width[c] != 16)
            return cudaErrorInvalidValue;
    if (k <= 0 || g->n == 0)
        return cudaSuccess;
    gather_cols_kernel<<<grid_for(k), kThreads, 0, stream>>>(*g, d_idx, k);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_expr_project(const struct sl_xp_prog *prog,
                                         const struct sl_xp_cols *cols, const uint8_t *d_tables,
                                         int64_t n, int store, void *d_out, uint32_t *d_valid,
                                         struct sl_k_expr_err *d_err, cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    if (sl__xa_fits(prog))
        project_kernel<true><<<grid_for(n), kThreads, 0, stream>>>(*prog, *cols, d_tables, n,
                                                                   store, d_out, d_valid, d_err);
    else
        project_kernel<false><<<grid_for(n), kThreads, 0, stream>>>(*prog, *cols, d_tables, n,
                                                                    store, d_out, d_valid, d_err);
    return cudaGetLastError();
}
