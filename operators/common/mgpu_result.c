/* Results of the multi-device join and sort (mgpu.h). */
#include "common/mgpu.h"

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
