/* `sluice tpch` and `sluice bench tpch` (docs/TPCH.md): the data, the loader of the eight
 * tables, the runs of plans/tpch/qNN.plan over them, and the check against expected
 * answers. */
#ifndef SLUICE_CLI_TPCH_H
#define SLUICE_CLI_TPCH_H

#include <stdbool.h>

#include "cli.h"

#define TPCH_TABLES 8
#define TPCH_QUERIES 22
#define TPCH_MAX_COLS 16 /* lineitem's */

/* --explain: each query's explain report instead of its runs; --explain-analyze: the
 * report after a warm-up and a measured run (tpch_explain.c). */
enum tpch_explain { TPCH_EXPLAIN_NONE, TPCH_EXPLAIN_PLAN, TPCH_EXPLAIN_ANALYZE };

/* The command line of both commands (tpch_args_parse). */
struct tpch_args {
    struct cli_common common;   /* --threads, --placement, --set, ... */
    const char *sf;             /* --sf X (text, as tpchgen-cli takes it); "1" by default,
                                 * or with --data the "sf<X>" of the directory's name */
    const char *data;           /* --data DIR: the .tbl files; else the cache */
    const char *cache;          /* --cache DIR; default ./tpch-sf<X> */
    const char *plans;          /* --plans DIR; default: found (tpch_plans_dir) */
    const char *residency;      /* --residency host|pinned|gpu */
    const char *expected;       /* --expected DIR of qNN.csv */
    bool queries[TPCH_QUERIES + 1]; /* --query N,M|all: queries[n] */
    int64_t repeat;             /* --repeat N timed runs after one warm-up */
    bool print;                 /* --print: the result rows */
    enum tpch_explain explain;  /* --explain, --explain-analyze: reports, no timings */
    const char *trace;          /* --trace-dir DIR: with --explain-analyze, the measured run's
                                 * Chrome trace as DIR/qNN.json */
    char cache_buf[64], sf_buf[32];
};

/* Parses argv (argv[0] is the command's name, `what` names it in messages); the
 * defaults of `repeat` stay as the caller set them. 0, 1 for --help (usage printed to
 * stdout), or CLI_EXIT_USAGE (message printed). */
int tpch_args_parse(struct tpch_args *a, int argc, char **argv, const char *what,
                    const char *usage);

/* The loaded tables (tpch_load). */
struct tpch_data {
    const char *dir;
    const char *names[TPCH_TABLES];
    sl_table_t *tables[TPCH_TABLES];
    int64_t rows[TPCH_TABLES];
    double ms[TPCH_TABLES];     /* reading (and moving into the residency) each table */
    int64_t col_bytes[TPCH_TABLES][TPCH_MAX_COLS]; /* each column's bytes (tpch_floor.c) */
    double total_ms;
};

/* The directory of the .tbl files: --data, or the cache, generated with tpchgen-cli
 * when any file is missing. NULL with the error printed. */
const char *tpch_data_dir(struct tpch_args *a);
/* Reads the eight tables of `dir` with scan.csv and the schema (the plans directory's
 * schema.txt, else the copy built in), then moves them into the residency. 0, or 1
 * with the error printed ("loading TABLE: 'FILE' line L, column C: ..."); on failure
 * the tables loaded so far are released and the engine stays usable. `progress`: print
 * a line per table. */
int tpch_load(sl_engine_t *eng, const char *plans_dir, const char *dir, const char *residency,
              struct tpch_data *d, bool progress);
void tpch_data_release(struct tpch_data *d);
/* Fills d->col_bytes[t] from table t's host batches (tpch_load calls it before the move
 * into the residency). */
void tpch_measure_columns(struct tpch_data *d, int t);
/* Bytes of the table columns a plan (its text) reads: what the query must read at least
 * once. */
int64_t tpch_scan_bytes(const char *plan_text, const struct tpch_data *d);
/* The plans directory: --plans, else ./plans/tpch, else the source tree's (built in). */
const char *tpch_plans_dir(const struct tpch_args *a);

/* One query's outcome. */
enum tpch_status { TPCH_OK, TPCH_MISSING, TPCH_ERROR, TPCH_WRONG };
struct tpch_run {
    int query;
    enum tpch_status status;
    double median_ms, min_ms, max_ms;
    double cpu_ms;              /* median CPU time of the process per timed run */
    int runs;
    int64_t rows;
    uint64_t checksum;
    bool checked;               /* compared with an expected answer */
    int64_t scan_bytes;         /* tpch_scan_bytes of the plan */
    int64_t h2d_bytes;          /* what its last timed run copied to the GPU */
    int64_t gpu_peak_bytes;     /* the engine's GPU peak during the runs (-1: none) */
    char message[512];          /* why it failed, or is wrong */
};
/* Runs plans/tpch/qNN.plan on the loaded tables: one warm-up (the run checked against
 * a->expected and printed with a->print), then a->repeat timed runs. */
void tpch_run_query(sl_engine_t *eng, const struct tpch_args *a, const char *plans_dir,
                    const struct tpch_data *d, int query, struct tpch_run *r);

/* Prints `sluice explain`'s report of plans/tpch/qNN.plan bound to the loaded tables
 * (with a->explain == TPCH_EXPLAIN_ANALYZE: after a warm-up, the measured run beside the
 * estimates), under a line "== qNN ==". 0, or 1 with the error printed. */
int tpch_explain_query(sl_engine_t *eng, const struct tpch_args *a, const char *plans_dir,
                       const struct tpch_data *d, int query);

/* Compares a result with the expected answer file `path` (docs/TPCH.md: a header of
 * name:kind cells, an optional "# order: a, b" line, CSV rows): as multisets of rows,
 * decimals and integers exact, floats within 1e-9 relative, and the order columns in
 * the file's order. 0 equal; 1 different, or the file unreadable, with why in msg. */
int tpch_expected_compare(sl_table_t *got, const char *path, char *msg, size_t len);

#endif /* SLUICE_CLI_TPCH_H */
