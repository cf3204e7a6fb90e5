/* Multiway merge of sorted host runs for the out-of-core sort (ooc_merge.h). */
#include <string.h>

#include "ooc_merge.h"
#include "sort_int.h"

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

/* The key of row i of run j as an unsigned code whose order is the output order. */
static inline uint64_t code_at(const struct sl__ooc_runs *m, int64_t j, int64_t i)
{
    const void *k = m->cols[j * m->n_cols + m->key_col];
    if (m->width[m->key_col] == 4) {
        uint32_t c = (uint32_t)((const int32_t *)k)[i] ^ 0x80000000u;
        return m->desc ? (uint32_t)~c : c;
    }
    uint64_t c = (uint64_t)((const int64_t *)k)[i] ^ 0x8000000000000000ull;
    return m->desc ? ~c : c;
}

/* First row of run j whose code is >= v (strict = 0) or > v (strict = 1). */
static int64_t bound(const struct sl__ooc_runs *m, int64_t j, uint64_t v, int strict)
{
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

void sl__ooc_split_below(const struct sl__ooc_runs *m, uint64_t v, int64_t *split)
{
    for (int64_t j = 0; j < m->n_runs; j++)
        split[j] = bound(m, j, v, 0);
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

void sl__ooc_merge_by_sort(const struct sl__ooc_runs *m, const int64_t *from, const int64_t *to,
                           void *const *out, void *scratch)
{
    const int kc = m->key_col, kw = m->width[kc], carry = carries_payload(m);
    int64_t n = 0;
    for (int64_t j = 0; j < m->n_runs; j++)
        n += to[j] - from[j];
    if (n == 0)
        return;
    char *p = (char *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    int64_t isz = kw == 4 ? 8 : 16;
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
        const void *pay = carry ? m->cols[j * m->n_cols + 1 - kc] : NULL;
        for (int64_t i = 0; i < len; i++) {
            uint64_t code = code_at(m, j, f + i);
            if (kw == 4)
                ((uint64_t *)a)[at + i] =
                    code << 32 | (carry ? ((const uint32_t *)pay)[f + i] : (uint64_t)(at + i));
            else
                ((struct sl__kv64 *)a)[at + i] = (struct sl__kv64){code, (uint64_t)(at + i)};
        }
        for (int c = 0; c < m->n_cols && !carry; c++)
            if (c != kc)
                memcpy(cc[c] + at * m->width[c],
                       (const char *)m->cols[j * m->n_cols + c] + f * m->width[c],
                       (size_t)(len * m->width[c]));
        at += len;
    }
    if (kw == 4) {
        const uint64_t *it = sl__rsort_k32(a, tmp, n);
        uint32_t *ko = out[kc];
        for (int64_t i = 0; i < n; i++)
            ko[i] = (uint32_t)key_of_code(it[i] >> 32, 4, m->desc);
        if (carry) {
            uint32_t *po = out[1 - kc];
            for (int64_t i = 0; i < n; i++)
                po[i] = (uint32_t)it[i];
            return;
        }
        for (int c = 0; c < m->n_cols; c++) {
            if (c == kc)
                continue;
            if (m->width[c] == 4)
                for (int64_t i = 0; i < n; i++)
                    ((uint32_t *)out[c])[i] = ((const uint32_t *)cc[c])[(uint32_t)it[i]];
            else
                for (int64_t i = 0; i < n; i++)
                    ((uint64_t *)out[c])[i] = ((const uint64_t *)cc[c])[(uint32_t)it[i]];
        }
        return;
    }
    const struct sl__kv64 *it = sl__rsort_k64(a, tmp, n);
    uint64_t *ko = out[kc];
    for (int64_t i = 0; i < n; i++)
        ko[i] = key_of_code(it[i].key, 8, m->desc);
    for (int c = 0; c < m->n_cols; c++) {
        if (c == kc)
            continue;
        if (m->width[c] == 4)
            for (int64_t i = 0; i < n; i++)
                ((uint32_t *)out[c])[i] = ((const uint32_t *)cc[c])[it[i].idx];
        else
            for (int64_t i = 0; i < n; i++)
                ((uint64_t *)out[c])[i] = ((const uint64_t *)cc[c])[it[i].idx];
    }
}
