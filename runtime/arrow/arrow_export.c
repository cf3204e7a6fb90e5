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

/* Private data of one exported column (child array). */
struct export_col {
    const void *buffers[2]; /* validity (or NULL), values */
    struct sl__buf *data;
    struct sl__buf *validity;
};

/* Private data of the exported struct array; the child pointers and the child
 * structs live in the same allocation, right after it. */
struct export_batch {
    size_t bytes;
    int64_t n_children;
    const void *buffers[1]; /* no struct-level validity */
    struct ArrowArray **children;
    struct ArrowArray *child_arrays;
};

static void column_release(struct ArrowArray *a)
{
    struct export_col *p = a->private_data;
    sl__buf_unref(p->data);
    sl__buf_unref(p->validity);
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

static int export_column(const struct sl__col *col, int64_t n_rows, struct ArrowArray *out)
{
    struct export_col *p = sl__malloc(sizeof *p);
    if (!p)
        return SL_ENOMEM;
    p->data = col->data;
    p->validity = col->validity;
    if (p->data)
        sl__buf_ref(p->data);
    if (p->validity)
        sl__buf_ref(p->validity);
    p->buffers[0] = p->validity ? p->validity->ptr : NULL;
    p->buffers[1] = p->data ? p->data->ptr : NULL;
    *out = (struct ArrowArray){
        .length = n_rows,
        .null_count = col->validity ? col->null_count : 0,
        .offset = col->offset,
        .n_buffers = 2,
        .n_children = 0,
        .buffers = p->buffers,
        .children = NULL,
        .dictionary = NULL,
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
    for (int i = 0; !allow_device && i < b->n_cols; i++) {
        if (col_on_device(&b->cols[i]))
            return sl__set_last_error(SL_EUNSUPPORTED, "%s: column %d ('%s') lives on GPU "
                                      "memory; export it with sl_batch_export_device_arrow",
                                      fn, i, b->schema->fields[i].name);
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

static void field_release(struct ArrowSchema *s)
{
    sl__free_str(s->private_data);
    s->release = NULL;
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
        char *name = sl__strdup(s->fields[i].name);
        if (!name) {
            schema_release(&top);
            return sl__set_last_error(SL_ENOMEM, "exporting a schema: out of memory");
        }
        p->child_schemas[i] = (struct ArrowSchema){
            .format = sl__arrow_format(s->fields[i].type),
            .name = name,
            .metadata = NULL,
            .flags = ARROW_FLAG_NULLABLE, /* any sluice column may hold nulls */
            .n_children = 0,
            .children = NULL,
            .dictionary = NULL,
            .release = field_release,
            .private_data = name,
        };
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
