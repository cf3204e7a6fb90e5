/* Shared by the GPU tests: skip cleanly without a usable GPU (REQUIRE_GPU for kernel-level
 * tests, NEED_GPU for engine-level ones), and fail a case on any CUDA error with the call
 * that made it. */
#ifndef SLUICE_TESTS_GPU_TEST_H
#define SLUICE_TESTS_GPU_TEST_H

#include <stdio.h>

#include "cuda/cuda_int.h"
#include "sl_test.h"

static char skip_why[256] __attribute__((unused));

#define REQUIRE_GPU()                                                                   \
    do {                                                                                \
        if (sl__cuda_device_count() == 0) {                                             \
            snprintf(skip_why, sizeof skip_why, "no GPU: %s", sl__cuda_absent_reason()); \
            SL_SKIP(skip_why);                                                          \
        }                                                                               \
        struct sl_device_info di_ = SL_DEVICE_INFO_INIT;                               \
        SL_ASSERT_OK(sl__cuda_probe(0, &di_));                                          \
        if (!di_.usable) {                                                              \
            snprintf(skip_why, sizeof skip_why, "GPU 0 unusable: %s", di_.reason);      \
            SL_SKIP(skip_why);                                                          \
        }                                                                               \
        SL_ASSERT_OK(sl__cuda_set_device(0, NULL));                                     \
    } while (0)

/* Engine-level tests: skip without a GPU (the engine picks and sets it). */
#define NEED_GPU()                            \
    do {                                      \
        if (sl__cuda_device_count() == 0)     \
            SL_SKIP("no GPU");                \
    } while (0)

#define CU(x)                                                                           \
    do {                                                                                \
        cudaError_t e_ = (x);                                                           \
        if (e_ != cudaSuccess)                                                          \
            fail_msg("%s -> %s", #x, cudaGetErrorName(e_));                             \
    } while (0)

#endif /* SLUICE_TESTS_GPU_TEST_H */
