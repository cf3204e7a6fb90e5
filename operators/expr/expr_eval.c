/* Expressions: vectorized evaluation. Each node owns a vector of SL__EXPR_VEC values
 * (16 bytes each: int64, double, int128, string view or byte) and a byte-per-row null
 * vector in the scratch; a node is evaluated after its children, one tight loop per
 * operator and value kind. Decimals, strings, dates and casts live in expr_dec.c,
 * expr_str.c and expr_cast.c. Rules in expr.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expr_int.h"
#include "expr_prog.h"

/* Two spare vectors per scratch for operands converted to a common kind. */
#define EX_TMPS 2

int sl__expr_scratch_init(struct sl__expr_scratch *s, const struct sl__expr *e)
{
    s->e = e;
    s->bytes = ex_tmp_base(e->n_nodes) + (size_t)EX_TMPS * SL__EXPR_VEC * EX_VAL_BYTES;
    s->mem = sl__malloc(s->bytes);
    s->aux = sl__calloc((size_t)e->n_nodes, sizeof(struct ex_aux));
    if (s->mem && s->aux)
        return SL_OK;
    sl__expr_scratch_fini(s);
    return SL_ENOMEM;
}

void sl__expr_scratch_fini(struct sl__expr_scratch *s)
{
    if (s->mem)
        sl__free(s->mem, s->bytes);
    s->mem = NULL;
    struct ex_aux *aux = s->aux;
    if (aux) {
        for (int i = 0; i < s->e->n_nodes; i++) {
            sl__free(aux[i].buf, aux[i].cap);
            sl__free(aux[i].dict_res, (size_t)aux[i].dict_cap);
            if (aux[i].dict)
                sl__dict_unref(aux[i].dict);
        }
        sl__free(aux, (size_t)s->e->n_nodes * sizeof *aux);
    }
    s->aux = NULL;
}

int ex_fail(struct ex_ctx *c, const struct ex_node *n, int64_t r, int code, const char *fmt, ...)
{
    char what[240];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int tl = (int)strlen(c->e->text);
    snprintf(c->err, c->err_len, "%s at position %d of \"%.*s%s\" (row %lld of the batch)", what,
             n->pos, tl > SL__EXPR_ECHO ? SL__EXPR_ECHO : tl, c->e->text,
             tl > SL__EXPR_ECHO ? "..." : "", (long long)(c->start + r));
    return code;
}

/* Nulls of a binary node: the union of its children's. */
void ex_merge_nulls(struct ex_ctx *c, int i, int a, int b)
{
    uint8_t *nu = ex_nulls(c, i);
    bool ha = *ex_has_null(c, a), hb = b >= 0 && *ex_has_null(c, b);
    *ex_has_null(c, i) = ha || hb;
    if (ha && hb) {
        const uint8_t *x = ex_nulls(c, a), *y = ex_nulls(c, b);
        for (int64_t r = 0; r < c->n; r++)
            nu[r] = x[r] | y[r];
    } else if (ha || hb) {
        memcpy(nu, ex_nulls(c, ha ? a : b), (size_t)c->n);
    } else {
        memset(nu, 0, (size_t)c->n);
    }
}

/* Widens len values of type T at src (any alignment) into out (int64, int128, double). */
#define WIDEN(T, src, out, len)                                \
    do {                                                       \
        for (int64_t r_ = 0; r_ < (len); r_++) {               \
            T v_;                                              \
            memcpy(&v_, (const char *)(src) + r_ * sizeof(T), sizeof(T)); \
            (out)[r_] = v_;                                    \
        }                                                      \
    } while (0)

/* Node i's nulls from column node n's validity over rows [start, start+n). */
static void col_nulls(struct ex_ctx *c, int i, const struct ex_node *n)
{
    const struct sl__col *col = &c->batch->cols[n->col];
    int64_t s = c->start, len = c->n;
    uint8_t *nu = ex_nulls(c, i);
    bool any = false;
    if (col->validity && col->null_count != 0) {
        const uint8_t *v = col->validity->ptr;
        for (int64_t r = 0; r < len; r++) {
            int64_t bit = col->offset + s + r;
            nu[r] = !((v[bit >> 3] >> (bit & 7)) & 1);
            any |= nu[r];
        }
    }
    *ex_has_null(c, i) = any;
}

