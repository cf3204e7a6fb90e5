/* The one-pass wide partitioner of the partitioned method (sl_k_agg_wide_partition,
 * issue 19): up to 2^12 partitions in one pass over the input, for the partition kernel's
 * big table (one block an SM holding ~14,000 slots, SL_K_AGG_BIG), so that 2^24 groups
 * could take 2^11 partitions of ~8,000 groups instead of the two passes of 7 + 6 bits the
 * tile partitioner needs for 2^13 partitions of ~2,000. Measured slower (H100,
 * 2026-11-27, 2^28 rows, count + scatter): 10.6 ms at 2^11 partitions and 13.0 at 2^12,
 * 8.1 at 2^11 with tiles of 8,192 rows, against 8.6 for the two passes of 2^13; the time
 * grows with the (tile, partition) runs (about 50 ps each over the GPU: a global atomic
 * and a partly written sector per column), on top of ~4 ms for the bytes. So the driver
 * keeps the two passes (agg_gdrv.one_pass runs this one, to compare).
 *
 * The tile partitioner (aggregate_direct.cuh) gives every (partition, block) run a place
 * from a per-block count; with 2^11 partitions a block's runs of a tile are two rows long,
 * and the partly written lines of every block's 2^11 runs (264 blocks) would not stay in
 * L2 until the block's next tile completes them. Here the blocks share one cursor per
 * partition instead: a tile is sorted by partition in shared memory as there, then takes
 * its place in each partition with one global atomic (a tile's rows of a partition stay
 * contiguous), so consecutive places of a partition go to whichever tiles come next and
 * the partly written lines are the partitions' frontiers (2^11 of them per column). The
 * count is one global histogram; its exclusive sum gives the partitions' offsets and the
 * cursors' starts. Order within a partition is unspecified. */
#ifndef SLUICE_K_AGGREGATE_WIDE_CUH
#define SLUICE_K_AGGREGATE_WIDE_CUH

#include <cub/block/block_scan.cuh>

#include "aggregate_direct.cuh"

