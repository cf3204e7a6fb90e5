/* For plugin sources only: the sl_* calls of op.h, data.h and plan.h (schemas), mapped
 * onto the host table a plugin receives, so that operator code reads the same in a
 * plugin as in sluice's built-in operators and the plugin needs no sluice symbol.
 *
 * In exactly one source of the plugin write SL_PLUGIN_HOST_DEFINE; at file scope, and
 * start the entry with sl_plugin_init:
 *
 *     #include <sluice/plugin_host.h>
 *     SL_PLUGIN_HOST_DEFINE;
 *     int sl_plugin_entry(const struct sl_host_api *host, sl_registry_t *reg)
 *     {
 *         int rc = sl_plugin_init(host, reg);
 *         if (rc < 0)
 *             return rc;
 *         return sl_registry_add(reg, &my_def);
 *     }
 *
 * Only calls are mapped: taking the address of an sl_* function still names the
 * library's symbol. Do not include this header in code linked into libsluice or an
 * embedder. Added in 0.2.
 */
#ifndef SLUICE_PLUGIN_HOST_H
#define SLUICE_PLUGIN_HOST_H

#include "plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The host table of this plugin, set by sl_plugin_init. Hidden, so that neither the
 * program nor another plugin can interpose it. */
#if defined(__GNUC__)
__attribute__((visibility("hidden")))
#endif
extern const struct sl_host_api *sl_plugin_host;

#if defined(__GNUC__)
#define SL_PLUGIN_HOST_DEFINE \
    __attribute__((visibility("hidden"))) const struct sl_host_api *sl_plugin_host
#else
#define SL_PLUGIN_HOST_DEFINE const struct sl_host_api *sl_plugin_host
#endif

/* Keeps `host` for the mapped calls and declares the ABI version this plugin was built
 * against. SL_EABI when the host is older than this header (it lacks members the
 * plugin may call) or refuses the version. */
static inline int sl_plugin_init(const struct sl_host_api *host, sl_registry_t *reg)
{
    /* abi_version, size and declare_abi sit at the same offsets in every version. */
    if (!host || !host->declare_abi)
        return SL_EINVAL;
    int rc = host->declare_abi(reg, SL_OP_ABI_VERSION);
    if (rc < 0)
        return rc;
    if (host->abi_version < SL_OP_ABI_VERSION || host->size < sizeof(struct sl_host_api))
        return SL_EABI;
    sl_plugin_host = host;
    return SL_OK;
}

#define SL__HOST(fn) (sl_plugin_host->fn)

#define sl_registry_add(...) SL__HOST(registry_add)(__VA_ARGS__)
#define sl_strerror(...) SL__HOST(strerror)(__VA_ARGS__)
#define sl_err_name(...) SL__HOST(err_name)(__VA_ARGS__)
#define sl_last_errmsg() SL__HOST(last_errmsg)()
#define sl_type_width(...) SL__HOST(type_width)(__VA_ARGS__)
#define sl_type_name(...) SL__HOST(type_name)(__VA_ARGS__)
#define sl_type_parse(...) SL__HOST(type_parse)(__VA_ARGS__)

#define sl_bind_num_inputs(...) SL__HOST(bind_num_inputs)(__VA_ARGS__)
#define sl_bind_input_schema(...) SL__HOST(bind_input_schema)(__VA_ARGS__)
#define sl_bind_option_int(...) SL__HOST(bind_option_int)(__VA_ARGS__)
#define sl_bind_option_float(...) SL__HOST(bind_option_float)(__VA_ARGS__)
#define sl_bind_option_str(...) SL__HOST(bind_option_str)(__VA_ARGS__)
#define sl_bind_option_bool(...) SL__HOST(bind_option_bool)(__VA_ARGS__)
#define sl_bind_option_given(...) SL__HOST(bind_option_given)(__VA_ARGS__)
#define sl_bind_add_column(...) SL__HOST(bind_add_column)(__VA_ARGS__)
#define sl_bind_set_data(...) SL__HOST(bind_set_data)(__VA_ARGS__)
#define sl_bind_set_rows(...) SL__HOST(bind_set_rows)(__VA_ARGS__)
#define sl_bind_input_rows(...) SL__HOST(bind_input_rows)(__VA_ARGS__)
#define sl_bind_fail(...) SL__HOST(bind_fail)(__VA_ARGS__)

#define sl_op_name(...) SL__HOST(op_name)(__VA_ARGS__)
#define sl_op_data(...) SL__HOST(op_data)(__VA_ARGS__)
#define sl_op_num_inputs(...) SL__HOST(op_num_inputs)(__VA_ARGS__)
#define sl_op_input_schema(...) SL__HOST(op_input_schema)(__VA_ARGS__)
#define sl_op_output_schema(...) SL__HOST(op_output_schema)(__VA_ARGS__)

