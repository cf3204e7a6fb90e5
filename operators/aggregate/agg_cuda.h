/* Internal header of the GPU group-by's operator side (agg_cuda.c, agg_cuda_budget.c): a
 * GPU worker's local state and the steps a small GPU budget takes (issue 18).
 *
 * The table methods run every input again into a bigger table when the first proves too
 * small, so the operator keeps a reference to each input batch (device memory) until the
 * driver's groups are written. Under a small budget that memory is bounded: past a share
 * of the budget (AGG_GPU_KEEP_DIV) the driver's groups so far are written out, moved to
 * host memory as partial states (a "fold") and the driver starts again empty; where the
 * groups cannot be rebuilt from their output (avg) or the GPU cannot hold what it needs
 * (a table, a partitioned copy, an output), the kept batches and every later one go to
 * host memory instead, for CPU tasks at finalize up to a share of the host budget, past
 * it aggregated at once into one CPU sink's state (host memory stays bounded). Finalize
 * then merges everything on the host (as co-processing does) and the CPU source emits
 * it. */
#ifndef SLUICE_AGG_CUDA_H
#define SLUICE_AGG_CUDA_H

#include "agg_gpu.h"
#include "agg_int.h"

/* The kept batches may hold 1/AGG_GPU_KEEP_DIV of what the query could use (what they
 * and the driver hold plus the budget left): the rest is for the morsels in flight and
 * the other operators of the pipeline. */
#define AGG_GPU_KEEP_DIV 4

/* Results of the operator's steps besides SL_OK and errors: the GPU cannot hold what the
 * step needs (nothing recorded on the query; the caller moves the rows to the host):
 * memory of the driver, or of an input's own (its remapped DICT codes). */
enum { AGG_GPU_OVER_BUDGET = 2, AGG_GPU_INPUT_OVER_BUDGET = 3 };

/* A list of batch references. */
struct agg_blist {
    sl_batch_t **b;
    int n, cap;
};
int agg_blist_push(sl_task_t *t, struct agg_blist *l, sl_batch_t *b); /* takes a new ref */
void agg_blist_release(struct agg_blist *l);

struct agg_gpu_local {
    struct agg_gdrv drv;
    /* The inputs added to the driver since it last started empty (for a run into a
     * bigger table, or to move them to the host), and what their kernels read besides
     * (where= row numbers, remapped DICT codes); kept_bytes: device bytes of both. */
    struct agg_blist kept_in, kept_aux;
    int64_t kept_bytes;
    int64_t kept_peak;            /* most kept_bytes at once (profile gpu_kept_bytes) */
    /* The engine has a GPU budget (option gpu_mem): only then does the partitioned
     * method, which copies each input into its partitions and never reads it again, keep
     * its inputs (for the host); without one they go at once (unkept: some did since
     * the driver last started empty, so the inputs cannot move to the host). */
    int budget, unkept;
    sl_schema_t *rows_schema;     /* where=: one int32 column, the passing rows' numbers */
    /* Small budgets (agg_cuda_budget.c). */
    struct agg_blist host_in;     /* inputs moved to host memory, held for the CPU tasks */
    int64_t host_in_bytes;        /* of host_in */
    int64_t host_cap;             /* host_in past this many bytes is aggregated at once */
    struct agg_local *host;       /* ... into this CPU sink's state (NULL until needed) */
    struct agg_blist folds;       /* the driver's groups written out, in host memory */
    int on_host;                  /* every later input goes to the host */
    int why_host;                 /* AGG_GPU_WHY_* */
    int64_t host_rows;            /* rows moved to the host */
    int64_t host_held;            /* most bytes of host_in at once */
    struct agg_local **cpu;       /* finalize: the CPU tasks' states for host_in */
    int n_cpu;
    struct agg_kept **fold_kept;  /* finalize: the partial states of `folds` */
};

/* Why the inputs went to the host (profile value gpu_budget_host). */
enum { AGG_GPU_WHY_NONE, AGG_GPU_WHY_AVG = 1, /* kept batches past their share, no fold (avg) */
       AGG_GPU_WHY_DRIVER = 2,                /* a table or copy over the budget */
       AGG_GPU_WHY_INPUT = 3 /* an input's row numbers or codes over the budget */ };

/* The driver's groups in a new device batch *out (its rows the groups, null counts set,
 * DICT keys as codes without their dictionary); wide: integer sums as decimal(38, 0), exact
 * (a fold's partial states). AGG_GPU_OVER_BUDGET when the GPU cannot hold what writing
 * them needs. */
int agg_gpu_groups(sl_task_t *t, const struct agg_plan *p, struct agg_gdrv *d, int wide,
                   sl_batch_t **out);
/* Binds the driver to task t (its memory and stream): before any call that may allocate
 * or free, since the task it last worked for may have ended. */
void agg_gpu_bind(struct agg_gdrv *d, sl_task_t *t);
/* Drops the kept batches (the driver no longer reads them). */
void agg_gpu_drop_kept(struct agg_gpu_local *g);

/* After a batch was added: folds, or moves the inputs to the host, when the kept batches
 * pass their share of the budget. */
int agg_gpu_budget_check(sl_task_t *t, const struct agg_plan *p, struct agg_gpu_local *g);
/* The GPU gives up: the kept inputs (the driver's state is dropped) and b (if not NULL,
 * not yet added) go to host memory, and so does every later input. */
int agg_gpu_go_host(sl_task_t *t, struct agg_gpu_local *g, sl_batch_t *b, int why);
/* Releases what the host states hold besides query memory (a failed query's). */
void agg_gpu_cpu_release(struct agg_gpu_local *g);
/* Finalize when folds or host inputs exist: the driver's last groups join the folds, the
 * CPU workers sink the held host inputs and rebuild the folds' partial states, and the
 * CPU finalize merges them with the host state and any CPU worker's (co-processing). */
int agg_gpu_budget_finalize(sl_task_t *t, const struct agg_plan *p, struct agg_global *gs,
                            struct agg_gpu_local *g);

#endif /* SLUICE_AGG_CUDA_H */
