/* Expressions: vectorized evaluation. Each node owns a vector of SL__EXPR_VEC values and
 * a byte-per-row null vector in the scratch; a node is evaluated after its children, one
 * tight loop per operator and value kind. Rules in expr.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expr_int.h"

struct ctx {
    const struct sl__expr *e;
    const sl_batch_t *batch;
    int64_t start, n;
    uint8_t *mem;
    char *err;
    size_t err_len;
};

/* Node i's value vector, null vector and "has nulls" flag in the scratch. */
static inline void *vals(const struct ctx *c, int i)
{
    return c->mem + (size_t)i * SL__EXPR_VEC * 8;
}

static inline uint8_t *nulls(const struct ctx *c, int i)
{
    return c->mem + (size_t)c->e->n_nodes * SL__EXPR_VEC * 8 + (size_t)i * SL__EXPR_VEC;
}

static inline uint8_t *has_null(const struct ctx *c, int i)
{
    return c->mem + (size_t)c->e->n_nodes * SL__EXPR_VEC * 9 + (size_t)i;
}

int sl__expr_scratch_init(struct sl__expr_scratch *s, const struct sl__expr *e)
{
    s->e = e;
    s->bytes = (size_t)e->n_nodes * (SL__EXPR_VEC * 9 + 1);
    s->mem = sl__malloc(s->bytes);
    return s->mem ? SL_OK : SL_ENOMEM;
}

void sl__expr_scratch_fini(struct sl__expr_scratch *s)
{
    if (s->mem)
        sl__free(s->mem, s->bytes);
    s->mem = NULL;
}

SL__PRINTF(4, 5)
static int eval_err(struct ctx *c, const struct ex_node *n, int64_t r, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int tl = (int)strlen(c->e->text);
    snprintf(c->err, c->err_len, "%s at position %d of \"%.*s%s\" (row %lld of the batch)", what,
             n->pos, tl > SL__EXPR_ECHO ? SL__EXPR_ECHO : tl, c->e->text,
             tl > SL__EXPR_ECHO ? "..." : "", (long long)(c->start + r));
    return SL_EOVERFLOW;
}

/* Nulls of a binary node: the union of its children's. */
static void merge_nulls(struct ctx *c, int i, int a, int b)
{
    uint8_t *nu = nulls(c, i);
    bool ha = *has_null(c, a), hb = b >= 0 && *has_null(c, b);
    *has_null(c, i) = ha || hb;
    if (ha && hb) {
        const uint8_t *x = nulls(c, a), *y = nulls(c, b);
        for (int64_t r = 0; r < c->n; r++)
            nu[r] = x[r] | y[r];
    } else if (ha || hb) {
        memcpy(nu, nulls(c, ha ? a : b), (size_t)c->n);
    } else {
        memset(nu, 0, (size_t)c->n);
    }
}

static void eval_col(struct ctx *c, int i, const struct ex_node *n)
{
    const struct sl__col *col = &c->batch->cols[n->col];
    const void *src = sl__col_values(c->batch, n->col);
    int64_t s = c->start, len = c->n;
    switch (n->type) {
    case SL_TYPE_INT32: {
        const int32_t *x = (const int32_t *)src + s;
        int64_t *o = vals(c, i);
        for (int64_t r = 0; r < len; r++)
            o[r] = x[r];
        break;
    }
    case SL_TYPE_FLOAT32: {
        const float *x = (const float *)src + s;
        double *o = vals(c, i);
        for (int64_t r = 0; r < len; r++)
            o[r] = x[r];
        break;
    }
    default:
        memcpy(vals(c, i), (const char *)src + (size_t)s * 8, (size_t)len * 8);
        break;
    }
    uint8_t *nu = nulls(c, i);
    bool any = false;
    if (col->validity && col->null_count != 0) {
        const uint8_t *v = col->validity->ptr;
        for (int64_t r = 0; r < len; r++) {
            int64_t bit = col->offset + s + r;
            nu[r] = !((v[bit >> 3] >> (bit & 7)) & 1);
            any |= nu[r];
        }
    }
    *has_null(c, i) = any;
}

static int eval_int_arith(struct ctx *c, int i, const struct ex_node *n)
{
    const int64_t *x = vals(c, n->a), *y = vals(c, n->b);
    int64_t *o = vals(c, i);
    merge_nulls(c, i, n->a, n->b);
    uint8_t *nu = nulls(c, i);
    bool hn = *has_null(c, i), ovf = false;
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
                    return eval_err(c, n, r, "int64 overflow in %lld / -1", (long long)x[r]);
                o[r] = n->op == EX_DIV ? -x[r] : 0;
            } else {
                o[r] = n->op == EX_DIV ? x[r] / y[r] : x[r] % y[r];
            }
        }
        *has_null(c, i) = hn;
        return SL_OK;
    }
    if (SL__UNLIKELY(ovf)) {
        for (int64_t r = 0; r < len; r++) {
            int64_t t;
            bool bad = n->op == EX_ADD   ? __builtin_add_overflow(x[r], y[r], &t)
                       : n->op == EX_SUB ? __builtin_sub_overflow(x[r], y[r], &t)
                                         : __builtin_mul_overflow(x[r], y[r], &t);
            if (bad && !nu[r])
                return eval_err(c, n, r, "int64 overflow in %lld %c %lld", (long long)x[r],
                                n->op == EX_ADD ? '+' : n->op == EX_SUB ? '-' : '*',
                                (long long)y[r]);
        }
    }
    return SL_OK;
}

