/* sluice tpch --explain and --explain-analyze: `sluice explain`'s report (explain_text.c)
 * for each selected query's plan, bound to the loaded tables, so one sees on the real
 * data where every pipeline runs and why; with --explain-analyze after a warm-up run,
 * the measured run beside the estimates. */
#include <stdio.h>
#include <string.h>

#include "tpch.h"

/* One query: the plan created, explained, (run,) explained again. 0 or 1. */
static int explain_plan(sl_engine_t *eng, const struct tpch_args *a, const char *path,
                        sl_plan_t *plan, int query)
{
    if (a->explain == TPCH_EXPLAIN_ANALYZE) { /* a warm-up, so the measured run is hot */
        sl_query_t *w = NULL;
        int rc = sl_query_create(eng, plan, &w);
        if (rc == SL_OK)
            rc = cli_query_run(w);
        if (rc != SL_OK)
            cli_fail("%s: %s", path, w ? sl_query_errmsg(w) : sl_plan_errmsg(plan));
        sl_query_destroy(w);
        if (rc != SL_OK)
            return 1;
    }
    sl_query_t *q = NULL;
    if (sl_query_create(eng, plan, &q) != SL_OK)
        return cli_fail("%s: %s", path, sl_plan_errmsg(plan));
    const struct sl_explain *ex;
    int exit_code = 0;
    char trace[4096];
    if (a->trace && a->explain == TPCH_EXPLAIN_ANALYZE)
        snprintf(trace, sizeof trace, "%s/q%02d.json", a->trace, query);
    if (sl_query_explain(q, &ex) != SL_OK)
        exit_code = cli_fail("%s: %s", path, sl_last_errmsg());
    else if (a->trace && a->explain == TPCH_EXPLAIN_ANALYZE && sl_query_trace(q, trace) != SL_OK)
        exit_code = cli_fail("%s: --trace: %s", path, sl_query_errmsg(q));
    else if (a->explain == TPCH_EXPLAIN_ANALYZE && cli_query_run(q) != SL_OK)
        exit_code = cli_fail("%s: the plan failed: %s", path, sl_query_errmsg(q));
    else if (sl_query_explain(q, &ex) != SL_OK) /* again: adds what the run measured */
        exit_code = cli_fail("%s: %s", path, sl_last_errmsg());
    else
        cli_explain_text(path, plan, ex, a->common.placement, eng,
                         a->explain == TPCH_EXPLAIN_ANALYZE ? sl_query_profile_json(q) : NULL);
    if (!exit_code && a->trace && a->explain == TPCH_EXPLAIN_ANALYZE) { /* and its profile */
        snprintf(trace, sizeof trace, "%s/q%02d.profile.json", a->trace, query);
        FILE *f = fopen(trace, "w");
        const char *prof = sl_query_profile_json(q);
        if (!f || fputs(prof ? prof : "{}", f) < 0 || fclose(f) != 0)
            exit_code = cli_fail("cannot write '%s'", trace);
    }
    sl_query_destroy(q);
    return exit_code;
}

int tpch_explain_query(sl_engine_t *eng, const struct tpch_args *a, const char *plans_dir,
                       const struct tpch_data *d, int query)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/q%02d.plan", plans_dir, query);
    printf("== q%02d ==\n", query);
    sl_plan_t *plan = cli_load_plan_tables(path, d->names, d->tables, TPCH_TABLES);
    if (!plan) /* a missing plan too: the error names the file */
        return 1;
    int rc = explain_plan(eng, a, path, plan, query);
    sl_plan_destroy(plan);
    printf("\n");
    fflush(stdout);
    return rc;
}