/* Reads rows [start, start+n) of a column into node i's vector in its value kind. */
static void eval_col(struct ex_ctx *c, int i, const struct ex_node *n)
{
    const struct sl__col *col = &c->batch->cols[n->col];
    enum sl_type t = col->type;
    const char *src = sl__col_values(c->batch, n->col);
    int64_t s = c->start, len = c->n;
    void *o = ex_vals(c, i);
    size_t w = sl_type_width(t);
    switch (SL_TYPE_ID(t)) {
    case SL_TYPE_INT8: WIDEN(int8_t, src + s, (int64_t *)o, len); break;
    case SL_TYPE_INT16: WIDEN(int16_t, src + s * 2, (int64_t *)o, len); break;
    case SL_TYPE_INT32: case SL_TYPE_DATE32: WIDEN(int32_t, src + s * 4, (int64_t *)o, len); break;
    case SL_TYPE_UINT8: WIDEN(uint8_t, src + s, (int64_t *)o, len); break;
    case SL_TYPE_UINT16: WIDEN(uint16_t, src + s * 2, (int64_t *)o, len); break;
    case SL_TYPE_UINT32: WIDEN(uint32_t, src + s * 4, (int64_t *)o, len); break;
    case SL_TYPE_UINT64: WIDEN(uint64_t, src + s * 8, (__int128 *)o, len); break;
    case SL_TYPE_FLOAT32: WIDEN(float, src + s * 4, (double *)o, len); break;
    case SL_TYPE_BOOL: memcpy(o, src + s, (size_t)len); break;
    case SL_TYPE_DECIMAL:
        if (w == 8)
            WIDEN(int64_t, src + s * 8, (__int128 *)o, len);
        else
            memcpy(o, src + s * 16, (size_t)len * 16);
        break;
    case SL_TYPE_UTF8: case SL_TYPE_LARGE_UTF8: case SL_TYPE_DICT: {
        struct sl__colview v;
        sl__colview_get(c->batch, n->col, &v);
        struct sl__expr_str *d = o;
        for (int64_t r = 0; r < len; r++)
            d[r].p = sl__colview_str(&v, s + r, &d[r].n);
        break;
    }
    default: /* INT64, FLOAT64, TIMESTAMP */
        memcpy(o, src + s * 8, (size_t)len * 8);
        break;
    }
    col_nulls(c, i, n);
}

const double *ex_as_f64(struct ex_ctx *c, int i, int tmp)
{
    const struct ex_node *n = &c->e->nodes[i];
    if (n->vk == SL__VK_FLOAT)
        return ex_vals(c, i);
    double *o = ex_tmp(c, tmp);
    if (n->vk == SL__VK_DEC) {
        /* One rounding: exact operands below 2^53 divide correctly rounded; above, the
         * integer part converts correctly rounded and the fraction cannot change it. */
        const __int128 *x = ex_vals(c, i);
        __int128 p = ex_pow10(sl_type_scale(n->type));
        double scale = (double)p;
        for (int64_t r = 0; r < c->n; r++) {
            __int128 v = x[r];
            if (v < ((__int128)1 << 53) && v > -((__int128)1 << 53))
                o[r] = (double)v / scale;
            else
                o[r] = (double)(v / p) + (double)(v % p) / scale;
        }
    } else {
        const int64_t *x = ex_vals(c, i);
        for (int64_t r = 0; r < c->n; r++)
            o[r] = (double)x[r];
    }
    return o;
}

const int64_t *ex_as_ts(struct ex_ctx *c, int i, int tmp)
{
    if (c->e->nodes[i].vk == SL__VK_TS)
        return ex_vals(c, i);
    const int64_t *x = ex_vals(c, i);
    int64_t *o = ex_tmp(c, tmp);
    for (int64_t r = 0; r < c->n; r++)
        o[r] = x[r] * 86400000000LL; /* dates reach +-5.8 million years: no overflow */
    return o;
}

