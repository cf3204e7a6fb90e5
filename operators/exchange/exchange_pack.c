/* Rows into packets and back (exchange_int.h). A staging buffer holds each column at a
 * stride of the packet's capacity; sealing moves the columns down to the stride of the
 * rows it holds, so a packet carries no unused room. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "exchange_int.h"

#define HDR_BYTES 16 /* int64 rows, uint64 mask of columns with validity bytes */

struct xchg_piece {
    struct xchg_piece *next;
    sl_batch_t *batch; /* one packet's rows */
};

static size_t sum_width(const struct xchg_layout *l)
{
    return l->sum_width;
}

void sl__xchg_layout_init(struct xchg_layout *l, const sl_schema_t *schema,
                          const struct sl__rowsview *cols, size_t packet_bytes)
{
    l->n_cols = sl_schema_num_fields(schema);
    l->cols = cols;
    l->row_bytes = 0;
    for (int c = 0; c < l->n_cols; c++) {
        enum sl_type type;
        sl_schema_field(schema, c, NULL, &type);
        l->width[c] = sl_type_width(type);
        l->row_bytes += l->width[c] + 1;
    }
    int64_t cap = (int64_t)((packet_bytes - HDR_BYTES) / (l->row_bytes ? l->row_bytes : 1));
    l->cap = cap > 0 ? cap : 1;
    l->sum_width = 0;
    for (int c = 0; c < l->n_cols; c++) {
        l->stage_off[c] = HDR_BYTES + (size_t)l->cap * l->sum_width;
        l->sum_width += l->width[c];
    }
}

void sl__xchg_stage_add(const struct xchg_layout *l, struct xchg_stage *st, int64_t i)
{
    size_t r = (size_t)st->rows, vbase = HDR_BYTES + (size_t)l->cap * l->sum_width;
    for (int c = 0; c < l->n_cols; c++) {
        const struct sl__rowsview *v = &l->cols[c];
        uint8_t *dst = st->buf + l->stage_off[c];
        /* fixed-size copies (moves): a column may start unaligned in the buffer */
        if (l->width[c] == 4)
            memcpy(dst + r * 4, (const uint8_t *)v->data + (size_t)i * 4, 4);
        else
            memcpy(dst + r * 8, (const uint8_t *)v->data + (size_t)i * 8, 8);
        if (v->validity)
            st->buf[vbase + (size_t)l->cap * (size_t)c + r] = sl__rowsview_valid(v, i);
    }
    st->rows++;
}

size_t sl__xchg_stage_seal(const struct xchg_layout *l, struct xchg_stage *st)
{
    uint8_t *p = st->buf + HDR_BYTES;
    size_t n = (size_t)st->rows, cap = (size_t)l->cap, off = 0, sw = sum_width(l);
    uint64_t mask = 0;
    for (int c = 0; c < l->n_cols; c++) { /* destinations never pass their sources */
        memmove(p + n * off, p + cap * off, n * l->width[c]);
        off += l->width[c];
    }
    int j = 0;
    for (int c = 0; c < l->n_cols; c++) {
        if (!l->cols[c].validity)
            continue;
        memmove(p + n * (sw + (size_t)j++), p + cap * (sw + (size_t)c), n);
        mask |= 1ull << c;
    }
    int64_t rows = st->rows;
    memcpy(st->buf, &rows, 8);
    memcpy(st->buf + 8, &mask, 8);
    return HDR_BYTES + n * (sw + (size_t)j);
}

/* ---------------- all rows at once (sl__xchg_pack_all) ----------------
 * A destination's buffer is m packets: m - 1 full ones of cap rows (F bytes each), then
 * one of the rest. A part of a packet (a column's values or validity bytes) starts at
 * HDR + rows * roff, where roff is the sum of the widths before it. */
struct run_shape {
    uint8_t *buf;
    int64_t m, last_rows;   /* packets; rows of the last one */
    size_t full_bytes;      /* F */
};

struct cursor {
    uint8_t *at;
    int64_t left, pkt;
};

static void cursor_set(const struct run_shape *rs, int64_t cap, size_t roff, struct cursor *c,
                       int64_t pkt)
{
    int64_t rows = pkt < rs->m - 1 ? cap : rs->last_rows;
    c->pkt = pkt;
    c->left = rows;
    c->at = rs->buf + (size_t)pkt * rs->full_bytes + HDR_BYTES + (size_t)rows * roff;
}

