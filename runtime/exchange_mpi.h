/* The MPI transport's constructor (runtime/exchange_mpi.c), for the runtime's rank glue
 * (ranks_mpi.c); only MPI builds have it. */
#ifndef SL_RUNTIME_EXCHANGE_MPI_H
#define SL_RUNTIME_EXCHANGE_MPI_H

#include <mpi.h>

#include "exchange.h"

/* A transport over comm (which the caller keeps until sl__xchg_mpi_destroy): one
 * participant per rank. SL_ENOMEM. */
int sl__xchg_mpi_create(MPI_Comm comm, sl_xchg_transport **out);
void sl__xchg_mpi_destroy(sl_xchg_transport *t);

#endif
