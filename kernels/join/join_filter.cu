/* Filters of a join side by the other side's keys: their range, or an exact bitmap of
 * them over that range. Contracts in sluice_k/join_filter.h. */
#include "sluice_k/join_filter.h"

#include <string.h>

#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/tabulate_output_iterator.h>

#include "../common/grid.cuh"
#include "sluice_k/rows.cuh"

namespace {

constexpr int kThreads = 256;

int64_t grid_for(int64_t n)
{
    int64_t g = (n + kThreads - 1) / kThreads;
    return sl_grid::capped(g, 16);
}

/* Key i lies in [kmin, kmin + range) and, with a bitmap, its bit is set. */
template <typename K> struct InRange {
    const K *keys;
    K kmin;
    uint64_t range;
    const uint32_t *bitmap;
    __device__ bool operator()(uint32_t i) const
    {
        const uint64_t d = (uint64_t)(K)(keys[i] - kmin);
        return d < range && (!bitmap || ((__ldg(bitmap + (d >> 5)) >> (d & 31)) & 1u));
    }
};

/* Sets bit d of the bitmap for every lane of the warp whose d < range (all 32 lanes call
 * it: warp collectives). Lanes whose bits share a word OR them and one of them sets them
 * with a non-returning atomic (hot keys of a skewed side would otherwise queue on one
 * word). */
__device__ __forceinline__ void bitmap_or_warp(uint32_t *bitmap, uint64_t d, uint64_t range,
                                               int lane)
{
    const bool set = d < range;
    const unsigned long long word = set ? d >> 5 : ~0ull;
    const unsigned peers = __match_any_sync(0xFFFFFFFFu, word);
    const unsigned bits = __reduce_or_sync(peers, set ? 1u << (d & 31) : 0u);
    if (set && lane == __ffs(peers) - 1)
        atomicOr(bitmap + word, bits);
}

/* Sets the bit of every key in range (bitmap_or_warp: non-returning atomics; a read of
 * the word first made every key wait for it): keys[0 .. n), or keys[0 .. *n_dev) when
 * n_dev is not NULL (a count on the device, at most n). */
template <typename K>
__global__ void bitmap_set(const K *__restrict__ keys, int64_t n, const uint32_t *n_dev, K kmin,
                           uint64_t range, uint32_t *bitmap)
{
    if (n_dev)
        n = *n_dev;
    const int lane = threadIdx.x & 31; /* blockDim.x is a multiple of 32 */
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    /* warp-uniform loop: every lane takes part in the warp's collectives */
    for (int64_t w0 = (int64_t)blockIdx.x * blockDim.x + (threadIdx.x & ~31); w0 < n;
         w0 += stride) {
        const int64_t i = w0 + lane;
        bitmap_or_warp(bitmap, i < n ? (uint64_t)(K)(keys[i] - kmin) : range, range, lane);
    }
}

template <typename K>
cudaError_t key_bitmap(const K *keys, int64_t n, K kmin, uint64_t range, uint32_t *bitmap,
                       cudaStream_t stream)
{
    if (n < 0 || range == 0 || range > ((uint64_t)1 << 40) ||
        (n > 0 && (keys == NULL || bitmap == NULL)))
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    bitmap_set<K><<<(unsigned)grid_for(n), kThreads, 0, stream>>>(keys, n, NULL, kmin, range,
                                                                 bitmap);
    return cudaGetLastError();
}

template <int W>
__global__ void gather_words(const uint32_t *__restrict__ src, const uint32_t *__restrict__ idx,
                             int64_t n, uint32_t *__restrict__ dst)
{
    for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < n;
         j += (int64_t)gridDim.x * blockDim.x) {
        const uint32_t *s = src + (size_t)idx[j] * W;
#pragma unroll
        for (int w = 0; w < W; w++)
            dst[(size_t)j * W + w] = s[w];
    }
}

template <typename K>
cudaError_t select_in_range(void *d_temp, size_t *temp_bytes, const K *keys, int64_t n, K kmin,
                            uint64_t range, const uint32_t *bitmap, uint32_t *idx,
                            int64_t *count, cudaStream_t stream)
{
    if (temp_bytes == NULL || n < 0 || n >= ((int64_t)1 << 32))
        return cudaErrorInvalidValue;
    if (d_temp != NULL && (count == NULL || (n > 0 && (keys == NULL || idx == NULL))))
        return cudaErrorInvalidValue;
    InRange<K> pred{keys, kmin, range, bitmap};
    if (n == 0 && d_temp != NULL) /* nothing to select: the count is still set */
        return cudaMemsetAsync(count, 0, sizeof *count, stream);
    return cub::DeviceSelect::If(d_temp, *temp_bytes, thrust::counting_iterator<uint32_t>(0), idx,
                                 count, n, pred, stream);
}

