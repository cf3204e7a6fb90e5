/* Full outer and cross joins.
 *
 * A full outer join is a left join (build on the right, probe with the left) that also
 * marks each build row that found a partner (join_emit_match). The build rows left
 * unmarked can only be known once every probe row has run, so the probe runs in
 * finalize (spawned tasks keeping their batches in the state), then one task adds the
 * unmatched build rows with null left columns, and the source emits what was kept.
 * The fused aggregate runs the same way and sums the unmatched rows too.
 *
 * A cross join pairs every left row with every right row (no keys): meant for scalar
 * subqueries, where one side has one row. The source's work items are the left
 * batches; each is emitted once per right row with that row's values repeated. */
#include <string.h>

#include "join_int.h"

int join_full_keep(struct join_state *st, sl_batch_t *b)
{
    while (atomic_exchange_explicit(&st->out_lock, 1, memory_order_acquire))
        ;
    int rc = SL_OK;
    if (st->n_full_out == st->cap_full_out) {
        int64_t cap = st->cap_full_out ? 2 * st->cap_full_out : 16;
        sl_batch_t **nb = sl__realloc(st->full_out, (size_t)st->cap_full_out * sizeof *nb,
                                      (size_t)cap * sizeof *nb);
        if (nb) {
            st->full_out = nb;
            st->cap_full_out = cap;
        } else {
            rc = SL_ENOMEM;
        }
    }
    if (rc == SL_OK)
        st->full_out[st->n_full_out++] = b;
    else
        sl_batch_unref(b);
    atomic_store_explicit(&st->out_lock, 0, memory_order_release);
    return rc;
}

static int full_probe_task(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    int64_t w = sl_task_index(t);
    struct join_acc *acc = st->acc ? &st->acc[w] : NULL;
    if (st->algo == JOIN_NOPART)
        return join_nopart_probe(t, st, w, acc);
    return join_part_probe(t, st, w, acc);
}

/* The build rows no probe row matched, with null probe-side columns; then (aggregate)
 * the sums of every work item. */
static int full_rest_task(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    struct join_acc *rest = st->acc ? &st->acc[st->n_work] : NULL;
    struct join_emit e;
    if (join_emit_init(&e, st, t, rest) < 0)
        return SL_ENOMEM;
    const struct join_side *b = &st->side[st->build];
    for (int64_t bi = 0; bi < b->n_batches && e.rc >= 0; bi++) {
        for (int64_t r = 0; r < b->batches[bi]->n_rows && e.rc >= 0; r++) {
            if (st->bmatch[b->start[bi] + r])
                continue;
            uint64_t id = (uint64_t)bi << b->shift | (uint64_t)r;
            join_emit_row(&e, 0, JOIN_NONE, id, 1);
        }
    }
    join_emit_flush(&e);
    join_emit_fini(&e);
    if (e.rc < 0 || !st->acc)
        return e.rc;
    for (int64_t w = 0; w <= st->n_work; w++)
        join_acc_add(st, &st->total, &st->acc[w]);
    return SL_OK;
}

static const struct sl_impl full_probe_impl[] = {{.device = SL_DEVICE_CPU, .run = full_probe_task}};
static const struct sl_impl full_rest_impl[] = {{.device = SL_DEVICE_CPU, .run = full_rest_task}};
static const struct sl_phase full_probe_phase = {full_probe_impl, 1, NULL};
static const struct sl_phase full_rest_phase = {full_rest_impl, 1, NULL};

int join_full_after_build(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    if (st->d->aggregate) {
        size_t bytes = (size_t)(st->n_work + 1) * sizeof *st->acc;
        if (!(st->acc = sl_task_alloc(t, bytes)))
            return SL_ENOMEM;
        memset(st->acc, 0, bytes);
    }
    if (st->n_work == 0)
        return sl_task_spawn(t, &full_rest_phase, 1, NULL, NULL);
    return sl_task_spawn(t, &full_probe_phase, st->n_work, NULL, &full_rest_phase);
}

int join_full_source(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    int64_t i = sl_task_index(t);
    sl_batch_t *b = st->full_out[i];
    st->full_out[i] = NULL; /* the emit takes the reference */
    return sl_task_emit(t, b);
}

/* Host batch lb once per row of the host batches rbs[0..n_rb). */
static int cross_emit(sl_task_t *t, sl_batch_t *lb, sl_batch_t *const *rbs, int64_t n_rb)
{
    const struct join_data *d = sl_op_data(sl_task_op(t));
    int64_t n = lb->n_rows;
    int64_t *lidx = sl__malloc((size_t)n * sizeof *lidx);
    int64_t *ridx = sl__malloc((size_t)n * sizeof *ridx);
    int rc = lidx && ridx ? SL_OK : SL_ENOMEM;
    for (int64_t i = 0; i < n && rc == SL_OK; i++)
        lidx[i] = i;
    for (int64_t bi = 0; bi < n_rb && rc == SL_OK; bi++) {
        sl_batch_t *rb = rbs[bi];
        for (int64_t r = 0; r < rb->n_rows && rc == SL_OK; r++) {
            if (sl_task_cancelled(t)) {
                rc = SL_ECANCELED;
                break;
            }
            for (int64_t i = 0; i < n; i++)
                ridx[i] = r;
            sl_batch_t *out = sl_task_new_batch(t, sl_op_output_schema(sl_task_op(t)), n);
            if (!out) {
                rc = SL_ENOMEM;
                break;
            }
            for (int oc = 0; oc < d->n_out && rc == SL_OK; oc++) {
                const struct join_ocol *c = &d->out[oc];
                rc = c->side ? sl__col_take(out, oc, rb, c->col, ridx, n)
                             : sl__col_take(out, oc, lb, c->col, lidx, n);
            }
            if (rc == SL_OK)
                rc = sl_task_emit(t, out);
            else
                sl_batch_unref(out);
        }
    }
    sl__free(lidx, 0);
    sl__free(ridx, 0);
    return rc < 0 ? sl_task_fail(t, rc, "cross join: %s", sl_strerror(rc)) : SL_OK;
}

int join_cross_source(sl_task_t *t, struct join_state *st, int64_t w)
{
    return join_cross_host(t, st->side[0].batches[w], &st->side[1]);
}

/* Batches on a GPU come to host memory first (one reference each in *hb). */
static int cross_to_host(sl_task_t *t, sl_batch_t *lb, const struct join_side *R,
                         sl_batch_t **hb)
{
    int rc = sl_task_batch_to_host(t, lb, &hb[0]);
    for (int64_t i = 0; i < R->n_batches && rc == SL_OK; i++)
        rc = sl_task_batch_to_host(t, R->batches[i], &hb[1 + i]);
    return rc;
}

int join_cross_host(sl_task_t *t, sl_batch_t *lb, const struct join_side *R)
{
    sl_batch_t **hb = sl__calloc((size_t)R->n_batches + 1, sizeof *hb);
    if (!hb)
        return sl_task_fail(t, SL_ENOMEM, "cross join: out of memory");
    int rc = cross_to_host(t, lb, R, hb);
    if (rc == SL_OK)
        rc = cross_emit(t, hb[0], hb + 1, R->n_batches);
    for (int64_t i = 0; i <= R->n_batches; i++)
        sl_batch_unref(hb[i]);
    sl__free(hb, ((size_t)R->n_batches + 1) * sizeof *hb);
    return rc;
}
