/* Microbenchmark of GPU group-by kernel designs (issue 19), standalone (no engine, no
 * kernels of the tree): 2^LG rows of int32 keys and int64 values, count(*) + sum(v), as
 * `sluice bench aggregate` generates them (G groups, keys hashed to random 32-bit
 * values) or dense keys [0, G). Times each variant (median of 5 after a warm-up, CUDA
 * events) and checks its result against a CPU reference.
 *
 *   gpu_agg_micro LG G [dense]
 *
 * Variants:
 *   copy       device copy of the input bytes (the floor)
 *   small<C>   per-block shared hash table of C slots (32-bit multiplicative hash, keys
 *              stored, CAS insert), 32-bit counts and 64-bit sums, merged once per block
 *              into a global hash table
 *   split12    the same with the sums as 32-bit halves (two atomics a row)
 *   pack<C>    the row count packed with the sum in one 32-bit word (one atomic a row);
 *              _pf: the next step's rows loaded before this step's atomics; _b<B>: B
 *              blocks of 512 threads an SM
 *   dense      (dense keys only) min/max pass, then per-block shared arrays indexed by
 *              key - min (no hashing)
 *   part1/part2 radix partition (one 12-bit pass, or two 6-bit passes) of (key, value)
 *              by hash bits, then one block per partition aggregates in a shared hash
 *              table and writes compact output rows
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cub/device/device_scan.cuh>

#include "agg_bench_util.h"

constexpr uint32_t kEmpty = 0x80000000u; /* INT32_MIN: the bench never draws it */

__device__ __forceinline__ uint32_t hash32(uint32_t k)
{
    return k * 0x9E3779B1u;
}

/* ---------------------------------------------------------------- global table ----- */
struct GTab {
    uint32_t *keys;               /* kEmpty = free */
    unsigned long long *cnt, *sum;
    uint32_t mask;
    unsigned long long *n_fail;   /* rows/groups that found no room */
};

__device__ __forceinline__ void g_add(const GTab &g, uint32_t k, unsigned long long c,
                                      unsigned long long s)
{
    uint32_t h = hash32(k) & g.mask;
    for (uint32_t p = 0; p <= g.mask; p++) {
        uint32_t cur = g.keys[h];
        if (cur == kEmpty) {
            cur = atomicCAS(&g.keys[h], kEmpty, k);
            if (cur == kEmpty)
                cur = k;
        }
        if (cur == k) {
            atomicAdd(&g.cnt[h], c);
            atomicAdd(&g.sum[h], s);
            return;
        }
        h = (h + 1) & g.mask;
    }
    atomicAdd(g.n_fail, 1ull);
}

/* Calls add(key, value) for every row: four a thread a step (one int4 of keys, two
 * longlong2 of values), the tail in block 0; PF loads the next step's rows before the
 * current step's adds. */
template <bool PF, typename F>
__device__ __forceinline__ void rows4(const int32_t *__restrict__ keys,
                                      const int64_t *__restrict__ vals, int64_t n, F &add)
{
    const int64_t n4 = n / 4, stride = (int64_t)gridDim.x * blockDim.x;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int4 k = {0, 0, 0, 0};
    longlong2 v0 = {0, 0}, v1 = {0, 0};
    auto load = [&](int64_t j) {
        k = __ldcs((const int4 *)keys + j);
        v0 = __ldcs((const longlong2 *)vals + 2 * j);
        v1 = __ldcs((const longlong2 *)vals + 2 * j + 1);
    };
    if (PF && i < n4)
        load(i);
    for (; i < n4; i += stride) {
        if (!PF)
            load(i);
        const int4 ck = k;
        const longlong2 c0 = v0, c1 = v1;
        if (PF && i + stride < n4)
            load(i + stride);
        add((uint32_t)ck.x, c0.x);
        add((uint32_t)ck.y, c0.y);
        add((uint32_t)ck.z, c1.x);
        add((uint32_t)ck.w, c1.y);
    }
    if (blockIdx.x == 0)
        for (int64_t r = n4 * 4 + threadIdx.x; r < n; r += blockDim.x)
            add((uint32_t)keys[r], vals[r]);
}

/* Slot of key k in a shared table of 1 << LOGC stored keys (claimed if new), -1 after
 * `probes` probes. */
