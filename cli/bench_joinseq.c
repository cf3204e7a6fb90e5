/* sluice bench join --sequence N: paper-003's sequence of joins (TARGETS.md). A fact table
 * with N int32 foreign-key columns d0..d<N-1> and a payload fp, and N dimension tables
 * (key d<i>, payload p<i>; keys 0..n_i-1 permuted, the n_i summing to --dim-rows). Join i
 * probes with the previous join's output and builds on dimension i, on d<i>; the last
 * join materializes or aggregates (--output). Foreign keys are uniform over their
 * dimension, so every fact row survives every join. The expected checksum is computed
 * directly from the generators (no join) and the warm-up's checksum must equal it; the
 * timed repeats' outputs are not summed (they are the same query). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define SEQ_MAX 16

struct seq {
    const struct joinseq_args *a;
    int64_t dim_rows[SEQ_MAX];
    int32_t *inv[SEQ_MAX]; /* inv[i][key] = the key's row in dimension i */
};

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Fact row r's foreign key into dimension i: counter-based, so any chunking (and the
 * reference) sees the same value. */
static int32_t fact_fk(const struct seq *s, int i, int64_t r)
{
    uint64_t h = mix(((uint64_t)s->a->seed << 40) ^ ((uint64_t)i << 56) ^ (uint64_t)r);
    return (int32_t)(h % (uint64_t)s->dim_rows[i]);
}

static int32_t fact_payload(int64_t r) { return (int32_t)(r * 2 + 1); }
static int32_t dim_payload(int i, int64_t row) { return (int32_t)(row * (i + 3) + 1); }

struct fill {
    const struct seq *s;
    int32_t *d;
    int64_t base;
    int col; /* fact: 0..N-1 keys, N payload; dims: -1 - i payload of dimension i */
};

static void fill_fact(void *p, int64_t lo, int64_t hi)
{
    const struct fill *f = p;
    int n = (int)f->s->a->sequence;
    for (int64_t i = lo; i < hi; i++)
        f->d[i] = f->col == n ? fact_payload(f->base + i) : fact_fk(f->s, f->col, f->base + i);
}

/* One table of `rows` rows in batches of `chunk`: columns names[0..nc), int32, filled by
 * fill_fact (fact) or from the dimension's permutation (keys) and row (payload). */
static sl_table_t *seq_table(const struct seq *s, int dim, const int32_t *perm, int64_t rows,
                             int64_t chunk)
{
    int n = (int)s->a->sequence, nc = dim < 0 ? n + 1 : 2;
    char names[SEQ_MAX + 1][16];
    const char *np[SEQ_MAX + 1];
    enum sl_type ty[SEQ_MAX + 1];
    for (int c = 0; c < nc; c++) {
        if (dim < 0)
            snprintf(names[c], sizeof names[c], c < n ? "d%d" : "fp", c);
        else
            snprintf(names[c], sizeof names[c], c ? "p%d" : "d%d", dim);
        np[c] = names[c];
        ty[c] = SL_TYPE_INT32;
    }
    sl_table_t *t;
    if (sl_table_create(&t) < 0)
        return NULL;
    for (int64_t lo = 0; lo < rows; lo += chunk) {
        int64_t m = rows - lo < chunk ? rows - lo : chunk;
        sl_batch_t *b;
        if (sl_batch_create(&b, nc, np, ty, m) < 0) {
            sl_table_unref(t);
            return NULL;
        }
        for (int c = 0; c < nc; c++) {
            int32_t *d = sl_batch_column_data(b, c);
            if (dim < 0) {
                struct fill f = {s, d, lo, c};
                bench_par_for(m, fill_fact, &f);
            } else {
                for (int64_t i = 0; i < m; i++)
                    d[i] = c ? dim_payload(dim, lo + i) : perm[lo + i];
            }
        }
        sl_table_append(t, b);
        sl_batch_unref(b);
    }
    return t;
}

