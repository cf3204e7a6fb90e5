/* project: computes the output columns listed in `columns`, e.g.
 *     columns="a, b, c=a*2+b, d=CAST(x AS float64), big=a > 10"
 * Each item is `expr` or `name = expr`; a bare column keeps its name and is passed on
 * without copying; other unnamed items are called col<k> (k counts items from 1).
 * Conditions are stored as bool, computed strings as utf8 (their bytes copied into the
 * output batch), decimals with their precision and scale. Output column types follow
 * expr.h. */
#include <stdio.h>
#include <string.h>

#include "project_op.h"

const struct sl_option_def sl__project_options[1] = {
    {"columns", SL_OPT_STRING, NULL, "output columns: \"a, b, c=a*2+b, d=CAST(x AS float64)\""},
};

static void proj_free(void *p)
{
    struct proj_data *d = p;
    for (int i = 0; i < d->n; i++) {
        sl__free_str(d->items[i].name);
        sl__expr_free(d->items[i].e);
    }
    sl__free(d->xp, 0);
    sl__free(d->items, 0);
    if (d->computed)
        sl__schema_free(d->computed);
    sl__free(d, sizeof *d);
}

static bool is_ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_ident_char(char c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9') || c == '.';
}

/* The end of the item starting at `p`: the next comma outside parentheses. */
static int item_end(const char *text, int p)
{
    int depth = 0;
    for (; text[p]; p++) {
        if (text[p] == '(')
            depth++;
        else if (text[p] == ')' && depth > 0)
            depth--;
        else if (text[p] == ',' && depth == 0)
            break;
    }
    return p;
}

/* Parses one item text[p, end) into it; fills the name from an alias if there is one. */
static int parse_item(sl_bind_t *b, const char *text, int p, int end, struct proj_item *it)
{
    char err[400];
    while (p < end && (text[p] == ' ' || text[p] == '\t' || text[p] == '\n'))
        p++;
    if (p == end)
        return sl_bind_fail(b, SL_EPARSE, "columns: parse error at position %d of \"%s\": empty "
                            "column (hint: remove the extra comma)", p + 1, text);
    int q = p;
    if (is_ident_start(text[q])) {
        while (q < end && is_ident_char(text[q]))
            q++;
        int r = q;
        while (r < end && (text[r] == ' ' || text[r] == '\t'))
            r++;
        if (r < end && text[r] == '=' && (r + 1 >= end || text[r + 1] != '=')) {
            it->name = sl__malloc((size_t)(q - p) + 1);
            if (!it->name)
                return sl_bind_fail(b, SL_ENOMEM, "out of memory");
            memcpy(it->name, text + p, (size_t)(q - p));
            it->name[q - p] = 0;
            p = r + 1;
        }
    }
    int rc = sl__expr_parse(text, p, end, &it->e, err, sizeof err);
    if (rc < 0)
        return sl_bind_fail(b, rc, "columns: %s", err);
    if ((rc = sl__expr_bind(it->e, sl_bind_input_schema(b, 0), err, sizeof err)) < 0)
        return sl_bind_fail(b, rc, "columns: %s", err);
    return SL_OK;
}

/* Names unnamed items, checks for duplicates and declares the output columns. */
static int declare_columns(sl_bind_t *b, struct proj_data *d)
{
    int n_comp = 0;
    for (int i = 0; i < d->n; i++) {
        struct proj_item *it = &d->items[i];
        /* A bare column, renamed or not, is passed on without copying. */
        it->in_col = sl__expr_column(it->e);
        if (!it->name) {
            char buf[24];
            const char *cn = sl__expr_column_name(it->e);
            if (!cn)
                snprintf(buf, sizeof buf, "col%d", i + 1);
            it->name = sl__strdup(cn ? cn : buf);
            if (!it->name)
                return sl_bind_fail(b, SL_ENOMEM, "out of memory");
        }
        for (int j = 0; j < i; j++)
            if (strcmp(d->items[j].name, it->name) == 0)
                return sl_bind_fail(b, SL_EINVAL, "columns: the output column '%s' appears twice "
                                    "(hint: rename one with name = expr)", it->name);
        it->tmp_col = it->in_col >= 0 ? -1 : n_comp++;
        int rc = sl_bind_add_column(b, it->name, sl__expr_type(it->e));
        if (rc < 0)
            return rc;
    }
    d->n_exprs = n_comp;
    if (n_comp) {
        d->computed = sl__schema_new(n_comp);
        if (!d->computed)
            return sl_bind_fail(b, SL_ENOMEM, "out of memory");
        for (int i = 0; i < d->n; i++)
            if (d->items[i].tmp_col >= 0 &&
                sl__schema_set(d->computed, d->items[i].tmp_col, d->items[i].name,
                               sl__expr_type(d->items[i].e)) < 0)
                return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    }
    return SL_OK;
}