template <int LOGC>
__device__ __forceinline__ int s_slot(uint32_t *skey, uint32_t k, int probes)
{
    uint32_t h = hash32(k) >> (32 - LOGC);
    for (int p = 0; p < probes; p++) {
        uint32_t cur = skey[h];
        if (cur == kEmpty) {
            cur = atomicCAS(&skey[h], kEmpty, k);
            if (cur == kEmpty)
                return (int)h;
        }
        if (cur == k)
            return (int)h;
        h = (h + 1) & ((1u << LOGC) - 1);
    }
    return -1;
}

/* ---------------------------------------------------------------- small groups ----- */
/* Rows per thread per step: one int4 of keys, two longlong2 of values. */
template <int LOGC>
__global__ void __launch_bounds__(512, 2)
    small_kernel(const int32_t *__restrict__ keys, const int64_t *__restrict__ vals, int64_t n,
                 GTab g)
{
    constexpr int C = 1 << LOGC;
    extern __shared__ __align__(16) char sm[];
    unsigned long long *ssum = (unsigned long long *)sm;
    uint32_t *skey = (uint32_t *)(ssum + C);
    uint32_t *scnt = skey + C;
    for (int i = threadIdx.x; i < C; i += blockDim.x) {
        skey[i] = kEmpty;
        scnt[i] = 0;
        ssum[i] = 0;
    }
    __syncthreads();
    unsigned int fails = 0;
    auto add = [&](uint32_t k, int64_t v) {
        const int h = s_slot<LOGC>(skey, k, C);
        if (h < 0) {
            fails++;
            return;
        }
        atomicAdd(&scnt[h], 1u);
        atomicAdd(&ssum[h], (unsigned long long)v);
    };
    rows4<false>(keys, vals, n, add);
    if (fails)
        atomicAdd(g.n_fail, (unsigned long long)fails);
    __syncthreads();
    for (int i = threadIdx.x; i < C; i += blockDim.x)
        if (skey[i] != kEmpty)
            g_add(g, skey[i], scnt[i], ssum[i]);
}

/* ------------------------------------------------- small, 32-bit shared words ----- */
/* As small<C>, with the sums in 32-bit halves (lo atomic a row, hi on a carry or a
 * negative value) and either the row count in its own atomic (split) or packed with the
 * sum into one 32-bit word (pack: 256 v + 1 added, the count's byte and T's carries
 * kept from the returned old word; values past +-2^23 take the halves and count with
 * v = 0), as kernels/aggregate/aggregate_small.cuh; PF loads the next step's rows
 * before the current step's atomics; MINB blocks per SM. */
__device__ __forceinline__ void m_add_split(unsigned *lo, int *hi, int64_t v)
{
    const unsigned l = (unsigned)v, old = atomicAdd(lo, l);
    const int d = (old + l < old ? 1 : 0) - (v < 0 ? 1 : 0);
    if (d)
        atomicAdd(hi, d);
}

__device__ __forceinline__ void m_pack(unsigned *w, unsigned *cw, int *hw, int64_t v)
{
    const unsigned add = ((unsigned)v << 8) + 1u, old = atomicAdd(w, add);
    if ((old & 255u) == 255u)
        atomicAdd(cw, 1u);
    const int d = (old + add < old ? 1 : 0) - (v < 0 ? 1 : 0);
    if (d)
        atomicAdd(hw, d);
}

template <int LOGC, int MINB, bool PACK, bool PF>
__global__ void __launch_bounds__(512, MINB)
    w32_kernel(const int32_t *__restrict__ keys, const int64_t *__restrict__ vals, int64_t n,
               GTab g)
{
    constexpr int C = 1 << LOGC;
    extern __shared__ __align__(16) char sm[];
    uint32_t *skey = (uint32_t *)sm;
    unsigned *w = skey + C, *cw = w + C, *lo = cw + C;
    int *hw = (int *)(lo + C), *hi = hw + C;
    for (int i = threadIdx.x; i < C; i += blockDim.x)
        skey[i] = kEmpty, w[i] = cw[i] = lo[i] = 0, hw[i] = hi[i] = 0;
    __syncthreads();
    unsigned fails = 0;
    auto add = [&](uint32_t k, int64_t v) {
        const int h = s_slot<LOGC>(skey, k, 32);
        if (h < 0) {
            fails++;
        } else if (PACK) {
            const bool fit = (uint64_t)(v + (1 << 23)) >> 24 == 0;
            m_pack(&w[h], &cw[h], &hw[h], fit ? v : 0);
            if (!fit)
                m_add_split(&lo[h], &hi[h], v);
        } else {
            atomicAdd(&w[h], 1u);
            m_add_split(&lo[h], &hi[h], v);
        }
    };
    rows4<PF>(keys, vals, n, add);
    if (fails)
        atomicAdd(g.n_fail, (unsigned long long)fails);
    __syncthreads();
    for (int j = threadIdx.x; j < C; j += blockDim.x) {
        if (skey[j] == kEmpty)
            continue;
        const long long split = (long long)(((unsigned long long)(long long)hi[j] << 32) | lo[j]);
        unsigned long long rows = w[j];
        long long sum = split;
        if (PACK) {
            rows = (unsigned long long)cw[j] * 256 + (w[j] & 255u);
            const long long t = (long long)(((unsigned long long)(long long)hw[j] << 32) | w[j]);
            sum += (t - (long long)rows) >> 8;
        }
        g_add(g, skey[j], rows, (unsigned long long)sum);
    }
}

