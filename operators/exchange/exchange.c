/* exchange: moves rows between the ranks running a plan (docs/DISTRIBUTED.md). Every
 * rank runs the same plan on its share of the data; an exchange node sends each of its
 * input rows to one rank and outputs the rows it receives:
 *   mode=hash by=k    rows with equal keys meet on one rank (before a join or group-by:
 *                     both join inputs exchanged by their keys; with balance=G, the
 *                     exchanges of group G assign hash buckets to ranks by their summed
 *                     sizes, so skewed keys do not pile up on one rank);
 *   mode=range by=k   rank r gets the r-th range of keys, from splitters sampled on
 *                     every rank (before a sort: the ranks' sorted results, in rank
 *                     order, are the sorted table; equal keys may be split between
 *                     ranks, so a hot key does not land on one);
 *   mode=gather to=R  every row to rank R (results to rank 0 for output); its output
 *                     holds the senders' rows in rank order.
 * On one rank (no MPI) it passes its input through.
 *
 * Sink: the skeleton's (materialize.h). Source: task i emits the i-th received packet's
 * batch (senders in rank order). Finalize, one task: the rows are routed and
 * packed into a staging buffer per destination, each sent as soon as it fills, so
 * packets travel while the rest is partitioned; a send refused for lack of credit
 * (exchange.h) takes and keeps the packets that arrived meanwhile, then retries. The
 * finalize holds a worker while it waits for the other ranks: a rank needs as many
 * workers as exchanges that can run at once (two for a join's inputs). */
#include <string.h>
#include <time.h>

#include "exchange_int.h"

const struct sl_option_def sl__xchg_options[4] = {
    {"mode", SL_OPT_STRING, "hash", "hash, range or gather"},
    {"by", SL_OPT_STRING, "", "hash, range: the key column (int32, int64, date32, timestamp, "
                              "decimal(p<=18))"},
    {"to", SL_OPT_INT, "0", "gather: the rank that receives every row"},
    {"balance", SL_OPT_STRING, "", "hash: a group name; the group's exchanges (both inputs of "
                                   "a join) assign hash buckets to ranks by their summed sizes"},
};

enum { CH_ROWS = 0, CH_SAMPLES = 1 };

static void data_free(void *p)
{
    sl__free(p, sizeof(struct xchg_data));
}

static int bind_mode(sl_bind_t *b, struct xchg_data *d)
{
    const char *mode, *by, *balance;
    int64_t to;
    int rc;
    if ((rc = sl_bind_option_str(b, "mode", &mode)) < 0 ||
        (rc = sl_bind_option_str(b, "by", &by)) < 0 ||
        (rc = sl_bind_option_int(b, "to", &to)) < 0 ||
        (rc = sl_bind_option_str(b, "balance", &balance)) < 0)
        return rc;
    if (!strcmp(mode, "hash"))
        d->mode = X_HASH;
    else if (!strcmp(mode, "range"))
        d->mode = X_RANGE;
    else if (!strcmp(mode, "gather"))
        d->mode = X_GATHER;
    else
        return sl_bind_fail(b, SL_EINVAL, "mode: '%s' is not hash, range or gather", mode);
    if (to < 0 || to > (1 << 20))
        return sl_bind_fail(b, SL_EINVAL, "to: %lld is no rank", (long long)to);
    d->to = (int)to;
    d->key = -1;
    if (*balance && (d->mode != X_HASH || strlen(balance) >= sizeof d->balance))
        return sl_bind_fail(b, SL_EINVAL, "balance: a group name (< %zu bytes) for mode=hash",
                            sizeof d->balance);
    snprintf(d->balance, sizeof d->balance, "%s", balance);
    if (d->mode == X_GATHER)
        return SL_OK;
    const sl_schema_t *in = sl_bind_input_schema(b, 0);
    if (!*by)
        return sl_bind_fail(b, SL_EINVAL, "mode %s needs a key column (by=)", mode);
    if ((d->key = sl_schema_find(in, by)) < 0)
        return sl_bind_fail(b, SL_ENOTFOUND, "by: no column '%s' in its input", by);
    enum sl_type kt;
    sl_schema_field(in, d->key, NULL, &kt);
    if (!sl__type_signed_word(kt))
        return sl_bind_fail(b, SL_ETYPE, "by: column '%s' is %s; int32, int64, date32, "
                            "timestamp or decimal(p <= 18) needed", by, sl_type_name(kt));
    return SL_OK;
}

