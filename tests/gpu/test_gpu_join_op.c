/* Tests the join operator on a GPU (operators/join/join_cuda.c) against the same plan on
 * the CPU: PK-FK, duplicates on both sides, no matches, empty and one-row sides, skew,
 * 4- and 8-byte keys and two int32 key columns, 0 to 5 payloads per side (packed rows,
 * row-id gathers past 16 bytes), every kind (inner, left, semi, anti) and algorithm
 * (radix, nopart, sortmerge), keys sharing their low bits, materialized and aggregated output (int64 sums exact, negative values),
 * GPU-resident inputs with the output left on the GPU, and the cases the GPU leaves to
 * the CPU (null keys, a GPU budget too small): those must still be right,
 * with the batches a GPU sink kept brought back to host memory. Results are compared as
 * multisets of rows (count and an order-independent hash). Skipped without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda/cuda_int.h"
#include "exec_int.h"
#include "join_test.h"
#include "sl_test.h"
#include "gpu_test.h"

struct spec {
    int64_t rows;
    int key64, n_pay, pay64;
    int64_t key_range;                  /* keys drawn from [0, key_range); 0 = a permutation */
    int64_t key_offset;                 /* added to every key (no-match cases) */
    int skew;                           /* 1: 90% of rows take key 7 */
    int nulls;                          /* 1: every 10th key is null */
    int huge;                           /* int64 payloads up to 2^50 (sums overflow int64) */
    int mixed;                          /* payload c is int64 for odd c, else int32 */
    int key2;                           /* a second int32 key column "k2" in {0, 1} */
    int64_t key_mul;                    /* keys multiplied by this (shared low bits); 0 = 1 */
    int64_t key_add;                    /* added after the multiplication */
    uint64_t seed;
};

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static sl_table_t *make(const struct spec *sp, const char *side)
{
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    char names[16][16];
    const char *np[16];
    enum sl_type ty[16];
    int kc = sp->key2 ? 2 : 1, nc = kc + sp->n_pay;
    for (int c = 0; c < nc; c++) {
        if (c < kc)
            snprintf(names[c], sizeof names[c], c ? "k2" : "k");
        else
            snprintf(names[c], sizeof names[c], "%s%d", side, c);
        np[c] = names[c];
        ty[c] = c == 0 ? (sp->key64 ? SL_TYPE_INT64 : SL_TYPE_INT32)
                : c < kc ? SL_TYPE_INT32
                : (sp->pay64 || (sp->mixed && c % 2)) ? SL_TYPE_INT64 : SL_TYPE_INT32;
    }
    uint64_t s = sp->seed * 0x9E3779B97F4A7C15ull + 1;
    int64_t *keys = malloc((size_t)(sp->rows + 1) * sizeof *keys);
    for (int64_t i = 0; i < sp->rows; i++)
        keys[i] = i;
    for (int64_t i = sp->rows - 1; i > 0 && !sp->key_range; i--) {
        int64_t j = (int64_t)(rnd(&s) % (uint64_t)(i + 1)), x = keys[i];
        keys[i] = keys[j];
        keys[j] = x;
    }
    for (int64_t i = 0; i < sp->rows; i++) {
        if (sp->key_range)
            keys[i] = (int64_t)(rnd(&s) % (uint64_t)sp->key_range);
        if (sp->skew && rnd(&s) % 10 < 9)
            keys[i] = 7;
        keys[i] += sp->key_offset;
        keys[i] *= sp->key_mul ? sp->key_mul : 1;
        keys[i] += sp->key_add;
    }
    const int64_t chunk = 40000; /* several batches, and batches of other sizes than morsels */
    for (int64_t lo = 0; lo < sp->rows || lo == 0; lo += chunk) {
        int64_t m = sp->rows - lo < chunk ? sp->rows - lo : chunk;
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, nc, np, ty, m));
        for (int c = 0; c < nc; c++) {
            void *d = sl_batch_column_data(b, c);
            for (int64_t i = 0; i < m; i++) {
                int64_t v = c == 0 ? keys[lo + i]
                            : c < kc ? (int64_t)(rnd(&s) % 2)
                                     : (int64_t)(rnd(&s) % 2000001) - 1000000 +
                                           (ty[c] == SL_TYPE_INT64
                                                ? (int64_t)(rnd(&s) % 1000) << (sp->huge ? 40 : 20)
                                                : 0);
                if (ty[c] == SL_TYPE_INT64)
                    ((int64_t *)d)[i] = v;
                else
                    ((int32_t *)d)[i] = (int32_t)v;
            }
        }
        if (sp->nulls) {
            uint8_t *valid = sl_batch_column_validity(b, 0);
            for (int64_t i = 0; i < m; i += 10)
                valid[i / 8] &= (uint8_t) ~(1u << (i % 8));
        }
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
        if (m == 0)
            break;
    }
    free(keys);
    return t;
}

/* The same join on the CPU and on the GPU; `expect_gpu` says whether the GPU should
 * have finalized it (else it must have left it to the CPU). */
static void check(const struct spec *ls, const struct spec *rs, const char *opts, int expect_gpu,
                  int resident, int64_t gpu_mem)
{
    sl_table_t *l = make(ls, "l"), *r = make(rs, "r");
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0), *gpu = gpu_test_engine(SL_PLACE_GPU, gpu_mem);
    join_check_on(cpu, gpu, l, r, opts, expect_gpu, resident);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
    sl_table_unref(l);
    sl_table_unref(r);
}

SL_TEST(pk_fk_narrow_int32)
{
    NEED_GPU();
    struct spec pk = {.rows = 100000, .n_pay = 1, .seed = 1};
    struct spec fk = {.rows = 300000, .n_pay = 1, .key_range = 100000, .seed = 2};
    check(&fk, &pk, "on=k", 1, 0, 0);
    check(&fk, &pk, "on=k", 1, 1, 0); /* GPU-resident inputs, output left on the GPU */
}

