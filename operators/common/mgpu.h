/* Multi-device join and sort over the engine's devices (docs/MULTI_GPU.md; issue 20,
 * paper-002 MG-Join and paper-000's multi-GPU sort). CUDA builds only.
 *
 * A table is spread over the devices: share d has n[d] rows of int64 keys and one 8-byte
 * payload, in device d's memory or (on_host) in host memory, uploaded first.
 *  sl__mg_hash_join: every device hash-partitions its shares of R (build) and S (probe)
 *    into many partitions, contiguous partition ranges go to devices balanced by their
 *    rows (mgpu_plan.h), the exchange moves them in packets, and each device joins what
 *    it received with the GPU no-partitioning join (inner, semi, anti, left as
 *    join_types.h). Output per device: keys, R payload, S payload, R position
 *    (SL_K_NULL_POS: a LEFT row without partner, R payload 0).
 *  sl__mg_sort: every device sorts its share, splitters from samples cut the key range
 *    into one range per device, the exchange moves each range to its device, and each
 *    device sorts what it received (stable: the result, device 0 first, is the stable
 *    sort of the table in share order). Output: keys and payload (in s_vals). */
#ifndef SL_OPERATORS_MGPU_H
#define SL_OPERATORS_MGPU_H

#include <cuda_runtime_api.h>

#include "common/mgpu_plan.h"
#include "gpu_ext.h"

/* MG_CUDA(rc, expr): makes the CUDA call and, when it fails, sets rc to SL_EDEVICE with
 * the call, the error and the place in the thread's last error. */
int sl__mg_cuda_fail(cudaError_t e, const char *what, const char *file, int line);
#define MG_CUDA(rc, expr)                                                                  \
    do {                                                                                   \
        cudaError_t mg_e_ = (expr);                                                        \
        (rc) = mg_e_ == cudaSuccess ? SL_OK : sl__mg_cuda_fail(mg_e_, #expr, __FILE__,      \
                                                               __LINE__);                  \
    } while (0)

struct sl__mg_table {
    int on_host;
    int64_t n[SL__MG_MAX_DEV];
    const int64_t *keys[SL__MG_MAX_DEV];
    const uint64_t *vals[SL__MG_MAX_DEV];
};

struct sl__mg_result {
    int64_t n[SL__MG_MAX_DEV];
    int64_t cap[SL__MG_MAX_DEV]; /* rows allocated */
    int64_t *keys[SL__MG_MAX_DEV];
    uint64_t *r_vals[SL__MG_MAX_DEV];
    uint64_t *s_vals[SL__MG_MAX_DEV];
    uint32_t *r_pos[SL__MG_MAX_DEV];
    struct sl__mg_cost cost;   /* the exchange's estimate (rows of key + payload) */
    sl_xchg_stats xchg;        /* what it measured */
    char explain[2048];        /* sl__mg_cost_text of the estimate */
};

/* Tuning of the exchange (0: defaults). */
struct sl__mg_opts {
    size_t packet_bytes;       /* 0 = 4 MiB */
    int credits;               /* 0 = 4 per receiver */
    int part_bits;             /* join: 2^bits hash partitions; 0 = 10 */
    double link_gbps;          /* for the estimate; 0 = 200 */
    int packets;               /* 1: through the engine's exchange transport in packets
                                * (receive slots, credits), as between processes; 0: each
                                * sender copies straight into the receivers' arrays where
                                * the devices share a process (mgpu_direct_cuda.c) */
    /* Join, direct exchange: rows each device partitions at a time (a chunk), whose
     * copies leave on its copy stream while it partitions the next; 0 = 2^20; -1 = its
     * whole share at once, every device partitioned before anything moves (as before
     * the pipelined exchange: A/B runs). */
    int64_t chunk_rows;
    int chunks_in_flight;      /* partitioned chunks a device holds at once: it partitions
                                * chunk c + k only once chunk c's copies are done (flow
                                * control); 0 = 2 */
    int copies;                /* 1: the pipelined exchange copies each range with its own
                                * cudaMemcpyAsync, as before sl_k_copy_ranges (A/B tests;
                                * sl__mg_move's copies for the others) */
};

int sl__mg_hash_join(struct sl__mdev *m, const struct sl__mg_table *r,
                     const struct sl__mg_table *s, int kind, const struct sl__mg_opts *o,
                     struct sl__mg_result *out);
int sl__mg_sort(struct sl__mdev *m, const struct sl__mg_table *t, const struct sl__mg_opts *o,
                struct sl__mg_result *out);
/* n_t (1 or 2) tables sorted as sl__mg_sort does, with one set of splitters from the
 * samples of all of them: equal keys of every table land on one device (out[i] for
 * table i). */
int sl__mg_sort_tables(struct sl__mdev *m, const struct sl__mg_table *const *t, int n_t,
                       const struct sl__mg_opts *o, struct sl__mg_result *out);
/* Multi-device sort-merge join (paper-000): R and S through sl__mg_sort_tables (keys
 * ordered as unsigned 64-bit values, which the merge compares), then each device
 * merge-joins its key range (sluice_k/join_smj.h). Output as sl__mg_hash_join's, with
 * r_pos of a LEFT row without partner SL_K_NULL_POS and its R payload 0. */
