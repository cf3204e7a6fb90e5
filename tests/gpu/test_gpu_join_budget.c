/* Tests GPU joins under small GPU budgets (issue 18): both sides reach the join's GPU sink
 * as device batches (a GPU filter made them), more of them than the budget holds. The
 * sink keeps them on the GPU only up to the join's share of the budget and sends the
 * rest to host memory (operators/join/join_cuda_ooc.c, join_gpu_sink_can_run); the join
 * then streams, runs out of core or on the CPU. Results must equal the CPU engine's
 * (row multisets) for inner, semi, anti and left joins, duplicates, no matches and null
 * keys; the pool's peak stays within the budget and nothing stays allocated. With
 * debug_join_keep_device (every device batch kept, as before) the same query fails over
 * the budget and its message names the join as what holds the memory (runtime/
 * gpu_held.c). Skipped without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_int.h"
#include "join_ooc_tables.h"
#include "join_test.h"
#include "sl_test.h"
#include "gpu_test.h"

#define MIB ((int64_t)1 << 20)
/* keeps about 95% of each side (payloads are uniform in [-10^6, 10^6]) */
#define WHERE_L "l1 > -900000"
#define WHERE_R "r1 > -900000"

struct outcome {
    int rc;
    struct fp fp;
    char msg[1024];
    int64_t peak, in_use;
    int streamed;                       /* the profile's host_streamed: join_cuda_stream.c */
    int sent_down;                      /* the profile has gpu_sink_down_bytes: the sink sent
                                           device batches to host memory */
};

