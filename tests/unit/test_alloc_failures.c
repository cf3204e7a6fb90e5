/* Allocation-failure sweep (SQLite's malloc tests): the k-th host allocation of a whole
 * plan build and run fails, for k = 0, 1, 2, ... until a run gets through (every k up to
 * DENSE_UNTIL, then a sample a step of about 1.5% apart, so that long plans stay within
 * seconds). Each attempt must fail cleanly with SL_ENOMEM (no crash, nothing left
 * allocated, no temporary file left, the engine still usable: checked by a run without
 * faults every few attempts) or give the same rows as the run without faults. Plans: the
 * heavy operators (join of every algorithm, group-by, sort, k-means), a pipeline of
 * filter, join, aggregate, sort and top-k, TPC-H Q3's shape over CSV files with its
 * result written as CSV, results taken out through an Arrow stream and back, and the
 * seed plans of the fuzz target fuzz_plan_run. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sluice/sluice.h>

#include "internal.h"
#include "sl_test.h"
#include "table_hash.h"

#define DENSE_UNTIL 2000 /* every k below this; sampled above */
#define MAX_K 50000      /* no plan here needs this many allocations */
#define CHECK_EVERY 16   /* a run without faults after every 16th failed attempt */

/* The table exported as an Arrow stream and imported again (*t replaced). */
static int arrow_round_trip(sl_table_t **t)
{
    struct ArrowArrayStream s;
    memset(&s, 0, sizeof s);
    sl_table_t *back = NULL;
    int rc = sl_table_export_stream(*t, &s);
    if (rc == SL_OK)
        rc = sl_table_import_stream(&s, &back);
    if (s.release)
        s.release(&s); /* an import that failed leaves the stream to us */
    if (rc == SL_OK) {
        sl_table_unref(*t);
        *t = back;
    }
    return rc;
}

/* Adds output `name` of q (through Arrow and back when `arrow`) to *out. */
static int add_output(sl_query_t *q, const char *name, bool arrow, struct sl_test_rows *out)
{
    sl_table_t *t = NULL;
    int rc = sl_query_result(q, name, &t);
    if (rc == SL_OK && arrow)
        rc = arrow_round_trip(&t);
    if (rc == SL_OK)
        sl_test_rows_add(out, t);
    sl_table_unref(t);
    return rc;
}

/* Runs plan text; SL_OK and the fingerprint of all its outputs in *out, or the error. */
static int run(sl_engine_t *e, const char *text, bool arrow, struct sl_test_rows *out)
{
    sl_plan_t *p = NULL;
    sl_query_t *q = NULL;
    int rc = sl_plan_create(&p);
    if (rc == SL_OK)
        rc = sl_plan_parse(p, text, "t.plan");
    if (rc == SL_OK)
        rc = sl_query_create(e, p, &q);
    if (rc == SL_OK)
        rc = sl_query_run(q);
    *out = (struct sl_test_rows){0, 0};
    for (int i = 0; rc == SL_OK && i < sl_plan_num_outputs(p); i++)
        rc = add_output(q, sl_plan_output_at(p, i, NULL), arrow, out);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return rc;
}

/* Asserts that `dir` (when set) holds no temporary file of a writer. */
static void assert_no_temporary(const char *dir, int64_t k)
{
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d)
        return;
    for (struct dirent *de; (de = readdir(d)) != NULL;)
        if (strstr(de->d_name, ".tmp-"))
            fail_msg("after %lld allocations: %s/%s left behind", (long long)k, dir, de->d_name);
    closedir(d);
}

static int64_t live_allocs(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    return c.live_allocs;
}

static int64_t next_k(int64_t k)
{
    return k < DENSE_UNTIL ? k + 1 : k + k / 64;
}

