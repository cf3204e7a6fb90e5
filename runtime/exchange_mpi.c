/* The MPI exchange transport (exchange.h): one participant per rank of a communicator.
 *
 * A packet is two messages on the exchange's data tag, a header (channel, rows, bytes,
 * close flag) then its bytes, both by MPI_Isend from the sender's buffer (MPI keeps
 * their order: messages between two ranks on one tag do not overtake each other). A
 * channel ends with a header whose close flag is set. The receiver probes the data tag,
 * takes header and bytes into memory of its own and queues them per channel; release()
 * frees them and sends the sender one credit on the credit tag. A sender holds
 * `credits` per receiver and gets SL_EBUSY without one, so no receiver ever holds more
 * than credits x senders packets.
 *
 * MPI calls are serialized by the transport's mutex (MPI_THREAD_SERIALIZED is enough),
 * taken for each call and never across a wait: waits poll with short sleeps, watching
 * the timeout and the cancel callback. */
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "exchange.h"
#include "exec_int.h"
#include "exchange_mpi.h"
#include "internal.h"

#define TAG_BASE 64
#define POLL_SLEEP_NS 20000L

struct mpi_ctx {
    MPI_Comm comm;
    int rank, size;
    pthread_mutex_t mu;
};

struct hdr {
    int32_t channel, close;
    int64_t rows;
    uint64_t bytes, seq;
};

/* A pending MPI_Isend; h (its header, when the request sends one) is freed on
 * completion: a header must stay where it is until then. */
struct sreq {
    MPI_Request r;
    struct hdr *h;
};

struct mpkt {
    struct mpkt *next;
    sl_xchg_packet p;
};

struct mpi_xchg {
    struct mpi_ctx *c;
    sl_xchg_config cfg;
    int dtag, ctag;
    struct mpkt **head, **tail; /* [ch] */
    int *closed;                /* [ch]: senders whose close arrived */
    int *credit;                /* [dst] */
    uint64_t *seq;              /* [dst * channels + ch] */
    struct sreq *reqs;          /* sends not yet complete */
    int n_reqs, cap_reqs;
    sl_xchg_stats stats;
    int64_t t0;
};

static void nap(void)
{
    struct timespec ts = {0, POLL_SLEEP_NS};
    nanosleep(&ts, NULL);
}

static int mpi_fail(int err, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(err, msg, &len);
    return sl__set_last_error(SL_EIO, "exchange: %s failed: %.*s", what, len, msg);
}

static void mpi_participants(void *ctx, int *first, int *count)
{
    *first = ((struct mpi_ctx *)ctx)->rank;
    *count = 1;
}

static void xchg_free(struct mpi_xchg *x)
{
    for (int ch = 0; x->head && ch < x->cfg.channels; ch++) {
        for (struct mpkt *k = x->head[ch], *next; k; k = next) {
            next = k->next;
            sl__free(k->p.data, k->p.bytes);
            sl__free(k, sizeof *k);
        }
    }
    sl__free(x->head, 0);
    sl__free(x->tail, 0);
    sl__free(x->closed, 0);
    sl__free(x->credit, 0);
    sl__free(x->seq, 0);
    for (int i = 0; x->reqs && i < x->n_reqs; i++)
        sl__free(x->reqs[i].h, sizeof(struct hdr));
    sl__free(x->reqs, 0);
    sl__free(x, sizeof *x);
}

