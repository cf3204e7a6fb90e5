/* The engine's place in a job of several processes (ranks): joining MPI when the option
 * mpi is on, and the transport exchange operators use between ranks (exchange.h,
 * sl__task_ranks_transport). docs/DISTRIBUTED.md. */
#ifndef SL_RUNTIME_RANKS_H
#define SL_RUNTIME_RANKS_H

#include <pthread.h>

#include "exchange.h"
#include "internal.h"

/* Workers an engine in an MPI job starts at least when the option threads is 0. */
#define SL__RANKS_MIN_THREADS 8

struct sl__ranks {
    sl_xchg_transport *t; /* MPI's, or a one-participant local transport */
    int rank, ranks;
    void *mpi;            /* ranks_mpi.c's state; NULL without MPI */
    /* balance groups of running queries (ranks_group.c) */
    pthread_mutex_t group_mu;
    pthread_cond_t group_cv;
    struct sl__xchg_group *groups;
};

/* Called by sl_engine_open once the options are checked: with option mpi, joins the
 * MPI job (MPI_Init_thread unless the embedder did it) and sets the options rank and
 * ranks from MPI_COMM_WORLD; SL_EUNSUPPORTED in a build without MPI. Errors are left
 * in the thread's last error. */
int sl__ranks_open(sl_engine_t *eng, struct sl__ranks **out);
/* Leaves the job (MPI_Finalize if sl__ranks_open initialized MPI) and frees r. */
void sl__ranks_close(struct sl__ranks *r);

/* Frees the balance groups still held (ranks_group.c). */
void sl__ranks_groups_free(struct sl__ranks *r);

/* The MPI half (ranks_mpi.c, or ranks_nompi.c's refusals). */
int sl__ranks_mpi_join(struct sl__ranks *r);
void sl__ranks_mpi_leave(struct sl__ranks *r);

#endif
