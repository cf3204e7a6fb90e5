/* Few-groups path of sl_k_agg_update (SL_K_AGG_FEW, issue 18): a global aggregate or a
 * group-by on one int32/int64 key or two int32 keys (TPC-H Q1's flags: 4 groups), with
 * count(*), count, sum, avg, min, max of int32/int64 values (decimal sums exact in 128
 * bits), none of them with nulls; the rows in place or read by number (in.d_rowidx: the
 * passing rows of the aggregate's where=, no gathered copy of the columns).
 *
 * The shared-table kernels (aggregate_small.cuh, the generic ones) pay a shared atomic
 * per row and aggregate, and with four groups a warp's 32 rows hit the same few words:
 * they serialize. Here each thread keeps kFewSlots groups in registers (key, row count,
 * per aggregate a 64-bit low word and a 32-bit high word of the 128-bit sum, or the
 * min/max), adds its rows there, and merges them once at the end. A row whose key finds
 * no register slot (the thread met more groups) goes to the block's shared table (as
 * aggregate_small.cuh: probing, CAS insert), and one the shared table cannot take (the
 * empty marker, no slot within kProbeLimit probes) to the global table, counted where
 * it finds no room there, as the other kernels do. Two int32 keys are one int64 (k0 in
 * the high half); the global table gets them apart, hashed as the generic kernels hash
 * them, so batches that other kernels take meet the same groups. */
#ifndef SLUICE_K_AGGREGATE_FEW_CUH
#define SLUICE_K_AGGREGATE_FEW_CUH

#include "aggregate_small.cuh"

