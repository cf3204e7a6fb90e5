/* What one radix partitioning pass over 8-byte (key, row) pairs costs on the GPU (issue 19:
 * the GPU join's partition phase, two CUB onesweep passes of 8 and 7 bits and their
 * histogram pass, is most of join.gpu.narrow). Standalone: CUB and one kernel design of
 * its own, no sluice kernels.
 *
 *   gpu_partition_micro [--rows N] [--repeat R] [--chain-only 1]
 *
 * Times, over N random uint32 keys with uint32 rows (median of R after one warm-up):
 *   copy       a device-to-device copy of the pairs (read + write: the pass's floor)
 *   cub15      CUB SortPairs on bits [0, 15): what the join does today
 *   cub8, cub7 CUB SortPairs on bits [0, 8) and [8, 15) alone
 *   cub15_packed  CUB SortKeys of the pairs packed into one uint64 each (key in the low
 *              word) on bits [0, 15): one array of 8-byte items to scatter instead of
 *              two of 4 (longer runs per digit and tile)
 *   tile8      a classic stable pass on bits [0, 8): per-tile digit counts, one scan,
 *              then each tile ranked in shared memory (cub::BlockRadixRankMatch) and written
 *              digit run by digit run; tiles of 256 x IPT rows, IPT 8 and 16
 *   chain8, chain15  sl_k_partition_rows_k32 with SL_K_PART_CHAIN (kernels/partition/
 *              partition_chain.cuh: one histogram read for both passes, chained-scan passes
 *              staging tiles in shared memory) on bits [0, 8) and [0, 15)
 *   rows_cub15 / rows_chain15 at 4 B keys with 8 B rows (join.gpu.wide's pairs) and at
 *              8 B keys with 8 B rows (join.gpu.key8's), through the join's launcher
 *              sl_k_partition_rows_* (SL_K_PART_CUB is the join's CUB call)
 * Each line gives ms and the pass's GB/s (2 x the pairs' bytes over the time; cub15 counts
 * two passes). tile8's and chain8's outputs are checked against cub8's, chain15's against
 * cub15's (all stable: equal arrays). */
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include <cub/block/block_load.cuh>
#include <cub/warp/warp_load.cuh>
#include <cub/block/block_radix_rank.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "micro_util.h"
#include "sluice_k/partition.h"

namespace {

constexpr int kThreads = 256;
constexpr int kBins = 256;

__global__ void fill(uint32_t *k, uint32_t *v, int64_t n, uint64_t seed)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull + seed;
        x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ull, x ^= x >> 29;
        k[i] = (uint32_t)x;
        v[i] = (uint32_t)i;
    }
}

/* counts[d * tiles + tile]: rows of tile with digit d. */
template <int IPT>
__global__ void tile_counts(const uint32_t *__restrict__ k, int bit, uint32_t *counts, int tiles)
{
    __shared__ uint32_t h[kBins];
    for (int i = threadIdx.x; i < kBins; i += kThreads)
        h[i] = 0;
    __syncthreads();
    const int64_t base = (int64_t)blockIdx.x * kThreads * IPT;
#pragma unroll
    for (int j = 0; j < IPT; j++)
        atomicAdd(&h[(k[base + j * kThreads + threadIdx.x] >> bit) & 0xFF], 1u);
    __syncthreads();
    for (int i = threadIdx.x; i < kBins; i += kThreads)
        counts[(int64_t)i * tiles + blockIdx.x] = h[i];
}

/* The tile's rows ranked by digit (stable), staged in shared memory in digit order, then
 * written: row r of the staged tile goes to offs[d * tiles + tile] + r - start[d]. */
