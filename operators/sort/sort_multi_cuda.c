/* Multi-device sort (mgpu.h; paper-000): local sort, splitters from samples, exchange
 * by key range, local re-sort of the received runs (stable, senders in order). */
#include <stdlib.h>
#include <string.h>

#include "common/mgpu_scratch.h"
#include "sluice_k/columns.h"
#include "sluice_k/sort.h"

#define SAMPLES_PER_DEVICE 256

/* Enqueues the stable sort of (key, payload) pairs: keys_in -> keys_out. */
static int sort_pairs(struct sl__mdev *m, int d, struct sl__mg_scratch *sc, const void *kin,
                      void *kout, const void *vin, void *vout, int64_t n)
{
    size_t tb = 0;
    void *temp;
    int rc;
    if (n == 0)
        return SL_OK;
    MG_CUDA(rc, sl_k_sort_pairs(NULL, &tb, 8, 0, kin, kout, vin, vout, 8, n, m->stream[d]));
    if (rc == SL_OK)
        rc = sl__mg_scratch_alloc(m, d, sc, (int64_t)tb, &temp);
    if (rc == SL_OK)
        MG_CUDA(rc, sl_k_sort_pairs(temp, &tb, 8, 0, kin, kout, vin, vout, 8, n,
                                    m->stream[d]));
    return rc;
}

/* Device d's share sorted into *keys and *vals, and a strided sample of it in *d_samp
 * (*n_samp values, in proportion to the share's rows). Enqueued only: the host copies
 * the samples once every device is done, so the devices sort at once. */
static int sort_share(struct sl__mdev *m, int d, struct sl__mg_scratch *sc,
                      const struct sl__mg_table *t, int64_t total, int64_t **keys,
                      uint64_t **vals, void **d_samp, int64_t *n_samp)
{
    int64_t n = t->n[d];
    cudaStream_t st = m->stream[d];
    const void *k = t->keys[d], *v = t->vals[d];
    void *samp;
    int rc;
    *n_samp = 0;
    if ((rc = sl__mg_scratch_alloc(m, d, sc, n * 8, (void **)keys)) < 0 ||
        (rc = sl__mg_scratch_alloc(m, d, sc, n * 8, (void **)vals)) < 0 || n == 0)
        return rc;
    if ((rc = sl__mg_share_on_device(m, d, sc, t, &k, &v)) < 0)
        return rc;
    if ((rc = sort_pairs(m, d, sc, k, *keys, v, *vals, n)) < 0)
        return rc;
    int64_t want = (int64_t)((double)SAMPLES_PER_DEVICE * m->n * (double)n / (double)total);
    want = want < 1 ? 1 : (want > n ? n : want);
    if ((rc = sl__mg_scratch_alloc(m, d, sc, want * 8, &samp)) < 0)
        return rc;
    MG_CUDA(rc, sl_k_strided_b64((const uint64_t *)*keys, n / want, samp, want, st));
    *d_samp = samp;
    *n_samp = want;
    return rc;
}

/* Where the splitters cut device d's sorted keys: cut[0] = 0 ... cut[n_dev] = n. */
static int cut_share(struct sl__mdev *m, int d, struct sl__mg_scratch *sc, const int64_t *keys,
                     int64_t n, const int64_t *split, int64_t *cut)
{
    cudaStream_t st = m->stream[d];
    int nd = m->n, rc = SL_OK;
    void *dsplit, *dpos;
    cut[0] = 0;
    cut[nd] = n;
    if (nd == 1)
        return SL_OK;
    if (n == 0) {
        memset(cut, 0, (size_t)(nd + 1) * sizeof *cut);
        return SL_OK;
    }
    if ((rc = sl__mg_scratch_alloc(m, d, sc, (nd - 1) * 8, &dsplit)) < 0 ||
        (rc = sl__mg_scratch_alloc(m, d, sc, (nd - 1) * 8, &dpos)) < 0)
        return rc;
    MG_CUDA(rc, cudaMemcpyAsync(dsplit, split, (size_t)(nd - 1) * 8, cudaMemcpyHostToDevice,
                                st));
    if (rc == SL_OK)
        MG_CUDA(rc, sl_k_lower_bounds_i64(keys, n, dsplit, nd - 1, dpos, st));
    if (rc == SL_OK)
        MG_CUDA(rc, cudaMemcpyAsync(cut + 1, dpos, (size_t)(nd - 1) * 8,
                                    cudaMemcpyDeviceToHost, st));
    if (rc == SL_OK)
        MG_CUDA(rc, cudaStreamSynchronize(st));
    return rc;
}

