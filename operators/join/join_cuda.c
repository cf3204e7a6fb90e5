/* join on a GPU (issue 6): the CUDA finalize and source of the join operator.
 *
 * When the join's inputs were sunk on a GPU, finalize runs there (op.h, "GPU
 * placement"): both sides become contiguous device columns (GPU-resident inputs that
 * are slices of one buffer are used in place), are radix-partitioned on the key
 * (kernels/partition: stable, so every column partitioned with the key gets the same
 * permutation), and joined per co-partition with shared-memory hash tables
 * (kernels/join). The result is sized by count -> allocate -> write: the join kernel
 * always returns the exact match count, so an output sized for the PK-FK bound (one
 * row per probe row) is written in one pass, and only a larger result runs again with
 * the exact size. Then:
 *  - narrow (one payload column per side, same width): the kernel writes the output
 *    columns directly (key, build payload, probe payload);
 *  - otherwise (GFTR-style): the kernel joins (key, row id) pairs and each output
 *    column is gathered by row id; ids come out in partition order, so the gathers read
 *    the inputs in clustered runs.
 * output=aggregate sums the output columns on the GPU (int64 sums exact, overflow is an
 * error as on the CPU). The source then emits slices of the device result, which stay
 * on the GPU for GPU consumers or are downloaded for host ones.
 *
 * Not (yet) on the GPU — can_run says no and the CPU implementation runs, after moving
 * the batches to host memory: kinds other than inner, composite keys, keys with nulls,
 * sides of 2^32 rows or more. */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "join_int.h"
#include "sluice_k/columns.h"
#include "sluice_k/join.h"
#include "sluice_k/partition.h"

#define BUILD_ROWS_PER_PARTITION 4096 /* fits one shared-memory table (SL_K_JOIN_BUILD_CHUNK) */

static int cuda_failed(sl_task_t *t, cudaError_t e, const char *what)
{
    return sl_task_fail(t, SL_EDEVICE, "join on the GPU: %s: %s", what, cudaGetErrorName(e));
}

#define CK(t, expr, what)                                                                   \
    do {                                                                                    \
        cudaError_t e_ = (expr);                                                            \
        if (e_ != cudaSuccess)                                                              \
            return cuda_failed((t), e_, (what));                                            \
    } while (0)

/* ---------------- can the GPU do it ---------------- */

static int key_has_nulls(const struct join_side *sd, int col)
{
    for (int64_t i = 0; i < sd->n_batches; i++)
        if (sd->batches[i]->cols[col].validity && sd->batches[i]->cols[col].null_count != 0)
            return 1;
    return 0;
}

int join_gpu_can_run(const sl_task_t *t)
{
    const struct join_data *d = sl_op_data(sl_task_op(t));
    const struct join_state *st = sl_task_gstate((sl_task_t *)t);
    if (d->kind != JOIN_INNER || d->n_keys != 1)
        return 0;
    int64_t n[2] = {0, 0};
    for (int s = 0; s < 2; s++) {
        for (int64_t i = 0; i < st->side[s].n_batches; i++)
            n[s] += st->side[s].batches[i]->n_rows;
        if (n[s] >= ((int64_t)1 << 32) - 1 || key_has_nulls(&st->side[s], d->key[s][0]))
            return 0;
    }
    /* Memory: inputs copied (when not already one device buffer) and partitioned, and
     * the output at the PK-FK bound; more than the budget goes to the CPU for now (the
     * out-of-core GPU join is issue 8's). 16 bytes per key + value bounds both. */
    int64_t need = 2 * 16 * (n[0] + n[1]) + 24 * (n[0] > n[1] ? n[0] : n[1]) + (64 << 20);
    return need <= sl_task_device_budget(t) || join_ooc_can_run(t); /* issue 8 */
}

/* 1 when the in-GPU join fits the budget (else join_cuda_ooc.c runs it out of core). */
static int fits_in_gpu(sl_task_t *t)
{
    const struct join_state *st = sl_task_gstate(t);
    int64_t n[2] = {0, 0};
    for (int s = 0; s < 2; s++)
        for (int64_t i = 0; i < st->side[s].n_batches; i++)
            n[s] += st->side[s].batches[i]->n_rows;
    int64_t need = 2 * 16 * (n[0] + n[1]) + 24 * (n[0] > n[1] ? n[0] : n[1]) + (64 << 20);
    return need <= sl_task_device_budget(t);
}

