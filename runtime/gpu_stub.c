/* Without CUDA there is no GPU worker: these stand in for gpu_worker.c. The engine
 * never places tasks on a GPU then, so the task functions are never reached. */
#include "gpu_int.h"

int sl__gpu_create(struct sl__gpu **out, sl_engine_t *eng, int ordinal, int64_t mem_limit,
                   int depth)
{
    (void)eng, (void)ordinal, (void)mem_limit, (void)depth;
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

int sl__gpu_measure(struct sl__gpu *g, double *h2d_gbps, double *d2h_gbps)
{
    (void)g;
    *h2d_gbps = *d2h_gbps = 0;
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
