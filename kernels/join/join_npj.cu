/* No-partitioning hash join: global open-addressing table, streaming probe. Contracts
 * in sluice_k/join_npj.h. */
#include "sluice_k/join_npj.h"

#include <cstring>

#include "sluice_k/rows.cuh"
#include "../common/grid.cuh"

using namespace sluice_k::rows;

namespace {

constexpr int kThreads = 256;
constexpr int kItems = 4;
constexpr uint32_t kEmpty = 0xFFFFFFFFu;
/* Tuning knob for measurements: minimum resident blocks per SM for the probe (0: let the
 * compiler choose registers; 60 registers, 4 blocks, no spills on sm_90). */
#ifndef SL_K_NPJ_MIN_BLOCKS
#define SL_K_NPJ_MIN_BLOCKS 0
#endif

template <typename K> struct AtomicT;
template <> struct AtomicT<uint32_t> { using T = unsigned int; };
template <> struct AtomicT<uint64_t> { using T = unsigned long long; };

/* One slot: key and R row (kEmpty: free). 8 bytes for 4-byte keys, 16 for 8-byte keys,
 * so a probe step is one aligned load. */
template <typename K> struct alignas(2 * sizeof(K)) Slot {
    K key;
    uint32_t idx;
};

__device__ __forceinline__ uint32_t hash_of(uint32_t k)
{
    k ^= k >> 16;
    k *= 0x85ebca6bu;
    k ^= k >> 13;
    k *= 0xc2b2ae35u;
    return k ^ (k >> 16);
}
__device__ __forceinline__ uint32_t hash_of(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    return (uint32_t)(k ^ (k >> 33));
}

int64_t table_slots(int64_t nr)
{
    int64_t c = 1024;
    while (c < 2 * nr)
        c <<= 1;
    return c;
}

/* d_temp: the slots, then one 16-byte word: nonzero when some key is in R twice (the
 * probe then walks each key's whole run; else it stops at the first match). */
template <typename K> size_t table_bytes(int64_t nr)
{
    return (size_t)table_slots(nr) * sizeof(Slot<K>) + 16;
}
template <typename K> unsigned *dup_word(void *d_temp, int64_t nr)
{
    return (unsigned *)((char *)d_temp + (size_t)table_slots(nr) * sizeof(Slot<K>));
}

/* Inserts R rows [from, to) (rk: all R keys). */
template <typename K>
__global__ void build_kernel(const K *__restrict__ rk, int64_t from, int64_t to, Slot<K> *tab,
                             uint32_t mask)
{
    for (int64_t i = from + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < to;
         i += (int64_t)gridDim.x * blockDim.x) {
        const K key = rk[i];
        uint32_t h = hash_of(key) & mask;
        while (atomicCAS(&tab[h].idx, kEmpty, (uint32_t)i) != kEmpty)
            h = (h + 1) & mask;
        tab[h].key = key; /* read only by later kernels */
    }
}

/* After the build: a key found twice in its run marks the table as having duplicates. */
template <typename K>
__global__ void dup_kernel(const K *__restrict__ rk, int64_t nr, const Slot<K> *__restrict__ tab,
                           uint32_t mask, unsigned *dup)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nr;
         i += (int64_t)gridDim.x * blockDim.x) {
        if (*(volatile unsigned *)dup)
            return;
        const K key = rk[i];
        int seen = 0;
        for (uint32_t h = hash_of(key) & mask;; h = (h + 1) & mask) {
            const Slot<K> s = tab[h];
            if (s.idx == kEmpty)
                break;
            if (s.key == key && ++seen > 1) {
                atomicOr(dup, 1u);
                return;
            }
        }
    }
}

/* The smallest and largest key (as unsigned values) into mm[0], mm[1] (preset to the
 * type's max and 0). */
template <typename K>
__global__ void range_kernel(const K *__restrict__ keys, int64_t n, K *mm)
{
    K lo = ~(K)0, hi = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const K v = keys[i];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    for (int d = 16; d > 0; d >>= 1) {
        const K a = __shfl_down_sync(0xffffffffu, lo, d), b = __shfl_down_sync(0xffffffffu, hi, d);
        lo = a < lo ? a : lo;
        hi = b > hi ? b : hi;
    }
    if ((threadIdx.x & 31) == 0) {
        atomicMin((typename AtomicT<K>::T *)&mm[0], (typename AtomicT<K>::T)lo);
        atomicMax((typename AtomicT<K>::T *)&mm[1], (typename AtomicT<K>::T)hi);
    }
}

/* Direct table: slot key - kmin holds the key's R row (R rows [from, to); rk: all R
 * keys); a second row for a slot sets the duplicate word's bit 0 (the operator then builds
 * the hash table instead), a key outside the `range` slots its bit 1 (the table is
 * unusable too). */
