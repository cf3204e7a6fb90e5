/* Out-of-core sort-merge join on a GPU (issue 8; paper-000: sort GPU-sized chunks,
 * merge the runs on CPU threads, join by key ranges): the join's CUDA finalize for
 * algo=sortmerge when the in-GPU join does not fit the GPU memory budget.
 *
 * finalize (GPU worker), by default (option debug_smj_ooc=auto, since 2026-11-27, issue
 *   23): key ranges of about equal rows of both sides together are cut at splitter codes
 *   sampled from both sides' input (common/ooc_runs_cuda.c, sl__ooc_inputs_splitters);
 *   each side is sorted in GPU-budget-sized runs into pinned host memory (pass 1: upload,
 *   CUB sort, download, overlapped through two buffer sets and three streams), each run's
 *   cuts at the splitters found on the GPU as it is sorted (since session 19, option
 *   debug_smj_pass1=auto: side 0's runs queued before the splitters are sampled and its
 *   cuts searched in its runs after, side 1's queued before side 0's end, so the link
 *   does not idle between them); then pass 2 merge-joins the
 *   ranges on the GPU (below, "the merge-join of the ranges on the GPU"): a range's
 *   slices of every run of both sides go up, each side is sorted there, joined, and its
 *   result goes down into pinned result memory. The input crosses the link up twice and
 *   down once, plus the result.
 * With debug_smj_ooc=runs (before 2026-11-27; A/B runs), each side's runs are sorted, left
 *   side first, each with the whole budget; then, where the budgets hold it, the side's
 *   runs are merged into one on the GPU (sl__ooc_runs_merge_all: buckets re-sorted, as
 *   the sort's GPU merge), so that a range of it is already in order.
 *   Where both sides are then one run each, the finalize merge-joins key ranges of
 *   them on the GPU itself, results into pinned result memory. Otherwise (or with
 *   debug_smj_cpu_join)
 *   it spawns one task per key range on the CPU workers: task i takes the keys in
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
 * balance, not correctness; a range too large for the GPU budget is joined on the
 * finalize's thread from the pinned runs. The output comes in key order, range by
 * range, either way. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "join_cuda_int.h"
#include "common/ooc_runs.h"
#include "sluice_k/columns.h"
#include "sluice_k/join_smj.h"
#include "sluice_k/ooc_pack.h"
#include "sluice_k/sort.h"

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
    /* buckets (smj_buckets): range i holds key codes [codes[i], codes[i + 1]) (range 0
     * from the start, the last one to the end; n_codes + 1 ranges), side s's rows
     * [cut[s][i k + j], cut[s][(i + 1) k + j]) of its run j (k runs); hint: rows of side s
     * (hint_out: result rows) a range's buffers are first sized for */
    uint64_t *codes;
    int64_t n_codes, *cut[2], hint[2], hint_out;
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
    free(m->codes);
    free(m->cut[0]);
    free(m->cut[1]);
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

/* ---------------- the merge-join of the ranges on the GPU ---------------- */

static int join_codes(sl_task_t *t, const struct join_state *st, uint64_t lo, uint64_t hi,
                      int first, int last, struct range_out *keep);

/* The finalize joins key ranges of both sides on the GPU: range i's slices of both sides
 * go up (h2d stream) into buffer set i & 1, a side of several runs is sorted there
 * (sl__ooc_gpu_sort: its slices are each sorted, not their concatenation),
 * sl_k_smj_count gives the range's result rows (the host waits for that count),
 * sl_k_smj_write the matching positions (left = S, right = R), a gather per output
 * column, and the columns go down (d2h stream) into a batch in pinned result memory.
 * Ranges hold no keys of both signs (cut at the code of key 0: the kernels compare keys
 * as unsigned). A range whose slices or result would not fit the budget is joined on
 * this thread as the range tasks do.
 *
 * Two ways to get there (option debug_smj_ooc):
 * - auto (buckets, since 2026-11-27): splitter codes sampled from both sides' input
 *   together cut the ranges (about equal rows of both sides), each run's cuts are found
 *   on the GPU while pass 1 sorts it, and pass 2 is this join: the input crosses the
 *   link up twice and down once, plus the result. Range i + 1's upload, sorts and count,
 *   and range i + 2's upload where no buffer must grow, are enqueued before the host
 *   waits for range i's count, so the task stream sorts while the host reads counts and
 *   the h2d stream never waits for the host (debug_smj_ooc=noahead: range i + 2's upload
 *   after range i's write; serial: as in session 17, range i + 1's sorts and count after
 *   range i's gathers), and the link carries uploads and downloads at once.
 * - runs: each side's runs were merged into one on the GPU first (both sides one run),
 *   ranges cut at the larger side's key codes, at most GPU_RANGE_ROWS of its rows each;
 *   range i goes up while range i - 1 is joined (as before 2026-11-27, A/B runs).
 * Option debug_smj_cpu_join keeps the range tasks on the CPU (A/B runs). */
#define GPU_RANGE_ROWS ((int64_t)1 << 20)

/* A range's job in a buffer set: range (< 0: -1 - the range, joined on the host), its rows
 * of each side, the merge-join's temp bytes, busy when it went up. */
struct gr_job {
    int64_t range, n[2];
    size_t temp_need;
    int busy;
    int64_t top0[2], tops[2];           /* narrow side s: the range's window of top-16
                                           values (its key codes' [top0, top0 + tops)) */
};

struct gr_set {
    void *in[2][SL__OOC_MAX_COLS];      /* the range's slices as they came up */
    void *srt[2][SL__OOC_MAX_COLS];     /* sorted (a side of several runs) */
    uint32_t *ids[2];                   /* the sort's row ids (three columns or more) */
    int64_t cap_in[2];
    void *temp;                         /* the merge-join's count and write */
    size_t temp_cap;
    void *stemp;                        /* the sort's */
    int64_t stemp_cap;
    uint32_t *win[2];                   /* narrow side s: the range's window of every
                                           run's table (runs x tops, pitch tops) */
    int64_t win_cap[2];                 /* bytes */
    uint32_t *pos[2];                   /* S (left) and R (right) positions */
    void *out[2 * JOIN_MAX_COLS];
    int64_t cap_out;
    unsigned long long *d_count, *h_count;
    void **h_addr;                      /* pinned: d_count (the count's kernel reads it) */
    cudaEvent_t e_up, e_cnt, e_done, e_d2h, e_grow;
    cudaEvent_t e_sorted;               /* the range's sorts done: with both sides sorted,
                                           the last reads of its input buffers */
    struct gr_job j;                    /* the range the set holds */
    struct gr_job pend;                 /* ahead: the next range, uploaded before j's
                                           write (gr_run takes it after gr_end) */
    int pending;
};

/* Pass 2's trace (option debug_smj_ooc_trace): timing events per range, on the stream
 * named: upload start (after its waits) and end (h2d), sorts and count (task stream),
 * write and gathers (task stream), download start and end (d2h). */
enum { TR_U0, TR_U1, TR_S0, TR_S1, TR_W0, TR_W1, TR_D0, TR_D1, TR_N };

struct gr {
    sl_task_t *t;
    struct join_state *st;
    struct smj *m;
    cudaStream_t cs, h2d, d2h;
    struct gr_set g[2];
    uint64_t *codes;                    /* range i: codes [codes[i], codes[i + 1]) */
    int64_t n_ranges, gpu_ranges, cpu_ranges, pageable; /* pageable: results not pinned */
    int64_t ahead_ranges;               /* uploaded ahead (gr_run) */
    /* buckets: range i of side s is rows [cut[s][i k + j], cut[s][(i + 1) k + j]) of its
     * run j (k runs), and a side of several runs is sorted on the GPU (sort[s]); else
     * NULL: one run each, searched by code */
    const int64_t *cut[2];
    int sort[2];
    int serial;                         /* option debug_smj_ooc=serial (gr_run) */
    int ahead;                          /* debug_smj_ooc=auto, not noahead (gr_run) */
    int all_bits;                       /* option debug_smj_sort_all_bits (gr_bits) */
    int count_copy;                     /* option debug_smj_count_copy (gr_compute) */
    /* narrow runs (option debug_smj_narrow): side s's slices go up as 6-byte rows and are
     * decoded on the GPU (sl_k_ooc_narrow_decode) before its sort; d_cut[s]: its cuts
     * (m->cut[s]) and d_at[s]: range i's slice starts in the range's rows (n_ranges x
     * runs), both uploaded once in gr_open */
    int narrow[2];
    int64_t *d_cut[2], *d_at[2];
    int64_t top_lo[2], top_hi[2];       /* narrow side s: the lowest and highest top-16
                                           value of its rows (gr_open): a range's window
                                           spans no more (gr_window) */
    int64_t win_hint[2];                /* narrow side s: the largest window (bytes) of a
                                           range with rows of both sides (gr_open): a set's
                                           window buffer grows to it at once, so that later
                                           ranges need not wait to upload ahead */
    int64_t hint[2], hint_out;          /* capacities planned for a range, when they fit */
    void **cp_dst, **cp_src;
    size_t *cp_size;
    unsigned long long *h_counts;       /* pinned: each set's count, then its d_count */
    cudaEvent_t clk[3];                 /* timing: the start (task stream), the last
                                           upload's end, the last download's end */
    cudaEvent_t *tr;                    /* debug_smj_ooc_trace: TR_N x n_ranges, else NULL */
    double host_wait, host_up, host_end; /* trace: host ms waiting for counts, in gr_upload,
                                            in gr_end besides that wait */
};

