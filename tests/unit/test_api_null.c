/* Every public function called with NULL for each pointer argument (the others valid):
 * none may crash or hang, calls that return a code return an error, lookups return
 * NULL, message getters return a string (docs/RELIABILITY.md, "Arguments"). Each call
 * runs in a child process of its own, with fresh objects made there, so one crash is
 * reported by name and the others still run; the case fails listing every call that
 * misbehaved. Handles only an operator's run can have (sl_bind_t, sl_task_t, sl_op_t)
 * are tested with NULL for the handle. */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sluice/arrow.h>
#include <sluice/op.h>
#include <sluice/sched.h>
#include <sluice/sluice.h>

#include "sl_test.h"

struct fx {
    struct sl_engine_config cfg;
    sl_engine_t *eng;
    sl_plan_t *plan;
    sl_query_t *q;
    sl_table_t *t, *t_out;
    sl_batch_t *b, *b_out;
    const sl_schema_t *s;
    sl_registry_t *reg;
    const struct sl_op_def *def;
    struct ArrowArray arr;
    struct ArrowSchema sch;
    struct ArrowArrayStream stream;
    struct ArrowDeviceArray darr;
    struct ArrowSchema dsch;
    struct sl_column col;
    struct sl_strings strs;
    struct sl_device_info info;
    struct sl_mem_stats mem;
    struct sl_error_info err;
    struct sl_progress prog;
    struct sl_task_graph graph;
    const struct sl_explain *ex;
    char buf[64];
    int32_t offsets[2];
    int64_t i64;
    double f64;
    int id, is_null;
    enum sl_type type;
    const char *name;
};

static void on_progress(void *user, const struct sl_progress *p)
{
    (void)user;
    (void)p;
}

static void on_def(void *user, const struct sl_op_def *d)
{
    (void)user;
    (void)d;
}

/* Valid objects of every kind; 0 on success. */
static int fx_make(struct fx *f)
{
    memset(f, 0, sizeof *f);
    sl_engine_config_init(&f->cfg);
    f->cfg.n_threads = 1;
    f->cfg.n_gpus = 0;
    static const char *const names[] = {"x"};
    static const enum sl_type types[] = {SL_TYPE_INT64};
    if (sl_engine_open(&f->eng, &f->cfg) || sl_plan_create(&f->plan) ||
        sl_plan_add(f->plan, "gen.sequence", NULL, 0, "rows=10", &f->id) ||
        sl_plan_output(f->plan, f->id, "r") || sl_query_create(f->eng, f->plan, &f->q) ||
        sl_batch_create(&f->b, 1, names, types, 10) || sl_table_create(&f->t) ||
        sl_table_append(f->t, f->b) || sl_batch_export_arrow(f->b, &f->arr, &f->sch) ||
        sl_batch_export_device_arrow(f->b, &f->darr, &f->dsch) ||
        sl_table_export_stream(f->t, &f->stream))
        return 1;
    f->s = sl_plan_node_schema(f->plan, f->id);
    f->reg = sl_registry_global();
    f->def = sl_registry_find(f->reg, "gen.sequence");
    f->graph.n_tasks = 1;
    return !f->s || !f->reg || !f->def;
}

enum expect {
    E_ERR,  /* returns a negative code */
    E_NULL, /* returns NULL */
    E_STR,  /* returns a string (a message getter: "" for NULL) */
    E_ANY,  /* only: no crash, no hang (void functions, counts, documented NULL-ok) */
};

