/* Out-of-core sort-merge join on a GPU (issue 8; paper-000: sort GPU-sized chunks,
 * merge the runs on CPU threads, join by key ranges): the join's CUDA finalize for
 * algo=sortmerge when the in-GPU join does not fit the GPU memory budget.
 *
 * finalize (GPU worker): each side's key and output columns are sorted in GPU-budget-
 *   sized runs into pinned host memory (common/ooc_runs_cuda.c: upload, CUB sort,
 *   download, overlapped through two buffer sets and three streams), left side first,
 *   each with the whole budget; then, where the budgets hold it, the side's runs are
 *   merged into one on the GPU (sl__ooc_runs_merge_all: buckets re-sorted, as the sort's
 *   GPU merge), so that a range of it is already in order.
 *   Then it spawns one task per key range on the CPU workers: task i takes the keys in
 *   [v_i, v_i+1) where v_i is the key at rank i * n / P of the larger side's merged
 *   order, so both sides split at the same key values and every key lands in one task.
 *   It puts that range of each side in order (one run: its slice as it is; several:
 *   co-ranks and a radix sort, common/ooc_merge.c) and merge-joins the two sorted ranges (count, then write) into host batches of at
 *   most a morsel, kept per range.
 * source: task i emits range i's batches.
 *
 * Shapes: inner joins, output materialized, one int32/int64 key, output columns of 4 or
 * 8 bytes, no nulls in keys or output columns, and a budget that holds runs of at least
 * SL__OOC_MIN_RUN rows. Other kinds (semi, anti, left: their unmatched-row bookkeeping
 * across ranges is not written yet), aggregates and other shapes are left to the other
 * paths: join_cuda_ooc.c (the out-of-core hash join) when it takes them, else the CPU.
 * A key held by many rows of both sides makes one range (one task) large: skew costs
 * balance, not correctness. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "join_cuda_int.h"
#include "common/ooc_runs.h"

#define MAX_RANGES 4096
#define RANGE_ROWS ((int64_t)1 << 18)   /* rows of the larger side per range task */

static const struct sl_phase range_phase, done_phase;

/* One range's result. */
struct range_out {
    sl_batch_t **b;
    int64_t n, cap;
};

struct smj {
    struct sl__ooc_sorted *side[2];
    struct range_out *out;              /* n_ranges */
    double t0;
    struct sl__ooc_input in[2];
    int out_rc[2 * JOIN_MAX_COLS];      /* output column i: run column of its side */
    int64_t n[2], n_ranges;
    int big;                            /* the side the ranges are cut on */
};

void join_smj_ooc_free(struct join_state *st)
{
    struct smj *m = st->smj;
    if (!m)
        return;
    sl__ooc_sorted_free(m->side[0]);
    sl__ooc_sorted_free(m->side[1]);
    for (int64_t i = 0; m->out && i < m->n_ranges; i++) {
        for (int64_t j = 0; j < m->out[i].n; j++)
            sl_batch_unref(m->out[i].b[j]);
        free(m->out[i].b);
    }
    free(m->out);
    free(m);
    st->smj = NULL;
}

/* Run columns of side s: the key first, then its other output columns once each. */
static int make_inputs(const struct join_state *st, const struct join_data *d, struct smj *m)
{
    for (int s = 0; s < 2; s++) {
        struct sl__ooc_input *in = &m->in[s];
        memset(in, 0, sizeof *in);
        in->batches = st->side[s].batches;
        in->n_batches = st->side[s].n_batches;
        in->col[in->n_cols++] = d->key[s][0];
        m->n[s] = 0;
        for (int64_t i = 0; i < in->n_batches; i++)
            m->n[s] += in->batches[i]->n_rows;
    }
    for (int i = 0; i < d->n_out; i++) {
        struct sl__ooc_input *in = &m->in[d->out[i].side];
        int w = sl_type_width(d->out[i].type), rc = -1;
        if (w != 4 && w != 8)
            return 0;
        for (int c = 0; c < in->n_cols && rc < 0; c++)
            if (in->col[c] == d->out[i].col)
                rc = c;
        if (rc < 0) {
            if (in->n_cols == SL__OOC_MAX_COLS)
                return 0;
            rc = in->n_cols;
            in->col[in->n_cols++] = d->out[i].col;
        }
        m->out_rc[i] = rc;
    }
    return 1;
}

