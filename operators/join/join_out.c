/* Output of the join: gathering materialized rows (every column type) into batches of at
 * most one morsel, and the fused aggregate (count and exact sums: int64 checked at the
 * end, decimals as decimal(38, s), NULL where no value was summed). */
#include <string.h>

#include "join_int.h"

int join_emit_init(struct join_emit *e, struct join_state *st, sl_task_t *t,
                   struct join_acc *acc)
{
    memset(e, 0, sizeof *e);
    e->st = st;
    e->task = t;
    e->swap = st->build == 0;
    e->materialize = !st->d->aggregate;
    e->store = st->d->kind == JOIN_FULL;
    e->acc = acc;
    if (!e->materialize) {
        int p = 1 - st->build;
        e->inl = e->vinl = st->side[p].inline_val && st->side[st->build].inline_val;
        e->ip = e->ib = JOIN_DUMMY;
        for (int oc = 0; oc < st->d->n_out; oc++) {
            if (st->d->out[oc].side == p && st->d->out[oc].col == st->side[p].val_col)
                e->ip = oc;
            if (st->d->out[oc].side == st->build &&
                st->d->out[oc].col == st->side[st->build].val_col)
                e->ib = oc;
        }
        return SL_OK;
    }
    e->cap = st->morsel;
    e->minl = e->vinl = st->side[0].inline_val;
    if (e->minl) { /* rows go straight into the output batch's columns */
        const struct join_data *d = st->d;
        e->ocw = sl__malloc((size_t)(d->n_out ? d->n_out : 1) * sizeof *e->ocw);
        if (!e->ocw)
            return e->rc = sl_task_fail(t, SL_ENOMEM, "out of memory for output rows");
        e->n_ocw = d->n_out;
        for (int oc = 0; oc < d->n_out; oc++) {
            const struct join_ocol *c = &d->out[oc];
            int build = c->side == st->build;
            e->ocw[oc] = (struct join_ocw){
                .src = c->col == st->side[c->side].key[0] ? 0 : build ? 2 : 1,
                .width = (int)sl_type_width(c->type),
                .nullable = build && join_kind_outer(d->kind)};
        }
        return SL_OK;
    }
    e->pv = sl__malloc((size_t)e->cap * sizeof *e->pv);
    e->bv = sl__malloc((size_t)e->cap * sizeof *e->bv);
    if (!e->pv || !e->bv) {
        join_emit_fini(e);
        return e->rc = sl_task_fail(t, SL_ENOMEM, "out of memory for output rows");
    }
    return SL_OK;
}

void join_emit_fini(struct join_emit *e)
{
    sl__free(e->pv, (size_t)e->cap * sizeof *e->pv);
    sl__free(e->bv, (size_t)e->cap * sizeof *e->bv);
    sl__free(e->ocw, 0);
    sl_batch_unref(e->ob);
    e->pv = e->bv = NULL;
    e->ocw = NULL;
    e->ob = NULL;
}

/* Row `id` of a side as (batch, row). */
static inline const sl_batch_t *side_row(const struct join_side *sd, uint64_t id, int64_t *r)
{
    *r = (int64_t)(id & (((uint64_t)1 << sd->shift) - 1));
    return sd->batches[id >> sd->shift];
}

