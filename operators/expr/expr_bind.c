/* Expressions: binding column names to a schema and checking types (rules in expr.h). */
#include <stdio.h>
#include <string.h>

#include "expr_int.h"

struct binder {
    struct sl__expr *e;
    const sl_schema_t *schema;
    char *err;
    size_t err_len;
};

static const char *op_text(enum ex_op op)
{
    static const char *const t[] = {
        [EX_NEG] = "unary -", [EX_ADD] = "+",  [EX_SUB] = "-",   [EX_MUL] = "*",
        [EX_DIV] = "/",       [EX_MOD] = "%",  [EX_EQ] = "=",    [EX_NE] = "!=",
        [EX_LT] = "<",        [EX_LE] = "<=",  [EX_GT] = ">",    [EX_GE] = ">=",
        [EX_AND] = "AND",     [EX_OR] = "OR",  [EX_NOT] = "NOT", [EX_IN] = "IN",
        [EX_NOT_IN] = "NOT IN", [EX_CAST] = "CAST"};
    return op < sizeof t / sizeof t[0] && t[op] ? t[op] : "?";
}

/* "column x (int32)", "literal 1.5", "a float64 expression" ... for messages. */
static const char *describe(const struct ex_node *n, char *buf, size_t len)
{
    if (n->op == EX_COL)
        snprintf(buf, len, "column %s (%s)", n->name, sl_type_name(n->type));
    else if (n->op == EX_INT)
        snprintf(buf, len, "integer literal %lld", (long long)n->ival);
    else if (n->op == EX_FLOAT)
        snprintf(buf, len, "float literal %g", n->fval);
    else if (n->vk == SL__VK_BOOL)
        snprintf(buf, len, "a boolean condition");
    else
        snprintf(buf, len, "a %s expression", sl_type_name(n->type));
    return buf;
}

