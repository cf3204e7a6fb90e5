/* Few groups, one key column (sl_k_agg_update_small): each block aggregates its rows in a
 * shared-memory table whose slots hold the keys themselves, so a row costs one hash, one
 * shared load to find its slot and 32-bit shared atomics for its states (Hopper has no
 * native 64-bit shared atomic add: a CAS loop). The block merges its groups once into
 * the global table; rows of a full shared table go to the global table directly.
 *
 * Slots: S (a power of two) keys of KT (uint32 for 32-bit keys, uint64 for 64-bit ones),
 * kEmpty<KT> marks a free slot. Two more groups follow the slots: S for the key that
 * equals kEmpty, S + 1 for the null key. Every group's states are set before any row
 * (no publication race: a row that claims a slot by CAS updates its states at once).
 *
 * Integer sums are exact without 64-bit atomics: the low 32 bits of each value go to a
 * 32-bit counter whose carries (seen in the value atomicAdd returns) go with the high
 * 32 bits to a 64-bit word, updated only when they are not zero (never for small
 * non-negative values). A block sees < 2^32 rows, so the high word cannot overflow. */
#ifndef SLUICE_K_AGGREGATE_SMALL_CUH
#define SLUICE_K_AGGREGATE_SMALL_CUH

#include "aggregate_kernels.cuh" /* load_val, kPre, Key, g_find, g_merge */

