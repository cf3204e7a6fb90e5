/* join on a GPU: each input side as contiguous device keys and packed payload rows, then
 * partitioned (PHJ) or sorted (SMJ) with the packed-row kernels of sluice_k/join_gftr.h.
 *
 * Keys: used in place when the side's batches are consecutive slices of one device
 * buffer (a GPU-resident column scanned in morsels), else copied into one array; a
 * composite key of two int32 columns is packed into one 64-bit key (equal pairs <=>
 * equal packed keys). Rows: the payload columns the plan put into the row (<= 16
 * bytes), packed batch by batch (no extra copy of a multi-batch side); a side whose row
 * is exactly one column uses that column; a side without payloads but rows of another
 * width on the other side gets rows it never outputs (its partitioned keys when the
 * widths agree). Inputs are freed as soon as they are partitioned. */
#include <stdlib.h>
#include <string.h>

#include "join_cuda_int.h"
#include "sluice_k/columns.h"
#include "sluice_k/join_gftr.h"
#include "sluice_k/join_npj.h"
#include "sluice_k/partition.h"

#define SAMPLE_KEYS 4096

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

/* The columns whose nulls matter on side s: its keys and its output columns. */
static int side_used_cols(const struct join_data *d, int s, int *cols)
{
    int n = 0;
    for (int k = 0; k < d->n_keys + d->n_out; k++) {
        int c = k < d->n_keys ? d->key[s][k] : d->out[k - d->n_keys].col;
        if (k >= d->n_keys && d->out[k - d->n_keys].side != s)
            continue;
        int seen = 0; /* each column once: its count is kept on the batch */
        for (int j = 0; j < n; j++)
            seen |= cols[j] == c;
        if (!seen)
            cols[n++] = c;
    }
    return n;
}

/* Column c of b: in device memory, with a bitmap and an unknown null count. */
static int unknown_nulls(const sl_batch_t *b, int c)
{
    return b->cols[c].validity && b->cols[c].null_count < 0 && sl_batch_device(b) >= 0;
}

int gj_count_unknown_nulls(sl_task_t *t, const struct join_data *d, struct join_side *sides)
{
    cudaStream_t stream = sl_task_stream(t);
    int cols[2][JOIN_MAX_KEYS + 2 * JOIN_MAX_COLS], nc[2];
    int64_t n = 0; /* columns of unknown null count in device memory, each its counter */
    for (int s = 0; s < 2; s++) {
        nc[s] = side_used_cols(d, s, cols[s]);
        for (int64_t i = 0; i < sides[s].n_batches; i++)
            for (int c = 0; c < nc[s]; c++)
                n += unknown_nulls(sides[s].batches[i], cols[s][c]);
    }
    if (n == 0)
        return SL_OK;
    unsigned long long *d_count = sl_task_device_alloc(t, (size_t)n * sizeof *d_count);
    unsigned long long *h_count = sl_task_alloc(t, (size_t)n * sizeof *h_count);
    cudaError_t e = d_count && h_count ? SL_TASK_CUDA_CALL(cudaMemsetAsync(
                                             d_count, 0, (size_t)n * sizeof *d_count, stream))
                                       : cudaErrorMemoryAllocation;
    int64_t k = 0;
    for (int s = 0; s < 2 && e == cudaSuccess; s++)
        for (int64_t i = 0; i < sides[s].n_batches && e == cudaSuccess; i++) {
            const sl_batch_t *b = sides[s].batches[i];
            for (int c = 0; c < nc[s] && e == cudaSuccess; c++) {
                const struct sl__col *col = &b->cols[cols[s][c]];
                if (unknown_nulls(b, cols[s][c]))
                    e = SL_TASK_CUDA_CALL(sl_k_count_nulls(col->validity->ptr, col->offset,
                                                           b->n_rows, d_count + k++, stream));
            }
        }
    if (e == cudaSuccess)
        e = SL_TASK_CUDA_CALL(cudaMemcpyAsync(h_count, d_count, (size_t)n * sizeof *d_count,
                                              cudaMemcpyDeviceToHost, stream));
    if (e == cudaSuccess)
        e = SL_TASK_CUDA_CALL(cudaStreamSynchronize(stream));
    /* The counts are kept on the batches (each consumer has batch objects of its own). */
    k = 0;
    for (int s = 0; s < 2 && e == cudaSuccess; s++)
        for (int64_t i = 0; i < sides[s].n_batches; i++) {
            sl_batch_t *b = sides[s].batches[i];
            for (int c = 0; c < nc[s]; c++)
                if (unknown_nulls(b, cols[s][c]))
                    b->cols[cols[s][c]].null_count = (int64_t)h_count[k++];
        }
    sl_task_device_free(t, d_count);
    sl_task_free(t, h_count);
    if (e == cudaErrorMemoryAllocation && (!d_count || !h_count))
        return SL_ENOMEM;
    return e == cudaSuccess ? SL_OK : SL_TASK_CUDA_FAIL(t, e, "counting nulls");
}