/* Trace event `e` of range i on stream s (debug_smj_ooc_trace; advice: a failed call
 * only leaves the event unrecorded, gr_trace_report skips the range). */
static void gr_mark(struct gr *r, int64_t i, int e, cudaStream_t s)
{
    if (r->tr && r->tr[i * TR_N + e] && cudaEventRecord(r->tr[i * TR_N + e], s) != cudaSuccess)
        cudaGetLastError();
}

static int gr_grow(sl_task_t *t, void **p, int64_t bytes, int *grew)
{
    sl_task_device_free(t, *p);
    *p = NULL;
    *grew = 1;
    return (*p = sl_task_device_alloc(t, (size_t)(bytes > 0 ? bytes : 1))) ? SL_OK : SL_ENOMEM;
}

/* Temp bytes of the GPU sort of n rows of side s's runs: CUB's for the runs' own sort,
 * or for packed runs (ooc_merge.h: an int32 key and one 4-byte column as 8-byte rows)
 * CUB's for the rows' high halves, 256-aligned, then the other buffer of n rows. < 0
 * after failing the task. */
static int64_t sort_temp(sl_task_t *t, const struct sl__ooc_runs *runs, int64_t n)
{
    if (!runs->packed)
        return sl__ooc_gpu_sort_temp(t, runs, n);
    size_t temp = 0;
    SL_TASK_CUDA_TRY(t, sl_k_ooc_sort_packed(NULL, &temp, NULL, NULL, n, NULL, 0),
                     "sort temp size");
    return (((int64_t)temp + 255) & ~(int64_t)255) + n * 8;
}

/* Sorts n rows of side s in set g (in -> srt) on the task stream: on the low `bits` bits
 * of the key codes (all the range's codes share the higher ones; CUB's order of signed
 * keys is that of the codes), or the runs' own sort (all bits; row ids for two payloads
 * or more); packed rows sorted by their high half's low bits and unpacked into the key
 * and the other column. */
static int gr_sort(struct gr *r, struct gr_set *g, int s, int64_t n, int bits)
{
    sl_task_t *t = r->t;
    const struct sl__ooc_runs *runs = &r->m->side[s]->runs;
    const int kc = runs->key_col, kw = runs->width[kc];
    if (!runs->packed && (runs->n_cols > 2 || runs->desc || bits >= 8 * kw))
        return sl__ooc_gpu_sort(t, runs, g->in[s], g->srt[s], n, g->stemp, (size_t)g->stemp_cap,
                                g->ids[s], r->cs);
    size_t temp = (size_t)g->stemp_cap;
    if (!runs->packed) {
        const int pc = runs->n_cols == 2 ? 1 - kc : -1, vb = pc >= 0 ? runs->width[pc] : 0;
        SL_TASK_CUDA_TRY(t,
                         sl_k_sort_pairs_bits(g->stemp, &temp, kw, bits, g->in[s][kc],
                                              g->srt[s][kc], vb ? g->in[s][pc] : NULL,
                                              vb ? g->srt[s][pc] : NULL, vb, n, r->cs),
                         "sorting a range");
        return SL_OK;
    }
    SL_TASK_CUDA_TRY(t, sl_k_ooc_sort_packed(NULL, &temp, NULL, NULL, n, NULL, 0),
                     "sort temp size");
    int64_t ta = ((int64_t)temp + 255) & ~(int64_t)255;
    uint64_t *rows = g->in[s][kc], *alt = (uint64_t *)((char *)g->stemp + ta);
    int in_alt = 0;
    if (ta + n * 8 > g->stemp_cap)
        return sl_task_fail(t, SL_EINTERNAL, "out-of-core sort-merge join: sort temp too small");
    if (r->narrow[s]) { /* 6-byte rows in in[kc]: decoded into the other buffer, which the
                           sort then starts from (in[kc] its other half) */
        const int64_t k = runs->n_runs, i = g->j.range;
        SL_TASK_CUDA_TRY(t,
                         sl_k_ooc_narrow_decode(rows, n, g->win[s], g->j.tops[s], g->j.top0[s],
                                                g->j.tops[s], r->d_cut[s] + i * k,
                                                r->d_at[s] + i * k, k, alt, r->cs),
                         "decoding a range");
        uint64_t *swap = rows;
        rows = alt;
        alt = swap;
    }
    SL_TASK_CUDA_TRY(t,
                     sl_k_ooc_sort_packed_bits(g->stemp, &temp, rows, alt, n,
                                               bits < 32 ? bits : 32, &in_alt, r->cs),
                     "sorting a range");
    SL_TASK_CUDA_TRY(t,
                     sl_k_ooc_unpack(in_alt ? alt : rows, runs->desc, n, g->srt[s][kc],
                                     g->srt[s][1 - kc], r->cs),
                     "unpacking a range");
    return SL_OK;
}

/* Bits of the key codes that differ within range i (codes [codes[i], codes[i + 1]), the
 * first from 0, the last to the largest code of kw-byte keys): its sorts need no others.
 * All of them with option debug_smj_sort_all_bits. */
static int gr_bits(const struct gr *r, int64_t i, int kw)
{
    const uint64_t top = kw == 4 ? 0xffffffffull : UINT64_MAX;
    uint64_t lo = r->codes[i], hi = i + 1 < r->n_ranges ? r->codes[i + 1] - 1 : top;
    if (r->all_bits || hi < lo)
        return 8 * kw;
    if (hi == lo)
        return 1;
    int b = 64 - __builtin_clzll(lo ^ hi);
    return b < 8 * kw ? b : 8 * kw;
}

/* Rows of side s below code v (the one run). */
static int64_t gr_below(const struct gr *r, int s, int64_t i, int end)
{
    const struct sl__ooc_runs *runs = &r->m->side[s]->runs;
    if (i == 0 && !end)
        return 0;
    if (i == r->n_ranges)
        return runs->rows[0];
    int64_t at = 0;
    sl__ooc_split_below(runs, r->codes[i], &at);
    return at;
}

/* Range i's slice of run j of side s: rows [*lo, return). */
static int64_t gr_slice(const struct gr *r, int s, int64_t i, int64_t j, int64_t *lo)
{
    if (!r->cut[s]) {
        *lo = gr_below(r, s, i, 0);
        return gr_below(r, s, i + 1, 1);
    }
    int64_t k = r->m->side[s]->runs.n_runs;
    *lo = r->cut[s][i * k + j];
    return r->cut[s][(i + 1) * k + j];
}

static int64_t gr_rows(const struct gr *r, int s, int64_t i)
{
    int64_t n = 0, lo;
    for (int64_t j = 0; j < r->m->side[s]->runs.n_runs; j++)
        n += gr_slice(r, s, i, j, &lo) - lo;
    return n;
}

/* A column of side s's range in set g, in key order. */
static void *gr_col(const struct gr *r, const struct gr_set *g, int s, int c)
{
    return r->sort[s] ? g->srt[s][c] : g->in[s][c];
}

/* Device bytes of n[s] input rows (where n[s] passes the set's capacity) and rows_out
 * result rows (where they pass its output capacity), beyond what set g holds. */
static int64_t gr_need(const struct gr *r, const struct gr_set *g, const int64_t n[2],
                       int64_t rows_out)
{
    int64_t need = 0, ow = 8;
    for (int s = 0; s < 2; s++) {
        const struct sl__ooc_runs *runs = &r->m->side[s]->runs;
        if (n[s] <= g->cap_in[s])
            continue;
        for (int c = 0; c < runs->n_cols; c++)
            need += n[s] * runs->width[c] * (r->sort[s] ? 2 : 1);
        if (r->sort[s] && sl__ooc_gpu_sort_ids(runs))
            need += n[s] * 8;
    }
    for (int c = 0; c < r->st->d->n_out; c++)
        ow += sl_type_width(r->st->d->out[c].type);
    if (rows_out > g->cap_out)
        need += rows_out * ow;
    return need;
}

#define GR_SLACK ((int64_t)4 << 20)

/* The merge-join's temp bytes (*need) and the larger side's sort temp (*stemp) for a
 * range of n[s] rows of side s. < 0 after failing the task. */
static int gr_temps(struct gr *r, const int64_t n[2], size_t *need, int64_t *stemp)
{
    sl_task_t *t = r->t;
    const struct smj *m = r->m;
    *need = 0;
    SL_TASK_CUDA_TRY(t,
                     m->side[0]->runs.width[0] == 8
                         ? sl_k_smj_count_k64(NULL, need, NULL, n[1], NULL, n[0],
                                              SL_K_JOIN_INNER, NULL, r->cs)
                         : sl_k_smj_count_k32(NULL, need, NULL, n[1], NULL, n[0],
                                              SL_K_JOIN_INNER, NULL, r->cs),
                     "merge-join temp size");
    *stemp = 0;
    for (int s = 0; s < 2; s++) {
        int64_t b = r->sort[s] ? sort_temp(t, &m->side[s]->runs, n[s]) : 0;
        if (b < 0)
            return (int)b;
        *stemp = b > *stemp ? b : *stemp;
    }
    return SL_OK;
}

/* Narrow side s: range i's window of top-16 values (from its key codes: ranges span at
 * most SL__OOC_NARROW_WINDOW, sl__ooc_narrow_codes; within the side's rows' top values,
 * so that a range at the edge of the keys, cut at a multiple of the window, takes the
 * values its rows have, not up to 2,048) into the job, *bytes the window of every run's
 * table takes. */