/* String output column oc: the bytes of rows `ids` (JOIN_NONE = null, empty). */
static int gather_strings(struct join_emit *e, sl_batch_t *out, int oc, const uint64_t *ids,
                          int64_t n)
{
    const struct join_ocol *c = &e->st->d->out[oc];
    const struct join_side *sd = &e->st->side[c->side];
    struct sl__colview v;
    int64_t total = 0, len, r;
    const sl_batch_t *vb = NULL;
    for (int64_t i = 0; i < n; i++) {
        if (ids[i] == JOIN_NONE)
            continue;
        const sl_batch_t *b = side_row(sd, ids[i], &r);
        if (b != vb)
            sl__colview_get(vb = b, c->col, &v);
        sl__colview_str(&v, r, &len);
        total += len;
    }
    char *chars = sl_batch_column_chars(out, oc, total);
    if (!chars)
        return sl_task_fail(e->task, c->type == SL_TYPE_UTF8 && total > INT32_MAX
                                         ? SL_EOVERFLOW : SL_ENOMEM,
                            "%lld bytes of strings in one output batch",
                            (long long)total);
    void *off = sl_batch_column_data(out, oc);
    int64_t at = 0;
    vb = NULL;
    for (int64_t i = 0; i < n; i++) {
        if (ids[i] != JOIN_NONE) {
            const sl_batch_t *b = side_row(sd, ids[i], &r);
            if (b != vb)
                sl__colview_get(vb = b, c->col, &v);
            const char *str = sl__colview_str(&v, r, &len);
            memcpy(chars + at, str, (size_t)len);
            at += len;
        }
        if (c->type == SL_TYPE_UTF8)
            ((int32_t *)off)[i + 1] = (int32_t)at;
        else
            ((int64_t *)off)[i + 1] = at;
    }
    return SL_OK;
}

int join_dict_unions(sl_task_t *t, struct join_state *st)
{
    const struct join_data *d = st->d;
    for (int oc = 0; oc < d->n_out; oc++) {
        const struct join_ocol *c = &d->out[oc];
        const struct join_side *sd = &st->side[c->side];
        if (c->type != SL_TYPE_DICT || d->aggregate)
            continue;
        int64_t i = 1;
        while (i < sd->n_batches &&
               sd->batches[i]->cols[c->col].dict == sd->batches[0]->cols[c->col].dict)
            i++;
        if (i >= sd->n_batches)
            continue; /* one dictionary: shared as it is */
        if (!st->dunion && !(st->dunion = sl__calloc((size_t)d->n_out, sizeof *st->dunion)))
            return sl_task_fail(t, SL_ENOMEM, "out of memory");
        int rc = sl__dict_union_init(&st->dunion[oc], sd->batches, sd->n_batches, c->col);
        if (rc < 0)
            return sl_task_fail(t, rc, "merging the dictionaries of column '%s'",
                                sd->batches[0]->schema->fields[c->col].name);
    }
    return SL_OK;
}

void join_dict_unions_free(struct join_state *st)
{
    for (int oc = 0; st->dunion && oc < st->d->n_out; oc++)
        sl__dict_union_fini(&st->dunion[oc]);
    sl__free(st->dunion, 0);
    st->dunion = NULL;
}

/* A DICT output column shares its side's one dictionary, or the merged one
 * (join_dict_unions) whose codes gather_col writes. */
static int share_dict(struct join_emit *e, sl_batch_t *out, int oc)
{
    const struct join_ocol *c = &e->st->d->out[oc];
    const struct join_side *sd = &e->st->side[c->side];
    if (sd->n_batches == 0)
        return SL_OK;
    const struct sl__dict_union *u = e->st->dunion ? &e->st->dunion[oc] : NULL;
    int rc = u && u->dict ? sl__dict_union_attach(u, out, oc)
                          : sl_batch_share_dictionary(out, oc, sd->batches[0], c->col);
    return rc < 0 ? sl_task_fail(e->task, rc, "sharing a dictionary") : SL_OK;
}

/* The common case of gather_col: values of 4, 8 or 16 bytes, no nulls (so no JOIN_NONE
 * ids), no dictionary codes to translate. The batch's value pointer is looked up again
 * only when a row's batch differs from the last row's (probe rows come in order). */
static void gather_fixed(const struct join_side *sd, int col, const uint64_t *ids, int64_t n,
                         size_t width, char *dst)
{
    uint64_t mask = ((uint64_t)1 << sd->shift) - 1, last = UINT64_MAX;
    const char *base = NULL;
#define GATHER_FIXED(W)                                                           \
    for (int64_t i = 0; i < n; i++) {                                             \
        uint64_t id = ids[i], bi = id >> sd->shift;                               \
        if (bi != last) {                                                         \
            base = sl__col_values(sd->batches[bi], col);                          \
            last = bi;                                                            \
        }                                                                         \
        memcpy(dst + i * (W), base + (int64_t)(id & mask) * (W), (W));            \
    }
    if (width == 4) {
        GATHER_FIXED(4)
    } else if (width == 8) {
        GATHER_FIXED(8)
    } else {
        GATHER_FIXED(16)
    }
#undef GATHER_FIXED
}

