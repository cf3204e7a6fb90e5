/* libFuzzer target: plan text through parse, query creation, explain (struct and JSON)
 * and, for plans explain estimates as small, a run under a watchdog, with its results
 * read back. Every step must succeed or fail with an error, never crash, hang or leak;
 * nothing may stay allocated after the engine closes. Plans that touch files (scan.*,
 * write.*) are not run: a fuzzed path could name anything (the CSV and binary-file
 * targets cover those operators). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

#define MAX_ROWS 200000    /* estimated source rows of any pipeline */
#define MAX_TASKS 4096     /* estimated tasks of any pipeline */
#define RUN_MS 1000        /* the watchdog's cancel */

/* 1 when the plan names an operator on files. */
static int touches_files(const sl_plan_t *p)
{
    for (int i = 0; i < sl_plan_num_nodes(p); i++) {
        const char *op = sl_plan_node_op(p, i);
        if (op && (strncmp(op, "scan.", 5) == 0 || strncmp(op, "write.", 6) == 0) &&
            strcmp(op, "scan.table") != 0)
            return 1;
    }
    return 0;
}

/* 1 when every pipeline's estimates are small. Those after a sink are unknown until it
 * runs (a join's output can still grow large: the host budget and the watchdog stop it). */
static int small_enough(sl_query_t *q)
{
    const struct sl_explain *x;
    if (sl_query_explain(q, &x) != SL_OK)
        return 0;
    for (int i = 0; i < x->n_pipelines; i++) {
        const struct sl_explain_pipeline *p = &x->pipelines[i];
        if (p->rows > MAX_ROWS || p->tasks > MAX_TASKS)
            return 0;
    }
    return x->host_peak >= 0 && x->host_peak < ((int64_t)64 << 20);
}

static void run_plan(sl_plan_t *p)
{
    sl_engine_t *e = fuzz_engine_open();
    sl_query_t *q = NULL;
    int rc = sl_query_create(e, p, &q);
    fuzz_check_code(rc);
    if (rc == SL_OK) {
        (void)sl_query_explain_json(q);
        int runs = !touches_files(p) && small_enough(q);
        if (getenv("SLUICE_FUZZ_VERBOSE")) /* to see what a corpus reaches */
            fprintf(stderr, "fuzz_plan_run: %s\n", runs ? "runs" : "explained only");
        if (runs) {
            if (fuzz_query_run(q, RUN_MS) == SL_OK)
                for (int i = 0; i < sl_plan_num_outputs(p); i++)
                    fuzz_touch_result(q, sl_plan_output_at(p, i, NULL));
            (void)sl_query_profile_json(q);
        }
        sl_query_destroy(q);
    }
    sl_engine_close(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    sl_plan_t *plan;
    if (sl_plan_create(&plan) == SL_OK) {
        int rc = sl_plan_parse(plan, text, "fuzz");
        fuzz_check_code(rc);
        if (rc == SL_OK)
            run_plan(plan);
        sl_plan_destroy(plan);
    }
    free(text);
    fuzz_check_no_live_allocs();
    return 0;
}
