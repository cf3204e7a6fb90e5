/* The task-graph scheduler: workers, queues, stealing, node completion.
 *
 * Queues: every worker owns a Concurrency Kit MPMC ring. A node that becomes ready on a
 * CPU worker goes to that worker's ring (locality); from a foreign thread it goes to
 * the rings round-robin. Idle CPU workers steal from the other CPU rings. A full ring
 * spills into a mutex-protected overflow stack. GPU workers take only from their own
 * ring, where placement put nodes meant for their device.
 *
 * Sleeping without lost wake-ups: an idle worker announces itself (n_idle++), reads the
 * wake sequence, re-checks the queues and only then waits for the sequence to change;
 * a pusher enqueues, then reads n_idle. Both sides put a seq_cst fence between their
 * store and their load, so at least one of them sees the other.
 */
#include <errno.h>
#include <numa.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ck_pr.h>
#include <ck_ring.h>

#include "sched_int.h"

#define RING_SIZE (1u << 14) /* entries per worker ring; power of two */
#define SLAB_NODES 512
#define SPIN_ROUNDS 256
#define GPU_LINGER_NS 1000000 /* a GPU worker out of work looks for more this long */

struct sl__slab {
    struct sl__slab *next;
    int used;
    struct sl__node nodes[SLAB_NODES];
};

struct gpu_idle {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    _Atomic int idle;
    uint64_t seq;
};

struct sl__sched {
    int n_cpu, n_gpu, n_workers;
    struct sl__worker *workers;
    struct gpu_idle *gpu_idle;       /* one per GPU worker */
    struct sl__sched_config cfg;
    _Atomic bool stop;
    _Atomic uint32_t rr;             /* round-robin target for foreign pushes */

    /* CPU sleep/wake */
    _Alignas(SL__CACHE_LINE) _Atomic int n_idle;
    pthread_mutex_t idle_mu;
    pthread_cond_t idle_cv;
    uint64_t wake_seq;               /* guarded by idle_mu */

    /* overflow when a ring is full */
    _Alignas(SL__CACHE_LINE) pthread_mutex_t ov_mu;
    _Atomic int64_t ov_count;
    struct sl__node **ov;
    int64_t ov_cap;
};

static _Thread_local struct sl__worker *current_worker;

static void node_run(struct sl__node *n, struct sl__worker *w);

struct sl__worker *sl__sched_current(void)
{
    return current_worker;
}

static inline void spin_lock(atomic_flag *f)
{
    while (atomic_flag_test_and_set_explicit(f, memory_order_acquire))
        ck_pr_stall();
}

static inline void spin_unlock(atomic_flag *f)
{
    atomic_flag_clear_explicit(f, memory_order_release);
}

/* ---------------- queues ---------------- */

/* ThreadSanitizer cannot see the fences inside ck's inline assembly, so the hand-over
 * of a node through a ring is declared to it: release by the pusher, acquire by the
 * popper. (Suppressions stay limited to ck itself.) */
#if defined(__SANITIZE_THREAD__)
#define SL__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SL__TSAN 1
#endif
#endif
#ifdef SL__TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define TSAN_RELEASE(p) __tsan_release(p)
#define TSAN_ACQUIRE(p) __tsan_acquire(p)
#else
#define TSAN_RELEASE(p) ((void)0)
#define TSAN_ACQUIRE(p) ((void)0)
#endif

static bool ring_push(struct sl__worker *w, struct sl__node *n)
{
    TSAN_RELEASE(n);
    return ck_ring_enqueue_mpmc(w->ring, w->ring_buf, n);
}

static struct sl__node *ring_pop(struct sl__worker *w)
{
    void *p;
    if (ck_ring_trydequeue_mpmc(w->ring, w->ring_buf, &p)) {
        TSAN_ACQUIRE(p);
        return p;
    }
    return NULL;
}

