/* The out-of-core sort's bucket gather (issue 23): one kernel reads a pass-2 bucket's
 * slices of every sorted run straight from pinned host memory (zero-copy over UVA) into
 * device columns, instead of one copy call per run and column (docs/OUT_OF_CORE.md).
 * STYLE.md §8: never allocates or synchronizes, stream last, returns cudaGetLastError().
 *
 * The bucket has k slices: slice j is rows [d_lo[j], d_lo[j] + d_at[j + 1] - d_at[j]) of
 * run j, and goes to rows [d_at[j], d_at[j + 1]) of the bucket (d_at[0] = 0, d_at[k] =
 * its rows, non-decreasing; empty slices are fine). Column c of run j starts at
 * d_src[j * n_cols + c] (host memory the device can read: pinned and mapped, or device
 * memory; 128-byte aligned), each column w->width[c] bytes a row (4 or 8). So that every
 * warp reads whole aligned lines, slice j is read from its first row rounded down to a
 * multiple of SL_K_OOC_GATHER_ALIGN rows to its end rounded up: d_vat[j + 1] - d_vat[j]
 * = that many rows (d_vat[0] = 0; the caller computes it, sl_k_ooc_gather_span),
 * vrows = d_vat[k]; rows outside the slice are not read. Limits: n_cols <= 64,
 * vrows < 2^40. */
#ifndef SLUICE_K_OOC_GATHER_H
#define SLUICE_K_OOC_GATHER_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SL_K_OOC_GATHER_MAX_COLS 64
#define SL_K_OOC_GATHER_ALIGN 32 /* rows: 128 bytes of 4-byte columns */

/* Virtual rows of a slice of n rows from row lo (d_vat's steps). */
static inline int64_t sl_k_ooc_gather_span(int64_t lo, int64_t n)
{
    const int64_t a = SL_K_OOC_GATHER_ALIGN;
    return n > 0 ? (lo + n + a - 1) / a * a - lo / a * a : 0;
}

/* The bucket's destination: device column c gets width[c] bytes a row. */
struct sl_k_ooc_gather_dst {
    void *col[SL_K_OOC_GATHER_MAX_COLS];
    unsigned char width[SL_K_OOC_GATHER_MAX_COLS];
    int n_cols;
};

cudaError_t sl_k_ooc_bucket_gather(const void *const *d_src, const int64_t *d_lo,
                                   const int64_t *d_at, const int64_t *d_vat, int64_t k,
                                   int64_t vrows, const struct sl_k_ooc_gather_dst *w,
                                   cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_K_OOC_GATHER_H */
