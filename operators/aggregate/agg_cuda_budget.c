/* The GPU group-by under a small GPU budget (issue 18; agg_cuda.h says what and why):
 * folds, inputs moved to the host, and the finalize that merges them on the CPU.
 *
 * Exactness: the kept batches are every input the driver holds groups of since it last
 * started empty, so dropping the driver and moving them to the host loses no row and
 * counts none twice; a fold writes every group the driver holds and then drops the driver
 * and the kept batches together. The CPU finalize merges the folds as partial states
 * (counts are counts, a sum or min or max is a value with a count of one: every
 * aggregate but avg, which sl__agg_can_split refuses and which goes to the host
 * instead). */
#include <string.h>

#include <cuda_runtime_api.h>

#include "agg_cuda.h"
#include "gpu_ext.h"
#include "internal.h"

/* The inputs moved to host memory wait for finalize, where CPU tasks aggregate them in
 * parallel, while they hold at most a sixteenth of the engine's host budget (option
 * host_mem); past it, those held are aggregated at once into g->host (a CPU sink's
 * state, on this GPU worker's thread) and dropped, so host memory stays bounded whatever
 * the input (avg under a small budget held all of it). */
#define AGG_GPU_HOST_DIV 16
/* Host batches per CPU task at finalize at most: the tasks number at most this many
 * (each builds a local table of its own). */
#define HOST_TASKS 64

/* Aggregates the held inputs into g->host and drops them. */
static int sink_held(sl_task_t *t, struct agg_gpu_local *g)
{
    if (!g->host && (g->host = sl_task_alloc(t, sizeof *g->host)))
        memset(g->host, 0, sizeof *g->host);
    int rc = g->host ? SL_OK : SL_ENOMEM;
    for (int k = 0; k < g->host_in.n && rc == SL_OK; k++)
        rc = sl__agg_sink_batch(t, g->host, g->host_in.b[k]);
    agg_blist_release(&g->host_in);
    g->host_in_bytes = 0;
    return rc;
}

/* Device batch b's copy in host memory joins the held inputs. */
static int to_host(sl_task_t *t, struct agg_gpu_local *g, sl_batch_t *b)
{
    sl_batch_t *h = NULL;
    int rc = sl_task_batch_to_host(t, b, &h);
    if (rc == SL_OK && sl_batch_num_rows(h) > 0) {
        if (!g->host_cap) {
            int64_t host_mem = 0;
            sl_task_option_int(t, "host_mem", &host_mem);
            g->host_cap = host_mem > 0 ? host_mem / AGG_GPU_HOST_DIV : (int64_t)1 << 30;
        }
        rc = agg_blist_push(t, &g->host_in, h);
        g->host_in_bytes += sl__batch_bytes(h);
        g->host_held = g->host_in_bytes > g->host_held ? g->host_in_bytes : g->host_held;
        g->host_rows += sl_batch_num_rows(h);
        sl_task_profile_value(t, "gpu_budget_host_rows", g->host_rows);
        sl_task_profile_value(t, "gpu_budget_host_held", g->host_held);
        if (rc == SL_OK && g->host_in_bytes > g->host_cap)
            rc = sink_held(t, g);
    }
    sl_batch_unref(h);
    return rc;
}

int agg_gpu_go_host(sl_task_t *t, struct agg_gpu_local *g, sl_batch_t *b, int why)
{
    int rc = SL_OK;
    if (!g->on_host && g->unkept) /* the driver's groups would go without their rows */
        return sl_task_fail(t, SL_EBUDGET, "aggregate on the GPU: the groups do not fit GPU "
                            "memory (%lld bytes left) and, without a GPU budget, the "
                            "partitioned inputs were not kept for the CPU (option gpu_mem "
                            "lets it fall back)", (long long)sl_task_device_budget(t));
    if (!g->on_host) {
        g->on_host = 1;
        g->why_host = why;
        sl_task_profile_value(t, "gpu_budget_host", why);
        agg_gpu_bind(&g->drv, t);
        for (int i = 0; i < g->kept_in.n && rc == SL_OK; i++)
            rc = to_host(t, g, g->kept_in.b[i]);
        /* The driver's kernels may still read the kept batches. */
        cudaError_t e = cudaStreamSynchronize(sl_task_stream(t));
        if (e != cudaSuccess && rc == SL_OK)
            rc = SL_TASK_CUDA_FAIL(t, e, "aggregate on the GPU: waiting for the stream");
        agg_gpu_drop_kept(g);
        agg_gdrv_free(&g->drv); /* its groups are those of the kept batches */
    }
    return rc == SL_OK && b ? to_host(t, g, b) : rc;
}

