/* Public functions and error codes that no other test reached, each with its result
 * checked: sl_registry_foreach (name order) and a full registry (SL_ENOSPC), an operator
 * asking for an option it did not declare and a task failing with a non-error code
 * (SL_EINTERNAL), sl_table_ref, sl_batch_export_schema, sl_batch_device,
 * sl_query_on_progress and sl_engine_measure_links without a GPU. SL_EBUSY (a GPU pool
 * destroyed with live allocations) is in tests/gpu/test_gpu_runtime.c. */
#include <stdio.h>
#include <string.h>

#include <sluice/sluice.h>

#include "internal.h"
#include "sl_test.h"

static void assert_no_leaks(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

static sl_engine_t *cpu_engine(int threads, int64_t morsel)
{
    return sl_test_cpu_engine(threads, morsel);
}

struct names {
    int n;
    char prev[64];
    int ordered, saw_join;
};

static void collect(void *user, const struct sl_op_def *def)
{
    struct names *s = user;
    s->ordered &= strcmp(s->prev, def->name) < 0;
    s->saw_join |= strcmp(def->name, "join") == 0;
    snprintf(s->prev, sizeof s->prev, "%s", def->name);
    s->n++;
}

static int empty_bind(sl_bind_t *b)
{
    return sl_bind_add_column(b, "x", SL_TYPE_INT64);
}

#define FILLERS 1100
static char filler_names[FILLERS][24];
static struct sl_op_def fillers[FILLERS];

SL_TEST(registry_foreach_in_name_order_and_full)
{
    sl_registry_t *reg = sl_registry_global();
    struct names s = {.ordered = 1};
    sl_registry_foreach(reg, collect, &s);
    assert_true(s.n > 10);
    assert_true(s.ordered);
    assert_true(s.saw_join);
    int added = 0, rc = SL_OK;
    for (int i = 0; i < FILLERS && rc == SL_OK; i++) {
        snprintf(filler_names[i], sizeof filler_names[i], "test.filler%04d", i);
        fillers[i] = (struct sl_op_def){.abi_version = SL_OP_ABI_VERSION,
                                        .flags = SL_OP_SOURCE,
                                        .name = filler_names[i],
                                        .bind = empty_bind};
        rc = sl_registry_add(reg, &fillers[i]);
        added += rc == SL_OK;
    }
    assert_int_equal(rc, SL_ENOSPC);
    assert_non_null(strstr(sl_last_errmsg(), "registry is full"));
    struct names after = {.ordered = 1};
    sl_registry_foreach(reg, collect, &after);
    assert_int_equal(after.n, s.n + added);
    assert_true(after.ordered);
    assert_non_null(sl_registry_find(reg, "test.filler0000"));
}

/* ---- SL_EINTERNAL: operator bugs are reported as such, not as the caller's error ---- */

static int undeclared_bind(sl_bind_t *b)
{
    const char *v;
    int rc = sl_bind_option_str(b, "not_declared", &v);
    if (rc < 0)
        return rc;
    return sl_bind_add_column(b, "x", SL_TYPE_INT64);
}

static int positive_fail_run(sl_task_t *t)
{
    return sl_task_fail(t, 5, "a positive code is no error code");
}

static int one_row_bind(sl_bind_t *b)
{
    sl_bind_set_rows(b, 1);
    return sl_bind_add_column(b, "x", SL_TYPE_INT64);
}

static const struct sl_impl bad_impls[] = {{.device = SL_DEVICE_CPU, .run = positive_fail_run}};
static const struct sl_phase bad_phase = {bad_impls, 1, NULL};
static const struct sl_op_def undeclared_def = {
    .abi_version = SL_OP_ABI_VERSION, .flags = SL_OP_SOURCE, .name = "test.undeclared_option",
    .bind = undeclared_bind, .source = &bad_phase,
};
static const struct sl_op_def bad_code_def = {
    .abi_version = SL_OP_ABI_VERSION, .flags = SL_OP_SOURCE, .name = "test.bad_fail_code",
    .bind = one_row_bind, .source = &bad_phase,
};

SL_TEST(operator_bugs_are_internal_errors)
{
    assert_int_equal(sl_registry_add(sl_registry_global(), &undeclared_def), SL_OK);
    assert_int_equal(sl_registry_add(sl_registry_global(), &bad_code_def), SL_OK);
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int id = -1;
    assert_int_equal(sl_plan_add(p, "test.undeclared_option", NULL, 0, "", &id),
                     SL_EINTERNAL);
    assert_non_null(strstr(sl_plan_errmsg(p), "does not declare"));
    sl_plan_destroy(p);

    sl_engine_t *e = cpu_engine(1, 0);
    p = sl_test_plan_parse("s = test.bad_fail_code\noutput s\n");
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    assert_int_equal(sl_query_run(q), SL_EINTERNAL);
    assert_non_null(strstr(sl_query_errmsg(q), "positive code"));
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_engine_close(e);
}

/* ---- the query profile's named phases and values: a full table is counted, not silent ---- */

#define PROFILE_NAMES 26 /* two past the 24 slots an operator has */
static const char *const profile_names[PROFILE_NAMES] = {
    "p00", "p01", "p02", "p03", "p04", "p05", "p06", "p07", "p08", "p09", "p10", "p11", "p12",
    "p13", "p14", "p15", "p16", "p17", "p18", "p19", "p20", "p21", "p22", "p23", "p24", "p25"};

static int many_names_run(sl_task_t *t)
{
    for (int i = 0; i < PROFILE_NAMES; i++) {
        sl_task_phase_time(t, profile_names[i], 1.0);
        sl_task_profile_value(t, profile_names[i], 100 + i);
    }
    return SL_OK;
}

static const struct sl_impl many_names_impls[] = {{.device = SL_DEVICE_CPU, .run = many_names_run}};
static const struct sl_phase many_names_phase = {many_names_impls, 1, NULL};
static const struct sl_op_def many_names_def = {
    .abi_version = SL_OP_ABI_VERSION, .flags = SL_OP_SOURCE, .name = "test.many_profile_names",
    .bind = one_row_bind, .source = &many_names_phase,
};

SL_TEST(profile_counts_names_past_its_slots)
{
    assert_int_equal(sl_registry_add(sl_registry_global(), &many_names_def), SL_OK);
    sl_engine_t *e = cpu_engine(1, 0);
    sl_plan_t *p = sl_test_plan_parse("s = test.many_profile_names\noutput s\n");
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    SL_ASSERT_OK(sl_query_run(q));
    const char *prof = sl_query_profile_json(q);
    assert_non_null(prof);
    /* the first 24 of each kind are kept; two phase times and two values are dropped */
    assert_non_null(strstr(prof, "\"p23\":1.000"));
    assert_non_null(strstr(prof, "\"p23\":123"));
    assert_null(strstr(prof, "\"p24\""));
    assert_non_null(strstr(prof, "\"profile_dropped\":4"));
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_engine_close(e);
}

/* ---- tables and batches ---- */

SL_TEST(table_ref_keeps_it_alive)
{
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 1, (const char *const[]){"x"},
                                 (const enum sl_type[]){SL_TYPE_INT64}, 3));
    SL_ASSERT_OK(sl_table_append(t, b));
    sl_batch_unref(b);
    sl_table_ref(t);
    sl_table_unref(t); /* one reference left: still readable */
    assert_int_equal(sl_table_num_rows(t), 3);
    sl_table_unref(t);
    assert_no_leaks();
}

