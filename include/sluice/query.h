/* Queries: one run of a plan on an engine.
 *
 * sl_query_create prepares a run; sl_query_run runs it to completion on the engine's
 * workers (the calling thread waits), or sl_query_start + sl_query_wait do the same
 * without blocking the caller in between. A query may be cancelled from any thread.
 * Several queries run at once on one engine.
 */
#ifndef SLUICE_QUERY_H
#define SLUICE_QUERY_H

#include <stdint.h>

#include "data.h"
#include "engine.h"
#include "plan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_query sl_query_t;

/* Creates a query of `plan` on `eng` and freezes the plan (it can no longer change, and
 * may back several queries at once). The query holds the plan: sl_plan_destroy may come
 * before sl_query_destroy, also while the query runs. The engine may be closed before the
 * query is destroyed (sl_engine_close cancels and detaches it; every later call on the
 * query but sl_query_destroy and the accessors of its error returns SL_ESTATE). Errors:
 * SL_ESTATE (the engine is being closed).
 * On success *out is the query, owned by the caller (sl_query_destroy). Errors:
 * SL_EINVAL (NULL argument, an empty plan), an operator's error lowering the plan,
 * SL_ENOMEM; the message is in sl_plan_errmsg or sl_last_errmsg. Thread-safe. Added in
 * 0.1. */
SL_API int sl_query_create(sl_engine_t *eng, sl_plan_t *plan, sl_query_t **out);
/* Frees a query and its results (tables handed out by sl_query_result keep their own
 * references); waits for it if it still runs, and for threads still inside
 * sl_query_wait on it to leave. NULL is allowed. Call it once, from one thread, after
 * every other call on q has been made (waits may still be in progress). Added in 0.1. */
SL_API void sl_query_destroy(sl_query_t *q);

/* Runs the query on the engine's workers and waits for it. Returns SL_OK or the
 * query's first error (details: sl_query_errmsg, sl_query_error); SL_ESTATE if it was
 * already started. A query runs once. Call from one thread. Added in 0.1. */
SL_API int sl_query_run(sl_query_t *q);
/* Starts the query and returns at once; sl_query_wait collects the outcome. Errors:
 * SL_ESTATE (already started, or its engine was closed), SL_ENOMEM. Call from one
 * thread. The engine option deadline_ms, if set, counts from here. Added in 0.1. */
SL_API int sl_query_start(sl_query_t *q);
/* Waits for a started query; returns what sl_query_run would (SL_ESTATE if it was not
 * started, or if its engine was closed before this call; a wait in progress when the
 * engine closes returns SL_ECANCELED). Several threads may wait at once. The progress
 * callback runs on a waiting thread while it waits. A query past its deadline_ms fails
 * with SL_ETIMEDOUT. Added in 0.1. */
SL_API int sl_query_wait(sl_query_t *q);
/* Asks a running query to stop; it then fails with SL_ECANCELED. Safe from any thread,
 * also on a query that has finished (then it does nothing). Cannot fail. Added in 0.1. */
SL_API void sl_query_cancel(sl_query_t *q);

/* Error details of a failed query. A growable struct (see engine.h): set `size` before
 * the call (SL_ERROR_INFO_INIT). `size` added in 0.3. */
struct sl_error_info {
    uint32_t size;          /* sizeof(struct sl_error_info), set by the caller */
    int code;               /* SL_E* */
    const char *message;    /* owned by the query */
    const char *op_name;    /* operator that failed, or "" */
    int device;             /* device index as in sl_engine_device_info (0 = the CPU, 1 +
                               k = the k-th GPU) of the failing task, or -1 when no task
                               failed (planning, cancellation, out of memory setting up) */
    int native_code;        /* for SL_EDEVICE: the cudaError_t of the failing CUDA call
                               when sluice's CUDA error path saw it, else 0 */
    /* members added after 0.3 go below this line */
};
#define SL_ERROR_INFO_INIT SL_SIZED_INIT(struct sl_error_info)
/* The message of the query's first error; "" if none (also for NULL). Owned by the
 * query, valid until its destruction. Read it after the query finished (sl_query_run
 * or sl_query_wait returned). Added in 0.1. */
