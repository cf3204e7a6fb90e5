/* The chained-scan radix partitioner (SL_K_PART_CHAIN, sluice_k/partition.h; issue 19):
 * stable LSD partitioning of (key, row) pairs on up to 16 key bits in passes of at most
 * 8 bits, in the manner of onesweep (Adinets & Merrill 2022), written for the join's
 * packed rows:
 *  - one histogram kernel reads the keys once and counts every pass's digits
 *    (per-warp shared copies, then global atomics);
 *  - one scatter kernel per pass: a tile of kTile pairs (tiles taken in order from an
 *    atomic counter) is ranked stably by digit in shared memory (warp-striped items,
 *    __match_any_sync peers per step, per-warp digit counters), its per-digit counts
 *    are published at once, the pairs are staged in shared memory in digit order, and
 *    each digit's offset among the earlier tiles comes from a decoupled look-back over
 *    their published counts (one thread per digit); then consecutive threads write
 *    consecutive positions of each digit's run (keys and rows).
 * A status word is flag (2 bits: 1 aggregate, 2 inclusive prefix) + count (30 bits):
 * n < 2^30. Device code only; launchers in partition_rows.cu / partition_launch.cu.
 * Not used by the join: 1.6x slower than CUB onesweep a pass on the H100 (issue 19;
 * bench/gpu/gpu_partition_micro; join.gpu.narrow's limits in bench/specs/join.json). */
#ifndef SLUICE_K_PARTITION_CHAIN_CUH
#define SLUICE_K_PARTITION_CHAIN_CUH

#include <stdint.h>

#include <cub/block/block_scan.cuh>

#include "sluice_k/partition.h"

