/* Inside of expressions: the node array shared by the parser (expr_parse.c), the binder
 * (expr_bind.c) and the evaluator (expr_eval.c with expr_dec.c, expr_str.c and
 * expr_cast.c). */
#ifndef SLUICE_EXPR_INT_H
#define SLUICE_EXPR_INT_H

#include "common/values.h"
#include "expr.h"
#include "sluice_k/expr_prog.h"

enum ex_op {
    EX_COL, EX_INT, EX_FLOAT, EX_DEC, EX_STR, EX_BOOL, EX_INTERVAL,
    EX_NEG, EX_ADD, EX_SUB, EX_MUL, EX_DIV, EX_MOD,
    EX_EQ, EX_NE, EX_LT, EX_LE, EX_GT, EX_GE,
    EX_AND, EX_OR, EX_NOT, EX_IN, EX_NOT_IN, EX_IS_NULL, EX_IS_NOT_NULL, EX_CAST,
    EX_LIKE, EX_NOT_LIKE, EX_SUBSTR, EX_LENGTH, EX_EXTRACT, EX_CASE, EX_COALESCE,
    EX_NULL
};

/* Units of INTERVAL literals and fields of EXTRACT. */
enum ex_unit { EX_DAY = 0, EX_MONTH = 1, EX_YEAR = 2 };

/* LIKE patterns: the fast paths, chosen when the pattern is parsed. */
enum ex_like {
    LIKE_EXACT, LIKE_PREFIX, LIKE_SUFFIX, LIKE_CONTAINS,
    LIKE_SEGMENTS,           /* '%' and literal runs only, e.g. '%special%requests%' */
    LIKE_GENERAL             /* with '_' */
};

struct ex_node {
    enum ex_op op;
    int pos;                 /* 1-based position in the option text */
    int a, b;                /* children (node indices), -1 if none */
    enum sl__expr_vk vk;     /* value kind, set by bind */
    enum sl_type type;       /* stored type of the result (decimals: precision and scale) */
    enum sl__expr_vk ck;     /* comparisons, arithmetic, IN, CASE: the kind operands take */
    int cscale;              /* ... and the decimal scale they take (ck == SL__VK_DEC) */
    bool int_lit;            /* an integer literal (may turn into a float or decimal) */
    bool dec_lit;            /* a decimal literal (may turn into a float) */
    bool null_lit;           /* NULL: takes the kind its neighbours give it */
    int col;                 /* EX_COL: input column index after bind */
    char *name;              /* EX_COL: the name as written */
    char *str;               /* EX_STR, EX_LIKE: the bytes (unescaped) */
    int64_t slen;            /* ... and their length */
    int64_t ival;            /* EX_INT, EX_BOOL, EX_INTERVAL (count); EX_EXTRACT: unit */
    int unit;                /* EX_INTERVAL: enum ex_unit */
    double fval;             /* EX_FLOAT; literals as floats */
    __int128 dval;           /* EX_DEC: the scaled value */
    enum ex_like like;       /* EX_LIKE */
    int list, n_list;        /* IN: literals; SUBSTR, CASE, COALESCE: operands */
    bool on_dict;            /* a predicate of a DICT column (a) and literals: evaluated
                              * once per dictionary entry, then looked up by code */
};

struct sl__expr {
    struct ex_node *nodes;
    int n_nodes, cap_nodes;
    int *list;               /* operand node indices of IN, SUBSTR, CASE, COALESCE */
    int n_list, cap_list;
    int root;
    char *text;              /* copy of the whole option text, for messages */
};

/* ---------------- evaluation internals (shared by the expr_*.c evaluators) ---------- */

/* Per-node state kept in the scratch between evaluations. */
struct ex_aux {
    char *buf;               /* bytes of computed strings (CAST to a string) */
    size_t cap;
    struct sl__dict *dict;   /* the dictionary dict_res was computed for; referenced, so
                              * that it cannot be freed and another take its address */
    uint8_t *dict_res;       /* per dictionary entry: 0, 1 */
    int64_t dict_cap;
};

struct ex_ctx {
    const struct sl__expr *e;
    const sl_batch_t *batch;
    int64_t start, n;
    uint8_t *mem;
    struct ex_aux *aux;
    char *err;
    size_t err_len;
};

#define EX_VAL_BYTES 16
/* Node i's value vector, null vector and "has nulls" flag in the scratch, and two spare
 * vectors for converted operands. */
