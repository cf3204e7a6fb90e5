/* Plans: building the DAG of operator nodes and binding each node as it is added. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"

int sl_plan_create(sl_plan_t **out)
{
    SL__CHECK_ARGS(out);
    sl_plan_t *p = sl__calloc(1, sizeof *p);
    *out = p;
    if (!p)
        return sl__set_last_error(SL_ENOMEM, "out of memory creating a plan");
    atomic_init(&p->refs, 1);
    return SL_OK;
}

static void op_free(struct sl_op *op)
{
    if (!op)
        return;
    if (op->data_free)
        op->data_free(op->data);
    sl__opts_free(&op->opts);
    sl__free(op->inputs, 0);
    sl__schema_free(op->schema);
    sl__free(op, sizeof *op);
}

void sl_plan_destroy(sl_plan_t *p)
{
    sl__plan_unref(p);
}

void sl__plan_ref(struct sl_plan *p)
{
    atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
}

/* The last reference frees the plan; acq_rel: the freeing thread sees every query's
 * last use of it. */
void sl__plan_unref(struct sl_plan *p)
{
    if (!p || atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (int i = 0; i < p->n_nodes; i++)
        op_free(p->nodes[i]);
    sl__free(p->nodes, 0);
    for (int i = 0; i < p->n_outputs; i++)
        sl__free_str(p->outputs[i].name);
    sl__free(p->outputs, 0);
    for (int i = 0; i < p->n_tables; i++) {
        sl__free_str(p->tables[i].name);
        sl_table_unref(p->tables[i].table);
    }
    sl__free(p->tables, 0);
    sl__opts_free(&p->settings);
    sl__free(p, sizeof *p);
}

int sl_plan_register_table(sl_plan_t *p, const char *name, sl_table_t *table)
{
    if (!p || !name || !*name || !table)
        return sl__set_last_error(SL_EINVAL, "sl_plan_register_table: needs a plan, a name "
                                  "and a table");
    if (atomic_load(&p->frozen))
        return sl__errslot_set(&p->err, SL_ESTATE, "the plan is frozen");
    for (int i = 0; i < p->n_tables; i++) {
        if (strcmp(p->tables[i].name, name) == 0)
            return sl__errslot_set(&p->err, SL_EEXIST, "a table named '%s' is already "
                                   "registered", name);
    }
    if (p->n_tables == p->cap_tables) {
        int cap = p->cap_tables ? 2 * p->cap_tables : 8;
        struct sl__named_table *nt = sl__realloc(p->tables, (size_t)p->cap_tables * sizeof *nt,
                                                 (size_t)cap * sizeof *nt);
        if (!nt)
            return sl__errslot_set(&p->err, SL_ENOMEM, "out of memory");
        p->tables = nt;
        p->cap_tables = cap;
    }
    char *n = sl__strdup(name);
    if (!n)
        return sl__errslot_set(&p->err, SL_ENOMEM, "out of memory");
    sl_table_ref(table);
    p->tables[p->n_tables++] = (struct sl__named_table){n, table};
    return SL_OK;
}

sl_table_t *sl__bind_named_table(sl_bind_t *b, const char *name); /* operators.h */
sl_table_t *sl__bind_named_table(sl_bind_t *b, const char *name)
{
    for (int i = 0; b->plan && name && i < b->plan->n_tables; i++) {
        if (strcmp(b->plan->tables[i].name, name) == 0)
            return b->plan->tables[i].table;
    }
    return NULL;
}

const char *sl_plan_errmsg(const sl_plan_t *p)
{
    return p ? p->err.msg : "";
}

static int check_options(sl_plan_t *p, struct sl_op *op)
{
    const struct sl_op_def *d = op->def;
    for (int i = 0; i < op->opts.n; i++) {
        const char *k = op->opts.items[i].key;
        unsigned j;
        for (j = 0; j < d->n_options; j++) {
            if (strcmp(d->options[j].name, k) == 0)
                break;
        }
        if (j == d->n_options) {
            char known[256] = "";
            size_t len = 0;
            for (unsigned m = 0; m < d->n_options && len < sizeof known - 40; m++)
                len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", m ? ", " : "",
                                        d->options[m].name);
            return sl__errslot_set(&p->err, SL_EINVAL,
                                   "%s: unknown option '%s' (known options: %s)", d->name, k,
                                   d->n_options ? known : "none");
        }
    }
    for (unsigned j = 0; j < d->n_options; j++) {
        if (!d->options[j].default_value && !sl__opts_get(&op->opts, d->options[j].name))
            return sl__errslot_set(&p->err, SL_EINVAL, "%s: option '%s' is required (%s)",
                                   d->name, d->options[j].name,
                                   d->options[j].doc ? d->options[j].doc : "no description");
    }
    return SL_OK;
}

