/* __global__ entry points of the GPU group-by (see sluice_k/aggregate.h). */
#ifndef SLUICE_K_AGGREGATE_KERNELS_CUH
#define SLUICE_K_AGGREGATE_KERNELS_CUH

#include "aggregate_rows.cuh"

namespace sluice_k {
namespace agg {

constexpr int kThreads = 512;
constexpr int kItems = 4;          /* rows per thread in flight (independent loads) */

/* State arrays of the shared table (SAcc) or the global table (GAcc) as update_rows uses
 * them: rows per group, and per aggregate the value word, the hi word of integer sums and
 * the count of skipped nulls. */
struct SAcc {
    const Smem &s;
    __device__ unsigned int *rows() const { return s.rows(); }
    __device__ unsigned long long *v0(int a) const { return s.v0(a); }
    __device__ int *v1(int a) const { return s.v1(a); }
    __device__ unsigned int *nn(int a) const { return s.nn(a); }
};

struct GAcc {
    const sl_k_agg_table &tb;
    __device__ unsigned long long *rows() const { return tb.d_rows; }
    __device__ unsigned long long *v0(int a) const { return tb.d_v0[a]; }
    __device__ long long *v1(int a) const { return tb.d_v1[a]; }
    __device__ unsigned long long *nn(int a) const { return tb.d_nn[a]; }
};

/* Values of the first kPre aggregates, loaded together with the keys so that a tile
 * waits for memory once (the lookups need only the keys); later aggregates load in
 * update_rows. */
constexpr int kPre = 2;
struct Pre {
    uint64_t x[kPre][kItems];
    bool null[kPre][kItems];
};

__device__ __forceinline__ void load_val(const sl_k_agg_spec &sp, const sl_k_agg_input &in, int a,
                                         int64_t e, uint64_t &x, bool &null)
{
    int kd = kind_of(sp.fn[a], sp.in_type[a]);
    x = 0;
    null = false;
    if (kd == K_NONE || e < 0)
        return;
    null = in.d_nullbits ? (in.d_nullbits[e] >> (16 + a) & 1) : !bit_valid(in.vals[a], e);
    if (!null && kd != K_COUNT)
        x = ld_val(in.vals[a].d_data, sp.in_type[a], e);
}

__device__ __forceinline__ void load_pre(const sl_k_agg_spec &sp, const sl_k_agg_input &in,
                                         const int64_t *e, Pre &pre)
{
#pragma unroll
    for (int a = 0; a < kPre; a++)
#pragma unroll
        for (int it = 0; it < kItems; it++)
            load_val(sp, in, a < sp.n_aggs ? a : 0, a < sp.n_aggs ? e[it] : -1, pre.x[a][it],
                     pre.null[a][it]);
}

/* Adds rows e[it] (of groups idx[it], -1 = not here) to the states of `st`. */
template <typename Acc>
__device__ __forceinline__ void update_rows(const sl_k_agg_spec &sp, const sl_k_agg_input &in,
                                            const Acc &st, const int64_t *e, const int64_t *idx,
                                            const Pre &pre)
{
#pragma unroll
    for (int it = 0; it < kItems; it++)
        if (idx[it] >= 0)
            atomicAdd(&st.rows()[idx[it]], 1u);
#pragma unroll
    for (int a = 0; a < kPre; a++) {
        if (a >= sp.n_aggs)
            break;
        int kd = kind_of(sp.fn[a], sp.in_type[a]);
        if (kd == K_NONE)
            continue;
#pragma unroll
        for (int it = 0; it < kItems; it++) {
            if (idx[it] < 0)
                continue;
            if (pre.null[a][it])
                atomicAdd(&st.nn(a)[idx[it]], 1u);
            else
                update_val(kd, st.v0(a), st.v1(a), idx[it], pre.x[a][it]);
        }
    }
    for (int a = kPre; a < sp.n_aggs; a++) {
        int kd = kind_of(sp.fn[a], sp.in_type[a]);
        if (kd == K_NONE)
            continue;
        bool null[kItems];
        uint64_t x[kItems];
#pragma unroll
        for (int it = 0; it < kItems; it++)
            load_val(sp, in, a, idx[it] >= 0 ? e[it] : -1, x[it], null[it]);
#pragma unroll
        for (int it = 0; it < kItems; it++) {
            if (idx[it] < 0)
                continue;
            if (null[it])
                atomicAdd(&st.nn(a)[idx[it]], 1u);
            else
                update_val(kd, st.v0(a), st.v1(a), idx[it], x[it]);
        }
    }
}

/* The sum of the 128-bit values (lo, hi) of the lanes in `peers` (this lane's group,
 * __match_any_sync), at the lowest of them; other lanes' results are partial. A
 * pairwise tree over the peers' ranks: each round a lane adds the next peer above it
 * that is still open, then the lanes at odd ranks close (their value was taken).
 * Every lane of the warp must call it (shuffles and ballots take the whole warp). */
__device__ __forceinline__ void peers_sum128(unsigned peers, uint64_t &lo, long long &hi)
{
    const int lane = threadIdx.x & 31;
    unsigned rank = __popc(peers & ((1u << lane) - 1));
    unsigned above = peers & (0xfffffffeu << lane);
    while (__any_sync(0xffffffffu, above)) {
        int next = __ffs(above) - 1; /* -1: none; the shuffle then reads this lane */
        uint64_t tlo = __shfl_sync(0xffffffffu, lo, next < 0 ? lane : next);
        long long thi = __shfl_sync(0xffffffffu, hi, next < 0 ? lane : next);
        if (next >= 0) {
            uint64_t s = lo + tlo;
            hi += thi + (s < lo ? 1 : 0);
            lo = s;
        }
        above &= ~__ballot_sync(0xffffffffu, rank & 1);
        rank >>= 1;
    }
}

/* Aggregate a's values of the rows e (groups idx, -1 = not here): preloaded (a < kPre,
 * read by constant indices so that pre stays in registers) or loaded now, the kItems
 * loads issued together. */
static_assert(kPre == 2, "agg_values reads pre.x[0] or pre.x[1]");
__device__ __forceinline__ void agg_values(const sl_k_agg_spec &sp, const sl_k_agg_input &in,
                                           const Pre &pre, const int64_t *e, const int64_t *idx,
                                           int a, uint64_t (&x)[kItems], bool (&null)[kItems])
{
#pragma unroll
    for (int it = 0; it < kItems; it++) {
        if (a < kPre) {
            x[it] = a == 0 ? pre.x[0][it] : pre.x[1][it];
            null[it] = a == 0 ? pre.null[0][it] : pre.null[1][it];
        } else {
            load_val(sp, in, a, idx[it] >= 0 ? e[it] : -1, x[it], null[it]);
        }
    }
}

/* update_rows for the shared table when a warp's rows fall into few groups (TPC-H Q1:
 * 4 groups; a global aggregate: 1): the lanes of one group first sum their rows and
 * integer values (peers_sum128, exact), then one lane adds the group's partial, so a
 * warp makes one atomic per group and state instead of one per row (same-address
 * shared atomics serialize). Other states (float sums, min, max) go row by row as in
 * update_rows. The next aggregate's values load while this one's are summed. All lanes
 * call it together (update_kernel's loop is uniform). */
__device__ __forceinline__ void update_rows_warp(const sl_k_agg_spec &sp,
                                                 const sl_k_agg_input &in, const SAcc &st,
                                                 const int64_t *e, const int64_t *idx,
                                                 const Pre &pre)
{
    const int lane = threadIdx.x & 31;
    unsigned peers[kItems];
    bool lead[kItems];
#pragma unroll
    for (int it = 0; it < kItems; it++) {
        peers[it] = __match_any_sync(0xffffffffu, (unsigned long long)idx[it]);
        lead[it] = idx[it] >= 0 && lane == __ffs(peers[it]) - 1;
        if (lead[it])
            atomicAdd(&st.rows()[idx[it]], (unsigned)__popc(peers[it]));
    }
    uint64_t x[kItems], nx[kItems];
    bool null[kItems], nnull[kItems];
    if (sp.n_aggs > 0)
        agg_values(sp, in, pre, e, idx, 0, nx, nnull);
    for (int a = 0; a < sp.n_aggs; a++) {
#pragma unroll
        for (int it = 0; it < kItems; it++) {
            x[it] = nx[it];
            null[it] = nnull[it];
        }
        if (a + 1 < sp.n_aggs)
            agg_values(sp, in, pre, e, idx, a + 1, nx, nnull);
        int kd = kind_of(sp.fn[a], sp.in_type[a]);
        if (kd == K_NONE)
            continue;
#pragma unroll
        for (int it = 0; it < kItems; it++) {
            const int64_t g = idx[it];
            unsigned nulls = __ballot_sync(0xffffffffu, g >= 0 && null[it]) & peers[it];
            if (lead[it] && nulls)
                atomicAdd(&st.nn(a)[g], (unsigned)__popc(nulls));
            if (kd == K_SUMI) {
                uint64_t lo = null[it] || g < 0 ? 0 : x[it];
                long long hi = (long long)lo < 0 ? -1 : 0;
                peers_sum128(peers[it], lo, hi);
                if (lead[it])
                    add128(&st.v0(a)[g], &st.v1(a)[g], lo, hi);
            } else if (kd != K_COUNT && g >= 0 && !null[it]) {
                update_val(kd, st.v0(a), st.v1(a), g, x[it]);
            }
        }
    }
}

/* Shared group lid's states as the 64-bit arrays g_merge and write_row take. */
__device__ inline void smem_group(const sl_k_agg_spec &sp, const Smem &s, int lid,
                                  unsigned long long *v0, long long *v1, unsigned long long *nn)
{
    for (int a = 0; a < sp.n_aggs; a++) {
        v0[a] = s.o_v0[a] ? s.v0(a)[lid] : 0;
        v1[a] = s.o_v1[a] ? s.v1(a)[lid] : 0;
        nn[a] = s.o_nn[a] ? s.nn(a)[lid] : 0;
    }
}

/* Table method: shared pre-aggregation (C > 0), rows that miss go to the global table,
 * rows that miss it too to the overflow list; then the shared groups merge into tb (or
 * spill). Persistent grid, kItems rows per thread per step. */
/* PRE: the first aggregates' values load with the keys (one wait per tile, more
 * registers: one block per SM) or after the lookups (two waits, two blocks per SM). */
template <int KM, bool PRE>
__global__ void __launch_bounds__(kThreads, PRE ? 1 : 2)
    update_kernel(sl_k_agg_spec sp, sl_k_agg_input in, sl_k_agg_table tb, uint32_t *overflow,
                  sl_k_agg_table spill, int C)
{
    __shared__ Smem s;
    if (threadIdx.x == 0 && C > 0)
        s = smem_carve(sp, C);
    __syncthreads();
    const SAcc sst = {s};
    const GAcc gst = {tb};
    if (C > 0) {
        smem_clear(sp, s);
        __syncthreads();
    }
    const int64_t tile = (int64_t)kItems * blockDim.x;
    const int64_t stride = (int64_t)gridDim.x * tile;
    for (int64_t base = (int64_t)blockIdx.x * tile; base < in.n; base += stride) {
        Key key[kItems];
        int64_t e[kItems], lidx[kItems], gidx[kItems];
#pragma unroll
        for (int it = 0; it < kItems; it++) {
            int64_t i = base + (int64_t)it * blockDim.x + threadIdx.x;
            lidx[it] = gidx[it] = -1;
            e[it] = i < in.n ? (in.d_rowidx ? (int64_t)in.d_rowidx[i] : i) : -1;
            if (e[it] >= 0)
                load_key<KM>(sp, in, e[it], key[it]);
        }
        Pre pre;
        if (PRE)
            load_pre(sp, in, e, pre);
        bool any_global = false;
#pragma unroll
        for (int it = 0; it < kItems; it++) {
            if (e[it] < 0)
                continue;
            int lid = C > 0 ? smem_find(sp, s, key[it]) : -1;
            if (lid >= 0) {
                lidx[it] = lid;
                continue;
            }
            int64_t g = g_find(sp, tb, key[it]);
            if (g >= 0) {
                gidx[it] = g;
                any_global = true;
            } else if (overflow) {
                overflow[atomicAdd(&tb.d_n[1], 1ull)] = (uint32_t)e[it];
            } else {
                atomicAdd(&tb.d_n[1], 1ull); /* counted only: the caller runs it again */
            }
        }
        if (!PRE)
            load_pre(sp, in, e, pre);
        if (C > 0)
            update_rows_warp(sp, in, sst, e, lidx, pre);
        if (any_global)
            update_rows(sp, in, gst, e, gidx, pre);
    }
    if (C <= 0)
        return;
    __syncthreads();
    for (int i = threadIdx.x; i < 2 * C; i += blockDim.x) {
        uint32_t v = s.slots()[i];
        if (v == 0 || v == kTomb)
            continue;
        int lid = (int)v - 1;
        Key key;
        for (int j = 0; j < kMaxK; j++)
            key.k[j] = j < sp.n_keys ? s.keys()[j * C + lid] : 0;
        key.nm = s.nulls()[lid];
        key.h = hash_keys<KM>(sp, key.k, key.nm);
        unsigned long long v0[kMaxA], nn[kMaxA];
        long long v1[kMaxA];
        smem_group(sp, s, lid, v0, v1, nn);
        g_merge_or_spill(sp, tb, spill, key, s.rows()[lid], v0, v1, nn);
    }
}

/* Merges src's groups into dst, one thread per group. */
__global__ void merge_kernel(sl_k_agg_spec sp, sl_k_agg_table src, sl_k_agg_table dst)
{
    unsigned long long n = *src.d_n;
    if (n > (unsigned long long)src.cap)
        n = src.cap;
    for (int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; g < (int64_t)n;
         g += (int64_t)gridDim.x * blockDim.x) {
        Key key;
        for (int j = 0; j < kMaxK; j++)
            key.k[j] = j < sp.n_keys ? src.d_keys[j * src.cap + g] : 0;
        key.nm = src.d_nulls[g];
        key.h = hash_keys<0>(sp, key.k, key.nm);
        int64_t d = g_find(sp, dst, key);
        if (d < 0)
            continue; /* the caller guarantees room */
        unsigned long long v0[kMaxA], nn[kMaxA];
        long long v1[kMaxA];
        for (int a = 0; a < sp.n_aggs; a++) {
            v0[a] = src.d_v0[a] ? src.d_v0[a][g] : 0;
            v1[a] = src.d_v1[a] ? src.d_v1[a][g] : 0;
            nn[a] = src.d_nn[a] ? src.d_nn[a][g] : 0;
        }
        g_merge(sp, dst, d, src.d_rows[g], v0, v1, nn);
    }
}

__global__ void table_output_kernel(sl_k_agg_spec sp, sl_k_agg_table tb, sl_k_agg_out out,
                                    int32_t *status)
{
    unsigned long long n = *tb.d_n;
    if (n > (unsigned long long)tb.cap)
        n = tb.cap;
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *out.d_count = n;
    for (int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; g < (int64_t)n && g < out.cap;
         g += (int64_t)gridDim.x * blockDim.x) {
        unsigned long long v0[kMaxA], nn[kMaxA];
        long long v1[kMaxA];
        for (int a = 0; a < sp.n_aggs; a++) {
            v0[a] = tb.d_v0[a] ? tb.d_v0[a][g] : 0;
            v1[a] = tb.d_v1[a] ? tb.d_v1[a][g] : 0;
            nn[a] = tb.d_nn[a] ? tb.d_nn[a][g] : 0;
        }
        write_row(sp, out, g, tb.d_keys + g, tb.cap, tb.d_nulls[g], tb.d_rows[g], v0, v1, nn,
                  status);
    }
}

/* Distinct 64-bit row hashes of m sample rows (set of `slots` entries, 0 = empty) into
 * counts[0]; into counts[1] the sample rows whose next row has another key hash (the last
 * row counts). */
__global__ void sample_kernel(sl_k_agg_spec sp, sl_k_agg_input in, int64_t m,
                              unsigned long long *set, uint64_t slots,
                              unsigned long long *counts)
{
    unsigned changes = 0, added = 0;
    for (int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; s < m;
         s += (int64_t)gridDim.x * blockDim.x) {
        int64_t e = (int64_t)((double)s * (double)in.n / (double)m);
        Key key;
        load_key<0>(sp, in, e, key);
        /* The row after it: does the key change there (an input clustered by key, such
         * as one sorted by it, changes at most once per group)? */
        if (e + 1 < in.n) {
            Key next;
            load_key<0>(sp, in, e + 1, next);
            changes += next.h != key.h;
        } else {
            changes++;
        }
        unsigned long long h = key.h | 1;
        uint64_t pos = h & (slots - 1);
        for (;;) {
            /* A plain read first: with few groups most samples find their hash there, and
             * CAS on one slot serialize. */
            unsigned long long v = *(volatile unsigned long long *)&set[pos];
            if (v == 0)
                v = atomicCAS(&set[pos], 0ull, h);
            if (v == 0) {
                added++;
                break;
            }
            if (v == h)
                break;
            pos = (pos + 1) & (slots - 1);
        }
    }
    /* One atomic a warp on each counter (with many groups every sample is new: 65,536
     * atomics on one word). With the plain read: the sample phase 0.090 -> 0.044 ms at
     * 1,000 groups, 0.134 -> 0.075 at 2^24 (2^28 rows, H100, 2026-11-27). */
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        added += __shfl_down_sync(~0u, added, d);
        changes += __shfl_down_sync(~0u, changes, d);
    }
    if ((threadIdx.x & 31) == 0) {
        if (added)
            atomicAdd(&counts[0], (unsigned long long)added);
        if (changes)
            atomicAdd(&counts[1], (unsigned long long)changes);
    }
}

/* Partition of a hash: its top `bits` bits. */
__device__ __forceinline__ uint32_t part_of(uint64_t h, int bits)
{
    return (uint32_t)(h >> (64 - bits));
}

template <int KM>
__global__ void __launch_bounds__(kThreads)
    part_count_kernel(sl_k_agg_spec sp, sl_k_agg_input in, int bits, unsigned long long *counts)
{
    unsigned int *hist = (unsigned int *)agg_smem;
    const int P = 1 << bits;
    for (int i = threadIdx.x; i < P; i += blockDim.x)
        hist[i] = 0;
    __syncthreads();
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < in.n;
         i += (int64_t)gridDim.x * blockDim.x) {
        Key key;
        load_key<KM>(sp, in, i, key);
        atomicAdd(&hist[part_of(key.h, bits)], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < P; i += blockDim.x)
        if (hist[i])
            atomicAdd(&counts[i], (unsigned long long)hist[i]);
}

__global__ void part_offsets_tail_kernel(int64_t *offsets, int P, int64_t n, int64_t *cursor)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i <= P; i += gridDim.x * blockDim.x) {
        if (i == P)
            offsets[P] = n;
        else
            cursor[i] = offsets[i];
    }
}

