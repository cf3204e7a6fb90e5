/* Few-groups path of sl_k_agg_update (issue 19): one int32 or int64 key column and
 * count(*), count, sum, avg, min, max of int32/int64 values, none of them with nulls.
 *
 * Each block keeps its own shared hash table: C slots of stored keys (a multiplicative
 * 32-bit hash, linear probing, CAS insert, no slot -> group indirection), 32-bit row
 * counts and one 64-bit partial state per sum/min/max, and merges it once into the global
 * table at the end. Rows are read four at a time per thread with vector loads. A row
 * the shared table cannot take goes to the global table alone, as in the generic kernel:
 * its key is the empty marker, or no free slot within kProbeLimit probes (more groups than
 * the estimate said). A sum value outside the int32 range goes to the global 128-bit state
 * alone (its row still counts in shared memory): with |values| < 2^31 and fewer than 2^32
 * rows a block's 64-bit partial cannot overflow, so sums stay exact.
 *
 * A spec whose only state is one integer sum takes lean_update_kernel (SL_K_AGG_LEAN, the
 * driver's default): 2^28 rows, 1,000 groups, count(*) + sum(int64) in 1.34 ms against
 * 1.85 for small_update_kernel (H100, 2026-11-27). pack_add (SL_K_AGG_PACK, not default)
 * counts a row and adds its sum value in one 32-bit atomic: slower in the tree (1.91 ms;
 * the partition kernel 4.25 against 3.71 at 2^24 groups). */
#ifndef SLUICE_K_AGGREGATE_SMALL_CUH
#define SLUICE_K_AGGREGATE_SMALL_CUH

#include <cooperative_groups.h>

#include "aggregate_rows.cuh"

