/* The engine's cost history (runtime/cost.c), which automatic placement reads: a
 * pipeline's first sample on a device is a warm-up and not trusted, the smaller of the
 * next two of at least 2^16 rows replaces it, small samples and outliers move the average little, the
 * fixed cost per task is left out, and the cost cache keeps only trusted entries. Each
 * rule is what kept `bench mixed` from sending a large join to the CPU after one slow or
 * small task. */
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "engine_int.h"
#include "internal.h"
#include "sl_test.h"

static sl_engine_t *open_engine(const char *cache)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = 1;
    cfg.n_gpus = 0;
    if (cache)
        SL_ASSERT_OK(sl_engine_config_set(&cfg, "cost_cache", cache));
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    return e;
}

/* ns of a task of `rows` rows at `per_row` ns a row on `k`, its fixed cost included. */
static int64_t task_ns(enum sl_device_kind k, int64_t rows, double per_row)
{
    return (int64_t)(sl__cost_task_ns(k) + (double)rows * per_row);
}

SL_TEST(first_sample_is_a_warm_up)
{
    sl_engine_t *e = open_engine(NULL);
    enum sl_device_kind g = SL_DEVICE_CUDA;
    assert_true(sl__cost_lookup(e, "a>b", g) < 0);
    sl__cost_record(e, "a>b", g, 1 << 20, task_ns(g, 1 << 20, 700)); /* modules loading */
    assert_true(sl__cost_lookup(e, "a>b", g) < 0);
    sl__cost_record(e, "a>b", g, 1 << 20, task_ns(g, 1 << 20, 3));
    assert_true(sl__cost_lookup(e, "a>b", g) < 0); /* one sample is not enough */
    sl__cost_record(e, "a>b", g, 1 << 20, task_ns(g, 1 << 20, 4));
    assert_true(fabs(sl__cost_lookup(e, "a>b", g) - 3) < 0.01); /* the smaller of the two */
    sl_engine_close(e);
}

/* One slow task after the warm-up (a host hiccup, a kernel's first launch) does not
 * become the device's cost: the smaller of the first two samples does, whichever
 * came first (issue 23: one slow sample moved a pipeline off the GPU for good). */
SL_TEST(one_slow_sample_is_not_trusted)
{
    sl_engine_t *e = open_engine(NULL);
    enum sl_device_kind g = SL_DEVICE_CUDA;
    for (int order = 0; order < 2; order++) {
        const char *name = order ? "slow>second" : "slow>first";
        sl__cost_record(e, name, g, 1 << 22, task_ns(g, 1 << 22, 50)); /* warm-up */
        sl__cost_record(e, name, g, 1 << 22, task_ns(g, 1 << 22, order ? 0.2 : 8));
        sl__cost_record(e, name, g, 1 << 22, task_ns(g, 1 << 22, order ? 8 : 0.2));
        assert_true(fabs(sl__cost_lookup(e, name, g) - 0.2) < 0.01);
    }
    sl_engine_close(e);
}

SL_TEST(fixed_cost_per_task_is_left_out)
{
    sl_engine_t *e = open_engine(NULL);
    for (int k = 0; k < 2; k++) {
        enum sl_device_kind d = k ? SL_DEVICE_CUDA : SL_DEVICE_CPU;
        for (int i = 0; i < 3; i++)
            sl__cost_record(e, "x", d, 1 << 16, task_ns(d, 1 << 16, 5));
        assert_true(fabs(sl__cost_lookup(e, "x", d) - 5) < 0.01);
        /* a task shorter than the fixed cost counts as no work a row, not less */
        for (int i = 0; i < 3; i++)
            sl__cost_record(e, "tiny", d, 1 << 16, 1);
        assert_true(sl__cost_lookup(e, "tiny", d) == 0);
    }
    sl_engine_close(e);
}

/* A small task's ns per row is mostly the error in its fixed cost: it never ends the
 * warm-up, so a pipeline that only ever runs small tasks keeps the cost functions'
 * estimate, and one that shares its name with a large one is not judged by the small. */