template <int IPT>
__global__ void __launch_bounds__(kThreads) tile_scatter(const uint32_t *__restrict__ k,
                                                         const uint32_t *__restrict__ v, int bit,
                                                         const uint32_t *__restrict__ offs,
                                                         int tiles, uint32_t *ko, uint32_t *vo)
{
    using Rank = cub::BlockRadixRankMatch<kThreads, 8, false>;
    constexpr int kTile = kThreads * IPT;
    struct Stage {
        uint32_t k[kTile], v[kTile];
    };
    __shared__ union {
        typename Rank::TempStorage rank;
        Stage st;
    } sm;
    __shared__ uint32_t start[kBins], gbase[kBins];
    const int64_t base = (int64_t)blockIdx.x * kTile;
    uint32_t kk[IPT], vv[IPT];
    int ranks[IPT];
    /* warp-striped, as the match ranking wants (stable in that order) */
    cub::LoadDirectWarpStriped(threadIdx.x, k + base, kk);
    cub::LoadDirectWarpStriped(threadIdx.x, v + base, vv);
    constexpr int kTracked = (kBins + kThreads - 1) / kThreads;
    int prefix[kTracked];
    Rank(sm.rank).RankKeys(kk, ranks, cub::BFEDigitExtractor<uint32_t>(bit, 8), prefix);
    __syncthreads();
    for (int i = threadIdx.x; i < kBins; i += kThreads) {
        start[i] = prefix[0];
        gbase[i] = offs[(int64_t)i * tiles + blockIdx.x];
    }
#pragma unroll
    for (int j = 0; j < IPT; j++) {
        sm.st.k[ranks[j]] = kk[j];
        sm.st.v[ranks[j]] = vv[j];
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < IPT; j++) {
        const int r = j * kThreads + threadIdx.x;
        const uint32_t key = sm.st.k[r];
        const int d = (key >> bit) & 0xFF;
        const uint32_t at = gbase[d] + (uint32_t)r - start[d];
        ko[at] = key;
        vo[at] = sm.st.v[r];
    }
}

struct Bufs {
    uint32_t *k, *v, *ko, *vo, *counts, *offs;
    void *temp;
    size_t temp_bytes;
};

template <int IPT> void tile8(const Bufs &b, int64_t n, cudaStream_t s)
{
    const int tiles = (int)(n / (kThreads * IPT));
    tile_counts<IPT><<<tiles, kThreads, 0, s>>>(b.k, 0, b.counts, tiles);
    size_t tb = b.temp_bytes;
    CK(cub::DeviceScan::ExclusiveSum(b.temp, tb, b.counts, b.offs, (int64_t)tiles * kBins, s));
    tile_scatter<IPT><<<tiles, kThreads, 0, s>>>(b.k, b.v, 0, b.offs, tiles, b.ko, b.vo);
    CK(cudaGetLastError());
}

void chain_pass(const Bufs &b, int64_t n, int bits, cudaStream_t s)
{
    size_t tb = b.temp_bytes;
    CK(sl_k_partition_rows_k32(b.temp, &tb, b.k, b.ko, b.v, b.vo, 4, n, 0, bits, SL_K_PART_CHAIN,
                               s));
}

/* Keys of KW bytes with 8-byte rows: the join's CUB call against the chained passes,
 * 15 bits, equal outputs checked. */
