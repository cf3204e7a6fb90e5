/* The host side of the GPU group-by (agg_gpu.c): chooses between the table, the record
 * table and the partitioned method, keeps the partitioned batches, and writes the result
 * (count -> allocate -> write). Past part_threshold estimated groups, inputs the record
 * table takes (one integer key, integer aggregates, no nulls: sl_k_agg_direct_ok) go
 * there (each batch partitioned by the key hash's top bits first when the table is
 * bigger than L2); a later batch it cannot take moves every kept batch to the
 * partitioned method, and rows that found no room run again into a table twice the
 * groups seen (twice at most, then partitions). The estimate (first batch) is the
 * smaller of what a spread sample's distinct keys say and the bound 1 + (rows whose next
 * row has another key), sampled at the same rows (sl_k_agg_estimate_groups): an input
 * clustered by key (lineitem sorted by l_orderkey) has all sampled rows distinct but a
 * key change only every few rows. Such an input skips the record table's partitioning
 * (each record is touched by one run of rows). The partitioned method moves rows with
 * the tile partitioner (sl_k_agg_tile_partition) where it can. It knows nothing of the
 * engine: memory
 * comes from callbacks, so the operator (agg_cuda.c, task device memory) and the
 * standalone bench and kernel tests (bench/gpu/gpu_agg_bench.cu, cudaMallocAsync) run
 * the same code.
 *
 * Synchronization: the first agg_gdrv_add reads a sample's distinct count (once per
 * driver); later adds only launch. The table method does not look at the table's
 * counters until agg_gdrv_output: if some group found no room, every input is run
 * again into a table four times bigger (so the inputs given to agg_gdrv_add must stay
 * valid until agg_gdrv_output returns); past part_threshold groups the kept
 * inputs are partitioned instead (the sample missed a skewed tail). agg_gdrv_output
 * synchronizes to read counts. */
#ifndef SLUICE_AGG_GPU_H
#define SLUICE_AGG_GPU_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "sluice_k/aggregate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Results of agg_gdrv_* calls. */
enum { AGG_GDRV_OK = 0, AGG_GDRV_ECUDA = -1, AGG_GDRV_ENOMEM = -2,
       AGG_GDRV_EBUDGET = -3, /* need_bytes (a table of need_groups groups, or 0 groups: other
                                 memory) is over the budget; nothing was allocated for it,
                                 but the driver may be part way through: reset or free it */
       AGG_GDRV_EROWS = -4 /* an input with row numbers (d_rowidx) that the method chosen
                              does not read: the caller compacts the rows and adds them so */ };
/* Phases timed with CUDA events (phase_ms, -1 where not timed). */
enum { AGG_PH_SAMPLE, AGG_PH_AGGREGATE, AGG_PH_RETRY, AGG_PH_OUTPUT,
       AGG_PH_PARTITION /* the record table's partitioning of the first batch (part of
                           AGG_PH_AGGREGATE) */, AGG_PH_N };
enum { AGG_EV_START, AGG_EV_AGG0, AGG_EV_AGG1, AGG_EV_RETRY, AGG_EV_OUT, AGG_EV_PART0,
       AGG_EV_PART1, AGG_EV_N };
enum { AGG_GDRV_AUTO = 0, AGG_GDRV_TABLE = 1, AGG_GDRV_PART = 2, AGG_GDRV_DIRECT = 3 };

struct agg_gdrv_mem {
    void *(*alloc)(void *ctx, size_t bytes);   /* stream-ordered; NULL on failure */
    void (*free)(void *ctx, void *p);          /* stream-ordered; NULL is fine */
    void *(*host_alloc)(void *ctx, size_t bytes);
    void (*host_free)(void *ctx, void *p, size_t bytes);
    void *ctx;
    int64_t (*budget)(void *ctx);              /* device bytes left, or NULL: no limit */
};

struct agg_gdrv_part {
    struct sl_k_agg_pbatch pb;
    void *mem;
    int64_t bytes;                /* of mem */
};

