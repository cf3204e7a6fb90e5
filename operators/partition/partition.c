/* partition: radix partitioning of its input by one key column (int32, int64, or date32,
 * timestamp, decimal(p <= 18) as their integers), on all cores (options key=col, bits=B
 * or fanout=F, passes=0|1|2, hash=false). Columns must be 4 or 8 bytes wide (refused at
 * bind otherwise: sl__mat_bind_word_columns).
 *
 * Output: the input columns plus an int32 column "partition". Source task p (of fanout)
 * emits partition p as one batch (nothing if it is empty), every row of which has
 * partition = p; rows keep their input order within a partition. Null keys go to
 * partition 0 (their key stays null). Fanout = 2^bits; bits defaults to the bits one
 * pass can use well (sl__part_bits_per_pass, from L1's size), and passes=0 picks one
 * pass if bits fit that, else two.
 *
 * Finalize runs a state machine over spawned tasks (see sort.c for the pattern):
 *   VIEW     one task per column: a contiguous view of the input;
 *   HIST     per chunk: (nulls replaced by 0 in a copy of the key) pass-1 partition ids
 *            and their histogram;
 *   SCATTER  per chunk: every column (and a row-id column when some column has nulls)
 *            to its partition, write-combined;
 *   PASS2    (two passes) one task per pass-1 partition: its sub-partitioning;
 *   FINISH   per chunk: the partition column, and validity gathered by row id. */
#include "part_op.h"

const struct sl_option_def sl__part_options[SL__PART_N_OPTIONS] = {
    {"key", SL_OPT_STRING, NULL, "key column: int32, int64, date32, timestamp, decimal(p<=18)"},
    {"bits", SL_OPT_INT, "0", "log2 of the fanout (0 = from the cache size)"},
    {"fanout", SL_OPT_INT, "0", "number of partitions, a power of two (instead of bits)"},
    {"passes", SL_OPT_INT, "0", "1 or 2 (0 = 1 if the fanout fits one pass, else 2)"},
    {"hash", SL_OPT_BOOL, "false", "partition by a multiplicative hash of the key"},
};

static void part_free(void *p)
{
    sl__free(p, sizeof(struct part_data));
}

int sl__part_bind(sl_bind_t *b)
{
    const char *key;
    int64_t bits, fanout, passes;
    int hash, rc;
    if ((rc = sl_bind_option_str(b, "key", &key)) < 0 ||
        (rc = sl_bind_option_int(b, "bits", &bits)) < 0 ||
        (rc = sl_bind_option_int(b, "fanout", &fanout)) < 0 ||
        (rc = sl_bind_option_int(b, "passes", &passes)) < 0 ||
        (rc = sl_bind_option_bool(b, "hash", &hash)) < 0)
        return rc;
    const sl_schema_t *in = sl_bind_input_schema(b, 0);
    struct part_data d = {.key = sl_schema_find(in, key), .n_cols = sl_schema_num_fields(in),
                          .hash = hash};
    if (d.key < 0)
        return sl_bind_fail(b, SL_ENOTFOUND, "key: no column '%s' in its input", key);
    if (d.n_cols > 64)
        return sl_bind_fail(b, SL_EUNSUPPORTED, "more than 64 columns");
    enum sl_type kt;
    sl_schema_field(in, d.key, NULL, &kt);
    if (!sl__type_signed_word(kt))
        return sl_bind_fail(b, SL_ETYPE, "key: column '%s' is %s; int32, int64, date32, "
                            "timestamp or decimal(p <= 18) needed", key, sl_type_name(kt));
    if (fanout) {
        if (fanout < 1 || (fanout & (fanout - 1)))
            return sl_bind_fail(b, SL_EINVAL, "fanout: %lld is not a power of two",
                                (long long)fanout);
        bits = __builtin_ctzll((unsigned long long)fanout);
    }
    if (!fanout && !bits)
        bits = sl__part_bits_per_pass(1);
    if (bits < 0 || bits > SL__PART_MAX_BITS)
        return sl_bind_fail(b, SL_EINVAL, "bits: %lld is outside 0..%d", (long long)bits,
                            SL__PART_MAX_BITS);
    if (passes < 0 || passes > 2)
        return sl_bind_fail(b, SL_EINVAL, "passes: must be 0, 1 or 2, got %lld",
                            (long long)passes);
    if (!passes)
        passes = bits > sl__part_bits_per_pass(1) ? 2 : 1;
    if (bits > 2 * SL__PART_MAX_BITS_PER_PASS || (passes == 1 && bits > SL__PART_MAX_BITS_PER_PASS))
        return sl_bind_fail(b, SL_EINVAL, "bits: %lld is too many for %lld pass(es) (at most %d "
                            "per pass)", (long long)bits, (long long)passes,
                            SL__PART_MAX_BITS_PER_PASS);
    d.bits = (int)bits;
    d.passes = bits < 2 ? 1 : (int)passes;
    if ((rc = sl__mat_bind_word_columns(b, "partition")) < 0)
        return rc;
    if (sl_schema_find(in, "partition") >= 0)
        return sl_bind_fail(b, SL_EINVAL, "its input already has a column 'partition'");
    if ((rc = sl_bind_add_column(b, "partition", SL_TYPE_INT32)) < 0)
        return rc;
    struct part_data *p = sl__malloc(sizeof *p);
    if (!p)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    *p = d;
    sl_bind_set_data(b, p, part_free);
    sl_bind_set_rows(b, sl_bind_input_rows(b, 0));
    return SL_OK;
}

