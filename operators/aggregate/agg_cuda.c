/* aggregate on a GPU (issue 7): the CUDA sink, finalize and source of the hash group-by.
 *
 * sink: each device batch goes through the host driver (agg_gpu.c), which only launches
 *   kernels: on the first batch a sample of the keys (distinct keys and key changes,
 *   agg_gpu.h) estimates the groups (the one
 *   synchronization of the sink); few groups use the table method (per-block
 *   shared-memory pre-aggregation, a warp's rows of one group summed before one shared
 *   atomic, merged into a device hash table), many use the
 *   partitioned method (each batch is radix-partitioned by hash into device buffers).
 *   One key without nulls and integer count/sum/avg/min/max (the common case) take
 *   kernels with per-block shared tables of stored keys (SL_K_AGG_SMALL) for few groups
 *   and, for many, the record table (AGG_GDRV_DIRECT: one record per group, the batch
 *   partitioned first so that the table region in use stays in L2); the generic kernels
 *   take what they cannot. The operator keeps a reference to every batch: if the
 *   table turns out too small (checked once, at finalize) the batches are aggregated
 *   again into a bigger one, so no row is lost. Device memory comes from
 *   sl_task_device_alloc, so the engine's GPU budget bounds it; past a quarter of it the
 *   groups so far fold into host memory, and what the GPU cannot hold goes to the host
 *   for the CPU workers (agg_cuda_budget.c, agg_cuda.h).
 * combine (agg_hash.c, on the CPU): files the GPU locals under the global state.
 * finalize: reads the table's counters (growing and running again if needed), writes
 *   the groups into a device batch (table: one kernel over the groups; partitioned: one
 *   block per partition aggregates it in shared memory, count -> allocate -> write),
 *   int64 sums that overflow write SL_EOVERFLOW to the task's status word, which fails
 *   the query; null key and null aggregate bitmaps are built on the GPU. The phases
 *   (sample, aggregate, retry, output, and the record table's partitioning of the first
 *   batch as gpu_partition; CUDA events) go to the query profile.
 * source: slices of that batch, on the GPU for GPU consumers or downloaded for host ones.
 * co-processing (issue 8): when CPU workers sank rows too, finalize brings the GPU's
 *   groups to the host as partial states and the CPU finalize merges all (merge_on_host).
 *
 * Types: keys and values of int32, int64, date32, timestamp and decimal up to precision
 * 18 (as int32/int64), values also float32/float64; decimal sums are exact decimal(38, s).
 * DICT keys as int32 codes of the merged dictionary the CPU uses too, which the output's
 * key column gets (agg_cuda_dict.c: a batch on a dictionary merged first goes in as it
 * is, others are remapped by one gather).
 * No key (a global aggregate, TPC-H Q6): one group, the kernels' generic path; without
 * input rows the CPU finalize and source write its one row (empty_global).
 * Not on the GPU (can_run says no, the CPU sink runs): other types (bool, int8/16, uint,
 * utf8 keys, DICT values) or count(DISTINCT) (agg_any.c), more than SL_K_AGG_MAX_KEYS
 * keys or SL_K_AGG_MAX_AGGS aggregates. One GPU's locals only: a
 * plan whose sink ran on several GPUs fails with SL_EUNSUPPORTED (multi-GPU merge is
 * future work). */
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "../common/values.h"
#include "agg_cuda.h"
#include "gpu_ext.h"
#include "common/op_common.h"

/* Drops the kept batches (after finalize, or when a failed query's states go). */
void agg_gpu_local_release(struct agg_gpu_local *g)
{
    if (!g)
        return;
    agg_gpu_drop_kept(g);
    agg_gpu_cpu_release(g);
    agg_blist_release(&g->host_in);
    agg_blist_release(&g->folds);
    sl__schema_free(g->rows_schema);
    g->rows_schema = NULL;
}

void agg_gpu_drop_kept(struct agg_gpu_local *g)
{
    agg_blist_release(&g->kept_in);
    agg_blist_release(&g->kept_aux);
    g->kept_bytes = 0;
    g->unkept = 0;
}

