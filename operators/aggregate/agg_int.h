/* Internal header of the hash group-by (agg_hash.c, agg_table.c): the bound plan of a
 * group-by, the per-group state, and the open-addressing table shared by the
 * thread-local pre-aggregation and the partition merge. */
#ifndef SLUICE_AGG_INT_H
#define SLUICE_AGG_INT_H

#include <stdatomic.h>

#include "common/op_def.h"
#include "expr/expr.h"

#define AGG_MAX_KEYS 16
#define AGG_MAX_AGGS 32
/* Radix partitions of the partitioned merge: top AGG_PART_BITS bits of the hash. */
#define AGG_PART_BITS 10
#define AGG_PARTS (1 << AGG_PART_BITS)
/* Groups a worker's local table holds before it is flushed into partitions: its slots
 * and group arrays (about 1 MiB for one key and two aggregates) stay in L2. */
#define AGG_LOCAL_GROUPS (1 << 14)
/* Rows handled at once by the vectorized sink loops. */
#define AGG_VEC 1024
/* A sink's table of at most this many groups counts a vector's rows once and adds
 * integer sums through per-lane arrays (agg_table.c, small_rows). */
#define AGG_FEW_GROUPS 64

enum agg_fn { AGG_COUNT_STAR, AGG_COUNT, AGG_SUM, AGG_MIN, AGG_MAX, AGG_AVG, AGG_COUNT_DISTINCT };

struct agg_spec {
    enum agg_fn fn;
    int col;               /* input column; -1 for count(*) */
    enum sl_type in_type;  /* type of the input column */
    enum sl_type out_type; /* type of the output column */
    bool is_int;           /* input is read as an integer: int32/int64, date32, timestamp,
                            * decimal up to precision 18 (sl__agg_table_int_type) */
};

/* Types the group table reads as integers (a date32 as its int32, a timestamp or a
 * decimal of precision <= 18 as its int64). */
static inline bool sl__agg_table_int_type(enum sl_type t)
{
    return t == SL_TYPE_INT32 || t == SL_TYPE_INT64 || t == SL_TYPE_DATE32 ||
           t == SL_TYPE_TIMESTAMP || (SL_TYPE_ID(t) == SL_TYPE_DECIMAL && sl_type_width(t) == 8);
}

/* Bytes of an aggregate's value in a flushed record (after its 8-byte count): none for
 * counts, 16 for the exact 128-bit sum of integers (sum, avg), else 8 (an int64 min or
 * max, a double). */
static inline size_t sl__agg_rec_val_bytes(const struct agg_spec *s)
{
    if (s->fn == AGG_COUNT_STAR || s->fn == AGG_COUNT)
        return 0;
    return (s->fn == AGG_SUM || s->fn == AGG_AVG) && s->is_int ? 16 : 8;
}

/* Batches the group-by of any type (agg_any.c) keeps until finalize. */
struct agg_kept_batch;

/* The bound group-by (per-node data). */
struct agg_plan {
    int n_keys;
    int key_cols[AGG_MAX_KEYS];
    enum sl_type key_types[AGG_MAX_KEYS];
    int n_aggs;
    struct agg_spec aggs[AGG_MAX_AGGS];
    size_t rec_bytes;      /* bytes of one flushed group record (write_record) */
    /* Every aggregate is a count or a sum (avg): the sink counts rows once for all of
     * them (agg_table.prow), and with one key it may write rows of many groups into the
     * partitions as they are (sl__agg_table_raw) records of raw_bytes: the key, then
     * each sum's value (8 bytes each). */
    bool counts_sums;
    size_t raw_bytes;
    /* A key the table cannot take (as an integer, DICT codes or utf8 ids), an aggregated
     * column that is not integer-like or a float, or count(DISTINCT): the group-by of
     * any type (agg_any.c) runs instead of the table below. */
    bool any;
    /* Every key and value column is one the GPU kernels take (integers and floats, DICT
     * keys as their int32 codes): the GPU may run it. */
    bool gpu_types;
    /* where=: only rows where it is TRUE are aggregated (NULL: every row). The CPU sink
     * selects them first (sl__pred_apply); the GPU sink gives its kernels their numbers
     * (where_xp: the predicate's GPU program; NULL: the GPU cannot run it). */
    struct sl__expr *where;
    struct sl__xp *where_xp;
    char where_why[200];   /* why where_xp is NULL (as the GPU filter's `why`) */
};

/* The running value of one aggregate of one group: an exact 128-bit sum of integers
 * (so an int64 sum overflows only if its final value does, whatever the order), a
 * float64 sum, or the current min/max. */
