/* Runs a plan file (docs/PLAN_FORMAT.md) from C and prints the row count of each output.
 *   ./run_plan PLAN_FILE */
#include <stdio.h>
#include <stdlib.h>

#include <sluice/sluice.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s PLAN_FILE\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    sl_plan_t *plan;
    sl_plan_create(&plan);
    if (sl_plan_parse(plan, text, argv[1]) != SL_OK) {
        fprintf(stderr, "%s\n", sl_plan_errmsg(plan)); /* file:line:col: message */
        sl_plan_destroy(plan);
        return 1;
    }
    sl_engine_t *eng;
    sl_engine_open(&eng, NULL);
    sl_query_t *q;
    int rc = sl_query_create(eng, plan, &q);
    if (rc == SL_OK)
        rc = sl_query_run(q);
    if (rc != SL_OK) {
        fprintf(stderr, "%s\n", q ? sl_query_errmsg(q) : sl_plan_errmsg(plan));
    } else {
        for (int i = 0; i < sl_plan_num_outputs(plan); i++) {
            const char *name = sl_plan_output_at(plan, i, NULL);
            sl_table_t *t;
            if (name && sl_query_result(q, name, &t) == SL_OK) {
                printf("%s: %lld rows\n", name, (long long)sl_table_num_rows(t));
                sl_table_unref(t);
            }
        }
    }
    sl_query_destroy(q);
    sl_plan_destroy(plan);
    sl_engine_close(eng);
    return rc == SL_OK ? 0 : 1;
}
