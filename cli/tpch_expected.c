/* Checking a TPC-H result against an expected answer file (docs/TPCH.md): the rules of
 * tests/tpch/tpch_check.py, in C: the same rows as a multiset (decimals and integers
 * exact, floats within 1e-9 relative), and the columns of the query's ORDER BY in the
 * file's order, so that ties may come in any order. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpch.h"

#define MAX_COLS 64
#define REL_TOL 1e-9

enum kind { K_TEXT, K_NUM, K_FLOAT }; /* NUM: integers and decimals, compared exactly */

/* A result as text: rows of cells, and each column's kind. */
struct rows {
    int n_cols;
    int64_t n_rows, cap;
    char **cells;               /* n_rows * n_cols, row-major; NULL = null */
    enum kind kinds[MAX_COLS];
    char *names[MAX_COLS];
    int order[MAX_COLS], n_order; /* ORDER BY columns (expected file only) */
};

/* Writes why into msg; returns 1 (different, or unreadable). */
__attribute__((format(printf, 3, 4))) static int why(char *msg, size_t len, const char *fmt,
                                                     ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
    return 1;
}

static void rows_free(struct rows *r)
{
    for (int64_t i = 0; i < r->n_rows * r->n_cols; i++)
        free(r->cells[i]);
    for (int c = 0; c < r->n_cols; c++)
        free(r->names[c]);
    free(r->cells);
}

static int rows_add(struct rows *r, char **cells)
{
    if (r->n_rows == r->cap) {
        int64_t cap = r->cap ? r->cap * 2 : 64;
        char **nc = realloc(r->cells, (size_t)(cap * r->n_cols) * sizeof *nc);
        if (!nc)
            return -1;
        r->cells = nc;
        r->cap = cap;
    }
    memcpy(r->cells + r->n_rows * r->n_cols, cells, (size_t)r->n_cols * sizeof *cells);
    r->n_rows++;
    return 0;
}

/* An exact number's canonical text in place: no '+', no leading zeros, no trailing
 * fraction zeros, "-0" as "0"; so that 5, 5.00 and 05.0 read the same. */
static void canon_number(char *s)
{
    char *p = s, *w = s;
    bool neg = *p == '-';
    p += *p == '-' || *p == '+';
    while (*p == '0' && p[1] && p[1] != '.')
        p++;
    char *dot = strchr(p, '.');
    if (dot) {
        char *e = dot + strlen(dot);
        while (e > dot + 1 && e[-1] == '0')
            e--;
        if (e == dot + 1)
            e = dot;
        *e = 0;
    }
    if (neg && strcmp(p, "0"))
        *w++ = '-';
    memmove(w, p, strlen(p) + 1);
}

static enum kind kind_of_type(enum sl_type t)
{
    switch (SL_TYPE_ID(t)) {
    case SL_TYPE_FLOAT32:
    case SL_TYPE_FLOAT64:
        return K_FLOAT;
    case SL_TYPE_INT8: case SL_TYPE_INT16: case SL_TYPE_INT32: case SL_TYPE_INT64:
    case SL_TYPE_UINT8: case SL_TYPE_UINT16: case SL_TYPE_UINT32: case SL_TYPE_UINT64:
    case SL_TYPE_DECIMAL:
        return K_NUM;
    default:
        return K_TEXT;
    }
}

static enum kind kind_of_name(const char *k)
{
    if (!strcmp(k, "float"))
        return K_FLOAT;
    return !strcmp(k, "int") || !strcmp(k, "decimal") ? K_NUM : K_TEXT;
}

/* The result table as text, as sl_batch_value_format writes it. */
static int rows_from_table(sl_table_t *t, struct rows *r, char *msg, size_t len)
{
    memset(r, 0, sizeof *r);
    sl_batch_t *first = sl_table_batch(t, 0);
    r->n_cols = first ? sl_batch_num_columns(first) : 0;
    if (r->n_cols > MAX_COLS)
        return why(msg, len, "more than %d columns", MAX_COLS);
    for (int c = 0; c < r->n_cols; c++) {
        struct sl_column col;
        sl_batch_column(first, c, &col);
        r->kinds[c] = kind_of_type(col.type);
    }
    char *cells[MAX_COLS];
    for (int64_t b = 0; b < sl_table_num_batches(t); b++) {
        sl_batch_t *bt = sl_table_batch(t, b);
        for (int64_t i = 0; i < sl_batch_num_rows(bt); i++) {
            for (int c = 0; c < r->n_cols; c++) {
                int null = 0;
                int64_t n = sl_batch_value_format(bt, c, i, NULL, 0, &null);
                cells[c] = n < 0 || null ? NULL : malloc((size_t)n + 1);
                if (cells[c])
                    sl_batch_value_format(bt, c, i, cells[c], (size_t)n + 1, NULL);
                if (cells[c] && r->kinds[c] == K_NUM)
                    canon_number(cells[c]);
            }
            if (rows_add(r, cells) < 0)
                return why(msg, len, "out of memory");
        }
    }
    return 0;
}

