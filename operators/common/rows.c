/* Helpers shared by the sort-family operators: collecting sunk batches in input order,
 * viewing a column of all of them as one array, and parsing sort specifications. */
#include <ctype.h>
#include <stdlib.h>
#include <strings.h>

#include "op_common.h"

int sl__rows_add(struct sl__rows *r, sl_batch_t *b, int port, int64_t task)
{
    if (r->n == r->cap) {
        int64_t cap = r->cap ? 2 * r->cap : 16;
        struct sl__rows_item *it = sl__realloc(r->items, (size_t)r->cap * sizeof *it,
                                               (size_t)cap * sizeof *it);
        if (!it)
            return SL_ENOMEM;
        r->items = it;
        r->cap = cap;
    }
    sl_batch_ref(b);
    r->items[r->n++] = (struct sl__rows_item){b, port, task, r->seq++};
    return SL_OK;
}

int sl__rows_move(struct sl__rows *dst, struct sl__rows *src)
{
    for (int64_t i = 0; i < src->n; i++) {
        struct sl__rows_item it = src->items[i];
        int rc = sl__rows_add(dst, it.batch, it.port, it.task);
        if (rc < 0)
            return rc;
        dst->items[dst->n - 1].seq = it.seq;
    }
    for (int64_t i = 0; i < src->n; i++)
        sl_batch_unref(src->items[i].batch);
    src->n = 0;
    return SL_OK;
}

