/* write.csv: writes its input to a CSV file (a sink with no output rows; a plan ends in
 * it). Each worker formats the batches it sinks into text right away, in parallel;
 * finalize writes the pieces in source order (source task index, then emit order) to a
 * temporary file beside `path` and renames it over `path`, so readers never see half
 * a file. Values are written as sl_batch_value_format prints them (floats with enough
 * digits to read back the same bits, dates YYYY-MM-DD, decimals exactly); strings are
 * quoted when they hold the delimiter, a quote or a line end, or equal the null text;
 * nulls as the `null` text (a lone null field in a one-column file is written as "" so
 * the line is not taken for an empty line). */
#include <stdio.h>
#include <string.h>

#include "common/values.h"
#include "file_int.h"
#include "value_text.h"

struct wcsv_data {
    char *path;
    int header;
    int delim;
    char *null_text;
};

static const struct sl_option_def wcsv_options[] = {
    {"path", SL_OPT_STRING, NULL, "file to write (replaced atomically)"},
    {"header", SL_OPT_BOOL, "true", "write a header record with the column names"},
    {"delimiter", SL_OPT_STRING, ",", "field separator: one character, or \\t"},
    {"null", SL_OPT_STRING, "", "the text written for null"},
};

static void wcsv_data_free(void *p)
{
    struct wcsv_data *d = p;
    sl__free_str(d->path);
    sl__free_str(d->null_text);
    sl__free(d, sizeof *d);
}

static int wcsv_bind(sl_bind_t *b)
{
    const char *path, *delim, *null_text;
    int header, rc;
    if ((rc = sl_bind_option_str(b, "path", &path)) < 0 ||
        (rc = sl_bind_option_bool(b, "header", &header)) < 0 ||
        (rc = sl_bind_option_str(b, "delimiter", &delim)) < 0 ||
        (rc = sl_bind_option_str(b, "null", &null_text)) < 0)
        return rc;
    int dc = sl__parse_delimiter(delim);
    if (dc < 0)
        return sl_bind_fail(b, SL_EINVAL, "delimiter must be one character other than a quote "
                            "or a line end (or \\t), got \"%s\"", delim);
    if (sl_schema_num_fields(sl_bind_input_schema(b, 0)) == 0)
        return sl_bind_fail(b, SL_EINVAL, "its input has no columns");
    struct wcsv_data *d = sl__calloc(1, sizeof *d);
    if (!d)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    sl_bind_set_data(b, d, wcsv_data_free);
    d->path = sl__strdup(path);
    d->null_text = sl__strdup(null_text);
    if (!d->path || !d->null_text)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    d->header = header;
    d->delim = dc;
    return SL_OK;
}

/* ---- text buffer ---- */

struct tbuf {
    char *p;
    size_t n, cap;
};

static int tbuf_reserve(struct tbuf *t, size_t more)
{
    if (t->n + more <= t->cap)
        return SL_OK;
    size_t nc = t->cap ? t->cap * 2 : 4096;
    while (nc < t->n + more)
        nc *= 2;
    char *np = sl__realloc(t->p, t->n, nc);
    if (!np)
        return SL_ENOMEM;
    t->p = np;
    t->cap = nc;
    return SL_OK;
}

/* Appends a field, quoted (with "" escapes) if it holds the delimiter, a quote or a
 * line end, or if force_quote. */
static int tbuf_field(struct tbuf *t, const char *s, size_t len, int delim, int force_quote)
{
    int quote = force_quote;
    for (size_t i = 0; i < len && !quote; i++)
        quote = s[i] == delim || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
    if (tbuf_reserve(t, 2 * len + 2) < 0)
        return SL_ENOMEM;
    if (!quote) {
        memcpy(t->p + t->n, s, len);
        t->n += len;
        return SL_OK;
    }
    t->p[t->n++] = '"';
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '"')
            t->p[t->n++] = '"';
        t->p[t->n++] = s[i];
    }
    t->p[t->n++] = '"';
    return SL_OK;
}

static int format_batch(const struct wcsv_data *d, const sl_batch_t *b, struct tbuf *t)
{
    int nc = b->n_cols;
    size_t null_len = strlen(d->null_text);
    int force = nc == 1 && null_len == 0;
    struct sl__colview views[nc > 0 ? nc : 1];
    for (int c = 0; c < nc; c++)
        sl__colview_get(b, c, &views[c]);
    for (int64_t r = 0; r < b->n_rows; r++) {
        for (int c = 0; c < nc; c++) {
            const struct sl__col *col = &b->cols[c];
            if (tbuf_reserve(t, 48) < 0)
                return SL_ENOMEM;
            if (!sl__col_valid(col, r)) {
                if (tbuf_field(t, d->null_text, null_len, d->delim, force) < 0)
                    return SL_ENOMEM;
            } else if (sl_type_is_string(col->type)) {
                int64_t len;
                const char *v = sl__colview_str(&views[c], r, &len);
                /* Quoted when it could be read back as null or as an empty line. */
                int q = (size_t)len == null_len && memcmp(v, d->null_text, null_len) == 0;
                if (tbuf_field(t, v, (size_t)len, d->delim, q || (force && len == 0)) < 0)
                    return SL_ENOMEM;
            } else {
                char *o = t->p + t->n;
                size_t k = sl__value_format(&views[c].c, r, o);
                /* A number or date never holds a quote or a line end; quote it only if it
                 * holds the delimiter (say '.' or '-'). */
                if (memchr(o, d->delim, k)) {
                    char tmp[48];
                    memcpy(tmp, o, k);
                    if (tbuf_field(t, tmp, k, d->delim, 1) < 0)
                        return SL_ENOMEM;
                } else {
                    t->n += k;
                }
            }
            if (tbuf_reserve(t, 1) < 0)
                return SL_ENOMEM;
            t->p[t->n++] = c + 1 < nc ? (char)d->delim : '\n';
        }
    }
    return SL_OK;
}

