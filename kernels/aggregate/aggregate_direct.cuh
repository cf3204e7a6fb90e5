/* Many-groups path of the GPU group-by (issue 19): a global table of records
 * (sl_k_agg_dtable). Takes what the few-groups path takes (one int32 or int64 key,
 * count/sum/avg/min/max of int32/int64 values, no nulls).
 *
 * A group is one record of 64-bit words [key, rows, states...] (a sum: lo and hi word,
 * exact in 128 bits as the generic table; min/max: one word), so a row costs one random
 * record, not the generic table's slot, key, row and state arrays. The slot is the top
 * log_slots bits of the key's 64-bit hash (as load_key<1/2>), probed linearly; the
 * partitioned method partitions by the top bits of the same hash, so a partitioned input
 * visits the table region by region and the region in use stays in L2. The key equal to
 * the empty marker (INT64_MIN; an int32 key is stored sign-extended and never equals it)
 * has the extra record n_slots, whose key word is 0 until claimed. */
#ifndef SLUICE_K_AGGREGATE_DIRECT_CUH
#define SLUICE_K_AGGREGATE_DIRECT_CUH

#include <cub/block/block_scan.cuh>

#include "aggregate_kernels.cuh"
#include "aggregate_small.cuh"

namespace sluice_k {
namespace agg {

constexpr long long kDirectEmpty = (long long)0x8000000000000000ull;
constexpr int kDirectProbes = 64;

/* Word of each aggregate's state in a record (-1: reads the row count), words a record. */
struct DirectLayout {
    int words;
    int off[kMaxA];
};

__device__ __forceinline__ uint64_t direct_hash(int64_t k)
{
    return mix64(0x9E3779B97F4A7C15ull ^ (uint64_t)k); /* as load_key<1/2> */
}

/* Record of key k (claimed if new; *claims counts the claims), or -1: no room within
 * kDirectProbes slots. */
__device__ __forceinline__ int64_t direct_find(const sl_k_agg_dtable &dt, int64_t k,
                                               unsigned *claims)
{
    unsigned long long *rec = dt.d_rec;
    const int W = dt.words;
    if (k == kDirectEmpty) {
        unsigned long long *kw = rec + dt.n_slots * (uint64_t)W;
        if (*(volatile unsigned long long *)kw == 0 && atomicCAS(kw, 0ull, 1ull) == 0)
            (*claims)++;
        return (int64_t)dt.n_slots;
    }
    const uint64_t mask = dt.n_slots - 1;
    uint64_t pos = direct_hash(k) >> (64 - dt.log_slots);
    for (int p = 0; p < kDirectProbes; p++) {
        unsigned long long *kw = rec + pos * (uint64_t)W;
        long long cur = *(volatile long long *)kw;
        if (cur == kDirectEmpty) {
            cur = (long long)atomicCAS(kw, (unsigned long long)kDirectEmpty, (unsigned long long)k);
            if (cur == kDirectEmpty) {
                (*claims)++;
                return (int64_t)pos;
            }
        }
        if (cur == k)
            return (int64_t)pos;
        pos = (pos + 1) & mask;
    }
    return -1;
}

/* Whether a + b overflows int64 (then a run's partial sum is flushed first). */
__device__ __forceinline__ bool add_overflows(int64_t a, int64_t b)
{
    const int64_t s = (int64_t)((uint64_t)a + (uint64_t)b);
    return ((a ^ s) & (b ^ s)) < 0;
}

/* Rows [r0, r0 + N): the keys and the first two states' values load together (one
 * memory wait), then each run of equal keys among them updates its record once (an
 * input clustered by key, such as lineitem by l_orderkey, has runs of several rows; an
 * unclustered one rarely: one compare a row). The runs are walked backwards so that
 * every array index is a constant (registers, no local memory). */
template <typename K, int N>
__device__ __forceinline__ void direct_rows(const sl_k_agg_spec &sp, const sl_k_agg_input &in,
                                            const sl_k_agg_dtable &dt, const DirectLayout &L,
                                            int64_t r0, bool vec, unsigned *claims,
                                            unsigned *fails)
{
    int64_t kx[N], pre[kSmallPre][N];
    small_load<N>(in.keys[0].d_data, sizeof(K) == 4 ? SL_K_I32 : SL_K_I64, r0, vec, kx);
    small_preload<N>(sp, in, L.off, r0, vec, pre);
    bool head[N];
    int64_t s[N];
#pragma unroll
    for (int i = 0; i < N; i++) {
        head[i] = i == 0 || kx[i] != kx[i - 1];
        s[i] = head[i] ? direct_find(dt, kx[i], claims) : s[i > 0 ? i - 1 : 0];
    }
    unsigned run = 0;
#pragma unroll
    for (int i = N - 1; i >= 0; i--) {
        run++;
        if (!head[i])
            continue;
        if (s[i] < 0)
            *fails += run;
        else
            atomicAdd(&dt.d_rec[s[i] * dt.words + 1], (unsigned long long)run);
        run = 0;
    }
    for (int a = 0; a < sp.n_aggs; a++) {
        const int o = L.off[a];
        if (o < 0)
            continue;
        const int kd = kind_of(sp.fn[a], sp.in_type[a]);
        int64_t x[N];
        small_vals<N>(sp, in, a, pre, r0, vec, x);
        int64_t acc = 0;
        bool any = false;
#pragma unroll
        for (int i = N - 1; i >= 0; i--) {
            if (s[i] < 0)
                continue; /* the whole run failed (counted above) */
            unsigned long long *w = dt.d_rec + s[i] * dt.words + o;
            if (!any) {
                acc = x[i];
            } else if (kd == K_SUMI) {
                if (add_overflows(acc, x[i])) { /* flush the partial, go on from x[i] */
                    update_val(kd, w, (long long *)(w + 1), 0, (uint64_t)acc);
                    acc = x[i];
                } else {
                    acc += x[i];
                }
            } else {
                acc = kd == K_MINI ? (x[i] < acc ? x[i] : acc) : (x[i] > acc ? x[i] : acc);
            }
            any = !head[i];
            if (head[i])
                update_val(kd, w, (long long *)(w + 1), 0, (uint64_t)acc);
        }
    }
}

/* One warp-aggregated add of every thread's count to *ctr. */
__device__ __forceinline__ void warp_count_add(unsigned long long *ctr, unsigned c)
{
#pragma unroll
    for (int d = 16; d > 0; d >>= 1)
        c += __shfl_down_sync(~0u, c, d);
    if ((threadIdx.x & 31) == 0 && c)
        atomicAdd(ctr, (unsigned long long)c);
}

/* Persistent grid; thread q takes rows [4q, 4q + 4) of step `it`, so all blocks walk the
 * input together (a partitioned input: a few partitions' regions at a time). */
template <typename K>
__global__ void __launch_bounds__(kThreads, 2)
    direct_update_kernel(sl_k_agg_spec sp, sl_k_agg_input in, sl_k_agg_dtable dt,
                         DirectLayout L, bool vec)
{
    unsigned claims = 0, fails = 0;
    const int64_t nq = in.n / kSmallItems;
    for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < nq;
         q += (int64_t)gridDim.x * blockDim.x)
        direct_rows<K, kSmallItems>(sp, in, dt, L, q * kSmallItems, vec, &claims, &fails);
    if (blockIdx.x == gridDim.x - 1)
        for (int64_t r = nq * kSmallItems + threadIdx.x; r < in.n; r += blockDim.x)
            direct_rows<K, 1>(sp, in, dt, L, r, false, &claims, &fails);
    warp_count_add(&dt.d_n[0], claims);
    warp_count_add(&dt.d_n[1], fails);
}

/* Empties every record: key empty (the extra record's key word 0), rows 0, states at
 * their initial values. Thread i writes word i of the table (init[i % words]), so that a
 * warp's stores are contiguous (a record per thread wrote 8 bytes of every 32-byte
 * sector at a time). */
struct DirectInit {
    unsigned long long w[2 + 2 * kMaxA];
};

__global__ void direct_clear_kernel(sl_k_agg_dtable dt, DirectInit init)
{
    /* A stride that is a multiple of the record: each thread keeps its word's value. */
    const uint64_t W = (uint64_t)dt.words, n = dt.n_slots * W;
    const uint64_t step = (uint64_t)gridDim.x * blockDim.x / W * W;
    const uint64_t i0 = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i0 < step) {
        const unsigned long long v = init.w[i0 % W];
        for (uint64_t i = i0; i < n; i += step)
            dt.d_rec[i] = v;
    }
    if (blockIdx.x == 0 && threadIdx.x < W) /* the extra record: key word 0 */
        dt.d_rec[n + threadIdx.x] = threadIdx.x == 0 ? 0ull : init.w[threadIdx.x];
    if (blockIdx.x == 0 && threadIdx.x < 2)
        dt.d_n[threadIdx.x] = 0;
}

