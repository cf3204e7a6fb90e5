/* The group table of the hash aggregate: vectorized sink (keys -> hashes -> group ids
 * for AGG_VEC rows at a time, then one tight loop per aggregate over the group ids; one
 * fused pass for one integer key and counts and sums without nulls), flushing into radix
 * partitions (or writing rows of many groups there as they are), merging records and
 * rows, and building the output batches. */
#include <string.h>

#include "../common/values.h"
#include "agg_int.h"

void *sl__agg_alloc(sl_task_t *t, size_t bytes)
{
    char *p = sl_task_alloc(t, bytes + 64);
    if (!p)
        return NULL;
    return (void *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

/* a < b with NaN the largest value and equal to itself (SQL's min/max of floats). */
static inline bool f_less(double a, double b)
{
    return a == a && (b != b || a < b);
}

/* The hash of the group table (keys, null masks; partitions take its top bits): two
 * multiply-xorshift rounds, every input bit reaching every output bit. MurmurHash3's
 * finalizer (three xorshifts) before: the shorter mix took 3-4% off the fused sink
 * loop's CPU samples at 1,000 groups (1 thread). */
static inline uint64_t mix64(uint64_t h)
{
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 32;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 32);
}

int sl__agg_table_init(sl_task_t *t, const struct agg_plan *p, struct agg_table *tb, int64_t cap)
{
    memset(tb, 0, sizeof *tb);
    if (cap < 16)
        cap = 16;
    uint64_t slots = 1;
    while (slots < (uint64_t)cap * 2)
        slots <<= 1;
    tb->mask = slots - 1;
    tb->cap = tb->cap_alloc = cap;
    tb->slots_alloc = slots;
    tb->slots = sl__agg_alloc(t, slots * 8);
    tb->hashes = sl__agg_alloc(t, (size_t)cap * 8);
    tb->nulls = sl__agg_alloc(t, (size_t)cap * 8);
    tb->keys = sl__agg_alloc(t, (size_t)cap * 8 * (size_t)(p->n_keys ? p->n_keys : 1));
    if (!tb->slots || !tb->hashes || !tb->nulls || !tb->keys)
        return SL_ENOMEM;
    for (int a = 0; a < p->n_aggs; a++) {
        tb->cnt[a] = sl__agg_alloc(t, (size_t)cap * 8);
        if (!tb->cnt[a])
            return SL_ENOMEM;
        if (p->aggs[a].fn != AGG_COUNT_STAR && p->aggs[a].fn != AGG_COUNT) {
            tb->val[a] = sl__agg_alloc(t, (size_t)cap * sizeof(union agg_val));
            if (!tb->val[a])
                return SL_ENOMEM;
        }
    }
    memset(tb->slots, 0, slots * 8);
    return SL_OK;
}

int sl__agg_table_use_partials(sl_task_t *t, const struct agg_plan *p, struct agg_table *tb)
{
    if (p->counts_sums && !(tb->prow = sl__agg_alloc(t, (size_t)tb->cap_alloc * 8)))
        return SL_ENOMEM;
    for (int a = 0; a < p->n_aggs; a++) {
        bool sum = p->aggs[a].fn == AGG_SUM || p->aggs[a].fn == AGG_AVG;
        if (!sum || !p->aggs[a].is_int)
            continue;
        /* Zeroed as groups are added (add_group). */
        tb->part[a] = sl__agg_alloc(t, (size_t)tb->cap_alloc * 8);
        if (!tb->part[a])
            return SL_ENOMEM;
        tb->room[a] = INT64_MAX;
    }
    return SL_OK;
}

void sl__agg_table_reset(struct agg_table *tb, int64_t cap)
{
    uint64_t slots = 32;
    while (slots < (uint64_t)cap * 2)
        slots <<= 1;
    if (slots > tb->slots_alloc)
        slots = tb->slots_alloc;
    tb->cap = cap < tb->cap_alloc ? cap : tb->cap_alloc;
    tb->mask = slots - 1;
    sl__agg_table_clear(tb);
}

void sl__agg_table_clear(struct agg_table *tb)
{
    memset(tb->slots, 0, (tb->mask + 1) * 8);
    tb->n = 0;
    tb->rows = 0;
    tb->null_keys = false;
}

/* A new group: keys and zeroed states; returns its id. */
static inline int64_t add_group(const struct agg_plan *p, struct agg_table *tb, uint64_t h,
                                uint64_t nm, const int64_t *kv, int64_t stride)
{
    int64_t g = tb->n++;
    tb->hashes[g] = h;
    tb->nulls[g] = nm;
    tb->null_keys |= nm != 0;
    for (int j = 0; j < p->n_keys; j++)
        tb->keys[g * p->n_keys + j] = kv[j * stride];
    for (int a = 0; a < p->n_aggs; a++) {
        tb->cnt[a][g] = 0;
        if (tb->val[a])
            memset(&tb->val[a][g], 0, sizeof(union agg_val));
        if (tb->part[a])
            tb->part[a][g] = 0;
    }
    if (tb->prow)
        tb->prow[g] = 0;
    return g;
}

/* Finds or adds the group of (h, nm, keys kv[j * stride]). */
static inline int64_t find_group(const struct agg_plan *p, struct agg_table *tb, uint64_t h,
                                 uint64_t nm, const int64_t *kv, int64_t stride)
{
    uint64_t tag = h >> 32, pos = h & tb->mask;
    int nk = p->n_keys;
    for (;;) {
        uint64_t s = tb->slots[pos];
        if (!s) {
            int64_t g = add_group(p, tb, h, nm, kv, stride);
            tb->slots[pos] = tag << 32 | (uint64_t)(g + 1);
            return g;
        }
        if ((s >> 32) == tag) {
            int64_t g = (int64_t)(s & 0xffffffffu) - 1;
            if (tb->nulls[g] == nm) {
                const int64_t *gk = tb->keys + g * nk;
                int j = 0;
                while (j < nk && gk[j] == kv[j * stride])
                    j++;
                if (j == nk)
                    return g;
            }
        }
        pos = (pos + 1) & tb->mask;
    }
}

/* find_group for one key column: the common case, without the key loop, and without
 * reading the group's null mask while the table holds no null key. */
static inline int64_t find_group1(const struct agg_plan *p, struct agg_table *tb, uint64_t h,
                                  uint64_t nm, int64_t k)
{
    uint64_t tag = h >> 32, pos = h & tb->mask;
    for (;;) {
        uint64_t s = tb->slots[pos];
        if (!s) {
            int64_t g = add_group(p, tb, h, nm, &k, 1);
            tb->slots[pos] = tag << 32 | (uint64_t)(g + 1);
            return g;
        }
        if ((s >> 32) == tag) {
            int64_t g = (int64_t)(s & 0xffffffffu) - 1;
            if (tb->keys[g] == k && (tb->null_keys ? tb->nulls[g] == nm : nm == 0))
                return g;
        }
        pos = (pos + 1) & tb->mask;
    }
}

/* find_group1 for a row without a null key whose first slot does not hold its group: out
 * of line, so that the loop of ids_one_key keeps its values in registers. */
static __attribute__((noinline)) int64_t find_group1_miss(const struct agg_plan *p,
                                                         struct agg_table *tb, uint64_t h,
                                                         int64_t k)
{
    return find_group1(p, tb, h, 0, k);
}

/* Adds x to the int64 partial sum part[g]; one that would overflow moves into the exact
 * sum val[g] first. A branch never taken in practice instead of a pass over the values
 * to bound them (sum_int_rows): fused_rows reads each value once. */
static inline void add_part(int64_t *part, union agg_val *val, int64_t g, int64_t x)
{
    int64_t r;
    if (__builtin_expect(__builtin_add_overflow(part[g], x, &r), 0)) {
        val[g].s += part[g];
        r = x;
    }
    part[g] = r;
}

/* Group ids of rows [off, off + n) of one key column without nulls (int32 when w4, else
 * int64): hash, first slot and id in one pass, with no key, hash or null-mask arrays in
 * between (hashing all rows first and prefetching slots measured slower). A row whose
 * first slot holds its group (almost every row once the groups are known) makes no call.
 * With prow (fused_rows; a table without null keys) the same pass adds each row to its
 * group's row count and, with x0, its value to its group's partial sum part0 (add_part);
 * gid may then be NULL (not kept), and the slot of the row 8 ahead is prefetched (its
 * hash kept in a ring). Called with w4, prow == NULL, x0 == NULL and gid == NULL
 * constant, so each case gets its own loop. */
static inline __attribute__((always_inline)) void
ids_one_key(const struct agg_plan *p, struct agg_table *tb, const void *kd, bool w4, int64_t off,
            int64_t n, int64_t *gid, int64_t *prow, const int64_t *x0, int64_t *part0,
            union agg_val *val0)
{
    /* A miss adds groups but never moves these arrays, changes the mask or (no null key
     * here) sets null_keys. */
    const uint64_t *slots = tb->slots, *nulls = tb->nulls;
    const int64_t *keys = tb->keys;
    uint64_t mask = tb->mask;
    bool null_keys = !prow && tb->null_keys;
    enum { AHEAD = 8 };
    uint64_t hs[AHEAD];
    for (int64_t i = 0; i < n && i < AHEAD && prow; i++) {
        int64_t k = w4 ? ((const int32_t *)kd)[off + i] : ((const int64_t *)kd)[off + i];
        hs[i] = mix64(0x9E3779B97F4A7C15ull ^ (uint64_t)k);
        __builtin_prefetch(&slots[hs[i] & mask]);
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t k = w4 ? ((const int32_t *)kd)[off + i] : ((const int64_t *)kd)[off + i];
        uint64_t h;
        if (prow) {
            h = hs[i % AHEAD];
            if (i + AHEAD < n) {
                int64_t kn = w4 ? ((const int32_t *)kd)[off + i + AHEAD]
                                : ((const int64_t *)kd)[off + i + AHEAD];
                hs[i % AHEAD] = mix64(0x9E3779B97F4A7C15ull ^ (uint64_t)kn);
                __builtin_prefetch(&slots[hs[i % AHEAD] & mask]);
            }
        } else {
            h = mix64(0x9E3779B97F4A7C15ull ^ (uint64_t)k);
        }
        uint64_t s = slots[h & mask];
        int64_t g = (int64_t)(s & 0xffffffffu) - 1;
        /* The fused loops compare the key without the tag first: a slot holding another
         * group is rare, and the tag's test cost every row instructions. */
        if (s == 0 || (!prow && (s >> 32) != (h >> 32)) || keys[g] != k ||
            (null_keys && nulls[g]))
            g = find_group1_miss(p, tb, h, k);
        if (gid)
            gid[i] = g;
        if (prow) {
            prow[g]++;
            if (x0)
                add_part(part0, val0, g, x0[i]);
        }
    }
}

/* Reads rows [off, off + n) of column c as int64 (*pi) or double (*pf): a pointer
 * into the batch for int64/float64, else converted into xi/xf. Fills validity (1 =
 * valid) and returns 1 if any row is null. */
static int load_col(const sl_batch_t *b, int c, int64_t off, int64_t n, int64_t *xi, double *xf,
                    const int64_t **pi, const double **pf, uint8_t *valid)
{
    const struct sl__col *col = &b->cols[c];
    const void *v = sl__col_values(b, c);
    switch (SL_TYPE_ID(col->type)) {
    case SL_TYPE_INT32:
    case SL_TYPE_DATE32:
        for (int64_t i = 0; i < n; i++)
            xi[i] = ((const int32_t *)v)[off + i];
        *pi = xi;
        break;
    case SL_TYPE_INT64:
    case SL_TYPE_TIMESTAMP:
    case SL_TYPE_DECIMAL: /* precision <= 18 (sl__agg_table_int_type) */
        *pi = (const int64_t *)v + off;
        break;
    case SL_TYPE_FLOAT32:
        for (int64_t i = 0; i < n; i++)
            xf[i] = ((const float *)v)[off + i];
        *pf = xf;
        break;
    default:
        *pf = (const double *)v + off;
        break;
    }
    if (!col->validity || col->null_count == 0)
        return 0;
    int any = 0;
    for (int64_t i = 0; i < n; i++) {
        valid[i] = sl__col_valid(col, off + i);
        any |= !valid[i];
    }
    return any;
}

void sl__agg_table_fold(const struct agg_plan *p, struct agg_table *tb)
{
    if (tb->prow_dirty) {
        for (int64_t g = 0; g < tb->n; g++) {
            int64_t r = tb->prow[g];
            for (int a = 0; a < p->n_aggs; a++)
                tb->cnt[a][g] += r;
            tb->prow[g] = 0;
        }
        tb->prow_dirty = false;
    }
    for (int a = 0; a < p->n_aggs; a++) {
        if (!tb->part[a] || tb->room[a] == INT64_MAX)
            continue;
        for (int64_t g = 0; g < tb->n; g++) {
            tb->val[a][g].s += tb->part[a][g];
            tb->part[a][g] = 0;
        }
        tb->room[a] = INT64_MAX;
    }
}

/* Sums of n rows into groups [0, groups) (groups <= AGG_FEW_GROUPS) through four
 * lanes of sums, so that consecutive rows of one group do not wait for each other; the
 * counts come from hist (the rows of each group). Partial sums stay within the room the
 * caller took: the lanes hold parts of the same per-group sums. */
static void small_rows(int64_t groups, const int64_t *gid, int64_t n, const int64_t *xi,
                       const int32_t *hist, int64_t *cnt, int64_t *part)
{
    int64_t lane[4][AGG_FEW_GROUPS];
    memset(lane, 0, sizeof lane);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        lane[0][gid[i]] += xi[i];
        lane[1][gid[i + 1]] += xi[i + 1];
        lane[2][gid[i + 2]] += xi[i + 2];
        lane[3][gid[i + 3]] += xi[i + 3];
    }
    for (; i < n; i++)
        lane[0][gid[i]] += xi[i];
    for (int64_t g = 0; g < groups; g++) {
        part[g] += lane[0][g] + lane[1][g] + lane[2][g] + lane[3][g];
        cnt[g] += hist[g];
    }
}

