/* Pinned result memory: the pinned blocks that results downloaded from a GPU keep, so
 * that a download lands where the result stays and is never copied again. Without it,
 * every downloaded block was copied into fresh pageable memory before it could take the
 * next download: the copy and its page faults, not the link, set the pace of
 * host-resident sorts and joins (H100 traces, 2026-11-26, bench/specs/sort.json).
 *
 * The blocks come from a pinned pool (cuda_pinned.c: power-of-two blocks, cached on
 * free, so the next query reuses them without pinning again) under the engine option
 * gpu_result_pinned. The pool is reference counted apart from the GPU that made it:
 * one reference for the GPU, one per live block. A result may outlive the query, the
 * engine and the GPU's worker (an exported Arrow array), and gives its block back from
 * whatever thread frees it; the last reference unpins the cached blocks. */
#include <stdatomic.h>

#include "cuda_int.h"

struct sl__pinned_results {
    _Atomic int64_t refs;
    struct sl__pinned *pool;
};

int sl__pinned_results_create(struct sl__pinned_results **out, int64_t cap_bytes)
{
    *out = NULL;
    if (cap_bytes <= 0) /* off: every result is copied out of the staging blocks */
        return SL_OK;
    struct sl__pinned_results *r = sl__calloc(1, sizeof *r);
    if (!r)
        return sl__set_last_error(SL_ENOMEM, "out of memory creating the pinned result pool");
    int rc = sl__pinned_create(&r->pool, cap_bytes);
    if (rc < 0) {
        sl__free(r, sizeof *r);
        return rc;
    }
    atomic_init(&r->refs, 1);
    *out = r;
    return SL_OK;
}

void sl__pinned_results_release(struct sl__pinned_results *r)
{
    /* acq_rel: the last holder sees every block's return to the pool before unpinning. */
    if (r && atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) == 1) {
        sl__pinned_destroy(r->pool);
        sl__free(r, sizeof *r);
    }
}

static void result_block_release(struct sl__buf *b)
{
    struct sl__pinned_results *r = b->owner;
    sl__pinned_free(r->pool, b->ptr, b->bytes);
    sl__pinned_results_release(r);
}

int sl__pinned_results_buf(struct sl__pinned_results *r, int64_t bytes, struct sl__buf **out)
{
    *out = NULL;
    if (!r)
        return SL_EBUDGET;
    bytes = bytes > 0 ? bytes : 1;
    void *h = NULL;
    int rc = sl__pinned_alloc(r->pool, bytes, &h);
    if (rc < 0)
        return rc;
    struct sl__buf *b = sl__buf_wrap(h, bytes, SL__MEM_PINNED, result_block_release, r);
    if (!b) {
        sl__pinned_free(r->pool, h, bytes);
        return sl__set_last_error(SL_ENOMEM, "out of memory");
    }
    atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed); /* the block's */
    *out = b;
    return SL_OK;
}

bool sl__pinned_results_owns(const struct sl__buf *b)
{
    return b && b->release == result_block_release;
}

void sl__pinned_results_stats(struct sl__pinned_results *r, struct sl__pinned_stats *st)
{
    if (r) {
        sl__pinned_stats(r->pool, st);
        return;
    }
    *st = (struct sl__pinned_stats){0};
}
