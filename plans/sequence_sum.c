/* The first end-to-end plan: a generated sequence feeding a global count and sum. */
#include <inttypes.h>
#include <stdio.h>

#include "plans.h"

int sl_plans_sequence_sum(sl_plan_t *plan, int64_t rows)
{
    char opts[64];
    int gen, sum, rc;
    snprintf(opts, sizeof opts, "rows=%" PRId64, rows);
    if ((rc = sl_plan_add(plan, "gen.sequence", NULL, 0, opts, &gen)) != SL_OK ||
        (rc = sl_plan_add(plan, "aggregate.sum", (int[]){gen}, 1, "column=x", &sum)) != SL_OK)
        return rc;
    return sl_plan_output(plan, sum, "result");
}
