/* Runs of a host table's batches copied into one device batch (sl_table_to_device;
 * issue 19).
 *
 * Readers and the TPC-H loader make tables of many small batches (122,880 rows each), and
 * a source cuts at least one morsel per batch, so a GPU-resident table of small batches
 * ran one GPU task (its launches, count read-backs and hand-off) per 122,880 rows: Q1 at
 * SF 1 ran 49 tasks of about 0.5 ms each. The copy writes each run of batches into one
 * device batch instead. Values go straight from each batch to their place in the device
 * buffer; bitmaps and string offsets, whose positions shift, are rebuilt on the host for
 * the whole run and uploaded once. A DICT column whose batches hold dictionaries of their
 * own (the CSV reader makes one per batch) gets their merged dictionary, its codes
 * remapped on the host (sl__dict_union).
 *
 * sl_table_pin combines runs the same way, into host buffers (no stream: each part copied
 * by memcpy), before it page-locks them: a pinned table of loader-sized batches ran a GPU
 * task per 122,880 rows too (sl__table_combine_runs). */
#include <string.h>

#include "gpu_worker_int.h"

/* The byte range [lo, hi) of rows [offset, offset + rows) of a host string column. */
static void str_span(const sl_batch_t *b, int c, int64_t *lo, int64_t *hi)
{
    const struct sl__col *col = &b->cols[c];
    int64_t at = col->offset, n = b->n_rows;
    if (col->type == SL_TYPE_UTF8) {
        const int32_t *o = col->data->ptr;
        *lo = o[at], *hi = o[at + n];
    } else {
        const int64_t *o = col->data->ptr;
        *lo = o[at], *hi = o[at + n];
    }
}

/* Whether the rows of string column c of b span no bytes (no bytes buffer needed). */
static bool str_bytes_empty(const sl_batch_t *b, int c)
{
    int64_t lo, hi;
    str_span(b, c, &lo, &hi);
    return hi == lo;
}

/* Whether column c of b has the plain layout the run copies from: its buffers cover
 * [offset, offset + rows) (a foreign layout may not; such a batch goes alone). */
static bool col_plain(const sl_batch_t *b, int c)
{
    const struct sl__col *col = &b->cols[c];
    int64_t w = (int64_t)sl_type_width(col->type), end = col->offset + b->n_rows;
    if (b->n_rows == 0)
        return w > 0 || col->data; /* a string column's span reads its offsets */
    if (!col->data || (col->validity && col->validity->bytes < (end + 7) / 8))
        return false;
    if (w > 0)
        return col->data->bytes >= end * w;
    int64_t ow = col->type == SL_TYPE_UTF8 ? 4 : 8;
    return col->data->bytes >= (end + 1) * ow && (col->chars || str_bytes_empty(b, c));
}

/* Whether batch b may follow batch f in a run: host batches of the same column types
 * and plain layouts. */
static bool run_joins(const sl_batch_t *f, const sl_batch_t *b)
{
    if (sl_batch_device(b) >= 0 || b->n_cols != f->n_cols)
        return false;
    for (int c = 0; c < b->n_cols; c++)
        if (b->cols[c].type != f->cols[c].type || !col_plain(b, c))
            return false;
    return true;
}

int64_t sl__gpu_concat_run(sl_batch_t *const *bs, int64_t n, int64_t max_rows)
{
    if (n < 1)
        return 0;
    int64_t k = 0, rows = 0;
    while (k < n && run_joins(bs[0], bs[k]) && (k == 0 || rows + bs[k]->n_rows <= max_rows))
        rows += bs[k++]->n_rows;
    /* utf8's offsets are 32-bit: the run's bytes of each such column must fit them. */
    for (int c = 0; k > 1 && c < bs[0]->n_cols; c++) {
        if (bs[0]->cols[c].type != SL_TYPE_UTF8)
            continue;
        int64_t bytes = 0, j = 0;
        for (; j < k; j++) {
            int64_t lo, hi;
            str_span(bs[j], c, &lo, &hi);
            if ((bytes += hi - lo) > INT32_MAX)
                break;
        }
        k = j;
    }
    rows = 0;
    for (int64_t j = 0; j < k; j++)
        rows += bs[j]->n_rows;
    return k > 1 && rows > 0 ? k : 1; /* an empty run goes as its first batch */
}

/* The run's bitmap of column c on the host (*out, NULL when no row is null), and its
 * null count. */
