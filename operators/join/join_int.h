/* Internal header of the join operator (operators/join/): bind-time data, the per-query
 * state, normalized tuples and the pieces the algorithm files share.
 *
 * Every input row becomes a tuple (key, val). The key is the join key normalized to 64
 * bits: the value of a single int32/int64 key, two int32 keys packed exactly, or (any
 * other composite) a hash whose candidate matches are verified against the key columns.
 * (Keys of other types: see enum join_key_mode.)
 * The val is the row id (batch << shift | row) or, for fused aggregates with at most
 * one payload column per side and no nulls in it, the payload itself ("inline").
 * Tuples are 8 bytes (32-bit key and val) when both fit, else 16 bytes; a single utf8 or
 * large_utf8 key whose strings are all at most 16 bytes makes 32-byte tuples in the radix
 * join, the key's bytes carried beside its hash and compared exactly (join_str16.c).
 */
#ifndef SLUICE_OPERATORS_JOIN_INT_H
#define SLUICE_OPERATORS_JOIN_INT_H

#include <time.h>

#include "common/op_def.h"
#include "common/values.h"

#define JOIN_MAX_KEYS 8
#define JOIN_MAX_COLS 128
#define JOIN_CHUNK 1024                 /* rows loaded at a time by join_load */
#define JOIN_NONE UINT64_MAX            /* "no row" (the null side of a left join) */
#define JOIN_HASH_MUL 0x9E3779B97F4A7C15ull

enum join_kind {
    JOIN_INNER = 0,
    JOIN_LEFT = 1,
    JOIN_SEMI = 2,
    JOIN_ANTI = 3,
    JOIN_RIGHT = 4,                     /* builds on the left, probes with the right */
    JOIN_FULL = 5,                      /* a left join that also marks build rows matched */
    JOIN_CROSS = 6                      /* every left row with every right row, no keys */
};

/* Kinds that output rows without a partner, the other side's columns null. */
static inline int join_kind_outer(int kind)
{
    return kind == JOIN_LEFT || kind == JOIN_RIGHT || kind == JOIN_FULL;
}
/* Kinds whose probe emits probe rows that found no partner. */
static inline int join_kind_alone(int kind)
{
    return join_kind_outer(kind) || kind == JOIN_ANTI;
}

#define JOIN_MAX_RESID 8

/* A residual condition term: left column OP right column, on the joined pair. */
enum join_cmp { JOIN_EQ, JOIN_NE, JOIN_LT, JOIN_LE, JOIN_GT, JOIN_GE };
struct join_resid {
    int col[2];                         /* left and right column */
    enum join_cmp op;
};
enum join_algo { JOIN_AUTO = 0, JOIN_RADIX = 1, JOIN_NOPART = 2, JOIN_SORTMERGE = 3 };

/* How a key component becomes 64 bits: its value's bits (types where equal bits mean
 * equal values, and codes of one shared dictionary), or a hash verified on match. */
enum join_key_mode {
    JOIN_KEY_HASH = 0,
    JOIN_KEY_BITS1,
    JOIN_KEY_BITS2,
    JOIN_KEY_BITS4,
    JOIN_KEY_BITS8
};

/* Types a join key may have: every valid type. */
static inline int join_key_type_ok(enum sl_type t)
{
    return sl_type_width(t) > 0 || sl_type_is_string(t);
}

/* The type output=aggregate sums a column into (SQL's SUM): int64 for integers (and
 * bools), float64 for floats, decimal(38, s) for decimals; SL_TYPE_INVALID otherwise. */
static inline enum sl_type join_sum_type(enum sl_type t)
{
    switch (SL_TYPE_ID(t)) {
    case SL_TYPE_INT8: case SL_TYPE_INT16: case SL_TYPE_INT32: case SL_TYPE_INT64:
    case SL_TYPE_UINT8: case SL_TYPE_UINT16: case SL_TYPE_UINT32: case SL_TYPE_UINT64:
        return SL_TYPE_INT64;
    case SL_TYPE_FLOAT32: case SL_TYPE_FLOAT64:
        return SL_TYPE_FLOAT64;
    case SL_TYPE_DECIMAL:
        return sl_type_decimal(SL_DECIMAL_MAX_PRECISION, sl_type_scale(t));
    default:
        return SL_TYPE_INVALID;
    }
}

