/* join: CPU equi-join of two inputs (port 0 = left, port 1 = right), inner, left outer,
 * semi or anti, on one or more key columns of any type (integers of every width, bools,
 * dates, timestamps, decimals, floats with NaN = NaN and -0.0 = 0.0, strings of any
 * encoding), with SQL null semantics (a null key, or a null component of a composite
 * key, never matches).
 *
 * The sink keeps references to the input batches (no copy). Finalize runs the chosen
 * algorithm's parallel phases (join_part.c: radix hash join and sort-merge join;
 * join_nopart.c: no-partitioning hash join); the source phase then probes one work item
 * (a range of partitions, a chunk of a split partition, or a probe morsel) per task and
 * emits batches of at most one morsel, so a large many-to-many result streams. With
 * output=aggregate the probe runs in finalize and sums are fused into it (nothing is
 * materialized); the source emits one row.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/op_common.h"
#include "join_int.h"

const struct sl_option_def join_options[JOIN_N_OPTIONS] = {
    {"on", SL_OPT_STRING, "", "key column(s) with the same name on both sides: \"k\" or \"a,b\""},
    {"left_on", SL_OPT_STRING, "", "key column(s) of the left input"},
    {"right_on", SL_OPT_STRING, "", "key column(s) of the right input (pairwise with left_on)"},
    {"kind", SL_OPT_STRING, "inner", "inner, left, right, full, semi, anti or cross"},
    {"residual", SL_OPT_STRING, "",
     "condition on each joined pair beyond the keys: \"a <> b\" (a: left column, b: right "
     "column; = <> != < <= > >=), terms joined by AND"},
    {"algo", SL_OPT_STRING, "auto", "auto, radix, nopart or sortmerge"},
    {"output", SL_OPT_STRING, "materialize", "materialize (rows) or aggregate (count + sums)"},
    {"left_columns", SL_OPT_STRING, "*", "left columns to output (\"*\" = all)"},
    {"right_columns", SL_OPT_STRING, "*",
     "right columns to output (\"*\" = all but the keys; not with kind=semi or anti)"},
};

/* ---------------- bind ---------------- */

static void join_data_free(void *p)
{
    sl__free(p, sizeof(struct join_data));
}

/* Splits "a,b" into column indices of schema s; fails the bind with a clear message. */
static int parse_cols(sl_bind_t *b, const sl_schema_t *s, const char *text, const char *opt,
                      const char *side, int *cols, int max, int *n)
{
    *n = 0;
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *e = p;
        while (*e && *e != ',')
            e++;
        const char *end = e;
        while (end > p && end[-1] == ' ')
            end--;
        char name[256];
        size_t len = (size_t)(end - p);
        if (len == 0 || len >= sizeof name)
            return sl_bind_fail(b, SL_EINVAL, "%s: empty or too long column name in '%s'", opt,
                                text);
        memcpy(name, p, len);
        name[len] = 0;
        int idx = sl_schema_find(s, name);
        if (idx < 0)
            return sl_bind_fail(b, SL_ENOTFOUND, "%s: no column '%s' in the %s input", opt, name,
                                side);
        if (*n == max)
            return sl_bind_fail(b, SL_EINVAL, "%s: more than %d columns", opt, max);
        cols[(*n)++] = idx;
        p = *e ? e + 1 : e;
    }
    return SL_OK;
}

static int parse_enum(sl_bind_t *b, const char *opt, const char *const *names, int n, int *out)
{
    const char *v;
    int rc = sl_bind_option_str(b, opt, &v);
    if (rc < 0)
        return rc;
    for (int i = 0; i < n; i++) {
        if (!strcmp(v, names[i])) {
            *out = i;
            return SL_OK;
        }
    }
    return sl_bind_fail(b, SL_EINVAL, "%s: unknown value '%s'", opt, v);
}

static int is_key_col(const struct join_data *d, int side, int col)
{
    for (int i = 0; i < d->n_keys; i++) {
        if (d->key[side][i] == col)
            return 1;
    }
    return 0;
}

/* Adds an output column; a right column whose name is taken by a left column gets "_r"
 * appended (again while the result is still taken). */
static int add_out(sl_bind_t *b, struct join_data *d, int side, int col, const char *prefix)
{
    const sl_schema_t *s = sl_bind_input_schema(b, side);
    const sl_schema_t *ls = sl_bind_input_schema(b, 0), *rs = sl_bind_input_schema(b, 1);
    const char *name;
    enum sl_type type;
    sl_schema_field(s, col, &name, &type);
    char base[280];
    snprintf(base, sizeof base, "%s", name);
    if (side == 1) {
        while (strlen(base) + 3 < sizeof base &&
               (sl_schema_find(ls, base) >= 0 ||
                (strcmp(base, name) && sl_schema_find(rs, base) >= 0)))
            strcat(base, "_r");
    }
    char buf[300];
    snprintf(buf, sizeof buf, "%s%s", prefix, base);
    enum sl_type otype = d->aggregate ? join_sum_type(type) : type;
    if (otype == SL_TYPE_INVALID)
        return sl_bind_fail(b, SL_ETYPE, "output=aggregate sums its columns, and '%s' is %s; "
                            "list summable columns in left_columns/right_columns", name,
                            sl_type_name(type));
    int rc = sl_bind_add_column(b, buf, otype);
    if (rc < 0)
        return rc;
    d->out[d->n_out].side = side;
    d->out[d->n_out].col = col;
    d->out[d->n_out].type = type;
    d->n_out++;
    return SL_OK;
}

