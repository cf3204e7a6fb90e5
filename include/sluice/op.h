/* The operator ABI: what built-in operators and plugins implement.
 *
 * Operator ABI version 1, frozen in 0.2: from here on the structs below only grow at
 * their end and every change bumps SL_OP_ABI_VERSION (the rules are in plugin.h).
 * Version 2 added sl_op_def.can_split (co-processing); version 1 definitions still load
 * and are never split.
 *
 * An operator is an immutable `struct sl_op_def` registered by name. A plan node using
 * it is an `sl_op_t`. Execution follows DuckDB's roles:
 *   source   produces batches: task i of n, n from source_tasks (morsels, partitions);
 *   execute  turns one input batch into zero or more output batches (streaming);
 *   sink     consumes input batches into per-worker local state (a pipeline breaker);
 *   combine  merges one local state into the global state (called once per local
 *            state, never concurrently for one node);
 *   finalize runs once after every sink and combine; it may spawn parallel work.
 * A node with a sink and a source (an aggregate, a partitioned join) ends the pipelines
 * of its inputs and starts a new one once finalize has finished.
 *
 * GPU placement: a pipeline placed on a GPU runs each stage's CUDA implementation there
 * (others on the host; the runtime moves batches across). A sink whose input pipelines
 * ran on a GPU runs its combine and finalize phases there too when they have a CUDA
 * implementation: on that GPU's compute stream, from a CPU thread that waits for the
 * stream afterwards (sl_task_device_kind says SL_DEVICE_CUDA). The pipeline that starts
 * at such a node's source then goes to the same GPU when its source has a CUDA
 * implementation and placement is not forced to the CPU, so results stay on the GPU.
 *
 * Co-processing (ABI version 2): a pipeline may be split across devices — its morsels
 * run on CPU workers and on a GPU at once — only when every node of it says yes through
 * can_split. A streaming node or source must then give the same rows whichever device
 * runs a morsel; a sink's combine and finalize must merge host local states with the
 * GPU worker's (its finalize runs on the GPU when the CUDA implementation can, else on
 * the host, as for any GPU pipeline).
 *
 * Each phase lists implementations per device kind, as StarPU's codelets do; the
 * scheduler picks one per task. All implementations share one signature:
 *     int run(sl_task_t *task);
 * returning SL_OK (or a flow code) or a negative error (after sl_task_fail).
 */
#ifndef SLUICE_OP_H
#define SLUICE_OP_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "data.h"
#include "engine.h"
#include "plan.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SL_OP_ABI_VERSION 3u

typedef struct sl_op sl_op_t;
typedef struct sl_task sl_task_t;
typedef struct sl_bind sl_bind_t;

/* struct sl_op_def.flags */
enum {
    SL_OP_SOURCE = 1u << 0,   /* has a source phase (with or without inputs) */
    SL_OP_SINK = 1u << 1,     /* consumes its inputs through sink (pipeline breaker) */
    SL_OP_STREAM = 1u << 2    /* consumes its input through execute */
};

/* struct sl_impl.flags */
enum {
    SL_IMPL_ASYNC = 1u << 0   /* CUDA: only enqueues on sl_task_stream; the runtime waits */
};

enum sl_option_type { SL_OPT_INT = 0, SL_OPT_FLOAT = 1, SL_OPT_STRING = 2, SL_OPT_BOOL = 3 };

/* One option an operator accepts. Unknown options are an error at plan time. */
struct sl_option_def {
    const char *name;
    enum sl_option_type type;
    const char *default_value; /* NULL = required */
    const char *doc;
};

/* One implementation of a phase on one kind of device. */
struct sl_impl {
    enum sl_device_kind device;
    uint32_t flags;
    int (*run)(sl_task_t *task);
    /* Optional: 0 if this implementation cannot run this task (e.g. a type it lacks). */
    int (*can_run)(const sl_task_t *task);
};

/* Optional cost estimate: expected seconds for `rows` input rows of this node on a
 * device of `kind`, or a negative value for "no idea" (then history decides). */
typedef double (*sl_cost_fn)(const sl_op_t *op, enum sl_device_kind kind, int64_t rows);

struct sl_phase {
    const struct sl_impl *impls;
    unsigned n_impls;
    sl_cost_fn cost;
};

