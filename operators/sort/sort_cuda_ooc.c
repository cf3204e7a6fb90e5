/* Out-of-core sort on a GPU (issue 8; paper-000's chunked sort with a CPU multiway
 * merge): the sort's CUDA finalize when the in-GPU sort of sort_cuda.c does not fit the
 * GPU memory budget, or the sink kept batches in host memory (it does once the budget
 * is short). docs/OUT_OF_CORE.md has the design; in short:
 *
 * Runs: the rows, in input order, are cut into runs of R rows (R from the budget, below).
 * Each run is uploaded (h2d stream), sorted by CUB's stable radix sort (the task's
 * stream; key + payload as pairs, or key + row id and a gather per payload column) and
 * downloaded (d2h stream) into pinned host memory. Two buffer sets: run i+1 uploads
 * while run i sorts and run i-1 downloads.
 * Merge: the source tasks, on CPU workers, each merge one output range of the runs
 * (co-ranks on the key, then a loser tree: ooc_merge.c) into a fresh host batch. Ties
 * go to the lower run, so the result is the stable sort: equal to the CPU sort.
 *
 * R (a power of two, at least MIN_RUN rows unless all rows fit one run) is the largest
 * with 2 * R * (bytes of every column in and out, + 8 for row ids with two payloads or
 * more) + CUB's temp for R rows <= budget left - SLACK. All device memory comes from
 * sl_task_device_alloc, so the budget is never passed; the pinned runs count against
 * the host budget. Shapes: one int32/int64 key, columns of 4 or 8 bytes, no nulls, rows
 * on the host or on this GPU; otherwise can_run says no and the CPU sorts. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "gpu_ext.h"
#include "ooc_merge.h"
#include "rows_cuda.h"
#include "sluice_k/columns.h"
#include "sluice_k/sort.h"
#include "sort_op.h"

#define MIB ((int64_t)1 << 20)
#define SLACK (4 * MIB)              /* the budget kept free: pool rounding, small buffers */
#define MIN_RUN ((int64_t)1 << 12)   /* smaller runs: the CPU sorts instead */
#define MAX_RUN ((int64_t)1 << 30)   /* CUB takes < 2^31 rows */

struct ooc_state {
    struct sl__ooc_runs runs;
    int64_t *rows;                   /* rows of each run */
    void **cols;                     /* pinned run columns, run-major */
    int64_t *bytes;                  /* bytes asked for each of them */
    struct sl__pinned_owner owner;
    int64_t part_rows;               /* output rows per source task */
};

static void ooc_free(void *p)
{
    struct ooc_state *st = p;
    if (!st)
        return;
    for (int64_t i = 0; st->cols && i < st->runs.n_runs * st->runs.n_cols; i++)
        sl__pinned_owner_free(&st->owner, st->cols[i], st->bytes[i]);
    free(st->rows);
    free(st->cols);
    free(st->bytes);
    free(st);
}

static int cuda_failed(sl_task_t *t, cudaError_t e, const char *what)
{
    return sl_task_fail(t, SL_EDEVICE, "out-of-core sort on the GPU: %s: %s", what,
                        cudaGetErrorName(e));
}

#define CK(t, expr, what)                                                                   \
    do {                                                                                    \
        cudaError_t e_ = (expr);                                                            \
        if (e_ != cudaSuccess)                                                              \
            return cuda_failed((t), e_, (what));                                            \
    } while (0)

/* ---------------- the plan ---------------- */

struct plan {
    int n_cols, kc, kw, desc, np, pc, vb;
    int width[SL__OOC_MAX_COLS];
    int64_t n, R, n_runs, slot_row;
    size_t temp;
};

