/* Ready-made plans, written against the public API only. The sluice command's `demo`
 * runs them; embedders may call them too. More plans (the paper-003 join workloads, a
 * star join sequence, group-by, sort, k-means) join this folder as their operators land
 * (issue #9). */
#ifndef SLUICE_PLANS_H
#define SLUICE_PLANS_H

#include <stdint.h>

#include <sluice/sluice.h>

/* The first end-to-end plan: gen.sequence(rows) -> aggregate.sum(x), output "result"
 * with columns count and sum (sum = rows*(rows-1)/2). On failure the plan's message
 * says why. */
int sl_plans_sequence_sum(sl_plan_t *plan, int64_t rows);

/* The demo: outputs "join" (count and sums of a PK-FK join of `rows` x `rows`),
 * "groupby" (count and sum over 1,000 groups of `rows` rows) and "kmeans" (16 centroids
 * of rows/4 8-dimensional points after 10 iterations). */
int sl_plans_demo(sl_plan_t *plan, int64_t rows);

#endif /* SLUICE_PLANS_H */