/* Whether the GPU project takes every computed item (why not, else). */
static int proj_gpu_check(sl_bind_t *b, struct proj_data *d)
{
    d->xp = sl__calloc((size_t)d->n, sizeof *d->xp);
    if (!d->xp)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    const sl_schema_t *in = sl_bind_input_schema(b, 0);
    for (int i = 0; i < d->n; i++) {
        const struct proj_item *it = &d->items[i];
        if (it->tmp_col < 0)
            continue;
        if (sl__xp_compile(it->e, in, &d->xp[i], d->why, sizeof d->why) < 0 ||
            sl__xp_store_of(sl__expr_type(it->e)) < 0) {
            if (!d->why[0])
                snprintf(d->why, sizeof d->why, "column %s is a string", it->name);
            return SL_OK;
        }
    }
    d->gpu_ok = true;
    return SL_OK;
}

int sl__project_bind(sl_bind_t *b)
{
    const char *text;
    int rc;
    if ((rc = sl_bind_option_str(b, "columns", &text)) < 0)
        return rc;
    struct proj_data *d = sl__calloc(1, sizeof *d);
    if (!d)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    sl_bind_set_data(b, d, proj_free);
    int len = (int)strlen(text), n = 1;
    for (int p = item_end(text, 0); p < len; p = item_end(text, p + 1))
        n++;
    d->items = sl__calloc((size_t)n, sizeof *d->items);
    if (!d->items)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    int p = 0;
    for (int i = 0; i < n; i++) {
        int end = item_end(text, p);
        d->n = i + 1;
        if ((rc = parse_item(b, text, p, end, &d->items[i])) < 0)
            return rc;
        p = end + 1;
    }
    sl_bind_set_rows(b, sl_bind_input_rows(b, 0));
    if ((rc = declare_columns(b, d)) < 0)
        return rc;
    return proj_gpu_check(b, d);
}

void sl__project_fini_local(const sl_op_t *op, void *gs, void *ls)
{
    (void)gs;
    (void)op;
    struct proj_local *l = ls;
    for (int i = 0; i < l->n; i++)
        sl__expr_scratch_fini(&l->scratch[i]);
    sl__free(l->scratch, (size_t)l->n * sizeof *l->scratch);
}

int sl__project_init_local(const sl_op_t *op, void *gs, void *ls)
{
    (void)gs;
    const struct proj_data *d = sl_op_data(op);
    struct proj_local *l = ls;
    l->scratch = sl__calloc((size_t)d->n, sizeof *l->scratch);
    if (!l->scratch)
        return SL_ENOMEM;
    l->n = d->n;
    for (int i = 0; i < d->n; i++) {
        if (d->items[i].tmp_col >= 0 && sl__expr_scratch_init(&l->scratch[i], d->items[i].e) < 0) {
            /* The runtime frees the state without fini_local when init_local fails. */
            sl__project_fini_local(op, gs, ls);
            return SL_ENOMEM;
        }
    }
    return SL_OK;
}

