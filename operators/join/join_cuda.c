/* join on a GPU (issue 6): the CUDA finalize and source of the join operator.
 *
 * When the join's inputs were sunk on a GPU, finalize runs there (op.h, "GPU
 * placement") with the kernels of sluice_k/join_gftr.h, join_npj.h and join_smj.h:
 *  - PHJ (default): each side's payload columns packed into one row of <= 16 bytes
 *    (join_cuda_side.c), (key, row) radix-partitioned once, joined per co-partition with
 *    shared-memory hash tables; the kernel unpacks the rows straight into the output
 *    columns. Columns past 16 bytes per side: the row carries the row id instead and
 *    they are gathered by it after the join.
 *  - NPJ (algo=nopart, or auto while the build side has at most 2^21 rows, 2^23 with a
 *    wide side, integer keys, or its table fits NPJ_MAX_TABLE_BYTES, or a direct table
 *    with values fits DENSE_AUTO_TABLE_BYTES): one global table of the build keys, the
 *    probe side streamed; payloads read in place, up to SL_K_MAX_COLS a side copied by
 *    the probe, the rest gathered by the row numbers it writes (near-sequential on the
 *    probe side). Dense unique build keys get a direct table (key - min): with values
 *    (debug_join_dense=values, the default) a bitmap of the keys present and the build
 *    row packed in <= 16 bytes as each key's value (no gather of the build side; else
 *    its row number), or the old table of row numbers (rows); other keys a hash table.
 *    Left outer joins run as PHJ (its output order gives the validity).
 *  - SMJ (algo=sortmerge): (key, row) sorted on every key bit, merge join with merge path.
 * Kinds: inner (the smaller side builds), and semi, anti, left outer (the left input
 * probes, the right builds): the kernels mark matched probe rows; left outer writes the
 * rows with a partner first, so the right columns' validity is "row < that count"
 * (always PHJ, whose kernel orders them so). Keys: one int32/int64 column, or two int32
 * columns packed into one 64-bit key (dates, timestamps, decimal(p <= 18) as those;
 * dictionary-encoded strings as their int32 codes when both sides' dictionaries agree,
 * the output's DICT columns then sharing their side's dictionary: gj_key_dicts_agree);
 * strings, DICT keys whose dictionaries differ and other composite keys as one 64-bit hash
 * a row, proven exact before the join (join_cuda_str.c), string outputs gathered by row
 * id after it. The result is sized by count -> allocate -> write (PHJ/NPJ: the probe side's size first,
 * again with the exact count only when it is larger; SMJ counts first). output=aggregate
 * sums the output columns on the GPU.
 *
 * Left to the CPU (can_run says no; the batches go back to host memory): null keys,
 * nulls in an output column, anti/left joins with an empty right side, sides of 2^32
 * rows or more, hashed keys over 2^31 rows in all or with a side not in GPU memory, and
 * joins that do not fit the GPU budget (except those join_smj_ooc.c, for
 * algo=sortmerge, or join_cuda_ooc.c run out of core, never with hashed keys). Two
 * different keys with one hash send a finalize to the CPU's (GJ_HASH_COLLIDED).
 *
 * Each GPU finalize puts its choices in the query profile's "values" (gpu_algo: 0 PHJ,
 * 1 NPJ, 2 SMJ; radix_bits, begin_bit, probe_rows and build_rows: the rows it joined
 * after the filters); with the option debug_join_phase_times also its phase times (CUDA events),
 * read by `sluice bench join` (per-phase times). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mgpu_ids.h"
#include "common/op_common.h"
#include "join_cuda_int.h"
#include "sluice_k/columns.h"
#include "sluice_k/join.h"
#include "sluice_k/join_gftr.h"
#include "sluice_k/join_npj.h"
#include "sluice_k/join_smj.h"
#include "sluice_k/join_str.h"

/* auto picks NPJ (no partitioning) while its table stays in the H100's 50 MB L2 cache
 * with room to spare, and the probe side is wide (PHJ would gather its columns past a
 * 16-byte row by row id); for narrow sides only while the table is small. Measured on
 * an H100 with 2^27 probe rows, one int32 payload a side, dense keys (bench/RESULTS.md,
 * session 4): NPJ / PHJ 2.9 / 3.8 ms at 4,096 build rows, 4.1 / 4.1 at 2^20 (4 MB
 * table), 6.0 / 5.2 at 2^22 (16 MB); the 8-join sequence (16 MB tables, up to 17
 * columns a side) 91 ms with NPJ, 399 with PHJ. Tables: direct (dense keys) 4 B per
 * key of the range; hash: 2 slots of 8 B (16 B for 8-byte keys) per build row, rounded
 * up to a power of two. */
#define NPJ_MAX_TABLE_BYTES ((int64_t)32 << 20)
#define NPJ_NARROW_TABLE_BYTES ((int64_t)4 << 20)
/* ... and, past those tables, while the build side has at most NPJ_AUTO_BUILD_ROWS rows:
 * PHJ partitions the whole probe side (keys and packed rows, read and written) and its
 * build side, which costs more than NPJ's probes into a table past the L2 cache while the
 * build side stays small. TPC-H at SF 10 on an H100 (session 11, the joins of Q3, Q5,
 * Q7, Q8, Q9, Q10, Q12 and Q21 forced each way): builds of 0.1-1.5M rows (8-byte integer
 * keys, tables of up to 64 MB) under probe sides of 1-60M rows were 4-43% faster as NPJ
 * (Q3 10.3 -> 6.4 ms, Q9 10.0 -> 7.7, Q21 14.8 -> 11.3 for the whole query). The one
 * measured case the other way has 2^22 build rows (above). */
#define NPJ_AUTO_BUILD_ROWS ((int64_t)1 << 21)
/* ... and up to NPJ_AUTO_WIDE_BUILD_ROWS when either side is wide (PHJ gathers its
 * columns by row id): Q9's last join builds on 3.2M lines with 5 payload columns (36
 * bytes) against 15M orders: 6.6 ms for the query as NPJ, 8.4 as PHJ (SF 10, H100,
 * 2026-11-26 16:31). Builds past it stay PHJ: Q4's 38M lines and Q22's 15M orders took
 * 14.3 and 10.2 ms as NPJ against 3.4 and 2.0 as PHJ (16:10). */
#define NPJ_AUTO_WIDE_BUILD_ROWS ((int64_t)1 << 23)

/* ---------------- can the GPU do it ---------------- */

/* What the GPU join takes (join_gpu_type): the four kinds without a residual; keys of
 * integer-like types (dictionary codes among them) or strings, both sides of one type
 * (utf8 and large_utf8 mix); 4- and 8-byte output columns, strings (each string column
 * output once) and, materialized, the other fixed widths (gj_late_fixed: bools, small
 * integers, decimal128); the rest joins on the CPU. */
static int composite_ok(const struct join_data *d)
{
    if (d->kind > JOIN_ANTI || d->n_resid || d->n_keys > SL_K_MAX_KEYS)
        return 0;
    for (int k = 0; k < d->n_keys; k++) {
        enum sl_type g = join_gpu_type(d->ktype[k]);
        int str = gj_str_type(d->ktype[k]) && gj_str_type(d->rktype[k]);
        if (!str && ((g != SL_TYPE_INT32 && g != SL_TYPE_INT64) || d->rktype[k] != d->ktype[k]))
            return 0;
    }
    for (int oc = 0; oc < d->n_out; oc++) {
        const struct join_ocol *o = &d->out[oc];
        if (gj_str_type(o->type) && !d->aggregate) {
            for (int p = 0; p < oc; p++)
                if (d->out[p].side == o->side && d->out[p].col == o->col)
                    return 0;
        } else if (join_gpu_type(o->type) == SL_TYPE_INVALID &&
                   (d->aggregate || !gj_late_fixed(o->type))) {
            return 0;
        }
    }
    return 1;
}