namespace sluice_k {
namespace agg {

constexpr int kSmallItems = 4;
constexpr int kProbeLimit = 32;
constexpr int kSmallPre = 2; /* aggregates whose values load with the keys */
static_assert(kSmallPre == 2, "small_rows and direct_rows pick pre[0] or pre[1]");

/* Shared state of each aggregate: index into the block's state arrays, -1 = none (count(*)
 * and count of a column without nulls read the row count). Built by the launcher. */
struct SmallLayout {
    int n_st;
    int st[kMaxA];
    int pk; /* with SL_K_AGG_PACK: the state whose values pack with the row counts (the
             * first integer sum; -1 none: the words count rows alone) */
};

template <typename K> struct SmallKey;
template <> struct SmallKey<int32_t> {
    static constexpr int32_t kEmpty = (int32_t)0x80000000;
    __device__ static uint32_t hash(int32_t k) { return (uint32_t)k * 0x9E3779B1u; }
    __device__ static int32_t cas(int32_t *p, int32_t want, int32_t k)
    {
        return atomicCAS(p, want, k);
    }
};
template <> struct SmallKey<int64_t> {
    static constexpr int64_t kEmpty = (int64_t)0x8000000000000000ull;
    __device__ static uint32_t hash(int64_t k)
    {
        return ((uint32_t)k ^ (uint32_t)((uint64_t)k >> 32)) * 0x9E3779B1u;
    }
    __device__ static int64_t cas(int64_t *p, int64_t want, int64_t k)
    {
        return (int64_t)atomicCAS((unsigned long long *)p, (unsigned long long)want,
                                  (unsigned long long)k);
    }
};

/* Slot of key k in the block's table (claimed if new: then *claims, if given, counts
 * it), -1 if it takes the global path. */
template <typename K>
__device__ __forceinline__ int small_find(K *skey, int log_c, K k, unsigned *claims = nullptr)
{
    if (k == SmallKey<K>::kEmpty)
        return -1;
    const uint32_t mask = (1u << log_c) - 1;
    uint32_t h = SmallKey<K>::hash(k) >> (32 - log_c);
    for (int p = 0; p < kProbeLimit; p++) {
        K cur = *(volatile K *)&skey[h];
        if (cur == SmallKey<K>::kEmpty) {
            cur = SmallKey<K>::cas(&skey[h], SmallKey<K>::kEmpty, k);
            if (cur == SmallKey<K>::kEmpty) { /* this thread claimed the slot */
                if (claims)
                    (*claims)++;
                return (int)h;
            }
            /* another thread claimed it first: cur is the key it stored */
        }
        if (cur == k)
            return (int)h;
        h = (h + 1) & mask;
    }
    return -1;
}

/* small_find for a table of any C slots (the partition kernel's big table, SL_K_AGG_BIG):
 * the first slot is the hash's top bits scaled to C (for a power of two C the same slot
 * as small_find), probes wrap at C, at most kBigProbeLimit of them (a table near its
 * load limit has longer runs than kProbeLimit allows). */
constexpr int kBigProbeLimit = 256;
/* The probe loop of small_find_n and cl_find: from slot h of C slots of skey, claims or
 * finds key k (not the empty marker); at the end of the C slots, `wrap` gives the keys
 * to go on in (the same, or the next block's of a cluster table). */
template <typename K, typename Wrap>
__device__ __forceinline__ int probe_n(K *skey, uint32_t h, int C, K k, unsigned *claims,
                                       Wrap wrap)
{
    for (int p = 0; p < kBigProbeLimit; p++) {
        K cur = *(volatile K *)&skey[h];
        if (cur == SmallKey<K>::kEmpty) {
            cur = SmallKey<K>::cas(&skey[h], SmallKey<K>::kEmpty, k);
            if (cur == SmallKey<K>::kEmpty) {
                (*claims)++;
                return (int)h;
            }
        }
        if (cur == k)
            return (int)h;
        if (++h == (uint32_t)C) {
            h = 0;
            skey = wrap();
        }
    }
    return -1;
}

template <typename K>
__device__ __forceinline__ int small_find_n(K *skey, int C, K k, unsigned *claims)
{
    if (k == SmallKey<K>::kEmpty)
        return -1;
    return probe_n<K>(skey, __umulhi(SmallKey<K>::hash(k), (uint32_t)C), C, k, claims,
                      [skey] { return skey; });
}

/* Elements [r0, r0 + N) of a column of `type` as int64 (vector loads when `vec`: N 2 or
 * 4, r0 a multiple of N, the column 16-byte aligned). */
template <int N>
__device__ __forceinline__ void small_load(const void *p, int type, int64_t r0, bool vec,
                                           int64_t *x)
{
    if (type == SL_K_I32) {
        const int32_t *q = (const int32_t *)p + r0;
        if constexpr (N == 4) {
            if (vec) {
                int4 v = __ldcs((const int4 *)q);
                x[0] = v.x, x[1] = v.y, x[2] = v.z, x[3] = v.w;
                return;
            }
        }
        if constexpr (N == 2) {
            if (vec) {
                int2 v = __ldcs((const int2 *)q);
                x[0] = v.x, x[1] = v.y;
                return;
            }
        }
#pragma unroll
        for (int i = 0; i < N; i++)
            x[i] = __ldcs(q + i);
        return;
    }
    const int64_t *q = (const int64_t *)p + r0;
    if constexpr (N == 4) {
        if (vec) {
            longlong2 a = __ldcs((const longlong2 *)q), b = __ldcs((const longlong2 *)q + 1);
            x[0] = a.x, x[1] = a.y, x[2] = b.x, x[3] = b.y;
            return;
        }
    }
    if constexpr (N == 2) {
        if (vec) {
            longlong2 a = __ldcs((const longlong2 *)q);
            x[0] = a.x, x[1] = a.y;
            return;
        }
    }
#pragma unroll
    for (int i = 0; i < N; i++)
        x[i] = __ldcs(q + i);
}

/* The values of the first kSmallPre aggregates with a state (has[a] >= 0), loaded with
 * the keys so that a step waits for memory once. */
template <int N>
__device__ __forceinline__ void small_preload(const sl_k_agg_spec &sp, const sl_k_agg_input &in,
                                              const int *has, int64_t r0, bool vec,
                                              int64_t (&pre)[kSmallPre][N])
{
#pragma unroll
    for (int a = 0; a < kSmallPre; a++)
        if (a < sp.n_aggs && has[a] >= 0)
            small_load<N>(in.vals[a].d_data, sp.in_type[a], r0, vec, pre[a]);
}

/* Aggregate a's values of rows [r0, r0 + N): preloaded, or loaded now. */
template <int N>
__device__ __forceinline__ void small_vals(const sl_k_agg_spec &sp, const sl_k_agg_input &in,
                                           int a, const int64_t (&pre)[kSmallPre][N], int64_t r0,
                                           bool vec, int64_t *v)
{
    if (a < kSmallPre) { /* constant indices: pre stays in registers */
#pragma unroll
        for (int i = 0; i < N; i++)
            v[i] = a == 0 ? pre[0][i] : pre[kSmallPre - 1][i];
    } else {
        small_load<N>(in.vals[a].d_data, sp.in_type[a], r0, vec, v);
    }
}

__device__ __forceinline__ Key small_gkey(int64_t k)
{
    Key key;
#pragma unroll
    for (int j = 0; j < kMaxK; j++)
        key.k[j] = 0;
    key.k[0] = k;
    key.nm = 0;
    key.h = mix64(0x9E3779B97F4A7C15ull ^ (uint64_t)k); /* as load_key<1/2> */
    return key;
}

/* Global group of key k, or -1 after counting a row that found no room (the caller runs
 * the inputs again into a bigger table). */
__device__ __forceinline__ int64_t small_gfind(const sl_k_agg_spec &sp, const sl_k_agg_table &tb,
                                               int64_t k)
{
    int64_t g = g_find(sp, tb, small_gkey(k));
    if (g < 0)
        atomicAdd(&tb.d_n[1], 1ull);
    return g;
}

__device__ __forceinline__ bool small_wide(int kd, int type, int64_t v)
{
    return kd == K_SUMI && type == SL_K_I64 && (uint64_t)(v + 0x80000000ll) >> 32 != 0;
}

/* Adds v (|v| < 2^31) to a 64-bit two's complement word as two 32-bit halves: the low
 * half's atomic returns its old value, and the high half changes only where a carry out
 * of the low half does not cancel v's sign (rarely), so a row costs one 32-bit atomic
 * instead of a 64-bit one (SL_K_AGG_SMALL_SPLIT; which is faster is measured). */
__device__ __forceinline__ void small_add_split(long long *p, int64_t v)
{
    unsigned *w = (unsigned *)p; /* little-endian: w[0] low, w[1] high */
    const unsigned lo = (unsigned)v;
    const unsigned old = atomicAdd(&w[0], lo);
    const unsigned hi = (v < 0 ? 0xffffffffu : 0u) + (old + lo < old ? 1u : 0u);
    if (hi)
        atomicAdd(&w[1], hi);
}

/* Row counts packed with one integer sum (SL_K_AGG_PACK, issue 19). A slot's 32-bit word
 * w holds the low 32 bits of T = 256 S + rows, where S sums the values v of its rows with
 * |v| < 2^23 (pack_fits), and a row costs one shared atomic instead of two (the row count
 * and the sum's low half): it adds 256 v + 1 (v = 0 for a row whose value goes elsewhere).
 * The old word the atomic returns tells the two rare events: its low byte (rows mod 256)
 * wraps, then cw counts it; T's add carries out of bit 31 or borrows into it (v < 0), then
 * hw gets carry - borrow. So rows = 256 cw + (w & 255) and S = (2^32 hw + w - rows) / 256,
 * exactly: with fewer than 2^32 rows a block's T stays within 2^63 and hw within int32. */
__device__ __forceinline__ bool pack_fits(int64_t v)
{
    return (uint64_t)(v + (1 << 23)) >> 24 == 0;
}

__device__ __forceinline__ void pack_add(unsigned *w, unsigned *cw, int *hw, int64_t v)
{
    const unsigned add = ((unsigned)v << 8) + 1u;
    const unsigned old = atomicAdd(w, add);
    if ((old & 255u) == 255u)
        atomicAdd(cw, 1u);
    const int d = (old + add < old ? 1 : 0) - (v < 0 ? 1 : 0);
    if (d)
        atomicAdd(hw, d);
}

__device__ __forceinline__ unsigned pack_rows(const unsigned *w, const unsigned *cw, int i)
{
    return cw[i] * 256u + (w[i] & 255u);
}

__device__ __forceinline__ long long pack_sum(const unsigned *w, const unsigned *cw,
                                              const int *hw, int i)
{
    const long long t = (long long)(((unsigned long long)(long long)hw[i] << 32) | w[i]);
    return (t - (long long)pack_rows(w, cw, i)) >> 8; /* a multiple of 256: exact */
}

/* The shared table of the few-groups kernels: 1 << log_c slots of stored keys, their row
 * words and per state a 64-bit partial; with SL_K_AGG_PACK the words pack the rows with
 * state L.pk's values and two more arrays keep their wraps (pack_add). */
template <typename K>
struct SmallTab {
    long long *st; /* per state: C words */
    K *skey;
    unsigned *srows;
    unsigned *scw; /* PACK only */
    int *shw;      /* PACK only */
    __device__ SmallTab(char *smem, const SmallLayout &L, int C)
    {
        st = (long long *)smem;
        skey = (K *)(st + (size_t)L.n_st * C);
        srows = (unsigned *)(skey + C);
        scw = srows + C;
        shw = (int *)(scw + C);
    }
};

/* Counts a row of a slot without a value for the packed word (a count(*)-only spec, or
 * with PACK off). */
template <typename K, bool PACK>
__device__ __forceinline__ void small_count(const SmallTab<K> &T, int slot)
{
    if (PACK)
        pack_add(&T.srows[slot], &T.scw[slot], &T.shw[slot], 0);
    else
        atomicAdd(&T.srows[slot], 1u);
}

/* Value v of state s (kind kd, column type `type`) of a row in shared slot `slot`: false
 * when v must go to the global table (a sum value outside int32, see small_wide); with
 * PACK, state L.pk's value also counts the row (pack_add: the value itself when it fits,
 * else 0 and the value as before). */
template <typename K, bool SPLIT, bool PACK>
__device__ __forceinline__ bool small_state_add(const SmallTab<K> &T, const SmallLayout &L, int C,
                                                int s, int kd, int type, int slot, int64_t v)
{
    if (PACK && s == L.pk) {
        const bool fit = pack_fits(v);
        pack_add(&T.srows[slot], &T.scw[slot], &T.shw[slot], fit ? v : 0);
        if (fit)
            return true;
    }
    if (small_wide(kd, type, v))
        return false;
    long long *p = &T.st[(size_t)s * C + slot];
    if (kd == K_SUMI && SPLIT)
        small_add_split(p, v);
    else if (kd == K_SUMI)
        atomicAdd((unsigned long long *)p, (unsigned long long)v);
    else if (kd == K_MINI)
        atomicMin(p, (long long)v);
    else
        atomicMax(p, (long long)v);
    return true;
}

/* Rows [r0, r0 + N) of the input. */
template <typename K, int N, bool SPLIT, bool PACK>
__device__ __forceinline__ void small_rows(const sl_k_agg_spec &sp, const sl_k_agg_input &in,
                                           const sl_k_agg_table &tb, const SmallLayout &L,
                                           const SmallTab<K> &T, int log_c, int64_t r0, bool vec)
{
    const int C = 1 << log_c;
    int64_t kx[N], pre[kSmallPre][N];
    small_load<N>(in.keys[0].d_data, sizeof(K) == 4 ? SL_K_I32 : SL_K_I64, r0, vec, kx);
    small_preload<N>(sp, in, L.st, r0, vec, pre);
    int slot[N];
    int64_t g[N];
#pragma unroll
    for (int i = 0; i < N; i++) {
        slot[i] = small_find<K>(T.skey, log_c, (K)kx[i]);
        g[i] = -1;
        if (slot[i] >= 0) {
            if (!PACK || L.pk < 0) /* else the packed sum counts it */
                small_count<K, PACK>(T, slot[i]);
        } else if ((g[i] = small_gfind(sp, tb, kx[i])) >= 0) {
            atomicAdd(&tb.d_rows[g[i]], 1ull);
        }
    }
    for (int a = 0; a < sp.n_aggs; a++) {
        int s = L.st[a];
        if (s < 0)
            continue;
        const int kd = kind_of(sp.fn[a], sp.in_type[a]);
        int64_t v[N];
        small_vals<N>(sp, in, a, pre, r0, vec, v);
#pragma unroll
        for (int i = 0; i < N; i++) {
            int64_t gi = g[i];
            if (slot[i] >= 0) {
                if (small_state_add<K, SPLIT, PACK>(T, L, C, s, kd, sp.in_type[a], slot[i], v[i]))
                    continue;
                gi = small_gfind(sp, tb, kx[i]); /* a wide sum value; its row counts in
                                                  * shared memory */
            }
            if (gi >= 0)
                update_val(kd, tb.d_v0[a], tb.d_v1[a], gi, (uint64_t)v[i]);
        }
    }
}

/* Empties the block's table: no keys, no rows, initial states. */
template <typename K, bool PACK>
__device__ __forceinline__ void small_clear(const sl_k_agg_spec &sp, const SmallLayout &L,
                                            const SmallTab<K> &T, int C)
{
    for (int i = threadIdx.x; i < C; i += blockDim.x) {
        T.skey[i] = SmallKey<K>::kEmpty;
        T.srows[i] = 0;
        if (PACK)
            T.scw[i] = 0, T.shw[i] = 0;
        for (int a = 0; a < sp.n_aggs; a++)
            if (L.st[a] >= 0)
                T.st[(size_t)L.st[a] * C + i] =
                    (long long)v0_init(kind_of(sp.fn[a], sp.in_type[a]));
    }
}

/* Slot i's rows and states as the 64-bit arrays g_merge and write_row take. */
template <typename K, bool PACK>
__device__ __forceinline__ unsigned small_states(const sl_k_agg_spec &sp, const SmallLayout &L,
                                                 const SmallTab<K> &T, int C, int i,
                                                 unsigned long long *v0, long long *v1,
                                                 unsigned long long *nn)
{
    for (int a = 0; a < sp.n_aggs; a++) {
        long long x = L.st[a] >= 0 ? T.st[(size_t)L.st[a] * C + i] : 0;
        if (PACK && L.st[a] >= 0 && L.st[a] == L.pk) /* |both| < 2^63 together: their rows'
                                                      * values are below 2^31 */
            x += pack_sum(T.srows, T.scw, T.shw, i);
        v0[a] = (unsigned long long)x;
        v1[a] = kind_of(sp.fn[a], sp.in_type[a]) == K_SUMI && x < 0 ? -1 : 0;
        nn[a] = 0;
    }
    return PACK ? pack_rows(T.srows, T.scw, i) : T.srows[i];
}

template <typename K, bool SPLIT, bool PACK>
__global__ void __launch_bounds__(kThreads, 2)
    small_update_kernel(sl_k_agg_spec sp, sl_k_agg_input in, sl_k_agg_table tb,
                        sl_k_agg_table spill, SmallLayout L, int log_c, bool vec)
{
    const int C = 1 << log_c;
    const SmallTab<K> T(agg_smem, L, C);
    small_clear<K, PACK>(sp, L, T, C);
    __syncthreads();
    const int64_t nq = in.n / kSmallItems;
    for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < nq;
         q += (int64_t)gridDim.x * blockDim.x)
        small_rows<K, kSmallItems, SPLIT, PACK>(sp, in, tb, L, T, log_c, q * kSmallItems, vec);
    if (blockIdx.x == gridDim.x - 1)
        for (int64_t r = nq * kSmallItems + threadIdx.x; r < in.n; r += blockDim.x)
            small_rows<K, 1, SPLIT, PACK>(sp, in, tb, L, T, log_c, r, false);
    __syncthreads();
    for (int i = threadIdx.x; i < C; i += blockDim.x) {
        K k = T.skey[i];
        if (k == SmallKey<K>::kEmpty)
            continue;
        unsigned long long v0[kMaxA], nn[kMaxA];
        long long v1[kMaxA];
        const unsigned rows = small_states<K, PACK>(sp, L, T, C, i, v0, v1, nn);
        g_merge_or_spill(sp, tb, spill, small_gkey((int64_t)k), rows, v0, v1, nn);
    }
}

/* The lean few-groups kernel (SL_K_AGG_LEAN): the specs of one integer sum (count(*),
 * count and sum/avg of one int32/int64 column; L.n_st == 1, state 0 a sum, aggregate
 * `a`) in a shared table of stored keys, 32-bit row counts and the sums' 32-bit halves in
 * arrays of their own (the halves of one 64-bit word share banks), the rows and value of
 * a step read once, no loop over the aggregates. The same contract as small_update_kernel
 * (values outside int32 go to the global 128-bit state; rows without a slot to the
 * global table). */
template <typename K>
__global__ void __launch_bounds__(kThreads, 2)
    lean_update_kernel(sl_k_agg_spec sp, sl_k_agg_input in, sl_k_agg_table tb,
                       sl_k_agg_table spill, int a, int log_c, bool vec)
{
    const int C = 1 << log_c;
    K *skey = (K *)agg_smem;
    unsigned *srows = (unsigned *)(skey + C), *slo = srows + C;
    int *shi = (int *)(slo + C);
    for (int i = threadIdx.x; i < C; i += blockDim.x)
        skey[i] = SmallKey<K>::kEmpty, srows[i] = 0, slo[i] = 0, shi[i] = 0;
    __syncthreads();
    const int ktype = sizeof(K) == 4 ? SL_K_I32 : SL_K_I64, vtype = sp.in_type[a];
    auto row = [&](int64_t k, int64_t v) {
        const int slot = small_find<K>(skey, log_c, (K)k);
        int64_t g = -1;
        if (slot >= 0) {
            atomicAdd(&srows[slot], 1u);
            if (!small_wide(K_SUMI, vtype, v)) {
                const unsigned l = (unsigned)v, old = atomicAdd(&slo[slot], l);
                const int d = (old + l < old ? 1 : 0) - (v < 0 ? 1 : 0);
                if (d)
                    atomicAdd(&shi[slot], d);
                return;
            }
            g = small_gfind(sp, tb, k); /* a wide value; its row counts in shared memory */
        } else if ((g = small_gfind(sp, tb, k)) >= 0) {
            atomicAdd(&tb.d_rows[g], 1ull);
        }
        if (g >= 0)
            update_val(K_SUMI, tb.d_v0[a], tb.d_v1[a], g, (uint64_t)v);
    };
    const int64_t nq = in.n / kSmallItems;
    for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < nq;
         q += (int64_t)gridDim.x * blockDim.x) {
        int64_t kx[kSmallItems], v[kSmallItems];
        small_load<kSmallItems>(in.keys[0].d_data, ktype, q * kSmallItems, vec, kx);
        small_load<kSmallItems>(in.vals[a].d_data, vtype, q * kSmallItems, vec, v);
#pragma unroll
        for (int i = 0; i < kSmallItems; i++)
            row(kx[i], v[i]);
    }
    if (blockIdx.x == gridDim.x - 1)
        for (int64_t r = nq * kSmallItems + threadIdx.x; r < in.n; r += blockDim.x)
            row(ld_int(in.keys[0].d_data, ktype, r), ld_int(in.vals[a].d_data, vtype, r));
    __syncthreads();
    for (int i = threadIdx.x; i < C; i += blockDim.x) {
        const K k = skey[i];
        if (k == SmallKey<K>::kEmpty)
            continue;
        unsigned long long v0[kMaxA], nn[kMaxA];
        long long v1[kMaxA];
        const long long x = (long long)(((unsigned long long)(long long)shi[i] << 32) | slo[i]);
        for (int b = 0; b < sp.n_aggs; b++) {
            v0[b] = b == a ? (unsigned long long)x : 0;
            v1[b] = b == a && x < 0 ? -1 : 0;
            nn[b] = 0;
        }
        g_merge_or_spill(sp, tb, spill, small_gkey((int64_t)k), srows[i], v0, v1, nn);
    }
}

