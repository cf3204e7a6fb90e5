/* Exchange: moving partitions between the participants of one query (logical or
 * physical GPUs of one process, or MPI ranks), behind a pluggable transport.
 *
 * One exchange is an all-to-all among n participants. A sender hands the exchange
 * packets (bytes in host memory or in one device's memory) addressed to a participant
 * and a channel (which table or column group they belong to); each receiver takes the
 * packets addressed to it, in the order each sender sent them on a channel, until every
 * sender has closed that channel. Code that partitions, balances and joins sees only
 * this interface; it never knows whether device copies, peer copies or MPI carry the
 * bytes (DESIGN.md, "Several GPUs, then several machines").
 *
 * Flow control: a transport admits at most `credits` packets in flight to one receiver
 * (sent and not yet released by it); send() returns SL_EBUSY when the receiver has no
 * credit left, and the sender receives or waits before trying again. No receiver's
 * buffers can therefore overflow whatever the skew.
 *
 * Published to operators (docs/ARCHITECTURE.md, layers). Status codes are sl_status. */
#ifndef SL_RUNTIME_EXCHANGE_H
#define SL_RUNTIME_EXCHANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where a packet's bytes live. */
enum sl_xchg_mem { SL_XCHG_HOST = 0, SL_XCHG_DEVICE = 1 };

typedef struct sl_xchg_packet {
    int src;               /* sending participant, 0..n-1 */
    int dst;               /* receiving participant, 0..n-1 */
    int channel;           /* 0..channels-1: which stream of packets (table, column set) */
    enum sl_xchg_mem mem;  /* where data lives */
    int device;            /* the participant's device when mem is SL_XCHG_DEVICE */
    void *data;            /* owned by the sender until send() returns SL_OK and the
                            * transport says it is done with it (see wait_sent); owned
                            * by the transport on the receiving side until release() */
    size_t bytes;
    int64_t rows;          /* rows the packet carries (for accounting and explain) */
    uint64_t seq;          /* set by the transport: order within (src, dst, channel) */
} sl_xchg_packet;

typedef struct sl_xchg_config {
    int n;                 /* participants */
    int channels;          /* independent packet streams, >= 1 */
    int credits;           /* packets in flight to one receiver, >= 1 */
    size_t packet_bytes;   /* the largest packet a sender will hand over */
    /* Added with the MPI transport (zero: the defaults). */
    int tag;               /* tells apart exchanges running at once over one transport:
                            * every participant opens a given exchange with the same tag,
                            * 0..SL_XCHG_MAX_TAG */
    double timeout_s;      /* recv, wait_sent and try_recv's callers give up with SL_EIO
                            * after this long without a packet or a credit; 0 = never */
    int (*cancelled)(void *arg); /* polled while waiting: nonzero ends the wait with
                                  * SL_ECANCELED (NULL: never) */
    void *cancel_arg;
} sl_xchg_config;

#define SL_XCHG_MAX_TAG 4095

typedef struct sl_xchg_stats {
    uint64_t packets;      /* sent by this process's participants */
    uint64_t bytes;
    double seconds;        /* wall time the transport spent moving them */
} sl_xchg_stats;

/* A transport. ctx is the transport's own state (an MPI communicator, a set of devices
 * and their streams); one transport may run several exchanges one after another. */
