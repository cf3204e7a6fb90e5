/* Engines: the worker threads, devices, memory pools and budgets that run queries.
 *
 * An engine is created once and runs many queries, several at a time. All functions
 * taking an engine are thread-safe unless stated otherwise.
 */
#ifndef SLUICE_ENGINE_H
#define SLUICE_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "option.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_engine sl_engine_t;

enum sl_device_kind { SL_DEVICE_CPU = 0, SL_DEVICE_CUDA = 1 };

/* Where tasks may run. AUTO lets the scheduler pick by estimated finish time. */
/* Where pipelines run. SL_PLACE_COPROCESS (added in 0.3) splits every pipeline whose
 * nodes all allow it across the CPU workers and a GPU at once (co-processing); other
 * pipelines are placed as with SL_PLACE_AUTO. An engine setting only (not for sl_plan_place). */
enum sl_placement { SL_PLACE_AUTO = 0, SL_PLACE_CPU = 1, SL_PLACE_GPU = 2, SL_PLACE_COPROCESS = 3 };

/* Engine settings. Fill with sl_engine_config_init, then change what you need, by field
 * or by name (sl_engine_config_set, option.h; the option names are given below).
 * Zero in a count or limit field means "the default" as documented per field. The
 * library never reads environment variables: what is set here is what it uses. */
struct sl_engine_config {
    uint32_t size;              /* sizeof(struct sl_engine_config); set by _init */
    int n_threads;              /* threads: CPU worker threads; 0 = one per online core */
    int n_gpus;                 /* gpus: GPUs to use; -1 = all usable (default), 0 = none */
    int64_t host_mem_limit;     /* host_mem: bytes of host memory for query state;
                                   0 = 80% of RAM */
    int64_t gpu_mem_limit;      /* gpu_mem: bytes of device memory per GPU; 0 = 90% of free */
    enum sl_placement placement;/* placement: engine-wide placement; SL_PLACE_AUTO by
                                   default */
    int64_t morsel_rows_cpu;    /* morsel_rows: rows per CPU morsel; 0 = 122880 */
    int64_t morsel_rows_gpu;    /* gpu_morsel_rows: rows per GPU chunk; 0 = 16 Mi rows */
    int pin_threads;            /* pin_threads: 1 (default) pins workers to cores */
    int gpu_depth;              /* gpu_depth: GPU tasks in flight per GPU (copies of the next
                                   ones overlap the kernels of the current); 0 = 4 */
    const char *cost_cache_path;/* cost_cache: file for calibrated throughput models;
                                   NULL = none */
    const char *trace_path;     /* trace: write a Chrome trace of every query here;
                                   NULL = off */
    /* Log sink for warnings ("GPU 0 cannot run the built kernels ..."). NULL = stderr. */
    void (*log)(void *user, int level, const char *msg);
    void *log_user;
    /* Fields added in 0.2 (options of the same names; docs/OPTIONS.md). */
    int64_t coproc_morsel_rows; /* rows per morsel of a co-processed pipeline; 0 = chosen */
    int coproc_cpu_workers;     /* CPU workers of a co-processed pipeline; 0 = threads - 1 */
    double host_gbps;           /* host memory bandwidth (GB/s) for placement; 0 = the link's */
    int64_t agg_gpu_part_threshold; /* estimated groups above which the GPU group-by
                                       partitions; 0 = 65536 */
    int debug_kmeans_method;    /* GPU k-means kernel (an SL_K_KMEANS_* number); -1 = chosen */
    int debug_ooc_sort_merge;   /* out-of-core sort merge: 0 auto, 1 cpu, 2 gpu */
    int debug_ooc_readback;     /* out-of-core join read-back: 0 copy, 1 kernel */
    int debug_join_phase_times; /* 1: the GPU join's phase times go to the query profile */
};

/* Fills *cfg with defaults. Added in 0.1. */
SL_API void sl_engine_config_init(struct sl_engine_config *cfg);

/* Creates an engine. On success *out is the engine and SL_OK is returned. On failure
 * a negative code is returned and *out is still an engine object whose
 * sl_engine_errmsg tells why (close it with sl_engine_close), except for SL_ENOMEM,
 * where *out may be NULL (then see sl_last_errmsg). cfg may be NULL for defaults. */
SL_API int sl_engine_open(sl_engine_t **out, const struct sl_engine_config *cfg);
/* Waits for running queries to finish, then frees the engine. NULL is allowed. */
SL_API void sl_engine_close(sl_engine_t *eng);
/* The message of the last error on this engine; "" if none. Owned by the engine. */
SL_API const char *sl_engine_errmsg(const sl_engine_t *eng);

/* What the engine sees. */
struct sl_device_info {
    enum sl_device_kind kind;
    int ordinal;                /* CPU: 0; GPU: CUDA device ordinal */
    char name[128];
    int64_t memory_bytes;       /* host RAM or device memory */
    int n_cores;                /* CPU: worker threads; GPU: SM count */
    int numa_node;              /* CPU: number of NUMA nodes; GPU: nearest node or -1 */
    int compute_major, compute_minor; /* GPU only */
    int usable;                 /* 0 if present but unusable (see reason) */
    char reason[160];           /* why a device is unusable */
    double h2d_gbps, d2h_gbps;  /* measured link bandwidths, 0 if not measured */
};

/* Number of devices: 1 (the CPU) + the usable or unusable GPUs found. */
SL_API int sl_engine_device_count(const sl_engine_t *eng);
/* Fills *info for device i (0 is the CPU). SL_EINVAL if out of range. */
SL_API int sl_engine_device_info(const sl_engine_t *eng, int i, struct sl_device_info *info);
/* Measures the host<->device bandwidth of every GPU the engine uses (pinned copies of
 * 64 MiB, about 50 ms per GPU) and keeps it in the device infos (h2d_gbps, d2h_gbps)
 * and for placement. Nothing to do, and SL_OK, without GPUs. Added in 0.1. */
SL_API int sl_engine_measure_links(sl_engine_t *eng);
/* Measures the memory bandwidth of GPU device i (an index as for sl_engine_device_info):
 * a device-to-device copy of `bytes` (memory from the engine's pool), median of 5 timed
 * copies after a warm-up; *gbps = bytes read + written per second / 1e9, the floor of
 * GPU-resident benchmarks (docs/BENCH_PROTOCOL.md). Needs 2 * bytes of free device
 * memory. SL_EINVAL if i is not a GPU, SL_ENODEV if the engine does not use it or sluice
 * was built without CUDA; *gbps is 0 on failure. Not while queries run on that GPU
 * (they would share its bandwidth). Added in 0.2. */
SL_API int sl_engine_measure_device_copy(sl_engine_t *eng, int i, int64_t bytes, double *gbps);
/* The fp32 FMA peak of GPU device i in GFLOP/s, from its attributes: SMs x peak clock x
 * fp32 lanes per SM x 2 flops. Same errors as sl_engine_measure_device_copy. Thread-safe.
 * Added in 0.2. */
SL_API int sl_engine_device_fp32_peak(const sl_engine_t *eng, int i, double *gflops);
/* Number of CPU worker threads. */
SL_API int sl_engine_num_threads(const sl_engine_t *eng);

/* Memory accounting of the engine (bytes). */
struct sl_mem_stats {
    int64_t host_in_use, host_peak, host_limit;
    int64_t gpu_in_use, gpu_peak, gpu_limit; /* summed over GPUs */
    int64_t host_allocs_live;                /* allocations not yet freed */
};
SL_API void sl_engine_mem_stats(const sl_engine_t *eng, struct sl_mem_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_ENGINE_H */
