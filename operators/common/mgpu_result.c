/* Results of the multi-device join and sort (mgpu.h), and waiting for every device. */
#include "common/mgpu_scratch.h"

void sl__mg_result_free(struct sl__mdev *m, struct sl__mg_result *r)
{
    for (int d = 0; d < m->n && d < SL__MG_MAX_DEV; d++) {
        int64_t c = r->cap[d] < 2 ? 2 : r->cap[d];
        sl__mdev_free(m, d, r->keys[d], c * 8);
        sl__mdev_free(m, d, r->r_vals[d], c * 8);
        sl__mdev_free(m, d, r->s_vals[d], c * 8);
        sl__mdev_free(m, d, r->r_pos[d], c * 4);
        r->keys[d] = NULL;
        r->r_vals[d] = r->s_vals[d] = NULL;
        r->r_pos[d] = NULL;
        r->n[d] = r->cap[d] = 0;
    }
}

/* Allocates cap rows of every output column of device d (at least 2, never NULL). */
int sl__mg_result_alloc(struct sl__mdev *m, int d, int64_t cap, struct sl__mg_result *r)
{
    int64_t c = cap < 2 ? 2 : cap;
    r->cap[d] = cap;
    int rc = sl__mdev_alloc(m, d, c * 8, (void **)&r->keys[d]);
    if (rc == SL_OK)
        rc = sl__mdev_alloc(m, d, c * 8, (void **)&r->r_vals[d]);
    if (rc == SL_OK)
        rc = sl__mdev_alloc(m, d, c * 8, (void **)&r->s_vals[d]);
    if (rc == SL_OK)
        rc = sl__mdev_alloc(m, d, c * 4, (void **)&r->r_pos[d]);
    return rc;
}

int sl__mg_sync_all(struct sl__mdev *m)
{
    int rc = SL_OK;
    for (int d = 0; d < m->n; d++) {
        int r = sl__mdev_sync(m, d);
        rc = rc < 0 ? rc : r;
    }
    return rc;
}

int sl__mg_share_on_device(struct sl__mdev *m, int d, struct sl__mg_scratch *sc,
                           const struct sl__mg_table *t, const void **k, const void **v)
{
    int64_t n = t->n[d];
    cudaStream_t st = m->stream[d];
    void *dk, *dv;
    int rc;
    *k = t->keys[d];
    *v = t->vals[d];
    if (!t->on_host || n == 0)
        return SL_OK;
    if ((rc = sl__mg_scratch_alloc(m, d, sc, n * 8, &dk)) < 0 ||
        (rc = sl__mg_scratch_alloc(m, d, sc, n * 8, &dv)) < 0)
        return rc;
    MG_CUDA(rc, cudaMemcpyAsync(dk, *k, (size_t)n * 8, cudaMemcpyHostToDevice, st));
    if (rc == SL_OK)
        MG_CUDA(rc, cudaMemcpyAsync(dv, *v, (size_t)n * 8, cudaMemcpyHostToDevice, st));
    *k = dk;
    *v = dv;
    return rc;
}

int sl__mg_check_room(struct sl__mdev *m, int d, int64_t bytes)
{
    int64_t room = sl__mdev_room(m, d);
    if (bytes + SL__MG_ROOM_SLACK <= room)
        return SL_OK;
    return sl__set_last_error(SL_EBUDGET, "multi-device: device %d would need %lld MiB for "
                              "its share, %lld MiB are left under its budget", d,
                              (long long)((bytes + SL__MG_ROOM_SLACK) >> 20),
                              (long long)(room >> 20));
}
