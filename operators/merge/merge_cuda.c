/* merge on a GPU (issue 6): the CUDA finalize of the merge operator for two runs (its
 * sink and combine are the CPU bodies, which keep references to the batches, so on a
 * GPU worker they keep device batches; its source emits slices of the device result
 * through sl__emit_morsel).
 *
 * finalize: the kept batches in input order (run 0's rows, then run 1's), each column as
 * one device array (rows_cuda.h); the runs' order checked on the GPU (the first row out
 * of order fails the query with the CPU's message); every row's merged position from
 * co-ranks (sl_k_merge_ids: stable, run 0 first on equal keys); every column gathered
 * by the merged row ids. Phases (CUDA events): gpu_check, gpu_merge, gpu_gather.
 *
 * Left to the CPU (can_run says no): runs=batch, other than exactly two non-empty runs,
 * a key other than a signed 4- or 8-byte integer (int32, int64, date32, timestamp,
 * decimal(p <= 18); not floats, bools, small or unsigned integers), nulls in any column,
 * 2^31 rows or more, host batches or batches of several GPUs, or device memory needs over
 * sl_task_device_budget. */
#include <string.h>

#include <cuda_runtime_api.h>

#include "common/rows_cuda.h"
#include "merge_op.h"
#include "sluice_k/columns.h"
#include "sluice_k/merge.h"

int sl__merge_gpu_sink_can_run(const sl_task_t *t)
{
    const sl_op_t *op = sl_task_op((sl_task_t *)t);
    const struct merge_data *d = sl_op_data(op);
    const char *name;
    enum sl_type type;
    sl_schema_field(sl_op_output_schema(op), d->key.col, &name, &type);
    return !d->by_batch && sl__type_signed_word(type) && sl__rows_sink_fits(t);
}

/* Rows of the first run (the first port's batches; the rows are in input order). */
static int64_t first_run_rows(const struct sl__rows *r)
{
    int64_t n0 = 0;
    for (int64_t i = 0; i < r->n && r->items[i].port == r->items[0].port; i++)
        n0 += r->items[i].batch->n_rows;
    return n0;
}

int sl__merge_gpu_finalize_can_run(const sl_task_t *tc)
{
    sl_task_t *t = (sl_task_t *)tc;
    struct merge_global *g = sl_task_gstate(t);
    const struct merge_data *d = sl_op_data(sl_task_op(t));
    if (!sl__merge_gpu_sink_can_run(tc) || d->n_cols > 64)
        return 0;
    sl__rows_order(&g->m.rows); /* idempotent: runs and contiguity in input order */
    int64_t n = sl__rows_gpu_rows(&g->m.rows, d->n_cols), runs = 0;
    for (int64_t i = 0; i < g->m.rows.n; i++)
        runs += i == 0 || g->m.rows.items[i].port != g->m.rows.items[i - 1].port;
    if (n < 0 || runs != 2)
        return 0;
    int64_t need = 8 * n + 8 + sl__rows_copy_bytes(&g->m.rows, d->n_cols, n);
    for (int c = 0; c < d->n_cols; c++)
        need += (int64_t)sl_type_width(g->m.rows.items[0].batch->cols[c].type) * n;
    return need <= sl_task_device_budget(tc);
}

static int run_gpu(struct sl__gpu_work *w, void *arg)
{
    sl_task_t *t = w->t;
    struct merge_global *g = arg;
    const struct merge_data *d = sl_op_data(sl_task_op(t));
    cudaStream_t s = sl_task_stream(t);
    int64_t n = g->m.n, n0 = first_run_rows(&g->m.rows), n1 = n - n0;
    const void *cols[64];
    sl__gpu_work_mark(w, 0);
    int rc = sl__gpu_work_columns(w, &g->m.rows, d->n_cols, n, cols);
    if (rc < 0)
        return rc;
    int kw = sl_type_width(g->m.rows.items[0].batch->cols[d->key.col].type);
    unsigned long long *bad = sl__gpu_work_alloc(w, 8), hbad = 0;
    uint32_t *ids = sl__gpu_work_alloc(w, (size_t)n * 4);
    if (!bad || !ids)
        return sl_task_fail(t, SL_ENOMEM, "merge on the GPU: out of device memory");
    SL_TASK_CUDA_TRY(t, cudaMemsetAsync(bad, 0xff, 8, s), "checking the runs");
    SL_TASK_CUDA_TRY(t, sl_k_merge_check(cols[d->key.col], kw, d->key.desc, n0, n1, bad, s),
                     "checking the runs");
    SL_TASK_CUDA_TRY(t, cudaMemcpyAsync(&hbad, bad, 8, cudaMemcpyDeviceToHost, s),
                     "checking the runs");
    sl__gpu_work_mark(w, 1);
    SL_TASK_CUDA_TRY(t, cudaStreamSynchronize(s), "checking the runs");
    if (hbad != ~0ull) {
        int r = (int64_t)hbad >= n0;
        return sl_task_fail(t, SL_EINVAL, "run %d is not sorted by its key: row %lld of the run "
                            "is out of order", r, (long long)((int64_t)hbad - (r ? n0 : 0)));
    }
    SL_TASK_CUDA_TRY(t, sl_k_merge_ids(cols[d->key.col], kw, d->key.desc, n0, n1, ids, s),
                     "merging");
    sl__gpu_work_mark(w, 2);
    g->m.out = sl_task_new_batch(t, sl_op_output_schema(sl_task_op(t)), n);
    if (!g->m.out)
        return sl_task_fail(t, SL_ENOMEM, "merge on the GPU: out of memory for %lld rows",
                            (long long)n);
    if ((rc = sl__gpu_gather_columns(t, cols, d->n_cols, -1, ids, g->m.out, n)) < 0)
        return rc;
    sl__gpu_work_mark(w, 3);
    return SL_OK;
}

int sl__merge_gpu_finalize(sl_task_t *t)
{
    struct merge_global *g = sl_task_gstate(t);
    const struct merge_data *d = sl_op_data(sl_task_op(t));
    if (sl__mat_count(&g->m) == 0)
        return SL_OK;
    g->m.n_cols = d->n_cols;
    static const char *const names[3] = {"gpu_check", "gpu_merge", "gpu_gather"};
    return sl__mat_gpu_run(t, &g->m, run_gpu, g, names, 3, "merge on the GPU");
}

/* The definition CUDA builds register (operators/merge/meson.build): merge.c's with
 * the GPU implementations added. */
SL__MAT_CUDA_DEF(sl__merge_cuda_def, SL__MERGE_DEF_FIELDS, sl__merge_finalize_cpu,
                 sl__mat_emit_morsel, sl__merge_gpu_sink_can_run, sl__merge_gpu_finalize,
                 sl__merge_gpu_finalize_can_run);
