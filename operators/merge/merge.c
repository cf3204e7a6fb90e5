/* merge: multiway merge of sorted runs by one key column (option by="k DESC NULLS
 * FIRST", the same syntax and defaults as sort). Columns must be 4 or 8 bytes wide
 * (refused at bind otherwise: sl__mat_bind_word_columns); keys compare as their values
 * (dates, timestamps and decimal(p <= 18) as their integers, unsigned as unsigned).
 * Runs are its inputs (runs=input: each input port is one sorted run, up to 64) or its
 * input batches (runs=batch: every batch, in input order, is a sorted run). The merge
 * is stable: equal keys come out in run order. Inputs are checked: a run that is not
 * sorted fails the query, naming the run and the row.
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

const struct sl_option_def sl__merge_options[SL__MERGE_N_OPTIONS] = {
    {"by", SL_OPT_STRING, NULL, "key: \"k\", \"k DESC\", \"k NULLS FIRST\""},
    {"runs", SL_OPT_STRING, "input", "input (each input is a run) or batch (each batch is)"},
};

static void merge_free(void *p)
{
    sl__free(p, sizeof(struct merge_data));
}

int sl__merge_bind(sl_bind_t *b)
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
    if ((rc = sl__mat_bind_word_columns(b, "merge")) < 0)
        return rc;
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

void sl__merge_fini_global(const sl_op_t *op, void *gs)
{
    sl__mat_fini(&((struct merge_global *)gs)->m);
}

/* ---------------- parallel work ---------------- */