SL_TEST(duplicates_both_sides_wide_int64)
{
    NEED_GPU();
    struct spec a = {.rows = 60000, .key64 = 1, .n_pay = 2, .pay64 = 1, .key_range = 1500, .seed = 3};
    struct spec b = {.rows = 20000, .key64 = 1, .n_pay = 3, .key_range = 1500, .seed = 4};
    check(&a, &b, "on=k", 1, 0, 0);
    check(&a, &b, "on=k", 1, 1, 0);
}

SL_TEST(narrow_int64_payloads_and_8_byte_keys)
{
    NEED_GPU();
    struct spec a = {.rows = 90000, .key64 = 1, .n_pay = 1, .pay64 = 1, .key_range = 50000, .seed = 5};
    struct spec b = {.rows = 50000, .key64 = 1, .n_pay = 1, .pay64 = 1, .seed = 6};
    check(&a, &b, "on=k", 1, 0, 0);
}

SL_TEST(skew_and_no_matches)
{
    NEED_GPU();
    struct spec a = {.rows = 200000, .n_pay = 1, .key_range = 50000, .skew = 1, .seed = 7};
    struct spec b = {.rows = 50000, .n_pay = 1, .seed = 8};
    check(&a, &b, "on=k", 1, 0, 0);
    struct spec c = {.rows = 50000, .n_pay = 1, .key_offset = 1000000, .seed = 9};
    check(&a, &c, "on=k", 1, 0, 0);
    /* A build key repeated ~5,000 times: several shared-memory chunks per partition. */
    struct spec d = {.rows = 6000, .n_pay = 1, .key_range = 1, .seed = 10};
    struct spec e = {.rows = 3000, .n_pay = 1, .key_range = 3, .seed = 11};
    check(&e, &d, "on=k", 1, 0, 0);
}

SL_TEST(empty_and_one_row_sides)
{
    NEED_GPU();
    struct spec empty = {.rows = 0, .n_pay = 1, .seed = 12};
    struct spec one = {.rows = 1, .n_pay = 1, .seed = 13};
    struct spec many = {.rows = 1000, .n_pay = 1, .key_range = 3, .seed = 14};
    check(&empty, &many, "on=k", 1, 0, 0);
    check(&many, &empty, "on=k", 1, 0, 0);
    check(&one, &many, "on=k", 1, 0, 0);
    check(&one, &one, "on=k", 1, 0, 0);
}

SL_TEST(aggregate_output_exact)
{
    NEED_GPU();
    struct spec a = {.rows = 150000, .n_pay = 1, .key_range = 30000, .seed = 15};
    struct spec b = {.rows = 30000, .n_pay = 1, .seed = 16};
    check(&a, &b, "on=k output=aggregate", 1, 0, 0);
    struct spec c = {.rows = 80000, .key64 = 1, .n_pay = 2, .pay64 = 1, .key_range = 900, .seed = 17};
    struct spec d = {.rows = 9000, .key64 = 1, .n_pay = 1, .pay64 = 1, .key_range = 900, .seed = 18};
    check(&c, &d, "on=k output=aggregate", 1, 0, 0);
    check(&c, &d, "on=k output=aggregate", 1, 1, 0);
}

