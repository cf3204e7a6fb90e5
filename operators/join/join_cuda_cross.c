/* A cross join on a GPU: a scalar subquery's one row beside every row of the other side
 * (TPC-H Q11's threshold, Q15's maximum, Q22's average).
 *
 * The CPU's cross join (join_full.c) needs both sides in host memory, so a pipeline on
 * a GPU downloaded its left side, built the pairs on the host and uploaded them again:
 * 6 ms for Q11's 304,774 groups and Q22's 419,974 customers at SF 10, against 0.06 ms
 * of kernels. Here finalize only moves the right side's few rows to the GPU (they are
 * usually there already), and each source task emits, per right row, one left batch
 * with its columns shared as they are (no copy) and each right column broadcast into a
 * new device column by one kernel (sl_k_broadcast_width, with validity words when the
 * column has some). Row order is the CPU's: left batches in order, right rows inside.
 *
 * Taken when every left batch with rows is in the task's GPU memory, the right side has
 * at most CROSS_GPU_MAX_RIGHT rows and no utf8/large_utf8 output column (fixed widths of
 * 1 to 16 bytes and dictionary codes broadcast; left strings are shared, so they may
 * be anything), on one GPU; else the CPU's path runs as before. */
#include "common/op_common.h"
#include "common/rows_cuda.h"
#include "join_cuda_int.h"
#include "sluice_k/columns.h"

/* One batch per (left batch, right row): past a few right rows the CPU's path, which
 * makes the same batches, costs no more than a launch per column and row. */
#define CROSS_GPU_MAX_RIGHT 64

int join_cross_gpu_can_run(const sl_task_t *t)
{
    const struct join_data *d = sl_op_data(sl_task_op((sl_task_t *)t));
    const struct join_state *st = sl_task_gstate((sl_task_t *)t);
    if (sl__task_n_devices(t) > 1 || join_side_rows(&st->side[1]) > CROSS_GPU_MAX_RIGHT)
        return 0;
    for (int oc = 0; oc < d->n_out; oc++) {
        int w = (int)sl_type_width(d->out[oc].type);
        if (d->out[oc].side == 1 && w != 1 && w != 2 && w != 4 && w != 8 && w != 16)
            return 0;
    }
    int dev = -1;
    for (int s = 0; s < 2; s++) {
        for (int64_t i = 0; i < st->side[s].n_batches; i++) {
            const sl_batch_t *b = st->side[s].batches[i];
            int bd = sl_batch_device(b);
            if (b->n_rows == 0 || (bd < 0 && s == 1)) /* right host rows are uploaded */
                continue;
            if (bd < 0 || (dev >= 0 && bd != dev))
                return 0;
            dev = bd;
        }
    }
    return 1;
}

/* The right side's rows into this GPU's memory (a CPU-finalized aggregate's one row). */
int join_cross_gpu_finalize(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    st->d = sl_op_data(sl_task_op(t));
    struct join_side *R = &st->side[1];
    for (int64_t i = 0; i < R->n_batches; i++) {
        sl_batch_t *dev = NULL;
        if (R->batches[i]->n_rows == 0 || sl_batch_device(R->batches[i]) >= 0)
            continue;
        int rc = sl_task_batch_to_device(t, R->batches[i], &dev);
        if (rc < 0)
            return rc;
        sl_batch_unref(R->batches[i]);
        R->batches[i] = dev;
    }
    st->n_work = join_side_rows(R) ? st->side[0].n_batches : 0;
    st->gpu = 1;
    st->cross_gpu = 1;
    return SL_OK;
}

int64_t join_cross_gpu_source_tasks(sl_task_t *t)
{
    return ((struct join_state *)sl_task_gstate(t))->n_work;
}

/* Column c of rb's row r repeated n times into dst. */
static int broadcast_col(sl_task_t *t, struct sl__col *dst, const sl_batch_t *rb, int c,
                         int64_t r, int64_t n)
{
    const struct sl__col *src = &rb->cols[c];
    int w = (int)sl_type_width(src->type);
    dst->type = src->type;
    dst->offset = 0;
    dst->null_count = 0;
    if (!(dst->data = sl__device_values(t, src->type, n)))
        return SL_ENOMEM;
    if (src->dict) {
        dst->dict = src->dict;
        sl__dict_ref(dst->dict);
    }
    cudaStream_t s = sl_task_stream(t);
    SL_TASK_CUDA_TRY(t,
                     sl_k_broadcast_width((const char *)sl__col_values(rb, c) + (size_t)r * w,
                                          dst->data->ptr, w, n, s),
                     "cross join: broadcast");
    if (!src->validity || src->null_count == 0)
        return SL_OK;
    int64_t words = (n + 31) / 32;
    if (!(dst->validity = sl__device_words(t, words)))
        return SL_ENOMEM;
    dst->null_count = -1;
    SL_TASK_CUDA_TRY(t,
                     sl_k_broadcast_validity(src->validity->ptr, src->offset + r,
                                             dst->validity->ptr, words, s),
                     "cross join: broadcast validity");
    return SL_OK;
}

/* Left batch w once per right row; on a CPU worker (a pipeline the placement kept on
 * the host) the CPU's path over downloaded copies. */
int join_cross_gpu_source(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    const struct join_data *d = st->d;
    sl_batch_t *lb = st->side[0].batches[sl_task_index(t)];
    int64_t n = lb->n_rows;
    const struct join_side *R = &st->side[1];
    if (sl_task_device_kind(t) != SL_DEVICE_CUDA)
        return join_cross_host(t, lb, R);
    int rc = SL_OK;
    for (int64_t bi = 0; bi < R->n_batches && rc == SL_OK && n > 0; bi++) {
        sl_batch_t *rb = R->batches[bi];
        for (int64_t r = 0; r < rb->n_rows && rc == SL_OK; r++) {
            sl_batch_t *out = sl__batch_new(sl_op_output_schema(sl_task_op(t)), n);
            if (!out)
                return sl_task_fail(t, SL_ENOMEM, "cross join: out of memory");
            for (int oc = 0; oc < d->n_out && rc == SL_OK; oc++) {
                const struct join_ocol *c = &d->out[oc];
                if (c->side == 0)
                    sl__col_share(out, oc, lb, c->col);
                else
                    rc = broadcast_col(t, &out->cols[oc], rb, c->col, r, n);
            }
            if (rc == SL_OK)
                rc = sl_task_emit(t, out);
            else
                sl_batch_unref(out);
        }
    }
    return rc;
}
