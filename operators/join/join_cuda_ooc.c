/* Out-of-core join on a GPU (issue 8; Triton join after Lutz et al., SIGMOD 2022):
 * the GPU join of join_cuda.c when its state does not fit the GPU memory budget.
 * docs/OUT_OF_CORE.md has the design; in short:
 *
 * Pass 1 (per side, build then probe): the side's batches (host memory, or device
 * batches the sink kept) are streamed in chunks of C rows through two staging buffers
 * (copies on our h2d stream overlap the kernels of the previous chunk on the task's
 * stream) and radix-partitioned on key bits [begin1, begin1 + bits1); a partitioned
 * chunk stays in device memory (the cache: what the budget holds beside the passes'
 * working sets, cached chunks spread over the input) or goes whole to pinned host memory
 * by DMA on our d2h stream (the spill; debug_ooc_spill=blocks: appended to fixed-size
 * blocks by a kernel's zero-copy stores, the design before 2026-11-27).
 * Pass 2 (per job = run of consecutive partitions whose pair fits cap2 rows): the job's
 * spilled pieces are copied into read-back buffers (h2d stream, one batch), its cached
 * pieces gathered there by a kernel, then partitioned again on bits [0, b2) and joined
 * with the in-GPU kernels (kernels/join); job i+1's read-back is queued while job i is
 * joined, and job i's result goes to host memory on our d2h stream while job i+1 runs.
 * A partition pair larger than a job is split: its probe side in slices when the build
 * side fits, else that pair is joined by the CPU. Device memory never exceeds the budget
 * (all of it from sl_task_device_alloc: the DMA plan carves the passes' buffers from one
 * block, dalloc); pinned memory counts against the host budget.
 *
 * Shapes: inner join, one int32/int64 key without nulls, one payload column per side of
 * the same width without nulls (the narrow layout of join_cuda.c), output materialized
 * (host batches) or aggregated. Others are left to the CPU (can_run says no). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "common/ooc_runs.h"
#include "gpu_ext.h"
#include "join_cuda_int.h"
#include "sluice_k/columns.h"
#include "sluice_k/join.h"
#include "sluice_k/join_ooc.h"
#include "sluice_k/partition.h"

#define MIB ((int64_t)1 << 20)
#define HOST_PIECE (64 * MIB)          /* pinned spill memory comes in pieces of this */

static int64_t pow2_floor(int64_t x)
{
    int64_t p = 1;
    while (p * 2 <= x)
        p *= 2;
    return p;
}

