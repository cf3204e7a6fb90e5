/* Sorted runs on a GPU for out-of-core operators (ooc_runs.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "op_common.h"
#include "ooc_runs.h"
#include "sluice_k/columns.h"
#include "sluice_k/ooc_gather.h"
#include "sluice_k/ooc_pack.h"
#include "sluice_k/sort.h"

#define MIB ((int64_t)1 << 20)
#define SLACK (4 * MIB)              /* the budget kept free: pool rounding, small buffers */
#define MAX_RUN ((int64_t)1 << 30)   /* CUB takes < 2^31 rows */
#define PIPE_RUNS 32                 /* runs at least, when there are several (plan_run) */
#define MAX_SETS 3                   /* pass 1's buffer sets at most (plan_max_sets) */
/* Pass 2's buckets: output ranks cut at sampled keys into pieces of about 3/4 R rows, a
 * piece larger than R (few keys, many rows) cut again at exact ranks (ooc_runs.h).
 * Samples per bucket: with 16 (the CPU merge's), bucket sizes vary by about 1/4, so some
 * 9% of them passed R and took an exact cut, each some 32 x k binary searches over the
 * pinned runs: 180 ms of a 1/16 sort on an H100 (128 runs, 171 buckets). 256 samples a
 * bucket make that 1/16 (a 5-sigma miss) for a few thousand more reads. The input's
 * stratified samples (pass 1's cuts) vary about as much as random ones. */
#define OVERSAMPLE 256

_Static_assert(SL__OOC_NARROW_TOP == SL_K_OOC_NARROW_TOP, "narrow runs' table size");

/* Pass 2's buckets for runs of R rows: P of about 3/4 R rows each. */
static int64_t bucket_count(int64_t n, int64_t R)
{
    return (n + R * 3 / 4 - 1) / (R * 3 / 4);
}

static const sl_batch_t *batch_at(const struct sl__ooc_input *in, int64_t i)
{
    return in->batches[i * (in->stride > 0 ? in->stride : 1)];
}

/* ---------------- the plan ---------------- */

struct plan {
    int n_cols, kc, kw, desc, np, pc, vb;
    int graded;                       /* runs of R/4, R/4, R/2, R..., R/2, R/4, R/4 (run_start) */
    int packed;                       /* packed runs (ooc_merge.h): set_alloc, sort_run */
    int narrow;                       /* narrow runs (ooc_merge.h): 6-byte rows and a table */
    int early_free;                   /* pass 1, narrow: the sort's other buffer is the set's
                                         output, so in[kc] is free once packed (option
                                         debug_ooc_pass1_buffers: sort_packed, one_run) */
    int sets;                         /* pass 1's buffer sets beyond one run: 2, or 3
                                         (plan_run); pass 2: 0 (two) */
    int width[SL__OOC_MAX_COLS];
    int64_t n, R, n_runs, slot_row;
    size_t temp, temp_sort;           /* temp: CUB's (temp_sort) and, packed, the other
                                         buffer of R rows (its double buffer) */
};

static int64_t align256(int64_t x)
{
    return (x + 255) & ~(int64_t)255;
}

/* p->temp and p->temp_sort for runs (or buckets) of `rows` rows: CUB's temp storage for
 * the pairs, or for packed rows with the double buffer's other half after it. 0 when CUB
 * refuses the size. */
static int plan_temp(struct plan *p, int64_t rows)
{
    size_t temp = 0;
    if (p->packed) {
        if (sl_k_ooc_sort_packed(NULL, &temp, NULL, NULL, rows, NULL, 0) != cudaSuccess)
            return 0;
        p->temp_sort = (size_t)align256((int64_t)temp);
        p->temp = p->temp_sort + (size_t)(rows * 8);
        return 1;
    }
    if (sl_k_sort_pairs(NULL, &temp, p->kw, p->desc, NULL, NULL, NULL, NULL, p->vb, rows, 0) !=
        cudaSuccess)
        return 0;
    p->temp = p->temp_sort = temp;
    return 1;
}

/* Packed runs (ooc_merge.h) for an int32 key and one 4-byte column, where the caller
 * takes them (in->pack) and option debug_ooc_unpacked_runs is off: a bucket's slice of a
 * run is then one copy instead of two (the 1/16 merge's host enqueued 43,800 copies at
 * ~1.1 us each, 39 to 47 ms of a 51 to 54 ms merge; H100, session 16). */
static int plan_packed(sl_task_t *t, const struct plan *p, int pack)
{
    int64_t off = 0;
    if (!pack || p->n_cols != 2 || p->kw != 4 || p->width[p->pc] != 4)
        return 0;
    sl_task_option_int(t, "debug_ooc_unpacked_runs", &off);
    return !off;
}

/* Widths and the key's type; 0 if not a shape the runs take. */
static int plan_columns(const struct sl__ooc_input *in, struct plan *p)
{
    memset(p, 0, sizeof *p);
    if (in->n_cols < 1 || in->n_cols > SL__OOC_MAX_COLS || in->n_batches < 1)
        return 0;
    const sl_batch_t *b0 = batch_at(in, 0);
    p->n_cols = in->n_cols;
    p->kc = in->key;
    p->desc = in->desc;
    p->np = in->n_cols - 1;
    p->pc = -1;
    for (int c = 0; c < in->n_cols; c++) {
        enum sl_type type = b0->cols[in->col[c]].type;
        p->width[c] = sl_type_width(type);
        if (p->width[c] != 4 && p->width[c] != 8)
            return 0;
        if (c == p->kc && !sl__type_signed_word(type))
            return 0;
        if (c != p->kc)
            p->pc = c;
    }
    p->kw = p->width[p->kc];
    p->vb = p->np == 0 ? 0 : p->np == 1 ? p->width[p->pc] : 4;
    return 1;
}

/* Rows, and no nulls. Batches may be anywhere: copies use cudaMemcpyDefault (UVA). */
static int plan_rows(const struct sl__ooc_input *in, struct plan *p)
{
    for (int64_t i = 0; i < in->n_batches; i++) {
        const sl_batch_t *b = batch_at(in, i);
        for (int c = 0; c < in->n_cols; c++) {
            const struct sl__col *col = &b->cols[in->col[c]];
            if (col->validity && col->null_count != 0)
                return 0;
        }
        p->n += b->n_rows;
    }
    return p->n > 0;
}

/* Bytes a packed set's output buffer needs beyond R rows of 8 bytes to hold a narrow
 * run: its table, then its 6-byte rows (narrow_run). */
static int64_t narrow_extra(int64_t R)
{
    int64_t need = SL__OOC_NARROW_TABLE_BYTES + R * 6 - R * 8;
    return need > 0 ? need : 0;
}

/* Narrow runs in pass 2: a bucket's rows span at most NARROW_WINDOW top-16 code values
 * (sl__ooc_bucket_cuts cuts wider ones at codes), so each set holds that window of every
 * run's table (k x NARROW_WINDOW x 4 bytes: 1 MiB for 128 runs), brought with the
 * bucket. Buckets of 2^28 random keys at 1/4 span some 1,500 (43 buckets), at 1/16 some
 * 600. */
#define NARROW_WINDOW SL__OOC_NARROW_WINDOW

/* Device bytes of pass 1 with `sets` buffer sets of runs of `rows` rows (p->temp sized for
 * them: plan_temp), beside the budget's 2 MiB for small buffers (the cuts, the splitters). */
static int64_t pass1_bytes(const struct plan *p, int64_t sets, int64_t rows)
{
    /* packed: each set's output may hold a narrow run's table too (alloc_all) */
    int64_t extra = p->packed ? sets * narrow_extra(rows) : 0;
    return sets * rows * p->slot_row + (int64_t)p->temp + extra + 2 * MIB;
}

/* sl__ooc_pass1_pick's bytes(): CUB's temp storage for `rows` rows (p->temp, left
 * sized for them), then pass1_bytes; -1 when CUB refuses the size. */
static int64_t pick_bytes(void *arg, int64_t sets, int64_t rows)
{
    struct plan *p = arg;
    return plan_temp(p, rows) ? pass1_bytes(p, sets, rows) : -1;
}

/* 1 when a column of the input is in pageable host memory (uploads stage it through
 * pinned buffers, one a set of two: stage_open). */
static int input_pageable(const struct sl__ooc_input *in, const struct plan *p)
{
    for (int64_t i = 0; i < in->n_batches; i++)
        for (int c = 0; c < p->n_cols; c++)
            if (batch_at(in, i)->cols[in->col[c]].data->kind == SL__MEM_HOST)
                return 1;
    return 0;
}

/* Pass 1's buffer sets at most: two, or three with option debug_ooc_sets=3 (session 20,
 * issue 23), for the sort's runs (in->pack 1: the sort-merge join sizes side 1's runs
 * beside side 0's buffers) of pinned or GPU input (pageable input stages through two
 * pinned buffers, one a set: stage_open). A third set lets run i's upload wait for the
 * set's run i - 3 instead of i - 2 (one_run). Not the default: pass 1 at 1/16 is at the
 * link's two-way speed with two (H100, 2026-11-28: upload waits 0.5-0.6 ms of 43-44, the
 * pass 1.5 ms over copies alone in its shape, gpu_link_micro), and three took it 0.4 ms
 * shorter in two rounds (45.1 / 44.3 against 45.5 / 44.7 ms, a process each), within the
 * spread between processes (docs/OUT_OF_CORE.md, "Session 20"). */
static int plan_max_sets(sl_task_t *t, const struct sl__ooc_input *in, const struct plan *p)
{
    int64_t how = 0; /* 0 auto (two), 1 two, 2 three */
    sl_task_option_int(t, "debug_ooc_sets", &how);
    return how == 2 && in->pack == 1 && !input_pageable(in, p) ? MAX_SETS : 2;
}

/* The run size and buffer sets that fit the budget left (top of ooc_runs.h): the first
 * of sl__ooc_pass1_pick's order, larger runs first (up to PIPE_RUNS runs), then three
 * sets before two at the same size where plan_max_sets allows them (an option). */
static int plan_run(sl_task_t *t, struct plan *p, int max_sets)
{
    int64_t row_bytes = 0;
    for (int c = 0; c < p->n_cols; c++)
        row_bytes += p->width[c];
    p->slot_row = 2 * row_bytes + (p->np >= 2 ? 8 : 0);
    int64_t R = 0;
    int sets = 0;
    if (sl__ooc_pass1_pick(p->n, SL__OOC_MIN_RUN, MAX_RUN, PIPE_RUNS, max_sets,
                           sl_task_device_budget(t) - SLACK, pick_bytes, p, &R, &sets) <= 0 ||
        !plan_temp(p, R)) /* p->temp for the runs taken */
        return 0;
    p->R = R;
    p->sets = sets;
    p->n_runs = (p->n + R - 1) / R;
    int64_t graded = 0;
    sl_task_option_int(t, "debug_ooc_graded_runs", &graded);
    if (graded && p->n >= 4 * R && R / 4 >= SL__OOC_MIN_RUN) {
        p->graded = 1;
        p->n_runs = 6 + (p->n - 2 * R + R - 1) / R;
    }
    return 1;
}

static int make_plan(sl_task_t *t, const struct sl__ooc_input *in, struct plan *p)
{
    if (!plan_columns(in, p) || !plan_rows(in, p))
        return 0;
    p->packed = plan_packed(t, p, in->pack);
    return plan_run(t, p, plan_max_sets(t, in, p));
}

int sl__ooc_runs_can(sl_task_t *t, const struct sl__ooc_input *in)
{
    struct plan p;
    return make_plan(t, in, &p);
}

int64_t sl__ooc_runs_plan(sl_task_t *t, const struct sl__ooc_input *in, int64_t *n_runs,
                          int *packed)
{
    struct plan p;
    int ok = make_plan(t, in, &p);
    *n_runs = ok ? p.n_runs : 0;
    *packed = ok && p.packed;
    return ok ? p.R : 0;
}

/* ---------------- the runs on the GPU ---------------- */

struct set {
    void *in[SL__OOC_MAX_COLS], *out[SL__OOC_MAX_COLS];
    uint32_t *ids;                   /* 2 x R row ids (two payloads or more) */
    cudaEvent_t up, sorted, down;
    cudaEvent_t packed;              /* pass 1, narrow, early_free: the run packed out of
                                        in[kc] (its next upload may start) */
    int64_t *d_split;                /* pass 1's cuts: the run's splits at the splitters */
    int32_t *d_tops;                 /* narrow runs, pass 1: the top values beside them
                                        (sl_k_ooc_split_tops, st->split_tops) */
    uint32_t *d_win;                 /* narrow runs, pass 2: the bucket's window of every
                                        run's table (k x NARROW_WINDOW) */
};

/* sl__ooc_inputs_splitters in two steps: in_split_begin reads the samples in GPU batches
 * (a kernel, then a synchronization of the task's stream: before any run is enqueued
 * there), in_split_end samples the host's and picks the splitters (presplit_early: while
 * the first runs go up). */
struct in_split {
    const void **keys, **dev;
    int64_t *rows, *first, nb, n, pin_bytes;
    void *scratch, *pin;
    int kw, desc;
};

/* When a pass's copies end on the link (clock_start, below). */
struct pass_clock {
    cudaEvent_t e[3];
    double host0, enqueued;
    /* option debug_ooc_link_gaps: run i's upload's start and end on the h2d stream (after
     * its wait for the set) and its download's on the d2h stream, g[4 i .. 4 i + 3];
     * reported: the sums of the gaps between one copy's end and the next one's start */
    cudaEvent_t *g;
    int64_t n;
};

