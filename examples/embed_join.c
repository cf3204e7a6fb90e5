/* Embeds sluice and runs a join built with the C API: a primary-key table joined with a
 * foreign-key table on k, with count and sums computed without materializing the rows.
 *   ./embed_join [ROWS]     prints "count=ROWS" when every foreign key found its row */
#include <stdio.h>
#include <stdlib.h>

#include <sluice/sluice.h>

int main(int argc, char **argv)
{
    long long rows = argc > 1 ? atoll(argv[1]) : 1000000;
    sl_engine_t *eng;
    if (sl_engine_open(&eng, NULL) != SL_OK) {
        fprintf(stderr, "engine: %s\n", sl_engine_errmsg(eng));
        sl_engine_close(eng);
        return 1;
    }
    char dim[128], fact[160];
    snprintf(dim, sizeof dim, "rows=%lld kind=unique seed=1 payloads=1 column=k", rows);
    snprintf(fact, sizeof fact, "rows=%lld kind=fk pk_rows=%lld seed=2 payloads=1 column=k",
             rows, rows);
    sl_plan_t *plan;
    int d, f, j, rc;
    sl_plan_create(&plan);
    if ((rc = sl_plan_add(plan, "gen.keys", NULL, 0, dim, &d)) != SL_OK ||
        (rc = sl_plan_add(plan, "gen.keys", NULL, 0, fact, &f)) != SL_OK ||
        (rc = sl_plan_add(plan, "join", (int[]){f, d}, 2, "on=k output=aggregate", &j)) != SL_OK ||
        (rc = sl_plan_output(plan, j, "result")) != SL_OK) {
        fprintf(stderr, "plan: %s\n", sl_plan_errmsg(plan));
        sl_plan_destroy(plan);
        sl_engine_close(eng);
        return 1;
    }
    sl_query_t *q;
    int exit_code = 1;
    if (sl_query_create(eng, plan, &q) != SL_OK || sl_query_run(q) != SL_OK) {
        fprintf(stderr, "query: %s\n", q ? sl_query_errmsg(q) : sl_plan_errmsg(plan));
    } else {
        sl_table_t *t;
        struct sl_column c;
        sl_query_result(q, "result", &t);
        sl_batch_column(sl_table_batch(t, 0), 0, &c);
        long long count = ((const long long *)c.data)[c.offset];
        printf("count=%lld\n", count);
        exit_code = count == rows ? 0 : 1;
        sl_table_unref(t);
    }
    sl_query_destroy(q);
    sl_plan_destroy(plan);
    sl_engine_close(eng);
    return exit_code;
}
