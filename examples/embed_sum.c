/* embed_sum: the smallest program that embeds sluice. It sums the sequence 0..n-1
 * (gen.sequence feeding aggregate.sum), prints the count and the sum, and checks the
 * sum against n(n-1)/2. Build it against an installed sluice with pkg-config:
 *
 *     cc -std=c17 -o embed_sum embed_sum.c $(pkg-config --cflags --libs sluice)
 *     ./embed_sum [n]          (default n = 1000000)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <sluice/sluice.h>

static int64_t value(sl_batch_t *b, const char *name)
{
    struct sl_column col;
    if (sl_batch_column(b, sl_batch_column_index(b, name), &col) != SL_OK ||
        col.type != SL_TYPE_INT64)
        return -1;
    return ((const int64_t *)col.data)[col.offset];
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? strtoll(argv[1], NULL, 10) : 1000000;
    sl_engine_t *eng = NULL;
    sl_plan_t *plan = NULL;
    sl_query_t *q = NULL;
    sl_table_t *result = NULL;
    char rows[32];
    int gen, sum, ok = 0;
    snprintf(rows, sizeof rows, "rows=%" PRId64, n);

    if (sl_engine_open(&eng, NULL) != SL_OK) {
        fprintf(stderr, "engine: %s\n", eng ? sl_engine_errmsg(eng) : sl_last_errmsg());
    } else if (sl_plan_create(&plan) != SL_OK ||
               sl_plan_add(plan, "gen.sequence", NULL, 0, rows, &gen) != SL_OK ||
               sl_plan_add(plan, "aggregate.sum", &gen, 1, "column=x", &sum) != SL_OK ||
               sl_plan_output(plan, sum, "total") != SL_OK) {
        fprintf(stderr, "plan: %s\n", plan ? sl_plan_errmsg(plan) : sl_last_errmsg());
    } else if (sl_query_create(eng, plan, &q) != SL_OK || sl_query_run(q) != SL_OK ||
               sl_query_result(q, "total", &result) != SL_OK) {
        fprintf(stderr, "query: %s\n", q ? sl_query_errmsg(q) : sl_engine_errmsg(eng));
    } else {
        sl_batch_t *b = sl_table_batch(result, 0);
        int64_t count = value(b, "count"), total = value(b, "sum");
        printf("count=%" PRId64 " sum=%" PRId64 "\n", count, total);
        ok = count == n && total == n * (n - 1) / 2;
        if (!ok)
            fprintf(stderr, "expected count=%" PRId64 " sum=%" PRId64 "\n", n, n * (n - 1) / 2);
    }
    sl_table_unref(result);
    sl_query_destroy(q);
    sl_plan_destroy(plan);
    sl_engine_close(eng);
    return ok ? 0 : 1;
}
