/* sluice bench kmeans: Lloyd k-means of N float32 points in D dims around K blob
 * centres (docs/BENCH_PROTOCOL.md, "k-means"). Starting centroids are K distinct points
 * chosen with a fixed seed (init=random), tol=0, exactly I iterations. The points are
 * generated outside the timed span; each repeat times one query (create, run, result);
 * time_ms is the total of the I iterations (plus the init, which picks K rows) and
 * ms_per_iter = time_ms / I.
 * The floor on a CPU: 2*N*D*K flops per iteration over the fp32 FMA peak measured here
 * with independent 256-bit FMAs in registers on every thread ("fma_gflops"; AVX2, the
 * width the operator uses; the best of 5, so that a busy machine cannot push the peak
 * below what the operator reaches): floor_ms = I * 2*N*D*K / peak.
 * On a GPU (--placement gpu), per iteration: max(N*D*4 bytes read / the device copy
 * bandwidth (sl_engine_measure_device_copy, read + write counted), 2*N*D*K / the fp32
 * peak (sl_engine_device_fp32_peak)); host-resident points add one upload over the link
 * (docs/BENCH_PROTOCOL.md). "x_floor" = time_ms / floor_ms; the operator's phases (the
 * query profile: init, assign, update, converge, output; totals of a query in ms) give
 * "iter_ms" = (assign + update + converge) / I and its ratio to the per-iteration floor. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define FMA_ROUNDS (1L << 22)

/* 12 independent chains of 256-bit FMAs, each in its own register (the empty asm keeps
 * them there and stops the compiler folding the loop): enough to cover the FMA latency
 * on 2 ports (4-5 cycles each). Measuring with chains kept in memory would time
 * load/store latency instead and understate the peak. */
#define FMA12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
__attribute__((target("avx2,fma"))) static void *fma_main(void *p)
{
    __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
#define DECL(i) __m256 a##i = _mm256_set1_ps((float)(i));
    FMA12(DECL)
    for (long it = 0; it < FMA_ROUNDS; it++) {
#define STEP(i) a##i = _mm256_fmadd_ps(a##i, x, y);
        FMA12(STEP)
        __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5),
                         "+x"(a6), "+x"(a7), "+x"(a8), "+x"(a9), "+x"(a10), "+x"(a11));
    }
    float s = 0;
#define SUM(i) s += a##i[0];
    FMA12(SUM)
    *(float *)p = s;
    return NULL;
}

/* fp32 FMA peak in GFLOP/s on `threads` threads (each FMA = 16 flops on 8 lanes): the best
 * of 5, since any disturbance only lowers a measurement of a peak. */
static double fma_gflops(int threads)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") || threads > 64)
        return 0;
    double best_ms = 0;
    for (int r = 0; r < 5; r++) {
        pthread_t th[64];
        float sink[64];
        int64_t t0 = cli_now_ns();
        for (int i = 0; i < threads; i++)
            pthread_create(&th[i], NULL, fma_main, &sink[i]);
        for (int i = 0; i < threads; i++)
            pthread_join(th[i], NULL);
        double ms = (cli_now_ns() - t0) / 1e6;
        if (r == 0 || ms < best_ms)
            best_ms = ms;
    }
    return (double)FMA_ROUNDS * 12 * 16 * threads / (best_ms * 1e6);
}
#else
static double fma_gflops(int threads)
{
    (void)threads;
    return 0;
}
#endif

static int usage(void)
{
    printf("usage: sluice bench kmeans [--points N] [--dims D] [--k K] [--iters I] [--repeat R]\n"
           "                           [--seed S] [--threads N] [--placement cpu|gpu|auto]\n"
           "                           [--resident host|device] [--json]\n"
           "Lloyd k-means of N float32 blob points (defaults 2^22, 16, 64, 10 iterations,\n"
           "5 repeats after one warm-up); prints the protocol's JSON line with ms_per_iter.\n"
           "--resident device: the points are copied to GPU 0 before timing.\n");
    return 0;
}

static double unit(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return (double)(*x >> 11) * 0x1.0p-53;
}