union agg_val {
    __int128 s;
    int64_t i;
    double f;
};

/* An open-addressing table with linear probing. slots[i] = (hash >> 32) << 32 | gid+1
 * (0 = empty); group gid has its hash, key null mask, keys and per-aggregate count and
 * value in column arrays. */
struct agg_table {
    uint64_t *slots;
    uint64_t mask;              /* slots - 1 (a power of two minus one) */
    int64_t n, cap;             /* groups, group capacity */
    int64_t rows;               /* rows added since the table was last emptied */
    int64_t cap_alloc;          /* groups the arrays have room for */
    uint64_t slots_alloc;       /* slots allocated */
    bool null_keys;             /* some group has a null key (nulls[g] != 0) */
    uint64_t *hashes, *nulls;
    int64_t *keys;              /* n_keys per group */
    int64_t *cnt[AGG_MAX_AGGS];
    union agg_val *val[AGG_MAX_AGGS];
    /* Integer sums (sum, avg) of a sink's table (sl__agg_table_use_partials): int64
     * partial sums the sink adds rows to, and how much their magnitudes may still grow
     * (INT64_MAX: all zero); sl__agg_table_fold adds them to val. NULL for other
     * aggregates and tables. */
    int64_t *part[AGG_MAX_AGGS];
    uint64_t room[AGG_MAX_AGGS];
    /* Rows of each group added by the sink's fused loop (fused_rows, a vector whose every
     * aggregate is a count or sum without nulls), counted once for all aggregates;
     * sl__agg_table_fold adds them to every cnt[a]. NULL where cnt is all there is. */
    int64_t *prow;
    bool prow_dirty;            /* some prow[g] is not zero */
    /* The memory flushed records' chunks are cut from (sl__agg_table_flush): slabs of
     * 1 MiB doubling to 128 MiB, so they come from the host allocator's cache of large
     * blocks (kept from query to query, on huge pages) instead of fresh 4 KiB pages. */
    char *slab;
    size_t slab_left, slab_next;
};

/* A block of flushed group records of one partition. */
struct agg_chunk {
    struct agg_chunk *next;
    int64_t n, cap;             /* records */
    char *data;
};

/* GPU part of a worker's local state (agg_cuda.c), NULL on CPU workers. */
struct agg_gpu_local;

struct agg_local {
    bool ready;
    /* The table was shrunk (fewer than 2 rows a group): batches that sl__agg_table_raw
     * takes go into raw[] as rows. */
    bool raw_mode;
    int64_t flushed;                     /* times the table was flushed (or rows written
                                          * raw) */
    struct agg_table tb;
    struct agg_chunk *parts[AGG_PARTS];
    struct agg_chunk *raw[AGG_PARTS];    /* raw row records, by the same hash bits */
    struct agg_gpu_local *gpu;
    struct agg_kept_batch *batches;      /* plan->any: the batches sunk */
    struct agg_str_local *str;           /* utf8 keys: this worker's cache (agg_str.c) */
    struct sl__pred_state pred;          /* where= on the CPU */
};

/* What combine keeps of one worker's local state. */
struct agg_kept {
    struct agg_kept *next;
    int64_t flushed;
    struct agg_table tb;
    struct agg_chunk *parts[AGG_PARTS];
    struct agg_chunk *raw[AGG_PARTS];
};

#define AGG_MAX_WORKERS 256
#define AGG_MAX_GPU_LOCALS 16

struct agg_global {
    struct agg_kept *locals;
    int64_t groups, flushed;
    int64_t n_out;                       /* output tables (source tasks) */
    struct agg_table *out;               /* the single table of the small case */
    /* Partitioned case: each merge task builds its output batch at once in a table
     * reused by its worker (no fresh memory per partition); the source emits it. */
    sl_batch_t *part_out[AGG_PARTS];
    struct agg_table *scratch[AGG_MAX_WORKERS];
    /* GPU (agg_cuda.c): local states of GPU workers, and the result when finalize ran
     * on a GPU (gpu = 1), kept in device memory. */
    struct agg_gpu_local *gpu_locals[AGG_MAX_GPU_LOCALS];
    int n_gpu_locals, gpu;
    sl_batch_t *gpu_out;
    /* plan->any (agg_any.c): the batches of every worker, then the result. */
    struct agg_kept_batch *batches;
    sl_batch_t *any_out;
    int16_t run_end[AGG_PARTS];          /* partitions [i, run_end[i]) are merged by one
                                          * task into one batch, part_out[i]; -1: i starts
                                          * no run */
    int64_t part_recs[AGG_PARTS];        /* records (groups and rows) of each partition */
    /* DICT keys on the table (agg_dict.c): one merged dictionary per key column. */
    void *_Atomic dicts;                 /* struct agg_dicts (sl__agg_shared_state) */
    /* utf8/large_utf8 keys on the table (agg_str.c): the distinct strings per key. */
    void *_Atomic strs;                  /* struct agg_strs */
};