template <typename K>
__global__ void dense_build_kernel(const K *__restrict__ rk, int64_t from, int64_t to, K kmin,
                                   uint64_t range, uint32_t *tab, unsigned *dup)
{
    for (int64_t i = from + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < to;
         i += (int64_t)gridDim.x * blockDim.x) {
        const uint64_t d = (uint64_t)(K)(rk[i] - kmin);
        if (d >= range)
            atomicOr(dup, 2u);
        else if (atomicCAS(&tab[d], kEmpty, (uint32_t)i) != kEmpty)
            atomicOr(dup, 1u);
    }
}

__device__ __forceinline__ uint64_t emits(int kind, uint32_t c)
{
    switch (kind) {
    case SL_K_JOIN_INNER: return c;
    case SL_K_JOIN_SEMI: return c > 0;
    case SL_K_JOIN_ANTI: return c == 0;
    default: return c > 0 ? c : 1;
    }
}

/* Exclusive prefix sum over the 32 lanes of a full warp; *total: the warp's sum. */
__device__ __forceinline__ uint32_t warp_excl(uint32_t v, uint32_t *total)
{
    const int lane = threadIdx.x & 31;
    uint32_t x = v;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const uint32_t y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= d)
            x += y;
    }
    *total = __shfl_sync(0xffffffffu, x, 31);
    return x - v;
}

/* One output row: key, positions and the columns of R row r (r == kEmpty: none, LEFT
 * NULL side or SEMI/ANTI) and S row j. */
template <typename K>
__device__ __forceinline__ void put(const sl_k_join_out_t &out, uint64_t pos, K key,
                                    uint32_t r, const sl_k_cols_t &r_cols, uint64_t j,
                                    const sl_k_cols_t &s_cols, bool with_r)
{
    if (pos >= (uint64_t)out.capacity)
        return;
    if (out.keys)
        ((K *)out.keys)[pos] = key;
    if (out.s_pos)
        out.s_pos[pos] = (uint32_t)j;
    copy_cols(out.s, pos, s_cols, j);
    if (!with_r)
        return;
    if (out.r_pos)
        out.r_pos[pos] = r == kEmpty ? SL_K_NULL_POS : r;
    if (r == kEmpty)
        put_zero(out.r, pos);
    else
        copy_cols(out.r, pos, r_cols, r);
}

/* Each block takes kThreads * kItems probe rows at a time, item i of thread t being row
 * base + i * kThreads + t (coalesced loads). Output rows are ordered by (warp, item,
 * lane), so a warp's rows of one item are consecutive and its stores coalesce. With a
 * duplicate-free R (the usual PK side) a walk stops at the first match and the row is
 * written from it; otherwise the first walk counts and a second one writes. */
/* Dense: `tab` is the direct table of dense_build_kernel (R row of key kmin + d at d,
 * `mask` unused, `range` slots; never duplicates). Else the hash table above. */
/* Tables of the probe: the hash table, the direct table of rows, the direct table with
 * values (dval_build_kernel). */
enum { kHash, kDense, kDval };

/* A packed R row of W 4-byte words (W = 1, 2 or 4: one aligned load): word i is column
 * col[i]'s value (4-byte columns) or its half half[i] (8-byte columns). */
template <int W> struct WordsT;
template <> struct WordsT<1> { using T = uint32_t; };
template <> struct WordsT<2> { using T = uint2; };
template <> struct WordsT<4> { using T = uint4; };
struct WordMap {
    int n;                              /* words used (<= W) */
    signed char col[4], half[4];
};
__device__ __forceinline__ void words_of(const uint2 &v, uint32_t *w) { w[0] = v.x, w[1] = v.y; }
__device__ __forceinline__ void words_of(const uint4 &v, uint32_t *w)
{
    w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
}
__device__ __forceinline__ void words_of(const uint32_t &v, uint32_t *w) { w[0] = v; }
template <int W> __device__ __forceinline__ typename WordsT<W>::T from_words(const uint32_t *w);
template <> __device__ __forceinline__ uint32_t from_words<1>(const uint32_t *w) { return w[0]; }
template <> __device__ __forceinline__ uint2 from_words<2>(const uint32_t *w)
{
    return make_uint2(w[0], w[1]);
}
template <> __device__ __forceinline__ uint4 from_words<4>(const uint32_t *w)
{
    return make_uint4(w[0], w[1], w[2], w[3]);
}
/* word i of column map.col[i], row r (input or output columns alike) */
__device__ __forceinline__ uint32_t *word_at(const sl_k_cols_t &c, const WordMap &m, int i,
                                             uint64_t r)
{
    uint32_t *p = (uint32_t *)c.ptr[m.col[i]];
    return c.width[m.col[i]] == 4 ? p + r : p + 2 * r + m.half[i];
}

/* Dval: `tab` holds the values of dval_build_kernel (NULL: none), `bitmap` the keys
 * present; `map`: the values are R rows packed by it (map.n > 0, written to out.r). */
