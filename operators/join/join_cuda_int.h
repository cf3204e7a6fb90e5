/* Internal header of the join operator's GPU path (join_cuda.c: planning, the join
 * kernels, output; join_cuda_side.c: each side as contiguous device keys and packed
 * payload rows, partitioned or sorted). CUDA builds only. */
#ifndef SLUICE_OPERATORS_JOIN_CUDA_INT_H
#define SLUICE_OPERATORS_JOIN_CUDA_INT_H

#include <cuda_runtime_api.h>

#include "gpu_ext.h"
#include "join_int.h"
#include "sluice_k/join_types.h"

#define GJ_MAX_PAY (2 * JOIN_MAX_COLS)
#define GJ_ROW_MAX 16                   /* widest packed row (SL_K_MAX_ROW_BYTES) */

enum gj_algo { GJ_PHJ = 0, GJ_NPJ = 1, GJ_SMJ = 2 };

/* PHJ's radix bits for nb build rows: partitions of about 4,096 build rows (one
 * shared-memory table), 1 to 16 bits. */
static inline int gj_radix_bits(int64_t nb)
{
    int b = join_log2_ceil((nb + 4095) / 4096);
    return b < 1 ? 1 : b > 16 ? 16 : b;
}
/* gj_hash_keys: two different keys share a hash (a success code: the CPU joins). */
#define GJ_HASH_COLLIDED 1
/* gj_npj_table: a key twice in the build side of a direct table auto chose for a large
 * build (g->dense_auto): the join goes back to PHJ (a success code). */
#define GJ_DENSE_DUP 2

/* Steps of the prepare phase timed with CUDA events (debug_join_phase_times). */
#define GJ_STEPS_MAX 10
struct gj_steps {
    int on, n;
    cudaEvent_t ev[GJ_STEPS_MAX];
    const char *name[GJ_STEPS_MAX]; /* name[i]: the step that ended at ev[i] */
};

/* One input side on the GPU. */
struct gj_side {
    int64_t n;
    int64_t *order;                     /* batch indices sorted by the key's buffer offset */
    int on_device;                      /* every batch is in device memory */
    /* payload columns, in row order: the first n_row are packed into the row, then (if
     * id_word) the row id, and the rest are gathered by that id after the join */
    int n_pay, n_row, id_word, bytes;
    int pay_col[GJ_MAX_PAY], pay_w[GJ_MAX_PAY]; /* strings: width 0 */
    int n_late;                         /* the last n_late payloads, always gathered by row
                                         * id: strings and gj_late_fixed columns */
    const void *keys;                   /* contiguous keys (composite: packed to 64 bits) */
    const void *rows;                   /* packed rows (row_bytes each), NULL if none */
    void *keys_own, *rows_own, *ids_own; /* what prepare allocated */
    uint32_t *sel;                      /* rows kept by gj_filter_probe before the rows were
                                         * packed (side row numbers, n of them), NULL: all */
    void *pk, *prow;                    /* partitioned or sorted keys and rows */
    void *prow_own;                     /* prow when allocated (else it aliases pk) */
    int64_t *off;                       /* PHJ partition offsets */
};

struct gj {
    const struct join_data *d;
    int kind;                           /* SL_K_JOIN_* */
    int algo;                           /* enum gj_algo */
    int build;                          /* input side of the build (R) relation */
    int k8, composite;
    int hashed;                         /* keys hashed to 64 bits (join_cuda_str.c) */
    int hash_attempts;                  /* seeds tried (profile value) */
    int row_bytes;                      /* rows of both sides (0: none) */
    int narrow;                         /* PHJ inner, one payload of row_bytes per side */
    int bits, begin;                    /* PHJ radix bits [begin, begin + bits) */
    int begin_set;                      /* begin chosen from a sample already */
    int rows_ready;                     /* gj_prepare_rows ran (rows packed) */
    int filter_passes;                  /* fused select passes of gj_filter_probe (profile) */
    uint64_t kmin;                      /* NPJ dense: smallest build key, as unsigned */
    int64_t range;                      /* NPJ dense: slots of the direct table (0: hash) */
    int dval;                           /* NPJ dense: the table with values (sl_k_npj_dval_*) */
    int dval_values;                    /* ... SL_K_NPJ_DVAL_*: none, or R's packed row */
    int dense_auto;                     /* auto chose the direct table past the NPJ rules
                                         * (a duplicate key: PHJ, not the hash table) */
    int dense_dup;                      /* ... and met a duplicate: PHJ ran (profile) */
    struct gj_side s[2];                /* by input side */
    struct gj_steps steps;              /* gj_steps_begin .. gj_steps_end */
};

