/* The MPI half of ranks.h: joining the job the process was started in and leaving it.
 *
 * The engine initializes MPI only when the embedder has not (and then finalizes it when
 * it closes); it works on a duplicate of MPI_COMM_WORLD with errors returned rather
 * than fatal, so no message of the embedder's can match one of the exchange's. */
#include <mpi.h>

#include "exchange_mpi.h"
#include "ranks.h"

struct ranks_mpi {
    MPI_Comm comm;
    int initialized_here;
};

int sl__ranks_mpi_join(struct sl__ranks *r)
{
    int inited = 0, finalized = 0, provided = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (finalized)
        return sl__set_last_error(SL_ESTATE, "option mpi: MPI was already finalized in this "
                                  "process (one engine with mpi per process)");
    struct ranks_mpi *m = sl__calloc(1, sizeof *m);
    if (!m)
        return sl__set_last_error(SL_ENOMEM, "out of memory");
    m->comm = MPI_COMM_NULL;
    if (!inited) {
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
            sl__free(m, sizeof *m);
            return sl__set_last_error(SL_EIO, "option mpi: MPI_Init_thread failed");
        }
        m->initialized_here = 1;
    } else {
        MPI_Query_thread(&provided);
    }
    r->mpi = m;
    if (provided < MPI_THREAD_SERIALIZED)
        return sl__set_last_error(SL_EUNSUPPORTED, "option mpi: MPI gives thread level %d; "
                                  "the exchange needs MPI_THREAD_SERIALIZED", provided);
    if (MPI_Comm_dup(MPI_COMM_WORLD, &m->comm) != MPI_SUCCESS) {
        m->comm = MPI_COMM_NULL;
        return sl__set_last_error(SL_EIO, "option mpi: MPI_Comm_dup failed");
    }
    MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(m->comm, &r->rank);
    MPI_Comm_size(m->comm, &r->ranks);
    int rc = sl__xchg_mpi_create(m->comm, &r->t);
    return rc < 0 ? sl__set_last_error(rc, "out of memory") : SL_OK;
}

void sl__ranks_mpi_leave(struct sl__ranks *r)
{
    struct ranks_mpi *m = r->mpi;
    sl__xchg_mpi_destroy(r->t);
    r->t = NULL;
    if (m->comm != MPI_COMM_NULL)
        MPI_Comm_free(&m->comm);
    if (m->initialized_here)
        MPI_Finalize();
    sl__free(m, sizeof *m);
    r->mpi = NULL;
}
