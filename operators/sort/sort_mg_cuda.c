/* The sort operator over several devices (docs/MULTI_GPU.md; issue 20). When the engine
 * has several GPU devices (gpus=N, split_gpu=true for logical ones) and the sort's shape
 * allows it (mgpu_choice.h: one ASC key, a signed 8-byte integer, no DICT column), the
 * CUDA finalize
 * spreads (key, row id) over every device, sorts them with sl__mg_sort (local sorts,
 * splitters, one exchange, local re-sorts: stable, device 0 first), collects the sorted
 * row ids on the task's GPU and gathers every column by them into the output batch. The
 * result is the one-device sort's, row for row. Other shapes keep the one-device path;
 * the profile value multi_device_fallback says why (enum sl__mg_why). */
#include <cuda_runtime_api.h>

#include "common/mgpu_choice.h"
#include "common/mgpu_ids.h"
#include "common/rows_cuda.h"
#include "sort_op.h"

int sl__sort_mg_choice(sl_task_t *t, struct sl__mg_pick *pick)
{
    struct sort_global *g = sl_task_gstate(t);
    const struct sort_data *d = sl_op_data(sl_task_op(t));
    int64_t n = sl__rows_gpu_rows(&g->m.rows, d->n_cols);
    int64_t self_bytes = SL__MG_SORT_SELF_ROW_BYTES * (n < 0 ? 0 : n);
    struct sl__mg_shape s;
    sl__sort_mg_shape(sl_task_op(t), &s);
    s.n_devices = sl__task_n_devices(t);
    s.in_gpu = n >= 0 && self_bytes + SL__MG_DEV_FIXED <= sl_task_device_budget(t);
    s.rows[0] = n < 0 ? 0 : n;
    sl__mg_pick_devices(t, SL__MG_SORT_ROW_BYTES * s.rows[0], self_bytes, &s, pick);
    return sl__mg_sort_choice(&s);
}

struct mg_sort {
    struct sort_global *g;
    const struct sort_data *d;
    struct sl__mg_pick *pick;
};

/* The sorted row ids of the key column over the picked devices into ids (n rows). */
static int sort_on(sl_task_t *t, const struct sl__mg_pick *pick, const void *keys, int64_t n,
                   uint32_t *ids)
{
    struct sl__mdev m;
    struct sl__mg_scratch sc[SL__MG_MAX_DEV] = {0};
    struct sl__mg_table tab;
    struct sl__mg_result res = {0};
    int self, rc = sl__mg_open_picked(t, pick, &m, &self);
    if (rc < 0)
        return rc;
    rc = self < 0 ? sl__set_last_error(SL_EINTERNAL, "the task's GPU is not a device") : SL_OK;
    if (rc == SL_OK)
        rc = sl__mg_spread_keys(&m, sc, keys, 8, n, 0, &tab);
    if (rc == SL_OK)
        rc = sl__mg_sync_all(&m);
    if (rc == SL_OK)
        rc = sl__mg_sort(&m, &tab, &pick->opts, &res);
    if (rc == SL_OK)
        rc = sl__mg_collect_ids(&m, &res, 0, ids);
    if (rc == SL_OK)
        sl__mg_profile(t, m.n, &res);
    return sl__mg_close(&m, sc, &res, self, rc);
}

/* Sorts on every device and gathers the columns by the sorted ids (a sl__gpu_body_fn). */
static int run_mg(struct sl__gpu_work *w, void *arg)
{
    struct mg_sort *ms = arg;
    sl_task_t *t = w->t;
    struct sort_global *g = ms->g;
    const struct sort_data *d = ms->d;
    int64_t n = g->m.n;
    int kc = d->spec.keys[0].col;
    const void *cols[64]; /* sort_cuda.c's SG_MAX_COLS: its can_run says so */
    sl__gpu_work_mark(w, 0);
    int rc = sl__gpu_work_columns(w, &g->m.rows, d->n_cols, n, cols);
    if (rc < 0)
        return rc;
    uint32_t *ids = sl__gpu_work_alloc(w, (size_t)n * 4);
    g->m.out = sl_task_new_batch(t, sl_op_output_schema(sl_task_op(t)), n);
    if (!ids || !g->m.out)
        return sl_task_fail(t, SL_ENOMEM, "sort over several devices: out of memory for %lld "
                                          "rows", (long long)n);
    SL_TASK_CUDA_TRY(t, cudaStreamSynchronize(sl_task_stream(t)), "waiting for the input");
    sl__gpu_work_mark(w, 1);
    rc = sort_on(t, ms->pick, cols[kc], n, ids);
    if (rc == SL_EBUDGET && sl__mg_pick_self(t, ms->pick) == SL_OK) /* nothing moved yet */
        rc = sort_on(t, ms->pick, cols[kc], n, ids);
    if (rc < 0)
        return sl_task_fail(t, rc, "sort over several devices: %s", sl_last_errmsg());
    sl__gpu_work_mark(w, 2);
    if ((rc = sl__gpu_gather_columns(t, cols, d->n_cols, -1, ids, g->m.out, n)) < 0)
        return rc;
    sl__gpu_work_mark(w, 3);
    return SL_OK;
}

int sl__sort_mg_finalize(sl_task_t *t, struct sl__mg_pick *pick)
{
    struct mg_sort ms = {sl_task_gstate(t), sl_op_data(sl_task_op(t)), pick};
    static const char *const names[3] = {"gpu_concat", "mg_sort", "gpu_gather"};
    return sl__mat_gpu_run(t, &ms.g->m, run_mg, &ms, names, 3, "sort over several devices");
}
