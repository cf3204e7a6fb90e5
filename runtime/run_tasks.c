/* sl_engine_run_tasks: a user's DAG of CPU tasks on the engine's scheduler. Nodes are
 * released as they are built, so workers start while the graph is still being made. */
#include "engine_int.h"

static void run_user_task(struct sl__node *n, struct sl__worker *w)
{
    const struct sl_task_graph *g = n->arg;
    (void)w;
    if (g->fn)
        g->fn(g->user, n->index);
}

static int validate(const struct sl_task_graph *g)
{
    if (!g || g->n_tasks < 0 || (g->dep_offsets && !g->deps && g->dep_offsets[g->n_tasks] > 0))
        return sl__set_last_error(SL_EINVAL, "sl_engine_run_tasks: malformed graph");
    if (!g->dep_offsets)
        return SL_OK;
    for (int64_t i = 0; i < g->n_tasks; i++) {
        if (g->dep_offsets[i] > g->dep_offsets[i + 1])
            return sl__set_last_error(SL_EINVAL, "task %lld: dependency offsets decrease",
                                      (long long)i);
        for (int64_t k = g->dep_offsets[i]; k < g->dep_offsets[i + 1]; k++) {
            if (g->deps[k] < 0 || g->deps[k] >= i)
                return sl__set_last_error(SL_EINVAL, "task %lld depends on task %lld, which is "
                                          "not an earlier task", (long long)i,
                                          (long long)g->deps[k]);
        }
    }
    return SL_OK;
}

int sl_engine_run_tasks(sl_engine_t *eng, const struct sl_task_graph *g)
{
    if (!eng)
        return sl__set_last_error(SL_EINVAL, "sl_engine_run_tasks: NULL engine");
    int rc = validate(g);
    if (rc != SL_OK)
        return rc;
    struct sl__graph graph;
    sl__graph_init(&graph, eng->sched);
    struct sl__node **nodes = sl__malloc((size_t)(g->n_tasks ? g->n_tasks : 1) * sizeof *nodes);
    if (!nodes) {
        sl__graph_seal(&graph);
        sl__graph_wait(&graph);
        sl__graph_fini(&graph);
        return sl__set_last_error(SL_ENOMEM, "out of memory");
    }
    sl__engine_query_started(eng);
    for (int64_t i = 0; i < g->n_tasks && rc == SL_OK; i++) {
        struct sl__node *n = sl__node_new(&graph, run_user_task, (void *)g, SL__NODE_CPU);
        if (!n) {
            rc = sl__set_last_error(SL_ENOMEM, "out of memory creating task %lld", (long long)i);
            /* Stop running user code; the nodes made so far drain. */
            sl__graph_skip(&graph);
            break;
        }
        n->index = i;
        n->count = g->n_tasks;
        nodes[i] = n;
        for (int64_t k = g->dep_offsets ? g->dep_offsets[i] : 0;
             g->dep_offsets && k < g->dep_offsets[i + 1]; k++) {
            if (sl__node_depend(nodes[g->deps[k]], n) != SL_OK) {
                rc = sl__set_last_error(SL_ENOMEM, "out of memory adding dependencies");
                sl__graph_skip(&graph);
                break;
            }
        }
        sl__node_release(n);
    }
    sl__graph_seal(&graph);
    sl__graph_wait(&graph);
    sl__graph_fini(&graph);
    sl__free(nodes, 0);
    sl__engine_query_finished(eng);
    return rc;
}