void sl__part_fini_global(const sl_op_t *op, void *gs)
{
    sl__mat_fini(&((struct part_global *)gs)->m);
}

/* ---------------- parallel work ---------------- */

static struct sl__part_fn pass1_fn(const struct part_global *g, const struct part_data *d)
{
    return (struct sl__part_fn){g->widths[0], d->hash, d->bits, g->bits2, g->bits1};
}

/* Copies the key of rows [lo, hi) with nulls replaced by 0 (which maps to partition 0)
 * and fills row ids, when needed. */
static void prepare(struct part_global *g, const struct part_data *d, int64_t lo, int64_t hi)
{
    const struct sl__rowsview *kv = &g->m.views[d->key];
    if (kv->validity) {
        if (g->widths[0] == 4) {
            const uint32_t *s = kv->data;
            uint32_t *k = (uint32_t *)g->src[0];
            for (int64_t i = lo; i < hi; i++)
                k[i] = sl__rowsview_valid(kv, i) ? s[i] : 0;
        } else {
            const uint64_t *s = kv->data;
            uint64_t *k = (uint64_t *)g->src[0];
            for (int64_t i = lo; i < hi; i++)
                k[i] = sl__rowsview_valid(kv, i) ? s[i] : 0;
        }
    }
    if (g->rowid) {
        for (int64_t i = lo; i < hi; i++)
            g->rowid[i] = (uint64_t)i;
    }
}

static int scatter_chunk(sl_task_t *t, struct part_global *g, const struct part_data *d,
                         int64_t k, int64_t lo, int64_t hi)
{
    uint16_t *pid = sl__malloc((size_t)(hi - lo) * sizeof *pid);
    void *scratch = sl__malloc(sl__part_scratch_bytes(g->f1));
    if (!pid || !scratch) {
        sl__free(pid, 0);
        sl__free(scratch, 0);
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    }
    struct sl__part_fn f = pass1_fn(g, d);
    sl__part_ids(&f, g->src[0], lo, hi, pid);
    int64_t *base = g->hist + k * g->f1, pos[1 << SL__PART_MAX_BITS_PER_PASS];
    for (int c = 0; c < g->n_scat; c++) {
        memcpy(pos, base, (size_t)g->f1 * sizeof *pos);
        sl__part_scatter(g->src[c], g->dst1[c], g->widths[c], pid, lo, hi, pos, g->f1, scratch,
                         g->stream);
    }
    sl__free(pid, 0);
    sl__free(scratch, 0);
    return SL_OK;
}

