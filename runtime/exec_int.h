/* Internal structure of queries: per-node state, pipelines and task contexts. */
#ifndef SLUICE_RUNTIME_EXEC_INT_H
#define SLUICE_RUNTIME_EXEC_INT_H

#include <pthread.h>

#include "engine_int.h"
#include "plan_int.h"
#include "sched_int.h"
#include "trace.h"

#define SL__OP_PHASES 24

/* Per-node state of one query. */
struct sl__opstate {
    struct sl_op *op;
    void *gstate;
    void **lstates;                  /* one per worker; created on first use */
    struct sl__node *finalize;       /* combine + finalize node (sink ops) */
    int pipe0, n_pipes_in;           /* the pipelines into it (sinks): q->pipes[pipe0...],
                                        consecutive as lowering adds them */
    /* Shared nodes (share.c): a reader's keeper; a keeper's reader pipelines not done. */
    struct sl__opstate *share;
    _Atomic int share_readers;
    /* profile counters */
    _Atomic int64_t rows_in, rows_out, batches_in, tasks, busy_ns;
    int64_t fin_start_ns, fin_end_ns; /* its finalize node's run (0: none) */
    _Atomic int device_mask;         /* 1 = ran on CPU, 2 = ran on a GPU */
    int home_gpu;                    /* GPU whose memory holds the finalized state, or -1 */
    _Atomic int64_t gpu_tasks;       /* morsel tasks placed on a GPU */
    _Atomic int64_t kernel_ns, h2d_ns, d2h_ns; /* GPU time of tasks whose first GPU stage
                                                  is this node (from CUDA events) */
    _Atomic int64_t bytes_h2d, bytes_d2h;
    /* named phases an operator reports (sl_task_phase_time) */
    const char *_Atomic phase_name[SL__OP_PHASES];
    _Atomic int64_t phase_ns[SL__OP_PHASES];
    /* named values an operator reports (sl_task_profile_value) */
    const char *_Atomic value_name[SL__OP_PHASES];
    _Atomic int64_t value[SL__OP_PHASES];
    /* phase times and values whose name found no free slot: shown as "profile_dropped" so
     * that a full table is not silent */
    _Atomic int64_t profile_dropped;
};

/* source -> chain of streaming nodes -> sink */
struct sl__pipeline {
    int id;
    struct sl__opstate *source;
    int n_chain;
    struct sl__opstate **chain;
    struct sl__opstate *sink;
    int sink_port;
    struct sl__node *start;          /* spawns the morsel tasks */
    struct sl__node *done;           /* after start: a shared result's reader lets go */
    int64_t n_tasks;
    int64_t start_ns;
    _Atomic int64_t end_ns;          /* end of its last task (0 = not yet) */
    int device;                      /* -1 CPU, else the GPU ordinal its tasks run on */
    char signature[128];             /* "src>op>sink": the key of its cost history */
    /* Co-processing (placement.c, exec.c): morsels on the CPU workers and GPU `device`. */
    bool split;
    double split_gpu_share;          /* estimated share of rows on the GPU, < 0 unknown */
    int64_t morsel_rows;             /* one morsel size for both devices; 0 = per device */
    int64_t gpu_morsel_rows;         /* placed on a GPU: its morsels' rows, fitted to the
                                      * GPU's budget when it started; 0 = the option's */
    bool host_source;                /* placed on a GPU, run by the CPU workers: its source
                                      * finalized on the host (exec.c, place_and_count) */
    _Atomic uint64_t split_range;    /* morsels not yet taken: [lo, hi) as hi << 32 | lo */
    _Atomic int64_t next_morsel;     /* the next morsel index to give a task (not split) */
    _Atomic int64_t cpu_tasks, gpu_tasks; /* morsels run on each kind of device */
    bool started_on_gpu;             /* its start ran on a GPU worker (the profile's "start") */
};

enum sl__qstate { SL__Q_CREATED = 0, SL__Q_RUNNING = 1, SL__Q_DONE = 2 };

