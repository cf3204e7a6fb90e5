/* Definitions of the built-in operators that sink their input, finalize, then emit a
 * result (sort, partition, merge, aggregate, join, kmeans), and how their CUDA
 * implementations are registered.
 *
 * SL__SINK_SOURCE_DEF defines `def`, a struct sl_op_def: `fields` names a function-like
 * macro, called with the parenthesized arguments `args`, that gives the operator's other
 * designated initializers (name, doc, inputs, options, bind, state sizes, fini
 * functions, source_tasks...; passed by name so that its commas pass through other
 * macros); sink_, combine_, finalize_ and source_ are arrays of struct sl_impl, the
 * CPU's first, then the GPU's.
 *
 * The generic file of such an operator (sort.c) defines its CPU-only definition
 * (sl__sort_def); its *_cuda.c file, compiled only with CUDA, defines the one with the
 * GPU implementations added (sl__sort_cuda_def); the operator's meson.build registers
 * the one its build has (builtin_ops). So no generic file needs an #ifdef. */
#ifndef SLUICE_OPERATORS_OP_DEF_H
#define SLUICE_OPERATORS_OP_DEF_H

#include "operators.h"

#define SL__IMPL_CPU(run_) {.device = SL_DEVICE_CPU, .run = (run_)}
#define SL__IMPL_CUDA(run_, can_run_)                                                      \
    {.device = SL_DEVICE_CUDA, .run = (run_), .can_run = (can_run_)}
/* The implementation array `name`: cpu_run_ on the CPU, and gpu_run_ on a GPU when
 * can_run_ says so (NULL: always). */
#define SL__IMPLS_CPU_CUDA(name, cpu_run_, gpu_run_, can_run_)                             \
    static const struct sl_impl name[] = {SL__IMPL_CPU(cpu_run_),                          \
                                          SL__IMPL_CUDA(gpu_run_, can_run_)}
#define SL__N_IMPLS(a) ((unsigned)(sizeof(a) / sizeof((a)[0])))

#define SL__SINK_SOURCE_DEF(def, fields, args, sink_cost_, sink_, combine_, finalize_,      \
                            source_)                                                        \
    static const struct sl_phase def##_sink = {sink_, SL__N_IMPLS(sink_), sink_cost_};      \
    static const struct sl_phase def##_combine = {combine_, SL__N_IMPLS(combine_), NULL};   \
    static const struct sl_phase def##_finalize = {finalize_, SL__N_IMPLS(finalize_), NULL}; \
    static const struct sl_phase def##_source = {source_, SL__N_IMPLS(source_),             \
                                                 sl__cost_linear_source};                   \
    const struct sl_op_def def = {                                                          \
        fields args,                                                                        \
        .abi_version = SL_OP_ABI_VERSION,                                                   \
        .flags = SL_OP_SINK | SL_OP_SOURCE,                                                 \
        .sink = &def##_sink,                                                                \
        .combine = &def##_combine,                                                          \
        .finalize = &def##_finalize,                                                        \
        .source = &def##_source,                                                            \
    }

#endif /* SLUICE_OPERATORS_OP_DEF_H */
