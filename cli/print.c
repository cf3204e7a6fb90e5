/* Printing result tables: aligned text, CSV or JSON lines. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static bool is_valid(const struct sl_column *c, int64_t i)
{
    int64_t k = c->offset + i;
    return !c->validity || ((c->validity[k >> 3] >> (k & 7)) & 1);
}

static void format_value(const struct sl_column *c, int64_t i, char *out, size_t len)
{
    int64_t k = c->offset + i;
    if (!is_valid(c, i)) {
        snprintf(out, len, "NULL");
        return;
    }
    switch (c->type) {
    case SL_TYPE_INT32:
        snprintf(out, len, "%" PRId32, ((const int32_t *)c->data)[k]);
        break;
    case SL_TYPE_INT64:
        snprintf(out, len, "%" PRId64, ((const int64_t *)c->data)[k]);
        break;
    case SL_TYPE_FLOAT32:
        snprintf(out, len, "%.9g", (double)((const float *)c->data)[k]);
        break;
    case SL_TYPE_FLOAT64:
        snprintf(out, len, "%.17g", ((const double *)c->data)[k]);
        break;
    case SL_TYPE_BOOL: /* project's conditions (were int32 0/1 before 0.3) */
        snprintf(out, len, "%s", ((const uint8_t *)c->data)[k] ? "true" : "false");
        break;
    default:
        snprintf(out, len, "?");
    }
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
    char cell[64];
    for (int c = 0; c < nc; c++)
        width[c] = (int)strlen(cols[c].name);
    /* Widths from the rows that will be shown. */
    int64_t shown = 0;
    for (int64_t b = 0; b < sl_table_num_batches(t) && shown < limit; b++) {
        sl_batch_t *bt = sl_table_batch(t, b);
        for (int64_t i = 0; i < sl_batch_num_rows(bt) && shown < limit; i++, shown++) {
            for (int c = 0; c < nc; c++) {
                struct sl_column col;
                sl_batch_column(bt, c, &col);
                format_value(&col, i, cell, sizeof cell);
                int w = (int)strlen(cell);
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
            printf("%s%*s", c ? "  " : "", width[c], cols[c].name);
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
                struct sl_column col;
                sl_batch_column(bt, c, &col);
                format_value(&col, i, cell, sizeof cell);
                if (fmt == CLI_JSON)
                    printf(",\"%s\":%s", col.name, strcmp(cell, "NULL") ? cell : "null");
                else if (fmt == CLI_CSV)
                    printf("%s%s", c ? "," : "", strcmp(cell, "NULL") ? cell : "");
                else
                    printf("%s%*s", c ? "  " : "", width[c], cell);
            }
            printf(fmt == CLI_JSON ? "}\n" : "\n");
        }
    }
    if (fmt == CLI_TABLE && rows > shown)
        printf("... %" PRId64 " more row%s (--limit N shows more)\n", rows - shown,
               rows - shown == 1 ? "" : "s");
}