static int summable(const sl_schema_t *s, int col)
{
    enum sl_type t;
    sl_schema_field(s, col, NULL, &t);
    return join_sum_type(t) != SL_TYPE_INVALID;
}

/* One word of the residual text at *p (a column name, an operator or AND). */
static size_t resid_word(const char *p, int op)
{
    size_t n = 0;
    if (op) {
        while (p[n] && strchr("=<>!", p[n]))
            n++;
        return n;
    }
    while (p[n] && (p[n] == '_' || p[n] == '.' || (p[n] >= '0' && p[n] <= '9') ||
                    ((p[n] | 32) >= 'a' && (p[n] | 32) <= 'z')))
        n++;
    return n;
}

/* residual="a <> b AND c < d": a, c of the left input; b, d of the right. */
static int parse_residual(sl_bind_t *b, struct join_data *d)
{
    static const char *const ops[] = {"=", "<>", "<", "<=", ">", ">=", "==", "!="};
    static const enum join_cmp codes[] = {JOIN_EQ, JOIN_NE, JOIN_LT, JOIN_LE,
                                          JOIN_GT, JOIN_GE, JOIN_EQ, JOIN_NE};
    const char *text;
    int rc = sl_bind_option_str(b, "residual", &text);
    if (rc < 0 || !*text)
        return rc;
    if (d->aggregate && d->kind != JOIN_INNER && d->kind != JOIN_SEMI && d->kind != JOIN_ANTI)
        return sl_bind_fail(b, SL_EUNSUPPORTED, "residual with output=aggregate takes kind "
                            "inner, semi or anti");
    if (d->kind == JOIN_FULL)
        return sl_bind_fail(b, SL_EUNSUPPORTED, "residual with kind=full");
    const char *p = text;
    for (;;) {
        if (d->n_resid == JOIN_MAX_RESID)
            return sl_bind_fail(b, SL_EINVAL, "residual: more than %d terms", JOIN_MAX_RESID);
        struct join_resid *r = &d->resid[d->n_resid];
        char w[3][128];
        for (int i = 0; i < 3; i++) {
            while (*p == ' ')
                p++;
            size_t n = resid_word(p, i == 1);
            if (n == 0 || n >= sizeof w[i])
                return sl_bind_fail(b, SL_EPARSE, "residual: expected %s at '%s' in \"%s\"",
                                    i == 1 ? "=, <>, <, <=, > or >=" : "a column name", p,
                                    text);
            memcpy(w[i], p, n);
            w[i][n] = 0;
            p += n;
        }
        unsigned k = 0;
        while (k < sizeof ops / sizeof ops[0] && strcmp(ops[k], w[1]))
            k++;
        if (k == sizeof ops / sizeof ops[0])
            return sl_bind_fail(b, SL_EPARSE, "residual: unknown operator '%s'", w[1]);
        r->op = codes[k];
        for (int s = 0; s < 2; s++) {
            const sl_schema_t *sc = sl_bind_input_schema(b, s);
            r->col[s] = sl_schema_find(sc, w[2 * s]);
            if (r->col[s] < 0)
                return sl_bind_fail(b, SL_ENOTFOUND, "residual: no column '%s' in the %s "
                                    "input (the left operand names a left column, the right "
                                    "one a right column)", w[2 * s], s ? "right" : "left");
        }
        enum sl_type lt, rt;
        sl_schema_field(sl_bind_input_schema(b, 0), r->col[0], NULL, &lt);
        sl_schema_field(sl_bind_input_schema(b, 1), r->col[1], NULL, &rt);
        if (lt != rt && !(sl_type_is_string(lt) && sl_type_is_string(rt)))
            return sl_bind_fail(b, SL_ETYPE, "residual: '%s' (%s) and '%s' (%s) have different "
                                "types", w[0], sl_type_name(lt), w[2], sl_type_name(rt));
        d->n_resid++;
        while (*p == ' ')
            p++;
        if (!*p)
            return SL_OK;
        if (strncasecmp(p, "and", 3) != 0 || (p[3] != ' ' && p[3] != '\0'))
            return sl_bind_fail(b, SL_EPARSE, "residual: expected AND at '%s'", p);
        p += 3;
    }
}

