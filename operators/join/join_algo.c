/* The join algorithms' parallel phases.
 *
 * Radix hash join (Balkesen et al.'s PRO): both sides are partitioned in one pass by the
 * top `bits` bits of a multiplicative hash of the key, through per-task histograms,
 * a prefix sum and a scatter with software write-combining buffers; partitions are sized
 * so that a build partition and its chained table fit in L2. Each probe work item
 * builds the table of its partitions and probes them.
 * Sort-merge join: the same hash partitioning (equal keys share a partition), then each
 * partition of both sides is LSD-radix-sorted by key and the pairs are merged. Sorting
 * within hash partitions keeps the sort in cache and the merge parallel.
 * No-partitioning hash join (NPO): one shared open-addressing table over the build side,
 * built lock-free by all workers; the probe side is read straight from its batches.
 *
 * Probe work items cover a range of small partitions, or a chunk of the probe tuples of
 * one large (skewed) partition, so skew spreads over the workers.
 */
#include <string.h>

#include "common/op_common.h"
#include "join_int.h"

#define TMPL_FN static __attribute__((unused))

/* Writes one full write-combining line (64 bytes, 8-byte aligned source and destination)
 * with non-temporal stores: the partitioned output is not read again soon, and streaming
 * skips reading each destination line before writing it. */
static inline void join_stream_line(void *dst, const void *src)
{
#if defined(__x86_64__)
    long long *d = dst;
    const long long *s = src;
    for (int i = 0; i < 8; i++)
        __builtin_ia32_movnti64(d + i, s[i]);
#else
    memcpy(dst, src, 64);
#endif
}

#define TUP_WORDS 0
#define TUP struct join_t8
#define SVAL int32_t
#define FN(x) x##_8
#include "join_tmpl.h"
#undef TUP
#undef SVAL
#undef FN

#define TUP struct join_t16
#define SVAL int64_t
#define FN(x) x##_16
#include "join_tmpl.h"
#undef TUP
#undef SVAL
#undef FN
#undef TUP_WORDS

#define TUP_WORDS 1
#define TUP struct join_t32
#define SVAL int64_t
#define FN(x) x##_32
#include "join_tmpl.h"
#undef TUP
#undef SVAL
#undef FN
#undef TUP_WORDS

#define EMPTY8 0x9E3779B9ull
#define EMPTY16 0x9E3779B97F4A7C15ull

/* Bytes of a build partition plus its table: half of one core's L2 (1 MiB on a 2 MiB L2,
 * 256 KiB on a 512 KiB one, where 1 MiB partitions made the probe wait on L3 for most
 * build tuples), so that the probe's stream and output share the rest. */
static int64_t join_part_bytes(void)
{
    int64_t b = sl__cpu_cache_bytes(2) / 2;
    return b < (128 << 10) ? 128 << 10 : b;
}

static size_t tup_bytes(const struct join_state *st)
{
    return st->shape.str16  ? sizeof(struct join_t32)
           : st->shape.wide ? sizeof(struct join_t16)
                            : sizeof(struct join_t8);
}

static int64_t task_rows(int64_t n, int64_t tasks, int64_t i)
{
    return (int64_t)((__int128)n * i / tasks);
}

/* ---------------- partitioned algorithms ---------------- */

static int part_hist_task(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    int64_t i = sl_task_index(t);
    int s = (int)(i / st->n_ptasks), k = (int)(i % st->n_ptasks);
    int64_t n = st->side[s].n_rows;
    int64_t *h = st->hist[s] + (int64_t)k * (st->fanout + 1);
    int64_t lo = task_rows(n, st->n_ptasks, k), hi = task_rows(n, st->n_ptasks, k + 1);
    if (st->shape.str16)
        part_hist_32(st, s, lo, hi, h);
    else if (st->shape.wide)
        part_hist_16(st, s, lo, hi, h);
    else
        part_hist_8(st, s, lo, hi, h);
    return SL_OK;
}

