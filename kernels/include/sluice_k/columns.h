/* Column utilities for operators on the GPU: row ids, gathers and exact sums
 * (STYLE.md §8 launchers: stream last, no allocation or synchronization inside, the
 * result of cudaGetLastError() after the launch; n == 0 launches nothing).
 *
 * Gathers by 32-bit row ids are what GFTR-style materialization reduces to when the ids
 * come out of a partitioned join in partition order: neighbouring output rows read
 * neighbouring input rows, so the reads stay mostly within cache lines.
 */
#ifndef SLUICE_K_COLUMNS_H
#define SLUICE_K_COLUMNS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* d_out[i] = first + i for i in [0, n). */
cudaError_t sl_k_iota_u32(uint32_t *d_out, int64_t n, uint32_t first, cudaStream_t stream);
cudaError_t sl_k_iota_u64(uint64_t *d_out, int64_t n, uint64_t first, cudaStream_t stream);

/* d_dst[i] = d_src[d_idx[i]] for i in [0, n); 4- or 8-byte values. */
cudaError_t sl_k_gather_b32(const uint32_t *d_src, const uint32_t *d_idx, uint32_t *d_dst,
                            int64_t n, cudaStream_t stream);
cudaError_t sl_k_gather_b64(const uint64_t *d_src, const uint32_t *d_idx, uint64_t *d_dst,
                            int64_t n, cudaStream_t stream);
/* The same for values of `width` bytes (1, 2, 4, 8 or 16: bools, small integers, the
 * rest and decimal128); cudaErrorInvalidValue for another width. */
cudaError_t sl_k_gather_width(const void *d_src, const uint32_t *d_idx, void *d_dst, int width,
                              int64_t n, cudaStream_t stream);

/* d_dst[i] = *d_src for i in [0, n): one value of `width` bytes (1, 2, 4, 8 or 16)
 * repeated, a scalar subquery's value beside every row of a cross join;
 * cudaErrorInvalidValue for another width. */
cudaError_t sl_k_broadcast_width(const void *d_src, void *d_dst, int width, int64_t n,
                                 cudaStream_t stream);
/* d_dst[0..words) all ones when bit `bit` of d_src_validity is set (or d_src_validity is
 * NULL), else all zeros: the validity words of a broadcast value. */
cudaError_t sl_k_broadcast_validity(const uint8_t *d_src_validity, int64_t bit, uint32_t *d_dst,
                                    int64_t words, cudaStream_t stream);

/* d_dst[i] = d_src[i * stride] for i in [0, n) (a sample; one contiguous result to copy
 * back instead of a 2-D copy of n tiny rows); 4- or 8-byte values, stride >= 1. */
cudaError_t sl_k_strided_b32(const uint32_t *d_src, int64_t stride, uint32_t *d_dst, int64_t n,
                             cudaStream_t stream);
cudaError_t sl_k_strided_b64(const uint64_t *d_src, int64_t stride, uint64_t *d_dst, int64_t n,
                             cudaStream_t stream);

/* Copies each of n byte ranges (at most SL_K_COPY_RANGES_MAX; ranges of 0 bytes are
 * skipped) in one launch: dst[i][0, bytes) = src[i][0, bytes), ranges not overlapping.
 * Any alignment (16-byte loads where a range's pointers and length allow, 8-byte where
 * they do, bytes otherwise). One kernel instead of one copy per range: the direct
 * exchange between logical devices of one GPU, whose many small copies were enqueued
 * one after another. Both pointers of a range must be usable from the stream's device
 * (one GPU; a peer's memory only with peer access). cudaErrorInvalidValue for n out of
 * range or a negative length. */
#define SL_K_COPY_RANGES_MAX 64
struct sl_k_copy_range {
    const void *src;
    void *dst;
    int64_t bytes;
};
cudaError_t sl_k_copy_ranges(const struct sl_k_copy_range *ranges, int n, cudaStream_t stream);

/* Adds to *d_count the number of zero bits among validity bits [offset, offset + n) of
 * d_validity (bit i in byte i / 8, least significant first: Arrow's order): the nulls of
 * a column whose null count is not known. */
cudaError_t sl_k_count_nulls(const uint8_t *d_validity, int64_t offset, int64_t n,
                             unsigned long long *d_count, cudaStream_t stream);

/* Sums of n values into d_sum (the caller zeroes it first; sums add up over calls):
 *  i32 -> int64 (cannot overflow below 2^32 rows), f32/f64 -> double;
 *  i64 -> exact: d_sum is two words {low 64 bits, high 64 bits} of a 128-bit two's
 *  complement sum, so the caller can tell whether it fits in int64. */
cudaError_t sl_k_sum_i32(const int32_t *d_in, int64_t n, long long *d_sum, cudaStream_t stream);
cudaError_t sl_k_sum_i64_exact(const int64_t *d_in, int64_t n, unsigned long long *d_sum128,
                               cudaStream_t stream);
cudaError_t sl_k_sum_f32(const float *d_in, int64_t n, double *d_sum, cudaStream_t stream);
cudaError_t sl_k_sum_f64(const double *d_in, int64_t n, double *d_sum, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_K_COLUMNS_H */