/* Columns and sizes; 0 if these rows cannot go out of core (then the CPU sorts). */
static int make_plan(const sl_task_t *tc, struct plan *p)
{
    sl_task_t *t = (sl_task_t *)tc;
    const struct sort_global *g = sl_task_gstate(t);
    const struct sort_data *d = sl_op_data(sl_task_op(t));
    const sl_schema_t *schema = sl_op_output_schema(sl_task_op(t));
    memset(p, 0, sizeof *p);
    if (d->n_cols > SL__OOC_MAX_COLS || d->spec.n_keys != 1 || g->rows.n == 0)
        return 0;
    p->n_cols = d->n_cols;
    p->kc = d->spec.keys[0].col;
    p->desc = d->spec.keys[0].desc;
    p->np = d->n_cols - 1;
    p->pc = -1;
    int64_t row_bytes = 0;
    for (int c = 0; c < d->n_cols; c++) {
        const char *name;
        enum sl_type type;
        sl_schema_field(schema, c, &name, &type);
        p->width[c] = sl_type_width(type);
        if (p->width[c] != 4 && p->width[c] != 8)
            return 0;
        if (c == p->kc && type != SL_TYPE_INT32 && type != SL_TYPE_INT64)
            return 0;
        if (c != p->kc)
            p->pc = c;
        row_bytes += p->width[c];
    }
    p->kw = p->width[p->kc];
    p->vb = p->np == 0 ? 0 : p->np == 1 ? p->width[p->pc] : 4;
    for (int64_t i = 0; i < g->rows.n; i++) {
        const sl_batch_t *b = g->rows.items[i].batch;
        int dev = sl_batch_device(b);
        if (dev >= 0 && dev != sl_task_worker(t))
            return 0; /* another GPU's batch */
        for (int c = 0; c < d->n_cols; c++)
            if (b->cols[c].validity && b->cols[c].null_count != 0)
                return 0;
        p->n += b->n_rows;
    }
    /* Per row of a buffer set: every column uploaded and sorted (in + out), row ids. */
    p->slot_row = 2 * row_bytes + (p->np >= 2 ? 8 : 0);
    int64_t budget = sl_task_device_budget(t) - SLACK;
    int64_t r = MAX_RUN;
    while (r / 2 >= p->n && r > MIN_RUN)
        r /= 2;
    for (; r >= MIN_RUN || r >= p->n; r /= 2) {
        int64_t rr = r < p->n ? r : p->n;
        size_t temp = 0;
        if (sl_k_sort_pairs(NULL, &temp, p->kw, p->desc, NULL, NULL, NULL, NULL, p->vb, rr, 0) !=
            cudaSuccess)
            return 0;
        int sets = rr < p->n ? 2 : 1;
        if (sets * rr * p->slot_row + (int64_t)temp + 2 * MIB <= budget) {
            p->R = rr;
            p->temp = temp;
            p->n_runs = (p->n + rr - 1) / rr;
            return 1;
        }
        if (r <= 1)
            break;
    }
    return 0;
}

int sl__sort_ooc_can_run(const sl_task_t *t)
{
    struct plan p;
    return make_plan(t, &p);
}

/* ---------------- the runs on the GPU ---------------- */

struct set {
    void *in[SL__OOC_MAX_COLS], *out[SL__OOC_MAX_COLS];
    uint32_t *ids;                   /* 2 x R row ids (two payloads or more) */
    cudaEvent_t up, sorted, down;
};

struct runner {
    sl_task_t *t;
    struct sort_global *g;
    struct plan p;
    struct ooc_state *st;
    cudaStream_t cs, h2d, d2h;
    struct set s[2];
    void *temp;
    int64_t bi, brow;                /* upload cursor: batch, row within it */
};