static int part_scatter_task(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    int64_t i = sl_task_index(t);
    int s = (int)(i / st->n_ptasks), k = (int)(i % st->n_ptasks);
    int64_t n = st->side[s].n_rows;
    int64_t *pos = st->hist[s] + (int64_t)k * (st->fanout + 1);
    int64_t lo = task_rows(n, st->n_ptasks, k), hi = task_rows(n, st->n_ptasks, k + 1);
    /* Write-combining buffers of 4 lines a partition up to 1,024 partitions (256 KiB,
     * in L2), else 2 or 1: a full buffer is a branch the predictor misses, and flushing
     * 4 lines at a time instead of 1 made a one-thread model of the 2^24-row scatter
     * 44 -> 32 ms. */
    int lines = st->fanout <= 1024 ? 4 : st->fanout <= 2048 ? 2 : 1;
    size_t buf_bytes = (size_t)(st->fanout + 1) * 64 * (size_t)lines;
    void *buf = sl__malloc(buf_bytes);
    uint8_t *fill = sl__malloc((size_t)st->fanout + 1);
    if (!buf || !fill) {
        sl__free(buf, buf_bytes);
        sl__free(fill, 0);
        return sl_task_fail(t, SL_ENOMEM, "out of memory for partitioning buffers");
    }
    if (st->shape.str16)
        part_scatter_32(st, s, lo, hi, pos, st->tup[s], buf, fill, lines);
    else if (st->shape.wide)
        part_scatter_16(st, s, lo, hi, pos, st->tup[s], buf, fill, lines);
    else
        part_scatter_8(st, s, lo, hi, pos, st->tup[s], buf, fill, lines);
#if defined(__x86_64__)
    __builtin_ia32_sfence(); /* streamed lines visible before the phase completes */
#endif
    sl__free(buf, buf_bytes);
    sl__free(fill, 0);
    return SL_OK;
}

static int part_sort_task(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    int64_t i = sl_task_index(t), n = sl_task_count(t);
    int64_t p0 = task_rows(st->fanout, n, i), p1 = task_rows(st->fanout, n, i + 1);
    for (int s = 0; s < 2; s++) {
        for (int64_t p = p0; p < p1; p++) {
            int64_t o = st->off[s][p], c = st->off[s][p + 1] - o;
            if (st->shape.wide)
                sort_part_16((struct join_t16 *)st->tup[s] + o, (struct join_t16 *)st->tmp[s] + o,
                             c);
            else
                sort_part_8((struct join_t8 *)st->tup[s] + o, (struct join_t8 *)st->tmp[s] + o, c);
        }
    }
    return SL_OK;
}

static void add_work(struct join_state *st, int64_t p0, int64_t p1, int64_t lo, int64_t hi)
{
    st->work[st->n_work++] = (struct join_work){p0, p1, lo, hi};
}

/* Work items over partitions: runs of small partitions up to `target` tuples, chunks
 * of `target` probe tuples for larger ones, and the probe side's null-key bucket when
 * the kind outputs unmatched rows. */
static int part_plan(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    int b = st->build, p = 1 - b;
    int64_t total = st->side[0].n_rows + st->side[1].n_rows;
    int64_t target = total / 64 > 16384 ? total / 64 : 16384;
    const int64_t *ob = st->off[b], *op = st->off[p];
    int64_t F = st->fanout;
    /* Runs of partitions: at most F; chunks of large partitions and of the null bucket:
     * at most 3 * rows / target + 1 (each chunk but the last of a partition is full). */
    int64_t max_items = F + 3 * (st->side[p].n_rows / target) + 4;
    st->work = sl_task_alloc(t, (size_t)max_items * sizeof *st->work);
    if (!st->work)
        return SL_ENOMEM;
    for (int64_t q = 0; q < F;) {
        int64_t np = op[q + 1] - op[q];
        if (np > target) {
            for (int64_t lo = op[q]; lo < op[q + 1]; lo += target)
                add_work(st, q, q + 1, lo, lo + target < op[q + 1] ? lo + target : op[q + 1]);
            q++;
            continue;
        }
        int64_t start = q, acc = 0;
        while (q < F) {
            int64_t sz = (op[q + 1] - op[q]) + (ob[q + 1] - ob[q]);
            if (op[q + 1] - op[q] > target || (q > start && acc + sz > target))
                break;
            acc += sz;
            q++;
        }
        add_work(st, start, q, -1, -1);
    }
    int kind = st->d->kind;
    if (join_kind_alone(kind)) {
        for (int64_t lo = op[F]; lo < op[F + 1]; lo += target)
            add_work(st, F, F + 1, lo, lo + target < op[F + 1] ? lo + target : op[F + 1]);
    }
    return join_after_build(t);
}