/* Integer sums of n rows without nulls: into the int64 partial sums while the rows'
 * magnitudes fit the room left (so no partial sum can overflow, whatever the groups),
 * else (after a fold, if that does not make room) into the exact 128-bit sums. The
 * bound is OR over x ^ (x >> 63) (>= |x| - 1, < 2 max |x|), plus one: one vectorized
 * pass, no 128-bit add per row. */
static void sum_int_rows(struct agg_table *tb, const struct agg_plan *p, int a, const int64_t *gid,
                         int64_t n, const int64_t *xi, const int32_t *hist)
{
    int64_t *cnt = tb->cnt[a], *part = tb->part[a];
    uint64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        m |= (uint64_t)(xi[i] ^ (xi[i] >> 63));
    if (n > 0 && m + 1 > tb->room[a] / (uint64_t)n)
        sl__agg_table_fold(p, tb);
    if (n > 0 && m + 1 <= tb->room[a] / (uint64_t)n) {
        tb->room[a] -= (m + 1) * (uint64_t)n;
        if (hist) { /* few groups (tb->n <= AGG_FEW_GROUPS), counted in hist */
            small_rows(tb->n, gid, n, xi, hist, cnt, part);
            return;
        }
        for (int64_t i = 0; i < n; i++) {
            part[gid[i]] += xi[i];
            cnt[gid[i]]++;
        }
        return;
    }
    union agg_val *val = tb->val[a];
    for (int64_t i = 0; i < n; i++) {
        val[gid[i]].s += xi[i];
        cnt[gid[i]]++;
    }
}