static int pass2_part(sl_task_t *t, struct part_global *g, const struct part_data *d, int64_t p)
{
    int64_t lo = g->off1[p], hi = g->off1[p + 1], f2 = (int64_t)1 << g->bits2;
    uint16_t *pid = sl__malloc((size_t)(hi - lo + 1) * sizeof *pid);
    void *scratch = sl__malloc(sl__part_scratch_bytes(f2));
    int64_t *pos = sl__malloc((size_t)(2 * f2 + 1) * sizeof *pos);
    int rc = SL_OK;
    if (!pid || !scratch || !pos) {
        rc = sl_task_fail(t, SL_ENOMEM, "out of memory");
    } else {
        /* Offsets into a private array: the last one is the next task's first. */
        struct sl__part_fn f = {g->widths[0], d->hash, d->bits, 0, g->bits2};
        int64_t *off = pos + f2;
        sl__part_pass(&f, g->n_scat, (const void *const *)g->dst1, g->widths, lo, hi, g->dst, off,
                      pid, pos, scratch, g->stream);
        memcpy(g->off + p * f2, off, (size_t)f2 * sizeof *off);
    }
    sl__free(pid, 0);
    sl__free(scratch, 0);
    sl__free(pos, 0);
    return rc;
}

/* The partition column and gathered validity of output rows [lo, hi). */
static void finish_chunk(struct part_global *g, int64_t k, int64_t lo, int64_t hi)
{
    int32_t *pc = sl__col_values(g->m.out, g->m.n_cols);
    int64_t lo_p = 0, hi_p = g->fanout;
    while (lo_p < hi_p) { /* first partition whose end is after lo */
        int64_t mid = (lo_p + hi_p) / 2;
        if (g->off[mid + 1] <= lo)
            lo_p = mid + 1;
        else
            hi_p = mid;
    }
    for (int64_t p = lo_p, i = lo; i < hi; p++) {
        int64_t end = g->off[p + 1] < hi ? g->off[p + 1] : hi;
        for (; i < end; i++)
            pc[i] = (int32_t)p;
    }
    for (int c = 0; c < g->m.n_cols; c++) {
        const struct sl__rowsview *v = &g->m.views[c];
        if (!v->validity)
            continue;
        uint8_t *ov = g->m.out->cols[c].validity->ptr;
        int64_t nulls = 0;
        for (int64_t i = lo; i < hi; i += 8) {
            unsigned byte = 0;
            for (int64_t j = 0; j < 8 && i + j < hi; j++) {
                bool ok = sl__rowsview_valid(v, (int64_t)g->rowid[i + j]);
                byte |= (unsigned)ok << j;
                nulls += !ok;
            }
            ov[i >> 3] = (uint8_t)byte;
        }
        g->m.nulls[k * g->m.n_cols + c] = nulls;
    }
}

static int part_work(sl_task_t *t)
{
    struct part_global *g = sl_task_arg(t);
    const struct part_data *d = sl_op_data(sl_task_op(t));
    int64_t k = sl_task_index(t);
    if (g->m.stage == P_VIEW)
        return sl__rows_view(t, &g->m.rows, 0, g->m.rows.n, (int)k, &g->m.views[k]);
    if (g->m.stage == P_PASS2)
        return pass2_part(t, g, d, k);
    int64_t lo, hi;
    sl__mat_chunk(&g->m, k, &lo, &hi);
    switch (g->m.stage) {
    case P_HIST: {
        prepare(g, d, lo, hi);
        struct sl__part_fn f = pass1_fn(g, d);
        int64_t *h = g->hist + k * g->f1;
        memset(h, 0, (size_t)g->f1 * sizeof *h);
        if (g->widths[0] == 4) {
            const uint32_t *key = g->src[0];
            for (int64_t i = lo; i < hi; i++)
                h[sl__part_radix(&f, key[i])]++;
        } else {
            const uint64_t *key = g->src[0];
            for (int64_t i = lo; i < hi; i++)
                h[sl__part_radix(&f, key[i])]++;
        }
        return SL_OK;
    }
    case P_SCATTER:
        return scatter_chunk(t, g, d, k, lo, hi);
    case P_FINISH:
        finish_chunk(g, k, lo, hi);
        return SL_OK;
    default:
        return SL_OK;
    }
}