/* ---------------------------------------------------------------- dense ------------ */
__global__ void minmax_kernel(const int32_t *__restrict__ keys, int64_t n, int *mn, int *mx)
{
    int lo = 0x7fffffff, hi = (int)0x80000000;
    const int64_t n4 = n / 4;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += (int64_t)gridDim.x * blockDim.x) {
        int4 k = __ldcs((const int4 *)keys + i);
        lo = min(min(lo, k.x), min(k.y, min(k.z, k.w)));
        hi = max(max(hi, k.x), max(k.y, max(k.z, k.w)));
    }
    if (blockIdx.x == 0)
        for (int64_t i = n4 * 4 + threadIdx.x; i < n; i += blockDim.x) {
            lo = min(lo, keys[i]);
            hi = max(hi, keys[i]);
        }
    for (int o = 16; o; o >>= 1) {
        lo = min(lo, __shfl_xor_sync(~0u, lo, o));
        hi = max(hi, __shfl_xor_sync(~0u, hi, o));
    }
    if ((threadIdx.x & 31) == 0) {
        atomicMin(mn, lo);
        atomicMax(mx, hi);
    }
}

__global__ void __launch_bounds__(512, 2)
    dense_kernel(const int32_t *__restrict__ keys, const int64_t *__restrict__ vals, int64_t n,
                 const int *mn, const int *mx, unsigned long long *gcnt, unsigned long long *gsum)
{
    extern __shared__ __align__(16) char sm[];
    const int lo = *mn;
    const int C = *mx - lo + 1;
    unsigned long long *ssum = (unsigned long long *)sm;
    uint32_t *scnt = (uint32_t *)(ssum + C);
    for (int i = threadIdx.x; i < C; i += blockDim.x) {
        scnt[i] = 0;
        ssum[i] = 0;
    }
    __syncthreads();
    const int64_t n4 = n / 4;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += (int64_t)gridDim.x * blockDim.x) {
        int4 k = __ldcs((const int4 *)keys + i);
        longlong2 v0 = __ldcs((const longlong2 *)vals + 2 * i);
        longlong2 v1 = __ldcs((const longlong2 *)vals + 2 * i + 1);
        atomicAdd(&scnt[k.x - lo], 1u);
        atomicAdd(&ssum[k.x - lo], (unsigned long long)v0.x);
        atomicAdd(&scnt[k.y - lo], 1u);
        atomicAdd(&ssum[k.y - lo], (unsigned long long)v0.y);
        atomicAdd(&scnt[k.z - lo], 1u);
        atomicAdd(&ssum[k.z - lo], (unsigned long long)v1.x);
        atomicAdd(&scnt[k.w - lo], 1u);
        atomicAdd(&ssum[k.w - lo], (unsigned long long)v1.y);
    }
    if (blockIdx.x == 0)
        for (int64_t i = n4 * 4 + threadIdx.x; i < n; i += blockDim.x) {
            atomicAdd(&scnt[keys[i] - lo], 1u);
            atomicAdd(&ssum[keys[i] - lo], (unsigned long long)vals[i]);
        }
    __syncthreads();
    for (int i = threadIdx.x; i < C; i += blockDim.x)
        if (scnt[i]) {
            atomicAdd(&gcnt[i], (unsigned long long)scnt[i]);
            atomicAdd(&gsum[i], ssum[i]);
        }
}

/* ---------------------------------------------------------------- partitioned ------ */
constexpr int kPBits = 12;

