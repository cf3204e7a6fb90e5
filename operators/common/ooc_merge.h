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
    /* 1: packed runs (issue 23; sluice_k/ooc_pack.h): an int32 key and one 4-byte column,
     * each run one array of 8-byte rows at cols[j * n_cols + key_col] (the other
     * column's entry unused), the key's code (code_at) in the high half and the other
     * column's bits in the low half. Everything here takes them but sl__ooc_merge. */
    int packed;
    /* 1 (packed runs only): narrow runs (issue 23; sluice_k/ooc_pack.h): run j's entry
     * holds its rows of 6 bytes each (three 16-bit words: the code's low 16 bits, the
     * payload's low and high 16 bits) and narrow_tables[j * SL__OOC_NARROW_TOP, ...) its
     * table (table[t]: the run's rows whose code is below t << 16); the code's high 16
     * bits of row i are the last t with table[t] <= i. Read like packed runs (code_at,
     * the range sort); not by sl__ooc_merge. */
    int narrow;
    const uint32_t *narrow_tables;
};

#define SL__OOC_NARROW_TOP 65536
/* Bytes of a narrow run's table. */
#define SL__OOC_NARROW_TABLE_BYTES ((int64_t)SL__OOC_NARROW_TOP * 4)

/* Narrow runs: tops[2 b] and tops[2 b + 1] = the lowest and the highest top-16 code
 * value of bucket b's rows (rows [cuts[b k + j], cuts[(b + 1) k + j]) of every run j;
 * SL__OOC_NARROW_TOP and -1 for an empty bucket), from the runs' tables alone, on up to
 * `threads` threads. */
void sl__ooc_narrow_tops(const struct sl__ooc_runs *m, const int64_t *cuts, int64_t nb,
                         int64_t *tops, int threads);
/* Narrow runs: the top-16 code values beside nc cuts of run j (split[c]: rows of the run
 * below splitter c), as the GPU's sl_k_ooc_split_tops writes them: for boundary x of
 * nc + 2 (row 0, the nc splits, the run's end) tops[2 x] = the top value of the row
 * before it (-1 at row 0), tops[2 x + 1] = that of the row at it (-1 at the end). */
void sl__ooc_split_tops(const struct sl__ooc_runs *m, int64_t j, const int64_t *split,
                        int64_t nc, int32_t *tops);
/* sl__ooc_narrow_tops' answer for buckets cut at such boundaries: cut row b of `cuts`
 * ((nb + 1) x k) is boundary bx[b] of every run (0 .. nc + 1), or -1 where it is not
 * one (a cut at exact ranks: those buckets are searched in the tables); split_tops holds
 * run j's values (sl__ooc_split_tops) from split_tops + j * 2 (nc + 2). */
void sl__ooc_bucket_tops(const struct sl__ooc_runs *m, const int32_t *split_tops, int64_t nc,
                         const int64_t *cuts, const int64_t *bx, int64_t nb, int64_t *tops);

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
/* The same, given from[j] <= the answer for run j (the split of a smaller or equal code):
 * searches onwards from there (galloping), for splitters taken in increasing order. */
void sl__ooc_split_below_from(const struct sl__ooc_runs *m, uint64_t v, const int64_t *from,
                              int64_t *split);
/* split[i * n_runs + j] = rows of run j whose code is below codes[i], for n codes in
 * increasing order (each searched onwards from the previous one's answer), on up to
 * `threads` threads that each take whole runs. */
void sl__ooc_split_below_all(const struct sl__ooc_runs *m, const uint64_t *codes, int64_t n,
                             int64_t *split, int threads);
/* The key of row i of run j as that code. */
uint64_t sl__ooc_code(const struct sl__ooc_runs *m, int64_t j, int64_t i);

/* Merges rows [from[j], to[j]) of every run j (a range from two co-ranks) into the
 * column arrays out[c], starting at row 0 of each, with a loser tree (not packed runs). `scratch` holds
 * sl__ooc_scratch_words(m) words; a merge uses no other memory (besides ~12 KiB of
 * stack). */
int64_t sl__ooc_scratch_words(const struct sl__ooc_runs *m);
void sl__ooc_merge(const struct sl__ooc_runs *m, const int64_t *from, const int64_t *to,
                   void *const *out, uint64_t *scratch);