/* Writes the driver's groups into g->folds (host memory) and starts it again empty.
 * Integer sums leave at 128 bits: a fold's partial sum may pass int64 where the total
 * does not (rows of +2^62, then of -2^62). AGG_GPU_OVER_BUDGET (the driver as it was;
 * its inputs still kept) when the GPU cannot hold what writing them needs. */
static int fold(sl_task_t *t, const struct agg_plan *p, struct agg_gpu_local *g)
{
    sl_batch_t *ob = NULL, *h = NULL;
    int rc = agg_gpu_groups(t, p, &g->drv, 1, &ob);
    if (rc != SL_OK)
        return rc;
    rc = sl_task_batch_to_host(t, ob, &h);
    sl_batch_unref(ob);
    if (rc == SL_OK && sl_batch_num_rows(h) > 0)
        rc = agg_blist_push(t, &g->folds, h);
    sl_batch_unref(h);
    if (rc < 0)
        return rc;
    sl_task_profile_value(t, "gpu_budget_folds", g->folds.n);
    agg_gpu_drop_kept(g);
    if (agg_gdrv_reset(&g->drv) < 0)
        return sl_task_fail(t, SL_ENOMEM, "aggregate on the GPU: out of memory");
    return SL_OK;
}

int agg_gpu_budget_check(sl_task_t *t, const struct agg_plan *p, struct agg_gpu_local *g)
{
    /* held / (held + left) > 1 / AGG_GPU_KEEP_DIV: fold (or move to the host). */
    const int64_t held = g->kept_bytes + agg_gdrv_held_bytes(&g->drv);
    const int64_t left = sl_task_device_budget(t);
    if (held * AGG_GPU_KEEP_DIV <= held + left)
        return SL_OK;
    /* Without its inputs (no GPU budget, the partitioned method) the driver cannot go to
     * the host: it goes on until the GPU is full (a fold that does not fit left it as
     * it was). */
    if (!sl__agg_can_split(sl_task_op(t)))
        return g->unkept ? SL_OK : agg_gpu_go_host(t, g, NULL, AGG_GPU_WHY_AVG);
    int rc = fold(t, p, g);
    if (rc == AGG_GPU_OVER_BUDGET)
        return g->unkept ? SL_OK : agg_gpu_go_host(t, g, NULL, AGG_GPU_WHY_DRIVER);
    return rc;
}

/* ---------------- finalize on the CPU workers ---------------- */

/* A fold's DICT keys as the int32 merged codes they are (the CPU's table keys them so). */
static int codes_as_int32(sl_task_t *t, const struct agg_plan *p, sl_batch_t *h,
                          sl_batch_t **out)
{
    *out = NULL;
    sl_batch_t *nb = sl__agg_batch_share(h);
    if (!nb)
        return sl_task_fail(t, SL_ENOMEM, "aggregate: out of memory");
    const int64_t n = sl_batch_num_rows(h);
    for (int j = 0; j < p->n_keys; j++) {
        if (p->key_types[j] != SL_TYPE_DICT)
            continue;
        struct sl__buf *codes = sl__buf_new(n * 4 + 4);
        if (!codes || sl__agg_col_replace(nb, h, j, codes, SL_TYPE_INT32) < 0) {
            sl__buf_unref(codes);
            sl_batch_unref(nb);
            return sl_task_fail(t, SL_ENOMEM, "aggregate: out of memory");
        }
        memcpy(codes->ptr, sl__col_values(h, j), (size_t)n * 4);
    }
    *out = nb;
    return SL_OK;
}

static int n_host_tasks(const struct agg_gpu_local *g)
{
    return g->host_in.n < HOST_TASKS ? g->host_in.n : HOST_TASKS;
}

void agg_gpu_cpu_release(struct agg_gpu_local *g)
{
    if (g->host)
        sl__pred_state_fini(&g->host->pred);
    for (int i = 0; i < g->n_cpu; i++)
        if (g->cpu[i])
            sl__pred_state_fini(&g->cpu[i]->pred);
    g->n_cpu = 0;
}

/* Spawned: task i < n_host_tasks sinks its share of the held inputs into a local state
 * of its own; the others rebuild one fold's partial states each. */