/* The sweep over plan `text`; `dir`: a folder it writes to (or NULL). */
static void sweep(const char *text, bool arrow, const char *dir)
{
    sl_test_config_off(1); /* the allocation counts are for these settings */
    sl_engine_t *e = sl_test_cpu_engine(2, 500);
    struct sl_test_rows want, got;
    SL_ASSERT_OK(run(e, text, arrow, &want));
    assert_true(want.rows > 0);
    int64_t base = live_allocs(); /* what the engine keeps between queries */
    int failed = 0;
    for (int64_t k = 0;; k = next_k(k)) {
        sl__mem_fail_after(k);
        int rc = run(e, text, arrow, &got);
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
        if (live_allocs() != base)
            fail_msg("after %lld allocations: %lld allocations left, want %lld", (long long)k,
                     (long long)live_allocs(), (long long)base);
        assert_no_temporary(dir, k);
        if (++failed % CHECK_EVERY == 0) { /* the engine still works */
            SL_ASSERT_OK(run(e, text, arrow, &got));
            assert_true(got.hash == want.hash);
        }
        if (k > MAX_K)
            fail_msg("no run got through %d injected failures", MAX_K);
    }
    printf("%d runs failed cleanly before one got through\n", failed);
    assert_true(failed > 0);
    SL_ASSERT_OK(run(e, text, arrow, &got)); /* the engine still works */
    assert_true(got.hash == want.hash);
    sl_engine_close(e);
    assert_int_equal(live_allocs(), 0);
}

