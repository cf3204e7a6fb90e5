/* Tables through the Arrow C Stream Interface.
 *
 * Export: the stream holds a reference to the table and yields its batches in order,
 * each exported as by sl_batch_export_arrow (zero-copy). get_schema works at any time
 * before release (a table without batches has a struct schema with no children);
 * after the last batch get_next yields a released array, again on every later call.
 * Callbacks return 0 or an errno value; get_last_error then describes the failure.
 *
 * Import: pulls the schema and every batch into a new table, then releases the
 * stream. On failure nothing is released: the caller still owns the stream (it may
 * have been partly consumed) and must release it, as with sl_batch_import_arrow.
 */
#include <errno.h>
#include <stdio.h>

#include "arrow_int.h"

/* ---------------- export ---------------- */

struct export_stream {
    sl_table_t *t;
    int64_t next;           /* index of the batch get_next yields next */
    bool has_error;
    char error[SL__MSG_MAX]; /* the last failure, for get_last_error */
};

/* Records the thread's last sluice error on the stream and maps the code to errno. */
static int stream_fail(struct export_stream *p, int code)
{
    snprintf(p->error, sizeof p->error, "%s", sl_last_errmsg());
    p->has_error = true;
    switch (code) {
    case SL_ENOMEM:
        return ENOMEM;
    case SL_EUNSUPPORTED:
        return ENOTSUP;
    default:
        return EINVAL;
    }
}

static int stream_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    struct export_stream *p = s->private_data;
    int rc = sl__arrow_export_schema(p->t->schema, out);
    return rc == SL_OK ? 0 : stream_fail(p, rc);
}

static int stream_get_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    struct export_stream *p = s->private_data;
    if (p->next >= p->t->n_batches) {
        memset(out, 0, sizeof *out); /* released array: the end of the stream */
        return 0;
    }
    int rc = sl__arrow_export_array("ArrowArrayStream.get_next", p->t->batches[p->next], out,
                                    false);
    if (rc != SL_OK)
        return stream_fail(p, rc);
    p->next++;
    return 0;
}

static const char *stream_get_last_error(struct ArrowArrayStream *s)
{
    struct export_stream *p = s->private_data;
    return p->has_error ? p->error : NULL;
}

static void stream_release(struct ArrowArrayStream *s)
{
    struct export_stream *p = s->private_data;
    sl_table_unref(p->t);
    sl__free(p, sizeof *p);
    s->release = NULL;
}

int sl_table_export_stream(sl_table_t *t, struct ArrowArrayStream *stream)
{
    if (!t || !stream)
        return sl__set_last_error(SL_EINVAL, "sl_table_export_stream: NULL argument");
    memset(stream, 0, sizeof *stream);
    struct export_stream *p = sl__malloc(sizeof *p);
    if (!p)
        return sl__set_last_error(SL_ENOMEM, "sl_table_export_stream: out of memory");
    sl_table_ref(t);
    p->t = t;
    p->next = 0;
    p->has_error = false;
    p->error[0] = '\0';
    *stream = (struct ArrowArrayStream){
        .get_schema = stream_get_schema,
        .get_next = stream_get_next,
        .get_last_error = stream_get_last_error,
        .release = stream_release,
        .private_data = p,
    };
    return SL_OK;
}

/* ---------------- import ---------------- */

static const char import_fn[] = "sl_table_import_stream";

static int producer_error(struct ArrowArrayStream *s, const char *call, int err)
{
    const char *msg = s->get_last_error ? s->get_last_error(s) : NULL;
    /* A producer out of memory is what sluice's own ENOMEM is: the caller may retry. */
    return sl__set_last_error(err == ENOMEM ? SL_ENOMEM : SL_EIO, "%s: the stream's %s failed (errno %d): %s", import_fn,
                              call, err, msg ? msg : "no message");
}

/* Pulls every array of the stream into t, importing each with `schema`. */
static int pull_batches(struct ArrowArrayStream *s, const struct ArrowSchema *schema,
                        sl_table_t *t)
{
    static const struct sl__arrow_place host = {SL__MEM_FOREIGN, -1, NULL};
    struct sl__arrow_dicts dicts = {0, NULL}; /* batches with the same dictionary share it */
    int rc = SL_OK;
    for (;;) {
        struct ArrowArray a;
        memset(&a, 0, sizeof a);
        int err = s->get_next(s, &a);
        if (err != 0) {
            rc = producer_error(s, "get_next", err);
            break;
        }
        if (!a.release)
            break; /* end of stream */
        sl_batch_t *b;
        rc = sl__arrow_import(import_fn, &a, schema, &host, &dicts, &b);
        if (rc != SL_OK) {
            a.release(&a); /* we own what get_next produced; the import moved nothing */
            break;
        }
        rc = sl_table_append(t, b);
        sl_batch_unref(b);
        if (rc != SL_OK)
            break;
    }
    sl__arrow_dicts_free(&dicts);
    return rc;
}

/* The table's schema as the stream describes it, so that a stream without batches
 * still gives a table with columns. */
static int schema_from_stream(const struct ArrowSchema *schema, sl_table_t *t)
{
    bool is_struct;
    sl_schema_t *s;
    int rc = sl__arrow_parse_schema(import_fn, schema, &is_struct, &s);
    if (rc == SL_OK)
        t->schema = s;
    return rc;
}

int sl_table_import_stream(struct ArrowArrayStream *stream, sl_table_t **out)
{
    if (!out)
        return sl__set_last_error(SL_EINVAL, "%s: NULL out", import_fn);
    *out = NULL;
    if (!stream || !stream->release || !stream->get_schema || !stream->get_next)
        return sl__set_last_error(SL_EINVAL, "%s: NULL or released stream", import_fn);
    struct ArrowSchema schema;
    memset(&schema, 0, sizeof schema);
    int err = stream->get_schema(stream, &schema);
    if (err != 0)
        return producer_error(stream, "get_schema", err);
    if (!schema.release)
        return sl__set_last_error(SL_EFORMAT, "%s: get_schema returned a released schema",
                                  import_fn);
    sl_table_t *t;
    int rc = sl_table_create(&t);
    if (rc == SL_OK)
        rc = schema_from_stream(&schema, t);
    if (rc == SL_OK)
        rc = pull_batches(stream, &schema, t);
    schema.release(&schema);
    if (rc != SL_OK) {
        sl_table_unref(t);
        return rc;
    }
    stream->release(stream);
    stream->release = NULL;
    *out = t;
    return SL_OK;
}