struct runner {
    sl_task_t *t;
    const struct sl__ooc_input *in;
    struct plan p;
    struct sl__ooc_sorted *st;
    cudaStream_t cs, h2d, d2h;
    uint64_t *d_codes;               /* pass 1's cuts: the splitters (st->codes), else NULL */
    int64_t cut_from;                /* pass 1: runs before it are enqueued before the
                                        splitters are sampled (presplit_early): their cuts
                                        are searched on the host (early_cuts) */
    uint64_t *h_codes;               /* then: the splitters, pinned (their upload) */
    struct in_split split;           /*   the sampling (in_split_begin), */
    int64_t split_P;                 /*   of P buckets */
    cudaEvent_t early_down;          /*   recorded once run cut_from - 1 is down */
    struct set s[MAX_SETS];
    int n_sets;                      /* sets in use (alloc_all): run i uses s[i % n_sets] */
    void *temp;
    struct sl__upload_stage stage;   /* pass 1, pageable input: per set (gpu_ext.h) */
    int64_t bi, brow;                /* upload cursor: batch, row within it */
    const int64_t *cuts;             /* pass 2: bucket b is rows [cuts[b k + j], cuts[(b + 1) k + j]) of run j */
    enum sl__ooc_gather gather;      /* pass 2: how a bucket's slices reach the GPU */
    void **h_dst, **h_src;           /* GATHER_BATCH: one bucket's copies */
    size_t *h_size;
    int64_t *d_tables;               /* GATHER_KERNEL, one allocation: */
    const void **d_src;              /*   the runs' columns (k x n_cols), */
    int64_t *d_cuts, *d_at, *d_vat;  /*   the cuts, each bucket's slice starts, real and
                                           virtual (nb x (k + 1) each: ooc_gather.h) */
    int64_t *h_vrows;                /*   each bucket's virtual rows */
    int64_t *h_ntop;                 /* narrow runs, pass 2: each bucket's lowest top-16
                                        value and their number (2 x nb) */
    struct pass_clock clock;
    cudaEvent_t after;               /* what the copy streams wait for, else the task's
                                        stream as it is (sl__ooc_runs_sort_begin) */
};

/* Work on `to` after what was enqueued on `from` so far. */
static int order(sl_task_t *t, cudaStream_t from, cudaStream_t to)
{
    cudaEvent_t e;
    SL_TASK_CUDA_TRY(t, cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    cudaError_t r = cudaEventRecord(e, from);
    if (r == cudaSuccess)
        r = cudaStreamWaitEvent(to, e, 0);
    cudaEventDestroy(e);
    SL_TASK_CUDA_TRY(t, r, "ordering streams");
    return SL_OK;
}

/* Host time in ms (CLOCK_MONOTONIC), for the phase times. */
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* When a pass's copies end on the link (issue 23: which direction sets the pace, and
 * how long the host takes to enqueue the pass): timing events on the task's stream at
 * the start, on the h2d stream after the last upload and on the d2h stream after the
 * last download; three events a pass. */
static void clock_start(struct runner *r, struct pass_clock *c)
{
    memset(c, 0, sizeof *c);
    for (int i = 0; i < 3; i++)
        if (cudaEventCreate(&c->e[i]) != cudaSuccess)
            c->e[i] = NULL;
    if (c->e[0] && cudaEventRecord(c->e[0], r->cs) != cudaSuccess) {
        cudaEventDestroy(c->e[0]);
        c->e[0] = NULL;
    }
    int64_t gaps = 0;
    sl_task_option_int(r->t, "debug_ooc_link_gaps", &gaps);
    if (gaps && r->p.n_runs > 0 && (c->g = calloc((size_t)(4 * r->p.n_runs), sizeof *c->g))) {
        c->n = r->p.n_runs;
        for (int64_t i = 0; i < 4 * c->n; i++)
            if (cudaEventCreate(&c->g[i]) != cudaSuccess)
                c->g[i] = NULL;
    }
    cudaGetLastError(); /* timing is advice: a failed call leaves no error behind */
    c->host0 = now_ms();
}

/* Event q (0..3) of run i on `stream`, with option debug_ooc_link_gaps. */
static void clock_mark(struct pass_clock *c, int64_t i, int q, cudaStream_t stream)
{
    if (i < c->n && c->g[4 * i + q])
        cudaEventRecord(c->g[4 * i + q], stream);
}

/* The sum of elapsed times between events a + 4 i and b + 4 i' (i' = i + db) over the
 * runs; -1 when any is missing. */
static double clock_sum(const struct pass_clock *c, int a, int b, int db)
{
    double sum = 0;
    float ms;
    for (int64_t i = 0; i + db < c->n; i++) {
        if (!c->g[4 * i + a] || !c->g[4 * (i + db) + b] ||
            cudaEventElapsedTime(&ms, c->g[4 * i + a], c->g[4 * (i + db) + b]) != cudaSuccess)
            return -1;
        sum += ms;
    }
    return sum;
}

/* After the pass's last copy is enqueued. */
static void clock_enqueued(struct runner *r, struct pass_clock *c)
{
    c->enqueued = now_ms() - c->host0;
    for (int i = 1; i < 3; i++)
        if (c->e[i] && cudaEventRecord(c->e[i], i == 1 ? r->h2d : r->d2h) != cudaSuccess) {
            cudaEventDestroy(c->e[i]);
            c->e[i] = NULL;
        }
    cudaGetLastError();
}

/* After the streams were synchronized (ok: the pass succeeded, else the events only go):
 * phases `up` and `down` (ms from the start to the last upload's and download's end)
 * and, when named, `enqueue` (host ms); with debug_ooc_link_gaps, the waits between
 * copies and, when named, `busy[0]` / `busy[1]`: the sums of the uploads' and downloads'
 * own durations (each direction's rate while the other runs: issue 23, pass 1 at 1/16).
 * Timing is advice: a failed event call only leaves a phase out. */
static void clock_report(struct runner *r, struct pass_clock *c, int ok, const char *up,
                         const char *down, const char *enqueue, const char *up_wait,
                         const char *down_wait, const char *const busy[2])
{
    float ms;
    for (int i = 1; ok && i < 3; i++)
        if (c->e[0] && c->e[i] && cudaEventElapsedTime(&ms, c->e[0], c->e[i]) == cudaSuccess)
            sl_task_phase_time(r->t, i == 1 ? up : down, ms);
    if (ok && enqueue)
        sl_task_phase_time(r->t, enqueue, c->enqueued);
    if (ok && c->n > 0) { /* debug_ooc_link_gaps: each direction's waits between copies
                             (phase names are literals the profile keeps, at most
                             SL__OP_PHASES an operator) */
        double v;
        if (up_wait && (v = clock_sum(c, 1, 0, 1)) >= 0)
            sl_task_phase_time(r->t, up_wait, v);
        if (down_wait && (v = clock_sum(c, 3, 2, 1)) >= 0)
            sl_task_phase_time(r->t, down_wait, v);
        for (int q = 0; busy && q < 2; q++)
            if (busy[q] && (v = clock_sum(c, 2 * q, 2 * q + 1, 0)) >= 0)
                sl_task_phase_time(r->t, busy[q], v);
    }
    for (int64_t i = 0; i < 4 * c->n; i++)
        if (c->g[i])
            cudaEventDestroy(c->g[i]);
    free(c->g);
    c->g = NULL;
    c->n = 0;
    for (int i = 0; i < 3; i++)
        if (c->e[i])
            cudaEventDestroy(c->e[i]);
    cudaGetLastError(); /* a failed timing call leaves no error behind */
}

/* Pass 2: the copies that bring bucket b's slice of every run, in run order, into set s
 * (k x n_cols at most), listed in r->h_dst/h_src/h_size; returns their number. */
static size_t bucket_copies(struct runner *r, struct set *s, int64_t b)
{
    const struct sl__ooc_runs *m = &r->st->runs;
    const int64_t k = m->n_runs, *lo = r->cuts + b * k, *hi = lo + k;
    size_t n = 0;
    int64_t at = 0;
    if (m->packed) { /* one 8-byte row a row (narrow: 6 bytes): a copy per run */
        const size_t w = m->narrow ? 6 : 8;
        for (int64_t j = 0; j < k; j++) {
            int64_t len = hi[j] - lo[j];
            if (len <= 0)
                continue;
            r->h_dst[n] = (char *)s->in[r->p.kc] + (size_t)at * w;
            r->h_src[n] = (char *)m->cols[j * m->n_cols + m->key_col] + (size_t)lo[j] * w;
            r->h_size[n++] = (size_t)len * w;
            at += len;
        }
        return n;
    }
    for (int64_t j = 0; j < k; j++) {
        int64_t len = hi[j] - lo[j];
        for (int c = 0; c < r->p.n_cols && len > 0; c++, n++) {
            size_t w = (size_t)r->p.width[c];
            r->h_dst[n] = (char *)s->in[c] + (size_t)at * w;
            r->h_src[n] = (char *)m->cols[j * m->n_cols + c] + (size_t)lo[j] * w;
            r->h_size[n] = (size_t)len * w;
        }
        at += len > 0 ? len : 0;
    }
    return n;
}

int sl__ooc_copy_batch(sl_task_t *t, void **dst, void **src, size_t *size, size_t n,
                       int batch, void *stream, const char *what)
{
    cudaStream_t s = stream;
#if CUDART_VERSION >= 13000
    if (batch && n > 0) {
        struct cudaMemcpyAttributes attr;
        memset(&attr, 0, sizeof attr);
        attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
        size_t first = 0;
        SL_TASK_CUDA_TRY(t, cudaMemcpyBatchAsync(dst, (const void *const *)src, size, n, &attr,
                                                 &first, 1, s),
                         what);
        return SL_OK;
    }
#else
    (void)batch;
#endif
    for (size_t i = 0; i < n; i++)
        SL_TASK_CUDA_TRY(t, cudaMemcpyAsync(dst[i], src[i], size[i], cudaMemcpyDefault, s), what);
    return SL_OK;
}

/* GATHER_COPY: one copy call per slice and column; GATHER_BATCH: all of them in one
 * cudaMemcpyBatchAsync (CUDA 13; before it, one by one). */
static int upload_bucket_copies(struct runner *r, struct set *s, int64_t b)
{
    size_t n = bucket_copies(r, s, b);
    int rc = sl__ooc_copy_batch(r->t, r->h_dst, r->h_src, r->h_size, n,
                                r->gather == SL__OOC_GATHER_BATCH, r->h2d, "uploading a bucket");
    const struct sl__ooc_runs *m = &r->st->runs;
    if (rc < 0 || !m->narrow)
        return rc;
    /* the bucket's window of every run's table: one 2D copy (a row per run) */
    const int64_t *top = r->h_ntop + 2 * b;
    SL_TASK_CUDA_TRY(r->t,
                     cudaMemcpy2DAsync(s->d_win, NARROW_WINDOW * 4, m->narrow_tables + top[0],
                                       SL__OOC_NARROW_TABLE_BYTES, (size_t)top[1] * 4,
                                       (size_t)m->n_runs, cudaMemcpyHostToDevice, r->h2d),
                     "uploading a bucket's tables");
    return SL_OK;
}

/* GATHER_KERNEL: one kernel on the h2d stream reads the slices from the pinned runs
 * (zero-copy) into set s. */
static int upload_bucket_kernel(struct runner *r, struct set *s, int64_t b)
{
    const int64_t k = r->st->runs.n_runs;
    struct sl_k_ooc_gather_dst w;
    memset(&w, 0, sizeof w);
    w.n_cols = r->p.packed ? 1 : r->p.n_cols;
    for (int c = 0; c < w.n_cols; c++) {
        w.col[c] = r->p.packed ? s->in[r->p.kc] : s->in[c];
        w.width[c] = (unsigned char)(r->p.packed ? 8 : r->p.width[c]);
    }
    SL_TASK_CUDA_TRY(r->t,
                     sl_k_ooc_bucket_gather((const void *const *)r->d_src, r->d_cuts + b * k,
                                            r->d_at + b * (k + 1), r->d_vat + b * (k + 1), k,
                                            r->h_vrows[b], &w, r->h2d),
                     "reading a bucket from the runs");
    return SL_OK;
}

/* auto: batched copies up to 128 runs (256 packed: the same copies a bucket), the
 * kernel past them. On an H100 (2026-11-26, 2^28 int32 pairs, merge phase): at 32 runs
 * (1/4 budget) batched copies 53.9 ms, one copy call each 61.8, the first (unaligned)
 * kernel 92.7 (its zero-copy reads reached some 23 GB/s, the copies the link's 54); at
 * 128 runs (1/16) batched 69.8, that kernel 95.0, the CPU merge 348.7. Past 128 runs
 * (not measured) the slices of a bucket get small enough for the kernel's one launch to
 * win over per-slice DMA. */
#define GATHER_BATCH_RUNS 128

