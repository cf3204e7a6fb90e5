/* Tests the CPU half of the out-of-core sort (operators/common/ooc_merge.c): k sorted runs
 * in host memory merged by output key ranges (co-ranks) must give exactly the stable
 * sort of the runs' concatenation. Reference: a stable qsort of (key, input position).
 * Cases: int32 and int64 keys, ascending and descending, 1 to 70 runs (not a power of
 * two), empty runs, one row, all keys equal, few distinct keys, one heavy key (skew),
 * extremes (INT_MIN/MAX), already sorted and reversed input, payload columns of 4 and 8
 * bytes, the output split into 1 to 13 ranges: by rank (co-ranks) or at sampled key
 * codes (sl__ooc_splitters, sl__ooc_merge_ranges in groups and in pieces of 1 to 700
 * rows, so heavy keys take the exact-rank pieces). Packed runs (an int32 key's code and a
 * 4-byte payload in one 8-byte row, issue 23) through every path but the loser tree. */
#include <string.h>

#include "sl_test.h"
#include "common/ooc_merge.h"

enum { K_RANDOM, K_FEW, K_EQUAL, K_HEAVY, K_EXTREME, K_SORTED, K_REVERSE };

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static int64_t key_of(int mode, int64_t i, int64_t n, int w)
{
    uint64_t x = rnd();
    switch (mode) {
    case K_FEW: return (int64_t)(x % 7) - 3;
    case K_EQUAL: return 42;
    case K_HEAVY: return x % 4 ? 5 : (w == 4 ? (int32_t)rnd() : (int64_t)rnd());
    case K_EXTREME: {
        int64_t ex[] = {w == 4 ? INT32_MIN : INT64_MIN, w == 4 ? INT32_MAX : INT64_MAX, 0, -1};
        return ex[x % 4];
    }
    case K_SORTED: return i / 3;
    case K_REVERSE: return n - i;
    default: return w == 4 ? (int32_t)x : (int64_t)x;
    }
}

struct item {
    int64_t key, pos;
    int desc;
};

static int cmp_item(const void *pa, const void *pb)
{
    const struct item *a = pa, *b = pb;
    if (a->key != b->key)
        return (a->key < b->key) != a->desc ? -1 : 1;
    return a->pos < b->pos ? -1 : 1;
}

static int64_t col_get(const void *col, int w, int64_t i)
{
    return w == 4 ? ((const int32_t *)col)[i] : ((const int64_t *)col)[i];
}

static void col_set(void *col, int w, int64_t i, int64_t v)
{
    if (w == 4)
        ((int32_t *)col)[i] = (int32_t)v;
    else
        ((int64_t *)col)[i] = v;
}

/* Run j's key and position columns as one packed column (ooc_merge.h): the key's code
 * in the high half, the position in the low half; the position's entry unused. */
static void pack_run(void **cols, int nc, int key_col, int desc, int64_t len)
{
    void **kp = &cols[key_col], **pp = &cols[1 - key_col];
    uint64_t *rows = malloc((size_t)(len + 1) * 8);
    for (int64_t i = 0; i < len; i++) {
        uint32_t c = (uint32_t)((const int32_t *)*kp)[i] ^ 0x80000000u;
        rows[i] = (uint64_t)(desc ? ~c : c) << 32 | ((const uint32_t *)*pp)[i];
    }
    (void)nc;
    free(*kp), free(*pp);
    *kp = rows;
    *pp = NULL;
}

/* Packed run j as a narrow run (ooc_merge.h): its table of the first row of each top-16
 * code value into `table`, then 6 bytes a row (the code's low 16 bits, the payload's low
 * and high 16). */
static void narrow_run(void **cols, int key_col, int64_t len, uint32_t *table)
{
    const uint64_t *rows = cols[key_col];
    uint16_t *out = malloc((size_t)len * 6 + 8);
    for (int64_t t = 0, i = 0; t < SL__OOC_NARROW_TOP; t++) {
        while (i < len && (rows[i] >> 48) < (uint64_t)t)
            i++;
        table[t] = (uint32_t)i;
    }
    for (int64_t i = 0; i < len; i++) {
        out[3 * i] = (uint16_t)(rows[i] >> 32);
        out[3 * i + 1] = (uint16_t)rows[i];
        out[3 * i + 2] = (uint16_t)(rows[i] >> 16);
    }
    free(cols[key_col]);
    cols[key_col] = out;
}

/* Columns: 0 the key (width kw), 1 the input position (4 B), 2 a value derived from
 * the position (8 B). The key need not be column 0: key_col picks it. packed: the runs
 * packed (narrow, kw 4); 2: packed and then narrow runs (6 bytes a row and a table). */
