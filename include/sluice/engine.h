/* Engines: the worker threads, devices, memory pools and budgets that run queries.
 *
 * An engine is created once and runs many queries, several at a time. All functions
 * taking an engine are thread-safe unless stated otherwise.
 *
 * Growable structs. Every struct that crosses the API by pointer and that sluice reads
 * or fills for the caller (sl_engine_config, sl_device_info, sl_mem_stats, and in
 * query.h sl_error_info and sl_progress) starts with `uint32_t size`, which the caller
 * sets to sizeof the struct as its headers declare it (the SL_*_INIT macros and
 * sl_engine_config_init do that). New members are only ever appended, so:
 *   - sluice fills only the first `size` bytes: a program built against older, smaller
 *     headers gets the members it knows and nothing is written past them;
 *   - members a newer program knows and an older library does not are left as the
 *     caller set them (zero them, as the INIT macros do);
 *   - a size of 0, or one that does not reach past `size` itself, is rejected with
 *     SL_EINVAL (it means the caller forgot to set it).
 * Structs sluice hands out (sl_progress in the progress callback) carry the size sluice
 * filled; read a member only when `size` reaches past it (SL_HAS_MEMBER).
 * Exception: sl_engine_config's debug_* members are switches for A/B runs and tests; one
 * may be removed, replaced or change its values between versions (2026-11-28:
 * debug_sort_sink_host became debug_sort_sink, debug_smj_narrow an enum), so set them by
 * name (sl_engine_config_set, option.h), never through the member.
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

/* True when a growable struct *p (see above) holds `member`: its `size` reaches past
 * the member's end. Added in 0.3. */
#define SL_HAS_MEMBER(p, type, member)                                                  \
    ((p)->size >= offsetof(type, member) + sizeof((p)->member))

/* An initializer of a growable struct: size set, every other member zero (the
 * SL_*_INIT macros). Designated in C; a lambda in C++, which has no designators
 * before C++20. */
