/* GPU sort of signed integer keys with an optional value column (issue 6): CUB's
 * DeviceRadixSort (onesweep for large inputs) over all key bits, ascending or
 * descending, stable (equal keys keep their input order, as the CPU sort does).
 * STYLE.md §8: two-call temp storage (d_temp == NULL: *temp_bytes = need), stream last,
 * never allocates or synchronizes, returns cudaGetLastError(). n == 0 launches nothing.
 *
 * key_bytes 4 (int32) or 8 (int64); val_bytes 0 (keys only: vals ignored), 4 or 8
 * (any 4- or 8-byte payload, moved bit for bit). keys_in/vals_in are not modified.
 * Payloads beyond one: sort (key, row id) pairs (vals = sl_k_iota_u32 row ids, 4 bytes)
 * and gather each column by the sorted ids (sl_k_gather_b32/b64, sluice_k/columns.h).
 * Limits: n < 2^31. */
#ifndef SLUICE_K_SORT_H
#define SLUICE_K_SORT_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

cudaError_t sl_k_sort_pairs(void *d_temp, size_t *temp_bytes, int key_bytes, int desc,
                            const void *d_keys_in, void *d_keys_out, const void *d_vals_in,
                            void *d_vals_out, int val_bytes, int64_t n, cudaStream_t stream);
/* The same, ascending, on the low `bits` bits (1 to 8 * key_bytes) of the keys' codes
 * only (a key with its sign bit flipped: CUB's order of signed keys): for keys whose
 * codes all share their higher bits (a key range of the out-of-core sort-merge join),
 * fewer radix passes. The temp it needs is at most sl_k_sort_pairs's for n. */
cudaError_t sl_k_sort_pairs_bits(void *d_temp, size_t *temp_bytes, int key_bytes, int bits,
                                 const void *d_keys_in, void *d_keys_out, const void *d_vals_in,
                                 void *d_vals_out, int val_bytes, int64_t n, cudaStream_t stream);

/* Sort codes of keys that are not signed 32- or 64-bit integers, so that signed order of
 * the codes (sl_k_sort_pairs) is the keys' order: d_keys holds n keys of key_bytes (1,
 * 2, 4 or 8) bytes, signed or not (bools as unsigned bytes); d_codes gets int32 codes
 * for keys of up to 4 bytes (widened), int64 ones for 8-byte keys (unsigned keys with
 * their top bit flipped). */
cudaError_t sl_k_sort_codes(const void *d_keys, int key_bytes, int is_signed, int64_t n,
                            void *d_codes, cudaStream_t stream);

/* The partition operator's partition numbers (operators/partition/part_int.h): for a
 * key k (4 or 8 bytes, as unsigned, zero-extended) r = hash ? (k * 0x9E3779B97F4A7C15)
 * >> (64 - bits) : k, and d_pid[i] = r & (2^bits - 1). 1 <= bits <= 20. Sorting
 * (pid, row id) pairs on bits [0, bits) (sl_k_radix_rows_k32, join_gftr.h) then gives
 * the stable partitioning. */
cudaError_t sl_k_part_ids(const void *d_keys, int key_bytes, int64_t n, int bits, int hash,
                          uint32_t *d_pid, cudaStream_t stream);
/* d_off[p] = first index of partition p in sorted partition numbers, p in [0, fanout];
 * d_off[fanout] = n. One binary search per partition. */
cudaError_t sl_k_part_bounds(const uint32_t *d_pid_sorted, int64_t n, int64_t fanout,
                             int64_t *d_off, cudaStream_t stream);

/* Stable sort of (partition number, row id) pairs on the numbers' low `bits` bits (all
 * numbers < 2^bits: fewer radix passes than sl_k_sort_pairs's 32); temp as there. */
cudaError_t sl_k_sort_pids(void *d_temp, size_t *temp_bytes, const uint32_t *d_pid_in,
                           uint32_t *d_pid_out, const uint32_t *d_ids_in, uint32_t *d_ids_out,
                           int bits, int64_t n, cudaStream_t stream);
/* Histograms of partition numbers per chunk of chunk_rows rows (the pipelined exchange
 * of the multi-device join): d_hist[c * fanout + p] = rows i of chunk c (i / chunk_rows
 * == c) with d_pid[i] == p, for the ceil(n / chunk_rows) chunks (cleared first).
 * fanout <= 4096, chunk_rows < 2^32. */
cudaError_t sl_k_part_hist(const uint32_t *d_pid, int64_t n, int64_t chunk_rows,
                           int64_t fanout, uint32_t *d_hist, cudaStream_t stream);
/* Range bounds of a multi-device sort (splitters): d_pos[j] = the number of keys in
 * d_sorted (n int64 keys, ascending) smaller than d_values[j], for j in [0, m): one
 * binary search per value, one thread each. */
cudaError_t sl_k_lower_bounds_i64(const int64_t *d_sorted, int64_t n, const int64_t *d_values,
                                  int m, int64_t *d_pos, cudaStream_t stream);
/* The same over the out-of-core sort's key codes (ooc_merge.c's code_at: the key's bits
 * with the sign flipped, all of them inverted when descending, so that codes ascend in
 * the sort's order): d_pos[j] = the number of the n sorted keys (int32 when key_bytes is
 * 4, else int64; sorted descending when desc) whose code is below d_codes[j], for j in
 * [0, m). The splits of a sorted run at a pass-2 bucket's splitters (issue 23). */
cudaError_t sl_k_lower_bounds_codes(const void *d_sorted, int key_bytes, int desc, int64_t n,
                                    const uint64_t *d_codes, int64_t m, int64_t *d_pos,
                                    cudaStream_t stream);
/* The same over a packed run (sluice_k/ooc_pack.h: n 8-byte rows, the code in the high
 * half, ascending): d_pos[j] = the rows whose code is below d_codes[j]. */
cudaError_t sl_k_lower_bounds_packed(const uint64_t *d_sorted, int64_t n,
                                     const uint64_t *d_codes, int64_t m, int64_t *d_pos,
                                     cudaStream_t stream);
/* d_out[i] = the width-byte value (4 or 8) at address d_addrs[i], for i in [0, n): the
 * out-of-core sort's samples of keys held in GPU batches (issue 23). Every address must
 * be readable from the stream's device; the tables may be mapped pinned host memory. */
cudaError_t sl_k_gather_addrs(const void *const *d_addrs, int width, void *d_out, int64_t n,
                              cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_K_SORT_H */