static int eval_int_arith(struct ex_ctx *c, int i, const struct ex_node *n)
{
    const int64_t *x = ex_vals(c, n->a), *y = ex_vals(c, n->b);
    int64_t *o = ex_vals(c, i);
    ex_merge_nulls(c, i, n->a, n->b);
    uint8_t *nu = ex_nulls(c, i);
    bool hn = *ex_has_null(c, i), ovf = false;
    int64_t len = c->n;
    switch (n->op) {
    case EX_ADD:
        for (int64_t r = 0; r < len; r++)
            ovf |= __builtin_add_overflow(x[r], y[r], &o[r]) & !nu[r];
        break;
    case EX_SUB:
        for (int64_t r = 0; r < len; r++)
            ovf |= __builtin_sub_overflow(x[r], y[r], &o[r]) & !nu[r];
        break;
    case EX_MUL:
        for (int64_t r = 0; r < len; r++)
            ovf |= __builtin_mul_overflow(x[r], y[r], &o[r]) & !nu[r];
        break;
    default: /* DIV, MOD: a zero divisor gives NULL */
        for (int64_t r = 0; r < len; r++) {
            if (nu[r] || y[r] == 0) {
                hn |= !nu[r];
                nu[r] = 1;
                o[r] = 0;
            } else if (y[r] == -1) {
                if (n->op == EX_DIV && x[r] == INT64_MIN)
                    return ex_fail(c, n, r, SL_EOVERFLOW, "int64 overflow in %lld / -1",
                                   (long long)x[r]);
                o[r] = n->op == EX_DIV ? -x[r] : 0;
            } else {
                o[r] = n->op == EX_DIV ? x[r] / y[r] : x[r] % y[r];
            }
        }
        *ex_has_null(c, i) = hn;
        return SL_OK;
    }
    if (SL__UNLIKELY(ovf)) {
        for (int64_t r = 0; r < len; r++) {
            int64_t t;
            bool bad = n->op == EX_ADD   ? __builtin_add_overflow(x[r], y[r], &t)
                       : n->op == EX_SUB ? __builtin_sub_overflow(x[r], y[r], &t)
                                         : __builtin_mul_overflow(x[r], y[r], &t);
            if (bad && !nu[r])
                return ex_fail(c, n, r, SL_EOVERFLOW, "%s overflow in %lld %c %lld",
                               n->vk == SL__VK_DATE ? "date" : "int64", (long long)x[r],
                               n->op == EX_ADD ? '+' : n->op == EX_SUB ? '-' : '*',
                               (long long)y[r]);
        }
    }
    if (n->vk == SL__VK_DATE) { /* date ± days stays within int32 days */
        for (int64_t r = 0; r < len; r++)
            if ((o[r] < INT32_MIN || o[r] > INT32_MAX) && !nu[r])
                return ex_fail(c, n, r, SL_EOVERFLOW, "date out of range");
    }
    return SL_OK;
}

static void eval_float_arith(struct ex_ctx *c, int i, const struct ex_node *n)
{
    const double *x = ex_as_f64(c, n->a, 0), *y = ex_as_f64(c, n->b, 1);
    double *o = ex_vals(c, i);
    int64_t len = c->n;
    ex_merge_nulls(c, i, n->a, n->b);
    switch (n->op) {
    case EX_ADD: for (int64_t r = 0; r < len; r++) o[r] = x[r] + y[r]; break;
    case EX_SUB: for (int64_t r = 0; r < len; r++) o[r] = x[r] - y[r]; break;
    case EX_MUL: for (int64_t r = 0; r < len; r++) o[r] = x[r] * y[r]; break;
    case EX_DIV: for (int64_t r = 0; r < len; r++) o[r] = x[r] / y[r]; break;
    default: for (int64_t r = 0; r < len; r++) o[r] = fmod(x[r], y[r]); break;
    }
}

#define CMP_LOOP(x, y, OP)                                 \
    do {                                                   \
        for (int64_t r = 0; r < len; r++)                  \
            o[r] = (x)[r] OP (y)[r];                       \
    } while (0)

#define CMP_ALL(x, y)                               \
    switch (op) {                                   \
    case EX_EQ: CMP_LOOP(x, y, ==); break;          \
    case EX_NE: CMP_LOOP(x, y, !=); break;          \
    case EX_LT: CMP_LOOP(x, y, <); break;           \
    case EX_LE: CMP_LOOP(x, y, <=); break;          \
    case EX_GT: CMP_LOOP(x, y, >); break;           \
    default: CMP_LOOP(x, y, >=); break;             \
    }

/* Floats in SQL's total order: NaN above everything and equal to itself. */
static void cmp_f64(uint8_t *o, const double *x, const double *y, int64_t len, enum ex_op op)
{
    for (int64_t r = 0; r < len; r++) {
        double a = x[r], b = y[r];
        bool an = a != a, bn = b != b;
        o[r] = ex_cmp_holds(op, an || bn ? (int)an - (int)bn : (a > b) - (a < b));
    }
}

