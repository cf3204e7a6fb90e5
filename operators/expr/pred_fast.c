/* The selection of a predicate that is an AND of comparisons of integer-like columns
 * with constants or with each other (TPC-H's date ranges, discounts, quantities,
 * l_commitdate < l_receiptdate): each term tests the stored values directly, the first
 * over every row, the next ones over the rows still selected, instead of the general
 * evaluation's 16-byte value vectors (expr_eval.c). Columns with nulls take the general
 * path, which gives SQL's three-valued answer. */
#include <string.h>

#include "expr_int.h"
#include "internal.h"

/* Whether column type t is read here: its stored integer, and that integer's scale. */
static bool raw_int(enum sl_type t, int *scale)
{
    *scale = SL_TYPE_ID(t) == SL_TYPE_DECIMAL ? sl_type_scale(t) : 0;
    return t == SL_TYPE_INT32 || t == SL_TYPE_INT64 || t == SL_TYPE_DATE32 ||
           t == SL_TYPE_TIMESTAMP || (SL_TYPE_ID(t) == SL_TYPE_DECIMAL && sl_type_width(t) == 8);
}

/* A literal as an integer at `scale` decimals; false if it is no such literal or does
 * not fit 64 bits there. */
static bool literal_at(const struct ex_node *x, int scale, int64_t *out)
{
    __int128 v;
    int from;
    if (x->op == EX_DEC && x->vk == SL__VK_DEC) {
        v = x->dval;
        from = sl_type_scale(x->type);
    } else if (x->op == EX_INT && (x->vk == SL__VK_INT || x->vk == SL__VK_DATE ||
                                   x->vk == SL__VK_TS)) {
        v = x->ival;
        from = 0;
    } else {
        return false;
    }
    if (from > scale)
        return false;
    for (int i = from; i < scale; i++) {
        if (v > INT64_MAX / 10 || v < INT64_MIN / 10)
            return false;
        v *= 10;
    }
    if (v > INT64_MAX || v < INT64_MIN)
        return false;
    *out = (int64_t)v;
    return true;
}

/* Column type ta holds the comparison's kind ck as is, and so does operand b (another
 * column of ta's type, or a literal of that kind). */
static bool kind_ok(enum sl__expr_vk ck, enum sl_type ta, const struct ex_node *b)
{
    bool ints = ta == SL_TYPE_INT32 || ta == SL_TYPE_INT64;
    if (b->op == EX_COL)
        return true; /* the same type: checked by the caller */
    switch (ck) {
    case SL__VK_INT: return ints && b->vk == SL__VK_INT;
    case SL__VK_DATE: return ta == SL_TYPE_DATE32 && b->vk == SL__VK_DATE;
    case SL__VK_TS: return ta == SL_TYPE_TIMESTAMP && b->vk == SL__VK_TS;
    case SL__VK_DEC:
        return (ints || SL_TYPE_ID(ta) == SL_TYPE_DECIMAL) &&
               (b->vk == SL__VK_INT || b->vk == SL__VK_DEC);
    default: return false;
    }
}

static int flip(int op)
{
    switch (op) {
    case EX_LT: return EX_GT;
    case EX_LE: return EX_GE;
    case EX_GT: return EX_LT;
    case EX_GE: return EX_LE;
    default: return op;
    }
}

/* Adds node i (a comparison) as a term, or the terms of an AND; false if it is neither. */
static bool add_terms(const struct sl__expr *e, int i, const sl_schema_t *in,
                      struct sl__pred_state *s)
{
    const struct ex_node *n = &e->nodes[i];
    if (n->op == EX_AND)
        return add_terms(e, n->a, in, s) && add_terms(e, n->b, in, s);
    if (n->op < EX_EQ || n->op > EX_GE || s->n_terms == SL__PRED_TERMS ||
        (n->ck != SL__VK_INT && n->ck != SL__VK_DATE && n->ck != SL__VK_TS &&
         n->ck != SL__VK_DEC))
        return false;
    const struct ex_node *a = &e->nodes[n->a], *b = &e->nodes[n->b];
    int op = n->op;
    if (a->op != EX_COL) { /* 5 < x as x > 5 */
        const struct ex_node *t = a;
        a = b;
        b = t;
        op = flip(op);
    }
    if (a->op != EX_COL || a->col < 0 || a->col >= in->n_fields)
        return false;
    enum sl_type ta = in->fields[a->col].type;
    int sa, sb;
    int want = n->ck == SL__VK_DEC ? n->cscale : 0;
    if (!raw_int(ta, &sa) || sa != want || !kind_ok(n->ck, ta, b))
        return false;
    struct sl__pred_term *t = &s->terms[s->n_terms];
    t->op = op;
    t->col = a->col;
    t->col2 = -1;
    if (b->op == EX_COL) {
        if (b->col < 0 || b->col >= in->n_fields || in->fields[b->col].type != ta ||
            !raw_int(ta, &sb))
            return false;
        t->col2 = b->col;
    } else if (!literal_at(b, want, &t->k)) {
        return false;
    }
    s->n_terms++;
    return true;
}