/* An int64 sum past int64 is an error on the GPU as on the CPU, and the engine goes on. */
SL_TEST(aggregate_overflow_is_an_error)
{
    NEED_GPU();
    struct spec c = {.rows = 80000, .key64 = 1, .n_pay = 1, .pay64 = 1, .huge = 1, .key_range = 900, .seed = 24};
    struct spec d = {.rows = 9000, .key64 = 1, .n_pay = 1, .pay64 = 1, .key_range = 900, .seed = 25};
    sl_table_t *l = make(&c, "l"), *r = make(&d, "r");
    sl_engine_t *gpu = gpu_test_engine(SL_PLACE_GPU, 0);
    sl_plan_t *p;
    int nl, nr, nj;
    SL_ASSERT_OK(sl_plan_create(&p));
    SL_ASSERT_OK(sl_plan_add_table(p, l, &nl));
    SL_ASSERT_OK(sl_plan_add_table(p, r, &nr));
    SL_ASSERT_OK(sl_plan_add(p, "join", (int[]){nl, nr}, 2, "on=k output=aggregate", &nj));
    SL_ASSERT_OK(sl_plan_output(p, nj, "o"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(gpu, p, &q));
    assert_int_equal(sl_query_run(q), SL_EOVERFLOW);
    printf("%s\n", sl_query_errmsg(q));
    assert_non_null(strstr(sl_query_errmsg(q), "overflows int64"));
    assert_true(q->ops[nj].home_gpu >= 0);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_engine_close(gpu);
    sl_table_unref(l);
    sl_table_unref(r);
    struct spec a = {.rows = 1000, .n_pay = 1, .key_range = 100, .seed = 26};
    check(&a, &a, "on=k", 1, 0, 0); /* a fresh engine still works */
}

/* Every kind x key (int32, int64, two int32 columns) x payload count (0, 1, 2, 3 and 5
 * per side, mixed widths: 5 is past one 16-byte row) x algorithm, on keys duplicated on
 * both sides with probe keys without a partner: all finalized on the GPU. */
SL_TEST(kinds_keys_payloads_algorithms)
{
    NEED_GPU();
    static const char *const kinds[] = {"inner", "left", "semi", "anti"};
    static const char *const algos[] = {"radix", "nopart", "sortmerge"};
    static const int pays[] = {0, 1, 2, 3, 5};
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0), *gpu = gpu_test_engine(SL_PLACE_GPU, 0);
    for (int key = 0; key < 3; key++) {
        for (size_t pi = 0; pi < sizeof pays / sizeof pays[0]; pi++) {
            struct spec ls = {.rows = 20000, .key64 = key == 1, .key2 = key == 2,
                              .n_pay = pays[pi], .mixed = 1, .key_range = 3000,
                              .seed = 100 + (uint64_t)(key * 10 + (int)pi)};
            struct spec rs = ls;
            rs.rows = 6000;
            rs.key_range = 4000; /* some right keys unmatched, and left keys past 3000 none */
            rs.n_pay = pays[(pi + 2) % 5];
            rs.seed += 1000;
            sl_table_t *l = make(&ls, "l"), *r = make(&rs, "r");
            for (int k = 0; k < 4; k++) {
                for (int a = 0; a < 3; a++) {
                    char opts[128];
                    snprintf(opts, sizeof opts, "on=%s kind=%s algo=%s", key == 2 ? "\"k,k2\"" : "k",
                             kinds[k], algos[a]);
                    join_check_on(cpu, gpu, l, r, opts, 1, a == 0);
                }
            }
            sl_table_unref(l);
            sl_table_unref(r);
        }
    }
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

/* The edge cases for every kind: empty sides (anti/left with an empty right side go to
 * the CPU), one row, no matches, skew, a heavy build key; aggregates of left joins. */
SL_TEST(kinds_edge_cases)
{
    NEED_GPU();
    static const char *const kinds[] = {"inner", "left", "semi", "anti"};
    struct spec empty = {.rows = 0, .n_pay = 1, .seed = 30};
    struct spec one = {.rows = 1, .n_pay = 2, .seed = 31};
    struct spec many = {.rows = 1000, .n_pay = 1, .key_range = 3, .seed = 32};
    struct spec skew = {.rows = 50000, .n_pay = 1, .key_range = 20000, .skew = 1, .seed = 33};
    struct spec pk = {.rows = 20000, .n_pay = 2, .seed = 34};
    struct spec far = {.rows = 5000, .n_pay = 1, .key_offset = 1000000, .seed = 35};
    struct spec heavy = {.rows = 6000, .n_pay = 1, .key_range = 1, .seed = 36};
    struct spec few = {.rows = 3000, .n_pay = 1, .key_range = 3, .seed = 37};
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0), *gpu = gpu_test_engine(SL_PLACE_GPU, 0);
    const struct spec *cases[][2] = {{&empty, &many}, {&many, &empty}, {&one, &many},
                                     {&one, &one},    {&skew, &pk},    {&pk, &far},
                                     {&few, &heavy},  {&heavy, &few}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        sl_table_t *l = make(cases[c][0], "l"), *r = make(cases[c][1], "r");
        for (int k = 0; k < 4; k++) {
            int gpu_ok = !(k == 1 || k == 3) || cases[c][1]->rows > 0 || cases[c][0]->rows == 0;
            for (int agg = 0; agg < 2; agg++) {
                char opts[128];
                snprintf(opts, sizeof opts, "on=k kind=%s algo=radix%s", kinds[k],
                         agg ? " output=aggregate" : "");
                join_check_on(cpu, gpu, l, r, opts, gpu_ok, agg == 0);
            }
        }
        sl_table_unref(l);
        sl_table_unref(r);
    }
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

/* NPJ with more columns a side than its probe copies (SL_K_MAX_COLS = 8: the rest are
 * gathered by row number), on build keys that are dense and unique (the direct table),
 * dense with duplicates (found while building it: the hash table, walking every run),
 * sparse and unique (the hash table, stopping at the first match), negative and dense,
 * and without matches; int32 and int64 keys; `auto` picks NPJ for these small builds. */
SL_TEST(nopart_wide_sides_dense_sparse_and_duplicate_builds)
{
    NEED_GPU();
    static const char *const kinds[] = {"inner", "semi", "anti"};
    struct spec probe = {.rows = 50000, .n_pay = 10, .mixed = 1, .key_range = 25000, .seed = 60};
    struct spec pk = {.rows = 20000, .n_pay = 9, .mixed = 1, .seed = 61};
    struct spec dup = {.rows = 20000, .n_pay = 9, .mixed = 1, .key_range = 12000, .seed = 62};
    struct spec far = {.rows = 20000, .n_pay = 2, .key_offset = 1 << 20, .seed = 63};
    struct spec sparse = {.rows = 20000, .n_pay = 3, .key_mul = 7, .seed = 64};
    struct spec probe_neg = {.rows = 40000, .n_pay = 2, .key_range = 25000, .key_offset = -30000, .seed = 65};
    struct spec neg = {.rows = 20000, .n_pay = 1, .key_offset = -30000, .seed = 66};
    struct spec probe64 = {.rows = 40000, .key64 = 1, .n_pay = 2, .key_range = 25000, .key_offset = -5000, .seed = 67};
    struct spec pk64 = {.rows = 20000, .key64 = 1, .n_pay = 2, .pay64 = 1, .key_offset = -5000, .seed = 68};
    struct spec dup64 = {.rows = 20000, .key64 = 1, .n_pay = 1, .key_range = 15000, .seed = 69};
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0), *gpu = gpu_test_engine(SL_PLACE_GPU, 0);
    const struct spec *cases[][2] = {{&probe, &pk},         {&probe, &dup},     {&probe, &far},
                                     {&probe, &sparse},     {&probe_neg, &neg}, {&probe64, &pk64},
                                     {&probe64, &dup64}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        sl_table_t *l = make(cases[c][0], "l"), *r = make(cases[c][1], "r");
        for (int k = 0; k < 3; k++)
            for (int a = 0; a < 2; a++) {
                char opts[128];
                snprintf(opts, sizeof opts, "on=k kind=%s algo=%s", kinds[k], a ? "auto" : "nopart");
                join_check_on(cpu, gpu, l, r, opts, 1, a);
            }
        sl_table_unref(l);
        sl_table_unref(r);
    }
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

/* The profile's npj_kind of the last GPU join: 0 hash, 1 direct table of rows, 2 with
 * values; -1 when none. */
static int last_npj_table(void)
{
    const char *at = strstr(last_profile, "\"npj_kind\":");
    return at ? atoi(at + strlen("\"npj_kind\":")) : -1;
}

/* The direct table past the L2 cache (issue 19): n = 2^23 unique dense build keys (a 32-64 MB
 * table of values with its 1 MB bitmap), with debug_join_dense values and rows, against
 * the CPU: one int32 payload (the table's value), one int64 payload with int64 keys
 * and negative keys (8-byte values), an int64 and an int32 payload (12 bytes packed into
 * 16), three int64 payloads (24 bytes: the old table of rows), a quarter of
 * the probe keys matching, none matching, duplicates in the dense range (the hash table
 * instead), a sparse range (the hash table), keys at the int32 extremes; inner, semi and
 * anti. The profile says which table ran. */
static void dense_cases(int64_t n)
{
    static const char *const kinds[] = {"inner", "semi", "anti"};
    static const char *const modes[] = {"values", "rows"};
    struct spec probe = {.rows = n, .n_pay = 1, .key_range = 4 * n, .seed = 80};
    struct spec pk = {.rows = n, .n_pay = 1, .seed = 81};
    struct spec probe64 = {.rows = n, .key64 = 1, .n_pay = 1, .pay64 = 1, .key_range = n,
                           .key_offset = -((int64_t)1 << 40), .seed = 82};
    struct spec pk64 = {.rows = n, .key64 = 1, .n_pay = 1, .pay64 = 1,
                        .key_offset = -((int64_t)1 << 40), .seed = 83};
    struct spec pk2 = {.rows = n, .n_pay = 2, .mixed = 1, .seed = 84};
    struct spec pk3 = {.rows = n, .n_pay = 3, .pay64 = 1, .seed = 92};
    struct spec none = {.rows = n + 1000, .n_pay = 1, .key_range = n, .key_offset = 2 * n, .seed = 85};
    struct spec dup = {.rows = n, .n_pay = 1, .key_range = n + n / 2, .seed = 86};
    struct spec sparse = {.rows = n / 4, .n_pay = 1, .key_mul = 5, .seed = 87};
    struct spec probe_hi = {.rows = 5000, .n_pay = 1, .key_range = 4000, .key_add = 2147483647 - 3000, .seed = 88};
    struct spec pk_hi = {.rows = 3001, .n_pay = 1, .key_add = 2147483647 - 3000, .seed = 89};
    struct spec probe_lo = {.rows = 5000, .n_pay = 2, .key_range = 4000, .key_add = -2147483647 - 1, .seed = 90};
    struct spec pk_lo = {.rows = 3000, .n_pay = 1, .key_add = -2147483647 - 1, .seed = 91};
    struct {
        const struct spec *l, *r;
        int table; /* npj_table expected with values (1 with rows; 0 stays 0) */
    } cases[] = {{&probe, &pk, 2},     {&probe64, &pk64, 2}, {&probe, &pk2, 2},
                 {&none, &pk, 2},      {&probe, &dup, 0},    {&probe, &sparse, 0},
                 {&probe_hi, &pk_hi, 2}, {&probe_lo, &pk_lo, 2}, {&probe, &pk3, 1}};
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0), *gpu = gpu_test_engine(SL_PLACE_GPU, 0);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        sl_table_t *l = make(cases[c].l, "l"), *r = make(cases[c].r, "r");
        for (int m = 0; m < 2; m++) {
            SL_ASSERT_OK(sl_engine_option_set(gpu, "debug_join_dense", modes[m]));
            for (int k = 0; k < 3; k++) {
                if (k > 0 && c != 0 && c != 1 && c != 6)
                    continue; /* semi and anti: three cases */
                char opts[128];
                snprintf(opts, sizeof opts, "on=k kind=%s algo=nopart", kinds[k]);
                join_check_on(cpu, gpu, l, r, opts, 1, 1);
                int want = cases[c].table == 2 && m == 1 ? 1 : cases[c].table;
                if (last_npj_table() != want)
                    printf("case %zu %s %s: npj_kind %d, want %d\n", c, opts, modes[m],
                           last_npj_table(), want);
                assert_int_equal(last_npj_table(), want);
            }
        }
        sl_table_unref(l);
        sl_table_unref(r);
    }
    SL_ASSERT_OK(sl_engine_option_set(gpu, "debug_join_dense", "values"));
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

