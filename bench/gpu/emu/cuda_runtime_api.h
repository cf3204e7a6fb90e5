/* A CPU stand-in for the CUDA runtime API (host memory, synchronous), only what the
 * aggregate kernels, their launchers, the host driver and gpu_agg_bench use. Lets the
 * GPU aggregate's logic be checked on a machine without a GPU (bench/gpu/emu/run_emu.sh);
 * it says nothing about speed or GPU-only failure modes. C and C++. */
#ifndef SLUICE_EMU_CUDA_RUNTIME_API_H
#define SLUICE_EMU_CUDA_RUNTIME_API_H
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef enum cudaError {
    cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidConfiguration = 9, cudaErrorUnknown = 999
} cudaError_t;
typedef void *cudaStream_t;
typedef struct emu_event { double t; } *cudaEvent_t;
typedef void *cudaMemPool_t;
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
                      cudaMemcpyDeviceToDevice, cudaMemcpyDefault };
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16,
                      cudaDevAttrMaxSharedMemoryPerBlockOptin = 97 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
enum cudaMemPoolAttr { cudaMemPoolAttrReleaseThreshold = 4 };
#define cudaStreamNonBlocking 1
struct cudaDeviceProp { char name[256]; };

static inline const char *cudaGetErrorName(cudaError_t e)
{
    return e == cudaSuccess ? "cudaSuccess" : e == cudaErrorInvalidValue ? "cudaErrorInvalidValue"
         : e == cudaErrorMemoryAllocation ? "cudaErrorMemoryAllocation"
         : e == cudaErrorInvalidConfiguration ? "cudaErrorInvalidConfiguration" : "cudaErrorUnknown";
}
static inline cudaError_t cudaGetLastError(void) { return cudaSuccess; }
static inline cudaError_t cudaGetDevice(int *d) { *d = 0; return cudaSuccess; }
static inline cudaError_t cudaGetDeviceCount(int *n) { *n = 1; return cudaSuccess; }
static inline cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int d)
{
    (void)d;
    *v = a == cudaDevAttrMultiProcessorCount ? 2 : 227 * 1024;
    return cudaSuccess;
}
static inline cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int d)
{
    (void)d;
    strcpy(p->name, "CPU emulation");
    return cudaSuccess;
}
static inline cudaError_t cudaFuncSetAttribute(const void *f, enum cudaFuncAttribute a, int v)
{
    (void)f, (void)a;
    return v > 227 * 1024 ? cudaErrorInvalidValue : cudaSuccess;
}
static inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *f,
                                                                      int threads, size_t smem)
{
    (void)f, (void)threads;
    *n = smem > 227 * 1024 ? 0 : smem > 113 * 1024 ? 1 : 2;
    return cudaSuccess;
}
static inline cudaError_t cudaMalloc(void **p, size_t b)
{
    *p = malloc(b ? b : 1);
    if (*p)
        memset(*p, 0xA5, b); /* device memory starts as garbage */
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
static inline cudaError_t cudaFree(void *p) { free(p); return cudaSuccess; }
static inline cudaError_t cudaMallocAsync(void **p, size_t b, cudaStream_t s) { (void)s; return cudaMalloc(p, b); }
static inline cudaError_t cudaFreeAsync(void *p, cudaStream_t s) { (void)s; free(p); return cudaSuccess; }
static inline cudaError_t cudaMemcpy(void *d, const void *s, size_t b, enum cudaMemcpyKind k)
{
    (void)k;
    memmove(d, s, b);
    return cudaSuccess;
}
static inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t b, enum cudaMemcpyKind k,
                                          cudaStream_t st)
{
    (void)st;
    return cudaMemcpy(d, s, b, k);
}
static inline cudaError_t cudaMemset(void *d, int v, size_t b) { memset(d, v, b); return cudaSuccess; }
static inline cudaError_t cudaMemsetAsync(void *d, int v, size_t b, cudaStream_t s)
{
    (void)s;
    return cudaMemset(d, v, b);
}
static inline cudaError_t cudaStreamSynchronize(cudaStream_t s) { (void)s; return cudaSuccess; }
static inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned f)
{
    (void)f;
    *s = (void *)1;
    return cudaSuccess;
}
static inline double emu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static inline cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    *e = (cudaEvent_t)calloc(1, sizeof **e);
    return cudaSuccess;
}
static inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { (void)s; e->t = emu_now(); return cudaSuccess; }
static inline cudaError_t cudaEventSynchronize(cudaEvent_t e) { (void)e; return cudaSuccess; }
static inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    *ms = (float)(b->t - a->t);
    return cudaSuccess;
}
static inline cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *p, int d) { (void)d; *p = 0; return cudaSuccess; }
static inline cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t p, enum cudaMemPoolAttr a, void *v)
{
    (void)p, (void)a, (void)v;
    return cudaSuccess;
}
#endif