int agg_blist_push(sl_task_t *t, struct agg_blist *l, sl_batch_t *b)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        sl_batch_t **nb = sl_task_alloc(t, (size_t)cap * sizeof *nb);
        if (!nb)
            return SL_ENOMEM;
        if (l->n)
            memcpy(nb, l->b, (size_t)l->n * sizeof *nb);
        if (l->b)
            sl_task_free(t, l->b);
        l->b = nb;
        l->cap = cap;
    }
    sl_batch_ref(b);
    l->b[l->n++] = b;
    return SL_OK;
}

void agg_blist_release(struct agg_blist *l)
{
    for (int i = 0; i < l->n; i++)
        sl_batch_unref(l->b[i]);
    l->n = 0; /* the array is query memory: it goes with the query */
}

/* Keeps device batch b until the driver's groups are written: an input (in) or what its
 * kernels read besides. */
static int keep_batch(sl_task_t *t, struct agg_gpu_local *g, sl_batch_t *b, int in)
{
    int rc = agg_blist_push(t, in ? &g->kept_in : &g->kept_aux, b);
    if (rc == SL_OK)
        g->kept_bytes += sl__batch_bytes(b);
    if (g->kept_bytes > g->kept_peak) {
        g->kept_peak = g->kept_bytes;
        sl_task_profile_value(t, "gpu_kept_bytes", g->kept_peak);
    }
    return rc;
}

static void *dev_alloc(void *ctx, size_t bytes)
{
    return sl_task_device_alloc(ctx, bytes);
}

static void dev_free(void *ctx, void *p)
{
    sl_task_device_free(ctx, p);
}

/* Host arrays live in the query's memory (freed with it even if the query fails). */
static void *host_alloc(void *ctx, size_t bytes)
{
    return sl_task_alloc(ctx, bytes);
}

static void host_free(void *ctx, void *p, size_t bytes)
{
    (void)bytes;
    if (p)
        sl_task_free(ctx, p);
}

static int64_t budget_left(void *ctx)
{
    return sl_task_device_budget(ctx);
}

static int drv_failed(sl_task_t *t, const struct agg_gdrv *d, int rc)
{
    if (rc == AGG_GDRV_EBUDGET && d)
        return sl_task_fail(t, SL_EBUDGET, "aggregate on the GPU: %lld bytes (a table of %lld "
                            "groups, or 0: other memory) do not fit the GPU budget (%lld "
                            "bytes left)", (long long)d->need_bytes, (long long)d->need_groups,
                            (long long)sl_task_device_budget(t));
    if (rc == AGG_GDRV_ENOMEM || !d)
        return sl_task_fail(t, SL_ENOMEM, "aggregate on the GPU: out of memory");
    return SL_TASK_CUDA_FAIL(t, d->cuerr, d->what ? d->what : "the GPU driver");
}

/* The driver works for the task at hand: its memory and stream (a call that may
 * allocate or free must bind first: the task it last worked for may be gone). */
void agg_gpu_bind(struct agg_gdrv *d, sl_task_t *t)
{
    d->mem.ctx = t;
    d->stream = sl_task_stream(t);
}

/* The kernels' type of a column: dates and DICT codes are int32, timestamps and decimals
 * (precision up to 18) int64 (bind allows only these: agg_plan.gpu_types). */
static int k_type(enum sl_type t)
{
    switch (SL_TYPE_ID(t)) {
    case SL_TYPE_INT32:
    case SL_TYPE_DICT:
    case SL_TYPE_DATE32: return SL_K_I32;
    case SL_TYPE_FLOAT32: return SL_K_F32;
    case SL_TYPE_FLOAT64: return SL_K_F64;
    default: return SL_K_I64;
    }
}

static void spec_of(const struct agg_plan *p, struct sl_k_agg_spec *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->n_keys = p->n_keys;
    for (int j = 0; j < p->n_keys; j++)
        sp->key_type[j] = k_type(p->key_types[j]);
    sp->n_aggs = p->n_aggs;
    for (int a = 0; a < p->n_aggs; a++) {
        sp->fn[a] = (int)p->aggs[a].fn; /* same order as SL_K_AGG_* */
        sp->in_type[a] = p->aggs[a].col >= 0 ? k_type(p->aggs[a].in_type) : SL_K_I64;
        /* Decimal sums are decimal(38, s) (exact, 16 bytes); averages divide by 10^s
         * first, as the CPU finalize does. */
        if (p->aggs[a].col >= 0 && SL_TYPE_ID(p->aggs[a].in_type) == SL_TYPE_DECIMAL) {
            sp->sum128[a] = 1;
            sp->avg_unit[a] = (double)sl__pow10_i128(sl_type_scale(p->aggs[a].in_type));
        }
    }
}

