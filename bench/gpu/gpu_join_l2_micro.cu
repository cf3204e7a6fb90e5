/* One radix pass, then hash tables in the L2 cache (issue 19, join.gpu.narrow): does a
 * partitioned hash join whose per-partition tables live in global memory small enough to
 * stay in the H100's 50 MB L2 beat today's two CUB passes to shared-memory-sized
 * partitions? Standalone apart from the join's own launchers (the baseline).
 *
 *   gpu_join_l2_micro [--rows N] [--repeat R] [--zipf 0|1] [--persist 0|1] [CONFIG...]
 *
 * Data (as gpu_join_bench): R = N unique keys 0..N-1 in a bijective scramble (N a power
 * of two), R value = row; S = N keys uniform over R's keys (--zipf 1: a quarter of the
 * rows on 256 hot keys), S value = row. Everything matches once.
 *
 * Lines (median of R after one warm-up, CUDA events), each a JSON object:
 *   base     today's path: CUB SortPairs on bits [0, 15) of each side + offsets
 *            (partition), then sl_k_phj_materialize_k32_v32 (join)
 *   l2       CUB SortPairs on bits [0, B) of each side + offsets (partition), then the
 *            L2 join kernel below (join); CONFIG = B:T:LOADPCT:UNITK, e.g. 8:4:67:2
 *            (B bits, T tables, table load factor in percent, units of UNITK x 1,024
 *            build rows / 2 x that many probe rows); --persist 1: the tables are the
 *            stream's persisting L2 access-policy window; a fifth field :b builds the
 *            tables and probes nothing (the build's cost; "same" is then false), :o and
 *            :s bound the kernel's registers to 4 and 6 blocks an SM (64 and 40)
 *   l2lib    gpu_join_l2_launch.cuh's l2_materialize (the kernel below made a launcher,
 *            with a give-up for keys repeated thousands of times; it ran through the join
 *            as debug_join_l2 on branch s19-gjoin) as the join ran it: 8 bits, tables in
 *            half the L2 cache
 * The output's count and checksum (sums of keys, R values, S values) are compared with
 * the baseline's: "same": true.
 *
 * Result: a clear negative (H100, 2026-11-27 21:35 UTC, s19-gjoin 73f7ba0, 2^27 rows a
 * side, every line "same"). base: partition 4.79 ms + join 1.58 = 6.37. One 8-bit pass
 * takes partition to 2.72 ms (-2.07, as expected), but the L2-table join takes 11-22 ms:
 * l2lib 11.10 (13.82 in all); 8:4:67:2 13.95, :o (64 registers, 4 blocks an SM) 13.19,
 * :s (6 blocks) 13.94; units of 1,024 / 4,096 build rows 13.95 / 15.50; load 50% 12.76,
 * 80% 20.73; 3 / 6 / 8 tables 13.70 / 14.51 / 14.53 (the table count barely matters: not
 * L2 capacity); 7 bits (3 tables of 12 MB) 14.94; 9 bits 10.23 (but CUB then makes two
 * passes: partition 4.68); 10 bits 18.21. Zipf probe side: l2lib 12.75, base 1.62.
 * --persist 1 (the tables as a persisting L2 window) slowed everything, the partition
 * too (3.45-7.20 ms). Through the join (sluice bench join, one process): 14.60 ms
 * (on) and 14.13 (on_64regs: join phase 10.81) against 6.92 for today's path; zipf 16.75
 * against 6.93. About 2^27 build slots (a read and a CAS each) and 2^27 probe reads
 * through L2 in 11 ms: roughly 35 G random L2 operations a second, a third of what
 * the 1.1 ms estimate (about 120 G random reads a second, from join.gpu.match10's
 * bitmap) assumed; the shared-memory join does the same work in 1.6 ms.
 *
 * The L2 join: a persistent grid takes units in order; partition p's units are its build
 * chunks, then its probe chunks. Partition p uses table p % T (u64 slots: key | value <<
 * 32, linear probing from a multiply-shift hash of the key bits above the partition's).
 * A slot whose key's partition digit is not p is empty for p, so no table is ever cleared:
 * p's build waits (a spin of one thread) only until the last partition that used the
 * same table has finished probing it, and p's probes until its build chunks are done.
 * Units are claimed in order by resident blocks, so every wait ends. Table reads go
 * through L2 only (ld.global.cg): L1 may hold a line of the table's previous partition. */
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>

