/* sluice explain PLAN: what the engine would do with a plan file (sl_query_explain), as a
 * report or as JSON; with --analyze it runs the plan and adds what it measured. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int usage(FILE *f, int rc)
{
    fprintf(f, "usage: sluice explain PLAN_FILE [--analyze] [--json | --format text|json]\n"
               "       [--threads N] [--gpus N [--split-gpu]] [--gpu-mem BYTES] [--host-mem BYTES]\n"
               "       [--placement cpu|gpu|auto|coprocess] [--trace FILE] [--plugin FILE.so ...]\n"
               "       [--set NAME=VALUE ...] (engine options: sluice options)\n"
               "Shows each pipeline of a plan file (source -> operators -> sink), where it\n"
               "would run and why, its tasks, the estimated cost per task, the bytes to move\n"
               "between host and GPU and the estimated peak memory against the budgets\n"
               "(--host-mem, --gpu-mem). --analyze also runs the plan and shows what it\n"
               "measured beside the estimates. --json (or --format json) prints the same as\n"
               "JSON (fields in docs/CLI.md).\n");
    return rc;
}

int cmd_explain(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c);
    const char *path = NULL;
    bool analyze = false, json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return usage(stdout, 0);
        if (!strcmp(argv[i], "--analyze")) {
            analyze = true;
            continue;
        }
        if (!strcmp(argv[i], "--format")) {
            const char *f = i + 1 < argc ? argv[++i] : "";
            if (strcmp(f, "json") && strcmp(f, "text") && strcmp(f, "table"))
                return cli_usage_fail("explain: --format: '%s' is not text or json", f);
            json = !strcmp(f, "json");
            continue;
        }
        int rc = cli_plan_arg(&c, argc, argv, &i, &path);
        if (rc)
            return rc;
    }
    json |= c.json;
    if (!path) {
        cli_fail("explain: no plan file given");
        return usage(stderr, 2);
    }
    struct cli_session s;
    if (cli_session_open(&s, path, &c))
        return 1;
    sl_query_t *q = s.q;
    const struct sl_explain *ex;
    int exit_code = 0;
    if (sl_query_explain(q, &ex) != SL_OK) { /* the estimates, before any run */
        exit_code = cli_fail("%s", sl_last_errmsg());
    } else if (analyze && cli_query_run(q) != SL_OK) {
        exit_code = cli_fail("the plan failed: %s", sl_query_errmsg(q));
    } else if (json) {
        printf("%s\n", sl_query_explain_json(q));
    } else if (sl_query_explain(q, &ex) != SL_OK) { /* again: adds what the run measured */
        exit_code = cli_fail("%s", sl_last_errmsg());
    } else {
        cli_explain_text(path, s.plan, ex, c.placement, s.eng,
                         analyze ? sl_query_profile_json(q) : NULL);
        if (analyze && ex->n_gpus > 1)
            cli_explain_devices_measured(sl_query_profile_json(q));
    }
    cli_session_close(&s);
    return exit_code;
}
