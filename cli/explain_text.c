/* The human-readable form of `sluice explain` (the JSON form is sl_query_explain_json). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void fmt_seconds(double s, char *out, size_t len)
{
    if (s < 0)
        snprintf(out, len, "unknown");
    else if (s < 1e-3)
        snprintf(out, len, "%.1f us", s * 1e6);
    else if (s < 1)
        snprintf(out, len, "%.2f ms", s * 1e3);
    else
        snprintf(out, len, "%.2f s", s);
}

static const char *stage_name(const struct sl_explain_stage *x)
{
    return x->node < 0 ? "output" : x->op;
}

/* The estimated source rows of the pipeline feeding input `port` of node `node`, or -1.
 * (A shared node's keeper, core.share, also names the node: it is no input of it.) */
static int64_t rows_into(const struct sl_explain *ex, int node, int port)
{
    for (int k = 0; k < ex->n_pipelines; k++) {
        const struct sl_explain_pipeline *q = &ex->pipelines[k];
        const struct sl_explain_stage *sink = &q->stages[q->n_stages - 1];
        if (sink->node == node && q->sink_port == port && strcmp(sink->op, "core.share") != 0)
            return q->rows;
    }
    return -1;
}

/* Which input of a join builds its hash table (or sorted side), as operators/join
 * decides it: inner joins build on the smaller input (the right one on a tie), the other
 * kinds keep the left rows and build on the right. */
static void print_join_side(const sl_plan_t *plan, const struct sl_explain *ex, int node,
                            int port)
{
    const char *kind = sl_plan_node_option(plan, node, "kind");
    const char *side = port == 0 ? "left" : "right";
    if (kind && strcmp(kind, "inner") != 0) {
        printf(" (%s): the %s side (kind=%s builds on the right input)", side,
               port == 1 ? "build" : "probe", kind);
        return;
    }
    int64_t r0 = rows_into(ex, node, 0), r1 = rows_into(ex, node, 1);
    if (r0 < 0 || r1 < 0) {
        printf(" (%s): build or probe side, whichever input is smaller when it runs", side);
        return;
    }
    int build = r0 < r1 ? 0 : 1;
    printf(" (%s): the %s side (an inner join builds on the smaller input%s: %lld vs %lld "
           "rows estimated)", side, port == build ? "build" : "probe",
           r0 == r1 ? ", the right one on a tie" : "", (long long)r0, (long long)r1);
}

/* "fact (gen.keys)" for a node the plan file named, "gen.keys[3]" otherwise. */
static void print_stage(const sl_plan_t *plan, const struct sl_explain_stage *x)
{
    const char *name = x->node >= 0 ? sl_plan_node_name(plan, x->node) : NULL;
    if (name)
        printf("%s (%s)", name, x->op);
    else if (x->node >= 0)
        printf("%s[%d]", x->op, x->node);
    else
        printf("output");
}

static void print_flow(const sl_plan_t *plan, const struct sl_explain *ex,
                       const struct sl_explain_pipeline *p)
{
    printf("pipeline %d: ", p->id);
    for (int s = 0; s < p->n_stages; s++) {
        const struct sl_explain_stage *x = &p->stages[s];
        printf("%s", s ? " -> " : "");
        print_stage(plan, x);
        if (p->device >= 0)
            printf(" on %s", x->on_gpu ? "gpu" : "cpu");
    }
    const struct sl_explain_stage *sink = &p->stages[p->n_stages - 1];
    if (!strcmp(sink->op, "core.share")) {
        /* A shared node: computed once here, read by a core.share_read per consumer. */
        printf(": computed once, read by pipelines");
        for (int k = 0; k < ex->n_pipelines; k++) {
            const struct sl_explain_stage *src = &ex->pipelines[k].stages[0];
            if (!strcmp(src->op, "core.share_read") && src->node == sink->node)
                printf(" %d", ex->pipelines[k].id);
        }
    } else if (sink->node >= 0) {
        printf(", its input %d", p->sink_port);
        if (!strcmp(sink->op, "join"))
            print_join_side(plan, ex, sink->node, p->sink_port);
    }
    printf("\n");
}

/* "12.58 ms (gen.blobs 1.0 ms, kmeans 11.58 ms)", "unknown (kmeans 12.58 ms; no cost
 * function: gen.blobs)". */
static void print_cost(const struct sl_explain_pipeline *p)
{
    char b[32];
    fmt_seconds(p->task_seconds, b, sizeof b);
    printf("; cost/task %s (", b);
    int known = 0;
    for (int s = 0; s < p->n_stages; s++) {
        if (p->stages[s].task_seconds < 0)
            continue;
        fmt_seconds(p->stages[s].task_seconds, b, sizeof b);
        printf("%s%s %s", known++ ? ", " : "", stage_name(&p->stages[s]), b);
    }
    const char *sep = known ? "; no cost function: " : "no cost function: ";
    for (int s = 0; s < p->n_stages; s++) {
        if (p->stages[s].task_seconds >= 0)
            continue;
        printf("%s%s", sep, stage_name(&p->stages[s]));
        sep = ", ";
    }
    printf(")\n");
}