/* Counts the nulls of the keys and output columns whose null count is unknown (-1: a GPU
 * projection's result) in the device batches of sides[0] and sides[1] (one
 * synchronization) and keeps each count on its batch. */
int gj_count_unknown_nulls(sl_task_t *t, const struct join_data *d, struct join_side *sides);
/* Column `col` of side s as one device array (in place when the batches are consecutive
 * slices of one device buffer, else copied; *owned set then). */
int gj_side_column(sl_task_t *t, const struct join_state *st, int s, const struct gj_side *g,
                   int col, const void **out, void **owned);
/* The NPJ direct table's keys over `parts` device arrays of build keys (n[i] each):
 * g->kmin, the smallest, and g->range = largest - smallest + 1 when that fits 2^32 slots
 * and the keys fill at least half of it (dense) without outnumbering it, else g->range =
 * 0; synchronizes to read
 * them (gj_range_of). */
int gj_npj_range(sl_task_t *t, struct gj *g, int64_t parts, const void *const *keys,
                 const int64_t *n);
/* The same over the batches of the build side g->build (g->range 0 also when a batch is
 * not in device memory or the key is composite). */
int gj_key_range(sl_task_t *t, const struct join_state *st, struct gj *g);
/* The smallest and largest key (as unsigned values) over `parts` device arrays of keys
 * (synchronizes to read them). */
int gj_range_of(sl_task_t *t, int k8, int64_t parts, const void *const *keys, const int64_t *n,
                uint64_t *lo, uint64_t *hi);
/* Up to `per` strided keys of each side's contiguous keys into h[i * per ...] (widened to
 * 64 bits), m[i] of them; one synchronization. */
int gj_sample_keys(sl_task_t *t, int k8, int parts, const struct gj_side *const *sd, int64_t per,
                   uint64_t *h, int64_t *m);
/* Batch order, row counts and contiguous keys of both sides; gj_prepare_rows then packs
 * their rows (only the rows a side's sel keeps). */
int gj_prepare(sl_task_t *t, struct join_state *st, struct gj *g);
int gj_prepare_rows(sl_task_t *t, struct join_state *st, struct gj *g);
/* The columns side s's packed rows take, in *kc (each payload column as one device array,
 * in place when it is one; copies in own[], freed by gj_row_cols_free; the row id as a
 * 4-byte column without a pointer: the row's number), and the row's bytes in *rb (0: the
 * side has no rows to pack, kc empty). */
int gj_row_cols(sl_task_t *t, const struct join_state *st, int s, const struct gj *g,
                sl_k_cols_t *kc, void *own[5], int *rb);
void gj_row_cols_free(sl_task_t *t, void *own[5]);
/* PHJ inner/semi: drops the rows without a partner before partitioning, when samples
 * say most probe rows have none (join_cuda_filter.c); sets the radix bits' start from its
 * build sample. Before gj_prepare_rows: keys gathered, the kept rows in the sides' sel
 * (debug_join_filter=fused: the kept rows' keys and packed rows selected in one pass);
 * after it (debug_join_filter=range, the old order): keys and packed rows gathered. */
int gj_filter_probe(sl_task_t *t, const struct join_state *st, struct gj *g);
/* debug_join_filter: auto (CUB's select, then key gathers and packing), range (the old
 * path: rows packed first, the probe side filtered by the build keys' range only), fused
 * (each side's select, key gather and packing in one CUB pass) and mask (each side's
 * kept rows marked and counted, then their keys and packed rows written in a second
 * pass); the last three for A/B runs. */
