/* GPU merge of two sorted runs (issue 6), for the merge operator. STYLE.md §8: stream
 * last, never allocates or synchronizes, returns cudaGetLastError(); n == 0 launches
 * nothing. (CUB's DeviceMerge is unstable and its headers need C++ exceptions, which
 * the kernels are built without; these kernels need no temp storage.)
 *
 * The runs are rows [0, n0) and [n0, n0 + n1) of one key column (int32 or int64, 4 or
 * 8 bytes), each sorted ascending (desc = 0) or descending (desc = 1).
 *  sl_k_merge_check: *d_bad = min(*d_bad, first row i of a run, not its first, whose key
 *    is out of order after row i - 1); the caller sets *d_bad to ~0 before.
 *  sl_k_merge_ids: d_ids_out[p] = the row at merged position p, stable: equal keys come
 *    out run 0 first, then in row order, as the CPU merge does. Merge by co-ranks: each
 *    row's position is its index in its run plus the rows of the other run before it
 *    (a binary search there: keys strictly before it for run 0, before or equal for run
 *    1), one thread per row, so positions are distinct and every position is written.
 *    Needs both runs sorted (check first). n0 + n1 < 2^32.
 */
#ifndef SLUICE_K_MERGE_H
#define SLUICE_K_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

cudaError_t sl_k_merge_check(const void *d_keys, int key_bytes, int desc, int64_t n0, int64_t n1,
                             unsigned long long *d_bad, cudaStream_t stream);
cudaError_t sl_k_merge_ids(const void *d_keys, int key_bytes, int desc, int64_t n0, int64_t n1,
                           uint32_t *d_ids_out, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_K_MERGE_H */
