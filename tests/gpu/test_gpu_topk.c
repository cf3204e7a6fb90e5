/* Tests sort.topk's GPU sink (operators/sort/topk_cuda.c: candidates cut on the GPU, the
 * heap on the CPU) against the CPU engine's sort.topk on the same rows, row for row
 * (ties are ordered by the other columns, so the result is defined), and against a
 * simple reference where it is easy: the rows count min(limit, n). First keys of every
 * type the GPU codes (int32, int64, date32, decimal(15,2), decimal(38,2), float32,
 * float64 with NaN, infinities and -0.0), ascending and descending, nulls first and
 * last; few distinct keys (the limit-th row ties with many: all must be candidates),
 * limits of 1, 10 and more than the rows, empty input and one row; payloads that the GPU
 * gathers (fixed-width, a dictionary-encoded string) and ones that send the batch to the
 * host whole (nulls); host and GPU-resident inputs, several batches. Whether the GPU
 * sink ran is read from the operator's device mask. Skipped without a GPU. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sort_test.h"

enum { N_COLS = 4 };
static const char *const names[N_COLS] = {"k", "row", "s", "p"};

struct spec {
    enum sl_type key;
    int64_t rows;
    int few;       /* keys from 5 values */
    int nulls;     /* every 7th key and every 3rd `p` null */
    uint64_t seed;
    int64_t chunk; /* rows per batch (0: 7001) */
};

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static void put_key(sl_batch_t *b, int64_t i, enum sl_type t, uint64_t r, int few)
{
    void *d = sl_batch_column_data(b, 0);
    int64_t v = few ? (int64_t)(r % 5) - 2 : (int64_t)r;
    switch (SL_TYPE_ID(t)) {
    case SL_TYPE_INT32: case SL_TYPE_DATE32: ((int32_t *)d)[i] = (int32_t)v; break;
    case SL_TYPE_FLOAT32: case SL_TYPE_FLOAT64: {
        const double ex[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, -1.5, 2.5};
        double x = few || r % 4 == 0 ? ex[r % 7] : (double)(int64_t)r / 1e9;
        if (SL_TYPE_ID(t) == SL_TYPE_FLOAT32)
            ((float *)d)[i] = (float)x;
        else
            ((double *)d)[i] = x;
        break;
    }
    case SL_TYPE_DECIMAL:
        if (sl_type_width(t) == 16) { /* high words of both signs: some past int64 */
            ((int64_t *)d)[2 * i] = v;
            ((int64_t *)d)[2 * i + 1] = few ? (v < 0 ? -1 : 0) : (int64_t)(r >> 61) - 4;
        } else {
            ((int64_t *)d)[i] = v % 999999999999999LL;
        }
        break;
    default: ((int64_t *)d)[i] = v; break;
    }
}

static char dict_chars[64];
static int32_t dict_offs[9];

/* The table: key k, `row` (the input position), s (a dictionary of 8 strings whose
 * codes run against their order), p (int32, nullable), in batches of sp->chunk rows. */
static sl_table_t *make(const struct spec *sp)
{
    for (int i = 0, at = 0; i <= 8; i++) {
        dict_offs[i] = at;
        if (i < 8)
            at += snprintf(dict_chars + at, sizeof dict_chars - (size_t)at, "v%d", 7 - i);
    }
    enum sl_type ty[N_COLS] = {sp->key, SL_TYPE_INT64, SL_TYPE_DICT, SL_TYPE_INT32};
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    uint64_t s = sp->seed * 0x9E3779B97F4A7C15ull + 1;
    sl_batch_t *first = NULL;
    int64_t chunk = sp->chunk ? sp->chunk : 7001;
    for (int64_t lo = 0; lo < sp->rows || lo == 0; lo += chunk) {
        int64_t m = sp->rows - lo < chunk ? sp->rows - lo : chunk;
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, N_COLS, names, ty, m));
        int64_t *row = sl_batch_column_data(b, 1);
        int32_t *code = sl_batch_column_data(b, 2), *p = sl_batch_column_data(b, 3);
        for (int64_t i = 0; i < m; i++) {
            put_key(b, i, sp->key, rnd(&s), sp->few);
            row[i] = lo + i;
            code[i] = (int32_t)(rnd(&s) % 8);
            p[i] = (int32_t)rnd(&s);
            if (sp->nulls && (lo + i) % 7 == 3)
                sl_batch_column_validity(b, 0)[i / 8] &= (uint8_t) ~(1u << (i % 8));
            if (sp->nulls && (lo + i) % 3 == 1)
                sl_batch_column_validity(b, 3)[i / 8] &= (uint8_t) ~(1u << (i % 8));
        }
        if (!first)
            SL_ASSERT_OK(sl_batch_column_set_dictionary(b, 2, 8, dict_offs, dict_chars));
        else
            SL_ASSERT_OK(sl_batch_share_dictionary(b, 2, first, 2));
        SL_ASSERT_OK(sl_table_append(t, b));
        if (!first)
            first = sl_table_batch(t, 0);
        sl_batch_unref(b);
        if (m == 0)
            break;
    }
    return t;
}

/* sort.topk with `opts` on table in; *mask: where its phases ran (1 CPU, 2 GPU). */
static struct flat run_topk(sl_engine_t *e, sl_table_t *in, const char *opts, int *mask)
{
    sl_plan_t *p;
    int node;
    sl_query_t *q = query(e, &in, 1, "sort.topk", opts, 0, &p, &node);
    if (sl_query_run(q) != SL_OK)
        fail_msg("sort.topk %s: query failed: %s", opts, sl_query_errmsg(q));
    *mask = atomic_load(&q->ops[node].device_mask);
    return result_flat(q, p);
}