/* ---------------- contiguous device columns ---------------- */

struct gside {
    int64_t n;
    int64_t *order;                     /* batch indices sorted by the key column's offset */
};

/* Where a batch's key column lives, for ordering batches (no global comparator state:
 * joins of concurrent queries finalize at the same time). */
struct batch_pos {
    uintptr_t buf;
    int64_t offset, index;
};

static int by_offset(const void *a, const void *b)
{
    const struct batch_pos *x = a, *y = b;
    if (x->buf != y->buf)
        return x->buf < y->buf ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Column `col` of side `s` as one device array of n values in `order`: in place when the
 * batches are consecutive slices of one device buffer (GPU-resident input scanned in
 * morsels), else copied (cudaMemcpyDefault: from host or device). *owned is set when
 * the array was allocated here. */
static int side_column(sl_task_t *t, const struct join_state *st, int s,
                       const struct gside *g, int col, const void **out, void **owned)
{
    const struct join_side *sd = &st->side[s];
    *owned = NULL;
    if (sd->n_batches == 0) {
        *out = NULL;
        return SL_OK;
    }
    const struct sl__col *c0 = &sd->batches[g->order[0]]->cols[col];
    size_t w = sl_type_width(c0->type);
    int dev = sl_batch_device(sd->batches[g->order[0]]);
    int in_place = dev >= 0 && !c0->validity;
    int64_t next = c0->offset;
    for (int64_t i = 0; in_place && i < sd->n_batches; i++) {
        const struct sl__col *c = &sd->batches[g->order[i]]->cols[col];
        in_place = c->data == c0->data && c->offset == next && !c->validity;
        next += sd->batches[g->order[i]]->n_rows;
    }
    if (in_place) {
        *out = (const char *)c0->data->ptr + (size_t)c0->offset * w;
        return SL_OK;
    }
    char *dst = sl_task_device_alloc(t, (size_t)g->n * w);
    if (!dst)
        return SL_ENOMEM;
    cudaStream_t stream = sl_task_stream(t);
    int64_t at = 0;
    for (int64_t i = 0; i < sd->n_batches; i++) {
        const sl_batch_t *b = sd->batches[g->order[i]];
        const struct sl__col *c = &b->cols[col];
        CK(t, cudaMemcpyAsync(dst + (size_t)at * w, (const char *)c->data->ptr + (size_t)c->offset * w,
                              (size_t)b->n_rows * w, cudaMemcpyDefault, stream),
           "gathering an input column");
        at += b->n_rows;
    }
    *out = dst;
    *owned = dst;
    return SL_OK;
}

/* ---------------- the kernels, by key and value width ---------------- */

struct jshape {
    int k8, v8;                         /* 8-byte keys, 8-byte values */
};

static cudaError_t partition(const struct jshape *sh, void *temp, size_t *temp_bytes,
                             const void *k_in, void *k_out, const void *v_in, void *v_out,
                             int64_t n, int bits, cudaStream_t s)
{
    if (!sh->k8 && !sh->v8)
        return sl_k_partition_pairs_k32_v32(temp, temp_bytes, k_in, k_out, v_in, v_out, n, 0,
                                            bits, 8, SL_K_PART_CUB, s);
    if (!sh->k8)
        return sl_k_partition_pairs_k32_v64(temp, temp_bytes, k_in, k_out, v_in, v_out, n, 0,
                                            bits, 8, SL_K_PART_CUB, s);
    if (!sh->v8)
        return sl_k_partition_pairs_k64_v32(temp, temp_bytes, k_in, k_out, v_in, v_out, n, 0,
                                            bits, 8, SL_K_PART_CUB, s);
    return sl_k_partition_pairs_k64_v64(temp, temp_bytes, k_in, k_out, v_in, v_out, n, 0, bits,
                                        8, SL_K_PART_CUB, s);
}

static cudaError_t offsets(const struct jshape *sh, const void *keys, int64_t n, int bits,
                           int64_t *off, cudaStream_t s)
{
    return sh->k8 ? sl_k_partition_offsets_k64(keys, n, 0, bits, off, s)
                  : sl_k_partition_offsets_k32(keys, n, 0, bits, off, s);
}

static cudaError_t materialize(const struct jshape *sh, void *temp, size_t *temp_bytes,
                               const void *rk, const void *rv, const int64_t *ro, const void *sk,
                               const void *sv, const int64_t *so, int bits, void *ok, void *orv,
                               void *osv, int64_t cap, unsigned long long *count, cudaStream_t s)
{
#define SL_MAT(SUF) sl_k_phj_materialize_##SUF(temp, temp_bytes, rk, rv, ro, sk, sv, so, bits, \
                                              bits, ok, orv, osv, cap, count, s)
    if (!sh->k8)
        return sh->v8 ? SL_MAT(k32_v64) : SL_MAT(k32_v32);
    return sh->v8 ? SL_MAT(k64_v64) : SL_MAT(k64_v32);
#undef SL_MAT
}