int agg_gpu_sink_can_run(const sl_task_t *t)
{
    const struct agg_plan *p = sl_op_data(sl_task_op((sl_task_t *)t));
    const sl_batch_t *b = sl_task_input(t);
    /* Types beyond int32/int64/float32/float64, count(DISTINCT): the CPU's; so is a
     * where= the GPU program does not take (p->where_why says why), or one over a batch
     * too big for it (as the GPU filter). */
    return !p->any && p->gpu_types && p->n_keys <= SL_K_AGG_MAX_KEYS &&
           p->n_aggs <= SL_K_AGG_MAX_AGGS && (!p->where || (p->where_xp && sl__xp_rows_fit(b)));
}

static void col_of(const sl_batch_t *b, int c, int64_t off, struct sl_k_agg_col *o)
{
    const struct sl__col *col = &b->cols[c];
    o->d_data = (const char *)sl__col_values(b, c) + (size_t)off * sl_type_width(col->type);
    o->d_valid = col->validity && col->null_count != 0 ? col->validity->ptr : NULL;
    o->valid_off = col->offset + off;
}

/* Drops the remapped key codes of a sunk batch (kept ones hold their own reference). */
static int drop_batches(sl_batch_t **bs, int rc)
{
    for (int j = 0; j < SL_K_AGG_MAX_KEYS; j++)
        sl_batch_unref(bs[j]);
    return rc;
}

/* Host wall time in ms since t0 (engine time, issue 19: the host's share of a GPU query
 * goes to the profile as phases gpu_host_sink, gpu_host_finalize and gpu_host_output). */
static double host_ms(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Runs fn(t) and adds its host wall time to the profile phase `phase`. */
static int timed(sl_task_t *t, int (*fn)(sl_task_t *), const char *phase)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = fn(t);
    sl_task_phase_time(t, phase, host_ms(&t0));
    return rc;
}

/* where=: the numbers of the rows of device batch b where the predicate is TRUE, in a new
 * device batch *rows of one int32 column, and their count *k. */
static int where_rows(sl_task_t *t, const struct agg_plan *p, struct agg_gpu_local *g,
                      sl_batch_t *b, sl_batch_t **rows, int64_t *k)
{
    *rows = NULL;
    *k = 0;
    if (b->n_rows == 0)
        return SL_OK;
    if (!g->rows_schema) {
        g->rows_schema = sl__schema_new(1);
        if (!g->rows_schema || sl__schema_set(g->rows_schema, 0, "row", SL_TYPE_INT32) != SL_OK)
            return sl_task_fail(t, SL_ENOMEM, "out of memory");
    }
    if (!(*rows = sl_task_new_batch(t, g->rows_schema, b->n_rows)))
        return SL_ENOMEM;
    return sl__xp_select_gpu(t, p->where, p->where_xp, b, sl__col_values(*rows, 0), k);
}

/* Aggregates k rows of device batch b: rows d_idx[0 .. k) of its columns, or its first k
 * (d_idx NULL: every row). SL_OK, an error, or ROWS_REFUSED (nothing added) when the
 * driver's method does not read rows by number. */
