/* The runtime's widening kernel: a column uploaded in its narrow form (struct sl__narrow,
 * runtime/internal.h: unsigned offsets from the column's minimum, in steps of `step`, in
 * 1, 2, 3 or 4 bytes) is written back in its own width, on the device, right after the
 * copy (gpu_worker.c). It is the runtime's own code, as the image probe is: the runtime
 * calls no kernel of kernels/ (docs/ARCHITECTURE.md). */
#include <stdint.h>

#include <cuda_runtime_api.h>

/* Narrow value i: NB bytes, little endian (3: three byte loads). */
template <int NB>
static __device__ __forceinline__ uint64_t load(const uint8_t *in, int64_t i)
{
    if (NB == 1)
        return in[i];
    if (NB == 2)
        return reinterpret_cast<const uint16_t *>(in)[i];
    if (NB == 4)
        return reinterpret_cast<const uint32_t *>(in)[i];
    const uint8_t *p = in + 3 * i;
    return p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16;
}

template <typename W, int NB>
static __global__ void widen_kernel(W *out, const uint8_t *in, uint64_t base, uint64_t step,
                                    int64_t n)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = (W)(base + load<NB>(in, i) * step); /* wraps as the wide type, as the encoder */
}

template <typename W, int NB>
static cudaError_t launch(void *out, const void *in, int64_t base, uint64_t step, int64_t n,
                          cudaStream_t st)
{
    const int threads = 256;
    int64_t blocks = (n + threads * 4 - 1) / (threads * 4); /* 4 values a thread */
    if (blocks > 8192)
        blocks = 8192; /* grid-stride beyond: a few waves of any GPU's SMs */
    widen_kernel<W, NB><<<(unsigned)blocks, threads, 0, st>>>(
        static_cast<W *>(out), static_cast<const uint8_t *>(in), (uint64_t)base, step, n);
    return cudaGetLastError();
}

extern "C" cudaError_t sl__cuda_widen(void *d_out, int wide, const void *d_in, int width,
                                      int64_t base, uint64_t step, int64_t n, cudaStream_t st)
{
    if (n <= 0)
        return cudaSuccess;
    switch (wide * 8 + width) {
    case 2 * 8 + 1: return launch<uint16_t, 1>(d_out, d_in, base, step, n, st);
    case 4 * 8 + 1: return launch<uint32_t, 1>(d_out, d_in, base, step, n, st);
    case 4 * 8 + 2: return launch<uint32_t, 2>(d_out, d_in, base, step, n, st);
    case 4 * 8 + 3: return launch<uint32_t, 3>(d_out, d_in, base, step, n, st);
    case 8 * 8 + 1: return launch<uint64_t, 1>(d_out, d_in, base, step, n, st);
    case 8 * 8 + 2: return launch<uint64_t, 2>(d_out, d_in, base, step, n, st);
    case 8 * 8 + 3: return launch<uint64_t, 3>(d_out, d_in, base, step, n, st);
    case 8 * 8 + 4: return launch<uint64_t, 4>(d_out, d_in, base, step, n, st);
    default: return cudaErrorInvalidValue;
    }
}