#include "micro_util.h"
#include "sluice_k/join.h"
#include "sluice_k/partition.h"
#include "sluice_k/persistent.cuh"

namespace lib {
#include "gpu_join_l2_launch.cuh"
}

namespace {

typedef unsigned long long u64;

constexpr int kBT = 256;   /* threads a block */
constexpr int kItems = 4;  /* rows a thread a step */
constexpr int kStep = kBT * kItems;

__global__ void fill(uint32_t *rk, uint32_t *rv, uint32_t *sk, uint32_t *sv, int64_t n,
                     int log2n, int zipf)
{
    const uint32_t mask = (uint32_t)(n - 1);
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint32_t x = (uint32_t)i;
        /* bijections of [0, n): odd multiplies and xor-shifts right */
        x = (x * 0x9E3779B1u) & mask;
        x ^= x >> (log2n / 2 + 1);
        x = (x * 0x85EBCA77u) & mask;
        x ^= x >> (log2n / 3 + 1);
        x = (x * 0xC2B2AE3Du) & mask;
        rk[i] = x;
        rv[i] = (uint32_t)i;
        u64 y = (u64)i * 0x9E3779B97F4A7C15ull + 12345;
        y ^= y >> 31, y *= 0xBF58476D1CE4E5B9ull, y ^= y >> 29, y *= 0x94D049BB133111EBull;
        y ^= y >> 32;
        uint32_t k = (uint32_t)y & mask;
        if (zipf && (y >> 40) % 4 == 0)
            k = (uint32_t)((y >> 48) & 255) * 977u & mask; /* hot keys */
        sk[i] = k;
        sv[i] = (uint32_t)(i * 7 + 1);
    }
}

/* Per partition: build units nbc, probe units npc (both 0 if a side is empty), the last
 * earlier partition on the same table with units (prev, -1 none), unit_off (exclusive
 * scan of nbc + npc, [P] the total). One block of 1,024 threads, P <= 1,024. */
__global__ void __launch_bounds__(1024) plan_kernel(const int64_t *roff, const int64_t *soff, int P, int T, int bc,
                            int pc, int *nbc, int *npc, int *prev, int64_t *unit_off)
{
    using Scan = cub::BlockScan<int64_t, 1024>;
    __shared__ typename Scan::TempStorage ts;
    __shared__ int has[1024];
    const int p = threadIdx.x;
    int64_t units = 0;
    if (p < P) {
        const int64_t nr = roff[p + 1] - roff[p], ns = soff[p + 1] - soff[p];
        const int b = nr > 0 && ns > 0 ? (int)((nr + bc - 1) / bc) : 0;
        const int q = nr > 0 && ns > 0 ? (int)((ns + pc - 1) / pc) : 0;
        nbc[p] = b;
        npc[p] = q;
        units = b + q;
        has[p] = units > 0;
    }
    __syncthreads();
    if (p < P) {
        int q = p - T;
        while (q >= 0 && !has[q])
            q -= T;
        prev[p] = q;
    }
    int64_t ex;
    Scan(ts).ExclusiveSum(units, ex);
    if (p < P)
        unit_off[p] = ex;
    if (p == P - 1)
        unit_off[P] = ex + units;
}

/* Table t's slots hold a key of partition t + 1: empty for every partition on it. */
__global__ void init_tables(u64 *tabs, int64_t slots, int T, int P, int begin)
{
    const int64_t total = slots * T;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int t = (int)(i / slots);
        tabs[i] = (u64)((uint32_t)((t + 1) % P) << begin);
    }
}

__device__ __forceinline__ uint32_t slot_of(uint32_t key, int shift, uint32_t ts)
{
    return (uint32_t)(((u64)((key >> shift) * 0x9E3779B1u) * ts) >> 32);
}

__device__ __forceinline__ void wait_at_least(const unsigned *ctr, unsigned need)
{
    while (*(volatile const unsigned *)ctr < need)
        __nanosleep(128);
    __threadfence();
}