static int64_t clamp64(int64_t x, int64_t lo, int64_t hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* ---------------- which joins ---------------- */

/* The narrow layout: one payload column per side, same width. Sets pcol and *vw. */
static int ooc_layout(const struct join_data *d, int pcol[2], int *vw)
{
    int n[2] = {0, 0};
    size_t w[2] = {0, 0};
    for (int i = 0; i < d->n_out; i++) {
        const struct join_ocol *o = &d->out[i];
        if (o->col == d->key[o->side][0])
            continue;
        if (n[o->side]++ == 0) {
            pcol[o->side] = o->col;
            w[o->side] = sl_type_width(o->type);
        } else if (pcol[o->side] != o->col) {
            return 0;
        }
    }
    *vw = (int)w[0];
    return n[0] == 1 && n[1] == 1 && w[0] == w[1] && (w[0] == 4 || w[0] == 8);
}

int join_side_has_nulls(const struct join_side *sd, int col)
{
    for (int64_t i = 0; i < sd->n_batches; i++)
        if (sd->batches[i]->cols[col].validity && sd->batches[i]->cols[col].null_count != 0)
            return 1;
    return 0;
}

int join_ooc_can_run(const sl_task_t *t)
{
    const struct join_data *d = sl_op_data(sl_task_op(t));
    const struct join_state *st = sl_task_gstate((sl_task_t *)t);
    int pcol[2], vw;
    if (d->kind != JOIN_INNER || d->n_keys != 1 || !ooc_layout(d, pcol, &vw))
        return 0;
    for (int s = 0; s < 2; s++)
        if (join_side_has_nulls(&st->side[s], pcol[s]) || join_side_has_nulls(&st->side[s], d->key[s][0]))
            return 0;
    return sl_task_device_budget(t) >= 16 * MIB;
}

/* The GPU sink keeps a host batch on the host (instead of uploading it) once what it
 * kept on the GPU, times the in-GPU join's appetite (about 8x its input), would pass the
 * budget: finalize then streams the rest (out of core when it must). A device batch past
 * that point goes to host memory too (the runtime downloads it for the CPU sink): the
 * sides of a join no longer fill a small budget while their pipelines still run (TPC-H
 * SF 10 at gpu_mem=256Mi; option debug_join_keep_device keeps them, as before). */
int join_gpu_sink_can_run(const sl_task_t *t)
{
    const sl_batch_t *b = sl_task_input(t);
    int dev = sl_batch_device(b) >= 0;
    if (dev) {
        int64_t keep = 0;
        sl_task_option_int((sl_task_t *)t, "debug_join_keep_device", &keep);
        /* Several devices: a resident batch may live on another device than the task's,
         * whose budget the rule below reads (test_gpu_multi_plan budget_4dev: device 3
         * full sent device 0's inputs to the host); they stay, as before. */
        if (keep || sl__task_n_devices(t) > 1)
            return 1;
    }
    struct join_state *st = sl_task_gstate((sl_task_t *)t);
    int64_t bytes = sl__batch_bytes(b);
    if (atomic_load(&st->gpu_sink_host) || (!dev && join_stream_keep(t, b)))
        goto host;
    int64_t up = atomic_fetch_add(&st->gpu_sink_bytes, bytes) + bytes;
    if (8 * up + 64 * MIB > sl_task_device_budget(t) + up) {
        atomic_store(&st->gpu_sink_host, 1);
        atomic_fetch_sub(&st->gpu_sink_bytes, bytes);
        goto host;
    }
    return 1;
host:
    if (dev)
        atomic_fetch_add(&st->gpu_sink_down, bytes);
    return 0;
}

/* ---------------- state ---------------- */

/* A piece of one partition's rows after pass 1: keys at k, values at v (device memory or
 * pinned host memory). */
struct blk {
    char *k, *v;
    int64_t rows;
    int dev;                            /* SPILL_DMA: in device memory (a cached chunk) */
};

/* One side after pass 1: its pieces, listed by partition (CSR). */
struct bside {
    int64_t n, b0, nb;                  /* rows; SPILL_BLOCKS: first block id, blocks reserved */
    int64_t c0, nc;                     /* SPILL_DMA: first chunk, chunks */
    int64_t used;                       /* SPILL_BLOCKS: blocks taken */
    int64_t *p_start;                   /* parts + 1: partition p is blk[p_start[p] ..] */
    int64_t *p_rows;                    /* rows per partition */
    struct blk *blk;                    /* by partition */
    int64_t n_blk;
};

/* SPILL_DMA: a partitioned chunk of pass 1, in device memory (cached) or pinned memory. */
struct chunk {
    char *k, *v;                        /* keys; values */
    int64_t n;
    int dev;
};

/* How pass 1 spills (option debug_ooc_spill): partitioned chunks copied to pinned memory
 * by DMA, whole; or appended to blocks of fixed size by a kernel that writes the host
 * blocks by zero-copy stores (the design until 2026-11-27, for A/B runs). */
enum { SPILL_DMA = 0, SPILL_BLOCKS = 1 };

/* SPILL_DMA: the bytes W that each pass's working set takes (pass 1: two staging buffers,
 * two partitioned chunks and the partitioning temp, about C·(5·tw + 4) for chunks of C
 * rows; pass 2: two buffer sets and the temp, cap2·per_row for jobs of cap2 rows); the
 * cache of chunks gets the rest of the budget b. Pass 2 reads a job back as one piece
 * per chunk and column of about C·cap2/n rows: W is the least that makes those pieces
 * PIECE_ROWS (copies of 256 KB of 4-byte keys; pieces of 2^14 rows, 48 KB, went over the
 * link at some 32 GB/s in batched copies, H100 2026-11-27), at most b - 8 MiB (the pass-2
 * offsets and temps), at least half of b up to 16 MiB. Half the budget went to the passes
 * before 2026-11-27 (session 16; debug_ooc_spill=dma_half), which at 1/2 of a 2 GiB state
 * cached 448 MiB where this caches 768. */
#define PIECE_ROWS 65536.0

static int64_t dma_share(int64_t b, int64_t per_row, int tw, int64_t n)
{
    int64_t w = (int64_t)sqrt(PIECE_ROWS * (double)(5 * tw + 4) * (double)per_row * (double)n);
    int64_t lo = b / 2 < 16 * MIB ? b / 2 : 16 * MIB, hi = b - 8 * MIB;
    if (hi < b / 2)
        hi = b / 2;
    return w < lo ? lo : w > hi ? hi : w;
}

/* A job: partitions [p0, p1) of the build side, and of the probe side the blocks at
 * list indices [s0, s1). */
struct job {
    int p0, p1;
    int64_t s0, s1, nr, ns;
    int cpu;                            /* joined by the CPU (a build partition too large) */
};

/* A piece of a job in device memory, for rows [at, at + rows) of its read-back. */
struct dpiece {
    const char *k, *v;
    int64_t rows, at;
};

/* Pass 2's read-back buffers of job k (two, k & 1): its rows gathered, R then S. */
struct gread {
    struct job job;
    void *k, *v;
    int64_t cap;
    struct dpiece *dp;                  /* pieces in device memory: compute_job gathers them */
    int64_t n_dp, cap_dp;
    cudaEvent_t e_gather, e_part;       /* after the read-back; after its partitioning */
    int64_t *h_list, *d_list, n_list;   /* zero-copy read-back: block pointers, rows, rows before */
};

/* A pass-2 buffer set (job k in set k & 1). */
struct gset {
    struct job job;
    void *pk, *pv;                      /* the job's rows partitioned */
    int64_t cap_in;
    int64_t *roff, *soff;
    void *ok, *ob, *op;                 /* join output: key, build val, probe val */
    int64_t cap_out;
    unsigned long long *d_count, *h_count;
    cudaEvent_t e_done, e_d2h;
    int busy;                           /* a job was submitted and not finished */
    int64_t nr, ns, count;
    int64_t idx;                        /* fused: the job's number (its words in d_res) */
    int bits2;
    void *stage;                        /* pinned result staging (materialize) */
    int64_t stage_bytes, stage_rows;
    int d2h_pending;
};

struct ooc {
    sl_task_t *t;
    struct join_state *st;
    const struct join_data *d;
    int kw, vw, tw, ow;
    int build;
    int pcol[2];
    int64_t budget, chunk, cap2, bl;
    int64_t share;                      /* SPILL_DMA: bytes each pass's working set may take */
    char *arena, *cblk;                 /* SPILL_DMA: the passes' buffers; the cached chunks */
    int64_t arena_size, arena_at, cblk_size, cblk_at;
    int bits1, begin1, parts, max_bits2;
    cudaStream_t cs, h2d, d2h;
    /* blocks */
    int spill;                          /* SPILL_DMA or SPILL_BLOCKS */
    int half;                           /* SPILL_DMA: the passes take half the budget and
                                           pass 2 queues one read-back (dma_half) */
    int fused;                          /* aggregate: count and sums by the join kernel, no
                                           output buffers (fused_ok; debug_ooc_spill=fused,
                                           the default) */
    unsigned long long *d_res;          /* fused: 4 words (count, key, build and probe value
                                           sums) per GPU job */
    int64_t n_blocks, n_cache;          /* SPILL_DMA: pieces of both sides; cached chunks */
    struct chunk *ch;                   /* SPILL_DMA: both sides' chunks */
    int64_t n_ch;
    int64_t *h_offs;                    /* SPILL_DMA: pinned, parts + 1 offsets per chunk */
    void **cp_dst, **cp_src;            /* pass 2: a job's copies */
    size_t *cp_size, n_cp, cap_cp;
    struct blk *tmp;                    /* pass 2: a side's pieces of a job, sorted */
    void *d_narrow;                     /* pass 1: a column's narrow values (pinned tables) */
    int64_t up_bytes;                   /* pass 1: bytes uploaded */
    void **h_ptr, **d_ptr;              /* block pointers (host copy, device table) */
    int32_t *d_part;                    /* block -> partition (device) */
    char *cache;                        /* device blocks */
    void **pieces;                      /* pinned pieces */
    int64_t n_pieces, piece_bytes;
    struct bside side[2];               /* by input side */
    /* pass 2 */
    void *ptemp, *jtemp;
    size_t ptemp_cap, jtemp_cap;
    struct gread rd[2];
    struct gset g[2];
    int64_t jobs;
    unsigned long long *d_acc;          /* aggregate: 2 words per output column */
    struct join_acc host_acc;           /* pairs the CPU joined */
    int64_t gpu_count;                  /* aggregate: matches of the GPU jobs */
    int32_t *d_status;
    /* trace */
    int zero_copy;                      /* read-back by a kernel (debug_ooc_readback=kernel) */
    struct gj_trace tr;
};

int join_ooc_out_add(sl_task_t *t, struct join_state *st, sl_batch_t *b)
{
    if (st->n_ooc_out == st->cap_ooc_out) {
        int64_t cap = st->cap_ooc_out ? 2 * st->cap_ooc_out : 64;
        sl_batch_t **nb = realloc(st->ooc_out, (size_t)cap * sizeof *nb);
        if (!nb) {
            sl_batch_unref(b);
            return sl_task_fail(t, SL_ENOMEM, "out of memory");
        }
        st->ooc_out = nb;
        st->cap_ooc_out = cap;
    }
    st->ooc_out[st->n_ooc_out++] = b;
    st->ooc_rows += sl_batch_num_rows(b);
    return SL_OK;
}

int gj_trace_open(sl_task_t *t, struct gj_trace *tr)
{
    memset(tr, 0, sizeof *tr);
    if (!sl__task_tracing(t))
        return SL_OK;
    if (!(tr->ev = sl_task_alloc(t, GJ_TRACE_MAX * sizeof *tr->ev)))
        return SL_ENOMEM;
    tr->on = 1;
    return SL_OK;
}

int gj_trace_begin(struct gj_trace *tr, cudaStream_t s)
{
    if (!tr->on || tr->n >= GJ_TRACE_MAX)
        return -1;
    struct gj_trace_ev *e = &tr->ev[tr->n];
    memset(e, 0, sizeof *e);
    if (cudaEventCreate(&e->a) != cudaSuccess || cudaEventCreate(&e->b) != cudaSuccess ||
        cudaEventRecord(e->a, s) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    return tr->n++;
}

void gj_trace_end(struct gj_trace *tr, int i, cudaStream_t s, const char *name, int kind,
                  int lane, int64_t bytes)
{
    if (i < 0)
        return;
    struct gj_trace_ev *e = &tr->ev[i];
    e->name = name;
    e->kind = kind;
    e->lane = lane;
    e->bytes = bytes;
    if (cudaEventRecord(e->b, s) != cudaSuccess)
        cudaGetLastError();
}

void gj_trace_close(sl_task_t *t, struct gj_trace *tr, int emit)
{
    for (int i = 0; i < tr->n; i++) {
        struct gj_trace_ev *ev = &tr->ev[i];
        if (emit && ev->name)
            sl__task_trace_gpu(t, ev->name, ev->kind, ev->lane, ev->a, ev->b, ev->bytes, 0);
        cudaEventDestroy(ev->a);
        cudaEventDestroy(ev->b);
    }
    tr->n = 0;
}

/* Memory from sl_task_device_alloc is ordered on the task's stream: another stream that
 * uses it waits for that stream first. */
static int after_cs(struct ooc *o, cudaStream_t s)
{
    cudaEvent_t e;
    SL_TASK_CUDA_TRY(o->t, cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    cudaError_t r = cudaEventRecord(e, o->cs);
    if (r == cudaSuccess)
        r = cudaStreamWaitEvent(s, e, 0);
    cudaEventDestroy(e);
    SL_TASK_CUDA_TRY(o->t, r, "ordering streams");
    return SL_OK;
}

/* Device memory of the out-of-core join. SPILL_DMA (not dma_half) carves the passes'
 * buffers from one block (the arena: pass 1's set, then pass 2's in the same bytes) and
 * the cached chunks from another: the pool's blocks of 32 MiB took up to twice the budget
 * when pass 2's buffers of other sizes were allocated where pass 1's had been freed (H100,
 * 2026-11-27: 160 MiB of device memory under a 96 MiB budget). Past the arena, or without
 * it, memory comes from the pool. */
static void *dalloc(struct ooc *o, int64_t bytes)
{
    int64_t b = (bytes + 255) & ~(int64_t)255;
    if (o->arena && o->arena_at + b <= o->arena_size) {
        void *p = o->arena + o->arena_at;
        o->arena_at += b;
        return p;
    }
    return sl_task_device_alloc(o->t, (size_t)bytes);
}

static int carved(const struct ooc *o, const void *p)
{
    const char *c = p;
    return (o->arena && c >= o->arena && c < o->arena + o->arena_size) ||
           (o->cblk && c >= o->cblk && c < o->cblk + o->cblk_size);
}

static void dfree(struct ooc *o, void *p)
{
    if (p && !carved(o, p))
        sl_task_device_free(o->t, p);
}

/* ---------------- planning ---------------- */

static cudaError_t part_pairs(const struct ooc *o, void *temp, size_t *tb, const void *ki,
                              void *ko, const void *vi, void *vo, int64_t n, int begin, int bits,
                              cudaStream_t s);

/* SPILL_DMA: chunks of C rows, the largest power of two whose pass-1 set (two staging
 * buffers, two partitioned chunks: one spilling while the next is partitioned, and the
 * partitioning temp) fits the share pass 2 uses later (dma_share); the cache is what is
 * left beside the larger of the two sets, in whole chunks (every chunk holds every
 * partition, so each job finds the same share of its rows in device memory). */
static int plan_dma(struct ooc *o)
{
    int64_t half = o->share, w1 = 0;
    int64_t most = o->side[0].n > o->side[1].n ? o->side[0].n : o->side[1].n;
    for (o->chunk = (int64_t)1 << 24; o->chunk > 4096 && o->chunk / 2 >= most;)
        o->chunk /= 2; /* no larger than the larger side needs */
    int64_t step = 0; /* dma_half: powers of two; else multiples of 2^12 rows, the largest
                       * whose set fits (pass 2's pieces grow with the chunks) */
    if (!o->half) {
        int64_t c = ((half - 2 * MIB) / (5 * o->tw + 4)) & ~(int64_t)4095;
        o->chunk = c < 4096 ? 4096 : c < o->chunk ? c : o->chunk;
        step = (o->chunk / 32) & ~(int64_t)4095;
        step = step < 4096 ? 4096 : step;
    }
    for (;; o->chunk = step ? o->chunk - step : o->chunk / 2) {
        size_t need = 0;
        SL_TASK_CUDA_TRY(o->t, part_pairs(o, NULL, &need, NULL, NULL, NULL, NULL, o->chunk, 0,
                                          o->bits1, o->cs),
                         "partition temp size");
        w1 = 4 * o->chunk * o->tw + 4 * o->chunk + (int64_t)need + 4096; /* + narrow scratch */
        if (w1 <= half || o->chunk <= 4096)
            break;
    }
    o->n_ch = 0;
    for (int s = 0; s < 2; s++) {
        struct bside *sd = &o->side[s];
        sd->c0 = o->n_ch;
        sd->nc = (sd->n + o->chunk - 1) / o->chunk;
        o->n_ch += sd->nc;
    }
    int64_t set = w1 > half ? w1 : half;
    if (!o->half) {
        /* The arena (dalloc): pass 1's buffers, or pass 2's at cap2 rows, with their
         * temps, offsets and 256-byte alignment. */
        size_t need2 = 0, jneed = 0;
        int mb = o->max_bits2;
        SL_TASK_CUDA_TRY(o->t, part_pairs(o, NULL, &need2, NULL, NULL, NULL, NULL, o->cap2, 0,
                                          mb, o->cs),
                         "partition temp size");
        SL_TASK_CUDA_TRY(
            o->t,
            o->kw == 4 ? sl_k_phj_materialize_k32_v32(NULL, &jneed, NULL, NULL, NULL, NULL, NULL,
                                                      NULL, mb, mb, NULL, NULL, NULL, 0, NULL,
                                                      o->cs)
                       : sl_k_phj_materialize_k64_v64(NULL, &jneed, NULL, NULL, NULL, NULL, NULL,
                                                      NULL, mb, mb, NULL, NULL, NULL, 0, NULL,
                                                      o->cs),
            "join temp size");
        int64_t w2 = 2 * o->cap2 * (2 * o->tw + (o->fused ? 0 : o->ow)) + (int64_t)need2 +
                     (int64_t)jneed + 4096 + 4 * (((int64_t)1 << mb) + 1) * 8 + 32 * 256;
        w1 += (o->parts + 1) * 8 + 16 * 256;
        o->arena_size = w1 > w2 ? w1 : w2;
        set = o->arena_size;
    }
    int64_t cache = o->budget - set - ((int64_t)o->parts + 1) * 8 - 2 * MIB;
    int64_t cb = ((o->chunk * o->kw + 255) & ~(int64_t)255) +
                 ((o->chunk * o->vw + 255) & ~(int64_t)255); /* a cached chunk, carved */
    o->n_cache = cache > 0 ? cache / cb : 0;
    if (o->n_cache > o->n_ch)
        o->n_cache = o->n_ch;
    if (!o->half)
        o->cblk_size = o->n_cache * cb;
    o->bl = o->cap2 / 4 > 256 ? o->cap2 / 4 : 256; /* pieces of pass 2's lists, at most */
    return SL_OK;
}

/* The fanout, from the least f0 that keeps a partition pair within half a job: f0, 2·f0
 * or 4·f0, whichever packs jobs fullest (a job takes whole partitions while they fit
 * cap2 rows; counted at 97% of cap2 for the partitions' spread), the smaller unless a
 * larger one fills 3% more. Fuller jobs: fewer of them and larger pieces per chunk (at
 * 1/16 of 2^28 rows with fused sums, f0 = 256 packs 2 partitions, 71% of a job; 512
 * packs 5, 89%). */
static int64_t fanout_fill(int64_t f0, int64_t n, int64_t cap2)
{
    int64_t best = f0;
    double best_fill = 0;
    for (int64_t f = f0; f <= 4 * f0 && f <= ((int64_t)1 << 16); f *= 2) {
        double part = (double)n / (double)f;
        double k = floor(0.97 * (double)cap2 / part);
        double fill = (k < 1 ? 1 : k) * part / (double)cap2;
        if (fill > best_fill + 0.03) {
            best = f;
            best_fill = fill;
        }
    }
    return best;
}

static int plan(struct ooc *o)
{
    const int64_t nr = o->side[o->build].n, n = nr + o->side[1 - o->build].n;
    int64_t b = sl_task_device_budget(o->t) - 8 * MIB; /* counters, temps of the kernels */
    o->budget = b;
    /* Pass 2: two buffer sets (gathered, partitioned, output at the PK-FK bound) and the
     * partitioning temp, in half of the budget. */
    int64_t per_row = 2 * (2 * o->tw + o->ow) + 2 * o->tw;
    if (o->spill == SPILL_DMA && !o->half)
        per_row -= o->tw; /* the temp is for the larger side of a job: tw bytes a row */
    if (o->fused)
        per_row -= 2 * o->ow; /* no output buffers */
    o->share = o->spill == SPILL_DMA && !o->half ? dma_share(b, per_row, o->tw, n) : b / 2;
    o->cap2 = o->share / per_row;
    /* Pass-2 partition offsets (4 arrays) and the join's temp follow from its bits. */
    o->max_bits2 = join_log2_ceil((o->cap2 + 4095) / 4096);
    o->max_bits2 = o->max_bits2 < 1 ? 1 : o->max_bits2 > 16 ? 16 : o->max_bits2;
    b -= 6 * (((int64_t)1 << o->max_bits2) + 1) * 8 + MIB;
    o->budget = b;
    /* Pass 1 (SPILL_BLOCKS): two staging buffers, the partitioned chunk and the temp in a
     * quarter. */
    o->chunk = clamp64(pow2_floor((b / 4) / (5 * o->tw)), 4096, (int64_t)1 << 24);
    /* Fanout: jobs of about half of cap2 rows. */
    int64_t f = 2;
    while (f < ((int64_t)1 << 16) && f * (o->cap2 / 2) < n)
        f *= 2;
    if (o->fused) /* (measured with fused sums only) */
        f = fanout_fill(f, n, o->cap2);
    o->parts = (int)f;
    o->bits1 = join_log2_ceil(f);
    int b2 = join_log2_ceil((nr / f + 4095) / 4096);
    if (b2 + o->bits1 > 8 * o->kw)
        b2 = 8 * o->kw - o->bits1;
    o->begin1 = b2 < 0 ? 0 : b2;
    /* Blocks: partly filled ones (one per partition and side) waste at most 1/8. */
    o->bl = clamp64(pow2_floor(n / (8 * f) > 0 ? n / (8 * f) : 1), 256, (int64_t)1 << 17);
    while (o->bl > 256 && o->bl > o->cap2 / 4)
        o->bl /= 2;
    if (o->cap2 < 4 * 256)
        return sl_task_fail(o->t, SL_EBUDGET, "out-of-core join: a GPU budget of %lld bytes is "
                            "too small", (long long)b);
    if (o->spill == SPILL_DMA)
        return plan_dma(o);
    int64_t blk_bytes = o->bl * o->tw;
    o->n_blocks = 0;
    for (int s = 0; s < 2; s++) {
        struct bside *sd = &o->side[s];
        sd->b0 = o->n_blocks;
        sd->nb = (sd->n + o->bl - 1) / o->bl + f;
        o->n_blocks += sd->nb;
    }
    /* The cache: what is left of the budget beside the larger pass's working set. */
    int64_t tables = o->n_blocks * (12 + 2 * 24) + f * 48 * 2 + 2 * MIB; /* + read-back lists */
    int64_t w1 = 5 * o->chunk * o->tw;
    int64_t w2 = b / 2;
    int64_t cache = b - (w1 > w2 ? w1 : w2) - tables;
    o->n_cache = cache > 0 ? cache / blk_bytes : 0;
    int64_t expect = (n + o->bl - 1) / o->bl + f;  /* blocks likely taken */
    if (o->n_cache > expect)
        o->n_cache = expect;
    return SL_OK;
}

/* Block memory and its pointer table: block b is cached when the running share of
 * cached blocks falls behind n_cache / expected. */
static int make_blocks(struct ooc *o)
{
    sl_task_t *t = o->t;
    int64_t blk_bytes = o->bl * o->tw;
    o->h_ptr = sl_task_alloc(t, (size_t)o->n_blocks * sizeof(void *));
    o->d_ptr = sl_task_device_alloc(t, (size_t)o->n_blocks * sizeof(void *));
    o->d_part = sl_task_device_alloc(t, (size_t)o->n_blocks * sizeof(int32_t));
    if (!o->h_ptr || !o->d_ptr || !o->d_part)
        return SL_ENOMEM;
    if (o->n_cache > 0 && !(o->cache = sl_task_device_alloc(t, (size_t)(o->n_cache * blk_bytes))))
        return SL_ENOMEM;
    int64_t n_host = o->n_blocks - o->n_cache;
    o->piece_bytes = HOST_PIECE < n_host * blk_bytes ? HOST_PIECE : n_host * blk_bytes;
    if (o->piece_bytes < blk_bytes)
        o->piece_bytes = blk_bytes;
    int64_t per_piece = o->piece_bytes / blk_bytes;
    o->n_pieces = n_host > 0 ? (n_host + per_piece - 1) / per_piece : 0;
    o->pieces = sl_task_alloc(t, (size_t)(o->n_pieces + 1) * sizeof(void *));
    if (!o->pieces)
        return SL_ENOMEM;
    memset(o->pieces, 0, (size_t)(o->n_pieces + 1) * sizeof(void *));
    for (int64_t i = 0; i < o->n_pieces; i++) {
        if (!(o->pieces[i] = sl__task_pinned_alloc(t, o->piece_bytes)))
            return SL_ENOMEM;
        void *dp = NULL;
        SL_TASK_CUDA_TRY(t, cudaHostGetDevicePointer(&dp, o->pieces[i], 0),
                         "mapping pinned spill memory");
        if (dp != o->pieces[i])
            return sl_task_fail(t, SL_EUNSUPPORTED, "out-of-core join: pinned memory is not "
                                "addressed through UVA");
    }
    int64_t expect = 0, cached = 0, host = 0;
    for (int s = 0; s < 2; s++)
        expect += (o->side[s].n + o->bl - 1) / o->bl + o->parts / 2;
    for (int64_t b = 0; b < o->n_blocks; b++) {
        int dev = cached < o->n_cache &&
                  (host >= n_host || (__int128)(b + 1) * o->n_cache >= (__int128)(cached + 1) * expect);
        if (dev) {
            o->h_ptr[b] = o->cache + cached++ * blk_bytes;
        } else {
            o->h_ptr[b] = (char *)o->pieces[host / per_piece] + (host % per_piece) * blk_bytes;
            host++;
        }
    }
    SL_TASK_CUDA_TRY(t,
                     cudaMemcpyAsync(o->d_ptr, o->h_ptr, (size_t)o->n_blocks * sizeof(void *),
                                     cudaMemcpyHostToDevice, o->cs),
                     "block table");
    return SL_OK;
}

static void free_blocks(struct ooc *o)
{
    for (int64_t i = 0; o->pieces && i < o->n_pieces; i++)
        sl__task_pinned_free(o->t, o->pieces[i], o->piece_bytes);
    for (int64_t c = 0; o->ch && c < o->n_ch; c++) {
        struct chunk *ch = &o->ch[c];
        if (!ch->k)
            continue;
        if (ch->dev) {
            dfree(o, ch->k);
            dfree(o, ch->v);
        } else {
            sl__task_pinned_free(o->t, ch->k, ch->n * o->tw);
        }
    }
    if (o->h_offs)
        sl__task_pinned_free(o->t, o->h_offs, o->n_ch * (o->parts + 1) * 8);
}

/* ---------------- pass 1 ---------------- */

static cudaError_t part_pairs(const struct ooc *o, void *temp, size_t *tb, const void *ki,
                              void *ko, const void *vi, void *vo, int64_t n, int begin, int bits,
                              cudaStream_t s)
{
#define SL_P(SUF) sl_k_partition_pairs_##SUF(temp, tb, ki, ko, vi, vo, n, begin, bits, 8, \
                                             SL_K_PART_CUB, s)
    if (o->kw == 4)
        return o->vw == 4 ? SL_P(k32_v32) : SL_P(k32_v64);
    return o->vw == 4 ? SL_P(k64_v32) : SL_P(k64_v64);
#undef SL_P
}

static cudaError_t part_offsets(const struct ooc *o, const void *k, int64_t n, int begin,
                                int bits, int64_t *off, cudaStream_t s)
{
    return o->kw == 8 ? sl_k_partition_offsets_k64(k, n, begin, bits, off, s)
                      : sl_k_partition_offsets_k32(k, n, begin, bits, off, s);
}

static int temp_for(struct ooc *o, int64_t rows, int bits)
{
    size_t need = 0;
    SL_TASK_CUDA_TRY(o->t, part_pairs(o, NULL, &need, NULL, NULL, NULL, NULL, rows, 0, bits, o->cs),
                     "partition temp size");
    if (need > o->ptemp_cap) {
        dfree(o, o->ptemp);
        if (!(o->ptemp = dalloc(o, (int64_t)need)))
            return SL_ENOMEM;
        o->ptemp_cap = need;
    }
    return SL_OK;
}

/* Uploads chunk c of side s (up to C rows from batch *bi, row *row on) into staging
 * buffer c & 1 on the h2d stream; *n rows. */
static int upload_chunk(struct ooc *o, int s, int64_t c, int64_t *bi_, int64_t *row_,
                        void *stg_k[2], void *stg_v[2], cudaEvent_t e_h2d[2],
                        const struct sl__upload_stage *hs, int64_t *n_)
{
    sl_task_t *t = o->t;
    const struct join_side *js = &o->st->side[s];
    const int key = o->d->key[s][0], val = o->pcol[s];
    const int slot = (int)(c & 1);
    int64_t bi = *bi_, row = *row_, n = 0, up = 0;
    if (hs->stager && c >= 2) /* the slot's pinned buffer is free once its copies are */
        SL_TASK_CUDA_TRY(t, cudaEventSynchronize(e_h2d[slot]), "waiting for a staging buffer");
    int tr = gj_trace_begin(&o->tr, o->h2d);
    while (n < o->chunk && bi < js->n_batches) {
        const sl_batch_t *b = js->batches[bi];
        int64_t take = sl_batch_num_rows(b) - row;
        if (take > o->chunk - n)
            take = o->chunk - n;
        const struct sl__col *col[2] = {&b->cols[key], &b->cols[val]};
        const int w[2] = {o->kw, o->vw};
        char *dst[2] = {(char *)stg_k[slot] + n * o->kw, (char *)stg_v[slot] + n * o->vw};
        const int64_t at[2] = {n * o->kw, o->chunk * o->kw + n * o->vw};
        for (int j = 0; j < 2; j++) {
            const struct sl__col *cc = col[j];
            /* A pinned table's narrow copy goes up instead, widened into place on this
             * stream (the copies after it wait for the kernel: one scratch buffer). */
            const struct sl__narrow *nw =
                o->d_narrow && !hs->stager ? sl__task_narrow_of(t, cc->data, w[j], cc->offset + row,
                                                                take)
                                           : NULL;
            if (nw) {
                const char *src = (const char *)nw->buf->ptr +
                                  (cc->offset + row - nw->first) * (int64_t)nw->width;
                SL_TASK_CUDA_TRY(t,
                                 cudaMemcpyAsync(o->d_narrow, src, (size_t)(take * nw->width),
                                                 cudaMemcpyHostToDevice, o->h2d),
                                 "uploading narrow values");
                int rc = sl__task_widen(t, dst[j], nw, o->d_narrow, take, o->h2d);
                if (rc < 0)
                    return rc;
                up += take * nw->width;
                continue;
            }
            const void *src = sl__upload_stage_src(hs, slot, at[j], cc->data,
                                                   (const char *)cc->data->ptr +
                                                       (cc->offset + row) * w[j],
                                                   (size_t)(take * w[j]));
            SL_TASK_CUDA_TRY(t,
                             cudaMemcpyAsync(dst[j], src, (size_t)(take * w[j]),
                                             cudaMemcpyDefault, o->h2d),
                             j ? "uploading values" : "uploading keys");
            up += take * w[j];
        }
        n += take;
        row += take;
        if (row == sl_batch_num_rows(b)) {
            bi++;
            row = 0;
        }
    }
    gj_trace_end(&o->tr, tr, o->h2d, "ooc_upload", 1, 0, up);
    SL_TASK_CUDA_TRY(t, cudaEventRecord(e_h2d[slot], o->h2d), "cudaEventRecord");
    o->up_bytes += up;
    *bi_ = bi;
    *row_ = row;
    *n_ = n;
    return SL_OK;
}

/* Partitions the chunk in staging buffer `slot` (n rows, once its upload is done) on
 * pass 1's bits into (pk, pv) on the task stream, e_used[slot] after it, and its
 * partition offsets into d_off. */
static int partition_chunk(struct ooc *o, int slot, void *stg_k[2], void *stg_v[2], void *pk,
                           void *pv, int64_t n, int64_t *d_off, cudaEvent_t e_h2d[2],
                           cudaEvent_t e_used[2])
{
    sl_task_t *t = o->t;
    SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(o->cs, e_h2d[slot], 0), "ordering the upload");
    int tr = gj_trace_begin(&o->tr, o->cs);
    size_t tb = o->ptemp_cap;
    SL_TASK_CUDA_TRY(t,
                     part_pairs(o, o->ptemp, &tb, stg_k[slot], pk, stg_v[slot], pv, n, o->begin1,
                                o->bits1, o->cs),
                     "partitioning (pass 1)");
    SL_TASK_CUDA_TRY(t, cudaEventRecord(e_used[slot], o->cs), "cudaEventRecord");
    SL_TASK_CUDA_TRY(t, part_offsets(o, pk, n, o->begin1, o->bits1, d_off, o->cs),
                     "partition offsets");
    gj_trace_end(&o->tr, tr, o->cs, "ooc_partition", 3, 1, 0);
    return SL_OK;
}

/* Streams one input side through pass 1. */
static int pass1_side(struct ooc *o, int s, void *stg_k[2], void *stg_v[2], void *pk, void *pv,
                      int64_t *d_off, cudaEvent_t e_h2d[2], cudaEvent_t e_used[2],
                      const struct sl__upload_stage *hs)
{
    sl_task_t *t = o->t;
    struct bside *sd = &o->side[s];
    int64_t *d_cur = sl_task_device_alloc(t, (size_t)o->parts * 2 * sizeof(int64_t));
    int64_t *d_plan = sl_task_device_alloc(t, (size_t)o->parts * 4 * sizeof(int64_t));
    unsigned long long *d_next = sl_task_device_alloc(t, sizeof *d_next);
    if (!d_cur || !d_plan || !d_next)
        return SL_ENOMEM;
    int64_t *d_fill = d_cur + o->parts;
    SL_TASK_CUDA_TRY(t, cudaMemsetAsync(d_cur, 0, (size_t)o->parts * 2 * sizeof(int64_t), o->cs),
                     "zeroing");
    SL_TASK_CUDA_TRY(t, cudaMemsetAsync(d_next, 0, sizeof *d_next, o->cs), "zeroing");
    int64_t bi = 0, row = 0;
    for (int64_t c = 0, done = 0; done < sd->n; c++) {
        int slot = (int)(c & 1);
        if (c >= 2)
            SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(o->h2d, e_used[slot], 0), "ordering staging");
        int64_t n = 0;
        int rc = upload_chunk(o, s, c, &bi, &row, stg_k, stg_v, e_h2d, hs, &n);
        if (rc < 0)
            return rc;
        if ((rc = partition_chunk(o, slot, stg_k, stg_v, pk, pv, n, d_off, e_h2d, e_used)) < 0)
            return rc;
        int tr = gj_trace_begin(&o->tr, o->cs);
        SL_TASK_CUDA_TRY(t,
                         sl_k_ooc_append(pk, pv, n, o->kw, o->vw, d_off, o->bits1, o->bl,
                                         o->d_ptr + sd->b0, o->d_part + sd->b0, sd->nb, d_next,
                                         d_cur, d_fill, d_plan, o->d_status, o->cs),
                         "appending to blocks");
        gj_trace_end(&o->tr, tr, o->cs, "ooc_append_spill", 3, 1, n * o->tw);
        done += n;
        if (n == 0)
            return sl_task_fail(t, SL_EINTERNAL, "out-of-core join: input rows miscounted");
    }
    /* The block lists, on the host. */
    int64_t *h = sl_task_alloc(t, (size_t)(o->parts * 2 + 1) * sizeof(int64_t));
    int32_t *part = sl_task_alloc(t, (size_t)sd->nb * sizeof(int32_t));
    int64_t *b_rows = sl_task_alloc(t, (size_t)sd->nb * sizeof(int64_t));
    sd->p_start = sl_task_alloc(t, (size_t)(o->parts + 1) * sizeof(int64_t));
    sd->p_rows = sl_task_alloc(t, (size_t)o->parts * sizeof(int64_t));
    if (!h || !part || !b_rows || !sd->p_start || !sd->p_rows)
        return SL_ENOMEM;
    unsigned long long used = 0;
    int32_t status = 0;
    SL_TASK_CUDA_TRY(t,
                     cudaMemcpyAsync(h, d_cur, (size_t)o->parts * 2 * sizeof(int64_t),
                                     cudaMemcpyDeviceToHost, o->cs),
                     "reading block lists");
    SL_TASK_CUDA_TRY(t, cudaMemcpyAsync(&used, d_next, sizeof used, cudaMemcpyDeviceToHost, o->cs),
                     "reading block lists");
    SL_TASK_CUDA_TRY(
        t, cudaMemcpyAsync(&status, o->d_status, sizeof status, cudaMemcpyDeviceToHost, o->cs),
        "reading block lists");
    SL_TASK_CUDA_TRY(t, cudaStreamSynchronize(o->cs), "pass 1");
    if (status != 0 || (int64_t)used > sd->nb)
        return sl_task_fail(t, SL_EINTERNAL, "out-of-core join: pass 1 ran out of blocks");
    sd->used = (int64_t)used;
    if (used)
        SL_TASK_CUDA_TRY(
            t, cudaMemcpy(part, o->d_part + sd->b0, used * sizeof(int32_t), cudaMemcpyDeviceToHost),
            "reading block lists");
    memset(sd->p_start, 0, (size_t)(o->parts + 1) * sizeof(int64_t));
    memset(sd->p_rows, 0, (size_t)o->parts * sizeof(int64_t));
    for (int64_t b = 0; b < sd->used; b++) {
        int p = part[b];
        b_rows[b] = b + 1 == h[p] ? h[o->parts + p] : o->bl;
        sd->p_start[p + 1]++;
        sd->p_rows[p] += b_rows[b];
    }
    for (int p = 0; p < o->parts; p++)
        sd->p_start[p + 1] += sd->p_start[p];
    sd->blk = sl_task_alloc(t, (size_t)(sd->used + 1) * sizeof *sd->blk);
    int64_t *at = sl_task_alloc(t, (size_t)o->parts * sizeof(int64_t));
    if (!sd->blk || !at)
        return SL_ENOMEM;
    memcpy(at, sd->p_start, (size_t)o->parts * sizeof(int64_t));
    for (int64_t b = 0; b < sd->used; b++) {
        char *k = o->h_ptr[sd->b0 + b];
        sd->blk[at[part[b]]++] = (struct blk){k, k + o->bl * o->kw, b_rows[b], 0};
    }
    sd->n_blk = sd->used;
    int64_t total = 0;
    for (int p = 0; p < o->parts; p++)
        total += sd->p_rows[p];
    sl_task_free(t, at);
    sl_task_free(t, b_rows);
    sl_task_free(t, part);
    sl_task_free(t, h);
    sl_task_device_free(t, d_cur);
    sl_task_device_free(t, d_plan);
    sl_task_device_free(t, d_next);
    if (total != sd->n)
        return sl_task_fail(t, SL_EINTERNAL, "out-of-core join: pass 1 kept %lld of %lld rows",
                            (long long)total, (long long)sd->n);
    return SL_OK;
}

