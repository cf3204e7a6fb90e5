/* Expressions: the small language of filter predicates and project columns, parsed from
 * option text, type-checked against a schema, and evaluated vectorized over batches.
 * Scans use the same calls to evaluate pushed-down predicates. docs/EXPRESSIONS.md has
 * the full semantics; in short:
 *
 * Grammar (keywords case-insensitive; positions are 1-based characters of the text):
 *   expr    := or
 *   or      := and (OR and)*
 *   and     := not (AND not)*
 *   not     := NOT not | cmp
 *   cmp     := sum [ (= | == | != | <> | < | <= | > | >=) sum
 *                  | [NOT] IN ( literal, ... ) | [NOT] BETWEEN sum AND sum
 *                  | [NOT] LIKE 'pattern' | IS [NOT] NULL ]
 *   sum     := prod ((+ | -) prod)*
 *   prod    := unary ((* | / | %) unary)*
 *   unary   := - unary | primary
 *   primary := integer | decimal | float | 'string' | TRUE | FALSE | NULL | column | ( expr )
 *            | DATE 'yyyy-mm-dd' | TIMESTAMP 'yyyy-mm-dd hh:mm:ss[.ffffff]'
 *            | INTERVAL ('n' | n) (DAY | MONTH | YEAR)[S]
 *            | CAST ( expr AS type )            type: any sl_type_parse name
 *            | CASE (WHEN expr THEN expr)+ [ELSE expr] END
 *            | COALESCE ( expr, ... ) | LENGTH ( expr ) | CHAR_LENGTH ( expr )
 *            | SUBSTRING ( expr FROM expr [FOR expr] ) | SUBSTRING ( expr, expr [, expr] )
 *            | EXTRACT ( (YEAR | MONTH | DAY) FROM expr )
 * A column is [A-Za-z_][A-Za-z0-9_.]*; a number with a '.' and no exponent is a decimal
 * literal (DECIMAL(digits, decimals), as DuckDB), one with an exponent is a float; a
 * string literal doubles its quotes ('it''s').
 *
 * Value kinds: integers of every width (int64 during evaluation), floats (double),
 * decimals (scaled int128 during evaluation, typed decimal(p,s) as DuckDB types them;
 * uint64 columns evaluate as decimal(20,0)), booleans, strings (views of bytes), dates
 * (days) and timestamps (microseconds).
 *   - Integer arithmetic gives int64; + - * and unary minus that overflow are an error
 *     (SL_EOVERFLOW), never a wrap. Integer / and % by zero give NULL; / truncates
 *     toward zero, % takes the sign of the dividend (as C).
 *   - Float arithmetic gives float64 (IEEE). Integer columns and float columns do not
 *     mix implicitly (SL_ETYPE, with a CAST hint); literals adapt to the other side, and
 *     decimals meeting floats become floats (as DuckDB).
 *   - Decimal + - give scale max(s1,s2) and precision max(p1-s1,p2-s2)+scale+1, * gives
 *     scale s1+s2 and precision p1+p2 (18 when both operands fit 18 digits, checked),
 *     capped at 38; / on decimals gives float64 (as DuckDB). Integers meeting decimals are
 *     decimal(3|5|10|19|20, 0) by width. Results that do not fit are SL_EOVERFLOW.
 *   - Comparisons, IN, BETWEEN, CASE and COALESCE bring operands to one kind: numbers
 *     as above, dates with timestamps as timestamps, strings by bytes. Floats order NaN
 *     above every other value and equal to itself.
 *   - CAST converts between every pair of types that has a meaning; a value that does
 *     not fit fails the query with a message naming it.
 * Nulls follow SQL: operators with a NULL operand give NULL; AND and OR are three-valued;
 * IS [NOT] NULL is never NULL; CASE without ELSE gives NULL. Both sides of AND/OR and
 * every CASE branch are evaluated, so an overflow in any of them fails the query.
 *
 * Thread safety: a bound expression is immutable and may be evaluated by many threads
 * at once, each with its own struct sl__expr_scratch.
 */
