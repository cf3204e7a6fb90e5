/* Device helpers (CUDA only) shared by the GFTR PHJ, SMJ and NPJ join kernels and the
 * partitioner's packed rows (kernels/partition/partition_rows.cu): packed payload rows
 * (1..4 32-bit words), packing a row from columns, writing a row's words into output
 * columns of 4 or 8 bytes, and column-to-column copies for launchers that read columns
 * directly. */
#ifndef SLUICE_K_ROWS_CUH
#define SLUICE_K_ROWS_CUH

#include <stdint.h>

#include "sluice_k/join_types.h"

namespace sluice_k {
namespace rows {

/* Value type carried through CUB and the join for a row of NW words. NW = 1, 2, 4 map
 * to native types (vector loads); 3 is a plain struct. NW = 0: no payload (positions). */
struct W3 {
    uint32_t w[3];
};
struct Empty {};
template <int NW> struct RowT;
template <> struct RowT<0> { using T = Empty; };
template <> struct RowT<1> { using T = uint32_t; };
template <> struct RowT<2> { using T = uint64_t; };
template <> struct RowT<3> { using T = W3; };
template <> struct RowT<4> { using T = uint4; };

template <int NW>
__device__ __forceinline__ uint32_t word(const typename RowT<NW>::T &r, int i)
{
    if constexpr (NW == 1) {
        return r;
    } else if constexpr (NW == 2) {
        return i == 0 ? (uint32_t)r : (uint32_t)(r >> 32);
    } else if constexpr (NW == 3) {
        return i == 0 ? r.w[0] : i == 1 ? r.w[1] : r.w[2];
    } else if constexpr (NW == 4) {
        return i == 0 ? r.x : i == 1 ? r.y : i == 2 ? r.z : r.w;
    } else {
        return 0;
    }
}

/* Writes the words of row r into the columns of c at row `pos`, column j taking the
 * next width[j] / 4 words (8-byte columns: low word first). Columns past the row's
 * words are left alone (the launcher checks the widths fit). */
template <int NW>
__device__ __forceinline__ void put_row(const sl_k_cols_t &c, uint64_t pos,
                                        const typename RowT<NW>::T &r)
{
    if constexpr (NW > 0) {
        int w = 0;
#pragma unroll
        for (int j = 0; j < NW; j++) {
            if (j >= c.n || w >= NW)
                break;
            if (c.width[j] == 4) {
                ((uint32_t *)c.ptr[j])[pos] = word<NW>(r, w);
                w += 1;
            } else {
                ((uint64_t *)c.ptr[j])[pos] =
                    (uint64_t)word<NW>(r, w) | ((uint64_t)word<NW>(r, w + 1) << 32);
                w += 2;
            }
        }
    }
}

/* The row of NW words packed from row `src` of the columns of c (at most 4 of 4 or 8
 * bytes, 8-byte columns low word first; a 4-byte column without a pointer is the row's
 * number src; words past the columns are zero). The launchers check the widths fit. */
template <int NW>
__device__ __forceinline__ typename RowT<NW>::T pack_row(const sl_k_cols_t &c, int64_t src)
{
    uint32_t w0 = 0, w1 = 0, w2 = 0, w3 = 0; /* registers: no indexed array */
    auto put = [&](int o, uint32_t x) {
        if (o == 0)
            w0 = x;
        else if (o == 1)
            w1 = x;
        else if (o == 2)
            w2 = x;
        else
            w3 = x;
    };
    int o = 0;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        if (j >= c.n)
            break;
        if (c.width[j] == 4) {
            put(o, c.ptr[j] ? ((const uint32_t *)c.ptr[j])[src] : (uint32_t)src);
            o += 1;
        } else {
            const uint64_t x = ((const uint64_t *)c.ptr[j])[src];
            put(o, (uint32_t)x);
            put(o + 1, (uint32_t)(x >> 32));
            o += 2;
        }
    }
    typename RowT<NW>::T r;
    if constexpr (NW == 1) {
        r = w0;
    } else if constexpr (NW == 2) {
        r = (uint64_t)w0 | ((uint64_t)w1 << 32);
    } else if constexpr (NW == 3) {
        r.w[0] = w0;
        r.w[1] = w1;
        r.w[2] = w2;
    } else if constexpr (NW == 4) {
        r = make_uint4(w0, w1, w2, w3);
    }
    return r;
}

/* Zeroes row `pos` of every column of c (NULL side of LEFT rows). The loops over the
 * columns are unrolled to SL_K_MAX_COLS so the lists stay in kernel-parameter space
 * (indexed by a variable, the compiler copies them to local memory). */
__device__ __forceinline__ void put_zero(const sl_k_cols_t &c, uint64_t pos)
{
#pragma unroll
    for (int j = 0; j < SL_K_MAX_COLS; j++) {
        if (j >= c.n)
            break;
        if (c.width[j] == 4)
            ((uint32_t *)c.ptr[j])[pos] = 0;
        else
            ((uint64_t *)c.ptr[j])[pos] = 0;
    }
}

/* dst column j [pos] = src column j [row] for every column (equal widths). */
__device__ __forceinline__ void copy_cols(const sl_k_cols_t &dst, uint64_t pos,
                                          const sl_k_cols_t &src, uint64_t row)
{
#pragma unroll
    for (int j = 0; j < SL_K_MAX_COLS; j++) {
        if (j >= dst.n)
            break;
        if (dst.width[j] == 4)
            ((uint32_t *)dst.ptr[j])[pos] = ((const uint32_t *)src.ptr[j])[row];
        else
            ((uint64_t *)dst.ptr[j])[pos] = ((const uint64_t *)src.ptr[j])[row];
    }
}

} // namespace rows
} // namespace sluice_k

#endif /* SLUICE_K_ROWS_CUH */
