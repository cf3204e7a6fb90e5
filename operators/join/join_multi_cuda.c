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
 * a stable sort of (partition, row), the rows gathered in that order (into sc), and the
 * partition bounds (*d_off, fanout + 1 of them; NULL for an empty share). Everything
 * else (an uploaded share, partition numbers, the sort's scratch) goes into tmp, freed
 * once every share is partitioned so that the devices' budgets hold what they
 * receive. */
static int partition_share(struct sl__mdev *m, int d, struct sl__mg_scratch *sc,
                           struct sl__mg_scratch *tmp, const struct sl__mg_table *t, int bits,
                           int64_t **keys_out, uint64_t **vals_out, int64_t **d_off)
{
    int64_t n = t->n[d], fanout = (int64_t)1 << bits;
    cudaStream_t st = m->stream[d];
    const void *k, *v;
    void *pid, *pid_s, *ids, *ids_s, *temp;
    int64_t *off;
    int rc;
    if ((rc = sl__mg_scratch_alloc(m, d, sc, n * 8, (void **)keys_out)) < 0 ||
        (rc = sl__mg_scratch_alloc(m, d, sc, n * 8, (void **)vals_out)) < 0)
        return rc;
    *d_off = NULL;
    if (n == 0)
        return SL_OK;
    if ((rc = sl__mg_share_on_device(m, d, tmp, t, &k, &v)) < 0)
        return rc;
    size_t tb = 0;
    if ((rc = sl__mg_scratch_alloc(m, d, tmp, n * 4, &pid)) < 0 ||
        (rc = sl__mg_scratch_alloc(m, d, tmp, n * 4, &pid_s)) < 0 ||
        (rc = sl__mg_scratch_alloc(m, d, tmp, n * 4, &ids)) < 0 ||
        (rc = sl__mg_scratch_alloc(m, d, tmp, n * 4, &ids_s)) < 0 ||
        (rc = sl__mg_scratch_alloc(m, d, tmp, (fanout + 1) * 8, (void **)&off)) < 0)
        return rc;
    MG_CUDA(rc, sl_k_part_ids(k, 8, n, bits, 1, pid, st));
    if (rc == SL_OK)
        MG_CUDA(rc, sl_k_iota_u32(ids, n, 0, st));
    if (rc == SL_OK)
        MG_CUDA(rc, sl_k_sort_pairs(NULL, &tb, 4, 0, pid, pid_s, ids, ids_s, 4, n, st));
    if (rc == SL_OK)
        rc = sl__mg_scratch_alloc(m, d, tmp, (int64_t)tb, &temp);
    if (rc == SL_OK)
        MG_CUDA(rc, sl_k_sort_pairs(temp, &tb, 4, 0, pid, pid_s, ids, ids_s, 4, n, st));
    if (rc == SL_OK)
        MG_CUDA(rc, sl_k_gather_b64((const uint64_t *)k, ids_s, (uint64_t *)*keys_out, n, st));
    if (rc == SL_OK)
        MG_CUDA(rc, sl_k_gather_b64(v, ids_s, *vals_out, n, st));
    if (rc == SL_OK)
        MG_CUDA(rc, sl_k_part_bounds(pid_s, n, fanout, off, st));
    *d_off = off;
    return rc;
}

/* Device d's local join: what it received, its build table, and its output count. */
struct local {
    const int64_t *rk, *sk;
    const uint64_t *rv, *sv;
    int64_t nr, ns, cap;
    void *temp, *dcount;
    size_t tb;
    bool done;               /* answered without a probe (an empty side) */
};

static bool outer_kind(int kind)
{
    return kind == SL_K_JOIN_ANTI || kind == SL_K_JOIN_LEFT;
}

/* Answers a local join with an empty side: no output, or (nr == 0 in an outer join)
 * every S row once without partner. */
static int join_trivial(struct sl__mdev *m, int d, int kind, struct local *lj,
                        struct sl__mg_result *out)
{
    cudaStream_t st = m->stream[d];
    int64_t ns = lj->ns;
    int rc;
    lj->done = true;
    if (ns == 0 || !outer_kind(kind)) {
        out->n[d] = 0;
        return sl__mg_result_alloc(m, d, 0, out);
    }
    if ((rc = sl__mg_result_alloc(m, d, ns, out)) < 0)
        return rc;
    MG_CUDA(rc, cudaMemcpyAsync(out->keys[d], lj->sk, (size_t)ns * 8, cudaMemcpyDefault, st));
    if (rc == SL_OK)
        MG_CUDA(rc, cudaMemcpyAsync(out->s_vals[d], lj->sv, (size_t)ns * 8, cudaMemcpyDefault,
                                    st));
    if (rc == SL_OK)
        MG_CUDA(rc, cudaMemsetAsync(out->r_vals[d], 0, (size_t)ns * 8, st));
    if (rc == SL_OK)
        MG_CUDA(rc, cudaMemsetAsync(out->r_pos[d], 0xFF, (size_t)ns * 4, st));
    out->n[d] = ns;
    return rc;
}

/* Enqueues the probe of device d into lj->cap output rows (allocated here). */
static int join_probe(struct sl__mdev *m, int d, int kind, struct local *lj,
                      struct sl__mg_result *out)
{
    cudaStream_t st = m->stream[d];
    int rc;
    if ((rc = sl__mg_result_alloc(m, d, lj->cap, out)) < 0)
        return rc;
    bool r_cols = kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_LEFT;
    sl_k_cols_t rcols = {.n = 1, .width = {8}, .ptr = {(void *)lj->rv}};
    sl_k_cols_t scols = {.n = 1, .width = {8}, .ptr = {(void *)lj->sv}};
    sl_k_join_out_t jo = {.keys = out->keys[d], .r_pos = out->r_pos[d],
                          .r = {.n = r_cols ? 1 : 0, .width = {8}, .ptr = {out->r_vals[d]}},
                          .s = {.n = 1, .width = {8}, .ptr = {out->s_vals[d]}},
                          .capacity = lj->cap};
    MG_CUDA(rc, cudaMemsetAsync(lj->dcount, 0, 16, st));
    if (rc == SL_OK)
        MG_CUDA(rc, sl_k_npj_probe_k64(lj->temp, lj->tb, lj->nr, &rcols,
                                       (const uint64_t *)lj->sk, lj->ns, &scols, kind, &jo,
                                       lj->dcount, st));
    return rc;
}

/* Enqueues device d's join of what it received (build, probe into a guessed capacity);
 * join_collect reads its count. No host wait: every device's join runs at once. */
static int join_enqueue(struct sl__mdev *m, int d, struct sl__mg_scratch *sc, int kind,
                        struct local *lj, struct sl__mg_result *out)
{
    cudaStream_t st = m->stream[d];
    int rc;
    if (lj->ns == 0 || lj->nr == 0)
        return join_trivial(m, d, kind, lj, out);
    MG_CUDA(rc, sl_k_npj_build_k64(NULL, &lj->tb, (const uint64_t *)lj->rk, lj->nr, st));
    if (rc == SL_OK)
        rc = sl__mg_scratch_alloc(m, d, sc, (int64_t)lj->tb, &lj->temp);
    if (rc == SL_OK)
        rc = sl__mg_scratch_alloc(m, d, sc, 16, &lj->dcount);
    if (rc == SL_OK)
        MG_CUDA(rc, sl_k_npj_build_k64(lj->temp, &lj->tb, (const uint64_t *)lj->rk, lj->nr,
                                       st));
    lj->cap = kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_LEFT ? lj->ns + lj->nr : lj->ns;
    return rc == SL_OK ? join_probe(m, d, kind, lj, out) : rc;
}

/* Waits for device d's join and sets its row count; probes once more with the exact
 * capacity when the guess was short (duplicates on both sides). */
static int join_collect(struct sl__mdev *m, int d, int kind, struct local *lj,
                        struct sl__mg_result *out)
{
    cudaStream_t st = m->stream[d];
    int rc = SL_OK;
    for (int attempt = 0; !lj->done && attempt < 2; attempt++) {
        unsigned long long h_count[2] = {0, 0};
        MG_CUDA(rc, cudaMemcpyAsync(h_count, lj->dcount, 16, cudaMemcpyDeviceToHost, st));
        if (rc == SL_OK)
            MG_CUDA(rc, cudaStreamSynchronize(st));
        if (rc < 0)
            return rc;
        if ((int64_t)h_count[0] <= lj->cap) {
            out->n[d] = (int64_t)h_count[0];
            return SL_OK;
        }
        struct sl__mg_result one = {0}; /* frees device d's output only */
        one.keys[d] = out->keys[d], one.r_vals[d] = out->r_vals[d];
        one.s_vals[d] = out->s_vals[d], one.r_pos[d] = out->r_pos[d], one.cap[d] = lj->cap;
        sl__mg_result_free(m, &one);
        out->keys[d] = NULL, out->r_vals[d] = out->s_vals[d] = NULL, out->r_pos[d] = NULL;
        lj->cap = (int64_t)h_count[0];
        if ((rc = join_probe(m, d, kind, lj, out)) < 0)
            return rc;
    }
    return lj->done ? SL_OK : sl__set_last_error(SL_EINTERNAL, "multi-device join: output "
                                                 "count changed between two probes");
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
    struct sl__mg_scratch sc[SL__MG_MAX_DEV] = {0}, tmp[SL__MG_MAX_DEV] = {0};
    struct parts pa = {0};
    int64_t *d_off[2][SL__MG_MAX_DEV] = {{0}};
    int64_t *sizes = calloc((size_t)fanout, sizeof *sizes);
    pa.off = calloc((size_t)(2 * n) * (size_t)(fanout + 1), sizeof *pa.off);
    if (!sizes || !pa.off)
        rc = sl__set_last_error(SL_ENOMEM, "multi-device join: out of memory");
    /* 1. every device partitions its shares (in parallel: one stream each, no host wait
     * in between), then the bounds come to the host and the temporaries go */
    for (int d = 0; d < n && rc == SL_OK; d++) {
        if ((rc = sl__mdev_use(m, d)) < 0)
            break;
        for (int side = 0; side < 2 && rc == SL_OK; side++)
            rc = partition_share(m, d, &sc[d], &tmp[d], side ? s : r, bits, &pa.keys[side][d],
                                 &pa.vals[side][d], &d_off[side][d]);
    }
    int sr = sl__mg_sync_all(m);
    rc = rc < 0 ? rc : sr;
    for (int side = 0; side < 2 && rc == SL_OK; side++)
        for (int d = 0; d < n && rc == SL_OK; d++)
            if (d_off[side][d] && (rc = sl__mdev_use(m, d)) == SL_OK)
                MG_CUDA(rc, cudaMemcpy(pa.off + (size_t)(side * n + d) * (size_t)(fanout + 1),
                                       d_off[side][d], (size_t)(fanout + 1) * 8,
                                       cudaMemcpyDeviceToHost));
    for (int d = 0; d < n; d++)
        if (sl__mdev_use(m, d) == SL_OK)
            sl__mg_scratch_free(m, d, &tmp[d]);
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
    /* 3. nothing moves unless every device's budget holds what it will receive and
     * join: a clean SL_EBUDGET now, never an allocation failing mid-exchange */
    struct local lj[SL__MG_MAX_DEV] = {{0}};
    for (int d = 0; d < n && rc == SL_OK; d++) {
        lj[d].nr = total[0][d], lj[d].ns = total[1][d];
        int64_t out_rows = lj[d].ns + (kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_LEFT
                                           ? lj[d].nr : 0);
        /* received rows (16 B), the build table (about 16 B a row), the output (28 B) */
        rc = sl__mg_check_room(m, d, 32 * lj[d].nr + 16 * lj[d].ns + 28 * out_rows);
    }
    /* 4. the exchange: both sides' receive arrays, then both sides' copies enqueued */
    struct sl__mg_move mv[2];
    struct sl__mg_xfer xf[2];
    memset(xf, 0, sizeof xf);
    for (int side = 0; side < 2; side++) {
        mv[side] = (struct sl__mg_move){.n_cols = 2, .width = {8, 8}, .from = from[side],
                                        .count = count[side], .base = base[side]};
        for (int d = 0; d < n && rc == SL_OK; d++) {
            void *k, *v;
            mv[side].src[0][d] = pa.keys[side][d];
            mv[side].src[1][d] = pa.vals[side][d];
            if ((rc = sl__mdev_use(m, d)) == SL_OK)
                rc = sl__mg_scratch_alloc(m, d, &sc[d], total[side][d] * 8, &k);
            if (rc == SL_OK)
                rc = sl__mg_scratch_alloc(m, d, &sc[d], total[side][d] * 8, &v);
            if (rc < 0)
                break;
            mv[side].dst[0][d] = k;
            mv[side].dst[1][d] = v;
            if (side == 0)
                lj[d].rk = k, lj[d].rv = v;
            else
                lj[d].sk = k, lj[d].sv = v;
        }
    }
    if (rc == SL_OK && op.packets && (rc = sl__mg_sync_all(m)) == SL_OK) {
        for (int side = 0; side < 2 && rc == SL_OK; side++) {
            sl_xchg_stats st = {0};
            rc = sl__mg_exchange(m, &mv[side], &op, &st);
            out->xchg.packets += st.packets;
            out->xchg.bytes += st.bytes;
            out->xchg.seconds += st.seconds;
        }
    } else {
        for (int side = 0; side < 2 && rc == SL_OK; side++)
            rc = sl__mg_exchange_start(m, &mv[side], &xf[side]);
    }
    /* 5. each device joins its partitions once its own rows landed (its stream waits for
     * the copies into it), all devices at once; then the counts */
    for (int d = 0; d < n && rc == SL_OK; d++)
        if ((rc = sl__mdev_use(m, d)) == SL_OK)
            rc = join_enqueue(m, d, &sc[d], kind, &lj[d], out);
    for (int d = 0; d < n && rc == SL_OK; d++)
        if ((rc = sl__mdev_use(m, d)) == SL_OK)
            rc = join_collect(m, d, kind, &lj[d], out);
    for (int side = 0; side < 2; side++) {
        int fr = sl__mg_exchange_finish(m, &xf[side], &out->xchg);
        rc = rc < 0 ? rc : fr;
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
