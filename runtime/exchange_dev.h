/* The exchange among participants of one process (logical or physical GPUs, or host
 * threads in tests): the sl_xchg_transport of exchange.h over a "mover" that owns the
 * receive slots and copies bytes into them. The core (exchange_dev.c) keeps credits,
 * per-receiver queues and channel ends; movers only copy:
 *   host  (exchange_host.c): memcpy into host slots (CPU builds, unit tests);
 *   cuda  (cuda/exchange_copy.c): device slots on each receiver, copies on one
 *         dedicated copy stream per sender: cudaMemcpyPeerAsync between physical GPUs,
 *         cudaMemcpyAsync device-to-device between logical devices of one GPU.
 * Each receiver owns `credits` slots of packet_bytes: a sender takes a free slot of its
 * receiver (no free slot: SL_EBUSY), and release() frees it. One thread sends for one
 * participant at a time; receiving may happen on other threads. */
#ifndef SL_RUNTIME_EXCHANGE_DEV_H
#define SL_RUNTIME_EXCHANGE_DEV_H

#include "exchange.h"

struct sl__xchg_mover {
    const char *name;
    void *ctx;
    enum sl_xchg_mem slot_mem; /* where received packets live */
    /* Allocates n * credits slots of packet_bytes; slot s = dst * credits + k. */
    int (*open)(void *ctx, int n, int credits, size_t packet_bytes);
    void *(*slot)(void *ctx, int s);
    int (*slot_device)(void *ctx, int dst); /* the device a receiver's slots live on */
    /* Starts copying p's bytes into slot s (asynchronously where it can). */
    int (*copy)(void *ctx, const sl_xchg_packet *p, int s);
    /* Blocks until the copy of sender src into slot s has landed. */
    int (*landed)(void *ctx, int src, int s);
    /* Blocks until every copy sender src started has left its buffers. */
    int (*drain)(void *ctx, int src);
    void (*close)(void *ctx); /* frees the slots (after an error too) */
    void (*destroy)(void *ctx);
};

/* A transport over mover m for n participants (all local). m is copied; the transport
 * owns m->ctx from now on: sl__xchg_dev_destroy frees it. */
int sl__xchg_dev_create(const struct sl__xchg_mover *m, int n, sl_xchg_transport *out);
void sl__xchg_dev_destroy(sl_xchg_transport *t);

/* The host mover: n host threads exchange host memory (tests, CPU builds). */
int sl__xchg_host_mover(struct sl__xchg_mover *out);

struct sl__dpool;

/* The CUDA mover (CUDA builds; SL_EUNSUPPORTED otherwise): participant i is a device on
 * GPU ordinals[i] (several may share one GPU: logical devices), its receive slots come
 * from pools[i] (NULL: cudaMalloc). Creates one copy stream per participant on its GPU
 * and enables peer access between distinct GPUs where cudaDeviceCanAccessPeer allows. */
int sl__xchg_cuda_mover(const int *ordinals, struct sl__dpool *const *pools, int n,
                        struct sl__xchg_mover *out);

#endif