/* DICT group keys on the group table (agg_dict.c). Whether the plan has such keys (and
 * runs the table, not agg_any.c); a sunk batch (key j in column cols[j]: p->key_cols, or
 * 0, 1, ... for an output batch of partial states) with its DICT keys as int32 codes of
 * the merged dictionaries (*out: a new reference); the merged dictionaries made final
 * (finalize); an output batch's key columns given them; and the state freed. */
struct agg_dicts;
bool sl__agg_dict_keys(const struct agg_plan *p);
/* Whether a key's type sends the plan to agg_any.c: neither the table's, DICT nor utf8. */
bool sl__agg_keys_need_any(const struct agg_plan *p);
int sl__agg_dict_input(sl_task_t *t, const struct agg_plan *p, struct agg_global *gs,
                       sl_batch_t *b, const int *cols, sl_batch_t **out);
/* The map of key j's dictionary (column c of b) onto key j's merged dictionary (merged
 * on first sight): *n entries; *identity when every code is its merged code already (the
 * dictionary merged first, its strings distinct). NULL when out of memory. The GPU sink
 * remaps the codes of other dictionaries with it (agg_cuda_dict.c). */
const int32_t *sl__agg_dict_map(struct agg_global *gs, int j, const sl_batch_t *b, int c,
                                int64_t *n, bool *identity);
int sl__agg_dict_finish(sl_task_t *t, const struct agg_plan *p, struct agg_global *gs);
void sl__agg_dict_attach(const struct agg_plan *p, struct agg_global *gs, sl_batch_t *b);
void sl__agg_dicts_free(struct agg_global *gs);
/* The key tables the workers share (agg_dict.c, agg_str.c): the state *slot points at,
 * made (`bytes`, zeroed) by the first of the workers racing for it; NULL when out of
 * memory. A spin lock guards each table while a worker adds to it. And *p (*cap
 * elements of width bytes) grown to hold need elements (false when out of memory). */
void *sl__agg_shared_state(void *_Atomic *slot, size_t bytes);
static inline void sl__agg_lock(_Atomic int *l)
{
    while (atomic_exchange_explicit(l, 1, memory_order_acquire))
        ;
}
static inline void sl__agg_unlock(_Atomic int *l)
{
    atomic_store_explicit(l, 0, memory_order_release);
}
bool sl__agg_grow(void **p, int64_t *cap, int64_t need, size_t width);

/* A new batch sharing every column of b (NULL when out of memory), and its column c
 * replaced by data (b->n_rows values of type, the reference taken over) with b's
 * validity moved to offset 0: the coded batches the table sinks. */
sl_batch_t *sl__agg_batch_share(const sl_batch_t *b);
int sl__agg_col_replace(sl_batch_t *nb, const sl_batch_t *b, int c, struct sl__buf *data,
                        enum sl_type type);

/* utf8/large_utf8 group keys on the group table (agg_str.c). Whether a key type is
 * one; whether the plan has such keys (and runs the table, not agg_any.c); a sunk batch
 * with those keys as int64 ids of one shared table of distinct strings per key (*out: a
 * new reference); the strings of key j of tb's groups written into column j of b (an
 * output batch being built); and the states freed. */
struct agg_strs;
struct agg_str_local;
bool sl__agg_str_key_type(enum sl_type t);
bool sl__agg_str_keys(const struct agg_plan *p);
int sl__agg_str_input(sl_task_t *t, const struct agg_plan *p, struct agg_global *gs,
                      struct agg_local *ls, sl_batch_t *b, sl_batch_t **out);
int sl__agg_str_output(sl_task_t *t, const struct agg_plan *p, const struct agg_table *tb,
                       sl_batch_t *b, int j);
void sl__agg_str_local_free(struct agg_local *ls);
void sl__agg_strs_free(struct agg_global *gs);

/* The pieces of the definition (agg_hash.c), shared by the CPU-only definition and the
 * one with the GPU implementations (agg_cuda.c, registered by CUDA builds). */
