/* Multiway merge of sorted host runs for the out-of-core sort (ooc_merge.h). */
#include <string.h>

#include "ooc_merge.h"
#include "op_common.h"

/* Rows merged before their columns are copied: the loser tree picks BLK sources, then
 * each column is copied for the whole block (one column at a time stays in cache). */
#define BLK 1024

int64_t sl__ooc_total(const struct sl__ooc_runs *m)
{
    int64_t n = 0;
    for (int64_t j = 0; j < m->n_runs; j++)
        n += m->rows[j];
    return n;
}

/* Narrow runs (ooc_merge.h): the high 16 bits of row i's code, the last t with
 * table[t] <= i (table[0] = 0). */
static inline uint64_t narrow_top(const uint32_t *table, int64_t i)
{
    int64_t lo = 0, hi = SL__OOC_NARROW_TOP - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if ((int64_t)table[mid] <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return (uint64_t)lo;
}

/* Row i of narrow run j as its packed row (code << 32 | payload), given its top bits. */
static inline uint64_t narrow_packed(const uint16_t *row, uint64_t top)
{
    return (top << 16 | row[0]) << 32 | (uint64_t)row[2] << 16 | row[1];
}

static inline const uint16_t *narrow_rows(const struct sl__ooc_runs *m, int64_t j)
{
    return m->cols[j * m->n_cols + m->key_col];
}

static inline const uint32_t *narrow_table(const struct sl__ooc_runs *m, int64_t j)
{
    return m->narrow_tables + j * SL__OOC_NARROW_TOP;
}

static inline uint64_t narrow_row(const struct sl__ooc_runs *m, int64_t j, int64_t i)
{
    return narrow_packed(narrow_rows(m, j) + 3 * i, narrow_top(narrow_table(m, j), i));
}

struct tops_arg {
    const struct sl__ooc_runs *m;
    const int64_t *cuts;
    int64_t nb, *tops;
};

static void tops_part(void *p, int part, int parts)
{
    const struct tops_arg *a = p;
    const struct sl__ooc_runs *m = a->m;
    const int64_t k = m->n_runs;
    for (int64_t b = a->nb * part / parts; b < a->nb * (part + 1) / parts; b++) {
        int64_t lo = SL__OOC_NARROW_TOP, hi = -1;
        for (int64_t j = 0; j < k; j++) {
            int64_t f = a->cuts[b * k + j], e = a->cuts[(b + 1) * k + j];
            if (e <= f)
                continue;
            int64_t t0 = (int64_t)narrow_top(narrow_table(m, j), f);
            int64_t t1 = (int64_t)narrow_top(narrow_table(m, j), e - 1);
            lo = t0 < lo ? t0 : lo;
            hi = t1 > hi ? t1 : hi;
        }
        a->tops[2 * b] = lo;
        a->tops[2 * b + 1] = hi;
    }
}

void sl__ooc_narrow_tops(const struct sl__ooc_runs *m, const int64_t *cuts, int64_t nb,
                         int64_t *tops, int threads)
{
    struct tops_arg a = {m, cuts, nb, tops};
    int64_t most = nb / 4 + 1; /* some 8 k searches a part at least */
    if (nb > 0)
        sl__par_for(most < threads ? (int)most : threads, tops_part, &a);
}

static inline uint64_t code_at(const struct sl__ooc_runs *m, int64_t j, int64_t i);

void sl__ooc_split_tops(const struct sl__ooc_runs *m, int64_t j, const int64_t *split,
                        int64_t nc, int32_t *tops)
{
    const int64_t rows = m->rows[j];
    for (int64_t x = 0; x < nc + 2; x++) {
        int64_t b = x == 0 ? 0 : x <= nc ? split[x - 1] : rows;
        tops[2 * x] = b > 0 ? (int32_t)(code_at(m, j, b - 1) >> 16) : -1;
        tops[2 * x + 1] = b < rows ? (int32_t)(code_at(m, j, b) >> 16) : -1;
    }
}

void sl__ooc_bucket_tops(const struct sl__ooc_runs *m, const int32_t *split_tops, int64_t nc,
                         const int64_t *cuts, const int64_t *bx, int64_t nb, int64_t *tops)
{
    const int64_t k = m->n_runs, w = 2 * (nc + 2);
    for (int64_t b = 0; b < nb; b++) {
        if (bx[b] < 0 || bx[b + 1] < 0) {
            sl__ooc_narrow_tops(m, cuts + b * k, 1, tops + 2 * b, 1);
            continue;
        }
        int64_t lo = SL__OOC_NARROW_TOP, hi = -1;
        for (int64_t j = 0; j < k; j++) {
            if (cuts[(b + 1) * k + j] <= cuts[b * k + j])
                continue; /* no rows of run j */
            const int32_t *tj = split_tops + j * w;
            int64_t t0 = tj[2 * bx[b] + 1], t1 = tj[2 * bx[b + 1]];
            lo = t0 < lo ? t0 : lo;
            hi = t1 > hi ? t1 : hi;
        }
        tops[2 * b] = lo;
        tops[2 * b + 1] = hi;
    }
}

/* The key of row i of run j as an unsigned code whose order is the output order. */
static inline uint64_t code_at(const struct sl__ooc_runs *m, int64_t j, int64_t i)
{
    const void *k = m->cols[j * m->n_cols + m->key_col];
    if (m->narrow)
        return narrow_row(m, j, i) >> 32;
    if (m->packed)
        return ((const uint64_t *)k)[i] >> 32;
    if (m->width[m->key_col] == 4) {
        uint32_t c = (uint32_t)((const int32_t *)k)[i] ^ 0x80000000u;
        return m->desc ? (uint32_t)~c : c;
    }
    uint64_t c = (uint64_t)((const int64_t *)k)[i] ^ 0x8000000000000000ull;
    return m->desc ? ~c : c;
}

/* Narrow run j's rows whose code is below v, from its table (the rows below v's top
 * value) and a binary search of the low 16 bits among the rows of that top value (some
 * 32 for 2^21 rows of random keys): where a search by code_at searched the table at
 * every probe (early_cuts in ooc_runs_cuda.c took 12.8 ms for 16 runs of 2^21 rows and
 * 113 splitters, H100 host, 2026-11-27). */
static int64_t narrow_below(const struct sl__ooc_runs *m, int64_t j, uint64_t v)
{
    const int64_t n = m->rows[j];
    if (v > 0xffffffffull)
        return n;
    const uint32_t *table = narrow_table(m, j);
    const uint16_t *rows = narrow_rows(m, j);
    const int64_t t = (int64_t)(v >> 16);
    const uint16_t low = (uint16_t)v;
    int64_t lo = table[t], hi = t + 1 < SL__OOC_NARROW_TOP ? table[t + 1] : n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (rows[3 * mid] < low)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* First row of run j whose code is >= v (strict = 0) or > v (strict = 1). */
static int64_t bound(const struct sl__ooc_runs *m, int64_t j, uint64_t v, int strict)
{
    if (m->narrow)
        return narrow_below(m, j, strict ? (v >= 0xffffffffull ? (uint64_t)1 << 32 : v + 1) : v);
    int64_t lo = 0, hi = m->rows[j];
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        uint64_t c = code_at(m, j, mid);
        if (c < v || (strict && c == v))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

uint64_t sl__ooc_code(const struct sl__ooc_runs *m, int64_t j, int64_t i)
{
    return code_at(m, j, i);
}

/* The smallest code v with (rows <= v) >= r + 1 is the code of the row at rank r. */
uint64_t sl__ooc_code_at_rank(const struct sl__ooc_runs *m, int64_t r)
{
    uint64_t lo = 0, hi = m->width[m->key_col] == 4 ? 0xffffffffull : UINT64_MAX;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int64_t le = 0;
        for (int64_t j = 0; j < m->n_runs; j++)
            le += bound(m, j, mid, 1);
        if (le >= r + 1)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* First row in [lo, hi) of run j whose code is >= v (hi if none). */
static int64_t bound_in(const struct sl__ooc_runs *m, int64_t j, uint64_t v, int64_t lo,
                        int64_t hi)
{
    if (m->narrow) { /* the run is sorted: its bound, within [lo, hi] */
        int64_t b = narrow_below(m, j, v);
        return b < lo ? lo : b > hi ? hi : b;
    }
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (code_at(m, j, mid) < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void sl__ooc_split_below(const struct sl__ooc_runs *m, uint64_t v, int64_t *split)
{
    for (int64_t j = 0; j < m->n_runs; j++)
        split[j] = bound(m, j, v, 0);
}

/* Rows of run j below code v, searched onwards from row `from` (galloping: the first
 * probes share its cache lines and pages, where a search over the whole run starts with
 * a read per page; pinned runs of 2^21 rows: some 20 misses a search, 22,000 searches in
 * a 1/16 sort). */
static int64_t below_from(const struct sl__ooc_runs *m, int64_t j, uint64_t v, int64_t from)
{
    if (m->narrow) {
        int64_t b = narrow_below(m, j, v);
        return b < from ? from : b;
    }
    int64_t lo = from, n = m->rows[j], step = 1;
    while (lo + step <= n && code_at(m, j, lo + step - 1) < v) {
        lo += step;
        step *= 2;
    }
    return bound_in(m, j, v, lo, lo + step <= n ? lo + step - 1 : n);
}

void sl__ooc_split_below_from(const struct sl__ooc_runs *m, uint64_t v, const int64_t *from,
                              int64_t *split)
{
    for (int64_t j = 0; j < m->n_runs; j++)
        split[j] = below_from(m, j, v, from[j]);
}

/* Runs fn(arg, j0, j1) over groups of consecutive runs of the k on up to `threads`
 * threads (the caller's among them; sl__par_for). */
struct over_runs {
    void (*fn)(void *arg, int64_t j0, int64_t j1);
    void *arg;
    int64_t k;
};

static void over_runs_part(void *p, int part, int parts)
{
    const struct over_runs *o = p;
    o->fn(o->arg, o->k * part / parts, o->k * (part + 1) / parts);
}

static void over_runs(int64_t k, int threads, void (*fn)(void *, int64_t, int64_t), void *arg)
{
    int n = threads < 1 ? 1 : threads;
    if (n > k)
        n = k < 1 ? 1 : (int)k;
    struct over_runs o = {fn, arg, k};
    sl__par_for(n, over_runs_part, &o);
}

struct split_all {
    const struct sl__ooc_runs *m;
    const uint64_t *codes;
    int64_t n;
    int64_t *split;
};

static void split_all_runs(void *p, int64_t j0, int64_t j1)
{
    const struct split_all *a = p;
    const int64_t k = a->m->n_runs;
    for (int64_t j = j0; j < j1; j++)
        for (int64_t i = 0, from = 0; i < a->n; i++)
            from = a->split[i * k + j] = below_from(a->m, j, a->codes[i], from);
}

void sl__ooc_split_below_all(const struct sl__ooc_runs *m, const uint64_t *codes, int64_t n,
                             int64_t *split, int threads)
{
    struct split_all a = {m, codes, n, split};
    /* a thread pays for some 2,000 searches (its start, ~50 us) */
    int64_t most = m->n_runs * n / 2048 + 1;
    over_runs(m->n_runs, most < threads ? (int)most : threads, split_all_runs, &a);
}

/* The smallest code v with (rows <= v) >= r splits the output: rows < v all come
 * before rank r, rows == v fill the rest in run order (stability). */
void sl__ooc_corank(const struct sl__ooc_runs *m, int64_t r, int64_t *split)
{
    int64_t total = sl__ooc_total(m);
    if (r <= 0 || r >= total) {
        for (int64_t j = 0; j < m->n_runs; j++)
            split[j] = r <= 0 ? 0 : m->rows[j];
        return;
    }
    uint64_t lo = 0, hi = m->width[m->key_col] == 4 ? 0xffffffffull : UINT64_MAX;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int64_t le = 0;
        for (int64_t j = 0; j < m->n_runs; j++)
            le += bound(m, j, mid, 1);
        if (le >= r)
            hi = mid;
        else
            lo = mid + 1;
    }
    int64_t need = r;
    for (int64_t j = 0; j < m->n_runs; j++) {
        split[j] = bound(m, j, lo, 0);
        need -= split[j];
    }
    for (int64_t j = 0; j < m->n_runs && need > 0; j++) {
        int64_t eq = bound(m, j, lo, 1) - split[j];
        int64_t take = eq < need ? eq : need;
        split[j] += take;
        need -= take;
    }
}

static int64_t leaves(const struct sl__ooc_runs *m)
{
    int64_t k = 1;
    while (k < m->n_runs)
        k *= 2;
    return k;
}

int64_t sl__ooc_scratch_words(const struct sl__ooc_runs *m)
{
    return 8 * leaves(m) + 8;
}

/* The loser tree's state, per leaf: next row, end and key column; per inner node: its
 * loser's head code and rank. A game is won by the smaller (head, rank); rank is the run index, or K + run index once
 * the run is exhausted (its head then UINT64_MAX), so an exhausted run loses to every
 * other one even against a real code of UINT64_MAX, and ties go to the lower run
 * (stability). The comparisons compile to conditional moves: a game's outcome on
 * random keys cannot be predicted, so branches would cost a misprediction per level. */
struct lt {
    int64_t *cur, *end, *rank;       /* rank: unused (kept in the nodes) */
    uint64_t *head;                  /* inner node n: its loser's head */
    int64_t *tree;                   /* inner node n: its loser's rank */
    const void **keys;
};

static inline __attribute__((always_inline)) uint64_t leaf_code(const void *k, int64_t i,
                                                                  const int kw, const int desc)
{
    if (kw == 4) {
        uint32_t c = (uint32_t)((const int32_t *)k)[i] ^ 0x80000000u;
        return desc ? (uint32_t)~c : c;
    }
    uint64_t c = (uint64_t)((const int64_t *)k)[i] ^ 0x8000000000000000ull;
    return desc ? ~c : c;
}


/* Copies column c of the block's n source rows (run src_run[i], row src_row[i]). */
static void copy_block(const struct sl__ooc_runs *m, int c, const uint32_t *src_run,
                       const int64_t *src_row, int n, char *out)
{
    void *const *cols = m->cols + c;
    int64_t nc = m->n_cols;
    if (m->width[c] == 4) {
        uint32_t *o = (uint32_t *)out;
        for (int i = 0; i < n; i++)
            o[i] = ((const uint32_t *)cols[src_run[i] * nc])[src_row[i]];
    } else {
        uint64_t *o = (uint64_t *)out;
        for (int i = 0; i < n; i++)
            o[i] = ((const uint64_t *)cols[src_run[i] * nc])[src_row[i]];
    }
}

/* The merge loop for one key width and direction (constants after inlining). Each inner
 * node keeps its loser's (head, rank) itself, so a level of the replay is one load of
 * the node, not a load of the loser's index and then of its head: the replay is a
 * chain of dependent loads, and this halves it. The winner's leaf is rank mod K. */
static inline __attribute__((always_inline)) void merge_loop(const struct sl__ooc_runs *m,
                                                             struct lt *s, int64_t K,
                                                             uint64_t hw, int64_t rw,
                                                             int64_t total, void *const *out,
                                                             const int kw, const int desc)
{
    uint32_t src_run[BLK];
    int64_t src_row[BLK];
    /* Restrict-qualified locals: the arrays share one scratch block but never overlap,
     * and the compiler must not reload them after every store. */
    int64_t *restrict cur = s->cur, *restrict trank = s->tree;
    const int64_t *restrict end = s->end;
    uint64_t *restrict thead = s->head;
    const void *const *restrict keys = s->keys;
    for (int64_t o = 0; o < total;) {
        int nb = total - o < BLK ? (int)(total - o) : BLK;
        for (int i = 0; i < nb; i++) {
            int64_t w = rw & (K - 1), r = cur[w];
            src_run[i] = (uint32_t)w;
            src_row[i] = r++;
            cur[w] = r;
            if (r < end[w]) {
                hw = leaf_code(keys[w], r, kw, desc);
            } else {
                hw = UINT64_MAX;
                rw = K + w;
            }
            /* Replay w's path to the root: the loser of each game stays there. */
            for (int64_t n = (K + w) >> 1; n >= 1; n >>= 1) {
                uint64_t hx = thead[n];
                int64_t rx = trank[n];
                int sw = (hx < hw) | ((hx == hw) & (rx < rw));
                thead[n] = sw ? hw : hx;
                trank[n] = sw ? rw : rx;
                hw = sw ? hx : hw;
                rw = sw ? rx : rw;
            }
        }
        for (int c = 0; c < m->n_cols; c++)
            copy_block(m, c, src_run, src_row, nb, (char *)out[c] + o * m->width[c]);
        o += nb;
    }
}

void sl__ooc_merge(const struct sl__ooc_runs *m, const int64_t *from, const int64_t *to,
                   void *const *out, uint64_t *scratch)
{
    int64_t K = leaves(m), total = 0;
    for (int64_t j = 0; j < m->n_runs; j++)
        total += to[j] - from[j];
    if (m->n_runs == 1) { /* one run: a copy */
        for (int c = 0; c < m->n_cols; c++)
            memcpy(out[c], (const char *)m->cols[c] + from[0] * m->width[c],
                   (size_t)(total * m->width[c]));
        return;
    }
    /* Scratch: cur, end (K each); the tree's heads and ranks (K each, node 0 unused);
     * the leaves' heads and ranks and the winners while building (2K each). */
    int64_t *w64 = (int64_t *)scratch;
    struct lt s = {w64, w64 + K, NULL, scratch + 2 * K, w64 + 3 * K,
                   (const void **)(scratch + 4 * K)};
    uint64_t *lh = scratch + 5 * K;        /* leaf heads (K) */
    int64_t *lr = w64 + 6 * K;             /* leaf ranks (K) */
    int64_t *win = w64 + 7 * K;            /* winners of the subtrees (K: nodes 1..K-1) */
    int kw = m->width[m->key_col];
    for (int64_t j = 0; j < K; j++) {
        s.cur[j] = j < m->n_runs ? from[j] : 0;
        s.end[j] = j < m->n_runs ? to[j] : 0;
        s.keys[j] = j < m->n_runs ? m->cols[j * m->n_cols + m->key_col] : NULL;
        int live = s.cur[j] < s.end[j];
        lh[j] = live ? code_at(m, j, s.cur[j]) : UINT64_MAX;
        lr[j] = live ? j : K + j;
    }
    /* Build bottom-up: node n plays its children's winners (leaves below node K / 2). */
    for (int64_t n = K - 1; n >= 1; n--) {
        int64_t a = 2 * n >= K ? 2 * n - K : win[2 * n];
        int64_t b = 2 * n + 1 >= K ? 2 * n + 1 - K : win[2 * n + 1];
        int ab = (lh[a] < lh[b]) | ((lh[a] == lh[b]) & (lr[a] < lr[b]));
        win[n] = ab ? a : b;
        int64_t l = ab ? b : a;
        s.head[n] = lh[l];
        s.tree[n] = lr[l];
    }
    int64_t w = win[1];
    uint64_t hw = lh[w];
    int64_t rw = lr[w];
    if (kw == 4)
        m->desc ? merge_loop(m, &s, K, hw, rw, total, out, 4, 1)
                : merge_loop(m, &s, K, hw, rw, total, out, 4, 0);
    else
        m->desc ? merge_loop(m, &s, K, hw, rw, total, out, 8, 1)
                : merge_loop(m, &s, K, hw, rw, total, out, 8, 0);
}

/* ---------------- merging by sorting the range ---------------- */

/* 1 when the items carry the payload: int32 key and one other column of 4 bytes. */
static int carries_payload(const struct sl__ooc_runs *m)
{
    return m->n_cols == 2 && m->width[m->key_col] == 4 && m->width[1 - m->key_col] == 4;
}

static int64_t align64(int64_t x)
{
    return (x + 63) & ~(int64_t)63;
}

int64_t sl__ooc_sort_scratch_bytes(const struct sl__ooc_runs *m, int64_t rows)
{
    int64_t isz = m->width[m->key_col] == 4 ? 8 : 16, bytes = 2 * align64(rows * isz);
    for (int c = 0; c < m->n_cols && !carries_payload(m); c++)
        if (c != m->key_col)
            bytes += align64(rows * m->width[c]);
    return bytes + 64;
}

/* The key value of a code (the inverse of code_at). */
static inline uint64_t key_of_code(uint64_t code, int kw, int desc)
{
    if (kw == 4)
        return (uint32_t)((desc ? ~code : code) ^ 0x80000000u);
    return (desc ? ~code : code) ^ 0x8000000000000000ull;
}

/* Items of one run slice: code - base (the range's smallest code) and the payload or
 * the item's position. Narrow items (uint64_t): relative code << 32 | low word; wide
 * ones (sl__kv64): relative code, position. */
static inline __attribute__((always_inline)) void fill_items(const void *key, const uint32_t *pay,
                                                             int64_t f, int64_t len, int64_t at,
                                                             uint64_t base, void *a,
                                                             const int kw, const int desc,
                                                             const int narrow)
{
    for (int64_t i = 0; i < len; i++) {
        uint64_t code = leaf_code(key, f + i, kw, desc) - base;
        if (narrow)
            ((uint64_t *)a)[at + i] = code << 32 | (pay ? pay[f + i] : (uint64_t)(at + i));
        else
            ((struct sl__kv64 *)a)[at + i] = (struct sl__kv64){code, (uint64_t)(at + i)};
    }
}

static void fill_slice(const void *key, const uint32_t *pay, int64_t f, int64_t len, int64_t at,
                       uint64_t base, void *a, int kw, int desc, int narrow)
{
    if (kw == 4)
        desc ? fill_items(key, pay, f, len, at, base, a, 4, 1, 1)
             : fill_items(key, pay, f, len, at, base, a, 4, 0, 1);
    else if (narrow)
        desc ? fill_items(key, pay, f, len, at, base, a, 8, 1, 1)
             : fill_items(key, pay, f, len, at, base, a, 8, 0, 1);
    else
        desc ? fill_items(key, pay, f, len, at, base, a, 8, 1, 0)
             : fill_items(key, pay, f, len, at, base, a, 8, 0, 0);
}

/* Output columns: written once and not read again soon (2 GiB of sorted rows), so with
 * nt the stores bypass the cache (no read of each line before it is written: a third
 * less memory traffic). The values are put in 16-byte groups, the unaligned ends with
 * plain stores. PUT(T, o, n, nt, EXPR): o[i] = EXPR for i in [0, n). */
#if defined(__SSE2__)
#include <emmintrin.h>
#define PUT(T, o, n, nt, EXPR)                                                            \
    do {                                                                                  \
        T *o_ = (o);                                                                      \
        int64_t n_ = (n), i = 0;                                                          \
        if (nt) {                                                                         \
            for (; i < n_ && ((uintptr_t)(o_ + i) & 15); i++)                             \
                o_[i] = (EXPR);                                                           \
            for (; i + (int64_t)(16 / sizeof(T)) <= n_;) {                                \
                T v_[16 / sizeof(T)];                                                     \
                for (int q_ = 0; q_ < (int)(16 / sizeof(T)); q_++, i++)                   \
                    v_[q_] = (EXPR);                                                      \
                __m128i x_;                                                               \
                memcpy(&x_, v_, 16);                                                      \
                _mm_stream_si128((__m128i *)(o_ + i - 16 / sizeof(T)), x_);               \
            }                                                                             \
        }                                                                                 \
        for (; i < n_; i++)                                                               \
            o_[i] = (EXPR);                                                               \
    } while (0)
static inline void stream_fence(int nt)
{
    if (nt)
        _mm_sfence();
}
#else
#define PUT(T, o, n, nt, EXPR)                                                            \
    do {                                                                                  \
        T *o_ = (o);                                                                      \
        for (int64_t i = 0; i < (n); i++)                                                 \
            o_[i] = (EXPR);                                                               \
    } while (0)
static inline void stream_fence(int nt)
{
    (void)nt;
}
#endif

/* Stable LSD radix sort of one range's items, held in L2 (a range is a few 2^15 rows):
 * digits just wide enough for the band (bits of the largest relative code, split into
 * equal digits of at most 11 bits: a 2^19 band is two passes of 10 bits), one histogram
 * of every digit, then plain scatters (a write-combining scatter as radix_sort.c's pays
 * more for its partial lines than it saves when the target fits in cache). */
#define DEFINE_RANGE_SORT(NAME, T, KEYOF)                                                 \
    static T *NAME(T *a, T *tmp, int64_t n, int bits)                                     \
    {                                                                                     \
        int passes = (bits + 10) / 11;                                                    \
        if (passes == 0)                                                                  \
            return a;                                                                     \
        int w = (bits + passes - 1) / passes;                                             \
        uint64_t mask = ((uint64_t)1 << w) - 1;                                           \
        int64_t cnt[6][2048];                                                             \
        memset(cnt, 0, sizeof cnt[0] * (size_t)passes);                                   \
        for (int64_t i = 0; i < n; i++) {                                                 \
            uint64_t x = KEYOF(a[i]);                                                     \
            for (int d = 0; d < passes; d++)                                              \
                cnt[d][(x >> (w * d)) & mask]++;                                          \
        }                                                                                 \
        T *src = a, *dst = tmp;                                                           \
        for (int d = 0; d < passes; d++) {                                                \
            int64_t *c = cnt[d], sum = 0;                                                 \
            int trivial = 0;                                                              \
            for (uint64_t b = 0; b <= mask; b++) {                                        \
                int64_t h = c[b];                                                         \
                trivial |= h == n;                                                        \
                c[b] = sum;                                                               \
                sum += h;                                                                 \
            }                                                                             \
            if (trivial)                                                                  \
                continue;                                                                 \
            int sh = w * d;                                                               \
            for (int64_t i = 0; i < n; i++) {                                             \
                T x = src[i];                                                             \
                dst[c[(KEYOF(x) >> sh) & mask]++] = x;                                    \
            }                                                                             \
            T *t_ = src;                                                                  \
            src = dst;                                                                    \
            dst = t_;                                                                     \
        }                                                                                 \
        return src;                                                                       \
    }

#define NARROW_KEY(x) ((x) >> 32)
#define WIDE_KEY(x) ((x).key)
DEFINE_RANGE_SORT(sort_narrow, uint64_t, NARROW_KEY)
DEFINE_RANGE_SORT(sort_wide, struct sl__kv64, WIDE_KEY)

static int bits_of(uint64_t x)
{
    return x ? 64 - __builtin_clzll(x) : 0;
}

static void merge_sorted(const struct sl__ooc_runs *m, const int64_t *from, const int64_t *to,
                         void *const *out, void *scratch, const int nt)
{
    const int kc = m->key_col, kw = m->width[kc], carry = carries_payload(m);
    int64_t n = 0;
    /* The range's key band: every slice is sorted, so its ends bound it. Codes relative
     * to its bottom have zero high digits, which the radix sort skips (a range of 2^16
     * of 2^28 random keys spans 2^20 codes: two 11-bit passes instead of three), and an
     * 8-byte key whose band spans less than 2^32 sorts as 8-byte items, not 16. */
    uint64_t base = UINT64_MAX, top = 0;
    for (int64_t j = 0; j < m->n_runs; j++) {
        if (to[j] <= from[j])
            continue;
        n += to[j] - from[j];
        uint64_t lo = code_at(m, j, from[j]), hi = code_at(m, j, to[j] - 1);
        base = lo < base ? lo : base;
        top = hi > top ? hi : top;
    }
    if (n == 0)
        return;
    const int narrow = kw == 4 || (top - base <= 0xffffffffull && n <= 0xffffffffll);
    char *p = (char *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    int64_t isz = narrow ? 8 : 16;
    void *a = p, *tmp = p + align64(n * isz);
    p += 2 * align64(n * isz);
    char *cc[SL__OOC_MAX_COLS] = {0}; /* the other columns, concatenated in run order */
    for (int c = 0; c < m->n_cols && !carry; c++)
        if (c != kc) {
            cc[c] = p;
            p += align64(n * m->width[c]);
        }
    int64_t at = 0;
    for (int64_t j = 0; j < m->n_runs; j++) {
        int64_t f = from[j], len = to[j] - from[j];
        if (len <= 0)
            continue;
        if (m->narrow) { /* the same rows from 6 bytes each and the run's table */
            const uint32_t *table = narrow_table(m, j);
            const uint16_t *row = narrow_rows(m, j) + 3 * f;
            int64_t t = (int64_t)narrow_top(table, f);
            for (int64_t i = 0; i < len; i++) {
                while (t + 1 < SL__OOC_NARROW_TOP && (int64_t)table[t + 1] <= f + i)
                    t++;
                ((uint64_t *)a)[at + i] = narrow_packed(row + 3 * i, (uint64_t)t) - (base << 32);
            }
            at += len;
            continue;
        }
        if (m->packed) { /* (code, payload) rows already: only the base comes off */
            const uint64_t *row = (const uint64_t *)m->cols[j * m->n_cols + kc] + f;
            for (int64_t i = 0; i < len; i++)
                ((uint64_t *)a)[at + i] = row[i] - (base << 32);
            at += len;
            continue;
        }
        const uint32_t *pay = carry ? m->cols[j * m->n_cols + 1 - kc] : NULL;
        fill_slice(m->cols[j * m->n_cols + kc], pay, f, len, at, base, a, kw, m->desc, narrow);
        for (int c = 0; c < m->n_cols && !carry; c++)
            if (c != kc)
                memcpy(cc[c] + at * m->width[c],
                       (const char *)m->cols[j * m->n_cols + c] + f * m->width[c],
                       (size_t)(len * m->width[c]));
        at += len;
    }
    if (narrow) {
        const uint64_t *it = sort_narrow(a, tmp, n, bits_of(top - base));
        if (kw == 4) {
            uint32_t *ko = out[kc];
            PUT(uint32_t, ko, n, nt, (uint32_t)key_of_code((it[i] >> 32) + base, 4, m->desc));
        } else {
            uint64_t *ko = out[kc];
            PUT(uint64_t, ko, n, nt, key_of_code((it[i] >> 32) + base, 8, m->desc));
        }
        if (carry) {
            uint32_t *po = out[1 - kc];
            PUT(uint32_t, po, n, nt, (uint32_t)it[i]);
            stream_fence(nt);
            return;
        }
        for (int c = 0; c < m->n_cols; c++) {
            if (c == kc)
                continue;
            if (m->width[c] == 4)
                PUT(uint32_t, (uint32_t *)out[c], n, nt,
                    ((const uint32_t *)cc[c])[(uint32_t)it[i]]);
            else
                PUT(uint64_t, (uint64_t *)out[c], n, nt,
                    ((const uint64_t *)cc[c])[(uint32_t)it[i]]);
        }
        stream_fence(nt);
        return;
    }
    const struct sl__kv64 *it = sort_wide(a, tmp, n, bits_of(top - base));
    uint64_t *ko = out[kc];
    PUT(uint64_t, ko, n, nt, key_of_code(it[i].key + base, 8, m->desc));
    for (int c = 0; c < m->n_cols; c++) {
        if (c == kc)
            continue;
        if (m->width[c] == 4)
            PUT(uint32_t, (uint32_t *)out[c], n, nt, ((const uint32_t *)cc[c])[it[i].idx]);
        else
            PUT(uint64_t, (uint64_t *)out[c], n, nt, ((const uint64_t *)cc[c])[it[i].idx]);
    }
    stream_fence(nt);
}

void sl__ooc_merge_by_sort(const struct sl__ooc_runs *m, const int64_t *from, const int64_t *to,
                           void *const *out, void *scratch)
{
    merge_sorted(m, from, to, out, scratch, 0);
}

/* ---------------- output ranges cut at sampled keys ---------------- */


static int64_t sample_count(const struct sl__ooc_runs *m, int64_t P, int64_t over, int64_t total,
                            int64_t j)
{
    if (m->rows[j] == 0 || total == 0)
        return 0;
    int64_t s = (int64_t)((double)over * (double)P * (double)m->rows[j] / (double)total);
    s = s < 1 ? 1 : s;
    return s > m->rows[j] ? m->rows[j] : s;
}

int64_t sl__ooc_splitter_scratch_bytes(const struct sl__ooc_runs *m, int64_t P, int64_t over)
{
    int64_t total = sl__ooc_total(m), s = 0;
    for (int64_t j = 0; j < m->n_runs; j++)
        s += sample_count(m, P, over, total, j);
    return 2 * align64((s + 1) * (int64_t)sizeof(struct sl__kv64)) + 64;
}

struct samples {
    const struct sl__ooc_runs *m;
    int64_t P, over, total;
    struct sl__kv64 *a;
};

/* Regular samples of runs [j0, j1): the middles of s_j slices of run j, at the place the
 * runs before it leave. */
static void sample_runs(void *p, int64_t j0, int64_t j1)
{
    const struct samples *sa = p;
    const struct sl__ooc_runs *m = sa->m;
    int64_t at = 0;
    for (int64_t j = 0; j < j0; j++)
        at += sample_count(m, sa->P, sa->over, sa->total, j);
    for (int64_t j = j0; j < j1; j++) {
        int64_t sj = sample_count(m, sa->P, sa->over, sa->total, j);
        for (int64_t i = 0; i < sj; i++)
            sa->a[at++] = (struct sl__kv64){code_at(m, j, (2 * i + 1) * m->rows[j] / (2 * sj)), 0};
    }
}

/* The sample items and their radix sort's other buffer in scratch (s items). */
static struct sl__kv64 *sample_items(void *scratch, int64_t s, struct sl__kv64 **tmp)
{
    struct sl__kv64 *a = (void *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    *tmp = (void *)((char *)a + align64((s + 1) * (int64_t)sizeof *a));
    return a;
}

/* Splitter i - 1 is the sample of rank i s / P, for i in [1, P); graded (P >= 2): also
 * those of ranks s / 4P and s / 2P before the first, and (4P - 2) s / 4P and
 * (4P - 1) s / 4P after the last (P + 3 in all). */
static void pick_splitters(struct sl__kv64 *a, struct sl__kv64 *tmp, int64_t s, int64_t P,
                           int graded, uint64_t *codes)
{
    const struct sl__kv64 *sorted = s ? sl__rsort_k64(a, tmp, s) : a;
    int64_t k = 0;
    for (int64_t i = 1; i < P; i++) {
        if (graded && i == 1)
            for (int64_t q = 1; q <= 2; q++)
                codes[k++] = s ? sorted[q * s / (4 * P)].key : 0;
        codes[k++] = s ? sorted[i * s / P].key : 0;
        if (graded && i == P - 1)
            for (int64_t q = 2; q <= 3; q++)
                codes[k++] = s ? sorted[(4 * (P - 1) + q) * s / (4 * P)].key : 0;
    }
}

void sl__ooc_splitters(const struct sl__ooc_runs *m, int64_t P, int64_t over, uint64_t *codes,
                       void *scratch, int threads)
{
    int64_t total = sl__ooc_total(m), s = 0;
    for (int64_t j = 0; j < m->n_runs; j++)
        s += sample_count(m, P, over, total, j);
    struct sl__kv64 *tmp, *a = sample_items(scratch, s, &tmp);
    struct samples sa = {m, P, over, total, a};
    /* a thread per some 4,000 reads (each a cache miss, often a TLB miss: pinned runs) */
    int64_t most = s / 4096 + 1;
    over_runs(m->n_runs, most < threads ? (int)most : threads, sample_runs, &sa);
    pick_splitters(a, tmp, s, P, 0, codes);
}

/* ---------------- splitters from the unsorted input ---------------- */

int64_t sl__ooc_input_sample_count(int64_t n, int64_t P, int64_t over)
{
    return over * P < n ? over * P : n;
}

int64_t sl__ooc_input_scratch_bytes(int64_t n, int64_t P, int64_t over)
{
    return 2 * align64((sl__ooc_input_sample_count(n, P, over) + 1) * (int64_t)sizeof(struct sl__kv64)) + 64;
}

struct in_samples {
    const void *const *keys;
    const int64_t *rows, *first;
    int64_t n_parts, n, s;
    int kw, desc;
    struct sl__kv64 *a;
};

/* Row of sample i: one in each of s equal strata of the n rows, at an offset within it
 * from a hash of i (a stratified sample: as good as a random one on shuffled keys, exact
 * quantiles on sorted ones, and the same rows every time). */
int64_t sl__ooc_input_sample_row(int64_t i, int64_t n, int64_t s)
{
    uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    double u = (double)(h >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
    int64_t r = (int64_t)(((double)i + u) * (double)n / (double)s);
    return r < n ? r : n - 1;
}

static void sample_input(void *p, int part, int parts)
{
    const struct in_samples *sa = p;
    int64_t i0 = sa->s * part / parts, i1 = sa->s * (part + 1) / parts;
    int64_t q = 0, base = 0; /* part q holds rows [base, base + rows[q]) */
    for (int64_t i = i0; i < i1; i++) {
        int64_t r = sl__ooc_input_sample_row(i, sa->n, sa->s);
        while (r >= base + sa->rows[q])
            base += sa->rows[q++];
        int64_t at = sa->first && sa->first[q] >= 0 ? i - sa->first[q] : r - base;
        sa->a[i] = (struct sl__kv64){leaf_code(sa->keys[q], at, sa->kw, sa->desc), 0};
    }
}

void sl__ooc_input_splitters(const void *const *keys, const int64_t *rows, int64_t n_parts,
                             const int64_t *first, int key_bytes, int desc, int64_t P,
                             int graded, int64_t over, uint64_t *codes, void *scratch,
                             int threads)
{
    int64_t n = 0;
    for (int64_t q = 0; q < n_parts; q++)
        n += rows[q];
    int64_t s = sl__ooc_input_sample_count(n, P, over);
    struct sl__kv64 *tmp, *a = sample_items(scratch, s, &tmp);
    struct in_samples sa = {keys, rows, first, n_parts, n, s, key_bytes, desc, a};
    int64_t most = s / 4096 + 1; /* as sl__ooc_splitters: a thread per some 4,000 reads */
    if (s > 0)
        sl__par_for(most < threads ? (int)most : threads, sample_input, &sa);
    pick_splitters(a, tmp, s, P, graded && P >= 2, codes);
}

/* Puts rows lo[j]..hi[j] of every run (one fine range) at output row `off`, in pieces of
 * at most sub_rows rows. */
static void merge_one(const struct sl__ooc_runs *m, int64_t *lo, const int64_t *hi,
                      int64_t *mid, int64_t sub_rows, void *const *out, void *scratch)
{
    int64_t k = m->n_runs, off = 0, rows = 0;
    for (int64_t j = 0; j < k; j++) {
        off += lo[j];
        rows += hi[j] - lo[j];
    }
    /* A range too large for the scratch (many rows of few keys) goes in pieces cut at
     * exact ranks; co-ranks at the range's ends are its own splits. */
    int64_t pieces = (rows + sub_rows - 1) / sub_rows;
    for (int64_t q = 0; q < pieces; q++) {
        int64_t r0 = off + rows * q / pieces;
        if (q + 1 < pieces)
            sl__ooc_corank(m, off + rows * (q + 1) / pieces, mid);
        else
            memcpy(mid, hi, (size_t)k * sizeof *mid);
        void *o[SL__OOC_MAX_COLS];
        for (int c = 0; c < m->n_cols; c++)
            o[c] = (char *)out[c] + r0 * m->width[c];
        merge_sorted(m, lo, mid, o, scratch, 1);
        memcpy(lo, mid, (size_t)k * sizeof *lo);
    }
}

void sl__ooc_merge_ranges(const struct sl__ooc_runs *m, const uint64_t *codes, int64_t P,
                          int64_t first, int64_t last, int64_t sub_rows, void *const *out,
                          int64_t *split, void *scratch)
{
    int64_t k = m->n_runs, *lo = split, *hi = split + k, *mid = split + 2 * k, *end = split + 3 * k;
    if (first >= last)
        return;
    /* The group's ends by binary searches over whole runs; the boundaries inside it
     * only between those (rows the group reads next anyway). */
    for (int64_t j = 0; j < k; j++) {
        lo[j] = first == 0 ? 0 : bound(m, j, codes[first - 1], 0);
        end[j] = last == P ? m->rows[j] : bound(m, j, codes[last - 1], 0);
    }
    for (int64_t i = first; i < last; i++) {
        for (int64_t j = 0; j < k; j++)
            hi[j] = i + 1 == last ? end[j] : bound_in(m, j, codes[i], lo[j], end[j]);
        merge_one(m, lo, hi, mid, sub_rows, out, scratch); /* leaves lo = hi */
    }
}

int64_t sl__ooc_range_codes(const uint64_t *codes, int64_t n, int key_bytes, uint64_t *out)
{
    const uint64_t zero = key_bytes == 4 ? (uint64_t)1 << 31 : (uint64_t)1 << 63;
    uint64_t prev = 0;
    int64_t k = 0;
    for (int64_t i = 0; i <= n; i++) {
        uint64_t c = i < n ? codes[i] : UINT64_MAX;
        if (prev < zero && zero <= c)
            out[k++] = prev = zero;
        if (i < n && c > prev)
            out[k++] = prev = c;
    }
    return k;
}

int64_t sl__ooc_narrow_codes(const uint64_t *codes, int64_t n, int64_t window, uint64_t *out)
{
    const uint64_t W = (uint64_t)window;
    uint64_t a = 0; /* the range's lowest code */
    int64_t k = 0;
    for (int64_t i = 0; i <= n; i++) {
        const uint64_t b = i < n ? codes[i] : (uint64_t)1 << 32; /* its end */
        /* tops [a >> 16, (b - 1) >> 16]: the next multiple of W lies inside when wider */
        while (((b - 1) >> 16) - (a >> 16) + 1 > W) {
            a = ((a >> 16) / W + 1) * W << 16;
            out[k++] = a;
        }
        if (i < n)
            out[k++] = a = b;
    }
    return k;
}

int64_t sl__ooc_smj_narrow_bytes(int64_t runs, int64_t ranges, int64_t window)
{
    if (runs <= 0)
        return 0;
    return 2 * runs * window * 4 + (2 * ranges + 1) * runs * (int64_t)sizeof(int64_t);
}

int sl__ooc_smj_narrow_pays(int64_t run_rows, int64_t runs, int64_t ranges, int64_t window,
                            int64_t budget)
{
    return runs >= 2 && run_rows >= SL__OOC_SMJ_NARROW_RUN &&
           16 * sl__ooc_smj_narrow_bytes(runs, ranges, window) <= budget;
}

int sl__ooc_pass1_pick(int64_t n, int64_t min_run, int64_t max_run, int64_t pipe_runs,
                       int max_sets, int64_t budget,
                       int64_t (*bytes)(void *arg, int64_t sets, int64_t rows), void *arg,
                       int64_t *R, int *sets)
{
    /* Several runs: at least pipe_runs of them (runs of at most `cap` rows). The first
     * upload and the last download of each pass overlap nothing, so fewer, larger runs
     * are slower: on an H100 2^28 pairs took 100.9 ms in 16 runs (1 GiB budget) and
     * 99.5 ms in 32 (512 MiB). No rows (runs of 0 rows divide by 0), or a min_run or
     * pipe_runs below 1 (the cap would never reach n): nothing to pick. */
    if (n < 1 || min_run < 1 || pipe_runs < 1)
        return 0;
    int64_t cap = min_run;
    while (cap * pipe_runs < n)
        cap *= 2;
    int64_t r = max_run;
    while (r / 2 >= n && r > min_run)
        r /= 2;
    for (; r >= 1 && (r >= min_run || r >= n); r /= 2) {
        const int64_t rr = r < n ? r : n, runs = (n + rr - 1) / rr;
        /* past the cap only when halving would go below min_run (r need not be a power of
         * two once all rows did not fit one run) */
        if (runs == 1 || rr <= cap || rr / 2 < min_run) {
            int most = runs == 1 ? 1 : max_sets > 2 && runs >= 3 ? max_sets : 2;
            for (int k = most; k >= (runs == 1 ? 1 : 2); k--) {
                int64_t b = bytes(arg, k, rr);
                if (b < 0)
                    return -1;
                if (b <= budget) {
                    *R = rr;
                    *sets = k;
                    return 1;
                }
            }
        }
        if (rr < r) /* all rows in one run did not fit: try runs of r / 2 */
            r = rr;
    }
    return 0;
}
