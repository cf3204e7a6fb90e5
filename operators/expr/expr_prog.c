/* Compiling a bound expression into a GPU program (sluice_k/expr_prog.h): the tree is
 * walked once, operands before operators, each operand converted to the kind its
 * operator takes exactly where the CPU evaluator converts it (expr_eval.c, expr_dec.c),
 * so the program gives the CPU's values and errors row by row. What the program cannot
 * express is refused with a reason, and the expression then runs on the CPU. */
#include <stdio.h>
#include <string.h>

#include "expr_int.h"
#include "expr_prog.h"

struct comp {
    const struct sl__expr *e;
    const sl_schema_t *in;
    struct sl__xp *x;
    int sp, max_sp;
    char *why;
    size_t why_len;
};

static int refuse(struct comp *cp, const struct ex_node *n, const char *what)
{
    snprintf(cp->why, cp->why_len, "%s at position %d is not on the GPU", what, n ? n->pos : 0);
    return SL_EUNSUPPORTED;
}

static __int128 pow10_i128(int k)
{
    __int128 p = 1;
    for (int i = 0; i < k; i++)
        p *= 10;
    return p;
}

/* Appends an instruction that takes `pops` values off the stack and pushes one. */
static int emit(struct comp *cp, const struct ex_node *n, int op, int kind, int sub, int a,
                int64_t imm, int pops)
{
    struct sl_xp_prog *p = &cp->x->prog;
    if (p->n_ins == SL_XP_MAX_INS)
        return refuse(cp, n, "an expression of more than 96 operations");
    cp->sp += 1 - pops;
    if (cp->sp > cp->max_sp)
        cp->max_sp = cp->sp;
    if (cp->max_sp > SL_XP_STACK)
        return refuse(cp, n, "an expression nested this deep");
    cp->x->pos[p->n_ins] = n ? n->pos : 0;
    p->ins[p->n_ins++] = (struct sl_xp_ins){(uint8_t)op, (uint8_t)kind, (uint8_t)sub, 0, a, imm};
    return SL_OK;
}

/* A constant in the pool; its index, or < 0 after refusing. */
static int pool_add(struct comp *cp, const struct ex_node *n, sl_xp_val v)
{
    struct sl_xp_prog *p = &cp->x->prog;
    if (p->n_pool == SL_XP_MAX_POOL)
        return refuse(cp, n, "an expression with more than 32 constants");
    p->pool[p->n_pool] = v;
    return p->n_pool++;
}

static int kind_of(enum sl__expr_vk vk)
{
    return vk == SL__VK_FLOAT ? SL_XK_F
           : vk == SL__VK_DEC ? SL_XK_D
           : vk == SL__VK_STR ? SL_XK_S
                              : SL_XK_I;
}

/* The LIKE fast paths keep the evaluator's numbering. */
_Static_assert((int)LIKE_EXACT == SL_XL_EXACT && (int)LIKE_PREFIX == SL_XL_PREFIX &&
                   (int)LIKE_SUFFIX == SL_XL_SUFFIX && (int)LIKE_CONTAINS == SL_XL_CONTAINS &&
                   (int)LIKE_SEGMENTS == SL_XL_SEGMENTS && (int)LIKE_GENERAL == SL_XL_GENERAL,
               "enum ex_like and SL_XL_* differ");

/* Bytes s (len) copied into the program's string bytes: their offset, or < 0 after
 * refusing. */
static int64_t sbytes_add(struct comp *cp, const struct ex_node *n, const char *s, int64_t len)
{
    struct sl_xp_prog *p = &cp->x->prog;
    if (len > SL_XP_MAX_SBYTES - p->n_sbytes)
        return refuse(cp, n, "string constants of more than 448 bytes");
    int64_t at = p->n_sbytes;
    if (len > 0)
        memcpy(p->sbytes + at, s, (size_t)len);
    p->n_sbytes += (int32_t)len;
    return at;
}

static int scale_of(const struct ex_node *n)
{
    return n->vk == SL__VK_DEC ? sl_type_scale(n->type) : 0;
}

