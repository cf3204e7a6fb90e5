/* sluice trace-render TRACE.json -o timeline.svg: draws the spans of a sluice trace, one
 * lane per device and worker or stream (named by the trace's thread_name records),
 * coloured by kind (host work, host->device copy, kernel, device->host copy) and labelled
 * with the operator where a span is wide enough, over a time axis with a grid, so
 * copy/compute overlap and the host's gaps can be seen. It reads the traces sluice
 * writes (one event per line), not arbitrary Chrome traces. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct span {
    double ts, dur;
    int pid, tid;
    char cat[16], name[48];
};

struct lane {
    int pid, tid;
    char name[48]; /* from the trace's thread_name record; "" = made from pid and tid */
};

#define MAX_LANES 256

/* The lane of (pid, tid), added if new; -1 when all MAX_LANES are taken. */
static int lane_of(struct lane *lanes, int *n, int pid, int tid)
{
    for (int i = 0; i < *n; i++)
        if (lanes[i].pid == pid && lanes[i].tid == tid)
            return i;
    if (*n == MAX_LANES)
        return -1;
    lanes[*n] = (struct lane){pid, tid, ""};
    return (*n)++;
}

static const char *colour(const char *cat)
{
    if (!strcmp(cat, "copy_h2d"))
        return "#4e79a7";
    if (!strcmp(cat, "copy_d2h"))
        return "#59a14f";
    if (!strcmp(cat, "kernel"))
        return "#e15759";
    return "#f2a541";
}

static const char *lane_label(const struct lane *l, char *buf, size_t len)
{
    /* Without the trace's record, as sl_query_trace names lanes, but for a GPU
     * worker's host thread, which a trace tells from a CPU worker only by its record. */
    static const char *const streams[] = {SL_TRACE_GPU_STREAMS};
    int pid = l->pid, tid = l->tid;
    if (l->name[0])
        snprintf(buf, len, "%s", l->name);
    else if (pid == 0)
        snprintf(buf, len, "CPU worker %d", tid);
    else if (tid >= 0 && tid < 3)
        snprintf(buf, len, "GPU %d %s", pid - 1, streams[tid]);
    else
        snprintf(buf, len, "GPU %d stream %d", pid - 1, tid);
    return buf;
}

