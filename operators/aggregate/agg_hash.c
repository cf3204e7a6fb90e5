/* aggregate: hash group-by with count(*), count, count(DISTINCT), sum, min, max and avg.
 *
 *   keys="k1,k2"   key columns of any type; none = a global aggregate (one row)
 *   aggs="count(*), sum(v), min(v), max(v), avg(v), count(v), count(DISTINCT v)"
 *
 * Output: the key columns, then one column per aggregate named fn_col ("count" for
 * count(*), "count_distinct_col" for count(DISTINCT col)): count -> int64; sum of
 * int8..int64, uint8..uint32 and bool -> int64, of uint64 -> decimal(38,0), of
 * decimal(p,s) -> decimal(38,s) (DuckDB's), of floats -> float64; avg of numbers and
 * decimals -> float64 (DuckDB's); min/max of any type keep it; count(DISTINCT) of any
 * type. sum/avg of strings, dates, timestamps (and avg of bool) are refused at bind.
 * SQL semantics: null keys form one group; aggregates skip null values; sum/min/max/avg
 * of a group without values are null. Sums are kept exactly in 128 bits and a total that
 * does not fit its type is SL_EOVERFLOW (never a wrap), whatever the order of the rows.
 * NaN is the largest float and equal to itself (min/max, keys; docs/TYPES.md).
 *
 * Keys of int32/int64, date32, timestamp and decimal(p <= 18) (DICT keys as codes of
 * one merged dictionary, agg_dict.c; utf8/large_utf8 keys as ids of one table of
 * distinct strings, agg_str.c) and values of those or floats take the hash table below
 * (on the GPU only int32/int64 and DICT keys and int32/int64/float32/float64 values);
 * any other type, and count(DISTINCT), the group-by of any type (agg_any.c, one
 * finalize task, CPU only).
 *
 * Execution. sink: each worker pre-aggregates into a local open-addressing table of at
 * most AGG_LOCAL_GROUPS groups (it stays in L2); when it fills, its groups are flushed
 * as records into AGG_PARTS radix partitions (top hash bits) and the table is reused.
 * With one integer key and only counts and sums, a vector without nulls takes one fused
 * pass (group, a row count shared by the counts, the first sum); once the table was
 * shrunk (fewer than 2 rows a group), such batches are written into the partitions as
 * rows (key and sums' values, agg_table.c sl__agg_table_raw) instead of going through
 * the table. combine: keeps each worker's table and partitions. finalize: if no worker
 * flushed and the groups are few, one table merges the local tables (one output task);
 * otherwise the remaining local groups are flushed too, consecutive partitions whose
 * records fit a morsel form runs, and one spawned task per run merges its partitions'
 * records and rows of every worker into one batch. source: one task per output table
 * or run.
 *
 * On a GPU (agg_cuda.c, CUDA builds): the sink aggregates device batches into a device
 * table (or radix partitions), combine keeps those, finalize writes the result on the GPU
 * and the source emits it from device memory. sl__agg_cost gives the scheduler both.
 * Co-processed (host and GPU workers both sank rows), the GPU finalize downloads the
 * GPU's groups, adds them to the host's as one more local table and finalizes on the
 * CPU. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../common/values.h"
#include "agg_int.h"

/* Few enough groups to merge in one task (cheaper than spawning partitions). */
#define AGG_SMALL_GROUPS (1 << 16)

const struct sl_option_def sl__agg_options[SL__AGG_N_OPTIONS] = {
    {"keys", SL_OPT_STRING, "", "comma-separated key columns of any type (none: one global row)"},
    {"aggs", SL_OPT_STRING, "count(*)",
     "comma-separated aggregates: count(*), count(c), count(DISTINCT c), sum(c), min(c), "
     "max(c), avg(c)"},
    {"where", SL_OPT_STRING, "",
     "predicate on the input: only rows where it is true are aggregated (a filter before "
     "the aggregate that reads the passing rows in place on the GPU)"},
};

static void plan_free(void *v)
{
    struct agg_plan *p = v;
    sl__expr_free(p->where);
    sl__xp_delete(p->where_xp);
    sl__free(p, sizeof(struct agg_plan));
}

