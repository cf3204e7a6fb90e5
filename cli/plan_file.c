/* Reading a plan file into a plan, for `run` and `explain`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

sl_plan_t *cli_load_plan(const char *path)
{
    char *text = read_file(path);
    if (!text)
        return NULL;
    sl_plan_t *plan;
    if (sl_plan_create(&plan) != SL_OK) {
        free(text);
        cli_fail("%s", sl_last_errmsg());
        return NULL;
    }
    int rc = sl_plan_parse(plan, text, path);
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