enum { GJ_FILTER_AUTO = 0, GJ_FILTER_RANGE = 1, GJ_FILTER_FUSED = 2, GJ_FILTER_MASK = 3 };
int gj_filter_mode(sl_task_t *t);
/* The prepare phase's steps as phases of the profile: gj_steps_begin starts the clock
 * (on: debug_join_phase_times), each gj_step ends the step `step` (a string that
 * outlives the query), gj_steps_end reports them when `report` (waits for the last
 * mark) and frees the events. */
void gj_steps_begin(sl_task_t *t, struct gj *g, int on);
void gj_step(sl_task_t *t, struct gj *g, const char *step);
void gj_steps_end(sl_task_t *t, struct gj *g, int report);
/* The radix bits' start from a sample of the build keys (keys sharing low bits): from
 * the m keys of h (widened to 64 bits), or sampled here unless gj_filter_probe did. */
void gj_bits_from_sample(struct gj *g, const uint64_t *h, int64_t m);
int gj_pick_bits(sl_task_t *t, struct gj *g);
/* Partitions (PHJ: bits [begin, begin + bits), with offsets) or sorts (SMJ: all key
 * bits) both sides; frees the prepared inputs as soon as they are consumed. */
int gj_transform(sl_task_t *t, struct gj *g);
/* Frees the sides' device buffers (after the join); _free also the batch order. */
void gj_sides_release(sl_task_t *t, struct gj *g);
void gj_sides_free(sl_task_t *t, struct gj *g);

/* Dictionary-encoded columns on the GPU join as their int32 codes, their dictionaries
 * staying in host memory. gj_key_dicts_agree: 1 when every batch of both sides has one
 * dictionary for DICT key k (the same object, or equal strings in the same order: then
 * codes compare as strings do; else the key is hashed from codes remapped onto a merged
 * dictionary). gj_out_dicts_agree: 1 when every batch of a side has one dictionary for
 * each DICT output column of that side (so one dictionary describes every output row);
 * else 0 and the CPU joins. */
int gj_key_dicts_agree(const struct join_data *d, const struct join_state *st, int k);
int gj_out_dicts_agree(const struct join_data *d, const struct join_state *st);
/* Gives the DICT output columns of b (an output batch of the GPU join) the dictionary
 * of their side (shared). */
void gj_out_share_dicts(const struct join_data *d, const struct join_state *st, sl_batch_t *b);

/* ---------------- string keys and outputs (join_cuda_str.c) ---------------- */

/* 1 for utf8 and large_utf8 (offsets and bytes). */
int gj_str_type(enum sl_type t);
/* 1 for fixed-width types the packed row does not take (1, 2 and 16 bytes, and 4- and
 * 8-byte ones join_gpu_type does not map): output columns gathered by row id after the
 * join (sl_k_gather_width). */
static inline int gj_late_fixed(enum sl_type t)
{
    size_t w = sl_type_width(t);
    return join_gpu_type(t) == SL_TYPE_INVALID &&
           (w == 1 || w == 2 || w == 4 || w == 8 || w == 16);
}
/* 1 when the join's keys are hashed: a utf8/large_utf8 key, a DICT key whose
 * dictionaries differ (gj_key_dicts_agree), or a composite key other than two int32s. */
int gj_keys_hashed(const struct join_data *d, const struct join_state *st);
/* The sides' keys as 64-bit hashes (sd->keys, after gj_prepare ordered the batches; every
 * batch in device memory), proven exact: GJ_HASH_COLLIDED when two different keys share
 * a hash under both seeds tried. */
int gj_hash_keys(sl_task_t *t, struct join_state *st, struct gj *g);
/* Output string column oc of b (output rows [0, n)) from column col of side s by row
 * ids; rows from `valid` on are empty. */
int gj_gather_strings(sl_task_t *t, const struct join_state *st, const struct gj *g, int s,
                      int col, const uint32_t *ids, int64_t n, int64_t valid, sl_batch_t *b,
                      int oc);

/* The NPJ table (join_cuda.c) of the build side g->s[g->build] (keys, n) in *temp
 * (*need bytes, its last 16 the duplicate word): the direct table when g->range is set
 * and the keys are unique (a duplicate clears g->range and g->dval), with values when
 * g->dval (g->dval_values of R's columns rin), else the hash table. */