/* How the GPU join sees a type: dates and dictionary codes as int32 (codes only where
 * the dictionaries agree: gj_dicts_agree), timestamps and 64-bit decimals as int64, the
 * four original types as themselves; SL_TYPE_INVALID for what the GPU join does not take
 * (strings of offsets and bytes stay on the host; 1-, 2- and 16-byte types). */
static inline enum sl_type join_gpu_type(enum sl_type t)
{
    switch (SL_TYPE_ID(t)) {
    case SL_TYPE_INT32: case SL_TYPE_DATE32: case SL_TYPE_DICT: return SL_TYPE_INT32;
    case SL_TYPE_INT64: case SL_TYPE_TIMESTAMP: return SL_TYPE_INT64;
    case SL_TYPE_FLOAT32: return SL_TYPE_FLOAT32;
    case SL_TYPE_FLOAT64: return SL_TYPE_FLOAT64;
    case SL_TYPE_DECIMAL: return sl_type_width(t) == 8 ? SL_TYPE_INT64 : SL_TYPE_INVALID;
    default: return SL_TYPE_INVALID;
    }
}

/* One output column: where it comes from. */
struct join_ocol {
    int side;                           /* 0 = left, 1 = right */
    int col;                            /* input column */
    enum sl_type type;
};

/* Bind-time data of a node. */
struct join_data {
    int kind, algo, aggregate;
    int n_keys;
    int key[2][JOIN_MAX_KEYS];          /* key columns of left and right */
    enum sl_type ktype[JOIN_MAX_KEYS];  /* of the left keys */
    enum sl_type rktype[JOIN_MAX_KEYS]; /* of the right keys (strings may differ) */
    int n_out;                          /* materialize: output columns; aggregate: sums */
    struct join_ocol out[2 * JOIN_MAX_COLS];
    int n_resid;                        /* residual terms, all must hold (AND) */
    struct join_resid resid[JOIN_MAX_RESID];
};

/* One input side at run time: its batches (referenced, not copied). */
struct join_side {
    int64_t n_batches, cap;
    sl_batch_t **batches;
    int64_t *start;                     /* n_batches + 1 row prefix */
    int64_t n_rows;
    int shift;                          /* row id = batch << shift | row */
    const int *key;                     /* key columns */
    int val_col;                        /* inline payload column, or -1 */
    int inline_val;                     /* 1: val = payload (or 0 without one); 0: row id */
    int64_t n_short;                    /* rows whose one string key is at most
                                         * JOIN_STR16_BYTES long (counted by the sink) */
};

/* Which tuple layout and how keys are made. */
struct join_shape {
    int n_keys;
    enum sl_type ktype[JOIN_MAX_KEYS];
    enum join_key_mode kmode[JOIN_MAX_KEYS];
    int exact;                          /* 1: equal keys mean equal rows */
    int wide;                           /* 1: 16-byte tuples */
    int str16;                          /* 1: 32-byte tuples carrying the one string key
                                         * (join_str16.c); implies exact and wide */
};

struct join_t8 {
    uint32_t k, v;
};
struct join_t16 {
    uint64_t k, v;
};
/* A string key of at most 16 bytes as two little-endian words, zero-padded; k holds its
 * hash with the length in the low 5 bits, so equal k and words mean equal strings. */
struct join_t32 {
    uint64_t k, v;
    uint64_t w[2];
};

/* Aggregate accumulators (exact; checked against int64 at the end). */
struct join_acc {
    __int128 count;
    __int128 alone;                     /* rows without a build row (inline vals) */
    __int128 isum[2 * JOIN_MAX_COLS];
    double fsum[2 * JOIN_MAX_COLS];
    int64_t nonnull[2 * JOIN_MAX_COLS]; /* values summed (row ids); SUM is NULL at 0 */
};

