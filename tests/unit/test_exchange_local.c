/* Tests the in-process exchange transport (runtime/exchange_local.c) against the
 * contract of runtime/exchange.h: credits per sender and receiver (SL_EBUSY when spent,
 * back on release), per-channel order and end, empty channels, one participant, packets
 * larger than the exchange allows, the timeout and cancellation, and an all-to-all of
 * n threads whose every packet arrives once. */
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "exchange.h"
#include "internal.h"
#include "sl_test.h"

static void assert_no_leaks(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static sl_xchg_packet packet(int src, int dst, int ch, void *data, size_t bytes)
{
    return (sl_xchg_packet){.src = src, .dst = dst, .channel = ch, .mem = SL_XCHG_HOST,
                            .data = data, .bytes = bytes, .rows = (int64_t)bytes / 8};
}

static void open_xchg(sl_xchg_transport *t, int n, int channels, int credits, void **x)
{
    sl_xchg_config cfg = {.n = n, .channels = channels, .credits = credits,
                          .packet_bytes = 64, .timeout_s = 5};
    SL_ASSERT_OK(t->open(t->ctx, &cfg, x));
}

SL_TEST(credits_exhausted_then_returned_by_release)
{
    sl_xchg_transport *t;
    SL_ASSERT_OK(sl__xchg_local_create(2, &t));
    void *x;
    open_xchg(t, 2, 1, 2, &x);
    uint64_t v[3] = {1, 2, 3};
    for (int i = 0; i < 2; i++) {
        sl_xchg_packet p = packet(0, 1, 0, &v[i], 8);
        SL_ASSERT_OK(t->send(x, &p));
        assert_int_equal(p.seq, (uint64_t)i);
    }
    sl_xchg_packet p = packet(0, 1, 0, &v[2], 8);
    assert_int_equal(t->send(x, &p), SL_EBUSY);
    /* Credits are per sender: participant 1 may still send to itself. */
    sl_xchg_packet self = packet(1, 1, 0, &v[2], 8);
    SL_ASSERT_OK(t->send(x, &self));
    sl_xchg_packet got;
    assert_int_equal(t->try_recv(x, 1, 0, &got), 1);
    assert_int_equal(got.src, 0);
    assert_int_equal(*(uint64_t *)got.data, 1);
    t->release(x, &got);
    SL_ASSERT_OK(t->send(x, &p)); /* the released packet's credit came back */
    t->close(x, NULL);
    sl__xchg_local_destroy(t);
    assert_no_leaks();
}

SL_TEST(channels_keep_order_and_end_when_every_sender_closed)
{
    sl_xchg_transport *t;
    SL_ASSERT_OK(sl__xchg_local_create(2, &t));
    void *x;
    open_xchg(t, 2, 2, 8, &x);
    uint64_t v[4] = {10, 11, 12, 13};
    for (int i = 0; i < 4; i++) {
        sl_xchg_packet p = packet(i % 2, 0, 1, &v[i], 8);
        SL_ASSERT_OK(t->send(x, &p));
    }
    v[0] = 99; /* send copied the bytes */
    for (int src = 0; src < 2; src++) {
        SL_ASSERT_OK(t->close_channel(x, src, 0)); /* channel 0: empty */
        SL_ASSERT_OK(t->close_channel(x, src, 1));
    }
    bool done = false;
    sl_xchg_packet got;
    SL_ASSERT_OK(t->recv(x, 0, 0, &got, &done));
    assert_true(done);
    uint64_t want = 10;
    for (int i = 0; i < 4; i++) {
        SL_ASSERT_OK(t->recv(x, 0, 1, &got, &done));
        assert_false(done);
        assert_int_equal(*(uint64_t *)got.data, want++);
        assert_int_equal(got.seq, (uint64_t)(i / 2));
        t->release(x, &got);
    }
    SL_ASSERT_OK(t->recv(x, 0, 1, &got, &done));
    assert_true(done);
    assert_int_equal(t->try_recv(x, 1, 1, &got), 0); /* nothing was sent to 1 */
    sl_xchg_stats st;
    SL_ASSERT_OK(t->close(x, &st));
    assert_int_equal(st.packets, 4);
    assert_int_equal(st.bytes, 32);
    sl__xchg_local_destroy(t);
    assert_no_leaks();
}

SL_TEST(one_participant_and_bad_packets)
{
    sl_xchg_transport *t;
    SL_ASSERT_OK(sl__xchg_local_create(1, &t));
    int first = -1, count = 0;
    t->local(t->ctx, &first, &count);
    assert_int_equal(first, 0);
    assert_int_equal(count, 1);
    void *x;
    sl_xchg_config two = {.n = 2, .channels = 1, .credits = 1, .packet_bytes = 64};
    assert_int_equal(t->open(t->ctx, &two, &x), SL_EINVAL);
    open_xchg(t, 1, 1, 1, &x);
    uint8_t big[65] = {0};
    sl_xchg_packet p = packet(0, 0, 0, big, sizeof big); /* more than packet_bytes */
    assert_int_equal(t->send(x, &p), SL_EINVAL);
    p = packet(0, 1, 0, big, 8); /* no participant 1 */
    assert_int_equal(t->send(x, &p), SL_EINVAL);
    p = packet(0, 0, 1, big, 8); /* no channel 1 */
    assert_int_equal(t->send(x, &p), SL_EINVAL);
    p = packet(0, 0, 0, big, 64);
    SL_ASSERT_OK(t->send(x, &p));
    SL_ASSERT_OK(t->close_channel(x, 0, 0));
    bool done;
    sl_xchg_packet got;
    SL_ASSERT_OK(t->recv(x, 0, 0, &got, &done));
    assert_false(done);
    assert_int_equal(got.bytes, 64);
    t->release(x, &got);
    SL_ASSERT_OK(t->recv(x, 0, 0, &got, &done));
    assert_true(done);
    t->close(x, NULL);
    sl__xchg_local_destroy(t);
    assert_int_equal(sl__xchg_local_create(0, &t), SL_EINVAL);
    assert_null(t);
    assert_no_leaks();
}

static int always(void *arg)
{
    (void)arg;
    return 1;
}

SL_TEST(a_silent_sender_times_out_and_cancel_ends_the_wait)
{
    sl_xchg_transport *t;
    SL_ASSERT_OK(sl__xchg_local_create(2, &t));
    void *x;
    sl_xchg_config cfg = {.n = 2, .channels = 1, .credits = 1, .packet_bytes = 8,
                          .timeout_s = 0.2};
    SL_ASSERT_OK(t->open(t->ctx, &cfg, &x));
    SL_ASSERT_OK(t->close_channel(x, 0, 0)); /* participant 1 never closes */
    bool done;
    sl_xchg_packet got;
    int64_t t0 = now_ns();
    assert_int_equal(t->recv(x, 0, 0, &got, &done), SL_EIO);
    assert_true(now_ns() - t0 < 3000000000LL);
    assert_non_null(strstr(sl_last_errmsg(), "1 of 2 senders done"));
    t->close(x, NULL);
    cfg.timeout_s = 0;
    cfg.cancelled = always;
    SL_ASSERT_OK(t->open(t->ctx, &cfg, &x));
    assert_int_equal(t->recv(x, 0, 0, &got, &done), SL_ECANCELED);
    t->close(x, NULL);
    sl__xchg_local_destroy(t);
    assert_no_leaks();
}

/* n threads, each a participant sending `per` packets to every participant with 2
 * credits, taking arrivals whenever a send is refused; each checks that it got every
 * packet once, in order per sender. */
#define N_PARTS 4
#define PER 50

struct part {
    sl_xchg_transport *t;
    void *x;
    int me;
    int64_t sum, count;
    int order_ok;
    uint64_t next[N_PARTS];
};

static void take(struct part *p, sl_xchg_packet *g)
{
    uint64_t v[2];
    memcpy(v, g->data, sizeof v);
    p->order_ok &= v[0] == (uint64_t)g->src && v[1] == p->next[g->src]++;
    p->sum += (int64_t)v[1];
    p->count++;
    p->t->release(p->x, g);
}

static void *participant(void *arg)
{
    struct part *p = arg;
    p->order_ok = 1;
    for (uint64_t i = 0; i < PER; i++) {
        for (int d = 0; d < N_PARTS; d++) {
            uint64_t v[2] = {(uint64_t)p->me, i};
            sl_xchg_packet s = packet(p->me, d, 0, v, sizeof v);
            int rc;
            while ((rc = p->t->send(p->x, &s)) == SL_EBUSY) {
                sl_xchg_packet g;
                while (p->t->try_recv(p->x, p->me, 0, &g) > 0)
                    take(p, &g);
                sched_yield();
            }
            if (rc != SL_OK)
                return NULL;
        }
    }
    p->t->close_channel(p->x, p->me, 0);
    bool done = false;
    while (!done) {
        sl_xchg_packet g;
        if (p->t->recv(p->x, p->me, 0, &g, &done) != SL_OK)
            return NULL;
        if (!done)
            take(p, &g);
    }
    return NULL;
}

SL_TEST(all_to_all_of_threads_with_few_credits_delivers_everything_once)
{
    sl_xchg_transport *t;
    SL_ASSERT_OK(sl__xchg_local_create(N_PARTS, &t));
    void *x;
    open_xchg(t, N_PARTS, 1, 2, &x);
    struct part ps[N_PARTS] = {0};
    pthread_t th[N_PARTS];
    for (int i = 0; i < N_PARTS; i++) {
        ps[i] = (struct part){.t = t, .x = x, .me = i};
        assert_int_equal(pthread_create(&th[i], NULL, participant, &ps[i]), 0);
    }
    for (int i = 0; i < N_PARTS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < N_PARTS; i++) {
        assert_int_equal(ps[i].count, N_PARTS * PER);
        assert_int_equal(ps[i].sum, (int64_t)N_PARTS * PER * (PER - 1) / 2);
        assert_true(ps[i].order_ok);
    }
    t->close(x, NULL);
    sl__xchg_local_destroy(t);
    assert_no_leaks();
}
