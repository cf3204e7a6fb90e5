/* Standalone GPU k-means check and benchmark (kernels/kmeans through its launchers; no
 * runtime). Built by bench/gpu/build_kmeans.sh, run by bench/gpu/run_kmeans.sh.
 *   gpu_kmeans_bench check [lg]   steps, Lloyd loops and k-means++ against the CPU
 *                                 reference (tests/gpu/kmeans_ref.h); every method
 *   gpu_kmeans_bench tiny         one small step per method (for racecheck)
 *   gpu_kmeans_bench bench [lg]   2^lg points (default 26), d=16, k=64 and other shapes:
 *                                 ms per iteration (clear + step + update) per method,
 *                                 median of 5 after a warm-up (CUDA events), with the
 *                                 measured device-copy bandwidth and fp32 FMA peak. */
#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "../../tests/gpu/kmeans_ref.h"
#include "sluice_k/kmeans.h"

#define CU(x)                                                                              \
    do {                                                                                   \
        cudaError_t e_ = (x);                                                              \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_)); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static const char *mname[] = {"auto", "fused", "multipass", "tc_fused", "tc_multipass"};
static int failures = 0;

static double unit(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return (double)(*x >> 11) * 0x1.0p-53;
}

struct Data {
    int64_t n;
    int d;
    std::vector<std::vector<float>> h; /* h[j][i] */
    std::vector<const float *> hp;
    std::vector<float *> dp;
};

/* Blobs (kt centres in [-10,10]^d, uniform noise +-1); integer grid values if grid. */
static void make_data(Data &D, int64_t n, int d, int kt, uint64_t seed, bool grid)
{
    D.n = n;
    D.d = d;
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 7;
    std::vector<float> ctr((size_t)kt * d);
    for (auto &c : ctr)
        c = (float)(unit(&x) * 20 - 10);
    D.h.assign(d, std::vector<float>((size_t)n));
    for (int64_t i = 0; i < n; i++) {
        int w = (int)(unit(&x) * kt);
        for (int j = 0; j < d; j++) {
            float v = ctr[(size_t)w * d + j] + (float)(unit(&x) * 2 - 1);
            D.h[j][i] = grid ? floorf(v) : v;
        }
    }
    D.hp.resize(d);
    D.dp.resize(d);
    for (int j = 0; j < d; j++) {
        D.hp[j] = D.h[j].data();
        CU(cudaMalloc(&D.dp[j], (size_t)(n ? n : 1) * 4));
        CU(cudaMemcpy(D.dp[j], D.h[j].data(), (size_t)n * 4, cudaMemcpyHostToDevice));
    }
}

static void free_data(Data &D)
{
    for (auto p : D.dp)
        cudaFree(p);
}

struct Acc {
    double *sums, *inertia, *c64, *shift;
    unsigned long long *counts;
    float *cent;
    int32_t *labels;
    void *temp;
    size_t temp_bytes;
};

static void acc_alloc(Acc &A, int64_t n, int d, int k)
{
    CU(cudaMalloc(&A.sums, (size_t)k * d * 8));
    CU(cudaMalloc(&A.c64, (size_t)k * d * 8));
    CU(cudaMalloc(&A.counts, (size_t)k * 8));
    CU(cudaMalloc(&A.inertia, 8));
    CU(cudaMalloc(&A.shift, 16));
    CU(cudaMalloc(&A.cent, (size_t)k * d * 4));
    CU(cudaMalloc(&A.labels, (size_t)(n ? n : 1) * 4));
    A.temp_bytes = (size_t)(n ? n : 1) * 4 + 4096;
    CU(cudaMalloc(&A.temp, A.temp_bytes));
}

static void acc_free(Acc &A)
{
    cudaFree(A.sums); cudaFree(A.c64); cudaFree(A.counts); cudaFree(A.inertia);
    cudaFree(A.shift); cudaFree(A.cent); cudaFree(A.labels); cudaFree(A.temp);
}

