/* Tests the runtime's GPU layer on a real GPU (cases skip without one): the test
 * kernels against a CPU reference through pooled device memory, pinned staging and
 * non-blocking streams; the device pool's budget and the pinned pool's cap; and
 * injected CUDA failures, which must come back as SL_EDEVICE naming the CUDA error and
 * leave everything usable. Every case ends with host and pool counters at zero.
 *
 * Run on a GPU machine: meson test -C <build> --suite gpu, or bench/device_run.sh,
 * which adds compute-sanitizer memcheck. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda/cuda_int.h"
#include "gpu_test.h"
#include "sl_test.h"
#include "sluice_k/testops.h"

static void assert_no_leaks(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

static void assert_pool_empty(struct sl__dpool *dp)
{
    struct sl__dpool_stats st;
    sl__dpool_stats(dp, &st);
    assert_int_equal(st.in_use_bytes, 0);
    assert_int_equal(st.live_allocs, 0);
}

/* xorshift64*: the same numbers on every run. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

static const int64_t sizes[] = {0, 1, 1000, (1 << 20) + 3};
#define N_SIZES ((int)(sizeof sizes / sizeof sizes[0]))

/* Everything one GPU case needs: two streams, a device pool and a pinned pool. */
struct rig {
    cudaStream_t s[2];
    struct sl__dpool *dp;
    struct sl__pinned *pp;
};

static int rig_open(struct rig *r, int64_t gpu_limit, int64_t pinned_cap)
{
    memset(r, 0, sizeof *r);
    int rc = sl__cuda_streams_create(0, 2, r->s);
    if (rc == SL_OK)
        rc = sl__dpool_create(&r->dp, 0, gpu_limit);
    if (rc == SL_OK)
        rc = sl__pinned_create(&r->pp, pinned_cap);
    return rc;
}

static void rig_close(struct rig *r)
{
    if (r->dp) {
        assert_pool_empty(r->dp);
        SL_ASSERT_OK(sl__dpool_destroy(r->dp));
    }
    if (r->pp) {
        struct sl__pinned_stats st;
        sl__pinned_stats(r->pp, &st);
        assert_int_equal(st.in_use_bytes, 0);
        SL_ASSERT_OK(sl__pinned_destroy(r->pp));
    }
    SL_ASSERT_OK(sl__cuda_streams_destroy(2, r->s));
}

/* Runs affine then sum on n random values through pinned staging; compares with the
 * CPU. Returns the first failing sluice code (for the fault loop) or SL_OK; a wrong
 * result fails the test. Everything allocated is freed on every path. */
