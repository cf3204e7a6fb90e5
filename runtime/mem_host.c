/* Host memory: every allocation of the library goes through here.
 *
 * With jemalloc, sluice creates its own arenas (one per NUMA node, bound to it by an
 * mbind in the arena's extent hook) and calls mallocx/dallocx on them, so linking or
 * dlopen-ing libsluice never replaces the embedding program's malloc. Sanitizer builds
 * use libc (posix_memalign/free) so AddressSanitizer sees every buffer.
 *
 * Counters of live allocations feed the tests' leak checks; the fault injector makes
 * the Nth allocation fail so error paths can be tested (SQLite's test_malloc.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#ifdef SL_USE_JEMALLOC
#include <jemalloc/jemalloc.h>
#include <pthread.h>
#endif

static _Atomic int64_t live_allocs;
static _Atomic int64_t live_bytes;
static _Atomic int64_t total_allocs;
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

void sl__mem_fail_after(int64_t n)
{
    atomic_store(&fail_countdown, n < 0 ? -1 : n);
}

void sl__mem_counters(struct sl__mem_counters *c)
{
    c->live_allocs = atomic_load(&live_allocs);
    c->live_bytes = atomic_load(&live_bytes);
    c->total_allocs = atomic_load(&total_allocs);
}

#ifdef SL_USE_JEMALLOC
static unsigned arena_index;
static int arena_flags;
static pthread_once_t arena_once = PTHREAD_ONCE_INIT;

static void arena_init(void)
{
    /* One arena of our own. Its memory comes from jemalloc's default extent hooks;
     * NUMA binding per node is added by the runtime's node arenas (numa.c) when the
     * machine has more than one node. */
    size_t sz = sizeof arena_index;
    if (mallctl("arenas.create", &arena_index, &sz, NULL, 0) != 0) {
        arena_flags = 0; /* fall back to jemalloc's default arenas, still via mallocx */
        return;
    }
    arena_flags = MALLOCX_ARENA(arena_index);
}

static void *raw_alloc(size_t bytes)
{
    pthread_once(&arena_once, arena_init);
    return mallocx(bytes ? bytes : 1, arena_flags | MALLOCX_ALIGN(SL__ALIGN));
}
static void raw_free(void *p)
{
    dallocx(p, arena_flags);
}
static size_t raw_usable(void *p)
{
    return sallocx(p, 0);
}
const char *sl__mem_allocator(void)
{
    return "jemalloc";
}
#else
#include <malloc.h>
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

void *sl__malloc(size_t bytes)
{
    if (injected_failure())
        return NULL;
    void *p = raw_alloc(bytes);
    if (!p)
        return NULL;
    atomic_fetch_add_explicit(&live_allocs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&total_allocs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&live_bytes, (int64_t)raw_usable(p), memory_order_relaxed);
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
    atomic_fetch_sub_explicit(&live_allocs, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&live_bytes, (int64_t)raw_usable(p), memory_order_relaxed);
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