/* algo=auto past the NPJ rules (2^22 build rows, a 16 MiB table with values: in L2):
 * unique dense keys take the direct table with values (inner, semi), keys repeated in a
 * dense range PHJ after the attempt (profile npj_dense_dup); 2^24 build rows of 8 bytes
 * (a 130 MiB table) PHJ, but their semi join the bitmap alone (2 MiB); against the CPU. */
SL_TEST(auto_dense_table_mid_size)
{
    NEED_GPU();
    static const char *const kinds[] = {"inner", "semi"};
    const int64_t n = (int64_t)1 << 22;
    struct spec probe = {.rows = 2 * n, .n_pay = 1, .key_range = 2 * n, .seed = 93};
    struct spec pk = {.rows = n, .n_pay = 1, .seed = 94};
    struct spec dup = {.rows = n, .n_pay = 1, .key_range = n + n / 2, .seed = 95};
    struct spec big_probe = {.rows = 8 * n, .n_pay = 1, .key_range = 8 * n, .seed = 96};
    struct spec big = {.rows = 4 * n, .n_pay = 2, .seed = 97};
    struct {
        const struct spec *l, *r;
        int algo[2], fell; /* gpu_algo (inner, semi), npj_dense_dup */
    } cases[] = {{&probe, &pk, {1, 1}, 0}, {&probe, &dup, {0, 0}, 1}, {&big_probe, &big, {0, 1}, 0}};
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0), *gpu = gpu_test_engine(SL_PLACE_GPU, 0);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        sl_table_t *l = make(cases[c].l, "l"), *r = make(cases[c].r, "r");
        for (int k = 0; k < 2; k++) {
            char opts[64];
            snprintf(opts, sizeof opts, "on=k kind=%s", kinds[k]);
            join_check_on(cpu, gpu, l, r, opts, 1, 1);
            const char *at = strstr(last_profile, "\"gpu_algo\":");
            int algo = at ? atoi(at + strlen("\"gpu_algo\":")) : -1;
            int fell = strstr(last_profile, "\"npj_dense_dup\":1") != NULL;
            if (algo != cases[c].algo[k] || fell != cases[c].fell ||
                (algo == 1 && last_npj_table() != 2))
                printf("case %zu %s: gpu_algo %d, npj_kind %d, dense_dup %d\n", c, opts, algo,
                       last_npj_table(), fell);
            assert_int_equal(algo, cases[c].algo[k]);
            assert_int_equal(fell, cases[c].fell);
            if (algo == 1)
                assert_int_equal(last_npj_table(), 2);
        }
        sl_table_unref(l);
        sl_table_unref(r);
    }
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

