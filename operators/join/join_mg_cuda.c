/* The join operator over several devices (docs/MULTI_GPU.md; issue 20). When the engine
 * has several GPU devices (gpus=N, split_gpu=true for logical ones) and the join's shape
 * allows it (mgpu_choice.h: inner, semi, anti or left without residual, one integer key
 * of 1 to 8 bytes of one type on both sides, output columns of 1 to 8 bytes, rows not
 * aggregated), the CUDA finalize spreads (key, row id) of both sides over every device
 * and joins them with sl__mg_hash_join (MG-Join: partition, one exchange balanced by
 * size, a local join per device) or, with algo=sortmerge, sl__mg_sort_merge_join (both
 * sides sorted over the devices with one set of splitters, a merge join per device's
 * key range; left joins included); the matched row ids come back to the task's GPU,
 * where every output column is gathered by them. The right input builds, the left
 * probes, as on one device.
 *
 * Row ids start at 1 and every gathered column has a zero row in front: a left join's
 * row without partner has build id 0 (sl__mg_hash_join writes payload 0 there), so its
 * right columns read 0 (as the CPU's do) and their validity bit, gathered from a bitmap
 * whose bit 0 alone is clear, says NULL. Other shapes keep the one-device path; the
 * profile value multi_device_fallback says why (enum sl__mg_why). */
#include <string.h>

#include "common/mgpu_choice.h"
#include "common/mgpu_ids.h"
#include "common/rows_cuda.h"
#include "join_cuda_int.h"
#include "sluice_k/columns.h"
#include "sluice_k/expr.h"
#include "sluice_k/join_types.h"

/* The key's type of side s when every batch agrees, else SL_TYPE_INVALID. */
static enum sl_type key_type(const struct join_state *st, const struct join_data *d, int s)
{
    enum sl_type kt = SL_TYPE_INVALID;
    for (int64_t i = 0; i < st->side[s].n_batches; i++) {
        enum sl_type bt = st->side[s].batches[i]->cols[d->key[s][0]].type;
        if (i > 0 && bt != kt)
            return SL_TYPE_INVALID;
        kt = bt;
    }
    return kt;
}

int join_mg_choice(sl_task_t *t, struct sl__mg_pick *pick)
{
    const struct join_data *d = sl_op_data(sl_task_op(t));
    const struct join_state *st = sl_task_gstate(t);
    enum sl_type k0 = key_type(st, d, 0), k1 = key_type(st, d, 1);
    int on_device = 1;
    for (int s = 0; s < 2; s++)
        for (int64_t i = 0; i < st->side[s].n_batches; i++)
            on_device &= sl_batch_device(st->side[s].batches[i]) >= 0 ||
                         st->side[s].batches[i]->n_rows == 0;
    int64_t n0 = st->side[0].n_rows, n1 = st->side[1].n_rows,
            self_bytes = SL__MG_JOIN_SELF_ROW_BYTES * (n0 + n1);
    struct sl__mg_shape sh;
    join_mg_shape(d, &sh);
    sh.n_devices = sl__task_n_devices(t);
    /* the batches' key types (an empty side has none: its bind type stands) */
    if (n0 && n1 && k0 != k1)
        sh.key_width = 0;
    sh.in_gpu = on_device && self_bytes + SL__MG_DEV_FIXED <= sl_task_device_budget(t);
    sh.rows[0] = n0;
    sh.rows[1] = n1;
    sl__mg_pick_devices(t, SL__MG_JOIN_ROW_BYTES * (n0 + n1), self_bytes, &sh, pick);
    return sl__mg_join_choice(&sh);
}

/* What the finalize allocates on the task's GPU (freed together). */
struct mg_join {
    void *key[2];                       /* each side's keys, contiguous */
    void *col[2 * JOIN_MAX_COLS];       /* each output column: a zero row, then its rows */
    uint32_t *ids[2];                   /* output row -> that side's row id (+ 1) */
    void *bits;                         /* left join: bit 0 clear, then nr set bits */
};

/* Rows of column c of side s, batch after batch, to dst + at rows (on the task's stream). */
static int concat(sl_task_t *t, const struct join_side *sd, int c, int w, char *dst)
{
    int64_t at = 0;
    for (int64_t i = 0; i < sd->n_batches; i++) {
        sl_batch_t *b = sd->batches[i];
        if (b->n_rows > 0)
            SL_TASK_CUDA_TRY(t, cudaMemcpyAsync(dst + at * w, sl__col_values(b, c),
                                                (size_t)(b->n_rows * w), cudaMemcpyDeviceToDevice,
                                                sl_task_stream(t)),
                             "gathering a join input");
        at += b->n_rows;
    }
    return SL_OK;
}

