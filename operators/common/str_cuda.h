/* String columns on a GPU, shared by the operators that compact or combine device rows
 * (the join's output, the filter's kept rows): views of a device batch's strings, and
 * the gather of strings by row ids into a device batch's column (lengths, a scan into
 * offsets, the bytes; kernels in kernels/columns/str_gather.cu). */
#ifndef SL_COMMON_STR_CUDA_H
#define SL_COMMON_STR_CUDA_H

#include "gpu_ext.h"
#include "internal.h"
#include "sluice_k/str_gather.h"

/* Views of the n_rows strings of utf8/large_utf8 column col of device batch b into
 * out[0, n_rows), enqueued on the task's stream. SL_OK or the failure recorded. */
int sl__str_views(sl_task_t *t, const sl_batch_t *b, int col, sl_k_strview_t *out);

/* One string column to gather: output column oc of the batch, from views indexed by the
 * row ids. */
struct sl__str_gather {
    const sl_k_strview_t *views;
    int oc;
};

/* Output string columns cols[i].oc of device batch b (rows [0, n)) from cols[i].views by
 * row ids (ids[r]: the view of output row r); rows from `valid` on are empty strings
 * (their validity says null). Each column gets its offsets and a bytes buffer of exactly
 * the bytes its rows need; one wait on the task's stream for all n_cols columns' sizes.
 * A utf8 column past 2^31 - 1 bytes fails with SL_EOVERFLOW naming `what`. SL_OK or the
 * failure recorded on the task. */
int sl__str_gather_columns(sl_task_t *t, const struct sl__str_gather *cols, int n_cols,
                           const uint32_t *ids, int64_t n, int64_t valid, sl_batch_t *b,
                           const char *what);

/* Gives string column oc of device batch b a bytes buffer of `bytes` (none for 0). */
int sl__str_attach_chars(sl_task_t *t, sl_batch_t *b, int oc, int64_t bytes);

#endif /* SL_COMMON_STR_CUDA_H */
