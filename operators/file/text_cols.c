/* String and dictionary columns of a batch being filled one value at a time (the CSV
 * reader; file_int.h). Bytes grow in a private buffer that the batch takes over when
 * the batch is finished (no copy); a DICT column keeps a hash table from strings to
 * codes, so each distinct string is stored once per batch. */
#include <string.h>

#include "file_int.h"

void sl__text_col_reset(struct sl__text_col *tc)
{
    sl__free(tc->chars, (size_t)tc->cap);
    sl__free(tc->dict_off, (size_t)tc->dict_cap * sizeof *tc->dict_off);
    sl__free(tc->slots, (size_t)tc->n_slots * sizeof *tc->slots);
    enum sl_type type = tc->type;
    memset(tc, 0, sizeof *tc);
    tc->type = type;
}

static int reserve_chars(struct sl__text_col *tc, size_t more)
{
    if (tc->n + (int64_t)more <= tc->cap)
        return SL_OK;
    int64_t nc = tc->cap ? tc->cap * 2 : 4096;
    while (nc < tc->n + (int64_t)more)
        nc *= 2;
    char *p = sl__realloc(tc->chars, (size_t)tc->cap, (size_t)nc);
    if (!p)
        return SL_ENOMEM;
    tc->chars = p;
    tc->cap = nc;
    return SL_OK;
}

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a: short keys, no need for more */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

/* Doubles the hash table (slot = code, -1 empty) and re-inserts every code. */
static int grow_slots(struct sl__text_col *tc)
{
    int64_t ns = tc->n_slots ? tc->n_slots * 2 : 1024;
    int32_t *s = sl__malloc((size_t)ns * sizeof *s);
    if (!s)
        return SL_ENOMEM;
    memset(s, 0xff, (size_t)ns * sizeof *s);
    for (int64_t c = 0; c < tc->dict_n; c++) {
        uint64_t h = hash_bytes(tc->chars + tc->dict_off[c],
                                (size_t)(tc->dict_off[c + 1] - tc->dict_off[c]));
        int64_t k = (int64_t)(h & (uint64_t)(ns - 1));
        while (s[k] >= 0)
            k = (k + 1) & (ns - 1);
        s[k] = (int32_t)c;
    }
    sl__free(tc->slots, (size_t)tc->n_slots * sizeof *tc->slots);
    tc->slots = s;
    tc->n_slots = ns;
    return SL_OK;
}

/* The code of string s in the dictionary, added if new. */
static int dict_code(struct sl__text_col *tc, const char *s, size_t n, int32_t *code)
{
    if ((tc->dict_n + 1) * 2 > tc->n_slots && grow_slots(tc) < 0)
        return SL_ENOMEM;
    uint64_t h = hash_bytes(s, n);
    int64_t k = (int64_t)(h & (uint64_t)(tc->n_slots - 1));
    for (; tc->slots[k] >= 0; k = (k + 1) & (tc->n_slots - 1)) {
        int32_t c = tc->slots[k];
        if ((size_t)(tc->dict_off[c + 1] - tc->dict_off[c]) == n &&
            memcmp(tc->chars + tc->dict_off[c], s, n) == 0) {
            *code = c;
            return SL_OK;
        }
    }
    if (tc->n + (int64_t)n > INT32_MAX || tc->dict_n + 1 >= INT32_MAX)
        return SL_EOVERFLOW;
    if (tc->dict_n + 2 > tc->dict_cap) {
        int64_t nc = tc->dict_cap ? tc->dict_cap * 2 : 256;
        int32_t *o = sl__realloc(tc->dict_off, (size_t)tc->dict_cap * sizeof *o,
                                 (size_t)nc * sizeof *o);
        if (!o)
            return SL_ENOMEM;
        tc->dict_off = o;
        tc->dict_cap = nc;
    }
    if (reserve_chars(tc, n) < 0)
        return SL_ENOMEM;
    if (n) /* chars may still be NULL for an empty string */
        memcpy(tc->chars + tc->n, s, n);
    tc->n += (int64_t)n;
    tc->dict_off[0] = 0;
    tc->dict_off[tc->dict_n + 1] = (int32_t)tc->n;
    *code = (int32_t)tc->dict_n++;
    tc->slots[k] = *code;
    return SL_OK;
}

int sl__text_col_put(struct sl__text_col *tc, void *data, int64_t row, const char *s, size_t n)
{
    if (tc->type == SL_TYPE_DICT)
        return dict_code(tc, s, n, (int32_t *)data + row);
    if (tc->type == SL_TYPE_UTF8 && tc->n + (int64_t)n > INT32_MAX)
        return SL_EOVERFLOW;
    if (reserve_chars(tc, n) < 0)
        return SL_ENOMEM;
    if (n)
        memcpy(tc->chars + tc->n, s, n);
    tc->n += (int64_t)n;
    if (tc->type == SL_TYPE_UTF8)
        ((int32_t *)data)[row + 1] = (int32_t)tc->n;
    else
        ((int64_t *)data)[row + 1] = tc->n;
    return SL_OK;
}

void sl__text_col_put_null(struct sl__text_col *tc, void *data, int64_t row)
{
    if (tc->type == SL_TYPE_DICT)
        ((int32_t *)data)[row] = 0;
    else if (tc->type == SL_TYPE_UTF8)
        ((int32_t *)data)[row + 1] = (int32_t)tc->n;
    else
        ((int64_t *)data)[row + 1] = tc->n;
}

int sl__text_col_finish(struct sl__text_col *tc, sl_batch_t *b, int c)
{
    struct sl__col *col = &b->cols[c];
    if (tc->type == SL_TYPE_DICT) {
        static const int32_t zero = 0;
        int rc = sl_batch_column_set_dictionary(b, c, tc->dict_n,
                                                tc->dict_n ? tc->dict_off : &zero,
                                                tc->chars ? tc->chars : "");
        tc->n = tc->dict_n = 0; /* the table and buffers are kept for the next batch */
        if (tc->slots)
            memset(tc->slots, 0xff, (size_t)tc->n_slots * sizeof *tc->slots);
        return rc;
    }
    if (!tc->chars)
        return SL_OK; /* every value empty or null: no bytes */
    /* The batch takes the buffer over; it frees it with the size it was allocated. */
    struct sl__buf *buf = sl__buf_wrap(tc->chars, tc->cap, SL__MEM_HOST, NULL, NULL);
    if (!buf)
        return SL_ENOMEM;
    sl__buf_unref(col->chars);
    col->chars = buf;
    tc->chars = NULL;
    tc->n = tc->cap = 0;
    return SL_OK;
}
