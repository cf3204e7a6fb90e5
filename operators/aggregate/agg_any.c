/* The group-by of every column type (agg_hash.c sends a plan here when a key or an
 * aggregated column is of a type the group table does not read, or for
 * count(DISTINCT)): keys of any type and number, compared and hashed through
 * operators/common/values.h.
 *
 * sink: each worker keeps references to its batches and, without DICT keys, groups each
 * batch's rows (in parallel: hashing and comparing the keys is most of the work);
 * combine moves them to the global list; finalize concatenates them (DICT columns end
 * up on one dictionary) and groups the rows in one task: a hash of the keys per row (or
 * per group of a batch grouped by the sink), an open-addressing table of groups (each
 * group remembers its first row), then one pass per aggregate. DICT keys compare
 * by a canonical code per dictionary entry (equal strings, equal code), so a dictionary
 * is hashed once, not per row. Output keys and min/max are gathered rows of the input
 * (sl__col_take), so every type comes out as it went in. */
#include <math.h>
#include <string.h>

#include "../common/values.h"
#include "agg_int.h"

struct agg_kept_batch {
    struct agg_kept_batch *next;
    sl_batch_t *batch;
    /* The batch's rows grouped by the sink (keys without DICT): each row's local group
     * and each local group's first row; NULL where finalize groups the rows itself. */
    int64_t *lgid, *lrep;
    int64_t n_local;
};

static bool any_dict_key(const struct agg_plan *p);
static int sink_group(const struct agg_plan *p, const sl_batch_t *b, struct agg_kept_batch *k);

int sl__agg_any_sink(sl_task_t *t, sl_batch_t *b)
{
    struct agg_local *ls = sl_task_lstate(t);
    if (!ls)
        return SL_ENOMEM;
    if (sl_batch_num_rows(b) == 0)
        return SL_OK;
    if (sl_batch_device(b) >= 0)
        return sl_task_fail(t, SL_EINTERNAL, "aggregate: a device batch reached the CPU sink");
    const struct agg_plan *p = sl_op_data(sl_task_op(t));
    struct agg_kept_batch *k = sl_task_alloc(t, sizeof *k);
    if (!k)
        return SL_ENOMEM;
    memset(k, 0, sizeof *k);
    if (p->n_keys > 0 && !any_dict_key(p)) {
        /* Hashing and comparing the keys is most of the work: each worker groups its
         * own batches here, so finalize only merges their groups (a DICT key waits for
         * the one dictionary that concatenation gives it). */
        int rc = sink_group(p, b, k);
        if (rc < 0)
            return sl_task_fail(t, rc, "aggregate: %s", sl_strerror(rc));
    }
    sl_batch_ref(b);
    k->batch = b;
    k->next = ls->batches;
    ls->batches = k;
    return SL_OK;
}

void sl__agg_any_combine(struct agg_global *gs, struct agg_local *ls)
{
    while (ls->batches) {
        struct agg_kept_batch *k = ls->batches;
        ls->batches = k->next;
        k->next = gs->batches;
        gs->batches = k;
    }
}

void sl__agg_any_release(struct agg_kept_batch **list)
{
    for (struct agg_kept_batch *k = *list; k; k = k->next) {
        sl_batch_unref(k->batch);
        sl__free(k->lgid, 0);
        sl__free(k->lrep, 0);
        k->lgid = k->lrep = NULL;
    }
    *list = NULL;
}

/* One key column of the concatenated input. */
struct any_key {
    struct sl__colview v;
    int32_t *canon;     /* DICT: the first code of each code's string */
    uint64_t *dhash;    /* DICT: the hash of each code's string */
    int64_t dict_n;
};

/* The state of one finalize (freed by any_free). */
struct any_run {
    int64_t n, groups;
    uint64_t *ghash;    /* per group: its keys' hash */
    int64_t *gid;       /* per row */
    int64_t *rep;       /* per group: its first row, -1 for the empty global row */
    uint64_t *slots;    /* gid + 1, 0 = empty; grown with the groups (stays in cache) */
    uint64_t mask;
    struct any_key keys[AGG_MAX_KEYS];
};