/* Pageable input of pass 1 goes through pinned staging (gpu_ext.h): one chunk's keys
 * and values per buffer. */
static int hstage_open(struct ooc *o, struct sl__upload_stage *hs)
{
    int pageable = 0;
    for (int s = 0; s < 2 && !pageable; s++) {
        const struct join_side *js = &o->st->side[s];
        for (int64_t i = 0; i < js->n_batches && !pageable; i++) {
            const sl_batch_t *b = js->batches[i];
            pageable = b->cols[o->d->key[s][0]].data->kind == SL__MEM_HOST ||
                       b->cols[o->pcol[s]].data->kind == SL__MEM_HOST;
        }
    }
    return sl__upload_stage_open(o->t, hs, pageable ? o->chunk * (o->kw + o->vw) : 0);
}

/* SPILL_DMA: streams side s through pass 1. Chunk c is uploaded into staging buffer
 * c & 1 (h2d stream) and partitioned on the task stream into buffers of its own when it
 * is cached, else into partitioned buffer i & 1 (i: chunks spilled so far), which the d2h
 * stream then copies whole into pinned memory (DMA: the link's other direction, while the
 * next chunks go up); the partition kernel of spilled chunk i + 2 waits for that copy.
 * Each chunk's partition offsets go to o->h_offs. */