enum { ROWS_REFUSED = 1 };
static int sink_rows(sl_task_t *t, const struct agg_plan *p, struct agg_gpu_local *g,
                     sl_batch_t *b, const uint32_t *d_idx, int64_t k)
{
    struct agg_gdrv *d = &g->drv;
    int rc;
    /* DICT keys as merged codes: b's own, or remapped into a batch of their own. */
    sl_batch_t *remapped[SL_K_AGG_MAX_KEYS] = {NULL};
    for (int j = 0; j < p->n_keys; j++)
        if (p->key_types[j] == SL_TYPE_DICT &&
            (rc = agg_gpu_dict_codes(t, sl_task_gstate(t), b, j, p->key_cols[j],
                                     &remapped[j])) != SL_OK)
            return drop_batches(remapped, rc); /* nothing added yet */
    /* The kernels count rows in 32 bits: batches go in pieces of at most 2^30 rows. Rows
     * read by number keep the columns whole (the numbers are of b's rows). */
    const int64_t piece = (int64_t)1 << 30;
    for (int64_t off = 0; off < k; off += piece) {
        struct sl_k_agg_input in;
        memset(&in, 0, sizeof in);
        in.n = k - off < piece ? k - off : piece;
        const int64_t coff = d_idx ? 0 : off;
        in.d_rowidx = d_idx ? d_idx + off : NULL;
        for (int j = 0; j < p->n_keys; j++) {
            col_of(b, p->key_cols[j], coff, &in.keys[j]);
            if (remapped[j]) /* the validity stays b's */
                in.keys[j].d_data = (const int32_t *)sl__col_values(remapped[j], 0) + coff;
        }
        for (int a = 0; a < p->n_aggs; a++)
            if (p->aggs[a].col >= 0)
                col_of(b, p->aggs[a].col, coff, &in.vals[a]);
        if ((rc = agg_gdrv_add(d, &in)) < 0)
            return drop_batches(remapped, rc == AGG_GDRV_EROWS     ? ROWS_REFUSED
                                          : rc == AGG_GDRV_EBUDGET ? AGG_GPU_OVER_BUDGET
                                                                   : drv_failed(t, d, rc));
    }
    /* The table methods may run the batch again at finalize (agg_gdrv_output), and under
     * a GPU budget every method's inputs may go to the host (agg_cuda_budget.c): b
     * stays until the driver's groups are written; remapped codes too (kernels on the
     * stream may still read them). The partitioned method without a budget has copied
     * b into its partitions: b goes now (its memory is freed in stream order). */
    if (!g->budget && d->mode == AGG_GDRV_PART) {
        g->unkept = 1;
        return drop_batches(remapped, SL_OK);
    }
    rc = SL_OK;
    for (int j = 0; j < p->n_keys && rc == SL_OK; j++)
        rc = remapped[j] ? keep_batch(t, g, remapped[j], 0) : SL_OK;
    if (rc == SL_OK && b->n_rows > 0)
        rc = keep_batch(t, g, b, 1);
    return drop_batches(remapped, rc);
}

static int sink(sl_task_t *t);
static int sink_input(sl_task_t *t, const struct agg_plan *p, struct agg_gpu_local *g,
                      sl_batch_t *b);

int agg_gpu_sink(sl_task_t *t)
{
    return timed(t, sink, "gpu_host_sink");
}

