/* scan.csv: reads a CSV file (RFC 4180) with a declared, typed schema, in parallel.
 *
 * How the file is cut into parallel tasks (quoted fields may hold newlines, so a
 * newline is not always a record boundary):
 *  1. The file is mapped read-only and cut into byte ranges of range_bytes (16 MiB by
 *     default). One task per range counts its quotes and newlines and notes, for both
 *     guesses of "does this range start inside quotes?", the first newline that would
 *     end a record (the first newline after an even, respectively odd, number of
 *     quotes in the range) and how many newlines precede it.
 *  2. One task then walks the ranges in order: quote parity entering range i is the
 *     parity of all quotes before it (a doubled "" escape does not change parity), so
 *     the right guess is known and each range's first record start is fixed, as is its
 *     line number (a prefix sum of newline counts). Ranges without a record start
 *     merge into the previous one.
 *  3. The scan's source tasks, one per record start, parse the records that start in
 *     their span (the last may run past it) into column buffers and emit a batch every
 *     morsel of rows.
 * Phases 1 and 2 run in the node's finalize (the node is a sink without inputs, so its
 * finalize runs before its source pipeline). A stray quote inside an unquoted field
 * can fool step 2 for later ranges, but the task whose span holds that quote starts
 * at a true boundary and reports it, so the query fails and no wrong rows escape.
 *
 * Parsing rules: fields are separated by `delimiter`; records end with LF or CRLF (the
 * last may lack it); empty lines are skipped; a field that starts with '"' is quoted,
 * "" inside it is one quote, and only a delimiter or a line end may follow the closing
 * quote; a quote inside an unquoted field is an error. An unquoted field whose text
 * equals `null` is null (a quoted one too when `null` is empty, so "" is null by
 * default; with another null text a quoted "NA" is the string NA). Numbers may have
 * spaces around them; integers are decimal, range-checked; floats are what
 * strtod/strtof accept in the C locale (short decimals take Clinger's exact fast path);
 * bool is true/false/t/f/1/0; date32 YYYY-MM-DD; timestamp YYYY-MM-DD[ HH:MM:SS[.ffffff]];
 * decimals are exact (never through a float; more integer digits than precision - scale
 * or more nonzero fractional digits than the scale is an error); strings must be valid
 * UTF-8 (DICT columns get one dictionary per batch). With trailing_delimiter every
 * record ends with a delimiter (TPC-H .tbl); with quote="" quotes are ordinary
 * characters and every newline ends a record. A leading UTF-8 byte order mark is
 * skipped. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr.h"
#include "file_int.h"
#include "value_text.h"

#define DEFAULT_RANGE_BYTES (16ll << 20)

struct csv_data {
    char *path;
    struct sl__collist cols; /* declared fields in file order */
    int header;
    int delim;
    int trailing; /* every record ends with a delimiter (TPC-H .tbl) */
    int quote;    /* '"', or -1: quotes are ordinary characters */
    size_t *widths; /* per declared field: bytes per value */
    char *null_text;
    size_t null_len;
    int64_t range_bytes;
    int *out_of_field; /* per declared field: output column, or -1 (skipped) */
    struct sl__expr *where; /* predicate pushed into the scan, or NULL */
};

struct csv_range {
    int64_t n_quotes, n_nl;
    int64_t fb[2];   /* first record-ending newline if entering parity is 0 / 1; -1 none */
    int64_t nl_b[2]; /* newlines of the range before it */
};

struct csv_span {
    int64_t start, end, line;
};

struct csv_global {
    struct sl__fmap *map;
    int64_t n_ranges;
    struct csv_range *ranges;
    int64_t n_spans;
    struct csv_span *spans;
};

static const struct sl_option_def csv_options[] = {
    {"path", SL_OPT_STRING, NULL, "file to read"},
    {"columns", SL_OPT_STRING, NULL, "the file's fields in order: \"k int32, v float64\""},
    {"header", SL_OPT_BOOL, "true", "the first record names the fields (checked)"},
    {"delimiter", SL_OPT_STRING, ",", "field separator: one character, or \\t"},
    {"trailing_delimiter", SL_OPT_BOOL, "false",
     "every record ends with a delimiter before its line end (TPC-H .tbl files)"},
    {"quote", SL_OPT_STRING, "\"", "the quote character, or \"\" for none (TPC-H .tbl)"},
    {"null", SL_OPT_STRING, "", "the text that means null"},
    {"select", SL_OPT_STRING, "", "columns to produce, in this order: \"v,k\" (all if empty)"},
    {"range_bytes", SL_OPT_INT, "16777216", "bytes per parallel parse range (tuning, tests)"},
    {"where", SL_OPT_STRING, "", "keep only rows where this predicate holds (as filter's)"},
};

static void csv_data_free(void *p)
{
    struct csv_data *d = p;
    sl__free_str(d->path);
    sl__free_str(d->null_text);
    sl__free(d->out_of_field, 0);
    sl__free(d->widths, 0);
    sl__collist_free(&d->cols);
    sl__expr_free(d->where);
    sl__free(d, sizeof *d);
}

