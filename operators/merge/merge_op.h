/* The merge operator's states, shared by its CPU code (merge.c) and its CUDA finalize
 * (merge_cuda.c). */
#ifndef SL_MERGE_OP_H
#define SL_MERGE_OP_H

#include <stdatomic.h>

#include "common/op_common.h"
#include "merge_int.h"

#define MERGE_MAX_RUNS_INPUT 64

struct merge_data {
    struct sl__sort_key key;
    int n_cols, by_batch;
};

enum { M_VIEW, M_CODES, M_MERGE, M_GATHER, M_DONE };

struct merge_global {
    struct sl__rows rows;
    int64_t n, n_nulls;
    int n_cols, stage, k;
    struct sl__colview *views;
    struct sl__merge_run *runs; /* non-null parts */
    int64_t *run_lo, *run_hi;   /* every run's rows, nulls included */
    uint64_t *codes, *perm;
    int64_t n_chunks, chunk_rows;
    int64_t *nulls;             /* n_chunks x n_cols */
    _Atomic int64_t bad_row;    /* first unsorted row found, or -1 */
    sl_batch_t *out;
    int gpu;                    /* out is a device batch (merge_cuda.c) */
};

struct merge_local {
    struct sl__rows rows;
};

int sl__merge_finalize_cpu(sl_task_t *t);

#ifdef SL_HAVE_CUDA
int sl__merge_gpu_sink_can_run(const sl_task_t *t);
int sl__merge_gpu_finalize_can_run(const sl_task_t *t);
int sl__merge_gpu_finalize(sl_task_t *t);
int sl__merge_gpu_source_can_run(const sl_task_t *t);
#endif

#endif /* SL_MERGE_OP_H */