/* Every batch with rows of side s is in device memory (string views need it). */
static int side_on_device(const struct join_state *st, int s)
{
    for (int64_t i = 0; i < st->side[s].n_batches; i++)
        if (st->side[s].batches[i]->n_rows > 0 && sl_batch_device(st->side[s].batches[i]) < 0)
            return 0;
    return 1;
}

/* Device bytes the in-GPU join needs, bounded from above: each side copied, packed and
 * partitioned (with CUB's temp storage) at <= 24 bytes per row each time, and the output
 * at the probe side's size. */
static int64_t gpu_need(const struct join_data *d, const int64_t n[2])
{
    int64_t out_w = 0;
    for (int oc = 0; oc < d->n_out; oc++)
        out_w += (int64_t)sl_type_width(d->out[oc].type);
    int64_t big = n[0] > n[1] ? n[0] : n[1];
    return 3 * 24 * (n[0] + n[1]) + (out_w + 8) * big + (64 << 20);
}

int join_gpu_can_run(const sl_task_t *t)
{
    const struct join_data *d = sl_op_data(sl_task_op(t));
    const struct join_state *st = sl_task_gstate((sl_task_t *)t);
    if (d->kind == JOIN_CROSS)
        return join_cross_gpu_can_run(t);
    if (!composite_ok(d) || !gj_out_dicts_agree(d, st))
        return 0;
    /* String views read device memory: hashed keys need both sides there, string
     * outputs the side they come from (the other may be a few host rows, e.g. a top-k). */
    int hashed = gj_keys_hashed(d, st), str_out[2] = {0, 0};
    for (int oc = 0; oc < d->n_out; oc++)
        str_out[d->out[oc].side] |= gj_str_type(d->out[oc].type);
    for (int s = 0; s < 2; s++)
        if ((hashed || str_out[s]) && !side_on_device(st, s))
            return 0;
    int64_t n[2] = {0, 0};
    for (int s = 0; s < 2; s++) {
        n[s] = join_side_rows(&st->side[s]);
        if (n[s] >= ((int64_t)1 << 32) - 1)
            return 0;
        for (int k = 0; k < d->n_keys; k++)
            if (join_side_has_nulls(&st->side[s], d->key[s][k]))
                return 0;
    }
    for (int oc = 0; oc < d->n_out; oc++)
        if (join_side_has_nulls(&st->side[d->out[oc].side], d->out[oc].col))
            return 0;
    if ((d->kind == JOIN_ANTI || d->kind == JOIN_LEFT) && n[1] == 0 && n[0] > 0)
        return 0;
    if (hashed && n[0] + n[1] >= ((int64_t)1 << 31)) /* the hash check sorts both sides */
        return 0;
    /* More than the budget runs out of core (join_cuda_ooc.c) where that path can (not
     * with hashed keys), or streamed (join_cuda_stream.c: asked last, so that a finalize
     * which another path can take does not weigh it twice, here and in finalize). */
    return gpu_need(d, n) <= sl_task_device_budget(t) ||
           (!hashed && (join_smj_ooc_can_run(t) || join_ooc_can_run(t))) ||
           join_stream_can_run(t);
}

/* 1 when the in-GPU join fits the budget (else join_cuda_ooc.c runs it out of core). */
static int fits_in_gpu(sl_task_t *t)
{
    const struct join_state *st = sl_task_gstate(t);
    int64_t n[2] = {join_side_rows(&st->side[0]), join_side_rows(&st->side[1])};
    return gpu_need(sl_op_data(sl_task_op(t)), n) <= sl_task_device_budget(t);
}

/* ---------------- the plan ---------------- */

/* An output column comes from the join's key output (else from a payload). */
static int from_key(const struct gj *g, const struct join_ocol *o)
{
    return !g->composite && !g->hashed && o->col == g->d->key[o->side][0] &&
           (g->kind == SL_K_JOIN_INNER || o->side != g->build);
}

/* Payload j of side s for output column o, or -1. */
static int pay_index(const struct gj_side *sd, int col)
{
    for (int j = 0; j < sd->n_pay; j++)
        if (sd->pay_col[j] == col)
            return j;
    return -1;
}

/* Side s's payloads do not fit PHJ's packed row (more than 4 columns or 16 bytes): PHJ
 * would carry a row id and gather them after the join. */
static int side_wide(const struct gj *g, int s)
{
    const struct gj_side *S = &g->s[s];
    int wide = S->n_pay > 4;
    for (int j = 0, bytes = 0; j < S->n_pay; j++)
        wide |= (bytes += S->pay_w[j]) > GJ_ROW_MAX;
    return wide;
}

static int npj_pays(const struct gj *g, int64_t nb)
{
    int wide = side_wide(g, 1 - g->build);
    /* (Hashed keys keep the table rule: measured only for integer keys.) */
    if (!g->hashed && (nb <= NPJ_AUTO_BUILD_ROWS ||
                       (nb <= NPJ_AUTO_WIDE_BUILD_ROWS && (wide || side_wide(g, g->build)))))
        return 1;
    int64_t limit = wide ? NPJ_MAX_TABLE_BYTES : NPJ_NARROW_TABLE_BYTES, table;
    if (g->range) { /* dense keys (gj_npj_range) */
        table = g->range * 4;
    } else {
        int64_t slots = 1024;
        while (slots < 2 * nb)
            slots <<= 1;
        table = slots * (g->k8 ? 16 : 8);
    }
    return table <= limit;
}

/* Each side's payloads: in the row (PHJ/SMJ: packed rows of <= 16 bytes; NPJ: up to
 * SL_K_MAX_COLS copied by the probe), or gathered by row id after the join. */
static void layout(struct gj *g, int64_t nb)
{
    g->row_bytes = 0;
    for (int s = 0; s < 2; s++) {
        struct gj_side *sd = &g->s[s];
        int total = 0;
        for (int j = 0; j < sd->n_pay; j++)
            total += sd->pay_w[j];
        int fixed = sd->n_pay - sd->n_late; /* columns that can go into the row */
        if (g->algo == GJ_NPJ) { /* the probe copies up to SL_K_MAX_COLS columns a side */
            sd->n_row = fixed < SL_K_MAX_COLS ? fixed : SL_K_MAX_COLS;
            sd->id_word = sd->n_pay > sd->n_row; /* the rest: gathered by row number */
            sd->bytes = total;
        } else if (sd->n_late == 0 && sd->n_pay <= 4 && total <= GJ_ROW_MAX) {
            sd->n_row = sd->n_pay;
            sd->bytes = total;
        } else { /* leading columns in <= 12 bytes, then the row id */
            while (sd->n_row < 3 && sd->n_row < fixed &&
                   sd->bytes + sd->pay_w[sd->n_row] <= GJ_ROW_MAX - 4)
                sd->bytes += sd->pay_w[sd->n_row++];
            sd->id_word = 1;
            sd->bytes += 4;
        }
        if (g->algo != GJ_NPJ && sd->bytes > g->row_bytes)
            g->row_bytes = sd->bytes;
    }
    /* One payload of the same width per side: the (key, value) kernel of join.h, 0.2 ms
     * faster at 2^27 than the packed-row one (bench/RESULTS.md, GPU join kernels). */
    g->narrow = g->algo == GJ_PHJ && g->kind == SL_K_JOIN_INNER && g->s[0].n_pay == 1 &&
                g->s[1].n_pay == 1 && !g->s[0].id_word && !g->s[1].id_word &&
                g->s[0].pay_w[0] == g->row_bytes && g->s[1].pay_w[0] == g->row_bytes;
    g->bits = gj_radix_bits(nb);
    if (g->algo != GJ_NPJ)
        g->range = 0;
}