struct agg_gdrv {
    struct sl_k_agg_spec spec;
    cudaStream_t stream;
    struct agg_gdrv_mem mem;
    cudaError_t cuerr;            /* the failure behind AGG_GDRV_ECUDA */
    const char *what;             /* what failed (may point into what_buf) */
    char what_buf[256];           /* a failure's message with the pointers and sizes involved */
    int busy;                     /* inside an agg_gdrv_* call: two threads at once is a bug */
    /* choices (set before the first add; 0 = measured defaults) */
    int force_mode;               /* AGG_GDRV_* */
    int shared_groups;            /* table method's shared groups per block (0 default) */
    int force_bits;               /* partitioned: radix bits (0 = from the estimate) */
    int64_t init_cap;             /* table method: first capacity (0 = from the estimate) */
    int update_flags;             /* sl_k_agg_update flags (SL_K_AGG_PRELOAD |
                                     SL_K_AGG_SMALL_SPLIT by default) */
    int64_t small_threshold;      /* estimated groups up to which the table method adds
                                     SL_K_AGG_SMALL (0 = 2048); < 0: the generic kernels
                                     only, for both methods (SL_K_AGG_NO_SMALL) */
    int64_t part_threshold;       /* estimated groups above which the partitioned method
                                     is chosen (0 = 65536, measured: bench/results_gpuagg.md;
                                     the operator passes agg_gpu_part_threshold); inputs the
                                     record table takes (sl_k_agg_direct_ok) take it instead */
    int64_t few_threshold;        /* estimated groups up to which the table method adds
                                     SL_K_AGG_FEW (0 = 8; < 0: never, debug_gpu_generic) */
    int direct_bits;              /* record table: radix bits of the partitioning pass
                                     before it (0 = from the table's size, none for a
                                     clustered input; < 0 = none) */
    int row_partition;            /* partitioned method: the row-by-row partitioner
                                     (sl_k_agg_part_scatter) also where the tile
                                     partitioner could run (A/B) */
    int big;                      /* partitioned method: the partition kernel's big table
                                     (big_on: one block an SM, all its shared memory) and
                                     bits for it where the estimate asks for 2^9..2^12
                                     partitions of it (0), always where it takes the input
                                     (1, forced bits too), never (-1:
                                     debug_agg_gpu_no_big_table) */
    int big_strict;               /* with big 0: an estimate asking for BIG_MAX_BITS + 1
                                     bits keeps them and the smaller table
                                     (debug_agg_gpu_big_strict, A/B runs; agg_gpu.c) */
    int one_pass;                 /* with big_on: the one-pass wide partitioner
                                     (sl_k_agg_wide_partition) instead of the two-pass tile
                                     partitioner (A/B runs: slower, aggregate_wide.cuh) */
    int cluster;                  /* partitioned method: the cluster table
                                     (SL_K_AGG_CLUSTER: one partitioning pass of 8 bits,
                                     a partition aggregated by a cluster of this many
                                     blocks: 2, 4, 8, 16) wherever the big table takes the
                                     input and the spec has no min/max; <= 0 never (the
                                     default: slower, agg_gpu.c CLUSTER_BITS; A/B runs) */
    int strided_estimate;         /* the group estimate from the sample's distinct count
                                     alone, as before the key-change bound (A/B runs:
                                     debug_agg_gpu_strided_estimate) */
    /* state */
    int mode;
    double g_est;                 /* estimated groups (first batch) */
    int clustered;                /* the first batch comes in runs of a key (sorted by it,
                                     say): sl_k_agg_estimate_groups */
    unsigned long long *d_small;  /* 8 counters */
    int64_t rows;                 /* rows added */
    int64_t groups;               /* table: groups after the last add */
    struct sl_k_agg_table tb, spill;
    void *tb_mem, *spill_mem;
    struct sl_k_agg_dtable dt;    /* record table (AGG_GDRV_DIRECT) */
    void *dt_mem;
    int dbits;                    /* its partitioning bits (0: none) */
    struct sl_k_agg_input *ins;   /* table and record table: the inputs added (run again
                                     on growth) */
    int n_ins, cap_ins;
    int64_t grows, replayed;      /* table growths and rows replayed (statistics) */
    int64_t need_groups, need_bytes; /* AGG_GDRV_EBUDGET: the table that did not fit */
    cudaEvent_t ev[AGG_EV_N];
    unsigned ev_set;
    double phase_ms[AGG_PH_N];    /* after agg_gdrv_output */
    int bits, any_nulls;
    int big_on;                   /* the parts aggregate in the big table (SL_K_AGG_BIG),
                                     bits from its slots */
    int cluster_on;               /* with big_on: blocks of a cluster table (0: none) */
    struct agg_gdrv_part *parts;
    int n_parts, cap_parts;
    int64_t rounds_rerun;         /* partitioned output ran twice (count exceeded guess) */
    int switched;                 /* the table overflowed past the threshold: partitioned */
    int64_t dt_bytes;             /* of dt_mem */
    int over_budget;              /* an allocation was not tried: over the budget (need_bytes) */
};

/* Output columns for `rows` rows: fill out->d_cols and out->d_valid (NULL for columns
 * that never hold nulls); the driver initializes bitmaps and counters. Returns 0 or
 * AGG_GDRV_ENOMEM. Called again with more rows when the first guess was short. */
typedef int (*agg_gdrv_out_fn)(void *ctx, int64_t rows, struct sl_k_agg_out *out);

int agg_gdrv_init(struct agg_gdrv *d, const struct sl_k_agg_spec *spec, cudaStream_t stream,
                  const struct agg_gdrv_mem *mem);
/* Aggregates (or partitions) a batch of device columns. An input with row numbers
 * (in->d_rowidx: a where= of the operator's) is taken by the table method only (the
 * generic and few-groups kernels read rows by number); with another method chosen it is
 * refused with AGG_GDRV_EROWS before anything is added. */
int agg_gdrv_add(struct agg_gdrv *d, const struct sl_k_agg_input *in);
/* Writes the groups through out_fn; *n_groups receives their number and h_null_count
 * (n_keys + n_aggs entries) the nulls per output column. Overflowing int64 sums write
 * SL_EOVERFLOW to *d_status. */
int agg_gdrv_output(struct agg_gdrv *d, agg_gdrv_out_fn out_fn, void *ctx, int32_t *d_status,
                    int64_t *n_groups, int64_t *h_null_count);
void agg_gdrv_free(struct agg_gdrv *d);
/* Device bytes the driver holds for its input: tables and partitions. */
int64_t agg_gdrv_held_bytes(const struct agg_gdrv *d);
/* Drops every group and input (as agg_gdrv_free) but keeps the choices (force_mode and
 * the rest set before the first add), so that the driver takes a new run of inputs: the
 * operator's folds under a small budget (agg_cuda_budget.c). */
int agg_gdrv_reset(struct agg_gdrv *d);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_AGG_GPU_H */