/* Compares operands a and b of node n (brought to n->ck) into o[0, c->n). */
static int compare(struct ex_ctx *c, const struct ex_node *n, int a, int b, enum ex_op op,
                   uint8_t *o)
{
    int64_t len = c->n;
    switch (n->ck) {
    case SL__VK_INT: case SL__VK_DATE: {
        const int64_t *x = ex_vals(c, a), *y = ex_vals(c, b);
        CMP_ALL(x, y)
        return SL_OK;
    }
    case SL__VK_TS: {
        const int64_t *x = ex_as_ts(c, a, 0), *y = ex_as_ts(c, b, 1);
        CMP_ALL(x, y)
        return SL_OK;
    }
    case SL__VK_BOOL: {
        const uint8_t *x = ex_vals(c, a), *y = ex_vals(c, b);
        CMP_ALL(x, y)
        return SL_OK;
    }
    case SL__VK_FLOAT:
        cmp_f64(o, ex_as_f64(c, a, 0), ex_as_f64(c, b, 1), len, op);
        return SL_OK;
    case SL__VK_DEC: {
        const __int128 *x = ex_as_dec(c, a, n->cscale, 0, true, n);
        const __int128 *y = ex_as_dec(c, b, n->cscale, 1, true, n);
        CMP_ALL(x, y)
        return SL_OK;
    }
    case SL__VK_STR: ex_str_cmp(c, a, b, op, o); return SL_OK;
    default: return SL_EINTERNAL;
    }
}

/* The literal operand of comparison n as an int64 in the comparison's domain (n->ck and,
 * for decimals, n->cscale); false when it is none or does not fit. */
static bool lit_as_i64(const struct ex_node *n, const struct ex_node *lit, int64_t *k)
{
    if (lit->null_lit)
        return false;
    if (n->ck == SL__VK_INT || n->ck == SL__VK_DATE) {
        *k = lit->ival;
        return lit->op == EX_INT && lit->vk == n->ck;
    }
    __int128 v;
    int scale;
    if (n->ck == SL__VK_DEC && lit->op == EX_DEC && lit->vk == SL__VK_DEC) {
        v = lit->dval;
        scale = sl_type_scale(lit->type);
    } else if (n->ck == SL__VK_DEC && lit->op == EX_INT && lit->vk == SL__VK_INT) {
        v = lit->ival;
        scale = 0;
    } else {
        return false;
    }
    if (scale > n->cscale || n->cscale - scale > 18 || v > INT64_MAX || v < INT64_MIN)
        return false;
    v *= ex_pow10(n->cscale - scale); /* |v| < 2^63 * 10^18 < 2^127 */
    *k = (int64_t)v;
    return v <= INT64_MAX && v >= INT64_MIN;
}

/* A column whose stored values compare as they are in comparison n's domain: signed
 * integers and dates (ck INT or DATE), decimals of 64 bits at the comparison's scale. */
static bool col_coded_as_is(const struct ex_node *n, const struct ex_node *col)
{
    if (col->op != EX_COL || col->vk != n->ck)
        return false;
    switch (SL_TYPE_ID(col->type)) {
    case SL_TYPE_INT8: case SL_TYPE_INT16: case SL_TYPE_INT32: case SL_TYPE_INT64:
    case SL_TYPE_DATE32:
        return n->ck == SL__VK_INT || n->ck == SL__VK_DATE;
    case SL_TYPE_DECIMAL:
        return sl_type_width(col->type) == 8 && sl_type_scale(col->type) == n->cscale;
    default:
        return false;
    }
}

/* o[r] = column a's row OP the right operand (RHS_OF(T): column b's row or the constant
 * k), the values read in their stored width T. */
#define CMP_ROWS(T, OP, RHS)                                       \
    do {                                                           \
        const T *x_ = (const T *)sa + start;                       \
        for (int64_t r = 0; r < len; r++)                          \
            o[r] = (int64_t)x_[r] OP (RHS);                        \
    } while (0)
#define CMP_OPS(T, RHS)                                            \
    switch (op) {                                                  \
    case EX_EQ: CMP_ROWS(T, ==, RHS); break;                       \
    case EX_NE: CMP_ROWS(T, !=, RHS); break;                       \
    case EX_LT: CMP_ROWS(T, <, RHS); break;                        \
    case EX_LE: CMP_ROWS(T, <=, RHS); break;                       \
    case EX_GT: CMP_ROWS(T, >, RHS); break;                        \
    default: CMP_ROWS(T, >=, RHS); break;                          \
    }
#define CMP_WIDTHS(RHS_OF)                                         \
    switch (width) {                                               \
    case 1: CMP_OPS(int8_t, RHS_OF(int8_t)); break;                \
    case 2: CMP_OPS(int16_t, RHS_OF(int16_t)); break;              \
    case 4: CMP_OPS(int32_t, RHS_OF(int32_t)); break;              \
    default: CMP_OPS(int64_t, RHS_OF(int64_t)); break;             \
    }
