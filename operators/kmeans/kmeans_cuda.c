/* kmeans on a GPU (issue 7): the CUDA sink and finalize of the kmeans operator.
 *
 * Sink: keeps references to the device batches the runtime uploaded (a GPU-resident
 * table's slices are used in place). Once the device memory still free under the
 * engine's budget falls below 16 MiB + 10 batches, batches are kept as host copies: those are
 * streamed through the GPU every iteration (chunked streaming; the sums stay on the
 * GPU across chunks). Feature columns with a validity bitmap are checked for nulls on a
 * host copy (the same error as the CPU operator).
 *
 * Finalize: every Lloyd iteration on the GPU (kernels/kmeans: the method is
 * sl_k_kmeans_pick's): clear the accumulators, one step per kept batch, the update
 * kernel (new centroids in float64 and float32, shift and norm), then the CPU
 * operator's stopping rule on the device (sl_k_kmeans_check). Iterations are enqueued
 * in windows of up to KM_WINDOW without a host round trip: once the rule stops the loop,
 * the rest of the window's kernels return at once; the host reads the stop flag and
 * the iteration count once per window. Streamed (host-kept) batches use windows of one
 * iteration, so at most one iteration's chunks are in flight. The phases (init, assign
 * = clear + steps, update = update + check, converge = the GPU idle between windows,
 * output) go to the query profile (sl_task_phase_time), timed with CUDA events on the
 * stream where the work is on the GPU. Initial centroids follow the CPU operator exactly: given
 * (option or second input), random (the same row picks, gathered on the GPU) or
 * k-means++ (the same random draws; squared distances, their total and the pick on
 * the GPU, kmeans.h). The results (centroids, sizes, inertia, iterations, and labels
 * for output=assignments) land in the global state in host memory, so the CPU source
 * emits them as it does after a CPU run.
 *
 * Not on the GPU (can_run says no, the CPU finalize runs after moving the batches to
 * host memory): float64 features. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "gpu_ext.h"
#include "kmeans_int.h"
#include "sluice_k/kmeans.h"

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int sl__km_gpu_can_run(const sl_task_t *t)
{
    const struct km_plan *p = sl_op_data(sl_task_op(t));
    return p->type == SL_TYPE_FLOAT32 && p->d <= SL_K_KMEANS_MAX_DIMS;
}

static int64_t batch_bytes(const sl_batch_t *b)
{
    int64_t s = 0;
    for (int c = 0; c < b->n_cols; c++)
        s += b->n_rows * (int64_t)sl_type_width(b->cols[c].type);
    return s;
}

int sl__km_sink_cuda(sl_task_t *t)
{
    const struct km_plan *p = sl_op_data(sl_task_op(t));
    struct km_local *ls = sl_task_lstate(t);
    sl_batch_t *b = sl_task_input(t);
    int port = sl_task_port(t);
    if (!ls)
        return SL_ENOMEM;
    if (b->n_rows == 0)
        return SL_OK;
    bool nullable = false;
    for (int j = 0; j < p->d; j++) {
        const struct sl__col *c = &b->cols[port ? p->cols1[j] : p->cols[j]];
        nullable |= c->validity && c->null_count != 0;
    }
    /* Kept on the device while what stays free covers the morsels in flight (up to 4
     * uploads), the iterations' state and one streamed chunk, with room to spare. */
    bool to_host = sl_batch_device(b) >= 0 &&
                   batch_bytes(b) * 10 + ((int64_t)16 << 20) > sl_task_device_budget(t);
    if (!nullable && !to_host)
        return sl__km_keep(t, ls, b, port);
    sl_batch_t *h;
    int rc = sl_task_batch_to_host(t, b, &h);
    if (rc < 0)
        return rc;
    rc = sl__km_check_nulls(t, p, h, port);
    if (rc >= 0)
        rc = sl__km_keep(t, ls, to_host ? h : b, port);
    sl_batch_unref(h);
    return rc;
}

#define KM_WINDOW 8

/* Device state of the iterations (all from sl_task_device_alloc). */
struct gk {
    float *cent;                  /* k * d, the step's centroids */
    double *c64, *sums, *inertia, *shift;
    unsigned long long *counts;
    int32_t *state;               /* [0] stop, [1] iterations done (sl_k_kmeans_check) */
    int32_t *labels;              /* n, output=assignments only */
    void *temp;
    size_t temp_bytes;
    int method;
    /* phase timing: per window, ev[2w] before iteration w's clear, ev[2w + 1] after its
     * steps, ev[2 nw] after the last check; end[] alternate between windows */
    cudaEvent_t ev[2 * KM_WINDOW + 1], end[2];
    int n_ev;
};