/* ---------------- finalize ---------------- */

/* One side after partitioning: keys and values (payload or row id) in partition order. */
struct pside {
    const void *k, *v;                  /* inputs, contiguous */
    void *pk, *pv;                      /* partitioned */
    int64_t *off;                       /* partition offsets */
    int64_t n;
};

static int radix_bits(int64_t build_rows)
{
    int b = join_log2_ceil((build_rows + BUILD_ROWS_PER_PARTITION - 1) / BUILD_ROWS_PER_PARTITION);
    return b < 1 ? 1 : b > 16 ? 16 : b;
}

static int partition_side(sl_task_t *t, const struct jshape *sh, struct pside *p, int bits,
                          void **temp, size_t *temp_cap)
{
    cudaStream_t s = sl_task_stream(t);
    size_t kw = sh->k8 ? 8 : 4, vw = sh->v8 ? 8 : 4, need = 0;
    CK(t, partition(sh, NULL, &need, p->k, NULL, p->v, NULL, p->n, bits, s), "partition size");
    if (need > *temp_cap) {
        sl_task_device_free(t, *temp);
        if (!(*temp = sl_task_device_alloc(t, need)))
            return SL_ENOMEM;
        *temp_cap = need;
    }
    p->pk = sl_task_device_alloc(t, (size_t)p->n * kw);
    p->pv = sl_task_device_alloc(t, (size_t)p->n * vw);
    p->off = sl_task_device_alloc(t, (((size_t)1 << bits) + 1) * sizeof(int64_t));
    if (!p->pk || !p->pv || !p->off)
        return SL_ENOMEM;
    size_t tb = *temp_cap;
    CK(t, partition(sh, *temp, &tb, p->k, p->pk, p->v, p->pv, p->n, bits, s), "partitioning");
    CK(t, offsets(sh, p->pk, p->n, bits, p->off, s), "partition offsets");
    return SL_OK;
}

/* Where output column oc comes from in the narrow layout: 0 key, 1 build val, 2 probe val;
 * -1 if the layout does not apply. */
static int narrow_source(const struct join_data *d, int build, int oc)
{
    const struct join_ocol *o = &d->out[oc];
    if (o->col == d->key[o->side][0])
        return 0;
    return o->side == build ? 1 : 2;
}

/* The narrow layout applies when each side outputs exactly one non-key column, of the
 * same width on both sides. Sets *v8. */
static int narrow_layout(const struct join_data *d, int *payload_col, int *v8)
{
    int n[2] = {0, 0};
    size_t w[2] = {0, 0};
    for (int i = 0; i < d->n_out; i++) {
        const struct join_ocol *o = &d->out[i];
        if (o->col == d->key[o->side][0])
            continue;
        if (n[o->side]++ == 0) {
            payload_col[o->side] = o->col;
            w[o->side] = sl_type_width(o->type);
        } else if (payload_col[o->side] != o->col) {
            return 0;
        }
    }
    *v8 = w[0] == 8;
    return n[0] == 1 && n[1] == 1 && w[0] == w[1];
}

struct jrun {
    struct jshape sh;
    int build, narrow, bits;
    int payload_col[2];
    struct gside g[2];
    struct pside p[2];                  /* by side */
    void *temp;
    size_t temp_cap;
    void *out_k, *out_b, *out_p;        /* join output: key, build val, probe val */
    int64_t cap, count;
    sl_batch_t *out;                    /* materialize: the output batch (cap rows) */
};

/* Output buffers: in the narrow layout the kernel writes straight into the output batch's
 * columns (the first column taking each role); anything else is scratch. */
