/* Launchers of the generators' kernels. Contracts in sluice_k/gen.h. */
#include "gen_kernels.cuh"
#include "../common/grid.cuh"

namespace {

using namespace sl_gen;

unsigned grid_for(int64_t n)
{
    int64_t b = (n + kThreads - 1) / kThreads;
    return (unsigned)sl_grid::capped(b, 32); /* grid-stride beyond ~32 blocks/SM */
}

} // namespace

extern "C" cudaError_t sl_k_gen_keys(const struct sl__gen_keys *k, int key64, int64_t first,
                                     int64_t n, void *d_keys, uint32_t *d_valid,
                                     cudaStream_t stream)
{
    if (k->zipf > 0 || n < 0)
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    unsigned g = grid_for(n);
    if (key64)
        keys_kernel<int64_t><<<g, kThreads, 0, stream>>>(*k, first, n, (int64_t *)d_keys, d_valid);
    else
        keys_kernel<int32_t><<<g, kThreads, 0, stream>>>(*k, first, n, (int32_t *)d_keys, d_valid);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_gen_payload(enum sl__gen_vtype type, int j, int64_t first, int64_t n,
                                        void *d_out, cudaStream_t stream)
{
    if (n < 0)
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    unsigned g = grid_for(n);
    switch (type) {
    case SL__GEN_I32: payload_kernel<<<g, kThreads, 0, stream>>>(j, first, n, (int32_t *)d_out); break;
    case SL__GEN_I64: payload_kernel<<<g, kThreads, 0, stream>>>(j, first, n, (int64_t *)d_out); break;
    case SL__GEN_F32: payload_kernel<<<g, kThreads, 0, stream>>>(j, first, n, (float *)d_out); break;
    case SL__GEN_F64: payload_kernel<<<g, kThreads, 0, stream>>>(j, first, n, (double *)d_out); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_gen_uniform(const struct sl__gen_uni *u, int64_t first, int64_t n,
                                        void *d_out, uint32_t *d_valid, cudaStream_t stream)
{
    if (n < 0 || (u->null_rate > 0 && !d_valid))
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    unsigned g = grid_for(n);
    switch (u->type) {
    case SL__GEN_I32:
        uniform_kernel<<<g, kThreads, 0, stream>>>(*u, first, n, (int32_t *)d_out, d_valid);
        break;
    case SL__GEN_I64:
        uniform_kernel<<<g, kThreads, 0, stream>>>(*u, first, n, (int64_t *)d_out, d_valid);
        break;
    case SL__GEN_F32:
        uniform_kernel<<<g, kThreads, 0, stream>>>(*u, first, n, (float *)d_out, d_valid);
        break;
    case SL__GEN_F64:
        uniform_kernel<<<g, kThreads, 0, stream>>>(*u, first, n, (double *)d_out, d_valid);
        break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_gen_sequence(int64_t start, int64_t step, int is64, int64_t first,
                                         int64_t n, void *d_out, cudaStream_t stream)
{
    if (n < 0)
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    unsigned g = grid_for(n);
    if (is64)
        sequence_kernel<<<g, kThreads, 0, stream>>>(start, step, first, n, (int64_t *)d_out);
    else
        sequence_kernel<<<g, kThreads, 0, stream>>>(start, step, first, n, (int32_t *)d_out);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_gen_blobs_f32(uint64_t seed, int64_t k, int dims, double spread,
                                          int64_t first, int64_t n, int j0, int nd,
                                          float *const *d_cols, int32_t *d_label,
                                          cudaStream_t stream)
{
    if (n < 0 || k < 1 || nd < 0 || nd > SL_K_GEN_BLOBS_COLS || j0 < 0 || j0 + nd > dims)
        return cudaErrorInvalidValue;
    if (n == 0 || (nd == 0 && !d_label))
        return cudaSuccess;
    blob_cols cols = {};
    for (int j = 0; j < nd; j++)
        cols.p[j] = d_cols[j];
    blobs_kernel<<<grid_for(n), kThreads, 0, stream>>>(seed, k, dims, spread, first, n, j0, nd,
                                                       cols, d_label);
    return cudaGetLastError();
}