static void overflow_push(struct sl__sched *s, struct sl__node *n)
{
    pthread_mutex_lock(&s->ov_mu);
    if (s->ov_count == s->ov_cap) {
        int64_t cap = s->ov_cap ? s->ov_cap * 2 : 1024;
        struct sl__node **nv = sl__realloc(s->ov, (size_t)s->ov_cap * sizeof *nv,
                                           (size_t)cap * sizeof *nv);
        if (!nv) {
            /* Cannot grow: run the node right here rather than lose it. */
            pthread_mutex_unlock(&s->ov_mu);
            node_run(n, current_worker);
            return;
        }
        s->ov = nv;
        s->ov_cap = cap;
    }
    s->ov[s->ov_count] = n;
    atomic_store(&s->ov_count, s->ov_count + 1);
    pthread_mutex_unlock(&s->ov_mu);
}

static struct sl__node *overflow_pop(struct sl__sched *s, bool gpu, int gpu_ordinal)
{
    if (atomic_load_explicit(&s->ov_count, memory_order_relaxed) == 0)
        return NULL;
    struct sl__node *n = NULL;
    pthread_mutex_lock(&s->ov_mu);
    for (int64_t i = s->ov_count - 1; i >= 0; i--) {
        struct sl__node *c = s->ov[i];
        bool for_gpu = c->device >= 0;
        if (for_gpu == gpu && (!gpu || c->device == gpu_ordinal)) {
            n = c;
            s->ov[i] = s->ov[s->ov_count - 1];
            atomic_store(&s->ov_count, s->ov_count - 1);
            break;
        }
    }
    pthread_mutex_unlock(&s->ov_mu);
    return n;
}

static void wake_cpu(struct sl__sched *s)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&s->n_idle, memory_order_relaxed) > 0) {
        pthread_mutex_lock(&s->idle_mu);
        s->wake_seq++;
        pthread_cond_signal(&s->idle_cv);
        pthread_mutex_unlock(&s->idle_mu);
    }
}

static void wake_gpu(struct sl__sched *s, int gi)
{
    struct gpu_idle *g = &s->gpu_idle[gi];
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&g->idle, memory_order_relaxed)) {
        pthread_mutex_lock(&g->mu);
        g->seq++;
        pthread_cond_signal(&g->cv);
        pthread_mutex_unlock(&g->mu);
    }
}

/* Makes a ready node runnable: to its GPU worker, or to a CPU ring. A SL__NODE_FOLLOW
 * node made ready on the one GPU worker stays on that worker's ring: the worker is awake
 * and takes it next, where a CPU worker would first have to be woken (tens of
 * microseconds a hop; issue 19). With several GPUs it could hold up another GPU's work,
 * so it goes to the CPU workers as before. */
static void push_ready(struct sl__sched *s, struct sl__node *n)
{
    struct sl__worker *cw = current_worker;
    if ((n->flags & SL__NODE_FOLLOW) && n->device < 0 && s->n_gpu == 1 && cw && cw->sched == s &&
        cw->gpu >= 0 && ring_push(cw, n))
        return;
    if (n->device >= 0) {
        int gi = -1;
        for (int i = 0; i < s->n_gpu; i++) {
            if (s->workers[s->n_cpu + i].gpu == n->device)
                gi = i;
        }
        if (gi >= 0) {
            struct sl__worker *w = &s->workers[s->n_cpu + gi];
            if (!ring_push(w, n))
                overflow_push(s, n);
            wake_gpu(s, gi);
            return;
        }
        n->device = -1; /* no such GPU worker: fall back to CPU */
    }
    struct sl__worker *w = cw;
    if (!w || w->sched != s || w->gpu >= 0)
        w = &s->workers[atomic_fetch_add_explicit(&s->rr, 1, memory_order_relaxed) %
                        (uint32_t)s->n_cpu];
    if (!ring_push(w, n))
        overflow_push(s, n);
    wake_cpu(s);
}