/* One table's steps after the splitters: cuts, the exchange by range, and the re-sort
 * of what each device received (runs in sender order: stable overall) into out. */
static int exchange_sorted(struct sl__mdev *m, struct sl__mg_scratch *sc, const int64_t *split,
                           const struct sl__mg_table *t, int64_t *const *keys,
                           uint64_t *const *vals, const struct sl__mg_opts *op,
                           struct sl__mg_result *out)
{
    int n = m->n, rc = SL_OK;
    int64_t *rk[SL__MG_MAX_DEV] = {0}, cut[SL__MG_MAX_DEV + 1];
    uint64_t *rv[SL__MG_MAX_DEV] = {0};
    int64_t from[SL__MG_MAX_DEV * SL__MG_MAX_DEV] = {0};
    int64_t count[SL__MG_MAX_DEV * SL__MG_MAX_DEV] = {0};
    int64_t base[SL__MG_MAX_DEV * SL__MG_MAX_DEV], total[SL__MG_MAX_DEV] = {0};
    for (int d = 0; d < n && rc == SL_OK; d++) {
        if ((rc = sl__mdev_use(m, d)) == SL_OK)
            rc = cut_share(m, d, &sc[d], keys[d], t->n[d], split, cut);
        for (int e = 0; e < n && rc == SL_OK; e++) {
            from[d * n + e] = cut[e];
            count[d * n + e] = cut[e + 1] - cut[e];
        }
    }
    if (rc == SL_OK) {
        sl__mg_recv_layout(count, n, base, total);
        sl__mg_cost(count, n, 16, op->link_gbps, &out->cost);
        sl__mg_cost_text(&out->cost, n, out->explain, sizeof out->explain);
    }
    /* received (16 B a row), re-sorted (16 B) and the sort's temporaries: checked before
     * anything moves (a hot key sends all its rows to one device) */
    for (int d = 0; d < n && rc == SL_OK; d++)
        rc = sl__mg_check_room(m, d, 48 * total[d]);
    struct sl__mg_move mv = {.n_cols = 2, .width = {8, 8}, .from = from, .count = count,
                             .base = base, .copies = op->copies};
    for (int d = 0; d < n && rc == SL_OK; d++) {
        mv.src[0][d] = keys[d];
        mv.src[1][d] = vals[d];
        if ((rc = sl__mdev_use(m, d)) == SL_OK)
            rc = sl__mg_scratch_alloc(m, d, &sc[d], total[d] * 8, (void **)&rk[d]);
        if (rc == SL_OK)
            rc = sl__mg_scratch_alloc(m, d, &sc[d], total[d] * 8, (void **)&rv[d]);
        mv.dst[0][d] = rk[d];
        mv.dst[1][d] = rv[d];
    }
    /* direct: each device re-sorts once its own rows landed, while others still copy */
    struct sl__mg_xfer xf = {0};
    if (rc == SL_OK && op->packets && (rc = sl__mg_sync_all(m)) == SL_OK)
        rc = sl__mg_exchange(m, &mv, op, &out->xchg);
    else if (rc == SL_OK)
        rc = sl__mg_exchange_start(m, &mv, &xf);
    for (int d = 0; d < n && rc == SL_OK; d++) {
        if ((rc = sl__mdev_use(m, d)) == SL_OK &&
            (rc = sl__mg_result_alloc(m, d, total[d], out)) == SL_OK)
            rc = sort_pairs(m, d, &sc[d], rk[d], out->keys[d], rv[d], out->s_vals[d],
                            total[d]);
        out->n[d] = total[d];
    }
    int sr = sl__mg_exchange_finish(m, &xf, &out->xchg);
    rc = rc < 0 ? rc : sr;
    sr = sl__mg_sync_all(m);
    return rc < 0 ? rc : sr;
}