static int gr_window(struct gr *r, int64_t i, int s, struct gr_job *job, int64_t *bytes)
{
    const uint64_t lo = r->codes[i],
                   hi = i + 1 < r->n_ranges ? r->codes[i + 1] : (uint64_t)1 << 32;
    int64_t t0 = (int64_t)(lo >> 16), t1 = (int64_t)((hi - 1) >> 16);
    t0 = t0 > r->top_lo[s] ? t0 : r->top_lo[s];
    t1 = t1 < r->top_hi[s] ? t1 : r->top_hi[s];
    job->top0[s] = t0;
    job->tops[s] = t1 >= t0 ? t1 - t0 + 1 : 1; /* no rows of side s: never uploaded */
    if (hi <= lo || hi > (uint64_t)1 << 32 || job->tops[s] > SL__OOC_NARROW_WINDOW)
        return sl_task_fail(r->t, SL_EINTERNAL, "out-of-core sort-merge join: range %lld of "
                            "narrow runs spans %lld top values", (long long)i,
                            (long long)job->tops[s]);
    *bytes = r->m->side[s]->runs.n_runs * job->tops[s] * 4;
    return SL_OK;
}

/* Range i into set g: its slices up (h2d stream; they wait for the set's previous range's
 * last reads of the set's input buffers: its sorts where both sides are sorted, else its
 * gathers). A range too large for the budget left is marked for gr_end to join on the
 * host. With ahead (gr_run; option debug_smj_ooc=noahead: never), the set still holds the
 * range before, whose count, write and gathers are to come: range i goes into g->pend,
 * and only where both sides are sorted and no buffer of the set must grow; else nothing
 * is done and 1 is returned (the caller uploads it after that range's write, without
 * ahead). */
static int gr_upload(struct gr *r, struct gr_set *g, int64_t i, int ahead)
{
    sl_task_t *t = r->t;
    struct smj *m = r->m;
    int64_t n[2];
    for (int s = 0; s < 2; s++)
        n[s] = gr_rows(r, s, i);
    const int early_free = r->sort[0] && r->sort[1] && !r->serial;
    if (ahead && !early_free)
        return 1;
    struct gr_job *job = ahead ? &g->pend : &g->j;
    memset(job, 0, sizeof *job);
    job->range = i;
    if (n[0] == 0 || n[1] == 0)
        return SL_OK; /* no matches */
    int grew = 0, rc;
    size_t need = 0;
    int64_t stemp = 0;
    if ((rc = gr_temps(r, n, &need, &stemp)) < 0)
        return rc;
    int64_t win[2] = {0, 0}; /* narrow: window bytes (job's top0 and tops) */
    for (int s = 0; s < 2; s++)
        if (r->narrow[s] && (rc = gr_window(r, i, s, job, &win[s])) < 0)
            return rc;
    if (ahead && (n[0] > g->cap_in[0] || n[1] > g->cap_in[1] || need > g->temp_cap ||
                  stemp > g->stemp_cap || win[0] > g->win_cap[0] || win[1] > g->win_cap[1]))
        return 1; /* a buffer must grow: after the set's range before is written */
    /* grow to the planned capacity where that fits (rows, and temps for rows, of at
     * least the hint: a later range of a few more rows then need not grow them, nor wait
     * for the range before to upload ahead), else to the range's rows and temps */
    int64_t want[2], h[2], stemp_to = stemp;
    size_t temp_to = need;
    for (int s = 0; s < 2; s++) {
        want[s] = n[s] > g->cap_in[s] && r->hint[s] > n[s] ? r->hint[s] : n[s];
        h[s] = r->hint[s] > n[s] ? r->hint[s] : n[s];
    }
    if ((need > g->temp_cap || stemp > g->stemp_cap) && (h[0] != n[0] || h[1] != n[1]) &&
        (rc = gr_temps(r, h, &temp_to, &stemp_to)) < 0)
        return rc;
    temp_to = temp_to > need ? temp_to : need;
    stemp_to = stemp_to > stemp ? stemp_to : stemp;
    int64_t win_to[2], wextra = 0;
    for (int s = 0; s < 2; s++) {
        win_to[s] = win[s] > g->win_cap[s] && r->win_hint[s] > win[s] ? r->win_hint[s] : win[s];
        wextra += win[s] > g->win_cap[s] ? win_to[s] : 0;
    }
    int64_t extra = (need > g->temp_cap ? (int64_t)temp_to : 0) +
                    (stemp > g->stemp_cap ? stemp_to : 0) + wextra + GR_SLACK;
    if (gr_need(r, g, want, 0) + extra > sl_task_device_budget(t)) {
        memcpy(want, n, sizeof want);
        temp_to = need;
        stemp_to = stemp;
        wextra = 0;
        for (int s = 0; s < 2; s++) {
            win_to[s] = win[s];
            wextra += win[s] > g->win_cap[s] ? win[s] : 0;
        }
        extra = (need > g->temp_cap ? (int64_t)need : 0) + (stemp > g->stemp_cap ? stemp : 0) +
                wextra + GR_SLACK;
    }
    if (gr_need(r, g, want, 0) + extra > sl_task_device_budget(t)) {
        job->range = -1 - i; /* too large for what is left: gr_end joins it on the host */
        return SL_OK;
    }
    for (int s = 0; s < 2; s++) {
        const struct sl__ooc_runs *runs = &m->side[s]->runs;
        if (n[s] <= g->cap_in[s])
            continue;
        for (int c = 0; c < runs->n_cols; c++) {
            /* packed: the rows (8 bytes) in the key column's buffer, the other one unused */
            int64_t iw = !runs->packed ? runs->width[c] : c == runs->key_col ? 8 : 0;
            if ((iw > 0 && (rc = gr_grow(t, &g->in[s][c], want[s] * iw, &grew)) < 0) ||
                (r->sort[s] && (rc = gr_grow(t, &g->srt[s][c], want[s] * runs->width[c],
                                             &grew)) < 0))
                return rc;
        }
        if (r->sort[s] && sl__ooc_gpu_sort_ids(runs) &&
            (rc = gr_grow(t, (void **)&g->ids[s], want[s] * 8, &grew)) < 0)
            return rc;
        g->cap_in[s] = want[s];
    }
    if (need > g->temp_cap) {
        if ((rc = gr_grow(t, &g->temp, (int64_t)temp_to, &grew)) < 0)
            return rc;
        g->temp_cap = temp_to;
    }
    job->temp_need = need;
    for (int s = 0; s < 2; s++)
        if (win[s] > g->win_cap[s]) {
            if ((rc = gr_grow(t, (void **)&g->win[s], win_to[s], &grew)) < 0)
                return rc;
            g->win_cap[s] = win_to[s];
        }
    if (stemp > g->stemp_cap) {
        if ((rc = gr_grow(t, &g->stemp, stemp_to, &grew)) < 0)
            return rc;
        g->stemp_cap = stemp_to;
    }
    /* the set's previous range read its input buffers until its sorts (both sides sorted:
     * the count, write and gathers read the sorted copies), else until its gathers
     * (serial: until its gathers, as before) */
    SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(r->h2d, early_free ? g->e_sorted : g->e_done, 0),
                     "ordering a buffer set");
    if (grew) { /* memory from the task stream's allocator: the copies wait for it */
        SL_TASK_CUDA_TRY(t, cudaEventRecord(g->e_grow, r->cs), "cudaEventRecord");
        SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(r->h2d, g->e_grow, 0), "ordering streams");
    }
    size_t k = 0;
    for (int s = 0; s < 2; s++) {
        const struct sl__ooc_runs *runs = &m->side[s]->runs;
        int64_t at = 0, lo;
        for (int64_t j = 0; j < runs->n_runs; j++) {
            int64_t hi = gr_slice(r, s, i, j, &lo);
            if (runs->packed && hi > lo) { /* one copy of 8-byte rows (narrow: 6) */
                const int kc = runs->key_col;
                const int64_t w = r->narrow[s] ? 6 : 8;
                r->cp_dst[k] = (char *)g->in[s][kc] + at * w;
                r->cp_src[k] = (char *)runs->cols[j * runs->n_cols + kc] + lo * w;
                r->cp_size[k++] = (size_t)((hi - lo) * w);
            }
            for (int c = 0; c < runs->n_cols && hi > lo && !runs->packed; c++, k++) {
                r->cp_dst[k] = (char *)g->in[s][c] + at * runs->width[c];
                r->cp_src[k] = (char *)runs->cols[j * runs->n_cols + c] + lo * runs->width[c];
                r->cp_size[k] = (size_t)((hi - lo) * runs->width[c]);
            }
            at += hi > lo ? hi - lo : 0;
        }
    }
    gr_mark(r, i, TR_U0, r->h2d);
    if ((rc = sl__ooc_copy_batch(t, r->cp_dst, r->cp_src, r->cp_size, k, 1, r->h2d,
                                 "uploading a range")) < 0)
        return rc;
    for (int s = 0; s < 2; s++) { /* narrow: the range's window of every run's table */
        const struct sl__ooc_runs *runs = &m->side[s]->runs;
        if (r->narrow[s] && n[s] > 0)
            SL_TASK_CUDA_TRY(t,
                             cudaMemcpy2DAsync(g->win[s], (size_t)job->tops[s] * 4,
                                               runs->narrow_tables + job->top0[s],
                                               SL__OOC_NARROW_TABLE_BYTES,
                                               (size_t)job->tops[s] * 4, (size_t)runs->n_runs,
                                               cudaMemcpyHostToDevice, r->h2d),
                             "uploading a range's tables");
    }
    gr_mark(r, i, TR_U1, r->h2d);
    SL_TASK_CUDA_TRY(t, cudaEventRecord(g->e_up, r->h2d), "cudaEventRecord");
    job->n[0] = n[0];
    job->n[1] = n[1];
    job->busy = 1;
    return SL_OK;
}