__global__ void pcount_kernel(const int32_t *__restrict__ keys, int64_t n,
                              unsigned long long *counts)
{
    __shared__ unsigned int hist[1 << kPBits];
    for (int i = threadIdx.x; i < (1 << kPBits); i += blockDim.x)
        hist[i] = 0;
    __syncthreads();
    const int64_t n4 = n / 4;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += (int64_t)gridDim.x * blockDim.x) {
        int4 k = __ldcs((const int4 *)keys + i);
        atomicAdd(&hist[hash32(k.x) >> (32 - kPBits)], 1u);
        atomicAdd(&hist[hash32(k.y) >> (32 - kPBits)], 1u);
        atomicAdd(&hist[hash32(k.z) >> (32 - kPBits)], 1u);
        atomicAdd(&hist[hash32(k.w) >> (32 - kPBits)], 1u);
    }
    if (blockIdx.x == 0)
        for (int64_t i = n4 * 4 + threadIdx.x; i < n; i += blockDim.x)
            atomicAdd(&hist[hash32(keys[i]) >> (32 - kPBits)], 1u);
    __syncthreads();
    for (int i = threadIdx.x; i < (1 << kPBits); i += blockDim.x)
        if (hist[i])
            atomicAdd(&counts[i], (unsigned long long)hist[i]);
}

/* Partition ids: the top kPBits hash bits >> shift; cursor[id] the next row of id. Tiles
 * of ITEMS * blockDim rows: ranks from a shared histogram, one global atomic per (tile,
 * partition). */
constexpr int kSItems = 8;
__global__ void __launch_bounds__(512)
    pscatter_kernel(const int32_t *__restrict__ keys, const int64_t *__restrict__ vals,
                    int64_t n, int shift, unsigned long long *cursor, int32_t *okeys,
                    int64_t *ovals)
{
    __shared__ unsigned int hist[1 << kPBits];
    __shared__ unsigned long long base[1 << kPBits];
    const int P = 1 << (kPBits - shift);
    const int64_t tile = (int64_t)kSItems * blockDim.x;
    for (int64_t t0 = (int64_t)blockIdx.x * tile; t0 < n; t0 += (int64_t)gridDim.x * tile) {
        for (int i = threadIdx.x; i < P; i += blockDim.x)
            hist[i] = 0;
        __syncthreads();
        uint32_t part[kSItems], rank[kSItems];
        int32_t k[kSItems];
        int64_t v[kSItems];
#pragma unroll
        for (int it = 0; it < kSItems; it++) {
            int64_t i = t0 + (int64_t)it * blockDim.x + threadIdx.x;
            if (i < n) {
                k[it] = __ldcs(keys + i);
                v[it] = __ldcs(vals + i);
                part[it] = (hash32(k[it]) >> (32 - kPBits)) >> shift;
                rank[it] = atomicAdd(&hist[part[it]], 1u);
            }
        }
        __syncthreads();
        for (int i = threadIdx.x; i < P; i += blockDim.x)
            if (hist[i])
                base[i] = atomicAdd(&cursor[i], (unsigned long long)hist[i]);
        __syncthreads();
#pragma unroll
        for (int it = 0; it < kSItems; it++) {
            int64_t i = t0 + (int64_t)it * blockDim.x + threadIdx.x;
            if (i >= n)
                continue;
            int64_t d = (int64_t)base[part[it]] + rank[it];
            okeys[d] = k[it];
            ovals[d] = v[it];
        }
        __syncthreads();
    }
}

/* cursor1[p] = offsets[p << shift] (level-1 cursors), cursor2 = offsets. */
__global__ void pcursor_kernel(const unsigned long long *offsets, int shift,
                               unsigned long long *cur1, unsigned long long *cur2)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (1 << kPBits);
         i += gridDim.x * blockDim.x) {
        cur2[i] = offsets[i];
        if ((i & ((1 << shift) - 1)) == 0)
            cur1[i >> shift] = offsets[i];
    }
}