namespace sluice_k {
namespace agg {

constexpr int kFewSlots = 4;    /* groups a thread keeps in registers */
constexpr int kFewStates = 6;   /* aggregates with a state (sum, min, max) it takes */
constexpr int kFewItems = 2;    /* rows a thread loads at a time */
constexpr int kFewLogSlots = 8; /* the block's shared table: 256 slots */
constexpr int kFewThreads = 256; /* up to 255 registers a thread: the groups stay in them */
/* A sum value of at least 2^39 in magnitude takes the shared table (as a row of a group
 * without a register): below it, a thread's int64 partial cannot overflow, since a
 * thread adds fewer than 2^24 rows (the input has fewer than 2^32, and a block has
 * kFewThreads threads). */
constexpr int kFewWideBits = 39;

/* Built by the launcher: the key shape and, per state s, its aggregate and kind. */
struct FewLayout {
    int n_keys;               /* 0, 1 or 2 */
    int key_type;             /* one key: SL_K_I32 / SL_K_I64 (two: both int32) */
    int n_st;
    int agg[kFewStates];      /* state s belongs to aggregate agg[s] */
    int kd[kFewStates];       /* K_SUMI, K_MINI, K_MAXI */
    int type[kFewStates];     /* its values: SL_K_I32 / SL_K_I64 */
    int st[kMaxA];            /* aggregate -> state, -1 none (count(*), count) */
};

/* Elements of rows [r0, r0 + N) of a column of `type` as int64: in place (small_load), or
 * where the input reads its rows by number (in.d_rowidx: e holds the rows' numbers). */
template <int N>
__device__ __forceinline__ void few_load(const void *p, int type, const int64_t (&e)[N],
                                         bool by_number, int64_t r0, bool vec, int64_t *x)
{
    if (!by_number) {
        small_load<N>(p, type, r0, vec, x);
        return;
    }
#pragma unroll
    for (int i = 0; i < N; i++)
        x[i] = type == SL_K_I32 ? (int64_t)__ldcs((const int32_t *)p + e[i])
                                : (int64_t)__ldcs((const int64_t *)p + e[i]);
}

/* Keys of rows [r0, r0 + N) as one int64 each (two int32 keys: k0 high, k1 low). */
template <int N>
__device__ __forceinline__ void few_keys(const FewLayout &L, const sl_k_agg_input &in, int64_t r0,
                                         const int64_t (&e)[N], bool by_number, bool vec,
                                         int64_t (&k)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++)
        k[i] = 0;
    if (L.n_keys == 0)
        return;
    few_load<N>(in.keys[0].d_data, L.key_type, e, by_number, r0, vec, k);
    if (L.n_keys == 2) {
        int64_t k1[N];
        few_load<N>(in.keys[1].d_data, SL_K_I32, e, by_number, r0, vec, k1);
#pragma unroll
        for (int i = 0; i < N; i++)
            k[i] = (int64_t)(((uint64_t)(uint32_t)k[i] << 32) | (uint32_t)k1[i]);
    }
}

/* The global table's key of packed key k, hashed as load_key hashes it. */
__device__ __forceinline__ Key few_gkey(const sl_k_agg_spec &sp, const FewLayout &L, int64_t k)
{
    if (L.n_keys == 1)
        return small_gkey(k);
    Key key;
#pragma unroll
    for (int j = 0; j < kMaxK; j++)
        key.k[j] = 0;
    if (L.n_keys == 2) {
        key.k[0] = (int32_t)(uint32_t)((uint64_t)k >> 32);
        key.k[1] = (int32_t)(uint32_t)k;
    }
    key.nm = 0;
    key.h = hash_keys<0>(sp, key.k, 0);
    return key;
}

/* State kd of a thread's group: v into acc (sums: |v| < 2^39, see kFewWideBits). */
__device__ __forceinline__ void few_add(int kd, long long &acc, long long v)
{
    if (kd == K_SUMI)
        acc = (long long)((unsigned long long)acc + (unsigned long long)v);
    else
        acc = kd == K_MINI ? min(acc, v) : max(acc, v);
}

/* A group's partial states (its rows, state s's value x[s]) into the block's shared
 * table, or the global table when the shared one has no slot for key k. Sums are
 * 128-bit there: x[s] sign-extended. */
__device__ __forceinline__ void few_flush(const sl_k_agg_spec &sp, const FewLayout &L,
                                          const sl_k_agg_table &tb, const sl_k_agg_table &spill,
                                          long long *st, int64_t *skey, unsigned *srows,
                                          int64_t k, unsigned rows, const long long *x)
{
    const int C = 1 << kFewLogSlots;
    const int slot = small_find<int64_t>(skey, kFewLogSlots, k);
    if (slot >= 0) {
        atomicAdd(&srows[slot], rows);
        for (int s = 0; s < L.n_st; s++) {
            long long *p = &st[(size_t)(2 * s) * C + slot];
            if (L.kd[s] == K_SUMI)
                add128((unsigned long long *)p, p + C, (uint64_t)x[s], x[s] < 0 ? -1 : 0);
            else if (L.kd[s] == K_MINI)
                atomicMin(p, x[s]);
            else
                atomicMax(p, x[s]);
        }
        return;
    }
    unsigned long long v0[kMaxA], nn[kMaxA];
    long long v1[kMaxA];
    for (int a = 0; a < sp.n_aggs; a++) {
        const int s = L.st[a];
        v0[a] = s >= 0 ? (unsigned long long)x[s] : 0;
        v1[a] = s >= 0 && L.kd[s] == K_SUMI && x[s] < 0 ? -1 : 0;
        nn[a] = 0;
    }
    g_merge_or_spill(sp, tb, spill, few_gkey(sp, L, k), rows, v0, v1, nn);
}

/* Rows [r0, r0 + N) into the thread's groups (pk, used, cnt, acc). */
template <int N>
__device__ __forceinline__ void few_rows(const sl_k_agg_spec &sp, const FewLayout &L,
                                         const sl_k_agg_input &in, const sl_k_agg_table &tb,
                                         const sl_k_agg_table &spill, long long *st,
                                         int64_t *skey, unsigned *srows, int64_t r0, bool vec,
                                         int64_t (&pk)[kFewSlots], unsigned &used,
                                         unsigned (&cnt)[kFewSlots],
                                         long long (&acc)[kFewSlots][kFewStates])
{
    const bool by_number = in.d_rowidx != nullptr;
    int64_t k[N], v[kFewStates][N], e[N];
#pragma unroll
    for (int i = 0; i < N; i++)
        e[i] = by_number ? (int64_t)__ldcs(in.d_rowidx + r0 + i) : r0 + i;
    few_keys<N>(L, in, r0, e, by_number, vec, k);
#pragma unroll
    for (int s = 0; s < kFewStates; s++) {
#pragma unroll
        for (int i = 0; i < N; i++)
            v[s][i] = 0;
        if (s < L.n_st)
            few_load<N>(in.vals[L.agg[s]].d_data, L.type[s], e, by_number, r0, vec, v[s]);
    }
#pragma unroll
    for (int i = 0; i < N; i++) {
        int hit = -1;
#pragma unroll
        for (int j = 0; j < kFewSlots; j++)
            if ((used >> j & 1) && pk[j] == k[i])
                hit = j;
        bool wide = false;
#pragma unroll
        for (int s = 0; s < kFewStates; s++)
            wide |= s < L.n_st && L.kd[s] == K_SUMI &&
                    ((uint64_t)v[s][i] + (1ull << kFewWideBits)) >> (kFewWideBits + 1) != 0;
        if (hit < 0 && !wide && used != (1u << kFewSlots) - 1) {
            hit = __ffs(~used) - 1;
            used |= 1u << hit;
#pragma unroll
            for (int j = 0; j < kFewSlots; j++)
                if (j == hit)
                    pk[j] = k[i];
        }
        if (hit < 0 || wide) { /* more groups than registers, or a wide sum value: this row
                                * through the shared table */
            long long x[kFewStates];
#pragma unroll
            for (int s = 0; s < kFewStates; s++)
                x[s] = v[s][i];
            few_flush(sp, L, tb, spill, st, skey, srows, k[i], 1, x);
            continue;
        }
#pragma unroll
        for (int j = 0; j < kFewSlots; j++) {
            if (j != hit)
                continue;
            cnt[j]++;
#pragma unroll
            for (int s = 0; s < kFewStates; s++)
                if (s < L.n_st)
                    few_add(L.kd[s], acc[j][s], v[s][i]);
        }
    }
}

static __global__ void __launch_bounds__(kFewThreads)
    few_update_kernel(sl_k_agg_spec sp, sl_k_agg_input in, sl_k_agg_table tb,
                      sl_k_agg_table spill, FewLayout L, bool vec)
{
    const int C = 1 << kFewLogSlots;
    long long *st = (long long *)agg_smem; /* per state: C low words, then C high words */
    int64_t *skey = (int64_t *)(st + (size_t)2 * L.n_st * C);
    unsigned *srows = (unsigned *)(skey + C);
    for (int i = threadIdx.x; i < C; i += blockDim.x) {
        skey[i] = SmallKey<int64_t>::kEmpty;
        srows[i] = 0;
        for (int s = 0; s < L.n_st; s++) {
            st[(size_t)(2 * s) * C + i] = (long long)v0_init(L.kd[s]);
            st[(size_t)(2 * s + 1) * C + i] = 0;
        }
    }
    __syncthreads();
    int64_t pk[kFewSlots];
    unsigned used = 0, cnt[kFewSlots];
    long long acc[kFewSlots][kFewStates];
#pragma unroll
    for (int j = 0; j < kFewSlots; j++) {
        pk[j] = 0;
        cnt[j] = 0;
#pragma unroll
        for (int s = 0; s < kFewStates; s++)
            acc[j][s] = s < L.n_st ? (long long)v0_init(L.kd[s]) : 0;
    }
    const int64_t nq = in.n / kFewItems;
    for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < nq;
         q += (int64_t)gridDim.x * blockDim.x)
        few_rows<kFewItems>(sp, L, in, tb, spill, st, skey, srows, q * kFewItems, vec, pk, used,
                            cnt, acc);
    if (blockIdx.x == gridDim.x - 1)
        for (int64_t r = nq * kFewItems + threadIdx.x; r < in.n; r += blockDim.x)
            few_rows<1>(sp, L, in, tb, spill, st, skey, srows, r, false, pk, used, cnt, acc);
#pragma unroll
    for (int j = 0; j < kFewSlots; j++) {
        if (!(used >> j & 1))
            continue;
        long long x[kFewStates]; /* a copy: acc stays in registers */
#pragma unroll
        for (int s = 0; s < kFewStates; s++)
            x[s] = acc[j][s];
        few_flush(sp, L, tb, spill, st, skey, srows, pk[j], cnt[j], x);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < C; i += blockDim.x) {
        const int64_t k = skey[i];
        if (k == SmallKey<int64_t>::kEmpty)
            continue;
        unsigned long long v0[kMaxA], nn[kMaxA];
        long long v1[kMaxA];
        for (int a = 0; a < sp.n_aggs; a++) {
            const int s = L.st[a];
            v0[a] = s >= 0 ? (unsigned long long)st[(size_t)(2 * s) * C + i] : 0;
            v1[a] = s >= 0 ? st[(size_t)(2 * s + 1) * C + i] : 0;
            nn[a] = 0;
        }
        g_merge_or_spill(sp, tb, spill, few_gkey(sp, L, k), srows[i], v0, v1, nn);
    }
}

} // namespace agg
} // namespace sluice_k

#endif /* SLUICE_K_AGGREGATE_FEW_CUH */
