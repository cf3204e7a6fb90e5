/* The engine's cost history: measured ns per row of each pipeline (its operators' names)
 * on each device kind, an exponential average updated after every task, optionally
 * loaded from and saved to the engine's cost cache file (text lines:
 * "<operator> <cpu|cuda> <ns_per_row>").
 *
 * A task costs a fixed part (launches, set-up) plus a part per row; only the second is
 * kept, so a sample first loses the device's fixed cost per task (sl__cost_task_ns),
 * and placement adds it back per task. Three rules keep one bad sample from moving a
 * pipeline to a device ten times slower for good (issue 23: `bench mixed` auto 3.2x
 * the GPU's time, H100 2026-11-26; once a pipeline left the GPU it was never measured
 * there again):
 *  - the first sample of a pipeline on a device is a warm-up (CUDA modules load on a
 *    kernel's first launch, pools and pages are first touched): it is kept but not
 *    trusted; the next two of at least 2^16 rows replace it, and the smaller of them is
 *    trusted (one slow task, a hiccup of the host or a kernel's first launch, is not
 *    enough to judge a device by; a pipeline whose tasks are all smaller keeps its cost
 *    functions' estimate: the small join of `bench mixed` shares its operators' names
 *    with the large one, and a 1,024-row task's 10 ns a row on the GPU would have sent
 *    the 4M-row join to the CPU);
 *  - a sample weighs in proportion to its rows up to 2^16 rows, so a small input that
 *    shares the pipeline's operators (a 16,384-row join beside a 4M-row one) barely
 *    moves the average;
 *  - a sample counts at most 4x the current average. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine_int.h"

#define ALPHA 0.25
#define FULL_WEIGHT_ROWS 65536.0
#define MAX_JUMP 4.0

/* The fixed cost of one task on a device kind, in ns: a GPU task's launches and
 * bookkeeping (tens of us on an H100 host), a CPU task's hand-off. */
double sl__cost_task_ns(enum sl_device_kind k)
{
    return k == SL_DEVICE_CUDA ? 20000.0 : 1000.0;
}

static struct sl__cost_entry *find(sl_engine_t *eng, const char *name, enum sl_device_kind k)
{
    for (int i = 0; i < eng->n_costs; i++)
        if (eng->costs[i].kind == k && strcmp(eng->costs[i].name, name) == 0)
            return &eng->costs[i];
    return NULL;
}

double sl__cost_lookup(sl_engine_t *eng, const char *name, enum sl_device_kind k)
{
    pthread_mutex_lock(&eng->cost_mu);
    struct sl__cost_entry *e = find(eng, name, k);
    double v = e && e->trusted ? e->ns_per_row : -1;
    pthread_mutex_unlock(&eng->cost_mu);
    return v;
}

void sl__cost_record(sl_engine_t *eng, const char *name, enum sl_device_kind k, int64_t rows,
                     int64_t ns)
{
    if (rows <= 0 || ns < 0)
        return;
    double work = (double)ns - sl__cost_task_ns(k);
    double sample = (work > 0 ? work : 0) / (double)rows;
    double weight = ALPHA * ((double)rows < FULL_WEIGHT_ROWS ? (double)rows / FULL_WEIGHT_ROWS : 1);
    pthread_mutex_lock(&eng->cost_mu);
    struct sl__cost_entry *e = find(eng, name, k);
    if (!e && eng->n_costs < SL__MAX_COSTS) {
        e = &eng->costs[eng->n_costs++];
        snprintf(e->name, sizeof e->name, "%s", name);
        e->kind = k;
        e->ns_per_row = sample;
        e->trusted = false;
        e->candidate = false;
    } else if (e && !e->trusted) {
        /* Samples of full weight only (a small task's ns per row is mostly what its fixed
         * cost was off by): the first replaces the warm-up's, the second makes the entry
         * trusted with the smaller of the two. */
        if ((double)rows >= FULL_WEIGHT_ROWS) {
            e->ns_per_row = e->candidate && e->ns_per_row < sample ? e->ns_per_row : sample;
            e->trusted = e->candidate;
            e->candidate = true;
        }
    } else if (e) {
        if (sample > MAX_JUMP * e->ns_per_row && e->ns_per_row > 0)
            sample = MAX_JUMP * e->ns_per_row;
        e->ns_per_row = (1 - weight) * e->ns_per_row + weight * sample;
    }
    pthread_mutex_unlock(&eng->cost_mu);
}

void sl__cost_load(sl_engine_t *eng, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return; /* a missing cache is normal: nothing measured yet */
    char name[64], kind[8];
    double v;
    while (fscanf(f, "%63s %7s %lf", name, kind, &v) == 3 && eng->n_costs < SL__MAX_COSTS) {
        struct sl__cost_entry *e = &eng->costs[eng->n_costs++];
        snprintf(e->name, sizeof e->name, "%s", name);
        e->kind = strcmp(kind, "cuda") == 0 ? SL_DEVICE_CUDA : SL_DEVICE_CPU;
        e->ns_per_row = v;
        e->trusted = true; /* saved by an engine that had measured it */
    }
    fclose(f);
}

int sl__cost_save(sl_engine_t *eng, const char *path)
{
    char err[SL__MSG_MAX];
    struct sl__out_file out;
    int rc = sl__out_file_open(&out, path, err, sizeof err);
    FILE *f = rc == SL_OK ? sl__out_file_stream(&out, err, sizeof err) : NULL;
    if (!f)
        return sl__set_last_error(SL_EIO, "cannot write cost cache: %s", err);
    pthread_mutex_lock(&eng->cost_mu);
    for (int i = 0; i < eng->n_costs; i++)
        if (eng->costs[i].trusted) /* a warm-up alone is not worth keeping */
            fprintf(f, "%s %s %.6g\n", eng->costs[i].name,
                    eng->costs[i].kind == SL_DEVICE_CUDA ? "cuda" : "cpu",
                    eng->costs[i].ns_per_row);
    pthread_mutex_unlock(&eng->cost_mu);
    if (sl__out_file_commit(&out, err, sizeof err) != SL_OK)
        return sl__set_last_error(SL_EIO, "cannot write cost cache: %s", err);
    return SL_OK;
}
