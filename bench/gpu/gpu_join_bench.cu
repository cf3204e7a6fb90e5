/* Standalone benchmark and correctness check of the GPU partitioned hash join kernels
 * (kernels/partition, kernels/join; issue 6). Built by bench/meson.build with CUDA; uses
 * only the kernels' launcher headers.
 *
 *   gpu_join_bench check [log2n]   partition + join vs CPU reference (default 2^20)
 *   gpu_join_bench bench [log2n]   D2D bandwidth, then the join workloads (default 2^27):
 *                                  narrow u32/u32 (uniform, Zipf 1.0), u64/u64, count+sum,
 *                                  each with both partition methods; JSON line each
 *
 * Data: R keys = 0..n-1 shuffled (PK), R value = f(row position); S keys uniform over
 * the PKs (or Zipf 1.0 over a random ranking of them), S value = g(row position).
 * Timed span per repeat (CUDA events): partition R (+ offsets), partition S (+ offsets),
 * join + materialize. Median of 5 after one warm-up. The full-size result is checked by
 * row count and by checksum (sum of all output values mod 2^64) against a CPU sum.
 */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cub/device/device_radix_sort.cuh>

#include "sluice_k/join.h"
#include "sluice_k/partition.h"

#define CK(...)                                                                           \
    do {                                                                                  \
        cudaError_t e_ = (__VA_ARGS__);                                                             \
        if (e_ != cudaSuccess) {                                                          \
            fprintf(stderr, "%s:%d: %s -> %s (%s)\n", __FILE__, __LINE__, #__VA_ARGS__,           \
                    cudaGetErrorName(e_), cudaGetErrorString(e_));                        \
            exit(2);                                                                      \
        }                                                                                 \
    } while (0)

static int g_fail = 0;
#define EXPECT(c, ...)                                                                    \
    do {                                                                                  \
        if (!(c)) {                                                                       \
            g_fail++;                                                                     \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            printf(__VA_ARGS__);                                                          \
            printf("\n");                                                                 \
        }                                                                                 \
    } while (0)

typedef unsigned long long u64;

