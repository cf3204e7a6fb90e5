/* Exporting sluice batches and schemas through the Arrow C Data Interface and the
 * C Device Data Interface.
 *
 * A batch becomes a struct array ("+s", offset 0, no validity) whose children are the
 * columns. Export is zero-copy: each child takes its own references to the column's
 * sluice buffers and presents them as they are, with the column's offset as the
 * child's offset, so nothing is copied or re-based.
 *
 * Release follows the specification: each child has its own private data and release
 * callback, so a consumer may move a child out and release the parent first; the
 * parent's release releases only children still unreleased, and every release sets
 * `release` to NULL. Schemas are built the same way (the child names are copies, so
 * they outlive the batch).
 *
 * On failure the outputs are marked released (release == NULL) and hold nothing.
 */
#include "arrow_int.h"

/* ---------------- arrays ---------------- */

/* Private data of the exported struct array; the child pointers and the child
 * structs live in the same allocation, right after it. */
struct export_batch {
    size_t bytes;
    int64_t n_children;
    const void *buffers[1]; /* no struct-level validity */
    struct ArrowArray **children;
    struct ArrowArray *child_arrays;
};

/* Private data of one exported column (child array) or dictionary. */
struct export_col {
    const void *buffers[3]; /* validity (or NULL), values or offsets, string bytes */
    struct sl__buf *bufs[3]; /* the references behind buffers[] */
    struct sl__dict *dict;   /* DICT: the dictionary the dictionary array shows */
    struct ArrowArray *dictionary; /* DICT: the dictionary array (own allocation) */
};

/* Stands in for the bytes of strings that are all empty: Arrow wants a pointer. */
static _Alignas(SL__ALIGN) const char no_bytes[8];

static void column_release(struct ArrowArray *a)
{
    struct export_col *p = a->private_data;
    for (int k = 0; k < 3; k++)
        sl__buf_unref(p->bufs[k]);
    if (p->dictionary) {
        if (p->dictionary->release) /* NULL when the consumer moved it out */
            p->dictionary->release(p->dictionary);
        sl__free(p->dictionary, sizeof *p->dictionary);
    }
    sl__dict_unref(p->dict);
    sl__free(p, sizeof *p);
    a->release = NULL;
}

static void batch_release(struct ArrowArray *a)
{
    struct export_batch *p = a->private_data;
    for (int64_t i = 0; i < p->n_children; i++) {
        struct ArrowArray *c = p->children[i];
        if (c->release) /* NULL when the consumer moved the child out */
            c->release(c);
    }
    sl__free(p, p->bytes);
    a->release = NULL;
}

/* Holds a reference to b in slot k of p (b may be NULL). */
static void hold(struct export_col *p, int k, struct sl__buf *b)
{
    p->bufs[k] = b;
    if (b)
        sl__buf_ref(b);
    p->buffers[k] = b ? b->ptr : NULL;
}

/* The dictionary of a DICT column as a utf8 array sharing its buffers. */
static struct ArrowArray *export_dictionary(struct sl__dict *d)
{
    struct export_col *p = sl__calloc(1, sizeof *p);
    struct ArrowArray *a = sl__malloc(sizeof *a);
    if (!p || !a) {
        sl__free(p, sizeof *p);
        sl__free(a, sizeof *a);
        return NULL;
    }
    hold(p, 1, d->offsets);
    hold(p, 2, d->chars);
    if (!p->buffers[2])
        p->buffers[2] = no_bytes;
    *a = (struct ArrowArray){.length = d->n, .n_buffers = 3, .buffers = p->buffers,
                             .release = column_release, .private_data = p};
    return a;
}

/* Values whose sluice layout differs from Arrow's (bool bytes, decimals of precision
 * <= 18) are converted into new buffers holding just the column's rows, so the
 * export's offset is 0 and its validity a copy starting at bit 0. */
