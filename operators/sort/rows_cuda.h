/* Device-side helpers of the sort-family operators on a GPU (sort, partition): the kept
 * device batches (struct sl__rows, in input order) seen as one array per column. */
#ifndef SL_SORT_ROWS_CUDA_H
#define SL_SORT_ROWS_CUDA_H

#include "sort_int.h"

/* 1 if column c of all kept batches is one run of one buffer (rows->n > 0). */
int sl__rows_contiguous(const struct sl__rows *r, int c);
/* Column c of the n kept rows as one device array: a view (*owned = NULL) when
 * contiguous, else a copy (device copies on the task's stream) into *owned, which the
 * caller frees with sl_task_device_free. SL_OK or the failure recorded on the task. */
int sl__rows_device_column(sl_task_t *t, const struct sl__rows *r, int c, int64_t n,
                           const void **out, void **owned);
/* Device bytes for the kept rows' columns as arrays: the copies of those not contiguous. */
int64_t sl__rows_copy_bytes(const struct sl__rows *r, int n_cols, int64_t n);

#endif /* SL_SORT_ROWS_CUDA_H */