template <int MINB>
__global__ void __launch_bounds__(kBT, MINB)
    l2_join(const uint32_t *__restrict__ rk, const uint32_t *__restrict__ rv,
            const int64_t *__restrict__ roff, const uint32_t *__restrict__ sk,
            const uint32_t *__restrict__ sv, const int64_t *__restrict__ soff, int P, int begin,
            int shift, u64 *tabs, uint32_t ts, int T, const int64_t *__restrict__ unit_off,
            const int *__restrict__ nbc, const int *__restrict__ npc,
            const int *__restrict__ prev, unsigned *built, unsigned *probed,
            unsigned long long *work, int bc, int pc, int build_only, uint32_t *__restrict__ ok,
            uint32_t *__restrict__ orv, uint32_t *__restrict__ osv, int64_t cap,
            unsigned long long *count)
{
    using Scan = cub::BlockScan<uint32_t, kBT>;
    __shared__ typename Scan::TempStorage scan_tmp;
    __shared__ int64_t sh_unit, sh_part;
    __shared__ unsigned long long sh_base;
    const int64_t total = unit_off[P];
    const uint32_t dmask = (uint32_t)(P - 1);
    for (;;) {
        int64_t u, p64;
        if (!sluice_k::claim_unit(work, unit_off, P, total, sh_unit, sh_part, u, p64))
            break;
        const int p = (int)p64;
        const int64_t local = u - unit_off[p];
        u64 *tab = tabs + (int64_t)(p % T) * ts;
        if (local < nbc[p]) { /* build */
            if (threadIdx.x == 0 && prev[p] >= 0)
                wait_at_least(&probed[prev[p]], (unsigned)npc[prev[p]]);
            __syncthreads();
            const int64_t b0 = roff[p] + local * bc;
            const int64_t b1 = min(roff[p + 1], b0 + bc);
            for (int64_t base = b0; base < b1; base += kStep) {
                uint32_t k[kItems], h[kItems];
                u64 cur[kItems], mine[kItems];
                bool live[kItems];
#pragma unroll
                for (int i = 0; i < kItems; i++) {
                    const int64_t idx = base + i * kBT + threadIdx.x;
                    live[i] = idx < b1;
                    if (live[i]) {
                        k[i] = __ldcs(rk + idx);
                        mine[i] = (u64)k[i] | (u64)__ldcs(rv + idx) << 32;
                        h[i] = slot_of(k[i], shift, ts);
                    }
                }
#pragma unroll
                for (int i = 0; i < kItems; i++)
                    if (live[i])
                        cur[i] = __ldcg(tab + h[i]);
#pragma unroll
                for (int i = 0; i < kItems; i++) {
                    if (!live[i])
                        continue;
                    for (;;) {
                        if ((((uint32_t)cur[i] >> begin) & dmask) == (uint32_t)p) {
                            h[i] = h[i] + 1 == ts ? 0 : h[i] + 1;
                            cur[i] = __ldcg(tab + h[i]);
                            continue;
                        }
                        const u64 was = atomicCAS(tab + h[i], cur[i], mine[i]);
                        if (was == cur[i])
                            break;
                        cur[i] = was;
                    }
                }
            }
            __threadfence();
            __syncthreads();
            if (threadIdx.x == 0)
                atomicAdd(&built[p], 1u);
        } else { /* probe */
            if (threadIdx.x == 0)
                wait_at_least(&built[p], (unsigned)nbc[p]);
            __syncthreads();
            const int64_t s0 = soff[p] + (local - nbc[p]) * pc;
            const int64_t s1 = build_only ? s0 : min(soff[p + 1], s0 + pc);
            for (int64_t base = s0; base < s1; base += kStep) {
                uint32_t k[kItems], v[kItems], h[kItems], cnt[kItems], first[kItems];
                u64 cur[kItems];
#pragma unroll
                for (int i = 0; i < kItems; i++) {
                    const int64_t idx = base + i * kBT + threadIdx.x;
                    cnt[i] = 0;
                    if (idx < s1) {
                        k[i] = __ldcs(sk + idx);
                        v[i] = __ldcs(sv + idx);
                        h[i] = slot_of(k[i], shift, ts);
                        cur[i] = __ldcg(tab + h[i]);
                    } else {
                        /* an empty slot for p: ends the walk at once */
                        cur[i] = (u64)((uint32_t)((p + 1) & dmask) << begin);
                        k[i] = 0;
                        h[i] = 0;
                    }
                }
#pragma unroll
                for (int i = 0; i < kItems; i++) {
                    uint32_t hh = h[i];
                    u64 c = cur[i];
                    while ((((uint32_t)c >> begin) & dmask) == (uint32_t)p) {
                        if ((uint32_t)c == k[i]) {
                            if (cnt[i] == 0)
                                first[i] = (uint32_t)(c >> 32);
                            cnt[i]++;
                        }
                        hh = hh + 1 == ts ? 0 : hh + 1;
                        c = __ldcg(tab + hh);
                    }
                }
                uint32_t excl[kItems], step_total = 0;
#pragma unroll
                for (int i = 0; i < kItems; i++) {
                    uint32_t agg;
                    Scan(scan_tmp).ExclusiveSum(cnt[i], excl[i], agg);
                    excl[i] += step_total;
                    step_total += agg;
                    __syncthreads();
                }
                if (threadIdx.x == 0)
                    sh_base = step_total ? atomicAdd(count, (u64)step_total) : 0;
                __syncthreads();
                const u64 ob = sh_base;
#pragma unroll
                for (int i = 0; i < kItems; i++) {
                    if (cnt[i] == 0)
                        continue;
                    u64 pos = ob + excl[i];
                    if (cnt[i] == 1) {
                        if (pos < (u64)cap) {
                            __stcs(ok + pos, k[i]);
                            __stcs(orv + pos, first[i]);
                            __stcs(osv + pos, v[i]);
                        }
                        continue;
                    }
                    uint32_t hh = h[i];
                    u64 c = __ldcg(tab + hh);
                    while ((((uint32_t)c >> begin) & dmask) == (uint32_t)p) {
                        if ((uint32_t)c == k[i]) {
                            if (pos < (u64)cap) {
                                ok[pos] = k[i];
                                orv[pos] = (uint32_t)(c >> 32);
                                osv[pos] = v[i];
                            }
                            pos++;
                        }
                        hh = hh + 1 == ts ? 0 : hh + 1;
                        c = __ldcg(tab + hh);
                    }
                }
            }
            __syncthreads();
            if (threadIdx.x == 0)
                atomicAdd(&probed[p], 1u);
        }
        __syncthreads(); /* sh_unit is rewritten by the next claim */
    }
}