static int export_converted(const struct sl__col *col, int64_t n_rows, struct export_col *p,
                            int64_t *offset)
{
    const uint8_t *v = (const uint8_t *)col->data->ptr + (size_t)col->offset *
                       sl_type_width(col->type);
    struct sl__buf *data;
    if (col->type == SL_TYPE_BOOL) {
        data = sl__bytes_to_bits(v, n_rows);
    } else {
        data = sl__buf_new(n_rows * 16);
        if (data)
            sl__dec64_widen((const int64_t *)v, n_rows, data->ptr);
    }
    struct sl__buf *valid = NULL;
    if (data && col->validity)
        valid = sl__bits_copy(col->validity->ptr, col->offset, n_rows);
    if (!data || (col->validity && !valid)) {
        sl__buf_unref(data);
        return SL_ENOMEM;
    }
    hold(p, 0, valid);
    hold(p, 1, data);
    sl__buf_unref(valid); /* hold took the references that stay */
    sl__buf_unref(data);
    *offset = 0;
    return SL_OK;
}

static bool needs_conversion(enum sl_type type)
{
    return type == SL_TYPE_BOOL || (SL_TYPE_ID(type) == SL_TYPE_DECIMAL &&
                                    sl_type_width(type) == 8);
}

static int export_column(const struct sl__col *col, int64_t n_rows, struct ArrowArray *out)
{
    struct export_col *p = sl__calloc(1, sizeof *p);
    if (!p)
        return SL_ENOMEM;
    int64_t offset = col->offset, n_buffers = 2;
    struct ArrowArray tmp = {.release = column_release, .private_data = p};
    int rc = SL_OK;
    if (needs_conversion(col->type)) {
        rc = export_converted(col, n_rows, p, &offset);
    } else {
        hold(p, 0, col->validity);
        hold(p, 1, col->data);
    }
    if (col->type == SL_TYPE_UTF8 || col->type == SL_TYPE_LARGE_UTF8) {
        n_buffers = 3;
        hold(p, 2, col->chars);
        if (!p->buffers[2])
            p->buffers[2] = no_bytes;
    }
    if (col->type == SL_TYPE_DICT) {
        sl__dict_ref(col->dict);
        p->dict = col->dict;
        p->dictionary = export_dictionary(col->dict);
        if (!p->dictionary)
            rc = SL_ENOMEM;
    }
    if (rc != SL_OK) {
        column_release(&tmp);
        return rc;
    }
    *out = (struct ArrowArray){
        .length = n_rows,
        .null_count = col->validity ? col->null_count : 0,
        .offset = offset,
        .n_buffers = n_buffers,
        .n_children = 0,
        .buffers = p->buffers,
        .children = NULL,
        .dictionary = p->dictionary,
        .release = column_release,
        .private_data = p,
    };
    return SL_OK;
}

static bool col_on_device(const struct sl__col *c)
{
    return (c->data && c->data->kind == SL__MEM_DEVICE) ||
           (c->validity && c->validity->kind == SL__MEM_DEVICE);
}

int sl__arrow_export_array(const char *fn, sl_batch_t *b, struct ArrowArray *out,
                           bool allow_device)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < b->n_cols; i++) {
        const struct sl__col *c = &b->cols[i];
        if (!allow_device && col_on_device(c))
            return sl__set_last_error(SL_EUNSUPPORTED, "%s: column %d ('%s') lives on GPU "
                                      "memory; export it with sl_batch_export_device_arrow",
                                      fn, i, b->schema->fields[i].name);
        if (col_on_device(c) && (needs_conversion(c->type) || sl_type_is_string(c->type)))
            return sl__set_last_error(SL_EUNSUPPORTED, "%s: column %d ('%s') of type %s lives "
                                      "on GPU memory, and sluice converts that type only "
                                      "from host memory", fn, i, b->schema->fields[i].name,
                                      sl_type_name(c->type));
    }
    size_t n = (size_t)b->n_cols;
    size_t bytes = sizeof(struct export_batch) +
                   n * (sizeof(struct ArrowArray *) + sizeof(struct ArrowArray));
    struct export_batch *p = sl__malloc(bytes);
    if (!p)
        return sl__set_last_error(SL_ENOMEM, "%s: out of memory", fn);
    p->bytes = bytes;
    p->n_children = (int64_t)n;
    p->buffers[0] = NULL;
    p->children = (struct ArrowArray **)(p + 1);
    p->child_arrays = (struct ArrowArray *)(p->children + n);
    for (size_t i = 0; i < n; i++) {
        p->children[i] = &p->child_arrays[i];
        memset(&p->child_arrays[i], 0, sizeof p->child_arrays[i]);
    }
    struct ArrowArray a = {
        .length = b->n_rows,
        .null_count = 0,
        .offset = 0,
        .n_buffers = 1,
        .n_children = (int64_t)n,
        .buffers = p->buffers,
        .children = n ? p->children : NULL,
        .dictionary = NULL,
        .release = batch_release,
        .private_data = p,
    };
    for (size_t i = 0; i < n; i++) {
        if (export_column(&b->cols[i], b->n_rows, &p->child_arrays[i]) != SL_OK) {
            batch_release(&a); /* releases the children made so far */
            return sl__set_last_error(SL_ENOMEM, "%s: out of memory", fn);
        }
    }
    *out = a;
    return SL_OK;
}

