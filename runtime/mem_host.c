/* Host memory: every allocation of the library goes through here.
 *
 * With jemalloc (see je_bind below), sluice creates an arena of its own and calls
 * mallocx/dallocx on it, so linking or dlopen-ing libsluice never replaces the embedding
 * program's malloc. Sanitizer builds use libc (posix_memalign/free) so that
 * AddressSanitizer sees every buffer.
 *
 * Counters of live allocations feed the tests' leak checks; the fault injector makes
 * the Nth allocation fail so error paths can be tested (SQLite's test_malloc.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

#ifdef SL_USE_JEMALLOC
#include <jemalloc/jemalloc.h> /* MALLOCX_* flag macros only */
#include <pthread.h>
#endif

static _Atomic int64_t live_allocs;
static _Atomic int64_t live_bytes;
static _Atomic int64_t total_allocs;
static _Atomic int64_t peak_bytes;
/* Allocations left before an injected failure; negative = injection off. */
static _Atomic int64_t fail_countdown = -1;

static bool injected_failure(void)
{
    if (SL__LIKELY(atomic_load_explicit(&fail_countdown, memory_order_relaxed) < 0))
        return false;
    /* Decrement only while the countdown is non-negative; the one that takes it from
     * 0 to -1 fails, later ones succeed (single-shot, as a test expects). */
    int64_t v = atomic_load(&fail_countdown);
    while (v >= 0) {
        if (atomic_compare_exchange_weak(&fail_countdown, &v, v - 1))
            return v == 0;
    }
    return false;
}

bool sl__mem_fault_now(void)
{
    return injected_failure();
}

void sl__mem_fail_after(int64_t n)
{
    atomic_store(&fail_countdown, n < 0 ? -1 : n);
}

void sl__mem_counters(struct sl__mem_counters *c)
{
    c->live_allocs = atomic_load(&live_allocs);
    c->live_bytes = atomic_load(&live_bytes);
    c->total_allocs = atomic_load(&total_allocs);
    c->peak_bytes = atomic_load(&peak_bytes);
}

void sl__mem_reset_peak(void)
{
    atomic_store(&peak_bytes, atomic_load(&live_bytes));
}

#ifdef SL_USE_JEMALLOC
/* jemalloc is bound at run time, not linked: Debian's libjemalloc uses initial-exec TLS
 * (about 2.6 KB), more than glibc keeps for libraries loaded after start, so a link-time
 * dependency would make dlopen(libsluice) fail. sluice uses jemalloc when the process
 * already has it (the program linked it, as the sluice command does) or when the loader
 * can still add it; otherwise it falls back to libc. Either way the program's malloc is
 * never replaced: sluice calls jemalloc only through mallocx/dallocx on its own arena. */
#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>

#include <numa.h>

#define MAX_NODES 64
#define MAX_ARENAS 4096

static void *(*je_mallocx_fn)(size_t, int);
static void (*je_dallocx_fn)(void *, int);
static size_t (*je_sallocx_fn)(const void *, int);
static int (*je_mallctl_fn)(const char *, void *, size_t *, void *, size_t);
static int arena_flags;               /* flags of node 0's arena (threads not on a node) */
static int node_flags[MAX_NODES];     /* MALLOCX_ARENA of each NUMA node's arena */
static int n_nodes = 1;
static signed char arena_node[MAX_ARENAS]; /* arena index -> NUMA node, -1 = not ours */
static extent_hooks_t *default_hooks;
static extent_hooks_t node_hooks;
static char alloc_name[160] = "libc";
static pthread_once_t je_once = PTHREAD_ONCE_INIT;
static _Thread_local int thread_node = -1;

void sl__mem_set_node(int node)
{
    thread_node = node;
}

/* Extent allocation of sluice's arenas: jemalloc's own, then the pages are bound to the
 * arena's NUMA node, so that a worker's data stays on its node. */
static void *node_extent_alloc(extent_hooks_t *h, void *new_addr, size_t size, size_t alignment,
                               bool *zero, bool *commit, unsigned arena_ind)
{
    (void)h;
    void *p = default_hooks->alloc(default_hooks, new_addr, size, alignment, zero, commit,
                                   arena_ind);
    int node = arena_ind < MAX_ARENAS ? arena_node[arena_ind] : -1;
    if (p && node >= 0 && n_nodes > 1)
        numa_tonode_memory(p, size, node);
    return p;
}