int sl__mg_sort_merge_join(struct sl__mdev *m, const struct sl__mg_table *r,
                           const struct sl__mg_table *s, int kind, const struct sl__mg_opts *o,
                           struct sl__mg_result *out);
void sl__mg_result_free(struct sl__mdev *m, struct sl__mg_result *r);
/* Allocates cap rows of each output column of device d (free with the result). */
int sl__mg_result_alloc(struct sl__mdev *m, int d, int64_t cap, struct sl__mg_result *r);

/* ---- shared by the two (mgpu_xchg_cuda.c) ---- */

/* Columns moved by one exchange: sender s's rows [from[s*n+d], + count[s*n+d]) of
 * column c (src[c][s], width[c] bytes a row, on device s) land in receiver d's dst[c][d]
 * at row base[s*n+d]. Channels are the columns, sent one after another by all senders. */
#define SL__MG_MAX_COLS 4
struct sl__mg_move {
    int n_cols;
    int width[SL__MG_MAX_COLS];
    const void *src[SL__MG_MAX_COLS][SL__MG_MAX_DEV];
    void *dst[SL__MG_MAX_COLS][SL__MG_MAX_DEV];
    const int64_t *from, *count, *base;
    int copies;   /* 1: one copy per range (cudaMemcpyAsync), as before sl_k_copy_ranges
                   * moved a sender's ranges between devices of one GPU in one kernel
                   * (A/B tests) */
};
/* Runs the exchange and returns when every row has landed (stats filled): the direct
 * copies below, or with o->packets one sender and one receiver thread per device over
 * the engine's exchange transport. */
int sl__mg_exchange(struct sl__mdev *m, const struct sl__mg_move *mv,
                    const struct sl__mg_opts *o, sl_xchg_stats *stats);

/* The direct exchange (mgpu_direct_cuda.c), enqueued without a host wait: each sender's
 * stream waits until every receiver's arrays exist (events recorded on the receivers'
 * streams after their allocation), copies each of its ranges straight to its place in
 * the receiver's array (one copy per sender, receiver and column: a device-to-device
 * copy between logical devices of one GPU, a peer copy between GPUs), and every
 * receiver's stream waits for every sender's copies. Work the caller enqueues next on a
 * receiver's stream (the local join or sort) thus starts when its own rows have landed,
 * while other devices still copy. No receiver can overflow: its arrays hold exactly the
 * rows planned for it and a sender writes only its planned range. dst arrays must be
 * allocated on the receivers' streams (sl__mdev_alloc) before the call, and src ready on
 * (or before) the senders' streams. */
struct sl__mg_xfer {
    int n;
    void *ready[SL__MG_MAX_DEV];  /* cudaEvent_t: receiver d's arrays allocated */
    void *t0[SL__MG_MAX_DEV];     /* cudaEvent_t: sender s starts copying, and is done */
    void *t1[SL__MG_MAX_DEV];
    uint64_t packets, bytes;
};
int sl__mg_exchange_start(struct sl__mdev *m, const struct sl__mg_move *mv,
                          struct sl__mg_xfer *x);
/* Waits for the senders' copies and adds to stats: packets (copies), bytes (a device's
 * copy into its own array too), and seconds (between devices of one GPU from the first
 * sender's start to the last one's end, across GPUs the longest sender's copy time on
 * its stream). Frees the events; safe after a failed start and on a zeroed x. */
int sl__mg_exchange_finish(struct sl__mdev *m, struct sl__mg_xfer *x, sl_xchg_stats *stats);
/* For exchanges that enqueue their own copies (the join's pipelined one): a CUDA event
 * (cudaEvent_t; timing ones for t0/t1) into *e, NULL on failure; and one copy of `bytes`
 * from device s's src to device d's dst on `stream` (cudaStream_t) of device s, counted
 * in x (a device-to-device copy between logical devices of one GPU, a peer copy between
 * GPUs). */
int sl__mg_event_new(void **e, bool timing);
int sl__mg_copy(struct sl__mdev *m, int s, int d, void *dst, const void *src, size_t bytes,
                void *stream, struct sl__mg_xfer *x);
/* Sender s's pieces r[0..k) (piece i to device to[i]) on `stream` of device s, counted in
 * x: in one kernel (sl_k_copy_ranges) when every receiver is a logical device of s's GPU
 * and `each` is 0, else one sl__mg_copy each, in order. */
struct sl_k_copy_range;
int sl__mg_copy_all(struct sl__mdev *m, int s, const int *to,
                    const struct sl_k_copy_range *r, int k, int each, void *stream,
                    struct sl__mg_xfer *x);
/* SL_EBUDGET (with the device and the sizes in the message) unless device d has room
 * for `bytes` more plus SL__MG_ROOM_SLACK (sort and scan temporaries) under its budget:
 * checked before anything moves, so a spread that cannot fit ends cleanly, never with an
 * allocation failing between two packets. */
#define SL__MG_ROOM_SLACK ((int64_t)32 << 20)
int sl__mg_check_room(struct sl__mdev *m, int d, int64_t bytes);
/* Waits for every device's stream; the first error. */
int sl__mg_sync_all(struct sl__mdev *m);
/* Options with the defaults filled in. */
struct sl__mg_opts sl__mg_opts_resolve(const struct sl__mg_opts *o);

#endif
