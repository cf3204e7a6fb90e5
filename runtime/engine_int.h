/* Internal structure of engines. */
#ifndef SLUICE_RUNTIME_ENGINE_INT_H
#define SLUICE_RUNTIME_ENGINE_INT_H

#include <pthread.h>

#include "internal.h"
#include "sched_int.h"

#define SL__MAX_COSTS 256

struct sl__cost_entry {
    char name[64];
    enum sl_device_kind kind;
    double ns_per_row;
    bool trusted; /* two full samples came after the warm-up (cost.c) */
    bool candidate; /* one came: ns_per_row is it, not yet trusted */
};

struct sl_engine {
    struct sl_engine_config cfg;     /* options in use; query options change under mu */
    struct sl__errslot err;
    struct sl__sched *sched;
    int n_threads;
    int n_devices;                   /* 1 (CPU) + GPUs found */
    struct sl_device_info *devices;  /* [0] = CPU */
    int n_gpus;                      /* GPUs the engine uses */
    int *gpu_ordinals;
    struct sl__gpu **gpus;           /* one context per GPU used */

    /* host budget for query state */
    int64_t host_limit;
    struct sl__host_budget *hb;      /* bytes in use (outlives the engine, internal.h) */
    _Atomic int64_t host_peak;

    pthread_mutex_t mu;              /* running, and the query options of cfg */
    pthread_cond_t cv;
    int running;                     /* queries started whose task graph has not finished */
    struct sl_query *queries;        /* queries not yet destroyed (query.c's registry lock) */
    bool closing;                    /* sl_engine_close has begun: no new queries */

    /* cost history for placement (cost.c) */
    pthread_mutex_t cost_mu;
    int n_costs;
    struct sl__cost_entry costs[SL__MAX_COSTS];
    double link_gbps;                /* measured host->device bandwidth, 0 = unknown */
    struct sl__ranks *ranks;         /* this process's place among ranks (ranks.h) */
};

double sl__cost_lookup(sl_engine_t *eng, const char *name, enum sl_device_kind k);
void sl__cost_record(sl_engine_t *eng, const char *name, enum sl_device_kind k, int64_t rows,
                     int64_t ns);
double sl__cost_task_ns(enum sl_device_kind k);
void sl__cost_load(sl_engine_t *eng, const char *path);
int sl__cost_save(sl_engine_t *eng, const char *path);

/* The index in eng->gpus of the first GPU context on device `ordinal` (logical devices
 * of one GPU share it), or -1 when the engine uses no GPU there. */
int sl__engine_gpu_index(const sl_engine_t *eng, int ordinal);
/* Charges `bytes` against the engine's host budget; SL_EBUDGET (nothing charged) if it
 * would exceed the limit. */
int sl__engine_charge_host(sl_engine_t *eng, int64_t bytes);
/* The same for host buffer b's bytes, which b then gives back on its last unref. */
int sl__engine_charge_buf(sl_engine_t *eng, struct sl__buf *b);
void sl__engine_release_host(sl_engine_t *eng, int64_t bytes);
void sl__engine_query_started(sl_engine_t *eng);
void sl__engine_query_finished(sl_engine_t *eng);
/* sl_engine_close's first step (query.c): cancels the engine's running queries, waits
 * for their tasks, drains the unstarted ones and detaches them all from the engine, so
 * that each later call on them returns SL_ESTATE and sl_query_destroy frees what is left. */
void sl__engine_stop_queries(sl_engine_t *eng);

#endif /* SLUICE_RUNTIME_ENGINE_INT_H */