static struct sl__node *steal(struct sl__worker *w)
{
    struct sl__sched *s = w->sched;
    if (s->n_cpu <= 1)
        return NULL;
    /* xorshift for the first victim, then walk all of them once. */
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    int start = (int)(w->rng % (uint64_t)s->n_cpu);
    for (int k = 0; k < s->n_cpu; k++) {
        int v = (start + k) % s->n_cpu;
        if (v == w->id)
            continue;
        struct sl__node *n = ring_pop(&s->workers[v]);
        if (n) {
            atomic_fetch_add_explicit(&w->stolen, 1, memory_order_relaxed);
            return n;
        }
    }
    return NULL;
}

static struct sl__node *find_work(struct sl__worker *w)
{
    struct sl__node *n = ring_pop(w);
    if (n)
        return n;
    if (w->gpu < 0) {
        n = steal(w);
        if (n)
            return n;
    }
    return overflow_pop(w->sched, w->gpu >= 0, w->gpu);
}

/* ---------------- nodes ---------------- */

static void graph_node_done(struct sl__graph *g)
{
    atomic_fetch_add_explicit(&g->completed, 1, memory_order_relaxed);
    if (atomic_fetch_sub_explicit(&g->live, 1, memory_order_acq_rel) != 1)
        return;
    /* Last node: run the finish hook, then let waiters go. Nothing may touch g after
     * the unlock, since a waiter may free it. */
    if (g->on_finish)
        g->on_finish(g, g->on_finish_user);
    pthread_mutex_lock(&g->mu);
    g->finished = true;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

/* Completes a node whose function has returned and whose children have completed:
 * releases its successors, then reports to its parent (iteratively). */
static void node_complete(struct sl__node *n)
{
    while (n) {
        struct sl__graph *g = n->graph;
        struct sl__sched *s = g->sched;
        spin_lock(&n->lock);
        n->done = true;
        int32_t ns = n->n_succ;
        spin_unlock(&n->lock);
        /* After `done` is set nobody appends, so the list can be read unlocked. */
        for (int32_t i = 0; i < ns; i++) {
            struct sl__node *c = i < SL__NODE_INLINE_SUCC ? n->succ_inline[i]
                                                          : n->succ_more[i - SL__NODE_INLINE_SUCC];
            if (atomic_fetch_sub_explicit(&c->deps, 1, memory_order_acq_rel) == 1)
                push_ready(s, c);
        }
        struct sl__node *parent = n->parent;
        if (parent && atomic_fetch_sub_explicit(&parent->pending, 1, memory_order_acq_rel) != 1)
            parent = NULL;
        if (n->flags & SL__NODE_REUSE) { /* before graph_node_done: g may go after it */
            sl__free(n->succ_more, 0);
            n->succ_more = NULL;
            spin_lock(&g->slab_lock);
            n->next_free = g->free_nodes;
            g->free_nodes = n;
            spin_unlock(&g->slab_lock);
        }
        graph_node_done(g);
        n = parent;
    }
}

static void node_run(struct sl__node *n, struct sl__worker *w)
{
    if (!atomic_load_explicit(&n->graph->skip, memory_order_relaxed))
        n->fn(n, w);
    if (w)
        atomic_fetch_add_explicit(&w->executed, 1, memory_order_relaxed);
    if (atomic_fetch_sub_explicit(&n->pending, 1, memory_order_acq_rel) == 1)
        node_complete(n);
}

/* A node's memory: a completed SL__NODE_REUSE node, else the next of the newest slab.
 * Under the graph's slab lock. */
static struct sl__node *node_memory(struct sl__graph *g)
{
    struct sl__node *n = g->free_nodes;
    if (n) {
        g->free_nodes = n->next_free;
        return n;
    }
    struct sl__slab *sl = g->slabs;
    if (!sl || sl->used == SLAB_NODES) {
        sl = sl__malloc(sizeof *sl);
        if (!sl)
            return NULL;
        sl->next = g->slabs;
        sl->used = 0;
        g->slabs = sl;
    }
    return &sl->nodes[sl->used++];
}

struct sl__node *sl__node_new(struct sl__graph *g, sl__node_fn fn, void *arg, uint32_t flags)
{
    spin_lock(&g->slab_lock);
    struct sl__node *n = node_memory(g);
    spin_unlock(&g->slab_lock);
    if (!n)
        return NULL;
    memset(n, 0, sizeof *n);
    n->fn = fn;
    n->arg = arg;
    n->graph = g;
    n->flags = flags ? flags : SL__NODE_CPU;
    n->device = -1;
    atomic_flag_clear(&n->lock);
    atomic_init(&n->deps, 1);
    atomic_init(&n->pending, 1);
    atomic_fetch_add_explicit(&g->live, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&g->created, 1, memory_order_relaxed);
    return n;
}

int sl__node_depend(struct sl__node *a, struct sl__node *b)
{
    spin_lock(&a->lock);
    if (a->done) {
        spin_unlock(&a->lock);
        return SL_OK;
    }
    if (a->n_succ >= SL__NODE_INLINE_SUCC) {
        int32_t k = a->n_succ - SL__NODE_INLINE_SUCC;
        if (k == a->cap_succ) {
            int32_t cap = a->cap_succ ? a->cap_succ * 2 : 8;
            struct sl__node **nv = sl__realloc(a->succ_more, (size_t)a->cap_succ * sizeof *nv,
                                               (size_t)cap * sizeof *nv);
            if (!nv) {
                spin_unlock(&a->lock);
                return SL_ENOMEM;
            }
            a->succ_more = nv;
            a->cap_succ = cap;
        }
        a->succ_more[k] = b;
    } else {
        a->succ_inline[a->n_succ] = b;
    }
    a->n_succ++;
    atomic_fetch_add_explicit(&b->deps, 1, memory_order_relaxed);
    spin_unlock(&a->lock);
    return SL_OK;
}

void sl__node_hold(struct sl__node *n)
{
    atomic_fetch_add_explicit(&n->pending, 1, memory_order_relaxed);
}

void sl__node_unhold(struct sl__node *n)
{
    if (atomic_fetch_sub_explicit(&n->pending, 1, memory_order_acq_rel) == 1)
        node_complete(n);
}

void sl__node_adopt(struct sl__node *parent, struct sl__node *child)
{
    child->parent = parent;
    atomic_fetch_add_explicit(&parent->pending, 1, memory_order_relaxed);
}

void sl__node_release(struct sl__node *n)
{
    if (atomic_fetch_sub_explicit(&n->deps, 1, memory_order_acq_rel) == 1)
        push_ready(n->graph->sched, n);
}

/* ---------------- graphs ---------------- */

int sl__graph_init(struct sl__graph *g, struct sl__sched *s)
{
    memset(g, 0, sizeof *g);
    g->sched = s;
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    atomic_init(&g->live, 1); /* the builder's hold */
    atomic_flag_clear(&g->slab_lock);
    return SL_OK;
}

void sl__graph_seal(struct sl__graph *g)
{
    graph_node_done(g);
    atomic_fetch_sub_explicit(&g->completed, 1, memory_order_relaxed);
}

void sl__graph_wait(struct sl__graph *g)
{
    pthread_mutex_lock(&g->mu);
    while (!g->finished)
        pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

bool sl__graph_wait_ms(struct sl__graph *g, int ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&g->mu);
    while (!g->finished) {
        if (pthread_cond_timedwait(&g->cv, &g->mu, &ts) == ETIMEDOUT)
            break;
    }
    bool done = g->finished;
    pthread_mutex_unlock(&g->mu);
    return done;
}

bool sl__graph_spin_us(struct sl__graph *g, int us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        /* `finished` is read under the mutex: its setter may still hold it, and g may go
         * as soon as a waiter has seen it (graph_node_done). */
        pthread_mutex_lock(&g->mu);
        bool done = g->finished;
        pthread_mutex_unlock(&g->mu);
        if (done)
            return true;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 >= us)
            return false;
        sched_yield();
    }
}