int sl__op_bind(struct sl_plan *plan, struct sl_op *op)
{
    struct sl_bind b = {.op = op, .plan = plan, .err = &plan->err};
    op->schema = sl__schema_new(0);
    if (!op->schema)
        return sl__errslot_set(&plan->err, SL_ENOMEM, "out of memory");
    op->rows_estimate = -1;
    op->mg_judge = NULL;
    int rc = op->def->bind(&b);
    if (rc < 0 && !b.failed)
        sl__errslot_set(&plan->err, rc, "%s: bind failed (%s)", op->def->name, sl_strerror(rc));
    return rc < 0 ? rc : SL_OK;
}

static int add_node(sl_plan_t *p, const struct sl_op_def *def, const int inputs[],
                    int n_inputs, const char *options, void *data, int *node_id)
{
    if (p->n_nodes == p->cap_nodes) {
        int cap = p->cap_nodes ? p->cap_nodes * 2 : 16;
        struct sl_op **nv = sl__realloc(p->nodes, (size_t)p->cap_nodes * sizeof *nv,
                                        (size_t)cap * sizeof *nv);
        if (!nv)
            return sl__errslot_set(&p->err, SL_ENOMEM, "out of memory");
        p->nodes = nv;
        p->cap_nodes = cap;
    }
    struct sl_op *op = sl__calloc(1, sizeof *op);
    if (!op)
        return sl__errslot_set(&p->err, SL_ENOMEM, "out of memory");
    op->id = p->n_nodes;
    op->def = def;
    op->plan = p;
    op->placement = SL_PLACE_AUTO;
    op->data = data;
    char msg[256];
    int rc = sl__opts_parse(options, &op->opts, msg, sizeof msg);
    if (rc != SL_OK) {
        op_free(op);
        return sl__errslot_set(&p->err, rc, "%s: %s", def->name, msg);
    }
    if (n_inputs > 0) {
        op->inputs = sl__malloc((size_t)n_inputs * sizeof *op->inputs);
        if (!op->inputs) {
            op_free(op);
            return sl__errslot_set(&p->err, SL_ENOMEM, "out of memory");
        }
        memcpy(op->inputs, inputs, (size_t)n_inputs * sizeof *inputs);
    }
    op->n_inputs = n_inputs;
    rc = check_options(p, op);
    if (rc == SL_OK)
        rc = sl__op_bind(p, op);
    if (rc != SL_OK) {
        if (data == op->data)
            op->data = NULL; /* caller keeps ownership of data it passed on failure */
        op_free(op);
        return rc;
    }
    p->nodes[p->n_nodes++] = op;
    if (node_id)
        *node_id = op->id;
    return SL_OK;
}

static int check_add(sl_plan_t *p, const struct sl_op_def *def, const char *name,
                     const int inputs[], int n_inputs)
{
    if (atomic_load(&p->frozen))
        return sl__errslot_set(&p->err, SL_ESTATE, "the plan is frozen: a query was created "
                               "from it; build a new plan to change it");
    if (!def)
        return sl__errslot_set(&p->err, SL_ENOTFOUND, "no operator named '%s'",
                               name ? name : "(null)");
    if (n_inputs < def->min_inputs || n_inputs > def->max_inputs)
        return sl__errslot_set(&p->err, SL_EINVAL, "%s takes %d to %d inputs, got %d",
                               def->name, def->min_inputs, def->max_inputs, n_inputs);
    if (n_inputs > 0 && !inputs)
        return sl__errslot_set(&p->err, SL_EINVAL, "%s: inputs is NULL", def->name);
    for (int i = 0; i < n_inputs; i++) {
        if (inputs[i] < 0 || inputs[i] >= p->n_nodes)
            return sl__errslot_set(&p->err, SL_EINVAL, "%s: input %d refers to node %d, which "
                                   "does not exist", def->name, i, inputs[i]);
    }
    return SL_OK;
}

