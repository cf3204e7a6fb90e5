/* The GPU filter and project: one thread per row runs the expression program (the
 * interpreter of sluice_k/expr_prog.h, the same code the host test runs; an OR of ANDs of
 * simple tests, sluice_k/expr_conj.h, by its own loop), grid-stride;
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

/* The filter's flags for a predicate that is an OR of ANDs of simple tests (expr_conj.h),
 * sl__xj_row's answer for every row, kConjRows rows a thread at a time: each test loads
 * the value of all of them (those still open) before comparing any, so that their loads
 * are in flight together; a block's rows are kConjRows runs of blockDim.x. */
constexpr int kConjRows = 4;

/* x[i] = the stored integer of row r[i] in column p of `store` (sl__xj_load), where on[i]. */
__device__ __forceinline__ void conj_load(const void *p, int store, const int64_t (&r)[kConjRows],
                                          const bool (&on)[kConjRows], int64_t (&x)[kConjRows])
{
#define SL__CONJ_LOAD(T)                                                                   \
    _Pragma("unroll") for (int i = 0; i < kConjRows; i++) x[i] =                           \
        on[i] ? (int64_t)((const T *)p)[r[i]] : 0;                                          \
    break
    switch (store) {
    case SL_XS_I8: SL__CONJ_LOAD(int8_t);
    case SL_XS_I16: SL__CONJ_LOAD(int16_t);
    case SL_XS_I32: SL__CONJ_LOAD(int32_t);
    case SL_XS_U8: case SL_XS_BOOL: SL__CONJ_LOAD(uint8_t);
    case SL_XS_U16: SL__CONJ_LOAD(uint16_t);
    case SL_XS_U32: SL__CONJ_LOAD(uint32_t);
    default: SL__CONJ_LOAD(int64_t); /* I64, D64 */
    }
#undef SL__CONJ_LOAD
}