SL_TEST(nopart_dense_tables_past_l2)
{
    NEED_GPU();
    dense_cases((int64_t)1 << 23);
}

/* The same cases small, for compute-sanitizer. */
SL_TEST(sanitize_dense_tables)
{
    NEED_GPU();
    dense_cases(4096);
}

/* Small inputs for compute-sanitizer (bench/device_run.sh --sanitize): every kind and
 * algorithm with a 12-byte row and with row-id gathers (5 and 10 payloads), 8-byte keys and
 * two key columns; `tiny` (racecheck) the PHJ inner and left joins only. */
static void small_cases(int tiny)
{
    static const char *const kinds[] = {"inner", "left", "semi", "anti"};
    static const char *const algos[] = {"radix", "nopart", "sortmerge"};
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0), *gpu = gpu_test_engine(SL_PLACE_GPU, 0);
    for (int v = 0; v < (tiny ? 1 : 5); v++) {
        struct spec ls = {.rows = tiny ? 600 : 3000, .n_pay = v == 1 ? 5 : v == 4 ? 10 : 3, .mixed = 1,
                          .key64 = v == 2, .key2 = v == 3, .key_range = 500, .seed = 50 + v};
        struct spec rs = ls;
        rs.rows = tiny ? 300 : 800;
        rs.key_range = 700;
        rs.seed += 7;
        sl_table_t *l = make(&ls, "l"), *r = make(&rs, "r");
        for (int k = 0; k < (tiny ? 2 : 4); k++)
            for (int a = 0; a < (tiny ? 1 : 3); a++) {
                char opts[128];
                snprintf(opts, sizeof opts, "on=%s kind=%s algo=%s", v == 3 ? "\"k,k2\"" : "k",
                         kinds[k], algos[a]);
                join_check_on(cpu, gpu, l, r, opts, 1, 1);
            }
        sl_table_unref(l);
        sl_table_unref(r);
    }
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

SL_TEST(sanitize_small)
{
    NEED_GPU();
    small_cases(0);
}

SL_TEST(sanitize_tiny)
{
    NEED_GPU();
    small_cases(1);
}

/* Null keys never match; the GPU leaves them (and nulls in output columns) to the CPU. */
SL_TEST(null_keys_fall_back_to_the_cpu)
{
    NEED_GPU();
    struct spec b = {.rows = 40000, .n_pay = 1, .seed = 20};
    struct spec n = {.rows = 50000, .n_pay = 1, .key_range = 40000, .nulls = 1, .seed = 21};
    check(&n, &b, "on=k", 0, 0, 0);
    check(&n, &b, "on=k kind=anti", 0, 1, 0);
    check(&b, &n, "on=k kind=left", 0, 0, 0);
}

/* Keys that share their low 10 bits (multiples of 1024): partitioning starts at bit 10
 * (else every row lands in one partition); read from the GPU join's profile values. */
SL_TEST(keys_sharing_low_bits)
{
    NEED_GPU();
    struct spec pk = {.rows = 1 << 21, .n_pay = 1, .key_mul = 1024, .seed = 40};
    struct spec fk = {.rows = 1 << 21, .n_pay = 1, .key_range = 1 << 21, .key_mul = 1024, .seed = 41};
    check(&fk, &pk, "on=k algo=radix", 1, 1, 0);
    printf("%s\n", last_profile);
    assert_non_null(strstr(last_profile, "\"gpu_algo\":0,")); /* PHJ */
    assert_non_null(strstr(last_profile, "\"begin_bit\":10,"));
}

/* A row count of the last GPU join ("probe_rows", "build_rows": the rows it
 * partitioned), from its profile values. */
static long long rows_of_last_join(const char *what)
{
    char key[32];
    snprintf(key, sizeof key, "\"%s\":", what);
    const char *at = strstr(last_profile, key);
    assert_non_null(at);
    return atoll(at + strlen(key));
}

static long long probe_rows_of_last_join(void)
{
    return rows_of_last_join("probe_rows");
}

/* Low match ratio, the probe keys without a partner outside the build keys' range: PHJ
 * drops them before partitioning (inner and semi: checked from the phase line), and keeps
 * them for anti and left; int32 and int64 keys, one and three payloads (a 16-byte row with
 * a row id: the third column is gathered by it); a build spread over the probe keys'
 * range (every fifth key) is not filtered. */
