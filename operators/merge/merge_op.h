/* The merge operator's state and definition fields, shared by its CPU code (merge.c)
 * and its CUDA finalize (merge_cuda.c). */
#ifndef SL_MERGE_OP_H
#define SL_MERGE_OP_H

#include <stdatomic.h>

#include "common/materialize.h"
#include "merge_int.h"

#define MERGE_MAX_RUNS_INPUT 64

struct merge_data {
    struct sl__sort_key key;
    int n_cols, by_batch;
};

enum { M_VIEW, M_CODES, M_MERGE, M_GATHER, M_DONE };

struct merge_global {
    struct sl__mat m;           /* the skeleton's part: rows, result, views, chunks */
    int64_t n_nulls;
    int k;
    struct sl__merge_run *runs; /* non-null parts */
    int64_t *run_lo, *run_hi;   /* every run's rows, nulls included */
    uint64_t *codes, *perm;
    _Atomic int64_t bad_row;    /* first unsorted row found, or -1 */
};
/* The skeleton reads the global state as its struct sl__mat. */
_Static_assert(offsetof(struct merge_global, m) == 0, "struct sl__mat comes first");

/* The definition's fields (SL__SINK_SOURCE_DEF), shared by merge.c's CPU definition and
 * merge_cuda.c's. */
#define SL__MERGE_N_OPTIONS 2
extern const struct sl_option_def sl__merge_options[SL__MERGE_N_OPTIONS];
int sl__merge_bind(sl_bind_t *b);
void sl__merge_fini_global(const sl_op_t *op, void *gs);
#define SL__MERGE_DEF_FIELDS()                                                             \
    .name = "merge",                                                                       \
    .doc = "stable multiway merge of sorted runs (inputs or batches) by one key column",   \
    .min_inputs = 1, .max_inputs = 64, .options = sl__merge_options,                       \
    .n_options = SL__MERGE_N_OPTIONS, .bind = sl__merge_bind,                              \
    .global_state_bytes = sizeof(struct merge_global),                                     \
    .fini_global = sl__merge_fini_global, .source_tasks = sl__mat_morsel_tasks,              \
    SL__MAT_LOCAL_FIELDS

int sl__merge_finalize_cpu(sl_task_t *t);

/* On a GPU (merge_cuda.c, CUDA builds only) the sink and combine keep the device batches
 * (as on the CPU), finalize merges two runs there and the source emits slices of the
 * device result. */
int sl__merge_gpu_sink_can_run(const sl_task_t *t);
int sl__merge_gpu_finalize_can_run(const sl_task_t *t);
int sl__merge_gpu_finalize(sl_task_t *t);

#endif /* SL_MERGE_OP_H */