__device__ __forceinline__ void copy_elem(const void *src, int64_t si, void *dst, int64_t di,
                                          int width)
{
    if (width == 4)
        ((uint32_t *)dst)[di] = ((const uint32_t *)src)[si];
    else
        ((uint64_t *)dst)[di] = ((const uint64_t *)src)[si];
}

__host__ __device__ inline int type_width(int t)
{
    return t == SL_K_I32 || t == SL_K_F32 ? 4 : 8;
}

/* Copies row i of `in` (keys, values, null bits) to row d of `out`. */
__device__ __forceinline__ void copy_row(const sl_k_agg_spec &sp, const sl_k_agg_input &in,
                                         int64_t i, const sl_k_agg_input &out, int64_t d)
{
    uint32_t nb = 0;
    for (int j = 0; j < sp.n_keys; j++) {
        copy_elem(in.keys[j].d_data, i, (void *)out.keys[j].d_data, d,
                  type_width(sp.key_type[j]));
        if (out.d_nullbits && !bit_valid(in.keys[j], i))
            nb |= 1u << j;
    }
    for (int a = 0; a < sp.n_aggs; a++) {
        if (sp.fn[a] == SL_K_AGG_COUNT_STAR)
            continue;
        copy_elem(in.vals[a].d_data, i, (void *)out.vals[a].d_data, d, type_width(sp.in_type[a]));
        if (out.d_nullbits && !bit_valid(in.vals[a], i))
            nb |= 1u << (16 + a);
    }
    if (out.d_nullbits)
        ((uint32_t *)out.d_nullbits)[d] = nb;
}