template <typename K>
void rows_pair(const char *tag, int64_t n, int repeat, cudaStream_t s,
               double (*timer)(const std::function<void()> &, int, cudaStream_t))
{
    K *k = NULL, *ko[2] = {NULL, NULL};
    uint64_t *r = NULL, *ro[2] = {NULL, NULL};
    CK(cudaMalloc(&k, n * sizeof(K)));
    CK(cudaMalloc(&r, n * 8));
    for (int m = 0; m < 2; m++) {
        CK(cudaMalloc(&ko[m], n * sizeof(K)));
        CK(cudaMalloc(&ro[m], n * 8));
    }
    CK(cudaMemsetAsync(r, 0, n * 8, s));
    fill<<<1024, 256, 0, s>>>((uint32_t *)k, (uint32_t *)r, n * sizeof(K) / 4, 11);
    const int methods[2] = {SL_K_PART_CUB, SL_K_PART_CHAIN};
    const char *names[2] = {"cub15", "chain15"};
    size_t need = 0, tb = 0;
    for (int m = 0; m < 2; m++) {
        if constexpr (sizeof(K) == 8)
            CK(sl_k_partition_rows_k64(NULL, &tb, (const uint64_t *)k, NULL, r, NULL, 8, n, 0, 15,
                                       methods[m], s));
        else
            CK(sl_k_partition_rows_k32(NULL, &tb, (const uint32_t *)k, NULL, r, NULL, 8, n, 0, 15,
                                       methods[m], s));
        need = std::max(need, tb);
    }
    void *temp = NULL;
    CK(cudaMalloc(&temp, need));
    const double gb = 2.0 * n * (sizeof(K) + 8) / 1e9;
    for (int m = 0; m < 2; m++) {
        auto run = [&] {
            size_t t = need;
            if constexpr (sizeof(K) == 8)
                CK(sl_k_partition_rows_k64(temp, &t, (const uint64_t *)k, (uint64_t *)ko[m], r,
                                           ro[m], 8, n, 0, 15, methods[m], s));
            else
                CK(sl_k_partition_rows_k32(temp, &t, (const uint32_t *)k, (uint32_t *)ko[m], r,
                                           ro[m], 8, n, 0, 15, methods[m], s));
        };
        const double ms = timer(run, repeat, s);
        printf("{\"micro\": \"rows_%s_%s\", \"rows\": %lld, \"ms\": %.4f, \"pass_gb_s\": %.0f}\n",
               names[m], tag, (long long)n, ms, 2 * gb / (ms / 1e3));
    }
    std::vector<unsigned char> a(n * 8), z(n * 8);
    bool ok = true;
    CK(cudaMemcpy(a.data(), ko[0], n * sizeof(K), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(z.data(), ko[1], n * sizeof(K), cudaMemcpyDeviceToHost));
    ok &= a == z;
    CK(cudaMemcpy(a.data(), ro[0], n * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(z.data(), ro[1], n * 8, cudaMemcpyDeviceToHost));
    ok &= a == z;
    printf("{\"check\": \"rows_chain15_%s\", \"equal_to_cub15\": %s}\n", tag,
           ok ? "true" : "false");
    CK(cudaFree(k));
    CK(cudaFree(r));
    CK(cudaFree(temp));
    for (int m = 0; m < 2; m++) {
        CK(cudaFree(ko[m]));
        CK(cudaFree(ro[m]));
    }
}

void cub_pass(const Bufs &b, int64_t n, int lo, int hi, cudaStream_t s)
{
    size_t tb = b.temp_bytes;
    CK(cub::DeviceRadixSort::SortPairs(b.temp, tb, b.k, b.ko, b.v, b.vo, n, lo, hi, s));
}

double time_fn(const std::function<void()> &f, int repeat, cudaStream_t s);

template <typename F> double time_ms(F f, int repeat, cudaStream_t s)
{
    cudaEvent_t a, z;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&z));
    f();
    std::vector<float> t;
    for (int r = 0; r < repeat; r++) {
        CK(cudaEventRecord(a, s));
        f();
        CK(cudaEventRecord(z, s));
        CK(cudaEventSynchronize(z));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, z));
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(z));
    return t[t.size() / 2];
}

double time_fn(const std::function<void()> &f, int repeat, cudaStream_t s)
{
    return time_ms(f, repeat, s);
}

} // namespace

