/* Shared by the group-by bench programs (gpu_agg_bench.cu, gpu_agg_micro.cu): a CUDA check
 * that exits, the xorshift generator and the key hash of `sluice bench aggregate`
 * (cli/bench_aggregate.c), so that every program draws the same keys. */
#ifndef SLUICE_BENCH_AGG_BENCH_UTIL_H
#define SLUICE_BENCH_AGG_BENCH_UTIL_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime_api.h>

#define CK(x)                                                                           \
    do {                                                                                \
        cudaError_t e_ = (x);                                                           \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #x,                \
                    cudaGetErrorName(e_));                                              \
            exit(2);                                                                    \
        }                                                                               \
    } while (0)

static inline uint64_t rng(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

/* Group i's key: a bijection of 32-bit values (distinct groups, distinct keys). */
__device__ __host__ inline uint32_t key_of(uint32_t i)
{
    i ^= i >> 16;
    i *= 0x7feb352dU;
    i ^= i >> 15;
    i *= 0x846ca68bU;
    i ^= i >> 16;
    return i;
}

#endif /* SLUICE_BENCH_AGG_BENCH_UTIL_H */