/* Releases what a worker's local state still holds (a failed query's batches). */
void sl__agg_fini_local(const sl_op_t *op, void *gstate, void *lstate);
#define SL__AGG_N_OPTIONS 3
extern const struct sl_option_def sl__agg_options[SL__AGG_N_OPTIONS];
int sl__agg_bind(sl_bind_t *b);
int sl__agg_can_split(const sl_op_t *op);
void sl__agg_fini_global(const sl_op_t *op, void *gstate);
int sl__agg_sink(sl_task_t *t);
/* The CPU sink of batch `in` (host memory) into local state ls (where=, DICT keys and
 * all): sl__agg_sink's body, also run by the GPU group-by's CPU tasks for batches it
 * moved to the host (agg_cuda_budget.c). */
int sl__agg_sink_batch(sl_task_t *t, struct agg_local *ls, sl_batch_t *in);
int sl__agg_combine(sl_task_t *t);
/* Files a local state's table and partitions under gs (combine's CPU part). */
int sl__agg_keep_local(sl_task_t *t, struct agg_global *gs, struct agg_local *ls);
int64_t sl__agg_source_tasks(sl_task_t *t);
int sl__agg_source(sl_task_t *t);
/* The definition's fields (SL__SINK_SOURCE_DEF, common/op_def.h) but for the
 * source_tasks and fini_local functions, which the GPU's adds to. */
#define SL__AGG_DEF_FIELDS(source_tasks_, fini_local_)                                     \
    .name = "aggregate",                                                                   \
    .doc = "hash group-by on keys of any type: count(*), count, count(DISTINCT), sum, "  \
           "min, max, avg (SQL nulls)",                                                    \
    .min_inputs = 1, .max_inputs = 1, .options = sl__agg_options,                          \
    .n_options = SL__AGG_N_OPTIONS, .bind = sl__agg_bind,                                  \
    .global_state_bytes = sizeof(struct agg_global),                                       \
    .local_state_bytes = sizeof(struct agg_local), .fini_global = sl__agg_fini_global,     \
    .fini_local = fini_local_, .source_tasks = source_tasks_, .can_split = sl__agg_can_split

/* GPU implementations (agg_cuda.c, CUDA builds only). On a GPU the sink pre-aggregates
 * (or partitions) each device batch into a device table of the worker; combine collects
 * those, finalize writes the result on the GPU and the source emits it from device
 * memory. */
/* Drops the batches a GPU local keeps (agg_cuda.c); NULL is fine. */
void agg_gpu_local_release(struct agg_gpu_local *g);
int agg_gpu_sink_can_run(const sl_task_t *t);
/* DICT keys on the GPU (agg_cuda_dict.c): the codes of key j (column c) of device batch
 * b as codes of the merged dictionary: *remapped NULL when b's codes are such already,
 * else a new one-column device batch holding them (the caller's reference), or
 * AGG_GPU_INPUT_OVER_BUDGET (agg_cuda.h, nothing recorded) when the GPU budget left
 * cannot hold them and the map; and the output batch's DICT key columns given the merged
 * dictionaries. Failures are recorded on the task. */
int agg_gpu_dict_codes(sl_task_t *t, struct agg_global *gs, const sl_batch_t *b, int j, int c,
                       sl_batch_t **remapped);
int agg_gpu_dicts_attach(sl_task_t *t, const struct agg_plan *p, struct agg_global *gs,
                         sl_batch_t *b);
int agg_gpu_sink(sl_task_t *t);
int agg_gpu_finalize_can_run(const sl_task_t *t);
int agg_gpu_finalize(sl_task_t *t);
int agg_gpu_source_can_run(const sl_task_t *t);
int64_t agg_gpu_source_tasks(sl_task_t *t);
int agg_gpu_source(sl_task_t *t);
/* Estimated seconds of the sink for `rows` rows on a device kind (sl_phase.cost). */
double sl__agg_cost(const sl_op_t *op, enum sl_device_kind kind, int64_t rows);
/* The CPU finalize (agg_hash.c). */
int sl__agg_finalize_cpu(sl_task_t *t);

/* The group-by of any type (agg_any.c): the sink keeps the batch, combine moves a
 * worker's batches to the global list, finalize groups them all in one task, the
 * source emits the result (one task). */
int sl__agg_any_sink(sl_task_t *t, sl_batch_t *b);
void sl__agg_any_combine(struct agg_global *gs, struct agg_local *ls);
int sl__agg_any_finalize(sl_task_t *t);
int sl__agg_any_source(sl_task_t *t);
/* Drops the batches of a list (a failed query's states). */
void sl__agg_any_release(struct agg_kept_batch **list);