struct sl__qalloc {                  /* header of sl_task_alloc blocks */
    struct sl__qalloc *prev, *next;
    int64_t bytes;
    int64_t pad[5];                  /* keeps the payload 64-byte aligned */
};

struct sl__dalloc {                  /* a block from sl_task_device_alloc */
    struct sl__dalloc *prev, *next;
    void *ptr;
    int64_t bytes;
    struct sl__gpu *g;
    int held;                        /* its slot of the GPU's held bytes (gpu_held.c) */
};

struct sl_query {
    sl_engine_t *eng;
    sl_plan_t *plan;
    struct sl_engine_config opts;    /* options of this query: the engine's, then the plan's */
    struct sl__graph graph;
    int n_ops;                       /* plan nodes, then one collect per output */
    struct sl__opstate *ops;
    struct sl_op *collect_ops;       /* synthetic nodes, one per output */
    int n_outputs;
    struct sl_op *share_ops;         /* synthetic nodes of shared nodes: keepers, readers */
    int *share_at;                   /* per plan node: its keeper's op index and its next
                                        unused reader's, or -1 -1 if it is not shared */
    int *consumers;                  /* per plan node: how many consume its rows */
    unsigned char *cut;              /* per plan node: 1 = kept like a shared node, as it
                                        ends a chain too long for one pipeline (share.c) */
    int n_pipes;
    struct sl__pipeline *pipes;
    int n_slots;                     /* local-state slots = scheduler workers */

    pthread_mutex_t mu;
    pthread_cond_t cv;               /* signalled when `waiters` drops to 0 */
    enum sl__qstate state;
    int rc;                          /* final status */
    bool graph_ready;
    bool counted;                    /* counted in eng->running until its graph finishes */
    bool detached;                   /* its engine was closed: q->eng is gone (under mu) */
    int waiters;                     /* threads inside sl_query_wait (under mu) */
    int64_t deadline_ns;             /* sl__now_ns() past which it fails; 0 = none */
    struct sl_query *eng_prev, *eng_next; /* the engine's list of queries */

    /* first error wins */
    pthread_mutex_t err_mu;
    struct sl__errslot err;
    char err_op[64];
    int err_device, err_native;
    _Atomic int failed;

    /* sl_task_alloc blocks */
    pthread_mutex_t alloc_mu;
    struct sl__qalloc *allocs;
    struct sl__dalloc *dallocs;      /* sl_task_device_alloc blocks (same lock) */

    /* progress */
    _Atomic int64_t bytes_done, bytes_total;
    void (*progress_cb)(void *, const struct sl_progress *);
    void *progress_user;
    int progress_ms;
    int64_t last_progress_ns;
    _Atomic int progress_busy;

    int64_t start_ns, end_ns;
    char *profile;
    char *explain;
    struct sl__explain *explain_st; /* sl_query_explain's estimates (explain.c) */

    /* copies and tracing */
    _Atomic int64_t bytes_h2d, bytes_d2h;
    _Atomic int64_t replica_hits;    /* uploads saved by a device copy made earlier */
    pthread_mutex_t replica_mu;
    int n_replicas, cap_replicas;
    struct sl__replica **replicas;
    bool trace_on;
    char *trace_path;
    struct sl__trace trace;
};

/* What a phase implementation sees: the node, its state, the morsel or item, the input. */
struct sl_task {
    struct sl_query *q;
    struct sl__opstate *os;
    struct sl__pipeline *pipe;       /* NULL outside pipelines */
    int stage;                       /* -1 source, 0..n_chain-1 chain, n_chain sink */
    struct sl__node *gnode;          /* graph node running this task */
    struct sl__worker *worker;
    enum sl_device_kind kind;
    int64_t index, count;
    int port;
    sl_batch_t *input;
    void *arg;
    void *stream;
    void *combine_lstate;            /* the local state being combined, during combine */
    struct sl__gpu *gpu;             /* GPU tasks: the worker's GPU context */
    int gpu_slot;                    /* GPU tasks: the in-flight slot */
    int32_t *status;                 /* GPU tasks: device pointer to the status word */
    int64_t *rows_emitted;           /* the morsel task's count of source rows */
    bool sync_gpu;                   /* CUDA combine/finalize: no in-flight slot */
    int source_gpu;                  /* source_tasks of a pipeline placed on one GPU (not
                                        co-processed): its ordinal + 1; else 0 */
};

