/* sort.topk: the first `limit` rows of its input in the order of `keys` (ORDER BY ...
 * LIMIT n) without sorting it all.
 *
 *   top = sort.topk(t) keys="a DESC, b" limit=10
 *
 * keys take the sort operator's syntax (ASC default, NULLS FIRST/LAST; nulls last for
 * ASC, first for DESC) and columns of any type (docs/TYPES.md: strings by bytes, DICT by
 * its strings, NaN the largest float). Ties have a defined order: rows equal on every key
 * are ordered by the remaining columns (ascending, nulls last, in schema order, up to
 * SL__SORT_MAX_KEYS columns in all), so the result does not depend on how the input was
 * split among workers.
 *
 * sink: each worker keeps its best `limit` rows: a bounded max-heap of row indices
 * selects a batch's best rows, which are merged with the worker's earlier ones the same
 * way. combine merges the workers' rows, finalize sorts those (at most workers x limit)
 * and the source emits them. On a GPU the sink first cuts each device batch to its
 * candidates (topk_cuda.c); the rest runs on the CPU. (The plugin example
 * examples/plugin/topk.c is the operator `topk`; this one is built in.) */
#include "topk_op.h"

#include "internal.h"

const struct sl_option_def sl__topk_options[2] = {
    {"keys", SL_OPT_STRING, NULL, "order: \"a DESC NULLS FIRST, b\" (ASC default)"},
    {"limit", SL_OPT_INT, NULL, "rows to keep (>= 0)"},
};

static void topk_free(void *p)
{
    sl__free(p, sizeof(struct topk_data));
}

int sl__topk_bind(sl_bind_t *b)
{
    const char *keys;
    struct topk_data d = {0};
    int rc = sl_bind_option_str(b, "keys", &keys);
    if (rc == SL_OK)
        rc = sl_bind_option_int(b, "limit", &d.limit);
    if (rc < 0)
        return rc;
    if (d.limit < 0)
        return sl_bind_fail(b, SL_EINVAL, "option limit: %lld is negative", (long long)d.limit);
    const sl_schema_t *in = sl_bind_input_schema(b, 0);
    if ((rc = sl__sort_spec_parse(b, in, keys, &d.spec)) < 0)
        return rc;
    for (int i = 0; i < sl_schema_num_fields(in); i++) {
        const char *name;
        enum sl_type type;
        sl_schema_field(in, i, &name, &type);
        if ((rc = sl_bind_add_column(b, name, type)) < 0)
            return rc;
        bool key = false;
        for (int k = 0; k < d.spec.n_keys && !key; k++)
            key = d.spec.keys[k].col == i;
        if (!key && d.spec.n_keys < SL__SORT_MAX_KEYS)
            d.spec.keys[d.spec.n_keys++] = (struct sl__sort_key){i, 0, 0};
    }
    struct topk_data *p = sl__malloc(sizeof *p);
    if (!p)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    *p = d;
    sl_bind_set_data(b, p, topk_free);
    int64_t rows = sl_bind_input_rows(b, 0);
    sl_bind_set_rows(b, rows >= 0 && rows < d.limit ? rows : d.limit);
    return SL_OK;
}

static void sift_down(const struct sl__sort_rows_cmp *c, int64_t *heap, int64_t n, int64_t i)
{
    for (;;) {
        int64_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && sl__sort_rows_compare(c, heap[l], heap[m]) > 0)
            m = l;
        if (r < n && sl__sort_rows_compare(c, heap[r], heap[m]) > 0)
            m = r;
        if (m == i)
            return;
        int64_t x = heap[i];
        heap[i] = heap[m];
        heap[m] = x;
        i = m;
    }
}

