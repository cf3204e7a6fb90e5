/* sort.topk's state and phase bodies, shared by its CPU definition (topk.c) and the
 * CUDA one (topk_cuda.c), which adds a GPU sink. */
#ifndef SL_TOPK_OP_H
#define SL_TOPK_OP_H

#include "common/op_def.h"
#include "sort_any.h"

struct topk_data {
    struct sl__sort_spec spec;   /* the keys, then the tie-breaking columns */
    int64_t limit;
};

struct topk_state {
    sl_batch_t *best;            /* at most limit rows, in no order */
};

extern const struct sl_option_def sl__topk_options[2];
int sl__topk_bind(sl_bind_t *b);
/* Merges the rows of host batch b into the best rows *best (replaced). */
int sl__topk_keep_best(const struct topk_data *d, sl_batch_t **best, sl_batch_t *b);
int sl__topk_sink(sl_task_t *t);
int sl__topk_combine(sl_task_t *t);
int sl__topk_finalize(sl_task_t *t);
int sl__topk_source(sl_task_t *t);
int64_t sl__topk_source_tasks(sl_task_t *t);
void sl__topk_fini_global(const sl_op_t *op, void *gs);
void sl__topk_fini_local(const sl_op_t *op, void *gs, void *ls);

/* The definition `def` with the sink implementations sink_impls_ (the CPU's, then the
 * GPU's in CUDA builds); combine, finalize and source run on the CPU. */
#define SL__TOPK_DEF(def, sink_impls_)                                                      \
    static const struct sl_impl def##_combine_impl[] = {SL__IMPL_CPU(sl__topk_combine)};   \
    static const struct sl_impl def##_finalize_impl[] = {SL__IMPL_CPU(sl__topk_finalize)}; \
    static const struct sl_impl def##_source_impl[] = {SL__IMPL_CPU(sl__topk_source)};     \
    static const struct sl_phase def##_sink = {sink_impls_, SL__N_IMPLS(sink_impls_),      \
                                               sl__cost_linear};                           \
    static const struct sl_phase def##_combine = {def##_combine_impl, 1, NULL};            \
    static const struct sl_phase def##_finalize = {def##_finalize_impl, 1, NULL};          \
    static const struct sl_phase def##_source = {def##_source_impl, 1,                     \
                                                 sl__cost_linear_source};                  \
    const struct sl_op_def def = {                                                         \
        .abi_version = SL_OP_ABI_VERSION,                                                  \
        .flags = SL_OP_SINK | SL_OP_SOURCE,                                                \
        .name = "sort.topk",                                                               \
        .doc = "first `limit` rows by keys=\"a DESC, b\" of any type, without a full "    \
               "sort (ORDER BY ... LIMIT n; ties by the other columns)",                    \
        .min_inputs = 1,                                                                   \
        .max_inputs = 1,                                                                   \
        .options = sl__topk_options,                                                       \
        .n_options = 2,                                                                    \
        .bind = sl__topk_bind,                                                             \
        .global_state_bytes = sizeof(struct topk_state),                                   \
        .local_state_bytes = sizeof(struct topk_state),                                    \
        .fini_global = sl__topk_fini_global,                                               \
        .fini_local = sl__topk_fini_local,                                                 \
        .source_tasks = sl__topk_source_tasks,                                             \
        .sink = &def##_sink,                                                               \
        .combine = &def##_combine,                                                         \
        .finalize = &def##_finalize,                                                       \
        .source = &def##_source,                                                           \
    }

#endif /* SL_TOPK_OP_H */