static int host_task(sl_task_t *t)
{
    struct agg_gpu_local *g = sl_task_arg(t);
    const struct agg_plan *p = sl_op_data(sl_task_op(t));
    const int nt = n_host_tasks(g);
    const int64_t i = sl_task_index(t);
    if (i >= nt) {
        sl_batch_t *h = g->folds.b[i - nt], *coded = NULL;
        int rc = sl__agg_dict_keys(p) ? codes_as_int32(t, p, h, &coded) : SL_OK;
        if (rc == SL_OK)
            rc = sl__agg_partials_kept(t, p, coded ? coded : h, &g->fold_kept[i - nt]);
        sl_batch_unref(coded);
        return rc;
    }
    struct agg_local *ls = sl_task_alloc(t, sizeof *ls);
    if (!ls)
        return SL_ENOMEM;
    memset(ls, 0, sizeof *ls);
    g->cpu[i] = ls;
    int rc = SL_OK;
    const int n = g->host_in.n;
    for (int64_t k = i * n / nt; k < (i + 1) * n / nt && rc == SL_OK; k++) {
        rc = sl__agg_sink_batch(t, ls, g->host_in.b[k]);
        sl_batch_unref(g->host_in.b[k]); /* its memory goes now */
        g->host_in.b[k] = NULL;
    }
    return rc;
}

/* Files the host states (the CPU tasks' and g->host) and the folds' partial states as
 * CPU workers' locals, then the CPU finalize. */
static int merge_all(sl_task_t *t, struct agg_gpu_local *g)
{
    struct agg_global *gs = sl_task_gstate(t);
    int rc = g->host ? sl__agg_keep_local(t, gs, g->host) : SL_OK;
    for (int i = 0; i < g->n_cpu && rc == SL_OK; i++)
        if (g->cpu[i])
            rc = sl__agg_keep_local(t, gs, g->cpu[i]);
    agg_gpu_cpu_release(g);
    g->host = NULL;
    for (int j = 0; j < g->folds.n; j++)
        if (g->fold_kept[j])
            sl__agg_file_kept(gs, g->fold_kept[j]);
    agg_blist_release(&g->host_in);
    agg_blist_release(&g->folds);
    return rc < 0 ? rc : sl__agg_finalize_cpu(t);
}

/* After the tasks. */
static int host_merge(sl_task_t *t)
{
    return merge_all(t, sl_task_arg(t));
}

static const struct sl_impl host_impl[] = {SL__IMPL_CPU(host_task)};
static const struct sl_phase host_phase = {host_impl, 1, NULL};
static const struct sl_impl merge_impl[] = {SL__IMPL_CPU(host_merge)};
static const struct sl_phase merge_phase = {merge_impl, 1, NULL};

int agg_gpu_budget_finalize(sl_task_t *t, const struct agg_plan *p, struct agg_global *gs,
                            struct agg_gpu_local *g)
{
    int rc = SL_OK;
    agg_gpu_bind(&g->drv, t); /* the last sink task is gone: frees go on this one */
    if (!g->on_host && g->drv.rows > 0) { /* the last run of inputs joins the folds */
        rc = fold(t, p, g);
        if (rc == AGG_GPU_OVER_BUDGET)
            rc = agg_gpu_go_host(t, g, NULL, AGG_GPU_WHY_DRIVER);
        if (rc < 0)
            return rc;
    }
    agg_gdrv_free(&g->drv);
    agg_gpu_drop_kept(g);
    gs->n_gpu_locals = 0; /* the CPU finalize takes it from here */
    const int nt = n_host_tasks(g);
    g->cpu = sl_task_alloc(t, (size_t)(nt + 1) * sizeof *g->cpu);
    g->fold_kept = sl_task_alloc(t, (size_t)(g->folds.n + 1) * sizeof *g->fold_kept);
    if (!g->cpu || !g->fold_kept)
        return SL_ENOMEM;
    memset(g->cpu, 0, (size_t)(nt + 1) * sizeof *g->cpu);
    g->n_cpu = nt;
    memset(g->fold_kept, 0, (size_t)(g->folds.n + 1) * sizeof *g->fold_kept);
    sl_task_profile_value(t, "gpu_budget_folds", g->folds.n);
    if (nt + g->folds.n == 0)
        return merge_all(t, g);
    return sl_task_spawn(t, &host_phase, nt + g->folds.n, g, &merge_phase);
}
