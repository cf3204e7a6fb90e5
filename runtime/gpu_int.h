/* The GPU worker: one per GPU, driving three streams (host->device, compute,
 * device->host). A task placed on a GPU enqueues its copies and kernels and returns;
 * its graph node stays held until the task's completion event has fired, so that
 * copies of the next tasks overlap the kernels of this one while dependencies stay
 * exact. Declared for every build; without CUDA the functions report "no GPU". */
#ifndef SLUICE_RUNTIME_GPU_INT_H
#define SLUICE_RUNTIME_GPU_INT_H

#include "exec_int.h"

struct sl__gpu;

#define SL__GPU_DEPTH_DEFAULT 4

/* Creates the context of GPU `ordinal` (pool with the engine's budget, streams, events,
 * status words). share > 1: a logical device, one of `share` on this GPU, which gets
 * that part of the budget. Runs on the engine-opening thread. */
int sl__gpu_create(struct sl__gpu **out, sl_engine_t *eng, int ordinal, int64_t mem_limit,
                   int share, int depth);
void sl__gpu_destroy(struct sl__gpu *g);
/* Scheduler hooks for the GPU worker thread (user = the engine). */
int sl__gpu_worker_init(struct sl__worker *w, void *user);
void sl__gpu_worker_fini(struct sl__worker *w, void *user);
/* Retires completed in-flight tasks; with block, waits for the oldest one. Returns the
 * number still in flight. */
int sl__gpu_worker_poll(struct sl__worker *w, bool block);

/* Task life on the GPU worker: begin (may wait while `depth` tasks are in flight),
 * then the pipeline runs, then end (records the completion event and holds the node). */
int sl__gpu_task_begin(sl_task_t *t);
void sl__gpu_task_end(sl_task_t *t);
/* Moves a batch to the task's GPU (returns a new reference; a batch already there is
 * returned with a new reference). */
int sl__gpu_batch_to_device(sl_task_t *t, sl_batch_t *b, sl_batch_t **out);
/* Strings (utf8, large_utf8) move between host and GPU as the offsets of their rows,
 * rebased to start at 0, and the bytes those span, so that a slice moves only its own
 * bytes. sl__gpu_str_range reads the byte range [*lo, *hi) of rows [first, first + rows)
 * of string column c (from device memory on `stream`, waiting, when on_device) and
 * checks it against the bytes buffer; sl__gpu_str_rebase subtracts lo from n host
 * offsets of type t. */
int sl__gpu_str_range(struct sl_query *q, const struct sl__col *c, int64_t first, int64_t rows,
                      bool on_device, void *stream, int64_t *lo, int64_t *hi);
void sl__gpu_str_rebase(void *offsets, enum sl_type t, int64_t n, int64_t lo);
/* Copying a host table to a GPU in runs (gpu_concat.c): sl__gpu_concat_run gives how many
 * of the n batches at bs (at least 1) go into one device batch: host batches of the same
 * column types, dictionaries and plain layouts, at most max_rows rows unless the first
 * alone has more. sl__gpu_concat_to_device writes such a run into one new device batch
 * (*out; buffers from `alloc`, copies on st, which the caller waits for; with st NULL and
 * host buffers from `alloc`, one host batch, copied by memcpy). */
#define SL__GPU_RUN_MAX_ROWS ((int64_t)1 << 30)
int64_t sl__gpu_concat_run(sl_batch_t *const *bs, int64_t n, int64_t max_rows);
int sl__gpu_concat_to_device(sl_batch_t *const *bs, int64_t n,
                             int (*alloc)(void *ctx, int64_t bytes, struct sl__buf **out),
                             void *ctx, void *st, sl_batch_t **out);
/* An allocator for the copies above that gives plain host buffers (ctx unused). */
int sl__gpu_host_alloc(void *ctx, int64_t bytes, struct sl__buf **out);
/* A device batch going to a host stage: enqueues its download and defers `next` (the
 * host stage, with phase `ph`) until the task retires, so that the download overlaps
 * later tasks; the rest of the task then runs on the host. */