/* Dimension i: keys 0..n-1 shuffled (Fisher-Yates), and the inverse for the reference. */
static sl_table_t *seq_dim(struct seq *s, int i, int64_t chunk)
{
    int64_t n = s->dim_rows[i];
    int32_t *perm = malloc((size_t)n * sizeof *perm);
    s->inv[i] = malloc((size_t)n * sizeof *s->inv[i]);
    if (!perm || !s->inv[i]) {
        free(perm);
        return NULL;
    }
    uint64_t x = mix((uint64_t)s->a->seed * 131 + (uint64_t)i) | 1;
    for (int64_t j = 0; j < n; j++)
        perm[j] = (int32_t)j;
    for (int64_t j = n - 1; j > 0; j--) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int64_t k = (int64_t)(x % (uint64_t)(j + 1));
        int32_t v = perm[j];
        perm[j] = perm[k];
        perm[k] = v;
    }
    for (int64_t j = 0; j < n; j++)
        s->inv[i][perm[j]] = (int32_t)j;
    sl_table_t *t = seq_table(s, i, perm, n, chunk);
    free(perm);
    return t;
}

struct ref {
    const struct seq *s;
    uint64_t sum, last_keys; /* every output value; the last join's key column */
};

/* The materialized output's checksum over fact rows [lo, hi): each row's keys, its
 * payload and, for each key, the payload of the dimension row holding it. */
static void ref_range(void *p, int64_t lo, int64_t hi)
{
    struct ref *r = p;
    const struct seq *s = r->s;
    int n = (int)s->a->sequence;
    uint64_t sum = 0, last = 0;
    for (int64_t row = lo; row < hi; row++) {
        sum += (uint64_t)(int64_t)fact_payload(row);
        for (int i = 0; i < n; i++) {
            int32_t k = fact_fk(s, i, row);
            sum += (uint64_t)(int64_t)k + (uint64_t)(int64_t)dim_payload(i, s->inv[i][k]);
            if (i == n - 1)
                last += (uint64_t)(int64_t)k;
        }
    }
    __atomic_fetch_add(&r->sum, sum, __ATOMIC_RELAXED);
    __atomic_fetch_add(&r->last_keys, last, __ATOMIC_RELAXED);
}

/* Builds the plan: fact, then join i = join(previous, dimension i) on d<i>. */
static int seq_plan(sl_plan_t *p, const struct joinseq_args *a, sl_table_t *fact,
                    sl_table_t **dims, int on_device)
{
    int prev, rc;
    if ((rc = sl_plan_add_table(p, fact, &prev)) < 0)
        return rc;
    for (int i = 0; i < (int)a->sequence; i++) {
        int nd, nj;
        char opts[160];
        snprintf(opts, sizeof opts, "on=d%d kind=inner algo=%s output=%s", i, a->algo,
                 i == a->sequence - 1 ? a->output : "materialize");
        if ((rc = sl_plan_add_table(p, dims[i], &nd)) < 0 ||
            (rc = sl_plan_add(p, "join", (int[]){prev, nd}, 2, opts, &nj)) < 0)
            return rc;
        prev = nj;
    }
    return on_device ? sl_plan_output_device(p, prev, "out") : sl_plan_output(p, prev, "out");
}

/* The timed loop (docs/BENCH_PROTOCOL.md): a warm-up, then `repeat` queries, each timed from
 * its creation to its output complete (in GPU memory with --resident device). */
static int seq_run(sl_engine_t *eng, const struct joinseq_args *a, sl_table_t *fact,
                   sl_table_t **dims, int on_device, int phases,
                   struct bench_result *r)
{
    int rc = SL_OK;
    for (int64_t rep = -1; rep < a->repeat && rc == SL_OK; rep++) {
        sl_plan_t *p;
        sl_plan_create(&p);
        if ((rc = seq_plan(p, a, fact, dims, on_device)) < 0) {
            cli_fail("bench join --sequence: %s", sl_plan_errmsg(p));
            sl_plan_destroy(p);
            break;
        }
        /* the warm-up's output is checked (a 2^27-row output takes seconds to sum) */
        struct bench_join_query jq = {eng, p, rep, on_device, phases, 0,
                                      !strcmp(a->output, "aggregate"), "bench join --sequence"};
        rc = bench_join_query(&jq, r);
        sl_plan_destroy(p);
    }
    return rc;
}

