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
        MG_CUDA(rc, sl_k_sort_pids(NULL, &tb, pid, pid_s, ids, ids_s, bits, n, st));
    if (rc == SL_OK)
        rc = sl__mg_scratch_alloc(m, d, tmp, (int64_t)tb, &temp);
    if (rc == SL_OK)
        MG_CUDA(rc, sl_k_sort_pids(temp, &tb, pid, pid_s, ids, ids_s, bits, n, st));
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

/* Step 3 of both ways: device d's local join sizes (lj), and SL_EBUDGET unless every
 * device's budget holds what it will receive and join, plus extra[d] bytes (what its
 * exchange still holds; NULL: nothing). */
static int check_rooms(struct sl__mdev *m, int kind, int64_t total[2][SL__MG_MAX_DEV],
                       const int64_t *extra, struct local *lj)
{
    int rc = SL_OK;
    for (int d = 0; d < m->n && rc == SL_OK; d++) {
        lj[d].nr = total[0][d], lj[d].ns = total[1][d];
        int64_t out_rows = lj[d].ns + (kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_LEFT
                                           ? lj[d].nr : 0);
        /* received rows (16 B), the build table (about 16 B a row), the output (28 B) */
        rc = sl__mg_check_room(m, d, 32 * lj[d].nr + 16 * lj[d].ns + 28 * out_rows +
                                         (extra ? extra[d] : 0));
    }
    return rc;
}

