/* Expressions: lexer, recursive-descent parser and binder (type checking). See expr.h
 * for the grammar and the typing rules. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expr_int.h"

/* ---------------- lexer ---------------- */

enum tok {
    T_END, T_INT, T_FLOAT, T_IDENT, T_LP, T_RP, T_COMMA,
    T_PLUS, T_MINUS, T_STAR, T_SLASH, T_PCT,
    T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE,
    T_AND, T_OR, T_NOT, T_IN, T_CAST, T_AS, T_IS, T_NULL,
    T_STR, T_LIKE, T_BETWEEN, T_CASE, T_WHEN, T_THEN, T_ELSE, T_ENDKW, T_TRUE, T_FALSE,
    T_FROM, T_FOR
};

struct parser {
    const char *text;
    int at, end;             /* next character, end of the range */
    enum tok tok;            /* current token */
    int tstart, tlen;        /* its place in text */
    uint64_t uval;           /* T_INT: magnitude (up to 2^63) */
    double fval;             /* T_FLOAT */
    bool is_dec;             /* T_FLOAT: a decimal literal (no exponent, <= 38 digits) */
    __int128 dval;           /* ... its scaled value */
    int dprec, dscale;       /* ... and type */
    struct sl__expr *e;
    char *err;
    size_t err_len;
    int rc;                  /* first error */
    int depth;
};

#define MAX_DEPTH 200

