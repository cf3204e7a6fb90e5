/* sl_query_explain_json: sl_query_explain as JSON (fields in docs/CLI.md). Unknown
 * estimates are null; the measured part and the profile appear once the query ran. */
#include <stdio.h>

#include "exec_int.h"
#include "text_buf.h"

/* A number, or null when the estimate is unknown (< 0). */
static void put_num(struct sl__text_buf *b, const char *key, double v, bool integer)
{
    if (v < 0)
        sl__text_put(b, ",\"%s\":null", key);
    else if (integer)
        sl__text_put(b, ",\"%s\":%.0f", key, v);
    else
        sl__text_put(b, ",\"%s\":%.6g", key, v);
}

static void put_pipeline(struct sl__text_buf *b, const sl_plan_t *plan,
                         const struct sl_explain_pipeline *p)
{
    sl__text_put(b, "{\"id\":%d,\"source\":\"%s\",\"operators\":[", p->id, p->stages[0].op);
    for (int s = 1; s + 1 < p->n_stages; s++)
        sl__text_put(b, "%s\"%s\"", s > 1 ? "," : "", p->stages[s].op);
    sl__text_put(b, "],\"sink\":\"%s\",\"sink_port\":%d,\"device\":\"%s\",\"gpu\":%d,\"why\":\"%s\"",
        p->stages[p->n_stages - 1].op, p->sink_port, p->device >= 0 ? "gpu" : "cpu", p->device,
        p->why);
    sl__text_put(b, ",\"gpu_capable\":%s,\"split\":%s", p->gpu_capable ? "true" : "false",
        p->split ? "true" : "false");
    put_num(b, "gpu_share", p->split ? p->gpu_share : -1, false);
    put_num(b, "rows", (double)p->rows, true);
    sl__text_put(b, ",\"morsel_rows\":%lld", (long long)p->morsel_rows);
    put_num(b, "tasks", (double)p->tasks, true);
    put_num(b, "task_seconds", p->task_seconds, false);
    put_num(b, "ms_estimated", p->ms_estimated, false);
    sl__text_put(b, ",\"stages\":[");
    for (int s = 0; s < p->n_stages; s++) {
        const struct sl_explain_stage *x = &p->stages[s];
        sl__text_put(b, "%s{\"op\":\"%s\",\"node\":%d", s ? "," : "", x->op, x->node);
        /* The plan file's name of the node (letters, digits, '_': no escaping needed). */
        const char *name = x->node >= 0 ? sl_plan_node_name(plan, x->node) : NULL;
        if (name)
            sl__text_put(b, ",\"name\":\"%s\"", name);
        sl__text_put(b, ",\"device\":\"%s\"", x->on_gpu ? "gpu" : "cpu");
        put_num(b, "task_seconds", x->task_seconds, false);
        sl__text_put(b, "}");
    }
    sl__text_put(b, "],\"bytes_h2d\":%lld,\"bytes_d2h\":%lld,\"host_bytes\":%lld,\"gpu_bytes\":%lld",
        (long long)p->bytes_h2d, (long long)p->bytes_d2h, (long long)p->host_bytes,
        (long long)p->gpu_bytes);
    if (p->multi_devices > 0) { /* its sink over several GPU devices (docs/MULTI_GPU.md) */
        sl__text_put(b, ",\"multi_device\":{\"devices\":%d,\"why\":%d,\"why_text\":\"%s\"",
            p->multi_devices, p->multi_why, p->multi_why_text);
        put_num(b, "rows", (double)p->multi_rows, true);
        put_num(b, "link_bytes", (double)p->xchg_link_bytes, true);
        put_num(b, "device_bytes", (double)p->xchg_device_bytes, true);
        put_num(b, "exchange_ms", p->xchg_seconds < 0 ? -1 : p->xchg_seconds * 1e3, false);
        sl__text_put(b, "}");
    }
    if (p->measured)
        sl__text_put(b, ",\"measured\":{\"device\":\"%s\",\"gpu\":%d,\"ms\":%.3f,\"rows\":%lld,"
               "\"tasks\":%lld}",
            p->device_measured >= 0 ? "gpu" : "cpu", p->device_measured, p->ms_measured,
            (long long)p->rows_measured, (long long)p->tasks_measured);
    sl__text_put(b, "}");
}

const char *sl_query_explain_json(sl_query_t *q)
{
    const struct sl_explain *ex;
    if (!q || sl_query_explain(q, &ex) != SL_OK)
        return "{}";
    struct sl__text_buf b = {0};
    sl__text_put(&b, "{\"threads\":%d,\"gpus\":%d,\"host_budget\":%lld,\"gpu_budget\":%lld,"
            "\"host_peak\":%lld,\"gpu_peak\":%lld,\"host_over_budget\":%s,"
            "\"gpu_over_budget\":%s,\"pipelines\":[",
        ex->n_threads, ex->n_gpus, (long long)ex->host_budget, (long long)ex->gpu_budget,
        (long long)ex->host_peak, (long long)ex->gpu_peak,
        ex->host_peak > ex->host_budget ? "true" : "false",
        ex->n_gpus && ex->gpu_peak > ex->gpu_budget ? "true" : "false");
    for (int k = 0; k < ex->n_pipelines; k++) {
        sl__text_put(&b, "%s", k ? "," : "");
        put_pipeline(&b, q->plan, &ex->pipelines[k]);
    }
    sl__text_put(&b, "]");
    if (ex->measured)
        sl__text_put(&b, ",\"measured\":{\"status\":\"%s\",\"ms\":%.3f,\"host_peak\":%lld,"
                "\"gpu_peak\":%lld,\"bytes_h2d\":%lld,\"bytes_d2h\":%lld},\"profile\":%s",
            sl_err_name(ex->status), ex->ms_measured, (long long)ex->host_peak_measured,
            (long long)ex->gpu_peak_measured, (long long)ex->bytes_h2d_measured,
            (long long)ex->bytes_d2h_measured, sl_query_profile_json(q));
    sl__text_put(&b, "}");
    char *text = sl__text_take(&b);
    if (!text)
        return "{}";
    sl__free(q->explain, 0);
    q->explain = text;
    return text;
}