/* The output columns: left_columns, then right_columns (suffixed "_r" on a clash). */
static int join_bind_outputs(sl_bind_t *b, struct join_data *d, const char *lcols,
                             const char *rcols)
{
    const sl_schema_t *ls = sl_bind_input_schema(b, 0), *rs = sl_bind_input_schema(b, 1);
    int rc;
    if (sl_schema_num_fields(ls) >= JOIN_MAX_COLS || sl_schema_num_fields(rs) >= JOIN_MAX_COLS)
        return sl_bind_fail(b, SL_EUNSUPPORTED, "inputs may have at most %d columns",
                            JOIN_MAX_COLS - 1);
    int right_given = sl_bind_option_given(b, "right_columns");
    if ((d->kind == JOIN_SEMI || d->kind == JOIN_ANTI) && right_given)
        return sl_bind_fail(b, SL_EINVAL, "kind=%s outputs left columns only; right_columns is "
                            "not allowed", d->kind == JOIN_SEMI ? "semi" : "anti");
    int lsel[JOIN_MAX_COLS], rsel[JOIN_MAX_COLS], nls = 0, nrs = 0;
    if (strcmp(lcols, "*")) {
        if ((rc = parse_cols(b, ls, lcols, "left_columns", "left", lsel, JOIN_MAX_COLS, &nls)) < 0)
            return rc;
    } else {
        for (int i = 0; i < sl_schema_num_fields(ls); i++)
            if (!d->aggregate || (!is_key_col(d, 0, i) && summable(ls, i)))
                lsel[nls++] = i;
    }
    if (d->kind != JOIN_SEMI && d->kind != JOIN_ANTI) {
        if (strcmp(rcols, "*")) {
            if ((rc = parse_cols(b, rs, rcols, "right_columns", "right", rsel, JOIN_MAX_COLS,
                                 &nrs)) < 0)
                return rc;
        } else {
            for (int i = 0; i < sl_schema_num_fields(rs); i++)
                if (!is_key_col(d, 1, i) && (!d->aggregate || summable(rs, i)))
                    rsel[nrs++] = i;
        }
    }
    const char *prefix = d->aggregate ? "sum_" : "";
    if (d->aggregate && (rc = sl_bind_add_column(b, "count", SL_TYPE_INT64)) < 0)
        return rc;
    for (int i = 0; i < nls; i++)
        if ((rc = add_out(b, d, 0, lsel[i], prefix)) < 0)
            return rc;
    for (int i = 0; i < nrs; i++)
        if ((rc = add_out(b, d, 1, rsel[i], prefix)) < 0)
            return rc;
    return SL_OK;
}

static int join_bind_cols(sl_bind_t *b, struct join_data *d)
{
    const sl_schema_t *ls = sl_bind_input_schema(b, 0), *rs = sl_bind_input_schema(b, 1);
    const char *on, *lon, *ron, *lcols, *rcols;
    int rc;
    if ((rc = sl_bind_option_str(b, "on", &on)) < 0 ||
        (rc = sl_bind_option_str(b, "left_on", &lon)) < 0 ||
        (rc = sl_bind_option_str(b, "right_on", &ron)) < 0 ||
        (rc = sl_bind_option_str(b, "left_columns", &lcols)) < 0 ||
        (rc = sl_bind_option_str(b, "right_columns", &rcols)) < 0)
        return rc;
    if (d->kind == JOIN_CROSS) {
        if (*on || *lon || *ron)
            return sl_bind_fail(b, SL_EINVAL, "kind=cross joins every pair: no on/left_on/"
                                "right_on");
        if (d->aggregate)
            return sl_bind_fail(b, SL_EUNSUPPORTED, "kind=cross with output=aggregate");
        return join_bind_outputs(b, d, lcols, rcols);
    }
    if (*on && (*lon || *ron))
        return sl_bind_fail(b, SL_EINVAL, "give either on or left_on and right_on, not both");
    if (!*on && (!*lon || !*ron))
        return sl_bind_fail(b, SL_EINVAL, "needs on=\"k\" or both left_on and right_on");
    int nl, nr;
    if ((rc = parse_cols(b, ls, *on ? on : lon, *on ? "on" : "left_on", "left", d->key[0],
                         JOIN_MAX_KEYS, &nl)) < 0 ||
        (rc = parse_cols(b, rs, *on ? on : ron, *on ? "on" : "right_on", "right", d->key[1],
                         JOIN_MAX_KEYS, &nr)) < 0)
        return rc;
    if (nl != nr)
        return sl_bind_fail(b, SL_EINVAL, "left_on has %d columns but right_on has %d", nl, nr);
    if (nl == 0)
        return sl_bind_fail(b, SL_EINVAL, "no key columns given");
    d->n_keys = nl;
    for (int i = 0; i < nl; i++) {
        const char *ln, *rn;
        enum sl_type lt, rt;
        sl_schema_field(ls, d->key[0][i], &ln, &lt);
        sl_schema_field(rs, d->key[1][i], &rn, &rt);
        if (!join_key_type_ok(lt))
            return sl_bind_fail(b, SL_ETYPE, "key column '%s' of the left input is %s, which "
                                "cannot be a join key", ln, sl_type_name(lt));
        /* Strings join whatever their encoding (utf8, large_utf8, dict); other types must
         * be equal (a decimal's scale included: cast one side first). */
        if (lt != rt && !(sl_type_is_string(lt) && sl_type_is_string(rt)))
            return sl_bind_fail(b, SL_ETYPE, "key columns '%s' (left, %s) and '%s' (right, %s) "
                                "have different types", ln, sl_type_name(lt), rn,
                                sl_type_name(rt));
        d->rktype[i] = rt;
        d->ktype[i] = lt;
    }
    if ((rc = parse_residual(b, d)) < 0)
        return rc;
    return join_bind_outputs(b, d, lcols, rcols);
}