static int run_bitmap(sl_batch_t *const *bs, int64_t n, int c, int64_t rows, uint8_t **out,
                      int64_t *nulls)
{
    *out = NULL;
    *nulls = 0;
    bool any = false;
    for (int64_t k = 0; k < n; k++)
        any |= bs[k]->cols[c].validity != NULL;
    if (!any)
        return SL_OK;
    uint8_t *m = sl__malloc((size_t)(rows + 7) / 8);
    if (!m)
        return sl__set_last_error(SL_ENOMEM, "out of memory for a bitmap");
    memset(m, 0, (size_t)(rows + 7) / 8);
    int64_t at = 0;
    for (int64_t k = 0; k < n; k++) {
        const struct sl__col *col = &bs[k]->cols[c];
        const uint8_t *v = col->validity ? col->validity->ptr : NULL;
        for (int64_t r = 0; r < bs[k]->n_rows; r++, at++) {
            int64_t s = col->offset + r;
            bool ok = !v || (v[s >> 3] >> (s & 7) & 1);
            m[at >> 3] |= (uint8_t)(ok << (at & 7));
            *nulls += !ok;
        }
    }
    *out = m;
    return SL_OK;
}

/* The run's string offsets of column c (host, rows + 1 of type t), rebased so that the
 * batches' bytes follow one another in one buffer. */
static void *run_offsets(sl_batch_t *const *bs, int64_t n, int c, int64_t rows,
                         enum sl_type t)
{
    bool narrow = t == SL_TYPE_UTF8;
    void *o = sl__malloc((size_t)(rows + 1) * (narrow ? 4 : 8));
    if (!o)
        return NULL;
    int64_t at = 0, base = 0;
    for (int64_t k = 0; k < n; k++) {
        const struct sl__col *col = &bs[k]->cols[c];
        int64_t lo, hi;
        str_span(bs[k], c, &lo, &hi);
        for (int64_t r = 0; r < bs[k]->n_rows; r++, at++) {
            int64_t s = col->offset + r;
            int64_t v = (narrow ? ((const int32_t *)col->data->ptr)[s]
                                : ((const int64_t *)col->data->ptr)[s]) - lo + base;
            if (narrow)
                ((int32_t *)o)[at] = (int32_t)v;
            else
                ((int64_t *)o)[at] = v;
        }
        base += hi - lo;
    }
    if (narrow)
        ((int32_t *)o)[rows] = (int32_t)base;
    else
        ((int64_t *)o)[rows] = base;
    return o;
}

/* Copies `bytes` of host memory src to dst: to the device on st, or by memcpy when st is
 * NULL (dst is host memory: sl__table_combine_runs). */
static cudaError_t put(void *dst, const void *src, size_t bytes, cudaStream_t st)
{
    if (!st) {
        memcpy(dst, src, bytes);
        return cudaSuccess;
    }
    return SL__CUDA_RESULT(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, st));
}

/* Uploads `bytes` of the host array h to dst and frees h once the copy has read it. */
static cudaError_t upload_free(void *dst, void *h, size_t bytes, cudaStream_t st)
{
    cudaError_t e = put(dst, h, bytes, st);
    if (e == cudaSuccess && st)
        e = SL__CUDA_RESULT(cudaStreamSynchronize(st));
    sl__free(h, bytes);
    return e;
}

/* The values of column c of the run at their places in d->data (fixed width w). */
static cudaError_t run_values(sl_batch_t *const *bs, int64_t n, int c, int64_t w,
                              struct sl__col *d, cudaStream_t st)
{
    cudaError_t e = cudaSuccess;
    for (int64_t k = 0, at = 0; k < n && e == cudaSuccess; at += bs[k++]->n_rows) {
        const struct sl__col *col = &bs[k]->cols[c];
        if (bs[k]->n_rows > 0)
            e = put((char *)d->data->ptr + at * w, (const char *)col->data->ptr + col->offset * w,
                    (size_t)(bs[k]->n_rows * w), st);
    }
    return e;
}

/* String column c of the run into d: the rebuilt offsets, then each batch's bytes. */
static int run_strings(sl_batch_t *const *bs, int64_t n, int c, int64_t rows,
                       struct sl__col *d, int (*alloc)(void *, int64_t, struct sl__buf **),
                       void *ctx, cudaStream_t st)
{
    enum sl_type t = bs[0]->cols[c].type;
    int64_t ob = (rows + 1) * (t == SL_TYPE_UTF8 ? 4 : 8), total = 0;
    for (int64_t k = 0; k < n; k++) {
        int64_t lo, hi;
        str_span(bs[k], c, &lo, &hi);
        total += hi - lo;
    }
    void *o = run_offsets(bs, n, c, rows, t);
    if (!o)
        return sl__set_last_error(SL_ENOMEM, "out of memory for string offsets");
    int rc = alloc(ctx, ob, &d->data);
    if (rc >= 0 && total > 0)
        rc = alloc(ctx, total, &d->chars);
    cudaError_t e = cudaSuccess;
    if (rc >= 0)
        e = upload_free(d->data->ptr, o, (size_t)ob, st);
    else
        sl__free(o, (size_t)ob);
    for (int64_t k = 0, at = 0; rc >= 0 && k < n && e == cudaSuccess; k++) {
        int64_t lo, hi;
        str_span(bs[k], c, &lo, &hi);
        if (hi > lo)
            e = put((char *)d->chars->ptr + at, (const char *)bs[k]->cols[c].chars->ptr + lo,
                    (size_t)(hi - lo), st);
        at += hi - lo;
    }
    if (rc < 0)
        return rc;
    return e == cudaSuccess ? SL_OK : GPU_CUDA_FAIL(NULL, e, "copying a table's strings");
}