/* Allocates a table for cap groups (slots: at least 2 * cap) from the query's memory;
 * SL_ENOMEM after recording the failure. */
int sl__agg_table_init(sl_task_t *t, const struct agg_plan *p, struct agg_table *tb, int64_t cap);
/* Gives a table int64 partial sums for its integer sums (a sink's table; see struct
 * agg_table). SL_ENOMEM after recording the failure. */
int sl__agg_table_use_partials(sl_task_t *t, const struct agg_plan *p, struct agg_table *tb);
/* Empties a table and sizes it for cap groups (at most its cap_alloc). */
void sl__agg_table_reset(struct agg_table *tb, int64_t cap);
/* Empties a table. */
void sl__agg_table_clear(struct agg_table *tb);
/* Aggregates rows [0, n) of batch b into tb, flushing tb into parts when it fills (parts
 * may be NULL only if tb can take every group). Returns SL_OK or a failure recorded on
 * the task. */
int sl__agg_table_sink(sl_task_t *t, const struct agg_plan *p, struct agg_table *tb,
                       const sl_batch_t *b, struct agg_chunk **parts, int64_t *flushed);
/* Rows with many groups, written as they are: when batch b has no null in its key (one
 * integer key column: p->counts_sums, p->n_keys == 1) nor in a summed column, and a
 * sample of its first rows does not show at least 2 rows a group, appends each row as a
 * record of p->raw_bytes (key, sums' values) to raw[top hash bits] and returns 1; 0 when
 * the table should take b; or a failure recorded on the task. */
int sl__agg_table_raw(sl_task_t *t, const struct agg_plan *p, struct agg_table *tb,
                      const sl_batch_t *b, struct agg_chunk **raw);
/* Merges every raw row record of a chunk list into dst (dst must have room). */
void sl__agg_table_merge_raw(const struct agg_plan *p, struct agg_table *dst,
                             const struct agg_chunk *c);
/* Adds the int64 partial sums into the exact sums (val) and zeroes them. The sink does
 * so before it returns and before each flush, so readers see exact sums. */
void sl__agg_table_fold(const struct agg_plan *p, struct agg_table *tb);
/* Appends every group of tb as a record to the partition lists and clears tb. */
int sl__agg_table_flush(sl_task_t *t, const struct agg_plan *p, struct agg_table *tb,
                        struct agg_chunk **parts);

/* Adds the groups of b, an output batch of this aggregate in host memory (the GPU's
 * groups of a co-processed query), to gs as one more local table of partial states.
 * No avg (agg_can_split). Returns SL_OK or a failure recorded on the task. */
int sl__agg_add_partials(sl_task_t *t, const struct agg_plan *p, struct agg_global *gs,
                         const sl_batch_t *b);
/* The same into a new local state *out (not yet filed under gs: sl__agg_file_kept), so
 * that several tasks can rebuild partial states at once. */
int sl__agg_partials_kept(sl_task_t *t, const struct agg_plan *p, const sl_batch_t *b,
                          struct agg_kept **out);
void sl__agg_file_kept(struct agg_global *gs, struct agg_kept *k);

/* Merges every group of src into dst (dst must have room). */
void sl__agg_table_merge_table(const struct agg_plan *p, struct agg_table *dst,
                               const struct agg_table *src);
/* Merges every record of a chunk list into dst (dst must have room). */
void sl__agg_table_merge_chunks(const struct agg_plan *p, struct agg_table *dst,
                                const struct agg_chunk *c);
/* Builds the output batch of tb's groups; NULL after recording the failure (an int64
 * sum that does not fit: SL_EOVERFLOW). */
sl_batch_t *sl__agg_table_output(sl_task_t *t, const struct agg_plan *p, const struct agg_table *tb);
/* An output batch of `rows` rows (columns allocated); NULL after recording the failure. */
sl_batch_t *sl__agg_output_new(sl_task_t *t, int64_t rows);
/* Writes tb's groups into rows [at, at + tb->n) of output batch b (at 0 only for utf8
 * keys); SL_OK or a failure recorded on the task (SL_EOVERFLOW, SL_ENOMEM). */
int sl__agg_table_output_at(sl_task_t *t, const struct agg_plan *p, const struct agg_table *tb,
                            sl_batch_t *b, int64_t at);
/* 64-byte aligned memory that lives until the query ends; NULL after recording. */
void *sl__agg_alloc(sl_task_t *t, size_t bytes);

#endif /* SLUICE_AGG_INT_H */