static sl_engine_t *cpu, *gpu; /* opened by each case */

/* The CPU engine's rows and the GPU engine's (host input, then GPU-resident), equal;
 * min(limit, rows) of them. The GPU sink ran where a batch has more than `limit` rows
 * and more than 4096 on the GPU (65536 on the host: topk_cuda.c's MIN_*_ROWS). */
static void check(const struct spec *sp, const char *keys, int64_t limit)
{
    sl_table_t *in = make(sp);
    char opts[128];
    snprintf(opts, sizeof opts, "keys=\"%s\" limit=%lld", keys, (long long)limit);
    int mask;
    struct flat want = run_topk(cpu, in, opts, &mask);
    assert_int_equal(want.rows, sp->rows < limit ? sp->rows : limit);
    for (int resident = 0; resident < 2; resident++) {
        sl_table_t *gin = in;
        if (resident)
            SL_ASSERT_OK(sl_table_to_device(gpu, in, 0, &gin));
        else
            sl_table_ref(gin);
        struct flat got = run_topk(gpu, gin, opts, &mask);
        sl_table_unref(gin);
        int64_t bad = -1;
        for (int64_t i = 0; got.rows == want.rows && i < want.rows * want.cols && bad < 0; i++)
            if (got.v[i] != want.v[i])
                bad = i;
        printf("topk %s, key %s, %lld rows%s%s, resident %d: %lld rows, mask %d%s\n", opts,
               sl_type_name(sp->key), (long long)sp->rows, sp->few ? ", few keys" : "",
               sp->nulls ? ", nulls" : "", resident, (long long)got.rows, mask,
               bad >= 0 ? " MISMATCH" : "");
        if (bad >= 0)
            printf("  first difference: column %lld row %lld\n", (long long)(bad / want.rows),
                   (long long)(bad % want.rows));
        assert_int_equal(got.rows, want.rows);
        assert_true(bad < 0);
        int64_t batch = sp->rows < (sp->chunk ? sp->chunk : 7001) ? sp->rows
                                                                   : (sp->chunk ? sp->chunk : 7001);
        assert_int_equal((mask & 2) != 0, batch > limit && batch > (resident ? 4096 : 65536));
        free(got.v);
        struct sl_mem_stats ms = SL_MEM_STATS_INIT;
        sl_engine_mem_stats(gpu, &ms);
        assert_int_equal(ms.gpu_in_use, 0);
    }
    free(want.v);
    sl_table_unref(in);
}

static void engines_open(void)
{
    cpu = gpu_test_engine(SL_PLACE_CPU, 0);
    gpu = gpu_test_engine(SL_PLACE_GPU, 0);
}

static void engines_close(void)
{
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

static enum sl_type key_type(int i)
{
    const enum sl_type t[] = {SL_TYPE_INT32, SL_TYPE_INT64, SL_TYPE_DATE32, SL_TYPE_FLOAT32,
                              SL_TYPE_FLOAT64};
    return i < 5 ? t[i] : i == 5 ? sl_type_decimal(15, 2) : sl_type_decimal(38, 2);
}
enum { N_KEY_TYPES = 7 };

/* Every key type, random and few distinct keys, both directions, limits 1 and 10. */
SL_TEST(topk_every_key_type)
{
    NEED_GPU();
    engines_open();
    for (int i = 0; i < N_KEY_TYPES; i++) {
        struct spec a = {.key = key_type(i), .rows = 30000, .seed = 10 + (uint64_t)i};
        check(&a, "k DESC", 10);
        check(&a, "k", 1);
        a.few = 1; /* the 10th row ties with thousands */
        check(&a, "k DESC, p", 10);
        check(&a, "k, s DESC", 10);
    }
    engines_close();
}

/* Nulls in the key (first and last, both directions) and in a payload: the batch is
 * downloaded whole and the candidates taken on the host. */
SL_TEST(topk_nulls)
{
    NEED_GPU();
    engines_open();
    for (int i = 0; i < N_KEY_TYPES; i++) {
        struct spec a = {.key = key_type(i), .rows = 20000, .nulls = 1, .few = i % 2,
                         .seed = 40 + (uint64_t)i};
        check(&a, "k DESC", 10);
        check(&a, "k DESC NULLS LAST", 10);
        check(&a, "k NULLS FIRST", 5);
        check(&a, "k", 5);
    }
    engines_close();
}

/* Host batches big enough to be uploaded for the GPU sink, and the same resident. */
SL_TEST(topk_host_batches_uploaded)
{
    NEED_GPU();
    engines_open();
    struct spec a = {.key = sl_type_decimal(38, 2), .rows = 200000, .chunk = 100000, .seed = 70};
    check(&a, "k DESC", 20);
    struct spec f = {.key = SL_TYPE_FLOAT64, .rows = 150000, .chunk = 75000, .few = 1,
                     .nulls = 1, .seed = 71};
    check(&f, "k, row DESC", 100);
    engines_close();
}

/* Empty input, one row, a limit at, just under and over the rows, limit 0. */
SL_TEST(topk_edges)
{
    NEED_GPU();
    engines_open();
    struct spec e = {.key = SL_TYPE_INT64, .rows = 0, .seed = 60};
    check(&e, "k", 10);
    struct spec one = {.key = SL_TYPE_INT64, .rows = 1, .seed = 61};
    check(&one, "k DESC", 10);
    check(&one, "k DESC", 1);
    struct spec a = {.key = sl_type_decimal(38, 2), .rows = 7001, .seed = 62};
    check(&a, "k DESC", 7000);
    check(&a, "k DESC", 7001);
    check(&a, "k DESC", 9000);
    check(&a, "k DESC", 0);
    engines_close();
}
