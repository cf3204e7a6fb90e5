/* The direct exchange between the devices of one process (mgpu.h, sl__mg_exchange_start):
 * senders copy straight into the receivers' final arrays, ordered by events instead of
 * host waits. Between logical devices of one GPU the packet exchange paid about 40 us a
 * packet in host round trips (an event wait for the slot, a copy out of the slot and a
 * stream wait before the slot went back, a 20 us nap on a missing credit): here a copy
 * costs its enqueue, and the bytes move once instead of twice. */
#include <string.h>

#include "common/mgpu.h"
#include "sluice_k/columns.h"

int sl__mg_event_new(void **e, bool timing)
{
    int rc;
    cudaEvent_t ev = NULL;
    MG_CUDA(rc, cudaEventCreateWithFlags(&ev, timing ? cudaEventDefault
                                                     : cudaEventDisableTiming));
    *e = rc < 0 ? NULL : ev;
    return rc;
}

int sl__mg_copy(struct sl__mdev *m, int s, int d, void *dst, const void *src, size_t bytes,
                void *stream, struct sl__mg_xfer *x)
{
    int rc;
    if (bytes == 0)
        return SL_OK;
    if (m->ordinal[s] == m->ordinal[d]) /* logical devices of one GPU */
        MG_CUDA(rc, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
    else
        MG_CUDA(rc, cudaMemcpyPeerAsync(dst, m->ordinal[d], src, m->ordinal[s], bytes, stream));
    x->packets++;
    x->bytes += bytes;
    return rc;
}

/* The copy of column c's rows that sender s sends receiver d. */
static struct sl_k_copy_range range_of(const struct sl__mg_move *mv, int c, int s, int d,
                                       int n)
{
    int64_t w = mv->width[c];
    return (struct sl_k_copy_range){(const char *)mv->src[c][s] + mv->from[s * n + d] * w,
                                    (char *)mv->dst[c][d] + mv->base[s * n + d] * w,
                                    mv->count[s * n + d] * w};
}

/* Counts k ranges that one kernel copies as the packets and bytes they move. */
static void count_ranges(struct sl__mg_xfer *x, const struct sl_k_copy_range *r, int k)
{
    for (int i = 0; i < k; i++) {
        x->packets += r[i].bytes > 0;
        x->bytes += (uint64_t)r[i].bytes;
    }
}

int sl__mg_copy_all(struct sl__mdev *m, int s, const int *to,
                    const struct sl_k_copy_range *r, int k, int each, void *stream,
                    struct sl__mg_xfer *x)
{
    int rc = SL_OK, one_gpu = !each && k <= SL_K_COPY_RANGES_MAX;
    for (int i = 0; i < k; i++)
        one_gpu &= m->ordinal[to[i]] == m->ordinal[s];
    if (!one_gpu) {
        for (int i = 0; i < k && rc == SL_OK; i++)
            rc = sl__mg_copy(m, s, to[i], r[i].dst, r[i].src, (size_t)r[i].bytes, stream, x);
        return rc;
    }
    count_ranges(x, r, k);
    MG_CUDA(rc, sl_k_copy_ranges(r, k, stream));
    return rc;
}

/* Sender s's ranges of every column for every receiver (the farthest first, s itself
 * last), in one kernel where they share a GPU (sl__mg_copy_all). */
static int send_ranges(struct sl__mdev *m, const struct sl__mg_move *mv, int s,
                       struct sl__mg_xfer *x)
{
    int n = m->n, k = 0, to[SL__MG_MAX_COLS * SL__MG_MAX_DEV];
    struct sl_k_copy_range r[SL__MG_MAX_COLS * SL__MG_MAX_DEV];
    for (int c = 0; c < mv->n_cols; c++)
        for (int i = 0; i < n; i++) {
            int d = (s + 1 + i) % n;
            to[k] = d;
            r[k++] = range_of(mv, c, s, d, n);
        }
    return sl__mg_copy_all(m, s, to, r, k, mv->copies, m->stream[s], x);
}

/* Every range of every sender in one kernel on device 0's stream, when all devices are
 * logical devices of one GPU and the ranges fit one launch: no enqueue per sender, and
 * the senders cannot start apart (with a kernel per sender, the host's enqueue of each
 * in turn left the first one copying alone for tens of microseconds: the exchange of a
 * 2^24-row sort among 4 devices at 0.78 of the device copy). Device 0's stream waits
 * for every device's work so far (its ready event: the receivers' arrays exist, the
 * senders' rows are written); every other stream waits for the kernel. Its events are
 * t0[0] and t1[0]. 0 when it does not apply (nothing enqueued). */
static int start_one_kernel(struct sl__mdev *m, const struct sl__mg_move *mv,
                            struct sl__mg_xfer *x, int *rc)
{
    int n = m->n, k = 0;
    if (mv->copies || n < 2 || n * n * mv->n_cols > SL_K_COPY_RANGES_MAX)
        return 0;
    for (int d = 0; d < n; d++)
        if (m->ordinal[d] != m->ordinal[0])
            return 0;
    struct sl_k_copy_range r[SL_K_COPY_RANGES_MAX];
    for (int s = 0; s < n; s++)
        for (int c = 0; c < mv->n_cols; c++)
            for (int d = 0; d < n; d++)
                r[k++] = range_of(mv, c, s, d, n);
    count_ranges(x, r, k);
    cudaStream_t st = m->stream[0];
    if ((*rc = sl__mdev_use(m, 0)) < 0 || (*rc = sl__mg_event_new(&x->t0[0], true)) < 0 ||
        (*rc = sl__mg_event_new(&x->t1[0], true)) < 0)
        return 1;
    for (int d = 1; d < n && *rc == SL_OK; d++)
        MG_CUDA(*rc, cudaStreamWaitEvent(st, x->ready[d], 0));
    if (*rc == SL_OK)
        MG_CUDA(*rc, cudaEventRecord(x->t0[0], st));
    if (*rc == SL_OK)
        MG_CUDA(*rc, sl_k_copy_ranges(r, k, st));
    if (*rc == SL_OK)
        MG_CUDA(*rc, cudaEventRecord(x->t1[0], st));
    for (int d = 1; d < n && *rc == SL_OK; d++)
        if ((*rc = sl__mdev_use(m, d)) == SL_OK)
            MG_CUDA(*rc, cudaStreamWaitEvent(m->stream[d], x->t1[0], 0));
    return 1;
}

int sl__mg_exchange_start(struct sl__mdev *m, const struct sl__mg_move *mv,
                          struct sl__mg_xfer *x)
{
    int n = m->n, rc = SL_OK;
    memset(x, 0, sizeof *x);
    x->n = n;
    /* receivers: their arrays exist once their streams reach this point */
    for (int d = 0; d < n && rc == SL_OK; d++)
        if ((rc = sl__mdev_use(m, d)) == SL_OK &&
            (rc = sl__mg_event_new(&x->ready[d], false)) == SL_OK)
            MG_CUDA(rc, cudaEventRecord(x->ready[d], m->stream[d]));
    if (rc == SL_OK && start_one_kernel(m, mv, x, &rc))
        return rc;
    /* senders: after their own work so far and every receiver's allocation */
    for (int s = 0; s < n && rc == SL_OK; s++) {
        if ((rc = sl__mdev_use(m, s)) < 0 ||
            (rc = sl__mg_event_new(&x->t0[s], true)) < 0 ||
            (rc = sl__mg_event_new(&x->t1[s], true)) < 0)
            break;
        for (int d = 0; d < n && rc == SL_OK; d++)
            if (d != s)
                MG_CUDA(rc, cudaStreamWaitEvent(m->stream[s], x->ready[d], 0));
        if (rc == SL_OK)
            MG_CUDA(rc, cudaEventRecord(x->t0[s], m->stream[s]));
        if (rc == SL_OK)
            rc = send_ranges(m, mv, s, x);
        if (rc == SL_OK)
            MG_CUDA(rc, cudaEventRecord(x->t1[s], m->stream[s]));
    }
    /* receivers' next work: after every sender's copies */
    for (int d = 0; d < n && rc == SL_OK; d++) {
        if ((rc = sl__mdev_use(m, d)) < 0)
            break;
        for (int s = 0; s < n && rc == SL_OK; s++)
            if (s != d)
                MG_CUDA(rc, cudaStreamWaitEvent(m->stream[d], x->t1[s], 0));
    }
    return rc;
}

/* The exchange's time on the GPU: between devices of one GPU, from the first sender's
 * start to the last one's end (their events can be compared: one device; senders
 * overlap only in part, so the longest sender alone would leave out the others' time);
 * across GPUs the longest sender's own time. 0 when nothing was timed. */
static float span_ms(struct sl__mdev *m, const struct sl__mg_xfer *x)
{
    float longest = 0, first = 0, last = 0, ms;
    bool one_gpu = x->t0[0] != NULL;
    for (int s = 0; s < x->n; s++) {
        one_gpu &= m->ordinal[s] == m->ordinal[0] && x->t0[s] && x->t1[s];
        if (x->t0[s] && x->t1[s] && sl__mdev_use(m, s) == SL_OK &&
            cudaEventElapsedTime(&ms, x->t0[s], x->t1[s]) == cudaSuccess && ms > longest)
            longest = ms;
    }
    for (int s = 0; one_gpu && s < x->n; s++) { /* relative to sender 0's start */
        float a = 0, b = 0;
        one_gpu = cudaEventElapsedTime(&a, x->t0[0], x->t0[s]) == cudaSuccess &&
                  cudaEventElapsedTime(&b, x->t0[0], x->t1[s]) == cudaSuccess;
        first = a < first ? a : first;
        last = b > last ? b : last;
    }
    (void)cudaGetLastError(); /* a failed comparison is no error of the exchange */
    return one_gpu && last - first > longest ? last - first : longest;
}

int sl__mg_exchange_finish(struct sl__mdev *m, struct sl__mg_xfer *x, sl_xchg_stats *stats)
{
    int rc = SL_OK, r;
    for (int s = 0; s < x->n; s++) {
        if (x->t1[s] && sl__mdev_use(m, s) == SL_OK) {
            MG_CUDA(r, cudaEventSynchronize(x->t1[s]));
            rc = rc < 0 ? rc : r;
        }
    }
    float ms = rc == SL_OK ? span_ms(m, x) : 0;
    for (int s = 0; s < x->n; s++) {
        if (sl__mdev_use(m, s) < 0)
            continue;
        void *ev[3] = {x->ready[s], x->t0[s], x->t1[s]};
        for (int i = 0; i < 3; i++)
            if (ev[i])
                (void)cudaEventDestroy(ev[i]);
    }
    if (stats) {
        stats->packets += x->packets;
        stats->bytes += x->bytes;
        stats->seconds += ms * 1e-3;
    }
    memset(x, 0, sizeof *x);
    return rc;
}
