/* Launcher and kernels of the out-of-core join's block append (sluice_k/join_ooc.h). */
#include "sluice_k/join_ooc.h"

#include "../common/search.cuh"

namespace {

/* plan[4p..4p+3] = {first block of the run (+1; 0 none), rows left in it, first new
 * block, run start offset}. */
__global__ void plan_kernel(const int64_t *off, int parts, int64_t block_rows,
                            int32_t *block_part, int64_t n_blocks, unsigned long long *next,
                            int64_t *cur, int64_t *fill, int64_t *plan, int32_t *status)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= parts)
        return;
    int64_t n = off[p + 1] - off[p];
    int64_t c = cur[p], f = fill[p];
    int64_t room = c ? block_rows - f : 0;
    int64_t extra = n > room ? (n - room + block_rows - 1) / block_rows : 0;
    int64_t b0 = extra ? (int64_t)atomicAdd(next, (unsigned long long)extra) : 0;
    plan[4 * p] = c;
    plan[4 * p + 1] = room;
    plan[4 * p + 2] = b0;
    plan[4 * p + 3] = off[p];
    if (b0 + extra > n_blocks) {
        atomicExch(status, -1);
        plan[4 * p + 2] = -1;
        return;
    }
    for (int64_t i = 0; i < extra; i++)
        block_part[b0 + i] = p;
    if (extra) {
        cur[p] = b0 + extra;
        fill[p] = n - room - (extra - 1) * block_rows;
    } else {
        fill[p] = f + n;
    }
}

template <typename K, typename V>
__global__ void scatter_kernel(const K *keys, const V *vals, int64_t n, const int64_t *off,
                               int parts, int64_t block_rows, void *const *block_ptr,
                               const int64_t *plan)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        /* The partition of row i: the last p with off[p] <= i. */
        const int64_t *pl = plan + 4 * sl_search::last_at_or_below(off, parts, i);
        if (pl[2] < 0)
            continue; /* out of blocks: reported by plan */
        int64_t j = i - pl[3], b, s;
        if (j < pl[1]) {
            b = pl[0] - 1;
            s = block_rows - pl[1] + j;
        } else {
            j -= pl[1];
            b = pl[2] + j / block_rows;
            s = j % block_rows;
        }
        char *base = (char *)block_ptr[b];
        ((K *)base)[s] = keys[i];
        ((V *)(base + block_rows * sizeof(K)))[s] = vals[i];
    }
}