#ifdef __cplusplus
#define SL_SIZED_INIT(type) ([] { type s_{}; s_.size = sizeof s_; return s_; }())
#else
#define SL_SIZED_INIT(type) { .size = sizeof(type) }
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
    int debug_ooc_sort_merge;   /* out-of-core sort merge: 0 auto, 1 cpu, 2 gpu, 3 late_cuts
                                   (auto, cuts searched after pass 1) */
    int debug_ooc_readback;     /* out-of-core join read-back: 0 copy, 1 kernel */
    int debug_join_phase_times; /* 1: the GPU join's phase times go to the query profile */
    /* Fields added after 0.3. */
    int64_t deadline_ms;        /* deadline_ms: a query running longer than this after its
                                   start fails with SL_ETIMEDOUT; 0 = none */
    /* Fields added with the exchange between ranks (docs/DISTRIBUTED.md). */
    int mpi;                    /* mpi: 1 joins the MPI job the process runs in (mpirun) */
    int rank, ranks;            /* rank, ranks: this process's share of the data; set from
                                   MPI with mpi; 0 and 1 by default */
    double exchange_timeout;    /* exchange_timeout: seconds an exchange waits for the other
                                   ranks before failing; 0 = 60 */
    int64_t exchange_packet_bytes; /* exchange_packet_bytes: bytes per packet; 0 = 1 MiB */
    int exchange_credits;       /* exchange_credits: packets in flight per link; 0 = 4 */
    double exchange_gbps;       /* exchange_gbps: link bandwidth explain assumes; 0 = 5 */
    /* Fields added with logical GPUs (docs/MULTI_GPU.md). */
    int split_gpu;              /* split_gpu: 1 = `gpus` logical devices over the GPUs
                                   found (round robin), each with its part of the GPU's
                                   memory, its own streams and worker (docs/MULTI_GPU.md) */
    /* Fields added with GPU joins on string keys. */
    int debug_join_weak_hash;   /* 1: the GPU join hashes string keys to 8 bits (tests) */
    /* Fields added with large morsels over GPU-resident tables (issue 19). */
    int64_t gpu_resident_morsel_rows; /* gpu_resident_morsel_rows: rows per GPU morsel of a
                                         table already in that GPU's memory; 0 = 2^28 while
                                         gpu_morsel_rows has its default, else that */
    /* Fields added with pinned result memory (issue 23). */
    int64_t gpu_result_pinned;  /* gpu_result_pinned: bytes of pinned host memory per GPU
                                   that results downloaded from it keep (reused across
                                   queries); past it they are copied into pageable
                                   memory; 0 = host_mem / 8, at most 8 GiB; -1 = none */
    /* Fields added with the multi-GPU option (docs/MULTI_GPU.md). */
    int multi_gpu;              /* multi_gpu: 0 auto, 1 off, 2 on: when a join or sort
                                   spreads over several GPU devices */
    int debug_mgpu_packets;     /* 1: the multi-device exchange goes in packets (tests) */
    /* Fields added with pipeline starts and finalizes on the GPU worker (issue 19). */
    int debug_gpu_handoffs;     /* 1: those go to the CPU workers and the waiting thread
                                   sleeps at once, as before (A/B runs) */
    /* Fields added with the bulk MPI exchange (issue 20). */
    int debug_exchange_packets; /* 1: exchange nodes send packets between ranks even where
                                   the transport moves all rows at once (tests) */
    /* Fields added with the out-of-core sort's bucket gather (issue 23). */
    int debug_ooc_sort_gather;  /* out-of-core sort GPU merge's bucket reads: 0 auto,
                                   1 copy, 2 batch, 3 kernel */
    /* Fields added with the GPU group-by's key-change estimate (issue 18). */
    int debug_agg_gpu_strided_estimate; /* 1: the GPU group-by estimates its groups from
                                           the sample's distinct keys alone (A/B runs) */
    /* Fields added with register programs and the few-groups kernel (issue 18). */
    int debug_gpu_generic;      /* 1: GPU projections all in the interpreter and few-group
                                   GPU group-bys in the shared-table kernels (A/B runs) */
    /* Fields added with the bulk exchange's memory limit (issue 20). */
    int64_t exchange_bulk_bytes; /* exchange_bulk_bytes: the most host memory a rank's bulk
                                    exchange may hold (runs sent and received); past it,
                                    or past the host budget, packets; 0 = the budget */
    int64_t debug_mgpu_chunk_rows; /* rows a device partitions at a time in a multi-device
                                      hash join's pipelined exchange; 0 = 2^20, -1 = all
                                      before anything moves (A/B runs) */
    /* Fields added with narrow uploads of pinned tables (issue 18). */
    int debug_gpu_wide_upload;  /* 1: GPU uploads move a pinned table's columns at their
                                   full width, not their narrow copies (A/B runs) */
    int debug_gpu_no_upload_ahead; /* 1: an upload of a pinned table's narrow columns does
                                      not send the next batch's ahead (A/B runs) */
    /* Fields added with pinned GPU workers (issue 23). */
    int pin_gpu_workers;        /* pin_gpu_workers: 1 (with pin_threads) pins each GPU
                                   worker's thread to a core of its GPU's NUMA node; 0
                                   (default) leaves it to the OS */
    /* Fields added with the host-streamed GPU join (issue 23). */
    int debug_join_stream;      /* host-resident GPU join inputs: 0 auto (large sides stay
                                   in host memory and the probe side streams through the
                                   join), 1 off (the sink uploads them, as before), 2 on
                                   (every host batch stays there: tests), 3 inner (as auto,
                                   but semi and anti joins never stream: A/B runs) */
    int debug_mgpu_copies;      /* 1: the multi-device exchange between logical devices of
                                   one GPU copies each range with its own copy instead of
                                   a kernel per sender (A/B runs) */
    /* Fields added with the GPU join's key bitmap filter (issue 19). */
    int debug_join_filter;      /* GPU join side filter at low match ratios: 0 auto (the
                                   probe side by the build keys' range, then the build side
                                   by a bitmap of the kept probe keys, rows packed after),
                                   1 range (rows packed first, the probe side filtered by
                                   range alone, as before: A/B runs), 2 fused (as 0, each
                                   side's select, gather and packing in one pass: A/B),
                                   3 mask (as 0, each side marked, then written in a
                                   second pass: A/B) */
    /* Fields added with joins under small GPU budgets (issue 18). */
    int debug_join_keep_device; /* 1: a GPU join's sink keeps every device batch on the
                                   GPU, as before its sides went to host memory past
                                   their share of the budget (A/B runs) */
    /* Fields added with the GPU group-by's packed row counts (issue 19). */
    int debug_agg_gpu_no_lean;  /* 1: the GPU group-by's few-groups path of one integer
                                   sum takes the general shared-table kernel (A/B runs) */
    /* Fields added with the streamed join's upload ahead (issue 23). */
    int debug_join_stream_slots; /* the host-streamed GPU join's probe chunks in GPU memory
                                    at once, at most; 0 = as many as the budget holds, 2 =
                                    as before 2026-11-27 (A/B runs) */
    /* Fields added with the streamed join's table built in parts (issue 23). */
    int debug_join_stream_table; /* 1: the host-streamed GPU join builds its table after
                                    the whole build side is up, as before 2026-11-27 (A/B
                                    runs); 0 (default) in parts as the side arrives */
    /* Fields added with the GPU group-by's big partition table (issue 19). */
    int debug_agg_gpu_no_big_table; /* 1: the GPU group-by's partitioned method aggregates
                                       partitions of about 2,000 groups in two blocks an
                                       SM, as before the big table (A/B runs) */
    /* Fields added with the out-of-core join's DMA spill (issue 23). */
    int debug_ooc_spill;        /* out-of-core GPU join's pass-1 spill: 0 fused (partitioned
                                   chunks copied whole; 4-byte integer aggregates summed by
                                   the join kernel), 1 blocks (zero-copy stores of the
                                   append kernel, as before 2026-11-27: A/B runs), 2
                                   dma_half (the cache in half the budget: A/B runs), 3 dma
                                   (session 16's plan, aggregates materialized: A/B runs) */
    int debug_smj_cpu_join;     /* 1: the out-of-core sort-merge join's key ranges are
                                   merge-joined by CPU tasks, not on the GPU (A/B runs) */
    /* Fields added with the out-of-core sort's graded runs (issue 23). */
    int debug_ooc_graded_runs;  /* 1: the out-of-core sort's first and last R rows go in
                                   runs of a quarter, a quarter and a half (A/B runs) */
    /* Fields added with the GPU group-by's big table at 12 bits for 13 (issue 19). */
    int debug_agg_gpu_big_strict; /* 1: a GPU group-by estimate asking for 13 radix bits
                                     takes the smaller table at 13, as before 2026-11-27
                                     (A/B runs) */
    /* Fields added with the out-of-core sort's packed runs (issue 23). */
    int debug_ooc_unpacked_runs; /* 1: the out-of-core sort keeps an int32 key and one
                                    4-byte column as two columns in its runs, as before
                                    2026-11-27 (A/B runs); 0: one 8-byte row a row */
    int debug_ooc_run_buckets;  /* 1: the out-of-core sort's GPU merge cuts buckets of the
                                   runs' size (halved to fit), as before 2026-11-27 (A/B
                                   runs); 0: the most rows its budget holds, at least 32
                                   buckets */
    int debug_ooc_graded_buckets; /* 1: the out-of-core sort's GPU merge cuts its first
                                     and last bucket in a quarter, a quarter and a half
                                     (A/B runs) */
    /* Fields added with the GPU join's direct table with values (issue 19). */
    int debug_join_dense;       /* GPU no-partitioning join's direct table: 0 values (a
                                   bitmap of the keys present and each key's value or R
                                   row), 1 rows (R rows only, inserted with atomicCAS, as
                                   before 2026-11-27: A/B runs) */
    /* Fields added with the range-partitioned out-of-core sort-merge join (issue 23). */
    int debug_smj_ooc;          /* out-of-core sort-merge join: 0 auto (key ranges cut in
                                   pass 1, joined in pass 2), 1 runs (each side's runs
                                   merged first, as before 2026-11-27: A/B runs), 2
                                   serial (auto, a range's sorts and count enqueued after
                                   the previous range's gathers, as in session 17), 3
                                   noahead (auto, without range i + 2 uploaded before the
                                   host waits for range i's count) */
    /* Fields added with the out-of-core sort's narrow runs (issue 23). */
    int debug_ooc_narrow_runs;  /* out-of-core sort's runs: 0 auto (narrow, 6 bytes a row,
                                   where pass 1 finds the GPU merge's cuts), 1 off (8-byte
                                   packed rows, as before 2026-11-27: A/B runs), 2 on */
    int debug_ooc_upload_pieces; /* 1: the out-of-core sort uploads a run with a copy per
                                    input batch and column, as before 2026-11-27 (A/B
                                    runs); 0: adjacent batches' columns in one copy */
    /* Fields added with the out-of-core sort-merge join's pass 2 order (issue 23). */
    int debug_smj_ooc_trace;    /* 1: the out-of-core sort-merge join's pass 2 times each
                                   range's copies and kernels (profile phases smj_p2_*) */
    int debug_smj_packed;       /* 1: the out-of-core sort-merge join's key-range path
                                   packs an int32 key and one 4-byte column into 8-byte
                                   rows in its runs (a range's slice of a run one copy) */
    int debug_smj_sort_all_bits; /* 1: the out-of-core sort-merge join's pass 2 sorts a
                                    range on all key bits, as in session 17 (A/B runs);
                                    0: on the bits its key codes differ in */
    /* Fields added with the out-of-core sort-merge join's overlapped pass 1 (issue 23). */
    int debug_smj_pass1;        /* out-of-core sort-merge join's key-range path: 0 auto
                                   (side 0's runs queued before the splitters are
                                   sampled, side 1's before side 0's end), 1 serial
                                   (splitters, then each side in turn: A/B runs) */
    int debug_smj_count_copy;   /* 1: its pass 2 reads each range's count by a copy on
                                   the task stream (A/B runs); 0: by a kernel into pinned
                                   memory */
    /* Fields added with the out-of-core sort's pass 1 host work off the link (issue 23). */
    int debug_ooc_narrow_tops;  /* out-of-core sort, narrow runs: 0 auto (each bucket's
                                   top-16 window from values found on the GPU beside pass
                                   1's cuts), 1 host (binary searches of the pinned tables
                                   on the host, twice, as before 2026-11-27: A/B runs), 2
                                   check (both, the task fails where they differ: tests) */
    int debug_ooc_presplit;     /* out-of-core sort: 0 auto (the first runs go up while the
                                   host samples pass 2's splitters; their cuts searched on
                                   the host later), 1 first (the splitters before any run,
                                   as before 2026-11-27: A/B runs) */
    int debug_ooc_link_gaps;    /* 1: the out-of-core sort times each run's and bucket's
                                   copies (profile phases ooc_runs_up_wait, ...) */
    int debug_ooc_pass1_buffers; /* out-of-core sort, pass 1, narrow runs: 0 auto (sorted
                                    over the set's output buffer: the upload buffer free
                                    once packed), 1 upload (sorted over the upload buffer,
                                    as before 2026-11-27: A/B runs) */
    int debug_ooc_sets;         /* out-of-core sort, pass 1: buffer sets, 0 auto (two), 1
                                   two, 2 three where they fit at two's run size */
    int debug_sort_sink;        /* the sort's GPU sink: 0 auto (keeps host batches on the
                                   host when the pipeline's input could not sort in the
                                   budget), 1 upload (uploads them while three times what
                                   it uploaded fits, as before session 20: A/B runs) */
    /* Fields added with the out-of-core sort-merge join's narrow runs (issue 23). */
    int debug_smj_narrow;       /* the out-of-core sort-merge join's key-range path
                                   keeps packed runs narrow (6-byte rows and a table per
                                   run, as the out-of-core sort's), decoded in pass 2: 0
                                   auto (sides of several runs of >= 2^17 rows), 1 false
                                   (none), 2 true (every side of several runs) */
};