/* Past the rules above, auto takes the direct table with values (sl_k_npj_dval_*) for
 * dense, unique build keys while that table takes at most DENSE_AUTO_TABLE_BYTES (issue
 * 19). H100, 2026-11-27 14:10 UTC, probe side 2^26 rows, each against PHJ in the same
 * process: 2^22 build rows, 4-byte values (a 16 MiB table) 1.81 ms against 2.38; 2^23
 * rows, 8-byte values (65 MiB) 3.55 against 3.85; a semi join on 2^27 build rows (the
 * bitmap alone, 16 MiB) 3.95 against 4.40. Far past the L2 cache it loses: every build
 * row costs a random store and an L2 atomic, every probe row a random sector read, and
 * HBM serves those at about a fifth of its streaming rate (2^27 rows a side, 13:44 UTC,
 * bench/specs/join.json join.gpu.narrow's limits: built in 13.6 ms, probed in 7.1, 21.4
 * for the join against PHJ's 6.9; wide 22.7 against 11.1, key8 23.1 against 11.4,
 * match10 17.0 against 4.9). Taken only where the build side's row fits a packed value
 * of <= 16 bytes (or none is written: SEMI/ANTI), its integer key is one column, and the
 * table and the probe side's output fit half of the GPU budget left. A duplicate key
 * found while building sends the join back to PHJ (GJ_DENSE_DUP), not to the hash table:
 * TPC-H's lineitem keys can fill their range and repeat (the build stops at the first
 * wave that sees one; keys that outnumber their range never get a direct table). */
#define DENSE_AUTO_MIN_ROWS NPJ_AUTO_BUILD_ROWS
#define DENSE_AUTO_TABLE_BYTES ((int64_t)72 << 20)

/* The bytes of a value of the direct table auto would build (packed row <= 16 bytes; 0
 * for SEMI/ANTI), -1 when the build side's row does not fit one. */
static int dense_value_bytes(const struct gj *g)
{
    const struct gj_side *R = &g->s[g->build];
    if (g->kind != SL_K_JOIN_INNER)
        return 0;
    int bytes = 0;
    for (int j = 0; j < R->n_pay; j++) {
        if (R->pay_w[j] != 4 && R->pay_w[j] != 8)
            return -1;
        bytes += R->pay_w[j];
    }
    return R->n_late || bytes > 16 ? -1 : bytes == 0 ? 0 : bytes <= 4 ? 4 : bytes <= 8 ? 8 : 16;
}

/* Before the key range: could the table fit (the range is at least nb keys)? */
static int dense_candidate(sl_task_t *t, const struct gj *g, int64_t nb)
{
    int64_t mode = 0;
    sl_task_option_int(t, "debug_join_dense", &mode);
    int value = dense_value_bytes(g);
    return mode == 0 && !g->hashed && !g->composite && g->d->n_keys == 1 &&
           nb > DENSE_AUTO_MIN_ROWS && value >= 0 &&
           nb * value + nb / 8 <= DENSE_AUTO_TABLE_BYTES;
}

/* After it: the table of g->range slots, and the probe side's output, fit. */
static int dense_pays(sl_task_t *t, const struct gj *g, int64_t ns)
{
    int out_w = 0;
    for (int oc = 0; oc < g->d->n_out; oc++)
        out_w += (int)sl_type_width(g->d->out[oc].type);
    int64_t table = g->range * dense_value_bytes(g) + g->range / 8, out = ns * (out_w + 8);
    return table <= DENSE_AUTO_TABLE_BYTES && table + out <= sl_task_device_budget(t) / 2;
}

static int plan(sl_task_t *t, const struct join_state *st, struct gj *g)
{
    const struct join_data *d = st->d;
    static const int kinds[] = {[JOIN_INNER] = SL_K_JOIN_INNER, [JOIN_LEFT] = SL_K_JOIN_LEFT,
                                [JOIN_SEMI] = SL_K_JOIN_SEMI, [JOIN_ANTI] = SL_K_JOIN_ANTI};
    g->d = d;
    g->kind = kinds[d->kind];
    g->hashed = gj_keys_hashed(d, st);
    g->composite = d->n_keys == 2 && !g->hashed;
    g->k8 = g->hashed || g->composite || join_gpu_type(d->ktype[0]) == SL_TYPE_INT64;
    g->build = g->kind == SL_K_JOIN_INNER && st->side[0].n_rows < st->side[1].n_rows ? 0 : 1;
    for (int late = 0; late < 2; late++) { /* strings and odd widths last: by row id */
        for (int oc = 0; oc < d->n_out; oc++) {
            const struct join_ocol *o = &d->out[oc];
            struct gj_side *sd = &g->s[o->side];
            int is_late = gj_str_type(o->type) || gj_late_fixed(o->type);
            if (is_late == late && !from_key(g, o) && pay_index(sd, o->col) < 0) {
                sd->pay_col[sd->n_pay] = o->col;
                sd->pay_w[sd->n_pay++] = (int)sl_type_width(o->type);
                sd->n_late += late;
            }
        }
    }
    int64_t nb = st->side[g->build].n_rows, ns = st->side[1 - g->build].n_rows;
    int npj_ok = nb < ((int64_t)1 << 31) && g->kind != SL_K_JOIN_LEFT;
    int dense_try = npj_ok && d->algo == JOIN_AUTO && dense_candidate(t, g, nb);
    /* (auto: only when a direct table of nb slots could fit, or a direct table with
     * values could pay; the range costs a read of the keys and a synchronization) */
    if (npj_ok && !g->hashed && (d->algo == JOIN_NOPART || dense_try ||
                   (d->algo == JOIN_AUTO && nb * 4 <= NPJ_MAX_TABLE_BYTES))) {
        int rc = gj_key_range(t, st, g);
        if (rc < 0)
            return rc;
        gj_step(t, g, "npj_range");
    }
    g->algo = GJ_PHJ;
    if (d->algo == JOIN_SORTMERGE && g->kind != SL_K_JOIN_LEFT)
        g->algo = GJ_SMJ;
    else if (npj_ok && (d->algo == JOIN_NOPART || (d->algo == JOIN_AUTO && npj_pays(g, nb))))
        g->algo = GJ_NPJ;
    else if (npj_ok && dense_try && g->range && dense_pays(t, g, ns))
        g->algo = GJ_NPJ, g->dense_auto = 1;
    layout(g, nb);
    return SL_OK;
}

/* ---------------- outputs ---------------- */

struct gj_out {
    int64_t cap, count, inner;          /* inner: rows with a build partner */
    sl_batch_t *batch;                  /* materialize: cap rows */
    void *dest[2 * JOIN_MAX_COLS];      /* per output column */
    int copy_of[2 * JOIN_MAX_COLS];     /* materialize: copied from that column, or -1 */
    void *key_dest;
    void *pay_dest[2][GJ_MAX_PAY];
    void *ids[2];                       /* row ids of sides with an id word */
    void *scratch[2 * JOIN_MAX_COLS + 2];
    int n_scratch;
};

static void *scratch(sl_task_t *t, struct gj_out *o, size_t bytes)
{
    void *p = sl_task_device_alloc(t, bytes ? bytes : 8);
    if (p)
        o->scratch[o->n_scratch++] = p;
    return p;
}

static void out_free(sl_task_t *t, struct gj_out *o)
{
    for (int i = 0; i < o->n_scratch; i++)
        sl_task_device_free(t, o->scratch[i]);
    sl_batch_unref(o->batch);
    int64_t keep[3] = {o->count, o->inner, 0};
    memset(o, 0, sizeof *o);
    o->count = keep[0];
    o->inner = keep[1];
}