__global__ void conj_flags_kernel(const __grid_constant__ sl_xj_conj conj,
                                  const __grid_constant__ sl_xp_cols cols,
                                  const uint8_t *__restrict__ tables, int64_t n,
                                  uint8_t *__restrict__ flags)
{
    const int64_t tile = (int64_t)kConjRows * blockDim.x;
    for (int64_t base = blockIdx.x * tile; base < n; base += (int64_t)gridDim.x * tile) {
        int64_t r[kConjRows], x[kConjRows], y[kConjRows];
        bool ok[kConjRows], pass[kConjRows];
#pragma unroll
        for (int i = 0; i < kConjRows; i++) {
            r[i] = base + (int64_t)i * blockDim.x + threadIdx.x;
            ok[i] = r[i] < n;
            pass[i] = false;
        }
        for (int k = 0; k < conj.n; k++) {
            const sl_xj_term *t = &conj.t[k];
            if (t->form == SL_XJ_DICT) {
                conj_load(cols.data[t->a], SL_XS_I32, r, ok, x);
#pragma unroll
                for (int i = 0; i < kConjRows; i++)
                    ok[i] = ok[i] && !sl__xp_null_at(&cols, t->a, r[i]) && tables[t->imm + x[i]];
            } else {
                conj_load(cols.data[t->a], t->sa, r, ok, x);
#pragma unroll
                for (int i = 0; i < kConjRows; i++)
                    y[i] = t->imm;
                if (t->form == SL_XJ_COLS)
                    conj_load(cols.data[t->b], t->sb, r, ok, y);
#pragma unroll
                for (int i = 0; i < kConjRows; i++)
                    ok[i] = ok[i] && !sl__xp_null_at(&cols, t->a, r[i]) &&
                            (t->form != SL_XJ_COLS || !sl__xp_null_at(&cols, t->b, r[i])) &&
                            sl__xp_cmp_holds(t->cmp, (x[i] > y[i]) - (x[i] < y[i]));
            }
            if (t->last) {
#pragma unroll
                for (int i = 0; i < kConjRows; i++) {
                    pass[i] = pass[i] || ok[i];
                    ok[i] = r[i] < n && !pass[i];
                }
            }
        }
#pragma unroll
        for (int i = 0; i < kConjRows; i++)
            if (r[i] < n)
                flags[r[i]] = pass[i];
    }
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
 * REG: the program runs in registers too (sluice_k/expr_reg.h): each row by sl__xr_row,
 * the interpreter only for the rows it is unsure of. */
template <bool REG>
__global__ void project_kernel(const __grid_constant__ sl_xr_prog reg,
                               const __grid_constant__ sl_xp_prog prog,
                               const __grid_constant__ sl_xp_cols cols,
                               const uint8_t *__restrict__ tables, int64_t n, int store,
                               void *out, uint32_t *valid, unsigned long long *nulls,
                               sl_k_expr_err *err)
{
    int64_t n32 = (n + 31) & ~(int64_t)31;
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < n32;
         r += (int64_t)gridDim.x * blockDim.x) {
        int ok = 0;
        if (r < n) {
            sl_xp_val v;
            int64_t x;
            int null = 0, bad = 0, rc = SL_XP_OK;
            if (REG && sl__xr_row(&reg, &cols, r, &x, &null) == SL_XR_OK)
                v.d = x;
            else
                rc = sl__xp_eval_row(&prog, &cols, tables, r, &v, &null, &bad);
            if (rc != SL_XP_OK)
                report(err, rc, bad, r);
            store_value(out, store, r, v, null || rc != SL_XP_OK);
            ok = rc == SL_XP_OK && !null;
        }
        unsigned w = __ballot_sync(0xffffffffu, ok);
        unsigned rows = __ballot_sync(0xffffffffu, r < n);
        if ((threadIdx.x & 31) == 0) {
            valid[r >> 5] = w;
            if (rows & ~w)
                atomicAdd(nulls, (unsigned long long)__popc(rows & ~w));
        }
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

/* All columns of g at the same rows, kGatherRows rows a thread at a time (a block's rows
 * are kGatherRows runs of blockDim.x): each row's index is read once, and a column's
 * values of all the rows are loaded before any is stored, so that their loads are in
 * flight together. */
constexpr int kGatherRows = 4;

template <typename T>
__device__ __forceinline__ void gather_rows(const void *src, void *dst,
                                            const int64_t (&j)[kGatherRows],
                                            const uint32_t (&i)[kGatherRows],
                                            const bool (&on)[kGatherRows])
{
    T v[kGatherRows];
#pragma unroll
    for (int r = 0; r < kGatherRows; r++)
        if (on[r])
            v[r] = ((const T *)src)[i[r]];
#pragma unroll
    for (int r = 0; r < kGatherRows; r++)
        if (on[r])
            ((T *)dst)[j[r]] = v[r];
}

__global__ void gather_cols_kernel(const __grid_constant__ sl_k_gather_cols g,
                                   const uint32_t *__restrict__ idx, int64_t k)
{
    const int64_t tile = (int64_t)kGatherRows * blockDim.x;
    for (int64_t base = blockIdx.x * tile; base < k; base += (int64_t)gridDim.x * tile) {
        int64_t j[kGatherRows];
        uint32_t i[kGatherRows];
        bool on[kGatherRows];
#pragma unroll
        for (int r = 0; r < kGatherRows; r++) {
            j[r] = base + (int64_t)r * blockDim.x + threadIdx.x;
            on[r] = j[r] < k;
            i[r] = on[r] ? idx[j[r]] : 0;
        }
        for (int c = 0; c < g.n; c++) {
            switch (g.width[c]) {
            case 1: gather_rows<uint8_t>(g.src[c], g.dst[c], j, i, on); break;
            case 2: gather_rows<uint16_t>(g.src[c], g.dst[c], j, i, on); break;
            case 4: gather_rows<uint32_t>(g.src[c], g.dst[c], j, i, on); break;
            case 8: gather_rows<uint64_t>(g.src[c], g.dst[c], j, i, on); break;
            default: gather_rows<uint4>(g.src[c], g.dst[c], j, i, on); break;
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
    conj_flags_kernel<<<grid_for((n + kConjRows - 1) / kConjRows), kThreads, 0, stream>>>(
        *conj, *cols, d_tables, n, d_flags);
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
    gather_cols_kernel<<<grid_for((k + kGatherRows - 1) / kGatherRows), kThreads, 0, stream>>>(
        *g, d_idx, k);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_expr_project(const struct sl_xp_prog *prog,
                                         const struct sl_xp_cols *cols, const uint8_t *d_tables,
                                         int64_t n, int store, void *d_out, uint32_t *d_valid,
                                         unsigned long long *d_nulls,
                                         struct sl_k_expr_err *d_err, cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    sl_xr_prog none;
    none.n = 0;
    project_kernel<false><<<grid_for(n), kThreads, 0, stream>>>(none, *prog, *cols, d_tables, n,
                                                                store, d_out, d_valid, d_nulls,
                                                                d_err);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_expr_project_reg(const struct sl_xr_prog *reg,
                                             const struct sl_xp_prog *prog,
                                             const struct sl_xp_cols *cols, int64_t n, int store,
                                             void *d_out, uint32_t *d_valid,
                                             unsigned long long *d_nulls,
                                             struct sl_k_expr_err *d_err, cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    project_kernel<true><<<grid_for(n), kThreads, 0, stream>>>(*reg, *prog, *cols, nullptr, n,
                                                               store, d_out, d_valid, d_nulls,
                                                               d_err);
    return cudaGetLastError();
}