/* The same result by sorting instead of merging: the range's slices, concatenated in
 * run order, are sorted by the stable LSD radix sort of radix_sort.c (key code and
 * position, or key code and the payload itself for one 4-byte payload beside an int32
 * key). Equal keys keep run order and, within a run, their order, so the rows and
 * their order are the loser tree's. Its cost does not grow with the number of runs;
 * codes are taken relative to the range's smallest, so an output range's narrow band
 * of keys needs only the digits of its width (and an 8-byte key's band narrower than
 * 2^32 sorts as 8-byte items). `scratch` holds sl__ooc_sort_scratch_bytes(m, rows) bytes, 64-byte
 * aligned, for the range's rows; about 260 KiB of stack. */
int64_t sl__ooc_sort_scratch_bytes(const struct sl__ooc_runs *m, int64_t rows);
void sl__ooc_merge_by_sort(const struct sl__ooc_runs *m, const int64_t *from, const int64_t *to,
                           void *const *out, void *scratch);

/* Output ranges cut at key codes (the sort's merge tasks): P - 1 splitter codes from
 * about over * P regular samples of the runs (over: SL__OOC_OVERSAMPLE, or more where an
 * oversized range costs more than sampling), sorted; range i holds the rows with codes in
 * [codes[i - 1], codes[i]) (no bottom for i = 0, no top for i = P - 1), about total / P
 * rows unless few keys fill many rows (equal splitters: empty ranges, and one large).
 * A range needs one binary search per run at each end, where an exact rank
 * (sl__ooc_corank) needs some 32. `scratch`: sl__ooc_splitter_scratch_bytes bytes; the
 * samples are read on up to `threads` threads. */
#define SL__OOC_OVERSAMPLE 16
int64_t sl__ooc_splitter_scratch_bytes(const struct sl__ooc_runs *m, int64_t P, int64_t over);
void sl__ooc_splitters(const struct sl__ooc_runs *m, int64_t P, int64_t over, uint64_t *codes,
                       void *scratch, int threads);

/* The same splitters from the input before it is sorted (the out-of-core sort computes
 * its pass-2 buckets' cuts while pass 1 sorts the runs, issue 23): about over * P rows
 * of the input, one in each of as many equal strata (at an offset hashed from the
 * stratum's number, so the same rows every time), sorted by code; codes[i - 1] is the
 * sample of rank i s / P. The input is n_parts key arrays keys[q] of rows[q] values
 * each (int32 when key_bytes is 4, else int64), in input order; desc: codes of the
 * descending order. `scratch`: sl__ooc_input_scratch_bytes(n, P, over) bytes for n
 * rows in all; the samples are read on up to `threads` threads. Parts whose keys the
 * host cannot read (GPU batches) come read already: with first != NULL and first[q] >= 0,
 * keys[q] holds only part q's samples, sample i (of rows[q]'s part) at index
 * i - first[q], first[q] being the first sample in part q (sl__ooc_input_sample_row
 * says which rows those are; NULL or -1: keys[q] is the whole part). graded (P >= 2):
 * four more splitters, cutting the first and the last of the P ranges into a quarter,
 * a quarter and a half (the half inside): codes holds P + 3 then. */
int64_t sl__ooc_input_scratch_bytes(int64_t n, int64_t P, int64_t over);
void sl__ooc_input_splitters(const void *const *keys, const int64_t *rows, int64_t n_parts,
                             const int64_t *first, int key_bytes, int desc, int64_t P,
                             int graded, int64_t over, uint64_t *codes, void *scratch,
                             int threads);
/* The number of samples sl__ooc_input_splitters takes from n rows, and the row (of the
 * n, in input order) of sample i; rows never descend as i grows. */
int64_t sl__ooc_input_sample_count(int64_t n, int64_t P, int64_t over);
int64_t sl__ooc_input_sample_row(int64_t i, int64_t n, int64_t s);

/* Key ranges from splitter codes (the sort-merge join's, whose GPU kernels compare keys
 * as unsigned, issue 23): codes[0..n) ascending, equal ones allowed, go to out[]
 * strictly ascending with the code of key 0 (2^31 for 4-byte keys, 2^63 for 8-byte
 * ones) among them and a code of 0 dropped (the first range starts there anyway); range
 * i then holds codes [out[i - 1], out[i]) (no bottom for i = 0, no top for the last), and
 * none holds keys of both signs. Returns the number of codes in out (at most n + 1). */