template <typename K, int Mode, int W>
__global__ void __launch_bounds__(kThreads, SL_K_NPJ_MIN_BLOCKS)
    probe_kernel(const Slot<K> *__restrict__ tab, uint32_t mask, const unsigned *dup_flag,
                 K kmin, uint64_t range, const uint32_t *__restrict__ bitmap, WordMap map,
                 const sl_k_cols_t r_cols, const K *__restrict__ sk,
                 int64_t ns, const sl_k_cols_t s_cols, int kind, const sl_k_join_out_t out,
                 unsigned long long *__restrict__ count)
{
    constexpr bool Dense = Mode != kHash;
    using V = typename WordsT<W>::T;
    const bool carried = Mode == kDval && map.n > 0;
    V val[kItems];
    constexpr int kWarps = kThreads / 32;
    __shared__ uint32_t warp_tot[kWarps];
    __shared__ unsigned long long warp_base[kWarps];
    __shared__ unsigned long long block_matched;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const bool with_r = kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_LEFT;
    const bool semi_anti = !with_r;
    const bool dups = !Dense && *dup_flag != 0; /* the direct table has none */
    if (threadIdx.x == 0)
        block_matched = 0;
    unsigned long long matched = 0;
    for (int64_t base = (int64_t)blockIdx.x * kThreads * kItems; base < ns;
         base += (int64_t)gridDim.x * kThreads * kItems) {
        K k[kItems];
        Slot<K> sl[kItems];
        uint32_t c[kItems], first[kItems], off[kItems], h[kItems], wsum = 0;
#pragma unroll
        for (int i = 0; i < kItems; i++) {
            const int64_t j = base + (int64_t)i * kThreads + threadIdx.x;
            c[i] = 0;
            first[i] = kEmpty;
            if (j < ns)
                k[i] = sk[j];
        }
        if constexpr (Mode == kDval) {
            const V *vt = (const V *)tab;
            uint32_t w[kItems];
#pragma unroll
            for (int i = 0; i < kItems; i++) { /* bitmap word (L2) and value at once */
                const int64_t j = base + (int64_t)i * kThreads + threadIdx.x;
                const uint64_t d = (uint64_t)(K)(k[i] - kmin);
                w[i] = 0;
                val[i] = V{};
                if (j < ns && d < range) {
                    w[i] = bitmap[d >> 5] >> (d & 31);
                    if (with_r && vt)
                        val[i] = vt[d];
                }
            }
#pragma unroll
            for (int i = 0; i < kItems; i++) {
                c[i] = w[i] & 1u; /* first[i] stays kEmpty: no R row number */
                if (with_r)
                    matched += c[i];
            }
        } else if constexpr (Dense) {
            const uint32_t *dt = (const uint32_t *)tab;
            uint32_t r[kItems];
#pragma unroll
            for (int i = 0; i < kItems; i++) { /* all lookups in flight at once */
                const int64_t j = base + (int64_t)i * kThreads + threadIdx.x;
                const uint64_t d = (uint64_t)(K)(k[i] - kmin);
                r[i] = j < ns && d < range ? dt[d] : kEmpty;
            }
#pragma unroll
            for (int i = 0; i < kItems; i++) {
                c[i] = r[i] != kEmpty;
                first[i] = r[i];
                if (with_r)
                    matched += c[i];
            }
        } else {
#pragma unroll
        for (int i = 0; i < kItems; i++) { /* every item's first slot in flight at once */
            const int64_t j = base + (int64_t)i * kThreads + threadIdx.x;
            if (j < ns) {
                h[i] = hash_of(k[i]) & mask;
                sl[i] = tab[h[i]];
            }
        }
#pragma unroll
        for (int i = 0; i < kItems; i++) {
            const int64_t j = base + (int64_t)i * kThreads + threadIdx.x;
            if (j >= ns)
                continue;
            for (Slot<K> s = sl[i]; s.idx != kEmpty; s = tab[h[i] = (h[i] + 1) & mask]) {
                if (s.key == k[i]) {
                    if (c[i]++ == 0)
                        first[i] = s.idx;
                    if (semi_anti || !dups)
                        break; /* one match decides / is the only one */
                }
            }
            if (with_r)
                matched += c[i];
        }
        } /* Dense */
#pragma unroll
        for (int i = 0; i < kItems; i++) {
            const int64_t j = base + (int64_t)i * kThreads + threadIdx.x;
            uint32_t tot;
            off[i] = wsum + warp_excl(j < ns ? (uint32_t)emits(kind, c[i]) : 0u, &tot);
            wsum += tot;
        }
        if (lane == 0)
            warp_tot[warp] = wsum;
        __syncthreads();
        if (warp == 0) {
            uint32_t all;
            const uint32_t ex = warp_excl(lane < kWarps ? warp_tot[lane] : 0u, &all);
            unsigned long long b = 0;
            if (lane == 0 && all)
                b = atomicAdd(&count[0], (unsigned long long)all);
            b = __shfl_sync(0xffffffffu, b, 0);
            if (lane < kWarps)
                warp_base[lane] = b + ex;
        }
        __syncthreads();
        const unsigned long long wb = warp_base[warp];
#pragma unroll
        for (int i = 0; i < kItems; i++) {
            const int64_t j = base + (int64_t)i * kThreads + threadIdx.x;
            if (j >= ns || emits(kind, c[i]) == 0)
                continue;
            unsigned long long pos = wb + off[i];
            if (c[i] == 0 || semi_anti) { /* SEMI/ANTI row, or LEFT row without partner */
                put<K>(out, pos, k[i], kEmpty, r_cols, j, s_cols, with_r);
                if constexpr (Mode == kDval)
                    if (carried && with_r && pos < (uint64_t)out.capacity)
#pragma unroll
                        for (int q = 0; q < W; q++)
                            if (q < map.n)
                                *word_at(out.r, map, q, pos) = 0;
                continue;
            }
            if constexpr (Mode == kDval) {
                if (carried) { /* R's row is the table's value */
                    put<K>(out, pos, k[i], kEmpty, r_cols, j, s_cols, false);
                    uint32_t vw[W];
                    words_of(val[i], vw);
                    if (pos < (uint64_t)out.capacity)
#pragma unroll
                        for (int q = 0; q < W; q++)
                            if (q < map.n)
                                *word_at(out.r, map, q, pos) = vw[q];
                    continue;
                }
            }
            put<K>(out, pos++, k[i], first[i], r_cols, j, s_cols, true);
            if (Dense || c[i] == 1)
                continue;
            uint32_t left = c[i] - 1, h = hash_of(k[i]) & mask;
            for (bool past_first = false; left; h = (h + 1) & mask) {
                const Slot<K> s = tab[h];
                if (s.key != k[i] || s.idx == kEmpty)
                    continue;
                if (!past_first) { /* the first match was written above */
                    past_first = true;
                    continue;
                }
                put<K>(out, pos++, k[i], s.idx, r_cols, j, s_cols, true);
                left--;
            }
        }
    }
    /* rows with an R partner: one atomic per block */
    if (with_r) {
        for (int d = 16; d > 0; d >>= 1)
            matched += __shfl_down_sync(0xffffffffu, matched, d);
        __syncthreads();
        if (lane == 0 && matched)
            atomicAdd(&block_matched, matched);
        __syncthreads();
        if (threadIdx.x == 0 && block_matched)
            atomicAdd(&count[1], block_matched);
    }
}