/* Each case: name, expectation, the call (f is the fixture). */
#define CASES(X)                                                                                 \
    /* arrow.h */                                                                                \
    X(batch_import_arrow_array, E_ERR, sl_batch_import_arrow(NULL, &f->sch, &f->b_out))         \
    X(batch_import_arrow_schema, E_ERR, sl_batch_import_arrow(&f->arr, NULL, &f->b_out))        \
    X(batch_import_arrow_out, E_ERR, sl_batch_import_arrow(&f->arr, &f->sch, NULL))             \
    X(batch_export_arrow_batch, E_ERR, sl_batch_export_arrow(NULL, &f->arr, &f->sch))           \
    X(batch_export_arrow_array, E_ERR, sl_batch_export_arrow(f->b, NULL, &f->sch))              \
    X(batch_export_arrow_schema, E_ERR, sl_batch_export_arrow(f->b, &f->arr, NULL))             \
    X(batch_export_schema_batch, E_ERR, sl_batch_export_schema(NULL, &f->sch))                  \
    X(batch_export_schema_schema, E_ERR, sl_batch_export_schema(f->b, NULL))                    \
    X(table_import_stream_stream, E_ERR, sl_table_import_stream(NULL, &f->t_out))               \
    X(table_import_stream_out, E_ERR, sl_table_import_stream(&f->stream, NULL))                 \
    X(table_export_stream_table, E_ERR, sl_table_export_stream(NULL, &f->stream))               \
    X(table_export_stream_stream, E_ERR, sl_table_export_stream(f->t, NULL))                    \
    X(batch_import_device_arrow_array, E_ERR,                                                   \
      sl_batch_import_device_arrow(NULL, &f->dsch, &f->b_out))                                   \
    X(batch_import_device_arrow_schema, E_ERR,                                                  \
      sl_batch_import_device_arrow(&f->darr, NULL, &f->b_out))                                   \
    X(batch_import_device_arrow_out, E_ERR, sl_batch_import_device_arrow(&f->darr, &f->dsch, NULL)) \
    X(batch_export_device_arrow_batch, E_ERR, sl_batch_export_device_arrow(NULL, &f->darr, &f->dsch)) \
    X(batch_export_device_arrow_array, E_ERR, sl_batch_export_device_arrow(f->b, NULL, &f->dsch)) \
    X(batch_export_device_arrow_schema, E_ERR, sl_batch_export_device_arrow(f->b, &f->darr, NULL)) \
    /* data.h */                                                                                 \
    X(type_parse_name, E_ERR, sl_type_parse(NULL, &f->type))                                    \
    X(type_parse_out, E_ERR, sl_type_parse("int32", NULL))                                      \
    X(batch_create_out, E_ERR, sl_batch_create(NULL, 1, (const char *[]){"x"},                   \
                                               (enum sl_type[]){SL_TYPE_INT64}, 1))               \
    X(batch_create_names, E_ERR,                                                                 \
      sl_batch_create(&f->b_out, 1, NULL, (enum sl_type[]){SL_TYPE_INT64}, 1))                   \
    X(batch_create_types, E_ERR, sl_batch_create(&f->b_out, 1, (const char *[]){"x"}, NULL, 1)) \
    X(batch_create_name, E_ERR, sl_batch_create(&f->b_out, 1, (const char *[]){NULL},           \
                                                (enum sl_type[]){SL_TYPE_INT64}, 1))              \
    X(batch_ref, E_ANY, (sl_batch_ref(NULL), 0))                                                 \
    X(batch_unref, E_ANY, (sl_batch_unref(NULL), 0))                                             \
    X(batch_num_columns, E_ANY, sl_batch_num_columns(NULL))                                      \
    X(batch_num_rows, E_ANY, sl_batch_num_rows(NULL))                                            \
    X(batch_device, E_ANY, sl_batch_device(NULL))                                                \
    X(batch_column_batch, E_ERR, sl_batch_column(NULL, 0, &f->col))                              \
    X(batch_column_out, E_ERR, sl_batch_column(f->b, 0, NULL))                                   \
    X(batch_column_strings_batch, E_ERR, sl_batch_column_strings(NULL, 0, &f->strs))             \
    X(batch_column_strings_out, E_ERR, sl_batch_column_strings(f->b, 0, NULL))                   \
    X(batch_column_index_batch, E_ERR, sl_batch_column_index(NULL, "x"))                         \
    X(batch_column_index_name, E_ERR, sl_batch_column_index(f->b, NULL))                         \
    X(batch_column_data, E_NULL, sl_batch_column_data(NULL, 0))                                  \
    X(batch_column_chars, E_NULL, sl_batch_column_chars(NULL, 0, 1))                             \
    X(batch_column_set_dictionary_batch, E_ERR,                                                  \
      sl_batch_column_set_dictionary(NULL, 0, 1, f->offsets, "a"))                               \
    X(batch_column_set_dictionary_offsets, E_ERR,                                                \
      sl_batch_column_set_dictionary(f->b, 0, 1, NULL, "a"))                                     \
    X(batch_column_set_dictionary_chars, E_ERR,                                                  \
      sl_batch_column_set_dictionary(f->b, 0, 1, f->offsets, NULL))                              \
    X(batch_share_dictionary_batch, E_ERR, sl_batch_share_dictionary(NULL, 0, f->b, 0))          \
    X(batch_share_dictionary_from, E_ERR, sl_batch_share_dictionary(f->b, 0, NULL, 0))           \
    X(batch_column_validity, E_NULL, sl_batch_column_validity(NULL, 0))                          \
    X(batch_value_format_batch, E_ERR,                                                           \
      sl_batch_value_format(NULL, 0, 0, f->buf, sizeof f->buf, &f->is_null))                     \
    X(batch_value_format_buf, E_ANY, sl_batch_value_format(f->b, 0, 0, NULL, 16, &f->is_null))   \
    X(batch_value_format_is_null, E_ANY,                                                         \
      sl_batch_value_format(f->b, 0, 0, f->buf, sizeof f->buf, NULL))                            \
    X(table_create, E_ERR, sl_table_create(NULL))                                                \
    X(table_ref, E_ANY, (sl_table_ref(NULL), 0))                                                 \
    X(table_unref, E_ANY, (sl_table_unref(NULL), 0))                                             \
    X(table_append_table, E_ERR, sl_table_append(NULL, f->b))                                    \
    X(table_append_batch, E_ERR, sl_table_append(f->t, NULL))                                    \
    X(table_pin, E_ERR, sl_table_pin(NULL))                                                      \
    X(table_to_device_engine, E_ERR, sl_table_to_device(NULL, f->t, 0, &f->t_out))               \
    X(table_to_device_table, E_ERR, sl_table_to_device(f->eng, NULL, 0, &f->t_out))              \
    X(table_to_device_out, E_ERR, sl_table_to_device(f->eng, f->t, 0, NULL))                     \
    X(table_to_host_table, E_ERR, sl_table_to_host(NULL, &f->t_out))                             \
    X(table_to_host_out, E_ERR, sl_table_to_host(f->t, NULL))                                    \
    X(table_num_batches, E_ANY, sl_table_num_batches(NULL))                                      \
    X(table_num_rows, E_ANY, sl_table_num_rows(NULL))                                            \
    X(table_batch, E_NULL, sl_table_batch(NULL, 0))                                              \
    /* engine.h */                                                                               \
    X(engine_config_init, E_ANY, (sl_engine_config_init(NULL), 0))                               \
    X(engine_open_out, E_ERR, sl_engine_open(NULL, &f->cfg))                                     \
    X(engine_close, E_ANY, (sl_engine_close(NULL), 0))                                           \
    X(engine_errmsg, E_STR, sl_engine_errmsg(NULL))                                              \
    X(engine_device_count, E_ANY, sl_engine_device_count(NULL))                                  \
    X(engine_device_info_engine, E_ERR, sl_engine_device_info(NULL, 0, &f->info))                \
    X(engine_device_info_out, E_ERR, sl_engine_device_info(f->eng, 0, NULL))                     \
    X(engine_measure_links, E_ERR, sl_engine_measure_links(NULL))                                \
    X(engine_measure_device_copy_engine, E_ERR,                                                  \
      sl_engine_measure_device_copy(NULL, 0, 1024, &f->f64))                                     \
    X(engine_measure_device_copy_out, E_ERR, sl_engine_measure_device_copy(f->eng, 0, 1024, NULL)) \
    X(engine_device_fp32_peak_engine, E_ERR, sl_engine_device_fp32_peak(NULL, 0, &f->f64))      \
    X(engine_device_fp32_peak_out, E_ERR, sl_engine_device_fp32_peak(f->eng, 0, NULL))          \
    X(engine_device_peer_engine, E_ERR, sl_engine_device_peer(NULL, 1, 1, &f->id))               \
    X(engine_device_peer_out, E_ERR, sl_engine_device_peer(f->eng, 1, 1, NULL))                  \
    X(engine_num_threads, E_ANY, sl_engine_num_threads(NULL))                                    \
    X(engine_mem_stats_engine, E_ERR, sl_engine_mem_stats(NULL, &f->mem))                        \
    X(engine_mem_stats_out, E_ERR, sl_engine_mem_stats(f->eng, NULL))                            \
    /* op.h: the handles */                                                                      \
    X(bind_num_inputs, E_ANY, sl_bind_num_inputs(NULL))                                          \
    X(bind_input_schema, E_NULL, sl_bind_input_schema(NULL, 0))                                  \
    X(bind_option_int, E_ERR, sl_bind_option_int(NULL, "x", &f->i64))                            \
    X(bind_option_float, E_ERR, sl_bind_option_float(NULL, "x", &f->f64))                        \
    X(bind_option_str, E_ERR, sl_bind_option_str(NULL, "x", &f->name))                           \
    X(bind_option_bool, E_ERR, sl_bind_option_bool(NULL, "x", &f->is_null))                      \
    X(bind_option_given, E_ANY, sl_bind_option_given(NULL, "x"))                                 \
    X(bind_add_column, E_ERR, sl_bind_add_column(NULL, "x", SL_TYPE_INT64))                      \
    X(bind_set_data, E_ANY, (sl_bind_set_data(NULL, NULL, NULL), 0))                             \
    X(bind_set_rows, E_ANY, (sl_bind_set_rows(NULL, 1), 0))                                      \
    X(bind_input_rows, E_ANY, sl_bind_input_rows(NULL, 0))                                       \
    X(bind_fail, E_ERR, sl_bind_fail(NULL, SL_EINVAL, "x"))                                      \
    X(op_name, E_ANY, sl_op_name(NULL))                                                          \
    X(op_data, E_NULL, sl_op_data(NULL))                                                         \
    X(op_num_inputs, E_ANY, sl_op_num_inputs(NULL))                                              \
    X(op_input_schema, E_NULL, sl_op_input_schema(NULL, 0))                                      \
    X(op_output_schema, E_NULL, sl_op_output_schema(NULL))                                       \
    X(task_op, E_NULL, sl_task_op(NULL))                                                         \
    X(task_gstate, E_NULL, sl_task_gstate(NULL))                                                 \
    X(task_lstate, E_NULL, sl_task_lstate(NULL))                                                 \
    X(task_index, E_ANY, sl_task_index(NULL))                                                    \
    X(task_count, E_ANY, sl_task_count(NULL))                                                    \
    X(task_port, E_ANY, sl_task_port(NULL))                                                      \
    X(task_input, E_NULL, sl_task_input(NULL))                                                   \
    X(task_arg, E_NULL, sl_task_arg(NULL))                                                       \
    X(task_device_kind, E_ANY, sl_task_device_kind(NULL))                                        \
    X(task_worker, E_ANY, sl_task_worker(NULL))                                                  \
    X(task_morsel_rows, E_ANY, sl_task_morsel_rows(NULL))                                        \
    X(task_emit, E_ERR, sl_task_emit(NULL, NULL))                                                \
    X(task_fail, E_ERR, sl_task_fail(NULL, SL_EINVAL, "x"))                                      \
    X(task_cancelled, E_ANY, sl_task_cancelled(NULL))                                            \
    X(task_alloc, E_NULL, sl_task_alloc(NULL, 8))                                                \
    X(task_free, E_ANY, (sl_task_free(NULL, NULL), 0))                                           \
    X(task_spawn, E_ERR, sl_task_spawn(NULL, NULL, 1, NULL, NULL))                               \
    X(task_new_batch, E_NULL, sl_task_new_batch(NULL, f->s, 1))                                  \
    X(task_status, E_NULL, sl_task_status(NULL))                                                 \
    X(task_progress, E_ANY, (sl_task_progress(NULL, 1, 1), 0))                                   \
    X(task_phase_time, E_ANY, (sl_task_phase_time(NULL, "x", 1), 0))                             \
    X(task_profile_value, E_ANY, (sl_task_profile_value(NULL, "x", 1), 0))                       \
    X(task_option_int, E_ERR, sl_task_option_int(NULL, "x", &f->i64))                            \
    X(task_option_float, E_ERR, sl_task_option_float(NULL, "x", &f->f64))                        \
    X(task_stream, E_NULL, sl_task_stream(NULL))                                                 \
    X(task_device_alloc, E_NULL, sl_task_device_alloc(NULL, 8))                                  \
    X(task_device_free, E_ANY, (sl_task_device_free(NULL, NULL), 0))                             \
    X(task_device_budget, E_ANY, sl_task_device_budget(NULL))                                    \
    X(task_batch_to_host, E_ERR, sl_task_batch_to_host(NULL, f->b, &f->b_out))                   \
    X(task_batch_to_device, E_ERR, sl_task_batch_to_device(NULL, f->b, &f->b_out))               \
    X(task_batch_slice, E_NULL, sl_task_batch_slice(NULL, f->b, 0, 1))                           \
    X(registry_add_registry, E_ERR, sl_registry_add(NULL, f->def))                               \
    X(registry_add_def, E_ERR, sl_registry_add(f->reg, NULL))                                    \
    X(registry_find_registry, E_NULL, sl_registry_find(NULL, "gen.sequence"))                    \
    X(registry_find_name, E_NULL, sl_registry_find(f->reg, NULL))                                \
    X(registry_foreach_registry, E_ANY, (sl_registry_foreach(NULL, on_def, NULL), 0))            \
    X(registry_foreach_cb, E_ANY, (sl_registry_foreach(f->reg, NULL, NULL), 0))                  \
    /* option.h */                                                                               \
    X(engine_option_find, E_NULL, sl_engine_option_find(NULL))                                   \
    X(engine_config_set_cfg, E_ERR, sl_engine_config_set(NULL, "threads", "1"))                  \
    X(engine_config_set_name, E_ERR, sl_engine_config_set(&f->cfg, NULL, "1"))                   \
    X(engine_config_set_value, E_ERR, sl_engine_config_set(&f->cfg, "threads", NULL))            \
    X(engine_config_get_cfg, E_ERR, sl_engine_config_get(NULL, "threads", f->buf, sizeof f->buf)) \
    X(engine_config_get_name, E_ERR, sl_engine_config_get(&f->cfg, NULL, f->buf, sizeof f->buf)) \
    X(engine_config_get_buf, E_ERR, sl_engine_config_get(&f->cfg, "threads", NULL, 16))          \
    X(engine_option_set_engine, E_ERR, sl_engine_option_set(NULL, "log_level", "1"))             \
    X(engine_option_set_name, E_ERR, sl_engine_option_set(f->eng, NULL, "1"))                    \
    X(engine_option_set_value, E_ERR, sl_engine_option_set(f->eng, "log_level", NULL))           \
    X(engine_option_get_engine, E_ERR, sl_engine_option_get(NULL, "threads", f->buf, 64))        \
    X(engine_option_get_name, E_ERR, sl_engine_option_get(f->eng, NULL, f->buf, 64))             \
    X(engine_option_get_buf, E_ERR, sl_engine_option_get(f->eng, "threads", NULL, 16))           \
    X(plan_option_set_plan, E_ERR, sl_plan_option_set(NULL, "log_level", "1"))                   \
    X(plan_option_set_name, E_ERR, sl_plan_option_set(f->plan, NULL, "1"))                       \
    X(plan_option_set_value, E_ERR, sl_plan_option_set(f->plan, "log_level", NULL))              \
    /* plan.h */                                                                                 \
    X(plan_create, E_ERR, sl_plan_create(NULL))                                                  \
    X(plan_destroy, E_ANY, (sl_plan_destroy(NULL), 0))                                           \
    X(plan_errmsg, E_STR, sl_plan_errmsg(NULL))                                                  \
    X(plan_add_plan, E_ERR, sl_plan_add(NULL, "gen.sequence", NULL, 0, "rows=1", &f->id))        \
    X(plan_add_op, E_ERR, sl_plan_add(f->plan, NULL, NULL, 0, "rows=1", &f->id))                 \
    X(plan_add_inputs, E_ERR, sl_plan_add(f->plan, "filter", NULL, 1, "where=\"x > 1\"", &f->id)) \
    X(plan_add_options, E_ANY, sl_plan_add(f->plan, "gen.sequence", NULL, 0, NULL, &f->id))      \
    X(plan_add_node_id, E_ANY, sl_plan_add(f->plan, "gen.sequence", NULL, 0, "rows=1", NULL))    \
    X(plan_add_table_plan, E_ERR, sl_plan_add_table(NULL, f->t, &f->id))                         \
    X(plan_add_table_table, E_ERR, sl_plan_add_table(f->plan, NULL, &f->id))                     \
    X(plan_add_table_node_id, E_ANY, sl_plan_add_table(f->plan, f->t, NULL))                     \
    X(plan_register_table_plan, E_ERR, sl_plan_register_table(NULL, "x", f->t))                  \
    X(plan_register_table_name, E_ERR, sl_plan_register_table(f->plan, NULL, f->t))              \
    X(plan_register_table_table, E_ERR, sl_plan_register_table(f->plan, "x", NULL))              \
    X(plan_parse_plan, E_ERR, sl_plan_parse(NULL, "a = gen.sequence rows=1", "t"))               \
    X(plan_parse_text, E_ERR, sl_plan_parse(f->plan, NULL, "t"))                                 \
    X(plan_parse_source, E_ANY, sl_plan_parse(f->plan, "a = gen.sequence rows=1", NULL))         \
    X(plan_output_plan, E_ERR, sl_plan_output(NULL, 0, "r2"))                                    \
    X(plan_output_name, E_ERR, sl_plan_output(f->plan, 0, NULL))                                 \
    X(plan_output_device_plan, E_ERR, sl_plan_output_device(NULL, 0, "r2"))                      \
    X(plan_output_device_name, E_ERR, sl_plan_output_device(f->plan, 0, NULL))                   \
    X(plan_output_name_of, E_NULL, sl_plan_output_name(NULL, 0))                                 \
    X(plan_node_op, E_NULL, sl_plan_node_op(NULL, 0))                                            \
    X(plan_node_name, E_NULL, sl_plan_node_name(NULL, 0))                                        \
    X(plan_node_option_plan, E_NULL, sl_plan_node_option(NULL, 0, "rows"))                       \
    X(plan_node_option_key, E_NULL, sl_plan_node_option(f->plan, 0, NULL))                       \
    X(plan_place, E_ERR, sl_plan_place(NULL, 0, SL_PLACE_CPU))                                   \
    X(plan_num_nodes, E_ANY, sl_plan_num_nodes(NULL))                                            \
    X(plan_node_schema, E_NULL, sl_plan_node_schema(NULL, 0))                                    \
    X(schema_num_fields, E_ANY, sl_schema_num_fields(NULL))                                      \
    X(schema_field_schema, E_ERR, sl_schema_field(NULL, 0, &f->name, &f->type))                  \
    X(schema_field_name, E_ANY, sl_schema_field(f->s, 0, NULL, &f->type))                        \
    X(schema_field_type, E_ANY, sl_schema_field(f->s, 0, &f->name, NULL))                        \
    X(schema_find_schema, E_ERR, sl_schema_find(NULL, "x"))                                      \
    X(schema_find_name, E_ERR, sl_schema_find(f->s, NULL))                                       \
    /* plugin.h */                                                                               \
    X(plugin_load, E_ERR, sl_plugin_load(NULL))                                                  \
    /* query.h */                                                                                \
    X(query_create_engine, E_ERR, sl_query_create(NULL, f->plan, &f->q))                         \
    X(query_create_plan, E_ERR, sl_query_create(f->eng, NULL, &f->q))                            \
    X(query_create_out, E_ERR, sl_query_create(f->eng, f->plan, NULL))                           \
    X(query_destroy, E_ANY, (sl_query_destroy(NULL), 0))                                         \
    X(query_run, E_ERR, sl_query_run(NULL))                                                      \
    X(query_start, E_ERR, sl_query_start(NULL))                                                  \
    X(query_wait, E_ERR, sl_query_wait(NULL))                                                    \
    X(query_cancel, E_ANY, (sl_query_cancel(NULL), 0))                                           \
    X(query_errmsg, E_STR, sl_query_errmsg(NULL))                                                \
    X(query_error_query, E_ERR, sl_query_error(NULL, &f->err))                                   \
    X(query_error_out, E_ERR, sl_query_error(f->q, NULL))                                        \
    X(query_progress_query, E_ERR, sl_query_progress(NULL, &f->prog))                            \
    X(query_progress_out, E_ERR, sl_query_progress(f->q, NULL))                                  \
    X(query_on_progress_query, E_ERR, sl_query_on_progress(NULL, on_progress, NULL, 10))         \
    X(query_on_progress_cb, E_ANY, sl_query_on_progress(f->q, NULL, NULL, 10))                   \
    X(query_result_query, E_ERR, sl_query_result(NULL, "r", &f->t_out))                          \
    X(query_result_name, E_ERR, (sl_query_run(f->q), sl_query_result(f->q, NULL, &f->t_out)))    \
    X(query_result_out, E_ERR, (sl_query_run(f->q), sl_query_result(f->q, "r", NULL)))           \
    X(query_trace_query, E_ERR, sl_query_trace(NULL, "/tmp/never.json"))                         \
    X(query_trace_path, E_ERR, sl_query_trace(f->q, NULL))                                       \
    X(query_explain_json, E_STR, sl_query_explain_json(NULL))                                   \
    X(query_explain_query, E_ERR, sl_query_explain(NULL, &f->ex))                                \
    X(query_explain_out, E_ERR, sl_query_explain(f->q, NULL))                                    \
    X(query_profile_json, E_ANY, sl_query_profile_json(NULL))                                    \
    /* sched.h */                                                                                \
    X(engine_run_tasks_engine, E_ERR, sl_engine_run_tasks(NULL, &f->graph))                      \
    X(engine_run_tasks_graph, E_ERR, sl_engine_run_tasks(f->eng, NULL))