/* Where a selected row goes: output j of the selection (CUB's output position) is row
 * i's key and its row packed from the columns. Writing through this output iterator
 * fuses the select, the key gather and the packing into CUB's one pass (its decoupled
 * look-back keeps the rows in order); the row's words are read from the columns while
 * its tile of keys was just read. */
template <typename K, int NW> struct PackOut {
    const K *keys;
    K *keys_out;
    void *rows_out;
    int64_t cap; /* rows the outputs hold */
    sl_k_cols_t cols;
    __device__ void operator()(ptrdiff_t j, uint32_t i) const
    {
        if (j >= cap)
            return;
        keys_out[j] = keys[i];
        if constexpr (NW > 0)
            ((typename sluice_k::rows::RowT<NW>::T *)rows_out)[j] =
                sluice_k::rows::pack_row<NW>(cols, (int64_t)i);
    }
};

template <typename K, int NW>
cudaError_t select_pack_nw(void *d_temp, size_t *temp_bytes, const K *keys, int64_t n, K kmin,
                           uint64_t range, const uint32_t *bitmap, const sl_k_cols_t &cols,
                           K *keys_out, void *rows_out, int64_t cap, int64_t *count,
                           cudaStream_t stream)
{
    InRange<K> pred{keys, kmin, range, bitmap};
    auto out =
        thrust::make_tabulate_output_iterator(PackOut<K, NW>{keys, keys_out, rows_out, cap, cols});
    return cub::DeviceSelect::If(d_temp, *temp_bytes, thrust::counting_iterator<uint32_t>(0), out,
                                 count, n, pred, stream);
}

/* The columns pack rows of row_bytes (4..16, a multiple of 4) or row_bytes is 0 (keys
 * only): at most 4 columns of 4 or 8 bytes, pointers set except 4-byte row numbers. */
bool pack_cols_fit(const sl_k_cols_t *c, int row_bytes)
{
    if (row_bytes == 0)
        return true;
    if (c == NULL || row_bytes < 4 || row_bytes > 16 || (row_bytes & 3) || c->n < 1 || c->n > 4)
        return false;
    int b = 0;
    for (int j = 0; j < c->n; j++) {
        if ((c->width[j] != 4 && c->width[j] != 8) || (c->ptr[j] == NULL && c->width[j] != 4))
            return false;
        b += c->width[j];
    }
    return b <= row_bytes;
}

template <typename K>
cudaError_t select_pack(void *d_temp, size_t *temp_bytes, const K *keys, int64_t n, K kmin,
                        uint64_t range, const uint32_t *bitmap, const sl_k_cols_t *cols,
                        int row_bytes, K *keys_out, void *rows_out, int64_t cap, int64_t *count,
                        cudaStream_t stream)
{
    if (temp_bytes == NULL || n < 0 || n >= ((int64_t)1 << 32) || cap < 0 ||
        !pack_cols_fit(cols, row_bytes))
        return cudaErrorInvalidValue;
    if (d_temp != NULL &&
        (count == NULL ||
         (n > 0 && (keys == NULL ||
                    (cap > 0 && (keys_out == NULL || (row_bytes && rows_out == NULL)))))))
        return cudaErrorInvalidValue;
    if (n == 0 && d_temp != NULL) /* nothing to select: the count is still set */
        return cudaMemsetAsync(count, 0, sizeof *count, stream);
    sl_k_cols_t c;
    memset(&c, 0, sizeof c);
    if (row_bytes)
        c = *cols;
#define SL_SELECT_PACK(NW)                                                                 \
    select_pack_nw<K, NW>(d_temp, temp_bytes, keys, n, kmin, range, bitmap, c, keys_out, \
                          rows_out, cap, count, stream)
    switch (row_bytes / 4) {
    case 0: return SL_SELECT_PACK(0);
    case 1: return SL_SELECT_PACK(1);
    case 2: return SL_SELECT_PACK(2);
    case 3: return SL_SELECT_PACK(3);
    default: return SL_SELECT_PACK(4);
    }
#undef SL_SELECT_PACK
}


