/* utf8/large_utf8 group keys on the group table (agg_hash.c). The table groups 64-bit
 * words, so before it sees a sunk batch each string key is rewritten as the id of its
 * string in one table of the distinct strings per key column, shared by every worker;
 * the output's key column gets the strings back (sl__agg_str_output). Composite keys
 * (strings beside integers, DICT keys or other strings) are then just words, and the
 * table's pre-aggregation, partitioned parallel merge and per-type aggregate loops run
 * unchanged. Without this such keys took the group-by of any type (agg_any.c), which
 * concatenates the input and aggregates it in one finalize task.
 *
 * Per row: one hash of the bytes (8 bytes at a time) and one probe of the worker's own
 * cache of (hash, id) slots, which compares the full hash, then the length, then two
 * 64-bit words (strings up to 16 bytes) or the bytes. Strings missing from the cache
 * are looked up in (or added to) the shared table at the end of the batch, under the
 * lock of one of its STR_PARTS parts (split by hash); that table keeps each string's
 * bytes in chunks that never move, so cache entries may point at them. The cache is
 * emptied when it reaches STR_CACHE_MAX entries, so its memory stays bounded; with that
 * many distinct keys most rows go to the shared table (bench/specs/aggregate.json says
 * what that costs). */
#include <string.h>

#include "../common/values.h"
#include "agg_int.h"
#include "internal.h"

/* A worker's cache starts with STR_CACHE_MIN slots (16 bytes each, and an entry of 48
 * bytes per two slots: 160 KiB), doubles when half full and is emptied at STR_CACHE_MAX
 * entries (2.5 MiB). */
#define STR_CACHE_MIN (1 << 12)
#define STR_CACHE_MAX (1 << 15)
/* Bytes of one chunk of the shared table's string bytes. */
#define STR_CHUNK_BYTES (1 << 20)

/* One string: its hash, length, two words that determine it up to 16 bytes (see
 * str_ref_make) and its bytes. */
struct str_ref {
    uint64_t h;
    int64_t len;
    uint64_t w0, w1;
    const char *s;
};

/* A worker's cache: open addressing over (hash, entry + 1) slots, 16 bytes each so
 * that the probed slots stay in L1; an entry holds the string and its shared id + 1 (a
 * negative id is -(pending index + 1) while the batch's new strings wait for the lock).
 * ents has room for half the slots. */
struct str_slot {
    uint64_t h;
    int64_t ent;                        /* 0 = empty */
};

struct str_ent {
    struct str_ref r;
    int64_t id;
};

struct str_cache {
    struct str_slot *slots;
    struct str_ent *ents;
    uint64_t mask;
    int64_t n;
};

/* A chunk of string bytes that never moves. */
struct str_chunk {
    struct str_chunk *next;
    int64_t used;
    char bytes[];
};

/* The distinct strings of one key column are split by the top STR_PART_BITS bits of
 * their hash into parts, each with its own lock, so that workers add new strings in
 * parallel; a string's id is its part << STR_INDEX_BITS | its index in the part. */
#define STR_PART_BITS 6
#define STR_PARTS (1 << STR_PART_BITS)
#define STR_INDEX_BITS 40

/* One part of a key column's strings, grown under its lock (sl__agg_lock). */
struct str_key {
    _Atomic int lock;
    struct str_ref *refs;               /* by index */
    int64_t n, cap;
    int64_t *slots;                     /* index + 1; 0 = empty */
    uint64_t mask;
    struct str_chunk *chunks;
};

struct agg_strs {
    struct str_key key[AGG_MAX_KEYS][STR_PARTS];
};

/* A string new to a worker's cache, waiting for the lock, and then its shared id. */
struct str_pending {
    struct str_ref r;
    int64_t id;
};

struct agg_str_local {
    struct str_cache cache[AGG_MAX_KEYS];
    struct str_pending *pending;        /* this batch's strings new to the cache */
    int64_t n_pending, cap_pending;
    int64_t *order;                     /* pending indices in part order */
    int64_t cap_order;
};