/* One aggregate over AGG_VEC rows with group ids gid: a flat loop per case on purpose. */
static void update_agg(const struct agg_spec *s, int64_t *cnt, union agg_val *val,
                       const int64_t *gid, int64_t n, const int64_t *xi, const double *xf,
                       const uint8_t *valid, int has_null)
{
    if (s->fn == AGG_COUNT_STAR || (s->fn == AGG_COUNT && !has_null)) {
        for (int64_t i = 0; i < n; i++)
            cnt[gid[i]]++;
        return;
    }
    if (s->fn == AGG_COUNT) {
        for (int64_t i = 0; i < n; i++)
            cnt[gid[i]] += valid[i];
        return;
    }
    /* On a sink's table (partial sums) integer sums without nulls take sum_int_rows. */
    bool sum = s->fn == AGG_SUM || s->fn == AGG_AVG;
    if (sum && !s->is_int && !has_null) {
        for (int64_t i = 0; i < n; i++) {
            val[gid[i]].f += xf[i];
            cnt[gid[i]]++;
        }
        return;
    }
    bool is_min = s->fn == AGG_MIN;
    for (int64_t i = 0; i < n; i++) {
        if (has_null && !valid[i])
            continue;
        int64_t g = gid[i];
        if (sum) {
            if (s->is_int)
                val[g].s += xi[i];
            else
                val[g].f += xf[i];
        } else if (s->is_int) {
            if (cnt[g] == 0 || (is_min ? xi[i] < val[g].i : xi[i] > val[g].i))
                val[g].i = xi[i];
        } else {
            if (cnt[g] == 0 || (is_min ? f_less(xf[i], val[g].f) : f_less(val[g].f, xf[i])))
                val[g].f = xf[i];
        }
        cnt[g]++;
    }
}

/* Whether batch b's rows take fused_rows: a sink's table counting rows once (prow: only
 * counts and sums) with more groups than the few-groups path's and no null key among
 * them, and no null in any aggregated column of b. */
static bool fusable(const struct agg_plan *p, const struct agg_table *tb, const sl_batch_t *b)
{
    if (!tb->prow || tb->n <= AGG_FEW_GROUPS || tb->null_keys)
        return false;
    for (int a = 0; a < p->n_aggs; a++) {
        const struct sl__col *c = p->aggs[a].col >= 0 ? &b->cols[p->aggs[a].col] : NULL;
        if (c && c->validity && c->null_count != 0)
            return false;
    }
    return true;
}

/* Rows [off, off + n) of b, one key column kc without nulls, every aggregate a count or a
 * sum without nulls (fusable): one pass finds each row's group, adds the row to the
 * group's row count (prow, which stands for every count) and the value of the first
 * integer sum to its partial sum (add_part); the other sums follow over the group ids,
 * with no count of their own. Before: a loop for the ids, a pass bounding each sum's
 * values, then one loop per aggregate, each adding to a count as well (three
 * read-modify-writes a row for count(*) and one sum instead of two). The partial sums
 * used are left without room (room 0), so that sum_int_rows folds before it adds. */