int join_bind(sl_bind_t *b)
{
    static const char *const kinds[] = {"inner", "left", "semi", "anti", "right", "full",
                                        "cross"};
    static const char *const algos[] = {"auto", "radix", "nopart", "sortmerge"};
    static const char *const outs[] = {"materialize", "aggregate"};
    if (sl_bind_num_inputs(b) != 2)
        return sl_bind_fail(b, SL_EINVAL, "needs two inputs (left, right)");
    struct join_data *d = sl__calloc(1, sizeof *d);
    if (!d)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    sl_bind_set_data(b, d, join_data_free);
    int rc;
    if ((rc = parse_enum(b, "kind", kinds, 7, &d->kind)) < 0 ||
        (rc = parse_enum(b, "algo", algos, 4, &d->algo)) < 0 ||
        (rc = parse_enum(b, "output", outs, 2, &d->aggregate)) < 0)
        return rc;
    if ((rc = join_bind_cols(b, d)) < 0)
        return rc;
    if (d->aggregate) {
        sl_bind_set_rows(b, 1);
    } else {
        int64_t l = sl_bind_input_rows(b, 0);
        sl_bind_set_rows(b, l);
    }
    sl__bind_mg_judge(b, join_mg_judge);
    return SL_OK;
}

/* ---------------- sink and combine ---------------- */

static int side_push(struct join_side *s, sl_batch_t *b)
{
    if (s->n_batches == s->cap) {
        int64_t nc = s->cap ? s->cap * 2 : 16;
        sl_batch_t **nb = sl__realloc(s->batches, (size_t)s->cap * sizeof *nb,
                                      (size_t)nc * sizeof *nb);
        if (!nb)
            return SL_ENOMEM;
        s->batches = nb;
        s->cap = nc;
    }
    s->batches[s->n_batches++] = b;
    return SL_OK;
}

int join_sink(sl_task_t *t)
{
    struct join_side *ls = sl_task_lstate(t);
    if (!ls)
        return SL_ENOMEM;
    sl_batch_t *b = sl_task_input(t);
    if (sl_batch_num_rows(b) == 0)
        return SL_OK;
    sl_batch_ref(b);
    int port = sl_task_port(t);
    if (side_push(&ls[port], b) < 0) {
        sl_batch_unref(b);
        return sl_task_fail(t, SL_ENOMEM, "out of memory keeping input batches");
    }
    /* Measured here, while the batch is in cache: may its key travel in the tuples? */
    const struct join_data *d = sl_op_data(sl_task_op(t));
    if (d->n_keys == 1 && sl_type_is_string(d->ktype[0]) && sl_batch_device(b) < 0)
        ls[port].n_short += join_str16_rows(b, d->key[port][0]);
    return SL_OK;
}

int join_combine(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    struct join_side *ls = sl_task_lstate(t);
    for (int s = 0; s < 2; s++) {
        for (int64_t i = 0; i < ls[s].n_batches; i++) {
            if (side_push(&st->side[s], ls[s].batches[i]) < 0)
                return sl_task_fail(t, SL_ENOMEM, "out of memory keeping input batches");
            ls[s].batches[i] = NULL;
        }
        ls[s].n_batches = 0;
        st->side[s].n_short += ls[s].n_short;
        ls[s].n_short = 0;
    }
    return SL_OK;
}

static void side_free(struct join_side *s)
{
    for (int64_t i = 0; i < s->n_batches; i++)
        sl_batch_unref(s->batches[i]);
    sl__free(s->batches, 0);
    sl__free(s->start, 0);
    memset(s, 0, sizeof *s);
}

void join_fini_local(const sl_op_t *op, void *gs, void *ls)
{
    (void)op;
    (void)gs;
    struct join_side *s = ls;
    side_free(&s[0]);
    side_free(&s[1]);
}

void join_fini_global(const sl_op_t *op, void *gs)
{
    (void)op;
    struct join_state *st = gs;
    side_free(&st->side[0]);
    side_free(&st->side[1]);
    sl__free(st->side_v, 0);
    for (int64_t i = 0; i < st->n_full_out; i++)
        sl_batch_unref(st->full_out[i]);
    sl__free(st->full_out, 0);
    sl_batch_unref(st->gpu_out);
    join_dict_unions_free(st);
}

/* ---------------- keys ---------------- */

/* One key component of row r as 64 bits: the value's bits (zero-extended) for types
 * compared by their bits, the shared dictionary's code, or else a hash of the value. */
static inline uint64_t key_part(const struct join_shape *sh, int i, const struct sl__colview *v,
                                int64_t r)
{
    switch (sh->kmode[i]) {
    case JOIN_KEY_BITS4:
        return ((const uint32_t *)v->c.data)[v->c.offset + r];
    case JOIN_KEY_BITS8:
        return ((const uint64_t *)v->c.data)[v->c.offset + r];
    case JOIN_KEY_BITS2:
        return ((const uint16_t *)v->c.data)[v->c.offset + r];
    case JOIN_KEY_BITS1:
        return ((const uint8_t *)v->c.data)[v->c.offset + r];
    default:
        return sl__val_hash(v, r);
    }
}

/* The key columns of batch b of a side as views (n_keys of them). */
static void key_views(const struct join_shape *sh, const sl_batch_t *b, const int *key,
                      struct sl__colview *v)
{
    for (int i = 0; i < sh->n_keys; i++)
        sl__colview_get(b, key[i], &v[i]);
}

