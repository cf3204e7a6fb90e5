/* The benchmark workloads as plans built with the C API: paper-003's joins, a star join
 * sequence, group-by, sort and k-means. plans/files/<name>.plan holds each as a plan
 * file at rows = 2^20, and tests/integration/plans/test_workloads.c checks that both
 * give the same results. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "plans.h"

/* Adds a node with printf-style options; returns its id, or a negative code. */
__attribute__((format(printf, 5, 6)))
static int add(sl_plan_t *plan, const char *op, const int *inputs, int n_inputs,
               const char *fmt, ...)
{
    char opts[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(opts, sizeof opts, fmt, ap);
    va_end(ap);
    int id, rc = sl_plan_add(plan, op, inputs, n_inputs, opts, &id);
    return rc < 0 ? rc : id;
}

/* paper-003's join workloads: key type, payloads per side, match ratio, Zipf. */
static const struct {
    const char *name, *type;
    int payloads;
    const char *match, *zipf;
} joins[] = {
    {"narrow", "int32", 1, "1", "0"},      {"wide", "int32", 2, "1", "0"},
    {"skew", "int32", 1, "1", "1"},        {"match_ratio", "int32", 2, "0.25", "0"},
    {"8byte", "int64", 1, "1", "0"},
};

int sl_plans_join(sl_plan_t *plan, const char *workload, int64_t rows)
{
    for (size_t i = 0; i < sizeof joins / sizeof joins[0]; i++) {
        if (strcmp(workload, joins[i].name))
            continue;
        int build = add(plan, "gen.keys", NULL, 0,
                        "rows=%" PRId64 " kind=unique type=%s seed=1 payloads=%d column=k", rows,
                        joins[i].type, joins[i].payloads);
        if (build < 0)
            return build;
        int probe = add(plan, "gen.keys", NULL, 0,
                        "rows=%" PRId64 " kind=fk type=%s pk_rows=%" PRId64
                        " match=%s zipf=%s seed=2 payloads=%d column=k",
                        rows, joins[i].type, rows, joins[i].match, joins[i].zipf,
                        joins[i].payloads);
        if (probe < 0)
            return probe;
        int j = add(plan, "join", (int[]){probe, build}, 2, "on=k");
        return j < 0 ? j : sl_plan_output(plan, j, "joined");
    }
    return SL_ENOTFOUND;
}

/* Dimension `d` of the star: unique keys 0..n-1 in column `key`, payload renamed a<d>. */
static int star_dim(sl_plan_t *plan, int d, const char *key, int64_t n)
{
    int g = add(plan, "gen.keys", NULL, 0,
                "rows=%" PRId64 " kind=unique seed=%d payloads=1 column=%s", n, d + 1, key);
    if (g < 0)
        return g;
    return add(plan, "project", &g, 1, "columns=\"%s, a%d = p1\"", key, d);
}

int sl_plans_star_join(sl_plan_t *plan, int64_t rows)
{
    int64_t n1 = rows / 4 > 0 ? rows / 4 : 1;
    int fact = add(plan, "gen.keys", NULL, 0,
                   "rows=%" PRId64 " kind=fk pk_rows=%" PRId64 " seed=1 payloads=3 column=d1",
                   rows, n1);
    if (fact < 0)
        return fact;
    int cur = add(plan, "project", &fact, 1,
                  "columns=\"d1, d2 = CAST(p1 %% 65536 AS int32), "
                  "d3 = CAST(p2 %% 4096 AS int32), v = p3\"");
    const char *keys[] = {"d1", "d2", "d3"};
    const int64_t sizes[] = {n1, 65536, 4096};
    for (int d = 0; d < 3 && cur >= 0; d++) {
        int dim = star_dim(plan, d + 1, keys[d], sizes[d]);
        if (dim < 0)
            return dim;
        cur = add(plan, "join", (int[]){cur, dim}, 2, "on=%s%s", keys[d],
                  d == 2 ? " output=aggregate" : "");
    }
    return cur < 0 ? cur : sl_plan_output(plan, cur, "star");
}

/* A generator feeding one operator whose output is the result `out`. */
static int gen_then(sl_plan_t *plan, const char *gen, const char *gen_opts, const char *op,
                    const char *op_opts, const char *out)
{
    int g = add(plan, gen, NULL, 0, "%s", gen_opts);
    int n = g < 0 ? g : add(plan, op, &g, 1, "%s", op_opts);
    return n < 0 ? n : sl_plan_output(plan, n, out);
}

int sl_plans_groupby(sl_plan_t *plan, int64_t rows)
{
    char opts[128];
    snprintf(opts, sizeof opts,
             "rows=%" PRId64 " kind=m2m distinct=1000 seed=3 payloads=1 column=k", rows);
    return gen_then(plan, "gen.keys", opts, "aggregate",
                    "keys=k aggs=\"count(*), sum(p1), min(p1), max(p1)\"", "groupby");
}

int sl_plans_sort(sl_plan_t *plan, int64_t rows)
{
    char opts[128];
    snprintf(opts, sizeof opts,
             "rows=%" PRId64 " kind=m2m distinct=2^30 seed=5 payloads=1 column=k", rows);
    return gen_then(plan, "gen.keys", opts, "sort", "by=k", "sorted");
}

int sl_plans_kmeans(sl_plan_t *plan, int64_t points)
{
    char opts[128];
    snprintf(opts, sizeof opts, "points=%" PRId64 " dims=8 k=16 seed=4", points);
    return gen_then(plan, "gen.blobs", opts, "kmeans", "k=16 max_iter=10 tol=0 seed=7",
                    "centroids");
}
