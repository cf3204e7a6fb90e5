/* Helpers of the fuzz targets (fuzz_common.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "internal.h"

sl_engine_t *fuzz_engine_open(void)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = 2;
    cfg.n_gpus = 0;
    cfg.host_mem_limit = (int64_t)256 << 20;
    cfg.pin_threads = 0;
    sl_engine_t *e = NULL;
    if (sl_engine_open(&e, &cfg) != SL_OK)
        abort();
    return e;
}

struct watchdog {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    int ms;
    sl_query_t *q;
};

static void *watch(void *arg)
{
    struct watchdog *w = arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += w->ms / 1000;
    until.tv_nsec += (long)(w->ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&w->mu);
    int rc = 0;
    while (!w->done && rc == 0)
        rc = pthread_cond_timedwait(&w->cv, &w->mu, &until);
    if (!w->done)
        sl_query_cancel(w->q);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int fuzz_query_run(sl_query_t *q, int ms)
{
    struct watchdog w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, ms, q};
    pthread_t t;
    if (pthread_create(&t, NULL, watch, &w) != 0)
        return sl_query_run(q);
    int rc = sl_query_run(q);
    pthread_mutex_lock(&w.mu);
    w.done = 1;
    pthread_cond_signal(&w.cv);
    pthread_mutex_unlock(&w.mu);
    pthread_join(t, NULL);
    fuzz_check_code(rc);
    if (getenv("SLUICE_FUZZ_VERBOSE")) /* to see how far a corpus gets */
        fprintf(stderr, "fuzz: query: %s %s\n", sl_err_name(rc), sl_query_errmsg(q));
    return rc;
}

void fuzz_touch_result(sl_query_t *q, const char *name)
{
    sl_table_t *t;
    if (sl_query_result(q, name, &t) != SL_OK)
        return;
    for (int64_t b = 0; b < sl_table_num_batches(t); b++) {
        sl_batch_t *batch = sl_table_batch(t, b);
        for (int64_t i = 0; i < sl_batch_num_rows(batch); i++)
            for (int c = 0; c < sl_batch_num_columns(batch); c++) {
                char cell[96];
                int null;
                sl_batch_value_format(batch, c, i, cell, sizeof cell, &null);
            }
    }
    sl_table_unref(t);
}

void fuzz_plan_text_run(const char *text, int ms)
{
    sl_plan_t *p;
    if (sl_plan_create(&p) != SL_OK)
        return;
    int rc = sl_plan_parse(p, text, "fuzz");
    fuzz_check_code(rc);
    if (rc == SL_OK) {
        sl_engine_t *e = fuzz_engine_open();
        sl_query_t *q;
        if (sl_query_create(e, p, &q) == SL_OK) {
            if (fuzz_query_run(q, ms) == SL_OK)
                fuzz_touch_result(q, "r");
            sl_query_destroy(q);
        }
        sl_engine_close(e);
    }
    sl_plan_destroy(p);
}

char *fuzz_text(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text) {
        memcpy(text, data, size);
        text[size] = 0;
    }
    return text;
}

void fuzz_check_code(int rc)
{
    if (rc > 0)
        abort();
}

void fuzz_check_no_live_allocs(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    if (c.live_allocs != 0) {
        fprintf(stderr, "fuzz: %lld allocations of the library left\n",
                (long long)c.live_allocs);
        abort();
    }
}

static char file_path[64];

static void remove_file(void)
{
    unlink(file_path);
}

const char *fuzz_file_with(const uint8_t *data, size_t size)
{
    if (!file_path[0]) {
        snprintf(file_path, sizeof file_path, "/tmp/sl_fuzz_XXXXXX");
        int fd = mkstemp(file_path);
        if (fd < 0)
            abort();
        close(fd);
        atexit(remove_file);
    }
    FILE *f = fopen(file_path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    return file_path;
}
