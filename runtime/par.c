/* Host threads for short parallel loops (internal.h): one fan-out for the runtime and the
 * operators instead of a pthread loop in each. */
#include <pthread.h>
#include <unistd.h>

#include "internal.h"

int sl__host_threads(int most)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1)
        cpus = 1;
    if (most > 0 && cpus > most)
        cpus = most;
    return (int)cpus;
}

struct par_part {
    void (*fn)(void *arg, int part, int parts);
    void *arg;
    int part, parts;
};

static void *par_main(void *p)
{
    const struct par_part *w = p;
    w->fn(w->arg, w->part, w->parts);
    return NULL;
}

void sl__par_for(int parts, void (*fn)(void *arg, int part, int parts), void *arg)
{
    if (parts < 1)
        parts = 1;
    if (parts > SL__PAR_MAX)
        parts = SL__PAR_MAX;
    struct par_part w[SL__PAR_MAX];
    pthread_t th[SL__PAR_MAX];
    int started[SL__PAR_MAX] = {0};
    for (int i = 0; i < parts; i++) {
        w[i] = (struct par_part){fn, arg, i, parts};
        if (i > 0)
            started[i] = pthread_create(&th[i], NULL, par_main, &w[i]) == 0;
    }
    par_main(&w[0]);
    for (int i = 1; i < parts; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            par_main(&w[i]); /* no thread: its part runs here */
    }
}