/* The range in set g, once up: each side of several runs sorted, then its count
 * (enqueued; the host reads it in gr_end). */
static int gr_compute(struct gr *r, struct gr_set *g)
{
    sl_task_t *t = r->t;
    struct smj *m = r->m;
    if (!g->j.busy)
        return SL_OK;
    SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(r->cs, g->e_up, 0), "ordering the upload");
    gr_mark(r, g->j.range, TR_S0, r->cs);
    for (int s = 0; s < 2; s++) {
        int rc;
        if (r->sort[s] && (rc = gr_sort(r, g, s, g->j.n[s],
                                        gr_bits(r, g->j.range, m->side[s]->runs.width[0]))) < 0)
            return rc;
    }
    SL_TASK_CUDA_TRY(t, cudaEventRecord(g->e_sorted, r->cs), "cudaEventRecord");
    size_t tb = g->j.temp_need;
    SL_TASK_CUDA_TRY(t,
                     m->side[0]->runs.width[0] == 8
                         ? sl_k_smj_count_k64(g->temp, &tb, gr_col(r, g, 1, 0), g->j.n[1],
                                              gr_col(r, g, 0, 0), g->j.n[0], SL_K_JOIN_INNER,
                                              g->d_count, r->cs)
                         : sl_k_smj_count_k32(g->temp, &tb, gr_col(r, g, 1, 0), g->j.n[1],
                                              gr_col(r, g, 0, 0), g->j.n[0], SL_K_JOIN_INNER,
                                              g->d_count, r->cs),
                     "merge-join count");
    /* the count into pinned memory by a one-thread kernel (its address read from pinned
     * memory too): no copy to queue behind the results' downloads on a copy engine;
     * option debug_smj_count_copy: a copy on the task stream, as before */
    SL_TASK_CUDA_TRY(t,
                     r->count_copy
                         ? cudaMemcpyAsync(g->h_count, g->d_count, sizeof *g->h_count,
                                           cudaMemcpyDeviceToHost, r->cs)
                         : sl_k_gather_addrs((const void *const *)g->h_addr, 8, g->h_count, 1,
                                             r->cs),
                     "reading the count");
    SL_TASK_CUDA_TRY(t, cudaEventRecord(g->e_cnt, r->cs), "cudaEventRecord");
    gr_mark(r, g->j.range, TR_S1, r->cs);
    return SL_OK;
}

/* Range g->j.range: waits for its count, writes and gathers its result, starts its
 * download into a result batch (kept for the source). */
static int gr_end(struct gr *r, struct gr_set *g)
{
    sl_task_t *t = r->t;
    struct smj *m = r->m;
    const struct join_data *d = r->st->d;
    if (g->j.range < 0) { /* too large for the GPU: on this thread */
        int64_t i = -1 - g->j.range;
        r->cpu_ranges++;
        return join_codes(t, r->st, r->codes[i], r->codes[i + 1], i == 0,
                          i + 1 == r->n_ranges, &m->out[i]);
    }
    if (!g->j.busy)
        return SL_OK;
    g->j.busy = 0;
    double w0 = r->tr ? join_now_ms() : 0;
    SL_TASK_CUDA_TRY(t, cudaEventSynchronize(g->e_cnt), "merge-join count");
    if (r->tr)
        r->host_wait += join_now_ms() - w0;
    int64_t n = (int64_t)g->h_count[0];
    if (n == 0)
        return SL_OK;
    int64_t none[2] = {0, 0}, want = n > g->cap_out && r->hint_out > n ? r->hint_out : n;
    if (gr_need(r, g, none, want) + GR_SLACK > sl_task_device_budget(t))
        want = n;
    if (gr_need(r, g, none, want) + GR_SLACK > sl_task_device_budget(t)) {
        int64_t i = g->j.range;
        r->cpu_ranges++;
        return join_codes(t, r->st, r->codes[i], r->codes[i + 1], i == 0,
                          i + 1 == r->n_ranges, &m->out[i]);
    }
    /* the set's output buffers were read by its previous range's download */
    SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(r->cs, g->e_d2h, 0), "ordering a buffer set");
    gr_mark(r, g->j.range, TR_W0, r->cs);
    int rc = SL_OK, grew = 0;
    if (n > g->cap_out) {
        for (int s = 0; s < 2 && rc >= 0; s++)
            if ((rc = gr_grow(t, (void **)&g->pos[s], want * 4, &grew)) < 0)
                return rc;
        for (int c = 0; c < d->n_out; c++)
            if ((rc = gr_grow(t, &g->out[c], want * (int64_t)sl_type_width(d->out[c].type),
                              &grew)) < 0)
                return rc;
        g->cap_out = want;
    }
    int pinned = 0;
    sl_batch_t *b = sl__task_new_result_batch(t, sl_op_output_schema(sl_task_op(t)), n, &pinned);
    if (!b)
        return SL_ENOMEM;
    r->pageable += !pinned;
    struct range_out *keep = &m->out[g->j.range];
    if (keep->n == keep->cap) {
        sl_batch_t **nb = realloc(keep->b, (size_t)(keep->cap + 1) * sizeof *nb);
        if (!nb) {
            sl_batch_unref(b);
            return sl_task_fail(t, SL_ENOMEM, "out of memory");
        }
        keep->b = nb;
        keep->cap++;
    }
    keep->b[keep->n++] = b; /* complete once the d2h stream is (the finalize waits) */
    sl_k_join_out_t out;
    memset(&out, 0, sizeof out);
    out.s_pos = g->pos[0];
    out.r_pos = g->pos[1];
    out.capacity = n;
    int k8 = m->side[0]->runs.width[0] == 8;
    SL_TASK_CUDA_TRY(t,
                     k8 ? sl_k_smj_write_k64(g->temp, g->j.temp_need, gr_col(r, g, 1, 0), NULL,
                                             g->j.n[1], gr_col(r, g, 0, 0), NULL, g->j.n[0], 0,
                                             SL_K_JOIN_INNER, &out, r->cs)
                        : sl_k_smj_write_k32(g->temp, g->j.temp_need, gr_col(r, g, 1, 0), NULL,
                                             g->j.n[1], gr_col(r, g, 0, 0), NULL, g->j.n[0], 0,
                                             SL_K_JOIN_INNER, &out, r->cs),
                     "merge-join write");
    for (int c = 0; c < d->n_out; c++) {
        int s = d->out[c].side, w = (int)sl_type_width(d->out[c].type);
        SL_TASK_CUDA_TRY(t,
                         sl_k_gather_width(gr_col(r, g, s, m->out_rc[c]), g->pos[s], g->out[c], w,
                                           n, r->cs),
                         "gathering the result");
    }
    SL_TASK_CUDA_TRY(t, cudaEventRecord(g->e_done, r->cs), "cudaEventRecord");
    gr_mark(r, g->j.range, TR_W1, r->cs);
    SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(r->d2h, g->e_done, 0), "ordering the download");
    gr_mark(r, g->j.range, TR_D0, r->d2h);
    for (int c = 0; c < d->n_out; c++)
        SL_TASK_CUDA_TRY(t,
                         cudaMemcpyAsync(sl__col_values(b, c), g->out[c],
                                         (size_t)(n * (int64_t)sl_type_width(d->out[c].type)),
                                         cudaMemcpyDeviceToHost, r->d2h),
                         "downloading the result");
    SL_TASK_CUDA_TRY(t, cudaEventRecord(g->e_d2h, r->d2h), "cudaEventRecord");
    gr_mark(r, g->j.range, TR_D1, r->d2h);
    r->gpu_ranges++;
    return SL_OK;
}

/* The ranges' codes (runs): the larger side's codes at ranks i * n / P, and the code of
 * key 0; equal codes dropped. A range has at most GPU_RANGE_ROWS rows of the larger
 * side, fewer (a power of two, at least 2^12) where two sets of ranges would pass half
 * the budget left: a row of each side, its count's scratch (12 bytes), positions and
 * output (at the PK-FK bound: as many result rows as rows of the larger side). */
static int gr_codes(struct gr *r)
{
    struct smj *m = r->m;
    const struct sl__ooc_runs *big = &m->side[m->big]->runs;
    int64_t per = 12 + 8;
    for (int s = 0; s < 2; s++)
        for (int c = 0; c < m->side[s]->runs.n_cols; c++)
            per += m->side[s]->runs.width[c];
    for (int c = 0; c < r->st->d->n_out; c++)
        per += sl_type_width(r->st->d->out[c].type);
    int64_t rows = GPU_RANGE_ROWS;
    while (rows > 4096 && 4 * rows * per > sl_task_device_budget(r->t))
        rows /= 2;
    int64_t nb = m->n[m->big], P = (nb + rows - 1) / rows;
    P = P < 1 ? 1 : P > MAX_RANGES ? MAX_RANGES : P;
    if (!(r->codes = malloc((size_t)(P + 2) * sizeof *r->codes)))
        return sl_task_fail(r->t, SL_ENOMEM, "out of memory");
    uint64_t zero = big->width[big->key_col] == 4 ? 0x80000000ull : 0x8000000000000000ull;
    int64_t k = 0;
    r->codes[k++] = 0;
    for (int64_t i = 1; i <= P; i++) {
        uint64_t c = i < P ? sl__ooc_code_at_rank(big, i * nb / P) : UINT64_MAX;
        if (r->codes[k - 1] < zero && zero < c)
            r->codes[k++] = zero;
        if (i < P && c > r->codes[k - 1])
            r->codes[k++] = c;
    }
    r->n_ranges = k; /* range i: [codes[i], codes[i + 1]), the last one to the end */
    r->codes[k] = 0;
    return SL_OK;
}