/* DICT column c of a run whose batches hold different dictionaries: the merged one, and
 * the codes remapped to it on the host and uploaded once. */
static int run_dict_codes(sl_batch_t *const *bs, int64_t n, int c, int64_t rows,
                          struct sl__col *d, int (*alloc)(void *, int64_t, struct sl__buf **),
                          void *ctx, cudaStream_t st)
{
    struct sl__dict_union u;
    int rc = sl__dict_union_init(&u, bs, n, c);
    if (rc < 0)
        return sl__set_last_error(rc, "merging the dictionaries of a table's column %d", c);
    int32_t *codes = sl__malloc((size_t)rows * 4);
    if (!codes) {
        sl__dict_union_fini(&u);
        return sl__set_last_error(SL_ENOMEM, "out of memory for dictionary codes");
    }
    for (int64_t k = 0, at = 0; k < n; k++) {
        const int32_t *src = (const int32_t *)bs[k]->cols[c].data->ptr + bs[k]->cols[c].offset;
        for (int64_t r = 0; r < bs[k]->n_rows; r++)
            codes[at++] = sl__dict_union_code(&u, k, src[r]);
    }
    cudaError_t e = cudaSuccess;
    if ((rc = alloc(ctx, rows * 4, &d->data)) >= 0) {
        e = upload_free(d->data->ptr, codes, (size_t)rows * 4, st);
        sl__dict_ref(u.dict);
        sl__dict_unref(d->dict);
        d->dict = u.dict;
    } else {
        sl__free(codes, (size_t)rows * 4);
    }
    sl__dict_union_fini(&u);
    if (rc < 0)
        return rc;
    return e == cudaSuccess ? SL_OK : GPU_CUDA_FAIL(NULL, e, "copying dictionary codes");
}

/* Whether column c is DICT and its batches hold different dictionaries. */
static bool dicts_differ(sl_batch_t *const *bs, int64_t n, int c)
{
    if (bs[0]->cols[c].type != SL_TYPE_DICT)
        return false;
    for (int64_t k = 1; k < n; k++)
        if (!sl__dict_same(bs[k]->cols[c].dict, bs[0]->cols[c].dict))
            return true;
    return false;
}

/* Column c of the run into d: values (or strings), then the bitmap. */
static int run_column(sl_batch_t *const *bs, int64_t n, int c, int64_t rows, struct sl__col *d,
                      int (*alloc)(void *, int64_t, struct sl__buf **), void *ctx,
                      cudaStream_t st)
{
    int64_t w = (int64_t)sl_type_width(bs[0]->cols[c].type);
    d->offset = 0;
    int rc = SL_OK;
    if (w == 0) {
        rc = run_strings(bs, n, c, rows, d, alloc, ctx, st);
    } else if (dicts_differ(bs, n, c)) {
        rc = run_dict_codes(bs, n, c, rows, d, alloc, ctx, st);
    } else if ((rc = alloc(ctx, rows * w, &d->data)) >= 0) {
        cudaError_t e = run_values(bs, n, c, w, d, st);
        rc = e == cudaSuccess ? SL_OK : GPU_CUDA_FAIL(NULL, e, "copying a table");
    }
    uint8_t *m = NULL;
    if (rc < 0 || (rc = run_bitmap(bs, n, c, rows, &m, &d->null_count)) < 0 || !m)
        return rc;
    int64_t vb = (rows + 7) / 8;
    cudaError_t e = cudaSuccess;
    if ((rc = alloc(ctx, vb, &d->validity)) >= 0)
        e = upload_free(d->validity->ptr, m, (size_t)vb, st);
    else
        sl__free(m, (size_t)vb);
    if (rc < 0)
        return rc;
    return e == cudaSuccess ? SL_OK : GPU_CUDA_FAIL(NULL, e, "copying a table's bitmap");
}