static void gk_free(sl_task_t *t, struct gk *s)
{
    for (int i = 0; i < s->n_ev; i++)
        cudaEventDestroy(i < 2 * KM_WINDOW + 1 ? s->ev[i] : s->end[i - 2 * KM_WINDOW - 1]);
    sl_task_device_free(t, s->cent);
    sl_task_device_free(t, s->c64);
    sl_task_device_free(t, s->sums);
    sl_task_device_free(t, s->inertia);
    sl_task_device_free(t, s->shift);
    sl_task_device_free(t, s->counts);
    sl_task_device_free(t, s->state);
    sl_task_device_free(t, s->labels);
    sl_task_device_free(t, s->temp);
}

static int gk_alloc(sl_task_t *t, const struct km_plan *p, const struct km_global *g, struct gk *s)
{
    size_t kd = (size_t)p->k * p->d;
    s->method = sl_k_kmeans_pick(p->d, p->k);
    /* benchmarking only: debug_kmeans_method (an SL_K_KMEANS_* number) where it can run */
    int64_t force = -1;
    sl_task_option_int(t, "debug_kmeans_method", &force);
    if (force >= 0 && sl_k_kmeans_supported((int)force, p->d, p->k))
        s->method = (int)force;
    int64_t most = 0;
    for (int64_t i = 0; i < g->in[0].n; i++)
        if (g->in[0].v[i].batch->n_rows > most)
            most = g->in[0].v[i].batch->n_rows;
    /* temp for the largest batch (labels of a multi-pass step when none are kept), and
     * at least what k-means++ needs for n points */
    const float *none[SL_K_KMEANS_MAX_DIMS] = {0};
    size_t tb = 0, t2 = 0;
    SL_TASK_CUDA_TRY(t,
                     sl_k_kmeans_step_f32(NULL, &tb, none, p->d, most, NULL, p->k, s->method, NULL,
                                          NULL, NULL, p->assignments ? (int32_t *)16 : NULL, NULL),
                     "step temp size");
    if (p->init == KM_PLUSPLUS) {
        SL_TASK_CUDA_TRY(t, sl_k_kmeans_pp_total(NULL, &t2, NULL, g->n, NULL, NULL),
                         "k-means++ temp size");
        tb = tb > t2 ? tb : t2;
        SL_TASK_CUDA_TRY(t, sl_k_kmeans_pp_pick(NULL, &t2, NULL, g->n, 0, NULL, NULL),
                         "k-means++ temp size");
        tb = tb > t2 ? tb : t2;
    }
    s->temp_bytes = tb;
    s->cent = sl_task_device_alloc(t, kd * 4);
    s->c64 = sl_task_device_alloc(t, kd * 8);
    s->sums = sl_task_device_alloc(t, kd * 8);
    s->inertia = sl_task_device_alloc(t, 8);
    s->shift = sl_task_device_alloc(t, 16);
    s->counts = sl_task_device_alloc(t, (size_t)p->k * 8);
    s->state = sl_task_device_alloc(t, 2 * sizeof(int32_t));
    s->temp = sl_task_device_alloc(t, tb);
    if (p->assignments)
        s->labels = sl_task_device_alloc(t, (size_t)g->n * 4);
    if (!s->cent || !s->c64 || !s->sums || !s->inertia || !s->shift || !s->counts ||
        !s->state || !s->temp || (p->assignments && !s->labels))
        return SL_ENOMEM; /* the failure is recorded */
    for (; s->n_ev < 2 * KM_WINDOW + 3; s->n_ev++) {
        cudaEvent_t *e = s->n_ev < 2 * KM_WINDOW + 1 ? &s->ev[s->n_ev]
                                                     : &s->end[s->n_ev - 2 * KM_WINDOW - 1];
        SL_TASK_CUDA_TRY(t, cudaEventCreate(e), "creating an event");
    }
    return SL_OK;
}

/* Feature column pointers of kept batch i on the device: *dev is the batch itself or a
 * device copy of a host batch (the caller unrefs it after enqueuing its work). */