/* Fills *cfg with the defaults and sets cfg->size. Cannot fail. Thread-safe (touches
 * only *cfg). Added in 0.1. */
SL_API void sl_engine_config_init(struct sl_engine_config *cfg);

/* Creates an engine: starts its worker threads, finds the GPUs and sets the budgets.
 * cfg may be NULL for the defaults; it is read during the call only (the strings it
 * points to are copied). On success *out is the engine and SL_OK is returned. On
 * failure a negative code is returned and *out is still an engine object whose
 * sl_engine_errmsg tells why (close it with sl_engine_close), except where the config
 * itself is refused or memory ran out: then *out is NULL and sl_last_errmsg tells why.
 * Errors: SL_EINVAL (a config size of 0, a negative count or limit), SL_EABI (a config
 * larger than this library's: built against newer headers), SL_ENOMEM (also when the
 * worker threads cannot start), SL_EDEVICE (a GPU could not be set up). The caller
 * owns the engine and frees it with sl_engine_close. Thread-safe. Added in 0.1;
 * smaller (older) configs accepted since 0.3. */
SL_API int sl_engine_open(sl_engine_t **out, const struct sl_engine_config *cfg);
/* Cancels the engine's running queries (their error: SL_ECANCELED, "the engine was
 * closed"), waits for their tasks to stop, stops the workers and frees the engine. NULL
 * is allowed. Queries not yet destroyed are detached: sl_query_destroy still frees them,
 * every other call on them returns SL_ESTATE (results included: read them before).
 * Threads blocked in sl_query_wait return. Call it once; no other thread may create,
 * start or destroy a query of the engine meanwhile; the engine must not be used
 * afterwards. Added in 0.1; cancels and detaches since the release after 0.3 (it waited
 * forever on a query started and never waited for). */