static int affine_and_sum(struct rig *r, int64_t n, uint64_t seed)
{
    const int64_t bytes = n * (int64_t)sizeof(int64_t);
    int64_t *h_in = NULL, *h_out = NULL, *d_in = NULL, *d_out = NULL;
    unsigned long long *d_sum = NULL, *h_sum = NULL;
    cudaEvent_t ev = NULL;
    int rc;

    if ((rc = sl__pinned_alloc(r->pp, bytes, (void **)&h_in)) < 0 ||
        (rc = sl__pinned_alloc(r->pp, bytes, (void **)&h_out)) < 0 ||
        (rc = sl__pinned_alloc(r->pp, sizeof *h_sum, (void **)&h_sum)) < 0 ||
        (rc = sl__dpool_alloc_async(r->dp, bytes, r->s[0], (void **)&d_in)) < 0 ||
        (rc = sl__dpool_alloc_async(r->dp, bytes, r->s[0], (void **)&d_out)) < 0 ||
        (rc = sl__dpool_alloc_async(r->dp, sizeof *d_sum, r->s[0], (void **)&d_sum)) < 0 ||
        (rc = sl__cuda_event_create(0, false, &ev)) < 0)
        goto out;

    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++)
        h_in[i] = (int64_t)(rng_next(&s) >> 20) - ((int64_t)1 << 43);
    const int64_t a = (int64_t)(rng_next(&s) % 1000) - 500, b = (int64_t)rng_next(&s);

    /* s[0]: copy in, affine; s[1]: waits for it, sums the output, copies back. */
    if (bytes > 0) { /* no copies of nothing from NULL */
        SL__CUDA_CALL(rc, NULL, cudaMemcpyAsync(d_in, h_in, (size_t)bytes,
                                                cudaMemcpyHostToDevice, r->s[0]));
        if (rc < 0)
            goto out;
    }
    SL__CUDA_CALL(rc, NULL, sl_k_affine_i64(d_in, d_out, n, a, b, r->s[0]));
    if (rc < 0 || (rc = sl__cuda_event_record(ev, r->s[0])) < 0 ||
        (rc = sl__cuda_stream_wait_event(r->s[1], ev)) < 0)
        goto out;
    SL__CUDA_CALL(rc, NULL, cudaMemsetAsync(d_sum, 0, sizeof *d_sum, r->s[1]));
    if (rc < 0)
        goto out;
    SL__CUDA_CALL(rc, NULL, sl_k_sum_i64(d_out, n, d_sum, r->s[1]));
    if (rc < 0)
        goto out;
    if (bytes > 0) {
        SL__CUDA_CALL(rc, NULL, cudaMemcpyAsync(h_out, d_out, (size_t)bytes,
                                                cudaMemcpyDeviceToHost, r->s[1]));
        if (rc < 0)
            goto out;
    }
    SL__CUDA_CALL(rc, NULL, cudaMemcpyAsync(h_sum, d_sum, sizeof *h_sum,
                                            cudaMemcpyDeviceToHost, r->s[1]));
    if (rc < 0 || (rc = sl__cuda_stream_sync(r->s[1])) < 0)
        goto out;
    if ((rc = sl__cuda_event_query(ev)) < 0)
        goto out;
    assert_int_equal(rc, 1); /* s[1] waited for ev, so it has completed */
    rc = SL_OK;

    uint64_t sum = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t want = (int64_t)((uint64_t)a * (uint64_t)h_in[i] + (uint64_t)b);
        if (h_out[i] != want)
            fail_msg("n=%lld: out[%lld] = %lld, want %lld", (long long)n, (long long)i,
                     (long long)h_out[i], (long long)want);
        sum += (uint64_t)want;
    }
    assert_int_equal(*h_sum, sum);
out:
    /* Teardown: TEARDOWN_CALLS checked calls. Both streams drain first, so nothing
     * queued can still touch the memory when it is freed or reused. */
    (void)sl__cuda_stream_sync(r->s[0]);
    (void)sl__cuda_stream_sync(r->s[1]);
    (void)sl__cuda_event_destroy(ev);
    (void)sl__dpool_free_async(r->dp, d_in, bytes, r->s[0]);
    (void)sl__dpool_free_async(r->dp, d_out, bytes, r->s[0]);
    (void)sl__dpool_free_async(r->dp, d_sum, sizeof *d_sum, r->s[0]);
    (void)sl__cuda_stream_sync(r->s[0]);
    (void)sl__pinned_free(r->pp, h_in, bytes);
    (void)sl__pinned_free(r->pp, h_out, bytes);
    (void)sl__pinned_free(r->pp, h_sum, sizeof *h_sum);
    return rc;
}
#define TEARDOWN_CALLS 7

/* ---- cases that run with or without a GPU ---- */

static int n_fake_calls;
static cudaError_t fake_call(cudaError_t result)
{
    n_fake_calls++;
    return result;
}

SL_TEST(check_and_injector)
{
    struct sl__errslot slot = {0};
    int rc;
    SL__CUDA_CALL(rc, &slot, fake_call(cudaSuccess));
    assert_int_equal(rc, SL_OK);
    assert_int_equal(slot.code, 0);
    SL__CUDA_CALL(rc, &slot, fake_call(cudaErrorIllegalAddress));
    assert_int_equal(rc, SL_EDEVICE);
    assert_int_equal(slot.code, SL_EDEVICE);
    assert_non_null(strstr(slot.msg, "cudaErrorIllegalAddress"));
    assert_non_null(strstr(slot.msg, "fake_call(cudaErrorIllegalAddress)"));
    assert_non_null(strstr(slot.msg, "tests/gpu/test_gpu_runtime.c:"));
    assert_non_null(strstr(slot.msg, "the device is lost"));
    assert_true(sl__cuda_error_is_sticky(cudaErrorIllegalAddress));
    assert_false(sl__cuda_error_is_sticky(cudaErrorMemoryAllocation));

    /* The third call from now fails without being made; then injection is off. */
    n_fake_calls = 0;
    int64_t before = sl__cuda_checked_calls();
    sl__cuda_fail_after(2, cudaErrorLaunchOutOfResources);
    for (int i = 0; i < 5; i++) {
        SL__CUDA_CALL(rc, NULL, fake_call(cudaSuccess));
        assert_int_equal(rc, i == 2 ? SL_EDEVICE : SL_OK);
    }
    assert_int_equal(n_fake_calls, 4);
    assert_int_equal(sl__cuda_checked_calls() - before, 5);
    assert_non_null(strstr(sl_last_errmsg(), "cudaErrorLaunchOutOfResources"));

    char msg[64];
    assert_int_equal(sl__cuda_check(cudaErrorInvalidValue, "x", __FILE__, __LINE__, msg,
                                    sizeof msg), SL_EDEVICE);
    assert_int_equal(strncmp(msg, "cudaErrorInvalidValue", 21), 0);
    assert_int_equal(sl__cuda_check(cudaSuccess, "x", __FILE__, __LINE__, msg, sizeof msg),
                     SL_OK);
}

