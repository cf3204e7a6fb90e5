/* Plugins: shared objects that add operators, and the operator ABI (version 2: version 1
 * plus sl_op_def.can_split).
 *
 * A plugin is a shared object exporting
 *
 *     int sl_plugin_entry(const struct sl_host_api *host, sl_registry_t *reg);
 *
 * (or sl_<name>_entry, where <name> is the file name without directory, a leading "lib"
 * and everything from the first '.', other characters than letters and digits turned
 * into '_': "libtopk.so" -> sl_topk_entry). The entry first declares the ABI version it
 * was built against (host->declare_abi(reg, SL_OP_ABI_VERSION)), then registers its
 * operators with host->registry_add(reg, &def), and returns SL_OK or a negative SL_E*
 * code. It calls sluice only through `host`, never by symbol, so a plugin also loads
 * into a program that links sluice statically with hidden symbols.
 * <sluice/plugin_host.h> maps the usual sl_* calls onto `host` for plugin sources.
 *
 * The ABI rules, from version 1 on (docs/PLUGINS.md has the long form):
 *   - struct sl_host_api only grows at its end; members are never reordered, resized,
 *     reused or removed (a deprecated one stays as a placeholder). `size` says how many
 *     bytes of it the host filled.
 *   - struct sl_op_def starts with abi_version and only grows at its end. The structs
 *     it points to (sl_phase, sl_impl, sl_option_def), and the sl_phase given to
 *     sl_task_spawn, are versioned by the abi_version of the operator's definition:
 *     they sit in arrays whose stride the host must know before reading an element.
 *   - Structs the host writes into plugin memory (struct sl_column) are frozen: a later
 *     version adds a new call with a new struct instead.
 *   - Every change bumps SL_OP_ABI_VERSION. The host reads a field added in version N
 *     only after checking that the definition's abi_version is at least N.
 *   - A host refuses plugins and definitions built for a newer version than its own
 *     (SL_EABI); version 0 (before the freeze) is refused too.
 *   - Definitions are immutable once registered and names are unique process-wide.
 */
#ifndef SLUICE_PLUGIN_H
#define SLUICE_PLUGIN_H

#include <stdint.h>

#include "op.h"
#include "plugin_load.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SL__HOST_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SL__HOST_PRINTF(a, b)
#endif

/* Every function an operator implementation may call, as a table the host hands to
 * each plugin's entry. Version 1; later versions append members at the end only. */
struct sl_host_api {
    uint32_t abi_version; /* SL_OP_ABI_VERSION of the host */
    uint32_t size;        /* sizeof(struct sl_host_api) of the host */

    /* --- loading (version 1) --- */
    /* Declares the ABI version the plugin was built against; SL_EABI if it is newer
     * than the host's (or 0). A plugin's entry calls it before anything else. */
    int (*declare_abi)(sl_registry_t *reg, uint32_t abi_version);
    int (*registry_add)(sl_registry_t *reg, const struct sl_op_def *def);

    /* --- errors and types --- */
    const char *(*strerror)(int code);
    const char *(*err_name)(int code);
    const char *(*last_errmsg)(void);
    size_t (*type_width)(enum sl_type type);
    const char *(*type_name)(enum sl_type type);
    int (*type_parse)(const char *name, enum sl_type *out);

    /* --- bind context --- */
    int (*bind_num_inputs)(const sl_bind_t *b);
    const sl_schema_t *(*bind_input_schema)(const sl_bind_t *b, int port);
    int (*bind_option_int)(sl_bind_t *b, const char *name, int64_t *out);
    int (*bind_option_float)(sl_bind_t *b, const char *name, double *out);
    int (*bind_option_str)(sl_bind_t *b, const char *name, const char **out);
    int (*bind_option_bool)(sl_bind_t *b, const char *name, int *out);
    int (*bind_option_given)(const sl_bind_t *b, const char *name);
    int (*bind_add_column)(sl_bind_t *b, const char *name, enum sl_type type);
    void (*bind_set_data)(sl_bind_t *b, void *data, void (*free_fn)(void *));
    void (*bind_set_rows)(sl_bind_t *b, int64_t rows);
    int64_t (*bind_input_rows)(const sl_bind_t *b, int port);
    int (*bind_fail)(sl_bind_t *b, int code, const char *fmt, ...) SL__HOST_PRINTF(3, 4);

    /* --- nodes --- */
    const char *(*op_name)(const sl_op_t *op);
    void *(*op_data)(const sl_op_t *op);
    int (*op_num_inputs)(const sl_op_t *op);
    const sl_schema_t *(*op_input_schema)(const sl_op_t *op, int port);
    const sl_schema_t *(*op_output_schema)(const sl_op_t *op);

    /* --- schemas --- */
    int (*schema_num_fields)(const sl_schema_t *s);
    int (*schema_field)(const sl_schema_t *s, int i, const char **name, enum sl_type *type);
    int (*schema_find)(const sl_schema_t *s, const char *name);