SL_TEST(small_samples_do_not_end_the_warm_up)
{
    sl_engine_t *e = open_engine(NULL);
    enum sl_device_kind g = SL_DEVICE_CUDA;
    sl__cost_record(e, "gen>join", g, 1 << 22, task_ns(g, 1 << 22, 50)); /* warm-up */
    sl__cost_record(e, "gen>join", g, 1024, task_ns(g, 1024, 10));
    sl__cost_record(e, "gen>join", g, 16384, task_ns(g, 16384, 2));
    assert_true(sl__cost_lookup(e, "gen>join", g) < 0);
    sl__cost_record(e, "gen>join", g, 1 << 22, task_ns(g, 1 << 22, 0.3));
    sl__cost_record(e, "gen>join", g, 16384, task_ns(g, 16384, 2));
    assert_true(sl__cost_lookup(e, "gen>join", g) < 0);
    sl__cost_record(e, "gen>join", g, 1 << 22, task_ns(g, 1 << 22, 0.3));
    assert_true(fabs(sl__cost_lookup(e, "gen>join", g) - 0.3) < 0.01);
    /* trusted, a small sample moves it by its weight only (1,024 / 2^16 of ALPHA) */
    sl__cost_record(e, "gen>join", g, 1024, task_ns(g, 1024, 1.2));
    assert_true(sl__cost_lookup(e, "gen>join", g) < 0.31);
    for (int i = 0; i < 10; i++)
        sl__cost_record(e, "small", SL_DEVICE_CPU, 1000, task_ns(SL_DEVICE_CPU, 1000, 30));
    assert_true(sl__cost_lookup(e, "small", SL_DEVICE_CPU) < 0);
    sl_engine_close(e);
}

SL_TEST(small_samples_and_outliers_move_little)
{
    sl_engine_t *e = open_engine(NULL);
    enum sl_device_kind g = SL_DEVICE_CUDA;
    for (int i = 0; i < 3; i++)
        sl__cost_record(e, "j", g, 1 << 22, task_ns(g, 1 << 22, 2));
    /* a 16,384-row input of the same operators, 350x slower a row */
    sl__cost_record(e, "j", g, 16384, task_ns(g, 16384, 700));
    double v = sl__cost_lookup(e, "j", g);
    assert_true(v > 2 && v < 2.5);
    /* one large slow task: at most 4x the average counts */
    sl__cost_record(e, "j", g, 1 << 22, task_ns(g, 1 << 22, 1000));
    double w = sl__cost_lookup(e, "j", g);
    assert_true(w > v && w <= 1.75 * v + 0.01);
    /* and steady samples bring it back */
    for (int i = 0; i < 40; i++)
        sl__cost_record(e, "j", g, 1 << 22, task_ns(g, 1 << 22, 2));
    assert_true(fabs(sl__cost_lookup(e, "j", g) - 2) < 0.05);
    sl_engine_close(e);
}

SL_TEST(cache_keeps_only_trusted_entries)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/sl_test_cost.%d", (int)getpid());
    unlink(path);
    sl_engine_t *e = open_engine(path);
    sl__cost_record(e, "warm>only", SL_DEVICE_CUDA, 1 << 20, task_ns(SL_DEVICE_CUDA, 1 << 20, 9));
    sl__cost_record(e, "two>samples", SL_DEVICE_CPU, 1 << 20, task_ns(SL_DEVICE_CPU, 1 << 20, 4));
    sl__cost_record(e, "two>samples", SL_DEVICE_CPU, 1 << 20, task_ns(SL_DEVICE_CPU, 1 << 20, 6));
    sl__cost_record(e, "two>samples", SL_DEVICE_CPU, 1 << 20, task_ns(SL_DEVICE_CPU, 1 << 20, 7));
    SL_ASSERT_OK(sl__cost_save(e, path));
    sl_engine_close(e);
    e = open_engine(path);
    assert_true(sl__cost_lookup(e, "warm>only", SL_DEVICE_CUDA) < 0);
    assert_true(fabs(sl__cost_lookup(e, "two>samples", SL_DEVICE_CPU) - 6) < 0.01);
    sl_engine_close(e);
    unlink(path);
}