static int mpi_open(void *ctx, const sl_xchg_config *cfg, void **out)
{
    struct mpi_ctx *c = ctx;
    if (cfg->n != c->size || cfg->channels < 1 || cfg->credits < 1 || cfg->tag < 0 ||
        cfg->tag > SL_XCHG_MAX_TAG)
        return sl__set_last_error(SL_EINVAL, "exchange: %d participants, %d channels, %d "
                                  "credits, tag %d asked of an MPI job of %d ranks", cfg->n,
                                  cfg->channels, cfg->credits, cfg->tag, c->size);
    struct mpi_xchg *x = sl__calloc(1, sizeof *x);
    if (!x)
        return SL_ENOMEM;
    x->c = c;
    x->cfg = *cfg;
    x->dtag = TAG_BASE + 2 * cfg->tag;
    x->ctag = x->dtag + 1;
    x->head = sl__calloc((size_t)cfg->channels, sizeof *x->head);
    x->tail = sl__calloc((size_t)cfg->channels, sizeof *x->tail);
    x->closed = sl__calloc((size_t)cfg->channels, sizeof *x->closed);
    x->credit = sl__calloc((size_t)c->size, sizeof *x->credit);
    x->seq = sl__calloc((size_t)c->size * cfg->channels, sizeof *x->seq);
    x->cap_reqs = 2 * (c->size * cfg->credits + 1) + 2 * c->size * cfg->channels;
    x->reqs = sl__calloc((size_t)x->cap_reqs, sizeof *x->reqs);
    if (!x->head || !x->tail || !x->closed || !x->credit || !x->seq || !x->reqs) {
        xchg_free(x);
        return SL_ENOMEM;
    }
    for (int d = 0; d < c->size; d++)
        x->credit[d] = cfg->credits;
    x->t0 = sl__now_ns();
    *out = x;
    return SL_OK;
}

/* Drops completed send requests and their headers. The caller holds the mutex. */
static int reap_locked(struct mpi_xchg *x)
{
    int j = 0, rc = SL_OK;
    for (int i = 0; i < x->n_reqs; i++) {
        int done = 0;
        int e = rc < 0 ? MPI_SUCCESS : MPI_Test(&x->reqs[i].r, &done, MPI_STATUS_IGNORE);
        if (e != MPI_SUCCESS)
            rc = mpi_fail(e, "MPI_Test");
        if (done)
            sl__free(x->reqs[i].h, sizeof(struct hdr));
        else
            x->reqs[j++] = x->reqs[i];
    }
    x->n_reqs = j;
    return rc;
}

/* Takes every credit and data message that has arrived. Returns the number of messages
 * taken or an error. The caller holds the mutex. */
static int poll_locked(struct mpi_xchg *x)
{
    int taken = 0, flag;
    MPI_Status st;
    for (;;) {
        int e = MPI_Iprobe(MPI_ANY_SOURCE, x->ctag, x->c->comm, &flag, &st);
        if (e != MPI_SUCCESS)
            return mpi_fail(e, "MPI_Iprobe");
        if (!flag)
            break;
        int32_t n;
        e = MPI_Recv(&n, 1, MPI_INT32_T, st.MPI_SOURCE, x->ctag, x->c->comm, MPI_STATUS_IGNORE);
        if (e != MPI_SUCCESS)
            return mpi_fail(e, "MPI_Recv (credit)");
        x->credit[st.MPI_SOURCE] += n;
        taken++;
    }
    for (;;) {
        int e = MPI_Iprobe(MPI_ANY_SOURCE, x->dtag, x->c->comm, &flag, &st);
        if (e != MPI_SUCCESS)
            return mpi_fail(e, "MPI_Iprobe");
        if (!flag)
            break;
        struct hdr h;
        int src = st.MPI_SOURCE;
        e = MPI_Recv(&h, sizeof h, MPI_BYTE, src, x->dtag, x->c->comm, MPI_STATUS_IGNORE);
        if (e != MPI_SUCCESS)
            return mpi_fail(e, "MPI_Recv (header)");
        taken++;
        if (h.channel < 0 || h.channel >= x->cfg.channels)
            return sl__set_last_error(SL_EFORMAT, "exchange: rank %d sent channel %d", src,
                                      (int)h.channel);
        if (h.close) {
            x->closed[h.channel]++;
            continue;
        }
        struct mpkt *k = sl__malloc(sizeof *k);
        void *data = sl__malloc(h.bytes ? h.bytes : 1);
        if (!k || !data) {
            sl__free(k, sizeof *k);
            sl__free(data, h.bytes);
            return SL_ENOMEM;
        }
        if (h.bytes) {
            e = MPI_Recv(data, (int)h.bytes, MPI_BYTE, src, x->dtag, x->c->comm,
                         MPI_STATUS_IGNORE);
            if (e != MPI_SUCCESS) {
                sl__free(k, sizeof *k);
                sl__free(data, h.bytes);
                return mpi_fail(e, "MPI_Recv (packet)");
            }
        }
        k->next = NULL;
        k->p = (sl_xchg_packet){.src = src, .dst = x->c->rank, .channel = h.channel,
                                .mem = SL_XCHG_HOST, .data = data, .bytes = h.bytes,
                                .rows = h.rows, .seq = h.seq};
        if (x->tail[h.channel])
            x->tail[h.channel]->next = k;
        else
            x->head[h.channel] = k;
        x->tail[h.channel] = k;
    }
    return taken;
}