int main(int argc, char **argv)
{
    int64_t n = (int64_t)1 << 27;
    int repeat = 7;
    int chain_only = 0; /* 1: only the chained partitioner's lines (a variant's build) */
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--rows"))
            n = strtoll(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--chain-only"))
            chain_only = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--repeat"))
            repeat = atoi(argv[i + 1]);
    }
    n -= n % (kThreads * 16); /* whole tiles */
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    Bufs b;
    const size_t bytes = (size_t)n * 4;
    const int64_t max_tiles = n / (kThreads * 8);
    CK(cudaMalloc(&b.k, bytes));
    CK(cudaMalloc(&b.v, bytes));
    CK(cudaMalloc(&b.ko, bytes));
    CK(cudaMalloc(&b.vo, bytes));
    CK(cudaMalloc(&b.counts, (size_t)max_tiles * kBins * 4));
    CK(cudaMalloc(&b.offs, (size_t)max_tiles * kBins * 4));
    size_t need = 0, need2 = 0;
    CK(cub::DeviceRadixSort::SortPairs((void *)NULL, need, b.k, b.ko, b.v, b.vo, n, 0, 15, s));
    CK(cub::DeviceScan::ExclusiveSum((void *)NULL, need2, b.counts, b.offs,
                                     max_tiles * kBins, s));
    size_t need3 = 0;
    CK(sl_k_partition_rows_k32(NULL, &need3, b.k, b.ko, b.v, b.vo, 4, n, 0, 15, SL_K_PART_CHAIN,
                               s));
    b.temp_bytes = std::max(std::max(need, need2), need3);
    CK(cudaMalloc(&b.temp, b.temp_bytes));
    fill<<<1024, 256, 0, s>>>(b.k, b.v, n, 7);
    CK(cudaStreamSynchronize(s));
    const double gb = 2.0 * 2 * bytes / 1e9; /* one pass: pairs read and written */
    auto line = [&](const char *name, double ms, double passes) {
        printf("{\"micro\": \"%s\", \"rows\": %lld, \"ms\": %.4f, \"pass_gb_s\": %.0f}\n", name,
               (long long)n, ms, passes * gb / (ms / 1e3));
    };
    if (!chain_only) {
    line("copy", time_ms([&] {
             CK(cudaMemcpyAsync(b.ko, b.k, bytes, cudaMemcpyDeviceToDevice, s));
             CK(cudaMemcpyAsync(b.vo, b.v, bytes, cudaMemcpyDeviceToDevice, s));
         }, repeat, s), 1);
    line("cub15", time_ms([&] { cub_pass(b, n, 0, 15, s); }, repeat, s), 2);
    line("cub8", time_ms([&] { cub_pass(b, n, 0, 8, s); }, repeat, s), 1);
    line("cub7", time_ms([&] { cub_pass(b, n, 8, 15, s); }, repeat, s), 1);
    {
        uint64_t *pk = NULL, *po = NULL;
        CK(cudaMalloc(&pk, 2 * bytes));
        CK(cudaMalloc(&po, 2 * bytes));
        CK(cudaMemcpy2DAsync(pk, 8, b.k, 4, 4, n, cudaMemcpyDeviceToDevice, s));
        CK(cudaMemcpy2DAsync((char *)pk + 4, 8, b.v, 4, 4, n, cudaMemcpyDeviceToDevice, s));
        size_t tb = 0;
        CK(cub::DeviceRadixSort::SortKeys((void *)NULL, tb, pk, po, n, 0, 15, s));
        void *t2 = NULL;
        CK(cudaMalloc(&t2, tb));
        line("cub15_packed", time_ms([&] {
                 size_t t = tb;
                 CK(cub::DeviceRadixSort::SortKeys(t2, t, pk, po, n, 0, 15, s));
             }, repeat, s), 2);
        CK(cudaFree(t2));
        CK(cudaFree(pk));
        CK(cudaFree(po));
    }
    }
    /* reference for the check: cub8's output */
    std::vector<uint32_t> rk(n), rv(n), tk(n), tv(n);
    cub_pass(b, n, 0, 8, s);
    CK(cudaMemcpyAsync(rk.data(), b.ko, bytes, cudaMemcpyDeviceToHost, s));
    CK(cudaMemcpyAsync(rv.data(), b.vo, bytes, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    auto check = [&](const char *name) {
        CK(cudaMemcpyAsync(tk.data(), b.ko, bytes, cudaMemcpyDeviceToHost, s));
        CK(cudaMemcpyAsync(tv.data(), b.vo, bytes, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        bool ok = tk == rk && tv == rv;
        printf("{\"check\": \"%s\", \"equal_to_reference\": %s}\n", name, ok ? "true" : "false");
    };
    if (!chain_only) {
        CK(cudaMemsetAsync(b.ko, 0, bytes, s));
        line("tile8_ipt8", time_ms([&] { tile8<8>(b, n, s); }, repeat, s), 1);
        check("tile8_ipt8");
        CK(cudaMemsetAsync(b.ko, 0, bytes, s));
        line("tile8_ipt16", time_ms([&] { tile8<16>(b, n, s); }, repeat, s), 1);
        check("tile8_ipt16");
    }
    CK(cudaMemsetAsync(b.ko, 0, bytes, s));
    line("chain8", time_ms([&] { chain_pass(b, n, 8, s); }, repeat, s), 1);
    check("chain8");
    /* reference for chain15: cub15's output */
    cub_pass(b, n, 0, 15, s);
    CK(cudaMemcpyAsync(rk.data(), b.ko, bytes, cudaMemcpyDeviceToHost, s));
    CK(cudaMemcpyAsync(rv.data(), b.vo, bytes, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaMemsetAsync(b.ko, 0, bytes, s));
    line("chain15", time_ms([&] { chain_pass(b, n, 15, s); }, repeat, s), 2);
    check("chain15 (against cub15)");
    CK(cudaFree(b.k));
    CK(cudaFree(b.v));
    CK(cudaFree(b.ko));
    CK(cudaFree(b.vo));
    rows_pair<uint32_t>("k4r8", n, repeat, s, time_fn);
    rows_pair<uint64_t>("k8r8", n, repeat, s, time_fn);
    return 0;
}