/* Copies the next comma-separated item of *s (trimmed) into out; 0 at the end. */
static int next_item(const char **s, char *out, size_t cap)
{
    const char *p = *s;
    while (*p == ' ' || *p == ',')
        p++;
    if (!*p)
        return 0;
    const char *e = p;
    while (*e && *e != ',')
        e++;
    const char *end = e;
    while (end > p && end[-1] == ' ')
        end--;
    size_t len = (size_t)(end - p) < cap - 1 ? (size_t)(end - p) : cap - 1;
    memcpy(out, p, len);
    out[len] = 0;
    *s = e;
    return 1;
}

static int bind_keys(sl_bind_t *b, struct agg_plan *p, const char *keys)
{
    const sl_schema_t *in = sl_bind_input_schema(b, 0);
    char name[128];
    while (next_item(&keys, name, sizeof name)) {
        if (p->n_keys == AGG_MAX_KEYS)
            return sl_bind_fail(b, SL_EINVAL, "option keys: at most %d key columns", AGG_MAX_KEYS);
        int idx = sl_schema_find(in, name);
        if (idx < 0)
            return sl_bind_fail(b, SL_ENOTFOUND, "option keys: no column '%s' in its input", name);
        enum sl_type ty;
        sl_schema_field(in, idx, NULL, &ty);
        p->any |= !sl__agg_table_int_type(ty);
        /* int32/int64 bits on the GPU; DICT keys as codes (agg_cuda_dict.c) */
        p->gpu_types &= sl__agg_table_int_type(ty) || ty == SL_TYPE_DICT;
        p->key_cols[p->n_keys] = idx;
        p->key_types[p->n_keys++] = ty;
        int rc = sl_bind_add_column(b, name, ty);
        if (rc < 0)
            return rc;
    }
    return SL_OK;
}

/* s->out_type from s->fn and s->in_type (the header says which); SL_ETYPE where SQL
 * defines no such aggregate. */
static int agg_out_type(struct agg_spec *s)
{
    enum sl_type id = SL_TYPE_ID(s->in_type);
    bool num = id != SL_TYPE_DATE32 && id != SL_TYPE_TIMESTAMP && !sl_type_is_string(id);
    switch (s->fn) {
    case AGG_COUNT:
    case AGG_COUNT_DISTINCT: s->out_type = SL_TYPE_INT64; return SL_OK;
    case AGG_SUM:
        if (!num)
            return SL_ETYPE;
        if (id == SL_TYPE_FLOAT32 || id == SL_TYPE_FLOAT64)
            s->out_type = SL_TYPE_FLOAT64;
        else if (id == SL_TYPE_DECIMAL || id == SL_TYPE_UINT64)
            s->out_type = sl_type_decimal(SL_DECIMAL_MAX_PRECISION, sl_type_scale(s->in_type));
        else
            s->out_type = SL_TYPE_INT64;
        return SL_OK;
    case AGG_AVG:
        s->out_type = SL_TYPE_FLOAT64;
        return num && id != SL_TYPE_BOOL ? SL_OK : SL_ETYPE;
    default: s->out_type = s->in_type; return SL_OK;
    }
}