SL_TEST(probe_filter_low_match)
{
    NEED_GPU();
    static const char *const kinds[] = {"inner", "semi", "anti", "left"};
    struct spec pk = {.rows = 200000, .n_pay = 3, .mixed = 1, .key_offset = 5000, .seed = 70};
    struct spec probe = {.rows = 1200000, .n_pay = 1, .key_range = 1000000, .seed = 71};
    struct spec pk64 = {.rows = 150000, .key64 = 1, .n_pay = 1, .seed = 72};
    struct spec probe64 = {.rows = 1100000, .key64 = 1, .n_pay = 3, .mixed = 1, .key_range = 600000, .seed = 73};
    struct spec sparse = {.rows = 200000, .n_pay = 1, .key_mul = 5, .seed = 74};
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0), *gpu = gpu_test_engine(SL_PLACE_GPU, 0);
    const struct spec *cases[][2] = {{&probe, &pk}, {&probe64, &pk64}, {&probe, &sparse}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        sl_table_t *l = make(cases[c][0], "l"), *r = make(cases[c][1], "r");
        for (int k = 0; k < 4; k++) {
            char opts[128];
            snprintf(opts, sizeof opts, "on=k kind=%s algo=radix", kinds[k]);
            join_check_on(cpu, gpu, l, r, opts, 1, 1);
            long long kept = probe_rows_of_last_join();
            printf("%s, case %zu: %lld of %lld probe rows partitioned\n", opts, c, kept,
                   (long long)cases[c][0]->rows);
            if (c < 2 && k < 2)
                assert_true(kept < cases[c][0]->rows / 2); /* filtered */
            else
                assert_int_equal(kept, cases[c][0]->rows);
        }
        sl_table_unref(l);
        sl_table_unref(r);
    }
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

/* Low match ratio, issue 19: with debug_join_filter=auto the probe rows inside the build
 * keys' range are kept, then, when those are few, an exact bitmap of their keys keeps
 * only the build rows with a partner; debug_join_filter=fused does the same with each
 * side's keys and packed rows in one CUB pass, mask in two passes of its own (each side
 * marked and counted, then written), and range (the old path) filters the probe
 * side alone. Every kind against the CPU: int32 build keys of every third value
 * (the kept probe rows mostly miss), 8-byte keys at a 10% match ratio with three payloads
 * (a row id), probe keys with duplicates and a hot key, and no matches at all (odd probe
 * keys, even build keys: no build row kept). */
SL_TEST(key_bitmap_filter_low_match)
{
    NEED_GPU();
    static const char *const kinds[] = {"inner", "semi", "anti", "left"};
    struct spec thirds = {.rows = 400000, .n_pay = 2, .key_mul = 3, .seed = 80};
    struct spec probe = {.rows = 1200000, .n_pay = 1, .key_range = 12000000, .seed = 81};
    struct spec pk64 = {.rows = 300000, .key64 = 1, .n_pay = 3, .mixed = 1, .seed = 82};
    struct spec probe64 = {.rows = 1100000, .key64 = 1, .n_pay = 1, .pay64 = 1,
                           .key_range = 3000000, .seed = 83};
    struct spec thirds2 = {.rows = 800000, .n_pay = 1, .key_mul = 3, .seed = 87};
    struct spec hot = {.rows = 1100000, .n_pay = 1, .key_range = 12000000, .seed = 84};
    struct spec evens = {.rows = 300000, .n_pay = 1, .key_mul = 2, .seed = 85};
    struct spec odds = {.rows = 1100000, .n_pay = 1, .key_range = 3000000, .key_mul = 2,
                        .key_add = 1, .seed = 86};
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0), *gpu = gpu_test_engine(SL_PLACE_GPU, 0);
    const struct spec *cases[][2] = {{&probe, &thirds}, {&probe64, &pk64}, {&hot, &thirds2},
                                     {&odds, &evens}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        sl_table_t *l = make(cases[c][0], "l"), *r = make(cases[c][1], "r");
        if (c == 2) { /* an eighth of the probe rows (hashed picks) take key 3, a build key */
            for (int64_t bi = 0, at = 0; bi < sl_table_num_batches(l); bi++) {
                sl_batch_t *b = sl_table_batch(l, bi);
                int32_t *k = sl_batch_column_data(b, 0);
                for (int64_t i = 0; i < sl_batch_num_rows(b); i++, at++)
                    if (((uint64_t)at * 0x9E3779B97F4A7C15ull) >> 61 == 0)
                        k[i] = 3;
            }
        }
        static const char *const modes[] = {"auto", "range", "fused", "mask"};
        for (int mode = 0; mode < 4; mode++) {
            SL_ASSERT_OK(sl_engine_option_set(gpu, "debug_join_filter", modes[mode]));
            for (int k = 0; k < 4; k++) {
                char opts[128];
                snprintf(opts, sizeof opts, "on=k kind=%s algo=radix", kinds[k]);
                join_check_on(cpu, gpu, l, r, opts, 1, 1);
                long long kept = rows_of_last_join("probe_rows");
                long long built = rows_of_last_join("build_rows");
                printf("%s, %s, case %zu: %lld of %lld probe rows, %lld of %lld build rows\n",
                       opts, modes[mode], c, kept, (long long)cases[c][0]->rows, built,
                       (long long)cases[c][1]->rows);
                if (k >= 2) { /* anti and left: never filtered */
                    assert_int_equal(kept, cases[c][0]->rows);
                    assert_int_equal(built, cases[c][1]->rows);
                    continue;
                }
                assert_true(kept < cases[c][0]->rows / 2); /* the probe rows in range */
                if (mode == 1) /* range: the build side whole */
                    assert_int_equal(built, cases[c][1]->rows);
                else if (c == 3) /* no build row has a partner */
                    assert_int_equal(built, 0);
                else
                    assert_true(built < cases[c][1]->rows / 2);
            }
        }
        sl_table_unref(l);
        sl_table_unref(r);
    }
    SL_ASSERT_OK(sl_engine_option_set(gpu, "debug_join_filter", "auto"));
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

/* Probe keys in a 2^16-row batch: row r of every batch lies outside the build keys'
 * range when r % 512 == 0 (the rows the strided filter sample reads when the side is
 * 2^21 rows), else inside it (key r * 7 % build_n). */