int gj_side_column(sl_task_t *t, const struct join_state *st, int s, const struct gj_side *g,
                   int col, const void **out, void **owned)
{
    const struct join_side *sd = &st->side[s];
    *owned = NULL;
    *out = NULL;
    if (sd->n_batches == 0)
        return SL_OK;
    const struct sl__col *c0 = &sd->batches[g->order[0]]->cols[col];
    size_t w = sl_type_width(c0->type);
    int in_place = sl_batch_device(sd->batches[g->order[0]]) >= 0;
    int64_t next = c0->offset;
    for (int64_t i = 0; in_place && i < sd->n_batches; i++) {
        const struct sl__col *c = &sd->batches[g->order[i]]->cols[col];
        in_place = c->data == c0->data && c->offset == next;
        next += sd->batches[g->order[i]]->n_rows;
    }
    if (in_place) {
        *out = (const char *)c0->data->ptr + (size_t)c0->offset * w;
        return SL_OK;
    }
    /* all of the side's rows: g->n may count fewer once the probe side is filtered */
    char *dst = sl_task_device_alloc(t, (size_t)sd->n_rows * w);
    if (!dst)
        return SL_ENOMEM;
    cudaStream_t stream = sl_task_stream(t);
    int64_t at = 0;
    for (int64_t i = 0; i < sd->n_batches; i++) {
        const sl_batch_t *b = sd->batches[g->order[i]];
        const struct sl__col *c = &b->cols[col];
        SL_TASK_CUDA_TRY(t,
                         cudaMemcpyAsync(dst + (size_t)at * w,
                                         (const char *)c->data->ptr + (size_t)c->offset * w,
                                         (size_t)b->n_rows * w, cudaMemcpyDefault, stream),
                         "gathering an input column");
        at += b->n_rows;
    }
    *out = dst;
    *owned = dst;
    return SL_OK;
}

int gj_range_of(sl_task_t *t, int k8, int64_t parts, const void *const *keys, const int64_t *n,
                uint64_t *lo, uint64_t *hi)
{
    uint64_t *mm = sl_task_device_alloc(t, 2 * sizeof *mm), h[2] = {0, 0};
    if (!mm)
        return SL_ENOMEM;
    cudaStream_t s = sl_task_stream(t);
    size_t w = k8 ? 8 : 4;
    cudaError_t e =
        SL_TASK_CUDA_CALL(cudaMemsetAsync(mm, 0xFF, w, s)); /* smallest: all ones, largest: 0 */
    if (e == cudaSuccess)
        e = SL_TASK_CUDA_CALL(cudaMemsetAsync((char *)mm + w, 0, w, s));
    for (int64_t i = 0; e == cudaSuccess && i < parts; i++)
        if (n[i] > 0)
            e = k8 ? sl_k_npj_key_range_k64(keys[i], n[i], mm, s)
                   : sl_k_npj_key_range_k32(keys[i], n[i], (uint32_t *)mm, s);
    if (e == cudaSuccess)
        e = SL_TASK_CUDA_CALL(cudaMemcpyAsync(h, mm, 2 * w, cudaMemcpyDeviceToHost, s));
    if (e == cudaSuccess)
        e = SL_TASK_CUDA_CALL(cudaStreamSynchronize(s));
    sl_task_device_free(t, mm);
    if (e != cudaSuccess)
        return SL_TASK_CUDA_FAIL(t, e, "key range");
    *lo = k8 ? h[0] : (uint32_t)h[0];
    *hi = k8 ? h[1] : (uint32_t)(h[0] >> 32);
    return SL_OK;
}

