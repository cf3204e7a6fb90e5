/* The in-process exchange transport (exchange.h): n participants of one process, each
 * packet copied into transport-owned memory on send, queued per (receiver, channel),
 * and freed on release. It tests the exchange logic without MPI and carries single-rank
 * runs.
 *
 * One mutex guards an exchange; receivers wait on its condition variable in slices of
 * WAIT_SLICE_NS so that the timeout and the cancel callback are seen. Credits count the
 * packets in flight from one sender to one receiver. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "exchange.h"
#include "exec_int.h"
#include "internal.h"

#define WAIT_SLICE_NS 20000000L

struct lpkt {
    struct lpkt *next;
    sl_xchg_packet p;
};

struct lqueue {
    struct lpkt *head, *tail;
};

struct local_xchg {
    sl_xchg_config cfg;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct lqueue *queues; /* [dst * channels + ch] */
    int *closed;           /* [ch]: senders that closed ch */
    int *inflight;         /* [src * n + dst] */
    uint64_t *seq;         /* [(src * n + dst) * channels + ch] */
    sl_xchg_stats stats;
    int64_t t0;
};

static void local_participants(void *ctx, int *first, int *count)
{
    *first = 0;
    *count = *(int *)ctx;
}

static void xchg_free(struct local_xchg *x)
{
    int nq = x->cfg.n * x->cfg.channels;
    for (int i = 0; x->queues && i < nq; i++) {
        for (struct lpkt *k = x->queues[i].head, *next; k; k = next) {
            next = k->next;
            sl__free(k->p.data, k->p.bytes);
            sl__free(k, sizeof *k);
        }
    }
    sl__free(x->queues, 0);
    sl__free(x->closed, 0);
    sl__free(x->inflight, 0);
    sl__free(x->seq, 0);
    pthread_cond_destroy(&x->cv);
    pthread_mutex_destroy(&x->mu);
    sl__free(x, sizeof *x);
}

static int local_open(void *ctx, const sl_xchg_config *cfg, void **out)
{
    int n = *(int *)ctx;
    if (cfg->n != n || cfg->channels < 1 || cfg->credits < 1)
        return sl__set_last_error(SL_EINVAL, "exchange: %d participants, %d channels and "
                                  "%d credits asked of a %d-participant local transport",
                                  cfg->n, cfg->channels, cfg->credits, n);
    struct local_xchg *x = sl__calloc(1, sizeof *x);
    if (!x)
        return SL_ENOMEM;
    x->cfg = *cfg;
    pthread_mutex_init(&x->mu, NULL);
    pthread_cond_init(&x->cv, NULL);
    x->queues = sl__calloc((size_t)n * cfg->channels, sizeof *x->queues);
    x->closed = sl__calloc((size_t)cfg->channels, sizeof *x->closed);
    x->inflight = sl__calloc((size_t)n * n, sizeof *x->inflight);
    x->seq = sl__calloc((size_t)n * n * cfg->channels, sizeof *x->seq);
    if (!x->queues || !x->closed || !x->inflight || !x->seq) {
        xchg_free(x);
        return SL_ENOMEM;
    }
    x->t0 = sl__now_ns();
    *out = x;
    return SL_OK;
}

static bool bad_packet(const struct local_xchg *x, const sl_xchg_packet *p)
{
    return p->src < 0 || p->src >= x->cfg.n || p->dst < 0 || p->dst >= x->cfg.n ||
           p->channel < 0 || p->channel >= x->cfg.channels || p->mem != SL_XCHG_HOST ||
           p->bytes > x->cfg.packet_bytes;
}

static int local_send(void *xv, sl_xchg_packet *p)
{
    struct local_xchg *x = xv;
    if (bad_packet(x, p))
        return sl__set_last_error(SL_EINVAL, "exchange: packet %d -> %d on channel %d (%zu "
                                  "bytes) does not fit the exchange", p->src, p->dst,
                                  p->channel, p->bytes);
    int n = x->cfg.n;
    pthread_mutex_lock(&x->mu);
    if (x->inflight[p->src * n + p->dst] >= x->cfg.credits) {
        pthread_mutex_unlock(&x->mu);
        return SL_EBUSY;
    }
    x->inflight[p->src * n + p->dst]++; /* reserved; the copy runs unlocked */
    pthread_mutex_unlock(&x->mu);
    struct lpkt *k = sl__malloc(sizeof *k);
    void *copy = sl__malloc(p->bytes ? p->bytes : 1);
    if (!k || !copy) {
        sl__free(k, sizeof *k);
        sl__free(copy, p->bytes);
        pthread_mutex_lock(&x->mu);
        x->inflight[p->src * n + p->dst]--;
        pthread_mutex_unlock(&x->mu);
        return SL_ENOMEM;
    }
    memcpy(copy, p->data, p->bytes);
    k->next = NULL;
    k->p = *p;
    k->p.data = copy;
    pthread_mutex_lock(&x->mu);
    k->p.seq = p->seq = x->seq[(p->src * n + p->dst) * x->cfg.channels + p->channel]++;
    struct lqueue *q = &x->queues[p->dst * x->cfg.channels + p->channel];
    if (q->tail)
        q->tail->next = k;
    else
        q->head = k;
    q->tail = k;
    x->stats.packets++;
    x->stats.bytes += p->bytes;
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
    return SL_OK;
}