static int xchg_bind(sl_bind_t *b)
{
    struct xchg_data d = {.n_cols = sl_schema_num_fields(sl_bind_input_schema(b, 0))};
    int rc = bind_mode(b, &d);
    if (rc < 0)
        return rc;
    if (d.n_cols > 64)
        return sl_bind_fail(b, SL_EUNSUPPORTED, "more than 64 columns");
    if ((rc = sl__mat_bind_word_columns(b, "exchange")) < 0)
        return rc;
    struct xchg_data *p = sl__malloc(sizeof *p);
    if (!p)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    *p = d;
    sl_bind_set_data(b, p, data_free);
    sl_bind_set_rows(b, sl_bind_input_rows(b, 0));
    return SL_OK;
}

static void xchg_fini_global(const sl_op_t *op, void *gs)
{
    (void)op;
    struct xchg_global *g = gs;
    for (int64_t i = 0; i < g->n_out; i++)
        sl_batch_unref(g->out[i]);
    sl__free(g->out, 0);
    sl__mat_fini(&g->m);
}

/* Source: task i emits received batch i. */
static int64_t xchg_source_tasks(sl_task_t *t)
{
    return ((struct xchg_global *)sl_task_gstate(t))->n_out;
}

static int xchg_source(sl_task_t *t)
{
    struct xchg_global *g = sl_task_gstate(t);
    sl_batch_t *b = g->out[sl_task_index(t)];
    sl_batch_ref(b); /* the state keeps its own until the query ends */
    return sl_task_emit(t, b);
}

/* ---------------- one exchange, as this rank sees it ---------------- */

