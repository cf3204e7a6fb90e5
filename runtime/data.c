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
    b->gpu_held = 0;
    b->narrow = NULL;
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
    b->narrow = NULL;
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
        sl__host_budget_release(b->charged, b->bytes);
    if (b->registered)
        sl__host_unregister(b->ptr);
    sl__narrow_free(b->narrow);
    if (b->release)
        b->release(b);
    else
        sl__free(b->ptr, (size_t)b->bytes);
    sl__free(b, sizeof *b);
}

/* ---------------- dictionaries ---------------- */

struct sl__dict *sl__dict_new(int64_t n, const int32_t *offsets, const char *chars)
{
    if (n < 0 || n >= INT32_MAX || !offsets)
        return NULL;
    struct sl__dict *d = sl__calloc(1, sizeof *d);
    if (!d)
        return NULL;
    atomic_init(&d->refs, 1);
    d->n = n;
    d->offsets = sl__buf_new((n + 1) * 4);
    int64_t bytes = offsets[n] - offsets[0];
    if (bytes > 0)
        d->chars = sl__buf_new(bytes);
    if (!d->offsets || (bytes > 0 && !d->chars)) {
        sl__dict_unref(d);
        return NULL;
    }
    int32_t *o = d->offsets->ptr;
    for (int64_t i = 0; i <= n; i++)
        o[i] = offsets[i] - offsets[0];
    if (bytes > 0)
        memcpy(d->chars->ptr, chars + offsets[0], (size_t)bytes);
    return d;
}

void sl__dict_ref(struct sl__dict *d)
{
    atomic_fetch_add_explicit(&d->refs, 1, memory_order_relaxed);
}

void sl__dict_unref(struct sl__dict *d)
{
    if (!d || atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) != 1)
        return;
    sl__buf_unref(d->offsets);
    sl__buf_unref(d->chars);
    sl__free(d, sizeof *d);
}

bool sl__dict_same(const struct sl__dict *a, const struct sl__dict *b)
{
    if (a == b)
        return true;
    if (!a || !b || a->n != b->n)
        return false;
    const int32_t *oa = a->offsets->ptr, *ob = b->offsets->ptr;
    if (memcmp(oa, ob, (size_t)(a->n + 1) * sizeof *oa) != 0)
        return false;
    return oa[a->n] == 0 || memcmp(a->chars->ptr, b->chars->ptr, (size_t)oa[a->n]) == 0;
}

/* An empty dictionary: a DICT column made by sl_batch_create starts with one. */
static struct sl__dict *dict_empty(void)
{
    static const int32_t zero = 0;
    return sl__dict_new(0, &zero, "");
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
    /* 16 bytes is the widest value: more rows than this cannot be addressed. */
    if (b->n_rows > (INT64_MAX >> 5))
        return SL_ENOMEM;
    for (int i = 0; i < b->n_cols; i++) {
        struct sl__col *c = &b->cols[i];
        if (c->data)
            continue;
        c->data = sl__buf_new(sl__col_data_bytes(c->type, b->n_rows));
        if (!c->data)
            return SL_ENOMEM;
        if (c->type == SL_TYPE_UTF8 || c->type == SL_TYPE_LARGE_UTF8)
            memset(c->data->ptr, 0, (size_t)c->data->bytes);
        if (c->type == SL_TYPE_DICT && !c->dict && !(c->dict = dict_empty()))
            return SL_ENOMEM;
    }
    return SL_OK;
}

void sl__batch_share_dicts(sl_batch_t *dst, const sl_batch_t *src)
{
    for (int i = 0; i < dst->n_cols && i < src->n_cols; i++)
        sl__batch_share_dict(dst, i, src->cols[i].dict);
}

void sl__batch_share_dict(sl_batch_t *b, int col, struct sl__dict *dict)
{
    if (!dict || b->cols[col].dict == dict)
        return;
    sl__dict_ref(dict);
    sl__dict_unref(b->cols[col].dict);
    b->cols[col].dict = dict;
}

void sl__col_share(sl_batch_t *dst, int dc, const sl_batch_t *src, int sc)
{
    struct sl__col *d = &dst->cols[dc];
    *d = src->cols[sc];
    sl__buf_ref(d->data);
    if (d->validity)
        sl__buf_ref(d->validity);
    if (d->chars)
        sl__buf_ref(d->chars);
    if (d->dict)
        sl__dict_ref(d->dict);
}

sl_batch_t *sl__batch_slice(sl_batch_t *src, int64_t off, int64_t len)
{
    sl_batch_t *b = sl__batch_new(src->schema, len);
    if (!b)
        return NULL;
    for (int i = 0; i < b->n_cols; i++) {
        struct sl__col *d = &b->cols[i];
        sl__col_share(b, i, src, i);
        d->offset += off;
        d->null_count = d->validity ? -1 : 0;
    }
    return b;
}

