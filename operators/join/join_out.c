/* Output of the join: gathering materialized rows into batches of at most one morsel,
 * and the fused aggregate (count and exact sums, checked against int64 at the end). */
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
    e->pv = sl__malloc((size_t)e->cap * sizeof *e->pv);
    e->bv = sl__malloc((size_t)e->cap * sizeof *e->bv);
    if (e->minl) {
        e->kv = sl__malloc((size_t)e->cap * sizeof *e->kv);
        e->bnull = sl__malloc((size_t)e->cap);
    }
    if (!e->pv || !e->bv || (e->minl && (!e->kv || !e->bnull))) {
        join_emit_fini(e);
        return e->rc = sl_task_fail(t, SL_ENOMEM, "out of memory for output rows");
    }
    return SL_OK;
}

void join_emit_fini(struct join_emit *e)
{
    sl__free(e->pv, (size_t)e->cap * sizeof *e->pv);
    sl__free(e->bv, (size_t)e->cap * sizeof *e->bv);
    sl__free(e->kv, (size_t)e->cap * sizeof *e->kv);
    sl__free(e->bnull, (size_t)e->cap);
    e->pv = e->bv = e->kv = NULL;
    e->bnull = NULL;
}

/* Gathers one output column for rows `ids` (JOIN_NONE = null) from a side's batches. */
static int gather_col(struct join_emit *e, sl_batch_t *out, int oc, const uint64_t *ids,
                      int64_t n)
{
    const struct join_ocol *c = &e->st->d->out[oc];
    const struct join_side *sd = &e->st->side[c->side];
    int width = (int)sl_type_width(c->type);
    char *dst = sl__col_values(out, oc);
    uint64_t mask = ((uint64_t)1 << sd->shift) - 1;
    int nullable = c->side == 1 && e->st->d->kind == JOIN_LEFT;
    for (int64_t i = 0; i < sd->n_batches && !nullable; i++)
        nullable = sd->batches[i]->cols[c->col].validity != NULL;
    uint8_t *valid = NULL;
    if (nullable && !(valid = sl_batch_column_validity(out, oc)))
        return sl_task_fail(e->task, SL_ENOMEM, "out of memory for a validity bitmap");
    int64_t nulls = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t id = ids[i];
        if (id == JOIN_NONE) {
            memset(dst + i * width, 0, (size_t)width);
            valid[i >> 3] &= (uint8_t)~(1u << (i & 7));
            nulls++;
            continue;
        }
        const sl_batch_t *b = sd->batches[id >> sd->shift];
        int64_t r = (int64_t)(id & mask);
        const char *src = (const char *)sl__col_values(b, c->col) + r * width;
        if (width == 4)
            memcpy(dst + i * 4, src, 4);
        else
            memcpy(dst + i * 8, src, 8);
        if (valid && !sl__col_valid(&b->cols[c->col], r)) {
            valid[i >> 3] &= (uint8_t)~(1u << (i & 7));
            nulls++;
        }
    }
    out->cols[oc].null_count = valid ? nulls : 0;
    return SL_OK;
}

/* Writes one output column from inline vals: the key (a key column) or the side's val,
 * null where the row has no build partner (left joins). No gathers. */
static int inline_col(struct join_emit *e, sl_batch_t *out, int oc, int64_t n)
{
    const struct join_state *st = e->st;
    const struct join_ocol *c = &st->d->out[oc];
    int is_key = c->col == st->side[c->side].key[0];
    int probe = c->side != st->build;
    const uint64_t *src = is_key ? e->kv : probe ? e->pv : e->bv;
    if (c->type == SL_TYPE_INT32) {
        int32_t *dst = sl__col_values(out, oc);
        for (int64_t i = 0; i < n; i++)
            dst[i] = (int32_t)(uint32_t)src[i];
    } else {
        int64_t *dst = sl__col_values(out, oc);
        for (int64_t i = 0; i < n; i++)
            dst[i] = (int64_t)src[i];
    }
    if (probe || st->d->kind != JOIN_LEFT)
        return SL_OK;
    uint8_t *valid = sl_batch_column_validity(out, oc);
    if (!valid)
        return sl_task_fail(e->task, SL_ENOMEM, "out of memory for a validity bitmap");
    int64_t nulls = 0;
    for (int64_t i = 0; i < n; i++) {
        if (e->bnull[i]) {
            valid[i >> 3] &= (uint8_t)~(1u << (i & 7));
            nulls++;
        }
    }
    out->cols[oc].null_count = nulls;
    return SL_OK;
}

int join_emit_flush(struct join_emit *e)
{
    if (e->n == 0 || e->rc < 0)
        return e->rc;
    int64_t n = e->n;
    e->n = 0;
    sl_batch_t *b = sl_task_new_batch(e->task, sl_op_output_schema(sl_task_op(e->task)), n);
    if (!b)
        return e->rc = SL_ENOMEM;
    const uint64_t *lrows = e->swap ? e->bv : e->pv, *rrows = e->swap ? e->pv : e->bv;
    for (int oc = 0; oc < e->st->d->n_out; oc++) {
        int rc = e->minl ? inline_col(e, b, oc, n)
                         : gather_col(e, b, oc, e->st->d->out[oc].side ? rrows : lrows, n);
        if (rc < 0) {
            sl_batch_unref(b);
            return e->rc = rc;
        }
    }
    int rc = sl_task_emit(e->task, b);
    if (rc < 0)
        e->rc = rc;
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
        const void *v = sl__col_values(b, c->col);
        switch (c->type) {
        case SL_TYPE_INT32:
            a->isum[oc] += ((const int32_t *)v)[r];
            break;
        case SL_TYPE_INT64:
            a->isum[oc] += ((const int64_t *)v)[r];
            break;
        case SL_TYPE_FLOAT32:
            a->fsum[oc] += ((const float *)v)[r];
            break;
        default:
            a->fsum[oc] += ((const double *)v)[r];
            break;
        }
    }
}

void join_acc_add(const struct join_state *st, struct join_acc *dst, const struct join_acc *src)
{
    dst->count += src->count;
    for (int oc = 0; oc < st->d->n_out; oc++) {
        dst->isum[oc] += src->isum[oc];
        dst->fsum[oc] += src->fsum[oc];
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
    for (int oc = 0; oc < d->n_out; oc++) {
        enum sl_type ty = d->out[oc].type;
        if (ty == SL_TYPE_INT32 || ty == SL_TYPE_INT64) {
            if (a->isum[oc] > INT64_MAX || a->isum[oc] < INT64_MIN) {
                const char *name;
                sl_schema_field(sl_op_output_schema(sl_task_op(t)), oc + 1, &name, NULL);
                sl_batch_unref(b);
                return sl_task_fail(t, SL_EOVERFLOW, "%s overflows int64", name);
            }
            *(int64_t *)sl__col_values(b, oc + 1) = (int64_t)a->isum[oc];
        } else {
            *(double *)sl__col_values(b, oc + 1) = a->fsum[oc];
        }
        /* As SQL's SUM: null over no rows. */
        if (a->count == 0) {
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
