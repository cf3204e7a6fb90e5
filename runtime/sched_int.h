/* The task-graph scheduler: nodes with dependencies, run by CPU workers (and GPU
 * workers) fed from lock-free queues with stealing.
 *
 * A node runs its function once all its predecessors have completed. While running it
 * may spawn children; the node completes when its function has returned and all its
 * children (recursively) have completed. Completion releases successors and reports to
 * the parent. Nodes live in a graph (one per query) and are freed with it, so pointers
 * to nodes stay valid while a graph is being built and run.
 */
#ifndef SLUICE_RUNTIME_SCHED_H
#define SLUICE_RUNTIME_SCHED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "internal.h"

struct sl__sched;
struct sl__graph;
struct sl__node;
struct sl__worker;

/* What a node does. `w` is the worker running it. */
typedef void (*sl__node_fn)(struct sl__node *n, struct sl__worker *w);

enum sl__node_flags {
    SL__NODE_CPU = 1u << 0, /* may run on a CPU worker */
    SL__NODE_GPU = 1u << 1, /* may run on a GPU worker */
    SL__NODE_REUSE = 1u << 2, /* nobody keeps a pointer to it after it completes: its memory
                                 goes to the graph's next sl__node_new (bounded memory for
                                 the morsel tasks made as a query advances) */
    SL__NODE_FOLLOW = 1u << 3 /* a CPU node that, made ready by the GPU worker of an engine
                                 with one GPU, runs on that worker's thread: a pipeline's
                                 start or a sink's finalize after GPU tasks, where a hop to
                                 a sleeping CPU worker costs more than the node (issue 19) */
};

#define SL__NODE_INLINE_SUCC 2

struct sl__node {
    sl__node_fn fn;
    void *arg;                       /* the creator's data */
    int64_t index, count;            /* position in a spawned group */
    struct sl__graph *graph;
    struct sl__node *parent;         /* completion is reported here (spawned nodes) */
    _Atomic int32_t deps;            /* predecessors not yet complete, +1 while building */
    _Atomic int32_t pending;         /* 1 until fn returns, + children not yet complete */
    uint32_t flags;
    int device;                      /* chosen device: -1 any CPU worker, else GPU ordinal */
    atomic_flag lock;                /* guards the successor list and `done` */
    bool done;
    int32_t n_succ, cap_succ;
    struct sl__node *succ_inline[SL__NODE_INLINE_SUCC];
    struct sl__node **succ_more;     /* when more than SL__NODE_INLINE_SUCC */
    struct sl__node *next_free;      /* the graph's free list (SL__NODE_REUSE) */
};

/* A graph: the nodes of one query. Completion of all nodes is observable. */
struct sl__graph {
    struct sl__sched *sched;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    _Atomic int64_t live;            /* nodes created and not yet complete */
    _Atomic int64_t created, completed;
    _Atomic int skip;                /* 1 = run no more node functions (failure/cancel) */
    bool finished;                   /* live reached 0 after sealing */
    atomic_flag slab_lock;
    struct sl__slab *slabs;
    struct sl__node *free_nodes;     /* completed SL__NODE_REUSE nodes (under slab_lock) */
    void (*on_finish)(struct sl__graph *g, void *user); /* called once, by the last node */
    void *on_finish_user;
};

struct sl__worker {
    int id;                          /* 0..n_cpu-1 for CPU workers, then GPU workers */
    int cpu;                         /* core it is pinned to, or -1 */
    int numa_node;
    int gpu;                         /* GPU ordinal for GPU workers, else -1 */
    struct sl__sched *sched;
    pthread_t thread;
    struct ck_ring *ring;            /* this worker's queue (MPMC: others push and steal) */
    void *ring_buf;
    uint64_t rng;                    /* steal victim selection */
    _Alignas(SL__CACHE_LINE) _Atomic int64_t executed;
    _Atomic int64_t stolen;
    void *gpu_ctx;                   /* GPU worker state (streams), owned by the runtime */
};

struct sl__sched_config {
    int n_cpu;                       /* CPU workers */
    int n_gpu;                       /* GPU workers (one per GPU) */
    const int *gpu_ordinals;
    bool pin;
    /* Pin each GPU worker too (with pin), to a core of NUMA node gpu_numa[i] (-1 or
     * NULL: any node): the last allowed core there that no earlier GPU worker took. */
    bool pin_gpu;
    const int *gpu_numa;
    /* Called by each GPU worker before its loop, and after it. */
    int (*gpu_init)(struct sl__worker *w, void *user);
    void (*gpu_fini)(struct sl__worker *w, void *user);
    /* Retires a GPU worker's finished work; with block, waits for some. Returns how
     * much is still in flight (the worker never sleeps while it is not 0). */
    int (*gpu_poll)(struct sl__worker *w, bool block);
    void *gpu_user;
};

/* Starts the workers. Returns SL_OK or an error (message in the thread's last error). */
int sl__sched_create(struct sl__sched **out, const struct sl__sched_config *cfg);
/* Stops and joins the workers; graphs must have finished. */
void sl__sched_destroy(struct sl__sched *s);
int sl__sched_num_cpu(const struct sl__sched *s);
int sl__sched_num_workers(const struct sl__sched *s);
/* Whether every CPU worker is asleep (nothing for them to run): a hint, read without a
 * lock. */
bool sl__sched_cpu_idle(const struct sl__sched *s);
struct sl__worker *sl__sched_worker(struct sl__sched *s, int i);
/* The worker the calling thread is, or NULL for a foreign thread. */
struct sl__worker *sl__sched_current(void);

/* Graph lifecycle: init, create nodes, add dependencies, release nodes, seal, wait,
 * fini. A new graph holds one "builder" reference so that it cannot finish while it is
 * still being built; sl__graph_seal drops it. */
int sl__graph_init(struct sl__graph *g, struct sl__sched *s);
void sl__graph_seal(struct sl__graph *g);
/* Frees the nodes. The graph must have finished (or never started a node). */
void sl__graph_fini(struct sl__graph *g);
/* A new node held in "building" state: it cannot run before sl__node_release. */
struct sl__node *sl__node_new(struct sl__graph *g, sl__node_fn fn, void *arg, uint32_t flags);
/* b runs after a completes. Both must belong to the graph; b must not be released yet. */
int sl__node_depend(struct sl__node *a, struct sl__node *b);
/* Ends building: the node runs as soon as its predecessors have completed. */
void sl__node_release(struct sl__node *n);
/* Keeps a running node from completing after its function returns, until
 * sl__node_unhold: GPU tasks complete when their enqueued work has, not when their
 * function returns. */
void sl__node_hold(struct sl__node *n);
void sl__node_unhold(struct sl__node *n);
/* Makes `child` part of `parent`: parent completes only after child. Call before
 * releasing the child, from parent's function (or before parent is released), or from
 * the function of another child of parent's, which keeps parent from completing. */
void sl__node_adopt(struct sl__node *parent, struct sl__node *child);
/* Blocks until every node created in the graph has completed. */
void sl__graph_wait(struct sl__graph *g);
/* Waits at most `ms` milliseconds; true if the graph has finished. */
bool sl__graph_wait_ms(struct sl__graph *g, int ms);
/* Polls for at most `us` microseconds, yielding the core between looks; true if the
 * graph has finished. A waiter that expects a short graph saves the wake-up of a
 * sleeping thread (tens of microseconds) this way. */
bool sl__graph_spin_us(struct sl__graph *g, int us);
/* Stops running node functions of this graph; queued nodes complete without running. */
void sl__graph_skip(struct sl__graph *g);

#endif /* SLUICE_RUNTIME_SCHED_H */
