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

#endif /* SLUICE_PLANS_H */