SL_API const char *sl_query_errmsg(const sl_query_t *q);
/* Fills the first info->size bytes of *info with the details of the query's first
 * error (code SL_OK and device -1 if it has none); the strings are owned by the query
 * and valid until its destruction. Returns the query's error code (SL_OK if none), or
 * SL_EINVAL for a NULL argument or info->size 0. Call it after the query finished.
 * Added in 0.1; growable, and device/native_code filled, since 0.3. */
SL_API int sl_query_error(const sl_query_t *q, struct sl_error_info *info);

/* Progress of a running (or finished) query. A growable struct (see engine.h): set
 * `size` before sl_query_progress (SL_PROGRESS_INIT); the callback of
 * sl_query_on_progress gets the library's own size. `size` added in 0.3. */
struct sl_progress {
    uint32_t size;                     /* sizeof(struct sl_progress) */
    int64_t tasks_done, tasks_total;   /* tasks_total grows as work is discovered */
    int64_t bytes_done, bytes_total;
    int finished;
    /* members added after 0.3 go below this line */
};
#define SL_PROGRESS_INIT SL_SIZED_INIT(struct sl_progress)
/* Fills the first p->size bytes of *p with the query's progress now; the caller owns
 * *p. Errors: SL_EINVAL (NULL argument or p->size 0). Safe from any thread while the
 * query runs. Added in 0.1; returns int and is growable since 0.3 (it returned void). */
SL_API int sl_query_progress(const sl_query_t *q, struct sl_progress *p);
/* Calls cb roughly every interval_ms (0 = 100) while the query runs, from the thread
 * waiting in sl_query_run or sl_query_wait; cb must not keep the pointer (it is valid
 * during the call only). cb NULL turns it off. Set it
 * before sl_query_start. Errors: SL_EINVAL (NULL q or interval_ms < 0). Added in 0.1. */
SL_API int sl_query_on_progress(sl_query_t *q, void (*cb)(void *user, const struct sl_progress *),
                                void *user, int interval_ms);

/* A result of a finished query by the name given to sl_plan_output. The caller gets
 * its own reference to the table (sl_table_unref when done; it outlives the query).
 * Errors: SL_EINVAL (NULL argument), SL_ENOTFOUND (no output has that name), SL_ESTATE
 * (the query has not succeeded); *out is NULL then. Thread-safe once the query
 * finished. Added in 0.1. */
SL_API int sl_query_result(sl_query_t *q, const char *name, sl_table_t **out);

/* Records every task, copy and kernel of the query and writes them to `path` as
 * Chrome trace-event JSON (open it in Perfetto) when the query finishes. Call before
 * sl_query_start, from the thread that owns q; `path` is copied. The engine's
 * trace_path setting does the same for every query. Errors: SL_EINVAL (NULL argument),
 * SL_ESTATE (already started), SL_ENOMEM. Added in 0.1. */
SL_API int sl_query_trace(sl_query_t *q, const char *path);
/* The names a trace gives a GPU's lanes 0, 1 and 2 (its streams: "GPU 0 compute"), as
 * initializers of an array of strings; tools that read traces name lanes without a
 * thread_name record by them. Added in 0.3. */
#define SL_TRACE_GPU_STREAMS "h2d copies", "compute", "d2h copies"

/* What the engine will do with the query, as JSON: its pipelines (source, streaming
 * operators, sink), where each would run and why (forced, fallen back or estimated),
 * the rows and tasks expected, the estimated cost per task, the bytes to move and the
 * estimated peak memory against the budgets (since 0.2); once the query has run, also
 * what it measured and its profile (sl_query_profile_json). Fields: docs/CLI.md.
 * Valid until the next call on q or its destruction. Added in 0.1. */
SL_API const char *sl_query_explain_json(sl_query_t *q);

/* What the engine will do with the query, as a struct (the content of
 * sl_query_explain_json). Estimates are taken at the first call, from the operators'
 * cost functions (or the engine's measured history) and the row estimates of bind;
 * they are kept, so a call after the run shows the same estimates beside what the
 * run measured. Added in 0.2. */
struct sl_explain_stage {
    const char *op;              /* operator name */
    int node;                    /* plan node id, -1 for an output's collect; for a
                                    shared node's keeper (op "core.share") and readers
                                    ("core.share_read"), the shared node (since 0.3) */
    int on_gpu;                  /* 1 if this stage would run its CUDA implementation */
    double task_seconds;         /* estimated seconds per task; < 0 = unknown (no cost
                                    function, or it gave no estimate) */
};