static int pass1_dma_side(struct ooc *o, int s, void *stg_k[2], void *stg_v[2], void *pk[2],
                          void *pv[2], int64_t *d_off, cudaEvent_t ev[8],
                          const struct sl__upload_stage *hs, int64_t *cached, int64_t *spilled)
{
    sl_task_t *t = o->t;
    struct bside *sd = &o->side[s];
    cudaEvent_t *e_h2d = ev, *e_used = ev + 2, *e_part = ev + 4, *e_spill = ev + 6;
    int64_t bi = 0, row = 0;
    for (int64_t c = 0; c < sd->nc; c++) {
        /* Staging slots by the chunk's number over both sides: no wait between them. */
        int64_t gc = (s == o->build ? 0 : o->side[o->build].nc) + c, n = 0;
        int slot = (int)(gc & 1);
        struct chunk *ch = &o->ch[sd->c0 + c];
        if (gc >= 2)
            SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(o->h2d, e_used[slot], 0), "ordering staging");
        int rc = upload_chunk(o, s, gc, &bi, &row, stg_k, stg_v, e_h2d, hs, &n);
        if (rc < 0)
            return rc;
        if (n == 0 || (c + 1 < sd->nc && n != o->chunk))
            return sl_task_fail(t, SL_EINTERNAL, "out-of-core join: input rows miscounted");
        ch->n = n;
        /* Cached when the running share of cached chunks falls behind n_cache / n_ch. */
        ch->dev = *cached < o->n_cache &&
                  (__int128)(gc + 1) * o->n_cache >= (__int128)(*cached + 1) * o->n_ch;
        gc = sd->c0 + c; /* its place in o->ch and o->h_offs */
        int ps = (int)(*spilled & 1);
        char *dk, *dv; /* where the chunk is partitioned to */
        if (ch->dev) {
            int64_t kb = (n * o->kw + 255) & ~(int64_t)255, vb = (n * o->vw + 255) & ~(int64_t)255;
            if (o->cblk && o->cblk_at + kb + vb <= o->cblk_size) {
                dk = ch->k = o->cblk + o->cblk_at;
                dv = ch->v = o->cblk + o->cblk_at + kb;
                o->cblk_at += kb + vb;
            } else {
                dk = ch->k = sl_task_device_alloc(t, (size_t)(n * o->kw));
                dv = ch->v = sl_task_device_alloc(t, (size_t)(n * o->vw));
            }
            if (!ch->k || !ch->v)
                return SL_ENOMEM;
            ++*cached;
        } else {
            if (*spilled >= 2)
                SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(o->cs, e_spill[ps], 0),
                                 "ordering the spill");
            dk = pk[ps];
            dv = pv[ps];
        }
        if ((rc = partition_chunk(o, slot, stg_k, stg_v, dk, dv, n, d_off, e_h2d, e_used)) < 0)
            return rc;
        size_t ob = ((size_t)o->parts + 1) * sizeof(int64_t);
        SL_TASK_CUDA_TRY(t,
                         cudaMemcpyAsync(o->h_offs + gc * (o->parts + 1), d_off, ob,
                                         cudaMemcpyDeviceToHost, o->cs),
                         "reading partition offsets");
        if (ch->dev)
            continue;
        /* The spill: the partitioned chunk, whole, into pinned memory. */
        char *h = sl__task_pinned_alloc(t, n * o->tw);
        if (!h)
            return SL_ENOMEM;
        ch->k = h; /* (freed as pinned memory from here on) */
        ch->v = h + n * o->kw;
        SL_TASK_CUDA_TRY(t, cudaEventRecord(e_part[ps], o->cs), "cudaEventRecord");
        SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(o->d2h, e_part[ps], 0), "ordering the spill");
        int tr = gj_trace_begin(&o->tr, o->d2h);
        SL_TASK_CUDA_TRY(t,
                         cudaMemcpyAsync(h, dk, (size_t)(n * o->kw), cudaMemcpyDeviceToHost,
                                         o->d2h),
                         "spilling keys");
        SL_TASK_CUDA_TRY(t,
                         cudaMemcpyAsync(h + n * o->kw, dv, (size_t)(n * o->vw),
                                         cudaMemcpyDeviceToHost, o->d2h),
                         "spilling values");
        gj_trace_end(&o->tr, tr, o->d2h, "ooc_spill", 2, 2, n * o->tw);
        SL_TASK_CUDA_TRY(t, cudaEventRecord(e_spill[ps], o->d2h), "cudaEventRecord");
        ++*spilled;
    }
    return SL_OK;
}

/* SPILL_DMA: side s's pieces by partition, from its chunks' offsets: partition p's rows
 * of chunk c, in pieces of at most o->bl rows (a quarter of a job). */
static int dma_lists(struct ooc *o, int s)
{
    sl_task_t *t = o->t;
    struct bside *sd = &o->side[s];
    const int64_t np = o->parts, L = o->bl;
    sd->p_start = sl_task_alloc(t, (size_t)(np + 1) * sizeof(int64_t));
    sd->p_rows = sl_task_alloc(t, (size_t)np * sizeof(int64_t));
    if (!sd->p_start || !sd->p_rows)
        return SL_ENOMEM;
    memset(sd->p_start, 0, (size_t)(np + 1) * sizeof(int64_t));
    memset(sd->p_rows, 0, (size_t)np * sizeof(int64_t));
    int64_t total = 0;
    for (int64_t c = sd->c0; c < sd->c0 + sd->nc; c++) {
        const int64_t *off = o->h_offs + c * (np + 1);
        if (off[0] != 0 || off[np] != o->ch[c].n)
            return sl_task_fail(t, SL_EINTERNAL, "out-of-core join: bad partition offsets");
        for (int64_t p = 0; p < np; p++) {
            int64_t r = off[p + 1] - off[p];
            sd->p_start[p + 1] += (r + L - 1) / L;
            sd->p_rows[p] += r;
            total += r;
        }
    }
    if (total != sd->n)
        return sl_task_fail(t, SL_EINTERNAL, "out-of-core join: pass 1 kept %lld of %lld rows",
                            (long long)total, (long long)sd->n);
    for (int64_t p = 0; p < np; p++)
        sd->p_start[p + 1] += sd->p_start[p];
    sd->n_blk = sd->p_start[np];
    sd->blk = sl_task_alloc(t, (size_t)(sd->n_blk + 1) * sizeof *sd->blk);
    int64_t *at = sl_task_alloc(t, (size_t)np * sizeof(int64_t));
    if (!sd->blk || !at)
        return SL_ENOMEM;
    memcpy(at, sd->p_start, (size_t)np * sizeof(int64_t));
    for (int64_t c = sd->c0; c < sd->c0 + sd->nc; c++) {
        const int64_t *off = o->h_offs + c * (np + 1);
        const struct chunk *ch = &o->ch[c];
        for (int64_t p = 0; p < np; p++)
            for (int64_t i = off[p]; i < off[p + 1]; i += L) {
                int64_t r = off[p + 1] - i < L ? off[p + 1] - i : L;
                sd->blk[at[p]++] =
                    (struct blk){ch->k + i * o->kw, ch->v + i * o->vw, r, ch->dev};
            }
    }
    sl_task_free(t, at);
    return SL_OK;
}

