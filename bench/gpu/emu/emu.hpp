/* CPU emulation of the CUDA C++ the aggregate kernels use: one block at a time, each of
 * its threads a real std::thread (so __syncthreads, spin-waits and atomics behave as on a
 * GPU, minus warps), __shared__ variables as statics, atomics as GCC builtins. Included
 * first by the sources that bench/gpu/emu/run_emu.sh rewrites (<<<>>> -> emu_launch). */
#ifndef SLUICE_EMU_HPP
#define SLUICE_EMU_HPP
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>

#include <thread>
#include <vector>

#include "cuda_runtime_api.h"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(x) __attribute__((aligned(x)))

struct emu_dim { unsigned x, y, z; };
extern thread_local emu_dim threadIdx, blockIdx;
extern emu_dim blockDim, gridDim;
extern pthread_barrier_t emu_barrier;
extern char *emu_smem;

inline void __syncthreads() { pthread_barrier_wait(&emu_barrier); }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __nanosleep(unsigned) { sched_yield(); }
inline long long __double_as_longlong(double d) { long long x; memcpy(&x, &d, 8); return x; }
inline double __longlong_as_double(long long x) { double d; memcpy(&d, &x, 8); return d; }

template <class T, class U> inline T atomicAdd(T *p, U v) { return __atomic_fetch_add(p, (T)v, __ATOMIC_SEQ_CST); }
template <class T, class U, class V> inline T atomicCAS(T *p, U cmp_, V v)
{
    T cmp = (T)cmp_;
    __atomic_compare_exchange_n(p, &cmp, (T)v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return cmp;
}
template <class T, class U> inline T atomicExch(T *p, U v) { return __atomic_exchange_n(p, (T)v, __ATOMIC_SEQ_CST); }
template <class T, class U> inline T atomicOr(T *p, U v) { return __atomic_fetch_or(p, (T)v, __ATOMIC_SEQ_CST); }
template <class T, class U> inline T atomicAnd(T *p, U v) { return __atomic_fetch_and(p, (T)v, __ATOMIC_SEQ_CST); }
template <class T> inline T atomicMin(T *p, T v)
{
    T o = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (v < o && !__atomic_compare_exchange_n(p, &o, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
    return o;
}
template <class T> inline T atomicMax(T *p, T v)
{
    T o = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (v > o && !__atomic_compare_exchange_n(p, &o, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
    return o;
}
inline double atomicAdd(double *p, double v)
{
    unsigned long long *q = (unsigned long long *)p, o = __atomic_load_n(q, __ATOMIC_SEQ_CST), n;
    do {
        n = (unsigned long long)__double_as_longlong(__longlong_as_double((long long)o) + v);
    } while (!__atomic_compare_exchange_n(q, &o, n, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
    return __longlong_as_double((long long)o);
}

template <class T> inline cudaError_t cudaMalloc(T **p, size_t b) { return cudaMalloc((void **)p, b); }

/* Runs f once per thread of each block, blocks one after another. */
template <class F> inline void emu_launch(long grid, long threads, size_t smem, cudaStream_t, F f)
{
    std::vector<char> buf(smem + 64, (char)0xA5); /* shared memory starts as garbage */
    emu_smem = (char *)(((uintptr_t)buf.data() + 63) & ~(uintptr_t)63);
    blockDim = {(unsigned)threads, 1, 1};
    gridDim = {(unsigned)grid, 1, 1};
    pthread_barrier_init(&emu_barrier, NULL, (unsigned)threads);
    for (long b = 0; b < grid; b++) {
        std::vector<std::thread> ts;
        for (long t = 0; t < threads; t++)
            ts.emplace_back([&, b, t] {
                threadIdx = {(unsigned)t, 0, 0};
                blockIdx = {(unsigned)b, 0, 0};
                f();
            });
        for (auto &t : ts)
            t.join();
    }
    pthread_barrier_destroy(&emu_barrier);
}

namespace cub {
struct DeviceScan {
    template <class I, class O>
    static cudaError_t ExclusiveSum(void *tmp, size_t &bytes, I in, O out, int n, cudaStream_t)
    {
        if (!tmp) {
            bytes = 16;
            return cudaSuccess;
        }
        long long s = 0;
        for (int i = 0; i < n; i++) {
            long long x = (long long)in[i];
            out[i] = s;
            s += x;
        }
        return cudaSuccess;
    }
};
} // namespace cub
#endif
