/* No-partitioning hash join: global open-addressing table, streaming probe. Contracts
 * in sluice_k/join_npj.h. */
#include "sluice_k/join_npj.h"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "join_rows.cuh"

using namespace sluice_k::rows;

namespace {

constexpr int kThreads = 256;
constexpr int kItems = 4;
constexpr uint32_t kEmpty = 0xFFFFFFFFu;

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

template <typename K>
__global__ void build_kernel(const K *__restrict__ rk, int64_t nr, Slot<K> *tab, uint32_t mask)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nr;
         i += (int64_t)gridDim.x * blockDim.x) {
        const K key = rk[i];
        uint32_t h = hash_of(key) & mask;
        while (atomicCAS(&tab[h].idx, kEmpty, (uint32_t)i) != kEmpty)
            h = (h + 1) & mask;
        tab[h].key = key; /* read only by the probe, a later kernel */
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

template <typename K>
__global__ void __launch_bounds__(kThreads)
    probe_kernel(const Slot<K> *__restrict__ tab, uint32_t mask, const sl_k_cols_t r_cols,
                 const K *__restrict__ sk, int64_t ns, const sl_k_cols_t s_cols, int kind,
                 const sl_k_join_out_t out, unsigned long long *__restrict__ count)
{
    using Scan = cub::BlockScan<uint32_t, kThreads>;
    using Reduce = cub::BlockReduce<unsigned long long, kThreads>;
    __shared__ union {
        typename Scan::TempStorage scan;
        typename Reduce::TempStorage red;
    } tmp;
    __shared__ unsigned long long sh_base;
    const uint64_t cap = (uint64_t)out.capacity;
    const bool with_r = kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_LEFT;
    const bool semi_anti = !with_r;
    unsigned long long matched = 0;
    for (int64_t base = (int64_t)blockIdx.x * kThreads * kItems; base < ns;
         base += (int64_t)gridDim.x * kThreads * kItems) {
        K k[kItems];
        uint32_t c[kItems], e[kItems], mine = 0;
#pragma unroll
        for (int i = 0; i < kItems; i++) {
            const int64_t j = base + (int64_t)i * kThreads + threadIdx.x;
            c[i] = 0;
            e[i] = 0;
            if (j >= ns)
                continue;
            k[i] = sk[j];
            uint32_t h = hash_of(k[i]) & mask;
            for (;;) {
                const Slot<K> s = tab[h];
                if (s.idx == kEmpty)
                    break;
                if (s.key == k[i]) {
                    c[i]++;
                    if (semi_anti)
                        break; /* one match decides */
                }
                h = (h + 1) & mask;
            }
            e[i] = (uint32_t)emits(kind, c[i]);
            mine += e[i];
            if (with_r)
                matched += c[i];
        }
        uint32_t excl, total;
        Scan(tmp.scan).ExclusiveSum(mine, excl, total);
        if (threadIdx.x == 0)
            sh_base = total ? atomicAdd(&count[0], (unsigned long long)total) : 0;
        __syncthreads();
        unsigned long long pos = sh_base + excl;
#pragma unroll
        for (int i = 0; i < kItems; i++) {
            if (e[i] == 0)
                continue;
            const int64_t j = base + (int64_t)i * kThreads + threadIdx.x;
            if (c[i] == 0 || semi_anti) { /* SEMI/ANTI row, or LEFT row without partner */
                if (pos < cap) {
                    if (out.keys)
                        ((K *)out.keys)[pos] = k[i];
                    if (out.s_pos)
                        out.s_pos[pos] = (uint32_t)j;
                    copy_cols(out.s, pos, s_cols, j);
                    if (with_r) {
                        if (out.r_pos)
                            out.r_pos[pos] = SL_K_NULL_POS;
                        put_zero(out.r, pos);
                    }
                }
                pos++;
                continue;
            }
            uint32_t h = hash_of(k[i]) & mask;
            for (uint32_t left = c[i]; left;) {
                const Slot<K> s = tab[h];
                if (s.key == k[i] && s.idx != kEmpty) {
                    if (pos < cap) {
                        if (out.keys)
                            ((K *)out.keys)[pos] = k[i];
                        if (out.r_pos)
                            out.r_pos[pos] = s.idx;
                        if (out.s_pos)
                            out.s_pos[pos] = (uint32_t)j;
                        copy_cols(out.r, pos, r_cols, s.idx);
                        copy_cols(out.s, pos, s_cols, j);
                    }
                    pos++;
                    left--;
                }
                h = (h + 1) & mask;
            }
        }
        __syncthreads(); /* tmp and sh_base are reused */
    }
    const unsigned long long t = Reduce(tmp.red).Sum(matched);
    if (threadIdx.x == 0 && t)
        atomicAdd(&count[1], t);
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

template <typename K>
cudaError_t npj_build(void *d_temp, size_t *temp_bytes, const K *rk, int64_t nr,
                      cudaStream_t stream)
{
    if (temp_bytes == NULL || nr < 0 || nr >= ((int64_t)1 << 31))
        return cudaErrorInvalidValue;
    const int64_t slots = table_slots(nr);
    const size_t need = (size_t)slots * sizeof(Slot<K>);
    if (d_temp == NULL) {
        *temp_bytes = need;
        return cudaSuccess;
    }
    if (*temp_bytes < need || (nr > 0 && rk == NULL))
        return cudaErrorInvalidValue;
    cudaError_t e = cudaMemsetAsync(d_temp, 0xFF, need, stream);
    if (e != cudaSuccess)
        return e;
    if (nr == 0)
        return cudaSuccess;
    int64_t g = (nr + 255) / 256;
    if (g > 132 * 32)
        g = 132 * 32;
    build_kernel<K><<<(unsigned)g, 256, 0, stream>>>(rk, nr, (Slot<K> *)d_temp,
                                                    (uint32_t)(slots - 1));
    return cudaGetLastError();
}

template <typename K>
cudaError_t npj_probe(void *d_temp, size_t temp_bytes, int64_t nr, const sl_k_cols_t *r_cols,
                      const K *sk, int64_t ns, const sl_k_cols_t *s_cols, int kind,
                      const sl_k_join_out_t *out, unsigned long long *count, cudaStream_t stream)
{
    if (d_temp == NULL || out == NULL || count == NULL || r_cols == NULL || s_cols == NULL ||
        nr < 0 || nr >= ((int64_t)1 << 31) || ns < 0 || ns >= ((int64_t)1 << 32) ||
        kind < SL_K_JOIN_INNER || kind > SL_K_JOIN_LEFT || out->capacity < 0 ||
        (ns > 0 && sk == NULL))
        return cudaErrorInvalidValue;
    const int64_t slots = table_slots(nr);
    if (temp_bytes < (size_t)slots * sizeof(Slot<K>))
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
    if (g > 132 * 8)
        g = 132 * 8;
    probe_kernel<K><<<(unsigned)g, kThreads, 0, stream>>>((const Slot<K> *)d_temp,
                                                          (uint32_t)(slots - 1), rc, sk, ns,
                                                          *s_cols, kind, o, count);
    return cudaGetLastError();
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
    }

SL_K_NPJ_DEF(k32, uint32_t)
SL_K_NPJ_DEF(k64, uint64_t)
