/* The runtime's own device code: one empty kernel whose attributes tell whether the code
 * built into libsluice can run on the current GPU. Every .cu of the library is compiled
 * with the same -gencode list (meson.build, -Dgpu_arch), so the answer for this kernel
 * is the answer for the operators' kernels; the runtime needs no kernel of theirs. */
#include <cuda_runtime_api.h>

#ifndef SL_GPU_ARCH
#error "SL_GPU_ARCH (the gpu_arch list) comes from runtime/cuda/meson.build"
#endif

static __global__ void image_probe_kernel(void) {}

extern "C" cudaError_t sl__cuda_image_probe(void)
{
    /* Loading the attributes forces the module for the current device: machine code
     * is picked if one matches, else the PTX is JIT-compiled, else this fails. */
    cudaFuncAttributes attr;
    return cudaFuncGetAttributes(&attr, reinterpret_cast<const void *>(image_probe_kernel));
}

extern "C" const char *sl__cuda_built_archs(void)
{
    return SL_GPU_ARCH;
}
