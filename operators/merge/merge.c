/* merge: multiway merge of sorted runs by one key column (option by="k DESC NULLS
 * FIRST", the same syntax and defaults as sort). Runs are its inputs (runs=input: each
 * input port is one sorted run, up to 64) or its input batches (runs=batch: every
 * batch, in input order, is a sorted run). The merge is stable: equal keys come out in
 * run order. Inputs are checked: a run that is not sorted fails the query, naming the
 * run and the row.
 *
 * Finalize on all cores (see sort.c for the state-machine pattern):
 *   VIEW    one task per column: the rows of all runs as one array (run after run);
 *   CODES   per chunk: key codes (common/op_common.h), checking each run's order;
 *   MERGE   per chunk of output: co-ranks of its first and last output rank
 *           (merge_int.h), then a loser-tree merge of that share into a permutation;
 *   GATHER  per chunk: output columns by the permutation.
 * Null keys form a block at the start (NULLS FIRST) or end of every run; they are
 * output first or last, in run order. Source: like sort, task i emits output rows
 * [i * morsel, ...); row order across batches is the order of source task indices. */
#include "merge_op.h"

static const struct sl_option_def merge_options[] = {
    {"by", SL_OPT_STRING, NULL, "key: \"k\", \"k DESC\", \"k NULLS FIRST\""},
    {"runs", SL_OPT_STRING, "input", "input (each input is a run) or batch (each batch is)"},
};

static void merge_free(void *p)
{
    sl__free(p, sizeof(struct merge_data));
}

static int merge_bind(sl_bind_t *b)
{
    const char *by, *runs;
    int rc;
    if ((rc = sl_bind_option_str(b, "by", &by)) < 0 ||
        (rc = sl_bind_option_str(b, "runs", &runs)) < 0)
        return rc;
    const sl_schema_t *in = sl_bind_input_schema(b, 0);
    struct merge_data d = {.n_cols = sl_schema_num_fields(in)};
    struct sl__sort_spec spec;
    if ((rc = sl__sort_spec_parse(b, in, by, &spec)) < 0)
        return rc;
    if (spec.n_keys != 1)
        return sl_bind_fail(b, SL_EUNSUPPORTED, "by: merge takes one key column for now, got %d "
                            "(sort several keys with sort)", spec.n_keys);
    d.key = spec.keys[0];
    if (!strcmp(runs, "batch"))
        d.by_batch = 1;
    else if (strcmp(runs, "input"))
        return sl_bind_fail(b, SL_EINVAL, "runs: expected input or batch, got '%s'", runs);
    for (int p = 1; p < sl_bind_num_inputs(b); p++) {
        const sl_schema_t *s = sl_bind_input_schema(b, p);
        bool same = sl_schema_num_fields(s) == d.n_cols;
        for (int i = 0; same && i < d.n_cols; i++) {
            const char *n0, *n1;
            enum sl_type t0, t1;
            sl_schema_field(in, i, &n0, &t0);
            sl_schema_field(s, i, &n1, &t1);
            same = t0 == t1 && !strcmp(n0, n1);
        }
        if (!same)
            return sl_bind_fail(b, SL_ETYPE, "input %d has other columns than input 0", p);
    }
    int64_t rows = 0;
    for (int i = 0; i < d.n_cols; i++) {
        const char *name;
        enum sl_type type;
        sl_schema_field(in, i, &name, &type);
        if ((rc = sl_bind_add_column(b, name, type)) < 0)
            return rc;
    }
    for (int p = 0; p < sl_bind_num_inputs(b); p++)
        rows = rows < 0 || sl_bind_input_rows(b, p) < 0 ? -1 : rows + sl_bind_input_rows(b, p);
    struct merge_data *pd = sl__malloc(sizeof *pd);
    if (!pd)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    *pd = d;
    sl_bind_set_data(b, pd, merge_free);
    sl_bind_set_rows(b, rows);
    return SL_OK;
}

static void merge_fini_global(const sl_op_t *op, void *gs)
{
    struct merge_global *g = gs;
    sl__rows_fini(&g->rows);
    sl_batch_unref(g->out);
}

static void merge_fini_local(const sl_op_t *op, void *gs, void *ls)
{
    sl__rows_fini(&((struct merge_local *)ls)->rows);
}

static int merge_sink(sl_task_t *t)
{
    struct merge_local *ls = sl_task_lstate(t);
    return ls ? sl__rows_sink(t, &ls->rows) : SL_ENOMEM;
}

static int merge_combine(sl_task_t *t)
{
    struct merge_global *gs = sl_task_gstate(t);
    struct merge_local *ls = sl_task_lstate(t);
    return sl__rows_combine(t, &gs->rows, &ls->rows);
}