/* ---- the two-pass select (sl_k_select_mask_*, sl_k_select_write_*) ----
 * A tile of kTileRows rows per block of kThreads: each warp takes kWarpWords words of
 * 32 rows. The mask pass reads the keys once, writes a bit per row (the rows kept) and
 * each tile's count; a scan of the counts gives each tile's first output; the write pass
 * reads the mask words and, for the kept rows only, the key and the row's columns, and
 * writes them packed at their output (in row order). Against CUB's select and separate
 * gathers: the keys are read once in full, the kept rows' columns once. */
constexpr int kWarps = kThreads / 32;
constexpr int kWarpWords = 16; /* 512 rows a warp */
constexpr int64_t kTileWords = (int64_t)kWarps * kWarpWords;
constexpr int64_t kTileRows = kTileWords * 32; /* 4,096 */

/* Where the selection's state lies in d_temp (the same layout for both passes, from n):
 * the mask ((n + 31) / 32 words), the tiles' counts and their exclusive sums (tiles + 1
 * each: the last sum is the total), then CUB's scan storage. */
struct SelLayout {
    int64_t words, tiles;
    size_t mask_at, counts_at, offs_at, scan_at, scan_bytes, total;
};

size_t align256(size_t x)
{
    return (x + 255) & ~(size_t)255;
}

cudaError_t sel_layout(int64_t n, SelLayout *l)
{
    l->words = (n + 31) / 32;
    l->tiles = (n + kTileRows - 1) / kTileRows;
    l->mask_at = 0;
    l->counts_at = align256((size_t)l->words * 4);
    l->offs_at = l->counts_at + align256((size_t)(l->tiles + 1) * 4);
    l->scan_at = l->offs_at + align256((size_t)(l->tiles + 1) * 4);
    l->scan_bytes = 0;
    cudaError_t e = cub::DeviceScan::ExclusiveSum(NULL, l->scan_bytes, (const uint32_t *)NULL,
                                                  (uint32_t *)NULL, (int)(l->tiles + 1));
    l->total = l->scan_at + align256(l->scan_bytes ? l->scan_bytes : 1);
    return e;
}

template <typename K>
__global__ void __launch_bounds__(kThreads)
    select_mask_kernel(const K *__restrict__ keys, int64_t n, K kmin, uint64_t range,
                       const uint32_t *__restrict__ bitmap, uint32_t *__restrict__ mask,
                       uint32_t *__restrict__ counts)
{
    __shared__ uint32_t warp_count[kWarps];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int64_t words = (n + 31) / 32;
    const int64_t w0 = (int64_t)blockIdx.x * kTileWords + (int64_t)warp * kWarpWords;
    K k[kWarpWords];
#pragma unroll
    for (int j = 0; j < kWarpWords; j++) { /* all loads first: 16 in flight a lane */
        const int64_t i = (w0 + j) * 32 + lane;
        k[j] = i < n ? keys[i] : (K)0;
    }
    /* Then every bitmap word, unconditionally (word 0 for keys out of range), so that
     * the lane's 16 random reads of L2 are in flight together: with the read inside the
     * keep test each waited for the ballot before it. */
    uint32_t bw[kWarpWords];
#pragma unroll
    for (int j = 0; j < kWarpWords; j++) {
        const uint64_t d = (uint64_t)(K)(k[j] - kmin);
        bw[j] = bitmap ? __ldg(bitmap + (d < range ? d >> 5 : 0)) : ~0u;
    }
    uint32_t mine = 0, cnt = 0;
#pragma unroll
    for (int j = 0; j < kWarpWords; j++) {
        const int64_t i = (w0 + j) * 32 + lane;
        const uint64_t d = (uint64_t)(K)(k[j] - kmin);
        const bool keep = i < n && d < range && ((bw[j] >> (d & 31)) & 1u);
        const uint32_t b = __ballot_sync(0xFFFFFFFFu, keep);
        mine = lane == j ? b : mine;
        cnt += __popc(b);
    }
    if (lane < kWarpWords && w0 + lane < words)
        mask[w0 + lane] = mine; /* one coalesced store of the warp's words */
    if (lane == 0)
        warp_count[warp] = cnt;
    __syncthreads();
    if (threadIdx.x == 0) {
        uint32_t s = 0;
        for (int w = 0; w < kWarps; w++)
            s += warp_count[w];
        counts[blockIdx.x] = s;
    }
}