void sl__graph_skip(struct sl__graph *g)
{
    atomic_store(&g->skip, 1);
}

void sl__graph_fini(struct sl__graph *g)
{
    struct sl__slab *sl = g->slabs;
    while (sl) {
        for (int i = 0; i < sl->used; i++)
            sl__free(sl->nodes[i].succ_more, 0);
        struct sl__slab *next = sl->next;
        sl__free(sl, sizeof *sl);
        sl = next;
    }
    g->slabs = NULL;
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
}

/* ---------------- workers ---------------- */

static void idle_wait_cpu(struct sl__worker *w)
{
    struct sl__sched *s = w->sched;
    atomic_fetch_add(&s->n_idle, 1);
    atomic_thread_fence(memory_order_seq_cst);
    pthread_mutex_lock(&s->idle_mu);
    uint64_t seen = s->wake_seq;
    pthread_mutex_unlock(&s->idle_mu);
    struct sl__node *n = find_work(w);
    if (n) {
        atomic_fetch_sub(&s->n_idle, 1);
        node_run(n, w);
        return;
    }
    pthread_mutex_lock(&s->idle_mu);
    while (s->wake_seq == seen && !atomic_load(&s->stop))
        pthread_cond_wait(&s->idle_cv, &s->idle_mu);
    pthread_mutex_unlock(&s->idle_mu);
    atomic_fetch_sub(&s->n_idle, 1);
}