static sl_table_t *make_points(int64_t n, int d, int k, uint64_t seed)
{
    char names_buf[64][8];
    const char *names[64];
    enum sl_type types[64];
    for (int j = 0; j < d; j++) {
        snprintf(names_buf[j], sizeof names_buf[j], "f%d", j);
        names[j] = names_buf[j];
        types[j] = SL_TYPE_FLOAT32;
    }
    sl_batch_t *b;
    if (sl_batch_create(&b, d, names, types, n) != SL_OK)
        return NULL;
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 7;
    float *centres = malloc((size_t)k * d * sizeof *centres);
    int32_t *which = malloc((size_t)n * sizeof *which);
    if (!centres || !which) {
        free(centres);
        free(which);
        sl_batch_unref(b);
        return NULL;
    }
    for (int i = 0; i < k * d; i++)
        centres[i] = (float)(unit(&x) * 20 - 10);
    for (int64_t i = 0; i < n; i++)
        which[i] = (int32_t)(unit(&x) * k);
    for (int j = 0; j < d; j++) {
        float *f = sl_batch_column_data(b, j);
        for (int64_t i = 0; i < n; i++)
            f[i] = centres[which[i] * d + j] + (float)(unit(&x) * 2 - 1);
    }
    free(centres);
    free(which);
    return bench_table_of(b);
}

struct km_check {
    int64_t d, k;
    double inertia; /* out: of the warm-up run */
};

/* k centroids came back; keeps the inertia for the JSON line. */
static int check_centroids(void *user, sl_table_t *out, struct bench_result *res)
{
    struct km_check *c = user;
    res->output_rows = sl_table_num_rows(out);
    res->checksum = bench_checksum_table(out);
    struct sl_column col;
    sl_batch_column(sl_table_batch(out, 0), (int)c->d + 2, &col);
    c->inertia = ((const double *)col.data)[col.offset];
    if (res->output_rows != c->k)
        return cli_fail("bench kmeans: %" PRId64 " centroids, expected %" PRId64,
                        res->output_rows, c->k),
               SL_EINTERNAL;
    return SL_OK;
}

static double phase_median(const struct bench_result *r, const char *name)
{
    for (int i = 0; i < r->n_phases; i++)
        if (!strcmp(r->phase_names[i], name))
            return bench_median(r->phase_ms[i], r->n);
    return 0;
}

/* The JSON line of a GPU run: the GPU floor (see the top of the file). */
static void print_gpu(sl_engine_t *eng, const struct bench_result *res, int64_t n, int64_t d,
                      int64_t k, int64_t iters, int on_device, double inertia)
{
    double med = bench_median(res->ms, res->n), per = med / (double)iters;
    double flops = 2.0 * (double)n * (double)d * (double)k, bytes = (double)n * d * 4;
    double bw = bench_device_copy_gbps(eng, bench_probe_bytes(bytes));
    double peak = bench_gpu_fp32_peak(eng);
    double mem_ms = bw > 0 ? bytes / (bw * 1e6) : 0, fma_ms = peak > 0 ? flops / (peak * 1e6) : 0;
    double iter_floor = mem_ms > fma_ms ? mem_ms : fma_ms;
    /* Host-resident points cross the link once per query, before the first iteration. */
    struct bench_floor up = {0};
    if (!on_device)
        bench_floor_measure(eng, BENCH_LINK, bytes, 0, &up);
    double floor = up.ms + iter_floor * (double)iters;
    double iter_ms = (phase_median(res, "assign") + phase_median(res, "update") +
                      phase_median(res, "converge")) / (double)iters;
    char extra[700];
    snprintf(extra, sizeof extra,
             ",\"points\":%" PRId64 ",\"dims\":%" PRId64 ",\"k\":%" PRId64 ",\"iters\":%" PRId64
             ",\"resident\":\"%s\",\"ms_per_iter\":%.3f,\"gflops\":%.1f,\"copy_gbps\":%.1f"
             ",\"peak_gflops\":%.1f,\"mem_floor_ms\":%.3f,\"flop_floor_ms\":%.3f"
             ",\"upload_floor_ms\":%.3f,\"floor\":\"fma_or_device_copy\",\"floor_ms\":%.3f"
             ",\"x_floor\":%.2f,\"floor_ms_per_iter\":%.3f,\"iter_ms\":%.3f"
             ",\"iter_ratio\":%.2f,\"inertia\":%.6g",
             n, d, k, iters, on_device ? "device" : "host", per, flops * iters / (med * 1e6), bw,
             peak, mem_ms, fma_ms, up.ms, floor, floor > 0 ? med / floor : 0,
             floor / (double)iters, iter_ms, iter_floor > 0 ? iter_ms / iter_floor : 0, inertia);
    bench_print_json("kmeans", res, extra);
}