int join_smj_ooc_can_run(const sl_task_t *tc)
{
    sl_task_t *t = (sl_task_t *)tc;
    const struct join_data *d = sl_op_data(sl_task_op(t));
    const struct join_state *st = sl_task_gstate(t);
    if (d->algo != JOIN_SORTMERGE || d->kind != JOIN_INNER || d->aggregate || d->n_keys != 1 ||
        (d->ktype[0] != SL_TYPE_INT32 && d->ktype[0] != SL_TYPE_INT64) || d->n_out < 1 ||
        d->n_resid)
        return 0;
    struct smj m;
    if (!make_inputs(st, d, &m))
        return 0;
    if (m.n[0] == 0 || m.n[1] == 0)
        return 1; /* nothing to join */
    return sl__ooc_runs_can(t, &m.in[0]) && sl__ooc_runs_can(t, &m.in[1]);
}

int join_smj_ooc_finalize(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    const struct join_data *d = sl_op_data(sl_task_op(t));
    struct smj *m = calloc(1, sizeof *m);
    if (!m)
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    st->smj = m; /* freed with the query's state (join_fini_global) */
    st->d = d;
    st->smj_ooc = 1;
    if (!make_inputs(st, d, m))
        return sl_task_fail(t, SL_EINTERNAL, "out-of-core sort-merge join: not a shape it takes");
    if (m->n[0] == 0 || m->n[1] == 0)
        return SL_OK; /* no ranges: an empty result */
    double ms = 0, merge_ms = 0;
    int64_t force = 0; /* debug_ooc_sort_merge: auto, cpu, gpu */
    sl_task_option_int(t, "debug_ooc_sort_merge", &force);
    for (int s = 0; s < 2; s++) {
        int rc = sl__ooc_runs_sort(t, &m->in[s], &m->side[s]);
        if (rc < 0)
            return rc;
        ms += m->side[s]->gpu_ms;
        /* The side's runs merged into one on the GPU (pass 2), before the other side's
         * runs take the budget: the range tasks then only merge-join. */
        double t0 = join_now_ms();
        if (force != 1 && (rc = sl__ooc_runs_merge_all(t, m->side[s])) < 0)
            return rc;
        st->smj_gpu_merged += force != 1 && rc == 1;
        merge_ms += join_now_ms() - t0;
    }
    sl_task_phase_time(t, "ooc_gpu_merge", merge_ms);
    m->big = m->n[1] > m->n[0];
    int64_t r = (m->n[m->big] + RANGE_ROWS - 1) / RANGE_ROWS;
    r = r < 1 ? 1 : r > MAX_RANGES ? MAX_RANGES : r;
    if (!(m->out = calloc((size_t)r, sizeof *m->out)))
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    m->n_ranges = r;
    sl_task_phase_time(t, "ooc_gpu_runs", ms);
    m->t0 = join_now_ms();
    return sl_task_spawn(t, &range_phase, m->n_ranges, st, &done_phase);
}

int64_t join_smj_ooc_source_tasks(sl_task_t *t)
{
    const struct join_state *st = sl_task_gstate(t);
    return st->smj ? ((const struct smj *)st->smj)->n_ranges : 0;
}

/* Source task i: range i's batches (their references go downstream). */
int join_smj_ooc_source(sl_task_t *t)
{
    const struct join_state *st = sl_task_gstate(t);
    struct range_out *o = &((struct smj *)st->smj)->out[sl_task_index(t)];
    for (int64_t j = 0; j < o->n; j++) {
        sl_batch_t *b = o->b[j];
        o->b[j] = NULL;
        gj_out_share_dicts(st->d, st, b);
        int rc = sl_task_emit(t, b);
        if (rc < 0)
            return rc;
    }
    o->n = 0;
    return SL_OK;
}