SL_TEST(batch_export_schema_and_device)
{
    sl_batch_t *b;
    SL_ASSERT_OK(sl_batch_create(&b, 3, (const char *const[]){"k", "s", "d"},
                                 (const enum sl_type[]){SL_TYPE_INT64, SL_TYPE_UTF8,
                                                        SL_TYPE_DATE32}, 2));
    assert_int_equal(sl_batch_device(b), -1);
    struct ArrowSchema sch;
    SL_ASSERT_OK(sl_batch_export_schema(b, &sch));
    assert_string_equal(sch.format, "+s");
    assert_int_equal(sch.n_children, 3);
    const char *want[][2] = {{"k", "l"}, {"s", "u"}, {"d", "tdD"}};
    for (int c = 0; c < 3; c++) {
        assert_string_equal(sch.children[c]->name, want[c][0]);
        assert_string_equal(sch.children[c]->format, want[c][1]);
    }
    assert_non_null(sch.release);
    sch.release(&sch);
    assert_null(sch.release);
    sl_batch_unref(b);
    assert_no_leaks();
}

/* ---- progress callbacks and link measurements ---- */

struct seen {
    int calls, monotone;
    int64_t last_done;
};

static void on_progress(void *user, const struct sl_progress *p)
{
    struct seen *s = user;
    s->calls++;
    s->monotone &= p->tasks_done >= s->last_done && p->tasks_done <= p->tasks_total &&
                   p->size >= sizeof *p;
    s->last_done = p->tasks_done;
}