int gj_npj_table(sl_task_t *t, struct gj *g, const sl_k_cols_t *rin, void **temp, size_t *need);
/* The NPJ probe of ns keys s_keys (device memory) into the table of gj_npj_table (direct
 * when g->range is set, else hashed), with g's kind, on stream s; the launcher's error. */
cudaError_t gj_npj_probe(const struct gj *g, void *table, size_t table_bytes,
                         const sl_k_cols_t *rin, const void *s_keys, int64_t ns,
                         const sl_k_cols_t *sin, const sl_k_join_out_t *ko,
                         unsigned long long *d_count, cudaStream_t s);

/* ---------------- shared with the out-of-core join (join_cuda_ooc.c) ---------------- */

/* Trace spans of a finalize that drives its own streams (only while the query writes a
 * trace): an event pair around work on a stream, given to the trace at close. kind and
 * lane as sl__task_trace_gpu's (1 h2d, 2 d2h, 3 kernel). */
#define GJ_TRACE_MAX 4096
struct gj_trace_ev {
    cudaEvent_t a, b;
    const char *name;
    int kind, lane;
    int64_t bytes;
};
struct gj_trace {
    int on, n;
    struct gj_trace_ev *ev;
};
int gj_trace_open(sl_task_t *t, struct gj_trace *tr);
int gj_trace_begin(struct gj_trace *tr, cudaStream_t s); /* -1: not traced */
void gj_trace_end(struct gj_trace *tr, int i, cudaStream_t s, const char *name, int kind,
                  int lane, int64_t bytes);
/* Adds the spans to the trace when emit (their events complete), frees the events. */
void gj_trace_close(sl_task_t *t, struct gj_trace *tr, int emit);

/* 1 when column col of a side has nulls (or an unknown count of them: the GPU sink's
 * batches have theirs counted by the GPU combine, combine_cuda). */
int join_side_has_nulls(const struct join_side *sd, int col);
/* Appends a result batch (host memory) to st->ooc_out, which join_ooc_source emits;
 * takes over b's reference, also on failure. */
int join_ooc_out_add(sl_task_t *t, struct join_state *st, sl_batch_t *b);
/* output=aggregate: adds the sums of `count` values of each output column oc (vals[oc],
 * device memory) into d_acc[2 oc], [2 oc + 1] on stream s (exact for integers). */
int join_gpu_sums_add(sl_task_t *t, const struct join_data *d, const void *const *vals,
                      int64_t count, unsigned long long *d_acc, cudaStream_t s);
/* Reads d_acc into st->total once stream s (the one that summed) got there, with
 * gpu_count more rows (inner, no nulls: every row has a value). */
int join_gpu_sums_total(sl_task_t *t, struct join_state *st, const unsigned long long *d_acc,
                        int64_t gpu_count, cudaStream_t s);

/* ---------------- host-streamed join (join_cuda_stream.c) ---------------- */

/* The GPU sink's rule: 1 when host batch b stays in host memory for the streamed join
 * (option debug_join_stream; auto: its side passes 32 MiB and b has no narrow copies). A
 * predicate: it changes nothing. */
int join_stream_keep(const sl_task_t *t, const sl_batch_t *b);
/* 1 when finalize can stream the probe side from host memory (the shape, one GPU, a
 * probe batch in host memory, the budget). The caller checked for nulls in the keys and
 * output columns (join_gpu_can_run: the streamed join takes none). */
int join_stream_can_run(const sl_task_t *t);
/* The streamed join; the result in st->ooc_out (or st->total), or the CPU's join when a
 * result with repeated build keys would pass the budget. */
int join_stream_finalize(sl_task_t *t);

/* ---------------- over several devices (join_mg_cuda.c) ---------------- */

/* Whether this finalize goes over several of the engine's devices (0; pick says which)
 * or why not (enum sl__mg_why, common/mgpu_choice.h); st->side[].n_rows counted first. */
struct sl__mg_pick;
int join_mg_choice(sl_task_t *t, struct sl__mg_pick *pick);
/* The join over the picked devices; the result in st->gpu_out as the one-device join's. */
int join_mg_finalize(sl_task_t *t, struct sl__mg_pick *pick);

#endif /* SLUICE_OPERATORS_JOIN_CUDA_INT_H */