static int bind_one_agg(sl_bind_t *b, struct agg_plan *p, const char *item)
{
    static const char *const fns[] = {"count", "count", "sum", "min", "max", "avg"};
    const sl_schema_t *in = sl_bind_input_schema(b, 0);
    const char *lp = strchr(item, '('), *rp = strrchr(item, ')');
    if (!lp || !rp || rp < lp || rp[1])
        return sl_bind_fail(b, SL_EINVAL, "option aggs: '%s' is not fn(column)", item);
    char fn[16], col[128];
    size_t fl = (size_t)(lp - item), cl = (size_t)(rp - lp - 1);
    while (fl && item[fl - 1] == ' ')
        fl--;
    if (fl >= sizeof fn || cl >= sizeof col)
        return sl_bind_fail(b, SL_EINVAL, "option aggs: '%s' is too long", item);
    memcpy(fn, item, fl);
    fn[fl] = 0;
    memcpy(col, lp + 1, cl);
    col[cl] = 0;
    struct agg_spec *s = &p->aggs[p->n_aggs];
    s->col = -1;
    if (!strcmp(fn, "count") && !strcmp(col, "*")) {
        s->fn = AGG_COUNT_STAR;
        s->out_type = SL_TYPE_INT64;
        p->n_aggs++;
        return sl_bind_add_column(b, "count", SL_TYPE_INT64);
    }
    int f = 1;
    while (f < 6 && strcmp(fns[f], fn))
        f++;
    if (f == 6)
        return sl_bind_fail(b, SL_EINVAL, "option aggs: unknown aggregate '%s' (count, sum, "
                            "min, max, avg)", fn);
    s->fn = (enum agg_fn)f;
    const char *name = col;
    while (*name == ' ')
        name++;
    if (s->fn == AGG_COUNT && !strncasecmp(name, "distinct ", 9)) {
        s->fn = AGG_COUNT_DISTINCT;
        for (name += 9; *name == ' '; name++)
            ;
    }
    s->col = sl_schema_find(in, name);
    if (s->col < 0)
        return sl_bind_fail(b, SL_ENOTFOUND, "option aggs: no column '%s' in its input", name);
    sl_schema_field(in, s->col, NULL, &s->in_type);
    s->is_int = sl__agg_table_int_type(s->in_type);
    bool flt = s->in_type == SL_TYPE_FLOAT32 || s->in_type == SL_TYPE_FLOAT64;
    p->any |= !(s->is_int || flt) || s->fn == AGG_COUNT_DISTINCT;
    p->gpu_types &= flt || s->is_int;
    int rc = agg_out_type(s);
    if (rc < 0)
        return sl_bind_fail(b, SL_ETYPE, "option aggs: %s(%s): column '%s' is %s, which %s "
                            "does not take", fn, name, name, sl_type_name(s->in_type), fn);
    char out[160];
    snprintf(out, sizeof out, s->fn == AGG_COUNT_DISTINCT ? "%s_distinct_%s" : "%s_%s", fn, name);
    p->n_aggs++;
    return sl_bind_add_column(b, out, s->out_type);
}

int sl__agg_bind(sl_bind_t *b)
{
    const char *keys, *aggs, *where;
    int rc = sl_bind_option_str(b, "keys", &keys);
    if (rc == SL_OK)
        rc = sl_bind_option_str(b, "aggs", &aggs);
    if (rc == SL_OK)
        rc = sl_bind_option_str(b, "where", &where);
    if (rc < 0)
        return rc;
    struct agg_plan *p = sl__malloc(sizeof *p);
    if (!p)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    memset(p, 0, sizeof *p);
    p->gpu_types = true;
    sl_bind_set_data(b, p, plan_free);
    const sl_schema_t *in = sl_bind_input_schema(b, 0);
    if ((rc = sl__pred_bind_to(b, where, in, &p->where)) < 0)
        return rc;
    if (p->where)
        p->where_xp = sl__xp_new(p->where, in, p->where_why, sizeof p->where_why);
    if ((rc = bind_keys(b, p, keys)) < 0)
        return rc;
    p->any = sl__agg_keys_need_any(p); /* DICT and utf8 keys run on the table too */
    char item[160];
    while (next_item(&aggs, item, sizeof item)) {
        if (p->n_aggs == AGG_MAX_AGGS)
            return sl_bind_fail(b, SL_EINVAL, "option aggs: at most %d aggregates", AGG_MAX_AGGS);
        if ((rc = bind_one_agg(b, p, item)) < 0)
            return rc;
    }
    if (p->n_aggs == 0 && p->n_keys == 0)
        return sl_bind_fail(b, SL_EINVAL, "option aggs: no aggregate and no key");
    p->rec_bytes = 16 + 8 * (size_t)p->n_keys;
    p->raw_bytes = 8 * (size_t)p->n_keys;
    p->counts_sums = true;
    for (int a = 0; a < p->n_aggs; a++) {
        enum agg_fn f = p->aggs[a].fn;
        p->rec_bytes += 8 + sl__agg_rec_val_bytes(&p->aggs[a]);
        p->raw_bytes += f == AGG_SUM || f == AGG_AVG ? 8 : 0;
        p->counts_sums &= f == AGG_COUNT_STAR || f == AGG_COUNT || f == AGG_SUM || f == AGG_AVG;
    }
    if (p->n_keys == 0)
        sl_bind_set_rows(b, 1);
    return SL_OK;
}

