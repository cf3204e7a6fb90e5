/* The MPI half of ranks.h in a build without MPI: the option mpi is refused. */
#include "ranks.h"

int sl__ranks_mpi_join(struct sl__ranks *r)
{
    (void)r;
    return sl__set_last_error(SL_EUNSUPPORTED, "option mpi: this sluice was built without "
                              "MPI (meson option mpi; Debian: libopenmpi-dev)");
}

void sl__ranks_mpi_leave(struct sl__ranks *r)
{
    (void)r;
}
