/* Allocation-failure injection through the heavy operators (join of every algorithm,
 * group-by, sort, k-means): the k-th host allocation of a whole plan build and run fails,
 * for every k until a run gets through. Each attempt must fail cleanly with SL_ENOMEM (no
 * crash, no leak, the engine usable) or give the same rows as the run without faults. */
#include <stdio.h>
#include <string.h>

#include <sluice/sluice.h>

#include "internal.h"
#include "sl_test.h"

struct result {
    int64_t rows;
    uint64_t hash; /* sum of a hash of each row's text: a multiset fingerprint */
};

static uint64_t text_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Runs plan text (its one output named r); SL_OK and *out, or the error. */
static int run(sl_engine_t *e, const char *text, struct result *out)
{
    sl_plan_t *p = NULL;
    sl_query_t *q = NULL;
    sl_table_t *t = NULL;
    int rc = sl_plan_create(&p);
    if (rc == SL_OK)
        rc = sl_plan_parse(p, text, "t.plan");
    if (rc == SL_OK)
        rc = sl_query_create(e, p, &q);
    if (rc == SL_OK)
        rc = sl_query_run(q);
    if (rc == SL_OK)
        rc = sl_query_result(q, "r", &t);
    if (rc == SL_OK) {
        *out = (struct result){0, 0};
        for (int64_t b = 0; b < sl_table_num_batches(t); b++) {
            sl_batch_t *batch = sl_table_batch(t, b);
            for (int64_t i = 0; i < sl_batch_num_rows(batch); i++) {
                uint64_t h = 0;
                for (int c = 0; c < sl_batch_num_columns(batch); c++) {
                    char cell[64];
                    int null;
                    sl_batch_value_format(batch, c, i, cell, sizeof cell, &null);
                    h = h * 31 + (null ? 7 : text_hash(cell));
                }
                out->hash += h;
                out->rows++;
            }
        }
        sl_table_unref(t);
    }
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return rc;
}

static void faults_through(const char *text)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = 2;
    cfg.n_gpus = 0;
    cfg.morsel_rows_cpu = 500;
    sl_test_config_off(1); /* the allocation counts are for these settings */
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    struct result want, got;
    SL_ASSERT_OK(run(e, text, &want));
    assert_true(want.rows > 0);
    int failed = 0;
    for (int64_t k = 0;; k++) {
        sl__mem_fail_after(k);
        int rc = run(e, text, &got);
        sl__mem_fail_after(-1);
        if (rc == SL_OK) {
            if (got.rows != want.rows || got.hash != want.hash)
                fail_msg("after %lld allocations: %lld rows, want %lld (or other values)",
                         (long long)k, (long long)got.rows, (long long)want.rows);
            break;
        }
        if (rc != SL_ENOMEM)
            fail_msg("after %lld allocations: %s (%s)", (long long)k, sl_err_name(rc),
                     sl_last_errmsg());
        failed++;
        if (k > 20000)
            fail_msg("no run got through 20000 injected failures");
    }
    printf("%d runs failed cleanly before one got through\n", failed);
    assert_true(failed > 0);
    SL_ASSERT_OK(run(e, text, &got)); /* the engine still works */
    assert_true(got.hash == want.hash);
    sl_engine_close(e);
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

#define JOIN_INPUTS                                                                     \
    "b = gen.keys rows=1500 kind=unique seed=1 payloads=1 null_rate=0.1\n"              \
    "a = gen.keys rows=3000 kind=fk pk_rows=2000 match=0.7 seed=2 payloads=1\n"

SL_TEST(join_radix) { faults_through(JOIN_INPUTS "r = join(a, b) on=k algo=radix\noutput r\n"); }
SL_TEST(join_nopart) { faults_through(JOIN_INPUTS "r = join(a, b) on=k kind=left algo=nopart\noutput r\n"); }
SL_TEST(join_sortmerge) { faults_through(JOIN_INPUTS "r = join(a, b) on=k kind=full algo=sortmerge\noutput r\n"); }

SL_TEST(aggregate)
{
    faults_through("a = gen.keys rows=4000 kind=m2m distinct=300 seed=3 payloads=1 null_rate=0.1\n"
                   "r = aggregate(a) keys=k aggs=\"count(*), sum(p1), min(p1), avg(p1)\"\n"
                   "output r\n");
}

SL_TEST(sort)
{
    faults_through("a = gen.keys rows=4000 kind=m2m distinct=2^30 seed=5 payloads=1\n"
                   "r = sort(a) by=k\noutput r\n");
}

SL_TEST(kmeans)
{
    faults_through("a = gen.blobs points=2000 dims=2 k=4 seed=4\n"
                   "r = kmeans(a) k=4 max_iter=5 tol=0 seed=7\noutput r\n");
}