/* where= binds to the output columns, so it comes after them. */
static int bind_where(sl_bind_t *b, struct csv_data *d)
{
    const char *where;
    int rc = sl_bind_option_str(b, "where", &where);
    return rc < 0 ? rc : sl__pred_bind(b, where, &d->where);
}

static int csv_bind(sl_bind_t *b)
{
    const char *path, *cols, *delim, *null_text, *sel, *quote;
    int64_t range_bytes;
    int header, trailing, rc;
    if ((rc = sl_bind_option_str(b, "path", &path)) < 0 ||
        (rc = sl_bind_option_str(b, "columns", &cols)) < 0 ||
        (rc = sl_bind_option_bool(b, "header", &header)) < 0 ||
        (rc = sl_bind_option_str(b, "delimiter", &delim)) < 0 ||
        (rc = sl_bind_option_bool(b, "trailing_delimiter", &trailing)) < 0 ||
        (rc = sl_bind_option_str(b, "quote", &quote)) < 0 ||
        (rc = sl_bind_option_str(b, "null", &null_text)) < 0 ||
        (rc = sl_bind_option_str(b, "select", &sel)) < 0 ||
        (rc = sl_bind_option_int(b, "range_bytes", &range_bytes)) < 0)
        return rc;
    int dc = sl__parse_delimiter(delim);
    if (dc < 0)
        return sl_bind_fail(b, SL_EINVAL, "delimiter must be one character other than a quote "
                            "or a line end (or \\t), got \"%s\"", delim);
    if (strcmp(quote, "\"") != 0 && *quote)
        return sl_bind_fail(b, SL_EINVAL, "quote must be \" or empty (none), got \"%s\"",
                            quote);
    if (range_bytes < 1)
        return sl_bind_fail(b, SL_EINVAL, "range_bytes must be >= 1, got %lld",
                            (long long)range_bytes);
    char err[256];
    /* A FIFO or device is refused already here, so explain says so too (stat does not
     * block); a missing file may still appear before the query runs. */
    if ((rc = sl__path_not_special(path, err, sizeof err)) < 0)
        return sl_bind_fail(b, rc, "%s", err);
    struct csv_data *d = sl__calloc(1, sizeof *d);
    if (!d)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    sl_bind_set_data(b, d, csv_data_free);
    if ((rc = sl__collist_parse(cols, 1, &d->cols, err, sizeof err)) < 0)
        return sl_bind_fail(b, rc, "columns: %s", err);
    d->path = sl__strdup(path);
    d->null_text = sl__strdup(null_text);
    d->out_of_field = sl__malloc((size_t)d->cols.n * sizeof *d->out_of_field);
    d->widths = sl__malloc((size_t)d->cols.n * sizeof *d->widths);
    if (!d->path || !d->null_text || !d->out_of_field || !d->widths)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    for (int i = 0; i < d->cols.n; i++)
        d->widths[i] = sl_type_width(d->cols.types[i]);
    d->null_len = strlen(null_text);
    d->header = header;
    d->delim = dc;
    d->trailing = trailing;
    d->quote = *quote ? '"' : -1;
    d->range_bytes = range_bytes;
    if (!*sel) {
        for (int i = 0; i < d->cols.n; i++) {
            d->out_of_field[i] = i;
            if ((rc = sl_bind_add_column(b, d->cols.names[i], d->cols.types[i])) < 0)
                return rc;
        }
        return bind_where(b, d);
    }
    struct sl__collist s;
    if ((rc = sl__collist_parse(sel, 0, &s, err, sizeof err)) < 0)
        return sl_bind_fail(b, rc, "select: %s", err);
    for (int i = 0; i < d->cols.n; i++)
        d->out_of_field[i] = -1;
    for (int k = 0; k < s.n; k++) {
        int f = -1;
        for (int i = 0; i < d->cols.n && f < 0; i++)
            f = strcmp(d->cols.names[i], s.names[k]) == 0 ? i : -1;
        if (f < 0) {
            rc = sl_bind_fail(b, SL_ENOTFOUND, "select: no column '%s' in columns=",
                              s.names[k]);
            sl__collist_free(&s);
            return rc;
        }
        d->out_of_field[f] = k;
        if ((rc = sl_bind_add_column(b, d->cols.names[f], d->cols.types[f])) < 0) {
            sl__collist_free(&s);
            return rc;
        }
    }
    sl__collist_free(&s);
    return bind_where(b, d);
}

static void csv_fini_global(const sl_op_t *op, void *gs)
{
    (void)op;
    struct csv_global *g = gs;
    sl__free(g->ranges, 0);
    sl__free(g->spans, 0);
    sl__fmap_unref(g->map);
}

/* ---------------- phase 1 and 2: record boundaries ---------------- */

/* Bytes of w equal to c: x has a zero byte exactly where w matches; the high bit of
 * ((x & 0x7f..) + 0x7f..) | x is set in every nonzero byte, with no carries across
 * bytes, so its complement's high bits mark exactly the matches. */