/* ---------------- one key range: merge both sides, then merge-join them ---------------- */

struct side_range {
    int64_t n;
    void *col[SL__OOC_MAX_COLS];        /* the merged rows, column by column */
    int w[SL__OOC_MAX_COLS];
    int owned;                          /* col[] allocated here (else inside the one run) */
};

static inline int64_t key_at(const struct side_range *r, int64_t i)
{
    return r->w[0] == 4 ? ((const int32_t *)r->col[0])[i] : ((const int64_t *)r->col[0])[i];
}

/* Rows of side s with key codes in [lo, hi) (whole = 1: from the start; last = 1: to the
 * end), merged into r. */
static int merge_range(sl_task_t *t, const struct sl__ooc_runs *runs, uint64_t lo, uint64_t hi,
                       int first, int last, struct side_range *r)
{
    int64_t k = runs->n_runs;
    int64_t *from = sl_task_alloc(t, (size_t)(2 * k) * sizeof *from), *to = from + k;
    if (!from)
        return SL_ENOMEM;
    if (first)
        memset(from, 0, (size_t)k * sizeof *from);
    else
        sl__ooc_split_below(runs, lo, from);
    if (last)
        memcpy(to, runs->rows, (size_t)k * sizeof *to);
    else
        sl__ooc_split_below(runs, hi, to);
    r->n = 0;
    for (int64_t j = 0; j < k; j++)
        r->n += to[j] > from[j] ? to[j] - from[j] : 0;
    r->owned = k > 1;
    for (int c = 0; c < runs->n_cols && k == 1; c++) { /* merged on the GPU: in order */
        r->w[c] = runs->width[c];
        r->col[c] = (char *)runs->cols[c] + from[0] * r->w[c];
    }
    for (int c = 0; c < runs->n_cols && k > 1; c++) {
        r->w[c] = runs->width[c];
        if (!(r->col[c] = sl_task_alloc(t, (size_t)(r->n > 0 ? r->n : 1) * (size_t)r->w[c])))
            return SL_ENOMEM;
    }
    if (r->n > 0 && k > 1) { /* the range's rows in order (common/ooc_merge.c) */
        void *scratch = sl_task_alloc(t, (size_t)sl__ooc_sort_scratch_bytes(runs, r->n));
        if (!scratch)
            return SL_ENOMEM;
        sl__ooc_merge_by_sort(runs, from, to, r->col, scratch);
        sl_task_free(t, scratch);
    }
    sl_task_free(t, from);
    return SL_OK;
}

/* The output being written: batches of at most `cap` rows. */
struct out {
    sl_task_t *t;
    const struct join_data *d;
    const struct smj *m;
    const struct side_range *r[2];
    sl_batch_t *b;
    struct range_out *keep;
    void *col[2 * JOIN_MAX_COLS];
    int64_t at, size, left, cap;
};

static int out_next(struct out *o)
{
    if (o->b) { /* kept for the source (one writer per range: no lock) */
        struct range_out *r = o->keep;
        if (r->n == r->cap) {
            int64_t cap = r->cap ? 2 * r->cap : 8;
            sl_batch_t **nb = realloc(r->b, (size_t)cap * sizeof *nb);
            if (!nb)
                return sl_task_fail(o->t, SL_ENOMEM, "out of memory");
            r->b = nb;
            r->cap = cap;
        }
        r->b[r->n++] = o->b;
        o->b = NULL;
    }
    if (o->left == 0)
        return SL_OK;
    o->size = o->left < o->cap ? o->left : o->cap;
    o->left -= o->size;
    o->at = 0;
    o->b = sl__task_new_host_batch(o->t, sl_op_output_schema(sl_task_op(o->t)), o->size);
    if (!o->b)
        return SL_ENOMEM;
    for (int c = 0; c < o->d->n_out; c++)
        o->col[c] = sl__col_values(o->b, c);
    return SL_OK;
}

