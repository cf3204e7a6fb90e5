/* Out-of-core join (issue 8): appending a partitioned chunk to per-partition block lists.
 * STYLE.md §8 launchers.
 *
 * The first pass of the out-of-core join keeps each partition as a list of fixed-size
 * blocks ("lines") of block_rows rows: block b starts at d_block_ptr[b] (device memory
 * for cached blocks, pinned mapped host memory for spilled ones; UVA pointers), keys
 * first (block_rows keys), then values. A partitioned chunk (keys/values grouped by
 * partition, offsets of (1 << bits) + 1 entries) is appended in two launches:
 *  - plan: one thread per partition takes the new blocks its run needs from *d_next
 *    (atomicAdd; more than n_blocks is an error written to *d_status) and records
 *    d_block_part[b] = p for each;
 *  - scatter: every row is written to its slot (coalesced: consecutive rows of a run go
 *    to consecutive slots; whole 128-byte lines over the link when the block is host
 *    memory).
 * Per-partition state (all (1 << bits) entries, zeroed = empty before the first chunk):
 * d_cur[p] = current block + 1 (0: none), d_fill[p] = rows in it; plan also fills the
 * scratch d_plan (4 int64 per partition) that scatter reads. The launcher does both.
 * Never allocates or synchronizes; returns cudaGetLastError(). */
#ifndef SLUICE_K_JOIN_OOC_H
#define SLUICE_K_JOIN_OOC_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* kw, vw: key and value widths in bytes (4 or 8); bits <= 16. */
/* n: the chunk's rows (= d_offsets[1 << bits]). Out of blocks: *d_status = -1, rows of
 * the partitions that did not get blocks are dropped (the caller fails the query). */
cudaError_t sl_k_ooc_append(const void *d_keys, const void *d_vals, int64_t n, int kw, int vw,
                            const int64_t *d_offsets, int bits, int64_t block_rows,
                            void *const *d_block_ptr, int32_t *d_block_part, int64_t n_blocks,
                            unsigned long long *d_next, int64_t *d_cur, int64_t *d_fill,
                            int64_t *d_plan, int32_t *d_status, cudaStream_t stream);

/* Reads n blocks back (zero-copy for host blocks): block i's d_rows[i] keys and values go
 * to rows [d_at[i], d_at[i] + d_rows[i]) of d_keys / d_vals. One thread block per block. */
cudaError_t sl_k_ooc_gather(const void *const *d_ptr, const int64_t *d_rows, const int64_t *d_at,
                            int64_t n, int64_t block_rows, int kw, int vw, void *d_keys,
                            void *d_vals, cudaStream_t stream);

/* Gathers pieces that are in device memory (the out-of-core join's cached chunks) by a
 * kernel: piece i's rows[i] keys at k[i] and values at v[i] go to rows [at[i], at[i] +
 * rows[i]) of d_keys / d_vals (copy engines took some microseconds a piece for the same
 * device-to-device copies). At most SL_K_OOC_PIECES pieces a launch, passed by value. */
#define SL_K_OOC_PIECES 48
struct sl_k_ooc_pieces {
    const void *k[SL_K_OOC_PIECES], *v[SL_K_OOC_PIECES];
    int64_t rows[SL_K_OOC_PIECES], at[SL_K_OOC_PIECES];
    int n;
};
cudaError_t sl_k_ooc_gather_pieces(const struct sl_k_ooc_pieces *p, int kw, int vw,
                                   void *d_keys, void *d_vals, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_K_JOIN_OOC_H */