static int sink(sl_task_t *t)
{
    const struct agg_plan *p = sl_op_data(sl_task_op(t));
    struct agg_local *ls = sl_task_lstate(t);
    if (!ls)
        return SL_ENOMEM;
    sl_batch_t *b = sl_task_input(t);
    if (sl_batch_device(b) < 0)
        return sl_task_fail(t, SL_EINTERNAL, "aggregate on the GPU: a host batch reached the "
                            "GPU sink");
    int rc;
    if (!ls->gpu) {
        struct sl_k_agg_spec sp;
        spec_of(p, &sp);
        const struct agg_gdrv_mem mem = {dev_alloc, dev_free, host_alloc, host_free, t,
                                         budget_left};
        if (!(ls->gpu = sl_task_alloc(t, sizeof *ls->gpu)))
            return SL_ENOMEM;
        /* sl_task_alloc does not clear: the kept-batch list must start empty (reused heap
         * memory made keep_batch write through a stale pointer, intermittently). */
        memset(ls->gpu, 0, sizeof *ls->gpu);
        int64_t gpu_mem = 0;
        sl_task_option_int(t, "gpu_mem", &gpu_mem);
        ls->gpu->budget = gpu_mem > 0;
        if ((rc = agg_gdrv_init(&ls->gpu->drv, &sp, sl_task_stream(t), &mem)) < 0) {
            ls->gpu = NULL;
            return drv_failed(t, NULL, rc);
        }
    }
    struct agg_gpu_local *g = ls->gpu;
    struct agg_gdrv *d = &g->drv;
    agg_gpu_bind(d, t);
    sl_task_option_int(t, "agg_gpu_part_threshold", &d->part_threshold);
    int64_t strided = 0;
    sl_task_option_int(t, "debug_agg_gpu_strided_estimate", &strided);
    d->strided_estimate = strided != 0;
    int64_t generic = 0;
    sl_task_option_int(t, "debug_gpu_generic", &generic);
    d->few_threshold = generic ? -1 : 0;
    int64_t no_lean = 0;
    sl_task_option_int(t, "debug_agg_gpu_no_lean", &no_lean);
    if (no_lean)
        d->update_flags &= ~SL_K_AGG_LEAN;
    int64_t no_big = 0;
    sl_task_option_int(t, "debug_agg_gpu_no_big_table", &no_big);
    d->big = no_big ? -1 : 0;
    int64_t strict = 0;
    sl_task_option_int(t, "debug_agg_gpu_big_strict", &strict);
    d->big_strict = strict != 0;
    if (g->on_host)
        return agg_gpu_go_host(t, g, b, g->why_host);
    /* The row numbers of where= and remapped DICT codes are device batches of their own
     * (an allocation over the budget would fail the query): without room for them, the
     * rows go to the host. */
    int64_t aux = p->where ? 4 * b->n_rows : 0;
    for (int j = 0; j < p->n_keys; j++)
        aux += p->key_types[j] == SL_TYPE_DICT ? 4 * b->n_rows : 0;
    if (aux && aux + ((int64_t)1 << 20) > sl_task_device_budget(t))
        return agg_gpu_go_host(t, g, b, AGG_GPU_WHY_INPUT);
    rc = sink_input(t, p, g, b);
    if (rc == AGG_GPU_OVER_BUDGET) /* the driver's state goes: its inputs are all kept */
        return agg_gpu_go_host(t, g, b, AGG_GPU_WHY_DRIVER);
    if (rc == AGG_GPU_INPUT_OVER_BUDGET) /* b's remapped codes: nothing of b was added */
        return agg_gpu_go_host(t, g, b, AGG_GPU_WHY_INPUT);
    return rc < 0 ? rc : agg_gpu_budget_check(t, p, g);
}

/* Adds device batch b (where= applied) to the driver and keeps it. */
static int sink_input(sl_task_t *t, const struct agg_plan *p, struct agg_gpu_local *g,
                      sl_batch_t *b)
{
    if (!p->where)
        return sink_rows(t, p, g, b, NULL, b->n_rows);
    /* where=: the kernels read the passing rows by number, in place (no gathered copy of
     * the columns); a method that cannot gets them gathered (at once, without remapping
     * DICT codes for an add it refuses, once the driver chose such a method). */
    int64_t k = 0;
    sl_batch_t *rows = NULL;
    int rc = where_rows(t, p, g, b, &rows, &k);
    if (rc < 0 || k == 0) {
        sl_batch_unref(rows);
        return rc;
    }
    const uint32_t *d_idx = k < b->n_rows ? sl__col_values(rows, 0) : NULL;
    const int mode = g->drv.mode; /* a method chosen that refuses every such batch */
    rc = d_idx && mode && mode != AGG_GDRV_TABLE ? ROWS_REFUSED
                                                 : sink_rows(t, p, g, b, d_idx, k);
    if (rc == ROWS_REFUSED) {
        sl_batch_t *taken = NULL;
        const int64_t copy = (int64_t)((double)sl__batch_bytes(b) * (double)k / (double)b->n_rows);
        rc = copy + ((int64_t)1 << 20) > sl_task_device_budget(t) ? AGG_GPU_OVER_BUDGET
                                                                  : sl__gpu_take(t, b, d_idx, k, &taken);
        if (rc == SL_OK)
            rc = sink_rows(t, p, g, taken, NULL, k);
        sl_batch_unref(taken);
    } else if (rc == SL_OK && d_idx) {
        rc = keep_batch(t, g, rows, 0); /* the numbers, for a run at finalize */
    }
    sl_batch_unref(rows);
    return rc;
}

/* ---------------- finalize ---------------- */

struct out_ctx {
    sl_task_t *t;
    const struct agg_plan *p;
    sl_schema_t *vschema;               /* one int32 column: bitmap words */
    sl_batch_t *b;
    int64_t over;                       /* bytes of an output over the budget (not tried) */
    sl_schema_t *schema;                /* of the output batch */
};

/* A device buffer of `words` 32-bit words as a batch buffer: borrowed from a one-column
 * device batch, so it is pool memory with the batch's lifetime rules. */