static inline void *ex_vals(const struct ex_ctx *c, int i)
{
    return c->mem + (size_t)i * SL__EXPR_VEC * EX_VAL_BYTES;
}
static inline uint8_t *ex_nulls(const struct ex_ctx *c, int i)
{
    return c->mem + (size_t)c->e->n_nodes * SL__EXPR_VEC * EX_VAL_BYTES + (size_t)i * SL__EXPR_VEC;
}
static inline uint8_t *ex_has_null(const struct ex_ctx *c, int i)
{
    return c->mem + (size_t)c->e->n_nodes * SL__EXPR_VEC * (EX_VAL_BYTES + 1) + (size_t)i;
}
/* Bytes before the spare vectors: the flags padded so int128 values stay 16-aligned. */
static inline size_t ex_tmp_base(int n_nodes)
{
    return (size_t)n_nodes * SL__EXPR_VEC * (EX_VAL_BYTES + 1) + (((size_t)n_nodes + 15) & ~15u);
}
static inline void *ex_tmp(const struct ex_ctx *c, int k)
{
    return c->mem + ex_tmp_base(c->e->n_nodes) + (size_t)k * SL__EXPR_VEC * EX_VAL_BYTES;
}
static inline bool ex_null_at(const struct ex_ctx *c, int i, int64_t r)
{
    return *ex_has_null(c, i) && ex_nulls(c, i)[r];
}

/* The truth of `op` (EX_EQ .. EX_GE) for a three-way comparison result. */
static inline uint8_t ex_cmp_holds(enum ex_op op, int cmp)
{
    return (uint8_t)sl__xp_cmp_holds((int)op - EX_EQ, cmp);
}

/* Records an evaluation error (message with position and row); returns `code`. */
int ex_fail(struct ex_ctx *c, const struct ex_node *n, int64_t r, int code, const char *fmt, ...)
    SL__PRINTF(5, 6);
void ex_merge_nulls(struct ex_ctx *c, int i, int a, int b);
/* Evaluates node i (and its children) into its vector. */
int ex_eval_node(struct ex_ctx *c, int i);

/* 10^k for k = 0..38. */
__int128 ex_pow10(int k);
/* Operand `i` as int128 decimals of scale `scale` (ints and decimals); rows that do not fit
 * fail (or saturate when `saturate`, for comparisons). Returns the vector or NULL after
 * ex_fail. */
const __int128 *ex_as_dec(struct ex_ctx *c, int i, int scale, int tmp, bool saturate,
                          const struct ex_node *at);
/* Operand `i` as doubles (ints, decimals, floats). */
const double *ex_as_f64(struct ex_ctx *c, int i, int tmp);
/* Operand `i` as microseconds (dates, timestamps). */
const int64_t *ex_as_ts(struct ex_ctx *c, int i, int tmp);

/* Decimal arithmetic (expr_dec.c); ex_dec_text writes v of scale s as "-12.34". */
const char *ex_dec_text(__int128 v, int s, char *buf, size_t len);
int ex_dec_arith(struct ex_ctx *c, int i, const struct ex_node *n);
/* Dates (expr_date.c): civil conversions, parsing, printing and arithmetic. */
int ex_date_text(int64_t days, char *buf, size_t len);
int ex_ts_text(int64_t us, char *buf, size_t len);
int64_t ex_days_from_civil(int64_t y, unsigned m, unsigned d);
void ex_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);
bool ex_parse_date(const char *s, int64_t len, int64_t *days);
bool ex_parse_timestamp(const char *s, int64_t len, int64_t *us);
/* v (days, or microseconds when ts) plus interval iv (minus when sub) into *out; false
 * when the day leaves int32's range. */
bool ex_date_shift(int64_t v, bool ts, const struct ex_node *iv, bool sub, int64_t *out);
int ex_date_add(struct ex_ctx *c, int i, const struct ex_node *n);
int ex_extract(struct ex_ctx *c, int i, const struct ex_node *n);
/* CAST (expr_cast.c). */
int ex_cast(struct ex_ctx *c, int i, const struct ex_node *n);
/* Strings (expr_str.c). */
void ex_str_cmp(struct ex_ctx *c, int a, int b, enum ex_op op, uint8_t *o);
int ex_like(struct ex_ctx *c, int i, const struct ex_node *n);
bool ex_like_match(const struct ex_node *n, const char *s, int64_t len);
int ex_substr(struct ex_ctx *c, int i, const struct ex_node *n);
void ex_length(struct ex_ctx *c, int i, const struct ex_node *n);
/* Room for `bytes` bytes of computed strings of node i (the previous ones are dropped). */
char *ex_str_room(struct ex_ctx *c, int i, size_t bytes);
/* The LIKE fast path of a pattern (expr_str.c, used by the parser). */
enum ex_like ex_like_kind(const char *p, int64_t n);

#endif /* SLUICE_EXPR_INT_H */