/* One block per partition: shared hash table of C slots, then compact output rows. */
template <int LOGC>
__global__ void __launch_bounds__(1024)
    pfinal_kernel(const int32_t *__restrict__ keys, const int64_t *__restrict__ vals,
                  const unsigned long long *offsets, int64_t n, int32_t *okey,
                  unsigned long long *ocnt, unsigned long long *osum,
                  unsigned long long *out_n, unsigned long long *n_fail)
{
    constexpr int C = 1 << LOGC;
    extern __shared__ __align__(16) char sm[];
    unsigned long long *ssum = (unsigned long long *)sm;
    uint32_t *skey = (uint32_t *)(ssum + C);
    uint32_t *scnt = skey + C;
    __shared__ unsigned int ng;
    __shared__ unsigned long long obase;
    const int p = blockIdx.x;
    for (int i = threadIdx.x; i < C; i += blockDim.x) {
        skey[i] = kEmpty;
        scnt[i] = 0;
        ssum[i] = 0;
    }
    if (threadIdx.x == 0)
        ng = 0;
    __syncthreads();
    const int64_t lo = offsets[p], hi = p + 1 < (1 << kPBits) ? offsets[p + 1] : n;
    unsigned fails = 0;
    for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) {
        uint32_t k = (uint32_t)keys[i];
        int64_t v = vals[i];
        uint32_t h = (hash32(k) << kPBits) >> (32 - LOGC);
        bool done = false;
        for (int q = 0; q < C && !done; q++) {
            uint32_t cur = skey[h];
            if (cur == kEmpty) {
                cur = atomicCAS(&skey[h], kEmpty, k);
                if (cur == kEmpty) {
                    cur = k;
                    atomicAdd(&ng, 1u);
                }
            }
            if (cur == k) {
                atomicAdd(&scnt[h], 1u);
                atomicAdd(&ssum[h], (unsigned long long)v);
                done = true;
            }
            h = (h + 1) & (C - 1);
        }
        if (!done)
            fails++;
    }
    if (fails)
        atomicAdd(n_fail, (unsigned long long)fails);
    __syncthreads();
    if (threadIdx.x == 0)
        obase = atomicAdd(out_n, (unsigned long long)ng);
    __shared__ unsigned int pos;
    if (threadIdx.x == 0)
        pos = 0;
    __syncthreads();
    /* Compact: warp-aggregated positions. */
    for (int i0 = 0; i0 < C; i0 += blockDim.x) {
        int i = i0 + threadIdx.x;
        bool has = i < C && skey[i] != kEmpty;
        unsigned m = __ballot_sync(~0u, has);
        unsigned wbase = 0;
        if ((threadIdx.x & 31) == 0 && m)
            wbase = atomicAdd(&pos, (unsigned)__popc(m));
        wbase = __shfl_sync(~0u, wbase, 0);
        if (has) {
            unsigned long long r = obase + wbase + __popc(m & ((1u << (threadIdx.x & 31)) - 1));
            okey[r] = (int32_t)skey[i];
            ocnt[r] = scnt[i];
            osum[r] = ssum[i];
        }
    }
}

/* ---------------------------------------------------------------- host ------------- */

static int g_sms;
/* Reference: count and sum per group g, and the (key, g) pairs sorted by key. */
struct RefGroup {
    long long c, s;
};
static std::vector<RefGroup> g_ref;
static std::vector<std::pair<int32_t, int64_t>> g_kidx;

static int64_t ref_group(int32_t k)
{
    auto it = std::lower_bound(g_kidx.begin(), g_kidx.end(), std::make_pair(k, (int64_t)-1));
    return it != g_kidx.end() && it->first == k ? it->second : -1;
}
static bool ref_match(int32_t k, unsigned long long cnt, unsigned long long sum)
{
    int64_t g = ref_group(k);
    return g >= 0 && g_ref[g].c == (long long)cnt && g_ref[g].s == (long long)sum;
}
static size_t ref_groups()
{
    size_t n = 0;
    for (const RefGroup &r : g_ref)
        n += r.c > 0;
    return n;
}

static float time_it(const char *name, int64_t n, double floor_ms, void (*run)(void *), void *ctx,
                     bool (*check)(void *), void *cctx)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    run(ctx);
    CK(cudaDeviceSynchronize());
    bool ok = check ? check(cctx) : true;
    std::vector<float> t;
    for (int r = 0; r < 5; r++) {
        CK(cudaEventRecord(a));
        run(ctx);
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    printf("{\"variant\":\"%s\",\"rows\":%lld,\"ms\":%.3f,\"min_ms\":%.3f,\"x_floor\":%.2f,"
           "\"grows_s\":%.1f,\"check_ok\":%s}\n",
           name, (long long)n, t[2], t[0], floor_ms > 0 ? t[2] / floor_ms : 0,
           (double)n / (t[2] * 1e6), ok ? "true" : "false");
    fflush(stdout);
    return t[2];
}