int sl_plan_add(sl_plan_t *p, const char *op_name, const int inputs[], int n_inputs,
                const char *options, int *node_id)
{
    if (!p)
        return sl__set_last_error(SL_EINVAL, "sl_plan_add: plan is NULL");
    const struct sl_op_def *def = sl_registry_find(sl_registry_global(), op_name);
    int rc = check_add(p, def, op_name, inputs, n_inputs);
    if (rc != SL_OK)
        return rc;
    return add_node(p, def, inputs, n_inputs, options, NULL, node_id);
}

int sl_plan_add_table(sl_plan_t *p, sl_table_t *table, int *node_id)
{
    if (!p || !table)
        return sl__set_last_error(SL_EINVAL, "sl_plan_add_table: NULL argument");
    const struct sl_op_def *def = sl_registry_find(sl_registry_global(), "scan.table");
    int rc = check_add(p, def, "scan.table", NULL, 0);
    if (rc != SL_OK)
        return rc;
    sl_table_ref(table);
    rc = add_node(p, def, NULL, 0, NULL, table, node_id);
    if (rc != SL_OK)
        sl_table_unref(table);
    return rc;
}

/* Adds output `name` of node `node_id`; a node may be several outputs and also feed other
 * nodes (its rows are then computed once and shared: runtime/share.c). */
static int add_output(sl_plan_t *p, int node_id, const char *name, bool device)
{
    if (!p || !name || !*name)
        return sl__set_last_error(SL_EINVAL, "sl_plan_output: needs a plan and a name");
    if (atomic_load(&p->frozen))
        return sl__errslot_set(&p->err, SL_ESTATE, "the plan is frozen");
    if (node_id < 0 || node_id >= p->n_nodes)
        return sl__errslot_set(&p->err, SL_EINVAL, "output '%s': node %d does not exist", name,
                               node_id);
    for (int i = 0; i < p->n_outputs; i++) {
        if (strcmp(p->outputs[i].name, name) == 0)
            return sl__errslot_set(&p->err, SL_EEXIST, "output name '%s' is used twice", name);
    }
    if (p->n_outputs == p->cap_outputs) {
        int cap = p->cap_outputs ? p->cap_outputs * 2 : 4;
        struct sl__plan_output *nv =
            sl__realloc(p->outputs, (size_t)p->cap_outputs * sizeof *nv, (size_t)cap * sizeof *nv);
        if (!nv)
            return sl__errslot_set(&p->err, SL_ENOMEM, "out of memory");
        p->outputs = nv;
        p->cap_outputs = cap;
    }
    char *copy = sl__strdup(name);
    if (!copy)
        return sl__errslot_set(&p->err, SL_ENOMEM, "out of memory");
    p->outputs[p->n_outputs++] = (struct sl__plan_output){node_id, copy, device};
    struct sl_op *op = p->nodes[node_id];
    if (!op->output_name)
        op->output_name = copy;
    return SL_OK;
}

int sl_plan_output(sl_plan_t *p, int node_id, const char *name)
{
    return add_output(p, node_id, name, false);
}

int sl_plan_output_device(sl_plan_t *p, int node_id, const char *name)
{
    return add_output(p, node_id, name, true);
}

int sl_plan_num_outputs(const sl_plan_t *p)
{
    return p ? p->n_outputs : 0;
}

const char *sl_plan_output_at(const sl_plan_t *p, int i, int *node_id)
{
    if (!p || i < 0 || i >= p->n_outputs)
        return NULL;
    if (node_id)
        *node_id = p->outputs[i].node;
    return p->outputs[i].name;
}

int sl_plan_place(sl_plan_t *p, int node_id, enum sl_placement where)
{
    if (!p || node_id < 0 || node_id >= p->n_nodes || where < SL_PLACE_AUTO || where > SL_PLACE_GPU)
        return sl__set_last_error(SL_EINVAL, "sl_plan_place: bad node or placement");
    if (atomic_load(&p->frozen))
        return sl__errslot_set(&p->err, SL_ESTATE, "the plan is frozen");
    p->nodes[node_id]->placement = where;
    return SL_OK;
}

const char *sl_plan_output_name(const sl_plan_t *p, int node_id)
{
    if (!p || node_id < 0 || node_id >= p->n_nodes)
        return NULL;
    return p->nodes[node_id]->output_name;
}

const char *sl_plan_node_op(const sl_plan_t *p, int node_id)
{
    if (!p || node_id < 0 || node_id >= p->n_nodes)
        return NULL;
    return p->nodes[node_id]->def->name;
}

