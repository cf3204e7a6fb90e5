/* Without CUDA there is no GPU worker: these stand in for gpu_worker.c. The engine
 * never places tasks on a GPU then, so the task functions are never reached. */
#include <string.h>

#include "gpu_ext.h"
#include "gpu_int.h"

int sl__gpu_create(struct sl__gpu **out, sl_engine_t *eng, int ordinal, int64_t mem_limit,
                   int share, int depth)
{
    (void)eng, (void)ordinal, (void)mem_limit, (void)share, (void)depth;
    *out = NULL;
    return sl__set_last_error(SL_ENODEV, "sluice was built without CUDA");
}

void sl__gpu_destroy(struct sl__gpu *g)
{
    (void)g;
}

int sl__gpu_worker_init(struct sl__worker *w, void *user)
{
    (void)w, (void)user;
    return SL_ENODEV;
}

void sl__gpu_worker_fini(struct sl__worker *w, void *user)
{
    (void)w, (void)user;
}

int sl__gpu_worker_poll(struct sl__worker *w, bool block)
{
    (void)w, (void)block;
    return 0;
}

int sl__gpu_task_begin(sl_task_t *t)
{
    return sl__query_fail(t->q, "", SL_ENODEV, "no GPU support in this build");
}

void sl__gpu_task_end(sl_task_t *t)
{
    (void)t;
}

int sl__gpu_batch_to_device(sl_task_t *t, sl_batch_t *b, sl_batch_t **out)
{
    (void)b;
    *out = NULL;
    return sl__query_fail(t->q, "", SL_ENODEV, "no GPU support in this build");
}

int sl__gpu_defer_to_host(sl_task_t *t, sl_batch_t *b, sl_task_t *next,
                          const struct sl_phase *ph)
{
    (void)b, (void)next, (void)ph;
    return sl__query_fail(t->q, "", SL_ENODEV, "no GPU support in this build");
}

sl_batch_t *sl__gpu_batch_new(sl_task_t *t, const sl_schema_t *s, int64_t rows)
{
    (void)s, (void)rows;
    sl__query_fail(t->q, "", SL_ENODEV, "no GPU support in this build");
    return NULL;
}

/* Every task is a CPU task here: its new batches are host batches. */
sl_batch_t *sl__task_new_host_batch(sl_task_t *t, const sl_schema_t *schema, int64_t rows)
{
    return sl_task_new_batch(t, schema, rows);
}

int sl__gpu_run_sync(struct sl__gpu *g, sl_task_t *t, const struct sl_impl *im)
{
    (void)g, (void)im;
    return sl__query_fail(t->q, "", SL_ENODEV, "no GPU support in this build");
}

int sl__host_register(void *ptr, int64_t bytes)
{
    (void)ptr, (void)bytes;
    return sl__set_last_error(SL_EUNSUPPORTED, "sluice was built without CUDA: nothing to pin "
                              "for");
}

void sl__host_unregister(void *ptr)
{
    (void)ptr;
}

int64_t sl__gpu_clock_skew(struct sl__gpu *g)
{
    (void)g;
    return 0;
}

int sl__gpu_measure(struct sl__gpu *g, double *h2d_gbps, double *d2h_gbps)
{
    (void)g;
    *h2d_gbps = *d2h_gbps = 0;
    return SL_ENODEV;
}

int sl__gpu_measure_copy(struct sl__gpu *g, int64_t bytes, double *gbps)
{
    (void)g, (void)bytes;
    *gbps = 0;
    return SL_ENODEV;
}

int sl__gpu_fp32_peak(struct sl__gpu *g, double *gflops)
{
    (void)g;
    *gflops = 0;
    return SL_ENODEV;
}

int sl__gpu_stream_wait(sl_task_t *t)
{
    (void)t;
    return SL_OK;
}

void sl__query_drop_replicas(struct sl_query *q)
{
    (void)q;
}

void sl__gpu_mem_reset_peak(struct sl__gpu *g)
{
    (void)g;
}

void sl__gpu_mem(struct sl__gpu *g, int64_t *in_use, int64_t *peak, int64_t *limit)
{
    (void)g;
    *in_use = *peak = *limit = 0;
}

bool sl__batch_on_device(const sl_batch_t *b)
{
    (void)b;
    return false;
}

int sl__gpu_dalloc(sl_task_t *t, int64_t bytes, void **out, int *held)
{
    (void)bytes;
    *held = 0;
    *out = NULL;
    return sl__query_fail(t->q, "", SL_ENODEV, "no GPU support in this build");
}

void sl__gpu_dfree(struct sl__gpu *g, void *d_ptr, int64_t bytes, int held, void *stream)
{
    (void)g, (void)d_ptr, (void)bytes, (void)held, (void)stream;
}

int64_t sl__gpu_budget_left(struct sl__gpu *g)
{
    (void)g;
    return 0;
}

int sl__gpu_ordinal(const struct sl__gpu *g)
{
    (void)g;
    return -1;
}

int sl__gpu_batch_download(sl_task_t *t, sl_batch_t *b, sl_batch_t **out)
{
    (void)b;
    *out = NULL;
    return sl__query_fail(t->q, "", SL_ENODEV, "no GPU support in this build");
}

int sl__gpu_batch_upload_sync(sl_task_t *t, sl_batch_t *b, sl_batch_t **out)
{
    return sl__gpu_batch_download(t, b, out);
}

int sl__gpu_table_to_device(struct sl__gpu *g, sl_table_t *t, sl_table_t **out)
{
    (void)g, (void)t;
    *out = NULL;
    return sl__set_last_error(SL_ENODEV, "sluice was built without CUDA");
}

/* Without CUDA every batch is in host memory: the copy shares them all. */
int sl_table_to_host(sl_table_t *t, sl_table_t **out)
{
    SL__CHECK_ARGS(out);
    *out = NULL;
    if (!t)
        return sl__set_last_error(SL_EINVAL, "sl_table_to_host: no table");
    sl_table_t *ht = NULL;
    int rc = sl_table_create(&ht);
    for (int64_t i = 0; rc >= 0 && i < t->n_batches; i++)
        rc = sl_table_append(ht, t->batches[i]);
    if (rc < 0) {
        sl_table_unref(ht);
        return rc;
    }
    *out = ht;
    return SL_OK;
}

int sl__mdev_open(sl_engine_t *eng, struct sl__mdev *m)
{
    (void)eng;
    memset(m, 0, sizeof *m);
    return sl__set_last_error(SL_ENODEV, "multi-device: sluice was built without CUDA (no GPU)");
}

void sl__mdev_close(struct sl__mdev *m)
{
    (void)m;
}

int sl__table_combine_runs(sl_table_t *t, int64_t small_rows, int64_t max_rows)
{
    (void)t, (void)small_rows, (void)max_rows;
    return SL_OK;
}