#define RHS_COLUMN(T) (int64_t)((const T *)sb)[start + r]
#define RHS_CONSTANT(T) k

/* Rows [start, start+len) of column buffer sa OP those of sb (of sa's type), or OP k
 * when sb is NULL, into o. */
static void cmp_stored(uint8_t *o, const char *sa, const char *sb, int64_t k, size_t width,
                       enum ex_op op, int64_t start, int64_t len)
{
    if (sb)
        CMP_WIDTHS(RHS_COLUMN)
    else
        CMP_WIDTHS(RHS_CONSTANT)
}

/* Column OP column of one type stored as it compares (l_commitdate < l_receiptdate):
 * straight from both buffers. */
static bool cmp_col_col(struct ex_ctx *c, int i, const struct ex_node *n,
                        const struct ex_node *a, const struct ex_node *b)
{
    if (a->type != b->type || !col_coded_as_is(n, a) || !col_coded_as_is(n, b))
        return false;
    cmp_stored(ex_vals(c, i), sl__col_values(c->batch, a->col), sl__col_values(c->batch, b->col),
               0, sl_type_width(a->type), n->op, c->start, c->n);
    col_nulls(c, n->a, a);
    col_nulls(c, n->b, b);
    ex_merge_nulls(c, i, n->a, n->b);
    return true;
}

/* Column OP literal (either order), the filters of most queries: compared straight
 * from the column's buffer against one constant, with no widened copy of the column and
 * no vector of the literal; column OP column likewise (cmp_col_col). False (nothing
 * done) when n is neither. */
static bool cmp_col_const(struct ex_ctx *c, int i, const struct ex_node *n)
{
    const struct ex_node *a = &c->e->nodes[n->a], *b = &c->e->nodes[n->b];
    if (a->op == EX_COL && b->op == EX_COL)
        return cmp_col_col(c, i, n, a, b);
    bool swap = a->op != EX_COL;
    const struct ex_node *col = swap ? b : a, *lit = swap ? a : b;
    int64_t k;
    if (!col_coded_as_is(n, col) || !lit_as_i64(n, lit, &k))
        return false;
    static const enum ex_op flipped[] = {[EX_EQ] = EX_EQ, [EX_NE] = EX_NE, [EX_LT] = EX_GT,
                                         [EX_LE] = EX_GE, [EX_GT] = EX_LT, [EX_GE] = EX_LE};
    enum ex_op op = swap ? flipped[n->op] : n->op;
    cmp_stored(ex_vals(c, i), sl__col_values(c->batch, col->col), NULL, k,
               sl_type_width(col->type), op, c->start, c->n);
    col_nulls(c, i, col);
    return true;
}

/* Three-valued AND / OR. */
static void eval_logic(struct ex_ctx *c, int i, const struct ex_node *n)
{
    const uint8_t *x = ex_vals(c, n->a), *y = ex_vals(c, n->b);
    const uint8_t *xn = ex_nulls(c, n->a), *yn = ex_nulls(c, n->b);
    bool hx = *ex_has_null(c, n->a), hy = *ex_has_null(c, n->b);
    uint8_t *o = ex_vals(c, i), *nu = ex_nulls(c, i);
    int64_t len = c->n;
    bool and = n->op == EX_AND, any = false;
    if (!hx && !hy) {
        for (int64_t r = 0; r < len; r++)
            o[r] = and ? (x[r] & y[r]) : (x[r] | y[r]);
        *ex_has_null(c, i) = false;
        return;
    }
    for (int64_t r = 0; r < len; r++) {
        uint8_t an = hx && xn[r], bn = hy && yn[r];
        /* The deciding value: FALSE for AND, TRUE for OR. */
        uint8_t dec = and ? 0 : 1;
        bool decided = (!an && x[r] == dec) || (!bn && y[r] == dec);
        if (decided) {
            o[r] = dec;
            nu[r] = 0;
        } else if (an || bn) {
            o[r] = 0;
            nu[r] = 1;
            any = true;
        } else {
            o[r] = !dec;
            nu[r] = 0;
        }
    }
    *ex_has_null(c, i) = any;
}


/* x [NOT] IN (literals): each literal evaluated as a vector and compared as by '='. */
static int eval_in(struct ex_ctx *c, int i, const struct ex_node *n)
{
    uint8_t *o = ex_vals(c, i);
    int64_t len = c->n;
    const int *list = c->e->list + n->list;
    ex_merge_nulls(c, i, n->a, -1);
    memset(o, 0, (size_t)len);
    uint8_t hit[SL__EXPR_VEC];
    for (int k = 0; k < n->n_list; k++) {
        int rc = ex_eval_node(c, list[k]);
        if (rc == SL_OK)
            rc = compare(c, n, n->a, list[k], EX_EQ, hit);
        if (rc < 0)
            return rc;
        for (int64_t r = 0; r < len; r++)
            o[r] |= hit[r];
    }
    if (n->op == EX_NOT_IN)
        for (int64_t r = 0; r < len; r++)
            o[r] = !o[r];
    return SL_OK;
}