int sl__agg_sink(sl_task_t *t)
{
    struct agg_local *ls = sl_task_lstate(t);
    return ls ? sl__agg_sink_batch(t, ls, sl_task_input(t)) : SL_ENOMEM;
}

int sl__agg_sink_batch(sl_task_t *t, struct agg_local *ls, sl_batch_t *in)
{
    const struct agg_plan *p = sl_op_data(sl_task_op(t));
    sl_batch_t *sel = NULL, *coded = NULL, *ids = NULL;
    if (p->where) { /* the passing rows only */
        int rc = sl__pred_apply(t, p->where, &ls->pred, in, &sel);
        if (rc < 0 || !sel)
            return rc;
        in = sel;
    }
    if (p->any) {
        int rc = sl__agg_any_sink(t, in);
        sl_batch_unref(sel);
        return rc;
    }
    if (!ls->ready) {
        if (sl__agg_table_init(t, p, &ls->tb, AGG_LOCAL_GROUPS) < 0 ||
            sl__agg_table_use_partials(t, p, &ls->tb) < 0) {
            sl_batch_unref(sel);
            return SL_ENOMEM;
        }
        ls->ready = true;
    }
    if (sl__agg_dict_keys(p)) {
        int rc = sl__agg_dict_input(t, p, sl_task_gstate(t), in, p->key_cols, &coded);
        if (rc < 0) {
            sl_batch_unref(sel);
            return rc;
        }
        in = coded;
    }
    if (sl__agg_str_keys(p)) {
        int rc = sl__agg_str_input(t, p, sl_task_gstate(t), ls, in, &ids);
        if (rc < 0) {
            sl_batch_unref(coded);
            sl_batch_unref(sel);
            return rc;
        }
        in = ids;
    }
    /* Once the table was shrunk (its groups took fewer than 2 rows each), rows of one
     * integer key go into the partitions as they are (16 bytes for count(*) and one sum,
     * against a 56-byte record a group that hardly pre-aggregates). */
    int rc = ls->raw_mode ? sl__agg_table_raw(t, p, &ls->tb, in, ls->raw) : 0;
    if (rc == 1)
        ls->flushed++;
    else if (rc == 0)
        rc = sl__agg_table_sink(t, p, &ls->tb, in, ls->parts, &ls->flushed);
    ls->raw_mode = p->counts_sums && p->n_keys == 1 && ls->tb.cap < ls->tb.cap_alloc;
    rc = rc < 0 ? rc : SL_OK;
    sl_batch_unref(coded);
    sl_batch_unref(ids);
    sl_batch_unref(sel);
    return rc;
}

int sl__agg_combine(sl_task_t *t)
{
    struct agg_global *gs = sl_task_gstate(t);
    struct agg_local *ls = sl_task_lstate(t);
    if (ls && ls->gpu) {
        /* A GPU worker's table: finalize merges or outputs it on the GPU. */
        if (gs->n_gpu_locals == AGG_MAX_GPU_LOCALS)
            return sl_task_fail(t, SL_EUNSUPPORTED, "aggregate: more than %d GPU states",
                                AGG_MAX_GPU_LOCALS);
        gs->gpu_locals[gs->n_gpu_locals++] = ls->gpu;
    }
    if (ls)
        sl__agg_any_combine(gs, ls);
    return ls ? sl__agg_keep_local(t, gs, ls) : SL_OK;
}

int sl__agg_keep_local(sl_task_t *t, struct agg_global *gs, struct agg_local *ls)
{
    if (!ls->ready)
        return SL_OK;
    struct agg_kept *k = sl_task_alloc(t, sizeof *k);
    if (!k)
        return SL_ENOMEM;
    k->flushed = ls->flushed;
    k->tb = ls->tb;
    memcpy(k->parts, ls->parts, sizeof k->parts);
    memcpy(k->raw, ls->raw, sizeof k->raw);
    k->next = gs->locals;
    gs->locals = k;
    gs->groups += ls->tb.n;
    gs->flushed += ls->flushed;
    return SL_OK;
}