#ifndef SLUICE_EXPR_H
#define SLUICE_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* Rows evaluated at a time (the length of every intermediate vector). */
#define SL__EXPR_VEC 1024

/* Most nodes (operators, operands and literals) in one expression; evaluation recurses
 * once per level of the tree, so this also bounds the stack depth. */
#define SL__EXPR_MAX_NODES 2000

/* Messages quote at most this many characters of the expression text. */
#define SL__EXPR_ECHO 120

/* The value kind of a node during evaluation. INTERVAL is a literal's kind only. */
enum sl__expr_vk {
    SL__VK_INT = 0, SL__VK_FLOAT = 1, SL__VK_BOOL = 2, SL__VK_DEC = 3, SL__VK_STR = 4,
    SL__VK_DATE = 5, SL__VK_TS = 6, SL__VK_INTERVAL = 7
};

/* A string value of a result vector. */
struct sl__expr_str {
    const char *p;
    int64_t n;
};

struct sl__expr;

/* Parses text[begin, end) (end < 0: to the end of text). Positions in messages count
 * from the start of `text`, so an expression cut from a longer option reports places
 * in that option. On failure returns SL_EPARSE (or SL_ENOMEM), writes a message with
 * the position and a hint to err, and sets *out to NULL. */
int sl__expr_parse(const char *text, int begin, int end, struct sl__expr **out, char *err,
                   size_t err_len);
/* Resolves column names against `schema` and checks types. SL_ENOTFOUND for an unknown
 * column (the message names it, its position and the columns there are), SL_ETYPE for a
 * type mismatch, SL_EOVERFLOW for a literal out of range. */
int sl__expr_bind(struct sl__expr *e, const sl_schema_t *schema, char *err, size_t err_len);
void sl__expr_free(struct sl__expr *e);

/* After bind: the value kind of the result and the column type it has when stored
 * (booleans as bool, strings as utf8, decimals with their precision and scale). */
enum sl__expr_vk sl__expr_kind(const struct sl__expr *e);
enum sl_type sl__expr_type(const struct sl__expr *e);
/* The input column index if the expression is a bare column reference, else -1. */
int sl__expr_column(const struct sl__expr *e);
/* The name of a bare column reference (NULL otherwise). */
const char *sl__expr_column_name(const struct sl__expr *e);

/* Per-thread evaluation buffers for one bound expression. */
struct sl__expr_scratch {
    const struct sl__expr *e;
    void *mem;
    size_t bytes;
    void *aux;               /* per-node buffers (computed strings, dictionary results) */
};
int sl__expr_scratch_init(struct sl__expr_scratch *s, const struct sl__expr *e);
void sl__expr_scratch_fini(struct sl__expr_scratch *s);

/* The result of one evaluation: n values of kind vk (i for INT, DATE (days) and TS
 * (microseconds), f for FLOAT, b for BOOL (0/1), d for DEC (scaled by the type's scale),
 * s for STR) and null (1 = NULL per row; NULL pointer when no row is null). Points into
 * the scratch and the batch, valid until the scratch's next use. */
struct sl__expr_vec {
    enum sl__expr_vk vk;
    int64_t n;
    const int64_t *i;
    const double *f;
    const uint8_t *b;
    const __int128 *d;
    const struct sl__expr_str *s;
    const uint8_t *null;
};

/* Evaluates rows [start, start + n) of batch b (n <= SL__EXPR_VEC), whose schema must
 * be the one bound. Returns SL_OK, or SL_EOVERFLOW with a message naming the operator,
 * its position and the row. */
int sl__expr_eval(const struct sl__expr *e, const sl_batch_t *b, int64_t start, int64_t n,
                  struct sl__expr_scratch *s, struct sl__expr_vec *out, char *err,
                  size_t err_len);

/* ---------------- predicates on batches (pred.c) ----------------
 * Shared by the filter operator and the scans' where= option. */

/* A term of a conjunction the selection can test on raw column values (pred_fast.c):
 * column `col` OP a constant, or OP column `col2`, both as stored integers (int32,
 * int64, date32, timestamp, decimal(p <= 18) at one scale). */