/* The calls' results as intptr_t: codes, counts and pointers alike. */
#define AS_FN(id, expect, call)                                                                  \
    static intptr_t case_##id(struct fx *f)                                                      \
    {                                                                                            \
        (void)f;                                                                                 \
        return (intptr_t)(call);                                                                 \
    }
CASES(AS_FN)
#undef AS_FN

static const struct {
    const char *name;
    intptr_t (*fn)(struct fx *);
    enum expect expect;
} cases[] = {
#define AS_ROW(id, expect, call) {#id, case_##id, expect},
    CASES(AS_ROW)
#undef AS_ROW
};

/* Child exit codes: 0 as expected, 3 wrong result, 4 no fixture; else a crash. */
static int run_case(int i)
{
    pid_t pid = fork();
    if (pid == 0) {
        /* The harness's crash handlers would report and exit; a crash must show as one. */
        int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
        for (int k = 0; k < 5; k++)
            signal(sigs[k], SIG_DFL);
        alarm(10); /* a hang is a failure too (SIGALRM) */
        struct fx f;
        if (fx_make(&f))
            _exit(4);
        intptr_t r = cases[i].fn(&f);
        bool ok = cases[i].expect == E_ERR    ? r < 0
                  : cases[i].expect == E_NULL ? r == 0
                  : cases[i].expect == E_STR  ? r != 0
                                              : true;
        _exit(ok ? 0 : 3); /* _exit: no leak report for the fixture */
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

/* ThreadSanitizer makes each forked child's engine slow (207 of them pass the time
 * limit) and this case has no threads to check: it runs in the other builds. */
SL_TEST(every_pointer_argument_null)
{
#ifdef SL_TEST_UNDER_TSAN
    SL_SKIP("under ThreadSanitizer (checked in the default and ASan builds)");
#endif
    char bad[8192] = "";
    int n_bad = 0, n = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < n; i++) {
        int rc = run_case(i);
        if (rc == 0)
            continue;
        n_bad++;
        snprintf(bad + strlen(bad), sizeof bad - strlen(bad), "\n  sl_%s: %s", cases[i].name,
                 rc == 3 ? "wrong result" : rc == 4 ? "fixture failed"
                 : rc == 128 + SIGALRM ? "hung" : rc > 128 ? strsignal(rc - 128) : "crashed");
    }
    printf("%d calls with a NULL argument, %d misbehaved%s\n", n, n_bad, bad);
    if (n_bad)
        fail_msg("%d of %d calls misbehaved (listed above)", n_bad, n);
}
