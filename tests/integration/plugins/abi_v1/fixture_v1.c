/* A plugin written against operator ABI version 1, kept permanently: later sluice
 * versions must still load and run it (include/sluice/plugin.h, STYLE.md §7). It calls
 * sluice only through the raw host table, using only version-1 members, and its
 * definitions say abi_version 1 whatever the header's current version is.
 *
 * Operators (FIXTURE_NS defaults to "fixture"):
 *   <ns>.range  rows=N            source: int64 column x = 0..N-1, one task per morsel
 *   <ns>.add    k=1 column=x      stream: adds k to an int64 column, other columns copied
 *
 * Compile-time variants, each built as its own shared object by meson.build, give the
 * loader's failure cases: FIXTURE_ABI (the version it declares and stamps),
 * FIXTURE_NO_ENTRY, FIXTURE_ENTRY (another entry name), FIXTURE_NO_DECLARE and
 * FIXTURE_FAIL (the entry fails after registering one operator). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/plugin.h>

#ifndef FIXTURE_NS
#define FIXTURE_NS "fixture"
#endif
#ifndef FIXTURE_ABI
#define FIXTURE_ABI 1u
#endif
#ifndef FIXTURE_ENTRY
#define FIXTURE_ENTRY sl_plugin_entry
#endif

static const struct sl_host_api *host;

struct range_data {
    int64_t rows;
};

struct add_data {
    int64_t k;
    int col;
};

static int range_bind(sl_bind_t *b)
{
    int64_t rows;
    int rc = host->bind_option_int(b, "rows", &rows);
    if (rc < 0)
        return rc;
    if (rows < 0)
        return host->bind_fail(b, SL_EINVAL, "rows must be >= 0, got %lld", (long long)rows);
    struct range_data *d = malloc(sizeof *d);
    if (!d)
        return host->bind_fail(b, SL_ENOMEM, "out of memory");
    d->rows = rows;
    host->bind_set_data(b, d, free);
    host->bind_set_rows(b, rows);
    return host->bind_add_column(b, "x", SL_TYPE_INT64);
}

static int64_t range_tasks(sl_task_t *t)
{
    const struct range_data *d = host->op_data(host->task_op(t));
    int64_t m = host->task_morsel_rows(t);
    return (d->rows + m - 1) / m;
}

static int range_source(sl_task_t *t)
{
    const sl_op_t *op = host->task_op(t);
    const struct range_data *d = host->op_data(op);
    int64_t m = host->task_morsel_rows(t);
    int64_t first = host->task_index(t) * m;
    int64_t n = d->rows - first < m ? d->rows - first : m;
    sl_batch_t *b = host->task_new_batch(t, host->op_output_schema(op), n);
    if (!b)
        return SL_ENOMEM; /* the host recorded why */
    int64_t *x = host->batch_column_data(b, 0);
    for (int64_t i = 0; i < n; i++)
        x[i] = first + i;
    host->task_progress(t, n, n * 8);
    return host->task_emit(t, b);
}

static int add_bind(sl_bind_t *b)
{
    struct add_data d;
    const char *col;
    int rc;
    if ((rc = host->bind_option_int(b, "k", &d.k)) < 0 ||
        (rc = host->bind_option_str(b, "column", &col)) < 0)
        return rc;
    const sl_schema_t *in = host->bind_input_schema(b, 0);
    d.col = host->schema_find(in, col);
    if (d.col < 0)
        return host->bind_fail(b, SL_ENOTFOUND, "no column '%s' in its input", col);
    for (int i = 0; i < host->schema_num_fields(in); i++) {
        const char *name;
        enum sl_type type;
        host->schema_field(in, i, &name, &type);
        if (i == d.col && type != SL_TYPE_INT64)
            return host->bind_fail(b, SL_ETYPE, "column '%s' is %s, not int64", name,
                                   host->type_name(type));
        if ((rc = host->bind_add_column(b, name, type)) < 0)
            return rc;
    }
    struct add_data *p = malloc(sizeof *p);
    if (!p)
        return host->bind_fail(b, SL_ENOMEM, "out of memory");
    *p = d;
    host->bind_set_data(b, p, free);
    host->bind_set_rows(b, host->bind_input_rows(b, 0));
    return SL_OK;
}