/* ---------------- schemas ---------------- */

/* Private data of the exported struct schema, followed by the child pointers and the
 * child structs. A child's private data is its name (a copy). */
struct export_schema {
    size_t bytes;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *child_schemas;
};

/* Private data of one exported field: its name (a copy), its format, and for a DICT
 * column its dictionary's schema (own allocation, released with the field). */
struct export_field {
    char *name;
    char format[32];
};

static void field_release(struct ArrowSchema *s)
{
    struct export_field *p = s->private_data;
    if (s->dictionary) {
        if (s->dictionary->release) /* NULL when the consumer moved it out */
            s->dictionary->release(s->dictionary);
        sl__free(s->dictionary, sizeof *s->dictionary);
    }
    sl__free_str(p->name);
    sl__free(p, sizeof *p);
    s->release = NULL;
}

/* Makes the schema of one field; the caller releases it with field_release. */
static int make_field(const char *name, enum sl_type type, struct ArrowSchema *out)
{
    struct export_field *p = sl__calloc(1, sizeof *p);
    if (!p)
        return SL_ENOMEM;
    *out = (struct ArrowSchema){
        .format = sl__arrow_format(type, p->format),
        .name = NULL,
        .flags = ARROW_FLAG_NULLABLE, /* any sluice column may hold nulls */
        .release = field_release,
        .private_data = p,
    };
    p->name = sl__strdup(name);
    out->name = p->name;
    if (!p->name)
        return SL_ENOMEM;
    if (type == SL_TYPE_DICT) {
        /* Zeroed: field_release frees it, and releases it once make_field set release. */
        out->dictionary = sl__calloc(1, sizeof *out->dictionary);
        if (!out->dictionary)
            return SL_ENOMEM;
        return make_field("", SL_TYPE_UTF8, out->dictionary);
    }
    return SL_OK;
}

static void schema_release(struct ArrowSchema *s)
{
    struct export_schema *p = s->private_data;
    for (int64_t i = 0; i < p->n_children; i++) {
        struct ArrowSchema *c = p->children[i];
        if (c->release)
            c->release(c);
    }
    sl__free(p, p->bytes);
    s->release = NULL;
}

int sl__arrow_export_schema(const sl_schema_t *s, struct ArrowSchema *out)
{
    memset(out, 0, sizeof *out);
    size_t n = s ? (size_t)s->n_fields : 0;
    size_t bytes = sizeof(struct export_schema) +
                   n * (sizeof(struct ArrowSchema *) + sizeof(struct ArrowSchema));
    struct export_schema *p = sl__malloc(bytes);
    if (!p)
        return sl__set_last_error(SL_ENOMEM, "exporting a schema: out of memory");
    p->bytes = bytes;
    p->n_children = (int64_t)n;
    p->children = (struct ArrowSchema **)(p + 1);
    p->child_schemas = (struct ArrowSchema *)(p->children + n);
    for (size_t i = 0; i < n; i++) {
        p->children[i] = &p->child_schemas[i];
        memset(&p->child_schemas[i], 0, sizeof p->child_schemas[i]);
    }
    struct ArrowSchema top = {
        .format = "+s",
        .name = "",
        .metadata = NULL,
        .flags = 0,
        .n_children = (int64_t)n,
        .children = n ? p->children : NULL,
        .dictionary = NULL,
        .release = schema_release,
        .private_data = p,
    };
    for (size_t i = 0; i < n; i++) {
        if (make_field(s->fields[i].name, s->fields[i].type, &p->child_schemas[i]) != SL_OK) {
            schema_release(&top);
            return sl__set_last_error(SL_ENOMEM, "exporting a schema: out of memory");
        }
    }
    *out = top;
    return SL_OK;
}

