/* Expressions: the small language of filter predicates and project columns, parsed from
 * option text, type-checked against a schema, and evaluated vectorized over batches.
 * Scans will use the same calls to evaluate pushed-down predicates.
 *
 * Grammar (keywords case-insensitive; positions are 1-based characters of the text):
 *   expr    := or
 *   or      := and (OR and)*
 *   and     := not (AND not)*
 *   not     := NOT not | cmp
 *   cmp     := sum [ (= | == | != | <> | < | <= | > | >=) sum
 *                  | [NOT] IN ( literal, ... ) | IS [NOT] NULL ]
 *   sum     := prod ((+ | -) prod)*
 *   prod    := unary ((* | / | %) unary)*
 *   unary   := - unary | primary
 *   primary := integer | float | column | ( expr )
 *            | CAST ( expr AS int32 | int64 | float32 | float64 )
 * A column is [A-Za-z_][A-Za-z0-9_.]*; a float literal has a '.' or an exponent.
 *
 * Types. Evaluation works on three value kinds: integers (int32 and int64 columns,
 * widened to int64), floats (float32 and float64, widened to double) and booleans.
 *   - Arithmetic on integers gives int64; + - * and unary minus that overflow int64 are
 *     an error (SL_EOVERFLOW), never a wrap. Integer / and % by zero give NULL (as a
 *     division by a NULL would); INT64_MIN / -1 is an overflow error, INT64_MIN % -1 = 0.
 *     / truncates toward zero, % takes the sign of the dividend (as C).
 *   - Arithmetic on floats gives float64 (IEEE: x/0 is inf or NaN; % is fmod).
 *   - Integers and floats do not mix implicitly (SL_ETYPE, with a CAST hint), except
 *     that an integer literal next to a float operand is read as a float.
 *   - Comparisons take two integers or two floats and give a boolean; AND, OR, NOT
 *     take booleans. IN lists hold literals of one kind matching the operand.
 *   - CAST converts between the numeric types: to int32 checks the range (error if
 *     out of range), float to integer truncates toward zero (error for NaN or out of
 *     range), to float32 rounds to float precision.
 * Nulls follow SQL: arithmetic and comparisons with a NULL operand give NULL; AND and
 * OR are three-valued (FALSE AND NULL = FALSE, TRUE OR NULL = TRUE); x IN (...) is NULL
 * for a NULL x; IS [NOT] NULL is never NULL. Both sides of AND/OR are evaluated, so an
 * overflow in either fails the query even where the other side decides the result.
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

/* The value kind of a node during evaluation. */
enum sl__expr_vk { SL__VK_INT = 0, SL__VK_FLOAT = 1, SL__VK_BOOL = 2 };

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
 * (booleans are stored as int32 0/1). */
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
};
int sl__expr_scratch_init(struct sl__expr_scratch *s, const struct sl__expr *e);
void sl__expr_scratch_fini(struct sl__expr_scratch *s);

/* The result of one evaluation: n values of kind vk (i for INT, f for FLOAT, b for
 * BOOL, 0/1) and null (1 = NULL per row; NULL pointer when no row is null). Points into
 * the scratch, valid until its next use. */
struct sl__expr_vec {
    enum sl__expr_vk vk;
    int64_t n;
    const int64_t *i;
    const double *f;
    const uint8_t *b;
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

/* Per-worker state of a predicate: evaluation buffers and the selection vector. */
struct sl__pred_state {
    struct sl__expr_scratch scratch;
    int64_t *sel;
    int64_t sel_cap;
};
void sl__pred_state_fini(struct sl__pred_state *s);
/* Parses `text` and binds it to the node's output schema as declared so far (for a
 * scan: after its columns); *out = NULL for empty text. Errors go through sl_bind_fail. */
int sl__pred_bind(sl_bind_t *b, const char *text, struct sl__expr **out);
/* The rows of `in` where the predicate is TRUE: *out is `in` itself (a new reference)
 * when all pass, a zero-copy slice when they form one run, a compacted batch otherwise,
 * or NULL when none pass. `in` stays the caller's. Errors are recorded on the task. */
int sl__pred_apply(sl_task_t *t, const struct sl__expr *e, struct sl__pred_state *s,
                   sl_batch_t *in, sl_batch_t **out);

#endif /* SLUICE_EXPR_H */
