/* The host mover (exchange_dev.h): receive slots in host memory, filled by memcpy on
 * the sending thread. Carries the exchange in CPU builds and in the unit tests. */
#include <string.h>

#include "exchange_dev.h"
#include "internal.h"

struct host_mover {
    char **slots;
    int n_slots;
    size_t packet_bytes;
};

static void host_close(void *ctx)
{
    struct host_mover *h = ctx;
    for (int s = 0; h->slots && s < h->n_slots; s++)
        sl__free(h->slots[s], h->packet_bytes);
    sl__free(h->slots, (size_t)h->n_slots * sizeof *h->slots);
    h->slots = NULL;
    h->n_slots = 0;
}

static int host_open(void *ctx, int n, int credits, size_t packet_bytes)
{
    struct host_mover *h = ctx;
    h->n_slots = n * credits;
    h->packet_bytes = packet_bytes;
    h->slots = sl__calloc((size_t)h->n_slots, sizeof *h->slots);
    if (!h->slots) {
        h->n_slots = 0;
        return SL_ENOMEM;
    }
    for (int s = 0; s < h->n_slots; s++)
        if (!(h->slots[s] = sl__malloc(packet_bytes))) {
            host_close(h);
            return SL_ENOMEM;
        }
    return SL_OK;
}

static void *host_slot(void *ctx, int s)
{
    return ((struct host_mover *)ctx)->slots[s];
}

static int host_slot_device(void *ctx, int dst)
{
    (void)ctx;
    (void)dst;
    return -1;
}

static int host_copy(void *ctx, const sl_xchg_packet *p, int s)
{
    struct host_mover *h = ctx;
    if (p->mem != SL_XCHG_HOST)
        return sl__set_last_error(SL_EUNSUPPORTED, "exchange: the host mover copies host "
                                  "packets only");
    memcpy(h->slots[s], p->data, p->bytes);
    return SL_OK;
}

static int host_done(void *ctx, int src, int s)
{
    (void)ctx;
    (void)src;
    (void)s;
    return SL_OK;
}

static int host_drain(void *ctx, int src)
{
    (void)ctx;
    (void)src;
    return SL_OK;
}

static void host_destroy(void *ctx)
{
    host_close(ctx);
    sl__free(ctx, sizeof(struct host_mover));
}

int sl__xchg_host_mover(struct sl__xchg_mover *out)
{
    struct host_mover *h = sl__calloc(1, sizeof *h);
    if (!h)
        return SL_ENOMEM;
    *out = (struct sl__xchg_mover){
        .name = "local",
        .ctx = h,
        .slot_mem = SL_XCHG_HOST,
        .open = host_open,
        .slot = host_slot,
        .slot_device = host_slot_device,
        .copy = host_copy,
        .landed = host_done,
        .drain = host_drain,
        .close = host_close,
        .destroy = host_destroy,
    };
    return SL_OK;
}
