/* Launchers of the GPU filter and project (kernels/expr): expression programs
 * (sluice_k/expr_prog.h) run over a batch's columns, the selection compacted with CUB,
 * columns gathered by the selected rows. STYLE.md §8: stream last, no allocation or
 * synchronization inside, cudaGetLastError() after the launch; n == 0 launches nothing.
 */
#ifndef SLUICE_K_EXPR_H
#define SLUICE_K_EXPR_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "sluice_k/expr_conj.h"
#include "sluice_k/expr_prog.h"
#include "sluice_k/expr_reg.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The first error a kernel met (code 0: none): SL_XP_EOVERFLOW or SL_XP_EBAD, the
 * instruction and the row. Zero it before the launch. */
struct sl_k_expr_err {
    int32_t code;
    int32_t ins;
    int64_t row;
};

/* d_flags[r] = 1 where the program gives TRUE on row r (0 for FALSE and NULL), r < n. */
cudaError_t sl_k_expr_flags(const struct sl_xp_prog *prog, const struct sl_xp_cols *cols,
                            const uint8_t *d_tables, int64_t n, uint8_t *d_flags,
                            struct sl_k_expr_err *d_err, cudaStream_t stream);

/* The same flags for a predicate that is an OR of ANDs of simple tests (expr_conj.h):
 * d_flags[r] = sl__xj_row(conj, cols, d_tables, r). These tests cannot fail. */
cudaError_t sl_k_expr_conj_flags(const struct sl_xj_conj *conj, const struct sl_xp_cols *cols,
                                 const uint8_t *d_tables, int64_t n, uint8_t *d_flags,
                                 cudaStream_t stream);

/* The rows r < n where d_flags[r] != 0, in order, into d_idx; their count into
 * *d_count. CUB's two-phase temporary storage: a NULL d_temp only sets *temp_bytes. */
cudaError_t sl_k_expr_select(void *d_temp, size_t *temp_bytes, const uint8_t *d_flags,
                             uint32_t *d_idx, int32_t *d_count, int64_t n, cudaStream_t stream);

/* Output validity: bit j of d_out (words of 32 bits, (k + 31) / 32 of them) is bit
 * voff + d_idx[j] of d_valid (Arrow's LSB-first bytes). */
cudaError_t sl_k_expr_gather_valid(const uint8_t *d_valid, int64_t voff, const uint32_t *d_idx,
                                   uint32_t *d_out, int64_t k, cudaStream_t stream);

/* Fixed-width columns gathered together (the filter's output): dst[c][j] =
 * src[c][d_idx[j]] for j < k, values of width[c] bytes (1, 2, 4, 8 or 16; 16-byte
 * columns 16-byte aligned). */
#define SL_K_GATHER_COLS 16
struct sl_k_gather_cols {
    int32_t n;
    int32_t width[SL_K_GATHER_COLS];
    const void *src[SL_K_GATHER_COLS];
    void *dst[SL_K_GATHER_COLS];
};
cudaError_t sl_k_expr_gather_cols(const struct sl_k_gather_cols *g, const uint32_t *d_idx,
                                  int64_t k, cudaStream_t stream);

/* Project: the program's value of every row r < n stored as `store` (enum sl_xp_store:
 * the output column's type) at d_out, zero where NULL, its validity into d_valid
 * ((n + 31) / 32 words), and its NULL rows added to *d_nulls. */
cudaError_t sl_k_expr_project(const struct sl_xp_prog *prog, const struct sl_xp_cols *cols,
                              const uint8_t *d_tables, int64_t n, int store, void *d_out,
                              uint32_t *d_valid, unsigned long long *d_nulls,
                              struct sl_k_expr_err *d_err, cudaStream_t stream);

/* The same for a program that runs in registers too (reg: sl__xr_from_prog of prog):
 * rows by sl__xr_row, those it is unsure of by the interpreter. prog reads no
 * dictionary tables. */
cudaError_t sl_k_expr_project_reg(const struct sl_xr_prog *reg, const struct sl_xp_prog *prog,
                                  const struct sl_xp_cols *cols, int64_t n, int store,
                                  void *d_out, uint32_t *d_valid, unsigned long long *d_nulls,
                                  struct sl_k_expr_err *d_err, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_K_EXPR_H */