/* Gathers one output column for rows `ids` (JOIN_NONE = null) from a side's batches. */
static int gather_col(struct join_emit *e, sl_batch_t *out, int oc, const uint64_t *ids,
                      int64_t n)
{
    const struct join_ocol *c = &e->st->d->out[oc];
    const struct join_side *sd = &e->st->side[c->side];
    size_t width = sl_type_width(c->type);
    int rc = SL_OK;
    if (width == 0)
        rc = gather_strings(e, out, oc, ids, n);
    else if (c->type == SL_TYPE_DICT)
        rc = share_dict(e, out, oc);
    if (rc < 0)
        return rc;
    char *dst = sl__col_values(out, oc);
    const struct sl__dict_union *u =
        e->st->dunion && e->st->dunion[oc].dict ? &e->st->dunion[oc] : NULL;
    int kind = e->st->d->kind;
    int nullable = (c->side == e->st->build && join_kind_outer(kind)) || kind == JOIN_FULL;
    for (int64_t i = 0; i < sd->n_batches && !nullable; i++)
        nullable = sd->batches[i]->cols[c->col].validity != NULL;
    uint8_t *valid = NULL;
    if (nullable && !(valid = sl_batch_column_validity(out, oc)))
        return sl_task_fail(e->task, SL_ENOMEM, "out of memory for a validity bitmap");
    if (!u && !valid && (width == 4 || width == 8 || width == 16)) {
        gather_fixed(sd, c->col, ids, n, width, dst);
        out->cols[oc].null_count = 0;
        return SL_OK;
    }
    int64_t nulls = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t id = ids[i];
        if (id == JOIN_NONE) {
            if (width)
                memset(dst + i * (int64_t)width, 0, width);
            valid[i >> 3] &= (uint8_t)~(1u << (i & 7));
            nulls++;
            continue;
        }
        int64_t r;
        const sl_batch_t *b = side_row(sd, id, &r);
        if (u) {
            int32_t code = ((const int32_t *)sl__col_values(b, c->col))[r];
            ((int32_t *)dst)[i] = sl__dict_union_code(u, (int64_t)(id >> sd->shift), code);
        } else if (width) {
            const char *src = (const char *)sl__col_values(b, c->col) + r * (int64_t)width;
            switch (width) {
            case 4: memcpy(dst + i * 4, src, 4); break;
            case 8: memcpy(dst + i * 8, src, 8); break;
            default: memcpy(dst + i * (int64_t)width, src, width); break;
            }
        }
        if (valid && !sl__col_valid(&b->cols[c->col], r)) {
            valid[i >> 3] &= (uint8_t)~(1u << (i & 7));
            nulls++;
        }
    }
    out->cols[oc].null_count = valid ? nulls : 0;
    return SL_OK;
}

/* A DICT column written from inline vals holds codes of its side's one shared
 * dictionary (choose_vals: exact keys), which the output column shares. */
int join_emit_open(struct join_emit *e)
{
    if (e->rc < 0)
        return e->rc;
    int64_t rows = e->expect > 0 && e->expect < e->cap ? e->expect : e->cap;
    sl_batch_t *b = sl_task_new_batch(e->task, sl_op_output_schema(sl_task_op(e->task)), rows);
    if (!b)
        return e->rc = SL_ENOMEM;
    for (int oc = 0; oc < e->n_ocw; oc++) {
        int rc = e->st->d->out[oc].type == SL_TYPE_DICT ? share_dict(e, b, oc) : SL_OK;
        if (rc < 0) {
            sl_batch_unref(b);
            return e->rc = rc;
        }
        e->ocw[oc].dst = sl__col_values(b, oc);
    }
    e->ob = b;
    e->ob_rows = rows;
    e->n_alone = 0;
    return SL_OK;
}

