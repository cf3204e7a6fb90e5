/* TPC-H data for `sluice tpch`: where the .tbl files are (generating them with
 * tpchgen-cli when asked), and the loader that reads the eight tables once into memory
 * in the residency asked for. */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tpch.h"

extern char **environ;
extern const char cli_tpch_schema_text[]; /* plans/tpch/schema.txt, built in */

static const char *const table_names[TPCH_TABLES] = {
    "region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"};

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *tpch_plans_dir(const struct tpch_args *a)
{
    if (a->plans)
        return a->plans;
    if (is_dir("plans/tpch"))
        return "plans/tpch";
    return SLUICE_SOURCE_PLANS_TPCH;
}

static bool have_all_tables(const char *dir)
{
    for (int t = 0; t < TPCH_TABLES; t++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.tbl", dir, table_names[t]);
        if (access(path, R_OK) != 0)
            return false;
    }
    return true;
}

/* tpchgen-cli -s SF --output-dir=TMP (for DIR), waited for. 0, or 1 with the error printed. */
static int run_tpchgen(const char *sf, const char *tmp, const char *dir)
{
    char out_arg[4200];
    snprintf(out_arg, sizeof out_arg, "--output-dir=%s", tmp);
    char *argv[] = {"tpchgen-cli", "-s", (char *)sf, out_arg, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, "tpchgen-cli", NULL, NULL, argv, environ);
    if (rc == ENOENT)
        return cli_fail("tpchgen-cli is not installed (pip install tpchgen-cli, or "
                        "scripts/setup.sh); or give the .tbl files with --data DIR");
    if (rc != 0)
        return cli_fail("cannot start tpchgen-cli: %s", strerror(rc));
    fprintf(stderr, "generating TPC-H SF %s into %s (tpchgen-cli)\n", sf, dir);
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return cli_fail("waiting for tpchgen-cli: %s", strerror(errno));
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return cli_fail("tpchgen-cli -s %s failed (exit status %d)", sf,
                        WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}

/* Generates the tables into DIR/.tpchgen, then moves them into DIR: an interrupted run
 * leaves no table in DIR, so the next one generates them again rather than loading
 * half a file. 0, or 1 with the error printed. */
static int generate(const char *sf, const char *dir)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/.tpchgen", dir);
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
        return cli_fail("cannot create '%s': %s", tmp, strerror(errno));
    if (run_tpchgen(sf, tmp, dir))
        return 1;
    for (int t = 0; t < TPCH_TABLES; t++) {
        char from[4200], to[4200];
        snprintf(from, sizeof from, "%s/%s.tbl", tmp, table_names[t]);
        snprintf(to, sizeof to, "%s/%s.tbl", dir, table_names[t]);
        if (rename(from, to) != 0)
            return cli_fail("tpchgen-cli did not write %s: %s", from, strerror(errno));
    }
    rmdir(tmp);
    return 0;
}

const char *tpch_data_dir(struct tpch_args *a)
{
    if (a->data)
        return a->data; /* a missing file is reported by the loader, naming it */
    const char *dir = a->cache;
    if (!dir) {
        snprintf(a->cache_buf, sizeof a->cache_buf, "tpch-sf%s", a->sf);
        dir = a->cache_buf;
    }
    if (have_all_tables(dir))
        return dir;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        cli_fail("cannot create the data directory '%s': %s", dir, strerror(errno));
        return NULL;
    }
    return generate(a->sf, dir) ? NULL : dir;
}

/* The schema text: the plans directory's schema.txt, else the built-in copy. */
static char *schema_text(const char *plans_dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/schema.txt", plans_dir);
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup(cli_tpch_schema_text);
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n + 4096 + 1 > cap) {
            char *nb = realloc(buf, cap = cap * 2 + 8192);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        got = fread(buf + n, 1, 4096, f);
        n += got;
    } while (got > 0);
    fclose(f);
    buf[n] = 0;
    return buf;
}

/* The column list ("name:type, ...") of `table` in the schema text, copied into out. */
static bool schema_columns(const char *text, const char *table, char *out, size_t len)
{
    size_t tl = strlen(table);
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line += !!line) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        if (line[0] == '#' || n <= tl || strncmp(line, table, tl) || (line[tl] != ' ' &&
                                                                     line[tl] != '\t'))
            continue;
        const char *cols = line + tl;
        while (*cols == ' ' || *cols == '\t')
            cols++;
        size_t cn = n - (size_t)(cols - line);
        if (cn >= len)
            return false;
        memcpy(out, cols, cn);
        out[cn] = 0;
        return true;
    }
    return false;
}