/* ---------------- public calls ---------------- */

int sl_batch_export_schema(const sl_batch_t *b, struct ArrowSchema *schema)
{
    if (!b || !schema)
        return sl__set_last_error(SL_EINVAL, "sl_batch_export_schema: NULL argument");
    return sl__arrow_export_schema(b->schema, schema);
}

/* Exports array and schema together: both or neither. */
static int export_both(const char *fn, sl_batch_t *b, struct ArrowArray *array,
                       struct ArrowSchema *schema, bool allow_device)
{
    memset(schema, 0, sizeof *schema);
    int rc = sl__arrow_export_array(fn, b, array, allow_device);
    if (rc != SL_OK)
        return rc;
    rc = sl__arrow_export_schema(b->schema, schema);
    if (rc != SL_OK) {
        array->release(array);
        return sl__set_last_error(rc, "%s: out of memory", fn);
    }
    return SL_OK;
}

int sl_batch_export_arrow(sl_batch_t *b, struct ArrowArray *array, struct ArrowSchema *schema)
{
    if (!b || !array || !schema)
        return sl__set_last_error(SL_EINVAL, "sl_batch_export_arrow: NULL argument");
    return export_both("sl_batch_export_arrow", b, array, schema, false);
}

/* Finds where a batch's buffers live: all in host-accessible memory (CPU), or all on
 * one GPU (CUDA). Anything else cannot be one ArrowDeviceArray. */
static int batch_device(const char *fn, const sl_batch_t *b, ArrowDeviceType *type,
                        int64_t *id)
{
    bool on_host = false, on_gpu = false;
    int gpu = -1;
    for (int i = 0; i < b->n_cols; i++) {
        const struct sl__buf *bufs[2] = {b->cols[i].data, b->cols[i].validity};
        for (int k = 0; k < 2; k++) {
            if (!bufs[k])
                continue;
            if (bufs[k]->kind != SL__MEM_DEVICE) {
                on_host = true;
                continue;
            }
            if (on_gpu && bufs[k]->device != gpu)
                return sl__set_last_error(SL_EUNSUPPORTED, "%s: the batch's columns are on "
                                          "GPUs %d and %d; a device array has one device",
                                          fn, gpu, bufs[k]->device);
            on_gpu = true;
            gpu = bufs[k]->device;
        }
    }
    if (on_host && on_gpu)
        return sl__set_last_error(SL_EUNSUPPORTED, "%s: the batch mixes host and GPU columns; "
                                  "a device array has one device", fn);
    *type = on_gpu ? ARROW_DEVICE_CUDA : ARROW_DEVICE_CPU;
    *id = on_gpu ? gpu : -1; /* -1: the convention for devices without ids (CPU) */
    return SL_OK;
}

int sl_batch_export_device_arrow(sl_batch_t *b, struct ArrowDeviceArray *array,
                                 struct ArrowSchema *schema)
{
    static const char fn[] = "sl_batch_export_device_arrow";
    if (!b || !array || !schema)
        return sl__set_last_error(SL_EINVAL, "%s: NULL argument", fn);
    memset(array, 0, sizeof *array);
    memset(schema, 0, sizeof *schema);
    ArrowDeviceType type = ARROW_DEVICE_CPU;
    int64_t id = -1;
    int rc = batch_device(fn, b, &type, &id);
    if (rc != SL_OK)
        return rc;
    rc = export_both(fn, b, &array->array, schema, true);
    if (rc != SL_OK)
        return rc;
    array->device_type = type;
    array->device_id = id;
    /* Shared sluice buffers are complete (immutable once shared): nothing to wait on. */
    array->sync_event = NULL;
    return SL_OK;
}