static int out_alloc(sl_task_t *t, const struct gj *g, struct gj_out *o, int64_t cap)
{
    const struct join_data *d = g->d;
    o->cap = cap;
    if (!d->aggregate && !(o->batch = sl_task_new_batch(t, sl_op_output_schema(sl_task_op(t)), cap)))
        return SL_ENOMEM;
    if (o->batch)
        gj_out_share_dicts(d, sl_task_gstate(t), o->batch);
    for (int oc = 0; oc < d->n_out; oc++) {
        const struct join_ocol *c = &d->out[oc];
        void **role = from_key(g, c) ? &o->key_dest
                                     : &o->pay_dest[c->side][pay_index(&g->s[c->side], c->col)];
        size_t w = sl_type_width(c->type);
        o->copy_of[oc] = -1;
        if (*role) {
            for (int p = 0; p < oc && o->copy_of[oc] < 0; p++)
                if (o->dest[p] == *role)
                    o->copy_of[oc] = p;
            if (d->aggregate) {
                o->dest[oc] = *role;
                o->copy_of[oc] = -1;
                continue;
            }
        }
        o->dest[oc] = o->batch ? sl__col_values(o->batch, oc) : scratch(t, o, (size_t)cap * w);
        if (!o->dest[oc] && cap > 0) /* a batch of 0 rows may have no buffers */
            return sl_task_fail(t, SL_ENOMEM, "join on the GPU: no output buffer");
        if (!*role)
            *role = o->dest[oc];
    }
    for (int s = 0; s < 2; s++)
        if (g->s[s].id_word && !(o->ids[s] = scratch(t, o, (size_t)cap * 4)))
            return SL_ENOMEM;
    if (g->narrow && !o->key_dest && !(o->key_dest = scratch(t, o, (size_t)cap * (g->k8 ? 8 : 4))))
        return SL_ENOMEM; /* the narrow kernel writes keys */
    return SL_OK;
}

/* The narrow kernel of join.h: (key, build value, probe value) rows. */
static cudaError_t narrow_join(const struct gj *g, void *temp, size_t *tb, const struct gj_out *o,
                               unsigned long long *d_count, cudaStream_t s)
{
    const struct gj_side *R = &g->s[g->build], *S = &g->s[1 - g->build];
    void *ob = o ? o->pay_dest[g->build][0] : NULL, *os = o ? o->pay_dest[1 - g->build][0] : NULL;
    void *ok = o ? o->key_dest : NULL;
    int64_t cap = o ? o->cap : 0;
    int sh = g->begin + g->bits;
#define SL_NJ(SUF) sl_k_phj_materialize_##SUF(temp, tb, R->pk, R->prow, R->off, S->pk, S->prow, \
                                              S->off, g->bits, sh, ok, ob, os, cap, d_count, s)
    if (!g->k8)
        return g->row_bytes == 8 ? SL_NJ(k32_v64) : SL_NJ(k32_v32);
    return g->row_bytes == 8 ? SL_NJ(k64_v64) : SL_NJ(k64_v32);
#undef SL_NJ
}

/* The kernels' output columns of side s: its row's payloads (and row id). */
static sl_k_cols_t out_cols(const struct gj *g, const struct gj_out *o, int s)
{
    sl_k_cols_t c;
    memset(&c, 0, sizeof c);
    const struct gj_side *sd = &g->s[s];
    for (int j = 0; j < sd->n_row; j++) {
        c.width[c.n] = sd->pay_w[j];
        c.ptr[c.n++] = o->pay_dest[s][j];
    }
    if (sd->id_word && g->algo != GJ_NPJ) { /* NPJ writes row numbers as positions */
        c.width[c.n] = 4;
        c.ptr[c.n++] = o->ids[s];
    }
    return c;
}

static sl_k_join_out_t kernel_out(const struct gj *g, const struct gj_out *o)
{
    sl_k_join_out_t ko;
    memset(&ko, 0, sizeof ko);
    ko.keys = o->key_dest;
    ko.r = out_cols(g, o, g->build);
    ko.s = out_cols(g, o, 1 - g->build);
    ko.capacity = o->cap;
    if (g->algo == GJ_NPJ) {
        ko.r_pos = o->ids[g->build];
        ko.s_pos = o->ids[1 - g->build];
    }
    return ko;
}

/* ---------------- the join kernels ---------------- */

static int read_count(sl_task_t *t, const unsigned long long *d_count, struct gj_out *o)
{
    unsigned long long h[2] = {0, 0};
    cudaStream_t s = sl_task_stream(t);
    SL_TASK_CUDA_TRY(t, cudaMemcpyAsync(h, d_count, sizeof h, cudaMemcpyDeviceToHost, s),
                     "reading counts");
    SL_TASK_CUDA_TRY(t, cudaStreamSynchronize(s), "join");
    o->count = (int64_t)h[0];
    o->inner = (int64_t)h[1];
    return SL_OK;
}

/* The direct table with values (debug_join_dense=values): R's row packed in it when the
 * kind writes R columns and they fit 16 bytes (one load a probe row), none for SEMI/ANTI
 * or when no R column is written (the bitmap alone); past 16 bytes the old table. */
static void dval_plan(sl_task_t *t, struct gj *g, const sl_k_cols_t *rin)
{
    int64_t mode = 0;
    sl_task_option_int(t, "debug_join_dense", &mode);
    const struct gj_side *R = &g->s[g->build];
    int with_r = g->kind == SL_K_JOIN_INNER || g->kind == SL_K_JOIN_LEFT, bytes = 0;
    for (int j = 0; j < rin->n; j++)
        bytes += rin->width[j];
    int none = !with_r || (rin->n == 0 && !R->id_word);
    g->dval_values = none ? SL_K_NPJ_DVAL_NONE : SL_K_NPJ_DVAL_PACKED;
    /* Past 16 bytes (or with columns gathered by row number) the values would be row
     * numbers, gathered by as from the old table after a dearer build (a bitmap atomic
     * and a store per row against one atomicCAS: 13.6 ms against 9.9 at 2^27 rows, H100):
     * the old table then. */
    g->dval = mode == 0 && g->range > 0 && (none || (!R->id_word && bytes <= 16));
}

/* After a direct table's build (its launch returned e): reads the table's duplicate word
 * (its last 16 bytes); a key twice or outside the range frees it and sets g->range 0 (the
 * hash table instead). */
static int dense_checked(sl_task_t *t, struct gj *g, void **temp, size_t need, cudaError_t e)
{
    cudaStream_t s = sl_task_stream(t);
    unsigned dup = 0;
    if (e == cudaSuccess)
        e = SL_TASK_CUDA_CALL(cudaMemcpyAsync(&dup, (char *)*temp + need - 16, sizeof dup,
                                              cudaMemcpyDeviceToHost, s));
    if (e == cudaSuccess)
        e = SL_TASK_CUDA_CALL(cudaStreamSynchronize(s));
    if (e != cudaSuccess)
        return SL_TASK_CUDA_FAIL(t, e, "building the direct table");
    if (dup) {
        sl_task_device_free(t, *temp);
        *temp = NULL;
        g->range = 0;
        g->dval = 0;
        if (g->dense_auto)
            return GJ_DENSE_DUP;
    }
    return SL_OK;
}

static int dval_table(sl_task_t *t, struct gj *g, const sl_k_cols_t *rin, void **temp,
                      size_t *need)
{
    cudaStream_t s = sl_task_stream(t);
    const struct gj_side *R = &g->s[g->build];
#define SL_DV(TEMP, NEED)                                                                   \
    (g->k8 ? sl_k_npj_dval_build_k64(TEMP, NEED, R->keys, g->dval_values, rin, R->n, g->kmin, \
                                     g->range, s)                                           \
           : sl_k_npj_dval_build_k32(TEMP, NEED, R->keys, g->dval_values, rin, R->n,         \
                                     (uint32_t)g->kmin, g->range, s))
    SL_TASK_CUDA_TRY(t, SL_DV(NULL, need), "direct table size");
    if (!(*temp = sl_task_device_alloc(t, *need)))
        return SL_ENOMEM;
    cudaError_t e = SL_DV(*temp, need);
#undef SL_DV
    return dense_checked(t, g, temp, *need, e);
}

