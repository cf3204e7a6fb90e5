/* Internal header of the k-means operator: the assignment kernels (kmeans_dist.c). */
#ifndef SLUICE_KMEANS_INT_H
#define SLUICE_KMEANS_INT_H

#include <stdint.h>

#include "common/op_def.h"

#define KM_MAX_DIMS 256
#define KM_MAX_TASKS 64
/* Fewest rows an assignment task takes (more tasks than that would be mostly overhead). */
#define KM_TASK_MIN_ROWS 1024

enum km_init { KM_PLUSPLUS, KM_RANDOM, KM_GIVEN };

struct km_plan {
    int d, k, kp;                 /* dims, clusters, clusters rounded up to 4 */
    int cols[KM_MAX_DIMS];        /* feature column of port 0 */
    int cols1[KM_MAX_DIMS];       /* feature column of port 1 (init from a table) */
    enum sl_type type;            /* float32 or float64 */
    enum km_init init;
    double *given;                /* k * d centroids from the option, or NULL */
    int64_t max_iter;
    double tol;
    uint64_t seed;
    bool assignments;
};

struct km_item {
    int64_t index, seq;           /* source task index, order within it */
    sl_batch_t *batch;
};

struct km_list {
    struct km_item *v;
    int64_t n, cap;
};

struct km_local {
    struct km_list in[2];
    int64_t seq;
};

struct km_acc {
    double *sums;                 /* k * d */
    int64_t *cnt;                 /* k */
    double inertia;
};

struct km_global {
    struct km_list in[2];
    /* Set up by finalize. */
    int64_t n;                    /* points */
    int64_t *start;               /* first row of each batch (n_batches + 1) */
    int32_t *labels;
    void *dist;                   /* float or double per point */
    double *c;                    /* k * d centroids (float64) */
    void *ct, *hn;                /* kernel copies: float or double, kp rows */
    int n_tasks;
    struct km_acc acc[KM_MAX_TASKS];
    int64_t *size;
    double inertia;
    int64_t iters;
};

/* The operator's random numbers (splitmix64), shared by the CPU and GPU inits. */
static inline uint64_t sl__km_rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A uniform double in [0, 1). */
static inline double sl__km_rng_unit(uint64_t *s)
{
    return (double)(sl__km_rng_next(s) >> 11) * 0x1.0p-53;
}

/* kmeans.c helpers the GPU glue shares. */
int sl__km_list_push(struct km_list *l, struct km_item it);
int sl__km_check_nulls(sl_task_t *t, const struct km_plan *p, const sl_batch_t *b, int port);
int sl__km_keep(sl_task_t *t, struct km_local *ls, sl_batch_t *b, int port);
/* Sorts the kept batches into input order, sets g->start and g->n; k > n is an error. */
int sl__km_order(sl_task_t *t, const struct km_plan *p, struct km_global *g);
int sl__km_inputs_to_host(sl_task_t *t, struct km_global *g);
/* init=given from the second input (host batches): g->c. */
int sl__km_init_given_table(sl_task_t *t, const struct km_plan *p, struct km_global *g);

/* The pieces of the definition (kmeans.c), shared by the CPU-only definition and the
 * one with the GPU sink and finalize (kmeans_cuda.c, registered by CUDA builds). */
#define SL__KM_N_OPTIONS 8
extern const struct sl_option_def sl__km_options[SL__KM_N_OPTIONS];
int sl__km_bind(sl_bind_t *b);
void sl__km_fini_local(const sl_op_t *op, void *gs, void *ls);
void sl__km_fini_global(const sl_op_t *op, void *gs);
int sl__km_sink(sl_task_t *t);
int sl__km_combine(sl_task_t *t);
int sl__km_finalize(sl_task_t *t);
int64_t sl__km_source_tasks(sl_task_t *t);
int sl__km_source(sl_task_t *t);
double sl__km_cost(const sl_op_t *op, enum sl_device_kind kind, int64_t rows);
/* The definition's fields (SL__SINK_SOURCE_DEF, common/op_def.h). */
#define SL__KM_DEF_FIELDS()                                                                \
    .name = "kmeans",                                                                      \
    .doc = "Lloyd k-means (kmeans++/random/given init): centroids, sizes, inertia or "     \
           "assignments",                                                                  \
    .min_inputs = 1, .max_inputs = 2, .options = sl__km_options,                           \
    .n_options = SL__KM_N_OPTIONS, .bind = sl__km_bind,                                    \
    .global_state_bytes = sizeof(struct km_global), .local_state_bytes = sizeof(struct km_local), \
    .fini_global = sl__km_fini_global, .fini_local = sl__km_fini_local,                    \
    .source_tasks = sl__km_source_tasks
/* Combine and source run on the CPU in both definitions. */
extern const struct sl_impl sl__km_combine_cpu[1], sl__km_source_cpu[1];

/* kmeans_cuda.c (CUDA builds only): the GPU sink (keeps device batches, host copies past
 * half the free device budget), finalize (all iterations on the GPU) and whether it can
 * run. */
int sl__km_sink_cuda(sl_task_t *t);
int sl__km_finalize_cuda(sl_task_t *t);
int sl__km_gpu_can_run(const sl_task_t *t);

/* Points per block of the AVX2 assignment kernel (3 vectors of 8). */
#define KM_BLOCK 24

/* Assigns rows [0, n) of a batch whose d feature columns are cols[j] (float32) to the
 * nearest of k centroids and sums them. ct holds the centroids row-major as float32 (kp
 * rows of d, kp = k rounded up to 4, padding rows zero) and hn[c] = ||c||^2 / 2 (+inf
 * for padding). Writes labels[i] and dist[i] = ||x - c||^2 (computed as ||x||^2 -
 * 2 (x.c - hn[c]), float32 accumulation; ties go to the lowest centroid index), adds
 * point i to sums[labels[i] * d + j] (float64, in row order, so results are the same on
 * every path) and counts it in cnt[labels[i]]. Returns the sum of dist[0..n) (float64,
 * in row order). With AVX2+FMA (checked at run time) the points go in blocks of
 * KM_BLOCK, each summed right after its assignment while it is in L1; else portable
 * code. */
double sl__km_assign_sum_f32(const float *const *cols, int64_t n, int d, const float *ct,
                             const float *hn, int kp, int32_t *labels, float *dist,
                             double *sums, int64_t *cnt);
/* Assigns as above for float64 columns and centroids (portable code, float64
 * throughout); no sums. */
void sl__km_assign_f64(const double *const *cols, int64_t n, int d, const double *ct,
                       const double *hn, int kp, int32_t *labels, double *dist);
/* 1 if the AVX2+FMA kernel is used. */
int sl__km_have_avx2(void);

#endif /* SLUICE_KMEANS_INT_H */