SL_API void sl_engine_close(sl_engine_t *eng);
/* The message of the last error on this engine; "" if none (also for NULL). Owned by
 * the engine, valid until the next failing call on it or its close. Thread-safe, but
 * a failure on another thread may replace the text. Added in 0.1. */
SL_API const char *sl_engine_errmsg(const sl_engine_t *eng);

/* What the engine sees. A growable struct (see the top of this header): set `size`
 * before the call (SL_DEVICE_INFO_INIT). `size` added in 0.3. */
struct sl_device_info {
    uint32_t size;              /* sizeof(struct sl_device_info), set by the caller */
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
    /* members added after 0.3 go below this line */
};
#define SL_DEVICE_INFO_INIT SL_SIZED_INIT(struct sl_device_info)

/* Number of devices: 1 (the CPU) + the usable or unusable GPUs found. Cannot fail.
 * Thread-safe. Added in 0.1. */
SL_API int sl_engine_device_count(const sl_engine_t *eng);
/* Fills the first info->size bytes of *info for device i (0 is the CPU, 1 + k the k-th
 * GPU found); the caller owns *info. Errors: SL_EINVAL (i out of range, NULL info, or
 * info->size 0; message in sl_last_errmsg). Thread-safe; the link bandwidths may change
 * under a concurrent sl_engine_measure_links. Added in 0.1; growable since 0.3. */
