/* Device scratch of the multi-device join and sort: blocks of one device's pool, freed
 * together. Never empty (at least 16 bytes), so kernels never see NULL for n == 0. */
#ifndef SL_OPERATORS_MGPU_SCRATCH_H
#define SL_OPERATORS_MGPU_SCRATCH_H

#include "common/mgpu.h"

#define SL__MG_SCRATCH_MAX 32
struct sl__mg_scratch {
    int n;
    void *p[SL__MG_SCRATCH_MAX];
    int64_t bytes[SL__MG_SCRATCH_MAX];
};

static inline int sl__mg_scratch_alloc(struct sl__mdev *m, int d, struct sl__mg_scratch *sc,
                                       int64_t bytes, void **out)
{
    *out = NULL;
    if (sc->n == SL__MG_SCRATCH_MAX)
        return sl__set_last_error(SL_EINTERNAL, "multi-device: scratch list full");
    bytes = bytes < 16 ? 16 : bytes;
    int rc = sl__mdev_alloc(m, d, bytes, out);
    if (rc == SL_OK) {
        sc->p[sc->n] = *out;
        sc->bytes[sc->n++] = bytes;
    }
    return rc;
}

static inline void sl__mg_scratch_free(struct sl__mdev *m, int d, struct sl__mg_scratch *sc)
{
    for (int i = 0; i < sc->n; i++)
        sl__mdev_free(m, d, sc->p[i], sc->bytes[i]);
    sc->n = 0;
}

/* Device d's share of t in device memory: *k and *v as they are, or uploaded into
 * scratch (enqueued on d's stream) when t is in host memory. */
int sl__mg_share_on_device(struct sl__mdev *m, int d, struct sl__mg_scratch *sc,
                           const struct sl__mg_table *t, const void **k, const void **v);

#endif