static int gather_inputs(sl_task_t *t, const struct join_state *st, struct mg_join *mj)
{
    const struct join_data *d = st->d;
    for (int s = 0; s < 2; s++) {
        int w = (int)sl_type_width(s ? d->rktype[0] : d->ktype[0]);
        const struct join_side *sd = &st->side[s];
        if (!(mj->key[s] = sl_task_device_alloc(t, (size_t)(sd->n_rows + 1) * w)))
            return SL_ENOMEM;
        int rc = concat(t, sd, d->key[s][0], w, mj->key[s]);
        if (rc < 0)
            return rc;
    }
    for (int oc = 0; oc < d->n_out; oc++) {
        const struct join_side *sd = &st->side[d->out[oc].side];
        int w = (int)sl_type_width(d->out[oc].type);
        char *p = mj->col[oc] = sl_task_device_alloc(t, (size_t)(sd->n_rows + 1) * w);
        if (!p)
            return SL_ENOMEM;
        SL_TASK_CUDA_TRY(t, cudaMemsetAsync(p, 0, (size_t)w, sl_task_stream(t)), "a zero row");
        int rc = concat(t, sd, d->out[oc].col, w, p + w);
        if (rc < 0)
            return rc;
    }
    return SL_OK;
}

/* The join over the picked devices; the matched ids of each side into mj->ids (n_out
 * rows). Leaves the query alone on failure: the caller fails it, or tries again. */
static int join_on(sl_task_t *t, const struct join_state *st, struct mg_join *mj,
                   const struct sl__mg_pick *pick, int64_t *n_out)
{
    static const int kinds[] = {[JOIN_INNER] = SL_K_JOIN_INNER, [JOIN_LEFT] = SL_K_JOIN_LEFT,
                                [JOIN_SEMI] = SL_K_JOIN_SEMI, [JOIN_ANTI] = SL_K_JOIN_ANTI};
    const struct join_data *d = st->d;
    int kind = kinds[d->kind], self, rc;
    struct sl__mdev m;
    struct sl__mg_scratch sc[SL__MG_MAX_DEV] = {0};
    struct sl__mg_table tab[2];
    struct sl__mg_result res = {0};
    *n_out = 0;
    if ((rc = sl__mg_open_picked(t, pick, &m, &self)) < 0)
        return rc;
    rc = self < 0 ? sl__set_last_error(SL_EINTERNAL, "the task's GPU is not a device") : SL_OK;
    for (int s = 0; s < 2 && rc == SL_OK; s++)
        rc = sl__mg_spread_keys(&m, sc, mj->key[s], (int)sl_type_width(d->ktype[0]),
                                st->side[s].n_rows, 1, &tab[s]);
    if (rc == SL_OK)
        rc = sl__mg_sync_all(&m);
    /* R = the right input (builds), S = the left (probes); algo=sortmerge: the
     * multi-device sort-merge join */
    int smj = d->algo == JOIN_SORTMERGE;
    if (rc == SL_OK)
        rc = smj ? sl__mg_sort_merge_join(&m, &tab[1], &tab[0], kind, &pick->opts, &res)
                 : sl__mg_hash_join(&m, &tab[1], &tab[0], kind, &pick->opts, &res);
    for (int dv = 0; dv < m.n && rc == SL_OK; dv++)
        *n_out += res.n[dv];
    for (int s = 0; s < 2 && rc == SL_OK; s++) {
        if (s == 1 && (kind == SL_K_JOIN_SEMI || kind == SL_K_JOIN_ANTI))
            break; /* no right columns */
        if (self >= 0 && (rc = sl__mdev_use(&m, self)) == SL_OK &&
            !(mj->ids[s] = sl_task_device_alloc(t, (size_t)(*n_out + 1) * 4)))
            rc = sl__set_last_error(SL_ENOMEM, "no memory for %lld row ids", (long long)*n_out);
        if (rc == SL_OK && cudaStreamSynchronize(sl_task_stream(t)) != cudaSuccess)
            rc = sl__set_last_error(SL_EDEVICE, "waiting for the task's stream");
        if (rc == SL_OK)
            rc = sl__mg_collect_ids(&m, &res, s == 1, mj->ids[s]);
    }
    if (rc == SL_OK) {
        sl__mg_profile(t, m.n, &res);
        sl_task_profile_value(t, "gpu_algo", smj ? 2 : 0); /* as join_cuda.c's: SMJ, PHJ */
    }
    return sl__mg_close(&m, sc, &res, self, rc);
}

