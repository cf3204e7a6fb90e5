/* Measurements of one GPU that benchmarks use for their floors (docs/BENCH_PROTOCOL.md):
 * the device-to-device copy bandwidth and the fp32 FMA peak. Built only with CUDA;
 * gpu_stub.c stands in otherwise. */
#include <stdlib.h>

#include "gpu_worker_int.h"

#define COPY_REPEATS 5

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Times COPY_REPEATS copies of `bytes` from a to b on `st` after one warm-up; *median_ms. */
static cudaError_t time_copies(void *b, const void *a, size_t bytes, cudaStream_t st,
                               cudaEvent_t e0, cudaEvent_t e1, float *median_ms)
{
    float ms[COPY_REPEATS];
    cudaError_t e = cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, st);
    for (int r = 0; e == cudaSuccess && r < COPY_REPEATS; r++) {
        e = cudaEventRecord(e0, st);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, st);
        if (e == cudaSuccess)
            e = cudaEventRecord(e1, st);
        if (e == cudaSuccess)
            e = cudaEventSynchronize(e1);
        if (e == cudaSuccess)
            e = cudaEventElapsedTime(&ms[r], e0, e1);
    }
    if (e == cudaSuccess) {
        qsort(ms, COPY_REPEATS, sizeof ms[0], cmp_float);
        *median_ms = ms[COPY_REPEATS / 2];
    }
    return e;
}

int sl__gpu_measure_copy(struct sl__gpu *g, int64_t bytes, double *gbps)
{
    *gbps = 0;
    int prev = -1, rc = sl__cuda_set_device(g->ordinal, &prev);
    if (rc < 0)
        return rc;
    void *a = NULL, *b = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    cudaStream_t st = g->s[S_COMPUTE];
    rc = sl__dpool_alloc_async(g->pool, bytes, st, &a);
    if (rc == SL_OK)
        rc = sl__dpool_alloc_async(g->pool, bytes, st, &b);
    if (rc == SL_OK)
        rc = sl__cuda_event_create(g->ordinal, true, &e0);
    if (rc == SL_OK)
        rc = sl__cuda_event_create(g->ordinal, true, &e1);
    if (rc == SL_OK) {
        float ms = 0;
        cudaError_t e = cudaMemsetAsync(a, 1, (size_t)bytes, st);
        if (e == cudaSuccess)
            e = time_copies(b, a, (size_t)bytes, st, e0, e1, &ms);
        if (e != cudaSuccess)
            rc = GPU_CUDA_FAIL(NULL, e, "measuring the device copy bandwidth");
        else if (ms > 0)
            *gbps = 2.0 * (double)bytes / (ms * 1e6); /* read + write */
    }
    if (a)
        sl__dpool_free_async(g->pool, a, bytes, st);
    if (b)
        sl__dpool_free_async(g->pool, b, bytes, st);
    if (cudaStreamSynchronize(st) != cudaSuccess)
        cudaGetLastError(); /* a failure is already reported above */
    if (e0)
        sl__cuda_event_destroy(e0);
    if (e1)
        sl__cuda_event_destroy(e1);
    sl__cuda_set_device(prev, NULL);
    return rc;
}

/* FP32 FMA lanes per SM by compute capability (CUDA C programming guide, throughput of
 * arithmetic instructions): 64 for 6.0, 7.x and 8.0, 128 for the others (9.0: H100). */
static int fp32_lanes(int major, int minor)
{
    if ((major == 6 && minor == 0) || major == 7 || (major == 8 && minor == 0))
        return 64;
    return 128;
}

int sl__gpu_fp32_peak(struct sl__gpu *g, double *gflops)
{
    int sms = 0, khz = 0, major = 0, minor = 0;
    cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, g->ordinal);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, g->ordinal);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, g->ordinal);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, g->ordinal);
    if (e != cudaSuccess) {
        *gflops = 0;
        return GPU_CUDA_FAIL(NULL, e, "reading the device attributes");
    }
    /* peak = SMs x peak clock x lanes x 2 flops per FMA */
    *gflops = (double)sms * khz * 1e3 * fp32_lanes(major, minor) * 2 / 1e9;
    return SL_OK;
}