int sl__xp_store_of(enum sl_type t)
{
    switch (SL_TYPE_ID(t)) {
    case SL_TYPE_INT8: return SL_XS_I8;
    case SL_TYPE_INT16: return SL_XS_I16;
    case SL_TYPE_INT32: case SL_TYPE_DATE32: return SL_XS_I32;
    case SL_TYPE_INT64: case SL_TYPE_TIMESTAMP: return SL_XS_I64;
    case SL_TYPE_UINT8: return SL_XS_U8;
    case SL_TYPE_UINT16: return SL_XS_U16;
    case SL_TYPE_UINT32: return SL_XS_U32;
    case SL_TYPE_UINT64: return SL_XS_U64;
    case SL_TYPE_FLOAT32: return SL_XS_F32;
    case SL_TYPE_FLOAT64: return SL_XS_F64;
    case SL_TYPE_BOOL: return SL_XS_BOOL;
    case SL_TYPE_DECIMAL: return sl_type_width(t) == 8 ? SL_XS_D64 : SL_XS_D128;
    default: return -1;
    }
}

/* The slot of input column `col`, added if new; < 0 after refusing. */
static int slot_of(struct comp *cp, const struct ex_node *n, int col)
{
    struct sl_xp_prog *p = &cp->x->prog;
    for (int s = 0; s < p->n_cols; s++)
        if (p->col[s] == col)
            return s;
    if (p->n_cols == SL_XP_MAX_COLS)
        return refuse(cp, n, "an expression reading more than 16 columns");
    p->col[p->n_cols] = col;
    return p->n_cols++;
}

/* 10^k and the largest |v| that 10^k can multiply (expr_dec.c's limit), as a pool pair. */
static int pool_rescale(struct comp *cp, const struct ex_node *n, int k)
{
    __int128 mul = pow10_i128(k);
    sl_xp_val a = {.d = mul}, b = {.d = ((((__int128)1) << 126) - 1) / mul * 2};
    int i = pool_add(cp, n, a);
    return i < 0 || pool_add(cp, n, b) < 0 ? -1 : i;
}

static int emit_node(struct comp *cp, int i);

/* Converts the value on top (of node `from`) to kind `to` at `scale` (decimals). */
static int convert(struct comp *cp, const struct ex_node *from, enum sl__expr_vk to, int scale,
                   bool saturate)
{
    enum sl__expr_vk vk = from->vk;
    if (to == SL__VK_FLOAT && vk != SL__VK_FLOAT) {
        if (vk != SL__VK_DEC)
            return emit(cp, from, SL_XP_I2F, SL_XK_F, 0, 0, 0, 1);
        int k = pool_add(cp, from, (sl_xp_val){.d = pow10_i128(scale_of(from))});
        return k < 0 ? SL_EUNSUPPORTED : emit(cp, from, SL_XP_D2F, SL_XK_F, 0, k, 0, 1);
    }
    if (to == SL__VK_TS && vk == SL__VK_DATE)
        return emit(cp, from, SL_XP_D2TS, SL_XK_I, 0, 0, 0, 1);
    if (to == SL__VK_DEC && (vk != SL__VK_DEC || scale_of(from) != scale)) {
        int from_scale = scale_of(from);
        if (scale < from_scale || (vk != SL__VK_DEC && vk != SL__VK_INT))
            return refuse(cp, from, "this decimal conversion");
        int k = pool_rescale(cp, from, scale - from_scale);
        return k < 0 ? SL_EUNSUPPORTED
                     : emit(cp, from, vk == SL__VK_DEC ? SL_XP_D2D : SL_XP_I2D, SL_XK_D,
                            saturate, k, 0, 1);
    }
    return SL_OK;
}

static int emit_as(struct comp *cp, int i, enum sl__expr_vk to, int scale, bool saturate)
{
    int rc = emit_node(cp, i);
    return rc < 0 ? rc : convert(cp, &cp->e->nodes[i], to, scale, saturate);
}