static sl_table_t *make_sample_misses(int64_t rows, int64_t build_n)
{
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    const char *np[2] = {"k", "l1"};
    enum sl_type ty[2] = {SL_TYPE_INT32, SL_TYPE_INT32};
    for (int64_t lo = 0; lo < rows; lo += 1 << 16) {
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, 2, np, ty, 1 << 16));
        int32_t *k = sl_batch_column_data(b, 0), *v = sl_batch_column_data(b, 1);
        for (int64_t r = 0; r < 1 << 16; r++) {
            k[r] = r % 512 == 0 ? (int32_t)(build_n + 1000 + r) : (int32_t)((lo + r) * 7 % build_n);
            v[r] = (int32_t)(lo + r);
        }
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
    }
    return t;
}

/* The fused filter's outputs (debug_join_filter=fused) are sized by estimates (issue 19):
 * when more rows are kept than estimated, a second pass writes them into outputs of their
 * exact size. Probe rows that the sample sees outside the range but are mostly inside it
 * (the probe side's second pass), build keys repeated 8 times (more build rows kept than
 * probe rows: the build side's), and keys at the top of the int32 and int64 ranges; every
 * debug_join_filter mode, inner and semi joins against the CPU. */
SL_TEST(key_bitmap_filter_second_pass)
{
    NEED_GPU();
    static const char *const modes[] = {"fused", "auto", "range", "mask"};
    static const char *const kinds[] = {"inner", "semi"};
    struct spec build = {.rows = 1 << 20, .n_pay = 2, .seed = 90};
    struct spec dup_probe = {.rows = 1200000, .n_pay = 1, .key_range = 12000000, .seed = 91};
    struct spec dup_build = {.rows = 400000, .n_pay = 2, .key_range = 50000, .seed = 92};
    struct spec top_probe = {.rows = 1100000, .n_pay = 1, .key_range = 3000000,
                             .key_offset = INT32_MAX - 3000000 + 1, .seed = 93};
    struct spec top_build = {.rows = 300000, .n_pay = 1, .key_offset = INT32_MAX - 300000 + 1,
                             .seed = 94};
    struct spec top64_probe = {.rows = 1100000, .key64 = 1, .n_pay = 1, .key_range = 3000000,
                               .key_offset = INT64_MAX - 3000000 + 1, .seed = 95};
    struct spec top64_build = {.rows = 300000, .key64 = 1, .n_pay = 3, .mixed = 1,
                               .key_offset = INT64_MAX - 300000 + 1, .seed = 96};
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0), *gpu = gpu_test_engine(SL_PLACE_GPU, 0);
    for (int c = 0; c < 4; c++) {
        sl_table_t *l = c == 0   ? make_sample_misses((int64_t)1 << 21, build.rows)
                        : c == 1 ? make(&dup_probe, "l")
                        : c == 2 ? make(&top_probe, "l")
                                 : make(&top64_probe, "l");
        sl_table_t *r = make(c == 0 ? &build : c == 1 ? &dup_build : c == 2 ? &top_build
                                                                           : &top64_build,
                             "r");
        for (int mode = 0; mode < 4; mode++) {
            SL_ASSERT_OK(sl_engine_option_set(gpu, "debug_join_filter", modes[mode]));
            for (int k = 0; k < 2; k++) {
                char opts[128];
                snprintf(opts, sizeof opts, "on=k kind=%s algo=radix", kinds[k]);
                join_check_on(cpu, gpu, l, r, opts, 1, 1);
                long long kept = rows_of_last_join("probe_rows");
                long long built = rows_of_last_join("build_rows");
                long long passes = mode == 0 ? rows_of_last_join("filter_passes") : 0;
                printf("%s, %s, case %d: %lld probe rows, %lld build rows, %lld passes\n", opts,
                       modes[mode], c, kept, built, passes);
                if (mode == 0 && c == 0)
                    assert_int_equal(passes, 2); /* the probe side's second pass, no bitmap */
                if (mode == 0 && c == 1)
                    assert_int_equal(passes, 3); /* the build side's second pass */
                if (mode == 0 && c >= 2)
                    assert_int_equal(passes, 2); /* both sides, once each */
            }
        }
        sl_table_unref(l);
        sl_table_unref(r);
    }
    SL_ASSERT_OK(sl_engine_option_set(gpu, "debug_join_filter", "auto"));
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

SL_TEST(small_gpu_budget_runs_out_of_core)
{
    NEED_GPU();
    struct spec a = {.rows = 400000, .n_pay = 1, .key_range = 100000, .seed = 22};
    struct spec b = {.rows = 100000, .n_pay = 1, .seed = 23};
    check(&a, &b, "on=k", 1, 0, 48 << 20); /* out of core on the GPU (issue 8) */
}

/* Whether output=aggregate sums a column of type t (integers, floats, decimals). */
static int join_sum_ok(enum sl_type t)
{
    return t == SL_TYPE_INT32 || t == SL_TYPE_INT64 || SL_TYPE_ID(t) == SL_TYPE_DECIMAL;
}

/* A dictionary of DICT_N strings "k0", "k1", ... for keys as codes (reversed: the same
 * strings in the opposite order, so that a code means another string). */
enum { DICT_N = 100000 };
static int32_t dict_offs[DICT_N + 1];
static char dict_chars[DICT_N * 8];

static void make_dict(int reversed)
{
    int32_t at = 0;
    for (int i = 0; i < DICT_N; i++) {
        dict_offs[i] = at;
        at += snprintf(dict_chars + at, sizeof dict_chars - (size_t)at, "k%d",
                       reversed ? DICT_N - 1 - i : i);
    }
    dict_offs[DICT_N] = at;
}

