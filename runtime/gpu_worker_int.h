/* The GPU worker's private structures, shared by gpu_worker.c (tasks, streams, copies)
 * and gpu_data.c (device memory and batch movement for operators). CUDA builds only. */
#ifndef SLUICE_RUNTIME_GPU_WORKER_INT_H
#define SLUICE_RUNTIME_GPU_WORKER_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include <cuda_runtime_api.h>

#include "cuda/cuda_int.h"
#include "gpu_int.h"

#define MAX_STAGING 64
/* Idle borrowed streams a GPU keeps for the next borrower (more are destroyed). */
#define SL__GPU_SIDE_MAX 8
#define SL__GPU_TEV_MAX 32 /* timing events kept for operators to borrow */

/* A batch on its way back to the host: the rest of the task's chain runs on the host
 * once the download has completed (at retire), so the download overlaps later work. */
struct deferred {
    sl_task_t task;                  /* the stage that takes the batch, kind CPU */
    const struct sl_phase *phase;
    sl_batch_t *pinned;              /* host batch in pinned blocks, being filled */
    sl_batch_t *dev;                 /* the device batch, kept alive until the copy is done */
};

struct slot {
    struct sl__node *node;
    struct sl_query *q;
    const char *name;                /* operator name for the trace */
    const char *signature;           /* pipeline signature for the cost history */
    struct sl__opstate *os;          /* node credited with the GPU time in the profile */
    int64_t rows, bytes_h2d, bytes_d2h;
    cudaEvent_t done, k0, k1, c0, c1;  /* completion; kernel span; copy span */
    bool have_copy, started;
    bool copy_started;               /* c0 recorded for the current upload */
    int n_staging;
    void *staging[MAX_STAGING];
    int64_t staging_bytes[MAX_STAGING];
    volatile int32_t *h_status;     /* host view of the status word */
    int32_t *d_status;              /* device view */
    cudaEvent_t d0, d1;              /* download span (d1 also: downloads complete) */
    cudaEvent_t kd;                  /* compute work a download must wait for */
    bool have_d2h;
    int n_defer, cap_defer;
    struct deferred *defer;
};

/* A device copy of a whole host buffer, kept by the query that made it (replicas.c
 * semantics: host buffers are immutable once shared, so a copy stays valid while the
 * host buffer lives; the query drops its copies when it ends, so no derived state
 * outlives it). */
struct sl__replica {
    struct sl__buf *host;            /* reference held */
    struct sl__buf *dev;             /* reference held */
    struct sl__gpu *g;
    cudaEvent_t ready;               /* recorded after the upload */
};

struct sl__gpu;
struct sl_query;
/* A host buffer of `bytes` (> 0) in g's pinned result memory, counted in eng's host
 * budget until its last unref (from any thread, engine closed or not). SL_EBUDGET when
 * that memory is off or full or the budget is spent (the caller copies instead), else
 * the pool's error (SL_ENOMEM, SL_EDEVICE; message in sl_last_errmsg). */
int sl__gpu_result_buf(struct sl__gpu *g, sl_engine_t *eng, int64_t bytes, struct sl__buf **out);
/* Drops q's copies of table columns on g that only the replica list still holds (none in
 * use), so that an allocation over the budget can be tried again; returns how many. */
int sl__gpu_evict_replicas(struct sl_query *q, struct sl__gpu *g);
/* Allocates `bytes` of g's pool in stream st's order (sl__dpool_alloc_async). Copies of
 * table columns kept for reuse must never make a query fail: under budget pressure
 * (SL_EBUDGET) the ones nobody uses now go (sl__gpu_evict_replicas, 64 a call) and the
 * allocation is tried again while any go. q NULL: no replicas to evict. */
int sl__gpu_alloc_evicting(struct sl__gpu *g, struct sl_query *q, int64_t bytes,
                           cudaStream_t st, void **out);

/* GPU memory by what holds it (gpu_held.c), for the message of an allocation over the
 * budget: slot 0 counts the device buffers of no query operator (tables copied to the
 * GPU, replicas sent ahead), slot i those of the query's operator q->ops[i - 1], the last slot those of the
 * operators past it. What a pipeline's task allocates counts for the pipeline's sink:
 * what outlives the task is what the sink keeps. Counts of the GPU, not of a query. */
#define SL__GPU_HELD_SLOTS 64
/* The slot of what task t allocates. */
int sl__gpu_held_slot(const sl_task_t *t);
void sl__gpu_held_add(struct sl__gpu *g, int slot, int64_t bytes);
/* For an allocation of q that failed with rc: "; held: <op> <name> 180.0 MiB, ...,
 * replicas 12.0 MiB" (the largest holders), or "" when rc is not SL_EBUDGET. */
void sl__gpu_held_text(struct sl_query *q, struct sl__gpu *g, int rc, char *buf, size_t n);

struct sl__gpu {
    int ordinal;
    _Atomic int64_t held[SL__GPU_HELD_SLOTS]; /* device bytes by holder (above) */
    sl_engine_t *eng;
    struct sl__dpool *pool;
    struct sl__pinned *pinned;
    struct sl__pinned *spill;        /* out-of-core spill blocks (gpu_ext.c), kept pinned */
    cudaStream_t s[3];               /* h2d, compute, d2h */
    cudaEvent_t zero;                /* timing origin for the trace */
    int64_t zero_ns;
    int depth, head, count;          /* ring of in-flight slots */
    struct slot *slots;
    int32_t *h_status_all;           /* pinned mapped, one word per slot, then
                                        SL__GPU_SYNC_WORDS for synchronous runs */
    int32_t *d_status_all;           /* the same words as the device sees them */
    _Atomic uint64_t sync_words_used; /* bit i: sync word i taken (sl__gpu_run_sync) */
    struct sl__stager *stager;       /* threads that stage pageable uploads */
    struct sl__pinned_results *results; /* pinned blocks results keep; NULL: off */
    pthread_mutex_t side_mu;         /* guards side[] and tev[]: streams and timing events
                                        operators borrow (gpu_ext.c) */
    int n_side;
    void *side[SL__GPU_SIDE_MAX];    /* cudaStream_t */
    int n_tev;
    void *tev[SL__GPU_TEV_MAX];      /* cudaEvent_t */
    struct sl__worker *worker;
};

/* Status words of synchronous runs (finalize, combine) in flight at once before a run
 * falls back to a word in device memory. */
#define SL__GPU_SYNC_WORDS 64

#define S_H2D 0
#define S_COMPUTE 1
#define S_D2H 2

/* Records a CUDA failure on the query (if any) and returns the sluice code. */
int sl__gpu_cuda_fail(struct sl_query *q, cudaError_t e, const char *what, const char *file,
                      int line);
#define GPU_CUDA_FAIL(q, e, what) sl__gpu_cuda_fail((q), (e), (what), __FILE__, __LINE__)
/* Destroys the idle borrowed streams of g (gpu_ext.c); g's streams are synchronized. */
void sl__gpu_side_streams_destroy(struct sl__gpu *g);
/* Destroys the timing events operators gave back (sl__task_events_put). */
void sl__gpu_timing_events_destroy(struct sl__gpu *g);
/* A device buffer of `bytes` from g's pool, ordered on `st`, freed stream-ordered when
 * its last reference goes; NULL after failing the query. */
struct sl__buf *sl__gpu_device_buf(struct sl__gpu *g, sl_task_t *t, int64_t bytes, cudaStream_t st);

#endif /* SLUICE_RUNTIME_GPU_WORKER_INT_H */