static __host__ __device__ inline u64 mix64(u64 x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
template <typename V> static __host__ __device__ inline V rval_of(u64 i) { return (V)(i * 0x9E3779B97F4A7C15ull + 11); }
template <typename V> static __host__ __device__ inline V sval_of(u64 i) { return (V)(i * 0xD6E8FEB86659FD93ull + 7); }

/* ---- launcher dispatch by type ---- */
template <typename K, typename V> struct L;
#define L_SPEC(KT, VT, SUF)                                                               \
    template <> struct L<KT, VT> {                                                        \
        static cudaError_t part(void *t, size_t *tb, const KT *ki, KT *ko, const VT *vi, VT *vo, \
                                int64_t n, int b0, int bits, int bpp, int m, cudaStream_t s) \
        { return sl_k_partition_pairs_##SUF(t, tb, ki, ko, vi, vo, n, b0, bits, bpp, m, s); } \
        static cudaError_t mat(void *t, size_t *tb, const KT *rk, const VT *rv, const int64_t *ro, \
                               const KT *sk, const VT *sv, const int64_t *so, int bits, int sh, \
                               KT *ok, VT *orv, VT *osv, int64_t cap, u64 *cnt, cudaStream_t s) \
        { return sl_k_phj_materialize_##SUF(t, tb, rk, rv, ro, sk, sv, so, bits, sh, ok, orv, osv, cap, cnt, s); } \
        static cudaError_t agg(void *t, size_t *tb, const KT *rk, const VT *rv, const int64_t *ro, \
                               const KT *sk, const VT *sv, const int64_t *so, int bits, int sh, \
                               u64 *res, cudaStream_t s) \
        { return sl_k_phj_count_sum_##SUF(t, tb, rk, rv, ro, sk, sv, so, bits, sh, res, s); } \
    };
L_SPEC(uint32_t, uint32_t, k32_v32)
L_SPEC(uint32_t, uint64_t, k32_v64)
L_SPEC(uint64_t, uint32_t, k64_v32)
L_SPEC(uint64_t, uint64_t, k64_v64)

static cudaError_t offsets(const uint32_t *k, int64_t n, int b0, int bits, int64_t *o, cudaStream_t s)
{ return sl_k_partition_offsets_k32(k, n, b0, bits, o, s); }
static cudaError_t offsets(const uint64_t *k, int64_t n, int b0, int bits, int64_t *o, cudaStream_t s)
{ return sl_k_partition_offsets_k64(k, n, b0, bits, o, s); }

template <typename T> static T *dalloc(size_t n)
{
    T *p = NULL;
    CK(cudaMalloc(&p, (n ? n : 1) * sizeof(T)));
    return p;
}
template <typename T> static void up(T *d, const std::vector<T> &h, cudaStream_t s)
{
    if (!h.empty())
        CK(cudaMemcpyAsync(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice, s));
}
template <typename T> static std::vector<T> down(const T *d, size_t n, cudaStream_t s)
{
    std::vector<T> h(n);
    if (n)
        CK(cudaMemcpyAsync(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    return h;
}

/* ---------------------------------------------------------------- correctness ---- */

template <typename K, typename V>
static void check_partition(int64_t n, int b0, int bits, int bpp, int method, u64 seed, cudaStream_t s)
{
    std::vector<K> hk(n);
    std::vector<V> hv(n);
    for (int64_t i = 0; i < n; i++) {
        u64 r = mix64(seed + i);
        hk[i] = (K)(sizeof(K) == 8 ? r : (r & 0xFFFFFFFF));
        if (i % 7 == 0 && i)
            hk[i] = hk[i - 1]; /* equal keys: stability must keep their values in order */
        hv[i] = (V)i;
    }
    K *dk = dalloc<K>(n), *dko = dalloc<K>(n);
    V *dv = dalloc<V>(n), *dvo = dalloc<V>(n);
    int64_t *doff = dalloc<int64_t>(((size_t)1 << bits) + 1);
    up(dk, hk, s);
    up(dv, hv, s);
    size_t tb = 0;
    CK(L<K, V>::part(NULL, &tb, dk, dko, dv, dvo, n, b0, bits, bpp, method, s));
    void *dt = dalloc<char>(tb);
    CK(L<K, V>::part(dt, &tb, dk, dko, dv, dvo, n, b0, bits, bpp, method, s));
    CK(offsets(dko, n, b0, bits, doff, s));
    std::vector<K> gk = down(dko, n, s);
    std::vector<V> gv = down(dvo, n, s);
    std::vector<int64_t> go = down(doff, ((size_t)1 << bits) + 1, s);
    const u64 mask = (1ull << bits) - 1;
    std::vector<int64_t> idx(n);
    for (int64_t i = 0; i < n; i++)
        idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
        return ((u64)hk[a] >> b0 & mask) < ((u64)hk[b] >> b0 & mask);
    });
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        if (gk[i] != hk[idx[i]] || gv[i] != hv[idx[i]])
            bad++;
    std::vector<int64_t> off(((size_t)1 << bits) + 1, 0);
    for (int64_t i = 0; i < n; i++)
        off[((u64)hk[i] >> b0 & mask) + 1]++;
    for (size_t p = 1; p < off.size(); p++)
        off[p] += off[p - 1];
    EXPECT(bad == 0 && off == go, "partition K%zu V%zu n=%lld bits [%d,%d) bpp=%d method=%d: %lld rows differ, offsets %s",
           sizeof(K), sizeof(V), (long long)n, b0, b0 + bits, bpp, method, (long long)bad, off == go ? "ok" : "DIFFER");
    printf("check partition K%zu V%zu n=%lld bits [%d,%d) bpp=%d %s: %s\n", sizeof(K), sizeof(V),
           (long long)n, b0, b0 + bits, bpp, method ? "own" : "cub", bad == 0 && off == go ? "ok" : "FAIL");
    cudaFree(dk); cudaFree(dko); cudaFree(dv); cudaFree(dvo); cudaFree(doff); cudaFree(dt);
}

template <typename K, typename V> struct Row {
    K k; V r, s;
    bool operator<(const Row &o) const { return k != o.k ? k < o.k : r != o.r ? r < o.r : s < o.s; }
    bool operator==(const Row &o) const { return k == o.k && r == o.r && s == o.s; }
};

/* Joins host R and S on the GPU (partition both with `method`, then materialize, also
 * with a too-small capacity first, then count+sum) and compares with a CPU join. */
template <typename K, typename V>
static void check_join(const char *name, const std::vector<K> &rk, const std::vector<V> &rv,
                       const std::vector<K> &sk, const std::vector<V> &sv, int b0, int bits,
                       int method, cudaStream_t s)
{
    const int64_t nr = rk.size(), ns = sk.size(), P = (int64_t)1 << bits;
    /* CPU reference */
    std::vector<std::pair<K, V>> rs(nr);
    for (int64_t i = 0; i < nr; i++)
        rs[i] = {rk[i], rv[i]};
    std::sort(rs.begin(), rs.end());
    std::vector<Row<K, V>> ref;
    for (int64_t j = 0; j < ns; j++) {
        auto lo = std::lower_bound(rs.begin(), rs.end(), std::make_pair(sk[j], (V)0));
        for (auto it = lo; it != rs.end() && it->first == sk[j]; ++it)
            ref.push_back({sk[j], it->second, sv[j]});
    }
    std::sort(ref.begin(), ref.end());
    u64 ref_sum[4] = {ref.size(), 0, 0, 0};
    for (auto &x : ref) {
        ref_sum[1] += (u64)x.k;
        ref_sum[2] += (u64)x.r;
        ref_sum[3] += (u64)x.s;
    }

    K *drk = dalloc<K>(nr), *dsk = dalloc<K>(ns), *drk2 = dalloc<K>(nr), *dsk2 = dalloc<K>(ns);
    V *drv = dalloc<V>(nr), *dsv = dalloc<V>(ns), *drv2 = dalloc<V>(nr), *dsv2 = dalloc<V>(ns);
    int64_t *dro = dalloc<int64_t>(P + 1), *dso = dalloc<int64_t>(P + 1);
    up(drk, rk, s); up(drv, rv, s); up(dsk, sk, s); up(dsv, sv, s);
    size_t t1 = 0, t2 = 0, t3 = 0;
    CK(L<K, V>::part(NULL, &t1, drk, drk2, drv, drv2, nr, b0, bits, 8, method, s));
    CK(L<K, V>::part(NULL, &t2, dsk, dsk2, dsv, dsv2, ns, b0, bits, 8, method, s));
    CK(L<K, V>::mat(NULL, &t3, NULL, NULL, NULL, NULL, NULL, NULL, bits, b0 + bits, NULL, NULL, NULL, 0, NULL, s));
    size_t tb = std::max(t1, std::max(t2, t3));
    void *dt = dalloc<char>(tb);
    CK(L<K, V>::part(dt, &tb, drk, drk2, drv, drv2, nr, b0, bits, 8, method, s));
    CK(offsets(drk2, nr, b0, bits, dro, s));
    CK(L<K, V>::part(dt, &tb, dsk, dsk2, dsv, dsv2, ns, b0, bits, 8, method, s));
    CK(offsets(dsk2, ns, b0, bits, dso, s));
    u64 *dcnt = dalloc<u64>(4);
    /* 1: capacity half of the result (plus a poisoned guard row): count must be exact,
     * nothing written at or past the capacity. */
    const int64_t half = (int64_t)ref.size() / 2;
    K *ok = dalloc<K>(half + 1);
    V *orv = dalloc<V>(half + 1), *osv = dalloc<V>(half + 1);
    CK(cudaMemsetAsync(ok, 0xAB, (half + 1) * sizeof(K), s));
    CK(L<K, V>::mat(dt, &tb, drk2, drv2, dro, dsk2, dsv2, dso, bits, b0 + bits, ok, orv, osv, half, dcnt, s));
    u64 cnt = down(dcnt, 1, s)[0];
    K guard = down(ok + half, 1, s)[0];
    K poison;
    memset(&poison, 0xAB, sizeof poison);
    EXPECT(cnt == ref.size() && guard == poison, "%s: capacity %lld: count %llu (want %zu), guard %s", name,
           (long long)half, cnt, ref.size(), guard == poison ? "intact" : "OVERWRITTEN");
    cudaFree(ok); cudaFree(orv); cudaFree(osv);
    /* 2: exact capacity, poisoned output; compare the row multiset. */
    const int64_t n_out = ref.size();
    ok = dalloc<K>(n_out); orv = dalloc<V>(n_out); osv = dalloc<V>(n_out);
    CK(cudaMemsetAsync(ok, 0xAB, n_out * sizeof(K), s));
    CK(cudaMemsetAsync(orv, 0xAB, n_out * sizeof(V), s));
    CK(cudaMemsetAsync(osv, 0xAB, n_out * sizeof(V), s));
    CK(L<K, V>::mat(dt, &tb, drk2, drv2, dro, dsk2, dsv2, dso, bits, b0 + bits, ok, orv, osv, n_out, dcnt, s));
    cnt = down(dcnt, 1, s)[0];
    std::vector<K> gk = down(ok, n_out, s);
    std::vector<V> gr = down(orv, n_out, s), gs = down(osv, n_out, s);
    std::vector<Row<K, V>> got(n_out);
    for (int64_t i = 0; i < n_out; i++)
        got[i] = {gk[i], gr[i], gs[i]};
    std::sort(got.begin(), got.end());
    bool rows_ok = cnt == ref.size() && got == ref;
    /* 3: count + sums */
    CK(L<K, V>::agg(dt, &tb, drk2, drv2, dro, dsk2, dsv2, dso, bits, b0 + bits, dcnt, s));
    std::vector<u64> agg = down(dcnt, 4, s);
    bool agg_ok = agg[0] == ref_sum[0] && agg[1] == ref_sum[1] && agg[2] == ref_sum[2] && agg[3] == ref_sum[3];
    EXPECT(rows_ok && agg_ok, "%s: rows %s (count %llu want %zu), count+sum %s", name, rows_ok ? "ok" : "DIFFER",
           cnt, ref.size(), agg_ok ? "ok" : "DIFFER");
    printf("check join %-28s K%zu V%zu |R|=%lld |S|=%lld bits=%d %s: %zu rows, %s\n", name, sizeof(K), sizeof(V),
           (long long)nr, (long long)ns, bits, method ? "own" : "cub", ref.size(),
           rows_ok && agg_ok ? "ok" : "FAIL");
    cudaFree(drk); cudaFree(dsk); cudaFree(drk2); cudaFree(dsk2); cudaFree(drv); cudaFree(dsv);
    cudaFree(drv2); cudaFree(dsv2); cudaFree(dro); cudaFree(dso); cudaFree(dt); cudaFree(dcnt);
    cudaFree(ok); cudaFree(orv); cudaFree(osv);
}

template <typename K, typename V>
static void check_joins(int64_t n, int method, cudaStream_t s)
{
    const int bits = std::max(1, (int)std::lround(std::log2((double)n / 4096.0)));
    std::vector<K> rk, sk;
    std::vector<V> rv, sv;
    const u64 hi = sizeof(K) == 8 ? (0x5ull << 40) : 0; /* exercise the upper key bits */
    /* duplicates on both sides, half of S without partner */
    for (int64_t i = 0; i < n; i++) {
        rk.push_back((K)(hi | (mix64(i) % (u64)(n / 2))));
        rv.push_back(rval_of<V>(i));
    }
    for (int64_t j = 0; j < n; j++) {
        sk.push_back((K)(hi | (mix64(j + 77777) % (u64)n)));
        sv.push_back(sval_of<V>(j));
    }
    check_join<K, V>("dup+nonmatching", rk, rv, sk, sv, 0, bits, method, s);
    /* skew: one build key repeated far past a shared-memory chunk, and a build
     * partition far bigger than the chunk (many distinct keys in one partition) */
    const int64_t heavy = std::min<int64_t>(20000, 4 * n), heavy_s = n >= (1 << 16) ? 100 : 8;
    for (int64_t i = 0; i < heavy; i++) {
        rk.push_back((K)(hi | 12345));
        rv.push_back(rval_of<V>(n + i));
    }
    for (int64_t i = 0; i < 3 * SL_K_JOIN_BUILD_CHUNK; i++) { /* all in partition of key 7 */
        rk.push_back((K)(hi | (7 + ((u64)(i + 1) << bits) + ((u64)n << 2))));
        rv.push_back(rval_of<V>(3 * n + i));
    }
    for (int64_t j = 0; j < heavy_s; j++) {
        sk.push_back((K)(hi | 12345));
        sv.push_back(sval_of<V>(n + j));
    }
    for (int64_t j = 0; j < 2 * SL_K_JOIN_PROBE_CHUNK + 5; j++) {
        sk.push_back((K)(hi | (7 + ((u64)(j % (3 * SL_K_JOIN_BUILD_CHUNK) + 1) << bits) + ((u64)n << 2))));
        sv.push_back(sval_of<V>(2 * n + j));
    }
    check_join<K, V>("skewed build (multi-chunk)", rk, rv, sk, sv, 0, bits, method, s);
    /* PK-FK: dense shuffled PKs, uniform FKs; and the empty cases */
    std::vector<K> pk(n), fk(n);
    std::vector<V> pv(n), fv(n);
    for (int64_t i = 0; i < n; i++)
        pk[i] = (K)i;
    for (int64_t i = n - 1; i > 0; i--)
        std::swap(pk[i], pk[mix64(i + 5) % (u64)(i + 1)]);
    for (int64_t i = 0; i < n; i++) {
        pv[i] = rval_of<V>(i);
        fk[i] = (K)(mix64(i + 999) % (u64)n);
        fv[i] = sval_of<V>(i);
    }
    check_join<K, V>("pk-fk", pk, pv, fk, fv, 0, bits, method, s);
    check_join<K, V>("empty build", std::vector<K>(), std::vector<V>(), fk, fv, 0, bits, method, s);
    check_join<K, V>("empty probe", pk, pv, std::vector<K>(), std::vector<V>(), 0, bits, method, s);
}

static void run_checks(int lg, cudaStream_t s)
{
    const int64_t n = (int64_t)1 << lg;
    for (int m = 0; m < 2; m++) {
        check_partition<uint32_t, uint32_t>(n + 123, 3, 12, 5, m, 1, s);
        check_partition<uint32_t, uint32_t>(n, 0, 15, 8, m, 2, s);
        check_partition<uint64_t, uint64_t>(n + 77, 40, 11, 6, m, 3, s);
        check_partition<uint32_t, uint64_t>(1000, 0, 8, 8, m, 4, s);
        check_partition<uint64_t, uint32_t>(4097, 20, 16, 8, m, 5, s);
        check_partition<uint32_t, uint32_t>(0, 0, 4, 4, m, 6, s);
    }
    for (int m = 0; m < 2; m++) {
        check_joins<uint32_t, uint32_t>(n, m, s);
        check_joins<uint64_t, uint64_t>(n, m, s);
    }
    check_joins<uint32_t, uint64_t>(n / 4, 1, s);
    check_joins<uint64_t, uint32_t>(n / 4, 0, s);
}

/* ---------------------------------------------------------------- benchmark ---- */

template <typename K, typename V>
__global__ void gen_r(K *keys_out_rank, uint32_t *rnd, uint32_t *iota, V *rv, int64_t n, u64 seed)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        rnd[i] = (uint32_t)mix64(seed ^ (u64)i);
        iota[i] = (uint32_t)i;
        rv[i] = rval_of<V>(i);
    }
}
template <typename K>
__global__ void widen(const uint32_t *in, K *out, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        out[i] = (K)in[i];
}
/* S keys: uniform over the PKs 0..nr-1, or Zipf(1) over the ranking given by the shuffled
 * R key array (rank r has weight 1/(r+1); exact harmonic table for r < 1024, the
 * ln(m) + gamma approximation above). */
template <typename K, typename V>
__global__ void gen_s(K *sk, V *sv, int64_t ns, const K *rkeys, int64_t nr, int zipf,
                      const double *htab, double hn, u64 seed)
{
    for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < ns; j += (int64_t)gridDim.x * blockDim.x) {
        u64 r = mix64(seed ^ (u64)j);
        sv[j] = sval_of<V>(j);
        if (!zipf) {
            sk[j] = (K)(r % (u64)nr);
            continue;
        }
        double t = ((r >> 11) * (1.0 / 9007199254740992.0)) * hn;
        int64_t m;
        if (t <= htab[1023]) {
            int lo = 0, hi = 1023;
            while (lo < hi) { int mid = (lo + hi) / 2; if (htab[mid] >= t) hi = mid; else lo = mid + 1; }
            m = lo + 1;
        } else {
            double e = exp(t - 0.5772156649015329);
            m = (int64_t)ceil(exp(t - 0.5772156649015329 - 0.5 / e));
        }
        if (m > nr) m = nr;
        if (m < 1) m = 1;
        sk[j] = rkeys[m - 1];
    }
}
template <typename K, typename V>
__global__ void out_sum(const K *k, const V *r, const V *s, int64_t n, u64 *sum)
{
    u64 acc = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        acc += (u64)k[i] + (u64)r[i] + (u64)s[i];
    for (int o = 16; o; o >>= 1)
        acc += __shfl_down_sync(0xffffffff, acc, o);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(sum, acc);
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

static size_t free_mem()
{
    size_t f, t;
    CK(cudaMemGetInfo(&f, &t));
    return f;
}

static double g_d2d_gbs = 0;
static std::string g_dev;

template <typename K, typename V>
static void bench_join(const char *wl, int64_t nr, int64_t ns, int zipf, int method, bool mat,
                       int reps, cudaStream_t s, bool overlap = false)
{
    const size_t f0 = free_mem();
    /* inputs */
    K *rk = dalloc<K>(nr), *sk = dalloc<K>(ns);
    V *rv = dalloc<V>(nr), *sv = dalloc<V>(ns);
    {
        uint32_t *rnd = dalloc<uint32_t>(nr), *rnd2 = dalloc<uint32_t>(nr), *iota = dalloc<uint32_t>(nr),
                 *perm = dalloc<uint32_t>(nr);
        gen_r<K, V><<<4096, 256, 0, s>>>(rk, rnd, iota, rv, nr, 42);
        size_t tb = 0;
        CK(cub::DeviceRadixSort::SortPairs(NULL, tb, rnd, rnd2, iota, perm, nr, 0, 32, s));
        void *t = dalloc<char>(tb);
        CK(cub::DeviceRadixSort::SortPairs(t, tb, rnd, rnd2, iota, perm, nr, 0, 32, s));
        widen<K><<<4096, 256, 0, s>>>(perm, rk, nr);
        std::vector<double> h(1024);
        double acc = 0;
        for (int i = 0; i < 1024; i++)
            h[i] = (acc += 1.0 / (i + 1));
        double hn = 0;
        for (int64_t i = nr; i >= 1; i--)
            hn += 1.0 / (double)i;
        double *dh = dalloc<double>(1024);
        up(dh, h, s);
        gen_s<K, V><<<4096, 256, 0, s>>>(sk, sv, ns, rk, nr, zipf, dh, hn, 4242);
        CK(cudaGetLastError());
        CK(cudaStreamSynchronize(s));
        cudaFree(rnd); cudaFree(rnd2); cudaFree(iota); cudaFree(perm); cudaFree(t); cudaFree(dh);
    }
    const size_t f_in = free_mem();
    /* join state */
    const int bits = std::max(1, (int)std::lround(std::log2((double)nr / 4096.0)));
    const int P = 1 << bits;
    K *rk2 = dalloc<K>(nr), *sk2 = dalloc<K>(ns);
    V *rv2 = dalloc<V>(nr), *sv2 = dalloc<V>(ns);
    int64_t *ro = dalloc<int64_t>(P + 1), *so = dalloc<int64_t>(P + 1);
    size_t tr = 0, ts = 0, tj = 0;
    CK(L<K, V>::part(NULL, &tr, rk, rk2, rv, rv2, nr, 0, bits, 8, method, s));
    CK(L<K, V>::part(NULL, &ts, sk, sk2, sv, sv2, ns, 0, bits, 8, method, s));
    CK(L<K, V>::mat(NULL, &tj, NULL, NULL, NULL, NULL, NULL, NULL, bits, bits, NULL, NULL, NULL, 0, NULL, s));
    const size_t tpart = std::max(tr, ts);
    /* Output columns, capacity |S| (PK-FK bound). The partition scratch lives in the
     * output's memory: the join writes the output only after both partitions are done. */
    const size_t out_bytes = mat ? (size_t)ns * (sizeof(K) + 2 * sizeof(V)) + 512 : 0;
    char *outmem = dalloc<char>(std::max(out_bytes, tpart));
    void *ptemp = outmem;
    void *jtemp = dalloc<char>(tj);
    K *ok = (K *)outmem;
    V *orv = (V *)(outmem + (((size_t)ns * sizeof(K) + 255) & ~(size_t)255));
    V *osv = (V *)((char *)orv + (((size_t)ns * sizeof(V) + 255) & ~(size_t)255));
    u64 *dres = dalloc<u64>(8);
    /* overlap: S is partitioned on a second stream at the same time as R, with its own
     * scratch (more memory). */
    void *ptemp2 = overlap ? dalloc<char>(ts) : NULL;
    cudaStream_t s2 = NULL;
    cudaEvent_t ev_s2 = NULL;
    if (overlap) {
        CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&ev_s2, cudaEventDisableTiming));
    }
    const size_t f_all = free_mem();

    cudaEvent_t ev[4];
    for (auto &e : ev)
        CK(cudaEventCreate(&e));
    std::vector<double> tp_r, tp_s, tp_j, tt;
    u64 count = 0, agg[4] = {0, 0, 0, 0};
    for (int rep = -1; rep < reps; rep++) {
        if (mat)
            CK(cudaMemsetAsync(outmem, 0xA5, out_bytes, s)); /* poison */
        CK(cudaEventRecord(ev[0], s));
        if (overlap) {
            CK(cudaStreamWaitEvent(s2, ev[0], 0));
            CK(L<K, V>::part(ptemp2, &ts, sk, sk2, sv, sv2, ns, 0, bits, 8, method, s2));
            CK(offsets(sk2, ns, 0, bits, so, s2));
            CK(cudaEventRecord(ev_s2, s2));
        }
        CK(L<K, V>::part(ptemp, &tr, rk, rk2, rv, rv2, nr, 0, bits, 8, method, s));
        CK(offsets(rk2, nr, 0, bits, ro, s));
        CK(cudaEventRecord(ev[1], s));
        if (overlap) {
            CK(cudaStreamWaitEvent(s, ev_s2, 0));
        } else {
            CK(L<K, V>::part(ptemp, &ts, sk, sk2, sv, sv2, ns, 0, bits, 8, method, s));
            CK(offsets(sk2, ns, 0, bits, so, s));
        }
        CK(cudaEventRecord(ev[2], s));
        if (mat)
            CK(L<K, V>::mat(jtemp, &tj, rk2, rv2, ro, sk2, sv2, so, bits, bits, ok, orv, osv, ns, dres, s));
        else
            CK(L<K, V>::agg(jtemp, &tj, rk2, rv2, ro, sk2, sv2, so, bits, bits, dres, s));
        CK(cudaEventRecord(ev[3], s));
        CK(cudaEventSynchronize(ev[3]));
        float a, b, c;
        CK(cudaEventElapsedTime(&a, ev[0], ev[1]));
        CK(cudaEventElapsedTime(&b, ev[1], ev[2]));
        CK(cudaEventElapsedTime(&c, ev[2], ev[3]));
        if (rep >= 0) {
            tp_r.push_back(a); tp_s.push_back(b); tp_j.push_back(c); tt.push_back(a + b + c);
        }
    }
    std::vector<u64> res = down(dres, 4, s);
    count = res[0];
    u64 checksum = 0;
    if (mat) {
        CK(cudaMemsetAsync(dres + 4, 0, 8, s));
        out_sum<K, V><<<4096, 256, 0, s>>>(ok, orv, osv, (int64_t)std::min<u64>(count, ns), dres + 4);
        checksum = down(dres + 4, 1, s)[0];
    } else {
        for (int i = 0; i < 4; i++)
            agg[i] = res[i];
        checksum = agg[1] + agg[2] + agg[3];
    }
    /* CPU reference: every S key has exactly one partner (dense PKs). */
    std::vector<K> hrk = down(rk, nr, s), hsk = down(sk, ns, s);
    std::vector<V> hrv = down(rv, nr, s), hsv = down(sv, ns, s);
    std::vector<V> by_key(nr);
    for (int64_t i = 0; i < nr; i++)
        by_key[(u64)hrk[i]] = hrv[i];
    u64 ref = 0;
    for (int64_t j = 0; j < ns; j++)
        ref += (u64)hsk[j] + (u64)by_key[(u64)hsk[j]] + (u64)hsv[j];
    const bool ok_all = count == (u64)ns && checksum == ref;
    EXPECT(ok_all, "%s: count %llu (want %lld), checksum %llu (want %llu)", wl, count, (long long)ns, checksum, ref);

    const size_t peak = f0 - f_all, in_bytes = f0 - f_in;
    const double t = median(tt);
    const double out_b = mat ? (double)ns * (sizeof(K) + 2 * sizeof(V)) : 0;
    const double in_b = (double)nr * (sizeof(K) + sizeof(V)) + (double)ns * (sizeof(K) + sizeof(V));
    const double floor_ms = (in_b + out_b) / (g_d2d_gbs * 1e9) * 1e3;
    printf("{\"bench\":\"join\",\"workload\":\"%s\",\"key_bytes\":%zu,\"payload_bytes\":%zu,\"payloads\":1,"
           "\"r_rows\":%lld,\"s_rows\":%lld,\"zipf\":%d,\"partition\":\"%s\",\"radix_bits\":%d,\"output\":\"%s\","
           "\"time_ms\":%.3f,\"min_ms\":%.3f,\"max_ms\":%.3f,\"gtuples_per_s\":%.2f,\"output_rows\":%llu,"
           "\"checksum\":%llu,\"checksum_ok\":%s,\"peak_device_bytes\":%zu,\"input_device_bytes\":%zu,"
           "\"floor_ms\":%.3f,\"device\":\"%s\",\"phases\":{\"partition_r\":%.3f,\"%s\":%.3f,\"%s\":%.3f}}\n",
           wl, sizeof(K), sizeof(V), (long long)nr, (long long)ns, zipf, method ? "own" : "cub", bits,
           mat ? "materialize" : "count_sum", t, *std::min_element(tt.begin(), tt.end()),
           *std::max_element(tt.begin(), tt.end()), (nr + ns) / t / 1e6, count, checksum, ok_all ? "true" : "false",
           peak, in_bytes, floor_ms, g_dev.c_str(), median(tp_r),
           overlap ? "partition_s_after_r_overlapped" : "partition_s", median(tp_s),
           mat ? "join_materialize" : "join_count_sum",
           median(tp_j));
    fflush(stdout);
    for (auto &e : ev)
        cudaEventDestroy(e);
    cudaFree(rk); cudaFree(sk); cudaFree(rv); cudaFree(sv); cudaFree(rk2); cudaFree(sk2); cudaFree(rv2);
    cudaFree(sv2); cudaFree(ro); cudaFree(so); cudaFree(outmem); cudaFree(jtemp); cudaFree(dres);
    if (overlap) {
        cudaFree(ptemp2);
        cudaStreamDestroy(s2);
        cudaEventDestroy(ev_s2);
    }
}

