/* Parallel staging copies (see stage.h). A job (one or several copies) is cut into pieces
 * of up to 1 MiB handed out by an atomic counter. The job lives on the caller's stack;
 * helpers take a pointer to it under the mutex and count themselves in `busy`, and the caller clears the pointer and
 * waits for busy == 0 before returning, so no helper ever sees a finished job. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "internal.h"
#include "stage.h"

#define PIECE (1u << 20)
#define PIECE_MIN (128u << 10)
#define MIN_PARALLEL (4u << 20) /* below this, one thread copies */

/* A job: n copies (v), cut into pieces of `piece` bytes; copy i's pieces are numbered
 * from first[i] (first[n]: all of them). */
struct job {
    const struct sl__copy *v;
    const size_t *first;
    int n;
    size_t piece, pieces;
    _Atomic size_t next;          /* next piece to take */
    _Atomic size_t finished;      /* pieces copied */
};

struct sl__stager {
    int n;
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t cv, done_cv;
    uint64_t seq;                 /* job sequence number */
    struct job *cur;              /* the running job, or NULL */
    int busy;                     /* helpers inside `cur` */
    bool stop;
};

static void copy_pieces(struct job *j)
{
    int i = 0;
    for (;;) {
        size_t k = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
        if (k >= j->pieces)
            return;
        while (k >= j->first[i + 1]) /* pieces are taken in increasing order */
            i++;
        const struct sl__copy *c = &j->v[i];
        size_t off = (k - j->first[i]) * j->piece;
        size_t len = c->bytes - off < j->piece ? c->bytes - off : j->piece;
        memcpy((char *)c->dst + off, (const char *)c->src + off, len);
        /* release: the caller's acquire load sees these bytes */
        atomic_fetch_add_explicit(&j->finished, 1, memory_order_release);
    }
}

static void *helper_main(void *arg)
{
    struct sl__stager *s = arg;
    uint64_t seen = 0;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while ((s->seq == seen || !s->cur) && !s->stop)
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->stop)
            break;
        seen = s->seq;
        struct job *j = s->cur;
        s->busy++;
        pthread_mutex_unlock(&s->mu);
        copy_pieces(j);
        pthread_mutex_lock(&s->mu);
        if (--s->busy == 0)
            pthread_cond_broadcast(&s->done_cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int sl__stager_create(struct sl__stager **out, int n)
{
    struct sl__stager *s = sl__calloc(1, sizeof *s);
    *out = NULL;
    if (!s)
        return SL_ENOMEM;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    pthread_cond_init(&s->done_cv, NULL);
    if (n > 0) {
        s->threads = sl__calloc((size_t)n, sizeof *s->threads);
        if (!s->threads) {
            sl__stager_destroy(s);
            return SL_ENOMEM;
        }
    }
    for (int i = 0; i < n; i++) {
        if (pthread_create(&s->threads[i], NULL, helper_main, s) != 0)
            break; /* fewer helpers: slower, still correct */
        s->n++;
    }
    *out = s;
    return SL_OK;
}

void sl__stager_destroy(struct sl__stager *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->stop = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < s->n; i++)
        pthread_join(s->threads[i], NULL);
    sl__free(s->threads, 0);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    pthread_cond_destroy(&s->done_cv);
    sl__free(s, sizeof *s);
}

void sl__stager_copy(struct sl__stager *s, void *dst, const void *src, size_t bytes)
{
    struct sl__copy c = {dst, src, bytes};
    sl__stager_copy_v(s, &c, 1);
}

void sl__stager_copy_v(struct sl__stager *s, const struct sl__copy *v, int n)
{
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += v[i].bytes;
    if (!s || s->n == 0 || total < MIN_PARALLEL || n > STAGE_COPIES_MAX) {
        for (int i = 0; i < n; i++)
            memcpy(v[i].dst, v[i].src, v[i].bytes);
        return;
    }
    /* Pieces of PIECE bytes, smaller (down to PIECE_MIN) while the job would give the
     * threads fewer than 4 pieces each: a 4 MiB copy was 4 pieces for 9 threads. */
    size_t piece = PIECE, threads = (size_t)s->n + 1;
    while (piece > PIECE_MIN && total / piece < 4 * threads)
        piece /= 2;
    size_t first[STAGE_COPIES_MAX + 1];
    first[0] = 0;
    for (int i = 0; i < n; i++)
        first[i + 1] = first[i] + (v[i].bytes + piece - 1) / piece;
    struct job j = {.v = v, .first = first, .n = n, .piece = piece, .pieces = first[n]};
    atomic_init(&j.next, 0);
    atomic_init(&j.finished, 0);
    pthread_mutex_lock(&s->mu);
    s->cur = &j;
    s->seq++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    copy_pieces(&j);
    while (atomic_load_explicit(&j.finished, memory_order_acquire) < j.pieces)
        sched_yield();
    pthread_mutex_lock(&s->mu);
    s->cur = NULL;
    while (s->busy > 0)
        pthread_cond_wait(&s->done_cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
}
