/* GPU bandwidth for benchmark floors (BENCH_PROTOCOL.md: "device copy bandwidth (read +
 * write, from a large device-to-device copy)"), measured in the bench's own run. */
#include "bench.h"

#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>

double bench_device_copy_gbps(int ordinal, size_t bytes)
{
    void *a = NULL, *b = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    double best = 0, ms[5];
    int n = 0;
    if (cudaSetDevice(ordinal) != cudaSuccess || cudaMalloc(&a, bytes) != cudaSuccess ||
        cudaMalloc(&b, bytes) != cudaSuccess || cudaEventCreate(&e0) != cudaSuccess ||
        cudaEventCreate(&e1) != cudaSuccess || cudaMemset(a, 1, bytes) != cudaSuccess)
        goto done;
    for (int r = -1; r < 5; r++) { /* r = -1: warm-up */
        float t = 0;
        if (cudaEventRecord(e0, 0) != cudaSuccess ||
            cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0) != cudaSuccess ||
            cudaEventRecord(e1, 0) != cudaSuccess || cudaEventSynchronize(e1) != cudaSuccess ||
            cudaEventElapsedTime(&t, e0, e1) != cudaSuccess)
            goto done;
        if (r >= 0)
            ms[n++] = t;
    }
    best = 2.0 * (double)bytes / (bench_median(ms, n) * 1e6); /* read + write, GB/s */
done:
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    cudaGetLastError();
    return best;
}
#else
double bench_device_copy_gbps(int ordinal, size_t bytes)
{
    (void)ordinal, (void)bytes;
    return 0;
}
#endif