/* Output column j takes input column j: out may have fewer columns than the input. */
bool cols_match(const sl_k_cols_t *in, const sl_k_cols_t *o)
{
    if (o->n > in->n || o->n < 0 || in->n > SL_K_MAX_COLS)
        return false;
    for (int j = 0; j < o->n; j++)
        if (in->width[j] != o->width[j] || (in->width[j] != 4 && in->width[j] != 8) ||
            !in->ptr[j] || !o->ptr[j])
            return false;
    return true;
}

/* Rows [from, to) of the nr R keys rk into the table (cleared first when from is 0; the
 * duplicate word set after the last rows, to == nr): the build in parts as R arrives. */
template <typename K>
cudaError_t npj_build_rows(void *d_temp, size_t *temp_bytes, const K *rk, int64_t nr,
                           int64_t from, int64_t to, cudaStream_t stream)
{
    if (temp_bytes == NULL || nr < 0 || nr >= ((int64_t)1 << 31) || from < 0 || to < from ||
        to > nr)
        return cudaErrorInvalidValue;
    const int64_t slots = table_slots(nr);
    const size_t need = table_bytes<K>(nr);
    if (d_temp == NULL) {
        *temp_bytes = need;
        return cudaSuccess;
    }
    if (*temp_bytes < need || (nr > 0 && rk == NULL))
        return cudaErrorInvalidValue;
    unsigned *dup = dup_word<K>(d_temp, nr);
    cudaError_t e = cudaSuccess;
    if (from == 0) {
        e = cudaMemsetAsync(d_temp, 0xFF, (size_t)slots * sizeof(Slot<K>), stream);
        if (e == cudaSuccess)
            e = cudaMemsetAsync(dup, 0, 16, stream);
    }
    if (e != cudaSuccess || nr == 0)
        return e;
    if (to > from) {
        const int64_t g = sl_grid::capped((to - from + 255) / 256, 32);
        build_kernel<K><<<(unsigned)g, 256, 0, stream>>>(rk, from, to, (Slot<K> *)d_temp,
                                                        (uint32_t)(slots - 1));
        if ((e = cudaGetLastError()) != cudaSuccess)
            return e;
    }
    if (to < nr)
        return cudaSuccess;
    const int64_t g = sl_grid::capped((nr + 255) / 256, 32);
    dup_kernel<K><<<(unsigned)g, 256, 0, stream>>>(rk, nr, (const Slot<K> *)d_temp,
                                                  (uint32_t)(slots - 1), dup);
    return cudaGetLastError();
}

