/* Multi-device partitioned hash join (mgpu.h; paper-002, MG-Join): partition, exchange,
 * join locally. Every device works on its own stream; the host waits between phases. */
#include <stdlib.h>
#include <string.h>

#include "common/mgpu_scratch.h"
#include "sluice_k/columns.h"
#include "sluice_k/join_npj.h"
#include "sluice_k/sort.h"

struct parts {
    int64_t *keys[2][SL__MG_MAX_DEV]; /* [side][device]: rows grouped by partition */
    uint64_t *vals[2][SL__MG_MAX_DEV];
    int64_t *off;                     /* host: [(side * n + d) * (fanout + 1) + p] */
};

/* Enqueues the hash partitioning of device d's share of one side: partition numbers,
 * a stable sort of (partition, row), the rows gathered in that order, and the
 * partition bounds copied to h_off. */
static int partition_share(struct sl__mdev *m, int d, struct sl__mg_scratch *sc,
                           const struct sl__mg_table *t, int bits, int64_t **keys_out,
                           uint64_t **vals_out, int64_t *h_off)
{
    int64_t n = t->n[d], fanout = (int64_t)1 << bits;
    cudaStream_t st = m->stream[d];
    const void *k, *v;
    void *pid, *pid_s, *ids, *ids_s, *off, *temp;
    int rc;
    if ((rc = sl__mg_scratch_alloc(m, d, sc, n * 8, (void **)keys_out)) < 0 ||
        (rc = sl__mg_scratch_alloc(m, d, sc, n * 8, (void **)vals_out)) < 0)
        return rc;
    if (n == 0) {
        memset(h_off, 0, (size_t)(fanout + 1) * sizeof *h_off);
        return SL_OK;
    }
    if ((rc = sl__mg_share_on_device(m, d, sc, t, &k, &v)) < 0)
        return rc;
    size_t tb = 0;
    if ((rc = sl__mg_scratch_alloc(m, d, sc, n * 4, &pid)) < 0 ||
        (rc = sl__mg_scratch_alloc(m, d, sc, n * 4, &pid_s)) < 0 ||
        (rc = sl__mg_scratch_alloc(m, d, sc, n * 4, &ids)) < 0 ||
        (rc = sl__mg_scratch_alloc(m, d, sc, n * 4, &ids_s)) < 0 ||
        (rc = sl__mg_scratch_alloc(m, d, sc, (fanout + 1) * 8, &off)) < 0)
        return rc;
    MG_CUDA(rc, sl_k_part_ids(k, 8, n, bits, 1, pid, st));
    if (rc == SL_OK)
        MG_CUDA(rc, sl_k_iota_u32(ids, n, 0, st));
    if (rc == SL_OK)
        MG_CUDA(rc, sl_k_sort_pairs(NULL, &tb, 4, 0, pid, pid_s, ids, ids_s, 4, n, st));
    if (rc == SL_OK)
        rc = sl__mg_scratch_alloc(m, d, sc, (int64_t)tb, &temp);
    if (rc == SL_OK)
        MG_CUDA(rc, sl_k_sort_pairs(temp, &tb, 4, 0, pid, pid_s, ids, ids_s, 4, n, st));
    if (rc == SL_OK)
        MG_CUDA(rc, sl_k_gather_b64((const uint64_t *)k, ids_s, (uint64_t *)*keys_out, n, st));
    if (rc == SL_OK)
        MG_CUDA(rc, sl_k_gather_b64(v, ids_s, *vals_out, n, st));
    if (rc == SL_OK)
        MG_CUDA(rc, sl_k_part_bounds(pid_s, n, fanout, off, st));
    if (rc == SL_OK)
        MG_CUDA(rc, cudaMemcpyAsync(h_off, off, (size_t)(fanout + 1) * 8,
                                    cudaMemcpyDeviceToHost, st));
    return rc;
}