static int add_execute(sl_task_t *t)
{
    const sl_op_t *op = host->task_op(t);
    const struct add_data *d = host->op_data(op);
    sl_batch_t *in = host->task_input(t);
    int64_t n = host->batch_num_rows(in);
    sl_batch_t *out = host->task_new_batch(t, host->op_output_schema(op), n);
    if (!out)
        return SL_ENOMEM;
    for (int c = 0; c < host->batch_num_columns(in); c++) {
        struct sl_column col;
        host->batch_column(in, c, &col);
        size_t w = host->type_width(col.type);
        char *dst = host->batch_column_data(out, c);
        memcpy(dst, (const char *)col.data + col.offset * (int64_t)w, (size_t)n * w);
        if (c == d->col)
            for (int64_t i = 0; i < n; i++)
                ((int64_t *)dst)[i] += d->k;
        if (col.validity && n > 0) {
            uint8_t *v = host->batch_column_validity(out, c);
            if (!v) {
                host->batch_unref(out);
                return host->task_fail(t, SL_ENOMEM, "out of memory");
            }
            for (int64_t i = 0; i < n; i++)
                if (!(col.validity[(col.offset + i) >> 3] >> ((col.offset + i) & 7) & 1))
                    v[i >> 3] &= (uint8_t)~(1u << (i & 7));
        }
    }
    return host->task_emit(t, out);
}

static const struct sl_option_def range_options[] = {
    {"rows", SL_OPT_INT, NULL, "number of rows"},
};
static const struct sl_option_def add_options[] = {
    {"k", SL_OPT_INT, "1", "value to add"},
    {"column", SL_OPT_STRING, "x", "int64 column to add it to"},
};
static const struct sl_impl range_impls[] = {{.device = SL_DEVICE_CPU, .run = range_source}};
static const struct sl_phase range_phase = {range_impls, 1, NULL};
static const struct sl_impl add_impls[] = {{.device = SL_DEVICE_CPU, .run = add_execute}};
static const struct sl_phase add_phase = {add_impls, 1, NULL};

static const struct sl_op_def range_def = {
    .abi_version = FIXTURE_ABI,
    .flags = SL_OP_SOURCE,
    .name = FIXTURE_NS ".range",
    .doc = "ABI v1 fixture: int64 x = 0..rows-1",
    .min_inputs = 0,
    .max_inputs = 0,
    .options = range_options,
    .n_options = 1,
    .bind = range_bind,
    .source_tasks = range_tasks,
    .source = &range_phase,
};

static const struct sl_op_def add_def = {
    .abi_version = FIXTURE_ABI,
    .flags = SL_OP_STREAM,
    .name = FIXTURE_NS ".add",
    .doc = "ABI v1 fixture: adds k to an int64 column",
    .min_inputs = 1,
    .max_inputs = 1,
    .options = add_options,
    .n_options = 2,
    .bind = add_bind,
    .execute = &add_phase,
};

#ifndef FIXTURE_NO_ENTRY
int FIXTURE_ENTRY(const struct sl_host_api *h, sl_registry_t *reg);
int FIXTURE_ENTRY(const struct sl_host_api *h, sl_registry_t *reg)
{
    /* A version-1 plugin needs a host table of at least version 1. */
    if (!h || h->abi_version < 1)
        return SL_EABI;
    int rc;
#ifndef FIXTURE_NO_DECLARE
    if ((rc = h->declare_abi(reg, FIXTURE_ABI)) < 0)
        return rc;
#endif
    host = h;
    if ((rc = h->registry_add(reg, &range_def)) < 0)
        return rc;
#ifdef FIXTURE_FAIL
    return h->strerror(SL_EINVAL) ? SL_EINVAL : SL_EINTERNAL;
#endif
    return h->registry_add(reg, &add_def);
}
#else
/* A shared object with functions, but no entry point: not a plugin. */
int fixture_not_an_entry(void);
int fixture_not_an_entry(void)
{
    return (int)(range_def.n_options + add_def.n_options);
}
#endif
