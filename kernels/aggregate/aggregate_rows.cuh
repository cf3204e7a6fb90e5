/* Device helpers of the GPU group-by (see sluice_k/aggregate.h): reading rows, hashing
 * keys, the shared-memory and global open-addressing tables, state updates and merges,
 * and writing one output row. */
#ifndef SLUICE_K_AGGREGATE_ROWS_CUH
#define SLUICE_K_AGGREGATE_ROWS_CUH

#include <stdint.h>

#include "sluice_k/aggregate.h"

namespace sluice_k {
namespace agg {

constexpr int kMaxK = SL_K_AGG_MAX_KEYS;
constexpr int kMaxA = SL_K_AGG_MAX_AGGS;
constexpr uint32_t kLock = 0xffffffffu;  /* slot claimed, group being written */
constexpr uint32_t kTomb = 0xfffffffeu;  /* slot claimed, table was full: no group */
constexpr int32_t kEOverflow = -12;      /* SL_EOVERFLOW (include/sluice/error.h) */

/* State kinds of an aggregate. */
enum { K_NONE, K_COUNT, K_SUMI, K_SUMF, K_MINI, K_MAXI, K_MINF, K_MAXF };

__host__ __device__ inline int kind_of(int fn, int type)
{
    bool is_int = type == SL_K_I32 || type == SL_K_I64;
    switch (fn) {
    case SL_K_AGG_COUNT_STAR: return K_NONE;
    case SL_K_AGG_COUNT: return K_COUNT;
    case SL_K_AGG_SUM:
    case SL_K_AGG_AVG: return is_int ? K_SUMI : K_SUMF;
    case SL_K_AGG_MIN: return is_int ? K_MINI : K_MINF;
    default: return is_int ? K_MAXI : K_MAXF;
    }
}

/* Initial value word: sums 0, min +max, max -max (of the int64 or encoded order). */
__host__ __device__ inline unsigned long long v0_init(int kind)
{
    if (kind == K_MINI || kind == K_MINF)
        return 0x7fffffffffffffffull;
    if (kind == K_MAXI || kind == K_MAXF)
        return 0x8000000000000000ull;
    return 0;
}

__device__ __forceinline__ uint64_t mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

/* Order-preserving int64 of a double (for atomicMin/Max) and back. */
__device__ __forceinline__ long long enc_f64(double d)
{
    long long b = __double_as_longlong(d);
    return b < 0 ? b ^ 0x7fffffffffffffffll : b;
}
__device__ __forceinline__ double dec_f64(long long e)
{
    return __longlong_as_double(e < 0 ? e ^ 0x7fffffffffffffffll : e);
}

__device__ __forceinline__ bool bit_valid(const sl_k_agg_col &c, int64_t i)
{
    if (!c.d_valid)
        return true;
    int64_t b = c.valid_off + i;
    return (c.d_valid[b >> 3] >> (b & 7)) & 1;
}

__device__ __forceinline__ int64_t ld_int(const void *p, int type, int64_t i)
{
    return type == SL_K_I32 ? (int64_t)((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

/* Value of aggregate a of element i as raw 64 bits: int64 for ints, double bits for
 * floats. */
__device__ __forceinline__ uint64_t ld_val(const void *p, int type, int64_t i)
{
    switch (type) {
    case SL_K_I32: return (uint64_t)(int64_t)((const int32_t *)p)[i];
    case SL_K_I64: return (uint64_t)((const int64_t *)p)[i];
    case SL_K_F32: return (uint64_t)__double_as_longlong((double)((const float *)p)[i]);
    default: return (uint64_t)__double_as_longlong(((const double *)p)[i]);
    }
}

/* One row's keys: values (0 where null), null mask and hash. */
struct Key {
    int64_t k[kMaxK];
    uint32_t nm;
    uint64_t h;
};

/* KM: 0 generic, 1 one int32 key without bitmap, 2 one int64 key without bitmap. */
template <int KM>
__device__ __forceinline__ void load_key(const sl_k_agg_spec &sp, const sl_k_agg_input &in,
                                         int64_t e, Key &key)
{
    if (KM == 1 || KM == 2) {
        key.k[0] = KM == 1 ? (int64_t)((const int32_t *)in.keys[0].d_data)[e]
                           : ((const int64_t *)in.keys[0].d_data)[e];
        key.nm = 0;
        key.h = mix64(0x9E3779B97F4A7C15ull ^ (uint64_t)key.k[0]);
        return;
    }
    key.nm = 0;
    uint64_t h = 0x9E3779B97F4A7C15ull;
    uint32_t nb = in.d_nullbits ? in.d_nullbits[e] : 0;
#pragma unroll
    for (int j = 0; j < kMaxK; j++) {
        key.k[j] = 0;
        if (j < sp.n_keys) {
            bool null = in.d_nullbits ? (nb >> j & 1) : !bit_valid(in.keys[j], e);
            if (null)
                key.nm |= 1u << j;
            else
                key.k[j] = ld_int(in.keys[j].d_data, sp.key_type[j], e);
            h = mix64(h ^ ((uint64_t)key.k[j] + (uint64_t)j * 0x632BE59BD9B4E019ull));
        }
    }
    key.h = key.nm ? mix64(h ^ key.nm) : h;
}

/* Hash of stored keys (same as load_key's for the same spec mode). */
template <int KM>
__device__ __forceinline__ uint64_t hash_keys(const sl_k_agg_spec &sp, const int64_t *k,
                                              uint32_t nm)
{
    if (KM == 1 || KM == 2)
        return mix64(0x9E3779B97F4A7C15ull ^ (uint64_t)k[0]);
    uint64_t h = 0x9E3779B97F4A7C15ull;
#pragma unroll
    for (int j = 0; j < kMaxK; j++)
        if (j < sp.n_keys)
            h = mix64(h ^ ((uint64_t)k[j] + (uint64_t)j * 0x632BE59BD9B4E019ull));
    return nm ? mix64(h ^ nm) : h;
}

/* The block's dynamic shared memory. Table arrays are addressed as offsets from it, so
 * that the compiler knows they are shared memory (shared loads and atomics) instead of
 * generic pointers loaded from memory. */
extern __shared__ __align__(16) char agg_smem[];

/* The shared-memory table of one block: C groups, 2C slots (u32: lid + 1). Offsets into
 * agg_smem (0 = absent, except slots, which come first). */
struct Smem {
    uint32_t o_slots, o_keys, o_nulls, o_rows, o_n;
    uint32_t o_v0[kMaxA], o_v1[kMaxA], o_nn[kMaxA];
    int C;
    __device__ uint32_t *slots() const { return (uint32_t *)(agg_smem + o_slots); }
    __device__ int64_t *keys() const { return (int64_t *)(agg_smem + o_keys); }     /* [j * C + lid] */
    __device__ uint32_t *nulls() const { return (uint32_t *)(agg_smem + o_nulls); }
    __device__ unsigned int *rows() const { return (unsigned int *)(agg_smem + o_rows); }
    __device__ unsigned int *n() const { return (unsigned int *)(agg_smem + o_n); } /* may exceed C */
    __device__ unsigned long long *v0(int a) const
    {
        return o_v0[a] ? (unsigned long long *)(agg_smem + o_v0[a]) : NULL;
    }
    __device__ int *v1(int a) const { return o_v1[a] ? (int *)(agg_smem + o_v1[a]) : NULL; }
    __device__ unsigned int *nn(int a) const
    {
        return o_nn[a] ? (unsigned int *)(agg_smem + o_nn[a]) : NULL;
    }
};

__host__ __device__ inline size_t al8(size_t x)
{
    return (x + 7) & ~(size_t)7;
}

/* Bytes of a shared table for C groups (laid out by smem_carve in this order). */
__host__ __device__ inline size_t smem_bytes(const sl_k_agg_spec &sp, int C)
{
    int nk = sp.n_keys > 0 ? sp.n_keys : 1;
    size_t b = al8((size_t)2 * C * 4) + (size_t)nk * C * 8 + al8((size_t)C * 4) * 2;
    for (int a = 0; a < sp.n_aggs; a++) {
        int kd = kind_of(sp.fn[a], sp.in_type[a]);
        if (kd == K_NONE)
            continue;
        if (kd != K_COUNT)
            b += (size_t)C * 8;
        if (kd == K_SUMI)
            b += al8((size_t)C * 4);
        b += al8((size_t)C * 4);
    }
    return b + 16;
}

__device__ inline Smem smem_carve(const sl_k_agg_spec &sp, int C)
{
    Smem s;
    int nk = sp.n_keys > 0 ? sp.n_keys : 1;
    size_t p = 0;
    s.C = C;
    s.o_slots = (uint32_t)p;
    p += al8((size_t)2 * C * 4);
    s.o_keys = (uint32_t)p;
    p += (size_t)nk * C * 8;
    s.o_nulls = (uint32_t)p;
    p += al8((size_t)C * 4);
    s.o_rows = (uint32_t)p;
    p += al8((size_t)C * 4);
    for (int a = 0; a < kMaxA; a++) {
        s.o_v0[a] = s.o_v1[a] = s.o_nn[a] = 0;
        if (a >= sp.n_aggs)
            continue;
        int kd = kind_of(sp.fn[a], sp.in_type[a]);
        if (kd == K_NONE)
            continue;
        if (kd != K_COUNT) {
            s.o_v0[a] = (uint32_t)p;
            p += (size_t)C * 8;
        }
        if (kd == K_SUMI) {
            s.o_v1[a] = (uint32_t)p;
            p += al8((size_t)C * 4);
        }
        s.o_nn[a] = (uint32_t)p;
        p += al8((size_t)C * 4);
    }
    s.o_n = (uint32_t)p;
    return s;
}

/* Empties the table and sets every group's states to their initial values, so that a
 * new group only needs its keys written before it is published: the state updates of
 * other threads never meet a plain write (and compute-sanitizer racecheck sees no
 * hazard between them). The caller synchronizes the block after it. */
__device__ inline void smem_clear(const sl_k_agg_spec &sp, Smem &s)
{
    for (int i = threadIdx.x; i < 2 * s.C; i += blockDim.x)
        s.slots()[i] = 0;
    for (int i = threadIdx.x; i < s.C; i += blockDim.x) {
        s.rows()[i] = 0;
        for (int a = 0; a < sp.n_aggs; a++) {
            if (s.o_v0[a])
                s.v0(a)[i] = v0_init(kind_of(sp.fn[a], sp.in_type[a]));
            if (s.o_v1[a])
                s.v1(a)[i] = 0;
            if (s.o_nn[a])
                s.nn(a)[i] = 0;
        }
    }
    if (threadIdx.x == 0)
        *s.n() = 0;
}

__device__ __forceinline__ bool keys_eq(int nk, const volatile int64_t *stored, int64_t stride,
                                        const Key &key)
{
#pragma unroll
    for (int j = 0; j < kMaxK; j++)
        if (j < nk && stored[j * stride] != key.k[j])
            return false;
    return true;
}

/* A new group's keys, before it is published (states were set by smem_clear). Written
 * with atomic exchanges: readers of other threads load them only after seeing the
 * published slot, and the atomics tell racecheck the writes are intended. */
__device__ __forceinline__ void smem_init_group(const sl_k_agg_spec &sp, Smem &s, int lid,
                                                const Key &key)
{
#pragma unroll
    for (int j = 0; j < kMaxK; j++)
        if (j < sp.n_keys)
            atomicExch((unsigned long long *)&s.keys()[j * s.C + lid],
                       (unsigned long long)key.k[j]);
    atomicExch(&s.nulls()[lid], key.nm);
}

/* Finds or adds the group of key in the shared table; -1 if it is full. */
__device__ __forceinline__ int smem_find(const sl_k_agg_spec &sp, Smem &s, const Key &key)
{
    const uint32_t mask = 2 * s.C - 1;
    uint32_t pos = (uint32_t)key.h & mask;
    for (int probes = 0; probes <= (int)mask; probes++) {
        uint32_t v = *(volatile uint32_t *)&s.slots()[pos];
        if (v == 0 && *(volatile unsigned int *)s.n() >= (unsigned)s.C) {
            /* Full, but a thread that took the last group id for this very key may have
             * claimed this slot after we read it: read it again once the count is seen
             * (the fence pairs with the claimer's). Returning -1 while the key goes in
             * left its other rows for the next round, which wrote the group twice
             * (gpu_agg_paths.part_path_big_table, H100 2026-11-27: 49,098 groups of
             * 49,097). */
            __threadfence_block();
            v = *(volatile uint32_t *)&s.slots()[pos];
            if (v == 0)
                return -1;
        }
        if (v == 0) {
            v = atomicCAS(&s.slots()[pos], 0u, kLock);
            if (v == 0) {
                __threadfence_block(); /* the claim before the count (see above) */
                unsigned lid = atomicAdd(s.n(), 1u);
                if (lid >= (unsigned)s.C) {
                    atomicExch(&s.slots()[pos], kTomb);
                    return -1;
                }
                smem_init_group(sp, s, (int)lid, key);
                __threadfence_block();
                atomicExch(&s.slots()[pos], lid + 1);
                return (int)lid;
            }
        }
        if (v == kLock) { /* another thread, maybe of this warp, is writing the group */
            do {
                __nanosleep(16);
                v = *(volatile uint32_t *)&s.slots()[pos];
            } while (v == kLock);
            __threadfence_block(); /* its keys before ours are compared */
        }
        if (v != kTomb) {
            int lid = (int)v - 1;
            if (*(volatile uint32_t *)&s.nulls()[lid] == key.nm &&
                keys_eq(sp.n_keys, (volatile int64_t *)s.keys() + lid, s.C, key))
                return lid;
        }
        pos = (pos + 1) & mask;
    }
    return -1;
}

/* Global table: finds or adds; -1 if full. */
__device__ __forceinline__ int64_t g_init_and_publish(const sl_k_agg_spec &sp,
                                                      const sl_k_agg_table &tb, uint64_t pos,
                                                      uint64_t tag, const Key &key)
{
    unsigned long long g = atomicAdd(&tb.d_n[0], 1ull);
    if (g >= (unsigned long long)tb.cap) {
        atomicExch(&tb.d_slots[pos], tag << 32 | kTomb);
        return -1;
    }
#pragma unroll
    for (int j = 0; j < kMaxK; j++)
        if (j < sp.n_keys)
            tb.d_keys[j * tb.cap + (int64_t)g] = key.k[j];
    tb.d_nulls[g] = key.nm;
    tb.d_rows[g] = 0;
    for (int a = 0; a < sp.n_aggs; a++) {
        int kd = kind_of(sp.fn[a], sp.in_type[a]);
        if (tb.d_v0[a])
            tb.d_v0[a][g] = v0_init(kd);
        if (tb.d_v1[a])
            tb.d_v1[a][g] = 0;
        if (tb.d_nn[a])
            tb.d_nn[a][g] = 0;
    }
    __threadfence();
    atomicExch(&tb.d_slots[pos], tag << 32 | (g + 1));
    return (int64_t)g;
}

__device__ __forceinline__ int64_t g_find(const sl_k_agg_spec &sp, const sl_k_agg_table &tb,
                                          const Key &key)
{
    const uint64_t mask = tb.n_slots - 1, tag = key.h >> 32;
    uint64_t pos = key.h & mask;
    for (uint64_t probes = 0; probes <= mask; probes++) {
        unsigned long long v = *(volatile unsigned long long *)&tb.d_slots[pos];
        if (v == 0) {
            if (*(volatile unsigned long long *)&tb.d_n[0] >= (unsigned long long)tb.cap)
                return -1;
            v = atomicCAS(&tb.d_slots[pos], 0ull, tag << 32 | kLock);
            if (v == 0)
                return g_init_and_publish(sp, tb, pos, tag, key);
        }
        if ((v >> 32) == tag) {
            while ((uint32_t)v == kLock) {
                __nanosleep(32);
                v = *(volatile unsigned long long *)&tb.d_slots[pos];
            }
            __threadfence();
            if ((uint32_t)v != kTomb) {
                int64_t g = (int64_t)(uint32_t)v - 1;
                if (*(volatile uint32_t *)&tb.d_nulls[g] == key.nm &&
                    keys_eq(sp.n_keys, (volatile int64_t *)tb.d_keys + g, tb.cap, key))
                    return g;
            }
        }
        pos = (pos + 1) & mask;
    }
    return -1;
}

__device__ __forceinline__ void atomic_add_signed(int *p, long long d)
{
    atomicAdd(p, (int)d);
}
__device__ __forceinline__ void atomic_add_signed(long long *p, long long d)
{
    atomicAdd((unsigned long long *)p, (unsigned long long)d); /* two's complement */
}

/* Adds a 128-bit partial (lo, hi) to (v0, v1): carry from the returned old lo word. */
template <typename HT>
__device__ __forceinline__ void add128(unsigned long long *v0, HT *v1, uint64_t lo, long long hi)
{
    unsigned long long old = atomicAdd(v0, (unsigned long long)lo);
    long long d = hi + (old + lo < old ? 1 : 0);
    if (d != 0)
        atomic_add_signed(v1, d);
}

/* One row's value x (raw 64 bits) into state kd of group slot i. */
template <typename HT>
__device__ __forceinline__ void update_val(int kd, unsigned long long *v0, HT *v1, int64_t i,
                                           uint64_t x)
{
    switch (kd) {
    case K_SUMI: add128(&v0[i], &v1[i], x, (long long)x < 0 ? -1 : 0); break;
    case K_SUMF: atomicAdd((double *)&v0[i], __longlong_as_double((long long)x)); break;
    case K_MINI: atomicMin((long long *)&v0[i], (long long)x); break;
    case K_MAXI: atomicMax((long long *)&v0[i], (long long)x); break;
    case K_MINF: atomicMin((long long *)&v0[i], enc_f64(__longlong_as_double((long long)x))); break;
    case K_MAXF: atomicMax((long long *)&v0[i], enc_f64(__longlong_as_double((long long)x))); break;
    default: break;
    }
}

/* Merges a group's states (rows, v0, v1, nn) into group g of table tb. */
__device__ __forceinline__ void g_merge(const sl_k_agg_spec &sp, const sl_k_agg_table &tb,
                                        int64_t g, unsigned long long rows,
                                        const unsigned long long *v0, const long long *v1,
                                        const unsigned long long *nn)
{
    atomicAdd(&tb.d_rows[g], rows);
    for (int a = 0; a < sp.n_aggs; a++) {
        int kd = kind_of(sp.fn[a], sp.in_type[a]);
        if (kd == K_NONE)
            continue;
        if (nn[a])
            atomicAdd(&tb.d_nn[a][g], nn[a]);
        if (kd == K_COUNT || rows == nn[a])
            continue;
        if (kd == K_SUMI)
            add128(&tb.d_v0[a][g], &tb.d_v1[a][g], v0[a], v1[a]);
        else if (kd == K_SUMF)
            atomicAdd((double *)&tb.d_v0[a][g], __longlong_as_double((long long)v0[a]));
        else if (kd == K_MINI || kd == K_MINF)
            atomicMin((long long *)&tb.d_v0[a][g], (long long)v0[a]);
        else
            atomicMax((long long *)&tb.d_v0[a][g], (long long)v0[a]);
    }
}

/* Merges a block's group (key, rows, states) into tb, or into `spill` when tb is full
 * (counted in tb.d_n[2]; d_n[3] if the spill is full too: a bug). */
__device__ __forceinline__ void g_merge_or_spill(const sl_k_agg_spec &sp,
                                                 const sl_k_agg_table &tb,
                                                 const sl_k_agg_table &spill, const Key &key,
                                                 unsigned long long rows,
                                                 const unsigned long long *v0,
                                                 const long long *v1, const unsigned long long *nn)
{
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
        atomicAdd(&tb.d_n[3], 1ull);
}

/* Writes one group as output row r: keys, then each aggregate (null where no value). */
__device__ inline void write_row(const sl_k_agg_spec &sp, const sl_k_agg_out &out, int64_t r,
                                 const int64_t *k, int64_t kstride, uint32_t nm,
                                 unsigned long long rows, const unsigned long long *v0,
                                 const long long *v1, const unsigned long long *nn,
                                 int32_t *status)
{
    for (int j = 0; j < sp.n_keys; j++) {
        if (sp.key_type[j] == SL_K_I32)
            ((int32_t *)out.d_cols[j])[r] = (int32_t)k[j * kstride];
        else
            ((int64_t *)out.d_cols[j])[r] = k[j * kstride];
        if (nm >> j & 1) {
            atomicAnd(&out.d_valid[j][r >> 5], ~(1u << (r & 31)));
            atomicAdd(&out.d_null_count[j], 1ull);
        }
    }
    for (int a = 0; a < sp.n_aggs; a++) {
        int c = sp.n_keys + a, kd = kind_of(sp.fn[a], sp.in_type[a]);
        unsigned long long cnt = rows - (kd == K_NONE ? 0 : nn[a]);
        void *o = out.d_cols[c];
        if (kd == K_NONE || kd == K_COUNT) {
            ((int64_t *)o)[r] = (int64_t)cnt;
            continue;
        }
        const bool wide = sp.fn[a] == SL_K_AGG_SUM && kd == K_SUMI && sp.sum128[a];
        if (cnt == 0) {
            if (wide)
                ((int64_t *)o)[2 * r] = ((int64_t *)o)[2 * r + 1] = 0;
            else if (sp.fn[a] == SL_K_AGG_AVG || sp.fn[a] == SL_K_AGG_SUM ||
                     sp.in_type[a] == SL_K_I64 || sp.in_type[a] == SL_K_F64)
                ((int64_t *)o)[r] = 0;
            else
                ((int32_t *)o)[r] = 0;
            atomicAnd(&out.d_valid[c][r >> 5], ~(1u << (r & 31)));
            atomicAdd(&out.d_null_count[c], 1ull);
            continue;
        }
        uint64_t lo = v0[a];
        switch (kd) {
        case K_SUMI: {
            long long hi = v1[a];
            if (wide) { /* decimal128: 2^32 values of 18 digits stay within 38 */
                ((int64_t *)o)[2 * r] = (int64_t)lo;
                ((int64_t *)o)[2 * r + 1] = hi;
                break;
            }
            /* Only a sum must fit int64; an average is a double (as on the CPU). */
            if (sp.fn[a] == SL_K_AGG_SUM && hi != ((long long)lo < 0 ? -1 : 0))
                atomicCAS(status, 0, kEOverflow);
            /* The 128-bit sum as a double: exact int64 conversion when it fits. */
            double s = hi == ((long long)lo < 0 ? -1 : 0)
                           ? (double)(long long)lo
                           : (double)hi * 18446744073709551616.0 + (double)lo;
            if (sp.fn[a] == SL_K_AGG_AVG) /* as the CPU: sum / unit / count */
                ((double *)o)[r] = s / (sp.avg_unit[a] > 0 ? sp.avg_unit[a] : 1.0) / (double)cnt;
            else
                ((int64_t *)o)[r] = (int64_t)lo;
            break;
        }
        case K_SUMF: {
            double s = __longlong_as_double((long long)lo);
            ((double *)o)[r] = sp.fn[a] == SL_K_AGG_AVG ? s / (double)cnt : s;
            break;
        }
        case K_MINI:
        case K_MAXI:
            if (sp.in_type[a] == SL_K_I32)
                ((int32_t *)o)[r] = (int32_t)(long long)lo;
            else
                ((int64_t *)o)[r] = (long long)lo;
            break;
        default: {
            double d = dec_f64((long long)lo);
            if (sp.in_type[a] == SL_K_F32)
                ((float *)o)[r] = (float)d;
            else
                ((double *)o)[r] = d;
            break;
        }
        }
    }
}

} // namespace agg
} // namespace sluice_k

#endif /* SLUICE_K_AGGREGATE_ROWS_CUH */
