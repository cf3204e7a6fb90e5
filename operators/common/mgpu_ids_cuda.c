/* Row ids to and from the multi-device join and sort (mgpu_ids.h). */
#include <string.h>

#include "common/mgpu_ids.h"
#include "sluice_k/columns.h"

void sl__mg_pick_devices(sl_task_t *t, int64_t bytes, int64_t self_bytes,
                         struct sl__mg_shape *sh, struct sl__mg_pick *pick)
{
    int64_t room[SL__MG_MAX_DEV], mode = SL__MG_AUTO, packets = 0, chunk = 0, copies = 0;
    int self;
    sl_task_option_int(t, "multi_gpu", &mode);
    sl_task_option_int(t, "debug_mgpu_packets", &packets);
    sl_task_option_int(t, "debug_mgpu_chunk_rows", &chunk);
    sl_task_option_int(t, "debug_mgpu_copies", &copies);
    pick->opts = (struct sl__mg_opts){.packets = packets != 0, .chunk_rows = chunk,
                                      .copies = copies != 0};
    sh->mode = (int)mode;
    sh->n_devices = sl__task_n_devices(t);
    int n = sl__task_device_rooms(t, room, SL__MG_MAX_DEV, &self);
    if (self >= 0)
        room[self] -= self_bytes;
    pick->k = sl__mg_fit_devices(room, n, self, bytes, SL__MG_DEV_FIXED, pick->use);
    pick->self = self;
    sh->n_fit = pick->k;
}

int sl__mg_pick_self(sl_task_t *t, struct sl__mg_pick *pick)
{
    if (pick->self < 0 || pick->k < 2)
        return SL_EBUDGET;
    sl_task_profile_value(t, "multi_device_fallback", SL__MG_BUDGET);
    pick->k = 1;
    pick->use[0] = pick->self;
    return SL_OK;
}

int sl__mg_open_picked(sl_task_t *t, const struct sl__mg_pick *pick, struct sl__mdev *m,
                       int *self)
{
    if (pick->k < sl__task_n_devices(t)) /* over fewer devices: the budgets are why */
        sl_task_profile_value(t, "multi_device_fallback", SL__MG_BUDGET);
    return sl__task_mdev_open(t, pick->use, pick->k, m, self);
}

/* Device d's share: keys widened by a strided copy (the copy engine, no kernel; 8-byte
 * keys by a plain copy), row ids written as 64-bit values (a 2-D copy of 4-byte rows
 * would move them at a small fraction of the device's bandwidth). */
static int spread_share(struct sl__mdev *m, int d, struct sl__mg_scratch *sc, const char *keys,
                        int w, int64_t n, uint32_t first, int64_t **dk, uint64_t **dv)
{
    cudaStream_t st = m->stream[d];
    int rc;
    if ((rc = sl__mdev_use(m, d)) < 0 ||
        (rc = sl__mg_scratch_alloc(m, d, sc, n * 8, (void **)dk)) < 0 ||
        (rc = sl__mg_scratch_alloc(m, d, sc, n * 8, (void **)dv)) < 0 || n == 0)
        return rc;
    if (w == 8)
        MG_CUDA(rc, cudaMemcpyAsync(*dk, keys, (size_t)n * 8, cudaMemcpyDefault, st));
    else
        MG_CUDA(rc, cudaMemsetAsync(*dk, 0, (size_t)n * 8, st));
    if (rc == SL_OK && w != 8)
        MG_CUDA(rc, cudaMemcpy2DAsync(*dk, 8, keys, (size_t)w, (size_t)w, (size_t)n,
                                      cudaMemcpyDefault, st));
    if (rc == SL_OK)
        MG_CUDA(rc, sl_k_iota_u64(*dv, n, first, st));
    return rc;
}

int sl__mg_spread_keys(struct sl__mdev *m, struct sl__mg_scratch *sc, const void *d_keys,
                       int key_width, int64_t n, uint32_t id_base, struct sl__mg_table *t)
{
    memset(t, 0, sizeof *t);
    int rc = SL_OK;
    for (int d = 0; d < m->n && rc == SL_OK; d++) {
        int64_t lo = n * d / m->n, hi = n * (d + 1) / m->n;
        int64_t *dk;
        uint64_t *dv;
        rc = spread_share(m, d, &sc[d], (const char *)d_keys + lo * key_width, key_width,
                          hi - lo, id_base + (uint32_t)lo, &dk, &dv);
        t->n[d] = hi - lo;
        t->keys[d] = dk;
        t->vals[d] = dv;
    }
    return rc;
}

/* Device d's ids: their low words (little-endian: the first 4 bytes of each 8) into a
 * contiguous block on d by a kernel, then one plain copy to the task's GPU. */
static int collect_one(struct sl__mdev *m, int d, const uint64_t *v, int64_t n, uint32_t *dst)
{
    cudaStream_t st = m->stream[d];
    uint32_t *low;
    int rc = sl__mdev_alloc(m, d, n * 4, (void **)&low);
    if (rc < 0)
        return rc;
    MG_CUDA(rc, sl_k_strided_b32((const uint32_t *)v, 2, low, n, st));
    if (rc == SL_OK)
        MG_CUDA(rc, cudaMemcpyAsync(dst, low, (size_t)n * 4, cudaMemcpyDefault, st));
    sl__mdev_free(m, d, low, n * 4); /* ordered after the copy on d's stream */
    return rc;
}

int sl__mg_collect_ids(struct sl__mdev *m, const struct sl__mg_result *out, int r,
                       uint32_t *d_ids)
{
    int rc = SL_OK;
    int64_t at = 0;
    for (int d = 0; d < m->n && rc == SL_OK; d++) {
        const uint64_t *v = r ? out->r_vals[d] : out->s_vals[d];
        if (out->n[d] > 0 && (rc = sl__mdev_use(m, d)) == SL_OK)
            rc = collect_one(m, d, v, out->n[d], d_ids + at);
        at += out->n[d];
    }
    int sr = sl__mg_sync_all(m);
    return rc < 0 ? rc : sr;
}

int sl__mg_close(struct sl__mdev *m, struct sl__mg_scratch *sc, struct sl__mg_result *res,
                 int self, int rc)
{
    sl__mg_result_free(m, res);
    for (int d = 0; d < m->n; d++)
        if (sl__mdev_use(m, d) == SL_OK)
            sl__mg_scratch_free(m, d, &sc[d]);
    (void)sl__mg_sync_all(m);
    int rs = self >= 0 ? sl__mdev_use(m, self) : SL_OK; /* the worker's GPU again */
    sl__mdev_close(m);
    return rc < 0 ? rc : rs;
}

void sl__mg_profile(sl_task_t *t, int n_devices, const struct sl__mg_result *out)
{
    sl_task_profile_value(t, "multi_device", n_devices);
    sl_task_profile_value(t, "xchg_bytes", (int64_t)out->xchg.bytes);
    sl_task_profile_value(t, "xchg_packets", (int64_t)out->xchg.packets);
    sl_task_profile_value(t, "xchg_us", (int64_t)(out->xchg.seconds * 1e6));
    sl_task_profile_value(t, "xchg_est_bytes", out->cost.total_bytes);
    sl_task_profile_value(t, "xchg_est_us", (int64_t)(out->cost.seconds * 1e6));
}
