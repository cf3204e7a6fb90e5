/* sort: sorts its input by one or more key columns (option by="a DESC NULLS FIRST, b"),
 * stably: rows with equal keys keep their input order (source task order, then
 * emission order within a task). Payload columns are carried along.
 *
 * Sink: each worker keeps references to the batches it receives. Finalize sorts on all
 * cores with spawned tasks, as a small state machine advanced by a `then` phase:
 *   VIEW     one task per column: a contiguous view of the column (zero-copy if the
 *            input batches are consecutive slices of one buffer, else a copy);
 *   BUILD    per chunk: items (key code, row index) for the current key step, and the
 *            histograms of all digits (digits with one bucket are skipped);
 *   HIST     per chunk: histogram of the current digit (not needed right after BUILD);
 *   SCATTER  per chunk: stable write-combining scatter by the digit;
 *   GATHER   per chunk: output columns gathered by the final permutation.
 * Keys are processed LSD over columns: the last key first, each a stable radix sort of
 * its codes; a key column with nulls adds a one-digit step on its null flag.
 *
 * Source: task i of ceil(n / morsel) emits rows [i * morsel, ...) of the sorted result
 * as a zero-copy slice. Row order across batches is the order of source task indices;
 * a consumer that needs the global order must order batches by task index
 * (sl_task_index in its sink).
 *
 * date32, timestamp and decimal(p <= 18) columns are sorted and carried as their
 * integers. Columns of other types (keys or payload: strings in byte order, DICT by its
 * strings, wide decimals, bools, small and unsigned ints) are sorted in one finalize
 * task by comparisons instead (sort_any.c), stably too.
 *
 * NaNs sort after +inf ascending (before -inf descending); -0.0 sorts before +0.0 in the
 * radix sort (they compare equal in sort_any.c, as in SQL).
 * Nulls: NULLS LAST by default for ASC, NULLS FIRST for DESC (nulls compare largest). */
#include "sort_op.h"

const struct sl_option_def sl__sort_options[1] = {
    {"by", SL_OPT_STRING, NULL, "keys: \"a DESC NULLS FIRST, b\" (ASC default)"},
};

static void sort_free(void *p)
{
    sl__free(p, sizeof(struct sort_data));
}

int sl__sort_bind(sl_bind_t *b)
{
    const char *by;
    int rc = sl_bind_option_str(b, "by", &by);
    if (rc < 0)
        return rc;
    const sl_schema_t *in = sl_bind_input_schema(b, 0);
    struct sort_data d = {.n_cols = sl_schema_num_fields(in)};
    if ((rc = sl__sort_spec_parse(b, in, by, &d.spec)) < 0)
        return rc;
    if ((rc = sl__mat_bind_columns(b)) < 0)
        return rc;
    struct sort_data *p = sl__malloc(sizeof *p);
    if (!p)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    *p = d;
    sl_bind_set_data(b, p, sort_free);
    sl_bind_set_rows(b, sl_bind_input_rows(b, 0));
    sl__bind_mg_judge(b, sl__sort_mg_judge);
    return SL_OK;
}

void sl__sort_fini_global(const sl_op_t *op, void *gs)
{
    struct sort_global *g = gs;
    sl__mat_fini(&g->m);
    if (g->ooc_free)
        g->ooc_free(g->ooc_state);
}

/* ---------------- the parallel work of each stage ---------------- */

static uint64_t code_of(const struct sl__rowsview *v, const struct sort_step *s, int64_t row)
{
    bool valid = sl__rowsview_valid(v, row);
    if (s->null_pass)
        return valid ? (uint64_t)s->nulls_first : (uint64_t)!s->nulls_first;
    if (!valid)
        return 0;
    uint64_t c;
    switch (SL_TYPE_ID(v->type)) {
    case SL_TYPE_INT32:
    case SL_TYPE_DATE32: c = sl__key_code_i32(((const int32_t *)v->data)[row]); break;
    case SL_TYPE_INT64:
    case SL_TYPE_TIMESTAMP:
    case SL_TYPE_DECIMAL: /* precision <= 18 (sl__sort_radix_types) */
        c = sl__key_code_i64(((const int64_t *)v->data)[row]);
        break;
    case SL_TYPE_FLOAT32: c = sl__key_code_f32(((const float *)v->data)[row]); break;
    default: c = sl__key_code_f64(((const double *)v->data)[row]); break;
    }
    if (s->desc)
        c = sl_type_width(v->type) == 4 ? (uint32_t)~c : ~c;
    return c;
}