static void step(Data &D, Acc &A, int k, int method, bool labels, cudaStream_t s)
{
    size_t tb = 0;
    CU(sl_k_kmeans_step_f32(NULL, &tb, D.dp.data(), D.d, D.n, A.cent, k, method, A.sums, A.counts,
                            A.inertia, labels ? A.labels : NULL, s));
    if (tb > A.temp_bytes) {
        fprintf(stderr, "temp %zu > %zu\n", tb, A.temp_bytes);
        exit(1);
    }
    CU(sl_k_kmeans_clear(A.sums, A.counts, A.inertia, k, D.d, s));
    CU(sl_k_kmeans_step_f32(A.temp, &tb, D.dp.data(), D.d, D.n, A.cent, k, method, A.sums,
                            A.counts, A.inertia, labels ? A.labels : NULL, s));
}

/* Initial float32 centroids: k rows of the data (distinct while k <= n). */
static std::vector<float> init_cent(const Data &D, int k, uint64_t seed, bool dup)
{
    std::vector<float> c((size_t)k * D.d);
    for (int r = 0; r < k && D.n > 0; r++) {
        int64_t row = dup && r % 2 ? (int64_t)((r - 1) * 7919 % D.n)
                                   : (int64_t)(kmr_rng(&seed) % (uint64_t)D.n);
        if (dup && r % 2 == 0)
            row = (int64_t)(r * 7919 % D.n);
        for (int j = 0; j < D.d; j++)
            c[(size_t)r * D.d + j] = D.h[j][row];
    }
    return c;
}

/* One step on the GPU against kmr_step: labels equal except near-ties, counts, new
 * centroids within relative 1e-4, inertia within relative 1e-5. */
static void check_step(int64_t n, int d, int k, int kt, int method, uint64_t seed, bool grid,
                       bool dup, cudaStream_t s)
{
    Data D;
    make_data(D, n, d, kt, seed, grid);
    Acc A;
    acc_alloc(A, n, d, k);
    std::vector<float> cf = init_cent(D, k, seed + 1, dup);
    CU(cudaMemcpy(A.cent, cf.data(), cf.size() * 4, cudaMemcpyHostToDevice));
    step(D, A, k, method, true, s);
    std::vector<int32_t> gl((size_t)n + 1);
    std::vector<double> gs((size_t)k * d), rs((size_t)k * d);
    std::vector<unsigned long long> gc(k);
    std::vector<int64_t> rc(k);
    double gi = 0, ri = 0;
    CU(cudaMemcpyAsync(gl.data(), A.labels, (size_t)n * 4, cudaMemcpyDeviceToHost, s));
    CU(cudaMemcpyAsync(gs.data(), A.sums, gs.size() * 8, cudaMemcpyDeviceToHost, s));
    CU(cudaMemcpyAsync(gc.data(), A.counts, (size_t)k * 8, cudaMemcpyDeviceToHost, s));
    CU(cudaMemcpyAsync(&gi, A.inertia, 8, cudaMemcpyDeviceToHost, s));
    CU(cudaStreamSynchronize(s));
    std::vector<int32_t> rl((size_t)n + 1);
    kmr_step(D.hp.data(), n, d, cf.data(), k, rl.data(), rs.data(), rc.data(), &ri);
    int64_t diff = 0, bad = 0;
    for (int64_t i = 0; i < n; i++) {
        if (gl[i] == rl[i])
            continue;
        diff++;
        float sg = kmr_score(D.hp.data(), i, d, &cf[(size_t)gl[i] * d]);
        float sr = kmr_score(D.hp.data(), i, d, &cf[(size_t)rl[i] * d]);
        if (!(gl[i] >= 0 && gl[i] < k) || fabsf(sg - sr) > 1e-5f * (fabsf(sr) + 1.f))
            bad++;
    }
    double worst = 0;
    int64_t cnt_bad = 0;
    for (int c = 0; c < k; c++) {
        if (diff == 0 && (int64_t)gc[c] != rc[c])
            cnt_bad++;
        if (!gc[c] || !rc[c])
            continue;
        for (int j = 0; j < d; j++) {
            double g = cf[(size_t)c * d + j] + gs[(size_t)c * d + j] / (double)gc[c];
            double r = rs[(size_t)c * d + j] / (double)rc[c];
            worst = std::max(worst, fabs(g - r) / (fabs(r) + 1.0));
        }
    }
    double ierr = fabs(gi - ri) / (fabs(ri) + 1e-30);
    bool ok = bad == 0 && cnt_bad == 0 && worst <= 1e-4 && (diff > 0 || ierr <= 1e-5) &&
              ierr <= 1e-3;
    printf("%s step n=%lld d=%d k=%d %s%s%s: label diffs %lld (not ties %lld), count diffs %lld, "
           "centroid rel err %.2e, inertia rel err %.2e\n",
           ok ? "ok  " : "FAIL", (long long)n, d, k, mname[method], grid ? " grid" : "",
           dup ? " dup-centroids" : "", (long long)diff, (long long)bad, (long long)cnt_bad,
           worst, ierr);
    failures += !ok;
    acc_free(A);
    free_data(D);
}