int bench_join_sequence(const struct joinseq_args *a, struct cli_common *c)
{
    int n = (int)a->sequence;
    if (n < 1 || n > SEQ_MAX || a->dim_rows < n || a->probe_rows < 1 || a->repeat < 1 ||
        a->dim_rows / n > INT32_MAX || (strcmp(a->output, "aggregate") && strcmp(a->output, "materialize")))
        return cli_fail("bench join: --sequence must be 1..%d, --dim-rows at least the sequence "
                        "(each dimension below 2^31 rows), --output materialize or aggregate",
                        SEQ_MAX);
    struct seq s = {.a = a};
    for (int i = 0; i < n; i++)
        s.dim_rows[i] = a->dim_rows / n + (i < a->dim_rows % n);
    int on_device = !strcmp(a->resident, "device");
    int64_t chunk = on_device ? INT64_MAX / 2 : (int64_t)1 << 20;
    sl_table_t *fact = seq_table(&s, -1, NULL, a->probe_rows, chunk), *dims[SEQ_MAX] = {0};
    int ok = fact != NULL;
    for (int i = 0; i < n; i++)
        ok &= (dims[i] = seq_dim(&s, i, chunk)) != NULL;
    struct ref ref = {&s, 0, 0};
    if (ok)
        bench_par_for(a->probe_rows, ref_range, &ref);
    for (int i = 0; i < n; i++)
        free(s.inv[i]);
    uint64_t expect = strcmp(a->output, "aggregate")
                          ? ref.sum
                          : ref.sum - ref.last_keys + (uint64_t)a->probe_rows; /* + count */
    bench_join_phases_ask(c);
    sl_engine_t *eng = ok ? cli_open_engine(c) : NULL;
    int rc = eng ? SL_OK : SL_ENOMEM;
    if (!ok)
        cli_fail("out of memory generating the inputs");
    for (int i = -1; eng && on_device && i < n && rc == SL_OK; i++)
        rc = bench_to_device(eng, i < 0 ? &fact : &dims[i], "join");
    struct bench_result r;
    bench_result_init(&r, a->probe_rows + a->dim_rows);
    if (rc == SL_OK) {
        bench_device_name(eng, c->placement, r.device, sizeof r.device);
        rc = seq_run(eng, a, fact, dims, on_device, c->placement != SL_PLACE_CPU, &r);
    }
    if (rc == SL_OK && r.checksum != expect) {
        cli_fail("bench join --sequence: checksum %" PRIu64 " but the direct computation "
                 "gives %" PRIu64, r.checksum, expect);
        rc = SL_EINVAL;
    }
    if (rc == SL_OK) {
        char extra[512];
        snprintf(extra, sizeof extra,
                 ",\"sequence\":%d,\"fact_rows\":%" PRId64 ",\"dim_rows\":%" PRId64
                 ",\"expected_checksum\":%" PRIu64 ",\"algo\":\"%s\",\"output\":\"%s\","
                 "\"resident\":\"%s\",\"threads\":%d",
                 n, a->probe_rows, a->dim_rows, expect, a->algo, a->output, a->resident,
                 sl_engine_num_threads(eng));
        bench_print_run(eng, on_device || c->placement == SL_PLACE_GPU, "join_sequence", &r, extra);
    }
    if (eng)
        sl_engine_close(eng);
    sl_table_unref(fact);
    for (int i = 0; i < n; i++)
        sl_table_unref(dims[i]);
    return rc == SL_OK ? 0 : 1;
}
