/* Device-side helpers of the sort-family operators on a GPU (sort, partition): the kept
 * device batches (struct sl__rows, in input order) seen as one array per column. */
#ifndef SL_SORT_ROWS_CUDA_H
#define SL_SORT_ROWS_CUDA_H

#include <cuda_runtime_api.h>

#include "gpu_ext.h"
#include "materialize.h"

/* 1 if column c of all kept batches is one run of one buffer (rows->n > 0). */
int sl__rows_contiguous(const struct sl__rows *r, int c);
/* Column c of the n kept rows as one device array: a view (*owned = NULL) when
 * contiguous, else a copy (device copies on the task's stream) into *owned, which the
 * caller frees with sl_task_device_free. SL_OK or the failure recorded on the task. */
int sl__rows_device_column(sl_task_t *t, const struct sl__rows *r, int c, int64_t n,
                           const void **out, void **owned);
/* Device bytes for the kept rows' columns as arrays: the copies of those not contiguous. */
int64_t sl__rows_copy_bytes(const struct sl__rows *r, int n_cols, int64_t n);

/* 1 if the sink's input batch may be kept on the GPU: it is there already, or what the
 * budget leaves covers uploading it three times over (its copy, and room for the
 * finalize's output and scratch) plus 16 MiB. Else the batch stays on the host, and a
 * finalize that finds host batches runs on the CPU: a sink never fails over the budget. */
int sl__rows_sink_fits(const sl_task_t *t);

/* The kept rows' count if a GPU finalize can take them (all batches on one GPU, no
 * nulls in any of the n_cols columns, fewer than 2^31 rows), else -1. */
int64_t sl__rows_gpu_rows(const struct sl__rows *r, int n_cols);

/* A pooled device buffer of `words` 32-bit words that a batch can own (a validity
 * bitmap): allocated as a one-column batch whose buffer is then kept, the engine's only
 * way to hand operators such a buffer. NULL after recording the failure. */
struct sl__buf *sl__device_words(sl_task_t *t, int64_t words);
/* The same for n values of `type` (a column's values; fixed widths). */
struct sl__buf *sl__device_values(sl_task_t *t, enum sl_type type, int64_t n);

/* A GPU finalize's scratch memory and phase marks (CUDA events on the task's stream). */
#define SL__GPU_WORK_PTRS 72
#define SL__GPU_WORK_MARKS 5
struct sl__gpu_work {
    sl_task_t *t;
    void *p[SL__GPU_WORK_PTRS];
    int n_p, ok;
    cudaEvent_t ev[SL__GPU_WORK_MARKS];
    const char *span_name;  /* not NULL: also reported as the phase from mark span_from */
    int span_from, span_to; /* to mark span_to (any two marks the body recorded) */
};
void sl__gpu_work_init(struct sl__gpu_work *w, sl_task_t *t);
/* Device memory freed by sl__gpu_work_finish (NULL after recording the failure). */
void *sl__gpu_work_alloc(struct sl__gpu_work *w, size_t bytes);
/* Frees p (from sl_task_device_alloc; NULL is fine) with the scratch. */
void sl__gpu_work_keep(struct sl__gpu_work *w, void *p);
/* Records mark i (0 <= i < SL__GPU_WORK_MARKS) on the task's stream. */
void sl__gpu_work_mark(struct sl__gpu_work *w, int i);
/* Frees the scratch (ordered on the stream after the kernels that use it), waits for
 * the stream and, if rc >= 0, reports phase i = marks [i, i + 1) as names[i] for the
 * n_names names that are not NULL (and w->span_name's span, if set). Returns rc if < 0, else SL_OK or the CUDA failure
 * (recorded as "`what`: error"). */
int sl__gpu_work_finish(struct sl__gpu_work *w, int rc, const char *const *names, int n_names,
                        const char *what);

/* Columns [0, n_cols) of the n kept rows as device arrays (sl__rows_device_column), the
 * copies freed with w's scratch. SL_OK or the failure recorded on the task. */
int sl__gpu_work_columns(struct sl__gpu_work *w, const struct sl__rows *r, int n_cols,
                         int64_t n, const void **cols);
/* Column c of out (rows [0, n)) = cols[c] gathered by row ids (ids[i]: the input row of
 * output row i), for every c in [0, n_cols) but `skip` (-1: none); columns of 1, 2, 4 or
 * 8 bytes by out's types. Enqueued on the task's stream; SL_OK or the failure recorded. */
int sl__gpu_gather_columns(sl_task_t *t, const void *const *cols, int n_cols, int skip,
                           const uint32_t *ids, sl_batch_t *out, int64_t n);

/* A GPU finalize's body: runs the work on w (marks, scratch) for `arg`. */
typedef int (*sl__gpu_body_fn)(struct sl__gpu_work *w, void *arg);
/* Runs body with a fresh work, finishes it (sl__gpu_work_finish) and, on success, drops
 * the kept rows (their device memory goes back at once). */
int sl__gpu_finalize_run(sl_task_t *t, struct sl__rows *rows, sl__gpu_body_fn body, void *arg,
                         const char *const *names, int n_names, const char *what);
/* The same for a materializing operator (materialize.h): on success its result is on the
 * GPU (m->gpu). */
int sl__mat_gpu_run(sl_task_t *t, struct sl__mat *m, sl__gpu_body_fn body, void *arg,
                    const char *const *names, int n_names, const char *what);

#endif /* SL_SORT_ROWS_CUDA_H */
