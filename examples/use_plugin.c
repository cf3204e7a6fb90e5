/* Loads a plugin and uses its operator from C: the five largest of a million generated
 * values, by the example plugin's topk (examples/plugin/topk.c).
 *   ./use_plugin path/to/topk.so */
#include <stdio.h>

#include <sluice/sluice.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
        return 2;
    }
    /* Operators are process-wide: load once, before building plans that use them. */
    if (sl_plugin_load(argv[1]) != SL_OK) {
        fprintf(stderr, "%s\n", sl_last_errmsg());
        return 1;
    }
    sl_plan_t *plan;
    int gen, top;
    sl_plan_create(&plan);
    sl_plan_add(plan, "gen.sequence", NULL, 0, "rows=1M", &gen);
    if (sl_plan_add(plan, "topk", &gen, 1, "column=x k=5", &top) != SL_OK) {
        fprintf(stderr, "%s\n", sl_plan_errmsg(plan));
        sl_plan_destroy(plan);
        return 1;
    }
    sl_plan_output(plan, top, "top5");

    sl_engine_t *eng;
    sl_engine_open(&eng, NULL);
    sl_query_t *q;
    int rc = sl_query_create(eng, plan, &q);
    if (rc == SL_OK)
        rc = sl_query_run(q);
    sl_table_t *t;
    if (rc != SL_OK) {
        fprintf(stderr, "%s\n", q ? sl_query_errmsg(q) : sl_plan_errmsg(plan));
    } else if (sl_query_result(q, "top5", &t) == SL_OK) {
        printf("top5:");
        for (int64_t b = 0; b < sl_table_num_batches(t); b++) {
            struct sl_column c;
            sl_batch_column(sl_table_batch(t, b), 0, &c);
            for (int64_t i = 0; i < c.length; i++)
                printf(" %lld", (long long)((const int64_t *)c.data)[c.offset + i]);
        }
        printf("\n");
        sl_table_unref(t);
    }
    sl_query_destroy(q);
    sl_plan_destroy(plan);
    sl_engine_close(eng);
    return rc == SL_OK ? 0 : 1;
}