typedef struct sl_xchg_transport {
    const char *name;  /* "device" (logical devices of one GPU), "peer", "mpi", "local" */
    void *ctx;
    /* Participants this process holds: for in-process devices all n; for MPI one (the
     * rank). Fills first and count. */
    void (*local)(void *ctx, int *first, int *count);
    int (*open)(void *ctx, const sl_xchg_config *cfg, void **xchg);
    /* Queues p (src must be local). SL_OK: accepted (the data must stay valid until
     * wait_sent); SL_EBUSY: p->dst has no credit; retry after receiving or waiting. */
    int (*send)(void *xchg, sl_xchg_packet *p);
    /* Waits until every accepted packet of participant src has left its buffers. */
    int (*wait_sent)(void *xchg, int src);
    /* Ends channel ch from local participant src to every receiver. */
    int (*close_channel)(void *xchg, int src, int ch);
    /* Next packet for local participant dst on channel ch: SL_OK with *out filled,
     * *done = true (and no packet) once every sender closed ch and all its packets were
     * taken; waits for one otherwise (until the query is canceled: SL_ECANCELED). */
    int (*recv)(void *xchg, int dst, int ch, sl_xchg_packet *out, bool *done);
    /* Gives a received packet's buffer back (returns its sender a credit). */
    void (*release)(void *xchg, sl_xchg_packet *p);
    /* Ends the exchange; fills stats when non-NULL. Safe after an error. */
    int (*close)(void *xchg, sl_xchg_stats *stats);
    /* Added with the MPI transport: recv that never waits. Returns 1 with *out filled
     * when a packet for dst on ch is there, 0 when none is (yet, or any more), < 0 on
     * an error. A sender that got SL_EBUSY calls it (and releases what it takes) so that
     * two participants out of credit towards each other both make progress. */
    int (*try_recv)(void *xchg, int dst, int ch, sl_xchg_packet *out);
    /* Added for the bulk exchange; NULL where a transport lacks it (senders then use
     * packets). Three collective steps of a transport holding one participant (MPI),
     * each called once per exchange by every participant, in this order, on no channel
     * (packets of the channels may come before them):
     * sizes_all: tells every participant d send_bytes[d] (what this one will send it,
     * itself included) and fills recv_bytes[s] with what participant s will send this
     * one (recv_bytes[own] = send_bytes[own]).
     * agree: *all = whether `mine` is true on every participant (whether every rank's
     * budget holds its runs: if one's does not, all take the packet path).
     * send_all: sends send[d] (send_bytes[d] bytes of host memory, possibly 0; the sizes
     * given to sizes_all) to every participant d and receives what every participant s
     * sent it into recv[s] (recv_bytes[s] as sizes_all gave them; memory from
     * sl__malloc, the caller frees it; NULL for 0 bytes). Each receiver knows its sizes
     * and allocates exactly them, so nothing can overflow; the transport moves the bytes
     * in a few large messages and progresses them itself (no credit round trip per
     * packet). The send buffers stay the caller's, but for its own participant's, which
     * becomes its receive buffer without a copy (on success: recv[own] = send[own],
     * send[own] = NULL).
     * Errors as recv's (SL_EIO after timeout_s without progress, SL_ECANCELED),
     * SL_ENOMEM. */
    int (*sizes_all)(void *xchg, const size_t *send_bytes, size_t *recv_bytes);
    int (*agree)(void *xchg, bool mine, bool *all);
    int (*send_all)(void *xchg, void **send, const size_t *send_bytes, void **recv,
                    const size_t *recv_bytes);
} sl_xchg_transport;

/* ---------------- transports (the runtime's) ----------------
 * Flow control in both: `credits` counts the packets in flight from one sender to one
 * receiver (sent and not yet released). */

/* In one process, n participants, every packet copied with memcpy on send (so wait_sent
 * never waits): tests of the exchange logic without MPI, and single-rank runs
 * (runtime/exchange_local.c). SL_EINVAL if n < 1; SL_ENOMEM. */
int sl__xchg_local_create(int n, sl_xchg_transport **out);
void sl__xchg_local_destroy(sl_xchg_transport *t);

/* The engine's transport between ranks (runtime/ranks.c): MPI's when the engine joined
 * an MPI job (option mpi), else a one-participant local transport. *rank and *ranks
 * are this process's participant and the participant count; *tag, the task's plan node
 * id, is the same on every rank running the plan (an exchange's sl_xchg_config.tag).
 * The engine owns the transport. SL_EUNSUPPORTED when ranks > 1 without MPI. */
struct sl_task;
int sl__task_ranks_transport(struct sl_task *t, sl_xchg_transport **out, int *rank, int *ranks,
                             int *tag);
/* Sizes that the exchange nodes of one query sharing a balance group (their option
 * `balance`, e.g. both inputs of a join) add together (runtime/ranks_group.c): adds the
 * n sizes into the group's sum, waits until every such node of the query added its own,
 * then copies the sum back into sizes. SL_EIO after timeout_s seconds, SL_ECANCELED when
 * the query failed meanwhile, SL_ENOMEM. */
int sl__task_xchg_group_sum(struct sl_task *t, const char *group, int64_t *sizes, int n,
                            double timeout_s);

#ifdef __cplusplus
}
#endif

#endif
