/* sluice run PLAN: runs a plan file (docs/PLAN_FORMAT.md) and prints its outputs. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sluice/op.h> /* the operator definitions `sluice operators` lists */

#include "cli.h"

static int usage(FILE *f, int rc)
{
    fprintf(f, "usage: sluice run PLAN_FILE [--format table|csv|json] [--limit N] [--json]\n"
           "       [--threads N] [--gpus N [--split-gpu]] [--gpu-mem BYTES] [--host-mem BYTES]\n"
           "       [--placement cpu|gpu|auto|coprocess] [--trace FILE] [--plugin FILE.so ...]\n"
           "       [--set NAME=VALUE ...] (engine options: sluice options) [--ranks N]\n"
           "Runs a plan file (docs/PLAN_FORMAT.md) and prints its outputs: an aligned table\n"
           "per output by default (at most --limit rows, 20 by default), or CSV/JSON with\n"
           "--format; --json adds the profile. A progress bar is drawn on stderr when it\n"
           "is a terminal. --ranks N runs it on N MPI ranks (mpirun -n N), as does starting\n"
           "it under mpirun: each rank runs the plan on its share; rank 0 prints\n"
           "(docs/DISTRIBUTED.md).\n");
    return rc;
}

int cmd_run(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c);
    const char *path = NULL;
    enum cli_format fmt = CLI_TABLE;
    int64_t limit = 20;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return usage(stdout, 0);
        if ((!strcmp(argv[i], "--format") || !strcmp(argv[i], "--limit")) && i + 1 >= argc)
            return cli_usage_fail("%s needs a value", argv[i]);
        if (!strcmp(argv[i], "--format")) {
            const char *f = argv[++i];
            fmt = !strcmp(f, "csv")     ? CLI_CSV
                  : !strcmp(f, "json")  ? CLI_JSON
                  : !strcmp(f, "table") ? CLI_TABLE
                                        : (enum cli_format)-1;
            if ((int)fmt < 0)
                return cli_usage_fail("--format: '%s' is not table, csv or json", f);
            continue;
        }
        if (!strcmp(argv[i], "--ranks")) {
            int64_t n;
            if (i + 1 >= argc || cli_parse_count(argv[++i], &n) < 0 || n < 1 || n > 4096)
                return cli_usage_fail("--ranks needs a count of ranks (1..4096)");
            return cli_ranks_exec((int)n, argc, argv);
        }
        if (!strcmp(argv[i], "--limit")) {
            if (cli_parse_count(argv[++i], &limit) < 0)
                return cli_usage_fail("--limit: '%s' is not a count", argv[i]);
            continue;
        }
        int rc = cli_plan_arg(&c, argc, argv, &i, &path);
        if (rc)
            return rc;
    }
    if (!path) {
        cli_fail("run: no plan file given");
        return usage(stderr, 2);
    }
    struct cli_session s;
    if (cli_session_open(&s, path, &c))
        return 1;
    sl_plan_t *plan = s.plan;
    sl_query_t *q = s.q;
    int exit_code = 0;
    struct cli_progress pr;
    cli_progress_start(&pr);
    if (isatty(2))
        sl_query_on_progress(q, cli_progress_draw, &pr, 200);
    int64_t t0 = cli_now_ns();
    int rc = cli_query_run(q);
    double ms = (cli_now_ns() - t0) / 1e6;
    cli_progress_clear(&pr);
    int rank = cli_engine_rank(s.eng);
    if (rc != SL_OK) {
        exit_code = rank ? cli_fail("rank %d: the plan failed: %s", rank, sl_query_errmsg(q))
                         : cli_fail("the plan failed: %s", sl_query_errmsg(q));
    } else if (rank == 0) { /* the other ranks' results are their shares */
        for (int n = 0; n < sl_plan_num_outputs(plan); n++) {
            const char *out = sl_plan_output_at(plan, n, NULL);
            sl_table_t *t;
            if (!out || sl_query_result(q, out, &t) != SL_OK)
                continue;
            cli_print_table(out, t, fmt, limit);
            sl_table_unref(t);
        }
        if (c.json)
            printf("%s\n", sl_query_profile_json(q));
        else if (fmt == CLI_TABLE)
            printf("(%.1f ms)\n", ms);
    }
    cli_session_close(&s);
    return exit_code;
}

static void print_op(void *user, const struct sl_op_def *d)
{
    (void)user;
    if (!strncmp(d->name, "test.", 5) || !strncmp(d->name, "core.", 5))
        return;
    printf("%-18s %d..%d inputs  %s\n", d->name, d->min_inputs, d->max_inputs,
           d->doc ? d->doc : "");
    for (unsigned i = 0; i < d->n_options; i++) {
        const struct sl_option_def *o = &d->options[i];
        /* Exactly one of: required, optional without a value, or its default. */
        printf("    %-16s %s (", o->name, o->doc ? o->doc : "");
        if (!o->default_value)
            printf("required)\n");
        else if (!o->default_value[0])
            printf("optional)\n");
        else
            printf("default %s)\n", o->default_value);
    }
}

int cmd_operators(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: sluice operators [--plugin FILE.so ...]\n"
                   "Lists the operators (with those of the plugins given) and their options.\n");
            return 0;
        }
        int r = cli_common_option(&c, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r == 0)
            return cli_usage_fail("operators: unknown argument '%s' (see sluice operators --help)",
                            argv[i]);
    }
    sl_registry_foreach(sl_registry_global(), print_op, NULL);
    return 0;
}