namespace sluice_k {
namespace agg {

constexpr int kSmallThreads = 512;
constexpr int kSmallItems = 4;

template <typename KT> __host__ __device__ constexpr KT empty_key()
{
    return (KT)1 << (sizeof(KT) * 8 - 1);
}

/* Offsets of the few-groups table in agg_smem (0 = absent; the slots come first). */
struct STab {
    uint32_t o_rows, o_used;
    uint32_t o_lo[kMaxA], o_w[kMaxA], o_nn[kMaxA];
    uint32_t S, shift; /* shift: 64 - log2(S), for the hash's top bits */
};

/* Bytes of the table and its layout (STab) for S slots of kw-byte keys. */
__host__ __device__ inline size_t stab_layout(const sl_k_agg_spec &sp, uint32_t S, int kw,
                                              STab *t)
{
    const size_t G = (size_t)S + 2;
    size_t p = al8((size_t)S * kw);
    STab l;
    l.S = S;
    l.shift = 64;
    for (uint32_t s = S; s > 1; s >>= 1)
        l.shift--;
    l.o_rows = (uint32_t)p;
    p += al8(G * 4);
    for (int a = 0; a < kMaxA; a++) {
        l.o_lo[a] = l.o_w[a] = l.o_nn[a] = 0;
        if (a >= sp.n_aggs)
            continue;
        int kd = kind_of(sp.fn[a], sp.in_type[a]);
        if (kd == K_NONE)
            continue;
        if (kd == K_SUMI) {
            l.o_lo[a] = (uint32_t)p;
            p += al8(G * 4);
        }
        if (kd != K_COUNT) {
            l.o_w[a] = (uint32_t)p;
            p += G * 8;
        }
        l.o_nn[a] = (uint32_t)p;
        p += al8(G * 4);
    }
    l.o_used = (uint32_t)p;
    p += 8;
    if (t)
        *t = l;
    return p;
}

template <typename KT> __device__ __forceinline__ KT *st_slots() { return (KT *)agg_smem; }
__device__ __forceinline__ unsigned *st_u32(uint32_t o) { return (unsigned *)(agg_smem + o); }
__device__ __forceinline__ unsigned long long *st_u64(uint32_t o)
{
    return (unsigned long long *)(agg_smem + o);
}

/* Fibonacci hashing: the top bits of the product depend on every bit of the key. */
template <typename KT> __device__ __forceinline__ uint32_t st_hash(KT k, uint32_t shift)
{
    return (uint32_t)(((uint64_t)k * 0x9E3779B97F4A7C15ull) >> shift);
}

/* Slot of key k (claimed if new), S for the key equal to kEmpty, -1 if the table has no
 * room for a new key (more than 3/4 of the slots used). */
template <typename KT> __device__ __forceinline__ int st_find(const STab &t, KT k)
{
    if (k == empty_key<KT>())
        return (int)t.S;
    KT *slots = st_slots<KT>();
    const uint32_t mask = t.S - 1, limit = t.S - t.S / 4;
    uint32_t pos = st_hash<KT>(k, t.shift);
    for (uint32_t probes = 0; probes < t.S; probes++) {
        KT v = *(volatile KT *)&slots[pos];
        if (v == k)
            return (int)pos;
        if (v == empty_key<KT>()) {
            if (*(volatile unsigned *)st_u32(t.o_used) >= limit)
                return -1;
            v = atomicCAS(&slots[pos], empty_key<KT>(), k);
            if (v == empty_key<KT>()) {
                atomicAdd(st_u32(t.o_used), 1u);
                return (int)pos;
            }
            if (v == k)
                return (int)pos;
        }
        pos = (pos + 1) & mask;
    }
    return -1;
}

__device__ inline void st_clear(const sl_k_agg_spec &sp, const STab &t, int kw)
{
    for (uint32_t i = threadIdx.x; i < t.S; i += blockDim.x) {
        if (kw == 4)
            st_slots<uint32_t>()[i] = empty_key<uint32_t>();
        else
            st_slots<unsigned long long>()[i] = empty_key<unsigned long long>();
    }
    for (uint32_t i = threadIdx.x; i < t.S + 2; i += blockDim.x) {
        st_u32(t.o_rows)[i] = 0;
        for (int a = 0; a < sp.n_aggs; a++) {
            int kd = kind_of(sp.fn[a], sp.in_type[a]);
            if (t.o_lo[a])
                st_u32(t.o_lo[a])[i] = 0;
            if (t.o_w[a])
                st_u64(t.o_w[a])[i] = kd == K_SUMI ? 0 : v0_init(kd);
            if (t.o_nn[a])
                st_u32(t.o_nn[a])[i] = 0;
        }
    }
    if (threadIdx.x == 0)
        *st_u32(t.o_used) = 0;
}

/* Min/max: most rows do not improve the group's value; a plain read skips their atomic. */
__device__ __forceinline__ void st_min(unsigned long long *p, long long x)
{
    if (x < *(volatile long long *)p)
        atomicMin((long long *)p, x);
}
__device__ __forceinline__ void st_max(unsigned long long *p, long long x)
{
    if (x > *(volatile long long *)p)
        atomicMax((long long *)p, x);
}

/* One row (value x of aggregate a, raw 64 bits as ld_val gives it) into shared group i. */
__device__ __forceinline__ void st_update_val(const STab &t, int a, int kd, int i, uint64_t x)
{
    unsigned long long *w = t.o_w[a] ? st_u64(t.o_w[a]) + i : NULL;
    switch (kd) {
    case K_SUMI: {
        uint32_t lo = (uint32_t)x;
        uint32_t old = atomicAdd(st_u32(t.o_lo[a]) + i, lo);
        long long hi = ((long long)x >> 32) + (old + lo < old ? 1 : 0);
        if (hi != 0)
            atomicAdd(w, (unsigned long long)hi);
        break;
    }
    case K_SUMF: atomicAdd((double *)w, __longlong_as_double((long long)x)); break;
    case K_MINI: st_min(w, (long long)x); break;
    case K_MAXI: st_max(w, (long long)x); break;
    case K_MINF: st_min(w, enc_f64(__longlong_as_double((long long)x))); break;
    case K_MAXF: st_max(w, enc_f64(__longlong_as_double((long long)x))); break;
    default: break;
    }
}

/* The key as ld_int gives it (int64, sign- or zero-extended from its type). */
template <typename KT> __device__ __forceinline__ int64_t key_widen(int type, KT v)
{
    if (sizeof(KT) == 8)
        return (int64_t)v;
    return type_unsigned(type) ? (int64_t)(uint32_t)v : (int64_t)(int32_t)(uint32_t)v;
}

/* States of row e (aggregate values x/null of the first kPre aggregates already loaded)
 * into shared group i. */
__device__ __forceinline__ void st_update_row(const sl_k_agg_spec &sp, const sl_k_agg_input &in,
                                              const STab &t, int i, int64_t e, const uint64_t *x,
                                              const bool *vnull)
{
    atomicAdd(st_u32(t.o_rows) + i, 1u);
#pragma unroll
    for (int a = 0; a < kPre; a++) {
        int kd = a < sp.n_aggs ? kind_of(sp.fn[a], sp.in_type[a]) : K_NONE;
        if (kd == K_NONE)
            continue;
        if (vnull[a])
            atomicAdd(st_u32(t.o_nn[a]) + i, 1u);
        else if (kd != K_COUNT)
            st_update_val(t, a, kd, i, x[a]);
    }
    for (int a = kPre; a < sp.n_aggs; a++) {
        int kd = kind_of(sp.fn[a], sp.in_type[a]);
        if (kd == K_NONE)
            continue;
        uint64_t v;
        bool null;
        load_val(sp, in, a, e, v, null);
        if (null)
            atomicAdd(st_u32(t.o_nn[a]) + i, 1u);
        else if (kd != K_COUNT)
            st_update_val(t, a, kd, i, v);
    }
}

/* One row that found no room in the shared table: straight into the global table (or
 * only counted when that is full too; the caller runs every row again). */
__device__ inline void st_row_global(const sl_k_agg_spec &sp, const sl_k_agg_input &in,
                                     const sl_k_agg_table &tb, uint32_t *overflow, int64_t e,
                                     const Key &key)
{
    int64_t g = g_find(sp, tb, key);
    if (g < 0) {
        if (overflow)
            overflow[atomicAdd(&tb.d_n[1], 1ull)] = (uint32_t)e;
        else
            atomicAdd(&tb.d_n[1], 1ull);
        return;
    }
    atomicAdd(&tb.d_rows[g], 1ull);
    for (int a = 0; a < sp.n_aggs; a++) {
        int kd = kind_of(sp.fn[a], sp.in_type[a]);
        if (kd == K_NONE)
            continue;
        uint64_t x;
        bool null;
        load_val(sp, in, a, e, x, null);
        if (null)
            atomicAdd(&tb.d_nn[a][g], 1ull);
        else
            update_val(kd, tb.d_v0[a], tb.d_v1[a], g, x);
    }
}

/* The keys and first values of kSmallItems rows base + it * blockDim.x + threadIdx.x
 * (rows >= n: nothing), loaded before any is used so that their loads overlap. */
struct Tile {
    int64_t k[kSmallItems];
    bool knull[kSmallItems];
    uint64_t x[kSmallItems][kPre];
    bool vnull[kSmallItems][kPre];
};

__device__ __forceinline__ void st_load_tile(const sl_k_agg_spec &sp, const sl_k_agg_input &in,
                                             int64_t base, int64_t n, bool key_nulls, Tile &tl)
{
#pragma unroll
    for (int it = 0; it < kSmallItems; it++) {
        int64_t e = base + (int64_t)it * blockDim.x + threadIdx.x;
        tl.k[it] = 0;
        tl.knull[it] = false;
        if (e < n) {
            tl.knull[it] = key_nulls && !bit_valid(in.keys[0], e);
            tl.k[it] = ld_int(in.keys[0].d_data, sp.key_type[0], e);
        }
#pragma unroll
        for (int a = 0; a < kPre; a++)
            load_val(sp, in, a < sp.n_aggs ? a : 0, a < sp.n_aggs && e < n ? e : -1,
                     tl.x[it][a], tl.vnull[it][a]);
    }
}

/* Group i of the shared table as write_row and g_merge take it: its key (k, null mask)
 * and states (128-bit integer sums from their two words). False if the group is empty. */
template <typename KT>
__device__ inline bool st_group(const sl_k_agg_spec &sp, const STab &t, uint32_t i, int64_t *k,
                                uint32_t *nm, unsigned *rows, unsigned long long *v0,
                                long long *v1, unsigned long long *nn)
{
    *rows = st_u32(t.o_rows)[i];
    if (*rows == 0)
        return false;
    *nm = i == t.S + 1 ? 1u : 0u;
    *k = i < t.S ? key_widen<KT>(sp.key_type[0], st_slots<KT>()[i])
         : i == t.S ? key_widen<KT>(sp.key_type[0], empty_key<KT>())
                    : 0;
    for (int a = 0; a < sp.n_aggs; a++) {
        int kd = kind_of(sp.fn[a], sp.in_type[a]);
        v0[a] = 0;
        v1[a] = 0;
        nn[a] = t.o_nn[a] ? st_u32(t.o_nn[a])[i] : 0;
        if (kd == K_SUMI) {
            __int128 s = (__int128)(long long)st_u64(t.o_w[a])[i] * ((__int128)1 << 32) +
                         (__int128)st_u32(t.o_lo[a])[i];
            v0[a] = (unsigned long long)s;
            v1[a] = (long long)(s >> 64);
        } else if (t.o_w[a]) {
            v0[a] = st_u64(t.o_w[a])[i];
        }
    }
    return true;
}

template <typename KT>
__global__ void __launch_bounds__(kSmallThreads)
    small_update_kernel(sl_k_agg_spec sp, sl_k_agg_input in, sl_k_agg_table tb,
                        uint32_t *overflow, sl_k_agg_table spill, uint32_t S)
{
    __shared__ STab t;
    if (threadIdx.x == 0)
        stab_layout(sp, S, (int)sizeof(KT), &t);
    __syncthreads();
    st_clear(sp, t, (int)sizeof(KT));
    __syncthreads();
    const bool key_nulls = in.keys[0].d_valid != NULL;
    const int64_t tile = (int64_t)kSmallItems * blockDim.x;
    for (int64_t base = (int64_t)blockIdx.x * tile; base < in.n;
         base += (int64_t)gridDim.x * tile) {
        Tile tl;
        st_load_tile(sp, in, base, in.n, key_nulls, tl);
#pragma unroll
        for (int it = 0; it < kSmallItems; it++) {
            int64_t e = base + (int64_t)it * blockDim.x + threadIdx.x;
            if (e >= in.n)
                continue;
            int i = tl.knull[it] ? (int)S + 1 : st_find<KT>(t, (KT)tl.k[it]);
            if (i >= 0) {
                st_update_row(sp, in, t, i, e, tl.x[it], tl.vnull[it]);
                continue;
            }
            Key key;
#pragma unroll
            for (int j = 0; j < kMaxK; j++)
                key.k[j] = 0;
            key.k[0] = tl.k[it];
            key.nm = 0;
            key.h = hash_keys<0>(sp, key.k, 0);
            st_row_global(sp, in, tb, overflow, e, key);
        }
    }
    __syncthreads();
    /* Merge: one thread per used group. */
    for (uint32_t i = threadIdx.x; i < S + 2; i += blockDim.x) {
        unsigned rows;
        unsigned long long v0[kMaxA], nn[kMaxA];
        long long v1[kMaxA];
        Key key;
#pragma unroll
        for (int j = 0; j < kMaxK; j++)
            key.k[j] = 0;
        if (!st_group<KT>(sp, t, i, &key.k[0], &key.nm, &rows, v0, v1, nn))
            continue;
        key.h = hash_keys<0>(sp, key.k, key.nm);
        const sl_k_agg_table *dst = &tb;
        int64_t g = g_find(sp, tb, key);
        if (g < 0) {
            dst = &spill;
            g = g_find(sp, spill, key);
            atomicAdd(&tb.d_n[2], 1ull);
        }
        if (g >= 0)
            g_merge(sp, *dst, g, rows, v0, v1, nn);
        else
            atomicAdd(&tb.d_n[3], 1ull); /* lost: the spill was too small (a bug) */
    }
}

/* Partitioned method, one key without nulls (sl_k_agg_part_final's fast case): one block
 * per partition aggregates its rows of every batch in the key-slot table and writes the
 * groups out. A partition with more groups than 3/4 of the slots takes rounds: rows that
 * found no room are marked in `pending` and the next round, with an empty table, takes
 * only those. */
template <typename KT>
__global__ void __launch_bounds__(kSmallThreads)
    small_final_kernel(sl_k_agg_spec sp, const sl_k_agg_pbatch *batches, int n_batches,
                       uint32_t *pending, sl_k_agg_out out, int32_t *status, uint32_t S)
{
    __shared__ STab t;
    __shared__ unsigned fails, written;
    __shared__ unsigned long long out_base;
    const int p = blockIdx.x;
    if (threadIdx.x == 0)
        stab_layout(sp, S, (int)sizeof(KT), &t);
    __syncthreads();
    for (int round = 0;; round++) {
        st_clear(sp, t, (int)sizeof(KT));
        if (threadIdx.x == 0)
            fails = written = 0;
        __syncthreads();
        for (int b = 0; b < n_batches; b++) {
            const sl_k_agg_input &in = batches[b].in;
            const int64_t lo = batches[b].d_offsets[p], hi = batches[b].d_offsets[p + 1];
            const int64_t bb = batches[b].bit_base;
            for (int64_t i0 = lo; i0 < hi; i0 += (int64_t)kSmallItems * blockDim.x) {
                Tile tl;
                st_load_tile(sp, in, i0, hi, false, tl);
#pragma unroll
                for (int it = 0; it < kSmallItems; it++) {
                    int64_t e = i0 + (int64_t)it * blockDim.x + threadIdx.x, bit = bb + e;
                    if (e >= hi || (round > 0 && !(pending[bit >> 5] >> (bit & 31) & 1)))
                        continue;
                    int i = st_find<KT>(t, (KT)tl.k[it]);
                    if (i < 0) {
                        if (round == 0)
                            atomicOr(&pending[bit >> 5], 1u << (bit & 31));
                        atomicAdd(&fails, 1u);
                        continue;
                    }
                    if (round > 0)
                        atomicAnd(&pending[bit >> 5], ~(1u << (bit & 31)));
                    st_update_row(sp, in, t, i, e, tl.x[it], tl.vnull[it]);
                }
            }
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            unsigned ng = *st_u32(t.o_used) + (st_u32(t.o_rows)[S] ? 1u : 0u);
            out_base = ng ? atomicAdd(out.d_count, (unsigned long long)ng) : 0;
        }
        __syncthreads();
        for (uint32_t i = threadIdx.x; i < S + 2; i += blockDim.x) {
            unsigned rows;
            uint32_t nm;
            int64_t k;
            unsigned long long v0[kMaxA], nn[kMaxA];
            long long v1[kMaxA];
            if (!st_group<KT>(sp, t, i, &k, &nm, &rows, v0, v1, nn))
                continue;
            int64_t r = (int64_t)out_base + atomicAdd(&written, 1u);
            if (r < out.cap)
                write_row(sp, out, r, &k, 0, nm, rows, v0, v1, nn, status);
        }
        bool more = fails > 0;
        __syncthreads();
        if (!more)
            break;
    }
}

} // namespace agg
} // namespace sluice_k

#endif /* SLUICE_K_AGGREGATE_SMALL_CUH */
