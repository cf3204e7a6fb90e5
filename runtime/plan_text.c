/* Plan files: the text form of a plan (grammar in docs/PLAN_FORMAT.md).
 *
 *   # comment
 *   keys  = gen.sequence rows=2^20 column=k
 *   total = aggregate.sum(keys) column=k
 *   output total as result
 *   place total cpu
 *   set morsel_rows = 4096
 *
 * Each statement is one line. Errors name the source, the line and the column, and add
 * a hint; the plan keeps the nodes added before the failing line (the caller usually
 * destroys it). Options are handed to sl_plan_add as written, so operators check them
 * exactly as they do for C callers. */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "plan_int.h"

#define MAX_NAME 64
#define MAX_INPUTS 16

/* The plan's node names, with a hash index (open addressing, linear probing) so that a
 * plan of N nodes parses in O(N): the linear search took 51 s at 77,000 nodes. */
struct names {
    int n, cap;
    char (*name)[MAX_NAME];
    int *node;
    int *slot;                       /* 1 + index into name/node, 0 = empty */
    int n_slots;                     /* a power of two, at least twice n */
};

struct parser {
    sl_plan_t *plan;
    const char *src;        /* source name for messages */
    const char *line;       /* start of the current line */
    const char *p;          /* cursor */
    int lineno;
    struct names names;
};

static int fail_at(struct parser *ps, const char *at, int code, const char *fmt, ...)
    SL__PRINTF(4, 5);
static int fail_at(struct parser *ps, const char *at, int code, const char *fmt, ...)
{
    char msg[SL__MSG_MAX - 96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sl__errslot_set(&ps->plan->err, code, "%s:%d:%d: %s", ps->src, ps->lineno,
                           (int)(at - ps->line) + 1, msg);
}

static void skip_blanks(struct parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r')
        ps->p++;
}

static bool at_line_end(struct parser *ps)
{
    skip_blanks(ps);
    return *ps->p == 0 || *ps->p == '\n' || *ps->p == '#';
}

/* Reads [A-Za-z_][A-Za-z0-9_]* (with dots when `dotted`). */
static int read_name(struct parser *ps, char *out, bool dotted, const char *what)
{
    skip_blanks(ps);
    const char *s = ps->p;
    if (!isalpha((unsigned char)*s) && *s != '_')
        return fail_at(ps, s, SL_EPARSE, "expected %s, found %s", what,
                       *s == 0 || *s == '\n' ? "the end of the line" : "something else");
    while (isalnum((unsigned char)*ps->p) || *ps->p == '_' || (dotted && *ps->p == '.'))
        ps->p++;
    size_t len = (size_t)(ps->p - s);
    if (len >= MAX_NAME)
        return fail_at(ps, s, SL_EPARSE, "the name '%.20s...' is longer than %d characters "
                       "(hint: expected %s)", s, MAX_NAME - 1, what);
    memcpy(out, s, len);
    out[len] = 0;
    return SL_OK;
}

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* The slot holding `name`, or the empty slot where it would go. */
static int *name_slot(const struct names *nm, const char *name)
{
    uint32_t mask = (uint32_t)nm->n_slots - 1;
    for (uint32_t i = name_hash(name) & mask;; i = (i + 1) & mask) {
        int *s = &nm->slot[i];
        if (*s == 0 || strcmp(nm->name[*s - 1], name) == 0)
            return s;
    }
}

static int find_name(const struct names *nm, const char *name)
{
    if (nm->n_slots == 0)
        return -1;
    int at = *name_slot(nm, name);
    return at ? nm->node[at - 1] : -1;
}

/* Doubles the index when it is half full, keeping probe sequences short. */
static int grow_index(struct names *nm)
{
    if (2 * (nm->n + 1) <= nm->n_slots)
        return SL_OK;
    int n_slots = nm->n_slots ? nm->n_slots * 2 : 64;
    int *slot = sl__calloc((size_t)n_slots, sizeof *slot);
    if (!slot)
        return SL_ENOMEM;
    sl__free(nm->slot, 0);
    nm->slot = slot;
    nm->n_slots = n_slots;
    for (int i = 0; i < nm->n; i++)
        *name_slot(nm, nm->name[i]) = i + 1;
    return SL_OK;
}

static int add_name(struct parser *ps, const char *name, int node)
{
    struct names *nm = &ps->names;
    if (grow_index(nm) != SL_OK)
        return SL_ENOMEM;
    if (nm->n == nm->cap) {
        int cap = nm->cap ? nm->cap * 2 : 16;
        char(*nn)[MAX_NAME] = sl__realloc(nm->name, (size_t)nm->cap * MAX_NAME, (size_t)cap * MAX_NAME);
        if (!nn)
            return SL_ENOMEM;
        nm->name = nn;
        int *nd = sl__realloc(nm->node, (size_t)nm->cap * sizeof *nd, (size_t)cap * sizeof *nd);
        if (!nd)
            return SL_ENOMEM;
        nm->node = nd;
        nm->cap = cap;
    }
    snprintf(nm->name[nm->n], MAX_NAME, "%s", name);
    nm->node[nm->n] = node;
    *name_slot(nm, nm->name[nm->n]) = nm->n + 1; /* a new name: its slot is empty */
    nm->n++;
    return SL_OK;
}

static int unknown_node(struct parser *ps, const char *at, const char *name)
{
    char known[200] = "";
    size_t len = 0;
    for (int i = 0; i < ps->names.n && len < sizeof known - MAX_NAME - 8; i++)
        len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "",
                                ps->names.name[i]);
    return fail_at(ps, at, SL_EINVAL, "unknown node '%s' (hint: nodes must be defined on an "
                   "earlier line%s%s)", name, ps->names.n ? "; defined: " : "", known);
}