static int emit_literal(struct comp *cp, const struct ex_node *n)
{
    sl_xp_val v = {.d = 0};
    switch (n->op) {
    case EX_FLOAT: v.f = n->fval; break;
    case EX_DEC: v.d = n->dval; break;
    case EX_INT: case EX_BOOL: v.i = n->ival; break;
    case EX_STR: {
        int64_t at = sbytes_add(cp, n, n->str, n->slen);
        return at < 0 ? SL_EUNSUPPORTED
                      : emit(cp, n, SL_XP_STR, SL_XK_S, 0, (int)at, n->slen, 0);
    }
    default: return refuse(cp, n, "an interval value");
    }
    int k = pool_add(cp, n, v);
    return k < 0 ? SL_EUNSUPPORTED : emit(cp, n, SL_XP_LIT, kind_of(n->vk), 0, k, 0, 0);
}

/* IN-list literal l as a constant of the comparison's kind (ck, cscale), converted as
 * the CPU converts the literal's vector (a NULL literal's vector holds zeros). */
static int in_constant(struct comp *cp, const struct ex_node *n, const struct ex_node *l,
                       sl_xp_val *v)
{
    v->d = 0;
    if (l->op == EX_NULL) /* a string NULL is "" there */
        return SL_OK;
    if (n->ck == SL__VK_STR) {
        int64_t at = l->op == EX_STR ? sbytes_add(cp, l, l->str, l->slen) : -1;
        if (at < 0)
            return l->op == EX_STR ? SL_EUNSUPPORTED : refuse(cp, l, "this IN list");
        v->i = (int64_t)((uint64_t)at << 32 | (uint64_t)l->slen);
        return SL_OK;
    }
    if (l->op != EX_INT && l->op != EX_DEC && l->op != EX_FLOAT && l->op != EX_BOOL)
        return refuse(cp, l, "this IN list");
    switch (n->ck) {
    case SL__VK_FLOAT:
        v->f = l->op == EX_FLOAT ? l->fval
               : l->op == EX_DEC ? sl__xp_d2f(l->dval, pow10_i128(scale_of(l)))
                                 : (double)l->ival;
        return SL_OK;
    case SL__VK_DEC: {
        int from = l->op == EX_DEC ? scale_of(l) : 0;
        if (n->cscale < from)
            return refuse(cp, l, "this IN list");
        __int128 mul = pow10_i128(n->cscale - from);
        sl__xp_rescale(l->op == EX_DEC ? l->dval : l->ival, mul,
                       ((((__int128)1) << 126) - 1) / mul * 2, 1, &v->d);
        return SL_OK;
    }
    case SL__VK_TS:
        v->i = l->vk == SL__VK_DATE ? l->ival * 86400000000LL : l->ival;
        return SL_OK;
    default: v->i = l->ival; return SL_OK;
    }
}

static int emit_in(struct comp *cp, const struct ex_node *n)
{
    int rc = emit_as(cp, n->a, n->ck, n->cscale, true);
    if (rc < 0)
        return rc;
    int first = cp->x->prog.n_pool;
    for (int k = 0; k < n->n_list; k++) {
        sl_xp_val v;
        if ((rc = in_constant(cp, n, &cp->e->nodes[cp->e->list[n->list + k]], &v)) < 0 ||
            pool_add(cp, n, v) < 0)
            return SL_EUNSUPPORTED;
    }
    return emit(cp, n, SL_XP_IN, kind_of(n->ck), n->op == EX_NOT_IN, first, n->n_list, 1);
}

static int emit_dict(struct comp *cp, int i, const struct ex_node *n)
{
    const struct ex_node *a = &cp->e->nodes[n->a];
    struct sl__xp *x = cp->x;
    if (x->n_dicts == SL__XP_MAX_DICTS)
        return refuse(cp, n, "more than 16 dictionary predicates");
    int s = slot_of(cp, a, a->col);
    if (s < 0)
        return s;
    x->dict_ins[x->n_dicts] = x->prog.n_ins;
    x->dict_node[x->n_dicts++] = i;
    return emit(cp, n, SL_XP_DICT, SL_XK_I, 0, s, 0, 0);
}