/* Fast paths of BUILD for the common first step: no nulls, an integer key. */
static bool build_fast(struct sort_global *g, const struct sort_step *s, int64_t lo, int64_t hi)
{
    const struct sl__rowsview *v = &g->m.views[s->col];
    if (s->null_pass || v->validity || g->step != 0)
        return false;
    if (!g->wide && v->type == SL_TYPE_INT32) {
        const int32_t *x = v->data;
        uint64_t *it = g->items;
        uint32_t flip = s->desc ? 0x7fffffffu : 0x80000000u;
        if (g->carry_col >= 0) {
            const uint32_t *p = g->m.views[g->carry_col].data;
            for (int64_t i = lo; i < hi; i++)
                it[i] = (uint64_t)((uint32_t)x[i] ^ flip) << 32 | p[i];
        } else {
            for (int64_t i = lo; i < hi; i++)
                it[i] = (uint64_t)((uint32_t)x[i] ^ flip) << 32 | (uint64_t)i;
        }
        return true;
    }
    if (g->wide && v->type == SL_TYPE_INT64) {
        const int64_t *x = v->data;
        struct sl__kv64 *it = g->items;
        uint64_t flip = s->desc ? 0x7fffffffffffffffull : 0x8000000000000000ull;
        if (g->carry_col >= 0 && sl_type_width(g->m.views[g->carry_col].type) == 8) {
            const uint64_t *p = g->m.views[g->carry_col].data;
            for (int64_t i = lo; i < hi; i++)
                it[i] = (struct sl__kv64){(uint64_t)x[i] ^ flip, p[i]};
        } else if (g->carry_col >= 0) {
            const uint32_t *p = g->m.views[g->carry_col].data;
            for (int64_t i = lo; i < hi; i++)
                it[i] = (struct sl__kv64){(uint64_t)x[i] ^ flip, p[i]};
        } else {
            for (int64_t i = lo; i < hi; i++)
                it[i] = (struct sl__kv64){(uint64_t)x[i] ^ flip, (uint64_t)i};
        }
        return true;
    }
    return false;
}

static void do_build(struct sort_global *g, int64_t lo, int64_t hi, int64_t *hall)
{
    const struct sort_step *s = &g->steps[g->step];
    const struct sl__rowsview *v = &g->m.views[s->col];
    if (!build_fast(g, s, lo, hi)) {
        if (g->wide) {
            struct sl__kv64 *it = g->items;
            for (int64_t i = lo; i < hi; i++) {
                uint64_t row = g->step ? it[i].idx : (uint64_t)i;
                it[i] = (struct sl__kv64){code_of(v, s, (int64_t)row), row};
            }
        } else {
            uint64_t *it = g->items;
            for (int64_t i = lo; i < hi; i++) {
                uint64_t row = g->step ? (it[i] & 0xffffffffu) : (uint64_t)i;
                it[i] = code_of(v, s, (int64_t)row) << 32 | row;
            }
        }
    }
    if (g->wide)
        sl__rsort_hist_all_k64(g->items, lo, hi, hall);
    else
        sl__rsort_hist_all_k32(g->items, lo, hi, hall);
}

static int shift_of(const struct sort_global *g)
{
    return (g->wide ? 0 : 32) + SL__RS_BITS * g->digit;
}

/* Integer key values from the final codes (the inverse of the code map), or the carried
 * payload from the items' low part. */