int gj_npj_table(sl_task_t *t, struct gj *g, const sl_k_cols_t *rin, void **temp, size_t *need)
{
    cudaStream_t s = sl_task_stream(t);
    const struct gj_side *R = &g->s[g->build];
    *temp = NULL;
    if (g->range && g->dval) {
        int rc = dval_table(t, g, rin, temp, need);
        if (rc != SL_OK || *temp)
            return rc;
    }
    if (g->range) {
        SL_TASK_CUDA_TRY(
            t,
            g->k8 ? sl_k_npj_dense_build_k64(NULL, need, R->keys, R->n, g->kmin, g->range, s)
                  : sl_k_npj_dense_build_k32(NULL, need, R->keys, R->n, (uint32_t)g->kmin, g->range,
                                             s),
            "direct table size");
        if (!(*temp = sl_task_device_alloc(t, *need)))
            return SL_ENOMEM;
        cudaError_t e = g->k8 ? sl_k_npj_dense_build_k64(*temp, need, R->keys, R->n, g->kmin, g->range, s)
                              : sl_k_npj_dense_build_k32(*temp, need, R->keys, R->n, (uint32_t)g->kmin,
                                                         g->range, s);
        int rc = dense_checked(t, g, temp, *need, e);
        if (rc != SL_OK || *temp)
            return rc;
    }
    SL_TASK_CUDA_TRY(t,
                     g->k8 ? sl_k_npj_build_k64(NULL, need, R->keys, R->n, s)
                           : sl_k_npj_build_k32(NULL, need, R->keys, R->n, s),
                     "hash table size");
    if (!(*temp = sl_task_device_alloc(t, *need)))
        return SL_ENOMEM;
    SL_TASK_CUDA_TRY(t,
                     g->k8 ? sl_k_npj_build_k64(*temp, need, R->keys, R->n, s)
                           : sl_k_npj_build_k32(*temp, need, R->keys, R->n, s),
                     "building the hash table");
    return SL_OK;
}

cudaError_t gj_npj_probe(const struct gj *g, void *table, size_t table_bytes,
                         const sl_k_cols_t *rin, const void *s_keys, int64_t ns,
                         const sl_k_cols_t *sin, const sl_k_join_out_t *ko,
                         unsigned long long *d_count, cudaStream_t s)
{
    int64_t nr = g->s[g->build].n;
    if (g->range && g->dval)
        return g->k8 ? sl_k_npj_dval_probe_k64(table, table_bytes, nr, g->kmin, g->range,
                                               g->dval_values, rin, s_keys, ns, sin, g->kind,
                                               ko, d_count, s)
                     : sl_k_npj_dval_probe_k32(table, table_bytes, nr, (uint32_t)g->kmin,
                                               g->range, g->dval_values, rin, s_keys, ns, sin,
                                               g->kind, ko, d_count, s);
    if (g->range)
        return g->k8 ? sl_k_npj_dense_probe_k64(table, table_bytes, nr, g->kmin, g->range, rin,
                                                s_keys, ns, sin, g->kind, ko, d_count, s)
                     : sl_k_npj_dense_probe_k32(table, table_bytes, nr, (uint32_t)g->kmin,
                                                g->range, rin, s_keys, ns, sin, g->kind, ko,
                                                d_count, s);
    return g->k8 ? sl_k_npj_probe_k64(table, table_bytes, nr, rin, s_keys, ns, sin, g->kind, ko,
                                      d_count, s)
                 : sl_k_npj_probe_k32(table, table_bytes, nr, rin, s_keys, ns, sin, g->kind, ko,
                                      d_count, s);
}

/* PHJ or NPJ: written at the first capacity, again with the exact one if larger. */
static int hash_join(sl_task_t *t, struct gj *g, struct gj_out *o, unsigned long long *d_count,
                     const struct join_state *st)
{
    cudaStream_t s = sl_task_stream(t);
    struct gj_side *R = &g->s[g->build], *S = &g->s[1 - g->build];
    size_t need = 0;
    sl_k_cols_t rin, sin;
    memset(&rin, 0, sizeof rin);
    memset(&sin, 0, sizeof sin);
    void *own[2 * GJ_MAX_PAY];
    int n_own = 0, rc = SL_OK;
    if (g->algo == GJ_NPJ) {
        /* Payloads read in place by the probe (copied when a side is several buffers). */
        for (int k = 0; k < 2 && rc >= 0; k++) {
            int side = k == 0 ? g->build : 1 - g->build;
            sl_k_cols_t *c = k == 0 ? &rin : &sin;
            for (int j = 0; j < g->s[side].n_row && rc >= 0; j++) {
                const void *p;
                rc = gj_side_column(t, st, side, &g->s[side], g->s[side].pay_col[j], &p, &own[n_own]);
                if (own[n_own])
                    n_own++;
                c->width[c->n] = g->s[side].pay_w[j];
                c->ptr[c->n++] = (void *)p;
            }
        }
    } else if (g->narrow) {
        cudaError_t e = narrow_join(g, NULL, &need, NULL, NULL, s);
        if (e != cudaSuccess)
            rc = SL_TASK_CUDA_FAIL(t, e, "join size");
    } else {
        cudaError_t e = g->k8 ? sl_k_phj_join_k64(NULL, &need, NULL, NULL, NULL, NULL, NULL, NULL, S->n,
                                                  g->row_bytes, g->bits, g->begin + g->bits, g->kind,
                                                  NULL, NULL, s)
                              : sl_k_phj_join_k32(NULL, &need, NULL, NULL, NULL, NULL, NULL, NULL, S->n,
                                                  g->row_bytes, g->bits, g->begin + g->bits, g->kind,
                                                  NULL, NULL, s);
        if (e != cudaSuccess)
            rc = SL_TASK_CUDA_FAIL(t, e, "join size");
    }
    void *temp = NULL;
    if (rc >= 0 && g->algo == GJ_NPJ) {
        dval_plan(t, g, &rin);
        rc = gj_npj_table(t, g, &rin, &temp, &need);
        gj_step(t, g, "npj_table");
    } else if (rc >= 0 && !(temp = sl_task_device_alloc(t, need))) {
        rc = SL_ENOMEM;
    }
    int dup = rc == GJ_DENSE_DUP; /* back to PHJ: nothing written yet */
    if (dup)
        rc = SL_OK;
    int64_t cap = S->n > 0 ? S->n : 1;
    for (int pass = 0; pass < 2 && rc >= 0 && !dup; pass++) {
        if ((rc = out_alloc(t, g, o, cap)) < 0)
            break;
        sl_k_join_out_t ko = kernel_out(g, o);
        cudaError_t e;
        size_t tb = need;
        if (g->narrow)
            e = narrow_join(g, temp, &tb, o, d_count, s);
        else if (g->algo == GJ_NPJ)
            e = gj_npj_probe(g, temp, need, &rin, S->keys, S->n, &sin, &ko, d_count, s);
        else
            e = g->k8 ? sl_k_phj_join_k64(temp, &tb, R->pk, R->prow, R->off, S->pk, S->prow, S->off, S->n,
                                          g->row_bytes, g->bits, g->begin + g->bits, g->kind, &ko, d_count, s)
                      : sl_k_phj_join_k32(temp, &tb, R->pk, R->prow, R->off, S->pk, S->prow, S->off, S->n,
                                          g->row_bytes, g->bits, g->begin + g->bits, g->kind, &ko, d_count, s);
        if (e != cudaSuccess) {
            rc = SL_TASK_CUDA_FAIL(t, e, "join");
            break;
        }
        if ((rc = read_count(t, d_count, o)) < 0 || o->count <= cap)
            break;
        cap = o->count;
        out_free(t, o);
    }
    if (g->algo == GJ_NPJ && !dup)
        gj_step(t, g, "npj_probe");
    sl_task_device_free(t, temp);
    for (int i = 0; i < n_own; i++)
        sl_task_device_free(t, own[i]);
    return rc < 0 ? rc : dup ? GJ_DENSE_DUP : rc;
}