static inline int64_t count_byte(uint64_t w, uint8_t c)
{
    const uint64_t lo7 = 0x7f7f7f7f7f7f7f7full;
    uint64_t x = w ^ (0x0101010101010101ull * c);
    uint64_t t = ((x & lo7) + lo7) | x;
    return __builtin_popcountll(~t & ~lo7);
}

static int csv_range_stats(sl_task_t *t)
{
    const struct csv_data *d = sl_op_data(sl_task_op(t));
    struct csv_global *g = sl_task_gstate(t);
    int64_t i = sl_task_index(t);
    int64_t lo = i * d->range_bytes;
    int64_t hi = lo + d->range_bytes < (int64_t)g->map->bytes ? lo + d->range_bytes
                                                               : (int64_t)g->map->bytes;
    const uint8_t *p = g->map->base;
    struct csv_range r = {0, 0, {-1, -1}, {0, 0}};
    int found = 0;
    int64_t k = lo;
    for (; k < hi && found != 3; k++) {
        uint8_t c = p[k];
        if (c == d->quote) {
            r.n_quotes++;
        } else if (c == '\n') {
            /* Outside quotes if the local parity matches the entering guess. */
            int par = (int)(r.n_quotes & 1);
            if (r.fb[par] < 0) {
                r.fb[par] = k;
                r.nl_b[par] = r.n_nl;
                found |= 1 << par;
            }
            r.n_nl++;
        }
    }
    /* Both guesses settled: only counts remain, 8 bytes at a time. */
    for (; k + 8 <= hi; k += 8) {
        uint64_t w;
        memcpy(&w, p + k, 8);
        r.n_quotes += d->quote < 0 ? 0 : count_byte(w, '"');
        r.n_nl += count_byte(w, '\n');
    }
    for (; k < hi; k++) {
        r.n_quotes += p[k] == d->quote;
        r.n_nl += p[k] == '\n';
    }
    g->ranges[i] = r;
    return SL_OK;
}

static int csv_plan_spans(sl_task_t *t)
{
    struct csv_global *g = sl_task_gstate(t);
    int64_t size = (int64_t)g->map->bytes;
    g->spans = sl__calloc((size_t)g->n_ranges, sizeof *g->spans);
    if (!g->spans)
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    g->spans[0] = (struct csv_span){0, size, 1};
    int64_t n = 1, nl_before = 0;
    int par = 0;
    for (int64_t i = 0; i < g->n_ranges; i++) {
        const struct csv_range *r = &g->ranges[i];
        if (i > 0 && r->fb[par] >= 0 && r->fb[par] + 1 < size) {
            int64_t start = r->fb[par] + 1;
            g->spans[n - 1].end = start;
            g->spans[n] = (struct csv_span){start, size, 1 + nl_before + r->nl_b[par] + 1};
            n++;
        }
        nl_before += r->n_nl;
        par ^= (int)(r->n_quotes & 1);
    }
    g->n_spans = n;
    return SL_OK;
}

static const struct sl_impl stats_impls[] = {{.device = SL_DEVICE_CPU, .run = csv_range_stats}};
static const struct sl_phase stats_phase = {stats_impls, 1, NULL};
static const struct sl_impl spans_impls[] = {{.device = SL_DEVICE_CPU, .run = csv_plan_spans}};
static const struct sl_phase spans_phase = {spans_impls, 1, NULL};

static int csv_prepare(sl_task_t *t)
{
    const struct csv_data *d = sl_op_data(sl_task_op(t));
    struct csv_global *g = sl_task_gstate(t);
    char err[512];
    int rc = sl__fmap_open(d->path, UINT64_MAX, &g->map, err, sizeof err);
    if (rc < 0)
        return sl_task_fail(t, rc, "%s", err);
    if (g->map->bytes == 0) {
        if (d->header)
            return sl_task_fail(t, SL_EFORMAT, "'%s' is empty, but header=true expects a "
                                "header record", d->path);
        return SL_OK;
    }
    g->n_ranges = ((int64_t)g->map->bytes + d->range_bytes - 1) / d->range_bytes;
    g->ranges = sl__calloc((size_t)g->n_ranges, sizeof *g->ranges);
    if (!g->ranges)
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    return sl_task_spawn(t, &stats_phase, g->n_ranges, NULL, &spans_phase);
}

static int64_t csv_tasks(sl_task_t *t)
{
    return ((struct csv_global *)sl_task_gstate(t))->n_spans;
}

/* ---------------- phase 3: parsing ---------------- */

struct csv_parser {
    sl_task_t *t;
    const struct csv_data *d;
    const uint8_t *p;
    int64_t size, pos, line, line_start;
    char *scratch; /* unescaped quoted fields */
    size_t scratch_cap;
    /* the batch being filled */
    sl_batch_t *b;
    int64_t cap, rows;
    struct sl__pred_state pred; /* for where= */
    struct sl__text_col *tcols; /* per output column; type INVALID for non-strings */
};

