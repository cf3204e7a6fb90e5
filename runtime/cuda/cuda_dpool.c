/* Device memory pools: stream-ordered allocation from a cudaMemPool per GPU, under a
 * byte budget that sluice enforces itself (cuda_int.h says why and how). */
#include <stdio.h>
#include <string.h>

#include "cuda_int.h"

int sl__dpool_create(struct sl__dpool **out, int ordinal, int64_t limit_bytes)
{
    *out = NULL;
    if (limit_bytes <= 0)
        return sl__set_last_error(SL_EINVAL, "GPU memory pool: limit must be > 0, got %lld",
                                  (long long)limit_bytes);
    struct sl__dpool *p = sl__calloc(1, sizeof *p);
    if (!p)
        return sl__set_last_error(SL_ENOMEM, "out of memory creating the GPU %d pool", ordinal);
    p->device = ordinal;
    p->limit_bytes = limit_bytes;

    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = ordinal;
    int rc;
    SL__CUDA_CALL(rc, NULL, cudaMemPoolCreate(&p->pool, &props));
    if (rc < 0)
        goto fail;
    /* Keep freed memory in the pool: giving it back to the driver at every
     * synchronization and asking again is what makes cudaMalloc slow. */
    uint64_t threshold = UINT64_MAX;
    SL__CUDA_CALL(rc, NULL,
                  cudaMemPoolSetAttribute(p->pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    if (rc < 0) {
        (void)cudaMemPoolDestroy(p->pool);
        goto fail;
    }
    *out = p;
    return SL_OK;
fail:
    sl__free(p, sizeof *p);
    return rc;
}

int sl__dpool_destroy(struct sl__dpool *p)
{
    if (!p)
        return SL_OK;
    int64_t live = atomic_load(&p->live_allocs);
    int rc;
    SL__CUDA_RELEASE(rc, NULL, cudaMemPoolDestroy(p->pool));
    if (rc == SL_OK && live != 0)
        rc = sl__set_last_error(SL_EBUSY, "GPU %d pool destroyed with %lld allocations "
                                "(%lld bytes) live", p->device, (long long)live,
                                (long long)atomic_load(&p->in_use_bytes));
    sl__free(p, sizeof *p);
    return rc;
}

/* Reserves `bytes` of the budget: in_use += bytes unless that passes the limit. */
static bool budget_take(struct sl__dpool *p, int64_t bytes, int64_t *in_use_now)
{
    int64_t cur = atomic_load_explicit(&p->in_use_bytes, memory_order_relaxed);
    do {
        *in_use_now = cur;
        if (bytes > p->limit_bytes - cur)
            return false;
    } while (!atomic_compare_exchange_weak_explicit(&p->in_use_bytes, &cur, cur + bytes,
                                                    memory_order_relaxed,
                                                    memory_order_relaxed));
    int64_t now = cur + bytes, peak = atomic_load_explicit(&p->peak_bytes, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak_explicit(
                             &p->peak_bytes, &peak, now, memory_order_relaxed,
                             memory_order_relaxed))
        ;
    return true;
}

int sl__dpool_alloc_async(struct sl__dpool *p, int64_t bytes, cudaStream_t stream,
                          void **d_out)
{
    *d_out = NULL;
    if (bytes < 0)
        return sl__set_last_error(SL_EINVAL, "GPU memory pool: negative size %lld",
                                  (long long)bytes);
    if (bytes == 0)
        return SL_OK;
    int64_t in_use;
    if (!budget_take(p, bytes, &in_use))
        return sl__set_last_error(SL_EBUDGET, "GPU %d memory budget (gpu_mem) exceeded: asked "
                                  "for %lld bytes with %lld of %lld in use", p->device,
                                  (long long)bytes, (long long)in_use,
                                  (long long)p->limit_bytes);
    cudaError_t e = sl__cuda_fault();
    if (e == cudaSuccess)
        e = cudaMallocFromPoolAsync(d_out, (size_t)bytes, p->pool, stream);
    if (e != cudaSuccess) {
        int rc = sl__cuda_check(e, "cudaMallocFromPoolAsync", __FILE__, __LINE__, NULL, 0);
        atomic_fetch_sub_explicit(&p->in_use_bytes, bytes, memory_order_relaxed);
        *d_out = NULL;
        /* A device that is full below our budget (other processes, fragmentation) is
         * the same "does not fit" to callers as the budget itself. */
        if (e == cudaErrorMemoryAllocation) {
            char cause[SL__MSG_MAX]; /* the thread's message is about to be rewritten */
            snprintf(cause, sizeof cause, "%s", sl_last_errmsg());
            return sl__set_last_error(SL_EBUDGET, "GPU %d out of memory below the budget "
                                      "(%lld bytes asked, %lld in use): %.300s", p->device,
                                      (long long)bytes, (long long)in_use, cause);
        }
        return rc;
    }
    atomic_fetch_add_explicit(&p->live_allocs, 1, memory_order_relaxed);
    return SL_OK;
}

int sl__dpool_free_async(struct sl__dpool *p, void *d_ptr, int64_t bytes, cudaStream_t stream)
{
    if (!d_ptr)
        return SL_OK;
    int rc;
    SL__CUDA_RELEASE(rc, NULL, cudaFreeAsync(d_ptr, stream));
    /* Credit the budget even on failure: the pointer is not the caller's any more, and
     * a failed free means a lost device, whose pool is going away. */
    atomic_fetch_sub_explicit(&p->in_use_bytes, bytes, memory_order_relaxed);
    atomic_fetch_sub_explicit(&p->live_allocs, 1, memory_order_relaxed);
    return rc;
}

int sl__dpool_trim(struct sl__dpool *p, int64_t keep_bytes)
{
    int rc;
    SL__CUDA_CALL(rc, NULL, cudaMemPoolTrimTo(p->pool, keep_bytes < 0 ? 0 : (size_t)keep_bytes));
    return rc;
}

void sl__dpool_reset_peak(struct sl__dpool *p)
{
    atomic_store(&p->peak_bytes, atomic_load(&p->in_use_bytes));
}

int64_t sl__dpool_left(const struct sl__dpool *p)
{
    int64_t left = p->limit_bytes - atomic_load(&p->in_use_bytes);
    return left > 0 ? left : 0;
}

void sl__dpool_stats(const struct sl__dpool *p, struct sl__dpool_stats *st)
{
    st->in_use_bytes = atomic_load(&p->in_use_bytes);
    st->peak_bytes = atomic_load(&p->peak_bytes);
    st->limit_bytes = p->limit_bytes;
    st->live_allocs = atomic_load(&p->live_allocs);
    uint64_t reserved = 0;
    /* A statistic, not a checked call: it never fails on a valid pool. */
    if (cudaMemPoolGetAttribute(p->pool, cudaMemPoolAttrReservedMemCurrent, &reserved) !=
        cudaSuccess) {
        (void)cudaGetLastError();
        reserved = 0;
    }
    st->reserved_bytes = (int64_t)reserved;
}
