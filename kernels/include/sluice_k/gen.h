/* The data generators on the GPU (gen.keys, gen.uniform, gen.sequence, gen.blobs): each
 * launcher writes rows first .. first+n-1 of a generated column into device memory, with
 * the per-row functions of sluice_k/gen_math.h that the CPU operators use, so the values
 * are the CPU's bit for bit (gen.blobs: see below). STYLE.md §8 launchers: stream last,
 * no allocation or synchronization inside, the result of cudaGetLastError() after the
 * launch; n == 0 launches nothing.
 *
 * Validity bitmaps (d_valid, NULL for none): (n + 31) / 32 words; bit i (LSB first) of
 * word i / 32 is 1 when row first+i is not NULL, and the bits from n on are 1: in memory
 * this is the host layout (bit i of byte i / 8), as sl_batch_column_validity makes it.
 */
#ifndef SLUICE_K_GEN_H
#define SLUICE_K_GEN_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "sluice_k/gen_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* gen.keys' key column (sl__gen_keys_at), int64 when key64 else int32, NULL keys 0.
 * Not for Zipf keys (k->zipf > 0): cudaErrorInvalidValue. */
cudaError_t sl_k_gen_keys(const struct sl__gen_keys *k, int key64, int64_t first, int64_t n,
                          void *d_keys, uint32_t *d_valid, cudaStream_t stream);

/* gen.keys' payload column p_j (sl__gen_payload) converted to `type`. */
cudaError_t sl_k_gen_payload(enum sl__gen_vtype type, int j, int64_t first, int64_t n,
                             void *d_out, cudaStream_t stream);

/* gen.uniform's column (u->type), NULL rows 0 and cleared in d_valid when
 * u->null_rate > 0 (d_valid is then required). */
cudaError_t sl_k_gen_uniform(const struct sl__gen_uni *u, int64_t first, int64_t n, void *d_out,
                             uint32_t *d_valid, cudaStream_t stream);

/* gen.sequence: d_out[i] = start + (first + i) * step, int64 when is64 else int32 (the
 * caller checked that the values fit). */
cudaError_t sl_k_gen_sequence(int64_t start, int64_t step, int is64, int64_t first, int64_t n,
                              void *d_out, cudaStream_t stream);

/* Columns per sl_k_gen_blobs_f32 call. */
#define SL_K_GEN_BLOBS_COLS 16

/* gen.blobs, float32: columns f_{j0} .. f_{j0+nd-1} (nd <= SL_K_GEN_BLOBS_COLS) of points
 * first .. first+n-1 into d_cols[0 .. nd-1] (a host array of device pointers), and the
 * label column into d_label when it is not NULL. The centres are recomputed on the GPU
 * (exact, sl__gen_centre). The coordinates are the CPU's double values rounded to
 * float32, up to the last ulp of CUDA's log and cos: equal, or rarely 1 float32 ulp
 * apart. */
cudaError_t sl_k_gen_blobs_f32(uint64_t seed, int64_t k, int dims, double spread, int64_t first,
                               int64_t n, int j0, int nd, float *const *d_cols, int32_t *d_label,
                               cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_K_GEN_H */