void sl__pred_fast_init(const struct sl__expr *e, struct sl__pred_state *s, const sl_schema_t *in)
{
    s->n_terms = 0;
    s->fast = add_terms(e, e->root, in, s) ? 1 : -1;
}

/* One term over every row (the first) or over the rows selected so far. */
#define TERM_LOOP(T, COND)                                                       \
    do {                                                                         \
        const T *x = (const T *)v;                                               \
        const T *y = (const T *)v2;                                              \
        (void)y;                                                                 \
        if (first) {                                                             \
            for (int64_t r = 0; r < n; r++) {                                    \
                sel[k] = r;                                                      \
                k += (COND);                                                     \
            }                                                                    \
        } else {                                                                 \
            for (int64_t j = 0; j < m; j++) {                                    \
                int64_t r = sel[j];                                              \
                sel[k] = r;                                                      \
                k += (COND);                                                     \
            }                                                                    \
        }                                                                        \
    } while (0)

#define TERM_OPS(T, RHS)                                                         \
    switch (t->op) {                                                             \
    case EX_EQ: TERM_LOOP(T, x[r] == (RHS)); break;                              \
    case EX_NE: TERM_LOOP(T, x[r] != (RHS)); break;                              \
    case EX_LT: TERM_LOOP(T, x[r] < (RHS)); break;                               \
    case EX_LE: TERM_LOOP(T, x[r] <= (RHS)); break;                              \
    case EX_GT: TERM_LOOP(T, x[r] > (RHS)); break;                               \
    default: TERM_LOOP(T, x[r] >= (RHS)); break;                                 \
    }

int64_t sl__pred_fast_select(const struct sl__pred_state *s, const sl_batch_t *b, int64_t *sel)
{
    for (int i = 0; i < s->n_terms; i++) {
        const struct sl__pred_term *t = &s->terms[i];
        const struct sl__col *c = &b->cols[t->col];
        if ((c->validity && c->null_count != 0) ||
            (t->col2 >= 0 && b->cols[t->col2].validity && b->cols[t->col2].null_count != 0))
            return -1;
    }
    int64_t n = b->n_rows, m = n;
    for (int i = 0; i < s->n_terms; i++) {
        const struct sl__pred_term *t = &s->terms[i];
        const void *v = sl__col_values(b, t->col);
        const void *v2 = t->col2 >= 0 ? sl__col_values(b, t->col2) : v;
        bool first = i == 0, w4 = sl_type_width(b->cols[t->col].type) == 4;
        int64_t k = 0;
        if (w4 && t->col2 >= 0) {
            TERM_OPS(int32_t, y[r])
        } else if (w4) {
            /* A constant beyond int32 decides the term alike for every row. */
            int64_t kk = t->k;
            int32_t k32 = kk > INT32_MAX ? INT32_MAX : kk < INT32_MIN ? INT32_MIN : (int32_t)kk;
            if (kk != k32) /* compare in 64 bits: rare, plain */
                TERM_OPS(int32_t, (int64_t)0 + kk)
            else
                TERM_OPS(int32_t, k32)
        } else if (t->col2 >= 0) {
            TERM_OPS(int64_t, y[r])
        } else {
            TERM_OPS(int64_t, t->k)
        }
        m = k;
        if (m == 0)
            break;
    }
    return m;
}