/* *out: the best `limit` rows of b (a new reference; b itself when it has no more). */
static int select_best(const struct topk_data *d, sl_batch_t *b, sl_batch_t **out)
{
    int64_t n = sl_batch_num_rows(b), k = d->limit;
    if (n <= k) {
        sl_batch_ref(b);
        *out = b;
        return SL_OK;
    }
    struct sl__sort_rows_cmp c;
    int rc = sl__sort_rows_cmp_init(&c, b, &d->spec);
    int64_t *heap = sl__malloc((size_t)(k ? k : 1) * sizeof *heap);
    if (!heap)
        rc = SL_ENOMEM;
    for (int64_t i = 0; rc == SL_OK && i < k; i++)
        heap[i] = i;
    for (int64_t i = k / 2; rc == SL_OK && i-- > 0;)
        sift_down(&c, heap, k, i);
    /* The root is the worst row kept: a better row replaces it. */
    for (int64_t i = k; rc == SL_OK && k > 0 && i < n; i++) {
        if (sl__sort_rows_compare(&c, i, heap[0]) < 0) {
            heap[0] = i;
            sift_down(&c, heap, k, 0);
        }
    }
    if (rc == SL_OK)
        rc = sl__batch_take(b, heap, k, out);
    sl__free(heap, (size_t)(k ? k : 1) * sizeof *heap);
    return rc;
}

int sl__topk_keep_best(const struct topk_data *d, sl_batch_t **best, sl_batch_t *b)
{
    sl_batch_t *sel = NULL, *both = NULL;
    int rc = select_best(d, b, &sel);
    if (rc == SL_OK && *best) {
        sl_batch_t *pair[2] = {*best, sel};
        rc = sl__batch_concat(pair, 2, &both);
        sl_batch_unref(sel);
        sel = NULL;
        if (rc == SL_OK)
            rc = select_best(d, both, &sel);
        sl_batch_unref(both);
    }
    if (rc < 0)
        return rc;
    sl_batch_unref(*best);
    *best = sel;
    return SL_OK;
}

int sl__topk_sink(sl_task_t *t)
{
    const struct topk_data *d = sl_op_data(sl_task_op(t));
    struct topk_state *ls = sl_task_lstate(t);
    sl_batch_t *b = sl_task_input(t);
    if (!ls)
        return SL_ENOMEM;
    if (sl_batch_num_rows(b) == 0 || d->limit == 0)
        return SL_OK;
    if (sl_batch_device(b) >= 0)
        return sl_task_fail(t, SL_EINTERNAL, "sort.topk: a device batch reached the CPU sink");
    int rc = sl__topk_keep_best(d, &ls->best, b);
    return rc < 0 ? sl_task_fail(t, rc, "sort.topk: %s", sl_strerror(rc)) : SL_OK;
}

int sl__topk_combine(sl_task_t *t)
{
    const struct topk_data *d = sl_op_data(sl_task_op(t));
    struct topk_state *gs = sl_task_gstate(t), *ls = sl_task_lstate(t);
    if (!ls || !ls->best)
        return SL_OK;
    int rc = sl__topk_keep_best(d, &gs->best, ls->best);
    sl_batch_unref(ls->best);
    ls->best = NULL;
    return rc < 0 ? sl_task_fail(t, rc, "sort.topk: %s", sl_strerror(rc)) : SL_OK;
}

int sl__topk_finalize(sl_task_t *t)
{
    const struct topk_data *d = sl_op_data(sl_task_op(t));
    struct topk_state *gs = sl_task_gstate(t);
    if (!gs->best)
        return SL_OK;
    sl_batch_t *sorted;
    int rc = sl__sort_any(&gs->best, 1, &d->spec, &sorted);
    if (rc < 0)
        return sl_task_fail(t, rc, "sort.topk: %s", sl_strerror(rc));
    sl_batch_unref(gs->best);
    gs->best = sorted;
    return SL_OK;
}

int sl__topk_source(sl_task_t *t)
{
    struct topk_state *gs = sl_task_gstate(t);
    sl_batch_t *b = gs->best;
    gs->best = NULL;
    return b ? sl_task_emit(t, b) : SL_OK;
}

int64_t sl__topk_source_tasks(sl_task_t *t)
{
    (void)t;
    return 1;
}

void sl__topk_fini_global(const sl_op_t *op, void *gs)
{
    (void)op;
    sl_batch_unref(((struct topk_state *)gs)->best);
}

void sl__topk_fini_local(const sl_op_t *op, void *gs, void *ls)
{
    (void)op, (void)gs;
    if (ls)
        sl_batch_unref(((struct topk_state *)ls)->best);
}

static const struct sl_impl topk_sink_impl[] = {SL__IMPL_CPU(sl__topk_sink)};
SL__TOPK_DEF(sl__sort_topk_def, topk_sink_impl);