/* Bytes per value of a kind in a vector. */
static size_t kind_width(enum sl__expr_vk vk)
{
    switch (vk) {
    case SL__VK_BOOL: return 1;
    case SL__VK_DEC: case SL__VK_STR: return 16;
    default: return 8;
    }
}

/* Operand j of CASE/COALESCE node n converted to the node's kind (k selects the spare). */
static const void *as_kind(struct ex_ctx *c, const struct ex_node *n, int j, int k)
{
    switch (n->vk) {
    case SL__VK_FLOAT: return ex_as_f64(c, j, k);
    case SL__VK_TS: return ex_as_ts(c, j, k);
    case SL__VK_DEC: return ex_as_dec(c, j, n->cscale, k, false, n);
    default: return ex_vals(c, j);
    }
}

/* Copies rows where pick[r] of operand j (converted) into node i, with their nulls. */
static int take_rows(struct ex_ctx *c, int i, const struct ex_node *n, int j, const uint8_t *pick)
{
    const char *src = as_kind(c, n, j, 0);
    if (!src)
        return SL_EOVERFLOW;
    size_t w = kind_width(n->vk);
    char *o = ex_vals(c, i);
    uint8_t *nu = ex_nulls(c, i);
    for (int64_t r = 0; r < c->n; r++) {
        if (!pick[r])
            continue;
        memcpy(o + (size_t)r * w, src + (size_t)r * w, w);
        nu[r] = ex_null_at(c, j, r);
    }
    return SL_OK;
}

static int eval_case(struct ex_ctx *c, int i, const struct ex_node *n)
{
    uint8_t open[SL__EXPR_VEC], pick[SL__EXPR_VEC];
    uint8_t *nu = ex_nulls(c, i);
    int64_t len = c->n;
    memset(open, 1, (size_t)len);
    memset(nu, 1, (size_t)len);
    memset(ex_vals(c, i), 0, (size_t)len * kind_width(n->vk));
    const int *list = c->e->list + n->list;
    for (int k = 0; k < n->n_list; k += 2) {
        int rc = ex_eval_node(c, list[k]);
        if (rc == SL_OK)
            rc = ex_eval_node(c, list[k + 1]);
        if (rc < 0)
            return rc;
        const uint8_t *w = ex_vals(c, list[k]);
        for (int64_t r = 0; r < len; r++) {
            pick[r] = open[r] & w[r] & !ex_null_at(c, list[k], r);
            open[r] &= !pick[r];
        }
        if ((rc = take_rows(c, i, n, list[k + 1], pick)) < 0)
            return rc;
    }
    if (n->b >= 0) {
        int rc = take_rows(c, i, n, n->b, open);
        if (rc < 0)
            return rc;
    }
    bool any = false;
    for (int64_t r = 0; r < len; r++)
        any |= nu[r];
    *ex_has_null(c, i) = any;
    return SL_OK;
}

static int eval_coalesce(struct ex_ctx *c, int i, const struct ex_node *n)
{
    uint8_t pick[SL__EXPR_VEC];
    uint8_t *nu = ex_nulls(c, i);
    int64_t len = c->n;
    memset(nu, 1, (size_t)len);
    memset(ex_vals(c, i), 0, (size_t)len * kind_width(n->vk));
    const int *list = c->e->list + n->list;
    for (int k = 0; k < n->n_list; k++) {
        int rc = ex_eval_node(c, list[k]);
        if (rc < 0)
            return rc;
        bool more = false;
        for (int64_t r = 0; r < len; r++) {
            pick[r] = nu[r] && !ex_null_at(c, list[k], r);
            more |= nu[r] && !pick[r];
        }
        if ((rc = take_rows(c, i, n, list[k], pick)) < 0)
            return rc;
        if (!more)
            break;
    }
    bool any = false;
    for (int64_t r = 0; r < len; r++)
        any |= nu[r];
    *ex_has_null(c, i) = any;
    return SL_OK;
}

