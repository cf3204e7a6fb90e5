/* The CPU half of the out-of-core sort (issue 8): a multiway merge of sorted runs held
 * in host memory, one output key range at a time.
 *
 * A run set is k runs of the same columns (4- or 8-byte values, no nulls), each sorted
 * stably by one int32/int64 key column, ascending or descending; run j holds the input
 * rows that come after those of runs 0..j-1. Merging them with ties going to the lower
 * run gives exactly the stable sort of the whole input.
 *
 * Parallel use: output rows [lo, hi) need rows [split(lo)[j], split(hi)[j]) of each run
 * j (sl__ooc_corank), so independent tasks (spawned by the finalize) order disjoint
 * output ranges with no shared state. Plain C, no GPU: tests/unit/sort tests it. */
#ifndef SL_SORT_OOC_MERGE_H
#define SL_SORT_OOC_MERGE_H

#include <stdint.h>

#define SL__OOC_MAX_COLS 64

struct sl__ooc_runs {
    int n_cols;
    int key_col, desc;
    int width[SL__OOC_MAX_COLS];        /* bytes per value of each column: 4 or 8 */
    int64_t n_runs;
    const int64_t *rows;                /* rows of each run */
    void *const *cols;                  /* run j's column c at cols[j * n_cols + c] */
};

/* Rows of all runs. */
int64_t sl__ooc_total(const struct sl__ooc_runs *m);

/* split[j] = rows of run j that come before output rank r (0 <= r <= total), ties in
 * run order. Cost: about 64 binary searches per run. */
void sl__ooc_corank(const struct sl__ooc_runs *m, int64_t r, int64_t *split);

/* Key ranges (the sort-merge join splits both sides at the same key values): the
 * merged order's key code at rank r (0 <= r < total; codes: ooc_merge.c's code_at, an
 * order-preserving unsigned map of the key), and split[j] = rows of run j whose code is
 * below v. */
uint64_t sl__ooc_code_at_rank(const struct sl__ooc_runs *m, int64_t r);
void sl__ooc_split_below(const struct sl__ooc_runs *m, uint64_t v, int64_t *split);
/* The key of row i of run j as that code. */
uint64_t sl__ooc_code(const struct sl__ooc_runs *m, int64_t j, int64_t i);

/* Merges rows [from[j], to[j]) of every run j (a range from two co-ranks) into the
 * column arrays out[c], starting at row 0 of each, with a loser tree. `scratch` holds
 * sl__ooc_scratch_words(m) words; a merge uses no other memory (besides ~12 KiB of
 * stack). */
int64_t sl__ooc_scratch_words(const struct sl__ooc_runs *m);
void sl__ooc_merge(const struct sl__ooc_runs *m, const int64_t *from, const int64_t *to,
                   void *const *out, uint64_t *scratch);

/* The same result by sorting instead of merging: the range's slices, concatenated in
 * run order, are sorted by the stable LSD radix sort of radix_sort.c (key code and
 * position, or key code and the payload itself for one 4-byte payload beside an int32
 * key). Equal keys keep run order and, within a run, their order, so the rows and
 * their order are the loser tree's. Its cost does not grow with the number of runs,
 * and an output range spans a narrow band of keys, so the digits above it (one bucket)
 * are skipped. `scratch` holds sl__ooc_sort_scratch_bytes(m, rows) bytes, 64-byte
 * aligned, for the range's rows; about 260 KiB of stack. */
int64_t sl__ooc_sort_scratch_bytes(const struct sl__ooc_runs *m, int64_t rows);
void sl__ooc_merge_by_sort(const struct sl__ooc_runs *m, const int64_t *from, const int64_t *to,
                           void *const *out, void *scratch);

#endif /* SL_SORT_OOC_MERGE_H */