/* One arena per NUMA node with node_hooks; falls back to jemalloc's default arenas. */
static void make_node_arenas(void)
{
    for (int i = 0; i < MAX_ARENAS; i++)
        arena_node[i] = -1;
    size_t hsz = sizeof default_hooks;
    if (je_mallctl_fn("arena.0.extent_hooks", &default_hooks, &hsz, NULL, 0) != 0 ||
        !default_hooks)
        return;
    node_hooks = *default_hooks;
    node_hooks.alloc = node_extent_alloc;
    n_nodes = numa_available() >= 0 ? numa_max_node() + 1 : 1;
    if (n_nodes > MAX_NODES)
        n_nodes = MAX_NODES;
    extent_hooks_t *hp = &node_hooks;
    for (int n = 0; n < n_nodes; n++) {
        unsigned arena;
        size_t sz = sizeof arena;
        if (je_mallctl_fn("arenas.create", &arena, &sz, &hp, sizeof hp) != 0 || arena >= MAX_ARENAS) {
            n_nodes = n ? n : 1;
            break;
        }
        arena_node[arena] = (signed char)n;
        node_flags[n] = MALLOCX_ARENA(arena);
    }
    arena_flags = node_flags[0];
}

static void je_bind(void)
{
    void *h = dlopen("libjemalloc.so.2", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!h)
        h = dlopen("libjemalloc.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(alloc_name, sizeof alloc_name, "libc (jemalloc not loadable here)");
        return;
    }
    je_mallocx_fn = (void *(*)(size_t, int))dlsym(h, "mallocx");
    je_dallocx_fn = (void (*)(void *, int))dlsym(h, "dallocx");
    je_sallocx_fn = (size_t(*)(const void *, int))dlsym(h, "sallocx");
    je_mallctl_fn = (int (*)(const char *, void *, size_t *, void *, size_t))dlsym(h, "mallctl");
    if (!je_mallocx_fn || !je_dallocx_fn || !je_sallocx_fn || !je_mallctl_fn) {
        je_mallocx_fn = NULL;
        snprintf(alloc_name, sizeof alloc_name, "libc (jemalloc lacks mallocx)");
        return;
    }
    make_node_arenas();
    snprintf(alloc_name, sizeof alloc_name, "jemalloc (%d NUMA arena%s)", n_nodes,
             n_nodes == 1 ? "" : "s");
}

static int flags_here(void)
{
    int n = thread_node;
    return (n >= 0 && n < n_nodes) ? node_flags[n] : arena_flags;
}

static void *raw_alloc(size_t bytes)
{
    pthread_once(&je_once, je_bind);
    if (je_mallocx_fn)
        return je_mallocx_fn(bytes ? bytes : 1, flags_here() | MALLOCX_ALIGN(SL__ALIGN));
    void *p = NULL;
    return posix_memalign(&p, SL__ALIGN, bytes ? bytes : 1) == 0 ? p : NULL;
}
static void raw_free(void *p)
{
    if (je_mallocx_fn)
        je_dallocx_fn(p, 0); /* jemalloc finds the arena from the pointer */
    else
        free(p);
}
static size_t raw_usable(void *p)
{
    return je_mallocx_fn ? je_sallocx_fn(p, 0) : malloc_usable_size(p);
}
const char *sl__mem_allocator(void)
{
    pthread_once(&je_once, je_bind);
    return alloc_name;
}
#else
#include <malloc.h>
void sl__mem_set_node(int node)
{
    (void)node; /* libc: no per-node arenas */
}

static void *raw_alloc(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, SL__ALIGN, bytes ? bytes : 1) != 0)
        return NULL;
    return p;
}
static void raw_free(void *p)
{
    free(p);
}
static size_t raw_usable(void *p)
{
    return malloc_usable_size(p);
}
const char *sl__mem_allocator(void)
{
    return "libc";
}
#endif

/* ---------------- the big-block cache ----------------
 * Query state is big and short-lived (partitions, hash tables, batches of MiBs to
 * GiBs), and the next query asks for the same sizes again. Both jemalloc (which purges
 * "oversize" extents at once) and glibc (which unmaps large blocks) give such blocks
 * back to the kernel on free, and faulting the pages in again costs more than the work
 * (measured: a 2^22 join spent half its time in page faults). So blocks of at least
 * BIG_MIN bytes are rounded up to a size class (four per power of two: 25% waste at
 * most) and kept on free, up to BIG_CAP bytes in all, for the next allocation of that
 * class. sl__mem_trim gives them back (the last engine's close calls it). Sanitizer
 * builds skip the cache so that AddressSanitizer sees every reuse.
 * BIG_MIN is 256 KiB and a class keeps up to BIG_SLOTS blocks: a filter's output
 * columns (a morsel's passing rows, 0.25-0.5 MiB a column) that a join sink keeps until
 * the query ends were 4 KiB pages faulted in again by every query (jemalloc handed out
 * fresh pages for them) with 1 MiB and 16 blocks: TPC-H Q3 at SF 1 on 2 cores, CPU time
 * 73 -> 49 ms a query. BIG_SLOTS is 512: a materialized join of 2^24 rows leaves 3 x 137
 * output columns of one morsel (0.5 MiB each); with 128 slots most came back from
 * jemalloc as fresh pages, 2,000 to 24,000 page faults a query (bench join
 * --output materialize, 2 cores; 529 with 512 slots). */
#if defined(__SANITIZE_ADDRESS__)
#define SL__BIG_CACHE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SL__BIG_CACHE 0
#endif
#endif
#ifndef SL__BIG_CACHE
#define SL__BIG_CACHE 1
#endif