static int emit_arith(struct comp *cp, const struct ex_node *n)
{
    static const int xa[] = {[EX_ADD] = SL_XA_ADD, [EX_SUB] = SL_XA_SUB, [EX_MUL] = SL_XA_MUL,
                             [EX_DIV] = SL_XA_DIV, [EX_MOD] = SL_XA_MOD};
    int rc;
    if (n->ck == SL__VK_INTERVAL)
        return refuse(cp, n, "an interval added to a column");
    if (n->vk == SL__VK_DEC) {
        int s = sl_type_scale(n->type);
        const struct ex_node *a = &cp->e->nodes[n->a], *b = &cp->e->nodes[n->b];
        int sa = n->op == EX_MUL ? scale_of(a) : s, sb = n->op == EX_MUL ? scale_of(b) : s;
        if (n->op != EX_ADD && n->op != EX_SUB && n->op != EX_MUL)
            return refuse(cp, n, "this decimal operation");
        if ((rc = emit_as(cp, n->a, SL__VK_DEC, sa, false)) < 0 ||
            (rc = emit_as(cp, n->b, SL__VK_DEC, sb, false)) < 0)
            return rc;
        int k = pool_add(cp, n, (sl_xp_val){.d = pow10_i128(sl_type_precision(n->type))});
        return k < 0 ? SL_EUNSUPPORTED : emit(cp, n, SL_XP_ARITH, SL_XK_D, xa[n->op], k, 0, 2);
    }
    if (n->ck == SL__VK_INT) {
        if ((rc = emit_node(cp, n->a)) < 0 || (rc = emit_node(cp, n->b)) < 0 ||
            (rc = emit(cp, n, SL_XP_ARITH, SL_XK_I, xa[n->op], 0, 0, 2)) < 0)
            return rc;
        cp->x->prog.ins[cp->x->prog.n_ins - 1].flag = n->vk == SL__VK_DATE;
        return SL_OK;
    }
    if ((rc = emit_as(cp, n->a, SL__VK_FLOAT, 0, false)) < 0 ||
        (rc = emit_as(cp, n->b, SL__VK_FLOAT, 0, false)) < 0)
        return rc;
    return emit(cp, n, SL_XP_ARITH, SL_XK_F, xa[n->op], 0, 0, 2);
}

static int emit_cmp(struct comp *cp, const struct ex_node *n)
{
    enum sl__expr_vk to = n->ck == SL__VK_BOOL || n->ck == SL__VK_DATE ? SL__VK_INT : n->ck;
    int rc;
    if (to == SL__VK_INT || to == SL__VK_STR) { /* as stored: no conversion (expr_eval.c) */
        if ((rc = emit_node(cp, n->a)) < 0 || (rc = emit_node(cp, n->b)) < 0)
            return rc;
    } else if ((rc = emit_as(cp, n->a, to, n->cscale, true)) < 0 ||
               (rc = emit_as(cp, n->b, to, n->cscale, true)) < 0) {
        return rc;
    }
    return emit(cp, n, SL_XP_CMP, kind_of(to), n->op - EX_EQ, 0, 0, 2);
}

/* s [NOT] LIKE 'pattern': the pattern's bytes and fast path (chosen by the parser) go
 * with the instruction. */
static int emit_like(struct comp *cp, const struct ex_node *n)
{
    int rc = emit_node(cp, n->a);
    int64_t at = rc < 0 ? rc : sbytes_add(cp, n, n->str, n->slen);
    if (at < 0 || emit(cp, n, SL_XP_LIKE, SL_XK_I, n->like, (int)at, n->slen, 1) < 0)
        return SL_EUNSUPPORTED;
    cp->x->prog.ins[cp->x->prog.n_ins - 1].flag = n->op == EX_NOT_LIKE;
    return SL_OK;
}

/* CASE and COALESCE: every operand converted to the node's kind, then one selection. */
static int emit_choice(struct comp *cp, const struct ex_node *n)
{
    const int *list = cp->e->list + n->list;
    int rc;
    if (n->op == EX_CASE) {
        for (int k = 0; k < n->n_list; k += 2)
            if ((rc = emit_node(cp, list[k])) < 0 ||
                (rc = emit_as(cp, list[k + 1], n->vk, n->cscale, false)) < 0)
                return rc;
        if (n->b >= 0 && (rc = emit_as(cp, n->b, n->vk, n->cscale, false)) < 0)
            return rc;
        int m = n->n_list + (n->b >= 0);
        return emit(cp, n, SL_XP_CASE, kind_of(n->vk), n->b >= 0, n->n_list / 2, 0, m);
    }
    for (int k = 0; k < n->n_list; k++)
        if ((rc = emit_as(cp, list[k], n->vk, n->cscale, false)) < 0)
            return rc;
    return emit(cp, n, SL_XP_COALESCE, kind_of(n->vk), 0, n->n_list, 0, n->n_list);
}