/* iters Lloyd iterations on the GPU (step + update kernel) against the CPU loop. */
static void check_lloyd(int64_t n, int d, int k, int method, int iters, uint64_t seed,
                        cudaStream_t s)
{
    Data D;
    make_data(D, n, d, k, seed, false);
    Acc A;
    acc_alloc(A, n, d, k);
    std::vector<float> cf = init_cent(D, k, seed + 1, false);
    std::vector<double> c64(cf.begin(), cf.end());
    CU(cudaMemcpy(A.cent, cf.data(), cf.size() * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(A.c64, c64.data(), c64.size() * 8, cudaMemcpyHostToDevice));
    std::vector<int32_t> rl((size_t)n + 1);
    std::vector<double> rs((size_t)k * d);
    std::vector<int64_t> rc(k);
    double ri;
    for (int it = 0; it < iters; it++) {
        step(D, A, k, method, false, s);
        CU(sl_k_kmeans_update(A.cent, A.c64, A.sums, A.counts, k, d, A.cent, A.shift, s));
        kmr_step(D.hp.data(), n, d, cf.data(), k, rl.data(), rs.data(), rc.data(), &ri);
        for (int c = 0; c < k; c++)
            for (int j = 0; j < d; j++) {
                size_t e = (size_t)c * d + j;
                if (rc[c])
                    c64[e] = rs[e] / (double)rc[c];
                cf[e] = (float)c64[e];
            }
    }
    std::vector<double> g((size_t)k * d);
    CU(cudaMemcpyAsync(g.data(), A.c64, g.size() * 8, cudaMemcpyDeviceToHost, s));
    CU(cudaStreamSynchronize(s));
    double worst = 0;
    for (size_t e = 0; e < g.size(); e++)
        worst = std::max(worst, fabs(g[e] - c64[e]) / (fabs(c64[e]) + 1.0));
    bool ok = worst <= 1e-4;
    printf("%s lloyd n=%lld d=%d k=%d %s x%d: centroid rel err %.2e\n", ok ? "ok  " : "FAIL",
           (long long)n, d, k, mname[method], iters, worst);
    failures += !ok;
    acc_free(A);
    free_data(D);
}

/* k-means++ picks on the GPU (pp_update, pp_total, pp_pick) against kmr_plusplus. */
static void check_pp(int64_t n, int d, int k, uint64_t seed, cudaStream_t s)
{
    Data D;
    make_data(D, n, d, 5, seed, seed % 2 == 0);
    std::vector<int64_t> ref(k), got(k);
    kmr_plusplus(D.hp.data(), n, d, k, seed, ref.data());
    double *d2, *last, *total;
    long long *pick;
    CU(cudaMalloc(&d2, (size_t)n * 8));
    CU(cudaMalloc(&last, (size_t)d * 8));
    CU(cudaMalloc(&total, 8));
    CU(cudaMalloc(&pick, 8));
    size_t t1 = 0, t2 = 0;
    CU(sl_k_kmeans_pp_total(NULL, &t1, d2, n, total, s));
    CU(sl_k_kmeans_pp_pick(NULL, &t2, d2, n, 0, pick, s));
    void *tmp;
    CU(cudaMalloc(&tmp, std::max(t1, t2)));
    uint64_t r = seed;
    got[0] = (int64_t)(kmr_rng(&r) % (uint64_t)n);
    std::vector<double> lh(d);
    for (int c = 1; c < k; c++) {
        for (int j = 0; j < d; j++)
            lh[j] = D.h[j][got[c - 1]];
        CU(cudaMemcpyAsync(last, lh.data(), (size_t)d * 8, cudaMemcpyHostToDevice, s));
        CU(sl_k_kmeans_pp_update_f32(D.dp.data(), d, n, last, c == 1, d2, s));
        CU(sl_k_kmeans_pp_total(tmp, &t1, d2, n, total, s));
        double tot = 0;
        CU(cudaMemcpyAsync(&tot, total, 8, cudaMemcpyDeviceToHost, s));
        CU(cudaStreamSynchronize(s));
        int64_t p = (int64_t)(kmr_rng(&r) % (uint64_t)n);
        if (tot > 0) {
            double u = (double)(kmr_rng(&r) >> 11) * 0x1.0p-53 * tot;
            CU(sl_k_kmeans_pp_pick(tmp, &t2, d2, n, u, pick, s));
            long long pk = 0;
            CU(cudaMemcpyAsync(&pk, pick, 8, cudaMemcpyDeviceToHost, s));
            CU(cudaStreamSynchronize(s));
            p = pk;
        }
        got[c] = p;
    }
    int64_t diff = 0;
    for (int c = 0; c < k; c++)
        diff += got[c] != ref[c];
    printf("%s kmeans++ n=%lld d=%d k=%d: %lld picks differ\n", diff ? "FAIL" : "ok  ",
           (long long)n, d, k, (long long)diff);
    failures += diff != 0;
    cudaFree(d2); cudaFree(last); cudaFree(total); cudaFree(pick); cudaFree(tmp);
    free_data(D);
}

static int run_check(int lg, cudaStream_t s)
{
    const int64_t n = (int64_t)1 << lg;
    const int methods[] = {SL_K_KMEANS_FUSED, SL_K_KMEANS_MULTIPASS, SL_K_KMEANS_TC_FUSED,
                           SL_K_KMEANS_TC_MULTIPASS};
    struct { int64_t n; int d, k, kt; bool grid, dup; } cases[] = {
        {n, 16, 64, 64, false, false}, {n, 2, 3, 3, false, false}, {n, 5, 8, 8, false, false},
        {n, 16, 1, 4, false, false},   {7, 16, 7, 3, false, false}, {1000, 3, 1000, 5, false, false},
        {n, 16, 64, 8, true, true},    {n / 4, 33, 40, 10, false, false},
        {n / 4, 64, 700, 20, false, false}, {n / 8, 16, 3000, 50, false, false},
        {n / 16, 100, 20, 5, false, false}, {0, 16, 4, 4, false, false},
    };
    for (auto &c : cases)
        for (int m : methods)
            if (sl_k_kmeans_supported(m, c.d, c.k))
                check_step(c.n, c.d, c.k, c.kt, m, 11 + c.d + c.k, c.grid, c.dup, s);
    for (int m : methods)
        check_lloyd(n / 2, 16, 64, m, 10, 5, s);
    check_lloyd(n / 8, 8, 2000, SL_K_KMEANS_AUTO, 5, 6, s);
    check_pp(n / 4, 16, 16, 3, s);
    check_pp(5000, 4, 50, 4, s);
    check_pp(3, 2, 3, 9, s);
    printf("check: %d failures\n", failures);
    return failures ? 1 : 0;
}

static int run_tiny(cudaStream_t s)
{
    const int methods[] = {SL_K_KMEANS_FUSED, SL_K_KMEANS_MULTIPASS, SL_K_KMEANS_TC_FUSED,
                           SL_K_KMEANS_TC_MULTIPASS};
    for (int m : methods)
        check_step(700, 16, 8, 4, m, 1, false, false, s);
    check_step(700, 16, 8, 4, SL_K_KMEANS_FUSED, 2, true, true, s);
    check_lloyd(600, 16, 8, SL_K_KMEANS_AUTO, 2, 3, s);
    check_pp(5000, 4, 4, 4, s);
    printf("tiny: %d failures\n", failures);
    return failures ? 1 : 0;
}

/* ---------------- benchmark ---------------- */

__global__ void gen_kernel(float **cols, int d, int64_t n, int kt, uint64_t seed)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull + seed;
        x ^= x >> 31; x *= 0xBF58476D1CE4E5B9ull; x ^= x >> 29;
        int w = (int)((x >> 40) % (uint64_t)kt);
        for (int j = 0; j < d; j++) {
            uint64_t c = ((uint64_t)w * 131 + j) * 0x94D049BB133111EBull + seed;
            c ^= c >> 29; c *= 0xBF58476D1CE4E5B9ull; c ^= c >> 32;
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            cols[j][i] = (float)((c >> 40) * 0x1p-24 * 20 - 10) + (float)((x >> 40) * 0x1p-24 * 2 - 1);
        }
    }
}