/* 1 when an input column has a narrow copy (a pinned table's, narrow.c). */
static int has_narrow(const struct ooc *o)
{
    for (int s = 0; s < 2; s++) {
        const struct join_side *js = &o->st->side[s];
        for (int64_t i = 0; i < js->n_batches; i++) {
            const sl_batch_t *b = js->batches[i];
            if ((b->cols[o->d->key[s][0]].data && b->cols[o->d->key[s][0]].data->narrow) ||
                (b->cols[o->pcol[s]].data && b->cols[o->pcol[s]].data->narrow))
                return 1;
        }
    }
    return 0;
}

static int pass1(struct ooc *o)
{
    sl_task_t *t = o->t;
    const int dma = o->spill == SPILL_DMA;
    void *stg_k[2], *stg_v[2], *pk[2] = {0}, *pv[2] = {0};
    int64_t *d_off;
    cudaEvent_t ev[8] = {0};
    int rc = SL_OK;
    for (int i = 0; i < 2; i++) {
        stg_k[i] = dalloc(o, o->chunk * o->kw);
        stg_v[i] = dalloc(o, o->chunk * o->vw);
        if (!stg_k[i] || !stg_v[i])
            return SL_ENOMEM;
    }
    for (int i = 0; i < 1 + dma; i++) {
        pk[i] = dalloc(o, o->chunk * o->kw);
        pv[i] = dalloc(o, o->chunk * o->vw);
        if (!pk[i] || !pv[i])
            return SL_ENOMEM;
    }
    d_off = dalloc(o, (o->parts + 1) * (int64_t)sizeof(int64_t));
    if (!d_off || (rc = temp_for(o, o->chunk, o->bits1)) < 0)
        return rc < 0 ? rc : SL_ENOMEM;
    if (dma && has_narrow(o) && !(o->d_narrow = dalloc(o, o->chunk * 4)))
        return SL_ENOMEM;
    if (dma) {
        o->ch = sl_task_alloc(t, (size_t)o->n_ch * sizeof *o->ch);
        o->h_offs = sl__task_pinned_alloc(t, o->n_ch * (o->parts + 1) * 8);
        if (!o->ch || !o->h_offs)
            return SL_ENOMEM;
        memset(o->ch, 0, (size_t)o->n_ch * sizeof *o->ch);
    }
    for (int i = 0; i < 8; i++)
        SL_TASK_CUDA_TRY(t, cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming),
                         "cudaEventCreate");
    if ((rc = after_cs(o, o->h2d)) < 0 || (rc = after_cs(o, o->d2h)) < 0)
        return rc;
    struct sl__upload_stage hs;
    rc = hstage_open(o, &hs);
    int64_t cached = 0, spilled = 0;
    for (int k = 0; k < 2 && rc >= 0; k++) {
        int s = k == 0 ? o->build : 1 - o->build;
        rc = dma ? pass1_dma_side(o, s, stg_k, stg_v, pk, pv, d_off, ev, &hs, &cached, &spilled)
                 : pass1_side(o, s, stg_k, stg_v, pk[0], pv[0], d_off, ev, ev + 2, &hs);
    }
    cudaStreamSynchronize(o->h2d);
    cudaStreamSynchronize(o->d2h);
    if (dma && rc >= 0) {
        int e = SL_TASK_CUDA_CALL(cudaStreamSynchronize(o->cs));
        if (e != 0)
            rc = SL_TASK_CUDA_FAIL(t, e, "pass 1");
        for (int s = 0; s < 2 && rc >= 0; s++)
            rc = dma_lists(o, s);
        o->n_blocks = o->side[0].n_blk + o->side[1].n_blk;
    }
    sl__upload_stage_close(t, &hs);
    for (int i = 0; i < 8; i++)
        cudaEventDestroy(ev[i]);
    for (int i = 0; i < 2; i++) {
        dfree(o, stg_k[i]);
        dfree(o, stg_v[i]);
        dfree(o, pk[i]);
        dfree(o, pv[i]);
    }
    dfree(o, d_off);
    dfree(o, o->d_narrow);
    o->d_narrow = NULL;
    dfree(o, o->ptemp);
    o->ptemp = NULL;
    o->ptemp_cap = 0;
    o->arena_at = 0; /* pass 2's buffers in the same bytes (the streams are idle) */
    return rc;
}

/* ---------------- pass 2 ---------------- */

static int grow(struct ooc *o, void **p, int64_t bytes)
{
    dfree(o, *p);
    *p = dalloc(o, bytes);
    return *p ? SL_OK : SL_ENOMEM;
}

/* Room for `rows` gathered rows (a and b: keys and values); *cap grows to it. */
static int reserve_pair(struct ooc *o, void **a, void **b, int64_t *cap, int64_t rows)
{
    if (rows <= *cap)
        return SL_OK;
    int rc;
    if ((rc = grow(o, a, rows * o->kw)) < 0 || (rc = grow(o, b, rows * o->vw)) < 0)
        return rc;
    *cap = rows;
    return SL_OK;
}

static int gset_reserve_out(struct ooc *o, struct gset *g, int64_t rows)
{
    if (rows <= g->cap_out)
        return SL_OK;
    int rc;
    if ((rc = grow(o, &g->ok, rows * o->kw)) < 0 || (rc = grow(o, &g->ob, rows * o->vw)) < 0 ||
        (rc = grow(o, &g->op, rows * o->vw)) < 0)
        return rc;
    g->cap_out = rows;
    return SL_OK;
}

static int blk_by_key(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const struct blk *)a)->k, y = (uintptr_t)((const struct blk *)b)->k;
    return x < y ? -1 : x > y;
}

static int cp_add(struct ooc *o, void *dst, const void *src, size_t bytes)
{
    if (o->n_cp == o->cap_cp) {
        size_t cap = o->cap_cp ? 2 * o->cap_cp : 256;
        void **d = realloc(o->cp_dst, cap * sizeof *d), **s = d ? realloc(o->cp_src, cap * sizeof *s) : NULL;
        if (d)
            o->cp_dst = d;
        if (s)
            o->cp_src = s;
        size_t *z = s ? realloc(o->cp_size, cap * sizeof *z) : NULL;
        if (!z)
            return sl_task_fail(o->t, SL_ENOMEM, "out of memory");
        o->cp_size = z;
        o->cap_cp = cap;
    }
    o->cp_dst[o->n_cp] = dst;
    o->cp_src[o->n_cp] = (void *)src;
    o->cp_size[o->n_cp++] = bytes;
    return SL_OK;
}

/* Lists the copies that bring the pieces at list indices [i0, i1) of side sd to (k, v)
 * from row `at` (o->cp_*, made by submit in one batch); with zero_copy, lists them for
 * the read-back kernel instead. The pieces go in address order, and pieces adjacent in
 * memory (a chunk's consecutive partitions, or consecutive blocks) in one copy: a job's
 * rows need not keep the partition order, pass 2 partitions them again. */
static int gather(struct ooc *o, struct gread *g, const struct bside *sd, int64_t i0,
                  int64_t i1, void *k, void *v, int64_t at)
{
    if (o->zero_copy) {
        for (int64_t i = i0; i < i1; i++) {
            int64_t m = g->n_list++;
            g->h_list[m] = (int64_t)(uintptr_t)sd->blk[i].k;
            g->h_list[o->n_blocks + m] = sd->blk[i].rows;
            g->h_list[2 * o->n_blocks + m] = at;
            at += sd->blk[i].rows;
        }
        return SL_OK;
    }
    if (i1 <= i0)
        return SL_OK;
    struct blk *b = o->tmp;
    memcpy(b, sd->blk + i0, (size_t)(i1 - i0) * sizeof *b);
    qsort(b, (size_t)(i1 - i0), sizeof *b, blk_by_key);
    struct blk cur = b[0];
    int rc = SL_OK;
    for (int64_t i = 1; i <= i1 - i0 && rc >= 0; i++) {
        if (i < i1 - i0 && b[i].k == cur.k + cur.rows * o->kw && b[i].v == cur.v + cur.rows * o->vw) {
            cur.rows += b[i].rows;
            continue;
        }
        if (cur.dev && !o->half) { /* gathered by a kernel (compute_job): copy engines took
                                     * some microseconds a piece (dma_half: copies, as before) */
            if (g->n_dp == g->cap_dp) {
                int64_t c = g->cap_dp ? 2 * g->cap_dp : 64;
                struct dpiece *d = realloc(g->dp, (size_t)c * sizeof *d);
                if (!d)
                    return sl_task_fail(o->t, SL_ENOMEM, "out of memory");
                g->dp = d;
                g->cap_dp = c;
            }
            g->dp[g->n_dp++] = (struct dpiece){cur.k, cur.v, cur.rows, at};
        } else if ((rc = cp_add(o, (char *)k + at * o->kw, cur.k,
                                (size_t)(cur.rows * o->kw))) >= 0) {
            rc = cp_add(o, (char *)v + at * o->vw, cur.v, (size_t)(cur.rows * o->vw));
        }
        at += cur.rows;
        if (i < i1 - i0)
            cur = b[i];
    }
    return rc;
}

static cudaError_t materialize(const struct ooc *o, struct gset *g, size_t *tb)
{
    const char *rk = g->pk, *rv = g->pv;
    const char *sk = (const char *)g->pk + g->nr * o->kw, *sv = (const char *)g->pv + g->nr * o->vw;
#define SL_M(SUF) sl_k_phj_materialize_##SUF(o->jtemp, tb, (const void *)rk, (const void *)rv,  \
                                            g->roff, (const void *)sk, (const void *)sv,       \
                                            g->soff, g->bits2, g->bits2, g->ok, g->ob, g->op,  \
                                            g->cap_out, g->d_count, o->cs)
    if (o->kw == 4)
        return o->vw == 4 ? SL_M(k32_v32) : SL_M(k32_v64);
    return o->vw == 4 ? SL_M(k64_v32) : SL_M(k64_v64);
#undef SL_M
}

/* fused: the job's count and sums into its 4 words of d_res (task stream). */
static int run_count_sum(struct ooc *o, struct gset *g)
{
    size_t tb = o->jtemp_cap;
    int tr = gj_trace_begin(&o->tr, o->cs);
    SL_TASK_CUDA_TRY(o->t,
                     sl_k_phj_count_sum_sx_k32_v32(
                         o->jtemp, &tb, g->pk, g->pv, g->roff,
                         (const uint32_t *)g->pk + g->nr, (const uint32_t *)g->pv + g->nr,
                         g->soff, g->bits2, g->bits2, o->d_res + 4 * g->idx, o->cs),
                     "join (pass 2)");
    gj_trace_end(&o->tr, tr, o->cs, "ooc_join", 3, 1, 0);
    SL_TASK_CUDA_TRY(o->t, cudaEventRecord(g->e_done, o->cs), "cudaEventRecord");
    SL_TASK_CUDA_TRY(o->t, cudaEventRecord(g->e_d2h, o->cs), "cudaEventRecord");
    return SL_OK;
}

static int run_materialize(struct ooc *o, struct gset *g)
{
    size_t tb = o->jtemp_cap;
    int tr = gj_trace_begin(&o->tr, o->cs);
    SL_TASK_CUDA_TRY(o->t, cudaStreamWaitEvent(o->cs, g->e_d2h, 0), "ordering the result buffers");
    SL_TASK_CUDA_TRY(o->t, materialize(o, g, &tb), "join (pass 2)");
    SL_TASK_CUDA_TRY(
        o->t,
        cudaMemcpyAsync(g->h_count, g->d_count, sizeof *g->h_count, cudaMemcpyDeviceToHost, o->cs),
        "reading the match count");
    gj_trace_end(&o->tr, tr, o->cs, "ooc_join", 3, 1, 0);
    SL_TASK_CUDA_TRY(o->t, cudaEventRecord(g->e_done, o->cs), "cudaEventRecord");
    return SL_OK;
}

/* Job j's read-back into rd (h2d stream): its pieces, in one batch of copies, or listed
 * for the read-back kernel. It waits (on the GPU) until rd's previous job was
 * partitioned, so the host may queue it while that job's join still runs: pass 2 keeps
 * two read-backs queued on the link (before 2026-11-27 session 16, job k + 1's read-back
 * was queued only once job k - 1 was finished, and the link idled whenever a job's
 * kernels and the host's wait for them took longer than a read-back). */