/* Records (flushed groups and raw rows) of partition i of every worker. */
static int64_t part_records(const struct agg_global *gs, int i)
{
    int64_t n = 0;
    for (const struct agg_kept *k = gs->locals; k; k = k->next) {
        for (const struct agg_chunk *c = k->parts[i]; c; c = c->next)
            n += c->n;
        for (const struct agg_chunk *c = k->raw[i]; c; c = c->next)
            n += c->n;
    }
    return n;
}

/* Before the merges: consecutive partitions whose records (at least their groups)
 * together fit a morsel form a run, which one task merges into one batch: few groups
 * spread over AGG_PARTS partitions would otherwise leave as hundreds of tiny batches, each
 * costing every operator downstream a task. The run's groups go straight into its batch
 * (sized by the records): joining per-partition batches afterwards copied every group
 * once more, and those small batches' fresh pages faulted in on every query (at 2^24
 * groups page faults took about a fifth of the CPU time). */
static void plan_runs(sl_task_t *t, struct agg_global *gs)
{
    int64_t morsel = sl_task_morsel_rows(t), recs = 0;
    int start = 0;
    for (int i = 0; i < AGG_PARTS; i++) {
        int64_t n = gs->part_recs[i] = part_records(gs, i);
        if (i > start && recs + n > morsel) {
            gs->run_end[start] = (int16_t)i;
            start = i;
            recs = 0;
        }
        gs->run_end[i] = -1;
        recs += n;
    }
    gs->run_end[start] = AGG_PARTS;
}

/* Merges partition j of every worker into tb (emptied, room for the partition). */
static void merge_part(const struct agg_plan *p, struct agg_global *gs, struct agg_table *tb,
                       int j)
{
    sl__agg_table_reset(tb, gs->part_recs[j]);
    for (struct agg_kept *k = gs->locals; k; k = k->next) {
        sl__agg_table_merge_chunks(p, tb, k->parts[j]);
        sl__agg_table_merge_raw(p, tb, k->raw[j]);
    }
}

/* Spawned: merges the run of partitions starting at i (if one does) into part_out[i]:
 * partition after partition in the worker's scratch table, whose groups go into the
 * run's batch (for utf8 keys, whose strings an output batch takes from row 0 only, into
 * a batch each, then joined). */
static int agg_merge_run(sl_task_t *t)
{
    const struct agg_plan *p = sl_op_data(sl_task_op(t));
    struct agg_global *gs = sl_task_gstate(t);
    int i = (int)sl_task_index(t), end = gs->run_end[i];
    if (end < 0)
        return SL_OK;
    int64_t recs = 0, most = 0;
    for (int j = i; j < end; j++) {
        recs += gs->part_recs[j];
        most = gs->part_recs[j] > most ? gs->part_recs[j] : most;
    }
    if (recs == 0)
        return SL_OK;
    int w = sl_task_worker(t);
    if (w < 0 || w >= AGG_MAX_WORKERS)
        return sl_task_fail(t, SL_EINTERNAL, "worker %d out of range", w);
    struct agg_table *tb = gs->scratch[w];
    if (!tb || tb->cap_alloc < most) {
        /* Room for twice this partition, so that later ones rarely need more. */
        tb = sl__agg_alloc(t, sizeof *tb);
        if (!tb || sl__agg_table_init(t, p, tb, 2 * most) < 0)
            return SL_ENOMEM;
        gs->scratch[w] = tb;
    }
    bool direct = end - i > 1 && !sl__agg_str_keys(p);
    sl_batch_t *out = direct ? sl__agg_output_new(t, recs) : NULL, *bs[AGG_PARTS];
    int nb = 0, rc = direct && !out ? SL_ENOMEM : SL_OK;
    int64_t at = 0;
    for (int j = i; j < end && rc == SL_OK; j++) {
        if (!gs->part_recs[j])
            continue;
        merge_part(p, gs, tb, j);
        if (direct) {
            rc = sl__agg_table_output_at(t, p, tb, out, at);
            at += tb->n;
        } else if (!(bs[nb++] = sl__agg_table_output(t, p, tb))) {
            nb--;
            rc = SL_EOVERFLOW; /* recorded on the task */
        }
    }
    if (direct && rc == SL_OK)
        out->n_rows = at; /* the records bound the groups; the columns keep their room */
    if (!direct && rc == SL_OK && nb > 1 && (rc = sl__batch_concat(bs, nb, &out)) < 0)
        sl_task_fail(t, rc, "aggregate: joining the output of %d partitions", nb);
    if (!direct && rc == SL_OK && nb == 1) {
        out = bs[0];
        sl_batch_ref(out);
    }
    for (int j = 0; j < nb; j++)
        sl_batch_unref(bs[j]);
    if (rc < 0) {
        sl_batch_unref(out);
        return rc;
    }
    sl__agg_dict_attach(p, gs, out);
    gs->part_out[i] = out;
    return SL_OK;
}