static const struct sl_impl part_plan_impl[] = {{.device = SL_DEVICE_CPU, .run = part_plan}};
static const struct sl_phase part_plan_phase = {part_plan_impl, 1, NULL};
static const struct sl_impl part_sort_impl[] = {{.device = SL_DEVICE_CPU, .run = part_sort_task}};
static const struct sl_phase part_sort_phase = {part_sort_impl, 1, NULL};

static int part_after_scatter(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    if (st->algo == JOIN_SORTMERGE) {
        int64_t n = st->fanout < 64 ? st->fanout : 64;
        return sl_task_spawn(t, &part_sort_phase, n, NULL, &part_plan_phase);
    }
    return part_plan(t);
}

static const struct sl_impl part_scatter_impl[] = {
    {.device = SL_DEVICE_CPU, .run = part_scatter_task}};
static const struct sl_phase part_scatter_phase = {part_scatter_impl, 1, NULL};
static const struct sl_impl part_after_scatter_impl[] = {
    {.device = SL_DEVICE_CPU, .run = part_after_scatter}};
static const struct sl_phase part_after_scatter_phase = {part_after_scatter_impl, 1, NULL};

/* Histograms -> partition starts off[s][p] and each task's write positions (in place
 * of its histogram): partition-major, task-minor. */
static int part_prefix(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    int64_t F = st->fanout;
    for (int s = 0; s < 2; s++) {
        int64_t sum = 0;
        for (int64_t p = 0; p <= F; p++) {
            st->off[s][p] = sum;
            for (int k = 0; k < st->n_ptasks; k++) {
                int64_t *h = st->hist[s] + (int64_t)k * (F + 1) + p;
                int64_t c = *h;
                *h = sum;
                sum += c;
            }
        }
        st->off[s][F + 1] = sum;
    }
    return sl_task_spawn(t, &part_scatter_phase, 2 * st->n_ptasks, NULL,
                         &part_after_scatter_phase);
}

static const struct sl_impl part_hist_impl[] = {{.device = SL_DEVICE_CPU, .run = part_hist_task}};
static const struct sl_phase part_hist_phase = {part_hist_impl, 1, NULL};
static const struct sl_impl part_prefix_impl[] = {{.device = SL_DEVICE_CPU, .run = part_prefix}};
static const struct sl_phase part_prefix_phase = {part_prefix_impl, 1, NULL};

/* Radix bits: build bytes per partition (tuples + chained table: 4 bytes of next and
 * 2 to 4 heads of 4 bytes a tuple, about 12) at most P = join_part_bytes(), i.e.
 * bits = ceil(log2(ceil(build rows * (tuple + 12) / P))), between 1 and 12 (4096
 * partitions keep the write-combining buffers in L2); one pass. */
