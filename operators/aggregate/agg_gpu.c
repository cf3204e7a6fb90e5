/* Host side of the GPU group-by: see agg_gpu.h. */
#include "agg_gpu.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Estimated groups above which the partitioned method is used by default: below it the
 * global table (and the shared pre-aggregation) stays in L2 and wins; measured on the
 * H100 (see bench/results_gpuagg.md). */
#define DEFAULT_PART_THRESHOLD ((int64_t)1 << 16)

/* Estimated groups up to which the table method asks for the few-groups kernel
 * (SL_K_AGG_SMALL: 4096 shared slots per block, half full). */
#define DEFAULT_SMALL_THRESHOLD 2048
/* Estimated groups up to which the table method adds SL_K_AGG_FEW: a thread keeps the
 * first 4 groups it meets in registers and sends the rows of others one by one through
 * the shared table (slower than the shared-table kernels), so only a handful. */
#define DEFAULT_FEW_THRESHOLD 8

/* Estimated groups from which an unclustered input takes the partitioned method instead
 * of the record table (choose()). */
#define DIRECT_MAX_GROUPS ((int64_t)1 << 20)

/* The partition kernel's big table (part_bits): the groups a partition holds on average
 * as a fraction of its slots, and the bits where it is worth it. On the H100 (2^28 rows,
 * 2^24 groups, 14,464 slots; gpu_agg_bench, 2026-11-27), after the two-pass tile
 * partitioner: 2^12 partitions (4,096 groups, a load of 0.28) 7.72 + 3.42 ms, 2^13
 * 8.63 + 4.39 (the table's clearing and output scan per partition), 2^11 about 4.2 for
 * the kernel (a load of 0.57: longer probes), against 8.57 + 3.70 for two blocks an SM of
 * 4,096 slots at 2^13. So the big table takes 2^9..2^12 partitions (fewer: idle SMs; more:
 * the smaller table). The estimate of one batch of a streamed input is its own groups
 * (2^24 rows of 2^28 at 2^24 groups: about 10.6 million), one of all rows overshoots
 * (21.2 million), hence a load of 0.3: 2^12 for the first. */
#define BIG_LOAD 0.3
#define BIG_MIN_BITS 9
#define BIG_MAX_BITS 12
/* An estimate that asks for one bit more than BIG_MAX_BITS still takes the big table at
 * BIG_MAX_BITS where it fills at most BIG_MAX_LOAD of the slots: one input of 2^28 rows
 * of 2^24 groups is estimated at 21.2 million groups (13 bits): 12.36 ms at 13 bits with
 * the smaller table against 11.11 with the big one at 12 (H100, gpu_agg_bench, same run,
 * 2026-11-27); the big table at a load of 0.57 took 4.18 ms against 3.70 for the smaller
 * one at 13 bits, whose two passes cost 0.85 ms more. */
#define BIG_MAX_LOAD 0.6

/* The cluster table (SL_K_AGG_CLUSTER, issue 19; d->cluster > 0 only, for A/B runs):
 * one partitioning pass of CLUSTER_BITS and each partition in a table spread over a
 * cluster of blocks. Slower than the big table after two passes (H100, 2^28 rows, 2^24
 * groups, gpu_agg_bench, 2026-11-27: 21.9 ms with 8 blocks, 20.9 with 16, against 11.1):
 * the one pass of 8 bits takes 6.4 ms (two of 6 bits 7.7) and the partition kernel 15.5
 * (3.4), bound by the remote atomics. */
#define CLUSTER_BITS 8

/* Sample rows for the group estimate. */
#define SAMPLE_ROWS 65536

/* A first batch of at most this many rows is not sampled: its row count is the estimate
 * (the few-groups path holds that many), which saves the sample's wait. */
#define TINY_ROWS 2048

#define CU(d, expr, w)                                                                      \
    do {                                                                                    \
        cudaError_t e_ = (expr);                                                            \
        if (e_ != cudaSuccess) {                                                            \
            (d)->cuerr = e_;                                                                \
            (d)->what = (w);                                                                \
            return AGG_GDRV_ECUDA;                                                          \
        }                                                                                   \
    } while (0)

/* Over the budget an allocation is not tried (a failed one fails the query): NULL with
 * over_budget set, which agg_gdrv_add and agg_gdrv_output report as AGG_GDRV_EBUDGET. */
static void *dalloc(struct agg_gdrv *d, size_t bytes)
{
    if (d->mem.budget && (int64_t)bytes > d->mem.budget(d->mem.ctx)) {
        d->over_budget = 1;
        d->need_bytes = (int64_t)bytes;
        d->need_groups = 0;
        return NULL;
    }
    return d->mem.alloc(d->mem.ctx, bytes ? bytes : 1);
}

static void dfree(struct agg_gdrv *d, void *p)
{
    if (p)
        d->mem.free(d->mem.ctx, p);
}

