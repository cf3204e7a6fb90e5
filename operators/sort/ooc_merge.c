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
    return 6 * leaves(m) + 8;
}

/* The loser tree's state: per leaf its next row, end and head code; an exhausted leaf
 * loses to every other one, ties go to the lower leaf (run order: stability). */
struct lt {
    int64_t *cur, *end;
    uint64_t *head;
    int64_t *tree; /* inner node n keeps the loser of its game */
};

static inline int before(const struct lt *s, int64_t a, int64_t b)
{
    int ea = s->cur[a] >= s->end[a], eb = s->cur[b] >= s->end[b];
    if (ea || eb)
        return ea == eb ? a < b : eb;
    return s->head[a] != s->head[b] ? s->head[a] < s->head[b] : a < b;
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
    struct lt s = {(int64_t *)scratch, (int64_t *)scratch + K, scratch + 2 * K,
                   (int64_t *)scratch + 3 * K};
    int64_t *win = (int64_t *)scratch + 4 * K; /* 2K: winners while building */
    for (int64_t j = 0; j < K; j++) {
        s.cur[j] = j < m->n_runs ? from[j] : 0;
        s.end[j] = j < m->n_runs ? to[j] : 0;
        s.head[j] = s.cur[j] < s.end[j] ? code_at(m, j, s.cur[j]) : 0;
        win[K + j] = j;
    }
    for (int64_t n = K - 1; n >= 1; n--) {
        int64_t a = win[2 * n], b = win[2 * n + 1];
        int ab = before(&s, a, b);
        win[n] = ab ? a : b;
        s.tree[n] = ab ? b : a;
    }
    int64_t w = win[1];
    uint32_t src_run[BLK];
    int64_t src_row[BLK];
    for (int64_t o = 0; o < total;) {
        int nb = total - o < BLK ? (int)(total - o) : BLK;
        for (int i = 0; i < nb; i++) {
            src_run[i] = (uint32_t)w;
            src_row[i] = s.cur[w]++;
            if (s.cur[w] < s.end[w])
                s.head[w] = code_at(m, w, s.cur[w]);
            /* Replay w's path to the root: the loser of each game stays there. */
            for (int64_t n = (K + w) / 2; n >= 1; n /= 2) {
                if (before(&s, s.tree[n], w)) {
                    int64_t x = s.tree[n];
                    s.tree[n] = w;
                    w = x;
                }
            }
        }
        for (int c = 0; c < m->n_cols; c++)
            copy_block(m, c, src_run, src_row, nb, (char *)out[c] + o * m->width[c]);
        o += nb;
    }
}
