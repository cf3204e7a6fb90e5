/* Runtime services for GPU operators that stream through host memory (the out-of-core
 * join, issue 8). Internal: built-in CUDA operators only; CUDA builds only.
 *  - pinned spill memory: page-locked host blocks from a per-GPU pool that keeps them
 *    pinned between queries (pinning is slow: about 0.3 s per GiB), counted against the
 *    engine's host budget while in use; device-visible through UVA;
 *  - host batches charged to the host budget, from a CUDA task;
 *  - trace spans of copies and kernels that an operator timed with its own events;
 *  - extra streams for an operator's own copies: operators never create streams. */
#ifndef SLUICE_RUNTIME_GPU_EXT_H
#define SLUICE_RUNTIME_GPU_EXT_H

#include "internal.h"
#include "exchange.h"
#include "stage.h"

/* The one CUDA error path of the built-in CUDA operators: fails the task with
 * SL_EDEVICE for CUDA error `err` (a cudaError_t) of `what` at file:line, worded by the
 * runtime's own check (runtime/cuda/cuda_check.c: the error's name and text, and "the
 * device is lost" for a sticky error). Returns the code (< 0), or SL_OK for cudaSuccess.
 * An int, not a cudaError_t, so that this header needs no CUDA header. */
int sl__task_cuda_fail(sl_task_t *t, int err, const char *what, const char *file, int line);
#define SL_TASK_CUDA_FAIL(t, err, what)                                                            \
    sl__task_cuda_fail((t), (int)(err), (what), __FILE__, __LINE__)
/* The CUDA fault injector's hooks (runtime/cuda/cuda_int.h), declared here too: this
 * header includes no CUDA header. */
int sl__cuda_fault_before(const char *call);
int sl__cuda_fault_after(int e);
int sl__cuda_fault_injected_code(void);
/* The result of `expr` (a CUDA call or launcher) as an int (cudaSuccess is 0), for code
 * that checks it by hand: a checked call, which the CUDA fault injector may fail (before
 * the call is made or after, as runtime/cuda/cuda_int.h says). */