__global__ void checksum(const uint32_t *a, const uint32_t *b, const uint32_t *c, int64_t n,
                         u64 *out)
{
    u64 x = 0, y = 0, z = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        x += a[i], y += b[i], z += (u64)c[i] * 2654435761u;
    atomicAdd(out, x);
    atomicAdd(out + 1, y);
    atomicAdd(out + 2, z);
}

struct Timer {
    cudaEvent_t e[3];
    Timer()
    {
        for (auto &x : e)
            CK(cudaEventCreate(&x));
    }
};

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv)
{
    int log2n = 27, repeat = 5, zipf = 0, persist = 0;
    std::vector<std::string> configs;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rows") && i + 1 < argc) {
            long long n = strtoll(argv[++i], NULL, 0);
            log2n = 0;
            while ((1ll << (log2n + 1)) <= n)
                log2n++;
        } else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
            repeat = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--zipf") && i + 1 < argc) {
            zipf = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--persist") && i + 1 < argc) {
            persist = atoi(argv[++i]);
        } else {
            configs.push_back(argv[i]);
        }
    }
    if (configs.empty())
        configs = {"8:4:67:1", "8:4:67:2", "8:4:67:4", "8:4:50:2", "8:3:67:2", "8:6:67:2",
                   "8:8:67:2", "8:4:80:2", "8:6:80:2", "8:4:67:2:o", "8:4:67:2:s",
                   "8:6:80:2:o", "7:3:67:2", "9:8:67:2", "10:16:67:1"};
    const int64_t n = (int64_t)1 << log2n;
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int dev = 0, sms = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const size_t b4 = (size_t)n * 4;
    uint32_t *rk, *rv, *sk, *sv, *rk2, *rv2, *sk2, *sv2, *ok, *orv, *osv;
    CK(cudaMalloc(&rk, b4));
    CK(cudaMalloc(&rv, b4));
    CK(cudaMalloc(&sk, b4));
    CK(cudaMalloc(&sv, b4));
    CK(cudaMalloc(&rk2, b4));
    CK(cudaMalloc(&rv2, b4));
    CK(cudaMalloc(&sk2, b4));
    CK(cudaMalloc(&sv2, b4));
    CK(cudaMalloc(&ok, b4));
    CK(cudaMalloc(&orv, b4));
    CK(cudaMalloc(&osv, b4));
    const int maxP = 1 << 16;
    int64_t *roff, *soff, *unit_off;
    int *nbc, *npc, *prev;
    unsigned *ctr;
    u64 *dcount, *dsum;
    CK(cudaMalloc(&roff, (maxP + 1) * 8));
    CK(cudaMalloc(&soff, (maxP + 1) * 8));
    CK(cudaMalloc(&unit_off, (1024 + 1) * 8));
    CK(cudaMalloc(&nbc, 1024 * 4));
    CK(cudaMalloc(&npc, 1024 * 4));
    CK(cudaMalloc(&prev, 1024 * 4));
    CK(cudaMalloc(&ctr, 2 * 1024 * 4 + 64));
    CK(cudaMalloc(&dcount, 64));
    CK(cudaMalloc(&dsum, 64));
    size_t tb = 0, t2 = 0;
    CK(sl_k_partition_pairs_k32_v32(NULL, &tb, rk, rk2, rv, rv2, n, 0, 15, 8, SL_K_PART_CUB, s));
    CK(sl_k_phj_materialize_k32_v32(NULL, &t2, NULL, NULL, NULL, NULL, NULL, NULL, 15, 15, NULL,
                                    NULL, NULL, 0, NULL, s));
    tb = std::max(tb, t2);
    void *temp;
    CK(cudaMalloc(&temp, tb));
    fill<<<sms * 8, 256, 0, s>>>(rk, rv, sk, sv, n, log2n, zipf);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(s));
    Timer tm;

    auto part = [&](int bits) {
        size_t t = tb;
        CK(sl_k_partition_pairs_k32_v32(temp, &t, rk, rk2, rv, rv2, n, 0, bits, 8, SL_K_PART_CUB,
                                        s));
        CK(sl_k_partition_offsets_k32(rk2, n, 0, bits, roff, s));
        t = tb;
        CK(sl_k_partition_pairs_k32_v32(temp, &t, sk, sk2, sv, sv2, n, 0, bits, 8, SL_K_PART_CUB,
                                        s));
        CK(sl_k_partition_offsets_k32(sk2, n, 0, bits, soff, s));
    };
    /* count and checksum of the output */
    auto result = [&](std::vector<u64> &out) {
        u64 c = 0;
        CK(cudaMemcpyAsync(&c, dcount, 8, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        CK(cudaMemsetAsync(dsum, 0, 64, s));
        checksum<<<sms * 4, 256, 0, s>>>(ok, orv, osv, (int64_t)std::min<u64>(c, n), dsum);
        out.assign(4, 0);
        out[0] = c;
        CK(cudaMemcpyAsync(out.data() + 1, dsum, 24, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
    };
    auto line = [&](const char *name, const char *cfg, double pm, double jm,
                    const std::vector<u64> &res, const std::vector<u64> &ref) {
        printf("{\"micro\": \"%s\", \"config\": \"%s\", \"rows\": %lld, \"zipf\": %d, "
               "\"partition_ms\": %.3f, \"join_ms\": %.3f, \"total_ms\": %.3f, \"count\": %llu, "
               "\"same\": %s}\n",
               name, cfg, (long long)n, zipf, pm, jm, pm + jm, (unsigned long long)res[0],
               res == ref ? "true" : "false");
        fflush(stdout);
    };

    /* baseline */
    std::vector<u64> ref;
    {
        std::vector<double> pt, jt;
        for (int r = 0; r <= repeat; r++) {
            CK(cudaEventRecord(tm.e[0], s));
            part(15);
            CK(cudaEventRecord(tm.e[1], s));
            size_t t = tb;
            CK(sl_k_phj_materialize_k32_v32(temp, &t, rk2, rv2, roff, sk2, sv2, soff, 15, 15, ok,
                                            orv, osv, n, dcount, s));
            CK(cudaEventRecord(tm.e[2], s));
            CK(cudaEventSynchronize(tm.e[2]));
            float a, b;
            CK(cudaEventElapsedTime(&a, tm.e[0], tm.e[1]));
            CK(cudaEventElapsedTime(&b, tm.e[1], tm.e[2]));
            if (r) {
                pt.push_back(a);
                jt.push_back(b);
            }
        }
        result(ref);
        line("base", "15", median(pt), median(jt), ref, ref);
    }

    int per_sm = 0;
    u64 *tabs = NULL;
    size_t tabs_bytes = 0;
    for (const std::string &cfg : configs) {
        int B = 9, T = 8, load = 50, uk = 4;
        char mode = 'f';
        if (sscanf(cfg.c_str(), "%d:%d:%d:%d:%c", &B, &T, &load, &uk, &mode) < 4 || B < 2 || B > 10 ||
            T < 2 || load < 10 || load > 95 || uk < 1) {
            fprintf(stderr, "bad config %s\n", cfg.c_str());
            continue;
        }
        const int P = 1 << B;
        const int bc = uk * kStep, pc = 2 * bc;
        /* mode: f as compiled, b build only, o / s: launch bounds of 4 / 6 blocks an SM */
        auto kern = mode == 'o' ? l2_join<4> : mode == 's' ? l2_join<6> : l2_join<1>;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, kBT, 0));
        part(B);
        std::vector<int64_t> ho(P + 1);
        CK(cudaMemcpyAsync(ho.data(), roff, (P + 1) * 8, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        int64_t maxr = 0;
        for (int p = 0; p < P; p++)
            maxr = std::max(maxr, ho[p + 1] - ho[p]);
        const uint32_t ts = (uint32_t)std::max<int64_t>(1024, maxr * 100 / load);
        const size_t need = (size_t)ts * T * 8;
        if (need > tabs_bytes) {
            if (tabs)
                CK(cudaFree(tabs));
            CK(cudaMalloc(&tabs, need));
            tabs_bytes = need;
        }
        /* A run leaves keys of partition p in table p % T, valid for the next run's
         * partition p: each run starts from init_tables (inside the join's time; its
         * time alone is init_ms). */
        cudaDeviceProp prop;
        CK(cudaGetDeviceProperties(&prop, dev));
        if (persist) { /* the tables as a persisting L2 window of the stream */
            const size_t lim = std::min<size_t>(need, prop.persistingL2CacheMaxSize);
            CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, lim));
            cudaStreamAttrValue a;
            memset(&a, 0, sizeof a);
            a.accessPolicyWindow.base_ptr = tabs;
            a.accessPolicyWindow.num_bytes =
                std::min<size_t>(need, prop.accessPolicyMaxWindowSize);
            a.accessPolicyWindow.hitRatio =
                std::min(1.0f, (float)lim / (float)a.accessPolicyWindow.num_bytes);
            a.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
            a.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
            CK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &a));
        }
        std::vector<double> pt, jt, it;
        std::vector<u64> res;
        for (int r = 0; r <= repeat; r++) {
            CK(cudaEventRecord(tm.e[0], s));
            part(B);
            CK(cudaEventRecord(tm.e[1], s));
            init_tables<<<sms * 4, 256, 0, s>>>(tabs, ts, T, P, 0);
            CK(cudaMemsetAsync(ctr, 0, 2 * 1024 * 4 + 64, s));
            CK(cudaMemsetAsync(dcount, 0, 8, s));
            plan_kernel<<<1, 1024, 0, s>>>(roff, soff, P, T, bc, pc, nbc, npc, prev, unit_off);
            unsigned *built = ctr, *probed = ctr + 1024;
            unsigned long long *work = (unsigned long long *)(ctr + 2048);
            kern<<<sms * per_sm, kBT, 0, s>>>(rk2, rv2, roff, sk2, sv2, soff, P, 0, B, tabs,
                                                 ts, T, unit_off, nbc, npc, prev, built, probed,
                                                 work, bc, pc, mode == 'b', ok, orv, osv, n,
                                                 dcount);
            CK(cudaGetLastError());
            CK(cudaEventRecord(tm.e[2], s));
            CK(cudaEventSynchronize(tm.e[2]));
            float a, b;
            CK(cudaEventElapsedTime(&a, tm.e[0], tm.e[1]));
            CK(cudaEventElapsedTime(&b, tm.e[1], tm.e[2]));
            if (r) {
                pt.push_back(a);
                jt.push_back(b);
            }
        }
        result(res);
        /* the table init alone, to subtract (it is not needed in a real path: one init
         * per join, or per run a fresh digit) */
        for (int r = 0; r < 3; r++) {
            CK(cudaEventRecord(tm.e[0], s));
            init_tables<<<sms * 4, 256, 0, s>>>(tabs, ts, T, P, 0);
            CK(cudaEventRecord(tm.e[1], s));
            CK(cudaEventSynchronize(tm.e[1]));
            float a;
            CK(cudaEventElapsedTime(&a, tm.e[0], tm.e[1]));
            it.push_back(a);
        }
        if (persist) {
            cudaStreamAttrValue a;
            memset(&a, 0, sizeof a);
            CK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &a));
            CK(cudaCtxResetPersistingL2Cache());
        }
        char name[200];
        snprintf(name, sizeof name,
                 "%s slots=%u tables_MiB=%.1f blocks=%d init_ms=%.3f persist=%d l2_MiB=%.1f",
                 cfg.c_str(), ts, need / 1048576.0, sms * per_sm, median(it), persist,
                 prop.l2CacheSize / 1048576.0);
        line("l2", name, median(pt), median(jt), res, ref);
    }
    /* gpu_join_l2_launch.cuh's launcher as the join ran it: 8 bits, the
     * tables in half the L2 cache */
    {
        cudaDeviceProp prop;
        CK(cudaGetDeviceProperties(&prop, dev));
        const int B = 8, P = 1 << B;
        part(B);
        std::vector<int64_t> ho(P + 1);
        CK(cudaMemcpyAsync(ho.data(), roff, (P + 1) * 8, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        int64_t maxr = 0;
        for (int p = 0; p < P; p++)
            maxr = std::max(maxr, ho[p + 1] - ho[p]);
        const size_t l2b = (size_t)prop.l2CacheSize / 2;
        size_t need = 0;
        CK(lib::l2_materialize(NULL, &need, rk2, rv2, roff, sk2, sv2, soff, B, 0,
                                           maxr, l2b, ok, orv, osv, n, 0, dcount, s));
        void *lt;
        CK(cudaMalloc(&lt, need));
        std::vector<double> pt, jt;
        std::vector<u64> res;
        for (int r = 0; r <= repeat; r++) {
            CK(cudaEventRecord(tm.e[0], s));
            part(B);
            CK(cudaEventRecord(tm.e[1], s));
            size_t tbl = need;
            CK(lib::l2_materialize(lt, &tbl, rk2, rv2, roff, sk2, sv2, soff, B, 0,
                                               maxr, l2b, ok, orv, osv, n, 0, dcount, s));
            CK(cudaEventRecord(tm.e[2], s));
            CK(cudaEventSynchronize(tm.e[2]));
            float a, b;
            CK(cudaEventElapsedTime(&a, tm.e[0], tm.e[1]));
            CK(cudaEventElapsedTime(&b, tm.e[1], tm.e[2]));
            if (r) {
                pt.push_back(a);
                jt.push_back(b);
            }
        }
        u64 gave_up = 0;
        CK(cudaMemcpy(&gave_up, dcount + 1, 8, cudaMemcpyDeviceToHost));
        result(res);
        char name[120];
        snprintf(name, sizeof name, "8 lib temp_MiB=%.1f l2_bytes=%zu gave_up=%llu",
                 need / 1048576.0, l2b, gave_up);
        line("l2lib", name, median(pt), median(jt), res, ref);
        CK(cudaFree(lt));
    }
    return 0;
}
