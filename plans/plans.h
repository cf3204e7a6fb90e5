/* Ready-made plans, written against the public API only. The sluice command's `demo`
 * runs them; embedders may call them too. plans/files holds each as a plan file. On
 * failure the plan's message says why. */
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
/* The rows of plans/files/demo.plan (2^20), which `sluice demo` runs by default. */
#define SL_PLANS_DEMO_ROWS ((int64_t)1 << 20)

/* paper-003's join workloads, output "joined" (materialized rows): `workload` is narrow
 * (4-byte keys, one payload per side), wide (two payloads), skew (foreign keys Zipf 1.0),
 * match_ratio (two payloads, 25% of the foreign keys match) or 8byte (8-byte keys and
 * payloads); `rows` per side, primary keys joined with foreign keys. SL_ENOTFOUND for
 * another name. */
int sl_plans_join(sl_plan_t *plan, const char *workload, int64_t rows);

/* A star join sequence: a fact table of `rows` rows with three foreign keys joined with
 * dimensions of rows/4, 65,536 and 4,096 rows; output "star" (count and sums). */
int sl_plans_star_join(sl_plan_t *plan, int64_t rows);

/* Count, sum, min and max per key over 1,000 distinct keys; output "groupby". */
int sl_plans_groupby(sl_plan_t *plan, int64_t rows);

/* Random 4-byte keys with one payload sorted ascending; output "sorted". */
int sl_plans_sort(sl_plan_t *plan, int64_t rows);

/* k-means, 16 clusters of `points` 8-dimensional points, 10 iterations; output
 * "centroids". */
int sl_plans_kmeans(sl_plan_t *plan, int64_t points);

#endif /* SLUICE_PLANS_H */