struct Ctx {
    int32_t *keys;
    int64_t *vals;
    int64_t n;
    GTab g;
    size_t gslots;
    void *cpy_dst;
    int logc;
    int *mnmx;
    unsigned long long *dcnt, *dsum;
    /* partitioned */
    int32_t *pk, *pk2;
    int64_t *pv, *pv2;
    unsigned long long *counts, *offsets, *cur1, *cur2, *out_n;
    void *scan_tmp;
    size_t scan_bytes;
    int32_t *okey;
    unsigned long long *ocnt, *osum;
    int passes;
    float phase[4];
};

static void run_copy(void *p)
{
    Ctx *c = (Ctx *)p;
    CK(cudaMemcpyAsync(c->cpy_dst, c->keys, (size_t)c->n * 4, cudaMemcpyDeviceToDevice));
    CK(cudaMemcpyAsync((char *)c->cpy_dst + (size_t)c->n * 4, c->vals, (size_t)c->n * 8,
                       cudaMemcpyDeviceToDevice));
}

__global__ void fill_kernel(uint32_t *p, size_t n, uint32_t v)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = v;
}

static void reset_g(Ctx *c)
{
    fill_kernel<<<1024, 256>>>(c->g.keys, c->gslots, kEmpty);
    CK(cudaMemsetAsync(c->g.cnt, 0, c->gslots * 8));
    CK(cudaMemsetAsync(c->g.sum, 0, c->gslots * 8));
    CK(cudaMemsetAsync(c->g.n_fail, 0, 8));
}

template <int LOGC>
static void run_small(void *p)
{
    Ctx *c = (Ctx *)p;
    reset_g(c);
    size_t smem = (size_t)(1 << LOGC) * 16;
    CK(cudaFuncSetAttribute(small_kernel<LOGC>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)smem));
    int per = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, small_kernel<LOGC>, 512, smem));
    small_kernel<LOGC><<<g_sms * per, 512, smem>>>(c->keys, c->vals, c->n, c->g);
    CK(cudaGetLastError());
}

template <int LOGC, int MINB, bool PACK, bool PF>
static void run_w32(void *p)
{
    Ctx *c = (Ctx *)p;
    reset_g(c);
    size_t smem = (size_t)(1 << LOGC) * 24;
    const void *kern = (const void *)w32_kernel<LOGC, MINB, PACK, PF>;
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int per = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kern, 512, smem));
    w32_kernel<LOGC, MINB, PACK, PF><<<g_sms * per, 512, smem>>>(c->keys, c->vals, c->n, c->g);
    CK(cudaGetLastError());
}

static bool check_g(void *p)
{
    Ctx *c = (Ctx *)p;
    unsigned long long fail = 0;
    CK(cudaMemcpy(&fail, c->g.n_fail, 8, cudaMemcpyDeviceToHost));
    std::vector<uint32_t> k(c->gslots);
    std::vector<unsigned long long> cn(c->gslots), s(c->gslots);
    CK(cudaMemcpy(k.data(), c->g.keys, c->gslots * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(cn.data(), c->g.cnt, c->gslots * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(s.data(), c->g.sum, c->gslots * 8, cudaMemcpyDeviceToHost));
    size_t groups = 0;
    for (size_t i = 0; i < c->gslots; i++) {
        if (k[i] == kEmpty)
            continue;
        groups++;
        if (!ref_match((int32_t)k[i], cn[i], s[i]))
            return false;
    }
    if (fail)
        fprintf(stderr, "fails %llu\n", fail);
    return groups == ref_groups() && fail == 0;
}

static void run_dense(void *p)
{
    Ctx *c = (Ctx *)p;
    int init[2] = {0x7fffffff, (int)0x80000000};
    CK(cudaMemcpyAsync(c->mnmx, init, 8, cudaMemcpyHostToDevice));
    minmax_kernel<<<g_sms * 4, 512>>>(c->keys, c->n, c->mnmx, c->mnmx + 1);
    CK(cudaMemsetAsync(c->dcnt, 0, (size_t)c->logc * 8));
    CK(cudaMemsetAsync(c->dsum, 0, (size_t)c->logc * 8));
    size_t smem = (size_t)c->logc * 12 + 16;
    CK(cudaFuncSetAttribute(dense_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)smem));
    int per = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, dense_kernel, 512, smem));
    dense_kernel<<<g_sms * per, 512, smem>>>(c->keys, c->vals, c->n, c->mnmx, c->mnmx + 1,
                                             c->dcnt, c->dsum);
    CK(cudaGetLastError());
}

