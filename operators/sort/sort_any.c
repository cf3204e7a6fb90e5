/* The sort of every column type: the batches concatenated (DICT columns on one
 * dictionary), a stable merge sort of row indices comparing values through
 * operators/common/values.h (strings by bytes, DICT by its strings, not by code), then
 * every column gathered by the permutation (sl__col_take). One task; the radix sort
 * (sort.c) keeps the int32/int64/float32/float64/date32/timestamp/decimal64 case. */
#include "sort_any.h"

#include "internal.h"

bool sl__sort_radix_types(const sl_schema_t *schema, int gpu)
{
    for (int i = 0; i < sl_schema_num_fields(schema); i++) {
        enum sl_type type;
        sl_schema_field(schema, i, NULL, &type);
        bool plain = type == SL_TYPE_INT32 || type == SL_TYPE_INT64 ||
                     type == SL_TYPE_FLOAT32 || type == SL_TYPE_FLOAT64;
        bool as_int = type == SL_TYPE_DATE32 || type == SL_TYPE_TIMESTAMP ||
                      (SL_TYPE_ID(type) == SL_TYPE_DECIMAL && sl_type_width(type) == 8);
        if (!plain && (gpu || !as_int))
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

/* Bottom-up merge sort of perm by c, through tmp; returns the buffer holding the result. */
static int64_t *merge_sort(const struct sl__sort_rows_cmp *c, int64_t *perm, int64_t *tmp,
                           int64_t n)
{
    int64_t *src = perm, *dst = tmp;
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = sl__sort_rows_compare(c, src[j], src[i]) < 0 ? src[j++] : src[i++];
            while (i < mid)
                dst[o++] = src[i++];
            while (j < hi)
                dst[o++] = src[j++];
        }
        int64_t *x = src;
        src = dst;
        dst = x;
    }
    return src;
}

int sl__sort_rows_perm(const struct sl__sort_rows_cmp *c, int64_t *perm, int64_t n)
{
    int64_t *tmp = sl__malloc((size_t)(n ? n : 1) * sizeof *tmp);
    if (!tmp)
        return SL_ENOMEM;
    int64_t *res = merge_sort(c, perm, tmp, n);
    if (res != perm)
        memcpy(perm, res, (size_t)n * sizeof *perm);
    sl__free(tmp, (size_t)(n ? n : 1) * sizeof *tmp);
    return SL_OK;
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
    struct sl__sort_rows_cmp c;
    rc = perm ? sl__sort_rows_cmp_init(&c, all, spec) : SL_ENOMEM;
    for (int64_t i = 0; rc == SL_OK && i < rows; i++)
        perm[i] = i;
    if (rc == SL_OK)
        rc = sl__sort_rows_perm(&c, perm, rows);
    if (rc == SL_OK)
        rc = sl__batch_take(all, perm, rows, out);
    sl__free(perm, (size_t)(rows ? rows : 1) * sizeof *perm);
    sl_batch_unref(all);
    return rc;
}