/* gr_open's pinned counts (two) and the sets' d_count addresses (two) */
#define H_COUNTS_BYTES (2 * sizeof(unsigned long long) + 2 * sizeof(void *))

/* The ranges' results, copy lists, counts and events. */
static int gr_open(struct gr *r)
{
    sl_task_t *t = r->t;
    struct smj *m = r->m;
    free(m->out);
    m->n_ranges = 0;
    if (!(m->out = calloc((size_t)r->n_ranges, sizeof *m->out)))
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    m->n_ranges = r->n_ranges;
    size_t cols = 0;
    for (int s = 0; s < 2; s++)
        cols += (size_t)(m->side[s]->runs.n_runs * m->side[s]->runs.n_cols);
    r->cp_dst = malloc(cols * sizeof *r->cp_dst);
    r->cp_src = malloc(cols * sizeof *r->cp_src);
    r->cp_size = malloc(cols * sizeof *r->cp_size);
    unsigned long long *h = r->h_counts = sl__task_pinned_alloc(t, H_COUNTS_BYTES);
    if (!r->cp_dst || !r->cp_src || !r->cp_size || !h)
        return h ? sl_task_fail(t, SL_ENOMEM, "out of memory") : SL_ENOMEM;
    for (int i = 0; i < 2; i++) {
        struct gr_set *g = &r->g[i];
        g->h_count = h + i;
        g->h_addr = (void **)(h + 2) + i;
        if (!(g->d_count = sl_task_device_alloc(t, 2 * sizeof *g->d_count)))
            return SL_ENOMEM;
        *g->h_addr = g->d_count;
        cudaEvent_t *ev[6] = {&g->e_up, &g->e_cnt, &g->e_done, &g->e_d2h, &g->e_grow,
                              &g->e_sorted};
        for (int e = 0; e < 6; e++)
            SL_TASK_CUDA_TRY(t, cudaEventCreateWithFlags(ev[e], cudaEventDisableTiming),
                             "cudaEventCreate");
        SL_TASK_CUDA_TRY(t, cudaEventRecord(g->e_d2h, r->d2h), "cudaEventRecord");
        SL_TASK_CUDA_TRY(t, cudaEventRecord(g->e_done, r->cs), "cudaEventRecord");
        SL_TASK_CUDA_TRY(t, cudaEventRecord(g->e_sorted, r->cs), "cudaEventRecord");
    }
    int64_t trace = 0;
    sl_task_option_int(t, "debug_smj_ooc_trace", &trace);
    if (trace && r->cut[0] && (r->tr = calloc((size_t)(r->n_ranges * TR_N), sizeof *r->tr)))
        for (int64_t e = 0; e < r->n_ranges * TR_N; e++)
            if (cudaEventCreate(&r->tr[e]) != cudaSuccess) {
                r->tr[e] = NULL;
                cudaGetLastError();
            }
    for (int s = 0; s < 2; s++) { /* narrow: the cuts and slice starts, uploaded once */
        if (!r->narrow[s])
            continue;
        const int64_t k = m->side[s]->runs.n_runs, nr = r->n_ranges;
        const size_t cb = (size_t)((nr + 1) * k) * sizeof(int64_t),
                     ab = (size_t)(nr * k) * sizeof(int64_t);
        int64_t *at = malloc(ab);
        if (!at)
            return sl_task_fail(t, SL_ENOMEM, "out of memory");
        for (int64_t i = 0; i < nr; i++) {
            int64_t sum = 0;
            for (int64_t j = 0; j < k; j++) {
                at[i * k + j] = sum;
                int64_t len = r->cut[s][(i + 1) * k + j] - r->cut[s][i * k + j];
                sum += len > 0 ? len : 0;
            }
        }
        cudaError_t e = cudaErrorMemoryAllocation;
        if ((r->d_cut[s] = sl_task_device_alloc(t, cb)) &&
            (r->d_at[s] = sl_task_device_alloc(t, ab)) &&
            (e = cudaMemcpyAsync(r->d_cut[s], r->cut[s], cb, cudaMemcpyHostToDevice, r->cs)) ==
                cudaSuccess &&
            (e = cudaMemcpyAsync(r->d_at[s], at, ab, cudaMemcpyHostToDevice, r->cs)) ==
                cudaSuccess)
            e = cudaStreamSynchronize(r->cs); /* pageable sources: copied before `at` goes */
        free(at);
        if (!r->d_cut[s] || !r->d_at[s])
            return SL_ENOMEM;
        SL_TASK_CUDA_TRY(t, e, "uploading narrow ranges' cuts");
        r->top_lo[s] = SL__OOC_NARROW_TOP - 1; /* the side's rows' top values: its runs' */
        r->top_hi[s] = 0;                      /* first and last rows' */
        for (int64_t j = 0; j < k; j++) {
            int32_t tops[4];
            if (m->side[s]->runs.rows[j] == 0)
                continue;
            sl__ooc_split_tops(&m->side[s]->runs, j, NULL, 0, tops);
            r->top_lo[s] = tops[1] < r->top_lo[s] ? tops[1] : r->top_lo[s];
            r->top_hi[s] = tops[2] > r->top_hi[s] ? tops[2] : r->top_hi[s];
        }
        for (int64_t i = 0; i < nr; i++) { /* ranges gr_upload takes: rows of both sides */
            struct gr_job job;
            int64_t bytes = 0;
            int rc;
            if (gr_rows(r, 0, i) == 0 || gr_rows(r, 1, i) == 0)
                continue;
            if ((rc = gr_window(r, i, s, &job, &bytes)) < 0)
                return rc;
            r->win_hint[s] = bytes > r->win_hint[s] ? bytes : r->win_hint[s];
        }
    }
    /* the counts' memory comes from the task stream's allocator */
    SL_TASK_CUDA_TRY(t, cudaEventRecord(r->g[0].e_grow, r->cs), "cudaEventRecord");
    SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(r->h2d, r->g[0].e_grow, 0), "ordering streams");
    SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(r->d2h, r->g[0].e_grow, 0), "ordering streams");
    return SL_OK;
}

/* Timing is advice: a failed event call only leaves a phase out. */
static void gr_clock(struct gr *r, int i)
{
    cudaStream_t on[3] = {r->cs, r->h2d, r->d2h};
    if (i == 0)
        for (int e = 0; e < 3; e++)
            if (cudaEventCreate(&r->clk[e]) != cudaSuccess)
                r->clk[e] = NULL;
    if (r->clk[i] && cudaEventRecord(r->clk[i], on[i]) != cudaSuccess) {
        cudaEventDestroy(r->clk[i]);
        r->clk[i] = NULL;
    }
    cudaGetLastError();
}

/* After the streams were synchronized: phases smj_pass2_up and smj_pass2_down (ms from
 * the start to the last upload's and download's end) when ok. */
static void gr_clock_report(struct gr *r, int ok)
{
    static const char *const name[3] = {NULL, "smj_pass2_up", "smj_pass2_down"};
    float ms;
    for (int i = 1; ok && i < 3; i++)
        if (r->clk[0] && r->clk[i] && cudaEventElapsedTime(&ms, r->clk[0], r->clk[i]) == cudaSuccess)
            sl_task_phase_time(r->t, name[i], ms);
    for (int i = 0; i < 3; i++)
        if (r->clk[i])
            cudaEventDestroy(r->clk[i]);
    cudaGetLastError();
}

/* After the streams were synchronized, with debug_smj_ooc_trace: phases (ms, summed over
 * the ranges whose events were recorded) smj_p2_up_busy (uploads' copies), smj_p2_up_gap
 * (the h2d stream between one range's upload and the next one's: waiting for a buffer set
 * or for the host), smj_p2_sort (sorts and count), smj_p2_write (write and gathers),
 * smj_p2_down_busy (downloads' copies), and the host's smj_p2_wait (for counts),
 * smj_p2_host_up (enqueueing uploads) and smj_p2_host_end (result batches, enqueueing the
 * write, gathers and downloads, ranges joined on the host). */
static void gr_trace_report(struct gr *r, int ok)
{
    if (!r->tr || !ok)
        return;
    static const char *const name[5] = {"smj_p2_up_busy", "smj_p2_up_gap", "smj_p2_sort",
                                        "smj_p2_write", "smj_p2_down_busy"};
    static const int from[5] = {TR_U0, TR_U1, TR_S0, TR_W0, TR_D0};
    static const int to[5] = {TR_U1, TR_U0, TR_S1, TR_W1, TR_D1};
    double sum[5] = {0};
    for (int64_t i = 0; i < r->n_ranges; i++)
        for (int k = 0; k < 5; k++) {
            /* the gap: from range i - 1's upload end to range i's upload start */
            int64_t a = k == 1 ? i - 1 : i;
            float ms;
            if (a < 0 || !r->tr[a * TR_N + from[k]] || !r->tr[i * TR_N + to[k]])
                continue;
            if (cudaEventElapsedTime(&ms, r->tr[a * TR_N + from[k]], r->tr[i * TR_N + to[k]]) ==
                cudaSuccess)
                sum[k] += ms;
            cudaGetLastError(); /* unrecorded: a range without GPU work */
        }
    for (int k = 0; k < 5; k++)
        sl_task_phase_time(r->t, name[k], sum[k]);
    sl_task_phase_time(r->t, "smj_p2_wait", r->host_wait);
    sl_task_phase_time(r->t, "smj_p2_host_up", r->host_up);
    sl_task_phase_time(r->t, "smj_p2_host_end", r->host_end);
}