void sl__expr_dict_hits(const struct sl__expr *e, int node, int64_t n, const int32_t *offsets,
                        const char *chars, uint8_t *out)
{
    const struct ex_node *x = &e->nodes[node];
    for (int64_t d = 0; d < n; d++) {
        struct sl__expr_str s = {chars + offsets[d], offsets[d + 1] - offsets[d]};
        bool hit;
        if (x->op == EX_LIKE || x->op == EX_NOT_LIKE) {
            hit = ex_like_match(x, s.p, s.n) == (x->op == EX_LIKE);
        } else if (x->op == EX_IN || x->op == EX_NOT_IN) {
            hit = false;
            for (int k = 0; k < x->n_list; k++) {
                const struct ex_node *l = &e->nodes[e->list[x->list + k]];
                hit |= sl__str_cmp(s.p, s.n, l->str, l->slen) == 0;
            }
            hit ^= x->op == EX_NOT_IN;
        } else {
            const struct ex_node *l = &e->nodes[x->b];
            hit = ex_cmp_holds(x->op, sl__str_cmp(s.p, s.n, l->str, l->slen));
        }
        out[d] = hit;
    }
}

/* A predicate of a DICT column and literals (n->on_dict): evaluated once per entry of
 * the batch's dictionary (cached while the dictionary stays the same), then by code. */
static int eval_on_dict(struct ex_ctx *c, int i, const struct ex_node *n)
{
    const struct ex_node *a = &c->e->nodes[n->a];
    struct sl__colview v;
    sl__colview_get(c->batch, a->col, &v);
    struct ex_aux *x = &c->aux[i];
    struct sl__dict *dict = c->batch->cols[a->col].dict;
    if (x->dict != dict) {
        if (v.s.dict_length > x->dict_cap) {
            uint8_t *nr = sl__realloc(x->dict_res, (size_t)x->dict_cap, (size_t)v.s.dict_length);
            if (!nr)
                return ex_fail(c, n, 0, SL_ENOMEM, "out of memory for a dictionary");
            x->dict_res = nr;
            x->dict_cap = v.s.dict_length;
        }
        sl__expr_dict_hits(c->e, i, v.s.dict_length, v.s.dict_offsets, v.s.dict_chars,
                           x->dict_res);
        if (x->dict)
            sl__dict_unref(x->dict);
        sl__dict_ref(dict);
        x->dict = dict;
    }
    const int32_t *codes = (const int32_t *)v.c.data + v.c.offset + c->start;
    uint8_t *o = ex_vals(c, i), *nu = ex_nulls(c, i);
    bool any = false;
    for (int64_t r = 0; r < c->n; r++) {
        nu[r] = !sl__colview_valid(&v, c->start + r);
        any |= nu[r];
        o[r] = nu[r] ? 0 : x->dict_res[codes[r]];
    }
    *ex_has_null(c, i) = any;
    return SL_OK;
}

/* A literal's vector: the same value in every row (one loop per kind). */
#define FILL(T, v)                                      \
    do {                                                \
        T *o_ = ex_vals(c, i);                          \
        for (int64_t r = 0; r < c->n; r++)              \
            o_[r] = (v);                                \
    } while (0)

static void fill_literal(struct ex_ctx *c, int i, const struct ex_node *n)
{
    switch (n->op) {
    case EX_FLOAT: FILL(double, n->fval); break;
    case EX_DEC: FILL(__int128, n->dval); break;
    case EX_STR: FILL(struct sl__expr_str, ((struct sl__expr_str){n->str, n->slen})); break;
    case EX_BOOL: FILL(uint8_t, (uint8_t)n->ival); break;
    default: FILL(int64_t, n->ival); break;
    }
    *ex_has_null(c, i) = false;
}

static int eval_neg(struct ex_ctx *c, int i, const struct ex_node *n)
{
    int64_t len = c->n;
    ex_merge_nulls(c, i, n->a, -1);
    if (n->vk == SL__VK_FLOAT) {
        for (int64_t r = 0; r < len; r++)
            ((double *)ex_vals(c, i))[r] = -((const double *)ex_vals(c, n->a))[r];
        return SL_OK;
    }
    if (n->vk == SL__VK_DEC) { /* |x| < 10^38 < 2^127: never overflows */
        for (int64_t r = 0; r < len; r++)
            ((__int128 *)ex_vals(c, i))[r] = -((const __int128 *)ex_vals(c, n->a))[r];
        return SL_OK;
    }
    for (int64_t r = 0; r < len; r++) {
        int64_t x = ((const int64_t *)ex_vals(c, n->a))[r];
        if (x == INT64_MIN && !ex_null_at(c, i, r))
            return ex_fail(c, n, r, SL_EOVERFLOW, "int64 overflow in -(%lld)", (long long)x);
        ((int64_t *)ex_vals(c, i))[r] = x == INT64_MIN ? 0 : -x;
    }
    return SL_OK;
}