/* The cluster table (SL_K_AGG_CLUSTER, issue 19): a partition's table spread over the
 * CL blocks of a thread-block cluster (H100 distributed shared memory), C slots a block,
 * CL * C in all. Global slot g lives in block g / C at g % C; the first slot is the
 * hash's top bits scaled to CL * C and probes go on into the next block's slots. A slot
 * is reached through cooperative_groups' map_shared_rank, and the atomics on it are
 * atomics on the owner's shared memory. Each block takes every CL-th step of the
 * partition's rows; after a cluster barrier each block writes the groups of its own
 * slots. cl_tab: the table of block `rank` of the cluster (or this block's, CL 0). */
template <typename K, int CL>
__device__ __forceinline__ SmallTab<K> cl_tab(const SmallLayout &L, int C, unsigned rank)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (CL > 0)
        return SmallTab<K>(cooperative_groups::this_cluster().map_shared_rank(agg_smem, rank),
                           L, C);
#endif
    (void)rank;
    return SmallTab<K>(agg_smem, L, C);
}

/* small_find_n over the cluster's table: the slot (within block *owner's C) of key k,
 * claimed if new, or -1 (the empty marker as key, or no slot within kBigProbeLimit). */
template <typename K, int CL>
__device__ __forceinline__ int cl_find(const SmallLayout &L, int C, K k, unsigned *claims,
                                       unsigned *owner)
{
    if (k == SmallKey<K>::kEmpty)
        return -1;
    const uint32_t g = __umulhi(SmallKey<K>::hash(k), (uint32_t)(CL * C));
    unsigned o = g / (uint32_t)C;
    const int h = probe_n<K>(cl_tab<K, CL>(L, C, o).skey, g - o * (uint32_t)C, C, k, claims,
                             [&] {
                                 o = o + 1 == (unsigned)CL ? 0 : o + 1;
                                 return cl_tab<K, CL>(L, C, o).skey;
                             });
    *owner = o;
    return h;
}