enum sl__ooc_gather sl__ooc_gather_of(sl_task_t *t, const struct sl__ooc_runs *m)
{
    const int64_t n_runs = m->packed ? (m->n_runs + 1) / 2 : m->n_runs;
    static const enum sl__ooc_gather by_option[] = {
        SL__OOC_GATHER_BATCH, SL__OOC_GATHER_COPY, SL__OOC_GATHER_BATCH,
        SL__OOC_GATHER_KERNEL}; /* auto (below), copy, batch, kernel */
    int64_t how = 0;
    sl_task_option_int(t, "debug_ooc_sort_gather", &how);
    if (how == 0)
        return n_runs <= GATHER_BATCH_RUNS ? SL__OOC_GATHER_BATCH : SL__OOC_GATHER_KERNEL;
    return how > 0 && how < 4 ? by_option[how] : SL__OOC_GATHER_BATCH;
}

static int upload_bucket(struct runner *r, struct set *s, int64_t b)
{
    if (r->gather == SL__OOC_GATHER_KERNEL)
        return upload_bucket_kernel(r, s, b);
    return upload_bucket_copies(r, s, b);
}

/* Uploads the next `rows` input rows (every column) into set s, on the h2d stream. */
static int upload(struct runner *r, struct set *s, int64_t rows)
{
    int slot = (int)(s - r->s);
    if (r->stage.stager) /* its previous upload (two runs ago) must be done before it is refilled */
        SL_TASK_CUDA_TRY(r->t, cudaEventSynchronize(s->up), "waiting for a staging buffer");
    /* Pieces of a column adjacent in one buffer (slices of one table batch's column) go
     * as one copy (pend_*: the column's copy not made yet), unless option
     * debug_ooc_upload_pieces or staging: a copy per batch piece and column, as before
     * 2026-11-27 (the bench's 2^28 input rows came as morsel slices of one table batch:
     * some 68 copies of 480 KiB a run at 1/4). Never across buffers: two allocations
     * adjacent in memory are still two (a copy across them fails: invalid argument,
     * H100 run 2 of session 18, the sink's device batches). */
    int64_t pieces = 0;
    sl_task_option_int(r->t, "debug_ooc_upload_pieces", &pieces);
    pieces |= r->stage.stager != NULL;
    const struct sl__buf *pend_buf[SL__OOC_MAX_COLS] = {NULL};
    const char *pend_src[SL__OOC_MAX_COLS] = {NULL};
    size_t pend_at[SL__OOC_MAX_COLS] = {0}, pend_bytes[SL__OOC_MAX_COLS] = {0};
    for (int64_t at = 0; at < rows;) {
        const sl_batch_t *b = batch_at(r->in, r->bi);
        int64_t take = b->n_rows - r->brow;
        if (take > rows - at)
            take = rows - at;
        for (int c = 0, prefix = 0; c < r->p.n_cols && take > 0; prefix += r->p.width[c++]) {
            size_t w = (size_t)r->p.width[c];
            const struct sl__col *col = &b->cols[r->in->col[c]];
            const char *src = sl__upload_stage_src(
                &r->stage, slot, r->p.R * prefix + at * (int64_t)w, col->data,
                (const char *)col->data->ptr + (size_t)(col->offset + r->brow) * w, (size_t)take * w);
            if (!pieces && pend_src[c] && pend_buf[c] == col->data &&
                pend_src[c] + pend_bytes[c] == src) {
                pend_bytes[c] += (size_t)take * w; /* adjacent to the column's last piece */
                continue;
            }
            if (pend_src[c])
                SL_TASK_CUDA_TRY(r->t,
                                 cudaMemcpyAsync((char *)s->in[c] + pend_at[c], pend_src[c],
                                                 pend_bytes[c], cudaMemcpyDefault, r->h2d),
                                 "uploading a run");
            pend_src[c] = src;
            pend_buf[c] = col->data;
            pend_at[c] = (size_t)at * w;
            pend_bytes[c] = (size_t)take * w;
        }
        at += take;
        r->brow += take;
        if (r->brow == b->n_rows) {
            r->bi++;
            r->brow = 0;
        }
    }
    for (int c = 0; c < r->p.n_cols; c++)
        if (pend_src[c])
            SL_TASK_CUDA_TRY(r->t,
                             cudaMemcpyAsync((char *)s->in[c] + pend_at[c], pend_src[c],
                                             pend_bytes[c], cudaMemcpyDefault, r->h2d),
                             "uploading a run");
    return SL_OK;
}

/* Packed rows (ooc_merge.h): pass 1 packs the run's two columns (in[kc], in[pc]) into
 * out[kc] and sorts them there; pass 2 sorts the bucket's rows in in[kc] and unpacks them
 * into out[kc] and out[pc] for the download. The sort's other buffer is the end of the
 * temp storage. *sorted: where the sorted packed rows are (pass 1's cuts read them).
 * Narrow runs (p->narrow): pass 1 packs into that other buffer and sorts over it and
 * in[kc] (free once packed), then writes the run's table and its 6-byte rows into
 * out[kc] (narrow_run) after the cuts; pass 2's bucket `b` arrives as 6-byte rows in
 * in[kc] and its window of the runs' tables in d_win (upload_bucket_copies), decoded into
 * the other buffer (sl_k_ooc_narrow_decode, with the slice starts narrow_tables_open
 * uploaded) and sorted over it and in[kc]. */
static int sort_packed(struct runner *r, struct set *s, int64_t b, int64_t rows,
                       const uint64_t **sorted)
{
    const struct plan *p = &r->p;
    size_t tb = p->temp_sort;
    uint64_t *alt = (uint64_t *)((char *)r->temp + p->temp_sort);
    uint64_t *rowsbuf = r->cuts ? s->in[p->kc] : s->out[p->kc], *other = alt;
    int in_alt = 0;
    if (p->narrow) { /* the rows go to alt first, in[kc] is the sort's other buffer */
        rowsbuf = alt;
        other = s->in[p->kc];
        if (!r->cuts && p->early_free) /* out[kc], free since its run went down (one_run) */
            other = s->out[p->kc];
        const int64_t k = r->st->runs.n_runs;
        if (r->cuts)
            SL_TASK_CUDA_TRY(r->t,
                             sl_k_ooc_narrow_decode(s->in[p->kc], rows, s->d_win, NARROW_WINDOW,
                                                    r->h_ntop[2 * b], r->h_ntop[2 * b + 1],
                                                    r->d_cuts + b * k, r->d_at + b * (k + 1), k,
                                                    rowsbuf, r->cs),
                             "decoding a bucket");
    }
    if (!r->cuts)
        SL_TASK_CUDA_TRY(r->t,
                         sl_k_ooc_pack(s->in[p->kc], s->in[p->pc], p->desc, rows, rowsbuf, r->cs),
                         "packing a run");
    if (!r->cuts && p->narrow && p->early_free)
        SL_TASK_CUDA_TRY(r->t, cudaEventRecord(s->packed, r->cs), "cudaEventRecord");
    SL_TASK_CUDA_TRY(r->t,
                     sl_k_ooc_sort_packed(r->temp, &tb, rowsbuf, other, rows, &in_alt, r->cs),
                     "sorting a run");
    const uint64_t *res = in_alt ? other : rowsbuf;
    if (in_alt && !r->cuts && p->narrow && p->early_free) { /* in out[kc], where narrow_run
                                                                writes: back to alt */
        SL_TASK_CUDA_TRY(r->t,
                         cudaMemcpyAsync(alt, other, (size_t)rows * 8, cudaMemcpyDeviceToDevice,
                                         r->cs),
                         "sorting a run");
        res = alt;
    }
    *sorted = res;
    if (r->cuts)
        SL_TASK_CUDA_TRY(r->t,
                         sl_k_ooc_unpack(res, p->desc, rows, s->out[p->kc], s->out[p->pc], r->cs),
                         "unpacking a bucket");
    else if (in_alt && !p->narrow) { /* an odd number of radix passes: back where the
                                        download reads */
        SL_TASK_CUDA_TRY(r->t,
                         cudaMemcpyAsync(rowsbuf, alt, (size_t)rows * 8, cudaMemcpyDeviceToDevice,
                                         r->cs),
                         "sorting a run");
        *sorted = rowsbuf;
    }
    return SL_OK;
}

/* Pass 1, narrow runs: the run's table and 6-byte rows from its sorted packed rows into
 * out[kc], which goes down whole. */
static int narrow_run(struct runner *r, struct set *s, const uint64_t *sorted, int64_t rows)
{
    char *out = s->out[r->p.kc];
    SL_TASK_CUDA_TRY(r->t, sl_k_ooc_narrow_table(sorted, rows, (uint32_t *)out, r->cs),
                     "a narrow run's table");
    SL_TASK_CUDA_TRY(r->t,
                     sl_k_ooc_narrow_encode(sorted, rows, out + SL__OOC_NARROW_TABLE_BYTES, r->cs),
                     "narrowing a run");
    return SL_OK;
}

/* The payload bytes CUB sorts beside the key: none, the one payload, or a 4-byte row id. */
static int sort_val_bytes(const struct sl__ooc_runs *shape, int *pc)
{
    int np = shape->n_cols - 1;
    *pc = -1;
    for (int c = 0; c < shape->n_cols; c++)
        if (c != shape->key_col)
            *pc = c;
    return np == 0 ? 0 : np == 1 ? shape->width[*pc] : 4;
}

int sl__ooc_gpu_sort_ids(const struct sl__ooc_runs *shape)
{
    return shape->n_cols >= 3;
}

int64_t sl__ooc_gpu_sort_temp(sl_task_t *t, const struct sl__ooc_runs *shape, int64_t rows)
{
    int pc;
    size_t temp = 0;
    SL_TASK_CUDA_TRY(t,
                     sl_k_sort_pairs(NULL, &temp, shape->width[shape->key_col], shape->desc, NULL,
                                     NULL, NULL, NULL, sort_val_bytes(shape, &pc), rows, 0),
                     "sort temp size");
    return (int64_t)temp;
}

int sl__ooc_gpu_sort(sl_task_t *t, const struct sl__ooc_runs *shape, void *const *in,
                     void *const *out, int64_t rows, void *temp, size_t temp_bytes, uint32_t *ids,
                     void *stream)
{
    const int kc = shape->key_col, kw = shape->width[kc];
    cudaStream_t cs = stream;
    int pc, vb = sort_val_bytes(shape, &pc);
    size_t tb = temp_bytes;
    if (!sl__ooc_gpu_sort_ids(shape)) {
        SL_TASK_CUDA_TRY(t,
                         sl_k_sort_pairs(temp, &tb, kw, shape->desc, in[kc], out[kc],
                                         vb ? in[pc] : NULL, vb ? out[pc] : NULL, vb, rows, cs),
                         "sorting a run");
        return SL_OK;
    }
    SL_TASK_CUDA_TRY(t, sl_k_iota_u32(ids, rows, 0, cs), "row ids");
    SL_TASK_CUDA_TRY(t,
                     sl_k_sort_pairs(temp, &tb, kw, shape->desc, in[kc], out[kc], ids, ids + rows,
                                     4, rows, cs),
                     "sorting a run");
    for (int c = 0; c < shape->n_cols; c++) {
        if (c == kc)
            continue;
        if (shape->width[c] == 4)
            SL_TASK_CUDA_TRY(t, sl_k_gather_b32(in[c], ids + rows, out[c], rows, cs), "gathering");
        else
            SL_TASK_CUDA_TRY(t, sl_k_gather_b64(in[c], ids + rows, out[c], rows, cs), "gathering");
    }
    return SL_OK;
}

/* Sorts run (or bucket) i in set s on the task's stream (stable, like the CPU sort);
 * *sorted: where its sorted key column (packed: rows) is. */
static int sort_run(struct runner *r, struct set *s, int64_t i, int64_t rows,
                    const uint64_t **sorted)
{
    *sorted = s->out[r->p.kc];
    if (r->p.packed)
        return sort_packed(r, s, i, rows, sorted);
    return sl__ooc_gpu_sort(r->t, &r->st->runs, s->in, s->out, rows, r->temp, r->p.temp, s->ids,
                            r->cs);
}

/* Where run i starts (i = n_runs: the end). Runs of R rows, the last one shorter; or,
 * with option debug_ooc_graded_runs (at least 4 R rows), graded: the first R rows in
 * runs of R/4, R/4 and R/2, the last R rows in runs of R/2, R/4 and R/4, runs of R
 * between (the last of them shorter), so that a pass's first upload and last download,
 * which overlap nothing (1.3 ms each for the 64 MiB runs of 2^28 pairs at 1/4), take a
 * quarter run. Off by default: its one timing on an H100 (2026-11-27 11:07, beside other
 * changes) was not faster, and with it and graded buckets on by default the one H100 run
 * of the ooc.sort benchmarks (session 17, 13:57) took 157.8 ms at 1/2 and 174.1 at 1/4
 * against some 100 with them off, not traced (docs/OUT_OF_CORE.md). */
static int64_t run_start(const struct plan *p, int64_t i)
{
    const int64_t R = p->R, n = p->n, k = p->n_runs;
    if (!p->graded)
        return i * R < n ? i * R : n;
    if (i <= 3)
        return (int64_t[]){0, R / 4, R / 2, R}[i];
    if (i >= k - 3)
        return (int64_t[]){n - R, n - R / 2, n - R / 4, n}[i - (k - 3)];
    return R + (i - 3) * R < n - R ? R + (i - 3) * R : n - R;
}

static int64_t run_rows(const struct plan *p, int64_t i)
{
    return run_start(p, i + 1) - run_start(p, i);
}

