/* sluice run PLAN / sluice explain PLAN: plan files (docs/PLAN_FORMAT.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define MAX_PLAN_BYTES (16 << 20)

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        cli_fail("cannot open plan '%s': %s", path, strerror(errno));
        return NULL;
    }
    char *buf = malloc(MAX_PLAN_BYTES + 1);
    size_t n = buf ? fread(buf, 1, MAX_PLAN_BYTES + 1, f) : 0;
    bool err = ferror(f);
    fclose(f);
    if (!buf || err || n > MAX_PLAN_BYTES) {
        free(buf);
        cli_fail("cannot read plan '%s' (%s)", path, n > MAX_PLAN_BYTES ? "larger than 16 MiB" : "read error");
        return NULL;
    }
    if (memchr(buf, 0, n)) {
        free(buf);
        cli_fail("'%s' is not a plan file: it contains NUL bytes", path);
        return NULL;
    }
    buf[n] = 0;
    return buf;
}

static int usage(const char *cmd, int rc)
{
    printf("usage: sluice %s PLAN_FILE [--format table|csv|json] [--limit N] [--json]\n"
           "       [--threads N] [--gpus N] [--gpu-mem BYTES] [--host-mem BYTES]\n"
           "       [--placement cpu|gpu|auto] [--trace FILE] [--plugin FILE.so ...]%s\n%s",
           cmd, !strcmp(cmd, "explain") ? " [--analyze]" : "", !strcmp(cmd, "run")
                    ? "Runs a plan file (docs/PLAN_FORMAT.md) and prints its outputs.\n"
                    : "Shows the pipelines of a plan file and where they would run, as JSON;\n"
                      "with --analyze it also runs the plan and adds the measured profile.\n");
    return rc;
}

int cmd_run(int argc, char **argv)
{
    bool explain = !strcmp(argv[0], "explain");
    struct cli_common c;
    cli_common_init(&c);
    const char *path = NULL;
    enum cli_format fmt = CLI_TABLE;
    int64_t limit = 20;
    bool analyze = false;
    for (int i = 1; i < argc; i++) {
        if (explain && !strcmp(argv[i], "--analyze")) {
            analyze = true;
            continue;
        }
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return usage(argv[0], 0);
        if (!strcmp(argv[i], "--format") && i + 1 < argc) {
            const char *f = argv[++i];
            fmt = !strcmp(f, "csv") ? CLI_CSV : !strcmp(f, "json") ? CLI_JSON : !strcmp(f, "table") ? CLI_TABLE : -1;
            if ((int)fmt < 0)
                return cli_fail("--format: '%s' is not table, csv or json", f);
            continue;
        }
        if (!strcmp(argv[i], "--limit") && i + 1 < argc) {
            if (cli_parse_count(argv[++i], &limit) < 0)
                return cli_fail("--limit: '%s' is not a count", argv[i]);
            continue;
        }
        int r = cli_common_option(&c, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r == 1)
            continue;
        if (argv[i][0] == '-')
            return cli_fail("%s: unknown option '%s' (see sluice %s --help)", argv[0], argv[i],
                            argv[0]);
        if (path)
            return cli_fail("%s: one plan file at a time ('%s' and '%s')", argv[0], path, argv[i]);
        path = argv[i];
    }
    if (!path)
        return usage(argv[0], 2);
    char *text = read_file(path);
    if (!text)
        return 1;
    sl_plan_t *plan;
    if (sl_plan_create(&plan) != SL_OK) {
        free(text);
        return cli_fail("%s", sl_last_errmsg());
    }
    int rc = sl_plan_parse(plan, text, path);
    free(text);
    if (rc != SL_OK) {
        cli_fail("%s", sl_plan_errmsg(plan));
        sl_plan_destroy(plan);
        return 1;
    }
    sl_engine_t *eng = cli_open_engine(&c);
    if (!eng) {
        sl_plan_destroy(plan);
        return 1;
    }
    sl_query_t *q = NULL;
    int exit_code = 0;
    if (sl_query_create(eng, plan, &q) != SL_OK) {
        exit_code = cli_fail("%s", sl_plan_errmsg(plan));
    } else if (explain && analyze) {
        char *plan_json = strdup(sl_query_explain_json(q)); /* valid until the next call */
        if (!plan_json || sl_query_run(q) != SL_OK)
            exit_code = cli_fail("the plan failed: %s",
                                 plan_json ? sl_query_errmsg(q) : "out of memory");
        else
            printf("{\"explain\":%s,\"profile\":%s}\n", plan_json, sl_query_profile_json(q));
        free(plan_json);
    } else if (explain) {
        printf("%s\n", sl_query_explain_json(q));
    } else {
        struct cli_progress pr;
        cli_progress_start(&pr);
        if (isatty(2))
            sl_query_on_progress(q, cli_progress_draw, &pr, 200);
        int64_t t0 = cli_now_ns();
        rc = sl_query_run(q);
        double ms = (cli_now_ns() - t0) / 1e6;
        cli_progress_clear(&pr);
        if (rc != SL_OK) {
            exit_code = cli_fail("the plan failed: %s", sl_query_errmsg(q));
        } else {
            for (int n = 0; n < sl_plan_num_nodes(plan); n++) {
                const char *out = sl_plan_output_name(plan, n);
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
    }
    sl_query_destroy(q);
    sl_plan_destroy(plan);
    sl_engine_close(eng);
    return exit_code;
}

static void print_op(void *user, const struct sl_op_def *d)
{
    (void)user;
    if (!strncmp(d->name, "test.", 5) || !strncmp(d->name, "core.", 5))
        return;
    printf("%-18s %d..%d inputs  %s\n", d->name, d->min_inputs, d->max_inputs,
           d->doc ? d->doc : "");
    for (unsigned i = 0; i < d->n_options; i++)
        printf("    %-16s %s (%s%s)\n", d->options[i].name,
               d->options[i].doc ? d->options[i].doc : "",
               d->options[i].default_value ? "default " : "required",
               d->options[i].default_value ? d->options[i].default_value : "");
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
            return cli_fail("operators: unknown argument '%s' (see sluice operators --help)",
                            argv[i]);
    }
    sl_registry_foreach(sl_registry_global(), print_op, NULL);
    return 0;
}
