/* Tests of the generators gen.keys, gen.uniform and gen.blobs and their math
 * (operators/gen/gen_int.h): the same seed gives the same rows with 1 and 2 threads and
 * any morsel size (order-insensitive row checksums); unique keys are a permutation of
 * offset..offset+rows-1 and each row's key is the documented function of its row;
 * fk keys match the domain for the requested fraction; Zipf skew shows and grows with
 * the exponent; null rates; value ranges; option errors at bind time.
 *
 * Tolerances: fractions drawn per row are binomial, so with n rows the standard
 * deviation is at most 0.5/sqrt(n); the tests allow 0.02 at n = 20000 (more than 5
 * sigma), which never fails in practice since the data are fixed by the seed. */
#include <stdio.h>

#include "gen_test_util.h"

/* Same seed -> same checksum across thread counts and morsel sizes; another seed
 * changes it. */
static void check_deterministic(const char *op, const char *opts, const char *opts_seed2)
{
    const int threads[] = {1, 2, 2, 1};
    const int64_t morsels[] = {64, 100, 1000, 7};
    uint64_t first = 0;
    int64_t rows = -1;
    for (int c = 0; c < 4; c++) {
        sl_engine_t *e = gt_open(threads[c], morsels[c]);
        sl_table_t *t = gt_run(e, op, opts);
        uint64_t h = gt_checksum(t);
        int64_t n = sl_table_num_rows(t);
        sl_table_unref(t);
        if (c == 0) {
            first = h;
            rows = n;
        } else if (h != first || n != rows) {
            fail_msg("%s(%s): checksum %llx (%lld rows) with %d threads, morsel %lld; "
                     "%llx (%lld rows) with 1 thread, morsel 64", op, opts,
                     (unsigned long long)h, (long long)n, threads[c], (long long)morsels[c],
                     (unsigned long long)first, (long long)rows);
        }
        if (c == 3 && opts_seed2) {
            sl_table_t *t2 = gt_run(e, op, opts_seed2);
            if (gt_checksum(t2) == first)
                fail_msg("%s: seeds of '%s' and '%s' give the same data", op, opts, opts_seed2);
            sl_table_unref(t2);
        }
        gt_close(e);
    }
}

SL_TEST(keys_deterministic)
{
    check_deterministic("gen.keys", "rows=1000 payloads=2", "rows=1000 payloads=2 seed=2");
    check_deterministic("gen.keys", "rows=999 type=int64 offset=5 null_rate=0.1",
                        "rows=999 type=int64 offset=5 null_rate=0.1 seed=9");
    check_deterministic("gen.keys", "rows=1001 kind=fk pk_rows=300 match=0.7 zipf=1.1 "
                        "null_rate=0.05 payloads=1 payload_type=float64", NULL);
    check_deterministic("gen.keys", "rows=500 kind=m2m distinct=20 type=int64 zipf=0.5", NULL);
}

/* unique: sorted keys are offset..offset+n-1, each row's key is offset + perm(row), the
 * payloads are row*31 + j, and the order is shuffled. */