int sl__gpu_defer_to_host(sl_task_t *t, sl_batch_t *b, sl_task_t *next,
                          const struct sl_phase *ph);
/* A new batch on the task's GPU, uninitialized (string columns: rows + 1 offsets and
 * no bytes buffer yet, for the producer to attach). */
sl_batch_t *sl__gpu_batch_new(sl_task_t *t, const sl_schema_t *s, int64_t rows);
/* Runs a CUDA combine implementation for a GPU worker's local state from a CPU thread:
 * on that GPU's compute stream, then waits for it. */
int sl__gpu_run_sync(struct sl__gpu *g, sl_task_t *t, const struct sl_impl *im);
/* Waits until the work a CUDA task enqueued so far has completed (SL_BLOCKED). */
int sl__gpu_stream_wait(sl_task_t *t);
/* Drops the device copies of host buffers that the query made (at its end). */
void sl__query_drop_replicas(struct sl_query *q);
/* Frees the sl_task_device_alloc blocks the query's operators did not free. */
void sl__query_free_device(struct sl_query *q);
/* How far g's trace clock (its events' times converted to the host clock through the
 * event recorded when g was set up) runs behind the host clock now, in ns: an event
 * recorded on the calling thread's default stream and waited for. The two clocks drift
 * apart (about 180 us after a 12 s load of TPC-H SF 10, H100), so a traced query takes
 * it at its start. 0 when it cannot be measured. */
int64_t sl__gpu_clock_skew(struct sl__gpu *g);
/* Measures pinned host<->device bandwidth (64 MiB copies, four each way). */
int sl__gpu_measure(struct sl__gpu *g, double *h2d_gbps, double *d2h_gbps);
/* Device-to-device copy bandwidth of g (read + write, GB/s; gpu_measure.c). */
int sl__gpu_measure_copy(struct sl__gpu *g, int64_t bytes, double *gbps);
/* fp32 FMA peak of g from its attributes (GFLOP/s; gpu_measure.c). */
int sl__gpu_fp32_peak(struct sl__gpu *g, double *gflops);
/* Memory counters of the GPU's pool. */
void sl__gpu_mem(struct sl__gpu *g, int64_t *in_use, int64_t *peak, int64_t *limit);
/* Sets the GPU pool's peak to what is in use now. */
void sl__gpu_mem_reset_peak(struct sl__gpu *g);
bool sl__batch_on_device(const sl_batch_t *b);
/* Device memory of a task (sl_task_device_alloc): from the pool of the task's GPU,
 * ordered on the task's stream. bytes > 0. *held: the slot of the GPU's held bytes that
 * counts it (gpu_held.c), for sl__gpu_dfree. */
int sl__gpu_dalloc(sl_task_t *t, int64_t bytes, void **out, int *held);
/* Frees pool memory of GPU g, ordered on `stream` (NULL: g's compute stream). */
void sl__gpu_dfree(struct sl__gpu *g, void *d_ptr, int64_t bytes, int held, void *stream);
/* Bytes still free under g's budget. */
int64_t sl__gpu_budget_left(struct sl__gpu *g);
/* Downloads a device batch into host memory and waits (after the task's stream, if
 * any, has finished the work that made it). */
int sl__gpu_batch_download(sl_task_t *t, sl_batch_t *b, sl_batch_t **out);
/* Uploads a host batch to the task's GPU on its stream, outside the in-flight slots
 * (combine and finalize on a GPU). */
int sl__gpu_batch_upload_sync(sl_task_t *t, sl_batch_t *b, sl_batch_t **out);
/* The CUDA ordinal of g. */
int sl__gpu_ordinal(const struct sl__gpu *g);
/* Copies every batch of table `t` into g's pool; waits. */
int sl__gpu_table_to_device(struct sl__gpu *g, sl_table_t *t, sl_table_t **out);


#endif /* SLUICE_RUNTIME_GPU_INT_H */