/* Normalized key of one row (see join_int.h); *nul = 1 if a component is null. */
static inline uint64_t row_key(const struct join_shape *sh, const struct sl__colview *v,
                               int64_t r, uint8_t *nul)
{
    uint64_t h = 0x2545F4914F6CDD1Dull;
    *nul = 0;
    for (int i = 0; i < sh->n_keys; i++) {
        if (!sl__colview_valid(&v[i], r))
            *nul = 1;
        uint64_t x = key_part(sh, i, &v[i], r);
        if (sh->n_keys == 1)
            return x;
        if (sh->exact)
            h = i == 0 ? x << 32 : h | x;
        else
            h = (h ^ x) * JOIN_HASH_MUL, h ^= h >> 29;
    }
    return h;
}

int64_t join_load(const struct join_state *st, int s, int64_t bi, int64_t lo, int64_t n,
                  uint64_t *k, uint64_t *v, uint8_t *nul, uint64_t *w)
{
    const struct join_side *sd = &st->side[s];
    const sl_batch_t *b = sd->batches[bi];
    int64_t nulls = 0;
    const struct sl__col *k0 = &b->cols[sd->key[0]];
    enum join_key_mode m0 = st->shape.kmode[0];
    if (st->shape.str16) {
        uint64_t wbuf[2 * JOIN_CHUNK];
        struct sl__colview kv;
        sl__colview_get(b, sd->key[0], &kv);
        nulls = join_str16_load(&kv, lo, n, k, w ? w : wbuf, nul);
    } else if (st->shape.n_keys == 1 && !k0->validity &&
        (m0 == JOIN_KEY_BITS4 || m0 == JOIN_KEY_BITS8)) {
        /* The common case: one 4- or 8-byte key column without nulls, a tight loop. */
        if (m0 == JOIN_KEY_BITS4) {
            const uint32_t *x = (const uint32_t *)sl__col_values(b, sd->key[0]) + lo;
            for (int64_t i = 0; i < n; i++)
                k[i] = x[i];
        } else {
            const uint64_t *x = (const uint64_t *)sl__col_values(b, sd->key[0]) + lo;
            for (int64_t i = 0; i < n; i++)
                k[i] = x[i];
        }
        memset(nul, 0, (size_t)n);
    } else {
        struct sl__colview kv[JOIN_MAX_KEYS];
        key_views(&st->shape, b, sd->key, kv);
        for (int64_t i = 0; i < n; i++) {
            k[i] = row_key(&st->shape, kv, lo + i, &nul[i]);
            nulls += nul[i];
        }
    }
    if (!v)
        return nulls;
    if (!sd->inline_val) {
        uint64_t base = (uint64_t)bi << sd->shift;
        for (int64_t i = 0; i < n; i++)
            v[i] = base | (uint64_t)(lo + i);
    } else if (sd->val_col < 0) {
        memset(v, 0, (size_t)n * sizeof *v);
    } else if (b->cols[sd->val_col].type == SL_TYPE_INT32) {
        const int32_t *x = (const int32_t *)sl__col_values(b, sd->val_col) + lo;
        for (int64_t i = 0; i < n; i++)
            v[i] = (uint64_t)(int64_t)x[i];
    } else {
        const int64_t *x = (const int64_t *)sl__col_values(b, sd->val_col) + lo;
        for (int64_t i = 0; i < n; i++)
            v[i] = (uint64_t)x[i];
    }
    return nulls;
}

int join_keys_equal(const struct join_state *st, uint64_t lrow, uint64_t rrow)
{
    const struct join_side *L = &st->side[0], *R = &st->side[1];
    const sl_batch_t *lb = L->batches[lrow >> L->shift], *rb = R->batches[rrow >> R->shift];
    int64_t li = (int64_t)(lrow & (((uint64_t)1 << L->shift) - 1));
    int64_t ri = (int64_t)(rrow & (((uint64_t)1 << R->shift) - 1));
    for (int i = 0; i < st->shape.n_keys; i++) {
        struct sl__colview a, b;
        sl__colview_get(lb, L->key[i], &a);
        sl__colview_get(rb, R->key[i], &b);
        if (st->shape.kmode[i] != JOIN_KEY_HASH) {
            if (key_part(&st->shape, i, &a, li) != key_part(&st->shape, i, &b, ri))
                return 0;
        } else if (sl__val_cmp(&a, li, &b, ri) != 0) {
            return 0;
        }
    }
    return 1;
}

int join_residual_ok(const struct join_state *st, uint64_t lrow, uint64_t rrow)
{
    const struct join_side *L = &st->side[0], *R = &st->side[1];
    const sl_batch_t *lb = L->batches[lrow >> L->shift], *rb = R->batches[rrow >> R->shift];
    int64_t li = (int64_t)(lrow & (((uint64_t)1 << L->shift) - 1));
    int64_t ri = (int64_t)(rrow & (((uint64_t)1 << R->shift) - 1));
    for (int i = 0; i < st->d->n_resid; i++) {
        const struct join_resid *r = &st->d->resid[i];
        struct sl__colview a, b;
        sl__colview_get(lb, r->col[0], &a);
        sl__colview_get(rb, r->col[1], &b);
        if (!sl__colview_valid(&a, li) || !sl__colview_valid(&b, ri))
            return 0; /* a comparison with NULL is not true */
        int c = sl__val_cmp(&a, li, &b, ri), ok;
        switch (r->op) {
        case JOIN_EQ: ok = c == 0; break;
        case JOIN_NE: ok = c != 0; break;
        case JOIN_LT: ok = c < 0; break;
        case JOIN_LE: ok = c <= 0; break;
        case JOIN_GT: ok = c > 0; break;
        default: ok = c >= 0; break;
        }
        if (!ok)
            return 0;
    }
    return 1;
}

