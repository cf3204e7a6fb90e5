/* Expressions: binding column names to a schema and checking types (rules in expr.h and
 * docs/EXPRESSIONS.md). Decimal result types follow DuckDB's binder. */
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
        [EX_NOT_IN] = "NOT IN", [EX_CAST] = "CAST", [EX_LIKE] = "LIKE",
        [EX_NOT_LIKE] = "NOT LIKE", [EX_SUBSTR] = "SUBSTRING", [EX_LENGTH] = "LENGTH",
        [EX_EXTRACT] = "EXTRACT", [EX_CASE] = "CASE", [EX_COALESCE] = "COALESCE"};
    return op < sizeof t / sizeof t[0] && t[op] ? t[op] : "?";
}

static const char *kind_name(enum sl__expr_vk vk)
{
    static const char *const t[] = {"integer", "float", "boolean", "decimal", "string",
                                    "date", "timestamp", "interval"};
    return t[vk];
}

/* "column x (int32)", "literal 1.5", "a float64 expression" ... for messages. */
static const char *describe(const struct ex_node *n, char *buf, size_t len)
{
    if (n->op == EX_COL)
        snprintf(buf, len, "column %s (%s)", n->name, sl_type_name(n->type));
    else if (n->op == EX_INT && n->int_lit)
        snprintf(buf, len, "integer literal %lld", (long long)n->ival);
    else if (n->op == EX_FLOAT)
        snprintf(buf, len, "float literal %g", n->fval);
    else if (n->op == EX_DEC)
        snprintf(buf, len, "decimal literal %g", n->fval);
    else if (n->op == EX_STR)
        snprintf(buf, len, "string literal '%.40s'", n->str);
    else if (n->null_lit)
        snprintf(buf, len, "NULL");
    else if (n->vk == SL__VK_BOOL)
        snprintf(buf, len, "a boolean condition");
    else if (n->vk == SL__VK_INTERVAL)
        snprintf(buf, len, "an interval");
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

/* The value kind a column or CAST target of type t evaluates as. */
static enum sl__expr_vk kind_of_type(enum sl_type t)
{
    switch (SL_TYPE_ID(t)) {
    case SL_TYPE_FLOAT32: case SL_TYPE_FLOAT64: return SL__VK_FLOAT;
    case SL_TYPE_BOOL: return SL__VK_BOOL;
    case SL_TYPE_UINT64: case SL_TYPE_DECIMAL: return SL__VK_DEC;
    case SL_TYPE_DATE32: return SL__VK_DATE;
    case SL_TYPE_TIMESTAMP: return SL__VK_TS;
    case SL_TYPE_UTF8: case SL_TYPE_LARGE_UTF8: case SL_TYPE_DICT: return SL__VK_STR;
    default: return SL__VK_INT;
    }
}

/* Precision and scale of an integer or decimal node seen as a decimal (DuckDB's widths:
 * integers by their type, an integer literal as int32 or int64). */
static void dec_of(const struct ex_node *n, int *p, int *s)
{
    *s = 0;
    if (n->vk == SL__VK_DEC && SL_TYPE_ID(n->type) == SL_TYPE_DECIMAL) {
        *p = sl_type_precision(n->type);
        *s = sl_type_scale(n->type);
        return;
    }
    switch (SL_TYPE_ID(n->type)) {
    case SL_TYPE_INT8: case SL_TYPE_UINT8: *p = 3; return;
    case SL_TYPE_INT16: case SL_TYPE_UINT16: *p = 5; return;
    case SL_TYPE_INT32: case SL_TYPE_UINT32: *p = 10; return;
    case SL_TYPE_UINT64: *p = 20; return;
    default:
        *p = n->int_lit && n->ival >= INT32_MIN && n->ival <= INT32_MAX ? 10 : 19;
        return;
    }
}

static int imax(int a, int b)
{
    return a > b ? a : b;
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
    n->vk = kind_of_type(t);
    return SL_OK;
}

static void to_float_literal(struct ex_node *n)
{
    if (n->op == EX_INT)
        n->fval = (double)n->ival;
    n->op = EX_FLOAT;
    n->int_lit = n->dec_lit = false;
    n->vk = SL__VK_FLOAT;
    n->type = SL_TYPE_FLOAT64;
}

/* A NULL literal takes the kind and type of what it meets. */
static void adopt(struct ex_node *null, const struct ex_node *from)
{
    null->vk = from->vk;
    null->type = from->type;
}

static bool is_num_lit(const struct ex_node *n)
{
    return (n->op == EX_INT && n->int_lit) || n->op == EX_DEC;
}

/* A string literal next to a date or timestamp is read as one (as SQL does). */
static int str_to_datetime(struct binder *bd, struct ex_node *lit, enum sl__expr_vk vk)
{
    int64_t v;
    bool ok = vk == SL__VK_DATE ? ex_parse_date(lit->str, lit->slen, &v)
                                : ex_parse_timestamp(lit->str, lit->slen, &v);
    if (!ok)
        return berr(bd, SL_ETYPE, lit->pos, "'%.40s' is not a %s (hint: write 'yyyy-mm-dd'%s)",
                    lit->str, kind_name(vk), vk == SL__VK_TS ? " hh:mm:ss" : "");
    lit->op = EX_INT;
    lit->ival = v;
    lit->vk = vk;
    lit->type = vk == SL__VK_DATE ? SL_TYPE_DATE32 : SL_TYPE_TIMESTAMP;
    return SL_OK;
}

/* Brings the operands of a binary operator (arithmetic or comparison) to one kind:
 * sets n->ck and n->cscale; SL_ETYPE when they do not mix. */
static int unify(struct binder *bd, struct ex_node *n)
{
    struct ex_node *a = &bd->e->nodes[n->a], *b = &bd->e->nodes[n->b];
    char da[96], db[96];
    if (a->null_lit && !b->null_lit && b->vk != SL__VK_INTERVAL)
        adopt(a, b);
    if (b->null_lit && !a->null_lit && a->vk != SL__VK_INTERVAL)
        adopt(b, a);
    if (a->op == EX_STR && (b->vk == SL__VK_DATE || b->vk == SL__VK_TS) &&
        str_to_datetime(bd, a, b->vk) < 0)
        return SL_ETYPE;
    if (b->op == EX_STR && (a->vk == SL__VK_DATE || a->vk == SL__VK_TS) &&
        str_to_datetime(bd, b, a->vk) < 0)
        return SL_ETYPE;
    enum sl__expr_vk x = a->vk, y = b->vk;
    bool xnum = x == SL__VK_INT || x == SL__VK_FLOAT || x == SL__VK_DEC;
    bool ynum = y == SL__VK_INT || y == SL__VK_FLOAT || y == SL__VK_DEC;
    n->cscale = 0;
    if (xnum && ynum) {
        if (x == SL__VK_FLOAT || y == SL__VK_FLOAT) {
            struct ex_node *other = x == SL__VK_FLOAT ? b : a;
            if (is_num_lit(other))
                to_float_literal(other);
            else if (other->vk == SL__VK_INT)
                return berr(bd, SL_ETYPE, n->pos, "'%s' mixes %s and %s (hint: convert one "
                            "side, e.g. CAST(... AS float64) or CAST(... AS int64))",
                            op_text(n->op), describe(a, da, sizeof da), describe(b, db, sizeof db));
            n->ck = SL__VK_FLOAT;
        } else if (x == SL__VK_DEC || y == SL__VK_DEC) {
            int pa, sa, pb, sb;
            dec_of(a, &pa, &sa);
            dec_of(b, &pb, &sb);
            n->ck = SL__VK_DEC;
            n->cscale = imax(sa, sb);
        } else {
            n->ck = SL__VK_INT;
        }
        return SL_OK;
    }
    if ((x == SL__VK_DATE || x == SL__VK_TS) && (y == SL__VK_DATE || y == SL__VK_TS)) {
        n->ck = x == SL__VK_TS || y == SL__VK_TS ? SL__VK_TS : SL__VK_DATE;
        return SL_OK;
    }
    if (x == y && (x == SL__VK_STR || x == SL__VK_BOOL)) {
        n->ck = x;
        return SL_OK;
    }
    return berr(bd, SL_ETYPE, n->pos, "'%s' cannot combine %s and %s (hint: CAST one side to "
                "the other's type)", op_text(n->op), describe(a, da, sizeof da),
                describe(b, db, sizeof db));
}

/* Decimal result type of + - * (DuckDB's rules; see expr.h). */
static int dec_arith_type(struct binder *bd, struct ex_node *n)
{
    int pa, sa, pb, sb, p, s;
    dec_of(&bd->e->nodes[n->a], &pa, &sa);
    dec_of(&bd->e->nodes[n->b], &pb, &sb);
    if (n->op == EX_MUL) {
        s = sa + sb;
        p = pa + pb;
        if (p > SL_DECIMAL64_MAX_PRECISION && pa <= SL_DECIMAL64_MAX_PRECISION &&
            pb <= SL_DECIMAL64_MAX_PRECISION && s < SL_DECIMAL64_MAX_PRECISION)
            p = SL_DECIMAL64_MAX_PRECISION;
        n->cscale = -1; /* operands keep their own scales */
    } else {
        s = imax(sa, sb);
        p = imax(pa - sa, pb - sb) + s + 1;
    }
    if (s > SL_DECIMAL_MAX_PRECISION)
        return berr(bd, SL_ETYPE, n->pos, "'%s' gives a decimal scale of %d, above %d (hint: CAST "
                    "an operand to fewer decimals)", op_text(n->op), s, SL_DECIMAL_MAX_PRECISION);
    if (p > SL_DECIMAL_MAX_PRECISION)
        p = SL_DECIMAL_MAX_PRECISION;
    n->type = sl_type_decimal(p, s);
    n->vk = SL__VK_DEC;
    return SL_OK;
}

static int bind_arith(struct binder *bd, struct ex_node *n)
{
    struct ex_node *a = &bd->e->nodes[n->a], *b = &bd->e->nodes[n->b];
    char da[96], db[96];
    bool adate = a->vk == SL__VK_DATE || a->vk == SL__VK_TS;
    if ((n->op == EX_ADD || n->op == EX_SUB) &&
        (b->vk == SL__VK_INTERVAL || (n->op == EX_ADD && a->vk == SL__VK_INTERVAL))) {
        struct ex_node *d = b->vk == SL__VK_INTERVAL ? a : b;
        if (d->vk != SL__VK_DATE && d->vk != SL__VK_TS)
            return berr(bd, SL_ETYPE, n->pos, "an interval is added to dates or timestamps, not "
                        "to %s", describe(d, da, sizeof da));
        n->ck = SL__VK_INTERVAL;
        n->vk = d->vk;
        n->type = d->vk == SL__VK_DATE ? SL_TYPE_DATE32 : SL_TYPE_TIMESTAMP;
        return SL_OK;
    }
    if (a->vk == SL__VK_INTERVAL || b->vk == SL__VK_INTERVAL)
        return berr(bd, SL_ETYPE, n->pos, "an interval can only be added to or subtracted from a "
                    "date (hint: d + INTERVAL '3' MONTH)");
    if (adate && (n->op == EX_ADD || n->op == EX_SUB) && b->vk == SL__VK_INT &&
        a->vk == SL__VK_DATE) { /* date ± days */
        n->ck = SL__VK_INT;
        n->vk = SL__VK_DATE;
        n->type = SL_TYPE_DATE32;
        return SL_OK;
    }
    if (n->op == EX_SUB && a->vk == SL__VK_DATE && b->vk == SL__VK_DATE) { /* days between */
        n->ck = SL__VK_INT;
        n->vk = SL__VK_INT;
        n->type = SL_TYPE_INT64;
        return SL_OK;
    }
    int rc = unify(bd, n);
    if (rc < 0)
        return rc;
    if (n->ck != SL__VK_INT && n->ck != SL__VK_FLOAT && n->ck != SL__VK_DEC)
        return berr(bd, SL_ETYPE, n->pos, "'%s' needs numbers, got %s and %s (hint: combine "
                    "conditions with AND, OR and NOT)", op_text(n->op),
                    describe(a, da, sizeof da), describe(b, db, sizeof db));
    if (n->ck == SL__VK_DEC) {
        if (n->op == EX_DIV) { /* decimal / decimal is a double, as DuckDB */
            n->ck = SL__VK_FLOAT;
        } else if (n->op == EX_MOD) {
            return berr(bd, SL_ETYPE, n->pos, "%% on decimals is not supported (hint: CAST the "
                        "operands to int64 or float64)");
        } else {
            return dec_arith_type(bd, n);
        }
    }
    n->vk = n->ck;
    n->type = n->ck == SL__VK_INT ? SL_TYPE_INT64 : SL_TYPE_FLOAT64;
    return SL_OK;
}

/* Brings the literals of an IN list to the operand's kind (n->ck, n->cscale). */
static int bind_in(struct binder *bd, struct ex_node *n)
{
    struct ex_node *a = &bd->e->nodes[n->a];
    char da[96], dl[96];
    n->ck = a->vk;
    n->cscale = 0;
    if (a->vk == SL__VK_DEC)
        n->cscale = sl_type_scale(a->type);
    for (int k = 0; k < n->n_list; k++) {
        struct ex_node *l = &bd->e->nodes[bd->e->list[n->list + k]];
        bool ok;
        switch (a->vk) {
        case SL__VK_INT:
            ok = l->op == EX_INT && l->int_lit;
            if (l->op == EX_DEC) {
                ok = true;
                n->ck = SL__VK_DEC;
                n->cscale = imax(n->cscale, sl_type_scale(l->type));
            } else if (l->op == EX_FLOAT) {
                return berr(bd, SL_ETYPE, l->pos, "IN compares %s with float literals (hint: "
                            "CAST(%s AS float64) IN (...), or integer literals)",
                            describe(a, da, sizeof da), a->op == EX_COL ? a->name : "...");
            }
            break;
        case SL__VK_DEC:
            ok = is_num_lit(l) || l->op == EX_FLOAT;
            if (l->op == EX_DEC)
                n->cscale = imax(n->cscale, sl_type_scale(l->type));
            if (l->op == EX_FLOAT)
                n->ck = SL__VK_FLOAT;
            break;
        case SL__VK_FLOAT:
            ok = is_num_lit(l) || l->op == EX_FLOAT;
            break;
        case SL__VK_DATE: case SL__VK_TS:
            if (l->op == EX_STR && str_to_datetime(bd, l, a->vk) < 0)
                return SL_ETYPE;
            ok = l->vk == SL__VK_DATE || l->vk == SL__VK_TS;
            if (l->vk == SL__VK_TS)
                n->ck = SL__VK_TS;
            break;
        case SL__VK_STR: ok = l->op == EX_STR; break;
        case SL__VK_BOOL: ok = l->op == EX_BOOL; break;
        default: ok = false; break;
        }
        if (!ok)
            return berr(bd, SL_ETYPE, l->pos, "the IN list compares %s with %s (hint: write "
                        "literals of the operand's type)", describe(a, da, sizeof da),
                        describe(l, dl, sizeof dl));
    }
    for (int k = 0; k < n->n_list && n->ck == SL__VK_FLOAT; k++) {
        struct ex_node *l = &bd->e->nodes[bd->e->list[n->list + k]];
        if (l->op != EX_FLOAT)
            to_float_literal(l);
    }
    n->vk = SL__VK_BOOL;
    n->on_dict = SL_TYPE_ID(a->type) == SL_TYPE_DICT && a->op == EX_COL;
    return SL_OK;
}

/* The common kind and type of the values of CASE or COALESCE (DuckDB's rules: numbers
 * widen to decimal or float, dates to timestamps); sets n->vk, n->type, n->cscale. */
static int unify_values(struct binder *bd, struct ex_node *n, const int *idx, int k)
{
    char d0[96], d1[96];
    const struct ex_node *first = &bd->e->nodes[idx[0]];
    for (int j = 0; j < k && first->null_lit; j++)
        first = &bd->e->nodes[idx[j]];
    bool any_float = false, any_dec = false, any_ts = false, same = true;
    int ip = 0, sc = 0;
    for (int j = 0; j < k; j++) {
        struct ex_node *v = &bd->e->nodes[idx[j]];
        if (v->null_lit)
            continue;
        bool num0 = first->vk == SL__VK_INT || first->vk == SL__VK_FLOAT || first->vk == SL__VK_DEC;
        bool num = v->vk == SL__VK_INT || v->vk == SL__VK_FLOAT || v->vk == SL__VK_DEC;
        bool dt0 = first->vk == SL__VK_DATE || first->vk == SL__VK_TS;
        bool dt = v->vk == SL__VK_DATE || v->vk == SL__VK_TS;
        if (v->op == EX_STR && dt0 && str_to_datetime(bd, v, first->vk) < 0)
            return SL_ETYPE;
        dt = v->vk == SL__VK_DATE || v->vk == SL__VK_TS;
        if (!(num && num0) && !(dt && dt0) && v->vk != first->vk)
            return berr(bd, SL_ETYPE, v->pos, "%s mixes %s and %s (hint: CAST the values to one "
                        "type)", op_text(n->op), describe(first, d0, sizeof d0),
                        describe(v, d1, sizeof d1));
        if (v->vk == SL__VK_INTERVAL)
            return berr(bd, SL_ETYPE, v->pos, "an interval is not a value");
        same &= v->type == first->type;
        any_float |= v->vk == SL__VK_FLOAT;
        any_dec |= v->vk == SL__VK_DEC;
        any_ts |= v->vk == SL__VK_TS;
        if (v->vk == SL__VK_INT || v->vk == SL__VK_DEC) {
            int p, s;
            dec_of(v, &p, &s);
            ip = imax(ip, p - s);
            sc = imax(sc, s);
        }
    }
    n->cscale = 0;
    if (any_float) {
        for (int j = 0; j < k; j++)
            if (is_num_lit(&bd->e->nodes[idx[j]]))
                to_float_literal(&bd->e->nodes[idx[j]]);
        n->vk = SL__VK_FLOAT;
        n->type = SL_TYPE_FLOAT64;
    } else if (any_dec) {
        n->vk = SL__VK_DEC;
        n->cscale = sc;
        n->type = sl_type_decimal(ip + sc > SL_DECIMAL_MAX_PRECISION ? SL_DECIMAL_MAX_PRECISION
                                                                    : ip + sc, sc);
    } else if (first->vk == SL__VK_DATE || first->vk == SL__VK_TS) {
        n->vk = any_ts ? SL__VK_TS : SL__VK_DATE;
        n->type = any_ts ? SL_TYPE_TIMESTAMP : SL_TYPE_DATE32;
    } else if (first->vk == SL__VK_STR) {
        n->vk = SL__VK_STR;
        n->type = SL_TYPE_UTF8;
    } else if (first->vk == SL__VK_BOOL) {
        n->vk = SL__VK_BOOL;
        n->type = SL_TYPE_BOOL;
    } else {
        n->vk = SL__VK_INT;
        n->type = same && first->op == EX_COL ? first->type : SL_TYPE_INT64;
    }
    n->ck = n->vk;
    for (int j = 0; j < k; j++)
        if (bd->e->nodes[idx[j]].null_lit)
            adopt(&bd->e->nodes[idx[j]], n);
    return SL_OK;
}

static int bind_case(struct binder *bd, struct ex_node *n)
{
    int vals[SL__EXPR_MAX_NODES], k = 0;
    char da[96];
    for (int j = 0; j < n->n_list; j += 2) {
        struct ex_node *w = &bd->e->nodes[bd->e->list[n->list + j]];
        if (w->vk != SL__VK_BOOL)
            return berr(bd, SL_ETYPE, w->pos, "WHEN needs a condition, got %s",
                        describe(w, da, sizeof da));
        vals[k++] = bd->e->list[n->list + j + 1];
    }
    if (n->b >= 0)
        vals[k++] = n->b;
    return unify_values(bd, n, vals, k);
}

static int bind_cast(struct binder *bd, struct ex_node *n)
{
    struct ex_node *a = &bd->e->nodes[n->a];
    char da[96];
    n->vk = kind_of_type(n->type);
    if (SL_TYPE_ID(n->type) == SL_TYPE_LARGE_UTF8)
        n->type = SL_TYPE_UTF8;
    if (a->null_lit)
        adopt(a, n);
    enum sl__expr_vk f = a->vk, t = n->vk;
    bool num_f = f == SL__VK_INT || f == SL__VK_FLOAT || f == SL__VK_DEC || f == SL__VK_BOOL;
    bool num_t = t == SL__VK_INT || t == SL__VK_FLOAT || t == SL__VK_DEC || t == SL__VK_BOOL;
    bool dt_f = f == SL__VK_DATE || f == SL__VK_TS, dt_t = t == SL__VK_DATE || t == SL__VK_TS;
    bool bad_bool = (f == SL__VK_BOOL && t == SL__VK_DEC) || (t == SL__VK_BOOL && f == SL__VK_DEC);
    if (f == SL__VK_INTERVAL || bad_bool ||
        !(f == SL__VK_STR || t == SL__VK_STR || (num_f && num_t) || (dt_f && dt_t)))
        return berr(bd, SL_ETYPE, n->pos, "CAST cannot turn %s into %s (hint: numbers, dates and "
                    "strings convert among themselves and to and from strings)",
                    describe(a, da, sizeof da), sl_type_name(n->type));
    return SL_OK;
}

static int bind_string_fn(struct binder *bd, struct ex_node *n)
{
    struct ex_node *a = &bd->e->nodes[n->a];
    char da[96];
    if (a->vk != SL__VK_STR)
        return berr(bd, SL_ETYPE, n->pos, "%s needs a string, got %s (hint: CAST(x AS utf8))",
                    op_text(n->op), describe(a, da, sizeof da));
    for (int j = 0; j < n->n_list; j++) {
        struct ex_node *x = &bd->e->nodes[bd->e->list[n->list + j]];
        if (x->vk != SL__VK_INT)
            return berr(bd, SL_ETYPE, x->pos, "SUBSTRING's start and length are integers, got %s",
                        describe(x, da, sizeof da));
    }
    switch (n->op) {
    case EX_LENGTH: n->vk = SL__VK_INT; n->type = SL_TYPE_INT64; break;
    case EX_SUBSTR: n->vk = SL__VK_STR; n->type = SL_TYPE_UTF8; break;
    default:
        n->vk = SL__VK_BOOL;
        n->type = SL_TYPE_BOOL;
        n->on_dict = SL_TYPE_ID(a->type) == SL_TYPE_DICT && a->op == EX_COL;
        break;
    }
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
    case EX_INT:
        n->vk = n->type == SL_TYPE_DATE32 ? SL__VK_DATE
                : n->type == SL_TYPE_TIMESTAMP ? SL__VK_TS : SL__VK_INT;
        if (n->vk == SL__VK_INT)
            n->type = SL_TYPE_INT64;
        return SL_OK;
    case EX_FLOAT: n->vk = SL__VK_FLOAT; n->type = SL_TYPE_FLOAT64; return SL_OK;
    case EX_DEC: n->vk = SL__VK_DEC; return SL_OK;
    case EX_STR: n->vk = SL__VK_STR; n->type = SL_TYPE_UTF8; return SL_OK;
    case EX_BOOL: n->vk = SL__VK_BOOL; n->type = SL_TYPE_BOOL; return SL_OK;
    case EX_INTERVAL: n->vk = SL__VK_INTERVAL; n->type = SL_TYPE_INVALID; return SL_OK;
    case EX_NEG:
        if (a->vk != SL__VK_INT && a->vk != SL__VK_FLOAT && a->vk != SL__VK_DEC)
            return berr(bd, SL_ETYPE, n->pos, "unary '-' needs a number, got %s (hint: write NOT "
                        "to negate a condition)", describe(a, da, sizeof da));
        n->vk = a->vk;
        n->type = a->vk == SL__VK_DEC ? a->type
                  : a->vk == SL__VK_INT ? SL_TYPE_INT64 : SL_TYPE_FLOAT64;
        if (a->vk == SL__VK_DEC && SL_TYPE_ID(a->type) == SL_TYPE_UINT64)
            n->type = sl_type_decimal(20, 0);
        return SL_OK;
    case EX_ADD: case EX_SUB: case EX_MUL: case EX_DIV: case EX_MOD:
        return bind_arith(bd, n);
    case EX_EQ: case EX_NE: case EX_LT: case EX_LE: case EX_GT: case EX_GE:
        if (a->vk == SL__VK_INTERVAL || b->vk == SL__VK_INTERVAL)
            return berr(bd, SL_ETYPE, n->pos, "an interval cannot be compared (hint: add it to a "
                        "date first)");
        if ((rc = unify(bd, n)) < 0)
            return rc;
        n->vk = SL__VK_BOOL;
        n->type = SL_TYPE_BOOL;
        n->on_dict = n->ck == SL__VK_STR && ((a->op == EX_COL && SL_TYPE_ID(a->type) ==
                                               SL_TYPE_DICT && b->op == EX_STR));
        return SL_OK;
    case EX_AND: case EX_OR:
        if (a->null_lit)
            a->vk = SL__VK_BOOL;
        if (b->null_lit)
            b->vk = SL__VK_BOOL;
        if (a->vk != SL__VK_BOOL || b->vk != SL__VK_BOOL)
            return berr(bd, SL_ETYPE, n->pos, "%s needs conditions on both sides, got %s and %s "
                        "(hint: compare numbers first, e.g. x != 0)", op_text(n->op),
                        describe(a, da, sizeof da), describe(b, db, sizeof db));
        break;
    case EX_NOT:
        if (a->null_lit)
            a->vk = SL__VK_BOOL;
        if (a->vk != SL__VK_BOOL)
            return berr(bd, SL_ETYPE, n->pos, "NOT needs a condition, got %s (hint: compare "
                        "first, e.g. NOT (x = 0))", describe(a, da, sizeof da));
        break;
    case EX_IN: case EX_NOT_IN:
        if ((rc = bind_in(bd, n)) < 0)
            return rc;
        break;
    case EX_IS_NULL: case EX_IS_NOT_NULL: break;
    case EX_CAST: return bind_cast(bd, n);
    case EX_LIKE: case EX_NOT_LIKE: case EX_SUBSTR: case EX_LENGTH:
        return bind_string_fn(bd, n);
    case EX_EXTRACT:
        if (a->vk != SL__VK_DATE && a->vk != SL__VK_TS)
            return berr(bd, SL_ETYPE, n->pos, "EXTRACT needs a date or timestamp, got %s",
                        describe(a, da, sizeof da));
        n->vk = SL__VK_INT;
        n->type = SL_TYPE_INT64;
        return SL_OK;
    case EX_CASE: return bind_case(bd, n);
    case EX_COALESCE: return unify_values(bd, n, bd->e->list + n->list, n->n_list);
    case EX_NULL:
        n->null_lit = true;
        n->vk = SL__VK_INT;
        n->type = SL_TYPE_INT64;
        return SL_OK;
    }
    n->vk = SL__VK_BOOL;
    n->type = SL_TYPE_BOOL;
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
    const struct ex_node *root = &e->nodes[e->root];
    if (root->vk == SL__VK_INTERVAL)
        return berr(&bd, SL_ETYPE, root->pos, "an interval is not a value (hint: add it to a "
                    "date: d + INTERVAL '1' DAY)");
    return SL_OK;
}

enum sl__expr_vk sl__expr_kind(const struct sl__expr *e)
{
    return e->nodes[e->root].vk;
}

enum sl_type sl__expr_type(const struct sl__expr *e)
{
    const struct ex_node *n = &e->nodes[e->root];
    if (n->vk == SL__VK_BOOL)
        return SL_TYPE_BOOL;
    if (n->vk == SL__VK_STR && n->op != EX_COL)
        return SL_TYPE_UTF8;
    return n->type;
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