static void check1(int kw, int desc, int mode, const int64_t *lens, int k, int n_parts,
                   int key_col, int by_sort, int narrow, int packed)
{
    int64_t n = 0;
    for (int j = 0; j < k; j++)
        n += lens[j];
    int nc = narrow ? 2 : 3, width[3];
    int cols_of[3] = {key_col, key_col == 0 ? 1 : 0, key_col == 2 ? 1 : 2}; /* key, pos, derived */
    if (narrow) /* key and position only: the sort carries a 4-byte payload in its items */
        key_col = key_col % 2, cols_of[0] = key_col, cols_of[1] = 1 - key_col, cols_of[2] = -1;
    width[cols_of[0]] = kw, width[cols_of[1]] = 4;
    if (!narrow)
        width[cols_of[2]] = 8;
    struct item *all = malloc((size_t)(n + 1) * sizeof *all);
    int64_t *rows = malloc((size_t)k * sizeof *rows);
    void **cols = calloc((size_t)k * nc, sizeof *cols);
    uint32_t *tables = packed == 2 ? malloc((size_t)k * SL__OOC_NARROW_TABLE_BYTES) : NULL;
    int64_t at = 0;
    for (int j = 0; j < k; j++) {
        rows[j] = lens[j];
        struct item *run = all + at;
        for (int64_t i = 0; i < lens[j]; i++)
            run[i] = (struct item){key_of(mode, at + i, n, kw), at + i, desc};
        qsort(run, (size_t)lens[j], sizeof *run, cmp_item); /* each run sorted stably */
        for (int c = 0; c < nc; c++)
            cols[j * nc + c] = malloc((size_t)(lens[j] + 1) * (size_t)width[c]);
        for (int64_t i = 0; i < lens[j]; i++) {
            col_set(cols[j * nc + cols_of[0]], kw, i, run[i].key);
            col_set(cols[j * nc + cols_of[1]], 4, i, run[i].pos);
            if (!narrow)
                col_set(cols[j * nc + cols_of[2]], 8, i, run[i].pos * 1000003 - 7);
        }
        if (packed)
            pack_run(cols + j * nc, nc, key_col, desc, lens[j]);
        if (packed == 2)
            narrow_run(cols + j * nc, key_col, lens[j], tables + (size_t)j * SL__OOC_NARROW_TOP);
        at += lens[j];
    }
    qsort(all, (size_t)n, sizeof *all, cmp_item); /* the reference: stable over all */
    struct sl__ooc_runs m = {.n_cols = nc, .key_col = key_col, .desc = desc, .n_runs = k,
                             .rows = rows, .cols = cols, .packed = packed > 0,
                             .narrow = packed == 2, .narrow_tables = tables};
    memcpy(m.width, width, sizeof width);
    assert_int_equal(sl__ooc_total(&m), n);
    if (packed == 2) { /* each bucket's top-16 values (three buckets at ranks) by the tables */
        int64_t *cuts = calloc((size_t)(4 * k), sizeof *cuts), tops[6];
        for (int q = 1; q <= 3; q++)
            sl__ooc_corank(&m, n * q / 3, cuts + q * k);
        sl__ooc_narrow_tops(&m, cuts, 3, tops, 1 + (int)(rnd() % 4));
        for (int q = 0; q < 3; q++) {
            int64_t lo = SL__OOC_NARROW_TOP, hi = -1;
            for (int j = 0; j < k; j++)
                for (int64_t i = cuts[q * k + j]; i < cuts[(q + 1) * k + j]; i++) {
                    int64_t top = (int64_t)(sl__ooc_code(&m, j, i) >> 16);
                    lo = top < lo ? top : lo;
                    hi = top > hi ? top : hi;
                }
            assert_int_equal(tops[2 * q], lo);
            assert_int_equal(tops[2 * q + 1], hi);
        }
        free(cuts);
        /* The same windows from the values beside cuts at three splitter codes (as the
         * GPU writes them in pass 1: sl__ooc_split_tops), five buckets, one boundary cut
         * at exact ranks between the first two splits (searched in the tables). */
        uint64_t codes[3];
        for (int q = 0; q < 3; q++)
            codes[q] = n > 0 ? sl__ooc_code_at_rank(&m, n * (q + 1) / 4) : 0;
        int64_t *sp = malloc((size_t)(3 * k + 1) * sizeof *sp), *one = malloc((size_t)(3 + 1) * 8);
        int32_t *st = malloc((size_t)k * 2 * 5 * sizeof *st);
        sl__ooc_split_below_all(&m, codes, 3, sp, 1 + (int)(rnd() % 4));
        for (int j = 0; j < k; j++) {
            for (int c = 0; c < 3; c++)
                one[c] = sp[c * k + j];
            sl__ooc_split_tops(&m, j, one, 3, st + j * 10);
        }
        int64_t bx[6] = {0, 1, -1, 2, 3, 4}, rank[2] = {0, 0}, want[10], got[10];
        cuts = calloc((size_t)(6 * k), sizeof *cuts);
        for (int q = 0; q < 6; q++)
            for (int j = 0; j < k && bx[q] > 0; j++)
                cuts[q * k + j] = bx[q] == 4 ? rows[j] : sp[(bx[q] - 1) * k + j];
        for (int j = 0; j < k; j++)
            rank[0] += sp[j], rank[1] += sp[k + j];
        sl__ooc_corank(&m, (rank[0] + rank[1]) / 2, cuts + 2 * k);
        sl__ooc_bucket_tops(&m, st, 3, cuts, bx, 5, got);
        sl__ooc_narrow_tops(&m, cuts, 5, want, 1);
        for (int q = 0; q < 10; q++)
            assert_int_equal(got[q], want[q]);
        free(cuts), free(sp), free(one), free(st);
        /* Splits of narrow runs (read from the tables, not searched by code) against a
         * count of the rows below each code: the ends of the code range, codes at ranks
         * and beside them. */
        uint64_t probe[9] = {0, 1, 0xffffffffull, (uint64_t)1 << 32, 0x8000ffffull};
        for (int q = 5; q < 9; q++)
            probe[q] = n > 0 ? sl__ooc_code_at_rank(&m, n * (q - 4) / 5) + (uint64_t)(q & 1) : (uint64_t)q;
        int64_t *sb = malloc((size_t)(9 * k + 1) * sizeof *sb), *s1 = malloc((size_t)(k + 1) * 8);
        uint64_t sorted_probe[9];
        memcpy(sorted_probe, probe, sizeof probe);
        for (int a = 1; a < 9; a++) /* ascending, for sl__ooc_split_below_all */
            for (int b = a; b > 0 && sorted_probe[b - 1] > sorted_probe[b]; b--) {
                uint64_t x = sorted_probe[b];
                sorted_probe[b] = sorted_probe[b - 1];
                sorted_probe[b - 1] = x;
            }
        sl__ooc_split_below_all(&m, sorted_probe, 9, sb, 1 + (int)(rnd() % 4));
        for (int q = 0; q < 9; q++) {
            sl__ooc_split_below(&m, sorted_probe[q], s1);
            for (int j = 0; j < k; j++) {
                int64_t below = 0;
                for (int64_t i = 0; i < rows[j]; i++)
                    below += sl__ooc_code(&m, j, i) < sorted_probe[q];
                assert_int_equal(s1[j], below);
                assert_int_equal(sb[q * k + j], below);
            }
        }
        free(sb), free(s1);
    }
    void *out[3];
    for (int c = 0; c < nc; c++)
        out[c] = malloc((size_t)(n + 1) * (size_t)width[c]);
    uint64_t *scratch = malloc((size_t)sl__ooc_scratch_words(&m) * 8);
    int64_t *from = malloc((size_t)k * 8), *to = malloc((size_t)k * 8);
    if (by_sort == 2) { /* ranges cut at sampled keys, in groups, small pieces */
        int64_t P = n_parts, sub = 1 + (int64_t)(rnd() % 700), group = 1 + (int64_t)(rnd() % 4);
        uint64_t *codes = malloc((size_t)P * 8);
        void *ss = malloc((size_t)sl__ooc_splitter_scratch_bytes(&m, P, SL__OOC_OVERSAMPLE));
        sl__ooc_splitters(&m, P, SL__OOC_OVERSAMPLE, codes, ss, 1 + (int)(rnd() % 5));
        for (int64_t i = 1; i + 1 < P; i++)
            assert_true(codes[i - 1] <= codes[i]);
        /* the same splitters on one thread; every split equal to a plain search */
        uint64_t *codes1 = malloc((size_t)P * 8);
        sl__ooc_splitters(&m, P, SL__OOC_OVERSAMPLE, codes1, ss, 1);
        for (int64_t i = 0; i + 1 < P; i++)
            assert_true(codes1[i] == codes[i]);
        int64_t *all_splits = malloc((size_t)(P * k + 1) * 8), *one = malloc((size_t)k * 8);
        sl__ooc_split_below_all(&m, codes, P - 1, all_splits, 1 + (int)(rnd() % 6));
        for (int64_t i = 0; i + 1 < P; i++) {
            sl__ooc_split_below(&m, codes[i], one);
            for (int j = 0; j < k; j++)
                assert_int_equal(all_splits[i * k + j], one[j]);
        }
        free(codes1), free(all_splits), free(one);
        int64_t *split = malloc((size_t)(4 * k + 1) * 8);
        void *sc = malloc((size_t)sl__ooc_sort_scratch_bytes(&m, sub));
        for (int64_t g = 0; g < P; g += group) /* out of order: groups are independent */
            sl__ooc_merge_ranges(&m, codes, P, P - group - g < 0 ? 0 : P - group - g, P - g,
                                 sub, out, split, sc);
        free(codes), free(ss), free(split), free(sc);
        n_parts = 0;
    }
    for (int p = 0; p < n_parts; p++) {
        int64_t lo = n * p / n_parts, hi = n * (p + 1) / n_parts;
        sl__ooc_corank(&m, lo, from);
        sl__ooc_corank(&m, hi, to);
        int64_t got = 0;
        for (int j = 0; j < k; j++) {
            assert_true(from[j] >= 0 && from[j] <= to[j] && to[j] <= rows[j]);
            got += to[j] - from[j];
        }
        assert_int_equal(got, hi - lo);
        void *o[3];
        for (int c = 0; c < nc; c++)
            o[c] = (char *)out[c] + lo * width[c];
        if (by_sort) {
            void *sc = malloc((size_t)sl__ooc_sort_scratch_bytes(&m, hi - lo));
            sl__ooc_merge_by_sort(&m, from, to, o, sc);
            free(sc);
        } else {
            sl__ooc_merge(&m, from, to, o, scratch);
        }
    }
    /* Key ranges: the code at rank i is that of the i-th output row, and the rows below
     * it are exactly the output rows with a smaller key. */
    for (int q = 0; q < 5 && n > 0; q++) {
        int64_t i = (int64_t)(rnd() % (uint64_t)n);
        uint64_t v = sl__ooc_code_at_rank(&m, i);
        int64_t below = 0, want_below = 0;
        sl__ooc_split_below(&m, v, from);
        for (int j = 0; j < k; j++)
            below += from[j];
        while (want_below < n && (desc ? all[want_below].key > all[i].key
                                       : all[want_below].key < all[i].key))
            want_below++;
        assert_int_equal(below, want_below);
        uint64_t want = kw == 4 ? (uint64_t)((uint32_t)all[i].key ^ 0x80000000u)
                                : (uint64_t)all[i].key ^ 0x8000000000000000ull;
        if (desc)
            want = kw == 4 ? (uint32_t)~want : ~want;
        assert_true(v == want);
        for (int j = 0; j < k; j++) /* the code of each run's first row at or above v */
            if (from[j] < rows[j])
                assert_true(sl__ooc_code(&m, j, from[j]) >= v);
        /* searching onwards from the split of a smaller code (or the run's start, or the
         * answer itself) finds the same rows */
        uint64_t u = sl__ooc_code_at_rank(&m, (int64_t)(rnd() % (uint64_t)(i + 1)));
        int64_t lower[80], zero[80] = {0}, got[80];
        assert_true(k <= 80);
        sl__ooc_split_below(&m, u, lower);
        const int64_t *starts[3] = {lower, zero, from};
        for (int s = 0; s < 3; s++) {
            sl__ooc_split_below_from(&m, v, starts[s], got);
            for (int j = 0; j < k; j++)
                assert_int_equal(got[j], from[j]);
        }
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t key = col_get(out[cols_of[0]], kw, i), pos = col_get(out[cols_of[1]], 4, i);
        int64_t der = narrow ? all[i].pos * 1000003 - 7 : col_get(out[cols_of[2]], 8, i);
        if (key != all[i].key || pos != all[i].pos || der != all[i].pos * 1000003 - 7)
            fail_msg("kw %d desc %d mode %d k %d parts %d sort %d narrow %d packed %d: row %lld: got "
                     "(%lld, %lld) want (%lld, %lld)", kw, desc, mode, k, n_parts, by_sort, narrow,
                     packed, (long long)i, (long long)key,
                     (long long)pos, (long long)all[i].key, (long long)all[i].pos);
    }
    for (int c = 0; c < nc; c++)
        free(out[c]);
    for (int j = 0; j < k * nc; j++)
        free(cols[j]);
    free(cols), free(rows), free(all), free(scratch), free(from), free(to), free(tables);
}