static int read_job(struct ooc *o, struct gread *g, const struct job *j)
{
    sl_task_t *t = o->t;
    const struct bside *r = &o->side[o->build], *s = &o->side[1 - o->build];
    int rc;
    /* New buffers are ordered on the task stream (the old ones are freed there, after
     * the partitioning that read them). */
    int64_t cap = g->cap;
    if ((rc = reserve_pair(o, &g->k, &g->v, &g->cap, j->nr + j->ns)) < 0 ||
        (g->cap != cap && (rc = after_cs(o, o->h2d)) < 0))
        return rc;
    if (o->zero_copy) /* its block lists: the previous job's upload of them is done */
        SL_TASK_CUDA_TRY(t, cudaEventSynchronize(g->e_gather), "reading back");
    SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(o->h2d, g->e_part, 0), "ordering the read-back");
    g->job = *j;
    int tr = gj_trace_begin(&o->tr, o->h2d);
    g->n_list = 0;
    g->n_dp = 0;
    o->n_cp = 0;
    if ((rc = gather(o, g, r, r->p_start[j->p0], r->p_start[j->p1], g->k, g->v, 0)) < 0 ||
        (rc = gather(o, g, s, j->s0, j->s1, g->k, g->v, j->nr)) < 0 ||
        (rc = sl__ooc_copy_batch(t, o->cp_dst, o->cp_src, o->cp_size, o->n_cp, 1, o->h2d,
                                 "reading back")) < 0)
        return rc;
    if (o->zero_copy && g->n_list > 0) {
        int64_t m = g->n_list, nb = o->n_blocks;
        for (int a = 0; a < 3; a++)
            SL_TASK_CUDA_TRY(t,
                             cudaMemcpyAsync(g->d_list + a * nb, g->h_list + a * nb, (size_t)m * 8,
                                             cudaMemcpyHostToDevice, o->h2d),
                             "block list");
        SL_TASK_CUDA_TRY(t,
                         sl_k_ooc_gather((const void *const *)g->d_list, g->d_list + nb,
                                         g->d_list + 2 * nb, m, o->bl, o->kw, o->vw, g->k, g->v,
                                         o->h2d),
                         "reading back");
    }
    gj_trace_end(&o->tr, tr, o->h2d, "ooc_read_back", 1, 0, (j->nr + j->ns) * o->tw);
    SL_TASK_CUDA_TRY(t, cudaEventRecord(g->e_gather, o->h2d), "cudaEventRecord");
    return SL_OK;
}

/* Joins the job read back into rd in set g (task stream): partitions both sides on
 * [0, b2) once the read-back is done, then the join. g's previous job is finished. */
static int compute_job(struct ooc *o, struct gread *rd, struct gset *g)
{
    sl_task_t *t = o->t;
    const struct job *j = &rd->job;
    int rc;
    g->nr = j->nr;
    g->ns = j->ns;
    g->job = *j;
    /* The output buffers may still be downloading the set's previous result. */
    SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(o->cs, g->e_d2h, 0), "ordering the result buffers");
    if ((rc = reserve_pair(o, &g->pk, &g->pv, &g->cap_in, j->nr + j->ns)) < 0 ||
        (!o->fused && (rc = gset_reserve_out(o, g, j->ns > 0 ? j->ns : 1)) < 0))
        return rc;
    SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(o->cs, rd->e_gather, 0), "ordering the read-back");
    for (int64_t i = 0; i < rd->n_dp; i += SL_K_OOC_PIECES) {
        struct sl_k_ooc_pieces pc;
        pc.n = (int)(rd->n_dp - i < SL_K_OOC_PIECES ? rd->n_dp - i : SL_K_OOC_PIECES);
        for (int q = 0; q < pc.n; q++) {
            const struct dpiece *d = &rd->dp[i + q];
            pc.k[q] = d->k;
            pc.v[q] = d->v;
            pc.rows[q] = d->rows;
            pc.at[q] = d->at;
        }
        SL_TASK_CUDA_TRY(t, sl_k_ooc_gather_pieces(&pc, o->kw, o->vw, rd->k, rd->v, o->cs),
                         "gathering cached pieces");
    }
    g->bits2 = join_log2_ceil((j->nr + 4095) / 4096);
    g->bits2 = g->bits2 < 1 ? 1 : g->bits2 > o->max_bits2 ? o->max_bits2 : g->bits2;
    if ((rc = temp_for(o, j->nr > j->ns ? j->nr : j->ns, g->bits2)) < 0)
        return rc;
    int tr = gj_trace_begin(&o->tr, o->cs);
    for (int k = 0; k < 2; k++) {
        int64_t at = k ? j->nr : 0, n = k ? j->ns : j->nr;
        size_t tb = o->ptemp_cap;
        char *kk = (char *)rd->k + at * o->kw, *vv = (char *)rd->v + at * o->vw;
        char *pk = (char *)g->pk + at * o->kw, *pv = (char *)g->pv + at * o->vw;
        SL_TASK_CUDA_TRY(t, part_pairs(o, o->ptemp, &tb, kk, pk, vv, pv, n, 0, g->bits2, o->cs),
                         "partitioning (pass 2)");
        SL_TASK_CUDA_TRY(t, part_offsets(o, pk, n, 0, g->bits2, k ? g->soff : g->roff, o->cs),
                         "partition offsets");
    }
    SL_TASK_CUDA_TRY(t, cudaEventRecord(rd->e_part, o->cs), "cudaEventRecord");
    gj_trace_end(&o->tr, tr, o->cs, "ooc_partition2", 3, 1, 0);
    g->busy = 1;
    g->idx = o->jobs++;
    return o->fused ? run_count_sum(o, g) : run_materialize(o, g);
}

/* Copies of a staged result into a host batch, by several threads: one core copies (and
 * faults in fresh pages) at a fraction of the link's speed. */
struct pcopy {
    char *dst[3];
    const char *src[3];
    int64_t bytes[3];
    int n;
};

static void pcopy_part(void *arg, int part, int parts)
{
    const struct pcopy *c = arg;
    for (int i = 0; i < c->n; i++) {
        int64_t lo = c->bytes[i] * part / parts, hi = c->bytes[i] * (part + 1) / parts;
        memcpy(c->dst[i] + lo, c->src[i] + lo, (size_t)(hi - lo));
    }
}

/* Copies on 2 to 16 host threads (one below 8 MiB). */
static void par_copy(const struct pcopy *c)
{
    int64_t total = 0;
    for (int i = 0; i < c->n; i++)
        total += c->bytes[i];
    int parts = sl__host_threads(16);
    if (parts < 2)
        parts = 2;
    sl__par_for(total < 8 * MIB ? 1 : parts, pcopy_part, (void *)c);
}

/* Copies a staged result into a host batch (materialize). */
static int drain(struct ooc *o, struct gset *g)
{
    if (!g->d2h_pending)
        return SL_OK;
    g->d2h_pending = 0;
    SL_TASK_CUDA_TRY(o->t, cudaEventSynchronize(g->e_d2h), "downloading a result");
    int64_t n = g->stage_rows;
    sl_batch_t *b = sl__task_new_host_batch(o->t, sl_op_output_schema(sl_task_op(o->t)), n);
    if (!b)
        return SL_ENOMEM;
    const char *src[3] = {(const char *)g->stage, (const char *)g->stage + n * o->kw,
                          (const char *)g->stage + n * (o->kw + o->vw)};
    struct pcopy pc = {.n = 0};
    for (int oc = 0; oc < o->d->n_out; oc++) {
        const struct join_ocol *c = &o->d->out[oc];
        int role = c->col == o->d->key[c->side][0] ? 0 : c->side == o->build ? 1 : 2;
        if (pc.n == 3) { /* more than three output columns: copy what is gathered */
            par_copy(&pc);
            pc.n = 0;
        }
        pc.dst[pc.n] = sl__col_values(b, oc);
        pc.src[pc.n] = src[role];
        pc.bytes[pc.n++] = n * (role ? o->vw : o->kw);
    }
    par_copy(&pc);
    sl__task_pinned_free(o->t, g->stage, g->stage_bytes);
    g->stage = NULL;
    return join_ooc_out_add(o->t, o->st, b);
}

int join_gpu_sums_add(sl_task_t *t, const struct join_data *d, const void *const *vals,
                      int64_t count, unsigned long long *d_acc, cudaStream_t s)
{
    for (int oc = 0; oc < d->n_out; oc++) {
        unsigned long long *acc = d_acc + 2 * oc;
        cudaError_t e;
        switch (join_gpu_type(d->out[oc].type)) {
        case SL_TYPE_INT32:
            e = SL_TASK_CUDA_CALL(sl_k_sum_i32(vals[oc], count, (long long *)acc, s));
            break;
        case SL_TYPE_INT64:
            e = SL_TASK_CUDA_CALL(sl_k_sum_i64_exact(vals[oc], count, acc, s));
            break;
        case SL_TYPE_FLOAT32:
            e = SL_TASK_CUDA_CALL(sl_k_sum_f32(vals[oc], count, (double *)acc, s));
            break;
        default: e = SL_TASK_CUDA_CALL(sl_k_sum_f64(vals[oc], count, (double *)acc, s)); break;
        }
        SL_TASK_CUDA_TRY(t, e, "summing");
    }
    return SL_OK;
}

/* Output sums of a finished job (aggregate), on the compute stream. */
static int sum_job(struct ooc *o, struct gset *g)
{
    const void *vals[2 * JOIN_MAX_COLS];
    for (int oc = 0; oc < o->d->n_out; oc++) {
        const struct join_ocol *c = &o->d->out[oc];
        int role = c->col == o->d->key[c->side][0] ? 0 : c->side == o->build ? 1 : 2;
        vals[oc] = role == 0 ? g->ok : role == 1 ? g->ob : g->op;
    }
    int rc = join_gpu_sums_add(o->t, o->d, vals, g->count, o->d_acc, o->cs);
    if (rc < 0)
        return rc;
    SL_TASK_CUDA_TRY(o->t, cudaEventRecord(g->e_d2h, o->cs), "cudaEventRecord");
    return SL_OK;
}

static int cpu_job(struct ooc *o, const struct job *jb);

/* Waits for a submitted job, re-runs it with room for every match if the guess was short,
 * then starts its download (or sums it). */
static int finish(struct ooc *o, struct gset *g)
{
    if (!g->busy)
        return SL_OK;
    g->busy = 0;
    SL_TASK_CUDA_TRY(o->t, cudaEventSynchronize(g->e_done), "join (pass 2)");
    /* fused: its words are read after the last job (fused_total). The host still waits
     * for the job, two behind the queue, as for materialized jobs, so that it never runs
     * more than two jobs ahead of the GPU (in the one H100 run where it did not wait, the
     * sweep's Zipf aggregate at 1/4 left the device 620 MiB poorer; OUT_OF_CORE.md). */
    if (o->fused)
        return SL_OK;
    g->count = (int64_t)*g->h_count;
    /* Room for the whole result beside what is held (carved buffers are not given back) */
    int64_t more = (g->count - (carved(o, g->ok) ? 0 : g->cap_out)) * o->ow;
    if (g->count > g->cap_out && more + 4 * MIB > sl_task_device_budget(o->t)) {
        /* Duplicates on both sides: a result too large for what is left of the budget;
         * the CPU joins this job (its inputs are still in the blocks). */
        g->count = 0;
        return cpu_job(o, &g->job);
    }
    if (g->count > g->cap_out) {
        int rc = gset_reserve_out(o, g, g->count);
        if (rc < 0)
            return rc;
        if ((rc = run_materialize(o, g)) < 0)
            return rc;
        SL_TASK_CUDA_TRY(o->t, cudaEventSynchronize(g->e_done), "join (pass 2)");
    }
    if (g->count == 0)
        return SL_OK;
    if (o->d->aggregate) {
        o->gpu_count += g->count;
        return sum_job(o, g);
    }
    g->stage_bytes = g->count * o->ow;
    if (!(g->stage = sl__task_pinned_alloc(o->t, g->stage_bytes)))
        return SL_ENOMEM;
    g->stage_rows = g->count;
    SL_TASK_CUDA_TRY(o->t, cudaStreamWaitEvent(o->d2h, g->e_done, 0), "ordering the download");
    int tr = gj_trace_begin(&o->tr, o->d2h);
    char *h = g->stage;
    SL_TASK_CUDA_TRY(
        o->t, cudaMemcpyAsync(h, g->ok, (size_t)(g->count * o->kw), cudaMemcpyDeviceToHost, o->d2h),
        "downloading keys");
    h += g->count * o->kw;
    SL_TASK_CUDA_TRY(
        o->t, cudaMemcpyAsync(h, g->ob, (size_t)(g->count * o->vw), cudaMemcpyDeviceToHost, o->d2h),
        "downloading values");
    h += g->count * o->vw;
    SL_TASK_CUDA_TRY(
        o->t, cudaMemcpyAsync(h, g->op, (size_t)(g->count * o->vw), cudaMemcpyDeviceToHost, o->d2h),
        "downloading values");
    gj_trace_end(&o->tr, tr, o->d2h, "ooc_result", 2, 2, g->count * o->ow);
    SL_TASK_CUDA_TRY(o->t, cudaEventRecord(g->e_d2h, o->d2h), "cudaEventRecord");
    g->d2h_pending = 1;
    return SL_OK;
}