/* A unit of probe work: partitions [p0, p1) or, for a split partition p0, its probe
 * tuples [lo, hi); nopart: rows [lo, hi) of probe batch p0. */
struct join_work {
    int64_t p0, p1, lo, hi;
};

struct join_state {
    /* filled by sink/combine */
    struct join_side side[2];
    /* chosen in finalize */
    const struct join_data *d;
    struct join_shape shape;
    int algo;
    int build;                          /* side index of the build side */
    int threads;
    int64_t morsel;
    /* partitioned algorithms */
    int bits;                           /* radix bits */
    int64_t fanout;                     /* partitions (the null bucket is index fanout) */
    int n_ptasks;                       /* partitioning tasks per side */
    int64_t *hist[2];                   /* [task * (fanout + 1) + p] */
    int64_t *off[2];                    /* partition starts, fanout + 2 entries */
    void *tup[2], *tmp[2];
    /* nopart */
    int tbits;
    void *table;
    uint64_t *filter;                   /* the probe filter, or NULL (join_filter_word) */
    int fbits;                          /* its words: 2^fbits */
    _Atomic int side_lock;
    int64_t n_side, cap_side;           /* tuples whose key is the empty marker */
    int side_oom;                       /* the side list could not grow */
    uint64_t *side_v;
    /* probe work */
    int64_t n_work;
    struct join_work *work;
    struct join_acc *acc;               /* aggregate: one per work item */
    struct join_acc total;
    /* full outer joins: build rows matched (by dense build index), and the result,
     * made in finalize and emitted by the source */
    uint8_t *bmatch;
    _Atomic int out_lock;
    int64_t n_full_out, cap_full_out;
    sl_batch_t **full_out;
    /* DICT output columns whose side holds several dictionaries: one merged dictionary
     * each (per output column; .dict NULL where the side's one dictionary is shared) */
    struct sl__dict_union *dunion;
    /* GPU (join_cuda.c) */
    int gpu;                            /* 1: finalized on a GPU */
    sl_batch_t *gpu_out;                /* materialize: the result, in GPU memory */
    int cross_gpu;                      /* 1: a cross join finalized on a GPU */
    /* out-of-core GPU join (join_cuda_ooc.c) */
    _Atomic int64_t gpu_sink_bytes;     /* input bytes the GPU sink kept on the GPU */
    _Atomic int gpu_sink_host;          /* 1: the GPU sink keeps later batches in host memory */
    _Atomic int64_t gpu_sink_down;      /* device input bytes the GPU sink sent to host memory
                                         * (the profile's gpu_sink_down_bytes) */
    int ooc;                            /* 1: finalized out of core */
    sl_batch_t **ooc_out;               /* materialize: the result, host batches */
    int64_t n_ooc_out, cap_ooc_out, ooc_rows;
    /* out-of-core sort-merge join (join_smj_ooc.c): sorted runs, ordered and joined by
     * key ranges in tasks the finalize spawns on CPU workers; the source emits results;
     * smj_gpu_merged: sides whose runs were merged into one on the GPU (0..2) */
    int smj_ooc, smj_gpu_merged;
    void *smj;
};

/* join_load: rows [lo, lo + n) of batch bi of a side as keys, vals and null flags
 * (nul[i] = 1: some key component is null), and with the str16 shape the key words
 * (w[2i], w[2i + 1]; w may be NULL). Returns the number of null keys. */
int64_t join_load(const struct join_state *st, int s, int64_t bi, int64_t lo, int64_t n,
                  uint64_t *k, uint64_t *v, uint8_t *nul, uint64_t *w);

/* ---------------- short string keys (join_str16.c) ---------------- */