SL_API int sl_engine_device_info(const sl_engine_t *eng, int i, struct sl_device_info *info);
/* Measures the host<->device bandwidth of every GPU the engine uses (pinned copies of
 * 64 MiB, about 50 ms per GPU) and keeps it in the device infos (h2d_gbps, d2h_gbps)
 * and for placement. Nothing to do, and SL_OK, without GPUs. Errors: SL_EDEVICE,
 * SL_ENOMEM (message in sl_engine_errmsg). Call it while no query runs. Added in 0.1. */
SL_API int sl_engine_measure_links(sl_engine_t *eng);
/* Measures the memory bandwidth of GPU device i (an index as for sl_engine_device_info):
 * a device-to-device copy of `bytes` (memory from the engine's pool), median of 5 timed
 * copies after a warm-up; *gbps = bytes read + written per second / 1e9, the floor of
 * GPU-resident benchmarks (docs/BENCH_PROTOCOL.md). Needs 2 * bytes of free device
 * memory. SL_EINVAL if i is not a GPU, SL_ENODEV if the engine does not use it or sluice
 * was built without CUDA; *gbps is 0 on failure. Not while queries run on that GPU
 * (they would share its bandwidth). Added in 0.3. */
SL_API int sl_engine_measure_device_copy(sl_engine_t *eng, int i, int64_t bytes, double *gbps);
/* The fp32 FMA peak of GPU device i in GFLOP/s, from its attributes: SMs x peak clock x
 * fp32 lanes per SM x 2 flops. Same errors as sl_engine_measure_device_copy. Thread-safe.
 * Added in 0.3. */
