/* Tests GPU discovery in every build, with or without CUDA or a GPU: the device count
 * never fails, probing a GPU that is not there fails cleanly with SL_ENODEV, and a
 * GPU that is there probes with sane properties. Nothing is leaked. The gate of a GPU
 * run (expected_gpu_is_usable): in a CUDA build on a machine with a GPU, every GPU must
 * be usable by this build and by an engine. */
#include <string.h>

#include "cuda/cuda_int.h"
#include "gpu_test.h"
#include "sl_test.h"

static void assert_no_leaks(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

SL_TEST(count_is_stable)
{
    int n = sl__cuda_device_count();
    assert_true(n >= 0);
    assert_int_equal(sl__cuda_device_count(), n);
    if (n == 0)
        assert_true(strlen(sl__cuda_absent_reason()) > 0);
    else
        assert_string_equal(sl__cuda_absent_reason(), "");
    printf("GPUs: %d %s\n", n, sl__cuda_absent_reason());
    assert_no_leaks();
}

SL_TEST(probe_absent_is_clean)
{
    int n = sl__cuda_device_count();
    struct sl_device_info info = SL_DEVICE_INFO_INIT;
    memset(&info, 0x5a, sizeof info);
    assert_int_equal(sl__cuda_probe(n, &info), SL_ENODEV);
    assert_int_equal(info.kind, SL_DEVICE_CUDA);
    assert_int_equal(info.ordinal, n);
    assert_int_equal(info.usable, 0);
    assert_int_equal(info.numa_node, -1);
    assert_string_equal(info.name, "");
    assert_non_null(strstr(sl_last_errmsg(), "no GPU"));
    assert_int_equal(sl__cuda_probe(-1, &info), SL_ENODEV);
    assert_no_leaks();
}

SL_TEST(probe_present)
{
    int n = sl__cuda_device_count();
    for (int i = 0; i < n; i++) {
        struct sl_device_info info = SL_DEVICE_INFO_INIT;
        SL_ASSERT_OK(sl__cuda_probe(i, &info));
        assert_int_equal(info.kind, SL_DEVICE_CUDA);
        assert_int_equal(info.ordinal, i);
        assert_true(strlen(info.name) > 0);
        assert_true(info.memory_bytes > 0);
        assert_true(info.n_cores > 0);
        assert_true(info.compute_major >= 5);
        assert_true(info.numa_node >= -1);
        assert_true(info.usable == 1 || strlen(info.reason) > 0);
        printf("GPU %d: %s, %lld MiB, %d SMs, sm_%d%d, NUMA %d, usable %d %s\n", i, info.name,
               (long long)(info.memory_bytes >> 20), info.n_cores, info.compute_major,
               info.compute_minor, info.numa_node, info.usable, info.reason);
    }
    assert_no_leaks();
}

/* The measurements benchmarks take their floors from: only GPU device indexes are
 * accepted, and each GPU the engine uses gives a positive copy bandwidth and peak. */
SL_TEST(device_copy_and_peak_measure_gpus_only)
{
    sl_engine_t *eng = NULL;
    SL_ASSERT_OK(sl_engine_open(&eng, NULL));
    double v = -1;
    assert_int_equal(sl_engine_measure_device_copy(eng, 0, 1 << 20, &v), SL_EINVAL);
    assert_true(v == 0);
    v = -1;
    assert_int_equal(sl_engine_device_fp32_peak(eng, 0, &v), SL_EINVAL);
    assert_true(v == 0);
    int n = sl_engine_device_count(eng);
    assert_int_equal(sl_engine_measure_device_copy(eng, n, 1 << 20, &v), SL_EINVAL);
    assert_int_equal(sl_engine_device_fp32_peak(eng, -1, &v), SL_EINVAL);
    int peer = -1;
    assert_int_equal(sl_engine_device_peer(eng, 0, n - 1, &peer), SL_EINVAL); /* the CPU */
    assert_int_equal(peer, 0);
    for (int i = 1; i < n; i++)
        for (int j = 1; j < n; j++) {
            SL_ASSERT_OK(sl_engine_device_peer(eng, i, j, &peer));
            assert_true(i == j ? peer == 1 : (peer == 0 || peer == 1));
        }
    for (int i = 1; i < n; i++) {
        struct sl_device_info info = SL_DEVICE_INFO_INIT;
        SL_ASSERT_OK(sl_engine_device_info(eng, i, &info));
        if (!info.usable)
            continue;
        assert_int_equal(sl_engine_measure_device_copy(eng, i, 0, &v), SL_EINVAL);
        double gbps = 0, gflops = 0;
        SL_ASSERT_OK(sl_engine_measure_device_copy(eng, i, 64 << 20, &gbps));
        SL_ASSERT_OK(sl_engine_device_fp32_peak(eng, i, &gflops));
        assert_true(gbps > 0 && gflops > 0);
        printf("GPU %d: device copy %.0f GB/s, fp32 peak %.0f GFLOP/s\n", info.ordinal, gbps,
               gflops);
    }
    sl_engine_close(eng);
    assert_no_leaks();
}

/* A wrong -Dgpu_arch or a driver older than the build's CUDA leaves the GPU "unusable":
 * every GPU case would skip, and the run would pass having tested nothing on the GPU.
 * Where a GPU is expected (gpu_test.h: a device node, or SLUICE_EXPECT_GPU=1), this
 * fails instead, with the reason the probe gives. */
SL_TEST(expected_gpu_is_usable)
{
    int n = sl__cuda_device_count();
    if (!gpu_expected()) {
        assert_true(n >= 0);
        SL_SKIP("no GPU expected on this machine");
    }
#ifndef SL_HAVE_CUDA
    SL_SKIP("a GPU is present but this build has no CUDA (its GPU run is a CUDA build's)");
#endif
    if (n == 0)
        fail_msg("a GPU is expected but the CUDA runtime finds none: %s",
                 sl__cuda_absent_reason());
    for (int i = 0; i < n; i++) {
        struct sl_device_info info = SL_DEVICE_INFO_INIT;
        SL_ASSERT_OK(sl__cuda_probe(i, &info));
        if (!info.usable)
            fail_msg("GPU %d (%s, sm_%d%d) is unusable by this build: %s", i, info.name,
                     info.compute_major, info.compute_minor, info.reason);
    }
    sl_engine_t *eng = NULL;
    SL_ASSERT_OK(sl_engine_open(&eng, NULL));
    assert_int_equal(sl_engine_device_count(eng), 1 + n);
    for (int i = 1; i <= n; i++) {
        struct sl_device_info info = SL_DEVICE_INFO_INIT;
        SL_ASSERT_OK(sl_engine_device_info(eng, i, &info));
        assert_int_equal(info.kind, SL_DEVICE_CUDA);
        assert_int_equal(info.usable, 1);
    }
    printf("%d usable GPU(s)\n", n);
    sl_engine_close(eng);
    assert_no_leaks();
}