#define JOIN_STR16_BYTES 16
/* Rows of batch b whose key column col is a utf8 or large_utf8 column with no string
 * longer than JOIN_STR16_BYTES (all of them or 0). */
int64_t join_str16_rows(const sl_batch_t *b, int col);
/* Keys (hash | length) and words of rows [lo, lo + n) of string column v (see struct
 * join_t32); a null row gets nul[i] = 1. Returns the number of null rows. */
int64_t join_str16_load(const struct sl__colview *v, int64_t lo, int64_t n, uint64_t *k,
                        uint64_t *w, uint8_t *nul);
/* Walking rows [lo, hi) of a side in loads of at most JOIN_CHUNK rows within one batch:
 * join_first_batch gives the batch holding row lo; join_next_load moves *bi to the batch
 * holding row r, sets *in to r's row in it and returns the rows to load from there. */
static inline int64_t join_first_batch(const struct join_side *sd, int64_t lo)
{
    int64_t bi = 0;
    while (bi + 1 < sd->n_batches && sd->start[bi + 1] <= lo)
        bi++;
    return bi;
}

static inline int64_t join_next_load(const struct join_side *sd, int64_t r, int64_t hi,
                                     int64_t *bi, int64_t *in)
{
    while (sd->start[*bi + 1] <= r)
        (*bi)++;
    *in = r - sd->start[*bi];
    int64_t n = sd->start[*bi + 1] - r;
    n = n < hi - r ? n : hi - r;
    return n < JOIN_CHUNK ? n : JOIN_CHUNK;
}

/* 1 if the key columns of left row lrow and right row rrow (row ids) are equal. */
int join_keys_equal(const struct join_state *st, uint64_t lrow, uint64_t rrow);
/* 1 if every residual term holds for left row lrow and right row rrow (nulls fail). */
int join_residual_ok(const struct join_state *st, uint64_t lrow, uint64_t rrow);

/* A hint to fetch the line `ahead` bytes past p (any address: a prefetch never faults). */
static inline void join_prefetch(const void *p, size_t ahead)
{
    __builtin_prefetch((const void *)((uintptr_t)p + ahead));
}

static inline uint64_t join_hash(uint64_t k)
{
    return k * JOIN_HASH_MUL;
}

/* The no-partitioning join's probe filter (join_nopart_start says when there is one): a
 * blocked Bloom filter of the build keys, one 64-bit word a key with three of its bits
 * set. Returns key k's word (of 2^fbits) and sets *bits to its bits. The word comes from
 * a product's top bits and the bits from its middle ones, a second hash beside the
 * table's slot (join_hash's top bits). */
static inline uint64_t join_filter_word(uint64_t k, int fbits, uint64_t *bits)
{
    uint64_t f = (k ^ (k >> 29)) * 0xD6E8FEB86659FD93ull;
    *bits = (1ull << ((f >> 20) & 63)) | (1ull << ((f >> 26) & 63)) | (1ull << ((f >> 32) & 63));
    return f >> (64 - fbits);
}
static inline int join_log2_ceil(int64_t n)
{
    int b = 0;
    while (((int64_t)1 << b) < n)
        b++;
    return b;
}
/* The smallest power of two >= n (1 for n <= 1). */
static inline int64_t join_pow2_ceil(int64_t n)
{
    return (int64_t)1 << join_log2_ceil(n);
}
/* Rows of a side's batches. */
static inline int64_t join_side_rows(const struct join_side *sd)
{
    int64_t n = 0;
    for (int64_t i = 0; i < sd->n_batches; i++)
        n += sd->batches[i]->n_rows;
    return n;
}
/* The host's monotonic clock in milliseconds (phase times of the GPU finalizes). */
static inline double join_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---------------- output (join_out.c) ---------------- */

/* Collects matches of one work item: materialized batches or aggregate sums. */
/* An output column written straight from inline vals (join_emit's minl mode). */
struct join_ocw {
    char *dst;                          /* the column's values in the batch being filled */
    int src;                            /* 0: the key, 1: the probe val, 2: the build val */
    int width;                          /* bytes a value: 1, 2, 4 or 8 */
    int nullable;                       /* a build column of an outer join */
};

