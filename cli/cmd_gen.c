/* sluice gen: writes generated data to a file.
 *   sluice gen gen.keys rows=2^20 kind=unique payloads=1 -o keys.bin
 * The generator and its options are any source operator's (sluice operators lists
 * them). The file format is --format's, else the extension's: .csv, or .bin / .slcf for
 * sluice's binary columns; any other extension is an error, so that `-o x.parquet` does
 * not quietly write something else. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && !strcmp(s + n - m, suffix);
}

/* The writer operator for --format (NULL: from the path's extension); NULL if none. */
static const char *writer_for(const char *format, const char *path)
{
    if (format)
        return !strcmp(format, "csv") ? "write.csv" : !strcmp(format, "bin") ? "write.bin" : NULL;
    if (ends_with(path, ".csv"))
        return "write.csv";
    if (ends_with(path, ".bin") || ends_with(path, ".slcf"))
        return "write.bin";
    return NULL;
}

int cmd_gen(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c);
    const char *out = NULL, *op = NULL, *format = NULL;
    char opts[2048] = "";
    size_t len = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: sluice gen GENERATOR [KEY=VALUE...] -o FILE [--format bin|csv]\n"
                   "Writes what a generator makes to a file, e.g.\n"
                   "  sluice gen gen.keys rows=2^20 kind=fk pk_rows=2^20 zipf=1 -o fk.bin\n"
                   "  sluice gen gen.values rows=2^20 type=dict cardinality=1000 -o s.bin\n"
                   "  sluice gen gen.values rows=1000 type=decimal(15,2) min=-100 max=100 "
                   "-o d.csv\n"
                   "The format is --format's, else the extension's: .csv, or .bin / .slcf\n"
                   "for sluice's binary columns (docs/FILE_FORMAT.md).\n");
            return 0;
        }
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--format")) {
            if (i + 1 >= argc)
                return cli_usage_fail("gen: %s needs a value", argv[i]);
            *(!strcmp(argv[i], "-o") ? &out : &format) = argv[i + 1];
            i++;
            continue;
        }
        int r = cli_common_option(&c, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r == 1)
            continue;
        if (!op) {
            op = argv[i];
            continue;
        }
        const char *eq = strchr(argv[i], '=');
        if (!eq || strchr(eq, '"') || len + strlen(argv[i]) + 4 >= sizeof opts)
            return cli_usage_fail("gen: '%s' is not a KEY=VALUE option", argv[i]);
        /* Quoted, so values like decimal(15,2) or 1992-01-01 00:00:00 pass as they are. */
        len += (size_t)snprintf(opts + len, sizeof opts - len, "%.*s\"%s\" ",
                                (int)(eq - argv[i] + 1), argv[i], eq + 1);
    }
    if (!op || !out)
        return cli_usage_fail("gen: needs a generator and -o FILE (see sluice gen --help)");
    const char *writer = writer_for(format, out);
    if (!writer && format)
        return cli_usage_fail("gen: --format: '%s' is not bin or csv", format);
    if (!writer)
        return cli_usage_fail("gen: cannot tell the format of '%s': name it .bin, .slcf or .csv, "
                              "or give --format bin|csv", out);
    sl_plan_t *plan;
    int g, w, rc;
    if (sl_plan_create(&plan) != SL_OK)
        return cli_fail("%s", sl_last_errmsg());
    char wopts[4200];
    snprintf(wopts, sizeof wopts, "path=\"%s\"", out);
    if ((rc = sl_plan_add(plan, op, NULL, 0, opts, &g)) != SL_OK ||
        (rc = sl_plan_add(plan, writer, (int[]){g}, 1, wopts, &w)) != SL_OK) {
        cli_fail("%s", sl_plan_errmsg(plan));
        sl_plan_destroy(plan);
        return 1;
    }
    sl_engine_t *eng = cli_open_engine(&c);
    if (!eng) {
        sl_plan_destroy(plan);
        return 1;
    }
    sl_query_t *q;
    rc = sl_query_create(eng, plan, &q);
    if (rc == SL_OK)
        rc = cli_query_run(q);
    if (rc != SL_OK)
        cli_fail("%s", q ? sl_query_errmsg(q) : sl_plan_errmsg(plan));
    else
        printf("wrote %s\n", out);
    sl_query_destroy(q);
    sl_plan_destroy(plan);
    sl_engine_close(eng);
    return rc == SL_OK ? 0 : 1;
}