/* Writes every used record as an output row. Each block takes tiles of kOutItems
 * consecutive records a thread; a block scan of the threads' used records places the
 * tile's rows after one atomic on *out.d_count (zeroed by the caller, ends at the number
 * of groups), so a thread's rows are consecutive and a warp's too. At 2^24 groups (2^25
 * slots) it takes 1.79 ms, as one atomic a warp did (1.77; H100, ncu: L2 93% busy, DRAM
 * 37%): the limit is the L2 traffic of the reads and the scattered stores, not the
 * counter. */
constexpr int kOutItems = 4;

__global__ void __launch_bounds__(256)
    direct_output_kernel(sl_k_agg_spec sp, sl_k_agg_dtable dt, DirectLayout L,
                         sl_k_agg_out out, int32_t *status)
{
    using Scan = cub::BlockScan<unsigned, 256>;
    __shared__ typename Scan::TempStorage scan_tmp;
    __shared__ unsigned long long tile_base;
    const uint64_t n = dt.n_slots + 1;
    const uint64_t tile = (uint64_t)blockDim.x * kOutItems;
    for (uint64_t t0 = (uint64_t)blockIdx.x * tile; t0 < n; t0 += (uint64_t)gridDim.x * tile) {
        const uint64_t r0 = t0 + (uint64_t)threadIdx.x * kOutItems;
        bool has[kOutItems];
        unsigned c = 0;
#pragma unroll
        for (int i = 0; i < kOutItems; i++) {
            const uint64_t r = r0 + i;
            const unsigned long long kw = r < n ? dt.d_rec[r * dt.words] : 0;
            has[i] = r < n && (r == dt.n_slots ? kw != 0 : (long long)kw != kDirectEmpty);
            c += has[i];
        }
        unsigned ex, total;
        Scan(scan_tmp).ExclusiveSum(c, ex, total);
        if (threadIdx.x == 0)
            tile_base = total ? atomicAdd(out.d_count, (unsigned long long)total) : 0;
        __syncthreads();
        int64_t o = (int64_t)tile_base + ex;
        __syncthreads(); /* tile_base and scan_tmp are reused by the next tile */
#pragma unroll
        for (int i = 0; i < kOutItems; i++) {
            if (!has[i])
                continue;
            const uint64_t r = r0 + i;
            if (o < out.cap) {
                const unsigned long long *w = dt.d_rec + r * dt.words;
                unsigned long long v0[kMaxA], nn[kMaxA];
                long long v1[kMaxA];
                for (int a = 0; a < sp.n_aggs; a++) {
                    const int off = L.off[a];
                    const int kd = kind_of(sp.fn[a], sp.in_type[a]);
                    v0[a] = off >= 0 ? w[off] : 0;
                    v1[a] = off >= 0 && kd == K_SUMI ? (long long)w[off + 1] : 0;
                    nn[a] = 0;
                }
                const int64_t k = r == dt.n_slots ? (int64_t)kDirectEmpty : (int64_t)w[0];
                write_row(sp, out, o, &k, 1, 0, w[1], v0, v1, nn, status);
            }
            o++;
        }
    }
}

