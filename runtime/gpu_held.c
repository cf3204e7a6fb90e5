/* GPU memory by what holds it (gpu_worker_int.h, SL__GPU_HELD_SLOTS): the device
 * buffers and task blocks of a GPU counted by the operator that keeps them, so that an
 * allocation over the budget can say what filled it (issue 18: TPC-H under small
 * budgets failed with "a filter's small allocation with the budget full"). */
#include <stdio.h>
#include <string.h>

#include "exec_int.h"
#include "gpu_worker_int.h"

int sl__gpu_held_slot(const sl_task_t *t)
{
    const struct sl__opstate *os = t->pipe && t->pipe->sink ? t->pipe->sink : t->os;
    if (!os || !t->q || !t->q->ops)
        return 0;
    int64_t i = os - t->q->ops;
    if (i < 0 || i >= t->q->n_ops)
        return SL__GPU_HELD_SLOTS - 1; /* a synthetic node outside q->ops */
    return i + 1 < SL__GPU_HELD_SLOTS ? (int)i + 1 : SL__GPU_HELD_SLOTS - 1;
}

void sl__gpu_held_add(struct sl__gpu *g, int slot, int64_t bytes)
{
    if (slot < 0 || slot >= SL__GPU_HELD_SLOTS)
        slot = SL__GPU_HELD_SLOTS - 1;
    atomic_fetch_add_explicit(&g->held[slot], bytes, memory_order_relaxed);
}

static int64_t replica_bytes(struct sl_query *q, struct sl__gpu *g)
{
    int64_t bytes = 0;
    pthread_mutex_lock(&q->replica_mu);
    for (int i = 0; i < q->n_replicas; i++)
        if (q->replicas[i]->g == g)
            bytes += q->replicas[i]->dev->bytes;
    pthread_mutex_unlock(&q->replica_mu);
    return bytes;
}

static double mib(int64_t bytes)
{
    return (double)bytes / (1 << 20);
}

void sl__gpu_held_text(struct sl_query *q, struct sl__gpu *g, int rc, char *buf, size_t n)
{
    buf[0] = '\0';
    if (rc != SL_EBUDGET || n < 16)
        return;
    int64_t held[SL__GPU_HELD_SLOTS];
    for (int i = 0; i < SL__GPU_HELD_SLOTS; i++)
        held[i] = atomic_load_explicit(&g->held[i], memory_order_relaxed);
    size_t len = (size_t)snprintf(buf, n, "; held:");
    /* the largest holders first, those of at least 1 MiB, while the text has room */
    for (int k = 0; k < 6 && len < n; k++) {
        int best = -1;
        for (int i = 0; i < SL__GPU_HELD_SLOTS; i++)
            if (held[i] >= (1 << 20) && (best < 0 || held[i] > held[best]))
                best = i;
        if (best < 0)
            break;
        char who[96];
        if (best == 0) {
            snprintf(who, sizeof who, "tables and replicas sent ahead");
        } else if (best == SL__GPU_HELD_SLOTS - 1) {
            snprintf(who, sizeof who, "later operators");
        } else {
            const struct sl_op *op = q && best - 1 < q->n_ops ? q->ops[best - 1].op : NULL;
            snprintf(who, sizeof who, "%s%s%s", op ? op->def->name : "?",
                     op && op->name[0] ? " " : "", op ? op->name : "");
        }
        len += (size_t)snprintf(buf + len, n - len, "%s %s %.1f MiB", k ? "," : "", who,
                                mib(held[best]));
        held[best] = 0;
    }
    if (q && len < n)
        snprintf(buf + len, n - len, "; of them table replicas %.1f MiB",
                 mib(replica_bytes(q, g)));
}