static void check_unique(sl_engine_t *e, int64_t n, int64_t offset, const char *type, int64_t seed)
{
    char opts[200];
    snprintf(opts, sizeof opts, "rows=%lld offset=%lld type=%s seed=%lld payloads=2",
             (long long)n, (long long)offset, type, (long long)seed);
    sl_table_t *t = gt_run(e, "gen.keys", opts);
    struct gcol k, p1, p2;
    gcol_read(t, "k", &k);
    gcol_read(t, "p1", &p1);
    gcol_read(t, "p2", &p2);
    assert_int_equal(k.n, n);
    struct sl__gen_perm perm;
    sl__gen_perm_init(&perm, (uint64_t)n, (uint64_t)seed);
    int64_t fixed = 0;
    for (int64_t r = 0; r < n; r++) {
        assert_true(k.valid[r]);
        int64_t row = (p1.i[r] - 1) / 31;
        assert_int_equal(p1.i[r], row * 31 + 1);
        assert_int_equal(p2.i[r], row * 31 + 2);
        assert_true(row >= 0 && row < n);
        assert_int_equal(k.i[r], offset + (int64_t)sl__gen_perm_apply(&perm, (uint64_t)row));
        fixed += k.i[r] == offset + row;
    }
    qsort(k.i, (size_t)n, 8, cmp_i64);
    for (int64_t r = 0; r < n; r++)
        if (k.i[r] != offset + r)
            fail_msg("%s: sorted key %lld is %lld", opts, (long long)r, (long long)k.i[r]);
    if (n >= 100 && fixed > n / 10)
        fail_msg("%s: %lld of %lld keys sit at their row: not shuffled", opts, (long long)fixed,
                 (long long)n);
    gcol_free(&k);
    gcol_free(&p1);
    gcol_free(&p2);
    sl_table_unref(t);
}

SL_TEST(keys_unique_permutation)
{
    const int64_t sizes[] = {0, 1, 2, 3, 5, 63, 64, 65, 1000, 4097};
    for (int th = 1; th <= 2; th++) {
        sl_engine_t *e = gt_open(th, 64);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            check_unique(e, sizes[s], 0, "int32", 1);
            check_unique(e, sizes[s], -100, "int64", 42);
        }
        check_unique(e, 1000, INT32_MAX - 999, "int32", 3);
        check_unique(e, 1000, INT64_MAX - 999, "int64", 3);
        gt_close(e);
    }
}

SL_TEST(perm_is_bijection)
{
    /* Domains of every size up to 300 and a few larger, several seeds. */
    uint8_t *seen = malloc(70000);
    for (uint64_t n = 0; n < 70000; n = n < 300 ? n + 1 : n * 3 + 1) {
        for (uint64_t seed = 1; seed < 4; seed++) {
            struct sl__gen_perm p;
            sl__gen_perm_init(&p, n, seed);
            memset(seen, 0, n + 1);
            for (uint64_t i = 0; i < n; i++) {
                uint64_t v = sl__gen_perm_apply(&p, i);
                if (v >= n || seen[v])
                    fail_msg("n=%llu seed=%llu: perm(%llu)=%llu", (unsigned long long)n,
                             (unsigned long long)seed, (unsigned long long)i,
                             (unsigned long long)v);
                seen[v] = 1;
            }
        }
    }
    free(seen);
    /* Huge domains: the images stay inside. */
    struct sl__gen_perm p;
    sl__gen_perm_init(&p, (uint64_t)INT64_MAX, 5);
    for (uint64_t i = 0; i < 1000; i++)
        assert_true(sl__gen_perm_apply(&p, i * 7919) < (uint64_t)INT64_MAX);
}

/* Fraction of keys inside [0, pk) and that every other key is >= pk. */
static double fk_match_fraction(sl_engine_t *e, int64_t rows, int64_t pk, double match,
                                const char *type, double zipf)
{
    char opts[200];
    snprintf(opts, sizeof opts, "rows=%lld kind=fk pk_rows=%lld match=%g type=%s zipf=%g",
             (long long)rows, (long long)pk, match, type, zipf);
    sl_table_t *t = gt_run(e, "gen.keys", opts);
    struct gcol k;
    gcol_read(t, "k", &k);
    assert_int_equal(k.n, rows);
    int64_t in = 0;
    for (int64_t r = 0; r < rows; r++) {
        assert_true(k.valid[r]);
        assert_true(k.i[r] >= 0);
        in += k.i[r] < pk;
    }
    gcol_free(&k);
    sl_table_unref(t);
    return rows ? (double)in / (double)rows : 1.0;
}