int join_part_start(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    int64_t nb = st->side[st->build].n_rows, pb = join_part_bytes();
    int bits = join_log2_ceil((nb * (int64_t)(tup_bytes(st) + 12) + pb - 1) / pb);
    st->bits = bits < 1 ? 1 : bits > 12 ? 12 : bits;
    st->fanout = (int64_t)1 << st->bits;
    int64_t maxn = st->side[0].n_rows > st->side[1].n_rows ? st->side[0].n_rows
                                                           : st->side[1].n_rows;
    st->n_ptasks = (int)(maxn / 65536 < 1 ? 1 : maxn / 65536 > 16 ? 16 : maxn / 65536);
    for (int s = 0; s < 2; s++) {
        size_t hb = (size_t)st->n_ptasks * (size_t)(st->fanout + 1) * sizeof(int64_t);
        st->hist[s] = sl_task_alloc(t, hb);
        st->off[s] = sl_task_alloc(t, (size_t)(st->fanout + 2) * sizeof(int64_t));
        st->tup[s] = sl_task_alloc(t, (size_t)(st->side[s].n_rows + 1) * tup_bytes(st));
        if (!st->hist[s] || !st->off[s] || !st->tup[s])
            return SL_ENOMEM;
        memset(st->hist[s], 0, hb);
        if (st->algo == JOIN_SORTMERGE &&
            !(st->tmp[s] = sl_task_alloc(t, (size_t)(st->side[s].n_rows + 1) * tup_bytes(st))))
            return SL_ENOMEM;
    }
    return sl_task_spawn(t, &part_hist_phase, 2 * st->n_ptasks, NULL, &part_prefix_phase);
}

/* Probes partitions [p0, p1) (or probe tuples [lo, hi) of p0). */
static void part_probe_range(struct join_emit *e, const struct join_work *w)
{
    struct join_state *st = e->st;
    int b = st->build, p = 1 - b;
    size_t tb = tup_bytes(st);
    const char *B = st->tup[b], *P = st->tup[p];
    if (w->p0 == st->fanout) { /* null keys: unmatched by definition */
        for (int64_t i = w->lo; i < w->hi && e->rc >= 0; i++) {
            /* k and v lead every layout: read them at the tuple's size. */
            const char *tp = P + (size_t)i * tb;
            uint64_t v = st->shape.wide ? ((const struct join_t16 *)tp)->v
                                        : ((const struct join_t8 *)tp)->v;
            uint64_t k = st->shape.wide ? ((const struct join_t16 *)tp)->k
                                        : ((const struct join_t8 *)tp)->k;
            if (e->vinl)
                v = st->shape.wide ? v : (uint64_t)(int64_t)(int32_t)(uint32_t)v;
            join_emit_alone(e, k, v);
        }
        return;
    }
    int64_t maxb = 1;
    for (int64_t q = w->p0; q < w->p1; q++)
        if (st->off[b][q + 1] - st->off[b][q] > maxb)
            maxb = st->off[b][q + 1] - st->off[b][q];
    uint32_t *heads = NULL, *next = NULL;
    size_t hbytes = 0;
    if (st->algo == JOIN_RADIX) {
        hbytes = ((size_t)2 << join_log2_ceil(maxb < 2 ? 2 : maxb)) * sizeof *heads;
        heads = sl__malloc(hbytes);
        next = sl__malloc((size_t)maxb * sizeof *next);
        if (!heads || !next) {
            sl__free(heads, hbytes);
            sl__free(next, 0);
            e->rc = sl_task_fail(e->task, SL_ENOMEM, "out of memory for a hash table");
            return;
        }
    }
    for (int64_t q = w->p0; q < w->p1 && e->rc >= 0; q++) {
        int64_t bo = st->off[b][q], bn = st->off[b][q + 1] - bo;
        int64_t po = w->lo >= 0 ? w->lo : st->off[p][q];
        int64_t pn = (w->lo >= 0 ? w->hi : st->off[p][q + 1]) - po;
        const void *Bq = B + bo * tb, *Pq = P + po * tb;
        if (st->algo == JOIN_RADIX) {
            if (st->shape.str16)
                probe_hash_32(e, Bq, bn, Pq, pn, heads, next);
            else if (st->shape.wide)
                probe_hash_16(e, Bq, bn, Pq, pn, heads, next);
            else
                probe_hash_8(e, Bq, bn, Pq, pn, heads, next);
        } else if (st->shape.wide) {
            probe_merge_16(e, Bq, bn, Pq, pn);
        } else {
            probe_merge_8(e, Bq, bn, Pq, pn);
        }
    }
    sl__free(heads, hbytes);
    sl__free(next, 0);
}