int gj_npj_range(sl_task_t *t, struct gj *g, int64_t parts, const void *const *keys,
                 const int64_t *n)
{
    uint64_t lo = 0, hi = 0;
    int64_t nb = 0;
    for (int64_t i = 0; i < parts; i++)
        nb += n[i];
    g->kmin = 0;
    g->range = 0;
    int rc = nb > 0 ? gj_range_of(t, g->k8, parts, keys, n, &lo, &hi) : SL_OK;
    /* Build keys that fill at least half of their range (and fit 2^32 slots) get the
     * direct table; more keys than the range has repeat some (foreign keys: the hash
     * table at once, without a direct table built to find that out). */
    if (rc == SL_OK && nb > 0 && hi >= lo && hi - lo < ((uint64_t)1 << 32) - 1 &&
        (int64_t)(hi - lo) + 1 <= 2 * nb + 1024 && (int64_t)(hi - lo) + 1 >= nb) {
        g->kmin = lo;
        g->range = (int64_t)(hi - lo) + 1;
    }
    return rc;
}

int gj_key_range(sl_task_t *t, const struct join_state *st, struct gj *g)
{
    const struct join_side *sd = &st->side[g->build];
    g->kmin = 0;
    g->range = 0;
    if (st->d->n_keys != 1 || sd->n_rows == 0)
        return SL_OK;
    for (int64_t i = 0; i < sd->n_batches; i++)
        if (sd->batches[i]->n_rows > 0 && sl_batch_device(sd->batches[i]) < 0)
            return SL_OK;
    const void **keys = sl_task_alloc(t, (size_t)sd->n_batches * sizeof *keys);
    int64_t *n = sl_task_alloc(t, (size_t)sd->n_batches * sizeof *n);
    int rc = keys && n ? SL_OK : SL_ENOMEM;
    for (int64_t i = 0; rc == SL_OK && i < sd->n_batches; i++) {
        const struct sl__col *c = &sd->batches[i]->cols[st->d->key[g->build][0]];
        keys[i] = (const char *)c->data->ptr + (size_t)c->offset * (g->k8 ? 8 : 4);
        n[i] = sd->batches[i]->n_rows;
    }
    if (rc == SL_OK)
        rc = gj_npj_range(t, g, sd->n_batches, keys, n);
    sl_task_free(t, keys);
    sl_task_free(t, n);
    return rc;
}

int gj_sample_keys(sl_task_t *t, int k8, int parts, const struct gj_side *const *sd, int64_t per,
                   uint64_t *h, int64_t *m)
{
    size_t kw = k8 ? 8 : 4;
    void *d = sl_task_device_alloc(t, (size_t)(parts * per) * kw);
    if (!d)
        return SL_ENOMEM;
    cudaStream_t s = sl_task_stream(t);
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < parts && e == cudaSuccess; i++) {
        m[i] = sd[i]->n < per ? sd[i]->n : per;
        char *dst = (char *)d + (size_t)(i * per) * kw;
        if (m[i] > 0)
            e = k8 ? sl_k_strided_b64(sd[i]->keys, sd[i]->n / m[i], (uint64_t *)dst, m[i], s)
                   : sl_k_strided_b32(sd[i]->keys, sd[i]->n / m[i], (uint32_t *)dst, m[i], s);
    }
    unsigned char *raw = (unsigned char *)h; /* 64-bit slots, widened in place below */
    if (e == cudaSuccess)
        e = SL_TASK_CUDA_CALL(
            cudaMemcpyAsync(raw, d, (size_t)(parts * per) * kw, cudaMemcpyDeviceToHost, s));
    if (e == cudaSuccess)
        e = SL_TASK_CUDA_CALL(cudaStreamSynchronize(s));
    sl_task_device_free(t, d);
    if (e != cudaSuccess)
        return SL_TASK_CUDA_FAIL(t, e, "sampling keys");
    for (int64_t i = parts * per - 1; kw == 4 && i >= 0; i--) { /* back to front */
        uint32_t x;
        memcpy(&x, raw + (size_t)i * 4, 4);
        h[i] = x;
    }
    return SL_OK;
}

