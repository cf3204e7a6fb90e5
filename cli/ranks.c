/* Running sluice on several ranks (docs/DISTRIBUTED.md): noticing that mpirun started
 * this process, and `--ranks N`, which starts mpirun itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

bool cli_under_mpirun(void)
{
    /* Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE; PMI launchers (srun, MPICH's hydra)
     * set PMI_SIZE or PMIX_RANK. */
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

int cli_engine_rank(sl_engine_t *eng)
{
    char buf[32];
    if (sl_engine_option_get(eng, "rank", buf, sizeof buf) != SL_OK)
        return 0;
    return atoi(buf);
}

int cli_ranks_exec(int n, int argc, char **argv)
{
    if (cli_under_mpirun())
        return cli_usage_fail("--ranks: already running under mpirun (drop --ranks)");
    /* mpirun -n N --oversubscribe --bind-to none [--allow-run-as-root] SELF ARGS...
     * (argv without --ranks N); one process per rank may exceed the cores, and
     * sluice pins its own workers. */
    char **args = calloc((size_t)argc + 10, sizeof *args);
    char nbuf[16], self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (!args || len <= 0)
        return cli_fail("--ranks: cannot find this program's path");
    self[len] = 0;
    snprintf(nbuf, sizeof nbuf, "%d", n);
    int k = 0;
    args[k++] = "mpirun";
    args[k++] = "-n";
    args[k++] = nbuf;
    args[k++] = "--oversubscribe";
    args[k++] = "--bind-to";
    args[k++] = "none";
    if (geteuid() == 0)
        args[k++] = "--allow-run-as-root";
    args[k++] = self;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--ranks")) {
            i++;
            continue;
        }
        args[k++] = argv[i];
    }
    args[k] = NULL;
    fflush(NULL);
    execvp("mpirun", args);
    free(args);
    return cli_fail("--ranks: cannot start mpirun (Debian: apt-get install openmpi-bin)");
}
