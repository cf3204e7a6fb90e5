/* GPU partitioned hash join (PHJ) over co-partitioned inputs (issue 6). STYLE.md §8.
 *
 * Inputs: R (build) and S (probe), each partitioned by sl_k_partition_pairs_* on the
 * same bits [begin_bit, begin_bit + bits), with partition offsets from
 * sl_k_partition_offsets_* ((1 << bits) + 1 entries each). part_shift = begin_bit + bits:
 * the key bits above it select the shared-memory hash bucket.
 *
 * Work: a unit is (partition p, build chunk of <= SL_K_JOIN_BUILD_CHUNK rows of R_p,
 * probe chunk of <= SL_K_JOIN_PROBE_CHUNK rows of S_p). A persistent grid takes units
 * from an atomic counter; a block builds a linear-probing table of the build chunk in
 * shared memory and streams the probe chunk through it. A build partition larger than
 * one chunk is joined chunk by chunk (block-nested-loop over build chunks, as in
 * Sioulas et al.), so any size and any number of duplicate build keys is correct: there
 * is no capacity limit, only a slowdown (|R_p| / chunk probes of S_p). Probe chunks
 * balance skewed (Zipf) probe partitions across blocks.
 *
 * Materializing variant: writes matches (key, R value, S value) to d_out_* at positions
 * [0, count) in an unspecified order (rows of one probe chunk step stay together), never
 * past out_capacity; *d_count receives the total number of matches (also those that did
 * not fit). Sizing contract: for PK-FK (unique build keys), count <= |S|, so
 * out_capacity = |S| always suffices in one call. In general call once with any
 * capacity (0 is fine), read *d_count, and if it exceeds the capacity, allocate count
 * rows and call again (count -> allocate -> write); the count-only variant below is the
 * cheaper counting call.
 *
 * Count+sum variant: d_result[0] = matches, [1] = sum of matching keys, [2] = sum of R
 * values, [3] = sum of S values over all matches, all modulo 2^64. Nothing materialized.
 * 4-byte keys and values are added zero-extended; the _sx_ variant sign-extends them
 * (int32 columns: each sum, read as int64, is exact while it fits).
 *
 * Temp storage: two-call pattern (d_temp == NULL sets *temp_bytes only); it holds the
 * per-partition unit offsets and the work counter and depends on `bits` only.
 * Never allocates or synchronizes; returns cudaGetLastError().
 */
#ifndef SLUICE_K_JOIN_H
#define SLUICE_K_JOIN_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SL_K_JOIN_BUILD_CHUNK 4608 /* build rows per shared-memory table */
#define SL_K_JOIN_PROBE_CHUNK 8192 /* probe rows per work unit */

#define SL_K_JOIN_DECL(SUF, KT, VT)                                                        \
    cudaError_t sl_k_phj_materialize_##SUF(                                               \
        void *d_temp, size_t *temp_bytes, const KT *d_r_keys, const VT *d_r_vals,         \
        const int64_t *d_r_offsets, const KT *d_s_keys, const VT *d_s_vals,               \
        const int64_t *d_s_offsets, int bits, int part_shift, KT *d_out_keys,             \
        VT *d_out_r_vals, VT *d_out_s_vals, int64_t out_capacity,                         \
        unsigned long long *d_count, cudaStream_t stream);                                \
    cudaError_t sl_k_phj_count_sum_##SUF(                                                 \
        void *d_temp, size_t *temp_bytes, const KT *d_r_keys, const VT *d_r_vals,         \
        const int64_t *d_r_offsets, const KT *d_s_keys, const VT *d_s_vals,               \
        const int64_t *d_s_offsets, int bits, int part_shift,                             \
        unsigned long long *d_result, cudaStream_t stream);                               \
    cudaError_t sl_k_phj_count_sum_sx_##SUF(                                              \
        void *d_temp, size_t *temp_bytes, const KT *d_r_keys, const VT *d_r_vals,         \
        const int64_t *d_r_offsets, const KT *d_s_keys, const VT *d_s_vals,               \
        const int64_t *d_s_offsets, int bits, int part_shift,                             \
        unsigned long long *d_result, cudaStream_t stream);

SL_K_JOIN_DECL(k32_v32, uint32_t, uint32_t)
SL_K_JOIN_DECL(k32_v64, uint32_t, uint64_t)
SL_K_JOIN_DECL(k64_v32, uint64_t, uint32_t)
SL_K_JOIN_DECL(k64_v64, uint64_t, uint64_t)

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_K_JOIN_H */