struct join_emit {
    struct join_state *st;
    sl_task_t *task;
    int swap;                           /* 1: probe side is the right input */
    int materialize;
    int64_t n, cap;
    uint64_t *pv, *bv;                  /* probe and build vals of pending output rows */
    int minl;                           /* materialize from inline vals (no gathers): rows
                                         * are written straight into the batch `ob` */
    sl_batch_t *ob;                     /* minl: the output batch being filled (cap rows) */
    struct join_ocw *ocw;               /* minl: where each output column's values go */
    int n_ocw;
    int64_t n_alone;                    /* minl: rows of ob without a build row */
    int64_t ob_rows;                    /* minl: rows ob has room for */
    int64_t expect;                     /* minl: output rows still expected from the work
                                         * item (its probe rows; a batch for fewer rows than
                                         * cap is cut to them) */
    int vinl;                           /* vals are inline payloads (inl or minl) */
    struct join_acc *acc;
    int store;                          /* full outer: keep batches in the state, not emit */
    int inl;                            /* aggregate with inline vals */
    int ip, ib;                         /* acc slots of the probe and build vals */
    int rc;
};

#define JOIN_DUMMY (2 * JOIN_MAX_COLS - 1) /* acc slot for a side without payload */

int join_emit_init(struct join_emit *e, struct join_state *st, sl_task_t *t,
                   struct join_acc *acc);
void join_emit_fini(struct join_emit *e);
/* Materialized rows pending -> one batch emitted downstream. */
int join_emit_flush(struct join_emit *e);
/* Row-id aggregate of one output row (bv = JOIN_NONE: no build row). */
void join_acc_rows(struct join_emit *e, uint64_t pv, uint64_t bv);

/* minl: a fresh output batch of cap rows to write into (SL_ENOMEM recorded). */
int join_emit_open(struct join_emit *e);
/* minl: row n of ob has no build row: its build columns are null. */
void join_emit_null_build(struct join_emit *e);

/* Value x at row n of an inline output column, at the column's width. */
static inline void join_ocw_store(const struct join_ocw *o, int64_t n, uint64_t x)
{
    switch (o->width) {
    case 4: ((uint32_t *)o->dst)[n] = (uint32_t)x; break;
    case 8: ((uint64_t *)o->dst)[n] = x; break;
    case 2: ((uint16_t *)o->dst)[n] = (uint16_t)x; break;
    default: ((uint8_t *)o->dst)[n] = (uint8_t)x; break;
    }
}

/* minl: n matched rows (keys, probe and build vals in arrays) written into the batch's
 * columns a column at a time: the fused inner-join probes collect a few hundred in local
 * arrays first (JOIN_OUT_CHUNK), so their loops keep no emitter state in memory. */
#define JOIN_OUT_CHUNK 256
void join_emit_rows(struct join_emit *e, const uint64_t *k, const uint64_t *pv,
                    const uint64_t *bv, int64_t n);

/* A match into a fused loop's local arrays of JOIN_OUT_CHUNK rows (row m); a full chunk
 * goes to the output. Returns the rows now held. */
static inline int join_chunk_add(struct join_emit *e, uint64_t *k, uint64_t *pv, uint64_t *bv,
                                 int m, uint64_t key, uint64_t pval, uint64_t bval)
{
    k[m] = key;
    pv[m] = pval;
    bv[m] = bval;
    if (++m < JOIN_OUT_CHUNK)
        return m;
    join_emit_rows(e, k, pv, bv, m);
    return 0;
}

