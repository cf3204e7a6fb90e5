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

/* The estimate (docs/DISTRIBUTED.md): each rank holds rows / ranks of the input (the
 * shares of generated tables) of `row` bytes; hash and range send 1 / ranks of them to
 * each rank, so ranks - 1 links leave every rank; gather sends all of them to one rank,
 * whose ranks - 1 incoming links bound the time. Time = bytes through the busiest rank
 * / exchange_gbps. */
void cli_explain_exchange(const sl_plan_t *plan, const struct sl_explain_pipeline *p,
                          sl_engine_t *eng)
{
    int node = p->stages[p->n_stages - 1].node;
    const char *mode = sl_plan_node_option(plan, node, "mode");
    mode = mode ? mode : "hash";
    char buf[32];
    int ranks = sl_engine_option_get(eng, "ranks", buf, sizeof buf) == SL_OK ? atoi(buf) : 1;
    double gbps = sl_engine_option_get(eng, "exchange_gbps", buf, sizeof buf) == SL_OK
                      ? atof(buf) : 0;
    gbps = gbps > 0 ? gbps : 5;
    const sl_schema_t *s = sl_plan_node_schema(plan, node);
    int64_t row = 0;
    for (int c = 0; s && c < sl_schema_num_fields(s); c++) {
        enum sl_type t;
        sl_schema_field(s, c, NULL, &t);
        row += (int64_t)sl_type_width(t);
    }
    printf("  exchange mode=%s over %d rank%s", mode, ranks, ranks == 1 ? "" : "s");
    if (p->rows < 0 || ranks < 2) {
        printf(ranks < 2 ? ": rows stay on this rank\n" : ": bytes unknown until it runs\n");
        return;
    }
    double share = (double)p->rows / ranks * (double)row;
    bool gather = !strcmp(mode, "gather");
    double link = gather ? share : share / ranks;
    double busiest = link * (ranks - 1);
    char a[32], b[32], t[32];
    cli_format_bytes((int64_t)link, a, sizeof a);
    cli_format_bytes((int64_t)busiest, b, sizeof b);
    double sec = busiest / (gbps * 1e9);
    if (sec < 1)
        snprintf(t, sizeof t, "%.2f ms", sec * 1e3);
    else
        snprintf(t, sizeof t, "%.2f s", sec);
    printf(": %s per link (estimated), %s through the busiest rank: %s at %.1f GB/s "
           "(exchange_gbps)\n", a, b, t, gbps);
}