static int local_wait_sent(void *xv, int src)
{
    (void)xv;
    (void)src;
    return SL_OK; /* every packet was copied by send */
}

static int local_close_channel(void *xv, int src, int ch)
{
    struct local_xchg *x = xv;
    if (src < 0 || src >= x->cfg.n || ch < 0 || ch >= x->cfg.channels)
        return SL_EINVAL;
    pthread_mutex_lock(&x->mu);
    x->closed[ch]++;
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
    return SL_OK;
}

/* Pops the next packet of (dst, ch) into *out; the caller holds mu. */
static bool pop_locked(struct local_xchg *x, int dst, int ch, sl_xchg_packet *out)
{
    struct lqueue *q = &x->queues[dst * x->cfg.channels + ch];
    struct lpkt *k = q->head;
    if (!k)
        return false;
    q->head = k->next;
    if (!q->head)
        q->tail = NULL;
    *out = k->p;
    sl__free(k, sizeof *k);
    return true;
}

static int local_try_recv(void *xv, int dst, int ch, sl_xchg_packet *out)
{
    struct local_xchg *x = xv;
    if (dst < 0 || dst >= x->cfg.n || ch < 0 || ch >= x->cfg.channels)
        return SL_EINVAL;
    pthread_mutex_lock(&x->mu);
    bool got = pop_locked(x, dst, ch, out);
    pthread_mutex_unlock(&x->mu);
    return got;
}

static int local_recv(void *xv, int dst, int ch, sl_xchg_packet *out, bool *done)
{
    struct local_xchg *x = xv;
    if (dst < 0 || dst >= x->cfg.n || ch < 0 || ch >= x->cfg.channels)
        return SL_EINVAL;
    int64_t start = sl__now_ns();
    int rc = SL_OK;
    *done = false;
    pthread_mutex_lock(&x->mu);
    while (!pop_locked(x, dst, ch, out)) {
        if (x->closed[ch] == x->cfg.n) {
            *done = true;
            break;
        }
        if (x->cfg.cancelled && x->cfg.cancelled(x->cfg.cancel_arg)) {
            rc = SL_ECANCELED;
            break;
        }
        int64_t now = sl__now_ns();
        if (x->cfg.timeout_s > 0 && (double)(now - start) / 1e9 > x->cfg.timeout_s) {
            rc = sl__set_last_error(SL_EIO, "exchange: participant %d got no packet on "
                                    "channel %d for %.1f s (%d of %d senders done)", dst, ch,
                                    x->cfg.timeout_s, x->closed[ch], x->cfg.n);
            break;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += WAIT_SLICE_NS;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        int e = pthread_cond_timedwait(&x->cv, &x->mu, &ts);
        (void)e; /* ETIMEDOUT: look again */
    }
    pthread_mutex_unlock(&x->mu);
    return rc;
}

static void local_release(void *xv, sl_xchg_packet *p)
{
    struct local_xchg *x = xv;
    sl__free(p->data, p->bytes);
    p->data = NULL;
    pthread_mutex_lock(&x->mu);
    x->inflight[p->src * x->cfg.n + p->dst]--;
    pthread_mutex_unlock(&x->mu);
}

static int local_close(void *xv, sl_xchg_stats *stats)
{
    struct local_xchg *x = xv;
    if (!x)
        return SL_OK;
    if (stats) {
        *stats = x->stats;
        stats->seconds = (double)(sl__now_ns() - x->t0) / 1e9;
    }
    xchg_free(x);
    return SL_OK;
}

int sl__xchg_local_create(int n, sl_xchg_transport **out)
{
    *out = NULL;
    if (n < 1)
        return sl__set_last_error(SL_EINVAL, "exchange: %d participants", n);
    sl_xchg_transport *t = sl__calloc(1, sizeof *t + sizeof(int));
    if (!t)
        return SL_ENOMEM;
    int *np = (int *)(t + 1);
    *np = n;
    *t = (sl_xchg_transport){.name = "local", .ctx = np, .local = local_participants,
                             .open = local_open, .send = local_send,
                             .wait_sent = local_wait_sent, .close_channel = local_close_channel,
                             .recv = local_recv, .release = local_release, .close = local_close,
                             .try_recv = local_try_recv};
    *out = t;
    return SL_OK;
}

void sl__xchg_local_destroy(sl_xchg_transport *t)
{
    sl__free(t, sizeof *t + sizeof(int));
}
