/* Out-of-core sort on a GPU (issue 8; paper-000's chunked sort with a CPU multiway
 * merge): the sort's CUDA finalize when the in-GPU sort of sort_cuda.c does not fit the
 * GPU memory budget, or the sink kept batches in host memory (it does once the budget
 * is short). docs/OUT_OF_CORE.md has the design; in short:
 *
 * finalize: allocates the result (one host batch: in the GPU's pinned result memory
 *   when it has room, else pageable, with tasks that fault its pages in on the CPU
 *   workers) while the kept rows, in input order, are sorted in
 *   GPU-budget-sized runs into pinned host memory (ooc_runs_cuda.c: upload, CUB sort,
 *   download, overlapped). Then, when its buffers fit (merge_on_gpu), the GPU merge: buckets of
 *   output ranks (cut at sampled keys) re-sorted on the GPU from the runs' slices,
 *   downloaded straight into a pinned result, or into pinned blocks which CPU tasks copy
 *   into a pageable one while the next buckets sort.
 *   Else the CPU merge: the output cut into key ranges of about 2^15 rows at sampled
 *   key codes, and merge tasks on the CPU workers that each put a few consecutive
 *   ranges in order into their place in the result (a stable radix sort of each range's
 *   run slices: ooc_merge.c). Either way ties go to the lower run, so the result is the
 *   stable sort, equal to the CPU sort's.
 * source: the CPU sort's (morsel slices of that host batch).
 * Shapes: one key that is a signed 4- or 8-byte integer (int32, int64, date32, timestamp,
 * decimal(p <= 18)), columns of 4 or 8 bytes, no nulls, rows anywhere (host
 * or GPU), and a budget that holds runs of at least SL__OOC_MIN_RUN rows; otherwise
 * can_run says no and the CPU sorts. */
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "common/ooc_runs.h"
#include "common/rows_cuda.h"
#include "sort_op.h"

/* Output rows per key range: items and their copy (8 or 16 bytes a row) stay in L2,
 * and a range of 2^28 uniform int32 keys spans 2^19 codes (two radix passes). A piece
 * holds at most twice that (ranges vary around their target). */
#define RANGE_ROWS ((int64_t)1 << 15)
#define PIECE_ROWS (2 * RANGE_ROWS)
#define POPULATE_BYTES ((int64_t)32 << 20)  /* bytes of the result per populate task */

#define COPY_ROWS ((int64_t)1 << 20)    /* rows per copy task of the GPU merge */

/* A bucket of the GPU merge: sorted on the GPU into pinned blocks, then copied into the
 * result by CPU tasks; the last of them gives the blocks back. */
struct bucket {
    struct sort_global *g;
    int64_t row0, rows;
    void *cols[SL__OOC_MAX_COLS];
    int64_t bytes[SL__OOC_MAX_COLS];
    _Atomic int64_t left;            /* copy tasks not finished */
};

struct ooc_state {
    struct sl__ooc_sorted *sorted;
    uint64_t *codes;                 /* the P - 1 splitters */
    int64_t n_ranges, group, n_tasks; /* group: consecutive ranges per merge task */
    double t0;                       /* when the merge started */
    struct bucket *bk;               /* GPU merge: its buckets */
    int64_t nb;
    int direct;                      /* the result is pinned: buckets download into it */
    struct sl__pinned_owner owner;
};