const char *sl_plan_node_name(const sl_plan_t *p, int node_id)
{
    if (!p || node_id < 0 || node_id >= p->n_nodes || !p->nodes[node_id]->name[0])
        return NULL;
    return p->nodes[node_id]->name;
}

const char *sl_plan_node_option(const sl_plan_t *p, int node_id, const char *key)
{
    if (!p || !key || node_id < 0 || node_id >= p->n_nodes)
        return NULL;
    const struct sl_op *op = p->nodes[node_id];
    for (unsigned i = 0; i < op->def->n_options; i++) {
        if (strcmp(op->def->options[i].name, key) == 0) {
            const char *given = sl__opts_get(&op->opts, key);
            return given ? given : op->def->options[i].default_value;
        }
    }
    return NULL;
}

int sl_plan_num_nodes(const sl_plan_t *p)
{
    return p ? p->n_nodes : 0;
}

const sl_schema_t *sl_plan_node_schema(const sl_plan_t *p, int node_id)
{
    if (!p || node_id < 0 || node_id >= p->n_nodes)
        return NULL;
    return p->nodes[node_id]->schema;
}

/* ---------------- bind API ---------------- */

int sl_bind_num_inputs(const sl_bind_t *b)
{
    if (!b)
        return 0;
    return b->op->n_inputs;
}

const sl_schema_t *sl_bind_input_schema(const sl_bind_t *b, int port)
{
    if (!b)
        return NULL;
    if (port < 0 || port >= b->op->n_inputs)
        return NULL;
    return b->plan->nodes[b->op->inputs[port]]->schema;
}

int64_t sl_bind_input_rows(const sl_bind_t *b, int port)
{
    if (!b)
        return -1;
    if (port < 0 || port >= b->op->n_inputs)
        return -1;
    return b->plan->nodes[b->op->inputs[port]]->rows_estimate;
}

int sl_bind_fail(sl_bind_t *b, int code, const char *fmt, ...)
{
    if (!b)
        return sl__set_last_error(code < 0 ? code : SL_EINVAL, "sl_bind_fail: NULL bind");
    char msg[SL__MSG_MAX - 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    b->failed = 1;
    return sl__errslot_set(b->err, code, "%s: %s", b->op->def->name, msg);
}

static const struct sl_option_def *find_opt_def(const sl_bind_t *b, const char *name)
{
    for (unsigned i = 0; i < b->op->def->n_options; i++) {
        if (strcmp(b->op->def->options[i].name, name) == 0)
            return &b->op->def->options[i];
    }
    return NULL;
}

static int opt_text(sl_bind_t *b, const char *name, const char **out)
{
    const struct sl_option_def *d = find_opt_def(b, name);
    if (!d)
        return sl_bind_fail(b, SL_EINTERNAL, "asks for option '%s', which it does not declare",
                            name);
    const char *v = sl__opts_get(&b->op->opts, name);
    if (!v)
        v = d->default_value;
    if (!v)
        return sl_bind_fail(b, SL_ENOTFOUND, "option '%s' is required", name);
    *out = v;
    return SL_OK;
}

int sl_bind_option_given(const sl_bind_t *b, const char *name)
{
    if (!b || !name)
        return 0;
    return sl__opts_get(&b->op->opts, name) != NULL;
}

int sl__parse_int(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    const char *caret = strchr(s, '^');
    if (caret) {
        long long base = strtoll(s, &end, 10);
        if (end != caret || end == s)
            return -1;
        if (errno)
            return -2;
        long long e = strtoll(caret + 1, &end, 10);
        if (*end || end == caret + 1 || e < 0 || base < 0)
            return -1;
        long double v = powl((long double)base, (long double)e);
        if (errno || v > (long double)INT64_MAX)
            return -2;
        *out = (int64_t)v;
        return 0;
    }
    long long v = strtoll(s, &end, 10);
    if (end == s)
        return -1;
    bool range = errno == ERANGE;
    int64_t mul = 1;
    if (*end == 'k' || *end == 'K')
        mul = 1000, end++;
    else if (*end == 'M')
        mul = 1000000, end++;
    else if (*end == 'G')
        mul = 1000000000, end++;
    if (mul > 1 && *end == 'i')
        mul = mul == 1000 ? 1024 : mul == 1000000 ? 1 << 20 : 1 << 30, end++;
    if (*end)
        return -1;
    if (range || v > INT64_MAX / mul || v < INT64_MIN / mul)
        return -2;
    *out = (int64_t)v * mul;
    return 0;
}

int sl_bind_option_int(sl_bind_t *b, const char *name, int64_t *out)
{
    SL__CHECK_ARGS(b && name && out);
    const char *v;
    int rc = opt_text(b, name, &v);
    if (rc != SL_OK)
        return rc;
    int bad = sl__parse_int(v, out);
    if (bad == -2)
        return sl_bind_fail(b, SL_EINVAL, "option %s=%s is out of range (at most 2^63-1)",
                            name, v);
    if (bad != 0)
        return sl_bind_fail(b, SL_EINVAL, "option %s=%s is not an integer", name, v);
    return SL_OK;
}

int sl_bind_option_float(sl_bind_t *b, const char *name, double *out)
{
    SL__CHECK_ARGS(b && name && out);
    const char *v;
    int rc = opt_text(b, name, &v);
    if (rc != SL_OK)
        return rc;
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || *end || errno || !isfinite(d))
        return sl_bind_fail(b, SL_EINVAL, "option %s=%s is not a number", name, v);
    *out = d;
    return SL_OK;
}