static int batch_cols(sl_task_t *t, const struct km_plan *p, struct km_global *g, int64_t i,
                      sl_batch_t **dev, const float **cols)
{
    int rc = sl_task_batch_to_device(t, g->in[0].v[i].batch, dev);
    if (rc < 0)
        return rc;
    for (int j = 0; j < p->d; j++)
        cols[j] = sl__col_values(*dev, p->cols[j]);
    return SL_OK;
}

static int read_back(sl_task_t *t, void *h, const void *d, size_t bytes)
{
    cudaStream_t s = sl_task_stream(t);
    SL_TASK_CUDA_TRY(t, cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, s), "copy to host");
    SL_TASK_CUDA_TRY(t, cudaStreamSynchronize(s), "waiting for the GPU");
    return SL_OK;
}

/* init=random: the CPU operator's picks (k distinct rows), gathered on the GPU. */
static int init_random(sl_task_t *t, const struct km_plan *p, struct km_global *g, struct gk *s)
{
    uint64_t seed = p->seed;
    int64_t *pick = sl_task_alloc(t, (size_t)p->k * sizeof *pick);
    int64_t *rows = sl_task_alloc(t, (size_t)p->k * sizeof *rows);
    int32_t *dst = sl_task_alloc(t, (size_t)p->k * sizeof *dst);
    if (!pick || !rows || !dst)
        return SL_ENOMEM;
    for (int c = 0; c < p->k; c++) {
        int dup;
        do {
            pick[c] = (int64_t)(sl__km_rng_next(&seed) % (uint64_t)g->n);
            dup = 0;
            for (int e = 0; e < c; e++)
                dup |= pick[e] == pick[c];
        } while (dup);
    }
    /* per batch, the picks inside it */
    int64_t *d_rows = s->temp;
    int32_t *d_dst = (int32_t *)((char *)s->temp + (((size_t)p->k * 8 + 255) & ~(size_t)255));
    if (s->temp_bytes < (((size_t)p->k * 8 + 255) & ~(size_t)255) + (size_t)p->k * 4) {
        sl_task_device_free(t, s->temp);
        s->temp_bytes = (((size_t)p->k * 8 + 255) & ~(size_t)255) + (size_t)p->k * 4;
        if (!(s->temp = sl_task_device_alloc(t, s->temp_bytes)))
            return SL_ENOMEM;
        d_rows = s->temp;
        d_dst = (int32_t *)((char *)s->temp + (((size_t)p->k * 8 + 255) & ~(size_t)255));
    }
    for (int64_t i = 0; i < g->in[0].n; i++) {
        int m = 0;
        for (int c = 0; c < p->k; c++)
            if (pick[c] >= g->start[i] && pick[c] < g->start[i + 1]) {
                rows[m] = pick[c] - g->start[i];
                dst[m++] = c;
            }
        if (!m)
            continue;
        sl_batch_t *dev;
        const float *cols[SL_K_KMEANS_MAX_DIMS];
        int rc = batch_cols(t, p, g, i, &dev, cols);
        if (rc < 0)
            return rc;
        cudaStream_t st = sl_task_stream(t);
        cudaError_t e = SL_TASK_CUDA_CALL(
            cudaMemcpyAsync(d_rows, rows, (size_t)m * 8, cudaMemcpyHostToDevice, st));
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(
                cudaMemcpyAsync(d_dst, dst, (size_t)m * 4, cudaMemcpyHostToDevice, st));
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(sl_k_kmeans_gather_f32(cols, p->d, d_rows, d_dst, m, s->c64, st));
        /* the host arrays are reused by the next batch: wait for the copies */
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(cudaStreamSynchronize(st));
        sl_batch_unref(dev);
        if (e != cudaSuccess)
            return SL_TASK_CUDA_FAIL(t, e, "gathering the initial centroids");
    }
    return read_back(t, g->c, s->c64, (size_t)p->k * p->d * 8);
}