/* `s` as a plan-file quoted value (\" and \\ escaped) into out. */
static bool quote_value(const char *s, char *out, size_t len)
{
    size_t k = 0;
    out[k++] = '"';
    for (; *s; s++) {
        if (k + 3 >= len)
            return false;
        if (*s == '"' || *s == '\\')
            out[k++] = '\\';
        out[k++] = *s;
    }
    out[k++] = '"';
    out[k] = 0;
    return true;
}

/* Reads one .tbl file into *out with scan.csv. 0, or 1 with the error printed. */
static int load_table(sl_engine_t *eng, const char *path, const char *name, const char *cols,
                      sl_table_t **out)
{
    char qpath[4200], opts[8192];
    if (!quote_value(path, qpath, sizeof qpath))
        return cli_fail("loading %s: path too long", name);
    snprintf(opts, sizeof opts,
             "path=%s header=false delimiter=\"|\" trailing_delimiter=true quote=\"\" "
             "columns=\"%s\"", qpath, cols);
    sl_plan_t *plan = NULL;
    sl_query_t *q = NULL;
    int id, rc = sl_plan_create(&plan);
    if (rc == SL_OK)
        rc = sl_plan_add(plan, "scan.csv", NULL, 0, opts, &id);
    if (rc == SL_OK)
        rc = sl_plan_output(plan, id, name);
    if (rc != SL_OK) {
        cli_fail("loading %s: %s", name, plan ? sl_plan_errmsg(plan) : sl_last_errmsg());
    } else if ((rc = sl_query_create(eng, plan, &q)) != SL_OK) {
        cli_fail("loading %s: %s", name, sl_plan_errmsg(plan));
    } else if ((rc = cli_query_run(q)) != SL_OK || (rc = sl_query_result(q, name, out)) != SL_OK) {
        cli_fail("loading %s: %s", name, sl_query_errmsg(q));
    }
    sl_query_destroy(q);
    sl_plan_destroy(plan);
    return rc == SL_OK ? 0 : 1;
}

/* Moves a loaded table into the residency: pinned host memory, or GPU 0's memory. */
static int place_table(sl_engine_t *eng, const char *residency, const char *name,
                       sl_table_t **t)
{
    if (!strcmp(residency, "pinned")) {
        if (sl_table_pin(*t) != SL_OK)
            return cli_fail("pinning %s: %s (--residency pinned needs a CUDA build and a GPU)",
                            name, sl_last_errmsg());
    } else if (!strcmp(residency, "gpu")) {
        sl_table_t *dev;
        if (sl_table_to_device(eng, *t, 0, &dev) != SL_OK)
            return cli_fail("copying %s to the GPU: %s", name, sl_last_errmsg());
        sl_table_unref(*t);
        *t = dev;
    }
    return 0;
}

int tpch_load(sl_engine_t *eng, const char *plans_dir, const char *dir, const char *residency,
              struct tpch_data *d, bool progress)
{
    memset(d, 0, sizeof *d);
    d->dir = dir;
    char *schema = schema_text(plans_dir);
    if (!schema)
        return cli_fail("out of memory");
    int rc = 0;
    int64_t t_all = cli_now_ns();
    for (int t = 0; t < TPCH_TABLES && !rc; t++) {
        const char *name = d->names[t] = table_names[t];
        char cols[4096], path[4096];
        if (!schema_columns(schema, name, cols, sizeof cols)) {
            rc = cli_fail("the TPC-H schema (%s/schema.txt) has no table %s", plans_dir, name);
            break;
        }
        snprintf(path, sizeof path, "%s/%s.tbl", dir, name);
        if (access(path, R_OK) != 0) {
            rc = cli_fail("loading %s: cannot read '%s': %s", name, path, strerror(errno));
            break;
        }
        int64_t t0 = cli_now_ns();
        rc = load_table(eng, path, name, cols, &d->tables[t]);
        if (!rc)
            tpch_measure_columns(d, t);
        if (!rc)
            rc = place_table(eng, residency, name, &d->tables[t]);
        if (rc)
            break;
        d->ms[t] = (cli_now_ns() - t0) / 1e6;
        d->rows[t] = sl_table_num_rows(d->tables[t]);
        if (progress)
            printf("loaded %-9s %10lld rows %10.1f ms\n", name, (long long)d->rows[t], d->ms[t]);
    }
    d->total_ms = (cli_now_ns() - t_all) / 1e6;
    free(schema);
    if (rc)
        tpch_data_release(d);
    return rc;
}

void tpch_data_release(struct tpch_data *d)
{
    for (int t = 0; t < TPCH_TABLES; t++) {
        sl_table_unref(d->tables[t]);
        d->tables[t] = NULL;
    }
}