static void run_minmax(void *p)
{
    Ctx *c = (Ctx *)p;
    int init[2] = {0x7fffffff, (int)0x80000000};
    CK(cudaMemcpyAsync(c->mnmx, init, 8, cudaMemcpyHostToDevice));
    minmax_kernel<<<g_sms * 4, 512>>>(c->keys, c->n, c->mnmx, c->mnmx + 1);
}

static bool check_dense(void *p)
{
    Ctx *c = (Ctx *)p;
    int G = c->logc;
    std::vector<unsigned long long> cn(G), s(G);
    CK(cudaMemcpy(cn.data(), c->dcnt, G * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(s.data(), c->dsum, G * 8, cudaMemcpyDeviceToHost));
    for (int i = 0; i < G; i++) {
        if (cn[i] ? !ref_match(i, cn[i], s[i]) : g_ref[i].c != 0)
            return false;
    }
    return true;
}

static void run_part(void *p)
{
    Ctx *c = (Ctx *)p;
    const int P = 1 << kPBits;
    cudaEvent_t ev[4];
    for (int i = 0; i < 4; i++)
        CK(cudaEventCreate(&ev[i]));
    CK(cudaEventRecord(ev[0]));
    CK(cudaMemsetAsync(c->counts, 0, P * 8));
    CK(cudaMemsetAsync(c->out_n, 0, 16));
    pcount_kernel<<<g_sms * 2, 512>>>(c->keys, c->n, c->counts);
    CK(cub::DeviceScan::ExclusiveSum(c->scan_tmp, c->scan_bytes, c->counts, c->offsets, P));
    int shift = c->passes == 2 ? kPBits / 2 : 0;
    pcursor_kernel<<<P / 256, 256>>>(c->offsets, shift, c->cur1, c->cur2);
    if (c->passes == 2) {
        pscatter_kernel<<<g_sms * 2, 512>>>(c->keys, c->vals, c->n, shift, c->cur1, c->pk2,
                                            c->pv2);
        pscatter_kernel<<<g_sms * 2, 512>>>(c->pk2, c->pv2, c->n, 0, c->cur2, c->pk, c->pv);
    } else {
        pscatter_kernel<<<g_sms * 2, 512>>>(c->keys, c->vals, c->n, 0, c->cur2, c->pk, c->pv);
    }
    CK(cudaEventRecord(ev[1]));
    constexpr int LOGC = 13;
    size_t smem = (size_t)(1 << LOGC) * 16;
    CK(cudaFuncSetAttribute(pfinal_kernel<LOGC>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)smem));
    pfinal_kernel<LOGC><<<P, 1024, smem>>>(c->pk, c->pv, c->offsets, c->n, c->okey, c->ocnt,
                                           c->osum, c->out_n, c->out_n + 1);
    CK(cudaEventRecord(ev[2]));
    CK(cudaGetLastError());
    CK(cudaEventSynchronize(ev[2]));
    CK(cudaEventElapsedTime(&c->phase[0], ev[0], ev[1]));
    CK(cudaEventElapsedTime(&c->phase[1], ev[1], ev[2]));
    for (int i = 0; i < 4; i++)
        CK(cudaEventDestroy(ev[i]));
}