/* filter(l) JOIN filter(r) with `opts` on engine e; the outcome, failed or not. */
static struct outcome run_filtered(sl_engine_t *e, sl_table_t *l, sl_table_t *r, const char *opts)
{
    struct outcome o;
    memset(&o, 0, sizeof o);
    sl_plan_t *p;
    int nl, nr, fl, fr, nj;
    SL_ASSERT_OK(sl_plan_create(&p));
    SL_ASSERT_OK(sl_plan_add_table(p, l, &nl));
    SL_ASSERT_OK(sl_plan_add_table(p, r, &nr));
    SL_ASSERT_OK(sl_plan_add(p, "filter", &nl, 1, "where=\"" WHERE_L "\"", &fl));
    SL_ASSERT_OK(sl_plan_add(p, "filter", &nr, 1, "where=\"" WHERE_R "\"", &fr));
    SL_ASSERT_OK(sl_plan_add(p, "join", (int[]){fl, fr}, 2, opts, &nj));
    SL_ASSERT_OK(sl_plan_output(p, nj, "o"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    o.rc = sl_query_run(q);
    o.streamed = strstr(sl_query_profile_json(q), "\"host_streamed\":1") != NULL;
    o.sent_down = strstr(sl_query_profile_json(q), "\"gpu_sink_down_bytes\":") != NULL;
    if (o.rc != SL_OK) {
        snprintf(o.msg, sizeof o.msg, "%s", sl_query_errmsg(q));
    } else {
        sl_table_t *out;
        SL_ASSERT_OK(sl_query_result(q, "o", &out));
        o.fp = fingerprint(out);
        sl_table_unref(out);
    }
    sl_query_destroy(q);
    sl_plan_destroy(p);
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    sl_engine_mem_stats(e, &ms);
    o.peak = ms.gpu_peak;
    o.in_use = ms.gpu_in_use;
    return o;
}

static sl_engine_t *budget_engine(int64_t gpu_mem, int keep_device)
{
    struct sl_engine_config cfg;
    gpu_test_config(&cfg, SL_PLACE_GPU, gpu_mem);
    cfg.debug_join_keep_device = keep_device;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    return e;
}

/* The join on the CPU engine and on a GPU engine of `gpu_mem`: equal, within the budget;
 * streamed 1 or 0: whether the GPU must have streamed the probe side, down: whether the
 * sink must have sent device batches to host memory (-1: either). */
static void check_path(const struct spec *ls, const struct spec *rs, const char *opts,
                       int64_t gpu_mem, int streamed, int down)
{
    sl_table_t *l = make(ls, "l"), *r = make(rs, "r");
    sl_engine_t *cpu = gpu_test_engine(SL_PLACE_CPU, 0);
    struct outcome want = run_filtered(cpu, l, r, opts);
    sl_engine_t *gpu = budget_engine(gpu_mem, 0);
    struct outcome got = run_filtered(gpu, l, r, opts);
    printf("%s (%lld x %lld rows, budget %lld MiB): cpu %lld rows, gpu %lld rows (rc %d%s%s), "
           "streamed %d, sent down %d, pool peak %.1f MiB\n", opts, (long long)ls->rows,
           (long long)rs->rows, (long long)(gpu_mem >> 20), (long long)want.fp.rows,
           (long long)got.fp.rows, got.rc, got.rc ? ": " : "", got.msg, got.streamed,
           got.sent_down, got.peak / 1048576.0);
    assert_int_equal(want.rc, SL_OK);
    assert_int_equal(got.rc, SL_OK);
    assert_int_equal(got.fp.rows, want.fp.rows);
    assert_true(got.fp.hash == want.fp.hash);
    assert_true(got.peak <= gpu_mem);
    assert_int_equal(got.in_use, 0);
    if (streamed >= 0)
        assert_int_equal(got.streamed, streamed);
    if (down >= 0)
        assert_int_equal(got.sent_down, down);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
    sl_table_unref(l);
    sl_table_unref(r);
}

static void check(const struct spec *ls, const struct spec *rs, const char *opts, int64_t gpu_mem)
{
    check_path(ls, rs, opts, gpu_mem, -1, -1);
}

static const char *const kinds[] = {"on=k kind=inner", "on=k kind=semi", "on=k kind=anti",
                                    "on=k kind=left", "on=k kind=inner algo=nopart"};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

/* 48 and 64 MiB: the sides (about 38 MiB after the filters) go to host memory from the
 * first batch on (8 x kept + 64 MiB passes the budget at once); 128 MiB: the first few
 * MiB stay on the GPU, the rest go down (sides of both kinds of batches). */
SL_TEST(spill_every_kind_matches_cpu)
{
    NEED_GPU();
    struct spec pk = {.rows = 1 << 20, .n_pay = 1, .seed = 51};
    struct spec fk = {.rows = 4 << 20, .n_pay = 1, .key_range = 1 << 20, .seed = 52};
    for (size_t i = 0; i < N_KINDS; i++) {
        /* left joins go to the CPU; the others stream, run out of core or on the CPU, as
         * what is left of the budget allows (spill_duplicates_no_matches_nulls checks the
         * streamed path) */
        check_path(&fk, &pk, kinds[i], 48 * MIB, strstr(kinds[i], "left") ? 0 : -1, 1);
        check_path(&fk, &pk, kinds[i], 64 * MIB, strstr(kinds[i], "left") ? 0 : -1, 1);
        check(&fk, &pk, kinds[i], 128 * MIB);
    }
}

/* Duplicate keys on both sides, no matches at all, one row, null keys on both sides. */
SL_TEST(spill_duplicates_no_matches_nulls)
{
    NEED_GPU();
    struct spec a = {.rows = 1 << 19, .n_pay = 1, .key_range = 1 << 17, .seed = 53};
    struct spec b = {.rows = 3 << 20, .n_pay = 1, .key_range = 1 << 17, .seed = 54};
    struct spec none = {.rows = 1 << 20, .n_pay = 1, .key_offset = 1 << 24, .seed = 55};
    struct spec one = {.rows = 1, .n_pay = 1, .seed = 56};
    struct spec na = {.rows = 1 << 20, .n_pay = 1, .nulls = 1, .seed = 57};
    struct spec nb = {.rows = 3 << 20, .n_pay = 1, .key_range = 1 << 20, .nulls = 1, .seed = 58};
    for (size_t i = 0; i < N_KINDS; i++) {
        /* inner, semi and anti stream the left side through the right's table (in chunks
         * of fewer than 2^22 rows, which would not fit); left joins and null keys go to
         * the CPU */
        int streams = strstr(kinds[i], "left") ? 0 : 1;
        check_path(&b, &a, kinds[i], 64 * MIB, streams, 1);
        check_path(&b, &none, kinds[i], 64 * MIB, streams, 1);
        check_path(&b, &one, kinds[i], 64 * MIB, streams, 1);
        check_path(&nb, &na, kinds[i], 64 * MIB, 0, 1);
    }
}

/* Small sides under 16 MiB (the case compute-sanitizer runs): every kind. */
SL_TEST(spill_small)
{
    NEED_GPU();
    struct spec pk = {.rows = 1 << 16, .n_pay = 1, .seed = 61};
    struct spec fk = {.rows = 1 << 18, .n_pay = 1, .key_range = 1 << 16, .seed = 62};
    for (size_t i = 0; i < N_KINDS; i++)
        check(&fk, &pk, kinds[i], 16 * MIB);
}

/* As before the sink sent batches down: every device batch kept, the budget fills and
 * the query fails; its message says that the join holds the memory. The same query
 * answers without the option. */
SL_TEST(keep_device_fails_naming_the_join)
{
    NEED_GPU();
    struct spec pk = {.rows = 1 << 20, .n_pay = 1, .seed = 59};
    struct spec fk = {.rows = 8 << 20, .n_pay = 1, .key_range = 1 << 20, .seed = 60};
    sl_table_t *l = make(&fk, "l"), *r = make(&pk, "r");
    sl_engine_t *old = budget_engine(48 * MIB, 1);
    struct outcome o = run_filtered(old, l, r, "on=k kind=semi");
    printf("keep_device: rc %d: %s\n", o.rc, o.msg);
    assert_int_equal(o.rc, SL_EBUDGET);
    assert_non_null(strstr(o.msg, "held: join"));
    assert_int_equal(o.in_use, 0);
    sl_engine_close(old);
    sl_engine_t *now = budget_engine(48 * MIB, 0);
    o = run_filtered(now, l, r, "on=k kind=semi");
    printf("spill: rc %d %s, %lld rows, peak %.1f MiB\n", o.rc, o.msg, (long long)o.fp.rows,
           o.peak / 1048576.0);
    assert_int_equal(o.rc, SL_OK);
    assert_true(o.fp.rows > 0);
    assert_true(o.peak <= 48 * MIB);
    sl_engine_close(now);
    sl_table_unref(l);
    sl_table_unref(r);
}