/* 1 when every batch of both sides holds key column i in one shared dictionary. */
static int dict_shared(const struct join_state *st, int i)
{
    const struct sl__dict *dict = NULL;
    for (int s = 0; s < 2; s++) {
        const struct join_side *sd = &st->side[s];
        for (int64_t k = 0; k < sd->n_batches; k++) {
            const struct sl__col *c = &sd->batches[k]->cols[st->d->key[s][i]];
            if (c->type != SL_TYPE_DICT || (dict && c->dict != dict))
                return 0;
            dict = c->dict;
        }
    }
    return 1;
}

/* How key component i is normalized (join_int.h): by its bits where equal bits mean
 * equal values, else hashed and verified. */
static enum join_key_mode key_mode(const struct join_state *st, int i)
{
    enum sl_type t = st->d->ktype[i];
    if (t == SL_TYPE_DICT && st->d->rktype[i] == SL_TYPE_DICT && dict_shared(st, i))
        return JOIN_KEY_BITS4;
    if (sl_type_is_string(t) || t == SL_TYPE_FLOAT32 || t == SL_TYPE_FLOAT64)
        return JOIN_KEY_HASH;
    switch (sl_type_width(t)) {
    case 1: return JOIN_KEY_BITS1;
    case 2: return JOIN_KEY_BITS2;
    case 4: return JOIN_KEY_BITS4;
    case 8: return JOIN_KEY_BITS8;
    default: return JOIN_KEY_HASH; /* int128 decimals */
    }
}

/* ---------------- finalize: choosing the algorithm ---------------- */

static int col_has_nulls(const struct join_side *s, int col)
{
    for (int64_t i = 0; i < s->n_batches; i++) {
        const struct sl__col *c = &s->batches[i]->cols[col];
        if (c->validity && c->null_count != 0)
            return 1;
    }
    return 0;
}

/* Picks inline vals (the payload itself in the tuple, no row ids) where every output
 * value of a side can come from the tuple: fused aggregates over exact keys with at most
 * one payload column per side; materialized output of a single key whose outputs per
 * side are key columns and at most one other integer column, none with nulls. */
static void choose_vals(struct join_state *st)
{
    const struct join_data *d = st->d;
    for (int s = 0; s < 2; s++) {
        struct join_side *sd = &st->side[s];
        int n = 0, col = -1;
        enum sl_type t = SL_TYPE_INVALID;
        for (int i = 0; i < d->n_out; i++) {
            if (d->out[i].side != s || (!d->aggregate && d->out[i].col == d->key[s][0]))
                continue;
            n++;
            col = d->out[i].col;
            t = d->out[i].type;
        }
        sd->val_col = -1;
        sd->inline_val = 0;
        /* Materialized rows take the key from an exact key; a str16 key is a hash. */
        if (!st->shape.exact || n > 1 ||
            (!d->aggregate && (d->n_keys != 1 || st->shape.str16)) || d->n_resid ||
            d->kind == JOIN_FULL)
            continue;
        if (!d->aggregate && col_has_nulls(sd, d->key[s][0]))
            continue;
        if (n == 1) {
            if ((t != SL_TYPE_INT32 && t != SL_TYPE_INT64) || col_has_nulls(sd, col))
                continue;
            sd->val_col = col;
        }
        sd->inline_val = 1;
    }
    /* Both sides or neither: the emitter reads vals of both sides the same way. */
    if (!st->side[0].inline_val || !st->side[1].inline_val) {
        for (int s = 0; s < 2; s++) {
            st->side[s].inline_val = 0;
            st->side[s].val_col = -1;
        }
    }
}

static int str16_type(enum sl_type t)
{
    return t == SL_TYPE_UTF8 || t == SL_TYPE_LARGE_UTF8;
}

/* Tuple layout and vals (after the key modes and the build side): exact keys, inline
 * vals where choose_vals allows, 8-byte tuples where key and val fit 32 bits, 32-byte
 * ones for a str16 key. `narrow`: every key component fits 32 bits exactly. */
static void choose_layout(struct join_state *st, int narrow)
{
    const struct join_data *d = st->d;
    st->shape.exact = d->n_keys == 1 || (d->n_keys == 2 && narrow);
    for (int i = 0; i < d->n_keys; i++)
        st->shape.exact &= st->shape.kmode[i] != JOIN_KEY_HASH;
    st->shape.exact |= st->shape.str16;
    choose_vals(st);
    int key32 = d->n_keys == 1 && narrow;
    int val32 = 1;
    for (int s = 0; s < 2; s++) {
        const struct join_side *sd = &st->side[s];
        for (int i = 0; i < d->n_out; i++)
            if (sd->inline_val && d->out[i].side == s && d->out[i].col == sd->val_col &&
                d->out[i].type == SL_TYPE_INT64)
                val32 = 0;
        if (!sd->inline_val && (sd->n_batches << sd->shift) > ((int64_t)1 << 32) - 2)
            val32 = 0;
    }
    st->shape.wide = !(key32 && val32) || st->shape.str16;
}