static struct sl__buf *device_words(struct out_ctx *o, int64_t words)
{
    sl_batch_t *vb = sl_task_new_batch(o->t, o->vschema, words > 0 ? words : 1);
    if (!vb)
        return NULL;
    struct sl__buf *buf = vb->cols[0].data;
    sl__buf_ref(buf);
    sl_batch_unref(vb);
    return buf;
}

static int out_alloc(void *ctx, int64_t rows, struct sl_k_agg_out *out)
{
    struct out_ctx *o = ctx;
    const sl_schema_t *sc = o->schema;
    int64_t bytes = ((int64_t)1 << 20) + (int64_t)(o->p->n_keys + o->p->n_aggs) * (rows / 8 + 256);
    for (int c = 0; c < o->p->n_keys + o->p->n_aggs; c++) {
        const char *name;
        enum sl_type ty = SL_TYPE_INT64;
        sl_schema_field(sc, c, &name, &ty);
        bytes += sl__col_data_bytes(ty, rows);
    }
    if (bytes > sl_task_device_budget(o->t)) { /* a failed allocation fails the query */
        o->over = bytes;
        return AGG_GDRV_EBUDGET;
    }
    sl_batch_unref(o->b);
    o->b = sl_task_new_batch(o->t, sc, rows);
    if (!o->b)
        return AGG_GDRV_ENOMEM;
    const struct agg_plan *p = o->p;
    for (int c = 0; c < p->n_keys + p->n_aggs; c++) {
        out->d_cols[c] = sl__col_values(o->b, c);
        out->d_valid[c] = NULL;
        int a = c - p->n_keys;
        if (a >= 0 && (p->aggs[a].fn == AGG_COUNT_STAR || p->aggs[a].fn == AGG_COUNT))
            continue;
        struct sl__buf *vb = device_words(o, (rows + 31) / 32);
        if (!vb)
            return AGG_GDRV_ENOMEM;
        o->b->cols[c].validity = vb;
        out->d_valid[c] = vb->ptr;
    }
    return AGG_GDRV_OK;
}

/* Finalize on the GPU only what was sunk there: a sink whose CUDA implementation could not
 * run (a global aggregate) left host states, which the CPU finalize takes. */
int agg_gpu_finalize_can_run(const sl_task_t *t)
{
    return ((const struct agg_global *)sl_task_gstate((sl_task_t *)t))->n_gpu_locals > 0;
}

/* Co-processing: CPU workers sank rows too. The GPU's groups (few next to the rows) go
 * to the host as partial states (integer sums as decimal(38, 0)) and the CPU finalize
 * merges them with the host's at 128 bits. The rest of the query then reads the result
 * from host memory. */
static int merge_on_host(sl_task_t *t, const struct agg_plan *p, struct agg_global *gs)
{
    sl_batch_t *h = NULL;
    int rc = sl_task_batch_to_host(t, gs->gpu_out, &h);
    sl_batch_unref(gs->gpu_out);
    gs->gpu_out = NULL;
    gs->n_gpu_locals = 0;
    if (rc < 0)
        return rc;
    if (sl__agg_dict_keys(p)) { /* the GPU's codes as codes of the CPU's merged dictionary */
        int cols[AGG_MAX_KEYS]; /* key j is column j of an output batch */
        for (int j = 0; j < p->n_keys; j++)
            cols[j] = j;
        sl_batch_t *coded = NULL;
        rc = sl__agg_dict_input(t, p, gs, h, cols, &coded);
        sl_batch_unref(h);
        if (rc < 0)
            return rc;
        h = coded;
    }
    rc = sl__agg_add_partials(t, p, gs, h);
    sl_batch_unref(h);
    return rc < 0 ? rc : sl__agg_finalize_cpu(t);
}

static int finalize(sl_task_t *t);

/* A global aggregate over no rows has one row all the same (count 0, the others NULL):
 * the GPU made no group, so the CPU finalize and source write it, as for a query whose
 * sink never ran. */
static int empty_global(sl_task_t *t, struct agg_global *gs, sl_batch_t *unused)
{
    sl_batch_unref(unused);
    gs->n_gpu_locals = 0;
    return sl__agg_finalize_cpu(t);
}

int agg_gpu_finalize(sl_task_t *t)
{
    return timed(t, finalize, "gpu_host_finalize");
}

