/* The engine's ranks (ranks.h): the transport exchange operators use, MPI's when the
 * engine joined an MPI job, else a local one of one participant. */
#include "ranks.h"


#include "engine_int.h"
#include "exec_int.h"
#include "plan_int.h"

int sl__ranks_open(sl_engine_t *eng, struct sl__ranks **out)
{
    *out = NULL;
    struct sl__ranks *r = sl__calloc(1, sizeof *r);
    if (!r)
        return sl__set_last_error(SL_ENOMEM, "out of memory");
    r->rank = 0;
    r->ranks = 1;
    pthread_mutex_init(&r->group_mu, NULL);
    pthread_cond_init(&r->group_cv, NULL);
    int rc = eng->cfg.mpi ? sl__ranks_mpi_join(r) : sl__xchg_local_create(1, &r->t);
    if (rc < 0) {
        sl__ranks_close(r);
        return rc;
    }
    if (eng->cfg.mpi) { /* the options tell what MPI says */
        eng->cfg.rank = r->rank;
        eng->cfg.ranks = r->ranks;
        /* An exchange holds a worker while it waits for the other ranks, and ranks may
         * reach a plan's exchanges in different orders: each needs a worker of its own,
         * and one more keeps the pipelines feeding them going. */
        int ncpu = sl__host_threads(0);
        if (!eng->cfg.n_threads)
            eng->cfg.n_threads = ncpu > SL__RANKS_MIN_THREADS ? ncpu : SL__RANKS_MIN_THREADS;
    }
    *out = r;
    return SL_OK;
}

void sl__ranks_close(struct sl__ranks *r)
{
    if (!r)
        return;
    if (r->mpi)
        sl__ranks_mpi_leave(r);
    else if (r->t)
        sl__xchg_local_destroy(r->t);
    sl__ranks_groups_free(r); /* those a failed query left behind */
    pthread_mutex_destroy(&r->group_mu);
    pthread_cond_destroy(&r->group_cv);
    sl__free(r, sizeof *r);
}

int sl__task_ranks_transport(sl_task_t *t, sl_xchg_transport **out, int *rank, int *ranks,
                             int *tag)
{
    struct sl__ranks *r = t->q->eng->ranks;
    const struct sl_engine_config *o = &t->q->opts;
    if (!r || !r->t)
        return sl__set_last_error(SL_ESTATE, "the engine has no exchange transport");
    if (!r->mpi && o->ranks > 1)
        return sl__set_last_error(SL_EUNSUPPORTED, "ranks=%d but the engine is in no MPI job: "
                                  "run under mpirun with the option mpi (sluice run does "
                                  "that when started by mpirun, or with --ranks N)", o->ranks);
    *out = r->t;
    *rank = r->rank;
    *ranks = r->ranks;
    *tag = t->os->op->id % (SL_XCHG_MAX_TAG + 1);
    return SL_OK;
}
