/* DICT group keys on the group table (agg_hash.c). The table groups integers, so each
 * sunk batch's codes are rewritten, before the table sees them, as codes of one
 * dictionary per key column: the distinct strings of every dictionary seen so far
 * (equal strings, one code; a dictionary is merged once, then its map is reused). The
 * output's key column gets that dictionary. Without this such keys took the one-task
 * group-by of any type (agg_any.c), which concatenates the whole input first. */
#include <stdatomic.h>
#include <string.h>

#include "../common/values.h"
#include "agg_int.h"
#include "internal.h"

/* One source dictionary and the merged code of each of its entries. */
struct dict_src {
    const struct sl__dict *dict;
    int32_t *map;
    int64_t n;
    bool identity;                      /* map[e] == e for every e */
};

/* The merged dictionary of one key column, grown under agg_dicts.lock. */
struct dict_key {
    int32_t *offs;                      /* n + 1 */
    char *chars;
    int64_t n, cap_n, bytes, cap_bytes;
    int32_t *slots;                     /* merged code + 1; 0 = empty */
    int64_t n_slots;
    struct dict_src *srcs;
    int64_t n_srcs, cap_srcs;
    struct sl__dict *out;               /* made by sl__agg_dict_finish */
};

struct agg_dicts {
    _Atomic int lock;
    struct dict_key key[AGG_MAX_KEYS];
};

bool sl__agg_dict_keys(const struct agg_plan *p)
{
    for (int j = 0; j < p->n_keys && !p->any; j++)
        if (p->key_types[j] == SL_TYPE_DICT)
            return true;
    return false;
}

bool sl__agg_keys_need_any(const struct agg_plan *p)
{
    for (int j = 0; j < p->n_keys; j++)
        if (!sl__agg_table_int_type(p->key_types[j]) && p->key_types[j] != SL_TYPE_DICT &&
            !sl__agg_str_key_type(p->key_types[j]))
            return true;
    return false;
}