/* Rows i0, i0 + blockDim.x, ... (N of them, those below hi) of a partition into the
 * block's shared table: every key and the first kSmallPre states' values load before the
 * first lookup (one memory wait for N rows: one row at a time left the partition kernel
 * waiting on memory), and sums add as 32-bit halves (small_add_split): 2^28 rows in 2^13
 * partitions took 3.58 ms against 4.59 (H100, 2026-11-27; counting the row count and sum in
 * one 64-bit shared atomic instead, 4.01); with PACK the row count and the first sum take
 * one 32-bit atomic (pack_add). False: some row cannot be taken (no slot within
 * kProbeLimit probes, the empty marker as key, a sum value outside int32); then the
 * caller gives the partition up (its other rows may be half added). */
template <typename K, int N, bool PACK, bool BIG, int CL>
__device__ __forceinline__ bool small_part_rows(const sl_k_agg_spec &sp, const sl_k_agg_input &in,
                                                const SmallLayout &L, const SmallTab<K> &T,
                                                int log_c, int C, int64_t i0, int64_t hi,
                                                unsigned *claims)
{
    const K *keys = (const K *)in.keys[0].d_data;
    const int64_t step = blockDim.x;
    K kx[N];
    int64_t pre[kSmallPre][N];
#pragma unroll
    for (int i = 0; i < N; i++) {
        const int64_t r = i0 + i * step;
        kx[i] = r < hi ? __ldcs(keys + r) : (K)0;
#pragma unroll
        for (int a = 0; a < kSmallPre; a++)
            pre[a][i] = a < sp.n_aggs && L.st[a] >= 0 && r < hi
                            ? ld_int(in.vals[a].d_data, sp.in_type[a], r)
                            : 0;
    }
    /* (Reading the N rows' first slots of the big table together before their lookups
     * made the partition kernel slower: 3.71 ms against 3.42, 2^12 partitions of 2^28 rows,
     * H100, 2026-11-27.) */
    int slot[N];
    unsigned own[N]; /* CL: the block of the cluster that holds the slot */
#pragma unroll
    for (int i = 0; i < N; i++) {
        slot[i] = -2; /* past hi */
        own[i] = 0;
        if (i0 + i * step >= hi)
            continue;
        slot[i] = CL  ? cl_find<K, CL>(L, C, kx[i], claims, &own[i])
                  : BIG ? small_find_n<K>(T.skey, C, kx[i], claims)
                        : small_find<K>(T.skey, log_c, kx[i], claims);
        if (slot[i] < 0)
            return false;
        if (!PACK || L.pk < 0)
            small_count<K, PACK>(CL ? cl_tab<K, CL>(L, C, own[i]) : T, slot[i]);
    }
    for (int a = 0; a < sp.n_aggs; a++) {
        const int s = L.st[a];
        if (s < 0)
            continue;
        const int kd = kind_of(sp.fn[a], sp.in_type[a]);
#pragma unroll
        for (int i = 0; i < N; i++) {
            if (slot[i] < 0)
                continue;
            const int64_t v = a == 0   ? pre[0][i]
                              : a == 1 ? pre[kSmallPre - 1][i]
                                       : ld_int(in.vals[a].d_data, sp.in_type[a], i0 + i * step);
            if (!small_state_add<K, true, PACK>(CL ? cl_tab<K, CL>(L, C, own[i]) : T, L, C, s,
                                                kd, sp.in_type[a], slot[i], v))
                return false;
        }
    }
    return true;
}