static int side_prepare(sl_task_t *t, struct join_state *st, int s)
{
    struct join_side *sd = &st->side[s];
    sd->key = st->d->key[s];
    sd->start = sl__malloc((size_t)(sd->n_batches + 1) * sizeof *sd->start);
    if (!sd->start)
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    int64_t n = 0, maxb = 1;
    for (int64_t i = 0; i < sd->n_batches; i++) {
        sd->start[i] = n;
        n += sd->batches[i]->n_rows;
        if (sd->batches[i]->n_rows > maxb)
            maxb = sd->batches[i]->n_rows;
    }
    sd->start[sd->n_batches] = n;
    sd->n_rows = n;
    sd->shift = join_log2_ceil(maxb);
    return SL_OK;
}

/* Share of sampled build keys that repeat an earlier sampled key (0 = all distinct). */
static double build_dup_share(const struct join_state *st)
{
    const struct join_side *b = &st->side[st->build];
    enum { SAMPLE = 2048, SLOTS = 4096 };
    if (b->n_rows < 2 * SAMPLE)
        return 0;
    uint64_t seen[SLOTS];
    uint8_t used[SLOTS] = {0};
    int dups = 0;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < SAMPLE; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int64_t r = (int64_t)(x % (uint64_t)b->n_rows);
        int64_t lo = 0, hi = b->n_batches - 1;
        while (lo < hi) {
            int64_t mid = (lo + hi + 1) / 2;
            if (b->start[mid] <= r)
                lo = mid;
            else
                hi = mid - 1;
        }
        uint8_t nul;
        struct sl__colview kv[JOIN_MAX_KEYS];
        key_views(&st->shape, b->batches[lo], b->key, kv);
        uint64_t k = row_key(&st->shape, kv, r - b->start[lo], &nul);
        if (nul)
            continue;
        uint64_t h = join_hash(k) >> 52;
        while (used[h] && seen[h] != k)
            h = (h + 1) & (SLOTS - 1);
        if (used[h])
            dups++;
        used[h] = 1;
        seen[h] = k;
    }
    return dups / (double)SAMPLE;
}

/* The auto rule, from sizes and skew:
 *   build bytes = build rows * tuple bytes (8 or 16);
 *   if the sampled build keys repeat a lot (dup share > 0.5, heavy many-to-many):
 *       sortmerge (runs of equal keys are merged as blocks; chains or probe sequences
 *       of a hash table would grow with every duplicate);
 *   else if build bytes * 2 <= min(L3 / 4, 8 MiB): nopart (the shared table stays in
 *       cache, partitioning would only add passes over both inputs);
 *   else radix (partitions sized to L2; a skewed probe side is split into chunks).
 */
static int choose_algo(const struct join_state *st)
{
    if (st->d->algo != JOIN_AUTO)
        return st->d->algo;
    int64_t bbytes = st->side[st->build].n_rows * (st->shape.wide ? 16 : 8);
    if (build_dup_share(st) > 0.5)
        return JOIN_SORTMERGE;
    /* The shared table (twice the build tuples) within a quarter of L3, at most 8 MiB:
     * probes then hit cache, and partitioning both sides (two passes over the larger
     * probe side) costs more than it saves (TPC-H Q5 at SF 1: 100 -> 70 ms, a 45k-row
     * build against 6M probes). sysfs may report a host's whole L3 on a VM, hence the cap. */
    int64_t l3 = sl__cpu_cache_bytes(3), cap = (int64_t)8 << 20;
    if (bbytes * 2 <= (l3 / 4 < cap ? l3 / 4 : cap))
        return JOIN_NOPART;
    return JOIN_RADIX;
}

/* The CPU algorithms read host memory: batches a GPU sink kept come back first (when
 * the GPU could not finalize, e.g. a kind it does not do yet). */
static int sides_to_host(sl_task_t *t, struct join_state *st)
{
    for (int s = 0; s < 2; s++) {
        for (int64_t i = 0; i < st->side[s].n_batches; i++) {
            int rc = sl__batch_keep_on_host(t, &st->side[s].batches[i]);
            if (rc < 0)
                return rc;
        }
    }
    return SL_OK;
}

void join_profile_sink(sl_task_t *t, struct join_state *st)
{
    int64_t down = atomic_load(&st->gpu_sink_down);
    if (down > 0)
        sl_task_profile_value(t, "gpu_sink_down_bytes", down);
}