struct sl_explain_pipeline {
    int id;
    int n_stages;                /* source, streaming operators, sink */
    const struct sl_explain_stage *stages;
    int sink_port;
    int device;                  /* -1 = the CPU, else the GPU ordinal */
    int gpu_capable;             /* 1 if some stage has a CUDA implementation */
    char why[160];               /* why it runs there: forced, fallen back, estimated */
    int64_t rows;                /* estimated source rows, -1 = unknown */
    int64_t morsel_rows;         /* rows per task on its device */
    int64_t tasks;               /* estimated tasks (morsels), -1 = unknown */
    double task_seconds;         /* estimated seconds per task, < 0 = unknown */
    int64_t bytes_h2d, bytes_d2h;/* estimated bytes moved between host and device */
    int64_t host_bytes, gpu_bytes; /* estimated peak memory of the pipeline */
    /* measured, once the query has run (measured = 1) */
    int measured;
    int device_measured;
    double ms_measured;          /* from its first task's start to its last's end */
    int64_t rows_measured, tasks_measured;
    /* co-processing (added in 0.3): split = 1 when morsels go to the CPU workers and GPU
     * `device` at once; gpu_share is the estimated share of rows on the GPU (< 0 =
     * unknown); the measured morsels each device ran */
    int split;
    double gpu_share;
    int64_t cpu_tasks_measured, gpu_tasks_measured;
    /* several GPU devices (added in 0.3, issue 20; docs/MULTI_GPU.md): for a pipeline
     * that sinks into a join or sort on a GPU of an engine with several GPU devices, what
     * that operator's finalize would do, judged as it judges (its shape, the option
     * multi_gpu, the 2^20-row rule of multi_gpu=auto, the devices' memory budgets):
     * multi_devices = the devices it would spread over (1: it stays on one; 0: no such
     * pipeline), multi_why = the reason it does not use all of them (the profile value
     * multi_device_fallback's numbers; 0: none), multi_why_text that reason in words;
     * multi_rows = the rows it spreads (both sides of a join), and the exchange's
     * estimate for them spread evenly: bytes on each link between two devices, bytes
     * into each device and the time (-1 = unknown: rows unknown or it stays on one) */
    int multi_devices;
    int multi_why;
    char multi_why_text[96];
    int64_t multi_rows;
    int64_t xchg_link_bytes, xchg_device_bytes;
    double xchg_seconds;
    /* (added in 0.3, issue 23) placement's estimate of the pipeline's time on the device
     * it goes to (CPU workers, GPU with its copies, or split), in ms, to set beside
     * ms_measured; < 0 = unknown (no history and no cost function) */
    double ms_estimated;
};

struct sl_explain {
    int n_threads, n_gpus;
    int64_t host_budget, gpu_budget; /* the engine's budgets (gpu: summed over GPUs) */
    int64_t host_peak, gpu_peak; /* estimated peak memory (gpu: summed over GPUs) */
    int n_pipelines;
    const struct sl_explain_pipeline *pipelines;
    /* measured, once the query has run (measured = 1) */
    int measured;
    int status;                  /* SL_OK or the query's error */
    double ms_measured;
    int64_t host_peak_measured, gpu_peak_measured; /* the engine's peaks (bytes) */
    int64_t bytes_h2d_measured, bytes_d2h_measured;
};

/* Fills *out with the query's explanation (owned by the query, valid until the next
 * sl_query_explain or sl_query_explain_json call on q, or its destruction). Errors:
 * SL_EINVAL (NULL argument), SL_ENOMEM. Added in 0.2. */
SL_API int sl_query_explain(sl_query_t *q, const struct sl_explain **out);

/* Profile of a finished query as JSON: per operator and phase, tasks, rows, busy time,
 * device, and when a sink's finalize ran ("finalize_us"); per pipeline where it ran and
 * when it started and ended ("start_us", "end_us"; microseconds from the query's start,
 * since 0.3); owned by the query and valid until its destruction. "{}" before the query
 * finished (and for NULL). Thread-safe once it finished. Added in 0.1. */
SL_API const char *sl_query_profile_json(sl_query_t *q);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_QUERY_H */