static void decode(struct sort_global *g, int c, int64_t lo, int64_t hi, void *out)
{
    bool desc = g->steps[g->n_steps - 1].desc, w4 = sl_type_width(g->m.views[c].type) == 4;
    if (c == g->carry_col) {
        if (!g->wide) {
            const uint64_t *it = g->items;
            for (int64_t i = lo; i < hi; i++)
                ((uint32_t *)out)[i] = (uint32_t)it[i];
        } else if (w4) {
            const struct sl__kv64 *it = g->items;
            for (int64_t i = lo; i < hi; i++)
                ((uint32_t *)out)[i] = (uint32_t)it[i].idx;
        } else {
            const struct sl__kv64 *it = g->items;
            for (int64_t i = lo; i < hi; i++)
                ((uint64_t *)out)[i] = it[i].idx;
        }
        return;
    }
    uint64_t flip = w4 ? (desc ? 0x7fffffffu : 0x80000000u)
                       : (desc ? 0x7fffffffffffffffull : 0x8000000000000000ull);
    if (!g->wide) {
        const uint64_t *it = g->items;
        for (int64_t i = lo; i < hi; i++)
            ((uint32_t *)out)[i] = (uint32_t)(it[i] >> 32) ^ (uint32_t)flip;
    } else if (w4) {
        const struct sl__kv64 *it = g->items;
        for (int64_t i = lo; i < hi; i++)
            ((uint32_t *)out)[i] = (uint32_t)it[i].key ^ (uint32_t)flip;
    } else {
        const struct sl__kv64 *it = g->items;
        for (int64_t i = lo; i < hi; i++)
            ((uint64_t *)out)[i] = it[i].key ^ flip;
    }
}

static int do_gather(sl_task_t *t, struct sort_global *g, int64_t k, int64_t lo, int64_t hi)
{
    for (int c = 0; c < g->m.n_cols; c++) {
        if (c == g->decode_col || c == g->carry_col) {
            decode(g, c, lo, hi, sl__col_values(g->m.out, c));
            g->m.nulls[k * g->m.n_cols + c] = 0;
            continue;
        }
        void *out = sl__col_values(g->m.out, c);
        uint8_t *valid = g->m.out->cols[c].validity ? g->m.out->cols[c].validity->ptr : NULL;
        g->m.nulls[k * g->m.n_cols + c] =
            g->wide ? sl__gather_k64(&g->m.views[c], g->items, lo, hi, out, valid)
                    : sl__gather_k32(&g->m.views[c], g->items, lo, hi, out, valid);
    }
    (void)t;
    return SL_OK;
}

static int sort_work(sl_task_t *t)
{
    struct sort_global *g = sl_task_arg(t);
    int64_t k = sl_task_index(t);
    if (g->m.stage == S_VIEW)
        return sl__rows_view(t, &g->m.rows, 0, g->m.rows.n, (int)k, &g->m.views[k]);
    int64_t lo, hi;
    sl__mat_chunk(&g->m, k, &lo, &hi);
    int64_t *h = g->hist + k * SL__RS_BUCKETS;
    switch (g->m.stage) {
    case S_BUILD:
        memset(g->hist_all + k * g->n_digits * SL__RS_BUCKETS, 0,
               (size_t)g->n_digits * SL__RS_BUCKETS * sizeof(int64_t));
        do_build(g, lo, hi, g->hist_all + k * g->n_digits * SL__RS_BUCKETS);
        return SL_OK;
    case S_HIST:
        memset(h, 0, SL__RS_BUCKETS * sizeof *h);
        if (g->wide)
            sl__rsort_hist_k64(g->items, lo, hi, shift_of(g), h);
        else
            sl__rsort_hist_k32(g->items, lo, hi, shift_of(g), h);
        return SL_OK;
    case S_SCATTER:
        if (g->wide)
            sl__rsort_scatter_k64(g->items, g->tmp, lo, hi, shift_of(g), h, g->stream);
        else
            sl__rsort_scatter_k32(g->items, g->tmp, lo, hi, shift_of(g), h, g->stream);
        return SL_OK;
    case S_GATHER:
        return do_gather(t, g, k, lo, hi);
    default:
        return SL_OK;
    }
}

/* ---------------- the state machine (runs between the parallel stages) ------------ */

static const struct sl_phase sort_work_phase, sort_step_phase;

static int spawn(sl_task_t *t, struct sort_global *g, int stage, int64_t n)
{
    return sl__mat_spawn(t, &g->m, &sort_work_phase, &sort_step_phase, stage, n);
}

/* Finds the next digit of the current step whose histogram has more than one bucket,
 * starting at g->digit; returns 0 if none is left. */
