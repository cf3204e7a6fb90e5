/* The filter operator's parts shared by its CPU definition (filter.c) and the one with
 * the GPU implementation added (expr_cuda.c, CUDA builds): operators/expr/meson.build
 * registers the one its build has. */
#ifndef SLUICE_FILTER_OP_H
#define SLUICE_FILTER_OP_H

#include <stdbool.h>

#include "expr_prog.h"
#include "operators.h"

struct sl__filter_data {
    struct sl__expr *e;
    struct sl__xp xp;      /* the predicate as a GPU program, when gpu_ok */
    bool gpu_ok;
    char why[200];         /* why the GPU filter does not take it */
};

struct sl__filter_local {
    struct sl__pred_state pred;
};

extern const struct sl_option_def sl__filter_options[1];
int sl__filter_bind(sl_bind_t *b);
void sl__filter_fini_local(const sl_op_t *op, void *gs, void *ls);
double sl__filter_cost(const sl_op_t *op, enum sl_device_kind kind, int64_t rows);
int sl__filter_execute(sl_task_t *t);

#define SL__FILTER_DEF(def, phase)                                                          \
    const struct sl_op_def def = {                                                          \
        .abi_version = SL_OP_ABI_VERSION,                                                   \
        .flags = SL_OP_STREAM,                                                              \
        .name = "filter",                                                                   \
        .doc = "keeps the rows where the predicate `where` is true",                        \
        .min_inputs = 1,                                                                    \
        .max_inputs = 1,                                                                    \
        .options = sl__filter_options,                                                      \
        .n_options = 1,                                                                     \
        .bind = sl__filter_bind,                                                            \
        .local_state_bytes = sizeof(struct sl__filter_local),                               \
        .fini_local = sl__filter_fini_local,                                                \
        .execute = &(phase),                                                                \
        .can_split = sl__split_yes,                                                         \
    }

#endif /* SLUICE_FILTER_OP_H */