/* Scatters the rows of `in` by partition. Each block takes one contiguous chunk: it counts
 * the chunk's rows per partition in shared memory, reserves each partition's run with one
 * global atomic per (block, partition), then copies every row to its run, ranked by a
 * shared cursor. (Reserving per tile of 4,096 rows made a global atomic for nearly every
 * row once the partitions outnumbered a tile's rows.) Offsets fit 32 bits (n < 2^32). */
template <int KM>
__global__ void __launch_bounds__(kThreads)
    part_scatter_kernel(sl_k_agg_spec sp, sl_k_agg_input in, int bits, int64_t *cursor,
                        sl_k_agg_input out)
{
    const int P = 1 << bits;
    unsigned int *run = (unsigned int *)agg_smem; /* counts, then each run's next row */
    const int64_t per = (in.n + gridDim.x - 1) / gridDim.x;
    const int64_t lo = min(in.n, (int64_t)blockIdx.x * per), hi = min(in.n, lo + per);
    for (int i = threadIdx.x; i < P; i += blockDim.x)
        run[i] = 0;
    __syncthreads();
    for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) {
        Key key;
        load_key<KM>(sp, in, i, key);
        atomicAdd(&run[part_of(key.h, bits)], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < P; i += blockDim.x)
        if (run[i])
            run[i] = (unsigned int)atomicAdd((unsigned long long *)&cursor[i],
                                             (unsigned long long)run[i]);
    __syncthreads();
    for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) {
        Key key;
        load_key<KM>(sp, in, i, key);
        copy_row(sp, in, i, out, (int64_t)atomicAdd(&run[part_of(key.h, bits)], 1u));
    }
}

