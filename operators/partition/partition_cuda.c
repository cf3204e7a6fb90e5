/* partition on a GPU (issue 6): the CUDA finalize of the partition operator (its sink
 * and combine are the CPU bodies, which only keep references to the batches, so on a GPU
 * worker they keep device batches; its source emits slices of the device result through
 * sl__emit_rows).
 *
 * finalize: the kept batches in input order, each column as one device array (views or
 * copies, rows_cuda.h); partition numbers of the keys (sl_k_part_ids: the CPU's radix or
 * Fibonacci hash), CUB radix sort of (partition, row id) pairs on the partition bits
 * (stable: rows keep their input order within a partition, as on the CPU; the sorted
 * partition numbers are the output's "partition" column), every column gathered by the
 * sorted ids, and the partition bounds (one binary search per partition) read back for
 * the source. Phases (CUDA events): gpu_partition (ids + sort), gpu_gather.
 *
 * Left to the CPU (can_run says no): bits = 0 (one partition), nulls in any column, 2^31
 * rows or more, host batches or batches of several GPUs, or device memory needs over
 * sl_task_device_budget. */
#include <string.h>

#include <cuda_runtime_api.h>

#include "common/rows_cuda.h"
#include "part_op.h"
#include "sluice_k/columns.h"
#include "sluice_k/join_gftr.h"
#include "sluice_k/sort.h"

int sl__part_gpu_sink_can_run(const sl_task_t *t)
{
    const struct part_data *d = sl_op_data(sl_task_op((sl_task_t *)t));
    return d->bits >= 1 && sl__rows_sink_fits(t);
}

/* Device bytes: output (columns + partition), copies, partition numbers (4 n), row ids
 * (8 n), CUB temp, bounds. */
static int64_t need_bytes(const struct part_global *g, const struct part_data *d, int64_t n,
                          size_t *temp_bytes)
{
    *temp_bytes = 0;
    if (sl_k_radix_rows_k32(NULL, temp_bytes, NULL, NULL, NULL, NULL, 4, n, 0, d->bits, 0) !=
        cudaSuccess)
        return INT64_MAX;
    int64_t need = (int64_t)*temp_bytes + 16 * n + sl__rows_copy_bytes(&g->m.rows, d->n_cols, n) +
                   8 * (((int64_t)1 << d->bits) + 1);
    for (int c = 0; c < d->n_cols; c++)
        need += (int64_t)sl_type_width(g->m.rows.items[0].batch->cols[c].type) * n;
    return need;
}

int sl__part_gpu_finalize_can_run(const sl_task_t *tc)
{
    sl_task_t *t = (sl_task_t *)tc;
    struct part_global *g = sl_task_gstate(t);
    const struct part_data *d = sl_op_data(sl_task_op(t));
    if (d->bits < 1)
        return 0;
    sl__rows_order(&g->m.rows); /* idempotent: contiguity is that of the input order */
    int64_t n = sl__rows_gpu_rows(&g->m.rows, d->n_cols);
    if (n < 0)
        return 0;
    size_t temp;
    return n == 0 || need_bytes(g, d, n, &temp) <= sl_task_device_budget(tc);
}

static int run_gpu(struct sl__gpu_work *w, void *arg)
{
    sl_task_t *t = w->t;
    struct part_global *g = arg;
    const struct part_data *d = sl_op_data(sl_task_op(t));
    cudaStream_t s = sl_task_stream(t);
    int64_t n = g->m.n, fanout = (int64_t)1 << d->bits;
    size_t temp_bytes;
    need_bytes(g, d, n, &temp_bytes);
    const void *cols[64];
    sl__gpu_work_mark(w, 0);
    int rc = sl__gpu_work_columns(w, &g->m.rows, d->n_cols, n, cols);
    if (rc < 0)
        return rc;
    g->m.out = sl_task_new_batch(t, sl_op_output_schema(sl_task_op(t)), n);
    uint32_t *pid = sl__gpu_work_alloc(w, (size_t)n * 4);
    uint32_t *ids = sl__gpu_work_alloc(w, (size_t)n * 8);
    void *temp = sl__gpu_work_alloc(w, temp_bytes);
    int64_t *d_off = sl__gpu_work_alloc(w, (size_t)(fanout + 1) * 8);
    g->off = sl_task_alloc(t, (size_t)(fanout + 1) * sizeof *g->off);
    if (!g->m.out || !pid || !ids || !temp || !d_off || !g->off)
        return sl_task_fail(t, SL_ENOMEM, "partition on the GPU: out of memory for %lld rows",
                            (long long)n);
    int kw = sl_type_width(g->m.rows.items[0].batch->cols[d->key].type);
    uint32_t *pid_out = sl__col_values(g->m.out, d->n_cols); /* the "partition" column */
    SL_TASK_CUDA_TRY(t, sl_k_part_ids(cols[d->key], kw, n, d->bits, d->hash, pid, s),
                     "partition ids");
    SL_TASK_CUDA_TRY(t, sl_k_iota_u32(ids, n, 0, s), "row ids");
    SL_TASK_CUDA_TRY(
        t, sl_k_radix_rows_k32(temp, &temp_bytes, pid, pid_out, ids, ids + n, 4, n, 0, d->bits, s),
        "partitioning");
    SL_TASK_CUDA_TRY(t, sl_k_part_bounds(pid_out, n, fanout, d_off, s), "partition bounds");
    sl__gpu_work_mark(w, 1);
    if ((rc = sl__gpu_gather_columns(t, cols, d->n_cols, -1, ids + n, g->m.out, n)) < 0)
        return rc;
    sl__gpu_work_mark(w, 2);
    SL_TASK_CUDA_TRY(
        t, cudaMemcpyAsync(g->off, d_off, (size_t)(fanout + 1) * 8, cudaMemcpyDeviceToHost, s),
        "reading the bounds");
    return SL_OK;
}

int sl__part_gpu_finalize(sl_task_t *t)
{
    struct part_global *g = sl_task_gstate(t);
    const struct part_data *d = sl_op_data(sl_task_op(t));
    if (sl__mat_count(&g->m) == 0)
        return SL_OK;
    g->m.n_cols = d->n_cols;
    g->fanout = (int64_t)1 << d->bits;
    static const char *const names[2] = {"gpu_partition", "gpu_gather"};
    return sl__mat_gpu_run(t, &g->m, run_gpu, g, names, 2, "partition on the GPU");
}

/* The definition CUDA builds register (operators/partition/meson.build): partition.c's
 * with the GPU implementations added. */
SL__MAT_CUDA_DEF(sl__partition_cuda_def, SL__PART_DEF_FIELDS, sl__part_finalize_cpu,
                 sl__part_source, sl__part_gpu_sink_can_run, sl__part_gpu_finalize,
                 sl__part_gpu_finalize_can_run);