static int next_digit(struct sort_global *g)
{
    for (; g->digit < g->n_digits; g->digit++) {
        /* The digit is trivial if one bucket holds every row. */
        bool trivial = false;
        for (int b = 0; b < SL__RS_BUCKETS && !trivial; b++) {
            int64_t tot = 0;
            for (int64_t k = 0; k < g->m.n_chunks; k++)
                tot += g->hist_all[(k * g->n_digits + g->digit) * SL__RS_BUCKETS + b];
            trivial = tot == g->m.n;
        }
        if (!trivial)
            return 1;
    }
    return 0;
}

/* Turns per-chunk counts in g->hist into each chunk's first output position per bucket:
 * pos[k][b] = rows in buckets < b (all chunks) + rows of bucket b in chunks < k. */
static void positions(struct sort_global *g)
{
    int64_t sum = 0;
    for (int b = 0; b < SL__RS_BUCKETS; b++) {
        for (int64_t k = 0; k < g->m.n_chunks; k++) {
            int64_t c = g->hist[k * SL__RS_BUCKETS + b];
            g->hist[k * SL__RS_BUCKETS + b] = sum;
            sum += c;
        }
    }
}

static int start_gather(sl_task_t *t, struct sort_global *g)
{
    g->m.out = sl__batch_new(sl_op_output_schema(sl_task_op(t)), g->m.n);
    if (!g->m.out || sl__batch_alloc_columns(g->m.out) != SL_OK)
        return sl_task_fail(t, SL_ENOMEM, "out of memory for %lld sorted rows", (long long)g->m.n);
    for (int c = 0; c < g->m.n_cols; c++) {
        if (g->m.views[c].validity && !sl_batch_column_validity(g->m.out, c))
            return sl_task_fail(t, SL_ENOMEM, "out of memory");
    }
    return spawn(t, g, S_GATHER, g->m.n_chunks);
}

/* The most significant key, if it is an integer column without nulls, comes back
 * from its codes instead of a gather. With one such key and one payload column without
 * nulls that fits the items' index part, the payload rides in the items ("sorting the
 * rows"): no permutation gather at all. */
static void plan_decode(struct sort_global *g)
{
    g->decode_col = g->carry_col = -1;
    const struct sort_step *s = &g->steps[g->n_steps - 1];
    const struct sl__rowsview *v = &g->m.views[s->col];
    if (s->null_pass || v->validity || (v->type != SL_TYPE_INT32 && v->type != SL_TYPE_INT64))
        return;
    g->decode_col = s->col;
    if (g->n_steps != 1 || g->m.n_cols != 2)
        return;
    int other = 1 - s->col;
    const struct sl__rowsview *p = &g->m.views[other];
    bool fits = sl_type_width(p->type) == 4 || g->wide;
    if (!p->validity && fits && (v->type == SL_TYPE_INT32 ? !g->wide : true))
        g->carry_col = other;
}

static int sort_step(sl_task_t *t)
{
    struct sort_global *g = sl_task_arg(t);
    switch (g->m.stage) {
    case S_VIEW: {
        size_t isz = g->wide ? sizeof(struct sl__kv64) : sizeof(uint64_t);
        g->items = sl_task_alloc(t, (size_t)g->m.n * isz);
        g->tmp = sl_task_alloc(t, (size_t)g->m.n * isz);
        g->hist_all = sl_task_alloc(t, (size_t)(g->m.n_chunks * g->n_digits * SL__RS_BUCKETS) * 8);
        g->hist = sl_task_alloc(t, (size_t)(g->m.n_chunks * SL__RS_BUCKETS) * 8);
        g->m.nulls = sl_task_alloc(t, (size_t)(g->m.n_chunks * g->m.n_cols) * 8);
        if (!g->items || !g->tmp || !g->hist_all || !g->hist || !g->m.nulls)
            return SL_ENOMEM;
        g->stream = sl__stream_stores((int64_t)((size_t)g->m.n * isz));
        g->step = 0;
        plan_decode(g);
        return spawn(t, g, S_BUILD, g->m.n_chunks);
    }
    case S_BUILD:
        g->digit = 0;
        break;
    case S_HIST:
        positions(g);
        return spawn(t, g, S_SCATTER, g->m.n_chunks);
    case S_SCATTER: {
        void *x = g->items;
        g->items = g->tmp;
        g->tmp = x;
        g->digit++;
        break;
    }
    case S_GATHER:
        return sl__mat_finish(&g->m, S_DONE);
    default:
        return SL_OK;
    }
    /* After BUILD or SCATTER: the next non-trivial digit of this step, or the next step. */
    if (sl_task_cancelled(t))
        return SL_ECANCELED;
    if (next_digit(g)) {
        if (g->m.stage == S_BUILD) { /* BUILD's histograms are this digit's counts */
            for (int64_t k = 0; k < g->m.n_chunks; k++)
                memcpy(g->hist + k * SL__RS_BUCKETS,
                       g->hist_all + (k * g->n_digits + g->digit) * SL__RS_BUCKETS,
                       SL__RS_BUCKETS * sizeof(int64_t));
            positions(g);
            return spawn(t, g, S_SCATTER, g->m.n_chunks);
        }
        return spawn(t, g, S_HIST, g->m.n_chunks);
    }
    if (++g->step < g->n_steps)
        return spawn(t, g, S_BUILD, g->m.n_chunks);
    return start_gather(t, g);
}