int64_t sl__ooc_range_codes(const uint64_t *codes, int64_t n, int key_bytes, uint64_t *out);
/* Narrow runs' key ranges (the sort-merge join's, debug_smj_narrow): codes[0..n) strictly
 * ascending codes of 4-byte keys (non-zero, below 2^32, as sl__ooc_range_codes gives them)
 * go to out[] strictly ascending with multiples of window << 16 added where a range
 * (from 0 below the first, to 2^32 above the last) spans more than `window` top-16 code
 * values, so that every range spans at most `window` of them (pass 2 decodes a range
 * with that window of each run's table). Returns the number of codes in out (at most
 * n + 65536 / window + 1; none added where no range is that wide). */
int64_t sl__ooc_narrow_codes(const uint64_t *codes, int64_t n, int64_t window, uint64_t *out);
/* The sort-merge join's narrow runs (debug_smj_narrow=auto, issue 23): a run's table
 * (SL__OOC_NARROW_TABLE_BYTES, downloaded in pass 1 whatever its rows) pays where it is at
 * most half of what the run's narrow rows save across the link (2 bytes a row down in
 * pass 1 and 2 up in pass 2): runs of at least this many rows. */
#define SL__OOC_SMJ_NARROW_RUN (SL__OOC_NARROW_TABLE_BYTES / 2)
/* Device bytes pass 2 of the sort-merge join holds for a narrow side of `runs` runs and
 * `ranges` key ranges, beyond its rows: each of the two buffer sets' window of every
 * run's table (at most `window` top-16 values a range, 4 bytes each), and every range's
 * cuts and slice starts of every run (int64, uploaded once). */
int64_t sl__ooc_smj_narrow_bytes(int64_t runs, int64_t ranges, int64_t window);
/* debug_smj_narrow=auto: 1 where a side's runs (`runs` of `run_rows` rows, as pass 1
 * would plan them) are worth keeping narrow: several (one run is joined as it is), of at
 * least SL__OOC_SMJ_NARROW_RUN rows, and pass 2's bytes for them
 * (sl__ooc_smj_narrow_bytes) at most 1/16 of the GPU budget `budget`. */
int sl__ooc_smj_narrow_pays(int64_t run_rows, int64_t runs, int64_t ranges, int64_t window,
                            int64_t budget);

/* Puts ranges [first, last) of P into the output columns out[c] (the whole output, from
 * row 0; a range finds its offset): each by sl__ooc_merge_by_sort, in pieces of at most
 * sub_rows rows cut at exact ranks when it is larger. Boundaries inside the group are
 * searched between the group's ends only, so a task that takes several consecutive
 * ranges pays the full searches once. `split` holds 4 * n_runs words, `scratch`
 * sl__ooc_sort_scratch_bytes(m, sub_rows) bytes. */
void sl__ooc_merge_ranges(const struct sl__ooc_runs *m, const uint64_t *codes, int64_t P,
                          int64_t first, int64_t last, int64_t sub_rows, void *const *out,
                          int64_t *split, void *scratch);

/* Pass 1's configuration (ooc_runs_cuda.c plan_run; host logic, unit-tested): the run
 * size R and the buffer sets. Configurations are ranked in one order that does not
 * depend on the budget: run sizes from the largest (max_run, or all n rows in one run
 * with one set), halving, none below min_run unless all n rows fit one, none over `cap`
 * rows (pipe_runs runs at least) unless halving would go below min_run; at each size
 * max_sets sets (3 where a third may be taken, when that makes 3 runs or more) before 2.
 * The first configuration whose bytes(arg, sets, rows) fit `budget` is taken: whatever
 * fits a budget fits a larger one, so a larger budget takes the same configuration or
 * one ranked before it (issue 23: never a worse pass 1 with more memory, by
 * construction, as far as the order ranks them right). bytes() < 0: that size cannot be
 * sorted (CUB refuses it). Returns 1 with *R and *sets (1 when all rows are one run), 0
 * when nothing fits (or n, min_run or pipe_runs is below 1), < 0 on bytes()'s refusal. */
int sl__ooc_pass1_pick(int64_t n, int64_t min_run, int64_t max_run, int64_t pipe_runs,
                       int max_sets, int64_t budget,
                       int64_t (*bytes)(void *arg, int64_t sets, int64_t rows), void *arg,
                       int64_t *R, int *sets);

#endif /* SL_SORT_OOC_MERGE_H */
