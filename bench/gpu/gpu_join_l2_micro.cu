/* One radix pass, then hash tables in the L2 cache (issue 19, join.gpu.narrow): does a
 * partitioned hash join whose per-partition tables live in global memory small enough to
 * stay in the H100's 50 MB L2 beat today's two CUB passes to shared-memory-sized
 * partitions? Standalone apart from the join's own launchers (the baseline) and its
 * include, gpu_join_l2_launch.cuh.
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
 *   l2       CUB SortPairs on bits [0, B) of each side + offsets (partition), then
 *            gpu_join_l2_launch.cuh's l2_materialize (join; the launcher the join ran as
 *            debug_join_l2 on branch s19-gjoin); CONFIG = B:T:LOADPCT:UNITK[:MODE], e.g.
 *            8:4:67:2: B bits, T tables at once, table load in percent, units of UNITK x
 *            1,024 build rows (2 x that many probe rows), 0 = the launcher's choice
 *            (8:0:0:0 is what the join ran: tables in half the L2 cache, load 67%, units
 *            of 2,048); MODE o / s bounds the kernel's registers to 4 / 6 blocks an SM
 *            (64 / 40; 80 as compiled, 3 blocks), b builds the tables and probes nothing
 *            (the build's cost; "same" is then false). --persist 1: the temp storage
 *            (mostly the tables) is the stream's persisting L2 access-policy window
 * The output's count and checksum (sums of keys, R values, S values) are compared with
 * the baseline's: "same": true.
 *
 * Result: a clear negative (H100, 2026-11-27 21:35 UTC, s19-gjoin 73f7ba0, 2^27 rows a
 * side, every line "same"; the configurations then ran a prototype copy of the kernel
 * without the give-up and the digit taken out of the hash, "l2lib" the launcher as
 * 8:0:0:0 runs it now). base: partition 4.79 ms + join 1.58 = 6.37. One 8-bit pass
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
 * How the L2 join works: gpu_join_l2_launch.cuh. */
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
        configs = {"8:0:0:0",  "8:0:0:0:o", "8:0:0:0:b", "8:4:67:2", "8:4:67:2:s",
                   "8:4:50:2", "8:4:80:2", "8:3:67:2", "8:8:67:2", "8:4:67:1",
                   "8:4:67:4", "7:3:67:2", "9:8:67:2"};
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
    int64_t *roff, *soff;
    u64 *dcount, *dsum;
    CK(cudaMalloc(&roff, (maxP + 1) * 8));
    CK(cudaMalloc(&soff, (maxP + 1) * 8));
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

    /* repeat + 1 runs (the first a warm-up) of the partition on `bits`, then `join`:
     * each run's partition and join times into pt and jt */
    auto timed = [&](int bits, const auto &join, std::vector<double> &pt,
                     std::vector<double> &jt) {
        for (int r = 0; r <= repeat; r++) {
            CK(cudaEventRecord(tm.e[0], s));
            part(bits);
            CK(cudaEventRecord(tm.e[1], s));
            join();
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
    };

    /* baseline */
    std::vector<u64> ref;
    {
        std::vector<double> pt, jt;
        timed(15, [&] {
            size_t t = tb;
            CK(sl_k_phj_materialize_k32_v32(temp, &t, rk2, rv2, roff, sk2, sv2, soff, 15, 15, ok,
                                            orv, osv, n, dcount, s));
        }, pt, jt);
        result(ref);
        line("base", "15", median(pt), median(jt), ref, ref);
    }

    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    const size_t l2b = (size_t)prop.l2CacheSize / 2; /* the launcher's default budget */
    void *lt = NULL;
    size_t lt_bytes = 0;
    for (const std::string &cfg : configs) {
        int B = 8, T = 0, load = 0, uk = 0;
        char mode = 'f';
        if (sscanf(cfg.c_str(), "%d:%d:%d:%d:%c", &B, &T, &load, &uk, &mode) < 4 || B < 2 ||
            B > 10 || T == 1 || T < 0 || (load && (load < 10 || load > 95)) || uk < 0) {
            fprintf(stderr, "bad config %s\n", cfg.c_str());
            continue;
        }
        const int P = 1 << B;
        /* mode: f as compiled, b build only, o / s: launch bounds of 4 / 6 blocks an SM */
        const lib::Shape sh = {T, load, uk * 1024, mode == 'o' ? 4 : mode == 's' ? 6 : 0,
                               mode == 'b'};
        part(B);
        std::vector<int64_t> ho(P + 1);
        CK(cudaMemcpyAsync(ho.data(), roff, (P + 1) * 8, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        int64_t maxr = 0;
        for (int p = 0; p < P; p++)
            maxr = std::max(maxr, ho[p + 1] - ho[p]);
        size_t need = 0;
        CK(lib::l2_materialize(NULL, &need, rk2, rv2, roff, sk2, sv2, soff, B, 0, maxr, l2b, ok,
                               orv, osv, n, sh, dcount, s));
        if (need > lt_bytes) {
            if (lt)
                CK(cudaFree(lt));
            CK(cudaMalloc(&lt, need));
            lt_bytes = need;
        }
        if (persist) { /* the temp storage (mostly tables) as a persisting L2 window */
            const size_t lim = std::min<size_t>(need, prop.persistingL2CacheMaxSize);
            CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, lim));
            cudaStreamAttrValue a;
            memset(&a, 0, sizeof a);
            a.accessPolicyWindow.base_ptr = lt;
            a.accessPolicyWindow.num_bytes =
                std::min<size_t>(need, prop.accessPolicyMaxWindowSize);
            a.accessPolicyWindow.hitRatio =
                std::min(1.0f, (float)lim / (float)a.accessPolicyWindow.num_bytes);
            a.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
            a.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
            CK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &a));
        }
        std::vector<double> pt, jt;
        std::vector<u64> res;
        timed(B, [&] {
            size_t tbl = need;
            CK(lib::l2_materialize(lt, &tbl, rk2, rv2, roff, sk2, sv2, soff, B, 0, maxr, l2b, ok,
                                   orv, osv, n, sh, dcount, s));
        }, pt, jt);
        u64 gave_up = 0;
        CK(cudaMemcpy(&gave_up, dcount + 1, 8, cudaMemcpyDeviceToHost));
        result(res);
        if (persist) {
            cudaStreamAttrValue a;
            memset(&a, 0, sizeof a);
            CK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &a));
            CK(cudaCtxResetPersistingL2Cache());
        }
        char name[200];
        snprintf(name, sizeof name, "%s temp_MiB=%.1f gave_up=%llu persist=%d l2_MiB=%.1f",
                 cfg.c_str(), need / 1048576.0, gave_up, persist, prop.l2CacheSize / 1048576.0);
        line("l2", name, median(pt), median(jt), res, ref);
    }
    return 0;
}
