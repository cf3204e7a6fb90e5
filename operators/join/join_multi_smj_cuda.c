/* Multi-device sort-merge join (mgpu.h; paper-000): both sides sorted over the devices
 * with one set of splitters (sl__mg_sort_tables), so equal keys of R and S meet on one
 * device, then each device merge-joins its key range with the GPU SMJ kernels
 * (sluice_k/join_smj.h: count, allocate, write; duplicates on both sides load-balanced
 * over output rows).
 *
 * The merge compares keys as unsigned 64-bit values while the sort orders them as signed
 * ones: keys go into the sort with their top bit flipped (sl_k_sort_codes of unsigned
 * keys), which makes the signed order of the codes the unsigned order of the keys, and
 * come out flipped back. Equal keys stay equal either way. */
#include <string.h>

#include "common/mgpu_scratch.h"
#include "sluice_k/join_smj.h"
#include "sluice_k/join_types.h"
#include "sluice_k/sort.h"

/* Device d's keys of t with their top bit flipped, into scratch (the payloads as they
 * are): the table the sort gets. */
static int flipped_share(struct sl__mdev *m, int d, struct sl__mg_scratch *sc,
                         const struct sl__mg_table *t, struct sl__mg_table *f)
{
    const void *k, *v;
    void *codes;
    int rc = sl__mg_share_on_device(m, d, sc, t, &k, &v);
    if (rc == SL_OK)
        rc = sl__mg_scratch_alloc(m, d, sc, t->n[d] * 8, &codes);
    if (rc == SL_OK && t->n[d] > 0)
        MG_CUDA(rc, sl_k_sort_codes(k, 8, 0, t->n[d], codes, m->stream[d]));
    f->n[d] = t->n[d];
    f->keys[d] = codes;
    f->vals[d] = v;
    return rc;
}

/* Flips the top bit of device d's sorted keys of one side back (in scratch). */
static int unflip(struct sl__mdev *m, int d, struct sl__mg_scratch *sc,
                  const struct sl__mg_result *sorted, void **keys)
{
    int rc = sl__mg_scratch_alloc(m, d, sc, sorted->n[d] * 8, keys);
    if (rc == SL_OK && sorted->n[d] > 0)
        MG_CUDA(rc, sl_k_sort_codes(sorted->keys[d], 8, 0, sorted->n[d], *keys, m->stream[d]));
    return rc;
}

/* Device d's merge: its sorted keys flipped back, the count kernel's scratch and count. */
struct merge {
    void *rk, *sk, *temp, *dcount;
    size_t tb;
};

/* Enqueues device d's count of its range's output rows (sorted R and S); merge_write
 * reads it. No host wait: every device counts at once. */
static int merge_count(struct sl__mdev *m, int d, struct sl__mg_scratch *sc, int kind,
                       const struct sl__mg_result *sorted, struct merge *mg)
{
    cudaStream_t st = m->stream[d];
    int64_t nr = sorted[0].n[d], ns = sorted[1].n[d];
    int rc = unflip(m, d, sc, &sorted[0], &mg->rk);
    if (rc == SL_OK)
        rc = unflip(m, d, sc, &sorted[1], &mg->sk);
    if (rc == SL_OK)
        rc = sl__mg_scratch_alloc(m, d, sc, 16, &mg->dcount);
    if (rc == SL_OK)
        MG_CUDA(rc, sl_k_smj_count_k64(NULL, &mg->tb, mg->rk, nr, mg->sk, ns, kind, mg->dcount,
                                       st));
    if (rc == SL_OK)
        rc = sl__mg_scratch_alloc(m, d, sc, (int64_t)mg->tb, &mg->temp);
    if (rc == SL_OK)
        MG_CUDA(rc, cudaMemsetAsync(mg->dcount, 0, 16, st));
    if (rc == SL_OK)
        MG_CUDA(rc, sl_k_smj_count_k64(mg->temp, &mg->tb, mg->rk, nr, mg->sk, ns, kind,
                                       mg->dcount, st));
    return rc;
}

