/* The skeleton of the materializing operators (sort, partition, merge): they collect all
 * their input, compute one result from it, then emit that.
 *   sink      each worker keeps references to the batches it receives (on a GPU, the
 *             device batches);
 *   combine   moves a worker's batches into the global list;
 *   finalize  the operator's own: on the CPU a state machine of spawned parallel stages
 *             (sl__mat_spawn: a work phase per chunk or column, then a step phase that
 *             starts the next stage), on a GPU its *_cuda.c file's;
 *   source    emits slices of the result `out` (a host batch, or a device batch).
 * The global state of such an operator starts with a struct sl__mat (member `m`), its
 * local state is a struct sl__mat_local.
 *
 * Definitions: the generic file (sort.c) defines the CPU-only one with SL__MAT_CPU_DEF,
 * the CUDA file (sort_cuda.c) the one with the GPU implementations with
 * SL__MAT_CUDA_DEF, and meson registers the one the build has (op_def.h). */
#ifndef SLUICE_OPERATORS_MATERIALIZE_H
#define SLUICE_OPERATORS_MATERIALIZE_H

#include <stddef.h>

#include "op_common.h"
#include "op_def.h"

struct sl__mat {
    struct sl__rows rows;       /* the sink's batches (in input order once finalize ran) */
    int64_t n;                  /* rows of the result */
    int n_cols;
    int stage;                  /* the CPU finalize's current stage (the operator's enum) */
    struct sl__rowsview *views;  /* per input column, made by a VIEW stage */
    int64_t n_chunks, chunk_rows;
    int64_t *nulls;             /* n_chunks x n_cols: null counts of the output columns */
    sl_batch_t *out;            /* the result */
    int gpu;                    /* out is a device batch */
};

struct sl__mat_local {
    struct sl__rows rows;
};

/* Phase bodies and state hooks every materializing operator uses as they are. */
int sl__mat_sink(sl_task_t *t);
int sl__mat_combine(sl_task_t *t);
void sl__mat_fini_local(const sl_op_t *op, void *gs, void *ls);
/* Frees what struct sl__mat holds (the operator's fini_global calls it). */
void sl__mat_fini(struct sl__mat *m);
/* Source tasks and body that hand out `out` in morsel slices (sort, merge). */
int64_t sl__mat_morsel_tasks(sl_task_t *t);
int sl__mat_emit_morsel(sl_task_t *t);
/* can_run of a GPU source: the result is on the GPU. */
int sl__mat_out_on_gpu(const sl_task_t *t);

/* Binding: adds every column of input 0 to the output, in order. */
int sl__mat_bind_columns(sl_bind_t *b);
/* The same for operators that move columns as 4- or 8-byte words (partition, merge):
 * a column of another type (strings, bools, 8- and 16-bit integers, decimals of
 * precision > 18) fails the bind with an error naming it and `op`. */
int sl__mat_bind_word_columns(sl_bind_t *b, const char *op);

/* The start of a CPU finalize: device batches a GPU sink kept are brought to the host,
 * the batches put in input order, n counted, n_cols set, views allocated and the rows
 * cut into chunks (sl__chunk_rows). Returns 1 when there is work, 0 when there are no
 * rows (the result is empty), < 0 on failure. */
int sl__mat_begin(sl_task_t *t, struct sl__mat *m, int n_cols);

/* The start of a GPU finalize: the kept batches put in input order and counted (m->n,
 * returned; 0: nothing to do). */
static inline int64_t sl__mat_count(struct sl__mat *m)
{
    sl__rows_order(&m->rows);
    return m->n = sl__rows_total(&m->rows);
}

/* Rows [*lo, *hi) of chunk k. */
static inline void sl__mat_chunk(const struct sl__mat *m, int64_t k, int64_t *lo, int64_t *hi)
{
    *lo = k * m->chunk_rows;
    *hi = *lo + m->chunk_rows < m->n ? *lo + m->chunk_rows : m->n;
}

/* The last stage's step of a CPU finalize: the result's null counts from the chunks'
 * (nulls), and the stage `done`. */
static inline int sl__mat_finish(struct sl__mat *m, int done)
{
    sl__sum_chunk_nulls(m->out, m->nulls, m->n_chunks, m->n_cols);
    m->stage = done;
    return SL_OK;
}

/* Starts CPU stage `stage` of the finalize: n tasks of `work`, then `step` once, each
 * with the global state as its argument (sl_task_arg). */
int sl__mat_spawn(sl_task_t *t, struct sl__mat *m, const struct sl_phase *work,
                  const struct sl_phase *step, int stage, int64_t n);

/* ---------------- definitions (op_def.h) ---------------- */

/* A CPU-only phase `name` running `run_` (the finalize's work and step phases). */
#define SL__MAT_CPU_PHASE(name, run_)                                                      \
    static const struct sl_impl name##_impls[] = {SL__IMPL_CPU(run_)};                     \
    static const struct sl_phase name = {name##_impls, 1, NULL}

/* The local state and its fini, for an operator's fields macro. */
#define SL__MAT_LOCAL_FIELDS                                                               \
    .local_state_bytes = sizeof(struct sl__mat_local), .fini_local = sl__mat_fini_local

/* The sink and combine of every materializing operator on the CPU. The combine only
 * moves batch references, so a GPU worker's local state is combined there too: as a
 * CUDA implementation it went through the GPU's synchronous path (a status word, its
 * read-back and a stream synchronization: about 30 us of a 2^28-row sort on the H100). */
extern const struct sl_impl sl__mat_sink_cpu[1], sl__mat_combine_cpu[1];

/* The CPU-only definition `def` of a materializing operator: `fields` as in
 * SL__SINK_SOURCE_DEF, its CPU finalize finalize_ and its source source_. */
#define SL__MAT_CPU_DEF(def, fields, finalize_, source_)                                   \
    static const struct sl_impl def##_finalize_impls[] = {SL__IMPL_CPU(finalize_)};        \
    static const struct sl_impl def##_source_impls[] = {SL__IMPL_CPU(source_)};            \
    SL__SINK_SOURCE_DEF(def, fields, (), sl__cost_linear, sl__mat_sink_cpu,                \
                        sl__mat_combine_cpu, def##_finalize_impls, def##_source_impls)

/* The definition with the GPU implementations, in the operator's *_cuda.c file: the GPU
 * sink keeps device batches when sink_can_run_ says so, finalize_gpu_ finalizes on a GPU
 * when finalize_can_run_ says so, and the source runs on a GPU when the result is
 * there. */
#define SL__MAT_CUDA_DEF(def, fields, finalize_, source_, sink_can_run_, finalize_gpu_,     \
                         finalize_can_run_)                                                \
    SL__IMPLS_CPU_CUDA(def##_sink_impls, sl__mat_sink, sl__mat_sink, sink_can_run_);      \
    SL__IMPLS_CPU_CUDA(def##_finalize_impls, finalize_, finalize_gpu_, finalize_can_run_); \
    SL__IMPLS_CPU_CUDA(def##_source_impls, source_, source_, sl__mat_out_on_gpu);          \
    SL__SINK_SOURCE_DEF(def, fields, (), sl__cost_linear, def##_sink_impls,                \
                        sl__mat_combine_cpu, def##_finalize_impls, def##_source_impls)

#endif /* SLUICE_OPERATORS_MATERIALIZE_H */
