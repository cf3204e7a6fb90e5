/* The sort of every column type: the batches concatenated (DICT columns on one
 * dictionary), a stable LSD radix sort of row indices over exact order-preserving 64-bit
 * codes of each key (integers and floats mapped as sort_int.h does, NaN largest; a
 * 128-bit decimal in two passes; strings by their rank among the column's distinct
 * strings in byte order, a DICT column by its dictionary's ranks, not its codes), then
 * every column gathered by the permutation (sl__col_take). One task; the radix sort
 * (sort.c) keeps the int32/int64/float32/float64/date32/timestamp/decimal64 case. */
#include "sort_any.h"

#include <math.h>

#include "common/op_common.h"
#include "internal.h"

bool sl__sort_radix_types(const sl_schema_t *schema)
{
    for (int i = 0; i < sl_schema_num_fields(schema); i++) {
        enum sl_type type;
        sl_schema_field(schema, i, NULL, &type);
        if (!sl__type_signed_word(type) && type != SL_TYPE_FLOAT32 && type != SL_TYPE_FLOAT64)
            return false;
    }
    return true;
}

int sl__sort_rows_cmp_init(struct sl__sort_rows_cmp *c, const sl_batch_t *b,
                           const struct sl__sort_spec *spec)
{
    c->spec = spec;
    for (int k = 0; k < spec->n_keys; k++) {
        int rc = sl__colview_get(b, spec->keys[k].col, &c->v[k]);
        if (rc < 0)
            return rc;
    }
    return SL_OK;
}

int sl__sort_rows_compare(const struct sl__sort_rows_cmp *c, int64_t a, int64_t b)
{
    for (int k = 0; k < c->spec->n_keys; k++) {
        const struct sl__sort_key *key = &c->spec->keys[k];
        const struct sl__colview *v = &c->v[k];
        bool va = sl__colview_valid(v, a), vb = sl__colview_valid(v, b);
        int r;
        if (!va || !vb)
            r = va == vb ? 0 : (!va == !!key->nulls_first) ? -1 : 1;
        else
            r = key->desc ? -sl__val_cmp(v, a, v, b) : sl__val_cmp(v, a, v, b);
        if (r)
            return r;
    }
    return 0;
}

/* ---------------- order-preserving 64-bit codes of every type ---------------- */

/* Bottom-up merge sort of ids[0..n) by cmp (stable); SL_ENOMEM. */
static int sort_ids(int64_t *ids, int64_t n, int (*cmp)(const void *ctx, int64_t a, int64_t b),
                    const void *ctx)
{
    int64_t *tmp = sl__malloc((size_t)(n ? n : 1) * sizeof *tmp), *src = ids, *dst = tmp;
    if (!tmp)
        return SL_ENOMEM;
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = cmp(ctx, src[j], src[i]) < 0 ? src[j++] : src[i++];
            while (i < mid)
                dst[o++] = src[i++];
            while (j < hi)
                dst[o++] = src[j++];
        }
        int64_t *x = src;
        src = dst;
        dst = x;
    }
    if (src != ids)
        memcpy(ids, src, (size_t)n * sizeof *ids);
    sl__free(tmp, (size_t)(n ? n : 1) * sizeof *tmp);
    return SL_OK;
}

static int cmp_rows_of(const void *ctx, int64_t a, int64_t b)
{
    return sl__val_cmp(ctx, a, ctx, b);
}

/* The dictionary of a DICT column as a UTF8 view. */
static struct sl__colview dict_view(const struct sl__colview *v)
{
    struct sl__colview d = {.c = {.type = SL_TYPE_UTF8, .length = v->s.dict_length,
                                  .data = v->s.dict_offsets},
                            .s = {.chars = v->s.dict_chars}};
    return d;
}

/* Re-inserts distinct ids [0, n_ids) (rows rep[id] of d) into the first `slots` entries
 * of table (id + 1, 0 = empty), which has room for them; returns slots. */