#define SL__PRED_TERMS 8
struct sl__pred_term {
    int op;                             /* enum ex_op: EQ, NE, LT, LE, GT, GE */
    int col, col2;                      /* col2 = -1: against `k` */
    int64_t k;
};

/* Per-worker state of a predicate: evaluation buffers and the selection vector. */
struct sl__pred_state {
    struct sl__expr_scratch scratch;
    int64_t *sel;
    int64_t sel_cap;
    int fast;                           /* 0: not yet looked at; 1: terms below; -1: none */
    int n_terms;
    struct sl__pred_term terms[SL__PRED_TERMS];
};
/* Fills s->terms when the whole predicate is an AND of such terms (s->fast = 1), else
 * s->fast = -1 (pred_fast.c). */
void sl__pred_fast_init(const struct sl__expr *e, struct sl__pred_state *s,
                        const sl_schema_t *in);
/* The rows of b where every term holds, into sel (room for all rows): their count, or
 * -1 when a column it reads has nulls (then the general evaluation runs). */
int64_t sl__pred_fast_select(const struct sl__pred_state *s, const sl_batch_t *b, int64_t *sel);
void sl__pred_state_fini(struct sl__pred_state *s);
/* Parses `text` and binds it to the node's output schema as declared so far (for a
 * scan: after its columns); *out = NULL for empty text. Errors go through sl_bind_fail. */
int sl__pred_bind(sl_bind_t *b, const char *text, struct sl__expr **out);
/* The same, bound to `schema` (an operator's input: the aggregate's where=). */
int sl__pred_bind_to(sl_bind_t *b, const char *text, const sl_schema_t *schema,
                     struct sl__expr **out);
/* The rows of `in` where the predicate is TRUE: *out is `in` itself (a new reference)
 * when all pass, a zero-copy slice when they form one run, a compacted batch otherwise,
 * or NULL when none pass. `in` stays the caller's. Errors are recorded on the task. */
int sl__pred_apply(sl_task_t *t, const struct sl__expr *e, struct sl__pred_state *s,
                   sl_batch_t *in, sl_batch_t **out);

/* ---------------- predicates on device batches ----------------
 * Shared by the GPU filter and operators that take a where= of their own on the GPU (the
 * aggregate: its kernels read the passing rows by number instead of a gathered copy). */

/* A bound predicate compiled for the GPU (expr_prog.c; opaque here). */
struct sl__xp;
/* The GPU program of predicate e (bound to `in`), or NULL when the GPU cannot run it
 * (why says why) or memory ran out. */
struct sl__xp *sl__xp_new(const struct sl__expr *e, const sl_schema_t *in, char *why,
                          size_t why_len);
void sl__xp_delete(struct sl__xp *x);
/* Whether batch b (NULL: any) is small enough for sl__xp_select_gpu, whose row numbers
 * and count are 32-bit (CUB's counts): the GPU filter's and the GPU group-by's where=
 * take no batch of 2^31 - 1 rows or more. */
static inline bool sl__xp_rows_fit(const sl_batch_t *b)
{
    return !b || sl_batch_num_rows(b) < INT32_MAX;
}
/* CUDA builds (expr_cuda.c). The numbers (ascending) of the rows of device batch `in`
 * where x (compiled from e) is TRUE into d_idx (device memory with room for every row) and
 * their count into *k: one wait, for the count. A data error fails the task. */
int sl__xp_select_gpu(sl_task_t *t, const struct sl__expr *e, const struct sl__xp *x,
                      sl_batch_t *in, uint32_t *d_idx, int64_t *k);
/* Rows d_idx[0 .. k) of device batch `in` (every column, validity and strings too) as a
 * new device batch *out: the GPU filter's gather. */
int sl__gpu_take(sl_task_t *t, sl_batch_t *in, const uint32_t *d_idx, int64_t k,
                 sl_batch_t **out);

#endif /* SLUICE_EXPR_H */