static void measure_d2d(cudaStream_t s)
{
    const size_t bytes = (size_t)2 << 30;
    char *a = dalloc<char>(bytes), *b = dalloc<char>(bytes);
    CK(cudaMemsetAsync(a, 1, bytes, s));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<double> t;
    for (int i = 0; i < 6; i++) {
        CK(cudaEventRecord(e0, s));
        CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s));
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (i)
            t.push_back(ms);
    }
    double m = median(t);
    g_d2d_gbs = 2.0 * bytes / (m * 1e-3) / 1e9;
    printf("{\"bench\":\"d2d_copy\",\"bytes\":%zu,\"time_ms\":%.3f,\"gb_per_s_read_plus_write\":%.1f,\"device\":\"%s\"}\n",
           bytes, m, g_d2d_gbs, g_dev.c_str());
    cudaFree(a); cudaFree(b);
    cudaEventDestroy(e0); cudaEventDestroy(e1);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "check";
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    g_dev = prop.name;
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    printf("device: %s, %d SMs, %.1f GiB, smem/block optin %zu\n", prop.name, prop.multiProcessorCount,
           prop.totalGlobalMem / 1073741824.0, (size_t)prop.sharedMemPerBlockOptin);
    if (!strcmp(mode, "check")) {
        run_checks(argc > 2 ? atoi(argv[2]) : 20, s);
    } else if (!strcmp(mode, "tiny")) { /* for racecheck: few, small launches */
        check_partition<uint32_t, uint32_t>(3000, 0, 6, 3, SL_K_PART_OWN, 1, s);
        std::vector<uint32_t> rk, rv, sk, sv;
        for (int i = 0; i < 6000; i++) {
            rk.push_back(i < 5000 ? 5u : (uint32_t)(mix64(i) % 3000));
            rv.push_back(i);
        }
        for (int j = 0; j < 3000; j++) {
            sk.push_back(j < 3 ? 5u : (uint32_t)(mix64(j + 99) % 6000));
            sv.push_back(j);
        }
        check_join<uint32_t, uint32_t>("tiny dup+multi-chunk", rk, rv, sk, sv, 0, 1, SL_K_PART_OWN, s);
    } else if (!strcmp(mode, "bench")) {
        const int lg = argc > 2 ? atoi(argv[2]) : 27;
        const char *only = argc > 3 ? argv[3] : "";
        const int64_t n = (int64_t)1 << lg;
        measure_d2d(s);
        if (!*only || strstr(only, "overlap"))
            bench_join<uint32_t, uint32_t>("narrow_overlap", n, n, 0, SL_K_PART_CUB, true, 5, s, true);
        for (int m = 0; m < 2; m++) {
            if (*only && strstr(only, "cubonly") && m == 1)
                break;
            if (!*only || strstr(only, "narrow"))
                bench_join<uint32_t, uint32_t>("narrow", n, n, 0, m, true, 5, s);
            if (!*only || strstr(only, "zipf"))
                bench_join<uint32_t, uint32_t>("narrow_zipf1", n, n, 1, m, true, 5, s);
            if (!*only || strstr(only, "k8"))
                bench_join<uint64_t, uint64_t>("narrow_8B", n, n, 0, m, true, 5, s);
            if (!*only || strstr(only, "agg"))
                bench_join<uint32_t, uint32_t>("narrow_count_sum", n, n, 0, m, false, 5, s);
        }
    } else {
        fprintf(stderr, "usage: %s check [log2n] | bench [log2n] [workloads]\n", argv[0]);
        return 2;
    }
    CK(cudaStreamDestroy(s));
    printf("%s: %d failure(s)\n", mode, g_fail);
    return g_fail ? 1 : 0;
}