int join_finalize(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    const struct join_data *d = sl_op_data(sl_task_op(t));
    join_profile_sink(t, st);
    st->d = d;
    st->morsel = sl_task_morsel_rows(t);
    int rc = sides_to_host(t, st);
    if (rc < 0)
        return rc;
    if ((rc = side_prepare(t, st, 0)) < 0 || (rc = side_prepare(t, st, 1)) < 0 ||
        (rc = join_dict_unions(t, st)) < 0)
        return rc;
    if (d->kind == JOIN_CROSS) { /* work: the left batches (join_full.c) */
        st->n_work = st->side[1].n_rows ? st->side[0].n_batches : 0;
        return SL_OK;
    }
    st->shape.n_keys = d->n_keys;
    memcpy(st->shape.ktype, d->ktype, sizeof d->ktype);
    int narrow = 1; /* every component fits 32 bits exactly */
    for (int i = 0; i < d->n_keys; i++) {
        st->shape.kmode[i] = key_mode(st, i);
        narrow &= st->shape.kmode[i] != JOIN_KEY_HASH && st->shape.kmode[i] != JOIN_KEY_BITS8;
    }
    /* Inner joins build on the smaller side; right joins keep right rows and probe with
     * them; the others keep left rows and probe with them. */
    st->build = (d->kind == JOIN_INNER && st->side[0].n_rows < st->side[1].n_rows) ||
                        d->kind == JOIN_RIGHT
                    ? 0
                    : 1;
    if (d->kind == JOIN_FULL) {
        int64_t nb = st->side[st->build].n_rows;
        if (!(st->bmatch = sl_task_alloc(t, (size_t)(nb ? nb : 1))))
            return sl_task_fail(t, SL_ENOMEM, "out of memory");
        memset(st->bmatch, 0, (size_t)(nb ? nb : 1));
    }
    /* A short string key rides in the tuples (join_str16.c) where the radix join runs:
     * the other algorithms keep (hash, row) tuples and verify candidates on the rows. */
    st->shape.str16 = d->n_keys == 1 && str16_type(d->ktype[0]) && str16_type(d->rktype[0]) &&
                      st->side[0].n_short == st->side[0].n_rows &&
                      st->side[1].n_short == st->side[1].n_rows;
    choose_layout(st, narrow);
    st->algo = choose_algo(st);
    if (st->shape.str16 && st->algo != JOIN_RADIX) {
        st->shape.str16 = 0;
        choose_layout(st, narrow);
    }
    /* Nothing to probe: an empty probe side, or no build rows for kinds that output only
     * matches (left, right and anti joins still output every probe row; a full join its
     * build rows too, join_after_build). */
    int64_t nprobe = st->side[1 - st->build].n_rows, nbuild = st->side[st->build].n_rows;
    if (nprobe == 0 || (nbuild == 0 && (d->kind == JOIN_INNER || d->kind == JOIN_SEMI)))
        return join_after_build(t);
    return st->algo == JOIN_NOPART ? join_nopart_start(t) : join_part_start(t);
}

/* ---------------- probe work and the source ---------------- */

static int probe_one(sl_task_t *t, struct join_state *st, int64_t w, struct join_acc *acc)
{
    if (st->n_work == 0)
        return SL_OK;
    if (st->algo == JOIN_NOPART)
        return join_nopart_probe(t, st, w, acc);
    return join_part_probe(t, st, w, acc);
}

static int agg_probe_task(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    int64_t w = sl_task_index(t);
    return probe_one(t, st, w, &st->acc[w]);
}

static int agg_sum_task(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    for (int64_t w = 0; w < st->n_work; w++)
        join_acc_add(st, &st->total, &st->acc[w]);
    return SL_OK;
}

static const struct sl_impl agg_probe_impl[] = {SL__IMPL_CPU(agg_probe_task)};
static const struct sl_impl agg_sum_impl[] = {SL__IMPL_CPU(agg_sum_task)};
static const struct sl_phase agg_probe_phase = {agg_probe_impl, 1, NULL};
static const struct sl_phase agg_sum_phase = {agg_sum_impl, 1, NULL};

/* Runs after the build phases (or at once when nothing can match): spawns the fused
 * aggregate probe; for materialized output the source tasks probe. */
int join_after_build(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    if (st->d->kind == JOIN_FULL)
        return join_full_after_build(t);
    if (!st->d->aggregate || st->n_work == 0)
        return SL_OK;
    st->acc = sl_task_alloc(t, (size_t)st->n_work * sizeof *st->acc);
    if (!st->acc)
        return SL_ENOMEM;
    memset(st->acc, 0, (size_t)st->n_work * sizeof *st->acc);
    return sl_task_spawn(t, &agg_probe_phase, st->n_work, NULL, &agg_sum_phase);
}

int64_t join_source_tasks(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    const struct join_data *d = sl_op_data(sl_task_op(t));
    if (d->kind == JOIN_FULL && !d->aggregate)
        return st->n_full_out;
    return d->aggregate ? 1 : st->n_work;
}

int join_source(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    if (st->d->aggregate)
        return join_emit_aggregate(t, st);
    if (st->d->kind == JOIN_FULL)
        return join_full_source(t);
    if (st->d->kind == JOIN_CROSS)
        return join_cross_source(t, st, sl_task_index(t));
    return probe_one(t, st, sl_task_index(t), NULL);
}

const struct sl_impl join_combine_cpu[1] = {SL__IMPL_CPU(join_combine)};

static const struct sl_impl sink_cpu[] = {SL__IMPL_CPU(join_sink)};
static const struct sl_impl finalize_cpu[] = {SL__IMPL_CPU(join_finalize)};
static const struct sl_impl source_cpu[] = {SL__IMPL_CPU(join_source)};
/* The CPU-only definition; CUDA builds register sl__join_cuda_def (join_cuda.c). */
SL__SINK_SOURCE_DEF(sl__join_def, JOIN_DEF_FIELDS, (join_source_tasks, join_fini_global),
                    sl__cost_linear, sink_cpu, join_combine_cpu, finalize_cpu, source_cpu);