static int gr_run(struct gr *r)
{
    int rc = r->cut[0] ? SL_OK : gr_codes(r);
    if (rc < 0 || (rc = gr_open(r)) < 0)
        return rc;
    gr_clock(r, 0);
    if (r->cut[0]) { /* buckets: range i + 1 goes up, and its sorts and count are
                      * enqueued, before the host waits for range i's count; range i's
                      * write and gathers follow them on the task stream (serial: range
                      * i + 1's sorts and count after range i's gathers, so the task
                      * stream idled while the host read each count, as before) */
        if ((rc = gr_upload(r, &r->g[0], 0, 0)) < 0 || (rc = gr_compute(r, &r->g[0])) < 0)
            return rc;
        /* ahead: range i + 2 goes up into set i & 1 before the host waits for range i's
         * count (its input buffers are free once range i's sorts read them), unless a
         * buffer must grow: then after range i's write, as range i + 1 went otherwise */
        int deferred = r->ahead ? 1 : 0;
        for (int64_t i = 0; i < r->n_ranges && rc >= 0; i++) {
            struct gr_set *next = &r->g[(i + 1) & 1], *cur = &r->g[i & 1];
            const int more = i + 1 < r->n_ranges, early = more && !r->serial;
            if (sl_task_cancelled(r->t))
                return SL_ECANCELED;
            double h0 = r->tr ? join_now_ms() : 0;
            if (more && (!r->ahead || deferred) && (rc = gr_upload(r, next, i + 1, 0)) < 0)
                return rc;
            deferred = 0;
            if (r->tr)
                r->host_up += join_now_ms() - h0;
            if (early && (rc = gr_compute(r, next)) < 0)
                return rc;
            if (r->ahead && i + 2 < r->n_ranges) {
                h0 = r->tr ? join_now_ms() : 0;
                if ((rc = gr_upload(r, cur, i + 2, 1)) < 0)
                    return rc;
                cur->pending = rc == 0;
                deferred = rc == 1;
                r->ahead_ranges += rc == 0;
                rc = SL_OK;
                if (r->tr)
                    r->host_up += join_now_ms() - h0;
            }
            double e0 = r->tr ? join_now_ms() : 0, w0 = r->host_wait;
            if ((rc = gr_end(r, cur)) < 0)
                return rc;
            if (r->tr)
                r->host_end += join_now_ms() - e0 - (r->host_wait - w0);
            if (cur->pending) { /* range i + 2, uploaded ahead */
                cur->j = cur->pend;
                cur->pending = 0;
            }
            if (more && !early)
                rc = gr_compute(r, next);
        }
        gr_clock(r, 1);
        gr_clock(r, 2);
        return rc;
    }
    /* runs: range i goes up while range i - 1 is joined; a set is reused once its
     * download is done (its output buffers), which range i - 2's was. */
    for (int64_t i = 0; i <= r->n_ranges && rc >= 0; i++) {
        if (i < r->n_ranges) {
            struct gr_set *g = &r->g[i & 1];
            int e = SL_TASK_CUDA_CALL(cudaEventSynchronize(g->e_d2h));
            rc = e ? SL_TASK_CUDA_FAIL(r->t, e, "downloading a range") : gr_upload(r, g, i, 0);
            if (rc >= 0)
                rc = gr_compute(r, g);
        }
        if (rc >= 0 && i > 0)
            rc = gr_end(r, &r->g[(i - 1) & 1]);
    }
    return rc;
}

/* After the streams were synchronized. */
static void gr_free(struct gr *r)
{
    if (r->h_counts)
        sl__task_pinned_free(r->t, r->h_counts, H_COUNTS_BYTES);
    for (int i = 0; i < 2; i++) {
        struct gr_set *g = &r->g[i];
        for (int s = 0; s < 2; s++) {
            for (int c = 0; c < SL__OOC_MAX_COLS; c++) {
                sl_task_device_free(r->t, g->in[s][c]);
                sl_task_device_free(r->t, g->srt[s][c]);
            }
            sl_task_device_free(r->t, g->ids[s]);
            sl_task_device_free(r->t, g->pos[s]);
        }
        for (int c = 0; c < 2 * JOIN_MAX_COLS; c++)
            sl_task_device_free(r->t, g->out[c]);
        sl_task_device_free(r->t, g->temp);
        sl_task_device_free(r->t, g->stemp);
        sl_task_device_free(r->t, g->win[0]);
        sl_task_device_free(r->t, g->win[1]);
        sl_task_device_free(r->t, g->d_count);
        cudaEvent_t ev[6] = {g->e_up, g->e_cnt, g->e_done, g->e_d2h, g->e_grow, g->e_sorted};
        for (int e = 0; e < 6; e++)
            if (ev[e])
                cudaEventDestroy(ev[e]);
    }
    for (int s = 0; s < 2; s++) {
        sl_task_device_free(r->t, r->d_cut[s]);
        sl_task_device_free(r->t, r->d_at[s]);
    }
    for (int64_t e = 0; r->tr && e < r->n_ranges * TR_N; e++)
        if (r->tr[e])
            cudaEventDestroy(r->tr[e]);
    free(r->tr);
    r->tr = NULL;
    free(r->cp_dst);
    free(r->cp_src);
    free(r->cp_size);
}

/* 1 when the GPU joins the ranges of both sides merged into one run each (runs): keyed
 * by their first column ascending, keys of one width, fewer than 2^31 rows a side (the
 * kernels' 32-bit positions), and option debug_smj_cpu_join off. */
static int gr_can(sl_task_t *t, const struct smj *m)
{
    int64_t cpu = 0;
    sl_task_option_int(t, "debug_smj_cpu_join", &cpu);
    const struct sl__ooc_runs *a = &m->side[0]->runs, *b = &m->side[1]->runs;
    return !cpu && a->n_runs == 1 && b->n_runs == 1 && a->key_col == 0 && b->key_col == 0 &&
           !a->desc && !b->desc && a->width[0] == b->width[0] && m->n[0] < ((int64_t)1 << 31) &&
           m->n[1] < ((int64_t)1 << 31);
}

/* Joins the ranges on the GPU: those of m->codes with the buckets' cuts m->cut (buckets),
 * or cut at the larger side's codes (runs). */
static int gpu_join_ranges(sl_task_t *t, struct join_state *st)
{
    struct gr r;
    memset(&r, 0, sizeof r);
    r.t = t;
    r.st = st;
    r.m = st->smj;
    r.cs = sl_task_stream(t);
    if (r.m->cut[0]) {
        r.codes = r.m->codes;
        r.n_ranges = r.m->n_codes + 1;
        for (int s = 0; s < 2; s++) {
            r.cut[s] = r.m->cut[s];
            /* packed runs are unpacked by the sort, also one run */
            r.sort[s] = r.m->side[s]->runs.n_runs > 1 || r.m->side[s]->runs.packed;
            r.hint[s] = r.m->hint[s];
            /* narrow runs (packed, so sorted here): keys of 4 bytes, ranges of at most
               SL__OOC_NARROW_WINDOW top values (smj_buckets) */
            r.narrow[s] = r.m->side[s]->runs.narrow;
        }
        r.hint_out = r.m->hint_out;
        int64_t mode = 0;
        sl_task_option_int(t, "debug_smj_ooc", &mode);
        r.serial = mode == 2;
        r.ahead = mode == 0;
        int64_t all = 0, copy = 0;
        sl_task_option_int(t, "debug_smj_sort_all_bits", &all);
        r.all_bits = all != 0;
        sl_task_option_int(t, "debug_smj_count_copy", &copy);
        r.count_copy = copy != 0;
    }
    void *side[2];
    int rc = sl__task_streams_get(t, 2, side);
    if (rc < 0)
        return rc;
    r.h2d = side[0];
    r.d2h = side[1];
    double t0 = join_now_ms();
    rc = gr_run(&r);
    cudaStreamSynchronize(r.h2d);
    cudaStreamSynchronize(r.cs);
    cudaStreamSynchronize(r.d2h);
    gr_clock_report(&r, rc >= 0 && r.cut[0]);
    gr_trace_report(&r, rc >= 0);
    gr_free(&r);
    if (r.codes != r.m->codes)
        free(r.codes);
    sl__task_streams_put(t, 2, side);
    sl_task_phase_time(t, "ooc_gpu_merge_join", join_now_ms() - t0);
    sl_task_profile_value(t, "smj_gpu_ranges", r.gpu_ranges);
    sl_task_profile_value(t, "smj_cpu_ranges", r.cpu_ranges);
    sl_task_profile_value(t, "smj_pageable_ranges", r.pageable);
    sl_task_profile_value(t, "smj_ahead_ranges", r.ahead_ranges);
    sl_task_profile_value(t, "smj_narrow_sides", r.narrow[0] + r.narrow[1]);
    for (int s = 0; s < 2 && rc >= 0; s++) { /* the pinned runs go back to the pool now */
        sl__ooc_sorted_free(r.m->side[s]);
        r.m->side[s] = NULL;
    }
    return rc;
}

