/* Shared by the GPU tests: where a GPU is expected, a case that finds none usable fails;
 * elsewhere it skips (REQUIRE_GPU for kernel-level tests, NEED_GPU for engine-level ones).
 * Any CUDA error fails a case with the call that made it. */
#ifndef SLUICE_TESTS_GPU_TEST_H
#define SLUICE_TESTS_GPU_TEST_H

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_int.h"
#include "sl_test.h"

static char skip_why[256] __attribute__((unused));

/* A GPU is expected when SLUICE_EXPECT_GPU=1, or when the machine has an NVIDIA device
 * node (/dev/nvidia0, ...) and SLUICE_EXPECT_NO_GPU is not 1. Then "no usable GPU" (a
 * wrong -Dgpu_arch, an old driver) is a failure, so a GPU run cannot pass as skips. */
static inline int gpu_expected(void)
{
    const char *want = getenv("SLUICE_EXPECT_GPU");
    if (want && *want)
        return strcmp(want, "0") != 0;
    const char *none = getenv("SLUICE_EXPECT_NO_GPU");
    if (none && strcmp(none, "1") == 0)
        return 0;
    glob_t g;
    int found = glob("/dev/nvidia[0-9]*", 0, NULL, &g) == 0 && g.gl_pathc > 0;
    globfree(&g);
    return found;
}

/* Ends the case for want of a usable GPU: a failure where one is expected, else a skip. */
/* An engine (its config) of two CPU workers with this placement and GPU budget (0: the
 * default), as the test configuration allows. */
static inline void gpu_test_config(struct sl_engine_config *cfg, enum sl_placement pl,
                                   int64_t gpu_mem)
{
    sl_engine_config_init(cfg);
    cfg->n_threads = 2;
    cfg->placement = pl;
    cfg->gpu_mem_limit = gpu_mem;
}

static inline sl_engine_t *gpu_test_engine(enum sl_placement pl, int64_t gpu_mem)
{
    struct sl_engine_config cfg;
    gpu_test_config(&cfg, pl, gpu_mem);
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    return e;
}

#define GPU_MISSING(why)                                                                \
    do {                                                                                \
        if (gpu_expected())                                                             \
            fail_msg("a GPU is expected on this machine (device node or "               \
                     "SLUICE_EXPECT_GPU=1) but %s", (why));                             \
        SL_SKIP(why);                                                                   \
    } while (0)

#define REQUIRE_GPU()                                                                   \
    do {                                                                                \
        if (sl__cuda_device_count() == 0) {                                             \
            snprintf(skip_why, sizeof skip_why, "no GPU: %s", sl__cuda_absent_reason()); \
            GPU_MISSING(skip_why);                                                      \
        }                                                                               \
        struct sl_device_info di_ = SL_DEVICE_INFO_INIT;                               \
        SL_ASSERT_OK(sl__cuda_probe(0, &di_));                                          \
        if (!di_.usable) {                                                              \
            snprintf(skip_why, sizeof skip_why, "GPU 0 unusable: %s", di_.reason);      \
            GPU_MISSING(skip_why);                                                      \
        }                                                                               \
        SL_ASSERT_OK(sl__cuda_set_device(0, NULL));                                     \
    } while (0)

/* Engine-level tests: the engine picks the GPU, which must be usable; a crash prints a
 * backtrace. */
#define NEED_GPU()                \
    do {                          \
        sl_test_trap_crashes();   \
        REQUIRE_GPU();            \
    } while (0)

#define CU(x)                                                                           \
    do {                                                                                \
        cudaError_t e_ = (x);                                                           \
        if (e_ != cudaSuccess)                                                          \
            fail_msg("%s -> %s", #x, cudaGetErrorName(e_));                             \
    } while (0)

#endif /* SLUICE_TESTS_GPU_TEST_H */