static const struct sl_impl merge_impl[] = {SL__IMPL_CPU(agg_merge_run)};
static const struct sl_phase merge_phase = {merge_impl, 1, NULL};

/* Source task i of the partitioned case: the batch of the run starting at partition i
 * (nothing when i starts no run or its partitions had no group). */
static int emit_run(sl_task_t *t, struct agg_global *gs, int i)
{
    sl_batch_t *out = gs->part_out[i];
    gs->part_out[i] = NULL;
    return out ? sl_task_emit(t, out) : SL_OK;
}

int sl__agg_finalize_cpu(sl_task_t *t)
{
    const struct agg_plan *p = sl_op_data(sl_task_op(t));
    struct agg_global *gs = sl_task_gstate(t);
    if (gs->n_gpu_locals > 0)
        return sl_task_fail(t, SL_EUNSUPPORTED, "aggregate: groups sunk on a GPU cannot be "
                            "finalized on the CPU");
    if (p->any)
        return sl__agg_any_finalize(t);
    int rc = sl__agg_dict_keys(p) ? sl__agg_dict_finish(t, p, gs) : SL_OK;
    if (rc < 0)
        return rc;
    if (gs->flushed == 0 && gs->groups <= AGG_SMALL_GROUPS) {
        gs->n_out = 1;
        gs->out = sl__agg_alloc(t, sizeof *gs->out);
        if (!gs->out || sl__agg_table_init(t, p, gs->out, gs->groups) < 0)
            return SL_ENOMEM;
        for (struct agg_kept *k = gs->locals; k; k = k->next)
            sl__agg_table_merge_table(p, gs->out, &k->tb);
        return SL_OK;
    }
    for (struct agg_kept *k = gs->locals; k; k = k->next) {
        rc = sl__agg_table_flush(t, p, &k->tb, k->parts);
        if (rc < 0)
            return rc;
    }
    gs->n_out = AGG_PARTS;
    plan_runs(t, gs);
    return sl_task_spawn(t, &merge_phase, AGG_PARTS, NULL, NULL);
}

/* Co-processing: the GPU's groups come back as output rows (agg_cuda.c) and are merged
 * as partial states into the host's; every aggregate but avg can be rebuilt from its
 * output (avg lost its count). */
int sl__agg_can_split(const sl_op_t *op)
{
    const struct agg_plan *p = sl_op_data(op);
    for (int a = 0; p && a < p->n_aggs; a++)
        if (p->aggs[a].fn == AGG_AVG)
            return 0;
    return p != NULL && !p->any && p->gpu_types;
}

void sl__agg_fini_global(const sl_op_t *op, void *gstate)
{
    (void)op;
    struct agg_global *gs = gstate;
    for (int i = 0; i < AGG_PARTS; i++)
        sl_batch_unref(gs->part_out[i]);
    sl_batch_unref(gs->gpu_out);
    sl_batch_unref(gs->any_out);
    sl__agg_any_release(&gs->batches);
    sl__agg_dicts_free(gs);
    sl__agg_strs_free(gs);
}

/* A failed query's locals may still hold batches (combine or finalize take them
 * otherwise). */
void sl__agg_fini_local(const sl_op_t *op, void *gstate, void *lstate)
{
    (void)op, (void)gstate;
    struct agg_local *ls = lstate;
    if (ls) {
        sl__agg_any_release(&ls->batches);
        sl__agg_str_local_free(ls);
        sl__pred_state_fini(&ls->pred);
    }
}

