/* The sort operator's state and definition fields, shared by its CPU code (sort.c) and
 * its CUDA sink, finalize and source (sort_cuda.c). */
#ifndef SL_SORT_OP_H
#define SL_SORT_OP_H

#include "common/materialize.h"
#include "sort_any.h"

struct sort_data {
    struct sl__sort_spec spec;
    int n_cols;
};

/* One step of LSD over columns: a stable sort by a column's codes or its null flags. */
struct sort_step {
    int col;
    int null_pass;
    int desc, nulls_first;
};

enum { S_VIEW, S_BUILD, S_HIST, S_SCATTER, S_GATHER, S_DONE };

struct sort_global {
    struct sl__mat m;  /* the skeleton's part: rows, result, views, chunks (materialize.h) */
    int n_steps, step, digit;
    struct sort_step steps[2 * SL__SORT_MAX_KEYS];
    int wide, n_digits, stream;
    int decode_col;    /* the key column read back from the final codes, or -1 */
    int carry_col;     /* the payload carried in the items instead of a row index, or -1 */
    void *items, *tmp;
    int64_t *hist_all; /* n_chunks x n_digits x SL__RS_BUCKETS */
    int64_t *hist;     /* n_chunks x SL__RS_BUCKETS: counts, then positions */
    /* Out of core (sort_cuda_ooc.c): sorted runs in pinned host memory, merged into out
     * (a host batch) by spawned CPU tasks or re-sorted in buckets on the GPU (gpu_merge
     * 1) of n_ooc_runs runs; ooc_state freed by ooc_free. */
    int ooc, gpu_merge;
    int ooc_pass1_cuts;             /* the GPU merge's cuts were found in pass 1 (tests) */
    int ooc_packed;                 /* the runs were packed (ooc_merge.h; tests) */
    int ooc_narrow;                 /* the runs were narrow (ooc_merge.h; tests) */
    int ooc_sets;                   /* pass 1's buffer sets (ooc_runs.h; tests) */
    int64_t n_ooc_runs;
    int64_t ooc_gpu_batches;        /* kept batches that were on a GPU (tests) */
    int64_t n_ooc_buckets;          /* the GPU merge's buckets (tests) */
    _Atomic int64_t sink_dev_bytes;   /* host input bytes the GPU sink uploaded */
    /* CUB's temp bytes for gpu_temp_n rows (sort_cuda.c, need_bytes), asked once: each ask
     * queries the device's occupancy for CUB's kernels. 0 rows: not asked yet. */
    int64_t gpu_temp_n;
    size_t gpu_temp_bytes;
    _Atomic int sink_host;            /* 1: the GPU sink keeps later host batches there */
    void *ooc_state;
    void (*ooc_free)(void *ooc_state);
};
/* The skeleton reads the global state as its struct sl__mat. */
_Static_assert(offsetof(struct sort_global, m) == 0, "struct sl__mat comes first");

/* The definition's fields (SL__SINK_SOURCE_DEF), shared by sort.c's CPU definition and
 * sort_cuda.c's. */
extern const struct sl_option_def sl__sort_options[1];
int sl__sort_bind(sl_bind_t *b);
void sl__sort_fini_global(const sl_op_t *op, void *gs);
#define SL__SORT_DEF_FIELDS()                                                              \
    .name = "sort",                                                                        \
    .doc = "stable parallel LSD radix sort by key columns (by=\"a DESC NULLS FIRST, b\")", \
    .min_inputs = 1, .max_inputs = 1, .options = sl__sort_options, .n_options = 1,         \
    .bind = sl__sort_bind, .global_state_bytes = sizeof(struct sort_global),              \
    .fini_global = sl__sort_fini_global, .source_tasks = sl__mat_morsel_tasks,               \
    SL__MAT_LOCAL_FIELDS

int sl__sort_finalize_cpu(sl_task_t *t);

/* The GPU sink's rule for a host batch of `bytes` (sort_sink.c, every build): 1 to
 * upload it, 0 to keep it and every later one on the host. morsels: the pipeline's
 * (the input is about bytes x morsels); left: the GPU budget left now; up: what the
 * sink uploaded before it; mode: option debug_sort_sink. */
enum { SL__SORT_SINK_AUTO = 0, SL__SORT_SINK_UPLOAD = 1 };
int sl__sort_sink_upload(int64_t bytes, int64_t morsels, int64_t left, int64_t up, int mode);

/* On a GPU (sort_cuda.c, CUDA builds only) the sink and combine keep the device batches
 * (as on the CPU), finalize sorts them with CUB and the source emits slices of the
 * device result. */
int sl__sort_gpu_can_run(const sl_task_t *t);
int sl__sort_gpu_sink_can_run(const sl_task_t *t);
int sl__sort_gpu_finalize_can_run(const sl_task_t *t);
int sl__sort_gpu_finalize(sl_task_t *t);
/* Out of core (sort_cuda_ooc.c): 1 if the finalize can sort these rows in GPU-sized
 * runs under the budget; the finalize itself (the runs, then their merge into g->out
 * by spawned CPU tasks; the source is the CPU sort's). */
int sl__sort_ooc_can_run(const sl_task_t *t);
int sl__sort_ooc_finalize(sl_task_t *t);
/* Over several devices (sort_mg_cuda.c): whether this finalize goes over several of the
 * engine's devices (0, SL__MG_YES; pick says which) or why not (enum sl__mg_why), and
 * that finalize. */
struct sl__mg_pick;
int sl__sort_mg_choice(sl_task_t *t, struct sl__mg_pick *pick);
int sl__sort_mg_finalize(sl_task_t *t, struct sl__mg_pick *pick);
/* The shape of a sort for the multi-device choice, from its input schema: what the
 * finalize starts from and explain's judge (sort_mg_judge.c, every build; registered at
 * bind). A kept DICT column makes cols_ok 0: the multi-device sort does not carry them
 * (SL__MG_COLUMNS). */
struct sl__mg_shape;
void sl__sort_mg_shape(const sl_op_t *op, struct sl__mg_shape *sh);
void sl__sort_mg_judge(const sl_op_t *op, const struct sl__mg_env *env,
                       struct sl__mg_verdict *out);

#endif /* SL_SORT_OP_H */