static int alloc_outputs(sl_task_t *t, const struct join_data *d, struct jrun *r, int64_t cap)
{
    size_t kw = r->sh.k8 ? 8 : 4, vw = r->sh.v8 ? 8 : 4;
    r->cap = cap;
    r->out_k = r->out_b = r->out_p = NULL;
    if (!d->aggregate) {
        r->out = sl_task_new_batch(t, sl_op_output_schema(sl_task_op(t)), cap);
        if (!r->out)
            return SL_ENOMEM;
        for (int oc = 0; oc < d->n_out; oc++) {
            int src = r->narrow ? narrow_source(d, r->build, oc) : 0;
            void **role = src == 0 ? &r->out_k : src == 1 ? &r->out_b : &r->out_p;
            if (!*role && (r->narrow || src == 0))
                *role = sl__col_values(r->out, oc);
        }
    }
    if (!r->out_k && !(r->out_k = sl_task_device_alloc(t, (size_t)cap * kw)))
        return SL_ENOMEM;
    if (!r->out_b && !(r->out_b = sl_task_device_alloc(t, (size_t)cap * vw)))
        return SL_ENOMEM;
    if (!r->out_p && !(r->out_p = sl_task_device_alloc(t, (size_t)cap * vw)))
        return SL_ENOMEM;
    return SL_OK;
}

static void free_outputs(sl_task_t *t, struct jrun *r)
{
    void *own[3] = {r->out_k, r->out_b, r->out_p};
    for (int i = 0; i < 3; i++) {
        int in_batch = 0;
        for (int c = 0; r->out && c < sl_batch_num_columns(r->out); c++)
            in_batch |= own[i] == sl__col_values(r->out, c);
        if (!in_batch)
            sl_task_device_free(t, own[i]);
    }
    sl_batch_unref(r->out);
    r->out = NULL;
}

/* count -> allocate -> write: one pass when the result fits the first guess. */
static int run_join(sl_task_t *t, const struct join_data *d, struct jrun *r)
{
    cudaStream_t s = sl_task_stream(t);
    const struct pside *b = &r->p[r->build], *p = &r->p[1 - r->build];
    unsigned long long *d_count = sl_task_device_alloc(t, sizeof *d_count), h_count = 0;
    if (!d_count)
        return SL_ENOMEM;
    size_t need = 0;
    CK(t, materialize(&r->sh, NULL, &need, NULL, NULL, NULL, NULL, NULL, NULL, r->bits, NULL,
                      NULL, NULL, 0, NULL, s), "join size");
    void *jtemp = sl_task_device_alloc(t, need);
    if (!jtemp)
        return SL_ENOMEM;
    int64_t cap = p->n > 0 ? p->n : 1;
    for (int pass = 0; pass < 2; pass++) {
        int rc = alloc_outputs(t, d, r, cap);
        if (rc < 0)
            return rc;
        size_t tb = need;
        CK(t, materialize(&r->sh, jtemp, &tb, b->pk, b->pv, b->off, p->pk, p->pv, p->off, r->bits,
                          r->out_k, r->out_b, r->out_p, cap, d_count, s), "join");
        CK(t, cudaMemcpyAsync(&h_count, d_count, sizeof h_count, cudaMemcpyDeviceToHost, s),
           "reading the match count");
        CK(t, cudaStreamSynchronize(s), "join");
        r->count = (int64_t)h_count;
        if (r->count <= cap)
            break;
        free_outputs(t, r);
        cap = r->count;
    }
    sl_task_device_free(t, jtemp);
    sl_task_device_free(t, d_count);
    return SL_OK;
}

/* The non-narrow layout: each output column gathered by row id (or the key copied). */
static int gather_columns(sl_task_t *t, const struct join_data *d, struct jrun *r,
                          sl_batch_t *dst)
{
    cudaStream_t s = sl_task_stream(t);
    for (int oc = 0; oc < d->n_out; oc++) {
        const struct join_ocol *o = &d->out[oc];
        void *to = sl__col_values(dst, oc);
        size_t w = sl_type_width(o->type);
        if (o->col == d->key[o->side][0]) {
            if (to != r->out_k)
                CK(t, cudaMemcpyAsync(to, r->out_k, (size_t)r->count * w,
                                      cudaMemcpyDeviceToDevice, s), "copying keys");
            continue;
        }
        const void *src;
        void *owned;
        int rc = side_column(t, sl_task_gstate(t), o->side, &r->g[o->side], o->col, &src, &owned);
        if (rc < 0)
            return rc;
        const uint32_t *ids = o->side == r->build ? r->out_b : r->out_p;
        CK(t, w == 8 ? sl_k_gather_b64(src, ids, to, r->count, s)
                     : sl_k_gather_b32(src, ids, to, r->count, s), "gathering payloads");
        if (owned) {
            CK(t, cudaStreamSynchronize(s), "gathering payloads");
            sl_task_device_free(t, owned);
        }
    }
    return SL_OK;
}