/* Isends a header (and the bytes after it); the caller holds the mutex. */
static int isend_locked(struct mpi_xchg *x, int dst, const struct hdr *h, void *data)
{
    int rc = reap_locked(x);
    if (rc < 0)
        return rc;
    if (x->n_reqs + 2 > x->cap_reqs) {
        int cap = 2 * x->cap_reqs;
        struct sreq *r = sl__malloc((size_t)cap * sizeof *r);
        if (!r)
            return SL_ENOMEM;
        memcpy(r, x->reqs, (size_t)x->n_reqs * sizeof *r); /* handles may move */
        sl__free(x->reqs, 0);
        x->reqs = r;
        x->cap_reqs = cap;
    }
    struct hdr *hh = sl__malloc(sizeof *hh);
    if (!hh)
        return SL_ENOMEM;
    *hh = *h;
    struct sreq *q = &x->reqs[x->n_reqs];
    int e = MPI_Isend(hh, sizeof *hh, MPI_BYTE, dst, x->dtag, x->c->comm, &q->r);
    if (e != MPI_SUCCESS) {
        sl__free(hh, sizeof *hh);
        return mpi_fail(e, "MPI_Isend (header)");
    }
    q->h = hh;
    x->n_reqs++;
    if (h->close || !h->bytes)
        return SL_OK;
    q++;
    q->h = NULL;
    e = MPI_Isend(data, (int)h->bytes, MPI_BYTE, dst, x->dtag, x->c->comm, &q->r);
    if (e != MPI_SUCCESS)
        return mpi_fail(e, "MPI_Isend (packet)");
    x->n_reqs++;
    return SL_OK;
}

static int mpi_send(void *xv, sl_xchg_packet *p)
{
    struct mpi_xchg *x = xv;
    if (p->src != x->c->rank || p->dst < 0 || p->dst >= x->c->size || p->channel < 0 ||
        p->channel >= x->cfg.channels || p->mem != SL_XCHG_HOST ||
        p->bytes > x->cfg.packet_bytes || p->bytes > (size_t)INT32_MAX)
        return sl__set_last_error(SL_EINVAL, "exchange: packet %d -> %d on channel %d (%zu "
                                  "bytes) does not fit the exchange", p->src, p->dst,
                                  p->channel, p->bytes);
    pthread_mutex_lock(&x->c->mu);
    int rc = poll_locked(x);
    if (rc >= 0 && x->credit[p->dst] <= 0)
        rc = SL_EBUSY;
    if (rc >= 0) {
        p->seq = x->seq[p->dst * x->cfg.channels + p->channel]++;
        struct hdr h = {p->channel, 0, p->rows, p->bytes, p->seq};
        rc = isend_locked(x, p->dst, &h, p->data);
        if (rc >= 0) {
            x->credit[p->dst]--;
            x->stats.packets++;
            x->stats.bytes += p->bytes;
        }
    }
    pthread_mutex_unlock(&x->c->mu);
    return rc < 0 ? rc : SL_OK;
}

