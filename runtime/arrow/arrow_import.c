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

static int check_field(const char *fn, const struct ArrowSchema *f, int64_t i,
                       enum sl_type *type)
{
    const char *name = f->name ? f->name : "";
    if (!f->format)
        return sl__set_last_error(SL_EFORMAT, "%s: column %lld ('%s') has no format string",
                                  fn, (long long)i, name);
    *type = sl__arrow_type(f->format);
    if (*type == SL_TYPE_INVALID)
        return sl__set_last_error(SL_EUNSUPPORTED,
                                  "%s: column %lld ('%s') has Arrow format '%s', which sluice "
                                  "does not support (supported: i, l, f, g)",
                                  fn, (long long)i, name, f->format);
    if (f->dictionary)
        return sl__set_last_error(SL_EUNSUPPORTED,
                                  "%s: column %lld ('%s') is dictionary-encoded, which sluice "
                                  "does not support", fn, (long long)i, name);
    if (f->n_children != 0)
        return sl__set_last_error(SL_EFORMAT, "%s: column %lld ('%s') of format '%s' has %lld "
                                  "children, expected 0", fn, (long long)i, name, f->format,
                                  (long long)f->n_children);
    return SL_OK;
}

int sl__arrow_parse_schema(const char *fn, const struct ArrowSchema *schema, bool *is_struct,
                        sl_schema_t **out)
{
    *out = NULL;
    *is_struct = schema->format && strcmp(schema->format, "+s") == 0;
    if (!*is_struct) {
        enum sl_type type = SL_TYPE_INT32; /* set by check_field; quiets -Wmaybe-uninitialized */
        int rc = check_field(fn, schema, 0, &type);
        if (rc != SL_OK)
            return rc;
        sl_schema_t *s = sl__schema_new(1);
        if (!s || sl__schema_set(s, 0, schema->name, type) != SL_OK) {
            sl__schema_free(s);
            return sl__set_last_error(SL_ENOMEM, "%s: out of memory", fn);
        }
        *out = s;
        return SL_OK;
    }
    if (schema->dictionary)
        return sl__set_last_error(SL_EUNSUPPORTED, "%s: dictionary-encoded struct", fn);
    int64_t n = schema->n_children;
    if (n < 0 || n > INT_MAX || (n > 0 && !schema->children))
        return sl__set_last_error(SL_EFORMAT, "%s: struct schema has a bad child list "
                                  "(n_children %lld)", fn, (long long)n);
    for (int64_t i = 0; i < n; i++) {
        if (!schema->children[i])
            return sl__set_last_error(SL_EFORMAT, "%s: child schema %lld is NULL", fn,
                                      (long long)i);
        enum sl_type type;
        int rc = check_field(fn, schema->children[i], i, &type);
        if (rc != SL_OK)
            return rc;
    }
    sl_schema_t *s = sl__schema_new((int)n);
    if (!s)
        return sl__set_last_error(SL_ENOMEM, "%s: out of memory", fn);
    for (int i = 0; i < (int)n; i++) {
        const struct ArrowSchema *f = schema->children[i];
        if (sl__schema_set(s, i, f->name, sl__arrow_type(f->format)) != SL_OK) {
            sl__schema_free(s);
            return sl__set_last_error(SL_ENOMEM, "%s: out of memory", fn);
        }
    }
    *out = s;
    return SL_OK;
}

/* ---------------- array validation ---------------- */

/* True when offset + length rows fit, with their bytes, in an int64_t. */
static bool extent_ok(int64_t length, int64_t offset)
{
    return length >= 0 && offset >= 0 && offset <= INT64_MAX / 8 - length;
}

/* Checks one primitive array, column `i` of the batch, of which the batch reads the
 * first `need` rows (counted from the array's own offset). */
