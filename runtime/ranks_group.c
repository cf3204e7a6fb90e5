/* Balance groups (exchange.h, sl__task_xchg_group_sum): the exchange nodes of one query
 * that share a group name meet here to add their bucket sizes, so that both inputs of a
 * join assign hash buckets to ranks the same way, from their combined sizes. A group
 * lives on the engine's ranks state from its first member's arrival until its last
 * member has left. */
#include <string.h>
#include <time.h>

#include "engine_int.h"
#include "exec_int.h"
#include "ranks.h"

struct sl__xchg_group {
    struct sl__xchg_group *next;
    const struct sl_query *q;
    char name[64];
    int expected, arrived, left, n;
    int64_t *sum;
};

/* Exchange nodes of q's plan whose option balance is `name`. */
static int members(const struct sl_query *q, const char *name)
{
    int count = 0;
    for (int i = 0; i < sl_plan_num_nodes(q->plan); i++) {
        const char *op = sl_plan_node_op(q->plan, i);
        const char *b = sl_plan_node_option(q->plan, i, "balance");
        count += op && !strcmp(op, "exchange") && b && !strcmp(b, name);
    }
    return count;
}

/* The group (q, name), created when missing; the caller holds group_mu. */
static struct sl__xchg_group *find_locked(struct sl__ranks *r, const struct sl_query *q,
                                          const char *name, int n)
{
    for (struct sl__xchg_group *g = r->groups; g; g = g->next)
        if (g->q == q && !strcmp(g->name, name))
            return g->n == n ? g : NULL;
    struct sl__xchg_group *g = sl__calloc(1, sizeof *g);
    if (!g || !(g->sum = sl__calloc((size_t)n, sizeof *g->sum))) {
        sl__free(g, sizeof *g);
        return NULL;
    }
    g->q = q;
    snprintf(g->name, sizeof g->name, "%s", name);
    g->expected = members(q, name);
    g->n = n;
    g->next = r->groups;
    r->groups = g;
    return g;
}

static void leave_locked(struct sl__ranks *r, struct sl__xchg_group *g)
{
    if (++g->left < g->expected)
        return;
    for (struct sl__xchg_group **p = &r->groups; *p; p = &(*p)->next) {
        if (*p == g) {
            *p = g->next;
            break;
        }
    }
    sl__free(g->sum, 0);
    sl__free(g, sizeof *g);
}

int sl__task_xchg_group_sum(sl_task_t *t, const char *group, int64_t *sizes, int n,
                            double timeout_s)
{
    struct sl__ranks *r = t->q->eng->ranks;
    pthread_mutex_lock(&r->group_mu);
    struct sl__xchg_group *g = find_locked(r, t->q, group, n);
    if (!g) {
        pthread_mutex_unlock(&r->group_mu);
        return sl__set_last_error(SL_ENOMEM, "balance group '%s': out of memory, or members "
                                  "with different bucket counts", group);
    }
    for (int i = 0; i < n; i++)
        g->sum[i] += sizes[i];
    g->arrived++;
    pthread_cond_broadcast(&r->group_cv);
    int64_t start = sl__now_ns();
    int rc = SL_OK;
    while (g->arrived < g->expected && rc == SL_OK) {
        if (sl_task_cancelled(t))
            rc = SL_ECANCELED;
        else if ((double)(sl__now_ns() - start) / 1e9 > timeout_s)
            rc = sl__set_last_error(SL_EIO, "balance group '%s': %d of its %d exchanges "
                                    "arrived in %.1f s", group, g->arrived, g->expected,
                                    timeout_s);
        if (rc != SL_OK)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&r->group_cv, &r->group_mu, &ts);
    }
    if (rc == SL_OK)
        memcpy(sizes, g->sum, (size_t)n * sizeof *sizes);
    leave_locked(r, g);
    pthread_mutex_unlock(&r->group_mu);
    return rc;
}

void sl__ranks_groups_free(struct sl__ranks *r)
{
    for (struct sl__xchg_group *g = r->groups, *next; g; g = next) {
        next = g->next;
        sl__free(g->sum, 0);
        sl__free(g, sizeof *g);
    }
    r->groups = NULL;
}
