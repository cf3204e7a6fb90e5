/* Standalone GPU k-means benchmark (kernels/kmeans through its launchers; no runtime),
 * built by bench/meson.build with CUDA. Correctness of the kernels against the CPU
 * reference is tests/gpu/test_gpu_kmeans's job.
 *   gpu_kmeans_bench bench [lg]   2^lg points (default 26), d=16, k=64 and other shapes:
 *                                 ms per iteration (clear + step + update) per method,
 *                                 median of 5 after a warm-up (CUDA events), with the
 *                                 measured device-copy bandwidth and fp32 FMA peak.
 *   KM_FIRST_SHAPE=1: the first shape only; KM_METHODS=16: methods 1 and 6 only;
 *   KM_CHECK=1: also the labels, counts and sums of the tile kernels against the fused;
 *   KM_ROUNDS=R: the methods R times in turn (A/B alternating in one process). */
#include <algorithm>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "sluice_k/kmeans.h"

#define CU(x)                                                                              \
    do {                                                                                   \
        cudaError_t e_ = (x);                                                              \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_)); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static const char *mname[] = {"auto", "fused", "multipass", "tc_fused", "tc_multipass",
                              "mma_fused", "tile", "tile_pm"};

struct Data {
    int64_t n;
    int d;
    std::vector<std::vector<float>> h; /* h[j][i] */
    std::vector<const float *> hp;
    std::vector<float *> dp;
};

/* Blobs (kt centres in [-10,10]^d, uniform noise +-1); integer grid values if grid. */
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
    acc_alloc(A, getenv("KM_CHECK") ? n : 1, d, k);
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
    const char *only = getenv("KM_METHODS"); /* e.g. "1,5": those methods only */
    const int rounds = getenv("KM_ROUNDS") ? atoi(getenv("KM_ROUNDS")) : 1;
    for (int round = 0; round < rounds; round++)
    for (int m = 1; m <= SL_K_KMEANS_TILE_PM; m++) {
        if (!sl_k_kmeans_supported(m, d, k) || (only && !strchr(only, '0' + m)))
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
    for (int tm = SL_K_KMEANS_TILE; tm <= SL_K_KMEANS_TILE_PM; tm++) {
        if (!getenv("KM_CHECK") || !sl_k_kmeans_supported(SL_K_KMEANS_FUSED, d, k) ||
            !sl_k_kmeans_supported(tm, d, k))
            continue;
        /* a tile kernel (this build's variant) against the fused one: the same scores,
         * so the same labels and counts; sums within float32 rounding */
        std::vector<int32_t> l1(n), l6(n);
        std::vector<unsigned long long> c1(k), c6(k);
        std::vector<double> s1((size_t)k * d), s6((size_t)k * d);
        CU(cudaMemcpyAsync(A.c64, c64.data(), c64.size() * 8, cudaMemcpyHostToDevice, s));
        CU(sl_k_kmeans_to_f32(A.c64, (int64_t)k * d, A.cent, s));
        const int ms[2] = {SL_K_KMEANS_FUSED, tm};
        for (int q = 0; q < 2; q++) {
            step(D, A, k, ms[q], true, s);
            CU(cudaMemcpyAsync(q ? l6.data() : l1.data(), A.labels, (size_t)n * 4,
                               cudaMemcpyDeviceToHost, s));
            CU(cudaMemcpyAsync(q ? c6.data() : c1.data(), A.counts, (size_t)k * 8,
                               cudaMemcpyDeviceToHost, s));
            CU(cudaMemcpyAsync(q ? s6.data() : s1.data(), A.sums, (size_t)k * d * 8,
                               cudaMemcpyDeviceToHost, s));
            CU(cudaStreamSynchronize(s));
        }
        long long lm = 0, cm = 0;
        double worst = 0;
        for (int64_t i = 0; i < n; i++)
            lm += l1[i] != l6[i];
        for (int c = 0; c < k; c++) {
            cm += c1[c] != c6[c];
            for (int j = 0; j < d && c1[c]; j++) {
                const double a = s1[(size_t)c * d + j] / c1[c], b = s6[(size_t)c * d + j] / c1[c];
                worst = std::max(worst, fabs(a - b));
            }
        }
        printf("{\"bench\":\"kmeans_check\",\"points\":%lld,\"dims\":%d,\"k\":%d,"
               "\"method\":\"%s\",\"label_mismatch\":%lld,\"count_mismatch\":%lld,"
               "\"max_mean_residual_diff\":%.3g}\n",
               (long long)n, d, k, mname[tm], lm, cm, worst);
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
    bench_shape(n / 4, 8, 64, s, bw, peak);
    bench_shape(n / 4, 13, 64, s, bw, peak);
    bench_shape(n / 4, 16, 128, s, bw, peak);
    bench_shape(n / 4, 16, 192, s, bw, peak);
    bench_shape(n / 4, 16, 256, s, bw, peak);
    bench_shape(n / 4, 16, 1024, s, bw, peak);
    bench_shape(n / 8, 64, 256, s, bw, peak);
    bench_shape(n / 16, 128, 64, s, bw, peak);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "bench";
    int lg = argc > 2 ? atoi(argv[2]) : -1;
    cudaStream_t s;
    CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int rc;
    if (!strcmp(mode, "bench"))
        rc = run_bench(lg > 0 ? lg : 26, s);
    else {
        fprintf(stderr, "usage: %s bench [lg]\n", argv[0]);
        rc = 2;
    }
    CU(cudaStreamDestroy(s));
    return rc;
}