/* Every merge (loser tree, radix sort of rank ranges, ranges cut at sampled keys),
 * three and two columns; packed runs (int32 keys, two columns) by the sorts. */
static void check(int kw, int desc, int mode, const int64_t *lens, int k, int n_parts, int key_col)
{
    for (int by_sort = 0; by_sort < 3; by_sort++)
        for (int narrow = 0; narrow < 2; narrow++)
            for (int packed = 0; packed < 1 + 2 * (narrow && kw == 4 && by_sort); packed++)
                check1(kw, desc, mode, lens, k, n_parts, key_col, by_sort, narrow, packed);
}

SL_TEST(ooc_merge_random_runs)
{
    int64_t lens[70];
#ifdef SL_TEST_UNDER_TSAN /* past 8 minutes there with the narrow runs' cases: 4-byte keys
                             ascending, half the run counts (ASan and plain runs do all) */
    const int kw_last = 4, desc_last = 0, n_ks = 3, ks[] = {1, 3, 70};
#else
    const int kw_last = 8, desc_last = 1, n_ks = 6, ks[] = {1, 2, 3, 8, 13, 70};
#endif
    for (int kw = 4; kw <= kw_last; kw += 4)
        for (int desc = 0; desc <= desc_last; desc++)
            for (int mode = K_RANDOM; mode <= K_REVERSE; mode++) {
                for (int a = 0; a < n_ks; a++) {
                    int k = ks[a];
                    for (int j = 0; j < k; j++)
                        lens[j] = j % 5 == 3 ? 0 : (int64_t)(rnd() % 3000);
                    check(kw, desc, mode, lens, k, 1 + (int)(rnd() % 13), (int)(rnd() % 3));
                }
            }
}

