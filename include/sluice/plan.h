/* Plans: immutable DAGs of operator nodes, built in C (or parsed from a plan file).
 *
 * A node is an operator, chosen by its registered name ("gen.sequence",
 * "aggregate.simple", or a plugin's), with its inputs (earlier nodes) and options.
 * Options are written as text, "key=value" pairs separated by spaces or commas, so C
 * code and plan files express them the same way; values may be quoted with '"'.
 * Each node is bound when added: its options and the schemas of its inputs are
 * checked, and its output schema is inferred, so mistakes are reported here, before
 * anything runs, with the node's operator name in the message.
 *
 * A plan is built by one thread; once a query has been created from it, it is frozen
 * (further sl_plan_add calls give SL_ESTATE) and may be shared by queries on any
 * number of threads and engines.
 */
#ifndef SLUICE_PLAN_H
#define SLUICE_PLAN_H

#include <stdint.h>

#include "data.h"
#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_plan sl_plan_t;
typedef struct sl_schema sl_schema_t;

/* Creates an empty plan, owned by the caller (sl_plan_destroy). Errors: SL_ENOMEM
 * (message in sl_last_errmsg). Thread-safe. Added in 0.1. */
SL_API int sl_plan_create(sl_plan_t **out);
/* Lets go of the plan. Queries made from it keep it alive (each holds a reference, also
 * while it runs): the plan is freed when it has been destroyed and its last query is;
 * after this call the caller must not use the plan itself. NULL is allowed. Call it
 * once. Added in 0.1; queries hold the plan since the release after 0.3 (it had to outlive them). */
SL_API void sl_plan_destroy(sl_plan_t *plan);
/* Message of the last failing call on this plan; "" if none (also for NULL). Owned by
 * the plan, valid until its next failing call. Added in 0.1. */
SL_API const char *sl_plan_errmsg(const sl_plan_t *plan);

/* Adds a node running operator `op_name` on `inputs` (node ids returned by earlier
 * calls) with `options` (may be NULL or ""; copied). On success *node_id is the new
 * node. A node may be the input of several nodes (or of several inputs of one node, a
 * self-join) and also be outputs: such a shared node is computed once per query and
 * its rows kept on the host, counted in the host budget, until its last consumer is
 * done (since 0.3; before, a node fed one consumer). Errors: SL_ENOTFOUND (no such operator), SL_EINVAL (bad option, wrong number of
 * inputs, unknown input id), SL_ETYPE (input schema the operator cannot take),
 * SL_ESTATE (plan frozen), SL_ENOMEM; message in sl_plan_errmsg. The plan is unchanged
 * on failure. A plan is built from one thread at a time. Added in 0.1. */
SL_API int sl_plan_add(sl_plan_t *plan, const char *op_name, const int inputs[], int n_inputs,
                       const char *options, int *node_id);

/* Adds a source node scanning an in-memory table; the plan takes its own reference
 * (the caller keeps its own). Errors as sl_plan_add. Added in 0.1. */
SL_API int sl_plan_add_table(sl_plan_t *plan, sl_table_t *table, int *node_id);

/* Gives `table` a name in this plan's catalog, so plan text (and sl_plan_add) can scan
 * it as `scan.table name=NAME`: one plan text then runs over any data an embedder loads
 * (e.g. the TPC-H tables at any scale and residency). The plan keeps a reference until
 * it is destroyed. Register tables before adding the nodes that scan them.
 * Errors: SL_EINVAL (NULL or empty name, NULL table), SL_EEXIST (name taken),
 * SL_ESTATE (plan frozen), SL_ENOMEM. Thread safety: as every call on one plan, not
 * concurrently with other calls on it. Added in 0.3. */
SL_API int sl_plan_register_table(sl_plan_t *plan, const char *name, sl_table_t *table);

/* Adds the nodes, outputs and placements written in plan-file text (grammar:
 * docs/PLAN_FORMAT.md) to `plan`. Errors read "SOURCE:LINE:COL: message (hint: ...)"
 * (sl_plan_errmsg); nodes added before the failing line stay in the plan. Errors:
 * SL_EPARSE (grammar), those of sl_plan_add and sl_plan_output, SL_ESTATE (frozen).
 * `text` and `source_name` are read during the call only. Added in 0.1. */