static int order_batches(sl_task_t *t, const struct join_state *st, int s, struct gj_side *g,
                         int key_col)
{
    const struct join_side *sd = &st->side[s];
    g->n = 0;
    g->on_device = 1;
    g->order = sl_task_alloc(t, (size_t)(sd->n_batches + 1) * sizeof(int64_t));
    struct batch_pos *pos = sl_task_alloc(t, (size_t)(sd->n_batches + 1) * sizeof *pos);
    if (!g->order || !pos) {
        sl_task_free(t, pos);
        return SL_ENOMEM;
    }
    for (int64_t i = 0; i < sd->n_batches; i++) {
        const struct sl__col *c = &sd->batches[i]->cols[key_col];
        pos[i] = (struct batch_pos){(uintptr_t)c->data, c->offset, i};
        g->n += sd->batches[i]->n_rows;
        g->on_device &= sl_batch_device(sd->batches[i]) >= 0;
    }
    if (sd->n_batches > 1)
        qsort(pos, (size_t)sd->n_batches, sizeof *pos, by_offset);
    for (int64_t i = 0; i < sd->n_batches; i++)
        g->order[i] = pos[i].index;
    sl_task_free(t, pos);
    return SL_OK;
}

/* Packs columns cols[0..nc) of side s (row ids for col == -1, from `ids`) into rows of
 * rb bytes: batch by batch when every batch is on the device, else from contiguous
 * copies. */
static int pack_side(sl_task_t *t, const struct join_state *st, int s, struct gj_side *g,
                     const int *cols, int nc, const uint32_t *ids, int rb, void *dst)
{
    cudaStream_t stream = sl_task_stream(t);
    const struct join_side *sd = &st->side[s];
    sl_k_cols_t kc;
    memset(&kc, 0, sizeof kc);
    kc.n = nc;
    if (g->on_device) {
        int64_t at = 0;
        for (int64_t i = 0; i < sd->n_batches; i++) {
            sl_batch_t *b = sd->batches[g->order[i]];
            for (int j = 0; j < nc; j++) {
                kc.width[j] = cols[j] < 0 ? 4 : (int)sl_type_width(b->cols[cols[j]].type);
                kc.ptr[j] = cols[j] < 0 ? (void *)(ids + at) : sl__col_values(b, cols[j]);
            }
            SL_TASK_CUDA_TRY(
                t, sl_k_pack_rows(&kc, b->n_rows, rb, (char *)dst + (size_t)at * rb, stream),
                "packing payload rows");
            at += b->n_rows;
        }
        return SL_OK;
    }
    void *own[4] = {NULL, NULL, NULL, NULL};
    int rc = SL_OK;
    for (int j = 0; j < nc && rc >= 0; j++) {
        if (cols[j] < 0) {
            kc.width[j] = 4;
            kc.ptr[j] = (void *)ids;
            continue;
        }
        const void *p;
        rc = gj_side_column(t, st, s, g, cols[j], &p, &own[j]);
        kc.width[j] = (int)sl_type_width(sd->batches[0]->cols[cols[j]].type);
        kc.ptr[j] = (void *)p;
    }
    if (rc >= 0) {
        cudaError_t e = SL_TASK_CUDA_CALL(sl_k_pack_rows(&kc, g->n, rb, dst, stream));
        if (e != cudaSuccess)
            rc = SL_TASK_CUDA_FAIL(t, e, "packing payload rows");
    }
    for (int j = 0; j < nc; j++)
        sl_task_device_free(t, own[j]);
    return rc;
}

static int side_keys(sl_task_t *t, const struct join_state *st, int s, struct gj *g)
{
    struct gj_side *sd = &g->s[s];
    const struct join_data *d = g->d;
    if (g->hashed)
        return SL_OK; /* gj_hash_keys, once both sides are ordered */
    if (!g->composite)
        return gj_side_column(t, st, s, sd, d->key[s][0], &sd->keys, &sd->keys_own);
    if (!(sd->keys_own = sl_task_device_alloc(t, (size_t)sd->n * 8)))
        return SL_ENOMEM;
    sd->keys = sd->keys_own;
    return pack_side(t, st, s, sd, d->key[s], 2, NULL, 8, sd->keys_own);
}