namespace sluice_k {
namespace pchain {

/* Where a pass reads row i (a policy: a first pass could read its rows another way). */
template <typename R> struct RowPtr {
    const R *p;
    __device__ __forceinline__ R get(int64_t i) const { return p[i]; }
};

constexpr int kThreads = 256; /* one thread per digit of an 8-bit pass */
constexpr int kWarps = kThreads / 32;
constexpr int kBins = 256;
constexpr int kMaxPasses = 2;
constexpr uint32_t kFlagAgg = 1u << 30, kFlagInc = 2u << 30, kValMask = (1u << 30) - 1;
constexpr int64_t kMaxRows = SL_K_PART_CHAIN_MAX_ROWS;

/* Items a thread holds: 4096-pair tiles for pairs of up to 8 bytes, 2048 above (the
 * staged tile stays at or below 48 KB of shared memory). SL_K_PCHAIN_IPT: the first,
 * for a benchmark's variant (bench/meson.build). */
#ifndef SL_K_PCHAIN_IPT
#define SL_K_PCHAIN_IPT 16
#endif
/* SL_K_PCHAIN_LATE_ROWS 1: a tile's rows are read when it is staged, after the ranking,
 * not with its keys (fewer registers held through the ranking; a benchmark's variant). */
#ifndef SL_K_PCHAIN_LATE_ROWS
#define SL_K_PCHAIN_LATE_ROWS 0
#endif
constexpr bool kLateRows = SL_K_PCHAIN_LATE_ROWS != 0;

/* Earlier tiles' status words a look-back step reads at once (SL_K_PCHAIN_WINDOW, 1 by
 * default: 16 was no faster on the H100, bench/meson.build). */
#ifndef SL_K_PCHAIN_WINDOW
#define SL_K_PCHAIN_WINDOW 1
#endif
constexpr int kWindow = SL_K_PCHAIN_WINDOW;

template <typename K, typename R> struct Ipt {
    static constexpr int value = sizeof(K) + sizeof(R) <= 8 ? SL_K_PCHAIN_IPT : 8;
};

/* Device-scope relaxed accesses of the status words: one 32-bit word carries both the
 * flag and the count, so no fence is needed between them. */
__device__ __forceinline__ uint32_t ld_status(const uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void st_status(uint32_t *p, uint32_t v)
{
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/* SL_K_PCHAIN_MATCH_ANY 1 (default): the lanes holding the same digit by
 * __match_any_sync; 0: by one ballot per digit bit (bits 0..b and 8: the padding digit
 * kBins is the only value with bit 8), as CUB's MatchAny does, slower on the H100
 * (bench/meson.build). */
#ifndef SL_K_PCHAIN_MATCH_ANY
#define SL_K_PCHAIN_MATCH_ANY 1
#endif

__device__ __forceinline__ unsigned match_peers(uint32_t d, int b)
{
#if SL_K_PCHAIN_MATCH_ANY
    (void)b;
    return __match_any_sync(0xFFFFFFFFu, d);
#else
    unsigned peers = 0xFFFFFFFFu;
#pragma unroll
    for (int bit = 0; bit <= 8; bit++) {
        if (bit > b && bit < 8)
            continue; /* digits of b bits and the padding kBins = 256 differ in bit 8 */
        const unsigned on = __ballot_sync(0xFFFFFFFFu, (d >> bit) & 1u);
        peers &= ((d >> bit) & 1u) ? on : ~on;
    }
    return peers;
#endif
}

template <typename K>
__device__ __forceinline__ uint32_t digit(K key, int shift, uint32_t mask)
{
    return (uint32_t)(key >> shift) & mask;
}

/* hist[p * kBins + d] += keys whose pass-p digit is d, for every pass p: pass p covers
 * bits [lo + 8p, lo + 8p + min(8, bits - 8p)). Grid-stride; per-warp shared copies
 * keep skewed keys from serializing on one counter. */
template <typename K>
__global__ void __launch_bounds__(kThreads)
    hist_kernel(const K *__restrict__ keys, int64_t n, int lo, int bits, uint32_t *hist)
{
    __shared__ uint32_t h[kWarps][kMaxPasses * kBins];
    const int npass = (bits + 7) / 8;
    for (int i = threadIdx.x; i < kWarps * kMaxPasses * kBins; i += kThreads)
        (&h[0][0])[i] = 0;
    __syncthreads();
    const int w = threadIdx.x / 32;
    const uint32_t m0 = bits >= 8 ? 0xFFu : (1u << bits) - 1;
    const uint32_t m1 = bits > 8 ? (1u << (bits - 8)) - 1 : 0;
    for (int64_t i = (int64_t)blockIdx.x * kThreads + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * kThreads) {
        const K k = keys[i];
        atomicAdd(&h[w][digit(k, lo, m0)], 1u);
        if (npass > 1)
            atomicAdd(&h[w][kBins + digit(k, lo + 8, m1)], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < npass * kBins; i += kThreads) {
        uint32_t s = 0;
#pragma unroll
        for (int j = 0; j < kWarps; j++)
            s += h[j][i];
        if (s)
            atomicAdd(&hist[i], s);
    }
}

/* One pass on digit bits [shift, shift + b) (b <= 8) from (kin, rin) to (kout, rout);
 * rin a RowPtr.
 * hist: this pass's global digit counts; status: tiles * kBins zeroed words; ctr: a
 * zeroed tile counter. HAS_ROW false: keys only (rin/rout unused). Dynamic shared
 * memory: kTile * (sizeof(K) + sizeof(R)) bytes. */
template <typename K, typename R, bool HAS_ROW, typename Src>
__global__ void __launch_bounds__(kThreads, 2)
    scatter_kernel(const K *__restrict__ kin, const Src rin, K *__restrict__ kout,
                   R *__restrict__ rout, int64_t n, int shift, int b,
                   const uint32_t *__restrict__ hist, uint32_t *status, uint32_t *ctr)
{
    constexpr int IPT = Ipt<K, R>::value;
    constexpr int kTile = kThreads * IPT;
    using Scan = cub::BlockScan<uint32_t, kThreads>;
    extern __shared__ __align__(16) unsigned char smem[];
    K *sk = (K *)smem;
    R *sr = (R *)(smem + (size_t)kTile * sizeof(K));
    __shared__ uint32_t wc[kWarps][kBins + 1]; /* [.][kBins]: padding items' counter */
    __shared__ uint32_t tstart[kBins], off[kBins];
    __shared__ typename Scan::TempStorage scan_tmp;
    __shared__ uint32_t sh_tile;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const uint32_t mask = (1u << b) - 1;
    if (tid == 0)
        sh_tile = atomicAdd(ctr, 1u);
    for (int i = tid; i < kWarps * (kBins + 1); i += kThreads)
        (&wc[0][0])[i] = 0;
    /* The digit's first position in the output: exclusive sum of the global counts. */
    uint32_t gstart;
    Scan(scan_tmp).ExclusiveSum((uint32_t)tid <= mask ? hist[tid] : 0u, gstart);
    __syncthreads();
    const int64_t tile = sh_tile;
    const int64_t base = tile * kTile;
    const int valid = (int)(n - base < kTile ? n - base : kTile);

    /* Warp-striped items: item j of a lane is tile row warp * 32 * IPT + j * 32 + lane,
     * so (warp, j, lane) order is input order and the ranks below are stable. */
    K k[IPT];
    R r[IPT];
    uint32_t rank[IPT]; /* within the warp and digit; the digit is taken from the key again */
#pragma unroll
    for (int j = 0; j < IPT; j++) {
        const int idx = warp * 32 * IPT + j * 32 + lane;
        if (idx < valid) {
            k[j] = kin[base + idx];
            if constexpr (HAS_ROW && !kLateRows)
                r[j] = rin.get(base + idx);
        }
    }
    const unsigned lt = (1u << lane) - 1;
#pragma unroll
    for (int j = 0; j < IPT; j++) {
        /* padding items: digit kBins, counted apart, never written */
        const uint32_t dj = warp * 32 * IPT + j * 32 + lane < valid ? digit(k[j], shift, mask)
                                                                     : (uint32_t)kBins;
        const unsigned peers = match_peers(dj, b);
        const int leader = __ffs(peers) - 1;
        uint32_t old = lane == leader ? wc[warp][dj] : 0u;
        old = __shfl_sync(0xFFFFFFFFu, old, leader);
        rank[j] = old + __popc(peers & lt);
        if (lane == leader)
            wc[warp][dj] = old + __popc(peers);
        __syncwarp();
    }
    __syncthreads();

    /* Thread tid = digit tid: the tile's count, each warp's first rank within the digit,
     * the digit's first rank in the tile; then the count is published. */
    uint32_t tot = 0;
#pragma unroll
    for (int w = 0; w < kWarps; w++) {
        const uint32_t c = wc[w][tid];
        wc[w][tid] = tot;
        tot += c;
    }
    uint32_t ts;
    Scan(scan_tmp).ExclusiveSum(tot, ts);
    tstart[tid] = ts;
    uint32_t *my = status + tile * kBins + tid;
    if ((uint32_t)tid <= mask)
        st_status(my, (tile == 0 ? kFlagInc : kFlagAgg) | tot);
    __syncthreads();

    /* Stage the tile in digit order. */
#pragma unroll
    for (int j = 0; j < IPT; j++) {
        if (warp * 32 * IPT + j * 32 + lane < valid) {
            const uint32_t dj = digit(k[j], shift, mask);
            const uint32_t at = tstart[dj] + wc[warp][dj] + rank[j];
            sk[at] = k[j];
            if constexpr (HAS_ROW)
                sr[at] = kLateRows ? rin.get(base + warp * 32 * IPT + j * 32 + lane) : r[j];
        }
    }

    /* Look-back: the digit's rows in the earlier tiles. Tiles are numbered in the order
     * they started, so every earlier tile is running or done and publishes. */
    if ((uint32_t)tid <= mask) {
        uint32_t excl = 0;
        if (tile > 0) {
            /* kWindow earlier tiles' words read at once (independent loads), used nearest
             * first: aggregates are added until an inclusive prefix; an unpublished
             * word ends the window and is read again. */
            for (int64_t t = tile - 1;;) {
                uint32_t w[kWindow];
#pragma unroll
                for (int i = 0; i < kWindow; i++)
                    w[i] = t - i >= 0 ? ld_status(status + (t - i) * kBins + tid) : kFlagInc;
                int used = 0;
                bool done = false;
#pragma unroll
                for (int i = 0; i < kWindow; i++) {
                    if (done || used < i || (w[i] & ~kValMask) == 0)
                        break;
                    excl += w[i] & kValMask;
                    used++;
                    done = (w[i] & kFlagInc) != 0;
                }
                if (done)
                    break;
                if (used == 0)
                    __nanosleep(32); /* the nearest is not published yet */
                t -= used;
            }
            st_status(my, kFlagInc | (excl + tot));
        }
        off[tid] = gstart + excl - ts;
    }
    __syncthreads();

    /* Row at of the staged tile goes to off[digit] + at: runs of one digit are written
     * by consecutive threads. */
#pragma unroll
    for (int j = 0; j < IPT; j++) {
        const int at = j * kThreads + tid;
        if (at < valid) {
            const K key = sk[at];
            const uint32_t pos = off[digit(key, shift, mask)] + (uint32_t)at;
            kout[pos] = key;
            if constexpr (HAS_ROW)
                rout[pos] = sr[at];
        }
    }
}

/* Bytes of the control block (histograms, tile counters, status words) for n rows. */
template <typename K, typename R>
inline size_t ctrl_bytes(int64_t n, int npass)
{
    constexpr int kTile = kThreads * Ipt<K, R>::value;
    const int64_t tiles = (n + kTile - 1) / kTile;
    return (size_t)(kMaxPasses * kBins + 64) * 4 + (size_t)npass * (size_t)tiles * kBins * 4;
}

inline size_t align256(size_t x)
{
    return (x + 255) & ~(size_t)255;
}

/* The whole partitioning: 1 or 2 passes (bits <= 16), temp as the two-call pattern
 * asks (control block, then the middle pass's keys and rows). Writes outputs only. */
template <typename K, typename R, bool HAS_ROW, typename Src>
cudaError_t run(void *d_temp, size_t *temp_bytes, const K *kin, K *kout, const Src &rin, R *rout,
                int64_t n, int lo, int bits, cudaStream_t stream)
{
    if (temp_bytes == NULL || n < 0 || n >= kMaxRows || bits < 1 || bits > 16 || lo < 0 ||
        lo + bits > (int)(8 * sizeof(K)))
        return cudaErrorInvalidValue;
    constexpr int kTile = kThreads * Ipt<K, R>::value;
    const int npass = (bits + 7) / 8;
    const int64_t tiles = (n + kTile - 1) / kTile;
    const size_t cb = align256(ctrl_bytes<K, R>(n, npass));
    const size_t kb = npass > 1 ? align256((size_t)n * sizeof(K)) : 0;
    const size_t rb = npass > 1 && HAS_ROW ? align256((size_t)n * sizeof(R)) : 0;
    if (d_temp == NULL) {
        *temp_bytes = cb + kb + rb;
        return cudaSuccess;
    }
    if (*temp_bytes < cb + kb + rb || (n > 0 && (!kin || !kout || (HAS_ROW && !rout))))
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    char *p = (char *)d_temp;
    uint32_t *hist = (uint32_t *)p;
    uint32_t *ctr = hist + kMaxPasses * kBins;
    uint32_t *status = ctr + 64;
    K *tk = (K *)(p + cb);
    R *tr = (R *)(p + cb + kb);
    cudaError_t e = cudaMemsetAsync(p, 0, ctrl_bytes<K, R>(n, npass), stream);
    if (e != cudaSuccess)
        return e;
    const int64_t hgrid = tiles < 2048 ? tiles : 2048;
    hist_kernel<K><<<(unsigned)hgrid, kThreads, 0, stream>>>(kin, n, lo, bits, hist);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    const size_t smem = (size_t)kTile * (sizeof(K) + (HAS_ROW ? sizeof(R) : 0));
    /* Past 48 KB of shared memory a block (static + dynamic) needs the opt-in. */
    if ((e = cudaFuncSetAttribute(scatter_kernel<K, R, HAS_ROW, Src>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem)) !=
            cudaSuccess ||
        (npass > 1 && (e = cudaFuncSetAttribute(scatter_kernel<K, R, HAS_ROW, RowPtr<R>>,
                                                cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                (int)smem)) != cudaSuccess))
        return e;
    /* Pass 0 reads rin; pass 1 (bits > 8) the middle arrays in temp. */
    K *k0 = npass > 1 ? tk : kout;
    R *r0 = npass > 1 ? tr : rout;
    scatter_kernel<K, R, HAS_ROW, Src><<<(unsigned)tiles, kThreads, smem, stream>>>(
        kin, rin, k0, r0, n, lo, bits < 8 ? bits : 8, hist, status, ctr);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    if (npass > 1) {
        scatter_kernel<K, R, HAS_ROW, RowPtr<R>><<<(unsigned)tiles, kThreads, smem, stream>>>(
            tk, RowPtr<R>{tr}, kout, rout, n, lo + 8, bits - 8, hist + kBins,
            status + (size_t)tiles * kBins, ctr + 1);
        if ((e = cudaGetLastError()) != cudaSuccess)
            return e;
    }
    return cudaGetLastError();
}

} // namespace pchain
} // namespace sluice_k

#endif /* SLUICE_K_PARTITION_CHAIN_CUH */