/* Writes the output row of left row i and right row j. */
static inline void out_row(struct out *o, int64_t i, int64_t j)
{
    for (int c = 0; c < o->d->n_out; c++) {
        int s = o->d->out[c].side, rc = o->m->out_rc[c];
        const struct side_range *r = o->r[s];
        int64_t row = s == 0 ? i : j;
        if (r->w[rc] == 4)
            ((uint32_t *)o->col[c])[o->at] = ((const uint32_t *)r->col[rc])[row];
        else
            ((uint64_t *)o->col[c])[o->at] = ((const uint64_t *)r->col[rc])[row];
    }
    o->at++;
}

/* Merge join of two ranges sorted ascending by key: pass 0 counts, pass 1 writes. */
static int merge_join(struct out *o, int64_t *count, int write)
{
    const struct side_range *L = o->r[0], *R = o->r[1];
    int64_t i = 0, j = 0, n = 0;
    while (i < L->n && j < R->n) {
        int64_t a = key_at(L, i), b = key_at(R, j);
        if (a < b) {
            i++;
        } else if (b < a) {
            j++;
        } else {
            int64_t ie = i + 1, je = j + 1;
            while (ie < L->n && key_at(L, ie) == a)
                ie++;
            while (je < R->n && key_at(R, je) == a)
                je++;
            n += (ie - i) * (je - j);
            for (int64_t x = i; write && x < ie; x++)
                for (int64_t y = j; y < je; y++) {
                    if (o->at == o->size) {
                        int rc = out_next(o);
                        if (rc < 0)
                            return rc;
                    }
                    out_row(o, x, y);
                }
            i = ie;
            j = je;
        }
    }
    *count = n;
    return SL_OK;
}

/* Range task i (spawned by finalize, on a CPU worker). */
static int join_range(sl_task_t *t)
{
    const struct join_state *st = sl_task_arg(t);
    struct smj *m = st->smj;
    int64_t i = sl_task_index(t), P = m->n_ranges, nb = m->n[m->big];
    const struct sl__ooc_runs *big = &m->side[m->big]->runs;
    int first = i == 0, last = i == P - 1;
    uint64_t lo = first ? 0 : sl__ooc_code_at_rank(big, i * nb / P);
    uint64_t hi = last ? 0 : sl__ooc_code_at_rank(big, (i + 1) * nb / P);
    if (!first && !last && lo == hi)
        return SL_OK; /* one key spans this range's ranks: the task that starts it joins it */
    struct side_range r[2];
    int rc;
    for (int s = 0; s < 2; s++)
        if ((rc = merge_range(t, &m->side[s]->runs, lo, hi, first, last, &r[s])) < 0)
            return rc;
    struct out o = {.t = t, .d = st->d, .m = m, .r = {&r[0], &r[1]}, .keep = &m->out[i],
                    .cap = sl_task_morsel_rows(t)};
    int64_t n = 0;
    if ((rc = merge_join(&o, &n, 0)) < 0)
        return rc;
    o.left = n;
    if (n > 0 && ((rc = out_next(&o)) < 0 || (rc = merge_join(&o, &n, 1)) < 0 ||
                  (rc = out_next(&o)) < 0)) {
        sl_batch_unref(o.b);
        return rc;
    }
    for (int s = 0; s < 2; s++)
        for (int c = 0; c < m->side[s]->runs.n_cols && r[s].owned; c++)
            sl_task_free(t, r[s].col[c]);
    return SL_OK;
}

/* After every range: the pinned runs go back to the pool now. */
static int join_ranges_done(sl_task_t *t)
{
    struct join_state *st = sl_task_arg(t);
    struct smj *m = st->smj;
    for (int s = 0; s < 2; s++) {
        sl__ooc_sorted_free(m->side[s]);
        m->side[s] = NULL;
    }
    sl_task_phase_time(t, "ooc_cpu_merge_join", join_now_ms() - m->t0);
    return SL_OK;
}

static const struct sl_impl range_impl[] = {{.device = SL_DEVICE_CPU, .run = join_range}};
static const struct sl_impl done_impl[] = {{.device = SL_DEVICE_CPU, .run = join_ranges_done}};
static const struct sl_phase range_phase = {range_impl, 1, NULL};
static const struct sl_phase done_phase = {done_impl, 1, NULL};
