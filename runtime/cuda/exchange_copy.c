/* The CUDA mover of the in-process exchange (exchange_dev.h). Receive slots live on the
 * receiver's device; a packet is copied on its sender's copy stream (the stream and
 * the completion event are on the sender's GPU), and the receiver waits for that event
 * before it reads the slot. Copies between distinct GPUs go peer to peer
 * (cudaMemcpyPeerAsync; the driver stages through the host where peer access is
 * missing); between logical devices of one GPU they are device-to-device copies. */
#include <string.h>

#include "cuda_int.h"
#include "exchange_dev.h"

struct cuda_mover {
    int n;
    int *ord;                 /* [n] GPU ordinal of each participant */
    struct sl__dpool **pool;  /* [n], entries may be NULL */
    cudaStream_t *copy;       /* [n] one copy stream per sender */
    int credits;
    size_t packet_bytes;
    void **slots;             /* [n * credits] */
    cudaEvent_t *ev;          /* [n * credits * n]: slot s filled by sender src */
};

static void free_slot(struct cuda_mover *c, int s)
{
    int dst = s / c->credits, rc;
    if (!c->slots[s])
        return;
    if (c->pool[dst]) {
        sl__dpool_free_async(c->pool[dst], c->slots[s], (int64_t)c->packet_bytes, c->copy[dst]);
    } else {
        int prev = -1;
        if (sl__cuda_set_device(c->ord[dst], &prev) == SL_OK) {
            SL__CUDA_RELEASE(rc, NULL, cudaFree(c->slots[s]));
            (void)rc;
            sl__cuda_set_device(prev, NULL);
        }
    }
    c->slots[s] = NULL;
}

static void cuda_close(void *ctx)
{
    struct cuda_mover *c = ctx;
    int ns = c->n * c->credits;
    for (int i = 0; i < c->n; i++)
        sl__cuda_stream_sync(c->copy[i]);
    for (int s = 0; c->slots && s < ns; s++)
        free_slot(c, s);
    for (int e = 0; c->ev && e < ns * c->n; e++)
        if (c->ev[e])
            sl__cuda_event_destroy(c->ev[e]);
    for (int i = 0; i < c->n; i++)
        sl__cuda_stream_sync(c->copy[i]); /* the pools' stream-ordered frees */
    sl__free(c->slots, (size_t)ns * sizeof *c->slots);
    sl__free(c->ev, (size_t)ns * (size_t)c->n * sizeof *c->ev);
    c->slots = NULL;
    c->ev = NULL;
}

static int cuda_open(void *ctx, int n, int credits, size_t packet_bytes)
{
    struct cuda_mover *c = ctx;
    if (n != c->n)
        return sl__set_last_error(SL_EINVAL, "exchange: %d participants, mover has %d", n,
                                  c->n);
    int ns = n * credits, rc = SL_OK;
    c->credits = credits;
    c->packet_bytes = packet_bytes;
    c->slots = sl__calloc((size_t)ns, sizeof *c->slots);
    c->ev = sl__calloc((size_t)ns * (size_t)n, sizeof *c->ev);
    if (!c->slots || !c->ev) {
        cuda_close(c);
        return SL_ENOMEM;
    }
    for (int s = 0; s < ns && rc == SL_OK; s++) {
        int dst = s / credits;
        if (c->pool[dst]) {
            rc = sl__dpool_alloc_async(c->pool[dst], (int64_t)packet_bytes, c->copy[dst],
                                       &c->slots[s]);
        } else {
            int prev = -1;
            if ((rc = sl__cuda_set_device(c->ord[dst], &prev)) == SL_OK) {
                SL__CUDA_CALL(rc, NULL, cudaMalloc(&c->slots[s], packet_bytes));
                if (rc < 0)
                    c->slots[s] = NULL;
                sl__cuda_set_device(prev, NULL);
            }
        }
        for (int src = 0; src < n && rc == SL_OK; src++)
            rc = sl__cuda_event_create(c->ord[src], false, &c->ev[s * n + src]);
    }
    /* Slots from a pool are ordered on the receiver's copy stream; senders use theirs. */
    for (int i = 0; i < n && rc == SL_OK; i++)
        rc = sl__cuda_stream_sync(c->copy[i]);
    if (rc < 0)
        cuda_close(c);
    return rc;
}

static void *cuda_slot(void *ctx, int s)
{
    return ((struct cuda_mover *)ctx)->slots[s];
}

static int cuda_slot_device(void *ctx, int dst)
{
    return ((struct cuda_mover *)ctx)->ord[dst];
}

