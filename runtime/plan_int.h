/* Internal structure of plans, nodes and option lists. */
#ifndef SLUICE_RUNTIME_PLAN_INT_H
#define SLUICE_RUNTIME_PLAN_INT_H

#include "internal.h"

/* A parsed option list: key/value strings. */
struct sl__opt {
    char *key;
    char *value;
};

struct sl__opts {
    int n;
    struct sl__opt *items;
};

/* Parses "k=v k2=v2" (spaces or commas between pairs; values may be "quoted" with \"
 * and \\ escapes). Errors carry the position. */
int sl__opts_parse(const char *text, struct sl__opts *out, char *err, size_t err_len);
void sl__opts_free(struct sl__opts *o);
const char *sl__opts_get(const struct sl__opts *o, const char *key);
/* Sets key to a copy of value, replacing an earlier value of the same key. */
int sl__opts_put(struct sl__opts *o, const char *key, const char *value);
/* Parses an integer: digits with an optional power form "2^24" and a suffix k/M/G
 * (x1000) or Ki/Mi/Gi (x1024). Returns 0, -1 when the text is not an integer, -2 when
 * it is one out of range. */
int sl__parse_int(const char *s, int64_t *out);

/* A node of a plan: an operator instance. */
struct sl_op {
    int id;
    const struct sl_op_def *def;
    struct sl__opts opts;            /* user options, validated against def->options */
    int n_inputs;
    int *inputs;                     /* node ids */
    sl_schema_t *schema;             /* output schema */
    void *data;                      /* from bind */
    void (*data_free)(void *);
    int64_t rows_estimate;           /* -1 unknown */
    enum sl_placement placement;
    struct sl_plan *plan;
    const char *output_name;         /* its first output's name (borrowed from the plan's
                                        outputs), or NULL if it is no output */
    char where[160];                 /* "FILE:LINE:COL: " of its plan-file line, or "" */
    char name[64];                   /* its name in the plan file, or "" */
    sl__mg_judge_fn mg_judge;        /* from bind: explain's multi-device verdict, or NULL */
};

/* A plan output: a node's rows kept as the result `name`. A node may be several outputs
 * and also feed other nodes (a shared node, runtime/share.c). */
struct sl__plan_output {
    int node;
    char *name;
    bool device;                     /* kept in GPU memory (sl_plan_output_device) */
};

struct sl_plan {
    int n_nodes, cap_nodes;
    struct sl_op **nodes;
    int n_outputs, cap_outputs;      /* in the order they were added */
    struct sl__plan_output *outputs;
    _Atomic int frozen;              /* set when a query is created */
    _Atomic int refs;                /* the creator's, and one per query of it */
    struct sl__opts settings;        /* engine options set for this plan's queries */
    struct sl__errslot err;
    int n_tables, cap_tables;        /* the catalog of named tables (sl_plan_register_table) */
    struct sl__named_table *tables;
};

struct sl__named_table {
    char *name;
    sl_table_t *table;
};

/* The bind context handed to sl_op_def.bind. */
struct sl_bind {
    struct sl_op *op;
    struct sl_plan *plan;
    struct sl__errslot *err;
    int failed;
};

/* A query's hold on its plan: the plan is freed when the creator has destroyed it and
 * the last query of it is gone. */
void sl__plan_ref(struct sl_plan *plan);
void sl__plan_unref(struct sl_plan *plan);

/* Binds (or rebinds) a node: options and input schemas to output schema. */
int sl__op_bind(struct sl_plan *plan, struct sl_op *op);

#endif /* SLUICE_RUNTIME_PLAN_INT_H */