static void fused_rows(const struct agg_plan *p, struct agg_table *tb, const sl_batch_t *b,
                       const struct sl__col *kc, int64_t off, int64_t n, int64_t *gid,
                       int64_t *xi, double *xf, uint8_t *valid)
{
    int a0 = 0;
    while (a0 < p->n_aggs && !tb->part[a0])
        a0++;
    const int64_t *x0 = NULL;
    const double *pf = xf;
    int64_t *part0 = NULL;
    union agg_val *val0 = NULL;
    if (a0 < p->n_aggs) {
        load_col(b, p->aggs[a0].col, off, n, xi, xf, &x0, &pf, valid);
        part0 = tb->part[a0];
        val0 = tb->val[a0];
        tb->room[a0] = 0;
    }
    const void *kd = sl__col_values(b, p->key_cols[0]);
    int64_t *prow = tb->prow;
    bool w4 = sl_type_width(kc->type) == 4, more = false; /* more: other sums need gid */
    for (int a = 0; a < p->n_aggs; a++)
        more |= a != a0 && (p->aggs[a].fn == AGG_SUM || p->aggs[a].fn == AGG_AVG);
    if (w4 && !x0)
        ids_one_key(p, tb, kd, true, off, n, gid, prow, NULL, NULL, NULL);
    else if (w4 && more)
        ids_one_key(p, tb, kd, true, off, n, gid, prow, x0, part0, val0);
    else if (w4)
        ids_one_key(p, tb, kd, true, off, n, NULL, prow, x0, part0, val0);
    else if (!x0)
        ids_one_key(p, tb, kd, false, off, n, gid, prow, NULL, NULL, NULL);
    else if (more)
        ids_one_key(p, tb, kd, false, off, n, gid, prow, x0, part0, val0);
    else
        ids_one_key(p, tb, kd, false, off, n, NULL, prow, x0, part0, val0);
    tb->prow_dirty = true;
    for (int a = 0; a < p->n_aggs; a++) {
        const struct agg_spec *s = &p->aggs[a];
        if (a == a0 || (s->fn != AGG_SUM && s->fn != AGG_AVG))
            continue;
        const int64_t *pi = xi;
        pf = xf;
        load_col(b, s->col, off, n, xi, xf, &pi, &pf, valid);
        union agg_val *val = tb->val[a];
        if (tb->part[a]) {
            tb->room[a] = 0;
            for (int64_t i = 0; i < n; i++)
                add_part(tb->part[a], val, gid[i], pi[i]);
        } else {
            for (int64_t i = 0; i < n; i++)
                val[gid[i]].f += pf[i];
        }
    }
}

int sl__agg_table_sink(sl_task_t *t, const struct agg_plan *p, struct agg_table *tb,
                       const sl_batch_t *b, struct agg_chunk **parts, int64_t *flushed)
{
    int64_t kv[AGG_MAX_KEYS][AGG_VEC], gid[AGG_VEC], xi[AGG_VEC];
    uint64_t h[AGG_VEC], nm[AGG_VEC];
    double xf[AGG_VEC];
    uint8_t valid[AGG_VEC];
    int nk = p->n_keys;
    for (int64_t off = 0; off < b->n_rows; off += AGG_VEC) {
        int64_t n = b->n_rows - off < AGG_VEC ? b->n_rows - off : AGG_VEC;
        if (tb->n + n > tb->cap) {
            /* Fewer than 2 rows per group: pre-aggregation hardly reduces the rows, so
             * shrink the table to an L1-sized one (4 * AGG_VEC slots) that only merges
             * duplicates close together and is flushed often (its arrays have room). */
            bool shrink = tb->n * 2 > tb->rows && tb->cap > 2 * AGG_VEC;
            int rc = sl__agg_table_flush(t, p, tb, parts);
            if (rc < 0)
                return rc;
            if (shrink) {
                tb->cap = 2 * AGG_VEC;
                tb->mask = 4 * AGG_VEC - 1;
            }
            (*flushed)++;
        }
        tb->rows += n;
        /* Keys and hashes. A null key is stored as 0 with its bit in the null mask. One
         * key without nulls (the common case) takes one fused pass with the same hash. */
        const struct sl__col *kc = nk == 1 ? &b->cols[p->key_cols[0]] : NULL;
        bool one_key = kc && (!kc->validity || kc->null_count == 0);
        if (one_key && fusable(p, tb, b)) {
            fused_rows(p, tb, b, kc, off, n, gid, xi, xf, valid);
            continue;
        }
        if (one_key && sl_type_width(kc->type) == 4)
            ids_one_key(p, tb, sl__col_values(b, p->key_cols[0]), true, off, n, gid, NULL, NULL,
                        NULL, NULL);
        else if (one_key)
            ids_one_key(p, tb, sl__col_values(b, p->key_cols[0]), false, off, n, gid, NULL,
                        NULL, NULL, NULL);
        for (int64_t i = 0; i < n && !one_key; i++) {
            nm[i] = 0;
            h[i] = 0x9E3779B97F4A7C15ull;
        }
        for (int j = 0; j < nk && !one_key; j++) {
            const int64_t *kp = NULL;
            const double *unused;
            int any = load_col(b, p->key_cols[j], off, n, kv[j], NULL, &kp, &unused, valid);
            if (kp != kv[j])
                memcpy(kv[j], kp, (size_t)n * 8);
            if (any) {
                for (int64_t i = 0; i < n; i++) {
                    if (!valid[i]) {
                        kv[j][i] = 0;
                        nm[i] |= 1ull << j;
                    }
                }
            }
            for (int64_t i = 0; i < n; i++)
                h[i] = mix64(h[i] ^ ((uint64_t)kv[j][i] + (uint64_t)j * 0x632BE59BD9B4E019ull));
        }
        for (int64_t i = 0; i < n && !one_key; i++)
            h[i] = nm[i] ? mix64(h[i] ^ nm[i]) : h[i];
        /* Group ids. Prefetching the slot helps once the table outgrows L1. */
        for (int64_t i = 0; i < n && !one_key; i++) {
            if (i + 8 < n)
                __builtin_prefetch(&tb->slots[h[i + 8] & tb->mask]);
            gid[i] = nk == 1 ? find_group1(p, tb, h[i], nm[i], kv[0][i])
                             : find_group(p, tb, h[i], nm[i], &kv[0][i], AGG_VEC);
        }
        /* Aggregates, one column loop each. With few groups (TPC-H Q1's four) the rows
         * of a vector are counted once, and counts and integer sums without nulls go
         * through small per-lane arrays (small_rows): a count or sum of a group updated
         * row after row in memory waits for its last update each time. */
        int32_t hist[AGG_FEW_GROUPS];
        bool small = tb->n <= AGG_FEW_GROUPS;
        if (small) {
            memset(hist, 0, (size_t)tb->n * sizeof *hist);
            for (int64_t i = 0; i < n; i++)
                hist[gid[i]]++;
        }
        for (int a = 0; a < p->n_aggs; a++) {
            const struct agg_spec *s = &p->aggs[a];
            int has_null = 0;
            const int64_t *pi = xi;
            const double *pf = xf;
            if (s->col >= 0)
                has_null = load_col(b, s->col, off, n, xi, xf, &pi, &pf, valid);
            if (small && !has_null && (s->fn == AGG_COUNT_STAR || s->fn == AGG_COUNT)) {
                for (int64_t g = 0; g < tb->n; g++)
                    tb->cnt[a][g] += hist[g];
            } else if (tb->part[a] && !has_null) {
                sum_int_rows(tb, p, a, gid, n, pi, small ? hist : NULL);
            } else {
                update_agg(s, tb->cnt[a], tb->val[a], gid, n, pi, pf, valid, has_null);
            }
        }
    }
    /* Readers of the table (flush, merge, output) see exact sums. */
    sl__agg_table_fold(p, tb);
    return SL_OK;
}