static void print_pipeline(const sl_plan_t *plan, const struct sl_explain *ex,
                           const struct sl_explain_pipeline *p, sl_engine_t *eng,
                           const char *profile)
{
    char a[32], b[32];
    print_flow(plan, ex, p);
    if (p->split)
        printf("  device   cpu + gpu %d: %s\n", p->device, p->why);
    else if (p->device >= 0)
        printf("  device   gpu %d: %s\n", p->device, p->why);
    else
        printf("  device   cpu: %s\n", p->why);
    if (p->tasks >= 0)
        printf("  tasks    %lld of up to %lld rows (%lld row%s estimated)", (long long)p->tasks,
               (long long)p->morsel_rows, (long long)p->rows, p->rows == 1 ? "" : "s");
    else
        printf("  tasks    unknown until it runs (morsels of %lld rows)",
               (long long)p->morsel_rows);
    print_cost(p);
    if (!strcmp(p->stages[p->n_stages - 1].op, "exchange"))
        cli_explain_exchange(plan, p, eng);
    cli_explain_devices(ex, p);
    cli_format_bytes(p->host_bytes, a, sizeof a);
    cli_format_bytes(p->gpu_bytes, b, sizeof b);
    printf("  memory   host %s, gpu %s (estimated); moves ", a, b);
    if (p->bytes_h2d || p->bytes_d2h) {
        cli_format_bytes(p->bytes_h2d, a, sizeof a);
        cli_format_bytes(p->bytes_d2h, b, sizeof b);
        printf("%s host->gpu, %s gpu->host\n", a, b);
    } else {
        printf("nothing between host and GPU\n");
    }
    if (!p->measured && p->ms_estimated >= 0)
        printf("  estimate %.3g ms on its device\n", p->ms_estimated);
    if (p->measured) {
        char dev[32] = "cpu";
        if (p->device_measured >= 0)
            snprintf(dev, sizeof dev, "%sgpu %d", p->split ? "cpu + " : "", p->device_measured);
        printf("  measured %s, %lld tasks, %lld rows, %.2f ms", dev,
               (long long)p->tasks_measured, (long long)p->rows_measured, p->ms_measured);
        if (p->ms_estimated >= 0)
            printf(" (estimated %.3g ms)", p->ms_estimated);
        if (p->split)
            printf(" (%lld morsels on the CPU, %lld on the GPU)",
                   (long long)p->cpu_tasks_measured, (long long)p->gpu_tasks_measured);
        printf("\n");
        if (profile)
            cli_explain_stages_measured(plan, p, profile);
    }
}

/* One memory line: estimate against budget, and a warning when it is over. */
static void print_memory(const char *what, int64_t peak, int64_t budget, const char *flag,
                         int64_t measured, bool has_measured)
{
    char a[32], b[32], m[32];
    cli_format_bytes(peak, a, sizeof a);
    cli_format_bytes(budget, b, sizeof b);
    printf("  %-4s  estimated peak %s of a %s budget (%.1f%%)", what, a, b,
           budget > 0 ? 100.0 * (double)peak / (double)budget : 0.0);
    if (has_measured) {
        cli_format_bytes(measured, m, sizeof m);
        printf(", measured peak %s", m);
    }
    printf("\n");
    if (peak > budget)
        printf("WARNING: the estimated peak %s memory (%s) exceeds the %s budget (%s, %s): "
               "the run may fail (SL_EBUDGET)\n", what, a, what, b, flag);
}

void cli_explain_text(const char *path, const sl_plan_t *plan, const struct sl_explain *ex,
                      enum sl_placement asked, sl_engine_t *eng, const char *profile)
{
    printf("plan %s: %d pipeline%s on %d CPU thread%s and %d GPU%s\n", path, ex->n_pipelines,
           ex->n_pipelines == 1 ? "" : "s", ex->n_threads, ex->n_threads == 1 ? "" : "s",
           ex->n_gpus, ex->n_gpus == 1 ? "" : "s");
    if (asked == SL_PLACE_GPU && ex->n_gpus == 0)
        printf("NOTE: --placement gpu was asked for, but no usable GPU is present: every "
               "pipeline runs on the CPU\n");
    printf("\n");
    for (int k = 0; k < ex->n_pipelines; k++)
        print_pipeline(plan, ex, &ex->pipelines[k], eng, profile);
    printf("\nmemory\n");
    print_memory("host", ex->host_peak, ex->host_budget, "--host-mem", ex->host_peak_measured,
                 ex->measured);
    if (ex->n_gpus > 0)
        print_memory("gpu", ex->gpu_peak, ex->gpu_budget, "--gpu-mem", ex->gpu_peak_measured,
                     ex->measured);
    else
        printf("  gpu   none in use\n");
    if (ex->measured) {
        char a[32], b[32];
        cli_format_bytes(ex->bytes_h2d_measured, a, sizeof a);
        cli_format_bytes(ex->bytes_d2h_measured, b, sizeof b);
        printf("\nmeasured: %s in %.2f ms; moved %s host->gpu, %s gpu->host\n",
               sl_err_name(ex->status), ex->ms_measured, a, b);
    }
}