/* What CUDA knows of a pointer, for error messages. */
static const char *ptr_kind(const void *p)
{
    struct cudaPointerAttributes pa;
    if (cudaPointerGetAttributes(&pa, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return "unknown to CUDA";
    }
    switch (pa.type) {
    case cudaMemoryTypeDevice: return "device memory";
    case cudaMemoryTypeHost: return "pinned host memory";
    case cudaMemoryTypeManaged: return "managed memory";
    default: return "not device memory (freed or never allocated)";
    }
}

/* Copies `bytes` from the device to h and waits. A failure names the pointer, what CUDA
 * knows of it, the size and the table block, so that a bad pointer shows where it came
 * from. */
static int sync_read(struct agg_gdrv *d, void *h, const void *dsrc, size_t bytes, const char *w)
{
    const char *step = "copy";
    cudaError_t e = cudaMemcpyAsync(h, dsrc, bytes, cudaMemcpyDeviceToHost, d->stream);
    if (e == cudaSuccess) {
        step = "wait";
        e = cudaStreamSynchronize(d->stream);
    }
    if (e == cudaSuccess)
        return AGG_GDRV_OK;
    snprintf(d->what_buf, sizeof d->what_buf,
             "%s (%s of %zu bytes from %p, %s; table block %p of %lld groups, mode %d, %lld "
             "rows in %d inputs)", w, step, bytes, dsrc, ptr_kind(dsrc), d->tb_mem,
             (long long)d->tb.cap, d->mode, (long long)d->rows, d->n_ins);
    d->what = d->what_buf;
    d->cuerr = e;
    return AGG_GDRV_ECUDA;
}

/* Marks the driver busy for one call: the engine must never enter one driver from two
 * threads at once (a GPU worker's sink and a finalize on a CPU thread); if it does, the
 * call fails with a message instead of corrupting the driver's state. */
static int enter(struct agg_gdrv *d, const char *call)
{
    if (__atomic_exchange_n(&d->busy, 1, __ATOMIC_ACQ_REL)) {
        snprintf(d->what_buf, sizeof d->what_buf, "%s: the driver is in use by another thread",
                 call);
        d->what = d->what_buf;
        d->cuerr = cudaErrorInvalidValue;
        return AGG_GDRV_ECUDA;
    }
    return AGG_GDRV_OK;
}

static int leave(struct agg_gdrv *d, int rc)
{
    __atomic_store_n(&d->busy, 0, __ATOMIC_RELEASE);
    return rc;
}

int agg_gdrv_init(struct agg_gdrv *d, const struct sl_k_agg_spec *spec, cudaStream_t stream,
                  const struct agg_gdrv_mem *mem)
{
    memset(d, 0, sizeof *d);
    d->spec = *spec;
    d->stream = stream;
    d->mem = *mem;
    /* Shared sums as 32-bit halves: the few-groups kernel at 2^28 rows, 1,000 groups
     * took 1.80 ms against 2.11 with 64-bit shared atomics (H100, 2026-11-26); the row
     * count and sum in one 64-bit shared atomic took 2.49 against 1.88 (2026-11-27). A spec
     * of one integer sum takes the lean kernel (SL_K_AGG_LEAN; debug_agg_gpu_no_lean for
     * A/B runs). The row count and sum in one 32-bit atomic (SL_K_AGG_PACK) took 1.91 ms
     * against 1.85, and the partition kernel 4.25 against 3.71 (2^24 groups; H100,
     * 2026-11-27, s14-gby): not by default. */
    d->update_flags = SL_K_AGG_PRELOAD | SL_K_AGG_SMALL_SPLIT | SL_K_AGG_LEAN;
    for (int i = 0; i < AGG_PH_N; i++)
        d->phase_ms[i] = -1;
    d->d_small = dalloc(d, 16 * sizeof(unsigned long long));
    return d->d_small ? AGG_GDRV_OK : AGG_GDRV_ENOMEM;
}

static void mark(struct agg_gdrv *d, int i);

static int64_t part_threshold(const struct agg_gdrv *d)
{
    return d->part_threshold > 0 ? d->part_threshold : DEFAULT_PART_THRESHOLD;
}

/* Picks the method from the distinct hashes of a sample of the first batch. */
static int choose(struct agg_gdrv *d, const struct sl_k_agg_input *in)
{
    mark(d, AGG_EV_START);
    if (in->n <= TINY_ROWS) { /* its rows bound the groups: no sample, no wait */
        d->g_est = (double)in->n;
        mark(d, AGG_EV_AGG0);
        d->mode = d->force_mode ? d->force_mode : AGG_GDRV_TABLE;
        return AGG_GDRV_OK;
    }
    int64_t m = in->n < SAMPLE_ROWS ? in->n : SAMPLE_ROWS;
    size_t tb = 0;
    CU(d, sl_k_agg_sample_distinct(NULL, &tb, &d->spec, in, m, NULL, d->stream), "sample size");
    void *tmp = dalloc(d, tb);
    if (!tmp)
        return AGG_GDRV_ENOMEM;
    unsigned long long cnt[2] = {0, 0}; /* distinct, key changes after a sampled row */
    CU(d, cudaMemsetAsync(d->d_small, 0, sizeof cnt, d->stream), "zeroing counters");
    CU(d, sl_k_agg_sample_distinct(tmp, &tb, &d->spec, in, m, d->d_small, d->stream), "sampling");
    int rc = sync_read(d, cnt, d->d_small, sizeof cnt, "reading the sample");
    dfree(d, tmp);
    if (rc < 0)
        return rc;
    d->g_est = sl_k_agg_estimate_groups(in->n, m, (int64_t)cnt[0],
                                        d->strided_estimate ? -1 : (int64_t)cnt[1],
                                        &d->clustered);
    mark(d, AGG_EV_AGG0);
    /* Past a million groups in an unclustered input the partitioned method (tile
     * partitioner, then one block per partition in shared memory) beats the record table,
     * whose update is bound by its L2 atomics (2^28 rows, 2^24 groups, H100: partitions
     * 20.2 ms against 22.3 with the same partitioner; the update 12.1 ms, L2 89% busy,
     * DRAM 14%). Below, the partitions would be too few blocks. */
    const int direct = sl_k_agg_direct_ok(&d->spec, in) &&
                       (d->clustered || d->g_est < (double)DIRECT_MAX_GROUPS);
    d->mode = d->force_mode ? d->force_mode
              : d->g_est <= (double)part_threshold(d) ? AGG_GDRV_TABLE
              : direct                                ? AGG_GDRV_DIRECT
                                                      : AGG_GDRV_PART;
    return AGG_GDRV_OK;
}

/* A new cleared table of cap groups in *tb / *mem; over the budget: AGG_GDRV_EBUDGET. */
static int table_new(struct agg_gdrv *d, int64_t cap, struct sl_k_agg_table *tb, void **mem)
{
    size_t bytes = sl_k_agg_table_bytes(&d->spec, cap);
    if (d->mem.budget && (int64_t)bytes > d->mem.budget(d->mem.ctx)) {
        d->need_bytes = (int64_t)bytes;
        d->need_groups = cap;
        return AGG_GDRV_EBUDGET;
    }
    *mem = dalloc(d, bytes);
    if (!*mem)
        return AGG_GDRV_ENOMEM;
    sl_k_agg_table_carve(&d->spec, cap, *mem, tb);
    CU(d, sl_k_agg_table_clear(tb, d->stream), "clearing a table");
    return AGG_GDRV_OK;
}

/* Launches the update of one kept input: no synchronization. Rows whose group finds no
 * room are only counted (tb.d_n[1..3]); agg_gdrv_output checks the counters once and
 * runs every kept input again into a bigger table if any is set. */
static int table_launch(struct agg_gdrv *d, const struct sl_k_agg_input *in)
{
    /* Few groups by the estimate, and no table growth yet (which says it was wrong). */
    int64_t small = d->small_threshold ? d->small_threshold : DEFAULT_SMALL_THRESHOLD;
    int flags = d->update_flags;
    if (small > 0 && d->g_est <= (double)small && !d->grows)
        flags |= SL_K_AGG_SMALL;
    int64_t few = d->few_threshold ? d->few_threshold : DEFAULT_FEW_THRESHOLD;
    if (few > 0 && d->g_est <= (double)few && !d->grows)
        flags |= SL_K_AGG_FEW;
    CU(d, sl_k_agg_update(&d->spec, in, &d->tb, NULL, &d->spill, d->shared_groups, flags,
                          d->stream), "aggregating");
    return AGG_GDRV_OK;
}

/* Room for one more element in a host array of *cap elements of `size` bytes, n used
 * (doubling, in the driver's host memory). */
static int grow_host(struct agg_gdrv *d, void **arr, int *cap, int n, size_t size)
{
    if (n < *cap)
        return AGG_GDRV_OK;
    int nc = *cap ? 2 * *cap : 16;
    void *na = d->mem.host_alloc(d->mem.ctx, (size_t)nc * size);
    if (!na)
        return AGG_GDRV_ENOMEM;
    if (n)
        memcpy(na, *arr, (size_t)n * size);
    d->mem.host_free(d->mem.ctx, *arr, (size_t)*cap * size);
    *arr = na;
    *cap = nc;
    return AGG_GDRV_OK;
}

/* Keeps an input's descriptor, to run it again into a bigger table. */
static int keep_input(struct agg_gdrv *d, const struct sl_k_agg_input *in)
{
    if (grow_host(d, (void **)&d->ins, &d->cap_ins, d->n_ins, sizeof *d->ins) < 0)
        return AGG_GDRV_ENOMEM;
    d->ins[d->n_ins++] = *in;
    return AGG_GDRV_OK;
}

static int table_add(struct agg_gdrv *d, const struct sl_k_agg_input *in)
{
    int rc;
    if (!d->tb_mem) {
        int64_t cap = d->init_cap ? d->init_cap : (int64_t)(2 * d->g_est) + 1024;
        /* The spill only absorbs shared groups of a full table (the pass is then run
         * again), so one group is enough. */
        if ((rc = table_new(d, cap, &d->tb, &d->tb_mem)) < 0 ||
            (rc = table_new(d, 1, &d->spill, &d->spill_mem)) < 0)
            return rc;
    }
    if ((rc = keep_input(d, in)) < 0)
        return rc;
    return table_launch(d, in);
}

static int part_add(struct agg_gdrv *d, const struct sl_k_agg_input *in);

/* Switches to the partitioned method: partitions every kept input (the table and its
 * partial groups are dropped). */
static int table_to_part(struct agg_gdrv *d, double groups)
{
    dfree(d, d->tb_mem);
    dfree(d, d->dt_mem);
    d->tb_mem = d->dt_mem = NULL;
    d->mode = AGG_GDRV_PART;
    d->switched = 1;
    d->g_est = groups;
    int64_t rows = d->rows;
    d->rows = 0; /* part_add numbers the rows of each batch from here */
    for (int i = 0; i < d->n_ins; i++) {
        int rc = part_add(d, &d->ins[i]);
        if (rc < 0)
            return rc;
        d->rows += d->ins[i].n;
    }
    d->rows = rows;
    return AGG_GDRV_OK;
}

/* Whether a kept input reads its rows by number (the partitioners do not: such inputs
 * stay with the table, which grows instead). */
static int any_rowidx(const struct agg_gdrv *d)
{
    for (int i = 0; i < d->n_ins; i++)
        if (d->ins[i].d_rowidx)
            return 1;
    return 0;
}

/* The groups of a grown table: `want`, or where its bytes do not fit the budget (with the
 * `freed` bytes of the table it replaces back), the most that half of that room holds if
 * they are at least twice the groups placed so far (`seen`, plus 1024): the rows that
 * found no room count rows, not groups (TPC-H Q13's 15M orders of 1M customers asked
 * for 13.3M groups), so a smaller table often holds them all; if not, the next round
 * asks for `want` again and reports the budget. */
static int64_t fit_groups(struct agg_gdrv *d, int64_t want, int64_t seen, int64_t freed,
                          size_t (*bytes_of)(const struct sl_k_agg_spec *, int64_t))
{
    if (!d->mem.budget)
        return want;
    const int64_t room = d->mem.budget(d->mem.ctx) + freed, unit = (int64_t)1 << 20;
    if ((int64_t)bytes_of(&d->spec, want) <= room)
        return want;
    const int64_t fit = (int64_t)((double)room / 2 / ((double)bytes_of(&d->spec, unit) / unit));
    return fit >= 2 * seen + 1024 && fit < want ? fit : want;
}

/* After the last add: reads the table's counters (the one synchronization of the table
 * method) and, if some group found no room, runs every kept input again into a table
 * four times bigger (past the partitioned method's threshold the inputs are partitioned
 * instead, unless one reads its rows by number), until all fit or the budget cannot hold
 * the table. */
static int table_finish(struct agg_gdrv *d)
{
    unsigned long long n[4];
    int rc;
    for (;;) {
        /* The descriptor must still describe its block (a stale or overwritten one would
         * read freed memory). */
        struct sl_k_agg_table want;
        sl_k_agg_table_carve(&d->spec, d->tb.cap, d->tb_mem, &want);
        if (want.d_n != d->tb.d_n) {
            snprintf(d->what_buf, sizeof d->what_buf, "the table descriptor does not match its "
                     "block %p (counters at %p, expected %p, %lld groups)", d->tb_mem,
                     (void *)d->tb.d_n, (void *)want.d_n, (long long)d->tb.cap);
            d->what = d->what_buf;
            d->cuerr = cudaErrorInvalidValue;
            return AGG_GDRV_ECUDA;
        }
        if ((rc = sync_read(d, n, d->tb.d_n, sizeof n, "reading the group count")) < 0)
            return rc;
        if (!n[1] && !n[2] && !n[3])
            break;
        /* The sample saw far fewer groups than there are (a skewed head hides the tail):
         * a table past the partitioned method's threshold would need several runs, so
         * the kept inputs are partitioned instead (one pass) and output that way. */
        if (4 * d->tb.cap > part_threshold(d) && !d->force_mode && !any_rowidx(d))
            /* At most the table's groups plus one per row or group that found no room. */
            return table_to_part(d, (double)d->tb.cap + (double)(n[1] + n[2] + n[3]));
        /* More groups than rows cannot be: that bound ends the loop. */
        int64_t cap = 4 * d->tb.cap < d->rows + 16 ? 4 * d->tb.cap : d->rows + 16;
        cap = fit_groups(d, cap, (int64_t)n[0], (int64_t)sl_k_agg_table_bytes(&d->spec, d->tb.cap),
                         sl_k_agg_table_bytes);
        dfree(d, d->tb_mem);
        d->tb_mem = NULL;
        if ((rc = table_new(d, cap, &d->tb, &d->tb_mem)) < 0)
            return rc;
        CU(d, sl_k_agg_table_clear(&d->spill, d->stream), "clearing the spill");
        d->grows++;
        for (int i = 0; i < d->n_ins; i++) {
            d->replayed += d->ins[i].n;
            if ((rc = table_launch(d, &d->ins[i])) < 0)
                return rc;
        }
    }
    d->groups = n[0] < (unsigned long long)d->tb.cap ? (int64_t)n[0] : d->tb.cap;
    return AGG_GDRV_OK;
}

static size_t width_of(int type)
{
    return type == SL_K_I32 || type == SL_K_F32 ? 4 : 8;
}

static size_t al256(size_t x)
{
    return (x + 255) & ~(size_t)255;
}

/* Whether some key or aggregated value of `in` may be null. */
static int input_nulls(const struct sl_k_agg_spec *sp, const struct sl_k_agg_input *in)
{
    int nulls = in->d_nullbits != NULL;
    for (int j = 0; j < sp->n_keys; j++)
        nulls |= in->keys[j].d_valid != NULL;
    for (int a = 0; a < sp->n_aggs; a++)
        nulls |= sp->fn[a] != SL_K_AGG_COUNT_STAR && in->vals[a].d_valid != NULL;
    return nulls;
}

/* A new block (pt->mem) for the tile partitioner's output of `in`: the key and the
 * columns of the aggregates with a state (count(*) and count have none) in pt->pb.in,
 * then `extra` bytes, whose start it returns (NULL: out of memory). */
static char *tile_block(struct agg_gdrv *d, const struct sl_k_agg_input *in, size_t extra,
                        struct agg_gdrv_part *pt)
{
    const struct sl_k_agg_spec *sp = &d->spec;
    size_t bytes = al256((size_t)in->n * width_of(sp->key_type[0])) + al256(extra);
    for (int a = 0; a < sp->n_aggs; a++)
        if (sp->fn[a] != SL_K_AGG_COUNT_STAR && sp->fn[a] != SL_K_AGG_COUNT)
            bytes += al256((size_t)in->n * width_of(sp->in_type[a]));
    memset(pt, 0, sizeof *pt);
    if (!(pt->mem = dalloc(d, bytes)))
        return NULL;
    pt->bytes = (int64_t)bytes;
    char *p = pt->mem;
    struct sl_k_agg_input *o = &pt->pb.in;
    o->n = in->n;
    o->keys[0].d_data = p;
    p += al256((size_t)in->n * width_of(sp->key_type[0]));
    for (int a = 0; a < sp->n_aggs; a++) {
        if (sp->fn[a] == SL_K_AGG_COUNT_STAR || sp->fn[a] == SL_K_AGG_COUNT)
            continue;
        o->vals[a].d_data = p;
        p += al256((size_t)in->n * width_of(sp->in_type[a]));
    }
    return p;
}

/* part_tile with the one-pass wide partitioner (sl_k_agg_wide_partition; d->one_pass). */
static int part_wide(struct agg_gdrv *d, const struct sl_k_agg_input *in, int bits,
                     struct agg_gdrv_part *pt)
{
    const struct sl_k_agg_spec *sp = &d->spec;
    const int64_t P = (int64_t)1 << bits;
    size_t tb = 0;
    CU(d, sl_k_agg_wide_partition(NULL, &tb, sp, in, bits, NULL, NULL, d->stream),
       "wide partitioner size");
    char *p = tile_block(d, in, (size_t)(P + 1) * 8, pt);
    if (!p)
        return AGG_GDRV_ENOMEM;
    pt->pb.d_offsets = (const int64_t *)p;
    pt->pb.bit_base = d->rows;
    void *tmp = dalloc(d, tb);
    if (!tmp)
        return AGG_GDRV_ENOMEM;
    cudaError_t e = sl_k_agg_wide_partition(tmp, &tb, sp, in, bits, &pt->pb.in, (int64_t *)p,
                                            d->stream);
    dfree(d, tmp);
    CU(d, e, "partitioning (wide partitioner)");
    return AGG_GDRV_OK;
}

/* part_into with the tile partitioner (sl_k_agg_tile_partition: runs of a partition
 * written together, two passes past 8 bits) for what it takes (one integer key, integer
 * aggregates, no nulls, at most four with a state); 1: not taken. */
static int part_tile(struct agg_gdrv *d, const struct sl_k_agg_input *in, int bits,
                     struct agg_gdrv_part *pt)
{
    const struct sl_k_agg_spec *sp = &d->spec;
    const int64_t P = (int64_t)1 << bits;
    size_t tb = 0;
    if (d->row_partition || !sl_k_agg_direct_ok(sp, in) || in->n >= ((int64_t)1 << 32))
        return 1;
    if (d->big_on && d->one_pass) /* no copy of the columns: part_add's budget check */
        return part_wide(d, in, bits, pt);
    if (sl_k_agg_tile_partition(NULL, &tb, sp, in, bits, NULL, NULL, d->stream) != cudaSuccess) {
        (void)cudaGetLastError(); /* a size query's refusal is no launch error */
        return 1;
    }
    /* Two passes hold a second copy of the moved columns: where the budget cannot, the
     * row-by-row partitioner (one copy). */
    const int64_t row_bytes = 8 + 8 * (int64_t)sp->n_aggs; /* the output block's, at most */
    if (d->mem.budget && (int64_t)tb + in->n * row_bytes > d->mem.budget(d->mem.ctx))
        return 1;
    char *p = tile_block(d, in, (size_t)(P + 1) * 8, pt);
    if (!p)
        return AGG_GDRV_ENOMEM;
    struct sl_k_agg_input *o = &pt->pb.in;
    pt->pb.d_offsets = (const int64_t *)p;
    pt->pb.bit_base = d->rows;
    void *tmp = dalloc(d, tb);
    if (!tmp)
        return AGG_GDRV_ENOMEM;
    cudaError_t e = sl_k_agg_tile_partition(tmp, &tb, sp, in, bits, o, (int64_t *)p, d->stream);
    dfree(d, tmp);
    CU(d, e, "partitioning (tile partitioner)");
    return AGG_GDRV_OK;
}

/* Partitions `in` by the top `bits` bits of its rows' hashes into a new block (pt->mem):
 * columns in pt->pb.in, offsets in pt->pb.d_offsets; the rows' null bits too when `nulls`. */
static int part_into(struct agg_gdrv *d, const struct sl_k_agg_input *in, int bits, int nulls,
                     struct agg_gdrv_part *pt)
{
    const struct sl_k_agg_spec *sp = &d->spec;
    const int64_t P = (int64_t)1 << bits;
    int rc;
    if (!nulls && (rc = part_tile(d, in, bits, pt)) != 1)
        return rc;
    size_t bytes = 0;
    for (int j = 0; j < sp->n_keys; j++)
        bytes += al256((size_t)in->n * width_of(sp->key_type[j]));
    for (int a = 0; a < sp->n_aggs; a++)
        if (sp->fn[a] != SL_K_AGG_COUNT_STAR)
            bytes += al256((size_t)in->n * width_of(sp->in_type[a]));
    if (nulls)
        bytes += al256((size_t)in->n * 4);
    bytes += al256((size_t)(P + 1) * 8);
    memset(pt, 0, sizeof *pt);
    if (!(pt->mem = dalloc(d, bytes)))
        return AGG_GDRV_ENOMEM;
    pt->bytes = (int64_t)bytes;
    char *p = pt->mem;
    struct sl_k_agg_input *o = &pt->pb.in;
    o->n = in->n;
    for (int j = 0; j < sp->n_keys; j++) {
        o->keys[j].d_data = p;
        p += al256((size_t)in->n * width_of(sp->key_type[j]));
    }
    for (int a = 0; a < sp->n_aggs; a++) {
        if (sp->fn[a] == SL_K_AGG_COUNT_STAR)
            continue;
        o->vals[a].d_data = p;
        p += al256((size_t)in->n * width_of(sp->in_type[a]));
    }
    if (nulls) {
        o->d_nullbits = (const uint32_t *)p;
        p += al256((size_t)in->n * 4);
    }
    pt->pb.d_offsets = (const int64_t *)p;
    pt->pb.bit_base = d->rows;

    size_t tb = 0;
    CU(d, sl_k_agg_part_scatter(NULL, &tb, sp, in, bits, NULL, NULL, &pt->pb, d->stream),
       "scatter size");
    char *tmp = dalloc(d, al256((size_t)P * 8) + tb);
    if (!tmp)
        return AGG_GDRV_ENOMEM;
    unsigned long long *counts = (unsigned long long *)tmp;
    CU(d, cudaMemsetAsync(counts, 0, (size_t)P * 8, d->stream), "zeroing counts");
    CU(d, sl_k_agg_part_count(sp, in, bits, counts, d->stream), "counting partitions");
    CU(d, sl_k_agg_part_scatter(tmp + al256((size_t)P * 8), &tb, sp, in, bits, counts,
                                (int64_t *)pt->pb.d_offsets, &pt->pb, d->stream),
       "partitioning");
    dfree(d, tmp);
    return AGG_GDRV_OK;
}

/* Whether the partition kernel's big table takes `in` (the partitioners' and its
 * specs: one integer key, at most four value columns of integer aggregates, no nulls). */
static int big_takes(const struct agg_gdrv *d, const struct sl_k_agg_input *in)
{
    const struct sl_k_agg_spec *sp = &d->spec;
    if (d->big < 0 || d->row_partition || !sl_k_agg_direct_ok(sp, in) || input_nulls(sp, in) ||
        in->n >= ((int64_t)1 << 32) || sl_k_agg_part_big_slots(sp) <= 0)
        return 0;
    size_t tb = 0; /* at most four value columns: the size query refuses more */
    if (sl_k_agg_wide_partition(NULL, &tb, sp, in, 1, NULL, NULL, d->stream) != cudaSuccess) {
        (void)cudaGetLastError(); /* a size query's refusal is no launch error */
        return 0;
    }
    return 1;
}

/* The radix bits of the partitioned method, from the first batch: partitions of the
 * estimated groups at half the slots of a block's table, or (big_on) at BIG_LOAD of the
 * big table's, where that asks for BIG_MIN_BITS..BIG_MAX_BITS bits (one more: see
 * BIG_MAX_LOAD) (d->big 0) or always (1: at most 13); forced bits are kept (and take the
 * big table only with d->big 1). d->cluster > 0: the cluster table at CLUSTER_BITS. */
static void part_bits(struct agg_gdrv *d, const struct sl_k_agg_input *in)
{
    const struct sl_k_agg_spec *sp = &d->spec;
    double per = (double)sl_k_agg_part_groups_per_block(sp) / 2;
    double parts = d->g_est / per > 2 ? d->g_est / per : 2;
    int b = d->force_bits ? d->force_bits : (int)ceil(log2(parts));
    d->bits = b < 1 ? 1 : b > 13 ? 13 : b;
    if ((d->force_bits && d->big == 0 && d->cluster <= 0) || !big_takes(d, in))
        return;
    double bper = (double)sl_k_agg_part_big_slots(sp) * BIG_LOAD;
    double bparts = d->g_est / bper > 2 ? d->g_est / bper : 2;
    int bb = d->force_bits ? d->force_bits : (int)ceil(log2(bparts));
    /* The cluster table: forced (d->cluster > 0), where the GPU and the spec take it. */
    if (d->cluster > 0 && !d->one_pass && sl_k_agg_part_cluster_max(sp, d->cluster) > 0) {
        d->big_on = 1;
        d->cluster_on = d->cluster;
        d->bits = d->force_bits ? d->bits : CLUSTER_BITS;
        return;
    }
    if (d->big == 0 && !d->force_bits && !d->big_strict && bb == BIG_MAX_BITS + 1 &&
        d->g_est / ldexp((double)sl_k_agg_part_big_slots(sp), BIG_MAX_BITS) <= BIG_MAX_LOAD)
        bb = BIG_MAX_BITS;
    if (d->big == 0 && (bb < BIG_MIN_BITS || bb > BIG_MAX_BITS))
        return;
    d->big_on = 1;
    d->bits = bb < 1 ? 1 : bb > 13 ? 13 : bb;
    if (d->one_pass && d->bits > 12) /* the wide partitioner's most */
        d->bits = 12;
}

static int part_add(struct agg_gdrv *d, const struct sl_k_agg_input *in)
{
    const struct sl_k_agg_spec *sp = &d->spec;
    if (!d->bits)
        part_bits(d, in);
    if (grow_host(d, (void **)&d->parts, &d->cap_parts, d->n_parts, sizeof *d->parts) < 0)
        return AGG_GDRV_ENOMEM;
    /* The budget holds the input's copy and the partitioner's counts, or nothing is
     * allocated (no half-partitioned input among the parts). */
    const int64_t need = in->n * (8 * (int64_t)(sp->n_keys + sp->n_aggs) + 4) +
                         (((int64_t)16 << d->bits) + ((int64_t)1 << 20));
    if (d->mem.budget && need > d->mem.budget(d->mem.ctx)) {
        d->over_budget = 1;
        d->need_bytes = need;
        d->need_groups = 0;
        return AGG_GDRV_ENOMEM;
    }
    /* d->any_nulls already has this input's nulls: add() (every input passes it first). */
    int rc = part_into(d, in, d->bits, input_nulls(sp, in), &d->parts[d->n_parts]);
    if (d->parts[d->n_parts].mem)
        d->n_parts++; /* freed with the driver even if partitioning failed */
    return rc;
}

/* ---------------- record table (many groups, AGG_GDRV_DIRECT) ---------------- */

/* Bytes of the table region one partition visits at a time: the L2 cache holds it. */
#define DIRECT_REGION_BYTES ((int64_t)16 << 20)

/* A new cleared record table for `groups` groups; over the budget: AGG_GDRV_EBUDGET. */
static int direct_new(struct agg_gdrv *d, int64_t groups)
{
    size_t bytes = sl_k_agg_direct_bytes(&d->spec, groups);
    if (d->mem.budget && (int64_t)bytes > d->mem.budget(d->mem.ctx)) {
        d->need_bytes = (int64_t)bytes;
        d->need_groups = groups;
        return AGG_GDRV_EBUDGET;
    }
    if (!(d->dt_mem = dalloc(d, bytes)))
        return AGG_GDRV_ENOMEM;
    d->dt_bytes = (int64_t)bytes;
    sl_k_agg_direct_carve(&d->spec, groups, d->dt_mem, &d->dt);
    CU(d, sl_k_agg_direct_clear(&d->spec, &d->dt, d->stream), "clearing the record table");
    /* Partitions whose table regions fit L2: 2^bits >= table bytes / region bytes. */
    int b = 0;
    while (b < 8 && ((int64_t)bytes >> b) > DIRECT_REGION_BYTES)
        b++;
    /* An input clustered by key touches each record in one run of rows: no reuse for
     * L2 to keep, so no partitioning pass. */
    d->dbits = d->direct_bits < 0 ? 0 : d->direct_bits > 0 ? d->direct_bits
               : d->clustered      ? 0
                                   : b;
    return AGG_GDRV_OK;
}

/* Partitions `in` for the record table into a new block (*mem): the tile partitioner
 * (sl_k_agg_direct_partition) for at most four aggregates with a state, else the
 * partitioned method's. */
static int direct_partition(struct agg_gdrv *d, const struct sl_k_agg_input *in,
                            struct agg_gdrv_part *pt)
{
    const struct sl_k_agg_spec *sp = &d->spec;
    size_t tb = 0;
    memset(pt, 0, sizeof *pt);
    if (sl_k_agg_direct_partition(NULL, &tb, sp, in, d->dbits, NULL, d->stream) != cudaSuccess) {
        (void)cudaGetLastError(); /* a size query's refusal is no launch error */
        return part_into(d, in, d->dbits, 0, pt);
    }
    char *p = tile_block(d, in, tb, pt);
    if (!p)
        return AGG_GDRV_ENOMEM;
    struct sl_k_agg_input *o = &pt->pb.in;
    CU(d, sl_k_agg_direct_partition(p, &tb, sp, in, d->dbits, o, d->stream),
       "partitioning for the record table");
    return AGG_GDRV_OK;
}

/* Aggregates one input into the record table: partitioned first (a temporary block, freed
 * in stream order) when the table is bigger than L2 and the budget holds the copy. */
static int direct_launch(struct agg_gdrv *d, const struct sl_k_agg_input *in)
{
    struct agg_gdrv_part pt = {0};
    const struct sl_k_agg_input *src = in;
    const int64_t row_bytes = 8 + 8 * (int64_t)d->spec.n_aggs; /* the copy's, at most */
    /* Small inputs fit L2 anyway (unless the bits were forced, for tests). */
    int part = d->dbits > 0 && (d->direct_bits > 0 || in->n >= ((int64_t)1 << 20)) &&
               (!d->mem.budget || in->n * row_bytes + (1 << 20) < d->mem.budget(d->mem.ctx));
    if (part) {
        const int timed = !(d->ev_set >> AGG_EV_PART0 & 1); /* the first batch's */
        if (timed)
            mark(d, AGG_EV_PART0);
        int rc = direct_partition(d, in, &pt);
        if (timed)
            mark(d, AGG_EV_PART1);
        if (rc < 0) {
            dfree(d, pt.mem);
            return rc;
        }
        src = &pt.pb.in;
    }
    cudaError_t e = sl_k_agg_direct_update(&d->spec, src, &d->dt, d->stream);
    dfree(d, pt.mem);
    CU(d, e, "aggregating into the record table");
    return AGG_GDRV_OK;
}

static int direct_add(struct agg_gdrv *d, const struct sl_k_agg_input *in)
{
    int rc;
    if (!sl_k_agg_direct_ok(&d->spec, in)) { /* a batch with nulls: partition them all */
        if ((rc = table_to_part(d, d->g_est)) < 0)
            return rc;
        d->switched = 0; /* no table overflowed (a statistic; output() does not read it) */
        return part_add(d, in);
    }
    if (!d->dt_mem && (rc = direct_new(d, d->init_cap ? d->init_cap
                                                      : (int64_t)d->g_est + 1024)) < 0)
        return rc;
    if ((rc = keep_input(d, in)) < 0)
        return rc;
    return direct_launch(d, in);
}

/* After the last add: reads the counters (the one synchronization); if some row found no
 * room, runs every kept input again into a table for twice the groups seen. */
static int direct_finish(struct agg_gdrv *d)
{
    unsigned long long n[2];
    int rc;
    for (;;) {
        if ((rc = sync_read(d, n, d->dt.d_n, sizeof n, "reading the record table's counts")) < 0)
            return rc;
        if (!n[1])
            break;
        /* Rows keep finding no room in tables at most half full (keys whose hashes
         * cluster): partition them instead. */
        if (d->grows >= 2)
            return table_to_part(d, (double)(n[0] + n[1]));
        int64_t want = 2 * (int64_t)(n[0] + n[1]) + 1024;
        want = want < d->rows + 1024 ? want : d->rows + 1024;
        want = fit_groups(d, want, (int64_t)n[0], d->dt_bytes, sl_k_agg_direct_bytes);
        dfree(d, d->dt_mem);
        d->dt_mem = NULL;
        if ((rc = direct_new(d, want)) < 0)
            return rc;
        d->grows++;
        for (int i = 0; i < d->n_ins; i++) {
            d->replayed += d->ins[i].n;
            if ((rc = direct_launch(d, &d->ins[i])) < 0)
                return rc;
        }
    }
    d->groups = (int64_t)n[0];
    return AGG_GDRV_OK;
}

static int add(struct agg_gdrv *d, const struct sl_k_agg_input *in)
{
    if (in->n == 0)
        return AGG_GDRV_OK;
    int rc;
    if (!d->mode && (rc = choose(d, in)) < 0)
        return rc;
    if (in->d_rowidx && d->mode != AGG_GDRV_TABLE)
        return AGG_GDRV_EROWS;
    d->any_nulls |= input_nulls(&d->spec, in);
    rc = d->mode == AGG_GDRV_TABLE    ? table_add(d, in)
         : d->mode == AGG_GDRV_DIRECT ? direct_add(d, in)
                                      : part_add(d, in);
    if (rc == AGG_GDRV_OK)
        d->rows += in->n;
    return rc;
}

/* An allocation that dalloc did not try is the budget's refusal, not a lack of memory. */
static int budget_rc(struct agg_gdrv *d, int rc)
{
    return rc == AGG_GDRV_ENOMEM && d->over_budget ? AGG_GDRV_EBUDGET : rc;
}

int agg_gdrv_add(struct agg_gdrv *d, const struct sl_k_agg_input *in)
{
    int rc = enter(d, "adding a batch");
    d->over_budget = 0;
    return rc < 0 ? rc : leave(d, budget_rc(d, add(d, in)));
}

/* Asks for output columns of `rows` rows and prepares their bitmaps and counters. */
static int out_prepare(struct agg_gdrv *d, agg_gdrv_out_fn fn, void *ctx, int64_t rows,
                       struct sl_k_agg_out *out)
{
    int nc = d->spec.n_keys + d->spec.n_aggs;
    unsigned long long *ctr = out->d_null_count;
    memset(out, 0, sizeof *out);
    out->d_null_count = ctr;
    out->d_count = ctr + nc;
    out->cap = rows;
    int rc = fn(ctx, rows, out);
    if (rc < 0)
        return rc;
    for (int c = 0; c < nc; c++)
        if (out->d_valid[c] && rows > 0)
            CU(d, cudaMemsetAsync(out->d_valid[c], 0xff, (size_t)(rows + 31) / 32 * 4, d->stream),
               "setting bitmaps");
    CU(d, cudaMemsetAsync(ctr, 0, (size_t)(nc + 1) * 8, d->stream), "zeroing counters");
    return AGG_GDRV_OK;
}

static int part_output(struct agg_gdrv *d, agg_gdrv_out_fn fn, void *ctx, int32_t *d_status,
                       struct sl_k_agg_out *out, int64_t *n_groups)
{
    size_t pb_bytes = (size_t)d->n_parts * sizeof(struct sl_k_agg_pbatch);
    size_t pend_bytes = sl_k_agg_part_pending_bytes(d->rows, d->bits);
    char *tmp = dalloc(d, al256(pb_bytes) + pend_bytes);
    if (!tmp)
        return AGG_GDRV_ENOMEM;
    struct sl_k_agg_pbatch *h = d->mem.host_alloc(d->mem.ctx, pb_bytes);
    if (!h) {
        dfree(d, tmp);
        return AGG_GDRV_ENOMEM;
    }
    for (int i = 0; i < d->n_parts; i++)
        h[i] = d->parts[i].pb;
    int rc = AGG_GDRV_OK;
    cudaError_t e = cudaMemcpyAsync(tmp, h, pb_bytes, cudaMemcpyHostToDevice, d->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(d->stream); /* h may go */
    d->mem.host_free(d->mem.ctx, h, pb_bytes);
    CU(d, e, "copying batch descriptors");
    uint32_t *pending = (uint32_t *)(tmp + al256(pb_bytes));
    int64_t guess = (int64_t)(d->g_est * 1.25) + 4096;
    int64_t cap = guess < d->rows ? guess : d->rows;
    for (int pass = 0; pass < 2; pass++) {
        if ((rc = out_prepare(d, fn, ctx, cap, out)) < 0)
            break;
        CU(d, cudaMemsetAsync(pending, 0, pend_bytes, d->stream), "zeroing pending rows");
        CU(d, sl_k_agg_part_final(&d->spec, (const struct sl_k_agg_pbatch *)tmp, d->n_parts,
                                  d->bits, d->any_nulls,
                                  (d->small_threshold < 0 ? SL_K_AGG_NO_SMALL : 0) |
                                      (d->update_flags & SL_K_AGG_PACK) |
                                      (d->big_on ? SL_K_AGG_BIG : 0) |
                                      SL_K_AGG_CLUSTER(d->cluster_on),
                                  pending, out,
                                  d_status, d->stream),
           "aggregating partitions");
        unsigned long long n;
        if ((rc = sync_read(d, &n, out->d_count, 8, "reading the group count")) < 0)
            break;
        *n_groups = (int64_t)n;
        if ((int64_t)n <= cap)
            break;
        d->rounds_rerun++;
        cap = (int64_t)n;
    }
    dfree(d, tmp);
    return rc;
}

/* Phase events (timing only: a failure to record one is not an error). */
static void mark(struct agg_gdrv *d, int i)
{
    if (!d->ev[i] && cudaEventCreate(&d->ev[i]) != cudaSuccess) {
        d->ev[i] = NULL;
        return;
    }
    if (cudaEventRecord(d->ev[i], d->stream) == cudaSuccess)
        d->ev_set |= 1u << i;
}

static double span_ms(const struct agg_gdrv *d, int a, int b)
{
    float ms = 0;
    if ((d->ev_set >> a & 1) && (d->ev_set >> b & 1) &&
        cudaEventElapsedTime(&ms, d->ev[a], d->ev[b]) == cudaSuccess)
        return ms;
    return -1;
}

static int output(struct agg_gdrv *d, agg_gdrv_out_fn fn, void *ctx, int32_t *d_status,
                  int64_t *n_groups, int64_t *h_null_count);

int agg_gdrv_output(struct agg_gdrv *d, agg_gdrv_out_fn fn, void *ctx, int32_t *d_status,
                    int64_t *n_groups, int64_t *h_null_count)
{
    int rc = enter(d, "writing the groups");
    d->over_budget = 0;
    return rc < 0 ? rc
                  : leave(d, budget_rc(d, output(d, fn, ctx, d_status, n_groups, h_null_count)));
}

static int output(struct agg_gdrv *d, agg_gdrv_out_fn fn, void *ctx, int32_t *d_status,
                  int64_t *n_groups, int64_t *h_null_count)
{
    int nc = d->spec.n_keys + d->spec.n_aggs, rc = AGG_GDRV_OK;
    struct sl_k_agg_out out;
    memset(&out, 0, sizeof out);
    out.d_null_count = d->d_small;
    *n_groups = 0;
    mark(d, AGG_EV_AGG1);
    /* The table's counters (the table method may switch to partitions here). */
    if (d->mode == AGG_GDRV_TABLE && d->tb_mem && (rc = table_finish(d)) < 0)
        return rc;
    if (d->mode == AGG_GDRV_DIRECT && d->dt_mem && (rc = direct_finish(d)) < 0)
        return rc;
    mark(d, AGG_EV_RETRY);
    if (d->mode == AGG_GDRV_PART) {
        rc = part_output(d, fn, ctx, d_status, &out, n_groups);
    } else {
        int direct = d->mode == AGG_GDRV_DIRECT;
        int64_t n = (direct ? d->dt_mem : d->tb_mem) ? d->groups : 0;
        if ((rc = out_prepare(d, fn, ctx, n, &out)) < 0)
            return rc;
        if (n > 0 && direct)
            CU(d, sl_k_agg_direct_output(&d->spec, &d->dt, &out, d_status, d->stream),
               "writing groups");
        else if (n > 0)
            CU(d, sl_k_agg_table_output(&d->spec, &d->tb, &out, d_status, d->stream),
               "writing groups");
        *n_groups = n;
    }
    if (rc < 0)
        return rc;
    mark(d, AGG_EV_OUT);
    /* Without null keys or values no output value is null (every group has a row, every
     * row a value): no counts to read, only the phase events to wait for (elapsed times
     * of events not yet reached are errors). */
    unsigned long long h[SL_K_AGG_MAX_KEYS + SL_K_AGG_MAX_AGGS] = {0};
    if (d->any_nulls &&
        (rc = sync_read(d, h, d->d_small, (size_t)nc * 8, "reading null counts")) < 0)
        return rc;
    if (!d->any_nulls && (d->ev_set >> AGG_EV_OUT & 1))
        CU(d, cudaEventSynchronize(d->ev[AGG_EV_OUT]), "waiting for the output");
    for (int c = 0; c < nc; c++)
        h_null_count[c] = (int64_t)h[c];
    d->phase_ms[AGG_PH_SAMPLE] = span_ms(d, AGG_EV_START, AGG_EV_AGG0);
    d->phase_ms[AGG_PH_AGGREGATE] = span_ms(d, AGG_EV_AGG0, AGG_EV_AGG1);
    d->phase_ms[AGG_PH_RETRY] = span_ms(d, AGG_EV_AGG1, AGG_EV_RETRY);
    d->phase_ms[AGG_PH_OUTPUT] = span_ms(d, AGG_EV_RETRY, AGG_EV_OUT);
    d->phase_ms[AGG_PH_PARTITION] = span_ms(d, AGG_EV_PART0, AGG_EV_PART1);
    return AGG_GDRV_OK;
}

void agg_gdrv_free(struct agg_gdrv *d)
{
    dfree(d, d->tb_mem);
    dfree(d, d->spill_mem);
    dfree(d, d->dt_mem);
    if (d->ins)
        d->mem.host_free(d->mem.ctx, d->ins, (size_t)d->cap_ins * sizeof *d->ins);
    for (int i = 0; i < AGG_EV_N; i++)
        if (d->ev[i])
            cudaEventDestroy(d->ev[i]);
    for (int i = 0; i < d->n_parts; i++)
        dfree(d, d->parts[i].mem);
    if (d->parts)
        d->mem.host_free(d->mem.ctx, d->parts, (size_t)d->cap_parts * sizeof *d->parts);
    dfree(d, d->d_small);
    memset(d, 0, sizeof *d);
}

int64_t agg_gdrv_held_bytes(const struct agg_gdrv *d)
{
    int64_t b = d->dt_mem ? d->dt_bytes : 0;
    if (d->tb_mem)
        b += (int64_t)sl_k_agg_table_bytes(&d->spec, d->tb.cap);
    if (d->spill_mem)
        b += (int64_t)sl_k_agg_table_bytes(&d->spec, d->spill.cap);
    for (int i = 0; i < d->n_parts; i++)
        b += d->parts[i].bytes;
    return b;
}

int agg_gdrv_reset(struct agg_gdrv *d)
{
    const struct agg_gdrv c = *d; /* the spec, stream, memory and choices */
    agg_gdrv_free(d);
    int rc = agg_gdrv_init(d, &c.spec, c.stream, &c.mem);
    d->force_mode = c.force_mode;
    d->shared_groups = c.shared_groups;
    d->force_bits = c.force_bits;
    d->init_cap = c.init_cap;
    d->update_flags = c.update_flags;
    d->small_threshold = c.small_threshold;
    d->part_threshold = c.part_threshold;
    d->few_threshold = c.few_threshold;
    d->direct_bits = c.direct_bits;
    d->row_partition = c.row_partition;
    d->big = c.big;
    d->one_pass = c.one_pass;
    d->cluster = c.cluster;
    d->strided_estimate = c.strided_estimate;
    return rc;
}