/* init=kmeans++: the CPU operator's draws; distances, total and pick on the GPU. */
static int init_plusplus(sl_task_t *t, const struct km_plan *p, struct km_global *g,
                         struct gk *s)
{
    cudaStream_t st = sl_task_stream(t);
    uint64_t seed = p->seed;
    double *d2 = sl_task_device_alloc(t, (size_t)g->n * 8);
    double *last = sl_task_device_alloc(t, (size_t)p->d * 8 + 64);
    if (!d2 || !last)
        return SL_ENOMEM;
    /* after the last centroid: total, pick, and a gather's row and destination */
    double *total = last + p->d;
    long long *pick_d = (long long *)(total + 1);
    int64_t *row_d = (int64_t *)(pick_d + 1);
    int32_t *dst_d = (int32_t *)(row_d + 1);
    int64_t pick = (int64_t)(sl__km_rng_next(&seed) % (uint64_t)g->n);
    int rc = SL_OK;
    for (int c = 0; c < p->k && rc >= 0; c++) {
        /* centroid c = row pick: find its batch, gather it into c64 row c */
        int64_t bi = 0;
        while (g->start[bi + 1] <= pick)
            bi++;
        sl_batch_t *dev;
        const float *cols[SL_K_KMEANS_MAX_DIMS];
        if ((rc = batch_cols(t, p, g, bi, &dev, cols)) < 0)
            break;
        int64_t row = pick - g->start[bi];
        int32_t dst = c;
        cudaError_t e =
            SL_TASK_CUDA_CALL(cudaMemcpyAsync(row_d, &row, 8, cudaMemcpyHostToDevice, st));
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(cudaMemcpyAsync(dst_d, &dst, 4, cudaMemcpyHostToDevice, st));
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(sl_k_kmeans_gather_f32(cols, p->d, row_d, dst_d, 1, s->c64, st));
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(cudaMemcpyAsync(last, s->c64 + (size_t)c * p->d, (size_t)p->d * 8,
                                                  cudaMemcpyDeviceToDevice, st));
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(
                cudaStreamSynchronize(st)); /* row and dst are on this stack frame */
        sl_batch_unref(dev);
        if (e != cudaSuccess) {
            rc = SL_TASK_CUDA_FAIL(t, e, "k-means++");
            break;
        }
        if (c == p->k - 1)
            break;
        for (int64_t i = 0; i < g->in[0].n && e == cudaSuccess; i++) {
            if ((rc = batch_cols(t, p, g, i, &dev, cols)) < 0)
                break;
            e = SL_TASK_CUDA_CALL(sl_k_kmeans_pp_update_f32(cols, p->d, g->in[0].v[i].batch->n_rows,
                                                            last, c == 0, d2 + g->start[i], st));
            sl_batch_unref(dev);
        }
        if (rc < 0)
            break;
        size_t tb = s->temp_bytes;
        double tot = 0;
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(sl_k_kmeans_pp_total(s->temp, &tb, d2, g->n, total, st));
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(cudaMemcpyAsync(&tot, total, 8, cudaMemcpyDeviceToHost, st));
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(cudaStreamSynchronize(st));
        if (e != cudaSuccess) {
            rc = SL_TASK_CUDA_FAIL(t, e, "k-means++");
            break;
        }
        pick = (int64_t)(sl__km_rng_next(&seed) % (uint64_t)g->n);
        if (tot > 0) {
            long long v = 0;
            double u = sl__km_rng_unit(&seed) * tot;
            tb = s->temp_bytes;
            e = SL_TASK_CUDA_CALL(sl_k_kmeans_pp_pick(s->temp, &tb, d2, g->n, u, pick_d, st));
            if (e == cudaSuccess)
                e = SL_TASK_CUDA_CALL(cudaMemcpyAsync(&v, pick_d, 8, cudaMemcpyDeviceToHost, st));
            if (e == cudaSuccess)
                e = SL_TASK_CUDA_CALL(cudaStreamSynchronize(st));
            if (e != cudaSuccess) {
                rc = SL_TASK_CUDA_FAIL(t, e, "k-means++");
                break;
            }
            pick = v;
        }
        if (sl_task_cancelled(t))
            rc = SL_ECANCELED;
    }
    sl_task_device_free(t, d2);
    sl_task_device_free(t, last);
    if (rc < 0)
        return rc;
    return read_back(t, g->c, s->c64, (size_t)p->k * p->d * 8);
}

/* One Lloyd iteration over every kept batch, enqueued only; each kernel does nothing
 * once s->state says stop. */