static uint64_t rehash_ids(const struct sl__colview *d, int64_t *table, const int64_t *rep,
                           int64_t n_ids, uint64_t slots)
{
    memset(table, 0, slots * sizeof *table);
    for (int64_t id = 0; id < n_ids; id++) {
        uint64_t h = sl__val_hash(d, rep[id]) & (slots - 1);
        while (table[h])
            h = (h + 1) & (slots - 1);
        table[h] = id + 1;
    }
    return slots;
}

int sl__sort_string_ranks(const struct sl__colview *v, uint64_t **out, int64_t *n_out)
{
    struct sl__colview d = v->c.type == SL_TYPE_DICT ? dict_view(v) : *v;
    int64_t n = d.c.length, n_ids = 0;
    uint64_t slots = 1024, cap = 1024; /* slots doubled at half full, up to cap */
    while (cap < 2 * (uint64_t)n)
        cap <<= 1;
    int64_t *table = sl__malloc(cap * sizeof *table); /* distinct id + 1, 0 = empty */
    int64_t *rep = sl__malloc((size_t)(n ? n : 1) * sizeof *rep); /* distinct id -> row */
    uint64_t *rank = sl__malloc((size_t)(n ? n : 1) * sizeof *rank);
    int rc = table && rep && rank ? SL_OK : SL_ENOMEM;
    if (rc == SL_OK)
        memset(table, 0, slots * sizeof *table);
    /* Distinct strings (rank first holds each row's distinct id). */
    for (int64_t i = 0; rc == SL_OK && i < n; i++) {
        if (v->c.type != SL_TYPE_DICT && !sl__colview_valid(&d, i)) {
            rank[i] = 0;
            continue;
        }
        for (uint64_t h = sl__val_hash(&d, i) & (slots - 1);; h = (h + 1) & (slots - 1)) {
            if (!table[h]) {
                rep[n_ids] = i;
                table[h] = ++n_ids;
                rank[i] = (uint64_t)(n_ids - 1);
                if (2 * (uint64_t)n_ids > slots)
                    slots = rehash_ids(&d, table, rep, n_ids, 2 * slots);
                break;
            }
            if (sl__val_cmp(&d, rep[table[h] - 1], &d, i) == 0) {
                rank[i] = (uint64_t)(table[h] - 1);
                break;
            }
        }
    }
    /* Sort the distinct strings; table is reused as distinct id -> rank. */
    if (rc == SL_OK)
        rc = sort_ids(rep, n_ids, cmp_rows_of, &d);
    for (int64_t r = 0; rc == SL_OK && r < n_ids; r++)
        table[rank[rep[r]]] = r;
    for (int64_t i = 0; rc == SL_OK && i < n; i++)
        rank[i] = (uint64_t)table[rank[i]];
    sl__free(table, 0);
    sl__free(rep, 0);
    if (rc < 0) {
        sl__free(rank, 0);
        return rc;
    }
    *out = rank;
    *n_out = n;
    return SL_OK;
}

/* The code of valid fixed-width row r: its order as an unsigned 64-bit number (word 0;
 * a 128-bit decimal: word 0 its low half, word 1 its high half). */
static uint64_t fixed_code(const struct sl__colview *v, int64_t r, int word)
{
    const void *x = sl__colview_at(v, r);
    switch (SL_TYPE_ID(v->c.type)) {
    case SL_TYPE_FLOAT32:
    case SL_TYPE_FLOAT64: {
        double d = v->c.type == SL_TYPE_FLOAT32 ? *(const float *)x : *(const double *)x;
        uint64_t u;
        if (d != d)
            d = NAN; /* one NaN, above +inf */
        else if (d == 0)
            d = 0;   /* -0.0 equals 0.0 */
        memcpy(&u, &d, 8);
        return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
    }
    case SL_TYPE_UINT64: return *(const uint64_t *)x;
    case SL_TYPE_DECIMAL:
        if (sl_type_width(v->c.type) == 16) {
            uint64_t w[2];
            memcpy(w, x, 16);
            return word == 0 ? w[0] : w[1] ^ 0x8000000000000000ull;
        }
        return (uint64_t)*(const int64_t *)x ^ 0x8000000000000000ull;
    default: /* integers, bool, date32, timestamp */
        return (uint64_t)(int64_t)sl__val_i128(v, r) ^ 0x8000000000000000ull;
    }
}