/* Run (or pass-2 bucket) i of `rows` rows through set i % n_sets (two sets, or three in
 * pass 1: plan_run): upload, sort, download into the host columns dst[c]. The set's
 * input buffers are free once the sort of its previous run (i - n_sets) has read them
 * (narrow, early_free: packed them), its output buffers once that run is down: so with
 * two sets run i uploads while run i - 2 downloads (the link busy both ways) and run
 * i - 1 sorts. */
static int one_run(struct runner *r, int64_t i, int64_t rows, void *const *dst)
{
    const int64_t ns = r->n_sets;
    struct set *s = &r->s[i % ns];
    const struct plan *p = &r->p;
    int rc;
    if (i >= ns)
        SL_TASK_CUDA_TRY(r->t,
                         cudaStreamWaitEvent(r->h2d, !r->cuts && p->narrow && p->early_free
                                                         ? s->packed
                                                         : s->sorted,
                                             0),
                         "ordering a buffer set");
    clock_mark(&r->clock, i, 0, r->h2d);
    if ((rc = r->cuts ? upload_bucket(r, s, i) : upload(r, s, rows)) < 0)
        return rc;
    clock_mark(&r->clock, i, 1, r->h2d);
    SL_TASK_CUDA_TRY(r->t, cudaEventRecord(s->up, r->h2d), "cudaEventRecord");
    SL_TASK_CUDA_TRY(r->t, cudaStreamWaitEvent(r->cs, s->up, 0), "ordering the upload");
    if (i >= ns)
        SL_TASK_CUDA_TRY(r->t, cudaStreamWaitEvent(r->cs, s->down, 0), "ordering a buffer set");
    const uint64_t *sorted;
    if ((rc = sort_run(r, s, i, rows, &sorted)) < 0)
        return rc;
    const int64_t nc = r->st->n_codes;
    const int cut = r->d_codes && i >= r->cut_from; /* else early_cuts, on the host */
    if (cut) /* pass 1's cuts: where the splitters cut this run */
        SL_TASK_CUDA_TRY(r->t,
                         p->packed ? sl_k_lower_bounds_packed(sorted, rows, r->d_codes, nc,
                                                              s->d_split, r->cs)
                                   : sl_k_lower_bounds_codes(s->out[p->kc], p->kw, p->desc, rows,
                                                             r->d_codes, nc, s->d_split, r->cs),
                         "splitting a run");
    if (cut && s->d_tops)
        SL_TASK_CUDA_TRY(r->t, sl_k_ooc_split_tops(sorted, rows, s->d_split, nc, s->d_tops, r->cs),
                         "the top values beside a run's cuts");
    if (p->narrow && !r->cuts && (rc = narrow_run(r, s, sorted, rows)) < 0)
        return rc;
    SL_TASK_CUDA_TRY(r->t, cudaEventRecord(s->sorted, r->cs), "cudaEventRecord");
    SL_TASK_CUDA_TRY(r->t, cudaStreamWaitEvent(r->d2h, s->sorted, 0), "ordering the download");
    clock_mark(&r->clock, i, 2, r->d2h);
    if (p->narrow && !r->cuts) { /* a narrow run: its table, its 6-byte rows */
        SL_TASK_CUDA_TRY(r->t,
                         cudaMemcpyAsync(r->st->ntab + i * SL__OOC_NARROW_TOP, s->out[p->kc],
                                         SL__OOC_NARROW_TABLE_BYTES, cudaMemcpyDeviceToHost,
                                         r->d2h),
                         "downloading a run's table");
        SL_TASK_CUDA_TRY(r->t,
                         cudaMemcpyAsync(dst[p->kc],
                                         (char *)s->out[p->kc] + SL__OOC_NARROW_TABLE_BYTES,
                                         (size_t)rows * 6, cudaMemcpyDeviceToHost, r->d2h),
                         "downloading a run");
    } else if (p->packed && !r->cuts) /* a packed run: one column of 8-byte rows */
        SL_TASK_CUDA_TRY(r->t,
                         cudaMemcpyAsync(dst[p->kc], s->out[p->kc], (size_t)rows * 8,
                                         cudaMemcpyDeviceToHost, r->d2h),
                         "downloading a run");
    for (int c = 0; c < p->n_cols && !(p->packed && !r->cuts); c++)
        SL_TASK_CUDA_TRY(r->t,
                         cudaMemcpyAsync(dst[c], s->out[c], (size_t)(rows * p->width[c]),
                                         cudaMemcpyDeviceToHost, r->d2h),
                         "downloading a run");
    if (cut)
        SL_TASK_CUDA_TRY(r->t,
                         cudaMemcpyAsync(r->st->split + i * nc, s->d_split, (size_t)nc * 8,
                                         cudaMemcpyDeviceToHost, r->d2h),
                         "downloading a run's splits");
    if (cut && s->d_tops)
        SL_TASK_CUDA_TRY(r->t,
                         cudaMemcpyAsync(r->st->split_tops + i * 2 * (nc + 2), s->d_tops,
                                         (size_t)(2 * (nc + 2)) * 4, cudaMemcpyDeviceToHost,
                                         r->d2h),
                         "downloading a run's top values");
    clock_mark(&r->clock, i, 3, r->d2h);
    SL_TASK_CUDA_TRY(r->t, cudaEventRecord(s->down, r->d2h), "cudaEventRecord");
    return SL_OK;
}

/* Device buffers of the sets (one set when all rows are one run; pass 1 may take three:
 * plan_run) and the pinned runs. */
static int alloc_all(struct runner *r)
{
    sl_task_t *t = r->t;
    const struct plan *p = &r->p;
    int sets = p->n_runs > 1 ? (!r->cuts && p->sets == 3 ? 3 : 2) : 1;
    r->n_sets = sets;
    for (int k = 0; k < sets; k++) {
        struct set *s = &r->s[k];
        for (int c = 0; c < p->n_cols && !p->packed; c++)
            if (!(s->in[c] = sl_task_device_alloc(t, (size_t)(p->R * p->width[c]))) ||
                !(s->out[c] = sl_task_device_alloc(t, (size_t)(p->R * p->width[c]))))
                return SL_ENOMEM;
        if (p->packed) { /* R rows of 8 bytes each way, or the two columns' halves (pass 1,
                            narrow: out also holds the table before the 6-byte rows) */
            int64_t extra = p->narrow && !r->cuts ? narrow_extra(p->R) : 0;
            if (!(s->in[p->kc] = sl_task_device_alloc(t, (size_t)(p->R * 8))) ||
                !(s->out[p->kc] = sl_task_device_alloc(t, (size_t)(p->R * 8 + extra))))
                return SL_ENOMEM;
            s->in[p->pc] = (char *)s->in[p->kc] + p->R * 4;
            s->out[p->pc] = (char *)s->out[p->kc] + p->R * 4;
        }
        if (p->np >= 2 && !(s->ids = sl_task_device_alloc(t, (size_t)p->R * 8)))
            return SL_ENOMEM;
        if (p->narrow && r->cuts &&
            !(s->d_win = sl_task_device_alloc(t, (size_t)(r->st->runs.n_runs * NARROW_WINDOW * 4))))
            return SL_ENOMEM;
        SL_TASK_CUDA_TRY(t, cudaEventCreateWithFlags(&s->up, cudaEventDisableTiming),
                         "cudaEventCreate");
        SL_TASK_CUDA_TRY(t, cudaEventCreateWithFlags(&s->sorted, cudaEventDisableTiming),
                         "cudaEventCreate");
        SL_TASK_CUDA_TRY(t, cudaEventCreateWithFlags(&s->packed, cudaEventDisableTiming),
                         "cudaEventCreate");
        SL_TASK_CUDA_TRY(t, cudaEventCreateWithFlags(&s->down, cudaEventDisableTiming),
                         "cudaEventCreate");
    }
    if (!(r->temp = sl_task_device_alloc(t, p->temp ? p->temp : 1)))
        return SL_ENOMEM;
    if (!r->cuts && r->st->n_codes > 0) { /* pass 1's cuts (presplit_open) */
        size_t bytes = (size_t)r->st->n_codes * 8;
        if (!(r->d_codes = sl_task_device_alloc(t, bytes)))
            return SL_ENOMEM;
        for (int k = 0; k < sets; k++)
            if (!(r->s[k].d_split = sl_task_device_alloc(t, bytes)))
                return SL_ENOMEM;
        int64_t how = 0; /* option debug_ooc_narrow_tops: 1 host (sl__ooc_bucket_cuts) */
        sl_task_option_int(t, "debug_ooc_narrow_tops", &how);
        if (p->narrow && how != 1) { /* the top values beside the cuts */
            size_t tb = (size_t)(2 * (r->st->n_codes + 2)) * 4;
            r->st->split_tops_bytes = p->n_runs * (int64_t)tb;
            for (int k = 0; k < sets; k++)
                if (!(r->s[k].d_tops = sl_task_device_alloc(t, tb)))
                    return SL_ENOMEM;
            if (!(r->st->split_tops = sl__task_pinned_alloc(t, r->st->split_tops_bytes)))
                return SL_ENOMEM;
        }
        /* pageable source: returns once it is staged; deferred (cut_from > 0): once
         * sampled, from pinned memory (codes_up) */
        if (r->cut_from == 0)
            SL_TASK_CUDA_TRY(t, cudaMemcpyAsync(r->d_codes, r->st->codes, bytes,
                                                cudaMemcpyHostToDevice, r->cs),
                             "uploading the splitters");
        else if (!(r->h_codes = sl__task_pinned_alloc(t, (int64_t)bytes)))
            return SL_ENOMEM;
    }
    if (p->narrow && !r->cuts) { /* the runs' tables, one array (pass 2's 2D copies) */
        r->st->ntab_bytes = p->n_runs * SL__OOC_NARROW_TABLE_BYTES;
        if (!(r->st->ntab = sl__task_pinned_alloc(t, r->st->ntab_bytes)))
            return SL_ENOMEM;
        r->st->runs.narrow_tables = r->st->ntab;
    }
    for (int64_t i = 0; i < p->n_runs && !r->cuts; i++) {
        for (int c = 0; c < p->n_cols; c++) {
            int64_t k = i * p->n_cols + c;
            if (p->packed && c != p->kc)
                continue; /* the key's entry holds both */
            r->st->bytes[k] = run_rows(p, i) * (p->narrow ? 6 : p->packed ? 8 : p->width[c]);
            if (!(r->st->cols[k] = sl__task_pinned_alloc(t, r->st->bytes[k])))
                return SL_ENOMEM;
        }
    }
    return SL_OK;
}

static void free_all(struct runner *r)
{
    for (int k = 0; k < MAX_SETS; k++) {
        struct set *s = &r->s[k];
        for (int c = 0; c < r->p.n_cols; c++) {
            if (r->p.packed && c != r->p.kc)
                continue; /* halves of the key's buffers */
            sl_task_device_free(r->t, s->in[c]);
            sl_task_device_free(r->t, s->out[c]);
        }
        sl_task_device_free(r->t, s->ids);
        sl_task_device_free(r->t, s->d_split);
        sl_task_device_free(r->t, s->d_tops);
        sl_task_device_free(r->t, s->d_win);
        if (s->up)
            cudaEventDestroy(s->up);
        if (s->sorted)
            cudaEventDestroy(s->sorted);
        if (s->packed)
            cudaEventDestroy(s->packed);
        if (s->down)
            cudaEventDestroy(s->down);
    }
    sl_task_device_free(r->t, r->temp);
    sl_task_device_free(r->t, r->d_tables);
    sl_task_device_free(r->t, r->d_codes);
    sl__task_pinned_free(r->t, r->h_codes, r->st ? r->st->n_codes * 8 : 0);
    if (r->early_down)
        cudaEventDestroy(r->early_down);
    free(r->h_dst);
    free(r->h_src);
    free(r->h_size);
    free(r->h_vrows);
    free(r->h_ntop);
}

/* Drops pass 1's cuts. */
static void presplit_free(struct sl__ooc_sorted *st)
{
    sl__pinned_owner_free(&st->owner, st->split, st->split_bytes);
    sl__pinned_owner_free(&st->owner, st->split_tops, st->split_tops_bytes);
    free(st->codes);
    st->split = NULL;
    st->split_tops = NULL;
    st->split_tops_bytes = 0;
    st->codes = NULL;
    st->n_codes = st->split_rows = st->split_bytes = 0;
    st->graded = 0;
}

void sl__ooc_sorted_free(struct sl__ooc_sorted *st)
{
    if (!st)
        return;
    for (int64_t i = 0; st->cols && i < st->runs.n_runs * st->runs.n_cols; i++)
        sl__pinned_owner_free(&st->owner, st->cols[i], st->bytes[i]);
    presplit_free(st);
    sl__pinned_owner_free(&st->owner, st->ntab, st->ntab_bytes);
    free(st->rows);
    free(st->cols);
    free(st->bytes);
    free(st);
}

static struct sl__ooc_sorted *sorted_new(sl_task_t *t, const struct plan *p)
{
    struct sl__ooc_sorted *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    int64_t k = p->n_runs * p->n_cols;
    st->rows = calloc((size_t)p->n_runs, sizeof *st->rows);
    st->cols = calloc((size_t)k, sizeof *st->cols);
    st->bytes = calloc((size_t)k, sizeof *st->bytes);
    if (!st->rows || !st->cols || !st->bytes) {
        sl__ooc_sorted_free(st);
        return NULL;
    }
    sl__task_pinned_owner(t, &st->owner);
    st->n = p->n;
    st->runs.n_cols = p->n_cols;
    st->runs.key_col = p->kc;
    st->runs.desc = p->desc;
    memcpy(st->runs.width, p->width, sizeof p->width);
    st->runs.n_runs = p->n_runs;
    st->runs.packed = p->packed;
    st->sets = p->n_runs > 1 ? p->sets : 1;
    st->runs.rows = st->rows;
    st->runs.cols = st->cols;
    return st;
}