/* Joins what device d received; nr == 0 and ns == 0 are answered without kernels. */
static int join_local(struct sl__mdev *m, int d, struct sl__mg_scratch *sc, int kind,
                      const int64_t *rk, const uint64_t *rv, int64_t nr, const int64_t *sk,
                      const uint64_t *sv, int64_t ns, struct sl__mg_result *out)
{
    cudaStream_t st = m->stream[d];
    int rc;
    bool outer = kind == SL_K_JOIN_ANTI || kind == SL_K_JOIN_LEFT;
    if (ns == 0 || (nr == 0 && !outer)) {
        out->n[d] = 0;
        return sl__mg_result_alloc(m, d, 0, out);
    }
    if (nr == 0) { /* every S row once, without partner */
        if ((rc = sl__mg_result_alloc(m, d, ns, out)) < 0)
            return rc;
        MG_CUDA(rc, cudaMemcpyAsync(out->keys[d], sk, (size_t)ns * 8, cudaMemcpyDefault, st));
        if (rc == SL_OK)
            MG_CUDA(rc, cudaMemcpyAsync(out->s_vals[d], sv, (size_t)ns * 8, cudaMemcpyDefault,
                                        st));
        if (rc == SL_OK)
            MG_CUDA(rc, cudaMemsetAsync(out->r_vals[d], 0, (size_t)ns * 8, st));
        if (rc == SL_OK)
            MG_CUDA(rc, cudaMemsetAsync(out->r_pos[d], 0xFF, (size_t)ns * 4, st));
        out->n[d] = ns;
        return rc;
    }
    size_t tb = 0;
    void *temp, *dcount;
    unsigned long long h_count[2] = {0, 0};
    MG_CUDA(rc, sl_k_npj_build_k64(NULL, &tb, (const uint64_t *)rk, nr, st));
    if (rc == SL_OK)
        rc = sl__mg_scratch_alloc(m, d, sc, (int64_t)tb, &temp);
    if (rc == SL_OK)
        rc = sl__mg_scratch_alloc(m, d, sc, 16, &dcount);
    if (rc == SL_OK)
        MG_CUDA(rc, sl_k_npj_build_k64(temp, &tb, (const uint64_t *)rk, nr, st));
    sl_k_cols_t rcols = {.n = 1, .width = {8}, .ptr = {(void *)rv}};
    sl_k_cols_t scols = {.n = 1, .width = {8}, .ptr = {(void *)sv}};
    int64_t cap = kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_LEFT ? ns + nr : ns;
    for (int attempt = 0; rc == SL_OK && attempt < 2; attempt++) {
        if ((rc = sl__mg_result_alloc(m, d, cap, out)) < 0)
            break;
        bool r_cols = kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_LEFT;
        sl_k_join_out_t jo = {.keys = out->keys[d], .r_pos = out->r_pos[d],
                              .r = {.n = r_cols ? 1 : 0, .width = {8},
                                    .ptr = {out->r_vals[d]}},
                              .s = {.n = 1, .width = {8}, .ptr = {out->s_vals[d]}},
                              .capacity = cap};
        MG_CUDA(rc, cudaMemsetAsync(dcount, 0, 16, st));
        if (rc == SL_OK)
            MG_CUDA(rc, sl_k_npj_probe_k64(temp, tb, nr, &rcols, (const uint64_t *)sk, ns,
                                           &scols, kind, &jo, dcount, st));
        if (rc == SL_OK)
            MG_CUDA(rc, cudaMemcpyAsync(h_count, dcount, 16, cudaMemcpyDeviceToHost, st));
        if (rc == SL_OK)
            MG_CUDA(rc, cudaStreamSynchronize(st));
        if (rc < 0)
            break;
        if ((int64_t)h_count[0] <= cap) {
            out->n[d] = (int64_t)h_count[0];
            return SL_OK;
        }
        /* more rows than guessed (duplicates on both sides): the exact count, once more */
        struct sl__mg_result one = {0};
        one.keys[d] = out->keys[d], one.r_vals[d] = out->r_vals[d];
        one.s_vals[d] = out->s_vals[d], one.r_pos[d] = out->r_pos[d], one.cap[d] = cap;
        sl__mg_result_free(m, &one); /* frees device d's only: other entries are empty */
        out->keys[d] = NULL, out->r_vals[d] = out->s_vals[d] = NULL, out->r_pos[d] = NULL;
        cap = (int64_t)h_count[0];
    }
    return rc < 0 ? rc : sl__set_last_error(SL_EINTERNAL, "multi-device join: output count "
                                            "changed between two probes");
}

/* Which device takes which partitions (balanced by the rows of both sides), and the
 * rows each sender moves to each receiver for one side. */
static void plan_moves(int n, int64_t fanout, const int64_t *off, const int *first, int side,
                       int64_t *from, int64_t *count)
{
    for (int s = 0; s < n; s++) {
        const int64_t *o = off + (size_t)(side * n + s) * (size_t)(fanout + 1);
        for (int d = 0; d < n; d++) {
            from[s * n + d] = o[first[d]];
            count[s * n + d] = o[first[d + 1]] - o[first[d]];
        }
    }
}

