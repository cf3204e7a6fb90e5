/* Printing result tables: aligned text, CSV or JSON lines. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* A cell's text: the whole value for CSV and JSON, cut to TABLE_CELL bytes in a table. */
#define TABLE_CELL 48

struct cell {
    char *p;
    size_t cap;
    int null;
};

static const char *cell_text(sl_batch_t *b, int c, int64_t i, struct cell *cl, size_t max)
{
    int64_t n = sl_batch_value_format(b, c, i, cl->p, cl->cap, &cl->null);
    if (n >= 0 && (size_t)n >= cl->cap && (size_t)n < max) {
        char *np = realloc(cl->p, (size_t)n + 1);
        if (np) {
            cl->p = np;
            cl->cap = (size_t)n + 1;
            sl_batch_value_format(b, c, i, cl->p, cl->cap, &cl->null);
        }
    }
    return cl->null ? "NULL" : cl->p;
}

static bool is_text(enum sl_type t)
{
    return sl_type_is_string(t) || t == SL_TYPE_DATE32 || t == SL_TYPE_TIMESTAMP;
}

/* The printf width of a table cell: text left-aligned (not padded in the last column),
 * numbers right-aligned. */
static int align(enum sl_type t, int width, bool last)
{
    return is_text(t) ? (last ? 0 : -width) : width;
}

/* A CSV field, quoted (with "" escapes) when it holds a comma, a quote or a line end. */
static void put_csv(const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, stdout);
        return;
    }
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            putchar('"');
        putchar(*s);
    }
    putchar('"');
}

void cli_put_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

static void put_json_value(enum sl_type t, const char *s, int null)
{
    if (null)
        fputs("null", stdout);
    else if (is_text(t))
        cli_put_json_string(s);
    else
        fputs(s, stdout); /* numbers, decimals (exact) and true/false */
}

void cli_print_table(const char *name, sl_table_t *t, enum cli_format fmt, int64_t limit)
{
    int64_t rows = sl_table_num_rows(t);
    sl_batch_t *first = sl_table_batch(t, 0);
    int nc = first ? sl_batch_num_columns(first) : 0;
    struct sl_column cols[64];
    if (nc > 64)
        nc = 64;
    for (int c = 0; c < nc; c++)
        sl_batch_column(first, c, &cols[c]);
    int width[64];
    struct cell cl = {malloc(TABLE_CELL + 1), TABLE_CELL + 1, 0};
    if (!cl.p)
        return;
    size_t max = fmt == CLI_TABLE ? 0 : (size_t)1 << 30;
    for (int c = 0; c < nc; c++)
        width[c] = (int)strlen(cols[c].name);
    /* Widths from the rows that will be shown. */
    int64_t shown = 0;
    for (int64_t b = 0; b < sl_table_num_batches(t) && shown < limit; b++) {
        sl_batch_t *bt = sl_table_batch(t, b);
        for (int64_t i = 0; i < sl_batch_num_rows(bt) && shown < limit; i++, shown++) {
            for (int c = 0; c < nc; c++) {
                int w = (int)strlen(cell_text(bt, c, i, &cl, 0));
                width[c] = w > width[c] ? w : width[c];
            }
        }
    }
    if (fmt == CLI_TABLE)
        printf("%s (%" PRId64 " row%s)\n", name, rows, rows == 1 ? "" : "s");
    for (int c = 0; c < nc && fmt != CLI_JSON; c++) {
        if (fmt == CLI_CSV)
            printf("%s%s", c ? "," : "", cols[c].name);
        else
            printf("%s%*s", c ? "  " : "", align(cols[c].type, width[c], c == nc - 1),
                   cols[c].name);
    }
    if (fmt != CLI_JSON)
        printf("\n");
    shown = 0;
    for (int64_t b = 0; b < sl_table_num_batches(t) && shown < limit; b++) {
        sl_batch_t *bt = sl_table_batch(t, b);
        for (int64_t i = 0; i < sl_batch_num_rows(bt) && shown < limit; i++, shown++) {
            if (fmt == CLI_JSON)
                printf("{\"output\":\"%s\"", name);
            for (int c = 0; c < nc; c++) {
                const char *text = cell_text(bt, c, i, &cl, max);
                if (fmt == CLI_JSON) {
                    printf(",\"%s\":", cols[c].name);
                    put_json_value(cols[c].type, text, cl.null);
                } else if (fmt == CLI_CSV) {
                    fputs(c ? "," : "", stdout);
                    put_csv(cl.null ? "" : text);
                } else {
                    printf("%s%*s", c ? "  " : "", align(cols[c].type, width[c], c == nc - 1),
                           text);
                }
            }
            printf(fmt == CLI_JSON ? "}\n" : "\n");
        }
    }
    free(cl.p);
    if (fmt == CLI_TABLE && rows > shown)
        printf("... %" PRId64 " more row%s (--limit N shows more)\n", rows - shown,
               rows - shown == 1 ? "" : "s");
}
