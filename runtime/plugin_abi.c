/* The operator ABI, versions 1 to 3: the host table handed to plugins, the version checks,
 * and compile-time guards on the frozen layouts (include/sluice/plugin.h has the rules).
 *
 * This file is the one place that knows which fields came in which version. Version 1
 * is the base: every definition the registry accepts has all of its fields, so the
 * runtime reads them directly. A field added in version N is read only through an
 * sl__op_call_<field>(def, ...) wrapper here that checks def->abi_version >= N first
 * and falls back otherwise, as SQLite's src/os.c does for its VFS methods. */
#include <stddef.h>

#include "plugin_int.h"

/* X(member, function): struct sl_host_api after its two header words, in layout order.
 * The asserts below check that the header declares exactly these members, at these
 * offsets; the table is built from the same list. Append only. */
#define SL__HOST_V1(X)                                                              \
    X(declare_abi, sl__plugin_declare_abi) X(registry_add, sl__plugin_registry_add) \
    X(strerror, sl_strerror) X(err_name, sl_err_name)                               \
    X(last_errmsg, sl_last_errmsg) X(type_width, sl_type_width)                     \
    X(type_name, sl_type_name) X(type_parse, sl_type_parse)                         \
    X(bind_num_inputs, sl_bind_num_inputs) X(bind_input_schema, sl_bind_input_schema) \
    X(bind_option_int, sl_bind_option_int) X(bind_option_float, sl_bind_option_float) \
    X(bind_option_str, sl_bind_option_str) X(bind_option_bool, sl_bind_option_bool) \
    X(bind_option_given, sl_bind_option_given) X(bind_add_column, sl_bind_add_column) \
    X(bind_set_data, sl_bind_set_data) X(bind_set_rows, sl_bind_set_rows)           \
    X(bind_input_rows, sl_bind_input_rows) X(bind_fail, sl_bind_fail)               \
    X(op_name, sl_op_name) X(op_data, sl_op_data)                                   \
    X(op_num_inputs, sl_op_num_inputs) X(op_input_schema, sl_op_input_schema)       \
    X(op_output_schema, sl_op_output_schema)                                        \
    X(schema_num_fields, sl_schema_num_fields) X(schema_field, sl_schema_field)     \
    X(schema_find, sl_schema_find)                                                  \
    X(task_op, sl_task_op) X(task_gstate, sl_task_gstate)                           \
    X(task_lstate, sl_task_lstate) X(task_index, sl_task_index)                     \
    X(task_count, sl_task_count) X(task_port, sl_task_port)                         \
    X(task_input, sl_task_input) X(task_arg, sl_task_arg)                           \
    X(task_device_kind, sl_task_device_kind) X(task_worker, sl_task_worker)         \
    X(task_morsel_rows, sl_task_morsel_rows) X(task_emit, sl_task_emit)             \
    X(task_fail, sl_task_fail) X(task_cancelled, sl_task_cancelled)                 \
    X(task_alloc, sl_task_alloc) X(task_free, sl_task_free)                         \
    X(task_spawn, sl_task_spawn) X(task_new_batch, sl_task_new_batch)               \
    X(task_status, sl_task_status) X(task_progress, sl_task_progress)               \
    X(task_stream, sl_task_stream) X(task_device_alloc, sl_task_device_alloc)       \
    X(task_device_free, sl_task_device_free)                                        \
    X(task_device_budget, sl_task_device_budget)                                    \
    X(task_batch_to_host, sl_task_batch_to_host)                                    \
    X(task_batch_to_device, sl_task_batch_to_device)                                \
    X(task_batch_slice, sl_task_batch_slice)                                        \
    X(batch_create, sl_batch_create) X(batch_ref, sl_batch_ref)                     \
    X(batch_unref, sl_batch_unref) X(batch_num_columns, sl_batch_num_columns)       \
    X(batch_num_rows, sl_batch_num_rows) X(batch_device, sl_batch_device)           \
    X(batch_column, sl_batch_column) X(batch_column_index, sl_batch_column_index)   \
    X(batch_column_data, sl_batch_column_data)                                      \
    X(batch_column_validity, sl_batch_column_validity)                              \
    X(table_create, sl_table_create) X(table_ref, sl_table_ref)                     \
    X(table_unref, sl_table_unref) X(table_append, sl_table_append)                 \
    X(table_num_batches, sl_table_num_batches) X(table_num_rows, sl_table_num_rows) \
    X(table_batch, sl_table_batch) X(table_pin, sl_table_pin)                       \
    X(table_to_host, sl_table_to_host)

/* Version 3: the column types of 0.3, engine options and profile values. */
#define SL__HOST_V3(X)                                                              \
    X(type_decimal, sl_type_decimal) X(type_precision, sl_type_precision)           \
    X(type_scale, sl_type_scale) X(type_is_string, sl_type_is_string)               \
    X(batch_column_strings, sl_batch_column_strings)                                \
    X(batch_column_chars, sl_batch_column_chars)                                    \
    X(batch_column_set_dictionary, sl_batch_column_set_dictionary)                  \
    X(batch_share_dictionary, sl_batch_share_dictionary)                            \
    X(task_option_int, sl_task_option_int)                                          \
    X(task_option_float, sl_task_option_float)                                      \
    X(task_profile_value, sl_task_profile_value)

#define SL__HOST_ALL(X) SL__HOST_V1(X) SL__HOST_V3(X)

#define SL__INDEX(member, fn) SL__HOST_IDX_##member,
enum { SL__HOST_ALL(SL__INDEX) SL__HOST_ALL_COUNT };
#undef SL__INDEX