/* Waits (polling) until done(x) holds, taking arrivals meanwhile; SL_EIO after the
 * timeout without any progress, SL_ECANCELED when the callback says so. */
static int wait_until(struct mpi_xchg *x, int (*done)(struct mpi_xchg *x, int arg), int arg,
                      const char *what)
{
    int64_t last = sl__now_ns();
    for (;;) {
        pthread_mutex_lock(&x->c->mu);
        int rc = poll_locked(x);
        int before = x->n_reqs;
        if (rc >= 0) {
            int r2 = reap_locked(x);
            rc = r2 < 0 ? r2 : rc + (before - x->n_reqs);
        }
        int ok = rc >= 0 ? done(x, arg) : 0;
        pthread_mutex_unlock(&x->c->mu);
        if (rc < 0)
            return rc;
        if (ok)
            return SL_OK;
        int64_t now = sl__now_ns();
        if (rc > 0)
            last = now;
        if (x->cfg.cancelled && x->cfg.cancelled(x->cfg.cancel_arg))
            return SL_ECANCELED;
        if (x->cfg.timeout_s > 0 && (double)(now - last) / 1e9 > x->cfg.timeout_s)
            return sl__set_last_error(SL_EIO, "exchange: rank %d waited %.1f s for %s from "
                                      "the other ranks (one failed or stopped?)", x->c->rank,
                                      x->cfg.timeout_s, what);
        nap();
    }
}

static int all_sent(struct mpi_xchg *x, int unused)
{
    (void)unused;
    return x->n_reqs == 0;
}

static int mpi_wait_sent(void *xv, int src)
{
    (void)src;
    return wait_until(xv, all_sent, 0, "its sends to complete");
}

static int mpi_close_channel(void *xv, int src, int ch)
{
    struct mpi_xchg *x = xv;
    if (src != x->c->rank || ch < 0 || ch >= x->cfg.channels)
        return SL_EINVAL;
    struct hdr h = {ch, 1, 0, 0, 0};
    int rc = SL_OK;
    pthread_mutex_lock(&x->c->mu);
    for (int d = 0; d < x->c->size && rc >= 0; d++)
        rc = isend_locked(x, d, &h, NULL);
    pthread_mutex_unlock(&x->c->mu);
    return rc;
}

/* Pops the next packet of channel ch; the caller holds the mutex. */
static bool pop_locked(struct mpi_xchg *x, int ch, sl_xchg_packet *out)
{
    struct mpkt *k = x->head[ch];
    if (!k)
        return false;
    x->head[ch] = k->next;
    if (!k->next)
        x->tail[ch] = NULL;
    *out = k->p;
    sl__free(k, sizeof *k);
    return true;
}

static int mpi_try_recv(void *xv, int dst, int ch, sl_xchg_packet *out)
{
    struct mpi_xchg *x = xv;
    if (dst != x->c->rank || ch < 0 || ch >= x->cfg.channels)
        return SL_EINVAL;
    pthread_mutex_lock(&x->c->mu);
    int rc = poll_locked(x);
    if (rc >= 0)
        rc = pop_locked(x, ch, out);
    pthread_mutex_unlock(&x->c->mu);
    return rc;
}

static int packet_or_closed(struct mpi_xchg *x, int ch)
{
    return x->head[ch] || x->closed[ch] == x->c->size;
}

static int mpi_recv(void *xv, int dst, int ch, sl_xchg_packet *out, bool *done)
{
    struct mpi_xchg *x = xv;
    *done = false;
    if (dst != x->c->rank || ch < 0 || ch >= x->cfg.channels)
        return SL_EINVAL;
    int rc = wait_until(x, packet_or_closed, ch, "packets");
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&x->c->mu);
    if (!pop_locked(x, ch, out))
        *done = true;
    pthread_mutex_unlock(&x->c->mu);
    return SL_OK;
}