static int iterate(sl_task_t *t, const struct km_plan *p, struct km_global *g, struct gk *s,
                   cudaEvent_t before, cudaEvent_t after_steps)
{
    cudaStream_t st = sl_task_stream(t);
    SL_TASK_CUDA_TRY(t, cudaEventRecord(before, st), "timing");
    SL_TASK_CUDA_TRY(
        t, sl_k_kmeans_clear_if(s->sums, s->counts, s->inertia, p->k, p->d, s->state, st), "clear");
    for (int64_t i = 0; i < g->in[0].n; i++) {
        sl_batch_t *dev;
        const float *cols[SL_K_KMEANS_MAX_DIMS];
        int rc = batch_cols(t, p, g, i, &dev, cols);
        if (rc < 0)
            return rc;
        size_t tb = s->temp_bytes;
        cudaError_t e = SL_TASK_CUDA_CALL(sl_k_kmeans_step_f32_if(
            s->temp, &tb, cols, p->d, dev->n_rows, s->cent, p->k, s->method, s->sums, s->counts,
            s->inertia, s->labels ? s->labels + g->start[i] : NULL, s->state, st));
        sl_batch_unref(dev); /* a streamed copy is freed in stream order, after the step */
        if (e != cudaSuccess)
            return SL_TASK_CUDA_FAIL(t, e, "assign and sum");
    }
    SL_TASK_CUDA_TRY(t, cudaEventRecord(after_steps, st), "timing");
    SL_TASK_CUDA_TRY(t,
                     sl_k_kmeans_update_if(s->cent, s->c64, s->sums, s->counts, p->k, p->d, s->cent,
                                           s->shift, s->state, st),
                     "update");
    SL_TASK_CUDA_TRY(t, sl_k_kmeans_check(s->shift, p->tol, p->max_iter, s->state, st),
                     "stopping rule");
    return SL_OK;
}

static float elapsed(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    return cudaEventElapsedTime(&ms, a, b) == cudaSuccess ? ms : 0;
}

/* The Lloyd loop: windows of iterations until the device-side rule stops it. */
static int lloyd(sl_task_t *t, const struct km_plan *p, struct km_global *g, struct gk *s)
{
    cudaStream_t st = sl_task_stream(t);
    int window = KM_WINDOW;
    for (int64_t i = 0; i < g->in[0].n; i++)
        if (sl_batch_device(g->in[0].v[i].batch) < 0)
            window = 1; /* streamed: one iteration's chunks in flight */
    SL_TASK_CUDA_TRY(t, cudaMemsetAsync(s->state, 0, 2 * sizeof(int32_t), st), "loop state");
    double ms_assign = 0, ms_update = 0, ms_gap = 0;
    int32_t state[2] = {0, 0};
    for (int win = 0; !state[0]; win++) {
        int64_t left = p->max_iter - state[1];
        int nw = left < window ? (int)left : window;
        for (int w = 0; w < nw; w++) {
            int rc = iterate(t, p, g, s, s->ev[2 * w], s->ev[2 * w + 1]);
            if (rc < 0)
                return rc;
        }
        SL_TASK_CUDA_TRY(t, cudaEventRecord(s->end[win & 1], st), "timing");
        SL_TASK_CUDA_TRY(t,
                         cudaMemcpyAsync(state, s->state, sizeof state, cudaMemcpyDeviceToHost, st),
                         "copy to host");
        SL_TASK_CUDA_TRY(t, cudaStreamSynchronize(st), "waiting for the GPU");
        for (int w = 0; w < nw; w++) {
            ms_assign += elapsed(s->ev[2 * w], s->ev[2 * w + 1]);
            ms_update += elapsed(s->ev[2 * w + 1], w + 1 < nw ? s->ev[2 * w + 2] : s->end[win & 1]);
        }
        if (win > 0)
            ms_gap += elapsed(s->end[(win - 1) & 1], s->ev[0]);
        if (!state[0] && state[1] >= p->max_iter)
            return sl_task_fail(t, SL_EINTERNAL, "kmeans on the GPU: the loop did not stop");
        if (sl_task_cancelled(t))
            return SL_ECANCELED;
    }
    g->iters = state[1];
    sl_task_phase_time(t, "assign", ms_assign);
    sl_task_phase_time(t, "update", ms_update);
    sl_task_phase_time(t, "converge", ms_gap);
    return SL_OK;
}