/* minl: one output row written into the batch's columns (no staging, no gathers). */
static inline void join_emit_inline(struct join_emit *e, uint64_t k, uint64_t pv, uint64_t bv,
                                    int has_b)
{
    if (!e->ob && join_emit_open(e) < 0)
        return;
    int64_t n = e->n;
    for (int c = 0; c < e->n_ocw; c++) {
        const struct join_ocw *o = &e->ocw[c];
        join_ocw_store(o, n, o->src == 0 ? k : o->src == 1 ? pv : bv);
    }
    if (!has_b)
        join_emit_null_build(e);
    if (++e->n == e->ob_rows)
        join_emit_flush(e);
}

static inline void join_emit_row(struct join_emit *e, uint64_t k, uint64_t pv, uint64_t bv,
                                 int has_b)
{
    if (e->minl) {
        join_emit_inline(e, k, pv, bv, has_b);
    } else if (e->materialize) {
        e->pv[e->n] = pv;
        e->bv[e->n] = has_b ? bv : JOIN_NONE;
        if (++e->n == e->cap)
            join_emit_flush(e);
    } else {
        join_acc_rows(e, pv, has_b ? bv : JOIN_NONE);
    }
}

/* A probe row matched a build row (vals as loaded: inline vals sign-extended). */
static inline void join_emit_match(struct join_emit *e, uint64_t k, uint64_t pv, uint64_t bv)
{
    if (e->st->bmatch) { /* full outer: this build row has a partner */
        const struct join_side *b = &e->st->side[e->st->build];
        int64_t dense = b->start[bv >> b->shift] + (int64_t)(bv & (((uint64_t)1 << b->shift) - 1));
        __atomic_store_n(&e->st->bmatch[dense], 1, __ATOMIC_RELAXED);
    }
    if (e->inl) {
        e->acc->count++;
        e->acc->isum[e->ip] += (int64_t)pv;
        e->acc->isum[e->ib] += (int64_t)bv;
    } else {
        join_emit_row(e, k, pv, bv, 1);
    }
}

/* A probe row output without a build row (left join unmatched, semi, anti). */
static inline void join_emit_alone(struct join_emit *e, uint64_t k, uint64_t pv)
{
    if (e->inl) {
        e->acc->count++;
        e->acc->alone++;
        e->acc->isum[e->ip] += (int64_t)pv;
    } else {
        join_emit_row(e, k, pv, 0, 0);
    }
}

/* Adds a finished accumulator into dst. */
void join_acc_add(const struct join_state *st, struct join_acc *dst, const struct join_acc *src);
/* The aggregate output row; SL_EOVERFLOW (recorded) if a sum leaves int64. */
int join_emit_aggregate(sl_task_t *t, struct join_state *st);

/* ---------------- algorithms ---------------- */

/* Partitioned algorithms (join_part.c): radix hash join and sort-merge join. */
int join_part_start(sl_task_t *t);
/* Runs one probe work item of a partitioned algorithm. */
int join_part_probe(sl_task_t *t, struct join_state *st, int64_t w, struct join_acc *acc);
/* No-partitioning hash join (join_nopart.c). */
int join_nopart_start(sl_task_t *t);
int join_nopart_probe(sl_task_t *t, struct join_state *st, int64_t w, struct join_acc *acc);
/* Merges the dictionaries of DICT output columns whose side holds several (finalize). */
int join_dict_unions(sl_task_t *t, struct join_state *st);
void join_dict_unions_free(struct join_state *st);
/* After the build phases: plans the aggregate probe or leaves the work to the source. */
int join_after_build(sl_task_t *t);
/* Full outer joins (join_full.c): the probe in finalize, then the unmatched build rows;
 * and the source emitting what they made. */
int join_full_after_build(sl_task_t *t);
/* Keeps an output batch of a full join (takes the reference); thread-safe. */
int join_full_keep(struct join_state *st, sl_batch_t *b);
int join_full_source(sl_task_t *t);
/* Cross joins (join_full.c): every left batch with every right row. */
int join_cross_source(sl_task_t *t, struct join_state *st, int64_t w);
/* Left batch lb once per row of side R, emitted as host batches (batches on a GPU are
 * downloaded first). */
