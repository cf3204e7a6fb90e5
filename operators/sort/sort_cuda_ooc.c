/* Out-of-core sort on a GPU (issue 8; paper-000's chunked sort with a CPU multiway
 * merge): the sort's CUDA finalize when the in-GPU sort of sort_cuda.c does not fit the
 * GPU memory budget, or the sink kept batches in host memory (it does once the budget
 * is short). docs/OUT_OF_CORE.md has the design; in short:
 *
 * finalize: the kept rows, in input order, sorted in GPU-budget-sized runs into pinned
 *   host memory (ooc_runs_cuda.c: upload, CUB sort, download, overlapped).
 *   Then it spawns merge tasks on the CPU workers: task i finds output rows
 *   [i * P, (i + 1) * P) in the runs (co-ranks on the key) and puts them in order into
 *   its slice of one host batch (a stable radix sort of the range: ooc_merge.c). Ties go to the lower run, so the result is the
 *   stable sort, equal to the CPU sort's.
 * source: the CPU sort's (morsel slices of that host batch).
 * Shapes: one int32/int64 key, columns of 4 or 8 bytes, no nulls, rows anywhere (host
 * or GPU), and a budget that holds runs of at least SL__OOC_MIN_RUN rows; otherwise
 * can_run says no and the CPU sorts. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ooc_runs.h"
#include "rows_cuda.h"
#include "sort_op.h"

struct ooc_state {
    struct sl__ooc_sorted *sorted;
    int64_t part_rows, n_parts;      /* output rows per merge task */
    double t0;                       /* when the merge started */
};

static void ooc_free(void *p)
{
    struct ooc_state *st = p;
    if (st)
        sl__ooc_sorted_free(st->sorted);
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
    if (d->n_cols > SL__OOC_MAX_COLS || d->spec.n_keys != 1 || g->rows.n == 0)
        return 0;
    in->batches = &g->rows.items[0].batch;
    in->n_batches = g->rows.n;
    in->stride = (int64_t)(sizeof(struct sl__rows_item) / sizeof(sl_batch_t *));
    in->n_cols = d->n_cols;
    for (int c = 0; c < d->n_cols; c++)
        in->col[c] = c;
    in->key = d->spec.keys[0].col;
    in->desc = d->spec.keys[0].desc;
    return 1;
}

int sl__sort_ooc_can_run(const sl_task_t *tc)
{
    sl_task_t *t = (sl_task_t *)tc;
    struct sl__ooc_input in;
    return make_input(t, &in) && sl__ooc_runs_can(t, &in);
}

/* ---------------- the merge: spawned tasks on CPU workers ---------------- */

/* Merge task i: output rows [i * P, (i + 1) * P) of the runs, into g->out. */
static int merge_part(sl_task_t *t)
{
    struct sort_global *g = sl_task_arg(t);
    const struct ooc_state *st = g->ooc_state;
    const struct sl__ooc_runs *m = &st->sorted->runs;
    int64_t lo = sl_task_index(t) * st->part_rows;
    int64_t hi = lo + st->part_rows < g->n ? lo + st->part_rows : g->n;
    int64_t *split = sl_task_alloc(t, (size_t)m->n_runs * 2 * sizeof *split);
    void *scratch = sl_task_alloc(t, (size_t)sl__ooc_sort_scratch_bytes(m, hi - lo));
    if (!split || !scratch)
        return SL_ENOMEM;
    sl__ooc_corank(m, lo, split);
    sl__ooc_corank(m, hi, split + m->n_runs);
    void *out[SL__OOC_MAX_COLS];
    for (int c = 0; c < m->n_cols; c++)
        out[c] = (char *)sl__col_values(g->out, c) + lo * m->width[c];
    /* Sorting the range (radix, its digits above the range's key band skipped) costs the
     * same whatever the number of runs; the loser tree (sl__ooc_merge) took 27 ns per
     * row at 16 runs and 44 at 64 where this takes 11 (2-core dev machine, 2^18-row
     * ranges). */
    sl__ooc_merge_by_sort(m, split, split + m->n_runs, out, scratch);
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

int sl__sort_ooc_finalize(sl_task_t *t)
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
    int rc = sl__ooc_runs_sort(t, &in, &st->sorted);
    if (rc < 0)
        return rc;
    g->n = st->sorted->n;
    g->ooc = 1;
    sl__rows_fini(&g->rows); /* the input's device batches go back to the pool now */
    sl_task_phase_time(t, "ooc_gpu_runs", st->sorted->gpu_ms);
    /* The result: one host batch that the source hands out in morsel slices, as the CPU
     * sort's. Ranges of n / 1024 rows (2^16..2^20): many tasks for every CPU, items of a
     * range in cache, and a narrow key band per range (fewer radix digits). */
    g->out = sl__task_new_host_batch(t, sl_op_output_schema(sl_task_op(t)), g->n);
    if (!g->out)
        return SL_ENOMEM;
    int64_t part = (g->n / 1024 + 63) / 64 * 64;
    part = part > ((int64_t)1 << 20) ? (int64_t)1 << 20 : part;
    st->part_rows = part < ((int64_t)1 << 16) ? (int64_t)1 << 16 : part;
    st->n_parts = (g->n + st->part_rows - 1) / st->part_rows;
    st->t0 = now_ms();
    return sl_task_spawn(t, &merge_phase, st->n_parts, g, &done_phase);
}