struct sl_op_def {
    uint32_t abi_version;           /* SL_OP_ABI_VERSION when built */
    uint32_t flags;                 /* SL_OP_* */
    const char *name;               /* unique: "gen.sequence" */
    const char *doc;                /* one line */
    int min_inputs, max_inputs;
    const struct sl_option_def *options;
    unsigned n_options;

    /* Checks options and input schemas and declares the output schema; may attach
     * per-node data. Runs when the node is added to a plan. Required. */
    int (*bind)(sl_bind_t *b);

    size_t global_state_bytes, local_state_bytes; /* zeroed by the runtime */
    int (*init_global)(const sl_op_t *op, void *gstate);        /* optional */
    void (*fini_global)(const sl_op_t *op, void *gstate);       /* optional */
    /* init_local that fails frees what it made itself: fini_local is not called then. */
    int (*init_local)(const sl_op_t *op, void *gstate, void *lstate);  /* optional */
    void (*fini_local)(const sl_op_t *op, void *gstate, void *lstate); /* optional */

    /* Number of source tasks, asked once the node's inputs are finalized. `task` gives
     * the node, its global state and the morsel size; a negative value is an error
     * (record it with sl_task_fail). NULL means one task. */
    int64_t (*source_tasks)(sl_task_t *task);

    const struct sl_phase *source, *execute, *sink, *combine, *finalize;

    /* --- added in ABI version 2 --- */
    /* Optional: 1 if this node accepts a pipeline split across CPU and GPU (see
     * "Co-processing" above), 0 if not. NULL (and every version 1 definition) means no.
     * Asked when a pipeline is placed, from any thread. */
    int (*can_split)(const sl_op_t *op);
    /* fields added in ABI version 3 go below this line */
};

/* --- bind context (inside sl_op_def.bind) ---
 * Valid only during the bind call, on the thread that makes it. Pointers returned
 * (schemas, option strings) are owned by the plan and live as long as it. Every
 * function of this group was added in 0.1 unless it says otherwise. */
/* Number of inputs of the node being bound. Cannot fail. */
SL_API int sl_bind_num_inputs(const sl_bind_t *b);
/* Output schema of the node's input `port` (borrowed); NULL for a bad port. */
SL_API const sl_schema_t *sl_bind_input_schema(const sl_bind_t *b, int port);
/* Typed option access; the option must be declared in the op's options. A declared
 * option with a default is always present. SL_ENOTFOUND if absent without default;
 * SL_EINVAL if the text does not parse as the type (the message says so). */
SL_API int sl_bind_option_int(sl_bind_t *b, const char *name, int64_t *out);
SL_API int sl_bind_option_float(sl_bind_t *b, const char *name, double *out);
SL_API int sl_bind_option_str(sl_bind_t *b, const char *name, const char **out);
SL_API int sl_bind_option_bool(sl_bind_t *b, const char *name, int *out);
/* 1 if the user gave the option explicitly, else 0. Cannot fail. */
SL_API int sl_bind_option_given(const sl_bind_t *b, const char *name);
/* Appends a column to the node's output schema (`name` is copied). Errors: SL_EINVAL
 * (empty or duplicate name, bad type), SL_ENOMEM. */
SL_API int sl_bind_add_column(sl_bind_t *b, const char *name, enum sl_type type);
/* Attaches per-node data, which the plan then owns: freed with free_fn (may be NULL)
 * when the plan is destroyed or the node rebound. Cannot fail. */