struct csv_field {
    const char *txt;
    size_t len;
    int64_t line, col;   /* where the field starts, 1-based */
    int last;            /* 1 if the record ends after this field */
    int quoted;          /* 1 if it was quoted (a quoted field is null only if null="") */
    int64_t eline, ecol; /* where its record ends (the line end), if last */
};

static int csv_fail(struct csv_parser *ps, int code, int64_t line, int64_t col, const char *fmt,
                    ...) SL__PRINTF(5, 6);

static int csv_fail(struct csv_parser *ps, int code, int64_t line, int64_t col, const char *fmt,
                    ...)
{
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sl_task_fail(ps->t, code, "'%s' line %lld, column %lld: %s", ps->d->path,
                        (long long)line, (long long)col, msg);
}

static int scratch_put(struct csv_parser *ps, size_t n, const uint8_t *src, size_t len)
{
    if (n + len > ps->scratch_cap) {
        size_t nc = ps->scratch_cap ? ps->scratch_cap : 256;
        while (nc < n + len)
            nc *= 2;
        char *ns = sl__realloc(ps->scratch, ps->scratch_cap, nc);
        if (!ns)
            return sl_task_fail(ps->t, SL_ENOMEM, "out of memory");
        ps->scratch = ns;
        ps->scratch_cap = nc;
    }
    memcpy(ps->scratch + n, src, len);
    return SL_OK;
}

/* Consumes the end of a record at pos (LF, CRLF or end of file) if there is one. */
static int at_record_end(struct csv_parser *ps, int64_t pos, int64_t *after)
{
    if (pos >= ps->size) {
        *after = pos;
        return 1;
    }
    if (ps->p[pos] == '\n') {
        *after = pos + 1;
        return 1;
    }
    if (ps->p[pos] == '\r' && pos + 1 < ps->size && ps->p[pos + 1] == '\n') {
        *after = pos + 2;
        return 1;
    }
    if (ps->p[pos] == '\r' && pos + 1 == ps->size) {
        *after = pos + 1;
        return 1;
    }
    return 0;
}

static void new_line(struct csv_parser *ps, int64_t after)
{
    ps->line++;
    ps->line_start = after;
}

/* Parses a quoted field starting at ps->pos (on its quote). */
static int parse_quoted(struct csv_parser *ps, struct csv_field *f)
{
    const uint8_t *p = ps->p;
    int64_t k = ps->pos + 1, seg = k;
    size_t n = 0;
    int escaped = 0;
    for (;;) {
        while (k < ps->size && p[k] != '"') {
            if (p[k] == '\n')
                new_line(ps, k + 1);
            k++;
        }
        if (k >= ps->size)
            return csv_fail(ps, SL_EPARSE, f->line, f->col, "unterminated quoted field (the "
                            "file ends inside it)");
        if (k + 1 < ps->size && p[k + 1] == '"') { /* "" is one quote */
            if (scratch_put(ps, n, p + seg, (size_t)(k + 1 - seg)) < 0)
                return SL_ENOMEM;
            n += (size_t)(k + 1 - seg);
            escaped = 1;
            k += 2;
            seg = k;
            continue;
        }
        break; /* closing quote at k */
    }
    if (escaped) {
        if (scratch_put(ps, n, p + seg, (size_t)(k - seg)) < 0)
            return SL_ENOMEM;
        n += (size_t)(k - seg);
        f->txt = ps->scratch;
        f->len = n;
    } else {
        f->txt = (const char *)p + ps->pos + 1;
        f->len = (size_t)(k - ps->pos - 1);
    }
    k++; /* past the closing quote */
    int64_t after;
    if (at_record_end(ps, k, &after)) {
        f->last = 1;
        f->eline = ps->line;
        f->ecol = k - ps->line_start + 1;
        if (after > k && p[after - 1] == '\n')
            new_line(ps, after);
        ps->pos = after;
        return SL_OK;
    }
    if (p[k] == ps->d->delim) {
        f->last = 0;
        ps->pos = k + 1;
        return SL_OK;
    }
    return csv_fail(ps, SL_EPARSE, ps->line, k - ps->line_start + 1,
                    "unexpected character '%c' after a closing quote (expected the delimiter "
                    "or a line end)", p[k]);
}