/* ---------------- buckets: key ranges cut in pass 1 ---------------- */

/* Rows of both sides a key range of the buckets' pass 2 may hold: the most (at most
 * 2^26) for which two buffer sets at 5/4 of it fit the budget left: per row of side s,
 * its columns as uploaded and sorted (and the sort's row ids), the count's 12 bytes per
 * left row, positions and output columns at the PK-FK bound (as many result rows as the
 * larger side's), and the sort's temp; beside them, for a side of narrow_runs[s] > 0
 * narrow runs, its windows of the tables (`window` top values a range: 0 counts none) and
 * its ranges' cuts (sl__ooc_smj_narrow_bytes: the ranges those rows give, plus `extra`
 * codes sl__ooc_narrow_codes may add). 0 when not even 2^12 rows fit. */
static int64_t bucket_rows(sl_task_t *t, const struct smj *m, const struct join_data *d,
                           int pack, const int64_t narrow_runs[2], int64_t extra,
                           int64_t window)
{
    double n = (double)(m->n[0] + m->n[1]), f[2] = {m->n[0] / n, m->n[1] / n};
    double fmax = f[0] > f[1] ? f[0] : f[1], per = 12 * f[0];
    struct sl__ooc_runs shape[2];
    for (int s = 0; s < 2; s++) {
        const struct sl__ooc_input *in = &m->in[s];
        memset(&shape[s], 0, sizeof shape[s]);
        shape[s].n_cols = in->n_cols;
        int64_t rw = 0;
        for (int c = 0; c < in->n_cols; c++) {
            shape[s].width[c] = sl_type_width(in->batches[0]->cols[in->col[c]].type);
            rw += shape[s].width[c];
        }
        per += f[s] * (double)(2 * rw + (sl__ooc_gpu_sort_ids(&shape[s]) ? 8 : 0));
    }
    int64_t ow = 8;
    for (int c = 0; c < d->n_out; c++)
        ow += sl_type_width(d->out[c].type);
    per += fmax * (double)ow;
    int64_t budget = sl_task_device_budget(t) - GR_SLACK - ((int64_t)1 << 20);
    for (int64_t T = (int64_t)1 << 26; T >= 4096; T = T * 7 / 8) {
        int64_t P = (m->n[0] + m->n[1] + T - 1) / T, fixed = 0;
        P = P > MAX_RANGES ? MAX_RANGES : P;
        for (int s = 0; s < 2; s++) /* smj_buckets' ranges: at most P + 1 (key 0) + extra */
            fixed += sl__ooc_smj_narrow_bytes(narrow_runs[s], P + 1 + extra, window);
        if (2 * (int64_t)(1.25 * (double)T * per) + fixed > budget)
            continue; /* not even without the sort's temp (no CUB size queries) */
        int64_t most = (int64_t)(1.25 * (double)T * fmax) + 1, temp = 0;
        for (int s = 0; s < 2; s++)
            for (int pk = 0; pk <= pack; pk++) { /* packed or not: the larger */
                shape[s].packed = pk;
                int64_t b = sort_temp(t, &shape[s], most);
                if (b < 0)
                    return b;
                temp = b > temp ? b : temp;
            }
        if (2 * ((int64_t)(1.25 * (double)T * per) + temp) + fixed <= budget)
            return T;
    }
    return 0;
}

/* Side s's cuts (m->cut[s]) at the ranges' codes: pass 1's, or searched in its runs. */
static int side_cuts(sl_task_t *t, struct smj *m, int s)
{
    const struct sl__ooc_sorted *so = m->side[s];
    const int64_t k = m->n_codes, kr = so->runs.n_runs;
    if (!(m->cut[s] = malloc((size_t)((k + 2) * kr) * sizeof *m->cut[s])))
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    int64_t *cut = m->cut[s];
    if (so->n_codes == k && k > 0) { /* pass 1's: run j's split at code i is split[j k + i] */
        for (int64_t i = 0; i < k; i++)
            for (int64_t j = 0; j < kr; j++)
                cut[(i + 1) * kr + j] = so->split[j * k + i];
    } else if (k > 0) {
        sl__ooc_split_below_all(&so->runs, m->codes + 1, k, cut + kr, sl__host_threads(16));
    }
    for (int64_t j = 0; j < kr; j++) {
        cut[j] = 0;
        cut[(k + 1) * kr + j] = so->rows[j];
    }
    return SL_OK;
}

/* Side 0's pass 1 goes first (option debug_smj_pass1=auto): its runs queued before the
 * splitters are sampled, so the host samples while the GPU sorts, and its cuts are
 * searched in its pinned runs afterwards. ss: a stream of the caller's for the samples of
 * keys in GPU batches, ordered here after the task's stream as it is now (the batches'
 * writers), before side 0's sorts join it. */
static int pass1_first(sl_task_t *t, struct smj *m, void *ss, cudaEvent_t before,
                       struct sl__ooc_pass1 **h0)
{
    cudaError_t r = cudaEventRecord(before, sl_task_stream(t));
    if (r == cudaSuccess)
        r = cudaStreamWaitEvent((cudaStream_t)ss, before, 0);
    SL_TASK_CUDA_TRY(t, r, "ordering streams");
    m->in[0].no_cuts = 1;
    return sl__ooc_runs_sort_begin(t, &m->in[0], &m->side[0], h0, NULL);
}

/* Side 1's pass 1 queued while side 0's runs (h0) are still on the GPU (where its runs fit
 * beside side 0's buffers; else after them), its copies after `before` (the task stream
 * before side 0's pass 1, which frees no device memory there until its end), not after
 * side 0's sorts; then side 0's cuts searched in its runs while side 1's are sorted,
 * then side 1's end. */
static int pass1_rest(sl_task_t *t, struct smj *m, struct sl__ooc_pass1 *h0, cudaEvent_t before)
{
    int rc = SL_OK, rc0 = SL_OK;
    if (!sl__ooc_runs_can(t, &m->in[1])) {
        rc0 = sl__ooc_runs_sort_end(t, h0);
        h0 = NULL;
        if (rc0 < 0)
            return rc0;
    }
    struct sl__ooc_pass1 *h1 = NULL;
    rc = sl__ooc_runs_sort_begin(t, &m->in[1], &m->side[1], &h1, h0 ? before : NULL);
    if (h0)
        rc0 = sl__ooc_runs_sort_end(t, h0);
    double c0 = join_now_ms();
    if (rc >= 0 && rc0 >= 0)
        rc0 = side_cuts(t, m, 0);
    sl_task_phase_time(t, "smj_side0_cuts", join_now_ms() - c0);
    int rc1 = sl__ooc_runs_sort_end(t, h1);
    rc = rc < 0 ? rc : rc0 < 0 ? rc0 : rc1;
    return rc < 0 ? rc : side_cuts(t, m, 1);
}

#define NARROW_EXTRA_CODES (SL__OOC_NARROW_TOP / SL__OOC_NARROW_WINDOW + 1)
enum { NARROW_AUTO, NARROW_OFF, NARROW_ON }; /* option debug_smj_narrow */

/* Which sides keep narrow runs (option debug_smj_narrow; int32 keys only, packed runs:
 * an int32 key and one 4-byte column), narrow[s], and nruns[s] the runs bucket_rows sizes
 * pass 2's bytes of side s for (pass 1's plan now; 0: none), *window the top values a
 * range's window is counted at. auto: sides whose runs pay for their tables and whose
 * pass-2 bytes are a small share of the budget (sl__ooc_smj_narrow_pays, with the ranges
 * of bucket_rows without narrow runs), each held to its planned runs (in[s].narrow_runs:
 * a side that pass 1 plans with more runs, beside the other side's buffers, keeps 8-byte
 * packed rows instead), the worst window counted (SL__OOC_NARROW_WINDOW); true: both
 * sides as in session 19 (pass 1 narrows those that pack and have several runs, whatever
 * their runs' length), their ranges' cuts counted for the runs planned now but no windows
 * (*window 0: the worst would shrink small budgets' ranges to little, where keys in a
 * narrow band need a few bytes); false: none. */
static int narrow_sides(sl_task_t *t, struct smj *m, const struct join_data *d, int kw,
                        int narrow[2], int64_t nruns[2], int64_t *window)
{
    int64_t mode = NARROW_AUTO, ranges = 0;
    sl_task_option_int(t, "debug_smj_narrow", &mode);
    *window = mode == NARROW_AUTO ? SL__OOC_NARROW_WINDOW : 0;
    for (int s = 0; s < 2; s++)
        m->in[s].narrow_runs = 0;
    if (kw != 4 || mode == NARROW_OFF)
        return SL_OK;
    const int64_t budget = sl_task_device_budget(t);
    if (mode == NARROW_AUTO) {
        const int64_t none[2] = {0, 0};
        int64_t T0 = bucket_rows(t, m, d, 1, none, 0, 0);
        if (T0 <= 0)
            return (int)T0; /* 0: the buckets' path does not run (smj_buckets says so) */
        int64_t P0 = (m->n[0] + m->n[1] + T0 - 1) / T0;
        ranges = (P0 > MAX_RANGES ? MAX_RANGES : P0) + 1 + NARROW_EXTRA_CODES;
    }
    for (int s = 0; s < 2; s++) {
        struct sl__ooc_input probe = m->in[s];
        probe.pack = 3;
        int packed = 0;
        int64_t k = 0, R = sl__ooc_runs_plan(t, &probe, &k, &packed);
        const int several = packed && R > 0 && k >= 2;
        if (mode == NARROW_ON) {
            narrow[s] = 1;
            nruns[s] = several ? k : 0;
        } else {
            narrow[s] = several &&
                        sl__ooc_smj_narrow_pays(R, k, ranges, SL__OOC_NARROW_WINDOW, budget);
            nruns[s] = m->in[s].narrow_runs = narrow[s] ? k : 0;
        }
    }
    return SL_OK;
}

