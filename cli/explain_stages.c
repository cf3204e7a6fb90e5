/* explain --analyze's line per pipeline of where each of its stages ran: from the query
 * profile (sl_query_profile_json), per operator the devices its tasks ran on, its tasks
 * and their time. The estimate says where a stage would run; an implementation may still
 * decline a batch (a GPU aggregate of count(DISTINCT), a GPU project of SUBSTRING), and
 * this line shows it, e.g. "agg (aggregate) cpu, 1 task, 313.10 ms". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The profile's entry of operator `op` at plan node `node`: [*at, *end), or 0. */
static int find_op(const char *profile, int node, const char *op, const char **at,
                   const char **end)
{
    const char *p = profile ? strstr(profile, "\"operators\":[") : NULL;
    const char *stop = p ? strstr(p, "],\"pipelines\"") : NULL;
    char want[160];
    snprintf(want, sizeof want, "\"op\":\"%s\",", op);
    while (p && stop && (p = strstr(p + 1, "{\"node\":")) && p < stop) {
        const char *e = strstr(p + 1, "{\"node\":");
        e = e && e < stop ? e : stop;
        const char *o = strstr(p, want);
        if (atoi(p + strlen("{\"node\":")) == node && o && o < e) {
            *at = p;
            *end = e;
            return 1;
        }
    }
    return 0;
}

static double number_in(const char *p, const char *end, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "\"%s\":", name);
    const char *v = strstr(p, key);
    return v && v < end ? atof(v + strlen(key)) : 0;
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
        double tasks = number_in(at, end, "tasks"), kernel = number_in(at, end, "kernel_ms");
        printf(" %.*s, %.0f task%s, %.2f ms", dl, dl ? dev + 10 : "?", tasks,
               tasks == 1 ? "" : "s", number_in(at, end, "busy_ms"));
        if (kernel > 0)
            printf(" (GPU %.2f ms)", kernel);
    }
    printf("\n");
}
