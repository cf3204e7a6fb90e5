/* Buffers, batches and tables: reference-counted, Arrow-layout columns. */
#include <string.h>

#include "internal.h"

/* ---------------- buffers ---------------- */

struct sl__buf *sl__buf_new(int64_t bytes)
{
    if (bytes < 0)
        return NULL;
    struct sl__buf *b = sl__malloc(sizeof *b);
    if (!b)
        return NULL;
    b->ptr = sl__malloc((size_t)bytes);
    if (!b->ptr) {
        sl__free(b, sizeof *b);
        return NULL;
    }
    atomic_init(&b->refs, 1);
    b->bytes = bytes;
    b->kind = SL__MEM_HOST;
    b->device = -1;
    b->release = NULL;
    b->owner = NULL;
    b->charged = NULL;
    b->registered = false;
    return b;
}

struct sl__buf *sl__buf_wrap(void *ptr, int64_t bytes, enum sl__mem_kind kind,
                             void (*release)(struct sl__buf *), void *owner)
{
    struct sl__buf *b = sl__malloc(sizeof *b);
    if (!b)
        return NULL;
    atomic_init(&b->refs, 1);
    b->ptr = ptr;
    b->bytes = bytes;
    b->kind = kind;
    b->device = -1;
    b->release = release;
    b->owner = owner;
    b->charged = NULL;
    b->registered = false;
    return b;
}

void sl__buf_ref(struct sl__buf *b)
{
    atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
}

void sl__buf_unref(struct sl__buf *b)
{
    if (!b)
        return;
    /* acq_rel: the last owner must see every write made through other references. */
    if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (b->charged)
        sl__engine_release_host(b->charged, b->bytes);
    if (b->registered)
        sl__host_unregister(b->ptr);
    if (b->release)
        b->release(b);
    else
        sl__free(b->ptr, (size_t)b->bytes);
    sl__free(b, sizeof *b);
}

/* ---------------- batches ---------------- */

sl_batch_t *sl__batch_new(const sl_schema_t *schema, int64_t n_rows)
{
    sl_batch_t *b = sl__calloc(1, sizeof *b);
    if (!b)
        return NULL;
    atomic_init(&b->refs, 1);
    b->n_rows = n_rows;
    b->n_cols = schema->n_fields;
    b->schema = sl__schema_copy(schema);
    if (!b->schema) {
        sl__free(b, sizeof *b);
        return NULL;
    }
    if (b->n_cols > 0) {
        b->cols = sl__calloc((size_t)b->n_cols, sizeof *b->cols);
        if (!b->cols) {
            sl__schema_free(b->schema);
            sl__free(b, sizeof *b);
            return NULL;
        }
    }
    for (int i = 0; i < b->n_cols; i++) {
        b->cols[i].type = schema->fields[i].type;
        b->cols[i].null_count = 0;
    }
    return b;
}

int sl__batch_alloc_columns(sl_batch_t *b)
{
    for (int i = 0; i < b->n_cols; i++) {
        if (b->cols[i].data)
            continue;
        b->cols[i].data = sl__buf_new(b->n_rows * (int64_t)sl_type_width(b->cols[i].type));
        if (!b->cols[i].data)
            return SL_ENOMEM;
    }
    return SL_OK;
}

sl_batch_t *sl__batch_slice(sl_batch_t *src, int64_t off, int64_t len)
{
    sl_batch_t *b = sl__batch_new(src->schema, len);
    if (!b)
        return NULL;
    for (int i = 0; i < b->n_cols; i++) {
        struct sl__col *d = &b->cols[i];
        const struct sl__col *s = &src->cols[i];
        *d = *s;
        d->offset = s->offset + off;
        d->null_count = s->validity ? -1 : 0;
        sl__buf_ref(d->data);
        if (d->validity)
            sl__buf_ref(d->validity);
    }
    return b;
}

int sl_batch_create(sl_batch_t **out, int n_cols, const char *const names[],
                    const enum sl_type types[], int64_t n_rows)
{
    *out = NULL;
    if (n_cols < 0 || n_rows < 0 || (n_cols > 0 && (!names || !types)))
        return sl__set_last_error(SL_EINVAL, "sl_batch_create: bad arguments");
    for (int i = 0; i < n_cols; i++) {
        if (!names[i] || sl_type_width(types[i]) == 0)
            return sl__set_last_error(SL_EINVAL, "sl_batch_create: column %d has no name or "
                                      "an invalid type", i);
    }
    sl_schema_t *s = sl__schema_new(n_cols);
    if (!s)
        return sl__set_last_error(SL_ENOMEM, "out of memory");
    for (int i = 0; i < n_cols; i++) {
        if (sl__schema_set(s, i, names[i], types[i]) != SL_OK) {
            sl__schema_free(s);
            return sl__set_last_error(SL_ENOMEM, "out of memory");
        }
    }
    sl_batch_t *b = sl__batch_new(s, n_rows);
    sl__schema_free(s);
    if (!b || sl__batch_alloc_columns(b) != SL_OK) {
        sl_batch_unref(b);
        return sl__set_last_error(SL_ENOMEM, "out of memory allocating a batch of %lld rows",
                                  (long long)n_rows);
    }
    *out = b;
    return SL_OK;
}

void sl_batch_ref(sl_batch_t *b)
{
    atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
}