/* Writes one fixed-width value of kind v->vk, row r, as `type` at out. */
static void store_value(void *out, enum sl_type type, const struct sl__expr_vec *v, int64_t r)
{
    int64_t i = v->vk == SL__VK_BOOL ? v->b[r] : v->vk == SL__VK_FLOAT || v->vk == SL__VK_DEC ||
                v->vk == SL__VK_STR ? 0 : v->i[r];
    switch (SL_TYPE_ID(type)) {
    case SL_TYPE_INT8: case SL_TYPE_UINT8: case SL_TYPE_BOOL: *(int8_t *)out = (int8_t)i; break;
    case SL_TYPE_INT16: case SL_TYPE_UINT16: *(int16_t *)out = (int16_t)i; break;
    case SL_TYPE_INT32: case SL_TYPE_UINT32: case SL_TYPE_DATE32: *(int32_t *)out = (int32_t)i; break;
    case SL_TYPE_FLOAT32: *(float *)out = (float)v->f[r]; break;
    case SL_TYPE_FLOAT64: *(double *)out = v->f[r]; break;
    case SL_TYPE_UINT64: *(uint64_t *)out = (uint64_t)v->d[r]; break;
    case SL_TYPE_DECIMAL:
        if (sl_type_width(type) == 8)
            *(int64_t *)out = (int64_t)v->d[r];
        else
            memcpy(out, &v->d[r], 16);
        break;
    default: *(int64_t *)out = i; break; /* INT64, TIMESTAMP */
    }
}

/* Appends the strings of one vector to utf8 column c (offsets at rows s..s+len). */
static int store_strings(sl_batch_t *tmp, int c, int64_t s, const struct sl__expr_vec *v,
                         int64_t *cap)
{
    int32_t *off = sl_batch_column_data(tmp, c);
    int64_t at = off[s], need = at;
    for (int64_t r = 0; r < v->n; r++)
        need += v->null && v->null[r] ? 0 : v->s[r].n;
    if (need > INT32_MAX)
        return SL_EOVERFLOW;
    if (need > *cap || *cap == 0) { /* grows geometrically: one copy per doubling */
        int64_t nc = *cap ? *cap : 4096;
        while (nc < need)
            nc *= 2;
        *cap = nc > INT32_MAX ? INT32_MAX : nc;
    }
    char *chars = sl_batch_column_chars(tmp, c, *cap); /* same size: no copy */
    if (!chars)
        return SL_ENOMEM;
    for (int64_t r = 0; r < v->n; r++) {
        if (!(v->null && v->null[r])) {
            memcpy(chars + at, v->s[r].p, (size_t)v->s[r].n);
            at += v->s[r].n;
        }
        off[s + r + 1] = (int32_t)at;
    }
    return SL_OK;
}

/* Writes one evaluated vector into rows [s, s+len) of column c of tmp; returns the nulls
 * written or a negative error. */
static int64_t store(sl_batch_t *tmp, int c, enum sl_type type, int64_t s,
                     const struct sl__expr_vec *v, uint8_t **valid, int64_t *cap)
{
    if (v->vk == SL__VK_STR) {
        int rc = store_strings(tmp, c, s, v, cap);
        if (rc < 0)
            return rc;
    } else if (v->vk == SL__VK_DEC && SL_TYPE_ID(type) == SL_TYPE_DECIMAL &&
               sl_type_width(type) == 8) { /* the common decimal(p <= 18): one tight loop */
        int64_t *out = (int64_t *)sl__col_values(tmp, c) + s;
        for (int64_t r = 0; r < v->n; r++)
            out[r] = (int64_t)v->d[r];
    } else {
        char *out = sl__col_values(tmp, c);
        size_t w = sl_type_width(type);
        for (int64_t r = 0; r < v->n; r++)
            store_value(out + (size_t)(s + r) * w, type, v, r);
    }
    if (!v->null)
        return 0;
    int64_t nulls = 0;
    size_t w = sl_type_width(type);
    for (int64_t r = 0; r < v->n; r++) {
        if (!v->null[r])
            continue;
        if (!*valid && !(*valid = sl_batch_column_validity(tmp, c)))
            return SL_ENOMEM;
        int64_t k = s + r;
        (*valid)[k >> 3] &= (uint8_t) ~(1u << (k & 7));
        if (w)
            memset((char *)sl__col_values(tmp, c) + (size_t)k * w, 0, w);
        nulls++;
    }
    return nulls;
}

