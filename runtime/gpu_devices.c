/* The engine's devices for multi-device operations (gpu_ext.h, sl__mdev): a stream per
 * device and the device exchange over the engine's GPUs, logical devices included. */
#include <string.h>

#include "exchange_dev.h"
#include "exec_int.h"
#include "gpu_ext.h"
#include "gpu_worker_int.h"

int sl__mdev_open(sl_engine_t *eng, struct sl__mdev *m)
{
    int all[SL__MDEV_MAX];
    for (int d = 0; d < SL__MDEV_MAX; d++)
        all[d] = d;
    return sl__mdev_open_some(eng, all, eng->n_gpus, m);
}

int sl__mdev_open_some(sl_engine_t *eng, const int *use, int k, struct sl__mdev *m)
{
    memset(m, 0, sizeof *m);
    if (eng->n_gpus < 1 || k < 1)
        return sl__set_last_error(SL_ENODEV, "multi-device: the engine uses no GPU");
    if (k > SL__MDEV_MAX)
        return sl__set_last_error(SL_EINVAL, "multi-device: %d GPUs, at most %d", k,
                                  SL__MDEV_MAX);
    for (int d = 0; d < k; d++)
        if (use[d] < 0 || use[d] >= eng->n_gpus)
            return sl__set_last_error(SL_EINVAL, "multi-device: no device %d of %d", use[d],
                                      eng->n_gpus);
    struct sl__dpool *pools[SL__MDEV_MAX];
    int rc = SL_OK;
    m->n = k;
    for (int d = 0; d < m->n && rc == SL_OK; d++) {
        m->gpu[d] = eng->gpus[use[d]];
        m->ordinal[d] = m->gpu[d]->ordinal;
        pools[d] = m->gpu[d]->pool;
        cudaStream_t s[2] = {NULL, NULL};
        rc = sl__cuda_streams_create(m->ordinal[d], 2, s);
        m->stream[d] = s[0];
        m->copy[d] = s[1];
    }
    struct sl__xchg_mover mv;
    if (rc == SL_OK && (rc = sl__xchg_cuda_mover(m->ordinal, pools, m->n, &mv)) == SL_OK &&
        (rc = sl__xchg_dev_create(&mv, m->n, &m->xchg)) < 0)
        mv.destroy(mv.ctx);
    if (rc < 0)
        sl__mdev_close(m);
    return rc;
}

void sl__mdev_close(struct sl__mdev *m)
{
    if (!m)
        return;
    sl__xchg_dev_destroy(&m->xchg);
    for (int d = 0; d < m->n; d++) {
        cudaStream_t s[2] = {m->copy[d], m->stream[d]};
        for (int i = 0; i < 2; i++) {
            if (s[i]) {
                (void)sl__cuda_stream_sync(s[i]);
                (void)sl__cuda_streams_destroy(1, &s[i]);
            }
        }
        m->stream[d] = m->copy[d] = NULL;
    }
    m->n = 0;
}

int sl__mdev_alloc(struct sl__mdev *m, int d, int64_t bytes, void **out)
{
    return sl__dpool_alloc_async(m->gpu[d]->pool, bytes, m->stream[d], out);
}

void sl__mdev_free(struct sl__mdev *m, int d, void *p, int64_t bytes)
{
    if (p)
        (void)sl__dpool_free_async(m->gpu[d]->pool, p, bytes, m->stream[d]);
}

int sl__mdev_use(const struct sl__mdev *m, int d)
{
    return sl__cuda_set_device(m->ordinal[d], NULL);
}

int sl__mdev_sync(const struct sl__mdev *m, int d)
{
    return sl__cuda_stream_sync(m->stream[d]);
}

int64_t sl__mdev_room(const struct sl__mdev *m, int d)
{
    return sl__gpu_budget_left(m->gpu[d]);
}

int sl__task_mdev_open(sl_task_t *t, const int *use, int k, struct sl__mdev *m, int *self)
{
    int rc = sl__mdev_open_some(t->q->eng, use, k, m);
    *self = -1;
    for (int d = 0; rc == SL_OK && d < m->n; d++)
        if (m->gpu[d] == t->gpu)
            *self = d;
    return rc;
}

int sl__task_n_devices(const sl_task_t *t)
{
    return t->q->eng->n_gpus;
}

int sl__task_device_rooms(const sl_task_t *t, int64_t *room, int max, int *self)
{
    const sl_engine_t *eng = t->q->eng;
    int n = eng->n_gpus < max ? eng->n_gpus : max;
    *self = -1;
    for (int d = 0; d < n; d++) {
        room[d] = sl__gpu_budget_left(eng->gpus[d]);
        if (eng->gpus[d] == t->gpu)
            *self = d;
    }
    return n;
}