int join_part_probe(sl_task_t *t, struct join_state *st, int64_t w, struct join_acc *acc)
{
    struct join_emit e;
    if (join_emit_init(&e, st, t, acc) < 0)
        return SL_ENOMEM;
    const struct join_work *wk = &st->work[w];
    const int64_t *op = st->off[1 - st->build];
    e.expect = wk->lo >= 0 ? wk->hi - wk->lo : op[wk->p1] - op[wk->p0];
    part_probe_range(&e, wk);
    join_emit_flush(&e);
    join_emit_fini(&e);
    return e.rc;
}

/* ---------------- no-partitioning hash join ---------------- */

static uint64_t np_empty(const struct join_state *st)
{
    return st->shape.wide ? EMPTY16 : EMPTY8;
}

static int np_fill_task(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    int64_t slots = (int64_t)1 << st->tbits, n = sl_task_count(t), i = sl_task_index(t);
    int64_t lo = task_rows(slots, n, i), hi = task_rows(slots, n, i + 1);
    if (st->shape.wide) {
        struct join_t16 *tab = st->table;
        for (int64_t j = lo; j < hi; j++)
            tab[j].k = EMPTY16;
    } else {
        struct join_t8 *tab = st->table;
        for (int64_t j = lo; j < hi; j++)
            tab[j].k = (uint32_t)EMPTY8;
    }
    return SL_OK;
}

static int np_insert_task(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    int s = st->build;
    const struct join_side *sd = &st->side[s];
    int64_t n = sl_task_count(t), i = sl_task_index(t);
    int64_t lo = task_rows(sd->n_rows, n, i), hi = task_rows(sd->n_rows, n, i + 1);
    uint64_t k[JOIN_CHUNK], v[JOIN_CHUNK];
    uint8_t nul[JOIN_CHUNK];
    int64_t bi = join_first_batch(sd, lo);
    uint64_t empty = np_empty(st);
    uint64_t tb = tup_bytes(st);
    for (int64_t r = lo; r < hi;) {
        int64_t in, c = join_next_load(sd, r, hi, &bi, &in);
        join_load(st, s, bi, in, c, k, v, nul, NULL);
        for (int64_t j = 0; j < c; j++) {
            /* A table past L2 misses on almost every insert: fetch the slot ahead. */
            if (j + 16 < c)
                __builtin_prefetch((const char *)st->table +
                                       (join_hash(k[j + 16]) >> (64 - st->tbits)) * tb, 1);
            if (nul[j])
                continue;
            if (st->filter) { /* keys of the side list too: a filter miss is no match */
                uint64_t bits, w = join_filter_word(k[j], st->fbits, &bits);
                __atomic_fetch_or(&st->filter[w], bits, __ATOMIC_RELAXED);
            }
            if (st->shape.wide)
                np_insert_16(st, st->table, st->tbits, k[j], v[j], empty);
            else
                np_insert_8(st, st->table, st->tbits, k[j], v[j], empty);
        }
        r += c;
    }
    if (st->side_oom)
        return sl_task_fail(t, SL_ENOMEM, "out of memory for the hash table's side list");
    return SL_OK;
}

/* Probe work: morsels of the probe side's batches. */
static int np_plan(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    const struct join_side *sd = &st->side[1 - st->build];
    int64_t m = st->morsel, n = 0;
    for (int64_t i = 0; i < sd->n_batches; i++)
        n += (sd->batches[i]->n_rows + m - 1) / m;
    st->work = sl_task_alloc(t, (size_t)(n + 1) * sizeof *st->work);
    if (!st->work)
        return SL_ENOMEM;
    for (int64_t i = 0; i < sd->n_batches; i++)
        for (int64_t lo = 0; lo < sd->batches[i]->n_rows; lo += m)
            add_work(st, i, i + 1, lo,
                     lo + m < sd->batches[i]->n_rows ? lo + m : sd->batches[i]->n_rows);
    return join_after_build(t);
}