/* ---------------- a pair the GPU cannot hold: the CPU joins it ---------------- */

static uint64_t load(const char *p, int w, int64_t i)
{
    return w == 8 ? ((const uint64_t *)p)[i] : ((const uint32_t *)p)[i];
}

static void acc_value(struct join_acc *a, int oc, enum sl_type ty, uint64_t raw)
{
    switch (join_gpu_type(ty)) {
    case SL_TYPE_INT32: a->isum[oc] += (int32_t)(uint32_t)raw; break;
    case SL_TYPE_INT64: a->isum[oc] += (int64_t)raw; break;
    case SL_TYPE_FLOAT32: {
        float f;
        uint32_t u = (uint32_t)raw;
        memcpy(&f, &u, 4);
        a->fsum[oc] += f;
        break;
    }
    default: {
        double x;
        memcpy(&x, &raw, 8);
        a->fsum[oc] += x;
        break;
    }
    }
}

/* Side sd's blocks at list indices [i0, i1) as host arrays. */
static int host_rows(struct ooc *o, const struct bside *sd, int64_t i0, int64_t i1, int64_t n,
                     char **k, char **v)
{
    *k = sl_task_alloc(o->t, (size_t)(n * o->kw + 8));
    *v = sl_task_alloc(o->t, (size_t)(n * o->vw + 8));
    if (!*k || !*v)
        return SL_ENOMEM;
    int64_t at = 0;
    for (int64_t i = i0; i < i1; i++) {
        const struct blk *b = &sd->blk[i];
        int64_t r = b->rows;
        SL_TASK_CUDA_TRY(o->t,
                         cudaMemcpy(*k + at * o->kw, b->k, (size_t)(r * o->kw), cudaMemcpyDefault),
                         "reading a pair back");
        SL_TASK_CUDA_TRY(o->t,
                         cudaMemcpy(*v + at * o->vw, b->v, (size_t)(r * o->vw), cudaMemcpyDefault),
                         "reading a pair back");
        at += r;
    }
    return SL_OK;
}

/* Joins a job on the CPU: build partitions [p0, p1), probe blocks at [s0, s1). */
static int cpu_job(struct ooc *o, const struct job *jb)
{
    sl_task_t *t = o->t;
    const struct bside *r = &o->side[o->build], *s = &o->side[1 - o->build];
    int64_t nr = jb->nr, ns = jb->ns;
    char *rk, *rv, *sk, *sv;
    int rc;
    if ((rc = host_rows(o, r, r->p_start[jb->p0], r->p_start[jb->p1], nr, &rk, &rv)) < 0 ||
        (rc = host_rows(o, s, jb->s0, jb->s1, ns, &sk, &sv)) < 0)
        return rc;
    int64_t hb = 1;
    while (hb < 2 * nr)
        hb *= 2;
    int64_t *head = sl_task_alloc(t, (size_t)hb * sizeof(int64_t));
    int64_t *next = sl_task_alloc(t, (size_t)(nr + 1) * sizeof(int64_t));
    if (!head || !next)
        return SL_ENOMEM;
    memset(head, 0xff, (size_t)hb * sizeof(int64_t));
    for (int64_t i = 0; i < nr; i++) {
        uint64_t h = join_hash(load(rk, o->kw, i)) >> 32 & (uint64_t)(hb - 1);
        next[i] = head[h];
        head[h] = i;
    }
    const int64_t cap = (int64_t)1 << 20;
    sl_batch_t *out = NULL;
    int64_t n_out = 0;
    const struct join_data *d = o->d;
    for (int64_t i = 0; i < ns; i++) {
        uint64_t k = load(sk, o->kw, i);
        for (int64_t j = head[join_hash(k) >> 32 & (uint64_t)(hb - 1)]; j >= 0; j = next[j]) {
            if (load(rk, o->kw, j) != k)
                continue;
            uint64_t v3[3] = {k, load(rv, o->vw, j), load(sv, o->vw, i)};
            if (d->aggregate) {
                o->host_acc.count++;
                for (int oc = 0; oc < d->n_out; oc++) {
                    const struct join_ocol *c = &d->out[oc];
                    int role = c->col == d->key[c->side][0] ? 0 : c->side == o->build ? 1 : 2;
                    acc_value(&o->host_acc, oc, c->type, v3[role]);
                }
                continue;
            }
            if (!out && !(out = sl__task_new_host_batch(t, sl_op_output_schema(sl_task_op(t)),
                                                        cap)))
                return SL_ENOMEM;
            for (int oc = 0; oc < d->n_out; oc++) {
                const struct join_ocol *c = &d->out[oc];
                int role = c->col == d->key[c->side][0] ? 0 : c->side == o->build ? 1 : 2;
                int w = role ? o->vw : o->kw;
                void *col = sl__col_values(out, oc);
                if (w == 8)
                    ((uint64_t *)col)[n_out] = v3[role];
                else
                    ((uint32_t *)col)[n_out] = (uint32_t)v3[role];
            }
            if (++n_out == cap) {
                if ((rc = join_ooc_out_add(o->t, o->st, out)) < 0)
                    return rc;
                out = NULL;
                n_out = 0;
            }
        }
    }
    if (out) {
        sl_batch_t *sl = sl_task_batch_slice(t, out, 0, n_out);
        sl_batch_unref(out);
        if (!sl || (rc = join_ooc_out_add(o->t, o->st, sl)) < 0)
            return sl ? rc : SL_ENOMEM;
    }
    sl_task_free(t, head);
    sl_task_free(t, next);
    sl_task_free(t, rk);
    sl_task_free(t, rv);
    sl_task_free(t, sk);
    sl_task_free(t, sv);
    return SL_OK;
}

/* fused: adds the m GPU jobs' words of d_res (job k is list[gpu[k]]) to the host's
 * totals. A job's sums are exact as int64 while it has fewer than 2^32 matches (4-byte
 * values); one with more (duplicates on both sides) is joined again by the CPU. */
static int fused_total(struct ooc *o, const struct job *list, const int64_t *gpu, int64_t m)
{
    sl_task_t *t = o->t;
    unsigned long long *h = sl_task_alloc(t, (size_t)m * 4 * sizeof *h);
    if (!h)
        return SL_ENOMEM;
    int e = SL_TASK_CUDA_CALL(cudaMemcpyAsync(h, o->d_res, (size_t)m * 4 * sizeof *h,
                                              cudaMemcpyDeviceToHost, o->cs));
    if (e == 0)
        e = SL_TASK_CUDA_CALL(cudaStreamSynchronize(o->cs));
    int rc = e ? SL_TASK_CUDA_FAIL(t, e, "reading the job sums") : SL_OK;
    const struct join_data *d = o->d;
    for (int64_t k = 0; k < m && rc >= 0; k++) {
        const unsigned long long *w = h + 4 * k;
        if (w[0] >> 32) {
            rc = cpu_job(o, &list[gpu[k]]);
            continue;
        }
        o->host_acc.count += (__int128)w[0];
        for (int oc = 0; oc < d->n_out; oc++) {
            const struct join_ocol *c = &d->out[oc];
            int role = c->col == d->key[c->side][0] ? 0 : c->side == o->build ? 1 : 2;
            o->host_acc.isum[oc] += (int64_t)w[1 + role];
        }
    }
    sl_task_free(t, h);
    return rc;
}

static int job_add(struct ooc *o, struct job **list, int64_t *n, int64_t *cap,
                   const struct job *j)
{
    if (*n == *cap) {
        int64_t c = *cap ? 2 * *cap : 256;
        struct job *l = realloc(*list, (size_t)c * sizeof *l);
        if (!l)
            return sl_task_fail(o->t, SL_ENOMEM, "out of memory");
        *list = l;
        *cap = c;
    }
    (*list)[(*n)++] = *j;
    return SL_OK;
}

/* Cuts the partitions into jobs, in order: runs of partitions whose pair fits cap2; a
 * probe side too large for a job in slices against its build partition; a build
 * partition too large (duplicate keys) for the CPU. */
static int plan_jobs(struct ooc *o, struct job **list, int64_t *n)
{
    const struct bside *r = &o->side[o->build], *s = &o->side[1 - o->build];
    int64_t cap = 0;
    int p = 0, rc = SL_OK;
    *list = NULL;
    *n = 0;
    while (p < o->parts && rc >= 0) {
        struct job j = {p, p, 0, 0, 0, 0, 0};
        while (j.p1 < o->parts && j.nr + j.ns + r->p_rows[j.p1] + s->p_rows[j.p1] <= o->cap2) {
            j.nr += r->p_rows[j.p1];
            j.ns += s->p_rows[j.p1];
            j.p1++;
        }
        if (j.p1 == j.p0 && r->p_rows[p] > o->cap2 / 2) {
            struct job cj = {p, p + 1, s->p_start[p], s->p_start[p + 1], r->p_rows[p],
                             s->p_rows[p], 1};
            rc = job_add(o, list, n, &cap, &cj);
            p++;
            continue;
        }
        int64_t i = s->p_start[j.p0];
        if (j.p1 == j.p0) { /* a probe side too large: slices of it against the build side */
            j.p1 = j.p0 + 1;
            j.nr = r->p_rows[p];
        }
        int64_t hi = s->p_start[j.p1];
        do {
            j.s0 = i;
            j.ns = 0;
            while (i < hi && (i == j.s0 || j.nr + j.ns + s->blk[i].rows <= o->cap2))
                j.ns += s->blk[i++].rows;
            j.s1 = i;
            if (j.nr > 0 && j.ns > 0) /* else nothing can match */
                rc = job_add(o, list, n, &cap, &j);
        } while (i < hi && rc >= 0);
        p = j.p1;
    }
    return rc;
}

/* Runs the jobs, two in flight: job k is read back into rd[k & 1] and joined in set
 * g[k & 1]; the host queues job k + 1's read-back and job k's kernels, copies out the
 * result of job k - 2 (drain) and then waits for job k - 1 (finish: its count, a re-run
 * when its output was short, then its download or sums). The CPU jobs come last. */