/* The partitioned method's output for the same inputs: one block per partition p
 * aggregates its rows of every batch in a shared table as above and writes its groups
 * (count -> allocate -> write, as part_final_kernel). A partition it cannot finish (more
 * groups than its slots, a key equal to the empty marker, a sum value outside int32 that
 * could overflow the 64-bit partial) writes nothing and sets its bit in `redo`, for
 * part_final_kernel to do it. BIG (SL_K_AGG_BIG): a table of C slots (any number: all the
 * shared memory of an SM) in blocks of kBigThreads, one an SM; else 1 << log_c slots. */
constexpr int kBigThreads = 1024;
/* Syncs the cluster (CL > 0: every block's shared memory written before and read after)
 * or the block. */
template <int CL>
__device__ __forceinline__ void cl_sync()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (CL > 0) {
        cooperative_groups::this_cluster().sync();
        return;
    }
#endif
    __syncthreads();
}

__device__ __forceinline__ unsigned cl_rank()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return cooperative_groups::this_cluster().block_rank();
#else
    return 0;
#endif
}

/* CL > 0 (SL_K_AGG_CLUSTER, with BIG): partition p is aggregated by the CL blocks
 * [p * CL, p * CL + CL) of one cluster in a table spread over them (cl_find); a block
 * that cannot take a row marks every block of the cluster failed (their `failed` words,
 * written before the cluster barrier), and each block writes the groups of its own slots
 * (counted after the barrier: its threads' claims may lie in other blocks). */
