/* Engines: configuration, device discovery, workers, budgets and logging. */
#include <numa.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cuda/cuda_int.h"
#include "engine_int.h"
#include "engine_option_int.h"
#include "gpu_int.h"
#include "ranks.h"

/* Engines open in the process: the last one to close trims the allocator's cache. */
static _Atomic int open_engines;

void sl_engine_config_init(struct sl_engine_config *cfg)
{
    if (!cfg)
        return;
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
    cfg->n_gpus = -1;
    cfg->pin_threads = 1;
    cfg->placement = SL_PLACE_AUTO;
    cfg->agg_gpu_part_threshold = (int64_t)1 << 16;
    cfg->debug_kmeans_method = -1;
    cfg->ranks = 1;
}

void sl__engine_log(sl_engine_t *eng, int level, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (eng && eng->cfg.log)
        eng->cfg.log(eng->cfg.log_user, level, msg);
    else
        fprintf(stderr, "sluice: %s\n", msg);
}

static void cpu_model_name(char *out, size_t len)
{
    snprintf(out, len, "CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ')
                    c++;
                c[strcspn(c, "\n")] = 0;
                snprintf(out, len, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

static int64_t host_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return (pages > 0 && page > 0) ? (int64_t)pages * page : 0;
}

/* Reads the GPUs once per process: the driver answers the same for every engine, and
 * an unusable GPU is reported once, not per engine. */
static int probe_gpus(sl_engine_t *eng)
{
    static _Atomic int warned;
    int n = sl__cuda_device_count();
    eng->devices = sl__calloc((size_t)(1 + n), sizeof *eng->devices);
    /* Logical devices may outnumber the GPUs (split_gpu). */
    size_t slots = (size_t)(n > eng->cfg.n_gpus ? n : eng->cfg.n_gpus);
    eng->gpu_ordinals = sl__calloc(slots ? slots : 1, sizeof *eng->gpu_ordinals);
    if (!eng->devices || !eng->gpu_ordinals)
        return SL_ENOMEM;
    eng->n_devices = 1 + n;
    for (int i = 0; i < n; i++) {
        struct sl_device_info *d = &eng->devices[1 + i];
        memset(d, 0, sizeof *d);
        d->kind = SL_DEVICE_CUDA;
        d->ordinal = i;
        d->numa_node = -1;
        if (sl__cuda_probe(i, d) != SL_OK && d->reason[0] == 0)
            snprintf(d->reason, sizeof d->reason, "probe failed");
        if (!d->usable && !atomic_exchange(&warned, 1))
            sl__engine_log(eng, 1, "GPU %d (%s) is not used: %s; running on CPU", i, d->name,
                           d->reason);
    }
    return SL_OK;
}

static void choose_gpus(sl_engine_t *eng)
{
    int want = eng->cfg.n_gpus;
    eng->n_gpus = 0;
    for (int i = 1; i < eng->n_devices; i++) {
        if (!eng->devices[i].usable)
            continue;
        if (want >= 0 && eng->n_gpus >= want)
            break;
        eng->gpu_ordinals[eng->n_gpus++] = eng->devices[i].ordinal;
    }
    /* split_gpu: `gpus` logical devices, round robin over the usable GPUs. */
    int physical = eng->n_gpus;
    if (!eng->cfg.split_gpu || physical == 0 || want <= physical)
        return;
    for (int i = physical; i < want; i++)
        eng->gpu_ordinals[i] = eng->gpu_ordinals[i % physical];
    eng->n_gpus = want;
}

/* Logical devices sharing GPU `ordinal` (1 without split_gpu). */
static int gpu_share(const sl_engine_t *eng, int ordinal)
{
    int share = 0;
    for (int i = 0; i < eng->n_gpus; i++)
        share += eng->gpu_ordinals[i] == ordinal;
    return share;
}

/* Keeps a copy of a config string in the engine, so the caller's may go after open. */
static int own_string(const char **field)
{
    if (!*field)
        return SL_OK;
    size_t n = strlen(*field) + 1;
    char *copy = sl__malloc(n);
    if (!copy) {
        *field = NULL;
        return SL_ENOMEM;
    }
    memcpy(copy, *field, n);
    *field = copy;
    return SL_OK;
}

static void free_string(const char *s)
{
    sl__free((void *)s, 0);
}

int sl_engine_open(sl_engine_t **out, const struct sl_engine_config *cfg_in)
{
    SL__CHECK_ARGS(out);
    *out = NULL;
    struct sl_engine_config defaults;
    sl_engine_config_init(&defaults);
    struct sl_engine_config full;
    const struct sl_engine_config *cfg = &defaults;
    if (cfg_in) {
        int rc = sl__in_read(&full, &defaults, cfg_in, sizeof full, "sl_engine_open: config");
        if (rc < 0)
            return rc;
        cfg = &full;
    }
    sl_engine_t *eng = sl__calloc(1, sizeof *eng);
    struct sl__host_budget *hb = eng ? sl__calloc(1, sizeof *hb) : NULL;
    if (!hb) {
        sl__free(eng, sizeof *eng);
        return sl__set_last_error(SL_ENOMEM, "out of memory creating an engine");
    }
    atomic_init(&hb->refs, 1);
    eng->hb = hb;
    *out = eng;
    atomic_fetch_add(&open_engines, 1);
    eng->cfg = *cfg;
    pthread_mutex_init(&eng->mu, NULL);
    pthread_cond_init(&eng->cv, NULL);
    pthread_mutex_init(&eng->cost_mu, NULL);
    int rc = own_string(&eng->cfg.cost_cache_path);
    if (own_string(&eng->cfg.trace_path) != SL_OK || rc != SL_OK)
        return sl__errslot_set(&eng->err, SL_ENOMEM, "out of memory creating an engine");
    if (cfg->cost_cache_path)
        sl__cost_load(eng, cfg->cost_cache_path);

    rc = sl__options_check(cfg);
    if (rc < 0)
        return sl__errslot_set(&eng->err, rc, "engine config: %s", sl_last_errmsg());
    if ((rc = sl__ranks_open(eng, &eng->ranks)) < 0)
        return sl__errslot_set(&eng->err, rc, "%s", sl_last_errmsg());
    eng->n_threads = eng->cfg.n_threads ? eng->cfg.n_threads : sl__host_threads(0);
    sl__options_resolve_query(&eng->cfg);
    int64_t ram = host_memory_bytes();
    eng->host_limit = cfg->host_mem_limit ? cfg->host_mem_limit : ram / 10 * 8;

    if (probe_gpus(eng) != SL_OK)
        return sl__errslot_set(&eng->err, SL_ENOMEM, "out of memory probing devices");
    struct sl_device_info *c = &eng->devices[0];
    c->kind = SL_DEVICE_CPU;
    c->ordinal = 0;
    cpu_model_name(c->name, sizeof c->name);
    c->memory_bytes = ram;
    c->n_cores = eng->n_threads;
    c->numa_node = numa_available() >= 0 ? numa_num_configured_nodes() : 1;
    c->usable = 1;
    choose_gpus(eng);
    if (cfg->placement == SL_PLACE_GPU && eng->n_gpus == 0)
        sl__engine_log(eng, 1, "placement gpu was asked for but no usable GPU is present; "
                       "tasks with no CPU implementation will fail");

    if (eng->n_gpus > 0) {
        eng->gpus = sl__calloc((size_t)eng->n_gpus, sizeof *eng->gpus);
        if (!eng->gpus)
            return sl__errslot_set(&eng->err, SL_ENOMEM, "out of memory");
        for (int i = 0; i < eng->n_gpus; i++) {
            rc = sl__gpu_create(&eng->gpus[i], eng, eng->gpu_ordinals[i], cfg->gpu_mem_limit,
                                gpu_share(eng, eng->gpu_ordinals[i]), cfg->gpu_depth);
            if (rc < 0)
                return sl__errslot_set(&eng->err, rc, "cannot set up GPU %d: %s",
                                       eng->gpu_ordinals[i], sl_last_errmsg());
        }
    }
    /* sl_engine_option_get reads the values in use */
    eng->cfg.n_threads = eng->n_threads;
    eng->cfg.n_gpus = eng->n_gpus;
    eng->cfg.host_mem_limit = eng->host_limit;
    eng->cfg.gpu_depth = cfg->gpu_depth ? cfg->gpu_depth : 4;
    int gpu_numa[64];
    for (int i = 0; i < eng->n_gpus && i < 64; i++) {
        gpu_numa[i] = -1;
        for (int d = 1; d < eng->n_devices; d++)
            if (eng->devices[d].ordinal == eng->gpu_ordinals[i])
                gpu_numa[i] = eng->devices[d].numa_node;
    }
    struct sl__sched_config sc = {
        .n_cpu = eng->n_threads,
        .n_gpu = eng->n_gpus,
        .gpu_ordinals = eng->gpu_ordinals,
        .pin = cfg->pin_threads != 0,
        .pin_gpu = cfg->pin_gpu_workers != 0 && eng->n_gpus <= 64,
        .gpu_numa = gpu_numa,
        .gpu_init = sl__gpu_worker_init,
        .gpu_fini = sl__gpu_worker_fini,
        .gpu_poll = sl__gpu_worker_poll,
        .gpu_user = eng,
    };
    rc = sl__sched_create(&eng->sched, &sc);
    if (rc != SL_OK)
        return sl__errslot_set(&eng->err, rc, "cannot start workers: %s", sl_last_errmsg());
    return SL_OK;
}

void sl_engine_close(sl_engine_t *eng)
{
    if (!eng)
        return;
    sl__engine_stop_queries(eng);
    sl__sched_destroy(eng->sched);
    sl__ranks_close(eng->ranks);
    if (eng->cfg.cost_cache_path && eng->n_costs > 0 &&
        sl__cost_save(eng, eng->cfg.cost_cache_path) != SL_OK)
        sl__engine_log(eng, 1, "%s", sl_last_errmsg());
    pthread_mutex_destroy(&eng->cost_mu);
    free_string(eng->cfg.cost_cache_path);
    free_string(eng->cfg.trace_path);
    for (int i = 0; eng->gpus && i < eng->n_gpus; i++)
        sl__gpu_destroy(eng->gpus[i]);
    sl__free(eng->gpus, 0);
    sl__free(eng->devices, 0);
    sl__free(eng->gpu_ordinals, 0);
    pthread_mutex_destroy(&eng->mu);
    pthread_cond_destroy(&eng->cv);
    sl__host_budget_release(eng->hb, 0); /* results still charged keep it */
    sl__free(eng, sizeof *eng);
    if (atomic_fetch_sub(&open_engines, 1) == 1)
        sl__mem_trim();
}

const char *sl_engine_errmsg(const sl_engine_t *eng)
{
    return eng ? eng->err.msg : sl_last_errmsg();
}

int sl_engine_device_count(const sl_engine_t *eng)
{
    if (!eng)
        return 0;
    return eng->n_devices;
}

int sl_engine_device_info(const sl_engine_t *eng, int i, struct sl_device_info *info)
{
    SL__CHECK_ARGS(eng && info);
    if (i < 0 || i >= eng->n_devices)
        return sl__set_last_error(SL_EINVAL, "device index %d out of range (%d devices)", i,
                                  eng->n_devices);
    return sl__out_fill(info, &eng->devices[i], sizeof *info, "sl_engine_device_info");
}

int sl_engine_measure_links(sl_engine_t *eng)
{
    SL__CHECK_ARGS(eng);
    for (int i = 0; i < eng->n_gpus; i++) {
        double h2d = 0, d2h = 0;
        int rc = sl__gpu_measure(eng->gpus[i], &h2d, &d2h);
        if (rc < 0)
            return sl__errslot_set(&eng->err, rc, "measuring GPU %d: %s", eng->gpu_ordinals[i],
                                   sl_last_errmsg());
        for (int d = 1; d < eng->n_devices; d++) {
            if (eng->devices[d].ordinal == eng->gpu_ordinals[i]) {
                eng->devices[d].h2d_gbps = h2d;
                eng->devices[d].d2h_gbps = d2h;
            }
        }
        if (i == 0)
            eng->link_gbps = h2d;
    }
    return SL_OK;
}

/* The engine's GPU behind device index i in *out; SL_EINVAL or SL_ENODEV otherwise. */
static int gpu_of_device(const sl_engine_t *eng, int i, struct sl__gpu **out)
{
    if (i < 1 || i >= eng->n_devices)
        return sl__set_last_error(SL_EINVAL, "device %d is not a GPU of this engine "
                                  "(%d devices)", i, eng->n_devices);
    for (int g = 0; g < eng->n_gpus; g++) {
        if (eng->gpu_ordinals[g] == eng->devices[i].ordinal) {
            *out = eng->gpus[g];
            return SL_OK;
        }
    }
    return sl__set_last_error(SL_ENODEV, "GPU %d is not used by this engine",
                              eng->devices[i].ordinal);
}

int sl_engine_measure_device_copy(sl_engine_t *eng, int i, int64_t bytes, double *gbps)
{
    SL__CHECK_ARGS(eng && gbps);
    *gbps = 0;
    if (bytes < 1)
        return sl__set_last_error(SL_EINVAL, "sl_engine_measure_device_copy: bytes < 1");
    struct sl__gpu *g = NULL;
    int rc = gpu_of_device(eng, i, &g);
    if (rc == SL_OK)
        rc = sl__gpu_measure_copy(g, bytes, gbps);
    return rc < 0 ? sl__errslot_set(&eng->err, rc, "measuring device %d: %s", i,
                                    sl_last_errmsg())
                  : SL_OK;
}

int sl_engine_device_fp32_peak(const sl_engine_t *eng, int i, double *gflops)
{
    SL__CHECK_ARGS(eng && gflops);
    *gflops = 0;
    struct sl__gpu *g = NULL;
    int rc = gpu_of_device(eng, i, &g);
    return rc == SL_OK ? sl__gpu_fp32_peak(g, gflops) : rc;
}

int sl_engine_device_peer(const sl_engine_t *eng, int i, int j, int *access)
{
    SL__CHECK_ARGS(eng && access);
    *access = 0;
    if (i < 1 || i >= eng->n_devices || j < 1 || j >= eng->n_devices)
        return sl__set_last_error(SL_EINVAL, "devices %d and %d: not both GPUs (%d devices)",
                                  i, j, eng->n_devices);
    if (i == j) {
        *access = 1;
        return SL_OK;
    }
    return sl__cuda_peer_access(eng->devices[i].ordinal, eng->devices[j].ordinal, access);
}

int sl_engine_num_threads(const sl_engine_t *eng)
{
    if (!eng)
        return 0;
    return eng->n_threads;
}

int sl_engine_mem_stats(const sl_engine_t *eng, struct sl_mem_stats *out)
{
    if (!eng)
        return sl__set_last_error(SL_EINVAL, "sl_engine_mem_stats: NULL engine");
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    struct sl_mem_stats all = {.size = sizeof all}, *st = &all;
    st->host_in_use = atomic_load(&eng->hb->in_use);
    st->host_peak = atomic_load(&((sl_engine_t *)eng)->host_peak);
    st->host_limit = eng->host_limit;
    st->host_allocs_live = c.live_allocs;
    for (int i = 0; eng->gpus && i < eng->n_gpus; i++) {
        int64_t in_use, peak, limit;
        sl__gpu_mem(eng->gpus[i], &in_use, &peak, &limit);
        st->gpu_in_use += in_use;
        st->gpu_peak += peak;
        st->gpu_limit += limit;
    }
    return sl__out_fill(out, st, sizeof *st, "sl_engine_mem_stats");
}

int sl_engine_reset_peaks(sl_engine_t *eng)
{
    if (!eng)
        return sl__set_last_error(SL_EINVAL, "sl_engine_reset_peaks: NULL engine");
    atomic_store(&eng->host_peak, atomic_load(&eng->hb->in_use));
    for (int i = 0; eng->gpus && i < eng->n_gpus; i++)
        sl__gpu_mem_reset_peak(eng->gpus[i]);
    return SL_OK;
}

int sl__engine_gpu_index(const sl_engine_t *eng, int ordinal)
{
    for (int i = 0; eng->gpus && i < eng->n_gpus; i++)
        if (eng->gpu_ordinals[i] == ordinal && eng->gpus[i])
            return i;
    return -1;
}

int sl__engine_charge_host(sl_engine_t *eng, int64_t bytes)
{
    int64_t now = atomic_fetch_add(&eng->hb->in_use, bytes) + bytes;
    if (now > eng->host_limit) {
        atomic_fetch_sub(&eng->hb->in_use, bytes);
        return SL_EBUDGET;
    }
    int64_t peak = atomic_load(&eng->host_peak);
    while (now > peak && !atomic_compare_exchange_weak(&eng->host_peak, &peak, now)) {
    }
    return SL_OK;
}

int sl__engine_charge_buf(sl_engine_t *eng, struct sl__buf *b)
{
    if (sl__engine_charge_host(eng, b->bytes) != SL_OK)
        return SL_EBUDGET;
    b->charged = eng->hb;
    atomic_fetch_add_explicit(&b->charged->refs, 1, memory_order_relaxed);
    return SL_OK;
}

void sl__engine_release_host(sl_engine_t *eng, int64_t bytes)
{
    atomic_fetch_sub(&eng->hb->in_use, bytes);
}

void sl__host_budget_release(struct sl__host_budget *hb, int64_t bytes)
{
    if (!hb)
        return;
    atomic_fetch_sub(&hb->in_use, bytes);
    if (atomic_fetch_sub_explicit(&hb->refs, 1, memory_order_acq_rel) == 1)
        sl__free(hb, sizeof *hb);
}

void sl__engine_query_started(sl_engine_t *eng)
{
    pthread_mutex_lock(&eng->mu);
    eng->running++;
    pthread_mutex_unlock(&eng->mu);
}

void sl__engine_query_finished(sl_engine_t *eng)
{
    pthread_mutex_lock(&eng->mu);
    eng->running--;
    pthread_cond_broadcast(&eng->cv);
    pthread_mutex_unlock(&eng->mu);
}