SL_TEST(ooc_merge_edges)
{
    int64_t none[3] = {0, 0, 0}, one[3] = {0, 1, 0}, big[2] = {20000, 19999};
    check(4, 0, K_RANDOM, none, 3, 4, 0); /* nothing at all */
    check(8, 1, K_RANDOM, one, 3, 3, 1);  /* one row, more ranges than rows */
    check(4, 0, K_EQUAL, big, 2, 7, 0);   /* every key equal: run 0 first, then run 1 */
    check(8, 0, K_HEAVY, big, 2, 5, 2);
    check(4, 1, K_EXTREME, big, 2, 9, 0);
    check(8, 0, K_RANDOM, big, 2, 200, 1); /* many ranges: 200 rows each */
    check(4, 1, K_HEAVY, big, 2, 64, 0);
}

/* The key's code (ooc_merge.h): order-preserving, inverted when descending. */
static uint64_t code_of(int64_t key, int w, int desc)
{
    uint64_t c = w == 4 ? (uint64_t)((uint32_t)(int32_t)key ^ 0x80000000u)
                        : (uint64_t)key ^ 0x8000000000000000ull;
    return desc ? (w == 4 ? (uint32_t)~c : ~c) : c;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Splitters from the unsorted input (sl__ooc_input_splitters, the out-of-core sort's
 * pass-1 cuts): the same on 1 and 5 threads, non-decreasing, each some input key's code;
 * random keys: every bucket within 30% of n / P (256 samples a bucket); sorted keys:
 * splitter i within n / s + 1 ranks of rank i n / P; parts of odd sizes, empty ones. */
SL_TEST(ooc_input_splitters)
{
    /* Its random keys' bound below (30% of a bucket) holds for the seed it starts from
     * alone, not for every state the tests before it leave (it failed after the narrow
     * runs' cases were added to ooc_merge_random_runs): it starts from that seed. */
    rng = 88172645463325252ull;
    const int64_t P = 20, over = 256, n_parts = 7;
    for (int w = 4; w <= 8; w += 4)
        for (int desc = 0; desc < 2; desc++)
            for (int mode = K_RANDOM; mode <= K_REVERSE; mode++) {
                int64_t rows[7] = {0, 30011, 0, 64000, 1, 50000, 55988}, n = 200000;
                void *keys[7];
                uint64_t *all = malloc((size_t)n * sizeof *all);
                int64_t at = 0;
                for (int q = 0; q < n_parts; q++) {
                    keys[q] = malloc((size_t)(rows[q] * w + 8));
                    for (int64_t i = 0; i < rows[q]; i++, at++) {
                        int64_t v = key_of(mode, at, n, w);
                        col_set(keys[q], w, i, v);
                        all[at] = code_of(v, w, desc);
                    }
                }
                qsort(all, (size_t)n, sizeof *all, cmp_u64);
                void *scratch = malloc((size_t)sl__ooc_input_scratch_bytes(n, P, over));
                uint64_t c1[19], c5[19], cp[19];
                sl__ooc_input_splitters((const void *const *)keys, rows, n_parts, NULL, w, desc,
                                        P, 0, over, c1, scratch, 1);
                sl__ooc_input_splitters((const void *const *)keys, rows, n_parts, NULL, w, desc,
                                        P, 0, over, c5, scratch, 5);
                assert_memory_equal(c1, c5, sizeof c1);
                /* graded: the same splitters, two more before them and two after, in
                 * order; on sorted keys near ranks n / 4P, n / 2P, n - n / 2P, n - n / 4P */
                uint64_t cg[23];
                sl__ooc_input_splitters((const void *const *)keys, rows, n_parts, NULL, w, desc,
                                        P, 1, over, cg, scratch, 3);
                assert_memory_equal(cg + 2, c1, sizeof c1);
                for (int i = 1; i < 23; i++)
                    assert_true(cg[i - 1] <= cg[i]);
                if (mode == K_SORTED) {
                    const int64_t rank[4] = {n / (4 * P), n / (2 * P), n - n / (2 * P),
                                           n - n / (4 * P)};
                    const uint64_t got[4] = {cg[0], cg[1], cg[21], cg[22]};
                    for (int q = 0; q < 4; q++) {
                        int64_t lo = 0, hi = n;
                        while (lo < hi) {
                            int64_t mid = (lo + hi) / 2;
                            if (all[mid] < got[q])
                                lo = mid + 1;
                            else
                                hi = mid;
                        }
                        int64_t last = lo; /* the code's last copy */
                        while (last + 1 < n && all[last + 1] == got[q])
                            last++;
                        assert_true(lo <= rank[q] + n / (over * P) + 1 &&
                                    last >= rank[q] - n / (over * P) - 1);
                    }
                }
                int64_t s = over * P;
                assert_int_equal(sl__ooc_input_sample_count(n, P, over), s);
                /* parts 1, 4 and 5 read already (GPU batches): only their samples, in
                 * order, from the first of each (sl__ooc_input_sample_row) */
                void *pre[7];
                int64_t first_of[7];
                memcpy(pre, keys, sizeof pre);
                for (int q = 0; q < n_parts; q++) {
                    first_of[q] = -1;
                    if (q != 1 && q != 4 && q != 5)
                        continue;
                    pre[q] = malloc((size_t)(s * w + 8));
                    int64_t base = 0, k = 0;
                    for (int u = 0; u < q; u++)
                        base += rows[u];
                    for (int64_t i = 0; i < s; i++) {
                        int64_t r = sl__ooc_input_sample_row(i, n, s);
                        assert_true(i == 0 || r >= sl__ooc_input_sample_row(i - 1, n, s));
                        if (r < base || r >= base + rows[q])
                            continue;
                        if (first_of[q] < 0)
                            first_of[q] = i;
                        assert_int_equal(i, first_of[q] + k);
                        col_set(pre[q], w, k++, w == 4 ? (int64_t)((int32_t *)keys[q])[r - base]
                                                       : ((int64_t *)keys[q])[r - base]);
                    }
                    if (first_of[q] < 0) { /* no sample falls in it: read in place */
                        free(pre[q]);
                        pre[q] = keys[q];
                    }
                    memset(keys[q], 0x5a, (size_t)(rows[q] * w)); /* must not be read */
                }
                sl__ooc_input_splitters((const void *const *)pre, rows, n_parts, first_of, w, desc,
                                        P, 0, over, cp, scratch, 5);
                assert_memory_equal(c1, cp, sizeof c1);
                for (int q = 0; q < n_parts; q++)
                    if (pre[q] != keys[q])
                        free(pre[q]);
                for (int i = 0; i < P - 1; i++) {
                    assert_true(i == 0 || c1[i - 1] <= c1[i]);
                    assert_non_null(bsearch(&c1[i], all, (size_t)n, sizeof *all, cmp_u64));
                    /* ranks of the splitter's first and last copies in the sorted codes */
                    int64_t lo = 0, hi = n;
                    while (lo < hi) {
                        int64_t mid = (lo + hi) / 2;
                        if (all[mid] < c1[i])
                            lo = mid + 1;
                        else
                            hi = mid;
                    }
                    int64_t first = lo, last = lo;
                    while (last + 1 < n && all[last + 1] == c1[i])
                        last++;
                    int64_t want = (i + 1) * n / P;
                    if (mode == K_SORTED || mode == K_REVERSE) /* exact strata */
                        assert_true(first <= want + n / s + 1 && last >= want - n / s - 1);
                    if (mode == K_RANDOM) {
                        assert_true(first >= want - 3 * n / P / 10 &&
                                    first <= want + 3 * n / P / 10);
                    }
                }
                free(scratch), free(all);
                for (int q = 0; q < n_parts; q++)
                    free(keys[q]);
            }
}

/* Key ranges of the sort-merge join from splitter codes (sl__ooc_range_codes): strictly
 * ascending, the code of key 0 among them, every other non-zero splitter kept, nothing
 * else; so no range holds keys of both signs. Cases: no splitters, all equal, zero among
 * them or not, a code of 0, codes on both sides of zero, random with duplicates. */
SL_TEST(ooc_range_codes)
{
    for (int w = 4; w <= 8; w += 4) {
        const uint64_t zero = w == 4 ? (uint64_t)1 << 31 : (uint64_t)1 << 63;
        uint64_t fixed[][5] = {
            {5, 5, 5, 5, 5},
            {0, 0, 7, zero, zero},
            {zero - 1, zero, zero + 1, zero + 1, UINT64_MAX - 1},
            {zero + 3, zero + 3, zero + 9, zero + 10, zero + 11},
            {1, 2, 3, zero - 2, zero - 1},
        };
        for (int c = 0; c < 105; c++) {
            uint64_t in[64], out[65];
            int64_t n = c < 5 ? 5 : c == 5 ? 0 : (int64_t)(rnd() % 64);
            if (c < 5)
                memcpy(in, fixed[c], sizeof fixed[c]);
            for (int64_t i = 0; c > 5 && i < n; i++) /* few values: duplicates */
                in[i] = (rnd() % 2 ? zero : 0) + rnd() % 16;
            if (c > 5)
                qsort(in, (size_t)n, sizeof *in, cmp_u64);
            int64_t k = sl__ooc_range_codes(in, n, w, out);
            assert_true(k <= n + 1);
            int has_zero = 0;
            for (int64_t i = 0; i < k; i++) {
                assert_true(out[i] != 0);
                assert_true(i == 0 || out[i - 1] < out[i]);
                has_zero |= out[i] == zero;
                int found = out[i] == zero;
                for (int64_t j = 0; j < n && !found; j++)
                    found = in[j] == out[i];
                assert_true(found);
            }
            assert_true(has_zero);
            for (int64_t j = 0; j < n; j++) { /* every non-zero splitter is a boundary */
                int found = in[j] == 0;
                for (int64_t i = 0; i < k && !found; i++)
                    found = out[i] == in[j];
                assert_true(found);
            }
        }
    }
}

/* Narrow runs' key ranges (sl__ooc_narrow_codes): every input code kept, the output
 * strictly ascending, every range (0 to the first, the last to 2^32) spanning at most
 * `window` top-16 values, added codes only multiples of window << 16, none added where
 * no range is too wide, at most 65536 / window + 1 added. Cases: no codes, one range of
 * all keys, narrow bands, codes at and beside multiples, random codes. */
SL_TEST(ooc_narrow_codes)
{
    const int64_t windows[] = {2048, 1, 7, 65536};
    for (int wi = 0; wi < 4; wi++) {
        const int64_t W = windows[wi];
        for (int c = 0; c < 60; c++) {
            static uint64_t in[64], out[64 + 65537];
            int64_t n = c == 0 ? 0 : (int64_t)(rnd() % 64);
            for (int64_t i = 0; i < n; i++) {
                uint64_t v = c % 3 == 0 ? (rnd() % 65536) << 16 /* multiples of 2^16 */
                             : c % 3 == 1 ? ((uint64_t)1 << 31) + rnd() % ((uint64_t)1 << 22)
                                          : rnd() % ((uint64_t)1 << 32);
                in[i] = v ? v : 1;
            }
            qsort(in, (size_t)n, sizeof *in, cmp_u64);
            int64_t m = 0; /* strictly ascending */
            for (int64_t i = 0; i < n; i++)
                if (m == 0 || in[i] > in[m - 1])
                    in[m++] = in[i];
            n = m;
            int64_t k = sl__ooc_narrow_codes(in, n, W, out);
            assert_true(k >= n && k <= n + 65536 / W + 1);
            int64_t j = 0, wide = 0;
            uint64_t prev = 0;
            for (int64_t i = 0; i <= n; i++) { /* ranges of the input */
                uint64_t b = i < n ? in[i] : (uint64_t)1 << 32;
                wide |= (int64_t)(((b - 1) >> 16) - (prev >> 16) + 1) > W;
                prev = b;
            }
            prev = 0;
            for (int64_t i = 0; i <= k; i++) {
                uint64_t b = i < k ? out[i] : (uint64_t)1 << 32;
                assert_true(i == 0 || b > prev);
                assert_true((int64_t)(((b - 1) >> 16) - (prev >> 16) + 1) <= W);
                if (i < k && j < n && out[i] == in[j])
                    j++;
                else if (i < k)
                    assert_true(out[i] % ((uint64_t)W << 16) == 0);
                prev = b;
            }
            assert_int_equal(j, n);
            if (!wide)
                assert_int_equal(k, n);
        }
    }
}

/* The sort-merge join's auto rule for narrow runs (sl__ooc_smj_narrow_pays) and the bytes
 * pass 2 holds for a narrow side (sl__ooc_smj_narrow_bytes): two sets' windows of every
 * run's table and every range's cuts and slice starts; several runs of at least 2^17 rows
 * (a 256 KiB table at most half of the 4 bytes a row saved), those bytes at most 1/16 of
 * the budget. The bench's 2^26 rows a side at 256 MiB (32 runs of 2^21) pay; the tests'
 * 8 MiB runs (24,576 rows) and 16 MiB ones (98,304) do not, nor one run. */
SL_TEST(ooc_smj_narrow_rule)
{
    const int64_t W = 2048, MiB = (int64_t)1 << 20;
    assert_int_equal(SL__OOC_SMJ_NARROW_RUN, (int64_t)1 << 17);
    assert_int_equal(sl__ooc_smj_narrow_bytes(0, 100, W), 0);
    assert_int_equal(sl__ooc_smj_narrow_bytes(32, 100, W), 2 * 32 * W * 4 + 201 * 32 * 8);
    assert_int_equal(sl__ooc_smj_narrow_bytes(32, 100, 0), 201 * 32 * 8);
    assert_true(sl__ooc_smj_narrow_pays((int64_t)1 << 21, 32, 100, W, 256 * MiB));
    assert_false(sl__ooc_smj_narrow_pays(24576, 128, 250, W, 8 * MiB));
    assert_false(sl__ooc_smj_narrow_pays(98304, 32, 60, W, 16 * MiB));
    assert_false(sl__ooc_smj_narrow_pays((int64_t)1 << 22, 1, 10, W, 256 * MiB));
    assert_true(sl__ooc_smj_narrow_pays(196608, 32, 46, W, 96 * MiB));
    assert_true(sl__ooc_smj_narrow_pays((int64_t)1 << 17, 2, 10, W, 16 * MiB));
    assert_false(sl__ooc_smj_narrow_pays(((int64_t)1 << 17) - 1, 2, 10, W, 16 * MiB));
    /* the share: 64 runs' bytes at 1/16 of the budget exactly, and one byte less */
    int64_t b = sl__ooc_smj_narrow_bytes(64, 40, W);
    assert_true(sl__ooc_smj_narrow_pays((int64_t)1 << 18, 64, 40, W, 16 * b));
    assert_false(sl__ooc_smj_narrow_pays((int64_t)1 << 18, 64, 40, W, 16 * b - 1));
}

/* A model of pass 1's device bytes for sl__ooc_pass1_pick: sets x rows x slot bytes, a
 * temp of some 8 bytes a row plus a fixed part (CUB's, the packed sort's other buffer),
 * 2 MiB of small buffers; sizes past `refuse` rows refused (CUB's limit). */
struct pick_model {
    int64_t slot, refuse;
    int64_t calls;
};

static int64_t pick_model_bytes(void *arg, int64_t sets, int64_t rows)
{
    struct pick_model *m = arg;
    m->calls++;
    if (rows > m->refuse)
        return -1;
    return sets * rows * m->slot + rows * 8 + rows / 16 + 300000 + ((int64_t)2 << 20);
}

/* Pass 1's run size and buffer sets (sl__ooc_pass1_pick) over budgets from nothing to
 * past every size: each budget's pick fits it and is the first of the order that does
 * (three sets did not fit at the run size where three may be taken; with n a power of
 * two, the next larger run within the cap did not fit); runs within [min_run, cap]
 * unless all rows are one run or halving would go below min_run; one set exactly for
 * one run, three only where allowed and making 3 runs or more; a larger budget never
 * takes smaller runs, nor fewer sets at the same runs (monotonic by construction);
 * allowing three sets never changes the run size; a refused size fails the pick. Row
 * counts of 1 to 2^28 + 12345, slots of 16, 24 and 72 bytes a row. */
SL_TEST(ooc_pass1_pick)
{
    const int64_t MR = (int64_t)1 << 12, MAXR = (int64_t)1 << 30, PIPE = 32;
    const int64_t ns[] = {1, 1000, 4096, 5000, 100000, (int64_t)1 << 20, 3 << 19,
                          (int64_t)1 << 22, ((int64_t)1 << 28) + 12345, (int64_t)1 << 28};
    const int64_t slots[] = {16, 24, 72};
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
        for (size_t si = 0; si < 3; si++) {
            const int64_t n = ns[ni];
            struct pick_model m = {.slot = slots[si], .refuse = MAXR};
            int64_t cap = MR;
            while (cap * PIPE < n)
                cap *= 2;
            int64_t prevR[4] = {0}, prevS[4] = {0}, top = pick_model_bytes(&m, 1, n) * 2;
            for (int64_t b = 0; b <= top; b += b < ((int64_t)64 << 20) ? 65536 + b / 8 : b / 16) {
                int64_t Rk[4] = {0};
                for (int ms = 2; ms <= 3; ms++) {
                    int64_t R = 0;
                    int sets = 0;
                    int rc = sl__ooc_pass1_pick(n, MR, MAXR, PIPE, ms, b, pick_model_bytes, &m, &R,
                                                &sets);
                    assert_true(rc == 0 || rc == 1);
                    if (rc == 0) {
                        assert_int_equal(prevR[ms], 0); /* nothing fitted a smaller one either */
                        /* not even the smallest run with two sets (or all in one) fits */
                        int64_t rr = n < MR ? n : MR;
                        assert_true(pick_model_bytes(&m, rr < n ? 2 : 1, rr) > b);
                        continue;
                    }
                    Rk[ms] = R;
                    const int64_t runs = (n + R - 1) / R;
                    assert_true(pick_model_bytes(&m, sets, R) <= b);
                    assert_true(R <= n && (R >= MR || R == n));
                    assert_true(runs == 1 || R <= cap || R / 2 < MR);
                    assert_int_equal(sets == 1, runs == 1);
                    assert_true(sets <= ms && (sets < 3 || runs >= 3));
                    if (ms == 3 && runs >= 3 && sets == 2) /* three did not fit at R */
                        assert_true(pick_model_bytes(&m, 3, R) > b);
                    if (runs > 1 && (n & (n - 1)) == 0) { /* no larger run of the order
                                                                fitted (sizes n / 2^k) */
                        int64_t larger = R * 2;
                        if (larger == n || larger <= cap)
                            assert_true(pick_model_bytes(&m, larger == n ? 1 : 2, larger) > b);
                    }
                    /* monotonic: never smaller runs, nor fewer sets at the same runs */
                    assert_true(R > prevR[ms] || (R == prevR[ms] && sets >= prevS[ms]));
                    prevR[ms] = R;
                    prevS[ms] = sets;
                }
                assert_int_equal(Rk[2], Rk[3]); /* a third set never shrinks the runs */
            }
            assert_int_equal(prevR[2], n); /* the largest budget: all rows in one run */
        }
    /* a size CUB refuses fails the pick (plan_temp) */
    struct pick_model m = {.slot = 16, .refuse = (int64_t)1 << 20};
    int64_t R = 0;
    int sets = 0;
    assert_true(sl__ooc_pass1_pick((int64_t)1 << 24, MR, MAXR, PIPE, 3, (int64_t)1 << 40,
                                   pick_model_bytes, &m, &R, &sets) < 0);
    /* no rows, or a min_run / pipe_runs below 1: nothing picked, bytes() never asked (0
     * rows divided runs by 0; a 0 min_run or pipe_runs never let the cap reach n) */
    m.refuse = MAXR;
    m.calls = 0;
    R = 7;
    sets = 7;
    assert_int_equal(sl__ooc_pass1_pick(0, MR, MAXR, PIPE, 3, (int64_t)1 << 40,
                                        pick_model_bytes, &m, &R, &sets), 0);
    assert_int_equal(sl__ooc_pass1_pick(-5, MR, MAXR, PIPE, 2, (int64_t)1 << 40,
                                        pick_model_bytes, &m, &R, &sets), 0);
    assert_int_equal(sl__ooc_pass1_pick(1000, 0, MAXR, PIPE, 2, (int64_t)1 << 40,
                                        pick_model_bytes, &m, &R, &sets), 0);
    assert_int_equal(sl__ooc_pass1_pick(1000, MR, MAXR, 0, 2, (int64_t)1 << 40,
                                        pick_model_bytes, &m, &R, &sets), 0);
    assert_int_equal(m.calls, 0);
    assert_int_equal(R, 7); /* untouched */
    assert_int_equal(sets, 7);
    /* one row: one run of one row, one set */
    assert_int_equal(sl__ooc_pass1_pick(1, MR, MAXR, PIPE, 3, (int64_t)1 << 40,
                                        pick_model_bytes, &m, &R, &sets), 1);
    assert_int_equal(R, 1);
    assert_int_equal(sets, 1);
}
