/* explain --analyze's line per pipeline of where each of its stages ran: from the query
 * profile (sl_query_profile_json), per operator the devices its tasks ran on, its tasks
 * and their time. The estimate says where a stage would run; an implementation may still
 * decline a batch (a GPU aggregate of count(DISTINCT), a GPU project of SUBSTRING), and
 * this line shows it, e.g. "agg (aggregate) cpu, 1 task, 313.10 ms". The profile's
 * readers here serve explain_mgpu.c too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_profile_ops_begin(struct cli_profile_ops *it, const char *profile)
{
    it->at = profile ? strstr(profile, "\"operators\":[") : NULL;
    it->stop = it->at ? strstr(it->at, "],\"pipelines\"") : NULL;
    it->end = NULL;
}

bool cli_profile_ops_next(struct cli_profile_ops *it)
{
    if (it->at && it->stop)
        it->at = strstr(it->at + 1, "{\"node\":");
    if (!it->at || !it->stop || it->at >= it->stop) {
        it->at = NULL;
        return false;
    }
    const char *e = strstr(it->at + 1, "{\"node\":");
    it->end = e && e < it->stop ? e : it->stop;
    return true;
}

double cli_profile_number(const char *p, const char *end, const char *name, double dflt)
{
    char key[64];
    snprintf(key, sizeof key, "\"%s\":", name);
    const char *v = strstr(p, key);
    return v && v < end ? atof(v + strlen(key)) : dflt;
}

/* The profile's entry of operator `op` at plan node `node`: [*at, *end), or 0. */
static int find_op(const char *profile, int node, const char *op, const char **at,
                   const char **end)
{
    char want[160];
    snprintf(want, sizeof want, "\"op\":\"%s\",", op);
    struct cli_profile_ops it;
    cli_profile_ops_begin(&it, profile);
    while (cli_profile_ops_next(&it)) {
        const char *o = strstr(it.at, want);
        if (atoi(it.at + strlen("{\"node\":")) == node && o && o < it.end) {
            *at = it.at;
            *end = it.end;
            return 1;
        }
    }
    return 0;
}

/* What a GPU group-by did under a small budget (its profile values; docs/OUT_OF_CORE.md):
 * folds of its groups into host memory, its input moved to the CPU and why. */
static void budget_note(const char *at, const char *end)
{
    static const char *const why[] = {"", "avg cannot fold", "a table or copy over the budget",
                                      "row numbers or codes over the budget"};
    int folds = (int)cli_profile_number(at, end, "gpu_budget_folds", 0),
        host = (int)cli_profile_number(at, end, "gpu_budget_host", 0);
    if (folds > 0)
        printf(" [GPU budget: %d fold%s]", folds, folds == 1 ? "" : "s");
    if (host > 0 && host < 4)
        printf(" [GPU budget: %.0f rows to the CPU, %s]",
               cli_profile_number(at, end, "gpu_budget_host_rows", 0), why[host]);
}

void cli_explain_stages_measured(const sl_plan_t *plan, const struct sl_explain_pipeline *p,
                                 const char *profile)
{
    printf("  ran     ");
    for (int s = 0; s < p->n_stages; s++) {
        const struct sl_explain_stage *x = &p->stages[s];
        const char *at, *end, *name = x->node >= 0 ? sl_plan_node_name(plan, x->node) : NULL;
        printf("%s", s ? ";" : "");
        if (name)
            printf(" %s (%s)", name, x->op);
        else
            printf(" %s", x->node >= 0 ? x->op : "output");
        if (!find_op(profile, x->node, x->op, &at, &end)) {
            printf(" not measured");
            continue;
        }
        const char *dev = strstr(at, "\"device\":\"");
        int dl = dev && dev < end ? (int)strcspn(dev + 10, "\"") : 0;
        double tasks = cli_profile_number(at, end, "tasks", 0),
               kernel = cli_profile_number(at, end, "kernel_ms", 0);
        printf(" %.*s, %.0f task%s, %.2f ms", dl, dl ? dev + 10 : "?", tasks,
               tasks == 1 ? "" : "s", cli_profile_number(at, end, "busy_ms", 0));
        if (kernel > 0)
            printf(" (GPU %.2f ms)", kernel);
        budget_note(at, end);
    }
    printf("\n");
}