int sl__mg_sort_tables(struct sl__mdev *m, const struct sl__mg_table *const *t, int n_t,
                       const struct sl__mg_opts *o, struct sl__mg_result *out)
{
    struct sl__mg_opts op = sl__mg_opts_resolve(o);
    int n = m->n, rc = SL_OK;
    for (int i = 0; i < n_t && i < 2; i++)
        memset(&out[i], 0, sizeof out[i]);
    if (n > SL__MG_MAX_DEV || n_t < 1 || n_t > 2)
        return sl__set_last_error(SL_EINVAL, "multi-device sort: %d devices, %d tables", n,
                                  n_t);
    struct sl__mg_scratch sc[SL__MG_MAX_DEV] = {0};
    int64_t *keys[2][SL__MG_MAX_DEV] = {{0}};
    uint64_t *vals[2][SL__MG_MAX_DEV] = {{0}};
    int64_t total_rows = 0, n_samp[2][SL__MG_MAX_DEV] = {{0}};
    for (int i = 0; i < n_t; i++)
        for (int d = 0; d < n; d++)
            total_rows += t[i]->n[d];
    /* samples in proportion to rows over every table: one set of splitters for all */
    int64_t cap_samp = (int64_t)SAMPLES_PER_DEVICE * n + n; /* rounding: one more each */
    int64_t *samples = calloc((size_t)cap_samp * (size_t)(n * n_t), sizeof *samples);
    if (!samples)
        return sl__set_last_error(SL_ENOMEM, "multi-device sort: out of memory");
    /* 1. local sorts and samples (samples[(i * n + d) * cap_samp ...]) */
    void *d_samp[2][SL__MG_MAX_DEV] = {{0}};
    for (int i = 0; i < n_t; i++)
        for (int d = 0; d < n && rc == SL_OK; d++)
            if ((rc = sl__mdev_use(m, d)) == SL_OK)
                rc = sort_share(m, d, &sc[d], t[i], total_rows, &keys[i][d], &vals[i][d],
                                &d_samp[i][d], &n_samp[i][d]);
    int sr = sl__mg_sync_all(m);
    rc = rc < 0 ? rc : sr;
    for (int i = 0; i < n_t && rc == SL_OK; i++)
        for (int d = 0; d < n && rc == SL_OK; d++)
            if (n_samp[i][d] > 0 && (rc = sl__mdev_use(m, d)) == SL_OK)
                MG_CUDA(rc, cudaMemcpy(samples + (size_t)(i * n + d) * (size_t)cap_samp,
                                       d_samp[i][d], (size_t)n_samp[i][d] * 8,
                                       cudaMemcpyDeviceToHost));
    /* 2. splitters from every table's samples */
    int64_t split[SL__MG_MAX_DEV];
    if (rc == SL_OK) {
        int64_t got = 0;
        for (int i = 0; i < n_t; i++)
            for (int d = 0; d < n; d++) {
                memmove(samples + got, samples + (size_t)(i * n + d) * (size_t)cap_samp,
                        (size_t)n_samp[i][d] * sizeof *samples);
                got += n_samp[i][d];
            }
        sl__mg_splitters_i64(samples, got, n, split);
    }
    /* 3. each table by range to its devices, re-sorted there */
    for (int i = 0; i < n_t && rc == SL_OK; i++)
        rc = exchange_sorted(m, sc, split, t[i], keys[i], vals[i], &op, &out[i]);
    for (int d = 0; d < n; d++)
        if (sl__mdev_use(m, d) == SL_OK)
            sl__mg_scratch_free(m, d, &sc[d]);
    free(samples);
    for (int i = 0; i < n_t && rc < 0; i++)
        sl__mg_result_free(m, &out[i]);
    return rc;
}

int sl__mg_sort(struct sl__mdev *m, const struct sl__mg_table *t, const struct sl__mg_opts *o,
                struct sl__mg_result *out)
{
    return sl__mg_sort_tables(m, &t, 1, o, out);
}
