/* Shared pieces of the `sluice bench` commands (docs/BENCH_PROTOCOL.md): repeats, medians,
 * the checksum, and the JSON line printed last. Each benchmark lives in its own
 * cli/bench_<what>.c and is listed in cli/cmd_bench.c. */
#ifndef SLUICE_CLI_BENCH_H
#define SLUICE_CLI_BENCH_H

#include <stdint.h>

#include "cli.h"

#define BENCH_MAX_REPEAT 64
#define BENCH_MAX_PHASES 24

/* Times of the repeats of one benchmark, and its named phases. */
struct bench_result {
    int n;                                /* repeats recorded */
    double ms[BENCH_MAX_REPEAT];
    double cpu_ms[BENCH_MAX_REPEAT];      /* the process's CPU time of each repeat
                                           * (bench_run_plan; 0 where not measured) */
    int n_phases;
    const char *phase_names[BENCH_MAX_PHASES];
    double phase_ms[BENCH_MAX_PHASES][BENCH_MAX_REPEAT];
    int64_t input_rows;                   /* for gtuples_per_s */
    int64_t output_rows;
    uint64_t checksum;
    int64_t peak_device_bytes;            /* -1 = not a GPU run */
    char device[160];
    /* bench_run_plan copies the "phases" this operator reported in each timed query's
     * profile (sl_task_phase_time) into the phases above; NULL = none */
    const char *phase_op;
    char phase_store[BENCH_MAX_PHASES][48]; /* names of phases read from a profile */
    /* the last timed query's co-processed pipeline, if any: morsels each device ran */
    int split;
    int64_t split_cpu_tasks, split_gpu_tasks;
    /* the last timed query's bytes copied from host to GPU memory (its profile) */
    int64_t bytes_h2d;
    /* engine time (issue 19): the host's time in sl_query_create, the run and
     * sl_query_result as phases "host_create", "host_run", "host_result"; and the last
     * timed query's profile JSON printed to stderr */
    int engine_time;
    /* the last timed GPU join's choices (its profile's values gpu_algo and npj_kind;
     * -1: not reported) */
    int join_algo, join_table;
};

void bench_result_init(struct bench_result *r, int64_t input_rows);
/* Records one repeat's total time. */
void bench_add(struct bench_result *r, double ms);
/* Records the time of a named phase for the current repeat (call before bench_add). */
void bench_add_phase(struct bench_result *r, const char *name, double ms);
double bench_median(const double *v, int n);
/* Prints the JSON object: bench name, then the protocol's fields, then `extra` (a
 * string of additional ,"key":value pairs or ""). */
void bench_print_json(const char *bench, const struct bench_result *r, const char *extra);
/* The same after setting r->peak_device_bytes to the engine's peak GPU memory when the
 * run could use a GPU (gpu: input on the device or placement gpu). */
void bench_print_run(sl_engine_t *eng, bool gpu, const char *bench, struct bench_result *r,
                     const char *extra);
/* Adds every value of every column of a table to a checksum: the sum, modulo 2^64, of
 * all values as unsigned 64-bit (floats by their bit pattern widened; other types, such
 * as decimals, dates and strings, by a hash of their printed text). */
uint64_t bench_checksum_table(sl_table_t *t);
/* A table holding batch b, taking the caller's reference to it; NULL when out of memory
 * (b is dropped then). */
sl_table_t *bench_table_of(sl_batch_t *b);
/* n rows of a random key "k" (xorshift from seed) and `payloads` (0..8) columns p1.. of
 * row x (c + 1), all of key_bytes (4: int32, 8: int64): the sort's and the partition's
 * input. NULL when out of memory. */
sl_table_t *bench_keys_table(int64_t n, int key_bytes, int payloads, uint64_t seed);
/* Replaces *t by its copy on the engine's first GPU (GPU-resident input, docs/
 * BENCH_PROTOCOL.md: copied before timing) and drops the host table. On failure prints
 * "bench NAME: --resident device: why" and leaves *t as it was. */
int bench_to_device(sl_engine_t *eng, sl_table_t **t, const char *bench);
/* The device string: the GPU's name when placement can use one, else the CPU model and
 * thread count. */
void bench_device_name(sl_engine_t *eng, enum sl_placement p, char *out, int len);

/* A count option (--rows 2^24): its flag and where its value goes. */
struct bench_count_opt {
    const char *name;
    int64_t *value;
};
/* Consumes argv[*i] and its value if it is one of opts: 1 consumed, 0 not one of them,
 * -1 a value that is not a count (message printed). */
int bench_count_option(int argc, char **argv, int *i, const struct bench_count_opt *opts,
                       int n_opts);
/* Consumes argv[*i] (and its value) as one of the counts or a common option (cli.h):
 * 0 when consumed, else the exit code for the command `bench NAME` to return: 2 for a
 * bad value, 1 for an unknown option (message printed). */
int bench_option(int argc, char **argv, int *i, const struct bench_count_opt *counts,
                 int n_counts, struct cli_common *c, const char *bench);

/* Checks the output of the warm-up run (setting res->output_rows and res->checksum);
 * returns SL_OK, or prints why the result is wrong and returns an error. */
typedef int (*bench_check_fn)(void *user, sl_table_t *out, struct bench_result *res);
/* The protocol's run loop: one warm-up, then `repeat` timed runs, each a new query of
 * `plan` from creation to fetching its output `output`; the warm-up's output is checked
 * by `check`. Returns SL_OK or the first error (printed, prefixed with `bench`). */