_Static_assert(SL_OP_ABI_VERSION == 3, "a new ABI version needs its fields listed here");
_Static_assert(offsetof(struct sl_host_api, abi_version) == 0, "host_api header");
_Static_assert(offsetof(struct sl_host_api, size) == 4, "host_api header");

/* The layouts below are those of LP64 targets (x86-64, aarch64 Linux). */
#if UINTPTR_MAX == UINT64_MAX
#define SL__AT(member, fn)                                                             \
    _Static_assert(offsetof(struct sl_host_api, member) == 8 + 8 * SL__HOST_IDX_##member, \
                   "struct sl_host_api v1: " #member " moved");
SL__HOST_ALL(SL__AT)
#undef SL__AT
_Static_assert(sizeof(struct sl_host_api) == 8 + 8 * SL__HOST_ALL_COUNT,
               "struct sl_host_api: a member is missing from SL__HOST_V1/V3 or was added");

#define SL__OFF(type, member, off) \
    _Static_assert(offsetof(type, member) == (off), #type " v1: " #member " moved");
SL__OFF(struct sl_op_def, abi_version, 0)
SL__OFF(struct sl_op_def, flags, 4)
SL__OFF(struct sl_op_def, name, 8)
SL__OFF(struct sl_op_def, doc, 16)
SL__OFF(struct sl_op_def, min_inputs, 24)
SL__OFF(struct sl_op_def, max_inputs, 28)
SL__OFF(struct sl_op_def, options, 32)
SL__OFF(struct sl_op_def, n_options, 40)
SL__OFF(struct sl_op_def, bind, 48)
SL__OFF(struct sl_op_def, global_state_bytes, 56)
SL__OFF(struct sl_op_def, local_state_bytes, 64)
SL__OFF(struct sl_op_def, init_global, 72)
SL__OFF(struct sl_op_def, fini_global, 80)
SL__OFF(struct sl_op_def, init_local, 88)
SL__OFF(struct sl_op_def, fini_local, 96)
SL__OFF(struct sl_op_def, source_tasks, 104)
SL__OFF(struct sl_op_def, source, 112)
SL__OFF(struct sl_op_def, execute, 120)
SL__OFF(struct sl_op_def, sink, 128)
SL__OFF(struct sl_op_def, combine, 136)
SL__OFF(struct sl_op_def, finalize, 144)
/* Version 2 appended can_split; a version 1 definition ends before it. */
SL__OFF(struct sl_op_def, can_split, 152)
_Static_assert(sizeof(struct sl_op_def) == 160, "struct sl_op_def v2 size");

SL__OFF(struct sl_option_def, name, 0)
SL__OFF(struct sl_option_def, type, 8)
SL__OFF(struct sl_option_def, default_value, 16)
SL__OFF(struct sl_option_def, doc, 24)
_Static_assert(sizeof(struct sl_option_def) == 32, "struct sl_option_def v1 size");

SL__OFF(struct sl_impl, device, 0)
SL__OFF(struct sl_impl, flags, 4)
SL__OFF(struct sl_impl, run, 8)
SL__OFF(struct sl_impl, can_run, 16)
_Static_assert(sizeof(struct sl_impl) == 24, "struct sl_impl v1 size");

SL__OFF(struct sl_phase, impls, 0)
SL__OFF(struct sl_phase, n_impls, 8)
SL__OFF(struct sl_phase, cost, 16)
_Static_assert(sizeof(struct sl_phase) == 24, "struct sl_phase v1 size");

/* Written by the host into plugin memory: frozen for good (plugin.h). */
SL__OFF(struct sl_column, type, 0)
SL__OFF(struct sl_column, length, 8)
SL__OFF(struct sl_column, offset, 16)
SL__OFF(struct sl_column, null_count, 24)
SL__OFF(struct sl_column, data, 32)
SL__OFF(struct sl_column, validity, 40)
SL__OFF(struct sl_column, name, 48)
_Static_assert(sizeof(struct sl_column) == 56, "struct sl_column is frozen");
#undef SL__OFF
#endif
_Static_assert(sizeof(enum sl_type) == 4 && sizeof(enum sl_device_kind) == 4 &&
                   sizeof(enum sl_option_type) == 4,
               "enums crossing the plugin boundary are int-sized");

#define SL__INIT(member, fn) .member = fn,
static const struct sl_host_api host_api_v1 = {
    .abi_version = SL_OP_ABI_VERSION,
    .size = sizeof(struct sl_host_api),
    SL__HOST_ALL(SL__INIT)
};
#undef SL__INIT

int sl__op_call_can_split(const struct sl_op_def *def, const sl_op_t *op)
{
    /* Version 1 definitions have no can_split field: reading it would read past them. */
    if (def->abi_version < 2 || !def->can_split)
        return 0;
    return def->can_split(op) != 0;
}

const struct sl_host_api *sl__host_api(void)
{
    return &host_api_v1;
}

int sl__abi_check(uint32_t v, const char *what)
{
    if (v == 0)
        return sl__set_last_error(SL_EABI, "%s was built for operator ABI 0 (unstable, before "
                                  "the freeze); rebuild it against this sluice's headers "
                                  "(ABI %u)", what, SL_OP_ABI_VERSION);
    if (v > SL_OP_ABI_VERSION)
        return sl__set_last_error(SL_EABI, "%s was built for operator ABI %u, newer than this "
                                  "sluice's (%u); use a sluice at least as new as the "
                                  "headers it was built with", what, v, SL_OP_ABI_VERSION);
    return SL_OK;
}