/* Parses the field at ps->pos; sets f and moves pos past its delimiter or line end. */
static int parse_field(struct csv_parser *ps, struct csv_field *f)
{
    const uint8_t *p = ps->p;
    f->line = ps->line;
    f->col = ps->pos - ps->line_start + 1;
    int quote = ps->d->quote;
    f->quoted = ps->pos < ps->size && p[ps->pos] == quote;
    if (f->quoted)
        return parse_quoted(ps, f);
    int delim = ps->d->delim;
    int64_t k = ps->pos;
    /* Hot loop: stop at the delimiter, a line end or a quote. */
    while (k < ps->size) {
        uint8_t c = p[k];
        if (c == delim || c == '\n' || c == quote)
            break;
        k++;
    }
    if (k < ps->size && p[k] == quote)
        return csv_fail(ps, SL_EPARSE, ps->line, k - ps->line_start + 1,
                        "quote inside an unquoted field (quote the whole field and double "
                        "the quote)");
    f->txt = (const char *)p + ps->pos;
    if (k < ps->size && p[k] == delim) {
        f->len = (size_t)(k - ps->pos);
        f->last = 0;
        ps->pos = k + 1;
        return SL_OK;
    }
    /* A line end or the end of the file. */
    int64_t end = k;
    if (end > ps->pos && p[end - 1] == '\r')
        end--;
    f->len = (size_t)(end - ps->pos);
    f->last = 1;
    f->eline = ps->line;
    f->ecol = end - ps->line_start + 1;
    if (k < ps->size) {
        ps->pos = k + 1;
        new_line(ps, k + 1);
    } else {
        ps->pos = k;
    }
    return SL_OK;
}

/* ---- numbers ---- */