static void idle_wait_gpu(struct sl__worker *w)
{
    struct sl__sched *s = w->sched;
    struct gpu_idle *g = &s->gpu_idle[w->id - s->n_cpu];
    atomic_store(&g->idle, 1);
    atomic_thread_fence(memory_order_seq_cst);
    pthread_mutex_lock(&g->mu);
    uint64_t seen = g->seq;
    pthread_mutex_unlock(&g->mu);
    struct sl__node *n = find_work(w);
    if (n) {
        atomic_store(&g->idle, 0);
        node_run(n, w);
        return;
    }
    pthread_mutex_lock(&g->mu);
    while (g->seq == seen && !atomic_load(&s->stop))
        pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
    atomic_store(&g->idle, 0);
}

/* A GPU worker out of work keeps looking for more (yielding its core between looks) for
 * GPU_LINGER_NS before it sleeps: the next query's first node, or a pipeline's that a
 * CPU worker makes ready, then finds it awake, where waking it through its condition
 * variable put tens of microseconds before every query on a GPU (a 2^28-row sort of 9
 * ms, issue 19). Its core is its own (the CPU workers have the others). */
static struct sl__node *gpu_linger(struct sl__worker *w)
{
    struct sl__sched *s = w->sched;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct sl__node *n = find_work(w);
        if (n || atomic_load_explicit(&s->stop, memory_order_acquire))
            return n;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) >= GPU_LINGER_NS)
            return NULL;
        sched_yield();
    }
}

static void pin_to_core(struct sl__worker *w)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(w->cpu, &set);
    /* Pinning is an optimization: a failure (restricted cpuset) is not an error. */
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *worker_main(void *arg)
{
    struct sl__worker *w = arg;
    struct sl__sched *s = w->sched;
    current_worker = w;
    if (w->cpu >= 0)
        pin_to_core(w);
    sl__mem_set_node(w->numa_node);
    if (w->gpu >= 0 && s->cfg.gpu_init)
        s->cfg.gpu_init(w, s->cfg.gpu_user);
    bool gpu = w->gpu >= 0 && s->cfg.gpu_poll;
    while (!atomic_load_explicit(&s->stop, memory_order_acquire)) {
        int in_flight = gpu ? s->cfg.gpu_poll(w, false) : 0;
        struct sl__node *n = find_work(w);
        for (int i = 0; !n && i < SPIN_ROUNDS; i++) {
            ck_pr_stall();
            n = find_work(w);
        }
        if (n) {
            node_run(n, w);
            continue;
        }
        if (in_flight > 0) {
            /* Nothing new to enqueue: wait for the oldest GPU task instead of sleeping. */
            s->cfg.gpu_poll(w, true);
            continue;
        }
        if (w->gpu >= 0 && (n = gpu_linger(w)) != NULL) {
            node_run(n, w);
            continue;
        }
        if (w->gpu >= 0)
            idle_wait_gpu(w);
        else
            idle_wait_cpu(w);
    }
    if (w->gpu >= 0 && s->cfg.gpu_fini)
        s->cfg.gpu_fini(w, s->cfg.gpu_user);
    current_worker = NULL;
    return NULL;
}