/* The rest of the line after the inputs: options, copied for sl_plan_add. */
static int read_options(struct parser *ps, char *out, size_t cap)
{
    skip_blanks(ps);
    const char *s = ps->p;
    bool quoted = false;
    while (*ps->p && *ps->p != '\n' && (quoted || *ps->p != '#')) {
        if (*ps->p == '"' && (ps->p == s || ps->p[-1] != '\\'))
            quoted = !quoted;
        ps->p++;
    }
    if (quoted)
        return fail_at(ps, ps->p, SL_EPARSE, "unterminated quote (hint: close the \" before "
                       "the end of the line)");
    size_t len = (size_t)(ps->p - s);
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
        len--;
    if (len >= cap)
        return fail_at(ps, s, SL_EPARSE, "options longer than %zu characters", cap - 1);
    memcpy(out, s, len);
    out[len] = 0;
    return SL_OK;
}

/* NAME = OP [ (IN, ...) ] options */
static int parse_node(struct parser *ps, const char *name, const char *name_at)
{
    char op[MAX_NAME], in[MAX_NAME];
    int inputs[MAX_INPUTS], n_in = 0, rc;
    if (find_name(&ps->names, name) >= 0)
        return fail_at(ps, name_at, SL_EINVAL, "node '%s' is defined twice", name);
    const char *op_at = (skip_blanks(ps), ps->p);
    if ((rc = read_name(ps, op, true, "an operator name (e.g. gen.sequence)")) < 0)
        return rc;
    if (!sl_registry_find(sl_registry_global(), op))
        return fail_at(ps, op_at, SL_ENOTFOUND, "no operator named '%s' (hint: `sluice "
                       "operators` lists them)", op);
    skip_blanks(ps);
    if (*ps->p == '(') {
        ps->p++;
        for (;;) {
            skip_blanks(ps);
            if (*ps->p == ')' && n_in == 0)
                break;
            const char *at = ps->p;
            if ((rc = read_name(ps, in, false, "an input node name")) < 0)
                return rc;
            int id = find_name(&ps->names, in);
            if (id < 0 && strcmp(in, name) == 0)
                return fail_at(ps, at, SL_EINVAL, "node '%s' is its own input (hint: a plan "
                               "has no cycles; inputs are nodes defined on earlier lines)", in);
            if (id < 0)
                return unknown_node(ps, at, in);
            if (n_in == MAX_INPUTS)
                return fail_at(ps, at, SL_EINVAL, "more than %d inputs", MAX_INPUTS);
            inputs[n_in++] = id;
            skip_blanks(ps);
            if (*ps->p == ',') {
                ps->p++;
                continue;
            }
            if (*ps->p != ')')
                return fail_at(ps, ps->p, SL_EPARSE, "expected ',' or ')' in the input list");
            break;
        }
        ps->p++;
    }
    char opts[2048];
    const char *opt_at = (skip_blanks(ps), ps->p);
    if ((rc = read_options(ps, opts, sizeof opts)) < 0)
        return rc;
    int node;
    rc = sl_plan_add(ps->plan, op, inputs, n_in, opts, &node);
    if (rc < 0) {
        char msg[SL__MSG_MAX];
        snprintf(msg, sizeof msg, "%s", ps->plan->err.msg);
        return fail_at(ps, opt_at, rc, "%s", msg);
    }
    /* Errors found when a query is made (unused outputs...) point at this line. */
    snprintf(ps->plan->nodes[node]->where, sizeof ps->plan->nodes[node]->where, "%s:%d:%d: ",
             ps->src, ps->lineno, (int)(name_at - ps->line) + 1);
    snprintf(ps->plan->nodes[node]->name, sizeof ps->plan->nodes[node]->name, "%s", name);
    return add_name(ps, name, node) < 0 ? fail_at(ps, name_at, SL_ENOMEM, "out of memory") : SL_OK;
}

