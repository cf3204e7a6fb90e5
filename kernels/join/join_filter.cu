/* Filters of a join side by the other side's keys: their range, or an exact bitmap of
 * them over that range. Contracts in sluice_k/join_filter.h. */
#include "sluice_k/join_filter.h"

#include <string.h>

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

/* Sets the bit of every key in range. Non-returning atomics (a read of the word first made
 * every key wait for it), one a word per warp: lanes whose keys share a word OR their
 * bits and one of them sets them (hot keys of a skewed side would otherwise queue on
 * one word). */
template <typename K>
__global__ void bitmap_set(const K *__restrict__ keys, int64_t n, K kmin, uint64_t range,
                           uint32_t *bitmap)
{
    const int lane = threadIdx.x & 31; /* blockDim.x is a multiple of 32 */
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    /* warp-uniform loop: every lane takes part in the warp's collectives */
    for (int64_t w0 = (int64_t)blockIdx.x * blockDim.x + (threadIdx.x & ~31); w0 < n;
         w0 += stride) {
        const int64_t i = w0 + lane;
        const uint64_t d = i < n ? (uint64_t)(K)(keys[i] - kmin) : range;
        const bool set = d < range;
        const unsigned long long word = set ? d >> 5 : ~0ull;
        const unsigned peers = __match_any_sync(0xFFFFFFFFu, word);
        const unsigned bits = __reduce_or_sync(peers, set ? 1u << (d & 31) : 0u);
        if (set && lane == __ffs(peers) - 1)
            atomicOr(bitmap + word, bits);
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
    bitmap_set<K><<<(unsigned)grid_for(n), kThreads, 0, stream>>>(keys, n, kmin, range, bitmap);
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