static int online_cpus(int *list, int max)
{
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        for (int c = 0; c < CPU_SETSIZE && n < max; c++) {
            if (CPU_ISSET(c, &set))
                list[n++] = c;
        }
    }
    if (n == 0) {
        int k = sl__host_threads(0);
        for (int c = 0; c < k && n < max; c++)
            list[n++] = c;
    }
    return n;
}

/* The core GPU worker i (a worker index, after the CPU workers) is pinned to: the last
 * allowed core on its GPU's NUMA node that no earlier GPU worker took, else the last
 * allowed core not taken, else the last allowed core. The GPU worker launches its GPU's
 * work and spins while it waits for it: a GPU task of many small launches and waits
 * (k-means++ seeding) runs at the speed of that thread. Left to the OS, it ran on
 * whichever core the OS chose and moved it at times. */
static int gpu_worker_cpu(const struct sl__sched *s, int i, const int *cpus, int n_cpus,
                          bool have_numa)
{
    int node = s->cfg.gpu_numa ? s->cfg.gpu_numa[i - s->n_cpu] : -1;
    for (int pass = 0; pass < 2; pass++)
        for (int k = n_cpus - 1; k >= 0; k--) {
            bool taken = false;
            for (int j = s->n_cpu; j < i; j++)
                taken |= s->workers[j].cpu == cpus[k];
            if (taken || (pass == 0 && (node < 0 || !have_numa ||
                                        numa_node_of_cpu(cpus[k]) != node)))
                continue;
            return cpus[k];
        }
    return cpus[n_cpus - 1];
}