#define BIG_MIN ((size_t)1 << 18)
#define BIG_CAP ((size_t)4 << 30)
#define BIG_CLASSES 160
#define BIG_SLOTS 512

#include <pthread.h>

static pthread_mutex_t big_mu = PTHREAD_MUTEX_INITIALIZER;
static void *big_free[BIG_CLASSES][BIG_SLOTS];
static int big_n[BIG_CLASSES];
static size_t big_cached;

/* Class of a size >= BIG_MIN, rounding up (or down for a usable size we were given). */
static int big_class(size_t n, bool up, size_t *class_bytes)
{
    int lg = 63 - __builtin_clzll((unsigned long long)n);
    size_t base = (size_t)1 << lg, step = base / 4;
    size_t k = (n - base) / step; /* 0..3 */
    if (up && (n - base) % step)
        k++;
    size_t c = base + k * step; /* k may be 4: the next power of two */
    *class_bytes = c;
    int lg0 = 63 - __builtin_clzll((unsigned long long)BIG_MIN);
    int idx = (lg - lg0) * 4 + (int)k;
    return idx < BIG_CLASSES ? idx : -1;
}

static void *big_take(size_t bytes, size_t *class_bytes)
{
    int c = big_class(bytes, true, class_bytes);
    void *p = NULL;
    if (c < 0)
        return NULL;
    pthread_mutex_lock(&big_mu);
    if (big_n[c] > 0) {
        p = big_free[c][--big_n[c]];
        big_cached -= *class_bytes;
    }
    pthread_mutex_unlock(&big_mu);
    return p;
}

/* Keeps a freed big block if there is room; false if the caller must free it. */
static bool big_keep(void *p, size_t usable)
{
    size_t cb;
    int c = big_class(usable, false, &cb);
    bool kept = false;
    if (c < 0)
        return false;
    pthread_mutex_lock(&big_mu);
    if (big_n[c] < BIG_SLOTS && big_cached + cb <= BIG_CAP) {
        big_free[c][big_n[c]++] = p;
        big_cached += cb;
        kept = true;
    }
    pthread_mutex_unlock(&big_mu);
    return kept;
}

/* Fresh big blocks ask for transparent huge pages: faulting in 2 MiB at a time instead
 * of 4 KiB makes first touches of query state hundreds of times cheaper (most kernels
 * enable THP only "on madvise"). Only whole 2 MiB pages inside the block are advised. */
static void advise_huge(void *p, size_t bytes)
{
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t hi = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* advice only: failures are fine */
}

void sl__mem_trim(void)
{
    pthread_mutex_lock(&big_mu);
    for (int c = 0; c < BIG_CLASSES; c++) {
        while (big_n[c] > 0)
            raw_free(big_free[c][--big_n[c]]);
    }
    big_cached = 0;
    pthread_mutex_unlock(&big_mu);
}

int64_t sl__mem_cached_bytes(void)
{
    pthread_mutex_lock(&big_mu);
    int64_t v = (int64_t)big_cached;
    pthread_mutex_unlock(&big_mu);
    return v;
}

void *sl__malloc(size_t bytes)
{
    if (injected_failure())
        return NULL;
    void *p = NULL;
    if (SL__BIG_CACHE && bytes >= BIG_MIN) {
        size_t cb;
        p = big_take(bytes, &cb);
        size_t want = cb >= bytes ? cb : bytes;
        if (!p && (p = raw_alloc(want)) != NULL)
            advise_huge(p, want);
    } else {
        p = raw_alloc(bytes);
    }
    if (!p)
        return NULL;
    atomic_fetch_add_explicit(&live_allocs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&total_allocs, 1, memory_order_relaxed);
    int64_t now = atomic_fetch_add_explicit(&live_bytes, (int64_t)raw_usable(p),
                                            memory_order_relaxed) + (int64_t)raw_usable(p);
    int64_t peak = atomic_load_explicit(&peak_bytes, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak_explicit(&peak_bytes, &peak, now,
                                                                memory_order_relaxed,
                                                                memory_order_relaxed)) {
    }
    return p;
}

void *sl__calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *p = sl__malloc(n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

void *sl__realloc(void *p, size_t old_bytes, size_t new_bytes)
{
    void *q = sl__malloc(new_bytes);
    if (!q)
        return NULL;
    if (p) {
        memcpy(q, p, old_bytes < new_bytes ? old_bytes : new_bytes);
        sl__free(p, old_bytes);
    }
    return q;
}

void sl__free(void *p, size_t bytes)
{
    (void)bytes;
    if (!p)
        return;
    size_t usable = raw_usable(p);
    atomic_fetch_sub_explicit(&live_allocs, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&live_bytes, (int64_t)usable, memory_order_relaxed);
    if (SL__BIG_CACHE && usable >= BIG_MIN && big_keep(p, usable))
        return;
    raw_free(p);
}

char *sl__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = sl__malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

void sl__free_str(char *s)
{
    sl__free(s, 0);
}