/* ---------------- the state machine ---------------- */

static const struct sl_phase part_work_phase, part_step_phase;

static int spawn(sl_task_t *t, struct part_global *g, int stage, int64_t n)
{
    return sl__mat_spawn(t, &g->m, &part_work_phase, &part_step_phase, stage, n);
}

/* After VIEW: the output batch, scatter sources and targets. Column 0 of the scatter
 * is the key (so pass 2 finds it first), then the other columns, then row ids. */
static int setup(sl_task_t *t, struct part_global *g, const struct part_data *d)
{
    g->m.out = sl__batch_new(sl_op_output_schema(sl_task_op(t)), g->m.n);
    if (!g->m.out || sl__batch_alloc_columns(g->m.out) != SL_OK)
        return sl_task_fail(t, SL_ENOMEM, "out of memory for %lld rows", (long long)g->m.n);
    bool any_null = false;
    for (int c = 0; c < g->m.n_cols; c++) {
        if (g->m.views[c].validity) {
            any_null = true;
            if (!sl_batch_column_validity(g->m.out, c))
                return sl_task_fail(t, SL_ENOMEM, "out of memory");
        }
    }
    g->n_scat = g->m.n_cols + any_null;
    g->src = sl_task_alloc(t, (size_t)g->n_scat * sizeof *g->src);
    g->dst1 = sl_task_alloc(t, (size_t)g->n_scat * sizeof *g->dst1);
    g->dst = sl_task_alloc(t, (size_t)g->n_scat * sizeof *g->dst);
    if (!g->src || !g->dst1 || !g->dst)
        return SL_ENOMEM;
    int s = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int c = 0; c < g->m.n_cols; c++) {
            if ((pass == 0) != (c == d->key))
                continue;
            g->widths[s] = (int)sl_type_width(g->m.views[c].type);
            g->src[s] = g->m.views[c].data;
            g->dst[s] = sl__col_values(g->m.out, c);
            s++;
        }
    }
    if (g->m.views[d->key].validity) {
        g->src[0] = sl_task_alloc(t, (size_t)g->m.n * (size_t)g->widths[0]);
        if (!g->src[0])
            return SL_ENOMEM;
    }
    if (any_null) {
        g->rowid = sl_task_alloc(t, (size_t)g->m.n * 8);
        g->widths[s] = 8;
        g->src[s] = g->rowid;
        if (!g->rowid || !(g->dst[s] = sl_task_alloc(t, (size_t)g->m.n * 8)))
            return SL_ENOMEM;
    }
    for (s = 0; s < g->n_scat; s++) {
        g->dst1[s] = g->dst[s];
        if (g->bits2 && !(g->dst1[s] = sl_task_alloc(t, (size_t)g->m.n * (size_t)g->widths[s])))
            return SL_ENOMEM;
    }
    g->hist = sl_task_alloc(t, (size_t)(g->m.n_chunks * g->f1) * 8);
    g->off = sl_task_alloc(t, (size_t)(g->fanout + 1) * 8);
    g->off1 = sl_task_alloc(t, (size_t)(g->f1 + 1) * 8);
    g->m.nulls = sl_task_alloc(t, (size_t)(g->m.n_chunks * g->m.n_cols) * 8 + 8);
    if (!g->hist || !g->off || !g->off1 || !g->m.nulls)
        return SL_ENOMEM;
    memset(g->m.nulls, 0, (size_t)(g->m.n_chunks * g->m.n_cols) * 8);
    int64_t bytes = 0;
    for (s = 0; s < g->n_scat; s++)
        bytes += g->m.n * g->widths[s];
    g->stream = sl__stream_stores(bytes);
    return spawn(t, g, P_HIST, g->m.n_chunks);
}

