/* Types shared by the GPU join launchers beyond the narrow PHJ of join.h (issue 6):
 * join kinds, column lists, and the output description. Plain C.
 *
 * Join kinds (left = the PROBE side S, right = the BUILD side R):
 *  SL_K_JOIN_INNER  one output row per matching (R row, S row) pair.
 *  SL_K_JOIN_SEMI   each S row with at least one match, once (R columns not written).
 *  SL_K_JOIN_ANTI   each S row without a match, once (R columns not written).
 *  SL_K_JOIN_LEFT   inner rows, plus each S row without a match once with NULL R columns.
 *                   NULL marking: R position = SL_K_NULL_POS, R payload columns = 0, and
 *                   (PHJ/NPJ/SMJ alike) the launcher reports how many rows are inner so
 *                   the operator can build Arrow validity (see each header).
 * Keys are compared by value: SQL NULL keys must be filtered by the caller before the
 * join (a NULL key never matches; for ANTI/LEFT the caller adds those S rows itself).
 */
#ifndef SLUICE_K_JOIN_TYPES_H
#define SLUICE_K_JOIN_TYPES_H

#include <stdint.h>

enum { SL_K_JOIN_INNER = 0, SL_K_JOIN_SEMI = 1, SL_K_JOIN_ANTI = 2, SL_K_JOIN_LEFT = 3 };

#define SL_K_NULL_POS 0xFFFFFFFFu /* R position of an unmatched LEFT row */
#define SL_K_MAX_COLS 8           /* columns per side in one sl_k_cols_t */
#define SL_K_MAX_ROW_BYTES 16     /* widest packed row (see sl_k_pack_rows) */

/* A list of device columns of one side: n columns, column c at ptr[c] with width[c]
 * bytes per value (4 or 8). Passed by value to kernels (launchers copy it). For inputs
 * the pointers are read only. */
typedef struct sl_k_cols {
    int n;
    int width[SL_K_MAX_COLS];
    void *ptr[SL_K_MAX_COLS];
} sl_k_cols_t;

/* Where a join writes its rows. Any pointer may be NULL (not written). Rows go to
 * [base, base + count) where base is *d_count on entry for launchers that say "append"
 * and 0 otherwise; nothing is written at or past `capacity`. Positions are 32-bit row
 * indices into the arrays the join read (partitioned or sorted arrays for PHJ/SMJ:
 * GFTR virtual ids; original rows for NPJ). */
typedef struct sl_k_join_out {
    void *keys;           /* key of the row (S key; equal to the R key when matched) */
    uint32_t *r_pos;      /* R position, SL_K_NULL_POS for unmatched LEFT rows */
    uint32_t *s_pos;      /* S position */
    sl_k_cols_t r;        /* R payload columns (unpacked from R rows / gathered) */
    sl_k_cols_t s;        /* S payload columns */
    int64_t capacity;     /* rows that fit */
} sl_k_join_out_t;

#endif /* SLUICE_K_JOIN_TYPES_H */