    /* --- tasks --- */
    const sl_op_t *(*task_op)(const sl_task_t *t);
    void *(*task_gstate)(const sl_task_t *t);
    void *(*task_lstate)(sl_task_t *t);
    int64_t (*task_index)(const sl_task_t *t);
    int64_t (*task_count)(const sl_task_t *t);
    int (*task_port)(const sl_task_t *t);
    sl_batch_t *(*task_input)(const sl_task_t *t);
    void *(*task_arg)(const sl_task_t *t);
    enum sl_device_kind (*task_device_kind)(const sl_task_t *t);
    int (*task_worker)(const sl_task_t *t);
    int64_t (*task_morsel_rows)(const sl_task_t *t);
    int (*task_emit)(sl_task_t *t, sl_batch_t *b);
    int (*task_fail)(sl_task_t *t, int code, const char *fmt, ...) SL__HOST_PRINTF(3, 4);
    int (*task_cancelled)(const sl_task_t *t);
    void *(*task_alloc)(sl_task_t *t, size_t bytes);
    void (*task_free)(sl_task_t *t, void *p);
    int (*task_spawn)(sl_task_t *t, const struct sl_phase *work, int64_t n, void *arg,
                      const struct sl_phase *then);
    sl_batch_t *(*task_new_batch)(sl_task_t *t, const sl_schema_t *schema, int64_t rows);
    int32_t *(*task_status)(const sl_task_t *t);
    void (*task_progress)(sl_task_t *t, int64_t rows, int64_t bytes);
    void *(*task_stream)(const sl_task_t *t);
    void *(*task_device_alloc)(sl_task_t *t, size_t bytes);
    void (*task_device_free)(sl_task_t *t, void *d_ptr);
    int64_t (*task_device_budget)(const sl_task_t *t);
    int (*task_batch_to_host)(sl_task_t *t, sl_batch_t *b, sl_batch_t **out);
    int (*task_batch_to_device)(sl_task_t *t, sl_batch_t *b, sl_batch_t **out);
    sl_batch_t *(*task_batch_slice)(sl_task_t *t, sl_batch_t *b, int64_t offset, int64_t rows);

    /* --- batches --- */
    int (*batch_create)(sl_batch_t **out, int n_cols, const char *const names[],
                        const enum sl_type types[], int64_t n_rows);
    void (*batch_ref)(sl_batch_t *b);
    void (*batch_unref)(sl_batch_t *b);
    int (*batch_num_columns)(const sl_batch_t *b);
    int64_t (*batch_num_rows)(const sl_batch_t *b);
    int (*batch_device)(const sl_batch_t *b);
    int (*batch_column)(const sl_batch_t *b, int i, struct sl_column *col);
    int (*batch_column_index)(const sl_batch_t *b, const char *name);
    void *(*batch_column_data)(sl_batch_t *b, int i);
    uint8_t *(*batch_column_validity)(sl_batch_t *b, int i);

    /* --- tables --- */
    int (*table_create)(sl_table_t **out);
    void (*table_ref)(sl_table_t *t);
    void (*table_unref)(sl_table_t *t);
    int (*table_append)(sl_table_t *t, sl_batch_t *b);
    int64_t (*table_num_batches)(const sl_table_t *t);
    int64_t (*table_num_rows)(const sl_table_t *t);
    sl_batch_t *(*table_batch)(const sl_table_t *t, int64_t i);
    int (*table_pin)(sl_table_t *t);
    int (*table_to_host)(sl_table_t *t, sl_table_t **out);

    /* members added in version 2 go below this line (none) */

    /* --- version 3: column types of 0.3 (data.h) --- */
    enum sl_type (*type_decimal)(int precision, int scale);
    int (*type_precision)(enum sl_type type);
    int (*type_scale)(enum sl_type type);
    int (*type_is_string)(enum sl_type type);
    int (*batch_column_strings)(const sl_batch_t *b, int i, struct sl_strings *out);
    char *(*batch_column_chars)(sl_batch_t *b, int i, int64_t bytes);
    int (*batch_column_set_dictionary)(sl_batch_t *b, int i, int64_t n, const int32_t *offsets,
                                       const char *chars);
    int (*batch_share_dictionary)(sl_batch_t *b, int i, const sl_batch_t *from, int j);
    /* --- version 3: engine options and the profile (op.h) --- */
    int (*task_option_int)(const sl_task_t *t, const char *name, int64_t *out);
    int (*task_option_float)(const sl_task_t *t, const char *name, double *out);
    void (*task_profile_value)(sl_task_t *t, const char *name, int64_t value);

    /* members added in version 4 go below this line */
};

/* The entry point a plugin exports. */
typedef int (*sl_plugin_entry_fn)(const struct sl_host_api *host, sl_registry_t *reg);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_PLUGIN_H */