/* Columns beyond the radix sort's types: one task sorts by comparisons (sort_any.c). */
static int sort_any_finalize(sl_task_t *t, struct sort_global *g, const struct sort_data *d)
{
    sl_batch_t **bs = sl_task_alloc(t, (size_t)g->m.rows.n * sizeof *bs);
    if (!bs)
        return SL_ENOMEM;
    for (int64_t i = 0; i < g->m.rows.n; i++)
        bs[i] = g->m.rows.items[i].batch;
    int rc = sl__sort_any(bs, g->m.rows.n, &d->spec, &g->m.out);
    sl_task_free(t, bs);
    if (rc < 0)
        return sl_task_fail(t, rc, "sort: %s", sl_strerror(rc));
    return SL_OK;
}

int sl__sort_finalize_cpu(sl_task_t *t)
{
    struct sort_global *g = sl_task_gstate(t);
    const struct sort_data *d = sl_op_data(sl_task_op(t));
    /* Batches a GPU sink kept come to the host when the GPU could not finalize. */
    int rc = sl__mat_begin(t, &g->m, d->n_cols);
    if (rc <= 0)
        return rc;
    if (!sl__sort_radix_types(sl_op_output_schema(sl_task_op(t))))
        return sort_any_finalize(t, g, d);
    /* Steps, least significant first: per key (last key first) its codes, then, if the
     * column may hold nulls, its null flags. Nulls are known after VIEW, so a null step
     * of a column without nulls is a single-bucket digit and is skipped for free. */
    g->n_steps = 0;
    g->wide = g->m.n >= ((int64_t)1 << 32);
    for (int k = d->spec.n_keys - 1; k >= 0; k--) {
        const struct sl__sort_key *key = &d->spec.keys[k];
        enum sl_type type = g->m.rows.items[0].batch->cols[key->col].type;
        g->wide |= sl_type_width(type) == 8;
        struct sort_step s = {key->col, 0, key->desc, key->nulls_first};
        g->steps[g->n_steps++] = s;
        bool has_validity = false;
        for (int64_t i = 0; i < g->m.rows.n && !has_validity; i++)
            has_validity = g->m.rows.items[i].batch->cols[key->col].validity != NULL;
        if (has_validity) {
            s.null_pass = 1;
            g->steps[g->n_steps++] = s;
        }
    }
    g->n_digits = g->wide ? SL__RS_DIGITS_K64 : SL__RS_DIGITS_K32;
    return spawn(t, g, S_VIEW, g->m.n_cols);
}

SL__MAT_CPU_PHASE(sort_work_phase, sort_work);
SL__MAT_CPU_PHASE(sort_step_phase, sort_step);

/* The CPU-only definition; CUDA builds register sl__sort_cuda_def (sort_cuda.c). */
SL__MAT_CPU_DEF(sl__sort_def, SL__SORT_DEF_FIELDS, sl__sort_finalize_cpu, sl__mat_emit_morsel);