/* Record layout: hash, null mask, keys, then per aggregate its count and the first
 * sl__agg_rec_val_bytes of its value (the union's members all start at its first byte),
 * so that a count takes 8 bytes and a sum of int64 24. */
static void write_record(const struct agg_plan *p, const struct agg_table *tb, int64_t g, char *r)
{
    memcpy(r, &tb->hashes[g], 8);
    memcpy(r + 8, &tb->nulls[g], 8);
    /* Copies of constant sizes only: the compiler inlines them (a variable size is a
     * call to memcpy a field). */
    for (int j = 0; j < p->n_keys; j++)
        memcpy(r + 16 + 8 * j, &tb->keys[g * p->n_keys + j], 8);
    char *q = r + 16 + (size_t)p->n_keys * 8;
    for (int a = 0; a < p->n_aggs; a++) {
        size_t vb = sl__agg_rec_val_bytes(&p->aggs[a]);
        memcpy(q, &tb->cnt[a][g], 8);
        if (vb == 16)
            memcpy(q + 8, &tb->val[a][g], 16);
        else if (vb == 8)
            memcpy(q + 8, &tb->val[a][g], 8);
        q += 8 + vb;
    }
}

/* Makes room for k more records in partition q's newest chunk: a new chunk when it has
 * less. Chunks grow from 16 records to 64 KiB (or k records), so that many partitions
 * with few groups each cost little memory. */
static int chunk_room(sl_task_t *t, struct agg_table *tb, struct agg_chunk **parts, int q,
                      int64_t k, size_t rb)
{
    struct agg_chunk *c = parts[q];
    if (c && c->cap - c->n >= k)
        return SL_OK;
    int64_t cap = c ? c->cap * 2 : 16;
    if ((size_t)cap * rb > 65536)
        cap = c ? c->cap : cap;
    if (cap < k)
        cap = k;
    size_t bytes = (sizeof(struct agg_chunk) + (size_t)cap * rb + 15) & ~(size_t)15;
    if (bytes > tb->slab_left) {
        /* 2,000 rows of 2^24 groups flushed 1.1 GB of records a query into 64 KiB
         * chunks, all on fresh pages: a quarter of the CPU time went to page faults. */
        size_t sb = tb->slab_next ? tb->slab_next : (size_t)1 << 20;
        tb->slab_next = sb < ((size_t)128 << 20) ? sb * 2 : sb;
        if (sb < bytes)
            sb = bytes;
        if (!(tb->slab = sl_task_alloc(t, sb)))
            return SL_ENOMEM;
        tb->slab_left = sb;
    }
    struct agg_chunk *nc = (struct agg_chunk *)tb->slab;
    tb->slab += bytes;
    tb->slab_left -= bytes;
    nc->next = c;
    nc->n = 0;
    nc->cap = cap;
    nc->data = (char *)(nc + 1);
    parts[q] = nc;
    return SL_OK;
}

int sl__agg_table_flush(sl_task_t *t, const struct agg_plan *p, struct agg_table *tb,
                        struct agg_chunk **parts)
{
    size_t rb = p->rec_bytes;
    sl__agg_table_fold(p, tb);
    /* The records of each partition are counted, given room in one chunk, then written
     * through cursors kept here: writing a record reads no chunk header (a header a
     * partition, on as many pages, missed the cache and the TLB on every record). */
    uint32_t k[AGG_PARTS] = {0};
    char *cur[AGG_PARTS];
    for (int64_t g = 0; g < tb->n; g++)
        k[tb->hashes[g] >> (64 - AGG_PART_BITS)]++;
    for (int q = 0; q < AGG_PARTS; q++) {
        if (!k[q])
            continue;
        if (chunk_room(t, tb, parts, q, k[q], rb) < 0)
            return SL_ENOMEM;
        cur[q] = parts[q]->data + (size_t)parts[q]->n * rb;
        parts[q]->n += k[q];
    }
    for (int64_t g = 0; g < tb->n; g++) {
        int q = (int)(tb->hashes[g] >> (64 - AGG_PART_BITS));
        write_record(p, tb, g, cur[q]);
        cur[q] += rb;
    }
    sl__agg_table_clear(tb);
    return SL_OK;
}

/* Rows a raw write partitions at once: their partition ids, then room in each partition's
 * chunk, then the records through cursors (sl__agg_table_flush's way). */
#define AGG_RAW_BLOCK 16384