static void free_text(void *p, size_t bytes)
{
    (void)bytes;
    sl__free(p, 0);
}

static void wcsv_fini_local(const sl_op_t *op, void *gs, void *ls)
{
    (void)op;
    (void)gs;
    sl__pieces_free(ls, free_text);
}

static void wcsv_fini_global(const sl_op_t *op, void *gs)
{
    (void)op;
    sl__pieces_free(gs, free_text);
}

static int wcsv_sink(sl_task_t *t)
{
    const struct wcsv_data *d = sl_op_data(sl_task_op(t));
    struct sl__pieces *ls = sl_task_lstate(t);
    if (!ls)
        return SL_ENOMEM;
    const sl_batch_t *b = sl_task_input(t);
    if (b->n_rows == 0)
        return SL_OK;
    struct tbuf tb = {0};
    locale_t prev = sl__c_locale_begin();
    int rc = format_batch(d, b, &tb);
    sl__c_locale_end(prev);
    if (rc < 0 || sl__pieces_push(ls, sl_task_index(t), tb.p, tb.n) < 0) {
        sl__free(tb.p, 0);
        return sl_task_fail(t, SL_ENOMEM, "out of memory formatting %lld rows",
                            (long long)b->n_rows);
    }
    return SL_OK;
}

static int wcsv_combine(sl_task_t *t)
{
    if (sl__pieces_move(sl_task_gstate(t), sl_task_lstate(t)) < 0)
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    return SL_OK;
}

static int wcsv_finalize(sl_task_t *t)
{
    const struct wcsv_data *d = sl_op_data(sl_task_op(t));
    struct sl__pieces *g = sl_task_gstate(t);
    const sl_schema_t *s = sl_op_input_schema(sl_task_op(t), 0);
    sl__pieces_sort(g);
    char err[512];
    struct sl__wfile w;
    int rc = sl__wfile_open(&w, d->path, t, err, sizeof err);
    if (rc < 0)
        return sl_task_fail(t, rc, "%s", err);
    if (d->header) {
        struct tbuf tb = {0};
        for (int c = 0; c < s->n_fields && rc >= 0; c++) {
            const char *name = s->fields[c].name;
            rc = tbuf_field(&tb, name, strlen(name), d->delim, 0);
            if (rc >= 0 && (rc = tbuf_reserve(&tb, 1)) >= 0)
                tb.p[tb.n++] = c + 1 < s->n_fields ? (char)d->delim : '\n';
        }
        if (rc >= 0)
            rc = sl__wfile_write(&w, tb.p, tb.n, err, sizeof err);
        else
            snprintf(err, sizeof err, "out of memory");
        sl__free(tb.p, 0);
    }
    for (int64_t i = 0; i < g->n && rc >= 0; i++)
        rc = sl__wfile_write(&w, g->v[i].ptr, g->v[i].bytes, err, sizeof err);
    if (rc >= 0)
        rc = sl__wfile_commit(&w, err, sizeof err);
    if (rc < 0) {
        sl__wfile_abort(&w); /* no temporary file stays behind */
        return rc == SL_ECANCELED ? rc : sl_task_fail(t, rc, "%s", err);
    }
    return SL_OK;
}

static const struct sl_impl sink_impls[] = {{.device = SL_DEVICE_CPU, .run = wcsv_sink}};
static const struct sl_phase sink_phase = {sink_impls, 1, sl__cost_linear};
static const struct sl_impl combine_impls[] = {{.device = SL_DEVICE_CPU, .run = wcsv_combine}};
static const struct sl_phase combine_phase = {combine_impls, 1, NULL};
static const struct sl_impl finalize_impls[] = {{.device = SL_DEVICE_CPU, .run = wcsv_finalize}};
static const struct sl_phase finalize_phase = {finalize_impls, 1, NULL};

const struct sl_op_def sl__write_csv_def = {
    .abi_version = SL_OP_ABI_VERSION,
    .flags = SL_OP_SINK,
    .name = "write.csv",
    .doc = "writes its input to a CSV file (atomically replaced)",
    .min_inputs = 1,
    .max_inputs = 1,
    .options = wcsv_options,
    .n_options = sizeof wcsv_options / sizeof wcsv_options[0],
    .bind = wcsv_bind,
    .global_state_bytes = sizeof(struct sl__pieces),
    .local_state_bytes = sizeof(struct sl__pieces),
    .fini_global = wcsv_fini_global,
    .fini_local = wcsv_fini_local,
    .sink = &sink_phase,
    .combine = &combine_phase,
    .finalize = &finalize_phase,
};
