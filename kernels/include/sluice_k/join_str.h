/* Join keys of strings (and composite keys mixing strings and integers) on the GPU
 * (STYLE.md §8 launchers: stream last, no allocation or synchronization inside, the
 * result of cudaGetLastError() after the launch; n == 0 launches nothing).
 *
 * A string is read through a view (sluice_k/str_gather.h), so that rows of several
 * batches form one array. A row's
 * key becomes one 64-bit hash of all its components; the join runs on the hashes, and
 * sl_k_key_collisions proves them exact first (equal hashes <=> equal keys), so that a
 * collision can never join rows whose keys differ.
 */
#ifndef SLUICE_K_JOIN_STR_H
#define SLUICE_K_JOIN_STR_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "str_gather.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { SL_K_KEY_B32 = 0, SL_K_KEY_B64 = 1, SL_K_KEY_STR = 2 };
#define SL_K_MAX_KEYS 8

/* The key components of both join sides: per component its kind and, per side, one array
 * over the side's rows (4- or 8-byte values, or string views). */
typedef struct sl_k_keycols {
    int n;
    int kind[SL_K_MAX_KEYS];
    const void *d[2][SL_K_MAX_KEYS];
} sl_k_keycols_t;

/* d_h[i] = the 64-bit hash of row i of side `side` (n rows) over every component of kc,
 * from `seed`. weak != 0 keeps only the hash's low 8 bits (a test hook that makes
 * collisions certain). */
cudaError_t sl_k_key_hash(const sl_k_keycols_t *kc, int side, int64_t n, uint64_t seed,
                          int weak, uint64_t *d_h, cudaStream_t stream);

/* Over n (hash, row) pairs sorted by hash (row < n0: row of side 0, else row - n0 of side
 * 1): sets *d_flag to 1 when two neighbours have equal hashes and different keys (equal
 * hashes form one run, so neighbours cover every pair). *d_flag is not cleared here. */
cudaError_t sl_k_key_collisions(const sl_k_keycols_t *kc, const uint64_t *d_h,
                                const uint32_t *d_row, int64_t n, uint32_t n0,
                                unsigned *d_flag, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_K_JOIN_STR_H */