/* Step 5: every device's join enqueued, then their counts. */
static int local_joins(struct sl__mdev *m, struct sl__mg_scratch *sc, int kind,
                       struct local *lj, struct sl__mg_result *out)
{
    int rc = SL_OK;
    for (int d = 0; d < m->n && rc == SL_OK; d++)
        if ((rc = sl__mdev_use(m, d)) == SL_OK)
            rc = join_enqueue(m, d, &sc[d], kind, &lj[d], out);
    for (int d = 0; d < m->n && rc == SL_OK; d++)
        if ((rc = sl__mdev_use(m, d)) == SL_OK)
            rc = join_collect(m, d, kind, &lj[d], out);
    return rc;
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

/* Every device partitions all of its shares, then the exchange moves the partitions
 * (the packet exchange, or the direct one with chunk_rows -1). */
static int join_staged(struct sl__mdev *m, const struct sl__mg_table *r,
                       const struct sl__mg_table *s, int kind, struct sl__mg_opts op,
                       struct sl__mg_result *out)
{
    int n = m->n, bits = op.part_bits, rc = SL_OK;
    int64_t fanout = (int64_t)1 << bits;
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
    if (rc == SL_OK)
        rc = check_rooms(m, kind, total, NULL, lj);
    /* 4. the exchange: both sides' receive arrays, then both sides' copies enqueued */
    struct sl__mg_move mv[2];
    struct sl__mg_xfer xf[2];
    memset(xf, 0, sizeof xf);
    for (int side = 0; side < 2; side++) {
        mv[side] = (struct sl__mg_move){.n_cols = 2, .width = {8, 8}, .from = from[side],
                                        .count = count[side], .base = base[side],
                                        .copies = op.copies};
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
    if (rc == SL_OK)
        rc = local_joins(m, sc, kind, lj, out);
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

/* ---------------- the pipelined exchange ----------------
 * Each device first computes the partition numbers of its shares and their histogram
 * per chunk of chunk_rows rows (one pass over the keys); the host sums them, balances the
 * partition ranges and knows where every chunk's rows for every receiver land. Then each
 * device partitions chunk after chunk on its stream, and its copy stream sends each
 * chunk's ranges to the receivers as soon as the chunk is partitioned (an event per
 * chunk buffer), while the stream partitions the next: the exchange overlaps the
 * partitioning. Flow control: a device holds chunks_in_flight partitioned chunks; it
 * partitions chunk c + k into chunk c's buffer only once chunk c's copies are done (an
 * event recorded on the copy stream), and receivers' arrays hold exactly the rows
 * planned for them. */
#define PIPE_MAX_INFLIGHT 4
#define PIPE_TOO_BIG 1 /* join_pipelined: the devices' budgets hold the staged exchange only */

struct pipe_side {                 /* one side of one device */
    int64_t n, chunks;
    const void *k, *v;             /* the share on the device */
    uint32_t *pid;                 /* its partition numbers (device) */
    uint32_t *d_hist, *hist;       /* [chunks * fanout]: device, host */
    int64_t *cnt, *off;            /* host [chunks * n_dev]: rows of chunk c for receiver
                                    * d, and where they start in the partitioned chunk */
};

struct pipe {
    int n, bits, k, copies;
    int64_t fanout, cr;            /* chunk rows (the largest chunk) */
    struct pipe_side side[2][SL__MG_MAX_DEV];
    void *ready_ev[SL__MG_MAX_DEV][PIPE_MAX_INFLIGHT]; /* chunk buffer partitioned */
    void *free_ev[SL__MG_MAX_DEV][PIPE_MAX_INFLIGHT];  /* its copies done */
};

/* Phase 1 on device d: partition numbers and per-chunk histograms of both sides. */
static int pipe_hist(struct sl__mdev *m, int d, struct sl__mg_scratch *tmp, struct pipe *pp,
                     const struct sl__mg_table *const *t)
{
    cudaStream_t st = m->stream[d];
    int rc = SL_OK;
    for (int side = 0; side < 2 && rc == SL_OK; side++) {
        struct pipe_side *ps = &pp->side[side][d];
        ps->n = t[side]->n[d];
        ps->chunks = (ps->n + pp->cr - 1) / pp->cr;
        if (ps->n == 0)
            continue;
        if ((rc = sl__mg_share_on_device(m, d, tmp, t[side], &ps->k, &ps->v)) < 0 ||
            (rc = sl__mg_scratch_alloc(m, d, tmp, ps->n * 4, (void **)&ps->pid)) < 0 ||
            (rc = sl__mg_scratch_alloc(m, d, tmp, ps->chunks * pp->fanout * 4,
                                       (void **)&ps->d_hist)) < 0)
            return rc;
        MG_CUDA(rc, sl_k_part_ids(ps->k, 8, ps->n, pp->bits, 1, ps->pid, st));
        if (rc == SL_OK)
            MG_CUDA(rc, sl_k_part_hist(ps->pid, ps->n, pp->cr, pp->fanout, ps->d_hist, st));
    }
    return rc;
}

/* Phase 2 on the host: the histograms down, the balanced ranges, and each chunk's rows
 * per receiver (cnt, off); count[side] as plan_moves's, summed over the chunks. */
static int pipe_plan(struct sl__mdev *m, struct pipe *pp, int64_t *sizes, int *first,
                     int64_t count[2][SL__MG_MAX_DEV * SL__MG_MAX_DEV])
{
    int n = pp->n, rc = SL_OK;
    for (int side = 0; side < 2 && rc == SL_OK; side++) {
        for (int d = 0; d < n && rc == SL_OK; d++) {
            struct pipe_side *ps = &pp->side[side][d];
            size_t hb = (size_t)(ps->chunks * pp->fanout) * 4;
            ps->hist = malloc(hb ? hb : 1);
            ps->cnt = calloc((size_t)(ps->chunks * n) + 1, sizeof *ps->cnt);
            ps->off = calloc((size_t)(ps->chunks * n) + 1, sizeof *ps->off);
            if (!ps->hist || !ps->cnt || !ps->off)
                return sl__set_last_error(SL_ENOMEM, "multi-device join: out of memory");
            if (hb && (rc = sl__mdev_use(m, d)) == SL_OK)
                MG_CUDA(rc, cudaMemcpy(ps->hist, ps->d_hist, hb, cudaMemcpyDeviceToHost));
            for (int64_t i = 0; rc == SL_OK && i < ps->chunks * pp->fanout; i++)
                sizes[i % pp->fanout] += ps->hist[i];
        }
    }
    if (rc < 0)
        return rc;
    sl__mg_balance_ranges(sizes, (int)pp->fanout, n, first);
    for (int side = 0; side < 2; side++) {
        for (int s = 0; s < n; s++) {
            struct pipe_side *ps = &pp->side[side][s];
            for (int d = 0; d < n; d++)
                count[side][s * n + d] = 0;
            for (int64_t c = 0; c < ps->chunks; c++) {
                sl__mg_chunk_moves(ps->hist + c * pp->fanout, first, n, ps->cnt + c * n,
                                   ps->off + c * n);
                for (int d = 0; d < n; d++)
                    count[side][s * n + d] += ps->cnt[c * n + d];
            }
        }
    }
    return SL_OK;
}

/* Rows of device d's largest chunk. */
static int64_t pipe_chunk(const struct pipe *pp, int d)
{
    int64_t most = pp->side[0][d].n > pp->side[1][d].n ? pp->side[0][d].n : pp->side[1][d].n;
    return most < pp->cr ? most : pp->cr;
}

/* What the pipelined exchange holds on device d while it runs: the partition numbers
 * (4 B a row) and shares uploaded from the host (16 B), the chunk buffers (16 B a row
 * each) and the sort's (12 B a row and its scratch). */
static int64_t pipe_bytes(const struct pipe *pp, const struct sl__mg_table *const *t, int d)
{
    int64_t b = ((int64_t)pp->k * 16 + 12) * pipe_chunk(pp, d) + ((int64_t)1 << 20);
    for (int side = 0; side < 2; side++)
        b += pp->side[side][d].n * (t[side]->on_host ? 20 : 4);
    return b;
}

/* Phase 3 on sender s: each chunk partitioned on its stream into a chunk buffer, its
 * ranges copied to the receivers' arrays (dst[side][col][d] from row base[side][s * n +
 * d] on) on its copy stream. The copy stream waited for every receiver's arrays (x->ready)
 * before; x->t0[s] and x->t1[s] bracket its copies. */
static int pipe_send(struct sl__mdev *m, int s, struct sl__mg_scratch *tmp, struct pipe *pp,
                     void *dst[2][2][SL__MG_MAX_DEV],
                     int64_t base[2][SL__MG_MAX_DEV * SL__MG_MAX_DEV], struct sl__mg_xfer *x)
{
    int n = pp->n, rc;
    cudaStream_t st = m->stream[s], cp = m->copy[s];
    int64_t cr = pp->cr, chunk_max = pipe_chunk(pp, s);
    void *ids = NULL, *ids_s = NULL, *pid_s = NULL, *temp = NULL;
    void *kb[PIPE_MAX_INFLIGHT] = {0}, *vb[PIPE_MAX_INFLIGHT] = {0};
    size_t tb = 0;
    rc = SL_OK;
    if (chunk_max)
        MG_CUDA(rc, sl_k_sort_pids(NULL, &tb, NULL, NULL, NULL, NULL, pp->bits, chunk_max, st));
    if (rc == SL_OK && chunk_max &&
        ((rc = sl__mg_scratch_alloc(m, s, tmp, chunk_max * 4, &ids)) < 0 ||
         (rc = sl__mg_scratch_alloc(m, s, tmp, chunk_max * 4, &ids_s)) < 0 ||
         (rc = sl__mg_scratch_alloc(m, s, tmp, chunk_max * 4, &pid_s)) < 0 ||
         (rc = sl__mg_scratch_alloc(m, s, tmp, (int64_t)tb, &temp)) < 0))
        return rc;
    for (int b = 0; chunk_max && b < pp->k && rc == SL_OK; b++)
        if ((rc = sl__mg_scratch_alloc(m, s, tmp, chunk_max * 8, &kb[b])) == SL_OK)
            rc = sl__mg_scratch_alloc(m, s, tmp, chunk_max * 8, &vb[b]);
    if (rc == SL_OK)
        MG_CUDA(rc, cudaEventRecord(x->t0[s], cp));
    int64_t sent[2][SL__MG_MAX_DEV] = {{0}}, g = 0; /* rows sent per receiver; chunks */
    for (int side = 0; side < 2 && rc == SL_OK; side++) {
        const struct pipe_side *ps = &pp->side[side][s];
        for (int64_t c = 0; c < ps->chunks && rc == SL_OK; c++, g++) {
            int b = (int)(g % pp->k);
            int64_t lo = c * cr, rows = ps->n - lo < cr ? ps->n - lo : cr;
            if (g >= pp->k) /* flow control: chunk g - k's copies are done */
                MG_CUDA(rc, cudaStreamWaitEvent(st, pp->free_ev[s][b], 0));
            if (rc == SL_OK)
                MG_CUDA(rc, sl_k_iota_u32(ids, rows, (uint32_t)lo, st));
            if (rc == SL_OK)
                MG_CUDA(rc, sl_k_sort_pids(temp, &tb, ps->pid + lo, (uint32_t *)pid_s, ids, ids_s,
                                           pp->bits, rows, st));
            if (rc == SL_OK)
                MG_CUDA(rc, sl_k_gather_b64(ps->k, ids_s, kb[b], rows, st));
            if (rc == SL_OK)
                MG_CUDA(rc, sl_k_gather_b64(ps->v, ids_s, vb[b], rows, st));
            if (rc == SL_OK)
                MG_CUDA(rc, cudaEventRecord(pp->ready_ev[s][b], st));
            if (rc == SL_OK)
                MG_CUDA(rc, cudaStreamWaitEvent(cp, pp->ready_ev[s][b], 0));
            int to[2 * SL__MG_MAX_DEV], k = 0;
            struct sl_k_copy_range r[2 * SL__MG_MAX_DEV];
            for (int j = 0; j < n; j++) { /* the farthest first */
                int d = (s + 1 + j) % n;
                int64_t cnt = ps->cnt[c * n + d], from = ps->off[c * n + d];
                int64_t at = base[side][s * n + d] + sent[side][d];
                to[k] = to[k + 1] = d;
                r[k++] = (struct sl_k_copy_range){(const int64_t *)kb[b] + from,
                                                  (int64_t *)dst[side][0][d] + at, cnt * 8};
                r[k++] = (struct sl_k_copy_range){(const int64_t *)vb[b] + from,
                                                  (int64_t *)dst[side][1][d] + at, cnt * 8};
                sent[side][d] += cnt;
            }
            if (rc == SL_OK)
                rc = sl__mg_copy_all(m, s, to, r, k, pp->copies, cp, x);
            if (rc == SL_OK)
                MG_CUDA(rc, cudaEventRecord(pp->free_ev[s][b], cp));
        }
    }
    if (rc == SL_OK)
        MG_CUDA(rc, cudaEventRecord(x->t1[s], cp));
    /* the stream frees the chunk buffers (tmp) after the copies */
    if (rc == SL_OK)
        MG_CUDA(rc, cudaStreamWaitEvent(st, x->t1[s], 0));
    return rc;
}

/* The events of the pipelined exchange: made on each device (current) and destroyed. */
static int pipe_events(struct sl__mdev *m, struct pipe *pp, struct sl__mg_xfer *x, bool make)
{
    int rc = SL_OK;
    for (int d = 0; d < m->n; d++) {
        if (sl__mdev_use(m, d) < 0)
            continue;
        void **ev[3 + 2 * PIPE_MAX_INFLIGHT] = {&x->ready[d], &x->t0[d], &x->t1[d]};
        for (int b = 0; b < pp->k; b++) {
            ev[3 + 2 * b] = &pp->ready_ev[d][b];
            ev[4 + 2 * b] = &pp->free_ev[d][b];
        }
        for (int i = 0; i < 3 + 2 * pp->k; i++) {
            if (make && rc == SL_OK) {
                rc = sl__mg_event_new(ev[i], i == 1 || i == 2);
            } else if (!make && *ev[i] && (i >= 3)) { /* x's: sl__mg_exchange_finish's */
                (void)cudaEventDestroy(*ev[i]);
                *ev[i] = NULL;
            }
        }
    }
    return rc;
}

static int join_pipelined(struct sl__mdev *m, const struct sl__mg_table *r,
                          const struct sl__mg_table *s, int kind, struct sl__mg_opts op,
                          struct sl__mg_result *out)
{
    int n = m->n, rc = SL_OK;
    struct pipe *pp = calloc(1, sizeof *pp);
    int64_t *sizes = calloc((size_t)1 << op.part_bits, sizeof *sizes);
    struct sl__mg_scratch sc[SL__MG_MAX_DEV] = {0}, tmp[SL__MG_MAX_DEV] = {0};
    struct sl__mg_xfer x = {.n = n};
    const struct sl__mg_table *t[2] = {r, s};
    if (!pp || !sizes) {
        free(pp);
        free(sizes);
        return sl__set_last_error(SL_ENOMEM, "multi-device join: out of memory");
    }
    pp->n = n, pp->bits = op.part_bits, pp->fanout = (int64_t)1 << op.part_bits;
    pp->copies = op.copies;
    pp->k = op.chunks_in_flight < PIPE_MAX_INFLIGHT ? op.chunks_in_flight : PIPE_MAX_INFLIGHT;
    pp->cr = op.chunk_rows > UINT32_MAX ? UINT32_MAX : op.chunk_rows;
    rc = pipe_events(m, pp, &x, true);
    /* 1. partition numbers and histograms, every device at once */
    for (int d = 0; d < n && rc == SL_OK; d++)
        if ((rc = sl__mdev_use(m, d)) == SL_OK)
            rc = pipe_hist(m, d, &tmp[d], pp, t);
    int sr = sl__mg_sync_all(m);
    rc = rc < 0 ? rc : sr;
    /* 2. the plan */
    int first[SL__MG_MAX_DEV + 1];
    int64_t count[2][SL__MG_MAX_DEV * SL__MG_MAX_DEV], base[2][SL__MG_MAX_DEV * SL__MG_MAX_DEV];
    int64_t total[2][SL__MG_MAX_DEV], extra[SL__MG_MAX_DEV];
    if (rc == SL_OK)
        rc = pipe_plan(m, pp, sizes, first, count);
    if (rc == SL_OK) {
        int64_t both[SL__MG_MAX_DEV * SL__MG_MAX_DEV];
        for (int side = 0; side < 2; side++)
            sl__mg_recv_layout(count[side], n, base[side], total[side]);
        for (int i = 0; i < n * n; i++)
            both[i] = count[0][i] + count[1][i];
        sl__mg_cost(both, n, 16, op.link_gbps, &out->cost);
        sl__mg_cost_text(&out->cost, n, out->explain, sizeof out->explain);
        /* 3. what the exchange still holds on each device: its partition numbers (and
         * uploaded shares), the chunk buffers and the sort's scratch */
        for (int d = 0; d < n; d++)
            extra[d] = pipe_bytes(pp, t, d);
    }
    struct local lj[SL__MG_MAX_DEV] = {{0}};
    if (rc == SL_OK && (rc = check_rooms(m, kind, total, extra, lj)) == SL_EBUDGET &&
        check_rooms(m, kind, total, NULL, lj) == SL_OK)
        rc = PIPE_TOO_BIG; /* what the staged exchange frees first fits */
    /* 4. the receivers' arrays, then every sender's chunks */
    void *dst[2][2][SL__MG_MAX_DEV] = {{{0}}};
    for (int d = 0; d < n && rc == SL_OK; d++) {
        if ((rc = sl__mdev_use(m, d)) < 0)
            break;
        for (int side = 0; side < 2 && rc == SL_OK; side++)
            for (int c = 0; c < 2 && rc == SL_OK; c++)
                rc = sl__mg_scratch_alloc(m, d, &sc[d], total[side][d] * 8, &dst[side][c][d]);
        if (rc == SL_OK)
            MG_CUDA(rc, cudaEventRecord(x.ready[d], m->stream[d]));
        lj[d].rk = dst[0][0][d], lj[d].rv = dst[0][1][d];
        lj[d].sk = dst[1][0][d], lj[d].sv = dst[1][1][d];
    }
    for (int sd = 0; sd < n && rc == SL_OK; sd++) {
        if ((rc = sl__mdev_use(m, sd)) < 0)
            break;
        for (int d = 0; d < n && rc == SL_OK; d++)
            MG_CUDA(rc, cudaStreamWaitEvent(m->copy[sd], x.ready[d], 0));
        if (rc == SL_OK)
            rc = pipe_send(m, sd, &tmp[sd], pp, dst, base, &x);
    }
    /* receivers: after every sender's copies */
    for (int d = 0; d < n && rc == SL_OK; d++) {
        if ((rc = sl__mdev_use(m, d)) < 0)
            break;
        for (int sd = 0; sd < n && rc == SL_OK; sd++)
            MG_CUDA(rc, cudaStreamWaitEvent(m->stream[d], x.t1[sd], 0));
    }
    /* 5. the local joins, then the exchange's time */
    if (rc == SL_OK)
        rc = local_joins(m, sc, kind, lj, out);
    sr = sl__mg_sync_all(m);
    rc = sr < 0 && rc >= 0 ? sr : rc;
    for (int d = 0; d < n; d++) { /* the copy streams are done once the streams are */
        if (sl__mdev_use(m, d) == SL_OK) {
            MG_CUDA(sr, cudaStreamSynchronize(m->copy[d]));
            rc = sr < 0 && rc >= 0 ? sr : rc;
        }
    }
    pipe_events(m, pp, &x, false);
    int fr = sl__mg_exchange_finish(m, &x, &out->xchg); /* x's events too */
    rc = fr < 0 && rc >= 0 ? fr : rc;
    for (int d = 0; d < n; d++) {
        if (sl__mdev_use(m, d) == SL_OK) {
            sl__mg_scratch_free(m, d, &tmp[d]);
            sl__mg_scratch_free(m, d, &sc[d]);
        }
        for (int side = 0; side < 2; side++) {
            free(pp->side[side][d].hist);
            free(pp->side[side][d].cnt);
            free(pp->side[side][d].off);
        }
    }
    sr = sl__mg_sync_all(m);
    rc = sr < 0 && rc >= 0 ? sr : rc;
    free(sizes);
    free(pp);
    if (rc != SL_OK) /* PIPE_TOO_BIG included: the staged exchange makes its own */
        sl__mg_result_free(m, out);
    return rc;
}

int sl__mg_hash_join(struct sl__mdev *m, const struct sl__mg_table *r,
                     const struct sl__mg_table *s, int kind, const struct sl__mg_opts *o,
                     struct sl__mg_result *out)
{
    struct sl__mg_opts op = sl__mg_opts_resolve(o);
    memset(out, 0, sizeof *out);
    if (m->n > SL__MG_MAX_DEV || op.part_bits < 1 || op.part_bits > 20)
        return sl__set_last_error(SL_EINVAL, "multi-device join: %d devices, %d bits", m->n,
                                  op.part_bits);
    /* the pipelined exchange's histograms (sl_k_part_hist) hold 2^12 partitions; the
     * staged one needs none */
    if (!op.packets && op.chunk_rows >= 0 && op.part_bits <= 12) {
        int rc = join_pipelined(m, r, s, kind, op, out);
        if (rc != PIPE_TOO_BIG)
            return rc;
        memset(out, 0, sizeof *out);
    }
    /* the partitioning's temporaries go before anything is received */
    return join_staged(m, r, s, kind, op, out);
}