static uint64_t hash_str(const char *s, int64_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int64_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

bool sl__agg_grow(void **p, int64_t *cap, int64_t need, size_t width)
{
    if (need <= *cap)
        return true;
    int64_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = sl__malloc((size_t)c * width);
    if (!q)
        return false;
    if (*p)
        memcpy(q, *p, (size_t)*cap * width);
    sl__free(*p, 0);
    *p = q;
    *cap = c;
    return true;
}

/* Rebuilds the hash slots for twice the merged strings. */
static bool rehash(struct dict_key *k)
{
    int64_t n_slots = 64;
    while (n_slots < 2 * (k->n + 1))
        n_slots *= 2;
    int32_t *slots = sl__calloc((size_t)n_slots, sizeof *slots);
    if (!slots)
        return false;
    for (int64_t g = 0; g < k->n; g++) {
        uint64_t h = hash_str(k->chars + k->offs[g], k->offs[g + 1] - k->offs[g]);
        while (slots[h & (uint64_t)(n_slots - 1)])
            h++;
        slots[h & (uint64_t)(n_slots - 1)] = (int32_t)g + 1;
    }
    sl__free(k->slots, 0);
    k->slots = slots;
    k->n_slots = n_slots;
    return true;
}

/* The merged code of one string, added when new; -1 when out of memory or 2^31. */
static int64_t merged_code(struct dict_key *k, const char *s, int64_t len)
{
    if (2 * (k->n + 1) > k->n_slots && !rehash(k))
        return -1;
    uint64_t mask = (uint64_t)k->n_slots - 1, h = hash_str(s, len);
    for (;; h++) {
        int32_t g = k->slots[h & mask];
        if (!g)
            break;
        if (k->offs[g] - k->offs[g - 1] == len && !memcmp(k->chars + k->offs[g - 1], s, (size_t)len))
            return g - 1;
    }
    if (k->bytes + len >= INT32_MAX || k->n + 1 >= INT32_MAX ||
        !sl__agg_grow((void **)&k->offs, &k->cap_n, k->n + 2, sizeof *k->offs) ||
        !sl__agg_grow((void **)&k->chars, &k->cap_bytes, k->bytes + len + 1, 1))
        return -1;
    if (k->n == 0)
        k->offs[0] = 0;
    memcpy(k->chars + k->bytes, s, (size_t)len);
    k->bytes += len;
    k->offs[k->n + 1] = (int32_t)k->bytes;
    k->slots[h & mask] = (int32_t)++k->n;
    return k->n - 1;
}

/* The map of column c's dictionary in b (merged on first sight); NULL when out of
 * memory. Called under the lock. */
static const struct dict_src *source(struct dict_key *k, const sl_batch_t *b, int c)
{
    const struct sl__dict *d = b->cols[c].dict;
    for (int64_t i = k->n_srcs - 1; i >= 0; i--)
        if (k->srcs[i].dict == d)
            return &k->srcs[i];
    if (!sl__agg_grow((void **)&k->srcs, &k->cap_srcs, k->n_srcs + 1, sizeof *k->srcs))
        return NULL;
    struct sl__colview v;
    sl__colview_get(b, c, &v);
    int32_t *map = sl__malloc((size_t)(v.s.dict_length ? v.s.dict_length : 1) * sizeof *map);
    if (!map)
        return NULL;
    for (int64_t e = 0; e < v.s.dict_length; e++) {
        int64_t g = merged_code(k, v.s.dict_chars + v.s.dict_offsets[e],
                                v.s.dict_offsets[e + 1] - v.s.dict_offsets[e]);
        if (g < 0) {
            sl__free(map, 0);
            return NULL;
        }
        map[e] = (int32_t)g;
    }
    bool identity = true;
    for (int64_t e = 0; e < v.s.dict_length && identity; e++)
        identity = map[e] == e;
    k->srcs[k->n_srcs] = (struct dict_src){d, map, v.s.dict_length, identity};
    return &k->srcs[k->n_srcs++];
}

void *sl__agg_shared_state(void *_Atomic *slot, size_t bytes)
{
    void *st = atomic_load_explicit(slot, memory_order_acquire);
    if (!st) {
        void *fresh = sl__calloc(1, bytes);
        if (!fresh)
            return NULL;
        /* Publishes the zeroed state to the workers that load *slot after. */
        if (!atomic_compare_exchange_strong(slot, &st, fresh))
            sl__free(fresh, 0); /* another worker's won; st is it */
        else
            st = fresh;
    }
    return st;
}

/* gs's merged dictionaries, made by the first caller; NULL when out of memory. */
static struct agg_dicts *dicts_of(struct agg_global *gs)
{
    return sl__agg_shared_state(&gs->dicts, sizeof(struct agg_dicts));
}

const int32_t *sl__agg_dict_map(struct agg_global *gs, int j, const sl_batch_t *b, int c,
                                int64_t *n, bool *identity)
{
    struct agg_dicts *ds = dicts_of(gs);
    if (!ds)
        return NULL;
    sl__agg_lock(&ds->lock);
    const struct dict_src *src = source(&ds->key[j], b, c);
    const int32_t *map = src ? src->map : NULL; /* freed only with the state */
    *n = src ? src->n : 0;
    *identity = src && src->identity;
    sl__agg_unlock(&ds->lock); /* srcs may move when another dictionary comes; its maps do not */
    return map;
}

sl_batch_t *sl__agg_batch_share(const sl_batch_t *b)
{
    sl_batch_t *nb = sl__batch_new(b->schema, b->n_rows);
    for (int c = 0; nb && c < b->n_cols; c++)
        sl__col_share(nb, c, b, c);
    return nb;
}

int sl__agg_col_replace(sl_batch_t *nb, const sl_batch_t *b, int c, struct sl__buf *data,
                        enum sl_type type)
{
    struct sl__col *col = &nb->cols[c];
    sl__buf_unref(col->data);
    sl__buf_unref(col->chars);
    sl__dict_unref(col->dict);
    col->chars = NULL;
    col->dict = NULL;
    col->data = data;
    col->type = type;
    col->offset = 0;
    if (!col->validity)
        return SL_OK;
    /* The bitmap keeps the source's offset; the new values start at 0. */
    struct sl__buf *v = sl__buf_new((b->n_rows + 7) / 8);
    if (!v)
        return SL_ENOMEM;
    memset(v->ptr, 0, (size_t)(b->n_rows + 7) / 8);
    for (int64_t i = 0; i < b->n_rows; i++)
        if (sl__col_valid(&b->cols[c], i))
            ((uint8_t *)v->ptr)[i >> 3] |= (uint8_t)(1u << (i & 7));
    sl__buf_unref(col->validity);
    col->validity = v;
    return SL_OK;
}

int sl__agg_dict_input(sl_task_t *t, const struct agg_plan *p, struct agg_global *gs,
                       sl_batch_t *b, const int *cols, sl_batch_t **out)
{
    *out = NULL;
    struct agg_dicts *ds = dicts_of(gs);
    if (!ds)
        return sl_task_fail(t, SL_ENOMEM, "aggregate: out of memory");
    /* Every column shared as it is; the DICT keys replaced by int32 merged codes. */
    sl_batch_t *nb = sl__agg_batch_share(b);
    if (!nb)
        return sl_task_fail(t, SL_ENOMEM, "aggregate: out of memory");
    int rc = SL_OK;
    for (int j = 0; j < p->n_keys && rc == SL_OK; j++) {
        int c = cols[j];
        if (p->key_types[j] != SL_TYPE_DICT)
            continue;
        sl__agg_lock(&ds->lock);
        const struct dict_src *src = source(&ds->key[j], b, c);
        const int32_t *map = src ? src->map : NULL;
        int64_t n = src ? src->n : 0;
        sl__agg_unlock(&ds->lock);
        struct sl__buf *codes = sl__buf_new(b->n_rows * 4 + 4);
        if (!map || !codes) {
            sl__buf_unref(codes);
            rc = SL_ENOMEM;
            break;
        }
        const int32_t *in = sl__col_values(b, c);
        int32_t *o = codes->ptr;
        for (int64_t i = 0; i < b->n_rows; i++)
            o[i] = in[i] >= 0 && in[i] < n ? map[in[i]] : 0; /* a null row's code: any */
        rc = sl__agg_col_replace(nb, b, c, codes, SL_TYPE_INT32);
    }
    if (rc < 0) {
        sl_batch_unref(nb);
        return sl_task_fail(t, rc, "aggregate: out of memory merging key dictionaries");
    }
    *out = nb;
    return SL_OK;
}

int sl__agg_dict_finish(sl_task_t *t, const struct agg_plan *p, struct agg_global *gs)
{
    struct agg_dicts *ds = gs->dicts;
    for (int j = 0; j < p->n_keys; j++) {
        if (p->key_types[j] != SL_TYPE_DICT)
            continue;
        struct dict_key *k = ds ? &ds->key[j] : NULL;
        static const int32_t zero = 0;
        k = k && k->n ? k : NULL;
        struct sl__dict *d = sl__dict_new(k ? k->n : 0, k ? k->offs : &zero, k ? k->chars : "");
        if (!d)
            return sl_task_fail(t, SL_ENOMEM, "aggregate: out of memory");
        if (!ds) {
            sl__dict_unref(d); /* no input rows, no groups: nothing to attach */
            continue;
        }
        sl__dict_unref(ds->key[j].out); /* made before: a GPU finalize, then the CPU's */
        ds->key[j].out = d;
    }
    return SL_OK;
}

void sl__agg_dict_attach(const struct agg_plan *p, struct agg_global *gs, sl_batch_t *b)
{
    struct agg_dicts *ds = gs->dicts;
    for (int j = 0; b && ds && j < p->n_keys; j++) {
        struct sl__dict *d = ds->key[j].out;
        if (p->key_types[j] != SL_TYPE_DICT || !d)
            continue;
        sl__dict_ref(d);
        sl__dict_unref(b->cols[j].dict);
        b->cols[j].dict = d;
    }
}

void sl__agg_dicts_free(struct agg_global *gs)
{
    struct agg_dicts *ds = gs->dicts;
    if (!ds)
        return;
    for (int j = 0; j < AGG_MAX_KEYS; j++) {
        struct dict_key *k = &ds->key[j];
        for (int64_t i = 0; i < k->n_srcs; i++)
            sl__free(k->srcs[i].map, 0);
        sl__free(k->srcs, 0);
        sl__free(k->offs, 0);
        sl__free(k->chars, 0);
        sl__free(k->slots, 0);
        sl__dict_unref(k->out);
    }
    sl__free(ds, 0);
    gs->dicts = NULL;
}
