/* The partition operator's state and definition fields, shared by its CPU code
 * (partition.c) and its CUDA finalize (partition_cuda.c). */
#ifndef SL_PART_OP_H
#define SL_PART_OP_H

#include "common/materialize.h"
#include "part_int.h"

struct part_data {
    int key, n_cols;
    int bits, passes, hash;
};

enum { P_VIEW, P_HIST, P_SCATTER, P_PASS2, P_FINISH, P_DONE };

struct part_global {
    struct sl__mat m;   /* the skeleton's part: rows, result, views, chunks (materialize.h) */
    int n_scat, stream;
    int bits1, bits2;
    int64_t fanout, f1;
    const void **src;   /* n_scat scatter sources (key cleaned, row ids) */
    void **dst1, **dst; /* pass-1 targets and final columns */
    int widths[64 + 2];
    uint64_t *rowid;
    int64_t *hist;      /* n_chunks x f1 */
    int64_t *off;       /* fanout + 1 */
    int64_t *off1;      /* f1 + 1 */
    /* m.gpu: out is a device batch, off on the host (partition_cuda.c) */
};
/* The skeleton reads the global state as its struct sl__mat. */
_Static_assert(offsetof(struct part_global, m) == 0, "struct sl__mat comes first");

/* The definition's fields (SL__SINK_SOURCE_DEF), shared by partition.c's CPU definition and
 * partition_cuda.c's. */
#define SL__PART_N_OPTIONS 5
extern const struct sl_option_def sl__part_options[SL__PART_N_OPTIONS];
int sl__part_bind(sl_bind_t *b);
void sl__part_fini_global(const sl_op_t *op, void *gs);
int64_t sl__part_tasks(sl_task_t *t);
int sl__part_source(sl_task_t *t);
#define SL__PART_DEF_FIELDS()                                                              \
    .name = "partition",                                                                   \
    .doc = "radix partitioning by an int32/int64 key (one batch per partition, with a "    \
           "'partition' column)",                                                          \
    .min_inputs = 1, .max_inputs = 1, .options = sl__part_options,                         \
    .n_options = SL__PART_N_OPTIONS, .bind = sl__part_bind,                                \
    .global_state_bytes = sizeof(struct part_global), .fini_global = sl__part_fini_global, \
    .source_tasks = sl__part_tasks, SL__MAT_LOCAL_FIELDS

int sl__part_finalize_cpu(sl_task_t *t);

/* On a GPU (partition_cuda.c, CUDA builds only) the sink and combine keep the device
 * batches (as on the CPU), finalize partitions them with CUB and the source emits
 * slices of the device result. */
int sl__part_gpu_sink_can_run(const sl_task_t *t);
int sl__part_gpu_finalize_can_run(const sl_task_t *t);
int sl__part_gpu_finalize(sl_task_t *t);

#endif /* SL_PART_OP_H */