static int pass2(struct ooc *o)
{
    sl_task_t *t = o->t;
    const struct bside *r = &o->side[o->build], *s = &o->side[1 - o->build];
    size_t need = 0;
    int rc;
    int mb = o->max_bits2;
    SL_TASK_CUDA_TRY(
        t,
        o->kw == 4 ? sl_k_phj_materialize_k32_v32(NULL, &need, NULL, NULL, NULL, NULL, NULL, NULL,
                                                  mb, mb, NULL, NULL, NULL, 0, NULL, o->cs)
                   : sl_k_phj_materialize_k64_v64(NULL, &need, NULL, NULL, NULL, NULL, NULL, NULL,
                                                  mb, mb, NULL, NULL, NULL, 0, NULL, o->cs),
        "join temp size");
    if (!(o->jtemp = dalloc(o, (int64_t)need + 4096)))
        return SL_ENOMEM;
    o->jtemp_cap = need + 4096;
    int64_t most = r->n_blk > s->n_blk ? r->n_blk : s->n_blk;
    if (!(o->tmp = sl_task_alloc(t, (size_t)(most + 1) * sizeof *o->tmp)))
        return SL_ENOMEM;
    unsigned long long *h_counts = sl__task_pinned_alloc(t, 2 * sizeof *h_counts);
    if (!h_counts)
        return SL_ENOMEM;
    for (int i = 0; i < 2; i++) {
        struct gset *g = &o->g[i];
        struct gread *rd = &o->rd[i];
        g->h_count = h_counts + i;
        g->d_count = dalloc(o, sizeof *g->d_count);
        g->roff = dalloc(o, (((int64_t)1 << mb) + 1) * (int64_t)sizeof(int64_t));
        g->soff = dalloc(o, (((int64_t)1 << mb) + 1) * (int64_t)sizeof(int64_t));
        if (!g->d_count || !g->roff || !g->soff)
            return SL_ENOMEM;
        if (o->zero_copy) {
            rd->h_list = sl__task_pinned_alloc(t, 3 * o->n_blocks * 8);
            rd->d_list = sl_task_device_alloc(t, (size_t)(3 * o->n_blocks * 8));
            if (!rd->h_list || !rd->d_list)
                return SL_ENOMEM;
        }
        cudaEvent_t *ev[4] = {&rd->e_gather, &rd->e_part, &g->e_done, &g->e_d2h};
        for (int e = 0; e < 4; e++)
            SL_TASK_CUDA_TRY(t, cudaEventCreateWithFlags(ev[e], cudaEventDisableTiming),
                             "cudaEventCreate");
    }
    /* With the arena: every buffer at cap2 rows now, in the bytes planned for them (no
     * job larger than cap2 grows them). */
    for (int i = 0; i < 2 && o->arena; i++) {
        struct gset *g = &o->g[i];
        if ((rc = reserve_pair(o, &o->rd[i].k, &o->rd[i].v, &o->rd[i].cap, o->cap2)) < 0 ||
            (rc = reserve_pair(o, &g->pk, &g->pv, &g->cap_in, o->cap2)) < 0 ||
            (!o->fused && (rc = gset_reserve_out(o, g, o->cap2)) < 0) ||
            (i == 1 && (rc = temp_for(o, o->cap2, mb)) < 0))
            return rc;
    }
    struct job *list = NULL;
    int64_t n = 0, m = 0, k = 0;
    rc = plan_jobs(o, &list, &n);
    int64_t *gpu = rc >= 0 ? sl_task_alloc(t, (size_t)(n + 1) * sizeof *gpu) : NULL;
    if (rc >= 0 && !gpu)
        rc = SL_ENOMEM;
    for (int64_t i = 0; i < n && rc >= 0; i++)
        if (!list[i].cpu)
            gpu[m++] = i;
    if (rc >= 0 && o->fused && m > 0 &&
        !(o->d_res = sl_task_device_alloc(t, (size_t)m * 4 * sizeof *o->d_res)))
        rc = SL_ENOMEM;
    if (m > 0 && rc >= 0)
        rc = read_job(o, &o->rd[0], &list[gpu[0]]);
    for (; k < m && rc >= 0; k++) {
        struct gset *g = &o->g[k & 1];
        struct gread *next = k + 1 < m ? &o->rd[(k + 1) & 1] : NULL;
        /* (debug_ooc_spill=dma_half: job k + 1's read-back after job k - 1, as before) */
        if (next && !o->half && (rc = read_job(o, next, &list[gpu[k + 1]])) < 0)
            break;
        if ((rc = compute_job(o, &o->rd[k & 1], g)) < 0 || (rc = drain(o, g)) < 0)
            break;
        if (k > 0 && (rc = finish(o, &o->g[(k - 1) & 1])) < 0)
            break;
        if (next && o->half && (rc = read_job(o, next, &list[gpu[k + 1]])) < 0)
            break;
    }
    for (int i = 0; i < 2 && rc >= 0; i++)
        if ((rc = finish(o, &o->g[(k + i) & 1])) >= 0)
            rc = drain(o, &o->g[(k + i) & 1]);
    for (int i = 0; i < 2 && rc >= 0; i++)
        rc = drain(o, &o->g[i]);
    if (rc >= 0 && o->fused && m > 0)
        rc = fused_total(o, list, gpu, m);
    for (int64_t i = 0; i < n && rc >= 0; i++)
        if (list[i].cpu)
            rc = cpu_job(o, &list[i]);
    free(list);
    sl_task_free(t, gpu);
    cudaStreamSynchronize(o->h2d);
    cudaStreamSynchronize(o->d2h);
    cudaStreamSynchronize(o->cs);
    for (int i = 0; i < 2; i++) {
        struct gset *g = &o->g[i];
        struct gread *rd = &o->rd[i];
        if (g->stage)
            sl__task_pinned_free(t, g->stage, g->stage_bytes);
        cudaEvent_t ev[4] = {rd->e_gather, rd->e_part, g->e_done, g->e_d2h};
        for (int e = 0; e < 4; e++)
            if (ev[e])
                cudaEventDestroy(ev[e]);
        void *bufs[] = {rd->k, rd->v, g->pk, g->pv, g->ok, g->ob, g->op, g->roff, g->soff,
                        g->d_count, rd->d_list};
        for (int b = 0; b < 11; b++)
            dfree(o, bufs[b]);
        if (rd->h_list)
            sl__task_pinned_free(t, rd->h_list, 3 * o->n_blocks * 8);
        free(rd->dp);
        rd->dp = NULL;
    }
    sl__task_pinned_free(t, h_counts, 2 * sizeof *h_counts);
    sl_task_free(t, o->tmp);
    free(o->cp_dst);
    free(o->cp_src);
    free(o->cp_size);
    o->cp_dst = o->cp_src = NULL;
    o->cp_size = NULL;
    dfree(o, o->jtemp);
    dfree(o, o->ptemp);
    return rc;
}

/* ---------------- finalize ---------------- */

int join_gpu_sums_total(sl_task_t *t, struct join_state *st, const unsigned long long *d_acc,
                        int64_t gpu_count, cudaStream_t s)
{
    const struct join_data *d = st->d;
    size_t bytes = (size_t)(2 * d->n_out) * sizeof(unsigned long long);
    unsigned long long *h = sl_task_alloc(t, bytes + 8);
    if (!h)
        return SL_ENOMEM;
    /* on the stream that summed (a non-blocking stream: cudaMemcpy would not wait) */
    int e = SL_TASK_CUDA_CALL(cudaMemcpyAsync(h, d_acc, bytes, cudaMemcpyDeviceToHost, s));
    if (e == 0)
        e = SL_TASK_CUDA_CALL(cudaStreamSynchronize(s));
    if (e != 0) {
        sl_task_free(t, h);
        return SL_TASK_CUDA_FAIL(t, e, "reading the sums");
    }
    st->total.count += gpu_count;
    for (int oc = 0; oc < d->n_out; oc++) {
        unsigned long long *a = h + 2 * oc;
        st->total.nonnull[oc] = (int64_t)st->total.count; /* inner, no nulls */
        if (join_gpu_type(d->out[oc].type) == SL_TYPE_INT32)
            st->total.isum[oc] += (int64_t)a[0];
        else if (join_gpu_type(d->out[oc].type) == SL_TYPE_INT64)
            st->total.isum[oc] += (__int128)(((unsigned __int128)a[1] << 64) | a[0]);
        else {
            double x;
            memcpy(&x, &a[0], sizeof x);
            st->total.fsum[oc] += x;
        }
    }
    sl_task_free(t, h);
    return SL_OK;
}

static int run(struct ooc *o)
{
    sl_task_t *t = o->t;
    int rc;
    if ((rc = plan(o)) < 0 || (o->spill == SPILL_BLOCKS && (rc = make_blocks(o)) < 0))
        return rc;
    if ((o->arena_size > 0 && !(o->arena = sl_task_device_alloc(t, (size_t)o->arena_size))) ||
        (o->cblk_size > 0 && !(o->cblk = sl_task_device_alloc(t, (size_t)o->cblk_size))))
        return SL_ENOMEM;
    double t0 = join_now_ms();
    if ((rc = pass1(o)) < 0)
        return rc;
    double t1 = join_now_ms();
    sl_task_phase_time(t, "ooc_pass1", t1 - t0);
    if (o->d->aggregate) {
        if (!(o->d_acc = sl_task_device_alloc(t, (size_t)(2 * o->d->n_out) * 8)))
            return SL_ENOMEM;
        SL_TASK_CUDA_TRY(t, cudaMemsetAsync(o->d_acc, 0, (size_t)(2 * o->d->n_out) * 8, o->cs),
                         "zeroing");
    }
    rc = pass2(o);
    sl_task_phase_time(t, "ooc_pass2", join_now_ms() - t1);
    return rc;
}

/* Aggregates whose count and sums the join kernel can give (sl_k_phj_count_sum_sx_*):
 * 4-byte keys and values, every output column a 32-bit integer (int32, date32, DICT
 * codes: the signed sums of the CPU). Floats and 64-bit sums (exact in 128 bits) are
 * materialized and summed per job. */
static int fused_ok(const struct ooc *o)
{
    if (!o->d->aggregate || o->kw != 4 || o->vw != 4)
        return 0;
    for (int oc = 0; oc < o->d->n_out; oc++)
        if (join_gpu_type(o->d->out[oc].type) != SL_TYPE_INT32)
            return 0;
    return 1;
}

int join_ooc_finalize(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    const struct join_data *d = sl_op_data(sl_task_op(t));
    struct ooc *o = sl_task_alloc(t, sizeof *o);
    if (!o)
        return SL_ENOMEM;
    memset(o, 0, sizeof *o);
    o->t = t;
    o->st = st;
    o->d = d;
    st->d = d;
    st->gpu = 1;
    st->ooc = 1;
    int vw = 4;
    ooc_layout(d, o->pcol, &vw);
    o->kw = join_gpu_type(d->ktype[0]) == SL_TYPE_INT64 ? 8 : 4;
    o->vw = vw;
    o->tw = o->kw + o->vw;
    o->ow = o->kw + 2 * o->vw;
    for (int s = 0; s < 2; s++) {
        st->side[s].n_rows = 0;
        for (int64_t i = 0; i < st->side[s].n_batches; i++)
            st->side[s].n_rows += st->side[s].batches[i]->n_rows;
        o->side[s].n = st->side[s].n_rows;
    }
    o->build = st->side[0].n_rows < st->side[1].n_rows ? 0 : 1;
    memset(&st->total, 0, sizeof st->total);
    sl_task_profile_value(t, "ooc_join", 1); /* which path ran (tests, explain) */
    if (o->side[0].n == 0 || o->side[1].n == 0)
        return SL_OK;
    o->cs = sl_task_stream(t);
    /* debug_ooc_spill (OUT_OF_CORE.md): 0 fused (the default: DMA spill, and fused sums
     * with the fanout that fills jobs wherever fused_ok holds), 1 blocks, 2 dma_half, 3 dma
     * (session 16's plan for every join: aggregates materialized and summed per job; A/B) */
    int64_t readback = 0, spill = 0;
    sl_task_option_int(t, "debug_ooc_spill", &spill);
    o->spill = spill == SPILL_BLOCKS ? SPILL_BLOCKS : SPILL_DMA;
    o->half = spill == 2; /* dma_half */
    o->fused = spill == 0 && fused_ok(o);
    sl_task_option_int(t, "debug_ooc_readback", &readback);
    o->zero_copy = readback == 1 && o->spill == SPILL_BLOCKS; /* the kernel reads blocks */
    if (gj_trace_open(t, &o->tr) < 0)
        return SL_ENOMEM;
    void *side[2]; /* the copy streams, from the runtime */
    int rc = sl__task_streams_get(t, 2, side);
    if (rc < 0)
        return rc;
    o->h2d = side[0];
    o->d2h = side[1];
    cudaError_t e;
    if (!(o->d_status = sl_task_device_alloc(t, sizeof(int32_t))))
        rc = SL_ENOMEM;
    if (rc >= 0) {
        e = SL_TASK_CUDA_CALL(cudaMemsetAsync(o->d_status, 0, sizeof(int32_t), o->cs));
        rc = e == cudaSuccess ? run(o) : SL_TASK_CUDA_FAIL(t, e, "zeroing");
    }
    cudaStreamSynchronize(o->cs);
    cudaStreamSynchronize(o->h2d);
    cudaStreamSynchronize(o->d2h);
    if (rc >= 0) {
        sl_task_profile_value(t, "ooc_spill", o->spill);
        sl_task_profile_value(t, "ooc_parts", o->parts);
        sl_task_profile_value(t, "ooc_chunk_rows", o->chunk);
        sl_task_profile_value(t, "ooc_cached", o->n_cache); /* chunks or blocks */
        sl_task_profile_value(t, "ooc_jobs", o->jobs);
        sl_task_profile_value(t, "ooc_fused", o->fused);
        sl_task_profile_value(t, "ooc_upload_bytes", o->up_bytes);
    }
    if (rc >= 0 && d->aggregate) {
        st->total = o->host_acc;
        rc = join_gpu_sums_total(t, st, o->d_acc, o->gpu_count, o->cs);
    }
    gj_trace_close(t, &o->tr, rc >= 0);
    free_blocks(o);
    sl_task_device_free(t, o->arena);
    sl_task_device_free(t, o->cblk);
    sl_task_device_free(t, o->cache);
    sl_task_device_free(t, o->d_ptr);
    sl_task_device_free(t, o->d_part);
    sl_task_device_free(t, o->d_status);
    sl_task_device_free(t, o->d_acc);
    sl_task_device_free(t, o->d_res);
    sl__task_streams_put(t, 2, side);
    return rc;
}

/* ---------------- source and cleanup ---------------- */

int64_t join_ooc_source_tasks(sl_task_t *t)
{
    return ((struct join_state *)sl_task_gstate(t))->n_ooc_out;
}

int join_ooc_source(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    sl_batch_t *b = st->ooc_out[sl_task_index(t)];
    gj_out_share_dicts(st->d, st, b);
    sl_batch_ref(b);
    return sl_task_emit(t, b);
}

void join_ooc_free(struct join_state *st)
{
    for (int64_t i = 0; i < st->n_ooc_out; i++)
        sl_batch_unref(st->ooc_out[i]);
    free(st->ooc_out);
    st->ooc_out = NULL;
    st->n_ooc_out = 0;
}