/* output=aggregate: count and the sums of the output columns, as the CPU computes them. */
static int aggregate(sl_task_t *t, struct join_state *st, struct jrun *r)
{
    const struct join_data *d = st->d;
    cudaStream_t s = sl_task_stream(t);
    memset(&st->total, 0, sizeof st->total);
    st->total.count = r->count;
    if (r->count == 0)
        return SL_OK;
    unsigned long long *acc = sl_task_device_alloc(t, 2 * sizeof *acc);
    void *col = NULL;
    if (!acc)
        return SL_ENOMEM;
    for (int oc = 0; oc < d->n_out; oc++) {
        const struct join_ocol *o = &d->out[oc];
        const void *vals;
        int src = r->narrow ? narrow_source(d, r->build, oc) : -1;
        if (src == 0 || o->col == d->key[o->side][0]) {
            vals = r->out_k;
        } else if (src > 0) {
            vals = src == 1 ? r->out_b : r->out_p;
        } else {
            const void *in;
            void *owned;
            int rc = side_column(t, st, o->side, &r->g[o->side], o->col, &in, &owned);
            if (rc < 0)
                return rc;
            if (!col && !(col = sl_task_device_alloc(t, (size_t)r->count * 8)))
                return SL_ENOMEM;
            const uint32_t *ids = o->side == r->build ? r->out_b : r->out_p;
            CK(t, sl_type_width(o->type) == 8 ? sl_k_gather_b64(in, ids, col, r->count, s)
                                              : sl_k_gather_b32(in, ids, col, r->count, s),
               "gathering payloads");
            CK(t, cudaStreamSynchronize(s), "gathering payloads");
            sl_task_device_free(t, owned);
            vals = col;
        }
        CK(t, cudaMemsetAsync(acc, 0, 2 * sizeof *acc, s), "zeroing a sum");
        cudaError_t e;
        switch (o->type) {
        case SL_TYPE_INT32: e = sl_k_sum_i32(vals, r->count, (long long *)acc, s); break;
        case SL_TYPE_INT64: e = sl_k_sum_i64_exact(vals, r->count, acc, s); break;
        case SL_TYPE_FLOAT32: e = sl_k_sum_f32(vals, r->count, (double *)acc, s); break;
        default: e = sl_k_sum_f64(vals, r->count, (double *)acc, s); break;
        }
        CK(t, e, "summing");
        unsigned long long h[2];
        CK(t, cudaMemcpyAsync(h, acc, sizeof h, cudaMemcpyDeviceToHost, s), "reading a sum");
        CK(t, cudaStreamSynchronize(s), "reading a sum");
        if (o->type == SL_TYPE_INT32)
            st->total.isum[oc] = (int64_t)h[0];
        else if (o->type == SL_TYPE_INT64)
            st->total.isum[oc] = (__int128)(((unsigned __int128)h[1] << 64) | h[0]);
        else
            memcpy(&st->total.fsum[oc], &h[0], sizeof(double));
    }
    sl_task_device_free(t, col);
    sl_task_device_free(t, acc);
    return SL_OK;
}