/* Pass-1 counts per chunk -> each chunk's first position per partition (in place). */
static void positions(struct part_global *g)
{
    int64_t sum = 0;
    for (int64_t b = 0; b < g->f1; b++) {
        g->off1[b] = sum;
        for (int64_t k = 0; k < g->m.n_chunks; k++) {
            int64_t c = g->hist[k * g->f1 + b];
            g->hist[k * g->f1 + b] = sum;
            sum += c;
        }
    }
    g->off1[g->f1] = sum;
}

static int part_step(sl_task_t *t)
{
    struct part_global *g = sl_task_arg(t);
    const struct part_data *d = sl_op_data(sl_task_op(t));
    if (sl_task_cancelled(t))
        return SL_ECANCELED;
    switch (g->m.stage) {
    case P_VIEW:
        return setup(t, g, d);
    case P_HIST:
        positions(g);
        return spawn(t, g, P_SCATTER, g->m.n_chunks);
    case P_SCATTER:
        if (g->bits2)
            return spawn(t, g, P_PASS2, g->f1);
        if (g->n_scat > g->m.n_cols) /* the row ids' final place */
            g->rowid = g->dst[g->n_scat - 1];
        memcpy(g->off, g->off1, (size_t)(g->fanout + 1) * sizeof *g->off);
        return spawn(t, g, P_FINISH, g->m.n_chunks);
    case P_PASS2:
        g->off[g->fanout] = g->m.n;
        if (g->n_scat > g->m.n_cols) /* the row ids' final place */
            g->rowid = g->dst[g->n_scat - 1];
        return spawn(t, g, P_FINISH, g->m.n_chunks);
    case P_FINISH:
        return sl__mat_finish(&g->m, P_DONE);
    default:
        return SL_OK;
    }
}

int sl__part_finalize_cpu(sl_task_t *t)
{
    struct part_global *g = sl_task_gstate(t);
    const struct part_data *d = sl_op_data(sl_task_op(t));
    /* Batches a GPU sink kept come to the host when the GPU could not finalize. */
    int rc = sl__mat_begin(t, &g->m, d->n_cols);
    if (rc <= 0)
        return rc;
    g->bits2 = d->passes == 2 ? d->bits / 2 : 0;
    g->bits1 = d->bits - g->bits2;
    g->fanout = (int64_t)1 << d->bits;
    g->f1 = (int64_t)1 << g->bits1;
    return spawn(t, g, P_VIEW, g->m.n_cols);
}

int64_t sl__part_tasks(sl_task_t *t)
{
    struct part_global *g = sl_task_gstate(t);
    return g->m.out ? g->fanout : 0;
}

int sl__part_source(sl_task_t *t)
{
    struct part_global *g = sl_task_gstate(t);
    int64_t p = sl_task_index(t), lo = g->off[p], hi = g->off[p + 1];
    if (hi == lo)
        return SL_OK;
    return sl__emit_rows(t, g->m.out, lo, hi - lo);
}

SL__MAT_CPU_PHASE(part_work_phase, part_work);
SL__MAT_CPU_PHASE(part_step_phase, part_step);

/* The CPU-only definition; CUDA builds register sl__partition_cuda_def
 * (partition_cuda.c). */
SL__MAT_CPU_DEF(sl__partition_def, SL__PART_DEF_FIELDS, sl__part_finalize_cpu, sl__part_source);