#define sl_schema_num_fields(...) SL__HOST(schema_num_fields)(__VA_ARGS__)
#define sl_schema_field(...) SL__HOST(schema_field)(__VA_ARGS__)
#define sl_schema_find(...) SL__HOST(schema_find)(__VA_ARGS__)

#define sl_task_op(...) SL__HOST(task_op)(__VA_ARGS__)
#define sl_task_gstate(...) SL__HOST(task_gstate)(__VA_ARGS__)
#define sl_task_lstate(...) SL__HOST(task_lstate)(__VA_ARGS__)
#define sl_task_index(...) SL__HOST(task_index)(__VA_ARGS__)
#define sl_task_count(...) SL__HOST(task_count)(__VA_ARGS__)
#define sl_task_port(...) SL__HOST(task_port)(__VA_ARGS__)
#define sl_task_input(...) SL__HOST(task_input)(__VA_ARGS__)
#define sl_task_arg(...) SL__HOST(task_arg)(__VA_ARGS__)
#define sl_task_device_kind(...) SL__HOST(task_device_kind)(__VA_ARGS__)
#define sl_task_worker(...) SL__HOST(task_worker)(__VA_ARGS__)
#define sl_task_morsel_rows(...) SL__HOST(task_morsel_rows)(__VA_ARGS__)
#define sl_task_option_int(...) SL__HOST(task_option_int)(__VA_ARGS__)
#define sl_task_option_float(...) SL__HOST(task_option_float)(__VA_ARGS__)
#define sl_task_profile_value(...) SL__HOST(task_profile_value)(__VA_ARGS__)
#define sl_task_emit(...) SL__HOST(task_emit)(__VA_ARGS__)
#define sl_task_fail(...) SL__HOST(task_fail)(__VA_ARGS__)
#define sl_task_cancelled(...) SL__HOST(task_cancelled)(__VA_ARGS__)
#define sl_task_alloc(...) SL__HOST(task_alloc)(__VA_ARGS__)
#define sl_task_free(...) SL__HOST(task_free)(__VA_ARGS__)
#define sl_task_spawn(...) SL__HOST(task_spawn)(__VA_ARGS__)
#define sl_task_new_batch(...) SL__HOST(task_new_batch)(__VA_ARGS__)
#define sl_task_status(...) SL__HOST(task_status)(__VA_ARGS__)
#define sl_task_progress(...) SL__HOST(task_progress)(__VA_ARGS__)
#define sl_task_stream(...) SL__HOST(task_stream)(__VA_ARGS__)
#define sl_task_device_alloc(...) SL__HOST(task_device_alloc)(__VA_ARGS__)
#define sl_task_device_free(...) SL__HOST(task_device_free)(__VA_ARGS__)
#define sl_task_device_budget(...) SL__HOST(task_device_budget)(__VA_ARGS__)
#define sl_task_batch_to_host(...) SL__HOST(task_batch_to_host)(__VA_ARGS__)
#define sl_task_batch_to_device(...) SL__HOST(task_batch_to_device)(__VA_ARGS__)
#define sl_task_batch_slice(...) SL__HOST(task_batch_slice)(__VA_ARGS__)

#define sl_batch_create(...) SL__HOST(batch_create)(__VA_ARGS__)
#define sl_batch_ref(...) SL__HOST(batch_ref)(__VA_ARGS__)
#define sl_batch_unref(...) SL__HOST(batch_unref)(__VA_ARGS__)
#define sl_batch_num_columns(...) SL__HOST(batch_num_columns)(__VA_ARGS__)
#define sl_batch_num_rows(...) SL__HOST(batch_num_rows)(__VA_ARGS__)
#define sl_batch_device(...) SL__HOST(batch_device)(__VA_ARGS__)
#define sl_batch_column(...) SL__HOST(batch_column)(__VA_ARGS__)
#define sl_batch_column_index(...) SL__HOST(batch_column_index)(__VA_ARGS__)
#define sl_batch_column_data(...) SL__HOST(batch_column_data)(__VA_ARGS__)
#define sl_batch_column_validity(...) SL__HOST(batch_column_validity)(__VA_ARGS__)

#define sl_table_create(...) SL__HOST(table_create)(__VA_ARGS__)
#define sl_table_ref(...) SL__HOST(table_ref)(__VA_ARGS__)
#define sl_table_unref(...) SL__HOST(table_unref)(__VA_ARGS__)
#define sl_table_append(...) SL__HOST(table_append)(__VA_ARGS__)
#define sl_table_num_batches(...) SL__HOST(table_num_batches)(__VA_ARGS__)
#define sl_table_num_rows(...) SL__HOST(table_num_rows)(__VA_ARGS__)
#define sl_table_batch(...) SL__HOST(table_batch)(__VA_ARGS__)
#define sl_table_pin(...) SL__HOST(table_pin)(__VA_ARGS__)
#define sl_table_to_host(...) SL__HOST(table_to_host)(__VA_ARGS__)

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_PLUGIN_HOST_H */