/* The join over the picked devices, or over the task's device alone when the devices'
 * budgets cannot hold what the plan would send them (found before anything moved). */
static int join_devices(sl_task_t *t, const struct join_state *st, struct mg_join *mj,
                        struct sl__mg_pick *pick, int64_t *n_out)
{
    SL_TASK_CUDA_TRY(t, cudaStreamSynchronize(sl_task_stream(t)), "waiting for the inputs");
    int rc = join_on(t, st, mj, pick, n_out);
    if (rc == SL_EBUDGET && sl__mg_pick_self(t, pick) == SL_OK) {
        for (int s = 0; s < 2; s++) { /* ids of the failed try, if it got that far */
            sl_task_device_free(t, mj->ids[s]);
            mj->ids[s] = NULL;
        }
        rc = join_on(t, st, mj, pick, n_out);
    }
    return rc < 0 ? sl_task_fail(t, rc, "join over several devices: %s", sl_last_errmsg()) : rc;
}

/* Left join: the right columns' validity, gathered by the right ids from mj->bits. */
static int left_validity(sl_task_t *t, const struct join_data *d, struct mg_join *mj,
                         sl_batch_t *out, int64_t nr, int64_t n)
{
    cudaStream_t s = sl_task_stream(t);
    size_t bytes = (size_t)(nr + 8) / 8;
    if (!(mj->bits = sl_task_device_alloc(t, bytes)))
        return SL_ENOMEM;
    SL_TASK_CUDA_TRY(t, cudaMemsetAsync(mj->bits, 0xff, bytes, s), "validity");
    SL_TASK_CUDA_TRY(t, cudaMemsetAsync(mj->bits, 0xfe, 1, s), "validity");
    struct sl__buf *v = sl__device_words(t, (n + 31) / 32 + 1);
    if (!v)
        return SL_ENOMEM;
    int e = SL_TASK_CUDA_CALL(sl_k_expr_gather_valid(mj->bits, 0, mj->ids[1], v->ptr, n, s));
    for (int oc = 0; e == 0 && oc < d->n_out; oc++) {
        if (d->out[oc].side != 1)
            continue;
        sl__buf_ref(v);
        out->cols[oc].validity = v;
        out->cols[oc].null_count = -1;
    }
    sl__buf_unref(v);
    return e == 0 ? SL_OK : SL_TASK_CUDA_FAIL(t, e, "validity");
}

static int run(sl_task_t *t, struct join_state *st, struct mg_join *mj,
               struct sl__mg_pick *pick)
{
    const struct join_data *d = st->d;
    int64_t n;
    int rc = gather_inputs(t, st, mj);
    if (rc >= 0)
        rc = join_devices(t, st, mj, pick, &n);
    if (rc < 0)
        return rc;
    sl_batch_t *out = sl_task_new_batch(t, sl_op_output_schema(sl_task_op(t)), n);
    if (!out)
        return SL_ENOMEM;
    for (int oc = 0; oc < d->n_out && rc >= 0; oc++) {
        int e = SL_TASK_CUDA_CALL(sl_k_gather_width(mj->col[oc], mj->ids[d->out[oc].side],
                                                    sl__col_values(out, oc),
                                                    (int)sl_type_width(d->out[oc].type), n,
                                                    sl_task_stream(t)));
        if (e != 0)
            rc = SL_TASK_CUDA_FAIL(t, e, "gathering the output");
    }
    if (rc >= 0 && d->kind == JOIN_LEFT)
        rc = left_validity(t, d, mj, out, st->side[1].n_rows, n);
    if (rc >= 0 && !(st->gpu_out = sl_task_batch_slice(t, out, 0, n)))
        rc = SL_ENOMEM;
    sl_batch_unref(out);
    return rc;
}

int join_mg_finalize(sl_task_t *t, struct sl__mg_pick *pick)
{
    struct join_state *st = sl_task_gstate(t);
    struct mg_join mj = {0};
    int rc = run(t, st, &mj, pick);
    for (int s = 0; s < 2; s++) {
        sl_task_device_free(t, mj.key[s]);
        sl_task_device_free(t, mj.ids[s]);
    }
    for (int oc = 0; oc < 2 * JOIN_MAX_COLS; oc++)
        sl_task_device_free(t, mj.col[oc]);
    sl_task_device_free(t, mj.bits);
    if (rc >= 0 && cudaStreamSynchronize(sl_task_stream(t)) != cudaSuccess)
        rc = sl_task_fail(t, SL_EDEVICE, "join over several devices: waiting for the output");
    return rc == SL_ENOMEM ? sl_task_fail(t, rc, "join over several devices: out of memory")
                           : rc;
}