/* The last tile's exclusive sum (the rows selected) into the caller's int64 count. */
__global__ void select_total_kernel(const uint32_t *offs, int64_t tiles, int64_t *count)
{
    *count = (int64_t)offs[tiles];
}

template <typename K, int NW>
__global__ void __launch_bounds__(kThreads)
    select_write_kernel(const K *__restrict__ keys, int64_t n, const uint32_t *__restrict__ mask,
                        const uint32_t *__restrict__ offs, const sl_k_cols_t cols,
                        K *__restrict__ keys_out, void *__restrict__ rows_out)
{
    using Row = typename sluice_k::rows::RowT<NW>::T;
    __shared__ uint32_t warp_total[kWarps];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int64_t words = (n + 31) / 32;
    const int64_t w0 = (int64_t)blockIdx.x * kTileWords + (int64_t)warp * kWarpWords;
    /* lane j < kWarpWords holds word j of the warp and the kept rows before it */
    const uint32_t mw = lane < kWarpWords && w0 + lane < words ? mask[w0 + lane] : 0u;
    const uint32_t c = __popc(mw);
    uint32_t incl = c;
#pragma unroll
    for (int d = 1; d < kWarpWords; d <<= 1) {
        const uint32_t y = __shfl_up_sync(0xFFFFFFFFu, incl, d);
        incl += lane >= d ? y : 0u;
    }
    const uint32_t excl = incl - c;
    if (lane == kWarpWords - 1)
        warp_total[warp] = incl;
    __syncthreads();
    uint32_t base = offs[blockIdx.x];
    for (int w = 0; w < warp; w++)
        base += warp_total[w];
    const uint32_t below = (1u << lane) - 1u; /* the lanes before this one */
#pragma unroll 4
    for (int j = 0; j < kWarpWords; j++) {
        const uint32_t word = __shfl_sync(0xFFFFFFFFu, mw, j);
        if (word == 0) /* warp-uniform */
            continue;
        const uint32_t pre = __shfl_sync(0xFFFFFFFFu, excl, j);
        if ((word >> lane) & 1u) {
            const int64_t i = (w0 + j) * 32 + lane;
            const uint64_t pos = (uint64_t)base + pre + (uint32_t)__popc(word & below);
            keys_out[pos] = keys[i];
            if constexpr (NW > 0)
                ((Row *)rows_out)[pos] = sluice_k::rows::pack_row<NW>(cols, i);
        }
    }
}

template <typename K>
cudaError_t select_mask(void *d_temp, size_t *temp_bytes, const K *keys, int64_t n, K kmin,
                        uint64_t range, const uint32_t *bitmap, int64_t *count,
                        cudaStream_t stream)
{
    if (temp_bytes == NULL || n < 0 || n >= ((int64_t)1 << 32) ||
        (d_temp != NULL && (count == NULL || (n > 0 && keys == NULL))))
        return cudaErrorInvalidValue;
    SelLayout l;
    cudaError_t e = sel_layout(n, &l);
    if (e != cudaSuccess)
        return e;
    if (d_temp == NULL) {
        *temp_bytes = l.total;
        return cudaSuccess;
    }
    if (*temp_bytes < l.total)
        return cudaErrorInvalidValue;
    if (n == 0) /* nothing to select: the count is still set */
        return cudaMemsetAsync(count, 0, sizeof *count, stream);
    char *t = (char *)d_temp;
    uint32_t *counts = (uint32_t *)(t + l.counts_at), *offs = (uint32_t *)(t + l.offs_at);
    select_mask_kernel<K><<<(unsigned)l.tiles, kThreads, 0, stream>>>(
        keys, n, kmin, range, bitmap, (uint32_t *)(t + l.mask_at), counts);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    if ((e = cudaMemsetAsync(counts + l.tiles, 0, 4, stream)) != cudaSuccess)
        return e;
    size_t sb = l.scan_bytes;
    if ((e = cub::DeviceScan::ExclusiveSum(t + l.scan_at, sb, counts, offs, (int)(l.tiles + 1),
                                           stream)) != cudaSuccess)
        return e;
    select_total_kernel<<<1, 1, 0, stream>>>(offs, l.tiles, count);
    return cudaGetLastError();
}