/* ---- the tile partitioner (sl_k_agg_direct_partition, sl_k_agg_tile_partition) ----
 * Each block takes one contiguous chunk of the input. A count kernel writes each block's
 * rows per partition (hist[cell]); their exclusive sum gives every (partition, block)
 * run its place. The scatter kernel then takes its chunk a tile at a time, sorts the
 * tile by partition in shared memory and writes each partition's rows of the tile as
 * one contiguous run (coalesced; scattering row by row made 2^28 rows take ~30 ms).
 * A pass takes at most 8 bits. A second pass (DPartSeg.o1 set) splits each partition of
 * the first by the next bits: its blocks' chunks lie within one first-level partition
 * (chunk table cstart), so a block still sees at most 256 partitions, and its cells are
 * ordered (first-level partition, digit, chunk): the scan keeps the first level's order. */
/* Rows a thread of the scatter kernel takes a tile: eight for a 32-bit key and at most
 * one value column (tiles of 4,096 rows: runs of a partition twice as long, half the
 * barriers a row; two passes of 13 bits over 2^28 rows, count + sum: 8.59 ms against
 * 9.78 with four, H100, 2026-11-27), four otherwise (their registers). The eight is a compile-time
 * switch, so that a bench program can build four beside it (bench/meson.build). */
#ifndef SL_K_AGG_PART_ITEMS
#define SL_K_AGG_PART_ITEMS 8
#endif
template <typename K>
__host__ __device__ constexpr int dpart_items(int nv)
{
    return nv <= 1 && sizeof(K) == 4 ? SL_K_AGG_PART_ITEMS : 4;
}
template <typename K>
__host__ __device__ constexpr int64_t dpart_tile(int nv)
{
    return (int64_t)kThreads * dpart_items<K>(nv);
}
static_assert(dpart_tile<int32_t>(0) <= 65536, "the scatter kernel's ranks are 16-bit");
constexpr int kPartVals = 4; /* value columns it moves (more: the generic partitioner) */