static void trim(const char **s, size_t *n)
{
    while (*n && ((*s)[0] == ' ' || (*s)[0] == '\t'))
        (*s)++, (*n)--;
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

/* 0 ok, -1 not a number, -2 out of int64 range. */
static int parse_i64(const char *s, size_t n, int64_t *out)
{
    trim(&s, &n);
    size_t i = 0;
    int neg = 0;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    if (i == n)
        return -1;
    uint64_t v = 0;
    int over = 0;
    for (; i < n; i++) {
        unsigned dg = (unsigned)(s[i] - '0');
        if (dg > 9)
            return -1;
        if (v > (UINT64_MAX - dg) / 10)
            over = 1;
        else
            v = v * 10 + dg;
    }
    if (over || v > (uint64_t)INT64_MAX + (uint64_t)neg)
        return -2;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

/* Clinger's fast path: a plain decimal ([-+]digits[.digits][e[-+]digits]) with at most
 * 19 digits is m * 10^e; when m and 10^|e| are exact in the type (m <= 2^53 and
 * |e| <= 22 for double, m <= 2^24 and |e| <= 10 for float), one IEEE multiply or
 * divide rounds correctly, so the result equals strtod's. 1 if it applied. */
static int fast_decimal(const char *s, size_t n, double *out, int single)
{
    static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    size_t i = 0;
    int neg = 0, digits = 0, frac = 0, any = 0;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    uint64_t m = 0;
    for (; i < n && (unsigned)(s[i] - '0') <= 9; i++, digits++, any = 1)
        m = m * 10 + (uint64_t)(s[i] - '0');
    if (i < n && s[i] == '.') {
        for (i++; i < n && (unsigned)(s[i] - '0') <= 9; i++, digits++, frac++, any = 1)
            m = m * 10 + (uint64_t)(s[i] - '0');
    }
    if (!any || digits > 19)
        return 0;
    int e = 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        int eneg = 0, ed = 0;
        i++;
        if (i < n && (s[i] == '-' || s[i] == '+'))
            eneg = s[i++] == '-';
        for (; i < n && (unsigned)(s[i] - '0') <= 9 && ed < 4; i++, ed++)
            e = e * 10 + (s[i] - '0');
        if (ed == 0)
            return 0;
        e = eneg ? -e : e;
    }
    if (i != n)
        return 0;
    e -= frac;
    if (single) {
        if (m > (1u << 24) || e < -10 || e > 10)
            return 0;
        float v = (float)m;
        v = e < 0 ? v / (float)p10[-e] : v * (float)p10[e];
        *out = neg ? -v : v;
        return 1;
    }
    if (m > (1ull << 53) || e < -22 || e > 22)
        return 0;
    double v = (double)m;
    v = e < 0 ? v / p10[-e] : v * p10[e];
    *out = neg ? -v : v;
    return 1;
}

static int parse_f64(const char *s, size_t n, double *out, int single)
{
    trim(&s, &n);
    if (fast_decimal(s, n, out, single))
        return 0;
    char buf[128];
    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    if (buf[0] == ' ' || buf[0] == '\t')
        return -1;
    char *end;
    errno = 0;
    locale_t c = sl__c_locale(); /* "1.5" whatever locale the embedder set */
    if (single) {
        float v = c ? strtof_l(buf, &end, c) : strtof(buf, &end);
        if (end != buf + n)
            return -1;
        if (errno == ERANGE && isinf(v))
            return -2;
        *out = v;
    } else {
        double v = c ? strtod_l(buf, &end, c) : strtod(buf, &end);
        if (end != buf + n)
            return -1;
        if (errno == ERANGE && isinf(v))
            return -2;
        *out = v;
    }
    return 0;
}

static int set_null(struct csv_parser *ps, int c)
{
    struct sl__col *col = &ps->b->cols[c];
    if (!col->validity) {
        col->validity = sl__buf_new((ps->cap + 7) / 8);
        if (!col->validity)
            return sl_task_fail(ps->t, SL_ENOMEM, "out of memory");
        memset(col->validity->ptr, 0xff, (size_t)(ps->cap + 7) / 8);
    }
    ((uint8_t *)col->validity->ptr)[ps->rows >> 3] &= (uint8_t) ~(1u << (ps->rows & 7));
    col->null_count++;
    if (ps->tcols[c].type != SL_TYPE_INVALID) {
        sl__text_col_put_null(&ps->tcols[c], col->data->ptr, ps->rows);
        return SL_OK;
    }
    size_t w = sl_type_width(col->type);
    memset((char *)col->data->ptr + (size_t)ps->rows * w, 0, w);
    return SL_OK;
}

/* 0 ok, -1 not a number, -2 out of uint64 range. */
static int parse_u64(const char *s, size_t n, uint64_t *out)
{
    trim(&s, &n);
    size_t i = n && s[0] == '+';
    if (i == n)
        return -1;
    uint64_t v = 0;
    for (; i < n; i++) {
        unsigned dg = (unsigned)(s[i] - '0');
        if (dg > 9)
            return -1;
        if (v > (UINT64_MAX - dg) / 10)
            return -2;
        v = v * 10 + dg;
    }
    *out = v;
    return 0;
}

/* An integer of a type narrower than 64 bits, range-checked. */
static int store_int(enum sl_type type, const char *s, size_t n, void *dst)
{
    static const struct {
        enum sl_type type;
        int64_t lo, hi;
    } ranges[] = {{SL_TYPE_INT8, INT8_MIN, INT8_MAX},     {SL_TYPE_INT16, INT16_MIN, INT16_MAX},
                  {SL_TYPE_INT32, INT32_MIN, INT32_MAX},  {SL_TYPE_INT64, INT64_MIN, INT64_MAX},
                  {SL_TYPE_UINT8, 0, UINT8_MAX},          {SL_TYPE_UINT16, 0, UINT16_MAX},
                  {SL_TYPE_UINT32, 0, UINT32_MAX}};
    if (type == SL_TYPE_UINT64) {
        uint64_t u = 0;
        int rc = parse_u64(s, n, &u);
        if (rc == 0)
            memcpy(dst, &u, 8);
        return rc;
    }
    int64_t v = 0;
    int rc = parse_i64(s, n, &v);
    for (size_t k = 0; rc == 0 && k < sizeof ranges / sizeof ranges[0]; k++) {
        if (ranges[k].type != type)
            continue;
        if (v < ranges[k].lo || v > ranges[k].hi)
            return -2;
        memcpy(dst, &v, sl_type_width(type)); /* little endian: the low bytes */
    }
    return rc;
}

/* A value of a fixed-width type from its text: 0, or -1 (malformed) / -2 (out of range)
 * or another sl__text_err. */
static int parse_value(enum sl_type type, const char *s, size_t n, void *dst)
{
    switch (SL_TYPE_ID(type)) {
    case SL_TYPE_FLOAT32:
    case SL_TYPE_FLOAT64: {
        double v = 0;
        int rc = parse_f64(s, n, &v, type == SL_TYPE_FLOAT32);
        if (rc == 0 && type == SL_TYPE_FLOAT32)
            *(float *)dst = (float)v;
        else if (rc == 0)
            *(double *)dst = v;
        return rc;
    }
    case SL_TYPE_BOOL:
        return sl__bool_parse(s, n, dst);
    case SL_TYPE_DATE32:
        return sl__date_parse(s, n, dst);
    case SL_TYPE_TIMESTAMP:
        return sl__timestamp_parse(s, n, dst);
    case SL_TYPE_DECIMAL: {
        __int128 v = 0;
        int rc = sl__decimal_parse(s, n, sl_type_precision(type), sl_type_scale(type), &v);
        if (rc == 0)
            memcpy(dst, &v, sl_type_width(type)); /* little endian: int64 is the low half */
        return rc;
    }
    default:
        return store_int(type, s, n, dst);
    }
}

static int field_error(struct csv_parser *ps, int field, const struct csv_field *f, int rc,
                       const char *what)
{
    const struct csv_data *d = ps->d;
    int show = f->len > 40 ? 40 : (int)f->len;
    if (rc == SL__TEXT_SYNTAX)
        return csv_fail(ps, SL_EPARSE, f->line, f->col, "field %d ('%s'): cannot parse "
                        "\"%.*s%s\" as %s", field + 1, d->cols.names[field], show, f->txt,
                        f->len > 40 ? "..." : "", sl_type_name(d->cols.types[field]));
    return csv_fail(ps, SL_EOVERFLOW, f->line, f->col, "field %d ('%s'): \"%.*s%s\" is out "
                    "of range for %s (%s)", field + 1, d->cols.names[field], show, f->txt,
                    f->len > 40 ? "..." : "", sl_type_name(d->cols.types[field]), what);
}

static int store_string(struct csv_parser *ps, int field, int c, const struct csv_field *f)
{
    size_t bad = 0;
    if (!sl__utf8_valid(f->txt, f->len, &bad))
        return csv_fail(ps, SL_EPARSE, f->line, f->col, "field %d ('%s'): invalid UTF-8 at "
                        "byte %zu of the field", field + 1, ps->d->cols.names[field], bad + 1);
    int rc = sl__text_col_put(&ps->tcols[c], ps->b->cols[c].data->ptr, ps->rows, f->txt,
                              f->len);
    if (rc == SL_EOVERFLOW)
        return csv_fail(ps, rc, f->line, f->col, "field %d ('%s'): more than 2^31 bytes of "
                        "strings in one batch (declare the column large_utf8)", field + 1,
                        ps->d->cols.names[field]);
    return rc < 0 ? sl_task_fail(ps->t, rc, "out of memory") : SL_OK;
}

static int store_field(struct csv_parser *ps, int field, int c, const struct csv_field *f)
{
    const struct csv_data *d = ps->d;
    if (f->len == d->null_len && (!f->quoted || d->null_len == 0) &&
        memcmp(f->txt, d->null_text, f->len) == 0)
        return set_null(ps, c);
    enum sl_type type = d->cols.types[field];
    char *data = ps->b->cols[c].data->ptr;
    int64_t v = 0;
    int rc;
    /* The common types first, without the general dispatch (the hot path). */
    switch (type) {
    case SL_TYPE_INT64:
        if ((rc = parse_i64(f->txt, f->len, &v)) == 0)
            ((int64_t *)data)[ps->rows] = v;
        break;
    case SL_TYPE_INT32:
        rc = parse_i64(f->txt, f->len, &v);
        if (rc == 0 && (v < INT32_MIN || v > INT32_MAX))
            rc = -2;
        if (rc == 0)
            ((int32_t *)data)[ps->rows] = (int32_t)v;
        break;
    case SL_TYPE_UTF8:
    case SL_TYPE_LARGE_UTF8:
    case SL_TYPE_DICT:
        return store_string(ps, field, c, f);
    default:
        rc = parse_value(type, f->txt, f->len, data + (size_t)ps->rows * d->widths[field]);
    }
    if (rc == 0)
        return SL_OK;
    return field_error(ps, field, f, rc, sl__text_err_str(rc));
}

static int batch_start(struct csv_parser *ps)
{
    const sl_schema_t *s = sl_op_output_schema(sl_task_op(ps->t));
    ps->b = sl__batch_new(s, ps->cap);
    if (!ps->b || sl__batch_alloc_columns(ps->b) != SL_OK) {
        sl_batch_unref(ps->b);
        ps->b = NULL;
        return sl_task_fail(ps->t, SL_ENOMEM, "out of memory for a batch of %lld rows",
                            (long long)ps->cap);
    }
    ps->rows = 0;
    return SL_OK;
}

static int batch_emit(struct csv_parser *ps)
{
    sl_batch_t *b = ps->b;
    for (int c = 0; c < b->n_cols; c++) {
        int rc = ps->tcols[c].type != SL_TYPE_INVALID
                     ? sl__text_col_finish(&ps->tcols[c], b, c) : SL_OK;
        if (rc < 0)
            return sl_task_fail(ps->t, rc, "out of memory");
    }
    ps->b = NULL;
    b->n_rows = ps->rows;
    if (ps->d->where) { /* the predicate runs here, before the rows leave the scan */
        sl_batch_t *kept;
        int rc = sl__pred_apply(ps->t, ps->d->where, &ps->pred, b, &kept);
        sl_batch_unref(b);
        if (rc < 0 || !kept)
            return rc;
        b = kept;
    }
    return sl_task_emit(ps->t, b);
}

static int check_header(struct csv_parser *ps)
{
    const struct csv_data *d = ps->d;
    struct csv_field f;
    int n = 0, rc;
    do {
        if ((rc = parse_field(ps, &f)) < 0)
            return rc;
        if (n < d->cols.n &&
            (f.len != strlen(d->cols.names[n]) || memcmp(f.txt, d->cols.names[n], f.len) != 0)) {
            int show = f.len > 40 ? 40 : (int)f.len;
            return csv_fail(ps, SL_EFORMAT, f.line, f.col, "header field %d is \"%.*s\" but "
                            "columns= declares '%s' there", n + 1, show, f.txt,
                            d->cols.names[n]);
        }
        n++;
    } while (!f.last);
    if (n != d->cols.n)
        return csv_fail(ps, SL_EFORMAT, 1, 1, "the header has %d fields but columns= declares "
                        "%d", n, d->cols.n);
    return SL_OK;
}

/* Parses the records starting in [pos, end). */
static int parse_span(struct csv_parser *ps, int64_t end)
{
    const struct csv_data *d = ps->d;
    const uint8_t *p = ps->p;
    int rc;
    while (ps->pos < end) {
        int64_t after;
        if (at_record_end(ps, ps->pos, &after)) { /* an empty line */
            if (p[after - 1] == '\n')
                new_line(ps, after);
            ps->pos = after;
            continue;
        }
        if (!ps->b && (rc = batch_start(ps)) < 0)
            return rc;
        struct csv_field f;
        int field = 0, trailed = 0;
        do {
            if (field == d->cols.n) {
                /* trailing_delimiter: one more field, empty and last. */
                if (d->trailing && (rc = parse_field(ps, &f)) < 0)
                    return rc;
                if (d->trailing && f.len == 0 && f.last && !f.quoted) {
                    trailed = 1;
                    break;
                }
                if (d->trailing)
                    return csv_fail(ps, SL_EPARSE, f.line, f.col, "too many fields: expected "
                                    "%d and a trailing delimiter", d->cols.n);
                return csv_fail(ps, SL_EPARSE, ps->line, ps->pos - ps->line_start + 1,
                                "too many fields: expected %d", d->cols.n);
            }
            if ((rc = parse_field(ps, &f)) < 0)
                return rc;
            int c = d->out_of_field[field];
            if (c >= 0 && (rc = store_field(ps, field, c, &f)) < 0)
                return rc;
            field++;
        } while (!f.last);
        if (d->trailing && !trailed && field == d->cols.n)
            return csv_fail(ps, SL_EPARSE, f.eline, f.ecol, "the record lacks its trailing "
                            "delimiter (trailing_delimiter=true)");
        if (field < d->cols.n)
            return csv_fail(ps, SL_EPARSE, f.eline, f.ecol,
                            "too few fields: expected %d, found %d", d->cols.n, field);
        if (++ps->rows == ps->cap) {
            if ((rc = batch_emit(ps)) < 0)
                return rc;
            if (sl_task_cancelled(ps->t))
                return SL_ECANCELED;
        }
    }
    return SL_OK;
}

static int csv_source(sl_task_t *t)
{
    const struct csv_data *d = sl_op_data(sl_task_op(t));
    struct csv_global *g = sl_task_gstate(t);
    const struct csv_span *sp = &g->spans[sl_task_index(t)];
    struct csv_parser ps = {
        .t = t, .d = d, .p = g->map->base, .size = (int64_t)g->map->bytes,
        .pos = sp->start, .line = sp->line, .line_start = sp->start,
    };
    /* At most one record per n_fields bytes (n-1 delimiters and a line end), plus the
     * one that runs past the end. */
    int64_t m = sl_task_morsel_rows(t);
    int64_t most = (sp->end - sp->start) / d->cols.n + 1;
    ps.cap = most < m ? most : m;
    const sl_schema_t *out = sl_op_output_schema(sl_task_op(t));
    ps.tcols = sl__calloc((size_t)out->n_fields + 1, sizeof *ps.tcols);
    if (!ps.tcols)
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    for (int c = 0; c < out->n_fields; c++)
        if (sl_type_is_string(out->fields[c].type))
            ps.tcols[c].type = out->fields[c].type;
    int rc = SL_OK;
    /* A UTF-8 byte order mark is not part of the first field. */
    if (sl_task_index(t) == 0 && ps.size >= 3 && memcmp(ps.p, "\xEF\xBB\xBF", 3) == 0)
        ps.pos = ps.line_start = 3;
    if (sl_task_index(t) == 0 && d->header)
        rc = check_header(&ps);
    if (rc >= 0)
        rc = parse_span(&ps, sp->end);
    if (rc >= 0 && ps.b && ps.rows > 0)
        rc = batch_emit(&ps);
    sl_batch_unref(ps.b);
    for (int c = 0; c < out->n_fields; c++)
        sl__text_col_reset(&ps.tcols[c]);
    sl__free(ps.tcols, 0);
    sl__free(ps.scratch, ps.scratch_cap);
    sl__pred_state_fini(&ps.pred);
    sl_task_progress(t, 0, sp->end - sp->start);
    return rc < 0 ? rc : SL_OK;
}

static const struct sl_impl prepare_impls[] = {{.device = SL_DEVICE_CPU, .run = csv_prepare}};
static const struct sl_phase prepare_phase = {prepare_impls, 1, NULL};
static const struct sl_impl source_impls[] = {{.device = SL_DEVICE_CPU, .run = csv_source}};
static const struct sl_phase source_phase = {source_impls, 1, sl__cost_linear};

const struct sl_op_def sl__scan_csv_def = {
    .abi_version = SL_OP_ABI_VERSION,
    /* SINK without inputs: its finalize (boundary discovery) runs before its source. */
    .flags = SL_OP_SOURCE | SL_OP_SINK,
    .name = "scan.csv",
    .doc = "reads a CSV file with a typed schema, parsed in parallel",
    .min_inputs = 0,
    .max_inputs = 0,
    .options = csv_options,
    .n_options = sizeof csv_options / sizeof csv_options[0],
    .bind = csv_bind,
    .global_state_bytes = sizeof(struct csv_global),
    .fini_global = csv_fini_global,
    .source_tasks = csv_tasks,
    .finalize = &prepare_phase,
    .source = &source_phase,
};
