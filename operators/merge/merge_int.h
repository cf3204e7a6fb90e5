/* Internal CPU kernels of multiway merging (used by the merge operator, and later by
 * sort-merge joins): co-ranks that split the output of k sorted runs into equal shares,
 * and a loser-tree merge of one share.
 *
 * A run is an ascending array of uint64 key codes (see common/op_common.h for codes of
 * typed values) whose rows are numbered base .. base + n - 1 in the merged input. The
 * merge is stable: equal keys come out in run order, then in their order within a run.
 */
#ifndef SLUICE_OPERATORS_MERGE_INT_H
#define SLUICE_OPERATORS_MERGE_INT_H

#include "operators.h"

struct sl__merge_run {
    const uint64_t *keys; /* keys[lo .. hi) are this run's rows */
    int64_t lo, hi;
    int64_t base;         /* row number of keys[lo] */
};

/* Co-rank of output rank r (0 <= r <= total rows): split[j] = rows of run j (counted
 * from runs[j].lo) that come before output position r. Tasks that merge
 * [corank(r0), corank(r1)) of every run write exactly output rows [r0, r1).
 * Cost: 64 binary searches per run. */
void sl__merge_corank(const struct sl__merge_run *runs, int k, int64_t r, int64_t *split);

/* Merges rows [runs[j].lo + from[j], runs[j].lo + to[j]) of every run j into out (row
 * numbers), with a loser tree (a plain two-way merge when k = 2). */
void sl__merge_runs(const struct sl__merge_run *runs, int k, const int64_t *from,
                    const int64_t *to, uint64_t *out);

#endif /* SLUICE_OPERATORS_MERGE_INT_H */