/* ---------------- parallel work ---------------- */

static uint64_t code_at(const struct sl__colview *v, int desc, int64_t i)
{
    uint64_t c;
    switch (v->type) {
    case SL_TYPE_INT32: c = sl__key_code_i32(((const int32_t *)v->data)[i]); break;
    case SL_TYPE_INT64: c = sl__key_code_i64(((const int64_t *)v->data)[i]); break;
    case SL_TYPE_FLOAT32: c = sl__key_code_f32(((const float *)v->data)[i]); break;
    default: c = sl__key_code_f64(((const double *)v->data)[i]); break;
    }
    return desc ? ~c : c;
}

/* Codes of rows [lo, hi); records the first row that is out of order within its run
 * (a null between non-nulls, or a smaller key after a larger one). */
static void codes_chunk(struct merge_global *g, const struct merge_data *d, int64_t lo,
                        int64_t hi)
{
    const struct sl__colview *v = &g->views[d->key.col];
    int r = 0;
    while (r + 1 < g->k && g->run_hi[r] <= lo)
        r++;
    for (int64_t i = lo; i < hi; i++) {
        while (g->run_hi[r] <= i)
            r++;
        bool valid = sl__colview_valid(v, i);
        g->codes[i] = valid ? code_at(v, d->key.desc, i) : 0;
        if (i == g->run_lo[r])
            continue;
        bool pvalid = sl__colview_valid(v, i - 1), bad;
        if (valid && pvalid) {
            uint64_t pc = i - 1 >= lo ? g->codes[i - 1] : code_at(v, d->key.desc, i - 1);
            bad = pc > g->codes[i];
        } else {
            /* NULLS FIRST: a null after a value; NULLS LAST: a value after a null. */
            bad = d->key.nulls_first ? (pvalid && !valid) : (!pvalid && valid);
        }
        if (bad) {
            int64_t cur = atomic_load(&g->bad_row);
            while ((cur < 0 || i < cur) && !atomic_compare_exchange_weak(&g->bad_row, &cur, i))
                ;
            return;
        }
    }
}

/* Merges output ranks [a, b) of the non-null rows into out[0 .. b - a). */
static int merge_chunk(sl_task_t *t, struct merge_global *g, int64_t a, int64_t b, uint64_t *out)
{
    int64_t from[MERGE_MAX_RUNS_INPUT], to[MERGE_MAX_RUNS_INPUT];
    int64_t *f = from, *e = to;
    if (g->k > MERGE_MAX_RUNS_INPUT) {
        f = sl__malloc((size_t)g->k * 2 * sizeof *f);
        if (!f)
            return sl_task_fail(t, SL_ENOMEM, "out of memory");
        e = f + g->k;
    }
    sl__merge_corank(g->runs, g->k, a, f);
    sl__merge_corank(g->runs, g->k, b, e);
    sl__merge_runs(g->runs, g->k, f, e, out);
    if (f != from)
        sl__free(f, 0);
    return SL_OK;
}

static int merge_work(sl_task_t *t)
{
    struct merge_global *g = sl_task_arg(t);
    const struct merge_data *d = sl_op_data(sl_task_op(t));
    int64_t k = sl_task_index(t);
    if (g->stage == M_VIEW)
        return sl__rows_view(t, &g->rows, 0, g->rows.n, (int)k, &g->views[k]);
    int64_t lo = k * g->chunk_rows, hi = lo + g->chunk_rows < g->n ? lo + g->chunk_rows : g->n;
    switch (g->stage) {
    case M_CODES:
        codes_chunk(g, d, lo, hi);
        return SL_OK;
    case M_MERGE: {
        /* Output ranks among the non-null rows. */
        int64_t base = d->key.nulls_first ? g->n_nulls : 0, m = g->n - g->n_nulls;
        int64_t a = lo - base, b = hi - base;
        a = a < 0 ? 0 : a > m ? m : a;
        b = b < 0 ? 0 : b > m ? m : b;
        return b > a ? merge_chunk(t, g, a, b, g->perm + base + a) : SL_OK;
    }
    case M_GATHER:
        for (int c = 0; c < g->n_cols; c++) {
            uint8_t *ov = g->out->cols[c].validity ? g->out->cols[c].validity->ptr : NULL;
            g->nulls[k * g->n_cols + c] =
                sl__gather_rows(&g->views[c], g->perm, lo, hi, sl__col_values(g->out, c), ov);
        }
        return SL_OK;
    default:
        return SL_OK;
    }
}

/* ---------------- the state machine ---------------- */

static const struct sl_phase merge_work_phase, merge_step_phase;

