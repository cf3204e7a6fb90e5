/* Shared by the host-memory micro programs (gpu_host_mem_micro.cu, gpu_upload_micro.cu,
 * gpu_link_micro.cu): a CUDA check that exits, and a millisecond clock. */
#ifndef SLUICE_BENCH_MICRO_UTIL_H
#define SLUICE_BENCH_MICRO_UTIL_H

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime_api.h>

#define CK(x)                                                                           \
    do {                                                                                \
        cudaError_t e_ = (x);                                                           \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                    \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static inline double now_ms()
{
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch()).count();
}

#endif /* SLUICE_BENCH_MICRO_UTIL_H */
