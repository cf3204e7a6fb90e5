/* The project operator's parts shared by its CPU definition (project.c) and the one with
 * the GPU implementation added (expr_cuda.c, CUDA builds). */
#ifndef SLUICE_PROJECT_OP_H
#define SLUICE_PROJECT_OP_H

#include <stdbool.h>

#include "expr_prog.h"
#include "operators.h"

struct proj_item {
    char *name;
    struct sl__expr *e;
    int in_col;          /* >= 0: a bare input column, passed on as is */
    int tmp_col;         /* computed: its column in the batch of computed columns */
};

struct proj_data {
    int n;
    struct proj_item *items;
    sl_schema_t *computed;  /* schema of the computed columns (NULL if none) */
    int n_exprs;            /* computed items, for scratch sizes */
    struct sl__xp *xp;      /* per item: the computed ones' GPU programs, when gpu_ok */
    bool gpu_ok;
    char why[200];          /* why the GPU project does not take them */
};

struct proj_local {
    struct sl__expr_scratch *scratch; /* one per item */
    int n;
};

extern const struct sl_option_def sl__project_options[1];
int sl__project_bind(sl_bind_t *b);
int sl__project_init_local(const sl_op_t *op, void *gs, void *ls);
void sl__project_fini_local(const sl_op_t *op, void *gs, void *ls);
int sl__project_execute(sl_task_t *t);
double sl__project_cost(const sl_op_t *op, enum sl_device_kind kind, int64_t rows);
/* Emits the output batch of input `in`: the computed columns from tmp (NULL when none;
 * its reference is taken over), the bare ones from `in`, buffers shared. */
int sl__project_emit(sl_task_t *t, const struct proj_data *d, sl_batch_t *in, sl_batch_t *tmp);

#define SL__PROJECT_DEF(def, phase)                                                         \
    const struct sl_op_def def = {                                                          \
        .abi_version = SL_OP_ABI_VERSION,                                                   \
        .flags = SL_OP_STREAM,                                                              \
        .name = "project",                                                                  \
        .doc = "computes the listed columns: \"a, c=a*2+b, d=CAST(x AS float64)\"",          \
        .min_inputs = 1,                                                                    \
        .max_inputs = 1,                                                                    \
        .options = sl__project_options,                                                     \
        .n_options = 1,                                                                     \
        .bind = sl__project_bind,                                                           \
        .local_state_bytes = sizeof(struct proj_local),                                     \
        .init_local = sl__project_init_local,                                               \
        .fini_local = sl__project_fini_local,                                               \
        .execute = &(phase),                                                                \
        .can_split = sl__split_yes,                                                         \
    }

#endif /* SLUICE_PROJECT_OP_H */