template <typename K, int NW>
void select_write_nw(const SelLayout &l, const char *t, const K *keys, int64_t n,
                     const sl_k_cols_t &cols, K *keys_out, void *rows_out, cudaStream_t stream)
{
    select_write_kernel<K, NW><<<(unsigned)l.tiles, kThreads, 0, stream>>>(
        keys, n, (const uint32_t *)(t + l.mask_at), (const uint32_t *)(t + l.offs_at), cols,
        keys_out, rows_out);
}

template <typename K>
cudaError_t select_write(const void *d_temp, size_t temp_bytes, const K *keys, int64_t n,
                         const sl_k_cols_t *cols, int row_bytes, K *keys_out, void *rows_out,
                         uint32_t *bitmap, K kmin, uint64_t range, cudaStream_t stream)
{
    if (n < 0 || n >= ((int64_t)1 << 32) || !pack_cols_fit(cols, row_bytes) ||
        (bitmap && (range == 0 || range > ((uint64_t)1 << 40))))
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    if (d_temp == NULL || keys == NULL || keys_out == NULL || (row_bytes && rows_out == NULL))
        return cudaErrorInvalidValue;
    SelLayout l;
    cudaError_t e = sel_layout(n, &l);
    if (e != cudaSuccess)
        return e;
    if (temp_bytes < l.total)
        return cudaErrorInvalidValue;
    sl_k_cols_t c;
    memset(&c, 0, sizeof c);
    if (row_bytes)
        c = *cols;
    const char *t = (const char *)d_temp;
    switch (row_bytes / 4) {
    case 0: select_write_nw<K, 0>(l, t, keys, n, c, keys_out, rows_out, stream); break;
    case 1: select_write_nw<K, 1>(l, t, keys, n, c, keys_out, rows_out, stream); break;
    case 2: select_write_nw<K, 2>(l, t, keys, n, c, keys_out, rows_out, stream); break;
    case 3: select_write_nw<K, 3>(l, t, keys, n, c, keys_out, rows_out, stream); break;
    default: select_write_nw<K, 4>(l, t, keys, n, c, keys_out, rows_out, stream); break;
    }
    if ((e = cudaGetLastError()) != cudaSuccess || bitmap == NULL)
        return e;
    /* The bitmap from the kept keys, now contiguous: a warp's collectives over 32 kept
     * keys (set in the write pass, they ran over every word of the mask, 10 times as
     * many at a match ratio of 10%: 1.43 ms against 0.58 + 0.36 for the probe side on
     * the H100, 2026-11-27). The caller's count of kept keys is not known here: the
     * kernel reads it from the last tile's sum. */
    bitmap_set<K><<<(unsigned)grid_for(n), kThreads, 0, stream>>>(
        keys_out, n, (const uint32_t *)(t + l.offs_at) + l.tiles, kmin, range, bitmap);
    return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t sl_k_select_in_range_k32(void *d_temp, size_t *temp_bytes,
                                                const uint32_t *d_keys, int64_t n, uint32_t kmin,
                                                uint64_t range, const uint32_t *d_bitmap,
                                                uint32_t *d_idx, int64_t *d_count,
                                                cudaStream_t stream)
{
    return select_in_range(d_temp, temp_bytes, d_keys, n, kmin, range, d_bitmap, d_idx, d_count,
                           stream);
}

extern "C" cudaError_t sl_k_select_in_range_k64(void *d_temp, size_t *temp_bytes,
                                                const uint64_t *d_keys, int64_t n, uint64_t kmin,
                                                uint64_t range, const uint32_t *d_bitmap,
                                                uint32_t *d_idx, int64_t *d_count,
                                                cudaStream_t stream)
{
    return select_in_range(d_temp, temp_bytes, d_keys, n, kmin, range, d_bitmap, d_idx, d_count,
                           stream);
}

extern "C" cudaError_t sl_k_key_bitmap_k32(const uint32_t *d_keys, int64_t n, uint32_t kmin,
                                           uint64_t range, uint32_t *d_bitmap,
                                           cudaStream_t stream)
{
    return key_bitmap(d_keys, n, kmin, range, d_bitmap, stream);
}

extern "C" cudaError_t sl_k_key_bitmap_k64(const uint64_t *d_keys, int64_t n, uint64_t kmin,
                                           uint64_t range, uint32_t *d_bitmap,
                                           cudaStream_t stream)
{
    return key_bitmap(d_keys, n, kmin, range, d_bitmap, stream);
}

extern "C" cudaError_t sl_k_gather_bytes(const void *d_src, int width, const uint32_t *d_idx,
                                         int64_t n, void *d_dst, cudaStream_t stream)
{
    if (n < 0 || (width != 4 && width != 8 && width != 12 && width != 16) ||
        (n > 0 && (d_src == NULL || d_idx == NULL || d_dst == NULL)))
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    const unsigned g = (unsigned)grid_for(n);
    const uint32_t *s = (const uint32_t *)d_src;
    uint32_t *d = (uint32_t *)d_dst;
    switch (width / 4) {
    case 1: gather_words<1><<<g, kThreads, 0, stream>>>(s, d_idx, n, d); break;
    case 2: gather_words<2><<<g, kThreads, 0, stream>>>(s, d_idx, n, d); break;
    case 3: gather_words<3><<<g, kThreads, 0, stream>>>(s, d_idx, n, d); break;
    default: gather_words<4><<<g, kThreads, 0, stream>>>(s, d_idx, n, d); break;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_select_pack_k32(void *d_temp, size_t *temp_bytes,
                                           const uint32_t *d_keys, int64_t n, uint32_t kmin,
                                           uint64_t range, const uint32_t *d_bitmap,
                                           const sl_k_cols_t *cols, int row_bytes,
                                           uint32_t *d_keys_out, void *d_rows_out,
                                           int64_t cap, int64_t *d_count, cudaStream_t stream)
{
    return select_pack(d_temp, temp_bytes, d_keys, n, kmin, range, d_bitmap, cols, row_bytes,
                       d_keys_out, d_rows_out, cap, d_count, stream);
}

extern "C" cudaError_t sl_k_select_pack_k64(void *d_temp, size_t *temp_bytes,
                                           const uint64_t *d_keys, int64_t n, uint64_t kmin,
                                           uint64_t range, const uint32_t *d_bitmap,
                                           const sl_k_cols_t *cols, int row_bytes,
                                           uint64_t *d_keys_out, void *d_rows_out,
                                           int64_t cap, int64_t *d_count, cudaStream_t stream)
{
    return select_pack(d_temp, temp_bytes, d_keys, n, kmin, range, d_bitmap, cols, row_bytes,
                       d_keys_out, d_rows_out, cap, d_count, stream);
}

extern "C" cudaError_t sl_k_select_mask_k32(void *d_temp, size_t *temp_bytes,
                                           const uint32_t *d_keys, int64_t n, uint32_t kmin,
                                           uint64_t range, const uint32_t *d_bitmap,
                                           int64_t *d_count, cudaStream_t stream)
{
    return select_mask(d_temp, temp_bytes, d_keys, n, kmin, range, d_bitmap, d_count, stream);
}

extern "C" cudaError_t sl_k_select_mask_k64(void *d_temp, size_t *temp_bytes,
                                           const uint64_t *d_keys, int64_t n, uint64_t kmin,
                                           uint64_t range, const uint32_t *d_bitmap,
                                           int64_t *d_count, cudaStream_t stream)
{
    return select_mask(d_temp, temp_bytes, d_keys, n, kmin, range, d_bitmap, d_count, stream);
}

extern "C" cudaError_t sl_k_select_write_k32(const void *d_temp, size_t temp_bytes,
                                            const uint32_t *d_keys, int64_t n,
                                            const sl_k_cols_t *cols, int row_bytes,
                                            uint32_t *d_keys_out, void *d_rows_out,
                                            uint32_t *d_bitmap_out, uint32_t kmin,
                                            uint64_t range, cudaStream_t stream)
{
    return select_write(d_temp, temp_bytes, d_keys, n, cols, row_bytes, d_keys_out, d_rows_out,
                        d_bitmap_out, kmin, range, stream);
}

extern "C" cudaError_t sl_k_select_write_k64(const void *d_temp, size_t temp_bytes,
                                            const uint64_t *d_keys, int64_t n,
                                            const sl_k_cols_t *cols, int row_bytes,
                                            uint64_t *d_keys_out, void *d_rows_out,
                                            uint32_t *d_bitmap_out, uint64_t kmin,
                                            uint64_t range, cudaStream_t stream)
{
    return select_write(d_temp, temp_bytes, d_keys, n, cols, row_bytes, d_keys_out, d_rows_out,
                        d_bitmap_out, kmin, range, stream);
}