SL__PRINTF(3, 4)
static int perr(struct parser *ps, int pos, const char *fmt, ...)
{
    if (ps->rc)
        return ps->rc;
    char what[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int tl = (int)strlen(ps->text);
    snprintf(ps->err, ps->err_len, "parse error at position %d of \"%.*s%s\": %s", pos + 1,
             tl > SL__EXPR_ECHO ? SL__EXPR_ECHO : tl, ps->text, tl > SL__EXPR_ECHO ? "..." : "",
             what);
    ps->rc = SL_EPARSE;
    return ps->rc;
}

static const struct {
    const char *word;
    enum tok tok;
} keywords[] = {{"AND", T_AND},   {"OR", T_OR},       {"NOT", T_NOT},   {"IN", T_IN},
                {"CAST", T_CAST}, {"AS", T_AS},       {"IS", T_IS},     {"NULL", T_NULL},
                {"LIKE", T_LIKE}, {"BETWEEN", T_BETWEEN}, {"CASE", T_CASE}, {"WHEN", T_WHEN},
                {"THEN", T_THEN}, {"ELSE", T_ELSE},   {"END", T_ENDKW}, {"TRUE", T_TRUE},
                {"FALSE", T_FALSE}, {"FROM", T_FROM}, {"FOR", T_FOR}};

/* The scaled value, precision and scale of the decimal literal buf ("12.345"); false
 * when it has more than 38 digits (it is a float then). */
static bool decimal_literal(struct parser *ps, const char *buf)
{
    __int128 v = 0;
    int digits = 0, scale = 0;
    bool frac = false;
    for (const char *c = buf; *c; c++) {
        if (*c == '.') {
            frac = true;
            continue;
        }
        if (++digits > SL_DECIMAL_MAX_PRECISION)
            return false;
        v = v * 10 + (*c - '0');
        scale += frac;
    }
    ps->dval = v;
    ps->dscale = scale;
    ps->dprec = digits > scale ? digits : scale > 0 ? scale : 1;
    return true;
}

static int lex_number(struct parser *ps, int s)
{
    const char *t = ps->text;
    int p = s;
    bool is_float = false;
    while (p < ps->end && isdigit((unsigned char)t[p]))
        p++;
    if (p < ps->end && t[p] == '.') {
        is_float = true;
        p++;
        while (p < ps->end && isdigit((unsigned char)t[p]))
            p++;
    }
    if (p < ps->end && (t[p] == 'e' || t[p] == 'E')) {
        int q = p + 1;
        if (q < ps->end && (t[q] == '+' || t[q] == '-'))
            q++;
        if (q < ps->end && isdigit((unsigned char)t[q])) {
            is_float = true;
            p = q;
            while (p < ps->end && isdigit((unsigned char)t[p]))
                p++;
        }
    }
    if (p < ps->end && (isalnum((unsigned char)t[p]) || t[p] == '_' || t[p] == '.')) {
        while (p < ps->end && (isalnum((unsigned char)t[p]) || t[p] == '_' || t[p] == '.'))
            p++;
        return perr(ps, s, "malformed number '%.*s' (hint: a number is digits with an optional "
                    "'.' and exponent, a column name starts with a letter)", p - s, t + s);
    }
    char buf[64];
    if (p - s >= (int)sizeof buf)
        return perr(ps, s, "number too long");
    memcpy(buf, t + s, (size_t)(p - s));
    buf[p - s] = 0;
    errno = 0;
    if (is_float) {
        ps->tok = T_FLOAT;
        ps->fval = strtod(buf, NULL);
        ps->is_dec = !strpbrk(buf, "eE") && decimal_literal(ps, buf);
        if (!isfinite(ps->fval))
            return perr(ps, s, "float literal %s out of range", buf);
    } else {
        ps->tok = T_INT;
        ps->uval = strtoull(buf, NULL, 10);
        if (errno || ps->uval > (uint64_t)INT64_MAX + 1)
            return perr(ps, s, "integer literal %s does not fit in int64", buf);
    }
    ps->tlen = p - s;
    ps->at = p;
    return SL_OK;
}

/* A string literal '...' ('' inside is one quote); the token spans the quotes. */
static int lex_string(struct parser *ps, int s)
{
    int p = s + 1;
    for (;;) {
        if (p >= ps->end)
            return perr(ps, s, "unterminated string literal (hint: close it with ', and write "
                        "'' for a quote inside)");
        if (ps->text[p] == '\'') {
            if (p + 1 < ps->end && ps->text[p + 1] == '\'') {
                p += 2;
                continue;
            }
            break;
        }
        p++;
    }
    ps->tok = T_STR;
    ps->tlen = p + 1 - s;
    ps->at = p + 1;
    return SL_OK;
}

/* Two-character and one-character operators. */
static int lex_op(struct parser *ps, int s)
{
    const char *t = ps->text;
    char c = t[s], d = s + 1 < ps->end ? t[s + 1] : 0;
    ps->tlen = 1;
    switch (c) {
    case '(': ps->tok = T_LP; break;
    case ')': ps->tok = T_RP; break;
    case ',': ps->tok = T_COMMA; break;
    case '+': ps->tok = T_PLUS; break;
    case '-': ps->tok = T_MINUS; break;
    case '*': ps->tok = T_STAR; break;
    case '/': ps->tok = T_SLASH; break;
    case '%': ps->tok = T_PCT; break;
    case '=': ps->tok = T_EQ; ps->tlen = d == '=' ? 2 : 1; break;
    case '<':
        ps->tok = d == '=' ? T_LE : d == '>' ? T_NE : T_LT;
        ps->tlen = d == '=' || d == '>' ? 2 : 1;
        break;
    case '>': ps->tok = d == '=' ? T_GE : T_GT; ps->tlen = d == '=' ? 2 : 1; break;
    case '!':
        if (d != '=')
            return perr(ps, s, "unexpected '!' (hint: write NOT for negation, != for "
                        "inequality)");
        ps->tok = T_NE;
        ps->tlen = 2;
        break;
    case '&':
        return perr(ps, s, "unexpected '&' (hint: write AND)");
    case '|':
        return perr(ps, s, "unexpected '|' (hint: write OR)");
    case '\'':
        return lex_string(ps, s);
    case '"':
        return perr(ps, s, "unexpected '\"' (hint: string literals take single quotes; "
                    "columns are written without quotes)");
    default:
        return perr(ps, s, "unexpected character '%c' (hint: operators are + - * / %% = != < "
                    "<= > >= AND OR NOT IN IS CAST)", c);
    }
    ps->at = s + ps->tlen;
    return SL_OK;
}

/* Reads the next token into ps->tok. */
static int next(struct parser *ps)
{
    const char *t = ps->text;
    while (ps->at < ps->end && isspace((unsigned char)t[ps->at]))
        ps->at++;
    int s = ps->at;
    ps->tstart = s;
    if (s >= ps->end) {
        ps->tok = T_END;
        ps->tlen = 0;
        return SL_OK;
    }
    char c = t[s];
    if (isdigit((unsigned char)c) ||
        (c == '.' && s + 1 < ps->end && isdigit((unsigned char)t[s + 1])))
        return lex_number(ps, s);
    if (isalpha((unsigned char)c) || c == '_') {
        int p = s;
        while (p < ps->end && (isalnum((unsigned char)t[p]) || t[p] == '_' || t[p] == '.'))
            p++;
        ps->tok = T_IDENT;
        ps->tlen = p - s;
        ps->at = p;
        for (size_t k = 0; k < sizeof keywords / sizeof keywords[0]; k++) {
            if ((int)strlen(keywords[k].word) == ps->tlen &&
                strncasecmp(t + s, keywords[k].word, (size_t)ps->tlen) == 0)
                ps->tok = keywords[k].tok;
        }
        return SL_OK;
    }
    return lex_op(ps, s);
}

/* A short description of the current token for messages. */
static const char *tok_text(struct parser *ps, char *buf, size_t n)
{
    if (ps->tok == T_END)
        snprintf(buf, n, "the end of the expression");
    else
        snprintf(buf, n, "'%.*s'", ps->tlen > 40 ? 40 : ps->tlen, ps->text + ps->tstart);
    return buf;
}

/* ---------------- nodes ---------------- */

static int new_node(struct parser *ps, enum ex_op op, int pos, int a, int b)
{
    struct sl__expr *e = ps->e;
    if (e->n_nodes >= SL__EXPR_MAX_NODES) {
        perr(ps, pos, "expression too long (more than %d terms)", SL__EXPR_MAX_NODES);
        return -1;
    }
    if (e->n_nodes == e->cap_nodes) {
        int cap = e->cap_nodes ? e->cap_nodes * 2 : 16;
        struct ex_node *nv = sl__realloc(e->nodes, (size_t)e->cap_nodes * sizeof *nv,
                                         (size_t)cap * sizeof *nv);
        if (!nv) {
            ps->rc = SL_ENOMEM;
            snprintf(ps->err, ps->err_len, "out of memory");
            return -1;
        }
        e->nodes = nv;
        e->cap_nodes = cap;
    }
    struct ex_node *n = &e->nodes[e->n_nodes];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->pos = pos + 1;
    n->a = a;
    n->b = b;
    n->col = -1;
    return e->n_nodes++;
}

static int parse_or(struct parser *ps);
static int push_list(struct parser *ps, int node);

static int expect(struct parser *ps, enum tok tok, const char *what, const char *hint)
{
    char buf[64];
    if (ps->tok != tok)
        return perr(ps, ps->tstart, "expected %s, got %s%s%s%s", what,
                    tok_text(ps, buf, sizeof buf), hint ? " (hint: " : "", hint ? hint : "",
                    hint ? ")" : ""), -1;
    return next(ps) < 0 ? -1 : 0;
}

/* CAST ( expr AS type ) */
static int parse_cast(struct parser *ps)
{
    int pos = ps->tstart;
    if (next(ps) < 0 || expect(ps, T_LP, "'(' after CAST", "write CAST(x AS int64)") < 0)
        return -1;
    int a = parse_or(ps);
    if (a < 0)
        return -1;
    if (expect(ps, T_AS, "AS in CAST", "write CAST(x AS int64)") < 0)
        return -1;
    enum sl_type type = SL_TYPE_INVALID;
    char name[48] = "";
    int tpos = ps->tstart;
    if (ps->tok == T_IDENT && ps->tlen < 16) {
        memcpy(name, ps->text + ps->tstart, (size_t)ps->tlen);
        name[ps->tlen] = 0;
        for (char *c = name; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        if (strcmp(name, "varchar") == 0 || strcmp(name, "text") == 0)
            strcpy(name, "utf8");
        if (next(ps) < 0)
            return -1;
        if (ps->tok == T_LP) { /* decimal(p[,s]) */
            int p = ps->tstart;
            while (p < ps->end && ps->text[p] != ')')
                p++;
            snprintf(name + strlen(name), sizeof name - strlen(name), "%.*s",
                     p - ps->tstart + 1, ps->text + ps->tstart);
            for (char *c = name, *d = name;; c++)
                if (*c != ' ' && !(*d++ = *c))
                    break;
            ps->at = p + 1;
            if (next(ps) < 0)
                return -1;
        }
    }
    if (sl_type_parse(name, &type) < 0 || SL_TYPE_ID(type) == SL_TYPE_DICT) {
        return perr(ps, tpos, "expected a type in CAST, got '%s' (hint: the types are int8..int64, "
                    "uint8..uint64, float32, float64, bool, date32, timestamp, decimal(p,s) "
                    "and utf8)", name), -1;
    }
    if (expect(ps, T_RP, "')' to close CAST", NULL) < 0)
        return -1;
    int n = new_node(ps, EX_CAST, pos, a, -1);
    if (n >= 0)
        ps->e->nodes[n].type = type;
    return n;
}

static int parse_unary(struct parser *ps);

/* The current T_FLOAT token as a decimal or float literal node. */
static int number_node(struct parser *ps, int pos, bool negate)
{
    int n = new_node(ps, ps->is_dec ? EX_DEC : EX_FLOAT, pos, -1, -1);
    if (n < 0)
        return -1;
    struct ex_node *x = &ps->e->nodes[n];
    x->fval = negate ? -ps->fval : ps->fval;
    if (ps->is_dec) {
        x->dval = negate ? -ps->dval : ps->dval;
        x->dec_lit = true;
        x->type = sl_type_decimal(ps->dprec, ps->dscale);
    }
    return n;
}

/* The bytes of the current T_STR token, unquoted, into x->str / x->slen. */
static int string_token(struct parser *ps, struct ex_node *x)
{
    const char *t = ps->text + ps->tstart + 1;
    int len = ps->tlen - 2, k = 0;
    x->str = sl__malloc((size_t)len + 1);
    if (!x->str) {
        ps->rc = SL_ENOMEM;
        snprintf(ps->err, ps->err_len, "out of memory");
        return -1;
    }
    for (int i = 0; i < len; i++) {
        x->str[k++] = t[i];
        if (t[i] == '\'')
            i++;
    }
    x->str[k] = 0;
    x->slen = k;
    return 0;
}

/* Whether the identifier token is `word` (case-insensitive). */
static bool tok_is(struct parser *ps, const char *word)
{
    return ps->tok == T_IDENT && (int)strlen(word) == ps->tlen &&
           strncasecmp(ps->text + ps->tstart, word, (size_t)ps->tlen) == 0;
}

/* The next character after the current token that is not a space. */
static char peek_char(struct parser *ps)
{
    int p = ps->at;
    while (p < ps->end && isspace((unsigned char)ps->text[p]))
        p++;
    return p < ps->end ? ps->text[p] : 0;
}

/* DATE '...' and TIMESTAMP '...' (the current token is DATE or TIMESTAMP). */
static int parse_datetime(struct parser *ps, bool ts)
{
    int pos = ps->tstart;
    if (next(ps) < 0)
        return -1;
    int at = ps->tstart;
    const char *t = ps->text + at + 1;
    int64_t v;
    bool ok = ts ? ex_parse_timestamp(t, ps->tlen - 2, &v) : ex_parse_date(t, ps->tlen - 2, &v);
    if (!ok)
        return perr(ps, at, "malformed %s literal %.*s (hint: %s)", ts ? "timestamp" : "date",
                    ps->tlen, ps->text + at, ts ? "TIMESTAMP 'yyyy-mm-dd hh:mm:ss[.ffffff]'"
                                                : "DATE 'yyyy-mm-dd' with a valid month and day"),
               -1;
    int n = new_node(ps, EX_INT, pos, -1, -1);
    if (n >= 0) {
        ps->e->nodes[n].ival = v;
        ps->e->nodes[n].type = ts ? SL_TYPE_TIMESTAMP : SL_TYPE_DATE32;
    }
    return n >= 0 && next(ps) == SL_OK ? n : -1;
}

/* A unit word (DAY[S], MONTH[S], YEAR[S]) at t[0, len); -1 if none. */
static int unit_of(const char *t, int len)
{
    static const char *const words[] = {"day", "month", "year"};
    if (len > 1 && (t[len - 1] == 's' || t[len - 1] == 'S'))
        len--;
    for (int u = 0; u < 3; u++)
        if ((int)strlen(words[u]) == len && strncasecmp(t, words[u], (size_t)len) == 0)
            return u;
    return -1;
}

/* INTERVAL 'n' unit | INTERVAL n unit | INTERVAL 'n unit'. */
static int parse_interval(struct parser *ps)
{
    int pos = ps->tstart;
    const char *hint = "write INTERVAL '3' MONTH, INTERVAL 90 DAY or INTERVAL '1 year'";
    if (next(ps) < 0)
        return -1;
    long long count = 0;
    int unit = -1, used = 0;
    bool neg = false;
    if (ps->tok == T_MINUS) {
        neg = true;
        if (next(ps) < 0)
            return -1;
    }
    if (ps->tok == T_INT) {
        count = (long long)ps->uval;
    } else if (ps->tok == T_STR) {
        char buf[64] = "";
        int len = ps->tlen - 2 < 63 ? ps->tlen - 2 : 63;
        memcpy(buf, ps->text + ps->tstart + 1, (size_t)len);
        char word[16] = "";
        int k = sscanf(buf, " %lld%n %15s%n", &count, &used, word, &used);
        if (k < 1 || (k == 2 && (unit = unit_of(word, (int)strlen(word))) < 0) ||
            buf[used + strspn(buf + used, " ")])
            return perr(ps, ps->tstart, "malformed interval %.*s (hint: %s)", ps->tlen,
                        ps->text + ps->tstart, hint), -1;
    } else {
        return perr(ps, ps->tstart, "expected a count after INTERVAL (hint: %s)", hint), -1;
    }
    if (next(ps) < 0)
        return -1;
    if (unit < 0) {
        if (ps->tok != T_IDENT || (unit = unit_of(ps->text + ps->tstart, ps->tlen)) < 0)
            return perr(ps, ps->tstart, "expected DAY, MONTH or YEAR after the interval's count "
                        "(hint: %s)", hint), -1;
        if (next(ps) < 0)
            return -1;
    }
    if (count > 1000000000)
        return perr(ps, pos, "interval count %lld too large", count), -1;
    int n = new_node(ps, EX_INTERVAL, pos, -1, -1);
    if (n >= 0) {
        ps->e->nodes[n].ival = neg ? -count : count;
        ps->e->nodes[n].unit = unit;
    }
    return n;
}

/* Comma-separated operands up to ')' into the list; returns their count or -1. */
static int parse_args(struct parser *ps, int min, int max, const char *fn)
{
    int k = 0;
    for (;;) {
        int a = parse_or(ps);
        if (a < 0 || push_list(ps, a) < 0)
            return -1;
        k++;
        if (ps->tok != T_COMMA)
            break;
        if (next(ps) < 0)
            return -1;
    }
    if (k < min || k > max)
        return perr(ps, ps->tstart, "%s takes %d to %d operands, got %d", fn, min, max, k), -1;
    return k;
}

/* EXTRACT ( unit FROM expr ); the current token is '('. */
static int parse_extract(struct parser *ps, int pos)
{
    if (next(ps) < 0)
        return -1;
    int unit = ps->tok == T_IDENT ? unit_of(ps->text + ps->tstart, ps->tlen) : -1;
    if (unit < 0)
        return perr(ps, ps->tstart, "expected YEAR, MONTH or DAY in EXTRACT (hint: EXTRACT(YEAR "
                    "FROM d))"), -1;
    if (next(ps) < 0 || expect(ps, T_FROM, "FROM in EXTRACT", "EXTRACT(YEAR FROM d)") < 0)
        return -1;
    int a = parse_or(ps);
    if (a < 0 || expect(ps, T_RP, "')' to close EXTRACT", NULL) < 0)
        return -1;
    int n = new_node(ps, EX_EXTRACT, pos, a, -1);
    if (n >= 0)
        ps->e->nodes[n].ival = unit;
    return n;
}

/* SUBSTRING ( s FROM a [FOR b] ) or ( s, a [, b] ); the current token is '('. */
static int parse_substring(struct parser *ps, int pos)
{
    if (next(ps) < 0)
        return -1;
    int s = parse_or(ps);
    if (s < 0)
        return -1;
    bool sql = ps->tok == T_FROM;
    if (!sql && ps->tok != T_COMMA)
        return perr(ps, ps->tstart, "expected FROM or ',' in SUBSTRING (hint: SUBSTRING(s FROM 2 "
                    "FOR 3) or SUBSTRING(s, 2, 3))"), -1;
    if (next(ps) < 0)
        return -1;
    int first = ps->e->n_list;
    int a = parse_or(ps);
    if (a < 0 || push_list(ps, a) < 0)
        return -1;
    if (ps->tok == (sql ? T_FOR : T_COMMA)) {
        if (next(ps) < 0)
            return -1;
        int b = parse_or(ps);
        if (b < 0 || push_list(ps, b) < 0)
            return -1;
    }
    if (expect(ps, T_RP, "')' to close SUBSTRING", NULL) < 0)
        return -1;
    int n = new_node(ps, EX_SUBSTR, pos, s, -1);
    if (n >= 0) {
        ps->e->nodes[n].list = first;
        ps->e->nodes[n].n_list = ps->e->n_list - first;
    }
    return n;
}

/* Identifiers with a meaning of their own: DATE '..', TIMESTAMP '..', INTERVAL, and the
 * functions. -2 when the identifier is a column. */
static int parse_special(struct parser *ps)
{
    int pos = ps->tstart;
    char c = peek_char(ps);
    if (c == '\'' && (tok_is(ps, "date") || tok_is(ps, "timestamp")))
        return parse_datetime(ps, tok_is(ps, "timestamp"));
    if ((c == '\'' || c == '-' || isdigit((unsigned char)c)) && tok_is(ps, "interval"))
        return parse_interval(ps);
    if (c != '(')
        return -2;
    enum ex_op op;
    if (tok_is(ps, "coalesce"))
        op = EX_COALESCE;
    else if (tok_is(ps, "length") || tok_is(ps, "char_length"))
        op = EX_LENGTH;
    else if (tok_is(ps, "substring") || tok_is(ps, "substr"))
        return next(ps) < 0 ? -1 : parse_substring(ps, pos);
    else if (tok_is(ps, "extract"))
        return next(ps) < 0 ? -1 : parse_extract(ps, pos);
    else
        return perr(ps, pos, "unknown function '%.*s' (hint: the functions are CAST, COALESCE, "
                    "LENGTH, CHAR_LENGTH, SUBSTRING and EXTRACT)", ps->tlen, ps->text + pos), -1;
    char name[16];
    snprintf(name, sizeof name, "%.*s", ps->tlen, ps->text + pos);
    if (next(ps) < 0 || next(ps) < 0) /* the name and '(' */
        return -1;
    int first = ps->e->n_list;
    int k = parse_args(ps, 1, op == EX_LENGTH ? 1 : 1000, name);
    if (k < 0 || expect(ps, T_RP, "')' to close the function's operands", NULL) < 0)
        return -1;
    if (op == EX_LENGTH) {
        ps->e->n_list = first;
        return new_node(ps, EX_LENGTH, pos, ps->e->list[first], -1);
    }
    int n = new_node(ps, op, pos, -1, -1);
    if (n >= 0) {
        ps->e->nodes[n].list = first;
        ps->e->nodes[n].n_list = k;
    }
    return n;
}

/* CASE WHEN c THEN v ... [ELSE v] END: the list holds c1, v1, c2, v2, ...; b the ELSE. */
static int parse_case(struct parser *ps)
{
    int pos = ps->tstart;
    if (next(ps) < 0)
        return -1;
    if (ps->tok != T_WHEN)
        return perr(ps, ps->tstart, "expected WHEN after CASE (hint: CASE WHEN x > 0 THEN 1 "
                    "ELSE 0 END)"), -1;
    int first = ps->e->n_list, els = -1;
    while (ps->tok == T_WHEN) {
        if (next(ps) < 0)
            return -1;
        int w = parse_or(ps);
        if (w < 0 || push_list(ps, w) < 0 || expect(ps, T_THEN, "THEN", "CASE WHEN c THEN v END") < 0)
            return -1;
        int t = parse_or(ps);
        if (t < 0 || push_list(ps, t) < 0)
            return -1;
    }
    if (ps->tok == T_ELSE) {
        if (next(ps) < 0 || (els = parse_or(ps)) < 0)
            return -1;
    }
    if (expect(ps, T_ENDKW, "END to close CASE", "CASE WHEN c THEN v [ELSE w] END") < 0)
        return -1;
    int n = new_node(ps, EX_CASE, pos, -1, els);
    if (n >= 0) {
        ps->e->nodes[n].list = first;
        ps->e->nodes[n].n_list = ps->e->n_list - first;
    }
    return n;
}

static int parse_primary(struct parser *ps)
{
    char buf[64];
    int pos = ps->tstart, n;
    switch (ps->tok) {
    case T_INT:
        if (ps->uval > (uint64_t)INT64_MAX)
            return perr(ps, pos, "integer literal does not fit in int64"), -1;
        n = new_node(ps, EX_INT, pos, -1, -1);
        if (n >= 0) {
            ps->e->nodes[n].ival = (int64_t)ps->uval;
            ps->e->nodes[n].int_lit = true;
        }
        return n >= 0 && next(ps) == SL_OK ? n : -1;
    case T_FLOAT:
        n = number_node(ps, pos, false);
        return n >= 0 && next(ps) == SL_OK ? n : -1;
    case T_STR:
        n = new_node(ps, EX_STR, pos, -1, -1);
        if (n < 0 || string_token(ps, &ps->e->nodes[n]) < 0)
            return -1;
        return next(ps) == SL_OK ? n : -1;
    case T_TRUE:
    case T_FALSE:
        n = new_node(ps, EX_BOOL, pos, -1, -1);
        if (n >= 0)
            ps->e->nodes[n].ival = ps->tok == T_TRUE;
        return n >= 0 && next(ps) == SL_OK ? n : -1;
    case T_CASE:
        return parse_case(ps);
    case T_IDENT:
        if ((n = parse_special(ps)) != -2)
            return n;
        n = new_node(ps, EX_COL, pos, -1, -1);
        if (n < 0)
            return -1;
        ps->e->nodes[n].name = sl__malloc((size_t)ps->tlen + 1);
        if (!ps->e->nodes[n].name) {
            ps->rc = SL_ENOMEM;
            snprintf(ps->err, ps->err_len, "out of memory");
            return -1;
        }
        memcpy(ps->e->nodes[n].name, ps->text + pos, (size_t)ps->tlen);
        ps->e->nodes[n].name[ps->tlen] = 0;
        return next(ps) == SL_OK ? n : -1;
    case T_LP: {
        if (next(ps) < 0)
            return -1;
        n = parse_or(ps);
        if (n < 0)
            return -1;
        if (ps->tok != T_RP)
            return perr(ps, ps->tstart, "expected ')', got %s (hint: the '(' at position %d is "
                        "not closed)", tok_text(ps, buf, sizeof buf), pos + 1), -1;
        return next(ps) == SL_OK ? n : -1;
    }
    case T_CAST:
        return parse_cast(ps);
    case T_END:
        return perr(ps, pos, "expected a value, got the end of the expression (hint: an operand "
                    "is missing)"), -1;
    case T_RP:
        return perr(ps, pos, "expected a value, got ')' (hint: empty parentheses or an operand "
                    "missing before ')')"), -1;
    case T_NULL:
        n = new_node(ps, EX_NULL, pos, -1, -1);
        return n >= 0 && next(ps) == SL_OK ? n : -1;
    default:
        return perr(ps, pos, "expected a value, got %s (hint: an operand is missing)",
                    tok_text(ps, buf, sizeof buf)), -1;
    }
}

static int parse_unary(struct parser *ps)
{
    if (ps->tok != T_MINUS)
        return parse_primary(ps);
    int pos = ps->tstart;
    if (++ps->depth > MAX_DEPTH)
        return perr(ps, pos, "expression nested too deeply"), -1;
    if (next(ps) < 0)
        return -1;
    if (ps->tok == T_INT || ps->tok == T_FLOAT) {
        /* Folds -literal (which also allows -9223372036854775808). */
        int n;
        if (ps->tok == T_INT) {
            n = new_node(ps, EX_INT, pos, -1, -1);
            if (n >= 0) {
                ps->e->nodes[n].ival = (int64_t)(0 - ps->uval);
                ps->e->nodes[n].int_lit = true;
            }
        } else {
            n = number_node(ps, pos, true);
        }
        ps->depth--;
        return n >= 0 && next(ps) == SL_OK ? n : -1;
    }
    int a = parse_unary(ps);
    ps->depth--;
    return a < 0 ? -1 : new_node(ps, EX_NEG, pos, a, -1);
}

static int parse_prod(struct parser *ps)
{
    int a = parse_unary(ps);
    while (a >= 0 && (ps->tok == T_STAR || ps->tok == T_SLASH || ps->tok == T_PCT)) {
        enum ex_op op = ps->tok == T_STAR ? EX_MUL : ps->tok == T_SLASH ? EX_DIV : EX_MOD;
        int pos = ps->tstart;
        if (next(ps) < 0)
            return -1;
        int b = parse_unary(ps);
        a = b < 0 ? -1 : new_node(ps, op, pos, a, b);
    }
    return a;
}

static bool is_datetime_lit(const struct ex_node *n)
{
    return n->op == EX_INT && (n->type == SL_TYPE_DATE32 || n->type == SL_TYPE_TIMESTAMP);
}

/* A date or timestamp literal plus or minus an interval literal (DATE '1994-01-01' +
 * INTERVAL '1' YEAR) folded into one literal, so that no row pays the calendar
 * arithmetic. Returns the literal's node, or -1 when a and b are not such a pair (or the
 * result leaves the range: evaluation reports it then). The interval's node stays
 * unreferenced. */
static int fold_date_interval(struct parser *ps, enum ex_op op, int a, int b)
{
    struct ex_node *na = &ps->e->nodes[a], *nb = &ps->e->nodes[b];
    struct ex_node *lit = is_datetime_lit(na) && nb->op == EX_INTERVAL ? na
                          : op == EX_ADD && na->op == EX_INTERVAL && is_datetime_lit(nb) ? nb
                                                                                         : NULL;
    if (!lit)
        return -1;
    int64_t v;
    if (!ex_date_shift(lit->ival, lit->type == SL_TYPE_TIMESTAMP, lit == na ? nb : na,
                       op == EX_SUB, &v))
        return -1;
    lit->ival = v;
    return lit == na ? a : b;
}

static int parse_sum(struct parser *ps)
{
    int a = parse_prod(ps);
    while (a >= 0 && (ps->tok == T_PLUS || ps->tok == T_MINUS)) {
        enum ex_op op = ps->tok == T_PLUS ? EX_ADD : EX_SUB;
        int pos = ps->tstart;
        if (next(ps) < 0)
            return -1;
        int b = parse_prod(ps);
        int folded = b < 0 ? -1 : fold_date_interval(ps, op, a, b);
        a = b < 0 ? -1 : folded >= 0 ? folded : new_node(ps, op, pos, a, b);
    }
    return a;
}

static int push_list(struct parser *ps, int node)
{
    struct sl__expr *e = ps->e;
    if (e->n_list == e->cap_list) {
        int cap = e->cap_list ? e->cap_list * 2 : 16;
        int *nv = sl__realloc(e->list, (size_t)e->cap_list * sizeof *nv, (size_t)cap * sizeof *nv);
        if (!nv) {
            ps->rc = SL_ENOMEM;
            snprintf(ps->err, ps->err_len, "out of memory");
            return -1;
        }
        e->list = nv;
        e->cap_list = cap;
    }
    e->list[e->n_list++] = node;
    return 0;
}

/* [NOT] IN ( literal, ... ); the current token is IN. */
static int parse_in(struct parser *ps, int a, int pos, bool negated)
{
    char buf[64];
    if (next(ps) < 0 || expect(ps, T_LP, "'(' after IN", "write x IN (1, 2, 3)") < 0)
        return -1;
    int first = ps->e->n_list;
    for (;;) {
        int lit_pos = ps->tstart;
        int l = ps->tok == T_RP ? -1 : parse_unary(ps);
        if (l < 0 && ps->rc)
            return -1;
        enum ex_op lop = l >= 0 ? ps->e->nodes[l].op : EX_NEG;
        if (lop != EX_INT && lop != EX_FLOAT && lop != EX_DEC && lop != EX_STR && lop != EX_BOOL)
            return perr(ps, lit_pos, "expected a literal in the IN list (hint: IN lists hold "
                        "literals: x IN (1, 2, 3), s IN ('a', 'b'), d IN (DATE '1998-01-01'))"),
                   -1;
        if (push_list(ps, l) < 0)
            return -1;
        if (ps->tok == T_COMMA) {
            if (next(ps) < 0)
                return -1;
            continue;
        }
        if (ps->tok == T_RP)
            break;
        return perr(ps, ps->tstart, "expected ',' or ')' in the IN list, got %s",
                    tok_text(ps, buf, sizeof buf)), -1;
    }
    if (next(ps) < 0)
        return -1;
    int n = new_node(ps, negated ? EX_NOT_IN : EX_IN, pos, a, -1);
    if (n >= 0) {
        ps->e->nodes[n].list = first;
        ps->e->nodes[n].n_list = ps->e->n_list - first;
    }
    return n;
}

/* [NOT] LIKE 'pattern'; the current token is LIKE. */
static int parse_like(struct parser *ps, int a, int pos, bool negated)
{
    if (next(ps) < 0)
        return -1;
    if (ps->tok != T_STR)
        return perr(ps, ps->tstart, "expected a pattern in quotes after LIKE (hint: s LIKE "
                    "'abc%%')"), -1;
    int n = new_node(ps, negated ? EX_NOT_LIKE : EX_LIKE, pos, a, -1);
    if (n < 0 || string_token(ps, &ps->e->nodes[n]) < 0)
        return -1;
    ps->e->nodes[n].like = ex_like_kind(ps->e->nodes[n].str, ps->e->nodes[n].slen);
    return next(ps) < 0 ? -1 : n;
}

/* x [NOT] BETWEEN lo AND hi, as x >= lo AND x <= hi; the current token is BETWEEN. */
static int parse_between(struct parser *ps, int a, int pos, bool negated)
{
    if (next(ps) < 0)
        return -1;
    int lo = parse_sum(ps);
    if (lo < 0 || expect(ps, T_AND, "AND in BETWEEN", "x BETWEEN 1 AND 5") < 0)
        return -1;
    int hi = parse_sum(ps);
    if (hi < 0)
        return -1;
    int ge = new_node(ps, EX_GE, pos, a, lo);
    int le = ge < 0 ? -1 : new_node(ps, EX_LE, pos, a, hi);
    int both = le < 0 ? -1 : new_node(ps, EX_AND, pos, ge, le);
    return both < 0 || !negated ? both : new_node(ps, EX_NOT, pos, both, -1);
}

static int parse_cmp(struct parser *ps)
{
    char buf[64];
    int a = parse_sum(ps);
    if (a < 0)
        return -1;
    int pos = ps->tstart;
    enum ex_op op;
    switch (ps->tok) {
    case T_EQ: op = EX_EQ; break;
    case T_NE: op = EX_NE; break;
    case T_LT: op = EX_LT; break;
    case T_LE: op = EX_LE; break;
    case T_GT: op = EX_GT; break;
    case T_GE: op = EX_GE; break;
    case T_IN: return parse_in(ps, a, pos, false);
    case T_LIKE: return parse_like(ps, a, pos, false);
    case T_BETWEEN: return parse_between(ps, a, pos, false);
    case T_NOT:
        if (next(ps) < 0)
            return -1;
        if (ps->tok == T_LIKE)
            return parse_like(ps, a, pos, true);
        if (ps->tok == T_BETWEEN)
            return parse_between(ps, a, pos, true);
        if (ps->tok != T_IN)
            return perr(ps, ps->tstart, "expected IN, LIKE or BETWEEN after NOT, got %s (hint: NOT "
                        "goes before a condition, or write x NOT IN (...))",
                        tok_text(ps, buf, sizeof buf)), -1;
        return parse_in(ps, a, pos, true);
    case T_IS: {
        if (next(ps) < 0)
            return -1;
        bool neg = ps->tok == T_NOT;
        if (neg && next(ps) < 0)
            return -1;
        if (ps->tok != T_NULL)
            return perr(ps, ps->tstart, "expected NULL after IS, got %s (hint: write x IS NULL or "
                        "x IS NOT NULL)", tok_text(ps, buf, sizeof buf)), -1;
        if (next(ps) < 0)
            return -1;
        return new_node(ps, neg ? EX_IS_NOT_NULL : EX_IS_NULL, pos, a, -1);
    }
    default:
        return a;
    }
    if (next(ps) < 0)
        return -1;
    int b = parse_sum(ps);
    if (b < 0)
        return -1;
    if (ps->tok >= T_EQ && ps->tok <= T_GE)
        return perr(ps, ps->tstart, "unexpected %s after a comparison (hint: chain comparisons "
                    "with AND: a < b AND b < c)", tok_text(ps, buf, sizeof buf)), -1;
    return new_node(ps, op, pos, a, b);
}

static int parse_not(struct parser *ps)
{
    if (ps->tok != T_NOT)
        return parse_cmp(ps);
    int pos = ps->tstart;
    if (++ps->depth > MAX_DEPTH)
        return perr(ps, pos, "expression nested too deeply"), -1;
    if (next(ps) < 0)
        return -1;
    int a = parse_not(ps);
    ps->depth--;
    return a < 0 ? -1 : new_node(ps, EX_NOT, pos, a, -1);
}

static int parse_and(struct parser *ps)
{
    int a = parse_not(ps);
    while (a >= 0 && ps->tok == T_AND) {
        int pos = ps->tstart;
        if (next(ps) < 0)
            return -1;
        int b = parse_not(ps);
        a = b < 0 ? -1 : new_node(ps, EX_AND, pos, a, b);
    }
    return a;
}

static int parse_or(struct parser *ps)
{
    if (++ps->depth > MAX_DEPTH)
        return perr(ps, ps->tstart, "expression nested too deeply"), -1;
    int a = parse_and(ps);
    while (a >= 0 && ps->tok == T_OR) {
        int pos = ps->tstart;
        if (next(ps) < 0)
            return -1;
        int b = parse_and(ps);
        a = b < 0 ? -1 : new_node(ps, EX_OR, pos, a, b);
    }
    ps->depth--;
    return a;
}

void sl__expr_free(struct sl__expr *e)
{
    if (!e)
        return;
    for (int i = 0; i < e->n_nodes; i++)
        sl__free(e->nodes[i].name, 0), sl__free(e->nodes[i].str, 0);
    sl__free(e->nodes, 0);
    sl__free(e->list, 0);
    sl__free_str(e->text);
    sl__free(e, sizeof *e);
}

int sl__expr_parse(const char *text, int begin, int end, struct sl__expr **out, char *err,
                   size_t err_len)
{
    *out = NULL;
    struct sl__expr *e = sl__calloc(1, sizeof *e);
    char *copy = sl__strdup(text);
    if (!e || !copy) {
        sl__free(e, sizeof *e);
        sl__free_str(copy);
        snprintf(err, err_len, "out of memory");
        return SL_ENOMEM;
    }
    e->text = copy;
    struct parser ps = {.text = text, .at = begin, .end = end < 0 ? (int)strlen(text) : end,
                        .e = e, .err = err, .err_len = err_len};
    if (next(&ps) == SL_OK) {
        char buf[64];
        if (ps.tok == T_END)
            perr(&ps, ps.tstart, "empty expression");
        else if ((e->root = parse_or(&ps)) >= 0 && ps.tok != T_END)
            perr(&ps, ps.tstart, "unexpected %s after a complete expression (hint: %s)",
                 tok_text(&ps, buf, sizeof buf),
                 ps.tok == T_RP ? "there is a ')' without a matching '('"
                                : "an operator such as AND or + is missing");
    }
    if (ps.rc) {
        sl__expr_free(e);
        return ps.rc;
    }
    *out = e;
    return SL_OK;
}
