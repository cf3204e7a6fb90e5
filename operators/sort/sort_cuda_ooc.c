/* Out-of-core sort on a GPU (issue 8; paper-000's chunked sort with a CPU multiway
 * merge): the sort's CUDA finalize when the in-GPU sort of sort_cuda.c does not fit the
 * GPU memory budget, or the sink kept batches in host memory (it does once the budget
 * is short). docs/OUT_OF_CORE.md has the design; in short:
 *
 * finalize: the kept rows, in input order, sorted in GPU-budget-sized runs into pinned
 *   host memory (ooc_runs_cuda.c: upload, CUB sort, download, overlapped).
 * source: on CPU workers, task i merges output rows [i * P, (i + 1) * P) of the runs
 *   (co-ranks on the key, a loser tree: ooc_merge.c) into a fresh host batch. Ties go to
 *   the lower run, so the result is the stable sort, equal to the CPU sort's.
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
    int64_t part_rows;               /* output rows per source task */
};

static void ooc_free(void *p)
{
    struct ooc_state *st = p;
    if (st)
        sl__ooc_sorted_free(st->sorted);
    free(st);
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
    /* Output ranges: a morsel at most, and about 64 of them so that every CPU merges. */
    int64_t part = (g->n / 64 + 63) / 64 * 64, m = sl_task_morsel_rows(t);
    part = part < ((int64_t)1 << 16) ? (int64_t)1 << 16 : part;
    st->part_rows = part < m ? part : m;
    sl_task_phase_time(t, "ooc_gpu_runs", st->sorted->gpu_ms);
    return SL_OK;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int64_t sl__sort_ooc_tasks(sl_task_t *t)
{
    const struct sort_global *g = sl_task_gstate(t);
    const struct ooc_state *st = g->ooc_state;
    return g->n == 0 ? 0 : (g->n + st->part_rows - 1) / st->part_rows;
}

int sl__sort_ooc_source(sl_task_t *t)
{
    const struct sort_global *g = sl_task_gstate(t);
    const struct ooc_state *st = g->ooc_state;
    const struct sl__ooc_runs *m = &st->sorted->runs;
    double t0 = now_ms();
    int64_t lo = sl_task_index(t) * st->part_rows;
    int64_t hi = lo + st->part_rows < g->n ? lo + st->part_rows : g->n;
    int64_t *split = sl_task_alloc(t, (size_t)m->n_runs * 2 * sizeof *split);
    uint64_t *scratch = sl_task_alloc(t, (size_t)sl__ooc_scratch_words(m) * 8);
    sl_batch_t *b = sl__task_new_host_batch(t, sl_op_output_schema(sl_task_op(t)), hi - lo);
    if (!split || !scratch || !b) {
        sl_batch_unref(b);
        return SL_ENOMEM;
    }
    sl__ooc_corank(m, lo, split);
    sl__ooc_corank(m, hi, split + m->n_runs);
    void *out[SL__OOC_MAX_COLS];
    for (int c = 0; c < m->n_cols; c++)
        out[c] = sl__col_values(b, c);
    sl__ooc_merge(m, split, split + m->n_runs, out, scratch);
    sl_task_free(t, split);
    sl_task_free(t, scratch);
    sl_task_phase_time(t, "ooc_merge_cpu", now_ms() - t0);
    return sl_task_emit(t, b);
}
