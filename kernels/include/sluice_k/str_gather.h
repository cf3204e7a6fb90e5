/* Strings gathered on the GPU (STYLE.md §8 launchers: stream last, no allocation or
 * synchronization inside, the result of cudaGetLastError() after the launch): views of
 * Arrow's offsets and bytes, and the gather of strings by row ids (lengths, a scan into
 * offsets, the bytes), shared by the join's output and the filter's compaction
 * (operators/common/str_cuda.c).
 */
#ifndef SLUICE_K_STR_GATHER_H
#define SLUICE_K_STR_GATHER_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A string as the kernels read it (16 bytes): a pointer to its bytes in device memory
 * and its length. */
typedef struct sl_k_strview {
    const char *p;
    uint32_t len;
    uint32_t pad;
} sl_k_strview_t;

/* Views of n strings given by n + 1 offsets (int32: _o32, int64: _o64; the first one may
 * be nonzero) into d_chars. */
cudaError_t sl_k_str_views_o32(const int32_t *d_off, const char *d_chars, int64_t n,
                               sl_k_strview_t *d_out, cudaStream_t stream);
cudaError_t sl_k_str_views_o64(const int64_t *d_off, const char *d_chars, int64_t n,
                               sl_k_strview_t *d_out, cudaStream_t stream);

/* Output strings gathered by row ids: d_len[i] = length of d_views[d_ids[i]] for
 * i < valid, 0 for valid <= i < n, and d_len[n] = 0 (n + 1 entries, ready for an
 * exclusive scan into offsets). */
cudaError_t sl_k_str_gather_lengths(const sl_k_strview_t *d_views, const uint32_t *d_ids,
                                    int64_t n, int64_t valid, int64_t *d_len,
                                    cudaStream_t stream);
/* Exclusive prefix sum of n int64 values (CUB's two-phase temp storage). */
cudaError_t sl_k_scan_i64(void *d_temp, size_t *temp_bytes, const int64_t *d_in, int64_t *d_out,
                          int64_t n, cudaStream_t stream);
/* Copies the bytes of output row i (d_views[d_ids[i]], i < valid) to d_chars + d_pos[i]
 * and writes the n + 1 offsets d_pos as off_bytes (4 or 8) wide integers to d_off. */
cudaError_t sl_k_str_gather_bytes(const sl_k_strview_t *d_views, const uint32_t *d_ids,
                                  const int64_t *d_pos, int64_t n, int64_t valid, char *d_chars,
                                  void *d_off, int off_bytes, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_K_STR_GATHER_H */