void join_emit_rows(struct join_emit *e, const uint64_t *k, const uint64_t *pv,
                    const uint64_t *bv, int64_t n)
{
    while (n > 0 && e->rc >= 0) {
        if (!e->ob && join_emit_open(e) < 0)
            return;
        int64_t c = e->ob_rows - e->n < n ? e->ob_rows - e->n : n;
        for (int oc = 0; oc < e->n_ocw; oc++) {
            const struct join_ocw *o = &e->ocw[oc];
            const uint64_t *x = o->src == 0 ? k : o->src == 1 ? pv : bv;
            int64_t at = e->n;
            if (o->width == 4) { /* the common width: a vector loop */
                uint32_t *d = (uint32_t *)o->dst + at;
                for (int64_t i = 0; i < c; i++)
                    d[i] = (uint32_t)x[i];
            } else {
                for (int64_t i = 0; i < c; i++)
                    join_ocw_store(o, at + i, x[i]);
            }
        }
        e->n += c;
        k += c;
        pv += c;
        bv += c;
        n -= c;
        if (e->n == e->ob_rows)
            join_emit_flush(e);
    }
}

void join_emit_null_build(struct join_emit *e)
{
    int64_t n = e->n;
    for (int oc = 0; oc < e->n_ocw; oc++) {
        struct join_ocw *o = &e->ocw[oc];
        if (!o->nullable)
            continue;
        uint8_t *valid = sl_batch_column_validity(e->ob, oc);
        if (!valid) {
            e->rc = sl_task_fail(e->task, SL_ENOMEM, "out of memory for a validity bitmap");
            return;
        }
        valid[n >> 3] &= (uint8_t)~(1u << (n & 7));
        memset(o->dst + n * o->width, 0, (size_t)o->width);
    }
    e->n_alone++;
}

/* minl: the batch being filled, cut to its n rows, with its null counts. */
static sl_batch_t *take_inline(struct join_emit *e, int64_t n)
{
    sl_batch_t *b = e->ob;
    e->ob = NULL;
    e->expect -= n;
    b->n_rows = n;
    for (int oc = 0; oc < e->n_ocw; oc++)
        b->cols[oc].null_count = e->ocw[oc].nullable && b->cols[oc].validity ? e->n_alone : 0;
    return b;
}

int join_emit_flush(struct join_emit *e)
{
    if (e->n == 0 || e->rc < 0)
        return e->rc;
    int64_t n = e->n;
    e->n = 0;
    sl_batch_t *b = e->minl ? take_inline(e, n)
                            : sl_task_new_batch(e->task, sl_op_output_schema(sl_task_op(e->task)), n);
    if (!b)
        return e->rc = SL_ENOMEM;
    const uint64_t *lrows = e->swap ? e->bv : e->pv, *rrows = e->swap ? e->pv : e->bv;
    for (int oc = 0; !e->minl && oc < e->st->d->n_out; oc++) {
        int rc = gather_col(e, b, oc, e->st->d->out[oc].side ? rrows : lrows, n);
        if (rc < 0) {
            sl_batch_unref(b);
            return e->rc = rc;
        }
    }
    int rc = e->store ? join_full_keep(e->st, b) : sl_task_emit(e->task, b);
    if (rc < 0)
        e->rc = e->store ? sl_task_fail(e->task, rc, "out of memory keeping join output") : rc;
    return e->rc;
}

