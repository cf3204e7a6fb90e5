/* Cost models of the built-in operators whose cost is close to linear in their rows: the
 * seconds a phase takes for `rows` input rows, for the scheduler's placement and for
 * `sluice explain`. CPU figures are per worker thread (placement divides by the threads);
 * GPU figures are for the whole device. Input copies are not included: placement adds
 * them from the link bandwidth.
 *
 * The figures are rounded from bench/RESULTS.md (2-core development machine for the
 * CPU, H100 for the GPU, 2026-11). Operators with a more particular shape (aggregate,
 * k-means) have their own cost functions. An operator without a GPU implementation
 * costs the same on either kind: in a GPU pipeline it runs on one host thread. */
#include <stdio.h>
#include <string.h>

#include "operators.h"

struct cost_model {
    const char *op;
    double cpu_ns;   /* per row, one thread */
    double gpu_ns;   /* per row on the GPU; < 0: no GPU implementation */
    double gpu_fixed_s; /* per call on the GPU (launches, a count read back) */
};

static const struct cost_model models[] = {
    {"scan.table", 0.05, 0.0, 5e-6},
    {"gen.keys", 4.0, 0.01, 5e-6},         /* GPU: Zipf keys are made on the host */
    {"gen.uniform", 4.0, 0.01, 5e-6},
    {"gen.sequence", 1.0, 0.005, 5e-6},
    {"gen.blobs", 12.0, 0.02, 5e-6},       /* GPU: float32 only */
    {"filter", 2.0, 0.02, 30e-6},     /* GPU estimate: program per row, CUB, a read-back */
    {"project", 2.0, 0.02, 30e-6},    /* GPU estimate: program per column, a read-back */
    {"join", 20.0, 0.05, 100e-6},          /* sink: build + probe, per input row */
    {"join.source", 0.5, 0.01, 5e-6},      /* emitting the joined rows */
    {"sort", 40.0, 0.04, 100e-6},          /* GPU: CUB radix sort ~9 ms per 2^28 (estimate) */
    {"sort.source", 0.5, 0.01, 5e-6},
    {"partition", 8.0, 0.03, 100e-6},      /* GPU: CUB sort of (partition, row id) + gathers */
    {"partition.source", 0.5, 0.01, 5e-6},
    {"merge", 10.0, 0.02, 100e-6},         /* GPU: two runs, co-ranks + gathers (estimate) */
    {"merge.source", 0.5, 0.01, 5e-6},
    {"aggregate.sum", 1.0, -1, 0},
    {"aggregate.source", 0.5, 0.01, 5e-6},
    {"aggregate.sum.source", 0.5, -1, 0},
    {"kmeans.source", 0.5, -1, 0},
    {"scan.csv", 60.0, -1, 0},
    {"scan.bin", 1.0, -1, 0},
    {"write.csv", 50.0, -1, 0},
    {"write.bin", 1.0, -1, 0},
};

static double model_cost(const char *name, enum sl_device_kind kind, int64_t rows)
{
    if (rows < 0)
        return -1;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        const struct cost_model *m = &models[i];
        if (strcmp(m->op, name) != 0)
            continue;
        if (kind == SL_DEVICE_CUDA && m->gpu_ns >= 0)
            return m->gpu_fixed_s + (double)rows * m->gpu_ns * 1e-9;
        return (double)rows * m->cpu_ns * 1e-9;
    }
    return -1;
}

double sl__cost_linear(const sl_op_t *op, enum sl_device_kind kind, int64_t rows)
{
    return model_cost(sl_op_name(op), kind, rows);
}

double sl__cost_linear_source(const sl_op_t *op, enum sl_device_kind kind, int64_t rows)
{
    char name[64];
    snprintf(name, sizeof name, "%s.source", sl_op_name(op));
    return model_cost(name, kind, rows);
}