static void eval_float_arith(struct ctx *c, int i, const struct ex_node *n)
{
    const double *x = vals(c, n->a), *y = vals(c, n->b);
    double *o = vals(c, i);
    int64_t len = c->n;
    merge_nulls(c, i, n->a, n->b);
    switch (n->op) {
    case EX_ADD: for (int64_t r = 0; r < len; r++) o[r] = x[r] + y[r]; break;
    case EX_SUB: for (int64_t r = 0; r < len; r++) o[r] = x[r] - y[r]; break;
    case EX_MUL: for (int64_t r = 0; r < len; r++) o[r] = x[r] * y[r]; break;
    case EX_DIV: for (int64_t r = 0; r < len; r++) o[r] = x[r] / y[r]; break;
    default: for (int64_t r = 0; r < len; r++) o[r] = fmod(x[r], y[r]); break;
    }
}

#define CMP_LOOP(T, OP)                                    \
    do {                                                   \
        const T *x = vals(c, n->a), *y = vals(c, n->b);    \
        for (int64_t r = 0; r < len; r++)                  \
            o[r] = x[r] OP y[r];                           \
    } while (0)

#define CMP_ALL(T)                                  \
    switch (n->op) {                                \
    case EX_EQ: CMP_LOOP(T, ==); break;             \
    case EX_NE: CMP_LOOP(T, !=); break;             \
    case EX_LT: CMP_LOOP(T, <); break;              \
    case EX_LE: CMP_LOOP(T, <=); break;             \
    case EX_GT: CMP_LOOP(T, >); break;              \
    default: CMP_LOOP(T, >=); break;                \
    }

static void eval_cmp(struct ctx *c, int i, const struct ex_node *n)
{
    uint8_t *o = vals(c, i);
    int64_t len = c->n;
    merge_nulls(c, i, n->a, n->b);
    if (c->e->nodes[n->a].vk == SL__VK_INT)
        CMP_ALL(int64_t)
    else
        CMP_ALL(double)
}

