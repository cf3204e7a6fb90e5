/* What each TPC-H query must read: the bytes of the table columns its scans take, and
 * the floor of reading them once (docs/TPCH.md, "Floors"). */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpch.h"

/* Bytes of one column of a host batch: values (string offsets included), validity,
 * string bytes; a dictionary column's codes (its dictionary is small and shared). */
static int64_t column_bytes(const sl_batch_t *b, int c)
{
    struct sl_column col;
    struct sl_strings s;
    if (sl_batch_column(b, c, &col) != SL_OK || sl_batch_column_strings(b, c, &s) != SL_OK)
        return 0;
    int64_t bytes = col.length * (int64_t)sl_type_width(col.type);
    if (col.validity)
        bytes += (col.length + 7) / 8;
    if ((col.type == SL_TYPE_UTF8 || col.type == SL_TYPE_LARGE_UTF8) && col.data) {
        int64_t first, last;
        if (col.type == SL_TYPE_UTF8) {
            const int32_t *off = (const int32_t *)col.data + col.offset;
            first = off[0], last = off[col.length];
        } else {
            const int64_t *off = (const int64_t *)col.data + col.offset;
            first = off[0], last = off[col.length];
        }
        bytes += (int64_t)sl_type_width(col.type) + (last - first); /* the n+1st offset */
    }
    return bytes;
}

void tpch_measure_columns(struct tpch_data *d, int t)
{
    const sl_table_t *tab = d->tables[t];
    memset(d->col_bytes[t], 0, sizeof d->col_bytes[t]);
    for (int64_t i = 0; i < sl_table_num_batches(tab); i++) {
        const sl_batch_t *b = sl_table_batch(tab, i);
        if (!b || sl_batch_device(b) >= 0)
            continue; /* measured before the move to the GPU, on the host */
        for (int c = 0; c < sl_batch_num_columns(b) && c < TPCH_MAX_COLS; c++)
            d->col_bytes[t][c] += column_bytes(b, c);
    }
}

/* 1 when `word` occurs in text as a whole identifier. */
static bool has_word(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(text, word); p; p = strstr(p + 1, word)) {
        bool left = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
        bool right = !(isalnum((unsigned char)p[n]) || p[n] == '_');
        if (left && right)
            return true;
    }
    return false;
}

int64_t tpch_scan_bytes(const char *plan_text, const struct tpch_data *d)
{
    /* Plans name columns by their TPC-H names, unique across the tables, so a column is
     * read when the plan's text (comments cut) names it and scans its table. */
    size_t len = strlen(plan_text);
    char *text = malloc(len + 1);
    if (!text)
        return 0;
    size_t k = 0;
    for (const char *p = plan_text; *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p + 1) : strlen(p);
        const char *q = p;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q != '#')
            memcpy(text + k, p, n), k += n;
        p += n;
    }
    text[k] = 0;
    int64_t total = 0;
    for (int t = 0; t < TPCH_TABLES; t++) {
        char scan[64];
        snprintf(scan, sizeof scan, "name=%s", d->names[t]);
        const sl_batch_t *b0 = d->tables[t] ? sl_table_batch(d->tables[t], 0) : NULL;
        if (!b0 || !strstr(text, scan))
            continue;
        for (int c = 0; c < sl_batch_num_columns(b0) && c < TPCH_MAX_COLS; c++) {
            struct sl_column col;
            if (sl_batch_column(b0, c, &col) == SL_OK && col.name && has_word(text, col.name))
                total += d->col_bytes[t][c];
        }
    }
    free(text);
    return total;
}
