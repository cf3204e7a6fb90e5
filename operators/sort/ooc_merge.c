/* Multiway merge of sorted host runs for the out-of-core sort (ooc_merge.h). */
#include <string.h>

#include "ooc_merge.h"

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

/* The loser tree's state, per leaf: next row, end, head code, rank and key column. A
 * game is won by the smaller (head, rank); rank is the run index, or K + run index once
 * the run is exhausted (its head then UINT64_MAX), so an exhausted run loses to every
 * other one even against a real code of UINT64_MAX, and ties go to the lower run
 * (stability). The comparisons compile to conditional moves: a game's outcome on
 * random keys cannot be predicted, so branches would cost a misprediction per level. */
struct lt {
    int64_t *cur, *end, *rank;
    uint64_t *head;
    int64_t *tree; /* inner node n keeps the loser of its game */
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

static inline int before(const struct lt *s, int64_t a, int64_t b)
{
    uint64_t ha = s->head[a], hb = s->head[b];
    return (ha < hb) | ((ha == hb) & (s->rank[a] < s->rank[b]));
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

/* The merge loop for one key width and direction (constants after inlining). */
static inline __attribute__((always_inline)) void merge_loop(const struct sl__ooc_runs *m,
                                                             struct lt *s, int64_t K, int64_t w,
                                                             int64_t total, void *const *out,
                                                             const int kw, const int desc)
{
    uint32_t src_run[BLK];
    int64_t src_row[BLK];
    /* Restrict-qualified locals: the arrays share one scratch block but never overlap,
     * and the compiler must not reload them after every store. */
    int64_t *restrict cur = s->cur, *restrict rank = s->rank, *restrict tree = s->tree;
    const int64_t *restrict end = s->end;
    uint64_t *restrict head = s->head;
    const void *const *restrict keys = s->keys;
    for (int64_t o = 0; o < total;) {
        int nb = total - o < BLK ? (int)(total - o) : BLK;
        for (int i = 0; i < nb; i++) {
            int64_t r = cur[w];
            src_run[i] = (uint32_t)w;
            src_row[i] = r++;
            cur[w] = r;
            if (r < end[w]) {
                head[w] = leaf_code(keys[w], r, kw, desc);
            } else {
                head[w] = UINT64_MAX;
                rank[w] = K + w;
            }
            /* Replay w's path to the root: the loser of each game stays there. */
            uint64_t hw = head[w];
            int64_t rw = rank[w];
            for (int64_t n = (K + w) >> 1; n >= 1; n >>= 1) {
                int64_t x = tree[n];
                uint64_t hx = head[x];
                int64_t rx = rank[x];
                int sw = (hx < hw) | ((hx == hw) & (rx < rw));
                tree[n] = sw ? w : x;
                w = sw ? x : w;
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
    int64_t *w64 = (int64_t *)scratch;
    struct lt s = {w64, w64 + K, w64 + 2 * K, scratch + 3 * K, w64 + 4 * K,
                   (const void **)(scratch + 5 * K)};
    int64_t *win = w64 + 6 * K; /* 2K: winners while building */
    int kw = m->width[m->key_col];
    for (int64_t j = 0; j < K; j++) {
        s.cur[j] = j < m->n_runs ? from[j] : 0;
        s.end[j] = j < m->n_runs ? to[j] : 0;
        s.keys[j] = j < m->n_runs ? m->cols[j * m->n_cols + m->key_col] : NULL;
        int live = s.cur[j] < s.end[j];
        s.head[j] = live ? code_at(m, j, s.cur[j]) : UINT64_MAX;
        s.rank[j] = live ? j : K + j;
        win[K + j] = j;
    }
    for (int64_t n = K - 1; n >= 1; n--) {
        int64_t a = win[2 * n], b = win[2 * n + 1];
        int ab = before(&s, a, b);
        win[n] = ab ? a : b;
        s.tree[n] = ab ? b : a;
    }
    int64_t w = win[1];
    if (kw == 4)
        m->desc ? merge_loop(m, &s, K, w, total, out, 4, 1)
                : merge_loop(m, &s, K, w, total, out, 4, 0);
    else
        m->desc ? merge_loop(m, &s, K, w, total, out, 8, 1)
                : merge_loop(m, &s, K, w, total, out, 8, 0);
}
