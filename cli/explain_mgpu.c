/* explain's line for a join or sort on several GPU devices (docs/MULTI_GPU.md): what the
 * library judged for the pipeline (struct sl_explain_pipeline's multi_* and xchg_*
 * members, as the operator's finalize will judge: its shape, the option multi_gpu, the
 * 2^20-row rule, the devices' memory budgets), and the device exchange's estimate for
 * its rows spread evenly (bytes per link, into each device, time). After a run
 * (--analyze), what the exchange measured, from the query profile's values
 * (xchg_bytes, xchg_packets, xchg_us). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_explain_devices(const struct sl_explain *ex, const struct sl_explain_pipeline *p)
{
    if (p->multi_devices <= 0)
        return;
    const char *op = p->stages[p->n_stages - 1].op;
    if (p->multi_devices < 2) {
        printf("  devices  %s on one of %d GPU devices (%s)\n", op, ex->n_gpus,
               p->multi_why_text);
        return;
    }
    printf("  devices  %s over %d of %d GPU devices", op, p->multi_devices, ex->n_gpus);
    if (p->multi_why)
        printf(" (%s)", p->multi_why_text);
    if (p->multi_rows < 0) {
        printf("; its rows are not known before it runs: with multi_gpu=auto fewer than "
               "2^20 stay on one device\n");
        return;
    }
    char a[32], b[32];
    cli_format_bytes(p->xchg_link_bytes, a, sizeof a);
    cli_format_bytes(p->xchg_device_bytes, b, sizeof b);
    printf("; exchange of %lld rows: %s per link, %s into each device, estimated %.3f ms\n",
           (long long)p->multi_rows, a, b, p->xchg_seconds * 1e3);
}

/* The integer `name` inside [p, end) of the profile JSON, or -1. */
static long long value_in(const char *p, const char *end, const char *name)
{
    return (long long)cli_profile_number(p, end, name, -1);
}

void cli_explain_devices_measured(const char *profile)
{
    struct cli_profile_ops it;
    cli_profile_ops_begin(&it, profile);
    while (cli_profile_ops_next(&it)) {
        const char *p = it.at, *end = it.end;
        long long n = value_in(p, end, "multi_device"), why = value_in(p, end,
                                                                       "multi_device_fallback");
        int node = atoi(p + strlen("{\"node\":"));
        if (why > 0 && n < 2)
            printf("  node %d: on one device (multi_device_fallback %lld, docs/MULTI_GPU.md)\n",
                   node, why);
        if (n < 2)
            continue;
        char a[32], b[32];
        cli_format_bytes(value_in(p, end, "xchg_bytes"), a, sizeof a);
        cli_format_bytes(value_in(p, end, "xchg_est_bytes"), b, sizeof b);
        printf("  node %d: over %lld devices%s; exchange measured %s in %lld packets, %.3f ms "
               "(estimated %s, %.3f ms)\n", node, n,
               why > 0 ? " (the others' memory budgets too full)" : "", a,
               value_in(p, end, "xchg_packets"), value_in(p, end, "xchg_us") / 1e3, b,
               value_in(p, end, "xchg_est_us") / 1e3);
    }
}