int gj_row_cols(sl_task_t *t, const struct join_state *st, int s, const struct gj *g,
                sl_k_cols_t *kc, void *own[5], int *rb)
{
    const struct gj_side *sd = &g->s[s];
    memset(kc, 0, sizeof *kc);
    for (int j = 0; j < 5; j++)
        own[j] = NULL;
    *rb = sd->n > 0 && (sd->n_row > 0 || sd->id_word) ? g->row_bytes : 0;
    int rc = SL_OK;
    for (int j = 0; *rb && j < sd->n_row && rc >= 0; j++) {
        const void *p;
        rc = gj_side_column(t, st, s, sd, sd->pay_col[j], &p, &own[j]);
        kc->width[kc->n] = sd->pay_w[j];
        kc->ptr[kc->n++] = (void *)p;
    }
    if (*rb && sd->id_word) {
        kc->width[kc->n] = 4;
        kc->ptr[kc->n++] = NULL; /* the row's number */
    }
    if (rc < 0)
        gj_row_cols_free(t, own);
    return rc;
}

void gj_row_cols_free(sl_task_t *t, void *own[5])
{
    for (int j = 0; j < 5; j++) {
        sl_task_device_free(t, own[j]);
        own[j] = NULL;
    }
}

/* The rows of a side that gj_filter_probe filtered (sd->sel): the kept rows packed
 * straight from the columns (gj_row_cols), row ids from the selection (no ids array). */
static int side_rows_sel(sl_task_t *t, const struct join_state *st, int s, struct gj *g)
{
    struct gj_side *sd = &g->s[s];
    sl_k_cols_t kc;
    void *own[5];
    int rb = 0, rc = gj_row_cols(t, st, s, g, &kc, own, &rb);
    if (rc >= 0 && !(sd->rows = sd->rows_own = sl_task_device_alloc(t, (size_t)sd->n * (size_t)rb)))
        rc = SL_ENOMEM;
    if (rc >= 0) {
        cudaError_t e =
            SL_TASK_CUDA_CALL(sl_k_pack_rows_sel(&kc, sd->sel, sd->n, rb, sd->rows_own, sl_task_stream(t)));
        if (e != cudaSuccess)
            rc = SL_TASK_CUDA_FAIL(t, e, "packing the kept rows");
    }
    gj_row_cols_free(t, own);
    return rc;
}

static int side_rows(sl_task_t *t, const struct join_state *st, int s, struct gj *g)
{
    struct gj_side *sd = &g->s[s];
    int rb = g->row_bytes;
    /* No rows, or rows it never outputs (gj_transform); a side whose every payload is
     * gathered after the join (strings, gj_late_fixed) still carries its row ids. */
    if (rb == 0 || (sd->n_row == 0 && !sd->id_word))
        return SL_OK;
    if (sd->sel)
        return side_rows_sel(t, st, s, g);
    if (sd->n_row == 1 && !sd->id_word && sd->pay_w[0] == rb)
        return gj_side_column(t, st, s, sd, sd->pay_col[0], &sd->rows, &sd->rows_own);
    int cols[5], nc = 0;
    for (int j = 0; j < sd->n_row; j++)
        cols[nc++] = sd->pay_col[j];
    if (sd->id_word) {
        if (!(sd->ids_own = sl_task_device_alloc(t, (size_t)sd->n * 4)))
            return SL_ENOMEM;
        SL_TASK_CUDA_TRY(t, sl_k_iota_u32(sd->ids_own, sd->n, 0, sl_task_stream(t)), "row ids");
        cols[nc++] = -1;
    }
    if (!(sd->rows_own = sl_task_device_alloc(t, (size_t)sd->n * (size_t)rb)))
        return SL_ENOMEM;
    sd->rows = sd->rows_own;
    int rc = pack_side(t, st, s, sd, cols, nc, sd->ids_own, rb, sd->rows_own);
    sl_task_device_free(t, sd->ids_own);
    sd->ids_own = NULL;
    return rc;
}

int gj_prepare(sl_task_t *t, struct join_state *st, struct gj *g)
{
    for (int s = 0; s < 2; s++) {
        int rc = order_batches(t, st, s, &g->s[s], g->d->key[s][0]);
        if (rc < 0)
            return rc;
    }
    for (int s = 0; s < 2; s++) {
        if (g->s[s].n == 0)
            continue;
        int rc = side_keys(t, st, s, g);
        if (rc < 0)
            return rc;
    }
    return SL_OK;
}

int gj_prepare_rows(sl_task_t *t, struct join_state *st, struct gj *g)
{
    for (int s = 0; s < 2 && g->algo != GJ_NPJ; s++) {
        int rc = g->s[s].n > 0 && !g->s[s].rows ? side_rows(t, st, s, g) : SL_OK;
        if (rc < 0)
            return rc;
    }
    g->rows_ready = 1;
    for (int s = 0; s < 2; s++) { /* packed: the selections are consumed */
        sl_task_device_free(t, g->s[s].sel);
        g->s[s].sel = NULL;
    }
    return SL_OK;
}