bool sl__agg_str_key_type(enum sl_type t)
{
    return t == SL_TYPE_UTF8 || t == SL_TYPE_LARGE_UTF8;
}

bool sl__agg_str_keys(const struct agg_plan *p)
{
    for (int j = 0; j < p->n_keys && !p->any; j++)
        if (sl__agg_str_key_type(p->key_types[j]))
            return true;
    return false;
}

static inline uint64_t load8(const char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

static inline uint64_t load4(const char *p)
{
    uint32_t w;
    memcpy(&w, p, 4);
    return w;
}

/* 64x64 -> 128-bit multiply folded to 64 bits (wyhash's mixer). */
static inline uint64_t mum(uint64_t a, uint64_t b)
{
    unsigned __int128 r = (unsigned __int128)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* Fills r (hash, two words, length) for the n bytes at s. The words determine a string
 * of up to 16 bytes given its length, without reading past it: the first and last 8
 * bytes (overlapping) from 8 bytes, the first and last 4 from 4, single bytes below. */
static inline void str_ref_make(struct str_ref *r, const char *s, int64_t n)
{
    uint64_t a, b;
    if (n >= 8) {
        a = load8(s);
        b = load8(s + n - 8);
    } else if (n >= 4) {
        a = load4(s) | load4(s + n - 4) << 32;
        b = 0;
    } else if (n > 0) {
        a = (uint64_t)(uint8_t)s[0] | (uint64_t)(uint8_t)s[n >> 1] << 8 |
            (uint64_t)(uint8_t)s[n - 1] << 16;
        b = 0;
    } else {
        a = b = 0;
    }
    r->w0 = a;
    r->w1 = b;
    r->len = n;
    r->s = s;
    uint64_t h = 0xa0761d6478bd642full ^ (uint64_t)n;
    /* Longer strings: every 8-byte word before the last 8 bytes (b holds those). */
    for (int64_t i = 0; n > 16 && i < n - 8; i += 8)
        h = mum(h ^ load8(s + i), 0xe7037ed1a0b428dbull);
    r->h = mum(a ^ 0x8ebc6af09c88c6e3ull, b ^ h);
}

static inline bool str_ref_eq(const struct str_ref *a, const struct str_ref *b)
{
    if (a->h != b->h || a->len != b->len || a->w0 != b->w0 || a->w1 != b->w1)
        return false;
    return a->len <= 16 || memcmp(a->s, b->s, (size_t)a->len) == 0;
}

/* A copy of r's bytes in k's chunks (r->s then points there); false when out of
 * memory. */
static bool key_keep_bytes(struct str_key *k, struct str_ref *r)
{
    struct str_chunk *c = k->chunks;
    if (!c || c->used + r->len > STR_CHUNK_BYTES) {
        int64_t size = r->len > STR_CHUNK_BYTES ? r->len : STR_CHUNK_BYTES;
        c = sl__malloc(sizeof *c + (size_t)size);
        if (!c)
            return false;
        c->used = 0;
        c->next = k->chunks;
        k->chunks = c;
    }
    if (r->len)
        memcpy(c->bytes + c->used, r->s, (size_t)r->len);
    r->s = c->bytes + c->used;
    c->used += r->len;
    return true;
}

/* Doubles k's slots (and ids) when half full; false when out of memory. */
static bool key_grow(struct str_key *k)
{
    if (2 * (uint64_t)(k->n + 1) <= k->mask + 1 && k->n < k->cap)
        return true;
    if (!sl__agg_grow((void **)&k->refs, &k->cap, k->n + 1, sizeof *k->refs))
        return false;
    if (2 * (uint64_t)(k->n + 1) <= k->mask + 1)
        return true;
    uint64_t mask = k->mask ? 2 * k->mask + 1 : 127;
    int64_t *slots = sl__calloc(mask + 1, sizeof *slots);
    if (!slots)
        return false;
    for (int64_t id = 0; id < k->n; id++) {
        uint64_t s = k->refs[id].h & mask;
        while (slots[s])
            s = (s + 1) & mask;
        slots[s] = id + 1;
    }
    sl__free(k->slots, 0);
    k->slots = slots;
    k->mask = mask;
    return true;
}

/* The shared id of r, added when new (r->s then points at the kept copy); -1 when out
 * of memory. Called under the lock. */
static int64_t key_id(struct str_key *k, struct str_ref *r)
{
    if (!key_grow(k))
        return -1;
    uint64_t s = r->h & k->mask;
    for (;; s = (s + 1) & k->mask) {
        int64_t e = k->slots[s];
        if (!e)
            break;
        if (str_ref_eq(&k->refs[e - 1], r)) {
            *r = k->refs[e - 1];
            return e - 1;
        }
    }
    if (!key_keep_bytes(k, r))
        return -1;
    k->refs[k->n] = *r;
    k->slots[s] = ++k->n;
    return k->n - 1;
}

/* The slot of r in c: its entry's, or the empty slot where it belongs. */
static inline struct str_slot *cache_slot(const struct str_cache *c, const struct str_ref *r)
{
    for (uint64_t s = r->h & c->mask;; s = (s + 1) & c->mask) {
        struct str_slot *e = &c->slots[s];
        if (!e->ent || (e->h == r->h && str_ref_eq(&c->ents[e->ent - 1].r, r)))
            return e;
    }
}

/* Room in c for one more entry: its first slots, twice the slots at half full, or all
 * slots emptied at STR_CACHE_MAX entries (a pending string dropped so is found again
 * under the lock); false when out of memory. */
static bool cache_room(struct str_cache *c)
{
    if (c->slots && 2 * (uint64_t)(c->n + 1) <= c->mask + 1)
        return true;
    if (c->n >= STR_CACHE_MAX) {
        memset(c->slots, 0, (c->mask + 1) * sizeof *c->slots);
        c->n = 0;
        return true;
    }
    struct str_cache g = {.mask = c->slots ? 2 * c->mask + 1 : STR_CACHE_MIN - 1, .n = c->n};
    g.slots = sl__calloc(g.mask + 1, sizeof *g.slots);
    g.ents = sl__malloc((g.mask + 1) / 2 * sizeof *g.ents);
    if (!g.slots || !g.ents) {
        sl__free(g.slots, 0);
        sl__free(g.ents, 0);
        return false;
    }
    if (c->n)
        memcpy(g.ents, c->ents, (size_t)c->n * sizeof *g.ents);
    for (int64_t e = 0; e < c->n; e++)
        *cache_slot(&g, &g.ents[e].r) = (struct str_slot){g.ents[e].r.h, e + 1};
    sl__free(c->slots, 0);
    sl__free(c->ents, 0);
    *c = g;
    return true;
}

/* Room for one more pending string; false when out of memory. */
static bool pending_room(struct agg_str_local *l)
{
    return sl__agg_grow((void **)&l->pending, &l->cap_pending, l->n_pending + 1,
                        sizeof *l->pending);
}

/* The cache's id + 1 of r, or -(pending index + 1) for a string new to the cache (added
 * as pending); 0 when out of memory. */
static inline int64_t cache_id(struct agg_str_local *l, struct str_cache *c,
                               const struct str_ref *r)
{
    struct str_slot *e = cache_slot(c, r);
    if (e->ent)
        return c->ents[e->ent - 1].id;
    if (!pending_room(l) || !cache_room(c))
        return 0;
    e = cache_slot(c, r); /* the slots may have moved */
    l->pending[l->n_pending] = (struct str_pending){*r, 0};
    c->ents[c->n] = (struct str_ent){*r, -(++l->n_pending)};
    *e = (struct str_slot){r->h, ++c->n};
    return -l->n_pending;
}

/* The shared ids of the pending strings, taken part by part, each under its part's
 * lock once; the cache then points at the shared copies (the batch may go). */
static int resolve_pending(struct str_key *parts, struct agg_str_local *l, struct str_cache *c)
{
    /* The pending strings in part order (a counting sort on the hash's top bits). */
    int64_t start[STR_PARTS + 1] = {0};
    if (!sl__agg_grow((void **)&l->order, &l->cap_order, l->n_pending, sizeof *l->order))
        return SL_ENOMEM;
    for (int64_t q = 0; q < l->n_pending; q++)
        start[(l->pending[q].r.h >> (64 - STR_PART_BITS)) + 1]++;
    for (int part = 0; part < STR_PARTS; part++)
        start[part + 1] += start[part];
    for (int64_t q = 0; q < l->n_pending; q++)
        l->order[start[l->pending[q].r.h >> (64 - STR_PART_BITS)]++] = q;
    int64_t from = 0;
    for (int part = 0; part < STR_PARTS; part++) {
        struct str_key *k = &parts[part];
        int64_t to = start[part]; /* the end of this part's run now */
        if (from == to)
            continue;
        sl__agg_lock(&k->lock);
        for (int64_t o = from; o < to; o++) {
            struct str_pending *pe = &l->pending[l->order[o]];
            int64_t i = key_id(k, &pe->r);
            pe->id = i < 0 ? -1 : (int64_t)((uint64_t)part << STR_INDEX_BITS) | i;
            if (i < 0) {
                sl__agg_unlock(&k->lock);
                return SL_ENOMEM;
            }
        }
        sl__agg_unlock(&k->lock);
        from = to;
    }
    for (int64_t q = 0; q < l->n_pending; q++) {
        struct str_slot *e = cache_slot(c, &l->pending[q].r);
        struct str_ent *en = e->ent ? &c->ents[e->ent - 1] : NULL;
        if (en && en->id < 0) { /* no entry when the cache was emptied since */
            en->r = l->pending[q].r;
            en->id = l->pending[q].id + 1;
        }
    }
    return SL_OK;
}

/* Rows hashed at once before their probes (so the probes can be prefetched). */
#define STR_VEC 256

/* Key column j's strings in b (column col) as shared ids into ids[0..n): the worker's
 * cache first, then the batch's new strings under the lock. A tight loop hashes
 * STR_VEC rows, then a second probes the cache for them, prefetching ahead. */
static int code_column(struct agg_strs *ss, struct agg_str_local *l, int j, const sl_batch_t *b,
                       int col, int64_t *ids)
{
    struct str_cache *c = &l->cache[j];
    struct sl__colview v;
    sl__colview_get(b, col, &v);
    bool wide = v.c.type == SL_TYPE_LARGE_UTF8;
    const int32_t *o32 = (const int32_t *)v.c.data + v.c.offset;
    const int64_t *o64 = (const int64_t *)v.c.data + v.c.offset;
    if (!c->slots && !cache_room(c))
        return SL_ENOMEM;
    l->n_pending = 0;
    struct str_ref rs[STR_VEC];
    for (int64_t off = 0; off < b->n_rows; off += STR_VEC) {
        int64_t n = b->n_rows - off < STR_VEC ? b->n_rows - off : STR_VEC;
        /* A null row's offsets are those of an empty string: any id does. */
        if (wide)
            for (int64_t i = 0; i < n; i++)
                str_ref_make(&rs[i], v.s.chars + o64[off + i], o64[off + i + 1] - o64[off + i]);
        else
            for (int64_t i = 0; i < n; i++)
                str_ref_make(&rs[i], v.s.chars + o32[off + i], o32[off + i + 1] - o32[off + i]);
        for (int64_t i = 0; i < n; i++) {
            if (i + 8 < n)
                __builtin_prefetch(&c->slots[rs[i + 8].h & c->mask]);
            ids[off + i] = cache_id(l, c, &rs[i]);
            if (!ids[off + i])
                return SL_ENOMEM;
        }
    }
    if (resolve_pending(ss->key[j], l, c) < 0)
        return SL_ENOMEM;
    for (int64_t i = 0; i < b->n_rows; i++)
        ids[i] = ids[i] > 0 ? ids[i] - 1 : l->pending[-ids[i] - 1].id;
    return SL_OK;
}

int sl__agg_str_input(sl_task_t *t, const struct agg_plan *p, struct agg_global *gs,
                      struct agg_local *ls, sl_batch_t *b, sl_batch_t **out)
{
    *out = NULL;
    struct agg_strs *ss = sl__agg_shared_state(&gs->strs, sizeof(struct agg_strs));
    if (!ls->str)
        ls->str = sl__calloc(1, sizeof *ls->str);
    sl_batch_t *nb = ss && ls->str ? sl__agg_batch_share(b) : NULL;
    if (!nb)
        return sl_task_fail(t, SL_ENOMEM, "aggregate: out of memory");
    int rc = SL_OK;
    for (int j = 0; j < p->n_keys && rc == SL_OK; j++) {
        if (!sl__agg_str_key_type(p->key_types[j]))
            continue;
        struct sl__buf *ids = sl__buf_new(b->n_rows * 8 + 8);
        rc = ids ? code_column(ss, ls->str, j, b, p->key_cols[j], ids->ptr) : SL_ENOMEM;
        if (rc == SL_OK)
            rc = sl__agg_col_replace(nb, b, p->key_cols[j], ids, SL_TYPE_INT64);
        else
            sl__buf_unref(ids);
    }
    if (rc < 0) {
        sl_batch_unref(nb);
        return sl_task_fail(t, rc, "aggregate: out of memory for string keys");
    }
    *out = nb;
    return SL_OK;
}

/* The string of id in key column j. */
static inline const struct str_ref *str_of(const struct agg_strs *ss, int j, int64_t id)
{
    const struct str_key *k = &ss->key[j][id >> STR_INDEX_BITS];
    return &k->refs[id & (((int64_t)1 << STR_INDEX_BITS) - 1)];
}

int sl__agg_str_output(sl_task_t *t, const struct agg_plan *p, const struct agg_table *tb,
                       sl_batch_t *b, int j)
{
    /* After every sink: the shared table no longer changes, so no lock. */
    const struct agg_strs *ss = ((struct agg_global *)sl_task_gstate(t))->strs;
    int64_t total = 0, nk = p->n_keys;
    for (int64_t g = 0; g < tb->n; g++)
        if (!(tb->nulls[g] >> j & 1))
            total += str_of(ss, j, tb->keys[g * nk + j])->len;
    char *chars = sl_batch_column_chars(b, j, total);
    if (!chars && total)
        return total > INT32_MAX && p->key_types[j] == SL_TYPE_UTF8 ? SL_EOVERFLOW : SL_ENOMEM;
    bool wide = p->key_types[j] == SL_TYPE_LARGE_UTF8;
    void *off = sl__col_values(b, j);
    int64_t at = 0;
    for (int64_t g = 0; g <= tb->n; g++) {
        if (wide)
            ((int64_t *)off)[g] = at;
        else
            ((int32_t *)off)[g] = (int32_t)at;
        if (g == tb->n || tb->nulls[g] >> j & 1)
            continue;
        const struct str_ref *r = str_of(ss, j, tb->keys[g * nk + j]);
        memcpy(chars + at, r->s, (size_t)r->len);
        at += r->len;
    }
    return SL_OK;
}

void sl__agg_str_local_free(struct agg_local *ls)
{
    struct agg_str_local *l = ls->str;
    if (!l)
        return;
    for (int j = 0; j < AGG_MAX_KEYS; j++) {
        sl__free(l->cache[j].slots, 0);
        sl__free(l->cache[j].ents, 0);
    }
    sl__free(l->pending, 0);
    sl__free(l->order, 0);
    sl__free(l, 0);
    ls->str = NULL;
}

void sl__agg_strs_free(struct agg_global *gs)
{
    struct agg_strs *ss = gs->strs;
    if (!ss)
        return;
    for (int j = 0; j < AGG_MAX_KEYS * STR_PARTS; j++) {
        struct str_key *k = &ss->key[j / STR_PARTS][j % STR_PARTS];
        sl__free(k->refs, 0);
        sl__free(k->slots, 0);
        while (k->chunks) {
            struct str_chunk *c = k->chunks;
            k->chunks = c->next;
            sl__free(c, 0);
        }
    }
    sl__free(ss, 0);
    gs->strs = NULL;
}