int cmd_trace_render(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *title = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: sluice trace-render TRACE.json -o timeline.svg [--title TEXT]\n"
                   "Draws the tasks, copies and kernels of a trace written with --trace: a"
                   " lane per CPU\nworker, GPU worker thread and GPU stream, a time axis,"
                   " a legend; hovering a span\nshows its operator and length. The title is"
                   " TEXT, else the trace's file name.\n");
            return 0;
        }
        if (!strcmp(argv[i], "-o") && i + 1 < argc)
            out = argv[++i];
        else if (!strcmp(argv[i], "--title") && i + 1 < argc)
            title = argv[++i];
        else if (argv[i][0] == '-')
            return cli_usage_fail("trace-render: unknown option '%s'", argv[i]);
        else
            in = argv[i];
    }
    if (!in || !out)
        return cli_usage_fail("trace-render: needs TRACE.json and -o OUT.svg");
    FILE *f = cli_open_input(in, "trace");
    if (!f)
        return 1;
    int cap = 1024, n = 0, n_lanes = 0;
    struct span *sp = malloc((size_t)cap * sizeof *sp);
    struct lane lanes[MAX_LANES];
    char line[1024];
    double t0 = 1e300, t1 = 0;
    struct lane named[MAX_LANES];
    int n_named = 0;
    while (sp && fgets(line, sizeof line, f)) {
        struct span s;
        struct lane nl;
        const char *m = strstr(line, "{\"ph\":\"M\",\"name\":\"thread_name\"");
        if (m && n_named < MAX_LANES &&
            sscanf(m,
                   "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,"
                   "\"args\":{\"name\":\"%47[^\"]\"",
                   &nl.pid, &nl.tid, nl.name) == 3) {
            named[n_named++] = nl;
            continue;
        }
        if (sscanf(line,
                   "%*[^{]{\"ph\":\"X\",\"name\":\"%47[^\"]\",\"cat\":\"%15[^\"]\",\"pid\":%d,"
                   "\"tid\":%d,\"ts\":%lf,\"dur\":%lf",
                   s.name, s.cat, &s.pid, &s.tid, &s.ts, &s.dur) != 6 &&
            sscanf(line,
                   "{\"ph\":\"X\",\"name\":\"%47[^\"]\",\"cat\":\"%15[^\"]\",\"pid\":%d,"
                   "\"tid\":%d,\"ts\":%lf,\"dur\":%lf",
                   s.name, s.cat, &s.pid, &s.tid, &s.ts, &s.dur) != 6)
            continue;
        if (lane_of(lanes, &n_lanes, s.pid, s.tid) < 0)
            continue;
        if (n == cap) {
            cap *= 2;
            struct span *nv = realloc(sp, (size_t)cap * sizeof *sp);
            if (!nv)
                break;
            sp = nv;
        }
        sp[n++] = s;
        t0 = s.ts < t0 ? s.ts : t0;
        t1 = s.ts + s.dur > t1 ? s.ts + s.dur : t1;
    }
    fclose(f);
    if (!sp || n == 0) {
        free(sp);
        return cli_fail("'%s' has no spans (is it a trace written by sluice --trace?)", in);
    }
    for (int k = 0; k < n_named; k++)
        for (int l = 0; l < n_lanes; l++)
            if (lanes[l].pid == named[k].pid && lanes[l].tid == named[k].tid)
                snprintf(lanes[l].name, sizeof lanes[l].name, "%s", named[k].name);
    /* Lanes in order: CPU workers (the GPU workers' threads last), then each GPU's
     * streams. */
    for (int i = 1; i < n_lanes; i++)
        for (int j = i; j > 0 && (lanes[j].pid < lanes[j - 1].pid ||
                                  (lanes[j].pid == lanes[j - 1].pid && lanes[j].tid < lanes[j - 1].tid));
             j--) {
            struct lane tmp = lanes[j];
            lanes[j] = lanes[j - 1];
            lanes[j - 1] = tmp;
        }
    const double W = 1400, left = 160, right = 20, lane_h = 26, top = 56;
    const double span_ms = (t1 - t0) / 1e3, axis_y = top + n_lanes * lane_h;
    double H = axis_y + 70, scale = (W - left - right) / (t1 - t0 > 0 ? t1 - t0 : 1);
    FILE *o = fopen(out, "w");
    if (!o) {
        free(sp);
        return cli_fail("cannot write '%s': %s", out, strerror(errno));
    }
    const char *base = strrchr(in, '/') ? strrchr(in, '/') + 1 : in;
    fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" "
               "height=\"100%%\" fill=\"white\"/>\n", W, H);
    fprintf(o, "<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">%s</text>\n"
               "<text x=\"10\" y=\"40\" fill=\"#555\">%d spans over %.3f ms; hover a span for"
               " its operator and length</text>\n",
            title ? title : base, n, span_ms);
    /* The axis: a tick every 1, 2 or 5 times a power of ten, about ten in all. */
    static const double mult[3] = {1, 2, 5};
    double step = 1e-3;
    for (int k = 0; span_ms / step > 10 && k < 60; k++)
        step = mult[(k + 1) % 3] * pow(10, (k + 1) / 3 - 3);
    for (int k = 0; k * step <= span_ms * 1.0000001; k++) {
        double x = left + k * step * 1e3 * scale;
        fprintf(o, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#eee\"/>"
                   "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" fill=\"#555\">%g</text>\n",
                x, top, x, axis_y + 4, x, axis_y + 18, k * step);
    }
    fprintf(o, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\" fill=\"#555\">ms</text>\n",
            W - right, axis_y + 32);
    char label[64];
    for (int l = 0; l < n_lanes; l++) {
        double y = top + l * lane_h;
        fprintf(o, "<text x=\"8\" y=\"%.0f\">%s</text>\n", y + 17,
                lane_label(&lanes[l], label, sizeof label));
        fprintf(o, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#ccc\"/>\n",
                left, y + lane_h, W - right, y + lane_h);
    }
    for (int i = 0; i < n; i++) {
        int l = 0;
        while (l < n_lanes && !(lanes[l].pid == sp[i].pid && lanes[l].tid == sp[i].tid))
            l++;
        double x = left + (sp[i].ts - t0) * scale, w = sp[i].dur * scale, y = top + l * lane_h;
        fprintf(o, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\" "
                   "stroke=\"white\" stroke-width=\"0.3\"><title>%s %s %.1f us</title></rect>\n",
                x, y + 3, w < 0.5 ? 0.5 : w, lane_h - 6, colour(sp[i].cat), sp[i].cat,
                sp[i].name, sp[i].dur);
        /* The operator's name inside a span wide enough for it (about 6.5 px a letter). */
        if (w > 6.5 * (double)strlen(sp[i].name) + 6)
            fprintf(o, "<text x=\"%.2f\" y=\"%.0f\" font-size=\"11\" fill=\"white\" "
                       "pointer-events=\"none\">%s</text>\n",
                    x + 3, y + 17, sp[i].name);
    }
    static const char *const cats[] = {"task", "copy_h2d", "kernel", "copy_d2h"};
    static const char *const names[] = {"host work (a task's CPU phase)",
                                        "copy host to device", "GPU kernels of a task",
                                        "copy device to host"};
    for (int k = 0; k < 4; k++)
        fprintf(o, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"14\" fill=\"%s\"/>"
                   "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n",
                left + k * 250, H - 26, colour(cats[k]), left + k * 250 + 20, H - 14, names[k]);
    fprintf(o, "</svg>\n");
    int rc = fclose(o) == 0 ? 0 : cli_fail("cannot write '%s'", out);
    free(sp);
    return rc;
}