int sl__mg_hash_join(struct sl__mdev *m, const struct sl__mg_table *r,
                     const struct sl__mg_table *s, int kind, const struct sl__mg_opts *o,
                     struct sl__mg_result *out)
{
    struct sl__mg_opts op = sl__mg_opts_resolve(o);
    int n = m->n, bits = op.part_bits, rc = SL_OK;
    int64_t fanout = (int64_t)1 << bits;
    memset(out, 0, sizeof *out);
    if (n > SL__MG_MAX_DEV || bits > 20)
        return sl__set_last_error(SL_EINVAL, "multi-device join: %d devices, %d bits", n,
                                  bits);
    struct sl__mg_scratch sc[SL__MG_MAX_DEV] = {0};
    struct parts pa = {0};
    int64_t *sizes = calloc((size_t)fanout, sizeof *sizes);
    pa.off = calloc((size_t)(2 * n) * (size_t)(fanout + 1), sizeof *pa.off);
    if (!sizes || !pa.off)
        rc = sl__set_last_error(SL_ENOMEM, "multi-device join: out of memory");
    /* 1. every device partitions its shares (in parallel: one stream each) */
    for (int d = 0; d < n && rc == SL_OK; d++) {
        if ((rc = sl__mdev_use(m, d)) < 0)
            break;
        for (int side = 0; side < 2 && rc == SL_OK; side++)
            rc = partition_share(m, d, &sc[d], side ? s : r, bits, &pa.keys[side][d],
                                 &pa.vals[side][d],
                                 pa.off + (size_t)(side * n + d) * (size_t)(fanout + 1));
    }
    int sr = sl__mg_sync_all(m);
    rc = rc < 0 ? rc : sr;
    /* 2. partition ranges per device, balanced by rows */
    int first[SL__MG_MAX_DEV + 1];
    int64_t from[2][SL__MG_MAX_DEV * SL__MG_MAX_DEV], count[2][SL__MG_MAX_DEV * SL__MG_MAX_DEV];
    int64_t base[2][SL__MG_MAX_DEV * SL__MG_MAX_DEV], total[2][SL__MG_MAX_DEV];
    if (rc == SL_OK) {
        for (int side = 0; side < 2; side++)
            for (int d = 0; d < n; d++) {
                const int64_t *q = pa.off + (size_t)(side * n + d) * (size_t)(fanout + 1);
                for (int64_t p = 0; p < fanout; p++)
                    sizes[p] += q[p + 1] - q[p];
            }
        sl__mg_balance_ranges(sizes, (int)fanout, n, first);
        int64_t both[SL__MG_MAX_DEV * SL__MG_MAX_DEV];
        for (int side = 0; side < 2; side++) {
            plan_moves(n, fanout, pa.off, first, side, from[side], count[side]);
            sl__mg_recv_layout(count[side], n, base[side], total[side]);
        }
        for (int i = 0; i < n * n; i++)
            both[i] = count[0][i] + count[1][i];
        sl__mg_cost(both, n, 16, op.link_gbps, &out->cost);
        sl__mg_cost_text(&out->cost, n, out->explain, sizeof out->explain);
    }
    /* 3. the exchange, one side after the other (two columns each: keys, payloads) */
    int64_t *rk[2][SL__MG_MAX_DEV] = {{0}};
    uint64_t *rv[2][SL__MG_MAX_DEV] = {{0}};
    for (int side = 0; side < 2 && rc == SL_OK; side++) {
        struct sl__mg_move mv = {.n_cols = 2, .width = {8, 8}, .from = from[side],
                                 .count = count[side], .base = base[side]};
        for (int d = 0; d < n && rc == SL_OK; d++) {
            mv.src[0][d] = pa.keys[side][d];
            mv.src[1][d] = pa.vals[side][d];
            rc = sl__mg_scratch_alloc(m, d, &sc[d], total[side][d] * 8, (void **)&rk[side][d]);
            if (rc == SL_OK)
                rc = sl__mg_scratch_alloc(m, d, &sc[d], total[side][d] * 8,
                                          (void **)&rv[side][d]);
            mv.dst[0][d] = rk[side][d];
            mv.dst[1][d] = rv[side][d];
        }
        sr = sl__mg_sync_all(m); /* the receive buffers come ordered on the devices' streams */
        rc = rc < 0 ? rc : sr;
        sl_xchg_stats st = {0};
        if (rc == SL_OK)
            rc = sl__mg_exchange(m, &mv, &op, &st);
        out->xchg.packets += st.packets;
        out->xchg.bytes += st.bytes;
        out->xchg.seconds += st.seconds;
    }
    /* 4. each device joins its partitions */
    for (int d = 0; d < n && rc == SL_OK; d++) {
        if ((rc = sl__mdev_use(m, d)) == SL_OK)
            rc = join_local(m, d, &sc[d], kind, rk[0][d], rv[0][d], total[0][d], rk[1][d],
                            rv[1][d], total[1][d], out);
    }
    sr = sl__mg_sync_all(m);
    rc = rc < 0 ? rc : sr;
    for (int d = 0; d < n; d++)
        if (sl__mdev_use(m, d) == SL_OK)
            sl__mg_scratch_free(m, d, &sc[d]);
    free(sizes);
    free(pa.off);
    if (rc < 0)
        sl__mg_result_free(m, out);
    return rc;
}