/* Whether the first rows of a key column (at most AGG_VEC of n) repeat keys: fewer
 * distinct keys than half the rows, so the table pre-aggregates them (a sorted or
 * clustered stretch of the input). Counted in a set of 4 * AGG_VEC hashes. */
static bool sample_repeats(const void *kd, bool w4, int64_t n)
{
    uint64_t set[4 * AGG_VEC];
    memset(set, 0, sizeof set);
    n = n < AGG_VEC ? n : AGG_VEC;
    int64_t d = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t k = w4 ? ((const int32_t *)kd)[i] : ((const int64_t *)kd)[i];
        uint64_t h = mix64(0x9E3779B97F4A7C15ull ^ (uint64_t)k) | 1, pos = h;
        while (set[pos & (4 * AGG_VEC - 1)] && set[pos & (4 * AGG_VEC - 1)] != h)
            pos++;
        d += !set[pos & (4 * AGG_VEC - 1)];
        set[pos & (4 * AGG_VEC - 1)] = h;
    }
    return 2 * d <= n;
}

/* Writes value v of every row [off, off + n) of the block into its record at byte `at`
 * (cursors cur, advanced): the first sum with the keys, each further one in a pass of
 * its own. */
static void raw_values(const struct agg_plan *p, const sl_batch_t *b, int a, int64_t off,
                       int64_t n, const uint16_t *pid, char **cur, size_t at, const void *kd,
                       bool w4)
{
    int64_t xi[AGG_VEC];
    double xf[AGG_VEC];
    uint8_t valid[AGG_VEC];
    size_t rb = p->raw_bytes;
    for (int64_t v = 0; v < n; v += AGG_VEC) {
        int64_t m = n - v < AGG_VEC ? n - v : AGG_VEC;
        const int64_t *pi = xi;
        const double *pf = xf;
        if (a >= 0)
            load_col(b, p->aggs[a].col, off + v, m, xi, xf, &pi, &pf, valid);
        const void *x = a < 0 ? NULL : p->aggs[a].is_int ? (const void *)pi : (const void *)pf;
        for (int64_t i = 0; i < m; i++) {
            char *r = cur[pid[v + i]];
            if (kd) {
                int64_t k = w4 ? ((const int32_t *)kd)[off + v + i]
                               : ((const int64_t *)kd)[off + v + i];
                memcpy(r, &k, 8);
            }
            if (x)
                memcpy(r + at, (const char *)x + 8 * i, 8);
            cur[pid[v + i]] = r + rb;
        }
    }
}

int sl__agg_table_raw(sl_task_t *t, const struct agg_plan *p, struct agg_table *tb,
                      const sl_batch_t *b, struct agg_chunk **raw)
{
    const struct sl__col *kc = &b->cols[p->key_cols[0]];
    if (!p->counts_sums || p->n_keys != 1 || (kc->validity && kc->null_count != 0))
        return 0;
    int sums[AGG_MAX_AGGS], ns = 0;
    for (int a = 0; a < p->n_aggs; a++) {
        const struct sl__col *c = p->aggs[a].col >= 0 ? &b->cols[p->aggs[a].col] : NULL;
        if (c && c->validity && c->null_count != 0)
            return 0;
        if (p->aggs[a].fn == AGG_SUM || p->aggs[a].fn == AGG_AVG)
            sums[ns++] = a;
    }
    const void *kd = sl__col_values(b, p->key_cols[0]);
    bool w4 = sl_type_width(kc->type) == 4;
    if (sample_repeats(kd, w4, b->n_rows))
        return 0;
    size_t rb = p->raw_bytes;
    uint16_t pid[AGG_RAW_BLOCK];
    uint32_t k[AGG_PARTS];
    char *cur[AGG_PARTS], *start[AGG_PARTS];
    for (int64_t off = 0; off < b->n_rows; off += AGG_RAW_BLOCK) {
        int64_t n = b->n_rows - off < AGG_RAW_BLOCK ? b->n_rows - off : AGG_RAW_BLOCK;
        memset(k, 0, sizeof k);
        for (int64_t i = 0; i < n; i++) {
            int64_t key = w4 ? ((const int32_t *)kd)[off + i] : ((const int64_t *)kd)[off + i];
            uint64_t h = mix64(0x9E3779B97F4A7C15ull ^ (uint64_t)key);
            pid[i] = (uint16_t)(h >> (64 - AGG_PART_BITS));
            k[pid[i]]++;
        }
        for (int q = 0; q < AGG_PARTS; q++) {
            if (!k[q])
                continue;
            if (chunk_room(t, tb, raw, q, k[q], rb) < 0)
                return sl_task_fail(t, SL_ENOMEM, "aggregate: out of memory for rows");
            start[q] = raw[q]->data + (size_t)raw[q]->n * rb;
            raw[q]->n += k[q];
        }
        memcpy(cur, start, sizeof cur);
        raw_values(p, b, ns ? sums[0] : -1, off, n, pid, cur, 8, kd, w4);
        for (int s = 1; s < ns; s++) {
            memcpy(cur, start, sizeof cur);
            raw_values(p, b, sums[s], off, n, pid, cur, 8 + 8 * (size_t)s, NULL, w4);
        }
    }
    return 1;
}

void sl__agg_table_merge_raw(const struct agg_plan *p, struct agg_table *dst,
                             const struct agg_chunk *c)
{
    /* Hashes of RAW_AHEAD records ahead, whose slots are prefetched: a partition's table
     * (16K rows of 2^24 groups: 256 KiB of slots, about 1 MiB in all) misses L1. */
    enum { RAW_AHEAD = 16 };
    size_t rb = p->raw_bytes;
    for (; c; c = c->next) {
        uint64_t hs[RAW_AHEAD];
        for (int64_t r = 0; r < c->n && r < RAW_AHEAD; r++) {
            int64_t k;
            memcpy(&k, c->data + (size_t)r * rb, 8);
            hs[r] = mix64(0x9E3779B97F4A7C15ull ^ (uint64_t)k);
            __builtin_prefetch(&dst->slots[hs[r] & dst->mask]);
        }
        for (int64_t r = 0; r < c->n; r++) {
            const char *rec = c->data + (size_t)r * rb;
            int64_t k;
            memcpy(&k, rec, 8);
            uint64_t h = hs[r % RAW_AHEAD];
            if (r + RAW_AHEAD < c->n) {
                int64_t kn;
                memcpy(&kn, rec + RAW_AHEAD * rb, 8);
                hs[r % RAW_AHEAD] = mix64(0x9E3779B97F4A7C15ull ^ (uint64_t)kn);
                __builtin_prefetch(&dst->slots[hs[r % RAW_AHEAD] & dst->mask]);
            }
            int64_t g = find_group1(p, dst, h, 0, k);
            const char *q = rec + 8;
            for (int a = 0; a < p->n_aggs; a++) {
                const struct agg_spec *s = &p->aggs[a];
                dst->cnt[a][g]++;
                if (s->fn != AGG_SUM && s->fn != AGG_AVG)
                    continue;
                if (s->is_int) {
                    int64_t x;
                    memcpy(&x, q, 8);
                    dst->val[a][g].s += x;
                } else {
                    double x;
                    memcpy(&x, q, 8);
                    dst->val[a][g].f += x;
                }
                q += 8;
            }
        }
    }
}

