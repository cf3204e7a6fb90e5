/* Shared helpers of the sluice command. The command uses only the public API. */
#ifndef SLUICE_CLI_H
#define SLUICE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sluice/sluice.h>

/* Options every command accepts (parsed by cli_common_option). */
#define CLI_MAX_SETS 64

struct cli_common {
    int threads;            /* --threads N */
    int gpus;               /* --gpus N (-1 = all) */
    bool split_gpu;         /* --split-gpu: --gpus N logical devices (split_gpu=1) */
    int64_t gpu_mem;        /* --gpu-mem BYTES */
    int64_t host_mem;       /* --host-mem BYTES */
    enum sl_placement placement; /* --placement cpu|gpu|auto|coprocess */
    const char *trace;      /* --trace FILE */
    bool json;              /* --json */
    /* --set NAME=VALUE, in command-line order: argv strings, applied after the flags */
    const char *sets[CLI_MAX_SETS];
    int n_sets;
};                          /* --plugin FILE.so is loaded while parsing (sl_plugin_load) */

void cli_common_init(struct cli_common *c);
/* Consumes argv[*i] (and its value) if it is a common option. Returns 1 if consumed, 0 if
 * not a common option, -1 on a bad value (message printed). */
int cli_common_option(struct cli_common *c, int argc, char **argv, int *i);
/* The engine config of the common options: defaults, then the environment (SLUICE_<NAME>
 * for every engine option, docs/CLI.md), then the flags (--threads, --placement, ...),
 * then each --set. 0, or 2 with the error printed. */
int cli_engine_config(const struct cli_common *c, struct sl_engine_config *cfg);
/* --set NAME=VALUE: checks the pair and keeps it; 1, or -1 with the error printed. */
int cli_common_set(struct cli_common *c, const char *pair);
/* Opens an engine from the common options; prints the error and returns NULL on failure. */
sl_engine_t *cli_open_engine(const struct cli_common *c);
/* Parses "2^24", "16M", "1000" (k/M/G = 1000s; Ki/Mi/Gi = 1024s). */
int cli_parse_count(const char *s, int64_t *out);
int64_t cli_now_ns(void);
/* The CPU time of the whole process (every thread) so far, in ns: on a shared machine a
 * run's CPU time says what its wall time would be when others' jobs take cores. */
int64_t cli_cpu_ns(void);
/* Prints an error message "sluice: ..." to stderr; returns 1 (the exit code). */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same for a mistake on the command line (unknown option, missing or malformed
 * value, wrong arguments); returns CLI_EXIT_USAGE, as docs/CLI.md promises. */
#define CLI_EXIT_USAGE 2
int cli_usage_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Progress of a running query on stderr, for sl_query_on_progress(q, cli_progress_draw,
 * &pr, ms); register it only when isatty(2). */
struct cli_progress {
    int64_t t0;
    bool shown;
};
void cli_progress_start(struct cli_progress *pr);
void cli_progress_draw(void *user, const struct sl_progress *p);
void cli_progress_clear(struct cli_progress *pr);

enum cli_format { CLI_TABLE = 0, CLI_CSV = 1, CLI_JSON = 2 };
/* Prints s on stdout as a JSON string: quotes, backslashes and control characters
 * escaped. */
void cli_put_json_string(const char *s);
/* Prints at most `limit` rows of a result table. */
void cli_print_table(const char *name, sl_table_t *t, enum cli_format fmt, int64_t limit);

/* A plan file's text (at most 16 MiB, no NUL bytes; free() it); prints the error and
 * returns NULL on failure. */
char *cli_read_plan_text(const char *path);
/* Reads and parses a plan file; prints the error and returns NULL on failure. */
sl_plan_t *cli_load_plan(const char *path);
/* The same, with named tables registered first (scan.table name=NAME reads them). */
sl_plan_t *cli_load_plan_tables(const char *path, const char *const names[],
                                sl_table_t *const tables[], int n_tables);
/* An argument of `run` or `explain` after their own options (argv[0] is the command):
 * a common option or the plan file (*path). 0 if consumed, else the exit code (the
 * message printed). */
