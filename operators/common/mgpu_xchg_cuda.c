/* The exchange step of the multi-device join and sort (mgpu.h) in packets: one sender
 * and one receiver thread per device over the engine's exchange transport (with
 * o->packets; the direct copies of mgpu_direct_cuda.c otherwise). Columns are channels,
 * sent one after another by every sender (a barrier between them), so that a receiver
 * draining column c never waits on credits held by packets of column c + 1. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "common/mgpu.h"

int sl__mg_cuda_fail(cudaError_t e, const char *what, const char *file, int line)
{
    return sl__set_last_error(SL_EDEVICE, "%s (%s) in %s at %s:%d", cudaGetErrorName(e),
                              cudaGetErrorString(e), what, file, line);
}

struct sl__mg_opts sl__mg_opts_resolve(const struct sl__mg_opts *o)
{
    struct sl__mg_opts r = o ? *o : (struct sl__mg_opts){0};
    if (r.packet_bytes == 0)
        r.packet_bytes = (size_t)4 << 20;
    if (r.credits <= 0)
        r.credits = 4;
    if (r.part_bits <= 0)
        r.part_bits = 10;
    if (r.link_gbps <= 0)
        r.link_gbps = SL__MG_LINK_GBPS;
    if (r.chunk_rows == 0)
        r.chunk_rows = (int64_t)1 << 20;
    if (r.chunks_in_flight <= 0)
        r.chunks_in_flight = 2;
    return r;
}

struct shared {
    struct sl__mdev *m;
    const struct sl__mg_move *mv;
    struct sl__mg_opts o;
    void *x;
    _Atomic int err;
    char msg[256]; /* the first error's message (threads' last errors are their own) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int arrived[SL__MG_MAX_COLS]; /* senders done with column c (a barrier that a sender
                                   * which never started passes at once) */
};

struct role {
    struct shared *sh;
    int dev;
    int rc;
};

static int fail(struct shared *sh, int rc)
{
    int none = 0;
    if (atomic_compare_exchange_strong(&sh->err, &none, rc)) {
        pthread_mutex_lock(&sh->mu);
        snprintf(sh->msg, sizeof sh->msg, "%s", sl_last_errmsg());
        pthread_mutex_unlock(&sh->mu);
    }
    return rc;
}

static void nap(void)
{
    struct timespec ts = {0, 20000}; /* 20 us: a receiver frees a slot in about that */
    nanosleep(&ts, NULL);
}

static int send_rows(struct shared *sh, int s, int d, int c)
{
    const sl_xchg_transport *t = &sh->m->xchg;
    const struct sl__mg_move *mv = sh->mv;
    int n = sh->m->n, w = mv->width[c];
    int64_t rows = mv->count[s * n + d], from = mv->from[s * n + d];
    int64_t prow = sl__mg_packet_rows(sh->o.packet_bytes, w);
    for (int64_t k = 0; k < rows; k += prow) {
        int64_t r = rows - k < prow ? rows - k : prow;
        sl_xchg_packet p = {.src = s, .dst = d, .channel = c, .mem = SL_XCHG_DEVICE,
                            .device = sh->m->ordinal[s],
                            .data = (char *)mv->src[c][s] + (from + k) * w,
                            .bytes = (size_t)(r * w), .rows = r};
        int rc;
        while ((rc = t->send(sh->x, &p)) == SL_EBUSY) {
            if (atomic_load(&sh->err))
                return atomic_load(&sh->err);
            nap();
        }
        if (rc < 0)
            return fail(sh, rc);
    }
    return SL_OK;
}

/* Sender s is done with column c; waits until every sender is. */
static void column_done(struct shared *sh, int s, int c, bool wait)
{
    sh->m->xchg.close_channel(sh->x, s, c); /* also after an error: receivers must finish */
    pthread_mutex_lock(&sh->mu);
    sh->arrived[c]++;
    pthread_cond_broadcast(&sh->cv);
    while (wait && sh->arrived[c] < sh->m->n)
        pthread_cond_wait(&sh->cv, &sh->mu);
    pthread_mutex_unlock(&sh->mu);
}

