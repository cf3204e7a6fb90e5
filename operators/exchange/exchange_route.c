/* Where an exchange sends each row (exchange_int.h): by a hash of the key, by ranges of
 * sampled splitters, or all to one rank. */
#include <stdlib.h>
#include <string.h>

#include "exchange_int.h"
#include "sluice_k/gen_math.h"

static int64_t key_at(const struct sl__rowsview *k, int64_t i)
{
    enum sl_type id = SL_TYPE_ID(k->type);
    if (id == SL_TYPE_INT32 || id == SL_TYPE_DATE32) /* the 4-byte ones */
        return ((const int32_t *)k->data)[i];
    return ((const int64_t *)k->data)[i];
}

/* splitmix64's finalizer (every key bit moves the high bits), scaled to [0, n) without
 * a division. */
static int bucket_of(int64_t k, int n)
{
    return (int)(((unsigned __int128)sl__gen_mix64((uint64_t)k) * (uint64_t)n) >> 64);
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
    if (r->mode == X_HASH && r->bucket_rank)
        return r->bucket_rank[bucket_of(k, r->n_buckets)];
    if (r->mode == X_HASH)
        return bucket_of(k, r->ranks);
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

/* The hash modes over keys of type T without nulls: one tight loop, counting as it goes
 * (a second pass over dest cost a tenth of the exchange's route). */
#define ROUTE_HASH(T)                                                                      \
    do {                                                                                   \
        const T *k = r->key->data;                                                         \
        for (int64_t i = 0; i < n; i++) {                                                  \
            int b = bucket_of(k[i], nb);                                                   \
            dest[i] = map ? map[b] : b;                                                    \
            count[dest[i]]++;                                                              \
        }                                                                                  \
    } while (0)

void sl__xchg_route_all(const struct xchg_route *r, int64_t n, int32_t *dest, int64_t *count)
{
    enum sl_type id = r->key ? SL_TYPE_ID(r->key->type) : SL_TYPE_INVALID;
    memset(count, 0, (size_t)r->ranks * sizeof *count);
    if (r->mode == X_HASH && n && !r->key->validity) {
        const int32_t *map = r->bucket_rank;
        int nb = map ? r->n_buckets : r->ranks;
        if (id == SL_TYPE_INT32 || id == SL_TYPE_DATE32)
            ROUTE_HASH(int32_t);
        else
            ROUTE_HASH(int64_t);
    } else {
        for (int64_t i = 0; i < n; i++)
            count[dest[i] = sl__xchg_route(r, i)]++;
    }
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

void sl__xchg_bucket_sizes(const struct sl__rowsview *key, int64_t n, int n_buckets,
                           int64_t *hist)
{
    memset(hist, 0, (size_t)n_buckets * sizeof *hist);
    for (int64_t i = 0; i < n; i++)
        if (sl__rowsview_valid(key, i))
            hist[bucket_of(key_at(key, i), n_buckets)]++;
}

struct bucket {
    int64_t size;
    int index;
};

static int cmp_bucket(const void *a, const void *b)
{
    const struct bucket *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return x->index - y->index;
}

void sl__xchg_assign_buckets(const int64_t *sizes, int n_buckets, int ranks, int32_t *out)
{
    struct bucket *bs = sl__malloc((size_t)n_buckets * sizeof *bs);
    int64_t *load = sl__calloc((size_t)ranks, sizeof *load);
    if (!bs || !load) { /* without memory: the plain hash's spread */
        for (int b = 0; b < n_buckets; b++)
            out[b] = (int32_t)((int64_t)b * ranks / n_buckets);
    } else {
        for (int b = 0; b < n_buckets; b++)
            bs[b] = (struct bucket){sizes[b], b};
        qsort(bs, (size_t)n_buckets, sizeof *bs, cmp_bucket);
        for (int j = 0; j < n_buckets; j++) {
            int best = 0;
            for (int d = 1; d < ranks; d++)
                best = load[d] < load[best] ? d : best;
            out[bs[j].index] = best;
            load[best] += bs[j].size;
        }
    }
    sl__free(bs, 0);
    sl__free(load, 0);
}