/* SMJ: count, allocate exactly, write. */
static int merge_join(sl_task_t *t, struct gj *g, struct gj_out *o, unsigned long long *d_count)
{
    cudaStream_t s = sl_task_stream(t);
    struct gj_side *R = &g->s[g->build], *S = &g->s[1 - g->build];
    size_t need = 0;
    SL_TASK_CUDA_TRY(
        t,
        g->k8 ? sl_k_smj_count_k64(NULL, &need, R->pk, R->n, S->pk, S->n, g->kind, d_count, s)
              : sl_k_smj_count_k32(NULL, &need, R->pk, R->n, S->pk, S->n, g->kind, d_count, s),
        "merge join size");
    void *temp = sl_task_device_alloc(t, need);
    if (!temp)
        return SL_ENOMEM;
    size_t tb = need;
    cudaError_t e = g->k8 ? sl_k_smj_count_k64(temp, &tb, R->pk, R->n, S->pk, S->n, g->kind, d_count, s)
                          : sl_k_smj_count_k32(temp, &tb, R->pk, R->n, S->pk, S->n, g->kind, d_count, s);
    int rc =
        e != cudaSuccess ? SL_TASK_CUDA_FAIL(t, e, "merge join count") : read_count(t, d_count, o);
    if (rc >= 0)
        rc = out_alloc(t, g, o, o->count > 0 ? o->count : 1);
    if (rc >= 0) {
        sl_k_join_out_t ko = kernel_out(g, o);
        e = g->k8 ? sl_k_smj_write_k64(temp, need, R->pk, R->prow, R->n, S->pk, S->prow, S->n,
                                       g->row_bytes, g->kind, &ko, s)
                  : sl_k_smj_write_k32(temp, need, R->pk, R->prow, R->n, S->pk, S->prow, S->n,
                                       g->row_bytes, g->kind, &ko, s);
        if (e != cudaSuccess)
            rc = SL_TASK_CUDA_FAIL(t, e, "merge join");
    }
    sl_task_device_free(t, temp);
    return rc;
}

/* ---------------- after the join ---------------- */

/* The first output column taken from column col of side `side`. */
static int out_index(const struct join_data *d, int side, int col)
{
    for (int oc = 0; oc < d->n_out; oc++)
        if (d->out[oc].side == side && d->out[oc].col == col)
            return oc;
    return -1; /* cannot happen: payloads come from output columns */
}

/* Columns past the packed row, gathered by row id; left outer: the build side's values
 * of rows without a partner are zeroed (sums skip them as the CPU's do). */
static int gather_rest(sl_task_t *t, const struct join_state *st, struct gj *g, struct gj_out *o)
{
    cudaStream_t s = sl_task_stream(t);
    for (int side = 0; side < 2; side++) {
        struct gj_side *sd = &g->s[side];
        for (int j = sd->id_word ? sd->n_row : sd->n_pay; j < sd->n_pay; j++) {
            if (sd->pay_w[j] == 0) { /* a string: gathered with its bytes */
                int64_t valid = g->kind == SL_K_JOIN_LEFT && side == g->build ? o->inner : o->count;
                int oc = out_index(g->d, side, sd->pay_col[j]);
                int rc = o->batch ? gj_gather_strings(t, st, g, side, sd->pay_col[j], o->ids[side],
                                                      o->count, valid, o->batch, oc)
                                  : SL_OK;
                if (rc < 0)
                    return rc;
                continue;
            }
            const void *src;
            void *owned;
            int rc = gj_side_column(t, st, side, sd, sd->pay_col[j], &src, &owned);
            if (rc < 0)
                return rc;
            SL_TASK_CUDA_TRY(t,
                             sl_k_gather_width(src, o->ids[side], o->pay_dest[side][j],
                                               sd->pay_w[j], o->count, s),
                             "gathering payloads");
            sl_task_device_free(t, owned);
        }
        if (g->kind == SL_K_JOIN_LEFT && side == g->build && sd->id_word && o->count > o->inner)
            for (int j = sd->n_row; j < sd->n_pay; j++)
                SL_TASK_CUDA_TRY(
                    t,
                    cudaMemsetAsync((char *)o->pay_dest[side][j] + (size_t)o->inner * sd->pay_w[j],
                                    0, (size_t)(o->count - o->inner) * sd->pay_w[j], s),
                    "zeroing null values");
    }
    return SL_OK;
}

/* Left outer: the build side's columns are valid for rows [0, inner) (one device bitmap
 * shared by those columns). */
static int left_validity(sl_task_t *t, struct gj *g, struct gj_out *o)
{
    const struct join_data *d = g->d;
    int64_t bytes = (o->cap + 7) / 8;
    sl_schema_t *sc = sl__schema_new(1);
    if (!sc || sl__schema_set(sc, 0, "validity", SL_TYPE_INT32) < 0) {
        sl__schema_free(sc);
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    }
    sl_batch_t *vb = sl_task_new_batch(t, sc, (bytes + 3) / 4);
    sl__schema_free(sc);
    if (!vb)
        return SL_ENOMEM;
    unsigned char *v = sl__col_values(vb, 0);
    cudaStream_t s = sl_task_stream(t);
    int64_t full = o->inner / 8;
    cudaError_t e = SL_TASK_CUDA_CALL(cudaMemsetAsync(v, 0xff, (size_t)full, s));
    if (e == cudaSuccess && bytes > full)
        e = SL_TASK_CUDA_CALL(cudaMemsetAsync(v + full, 0, (size_t)(bytes - full), s));
    if (e == cudaSuccess && o->inner % 8)
        e = SL_TASK_CUDA_CALL(cudaMemsetAsync(v + full, (1 << (o->inner % 8)) - 1, 1, s));
    for (int oc = 0; e == cudaSuccess && oc < d->n_out; oc++) {
        if (d->out[oc].side != g->build || from_key(g, &d->out[oc]))
            continue;
        sl__buf_ref(vb->cols[0].data);
        o->batch->cols[oc].validity = vb->cols[0].data;
        o->batch->cols[oc].null_count = -1;
    }
    sl_batch_unref(vb);
    return e == cudaSuccess ? SL_OK : SL_TASK_CUDA_FAIL(t, e, "validity");
}

static int copies(sl_task_t *t, const struct gj *g, struct gj_out *o)
{
    for (int oc = 0; oc < g->d->n_out; oc++)
        if (o->copy_of[oc] >= 0 && o->count > 0)
            SL_TASK_CUDA_TRY(t,
                             cudaMemcpyAsync(o->dest[oc], o->dest[o->copy_of[oc]],
                                             (size_t)o->count * sl_type_width(g->d->out[oc].type),
                                             cudaMemcpyDeviceToDevice, sl_task_stream(t)),
                             "copying a column");
    return SL_OK;
}

