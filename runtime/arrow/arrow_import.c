/* Importing Arrow C Data Interface arrays (plain and device) as sluice batches.
 *
 * Import is zero-copy. The consumer-side contract (include/sluice/arrow.h):
 *   - Everything is validated before anything is moved: on failure the caller still
 *     owns the array and the schema, and the message is in sl_last_errmsg().
 *   - On success the ArrowArray struct is moved into a small heap holder with its own
 *     reference count. Every sluice buffer made from one of its buffers holds one
 *     reference, so the foreign release callback runs exactly once, when the last
 *     sluice buffer pointing into the array is dropped (at once if none does).
 *   - The schema is only read; the public calls release it after a successful import
 *     (sluice keeps its own copy of the names).
 *
 * Layout handling: an array's offset applies to its value buffer and, as a bit offset,
 * to its validity bitmap; a struct array's offset adds to each child's. Buffers may
 * have any alignment. A NULL validity buffer means every row is valid; a NULL value
 * buffer is accepted only when it would hold zero bytes.
 *
 * Struct-level nulls: a sluice batch has no row-level validity, so a struct array
 * with null rows is refused (SL_EUNSUPPORTED). A struct validity bitmap is accepted
 * when null_count is 0, or when null_count is -1 and counting the bitmap finds no
 * null (host memory only: a device bitmap cannot be counted from here).
 */
#include <limits.h>
#include <stdio.h>

#include "arrow_int.h"

#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

/* ---------------- the shared holder of a moved foreign array ---------------- */

struct foreign_holder {
    _Atomic int64_t refs; /* one per sluice buffer, plus one held during the import */
    struct ArrowArray array; /* the moved array; release == NULL until the move */
};

