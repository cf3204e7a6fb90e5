/* The demo plan: generated data through a join, a group-by and k-means. It is written
 * in the plan-file language (plans/files/demo.plan holds the same at its default size),
 * so it also shows that a plan file and the C API build the same thing. */
#include <inttypes.h>
#include <stdio.h>

#include "plans.h"

int sl_plans_demo(sl_plan_t *plan, int64_t rows)
{
    char text[2048];
    int64_t points = rows / 4 > 0 ? rows / 4 : 1;
    snprintf(text, sizeof text,
             "# a primary-key table and a foreign-key table joined on k: count and sums\n"
             "dim  = gen.keys rows=%" PRId64 " kind=unique seed=1 payloads=1 column=k\n"
             "fact = gen.keys rows=%" PRId64 " kind=fk pk_rows=%" PRId64 " seed=2 payloads=1 column=k\n"
             "j    = join(fact, dim) on=k output=aggregate\n"
             "output j as join\n"
             "# a group-by over 1,000 distinct keys\n"
             "g    = gen.keys rows=%" PRId64 " kind=m2m distinct=1000 seed=3 payloads=1 column=k\n"
             "agg  = aggregate(g) keys=k aggs=\"count(*), sum(p1)\"\n"
             "output agg as groupby\n"
             "# k-means: 16 clusters of 8-dimensional points, 10 Lloyd iterations\n"
             "pts  = gen.blobs points=%" PRId64 " dims=8 k=16 seed=4\n"
             "km   = kmeans(pts) k=16 max_iter=10 tol=0 seed=7\n"
             "output km as kmeans\n",
             rows, rows, rows, rows, points);
    return sl_plan_parse(plan, text, "demo");
}