/* One CSV field from *s into *out (NULL for an empty unquoted field: a null); *s ends
 * on the character after it. 0, or -1 for an unterminated or malformed quoted field
 * (or no memory). */
static int csv_field(const char **s, char **out)
{
    const char *p = *s;
    bool quoted = *p == '"', was_quoted = quoted;
    p += quoted;
    size_t cap = 16, k = 0;
    char *f = malloc(cap);
    while (f) {
        char ch = *p;
        if (quoted && ch == '"' && p[1] == '"') {
            p++; /* "" inside quotes: one quote */
        } else if (quoted && ch == '"') {
            quoted = false, p++;
            if (*p != ',' && *p != '\n' && *p != '\r' && *p)
                break; /* text after the closing quote */
            continue;
        } else if (!ch || (!quoted && (ch == ',' || ch == '\n' || ch == '\r'))) {
            f[k] = 0;
            if (k == 0 && !was_quoted) {
                free(f);
                f = NULL;
            }
            *out = f;
            *s = p;
            return 0;
        }
        if (k + 2 > cap) {
            char *nf = realloc(f, cap *= 2);
            if (!nf)
                break;
            f = nf;
        }
        f[k++] = ch;
        p++;
    }
    free(f);
    return -1;
}

/* One CSV record from *p (RFC 4180: "" escapes a quote inside quotes) into fields.
 * Returns the number of fields, -1 at the end of the text, -2 on a malformed record
 * or more than `max` fields (nothing kept then). */
static int csv_record(const char **p, char **fields, int max)
{
    const char *s = *p;
    if (!*s)
        return -1;
    int n = 0;
    for (;;) {
        if (n == max || csv_field(&s, &fields[n]) < 0) {
            while (n > 0)
                free(fields[--n]);
            return -2;
        }
        n++;
        if (*s != ',')
            break;
        s++;
    }
    s += *s == '\r';
    s += *s == '\n';
    *p = s;
    return n;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf)
        buf[n] = 0;
    return buf;
}

/* "# order: a, b" into r->order (indexes of r->names). */
static int parse_order(struct rows *r, const char *list, char *msg, size_t len)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save, *tok = strtok_r(buf, ", \r\n", &save); tok;
         tok = strtok_r(NULL, ", \r\n", &save)) {
        int c = 0;
        while (c < r->n_cols && strcmp(r->names[c], tok))
            c++;
        if (c == r->n_cols)
            return why(msg, len, "order column %s is not a column", tok);
        r->order[r->n_order++] = c;
    }
    return 0;
}

/* The expected answer file: '#' comment lines (one may be "# order: ..."), a header of
 * name:kind cells, then the rows. */
static int rows_from_file(const char *path, struct rows *r, char *msg, size_t len)
{
    memset(r, 0, sizeof *r);
    char *text = read_text(path);
    if (!text)
        return why(msg, len, "cannot read the expected answer %s: %s", path,
                        strerror(errno));
    const char *p = text, *order = NULL;
    int64_t line = 2; /* of the first row: after the comments and the header */
    for (; *p == '#'; line++) {
        if (!strncmp(p, "# order:", 8))
            order = p + 8;
        p = strchr(p, '\n');
        p = p ? p + 1 : "";
    }
    char *cells[MAX_COLS];
    int rc = 0, n = csv_record(&p, cells, MAX_COLS);
    if (n < 0) {
        rc = why(msg, len, "%s: no header line", path);
    } else {
        r->n_cols = n;
        for (int c = 0; c < n; c++) {
            char *colon = cells[c] ? strrchr(cells[c], ':') : NULL;
            if (colon)
                *colon = 0;
            r->names[c] = cells[c] ? cells[c] : strdup("");
            r->kinds[c] = kind_of_name(colon ? colon + 1 : "text");
        }
        if (order) {
            char cols[1024];
            snprintf(cols, sizeof cols, "%.*s", (int)strcspn(order, "\n"), order);
            rc = parse_order(r, cols, msg, len);
        }
    }
    for (; !rc && (n = csv_record(&p, cells, MAX_COLS)) != -1; line++) {
        if (n == -2) {
            rc = why(msg, len, "%s line %lld: not a CSV record (a quote left open?)", path,
                     (long long)line);
        } else if (n != r->n_cols) {
            for (int c = 0; c < n; c++)
                free(cells[c]);
            rc = why(msg, len, "%s line %lld: %d fields, the header has %d", path,
                     (long long)line, n, r->n_cols);
        } else {
            for (int c = 0; c < n; c++)
                if (cells[c] && r->kinds[c] == K_NUM)
                    canon_number(cells[c]);
            if (rows_add(r, cells) < 0)
                rc = why(msg, len, "out of memory");
        }
    }
    free(text);
    return rc;
}