/* Pageable input goes through pinned staging (gpu_ext.h): one run of every column per
 * buffer. */
static int stage_open(struct runner *r)
{
    int pageable = input_pageable(r->in, &r->p);
    int64_t row = 0;
    for (int c = 0; c < r->p.n_cols; c++)
        row += r->p.width[c];
    return sl__upload_stage_open(r->t, &r->stage, pageable ? r->p.R * row : 0);
}

/* The runner's streams: the task's for kernels, and two copy streams borrowed from the
 * runtime (operators make no streams of their own). */
static int streams_open(struct runner *r, void *side[2])
{
    r->cs = sl_task_stream(r->t);
    int rc = sl__task_streams_get(r->t, 2, side);
    r->h2d = side[0];
    r->d2h = side[1];
    return rc;
}

/* Waits for the three streams and gives the borrowed ones back; the first error. */
static cudaError_t streams_close(struct runner *r, void *side[2])
{
    cudaStream_t all[3] = {r->h2d, r->cs, r->d2h};
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < 3; i++) {
        cudaError_t ei = cudaStreamSynchronize(all[i]);
        if (e == cudaSuccess)
            e = ei;
    }
    sl__task_streams_put(r->t, 2, side);
    return e;
}

static void in_split_end(sl_task_t *t, struct in_split *sp, int64_t P, int graded, int64_t over,
                         uint64_t *codes);

/* presplit_early: the splitters, sampled and picked once the first cut_from runs are
 * enqueued (the GPU uploads and sorts them meanwhile), go up for the later runs' cuts. */
static int presplit_end(struct runner *r)
{
    struct sl__ooc_sorted *st = r->st;
    double t0 = now_ms();
    in_split_end(r->t, &r->split, r->split_P, st->graded, OVERSAMPLE, st->codes);
    sl_task_phase_time(r->t, "ooc_presplit_sample", now_ms() - t0);
    memcpy(r->h_codes, st->codes, (size_t)st->n_codes * 8);
    SL_TASK_CUDA_TRY(r->t,
                     cudaMemcpyAsync(r->d_codes, r->h_codes, (size_t)st->n_codes * 8,
                                     cudaMemcpyHostToDevice, r->cs),
                     "uploading the splitters");
    return SL_OK;
}

/* presplit_early: the cuts of runs [0, cut_from) (enqueued before the splitters were
 * known), searched in their pinned runs once they are down, while the GPU sorts the
 * rest; and, narrow, the top values beside them (st->split_tops, as sl_k_ooc_split_tops
 * writes them). */
static int early_cuts(struct runner *r)
{
    struct sl__ooc_sorted *st = r->st;
    const int64_t m = r->cut_from, nc = st->n_codes;
    SL_TASK_CUDA_TRY(r->t, cudaEventSynchronize(r->early_down), "waiting for the first runs");
    double t0 = now_ms();
    struct sl__ooc_runs view = st->runs; /* the first m runs */
    view.n_runs = m;
    int64_t *sp = malloc((size_t)(nc * m + 1) * sizeof *sp);
    if (!sp)
        return sl_task_fail(r->t, SL_ENOMEM, "out of memory");
    sl__ooc_split_below_all(&view, st->codes, nc, sp, sl__host_threads(16));
    for (int64_t j = 0; j < m; j++) {
        for (int64_t c = 0; c < nc; c++)
            st->split[j * nc + c] = sp[c * m + j];
        if (st->split_tops)
            sl__ooc_split_tops(&st->runs, j, st->split + j * nc, nc,
                               st->split_tops + j * 2 * (nc + 2));
    }
    free(sp);
    sl_task_phase_time(r->t, "ooc_early_cuts", now_ms() - t0);
    return SL_OK;
}

static int runs(struct runner *r)
{
    int rc = alloc_all(r);
    if (rc < 0 || (rc = stage_open(r)) < 0)
        return rc;
    /* Device memory is ordered on the task's stream: the copy streams wait for it (or for
     * the caller's event: its state before work it queued there since, which freed no
     * device memory) */
    if (r->after) {
        SL_TASK_CUDA_TRY(r->t, cudaStreamWaitEvent(r->h2d, r->after, 0), "ordering streams");
        SL_TASK_CUDA_TRY(r->t, cudaStreamWaitEvent(r->d2h, r->after, 0), "ordering streams");
    } else if ((rc = order(r->t, r->cs, r->h2d)) < 0 || (rc = order(r->t, r->cs, r->d2h)) < 0) {
        return rc;
    }
    if (r->cut_from > 0)
        SL_TASK_CUDA_TRY(r->t, cudaEventCreateWithFlags(&r->early_down, cudaEventDisableTiming),
                         "cudaEventCreate");
    clock_start(r, &r->clock);
    for (int64_t i = 0; i < r->p.n_runs && rc >= 0; i++) {
        if (sl_task_cancelled(r->t))
            return SL_ECANCELED;
        if (i > 0 && i == r->cut_from && (rc = presplit_end(r)) < 0)
            return rc;
        r->st->rows[i] = run_rows(&r->p, i);
        rc = one_run(r, i, r->st->rows[i], r->st->cols + i * r->p.n_cols);
        if (rc >= 0 && i + 1 == r->cut_from)
            SL_TASK_CUDA_TRY(r->t, cudaEventRecord(r->early_down, r->d2h), "cudaEventRecord");
    }
    if (rc >= 0 && r->cut_from >= r->p.n_runs && r->cut_from > 0) /* every run was early */
        rc = presplit_end(r);
    clock_enqueued(r, &r->clock);
    return rc;
}

/* The samples of sl__ooc_input_splitters (n rows, kw-byte keys) that fall in parts on
 * this GPU (dev[q] != NULL: key columns the host cannot read; the sink kept the first
 * batches there): one kernel on stream cs reads them into pinned memory (*pin,
 * *pin_bytes: the caller's to free), where keys[q] then points, first[q] being part q's
 * first sample (-1 for the others). Some 2,000 samples for 2^28 rows at 1/2: one launch,
 * where a copy each costs microseconds. SL_OK, or < 0 after failing the task. */
static int device_samples(sl_task_t *t, int64_t n, int kw, int64_t P, int64_t over,
                          const void **keys, const int64_t *rows, const void *const *dev,
                          int64_t *first, void **pin, int64_t *pin_bytes, cudaStream_t cs)
{
    const int64_t s = sl__ooc_input_sample_count(n, P, over);
    const void **addr = NULL;
    char *vals = NULL;
    int64_t m = 0;
    for (int pass = 0; pass < 2; pass++) { /* 0: count them; 1: their addresses */
        int64_t q = 0, base = 0, k = 0;
        for (int64_t i = 0; i < s; i++) {
            int64_t row = sl__ooc_input_sample_row(i, n, s);
            while (row >= base + rows[q])
                base += rows[q++];
            if (!dev[q])
                continue;
            if (pass == 0) {
                if (first[q] < 0)
                    first[q] = i;
                m++;
                continue;
            }
            if (i == first[q])
                keys[q] = vals + k * kw;
            addr[k++] = (const char *)dev[q] + (row - base) * kw;
        }
        if (pass == 1 || m == 0)
            break;
        *pin_bytes = m * (8 + kw);
        if (!(*pin = sl__task_pinned_alloc(t, *pin_bytes)))
            return SL_EBUDGET;
        addr = *pin;
        vals = (char *)(addr + m);
    }
    if (m == 0)
        return SL_OK;
    /* the spill pool's blocks are mapped: the kernel reads the addresses and writes the
     * keys in place */
    SL_TASK_CUDA_TRY(t, sl_k_gather_addrs((const void *const *)addr, kw, vals, m, cs),
                     "reading samples of GPU batches");
    SL_TASK_CUDA_TRY(t, cudaStreamSynchronize(cs), "reading samples of GPU batches");
    return SL_OK;
}

static int64_t merge_rows_under(sl_task_t *t, const struct sl__ooc_sorted *st, int64_t R,
                                enum sl__ooc_gather gather, int64_t budget);

static void in_split_free(sl_task_t *t, struct in_split *sp)
{
    sl__task_pinned_free(t, sp->pin, sp->pin_bytes);
    free(sp->keys), free(sp->dev), free(sp->rows), free(sp->first), free(sp->scratch);
    memset(sp, 0, sizeof *sp);
}

/* 1, 0 (a key column elsewhere: nothing to sample) or < 0 after failing the task; sp is
 * freed unless 1. The samples in GPU batches are read on `stream` (NULL: the task's). */
static int in_split_begin(sl_task_t *t, const struct sl__ooc_input *in, int n_in, int64_t P,
                          int64_t over, struct in_split *sp, void *stream)
{
    memset(sp, 0, sizeof *sp);
    int here = -1, kw = 0, desc = in[0].desc;
    SL_TASK_CUDA_TRY(t, cudaGetDevice(&here), "cudaGetDevice");
    int64_t nb = 0, n = 0;
    for (int x = 0; x < n_in; x++) {
        for (int64_t i = 0; i < in[x].n_batches; i++) {
            const sl_batch_t *b = batch_at(&in[x], i);
            const struct sl__col *c = &b->cols[in[x].col[in[x].key]];
            const struct sl__buf *d = c->data;
            if (!d || (d->kind != SL__MEM_HOST && d->kind != SL__MEM_PINNED &&
                       (d->kind != SL__MEM_DEVICE || d->device != here)))
                return 0; /* a key column elsewhere */
            int w = sl_type_width(c->type);
            if ((kw && w != kw) || in[x].desc != desc)
                return 0;
            kw = w;
            n += b->n_rows;
        }
        nb += in[x].n_batches;
    }
    if (nb == 0 || n == 0 || P < 2)
        return 0;
    sp->nb = nb, sp->n = n, sp->kw = kw, sp->desc = desc;
    sp->keys = malloc((size_t)nb * sizeof *sp->keys);
    sp->dev = malloc((size_t)nb * sizeof *sp->dev);
    sp->rows = malloc((size_t)nb * sizeof *sp->rows);
    sp->first = malloc((size_t)nb * sizeof *sp->first);
    sp->scratch = malloc((size_t)sl__ooc_input_scratch_bytes(n, P, over));
    int64_t q = 0;
    int rc = sp->keys && sp->dev && sp->rows && sp->first && sp->scratch
                 ? SL_OK
                 : sl_task_fail(t, SL_ENOMEM, "out of memory");
    int any_dev = 0;
    for (int x = 0; x < n_in && rc >= 0; x++)
        for (int64_t i = 0; i < in[x].n_batches; i++, q++) {
            const sl_batch_t *b = batch_at(&in[x], i);
            const struct sl__col *c = &b->cols[in[x].col[in[x].key]];
            sp->keys[q] = (const char *)c->data->ptr + (size_t)c->offset * (size_t)kw;
            sp->dev[q] = c->data->kind == SL__MEM_DEVICE ? sp->keys[q] : NULL;
            any_dev |= sp->dev[q] != NULL;
            sp->rows[q] = b->n_rows;
            sp->first[q] = -1;
        }
    if (rc >= 0 && any_dev)
        rc = device_samples(t, n, kw, P, over, sp->keys, sp->rows, sp->dev, sp->first, &sp->pin,
                            &sp->pin_bytes, stream ? (cudaStream_t)stream : sl_task_stream(t));
    if (rc < 0) {
        in_split_free(t, sp);
        return rc;
    }
    return 1;
}

static void in_split_end(sl_task_t *t, struct in_split *sp, int64_t P, int graded, int64_t over,
                         uint64_t *codes)
{
    sl__ooc_input_splitters(sp->keys, sp->rows, sp->nb, sp->first, sp->kw, sp->desc, P, graded,
                            over, codes, sp->scratch, sl__host_threads(16));
    in_split_free(t, sp);
}

int sl__ooc_inputs_splitters_on(sl_task_t *t, const struct sl__ooc_input *in, int n_in,
                                int64_t P, int graded, int64_t over, uint64_t *codes,
                                void *stream)
{
    struct in_split sp;
    int rc = in_split_begin(t, in, n_in, P, over, &sp, stream);
    if (rc > 0)
        in_split_end(t, &sp, P, graded, over, codes);
    return rc;
}

int sl__ooc_inputs_splitters(sl_task_t *t, const struct sl__ooc_input *in, int n_in, int64_t P,
                             int graded, int64_t over, uint64_t *codes)
{
    return sl__ooc_inputs_splitters_on(t, in, n_in, P, graded, over, codes, NULL);
}

/* Pass 2's splitters, sampled from the input before pass 1 (sl__ooc_inputs_splitters), so
 * that each run's cuts are found on the GPU as it is sorted (one_run) and pass 2 starts
 * as soon as the runs are down: for several runs (at most SL__OOC_SPLIT_RUNS) whose keys
 * are in host memory or on this GPU, when the host budget holds the split table, unless
 * option debug_ooc_sort_merge is cpu or late_cuts (the path before 2026-11-27, for A/B
 * runs). Given splitters (in->n_codes) are taken as they are, for any number of runs,
 * when the host budget holds their split table. Otherwise st->n_codes stays 0. With
 * `early` runs (presplit_early) the GPU batches' samples are read here, the host's
 * sampled and the splitters picked in runs() once those runs are enqueued (st->codes is
 * filled then; r->cut_from = early). */