void sl_batch_unref(sl_batch_t *b)
{
    if (!b || atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (int i = 0; i < b->n_cols; i++) {
        sl__buf_unref(b->cols[i].data);
        sl__buf_unref(b->cols[i].validity);
    }
    sl__free(b->cols, 0);
    sl__schema_free(b->schema);
    sl__free(b, sizeof *b);
}

int sl_batch_num_columns(const sl_batch_t *b)
{
    return b->n_cols;
}

int64_t sl_batch_num_rows(const sl_batch_t *b)
{
    return b->n_rows;
}

int sl_batch_column(const sl_batch_t *b, int i, struct sl_column *col)
{
    if (i < 0 || i >= b->n_cols)
        return sl__set_last_error(SL_EINVAL, "column index %d out of range (batch has %d)", i,
                                  b->n_cols);
    const struct sl__col *c = &b->cols[i];
    col->type = c->type;
    col->length = b->n_rows;
    col->offset = c->offset;
    col->null_count = c->validity ? c->null_count : 0;
    col->data = c->data ? c->data->ptr : NULL;
    col->validity = c->validity ? c->validity->ptr : NULL;
    col->name = b->schema->fields[i].name;
    return SL_OK;
}

int sl_batch_column_index(const sl_batch_t *b, const char *name)
{
    return sl_schema_find(b->schema, name);
}

void *sl_batch_column_data(sl_batch_t *b, int i)
{
    if (i < 0 || i >= b->n_cols || atomic_load(&b->refs) != 1 || !b->cols[i].data ||
        b->cols[i].data->kind != SL__MEM_HOST || atomic_load(&b->cols[i].data->refs) != 1)
        return NULL;
    return sl__col_values(b, i);
}

uint8_t *sl_batch_column_validity(sl_batch_t *b, int i)
{
    if (!sl_batch_column_data(b, i))
        return NULL;
    struct sl__col *c = &b->cols[i];
    if (!c->validity) {
        int64_t bytes = (c->offset + b->n_rows + 7) / 8;
        c->validity = sl__buf_new(bytes);
        if (!c->validity)
            return NULL;
        memset(c->validity->ptr, 0xff, (size_t)bytes);
        c->null_count = -1;
    }
    c->null_count = -1;
    return c->validity->ptr;
}

/* ---------------- tables ---------------- */

int sl_table_create(sl_table_t **out)
{
    sl_table_t *t = sl__calloc(1, sizeof *t);
    if (!t) {
        *out = NULL;
        return sl__set_last_error(SL_ENOMEM, "out of memory");
    }
    atomic_init(&t->refs, 1);
    *out = t;
    return SL_OK;
}

void sl_table_ref(sl_table_t *t)
{
    atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
}

void sl_table_unref(sl_table_t *t)
{
    if (!t || atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (int64_t i = 0; i < t->n_batches; i++)
        sl_batch_unref(t->batches[i]);
    sl__free(t->batches, 0);
    sl__schema_free(t->schema);
    sl__free(t, sizeof *t);
}

int sl_table_append(sl_table_t *t, sl_batch_t *b)
{
    if (!t || !b)
        return sl__set_last_error(SL_EINVAL, "sl_table_append: NULL argument");
    if (t->schema && !sl__schema_equal(t->schema, b->schema))
        return sl__set_last_error(SL_ETYPE, "sl_table_append: batch schema differs from the "
                                  "table's");
    if (!t->schema) {
        t->schema = sl__schema_copy(b->schema);
        if (!t->schema)
            return sl__set_last_error(SL_ENOMEM, "out of memory");
    }
    if (t->n_batches == t->cap) {
        int64_t cap = t->cap ? t->cap * 2 : 8;
        sl_batch_t **nb = sl__realloc(t->batches, (size_t)t->cap * sizeof *nb,
                                      (size_t)cap * sizeof *nb);
        if (!nb)
            return sl__set_last_error(SL_ENOMEM, "out of memory");
        t->batches = nb;
        t->cap = cap;
    }
    sl_batch_ref(b);
    t->batches[t->n_batches++] = b;
    t->n_rows += b->n_rows;
    return SL_OK;
}

static int pin_buf(struct sl__buf *b)
{
    if (!b || b->kind == SL__MEM_PINNED || b->kind == SL__MEM_DEVICE || b->bytes == 0)
        return SL_OK;
    int rc = sl__host_register(b->ptr, b->bytes);
    if (rc < 0)
        return rc;
    b->registered = true;
    b->kind = SL__MEM_PINNED;
    return SL_OK;
}

int sl_table_pin(sl_table_t *t)
{
    if (!t)
        return sl__set_last_error(SL_EINVAL, "sl_table_pin: NULL table");
    for (int64_t i = 0; i < t->n_batches; i++) {
        sl_batch_t *b = t->batches[i];
        for (int c = 0; c < b->n_cols; c++) {
            int rc = pin_buf(b->cols[c].data);
            if (rc == SL_OK)
                rc = pin_buf(b->cols[c].validity);
            if (rc < 0)
                return rc;
        }
    }
    return SL_OK;
}

int64_t sl_table_num_batches(const sl_table_t *t)
{
    return t->n_batches;
}

int64_t sl_table_num_rows(const sl_table_t *t)
{
    return t->n_rows;
}

sl_batch_t *sl_table_batch(const sl_table_t *t, int64_t i)
{
    return (i >= 0 && i < t->n_batches) ? t->batches[i] : NULL;
}