static const struct sl_impl np_plan_impl[] = {{.device = SL_DEVICE_CPU, .run = np_plan}};
static const struct sl_phase np_plan_phase = {np_plan_impl, 1, NULL};
static const struct sl_impl np_insert_impl[] = {{.device = SL_DEVICE_CPU, .run = np_insert_task}};
static const struct sl_phase np_insert_phase = {np_insert_impl, 1, NULL};

static int np_build(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    int64_t n = st->side[st->build].n_rows / 65536;
    n = n < 1 ? 1 : n > 32 ? 32 : n;
    return sl_task_spawn(t, &np_insert_phase, n, NULL, &np_plan_phase);
}

static const struct sl_impl np_fill_impl[] = {{.device = SL_DEVICE_CPU, .run = np_fill_task}};
static const struct sl_phase np_fill_phase = {np_fill_impl, 1, NULL};
static const struct sl_impl np_build_impl[] = {{.device = SL_DEVICE_CPU, .run = np_build}};
static const struct sl_phase np_build_phase = {np_build_impl, 1, NULL};

/* Table size: the next power of two of twice the build rows (load factor <= 1/2), or of
 * eight times a small build side (below). */
int join_nopart_start(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    int64_t nb = st->side[st->build].n_rows;
    /* Load factor 1/2; a small build side gets 1/8 while the table stays within a
     * quarter of L2, so that most probes of a missing key stop at their first slot (a
     * semi join of lineitem against a few hundred parts misses almost always). */
    int64_t slots_for = 8 * nb * (int64_t)tup_bytes(st) <= (512 << 10) / 4 ? 8 * nb : 2 * nb;
    st->tbits = join_log2_ceil(slots_for < 16 ? 16 : slots_for);
    int64_t slots = (int64_t)1 << st->tbits;
    st->table = sl_task_alloc(t, (size_t)slots * tup_bytes(st));
    if (!st->table)
        return SL_ENOMEM;
    /* The probe filter: where the table outgrows half of L2 (each probe then misses
     * L2, and in most TPC-H joins most probe rows find no partner: lineitem against a
     * year's orders of one region's customers, Q5, or against Q3's orders, where 1-3%
     * match), a Bloom filter of 16 bits a build key (at least 8), if it fits half of L2,
     * answers most misses from L2. Only inner and semi joins, which emit nothing for a
     * probe row without partner. */
    st->filter = NULL;
    int kind = st->d->kind;
    int64_t l2 = sl__cpu_cache_bytes(2) > 0 ? sl__cpu_cache_bytes(2) : 512 << 10;
    if ((kind == JOIN_INNER || kind == JOIN_SEMI) && slots * (int64_t)tup_bytes(st) > l2 / 2) {
        int fb = join_log2_ceil(nb / 4 > 1 ? nb / 4 : 2); /* 16 bits a key */
        while (((int64_t)8 << fb) > l2 / 2 && ((int64_t)64 << fb) / 2 >= 8 * nb)
            fb--;
        if (((int64_t)8 << fb) <= l2 / 2) {
            st->fbits = fb;
            st->filter = sl_task_alloc(t, (size_t)8 << fb);
            if (!st->filter)
                return SL_ENOMEM;
            memset(st->filter, 0, (size_t)8 << fb);
        }
    }
    int64_t n = slots / (1 << 18);
    n = n < 1 ? 1 : n > 32 ? 32 : n;
    return sl_task_spawn(t, &np_fill_phase, n, NULL, &np_build_phase);
}

int join_nopart_probe(sl_task_t *t, struct join_state *st, int64_t w, struct join_acc *acc)
{
    struct join_emit e;
    if (join_emit_init(&e, st, t, acc) < 0)
        return SL_ENOMEM;
    const struct join_work *wk = &st->work[w];
    int p = 1 - st->build;
    e.expect = wk->hi - wk->lo;
    if (st->shape.wide)
        np_probe_16(&e, p, wk->p0, wk->lo, wk->hi, st->table, st->tbits, np_empty(st));
    else
        np_probe_8(&e, p, wk->p0, wk->lo, wk->hi, st->table, st->tbits, np_empty(st));
    join_emit_flush(&e);
    join_emit_fini(&e);
    return e.rc;
}