struct DPartCols {
    int n_vals;
    const void *src[kPartVals];
    void *dst[kPartVals];
    int w[kPartVals];
};

/* Where a block's rows and cells are. Pass 1 (o1 NULL): chunk blockIdx of n rows in
 * gridDim pieces, cell of digit q = q * gridDim + blockIdx. Pass 2: the first-level
 * partition p1 with cstart[p1] <= blockIdx < cstart[p1 + 1] (cstart[p1_count]: chunks in
 * all), chunk j = blockIdx - cstart[p1] of `chunk` rows of [o1[p1], o1[p1 + 1]), cell
 * cstart[p1] * 2^bits + q * (its chunks) + j. */
struct DPartSeg {
    const int64_t *o1;
    const unsigned *cstart;
    int p1_count;
    int shift;          /* bits of the hash above this pass's digit */
    int64_t chunk;
};

struct DPartBlock {
    int64_t lo, hi, cell0, cell_step;
};

__device__ __forceinline__ DPartBlock dpart_block(const DPartSeg &g, int64_t n, int bits)
{
    DPartBlock r;
    if (!g.o1) {
        const int64_t per = (n + gridDim.x - 1) / gridDim.x;
        r.lo = min(n, (int64_t)blockIdx.x * per);
        r.hi = min(n, r.lo + per);
        r.cell0 = blockIdx.x;
        r.cell_step = gridDim.x;
        return r;
    }
    const unsigned b = blockIdx.x;
    r.lo = r.hi = r.cell0 = r.cell_step = 0;
    if (b >= g.cstart[g.p1_count])
        return r;
    int lo = 0, hi = g.p1_count - 1; /* last p1 with cstart[p1] <= b */
    while (lo < hi) {
        const int m = (lo + hi + 1) / 2;
        if (g.cstart[m] <= b)
            lo = m;
        else
            hi = m - 1;
    }
    const unsigned c0 = g.cstart[lo], nc = g.cstart[lo + 1] - c0, j = b - c0;
    r.lo = g.o1[lo] + (int64_t)j * g.chunk;
    r.hi = min(g.o1[lo + 1], r.lo + g.chunk);
    r.cell0 = ((int64_t)c0 << bits) + j;
    r.cell_step = nc;
    return r;
}

__device__ __forceinline__ unsigned dpart_digit(int64_t k, int shift, int bits)
{
    return (unsigned)((direct_hash(k) << shift) >> (64 - bits));
}

constexpr int kCountItems = 8;

template <typename K>
__global__ void __launch_bounds__(kThreads)
    dpart_count_kernel(const K *keys, int64_t n, int bits, DPartSeg g, unsigned *hist)
{
    __shared__ unsigned h[256];
    const int P = 1 << bits;
    const DPartBlock r = dpart_block(g, n, bits);
    if (r.cell_step == 0)
        return;
    for (int i = threadIdx.x; i < P; i += blockDim.x)
        h[i] = 0;
    __syncthreads();
    /* kCountItems loads in flight a thread: one at a time, the count of a 7-bit pass over
     * 2^28 keys took 1.8 ms (H100, ncu: DRAM 18% busy; a block an SM then), eight 0.44 ms
     * (DRAM 77%, 2026-11-27). */
    const int64_t step = blockDim.x;
    int64_t e = r.lo + threadIdx.x;
    for (; e + (kCountItems - 1) * step < r.hi; e += kCountItems * step) {
        K k[kCountItems];
#pragma unroll
        for (int j = 0; j < kCountItems; j++)
            k[j] = keys[e + j * step];
#pragma unroll
        for (int j = 0; j < kCountItems; j++)
            atomicAdd(&h[dpart_digit((int64_t)k[j], g.shift, bits)], 1u);
    }
    for (; e < r.hi; e += step)
        atomicAdd(&h[dpart_digit((int64_t)keys[e], g.shift, bits)], 1u);
    __syncthreads();
    for (int i = threadIdx.x; i < P; i += blockDim.x)
        hist[r.cell0 + (int64_t)i * r.cell_step] = h[i];
}