static int spawn(sl_task_t *t, struct merge_global *g, int stage, int64_t n)
{
    g->stage = stage;
    return sl_task_spawn(t, &merge_work_phase, n, g, &merge_step_phase);
}

/* After CODES: each run's null block, the non-null parts as merge runs, and the
 * null rows' places in the permutation. */
static int after_codes(sl_task_t *t, struct merge_global *g, const struct merge_data *d)
{
    int64_t bad = atomic_load(&g->bad_row);
    if (bad >= 0) {
        int r = 0;
        while (g->run_hi[r] <= bad)
            r++;
        return sl_task_fail(t, SL_EINVAL, "run %d is not sorted by its key: row %lld of the run "
                            "is out of order", r, (long long)(bad - g->run_lo[r]));
    }
    const struct sl__colview *v = &g->views[d->key.col];
    g->perm = sl_task_alloc(t, (size_t)g->n * sizeof *g->perm + 8);
    g->runs = sl_task_alloc(t, (size_t)g->k * sizeof *g->runs);
    if (!g->perm || !g->runs)
        return SL_ENOMEM;
    int64_t at_null = d->key.nulls_first ? 0 : -1;
    g->n_nulls = 0;
    for (int r = 0; r < g->k; r++) {
        int64_t lo = g->run_lo[r], hi = g->run_hi[r], nn = 0;
        if (v->validity) {
            for (int64_t i = lo; i < hi; i++)
                nn += !sl__colview_valid(v, i);
        }
        g->runs[r] = (struct sl__merge_run){g->codes, d->key.nulls_first ? lo + nn : lo,
                                            d->key.nulls_first ? hi : hi - nn, 0};
        g->runs[r].base = g->runs[r].lo;
        g->n_nulls += nn;
    }
    /* Null rows, in run order, at the start or the end of the output. */
    if (at_null < 0)
        at_null = g->n - g->n_nulls;
    for (int r = 0; r < g->k && g->n_nulls; r++) {
        int64_t lo = g->run_lo[r], hi = g->run_hi[r];
        int64_t from = d->key.nulls_first ? lo : g->runs[r].hi;
        int64_t to = d->key.nulls_first ? g->runs[r].lo : hi;
        for (int64_t i = from; i < to; i++)
            g->perm[at_null++] = (uint64_t)i;
    }
    return spawn(t, g, M_MERGE, g->n_chunks);
}

static int merge_step(sl_task_t *t)
{
    struct merge_global *g = sl_task_arg(t);
    const struct merge_data *d = sl_op_data(sl_task_op(t));
    if (sl_task_cancelled(t))
        return SL_ECANCELED;
    switch (g->stage) {
    case M_VIEW:
        g->codes = sl_task_alloc(t, (size_t)g->n * sizeof *g->codes + 8);
        g->nulls = sl_task_alloc(t, (size_t)(g->n_chunks * g->n_cols) * 8 + 8);
        if (!g->codes || !g->nulls)
            return SL_ENOMEM;
        return spawn(t, g, M_CODES, g->n_chunks);
    case M_CODES:
        return after_codes(t, g, d);
    case M_MERGE:
        g->out = sl__batch_new(sl_op_output_schema(sl_task_op(t)), g->n);
        if (!g->out || sl__batch_alloc_columns(g->out) != SL_OK)
            return sl_task_fail(t, SL_ENOMEM, "out of memory for %lld rows", (long long)g->n);
        for (int c = 0; c < g->n_cols; c++) {
            if (g->views[c].validity && !sl_batch_column_validity(g->out, c))
                return sl_task_fail(t, SL_ENOMEM, "out of memory");
        }
        return spawn(t, g, M_GATHER, g->n_chunks);
    case M_GATHER:
        sl__sum_chunk_nulls(g->out, g->nulls, g->n_chunks, g->n_cols);
        g->stage = M_DONE;
        return SL_OK;
    default:
        return SL_OK;
    }
}