/* The output schema, or with wide: the fold's, whose integer sums are decimal(38, 0) (the
 * kernels' exact 128-bit sums, spec.sum128), so that a fold's partial sum that does not
 * fit int64 does not fail a query whose total does (the CPU merges them at 128 bits). */
static sl_schema_t *groups_schema(sl_task_t *t, const struct agg_plan *p, int wide,
                                  struct sl_k_agg_spec *sp)
{
    const sl_schema_t *sc = sl_op_output_schema(sl_task_op(t));
    const int nc = p->n_keys + p->n_aggs;
    sl_schema_t *w = sl__schema_new(nc);
    for (int c = 0; w && c < nc; c++) {
        const char *name = NULL;
        enum sl_type ty = SL_TYPE_INT64;
        sl_schema_field(sc, c, &name, &ty);
        const int a = c - p->n_keys;
        if (wide && a >= 0 && p->aggs[a].fn == AGG_SUM && p->aggs[a].out_type == SL_TYPE_INT64) {
            ty = sl_type_decimal(38, 0);
            sp->sum128[a] = 1;
        }
        if (sl__schema_set(w, c, name, ty) != SL_OK) {
            sl__schema_free(w);
            w = NULL;
        }
    }
    return w;
}

int agg_gpu_groups(sl_task_t *t, const struct agg_plan *p, struct agg_gdrv *d, int wide,
                   sl_batch_t **out)
{
    *out = NULL;
    agg_gpu_bind(d, t);
    const struct sl_k_agg_spec spec = d->spec; /* wide sets sum128 for this output only */
    struct out_ctx o = {t, p, sl__schema_new(1), NULL, 0, groups_schema(t, p, wide, &d->spec)};
    if (!o.vschema || !o.schema || sl__schema_set(o.vschema, 0, "w", SL_TYPE_INT32) != SL_OK) {
        d->spec = spec;
        sl__schema_free(o.vschema);
        sl__schema_free(o.schema);
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    }
    int64_t n = 0, nulls[SL_K_AGG_MAX_KEYS + SL_K_AGG_MAX_AGGS];
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = agg_gdrv_output(d, out_alloc, &o, sl_task_status(t), &n, nulls);
    sl_task_phase_time(t, "gpu_host_output", host_ms(&t0));
    d->spec = spec;
    sl__schema_free(o.vschema);
    sl__schema_free(o.schema);
    if (rc < 0) {
        sl_batch_unref(o.b);
        return rc == AGG_GDRV_EBUDGET || o.over ? AGG_GPU_OVER_BUDGET : drv_failed(t, d, rc);
    }
    static const char *const names[AGG_PH_N] = {"gpu_sample", "gpu_aggregate", "gpu_retry",
                                                  "gpu_output", "gpu_partition"};
    for (int i = 0; i < AGG_PH_N; i++)
        if (d->phase_ms[i] >= 0)
            sl_task_phase_time(t, names[i], d->phase_ms[i]);
    /* The method's choices (issue 19's 2^24 groups: 12 bits and the big table). */
    sl_task_profile_value(t, "gpu_mode", d->mode);
    sl_task_profile_value(t, "gpu_groups_estimate", (int64_t)d->g_est);
    if (d->bits) {
        sl_task_profile_value(t, "gpu_radix_bits", d->bits);
        sl_task_profile_value(t, "gpu_big_table", d->big_on);
    }
    for (int c = 0; c < p->n_keys + p->n_aggs; c++) {
        struct sl__col *col = &o.b->cols[c];
        col->null_count = col->validity ? nulls[c] : 0;
        if (col->validity && nulls[c] == 0) {
            sl__buf_unref(col->validity);
            col->validity = NULL;
        }
    }
    *out = sl_task_batch_slice(t, o.b, 0, n);
    sl_batch_unref(o.b);
    return *out ? SL_OK : SL_ENOMEM;
}