/* One block per partition: aggregates its rows of every batch in shared memory and
 * writes the groups out. A partition with more groups than C takes several rounds: rows
 * that found no room are marked in `pending` and retried with an empty table. `only`:
 * a bitmap of the partitions to do (NULL: all). */
template <int KM>
__global__ void __launch_bounds__(kThreads)
    part_final_kernel(sl_k_agg_spec sp, const sl_k_agg_pbatch *batches, int n_batches,
                      uint32_t *pending, sl_k_agg_out out, int32_t *status, int C,
                      const uint32_t *only)
{
    __shared__ Smem s;
    __shared__ unsigned int fails;
    __shared__ unsigned long long out_base;
    const int p = blockIdx.x;
    if (only && !(only[p >> 5] >> (p & 31) & 1))
        return; /* done by small_part_final_kernel */
    if (threadIdx.x == 0)
        s = smem_carve(sp, C);
    __syncthreads();
    const SAcc sst = {s};
    for (int round = 0;; round++) {
        smem_clear(sp, s);
        if (threadIdx.x == 0)
            fails = 0;
        __syncthreads();
        for (int b = 0; b < n_batches; b++) {
            const sl_k_agg_input &in = batches[b].in;
            const int64_t lo = batches[b].d_offsets[p], hi = batches[b].d_offsets[p + 1];
            const int64_t bb = batches[b].bit_base;
            for (int64_t i0 = lo; i0 < hi; i0 += (int64_t)kItems * blockDim.x) {
                Key key[kItems];
                int64_t e[kItems], lidx[kItems];
#pragma unroll
                for (int it = 0; it < kItems; it++) {
                    int64_t i = i0 + (int64_t)it * blockDim.x + threadIdx.x;
                    e[it] = -1;
                    lidx[it] = -1;
                    if (i >= hi)
                        continue;
                    int64_t bit = bb + i;
                    if (round > 0 && !(pending[bit >> 5] >> (bit & 31) & 1))
                        continue;
                    e[it] = i;
                    load_key<KM>(sp, in, i, key[it]);
                }
                Pre pre;
                load_pre(sp, in, e, pre);
#pragma unroll
                for (int it = 0; it < kItems; it++) {
                    if (e[it] < 0)
                        continue;
                    int lid = smem_find(sp, s, key[it]);
                    int64_t bit = bb + e[it];
                    if (lid < 0) {
                        if (round == 0)
                            atomicOr(&pending[bit >> 5], 1u << (bit & 31));
                        atomicAdd(&fails, 1u);
                        e[it] = -1;
                        continue;
                    }
                    if (round > 0)
                        atomicAnd(&pending[bit >> 5], ~(1u << (bit & 31)));
                    lidx[it] = lid;
                }
                update_rows(sp, in, sst, e, lidx, pre);
            }
        }
        __syncthreads();
        unsigned int ng = *s.n() < (unsigned)C ? *s.n() : (unsigned)C;
        if (threadIdx.x == 0)
            out_base = ng ? atomicAdd(out.d_count, (unsigned long long)ng) : 0;
        __syncthreads();
        for (int i = threadIdx.x; i < 2 * C; i += blockDim.x) {
            uint32_t v = s.slots()[i];
            if (v == 0 || v == kTomb)
                continue;
            int lid = (int)v - 1;
            int64_t r = (int64_t)out_base + lid;
            if (r >= out.cap)
                continue;
            unsigned long long v0[kMaxA], nn[kMaxA];
            long long v1[kMaxA];
            smem_group(sp, s, lid, v0, v1, nn);
            write_row(sp, out, r, s.keys() + lid, C, s.nulls()[lid], s.rows()[lid], v0, v1, nn,
                      status);
        }
        bool more = fails > 0;
        __syncthreads();
        if (!more)
            break;
    }
}

} // namespace agg
} // namespace sluice_k

#endif /* SLUICE_K_AGGREGATE_KERNELS_CUH */