static void CUDART_CB slow_host_fn(void *flag)
{
    usleep(50 * 1000);
    *(volatile int *)flag = 1;
}

/* Where SL__CUDA_RESULT fails a call: one that queues work (a memset) before it is made,
 * so the memory stays as it was; a wait after it is made, so the work it waits for is
 * done when the injected error comes back; once only. */
SL_TEST(injector_fails_work_before_and_waits_after)
{
    REQUIRE_GPU();
    cudaStream_t s;
    CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    uint32_t *d = NULL, h = 1;
    CU(cudaMalloc((void **)&d, sizeof *d));
    CU(cudaMemset(d, 0, sizeof *d));
    sl__cuda_fail_after(0, cudaErrorMemoryAllocation);
    assert_int_equal(SL__CUDA_RESULT(cudaMemsetAsync(d, 0xff, sizeof *d, s)),
                     cudaErrorMemoryAllocation);
    CU(cudaStreamSynchronize(s));
    CU(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    assert_int_equal(h, 0);

    volatile int done = 0;
    CU(cudaLaunchHostFunc(s, slow_host_fn, (void *)&done));
    sl__cuda_fail_after(0, cudaErrorMemoryAllocation);
    assert_int_equal(SL__CUDA_RESULT(cudaStreamSynchronize(s)), cudaErrorMemoryAllocation);
    assert_int_equal(done, 1);
    assert_int_equal(SL__CUDA_RESULT(cudaStreamSynchronize(s)), cudaSuccess);
    CU(cudaFree(d));
    CU(cudaStreamDestroy(s));
    assert_no_leaks();
}

/* Helper that returns from the case: SL_TEST bodies cannot share a skip otherwise. */
#define SKIP_IF_GPU()                                                                   \
    do {                                                                                \
        if (sl__cuda_device_count() > 0)                                                \
            SL_SKIP("a GPU is present");                                                \
    } while (0)

SL_TEST(no_gpu_fails_cleanly)
{
    SKIP_IF_GPU();
    struct sl__dpool *dp = (struct sl__dpool *)1;
    assert_int_equal(sl__dpool_create(&dp, 0, 1 << 20), SL_EDEVICE);
    assert_null(dp);
    cudaStream_t s[2] = {(cudaStream_t)1, (cudaStream_t)1};
    assert_int_equal(sl__cuda_streams_create(0, 2, s), SL_EDEVICE);
    assert_null(s[0]);
    assert_null(s[1]);
    struct sl__pinned *pp;
    SL_ASSERT_OK(sl__pinned_create(&pp, 1 << 20));
    void *h = (void *)1;
    assert_int_equal(sl__pinned_alloc(pp, 4096, &h), SL_EDEVICE);
    assert_null(h);
    assert_non_null(strstr(sl_last_errmsg(), "cudaHostAlloc"));
    SL_ASSERT_OK(sl__pinned_destroy(pp));
    assert_no_leaks();
}

/* ---- cases that need a GPU ---- */

SL_TEST(kernels_match_cpu)
{
    REQUIRE_GPU();
    struct rig r;
    SL_ASSERT_OK(rig_open(&r, (int64_t)1 << 30, (int64_t)1 << 30));
    for (int k = 0; k < N_SIZES; k++)
        SL_ASSERT_OK(affine_and_sum(&r, sizes[k], 0x9E3779B97F4A7C15ULL + (uint64_t)k));
    struct sl__dpool_stats st;
    sl__dpool_stats(r.dp, &st);
    assert_true(st.peak_bytes >= 2 * sizes[N_SIZES - 1] * 8);
    rig_close(&r);
    assert_no_leaks();
}

SL_TEST(launchers_reject_bad_sizes)
{
    REQUIRE_GPU();
    cudaStream_t s;
    SL_ASSERT_OK(sl__cuda_streams_create(0, 1, &s));
    assert_int_equal(sl_k_affine_i64(NULL, NULL, -1, 1, 0, s), cudaErrorInvalidValue);
    assert_int_equal(sl_k_sum_i64(NULL, -5, NULL, s), cudaErrorInvalidValue);
    assert_int_equal(sl_k_affine_i64(NULL, NULL, 0, 1, 0, s), cudaSuccess);
    assert_int_equal(sl__cuda_image_probe(), cudaSuccess);
    SL_ASSERT_OK(sl__cuda_stream_sync(s));
    assert_int_equal(sl__cuda_stream_query(s), 1);
    SL_ASSERT_OK(sl__cuda_streams_destroy(1, &s));
    assert_no_leaks();
}

SL_TEST(pool_budget)
{
    REQUIRE_GPU();
    const int64_t limit = 1 << 20;
    struct sl__dpool *dp;
    cudaStream_t s;
    SL_ASSERT_OK(sl__cuda_streams_create(0, 1, &s));
    SL_ASSERT_OK(sl__dpool_create(&dp, 0, limit));
    void *a, *b, *c;
    SL_ASSERT_OK(sl__dpool_alloc_async(dp, limit / 2, s, &a));
    assert_non_null(a);
    assert_int_equal(sl__dpool_alloc_async(dp, limit / 2 + 1, s, &b), SL_EBUDGET);
    assert_null(b);
    assert_non_null(strstr(sl_last_errmsg(), "budget"));
    SL_ASSERT_OK(sl__dpool_alloc_async(dp, limit / 2, s, &b)); /* exactly to the limit */
    assert_int_equal(sl__dpool_alloc_async(dp, 1, s, &c), SL_EBUDGET);
    SL_ASSERT_OK(sl__dpool_alloc_async(dp, 0, s, &c));
    assert_null(c);
    assert_int_equal(sl__dpool_alloc_async(dp, -1, s, &c), SL_EINVAL);
    int rc;
    SL__CUDA_CALL(rc, NULL, cudaMemsetAsync(a, 1, limit / 2, s)); /* the memory is real */
    SL_ASSERT_OK(rc);
    SL__CUDA_CALL(rc, NULL, cudaMemsetAsync(b, 2, limit / 2, s));
    SL_ASSERT_OK(rc);
    SL_ASSERT_OK(sl__dpool_free_async(dp, a, limit / 2, s));
    SL_ASSERT_OK(sl__dpool_free_async(dp, b, limit / 2, s));
    SL_ASSERT_OK(sl__dpool_free_async(dp, NULL, 0, s));
    SL_ASSERT_OK(sl__cuda_stream_sync(s));

    struct sl__dpool_stats st;
    sl__dpool_stats(dp, &st);
    assert_int_equal(st.in_use_bytes, 0);
    assert_int_equal(st.peak_bytes, limit);
    assert_int_equal(st.limit_bytes, limit);
    assert_int_equal(st.live_allocs, 0);
    assert_true(st.reserved_bytes >= limit); /* kept for reuse: release threshold */
    SL_ASSERT_OK(sl__dpool_trim(dp, 0));
    /* More than the whole budget at once: a budget error, never a CUDA one. */
    assert_int_equal(sl__dpool_alloc_async(dp, (int64_t)1 << 40, s, &c), SL_EBUDGET);
    assert_pool_empty(dp);
    SL_ASSERT_OK(sl__dpool_destroy(dp));
    SL_ASSERT_OK(sl__cuda_streams_destroy(1, &s));
    assert_no_leaks();
}

/* Destroying pools that still hand out memory is a caller bug reported as SL_EBUSY (the
 * device pool's memory goes back once freed; the pinned block stays pinned: freed here). */
SL_TEST(pools_destroyed_while_in_use_are_busy)
{
    REQUIRE_GPU();
    struct sl__dpool *dp;
    cudaStream_t s;
    SL_ASSERT_OK(sl__cuda_streams_create(0, 1, &s));
    SL_ASSERT_OK(sl__dpool_create(&dp, 0, 1 << 20));
    void *d;
    SL_ASSERT_OK(sl__dpool_alloc_async(dp, 4096, s, &d));
    assert_int_equal(sl__dpool_destroy(dp), SL_EBUSY);
    assert_non_null(strstr(sl_last_errmsg(), "allocations"));
    CU(cudaFreeAsync(d, s));
    SL_ASSERT_OK(sl__cuda_stream_sync(s));
    SL_ASSERT_OK(sl__cuda_streams_destroy(1, &s));

    struct sl__pinned *pp;
    SL_ASSERT_OK(sl__pinned_create(&pp, 1 << 20));
    void *h;
    SL_ASSERT_OK(sl__pinned_alloc(pp, 4096, &h));
    assert_int_equal(sl__pinned_destroy(pp), SL_EBUSY);
    assert_non_null(strstr(sl_last_errmsg(), "blocks"));
    CU(cudaFreeHost(h));
}

SL_TEST(pinned_cap)
{
    REQUIRE_GPU();
    struct sl__pinned *pp;
    SL_ASSERT_OK(sl__pinned_create(&pp, 256 << 10));
    void *a, *b, *c;
    SL_ASSERT_OK(sl__pinned_alloc(pp, 100 << 10, &a)); /* a 128 KiB block */
    SL_ASSERT_OK(sl__pinned_alloc(pp, 100 << 10, &b));
    memset(a, 1, 100 << 10);
    assert_int_equal(sl__pinned_alloc(pp, 1, &c), SL_EBUDGET);
    assert_null(c);
    assert_non_null(strstr(sl_last_errmsg(), "cap"));
    SL_ASSERT_OK(sl__pinned_free(pp, b, 100 << 10));
    SL_ASSERT_OK(sl__pinned_alloc(pp, 128 << 10, &c)); /* reuses b's block */
    assert_ptr_equal(c, b);
    SL_ASSERT_OK(sl__pinned_free(pp, a, 100 << 10));
    SL_ASSERT_OK(sl__pinned_free(pp, c, 128 << 10));
    struct sl__pinned_stats st;
    sl__pinned_stats(pp, &st);
    assert_int_equal(st.in_use_bytes, 0);
    assert_int_equal(st.reserved_bytes, 256 << 10); /* cached */
    assert_int_equal(st.peak_bytes, 256 << 10);
    SL_ASSERT_OK(sl__pinned_alloc(pp, 200 << 10, &a)); /* needs the cache released */
    sl__pinned_stats(pp, &st);
    assert_int_equal(st.reserved_bytes, 256 << 10);
    SL_ASSERT_OK(sl__pinned_free(pp, a, 200 << 10));
    SL_ASSERT_OK(sl__pinned_destroy(pp));
    assert_no_leaks();
}

SL_TEST(injected_launch_failure)
{
    REQUIRE_GPU();
    struct rig r;
    SL_ASSERT_OK(rig_open(&r, 1 << 20, 1 << 20));
    int64_t *d = NULL;
    SL_ASSERT_OK(sl__dpool_alloc_async(r.dp, 1000 * 8, r.s[0], (void **)&d));
    struct sl__errslot slot = {0};
    int rc;
    sl__cuda_fail_after(0, cudaErrorLaunchOutOfResources);
    SL__CUDA_CALL(rc, &slot, sl_k_affine_i64(d, d, 1000, 2, 1, r.s[0]));
    assert_int_equal(rc, SL_EDEVICE);
    assert_int_equal(slot.code, SL_EDEVICE);
    assert_non_null(strstr(slot.msg, "cudaErrorLaunchOutOfResources"));
    assert_non_null(strstr(slot.msg, "sl_k_affine_i64"));
    assert_non_null(strstr(slot.msg, "test_gpu_runtime.c:"));
    assert_string_equal(sl_last_errmsg(), slot.msg);
    /* Still usable: the real launch and everything else work. */
    SL__CUDA_CALL(rc, &slot, sl_k_affine_i64(d, d, 1000, 2, 1, r.s[0]));
    SL_ASSERT_OK(rc);
    SL_ASSERT_OK(sl__dpool_free_async(r.dp, d, 1000 * 8, r.s[0]));
    SL_ASSERT_OK(affine_and_sum(&r, 1000, 7));
    rig_close(&r);
    assert_no_leaks();
}

SL_TEST(injected_alloc_failure)
{
    REQUIRE_GPU();
    struct rig r;
    SL_ASSERT_OK(rig_open(&r, 1 << 20, 1 << 20));
    void *d = NULL;
    sl__cuda_fail_after(0, cudaErrorInvalidValue);
    assert_int_equal(sl__dpool_alloc_async(r.dp, 4096, r.s[0], &d), SL_EDEVICE);
    assert_null(d);
    assert_non_null(strstr(sl_last_errmsg(), "cudaErrorInvalidValue"));
    assert_pool_empty(r.dp);
    /* A device out of memory below the budget reads as "does not fit". */
    sl__cuda_fail_after(0, cudaErrorMemoryAllocation);
    assert_int_equal(sl__dpool_alloc_async(r.dp, 4096, r.s[0], &d), SL_EBUDGET);
    assert_non_null(strstr(sl_last_errmsg(), "cudaErrorMemoryAllocation"));
    assert_pool_empty(r.dp);
    sl__cuda_fail_after(0, cudaErrorInvalidValue);
    void *h = NULL;
    assert_int_equal(sl__pinned_alloc(r.pp, 4096, &h), SL_EDEVICE);
    assert_null(h);
    SL_ASSERT_OK(affine_and_sum(&r, 1000, 8));
    rig_close(&r);
    assert_no_leaks();
}

SL_TEST(injected_no_kernel_image)
{
    REQUIRE_GPU();
    /* Aim the fault at each checked call of the probe in turn; one of them is the
     * kernel-image probe, which must give usable = 0 with a reason, not an error. */
    int found = 0;
    for (int64_t i = 0; i < 16 && !found; i++) {
        struct sl_device_info info = SL_DEVICE_INFO_INIT;
        sl__cuda_fail_after(i, cudaErrorNoKernelImageForDevice);
        int rc = sl__cuda_probe(0, &info);
        if (rc == SL_OK && !info.usable) {
            found = 1;
            printf("reason: %s\n", info.reason);
            assert_non_null(strstr(info.reason, "running on CPU"));
            char sm[16];
            snprintf(sm, sizeof sm, "sm_%d%d", info.compute_major, info.compute_minor);
            assert_non_null(strstr(info.reason, sm));
        } else if (rc < 0) {
            assert_int_equal(rc, SL_EDEVICE);
            assert_non_null(strstr(sl_last_errmsg(), "cudaErrorNoKernelImageForDevice"));
        }
    }
    sl__cuda_fail_after(-1, 0);
    assert_true(found);
    struct sl_device_info info = SL_DEVICE_INFO_INIT;
    SL_ASSERT_OK(sl__cuda_probe(0, &info));
    assert_int_equal(info.usable, 1);
    assert_no_leaks();
}

/* Fails each checked CUDA call of a whole run in turn (SQLite's malloc tests): every
 * failure must surface as SL_EDEVICE naming the error, free everything, and leave the
 * GPU usable for the next run. Faults are aimed at the work, not at teardown, whose
 * failures can only leak. */
SL_TEST(fault_loop)
{
    REQUIRE_GPU();
    struct rig r;
    SL_ASSERT_OK(rig_open(&r, 1 << 24, 1 << 24));
    /* A first run fills the pinned cache, so later runs make the same calls. */
    SL_ASSERT_OK(affine_and_sum(&r, 5000, 1));
    int64_t before = sl__cuda_checked_calls();
    SL_ASSERT_OK(affine_and_sum(&r, 5000, 1));
    int64_t n_calls = sl__cuda_checked_calls() - before - TEARDOWN_CALLS;
    assert_true(n_calls > 5);
    int n_failed = 0;
    for (int64_t i = 0; i < n_calls; i++) {
        sl__cuda_fail_after(i, cudaErrorUnknown);
        int rc = affine_and_sum(&r, 5000, 1);
        sl__cuda_fail_after(-1, 0);
        if (rc != SL_EDEVICE)
            fail_msg("fault at call %lld of %lld: rc %d (%s)", (long long)i,
                     (long long)n_calls, rc, sl_last_errmsg());
        n_failed++;
        assert_non_null(strstr(sl_last_errmsg(), "cudaErrorUnknown"));
        assert_pool_empty(r.dp);
    }
    assert_true(n_failed > 5);
    SL_ASSERT_OK(affine_and_sum(&r, 5000, 2));
    rig_close(&r);
    assert_no_leaks();
}
