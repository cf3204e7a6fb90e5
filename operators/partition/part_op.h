/* The partition operator's states, shared by its CPU code (partition.c) and its CUDA
 * finalize (partition_cuda.c). */
#ifndef SL_PART_OP_H
#define SL_PART_OP_H

#include "part_int.h"

struct part_data {
    int key, n_cols;
    int bits, passes, hash;
};

enum { P_VIEW, P_HIST, P_SCATTER, P_PASS2, P_FINISH, P_DONE };

struct part_global {
    struct sl__rows rows;
    int64_t n;
    int n_cols, n_scat, stage, stream;
    int bits1, bits2;
    int64_t fanout, f1;
    struct sl__colview *views;
    const void **src;   /* n_scat scatter sources (key cleaned, row ids) */
    void **dst1, **dst; /* pass-1 targets and final columns */
    int widths[64 + 2];
    uint64_t *rowid;
    int64_t n_chunks, chunk_rows;
    int64_t *hist;      /* n_chunks x f1 */
    int64_t *off;       /* fanout + 1 */
    int64_t *off1;      /* f1 + 1 */
    int64_t *nulls;     /* n_chunks x n_cols */
    sl_batch_t *out;
    int gpu;            /* out is a device batch, off on the host (partition_cuda.c) */
};

struct part_local {
    struct sl__rows rows;
};

int sl__part_finalize_cpu(sl_task_t *t);

#ifdef SL_HAVE_CUDA
int sl__part_gpu_sink_can_run(const sl_task_t *t);
int sl__part_gpu_finalize_can_run(const sl_task_t *t);
int sl__part_gpu_finalize(sl_task_t *t);
int sl__part_gpu_source_can_run(const sl_task_t *t);
#endif

#endif /* SL_PART_OP_H */
