/* The runtime's internal GPU layer: device discovery and probing, CUDA error mapping
 * and fault injection, device memory pools, pinned staging memory, streams and events.
 * Never installed. See docs/CUDA.md.
 *
 * The first part is available in every build: a build without CUDA (cuda_stub.c)
 * reports no GPUs. The second part, under SL_HAVE_CUDA, uses CUDA types.
 *
 * Errors: every function that can fail returns an sl_status code and leaves its message
 * in the thread's last error (sl_last_errmsg); callers that own an error slot copy it
 * there. Every CUDA return code is checked; nothing here aborts or exits.
 */
#ifndef SLUICE_RUNTIME_CUDA_INT_H
#define SLUICE_RUNTIME_CUDA_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* ---------------- always available ---------------- */

/* Number of CUDA devices, 0 when there is no driver, no GPU, or no CUDA in this build.
 * Never fails loudly: the error that meant "no GPU" is kept for
 * sl__cuda_absent_reason. The first call loads the driver (cudart is linked
 * statically and opens libcuda.so.1 lazily); the answer is cached. Thread-safe. */
int sl__cuda_device_count(void);

/* Why sl__cuda_device_count() is 0, e.g. "no CUDA driver (cudaErrorInsufficientDriver:
 * ...)" or "built without CUDA"; "" when GPUs were found. Static storage. */
const char *sl__cuda_absent_reason(void);

/* Fills *info for GPU `ordinal` (kind SL_DEVICE_CUDA): name, memory, SM count, compute
 * capability, nearest NUMA node (-1 if unknown), and usable = 1, or usable = 0 with a
 * reason, e.g. when the built kernels have no image for this GPU. Makes the device
 * current for a moment (this creates its primary context) and restores the previous
 * one. SL_ENODEV if ordinal is out of range (info is zeroed then); SL_EDEVICE when
 * CUDA fails while asking (message in sl_last_errmsg). */
int sl__cuda_probe(int ordinal, struct sl_device_info *info);

/* *can = 1 when GPU a can access GPU b's memory (cudaDeviceCanAccessPeer), else 0.
 * Without CUDA: 0 and SL_ENODEV. */
int sl__cuda_peer_access(int a, int b, int *can);

/* Fault injector for tests (SQLite's test_malloc): after `n` more checked CUDA calls
 * succeed, the next one fails with CUDA error `err` (a cudaError_t value) without being
 * made. Single-shot; n < 0 disables. Counted globally, across threads. */
void sl__cuda_fail_after(int64_t n, int err);
/* Checked CUDA calls made so far (for fault loops: how many points to try). */
int64_t sl__cuda_checked_calls(void);

#if defined(SL_HAVE_CUDA)
#include <cuda_runtime_api.h>

/* ---------------- the runtime's device code (cuda_image.cu) ---------------- */

/* Whether the device code built into libsluice can run on the current device:
 * cudaSuccess, or why not (cudaErrorNoKernelImageForDevice, cudaErrorUnsupportedPtxVersion,
 * cudaErrorInsufficientDriver, ...). Never launches. */
cudaError_t sl__cuda_image_probe(void);
/* The gpu_arch list the library was built for, e.g. "80,90" (machine code for each, PTX
 * for the last). Static storage. */
const char *sl__cuda_built_archs(void);
/* (cuda_widen.cu) Writes n values of `wide` bytes (2, 4 or 8) to d_out from their narrow
 * form d_in (`width`-byte unsigned offsets from base in steps of `step`, width < wide:
 * struct sl__narrow), on stream st; the launch's error (cudaErrorInvalidValue for another
 * pair of widths). */
cudaError_t sl__cuda_widen(void *d_out, int wide, const void *d_in, int width, int64_t base,
                           uint64_t step, int64_t n, cudaStream_t st);

/* ---------------- errors (cuda_check.c) ---------------- */

/* Maps a CUDA result: cudaSuccess gives SL_OK; anything else gives SL_EDEVICE with
 * "cudaErrorX (text) in <what> at <file>:<line>" written to msg (if msg_len > 0) and
 * to the thread's last error, and the CUDA runtime's own last error cleared. Sticky
 * errors add "; the device is lost" (see sl__cuda_error_is_sticky). */