static int presplit_open(struct runner *r, int64_t early)
{
    enum { AUTO, CPU, GPU, LATE_CUTS };
    const struct plan *p = &r->p;
    struct sl__ooc_sorted *st = r->st;
    const int given = r->in->n_codes > 0;
    int64_t how = AUTO, R2 = 0, P = given ? r->in->n_codes + 1 : 0;
    int graded = 0;
    if (!given && r->in->no_cuts)
        return SL_OK; /* the caller finds the cuts it needs */
    if (!given) {
        int64_t nb = r->in->n_batches, dev_bytes = 0, graded_opt = 0;
        sl_task_option_int(r->t, "debug_ooc_sort_merge", &how);
        if (how == CPU || how == LATE_CUTS || p->n_runs < 2 || p->n_runs > SL__OOC_SPLIT_RUNS)
            return SL_OK;
        int here = -1;
        SL_TASK_CUDA_TRY(r->t, cudaGetDevice(&here), "cudaGetDevice");
        for (int64_t i = 0; i < nb; i++) {
            const sl_batch_t *b = batch_at(r->in, i);
            const struct sl__buf *d = b->cols[r->in->col[p->kc]].data;
            if (!d || (d->kind != SL__MEM_HOST && d->kind != SL__MEM_PINNED &&
                       (d->kind != SL__MEM_DEVICE || d->device != here)))
                return SL_OK; /* a key column elsewhere: the cuts are searched after pass 1 */
            for (int c = 0; c < p->n_cols; c++)
                if (b->cols[r->in->col[c]].data->kind == SL__MEM_DEVICE)
                    dev_bytes += b->n_rows * p->width[c];
        }
        /* Pass 2's bucket size: what its budget will hold, the GPU batches (freed after
         * pass 1) given back, less a MiB for the pool's rounding (sl__ooc_merge_rows takes
         * it if it fits then). */
        R2 = merge_rows_under(r->t, st, p->R, sl__ooc_gather_of(r->t, &st->runs),
                              sl_task_device_budget(r->t) + dev_bytes - MIB);
        P = R2 > 0 ? bucket_count(p->n, R2) : 0;
        if (P < 2)
            return SL_OK;
        /* Graded buckets (option debug_ooc_graded_buckets, at least 4): the first and the
         * last in a quarter, a quarter and a half, so that pass 2's first upload and last
         * download, which overlap nothing, take a quarter bucket. */
        sl_task_option_int(r->t, "debug_ooc_graded_buckets", &graded_opt);
        graded = graded_opt && P >= 4;
    }
    int64_t n_codes = P - 1 + (graded ? 4 : 0);
    int64_t split_bytes = p->n_runs * n_codes * 8;
    if (!sl__task_host_room(r->t, 2 * split_bytes))
        return SL_OK;
    uint64_t *codes = malloc((size_t)n_codes * sizeof *codes);
    if (!codes)
        return sl_task_fail(r->t, SL_ENOMEM, "out of memory");
    int rc = 1;
    if (given)
        memcpy(codes, r->in->codes, (size_t)n_codes * sizeof *codes);
    else if (early > 0)
        rc = in_split_begin(r->t, r->in, 1, P, OVERSAMPLE, &r->split, NULL);
    else
        rc = sl__ooc_inputs_splitters(r->t, r->in, 1, P, graded, OVERSAMPLE, codes);
    if (rc > 0 && !(st->split = sl__task_pinned_alloc(r->t, split_bytes)))
        rc = SL_EBUDGET;
    if (rc <= 0) { /* 0: a key column elsewhere, the cuts are searched after pass 1 */
        if (!given && early > 0)
            in_split_free(r->t, &r->split);
        free(codes);
        return rc;
    }
    if (!given && early > 0) {
        r->cut_from = early;
        r->split_P = P;
    }
    st->codes = codes;
    st->n_codes = n_codes;
    st->graded = graded;
    st->split_rows = given ? 0 : R2;
    st->split_bytes = split_bytes;
    return SL_OK;
}

/* Narrow runs (ooc_merge.h, sluice_k/ooc_pack.h; option debug_ooc_narrow_runs): packed
 * runs, several, whose buckets pass 2 reads by copies (the gather kernel reads 8-byte
 * rows). 0: not narrow; 1 (auto): narrow where pass 1 finds pass 2's cuts (pass 2 is
 * planned on the GPU: the pass the saving is for; the CPU merge would only pay for the
 * decoding); 2 (on: tests): narrow whatever the merge. Each narrow run is 6 bytes a row
 * and a 256 KiB table (in host memory), so pass 1's download and pass 2's upload move
 * about 3/4 of the bytes (2^28 pairs: 1.5 GiB and 8 or 32 MiB of tables instead of 2 GiB
 * each way at 32 or 128 runs); pass 2 holds a bucket's window of the tables a set. */
static int64_t narrow_of(sl_task_t *t, const struct plan *p, const struct sl__ooc_sorted *st)
{
    enum { AUTO, OFF, ON };
    int64_t how = AUTO;
    sl_task_option_int(t, "debug_ooc_narrow_runs", &how);
    if (how == OFF || !p->packed || p->n_runs < 2 ||
        sl__ooc_gather_of(t, &st->runs) == SL__OOC_GATHER_KERNEL)
        return 0;
    return how == ON ? 2 : 1;
}

/* Runs to enqueue before pass 2's splitters are sampled (presplit_open): the first some
 * PRESPLIT_EARLY bytes of input go up and are sorted while the host samples (1.3 to 4 ms
 * for 2^28 rows at 1/16 on H100 hosts, the link idle, 2026-11-27), at most a quarter of
 * the runs (at least one), their cuts searched on the host later (early_cuts, in
 * sl__ooc_runs_sort_end). Where option debug_ooc_presplit is auto and the input needs no
 * staging (pageable input: the host stages each run as it enqueues it); 0: none, the
 * splitters first. */
#define PRESPLIT_EARLY ((int64_t)256 << 20)
static int64_t presplit_early(sl_task_t *t, const struct plan *p, const struct sl__ooc_input *in)
{
    int64_t how = 0, row = 0;
    sl_task_option_int(t, "debug_ooc_presplit", &how);
    if (how != 0 || in->n_codes > 0 || p->n_runs < 2 || input_pageable(in, p))
        return 0;
    for (int c = 0; c < p->n_cols; c++)
        row += p->width[c];
    int64_t m = (PRESPLIT_EARLY + p->R * row - 1) / (p->R * row), most = p->n_runs / 4;
    m = m < most ? m : most;
    return m < 1 ? 1 : m;
}

/* Pass 1 in flight (sl__ooc_runs_sort_begin): its runner, borrowed streams, and an event
 * after its last work on the task's stream (so that its end need not wait for what the
 * caller queued there since). */
struct sl__ooc_pass1 {
    struct runner r;
    void *side[2];
    cudaEvent_t cs_done;
    double t0;
    int rc;
};

int sl__ooc_runs_sort_begin(sl_task_t *t, const struct sl__ooc_input *in,
                            struct sl__ooc_sorted **out, struct sl__ooc_pass1 **hp, void *after)
{
    *out = NULL;
    *hp = NULL;
    struct sl__ooc_pass1 *h = calloc(1, sizeof *h);
    if (!h)
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    struct runner *r = &h->r;
    r->t = t;
    r->in = in;
    r->after = after;
    if (!make_plan(t, in, &r->p)) {
        free(h);
        return sl_task_fail(t, SL_EBUDGET, "out-of-core sort on the GPU: %lld bytes of GPU "
                            "budget left are too few for a run",
                            (long long)sl_task_device_budget(t));
    }
    h->t0 = now_ms();
    if (!(r->st = *out = sorted_new(t, &r->p))) {
        free(h);
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    }
    /* before presplit_open: pass 2's bucket size counts the narrow runs' tables */
    int64_t narrow = in->pack == 2 ? 0 : narrow_of(t, &r->p, r->st); /* 2: 8-byte rows only */
    if (in->pack == 3 && narrow == 1) /* the sort-merge join's: narrow without cuts too */
        narrow = 2;
    if (in->pack == 3 && in->narrow_runs > 0 && r->p.n_runs > in->narrow_runs)
        narrow = 0; /* more runs than the join sized pass 2's windows for: 8-byte rows */
    r->p.narrow = r->st->runs.narrow = narrow > 0;
    int64_t bufs = 0; /* option debug_ooc_pass1_buffers: 1 upload (as before) */
    sl_task_option_int(t, "debug_ooc_pass1_buffers", &bufs);
    r->p.early_free = bufs == 0;
    int rc = presplit_open(r, presplit_early(t, &r->p, in));
    if (rc >= 0 && narrow == 1 && r->st->n_codes == 0) /* auto: no cuts in pass 1, no GPU
                                                          merge planned */
        r->p.narrow = r->st->runs.narrow = 0;
    if (rc >= 0 && r->st->n_codes > 0)
        sl_task_phase_time(t, "ooc_presplit", now_ms() - h->t0);
    if (rc >= 0)
        rc = streams_open(r, h->side);
    if (rc < 0) {
        in_split_free(t, &r->split);
        free(h);
        return rc;
    }
    h->rc = runs(r);
    /* timing is advice and so is this event: without it the end waits for the stream */
    if (cudaEventCreateWithFlags(&h->cs_done, cudaEventDisableTiming) != cudaSuccess ||
        cudaEventRecord(h->cs_done, r->cs) != cudaSuccess) {
        if (h->cs_done)
            cudaEventDestroy(h->cs_done);
        h->cs_done = NULL;
        cudaGetLastError();
    }
    *hp = h;
    return h->rc;
}

int sl__ooc_runs_sort_end(sl_task_t *t, struct sl__ooc_pass1 *h)
{
    if (!h)
        return SL_OK;
    struct runner *r = &h->r;
    int rc = h->rc;
    /* the first runs' cuts (presplit_early), searched on the host once they are down, while
     * the GPU sorts the rest */
    if (rc >= 0 && r->cut_from > 0)
        rc = early_cuts(r);
    /* the copy streams are this pass's own; the task's stream may hold the caller's
     * later work (another pass 1): wait for this pass's part of it only */
    cudaStream_t own[2] = {r->h2d, r->d2h};
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < 2; i++) {
        cudaError_t ei = cudaStreamSynchronize(own[i]);
        if (e == cudaSuccess)
            e = ei;
    }
    cudaError_t ec = h->cs_done ? cudaEventSynchronize(h->cs_done) : cudaStreamSynchronize(r->cs);
    if (e == cudaSuccess)
        e = ec;
    if (h->cs_done)
        cudaEventDestroy(h->cs_done);
    sl__task_streams_put(t, 2, h->side);
    in_split_free(t, &r->split); /* presplit_early's, if runs() failed before its end */
    static const char *const busy[2] = {"ooc_runs_up_busy", "ooc_runs_down_busy"};
    clock_report(r, &r->clock, rc >= 0 && e == cudaSuccess, "ooc_runs_up", "ooc_runs_down",
                 NULL, "ooc_runs_up_wait", "ooc_runs_down_wait", busy);
    sl__upload_stage_close(t, &r->stage);
    free_all(r);
    if (rc >= 0 && e != cudaSuccess)
        rc = SL_TASK_CUDA_FAIL(t, e, "sorting runs");
    r->st->gpu_ms = now_ms() - h->t0;
    free(h);
    return rc;
}

int sl__ooc_runs_sort(sl_task_t *t, const struct sl__ooc_input *in, struct sl__ooc_sorted **out)
{
    struct sl__ooc_pass1 *h = NULL;
    int rc = sl__ooc_runs_sort_begin(t, in, out, &h, NULL);
    int rc2 = sl__ooc_runs_sort_end(t, h);
    return rc < 0 ? rc : rc2;
}

/* ---------------- pass 2: buckets of the runs re-sorted on the GPU ---------------- */

/* GATHER_KERNEL's tables in device memory (bytes): the runs' column pointers, the cuts,
 * each bucket's slice starts (real and virtual). */
static int64_t table_bytes(int64_t k, int64_t n_cols, int64_t nb)
{
    return 8 * (k * n_cols + (nb + 1) * k + 2 * nb * (k + 1));
}

/* Narrow runs' tables in device memory (bytes): the cuts, each bucket's slice starts
 * (uploaded once), and each set's window of the runs' tables (sl_k_ooc_narrow_decode). */
static int64_t narrow_table_bytes(int64_t k, int64_t nb)
{
    return 8 * ((nb + 1) * k + nb * (k + 1)) + 2 * k * NARROW_WINDOW * 4;
}

/* Narrow runs, pass 2: the cuts and each bucket's slice starts (pageable, then freed:
 * synchronized) on the task's stream, and each bucket's window of top-16 values
 * (h_ntop: its lowest and how many, at most NARROW_WINDOW: sl__ooc_bucket_cuts), from
 * `tops` (sl__ooc_bucket_cuts') or, NULL, searched in the runs' tables. */