void join_acc_rows(struct join_emit *e, uint64_t pv, uint64_t bv)
{
    const struct join_state *st = e->st;
    uint64_t rows[2] = {e->swap ? bv : pv, e->swap ? pv : bv};
    struct join_acc *a = e->acc;
    a->count++;
    for (int oc = 0; oc < st->d->n_out; oc++) {
        const struct join_ocol *c = &st->d->out[oc];
        uint64_t id = rows[c->side];
        if (id == JOIN_NONE)
            continue;
        const struct join_side *sd = &st->side[c->side];
        const sl_batch_t *b = sd->batches[id >> sd->shift];
        int64_t r = (int64_t)(id & (((uint64_t)1 << sd->shift) - 1));
        if (!sl__col_valid(&b->cols[c->col], r))
            continue;
        a->nonnull[oc]++;
        const void *v = sl__col_values(b, c->col);
        switch (SL_TYPE_ID(c->type)) {
        case SL_TYPE_FLOAT32: a->fsum[oc] += ((const float *)v)[r]; break;
        case SL_TYPE_FLOAT64: a->fsum[oc] += ((const double *)v)[r]; break;
        case SL_TYPE_INT8: a->isum[oc] += ((const int8_t *)v)[r]; break;
        case SL_TYPE_INT16: a->isum[oc] += ((const int16_t *)v)[r]; break;
        case SL_TYPE_INT32: a->isum[oc] += ((const int32_t *)v)[r]; break;
        case SL_TYPE_UINT8: a->isum[oc] += ((const uint8_t *)v)[r]; break;
        case SL_TYPE_UINT16: a->isum[oc] += ((const uint16_t *)v)[r]; break;
        case SL_TYPE_UINT32: a->isum[oc] += ((const uint32_t *)v)[r]; break;
        case SL_TYPE_UINT64: a->isum[oc] += ((const uint64_t *)v)[r]; break;
        case SL_TYPE_DECIMAL:
            if (sl_type_width(c->type) == 16) {
                __int128 x;
                memcpy(&x, (const char *)v + 16 * r, 16);
                a->isum[oc] += x; /* wraps only past 2^127, far beyond 38 digits */
            } else {
                a->isum[oc] += ((const int64_t *)v)[r];
            }
            break;
        default: a->isum[oc] += ((const int64_t *)v)[r]; break;
        }
    }
}

void join_acc_add(const struct join_state *st, struct join_acc *dst, const struct join_acc *src)
{
    dst->count += src->count;
    dst->alone += src->alone;
    for (int oc = 0; oc < st->d->n_out; oc++) {
        dst->isum[oc] += src->isum[oc];
        dst->fsum[oc] += src->fsum[oc];
        dst->nonnull[oc] += src->nonnull[oc];
    }
}

int join_emit_aggregate(sl_task_t *t, struct join_state *st)
{
    const struct join_data *d = st->d;
    const struct join_acc *a = &st->total;
    if (a->count > INT64_MAX)
        return sl_task_fail(t, SL_EOVERFLOW, "the row count overflows int64");
    /* One row, written here: a host batch also when the task runs on a GPU. */
    sl_batch_t *b = sl__batch_new(sl_op_output_schema(sl_task_op(t)), 1);
    if (!b || sl__batch_alloc_columns(b) != SL_OK) {
        sl_batch_unref(b);
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    }
    *(int64_t *)sl__col_values(b, 0) = (int64_t)a->count;
    const sl_schema_t *os = sl_op_output_schema(sl_task_op(t));
    for (int oc = 0; oc < d->n_out; oc++) {
        const struct join_ocol *c = &d->out[oc];
        enum sl_type ty = os->fields[oc + 1].type;
        void *dst = sl__col_values(b, oc + 1);
        if (ty == SL_TYPE_FLOAT64) {
            *(double *)dst = a->fsum[oc];
        } else if (ty == SL_TYPE_INT64 && (a->isum[oc] > INT64_MAX || a->isum[oc] < INT64_MIN)) {
            sl_batch_unref(b);
            return sl_task_fail(t, SL_EOVERFLOW, "%s overflows int64", os->fields[oc + 1].name);
        } else if (ty == SL_TYPE_INT64) {
            *(int64_t *)dst = (int64_t)a->isum[oc];
        } else { /* decimal(38, s) */
            memcpy(dst, &a->isum[oc], 16);
        }
        /* As SQL's SUM: null when no value was summed. Inline vals are never null: every
         * output row has one on the probe side, matched rows on the build side. */
        int64_t values = a->nonnull[oc];
        if (st->side[c->side].inline_val)
            values = (int64_t)(c->side == st->build ? a->count - a->alone : a->count);
        if (values == 0) {
            uint8_t *valid = sl_batch_column_validity(b, oc + 1);
            if (!valid) {
                sl_batch_unref(b);
                return sl_task_fail(t, SL_ENOMEM, "out of memory");
            }
            valid[0] = 0;
            b->cols[oc + 1].null_count = 1;
        }
    }
    return sl_task_emit(t, b);
}