static int finalize(sl_task_t *t)
{
    const struct agg_plan *p = sl_op_data(sl_task_op(t));
    struct agg_global *gs = sl_task_gstate(t);
    if (gs->n_gpu_locals > 1)
        return sl_task_fail(t, SL_EUNSUPPORTED, "aggregate: groups sunk on %d GPUs (merging "
                            "GPU tables across GPUs is not implemented)", gs->n_gpu_locals);
    struct agg_gpu_local *g = gs->gpu_locals[0];
    struct agg_gdrv *d = &g->drv;
    if (g->on_host || g->folds.n)
        return agg_gpu_budget_finalize(t, p, gs, g);
    /* Co-processing (CPU states too): the GPU's integer sums leave at 128 bits, as a
     * fold's do, so that the GPU's part passing int64 fails nothing when the total fits. */
    sl_batch_t *ob = NULL;
    int rc = agg_gpu_groups(t, p, d, gs->locals != NULL, &ob);
    if (rc == AGG_GPU_OVER_BUDGET) { /* a bigger table does not fit: the CPU aggregates */
        if ((rc = agg_gpu_go_host(t, g, NULL, AGG_GPU_WHY_DRIVER)) < 0)
            return rc;
        return agg_gpu_budget_finalize(t, p, gs, g);
    }
    if (rc < 0)
        return rc;
    int64_t n = sl_batch_num_rows(ob);
    agg_gdrv_free(d); /* the table and partitions are no longer needed */
    agg_gpu_local_release(g);
    if (n == 0 && p->n_keys == 0 && !gs->locals)
        return empty_global(t, gs, ob);
    if ((rc = agg_gpu_dicts_attach(t, p, gs, ob)) < 0) {
        sl_batch_unref(ob);
        return rc;
    }
    gs->gpu_out = ob;
    if (gs->locals)
        return merge_on_host(t, p, gs);
    gs->gpu = 1;
    return SL_OK;
}

/* ---------------- source ---------------- */

int agg_gpu_source_can_run(const sl_task_t *t)
{
    return ((const struct agg_global *)sl_task_gstate((sl_task_t *)t))->gpu;
}

int64_t agg_gpu_source_tasks(sl_task_t *t)
{
    struct agg_global *gs = sl_task_gstate(t);
    return sl__morsel_tasks(t, gs->gpu_out, gs->gpu_out ? sl_batch_num_rows(gs->gpu_out) : 0);
}

/* One morsel of the device result: on the GPU as it is, or downloaded for a host task. */
int agg_gpu_source(sl_task_t *t)
{
    struct agg_global *gs = sl_task_gstate(t);
    return sl__emit_morsel(t, gs->gpu_out, sl_batch_num_rows(gs->gpu_out));
}

/* ---------------- the definition CUDA builds register (aggregate/meson.build) -------- */

/* A failed query's GPU locals may still hold batches (finalize drops them otherwise). */
static void fini_local(const sl_op_t *op, void *gstate, void *lstate)
{
    (void)op, (void)gstate;
    struct agg_local *ls = lstate;
    sl__agg_fini_local(op, gstate, lstate);
    if (ls && ls->gpu)
        agg_gpu_local_release(ls->gpu);
}

/* The source emits the GPU's result when finalize ran there, else the CPU's. */
static int64_t source_tasks(sl_task_t *t)
{
    const struct agg_global *gs = sl_task_gstate(t);
    return gs->gpu ? agg_gpu_source_tasks(t) : sl__agg_source_tasks(t);
}

static int source_any(sl_task_t *t)
{
    const struct agg_global *gs = sl_task_gstate(t);
    return gs->gpu ? agg_gpu_source(t) : sl__agg_source(t);
}

SL__IMPLS_CPU_CUDA(def_sink, sl__agg_sink, agg_gpu_sink, agg_gpu_sink_can_run);
/* Combine only files a GPU worker's driver under the global state (its tasks have all
 * completed when combine runs): on the CPU, so that it costs no synchronous GPU task
 * (a status word, a stream wait; engine time, issue 19). */
static const struct sl_impl def_combine[] = {SL__IMPL_CPU(sl__agg_combine)};
SL__IMPLS_CPU_CUDA(def_finalize, sl__agg_finalize_cpu, agg_gpu_finalize, agg_gpu_finalize_can_run);
SL__IMPLS_CPU_CUDA(def_source, source_any, source_any, agg_gpu_source_can_run);
SL__SINK_SOURCE_DEF(sl__aggregate_cuda_def, SL__AGG_DEF_FIELDS, (source_tasks, fini_local),
                    sl__agg_cost, def_sink, def_combine, def_finalize, def_source);