int sl__sched_create(struct sl__sched **out, const struct sl__sched_config *cfg)
{
    *out = NULL;
    if (cfg->n_cpu < 1 || cfg->n_gpu < 0)
        return sl__set_last_error(SL_EINVAL, "scheduler needs at least one CPU worker");
    struct sl__sched *s = sl__calloc(1, sizeof *s);
    if (!s)
        return sl__set_last_error(SL_ENOMEM, "out of memory creating the scheduler");
    s->cfg = *cfg;
    s->n_cpu = cfg->n_cpu;
    s->n_gpu = cfg->n_gpu;
    s->n_workers = cfg->n_cpu + cfg->n_gpu;
    pthread_mutex_init(&s->idle_mu, NULL);
    pthread_cond_init(&s->idle_cv, NULL);
    pthread_mutex_init(&s->ov_mu, NULL);
    s->workers = sl__calloc((size_t)s->n_workers, sizeof *s->workers);
    s->gpu_idle = sl__calloc((size_t)(s->n_gpu ? s->n_gpu : 1), sizeof *s->gpu_idle);
    if (!s->workers || !s->gpu_idle)
        goto nomem;
    for (int i = 0; i < s->n_gpu; i++) {
        pthread_mutex_init(&s->gpu_idle[i].mu, NULL);
        pthread_cond_init(&s->gpu_idle[i].cv, NULL);
    }
    int cpus[1024];
    int n_cpus = online_cpus(cpus, 1024);
    bool have_numa = numa_available() >= 0;
    for (int i = 0; i < s->n_workers; i++) {
        struct sl__worker *w = &s->workers[i];
        w->id = i;
        w->sched = s;
        w->gpu = i >= s->n_cpu ? cfg->gpu_ordinals[i - s->n_cpu] : -1;
        w->cpu = (cfg->pin && i < s->n_cpu) ? cpus[i % n_cpus] : -1;
        if (cfg->pin && cfg->pin_gpu && i >= s->n_cpu)
            w->cpu = gpu_worker_cpu(s, i, cpus, n_cpus, have_numa);
        w->numa_node = (have_numa && w->cpu >= 0) ? numa_node_of_cpu(w->cpu) : 0;
        if (w->numa_node < 0)
            w->numa_node = 0;
        w->rng = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
        w->ring = sl__malloc(sizeof(struct ck_ring));
        w->ring_buf = sl__malloc(sizeof(ck_ring_buffer_t) * RING_SIZE);
        if (!w->ring || !w->ring_buf)
            goto nomem;
        ck_ring_init(w->ring, RING_SIZE);
    }
    s->cfg.gpu_numa = NULL; /* the caller's array: read above only */
    for (int i = 0; i < s->n_workers; i++) {
        int rc = pthread_create(&s->workers[i].thread, NULL, worker_main, &s->workers[i]);
        if (rc != 0) {
            /* Stop the ones already started, then fail. */
            s->n_workers = i;
            sl__sched_destroy(s);
            return sl__set_last_error(SL_ENOMEM, "cannot start worker thread %d: %s", i,
                                      strerror(rc));
        }
    }
    *out = s;
    return SL_OK;
nomem:
    s->n_workers = 0; /* no threads started */
    sl__sched_destroy(s);
    return sl__set_last_error(SL_ENOMEM, "out of memory creating the scheduler");
}

void sl__sched_destroy(struct sl__sched *s)
{
    if (!s)
        return;
    atomic_store(&s->stop, true);
    pthread_mutex_lock(&s->idle_mu);
    s->wake_seq++;
    pthread_cond_broadcast(&s->idle_cv);
    pthread_mutex_unlock(&s->idle_mu);
    for (int i = 0; i < s->n_gpu && s->gpu_idle; i++) {
        pthread_mutex_lock(&s->gpu_idle[i].mu);
        s->gpu_idle[i].seq++;
        pthread_cond_broadcast(&s->gpu_idle[i].cv);
        pthread_mutex_unlock(&s->gpu_idle[i].mu);
    }
    for (int i = 0; i < s->n_workers; i++)
        pthread_join(s->workers[i].thread, NULL);
    int total = s->cfg.n_cpu + s->cfg.n_gpu;
    for (int i = 0; s->workers && i < total; i++) {
        sl__free(s->workers[i].ring, 0);
        sl__free(s->workers[i].ring_buf, 0);
    }
    for (int i = 0; i < s->n_gpu && s->gpu_idle; i++) {
        pthread_mutex_destroy(&s->gpu_idle[i].mu);
        pthread_cond_destroy(&s->gpu_idle[i].cv);
    }
    sl__free(s->gpu_idle, 0);
    sl__free(s->workers, 0);
    sl__free(s->ov, 0);
    pthread_mutex_destroy(&s->idle_mu);
    pthread_cond_destroy(&s->idle_cv);
    pthread_mutex_destroy(&s->ov_mu);
    sl__free(s, sizeof *s);
}

int sl__sched_num_cpu(const struct sl__sched *s)
{
    return s->n_cpu;
}

bool sl__sched_cpu_idle(const struct sl__sched *s)
{
    return atomic_load_explicit(&s->n_idle, memory_order_relaxed) >= s->n_cpu;
}

int sl__sched_num_workers(const struct sl__sched *s)
{
    return s->cfg.n_cpu + s->cfg.n_gpu;
}

struct sl__worker *sl__sched_worker(struct sl__sched *s, int i)
{
    return &s->workers[i];
}