template <typename K>
cudaError_t npj_build(void *d_temp, size_t *temp_bytes, const K *rk, int64_t nr,
                      cudaStream_t stream)
{
    return npj_build_rows<K>(d_temp, temp_bytes, rk, nr, 0, nr, stream);
}

/* Checks shared by both probes, then the launch. */
template <typename K, int Mode, int W = 1>
cudaError_t probe_launch(const void *tab, uint32_t mask, const unsigned *dup, K kmin,
                         uint64_t range, const uint32_t *bitmap, WordMap map, int64_t nr,
                         const sl_k_cols_t *r_cols, const K *sk,
                         int64_t ns, const sl_k_cols_t *s_cols, int kind,
                         const sl_k_join_out_t *out, unsigned long long *count,
                         cudaStream_t stream)
{
    if (out == NULL || count == NULL || r_cols == NULL || s_cols == NULL || nr < 0 ||
        nr >= ((int64_t)1 << 31) || ns < 0 || ns >= ((int64_t)1 << 32) ||
        kind < SL_K_JOIN_INNER || kind > SL_K_JOIN_LEFT || out->capacity < 0 ||
        (ns > 0 && sk == NULL))
        return cudaErrorInvalidValue;
    const bool with_r = kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_LEFT;
    if (!cols_match(s_cols, &out->s) || (with_r && !cols_match(r_cols, &out->r)))
        return cudaErrorInvalidValue;
    sl_k_join_out_t o = *out;
    sl_k_cols_t rc = *r_cols;
    if (!with_r)
        o.r.n = 0, o.r_pos = NULL, rc.n = 0;
    cudaError_t e = cudaMemsetAsync(count, 0, 2 * sizeof *count, stream);
    if (e != cudaSuccess || ns == 0)
        return e;
    int64_t g = (ns + kThreads * kItems - 1) / (kThreads * kItems);
    g = sl_grid::capped(g, 8);
    probe_kernel<K, Mode, W><<<(unsigned)g, kThreads, 0, stream>>>(
        (const Slot<K> *)tab, mask, dup, kmin, range, bitmap, map, rc, sk, ns, *s_cols,
        kind, o, count);
    return cudaGetLastError();
}

template <typename K>
cudaError_t npj_probe(void *d_temp, size_t temp_bytes, int64_t nr, const sl_k_cols_t *r_cols,
                      const K *sk, int64_t ns, const sl_k_cols_t *s_cols, int kind,
                      const sl_k_join_out_t *out, unsigned long long *count, cudaStream_t stream)
{
    if (d_temp == NULL || nr < 0 || nr >= ((int64_t)1 << 31) || temp_bytes < table_bytes<K>(nr))
        return cudaErrorInvalidValue;
    return probe_launch<K, kHash>(d_temp, (uint32_t)(table_slots(nr) - 1),
                                  dup_word<K>(d_temp, nr), 0, 0, NULL, WordMap{}, nr, r_cols, sk,
                                  ns, s_cols, kind, out, count, stream);
}

/* Direct table: `range` row numbers, then the 16-byte duplicate word. */
size_t dense_bytes(int64_t range) { return ((size_t)range * 4 + 15) / 16 * 16 + 16; }

template <typename K>
cudaError_t key_range(const K *keys, int64_t n, K *mm, cudaStream_t stream)
{
    if (n < 0 || (n > 0 && keys == NULL) || mm == NULL)
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    int64_t g = (n + 255) / 256;
    g = sl_grid::capped(g, 16);
    range_kernel<K><<<(unsigned)g, 256, 0, stream>>>(keys, n, mm);
    return cudaGetLastError();
}

/* Rows [from, to) of the nr R keys rk into the direct table (cleared first when from is
 * 0): the build in parts as R arrives. */
template <typename K>
cudaError_t dense_build_rows(void *d_temp, size_t *temp_bytes, const K *rk, int64_t nr,
                             int64_t from, int64_t to, K kmin, int64_t range,
                             cudaStream_t stream)
{
    if (temp_bytes == NULL || nr < 0 || nr >= ((int64_t)1 << 31) || range < 0 ||
        range >= ((int64_t)1 << 32) || from < 0 || to < from || to > nr)
        return cudaErrorInvalidValue;
    const size_t need = dense_bytes(range);
    if (d_temp == NULL) {
        *temp_bytes = need;
        return cudaSuccess;
    }
    if (*temp_bytes < need || (nr > 0 && rk == NULL))
        return cudaErrorInvalidValue;
    unsigned *dup = (unsigned *)((char *)d_temp + need - 16);
    cudaError_t e = cudaSuccess;
    if (from == 0) {
        e = cudaMemsetAsync(d_temp, 0xFF, need - 16, stream);
        if (e == cudaSuccess)
            e = cudaMemsetAsync(dup, 0, 16, stream);
    }
    if (e != cudaSuccess || to == from)
        return e;
    const int64_t g = sl_grid::capped((to - from + 255) / 256, 32);
    dense_build_kernel<K><<<(unsigned)g, 256, 0, stream>>>(rk, from, to, kmin, (uint64_t)range,
                                                          (uint32_t *)d_temp, dup);
    return cudaGetLastError();
}