int cli_plan_arg(struct cli_common *c, int argc, char **argv, int *i, const char **path);
/* Several ranks (ranks.c, docs/DISTRIBUTED.md). */
/* Whether mpirun (or another MPI launcher) started this process: the engine then joins
 * the job (option mpi). */
bool cli_under_mpirun(void);
/* The engine's rank (0 without MPI). */
int cli_engine_rank(sl_engine_t *eng);
/* Replaces this process by `mpirun -n N` running the same command without --ranks N
 * (argv[0] is the command's name, e.g. "run"); returns only on failure (the exit code,
 * message printed). */
int cli_ranks_exec(int n, int argc, char **argv);

/* A plan file, an engine and a query of it. */
struct cli_session {
    sl_plan_t *plan;
    sl_engine_t *eng;
    sl_query_t *q;
};
/* Loads the plan, opens the engine, creates the query: 0, or 1 with the error printed. */
int cli_session_open(struct cli_session *s, const char *path, const struct cli_common *c);
void cli_session_close(struct cli_session *s);
/* "12 B", "3.5 MiB" */
void cli_format_bytes(int64_t bytes, char *out, size_t len);
/* The human-readable report of sl_query_explain (explain_text.c); `profile`: the
 * query's sl_query_profile_json after an analyzed run (each pipeline then gets a line of
 * where its stages ran), else NULL. */
void cli_explain_text(const char *path, const sl_plan_t *plan, const struct sl_explain *ex,
                      enum sl_placement asked, sl_engine_t *eng, const char *profile);
/* explain --analyze's line "ran" of pipeline p: per stage, the devices its operator's
 * tasks ran on, their number and time, from the query profile (explain_stages.c). An
 * operator appears in several pipelines (a join's build, probe and output): its numbers
 * are over all of them. */
void cli_explain_stages_measured(const sl_plan_t *plan, const struct sl_explain_pipeline *p,
                                 const char *profile);
/* The operator entries of a query profile (sl_query_profile_json), one at a time: after
 * cli_profile_ops_begin, each true cli_profile_ops_next gives one entry, [at, end)
 * (explain_stages.c). */
struct cli_profile_ops {
    const char *at, *end, *stop;
};
void cli_profile_ops_begin(struct cli_profile_ops *it, const char *profile);
bool cli_profile_ops_next(struct cli_profile_ops *it);
/* The number `name` inside [p, end) of a profile's JSON, or dflt. */
double cli_profile_number(const char *p, const char *end, const char *name, double dflt);
/* explain's line for a pipeline that ends in an exchange (ranks.c): bytes per link
 * between the engine's ranks and the estimated time at the option exchange_gbps. */
void cli_explain_exchange(const sl_plan_t *plan, const struct sl_explain_pipeline *p,
                          sl_engine_t *eng);
/* explain's line for a pipeline whose sink is a join or sort on the GPU when the engine
 * has several GPU devices (explain_mgpu.c): the library's verdict (over how many devices
 * with the exchange's estimate, or on one and why). */
void cli_explain_devices(const struct sl_explain *ex, const struct sl_explain_pipeline *p);
/* After a run: per join or sort that went over several devices, what its exchange
 * measured (and estimated), from the query profile (sl_query_profile_json). */
void cli_explain_devices_measured(const char *profile);

/* Reads only a regular file: a FIFO or device is refused at once, before a read could
 * block or never end. NULL with the error printed ("cannot read <what> '<path>': ..."). */
FILE *cli_open_input(const char *path, const char *what);

/* SIGINT/SIGTERM (signals.c): cli_signals_init blocks them in every thread and starts a
 * watcher; cli_query_run runs a query the watcher cancels on a signal; main exits with
 * 128 + cli_signal_caught() when it is not 0. */
void cli_signals_init(void);
int cli_query_run(sl_query_t *q);
int cli_signal_caught(void);

int cmd_devices(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_operators(int argc, char **argv);
int cmd_options(int argc, char **argv);
int cmd_trace_render(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_tpch(int argc, char **argv);

#endif /* SLUICE_CLI_H */