static int cmp_item(const void *a, const void *b)
{
    const struct sl__rows_item *x = a, *y = b;
    if (x->port != y->port)
        return x->port < y->port ? -1 : 1;
    if (x->task != y->task)
        return x->task < y->task ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Batches of one source task all arrive on one worker in emission order, so (port,
 * task, seq) is the input order whatever the thread count. */
void sl__rows_order(struct sl__rows *r)
{
    if (r->n > 1)
        qsort(r->items, (size_t)r->n, sizeof *r->items, cmp_item);
}

void sl__rows_fini(struct sl__rows *r)
{
    for (int64_t i = 0; i < r->n; i++)
        sl_batch_unref(r->items[i].batch);
    sl__free(r->items, (size_t)r->cap * sizeof *r->items);
    memset(r, 0, sizeof *r);
}

/* 1 if column c of batches [first, last) are consecutive slices of one buffer (values,
 * and validity if any batch has it). */
static bool contiguous(const struct sl__rows *r, int64_t first, int64_t last, int c)
{
    const struct sl__col *c0 = &r->items[first].batch->cols[c];
    int64_t next = c0->offset;
    for (int64_t i = first; i < last; i++) {
        const sl_batch_t *b = r->items[i].batch;
        const struct sl__col *col = &b->cols[c];
        if (col->data != c0->data || col->validity != c0->validity || col->offset != next)
            return false;
        next += b->n_rows;
    }
    return true;
}

int sl__rows_view(sl_task_t *t, const struct sl__rows *r, int64_t first, int64_t last, int c,
                  struct sl__rowsview *out)
{
    int64_t n = 0;
    for (int64_t i = first; i < last; i++)
        n += r->items[i].batch->n_rows;
    {
        struct sl__rowsview *v = out;
        memset(v, 0, sizeof *v);
        if (first == last) {
            v->type = SL_TYPE_INT64;
            return SL_OK;
        }
        const struct sl__col *c0 = &r->items[first].batch->cols[c];
        v->type = c0->type;
        size_t w = sl_type_width(v->type);
        if (contiguous(r, first, last, c)) {
            v->data = (const char *)c0->data->ptr + (size_t)c0->offset * w;
            v->validity = c0->validity ? c0->validity->ptr : NULL;
            v->voff = c0->offset;
            v->null_count = -1;
            return SL_OK;
        }
        char *data = sl_task_alloc(t, (size_t)n * w + 64);
        if (!data)
            return SL_ENOMEM;
        bool any_valid = false;
        for (int64_t i = first; i < last; i++)
            any_valid |= r->items[i].batch->cols[c].validity != NULL;
        uint8_t *valid = NULL;
        if (any_valid) {
            valid = sl_task_alloc(t, (size_t)(n + 7) / 8 + 8);
            if (!valid)
                return SL_ENOMEM;
            memset(valid, 0, (size_t)(n + 7) / 8 + 8);
        }
        int64_t at = 0;
        for (int64_t i = first; i < last; i++) {
            const sl_batch_t *b = r->items[i].batch;
            memcpy(data + (size_t)at * w, sl__col_values(b, c), (size_t)b->n_rows * w);
            if (valid) {
                const struct sl__col *col = &b->cols[c];
                for (int64_t k = 0; k < b->n_rows; k++) {
                    if (sl__col_valid(col, k))
                        valid[(at + k) >> 3] |= (uint8_t)(1u << ((at + k) & 7));
                }
            }
            at += b->n_rows;
        }
        v->data = data;
        v->validity = valid;
        v->null_count = -1;
    }
    return SL_OK;
}

/* ---------------- "a DESC NULLS FIRST, b" ---------------- */

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* Reads a word (letters, digits, _ . -) into buf; returns the position after it. */
static const char *read_word(const char *p, char *buf, size_t cap)
{
    size_t n = 0;
    p = skip_ws(p);
    while (*p && (isalnum((unsigned char)*p) || *p == '_' || *p == '.' || *p == '-')) {
        if (n + 1 < cap)
            buf[n++] = *p;
        p++;
    }
    buf[n] = 0;
    return p;
}

int sl__sort_spec_parse(sl_bind_t *b, const sl_schema_t *schema, const char *text,
                        struct sl__sort_spec *out)
{
    memset(out, 0, sizeof *out);
    const char *p = text;
    for (;;) {
        char name[128], w[32];
        const char *at = skip_ws(p);
        p = read_word(at, name, sizeof name);
        if (!name[0])
            return sl_bind_fail(b, SL_EINVAL, "by: expected a column name at position %d of "
                                "\"%s\"", (int)(at - text) + 1, text);
        int col = sl_schema_find(schema, name);
        if (col < 0)
            return sl_bind_fail(b, SL_ENOTFOUND, "by: no column '%s' in its input", name);
        if (out->n_keys == SL__SORT_MAX_KEYS)
            return sl_bind_fail(b, SL_EINVAL, "by: more than %d keys", SL__SORT_MAX_KEYS);
        struct sl__sort_key *k = &out->keys[out->n_keys++];
        k->col = col;
        int nulls = -1;
        for (;;) {
            const char *q = read_word(p, w, sizeof w);
            if (!w[0])
                break;
            p = q;
            if (!strcasecmp(w, "ASC")) {
                k->desc = 0;
            } else if (!strcasecmp(w, "DESC")) {
                k->desc = 1;
            } else if (!strcasecmp(w, "NULLS")) {
                p = read_word(p, w, sizeof w);
                if (!strcasecmp(w, "FIRST"))
                    nulls = 1;
                else if (!strcasecmp(w, "LAST"))
                    nulls = 0;
                else
                    return sl_bind_fail(b, SL_EINVAL, "by: expected FIRST or LAST after NULLS "
                                        "for column '%s'", name);
            } else {
                return sl_bind_fail(b, SL_EINVAL, "by: unexpected '%s' after column '%s' "
                                    "(expected ASC, DESC, NULLS FIRST/LAST or a comma)", w, name);
            }
        }
        k->nulls_first = nulls >= 0 ? nulls : k->desc;
        p = skip_ws(p);
        if (!*p)
            return SL_OK;
        if (*p != ',')
            return sl_bind_fail(b, SL_EINVAL, "by: unexpected '%c' at position %d of \"%s\"", *p,
                                (int)(p - text) + 1, text);
        p++;
    }
}

int sl__rows_sink(sl_task_t *t, struct sl__rows *local)
{
    sl_batch_t *b = sl_task_input(t);
    if (b->n_rows && sl__rows_add(local, b, sl_task_port(t), sl_task_index(t)) < 0)
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    return SL_OK;
}

int64_t sl__rows_total(const struct sl__rows *r)
{
    int64_t n = 0;
    for (int64_t i = 0; i < r->n; i++)
        n += r->items[i].batch->n_rows;
    return n;
}

int sl__batch_keep_on_host(sl_task_t *t, sl_batch_t **b)
{
    sl_batch_t *h;
    if (sl_batch_device(*b) < 0)
        return SL_OK;
    int rc = sl_task_batch_to_host(t, *b, &h);
    if (rc < 0)
        return rc;
    sl_batch_unref(*b);
    *b = h;
    return SL_OK;
}

int sl__rows_to_host(sl_task_t *t, struct sl__rows *r)
{
    for (int64_t i = 0; i < r->n; i++) {
        int rc = sl__batch_keep_on_host(t, &r->items[i].batch);
        if (rc < 0)
            return rc;
    }
    return SL_OK;
}

int sl__rows_combine(sl_task_t *t, struct sl__rows *global, struct sl__rows *local)
{
    if (sl__rows_move(global, local) < 0)
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    return SL_OK;
}

int64_t sl__chunk_rows(sl_task_t *t, int64_t n)
{
    int64_t m = sl_task_morsel_rows(t), target = n / 64 > m ? n / 64 : m;
    return (target + 63) & ~(int64_t)63;
}

void sl__sum_chunk_nulls(sl_batch_t *out, const int64_t *nulls, int64_t n_chunks, int n_cols)
{
    for (int c = 0; c < n_cols; c++) {
        if (!out->cols[c].validity)
            continue;
        int64_t sum = 0;
        for (int64_t k = 0; k < n_chunks; k++)
            sum += nulls[k * n_cols + c];
        out->cols[c].null_count = sum;
    }
}

int64_t sl__morsel_tasks(sl_task_t *t, const sl_batch_t *out, int64_t n)
{
    if (!out)
        return 0;
    int64_t m = sl_task_morsel_rows(t);
    return n / m + (n % m != 0); /* rounded up without n + m - 1 overflowing */
}

int sl__emit_rows(sl_task_t *t, sl_batch_t *out, int64_t lo, int64_t rows)
{
    if (sl_batch_device(out) < 0) {
        sl_batch_t *s = sl__batch_slice(out, lo, rows);
        if (!s)
            return sl_task_fail(t, SL_ENOMEM, "out of memory");
        return sl_task_emit(t, s);
    }
    /* A device result (a finalize on a GPU): as it is for a GPU consumer, downloaded for
     * a host one. */
    sl_batch_t *s = sl_task_batch_slice(t, out, lo, rows), *h;
    if (!s)
        return SL_ENOMEM;
    if (sl_task_device_kind(t) == SL_DEVICE_CUDA)
        return sl_task_emit(t, s);
    int rc = sl_task_batch_to_host(t, s, &h);
    sl_batch_unref(s);
    return rc < 0 ? rc : sl_task_emit(t, h);
}

int sl__emit_morsel(sl_task_t *t, sl_batch_t *out, int64_t n)
{
    int64_t m = sl_task_morsel_rows(t), i = sl_task_index(t);
    return sl__emit_rows(t, out, i * m, sl__morsel_len(n, m, i));
}