struct run {
    sl_task_t *t;
    sl_xchg_transport *tr;
    void *x;
    int rank, ranks;
    double timeout_s;
    struct xchg_layout lay;
    struct xchg_inbox inbox;
    uint8_t *meta;               /* channel 1's packets from every rank, end to end: range
                                  * samples or balanced hash bucket sizes */
    size_t n_meta, cap_meta;
    /* staging buffers: one per destination, plus those handed to the transport */
    struct xchg_stage *stage;
    uint8_t **spare, **sent;
    int n_spare, n_sent, max_bufs;
    int64_t n_bufs;              /* made, each charged to the host budget */
    size_t buf_bytes;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int task_cancelled(void *t)
{
    return sl_task_cancelled(t);
}

/* Keeps an arrived packet (rows or samples) and releases it. */
static int take(struct run *r, sl_xchg_packet *p)
{
    int rc = SL_OK;
    if (p->channel == CH_ROWS) {
        rc = sl__xchg_inbox_add(&r->inbox, &r->lay, sl_op_output_schema(sl_task_op(r->t)),
                                p->src, p->data, p->bytes, r->t);
    } else if (r->n_meta + p->bytes > r->cap_meta || p->bytes % 8) {
        rc = SL_EFORMAT;
    } else {
        memcpy(r->meta + r->n_meta, p->data, p->bytes);
        r->n_meta += p->bytes;
    }
    r->tr->release(r->x, p);
    return rc == SL_EFORMAT ? sl_task_fail(r->t, rc, "exchange: a malformed packet from rank "
                                           "%d", p->src) : rc;
}

/* Takes every packet that has arrived; returns how many, or an error. */
static int drain(struct run *r)
{
    int taken = 0;
    for (int ch = CH_ROWS; ch <= CH_SAMPLES; ch++) {
        sl_xchg_packet p;
        int rc;
        while ((rc = r->tr->try_recv(r->x, r->rank, ch, &p)) > 0) {
            if ((rc = take(r, &p)) < 0)
                return rc;
            taken++;
        }
        if (rc < 0)
            return rc;
    }
    return taken;
}

/* Sends a packet, taking arrivals while the destination has no credit. */
static int send_packet(struct run *r, int dst, int ch, void *data, size_t bytes, int64_t rows)
{
    sl_xchg_packet p = {.src = r->rank, .dst = dst, .channel = ch, .mem = SL_XCHG_HOST,
                        .data = data, .bytes = bytes, .rows = rows};
    int64_t last = now_ns();
    for (;;) {
        int rc = r->tr->send(r->x, &p);
        if (rc != SL_EBUSY)
            return rc < 0 ? rc : drain(r);
        if ((rc = drain(r)) < 0)
            return rc;
        int64_t now = now_ns();
        if (rc > 0)
            last = now;
        if (sl_task_cancelled(r->t))
            return SL_ECANCELED;
        if ((double)(now - last) / 1e9 > r->timeout_s)
            return sl__set_last_error(SL_EIO, "rank %d waited %.1f s for a credit from rank "
                                      "%d (one failed or stopped?)", r->rank, r->timeout_s,
                                      dst);
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
}

/* A staging buffer for a destination: a spare one, a new one (charged to the host
 * budget), or, with max_bufs in flight, the sent ones back once the transport is done
 * with them. */
static int stage_buffer(struct run *r, uint8_t **out)
{
    *out = NULL;
    if (!r->n_spare && r->n_sent >= r->max_bufs) {
        int rc = r->tr->wait_sent(r->x, r->rank);
        if (rc < 0)
            return rc;
        memcpy(r->spare, r->sent, (size_t)r->n_sent * sizeof *r->sent);
        r->n_spare = r->n_sent;
        r->n_sent = 0;
    }
    if (r->n_spare) {
        *out = r->spare[--r->n_spare];
        return SL_OK;
    }
    if (sl__task_host_charge(r->t, (int64_t)r->buf_bytes) != SL_OK)
        return sl__set_last_error(SL_EBUDGET, "exchange: a staging buffer of %zu bytes does "
                                  "not fit the host budget", r->buf_bytes);
    if (!(*out = sl__malloc(r->buf_bytes))) {
        sl__task_host_release(r->t, (int64_t)r->buf_bytes);
        return SL_ENOMEM;
    }
    r->n_bufs++;
    return SL_OK;
}

static int flush(struct run *r, int d)
{
    struct xchg_stage *st = &r->stage[d];
    size_t bytes = sl__xchg_stage_seal(&r->lay, st);
    int rc = send_packet(r, d, CH_ROWS, st->buf, bytes, st->rows);
    r->sent[r->n_sent++] = st->buf;
    st->buf = NULL;
    st->rows = 0;
    return rc < 0 ? rc : stage_buffer(r, &st->buf);
}

/* Ends this rank's sending on channel ch, takes packets until every rank ended it, then
 * waits until this rank's own packets have left its buffers. */
static int close_and_receive(struct run *r, int ch)
{
    int rc = r->tr->close_channel(r->x, r->rank, ch);
    bool done = false;
    while (rc >= 0 && !done) {
        sl_xchg_packet p;
        if ((rc = r->tr->recv(r->x, r->rank, ch, &p, &done)) >= 0 && !done)
            rc = take(r, &p);
    }
    return rc >= 0 ? r->tr->wait_sent(r->x, r->rank) : rc;
}

/* Range mode: every rank's sample to every rank, then the same splitters everywhere. */
static int choose_splitters(struct run *r, const struct sl__rowsview *key, int64_t n,
                            struct xchg_split *splits)
{
    struct xchg_sample *mine = sl_task_alloc(r->t, SL__XCHG_SAMPLES_PER_RANK * sizeof *mine);
    if (!mine)
        return SL_ENOMEM;
    int64_t m = n ? sl__xchg_sample(key, n, r->rank, mine) : 0;
    int rc = SL_OK;
    for (int d = 0; d < r->ranks && rc >= 0; d++)
        rc = send_packet(r, d, CH_SAMPLES, mine, (size_t)m * sizeof *mine, m);
    if (rc >= 0)
        rc = close_and_receive(r, CH_SAMPLES); /* and `mine` sent: it is freed next */
    sl_task_free(r->t, mine);
    if (rc >= 0)
        sl__xchg_splitters((struct xchg_sample *)r->meta,
                           (int64_t)(r->n_meta / sizeof(struct xchg_sample)), r->ranks, splits);
    return rc;
}

/* Balanced hash: every rank's bucket sizes to every rank, summed, then summed with the
 * other exchanges of the balance group (on this rank; theirs are the same sums on every
 * rank), then the buckets assigned to ranks. */
static int balance_buckets(struct run *r, const struct xchg_data *d,
                           const struct sl__rowsview *key, int64_t n, int32_t *bucket_rank)
{
    int nb = SL__XCHG_BUCKETS_PER_RANK * r->ranks;
    int64_t *mine = sl_task_alloc(r->t, (size_t)nb * sizeof *mine);
    if (!mine)
        return SL_ENOMEM;
    if (n)
        sl__xchg_bucket_sizes(key, n, nb, mine);
    else
        memset(mine, 0, (size_t)nb * sizeof *mine);
    int rc = SL_OK;
    for (int dst = 0; dst < r->ranks && rc >= 0; dst++)
        rc = send_packet(r, dst, CH_SAMPLES, mine, (size_t)nb * sizeof *mine, nb);
    if (rc >= 0)
        rc = close_and_receive(r, CH_SAMPLES);
    if (rc >= 0 && r->n_meta != (size_t)r->ranks * (size_t)nb * sizeof *mine)
        rc = SL_EFORMAT;
    if (rc >= 0) {
        const int64_t *all = (const int64_t *)r->meta;
        for (int b = 0; b < nb; b++) {
            mine[b] = 0;
            for (int s = 0; s < r->ranks; s++)
                mine[b] += all[(size_t)s * (size_t)nb + (size_t)b];
        }
        rc = sl__task_xchg_group_sum(r->t, d->balance, mine, nb, r->timeout_s);
    }
    if (rc >= 0)
        sl__xchg_assign_buckets(mine, nb, r->ranks, bucket_rank);
    sl_task_free(r->t, mine);
    return rc;
}

/* The bulk exchange's memory: the packed runs this rank sends (its own one included,
 * which becomes its received run) and the runs it receives from the others, charged to
 * the host budget before anything is packed; its option exchange_bulk_bytes caps it too.
 * Returns the bytes charged (0 for none), or minus the bytes needed when they do not fit
 * (nothing charged). */
static int64_t bulk_charge(struct run *r, const size_t *sent_bytes, const size_t *recv_bytes)
{
    int64_t need = 0, cap = 0;
    for (int p = 0; p < r->ranks; p++)
        need += (int64_t)sent_bytes[p] + (p == r->rank ? 0 : (int64_t)recv_bytes[p]);
    sl_task_option_int(r->t, "exchange_bulk_bytes", &cap);
    if (need == 0)
        return 0;
    if ((cap > 0 && need > cap) || sl__task_host_charge(r->t, need) != SL_OK)
        return -need;
    return need;
}

/* All at once, for a transport with send_all (MPI): every row routed in one pass, packed
 * column by column into one run of packets per destination, the runs moved by the
 * transport in a few large messages, and unpacked packet by packet. No host round trip
 * per packet: with packets each one cost a credit's trip between two ranks, which on a
 * loaded machine is a scheduling delay. The runs are charged to the host budget first
 * (bulk_charge); when one rank's do not fit, every rank learns it (agree) and *bulk
 * comes back false: the caller sends packets (staging buffers of bounded size). */
static int exchange_bulk(struct run *r, const struct xchg_route *route, int64_t n, bool *bulk)
{
    size_t per_rank = (size_t)r->ranks * sizeof(void *);
    int32_t *dest = sl__malloc((size_t)(n ? n : 1) * sizeof *dest);
    int64_t *count = sl__malloc((size_t)r->ranks * sizeof *count);
    uint8_t **send = sl__calloc((size_t)r->ranks, sizeof *send);
    void **recv = sl__calloc((size_t)r->ranks, sizeof *recv);
    size_t *sent_bytes = sl__calloc((size_t)r->ranks, sizeof *sent_bytes);
    size_t *recv_bytes = sl__calloc((size_t)r->ranks, sizeof *recv_bytes);
    int rc = dest && count && send && recv && sent_bytes && recv_bytes ? SL_OK : SL_ENOMEM;
    int64_t charged = 0; /* host budget bytes held for the runs not yet handed over */
    int64_t t[5] = {now_ns()}; /* its steps' times (the profile's exchange_*_us) */
    *bulk = false;
    if (rc >= 0) {
        sl__xchg_route_all(route, n, dest, count);
        t[1] = now_ns();
        sl__xchg_run_sizes(&r->lay, n, r->ranks, count, sent_bytes);
        rc = r->tr->sizes_all(r->x, sent_bytes, recv_bytes);
    }
    if (rc >= 0) {
        charged = bulk_charge(r, sent_bytes, recv_bytes);
        rc = r->tr->agree(r->x, charged >= 0, bulk);
        if (charged < 0 || !*bulk) {
            if (charged < 0)
                sl_task_profile_value(r->t, "exchange_bulk_refused", -charged);
            sl__task_host_release(r->t, charged > 0 ? charged : 0);
            charged = 0;
        }
    }
    sl_task_profile_value(r->t, "exchange_bulk", rc >= 0 && *bulk);
    t[2] = now_ns();
    if (rc >= 0 && *bulk)
        rc = sl__xchg_pack_all(&r->lay, dest, n, r->ranks, count, send, sent_bytes);
    sl__free(dest, 0);
    dest = NULL;
    t[3] = now_ns();
    if (rc >= 0 && *bulk)
        rc = r->tr->send_all(r->x, (void **)send, sent_bytes, recv, recv_bytes);
    t[4] = now_ns();
    if (rc >= 0 && *bulk) { /* where its time went (docs/DISTRIBUTED.md, "Measuring") */
        static const char *const step[4] = {"exchange_route_us", "exchange_agree_us",
                                            "exchange_pack_us", "exchange_send_us"};
        for (int i = 0; i < 4; i++)
            sl_task_profile_value(r->t, step[i], (t[i + 1] - t[i]) / 1000);
    }
    for (int d = 0; send && d < r->ranks; d++) {
        if (send[d]) { /* sent (or not): its charge goes; a run received stays charged */
            sl__task_host_release(r->t, (int64_t)sent_bytes[d]);
            charged -= (int64_t)sent_bytes[d];
        }
        sl__free(send[d], sent_bytes[d]);
    }
    const sl_schema_t *schema = sl_op_output_schema(sl_task_op(r->t));
    for (int s = 0; recv && s < r->ranks; s++) {
        if (!recv[s])
            continue;
        charged -= (int64_t)recv_bytes[s];
        if (rc < 0) {
            sl__task_host_release(r->t, (int64_t)recv_bytes[s]);
            sl__free(recv[s], recv_bytes[s]);
            continue;
        }
        /* takes recv[s] and its charge: the batches are slices of it */
        rc = sl__xchg_inbox_add_run(&r->inbox, &r->lay, schema, s, recv[s], recv_bytes[s],
                                    r->t);
        if (rc == SL_EFORMAT)
            rc = sl_task_fail(r->t, rc, "exchange: a malformed run of packets from rank %d", s);
    }
    sl__task_host_release(r->t, charged > 0 ? charged : 0); /* runs that never came */
    sl__free(count, 0);
    sl__free(send, per_rank);
    sl__free(recv, per_rank);
    sl__free(sent_bytes, 0);
    sl__free(recv_bytes, 0);
    return rc;
}

/* Routes and sends the n local rows, then receives until every rank is done. */
static int exchange_rows(struct run *r, const struct xchg_route *route, int64_t n)
{
    int64_t packets = 0;
    sl_task_option_int(r->t, "debug_exchange_packets", &packets);
    if (r->tr->send_all && !packets) {
        bool bulk;
        int rc = exchange_bulk(r, route, n, &bulk);
        if (rc < 0 || bulk)
            return rc;
    }
    int rc = SL_OK;
    for (int d = 0; d < r->ranks && rc >= 0; d++)
        rc = stage_buffer(r, &r->stage[d].buf);
    for (int64_t i = 0; i < n && rc >= 0; i++) {
        int d = sl__xchg_route(route, i);
        sl__xchg_stage_add(&r->lay, &r->stage[d], i);
        if (r->stage[d].rows == r->lay.cap)
            rc = flush(r, d);
    }
    for (int d = 0; d < r->ranks && rc >= 0; d++)
        if (r->stage[d].rows)
            rc = flush(r, d);
    return rc >= 0 ? close_and_receive(r, CH_ROWS) : rc;
}

static void run_fini(struct run *r)
{
    if (r->x)
        r->tr->close(r->x, NULL);
    for (int d = 0; r->stage && d < r->ranks; d++)
        sl__free(r->stage[d].buf, r->buf_bytes);
    for (int i = 0; i < r->n_spare; i++)
        sl__free(r->spare[i], r->buf_bytes);
    for (int i = 0; i < r->n_sent; i++)
        sl__free(r->sent[i], r->buf_bytes);
    sl__free(r->stage, 0);
    sl__free(r->spare, 0);
    sl__free(r->sent, 0);
    sl__free(r->meta, 0);
    sl__task_host_release(r->t, r->n_bufs * (int64_t)r->buf_bytes);
    sl__xchg_inbox_fini(&r->inbox);
}

static int run_open(struct run *r, sl_task_t *t, const struct sl__rowsview *views, int tag)
{
    int64_t packet = 0, credits = 0;
    double timeout = 0;
    sl_task_option_int(t, "exchange_packet_bytes", &packet);
    sl_task_option_int(t, "exchange_credits", &credits);
    sl_task_option_float(t, "exchange_timeout", &timeout);
    r->timeout_s = timeout > 0 ? timeout : 60;
    r->buf_bytes = (size_t)(packet > 0 ? packet : 1 << 20);
    size_t meta_packet = SL__XCHG_SAMPLES_PER_RANK * sizeof(struct xchg_sample);
    if (meta_packet < SL__XCHG_BUCKETS_PER_RANK * (size_t)r->ranks * sizeof(int64_t))
        meta_packet = SL__XCHG_BUCKETS_PER_RANK * (size_t)r->ranks * sizeof(int64_t);
    if (r->buf_bytes < meta_packet) /* one packet carries a rank's sample or bucket sizes */
        r->buf_bytes = meta_packet;
    sl__xchg_layout_init(&r->lay, sl_op_output_schema(sl_task_op(t)), views, r->buf_bytes);
    if (r->lay.cap * (int64_t)r->lay.row_bytes + 16 > (int64_t)r->buf_bytes)
        r->buf_bytes = (size_t)r->lay.cap * r->lay.row_bytes + 16; /* one wide row */
    int cr = credits > 0 ? (int)credits : 4;
    r->max_bufs = 2 * cr * r->ranks + r->ranks;
    r->stage = sl__calloc((size_t)r->ranks, sizeof *r->stage);
    r->spare = sl__calloc((size_t)r->max_bufs + r->ranks, sizeof *r->spare);
    r->sent = sl__calloc((size_t)r->max_bufs + r->ranks, sizeof *r->sent);
    size_t sample_bytes = SL__XCHG_SAMPLES_PER_RANK * sizeof(struct xchg_sample),
           bucket_bytes = SL__XCHG_BUCKETS_PER_RANK * (size_t)r->ranks * sizeof(int64_t);
    r->cap_meta = (size_t)r->ranks * (sample_bytes > bucket_bytes ? sample_bytes : bucket_bytes);
    r->meta = sl__malloc(r->cap_meta);
    if (!r->stage || !r->spare || !r->sent || !r->meta ||
        sl__xchg_inbox_init(&r->inbox, r->ranks) < 0)
        return SL_ENOMEM;
    sl_xchg_config cfg = {.n = r->ranks, .channels = 2, .credits = cr,
                          .packet_bytes = r->buf_bytes, .tag = tag, .timeout_s = r->timeout_s,
                          .cancelled = task_cancelled, .cancel_arg = t};
    return r->tr->open(r->tr->ctx, &cfg, &r->x);
}

static int xchg_finalize(sl_task_t *t)
{
    struct xchg_global *g = sl_task_gstate(t);
    const struct xchg_data *d = sl_op_data(sl_task_op(t));
    int rc = sl__mat_begin(t, &g->m, d->n_cols);
    if (rc < 0)
        return rc;
    int64_t n = rc ? g->m.n : 0;
    for (int c = 0; n && c < d->n_cols; c++)
        if ((rc = sl__rows_view(t, &g->m.rows, 0, g->m.rows.n, c, &g->m.views[c])) < 0)
            return rc;
    struct run r = {.t = t};
    int tag;
    if ((rc = sl__task_ranks_transport(t, &r.tr, &r.rank, &r.ranks, &tag)) < 0)
        return sl_task_fail(t, rc, "exchange: %s", sl_last_errmsg());
    struct xchg_route route = {.mode = d->mode, .ranks = r.ranks, .rank = r.rank, .to = d->to};
    if (d->mode == X_GATHER && d->to >= r.ranks)
        return sl_task_fail(t, SL_EINVAL, "exchange: to=%d but there are %d ranks", d->to,
                            r.ranks);
    rc = run_open(&r, t, n ? g->m.views : NULL, tag);
    if (rc >= 0 && d->mode != X_GATHER)
        route.key = n ? &g->m.views[d->key] : NULL;
    if (rc >= 0 && d->mode == X_RANGE) {
        route.splits = sl_task_alloc(t, (size_t)r.ranks * sizeof *route.splits);
        rc = route.splits ? choose_splitters(&r, route.key, n, route.splits) : SL_ENOMEM;
    }
    if (rc >= 0 && d->mode == X_HASH && d->balance[0]) {
        route.n_buckets = SL__XCHG_BUCKETS_PER_RANK * r.ranks;
        int32_t *map = sl_task_alloc(t, (size_t)route.n_buckets * sizeof *map);
        rc = map ? balance_buckets(&r, d, route.key, n, map) : SL_ENOMEM;
        route.bucket_rank = map;
    }
    if (rc >= 0)
        rc = exchange_rows(&r, &route, n);
    if (rc >= 0 && !(g->out = sl__xchg_inbox_take(&r.inbox, &g->n_out)))
        rc = SL_ENOMEM;
    if (rc >= 0) {
        g->m.n = r.inbox.rows;
        rc = r.tr->close(r.x, &g->stats);
        r.x = NULL;
        sl_task_profile_value(t, "exchange_bytes_sent", (int64_t)g->stats.bytes);
        sl_task_profile_value(t, "exchange_packets_sent", (int64_t)g->stats.packets);
        sl_task_profile_value(t, "exchange_us", (int64_t)(g->stats.seconds * 1e6));
    }
    run_fini(&r);
    if (rc < 0 && !sl_task_cancelled(t))
        return sl_task_fail(t, rc, "on rank %d of %d: %s", r.rank, r.ranks,
                            sl_last_errmsg());
    return rc < 0 ? rc : SL_OK;
}

#define XCHG_FIELDS()                                                                      \
    .name = "exchange",                                                                    \
    .doc = "moves rows between the ranks of an MPI run: mode=hash|range by=KEY, or "      \
           "mode=gather to=RANK",                                                          \
    .min_inputs = 1, .max_inputs = 1, .options = sl__xchg_options, .n_options = sizeof sl__xchg_options / sizeof sl__xchg_options[0],          \
    .bind = xchg_bind, .global_state_bytes = sizeof(struct xchg_global),                  \
    .fini_global = xchg_fini_global, .source_tasks = xchg_source_tasks,                  \
    SL__MAT_LOCAL_FIELDS

SL__MAT_CPU_DEF(sl__xchg_def, XCHG_FIELDS, xchg_finalize, xchg_source);