/* Merges one state (count c, value v) into group g of aggregate a. */
static inline void merge_state(const struct agg_spec *s, struct agg_table *dst, int a, int64_t g,
                               int64_t c, const union agg_val *v)
{
    int64_t *dc = &dst->cnt[a][g];
    union agg_val *dv = dst->val[a] ? &dst->val[a][g] : NULL;
    switch (s->fn) {
    case AGG_COUNT_STAR:
    case AGG_COUNT:
        break;
    case AGG_SUM:
    case AGG_AVG:
        if (s->is_int)
            dv->s += v->s;
        else
            dv->f += v->f;
        break;
    case AGG_COUNT_DISTINCT: /* agg_any.c's only */
        break;
    case AGG_MIN:
    case AGG_MAX:
        if (c == 0)
            break;
        if (*dc == 0)
            *dv = *v;
        else if (s->is_int ? (s->fn == AGG_MIN ? v->i < dv->i : v->i > dv->i)
                           : (s->fn == AGG_MIN ? f_less(v->f, dv->f) : f_less(dv->f, v->f)))
            *dv = *v;
        break;
    }
    *dc += c;
}

void sl__agg_table_merge_table(const struct agg_plan *p, struct agg_table *dst,
                               const struct agg_table *src)
{
    for (int64_t g = 0; g < src->n; g++) {
        int64_t d = find_group(p, dst, src->hashes[g], src->nulls[g], src->keys + g * p->n_keys, 1);
        for (int a = 0; a < p->n_aggs; a++)
            merge_state(&p->aggs[a], dst, a, d, src->cnt[a][g], src->val[a] ? &src->val[a][g] : NULL);
    }
}

void sl__agg_table_merge_chunks(const struct agg_plan *p, struct agg_table *dst,
                                const struct agg_chunk *c)
{
    int64_t keys[AGG_MAX_KEYS];
    for (; c; c = c->next) {
        for (int64_t r = 0; r < c->n; r++) {
            const char *rec = c->data + (size_t)r * p->rec_bytes;
            uint64_t h, nm;
            memcpy(&h, rec, 8);
            memcpy(&nm, rec + 8, 8);
            for (int j = 0; j < p->n_keys; j++)
                memcpy(&keys[j], rec + 16 + 8 * j, 8);
            int64_t d = find_group(p, dst, h, nm, keys, 1);
            const char *q = rec + 16 + (size_t)p->n_keys * 8;
            for (int a = 0; a < p->n_aggs; a++) {
                size_t vb = sl__agg_rec_val_bytes(&p->aggs[a]);
                int64_t cnt;
                union agg_val v = {0};
                memcpy(&cnt, q, 8);
                if (vb == 16)
                    memcpy(&v, q + 8, 16);
                else if (vb == 8)
                    memcpy(&v, q + 8, 8);
                merge_state(&p->aggs[a], dst, a, d, cnt, &v);
                q += 8 + vb;
            }
        }
    }
}

/* Clears validity bit i of column c of b (adding a bitmap if needed); -1 on failure. */
static int set_null(sl_batch_t *b, int c, int64_t i)
{
    uint8_t *v = b->cols[c].validity ? b->cols[c].validity->ptr : sl_batch_column_validity(b, c);
    if (!v)
        return -1;
    v[i >> 3] &= (uint8_t) ~(1u << (i & 7));
    b->cols[c].null_count = -1;
    return 0;
}

sl_batch_t *sl__agg_table_output(sl_task_t *t, const struct agg_plan *p, const struct agg_table *tb)
{
    sl_batch_t *b = sl__agg_output_new(t, tb->n);
    if (b && sl__agg_table_output_at(t, p, tb, b, 0) < 0) {
        sl_batch_unref(b);
        return NULL;
    }
    return b;
}

sl_batch_t *sl__agg_output_new(sl_task_t *t, int64_t rows)
{
    sl_batch_t *b = sl__batch_new(sl_op_output_schema(sl_task_op(t)), rows);
    if (!b || sl__batch_alloc_columns(b) != SL_OK) {
        sl_batch_unref(b);
        sl_task_fail(t, SL_ENOMEM, "out of memory for %lld groups", (long long)rows);
        return NULL;
    }
    return b;
}

