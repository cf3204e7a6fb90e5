/* __global__ entry points of the GFTR partitioned hash join (see sluice_k/join_gftr.h).
 * Same work decomposition and shared-memory table as join_kernels.cuh (join_table.cuh),
 * generalized to packed payload rows of 0..4 words, positions output, and a matched
 * bitmap for SEMI/ANTI/LEFT. */
#ifndef SLUICE_K_JOIN_GFTR_KERNELS_CUH
#define SLUICE_K_JOIN_GFTR_KERNELS_CUH

#include <stdint.h>

#include <cub/block/block_scan.cuh>

#include "sluice_k/rows.cuh"
#include "join_table.cuh"
#include "sluice_k/join.h"
#include "sluice_k/join_types.h"

namespace sluice_k {
namespace gftr {

using namespace sluice_k::rows;

using namespace sluice_k::jtab; /* chunks, slots, slot_of, units_kernel */

/* Block size per row width: measured on the H100 for the narrow kernel, 256 threads
 * for 8-byte (key + payload) rows, 512 for 16-byte rows (fewer, bigger blocks per SM).
 * SL_K_GFTR_WIDE_BYTES: the key + row width from which 512 is used. */
#ifndef SL_K_GFTR_WIDE_BYTES
#define SL_K_GFTR_WIDE_BYTES 16
#endif
template <typename K, int NW> struct Tune {
    static constexpr int kThreads = sizeof(K) + 4 * NW >= SL_K_GFTR_WIDE_BYTES ? 512 : 256;
};

template <typename K, int NW>
constexpr size_t smem_bytes()
{
    return (size_t)kBuildChunk * (sizeof(K) + 4 * NW) + kSlots * sizeof(uint16_t);
}

template <typename K> struct PhjArgs {
    const K *r_keys, *s_keys;
    const void *r_rows, *s_rows;
    const int64_t *r_off, *s_off;
    int64_t parts;
    int shift;
    const int64_t *unit_off;
    unsigned long long *work;
    sl_k_join_out_t out;
    unsigned long long *count; /* [0] rows */
    uint32_t *matched;         /* S bitmap or NULL */
};

/* Sets the bits of this warp's matched rows: lanes hold consecutive rows idx0 + lane. */
__device__ __forceinline__ void mark_warp(uint32_t *bm, int64_t idx0, bool hit)
{
    const unsigned bits = __ballot_sync(0xffffffffu, hit);
    if ((threadIdx.x & 31) == 0 && bits) {
        const int64_t w = idx0 >> 5;
        const int sh = (int)(idx0 & 31);
        atomicOr(&bm[w], bits << sh);
        if (sh && (bits >> (32 - sh)))
            atomicOr(&bm[w + 1], bits >> (32 - sh));
    }
}

/* Writes one matched row at pos (if it fits). */
template <typename K, int NW>
__device__ __forceinline__ void emit(const sl_k_join_out_t &o, unsigned long long pos,
                                     uint64_t cap, K key, uint32_t rpos, uint32_t spos,
                                     const typename RowT<NW>::T *bv, int slot,
                                     const typename RowT<NW>::T &sv)
{
    if (pos >= cap)
        return;
    if (o.keys)
        ((K *)o.keys)[pos] = key;
    if (o.r_pos)
        o.r_pos[pos] = rpos;
    if (o.s_pos)
        o.s_pos[pos] = spos;
    if constexpr (NW > 0) {
        put_row<NW>(o.r, pos, bv[slot]);
        put_row<NW>(o.s, pos, sv);
    }
}

/* MARK_ONLY: no output; only the matched bitmap (SEMI/ANTI), probing stops at the
 * first match. Otherwise materialize matches (and mark if a.matched != NULL). */
template <typename K, int NW, bool MARK_ONLY>
__global__ void __launch_bounds__(Tune<K, NW>::kThreads)
    phj_kernel(const PhjArgs<K> a)
{
    constexpr int BT = Tune<K, NW>::kThreads;
    using R = typename RowT<NW>::T;
    using Scan = cub::BlockScan<uint32_t, BT>;
    extern __shared__ __align__(16) unsigned char smem[];
    K *bk = (K *)smem;
    R *bv = (R *)(smem + (size_t)kBuildChunk * sizeof(K));
    uint16_t *slots = (uint16_t *)(smem + (size_t)kBuildChunk * (sizeof(K) + 4 * NW));
    __shared__ typename Scan::TempStorage scan_tmp;
    __shared__ int64_t sh_unit, sh_part;
    __shared__ unsigned long long sh_out_base;

    const int64_t parts = a.parts;
    const int shift = a.shift;
    const int64_t total_units = a.unit_off[parts];
    const R *r_rows = (const R *)a.r_rows;
    const R *s_rows = (const R *)a.s_rows;
    const uint64_t cap = (uint64_t)a.out.capacity;

    for (;;) {
        int64_t u, p;
        if (!claim_unit(a.work, a.unit_off, parts, total_units, sh_unit, sh_part, u, p))
            break;
        const UnitRows ur = unit_rows(a.r_off, a.s_off, a.unit_off, u, p);
        const int64_t rb = ur.rb, sb = ur.sb, se = ur.se;
        const int m = ur.m;

        table_clear<BT>(slots);
        for (int i = threadIdx.x; i < m; i += BT) {
            bk[i] = a.r_keys[rb + i];
            if constexpr (NW > 0)
                bv[i] = r_rows[rb + i];
        }
        __syncthreads();
        table_insert<BT>(slots, bk, m, shift);
        __syncthreads();

        for (int64_t base = sb; base < se; base += (int64_t)BT * kProbeItems) {
            K k[kProbeItems];
            R v[kProbeItems];
            uint32_t cnt[kProbeItems];
            int first[kProbeItems];
#pragma unroll
            for (int i = 0; i < kProbeItems; i++) {
                const int64_t idx = base + (int64_t)i * BT + threadIdx.x;
                cnt[i] = 0;
                first[i] = -1;
                if (idx < se) {
                    k[i] = a.s_keys[idx];
                    if constexpr (NW > 0 && !MARK_ONLY)
                        v[i] = s_rows[idx];
                }
            }
#pragma unroll
            for (int i = 0; i < kProbeItems; i++) {
                const int64_t idx = base + (int64_t)i * BT + threadIdx.x;
                if (idx >= se)
                    continue;
                uint32_t h = slot_of(k[i], shift);
                for (;;) {
                    const uint32_t s = slots[h];
                    if (s == 0)
                        break;
                    if (bk[s - 1] == k[i]) {
                        if (cnt[i] == 0)
                            first[i] = (int)s - 1;
                        cnt[i]++;
                        if (MARK_ONLY)
                            break;
                    }
                    h = (h + 1) & (kSlots - 1);
                }
            }
            if (MARK_ONLY || a.matched != NULL) {
#pragma unroll
                for (int i = 0; i < kProbeItems; i++) {
                    const int64_t idx0 = base + (int64_t)i * BT + (threadIdx.x & ~31u);
                    mark_warp(a.matched, idx0, cnt[i] > 0);
                }
            }
            if constexpr (!MARK_ONLY) {
                uint32_t excl[kProbeItems], step_total = 0;
#pragma unroll
                for (int i = 0; i < kProbeItems; i++) {
                    uint32_t agg;
                    Scan(scan_tmp).ExclusiveSum(cnt[i], excl[i], agg);
                    excl[i] += step_total;
                    step_total += agg;
                    __syncthreads();
                }
                if (threadIdx.x == 0)
                    sh_out_base =
                        step_total ? atomicAdd(a.count, (unsigned long long)step_total) : 0;
                __syncthreads();
                const unsigned long long ob = sh_out_base;
#pragma unroll
                for (int i = 0; i < kProbeItems; i++) {
                    if (cnt[i] == 0)
                        continue;
                    const int64_t idx = base + (int64_t)i * BT + threadIdx.x;
                    unsigned long long pos = ob + excl[i];
                    if (cnt[i] == 1) {
                        emit<K, NW>(a.out, pos, cap, k[i], (uint32_t)(rb + first[i]),
                                    (uint32_t)idx, bv, first[i], v[i]);
                        continue;
                    }
                    uint32_t h = slot_of(k[i], shift);
                    for (;;) {
                        const uint32_t s = slots[h];
                        if (s == 0)
                            break;
                        if (bk[s - 1] == k[i]) {
                            emit<K, NW>(a.out, pos, cap, k[i], (uint32_t)(rb + s - 1),
                                        (uint32_t)idx, bv, (int)s - 1, v[i]);
                            pos++;
                        }
                        h = (h + 1) & (kSlots - 1);
                    }
                }
                __syncthreads(); /* sh_out_base is rewritten by the next step */
            }
        }
        __syncthreads(); /* shared table and sh_unit are rewritten by the next unit */
    }
}

/* Appends the S rows whose matched bit equals `want` at count[0] + rank (atomic per
 * block tile: order across tiles unspecified). LEFT: R side NULL. */
template <typename K, int NW>
__global__ void __launch_bounds__(256)
    select_kernel(const uint32_t *__restrict__ bm, int64_t ns, uint32_t want,
                  const K *__restrict__ s_keys, const void *__restrict__ s_rows_v,
                  const sl_k_join_out_t out, int left, unsigned long long *__restrict__ count)
{
    constexpr int BT = 256, IT = 4;
    using R = typename RowT<NW>::T;
    using Scan = cub::BlockScan<uint32_t, BT>;
    __shared__ typename Scan::TempStorage scan_tmp;
    __shared__ unsigned long long sh_base;
    const R *s_rows = (const R *)s_rows_v;
    const uint64_t cap = (uint64_t)out.capacity;
    for (int64_t base = (int64_t)blockIdx.x * BT * IT; base < ns;
         base += (int64_t)gridDim.x * BT * IT) {
        uint32_t f[IT], mine = 0, excl, total;
#pragma unroll
        for (int i = 0; i < IT; i++) {
            const int64_t idx = base + (int64_t)threadIdx.x * IT + i;
            f[i] = idx < ns && ((bm[idx >> 5] >> (idx & 31)) & 1u) == want;
            mine += f[i];
        }
        Scan(scan_tmp).ExclusiveSum(mine, excl, total);
        if (threadIdx.x == 0)
            sh_base = total ? atomicAdd(count, (unsigned long long)total) : 0;
        __syncthreads();
        unsigned long long pos = sh_base + excl;
#pragma unroll
        for (int i = 0; i < IT; i++) {
            if (!f[i])
                continue;
            const int64_t idx = base + (int64_t)threadIdx.x * IT + i;
            if (pos < cap) {
                if (out.keys)
                    ((K *)out.keys)[pos] = s_keys[idx];
                if (out.s_pos)
                    out.s_pos[pos] = (uint32_t)idx;
                if constexpr (NW > 0)
                    put_row<NW>(out.s, pos, s_rows[idx]);
                if (left) {
                    if (out.r_pos)
                        out.r_pos[pos] = SL_K_NULL_POS;
                    put_zero(out.r, pos);
                }
            }
            pos++;
        }
        __syncthreads(); /* scan_tmp and sh_base are reused */
    }
}

static __global__ void copy_count_kernel(unsigned long long *count)
{
    count[1] = count[0];
}

/* ---- pack / gather ---- */

/* Row i takes source row sel[i] (i without sel); a 4-byte column without a pointer is
 * that source row's number. */
template <int NW>
__global__ void pack_kernel(const sl_k_cols_t cols, const uint32_t *__restrict__ sel, int64_t n,
                            void *rows_v)
{
    using R = typename RowT<NW>::T;
    R *rows = (R *)rows_v;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        rows[i] = pack_row<NW>(cols, sel ? (int64_t)sel[i] : i);
}

template <int NW>
__global__ void gather_rows_kernel(const void *rows_v, const uint32_t *__restrict__ idx,
                                   int64_t n, const sl_k_cols_t dst)
{
    using R = typename RowT<NW>::T;
    const R *rows = (const R *)rows_v;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const uint32_t p = idx[i];
        if (p == SL_K_NULL_POS)
            put_zero(dst, i);
        else
            put_row<NW>(dst, i, rows[p]);
    }
}

static __global__ void gather_cols_kernel(const sl_k_cols_t src, const uint32_t *__restrict__ idx,
                                          int64_t n, const sl_k_cols_t dst)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const uint32_t p = idx[i];
        if (p == SL_K_NULL_POS)
            put_zero(dst, i);
        else
            copy_cols(dst, i, src, p);
    }
}

} // namespace gftr
} // namespace sluice_k

#endif /* SLUICE_K_JOIN_GFTR_KERNELS_CUH */