SL_TEST(keys_fk_match)
{
    sl_engine_t *e = gt_open(2, 1000);
    const double matches[] = {0.0, 0.25, 0.7, 1.0};
    for (size_t m = 0; m < 4; m++) {
        for (int z = 0; z < 2; z++) {
            double f32 = fk_match_fraction(e, 20000, 1000, matches[m], "int32", z ? 0.9 : 0);
            double f64 = fk_match_fraction(e, 20000, 5, matches[m], "int64", z ? 1.5 : 0);
            if (fabs(f32 - matches[m]) > 0.02 || fabs(f64 - matches[m]) > 0.02)
                fail_msg("match=%g zipf=%d: got %g (int32) and %g (int64)", matches[m], z, f32,
                         f64);
            if (matches[m] == 1.0 || matches[m] == 0.0)
                assert_true(f32 == matches[m] && f64 == matches[m]);
        }
    }
    /* A domain as large as int32 allows, all matching. */
    double f = fk_match_fraction(e, 3000, 2147483648LL, 1.0, "int32", 0);
    assert_true(f == 1.0);
    /* Uniform fk keys cover a small domain. */
    sl_table_t *t = gt_run(e, "gen.keys", "rows=5000 kind=fk pk_rows=50");
    struct gcol k;
    gcol_read(t, "k", &k);
    int hits[50] = {0};
    for (int64_t r = 0; r < k.n; r++)
        hits[k.i[r]]++;
    for (int i = 0; i < 50; i++)
        assert_true(hits[i] > 50 && hits[i] < 150); /* mean 100, sd 10 */
    gcol_free(&k);
    sl_table_unref(t);
    gt_close(e);
}

/* Frequency of the most frequent key of m2m keys over `distinct` values. */
static int64_t top_frequency(sl_engine_t *e, const char *kind, double zipf, int64_t rows,
                             int64_t distinct)
{
    char opts[200];
    if (strcmp(kind, "fk") == 0)
        snprintf(opts, sizeof opts, "rows=%lld kind=fk pk_rows=%lld zipf=%g", (long long)rows,
                 (long long)distinct, zipf);
    else
        snprintf(opts, sizeof opts, "rows=%lld kind=m2m distinct=%lld zipf=%g", (long long)rows,
                 (long long)distinct, zipf);
    sl_table_t *t = gt_run(e, "gen.keys", opts);
    struct gcol k;
    gcol_read(t, "k", &k);
    int64_t *cnt = calloc((size_t)distinct, 8);
    int64_t top = 0;
    for (int64_t r = 0; r < k.n; r++) {
        assert_true(k.i[r] >= 0 && k.i[r] < distinct);
        if (++cnt[k.i[r]] > top)
            top = cnt[k.i[r]];
    }
    free(cnt);
    gcol_free(&k);
    sl_table_unref(t);
    return top;
}

SL_TEST(keys_zipf_skew)
{
    sl_engine_t *e = gt_open(2, 512);
    const int64_t rows = 20000, distinct = 1000;
    int64_t uni = top_frequency(e, "m2m", 0, rows, distinct);
    assert_true(uni < 60); /* mean 20 per key */
    const double s[] = {0.5, 1.0, 1.5, 2.0};
    int64_t prev = uni;
    for (int i = 0; i < 4; i++) {
        int64_t top = top_frequency(e, i & 1 ? "fk" : "m2m", s[i], rows, distinct);
        print_message("zipf=%g: top key frequency %lld of %lld rows (uniform: %lld)\n", s[i],
                      (long long)top, (long long)rows, (long long)uni);
        if (top <= prev)
            fail_msg("zipf=%g: top frequency %lld not above %lld", s[i], (long long)top,
                     (long long)prev);
        prev = top;
    }
    /* s = 1: P(rank 1) = 1 / H(1000) = 0.1336; allow 10% relative. */
    int64_t top1 = top_frequency(e, "m2m", 1.0, rows, distinct);
    double p1 = (double)top1 / (double)rows;
    if (fabs(p1 - 0.13359) > 0.013)
        fail_msg("zipf=1: top key frequency %g, expected about 0.1336", p1);
    assert_true(top1 > 10 * uni);
    gt_close(e);
}