#define SL_TASK_CUDA_CALL(expr)                                                                    \
    (sl__cuda_fault_before(#expr) != 0 ? sl__cuda_fault_injected_code()                            \
                                       : sl__cuda_fault_after((int)(expr)))
/* Runs `expr` (a CUDA call or launcher, giving a cudaError_t) as SL_TASK_CUDA_CALL does;
 * on failure fails the task as above and returns the code from the enclosing function. */
#define SL_TASK_CUDA_TRY(t, expr, what)                                                            \
    do {                                                                                           \
        int sl_tce_ = SL_TASK_CUDA_CALL(expr);                                                     \
        if (sl_tce_ != 0)                                                                          \
            return SL_TASK_CUDA_FAIL((t), sl_tce_, (what));                                        \
    } while (0)

/* `bytes` of pinned host memory (rounded up to a power of two of at least 64 KiB, which
 * is what is charged); NULL after failing the query (SL_EBUDGET over the host budget). */
void *sl__task_pinned_alloc(sl_task_t *t, int64_t bytes);
void sl__task_pinned_free(sl_task_t *t, void *h, int64_t bytes);
/* 1 if `bytes` more (as charged) would fit the host budget now (a hint: other tasks
 * may charge in between). */
int sl__task_host_room(const sl_task_t *t, int64_t bytes);
/* Two pinned buffers that pageable input is copied into by several threads before its
 * upload: the driver stages pageable memory itself at a fraction of the link's speed.
 * Opened only when the host budget has room for both (else `stager` stays NULL and the
 * caller uploads from pageable memory); < 0 when pinning failed (the query failed). The
 * caller waits for a buffer's last upload before it refills it. */
struct sl__upload_stage {
    struct sl__stager *stager;
    char *buf[2];
    int64_t bytes;
    int n_pend;                         /* copies sl__upload_stage_defer recorded */
    struct sl__copy pend[STAGE_COPIES_MAX];
};
int sl__upload_stage_open(sl_task_t *t, struct sl__upload_stage *us, int64_t bytes);
void sl__upload_stage_close(sl_task_t *t, struct sl__upload_stage *us);
/* What to upload `bytes` of b at src from: src itself (not staging, or b not pageable),
 * or its copy at buf[slot] + at. */
const void *sl__upload_stage_src(const struct sl__upload_stage *us, int slot, int64_t at,
                                 const struct sl__buf *b, const void *src, size_t bytes);
/* The same, the copy recorded instead of made (made at once when STAGE_COPIES_MAX are
 * waiting): sl__upload_stage_flush makes the recorded copies in one job of the stager,
 * which the caller does before it enqueues the uploads that read them. A chunk of several
 * columns and batches is one job then, not one a column and batch (4 MiB copies of 1 MiB
 * pieces left most helpers idle). */
const void *sl__upload_stage_defer(struct sl__upload_stage *us, int slot, int64_t at,
                                   const struct sl__buf *b, const void *src, size_t bytes);
void sl__upload_stage_flush(struct sl__upload_stage *us);
/* Pinned memory that outlives its task (a result that CPU tasks read after the GPU
 * task ended, freed by fini_global): who frees it, from any thread, while the engine
 * is open. */
struct sl__pinned_owner {
    void *pool;   /* the GPU's spill pool */
    void *eng;
};
void sl__task_pinned_owner(sl_task_t *t, struct sl__pinned_owner *o);
void sl__pinned_owner_free(const struct sl__pinned_owner *o, void *h, int64_t bytes);
/* A batch in ordinary host memory (charged to the host budget), on any task. */
sl_batch_t *sl__task_new_host_batch(sl_task_t *t, const sl_schema_t *schema, int64_t rows);
/* The same for a GPU task's result, in the GPU's pinned result memory (option
 * gpu_result_pinned) when it has room: downloads may then fill it directly, and the
 * result keeps it (no copy out of staging blocks); *pinned tells which. Fixed-width
 * columns only in pinned memory; NULL (the task failed) on error. */
sl_batch_t *sl__task_new_result_batch(sl_task_t *t, const sl_schema_t *schema, int64_t rows,
                                      int *pinned);
/* Extra CUDA streams (cudaStream_t, non-blocking) on the task's GPU, for an operator that
 * overlaps its own copies with its kernels (the out-of-core join and sort): `n` of them,
 * 1 to SL__TASK_STREAMS_MAX, into out[]. They come from a pool the runtime keeps per GPU,
 * so a finalize that runs again does not pay for creating them. The task owns them until
 * sl__task_streams_put, which takes them back; the caller synchronizes them first (work
 * left on one would delay its next borrower). < 0 after failing the query (SL_ESTATE off
 * a GPU, SL_EINVAL for a bad n, SL_EDEVICE when CUDA fails); out[] is all NULL then. */
#define SL__TASK_STREAMS_MAX 4
int sl__task_streams_get(sl_task_t *t, int n, void **out);
/* Gives back streams from sl__task_streams_get (NULL entries are skipped) and clears s[]. */
void sl__task_streams_put(sl_task_t *t, int n, void **s);
/* Timing events (cudaEvent_t with timing, for cudaEventElapsedTime) on the task's GPU,
 * for an operator that times its phases: `n` of them (1 to SL__TASK_EVENTS_MAX) into
 * out[], from a pool the runtime keeps per GPU, so that a finalize does not create and
 * destroy its events each time (ten CUDA calls of every GPU sort). The task owns them
 * until sl__task_events_put. < 0 when they cannot be had (off a GPU, CUDA failed; the
 * query is not failed: the caller goes without timing); out[] is all NULL then. */
#define SL__TASK_EVENTS_MAX 8
int sl__task_events_get(sl_task_t *t, int n, void **out);
/* Gives back events from sl__task_events_get (NULL entries are skipped), clears ev[]. An
 * event may be given back with work recorded on it: its next borrower records it again. */
void sl__task_events_put(sl_task_t *t, int n, void **ev);
/* The narrow copy (struct sl__narrow, internal.h) of rows [first, first + n) of host
 * buffer b holding `wide`-byte values, when it has one covering them and the task's
 * option debug_gpu_wide_upload is off; else NULL. An operator that uploads such a column
 * itself copies the narrow values (nw->width bytes each, from
 * nw->buf->ptr + (first - nw->first) * nw->width) and widens them on the GPU with
 * sl__task_widen: the runtime's step of moving a pinned table's data (docs/TPCH.md
 * "Narrow uploads"). */
const struct sl__narrow *sl__task_narrow_of(sl_task_t *t, const struct sl__buf *b, int wide,
                                            int64_t first, int64_t n);
/* Writes the n narrow values at d_in (nw's form) as nw->wide-byte values to d_out, on
 * `stream` (a cudaStream_t of the task's GPU). < 0 after failing the task. */
int sl__task_widen(sl_task_t *t, void *d_out, const struct sl__narrow *nw, const void *d_in,
                   int64_t n, void *stream);
/* 1 when the query writes a trace. */
int sl__task_tracing(const sl_task_t *t);
/* Adds a span between two completed timing events (cudaEvent_t) of the task's GPU.
 * kind: 1 h2d copy, 2 d2h copy, 3 kernel (enum sl__trace_kind); lane: the trace lane. */
void sl__task_trace_gpu(sl_task_t *t, const char *name, int kind, int lane, void *ev0,
                        void *ev1, int64_t bytes, int64_t rows);

/* ---- The engine's devices for multi-device operations (docs/MULTI_GPU.md) ----
 * Every GPU the engine uses, logical devices (split_gpu) included, with two streams of
 * its own each (work, and the copies it sends), memory from its budget (its pool) and the device exchange among them
 * (exchange.h; name "device"). Opened outside the GPU workers (by an operator's
 * finalize or a test), used from any threads, closed when done. */
#define SL__MDEV_MAX 16
struct sl__gpu;
struct sl__mdev {
    int n;                             /* devices */
    int ordinal[SL__MDEV_MAX];         /* CUDA ordinal of each (logical ones repeat) */
    struct sl__gpu *gpu[SL__MDEV_MAX];
    void *stream[SL__MDEV_MAX];        /* cudaStream_t, one per device, owned here */
    void *copy[SL__MDEV_MAX];          /* cudaStream_t, a second one per device, owned
                                        * here: the copies it sends while its stream
                                        * works on (the pipelined exchange) */
    sl_xchg_transport xchg;
};
/* SL_ENODEV when the engine has no GPU (or the build no CUDA); SL_EINVAL for more than
 * SL__MDEV_MAX devices. */
int sl__mdev_open(sl_engine_t *eng, struct sl__mdev *m);
/* The same over some of the engine's devices: use[0..k), indices into its GPUs. */
int sl__mdev_open_some(sl_engine_t *eng, const int *use, int k, struct sl__mdev *m);
void sl__mdev_close(struct sl__mdev *m);
/* Device memory of device d, ordered on its stream; bytes == 0 gives NULL. */
int sl__mdev_alloc(struct sl__mdev *m, int d, int64_t bytes, void **out);
void sl__mdev_free(struct sl__mdev *m, int d, void *p, int64_t bytes);
/* Makes device d current on the calling thread. */
int sl__mdev_use(const struct sl__mdev *m, int d);
/* Waits for device d's stream. */
int sl__mdev_sync(const struct sl__mdev *m, int d);
/* Bytes left under device d's memory budget (a hint: other tasks allocate too). */
int64_t sl__mdev_room(const struct sl__mdev *m, int d);
/* Devices use[0..k) (indices as sl__task_device_rooms's) of the engine running t's
 * query (sl__mdev_open_some), for an operator's CUDA finalize that spreads its work
 * over them; *self = the index of t's own GPU among them (-1 when t runs on none). The
 * caller closes m and makes its GPU current again. */
int sl__task_mdev_open(sl_task_t *t, const int *use, int k, struct sl__mdev *m, int *self);
/* Bytes left under the memory budget of each GPU device of t's engine (room[0..n), n =
 * sl__task_n_devices, at most max) and *self, the index of t's GPU (-1: none). Returns
 * n. A hint: other tasks may allocate in between. */
int sl__task_device_rooms(const sl_task_t *t, int64_t *room, int max, int *self);
/* GPU devices of the engine running t's query (logical devices count; 0: none). */
int sl__task_n_devices(const sl_task_t *t);

#endif /* SLUICE_RUNTIME_GPU_EXT_H */
