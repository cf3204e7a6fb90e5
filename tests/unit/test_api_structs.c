/* Tests the growable-struct rule of engine.h through the public API alone: a program
 * built against older, smaller structs gets the members it knows and nothing past its
 * struct is written; a forgotten size is rejected; a smaller engine config takes the
 * defaults for what it lacks. Also that sl_error_info says which device failed. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <sluice/sluice.h>

#include "sl_test.h"

#define CANARY 0xAB

/* A buffer with the struct's first `size` bytes cleared and the rest canaries. */
struct shadow {
    _Alignas(64) unsigned char bytes[1024];
};

static void *old_struct(struct shadow *s, uint32_t size)
{
    memset(s->bytes, CANARY, sizeof s->bytes);
    memset(s->bytes, 0, size);
    memcpy(s->bytes, &size, sizeof size);
    return s->bytes;
}

/* Nothing at or past byte `from` changed. */
static void assert_untouched_from(const struct shadow *s, size_t from)
{
    for (size_t i = from; i < sizeof s->bytes; i++)
        if (s->bytes[i] != CANARY)
            fail_msg("byte %zu past the caller's struct was written", i);
}

static sl_engine_t *open_engine(void)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = 2;
    cfg.n_gpus = 0;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_engine_open(&e, &cfg));
    return e;
}

SL_TEST(mem_stats_older_struct_filled_safely)
{
    sl_engine_t *e = open_engine();
    struct shadow s;
    /* An older struct that ended after host_limit. */
    uint32_t size = offsetof(struct sl_mem_stats, host_limit) + sizeof(int64_t);
    struct sl_mem_stats *st = old_struct(&s, size);
    SL_ASSERT_OK(sl_engine_mem_stats(e, st));
    assert_int_equal(st->size, size); /* the caller's size stays */
    assert_true(st->host_limit > 0);
    assert_true(SL_HAS_MEMBER(st, struct sl_mem_stats, host_limit));
    assert_false(SL_HAS_MEMBER(st, struct sl_mem_stats, gpu_in_use));
    assert_untouched_from(&s, size);
    /* The full struct gets every member. */
    struct sl_mem_stats full = SL_MEM_STATS_INIT;
    SL_ASSERT_OK(sl_engine_mem_stats(e, &full));
    assert_int_equal(full.host_limit, st->host_limit);
    sl_engine_close(e);
}

SL_TEST(device_info_older_struct_filled_safely)
{
    sl_engine_t *e = open_engine();
    struct shadow s;
    uint32_t size = offsetof(struct sl_device_info, name) + 8; /* the name cut short */
    struct sl_device_info *d = old_struct(&s, size);
    SL_ASSERT_OK(sl_engine_device_info(e, 0, d));
    assert_int_equal(d->kind, SL_DEVICE_CPU);
    assert_int_equal(d->size, size);
    assert_untouched_from(&s, size);
    struct sl_device_info full = SL_DEVICE_INFO_INIT;
    SL_ASSERT_OK(sl_engine_device_info(e, 0, &full));
    assert_true(full.n_cores >= 1 && full.usable == 1);
    assert_memory_equal(d->name, full.name, 8);
    sl_engine_close(e);
}

/* A query cancelled at once: it fails in the runtime, outside any task. */
static sl_query_t *run_cancelled(sl_engine_t *e, sl_plan_t **plan)
{
    SL_ASSERT_OK(sl_plan_create(plan));
    int g, a;
    SL_ASSERT_OK(sl_plan_add(*plan, "gen.sequence", NULL, 0, "rows=2^32", &g));
    SL_ASSERT_OK(sl_plan_add(*plan, "aggregate.sum", (int[]){g}, 1, "column=x", &a));
    SL_ASSERT_OK(sl_plan_output(*plan, a, "r"));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, *plan, &q));
    SL_ASSERT_OK(sl_query_start(q));
    sl_query_cancel(q);
    assert_int_equal(sl_query_wait(q), SL_ECANCELED);
    return q;
}

static void close_all(sl_engine_t *e, sl_plan_t *p, sl_query_t *q)
{
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_engine_close(e);
}

SL_TEST(error_info_older_struct_filled_safely)
{
    sl_engine_t *e = open_engine();
    sl_plan_t *p;
    sl_query_t *q = run_cancelled(e, &p);
    struct shadow s;
    uint32_t size = offsetof(struct sl_error_info, message) + sizeof(const char *);
    struct sl_error_info *info = old_struct(&s, size);
    assert_int_equal(sl_query_error(q, info), SL_ECANCELED);
    assert_int_equal(info->code, SL_ECANCELED);
    assert_non_null(strstr(info->message, "cancel"));
    assert_untouched_from(&s, size);
    /* A cancellation is no task's failure: no device. */
    struct sl_error_info full = SL_ERROR_INFO_INIT;
    assert_int_equal(sl_query_error(q, &full), SL_ECANCELED);
    assert_int_equal(full.device, -1);
    assert_int_equal(full.native_code, 0);
    close_all(e, p, q);
}

SL_TEST(progress_older_struct_filled_safely)
{
    sl_engine_t *e = open_engine();
    sl_plan_t *p;
    sl_query_t *q = run_cancelled(e, &p);
    struct shadow s;
    uint32_t size = offsetof(struct sl_progress, bytes_done); /* tasks only */
    struct sl_progress *pr = old_struct(&s, size);
    SL_ASSERT_OK(sl_query_progress(q, pr));
    assert_true(pr->tasks_total >= pr->tasks_done);
    assert_untouched_from(&s, size);
    struct sl_progress full = SL_PROGRESS_INIT;
    SL_ASSERT_OK(sl_query_progress(q, &full));
    assert_int_equal(full.finished, 1);
    close_all(e, p, q);
}

SL_TEST(forgotten_size_is_rejected)
{
    sl_engine_t *e = open_engine();
    struct sl_mem_stats st = {0};
    assert_int_equal(sl_engine_mem_stats(e, &st), SL_EINVAL);
    assert_non_null(strstr(sl_last_errmsg(), "size"));
    struct sl_device_info d = {0};
    assert_int_equal(sl_engine_device_info(e, 0, &d), SL_EINVAL);
    assert_int_equal(sl_engine_device_info(e, 0, NULL), SL_EINVAL);
    sl_plan_t *p;
    sl_query_t *q = run_cancelled(e, &p);
    struct sl_error_info info = {0};
    assert_int_equal(sl_query_error(q, &info), SL_EINVAL);
    struct sl_progress pr = {0};
    assert_int_equal(sl_query_progress(q, &pr), SL_EINVAL);
    close_all(e, p, q);
}

SL_TEST(older_engine_config_takes_defaults)
{
    /* An older config that ended before gpu_mem_limit: the rest are defaults. */
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = 3;
    cfg.n_gpus = 0;
    cfg.size = offsetof(struct sl_engine_config, host_mem_limit);
    cfg.host_mem_limit = -5; /* past its size: must not be read */
    sl_engine_t *e;
    SL_ASSERT_OK(sl_engine_open(&e, &cfg));
    assert_int_equal(sl_engine_num_threads(e), 3);
    sl_engine_close(e);
    /* Newer than the library, or no size at all: refused. */
    sl_engine_config_init(&cfg);
    cfg.size = sizeof cfg + 8;
    assert_int_equal(sl_engine_open(&e, &cfg), SL_EABI);
    sl_engine_close(e);
    cfg.size = 0;
    assert_int_equal(sl_engine_open(&e, &cfg), SL_EINVAL);
    sl_engine_close(e);
}