SL_TEST(zipf_sampler_distribution)
{
    /* Draws against the exact probabilities for n = 10 and several exponents: each
     * rank's frequency within 0.01 absolute of k^-s / sum (200000 draws). */
    const double exps[] = {0.3, 1.0, 1.7, 3.0};
    for (int e = 0; e < 4; e++) {
        struct sl__gen_zipf z;
        SL_ASSERT_OK(sl__gen_zipf_init(&z, 10, exps[e]));
        int64_t cnt[10] = {0};
        for (uint64_t i = 0; i < 200000; i++) {
            uint64_t r = sl__gen_zipf_draw(&z, 7, SL__GEN_S_ZIPF, i);
            assert_true(r < 10);
            cnt[r]++;
        }
        double norm = 0;
        for (int k = 1; k <= 10; k++)
            norm += pow(k, -exps[e]);
        for (int k = 1; k <= 10; k++) {
            double want = pow(k, -exps[e]) / norm, got = (double)cnt[k - 1] / 200000.0;
            if (fabs(want - got) > 0.01)
                fail_msg("s=%g rank %d: %g, expected %g", exps[e], k, got, want);
        }
    }
    struct sl__gen_zipf z;
    assert_int_equal(sl__gen_zipf_init(&z, 0, 1.0), SL_EINVAL);
    assert_int_equal(sl__gen_zipf_init(&z, 10, 0.0), SL_EINVAL);
    SL_ASSERT_OK(sl__gen_zipf_init(&z, 1, 1.0));
    assert_int_equal(sl__gen_zipf_draw(&z, 1, 2, 3), 0);
}

static double null_fraction(sl_engine_t *e, const char *op, const char *opts, const char *col)
{
    sl_table_t *t = gt_run(e, op, opts);
    struct gcol k;
    gcol_read(t, col, &k);
    int64_t nulls = 0;
    for (int64_t r = 0; r < k.n; r++)
        nulls += !k.valid[r];
    double f = k.n ? (double)nulls / (double)k.n : 0;
    gcol_free(&k);
    sl_table_unref(t);
    return f;
}

SL_TEST(keys_null_rate)
{
    sl_engine_t *e = gt_open(2, 333);
    assert_true(null_fraction(e, "gen.keys", "rows=20000", "k") == 0.0);
    double f = null_fraction(e, "gen.keys", "rows=20000 null_rate=0.1", "k");
    assert_true(fabs(f - 0.1) < 0.02);
    f = null_fraction(e, "gen.keys", "rows=20000 kind=fk pk_rows=10 null_rate=0.5 type=int64", "k");
    assert_true(fabs(f - 0.5) < 0.02);
    assert_true(null_fraction(e, "gen.keys", "rows=777 null_rate=1", "k") == 1.0);
    f = null_fraction(e, "gen.uniform", "rows=20000 null_rate=0.3 type=float32", "x");
    assert_true(fabs(f - 0.3) < 0.02);
    gt_close(e);
}

SL_TEST(keys_payload_types)
{
    sl_engine_t *e = gt_open(2, 100);
    const char *types[] = {"int32", "int64", "float32", "float64"};
    for (int ty = 0; ty < 4; ty++) {
        char opts[160];
        snprintf(opts, sizeof opts, "rows=1000 kind=m2m distinct=7 payloads=3 payload_type=%s "
                 "column=key", types[ty]);
        sl_table_t *t = gt_run(e, "gen.keys", opts);
        struct gcol p[3];
        for (int j = 0; j < 3; j++) {
            char name[8];
            snprintf(name, sizeof name, "p%d", j + 1);
            gcol_read(t, name, &p[j]);
        }
        int64_t seen = 0;
        for (int64_t r = 0; r < 1000; r++) {
            double v1 = ty < 2 ? (double)p[0].i[r] : p[0].f[r];
            int64_t row = ((int64_t)v1 - 1) / 31;
            for (int j = 0; j < 3; j++) {
                double v = ty < 2 ? (double)p[j].i[r] : p[j].f[r];
                assert_true(v == (double)(row * 31 + j + 1));
            }
            seen += row;
        }
        assert_int_equal(seen, 999 * 1000 / 2);
        for (int j = 0; j < 3; j++)
            gcol_free(&p[j]);
        sl_table_unref(t);
    }
    gt_close(e);
}