/* The JSON line of a CPU run: the FMA floor (see the top of the file). */
static void print_cpu(sl_engine_t *eng, const struct bench_result *res, int64_t n, int64_t d,
                      int64_t k, int64_t iters, double inertia)
{
    int threads = sl_engine_num_threads(eng);
    double med = bench_median(res->ms, res->n);
    double peak = fma_gflops(threads);
    double flops = 2.0 * (double)n * (double)d * (double)k;
    double floor = peak > 0 ? flops * (double)iters / (peak * 1e6) : 0;
    char extra[500];
    snprintf(extra, sizeof extra,
             ",\"points\":%" PRId64 ",\"dims\":%" PRId64 ",\"k\":%" PRId64 ",\"iters\":%" PRId64
             ",\"threads\":%d,\"ms_per_iter\":%.3f,\"gflops\":%.2f,\"fma_gflops\":%.2f"
             ",\"floor\":\"fma\",\"floor_ms\":%.3f,\"x_floor\":%.2f"
             ",\"floor_ms_per_iter\":%.3f,\"inertia\":%.6g",
             n, d, k, iters, threads, med / (double)iters, flops * iters / (med * 1e6), peak,
             floor, floor > 0 ? med / floor : 0, floor / (double)iters, inertia);
    bench_print_json("kmeans", res, extra);
}

int bench_kmeans(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c);
    int64_t n = (int64_t)1 << 22, d = 16, k = 64, iters = 10, repeat = 5, seed = 42;
    int on_device = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help"))
            return usage();
        if (!strcmp(argv[i], "--resident") && i + 1 < argc) {
            on_device = !strcmp(argv[++i], "device");
            if (!on_device && strcmp(argv[i], "host"))
                return cli_fail("bench kmeans: --resident must be host or device");
            continue;
        }
        const struct bench_count_opt counts[] = {{"--points", &n}, {"--dims", &d}, {"--k", &k},
            {"--iters", &iters}, {"--repeat", &repeat}, {"--seed", &seed}};
        int r = bench_option(argc, argv, &i, counts, 6, &c, "kmeans");
        if (r != 0)
            return r;
    }
    if (n < 1 || d < 1 || d > 64 || k < 1 || k > n || iters < 1 || repeat < 1 ||
        repeat > BENCH_MAX_REPEAT)
        return cli_fail("bench kmeans: need --points >= 1, --dims 1..64, --k 1..points, "
                        "--iters >= 1, --repeat 1..%d", BENCH_MAX_REPEAT);
    sl_table_t *in = make_points(n, (int)d, (int)k, (uint64_t)seed);
    if (!in)
        return cli_fail("bench kmeans: out of memory for the input");
    sl_engine_t *eng = cli_open_engine(&c);
    if (!eng) {
        sl_table_unref(in);
        return 1;
    }
    if (on_device && bench_to_device(eng, &in, "kmeans") < 0) {
        sl_engine_close(eng);
        sl_table_unref(in);
        return 1;
    }
    char opts[160];
    snprintf(opts, sizeof opts, "k=%" PRId64 " init=random seed=%" PRId64 " max_iter=%" PRId64
             " tol=0", k, seed, iters);
    sl_plan_t *plan;
    int src, a, rc = sl_plan_create(&plan);
    if (rc == SL_OK)
        rc = sl_plan_add_table(plan, in, &src);
    if (rc == SL_OK)
        rc = sl_plan_add(plan, "kmeans", &src, 1, opts, &a);
    if (rc == SL_OK)
        rc = sl_plan_output(plan, a, "centroids");
    if (rc != SL_OK)
        cli_fail("bench kmeans: %s", sl_plan_errmsg(plan));
    struct bench_result res;
    bench_result_init(&res, n);
    bench_device_name(eng, c.placement, res.device, sizeof res.device);
    struct km_check chk = {d, k, 0};
    res.phase_op = "kmeans";
    if (rc == SL_OK)
        rc = bench_run_plan(eng, plan, "centroids", repeat, "kmeans", &res, check_centroids, &chk);
    double inertia = chk.inertia;
    if (rc == SL_OK && c.placement == SL_PLACE_GPU)
        print_gpu(eng, &res, n, d, k, iters, on_device, inertia);
    else if (rc == SL_OK)
        print_cpu(eng, &res, n, d, k, iters, inertia);
    sl_plan_destroy(plan);
    sl_table_unref(in);
    sl_engine_close(eng);
    return rc == SL_OK ? 0 : 1;
}