static int check_column(const char *fn, const struct ArrowArray *c, const struct sl__field *f,
                        int64_t i, int64_t need)
{
    if (!c)
        return sl__set_last_error(SL_EFORMAT, "%s: column %lld ('%s'): child array is NULL",
                                  fn, (long long)i, f->name);
    if (!extent_ok(c->length, c->offset))
        return sl__set_last_error(SL_EFORMAT, "%s: column %lld ('%s'): bad length %lld or "
                                  "offset %lld", fn, (long long)i, f->name,
                                  (long long)c->length, (long long)c->offset);
    if (c->n_buffers != 2 || !c->buffers)
        return sl__set_last_error(SL_EFORMAT, "%s: column %lld ('%s') has %lld buffers, "
                                  "expected 2", fn, (long long)i, f->name,
                                  (long long)c->n_buffers);
    if (c->n_children != 0 || c->dictionary)
        return sl__set_last_error(SL_EFORMAT, "%s: column %lld ('%s') has children or a "
                                  "dictionary, but its format is primitive", fn,
                                  (long long)i, f->name);
    if (c->length < need)
        return sl__set_last_error(SL_EFORMAT, "%s: column %lld ('%s') has %lld rows, the "
                                  "batch needs %lld", fn, (long long)i, f->name,
                                  (long long)c->length, (long long)need);
    if (!c->buffers[1] && c->offset + c->length > 0)
        return sl__set_last_error(SL_EFORMAT, "%s: column %lld ('%s') has no value buffer",
                                  fn, (long long)i, f->name);
    if (c->null_count < -1 || c->null_count > c->length ||
        (!c->buffers[0] && c->null_count > 0))
        return sl__set_last_error(SL_EFORMAT, "%s: column %lld ('%s') has null_count %lld, "
                                  "inconsistent with its length %lld and validity buffer",
                                  fn, (long long)i, f->name, (long long)c->null_count,
                                  (long long)c->length);
    return SL_OK;
}

static int64_t count_nulls(const uint8_t *bits, int64_t offset, int64_t length)
{
    int64_t nulls = 0;
    for (int64_t i = offset; i < offset + length; i++)
        nulls += !((bits[i >> 3] >> (i & 7)) & 1);
    return nulls;
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
        count_nulls(bits, a->offset, a->length) == 0)
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
    int rc = check_struct_nulls(fn, a, place);
    for (int i = 0; rc == SL_OK && i < s->n_fields; i++)
        rc = check_column(fn, a->children[i], &s->fields[i], i, a->offset + a->length);
    return rc;
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

/* Fills one column from a primitive array whose rows [base, base + n_rows) it holds. */
static int build_column(struct sl__col *col, const struct ArrowArray *c, int64_t base,
                        int64_t n_rows, struct foreign_holder *h,
                        const struct sl__arrow_place *place)
{
    int64_t end = c->offset + c->length;
    int rc = wrap(h, place, c->buffers[1], end * (int64_t)sl_type_width(col->type), &col->data);
    if (rc != SL_OK)
        return rc;
    col->offset = c->offset + base;
    col->validity = NULL;
    col->null_count = 0;
    if (!c->buffers[0] || c->null_count == 0)
        return SL_OK; /* all valid: the bitmap, if any, need not be kept */
    rc = wrap(h, place, c->buffers[0], (end + 7) / 8, &col->validity);
    /* The array's null_count covers its own rows; it holds for the column only when
     * the column spans them all. */
    col->null_count = (base == 0 && c->length == n_rows) ? c->null_count : -1;
    return rc;
}

static int build_batch(const struct ArrowArray *a, const sl_schema_t *s, bool is_struct,
                       struct foreign_holder *h, const struct sl__arrow_place *place,
                       sl_batch_t **out)
{
    sl_batch_t *b = sl__batch_new(s, a->length);
    if (!b)
        return SL_ENOMEM;
    int rc = SL_OK;
    if (!is_struct)
        rc = build_column(&b->cols[0], a, 0, a->length, h, place);
    for (int i = 0; is_struct && rc == SL_OK && i < b->n_cols; i++)
        rc = build_column(&b->cols[i], a->children[i], a->offset, a->length, h, place);
    if (rc != SL_OK) {
        sl_batch_unref(b); /* drops the buffers' holder references; the import keeps one */
        return rc;
    }
    *out = b;
    return SL_OK;
}

int sl__arrow_import(const char *fn, struct ArrowArray *array, const struct ArrowSchema *schema,
                     const struct sl__arrow_place *place, sl_batch_t **out)
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
    if (is_struct)
        rc = check_struct(fn, array, s, place);
    else
        rc = check_column(fn, array, &s->fields[0], 0, array->length);
    if (rc == SL_OK)
        rc = wait_event(fn, place->sync_event);
    if (rc != SL_OK) {
        sl__schema_free(s);
        return rc;
    }

    struct foreign_holder *h = sl__malloc(sizeof *h);
    sl_batch_t *b = NULL;
    if (h) {
        atomic_init(&h->refs, 1);
        memset(&h->array, 0, sizeof h->array);
        rc = build_batch(array, s, is_struct, h, place, &b);
    }
    sl__schema_free(s);
    if (!h || rc != SL_OK) {
        if (h)
            holder_unref(h); /* the last reference; array.release is NULL: nothing runs */
        return sl__set_last_error(SL_ENOMEM, "%s: out of memory", fn);
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
    int rc = sl__arrow_import(fn, array, schema, &host, out);
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
    int rc = sl__arrow_import(fn, &array->array, schema, &place, out);
    if (rc == SL_OK)
        release_schema(schema);
    return rc;
}