/* Three-valued AND / OR. */
static void eval_logic(struct ctx *c, int i, const struct ex_node *n)
{
    const uint8_t *x = vals(c, n->a), *y = vals(c, n->b);
    const uint8_t *xn = nulls(c, n->a), *yn = nulls(c, n->b);
    bool hx = *has_null(c, n->a), hy = *has_null(c, n->b);
    uint8_t *o = vals(c, i), *nu = nulls(c, i);
    int64_t len = c->n;
    bool and = n->op == EX_AND, any = false;
    if (!hx && !hy) {
        for (int64_t r = 0; r < len; r++)
            o[r] = and ? (x[r] & y[r]) : (x[r] | y[r]);
        *has_null(c, i) = false;
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
    *has_null(c, i) = any;
}

static void eval_in(struct ctx *c, int i, const struct ex_node *n)
{
    uint8_t *o = vals(c, i);
    int64_t len = c->n;
    const int *list = c->e->list + n->list;
    merge_nulls(c, i, n->a, -1);
    if (c->e->nodes[n->a].vk == SL__VK_INT) {
        const int64_t *x = vals(c, n->a);
        for (int64_t r = 0; r < len; r++) {
            uint8_t hit = 0;
            for (int k = 0; k < n->n_list; k++)
                hit |= x[r] == c->e->nodes[list[k]].ival;
            o[r] = hit;
        }
    } else {
        const double *x = vals(c, n->a);
        for (int64_t r = 0; r < len; r++) {
            uint8_t hit = 0;
            for (int k = 0; k < n->n_list; k++)
                hit |= x[r] == c->e->nodes[list[k]].fval;
            o[r] = hit;
        }
    }
    if (n->op == EX_NOT_IN)
        for (int64_t r = 0; r < len; r++)
            o[r] = !o[r];
}

static int eval_cast(struct ctx *c, int i, const struct ex_node *n)
{
    const struct ex_node *a = &c->e->nodes[n->a];
    int64_t len = c->n;
    merge_nulls(c, i, n->a, -1);
    const uint8_t *nu = nulls(c, i);
    bool hn = *has_null(c, i);
    if (a->vk == SL__VK_INT) {
        const int64_t *x = vals(c, n->a);
        if (n->vk == SL__VK_FLOAT) {
            double *o = vals(c, i);
            for (int64_t r = 0; r < len; r++)
                o[r] = n->type == SL_TYPE_FLOAT32 ? (double)(float)x[r] : (double)x[r];
            return SL_OK;
        }
        int64_t *o = vals(c, i);
        for (int64_t r = 0; r < len; r++) {
            if (n->type == SL_TYPE_INT32 && (x[r] < INT32_MIN || x[r] > INT32_MAX) &&
                !(hn && nu[r]))
                return eval_err(c, n, r, "CAST(%lld AS int32) out of range", (long long)x[r]);
            o[r] = x[r];
        }
        return SL_OK;
    }
    const double *x = vals(c, n->a);
    if (n->vk == SL__VK_FLOAT) {
        double *o = vals(c, i);
        for (int64_t r = 0; r < len; r++)
            o[r] = n->type == SL_TYPE_FLOAT32 ? (double)(float)x[r] : x[r];
        return SL_OK;
    }
    int64_t *o = vals(c, i);
    double lo = n->type == SL_TYPE_INT32 ? -2147483649.0 : -9223372036854777856.0;
    double hi = n->type == SL_TYPE_INT32 ? 2147483648.0 : 9223372036854775808.0;
    for (int64_t r = 0; r < len; r++) {
        if (hn && nu[r]) {
            o[r] = 0;
            continue;
        }
        if (!(x[r] > lo && x[r] < hi))
            return eval_err(c, n, r, "CAST(%g AS %s) out of range", x[r], sl_type_name(n->type));
        o[r] = (int64_t)x[r];
    }
    return SL_OK;
}

static int eval_node(struct ctx *c, int i)
{
    const struct ex_node *n = &c->e->nodes[i];
    int rc;
    if (n->a >= 0 && (rc = eval_node(c, n->a)) < 0)
        return rc;
    if (n->b >= 0 && (rc = eval_node(c, n->b)) < 0)
        return rc;
    int64_t len = c->n;
    switch (n->op) {
    case EX_COL: eval_col(c, i, n); return SL_OK;
    case EX_INT:
        for (int64_t r = 0; r < len; r++)
            ((int64_t *)vals(c, i))[r] = n->ival;
        *has_null(c, i) = false;
        return SL_OK;
    case EX_FLOAT:
        for (int64_t r = 0; r < len; r++)
            ((double *)vals(c, i))[r] = n->fval;
        *has_null(c, i) = false;
        return SL_OK;
    case EX_NEG:
        merge_nulls(c, i, n->a, -1);
        if (n->vk == SL__VK_FLOAT) {
            for (int64_t r = 0; r < len; r++)
                ((double *)vals(c, i))[r] = -((const double *)vals(c, n->a))[r];
            return SL_OK;
        }
        for (int64_t r = 0; r < len; r++) {
            int64_t x = ((const int64_t *)vals(c, n->a))[r];
            if (x == INT64_MIN && !(*has_null(c, i) && nulls(c, i)[r]))
                return eval_err(c, n, r, "int64 overflow in -(%lld)", (long long)x);
            ((int64_t *)vals(c, i))[r] = x == INT64_MIN ? 0 : -x;
        }
        return SL_OK;
    case EX_ADD: case EX_SUB: case EX_MUL: case EX_DIV: case EX_MOD:
        if (n->vk == SL__VK_INT)
            return eval_int_arith(c, i, n);
        eval_float_arith(c, i, n);
        return SL_OK;
    case EX_EQ: case EX_NE: case EX_LT: case EX_LE: case EX_GT: case EX_GE:
        eval_cmp(c, i, n);
        return SL_OK;
    case EX_AND: case EX_OR: eval_logic(c, i, n); return SL_OK;
    case EX_NOT:
        merge_nulls(c, i, n->a, -1);
        for (int64_t r = 0; r < len; r++)
            ((uint8_t *)vals(c, i))[r] = !((const uint8_t *)vals(c, n->a))[r];
        return SL_OK;
    case EX_IN: case EX_NOT_IN: eval_in(c, i, n); return SL_OK;
    case EX_IS_NULL: case EX_IS_NOT_NULL: {
        bool hn = *has_null(c, n->a), want = n->op == EX_IS_NULL;
        const uint8_t *an = nulls(c, n->a);
        for (int64_t r = 0; r < len; r++)
            ((uint8_t *)vals(c, i))[r] = (hn && an[r]) == want;
        *has_null(c, i) = false;
        return SL_OK;
    }
    case EX_CAST: return eval_cast(c, i, n);
    }
    return SL_EINTERNAL;
}

int sl__expr_eval(const struct sl__expr *e, const sl_batch_t *b, int64_t start, int64_t n,
                  struct sl__expr_scratch *s, struct sl__expr_vec *out, char *err,
                  size_t err_len)
{
    if (SL_NEVER(n > SL__EXPR_VEC || s->e != e))
        return SL_EINTERNAL;
    struct ctx c = {e, b, start, n, s->mem, err, err_len};
    int rc = eval_node(&c, e->root);
    if (rc < 0)
        return rc;
    const struct ex_node *root = &e->nodes[e->root];
    out->vk = root->vk;
    out->n = n;
    out->i = vals(&c, e->root);
    out->f = vals(&c, e->root);
    out->b = vals(&c, e->root);
    out->null = *has_null(&c, e->root) ? nulls(&c, e->root) : NULL;
    return SL_OK;
}
