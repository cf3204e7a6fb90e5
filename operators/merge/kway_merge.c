/* Multiway merge kernels: co-ranks by binary search over key values, and a loser-tree
 * merge. */
#include "merge_int.h"

/* First index in keys[lo, hi) whose key is >= v (strict = 0) or > v (strict = 1). */
static int64_t bound(const uint64_t *keys, int64_t lo, int64_t hi, uint64_t v, int strict)
{
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < v || (strict && keys[mid] == v))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The smallest key value v with (rows <= v) >= r splits the output: every row < v comes
 * before rank r, and the rows == v that do are taken in run order (stability). */
void sl__merge_corank(const struct sl__merge_run *runs, int k, int64_t r, int64_t *split)
{
    int64_t total = 0;
    for (int j = 0; j < k; j++)
        total += runs[j].hi - runs[j].lo;
    if (r <= 0 || r >= total) {
        for (int j = 0; j < k; j++)
            split[j] = r <= 0 ? 0 : runs[j].hi - runs[j].lo;
        return;
    }
    uint64_t lo = 0, hi = UINT64_MAX;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int64_t le = 0;
        for (int j = 0; j < k; j++)
            le += bound(runs[j].keys, runs[j].lo, runs[j].hi, mid, 1) - runs[j].lo;
        if (le >= r)
            hi = mid;
        else
            lo = mid + 1;
    }
    int64_t need = r;
    for (int j = 0; j < k; j++) {
        split[j] = bound(runs[j].keys, runs[j].lo, runs[j].hi, lo, 0) - runs[j].lo;
        need -= split[j];
    }
    for (int j = 0; j < k && need > 0; j++) {
        int64_t eq = bound(runs[j].keys, runs[j].lo, runs[j].hi, lo, 1) - runs[j].lo - split[j];
        int64_t take = eq < need ? eq : need;
        split[j] += take;
        need -= take;
    }
}

static void merge2(const struct sl__merge_run *a, const struct sl__merge_run *b, int64_t i,
                   int64_t ie, int64_t j, int64_t je, uint64_t *out)
{
    const uint64_t *ka = a->keys, *kb = b->keys;
    int64_t o = 0;
    while (i < ie && j < je) {
        /* Ties go to run a (the lower run). */
        if (kb[j] < ka[i]) {
            out[o++] = (uint64_t)(b->base + (j - b->lo));
            j++;
        } else {
            out[o++] = (uint64_t)(a->base + (i - a->lo));
            i++;
        }
    }
    for (; i < ie; i++)
        out[o++] = (uint64_t)(a->base + (i - a->lo));
    for (; j < je; j++)
        out[o++] = (uint64_t)(b->base + (j - b->lo));
}

struct lt {
    const struct sl__merge_run *runs;
    int64_t *cur, *end;
};

/* 1 if run a's head comes before run b's: exhausted runs come last, ties by run. */
static inline bool before(const struct lt *s, int a, int b)
{
    bool ea = s->cur[a] >= s->end[a], eb = s->cur[b] >= s->end[b];
    if (ea || eb)
        return ea == eb ? a < b : eb;
    uint64_t ka = s->runs[a].keys[s->cur[a]], kb = s->runs[b].keys[s->cur[b]];
    return ka != kb ? ka < kb : a < b;
}

void sl__merge_runs(const struct sl__merge_run *runs, int k, const int64_t *from,
                    const int64_t *to, uint64_t *out)
{
    if (k == 1) {
        for (int64_t i = from[0]; i < to[0]; i++)
            *out++ = (uint64_t)(runs[0].base + i);
        return;
    }
    if (k == 2) {
        merge2(&runs[0], &runs[1], runs[0].lo + from[0], runs[0].lo + to[0], runs[1].lo + from[1],
               runs[1].lo + to[1], out);
        return;
    }
    int K = 1;
    while (K < k)
        K *= 2;
    int64_t cur[K], end[K];
    int tree[K], win[2 * K];
    for (int j = 0; j < K; j++) {
        cur[j] = j < k ? runs[j].lo + from[j] : 0;
        end[j] = j < k ? runs[j].lo + to[j] : 0;
    }
    struct lt s = {runs, cur, end};
    /* Build: winners bottom-up, each inner node keeps the loser of its game. */
    for (int j = 0; j < K; j++)
        win[K + j] = j;
    for (int n = K - 1; n >= 1; n--) {
        int a = win[2 * n], b = win[2 * n + 1];
        bool ab = before(&s, a, b);
        win[n] = ab ? a : b;
        tree[n] = ab ? b : a;
    }
    int w = win[1];
    int64_t total = 0;
    for (int j = 0; j < k; j++)
        total += to[j] - from[j];
    for (int64_t o = 0; o < total; o++) {
        out[o] = (uint64_t)(runs[w].base + (cur[w] - runs[w].lo));
        cur[w]++;
        for (int n = (K + w) / 2; n >= 1; n /= 2) {
            if (before(&s, tree[n], w)) {
                int x = tree[n];
                tree[n] = w;
                w = x;
            }
        }
    }
}