template <typename K, typename V>
cudaError_t scatter(const void *k, const void *v, int64_t n, const int64_t *off, int parts,
                    int64_t block_rows, void *const *ptr, const int64_t *plan, cudaStream_t s)
{
    if (n <= 0)
        return cudaGetLastError();
    int64_t grid = (n + 255) / 256;
    if (grid > 4096)
        grid = 4096;
    scatter_kernel<K, V><<<(unsigned)grid, 256, 0, s>>>((const K *)k, (const V *)v, n, off, parts,
                                                         block_rows, ptr, plan);
    return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t sl_k_ooc_append(const void *d_keys, const void *d_vals, int64_t n,
                                       int kw, int vw, const int64_t *d_offsets, int bits,
                                       int64_t block_rows, void *const *d_block_ptr,
                                       int32_t *d_block_part, int64_t n_blocks,
                                       unsigned long long *d_next, int64_t *d_cur,
                                       int64_t *d_fill, int64_t *d_plan, int32_t *d_status,
                                       cudaStream_t stream)
{
    if (n < 0 || bits < 0 || bits > 16 || block_rows < 1 || (kw != 4 && kw != 8) ||
        (vw != 4 && vw != 8))
        return cudaErrorInvalidValue;
    int parts = 1 << bits;
    plan_kernel<<<(parts + 127) / 128, 128, 0, stream>>>(d_offsets, parts, block_rows,
                                                         d_block_part, n_blocks, d_next, d_cur,
                                                         d_fill, d_plan, d_status);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    if (kw == 4)
        return vw == 4 ? scatter<uint32_t, uint32_t>(d_keys, d_vals, n, d_offsets, parts,
                                                     block_rows, d_block_ptr, d_plan, stream)
                       : scatter<uint32_t, uint64_t>(d_keys, d_vals, n, d_offsets, parts,
                                                     block_rows, d_block_ptr, d_plan, stream);
    return vw == 4 ? scatter<uint64_t, uint32_t>(d_keys, d_vals, n, d_offsets, parts, block_rows,
                                                 d_block_ptr, d_plan, stream)
                   : scatter<uint64_t, uint64_t>(d_keys, d_vals, n, d_offsets, parts, block_rows,
                                                 d_block_ptr, d_plan, stream);
}

namespace {

/* One block per list entry: its rows' keys and values to their place in the output. */
__global__ void gather_kernel(const void *const *ptr, const int64_t *rows, const int64_t *at,
                              int64_t block_rows, int kw, int vw, uint32_t *dk, uint32_t *dv)
{
    int64_t b = blockIdx.x;
    const uint32_t *src = (const uint32_t *)ptr[b];
    int64_t n = rows[b], to = at[b];
    int kq = kw / 4, vq = vw / 4;
    for (int64_t i = threadIdx.x; i < n * kq; i += blockDim.x)
        dk[to * kq + i] = src[i];
    const uint32_t *sv = src + block_rows * kq;
    for (int64_t i = threadIdx.x; i < n * vq; i += blockDim.x)
        dv[to * vq + i] = sv[i];
}

} // namespace

extern "C" cudaError_t sl_k_ooc_gather(const void *const *d_ptr, const int64_t *d_rows,
                                       const int64_t *d_at, int64_t n, int64_t block_rows,
                                       int kw, int vw, void *d_keys, void *d_vals,
                                       cudaStream_t stream)
{
    if (n < 0 || n > 0x7fffffff || (kw != 4 && kw != 8) || (vw != 4 && vw != 8))
        return cudaErrorInvalidValue;
    if (n > 0)
        gather_kernel<<<(unsigned)n, 512, 0, stream>>>(d_ptr, d_rows, d_at, block_rows, kw, vw,
                                                       (uint32_t *)d_keys, (uint32_t *)d_vals);
    return cudaGetLastError();
}

namespace {

/* Piece blockIdx.y of the list: gridDim.x blocks share its words (4-byte words: every
 * piece starts at a multiple of 4 bytes), keys then values. */
__global__ void pieces_kernel(const sl_k_ooc_pieces p, int kq, int vq, uint32_t *dk,
                              uint32_t *dv)
{
    int i = blockIdx.y;
    int64_t n = p.rows[i], to = p.at[i];
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    int64_t t0 = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    const uint32_t *sk = (const uint32_t *)p.k[i], *sv = (const uint32_t *)p.v[i];
    for (int64_t w = t0; w < n * kq; w += step)
        dk[to * kq + w] = sk[w];
    for (int64_t w = t0; w < n * vq; w += step)
        dv[to * vq + w] = sv[w];
}

} // namespace

extern "C" cudaError_t sl_k_ooc_gather_pieces(const struct sl_k_ooc_pieces *p, int kw, int vw,
                                              void *d_keys, void *d_vals, cudaStream_t stream)
{
    if (!p || p->n < 0 || p->n > SL_K_OOC_PIECES || (kw != 4 && kw != 8) || (vw != 4 && vw != 8))
        return cudaErrorInvalidValue;
    int64_t most = 0;
    for (int i = 0; i < p->n; i++)
        most = p->rows[i] > most ? p->rows[i] : most;
    if (p->n > 0 && most > 0) {
        int64_t words = most * (kw > vw ? kw : vw) / 4;
        int64_t bx = (words + 4095) / 4096; /* some 16 words a thread */
        bx = bx < 1 ? 1 : bx > 64 ? 64 : bx;
        dim3 grid((unsigned)bx, (unsigned)p->n);
        pieces_kernel<<<grid, 256, 0, stream>>>(*p, kw / 4, vw / 4, (uint32_t *)d_keys,
                                                (uint32_t *)d_vals);
    }
    return cudaGetLastError();
}