__device__ __forceinline__ uint64_t dpart_ld(const void *p, int w, int64_t i)
{
    return w == 4 ? ((const uint32_t *)p)[i] : ((const uint64_t *)p)[i];
}

__device__ __forceinline__ void dpart_st(void *p, int w, int64_t i, uint64_t x)
{
    if (w == 4)
        ((uint32_t *)p)[i] = (uint32_t)x;
    else
        ((uint64_t *)p)[i] = x;
}

/* Shared bytes of the scatter kernel's tile with NV value columns. */
template <typename K>
__host__ __device__ constexpr size_t dpart_smem(int nv)
{
    return (size_t)dpart_tile<K>(nv) * (8 * (size_t)nv + sizeof(K) + 2);
}

/* A tile's rows in registers: thread t holds rows t, t + kThreads, ... of the tile. */
template <typename K, int NV>
struct DPartRegs {
    K k[dpart_items<K>(NV)];
    uint64_t v[NV > 0 ? NV : 1][dpart_items<K>(NV)];
};

template <typename K, int NV>
__device__ __forceinline__ void dpart_tile_load(const K *keys, const DPartCols &c, int64_t base,
                                                int tn, DPartRegs<K, NV> &t)
{
#pragma unroll
    for (int it = 0; it < dpart_items<K>(NV); it++) {
        const int i = it * kThreads + threadIdx.x;
        if (i >= tn)
            continue;
        t.k[it] = keys[base + i];
#pragma unroll
        for (int j = 0; j < NV; j++)
            t.v[j][it] = dpart_ld(c.src[j], c.w[j], base + i);
    }
}

/* offs[cell]: where a block's rows of a digit start in the output. NV: value columns
 * (c.n_vals), so that the tile in shared memory and the values in registers are sized
 * for them: with room for four, a block of one value column held 78 KB and its
 * registers one block an SM (a 6-bit pass of 2^28 rows took 7.8 ms, H100; sized,
 * the two passes of 13 bits take 11.5 ms against 15.6). The next tile's rows load while
 * this one is sorted and written (PF, where the registers hold two tiles), so that a
 * block's loads do not wait behind the tile's barriers (with the count's eight loads a
 * thread, four rows a thread: the two passes of 13 bits 11.46 -> 9.72 ms, H100). */
