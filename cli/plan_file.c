/* Reading a plan file into a plan, for `run` and `explain`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_PLAN_BYTES (16 << 20)

char *cli_read_plan_text(const char *path)
{
    FILE *f = cli_open_input(path, "plan");
    if (!f)
        return NULL;
    char *buf = malloc(MAX_PLAN_BYTES + 1);
    size_t n = buf ? fread(buf, 1, MAX_PLAN_BYTES + 1, f) : 0;
    bool err = ferror(f);
    fclose(f);
    if (!buf || err || n > MAX_PLAN_BYTES) {
        free(buf);
        cli_fail("cannot read plan '%s' (%s)", path,
                 n > MAX_PLAN_BYTES ? "larger than 16 MiB" : "read error");
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

sl_plan_t *cli_load_plan(const char *path)
{
    return cli_load_plan_tables(path, NULL, NULL, 0);
}

sl_plan_t *cli_load_plan_tables(const char *path, const char *const names[],
                                sl_table_t *const tables[], int n_tables)
{
    char *text = cli_read_plan_text(path);
    if (!text)
        return NULL;
    sl_plan_t *plan;
    if (sl_plan_create(&plan) != SL_OK) {
        free(text);
        cli_fail("%s", sl_last_errmsg());
        return NULL;
    }
    int rc = SL_OK;
    for (int t = 0; t < n_tables && rc == SL_OK; t++)
        rc = sl_plan_register_table(plan, names[t], tables[t]);
    if (rc == SL_OK)
        rc = sl_plan_parse(plan, text, path);
    free(text);
    if (rc != SL_OK || sl_plan_num_nodes(plan) == 0) {
        if (rc != SL_OK)
            cli_fail("%s", sl_plan_errmsg(plan));
        else
            cli_fail("%s: the plan has no statements (hint: NAME = OPERATOR(INPUTS) OPTIONS, "
                     "docs/PLAN_FORMAT.md)", path);
        sl_plan_destroy(plan);
        return NULL;
    }
    return plan;
}

void cli_format_bytes(int64_t bytes, char *out, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(out, len, "%lld B", (long long)bytes);
    else
        snprintf(out, len, "%.1f %s", v, units[u]);
}

int cli_plan_arg(struct cli_common *c, int argc, char **argv, int *i, const char **path)
{
    int r = cli_common_option(c, argc, argv, i);
    if (r < 0)
        return 2;
    if (r == 1)
        return 0;
    if (argv[*i][0] == '-')
        return cli_usage_fail("%s: unknown option '%s' (see sluice %s --help)", argv[0], argv[*i],
                        argv[0]);
    if (*path)
        return cli_usage_fail("%s: one plan file at a time ('%s' and '%s')", argv[0], *path, argv[*i]);
    *path = argv[*i];
    return 0;
}

int cli_session_open(struct cli_session *s, const char *path, const struct cli_common *c)
{
    memset(s, 0, sizeof *s);
    s->plan = cli_load_plan(path);
    if (!s->plan)
        return 1;
    s->eng = cli_open_engine(c);
    if (!s->eng) {
        cli_session_close(s);
        return 1;
    }
    if (sl_query_create(s->eng, s->plan, &s->q) != SL_OK) {
        cli_fail("%s", sl_plan_errmsg(s->plan));
        cli_session_close(s);
        return 1;
    }
    return 0;
}

void cli_session_close(struct cli_session *s)
{
    sl_query_destroy(s->q);
    sl_plan_destroy(s->plan);
    sl_engine_close(s->eng);
    memset(s, 0, sizeof *s);
}