/* Both sides sorted in runs, then their key ranges joined on the GPU: splitter codes
 * sampled from both sides' input, each run's cuts at them found on the GPU as it is
 * sorted (side 0's, with debug_smj_pass1=auto, searched in its runs: its pass 1 starts
 * before the splitters are sampled, side 1's is queued before side 0's ends). Returns 1
 * when it ran, 0 when it does not take the join (nothing kept), or < 0 after failing the
 * task. */
static int smj_buckets(sl_task_t *t, struct join_state *st)
{
    struct smj *m = st->smj;
    const struct join_data *d = st->d;
    int64_t cpu = 0, mode = 0, p1 = 0;
    sl_task_option_int(t, "debug_smj_cpu_join", &cpu);
    sl_task_option_int(t, "debug_smj_ooc", &mode); /* auto, runs, serial, noahead */
    sl_task_option_int(t, "debug_smj_pass1", &p1); /* auto, serial */
    if (cpu || mode == 1 || m->n[0] >= ((int64_t)1 << 31) || m->n[1] >= ((int64_t)1 << 31))
        return 0;
    int kw = (int)sl_type_width(m->in[0].batches[0]->cols[m->in[0].col[0]].type);
    if (kw != (int)sl_type_width(m->in[1].batches[0]->cols[m->in[1].col[0]].type))
        return 0;
    double t0 = join_now_ms();
    /* packed runs where the shape allows (an int32 key and one 4-byte column) with option
     * debug_smj_packed (and debug_ooc_unpacked_runs off): the ranges sized for either */
    int64_t pack = 0, nruns[2] = {0, 0}, window = 0;
    sl_task_option_int(t, "debug_smj_packed", &pack);
    int narrow[2] = {0, 0};
    int rc = narrow_sides(t, m, d, kw, narrow, nruns, &window);
    if (rc < 0)
        return rc;
    const int any = narrow[0] || narrow[1];
    /* narrow: the codes sl__ooc_narrow_codes adds (at most 65536 / window + 1) */
    const int64_t extra_codes = any ? NARROW_EXTRA_CODES : 0;
    int64_t T = bucket_rows(t, m, d, pack != 0 || any, nruns, extra_codes, window);
    if (T <= 0)
        return (int)T;
    int64_t P = (m->n[0] + m->n[1] + T - 1) / T;
    P = P > MAX_RANGES ? MAX_RANGES : P;
    uint64_t *f = malloc((size_t)(P + 1) * sizeof *f);
    if (!f)
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    for (int s = 0; s < 2; s++) /* 2: 8-byte rows, 3: narrow ones */
        m->in[s].pack = narrow[s] ? 3 : pack ? 2 : 0;
    const int early = p1 == 0 && P >= 2;
    struct sl__ooc_pass1 *h0 = NULL;
    void *ss = NULL;
    double g0 = join_now_ms();
    cudaEvent_t before = NULL; /* the task's stream before side 0's pass 1 */
    rc = early ? sl__task_streams_get(t, 1, &ss) : SL_OK;
    cudaError_t ce = rc >= 0 && early ? cudaEventCreateWithFlags(&before, cudaEventDisableTiming)
                                      : cudaSuccess;
    if (ce != cudaSuccess) {
        before = NULL;
        rc = SL_TASK_CUDA_FAIL(t, ce, "cudaEventCreate");
    }
    if (rc >= 0 && early)
        rc = pass1_first(t, m, ss, before, &h0);
    double s0 = join_now_ms();
    if (rc >= 0)
        rc = P >= 2 ? sl__ooc_inputs_splitters_on(t, m->in, 2, P, 0, 256, f, ss) : 1;
    /* ascending, equal ones dropped, the code of key 0 among them; range i holds codes
     * [m->codes[i], m->codes[i + 1]), range 0 from the start */
    if (rc > 0 && !(m->codes = malloc((size_t)(P + 2 + extra_codes) * sizeof *m->codes)))
        rc = sl_task_fail(t, SL_ENOMEM, "out of memory");
    if (rc <= 0) { /* 0: a key column in memory the host cannot read */
        free(f);
        int rc0 = sl__ooc_runs_sort_end(t, h0);
        if (ss)
            sl__task_streams_put(t, 1, &ss);
        if (before)
            cudaEventDestroy(before);
        if (rc == 0 && rc0 >= 0) { /* the other paths sort side 0 again, as they do */
            sl__ooc_sorted_free(m->side[0]);
            m->side[0] = NULL;
            for (int s = 0; s < 2; s++) {
                m->in[s].no_cuts = m->in[s].pack = 0;
                m->in[s].narrow_runs = 0;
            }
        }
        return rc < 0 ? rc : rc0;
    }
    int64_t k = sl__ooc_range_codes(f, P >= 2 ? P - 1 : 0, kw, m->codes + 1);
    if (any) { /* no range wider than a narrow window (the tables' window in pass 2) */
        memcpy(f, m->codes + 1, (size_t)k * sizeof *f);
        k = sl__ooc_narrow_codes(f, k, SL__OOC_NARROW_WINDOW, m->codes + 1);
    }
    m->n_codes = k;
    free(f);
    m->codes[0] = 0;
    m->codes[k + 1] = 0;
    sl_task_phase_time(t, "smj_splitters", join_now_ms() - s0 + (g0 - t0));
    for (int s = 0; s < 2; s++) {
        m->in[s].codes = m->codes + 1;
        m->in[s].n_codes = k;
        m->in[s].no_cuts = 1; /* k = 0: no cuts wanted (side_cuts) */
    }
    double ms = 0;
    if (early) {
        rc = pass1_rest(t, m, h0, before);
        sl__task_streams_put(t, 1, &ss);
        cudaEventDestroy(before);
        if (rc < 0)
            return rc;
        ms = join_now_ms() - g0; /* both sides' pass 1, the splitters within it */
    }
    for (int s = 0; s < 2 && !early; s++) {
        if ((rc = sl__ooc_runs_sort(t, &m->in[s], &m->side[s])) < 0 ||
            (rc = side_cuts(t, m, s)) < 0)
            return rc;
        ms += m->side[s]->gpu_ms;
    }
    sl_task_phase_time(t, "ooc_gpu_runs", ms);
    for (int s = 0; s < 2; s++) /* a range's rows, and some room */
        m->hint[s] = (int64_t)(1.2 * (double)m->n[s] / (double)P) + 4096;
    m->hint_out = m->hint[0] > m->hint[1] ? m->hint[0] : m->hint[1];
    m->n_ranges = k + 1;
    sl_task_profile_value(t, "smj_bucket_ranges", k + 1);
    rc = gpu_join_ranges(t, st);
    return rc < 0 ? rc : 1;
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
    double f0 = join_now_ms();
    int rc = smj_buckets(t, st);
    if (rc > 0) /* the finalize's time (bench join: the query's rest is engine_other) */
        sl_task_phase_time(t, "finalize", join_now_ms() - f0);
    if (rc != 0)
        return rc < 0 ? rc : SL_OK;
    double ms = 0, merge_ms = 0;
    int64_t force = 0; /* debug_ooc_sort_merge: auto, cpu, gpu */
    sl_task_option_int(t, "debug_ooc_sort_merge", &force);
    for (int s = 0; s < 2; s++) {
        if ((rc = sl__ooc_runs_sort(t, &m->in[s], &m->side[s])) < 0)
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
    if (gr_can(t, m))
        return gpu_join_ranges(t, st);
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
    const int in_place = k == 1 && !runs->packed; /* packed: unpacked by the range sort */
    r->owned = !in_place;
    for (int c = 0; c < runs->n_cols && in_place; c++) { /* merged on the GPU: in order */
        r->w[c] = runs->width[c];
        r->col[c] = (char *)runs->cols[c] + from[0] * r->w[c];
    }
    for (int c = 0; c < runs->n_cols && !in_place; c++) {
        r->w[c] = runs->width[c];
        if (!(r->col[c] = sl_task_alloc(t, (size_t)(r->n > 0 ? r->n : 1) * (size_t)r->w[c])))
            return SL_ENOMEM;
    }
    if (r->n > 0 && !in_place) { /* the range's rows in order (common/ooc_merge.c) */
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

/* Joins the rows of key codes [lo, hi) (first: from the start; last: to the end) on this
 * thread into batches kept in *keep. */
static int join_codes(sl_task_t *t, const struct join_state *st, uint64_t lo, uint64_t hi,
                      int first, int last, struct range_out *keep)
{
    struct smj *m = st->smj;
    struct side_range r[2];
    int rc;
    for (int s = 0; s < 2; s++)
        if ((rc = merge_range(t, &m->side[s]->runs, lo, hi, first, last, &r[s])) < 0)
            return rc;
    struct out o = {.t = t, .d = st->d, .m = m, .r = {&r[0], &r[1]}, .keep = keep,
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
    return join_codes(t, st, lo, hi, first, last, &m->out[i]);
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