template <typename K, bool PACK, bool BIG, int CL>
__global__ void __launch_bounds__(BIG ? kBigThreads : kThreads)
    small_part_final_kernel(sl_k_agg_spec sp, const sl_k_agg_pbatch *batches, int n_batches,
                            uint32_t *redo, sl_k_agg_out out, int32_t *status, SmallLayout L,
                            int log_c, int big_c)
{
    const int C = BIG ? big_c : 1 << log_c;
    const int p = CL ? blockIdx.x / CL : blockIdx.x;
    const unsigned rank = CL ? cl_rank() : 0;
    const SmallTab<K> T(agg_smem, L, C);
    __shared__ int failed;
    __shared__ unsigned int n_groups, at;
    __shared__ unsigned long long out_base;
    small_clear<K, PACK>(sp, L, T, C);
    if (threadIdx.x == 0)
        failed = 0, n_groups = 0, at = 0;
    cl_sync<CL>(); /* every block's slots cleared before any block claims one */
    unsigned claims = 0; /* this thread's new groups */
    const int64_t step = (int64_t)kSmallItems * blockDim.x;
    for (int b = 0; b < n_batches; b++) {
        const sl_k_agg_input &in = batches[b].in;
        const int64_t lo = batches[b].d_offsets[p], hi = batches[b].d_offsets[p + 1];
        for (int64_t i0 = lo + rank * step + threadIdx.x; i0 < hi; i0 += (CL ? CL : 1) * step) {
            if (*(volatile int *)&failed)
                break;
            if (!small_part_rows<K, kSmallItems, PACK, BIG, CL>(sp, in, L, T, log_c, C, i0, hi,
                                                                 &claims)) {
                if constexpr (CL > 0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
                    for (int r = 0; r < CL; r++)
                        atomicExch(cooperative_groups::this_cluster().map_shared_rank(&failed, r),
                                   1);
#endif
                } else {
                    atomicExch(&failed, 1);
                }
                break;
            }
        }
    }
    if constexpr (CL > 0) { /* the groups this block writes: its own used slots */
        cl_sync<CL>();
        claims = 0;
        for (int i = threadIdx.x; i < C; i += blockDim.x)
            claims += T.skey[i] != SmallKey<K>::kEmpty;
    }
    if (claims)
        atomicAdd(&n_groups, claims);
    __syncthreads();
    if (failed) {
        if (threadIdx.x == 0 && rank == 0)
            atomicOr(&redo[p >> 5], 1u << (p & 31));
        return;
    }
    if (threadIdx.x == 0)
        out_base = n_groups ? atomicAdd(out.d_count, (unsigned long long)n_groups) : 0;
    __syncthreads();
    for (int i0 = 0; i0 < C; i0 += blockDim.x) {
        const int i = i0 + threadIdx.x;
        const bool has = i < C && T.skey[i] != SmallKey<K>::kEmpty;
        const unsigned m = __ballot_sync(~0u, has);
        unsigned w = 0;
        if ((threadIdx.x & 31) == 0 && m)
            w = atomicAdd(&at, (unsigned)__popc(m));
        w = __shfl_sync(~0u, w, 0) + __popc(m & ((1u << (threadIdx.x & 31)) - 1));
        const int64_t r = (int64_t)out_base + w;
        if (!has || r >= out.cap)
            continue;
        unsigned long long v0[kMaxA], nn[kMaxA];
        long long v1[kMaxA];
        const unsigned rows = small_states<K, PACK>(sp, L, T, C, i, v0, v1, nn);
        const int64_t k = (int64_t)T.skey[i];
        write_row(sp, out, r, &k, 1, 0, rows, v0, v1, nn, status);
    }
}

} // namespace agg
} // namespace sluice_k

#endif /* SLUICE_K_AGGREGATE_SMALL_CUH */
