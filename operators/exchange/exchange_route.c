/* Where an exchange sends each row (exchange_int.h): by a hash of the key, by ranges of
 * sampled splitters, or all to one rank. */
#include <stdlib.h>

#include "exchange_int.h"
#include "sluice_k/gen_math.h"

static int64_t key_at(const struct sl__rowsview *k, int64_t i)
{
    enum sl_type id = SL_TYPE_ID(k->type);
    if (id == SL_TYPE_INT32 || id == SL_TYPE_DATE32) /* the 4-byte ones */
        return ((const int32_t *)k->data)[i];
    return ((const int64_t *)k->data)[i];
}

static int cmp_split(const struct xchg_split *a, const struct xchg_split *b)
{
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return a->row < b->row ? -1 : a->row > b->row;
}

int sl__xchg_route(const struct xchg_route *r, int64_t i)
{
    if (r->mode == X_GATHER)
        return r->to;
    if (!sl__rowsview_valid(r->key, i)) /* nulls sort last: the last rank's in a range */
        return r->mode == X_RANGE ? r->ranks - 1 : 0;
    int64_t k = key_at(r->key, i);
    /* splitmix64's finalizer (every key bit moves the high bits), scaled to [0, ranks)
     * without a division */
    if (r->mode == X_HASH)
        return (int)(((unsigned __int128)sl__gen_mix64((uint64_t)k) * (uint64_t)r->ranks) >> 64);
    /* Range: the first splitter above (k, rank, i) names the destination. */
    struct xchg_split at = {k, r->rank, i};
    int lo = 0, hi = r->ranks - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (cmp_split(&at, &r->splits[mid]) < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

int64_t sl__xchg_sample(const struct sl__rowsview *key, int64_t n, int rank,
                        struct xchg_sample *s)
{
    int64_t stride = n / SL__XCHG_SAMPLES_PER_RANK + 1, m = 0;
    for (int64_t i = 0; i < n && m < SL__XCHG_SAMPLES_PER_RANK; i += stride) {
        if (!sl__rowsview_valid(key, i))
            continue;
        int64_t w = n - i < stride ? n - i : stride;
        s[m++] = (struct xchg_sample){{key_at(key, i), rank, i}, w};
    }
    return m;
}

static int cmp_sample(const void *a, const void *b)
{
    return cmp_split(&((const struct xchg_sample *)a)->at, &((const struct xchg_sample *)b)->at);
}

/* Splitter j is the first sample whose preceding weight reaches (j + 1) / ranks of the
 * total: each rank then receives about 1 / ranks of the rows, whatever the skew. */
void sl__xchg_splitters(struct xchg_sample *all, int64_t n, int ranks, struct xchg_split *out)
{
    qsort(all, (size_t)n, sizeof *all, cmp_sample);
    int64_t total = 0;
    for (int64_t i = 0; i < n; i++)
        total += all[i].weight;
    int64_t seen = 0, i = 0;
    for (int j = 0; j < ranks - 1; j++) {
        int64_t want = total * (j + 1) / ranks;
        while (i < n && seen + all[i].weight <= want)
            seen += all[i++].weight;
        out[j] = i < n ? all[i].at : (struct xchg_split){INT64_MAX, INT32_MAX, INT64_MAX};
    }
}