/* One stable pass: perm reordered by code(perm[i]) (items, tmp: n each). */
struct pass {
    const struct sl__colview *v;
    const uint64_t *rank;   /* strings: rank per row or per dictionary code */
    int word;               /* 128-bit decimals: 0 low, 1 high */
    int desc;
    int null_pass, nulls_first;
};

static uint64_t pass_code(const struct pass *p, int64_t r)
{
    bool valid = sl__colview_valid(p->v, r);
    if (p->null_pass)
        return valid ? (uint64_t)p->nulls_first : (uint64_t)!p->nulls_first;
    if (!valid)
        return 0; /* one code for every null: they keep their order */
    uint64_t c;
    if (p->rank && p->v->c.type == SL_TYPE_DICT) {
        int32_t code = ((const int32_t *)p->v->c.data)[p->v->c.offset + r];
        c = code >= 0 && code < p->v->s.dict_length ? p->rank[code] : 0;
    } else if (p->rank) {
        c = p->rank[r];
    } else {
        c = fixed_code(p->v, r, p->word);
    }
    return p->desc ? ~c : c;
}

static void run_pass(const struct pass *p, int64_t *perm, struct sl__kv64 *items,
                     struct sl__kv64 *tmp, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        items[i] = (struct sl__kv64){pass_code(p, perm[i]), (uint64_t)perm[i]};
    const struct sl__kv64 *sorted = sl__rsort_k64(items, tmp, n);
    for (int64_t i = 0; i < n; i++)
        perm[i] = (int64_t)sorted[i].idx;
}

/* Sorts perm (the rows 0..n of b) stably by spec: LSD over the keys, last key first;
 * per key its value passes (the high half of a 128-bit decimal after its low half), then
 * a pass on its null flags if it has any. */
static int sort_perm(const sl_batch_t *b, const struct sl__sort_spec *spec, int64_t *perm,
                     int64_t n)
{
    struct sl__kv64 *items = sl__malloc((size_t)(n ? n : 1) * sizeof *items);
    struct sl__kv64 *tmp = sl__malloc((size_t)(n ? n : 1) * sizeof *tmp);
    int rc = items && tmp ? SL_OK : SL_ENOMEM;
    for (int k = spec->n_keys - 1; rc == SL_OK && k >= 0; k--) {
        const struct sl__sort_key *key = &spec->keys[k];
        struct sl__colview v;
        struct pass p = {.v = &v, .desc = key->desc, .nulls_first = key->nulls_first};
        uint64_t *rank = NULL;
        int64_t n_rank = 0;
        if ((rc = sl__colview_get(b, key->col, &v)) < 0)
            break;
        if (sl_type_is_string(v.c.type) && (rc = sl__sort_string_ranks(&v, &rank, &n_rank)) < 0)
            break;
        p.rank = rank;
        run_pass(&p, perm, items, tmp, n);
        if (sl_type_width(v.c.type) == 16) {
            p.word = 1;
            run_pass(&p, perm, items, tmp, n);
        }
        if (v.c.validity) {
            p.null_pass = 1;
            run_pass(&p, perm, items, tmp, n);
        }
        sl__free(rank, 0);
    }
    sl__free(items, 0);
    sl__free(tmp, 0);
    return rc;
}

int sl__sort_any(sl_batch_t *const *batches, int64_t n, const struct sl__sort_spec *spec,
                 sl_batch_t **out)
{
    *out = NULL;
    sl_batch_t *all = NULL;
    int rc = sl__batch_concat(batches, n, &all);
    if (rc < 0)
        return rc;
    int64_t rows = sl_batch_num_rows(all);
    int64_t *perm = sl__malloc((size_t)(rows ? rows : 1) * sizeof *perm);
    rc = perm ? SL_OK : SL_ENOMEM;
    for (int64_t i = 0; rc == SL_OK && i < rows; i++)
        perm[i] = i;
    if (rc == SL_OK)
        rc = sort_perm(all, spec, perm, rows);
    if (rc == SL_OK)
        rc = sl__batch_take(all, perm, rows, out);
    sl__free(perm, (size_t)(rows ? rows : 1) * sizeof *perm);
    sl_batch_unref(all);
    return rc;
}