int join_cross_host(sl_task_t *t, sl_batch_t *lb, const struct join_side *R);

/* The pieces of the definition (join.c), shared by the CPU-only definition and the one
 * with the GPU implementations (join_cuda.c, registered by CUDA builds). */
#define JOIN_N_OPTIONS 9
extern const struct sl_option_def join_options[JOIN_N_OPTIONS];
int join_bind(sl_bind_t *b);
int join_sink(sl_task_t *t);
int join_combine(sl_task_t *t);
int join_finalize(sl_task_t *t);
void join_fini_local(const sl_op_t *op, void *gs, void *ls);
void join_fini_global(const sl_op_t *op, void *gs);
int64_t join_source_tasks(sl_task_t *t);
int join_source(sl_task_t *t);
/* The definition's fields (SL__SINK_SOURCE_DEF, common/op_def.h) but for the
 * source_tasks and fini_global functions, which the GPU's adds to. */
#define JOIN_DEF_FIELDS(source_tasks_, fini_global_)                                       \
    .name = "join",                                                                        \
    .doc = "equi-join (inner, left, right, full, semi, anti; cross without keys) on keys " \
           "of any type, with an optional residual condition: radix, nopart or "           \
           "sort-merge; rows or fused count + sums",                                       \
    .min_inputs = 2, .max_inputs = 2, .options = join_options, .n_options = JOIN_N_OPTIONS, \
    .bind = join_bind, .global_state_bytes = sizeof(struct join_state),                    \
    .local_state_bytes = 2 * sizeof(struct join_side), .fini_global = fini_global_,        \
    .fini_local = join_fini_local, .source_tasks = source_tasks_
/* Combine on the CPU (the CUDA definition adds a GPU one that first counts unknown
 * nulls: join_cuda.c). */
extern const struct sl_impl join_combine_cpu[1];

/* GPU finalize and source (join_cuda.c, CUDA builds only). */
int join_gpu_can_run(const sl_task_t *t);
int join_finalize_cuda(sl_task_t *t);
int64_t join_gpu_source_tasks(sl_task_t *t);
int join_gpu_source(sl_task_t *t);
/* Cross join on a GPU (join_cuda_cross.c): finalize's can_run, finalize, source. */
int join_cross_gpu_can_run(const sl_task_t *t);
int join_cross_gpu_finalize(sl_task_t *t);
int64_t join_cross_gpu_source_tasks(sl_task_t *t);
int join_cross_gpu_source(sl_task_t *t);
/* Out-of-core GPU join (join_cuda_ooc.c): the GPU sink's can_run, and finalize, source
 * and cleanup when the in-GPU join does not fit the GPU budget. */
int join_gpu_sink_can_run(const sl_task_t *t);
/* Puts the bytes the GPU sink sent to host memory (if any) in the query profile. */
void join_profile_sink(sl_task_t *t, struct join_state *st);
int join_ooc_can_run(const sl_task_t *t);
int join_ooc_finalize(sl_task_t *t);
int64_t join_ooc_source_tasks(sl_task_t *t);
int join_ooc_source(sl_task_t *t);
void join_ooc_free(struct join_state *st);
/* Out-of-core sort-merge join (join_smj_ooc.c): can_run, finalize, source, cleanup. */
int join_smj_ooc_can_run(const sl_task_t *t);
int join_smj_ooc_finalize(sl_task_t *t);
int64_t join_smj_ooc_source_tasks(sl_task_t *t);
int join_smj_ooc_source(sl_task_t *t);
void join_smj_ooc_free(struct join_state *st);

/* The join's shape for the multi-device choice (what bind knows) and explain's judge
 * (join_mg_judge.c, every build; registered at bind). */
struct sl__mg_shape;
void join_mg_shape(const struct join_data *d, struct sl__mg_shape *sh);
void join_mg_judge(const sl_op_t *op, const struct sl__mg_env *env, struct sl__mg_verdict *out);

#endif /* SLUICE_OPERATORS_JOIN_INT_H */
