/* Pinned host staging memory: cudaHostAlloc'd blocks in power-of-two sizes, cached on
 * free because pinning pages is slow (milliseconds per call), under a cap on the
 * pinned bytes held. A cached block's first bytes hold the free list's next pointer. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cuda_int.h"

#define MIN_SHIFT 16 /* 64 KiB: smaller staging is not worth a pinned block */
#define N_CLASSES 40 /* up to 2^55 bytes */

struct sl__pinned {
    pthread_mutex_t lock;
    int64_t cap_bytes;
    int64_t in_use_bytes, peak_bytes, reserved_bytes, live_allocs; /* under lock */
    void *free_list[N_CLASSES];                                    /* under lock */
    unsigned flags;                                                /* cudaHostAlloc flags */
};

/* The size class of a request: the smallest c with 2^(MIN_SHIFT + c) >= bytes. */
static int size_class(int64_t bytes)
{
    int c = 0;
    while (c < N_CLASSES - 1 && ((int64_t)1 << (MIN_SHIFT + c)) < bytes)
        c++;
    return c;
}

static int64_t class_bytes(int c)
{
    return (int64_t)1 << (MIN_SHIFT + c);
}

int sl__pinned_create(struct sl__pinned **out, int64_t cap_bytes)
{
    *out = NULL;
    if (cap_bytes <= 0)
        return sl__set_last_error(SL_EINVAL, "pinned pool: cap must be > 0, got %lld",
                                  (long long)cap_bytes);
    struct sl__pinned *p = sl__calloc(1, sizeof *p);
    if (!p)
        return sl__set_last_error(SL_ENOMEM, "out of memory creating the pinned pool");
    if (pthread_mutex_init(&p->lock, NULL) != 0) {
        sl__free(p, sizeof *p);
        return sl__set_last_error(SL_ENOMEM, "pinned pool: cannot create its mutex");
    }
    p->cap_bytes = cap_bytes;
    *out = p;
    return SL_OK;
}

/* Unpins every cached block. Caller holds p->lock. Returns the first error. */
static int release_cache_locked(struct sl__pinned *p)
{
    int first = SL_OK;
    for (int c = 0; c < N_CLASSES; c++) {
        while (p->free_list[c]) {
            void *h = p->free_list[c];
            p->free_list[c] = *(void **)h;
            p->reserved_bytes -= class_bytes(c);
            int rc;
            SL__CUDA_RELEASE(rc, NULL, cudaFreeHost(h));
            if (rc < 0 && first == SL_OK)
                first = rc;
        }
    }
    return first;
}

int sl__pinned_destroy(struct sl__pinned *p)
{
    if (!p)
        return SL_OK;
    pthread_mutex_lock(&p->lock);
    int rc = release_cache_locked(p);
    if (rc == SL_OK && p->live_allocs != 0)
        rc = sl__set_last_error(SL_EBUSY, "pinned pool destroyed with %lld blocks (%lld bytes) "
                                "still in use", (long long)p->live_allocs,
                                (long long)p->in_use_bytes);
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_destroy(&p->lock);
    sl__free(p, sizeof *p);
    return rc;
}

int sl__pinned_alloc(struct sl__pinned *p, int64_t bytes, void **h_out)
{
    *h_out = NULL;
    if (bytes < 0 || bytes > class_bytes(N_CLASSES - 1))
        return sl__set_last_error(SL_EINVAL, "pinned pool: bad size %lld", (long long)bytes);
    if (bytes == 0)
        return SL_OK;
    int c = size_class(bytes);
    int64_t cb = class_bytes(c);
    int rc = SL_OK;
    pthread_mutex_lock(&p->lock);
    void *h = p->free_list[c];
    if (h) {
        p->free_list[c] = *(void **)h;
    } else {
        if (cb > p->cap_bytes - p->reserved_bytes)
            (void)release_cache_locked(p); /* a failed unpin only keeps memory pinned */
        if (cb > p->cap_bytes - p->reserved_bytes) {
            rc = sl__set_last_error(SL_EBUDGET, "pinned memory cap exceeded: asked for %lld "
                                    "bytes (a %lld-byte block) with %lld of %lld in use",
                                    (long long)bytes, (long long)cb,
                                    (long long)p->in_use_bytes, (long long)p->cap_bytes);
            goto out;
        }
        SL__CUDA_CALL(rc, NULL, cudaHostAlloc(&h, (size_t)cb, cudaHostAllocPortable | p->flags));
        if (rc < 0) {
            h = NULL;
            goto out;
        }
        p->reserved_bytes += cb;
    }
    p->in_use_bytes += cb;
    p->live_allocs++;
    if (p->in_use_bytes > p->peak_bytes)
        p->peak_bytes = p->in_use_bytes;
    *h_out = h;
out:
    pthread_mutex_unlock(&p->lock);
    return rc;
}

int sl__pinned_free(struct sl__pinned *p, void *h_ptr, int64_t bytes)
{
    if (!h_ptr)
        return SL_OK;
    int c = size_class(bytes);
    pthread_mutex_lock(&p->lock);
    *(void **)h_ptr = p->free_list[c];
    p->free_list[c] = h_ptr;
    p->in_use_bytes -= class_bytes(c);
    p->live_allocs--;
    pthread_mutex_unlock(&p->lock);
    return SL_OK;
}

void sl__pinned_set_mapped(struct sl__pinned *p)
{
    p->flags = cudaHostAllocMapped;
}

int sl__pinned_trim(struct sl__pinned *p)
{
    pthread_mutex_lock(&p->lock);
    int rc = release_cache_locked(p);
    pthread_mutex_unlock(&p->lock);
    return rc;
}

void sl__pinned_stats(struct sl__pinned *p, struct sl__pinned_stats *st)
{
    pthread_mutex_lock(&p->lock);
    st->in_use_bytes = p->in_use_bytes;
    st->peak_bytes = p->peak_bytes;
    st->reserved_bytes = p->reserved_bytes;
    st->cap_bytes = p->cap_bytes;
    st->live_allocs = p->live_allocs;
    pthread_mutex_unlock(&p->lock);
}