int bench_run_plan(sl_engine_t *eng, sl_plan_t *plan, const char *output, int64_t repeat,
                   const char *bench, struct bench_result *res, bench_check_fn check, void *user);
/* The same from repeat `from` on: -1 = the warm-up (checked) and then repeats 0 to
 * repeat - 1; from = 0, repeat = 1: one timed query alone (interleaved rounds). */
int bench_run_plan_from(sl_engine_t *eng, sl_plan_t *plan, const char *output, int64_t from,
                        int64_t repeat, const char *bench, struct bench_result *res,
                        bench_check_fn check, void *user);

/* One benchmark: `sluice bench NAME ...` calls run(argc, argv) with argv[0] = NAME. */
struct bench_entry {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
};

int bench_tasks(int argc, char **argv);
int bench_exchange(int argc, char **argv);
int bench_join(int argc, char **argv);
int bench_sort(int argc, char **argv);
int bench_partition(int argc, char **argv);
int bench_aggregate(int argc, char **argv);
int bench_kmeans(int argc, char **argv);
int bench_mixed(int argc, char **argv);
int bench_tpch(int argc, char **argv);
/* Runs fn(arg, lo, hi) over ranges of [0, n) on up to 16 threads (one below 2^16). */
void bench_par_for(int64_t n, void (*fn)(void *, int64_t, int64_t), void *arg);
/* The GPU join's phase times (bench_join.c): asks the engine for them (the option
 * debug_join_phase_times, unless placement is cpu), and adds those of a query's profile
 * (summed over its joins) to r, with the rest of the query's time as "engine_other". */
void bench_join_phases_ask(struct cli_common *c);
void bench_join_phases(struct bench_result *r, const char *profile, double total_ms);
/* One timed query of a join benchmark whose plan outputs "out" (bench_join.c). */
struct bench_join_query {
    sl_engine_t *eng;
    sl_plan_t *plan;
    int64_t rep;             /* < 0: the warm-up, not recorded */
    int on_device;           /* output left in GPU memory; copied back to be summed */
    int phases;              /* record the GPU join's phase times */
    int check_every;         /* sum every output (else the warm-up's only) */
    int aggregate;           /* output=aggregate: one row */
    const char *what;        /* message prefix */
};
int bench_join_query(const struct bench_join_query *j, struct bench_result *r);
/* `sluice bench join --sequence N` (bench_joinseq.c). */
struct joinseq_args {
    int64_t sequence, probe_rows, dim_rows, repeat, seed;
    const char *algo, *output, *resident;
};
int bench_join_sequence(const struct joinseq_args *a, struct cli_common *c);
/* Floors (bench_floor.c; docs/BENCH_PROTOCOL.md, "Floors"). Where the data lives: */
enum bench_where {
    BENCH_ON_CPU, /* a CPU run: host memory bandwidth */
    BENCH_ON_GPU, /* a GPU run on GPU-resident data: device copy bandwidth */
    BENCH_LINK,   /* a GPU run on host-resident data: the host<->device link */
    BENCH_LINK_SERIAL, /* the same for an operator whose first output row needs its last
                        * input row (sort): every byte goes up before any comes down */
};
struct bench_floor {
    const char *kind;          /* "memory", "device_copy", "link"; NULL = none */
    double in_gbps, out_gbps;  /* bandwidths measured in this run (read + write counted
                                * for the memories) */
    int64_t probe_bytes;       /* size of the bandwidth probe */
    double ms;                 /* the floor; 0 = not measured */
};
/* Bytes a bandwidth probe copies for data of `data_bytes`: twice the data, at least
 * 64 MiB (past the caches), at most 1 GiB. */
int64_t bench_probe_bytes(double data_bytes);
/* Measures the floor of moving bytes_in in and bytes_out out where `where` says. */
void bench_floor_measure(sl_engine_t *eng, enum bench_where where, double bytes_in,
                         double bytes_out, struct bench_floor *f);
/* Writes ,"floor":kind,...,"floor_ms":..,"x_floor":time_ms/floor_ms ("" without a floor);
 * returns what snprintf returns. */
int bench_floor_json(const struct bench_floor *f, double time_ms, char *out, size_t len);
/* Host memory bandwidth: GB/s read + written by `threads` threads memcpy-ing `bytes`. */
double bench_memcpy_gbps(int64_t bytes, int threads);
/* Device copy bandwidth of the engine's first usable GPU (read + write, GB/s), through
 * sl_engine_measure_device_copy; 0 without a GPU or on failure. */
double bench_device_copy_gbps(sl_engine_t *eng, int64_t bytes);
/* fp32 FMA peak of the engine's first usable GPU (GFLOP/s); 0 without one. */
double bench_gpu_fp32_peak(sl_engine_t *eng);
/* Adds the "phases" an operator reported in a query profile (sl_query_profile_json) to
 * the current repeat of r. */
void bench_profile_phases(struct bench_result *r, const char *profile);
/* The first number named `name` in a query profile (an operator's "values", a query
 * counter such as bytes_h2d); 0 if absent or profile is NULL. */
double bench_profile_value(const char *profile, const char *name);

#endif /* SLUICE_CLI_BENCH_H */