SL_API int sl_engine_device_fp32_peak(const sl_engine_t *eng, int i, double *gflops);
/* Whether GPU device i can read and write GPU device j's memory directly (peer access,
 * which the multi-device exchange enables and uses for its copies): *access = 1 or 0;
 * 1 for i == j. SL_EINVAL if i or j is not a GPU or access is NULL. Thread-safe. Added
 * in 0.4 (docs/MULTI_GPU.md). */
SL_API int sl_engine_device_peer(const sl_engine_t *eng, int i, int j, int *access);
/* Number of CPU worker threads. Cannot fail. Thread-safe. Added in 0.1. */
SL_API int sl_engine_num_threads(const sl_engine_t *eng);

/* Memory accounting of the engine (bytes). A growable struct (see the top of this
 * header): set `size` before the call (SL_MEM_STATS_INIT). `size` added in 0.3. */
struct sl_mem_stats {
    uint32_t size;                           /* sizeof(struct sl_mem_stats), by the caller */
    int64_t host_in_use, host_peak, host_limit;
    int64_t gpu_in_use, gpu_peak, gpu_limit; /* summed over GPUs */
    int64_t host_allocs_live;                /* allocations not yet freed */
    /* members added after 0.3 go below this line */
};
#define SL_MEM_STATS_INIT SL_SIZED_INIT(struct sl_mem_stats)
/* Fills the first st->size bytes of *st with the engine's memory accounting now; the
 * caller owns *st. Errors: SL_EINVAL (NULL argument or st->size 0). Thread-safe: the
 * counters are read one by one while queries run, so they need not add up exactly.
 * Added in 0.1; returns int and is growable since 0.3 (it returned void). */
SL_API int sl_engine_mem_stats(const sl_engine_t *eng, struct sl_mem_stats *st);

/* Sets host_peak and gpu_peak of sl_engine_mem_stats to the bytes in use now, so that
 * the next query's peak can be read after it (with no other query running: the peaks
 * are the engine's, not one query's). Errors: SL_EINVAL (NULL). Thread-safe. Since 0.3. */
SL_API int sl_engine_reset_peaks(sl_engine_t *eng);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_ENGINE_H */