int sl__gpu_concat_to_device(sl_batch_t *const *bs, int64_t n,
                             int (*alloc)(void *ctx, int64_t bytes, struct sl__buf **out),
                             void *ctx, void *stream, sl_batch_t **out)
{
    cudaStream_t st = stream;
    *out = NULL;
    int64_t rows = 0;
    for (int64_t k = 0; k < n; k++)
        rows += bs[k]->n_rows;
    sl_batch_t *b = sl__batch_new(bs[0]->schema, rows);
    if (!b)
        return sl__set_last_error(SL_ENOMEM, "out of memory");
    sl__batch_share_dicts(b, bs[0]); /* codes move; dictionaries stay in host memory */
    for (int c = 0; c < b->n_cols; c++) {
        int rc = run_column(bs, n, c, rows, &b->cols[c], alloc, ctx, st);
        if (rc < 0) {
            sl_batch_unref(b);
            return rc;
        }
    }
    *out = b;
    return SL_OK;
}

int sl__gpu_host_alloc(void *ctx, int64_t bytes, struct sl__buf **out)
{
    (void)ctx;
    *out = sl__buf_new(bytes);
    return *out ? SL_OK : sl__set_last_error(SL_ENOMEM, "out of memory for %lld bytes",
                                            (long long)bytes);
}

/* Gives DICT column c of the (new, unshared) batches bs[0..n) one merged dictionary, their
 * codes remapped in place (a null row's code becomes 0): the GPU join passes a DICT output on only when its side's
 * batches agree (TPC-H Q4's o_orderpriority), the GPU aggregate remaps each batch's keys
 * otherwise. */
static int unify_dicts(sl_batch_t **bs, int64_t n, int c)
{
    struct sl__dict_union u;
    int rc = sl__dict_union_init(&u, bs, n, c);
    if (rc < 0)
        return sl__set_last_error(rc, "merging the dictionaries of a table's column %d", c);
    for (int64_t k = 0; rc >= 0 && k < n; k++) {
        int32_t *codes = sl_batch_column_data(bs[k], c);
        for (int64_t r = 0; codes && r < bs[k]->n_rows; r++)
            codes[r] = sl__dict_union_code(&u, k, codes[r]);
        rc = codes ? sl__dict_union_attach(&u, bs[k], c)
                   : sl__set_last_error(SL_EINTERNAL, "a combined batch is shared");
    }
    sl__dict_union_fini(&u);
    return rc;
}

/* The batches from bs[0] on that go into one batch: a run of small ones (concat_run's),
 * or one large batch alone. */
static int64_t pin_run(sl_batch_t *const *bs, int64_t n, int64_t small_rows, int64_t max_rows)
{
    int64_t small = 0;
    while (small < n && bs[small]->n_rows < small_rows)
        small++;
    return small == 0 ? 1 : sl__gpu_concat_run(bs, small, max_rows);
}

int sl__table_combine_runs(sl_table_t *t, int64_t small_rows, int64_t max_rows)
{
    int64_t n = 0;
    for (int64_t i = 0, k; i < t->n_batches; i += k, n++)
        k = pin_run(t->batches + i, t->n_batches - i, small_rows, max_rows);
    bool differ = false;
    for (int c = 0; n > 0 && c < t->batches[0]->n_cols; c++)
        differ |= dicts_differ(t->batches, t->n_batches, c);
    if (n == t->n_batches && !differ)
        return SL_OK;
    sl_batch_t **nb = sl__calloc((size_t)n, sizeof *nb);
    if (!nb)
        return sl__set_last_error(SL_ENOMEM, "out of memory");
    int rc = SL_OK;
    bool copied = true; /* every batch of nb is a copy of ours (its codes may change) */
    for (int64_t i = 0, j = 0, k = 1; rc >= 0 && i < t->n_batches; i += k, j++) {
        /* every run copied, one plain host batch alone too (its codes may be remapped
         * below); another (device memory, a foreign layout) is kept as it is */
        k = pin_run(t->batches + i, t->n_batches - i, small_rows, max_rows);
        if (k > 1 || run_joins(t->batches[i], t->batches[i])) {
            rc = sl__gpu_concat_to_device(t->batches + i, k, sl__gpu_host_alloc, NULL, NULL,
                                          &nb[j]);
        } else {
            sl_batch_ref(t->batches[i]);
            nb[j] = t->batches[i];
            copied = false;
        }
    }
    for (int c = 0; rc >= 0 && copied && c < nb[0]->n_cols; c++)
        if (dicts_differ(nb, n, c))
            rc = unify_dicts(nb, n, c);
    if (rc < 0) { /* the table stays as it was */
        for (int64_t j = 0; j < n; j++)
            sl_batch_unref(nb[j]);
        sl__free(nb, (size_t)n * sizeof *nb);
        return rc;
    }
    for (int64_t i = 0; i < t->n_batches; i++)
        sl_batch_unref(t->batches[i]);
    sl__free(t->batches, (size_t)t->cap * sizeof *t->batches);
    t->batches = nb;
    t->n_batches = t->cap = n;
    return SL_OK;
}
