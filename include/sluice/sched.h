/* Running your own task graphs on the engine's workers.
 *
 * An embedder (or `sluice bench tasks`) can hand the engine a DAG of plain CPU tasks;
 * they are submitted, placed and completed through the same scheduler that runs
 * queries, so this also measures the scheduler's per-task overhead.
 */
#ifndef SLUICE_SCHED_H
#define SLUICE_SCHED_H

#include <stdint.h>

#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A DAG in compressed form: the predecessors of task i are
 * deps[dep_offsets[i]] .. deps[dep_offsets[i+1] - 1], each an index smaller than i. */
struct sl_task_graph {
    int64_t n_tasks;
    const int64_t *dep_offsets;         /* n_tasks + 1 entries; NULL = no dependencies */
    const int64_t *deps;
    void (*fn)(void *user, int64_t task); /* NULL = empty tasks */
    void *user;
};

/* Runs the graph on the engine's CPU workers and returns when every task has run, each
 * after all its predecessors. SL_EINVAL for a malformed graph (a dependency on a task
 * that is not earlier), SL_ENOMEM. Thread-safe; several graphs and queries may run at
 * once. Added in 0.1. */
SL_API int sl_engine_run_tasks(sl_engine_t *eng, const struct sl_task_graph *g);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_SCHED_H */
