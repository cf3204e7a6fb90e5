/* SIGINT and SIGTERM: the running query is cancelled (sl_query_cancel), so its writers
 * remove their temporary files, and the command exits with 128 + the signal (130, 143)
 * once it has cleaned up. The signals are blocked in every thread (the engine's workers
 * inherit the mask) and taken by one thread with sigwait, which may call anything: a
 * handler could not call sl_query_cancel safely. With no query running, or at a second
 * signal, the command exits at once. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "cli.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static sl_query_t *running; /* under mu */
static volatile sig_atomic_t caught;

static void *watch(void *arg)
{
    sigset_t *set = arg;
    for (;;) {
        int sig;
        if (sigwait(set, &sig) != 0)
            continue;
        pthread_mutex_lock(&mu);
        if (!running || caught) {
            pthread_mutex_unlock(&mu);
            _exit(128 + sig);
        }
        caught = sig;
        sl_query_cancel(running);
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

void cli_signals_init(void)
{
    static sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_t th;
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0 ||
        pthread_create(&th, NULL, watch, &set) != 0) {
        pthread_sigmask(SIG_UNBLOCK, &set, NULL); /* the default action, as before */
        return;
    }
    pthread_detach(th);
}

int cli_query_run(sl_query_t *q)
{
    pthread_mutex_lock(&mu);
    running = q;
    pthread_mutex_unlock(&mu);
    int rc = sl_query_run(q);
    pthread_mutex_lock(&mu);
    running = NULL;
    pthread_mutex_unlock(&mu);
    return rc;
}

int cli_signal_caught(void)
{
    return caught;
}