int64_t sl__morsels_cut(struct sl__morsels *m, const sl_table_t *t, int64_t morsel)
{
    m->morsel = morsel;
    m->first_task = sl__calloc((size_t)(t->n_batches + 1), sizeof *m->first_task);
    if (!m->first_task)
        return SL_ENOMEM;
    int64_t n = 0;
    for (int64_t i = 0; i < t->n_batches; i++) {
        m->first_task[i] = n;
        n += t->batches[i]->n_rows / morsel + (t->batches[i]->n_rows % morsel != 0);
    }
    m->first_task[t->n_batches] = n;
    return n;
}

sl_batch_t *sl__morsels_slice(const struct sl__morsels *m, const sl_table_t *t, int64_t task)
{
    int64_t lo = 0, hi = t->n_batches - 1;
    while (lo < hi) { /* the batch holding this task: binary search over first_task */
        int64_t mid = (lo + hi + 1) / 2;
        if (m->first_task[mid] <= task)
            lo = mid;
        else
            hi = mid - 1;
    }
    sl_batch_t *b = t->batches[lo];
    int64_t off = (task - m->first_task[lo]) * m->morsel;
    int64_t len = b->n_rows - off < m->morsel ? b->n_rows - off : m->morsel;
    return sl__batch_slice(b, off, len);
}

void sl__morsels_free(struct sl__morsels *m)
{
    sl__free(m->first_task, 0);
    m->first_task = NULL;
}