/* Evaluates every computed item into tmp. */
static int compute(sl_task_t *t, const struct proj_data *d, struct proj_local *l,
                   sl_batch_t *in, sl_batch_t *tmp, int64_t n)
{
    for (int i = 0; i < d->n; i++) {
        const struct proj_item *it = &d->items[i];
        if (it->tmp_col < 0)
            continue;
        uint8_t *valid = NULL;
        int64_t nulls = 0, cap = 0;
        for (int64_t s = 0; s < n; s += SL__EXPR_VEC) {
            int64_t len = n - s < SL__EXPR_VEC ? n - s : SL__EXPR_VEC;
            struct sl__expr_vec v;
            char err[400];
            int rc = sl__expr_eval(it->e, in, s, len, &l->scratch[i], &v, err, sizeof err);
            if (rc < 0)
                return sl_task_fail(t, rc, "project: column %s: %s", it->name, err);
            int64_t k = store(tmp, it->tmp_col, sl__expr_type(it->e), s, &v, &valid, &cap);
            if (k < 0)
                return sl_task_fail(t, (int)k, "project: column %s: %s", it->name,
                                    k == SL_EOVERFLOW ? "more than 2 GiB of string bytes in a "
                                                        "batch" : "out of memory");
            nulls += k;
        }
        tmp->cols[it->tmp_col].null_count = nulls;
        if (cap && !sl_batch_column_chars(tmp, it->tmp_col, ((int32_t *)sl_batch_column_data(
                                                                 tmp, it->tmp_col))[n]))
            return sl_task_fail(t, SL_ENOMEM, "project: out of memory");
    }
    return SL_OK;
}

int sl__project_emit(sl_task_t *t, const struct proj_data *d, sl_batch_t *in, sl_batch_t *tmp)
{
    sl_batch_t *out = sl__batch_new(sl_op_output_schema(sl_task_op(t)), sl_batch_num_rows(in));
    if (!out) {
        sl_batch_unref(tmp);
        return sl_task_fail(t, SL_ENOMEM, "project: out of memory");
    }
    for (int i = 0; i < d->n; i++) {
        const struct proj_item *it = &d->items[i];
        if (it->tmp_col >= 0)
            sl__col_share(out, i, tmp, it->tmp_col);
        else
            sl__col_share(out, i, in, it->in_col);
    }
    sl_batch_unref(tmp);
    return sl_task_emit(t, out);
}

int sl__project_execute(sl_task_t *t)
{
    const struct proj_data *d = sl_op_data(sl_task_op(t));
    struct proj_local *l = sl_task_lstate(t);
    sl_batch_t *in = sl_task_input(t);
    int64_t n = sl_batch_num_rows(in);
    if (n == 0)
        return SL_OK;
    if (!l) /* the runtime recorded the failure */
        return SL_ENOMEM;
    sl_batch_t *tmp = NULL;
    if (d->n_exprs) {
        tmp = sl_task_new_batch(t, d->computed, n);
        if (!tmp)
            return SL_ENOMEM;
        int rc = compute(t, d, l, in, tmp, n);
        if (rc < 0) {
            sl_batch_unref(tmp);
            return rc;
        }
    }
    return sl__project_emit(t, d, in, tmp);
}

/* The CPU's figure on either device when the GPU project cannot take the items. */
double sl__project_cost(const sl_op_t *op, enum sl_device_kind kind, int64_t rows)
{
    const struct proj_data *d = sl_op_data(op);
    return sl__cost_linear(op, d && d->gpu_ok ? kind : SL_DEVICE_CPU, rows);
}

/* The CPU-only definition; CUDA builds register sl__project_cuda_def (expr_cuda.c). */
static const struct sl_impl proj_impls[] = {{.device = SL_DEVICE_CPU, .run = sl__project_execute}};
static const struct sl_phase proj_phase = {proj_impls, 1, sl__project_cost};
SL__PROJECT_DEF(sl__project_def, proj_phase);