/* output=aggregate: count and the sums of the output columns, as the CPU computes them. */
static int aggregate(sl_task_t *t, struct join_state *st, const struct gj *g,
                     struct gj_out *o)
{
    const struct join_data *d = st->d;
    cudaStream_t s = sl_task_stream(t);
    memset(&st->total, 0, sizeof st->total);
    st->total.count = o->count;
    if (o->count == 0)
        return SL_OK;
    unsigned long long *acc = sl_task_device_alloc(t, 2 * sizeof *acc);
    if (!acc)
        return SL_ENOMEM;
    int rc = SL_OK;
    for (int oc = 0; oc < d->n_out && rc >= 0; oc++) {
        const void *vals = o->dest[oc];
        const struct join_ocol *c = &d->out[oc];
        cudaError_t e = SL_TASK_CUDA_CALL(cudaMemsetAsync(acc, 0, 2 * sizeof *acc, s));
        if (e == cudaSuccess) {
            switch (join_gpu_type(c->type)) {
            case SL_TYPE_INT32:
                e = SL_TASK_CUDA_CALL(sl_k_sum_i32(vals, o->count, (long long *)acc, s));
                break;
            case SL_TYPE_INT64:
                e = SL_TASK_CUDA_CALL(sl_k_sum_i64_exact(vals, o->count, acc, s));
                break;
            case SL_TYPE_FLOAT32:
                e = SL_TASK_CUDA_CALL(sl_k_sum_f32(vals, o->count, (double *)acc, s));
                break;
            default: e = SL_TASK_CUDA_CALL(sl_k_sum_f64(vals, o->count, (double *)acc, s)); break;
            }
        }
        unsigned long long h[2] = {0, 0};
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(cudaMemcpyAsync(h, acc, sizeof h, cudaMemcpyDeviceToHost, s));
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(cudaStreamSynchronize(s));
        if (e != cudaSuccess) {
            rc = SL_TASK_CUDA_FAIL(t, e, "summing");
            break;
        }
        enum sl_type gt = join_gpu_type(c->type);
        if (gt == SL_TYPE_INT32)
            st->total.isum[oc] = (int64_t)h[0];
        else if (gt == SL_TYPE_INT64)
            st->total.isum[oc] = (__int128)(((unsigned __int128)h[1] << 64) | h[0]);
        else
            memcpy(&st->total.fsum[oc], &h[0], sizeof(double));
        /* No nulls come to the GPU: every row has a value, but a left join's build side
         * only on rows with a partner. */
        st->total.nonnull[oc] =
            g->kind == SL_K_JOIN_LEFT && c->side == g->build ? o->inner : o->count;
    }
    sl_task_device_free(t, acc);
    return rc;
}

/* ---------------- phase times (debug_join_phase_times) ---------------- */

enum { PH_START, PH_PREPARED, PH_PARTITIONED, PH_JOINED, PH_DONE, PH_N };

struct phases {
    int on;
    cudaEvent_t ev[PH_N];
    int n;
    double t0;                          /* join_now_ms() at the start */
};

static void phases_init(struct phases *p, sl_task_t *t)
{
    memset(p, 0, sizeof *p);
    int64_t on = 0;
    sl_task_option_int(t, "debug_join_phase_times", &on);
    p->on = on != 0;
    p->t0 = join_now_ms();
    for (int i = 0; p->on && i < PH_N; i++)
        if (cudaEventCreate(&p->ev[i]) != cudaSuccess)
            p->on = 0;
    if (p->on)
        cudaEventRecord(p->ev[0], sl_task_stream(t));
    p->n = 1;
}

static void phase_mark(struct phases *p, sl_task_t *t, int i)
{
    if (p->on && i == p->n && cudaEventRecord(p->ev[i], sl_task_stream(t)) == cudaSuccess)
        p->n = i + 1;
}

/* Adds the choices to the profile, and the phases: the GPU's between events, and
 * "finalize" the host's time for the whole finalize (its launches and waits included). */
static void phases_report(struct phases *p, sl_task_t *t, const struct gj *g, int rc)
{
    if (g->hashed)
        sl_task_profile_value(t, "key_hash_seeds", g->hash_attempts);
    if (rc == GJ_HASH_COLLIDED)
        sl_task_profile_value(t, "key_hash_collided", 1);
    if (rc == SL_OK) {
        sl_task_profile_value(t, "gpu_algo", g->algo);
        sl_task_profile_value(t, "radix_bits", g->bits);
        sl_task_profile_value(t, "begin_bit", g->begin);
        sl_task_profile_value(t, "probe_rows", g->s[1 - g->build].n);
        sl_task_profile_value(t, "build_rows", g->s[g->build].n);
        if (g->filter_passes)
            sl_task_profile_value(t, "filter_passes", g->filter_passes);
        if (g->algo == GJ_NPJ) /* 0 hash table, 1 direct table of rows, 2 with values */
            sl_task_profile_value(t, "npj_kind", g->range ? (g->dval ? 2 : 1) : 0);
        if (g->dense_dup) /* auto's direct table met a key twice: PHJ ran */
            sl_task_profile_value(t, "npj_dense_dup", 1);
    }
    if (!p->on)
        return;
    static const char *const names[PH_N] = {"", "prepare", "partition", "join", "materialize"};
    if (rc >= 0 && p->n == PH_N && cudaEventSynchronize(p->ev[PH_N - 1]) == cudaSuccess) {
        for (int i = 1; i < PH_N; i++) {
            float ms = 0;
            cudaEventElapsedTime(&ms, p->ev[i - 1], p->ev[i]);
            sl_task_phase_time(t, names[i], ms);
        }
        sl_task_phase_time(t, "finalize", join_now_ms() - p->t0);
    }
    for (int i = 0; i < PH_N; i++)
        if (p->ev[i])
            cudaEventDestroy(p->ev[i]);
}

/* ---------------- finalize ---------------- */

/* The string columns of an output of no rows: their one offset, 0. */
static int empty_strings(sl_task_t *t, struct gj_out *o)
{
    for (int oc = 0; oc < o->batch->n_cols; oc++)
        if (gj_str_type(o->batch->cols[oc].type))
            SL_TASK_CUDA_TRY(t, cudaMemsetAsync(sl__col_values(o->batch, oc), 0,
                                                o->batch->cols[oc].type == SL_TYPE_UTF8 ? 4 : 8,
                                                sl_task_stream(t)),
                             "empty output strings");
    return SL_OK;
}

/* After GJ_DENSE_DUP (nothing packed or written yet): the plan as PHJ. */
static void back_to_phj(struct gj *g)
{
    g->algo = GJ_PHJ;
    g->dense_auto = g->dval = 0;
    g->dense_dup = 1;
    g->range = 0;
    g->rows_ready = 0;
    for (int s = 0; s < 2; s++)
        g->s[s].n_row = g->s[s].id_word = g->s[s].bytes = 0;
    layout(g, g->s[g->build].n);
}