SL_API void sl_bind_set_data(sl_bind_t *b, void *data, void (*free_fn)(void *));
/* Sets the estimated output rows (for costs and progress); -1 = unknown (default). */
SL_API void sl_bind_set_rows(sl_bind_t *b, int64_t rows);
/* Estimated input rows of port `port`, or -1 (unknown or a bad port). */
SL_API int64_t sl_bind_input_rows(const sl_bind_t *b, int port);
/* Records a bind error (printf-style) and returns code, for `return sl_bind_fail(...)`. */
SL_API int sl_bind_fail(sl_bind_t *b, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* --- node accessors (any phase) ---
 * Read-only views of a bound node: thread-safe, cannot fail, results owned by the plan.
 * Added in 0.1. */
/* The operator's name ("join"). */
SL_API const char *sl_op_name(const sl_op_t *op);
/* The data attached at bind (sl_bind_set_data), or NULL. */
SL_API void *sl_op_data(const sl_op_t *op);
/* Number of inputs. */
SL_API int sl_op_num_inputs(const sl_op_t *op);
/* Output schema of input `port`, or NULL for a bad port. */
SL_API const sl_schema_t *sl_op_input_schema(const sl_op_t *op, int port);
/* The node's own output schema. */
SL_API const sl_schema_t *sl_op_output_schema(const sl_op_t *op);

/* --- task context (inside a phase implementation) ---
 * Valid only inside the phase call that received the task, on its thread. Failures
 * are recorded on the query (sl_task_fail) and end it; an implementation then returns
 * the negative code. Added in 0.1 unless it says otherwise. */
/* The node the task runs. Cannot fail. */
SL_API const sl_op_t *sl_task_op(const sl_task_t *t);
/* The node's global state (global_state_bytes, zeroed, then init_global). Shared by
 * every task of the node: phases that run concurrently synchronize their own access. */
SL_API void *sl_task_gstate(const sl_task_t *t);
/* Local state of this node on this worker (NULL for ops without local state). */
SL_API void *sl_task_lstate(sl_task_t *t);
/* Index of this task within its group (morsel, partition, spawned item) and group size. */
SL_API int64_t sl_task_index(const sl_task_t *t);
SL_API int64_t sl_task_count(const sl_task_t *t);
/* Input port of the batch being sunk or executed. */
SL_API int sl_task_port(const sl_task_t *t);
/* The batch being sunk or executed (borrowed). */
SL_API sl_batch_t *sl_task_input(const sl_task_t *t);
/* The argument given to sl_task_spawn, for spawned tasks; NULL otherwise. */
SL_API void *sl_task_arg(const sl_task_t *t);
/* SL_DEVICE_CPU or SL_DEVICE_CUDA: which implementation runs. */
SL_API enum sl_device_kind sl_task_device_kind(const sl_task_t *t);
/* CPU worker id (0..n_threads-1) or GPU ordinal. */
SL_API int sl_task_worker(const sl_task_t *t);
/* Rows per morsel where the task's pipeline runs (its GPU's chunk size when it was
 * placed on a GPU, even for a stage that runs on the host there). */
SL_API int64_t sl_task_morsel_rows(const sl_task_t *t);
/* Sends a batch downstream; takes over the caller's reference, also on failure.
 * Errors: SL_EINVAL (NULL batch), SL_ESTATE (outside a pipeline), SL_ECANCELED (the
 * query failed meanwhile). */
SL_API int sl_task_emit(sl_task_t *t, sl_batch_t *b);
/* Records the first failure of the task's query (printf-style; the device that ran the
 * task goes into sl_error_info.device) and returns code (SL_EINTERNAL for a code
 * that is not negative). Thread-safe: only the query's first failure is kept. */
SL_API int sl_task_fail(sl_task_t *t, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* 1 once the query failed or was cancelled; long loops check it between morsels. */
SL_API int sl_task_cancelled(const sl_task_t *t);
/* Memory that lives until the query ends (64-byte aligned, counted in the host budget);
 * NULL after recording SL_EBUDGET or SL_ENOMEM on the query. */
SL_API void *sl_task_alloc(sl_task_t *t, size_t bytes);
/* Frees memory from sl_task_alloc early (optional; NULL is fine). */
SL_API void sl_task_free(sl_task_t *t, void *p);
/* Spawns n parallel tasks running `work` with `arg`; the spawning task (and so its
 * phase) completes only when they have. If `then` is not NULL it runs once, as one
 * task with the same arg, after all n complete, and may spawn again. */
SL_API int sl_task_spawn(sl_task_t *t, const struct sl_phase *work, int64_t n, void *arg,
                         const struct sl_phase *then);
/* A new batch for this task's output with the given schema and rows, uninitialized, on
 * the task's device (host memory for CPU tasks, the GPU's pool for CUDA tasks, ordered
 * on sl_task_stream). NULL after recording the failure on the query. */
SL_API sl_batch_t *sl_task_new_batch(sl_task_t *t, const sl_schema_t *schema, int64_t rows);
/* CUDA tasks: a device pointer to the task's status word (int32, 0 = fine). A kernel
 * that finds bad data or a full table writes a negative SL_E* code there; the runtime
 * reads it when the task completes and fails the query. NULL on CPU. */
SL_API int32_t *sl_task_status(const sl_task_t *t);
/* Adds to the query's progress counters (sl_query_progress). Thread-safe. */
SL_API void sl_task_progress(sl_task_t *t, int64_t rows, int64_t bytes);
/* Adds `ms` to the named phase of this task's operator: the query profile lists an
 * operator's phases under "phases" (sl_query_profile_json). `name` must live as long as
 * the query (a string literal); an operator has at most 16 names, further ones are
 * dropped and counted in its "profile_dropped". Added in 0.2. */
SL_API void sl_task_phase_time(sl_task_t *t, const char *name, double ms);
/* Sets the named value of this task's operator in the query profile, listed under
 * "values" (sl_query_profile_json): a choice the operator made, such as the GPU join's
 * radix bits. The last value set wins; `name` must live as long as the query; at most 16
 * names per operator, further ones are dropped and counted in its "profile_dropped".
 * Added in 0.3. */
SL_API void sl_task_profile_value(sl_task_t *t, const char *name, int64_t value);
/* The value of engine option `name` (option.h, docs/OPTIONS.md) for this task's query:
 * the engine's value when the query was created, or the plan's. sl_task_option_int
 * reads booleans (0/1), integers and enumerations (the index of the choice);
 * sl_task_option_float reads any number. *out is left alone on error: SL_ENOTFOUND for
 * an unknown name, SL_ETYPE for an option of another type. Operators read their
 * switches here, never from globals or the environment. Added in 0.3. */
SL_API int sl_task_option_int(const sl_task_t *t, const char *name, int64_t *out);
SL_API int sl_task_option_float(const sl_task_t *t, const char *name, double *out);
/* The CUDA stream of a CUDA task (a cudaStream_t, owned by the runtime: never destroy
 * or synchronize the device through it), NULL on CPU. */

SL_API void *sl_task_stream(const sl_task_t *t);

/* --- GPU memory and data movement (added in 0.2) --- */
/* CUDA tasks: `bytes` of device memory from the pool of the task's GPU, 256-byte
 * aligned, ordered on sl_task_stream (work enqueued there after this call may use it)
 * and counted against the engine's GPU budget. It lives until sl_task_device_free or
 * the end of the query. NULL after recording the failure on the query: SL_EBUDGET when
 * the GPU budget is exceeded (the message says by how much), SL_ESTATE on a CPU task,
 * SL_EDEVICE. Zero bytes gives a valid, unique pointer. */
SL_API void *sl_task_device_alloc(sl_task_t *t, size_t bytes);
/* Frees memory from sl_task_device_alloc, ordered on the task's stream. NULL is fine. */
SL_API void sl_task_device_free(sl_task_t *t, void *d_ptr);
/* Device memory of the task's GPU still free under the engine's GPU budget (bytes);
 * 0 on a CPU task. Operators size chunks and fan-outs with it. */
SL_API int64_t sl_task_device_budget(const sl_task_t *t);
/* A copy of batch `b` in host memory, waited for (on the task's stream: other streams of
 * the GPU go on); when b is already in host memory, *out is b with a new reference.
 * Works on any task. The copy counts in the engine's host budget (option host_mem) until
 * its buffers go: SL_EBUDGET when it does not fit. The caller owns *out. */
SL_API int sl_task_batch_to_host(sl_task_t *t, sl_batch_t *b, sl_batch_t **out);
/* CUDA tasks: batch `b` in the memory of the task's GPU, the copy ordered before work
 * enqueued on sl_task_stream afterwards; b itself (new reference) if already there. */
SL_API int sl_task_batch_to_device(sl_task_t *t, sl_batch_t *b, sl_batch_t **out);
/* A batch of `rows` rows viewing rows [offset, offset + rows) of b (no copy). */
SL_API sl_batch_t *sl_task_batch_slice(sl_task_t *t, sl_batch_t *b, int64_t offset, int64_t rows);

/* --- registry --- */
typedef struct sl_registry sl_registry_t;
/* Registers an operator definition (kept by pointer: it must outlive the engine).
 * SL_EABI if its abi_version is newer than this library's; SL_EEXIST if the name is
 * taken. */
SL_API int sl_registry_add(sl_registry_t *reg, const struct sl_op_def *def);
/* The process-wide registry that plans resolve operator names in. */
SL_API sl_registry_t *sl_registry_global(void);
/* Looks up an operator by name; NULL if none. */
SL_API const struct sl_op_def *sl_registry_find(sl_registry_t *reg, const char *name);
/* Calls cb for each registered operator, in name order. */
SL_API void sl_registry_foreach(sl_registry_t *reg, void (*cb)(void *user, const struct sl_op_def *),
                                void *user);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_OP_H */