template <typename K>
cudaError_t dense_build(void *d_temp, size_t *temp_bytes, const K *rk, int64_t nr, K kmin,
                        int64_t range, cudaStream_t stream)
{
    return dense_build_rows<K>(d_temp, temp_bytes, rk, nr, 0, nr, kmin, range, stream);
}

template <typename K>
cudaError_t dense_probe(void *d_temp, size_t temp_bytes, int64_t nr, K kmin, int64_t range,
                        const sl_k_cols_t *r_cols, const K *sk, int64_t ns,
                        const sl_k_cols_t *s_cols, int kind, const sl_k_join_out_t *out,
                        unsigned long long *count, cudaStream_t stream)
{
    if (d_temp == NULL || range < 0 || range >= ((int64_t)1 << 32) ||
        temp_bytes < dense_bytes(range))
        return cudaErrorInvalidValue;
    return probe_launch<K, kDense>(d_temp, 0, NULL, kmin, (uint64_t)range, NULL, WordMap{}, nr,
                                   r_cols, sk, ns, s_cols, kind, out, count, stream);
}

/* ---- the direct table with values (sl_k_npj_dval_*) ---- */

/* The values' words for `values` (SL_K_NPJ_DVAL_*) and R's columns: 0 (none) or the
 * packed row's 1, 2 or 4 words (*map: where each comes from); -1 when the columns do not
 * fit 16 bytes of 4- and 8-byte values. */
int dval_words(int values, const sl_k_cols_t *r_cols, WordMap *map)
{
    memset(map, 0, sizeof *map);
    if (values == SL_K_NPJ_DVAL_NONE)
        return 0;
    if (values != SL_K_NPJ_DVAL_PACKED || r_cols == NULL || r_cols->n < 1 ||
        r_cols->n > SL_K_MAX_COLS)
        return -1;
    for (int j = 0; j < r_cols->n; j++) {
        const int w = r_cols->width[j];
        if ((w != 4 && w != 8) || map->n + w / 4 > 4 || !r_cols->ptr[j])
            return -1;
        for (int h = 0; h < w / 4; h++) {
            map->col[map->n] = (signed char)j;
            map->half[map->n++] = (signed char)h;
        }
    }
    return map->n <= 1 ? 1 : map->n <= 2 ? 2 : 4;
}

/* Layout: range values of 4 * words bytes, the bitmap of range bits (each rounded up to
 * 16 bytes), the 16-byte duplicate word. */
size_t dval_values_bytes(int64_t range, int words)
{
    return ((size_t)range * (size_t)words * 4 + 15) / 16 * 16;
}
size_t dval_bitmap_bytes(int64_t range) { return ((size_t)range + 127) / 128 * 16; }
size_t dval_bytes(int64_t range, int words)
{
    return dval_values_bytes(range, words) + dval_bitmap_bytes(range) + 16;
}

/* R rows [0, nr): the key's bit set (a bit already set: bit 0 of the duplicate word; a
 * key outside the range: bit 1) and its value stored (R's row packed from r_cols by map;
 * vals NULL: none). kItems rows a thread at a time, their
 * loads in flight together; the threads stop once the word is set (the table is
 * unusable then: a side whose keys repeat costs a wave of rows, not all of them). */
template <typename K, int W>
__global__ void dval_build_kernel(const K *__restrict__ rk, const sl_k_cols_t r_cols,
                                  WordMap map, int64_t nr, K kmin, uint64_t range,
                                  typename WordsT<W>::T *vals, uint32_t *bitmap, unsigned *dup)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x * kItems;
    for (int64_t base = (int64_t)blockIdx.x * blockDim.x * kItems; base < nr; base += stride) {
        if (*(volatile unsigned *)dup) /* unusable already (repeated keys show up early) */
            return;
        K k[kItems];
        uint32_t v[kItems][W];
#pragma unroll
        for (int i = 0; i < kItems; i++) {
            const int64_t r = base + (int64_t)i * blockDim.x + threadIdx.x;
#pragma unroll
            for (int q = 0; q < W; q++)
                v[i][q] = 0;
            if (r >= nr)
                continue;
            k[i] = rk[r];
            if (vals)
#pragma unroll
                for (int q = 0; q < W; q++)
                    if (q < map.n)
                        v[i][q] = *word_at(r_cols, map, q, (uint64_t)r);
        }
        unsigned bad = 0;
#pragma unroll
        for (int i = 0; i < kItems; i++) {
            const int64_t r = base + (int64_t)i * blockDim.x + threadIdx.x;
            if (r >= nr)
                continue;
            const uint64_t d = (uint64_t)(K)(k[i] - kmin);
            if (d >= range) {
                bad |= 2u;
                continue;
            }
            const uint32_t bit = 1u << (d & 31);
            if (atomicOr(&bitmap[d >> 5], bit) & bit)
                bad |= 1u;
            if (vals)
                vals[d] = from_words<W>(v[i]);
        }
        if (bad)
            atomicOr(dup, bad);
    }
}