static void expect_bind_error(const char *op, const char *opts, int code, const char *needle)
{
    char msg[512];
    int rc = gt_bind(op, opts, msg, sizeof msg);
    if (rc != code)
        fail_msg("%s(%s): returned %d (%s), expected %s; message: %s", op, opts, rc,
                 sl_err_name(rc), sl_err_name(code), msg);
    if (!strstr(msg, needle))
        fail_msg("%s(%s): message '%s' does not mention '%s'", op, opts, msg, needle);
}

SL_TEST(gen_bind_errors)
{
    expect_bind_error("gen.keys", "rows=10 kind=fk", SL_EINVAL, "pk_rows");
    expect_bind_error("gen.keys", "rows=10 kind=fk pk_rows=0", SL_EINVAL, "pk_rows");
    expect_bind_error("gen.keys", "rows=10 kind=fk pk_rows=5 match=1.5", SL_EINVAL, "match");
    expect_bind_error("gen.keys", "rows=10 kind=fk pk_rows=5 match=-0.1", SL_EINVAL, "match");
    expect_bind_error("gen.keys", "rows=-1", SL_EINVAL, "rows");
    expect_bind_error("gen.keys", "rows=10 type=float32", SL_ETYPE, "type");
    expect_bind_error("gen.keys", "rows=10 type=int16", SL_ETYPE, "type");
    expect_bind_error("gen.keys", "rows=10 kind=bogus", SL_EINVAL, "kind");
    expect_bind_error("gen.keys", "rows=10 kind=m2m", SL_EINVAL, "distinct");
    expect_bind_error("gen.keys", "rows=10 null_rate=2", SL_EINVAL, "null_rate");
    expect_bind_error("gen.keys", "rows=10 payloads=-1", SL_EINVAL, "payloads");
    expect_bind_error("gen.keys", "rows=10 payload_type=text", SL_ETYPE, "payload_type");
    expect_bind_error("gen.keys", "rows=10 zipf=-1 kind=m2m distinct=3", SL_EINVAL, "zipf");
    expect_bind_error("gen.keys", "rows=10 offset=2147483640", SL_EOVERFLOW, "int32");
    expect_bind_error("gen.keys", "rows=10 kind=fk pk_rows=2147483648 match=0.5", SL_EOVERFLOW,
                      "pk_rows");
    expect_bind_error("gen.keys", "rows=10 kind=fk pk_rows=2147483649", SL_EOVERFLOW, "pk_rows");
    expect_bind_error("gen.keys", "kind=fk", SL_EINVAL, "rows");
    expect_bind_error("gen.keys", "rows=10 column=p1 payloads=1", SL_EINVAL, "p1");
    expect_bind_error("gen.keys", "rows=abc", SL_EINVAL, "rows");
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

SL_TEST(uniform_deterministic_and_ranges)
{
    check_deterministic("gen.uniform", "rows=1000 type=int32 min=-5 max=5 null_rate=0.2",
                        "rows=1000 type=int32 min=-5 max=5 null_rate=0.2 seed=3");
    check_deterministic("gen.uniform", "rows=777 type=float32 min=-1 max=1", NULL);
    check_deterministic("gen.uniform", "rows=1001", "rows=1001 seed=2");
    sl_engine_t *e = gt_open(2, 128);
    /* Integers: every value in [min, max] is hit, nothing outside. */
    sl_table_t *t = gt_run(e, "gen.uniform", "rows=5000 type=int64 min=-3 max=3 column=v");
    struct gcol c;
    gcol_read(t, "v", &c);
    assert_int_equal(c.type, SL_TYPE_INT64);
    int hits[7] = {0};
    for (int64_t r = 0; r < c.n; r++) {
        assert_true(c.i[r] >= -3 && c.i[r] <= 3);
        hits[c.i[r] + 3]++;
    }
    for (int i = 0; i < 7; i++)
        assert_true(hits[i] > 500 && hits[i] < 930); /* mean 714, sd 25 */
    gcol_free(&c);
    sl_table_unref(t);
    /* The whole int64 range and a one-value range. */
    t = gt_run(e, "gen.uniform", "rows=1000 type=int64 min=-9223372036854775808 "
                                 "max=9223372036854775807");
    gcol_read(t, "x", &c);
    int neg = 0;
    for (int64_t r = 0; r < c.n; r++)
        neg += c.i[r] < 0;
    assert_true(neg > 400 && neg < 600);
    gcol_free(&c);
    sl_table_unref(t);
    t = gt_run(e, "gen.uniform", "rows=100 type=int32 min=7 max=7");
    gcol_read(t, "x", &c);
    for (int64_t r = 0; r < c.n; r++)
        assert_int_equal(c.i[r], 7);
    gcol_free(&c);
    sl_table_unref(t);
    /* Floats: in [min, max), mean near the middle (sd of the mean 0.0041). */
    const char *ft[] = {"float32", "float64"};
    for (int f = 0; f < 2; f++) {
        char opts[100];
        snprintf(opts, sizeof opts, "rows=5000 type=%s min=2 max=4", ft[f]);
        t = gt_run(e, "gen.uniform", opts);
        gcol_read(t, "x", &c);
        double sum = 0;
        for (int64_t r = 0; r < c.n; r++) {
            assert_true(c.f[r] >= 2.0 && c.f[r] < 4.0);
            sum += c.f[r];
        }
        assert_true(fabs(sum / (double)c.n - 3.0) < 0.03);
        gcol_free(&c);
        sl_table_unref(t);
    }
    t = gt_run(e, "gen.uniform", "rows=0");
    assert_int_equal(sl_table_num_rows(t), 0);
    sl_table_unref(t);
    gt_close(e);
}

SL_TEST(blobs_clusters)
{
    check_deterministic("gen.blobs", "points=1000 dims=3 k=4 label=true",
                        "points=1000 dims=3 k=4 label=true seed=5");
    check_deterministic("gen.blobs", "points=500 dims=2 k=3 type=float64 spread=0.5", NULL);
    sl_engine_t *e = gt_open(2, 256);
    const int dims = 3, k = 5;
    sl_table_t *t = gt_run(e, "gen.blobs", "points=10000 dims=3 k=5 spread=0.5 label=true "
                                           "type=float64 seed=11");
    struct gcol f[3], lab;
    for (int j = 0; j < dims; j++) {
        char name[8];
        snprintf(name, sizeof name, "f%d", j);
        gcol_read(t, name, &f[j]);
        assert_int_equal(f[j].type, SL_TYPE_FLOAT64);
    }
    gcol_read(t, "label", &lab);
    assert_int_equal(lab.type, SL_TYPE_INT32);
    /* Per label: count, mean (the centre estimate) and variance per dimension. */
    double sum[5][3] = {{0}}, sq[5][3] = {{0}};
    int64_t cnt[5] = {0}, runs = 0;
    for (int64_t r = 0; r < lab.n; r++) {
        int64_t c = lab.i[r];
        assert_true(c >= 0 && c < k);
        cnt[c]++;
        runs += r > 0 && lab.i[r] != lab.i[r - 1];
        for (int j = 0; j < dims; j++) {
            sum[c][j] += f[j].f[r];
            sq[c][j] += f[j].f[r] * f[j].f[r];
        }
    }
    assert_true(runs > lab.n / 2); /* classes are interleaved */
    for (int c = 0; c < k; c++) {
        assert_true(cnt[c] > 1700 && cnt[c] < 2300); /* mean 2000, sd 40 */
        for (int j = 0; j < dims; j++) {
            double mean = sum[c][j] / (double)cnt[c];
            double var = sq[c][j] / (double)cnt[c] - mean * mean;
            uint64_t h = sl__gen_hash(11, SL__GEN_S_CENTRE, (uint64_t)(c * dims + j));
            double centre = -10.0 + 20.0 * sl__gen_unit(h);
            assert_true(mean >= -11 && mean <= 11);
            /* mean within 5 sd (0.5/sqrt(2000) = 0.011); variance 0.25 within 15%. */
            if (fabs(mean - centre) > 0.06 || fabs(var - 0.25) > 0.0375)
                fail_msg("centre %d dim %d: mean %g (centre %g), variance %g (0.25)", c, j,
                         mean, centre, var);
        }
    }
    for (int j = 0; j < dims; j++)
        gcol_free(&f[j]);
    gcol_free(&lab);
    sl_table_unref(t);
    /* Default: float32, no label. */
    t = gt_run(e, "gen.blobs", "points=10 dims=2 k=2");
    assert_int_equal(sl_batch_num_columns(sl_table_batch(t, 0)), 2);
    sl_table_unref(t);
    gt_close(e);
}

SL_TEST(uniform_blobs_bind_errors)
{
    expect_bind_error("gen.uniform", "rows=10 type=int32 min=1.5", SL_EINVAL, "min");
    expect_bind_error("gen.uniform", "rows=10 min=3 max=2", SL_EINVAL, "min");
    expect_bind_error("gen.uniform", "rows=10 type=int32 min=0 max=3000000000", SL_EOVERFLOW,
                      "int32");
    expect_bind_error("gen.uniform", "rows=10 type=decimal", SL_ETYPE, "type");
    expect_bind_error("gen.uniform", "rows=-5", SL_EINVAL, "rows");
    expect_bind_error("gen.uniform", "rows=5 null_rate=-1", SL_EINVAL, "null_rate");
    expect_bind_error("gen.blobs", "points=10 dims=0 k=2", SL_EINVAL, "dims");
    expect_bind_error("gen.blobs", "points=10 dims=2 k=0", SL_EINVAL, "k");
    expect_bind_error("gen.blobs", "points=10 dims=2", SL_EINVAL, "k");
    expect_bind_error("gen.blobs", "points=10 dims=2 k=2 type=int32", SL_ETYPE, "type");
    expect_bind_error("gen.blobs", "points=10 dims=2 k=2 spread=-1", SL_EINVAL, "spread");
    expect_bind_error("gen.blobs", "points=-1 dims=2 k=2", SL_EINVAL, "points");
    expect_bind_error("gen.blobs", "points=1 dims=2 k=2 label=maybe", SL_EINVAL, "label");
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

/* sl__gen_keys_at, what join and aggregate tests use for their references, checked
 * against the generator's specification (gen_keys.c's option docs), not against itself:
 * unique keys are the values offset .. offset+rows-1, each once; fk keys fall in
 * [0, pk_rows) for a fraction `match` of the valid rows and in [pk_rows, type max]
 * otherwise; m2m keys in [0, distinct); nulls at null_rate (within 5 standard
 * deviations). */
static void keys_at_follow_spec(const struct sl__gen_keys *k)
{
    int64_t valid = 0, in = 0, nulls = 0;
    uint8_t *seen = k->kind == SL__GEN_UNIQUE ? calloc((size_t)k->rows, 1) : NULL;
    for (int64_t row = 0; row < k->rows; row++) {
        bool ok;
        int64_t v = sl__gen_keys_at(k, (uint64_t)row, &ok);
        if (!ok) {
            nulls++;
            continue;
        }
        valid++;
        if (k->kind == SL__GEN_UNIQUE) {
            assert_in_range(v - k->offset, 0, k->rows - 1);
            assert_int_equal(seen[v - k->offset]++, 0);
        } else {
            assert_true(v >= 0 && v <= k->type_max);
            in += v < k->domain;
        }
    }
    free(seen);
    double sd = sqrt(k->null_rate * (1 - k->null_rate) / (double)k->rows);
    assert_true(fabs((double)nulls / (double)k->rows - k->null_rate) <= 5 * sd + 1e-12);
    if (k->kind == SL__GEN_M2M)
        assert_int_equal(in, valid);
    if (k->kind == SL__GEN_FK && valid > 0) {
        double f = (double)in / (double)valid, sm = sqrt(k->match * (1 - k->match) / valid);
        if (fabs(f - k->match) > 5 * sm + 1e-12)
            fail_msg("fk match=%g: %g of the keys in [0, %lld)", k->match, f,
                     (long long)k->domain);
    }
}

/* The operator's key of every row (identified through its payload p1 = row*31 + 1) is
 * sl__gen_keys_at's, which follows the specification (keys_at_follow_spec). */
SL_TEST(keys_at_matches_operator)
{
    const struct {
        const char *opts;
        struct sl__gen_keys k;
    } cases[] = {
        {"rows=3000 kind=fk pk_rows=700 match=0.6 zipf=1.2 null_rate=0.1 payloads=1 type=int64 "
         "seed=9",
         {.kind = SL__GEN_FK, .seed = 9, .rows = 3000, .domain = 700, .match = 0.6, .zipf = 1.2,
          .null_rate = 0.1, .type_max = INT64_MAX}},
        {"rows=3000 kind=fk pk_rows=100 match=0.3 payloads=1 seed=4",
         {.kind = SL__GEN_FK, .seed = 4, .rows = 3000, .domain = 100, .match = 0.3,
          .type_max = INT32_MAX}},
        {"rows=2000 kind=m2m distinct=50 zipf=0.7 payloads=1 payload_type=int64",
         {.kind = SL__GEN_M2M, .seed = 1, .rows = 2000, .domain = 50, .match = 1.0, .zipf = 0.7,
          .type_max = INT32_MAX}},
        {"rows=2000 offset=10 null_rate=0.2 payloads=1 payload_type=int64",
         {.kind = SL__GEN_UNIQUE, .seed = 1, .rows = 2000, .offset = 10, .match = 1.0,
          .null_rate = 0.2, .type_max = INT32_MAX}},
    };
    sl_engine_t *e = gt_open(2, 300);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct sl__gen_keys k = cases[c].k;
        SL_ASSERT_OK(sl__gen_keys_init(&k));
        keys_at_follow_spec(&k);
        sl_table_t *t = gt_run(e, "gen.keys", cases[c].opts);
        struct gcol key, p1;
        gcol_read(t, "k", &key);
        gcol_read(t, "p1", &p1);
        assert_int_equal(key.n, k.rows);
        for (int64_t r = 0; r < key.n; r++) {
            int64_t row = (p1.i[r] - 1) / 31;
            bool valid;
            int64_t want = sl__gen_keys_at(&k, (uint64_t)row, &valid);
            if (valid != (bool)key.valid[r] || (valid && want != key.i[r]))
                fail_msg("%s: row %lld: operator %s%lld, sl__gen_keys_at %s%lld", cases[c].opts,
                         (long long)row, key.valid[r] ? "" : "NULL ", (long long)key.i[r],
                         valid ? "" : "NULL ", (long long)want);
        }
        gcol_free(&key);
        gcol_free(&p1);
        sl_table_unref(t);
    }
    gt_close(e);
}