/* Keys that share their low bits (all multiples of 1024, say) would put every row into
 * one partition if partitioned on bits [0, bits): start at the lowest bit that varies
 * among a strided sample of the build keys. A wrong guess costs balance, not results. */
void gj_bits_from_sample(struct gj *g, const uint64_t *h, int64_t m)
{
    int kbits = g->k8 ? 64 : 32;
    uint64_t varies = 0;
    for (int64_t i = 1; i < m; i++)
        varies |= h[i] ^ h[0];
    int lo = varies ? __builtin_ctzll(varies) : 0;
    g->begin = lo > kbits - g->bits ? kbits - g->bits : lo;
    g->begin_set = 1;
}

int gj_pick_bits(sl_task_t *t, struct gj *g)
{
    const struct gj_side *b = &g->s[g->build];
    if (g->begin_set)
        return SL_OK;
    g->begin = 0;
    if (b->n < 2)
        return SL_OK;
    uint64_t *h = sl_task_alloc(t, SAMPLE_KEYS * sizeof *h);
    int64_t m = 0;
    int rc = h ? gj_sample_keys(t, g->k8, 1, &b, SAMPLE_KEYS, h, &m) : SL_ENOMEM;
    if (rc == SL_OK)
        gj_bits_from_sample(g, h, m);
    sl_task_free(t, h);
    return rc;
}

static cudaError_t radix(const struct gj *g, void *temp, size_t *tb, const void *k_in,
                         void *k_out, const void *r_in, void *r_out, int rb, int64_t n, int lo,
                         int hi, cudaStream_t s)
{
    return g->k8 ? sl_k_radix_rows_k64(temp, tb, k_in, k_out, r_in, r_out, rb, n, lo, hi, s)
                 : sl_k_radix_rows_k32(temp, tb, k_in, k_out, r_in, r_out, rb, n, lo, hi, s);
}

int gj_transform(sl_task_t *t, struct gj *g)
{
    cudaStream_t s = sl_task_stream(t);
    size_t kw = g->k8 ? 8 : 4, cap = 0;
    int lo = g->algo == GJ_PHJ ? g->begin : 0;
    int hi = g->algo == GJ_PHJ ? g->begin + g->bits : (int)(8 * kw);
    void *temp = NULL;
    int rc = SL_OK;
    /* The build side first: its partitioned copy and the probe side's are both live
     * for the join, the temp storage only while partitioning. */
    for (int i = 0; i < 2 && rc >= 0; i++) {
        struct gj_side *sd = &g->s[i == 0 ? g->build : 1 - g->build];
        int rb = sd->rows ? g->row_bytes : 0;
        size_t need = 0;
        cudaError_t e = radix(g, NULL, &need, sd->keys, NULL, sd->rows, NULL, rb, sd->n, lo, hi, s);
        if (e != cudaSuccess) {
            rc = SL_TASK_CUDA_FAIL(t, e, "partition size");
            break;
        }
        if (need > cap) {
            sl_task_device_free(t, temp);
            if (!(temp = sl_task_device_alloc(t, need))) {
                rc = SL_ENOMEM;
                break;
            }
            cap = need;
        }
        sd->pk = sl_task_device_alloc(t, (size_t)sd->n * kw);
        if (rb)
            sd->prow = sd->prow_own = sl_task_device_alloc(t, (size_t)sd->n * (size_t)rb);
        if (!sd->pk || (rb && !sd->prow)) {
            rc = SL_ENOMEM;
            break;
        }
        size_t tb = cap;
        if ((e = radix(g, temp, &tb, sd->keys, sd->pk, sd->rows, sd->prow, rb, sd->n, lo, hi,
                       s)) != cudaSuccess) {
            rc = SL_TASK_CUDA_FAIL(t, e, g->algo == GJ_PHJ ? "partitioning" : "sorting");
            break;
        }
        /* Inputs consumed: stream-ordered frees, the memory serves the next allocation. */
        sl_task_device_free(t, sd->keys_own);
        sl_task_device_free(t, sd->rows_own);
        sd->keys_own = sd->rows_own = NULL;
        sd->keys = sd->rows = NULL;
        if (g->row_bytes && !rb) {
            /* Rows the kernels read but this side never outputs. */
            if ((size_t)g->row_bytes == kw) {
                sd->prow = sd->pk;
            } else if (!(sd->prow = sd->prow_own =
                             sl_task_device_alloc(t, (size_t)sd->n * (size_t)g->row_bytes))) {
                rc = SL_ENOMEM;
                break;
            }
        }
        if (g->algo == GJ_PHJ) {
            if (!(sd->off = sl_task_device_alloc(t, (((size_t)1 << g->bits) + 1) * 8))) {
                rc = SL_ENOMEM;
                break;
            }
            e = g->k8 ? sl_k_partition_offsets_k64(sd->pk, sd->n, g->begin, g->bits, sd->off, s)
                      : sl_k_partition_offsets_k32(sd->pk, sd->n, g->begin, g->bits, sd->off, s);
            if (e != cudaSuccess)
                rc = SL_TASK_CUDA_FAIL(t, e, "partition offsets");
        }
    }
    sl_task_device_free(t, temp);
    return rc;
}