/* utf8 and large_utf8 columns are read as strings (offsets and bytes); dictionary codes
 * only through their predicates' tables (emit_dict). */
static int emit_col(struct comp *cp, const struct ex_node *n)
{
    enum sl_type t = cp->in->fields[n->col].type;
    int st = t == SL_TYPE_UTF8         ? SL_XS_STR32
             : t == SL_TYPE_LARGE_UTF8 ? SL_XS_STR64
                                       : sl__xp_store_of(t);
    if (st < 0)
        return refuse(cp, n, sl_type_is_string(t) ? "a dictionary column used as a value"
                                                  : "a column of this type");
    int s = slot_of(cp, n, n->col);
    return s < 0 ? s : emit(cp, n, SL_XP_COL, kind_of(n->vk), st, s, 0, 0);
}

static int emit_node(struct comp *cp, int i)
{
    const struct ex_node *n = &cp->e->nodes[i];
    int rc;
    if (n->vk == SL__VK_INTERVAL)
        return refuse(cp, n, "an interval value");
    if (n->on_dict)
        return emit_dict(cp, i, n);
    switch (n->op) {
    case EX_COL: return emit_col(cp, n);
    case EX_INT: case EX_FLOAT: case EX_DEC: case EX_BOOL: case EX_STR:
        return emit_literal(cp, n);
    case EX_NULL: return emit(cp, n, SL_XP_NULL, kind_of(n->vk), 0, 0, 0, 0);
    case EX_NEG:
        return (rc = emit_node(cp, n->a)) < 0 ? rc
                                               : emit(cp, n, SL_XP_NEG, kind_of(n->vk), 0, 0, 0, 1);
    case EX_ADD: case EX_SUB: case EX_MUL: case EX_DIV: case EX_MOD: return emit_arith(cp, n);
    case EX_EQ: case EX_NE: case EX_LT: case EX_LE: case EX_GT: case EX_GE: return emit_cmp(cp, n);
    case EX_AND: case EX_OR:
        if ((rc = emit_node(cp, n->a)) < 0 || (rc = emit_node(cp, n->b)) < 0)
            return rc;
        return emit(cp, n, n->op == EX_AND ? SL_XP_AND : SL_XP_OR, SL_XK_I, 0, 0, 0, 2);
    case EX_NOT:
        return (rc = emit_node(cp, n->a)) < 0 ? rc : emit(cp, n, SL_XP_NOT, SL_XK_I, 0, 0, 0, 1);
    case EX_IS_NULL: case EX_IS_NOT_NULL:
        if (cp->e->nodes[n->a].op == EX_COL &&
            SL_TYPE_ID(cp->in->fields[cp->e->nodes[n->a].col].type) == SL_TYPE_DICT) {
            const struct ex_node *a = &cp->e->nodes[n->a]; /* the nulls of its codes */
            int s = slot_of(cp, a, a->col);
            rc = s < 0 ? s : emit(cp, a, SL_XP_COL, SL_XK_I, SL_XS_I32, s, 0, 0);
        } else {
            rc = emit_node(cp, n->a);
        }
        return rc < 0
                   ? rc
                   : emit(cp, n, SL_XP_ISNULL, SL_XK_I, n->op == EX_IS_NULL, 0, 0, 1);
    case EX_IN: case EX_NOT_IN: return emit_in(cp, n);
    case EX_CASE: case EX_COALESCE: return emit_choice(cp, n);
    case EX_EXTRACT: {
        const struct ex_node *a = &cp->e->nodes[n->a];
        int unit = n->ival == EX_YEAR ? 0 : n->ival == EX_MONTH ? 1 : 2;
        if ((rc = emit_node(cp, n->a)) < 0 ||
            (rc = emit(cp, n, SL_XP_EXTRACT, SL_XK_I, unit, 0, 0, 1)) < 0)
            return rc;
        cp->x->prog.ins[cp->x->prog.n_ins - 1].flag = a->vk == SL__VK_TS;
        return SL_OK;
    }
    case EX_CAST: return refuse(cp, n, "CAST");
    case EX_LIKE: case EX_NOT_LIKE: return emit_like(cp, n);
    case EX_SUBSTR: return refuse(cp, n, "SUBSTRING");
    case EX_LENGTH:
        return (rc = emit_node(cp, n->a)) < 0 ? rc
                                               : emit(cp, n, SL_XP_LENGTH, SL_XK_I, 0, 0, 0, 1);
    default: return refuse(cp, n, "this operation");
    }
}

