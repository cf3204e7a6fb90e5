/* Expression programs for the GPU: a bound expression compiled into the postfix program
 * of sluice_k/expr_prog.h (expr_prog.c), the per-code tables of its dictionary string
 * predicates, and the GPU filter and project built on them (expr_cuda.c). */
#ifndef SLUICE_EXPR_PROG_H
#define SLUICE_EXPR_PROG_H

#include "expr.h"
#include "sluice_k/expr_conj.h"
#include "sluice_k/expr_prog.h"
#include "sluice_k/expr_reg.h"

/* Dictionary predicates per program (each a SL_XP_DICT instruction and its table). */
#define SL__XP_MAX_DICTS 16

struct sl__xp {
    struct sl_xp_prog prog;
    int pos[SL_XP_MAX_INS];          /* each instruction's position in the text */
    int n_dicts;
    int dict_ins[SL__XP_MAX_DICTS];  /* the SL_XP_DICT instruction ... */
    int dict_node[SL__XP_MAX_DICTS]; /* ... and the expression node it evaluates */
    enum sl__expr_vk vk;             /* the result's kind and stored type */
    enum sl_type type;
    bool reg_ok;                     /* prog runs in registers too (expr_reg.c) */
    struct sl_xr_prog reg;
};

/* Compiles bound expression e (whose input schema is `in`) into *x. SL_OK, or
 * SL_EUNSUPPORTED with the reason in `why` (a construct the GPU program does not cover:
 * strings other than dictionary predicates, CAST, LIKE on plain strings, intervals added
 * to columns, an expression past the program's limits). */
int sl__xp_compile(const struct sl__expr *e, const sl_schema_t *in, struct sl__xp *x, char *why,
                   size_t why_len);

/* Fills tables with the 0/1 results of every dictionary predicate of x over the
 * dictionaries of batch b (its DICT columns' host dictionaries), one table after the
 * other, and patches each SL_XP_DICT instruction of *prog (a copy of x->prog) with its
 * table's offset. *n_bytes: the bytes used. tables has room for `cap` bytes; SL_ENOSPC
 * when that is too small (*n_bytes then says how much is needed). */
int sl__xp_tables(const struct sl__expr *e, const struct sl__xp *x, const sl_batch_t *b,
                  struct sl_xp_prog *prog, uint8_t *tables, int64_t cap, int64_t *n_bytes);

/* How a column of type t is read and written (enum sl_xp_store), or -1 (strings). */
int sl__xp_store_of(enum sl_type t);

/* Fills c with the column slots of prog over batch b (device or host memory alike). */
void sl__xp_cols(const struct sl_xp_prog *prog, const sl_batch_t *b, struct sl_xp_cols *c);

/* The message for an error a program reported at instruction `ins` on row `row`. */
void sl__xp_error_text(const struct sl__expr *e, const struct sl__xp *x, int code, int ins,
                       int64_t row, char *buf, size_t len);

/* The per-entry 0/1 results of predicate node `node` (on_dict) over a dictionary of n
 * strings (offsets, chars): the CPU evaluator's own loop (expr_eval.c). */
void sl__expr_dict_hits(const struct sl__expr *e, int node, int64_t n, const int32_t *offsets,
                        const char *chars, uint8_t *out);

/* Whether program p (a filter's predicate, its dictionary tables' offsets patched in)
 * is an OR of ANDs of simple tests, filled into *j (expr_conj.c): then sl__xj_row gives the
 * filter's answer for every row, without the interpreter. */
bool sl__xj_from_prog(const struct sl_xp_prog *p, struct sl_xj_conj *j);

/* Whether program p runs in registers (sluice_k/expr_reg.h), filled into *x
 * (expr_reg.c): then sl__xr_row answers most rows without the interpreter. */
bool sl__xr_from_prog(const struct sl_xp_prog *p, struct sl_xr_prog *x);

#endif /* SLUICE_EXPR_PROG_H */