/* Waits for device d's count, allocates its output and enqueues the merge's writes. */
static int merge_write(struct sl__mdev *m, int d, int kind, const struct sl__mg_result *sorted,
                       struct merge *mg, struct sl__mg_result *out)
{
    cudaStream_t st = m->stream[d];
    int64_t nr = sorted[0].n[d], ns = sorted[1].n[d];
    unsigned long long h_count[2] = {0, 0};
    int rc;
    MG_CUDA(rc, cudaMemcpyAsync(h_count, mg->dcount, 16, cudaMemcpyDeviceToHost, st));
    if (rc == SL_OK)
        MG_CUDA(rc, cudaStreamSynchronize(st));
    if (rc == SL_OK)
        rc = sl__mg_result_alloc(m, d, (int64_t)h_count[0], out);
    if (rc < 0)
        return rc;
    out->n[d] = (int64_t)h_count[0];
    bool r_cols = kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_LEFT;
    sl_k_join_out_t jo = {.keys = out->keys[d], .r_pos = out->r_pos[d],
                          .r = {.n = r_cols ? 1 : 0, .width = {8}, .ptr = {out->r_vals[d]}},
                          .s = {.n = 1, .width = {8}, .ptr = {out->s_vals[d]}},
                          .capacity = out->n[d]};
    if (out->n[d] > 0)
        MG_CUDA(rc, sl_k_smj_write_k64(mg->temp, mg->tb, mg->rk, sorted[0].s_vals[d], nr,
                                       mg->sk, sorted[1].s_vals[d], ns, 8, kind, &jo, st));
    return rc;
}

int sl__mg_sort_merge_join(struct sl__mdev *m, const struct sl__mg_table *r,
                           const struct sl__mg_table *s, int kind, const struct sl__mg_opts *o,
                           struct sl__mg_result *out)
{
    int n = m->n, rc = SL_OK;
    memset(out, 0, sizeof *out);
    if (n > SL__MG_MAX_DEV)
        return sl__set_last_error(SL_EINVAL, "multi-device merge join: %d devices", n);
    struct sl__mg_scratch sc[SL__MG_MAX_DEV] = {0};
    struct sl__mg_table f[2] = {{0}, {0}};
    struct sl__mg_result sorted[2];
    memset(sorted, 0, sizeof sorted);
    for (int d = 0; d < n && rc == SL_OK; d++)
        if ((rc = sl__mdev_use(m, d)) == SL_OK && (rc = flipped_share(m, d, &sc[d], r, &f[0])) ==
                                                      SL_OK)
            rc = flipped_share(m, d, &sc[d], s, &f[1]);
    int sr = sl__mg_sync_all(m);
    rc = rc < 0 ? rc : sr;
    const struct sl__mg_table *both[2] = {&f[0], &f[1]};
    if (rc == SL_OK)
        rc = sl__mg_sort_tables(m, both, 2, o, sorted);
    struct merge mg[SL__MG_MAX_DEV];
    memset(mg, 0, sizeof mg);
    for (int d = 0; d < n && rc == SL_OK; d++)
        if ((rc = sl__mdev_use(m, d)) == SL_OK)
            rc = merge_count(m, d, &sc[d], kind, sorted, &mg[d]);
    for (int d = 0; d < n && rc == SL_OK; d++)
        if ((rc = sl__mdev_use(m, d)) == SL_OK)
            rc = merge_write(m, d, kind, sorted, &mg[d], out);
    sr = sl__mg_sync_all(m);
    rc = rc < 0 ? rc : sr;
    if (rc == SL_OK) { /* both sides' exchanges, as one */
        out->cost = sorted[0].cost;
        out->cost.total_bytes += sorted[1].cost.total_bytes;
        out->cost.seconds += sorted[1].cost.seconds;
        for (int i = 0; i < SL__MG_MAX_DEV * SL__MG_MAX_DEV; i++)
            out->cost.link_bytes[i] += sorted[1].cost.link_bytes[i];
        sl__mg_cost_text(&out->cost, n, out->explain, sizeof out->explain);
        out->xchg.packets = sorted[0].xchg.packets + sorted[1].xchg.packets;
        out->xchg.bytes = sorted[0].xchg.bytes + sorted[1].xchg.bytes;
        out->xchg.seconds = sorted[0].xchg.seconds + sorted[1].xchg.seconds;
    }
    sl__mg_result_free(m, &sorted[0]);
    sl__mg_result_free(m, &sorted[1]);
    for (int d = 0; d < n; d++)
        if (sl__mdev_use(m, d) == SL_OK)
            sl__mg_scratch_free(m, d, &sc[d]);
    if (rc < 0)
        sl__mg_result_free(m, out);
    return rc;
}