int64_t sl__now_ns(void);
/* Adds a CPU span to the query's trace (no-op unless tracing). */
void sl__trace_span(struct sl_query *q, struct sl__worker *w, const char *name, int64_t t0,
                    int64_t rows);
/* Records the query's first error (printf-style) and marks it failed. For SL_EDEVICE,
 * the native CUDA error this thread noted (sl__device_error_note) and its device go
 * into the error details too. */
int sl__query_fail(struct sl_query *q, const char *op_name, int code, const char *fmt, ...)
    SL__PRINTF(4, 5);
/* The same for a failure of a task on engine device index `device` (0 = the CPU). */
int sl__query_fail_on(struct sl_query *q, const char *op_name, int device, int code,
                      const char *fmt, ...) SL__PRINTF(5, 6);
/* Fails the query with SL_ETIMEDOUT if its deadline (option deadline_ms) has passed;
 * returns whether it has. */
bool sl__query_past_deadline(struct sl_query *q);
/* Picks the implementation of a phase for a device kind; NULL if none. */
const struct sl_impl *sl__phase_impl(const struct sl_phase *ph, enum sl_device_kind kind,
                                     const sl_task_t *t);
/* Runs one phase implementation for a task and accounts for it. */
int sl__task_run_phase(sl_task_t *t, const struct sl_phase *ph);
/* The same with the implementation already picked (NULL: none, the task fails). */
int sl__task_run_impl(sl_task_t *t, const struct sl_phase *ph, const struct sl_impl *im);
/* Local state of a node for the worker running t (created on first use). */
void *sl__task_lstate(sl_task_t *t);

/* What placement's estimate of one pipeline takes (placement.c, top comment): its source
 * rows and their bytes, its ns per row on one CPU thread and on the GPU (history, else
 * cost functions), the morsel sizes, CPU workers and bandwidths (GB/s; <= 0: defaults). */
struct sl__place_input {
    double rows, bytes, cpu_ns_per_row, gpu_ns_per_row, morsel_rows_cpu, morsel_rows_gpu;
    int threads;
    double link_gbps, host_gbps;
};
/* The estimates (ns): on the CPU workers, on a GPU (gpu_ov: its copies overlapped with
 * its kernels as across many morsels) and co-processed; known = false when a device's
 * cost is unknown. */
struct sl__place_estimate {
    bool known;
    double cpu_ns, gpu_ns, gpu_ov, split_ns;
};
void sl__place_estimate(const struct sl__place_input *in, struct sl__place_estimate *e);
/* Placement (placement.c): the GPU ordinal a pipeline runs on, or -1 for the CPU. */
int sl__place_pipeline(struct sl_query *q, struct sl__pipeline *p);
/* The same, writing why into `why` (cap bytes) when it is not NULL. */
int sl__place_pipeline_why(struct sl_query *q, struct sl__pipeline *p, char *why, size_t cap);
/* The GPU pipeline p likely runs on alone, guessed before the query runs (placement.c). */
int sl__place_guess(struct sl_query *q, struct sl__pipeline *p, const int *guess);
double sl__pipeline_estimate_ms(struct sl_query *q, const struct sl__pipeline *p, int device,
                                bool split);
double sl__pipeline_ns_per_row(struct sl_query *q, const struct sl__pipeline *p,
                               enum sl_device_kind kind);
bool sl__pipeline_gpu_capable(const struct sl__pipeline *p);
bool sl__stage_on_gpu(const struct sl__pipeline *p, int stage);
/* Whether p's source emits host rows from its CPU implementation: a sink (not placed on
 * the GPU by its node) whose CUDA source, if any, refuses: it finalized on the host. */