namespace sluice_k {
namespace agg {

constexpr int kWideMaxBits = 12;
/* Partition cells a thread of kThreads scans: 2^kWideMaxBits over the block. */
constexpr int kWideScanItems = (1 << kWideMaxBits) / kThreads;
static_assert(kWideScanItems * kThreads == (1 << kWideMaxBits), "cells spread evenly");

/* hist[q] += rows of digit q (the top `bits` bits of the key's hash): a block's counts in
 * shared memory, eight loads in flight a thread (as dpart_count_kernel). */
template <typename K>
__global__ void __launch_bounds__(kThreads)
    wide_count_kernel(const K *keys, int64_t n, int bits, unsigned *hist)
{
    __shared__ unsigned h[1 << kWideMaxBits];
    const int P = 1 << bits;
    for (int i = threadIdx.x; i < P; i += blockDim.x)
        h[i] = 0;
    __syncthreads();
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; e + (kCountItems - 1) * step < n; e += kCountItems * step) {
        K k[kCountItems];
#pragma unroll
        for (int j = 0; j < kCountItems; j++)
            k[j] = __ldcs(keys + e + j * step);
#pragma unroll
        for (int j = 0; j < kCountItems; j++)
            atomicAdd(&h[dpart_digit((int64_t)k[j], 0, bits)], 1u);
    }
    for (; e < n; e += step)
        atomicAdd(&h[dpart_digit((int64_t)keys[e], 0, bits)], 1u);
    __syncthreads();
    for (int i = threadIdx.x; i < P; i += blockDim.x)
        if (h[i])
            atomicAdd(&hist[i], h[i]);
}

/* One block: offsets[q] = rows of digits below q (offsets[P] = n), cursor[q] the same. */
__global__ void __launch_bounds__(kThreads)
    wide_offsets_kernel(const unsigned *hist, int bits, int64_t n, int64_t *offsets,
                        unsigned *cursor)
{
    using Scan = cub::BlockScan<unsigned, kThreads>;
    __shared__ typename Scan::TempStorage tmp;
    const int P = 1 << bits;
    const int c0 = threadIdx.x * kWideScanItems;
    unsigned x[kWideScanItems], ex[kWideScanItems];
#pragma unroll
    for (int j = 0; j < kWideScanItems; j++)
        x[j] = c0 + j < P ? hist[c0 + j] : 0;
    Scan(tmp).ExclusiveSum(x, ex);
#pragma unroll
    for (int j = 0; j < kWideScanItems; j++)
        if (c0 + j < P) {
            offsets[c0 + j] = ex[j];
            cursor[c0 + j] = ex[j];
        }
    if (threadIdx.x == 0)
        offsets[P] = n;
}

/* Shared bytes of the wide scatter kernel: the tile (as dpart_smem) and three words a
 * partition (the tile's counts, their exclusive sum, the places the tile took). */
template <typename K>
__host__ __device__ constexpr size_t wide_smem(int nv, int bits)
{
    return dpart_smem<K>(nv) + ((size_t)3 * 4 << bits);
}

/* Partition cells a thread of the scatter kernel scans (SI): 2^bits over the block, four
 * up to 11 bits (eight kept a tile's registers from fitting: 20 bytes spilled). */
__host__ __device__ constexpr int wide_scan_items(int bits)
{
    return bits <= 11 ? 4 : kWideScanItems;
}
static_assert(4 * kThreads == 1 << 11, "four cells a thread cover 11 bits");

/* Tiles t = blockIdx.x, blockIdx.x + gridDim.x, ... of dpart_tile rows: ranked by digit
 * (shared counts), sorted by digit in shared memory, each digit's rows placed with one
 * atomic on cursor[digit] and written as one run. The next tile loads while one is
 * written (PF, as dpart_scatter_kernel). */
template <typename K, int NV, int SI>
__global__ void __launch_bounds__(kThreads, 2)
    wide_scatter_kernel(const K *keys, int64_t n, int bits, unsigned *cursor, K *okeys,
                        DPartCols c)
{
    constexpr int IT = dpart_items<K>(NV);
    constexpr int64_t TILE = dpart_tile<K>(NV);
    constexpr bool PF = ((int)sizeof(K) / 4 + 2 * NV) * IT <= 24;
    using Scan = cub::BlockScan<unsigned, kThreads>;
    __shared__ typename Scan::TempStorage scan_tmp;
    const int P = 1 << bits;
    uint64_t *sv = (uint64_t *)agg_smem; /* [NV][TILE] */
    K *sk = (K *)(sv + (size_t)NV * TILE);
    unsigned short *spart = (unsigned short *)(sk + TILE);
    unsigned *th = (unsigned *)(agg_smem + dpart_smem<K>(NV)), *tof = th + P, *cur = tof + P;
    const int64_t tiles = (n + TILE - 1) / TILE;
    DPartRegs<K, NV> t;
    int64_t tile = blockIdx.x;
    if (PF && tile < tiles)
        dpart_tile_load<K, NV>(keys, c, tile * TILE, (int)min(TILE, n - tile * TILE), t);
    for (; tile < tiles; tile += gridDim.x) {
        const int64_t base = tile * TILE;
        const int tn = (int)min(TILE, n - base);
        for (int i = threadIdx.x; i < P; i += kThreads)
            th[i] = 0;
        if (!PF)
            dpart_tile_load<K, NV>(keys, c, base, tn, t);
        __syncthreads();
        unsigned qr[IT]; /* digit << 16 | rank among the tile's rows of the digit */
#pragma unroll
        for (int it = 0; it < IT; it++) {
            if (it * kThreads + (int)threadIdx.x >= tn)
                continue;
            const unsigned q = dpart_digit((int64_t)t.k[it], 0, bits);
            qr[it] = q << 16 | atomicAdd(&th[q], 1u);
        }
        __syncthreads();
        const int c0 = threadIdx.x * SI;
        unsigned x[SI]; /* in place: the counts are read again from th */
#pragma unroll
        for (int j = 0; j < SI; j++)
            x[j] = c0 + j < P ? th[c0 + j] : 0;
        Scan(scan_tmp).ExclusiveSum(x, x);
#pragma unroll
        for (int j = 0; j < SI; j++)
            if (c0 + j < P) {
                tof[c0 + j] = x[j];
                const unsigned m = th[c0 + j];
                if (m) /* the tile's run of digit c0 + j takes its place */
                    cur[c0 + j] = atomicAdd(&cursor[c0 + j], m);
            }
        __syncthreads();
#pragma unroll
        for (int it = 0; it < IT; it++) {
            if (it * kThreads + (int)threadIdx.x >= tn)
                continue;
            const unsigned q = qr[it] >> 16, pos = tof[q] + (qr[it] & 0xffffu);
            sk[pos] = t.k[it];
            spart[pos] = (unsigned short)q;
#pragma unroll
            for (int j = 0; j < NV; j++)
                sv[(size_t)j * TILE + pos] = t.v[j][it];
        }
        const int64_t next = tile + gridDim.x;
        if (PF && next < tiles) /* the next tile loads while this one is written */
            dpart_tile_load<K, NV>(keys, c, next * TILE, (int)min(TILE, n - next * TILE), t);
        __syncthreads();
        for (int i = threadIdx.x; i < tn; i += kThreads) {
            const unsigned p = spart[i];
            const int64_t d = (int64_t)cur[p] + (i - (int)tof[p]);
            okeys[d] = sk[i];
#pragma unroll
            for (int j = 0; j < NV; j++)
                dpart_st(c.dst[j], c.w[j], d, sv[(size_t)j * TILE + i]);
        }
        __syncthreads(); /* th, tof, cur and the tile are the next tile's */
    }
}

} // namespace agg
} // namespace sluice_k

#endif /* SLUICE_K_AGGREGATE_WIDE_CUH */