template <typename K, int NV>
__global__ void __launch_bounds__(kThreads, 2)
    dpart_scatter_kernel(const K *keys, int64_t n, int bits, DPartSeg g, const unsigned *offs,
                         K *okeys, DPartCols c)
{
    constexpr int IT = dpart_items<K>(NV);
    constexpr int64_t TILE = dpart_tile<K>(NV);
    /* The registers of two tiles: at most 24 32-bit words of a tile a thread. */
    constexpr bool PF = ((int)sizeof(K) / 4 + 2 * NV) * IT <= 24;
    using Scan = cub::BlockScan<unsigned, kThreads>;
    __shared__ typename Scan::TempStorage scan_tmp;
    __shared__ unsigned cur[256], th[256], tof[256];
    uint64_t *sv = (uint64_t *)agg_smem; /* [NV][TILE] */
    K *sk = (K *)(sv + (size_t)NV * TILE);
    unsigned short *spart = (unsigned short *)(sk + TILE);
    const int P = 1 << bits;
    const DPartBlock r = dpart_block(g, n, bits);
    if (r.cell_step == 0)
        return;
    if (threadIdx.x < P)
        cur[threadIdx.x] = offs[r.cell0 + (int64_t)threadIdx.x * r.cell_step];
    DPartRegs<K, NV> t;
    if (PF && r.lo < r.hi)
        dpart_tile_load<K, NV>(keys, c, r.lo, (int)min((int64_t)TILE, r.hi - r.lo), t);
    for (int64_t base = r.lo; base < r.hi; base += TILE) {
        const int tn = (int)min((int64_t)TILE, r.hi - base);
        if (threadIdx.x < P)
            th[threadIdx.x] = 0;
        if (!PF)
            dpart_tile_load<K, NV>(keys, c, base, tn, t);
        __syncthreads();
        unsigned qr[IT]; /* digit << 16 | rank among the tile's rows of the digit */
#pragma unroll
        for (int it = 0; it < IT; it++) {
            if (it * kThreads + (int)threadIdx.x >= tn)
                continue;
            const unsigned q = dpart_digit((int64_t)t.k[it], g.shift, bits);
            qr[it] = q << 16 | atomicAdd(&th[q], 1u);
        }
        __syncthreads();
        unsigned x = threadIdx.x < P ? th[threadIdx.x] : 0, ex;
        Scan(scan_tmp).ExclusiveSum(x, ex);
        if (threadIdx.x < P)
            tof[threadIdx.x] = ex;
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
        if (PF && base + TILE < r.hi) /* the next tile loads while this one is written */
            dpart_tile_load<K, NV>(keys, c, base + TILE,
                                   (int)min((int64_t)TILE, r.hi - base - TILE), t);
        __syncthreads();
        for (int i = threadIdx.x; i < tn; i += kThreads) {
            const unsigned p = spart[i];
            const int64_t d = (int64_t)cur[p] + (i - (int)tof[p]);
            okeys[d] = sk[i];
#pragma unroll
            for (int j = 0; j < NV; j++)
                dpart_st(c.dst[j], c.w[j], d, sv[(size_t)j * TILE + i]);
        }
        __syncthreads();
        if (threadIdx.x < P)
            cur[threadIdx.x] += th[threadIdx.x];
    }
}

/* Between the passes (one block): the first level's partition starts o1[p] = offs1[p *
 * grid1] (o1[p1_count] = n) and its chunk table: cstart[p] = chunks of `chunk` rows of
 * the partitions before p. */
constexpr int kChunkThreads = 512; /* dpart_chunks_kernel: first-level partitions + 1 */
__global__ void __launch_bounds__(kChunkThreads)
    dpart_chunks_kernel(const unsigned *offs1, int grid1, int p1_count, int64_t n,
                        int64_t chunk, int64_t *o1, unsigned *cstart)
{
    using Scan = cub::BlockScan<unsigned, kChunkThreads>;
    __shared__ typename Scan::TempStorage tmp;
    const int p = threadIdx.x;
    const int64_t lo = p < p1_count ? (int64_t)offs1[(int64_t)p * grid1] : n;
    const int64_t hi = p + 1 < p1_count ? (int64_t)offs1[(int64_t)(p + 1) * grid1] : n;
    const unsigned nc = p < p1_count ? (unsigned)((hi - lo + chunk - 1) / chunk) : 0;
    unsigned ex;
    Scan(tmp).ExclusiveSum(nc, ex);
    if (p <= p1_count) {
        o1[p] = lo;
        cstart[p] = ex;
    }
}

/* The partitions' offsets (2^(b1 + b2) + 1) after the second pass: partition (p1, q)
 * starts at its first chunk's cell, or at o1[p1] when p1 has no rows. */
__global__ void dpart_offsets_kernel(const unsigned *offs2, const int64_t *o1,
                                     const unsigned *cstart, int b1, int b2, int64_t n,
                                     int64_t *d_offsets)
{
    const int P = 1 << (b1 + b2);
    for (int pid = blockIdx.x * blockDim.x + threadIdx.x; pid <= P;
         pid += gridDim.x * blockDim.x) {
        if (pid == P) {
            d_offsets[pid] = n;
            continue;
        }
        const int p1 = pid >> b2, q = pid & ((1 << b2) - 1);
        const unsigned c0 = cstart[p1], nc = cstart[p1 + 1] - c0;
        d_offsets[pid] = nc ? (int64_t)offs2[((int64_t)c0 << b2) + (int64_t)q * nc] : o1[p1];
    }
}

} // namespace agg
} // namespace sluice_k

#endif /* SLUICE_K_AGGREGATE_DIRECT_CUH */
