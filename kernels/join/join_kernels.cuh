/* __global__ entry points of the partitioned hash join (see sluice_k/join.h). */
#ifndef SLUICE_K_JOIN_KERNELS_CUH
#define SLUICE_K_JOIN_KERNELS_CUH

#include <stdint.h>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "join_table.cuh"
#include "sluice_k/join.h"

namespace sluice_k {
namespace join {

#ifndef SL_K_JOIN_BLOCK_THREADS
#define SL_K_JOIN_BLOCK_THREADS 256 /* measured on the H100: 256 beat 512 (1.58 vs 1.79 ms) */
#endif
/* Block size by pair width (H100): 256 for 4 B + 4 B (1.58 vs 1.79 ms at 512), 512 for
 * 8 B + 8 B (2.70 vs 3.09 ms at 256: 90 KB tables, 2 blocks per SM). */
template <typename K, typename V> struct Tune {
    static constexpr int kThreads = sizeof(K) + sizeof(V) >= 16 ? 512 : SL_K_JOIN_BLOCK_THREADS;
};
using namespace sluice_k::jtab; /* chunks, slots, slot_of, units_kernel */

template <typename K, typename V>
constexpr size_t smem_bytes()
{
    return (size_t)kBuildChunk * (sizeof(K) + sizeof(V)) + kSlots * sizeof(uint16_t);
}

template <typename K>
__device__ __forceinline__ uint32_t probe(const K *bk, const uint16_t *slots, K key, int shift,
                                          int &first)
{
    uint32_t h = slot_of(key, shift), cnt = 0;
    first = -1;
    for (;;) {
        uint32_t s = slots[h];
        if (s == 0)
            break;
        if (bk[s - 1] == key) {
            if (cnt == 0)
                first = (int)s - 1;
            cnt++;
        }
        h = (h + 1) & (kSlots - 1);
    }
    return cnt;
}

/* A key or value as a 64-bit addend of the sums: zero-extended, or with SX sign-extended
 * (int32 columns, whose sums sl_k_phj_count_sum_sx_* gives as signed). */
template <bool SX, typename T> __device__ __forceinline__ unsigned long long addend(T x)
{
    if (SX && sizeof(T) == 4)
        return (unsigned long long)(long long)(int32_t)x;
    return (unsigned long long)x;
}

/* Persistent grid: each block takes work units from *work until none is left. MAT:
 * materialize rows; otherwise accumulate count and sums into result[0..3] (SX: 4-byte
 * keys and values sign-extended). */
template <typename K, typename V, bool MAT, bool SX = false>
__global__ void __launch_bounds__(Tune<K, V>::kThreads)
    join_kernel(const K *__restrict__ r_keys, const V *__restrict__ r_vals,
                const int64_t *__restrict__ r_off, const K *__restrict__ s_keys,
                const V *__restrict__ s_vals, const int64_t *__restrict__ s_off, int64_t parts,
                int shift, const int64_t *__restrict__ unit_off,
                unsigned long long *__restrict__ work, K *__restrict__ out_k,
                V *__restrict__ out_r, V *__restrict__ out_s, int64_t cap,
                unsigned long long *__restrict__ count)
{
    constexpr int kBlockThreads = Tune<K, V>::kThreads;
    using Scan = cub::BlockScan<uint32_t, kBlockThreads>;
    using Reduce = cub::BlockReduce<unsigned long long, kBlockThreads>;
    extern __shared__ __align__(16) unsigned char smem[];
    K *bk = (K *)smem;
    V *bv = (V *)(smem + (size_t)kBuildChunk * sizeof(K));
    uint16_t *slots = (uint16_t *)(smem + (size_t)kBuildChunk * (sizeof(K) + sizeof(V)));
    __shared__ union {
        typename Scan::TempStorage scan;
        typename Reduce::TempStorage reduce;
    } tmp;
    __shared__ int64_t sh_unit, sh_part;
    __shared__ unsigned long long sh_out_base;

    const int64_t total_units = unit_off[parts];
    unsigned long long acc_n = 0, acc_k = 0, acc_r = 0, acc_s = 0;

    for (;;) {
        int64_t u, p;
        if (!claim_unit(work, unit_off, parts, total_units, sh_unit, sh_part, u, p))
            break;
        const UnitRows ur = unit_rows(r_off, s_off, unit_off, u, p);
        const int64_t rb = ur.rb, sb = ur.sb, se = ur.se;
        const int m = ur.m;

        table_clear<kBlockThreads>(slots);
        for (int i = threadIdx.x; i < m; i += kBlockThreads) {
            bk[i] = r_keys[rb + i];
            bv[i] = r_vals[rb + i];
        }
        __syncthreads();
        table_insert<kBlockThreads>(slots, bk, m, shift);
        __syncthreads();

        for (int64_t base = sb; base < se; base += (int64_t)kBlockThreads * kProbeItems) {
            K k[kProbeItems];
            V v[kProbeItems];
            uint32_t cnt[kProbeItems];
            int first[kProbeItems];
#pragma unroll
            for (int i = 0; i < kProbeItems; i++) {
                int64_t idx = base + (int64_t)i * kBlockThreads + threadIdx.x;
                cnt[i] = 0;
                first[i] = -1;
                if (idx < se) {
                    k[i] = s_keys[idx];
                    v[i] = s_vals[idx];
                }
            }
#pragma unroll
            for (int i = 0; i < kProbeItems; i++) {
                int64_t idx = base + (int64_t)i * kBlockThreads + threadIdx.x;
                if (idx < se)
                    cnt[i] = probe(bk, slots, k[i], shift, first[i]);
            }
            if (MAT) {
                uint32_t excl[kProbeItems], step_total = 0;
#pragma unroll
                for (int i = 0; i < kProbeItems; i++) {
                    uint32_t agg;
                    Scan(tmp.scan).ExclusiveSum(cnt[i], excl[i], agg);
                    excl[i] += step_total;
                    step_total += agg;
                    __syncthreads();
                }
                if (threadIdx.x == 0)
                    sh_out_base = step_total ? atomicAdd(count, (unsigned long long)step_total) : 0;
                __syncthreads();
                const unsigned long long ob = sh_out_base;
#pragma unroll
                for (int i = 0; i < kProbeItems; i++) {
                    if (cnt[i] == 0)
                        continue;
                    unsigned long long pos = ob + excl[i];
                    if (cnt[i] == 1) {
                        if (pos < (unsigned long long)cap) {
                            out_k[pos] = k[i];
                            out_r[pos] = bv[first[i]];
                            out_s[pos] = v[i];
                        }
                        continue;
                    }
                    uint32_t h = slot_of(k[i], shift);
                    for (;;) {
                        uint32_t s = slots[h];
                        if (s == 0)
                            break;
                        if (bk[s - 1] == k[i]) {
                            if (pos < (unsigned long long)cap) {
                                out_k[pos] = k[i];
                                out_r[pos] = bv[s - 1];
                                out_s[pos] = v[i];
                            }
                            pos++;
                        }
                        h = (h + 1) & (kSlots - 1);
                    }
                }
                __syncthreads(); /* sh_out_base is rewritten by the next step */
            } else {
#pragma unroll
                for (int i = 0; i < kProbeItems; i++) {
                    if (cnt[i] == 0)
                        continue;
                    acc_n += cnt[i];
                    acc_k += addend<SX>(k[i]) * cnt[i];
                    acc_s += addend<SX>(v[i]) * cnt[i];
                    if (cnt[i] == 1) {
                        acc_r += addend<SX>(bv[first[i]]);
                        continue;
                    }
                    uint32_t h = slot_of(k[i], shift);
                    for (;;) {
                        uint32_t s = slots[h];
                        if (s == 0)
                            break;
                        if (bk[s - 1] == k[i])
                            acc_r += addend<SX>(bv[s - 1]);
                        h = (h + 1) & (kSlots - 1);
                    }
                }
            }
        }
        __syncthreads(); /* shared table and sh_unit are rewritten by the next unit */
    }
    if (!MAT) {
        __syncthreads();
        unsigned long long t = Reduce(tmp.reduce).Sum(acc_n);
        if (threadIdx.x == 0 && t)
            atomicAdd(&count[0], t);
        __syncthreads();
        t = Reduce(tmp.reduce).Sum(acc_k);
        if (threadIdx.x == 0 && t)
            atomicAdd(&count[1], t);
        __syncthreads();
        t = Reduce(tmp.reduce).Sum(acc_r);
        if (threadIdx.x == 0 && t)
            atomicAdd(&count[2], t);
        __syncthreads();
        t = Reduce(tmp.reduce).Sum(acc_s);
        if (threadIdx.x == 0 && t)
            atomicAdd(&count[3], t);
    }
}

} // namespace join
} // namespace sluice_k

#endif /* SLUICE_K_JOIN_KERNELS_CUH */