void gj_sides_release(sl_task_t *t, struct gj *g)
{
    for (int i = 0; i < 2; i++) {
        struct gj_side *sd = &g->s[i];
        void *p[] = {sd->keys_own, sd->rows_own, sd->ids_own, sd->pk, sd->prow_own, sd->off,
                     sd->sel};
        for (size_t j = 0; j < sizeof p / sizeof p[0]; j++)
            sl_task_device_free(t, p[j]);
        sd->keys_own = sd->rows_own = sd->ids_own = sd->pk = sd->prow_own = sd->prow = NULL;
        sd->off = NULL;
        sd->sel = NULL;
    }
}

void gj_sides_free(sl_task_t *t, struct gj *g)
{
    gj_sides_release(t, g);
    for (int i = 0; i < 2; i++) {
        sl_task_free(t, g->s[i].order);
        g->s[i].order = NULL;
    }
}

/* ---------------- dictionary-encoded columns ---------------- */

/* 1 if column col of every batch of side s with rows has a dictionary equal to *ref (set
 * from the first such batch when NULL). Content is compared only where the object
 * differs from the last one found equal, so batches sharing one dictionary cost a
 * pointer compare. */
static int side_dicts_agree(const struct join_side *sd, int col, const struct sl__dict **ref)
{
    const struct sl__dict *same = NULL;
    for (int64_t i = 0; i < sd->n_batches; i++) {
        if (sd->batches[i]->n_rows == 0)
            continue; /* an empty batch's dictionary describes no row */
        const struct sl__dict *x = sd->batches[i]->cols[col].dict;
        if (!*ref)
            *ref = x;
        if (x == *ref || x == same)
            continue;
        if (!sl__dict_same(*ref, x))
            return 0;
        same = x;
    }
    return 1;
}

int gj_key_dicts_agree(const struct join_data *d, const struct join_state *st, int k)
{
    const struct sl__dict *ref = NULL;
    return d->ktype[k] != SL_TYPE_DICT ||
           (side_dicts_agree(&st->side[0], d->key[0][k], &ref) &&
            side_dicts_agree(&st->side[1], d->key[1][k], &ref));
}

int gj_out_dicts_agree(const struct join_data *d, const struct join_state *st)
{
    for (int oc = 0; oc < d->n_out; oc++) {
        const struct sl__dict *ref = NULL;
        if (d->out[oc].type == SL_TYPE_DICT &&
            !side_dicts_agree(&st->side[d->out[oc].side], d->out[oc].col, &ref))
            return 0;
    }
    return 1;
}

void gj_out_share_dicts(const struct join_data *d, const struct join_state *st, sl_batch_t *b)
{
    for (int oc = 0; oc < d->n_out; oc++) {
        const struct join_side *sd = &st->side[d->out[oc].side];
        if (d->out[oc].type != SL_TYPE_DICT)
            continue;
        /* The first batch with rows: gj_dicts_agree found the others equal to it. */
        for (int64_t i = 0; i < sd->n_batches; i++) {
            if (sd->batches[i]->n_rows > 0) {
                sl__batch_share_dict(b, oc, sd->batches[i]->cols[d->out[oc].col].dict);
                break;
            }
        }
    }
}