static int narrow_tables_open(struct runner *r, int64_t nb, const int64_t *tops)
{
    const struct sl__ooc_runs *m = &r->st->runs;
    const int64_t k = m->n_runs;
    const int64_t small = 8 * ((nb + 1) * k + nb * (k + 1));
    int64_t *h = malloc((size_t)small);
    if (!h || !(r->h_ntop = malloc((size_t)(2 * nb) * sizeof *r->h_ntop))) {
        free(h);
        return sl_task_fail(r->t, SL_ENOMEM, "out of memory");
    }
    int64_t *cuts = h, *at = cuts + (nb + 1) * k;
    memcpy(cuts, r->cuts, (size_t)((nb + 1) * k) * sizeof *cuts);
    /* each bucket's lowest and highest top value, into h_ntop (then lowest and count) */
    if (tops)
        memcpy(r->h_ntop, tops, (size_t)(2 * nb) * sizeof *r->h_ntop);
    else
        sl__ooc_narrow_tops(m, cuts, nb, r->h_ntop, sl__host_threads(16));
    for (int64_t b = 0; b < nb; b++) {
        int64_t *a = at + b * (k + 1), lo = r->h_ntop[2 * b], hi = r->h_ntop[2 * b + 1];
        a[0] = 0;
        for (int64_t j = 0; j < k; j++)
            a[j + 1] = a[j] + cuts[(b + 1) * k + j] - cuts[b * k + j];
        if (hi < 0)
            lo = hi = 0;
        if (hi - lo + 1 > NARROW_WINDOW) {
            free(h);
            return sl_task_fail(r->t, SL_EINTERNAL, "a bucket of narrow runs spans %lld top "
                                "values", (long long)(hi - lo + 1));
        }
        r->h_ntop[2 * b] = lo;
        r->h_ntop[2 * b + 1] = hi - lo + 1;
    }
    if (!(r->d_tables = sl_task_device_alloc(r->t, (size_t)small))) {
        free(h);
        return SL_ENOMEM;
    }
    r->d_cuts = r->d_tables;
    r->d_at = r->d_cuts + (nb + 1) * k;
    cudaError_t e = cudaMemcpyAsync(r->d_tables, h, (size_t)small, cudaMemcpyHostToDevice, r->cs);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(r->cs); /* h is pageable and freed next */
    free(h);
    SL_TASK_CUDA_TRY(r->t, e, "uploading the bucket tables");
    return SL_OK;
}

/* What a bucket's upload needs: the copy lists (GATHER_COPY, GATHER_BATCH), or the
 * kernel's tables, uploaded once on the task's stream before any bucket. */
static int tables_open(struct runner *r, int64_t nb, const int64_t *tops)
{
    const struct sl__ooc_runs *m = &r->st->runs;
    const int64_t k = m->n_runs, nc = m->n_cols;
    if (r->gather != SL__OOC_GATHER_KERNEL) {
        r->h_dst = malloc((size_t)(k * nc) * sizeof *r->h_dst);
        r->h_src = malloc((size_t)(k * nc) * sizeof *r->h_src);
        r->h_size = malloc((size_t)(k * nc) * sizeof *r->h_size);
        if (!r->h_dst || !r->h_src || !r->h_size)
            return sl_task_fail(r->t, SL_ENOMEM, "out of memory");
        return m->narrow ? narrow_tables_open(r, nb, tops) : SL_OK;
    }
    if (m->narrow) /* the kernel reads 8-byte rows: never chosen with narrow runs */
        return sl_task_fail(r->t, SL_EINTERNAL, "narrow runs read by the gather kernel");
    const int64_t ncp = m->packed ? 1 : nc; /* columns the kernel reads */
    int64_t bytes = table_bytes(k, ncp, nb);
    int64_t *h = malloc((size_t)bytes);
    if (!h || !(r->h_vrows = malloc((size_t)nb * sizeof *r->h_vrows))) {
        free(h);
        return sl_task_fail(r->t, SL_ENOMEM, "out of memory");
    }
    for (int64_t i = 0; i < k * ncp; i++)
        h[i] = (int64_t)(uintptr_t)(m->packed ? m->cols[i * nc + m->key_col] : m->cols[i]);
    int64_t *cuts = h + k * ncp, *at = cuts + (nb + 1) * k, *vat = at + nb * (k + 1);
    memcpy(cuts, r->cuts, (size_t)((nb + 1) * k) * sizeof *cuts);
    for (int64_t b = 0; b < nb; b++) {
        int64_t *a = at + b * (k + 1), *v = vat + b * (k + 1);
        a[0] = v[0] = 0;
        for (int64_t j = 0; j < k; j++) {
            int64_t lo = cuts[b * k + j], n = cuts[(b + 1) * k + j] - lo;
            a[j + 1] = a[j] + n;
            v[j + 1] = v[j] + sl_k_ooc_gather_span(lo, n);
        }
        r->h_vrows[b] = v[k];
    }
    if (!(r->d_tables = sl_task_device_alloc(r->t, (size_t)bytes))) {
        free(h);
        return SL_ENOMEM;
    }
    cudaError_t e = cudaMemcpyAsync(r->d_tables, h, (size_t)bytes, cudaMemcpyHostToDevice, r->cs);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(r->cs); /* h is pageable and freed next */
    free(h);
    SL_TASK_CUDA_TRY(r->t, e, "uploading the bucket tables");
    r->d_src = (const void **)r->d_tables;
    r->d_cuts = r->d_tables + k * ncp;
    r->d_at = r->d_cuts + (nb + 1) * k;
    r->d_vat = r->d_at + nb * (k + 1);
    return SL_OK;
}

/* Splitters sampled from the sorted runs (when pass 1 found no cuts): *codes, P - 1 of
 * them. 0, or a failure recorded on the task. */
static int run_splitters(sl_task_t *t, const struct sl__ooc_runs *m, int64_t P, uint64_t **codes)
{
    *codes = malloc((size_t)P * sizeof **codes);
    void *scratch = sl_task_alloc(t, (size_t)sl__ooc_splitter_scratch_bytes(m, P, OVERSAMPLE));
    if (!*codes || !scratch) {
        free(*codes), sl_task_free(t, scratch);
        *codes = NULL;
        return scratch ? sl_task_fail(t, SL_ENOMEM, "out of memory") : SL_ENOMEM;
    }
    double t0 = now_ms();
    sl__ooc_splitters(m, P, OVERSAMPLE, *codes, scratch, sl__host_threads(16));
    sl_task_free(t, scratch);
    sl_task_phase_time(t, "ooc_cut_samples", now_ms() - t0);
    return SL_OK;
}

int sl__ooc_pass1_cuts(const struct sl__ooc_sorted *st, int64_t R)
{
    return st->n_codes > 0 && st->split_rows == R &&
           st->n_codes == bucket_count(st->n, R) - 1 + (st->graded ? 4 : 0);
}

/* Narrow runs: buckets whose rows span more than NARROW_WINDOW top-16 code values (few
 * buckets over a wide key range, or a bucket across a gap in the keys) cut again at the
 * codes (t0 + i NARROW_WINDOW) << 16, empty pieces dropped. *cuts ((nb + 1) x k) is
 * replaced when any is cut. *tops_io: each bucket's lowest and highest top value (2 x
 * nb), given (pass 1's, sl__ooc_bucket_cuts) or NULL: then searched in the tables; on
 * return those of the buckets in *cuts, searched again where any was cut, or NULL when
 * they were neither given nor wanted (keep = 0). SL_OK or a failure recorded on the task
 * (*tops_io then freed and NULL). */
static int narrow_windows(sl_task_t *t, const struct sl__ooc_runs *m, int64_t **cuts_io,
                          int64_t *nb_io, int64_t **tops_io, int keep)
{
    const int64_t k = m->n_runs, nb = *nb_io, *cuts = *cuts_io;
    int64_t extra = 0, *tops = *tops_io;
    *tops_io = NULL;
    if (!tops) {
        if (!(tops = malloc((size_t)(2 * nb + 1) * sizeof *tops)))
            return sl_task_fail(t, SL_ENOMEM, "out of memory");
        sl__ooc_narrow_tops(m, cuts, nb, tops, sl__host_threads(16));
    }
    for (int64_t b = 0; b < nb; b++)
        if (tops[2 * b + 1] - tops[2 * b] + 1 > NARROW_WINDOW)
            extra += (tops[2 * b + 1] - tops[2 * b]) / NARROW_WINDOW;
    int64_t *out = extra ? malloc((size_t)((nb + extra + 1) * k) * sizeof *out) : NULL;
    if (extra == 0 || !out) {
        if (extra == 0 && keep)
            *tops_io = tops;
        else
            free(tops);
        return extra == 0 ? SL_OK : sl_task_fail(t, SL_ENOMEM, "out of memory");
    }
    int64_t n = 0; /* buckets in out */
    memcpy(out, cuts, (size_t)k * sizeof *out);
    for (int64_t b = 0; b < nb; b++) {
        int64_t lo = tops[2 * b], hi = tops[2 * b + 1];
        for (int64_t c = lo + NARROW_WINDOW; hi >= 0 && c <= hi; c += NARROW_WINDOW) {
            int64_t *row = out + (n + 1) * k, rows = 0;
            for (int64_t j = 0; j < k; j++) { /* rows of run j in the bucket below code c << 16 */
                int64_t a = cuts[b * k + j], e = cuts[(b + 1) * k + j];
                while (a < e) {
                    int64_t mid = a + (e - a) / 2;
                    if ((int64_t)(sl__ooc_code(m, j, mid) >> 16) < c)
                        a = mid + 1;
                    else
                        e = mid;
                }
                row[j] = a;
                rows += a - out[n * k + j];
            }
            n += rows > 0; /* an empty piece: its cuts are overwritten */
        }
        memcpy(out + (n + 1) * k, cuts + (b + 1) * k, (size_t)k * sizeof *out);
        int64_t rows = 0;
        for (int64_t j = 0; j < k; j++)
            rows += out[(n + 1) * k + j] - out[n * k + j];
        n += rows > 0;
    }
    free(tops);
    free(*cuts_io);
    *cuts_io = out;
    *nb_io = n;
    if (keep) { /* the pieces' windows: searched in the tables (few buckets are cut) */
        if (!(tops = malloc((size_t)(2 * n + 1) * sizeof *tops)))
            return sl_task_fail(t, SL_ENOMEM, "out of memory");
        sl__ooc_narrow_tops(m, out, n, tops, sl__host_threads(16));
        *tops_io = tops;
    }
    return SL_OK;
}

/* Narrow runs: each bucket's lowest and highest top value (2 x nb) from pass 1's values
 * beside its cuts (sl__ooc_bucket_tops). NULL after failing the task. */
static int64_t *pass1_tops(sl_task_t *t, const struct sl__ooc_sorted *so, const int64_t *cuts,
                           const int64_t *bx, int64_t nb)
{
    int64_t *tops = malloc((size_t)(2 * nb + 1) * sizeof *tops);
    if (!tops) {
        sl_task_fail(t, SL_ENOMEM, "out of memory");
        return NULL;
    }
    sl__ooc_bucket_tops(&so->runs, so->split_tops, so->n_codes, cuts, bx, nb, tops);
    return tops;
}