static bool check_part(void *p)
{
    Ctx *c = (Ctx *)p;
    unsigned long long nf[2];
    CK(cudaMemcpy(nf, c->out_n, 16, cudaMemcpyDeviceToHost));
    if (nf[1] || nf[0] != ref_groups()) {
        fprintf(stderr, "part: groups %llu (want %zu) fails %llu\n", nf[0], ref_groups(), nf[1]);
        return false;
    }
    std::vector<int32_t> k(nf[0]);
    std::vector<unsigned long long> cn(nf[0]), s(nf[0]);
    CK(cudaMemcpy(k.data(), c->okey, nf[0] * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(cn.data(), c->ocnt, nf[0] * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(s.data(), c->osum, nf[0] * 8, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < nf[0]; i++) {
        if (!ref_match(k[i], cn[i], s[i]))
            return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: gpu_agg_micro LG G [dense]\n");
        return 2;
    }
    int lg = atoi(argv[1]);
    int64_t G = atoll(argv[2]);
    bool dense = argc > 3 && !strcmp(argv[3], "dense");
    int64_t n = (int64_t)1 << lg;
    int dev = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, dev));
    std::vector<int32_t> hk(n);
    std::vector<int64_t> hv(n);
    uint64_t x = 42 * 0x9E3779B97F4A7C15ull + 1;
    /* key_of is a bijection: distinct groups have distinct keys; the one group whose
     * key is kEmpty takes key_of(G), which no group has. */
    std::vector<int32_t> kg(G);
    for (int64_t g = 0; g < G; g++) {
        uint32_t k = dense ? (uint32_t)g : key_of((uint32_t)g);
        kg[g] = (int32_t)(k == kEmpty ? key_of((uint32_t)G) : k);
        g_kidx.push_back({kg[g], g});
    }
    std::sort(g_kidx.begin(), g_kidx.end());
    g_ref.assign(G, RefGroup{0, 0});
    for (int64_t i = 0; i < n; i++) {
        uint64_t g = rng(&x) % (uint64_t)G;
        hk[i] = kg[g];
        hv[i] = (int64_t)(rng(&x) % 1000);
        g_ref[g].c++;
        g_ref[g].s += hv[i];
    }
    Ctx c = {};
    c.n = n;
    CK(cudaMalloc(&c.keys, n * 4));
    CK(cudaMalloc(&c.vals, n * 8));
    CK(cudaMemcpy(c.keys, hk.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(c.vals, hv.data(), n * 8, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&c.cpy_dst, n * 12));
    c.gslots = 1024;
    while (c.gslots < (size_t)G * 2)
        c.gslots <<= 1;
    CK(cudaMalloc(&c.g.keys, c.gslots * 4));
    CK(cudaMalloc(&c.g.cnt, c.gslots * 8));
    CK(cudaMalloc(&c.g.sum, c.gslots * 8));
    CK(cudaMalloc(&c.g.n_fail, 8));
    c.g.mask = (uint32_t)c.gslots - 1;

    float fl = time_it("copy", n, 0, run_copy, &c, NULL, NULL);
    if (G <= 4096) {
        time_it("small11", n, fl, run_small<11>, &c, check_g, &c);
        time_it("small12", n, fl, run_small<12>, &c, check_g, &c);
        time_it("small13", n, fl, run_small<13>, &c, check_g, &c);
        time_it("split12", n, fl, run_w32<12, 2, false, false>, &c, check_g, &c);
        time_it("pack12", n, fl, run_w32<12, 2, true, false>, &c, check_g, &c);
        time_it("pack12_pf", n, fl, run_w32<12, 2, true, true>, &c, check_g, &c);
        time_it("pack11_b3", n, fl, run_w32<11, 3, true, false>, &c, check_g, &c);
        time_it("pack11_b3_pf", n, fl, run_w32<11, 3, true, true>, &c, check_g, &c);
        time_it("pack11_b4", n, fl, run_w32<11, 4, true, false>, &c, check_g, &c);
        if (dense) {
            CK(cudaMalloc(&c.mnmx, 8));
            CK(cudaMalloc(&c.dcnt, G * 8));
            CK(cudaMalloc(&c.dsum, G * 8));
            c.logc = (int)G;
            time_it("minmax", n, fl, run_minmax, &c, NULL, NULL);
            time_it("dense", n, fl, run_dense, &c, check_dense, &c);
        }
    }
    if (G > 4096 || getenv("PART")) {
        const int P = 1 << kPBits;
        CK(cudaMalloc(&c.pk, n * 4));
        CK(cudaMalloc(&c.pv, n * 8));
        CK(cudaMalloc(&c.pk2, n * 4));
        CK(cudaMalloc(&c.pv2, n * 8));
        CK(cudaMalloc(&c.counts, P * 8));
        CK(cudaMalloc(&c.offsets, P * 8));
        CK(cudaMalloc(&c.cur1, P * 8));
        CK(cudaMalloc(&c.cur2, P * 8));
        CK(cudaMalloc(&c.out_n, 16));
        CK(cub::DeviceScan::ExclusiveSum(NULL, c.scan_bytes, c.counts, c.offsets, P));
        CK(cudaMalloc(&c.scan_tmp, c.scan_bytes));
        CK(cudaMalloc(&c.okey, G * 4 + 64));
        CK(cudaMalloc(&c.ocnt, G * 8 + 64));
        CK(cudaMalloc(&c.osum, G * 8 + 64));
        for (int passes = 1; passes <= 2; passes++) {
            c.passes = passes;
            time_it(passes == 1 ? "part1" : "part2", n, fl, run_part, &c, check_part, &c);
            printf("{\"variant\":\"part%d_phases\",\"partition_ms\":%.3f,\"final_ms\":%.3f}\n",
                   passes, c.phase[0], c.phase[1]);
        }
    }
    return 0;
}
