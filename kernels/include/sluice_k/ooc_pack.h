/* Packed runs of the out-of-core sort (issue 23): an int32 key and one 4-byte payload in
 * one 8-byte row, the key's code in the high half (its bits with the sign flipped, all
 * 32 inverted when descending: ooc_merge.c's code_at, so that codes ascend in the sort's
 * order) and the payload's bits in the low half. A keys-only radix sort of those rows on
 * bits [32, 64) orders them as the pair sort orders (key, payload), stably, moving the
 * same bytes; a bucket's slice of a packed run is one copy instead of two.
 * STYLE.md §8: never allocates or synchronizes, stream last, returns cudaGetLastError();
 * n == 0 launches nothing. Limits: n < 2^31 for the sort. */
#ifndef SLUICE_K_OOC_PACK_H
#define SLUICE_K_OOC_PACK_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* d_rows[i] = code(d_keys[i]) << 32 | d_vals[i], for i in [0, n). */
cudaError_t sl_k_ooc_pack(const int32_t *d_keys, const uint32_t *d_vals, int desc, int64_t n,
                          uint64_t *d_rows, cudaStream_t stream);
/* The inverse: d_keys[i] = the key of d_rows[i]'s code, d_vals[i] = its low half. */
cudaError_t sl_k_ooc_unpack(const uint64_t *d_rows, int desc, int64_t n, int32_t *d_keys,
                            uint32_t *d_vals, cudaStream_t stream);
/* Stable sort of n packed rows by their high half (CUB's DeviceRadixSort over a double
 * buffer: no copy of the rows in d_temp). The rows are in d_rows; d_alt (n rows) is the
 * other buffer; on return *in_alt says where the sorted rows are (0: d_rows, 1: d_alt;
 * known when the call returns, before the sort ran). d_temp == NULL: *temp_bytes = what
 * n rows need. */
cudaError_t sl_k_ooc_sort_packed(void *d_temp, size_t *temp_bytes, uint64_t *d_rows,
                                 uint64_t *d_alt, int64_t n, int *in_alt, cudaStream_t stream);
/* The same on the codes' low `bits` bits (1 to 32: bits [32, 32 + bits) of the rows)
 * only, for rows whose codes all share their higher bits: fewer radix passes. The temp
 * it needs is at most sl_k_ooc_sort_packed's for n. */
cudaError_t sl_k_ooc_sort_packed_bits(void *d_temp, size_t *temp_bytes, uint64_t *d_rows,
                                      uint64_t *d_alt, int64_t n, int bits, int *in_alt,
                                      cudaStream_t stream);

/* Narrow runs (issue 23): a sorted packed run goes down and comes back as 6-byte rows, the
 * code's low 16 bits and the payload's 32 (three 16-bit words: code, payload low, payload
 * high), with a table of SL_K_OOC_NARROW_TOP uint32 (the run's first row of each top-16
 * value of the code: its rows below code t << 16), from which the high 16 bits of row p
 * are the last t with table[t] <= p. The rows are sorted, so the table does what the
 * high bits did: the link carries 6 bytes a row instead of 8, twice. Runs < 2^32 rows. */
#define SL_K_OOC_NARROW_TOP 65536
/* d_table[t] = rows of d_rows[0, n) (sorted packed rows) whose code is below t << 16. */
cudaError_t sl_k_ooc_narrow_table(const uint64_t *d_rows, int64_t n, uint32_t *d_table,
                                  cudaStream_t stream);
/* d_out (6 n bytes, 2-byte aligned) = the narrow rows of d_rows[0, n). */
cudaError_t sl_k_ooc_narrow_encode(const uint64_t *d_rows, int64_t n, void *d_out,
                                   cudaStream_t stream);
/* The top-16 code values beside pass 1's cuts of a sorted run (d_rows[0, n), packed), so
 * that pass 2's narrow windows need no search of the tables on the host: boundary x of
 * nc + 2 is row 0 (x = 0), row d_split[x - 1] (x = 1..nc: the run's split at splitter
 * x - 1, as sl_k_lower_bounds_packed writes them) or row n (x = nc + 1); d_tops[2 x] =
 * the top value of the row before it (-1 at row 0), d_tops[2 x + 1] = that of the row at
 * it (-1 at row n). */
cudaError_t sl_k_ooc_split_tops(const uint64_t *d_rows, int64_t n, const int64_t *d_split,
                                int64_t nc, int32_t *d_tops, cudaStream_t stream);
/* The inverse for a bucket of n narrow rows in d_in, the slices of k runs in run order:
 * row i is row d_lo[j] + i - d_at[j] of run j, j the last with d_at[j] <= i (d_at[0] = 0,
 * non-decreasing; empty slices repeat a start). The bucket's rows have top-16 code values
 * in [top0, top0 + tops); d_win[j * pitch + u] = run j's table at top0 + u (u < tops).
 * d_rows[i] = the packed row. */
cudaError_t sl_k_ooc_narrow_decode(const void *d_in, int64_t n, const uint32_t *d_win,
                                   int64_t pitch, int64_t top0, int64_t tops,
                                   const int64_t *d_lo, const int64_t *d_at, int64_t k,
                                   uint64_t *d_rows, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_K_OOC_PACK_H */
