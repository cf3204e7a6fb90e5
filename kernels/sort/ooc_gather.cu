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
static_assert(SL_K_OOC_GATHER_ALIGN == 32, "a warp reads 32 rows of a slice at a time");
constexpr int64_t ALIGN = SL_K_OOC_GATHER_ALIGN;

template <typename T>
__device__ void copy_col(const void *const *src, int n_cols, int c, const int64_t *j,
                         const int64_t *row, const int64_t *out, const bool *ok, void *dst)
{
    T v[ITEMS];
#pragma unroll
    for (int u = 0; u < ITEMS; u++) /* every load first, then the stores */
        if (ok[u])
            v[u] = ((const T *)src[j[u] * n_cols + c])[row[u]];
#pragma unroll
    for (int u = 0; u < ITEMS; u++)
        if (ok[u])
            ((T *)dst)[out[u]] = v[u];
}

/* Virtual row x (tiles of THREADS * ITEMS; block b takes tiles b, b + gridDim.x, ...):
 * thread t takes x = tile * THREADS * ITEMS + u * THREADS + t. Slice j spans virtual rows
 * [vat[j], vat[j + 1]), its run rows from lo[j] rounded down to a multiple of ALIGN on:
 * each warp reads 32 consecutive rows that start a 128-byte line of the run (whole
 * aligned lines over the link: a line half in one request and half in the next halved
 * the reads' throughput); the rows outside the slice are not read. */
__global__ void bucket_gather_kernel(const void *const *src, const int64_t *lo,
                                     const int64_t *at, const int64_t *vat, int64_t k,
                                     int64_t vrows, sl_k_ooc_gather_dst w)
{
    for (int64_t x = blockIdx.x; x * THREADS * ITEMS < vrows; x += gridDim.x) {
        int64_t j[ITEMS], row[ITEMS], out[ITEMS];
        bool ok[ITEMS];
#pragma unroll
        for (int u = 0; u < ITEMS; u++) {
            int64_t i = x * THREADS * ITEMS + u * THREADS + threadIdx.x;
            j[u] = i < vrows ? sl_search::last_at_or_below(vat, k, i) : 0;
            int64_t l = lo[j[u]], n = at[j[u] + 1] - at[j[u]];
            row[u] = (l & ~(int64_t)(ALIGN - 1)) + (i - vat[j[u]]);
            out[u] = at[j[u]] + (row[u] - l);
            ok[u] = i < vrows && row[u] >= l && row[u] < l + n;
        }
        for (int c = 0; c < w.n_cols; c++) {
            if (w.width[c] == 8)
                copy_col<unsigned long long>(src, w.n_cols, c, j, row, out, ok, w.col[c]);
            else
                copy_col<unsigned int>(src, w.n_cols, c, j, row, out, ok, w.col[c]);
        }
    }
}

} // namespace

extern "C" cudaError_t sl_k_ooc_bucket_gather(const void *const *d_src, const int64_t *d_lo,
                                              const int64_t *d_at, const int64_t *d_vat,
                                              int64_t k, int64_t vrows,
                                              const struct sl_k_ooc_gather_dst *w,
                                              cudaStream_t stream)
{
    if (k < 1 || vrows < 0 || vrows >= ((int64_t)1 << 40) || !w || w->n_cols < 1 ||
        w->n_cols > SL_K_OOC_GATHER_MAX_COLS)
        return cudaErrorInvalidValue;
    for (int c = 0; c < w->n_cols; c++)
        if (w->width[c] != 4 && w->width[c] != 8)
            return cudaErrorInvalidValue;
    int64_t grid = (vrows + THREADS * ITEMS - 1) / (THREADS * ITEMS);
    if (grid > 0)
        bucket_gather_kernel<<<(unsigned)sl_grid::capped(grid, BLOCKS_PER_SM), THREADS, 0,
                               stream>>>(d_src, d_lo, d_at, d_vat, k, vrows, *w);
    return cudaGetLastError();
}