static void holder_unref(struct foreign_holder *h)
{
    /* acq_rel: the thread that releases must see every read made through other refs. */
    if (atomic_fetch_sub_explicit(&h->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (h->array.release)
        h->array.release(&h->array);
    sl__free(h, sizeof *h);
}

static void foreign_buf_release(struct sl__buf *b)
{
    holder_unref(b->owner);
}

/* Stands in for a NULL value buffer of zero bytes, so column data is never NULL. */
static _Alignas(SL__ALIGN) const uint64_t empty_bytes[1];

static void empty_buf_release(struct sl__buf *b)
{
    (void)b;
}

/* ---------------- schema parsing ---------------- */

/* The Arrow field of column i: the struct's child, or the schema itself. */
static const struct ArrowSchema *field_schema(const struct ArrowSchema *schema, bool is_struct,
                                              int i)
{
    return is_struct ? schema->children[i] : schema;
}

int sl__arrow_parse_schema(const char *fn, const struct ArrowSchema *schema, bool *is_struct,
                           sl_schema_t **out)
{
    *out = NULL;
    *is_struct = schema->format && strcmp(schema->format, "+s") == 0;
    int64_t n = 1;
    if (*is_struct) {
        if (schema->dictionary)
            return sl__set_last_error(SL_EUNSUPPORTED, "%s: dictionary-encoded struct", fn);
        n = schema->n_children;
        if (n < 0 || n > INT_MAX || (n > 0 && !schema->children))
            return sl__set_last_error(SL_EFORMAT, "%s: struct schema has a bad child list "
                                      "(n_children %lld)", fn, (long long)n);
        for (int64_t i = 0; i < n; i++) {
            if (!schema->children[i])
                return sl__set_last_error(SL_EFORMAT, "%s: child schema %lld is NULL", fn,
                                          (long long)i);
        }
    }
    sl_schema_t *s = sl__schema_new((int)n);
    if (!s)
        return sl__set_last_error(SL_ENOMEM, "%s: out of memory", fn);
    for (int i = 0; i < (int)n; i++) {
        const struct ArrowSchema *f = field_schema(schema, *is_struct, i);
        struct sl__arrow_field af;
        int rc = sl__arrow_field_parse(fn, f, i, &af);
        if (rc == SL_OK && sl__schema_set(s, i, f->name, af.type) != SL_OK)
            rc = sl__set_last_error(SL_ENOMEM, "%s: out of memory", fn);
        if (rc != SL_OK) {
            sl__schema_free(s);
            return rc;
        }
    }
    *out = s;
    return SL_OK;
}

/* ---------------- array validation ---------------- */

/* True when offset + length rows fit, with their bytes, in an int64_t. */
static bool extent_ok(int64_t length, int64_t offset)
{
    return length >= 0 && offset >= 0 && offset <= INT64_MAX / 16 - length;
}

#define COL_FAIL(code, ...) col_fail(fn, i, f->name, code, __VA_ARGS__)

static int col_fail(const char *fn, int64_t i, const char *name, int code, const char *fmt, ...)
    SL__PRINTF(5, 6);

static int col_fail(const char *fn, int64_t i, const char *name, int code, const char *fmt, ...)
{
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sl__set_last_error(code, "%s: column %lld ('%s'): %s", fn, (long long)i, name, msg);
}

/* Checks the dictionary array of a dictionary-encoded column. */
static int check_dictionary(const char *fn, const struct ArrowArray *d, const struct sl__field *f,
                            int64_t i)
{
    if (!d)
        return COL_FAIL(SL_EFORMAT, "the schema has a dictionary, the array none");
    if (!extent_ok(d->length, d->offset) || d->n_buffers != 3 || !d->buffers ||
        d->n_children != 0 || d->dictionary)
        return COL_FAIL(SL_EFORMAT, "malformed dictionary array (length %lld, offset %lld, "
                        "%lld buffers)", (long long)d->length, (long long)d->offset,
                        (long long)d->n_buffers);
    if (d->length >= INT32_MAX)
        return COL_FAIL(SL_EUNSUPPORTED, "a dictionary of %lld strings (sluice dictionaries "
                        "hold fewer than 2^31)", (long long)d->length);
    if (d->null_count != 0 && d->buffers[0] &&
        (d->null_count > 0 || sl__bit_count_zeros(d->buffers[0], d->offset, d->length) > 0))
        return COL_FAIL(SL_EUNSUPPORTED, "the dictionary holds nulls (sluice dictionaries "
                        "hold strings only; put the nulls in the indexes)");
    if (!d->buffers[1])
        return COL_FAIL(SL_EFORMAT, "the dictionary has no offsets buffer");
    return SL_OK;
}

/* Checks one array, column `i` of the batch, of which the batch reads `need` rows from
 * row `base` (counted from the array's own offset). */
static int check_column(const char *fn, const struct ArrowArray *c, const struct sl__field *f,
                        const struct sl__arrow_field *af, int64_t i, int64_t base, int64_t need,
                        const struct sl__arrow_place *place)
{
    if (!c)
        return COL_FAIL(SL_EFORMAT, "child array is NULL");
    if (!extent_ok(c->length, c->offset))
        return COL_FAIL(SL_EFORMAT, "bad length %lld or offset %lld", (long long)c->length,
                        (long long)c->offset);
    int64_t want_bufs = af->conv == SL__ARROW_STRINGS ? 3 : 2;
    if (c->n_buffers != want_bufs || !c->buffers)
        return COL_FAIL(SL_EFORMAT, "has %lld buffers, expected %lld", (long long)c->n_buffers,
                        (long long)want_bufs);
    if (c->n_children != 0)
        return COL_FAIL(SL_EFORMAT, "has children, but its format is not nested");
    if (af->conv != SL__ARROW_DICT && c->dictionary)
        return COL_FAIL(SL_EFORMAT, "has a dictionary, but its schema has none");
    if (c->length < base + need)
        return COL_FAIL(SL_EFORMAT, "has %lld rows, the batch needs %lld", (long long)c->length,
                        (long long)(base + need));
    /* A NULL buffer only where it would be empty (a string array of no rows may omit
     * even its one offset: it then reads as the static zero bytes). */
    if (!c->buffers[1] && c->offset + c->length > 0)
        return COL_FAIL(SL_EFORMAT, "has no value buffer");
    if (c->null_count < -1 || c->null_count > c->length ||
        (!c->buffers[0] && c->null_count > 0))
        return COL_FAIL(SL_EFORMAT, "null_count %lld is inconsistent with its length %lld and "
                        "validity buffer", (long long)c->null_count, (long long)c->length);
    if (place->kind == SL__MEM_DEVICE && af->conv != SL__ARROW_SHARE)
        return COL_FAIL(SL_EUNSUPPORTED, "a %s column in GPU memory: sluice imports only "
                        "fixed-width types of the same layout from the GPU (no strings, "
                        "dictionaries, booleans, decimals of precision <= 18 or timestamps "
                        "other than microseconds)", sl_type_name(af->type));
    if (af->conv == SL__ARROW_DICT)
        return check_dictionary(fn, c->dictionary, f, i);
    return SL_OK;
}


static int check_struct_nulls(const char *fn, const struct ArrowArray *a,
                              const struct sl__arrow_place *place)
{
    const uint8_t *bits = a->buffers[0];
    if (a->null_count < -1 || a->null_count > a->length || (!bits && a->null_count > 0))
        return sl__set_last_error(SL_EFORMAT, "%s: struct array has null_count %lld, "
                                  "inconsistent with its length %lld and validity buffer", fn,
                                  (long long)a->null_count, (long long)a->length);
    if (a->null_count == 0 || !bits)
        return SL_OK;
    if (a->null_count == -1 && place->kind != SL__MEM_DEVICE &&
        sl__bit_count_zeros(bits, a->offset, a->length) == 0)
        return SL_OK;
    return sl__set_last_error(SL_EUNSUPPORTED, "%s: the struct array has null rows "
                              "(null_count %lld); sluice batches have no row-level validity",
                              fn, (long long)a->null_count);
}

static int check_struct(const char *fn, const struct ArrowArray *a, const sl_schema_t *s,
                        const struct sl__arrow_place *place)
{
    if (!extent_ok(a->length, a->offset))
        return sl__set_last_error(SL_EFORMAT, "%s: struct array has bad length %lld or offset "
                                  "%lld", fn, (long long)a->length, (long long)a->offset);
    if (a->n_buffers != 1 || !a->buffers)
        return sl__set_last_error(SL_EFORMAT, "%s: struct array has %lld buffers, expected 1",
                                  fn, (long long)a->n_buffers);
    if (a->n_children != s->n_fields || (a->n_children > 0 && !a->children))
        return sl__set_last_error(SL_EFORMAT, "%s: struct array has %lld children, the schema "
                                  "%d", fn, (long long)a->n_children, s->n_fields);
    if (a->dictionary)
        return sl__set_last_error(SL_EFORMAT, "%s: struct array has a dictionary", fn);
    return check_struct_nulls(fn, a, place);
}

/* Waits on the producer's event (a cudaEvent_t *) before any buffer is read. */
static int wait_event(const char *fn, void *sync_event)
{
    if (!sync_event)
        return SL_OK;
#ifdef SL_HAVE_CUDA
    cudaError_t e = cudaEventSynchronize(*(cudaEvent_t *)sync_event);
    if (e != cudaSuccess)
        return sl__set_last_error(SL_EDEVICE, "%s: cudaEventSynchronize on the array's "
                                  "sync_event failed: %s (%s)", fn, cudaGetErrorName(e),
                                  cudaGetErrorString(e));
    return SL_OK;
#else
    return sl__set_last_error(SL_EUNSUPPORTED, "%s: the array has a CUDA sync_event, and this "
                              "sluice was built without CUDA", fn);
#endif
}

/* ---------------- building the batch ---------------- */

static int wrap(struct foreign_holder *h, const struct sl__arrow_place *place, const void *ptr,
                int64_t bytes, struct sl__buf **out)
{
    struct sl__buf *b;
    if (!ptr) {
        /* Validation allowed NULL only for a zero-byte buffer: nothing to share. */
        b = sl__buf_wrap((void *)empty_bytes, 0, place->kind, empty_buf_release, NULL);
    } else {
        b = sl__buf_wrap((void *)ptr, bytes, place->kind, foreign_buf_release, h);
        if (b)
            atomic_fetch_add_explicit(&h->refs, 1, memory_order_relaxed);
    }
    if (!b)
        return SL_ENOMEM;
    b->device = place->device;
    *out = b;
    return SL_OK;
}

/* Where the batch's rows of one array are: rows [off, off + n) of its buffers. */
struct src_col {
    const struct ArrowArray *c;
    int64_t off, n;
    bool spans_all; /* the batch reads every row of the array */
};

/* The validity of a column whose values keep the array's offset (zero-copy). */
static int share_validity(struct sl__col *col, const struct src_col *src,
                          struct foreign_holder *h, const struct sl__arrow_place *place)
{
    const struct ArrowArray *c = src->c;
    col->validity = NULL;
    col->null_count = 0;
    if (!c->buffers[0] || c->null_count == 0)
        return SL_OK; /* all valid: the bitmap, if any, need not be kept */
    /* The array's null_count covers its own rows; it holds for the column only when
     * the column spans them all. */
    col->null_count = src->spans_all ? c->null_count : -1;
    return wrap(h, place, c->buffers[0], (c->offset + c->length + 7) / 8, &col->validity);
}

/* The validity of a converted column (offset 0): a copy of the rows it holds. */
static int copy_validity(struct sl__col *col, const struct src_col *src)
{
    const struct ArrowArray *c = src->c;
    col->validity = NULL;
    col->null_count = 0;
    if (!c->buffers[0] || c->null_count == 0)
        return SL_OK;
    col->null_count = src->spans_all ? c->null_count : -1;
    col->validity = sl__bits_copy(c->buffers[0], src->off, src->n);
    return col->validity ? SL_OK : SL_ENOMEM;
}

static int bad_value(const char *fn, int64_t i, const char *name, const char *what, int64_t row)
{
    return sl__set_last_error(SL_EFORMAT, "%s: column %lld ('%s'): row %lld: %s", fn,
                              (long long)i, name, (long long)row, what);
}

/* Values converted into a new buffer of src->n rows (offset 0). */
static int convert_values(const char *fn, int64_t i, const char *name, struct sl__col *col,
                          const struct src_col *src, const struct sl__arrow_field *af)
{
    const uint8_t *v = src->c->buffers[1], *valid = src->c->buffers[0];
    int64_t n = src->n, off = src->off, bad = 0;
    if (af->conv == SL__ARROW_BOOL_BITS) {
        col->data = sl__bits_to_bytes(v ? v : (const uint8_t *)"", off, n);
        return col->data ? SL_OK : SL_ENOMEM;
    }
    col->data = sl__buf_new(sl__col_data_bytes(af->type, n));
    if (!col->data)
        return SL_ENOMEM;
    if (af->conv == SL__ARROW_DEC_NARROW &&
        !sl__dec128_narrow(v + 16 * off, n, sl_type_precision(af->type), valid, off,
                           col->data->ptr, &bad))
        return bad_value(fn, i, name, "a decimal value exceeds its precision", bad);
    if (af->conv == SL__ARROW_TS_SCALE &&
        !sl__ts_scale(v + 8 * off, n, valid, off, af->ts_mul, af->ts_div, col->data->ptr, &bad))
        return bad_value(fn, i, name, "a timestamp does not convert exactly to microseconds "
                         "in 64 bits", bad);
    return SL_OK;
}

/* A string column: offsets and bytes shared with the array, after checking the offsets
 * of the rows the batch reads. */
static int share_strings(const char *fn, int64_t i, const char *name, struct sl__col *col,
                         const struct src_col *src, struct foreign_holder *h,
                         const struct sl__arrow_place *place)
{
    const struct ArrowArray *c = src->c;
    bool large = col->type == SL_TYPE_LARGE_UTF8;
    int64_t last = 0, bad = 0;
    if (src->n > 0 &&
        !sl__offsets_check(c->buffers[1], large, src->off, src->n, &last, &bad))
        return bad_value(fn, i, name, "string offsets are negative or decrease", bad);
    if (last > 0 && !c->buffers[2])
        return bad_value(fn, i, name, "string bytes are missing", 0);
    int rc = wrap(h, place, c->buffers[1], (c->offset + c->length + 1) * (large ? 8 : 4),
                  &col->data);
    if (rc == SL_OK)
        rc = wrap(h, place, last > 0 ? c->buffers[2] : NULL, last, &col->chars);
    col->offset = src->off;
    return rc;
}

/* The dictionary of a DICT column as a sluice dictionary (a copy with int32 offsets). */
static struct sl__dict *copy_dictionary(const struct ArrowArray *d, bool large, int *rc)
{
    int64_t n = d->length, bad = 0, last = 0;
    *rc = SL_ENOMEM;
    int32_t *o = sl__malloc((size_t)(n + 1) * sizeof *o);
    if (!o)
        return NULL;
    struct sl__dict *out = NULL;
    if (!sl__offsets_check(d->buffers[1], large, d->offset, n, &last, &bad) ||
        last > INT32_MAX || (last > 0 && !d->buffers[2])) {
        *rc = SL_EFORMAT;
        goto done;
    }
    const uint8_t *p = d->buffers[1];
    int64_t first = 0;
    for (int64_t k = 0; k <= n; k++) {
        int64_t v;
        if (large) {
            memcpy(&v, p + 8 * (d->offset + k), 8);
        } else {
            int32_t w;
            memcpy(&w, p + 4 * (d->offset + k), 4);
            v = w;
        }
        if (k == 0)
            first = v;
        o[k] = (int32_t)(v - first);
    }
    out = sl__dict_new(n, o, last > 0 ? (const char *)d->buffers[2] + first : "");
    *rc = out ? SL_OK : SL_ENOMEM;
done:
    sl__free(o, (size_t)(n + 1) * sizeof *o);
    return out;
}

static bool dict_same(const struct sl__dict *a, const struct sl__dict *b)
{
    if (a->n != b->n)
        return false;
    const int32_t *oa = a->offsets->ptr, *ob = b->offsets->ptr;
    if (memcmp(oa, ob, (size_t)(a->n + 1) * sizeof *oa) != 0)
        return false;
    return oa[a->n] == 0 || memcmp(a->chars->ptr, b->chars->ptr, (size_t)oa[a->n]) == 0;
}

/* A DICT column: codes (shared when they are int32, converted otherwise) and the
 * dictionary, which is the previous batch's when its strings are the same. */
static int build_dict(const char *fn, int64_t i, const char *name, struct sl__col *col,
                      const struct src_col *src, const struct sl__arrow_field *af,
                      struct foreign_holder *h, const struct sl__arrow_place *place,
                      struct sl__arrow_dicts *dicts)
{
    const struct ArrowArray *c = src->c;
    int rc;
    col->dict = copy_dictionary(c->dictionary, af->large_values, &rc);
    if (!col->dict)
        return rc == SL_EFORMAT ? bad_value(fn, i, name, "bad dictionary offsets", 0) : rc;
    if (dicts && dicts->dicts[i] && dict_same(dicts->dicts[i], col->dict)) {
        sl__dict_unref(col->dict);
        sl__dict_ref(dicts->dicts[i]);
        col->dict = dicts->dicts[i];
    }
    if (dicts) {
        sl__dict_unref(dicts->dicts[i]);
        sl__dict_ref(col->dict);
        dicts->dicts[i] = col->dict;
    }
    bool share = af->index_width == 4 && af->index_signed;
    int32_t *dst = NULL;
    if (!share) {
        if (!(col->data = sl__buf_new(src->n * 4)))
            return SL_ENOMEM;
        dst = col->data->ptr;
    }
    int64_t bad = 0;
    const uint8_t *idx = c->buffers[1];
    if (src->n > 0 &&
        !sl__codes_to_i32(idx + (size_t)af->index_width * (size_t)src->off, af->index_width,
                          af->index_signed, src->n, c->buffers[0], src->off, col->dict->n, dst,
                          &bad))
        return bad_value(fn, i, name, "a dictionary index is out of the dictionary's range",
                         bad);
    if (!share)
        return copy_validity(col, src);
    rc = wrap(h, place, c->buffers[1], (c->offset + c->length) * 4, &col->data);
    col->offset = src->off;
    return rc == SL_OK ? share_validity(col, src, h, place) : rc;
}

/* Fills column i from array c, of which it holds rows [base, base + n_rows). */
static int build_column(const char *fn, int64_t i, const char *name, struct sl__col *col,
                        const struct ArrowArray *c, const struct sl__arrow_field *af,
                        int64_t base, int64_t n_rows, struct foreign_holder *h,
                        const struct sl__arrow_place *place, struct sl__arrow_dicts *dicts)
{
    struct src_col src = {c, c->offset + base, n_rows, base == 0 && c->length == n_rows};
    int rc;
    switch (af->conv) {
    case SL__ARROW_SHARE:
        rc = wrap(h, place, c->buffers[1],
                  (c->offset + c->length) * (int64_t)sl_type_width(col->type), &col->data);
        col->offset = src.off;
        return rc == SL_OK ? share_validity(col, &src, h, place) : rc;
    case SL__ARROW_STRINGS:
        rc = share_strings(fn, i, name, col, &src, h, place);
        return rc == SL_OK ? share_validity(col, &src, h, place) : rc;
    case SL__ARROW_DICT:
        return build_dict(fn, i, name, col, &src, af, h, place, dicts);
    default:
        col->offset = 0;
        rc = convert_values(fn, i, name, col, &src, af);
        return rc == SL_OK ? copy_validity(col, &src) : rc;
    }
}

static int build_batch(const char *fn, const struct ArrowArray *a,
                       const struct ArrowSchema *schema, const sl_schema_t *s, bool is_struct,
                       struct foreign_holder *h, const struct sl__arrow_place *place,
                       struct sl__arrow_dicts *dicts, sl_batch_t **out)
{
    sl_batch_t *b = sl__batch_new(s, a->length);
    if (!b)
        return SL_ENOMEM;
    int rc = SL_OK;
    for (int i = 0; rc == SL_OK && i < b->n_cols; i++) {
        struct sl__arrow_field af;
        sl__arrow_field_parse(fn, field_schema(schema, is_struct, i), i, &af); /* checked */
        const struct ArrowArray *c = is_struct ? a->children[i] : a;
        int64_t base = is_struct ? a->offset : 0;
        rc = build_column(fn, i, s->fields[i].name, &b->cols[i], c, &af, base, a->length, h,
                          place, dicts);
    }
    if (rc != SL_OK) {
        sl_batch_unref(b); /* drops the buffers' holder references; the import keeps one */
        return rc;
    }
    *out = b;
    return SL_OK;
}

void sl__arrow_dicts_free(struct sl__arrow_dicts *d)
{
    for (int i = 0; i < d->n; i++)
        sl__dict_unref(d->dicts[i]);
    sl__free(d->dicts, 0);
    d->dicts = NULL;
    d->n = 0;
}

/* Checks every column of the array against the schema. */
static int check_columns(const char *fn, const struct ArrowArray *array,
                         const struct ArrowSchema *schema, const sl_schema_t *s, bool is_struct,
                         const struct sl__arrow_place *place)
{
    int rc = is_struct ? check_struct(fn, array, s, place) : SL_OK;
    for (int i = 0; rc == SL_OK && i < s->n_fields; i++) {
        struct sl__arrow_field af;
        sl__arrow_field_parse(fn, field_schema(schema, is_struct, i), i, &af); /* checked */
        rc = check_column(fn, is_struct ? array->children[i] : array, &s->fields[i], &af, i,
                          is_struct ? array->offset : 0, array->length, place);
    }
    return rc;
}

int sl__arrow_import(const char *fn, struct ArrowArray *array, const struct ArrowSchema *schema,
                     const struct sl__arrow_place *place, struct sl__arrow_dicts *dicts,
                     sl_batch_t **out)
{
    *out = NULL;
    if (!array || !schema)
        return sl__set_last_error(SL_EINVAL, "%s: NULL array or schema", fn);
    if (!array->release || !schema->release)
        return sl__set_last_error(SL_EINVAL, "%s: the %s is already released", fn,
                                  !array->release ? "array" : "schema");
    sl_schema_t *s;
    bool is_struct;
    int rc = sl__arrow_parse_schema(fn, schema, &is_struct, &s);
    if (rc != SL_OK)
        return rc;
    rc = check_columns(fn, array, schema, s, is_struct, place);
    if (rc == SL_OK)
        rc = wait_event(fn, place->sync_event);
    if (rc == SL_OK && dicts && !dicts->dicts && s->n_fields > 0) {
        dicts->dicts = sl__calloc((size_t)s->n_fields, sizeof *dicts->dicts);
        dicts->n = dicts->dicts ? s->n_fields : 0;
        if (!dicts->dicts)
            rc = sl__set_last_error(SL_ENOMEM, "%s: out of memory", fn);
    }
    if (rc != SL_OK) {
        sl__schema_free(s);
        return rc;
    }

    struct foreign_holder *h = sl__malloc(sizeof *h);
    sl_batch_t *b = NULL;
    rc = SL_ENOMEM;
    if (h) {
        atomic_init(&h->refs, 1);
        memset(&h->array, 0, sizeof h->array);
        rc = build_batch(fn, array, schema, s, is_struct, h, place, dicts, &b);
    }
    sl__schema_free(s);
    if (rc != SL_OK) {
        if (h)
            holder_unref(h); /* the last reference; array.release is NULL: nothing runs */
        return rc == SL_ENOMEM ? sl__set_last_error(SL_ENOMEM, "%s: out of memory", fn) : rc;
    }
    /* The move. From here on the holder owns the foreign array. */
    h->array = *array;
    array->release = NULL;
    holder_unref(h); /* the import's own reference: releases now if no buffer was wrapped */
    *out = b;
    return SL_OK;
}

/* Releases a schema the import has moved. */
static void release_schema(struct ArrowSchema *schema)
{
    schema->release(schema);
    schema->release = NULL;
}

int sl_batch_import_arrow(struct ArrowArray *array, struct ArrowSchema *schema,
                          sl_batch_t **out)
{
    static const char fn[] = "sl_batch_import_arrow";
    if (!out)
        return sl__set_last_error(SL_EINVAL, "%s: NULL out", fn);
    const struct sl__arrow_place host = {SL__MEM_FOREIGN, -1, NULL};
    int rc = sl__arrow_import(fn, array, schema, &host, NULL, out);
    if (rc == SL_OK)
        release_schema(schema);
    return rc;
}

int sl_batch_import_device_arrow(struct ArrowDeviceArray *array, struct ArrowSchema *schema,
                                 sl_batch_t **out)
{
    static const char fn[] = "sl_batch_import_device_arrow";
    if (!out)
        return sl__set_last_error(SL_EINVAL, "%s: NULL out", fn);
    *out = NULL;
    if (!array || !schema || !array->array.release || !schema->release)
        return sl__set_last_error(SL_EINVAL, "%s: NULL or released array or schema", fn);
    struct sl__arrow_place place = {SL__MEM_FOREIGN, -1, NULL};
    switch (array->device_type) {
    case ARROW_DEVICE_CPU:
        break;
    case ARROW_DEVICE_CUDA_HOST: /* pinned host memory, possibly still being copied into */
        place.sync_event = array->sync_event;
        break;
    case ARROW_DEVICE_CUDA:
#ifdef SL_HAVE_CUDA
        if (array->device_id < 0 || array->device_id > INT_MAX)
            return sl__set_last_error(SL_EINVAL, "%s: bad CUDA device id %lld", fn,
                                      (long long)array->device_id);
        place.kind = SL__MEM_DEVICE;
        place.device = (int)array->device_id;
        place.sync_event = array->sync_event;
        break;
#else
        return sl__set_last_error(SL_EUNSUPPORTED, "%s: the array lives on CUDA device %lld, "
                                  "and this sluice was built without CUDA", fn,
                                  (long long)array->device_id);
#endif
    default:
        return sl__set_last_error(SL_EUNSUPPORTED, "%s: Arrow device type %d is not supported "
                                  "(supported: CPU, CUDA, CUDA_HOST)", fn,
                                  (int)array->device_type);
    }
    int rc = sl__arrow_import(fn, &array->array, schema, &place, NULL, out);
    if (rc == SL_OK)
        release_schema(schema);
    return rc;
}