/* Scatters one part (w bytes a row, from src, or validity bytes from v when src is
 * NULL) of every row to its destination's packets. A hot loop: one store a row. */
static void scatter(const struct run_shape *rs, struct cursor *cur, int ranks, int64_t cap,
                    const int32_t *dest, int64_t n, size_t roff, size_t w, const uint8_t *src,
                    const struct sl__rowsview *v)
{
    for (int d = 0; d < ranks; d++)
        if (rs[d].m)
            cursor_set(&rs[d], cap, roff, &cur[d], 0);
#define SCATTER_LOOP(STORE)                                                                \
    for (int64_t i = 0; i < n; i++) {                                                      \
        struct cursor *c = &cur[dest[i]];                                                  \
        STORE;                                                                             \
        c->at += w;                                                                        \
        if (--c->left == 0 && c->pkt + 1 < rs[dest[i]].m)                                  \
            cursor_set(&rs[dest[i]], cap, roff, c, c->pkt + 1);                            \
    }
    if (!src)
        SCATTER_LOOP(*c->at = (uint8_t)sl__rowsview_valid(v, i))
    else if (w == 4)
        SCATTER_LOOP(memcpy(c->at, src + (size_t)i * 4, 4))
    else
        SCATTER_LOOP(memcpy(c->at, src + (size_t)i * 8, 8))
#undef SCATTER_LOOP
}

/* The columns whose validity bytes the n local rows' packets carry. */
static uint64_t validity_mask(const struct xchg_layout *l, int64_t n)
{
    uint64_t mask = 0;
    for (int c = 0; c < l->n_cols; c++)
        if (n && l->cols[c].validity)
            mask |= 1ull << c;
    return mask;
}

/* Bytes of a run of `rows` rows in packets of cap rows, per_row bytes a row. */
static size_t run_bytes(const struct xchg_layout *l, size_t per_row, int64_t rows)
{
    int64_t m = (rows + l->cap - 1) / l->cap;
    if (m == 0)
        return 0;
    return (size_t)(m - 1) * (HDR_BYTES + (size_t)l->cap * per_row) + HDR_BYTES +
           (size_t)(rows - (m - 1) * l->cap) * per_row;
}

void sl__xchg_run_sizes(const struct xchg_layout *l, int64_t n, int ranks,
                        const int64_t *count, size_t *bytes)
{
    size_t per_row = l->sum_width + (size_t)__builtin_popcountll(validity_mask(l, n));
    for (int d = 0; d < ranks; d++)
        bytes[d] = run_bytes(l, per_row, count[d]);
}

int sl__xchg_pack_all(const struct xchg_layout *l, const int32_t *dest, int64_t n, int ranks,
                      const int64_t *count, uint8_t **buf, size_t *bytes)
{
    uint64_t mask = validity_mask(l, n);
    size_t per_row = l->sum_width + (size_t)__builtin_popcountll(mask);
    struct run_shape *rs = sl__calloc((size_t)ranks, sizeof *rs);
    struct cursor *cur = sl__calloc((size_t)ranks, sizeof *cur);
    int rc = rs && cur ? SL_OK : SL_ENOMEM;
    for (int d = 0; d < ranks; d++) {
        buf[d] = NULL;
        bytes[d] = 0;
        int64_t m = (count[d] + l->cap - 1) / l->cap;
        if (rc < 0 || m == 0)
            continue;
        rs[d] = (struct run_shape){.m = m, .last_rows = count[d] - (m - 1) * l->cap,
                                   .full_bytes = HDR_BYTES + (size_t)l->cap * per_row};
        bytes[d] = run_bytes(l, per_row, count[d]);
        if (!(buf[d] = rs[d].buf = sl__malloc(bytes[d])))
            rc = SL_ENOMEM;
        for (int64_t p = 0; rc >= 0 && p < m; p++) {
            int64_t rows = p < m - 1 ? l->cap : rs[d].last_rows;
            memcpy(buf[d] + (size_t)p * rs[d].full_bytes, &rows, 8);
            memcpy(buf[d] + (size_t)p * rs[d].full_bytes + 8, &mask, 8);
        }
    }
    size_t off = 0;
    for (int c = 0; rc >= 0 && c < l->n_cols; c++) {
        scatter(rs, cur, ranks, l->cap, dest, n, off, l->width[c], l->cols[c].data, NULL);
        off += l->width[c];
    }
    for (int c = 0, j = 0; rc >= 0 && c < l->n_cols; c++)
        if (mask >> c & 1)
            scatter(rs, cur, ranks, l->cap, dest, n, l->sum_width + (size_t)j++, 1, NULL,
                    &l->cols[c]);
    for (int d = 0; rc < 0 && d < ranks; d++) {
        sl__free(buf[d], bytes[d]);
        buf[d] = NULL;
    }
    sl__free(rs, 0);
    sl__free(cur, 0);
    return rc;
}