int sl__merge_finalize_cpu(sl_task_t *t)
{
    struct merge_global *g = sl_task_gstate(t);
    const struct merge_data *d = sl_op_data(sl_task_op(t));
    /* Batches a GPU sink kept, when the GPU could not finalize (merge_cuda.c). */
    int rc = sl__rows_to_host(t, &g->rows);
    if (rc < 0)
        return rc;
    sl__rows_order(&g->rows);
    atomic_store(&g->bad_row, -1);
    g->n = sl__rows_total(&g->rows);
    if (g->n == 0)
        return SL_OK;
    /* Runs: consecutive items with the same port (or each item). */
    int64_t k = 0;
    for (int64_t i = 0; i < g->rows.n; i++)
        k += d->by_batch || i == 0 || g->rows.items[i].port != g->rows.items[i - 1].port;
    g->run_lo = sl_task_alloc(t, (size_t)k * 2 * sizeof *g->run_lo);
    g->views = sl_task_alloc(t, (size_t)d->n_cols * sizeof *g->views);
    if (!g->run_lo || !g->views)
        return SL_ENOMEM;
    g->run_hi = g->run_lo + k;
    g->k = 0;
    int64_t at = 0;
    for (int64_t i = 0; i < g->rows.n; i++) {
        if (d->by_batch || i == 0 || g->rows.items[i].port != g->rows.items[i - 1].port) {
            g->run_lo[g->k] = at;
            g->k++;
        }
        at += g->rows.items[i].batch->n_rows;
        g->run_hi[g->k - 1] = at;
    }
    g->n_cols = d->n_cols;
    g->chunk_rows = sl__chunk_rows(t, g->n);
    g->n_chunks = (g->n + g->chunk_rows - 1) / g->chunk_rows;
    return spawn(t, g, M_VIEW, g->n_cols);
}

static int64_t merge_tasks(sl_task_t *t)
{
    struct merge_global *g = sl_task_gstate(t);
    return sl__morsel_tasks(t, g->out, g->n);
}

static int merge_source(sl_task_t *t)
{
    struct merge_global *g = sl_task_gstate(t);
    return sl__emit_morsel(t, g->out, g->n);
}

#ifdef SL_HAVE_CUDA
/* On a GPU the sink and combine keep the device batches (as on the CPU), finalize
 * merges two runs there and the source emits slices of the device result
 * (merge_cuda.c). */
#define MERGE_N_IMPLS 2
#else
#define MERGE_N_IMPLS 1
#endif
static const struct sl_impl merge_sink_impl[] = {
    {.device = SL_DEVICE_CPU, .run = merge_sink},
#ifdef SL_HAVE_CUDA
    {.device = SL_DEVICE_CUDA, .run = merge_sink, .can_run = sl__merge_gpu_sink_can_run},
#endif
};
static const struct sl_impl merge_combine_impl[] = {
    {.device = SL_DEVICE_CPU, .run = merge_combine},
#ifdef SL_HAVE_CUDA
    {.device = SL_DEVICE_CUDA, .run = merge_combine},
#endif
};
static const struct sl_impl merge_finalize_impl[] = {
    {.device = SL_DEVICE_CPU, .run = sl__merge_finalize_cpu},
#ifdef SL_HAVE_CUDA
    {.device = SL_DEVICE_CUDA, .run = sl__merge_gpu_finalize,
     .can_run = sl__merge_gpu_finalize_can_run},
#endif
};
static const struct sl_impl merge_work_impl[] = {{.device = SL_DEVICE_CPU, .run = merge_work}};
static const struct sl_impl merge_step_impl[] = {{.device = SL_DEVICE_CPU, .run = merge_step}};
static const struct sl_impl merge_source_impl[] = {
    {.device = SL_DEVICE_CPU, .run = merge_source},
#ifdef SL_HAVE_CUDA
    {.device = SL_DEVICE_CUDA, .run = merge_source, .can_run = sl__merge_gpu_source_can_run},
#endif
};
static const struct sl_phase merge_sink_phase = {merge_sink_impl, MERGE_N_IMPLS,
                                                 sl__cost_linear};
static const struct sl_phase merge_combine_phase = {merge_combine_impl, MERGE_N_IMPLS, NULL};
static const struct sl_phase merge_finalize_phase = {merge_finalize_impl, MERGE_N_IMPLS,
                                                     NULL};
static const struct sl_phase merge_work_phase = {merge_work_impl, 1, NULL};
static const struct sl_phase merge_step_phase = {merge_step_impl, 1, NULL};
static const struct sl_phase merge_source_phase = {merge_source_impl, MERGE_N_IMPLS,
                                                   sl__cost_linear_source};

const struct sl_op_def sl__merge_def = {
    .abi_version = SL_OP_ABI_VERSION,
    .flags = SL_OP_SINK | SL_OP_SOURCE,
    .name = "merge",
    .doc = "stable multiway merge of sorted runs (inputs or batches) by one key column",
    .min_inputs = 1,
    .max_inputs = 64,
    .options = merge_options,
    .n_options = sizeof merge_options / sizeof merge_options[0],
    .bind = merge_bind,
    .global_state_bytes = sizeof(struct merge_global),
    .local_state_bytes = sizeof(struct merge_local),
    .fini_global = merge_fini_global,
    .fini_local = merge_fini_local,
    .source_tasks = merge_tasks,
    .sink = &merge_sink_phase,
    .combine = &merge_combine_phase,
    .finalize = &merge_finalize_phase,
    .source = &merge_source_phase,
};