int64_t sl__agg_source_tasks(sl_task_t *t)
{
    struct agg_global *gs = sl_task_gstate(t);
    return gs->n_out > 0 ? gs->n_out : 1;
}

int sl__agg_source(sl_task_t *t)
{
    const struct agg_plan *p = sl_op_data(sl_task_op(t));
    struct agg_global *gs = sl_task_gstate(t);
    if (p->any)
        return sl__agg_any_source(t);
    int64_t i = sl_task_index(t);
    if (!gs->out && gs->n_out == AGG_PARTS)
        return emit_run(t, gs, (int)i);
    struct agg_table empty;
    struct agg_table *tb = gs->out && i < gs->n_out ? &gs->out[i] : NULL;
    if (p->n_keys == 0 && (!tb || tb->n == 0)) {
        /* A global aggregate has one row even without input rows. */
        if (i != 0)
            return SL_OK;
        if (sl__agg_table_init(t, p, &empty, 1) < 0)
            return SL_ENOMEM;
        empty.n = 1;
        empty.hashes[0] = empty.nulls[0] = 0;
        for (int a = 0; a < p->n_aggs; a++) {
            empty.cnt[a][0] = 0;
            if (empty.val[a])
                memset(&empty.val[a][0], 0, sizeof(union agg_val));
        }
        tb = &empty;
    }
    if (!tb || tb->n == 0)
        return SL_OK;
    sl_batch_t *b = sl__agg_table_output(t, p, tb);
    if (!b)
        return SL_EOVERFLOW;
    sl__agg_dict_attach(p, gs, b);
    return sl_task_emit(t, b);
}

/* Seconds for `rows` rows. CPU: the sink hashes and updates at about 150 M rows/s per
 * worker plus the bytes at 10 GB/s. GPU, measured on the H100 through the engine
 * (bench/results_aggperf.md, 2^28 rows, GPU-resident): the key and value columns go
 * through at about 95 GB/s with 1,000 groups and 50 GB/s with 2^24 (compute-bound
 * kernels, not HBM), so AGG_GPU_BYTES_PER_S is 80 GB/s, plus AGG_GPU_FIXED_S for the
 * sample read-back, launches and the count read-backs of one query. Transfers of
 * host-resident input are the scheduler's to add (placement.c: bytes / link). */
#define AGG_GPU_BYTES_PER_S 80e9
#define AGG_GPU_FIXED_S 200e-6
double sl__agg_cost(const sl_op_t *op, enum sl_device_kind kind, int64_t rows)
{
    const struct agg_plan *p = sl_op_data(op);
    if (!p || rows < 0)
        return -1;
    double bytes = 0;
    for (int j = 0; j < p->n_keys; j++)
        bytes += (double)sl_type_width(p->key_types[j]);
    for (int a = 0; a < p->n_aggs; a++)
        if (p->aggs[a].col >= 0)
            bytes += (double)sl_type_width(p->aggs[a].in_type);
    if (kind == SL_DEVICE_CUDA) /* types the GPU does not take: unknown, placement says so */
        return p->any || !p->gpu_types || (p->where && !p->where_xp) ? -1
                                       : AGG_GPU_FIXED_S + (double)rows * bytes / AGG_GPU_BYTES_PER_S;
    return (double)rows * (1.0 / 150e6 + bytes / 10e9);
}

static const struct sl_impl sink_cpu[] = {SL__IMPL_CPU(sl__agg_sink)};
static const struct sl_impl combine_cpu[] = {SL__IMPL_CPU(sl__agg_combine)};
static const struct sl_impl finalize_cpu[] = {SL__IMPL_CPU(sl__agg_finalize_cpu)};
static const struct sl_impl source_cpu[] = {SL__IMPL_CPU(sl__agg_source)};
/* The CPU-only definition; CUDA builds register sl__aggregate_cuda_def (agg_cuda.c). */
SL__SINK_SOURCE_DEF(sl__aggregate_def, SL__AGG_DEF_FIELDS, (sl__agg_source_tasks, sl__agg_fini_local),
                    sl__agg_cost, sink_cpu, combine_cpu, finalize_cpu, source_cpu);