static bool cell_equal(const char *a, const char *b, bool as_float)
{
    if (!a || !b)
        return !a && !b;
    if (!as_float)
        return !strcmp(a, b);
    double x = strtod(a, NULL), y = strtod(b, NULL);
    if (isnan(x) || isnan(y))
        return isnan(x) && isnan(y);
    double m = fmax(fmax(fabs(x), fabs(y)), 1e-300);
    return x == y || fabs(x - y) <= REL_TOL * m;
}

/* Orders cells: nulls first, numbers by value, text by bytes. */
static int cell_cmp(const char *a, const char *b, enum kind k)
{
    if (!a || !b)
        return !a && !b ? 0 : !a ? -1 : 1;
    if (k != K_TEXT) {
        long double x = strtold(a, NULL), y = strtold(b, NULL);
        if (x != y)
            return x < y ? -1 : 1;
    }
    return strcmp(a, b);
}

static const struct rows *sort_rows; /* qsort has no user pointer */

static int row_cmp(const void *pa, const void *pb)
{
    int64_t i = *(const int64_t *)pa, j = *(const int64_t *)pb;
    const struct rows *r = sort_rows;
    for (int c = 0; c < r->n_cols; c++) {
        int d = cell_cmp(r->cells[i * r->n_cols + c], r->cells[j * r->n_cols + c], r->kinds[c]);
        if (d)
            return d;
    }
    return 0;
}

static int64_t *sorted_index(const struct rows *r)
{
    int64_t *ix = malloc((size_t)(r->n_rows ? r->n_rows : 1) * sizeof *ix);
    if (!ix)
        return NULL;
    for (int64_t i = 0; i < r->n_rows; i++)
        ix[i] = i;
    sort_rows = r;
    qsort(ix, (size_t)r->n_rows, sizeof *ix, row_cmp);
    return ix;
}

static const char *show(const char *s)
{
    return s ? s : "NULL";
}

/* The first difference of the two results, in msg; 0 when none. */
static int compare_rows(const struct rows *got, const struct rows *want, char *msg, size_t len)
{
    if (got->n_rows == 0 && want->n_rows == 0)
        return 0; /* an empty result may have no batch to tell its columns */
    if (got->n_cols != want->n_cols)
        return why(msg, len, "%d columns, want %d", got->n_cols, want->n_cols);
    if (got->n_rows != want->n_rows)
        return why(msg, len, "%lld rows, want %lld", (long long)got->n_rows,
                        (long long)want->n_rows);
    int nc = got->n_cols, rc = 0;
    bool as_float[MAX_COLS];
    for (int c = 0; c < nc; c++)
        as_float[c] = got->kinds[c] == K_FLOAT || want->kinds[c] == K_FLOAT;
    int64_t *gi = sorted_index(got), *wi = sorted_index(want);
    if (!gi || !wi)
        rc = why(msg, len, "out of memory");
    for (int64_t i = 0; !rc && i < got->n_rows; i++) {
        for (int c = 0; c < nc && !rc; c++) {
            const char *g = got->cells[gi[i] * nc + c], *w = want->cells[wi[i] * nc + c];
            if (!cell_equal(g, w, as_float[c]))
                rc = why(msg, len, "a row differs: column %s is %s, want %s (row %lld "
                              "of the sorted rows)", want->names[c], show(g), show(w),
                              (long long)i);
        }
    }
    for (int k = 0; !rc && k < want->n_order; k++) {
        int c = want->order[k];
        for (int64_t i = 0; i < got->n_rows && !rc; i++) {
            const char *g = got->cells[i * nc + c], *w = want->cells[i * nc + c];
            if (!cell_equal(g, w, as_float[c]))
                rc = why(msg, len, "order: column %s differs first at row %lld: got %s, "
                              "want %s", want->names[c], (long long)i, show(g), show(w));
        }
    }
    free(gi);
    free(wi);
    return rc;
}

int tpch_expected_compare(sl_table_t *got, const char *path, char *msg, size_t len)
{
    struct rows g, w;
    int rc = rows_from_table(got, &g, msg, len);
    if (!rc)
        rc = rows_from_file(path, &w, msg, len);
    else
        memset(&w, 0, sizeof w);
    if (!rc)
        rc = compare_rows(&g, &w, msg, len);
    rows_free(&g);
    rows_free(&w);
    return rc;
}