static void ooc_free(void *p)
{
    struct ooc_state *st = p;
    if (st) {
        sl__ooc_sorted_free(st->sorted);
        free(st->codes);
        for (int64_t b = 0; b < st->nb; b++) /* blocks no copy task gave back (failures) */
            for (int c = 0; c < SL__OOC_MAX_COLS; c++)
                sl__pinned_owner_free(&st->owner, st->bk[b].cols[c], st->bk[b].bytes[c]);
        free(st->bk);
    }
    free(st);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The kept batches as a run input (no allocation: can_run calls it too). */
static int make_input(sl_task_t *t, struct sl__ooc_input *in)
{
    const struct sort_global *g = sl_task_gstate(t);
    const struct sort_data *d = sl_op_data(sl_task_op(t));
    _Static_assert(offsetof(struct sl__rows_item, batch) == 0 &&
                       sizeof(struct sl__rows_item) % sizeof(sl_batch_t *) == 0,
                   "rows items are read as a strided array of batch pointers");
    memset(in, 0, sizeof *in);
    if (d->n_cols > SL__OOC_MAX_COLS || d->spec.n_keys != 1 || g->m.rows.n == 0 ||
        !sl__sort_radix_types(sl_op_output_schema(sl_task_op(t))))
        return 0;
    in->batches = &g->m.rows.items[0].batch;
    in->n_batches = g->m.rows.n;
    in->stride = (int64_t)(sizeof(struct sl__rows_item) / sizeof(sl_batch_t *));
    in->n_cols = d->n_cols;
    for (int c = 0; c < d->n_cols; c++)
        in->col[c] = c;
    in->key = d->spec.keys[0].col;
    in->desc = d->spec.keys[0].desc;
    in->pack = 1; /* the GPU and the CPU merge both read packed runs */
    return 1;
}

int sl__sort_ooc_can_run(const sl_task_t *tc)
{
    sl_task_t *t = (sl_task_t *)tc;
    struct sl__ooc_input in;
    return make_input(t, &in) && sl__ooc_runs_can(t, &in);
}

/* ---------------- the result's pages, while the GPU sorts ---------------- */

/* Task i faults in bytes [i * POPULATE_BYTES, ...) of the result's columns laid end to
 * end. A fresh result of 2 GiB would otherwise be faulted (and zeroed by the kernel) by
 * the merge tasks, on the critical path; here the CPU workers do it while the GPU sorts
 * the runs. MADV_POPULATE_WRITE leaves the contents alone, so it may overlap the merge;
 * where the kernel lacks it (before Linux 5.14) the merge faults the pages as before. */
static int populate_part(sl_task_t *t)
{
#ifdef MADV_POPULATE_WRITE
    const sl_batch_t *out = sl_task_arg(t);
    int64_t lo = sl_task_index(t) * POPULATE_BYTES, hi = lo + POPULATE_BYTES, at = 0;
    const uintptr_t page = 4096;
    for (int c = 0; c < out->n_cols && at < hi; c++) {
        int64_t bytes = out->n_rows * (int64_t)sl_type_width(out->cols[c].type);
        int64_t a = lo > at ? lo - at : 0, b = hi - at < bytes ? hi - at : bytes;
        if (a < b) {
            uintptr_t p0 = (uintptr_t)sl__col_values(out, c) + (uintptr_t)a;
            uintptr_t p1 = (uintptr_t)sl__col_values(out, c) + (uintptr_t)b;
            p0 &= ~(page - 1);
            madvise((void *)p0, p1 - p0, MADV_POPULATE_WRITE); /* advice: failure is fine */
        }
        at += bytes;
    }
#endif
    (void)t;
    return SL_OK;
}

static const struct sl_impl populate_impl[] = {{.device = SL_DEVICE_CPU, .run = populate_part}};
static const struct sl_phase populate_phase = {populate_impl, 1, NULL};

static int spawn_populate(sl_task_t *t, sl_batch_t *out)
{
    int64_t bytes = 0;
    for (int c = 0; c < out->n_cols; c++)
        bytes += out->n_rows * (int64_t)sl_type_width(out->cols[c].type);
    if (bytes < 2 * POPULATE_BYTES)
        return SL_OK; /* small: not worth the tasks */
    return sl_task_spawn(t, &populate_phase, (bytes + POPULATE_BYTES - 1) / POPULATE_BYTES,
                         out, NULL);
}

/* ---------------- the merge: spawned tasks on CPU workers ---------------- */

/* Merge task i: key ranges [i * G, (i + 1) * G) of the runs, into g->m.out. */
static int merge_part(sl_task_t *t)
{
    struct sort_global *g = sl_task_arg(t);
    const struct ooc_state *st = g->ooc_state;
    const struct sl__ooc_runs *m = &st->sorted->runs;
    int64_t first = sl_task_index(t) * st->group;
    int64_t last = first + st->group < st->n_ranges ? first + st->group : st->n_ranges;
    int64_t *split = sl_task_alloc(t, (size_t)m->n_runs * 4 * sizeof *split);
    void *scratch = sl_task_alloc(t, (size_t)sl__ooc_sort_scratch_bytes(m, PIECE_ROWS));
    if (!split || !scratch)
        return SL_ENOMEM;
    void *out[SL__OOC_MAX_COLS];
    for (int c = 0; c < m->n_cols; c++)
        out[c] = sl__col_values(g->m.out, c);
    sl__ooc_merge_ranges(m, st->codes, st->n_ranges, first, last, PIECE_ROWS, out, split,
                         scratch);
    sl_task_free(t, split);
    sl_task_free(t, scratch);
    return SL_OK;
}

/* After the merge: the pinned runs go back to the pool now. */
static int merge_done(sl_task_t *t)
{
    struct sort_global *g = sl_task_arg(t);
    struct ooc_state *st = g->ooc_state;
    sl__ooc_sorted_free(st->sorted);
    st->sorted = NULL;
    sl_task_phase_time(t, "ooc_cpu_merge", now_ms() - st->t0);
    return SL_OK;
}

static const struct sl_impl merge_impl[] = {{.device = SL_DEVICE_CPU, .run = merge_part}};
static const struct sl_impl done_impl[] = {{.device = SL_DEVICE_CPU, .run = merge_done}};
static const struct sl_phase merge_phase = {merge_impl, 1, NULL};
static const struct sl_phase done_phase = {done_impl, 1, NULL};

/* The key ranges: P splitters sampled from the runs; G ranges per task, so that the
 * searches at the ends of a task (one per run) are shared by G ranges, while leaving
 * some 256 tasks for balance. */
static int plan_ranges(sl_task_t *t, struct ooc_state *st, int64_t n)
{
    const struct sl__ooc_runs *m = &st->sorted->runs;
    st->n_ranges = (n + RANGE_ROWS - 1) / RANGE_ROWS;
    st->group = st->n_ranges / 256 < 1 ? 1 : st->n_ranges / 256 > 4 ? 4 : st->n_ranges / 256;
    st->n_tasks = (st->n_ranges + st->group - 1) / st->group;
    st->codes = calloc((size_t)st->n_ranges, sizeof *st->codes);
    void *scratch = sl_task_alloc(t, (size_t)sl__ooc_splitter_scratch_bytes(m, st->n_ranges,
                                                                      SL__OOC_OVERSAMPLE));
    if (!st->codes || !scratch) {
        sl_task_free(t, scratch);
        return st->codes ? SL_ENOMEM : sl_task_fail(t, SL_ENOMEM, "out of memory");
    }
    sl__ooc_splitters(m, st->n_ranges, SL__OOC_OVERSAMPLE, st->codes, scratch, 1);
    sl_task_free(t, scratch);
    return SL_OK;
}

/* ---------------- the merge on the GPU (pass 2) ---------------- */

/* Copy task i of a bucket: its rows [i * COPY_ROWS, ...) from the pinned blocks into
 * the result; the last one to finish gives the bucket's blocks back. */
static int copy_part(sl_task_t *t)
{
    struct bucket *bk = sl_task_arg(t);
    struct sort_global *g = bk->g;
    struct ooc_state *st = g->ooc_state;
    int64_t lo = sl_task_index(t) * COPY_ROWS;
    int64_t hi = lo + COPY_ROWS < bk->rows ? lo + COPY_ROWS : bk->rows;
    for (int c = 0; c < g->m.out->n_cols; c++) {
        int64_t w = (int64_t)sl_type_width(g->m.out->cols[c].type);
        memcpy((char *)sl__col_values(g->m.out, c) + (bk->row0 + lo) * w,
               (const char *)bk->cols[c] + lo * w, (size_t)((hi - lo) * w));
    }
    if (atomic_fetch_sub(&bk->left, 1) == 1)
        for (int c = 0; c < g->m.out->n_cols; c++) {
            sl__pinned_owner_free(&st->owner, bk->cols[c], bk->bytes[c]);
            bk->cols[c] = NULL;
        }
    return SL_OK;
}

static const struct sl_impl copy_impl[] = {{.device = SL_DEVICE_CPU, .run = copy_part}};
static const struct sl_phase copy_phase = {copy_impl, 1, NULL};

/* Bucket b is in its pinned blocks: CPU tasks copy it into the result while the GPU
 * sorts the next ones. */
static int bucket_ready(sl_task_t *t, void *arg, int64_t b)
{
    struct ooc_state *st = arg;
    struct bucket *bk = &st->bk[b];
    if (st->direct)
        return SL_OK; /* downloaded in place */
    int64_t n = (bk->rows + COPY_ROWS - 1) / COPY_ROWS;
    atomic_store(&bk->left, n);
    return n ? sl_task_spawn(t, &copy_phase, n, bk, NULL) : SL_OK;
}

/* 1 to merge on the GPU: the option debug_ooc_sort_merge=gpu or cpu forces it; by default
 * when the budget left holds pass 2's buffers and tables for buckets of *R rows (the
 * runs' size, halved while the tables do not fit beside them), and the pinned blocks of
 * the result fit the host budget beside the runs (none when the result is pinned
 * itself: `direct`). *gather: how buckets reach the GPU (sl__ooc_gather_of). With
 * copy calls (one per run and column a bucket), only up to 64 runs: at 128 they
 * dominate. */
static int merge_on_gpu(sl_task_t *t, const struct sl__ooc_sorted *so, int64_t *R, int direct,
                        enum sl__ooc_gather *gather)
{
    enum { AUTO, CPU, GPU };
    int64_t force = AUTO;
    sl_task_option_int(t, "debug_ooc_sort_merge", &force);
    *gather = sl__ooc_gather_of(t, &so->runs);
    if (so->runs.n_runs < 2 || force == CPU)
        return 0;
    int64_t row_bytes = 0;
    for (int c = 0; c < so->runs.n_cols; c++)
        row_bytes += so->runs.width[c];
    /* pinned classes are powers of two: up to twice the bytes */
    if (!direct && !sl__task_host_room(t, 2 * so->n * row_bytes))
        return 0;
    if (!(*R = sl__ooc_merge_rows(t, so, *R, *gather)))
        return 0;
    return force == GPU || *gather != SL__OOC_GATHER_COPY || so->runs.n_runs <= 64;
}

/* Pass 2 on the GPU; the result is complete once the copy tasks are (the finalize's
 * children). */
static int gpu_merge(sl_task_t *t, struct sort_global *g, struct ooc_state *st, int64_t R,
                     enum sl__ooc_gather gather)
{
    const struct sl__ooc_runs *m = &st->sorted->runs;
    int64_t nb = 0;
    double t_cuts = now_ms();
    g->ooc_pass1_cuts = sl__ooc_pass1_cuts(st->sorted, R);
    int64_t *tops = NULL; /* narrow runs: each bucket's window, from pass 1 */
    int64_t *cuts = sl__ooc_bucket_cuts(t, st->sorted, R, &nb, &tops);
    if (!cuts)
        return SL_ENOMEM;
    sl_task_phase_time(t, "ooc_bucket_cuts", now_ms() - t_cuts);
    void **dst = calloc((size_t)(nb * m->n_cols + 1), sizeof *dst);
    st->bk = calloc((size_t)nb + 1, sizeof *st->bk);
    if (!dst || !st->bk) {
        free(cuts), free(dst), free(tops);
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    }
    st->nb = nb;
    g->n_ooc_buckets = nb;
    int64_t row0 = 0;
    for (int64_t b = 0; b < nb; b++) {
        struct bucket *bk = &st->bk[b];
        bk->g = g;
        bk->row0 = row0;
        for (int64_t j = 0; j < m->n_runs; j++)
            bk->rows += cuts[(b + 1) * m->n_runs + j] - cuts[b * m->n_runs + j];
        row0 += bk->rows;
        for (int c = 0; c < m->n_cols; c++) {
            if (st->direct) { /* into the result: no blocks, no copy */
                dst[b * m->n_cols + c] = (char *)sl__col_values(g->m.out, c) +
                                         bk->row0 * m->width[c];
                continue;
            }
            bk->bytes[c] = bk->rows * m->width[c];
            if (!(bk->cols[c] = dst[b * m->n_cols + c] = sl__task_pinned_alloc(t, bk->bytes[c]))) {
                free(cuts), free(dst), free(tops);
                return SL_EBUDGET;
            }
        }
    }
    double t0 = now_ms();
    /* A pinned result needs no hand-over: the host enqueues every bucket without waiting. */
    int rc = sl__ooc_runs_merge(t, st->sorted, cuts, nb, tops, R, gather, dst,
                                st->direct ? NULL : bucket_ready, st);
    free(cuts), free(dst), free(tops);
    sl_task_phase_time(t, "ooc_gpu_merge", now_ms() - t0);
    sl__ooc_sorted_free(st->sorted); /* the pinned runs go back to the pool now */
    st->sorted = NULL;
    return rc;
}

static int64_t input_rows(const struct sl__ooc_input *in)
{
    int64_t n = 0;
    for (int64_t i = 0; i < in->n_batches; i++)
        n += in->batches[i * (in->stride > 0 ? in->stride : 1)]->n_rows;
    return n;
}

static int finalize(sl_task_t *t);

/* The finalize, timed as a whole (phase ooc_finalize: the phases inside it and what lies
 * between them; with a CPU merge, until its tasks are spawned). */
int sl__sort_ooc_finalize(sl_task_t *t)
{
    double t0 = now_ms();
    int rc = finalize(t);
    sl_task_phase_time(t, "ooc_finalize", now_ms() - t0);
    return rc;
}

static int finalize(sl_task_t *t)
{
    struct sort_global *g = sl_task_gstate(t);
    struct sl__ooc_input in;
    if (!make_input(t, &in))
        return sl_task_fail(t, SL_EINTERNAL, "out-of-core sort: not a shape it takes");
    struct ooc_state *st = calloc(1, sizeof *st);
    if (!st)
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    g->ooc_state = st; /* freed with the query's state, whatever happens below */
    g->ooc_free = ooc_free;
    /* The result: one host batch that the source hands out in morsel slices, as the CPU
     * sort's; pinned (faulted in already) or pageable, whose pages CPU tasks fault in
     * while the GPU sorts the runs. */
    double t0 = now_ms();
    g->m.out = sl__task_new_result_batch(t, sl_op_output_schema(sl_task_op(t)),
                                         input_rows(&in), &st->direct);
    if (!g->m.out)
        return SL_ENOMEM;
    sl_task_phase_time(t, "ooc_result_alloc", now_ms() - t0);
    int rc = st->direct ? SL_OK : spawn_populate(t, g->m.out);
    if (rc < 0)
        return rc;
    for (int64_t i = 0; i < in.n_batches; i++)
        g->ooc_gpu_batches += sl_batch_device(in.batches[i * in.stride]) >= 0;
    rc = sl__ooc_runs_sort(t, &in, &st->sorted);
    if (rc < 0)
        return rc;
    g->m.n = st->sorted->n;
    g->ooc = 1;
    g->n_ooc_runs = st->sorted->runs.n_runs;
    g->ooc_packed = st->sorted->runs.packed;
    g->ooc_narrow = st->sorted->runs.narrow;
    g->ooc_sets = st->sorted->sets;
    sl__rows_fini(&g->m.rows); /* the input's device batches go back to the pool now */
    sl_task_phase_time(t, "ooc_gpu_runs", st->sorted->gpu_ms);
    st->owner = st->sorted->owner;
    int64_t R = 0; /* the runs' size: a bucket of the GPU merge fits a run's buffers */
    for (int64_t j = 0; j < st->sorted->runs.n_runs; j++)
        R = st->sorted->rows[j] > R ? st->sorted->rows[j] : R;
    enum sl__ooc_gather gather;
    if (merge_on_gpu(t, st->sorted, &R, st->direct, &gather)) {
        g->gpu_merge = 1;
        return gpu_merge(t, g, st, R, gather);
    }
    st->t0 = now_ms();
    if ((rc = plan_ranges(t, st, g->m.n)) < 0)
        return rc;
    return sl_task_spawn(t, &merge_phase, st->n_tasks, g, &done_phase);
}