__global__ void fma_kernel(float *out, int iters)
{
    float a[8];
    for (int q = 0; q < 8; q++)
        a[q] = threadIdx.x * 1e-3f + q;
    const float m = 0.9999f, c = 1e-4f;
    for (int it = 0; it < iters; it++)
#pragma unroll
        for (int q = 0; q < 8; q++)
            a[q] = fmaf(a[q], m, c);
    float s = 0;
    for (int q = 0; q < 8; q++)
        s += a[q];
    if (s == 12345.f)
        out[0] = s;
}

static double median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

static void bench_shape(int64_t n, int d, int k, cudaStream_t s, double bw, double peak)
{
    std::vector<float *> cols(d);
    for (int j = 0; j < d; j++)
        CU(cudaMalloc(&cols[j], (size_t)n * 4));
    float **dcols;
    CU(cudaMalloc(&dcols, (size_t)d * sizeof(float *)));
    CU(cudaMemcpy(dcols, cols.data(), (size_t)d * sizeof(float *), cudaMemcpyHostToDevice));
    gen_kernel<<<4096, 256, 0, s>>>(dcols, d, n, k, 77);
    CU(cudaGetLastError());
    Data D;
    D.n = n;
    D.d = d;
    D.dp = cols;
    Acc A;
    acc_alloc(A, 1, d, k);
    cudaFree(A.temp);
    A.temp_bytes = (size_t)n * 4 + 4096;
    CU(cudaMalloc(&A.temp, A.temp_bytes));
    /* initial centroids: the first k points (k distinct blob points) */
    std::vector<double> c64((size_t)k * d);
    std::vector<float> tmp(k);
    for (int j = 0; j < d; j++) {
        CU(cudaMemcpy(tmp.data(), cols[j], (size_t)k * 4, cudaMemcpyDeviceToHost));
        for (int c = 0; c < k; c++)
            c64[(size_t)c * d + j] = tmp[c];
    }
    const double bytes = (double)n * d * 4, flops = 2.0 * n * d * k;
    const double floor_ms = std::max(bytes / bw, flops / peak) * 1e3;
    cudaEvent_t e0, e1;
    CU(cudaEventCreate(&e0));
    CU(cudaEventCreate(&e1));
    for (int m = 1; m <= 4; m++) {
        if (!sl_k_kmeans_supported(m, d, k))
            continue;
        std::vector<float> it_ms, st_ms;
        double inertia = 0;
        for (int r = 0; r < 6; r++) {
            CU(cudaMemcpyAsync(A.c64, c64.data(), c64.size() * 8, cudaMemcpyHostToDevice, s));
            CU(sl_k_kmeans_to_f32(A.c64, (int64_t)k * d, A.cent, s));
            float ms = 0;
            /* step alone */
            CU(cudaEventRecord(e0, s));
            step(D, A, k, m, false, s);
            CU(cudaEventRecord(e1, s));
            CU(cudaEventSynchronize(e1));
            CU(cudaEventElapsedTime(&ms, e0, e1));
            if (r)
                st_ms.push_back(ms);
            /* a full iteration: clear + step + update, 5 in a row */
            CU(cudaEventRecord(e0, s));
            for (int q = 0; q < 5; q++) {
                step(D, A, k, m, false, s);
                CU(sl_k_kmeans_update(A.cent, A.c64, A.sums, A.counts, k, d, A.cent, A.shift, s));
            }
            CU(cudaEventRecord(e1, s));
            CU(cudaEventSynchronize(e1));
            CU(cudaEventElapsedTime(&ms, e0, e1));
            if (r)
                it_ms.push_back(ms / 5);
            CU(cudaMemcpy(&inertia, A.inertia, 8, cudaMemcpyDeviceToHost));
        }
        double med = median(it_ms);
        printf("{\"bench\":\"kmeans_kernel\",\"points\":%lld,\"dims\":%d,\"k\":%d,\"method\":\"%s\","
               "\"ms_per_iter\":%.3f,\"min_ms\":%.3f,\"max_ms\":%.3f,\"step_ms\":%.3f,"
               "\"floor_ms\":%.3f,\"x_floor\":%.2f,\"gflops\":%.0f,\"inertia\":%.6g}\n",
               (long long)n, d, k, mname[m], med,
               *std::min_element(it_ms.begin(), it_ms.end()),
               *std::max_element(it_ms.begin(), it_ms.end()), median(st_ms), floor_ms,
               med / floor_ms, flops / (med * 1e6), inertia);
        fflush(stdout);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    acc_free(A);
    for (auto p : cols)
        cudaFree(p);
    cudaFree(dcols);
}

static int run_bench(int lg, cudaStream_t s)
{
    cudaDeviceProp prop;
    CU(cudaGetDeviceProperties(&prop, 0));
    /* device copy bandwidth: 2 GiB D2D, read + write bytes / time, median of 5 */
    size_t cb = (size_t)2 << 30;
    void *a, *b;
    CU(cudaMalloc(&a, cb));
    CU(cudaMalloc(&b, cb));
    CU(cudaMemsetAsync(a, 1, cb, s));
    cudaEvent_t e0, e1;
    CU(cudaEventCreate(&e0));
    CU(cudaEventCreate(&e1));
    std::vector<float> ms;
    for (int r = 0; r < 6; r++) {
        CU(cudaEventRecord(e0, s));
        CU(cudaMemcpyAsync(b, a, cb, cudaMemcpyDeviceToDevice, s));
        CU(cudaEventRecord(e1, s));
        CU(cudaEventSynchronize(e1));
        float t;
        CU(cudaEventElapsedTime(&t, e0, e1));
        if (r)
            ms.push_back(t);
    }
    double bw = 2.0 * cb / (median(ms) * 1e-3);
    cudaFree(a);
    cudaFree(b);
    /* fp32 FMA peak: 8 independent chains per thread, 8 blocks of 256 per SM */
    float *o;
    CU(cudaMalloc(&o, 4));
    const int iters = 1 << 16;
    const int blocks = prop.multiProcessorCount * 8;
    ms.clear();
    for (int r = 0; r < 4; r++) {
        CU(cudaEventRecord(e0, s));
        fma_kernel<<<blocks, 256, 0, s>>>(o, iters);
        CU(cudaEventRecord(e1, s));
        CU(cudaEventSynchronize(e1));
        float t;
        CU(cudaEventElapsedTime(&t, e0, e1));
        if (r)
            ms.push_back(t);
    }
    double peak = 2.0 * 8 * iters * (double)blocks * 256 / (median(ms) * 1e-3);
    cudaFree(o);
    printf("{\"device\":\"%s\",\"sms\":%d,\"copy_gbs\":%.0f,\"fp32_fma_tflops\":%.1f}\n", prop.name,
           prop.multiProcessorCount, bw / 1e9, peak / 1e12);
    fflush(stdout);
    const int64_t n = (int64_t)1 << lg;
    bench_shape(n, 16, 64, s, bw, peak);
    if (getenv("KM_FIRST_SHAPE")) /* the target row only */
        return 0;
    bench_shape(n / 4, 4, 64, s, bw, peak);
    bench_shape(n / 4, 16, 256, s, bw, peak);
    bench_shape(n / 4, 16, 1024, s, bw, peak);
    bench_shape(n / 8, 64, 256, s, bw, peak);
    bench_shape(n / 16, 128, 64, s, bw, peak);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "check";
    int lg = argc > 2 ? atoi(argv[2]) : -1;
    cudaStream_t s;
    CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int rc;
    if (!strcmp(mode, "check"))
        rc = run_check(lg > 0 ? lg : 16, s);
    else if (!strcmp(mode, "tiny"))
        rc = run_tiny(s);
    else if (!strcmp(mode, "bench"))
        rc = run_bench(lg > 0 ? lg : 26, s);
    else {
        fprintf(stderr, "usage: %s check [lg] | tiny | bench [lg]\n", argv[0]);
        rc = 2;
    }
    CU(cudaStreamDestroy(s));
    return rc;
}
