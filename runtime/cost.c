/* The engine's cost history: measured ns per row of each operator on each device kind,
 * an exponential average (weight 1/4 for the newest sample) updated after every task,
 * optionally loaded from and saved to the engine's cost cache file (text lines:
 * "<operator> <cpu|cuda> <ns_per_row>"). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine_int.h"

#define ALPHA 0.25

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
    double v = e ? e->ns_per_row : -1;
    pthread_mutex_unlock(&eng->cost_mu);
    return v;
}

void sl__cost_record(sl_engine_t *eng, const char *name, enum sl_device_kind k, int64_t rows,
                     int64_t ns)
{
    if (rows <= 0 || ns < 0)
        return;
    double sample = (double)ns / (double)rows;
    pthread_mutex_lock(&eng->cost_mu);
    struct sl__cost_entry *e = find(eng, name, k);
    if (!e && eng->n_costs < SL__MAX_COSTS) {
        e = &eng->costs[eng->n_costs++];
        snprintf(e->name, sizeof e->name, "%s", name);
        e->kind = k;
        e->ns_per_row = sample;
    } else if (e) {
        e->ns_per_row = (1 - ALPHA) * e->ns_per_row + ALPHA * sample;
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
        fprintf(f, "%s %s %.6g\n", eng->costs[i].name,
                eng->costs[i].kind == SL_DEVICE_CUDA ? "cuda" : "cpu", eng->costs[i].ns_per_row);
    pthread_mutex_unlock(&eng->cost_mu);
    if (sl__out_file_commit(&out, err, sizeof err) != SL_OK)
        return sl__set_last_error(SL_EIO, "cannot write cost cache: %s", err);
    return SL_OK;
}