/* `e` recorded on `from`, waited for on `to`. */
static int order(sl_task_t *t, cudaStream_t from, cudaStream_t to)
{
    cudaEvent_t e;
    CK(t, cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    cudaError_t r = cudaEventRecord(e, from);
    if (r == cudaSuccess)
        r = cudaStreamWaitEvent(to, e, 0);
    cudaEventDestroy(e);
    CK(t, r, "ordering streams");
    return SL_OK;
}

/* Uploads the next `rows` input rows (every column) into set s, on the h2d stream. */
static int upload(struct runner *r, struct set *s, int64_t rows)
{
    const struct sl__rows *in = &r->g->rows;
    for (int64_t at = 0; at < rows;) {
        const sl_batch_t *b = in->items[r->bi].batch;
        int64_t take = b->n_rows - r->brow;
        if (take > rows - at)
            take = rows - at;
        for (int c = 0; c < r->p.n_cols; c++) {
            size_t w = (size_t)r->p.width[c];
            const struct sl__col *col = &b->cols[c];
            CK(r->t, cudaMemcpyAsync((char *)s->in[c] + (size_t)at * w,
                                     (const char *)col->data->ptr +
                                         (size_t)(col->offset + r->brow) * w,
                                     (size_t)take * w, cudaMemcpyDefault, r->h2d),
               "uploading a run");
        }
        at += take;
        r->brow += take;
        if (r->brow == b->n_rows) {
            r->bi++;
            r->brow = 0;
        }
    }
    return SL_OK;
}

/* Sorts the run in set s on the task's stream (stable, like the CPU sort). */
static int sort_run(struct runner *r, struct set *s, int64_t rows)
{
    const struct plan *p = &r->p;
    size_t tb = p->temp;
    if (p->np <= 1) {
        CK(r->t, sl_k_sort_pairs(r->temp, &tb, p->kw, p->desc, s->in[p->kc], s->out[p->kc],
                                 p->np ? s->in[p->pc] : NULL, p->np ? s->out[p->pc] : NULL,
                                 p->vb, rows, r->cs), "sorting a run");
        return SL_OK;
    }
    CK(r->t, sl_k_iota_u32(s->ids, rows, 0, r->cs), "row ids");
    CK(r->t, sl_k_sort_pairs(r->temp, &tb, p->kw, p->desc, s->in[p->kc], s->out[p->kc], s->ids,
                             s->ids + p->R, 4, rows, r->cs), "sorting a run");
    for (int c = 0; c < p->n_cols; c++) {
        if (c == p->kc)
            continue;
        if (p->width[c] == 4)
            CK(r->t, sl_k_gather_b32(s->in[c], s->ids + p->R, s->out[c], rows, r->cs),
               "gathering");
        else
            CK(r->t, sl_k_gather_b64(s->in[c], s->ids + p->R, s->out[c], rows, r->cs),
               "gathering");
    }
    return SL_OK;
}

/* Run i through set i & 1: upload (after the set's previous download), sort, download. */
static int one_run(struct runner *r, int64_t i)
{
    struct set *s = &r->s[i & 1];
    const struct plan *p = &r->p;
    int64_t rows = p->n - i * p->R < p->R ? p->n - i * p->R : p->R;
    int rc;
    if (i >= 2)
        CK(r->t, cudaStreamWaitEvent(r->h2d, s->down, 0), "ordering a buffer set");
    if ((rc = upload(r, s, rows)) < 0)
        return rc;
    CK(r->t, cudaEventRecord(s->up, r->h2d), "cudaEventRecord");
    CK(r->t, cudaStreamWaitEvent(r->cs, s->up, 0), "ordering the upload");
    if ((rc = sort_run(r, s, rows)) < 0)
        return rc;
    CK(r->t, cudaEventRecord(s->sorted, r->cs), "cudaEventRecord");
    CK(r->t, cudaStreamWaitEvent(r->d2h, s->sorted, 0), "ordering the download");
    for (int c = 0; c < p->n_cols; c++)
        CK(r->t, cudaMemcpyAsync(r->st->cols[i * p->n_cols + c], s->out[c],
                                 (size_t)(rows * p->width[c]), cudaMemcpyDeviceToHost, r->d2h),
           "downloading a run");
    CK(r->t, cudaEventRecord(s->down, r->d2h), "cudaEventRecord");
    r->st->rows[i] = rows;
    return SL_OK;
}

/* Device buffers of the sets (one set when all rows are one run) and the pinned runs. */
static int alloc_all(struct runner *r)
{
    sl_task_t *t = r->t;
    const struct plan *p = &r->p;
    int sets = p->n_runs > 1 ? 2 : 1;
    for (int k = 0; k < sets; k++) {
        struct set *s = &r->s[k];
        for (int c = 0; c < p->n_cols; c++)
            if (!(s->in[c] = sl_task_device_alloc(t, (size_t)(p->R * p->width[c]))) ||
                !(s->out[c] = sl_task_device_alloc(t, (size_t)(p->R * p->width[c]))))
                return SL_ENOMEM;
        if (p->np >= 2 && !(s->ids = sl_task_device_alloc(t, (size_t)p->R * 8)))
            return SL_ENOMEM;
        CK(t, cudaEventCreateWithFlags(&s->up, cudaEventDisableTiming), "cudaEventCreate");
        CK(t, cudaEventCreateWithFlags(&s->sorted, cudaEventDisableTiming), "cudaEventCreate");
        CK(t, cudaEventCreateWithFlags(&s->down, cudaEventDisableTiming), "cudaEventCreate");
    }
    if (!(r->temp = sl_task_device_alloc(t, p->temp ? p->temp : 1)))
        return SL_ENOMEM;
    for (int64_t i = 0; i < p->n_runs; i++) {
        int64_t rows = p->n - i * p->R < p->R ? p->n - i * p->R : p->R;
        for (int c = 0; c < p->n_cols; c++) {
            int64_t k = i * p->n_cols + c;
            r->st->bytes[k] = rows * p->width[c];
            if (!(r->st->cols[k] = sl__task_pinned_alloc(t, r->st->bytes[k])))
                return SL_ENOMEM;
        }
    }
    return SL_OK;
}

static void free_all(struct runner *r)
{
    for (int k = 0; k < 2; k++) {
        struct set *s = &r->s[k];
        for (int c = 0; c < r->p.n_cols; c++) {
            sl_task_device_free(r->t, s->in[c]);
            sl_task_device_free(r->t, s->out[c]);
        }
        sl_task_device_free(r->t, s->ids);
        if (s->up)
            cudaEventDestroy(s->up);
        if (s->sorted)
            cudaEventDestroy(s->sorted);
        if (s->down)
            cudaEventDestroy(s->down);
    }
    sl_task_device_free(r->t, r->temp);
}

static struct ooc_state *state_new(const struct plan *p)
{
    struct ooc_state *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    int64_t k = p->n_runs * p->n_cols;
    st->rows = calloc((size_t)p->n_runs, sizeof *st->rows);
    st->cols = calloc((size_t)k, sizeof *st->cols);
    st->bytes = calloc((size_t)k, sizeof *st->bytes);
    if (!st->rows || !st->cols || !st->bytes) {
        ooc_free(st);
        return NULL;
    }
    st->runs.n_cols = p->n_cols;
    st->runs.key_col = p->kc;
    st->runs.desc = p->desc;
    memcpy(st->runs.width, p->width, sizeof p->width);
    st->runs.n_runs = p->n_runs;
    st->runs.rows = st->rows;
    st->runs.cols = st->cols;
    return st;
}

static int runs(struct runner *r)
{
    int rc = alloc_all(r);
    if (rc < 0)
        return rc;
    /* Device memory is ordered on the task's stream: the copy streams wait for it. */
    if ((rc = order(r->t, r->cs, r->h2d)) < 0 || (rc = order(r->t, r->cs, r->d2h)) < 0)
        return rc;
    for (int64_t i = 0; i < r->p.n_runs && rc >= 0; i++) {
        if (sl_task_cancelled(r->t))
            return SL_ECANCELED;
        rc = one_run(r, i);
    }
    return rc;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int sl__sort_ooc_finalize(sl_task_t *t)
{
    struct sort_global *g = sl_task_gstate(t);
    struct runner r;
    memset(&r, 0, sizeof r);
    r.t = t;
    r.g = g;
    if (!make_plan(t, &r.p))
        return sl_task_fail(t, SL_EBUDGET, "out-of-core sort on the GPU: %lld bytes of GPU "
                            "budget left are too few for a run", (long long)
                            sl_task_device_budget(t));
    double t0 = now_ms();
    if (!(r.st = state_new(&r.p)))
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    sl__task_pinned_owner(t, &r.st->owner);
    g->ooc_state = r.st; /* freed with the query's state, whatever happens below */
    g->ooc_free = ooc_free;
    r.cs = sl_task_stream(t);
    CK(t, cudaStreamCreateWithFlags(&r.h2d, cudaStreamNonBlocking), "cudaStreamCreate");
    cudaError_t e = cudaStreamCreateWithFlags(&r.d2h, cudaStreamNonBlocking);
    int rc = e == cudaSuccess ? runs(&r) : cuda_failed(t, e, "cudaStreamCreate");
    cudaError_t e1 = cudaStreamSynchronize(r.h2d), e2 = cudaStreamSynchronize(r.cs);
    cudaError_t e3 = r.d2h ? cudaStreamSynchronize(r.d2h) : cudaSuccess;
    free_all(&r);
    cudaStreamDestroy(r.h2d);
    if (r.d2h)
        cudaStreamDestroy(r.d2h);
    if (rc >= 0 && (e = e1 != cudaSuccess ? e1 : e2 != cudaSuccess ? e2 : e3) != cudaSuccess)
        rc = cuda_failed(t, e, "sorting runs");
    if (rc < 0)
        return rc;
    g->n = r.p.n;
    g->ooc = 1;
    sl__rows_fini(&g->rows); /* the input's device batches go back to the pool now */
    /* Output ranges: a morsel at most, and about 64 of them so that every CPU merges. */
    int64_t part = (g->n / 64 + 63) / 64 * 64, m = sl_task_morsel_rows(t);
    part = part < ((int64_t)1 << 16) ? (int64_t)1 << 16 : part;
    r.st->part_rows = part < m ? part : m;
    sl_task_phase_time(t, "ooc_gpu_runs", now_ms() - t0);
    return SL_OK;
}

/* ---------------- the merge: source tasks on CPU workers ---------------- */

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
    const struct sl__ooc_runs *m = &st->runs;
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