template <typename K>
cudaError_t dval_build(void *d_temp, size_t *temp_bytes, const K *rk, int values,
                       const sl_k_cols_t *r_cols, int64_t nr, K kmin, int64_t range,
                       cudaStream_t stream)
{
    WordMap map;
    const int words = dval_words(values, r_cols, &map);
    if (temp_bytes == NULL || nr < 0 || nr >= ((int64_t)1 << 31) || range < 0 ||
        range >= ((int64_t)1 << 32) || words < 0)
        return cudaErrorInvalidValue;
    const size_t need = dval_bytes(range, words);
    if (d_temp == NULL) {
        *temp_bytes = need;
        return cudaSuccess;
    }
    if (*temp_bytes < need || (nr > 0 && rk == NULL))
        return cudaErrorInvalidValue;
    char *bitmap = (char *)d_temp + dval_values_bytes(range, words);
    unsigned *dup = (unsigned *)((char *)d_temp + need - 16);
    /* the values need no clearing: a slot is read only where its bit is set */
    cudaError_t e = cudaMemsetAsync(bitmap, 0, dval_bitmap_bytes(range) + 16, stream);
    if (e != cudaSuccess || nr == 0)
        return e;
    sl_k_cols_t rc;
    memset(&rc, 0, sizeof rc);
    if (map.n > 0)
        rc = *r_cols;
    const int64_t g = sl_grid::capped((nr + 256 * kItems - 1) / (256 * kItems), 8);
#define SL_DVB(W)                                                                          \
    dval_build_kernel<K, W><<<(unsigned)g, 256, 0, stream>>>(                              \
        rk, rc, map, nr, kmin, (uint64_t)range,                                           \
        words ? (typename WordsT<W>::T *)d_temp : NULL, (uint32_t *)bitmap, dup)
    if (words <= 1)
        SL_DVB(1);
    else if (words == 2)
        SL_DVB(2);
    else
        SL_DVB(4);
#undef SL_DVB
    return cudaGetLastError();
}

template <typename K>
cudaError_t dval_probe(void *d_temp, size_t temp_bytes, int64_t nr, K kmin, int64_t range,
                       int values, const sl_k_cols_t *r_cols, const K *sk, int64_t ns,
                       const sl_k_cols_t *s_cols, int kind, const sl_k_join_out_t *out,
                       unsigned long long *count, cudaStream_t stream)
{
    const bool with_r = kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_LEFT;
    WordMap map;
    const int words = dval_words(values, r_cols, &map);
    if (d_temp == NULL || range < 0 || range >= ((int64_t)1 << 32) || words < 0 ||
        temp_bytes < dval_bytes(range, words) || out == NULL || r_cols == NULL)
        return cudaErrorInvalidValue;
    /* packed: out->r takes R's columns as r_cols lists them (equal widths), no r_pos;
     * none: nothing of R is written */
    if (with_r && values == SL_K_NPJ_DVAL_PACKED) {
        if (out->r.n != r_cols->n || out->r_pos != NULL)
            return cudaErrorInvalidValue;
        for (int j = 0; j < r_cols->n; j++)
            if (out->r.width[j] != r_cols->width[j] || !out->r.ptr[j])
                return cudaErrorInvalidValue;
    }
    if (with_r && values == SL_K_NPJ_DVAL_NONE && (out->r.n != 0 || out->r_pos != NULL))
        return cudaErrorInvalidValue; /* no R row numbers to write them from */
    const uint32_t *bitmap =
        (const uint32_t *)((const char *)d_temp + dval_values_bytes(range, words));
    const void *vals = words ? d_temp : NULL; /* none: only the bitmap is read */
    sl_k_cols_t none;
    memset(&none, 0, sizeof none);
    sl_k_join_out_t o = *out;
    const sl_k_cols_t *rin = r_cols;
    if (map.n > 0) { /* R columns written from the values by the kernel, not copied */
        o.r.n = 0;
        rin = &none;
    }
    /* the kernel writes packed values through map over out.r's pointers (o.r keeps them) */
#define SL_DVP(W)                                                                          \
    probe_launch<K, kDval, W>(vals, 0, NULL, kmin, (uint64_t)range, bitmap, map, nr, rin, sk, \
                              ns, s_cols, kind, &o, count, stream)
    if (words <= 1)
        return SL_DVP(1);
    return words == 2 ? SL_DVP(2) : SL_DVP(4);
#undef SL_DVP
}

} // namespace

