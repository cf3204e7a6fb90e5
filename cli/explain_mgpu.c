/* explain's line for a join or sort on several GPU devices (docs/MULTI_GPU.md): whether
 * the plan's shape lets the operator spread over every device, and if so the device
 * exchange's estimate (bytes per link, time), as operators/common/mgpu_plan.c's
 * sl__mg_cost estimates it for rows spread evenly: each device holds rows / N and sends
 * rows / N^2 to every other, 16 bytes a row (key and row id), every receiver taking
 * (N - 1) links' bytes at 200 GB/s. After a run (--analyze), what the exchange
 * measured, from the query profile's values (xchg_bytes, xchg_packets, xchg_us). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

#define ROW_BYTES 16
#define LINK_GBPS 200.0

/* The key column's name from an option value ("k", "k DESC", "a,b"): NULL for several. */
static const char *one_key(const char *v, char *buf, size_t len, int *desc)
{
    if (!v || strchr(v, ','))
        return NULL;
    size_t n = strcspn(v, " ");
    if (n == 0 || n >= len)
        return NULL;
    memcpy(buf, v, n);
    buf[n] = 0;
    *desc = strstr(v + n, "DESC") != NULL || strstr(v + n, "desc") != NULL;
    return buf;
}

/* Why the operator at `node` stays on one device, judged from the plan (NULL: it goes
 * over every device; the finalize may still keep it on one, as the profile's value
 * multi_device_fallback then says). */
static const char *why_not(const sl_plan_t *plan, int node, const char *op)
{
    char name[128];
    int desc = 0;
    const char *key;
    if (!strcmp(op, "sort")) {
        key = one_key(sl_plan_node_option(plan, node, "by"), name, sizeof name, &desc);
        if (!key)
            return "more than one sort key";
        if (desc)
            return "a DESC sort";
    } else {
        const char *kind = sl_plan_node_option(plan, node, "kind");
        const char *resid = sl_plan_node_option(plan, node, "residual");
        const char *output = sl_plan_node_option(plan, node, "output");
        if (kind && strcmp(kind, "inner") && strcmp(kind, "left") && strcmp(kind, "semi") &&
            strcmp(kind, "anti"))
            return "a join kind other than inner, left, semi and anti";
        if (resid && *resid)
            return "a residual condition";
        if (output && !strcmp(output, "aggregate"))
            return "output=aggregate";
        const char *on = sl_plan_node_option(plan, node, "on");
        key = one_key(on && *on ? on : sl_plan_node_option(plan, node, "left_on"), name,
                      sizeof name, &desc);
        if (!key)
            return "more than one join key";
    }
    const sl_schema_t *s = sl_plan_node_schema(plan, node);
    int c = s ? sl_schema_find(s, key) : -1;
    if (c < 0)
        return NULL; /* the key is not output: its type shows when it runs */
    enum sl_type t;
    sl_schema_field(s, c, NULL, &t);
    bool is_int = t != SL_TYPE_FLOAT32 && t != SL_TYPE_FLOAT64 && !sl_type_is_string(t) &&
                  sl_type_width(t) >= 1 && sl_type_width(t) <= 8;
    if (!is_int)
        return "a key that is not an integer of 1 to 8 bytes";
    if (!strcmp(op, "sort") && (sl_type_width(t) != 8 || t == SL_TYPE_UINT64))
        return "a sort key that is not a signed 8-byte integer";
    return NULL;
}

/* A pipeline's multi-device estimate: 0 when it is no join or sort on the GPU of an
 * engine with several devices; else *why (NULL: over every device) and, when its rows
 * are known (rows >= 0), the bytes per link, into each device and the seconds. */
struct estimate {
    const char *op, *why;
    int node, n;
    int64_t rows;
    double link, into, sec;
};

static int estimate_of(const sl_plan_t *plan, const struct sl_explain *ex,
                       const struct sl_explain_pipeline *p, struct estimate *e)
{
    const struct sl_explain_stage *sink = &p->stages[p->n_stages - 1];
    int n = ex->n_gpus;
    if (n < 2 || !sink->on_gpu || sink->node < 0 ||
        (strcmp(sink->op, "join") && strcmp(sink->op, "sort")))
        return 0;
    *e = (struct estimate){.op = sink->op, .node = sink->node, .n = n, .rows = p->rows};
    e->why = why_not(plan, sink->node, sink->op);
    e->link = (double)(p->rows > 0 ? p->rows : 0) / ((double)n * n) * ROW_BYTES;
    e->into = e->link * (n - 1);
    e->sec = e->into / (LINK_GBPS * 1e9);
    return 1;
}

void cli_explain_devices(const sl_plan_t *plan, const struct sl_explain *ex,
                         const struct sl_explain_pipeline *p)
{
    struct estimate e;
    if (!estimate_of(plan, ex, p, &e))
        return;
    if (e.why) {
        printf("  devices  %s on one of %d GPU devices: %s\n", e.op, e.n, e.why);
        return;
    }
    printf("  devices  %s over all %d GPU devices", e.op, e.n);
    if (e.rows < 0) {
        printf("; exchange bytes unknown until it runs\n");
        return;
    }
    char a[32], b[32];
    cli_format_bytes((int64_t)e.link, a, sizeof a);
    cli_format_bytes((int64_t)e.into, b, sizeof b);
    printf("; exchange of %s: %s per link, %s into each device, estimated %.3f ms at "
           "%.0f GB/s\n", strcmp(e.op, "join") ? "its rows" : "this input", a, b,
           e.sec * 1e3, LINK_GBPS);
}

void cli_explain_devices_json(const sl_plan_t *plan, const struct sl_explain *ex,
                              const char *json)
{
    size_t len = strlen(json);
    while (len > 0 && json[len - 1] != '}')
        len--;
    if (len == 0) {
        printf("%s\n", json);
        return;
    }
    printf("%.*s,\"devices\":[", (int)(len - 1), json);
    int k = 0;
    for (int i = 0; i < ex->n_pipelines; i++) {
        struct estimate e;
        if (!estimate_of(plan, ex, &ex->pipelines[i], &e))
            continue;
        printf("%s{\"pipeline\":%d,\"op\":\"%s\",\"node\":%d,\"devices\":%d,", k++ ? "," : "",
               ex->pipelines[i].id, e.op, e.node, e.n);
        if (e.why)
            printf("\"spread\":false,\"why\":\"%s\"}", e.why);
        else if (e.rows < 0)
            printf("\"spread\":true,\"link_bytes\":null,\"device_bytes\":null,"
                   "\"exchange_ms\":null}");
        else
            printf("\"spread\":true,\"link_bytes\":%.0f,\"device_bytes\":%.0f,"
                   "\"exchange_ms\":%.4f}", e.link, e.into, e.sec * 1e3);
    }
    printf("]}\n");
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