int sl_batch_create(sl_batch_t **out, int n_cols, const char *const names[],
                    const enum sl_type types[], int64_t n_rows)
{
    SL__CHECK_ARGS(out);
    *out = NULL;
    if (n_cols < 0 || n_rows < 0 || (n_cols > 0 && (!names || !types)))
        return sl__set_last_error(SL_EINVAL, "sl_batch_create: bad arguments");
    for (int i = 0; i < n_cols; i++) {
        if (!names[i] || !sl__type_valid(types[i]))
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
    if (!b)
        return;
    atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
}

void sl_batch_unref(sl_batch_t *b)
{
    if (!b || atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (int i = 0; i < b->n_cols; i++) {
        sl__buf_unref(b->cols[i].data);
        sl__buf_unref(b->cols[i].validity);
        sl__buf_unref(b->cols[i].chars);
        sl__dict_unref(b->cols[i].dict);
    }
    sl__free(b->cols, 0);
    sl__schema_free(b->schema);
    sl__free(b, sizeof *b);
}

int sl_batch_num_columns(const sl_batch_t *b)
{
    if (!b)
        return 0;
    return b->n_cols;
}

int64_t sl_batch_num_rows(const sl_batch_t *b)
{
    if (!b)
        return 0;
    return b->n_rows;
}

int sl_batch_column(const sl_batch_t *b, int i, struct sl_column *col)
{
    SL__CHECK_ARGS(b && col);
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

int sl_batch_column_strings(const sl_batch_t *b, int i, struct sl_strings *out)
{
    if (!b || !out || i < 0 || i >= b->n_cols)
        return sl__set_last_error(SL_EINVAL, "sl_batch_column_strings: bad arguments");
    const struct sl__col *c = &b->cols[i];
    out->chars = NULL;
    out->dict_length = 0;
    out->dict_offsets = NULL;
    out->dict_chars = NULL;
    if (c->type == SL_TYPE_UTF8 || c->type == SL_TYPE_LARGE_UTF8)
        out->chars = c->chars ? c->chars->ptr : "";
    if (c->type == SL_TYPE_DICT && c->dict) {
        out->dict_length = c->dict->n;
        out->dict_offsets = c->dict->offsets->ptr;
        out->dict_chars = c->dict->chars ? c->dict->chars->ptr : "";
    }
    return SL_OK;
}

int sl_batch_column_index(const sl_batch_t *b, const char *name)
{
    SL__CHECK_ARGS(b && name);
    return sl_schema_find(b->schema, name);
}

void *sl_batch_column_data(sl_batch_t *b, int i)
{
    if (!b)
        return NULL;
    if (i < 0 || i >= b->n_cols || atomic_load(&b->refs) != 1 || !b->cols[i].data ||
        b->cols[i].data->kind != SL__MEM_HOST || atomic_load(&b->cols[i].data->refs) != 1)
        return NULL;
    return sl__col_values(b, i);
}

char *sl_batch_column_chars(sl_batch_t *b, int i, int64_t bytes)
{
    if (!b)
        return NULL;
    if (bytes < 0 || !sl_batch_column_data(b, i))
        return NULL;
    struct sl__col *c = &b->cols[i];
    if (c->type != SL_TYPE_UTF8 && c->type != SL_TYPE_LARGE_UTF8)
        return NULL;
    if (c->type == SL_TYPE_UTF8 && bytes > INT32_MAX) {
        sl__set_last_error(SL_EINVAL, "a utf8 column holds at most 2^31-1 bytes (use "
                           "large_utf8)");
        return NULL;
    }
    if (c->chars && c->chars->bytes == bytes)
        return c->chars->ptr;
    struct sl__buf *n = sl__buf_new(bytes ? bytes : 1);
    if (!n)
        return NULL;
    if (c->chars) {
        int64_t keep = c->chars->bytes < bytes ? c->chars->bytes : bytes;
        memcpy(n->ptr, c->chars->ptr, (size_t)keep);
        sl__buf_unref(c->chars);
    }
    c->chars = n;
    return n->ptr;
}

int sl_batch_column_set_dictionary(sl_batch_t *b, int i, int64_t n, const int32_t *offsets,
                                   const char *chars)
{
    SL__CHECK_ARGS(b);
    if (!sl_batch_column_data(b, i) || b->cols[i].type != SL_TYPE_DICT || n < 0 || !offsets ||
        (!chars && offsets[n] != offsets[0]))
        return sl__set_last_error(SL_EINVAL, "sl_batch_column_set_dictionary: not an unshared "
                                  "dict column, or bad arguments");
    for (int64_t k = 0; k < n; k++) {
        if (offsets[k + 1] < offsets[k])
            return sl__set_last_error(SL_EINVAL, "sl_batch_column_set_dictionary: offsets "
                                      "decrease at entry %lld", (long long)k);
    }
    struct sl__dict *d = sl__dict_new(n, offsets, chars ? chars : "");
    if (!d)
        return sl__set_last_error(SL_ENOMEM, "out of memory for a dictionary of %lld strings",
                                  (long long)n);
    sl__dict_unref(b->cols[i].dict);
    b->cols[i].dict = d;
    return SL_OK;
}

int sl_batch_share_dictionary(sl_batch_t *b, int i, const sl_batch_t *from, int j)
{
    if (!from || j < 0 || j >= from->n_cols || from->cols[j].type != SL_TYPE_DICT ||
        !from->cols[j].dict || !sl_batch_column_data(b, i) || b->cols[i].type != SL_TYPE_DICT)
        return sl__set_last_error(SL_EINVAL, "sl_batch_share_dictionary: both columns must be "
                                  "dict columns, the target in an unshared batch");
    sl__dict_ref(from->cols[j].dict);
    sl__dict_unref(b->cols[i].dict);
    b->cols[i].dict = from->cols[j].dict;
    return SL_OK;
}

uint8_t *sl_batch_column_validity(sl_batch_t *b, int i)
{
    if (!b)
        return NULL;
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
    SL__CHECK_ARGS(out);
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
    if (!t)
        return;
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
    /* Loaders make batches of a CPU morsel (122,880 rows) and a source cuts at least one
     * morsel per batch: combined first, a GPU task moves millions of rows, not one
     * loader batch (TPC-H on pinned tables ran 488 tasks per scan of lineitem at SF 10). */
    int crc = sl__table_combine_runs(t, SL__PIN_SMALL_ROWS, SL__PIN_RUN_ROWS);
    if (crc < 0)
        return crc;
    for (int64_t i = 0; i < t->n_batches; i++) {
        sl_batch_t *b = t->batches[i];
        for (int c = 0; c < b->n_cols; c++) {
            int rc = pin_buf(b->cols[c].data);
            if (rc == SL_OK)
                rc = pin_buf(b->cols[c].validity);
            if (rc == SL_OK)
                rc = pin_buf(b->cols[c].chars);
            if (rc < 0)
                return rc;
        }
    }
    /* Narrow copies for GPU uploads (narrow.c), pinned like the values. */
    int rc = sl__table_narrow(t);
    for (int64_t i = 0; i < t->n_batches && rc == SL_OK; i++) {
        sl_batch_t *b = t->batches[i];
        for (int c = 0; c < b->n_cols && rc == SL_OK; c++)
            if (b->cols[c].data && b->cols[c].data->narrow)
                rc = pin_buf(b->cols[c].data->narrow->buf);
    }
    return rc;
}

int64_t sl_table_num_batches(const sl_table_t *t)
{
    if (!t)
        return 0;
    return t->n_batches;
}

int64_t sl_table_num_rows(const sl_table_t *t)
{
    if (!t)
        return 0;
    return t->n_rows;
}

sl_batch_t *sl_table_batch(const sl_table_t *t, int64_t i)
{
    if (!t)
        return NULL;
    return (i >= 0 && i < t->n_batches) ? t->batches[i] : NULL;
}

int64_t sl__batch_bytes(const sl_batch_t *b)
{
    int64_t total = 0;
    for (int i = 0; b && i < b->n_cols; i++) {
        const struct sl__col *c = &b->cols[i];
        total += sl__col_data_bytes(c->type, b->n_rows) + (c->validity ? (b->n_rows + 7) / 8 : 0);
        if (!c->chars || !c->data)
            continue;
        if (c->data->kind == SL__MEM_DEVICE) {
            total += c->chars->bytes;
        } else if (c->type == SL_TYPE_UTF8) {
            const int32_t *o = (const int32_t *)c->data->ptr + c->offset;
            total += o[b->n_rows] - o[0];
        } else {
            const int64_t *o = (const int64_t *)c->data->ptr + c->offset;
            total += o[b->n_rows] - o[0];
        }
    }
    return total;
}
