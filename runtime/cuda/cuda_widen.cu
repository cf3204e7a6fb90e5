/* The runtime's widening kernel: a column uploaded in its narrow form (struct sl__narrow,
 * runtime/internal.h: unsigned offsets from the column's minimum in 1, 2 or 4 bytes) is
 * written back in its own width, on the device, right after the copy (gpu_worker.c). It
 * is the runtime's own code, as the image probe is: the runtime calls no kernel of
 * kernels/ (docs/ARCHITECTURE.md). */
#include <stdint.h>

#include <cuda_runtime_api.h>

template <typename W, typename N>
static __global__ void widen_kernel(W *out, const N *in, uint64_t base, int64_t n)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = (W)(base + (uint64_t)in[i]); /* wraps as the wide type, as the encoder */
}

template <typename W, typename N>
static cudaError_t launch(void *out, const void *in, int64_t base, int64_t n, cudaStream_t st)
{
    const int threads = 256;
    int64_t blocks = (n + threads * 4 - 1) / (threads * 4); /* 4 values a thread */
    if (blocks > 8192)
        blocks = 8192; /* grid-stride beyond: a few waves of any GPU's SMs */
    widen_kernel<W, N><<<(unsigned)blocks, threads, 0, st>>>(
        static_cast<W *>(out), static_cast<const N *>(in), (uint64_t)base, n);
    return cudaGetLastError();
}

extern "C" cudaError_t sl__cuda_widen(void *d_out, int wide, const void *d_in, int width,
                                      int64_t base, int64_t n, cudaStream_t st)
{
    if (n <= 0)
        return cudaSuccess;
    switch (wide * 8 + width) {
    case 2 * 8 + 1: return launch<uint16_t, uint8_t>(d_out, d_in, base, n, st);
    case 4 * 8 + 1: return launch<uint32_t, uint8_t>(d_out, d_in, base, n, st);
    case 4 * 8 + 2: return launch<uint32_t, uint16_t>(d_out, d_in, base, n, st);
    case 8 * 8 + 1: return launch<uint64_t, uint8_t>(d_out, d_in, base, n, st);
    case 8 * 8 + 2: return launch<uint64_t, uint16_t>(d_out, d_in, base, n, st);
    case 8 * 8 + 4: return launch<uint64_t, uint32_t>(d_out, d_in, base, n, st);
    default: return cudaErrorInvalidValue;
    }
}
