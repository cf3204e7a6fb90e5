/* Times the CPU half of the out-of-core sort (operators/common/ooc_merge.c) on runs made
 * here on the host: K sorted runs of int32 (key, payload) pairs, merged by output ranges
 * on T threads as the spawned merge tasks of sort_cuda_ooc.c do. Prints ns per row of
 * each phase. Build (from the worktree root, after meson has configured build/):
 *   cc -O2 -g -std=gnu17 -D_GNU_SOURCE -pthread -Iinclude -Iruntime -Ioperators \
 *      -Ibuild -Ikernels/include bench/cpu/ooc_merge_bench.c operators/common/ooc_merge.c \
 *      operators/common/radix_sort.c -o /tmp/ooc_merge_bench
 * Run: /tmp/ooc_merge_bench LOG2N RUNS THREADS [OLD=0|1] [FRESH=0|1]
 *   OLD=1: the old task (exact co-ranks per task, ranges of n/1024 rows); 0: ranges cut
 *   at sampled splitters (sl__ooc_splitters, sl__ooc_merge_range), TARGET rows each
 *   (environment, default 2^16), GROUP consecutive ranges per task (default 4).
 *   FRESH=1: the output columns are fresh memory (first touch in the merge), as the
 *   finalize's new host batch is; 0: pre-touched (untimed). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "common/ooc_merge.h"
#include "sluice/data.h"

/* radix_sort.c's gathers need it; the merge does not call them. */
size_t sl_type_width(enum sl_type t)
{
    (void)t;
    return 4;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

struct job {
    const struct sl__ooc_runs *m;
    const uint64_t *codes;
    int64_t n, part, n_parts, n_ranges, group; /* group: ranges per task */
    void *out[2];
    _Atomic int64_t next;
    _Atomic int64_t cpu_ns;          /* the workers' CPU time: robust on a shared machine */
    int old;
};

static void *worker(void *arg)
{
    struct job *j = arg;
    const struct sl__ooc_runs *m = j->m;
    void *scratch = NULL;
    int64_t scratch_bytes = 0;
    int64_t *split = malloc((size_t)m->n_runs * 2 * 8);
    for (;;) {
        int64_t i = atomic_fetch_add(&j->next, 1);
        if (i >= j->n_parts)
            break;
        if (j->old) {
            int64_t lo = i * j->part, hi = lo + j->part < j->n ? lo + j->part : j->n;
            int64_t need = sl__ooc_sort_scratch_bytes(m, hi - lo);
            if (need > scratch_bytes) {
                free(scratch);
                scratch = malloc((size_t)need);
                scratch_bytes = need;
            }
            sl__ooc_corank(m, lo, split);
            sl__ooc_corank(m, hi, split + m->n_runs);
            void *o[2] = {(char *)j->out[0] + lo * 4, (char *)j->out[1] + lo * 4};
            sl__ooc_merge_by_sort(m, split, split + m->n_runs, o, scratch);
        } else {
            int64_t need = sl__ooc_sort_scratch_bytes(m, 2 * j->part);
            if (need > scratch_bytes) {
                free(scratch);
                scratch = malloc((size_t)need);
                scratch_bytes = need;
            }
            free(split);
            split = malloc((size_t)m->n_runs * 4 * 8);
#ifndef OLD_ONLY /* -DOLD_ONLY: built against the old ooc_merge.c, for comparison */
            int64_t last = (i + 1) * j->group < j->n_ranges ? (i + 1) * j->group : j->n_ranges;
            sl__ooc_merge_ranges(m, j->codes, j->n_ranges, i * j->group, last, 2 * j->part,
                                 j->out, split, scratch);
#endif
        }
    }
    free(split);
    free(scratch);
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    atomic_fetch_add(&j->cpu_ns, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s LOG2N RUNS THREADS [OLD] [FRESH]\n", argv[0]);
        return 2;
    }
    int64_t n = (int64_t)1 << atoi(argv[1]);
    int k = atoi(argv[2]), th = atoi(argv[3]);
    int old = argc > 4 ? atoi(argv[4]) : 0, fresh = argc > 5 ? atoi(argv[5]) : 1;
    int64_t *rows = malloc((size_t)k * 8);
    void **cols = malloc((size_t)k * 2 * sizeof *cols);
    uint64_t *tmp = malloc((size_t)(n / k + 1) * 8);
    for (int j = 0; j < k; j++) {
        rows[j] = n / k + (j < n % k);
        for (int64_t i = 0; i < rows[j]; i++) /* code << 32 | payload, sorted: a stable run */
            tmp[i] = (rnd() & 0xffffffff00000000ull) | (uint32_t)(j * (n / k) + i);
        qsort(tmp, (size_t)rows[j], 8, cmp_u64);
        int32_t *kc = malloc((size_t)rows[j] * 4), *pc = malloc((size_t)rows[j] * 4);
        for (int64_t i = 0; i < rows[j]; i++) {
            kc[i] = (int32_t)((uint32_t)(tmp[i] >> 32) ^ 0x80000000u);
            pc[i] = (int32_t)(uint32_t)tmp[i];
        }
        cols[2 * j] = kc, cols[2 * j + 1] = pc;
    }
    free(tmp);
    struct sl__ooc_runs m = {.n_cols = 2, .key_col = 0, .width = {4, 4}, .n_runs = k,
                             .rows = rows, .cols = cols};
    int reps = getenv("REPS") ? atoi(getenv("REPS")) : 3;
    double best_wall = 1e30, best_cpu = 1e30;
    for (int rep = 0; rep < reps; rep++) {
        struct job j = {.m = &m, .n = n, .old = old};
        j.out[0] = mmap(NULL, (size_t)n * 4, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        j.out[1] = mmap(NULL, (size_t)n * 4, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        madvise(j.out[0], (size_t)n * 4, MADV_HUGEPAGE);
        madvise(j.out[1], (size_t)n * 4, MADV_HUGEPAGE);
        if (!fresh) {
            memset(j.out[0], 1, (size_t)n * 4);
            memset(j.out[1], 1, (size_t)n * 4);
        }
        double t0 = now_ms(), t1 = t0;
        uint64_t *plan = NULL;
        if (old) {
            int64_t part = (n / 1024 + 63) / 64 * 64;
            part = part > ((int64_t)1 << 20) ? (int64_t)1 << 20 : part;
            j.part = part < ((int64_t)1 << 16) ? (int64_t)1 << 16 : part;
            j.n_parts = (n + j.part - 1) / j.part;
        } else {
            j.part = getenv("TARGET") ? atoll(getenv("TARGET")) : (int64_t)1 << 16;
            j.group = getenv("GROUP") ? atoll(getenv("GROUP")) : 4;
            j.n_ranges = (n + j.part - 1) / j.part;
            j.n_parts = (j.n_ranges + j.group - 1) / j.group;
            plan = malloc((size_t)j.n_ranges * 8);
#ifndef OLD_ONLY
            void *ss = malloc((size_t)sl__ooc_splitter_scratch_bytes(&m, j.n_ranges));
#else
            void *ss = NULL;
#endif
#ifndef OLD_ONLY
            sl__ooc_splitters(&m, j.n_ranges, plan, ss);
#endif
            free(ss);
            j.codes = plan;
            t1 = now_ms();
        }
        pthread_t tid[64];
        for (int i = 0; i < th; i++)
            pthread_create(&tid[i], NULL, worker, &j);
        for (int i = 0; i < th; i++)
            pthread_join(tid[i], NULL);
        double t2 = now_ms();
        const int32_t *ko = j.out[0];
        const uint32_t *po = j.out[1];
        for (int64_t i = 1; i < n; i++)
            if (ko[i - 1] > ko[i] || (ko[i - 1] == ko[i] && po[i - 1] > po[i])) {
                fprintf(stderr, "not sorted at %lld\n", (long long)i);
                return 1;
            }
        printf("n=2^%s runs=%d threads=%d old=%d fresh=%d ranges=%lld: plan %.1f ms, merge %.1f "
               "ms, total %.1f ms = %.2f ns/row; CPU time %.2f ns/row\n",
               argv[1], k, th, old, fresh, (long long)j.n_parts, t1 - t0, t2 - t1, t2 - t0,
               (t2 - t0) * 1e6 / (double)n, (double)j.cpu_ns / (double)n);
        free(plan);
        best_wall = t2 - t0 < best_wall ? t2 - t0 : best_wall;
        best_cpu = (double)j.cpu_ns / (double)n < best_cpu ? (double)j.cpu_ns / (double)n : best_cpu;
        munmap(j.out[0], (size_t)n * 4);
        munmap(j.out[1], (size_t)n * 4);
    }
    printf("best of %d: %.2f ns/row wall, %.2f ns/row CPU time\n", reps,
           best_wall * 1e6 / (double)n, best_cpu);
    return 0;
}
