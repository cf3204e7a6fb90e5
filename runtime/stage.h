/* Parallel staging copies: a big memcpy split over a few helper threads (and the
 * caller). The GPU worker stages pageable host data into pinned buffers with it, so
 * that staging keeps up with the host->device link instead of limiting it. */
#ifndef SLUICE_RUNTIME_STAGE_H
#define SLUICE_RUNTIME_STAGE_H

#include <stddef.h>

struct sl__stager;

/* Starts n helper threads (n >= 0; 0 = the caller copies alone). */
int sl__stager_create(struct sl__stager **out, int n);
void sl__stager_destroy(struct sl__stager *s);
/* memcpy(dst, src, bytes), split in pieces over the helpers and the calling thread;
 * returns when all of it is copied. One copy at a time per stager (callers serialize:
 * each GPU worker has its own). */
void sl__stager_copy(struct sl__stager *s, void *dst, const void *src, size_t bytes);
/* The same for n copies at once (at most STAGE_COPIES_MAX; more are copied by the caller
 * alone): one job, so that several small copies (a chunk's columns from several batches)
 * keep every helper busy and pay one wake-up. */
#define STAGE_COPIES_MAX 64
struct sl__copy {
    void *dst;
    const void *src;
    size_t bytes;
};
void sl__stager_copy_v(struct sl__stager *s, const struct sl__copy *v, int n);

#endif /* SLUICE_RUNTIME_STAGE_H */
