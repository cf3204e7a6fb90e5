/* Merging the dictionaries of DICT columns (struct sl__dict_union, internal.h): batches of
 * several sources, of a file read in parts, or a table's run copied to a GPU as one batch
 * (gpu_concat.c), each with a dictionary of its own. Also the byte and word mixers the
 * merge hashes with, which the operators' value hashes share. */
#include <string.h>

#include "internal.h"

uint64_t sl__mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t sl__hash_bytes(const char *p, int64_t n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)n;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = sl__mix64(h ^ w);
    }
    uint64_t tail = 0;
    if (i < n) /* no libc call per value when the length is a multiple of 8 */
        memcpy(&tail, p + i, (size_t)(n - i));
    return sl__mix64(h ^ tail ^ ((uint64_t)(n - i) << 56));
}

/* Adds the entries of dictionary d to the merged one being built (table: merged code + 1
 * per slot, 0 = empty); remap[e] gets entry e's merged code. */
static void union_add(const struct sl__dict *d, int32_t *table, uint64_t slots,
                      int32_t *offs, char *chars, int64_t *m, int32_t *remap)
{
    const int32_t *doff = d->offsets->ptr;
    const char *dchars = d->chars ? d->chars->ptr : "";
    for (int64_t e = 0; e < d->n; e++) {
        const char *str = dchars + doff[e];
        int64_t len = doff[e + 1] - doff[e];
        for (uint64_t h = sl__hash_bytes(str, len) & (slots - 1);; h = (h + 1) & (slots - 1)) {
            int32_t g = table[h];
            if (!g) {
                memcpy(chars + offs[*m], str, (size_t)len);
                offs[*m + 1] = offs[*m] + (int32_t)len;
                table[h] = (int32_t)++*m;
                remap[e] = (int32_t)(*m - 1);
                break;
            }
            if (offs[g] - offs[g - 1] == len && !memcmp(chars + offs[g - 1], str, (size_t)len)) {
                remap[e] = g - 1;
                break;
            }
        }
    }
}

/* The index of the first batch before k whose column c has batch k's dictionary, or k
 * (ptab: batch index + 1 per slot, keyed by the dictionary's address). */
/* The column of batch k: cols[k], or c for every batch when cols is NULL. */
#define UNION_COL(k) (cols ? cols[k] : c)

static int64_t union_first(sl_batch_t *const *bs, int64_t k, int c, const int *cols,
                           int64_t *ptab, uint64_t pslots)
{
    const struct sl__dict *d = bs[k]->cols[UNION_COL(k)].dict;
    for (uint64_t h = sl__mix64((uint64_t)(uintptr_t)d) & (pslots - 1);; h = (h + 1) & (pslots - 1)) {
        if (!ptab[h]) {
            ptab[h] = k + 1;
            return k;
        }
        if (bs[ptab[h] - 1]->cols[UNION_COL(ptab[h] - 1)].dict == d)
            return ptab[h] - 1;
    }
}

void sl__dict_union_fini(struct sl__dict_union *u)
{
    sl__dict_unref(u->dict);
    sl__free(u->remap, 0);
    sl__free(u->src, 0);
    memset(u, 0, sizeof *u);
}

int sl__dict_union_init(struct sl__dict_union *u, sl_batch_t *const *bs, int64_t n, int c)
{
    return sl__dict_union_init_cols(u, bs, n, c, NULL);
}

int sl__dict_union_init_cols(struct sl__dict_union *u, sl_batch_t *const *bs, int64_t n, int c,
                             const int *cols)
{
    memset(u, 0, sizeof *u);
    uint64_t pslots = 16;
    while (pslots < 2 * (uint64_t)n)
        pslots <<= 1;
    int64_t *ptab = sl__calloc(pslots, sizeof *ptab);
    u->src = sl__calloc((size_t)(n ? n : 1), sizeof *u->src);
    int rc = ptab && u->src ? SL_OK : SL_ENOMEM;
    /* Pass 1: each distinct dictionary gets its range of remap; batches sharing one
     * dictionary (slices of one batch) share its range. */
    int64_t n_entries = 0, bytes = 0;
    for (int64_t k = 0; rc == SL_OK && k < n; k++) {
        const struct sl__dict *d = bs[k]->cols[UNION_COL(k)].dict;
        int64_t first = union_first(bs, k, c, cols, ptab, pslots), dn = d ? d->n : 0;
        u->src[k].n = dn;
        u->src[k].base = first < k ? u->src[first].base : n_entries;
        u->src[k].fresh = first == k;
        if (first == k) {
            n_entries += dn;
            bytes += dn ? ((const int32_t *)d->offsets->ptr)[dn] : 0;
        }
    }
    if (rc == SL_OK && (n_entries >= INT32_MAX || bytes >= INT32_MAX))
        rc = SL_EOVERFLOW;
    uint64_t slots = 16;
    while (slots < 2 * (uint64_t)n_entries)
        slots <<= 1;
    int32_t *table = NULL, *offs = NULL;
    char *chars = NULL;
    if (rc == SL_OK) {
        table = sl__calloc(slots, sizeof *table);
        offs = sl__malloc((size_t)(n_entries + 1) * sizeof *offs);
        chars = sl__malloc((size_t)bytes + 1);
        u->remap = sl__malloc((size_t)(n_entries + 1) * sizeof *u->remap);
        rc = table && offs && chars && u->remap ? SL_OK : SL_ENOMEM;
    }
    /* Pass 2: the distinct strings, first seen first. */
    int64_t m = 0;
    if (rc == SL_OK)
        offs[0] = 0;
    for (int64_t k = 0; rc == SL_OK && k < n; k++) {
        if (!u->src[k].fresh)
            continue;
        const struct sl__dict *d = bs[k]->cols[UNION_COL(k)].dict;
        if (d)
            union_add(d, table, slots, offs, chars, &m, u->remap + u->src[k].base);
    }
    if (rc == SL_OK && !(u->dict = sl__dict_new(m, offs, chars)))
        rc = SL_ENOMEM;
    sl__free(ptab, pslots * sizeof *ptab);
    sl__free(table, slots * sizeof *table);
    sl__free(offs, 0);
    sl__free(chars, 0);
    if (rc < 0)
        sl__dict_union_fini(u);
    return rc;
}

int sl__dict_union_attach(const struct sl__dict_union *u, sl_batch_t *b, int c)
{
    if (!sl_batch_column_data(b, c) || b->cols[c].type != SL_TYPE_DICT)
        return SL_EINVAL;
    sl__dict_ref(u->dict);
    sl__dict_unref(b->cols[c].dict);
    b->cols[c].dict = u->dict;
    return SL_OK;
}
