/* Launcher and kernel of the out-of-core sort's bucket gather (sluice_k/ooc_gather.h). */
#include "sluice_k/ooc_gather.h"

#include "../common/grid.cuh"
#include "../common/search.cuh"

namespace {

constexpr int THREADS = 256;
constexpr int ITEMS = 8; /* rows per thread: 8 loads in flight each, to hide the link's
                            latency (about a microsecond per read from host memory) */
/* Blocks at most: two per SM (264 on an H100 SXM) x 256 threads x 8 loads keep some
 * 2 MiB of reads in flight, far more than the link's bandwidth-delay product (~100 KiB),
 * while leaving most of the GPU to the sort of the other buffer set, which runs at the
 * same time. */
constexpr int BLOCKS_PER_SM = 2;

template <typename T>
__device__ void copy_col(const void *const *src, int n_cols, int c, const int64_t *j,
                         const int64_t *row, int64_t i0, int64_t rows, void *dst)
{
    T v[ITEMS];
#pragma unroll
    for (int u = 0; u < ITEMS; u++) /* every load first, then the stores */
        if (i0 + u * THREADS < rows)
            v[u] = ((const T *)src[j[u] * n_cols + c])[row[u]];
#pragma unroll
    for (int u = 0; u < ITEMS; u++)
        if (i0 + u * THREADS < rows)
            ((T *)dst)[i0 + u * THREADS] = v[u];
}

/* Tile x (THREADS * ITEMS rows; block b takes tiles b, b + gridDim.x, ...): thread t
 * moves rows x * THREADS * ITEMS + u * THREADS + t, so each warp reads 32 consecutive
 * rows of one slice (whole lines over the link). */
__global__ void bucket_gather_kernel(const void *const *src, const int64_t *lo,
                                     const int64_t *at, int64_t k, int64_t rows,
                                     sl_k_ooc_gather_dst w)
{
    for (int64_t x = blockIdx.x; x * THREADS * ITEMS < rows; x += gridDim.x) {
        int64_t i0 = x * THREADS * ITEMS + threadIdx.x;
        int64_t j[ITEMS], row[ITEMS];
#pragma unroll
        for (int u = 0; u < ITEMS; u++) {
            int64_t i = i0 + u * THREADS;
            /* the slice holding row i (empty slices share the next one's start) */
            j[u] = i < rows ? sl_search::last_at_or_below(at, k, i) : 0;
            row[u] = i < rows ? lo[j[u]] + (i - at[j[u]]) : 0;
        }
        for (int c = 0; c < w.n_cols; c++) {
            if (w.width[c] == 8)
                copy_col<unsigned long long>(src, w.n_cols, c, j, row, i0, rows, w.col[c]);
            else
                copy_col<unsigned int>(src, w.n_cols, c, j, row, i0, rows, w.col[c]);
        }
    }
}

} // namespace

extern "C" cudaError_t sl_k_ooc_bucket_gather(const void *const *d_src, const int64_t *d_lo,
                                              const int64_t *d_at, int64_t k, int64_t rows,
                                              const struct sl_k_ooc_gather_dst *w,
                                              cudaStream_t stream)
{
    if (k < 1 || rows < 0 || rows >= ((int64_t)1 << 40) || !w || w->n_cols < 1 ||
        w->n_cols > SL_K_OOC_GATHER_MAX_COLS)
        return cudaErrorInvalidValue;
    for (int c = 0; c < w->n_cols; c++)
        if (w->width[c] != 4 && w->width[c] != 8)
            return cudaErrorInvalidValue;
    int64_t grid = (rows + THREADS * ITEMS - 1) / (THREADS * ITEMS);
    if (grid > 0)
        bucket_gather_kernel<<<(unsigned)sl_grid::capped(grid, BLOCKS_PER_SM), THREADS, 0,
                               stream>>>(d_src, d_lo, d_at, k, rows,
                                                                     *w);
    return cudaGetLastError();
}
