/* The in-process exchange (exchange_dev.h): credits, queues and channel ends over a
 * mover. One mutex guards the bookkeeping; copies and waits run outside it. */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "exchange_dev.h"
#include "internal.h"

struct entry {
    sl_xchg_packet p;
    int slot;
};

struct xchg {
    struct sl__xchg_mover *m;
    sl_xchg_config cfg;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int *free_slots;     /* [n * credits]: stack of free slot ids per receiver */
    int *n_free;         /* [n] */
    struct entry *queue; /* [n * channels * credits] rings */
    int *q_head, *q_len; /* [n * channels] */
    int *closed;         /* [n * channels]: senders that closed channel ch (per receiver) */
    bool *src_closed;    /* [n * channels]: src closed ch */
    uint64_t *seq;       /* [n * n * channels] */
    int err;
    sl_xchg_stats stats;
    double t0;
};

struct dev_transport {
    struct sl__xchg_mover m;
    int n;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void local_all(void *ctx, int *first, int *count)
{
    *first = 0;
    *count = ((struct dev_transport *)ctx)->n;
}

static int xchg_close(void *xp, sl_xchg_stats *stats);

static int xchg_open(void *ctx, const sl_xchg_config *cfg, void **out)
{
    struct dev_transport *dt = ctx;
    *out = NULL;
    if (!cfg || cfg->n != dt->n || cfg->channels < 1 || cfg->credits < 1 ||
        cfg->packet_bytes == 0)
        return sl__set_last_error(SL_EINVAL, "exchange: bad config (n %d of %d, channels %d, "
                                  "credits %d)", cfg ? cfg->n : -1, dt->n,
                                  cfg ? cfg->channels : -1, cfg ? cfg->credits : -1);
    struct xchg *x = sl__calloc(1, sizeof *x);
    if (!x)
        return SL_ENOMEM;
    size_t n = (size_t)cfg->n, ch = (size_t)cfg->channels, cr = (size_t)cfg->credits;
    x->cfg = *cfg; /* x->m stays NULL until the mover is open: close() then skips it */
    pthread_mutex_init(&x->mu, NULL);
    pthread_cond_init(&x->cv, NULL);
    x->free_slots = sl__calloc(n * cr, sizeof *x->free_slots);
    x->n_free = sl__calloc(n, sizeof *x->n_free);
    x->queue = sl__calloc(n * ch * cr, sizeof *x->queue);
    x->q_head = sl__calloc(n * ch, sizeof *x->q_head);
    x->q_len = sl__calloc(n * ch, sizeof *x->q_len);
    x->closed = sl__calloc(n * ch, sizeof *x->closed);
    x->src_closed = sl__calloc(n * ch, sizeof *x->src_closed);
    x->seq = sl__calloc(n * n * ch, sizeof *x->seq);
    if (!x->free_slots || !x->n_free || !x->queue || !x->q_head || !x->q_len || !x->closed ||
        !x->src_closed || !x->seq) {
        xchg_close(x, NULL);
        return SL_ENOMEM;
    }
    int rc = dt->m.open(dt->m.ctx, cfg->n, cfg->credits, cfg->packet_bytes);
    if (rc < 0) {
        xchg_close(x, NULL);
        return rc;
    }
    x->m = &dt->m;
    for (int d = 0; d < cfg->n; d++) {
        x->n_free[d] = cfg->credits;
        for (int k = 0; k < cfg->credits; k++)
            x->free_slots[d * cfg->credits + k] = d * cfg->credits + k;
    }
    x->t0 = now_s();
    *out = x;
    return SL_OK;
}

static int fail_locked(struct xchg *x, int rc)
{
    if (x->err == 0)
        x->err = rc;
    pthread_cond_broadcast(&x->cv);
    return rc;
}

static int xchg_send(void *xp, sl_xchg_packet *p)
{
    struct xchg *x = xp;
    const sl_xchg_config *c = &x->cfg;
    if (!p || p->src < 0 || p->src >= c->n || p->dst < 0 || p->dst >= c->n ||
        p->channel < 0 || p->channel >= c->channels || p->bytes > c->packet_bytes ||
        (p->bytes > 0 && !p->data))
        return sl__set_last_error(SL_EINVAL, "exchange: bad packet (src %d, dst %d, channel "
                                  "%d, %zu bytes)", p ? p->src : -1, p ? p->dst : -1,
                                  p ? p->channel : -1, p ? p->bytes : 0);
    pthread_mutex_lock(&x->mu);
    int rc = x->err;
    if (rc == 0 && x->src_closed[p->src * c->channels + p->channel])
        rc = sl__set_last_error(SL_ESTATE, "exchange: channel %d of %d already closed",
                                p->channel, p->src);
    if (rc < 0 || x->n_free[p->dst] == 0) {
        pthread_mutex_unlock(&x->mu);
        return rc < 0 ? rc : SL_EBUSY;
    }
    int slot = x->free_slots[p->dst * c->credits + --x->n_free[p->dst]];
    p->seq = x->seq[((size_t)p->src * c->n + p->dst) * c->channels + p->channel]++;
    pthread_mutex_unlock(&x->mu);

    rc = p->bytes > 0 ? x->m->copy(x->m->ctx, p, slot) : SL_OK;

    pthread_mutex_lock(&x->mu);
    if (rc < 0) {
        x->free_slots[p->dst * c->credits + x->n_free[p->dst]++] = slot;
        fail_locked(x, rc);
    } else {
        int q = p->dst * c->channels + p->channel;
        int at = (x->q_head[q] + x->q_len[q]++) % c->credits;
        x->queue[(size_t)q * c->credits + at] = (struct entry){*p, slot};
        x->stats.packets++;
        x->stats.bytes += p->bytes;
        pthread_cond_broadcast(&x->cv);
    }
    pthread_mutex_unlock(&x->mu);
    return rc;
}

static int xchg_wait_sent(void *xp, int src)
{
    struct xchg *x = xp;
    if (src < 0 || src >= x->cfg.n)
        return sl__set_last_error(SL_EINVAL, "exchange: no participant %d", src);
    int rc = x->m->drain(x->m->ctx, src);
    if (rc < 0) {
        pthread_mutex_lock(&x->mu);
        fail_locked(x, rc);
        pthread_mutex_unlock(&x->mu);
    }
    return rc;
}

static int xchg_close_channel(void *xp, int src, int ch)
{
    struct xchg *x = xp;
    const sl_xchg_config *c = &x->cfg;
    if (src < 0 || src >= c->n || ch < 0 || ch >= c->channels)
        return sl__set_last_error(SL_EINVAL, "exchange: no channel %d of %d", ch, src);
    pthread_mutex_lock(&x->mu);
    if (!x->src_closed[src * c->channels + ch]) {
        x->src_closed[src * c->channels + ch] = true;
        for (int d = 0; d < c->n; d++)
            x->closed[d * c->channels + ch]++;
        pthread_cond_broadcast(&x->cv);
    }
    pthread_mutex_unlock(&x->mu);
    return SL_OK;
}

static int xchg_recv(void *xp, int dst, int ch, sl_xchg_packet *out, bool *done)
{
    struct xchg *x = xp;
    const sl_xchg_config *c = &x->cfg;
    *done = false;
    if (dst < 0 || dst >= c->n || ch < 0 || ch >= c->channels)
        return sl__set_last_error(SL_EINVAL, "exchange: no channel %d of %d", ch, dst);
    int q = dst * c->channels + ch;
    pthread_mutex_lock(&x->mu);
    while (x->err == 0 && x->q_len[q] == 0 && x->closed[q] < c->n)
        pthread_cond_wait(&x->cv, &x->mu);
    int rc = x->err;
    struct entry e = {0};
    if (rc == 0 && x->q_len[q] == 0) {
        *done = true;
    } else if (rc == 0) {
        e = x->queue[(size_t)q * c->credits + x->q_head[q]];
        x->q_head[q] = (x->q_head[q] + 1) % c->credits;
        x->q_len[q]--;
    }
    pthread_mutex_unlock(&x->mu);
    if (rc < 0 || *done)
        return rc;
    if (e.p.bytes > 0 && (rc = x->m->landed(x->m->ctx, e.p.src, e.slot)) < 0) {
        pthread_mutex_lock(&x->mu);
        x->free_slots[dst * c->credits + x->n_free[dst]++] = e.slot;
        fail_locked(x, rc);
        pthread_mutex_unlock(&x->mu);
        return rc;
    }
    *out = e.p;
    out->mem = x->m->slot_mem;
    out->device = x->m->slot_device(x->m->ctx, dst);
    out->data = x->m->slot(x->m->ctx, e.slot);
    return SL_OK;
}

static void xchg_release(void *xp, sl_xchg_packet *p)
{
    struct xchg *x = xp;
    const sl_xchg_config *c = &x->cfg;
    if (!p || p->dst < 0 || p->dst >= c->n)
        return;
    for (int k = 0; k < c->credits; k++) {
        int s = p->dst * c->credits + k;
        if (x->m->slot(x->m->ctx, s) != p->data)
            continue;
        pthread_mutex_lock(&x->mu);
        x->free_slots[p->dst * c->credits + x->n_free[p->dst]++] = s;
        pthread_mutex_unlock(&x->mu);
        p->data = NULL;
        return;
    }
}

static int xchg_close(void *xp, sl_xchg_stats *stats)
{
    struct xchg *x = xp;
    if (!x)
        return SL_OK;
    int rc = x->err;
    if (x->m) {
        for (int s = 0; s < x->cfg.n; s++) {
            int r = x->m->drain(x->m->ctx, s);
            if (rc == 0 && r < 0)
                rc = r;
        }
        x->m->close(x->m->ctx);
    }
    if (stats) {
        *stats = x->stats;
        stats->seconds = now_s() - x->t0;
    }
    size_t n = (size_t)x->cfg.n, ch = (size_t)x->cfg.channels, cr = (size_t)x->cfg.credits;
    sl__free(x->free_slots, n * cr * sizeof *x->free_slots);
    sl__free(x->n_free, n * sizeof *x->n_free);
    sl__free(x->queue, n * ch * cr * sizeof *x->queue);
    sl__free(x->q_head, n * ch * sizeof *x->q_head);
    sl__free(x->q_len, n * ch * sizeof *x->q_len);
    sl__free(x->closed, n * ch * sizeof *x->closed);
    sl__free(x->src_closed, n * ch * sizeof *x->src_closed);
    sl__free(x->seq, n * n * ch * sizeof *x->seq);
    pthread_cond_destroy(&x->cv);
    pthread_mutex_destroy(&x->mu);
    sl__free(x, sizeof *x);
    return rc;
}

int sl__xchg_dev_create(const struct sl__xchg_mover *m, int n, sl_xchg_transport *out)
{
    if (!m || !out || n < 1)
        return sl__set_last_error(SL_EINVAL, "exchange: no mover or no participants");
    struct dev_transport *dt = sl__calloc(1, sizeof *dt);
    if (!dt)
        return SL_ENOMEM;
    dt->m = *m;
    dt->n = n;
    *out = (sl_xchg_transport){
        .name = m->name,
        .ctx = dt,
        .local = local_all,
        .open = xchg_open,
        .send = xchg_send,
        .wait_sent = xchg_wait_sent,
        .close_channel = xchg_close_channel,
        .recv = xchg_recv,
        .release = xchg_release,
        .close = xchg_close,
    };
    return SL_OK;
}

void sl__xchg_dev_destroy(sl_xchg_transport *t)
{
    if (!t || !t->ctx)
        return;
    struct dev_transport *dt = t->ctx;
    if (dt->m.destroy)
        dt->m.destroy(dt->m.ctx);
    sl__free(dt, sizeof *dt);
    t->ctx = NULL;
}