/* A copy of table t whose column c has type `to` (same width: the values' bits kept). */
static sl_table_t *retype(sl_table_t *t, int c, enum sl_type to)
{
    sl_table_t *o;
    SL_ASSERT_OK(sl_table_create(&o));
    for (int64_t bi = 0; bi < sl_table_num_batches(t); bi++) {
        sl_batch_t *b = sl_table_batch(t, bi);
        int nc = sl_batch_num_columns(b);
        const char *names[16];
        enum sl_type ty[16];
        struct sl_column col[16];
        for (int i = 0; i < nc; i++) {
            SL_ASSERT_OK(sl_batch_column(b, i, &col[i]));
            names[i] = col[i].name;
            ty[i] = i == c ? to : col[i].type;
        }
        assert_int_equal(sl_type_width(to), sl_type_width(col[c].type));
        sl_batch_t *n;
        int64_t rows = sl_batch_num_rows(b);
        SL_ASSERT_OK(sl_batch_create(&n, nc, names, ty, rows));
        for (int i = 0; i < nc; i++) {
            size_t w = sl_type_width(ty[i]);
            memcpy(sl_batch_column_data(n, i), (const char *)col[i].data + col[i].offset * w,
                   (size_t)rows * w);
            if (ty[i] == SL_TYPE_DICT && i != c) /* codes keep their dictionary */
                SL_ASSERT_OK(sl_batch_share_dictionary(n, i, b, i));
            if (to == SL_TYPE_DICT && i == c) { /* the values as codes of one dictionary */
                int32_t *codes = sl_batch_column_data(n, i);
                for (int64_t r = 0; r < rows; r++)
                    codes[r] = (int32_t)((uint32_t)codes[r] % DICT_N);
                if (bi == 0)
                    SL_ASSERT_OK(sl_batch_column_set_dictionary(n, i, DICT_N, dict_offs,
                                                               dict_chars));
                else
                    SL_ASSERT_OK(sl_batch_share_dictionary(n, i, sl_table_batch(o, 0), i));
            }
        }
        SL_ASSERT_OK(sl_table_append(o, n));
        sl_batch_unref(n);
    }
    return o;
}

/* Keys and payloads of the 0.3 types the GPU join takes as integers (dates, timestamps,
 * 64-bit decimals, dictionary codes) join on the GPU with the CPU's result. The two
 * sides' dictionaries are distinct objects with equal strings (checked by content). The
 * result's strings (not only codes: join_test.h hashes the strings) must equal the
 * CPU's, so the output's DICT columns must carry their dictionary. */
SL_TEST(typed_keys_as_integers)
{
    NEED_GPU();
    setvbuf(stdout, NULL, _IOLBF, 0); /* progress survives a crash */
    make_dict(0);
    struct spec l = {.rows = 300000, .n_pay = 2, .key_range = 100000, .seed = 41};
    struct spec r = {.rows = 200000, .n_pay = 1, .key_range = 100000, .seed = 42};
    struct spec l8 = l, r8 = r;
    l8.key64 = r8.key64 = l8.pay64 = r8.pay64 = 1;
    sl_table_t *L4 = make(&l, "l"), *R4 = make(&r, "r"), *L8 = make(&l8, "l"), *R8 = make(&r8, "r");
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0), *gpu = gpu_test_engine(SL_PLACE_GPU, 0);
    struct {
        sl_table_t *l, *r;
        enum sl_type key, pay;
        int gpu;
    } cases[] = {
        {L4, R4, SL_TYPE_DATE32, SL_TYPE_DATE32, 1},
        {L8, R8, SL_TYPE_TIMESTAMP, 0, 1},
        {L8, R8, 0, 0, 1}, /* decimal(15,2), set below */
        {L4, R4, SL_TYPE_DICT, SL_TYPE_INT32, 1},
        {L4, R4, SL_TYPE_DICT, SL_TYPE_DICT, 1},
    };
    cases[2].key = sl_type_decimal(15, 2);
    cases[2].pay = sl_type_decimal(18, 4);
    cases[1].pay = SL_TYPE_TIMESTAMP;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sl_table_t *lt = retype(cases[i].l, 0, cases[i].key);
        sl_table_t *rt = retype(cases[i].r, 0, cases[i].key);
        sl_table_t *lp = retype(lt, 1, cases[i].pay);
        sl_table_unref(lt);
        const char *opts[] = {"on=k", "on=k kind=left", "on=k kind=semi", "on=k kind=anti",
                              "on=k output=aggregate left_columns=l1 right_columns=r1"};
        for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
            if (k == 4 && !join_sum_ok(cases[i].pay))
                continue;
            printf("key %s, payload %s: ", sl_type_name(cases[i].key), sl_type_name(cases[i].pay));
            join_check_on(cpu, gpu, lp, rt, opts[k], cases[i].gpu, 0);
        }
        sl_table_unref(lp);
        sl_table_unref(rt);
    }
    /* A dictionary payload, inputs on the host and GPU-resident (codes on the GPU, the
     * dictionary shared in host memory). */
    sl_table_t *ld = retype(L4, 1, SL_TYPE_DICT);
    join_check_on(cpu, gpu, ld, R4, "on=k", 1, 0);
    join_check_on(cpu, gpu, ld, R4, "on=k", 1, 1);
    sl_table_unref(ld);
    /* Dictionary keys whose dictionaries differ (a code means another string on each
     * side): the GPU joins them by codes remapped onto one merged dictionary. */
    sl_table_t *lk = retype(L4, 0, SL_TYPE_DICT);
    make_dict(1);
    sl_table_t *rk = retype(R4, 0, SL_TYPE_DICT);
    make_dict(0);
    join_check_on(cpu, gpu, lk, rk, "on=k", 1, 0);
    join_check_on(cpu, gpu, lk, rk, "on=k kind=semi", 1, 1);
    sl_table_unref(lk);
    sl_table_unref(rk);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
    sl_table_unref(L4);
    sl_table_unref(R4);
    sl_table_unref(L8);
    sl_table_unref(R8);
}