static int finalize(sl_task_t *t, struct join_state *st, struct gj *g, struct gj_out *o,
                    struct phases *ph)
{
    const struct join_data *d = st->d;
    int rc = plan(t, st, g);
    if (rc >= 0)
        rc = gj_prepare(t, st, g);
    if (rc >= 0 && g->hashed && (rc = gj_hash_keys(t, st, g)) == GJ_HASH_COLLIDED)
        return rc; /* the CPU joins instead */
    gj_step(t, g, "prepare_keys");
    /* Rows packed after the filter (only the kept ones), or before it as they were
     * (debug_join_filter=range) */
    int packed_first = gj_filter_mode(t) == GJ_FILTER_RANGE;
again:
    if (rc >= 0 && packed_first) {
        rc = gj_prepare_rows(t, st, g);
        gj_step(t, g, "prepare_rows");
    }
    if (rc >= 0)
        rc = gj_filter_probe(t, st, g); /* PHJ inner/semi at low match ratios */
    if (rc >= 0 && !packed_first)
        rc = gj_prepare_rows(t, st, g);
    if (rc < 0)
        return rc;
    gj_step(t, g, "prepare_rows");
    phase_mark(ph, t, PH_PREPARED);
    struct gj_side *R = &g->s[g->build], *S = &g->s[1 - g->build];
    if (R->n == 0 || S->n == 0) { /* anti/left with an empty build side stay on the CPU */
        phase_mark(ph, t, PH_PARTITIONED);
        phase_mark(ph, t, PH_JOINED);
        if (!d->aggregate && ((rc = out_alloc(t, g, o, 0)) < 0 || (rc = empty_strings(t, o)) < 0))
            return rc;
    } else {
        if (g->algo == GJ_PHJ && (rc = gj_pick_bits(t, g)) < 0)
            return rc;
        if (g->algo != GJ_NPJ && (rc = gj_transform(t, g)) < 0)
            return rc;
        phase_mark(ph, t, PH_PARTITIONED);
        unsigned long long *d_count = sl_task_device_alloc(t, 2 * sizeof *d_count);
        if (!d_count)
            return SL_ENOMEM;
        SL_TASK_CUDA_TRY(t, cudaMemsetAsync(d_count, 0, 2 * sizeof *d_count, sl_task_stream(t)),
                         "counts");
        rc = g->algo == GJ_SMJ ? merge_join(t, g, o, d_count) : hash_join(t, g, o, d_count, st);
        sl_task_device_free(t, d_count);
        if (rc == GJ_DENSE_DUP) { /* auto's direct table met a key twice: PHJ */
            back_to_phj(g);
            rc = SL_OK;
            goto again;
        }
        if (rc < 0)
            return rc;
        phase_mark(ph, t, PH_JOINED);
        gj_sides_release(t, g); /* partitioned copies: consumed */
        if ((rc = gather_rest(t, st, g, o)) < 0 || (rc = copies(t, g, o)) < 0)
            return rc;
        if (!d->aggregate && g->kind == SL_K_JOIN_LEFT && (rc = left_validity(t, g, o)) < 0)
            return rc;
    }
    if (d->aggregate)
        rc = aggregate(t, st, g, o);
    else if (!(st->gpu_out = sl_task_batch_slice(t, o->batch, 0, o->count)))
        rc = SL_ENOMEM;
    phase_mark(ph, t, PH_DONE);
    return rc;
}

int join_finalize_cuda(sl_task_t *t)
{
    if (((const struct join_data *)sl_op_data(sl_task_op(t)))->kind == JOIN_CROSS)
        return join_cross_gpu_finalize(t);
    join_profile_sink(t, sl_task_gstate(t));
    if (join_stream_can_run(t)) /* host-resident probe side: join_cuda_stream.c */
        return join_stream_finalize(t);
    if (!fits_in_gpu(t) && join_smj_ooc_can_run(t)) /* algo=sortmerge */
        return join_smj_ooc_finalize(t);
    if (!fits_in_gpu(t) && join_ooc_can_run(t))
        return join_ooc_finalize(t);
    struct join_state *st = sl_task_gstate(t);
    st->d = sl_op_data(sl_task_op(t));
    st->gpu = 1;
    for (int s = 0; s < 2; s++)
        st->side[s].n_rows = join_side_rows(&st->side[s]);
    if (sl__task_n_devices(t) > 1) { /* several devices: join_mg_cuda.c, or why not */
        struct sl__mg_pick pick;
        int why = join_mg_choice(t, &pick);
        sl_task_profile_value(t, "multi_device_fallback", why);
        if (why == 0)
            return join_mg_finalize(t, &pick);
    }
    struct gj g;
    struct gj_out o;
    struct phases ph;
    memset(&g, 0, sizeof g);
    memset(&o, 0, sizeof o);
    phases_init(&ph, t);
    gj_steps_begin(t, &g, ph.on);
    int rc = finalize(t, st, &g, &o, &ph);
    phases_report(&ph, t, &g, rc);
    gj_steps_end(t, &g, ph.on && rc >= 0);
    gj_sides_free(t, &g);
    out_free(t, &o);
    if (rc == GJ_HASH_COLLIDED) { /* two different keys share a hash: the CPU joins */
        st->gpu = 0;
        return join_finalize(t);
    }
    return rc;
}

/* ---------------- source ---------------- */

/* The device result goes in morsels as sl__task_result_morsel_rows cuts it: one of up to
 * 2^28 rows where every later stage runs on its GPU (a slice each, nothing copied: 16 Mi
 * morsels made a 2^27-row result 8 GPU tasks in a row), the pipeline's size else. */
int64_t join_gpu_source_tasks(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    if (st->ooc)
        return join_ooc_source_tasks(t);
    if (!st->gpu_out)
        return 0;
    int64_t n = sl_batch_num_rows(st->gpu_out), m = sl__task_result_morsel_rows(t, st->gpu_out);
    return n / m + (n % m != 0); /* rounded up without overflow */
}

/* One morsel of the device result: on the GPU as it is, or downloaded for a host task. */
int join_gpu_source(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    if (st->d->aggregate)
        return join_emit_aggregate(t, st);
    if (st->ooc)
        return join_ooc_source(t);
    int64_t n = sl_batch_num_rows(st->gpu_out), m = sl__task_result_morsel_rows(t, st->gpu_out);
    return sl__emit_rows(t, st->gpu_out, sl_task_index(t) * m,
                         sl__morsel_len(n, m, sl_task_index(t)));
}

/* ---------------- the definition CUDA builds register (join/meson.build) ---------------- */

static void fini_global(const sl_op_t *op, void *gs)
{
    join_fini_global(op, gs);
    join_ooc_free(gs);
    join_smj_ooc_free(gs);
}

/* The source emits the out-of-core or GPU result when finalize made one, else the
 * CPU's. */
static int64_t source_tasks(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    const struct join_data *d = sl_op_data(sl_task_op(t));
    if (st->smj_ooc)
        return join_smj_ooc_source_tasks(t);
    if (st->cross_gpu)
        return join_cross_gpu_source_tasks(t);
    if (st->gpu && !d->aggregate)
        return join_gpu_source_tasks(t);
    return join_source_tasks(t);
}

static int source_any(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    if (st->smj_ooc)
        return join_smj_ooc_source(t);
    if (st->cross_gpu)
        return join_cross_gpu_source(t);
    if (st->gpu)
        return join_gpu_source(t);
    return join_source(t);
}

/* On a GPU the sink keeps references to device batches (the runtime uploaded them) and
 * the source emits the device result only when finalize ran there. */
static int gpu_source_can_run(const sl_task_t *t)
{
    return ((const struct join_state *)sl_task_gstate((sl_task_t *)t))->gpu;
}

/* A GPU worker's input batches: the nulls of computed columns (a GPU projection leaves
 * their count unknown) are counted on its GPU before they join the global state, so
 * can_run knows whether the GPU can take the join (TPC-H Q10's and Q14's revenue
 * columns kept their joins on the host). */
static int combine_cuda(sl_task_t *t)
{
    int rc = gj_count_unknown_nulls(t, sl_op_data(sl_task_op(t)), sl_task_lstate(t));
    return rc < 0 ? rc : join_combine(t);
}

static const struct sl_impl def_combine[] = {SL__IMPL_CPU(join_combine),
                                             SL__IMPL_CUDA(combine_cuda, NULL)};
SL__IMPLS_CPU_CUDA(def_sink, join_sink, join_sink, join_gpu_sink_can_run);
SL__IMPLS_CPU_CUDA(def_finalize, join_finalize, join_finalize_cuda, join_gpu_can_run);
SL__IMPLS_CPU_CUDA(def_source, source_any, source_any, gpu_source_can_run);
SL__SINK_SOURCE_DEF(sl__join_cuda_def, JOIN_DEF_FIELDS, (source_tasks, fini_global),
                    sl__cost_linear, def_sink, def_combine, def_finalize, def_source);