static void *sender(void *arg)
{
    struct role *ro = arg;
    struct shared *sh = ro->sh;
    const sl_xchg_transport *t = &sh->m->xchg;
    int s = ro->dev, rc = sl__mdev_use(sh->m, s);
    if (rc < 0)
        fail(sh, rc);
    for (int c = 0; c < sh->mv->n_cols; c++) {
        for (int d = 0; d < sh->m->n && rc == SL_OK && !atomic_load(&sh->err); d++)
            rc = send_rows(sh, s, d, c);
        column_done(sh, s, c, true);
    }
    int w = t->wait_sent(sh->x, s);
    ro->rc = rc < 0 ? rc : (w < 0 ? fail(sh, w) : SL_OK);
    return NULL;
}

static void *receiver(void *arg)
{
    struct role *ro = arg;
    struct shared *sh = ro->sh;
    const sl_xchg_transport *t = &sh->m->xchg;
    const struct sl__mg_move *mv = sh->mv;
    int d = ro->dev, n = sh->m->n, rc = sl__mdev_use(sh->m, d);
    cudaStream_t st = sh->m->stream[d];
    for (int c = 0; c < mv->n_cols && rc == SL_OK; c++) {
        int64_t got[SL__MG_MAX_DEV] = {0};
        for (;;) {
            sl_xchg_packet p;
            bool done = false;
            if ((rc = t->recv(sh->x, d, c, &p, &done)) < 0 || done)
                break;
            int64_t at = mv->base[p.src * n + d] + got[p.src];
            got[p.src] += p.rows;
            if (got[p.src] > mv->count[p.src * n + d]) {
                rc = sl__set_last_error(SL_EINTERNAL, "exchange: device %d got more rows "
                                        "from %d than planned", d, p.src);
            } else if (p.bytes > 0) {
                MG_CUDA(rc, cudaMemcpyAsync((char *)mv->dst[c][d] + at * mv->width[c], p.data,
                                            p.bytes, cudaMemcpyDefault, st));
                if (rc == SL_OK)
                    MG_CUDA(rc, cudaStreamSynchronize(st)); /* before the slot goes back */
            }
            t->release(sh->x, &p);
            if (rc < 0)
                break;
        }
    }
    ro->rc = rc < 0 ? fail(sh, rc) : SL_OK;
    return NULL;
}

int sl__mg_exchange(struct sl__mdev *m, const struct sl__mg_move *mv,
                    const struct sl__mg_opts *o, sl_xchg_stats *stats)
{
    if (!o || !o->packets) {
        struct sl__mg_xfer x;
        *stats = (sl_xchg_stats){0};
        int rc = sl__mg_exchange_start(m, mv, &x);
        int fr = sl__mg_exchange_finish(m, &x, stats);
        return rc < 0 ? rc : fr;
    }
    struct shared sh = {.m = m, .mv = mv, .o = sl__mg_opts_resolve(o)};
    int n = m->n;
    size_t widest = 0;
    for (int c = 0; c < mv->n_cols; c++)
        widest = (size_t)mv->width[c] > widest ? (size_t)mv->width[c] : widest;
    if (sh.o.packet_bytes < widest)
        sh.o.packet_bytes = widest;
    sl_xchg_config cfg = {.n = n, .channels = mv->n_cols, .credits = sh.o.credits,
                          .packet_bytes = sh.o.packet_bytes};
    int rc = m->xchg.open(m->xchg.ctx, &cfg, &sh.x);
    if (rc < 0)
        return rc;
    atomic_init(&sh.err, 0);
    pthread_mutex_init(&sh.mu, NULL);
    pthread_cond_init(&sh.cv, NULL);
    struct role roles[2 * SL__MG_MAX_DEV];
    pthread_t th[2 * SL__MG_MAX_DEV];
    bool started[2 * SL__MG_MAX_DEV] = {0};
    for (int i = 0; i < 2 * n; i++) {
        roles[i] = (struct role){.sh = &sh, .dev = i % n};
        started[i] = pthread_create(&th[i], NULL, i < n ? sender : receiver, &roles[i]) == 0;
        if (!started[i]) {
            fail(&sh, sl__set_last_error(SL_ENOMEM, "exchange: cannot start a thread"));
            for (int c = 0; i < n && c < mv->n_cols; c++) /* its ends, so nobody waits */
                column_done(&sh, i, c, false);
        }
    }
    for (int i = 0; i < 2 * n; i++)
        if (started[i])
            pthread_join(th[i], NULL);
    int crc = m->xchg.close(sh.x, stats);
    pthread_cond_destroy(&sh.cv);
    pthread_mutex_destroy(&sh.mu);
    int err = atomic_load(&sh.err);
    if (err < 0)
        return sl__set_last_error(err, "%s", sh.msg);
    return crc;
}