static void mpi_release(void *xv, sl_xchg_packet *p)
{
    struct mpi_xchg *x = xv;
    sl__free(p->data, p->bytes);
    p->data = NULL;
    int32_t one = 1;
    pthread_mutex_lock(&x->c->mu);
    /* Four bytes go eagerly: MPI_Send returns at once. An error here shows up as the
     * sender's timeout. */
    MPI_Send(&one, 1, MPI_INT32_T, p->src, x->ctag, x->c->comm);
    pthread_mutex_unlock(&x->c->mu);
}

static int mpi_close(void *xv, sl_xchg_stats *stats)
{
    struct mpi_xchg *x = xv;
    if (!x)
        return SL_OK;
    if (stats) {
        *stats = x->stats;
        stats->seconds = (double)(sl__now_ns() - x->t0) / 1e9;
    }
    pthread_mutex_lock(&x->c->mu);
    /* After an error, sends still pending are cancelled; credits still arriving are
     * taken so that a later exchange with this tag does not see them. */
    for (int i = 0; i < x->n_reqs; i++) {
        MPI_Cancel(&x->reqs[i].r);
        MPI_Request_free(&x->reqs[i].r);
    }
    pthread_mutex_unlock(&x->c->mu);
    xchg_free(x);
    return SL_OK;
}

/* ---------------- send_all: the bulk exchange ----------------
 * Sizes first (one message each way between every two ranks), then whether every rank's
 * budget holds its runs (one more each way), then every run in pieces
 * of at most BULK_PIECE bytes (an MPI count is an int), all posted at once and completed
 * by MPI_Testsome: MPI progresses every transfer while it polls, instead of one packet
 * per credit round trip. Its tag is apart from the packets' so that the two never
 * match each other; two exchanges at once use two tags. */
#define BULK_PIECE ((size_t)1 << 30)
#define BULK_TAG(x) (TAG_BASE + 2 * (SL_XCHG_MAX_TAG + 1) + (x)->cfg.tag)

static int64_t pieces(size_t bytes)
{
    return (int64_t)((bytes + BULK_PIECE - 1) / BULK_PIECE);
}

/* Completes the requests r[0..n) (polling with yields, the mutex held only per call);
 * SL_EIO after the timeout without any completing, SL_ECANCELED. On failure the rest are
 * cancelled and freed. */
static int bulk_wait(struct mpi_xchg *x, MPI_Request *r, int n, const char *what)
{
    int *idx = sl__malloc((size_t)(n ? n : 1) * sizeof *idx), rc = idx ? SL_OK : SL_ENOMEM;
    int64_t last = sl__now_ns();
    while (rc == SL_OK) {
        int done = 0;
        pthread_mutex_lock(&x->c->mu);
        int e = MPI_Testsome(n, r, &done, idx, MPI_STATUSES_IGNORE);
        pthread_mutex_unlock(&x->c->mu);
        if (e != MPI_SUCCESS)
            rc = mpi_fail(e, "MPI_Testsome");
        else if (done == MPI_UNDEFINED)
            break; /* every request complete */
        int64_t now = sl__now_ns();
        if (done > 0)
            last = now;
        else if (x->cfg.cancelled && x->cfg.cancelled(x->cfg.cancel_arg))
            rc = SL_ECANCELED;
        else if (x->cfg.timeout_s > 0 && (double)(now - last) / 1e9 > x->cfg.timeout_s)
            rc = sl__set_last_error(SL_EIO, "exchange: rank %d waited %.1f s for %s (one "
                                    "failed or stopped?)", x->c->rank, x->cfg.timeout_s, what);
        else
            sched_yield();
    }
    for (int i = 0; rc < 0 && i < n; i++) {
        if (r[i] == MPI_REQUEST_NULL)
            continue;
        pthread_mutex_lock(&x->c->mu);
        MPI_Cancel(&r[i]);
        MPI_Request_free(&r[i]);
        pthread_mutex_unlock(&x->c->mu);
    }
    sl__free(idx, 0);
    return rc;
}