int ex_eval_node(struct ex_ctx *c, int i)
{
    const struct ex_node *n = &c->e->nodes[i];
    int rc;
    if (n->on_dict)
        return eval_on_dict(c, i, n);
    if (n->op >= EX_EQ && n->op <= EX_GE && cmp_col_const(c, i, n))
        return SL_OK;
    if (n->a >= 0 && (rc = ex_eval_node(c, n->a)) < 0)
        return rc;
    if (n->b >= 0 && (rc = ex_eval_node(c, n->b)) < 0)
        return rc;
    int64_t len = c->n;
    switch (n->op) {
    case EX_COL: eval_col(c, i, n); return SL_OK;
    case EX_INT: case EX_FLOAT: case EX_DEC: case EX_STR: case EX_BOOL: case EX_INTERVAL:
        fill_literal(c, i, n);
        return SL_OK;
    case EX_NEG: return eval_neg(c, i, n);
    case EX_ADD: case EX_SUB: case EX_MUL: case EX_DIV: case EX_MOD:
        if (n->ck == SL__VK_INTERVAL)
            return ex_date_add(c, i, n);
        if (n->vk == SL__VK_DEC)
            return ex_dec_arith(c, i, n);
        if (n->ck == SL__VK_INT)
            return eval_int_arith(c, i, n);
        eval_float_arith(c, i, n);
        return SL_OK;
    case EX_EQ: case EX_NE: case EX_LT: case EX_LE: case EX_GT: case EX_GE:
        ex_merge_nulls(c, i, n->a, n->b);
        return compare(c, n, n->a, n->b, n->op, ex_vals(c, i));
    case EX_AND: case EX_OR: eval_logic(c, i, n); return SL_OK;
    case EX_NOT:
        ex_merge_nulls(c, i, n->a, -1);
        for (int64_t r = 0; r < len; r++)
            ((uint8_t *)ex_vals(c, i))[r] = !((const uint8_t *)ex_vals(c, n->a))[r];
        return SL_OK;
    case EX_IN: case EX_NOT_IN: return eval_in(c, i, n);
    case EX_IS_NULL: case EX_IS_NOT_NULL: {
        bool hn = *ex_has_null(c, n->a), want = n->op == EX_IS_NULL;
        const uint8_t *an = ex_nulls(c, n->a);
        for (int64_t r = 0; r < len; r++)
            ((uint8_t *)ex_vals(c, i))[r] = (hn && an[r]) == want;
        *ex_has_null(c, i) = false;
        return SL_OK;
    }
    case EX_CAST: return ex_cast(c, i, n);
    case EX_LIKE: case EX_NOT_LIKE: return ex_like(c, i, n);
    case EX_SUBSTR: return ex_substr(c, i, n);
    case EX_LENGTH: ex_length(c, i, n); return SL_OK;
    case EX_EXTRACT: return ex_extract(c, i, n);
    case EX_CASE: return eval_case(c, i, n);
    case EX_COALESCE: return eval_coalesce(c, i, n);
    case EX_NULL:
        memset(ex_vals(c, i), 0, (size_t)len * EX_VAL_BYTES);
        if (n->vk == SL__VK_STR)
            FILL(struct sl__expr_str, ((struct sl__expr_str){"", 0}));
        memset(ex_nulls(c, i), 1, (size_t)len);
        *ex_has_null(c, i) = len > 0;
        return SL_OK;
    }
    return SL_EINTERNAL;
}

int sl__expr_eval(const struct sl__expr *e, const sl_batch_t *b, int64_t start, int64_t n,
                  struct sl__expr_scratch *s, struct sl__expr_vec *out, char *err,
                  size_t err_len)
{
    if (SL_NEVER(n > SL__EXPR_VEC || s->e != e))
        return SL_EINTERNAL;
    struct ex_ctx c = {e, b, start, n, s->mem, s->aux, err, err_len};
    int rc = ex_eval_node(&c, e->root);
    if (rc < 0)
        return rc;
    const struct ex_node *root = &e->nodes[e->root];
    void *v = ex_vals(&c, e->root);
    out->vk = root->vk;
    out->n = n;
    out->i = v;
    out->f = v;
    out->b = v;
    out->d = v;
    out->s = v;
    out->null = *ex_has_null(&c, e->root) ? ex_nulls(&c, e->root) : NULL;
    return SL_OK;
}