int sl__xp_compile(const struct sl__expr *e, const sl_schema_t *in, struct sl__xp *x, char *why,
                   size_t why_len)
{
    memset(x, 0, sizeof *x);
    struct comp cp = {e, in, x, 0, 0, why, why_len};
    if (why_len)
        why[0] = 0;
    if (e->nodes[e->root].vk == SL__VK_STR)
        return refuse(&cp, &e->nodes[e->root], "a string result");
    int rc = emit_node(&cp, e->root);
    if (rc < 0)
        return SL_EUNSUPPORTED;
    x->vk = sl__expr_kind(e);
    x->type = sl__expr_type(e);
    if (SL_NEVER(cp.sp != 1))
        return SL_EINTERNAL;
    x->reg_ok = sl__xr_from_prog(&x->prog, &x->reg);
    return SL_OK;
}

struct sl__xp *sl__xp_new(const struct sl__expr *e, const sl_schema_t *in, char *why,
                          size_t why_len)
{
    struct sl__xp *x = sl__malloc(sizeof *x);
    if (!x) {
        snprintf(why, why_len, "out of memory");
        return NULL;
    }
    if (sl__xp_compile(e, in, x, why, why_len) < 0) {
        sl__free(x, sizeof *x);
        return NULL;
    }
    return x;
}

void sl__xp_delete(struct sl__xp *x)
{
    if (x)
        sl__free(x, sizeof *x);
}

int sl__xp_tables(const struct sl__expr *e, const struct sl__xp *x, const sl_batch_t *b,
                  struct sl_xp_prog *prog, uint8_t *tables, int64_t cap, int64_t *n_bytes)
{
    int64_t at = 0;
    for (int j = 0; j < x->n_dicts; j++) {
        struct sl_xp_ins *in = &prog->ins[x->dict_ins[j]];
        const struct sl__dict *d = b->cols[prog->col[in->a]].dict;
        int64_t n = d ? d->n : 0;
        if (at + n <= cap && n > 0)
            sl__expr_dict_hits(e, x->dict_node[j], n, d->offsets->ptr,
                               d->chars ? d->chars->ptr : "", tables + at);
        in->imm = at;
        at += n;
    }
    *n_bytes = at;
    return at <= cap ? SL_OK : SL_ENOSPC;
}

void sl__xp_cols(const struct sl_xp_prog *prog, const sl_batch_t *b, struct sl_xp_cols *c)
{
    memset(c, 0, sizeof *c);
    for (int s = 0; s < prog->n_cols; s++) {
        const struct sl__col *col = &b->cols[prog->col[s]];
        c->data[s] = sl__col_values(b, prog->col[s]);
        c->valid[s] = col->validity && col->null_count != 0 ? col->validity->ptr : NULL;
        c->voff[s] = col->offset;
        c->chars[s] = col->chars ? col->chars->ptr : NULL;
    }
}

void sl__xp_error_text(const struct sl__expr *e, const struct sl__xp *x, int code, int ins,
                       int64_t row, char *buf, size_t len)
{
    int tl = (int)strlen(e->text);
    int pos = ins >= 0 && ins < x->prog.n_ins ? x->pos[ins] : 0;
    snprintf(buf, len, "%s at position %d of \"%.*s%s\" (row %lld of the batch, on the GPU)",
             code == SL_XP_EOVERFLOW ? "overflow" : "a bad program", pos,
             tl > SL__EXPR_ECHO ? SL__EXPR_ECHO : tl, e->text, tl > SL__EXPR_ECHO ? "..." : "",
             (long long)row);
}