/* Posts a receive (send = 0) or send of `bytes` at p with peer in pieces; *k counts the
 * requests. The caller holds the mutex. */
static int bulk_post(struct mpi_xchg *x, int send, int peer, void *p, size_t bytes,
                     MPI_Request *r, int *k)
{
    for (size_t at = 0; at < bytes; at += BULK_PIECE) {
        int len = (int)(bytes - at < BULK_PIECE ? bytes - at : BULK_PIECE);
        int e = send ? MPI_Isend((char *)p + at, len, MPI_BYTE, peer, BULK_TAG(x), x->c->comm,
                                 &r[*k])
                     : MPI_Irecv((char *)p + at, len, MPI_BYTE, peer, BULK_TAG(x), x->c->comm,
                                 &r[*k]);
        if (e != MPI_SUCCESS)
            return mpi_fail(e, send ? "MPI_Isend (run)" : "MPI_Irecv (run)");
        (*k)++;
    }
    return SL_OK;
}

/* One value each way between this rank and every other on the bulk tag: mine[d * stride]
 * (elem bytes of MPI type `type`) to rank d, rank d's into theirs[d * elem]. */
static int swap_with_all(struct mpi_xchg *x, const void *mine, size_t stride, void *theirs,
                         size_t elem, MPI_Datatype type, const char *what)
{
    int n = x->c->size, me = x->c->rank, k = 0, rc = SL_OK;
    MPI_Request *r = sl__malloc((size_t)(2 * n) * sizeof *r);
    if (!r)
        return SL_ENOMEM;
    pthread_mutex_lock(&x->c->mu);
    for (int d = 0; d < n && rc >= 0; d++) {
        if (d == me)
            continue;
        int e = MPI_Irecv((char *)theirs + (size_t)d * elem, 1, type, d, BULK_TAG(x),
                          x->c->comm, &r[k++]);
        if (e == MPI_SUCCESS)
            e = MPI_Isend((const char *)mine + (size_t)d * stride, 1, type, d, BULK_TAG(x),
                          x->c->comm, &r[k++]);
        if (e != MPI_SUCCESS)
            rc = mpi_fail(e, "MPI_Isend (a size or an answer)");
    }
    pthread_mutex_unlock(&x->c->mu);
    int w = bulk_wait(x, r, k, what); /* posted requests complete or are cancelled */
    sl__free(r, 0);
    return rc < 0 ? rc : w;
}

/* Every rank's sizes for this one: recv_bytes[s] = what rank s sends here. */
static int mpi_sizes_all(void *xv, const size_t *send_bytes, size_t *recv_bytes)
{
    struct mpi_xchg *x = xv;
    int n = x->c->size, me = x->c->rank;
    uint64_t *mine = sl__calloc((size_t)n, sizeof *mine);
    uint64_t *sizes = sl__calloc((size_t)n, sizeof *sizes);
    int rc = mine && sizes ? SL_OK : SL_ENOMEM;
    for (int d = 0; rc >= 0 && d < n; d++)
        mine[d] = send_bytes[d];
    if (rc >= 0)
        rc = swap_with_all(x, mine, sizeof *mine, sizes, sizeof *sizes, MPI_UINT64_T,
                           "the other ranks' sizes");
    for (int d = 0; rc >= 0 && d < n; d++)
        recv_bytes[d] = d == me ? send_bytes[me] : (size_t)sizes[d];
    sl__free(mine, 0);
    sl__free(sizes, 0);
    return rc;
}

/* Whether every rank said yes: after the sizes, before the runs (messages on one tag
 * between two ranks keep their order). */