SL_TEST(query_on_progress_calls_back_while_running)
{
    sl_engine_t *e = cpu_engine(2, 4096);
    /* long enough (tens of ms at least) for 1 ms callbacks */
    sl_plan_t *p = sl_test_plan_parse("n = gen.sequence rows=60000000 column=x\n"
                                      "s = aggregate.sum(n) column=x\noutput s\n");
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    struct seen s = {.monotone = 1};
    assert_int_equal(sl_query_on_progress(NULL, on_progress, &s, 1), SL_EINVAL);
    assert_int_equal(sl_query_on_progress(q, on_progress, &s, -1), SL_EINVAL);
    SL_ASSERT_OK(sl_query_on_progress(q, on_progress, &s, 1));
    SL_ASSERT_OK(sl_query_run(q));
    printf("%d progress callbacks\n", s.calls);
    assert_true(s.calls >= 1);
    assert_true(s.monotone);
    sl_query_destroy(q);
    sl_plan_destroy(p);
    sl_engine_close(e);
}

SL_TEST(measure_links_without_gpus_is_a_no_op)
{
    sl_engine_t *e = cpu_engine(1, 0);
    assert_int_equal(sl_engine_device_count(e), 1);
    SL_ASSERT_OK(sl_engine_measure_links(e));
    struct sl_device_info cpu = SL_DEVICE_INFO_INIT;
    SL_ASSERT_OK(sl_engine_device_info(e, 0, &cpu));
    assert_int_equal(cpu.kind, SL_DEVICE_CPU);
    sl_engine_close(e);
}

SL_TEST(reset_peaks_starts_the_next_measurement)
{
    sl_engine_t *e = cpu_engine(2, 4096);
    /* A sort keeps all 2^20 rows (8 MiB) at once: the peak rises past that. */
    sl_plan_t *p = sl_test_plan_parse("n = gen.sequence rows=1048576 column=x\n"
                                      "s = sort(n) by=\"x DESC\"\noutput s\n");
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    SL_ASSERT_OK(sl_query_run(q));
    sl_query_destroy(q);
    struct sl_mem_stats st = SL_MEM_STATS_INIT;
    SL_ASSERT_OK(sl_engine_mem_stats(e, &st));
    assert_true(st.host_peak >= ((int64_t)8 << 20));
    assert_true(st.host_in_use < st.host_peak);
    assert_int_equal(sl_engine_reset_peaks(NULL), SL_EINVAL);
    SL_ASSERT_OK(sl_engine_reset_peaks(e));
    SL_ASSERT_OK(sl_engine_mem_stats(e, &st));
    assert_true(st.host_peak < ((int64_t)8 << 20));
    assert_true(st.host_peak >= st.host_in_use);
    /* The next query's peak is measured from there. */
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    SL_ASSERT_OK(sl_query_run(q));
    sl_query_destroy(q);
    SL_ASSERT_OK(sl_engine_mem_stats(e, &st));
    assert_true(st.host_peak >= ((int64_t)8 << 20));
    sl_plan_destroy(p);
    sl_engine_close(e);
}