static int cuda_copy(void *ctx, const sl_xchg_packet *p, int s)
{
    struct cuda_mover *c = ctx;
    int src = p->src, dst = s / c->credits, prev = -1, rc;
    if ((rc = sl__cuda_set_device(c->ord[src], &prev)) < 0)
        return rc;
    if (p->mem == SL_XCHG_DEVICE && c->ord[src] != c->ord[dst])
        SL__CUDA_CALL(rc, NULL, cudaMemcpyPeerAsync(c->slots[s], c->ord[dst], p->data,
                                                    c->ord[src], p->bytes, c->copy[src]));
    else /* logical devices of one GPU, or host bytes: unified addressing finds the way */
        SL__CUDA_CALL(rc, NULL, cudaMemcpyAsync(c->slots[s], p->data, p->bytes,
                                                cudaMemcpyDefault, c->copy[src]));
    if (rc == SL_OK)
        rc = sl__cuda_event_record(c->ev[s * c->n + src], c->copy[src]);
    sl__cuda_set_device(prev, NULL);
    return rc;
}

static int cuda_landed(void *ctx, int src, int s)
{
    struct cuda_mover *c = ctx;
    int rc;
    SL__CUDA_CALL(rc, NULL, cudaEventSynchronize(c->ev[s * c->n + src]));
    return rc;
}

static int cuda_drain(void *ctx, int src)
{
    return sl__cuda_stream_sync(((struct cuda_mover *)ctx)->copy[src]);
}

static void cuda_destroy(void *ctx)
{
    struct cuda_mover *c = ctx;
    if (!c)
        return;
    if (c->slots)
        cuda_close(c);
    if (c->copy)
        sl__cuda_streams_destroy(c->n, c->copy);
    sl__free(c->copy, (size_t)c->n * sizeof *c->copy);
    sl__free(c->ord, (size_t)c->n * sizeof *c->ord);
    sl__free(c->pool, (size_t)c->n * sizeof *c->pool);
    sl__free(c, sizeof *c);
}

/* Lets GPU `ordinal` read and write what pool p hands out: pool memory does not follow
 * cudaDeviceEnablePeerAccess, each pool says which devices may map it. */
static int pool_share(struct sl__dpool *p, int ordinal)
{
    struct cudaMemAccessDesc desc = {
        .location = {.type = cudaMemLocationTypeDevice, .id = ordinal},
        .flags = cudaMemAccessFlagsProtReadWrite,
    };
    int rc;
    SL__CUDA_CALL(rc, NULL, cudaMemPoolSetAccess(p->pool, &desc, 1));
    return rc;
}

/* Peer access between every pair of distinct GPUs that allows it, for the contexts and
 * for the participants' pools (slots and the operators' buffers come from them). */
static int enable_peers(const int *ord, struct sl__dpool *const *pools, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int can = 0, prev = -1, rc;
            if (ord[i] == ord[j])
                continue;
            SL_CUDA_TRY(NULL, cudaDeviceCanAccessPeer(&can, ord[i], ord[j]));
            if (!can)
                continue;
            if ((rc = sl__cuda_set_device(ord[i], &prev)) < 0)
                return rc;
            cudaError_t e = cudaDeviceEnablePeerAccess(ord[j], 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled)
                (void)cudaGetLastError(); /* an earlier exchange enabled it */
            else
                rc = sl__cuda_check(e, "cudaDeviceEnablePeerAccess", __FILE__, __LINE__, NULL,
                                    0);
            sl__cuda_set_device(prev, NULL);
            if (rc == SL_OK && pools && pools[j]) /* i reads and writes j's pool */
                rc = pool_share(pools[j], ord[i]);
            if (rc < 0)
                return rc;
        }
    return SL_OK;
}

int sl__xchg_cuda_mover(const int *ordinals, struct sl__dpool *const *pools, int n,
                        struct sl__xchg_mover *out)
{
    struct cuda_mover *c = sl__calloc(1, sizeof *c);
    if (!c)
        return SL_ENOMEM;
    c->n = n;
    c->ord = sl__calloc((size_t)n, sizeof *c->ord);
    c->pool = sl__calloc((size_t)n, sizeof *c->pool);
    c->copy = sl__calloc((size_t)n, sizeof *c->copy);
    int rc = (c->ord && c->pool && c->copy) ? SL_OK : SL_ENOMEM;
    for (int i = 0; i < n && rc == SL_OK; i++) {
        c->ord[i] = ordinals[i];
        c->pool[i] = pools ? pools[i] : NULL;
        rc = sl__cuda_streams_create(ordinals[i], 1, &c->copy[i]);
    }
    if (rc == SL_OK)
        rc = enable_peers(c->ord, c->pool, n);
    if (rc < 0) {
        cuda_destroy(c);
        return rc;
    }
    *out = (struct sl__xchg_mover){
        .name = "device",
        .ctx = c,
        .slot_mem = SL_XCHG_DEVICE,
        .open = cuda_open,
        .slot = cuda_slot,
        .slot_device = cuda_slot_device,
        .copy = cuda_copy,
        .landed = cuda_landed,
        .drain = cuda_drain,
        .close = cuda_close,
        .destroy = cuda_destroy,
    };
    return SL_OK;
}