static int results(sl_task_t *t, const struct km_plan *p, struct km_global *g, struct gk *s)
{
    cudaStream_t st = sl_task_stream(t);
    unsigned long long *cnt = sl_task_alloc(t, (size_t)p->k * 8);
    if (!cnt)
        return SL_ENOMEM;
    SL_TASK_CUDA_TRY(
        t, cudaMemcpyAsync(g->c, s->c64, (size_t)p->k * p->d * 8, cudaMemcpyDeviceToHost, st),
        "copy to host");
    SL_TASK_CUDA_TRY(t,
                     cudaMemcpyAsync(cnt, s->counts, (size_t)p->k * 8, cudaMemcpyDeviceToHost, st),
                     "copy to host");
    SL_TASK_CUDA_TRY(t, cudaMemcpyAsync(&g->inertia, s->inertia, 8, cudaMemcpyDeviceToHost, st),
                     "copy to host");
    if (s->labels)
        SL_TASK_CUDA_TRY(
            t, cudaMemcpyAsync(g->labels, s->labels, (size_t)g->n * 4, cudaMemcpyDeviceToHost, st),
            "copy to host");
    SL_TASK_CUDA_TRY(t, cudaStreamSynchronize(st), "waiting for the GPU");
    for (int c = 0; c < p->k; c++)
        g->size[c] = (int64_t)cnt[c];
    sl_task_free(t, cnt);
    return SL_OK;
}

static int run(sl_task_t *t, const struct km_plan *p, struct km_global *g, struct gk *s)
{
    int64_t t0 = now_ns();
    int rc = gk_alloc(t, p, g, s);
    if (rc < 0)
        return rc;
    if (p->init == KM_GIVEN && p->given)
        memcpy(g->c, p->given, (size_t)p->k * p->d * sizeof(double));
    else if (p->init == KM_GIVEN)
        rc = sl__km_init_given_table(t, p, g);
    else if (p->init == KM_RANDOM)
        rc = init_random(t, p, g, s);
    else
        rc = init_plusplus(t, p, g, s);
    if (rc < 0)
        return rc;
    cudaStream_t st = sl_task_stream(t);
    SL_TASK_CUDA_TRY(
        t, cudaMemcpyAsync(s->c64, g->c, (size_t)p->k * p->d * 8, cudaMemcpyHostToDevice, st),
        "copy the initial centroids");
    SL_TASK_CUDA_TRY(t, sl_k_kmeans_to_f32(s->c64, (int64_t)p->k * p->d, s->cent, st), "centroids");
    SL_TASK_CUDA_TRY(t, cudaStreamSynchronize(st), "waiting for the GPU"); /* init ends here */
    sl_task_phase_time(t, "init", (now_ns() - t0) / 1e6);
    if ((rc = lloyd(t, p, g, s)) < 0)
        return rc;
    t0 = now_ns();
    rc = results(t, p, g, s);
    sl_task_phase_time(t, "output", (now_ns() - t0) / 1e6);
    return rc;
}

int sl__km_finalize_cuda(sl_task_t *t)
{
    const struct km_plan *p = sl_op_data(sl_task_op(t));
    struct km_global *g = sl_task_gstate(t);
    /* the centroids input is read on the host; the points stay where the sink kept them */
    struct km_list pts = g->in[0];
    g->in[0].n = 0;
    int rc = sl__km_inputs_to_host(t, g);
    g->in[0] = pts;
    if (rc >= 0)
        rc = sl__km_order(t, p, g);
    if (rc < 0)
        return rc;
    g->c = sl_task_alloc(t, (size_t)p->k * p->d * sizeof(double));
    g->size = sl_task_alloc(t, (size_t)p->k * sizeof(int64_t));
    if (p->assignments)
        g->labels = sl_task_alloc(t, (size_t)g->n * 4 + 64);
    if (!g->c || !g->size || (p->assignments && !g->labels))
        return SL_ENOMEM;
    struct gk s;
    memset(&s, 0, sizeof s);
    rc = run(t, p, g, &s);
    gk_free(t, &s);
    return rc;
}

/* The definition CUDA builds register (kmeans/meson.build): kmeans.c's with the GPU
 * sink and finalize added. */
SL__IMPLS_CPU_CUDA(def_sink, sl__km_sink, sl__km_sink_cuda, NULL);
SL__IMPLS_CPU_CUDA(def_finalize, sl__km_finalize, sl__km_finalize_cuda, sl__km_gpu_can_run);
SL__SINK_SOURCE_DEF(sl__kmeans_cuda_def, SL__KM_DEF_FIELDS, (), sl__km_cost, def_sink,
                    sl__km_combine_cpu, def_finalize, sl__km_source_cpu);