static void *zalloc(size_t bytes)
{
    void *p = sl__malloc(bytes ? bytes : 1);
    if (p)
        memset(p, 0, bytes);
    return p;
}

static void any_free(const struct agg_plan *p, struct any_run *r)
{
    sl__free(r->ghash, 0);
    sl__free(r->gid, 0);
    sl__free(r->rep, 0);
    sl__free(r->slots, 0);
    for (int j = 0; j < p->n_keys; j++) {
        sl__free(r->keys[j].canon, 0);
        sl__free(r->keys[j].dhash, 0);
    }
}

static inline uint64_t mix(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

/* Canonical codes and hashes of a DICT key's dictionary entries. */
static int key_dict_prepare(struct any_key *k)
{
    int64_t n = k->v.s.dict_length;
    k->dict_n = n;
    uint64_t slots = 16;
    while (slots < 2 * (uint64_t)n)
        slots <<= 1;
    int32_t *tab = zalloc(slots * sizeof(int32_t));
    k->canon = sl__malloc((size_t)(n ? n : 1) * sizeof(int32_t));
    k->dhash = sl__malloc((size_t)(n ? n : 1) * sizeof(uint64_t));
    if (!tab || !k->canon || !k->dhash) {
        sl__free(tab, 0);
        return SL_ENOMEM;
    }
    /* A view of the dictionary as a utf8 column, to hash and compare its entries. */
    struct sl__colview d = {.c = {.type = SL_TYPE_UTF8, .length = n, .data = k->v.s.dict_offsets},
                            .s = {.chars = k->v.s.dict_chars}};
    for (int64_t e = 0; e < n; e++) {
        uint64_t h = sl__val_hash(&d, e);
        k->dhash[e] = h;
        for (uint64_t s = h & (slots - 1);; s = (s + 1) & (slots - 1)) {
            if (!tab[s]) {
                tab[s] = (int32_t)e + 1;
                k->canon[e] = (int32_t)e;
                break;
            }
            if (sl__val_cmp(&d, tab[s] - 1, &d, e) == 0) {
                k->canon[e] = tab[s] - 1;
                break;
            }
        }
    }
    sl__free(tab, 0);
    return SL_OK;
}

static inline int32_t dict_code(const struct any_key *k, int64_t r)
{
    int32_t c = ((const int32_t *)k->v.c.data)[k->v.c.offset + r];
    return c >= 0 && c < k->dict_n ? c : 0;
}

static uint64_t row_hash(const struct agg_plan *p, const struct any_run *r, int64_t i)
{
    uint64_t h = 0x243f6a8885a308d3ull;
    for (int j = 0; j < p->n_keys; j++) {
        const struct any_key *k = &r->keys[j];
        uint64_t w;
        if (!sl__colview_valid(&k->v, i))
            w = 0x5bd1e995ull + (uint64_t)j;
        else if (k->canon)
            w = k->dhash[dict_code(k, i)];
        else
            w = sl__val_hash(&k->v, i);
        h = mix(h, w);
    }
    return h;
}

static bool rows_equal(const struct agg_plan *p, const struct any_run *r, int64_t a, int64_t b)
{
    for (int j = 0; j < p->n_keys; j++) {
        const struct any_key *k = &r->keys[j];
        bool va = sl__colview_valid(&k->v, a), vb = sl__colview_valid(&k->v, b);
        if (va != vb)
            return false;
        if (!va)
            continue;
        if (k->canon) {
            if (k->canon[dict_code(k, a)] != k->canon[dict_code(k, b)])
                return false;
        } else if (k->v.c.type == SL_TYPE_UTF8 || k->v.c.type == SL_TYPE_LARGE_UTF8) {
            /* Equal or not needs no order: lengths, then bytes (most rows of a group
             * by strings come here). */
            int64_t al, bl;
            const char *as = sl__colview_str(&k->v, a, &al), *bs = sl__colview_str(&k->v, b, &bl);
            if (al != bl || memcmp(as, bs, (size_t)al) != 0)
                return false;
        } else if (sl__val_cmp(&k->v, a, &k->v, b) != 0) {
            return false;
        }
    }
    return true;
}

/* Doubles the group slots (at half full) and re-inserts every group. */
static int grow_slots(struct any_run *r)
{
    uint64_t mask = 2 * r->mask + 1;
    uint64_t *slots = zalloc((mask + 1) * sizeof(uint64_t));
    if (!slots)
        return SL_ENOMEM;
    for (int64_t g = 0; g < r->groups; g++) {
        uint64_t s = r->ghash[g] & mask;
        while (slots[s])
            s = (s + 1) & mask;
        slots[s] = (uint64_t)g + 1;
    }
    sl__free(r->slots, 0);
    r->slots = slots;
    r->mask = mask;
    return SL_OK;
}

/* The group of row i (made when new: its hash and first row) in *g. */
static int row_group(const struct agg_plan *p, struct any_run *r, int64_t i, int64_t *g)
{
    uint64_t h = p->n_keys ? row_hash(p, r, i) : 0;
    for (uint64_t s = h & r->mask;; s = (s + 1) & r->mask) {
        uint64_t e = r->slots[s];
        if (!e) {
            r->ghash[r->groups] = h;
            r->rep[r->groups] = i;
            *g = r->groups++;
            r->slots[s] = (uint64_t)r->groups;
            return 2 * (uint64_t)r->groups > r->mask ? grow_slots(r) : SL_OK;
        }
        if (r->ghash[e - 1] == h && rows_equal(p, r, r->rep[e - 1], i)) {
            *g = (int64_t)e - 1;
            return SL_OK;
        }
    }
}

/* Assigns every row of in its group (r->gid) and every group its first row (r->rep);
 * in is the concatenation of the batches of kept (NULL: any batch) in their order. */
static int group_rows(const struct agg_plan *p, const sl_batch_t *in,
                      const struct agg_kept_batch *kept, struct any_run *r)
{
    int64_t n = r->n;
    for (int j = 0; j < p->n_keys; j++) {
        int rc = sl__colview_get(in, p->key_cols[j], &r->keys[j].v);
        if (rc == SL_OK && r->keys[j].v.c.type == SL_TYPE_DICT)
            rc = key_dict_prepare(&r->keys[j]);
        if (rc < 0)
            return rc;
    }
    r->mask = 1023;
    r->slots = zalloc((r->mask + 1) * sizeof(uint64_t));
    r->ghash = sl__malloc((size_t)(n ? n : 1) * sizeof(uint64_t));
    r->gid = sl__malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    r->rep = sl__malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (!r->slots || !r->ghash || !r->gid || !r->rep)
        return SL_ENOMEM;
    for (const struct agg_kept_batch *k = kept; k; k = k->next)
        if (!k->lgid)
            kept = NULL; /* not all grouped by the sink: every row here */
    for (int64_t i = 0; !kept && i < n; i++) {
        if (row_group(p, r, i, &r->gid[i]) < 0)
            return SL_ENOMEM;
    }
    /* Grouped by the sink: the first row of each local group finds (or makes) its
     * group, in the order of the rows, so groups and their first rows are those of the
     * loop above; then every row takes its local group's group. */
    int64_t base = 0;
    for (const struct agg_kept_batch *k = kept; k; k = k->next) {
        int64_t *map = sl__malloc((size_t)(k->n_local ? k->n_local : 1) * sizeof *map);
        if (!map)
            return SL_ENOMEM;
        for (int64_t l = 0; l < k->n_local; l++) {
            if (row_group(p, r, base + k->lrep[l], &map[l]) < 0) {
                sl__free(map, 0);
                return SL_ENOMEM;
            }
        }
        int64_t rows = sl_batch_num_rows(k->batch);
        for (int64_t i = 0; i < rows; i++)
            r->gid[base + i] = map[k->lgid[i]];
        sl__free(map, 0);
        base += rows;
    }
    if (p->n_keys == 0 && r->groups == 0) {
        r->rep[0] = -1; /* a global aggregate has one row even without input rows */
        r->groups = 1;
    }
    return SL_OK;
}

static bool any_dict_key(const struct agg_plan *p)
{
    for (int j = 0; j < p->n_keys; j++)
        if (SL_TYPE_ID(p->key_types[j]) == SL_TYPE_DICT)
            return true;
    return false;
}

/* The sink's grouping of one batch into k (lgid, lrep, n_local). */
static int sink_group(const struct agg_plan *p, const sl_batch_t *b, struct agg_kept_batch *k)
{
    struct any_run r = {0};
    r.n = sl_batch_num_rows(b);
    int rc = group_rows(p, b, NULL, &r);
    if (rc == SL_OK) {
        k->lrep = sl__malloc((size_t)r.groups * sizeof *k->lrep);
        rc = k->lrep ? SL_OK : SL_ENOMEM;
    }
    if (rc == SL_OK) {
        memcpy(k->lrep, r.rep, (size_t)r.groups * sizeof *k->lrep);
        k->lgid = r.gid;
        k->n_local = r.groups;
        r.gid = NULL;
    }
    any_free(p, &r);
    return rc;
}

/* The distinct values of column v per group: the count of each group in cnt. */
static int count_distinct(const struct any_run *r, const struct sl__colview *v, int64_t *cnt)
{
    uint64_t mask = 15;
    while (mask < 2 * (uint64_t)r->n)
        mask = 2 * mask + 1;
    uint64_t *set = zalloc((mask + 1) * sizeof(uint64_t)); /* row + 1 */
    if (!set)
        return SL_ENOMEM;
    for (int64_t i = 0; i < r->n; i++) {
        if (!sl__colview_valid(v, i))
            continue;
        int64_t g = r->gid[i];
        uint64_t h = mix(sl__val_hash(v, i), (uint64_t)g);
        for (uint64_t s = h & mask;; s = (s + 1) & mask) {
            if (!set[s]) {
                set[s] = (uint64_t)i + 1;
                cnt[g]++;
                break;
            }
            int64_t o = (int64_t)set[s] - 1;
            if (r->gid[o] == g && sl__val_cmp(v, o, v, i) == 0)
                break;
        }
    }
    sl__free(set, 0);
    return SL_OK;
}

/* Groups without values get a null (SQL: the sum of no values is null). */
static int null_where_zero(sl_batch_t *out, int c, const int64_t *cnt, int64_t groups)
{
    bool any = false;
    for (int64_t g = 0; g < groups && !any; g++)
        any = cnt[g] == 0;
    uint8_t *bits = any ? sl_batch_column_validity(out, c) : NULL;
    if (any && !bits)
        return SL_ENOMEM;
    for (int64_t g = 0; bits && g < groups; g++)
        if (!cnt[g])
            bits[g >> 3] &= (uint8_t)~(1u << (g & 7));
    return SL_OK;
}

/* Output column c: aggregate s over the groups. */
/* min (want -1) or max (want 1) per group of a decimal(38) column, compared as its 128-bit
 * integers: sl__val_cmp looks the type up twice a row, the largest item in a profile of
 * a keyless max over such a column (TPC-H Q15's over 100,000 sums took 3.8 ms at SF 10).
 * best[g] becomes the group's first row with that value, as the generic loop keeps it. */
static int minmax_i128(const struct sl__colview *v, const struct any_run *r, int64_t *best,
                       int want)
{
    size_t bytes = (size_t)(r->groups ? r->groups : 1) * sizeof(__int128);
    __int128 *bv = sl__malloc(bytes);
    if (!bv)
        return SL_ENOMEM;
    const char *base = (const char *)v->c.data + (size_t)v->c.offset * 16;
    for (int64_t i = 0; i < r->n; i++) {
        if (!sl__colview_valid(v, i))
            continue;
        __int128 x;
        memcpy(&x, base + (size_t)i * 16, 16);
        int64_t g = r->gid[i];
        if (best[g] < 0 || (want > 0 ? x > bv[g] : x < bv[g])) {
            best[g] = i;
            bv[g] = x;
        }
    }
    sl__free(bv, bytes);
    return SL_OK;
}

static int aggregate_one(sl_task_t *t, const struct agg_spec *s, const sl_batch_t *in,
                         const struct any_run *r, sl_batch_t *out, int c)
{
    int64_t G = r->groups;
    struct sl__colview v = {0};
    if (s->col >= 0 && sl__colview_get(in, s->col, &v) < 0)
        return SL_EINTERNAL;
    int64_t *cnt = zalloc((size_t)G * sizeof(int64_t));
    void *acc = NULL;
    int rc = cnt ? SL_OK : SL_ENOMEM;
    bool fl = SL_TYPE_ID(s->in_type) == SL_TYPE_FLOAT32 || SL_TYPE_ID(s->in_type) == SL_TYPE_FLOAT64;
    if (rc == SL_OK && s->fn == AGG_COUNT_DISTINCT) {
        rc = count_distinct(r, &v, cnt);
    } else if (rc == SL_OK && (s->fn == AGG_MIN || s->fn == AGG_MAX)) {
        int64_t *best = acc = sl__malloc((size_t)G * sizeof(int64_t));
        if (!best)
            rc = SL_ENOMEM;
        for (int64_t g = 0; best && g < G; g++)
            best[g] = -1;
        int want = s->fn == AGG_MIN ? -1 : 1;
        bool wide = SL_TYPE_ID(v.c.type) == SL_TYPE_DECIMAL && sl_type_width(v.c.type) == 16;
        if (best && wide && (rc = minmax_i128(&v, r, best, want)) < 0)
            best = NULL;
        for (int64_t i = 0; best && !wide && i < r->n; i++) {
            if (!sl__colview_valid(&v, i))
                continue;
            int64_t g = r->gid[i];
            if (best[g] < 0 || sl__val_cmp(&v, i, &v, best[g]) == want)
                best[g] = i;
        }
        if (best)
            rc = sl__col_take(out, c, in, s->col, best, G);
    } else if (rc == SL_OK && (s->fn == AGG_SUM || s->fn == AGG_AVG) && fl) {
        double *sum = acc = zalloc((size_t)G * sizeof(double));
        if (!sum)
            rc = SL_ENOMEM;
        for (int64_t i = 0; sum && i < r->n; i++) {
            if (sl__colview_valid(&v, i)) {
                sum[r->gid[i]] += sl__val_f64(&v, i);
                cnt[r->gid[i]]++;
            }
        }
        double *o = sl_batch_column_data(out, c);
        for (int64_t g = 0; sum && g < G; g++)
            o[g] = s->fn == AGG_AVG && cnt[g] ? sum[g] / (double)cnt[g] : sum[g];
    } else if (rc == SL_OK && (s->fn == AGG_SUM || s->fn == AGG_AVG)) {
        /* Exact: 128 bits; only a 128-bit overflow of a partial sum (decimal(38) values
         * near their limit) errs before the end. */
        __int128 *sum = acc = zalloc((size_t)G * sizeof(__int128));
        if (!sum)
            rc = SL_ENOMEM;
        for (int64_t i = 0; sum && i < r->n && rc == SL_OK; i++) {
            if (sl__colview_valid(&v, i)) {
                int64_t g = r->gid[i];
                if (__builtin_add_overflow(sum[g], sl__val_i128(&v, i), &sum[g]))
                    rc = SL_EOVERFLOW;
                cnt[g]++;
            }
        }
        enum sl_type ot = s->out_type;
        __int128 lim = sl__pow10_i128(SL_DECIMAL_MAX_PRECISION);
        double div = (double)sl__pow10_i128(sl_type_scale(s->in_type));
        void *o = sl_batch_column_data(out, c);
        for (int64_t g = 0; sum && rc == SL_OK && g < G; g++) {
            if (s->fn == AGG_AVG) {
                ((double *)o)[g] = cnt[g] ? (double)sum[g] / div / (double)cnt[g] : 0;
            } else if (ot == SL_TYPE_INT64) {
                if (sum[g] > INT64_MAX || sum[g] < INT64_MIN)
                    rc = SL_EOVERFLOW;
                ((int64_t *)o)[g] = (int64_t)sum[g];
            } else {
                if (sum[g] >= lim || sum[g] <= -lim)
                    rc = SL_EOVERFLOW;
                memcpy((char *)o + 16 * g, &sum[g], 16);
            }
        }
        if (rc == SL_EOVERFLOW)
            sl_task_fail(t, SL_EOVERFLOW, "aggregate: sum of column %d does not fit %s", s->col,
                         sl_type_name(ot));
    } else if (rc == SL_OK) { /* count, count(*) */
        for (int64_t i = 0; i < r->n; i++)
            cnt[r->gid[i]] += s->fn == AGG_COUNT_STAR || sl__colview_valid(&v, i);
    }
    if (rc == SL_OK && (s->fn == AGG_COUNT || s->fn == AGG_COUNT_STAR ||
                        s->fn == AGG_COUNT_DISTINCT))
        memcpy(sl_batch_column_data(out, c), cnt, (size_t)G * sizeof(int64_t));
    else if (rc == SL_OK && (s->fn == AGG_SUM || s->fn == AGG_AVG))
        rc = null_where_zero(out, c, cnt, G);
    sl__free(cnt, 0);
    sl__free(acc, 0);
    return rc;
}

/* All kept batches as one, in the order of the list (a new reference), or an empty
 * batch of the input schema. */
static int concat_input(sl_task_t *t, struct agg_global *gs, sl_batch_t **in)
{
    int64_t n = 0;
    for (struct agg_kept_batch *k = gs->batches; k; k = k->next)
        n++;
    if (n == 0) {
        *in = sl__batch_new(sl_op_input_schema(sl_task_op(t), 0), 0);
        return *in && sl__batch_alloc_columns(*in) == SL_OK ? SL_OK : SL_ENOMEM;
    }
    sl_batch_t **bs = sl__malloc((size_t)n * sizeof *bs);
    if (!bs)
        return SL_ENOMEM;
    n = 0;
    for (struct agg_kept_batch *k = gs->batches; k; k = k->next)
        bs[n++] = k->batch;
    int rc = sl__batch_concat(bs, n, in);
    sl__free(bs, 0);
    return rc;
}

int sl__agg_any_finalize(sl_task_t *t)
{
    const struct agg_plan *p = sl_op_data(sl_task_op(t));
    struct agg_global *gs = sl_task_gstate(t);
    sl_batch_t *in = NULL, *out = NULL;
    struct any_run r = {0};
    int rc = concat_input(t, gs, &in);
    if (rc == SL_OK) {
        r.n = sl_batch_num_rows(in);
        rc = group_rows(p, in, gs->batches, &r);
    }
    sl__agg_any_release(&gs->batches);
    if (rc == SL_OK) {
        out = sl__batch_new(sl_op_output_schema(sl_task_op(t)), r.groups);
        rc = out && sl__batch_alloc_columns(out) == SL_OK ? SL_OK : SL_ENOMEM;
    }
    for (int j = 0; rc == SL_OK && j < p->n_keys; j++)
        rc = sl__col_take(out, j, in, p->key_cols[j], r.rep, r.groups);
    for (int a = 0; rc == SL_OK && a < p->n_aggs; a++)
        rc = aggregate_one(t, &p->aggs[a], in, &r, out, p->n_keys + a);
    any_free(p, &r);
    sl_batch_unref(in);
    if (rc < 0) {
        sl_batch_unref(out);
        return rc == SL_EOVERFLOW ? rc : sl_task_fail(t, rc, "aggregate: %s", sl_strerror(rc));
    }
    gs->any_out = out;
    gs->n_out = 1;
    return SL_OK;
}

int sl__agg_any_source(sl_task_t *t)
{
    struct agg_global *gs = sl_task_gstate(t);
    if (sl_task_index(t) != 0 || !gs->any_out)
        return SL_OK;
    sl_batch_t *b = gs->any_out;
    gs->any_out = NULL;
    return sl_task_emit(t, b);
}
