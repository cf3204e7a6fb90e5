/* The sluice command: dispatches to one file per subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int usage(FILE *f)
{
    fprintf(f, "usage: sluice <command> [options]\n"
               "\n"
               "commands:\n"
               "  demo      run the ready-made plan on generated data and print a summary\n"
               "  run       run a plan file and print its outputs\n"
               "  explain   show the pipelines of a plan file: placement, tasks, costs, memory\n"
               "  operators list the operators and their options\n"
               "  options   list the engine options (--set NAME=VALUE) and their values\n"
               "  gen       write generated data to a file (.bin or .csv)\n"
               "  trace-render  draw a trace (--trace) as an SVG timeline\n"
               "  devices   list the CPU and GPUs the engine sees\n"
               "  tpch      load TPC-H tables and run, time and check the queries' plans\n"
               "  bench     benchmarks (sluice bench --help)\n"
               "  version   print the version\n"
               "\n"
               "Run 'sluice <command> --help' for the options of a command.\n");
    return f == stderr ? 2 : 0;
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr);
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help"))
        return usage(stdout);
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        if (argc > 2 && strcmp(argv[2], "--help") && strcmp(argv[2], "-h"))
            return cli_usage_fail("version: unknown argument '%s' (it takes none)", argv[2]);
        if (argc > 2)
            printf("usage: sluice version\nPrints the version of sluice.\n");
        else
            printf("sluice %s\n", sl_version_string());
        return 0;
    }
    if (!strcmp(cmd, "devices"))
        return cmd_devices(argc - 1, argv + 1);
    if (!strcmp(cmd, "demo"))
        return cmd_demo(argc - 1, argv + 1);
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "explain"))
        return cmd_explain(argc - 1, argv + 1);
    if (!strcmp(cmd, "gen"))
        return cmd_gen(argc - 1, argv + 1);
    if (!strcmp(cmd, "trace-render"))
        return cmd_trace_render(argc - 1, argv + 1);
    if (!strcmp(cmd, "operators"))
        return cmd_operators(argc - 1, argv + 1);
    if (!strcmp(cmd, "options"))
        return cmd_options(argc - 1, argv + 1);
    if (!strcmp(cmd, "tpch"))
        return cmd_tpch(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench"))
        return cmd_bench(argc - 1, argv + 1);
    fprintf(stderr, "sluice: unknown command '%s'\n", cmd);
    return usage(stderr);
}

int main(int argc, char **argv)
{
    cli_signals_init();
    int rc = dispatch(argc, argv);
    int sig = cli_signal_caught();
    return sig ? 128 + sig : rc;
}