SL_API int sl_plan_parse(sl_plan_t *plan, const char *text, const char *source_name);

/* Marks a node's output as a result of the plan, retrievable by `name` (copied) from
 * every query of the plan (sl_query_result). A node may be marked several times under
 * different names and may feed other nodes too; it is still computed once (since 0.3).
 * Errors: SL_EINVAL (bad id or NULL name), SL_EEXIST (name taken: names are unique
 * within a plan), SL_ESTATE (plan frozen), SL_ENOMEM. Added in 0.1. */
SL_API int sl_plan_output(sl_plan_t *plan, int node_id, const char *name);
/* Like sl_plan_output, but batches that a GPU produced stay in its memory: the result
 * table then holds device batches (sl_batch_device says where; sl_table_to_host copies
 * a table back). For plans whose consumer is on the GPU too, and for benchmarks of
 * GPU-resident data. A node with several consumers keeps its rows on the host, so its
 * outputs hold host batches. Errors as sl_plan_output. Added in 0.2. */
SL_API int sl_plan_output_device(sl_plan_t *plan, int node_id, const char *name);

/* The output name of a node (its first, when it is several outputs), or NULL if the
 * node is not an output (or a bad id). Owned by the plan. Thread-safe once the plan is
 * frozen. Added in 0.1. */
SL_API const char *sl_plan_output_name(const sl_plan_t *plan, int node_id);
/* Number of outputs of the plan (0 for NULL); every output, also a node's second or
 * third, is one of them. Cannot fail. Added in 0.3. */
SL_API int sl_plan_num_outputs(const sl_plan_t *plan);
/* The name of output i (0 <= i < sl_plan_num_outputs, in the order they were added), and
 * its node in *node_id (may be NULL); NULL for a bad index. Owned by the plan.
 * Thread-safe once the plan is frozen. Added in 0.3. */
SL_API const char *sl_plan_output_at(const sl_plan_t *plan, int i, int *node_id);
/* The operator name of a node, or NULL for a bad id. Owned by the registry (lives as
 * long as the process). Thread-safe. Added in 0.1. */
SL_API const char *sl_plan_node_op(const sl_plan_t *plan, int node_id);
/* The name a plan file gave the node ("fact" in `fact = gen.keys ...`), or NULL for a
 * node added from C or a bad id. Owned by the plan. Thread-safe once the plan is
 * frozen. Added in 0.3. */
SL_API const char *sl_plan_node_name(const sl_plan_t *plan, int node_id);
/* The value of option `key` of a node: as given, else the operator's default; NULL if
 * the operator has no such option or the id is bad. Owned by the plan (or the
 * operator's definition). Thread-safe once the plan is frozen. Added in 0.3. */
SL_API const char *sl_plan_node_option(const sl_plan_t *plan, int node_id, const char *key);

/* Forces where one node's tasks run (overrides the engine's placement; not
 * SL_PLACE_COPROCESS). Errors: SL_EINVAL (bad id or placement), SL_ESTATE (plan
 * frozen). Added in 0.1. */
SL_API int sl_plan_place(sl_plan_t *plan, int node_id, enum sl_placement where);

/* Number of nodes (0 for NULL). Cannot fail. Added in 0.1. */
SL_API int sl_plan_num_nodes(const sl_plan_t *plan);
/* The output schema of a node (borrowed, lives with the plan), or NULL for a bad id.
 * Thread-safe once the plan is frozen. Added in 0.1. */
SL_API const sl_schema_t *sl_plan_node_schema(const sl_plan_t *plan, int node_id);

/* --- schemas ---
 * Schemas are read-only views owned by their plan, node or batch; these calls are
 * thread-safe. Added in 0.1. */
/* Number of fields (columns). Cannot fail. */
SL_API int sl_schema_num_fields(const sl_schema_t *s);
/* Name (borrowed from the schema) and type of field i; SL_EINVAL if out of range.
 * Either out pointer may be NULL. */
SL_API int sl_schema_field(const sl_schema_t *s, int i, const char **name, enum sl_type *type);
/* Index of the field named `name`, or SL_ENOTFOUND. */
SL_API int sl_schema_find(const sl_schema_t *s, const char *name);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_PLAN_H */