/* set OPTION = VALUE: an engine option for the plan's queries (sl_plan_option_set). */
static int parse_set(struct parser *ps)
{
    char name[MAX_NAME];
    int rc;
    const char *nat = (skip_blanks(ps), ps->p);
    if ((rc = read_name(ps, name, false, "an option name (hint: `sluice options` lists "
                        "them)")) < 0)
        return rc;
    skip_blanks(ps);
    if (*ps->p != '=')
        return fail_at(ps, ps->p, SL_EPARSE, "expected '=' after the option name (hint: set "
                       "NAME = VALUE)");
    ps->p++;
    const char *vat = (skip_blanks(ps), ps->p);
    while (*ps->p && !strchr(" \t\r\n#", *ps->p))
        ps->p++;
    char value[128];
    size_t len = (size_t)(ps->p - vat);
    if (len == 0 || len >= sizeof value)
        return fail_at(ps, vat, SL_EPARSE, len ? "the value is longer than %zu characters"
                                               : "expected a value after '=' (max %zu "
                                                 "characters)", sizeof value - 1);
    memcpy(value, vat, len);
    value[len] = 0;
    if (!at_line_end(ps))
        return fail_at(ps, ps->p, SL_EPARSE, "unexpected text after the value");
    if ((rc = sl_plan_option_set(ps->plan, name, value)) < 0) {
        char msg[SL__MSG_MAX];
        snprintf(msg, sizeof msg, "%s", ps->plan->err.msg);
        return fail_at(ps, rc == SL_ENOTFOUND || rc == SL_ESTATE ? nat : vat, rc, "%s", msg);
    }
    return SL_OK;
}

static int parse_line(struct parser *ps)
{
    char word[MAX_NAME], name[MAX_NAME];
    int rc;
    if (at_line_end(ps))
        return SL_OK;
    const char *at = ps->p; /* where the statement's first word starts */
    if ((rc = read_name(ps, word, false, "a statement (NAME = OPERATOR ..., output, place, "
                        "set)")) < 0)
        return rc;
    skip_blanks(ps);
    if (*ps->p == '=') {
        ps->p++;
        return parse_node(ps, word, at);
    }
    if (strcmp(word, "output") == 0) {
        const char *nat = (skip_blanks(ps), ps->p);
        if ((rc = read_name(ps, name, false, "the node to output")) < 0)
            return rc;
        int id = find_name(&ps->names, name);
        if (id < 0)
            return unknown_node(ps, nat, name);
        char alias[MAX_NAME];
        snprintf(alias, sizeof alias, "%s", name);
        skip_blanks(ps);
        if (strncmp(ps->p, "as", 2) == 0 && strchr(" \t\r\n#", ps->p[2])) {
            ps->p += 2;
            if ((rc = read_name(ps, alias, false, "an output name after 'as'")) < 0)
                return rc;
        }
        if (!at_line_end(ps))
            return fail_at(ps, ps->p, SL_EPARSE, "unexpected text after the output");
        if ((rc = sl_plan_output(ps->plan, id, alias)) < 0) {
            char msg[SL__MSG_MAX];
            snprintf(msg, sizeof msg, "%s", ps->plan->err.msg);
            return fail_at(ps, nat, rc, "%s", msg);
        }
        return SL_OK;
    }
    if (strcmp(word, "place") == 0) {
        const char *nat = (skip_blanks(ps), ps->p);
        char where[MAX_NAME];
        if ((rc = read_name(ps, name, false, "the node to place")) < 0)
            return rc;
        int id = find_name(&ps->names, name);
        if (id < 0)
            return unknown_node(ps, nat, name);
        const char *wat = (skip_blanks(ps), ps->p);
        if ((rc = read_name(ps, where, false, "cpu, gpu or auto")) < 0)
            return rc;
        enum sl_placement pl = !strcmp(where, "cpu") ? SL_PLACE_CPU
                               : !strcmp(where, "gpu") ? SL_PLACE_GPU
                               : !strcmp(where, "auto") ? SL_PLACE_AUTO : (enum sl_placement)-1;
        if ((int)pl < 0)
            return fail_at(ps, wat, SL_EPARSE, "'%s' is not a placement (hint: cpu, gpu or auto)",
                           where);
        if (!at_line_end(ps))
            return fail_at(ps, ps->p, SL_EPARSE, "unexpected text after the placement");
        return sl_plan_place(ps->plan, id, pl);
    }
    if (strcmp(word, "set") == 0)
        return parse_set(ps);
    return fail_at(ps, ps->p, SL_EPARSE, "expected '=' after '%s' (hint: a statement is "
                   "NAME = OPERATOR(INPUTS) OPTIONS, output NAME [as ALIAS], place NAME "
                   "cpu|gpu|auto, or set OPTION = VALUE)", word);
}

int sl_plan_parse(sl_plan_t *plan, const char *text, const char *source_name)
{
    if (!plan || !text)
        return sl__set_last_error(SL_EINVAL, "sl_plan_parse: NULL argument");
    struct parser ps = {.plan = plan, .src = source_name ? source_name : "<plan>", .p = text};
    int rc = SL_OK;
    for (ps.lineno = 1; rc == SL_OK; ps.lineno++) {
        ps.line = ps.p;
        rc = parse_line(&ps);
        if (rc != SL_OK)
            break;
        while (*ps.p && *ps.p != '\n')
            ps.p++; /* the rest is a comment: parse_line checked the statement */
        if (!*ps.p)
            break;
        ps.p++;
    }
    sl__free(ps.names.name, 0);
    sl__free(ps.names.node, 0);
    sl__free(ps.names.slot, 0);
    return rc;
}