int sl_bind_option_str(sl_bind_t *b, const char *name, const char **out)
{
    SL__CHECK_ARGS(b && name && out);
    return opt_text(b, name, out);
}

int sl_bind_option_bool(sl_bind_t *b, const char *name, int *out)
{
    SL__CHECK_ARGS(b && name && out);
    const char *v;
    int rc = opt_text(b, name, &v);
    if (rc != SL_OK)
        return rc;
    if (!strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "yes") || !strcmp(v, "on"))
        *out = 1;
    else if (!strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "no") || !strcmp(v, "off"))
        *out = 0;
    else
        return sl_bind_fail(b, SL_EINVAL, "option %s=%s is not a boolean (true/false)", name, v);
    return SL_OK;
}

int sl_bind_add_column(sl_bind_t *b, const char *name, enum sl_type type)
{
    SL__CHECK_ARGS(b && name);
    if (!name || !sl__type_valid(type)) /* not the width: strings have none */
        return sl_bind_fail(b, SL_EINVAL, "output column needs a name and a valid type");
    if (sl_schema_find(b->op->schema, name) >= 0)
        return sl_bind_fail(b, SL_EINVAL, "output column '%s' appears twice", name);
    sl_schema_t *s = b->op->schema;
    struct sl__field *nf = sl__realloc(s->fields, (size_t)s->n_fields * sizeof *nf,
                                       (size_t)(s->n_fields + 1) * sizeof *nf);
    if (!nf)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    s->fields = nf;
    s->fields[s->n_fields].name = NULL;
    s->n_fields++;
    if (sl__schema_set(s, s->n_fields - 1, name, type) != SL_OK) {
        s->n_fields--;
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    }
    return SL_OK;
}

void sl_bind_set_data(sl_bind_t *b, void *data, void (*free_fn)(void *))
{
    if (!b)
        return;
    b->op->data = data;
    b->op->data_free = free_fn;
}

void sl__bind_mg_judge(sl_bind_t *b, sl__mg_judge_fn judge)
{
    if (b)
        b->op->mg_judge = judge;
}

void sl_bind_set_rows(sl_bind_t *b, int64_t rows)
{
    if (!b)
        return;
    b->op->rows_estimate = rows;
}

sl_op_t *sl__bind_op(sl_bind_t *b);
sl_op_t *sl__bind_op(sl_bind_t *b)
{
    return b->op;
}

/* ---------------- node accessors ---------------- */

const char *sl_op_name(const sl_op_t *op)
{
    if (!op)
        return NULL;
    return op->def->name;
}

void *sl_op_data(const sl_op_t *op)
{
    if (!op)
        return NULL;
    return op->data;
}

int sl_op_num_inputs(const sl_op_t *op)
{
    if (!op)
        return 0;
    return op->n_inputs;
}

const sl_schema_t *sl_op_input_schema(const sl_op_t *op, int port)
{
    if (!op)
        return NULL;
    if (port < 0 || port >= op->n_inputs)
        return NULL;
    return op->plan->nodes[op->inputs[port]]->schema;
}

const sl_schema_t *sl_op_output_schema(const sl_op_t *op)
{
    if (!op)
        return NULL;
    return op->schema;
}