static void faults_through(const char *text)
{
    sweep(text, false, NULL);
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

/* Many groups, counts and sums only: the fused sink pass, rows written raw once the
 * workers' tables were shrunk (agg_table.c sl__agg_table_raw), runs of partitions merged
 * straight into their batches. */
SL_TEST(aggregate_many_groups_raw_rows)
{
#ifdef SL_TEST_UNDER_TSAN
    /* A run for each of its thousands of allocations: past 6 minutes under ThreadSanitizer
     * on two cores (23 s plain); the plain and ASan runs fail every allocation of it. */
    SL_SKIP("too slow under ThreadSanitizer");
#endif
    faults_through("a = gen.keys rows=40000 kind=unique seed=3 payloads=1\n"
                   "r = aggregate(a) keys=k aggs=\"count(*), sum(p1), avg(p1)\"\n"
                   "output r\n");
}

/* String keys (agg_str.c): the shared table of strings, the workers' caches, the output
 * strings; null keys too. */
SL_TEST(aggregate_string_keys)
{
    faults_through("a = gen.keys rows=4000 kind=m2m distinct=300 seed=3 payloads=1 null_rate=0.1\n"
                   "p = project(a) columns=\"s = CAST(k AS VARCHAR), t = CAST(p1 % 7 AS VARCHAR), p1\"\n"
                   "r = aggregate(p) keys=\"s, t\" aggs=\"count(*), sum(p1)\"\n"
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

/* Scan, filter, project, join, aggregate, sort and top-k in one plan, its result taken
 * out through an Arrow stream. */
SL_TEST(pipeline_through_arrow)
{
    sweep(JOIN_INPUTS
          "af = filter(a) where=\"p1 % 3 <> 0\"\n"
          "j = join(af, b) on=k left_columns=\"k, p1\" right_columns=\"p1\" algo=radix\n"
          "jp = project(j) columns=\"g = k % 97, v = p1 + 1\"\n"
          "ag = aggregate(jp) keys=g aggs=\"count(*), sum(v)\"\n"
          "s = sort(ag) by=g\n"
          "r = sort.topk(s) keys=\"sum_v DESC, g\" limit=20\n"
          "output r\n",
          true, NULL);
}

/* Writes `rows` lines of `fmt` (given the row number) to dir/name. */
static void write_lines(const char *dir, const char *name, const char *header, int rows,
                        void (*line)(FILE *f, int i))
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", header);
    for (int i = 0; i < rows; i++)
        line(f, i);
    assert_int_equal(fclose(f), 0);
}

static void customer_line(FILE *f, int i)
{
    static const char *seg[] = {"BUILDING", "MACHINERY", "AUTOMOBILE"};
    fprintf(f, "%d,%s\n", i + 1, seg[(i * 7) % 3]);
}

static void orders_line(FILE *f, int i)
{
    fprintf(f, "%d,%d,1995-%02d-%02d,%d\n", i + 1, (i * 13) % 60 + 1, 1 + (i * 5) % 6,
            1 + (i * 11) % 28, i % 2);
}

static void lineitem_line(FILE *f, int i)
{
    fprintf(f, "%d,%d.%02d,0.0%d,1995-%02d-%02d\n", (i * 17) % 300 + 1, 100 + i % 900, i % 100,
            i % 10, 1 + (i / 5) % 6, 1 + (i * 7) % 28);
}

/* TPC-H Q3 (plans/tpch/q03.plan) over three small CSV files, its result also written
 * as a CSV file: the scans, the writer and its temporary file under failures. */
SL_TEST(tpch_q3_over_csv)
{
    char dir[] = "/tmp/sl_alloc_q3_XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_lines(dir, "customer.csv", "c_custkey,c_mktsegment", 60, customer_line);
    write_lines(dir, "orders.csv", "o_orderkey,o_custkey,o_orderdate,o_shippriority", 300,
                orders_line);
    write_lines(dir, "lineitem.csv", "l_orderkey,l_extendedprice,l_discount,l_shipdate", 1200,
                lineitem_line);
    char text[4096];
    snprintf(text, sizeof text,
        "cu  = scan.csv path=\"%1$s/customer.csv\" columns=\"c_custkey int64, c_mktsegment utf8\"\n"
        "cuf = filter(cu) where=\"c_mktsegment = 'BUILDING'\"\n"
        "cuk = project(cuf) columns=\"c_custkey\"\n"
        "od  = scan.csv path=\"%1$s/orders.csv\" columns=\"o_orderkey int64, o_custkey int64, "
        "o_orderdate date32, o_shippriority int32\"\n"
        "odf = filter(od) where=\"o_orderdate < DATE '1995-03-15'\"\n"
        "odc = join(odf, cuk) kind=semi left_on=o_custkey right_on=c_custkey "
        "left_columns=\"o_orderkey, o_orderdate, o_shippriority\"\n"
        "li  = scan.csv path=\"%1$s/lineitem.csv\" columns=\"l_orderkey int64, "
        "l_extendedprice decimal(15,2), l_discount decimal(15,2), l_shipdate date32\"\n"
        "lif = filter(li) where=\"l_shipdate > DATE '1995-03-15'\"\n"
        "j   = join(lif, odc) left_on=l_orderkey right_on=o_orderkey "
        "left_columns=\"l_orderkey, l_extendedprice, l_discount\" "
        "right_columns=\"o_orderdate, o_shippriority\"\n"
        "jp  = project(j) columns=\"l_orderkey, o_orderdate, o_shippriority, "
        "rev = l_extendedprice * (1 - l_discount)\"\n"
        "agg = aggregate(jp) keys=\"l_orderkey, o_orderdate, o_shippriority\" aggs=\"sum(rev)\"\n"
        "top = sort.topk(agg) keys=\"sum_rev DESC, o_orderdate\" limit=10\n"
        "w   = write.csv(top) path=\"%1$s/q3.csv\"\n"
        "output top as r\n",
        dir);
    sweep(text, false, dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* The fuzz target fuzz_plan_run's seed plans (tests/fuzz/corpus/plan_run): every join
 * kind, shared nodes, strings, dictionaries and decimals, k-means. */
static void sweep_seed_plan(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.plan", SL_FUZZ_PLANS_DIR, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    sweep(text, false, NULL);
}

SL_TEST(seed_plan_groupby) { sweep_seed_plan("groupby"); }
SL_TEST(seed_plan_join_kinds) { sweep_seed_plan("join_kinds"); }
SL_TEST(seed_plan_pipeline) { sweep_seed_plan("pipeline"); }
SL_TEST(seed_plan_shared) { sweep_seed_plan("shared"); }
SL_TEST(seed_plan_values) { sweep_seed_plan("values"); }
