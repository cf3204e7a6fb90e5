/* What the partitioned hash join kernels share (join_kernels.cuh: the narrow join of
 * join.h; join_gftr_kernels.cuh: packed rows, positions and kinds of join_gftr.h): the
 * work decomposition (a unit = one build chunk x one probe chunk of a partition, taken
 * by a persistent grid) and the shared-memory table (linear probing over uint16 slots
 * holding chunk row + 1, 0 = empty). */
#ifndef SLUICE_K_JOIN_TABLE_CUH
#define SLUICE_K_JOIN_TABLE_CUH

#include <stdint.h>

#include "sluice_k/join.h"
#include "sluice_k/persistent.cuh" /* claim_unit: the persistent grid takes units */

namespace sluice_k {
namespace jtab {

constexpr int kBuildChunk = SL_K_JOIN_BUILD_CHUNK;
constexpr int64_t kProbeChunk = SL_K_JOIN_PROBE_CHUNK;
constexpr int kProbeItems = 4; /* probe rows per thread per step */
constexpr int kSlotBits = 13;  /* 8192 uint16 slots: load <= 0.5625 */
constexpr uint32_t kSlots = 1u << kSlotBits;
static_assert(kBuildChunk < (int)kSlots && kBuildChunk < 65535, "slot index is uint16");

/* The partition bits are equal within a partition: hash the bits above them (Fibonacci
 * hashing spreads dense keys nearly without collisions). */
template <typename K>
__device__ __forceinline__ uint32_t slot_of(K key, int shift)
{
    uint64_t x = (uint64_t)key >> shift;
    uint32_t y = (uint32_t)x ^ (uint32_t)(x >> 32);
    return (y * 0x9E3779B1u) >> (32 - kSlotBits);
}

/* Empties the block's shared table (kSlots uint16 slots); BT: threads of the block. */
template <int BT>
__device__ __forceinline__ void table_clear(uint16_t *slots)
{
    for (uint32_t i = threadIdx.x; i < kSlots / 2; i += BT)
        ((uint32_t *)slots)[i] = 0;
}

/* Inserts chunk rows [0, m) with keys bk into the shared table (linear probing; a slot
 * holds row + 1). The caller synchronizes the block before and after. */
template <int BT, typename K>
__device__ __forceinline__ void table_insert(uint16_t *slots, const K *bk, int m, int shift)
{
    for (int i = threadIdx.x; i < m; i += BT) {
        uint32_t h = slot_of(bk[i], shift);
        while (atomicCAS(&slots[h], (unsigned short)0, (unsigned short)(i + 1)) != 0)
            h = (h + 1) & (kSlots - 1);
    }
}

/* units[p] = build chunks x probe chunks of partition p (0 if either side is empty: S
 * rows of a partition without R rows stay unmatched); units[P] = 0, so an exclusive scan
 * over P + 1 entries leaves the total at [P]. */
static __global__ void units_kernel(const int64_t *__restrict__ r_off,
                                    const int64_t *__restrict__ s_off, int64_t parts,
                                    int64_t *__restrict__ units)
{
    int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p > parts)
        return;
    if (p == parts) {
        units[p] = 0;
        return;
    }
    int64_t nr = r_off[p + 1] - r_off[p], ns = s_off[p + 1] - s_off[p];
    units[p] = (nr > 0 && ns > 0)
                   ? ((nr + kBuildChunk - 1) / kBuildChunk) * ((ns + kProbeChunk - 1) / kProbeChunk)
                   : 0;
}

/* The rows of unit u of partition p (units_kernel's order: build chunks vary fastest):
 * build rows [rb, rb + m) and probe rows [sb, se). */
struct UnitRows {
    int64_t rb, sb, se;
    int m;
};

__device__ __forceinline__ UnitRows unit_rows(const int64_t *r_off, const int64_t *s_off,
                                              const int64_t *unit_off, int64_t u, int64_t p)
{
    const int64_t r0 = r_off[p], nr = r_off[p + 1] - r0;
    const int64_t s0 = s_off[p], ns = s_off[p + 1] - s0;
    const int64_t nb = (nr + kBuildChunk - 1) / kBuildChunk;
    const int64_t local = u - unit_off[p];
    UnitRows ur;
    ur.rb = r0 + (local % nb) * kBuildChunk;
    ur.m = (int)((r0 + nr - ur.rb) < kBuildChunk ? (r0 + nr - ur.rb) : kBuildChunk);
    ur.sb = s0 + (local / nb) * kProbeChunk;
    ur.se = (s0 + ns - ur.sb) < kProbeChunk ? s0 + ns : ur.sb + kProbeChunk;
    return ur;
}

} // namespace jtab
} // namespace sluice_k

#endif /* SLUICE_K_JOIN_TABLE_CUH */