int sl__cuda_check(cudaError_t e, const char *what, const char *file, int line, char *msg,
                   size_t msg_len);
/* Like sl__cuda_check, but records into an error slot (slot may be NULL). */
int sl__cuda_check_slot(struct sl__errslot *slot, cudaError_t e, const char *what,
                        const char *file, int line);
/* The injected error for this checked call, or cudaSuccess to make the call. */
cudaError_t sl__cuda_fault(void);
/* Checked calls outside SL__CUDA_CALL (the GPU worker's, SL_TASK_CUDA_TRY's) go through
 * these two: sl__cuda_fault_before(call) before the call, with its text; when it gives
 * an error, that is the call's result and the call is not made. Otherwise the call is
 * made and its result passes through sl__cuda_fault_after(). Where the injector fires
 * depends on the call, so that an injected failure leaves what a real one would:
 * calls that queue work on memory or create something (copies, memsets, launches,
 * creations) fail before they are made, as a real failure queues nothing; calls that
 * wait or mark a point in a stream (synchronizations, event records, stream waits)
 * fail after they are made, so that no work is left in flight that the error path does
 * not expect (a real failure there is a sticky error, when the device is lost anyway). */
int sl__cuda_fault_before(const char *call);
/* Marks this thread's current call as one the injector does not touch (SL__CUDA_RELEASE). */
void sl__cuda_fault_skip(void);
int sl__cuda_fault_after(int e);
/* SL__CUDA_RESULT(expr): the result of CUDA call `expr` through the two above. */
#define SL__CUDA_RESULT(expr)                                                           \
    (sl__cuda_fault_before(#expr) != 0 ? sl__cuda_fault_injected()                      \
                                       : (cudaError_t)sl__cuda_fault_after((int)(expr)))
/* The error the injector gave this thread last (as an int: gpu_ext.h's). */
cudaError_t sl__cuda_fault_injected(void);
int sl__cuda_fault_injected_code(void);
/* True for errors that leave the context unusable (illegal address, launch failure,
 * ...): the scheduler must stop using the device. */
bool sl__cuda_error_is_sticky(cudaError_t e);

/* SL__CUDA_CALL(rc, slot, expr): makes the CUDA call `expr` (unless the fault injector
 * fires) and sets int `rc` to SL_OK or SL_EDEVICE, recording the error in `slot`
 * (struct sl__errslot *, may be NULL) and the thread's last error. For kernel launches,
 * `expr` is the launcher call: its cudaGetLastError() result is checked like any other.
 *
 *     int rc;
 *     SL__CUDA_CALL(rc, NULL, cudaStreamSynchronize(s));
 *     if (rc < 0)
 *         goto fail;
 */
#define SL__CUDA_CALL(rc, slot, expr)                                                   \
    do {                                                                                \
        cudaError_t sl_ce_ = sl__cuda_fault();                                          \
        if (sl_ce_ == cudaSuccess)                                                      \
            sl_ce_ = (expr);                                                            \
        (rc) = sl_ce_ == cudaSuccess                                                    \
                   ? SL_OK                                                              \
                   : sl__cuda_check_slot((slot), sl_ce_, #expr, __FILE__, __LINE__);    \
    } while (0)

/* SL__CUDA_RELEASE(rc, slot, expr): SL__CUDA_CALL for calls that give something back
 * (frees, destroys, unregisters). The fault injector never fails them: a real free does
 * not fail short of a lost device, and an injected one would leave the memory allocated
 * while the engine's accounting drops it (compute-sanitizer then reports it leaked). */
#define SL__CUDA_RELEASE(rc, slot, expr)                                                \
    do {                                                                                \
        sl__cuda_fault_skip();                                                          \
        cudaError_t sl_ce_ = (expr);                                                    \
        (rc) = sl_ce_ == cudaSuccess                                                    \
                   ? SL_OK                                                              \
                   : sl__cuda_check_slot((slot), sl_ce_, #expr, __FILE__, __LINE__);    \
    } while (0)

/* SL_CUDA_TRY(slot, expr): SL__CUDA_CALL that returns the code from the enclosing
 * function on failure. Use it only where nothing needs undoing. */
#define SL_CUDA_TRY(slot, expr)                                                         \
    do {                                                                                \
        int sl_try_rc_;                                                                 \
        SL__CUDA_CALL(sl_try_rc_, (slot), expr);                                        \
        if (sl_try_rc_ < 0)                                                             \
            return sl_try_rc_;                                                          \
    } while (0)

/* ---------------- devices, streams, events (cuda_device.c) ---------------- */

/* Makes `ordinal` the calling thread's current device; *prev (may be NULL) gets the
 * previous one, to restore with sl__cuda_set_device(prev, NULL). */
int sl__cuda_set_device(int ordinal, int *prev);

/* Creates n non-blocking streams (cudaStreamNonBlocking: no implicit sync with the
 * legacy default stream) on device `ordinal`; the calling thread's current device is
 * left as it was. On failure none is left created and out[] is all NULL. */
int sl__cuda_streams_create(int ordinal, int n, cudaStream_t *out);
/* Destroys n streams (NULL entries are skipped; pending work still completes) and sets
 * the entries to NULL. Returns the first error; destroys the others regardless. */
int sl__cuda_streams_destroy(int n, cudaStream_t *s);

/* Creates an event on device `ordinal`. timing = false adds cudaEventDisableTiming,
 * the cheap kind that completion tracking wants. */
int sl__cuda_event_create(int ordinal, bool timing, cudaEvent_t *out);
int sl__cuda_event_destroy(cudaEvent_t ev);
int sl__cuda_event_record(cudaEvent_t ev, cudaStream_t s);
/* 1 when all work captured by the event (or queued on the stream) has completed, 0
 * while some is pending (cudaErrorNotReady is not an error), < 0 on failure. */
int sl__cuda_event_query(cudaEvent_t ev);
int sl__cuda_stream_query(cudaStream_t s);
/* Makes future work on s wait for ev, without blocking the host. */
int sl__cuda_stream_wait_event(cudaStream_t s, cudaEvent_t ev);
/* Blocks until all work on s has completed (tests, teardown; never in workers). */
int sl__cuda_stream_sync(cudaStream_t s);

/* ---------------- device memory pool (cuda_dpool.c) ---------------- */

/* Stream-ordered device memory of one GPU, from a cudaMemPool that sluice owns (not
 * the device's default pool, which the embedder may use). The release threshold is
 * set to "never", so freed memory stays in the pool and is reused without going back
 * to the driver; sl__dpool_trim gives it back.
 *
 * The pool enforces a byte budget on the sum of live allocations (requested sizes):
 * an allocation that would pass it fails with SL_EBUDGET before CUDA is asked, and a
 * real device out-of-memory below the budget is reported as SL_EBUDGET too, so that
 * callers see one code for "does not fit" (and can switch to an out-of-core plan).
 * Thread-safe: counters are atomics, and CUDA's pool calls are thread-safe. */
struct sl__dpool {
    int device;
    cudaMemPool_t pool;
    int64_t limit_bytes;
    _Alignas(SL__CACHE_LINE) _Atomic int64_t in_use_bytes; /* live allocations' sizes */
    _Atomic int64_t peak_bytes;
    _Atomic int64_t live_allocs;
};

struct sl__dpool_stats {
    int64_t in_use_bytes, peak_bytes, limit_bytes, live_allocs;
    int64_t reserved_bytes; /* what the CUDA pool holds from the driver, incl. cached */
};

/* Creates a pool on GPU `ordinal` with a budget of limit_bytes (> 0). The struct comes
 * from sl__malloc; free it with sl__dpool_destroy. */
int sl__dpool_create(struct sl__dpool **out, int ordinal, int64_t limit_bytes);
/* Destroys the pool. Live allocations are a caller bug: SL_EBUSY is returned (and the
 * memory is released by CUDA once they are freed). NULL is allowed. Always frees p. */
int sl__dpool_destroy(struct sl__dpool *p);
/* Allocates `bytes` ordered on `stream`: the memory may be used by work queued on
 * stream after this call. bytes == 0 gives *d_out = NULL and SL_OK. On failure *d_out
 * is NULL and in_use is unchanged. */
int sl__dpool_alloc_async(struct sl__dpool *p, int64_t bytes, cudaStream_t stream,
                          void **d_out);
/* Frees d_ptr (from this pool, allocated with `bytes`) once work queued on `stream`
 * before this call has completed. NULL is allowed. The budget is credited at once:
 * the memory is reusable by later stream-ordered allocations. */
int sl__dpool_free_async(struct sl__dpool *p, void *d_ptr, int64_t bytes, cudaStream_t stream);
/* Releases cached memory above keep_bytes back to the driver. */
int sl__dpool_trim(struct sl__dpool *p, int64_t keep_bytes);
void sl__dpool_stats(const struct sl__dpool *p, struct sl__dpool_stats *st);
/* Bytes left under the budget (limit - in use, at least 0): two atomic reads, no driver
 * call (sl__dpool_stats also asks the driver what it reserved), for per-batch checks. */
int64_t sl__dpool_left(const struct sl__dpool *p);
/* Sets the peak to what is in use now (sl_engine_reset_peaks). */
void sl__dpool_reset_peak(struct sl__dpool *p);

/* ---------------- pinned host staging (cuda_pinned.c) ---------------- */

/* Page-locked host memory for copies that overlap compute, from cudaHostAlloc
 * (portable: pinned for every device). Blocks come in power-of-two sizes of at least
 * 64 KiB and are cached on free, since pinning is slow; the cap bounds the pinned
 * bytes held (in use + cached). When the cap would be passed, the cache is released
 * first; if that is not enough, SL_EBUDGET. Thread-safe (one mutex). */
struct sl__pinned;

struct sl__pinned_stats {
    int64_t in_use_bytes;   /* handed out, rounded to block sizes */
    int64_t peak_bytes;
    int64_t reserved_bytes; /* pinned: in use + cached */
    int64_t cap_bytes;
    int64_t live_allocs;
};

int sl__pinned_create(struct sl__pinned **out, int64_t cap_bytes);
/* Frees the cache. Blocks still handed out are a caller bug: SL_EBUSY, and they are
 * left pinned (freeing them under a user could corrupt a copy in flight). Always
 * frees p. NULL is allowed. */
int sl__pinned_destroy(struct sl__pinned *p);
/* bytes == 0 gives *h_out = NULL and SL_OK. */
int sl__pinned_alloc(struct sl__pinned *p, int64_t bytes, void **h_out);
/* Returns a block to the cache; `bytes` is the size asked for. NULL is allowed. The
 * caller makes sure no copy still uses it (e.g. after the copy's event completed). */
int sl__pinned_free(struct sl__pinned *p, void *h_ptr, int64_t bytes);
/* Gives every cached block back to the driver. */
int sl__pinned_trim(struct sl__pinned *p);
/* Blocks allocated from now on are also mapped for kernels (cudaHostAllocMapped; with
 * UVA their device address is the host address). */
void sl__pinned_set_mapped(struct sl__pinned *p);
void sl__pinned_stats(struct sl__pinned *p, struct sl__pinned_stats *st);

/* ---------------- pinned result memory (cuda_pinned_results.c) ---------------- */

/* Pinned blocks that downloaded results keep (no copy into pageable memory), under a
 * cap on the pinned bytes held (in use + cached for the next query). Reference counted
 * apart from its creator: each block holds a reference and may be freed from any
 * thread after the engine has closed. */
struct sl__pinned_results;

/* cap_bytes <= 0 gives *out = NULL (off) and SL_OK. */
int sl__pinned_results_create(struct sl__pinned_results **out, int64_t cap_bytes);
/* Drops the creator's reference; the blocks still in use keep the pool. NULL allowed. */
void sl__pinned_results_release(struct sl__pinned_results *r);
/* A pinned host buffer (SL__MEM_PINNED) of `bytes`; its last unref gives the block back.
 * SL_EBUDGET when r is NULL or the cap is reached (the caller falls back to copying),
 * SL_ENOMEM, SL_EDEVICE (cudaHostAlloc failed; message in sl_last_errmsg). */
int sl__pinned_results_buf(struct sl__pinned_results *r, int64_t bytes, struct sl__buf **out);
/* Whether b is a block of a pinned result pool. */
bool sl__pinned_results_owns(const struct sl__buf *b);
/* Zeros for NULL. */
void sl__pinned_results_stats(struct sl__pinned_results *r, struct sl__pinned_stats *st);

#endif /* SL_HAVE_CUDA */
#endif /* SLUICE_RUNTIME_CUDA_INT_H */