#define SL_K_NPJ_DEF(SUF, KT)                                                              \
    extern "C" cudaError_t sl_k_npj_build_##SUF(void *d_temp, size_t *temp_bytes,          \
                                                const KT *d_r_keys, int64_t nr,            \
                                                cudaStream_t stream)                       \
    {                                                                                     \
        return npj_build<KT>(d_temp, temp_bytes, d_r_keys, nr, stream);                   \
    }                                                                                     \
    extern "C" cudaError_t sl_k_npj_probe_##SUF(                                          \
        void *d_temp, size_t temp_bytes, int64_t nr, const sl_k_cols_t *r_cols,           \
        const KT *d_s_keys, int64_t ns, const sl_k_cols_t *s_cols, int kind,              \
        const sl_k_join_out_t *out, unsigned long long *d_count, cudaStream_t stream)     \
    {                                                                                     \
        return npj_probe<KT>(d_temp, temp_bytes, nr, r_cols, d_s_keys, ns, s_cols, kind,   \
                             out, d_count, stream);                                       \
    }                                                                                     \
    extern "C" cudaError_t sl_k_npj_build_rows_##SUF(void *d_temp, size_t *temp_bytes,     \
                                                     const KT *d_r_keys, int64_t nr,       \
                                                     int64_t from, int64_t to,             \
                                                     cudaStream_t stream)                  \
    {                                                                                     \
        return npj_build_rows<KT>(d_temp, temp_bytes, d_r_keys, nr, from, to, stream);    \
    }

SL_K_NPJ_DEF(k32, uint32_t)
SL_K_NPJ_DEF(k64, uint64_t)

#define SL_K_NPJ_DENSE_DEF(SUF, KT)                                                        \
    extern "C" cudaError_t sl_k_npj_key_range_##SUF(const KT *d_keys, int64_t n,           \
                                                    KT *d_minmax, cudaStream_t stream)     \
    {                                                                                     \
        return key_range<KT>(d_keys, n, d_minmax, stream);                                \
    }                                                                                     \
    extern "C" cudaError_t sl_k_npj_dense_build_##SUF(void *d_temp, size_t *temp_bytes,    \
                                                      const KT *d_r_keys, int64_t nr,      \
                                                      KT kmin, int64_t range,              \
                                                      cudaStream_t stream)                 \
    {                                                                                     \
        return dense_build<KT>(d_temp, temp_bytes, d_r_keys, nr, kmin, range, stream);    \
    }                                                                                     \
    extern "C" cudaError_t sl_k_npj_dense_probe_##SUF(                                    \
        void *d_temp, size_t temp_bytes, int64_t nr, KT kmin, int64_t range,              \
        const sl_k_cols_t *r_cols, const KT *d_s_keys, int64_t ns, const sl_k_cols_t *s_cols, \
        int kind, const sl_k_join_out_t *out, unsigned long long *d_count,                \
        cudaStream_t stream)                                                              \
    {                                                                                     \
        return dense_probe<KT>(d_temp, temp_bytes, nr, kmin, range, r_cols, d_s_keys, ns,  \
                               s_cols, kind, out, d_count, stream);                       \
    }                                                                                     \
    extern "C" cudaError_t sl_k_npj_dense_build_rows_##SUF(                               \
        void *d_temp, size_t *temp_bytes, const KT *d_r_keys, int64_t nr, int64_t from,   \
        int64_t to, KT kmin, int64_t range, cudaStream_t stream)                          \
    {                                                                                     \
        return dense_build_rows<KT>(d_temp, temp_bytes, d_r_keys, nr, from, to, kmin,     \
                                    range, stream);                                       \
    }

SL_K_NPJ_DENSE_DEF(k32, uint32_t)
SL_K_NPJ_DENSE_DEF(k64, uint64_t)


#define SL_K_NPJ_DVAL_DEF(SUF, KT)                                                         \
    extern "C" cudaError_t sl_k_npj_dval_build_##SUF(                                     \
        void *d_temp, size_t *temp_bytes, const KT *d_r_keys, int values,                 \
        const sl_k_cols_t *r_cols, int64_t nr, KT kmin, int64_t range, cudaStream_t stream) \
    {                                                                                     \
        return dval_build<KT>(d_temp, temp_bytes, d_r_keys, values, r_cols, nr, kmin,     \
                              range, stream);                                             \
    }                                                                                     \
    extern "C" cudaError_t sl_k_npj_dval_probe_##SUF(                                     \
        void *d_temp, size_t temp_bytes, int64_t nr, KT kmin, int64_t range, int values,  \
        const sl_k_cols_t *r_cols, const KT *d_s_keys, int64_t ns,                        \
        const sl_k_cols_t *s_cols, int kind, const sl_k_join_out_t *out,                  \
        unsigned long long *d_count, cudaStream_t stream)                                 \
    {                                                                                     \
        return dval_probe<KT>(d_temp, temp_bytes, nr, kmin, range, values, r_cols,        \
                              d_s_keys, ns, s_cols, kind, out, d_count, stream);          \
    }

SL_K_NPJ_DVAL_DEF(k32, uint32_t)
SL_K_NPJ_DVAL_DEF(k64, uint64_t)