static int prepare_sides(sl_task_t *t, struct join_state *st, struct jrun *r)
{
    const struct join_data *d = st->d;
    for (int s = 0; s < 2; s++) {
        struct join_side *sd = &st->side[s];
        r->g[s].n = 0;
        r->g[s].order = sl_task_alloc(t, (size_t)(sd->n_batches + 1) * sizeof(int64_t));
        if (!r->g[s].order)
            return SL_ENOMEM;
        struct batch_pos *pos = sl_task_alloc(t, (size_t)(sd->n_batches + 1) * sizeof *pos);
        if (!pos)
            return SL_ENOMEM;
        for (int64_t i = 0; i < sd->n_batches; i++) {
            const struct sl__col *c = &sd->batches[i]->cols[d->key[s][0]];
            pos[i] = (struct batch_pos){(uintptr_t)c->data, c->offset, i};
            r->g[s].n += sd->batches[i]->n_rows;
        }
        if (sd->n_batches > 1)
            qsort(pos, (size_t)sd->n_batches, sizeof *pos, by_offset);
        for (int64_t i = 0; i < sd->n_batches; i++)
            r->g[s].order[i] = pos[i].index;
        sl_task_free(t, pos);
    }
    r->build = st->side[0].n_rows < st->side[1].n_rows ? 0 : 1;
    r->sh.k8 = d->ktype[0] == SL_TYPE_INT64;
    r->narrow = narrow_layout(d, r->payload_col, &r->sh.v8);
    if (!r->narrow)
        r->sh.v8 = 0; /* row ids */
    r->bits = radix_bits(r->g[r->build].n);
    cudaStream_t s = sl_task_stream(t);
    for (int sd = 0; sd < 2; sd++) {
        struct pside *p = &r->p[sd];
        void *owned;
        p->n = r->g[sd].n;
        int rc = side_column(t, st, sd, &r->g[sd], d->key[sd][0], &p->k, &owned);
        if (rc >= 0 && r->narrow) {
            rc = side_column(t, st, sd, &r->g[sd], r->payload_col[sd], &p->v, &owned);
        } else if (rc >= 0) {
            uint32_t *ids = sl_task_device_alloc(t, (size_t)p->n * 4);
            if (!ids)
                return SL_ENOMEM;
            CK(t, sl_k_iota_u32(ids, p->n, 0, s), "row ids");
            p->v = ids;
        }
        if (rc < 0)
            return rc;
    }
    return SL_OK;
}

int join_finalize_cuda(sl_task_t *t)
{
    if (!fits_in_gpu(t) && join_ooc_can_run(t))
        return join_ooc_finalize(t);
    struct join_state *st = sl_task_gstate(t);
    const struct join_data *d = sl_op_data(sl_task_op(t));
    st->d = d;
    st->gpu = 1;
    for (int s = 0; s < 2; s++) {
        st->side[s].n_rows = 0;
        for (int64_t i = 0; i < st->side[s].n_batches; i++)
            st->side[s].n_rows += st->side[s].batches[i]->n_rows;
    }
    struct jrun r;
    memset(&r, 0, sizeof r);
    int rc = prepare_sides(t, st, &r);
    if (rc < 0)
        return rc;
    if (r.p[0].n == 0 || r.p[1].n == 0) {
        r.count = 0;
    } else {
        if ((rc = partition_side(t, &r.sh, &r.p[r.build], r.bits, &r.temp, &r.temp_cap)) < 0 ||
            (rc = partition_side(t, &r.sh, &r.p[1 - r.build], r.bits, &r.temp, &r.temp_cap)) < 0)
            return rc;
        sl_task_device_free(t, r.temp);
        if ((rc = run_join(t, d, &r)) < 0)
            return rc;
    }
    if (d->aggregate) {
        rc = aggregate(t, st, &r);
        free_outputs(t, &r);
        return rc;
    }
    if (!r.out && !(r.out = sl_task_new_batch(t, sl_op_output_schema(sl_task_op(t)), 0)))
        return SL_ENOMEM;
    if (!r.narrow && r.count > 0 && (rc = gather_columns(t, d, &r, r.out)) < 0)
        return rc;
    st->gpu_out = sl_task_batch_slice(t, r.out, 0, r.count);
    free_outputs(t, &r);
    return st->gpu_out ? SL_OK : SL_ENOMEM;
}

/* ---------------- source ---------------- */

int64_t join_gpu_source_tasks(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    if (st->ooc)
        return join_ooc_source_tasks(t);
    int64_t rows = st->gpu_out ? sl_batch_num_rows(st->gpu_out) : 0;
    int64_t m = sl_task_morsel_rows(t);
    return rows == 0 ? 0 : (rows + m - 1) / m;
}

/* One morsel of the device result: on the GPU as it is, or downloaded for a host task. */
int join_gpu_source(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    if (st->d->aggregate)
        return join_emit_aggregate(t, st);
    if (st->ooc)
        return join_ooc_source(t);
    int64_t m = sl_task_morsel_rows(t), lo = sl_task_index(t) * m;
    int64_t n = sl_batch_num_rows(st->gpu_out) - lo;
    sl_batch_t *b = sl_task_batch_slice(t, st->gpu_out, lo, n < m ? n : m);
    if (!b)
        return SL_ENOMEM;
    if (sl_task_device_kind(t) == SL_DEVICE_CUDA)
        return sl_task_emit(t, b);
    sl_batch_t *h;
    int rc = sl_task_batch_to_host(t, b, &h);
    sl_batch_unref(b);
    return rc < 0 ? rc : sl_task_emit(t, h);
}