bool sl__pipeline_source_on_host(struct sl_query *q, struct sl__pipeline *p);
/* Whether every node of p allows a split across devices (sl_op_def.can_split). */
bool sl__pipeline_splittable(const struct sl__pipeline *p);
void sl__pipeline_signature(struct sl__pipeline *p);

/* Lowering and graph building (exec.c). */
int sl__query_lower(struct sl_query *q);
int sl__query_build_graph(struct sl_query *q);
char *sl__query_profile(struct sl_query *q);
/* Rows per GPU morsel so that `depth` tasks in flight fit `budget_left` bytes of GPU
 * memory, each taken to hold SL__GPU_MORSEL_COPIES times its input (row_bytes a row:
 * what it uploads and what its stages make of it): at most morsel_rows, at least
 * SL__GPU_MORSEL_MIN. Pure arithmetic (unit-tested). */
#define SL__GPU_MORSEL_COPIES 4
#define SL__GPU_MORSEL_MIN 4096
int64_t sl__gpu_budget_morsel_rows(int64_t budget_left, int64_t row_bytes, int depth,
                                   int64_t morsel_rows);
/* Rows per morsel of pipeline p on GPU `device` (an ordinal): the option gpu_morsel_rows,
 * fitted to that GPU's budget left now (sl__gpu_budget_morsel_rows, the source's row
 * bytes). */
int64_t sl__pipeline_gpu_morsel_rows(struct sl_query *q, const struct sl__pipeline *p,
                                     int device);
/* Rows per morsel of co-processed pipeline p (both devices cut the same morsels). */
int64_t sl__split_morsel_rows(struct sl_query *q, const struct sl__pipeline *p);
/* Frees what sl_query_explain made (explain.c). */
void sl__explain_free(struct sl_query *q);

/* The runtime's sink that collects a plan output into a table (collect.c). */
extern const struct sl_op_def sl__collect_def;
extern const struct sl_op_def sl__collect_device_def;
sl_table_t *sl__collect_result(void *gstate);
/* Lets go of what a collector kept (its table and batches). */
void sl__collect_drop(void *gstate);

/* Shared nodes (share.c): a node with several consumers (inputs of other nodes, outputs)
 * ends its pipeline in a keeper (core.share, a collector) and each consumer reads the
 * kept rows through a reader (core.share_read), a source that starts after the keeper's
 * finalize; the last reader done lets the rows go. */
extern const struct sl_op_def sl__share_def;
extern const struct sl_op_def sl__share_read_def;
/* Counts the consumers of every plan node (inputs of nodes that name it, outputs of it)
 * into q->consumers, in one pass over the plan's edges. SL_ENOMEM or SL_OK. */
int sl__count_consumers(struct sl_query *q);
/* Synthetic operators the plan's shared nodes need: a keeper and one reader per consumer. */
int sl__share_count(const struct sl_query *q);
/* Makes them as q->ops[first...] (q->ops sized with sl__share_count). */
int sl__share_setup(struct sl_query *q, int first);
/* The next reader of shared plan node `node`, for the consumer whose pipeline is being
 * lowered; NULL if the node is not shared. */
struct sl__opstate *sl__share_reader(struct sl_query *q, int node);
/* The keeper of shared plan node `node`, or NULL. */
struct sl__opstate *sl__share_keeper(struct sl_query *q, int node);
/* A reader pipeline's graph edges: it starts after the keeper's finalize; its `done`
 * node lets the rows go after the last reader. */
int sl__share_graph(struct sl_query *q, struct sl__pipeline *p);
/* Counts in the host budget the buffers of a batch to keep that no budget holds yet. */
int sl__share_charge(sl_task_t *t, sl_batch_t *b);
/* The plan node an operator state stands for: its own, a keeper's or reader's shared
 * node, or -1 (an output's collector). */
int sl__opstate_node(const struct sl_query *q, const struct sl__opstate *os);

#endif /* SLUICE_RUNTIME_EXEC_INT_H */