SL__PRINTF(4, 5)
static int berr(struct binder *bd, int code, int pos, const char *fmt, ...)
{
    char what[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int tl = (int)strlen(bd->e->text);
    snprintf(bd->err, bd->err_len, "%s at position %d of \"%.*s%s\"", what, pos,
             tl > SL__EXPR_ECHO ? SL__EXPR_ECHO : tl, bd->e->text, tl > SL__EXPR_ECHO ? "..." : "");
    return code;
}

static int bind_col(struct binder *bd, struct ex_node *n)
{
    int idx = sl_schema_find(bd->schema, n->name);
    if (idx < 0) {
        char cols[200] = "";
        size_t len = 0;
        int nf = sl_schema_num_fields(bd->schema);
        for (int i = 0; i < nf && len < sizeof cols - 40; i++) {
            const char *name;
            sl_schema_field(bd->schema, i, &name, NULL);
            len += (size_t)snprintf(cols + len, sizeof cols - len, "%s%s", i ? ", " : "", name);
        }
        return berr(bd, SL_ENOTFOUND, n->pos, "unknown column '%s' (the input has: %s)", n->name,
                    nf ? cols : "no columns");
    }
    enum sl_type t;
    sl_schema_field(bd->schema, idx, NULL, &t);
    n->col = idx;
    n->type = t;
    n->vk = t == SL_TYPE_INT32 || t == SL_TYPE_INT64 ? SL__VK_INT : SL__VK_FLOAT;
    return SL_OK;
}

static void to_float_literal(struct ex_node *n)
{
    n->op = EX_FLOAT;
    n->fval = (double)n->ival;
    n->int_lit = false;
    n->vk = SL__VK_FLOAT;
    n->type = SL_TYPE_FLOAT64;
}

/* Brings the operands of a binary numeric operator to one kind; SL_ETYPE otherwise. */
static int unify(struct binder *bd, struct ex_node *n)
{
    struct ex_node *a = &bd->e->nodes[n->a], *b = &bd->e->nodes[n->b];
    char da[96], db[96];
    if (a->vk == SL__VK_BOOL || b->vk == SL__VK_BOOL)
        return berr(bd, SL_ETYPE, n->pos, "'%s' needs numbers, got %s and %s (hint: combine "
                    "conditions with AND, OR and NOT)", op_text(n->op),
                    describe(a, da, sizeof da), describe(b, db, sizeof db));
    if (a->vk == b->vk)
        return SL_OK;
    if (a->op == EX_INT && a->int_lit) {
        to_float_literal(a);
        return SL_OK;
    }
    if (b->op == EX_INT && b->int_lit) {
        to_float_literal(b);
        return SL_OK;
    }
    return berr(bd, SL_ETYPE, n->pos, "'%s' mixes %s and %s (hint: convert one side, e.g. "
                "CAST(... AS float64) or CAST(... AS int64))", op_text(n->op),
                describe(a, da, sizeof da), describe(b, db, sizeof db));
}

static int bind_in(struct binder *bd, struct ex_node *n)
{
    struct ex_node *a = &bd->e->nodes[n->a];
    char da[96];
    if (a->vk == SL__VK_BOOL)
        return berr(bd, SL_ETYPE, n->pos, "IN needs a number on its left, got %s",
                    describe(a, da, sizeof da));
    int n_int = 0, n_float = 0, first_float = 0;
    for (int k = 0; k < n->n_list; k++) {
        struct ex_node *l = &bd->e->nodes[bd->e->list[n->list + k]];
        if (l->op == EX_INT) {
            n_int++;
        } else if (!n_float++) {
            first_float = l->pos;
        }
    }
    if (n_int && n_float)
        return berr(bd, SL_ETYPE, first_float, "the IN list mixes integer and float literals "
                    "(hint: write every number the same way, e.g. 1.0 instead of 1)");
    if (n_float && a->vk == SL__VK_INT)
        return berr(bd, SL_ETYPE, first_float, "IN compares %s with float literals (hint: "
                    "CAST(%s AS float64) IN (...), or integer literals)",
                    describe(a, da, sizeof da),
                    a->op == EX_COL ? a->name : "...");
    if (a->vk == SL__VK_FLOAT)
        for (int k = 0; k < n->n_list; k++)
            if (bd->e->nodes[bd->e->list[n->list + k]].op == EX_INT)
                to_float_literal(&bd->e->nodes[bd->e->list[n->list + k]]);
    n->vk = SL__VK_BOOL;
    return SL_OK;
}

static int bind_node(struct binder *bd, struct ex_node *n)
{
    struct ex_node *a = n->a >= 0 ? &bd->e->nodes[n->a] : NULL;
    struct ex_node *b = n->b >= 0 ? &bd->e->nodes[n->b] : NULL;
    char da[96], db[96];
    int rc;
    switch (n->op) {
    case EX_COL: return bind_col(bd, n);
    case EX_INT: n->vk = SL__VK_INT; n->type = SL_TYPE_INT64; return SL_OK;
    case EX_FLOAT: n->vk = SL__VK_FLOAT; n->type = SL_TYPE_FLOAT64; return SL_OK;
    case EX_NEG:
        if (a->vk == SL__VK_BOOL)
            return berr(bd, SL_ETYPE, n->pos, "unary '-' needs a number, got %s (hint: write NOT "
                        "to negate a condition)", describe(a, da, sizeof da));
        n->vk = a->vk;
        break;
    case EX_ADD: case EX_SUB: case EX_MUL: case EX_DIV: case EX_MOD:
        if ((rc = unify(bd, n)) < 0)
            return rc;
        n->vk = a->vk;
        break;
    case EX_EQ: case EX_NE: case EX_LT: case EX_LE: case EX_GT: case EX_GE:
        if ((rc = unify(bd, n)) < 0)
            return rc;
        n->vk = SL__VK_BOOL;
        break;
    case EX_AND: case EX_OR:
        if (a->vk != SL__VK_BOOL || b->vk != SL__VK_BOOL)
            return berr(bd, SL_ETYPE, n->pos, "%s needs conditions on both sides, got %s and %s "
                        "(hint: compare numbers first, e.g. x != 0)", op_text(n->op),
                        describe(a, da, sizeof da), describe(b, db, sizeof db));
        n->vk = SL__VK_BOOL;
        break;
    case EX_NOT:
        if (a->vk != SL__VK_BOOL)
            return berr(bd, SL_ETYPE, n->pos, "NOT needs a condition, got %s (hint: compare "
                        "first, e.g. NOT (x = 0))", describe(a, da, sizeof da));
        n->vk = SL__VK_BOOL;
        break;
    case EX_IN: case EX_NOT_IN: return bind_in(bd, n);
    case EX_IS_NULL: case EX_IS_NOT_NULL: n->vk = SL__VK_BOOL; break;
    case EX_CAST:
        if (a->vk == SL__VK_BOOL)
            return berr(bd, SL_ETYPE, n->pos, "CAST needs a number, got %s",
                        describe(a, da, sizeof da));
        n->vk = n->type == SL_TYPE_INT32 || n->type == SL_TYPE_INT64 ? SL__VK_INT : SL__VK_FLOAT;
        return SL_OK;
    }
    if (n->vk == SL__VK_INT)
        n->type = SL_TYPE_INT64;
    else if (n->vk == SL__VK_FLOAT)
        n->type = SL_TYPE_FLOAT64;
    else
        n->type = SL_TYPE_INT32;
    return SL_OK;
}

int sl__expr_bind(struct sl__expr *e, const sl_schema_t *schema, char *err, size_t err_len)
{
    struct binder bd = {e, schema, err, err_len};
    /* Children are created before their parents, so one pass in order binds bottom-up. */
    for (int i = 0; i < e->n_nodes; i++) {
        int rc = bind_node(&bd, &e->nodes[i]);
        if (rc < 0)
            return rc;
    }
    return SL_OK;
}

enum sl__expr_vk sl__expr_kind(const struct sl__expr *e)
{
    return e->nodes[e->root].vk;
}

enum sl_type sl__expr_type(const struct sl__expr *e)
{
    const struct ex_node *n = &e->nodes[e->root];
    return n->vk == SL__VK_BOOL ? SL_TYPE_INT32 : n->type;
}

int sl__expr_column(const struct sl__expr *e)
{
    const struct ex_node *n = &e->nodes[e->root];
    return n->op == EX_COL ? n->col : -1;
}

const char *sl__expr_column_name(const struct sl__expr *e)
{
    const struct ex_node *n = &e->nodes[e->root];
    return n->op == EX_COL ? n->name : NULL;
}