/* Codes whose unsigned order is the key's (columns are 4 or 8 bytes: bind). */
static uint64_t code_at(const struct sl__rowsview *v, int desc, int64_t i)
{
    uint64_t c;
    switch (SL_TYPE_ID(v->type)) {
    case SL_TYPE_INT32:
    case SL_TYPE_DATE32: c = sl__key_code_i32(((const int32_t *)v->data)[i]); break;
    case SL_TYPE_INT64:
    case SL_TYPE_TIMESTAMP:
    case SL_TYPE_DECIMAL: c = sl__key_code_i64(((const int64_t *)v->data)[i]); break;
    case SL_TYPE_UINT32: c = ((const uint32_t *)v->data)[i]; break;
    case SL_TYPE_UINT64: c = ((const uint64_t *)v->data)[i]; break;
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
    const struct sl__rowsview *v = &g->m.views[d->key.col];
    int r = 0;
    while (r + 1 < g->k && g->run_hi[r] <= lo)
        r++;
    for (int64_t i = lo; i < hi; i++) {
        while (g->run_hi[r] <= i)
            r++;
        bool valid = sl__rowsview_valid(v, i);
        g->codes[i] = valid ? code_at(v, d->key.desc, i) : 0;
        if (i == g->run_lo[r])
            continue;
        bool pvalid = sl__rowsview_valid(v, i - 1), bad;
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
    if (g->m.stage == M_VIEW)
        return sl__rows_view(t, &g->m.rows, 0, g->m.rows.n, (int)k, &g->m.views[k]);
    int64_t lo, hi;
    sl__mat_chunk(&g->m, k, &lo, &hi);
    switch (g->m.stage) {
    case M_CODES:
        codes_chunk(g, d, lo, hi);
        return SL_OK;
    case M_MERGE: {
        /* Output ranks among the non-null rows. */
        int64_t base = d->key.nulls_first ? g->n_nulls : 0, m = g->m.n - g->n_nulls;
        int64_t a = lo - base, b = hi - base;
        a = a < 0 ? 0 : a > m ? m : a;
        b = b < 0 ? 0 : b > m ? m : b;
        return b > a ? merge_chunk(t, g, a, b, g->perm + base + a) : SL_OK;
    }
    case M_GATHER:
        for (int c = 0; c < g->m.n_cols; c++) {
            uint8_t *ov = g->m.out->cols[c].validity ? g->m.out->cols[c].validity->ptr : NULL;
            g->m.nulls[k * g->m.n_cols + c] =
                sl__gather_rows(&g->m.views[c], g->perm, lo, hi, sl__col_values(g->m.out, c), ov);
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
    return sl__mat_spawn(t, &g->m, &merge_work_phase, &merge_step_phase, stage, n);
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
    const struct sl__rowsview *v = &g->m.views[d->key.col];
    g->perm = sl_task_alloc(t, (size_t)g->m.n * sizeof *g->perm + 8);
    g->runs = sl_task_alloc(t, (size_t)g->k * sizeof *g->runs);
    if (!g->perm || !g->runs)
        return SL_ENOMEM;
    int64_t at_null = d->key.nulls_first ? 0 : -1;
    g->n_nulls = 0;
    for (int r = 0; r < g->k; r++) {
        int64_t lo = g->run_lo[r], hi = g->run_hi[r], nn = 0;
        if (v->validity) {
            for (int64_t i = lo; i < hi; i++)
                nn += !sl__rowsview_valid(v, i);
        }
        g->runs[r] = (struct sl__merge_run){g->codes, d->key.nulls_first ? lo + nn : lo,
                                            d->key.nulls_first ? hi : hi - nn, 0};
        g->runs[r].base = g->runs[r].lo;
        g->n_nulls += nn;
    }
    /* Null rows, in run order, at the start or the end of the output. */
    if (at_null < 0)
        at_null = g->m.n - g->n_nulls;
    for (int r = 0; r < g->k && g->n_nulls; r++) {
        int64_t lo = g->run_lo[r], hi = g->run_hi[r];
        int64_t from = d->key.nulls_first ? lo : g->runs[r].hi;
        int64_t to = d->key.nulls_first ? g->runs[r].lo : hi;
        for (int64_t i = from; i < to; i++)
            g->perm[at_null++] = (uint64_t)i;
    }
    return spawn(t, g, M_MERGE, g->m.n_chunks);
}

static int merge_step(sl_task_t *t)
{
    struct merge_global *g = sl_task_arg(t);
    const struct merge_data *d = sl_op_data(sl_task_op(t));
    if (sl_task_cancelled(t))
        return SL_ECANCELED;
    switch (g->m.stage) {
    case M_VIEW:
        g->codes = sl_task_alloc(t, (size_t)g->m.n * sizeof *g->codes + 8);
        g->m.nulls = sl_task_alloc(t, (size_t)(g->m.n_chunks * g->m.n_cols) * 8 + 8);
        if (!g->codes || !g->m.nulls)
            return SL_ENOMEM;
        return spawn(t, g, M_CODES, g->m.n_chunks);
    case M_CODES:
        return after_codes(t, g, d);
    case M_MERGE:
        g->m.out = sl__batch_new(sl_op_output_schema(sl_task_op(t)), g->m.n);
        if (!g->m.out || sl__batch_alloc_columns(g->m.out) != SL_OK)
            return sl_task_fail(t, SL_ENOMEM, "out of memory for %lld rows", (long long)g->m.n);
        for (int c = 0; c < g->m.n_cols; c++) {
            if (g->m.views[c].validity && !sl_batch_column_validity(g->m.out, c))
                return sl_task_fail(t, SL_ENOMEM, "out of memory");
        }
        return spawn(t, g, M_GATHER, g->m.n_chunks);
    case M_GATHER:
        return sl__mat_finish(&g->m, M_DONE);
    default:
        return SL_OK;
    }
}

int sl__merge_finalize_cpu(sl_task_t *t)
{
    struct merge_global *g = sl_task_gstate(t);
    const struct merge_data *d = sl_op_data(sl_task_op(t));
    atomic_store(&g->bad_row, -1);
    /* Batches a GPU sink kept come to the host when the GPU could not finalize. */
    int rc = sl__mat_begin(t, &g->m, d->n_cols);
    if (rc <= 0)
        return rc;
    /* Runs: consecutive items with the same port (or each item). */
    int64_t k = 0;
    for (int64_t i = 0; i < g->m.rows.n; i++)
        k += d->by_batch || i == 0 || g->m.rows.items[i].port != g->m.rows.items[i - 1].port;
    g->run_lo = sl_task_alloc(t, (size_t)k * 2 * sizeof *g->run_lo);
    if (!g->run_lo)
        return SL_ENOMEM;
    g->run_hi = g->run_lo + k;
    g->k = 0;
    int64_t at = 0;
    for (int64_t i = 0; i < g->m.rows.n; i++) {
        if (d->by_batch || i == 0 || g->m.rows.items[i].port != g->m.rows.items[i - 1].port) {
            g->run_lo[g->k] = at;
            g->k++;
        }
        at += g->m.rows.items[i].batch->n_rows;
        g->run_hi[g->k - 1] = at;
    }
    return spawn(t, g, M_VIEW, g->m.n_cols);
}

SL__MAT_CPU_PHASE(merge_work_phase, merge_work);
SL__MAT_CPU_PHASE(merge_step_phase, merge_step);

/* The CPU-only definition; CUDA builds register sl__merge_cuda_def (merge_cuda.c). */
SL__MAT_CPU_DEF(sl__merge_def, SL__MERGE_DEF_FIELDS, sl__merge_finalize_cpu, sl__mat_emit_morsel);