int sl__xchg_inbox_init(struct xchg_inbox *in, int ranks)
{
    memset(in, 0, sizeof *in);
    in->ranks = ranks;
    in->head = sl__calloc((size_t)ranks, sizeof *in->head);
    in->tail = sl__calloc((size_t)ranks, sizeof *in->tail);
    return in->head && in->tail ? SL_OK : SL_ENOMEM;
}

/* Column c of packet p (rows n, mask) into batch b, its values copied unless `copy` is
 * false (they are b's already: a slice of the packet); returns its nulls. */
static int64_t unpack_column(const struct xchg_layout *l, const uint8_t *p, int64_t rows,
                             uint64_t mask, int c, sl_batch_t *b, bool copy)
{
    size_t n = (size_t)rows, off = 0;
    for (int j = 0; j < c; j++)
        off += l->width[j];
    if (copy)
        memcpy(sl__col_values(b, c), p + n * off, n * l->width[c]);
    if (!(mask >> c & 1))
        return 0;
    int j = __builtin_popcountll(mask & ((1ull << c) - 1));
    const uint8_t *valid = p + n * (l->sum_width + (size_t)j);
    uint8_t *bits = sl_batch_column_validity(b, c);
    if (!bits)
        return -1;
    int64_t nulls = 0;
    for (size_t i = 0; i < n; i++) {
        if (!valid[i]) {
            bits[i >> 3] &= (uint8_t) ~(1u << (i & 7));
            nulls++;
        }
    }
    return nulls;
}

static void slice_release(struct sl__buf *b)
{
    sl__buf_unref(b->owner);
}

/* Batch b's column c as a slice of the received run `run` (referenced) at v, n values of
 * w bytes, where v is aligned for them: 1 when done, 0 when not possible (copy them), or
 * SL_ENOMEM. */
static int wrap_column(sl_batch_t *b, int c, const uint8_t *v, size_t n, size_t w,
                       struct sl__buf *run)
{
    if (!run || n == 0 || (uintptr_t)v % w)
        return 0;
    struct sl__buf *sb = sl__buf_wrap((void *)v, (int64_t)(n * w), SL__MEM_HOST,
                                      slice_release, run);
    if (!sb)
        return SL_ENOMEM;
    sl__buf_ref(run);
    b->cols[c].data = sb;
    return 1;
}

/* Charges batch b's buffers that it made itself (not the slices of a run, which the
 * run's charge covers) to t's host budget; SL_EBUDGET when they do not fit. */
static int charge_batch(sl_task_t *t, sl_batch_t *b, const bool *wrapped)
{
    for (int c = 0; t && c < b->n_cols; c++) {
        struct sl__buf *bufs[2] = {wrapped[c] ? NULL : b->cols[c].data, b->cols[c].validity};
        for (int k = 0; k < 2; k++) {
            if (!bufs[k] || bufs[k]->charged)
                continue;
            if (sl__task_host_charge(t, bufs[k]->bytes) != SL_OK)
                return sl__set_last_error(SL_EBUDGET, "exchange: the rows received do not "
                                          "fit the host budget");
            sl__task_host_hand(t, bufs[k]);
        }
    }
    return SL_OK;
}

/* One packet into a batch of its own, queued behind src's: its values copied, or with a
 * received run `run` (not NULL) taken as slices of it where aligned; what it allocates
 * is charged to t's host budget (when t is not NULL). */