int64_t *sl__ooc_bucket_cuts(sl_task_t *t, const struct sl__ooc_sorted *so, int64_t R,
                             int64_t *nb_out, int64_t **tops_out)
{
    const struct sl__ooc_runs *m = &so->runs;
    const int pre = sl__ooc_pass1_cuts(so, R);
    /* P ranges between splitters (pass 1's: graded ones are four more) */
    const int64_t n = so->n, k = m->n_runs, P = pre ? so->n_codes + 1 : bucket_count(n, R);
    int64_t cap = P + n / R + 2, nb = 0; /* pieces: sum of ceil(rows / R) <= P + n / R */
    /* the splits of up to `blk` splitters at a time (at most 2^22 words, at least one) */
    int64_t blk = ((int64_t)1 << 22) / (k > 0 ? k : 1);
    if (blk > P - 1)
        blk = P - 1;
    if (blk < 1)
        blk = 1;
    if (tops_out)
        *tops_out = NULL;
    /* narrow runs: each cut's boundary of pass 1 (pass1_tops), where it found the tops */
    const int gtops = pre && m->narrow && so->split_tops;
    int64_t *cuts = calloc((size_t)((cap + 1) * k), sizeof *cuts);
    int64_t *splits = malloc((size_t)(blk * k + 1) * sizeof *splits);
    int64_t *bx = gtops ? malloc((size_t)(cap + 1) * sizeof *bx) : NULL;
    uint64_t *codes = NULL;
    if (!cuts || !splits || (gtops && !bx)) {
        free(cuts), free(splits), free(bx);
        sl_task_fail(t, SL_ENOMEM, "out of memory");
        return NULL;
    }
    if (!pre && run_splitters(t, m, P, &codes) < 0) {
        free(cuts), free(splits);
        return NULL;
    }
    if (bx)
        bx[0] = 0;
    const int threads = sl__host_threads(16); /* the CPU workers wait meanwhile */
    for (int64_t i = 1; i <= P; i++) { /* cuts[0] = 0 */
        const int64_t *next = m->rows; /* the last cut */
        if (i < P && pre) { /* pass 1's: run j's split at splitter i - 1 */
            for (int64_t j = 0; j < k; j++)
                splits[j] = so->split[j * so->n_codes + i - 1];
            next = splits;
        } else if (i < P) {
            if ((i - 1) % blk == 0) /* each block's searches start at row 0 */
                sl__ooc_split_below_all(m, codes + i - 1, P - i < blk ? P - i : blk, splits,
                                        threads);
            next = splits + ((i - 1) % blk) * k;
        }
        int64_t off = 0, rows = 0;
        for (int64_t j = 0; j < k; j++) {
            off += cuts[nb * k + j];
            rows += next[j] - cuts[nb * k + j];
        }
        if (rows == 0)
            continue; /* equal splitters */
        int64_t pieces = (rows + R - 1) / R;
        for (int64_t q = 1; q < pieces; q++, nb++) {
            sl__ooc_corank(m, off + rows * q / pieces, cuts + (nb + 1) * k);
            if (bx)
                bx[nb + 1] = -1; /* at exact ranks */
        }
        memcpy(cuts + (nb + 1) * k, next, (size_t)k * sizeof *next);
        if (bx)
            bx[nb + 1] = i; /* split i - 1, or the end (i = P = n_codes + 1) */
        nb++;
    }
    free(splits), free(codes);
    int64_t *tops = NULL;
    if (bx) {
        tops = pass1_tops(t, so, cuts, bx, nb);
        free(bx);
        int64_t how = 0; /* option debug_ooc_narrow_tops: 2 check */
        sl_task_option_int(t, "debug_ooc_narrow_tops", &how);
        int64_t *host = tops && how == 2 ? malloc((size_t)(2 * nb + 1) * sizeof *host) : NULL;
        if (host) {
            sl__ooc_narrow_tops(m, cuts, nb, host, sl__host_threads(16));
            for (int64_t b = 0; b < 2 * nb; b++)
                if (host[b] != tops[b]) {
                    sl_task_fail(t, SL_EINTERNAL, "narrow runs: bucket %lld's %s top value "
                                 "%lld from pass 1, %lld in the tables", (long long)(b / 2),
                                 b % 2 ? "highest" : "lowest", (long long)tops[b],
                                 (long long)host[b]);
                    free(host), free(tops), free(cuts);
                    return NULL;
                }
            free(host);
        } else if (tops && how == 2) {
            free(tops);
            tops = NULL;
            sl_task_fail(t, SL_ENOMEM, "out of memory");
        }
        if (!tops) {
            free(cuts);
            return NULL;
        }
    }
    /* pass 1's tops are kept for pass 2 (tops_out); searched ones only where they were
     * (debug_ooc_narrow_tops=host: twice, as before) */
    if (m->narrow && narrow_windows(t, m, &cuts, &nb, &tops, tops != NULL) < 0) {
        free(cuts);
        return NULL;
    }
    if (tops_out)
        *tops_out = tops;
    else
        free(tops);
    *nb_out = nb;
    return cuts;
}

/* The plan of pass 2 from the runs: buckets of at most R rows, the runs' columns. */
static int plan_buckets(const struct sl__ooc_sorted *st, int64_t R, int64_t nb,
                        enum sl__ooc_gather gather, int64_t budget, struct plan *p)
{
    const struct sl__ooc_runs *m = &st->runs;
    memset(p, 0, sizeof *p);
    p->n_cols = m->n_cols;
    p->kc = m->key_col;
    p->desc = m->desc;
    p->np = m->n_cols - 1;
    p->pc = -1;
    int64_t row_bytes = 0;
    for (int c = 0; c < m->n_cols; c++) {
        p->width[c] = m->width[c];
        row_bytes += m->width[c];
        if (c != p->kc)
            p->pc = c;
    }
    p->kw = p->width[p->kc];
    p->vb = p->np == 0 ? 0 : p->np == 1 ? p->width[p->pc] : 4;
    p->slot_row = 2 * row_bytes + (p->np >= 2 ? 8 : 0);
    p->packed = m->packed;
    p->narrow = m->narrow;
    p->n = st->n;
    p->R = R;
    p->n_runs = nb;
    if (!plan_temp(p, R))
        return 0;
    int64_t sets = nb > 1 ? 2 : 1;
    int64_t tables = gather == SL__OOC_GATHER_KERNEL
                         ? table_bytes(m->n_runs, m->packed ? 1 : m->n_cols, nb)
                     : m->narrow ? narrow_table_bytes(m->n_runs, nb)
                                 : 0;
    return sets * R * p->slot_row + (int64_t)p->temp + tables + 2 * MIB <= budget - SLACK;
}

/* 1 if buckets of r rows fit `budget` bytes of GPU memory (with the most buckets that
 * sl__ooc_bucket_cuts may cut). */
static int buckets_fit(const struct sl__ooc_sorted *st, int64_t r, enum sl__ooc_gather gather,
                       int64_t budget)
{
    struct plan p;
    int64_t nb_max = bucket_count(st->n, r) + 4 + st->n / r + 2; /* 4: graded */
    if (st->runs.narrow) /* narrow_windows' pieces: at most 65,536 / NARROW_WINDOW + 1 more
                            than the buckets (each adds (its top values - 1) / NARROW_WINDOW) */
        nb_max += SL__OOC_NARROW_TOP / NARROW_WINDOW + 1;
    return plan_buckets(st, r, nb_max, gather, budget, &p);
}

#define BUCKET_STEP ((int64_t)1 << 16)

/* Pass 2's bucket rows under `budget`: the most rows, in steps of BUCKET_STEP, that fit
 * and leave at least PIPE_RUNS buckets, when that is more than the runs' R (whose size
 * pass 1's buffers limited: 2^21 rows, 128 runs, for 2^28 pairs at 1/16, where pass 2
 * fits 3 x 2^20 and cuts 114 buckets instead of 171, each one batched copy call of 2
 * copies a run, the host enqueueing them at ~1.1 us a copy: 47 ms of a 54 ms merge, H100
 * 2026-11-27). Else R, halved until it fits; 0 when nothing of SL__OOC_MIN_RUN rows does.
 * Option debug_ooc_run_buckets keeps the runs' size (A/B runs). */
static int64_t merge_rows_under(sl_task_t *t, const struct sl__ooc_sorted *st, int64_t R,
                                enum sl__ooc_gather gather, int64_t budget)
{
    int64_t cap = SL__OOC_MIN_RUN, old = 0;
    while (cap * PIPE_RUNS < st->n)
        cap *= 2;
    sl_task_option_int(t, "debug_ooc_run_buckets", &old);
    int64_t lo = R / BUCKET_STEP + 1, hi = cap / BUCKET_STEP; /* multiples of the step */
    if (!old && lo <= hi && buckets_fit(st, lo * BUCKET_STEP, gather, budget)) {
        while (lo < hi) { /* the largest multiple that fits */
            int64_t mid = lo + (hi - lo + 1) / 2;
            if (buckets_fit(st, mid * BUCKET_STEP, gather, budget))
                lo = mid;
            else
                hi = mid - 1;
        }
        return lo * BUCKET_STEP;
    }
    for (int64_t r = R; r >= SL__OOC_MIN_RUN; r /= 2)
        if (buckets_fit(st, r, gather, budget))
            return r;
    return 0;
}

int64_t sl__ooc_merge_rows(sl_task_t *t, const struct sl__ooc_sorted *st, int64_t R,
                           enum sl__ooc_gather gather)
{
    int64_t budget = sl_task_device_budget(t);
    /* pass 1's cuts were made for buckets of split_rows: those, where they fit */
    if (st->n_codes > 0 && st->split_rows > 0 && buckets_fit(st, st->split_rows, gather, budget))
        return st->split_rows;
    return merge_rows_under(t, st, R, gather, budget);
}

int sl__ooc_runs_merge(sl_task_t *t, struct sl__ooc_sorted *st, const int64_t *cuts, int64_t nb,
                       const int64_t *tops, int64_t R, enum sl__ooc_gather gather,
                       void *const *dst, int (*ready)(sl_task_t *, void *, int64_t), void *arg)
{
    struct runner r;
    memset(&r, 0, sizeof r);
    r.t = t;
    r.st = st;
    r.cuts = cuts;
    r.gather = gather;
    if (!plan_buckets(st, R, nb, gather, sl_task_device_budget(t), &r.p))
        return sl_task_fail(t, SL_EBUDGET, "out-of-core sort on the GPU: the budget left holds "
                            "no bucket of %lld rows", (long long)R);
    const int64_t k = st->runs.n_runs, nc = st->runs.n_cols;
    void *side[2];
    int rc = streams_open(&r, side);
    if (rc < 0)
        return rc;
    cudaError_t e;
    rc = alloc_all(&r);
    if (rc >= 0 && (rc = tables_open(&r, nb, tops)) >= 0 && (rc = order(t, r.cs, r.h2d)) >= 0)
        rc = order(t, r.cs, r.d2h);
    int64_t told = 0; /* buckets handed to `ready` so far */
    if (rc >= 0)
        clock_start(&r, &r.clock);
    for (int64_t b = 0; b < nb && rc >= 0; b++) {
        if (sl_task_cancelled(t)) {
            rc = SL_ECANCELED;
            break;
        }
        if (b >= 2 && ready) { /* bucket b - 2 is down (its set is next): hand it over */
            if ((e = SL_TASK_CUDA_CALL(cudaEventSynchronize(r.s[b & 1].down))) != cudaSuccess) {
                rc = SL_TASK_CUDA_FAIL(t, e, "waiting for a bucket");
                break;
            }
            if ((rc = ready(t, arg, told++)) < 0)
                break;
        }
        int64_t rows = 0;
        for (int64_t j = 0; j < k; j++)
            rows += cuts[(b + 1) * k + j] - cuts[b * k + j];
        rc = one_run(&r, b, rows, dst + b * nc);
    }
    if (rc >= 0)
        clock_enqueued(&r, &r.clock);
    e = streams_close(&r, side);
    clock_report(&r, &r.clock, rc >= 0 && e == cudaSuccess, "ooc_merge_up", "ooc_merge_down",
                 "ooc_merge_enqueue", NULL, "ooc_merge_down_wait", NULL);
    free_all(&r);
    if (rc >= 0 && e != cudaSuccess)
        rc = SL_TASK_CUDA_FAIL(t, e, "sorting buckets");
    while (rc >= 0 && ready && told < nb)
        rc = ready(t, arg, told++);
    return rc;
}

/* The merged run's columns (pinned, from the pool the runs came from) and each bucket's
 * place in them: dst[b * n_cols + c]. */
static int merged_alloc(sl_task_t *t, const struct sl__ooc_sorted *st, const int64_t *cuts,
                        int64_t nb, void **col, void **dst)
{
    const int64_t k = st->runs.n_runs, nc = st->runs.n_cols;
    for (int c = 0; c < nc; c++)
        if (!(col[c] = sl__task_pinned_alloc(t, st->n * st->runs.width[c])))
            return SL_EBUDGET;
    int64_t row0 = 0;
    for (int64_t b = 0; b < nb; b++) {
        for (int c = 0; c < nc; c++)
            dst[b * nc + c] = (char *)col[c] + row0 * st->runs.width[c];
        for (int64_t j = 0; j < k; j++)
            row0 += cuts[(b + 1) * k + j] - cuts[b * k + j];
    }
    return SL_OK;
}

int sl__ooc_runs_merge_all(sl_task_t *t, struct sl__ooc_sorted *st)
{
    const int64_t k = st->runs.n_runs, nc = st->runs.n_cols;
    int64_t R = 0, row_bytes = 0;
    for (int64_t j = 0; j < k; j++)
        R = st->rows[j] > R ? st->rows[j] : R;
    for (int c = 0; c < nc; c++)
        row_bytes += st->runs.width[c];
    /* pinned classes are powers of two: up to twice the bytes */
    enum sl__ooc_gather gather = sl__ooc_gather_of(t, &st->runs);
    if (k < 2 || st->runs.packed || !sl__task_host_room(t, 2 * st->n * row_bytes) ||
        !(R = sl__ooc_merge_rows(t, st, R, gather)))
        return 0;
    int64_t nb = 0;
    int64_t *tops = NULL;
    int64_t *cuts = sl__ooc_bucket_cuts(t, st, R, &nb, &tops);
    void **dst = calloc((size_t)(nb * nc + 1), sizeof *dst);
    void *col[SL__OOC_MAX_COLS] = {NULL};
    if (!cuts || !dst) {
        free(cuts), free(dst), free(tops);
        return cuts ? sl_task_fail(t, SL_ENOMEM, "out of memory") : SL_ENOMEM;
    }
    int rc = merged_alloc(t, st, cuts, nb, col, dst);
    if (rc >= 0)
        rc = sl__ooc_runs_merge(t, st, cuts, nb, tops, R, gather, dst, NULL, NULL);
    free(cuts), free(dst), free(tops);
    /* On failure the merged columns go back; else the runs do, and the merged run
     * takes their place. */
    for (int64_t i = 0; i < (rc < 0 ? nc : k * nc); i++) {
        void **p = rc < 0 ? &col[i] : &st->cols[i];
        sl__pinned_owner_free(&st->owner, *p, rc < 0 ? st->n * st->runs.width[i] : st->bytes[i]);
        *p = NULL;
    }
    if (rc < 0)
        return rc;
    for (int c = 0; c < nc; c++) {
        st->cols[c] = col[c];
        st->bytes[c] = st->n * st->runs.width[c];
    }
    st->rows[0] = st->n;
    st->runs.n_runs = 1;
    presplit_free(st); /* the splits were the runs' */
    return 1;
}