static int mpi_agree(void *xv, bool mine, bool *all)
{
    struct mpi_xchg *x = xv;
    int n = x->c->size, me = x->c->rank, flag = mine ? 1 : 0;
    int *theirs = sl__calloc((size_t)n, sizeof *theirs);
    int rc = theirs ? swap_with_all(x, &flag, 0, theirs, sizeof *theirs, MPI_INT,
                                    "the other ranks' answers")
                    : SL_ENOMEM;
    *all = mine;
    for (int d = 0; rc >= 0 && d < n; d++)
        *all = *all && (d == me || theirs[d]);
    sl__free(theirs, 0);
    return rc;
}

static int mpi_send_all(void *xv, void **send, const size_t *send_bytes, void **recv,
                        const size_t *recv_bytes)
{
    struct mpi_xchg *x = xv;
    int n = x->c->size, me = x->c->rank, k = 0, rc = SL_OK;
    int64_t n_req = 0;
    for (int p = 0; p < n; p++) {
        recv[p] = NULL;
        n_req += p == me ? 0 : pieces(send_bytes[p]) + pieces(recv_bytes[p]);
    }
    for (int p = 0; rc >= 0 && p < n; p++)
        if (p != me && recv_bytes[p] && !(recv[p] = sl__malloc(recv_bytes[p])))
            rc = SL_ENOMEM;
    MPI_Request *r = rc >= 0 ? sl__malloc((size_t)(n_req ? n_req : 1) * sizeof *r) : NULL;
    rc = rc >= 0 && !r ? SL_ENOMEM : rc;
    pthread_mutex_lock(&x->c->mu);
    for (int p = 0; rc >= 0 && p < n; p++)
        if (p != me && (rc = bulk_post(x, 0, p, recv[p], recv_bytes[p], r, &k)) >= 0)
            rc = bulk_post(x, 1, p, send[p], send_bytes[p], r, &k);
    pthread_mutex_unlock(&x->c->mu);
    /* Posted requests complete (or are cancelled) whatever happened since. */
    int w = r ? bulk_wait(x, r, k, "the other ranks' rows") : SL_OK;
    rc = rc < 0 ? rc : w;
    if (rc >= 0) { /* its own run changes hands, no copy */
        recv[me] = send[me];
        send[me] = NULL;
    }
    for (int p = 0; p < n; p++) {
        x->stats.bytes += rc >= 0 ? send_bytes[p] : 0;
        x->stats.packets += rc >= 0 && send_bytes[p] ? (uint64_t)pieces(send_bytes[p]) : 0;
        if (rc < 0 && p != me) {
            sl__free(recv[p], recv_bytes[p]);
            recv[p] = NULL;
        }
    }
    sl__free(r, 0);
    return rc;
}

int sl__xchg_mpi_create(MPI_Comm comm, sl_xchg_transport **out)
{
    *out = NULL;
    struct mpi_ctx *c = sl__calloc(1, sizeof *c);
    sl_xchg_transport *t = sl__calloc(1, sizeof *t);
    if (!c || !t) {
        sl__free(c, sizeof *c);
        sl__free(t, sizeof *t);
        return SL_ENOMEM;
    }
    c->comm = comm;
    MPI_Comm_rank(comm, &c->rank);
    MPI_Comm_size(comm, &c->size);
    pthread_mutex_init(&c->mu, NULL);
    *t = (sl_xchg_transport){.name = "mpi", .ctx = c, .local = mpi_participants,
                             .open = mpi_open, .send = mpi_send, .wait_sent = mpi_wait_sent,
                             .close_channel = mpi_close_channel, .recv = mpi_recv,
                             .release = mpi_release, .close = mpi_close,
                             .try_recv = mpi_try_recv, .sizes_all = mpi_sizes_all,
                             .agree = mpi_agree, .send_all = mpi_send_all};
    *out = t;
    return SL_OK;
}

void sl__xchg_mpi_destroy(sl_xchg_transport *t)
{
    if (!t)
        return;
    struct mpi_ctx *c = t->ctx;
    pthread_mutex_destroy(&c->mu);
    sl__free(c, sizeof *c);
    sl__free(t, sizeof *t);
}