static int add_packet(struct xchg_inbox *in, const struct xchg_layout *l,
                      const sl_schema_t *schema, int src, const uint8_t *p, size_t bytes,
                      struct sl__buf *run, sl_task_t *t)
{
    int64_t rows;
    uint64_t mask;
    if (bytes < HDR_BYTES || src < 0 || src >= in->ranks)
        return SL_EFORMAT;
    memcpy(&rows, p, 8);
    memcpy(&mask, p + 8, 8);
    size_t want = HDR_BYTES + (size_t)rows * sum_width(l) +
                  (size_t)rows * (size_t)__builtin_popcountll(mask);
    if (rows < 0 || want != bytes || (l->n_cols < 64 && mask >> l->n_cols))
        return SL_EFORMAT;
    struct xchg_piece *k = sl__malloc(sizeof *k);
    sl_batch_t *b = sl__batch_new(schema, rows);
    bool wrapped[64] = {0};
    int rc = k && b ? SL_OK : SL_ENOMEM;
    for (int c = 0, off = 0; rc >= 0 && c < l->n_cols; off += (int)l->width[c++]) {
        rc = wrap_column(b, c, p + HDR_BYTES + (size_t)rows * (size_t)off, (size_t)rows,
                         l->width[c], run);
        wrapped[c] = rc > 0;
    }
    if (rc >= 0)
        rc = sl__batch_alloc_columns(b);
    for (int c = 0; rc >= 0 && c < l->n_cols; c++) {
        int64_t nulls = unpack_column(l, p + HDR_BYTES, rows, mask, c, b, !wrapped[c]);
        rc = nulls < 0 ? SL_ENOMEM : SL_OK;
        b->cols[c].null_count = nulls;
    }
    if (rc >= 0)
        rc = charge_batch(t, b, wrapped);
    if (rc < 0) {
        sl__free(k, sizeof *k);
        sl_batch_unref(b);
        return rc;
    }
    *k = (struct xchg_piece){NULL, b};
    if (in->tail[src])
        in->tail[src]->next = k;
    else
        in->head[src] = k;
    in->tail[src] = k;
    in->rows += rows;
    in->n_batches++;
    return SL_OK;
}

int sl__xchg_inbox_add(struct xchg_inbox *in, const struct xchg_layout *l,
                       const sl_schema_t *schema, int src, const void *p, size_t bytes,
                       sl_task_t *charged)
{
    return add_packet(in, l, schema, src, p, bytes, NULL, charged);
}

int sl__xchg_inbox_add_run(struct xchg_inbox *in, const struct xchg_layout *l,
                           const sl_schema_t *schema, int src, void *run, size_t bytes,
                           sl_task_t *charged)
{
    struct sl__buf *rb = run ? sl__buf_wrap(run, (int64_t)bytes, SL__MEM_HOST, NULL, NULL)
                             : NULL;
    if (run && !rb) {
        sl__free(run, bytes);
        if (charged)
            sl__task_host_release(charged, (int64_t)bytes);
        return SL_ENOMEM;
    }
    if (rb && charged)
        sl__task_host_hand(charged, rb);
    const uint8_t *p = run;
    int rc = SL_OK;
    while (rc >= 0 && bytes > 0) {
        int64_t rows;
        uint64_t mask;
        if (bytes < HDR_BYTES) {
            rc = SL_EFORMAT;
            break;
        }
        memcpy(&rows, p, 8);
        memcpy(&mask, p + 8, 8);
        size_t per_row = l->sum_width + (size_t)__builtin_popcountll(mask);
        if (rows < 0 || (uint64_t)rows > (bytes - HDR_BYTES) / (per_row ? per_row : 1)) {
            rc = SL_EFORMAT;
            break;
        }
        size_t one = HDR_BYTES + (size_t)rows * per_row;
        rc = add_packet(in, l, schema, src, p, one, rb, charged);
        p += one;
        bytes -= one;
    }
    sl__buf_unref(rb); /* the batches keep their slices' references */
    return rc;
}

sl_batch_t **sl__xchg_inbox_take(struct xchg_inbox *in, int64_t *n)
{
    sl_batch_t **bs = sl__calloc((size_t)(in->n_batches ? in->n_batches : 1), sizeof *bs);
    *n = 0;
    if (!bs)
        return NULL;
    for (int s = 0; s < in->ranks; s++) {
        for (struct xchg_piece *k = in->head[s]; k; k = k->next) {
            bs[(*n)++] = k->batch;
            k->batch = NULL;
        }
    }
    return bs;
}

void sl__xchg_inbox_fini(struct xchg_inbox *in)
{
    for (int s = 0; in->head && s < in->ranks; s++) {
        for (struct xchg_piece *k = in->head[s], *next; k; k = next) {
            next = k->next;
            sl_batch_unref(k->batch);
            sl__free(k, sizeof *k);
        }
    }
    sl__free(in->head, 0);
    sl__free(in->tail, 0);
    in->head = in->tail = NULL;
}