int sl__agg_table_output_at(sl_task_t *t, const struct agg_plan *p, const struct agg_table *tb,
                            sl_batch_t *b, int64_t at)
{
    int rc = 0;
    for (int j = 0; j < p->n_keys; j++) {
        char *o = (char *)sl__col_values(b, j) + at * (int64_t)sl_type_width(p->key_types[j]);
        bool w4 = sl_type_width(p->key_types[j]) == 4;
        bool str = sl__agg_str_key_type(p->key_types[j]); /* ids of strings */
        int src = str ? sl__agg_str_output(t, p, tb, b, j) : SL_OK; /* at 0 only */
        if (src < 0)
            return sl_task_fail(t, src, "aggregate: %s for the strings of key %d",
                                sl_strerror(src), j);
        for (int64_t g = 0; g < tb->n; g++) {
            int64_t k = tb->keys[g * p->n_keys + j];
            if (str)
                ;
            else if (w4)
                ((int32_t *)o)[g] = (int32_t)k;
            else
                ((int64_t *)o)[g] = k;
            if (tb->nulls[g] >> j & 1)
                rc |= set_null(b, j, at + g);
        }
    }
    for (int a = 0; a < p->n_aggs; a++) {
        const struct agg_spec *s = &p->aggs[a];
        int c = p->n_keys + a;
        size_t ow = sl_type_width(s->out_type);
        char *o = (char *)sl__col_values(b, c) + (size_t)at * ow;
        bool dec = SL_TYPE_ID(s->in_type) == SL_TYPE_DECIMAL;
        double unit = dec ? (double)sl__pow10_i128(sl_type_scale(s->in_type)) : 1;
        for (int64_t g = 0; g < tb->n; g++) {
            int64_t n = tb->cnt[a][g];
            const union agg_val *v = tb->val[a] ? &tb->val[a][g] : NULL;
            if (s->fn == AGG_COUNT_STAR || s->fn == AGG_COUNT) {
                ((int64_t *)o)[g] = n;
                continue;
            }
            if (n == 0) {
                memset(o + (size_t)g * ow, 0, ow);
                rc |= set_null(b, c, at + g);
                continue;
            }
            if (s->fn == AGG_AVG) {
                ((double *)o)[g] = (s->is_int ? (double)v->s / unit : v->f) / (double)n;
            } else if (s->fn == AGG_SUM && dec) {
                /* decimal(38,s): 128 bits, at most 38 digits (2^63 values of 18 fit). */
                memcpy(o + 16 * g, &v->s, 16);
            } else if (s->fn == AGG_SUM && s->is_int) {
                if (v->s > INT64_MAX || v->s < INT64_MIN)
                    return sl_task_fail(t, SL_EOVERFLOW, "sum of column %d overflows int64",
                                        s->col);
                ((int64_t *)o)[g] = (int64_t)v->s;
            } else if (s->fn == AGG_SUM) {
                ((double *)o)[g] = v->f;
            } else {
                if (s->is_int && ow == 4)
                    ((int32_t *)o)[g] = (int32_t)v->i;
                else if (s->is_int)
                    ((int64_t *)o)[g] = v->i;
                else if (s->out_type == SL_TYPE_FLOAT32)
                    ((float *)o)[g] = (float)v->f;
                else
                    ((double *)o)[g] = v->f;
            }
        }
    }
    return rc ? sl_task_fail(t, SL_ENOMEM, "out of memory for validity bitmaps") : SL_OK;
}


/* Reads value i of column c as an integer (int32, int64, date32, timestamp, decimal of 8
 * or 16 bytes: the GPU's partial states) or a double (float32/float64). */
static void read_value(const sl_batch_t *b, int c, int64_t i, __int128 *vi, double *vf)
{
    const void *v = sl__col_values(b, c);
    switch (SL_TYPE_ID(b->cols[c].type)) {
    case SL_TYPE_INT32:
    case SL_TYPE_DATE32: *vi = ((const int32_t *)v)[i]; break;
    case SL_TYPE_INT64:
    case SL_TYPE_TIMESTAMP: *vi = ((const int64_t *)v)[i]; break;
    case SL_TYPE_DECIMAL:
        if (sl_type_width(b->cols[c].type) == 16)
            memcpy(vi, (const char *)v + 16 * i, 16);
        else
            *vi = ((const int64_t *)v)[i];
        break;
    case SL_TYPE_FLOAT32: *vf = ((const float *)v)[i]; break;
    default: *vf = ((const double *)v)[i]; break;
    }
}

int sl__agg_add_partials(sl_task_t *t, const struct agg_plan *p, struct agg_global *gs,
                         const sl_batch_t *b)
{
    struct agg_kept *k = NULL;
    int rc = sl__agg_partials_kept(t, p, b, &k);
    if (rc == SL_OK)
        sl__agg_file_kept(gs, k);
    return rc;
}

void sl__agg_file_kept(struct agg_global *gs, struct agg_kept *k)
{
    k->next = gs->locals;
    gs->locals = k;
    gs->groups += k->tb.n;
}

int sl__agg_partials_kept(sl_task_t *t, const struct agg_plan *p, const sl_batch_t *b,
                          struct agg_kept **out)
{
    struct agg_kept *k = sl_task_alloc(t, sizeof *k);
    *out = NULL;
    if (!k)
        return SL_ENOMEM;
    memset(k, 0, sizeof *k);
    if (sl__agg_table_init(t, p, &k->tb, b->n_rows) < 0)
        return SL_ENOMEM;
    int64_t kv[AGG_MAX_KEYS];
    for (int64_t i = 0; i < b->n_rows; i++) {
        /* Keys, null mask and hash as the sink makes them (sl__agg_table_sink). */
        uint64_t nm = 0, h = 0x9E3779B97F4A7C15ull;
        for (int j = 0; j < p->n_keys; j++) {
            double unused;
            __int128 key = 0;
            if (sl__col_valid(&b->cols[j], i))
                read_value(b, j, i, &key, &unused);
            else
                nm |= 1ull << j;
            kv[j] = (int64_t)key;
            h = mix64(h ^ ((uint64_t)kv[j] + (uint64_t)j * 0x632BE59BD9B4E019ull));
        }
        h = nm ? mix64(h ^ nm) : h;
        int64_t g = find_group(p, &k->tb, h, nm, kv, 1);
        /* A partial state from an output value: counts are counts; a sum, min or max is
         * the value with a count of 1, or a count of 0 where it is null (no values). */
        for (int a = 0; a < p->n_aggs; a++) {
            const struct agg_spec *s = &p->aggs[a];
            int c = p->n_keys + a;
            __int128 vi = 0;
            double vf = 0;
            bool valid = sl__col_valid(&b->cols[c], i);
            if (valid)
                read_value(b, c, i, &vi, &vf);
            if (s->fn == AGG_COUNT_STAR || s->fn == AGG_COUNT) {
                k->tb.cnt[a][g] += (int64_t)vi;
                continue;
            }
            union agg_val v = {0};
            if (s->fn == AGG_SUM && s->is_int)
                v.s = vi;
            else if (s->is_int && s->fn != AGG_SUM)
                v.i = (int64_t)vi;
            else
                v.f = vf;
            merge_state(s, &k->tb, a, g, valid ? 1 : 0, &v);
        }
    }
    *out = k;
    return SL_OK;
}
