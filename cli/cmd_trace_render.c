/* sluice trace-render TRACE.json -o timeline.svg: draws the spans of a sluice trace, one
 * lane per device and worker or stream, coloured by kind (task, host->device copy,
 * kernel, device->host copy), so copy/compute overlap can be seen. It reads the traces
 * sluice writes (one event per line), not arbitrary Chrome traces. */
#include <errno.h>
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
    lanes[*n] = (struct lane){pid, tid};
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

static const char *lane_label(int pid, int tid, char *buf, size_t len)
{
    static const char *streams[] = {"h2d", "compute", "d2h"};
    if (pid == 0)
        snprintf(buf, len, "CPU worker %d", tid);
    else
        snprintf(buf, len, "GPU %d %s", pid - 1, tid >= 0 && tid < 3 ? streams[tid] : "stream");
    return buf;
}

int cmd_trace_render(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: sluice trace-render TRACE.json -o timeline.svg\n"
                   "Draws the tasks, copies and kernels of a trace written with --trace.\n");
            return 0;
        }
        if (!strcmp(argv[i], "-o") && i + 1 < argc)
            out = argv[++i];
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
    while (sp && fgets(line, sizeof line, f)) {
        struct span s;
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
    /* Lanes in order: CPU workers, then each GPU's streams. */
    for (int i = 1; i < n_lanes; i++)
        for (int j = i; j > 0 && (lanes[j].pid < lanes[j - 1].pid ||
                                  (lanes[j].pid == lanes[j - 1].pid && lanes[j].tid < lanes[j - 1].tid));
             j--) {
            struct lane tmp = lanes[j];
            lanes[j] = lanes[j - 1];
            lanes[j - 1] = tmp;
        }
    const double W = 1400, left = 150, lane_h = 28, top = 40;
    double H = top + n_lanes * lane_h + 60, scale = (W - left - 20) / (t1 - t0 > 0 ? t1 - t0 : 1);
    FILE *o = fopen(out, "w");
    if (!o) {
        free(sp);
        return cli_fail("cannot write '%s': %s", out, strerror(errno));
    }
    fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" "
               "height=\"100%%\" fill=\"white\"/>\n", W, H);
    fprintf(o, "<text x=\"10\" y=\"20\" font-size=\"14\">%s: %d spans, %.3f ms</text>\n", in, n,
            (t1 - t0) / 1e3);
    char label[64];
    for (int l = 0; l < n_lanes; l++) {
        double y = top + l * lane_h;
        fprintf(o, "<text x=\"8\" y=\"%.0f\">%s</text>\n", y + 18,
                lane_label(lanes[l].pid, lanes[l].tid, label, sizeof label));
        fprintf(o, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#ddd\"/>\n",
                left, y + lane_h, W - 20, y + lane_h);
    }
    for (int i = 0; i < n; i++) {
        int l = 0;
        while (l < n_lanes && !(lanes[l].pid == sp[i].pid && lanes[l].tid == sp[i].tid))
            l++;
        double x = left + (sp[i].ts - t0) * scale, w = sp[i].dur * scale;
        fprintf(o, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\">"
                   "<title>%s %s %.1f us</title></rect>\n",
                x, top + l * lane_h + 4, w < 0.5 ? 0.5 : w, lane_h - 8, colour(sp[i].cat),
                sp[i].cat, sp[i].name, sp[i].dur);
    }
    const char *cats[] = {"task", "copy_h2d", "kernel", "copy_d2h"};
    for (int k = 0; k < 4; k++)
        fprintf(o, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"14\" fill=\"%s\"/>"
                   "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n",
                left + k * 150, H - 30, colour(cats[k]), left + k * 150 + 20, H - 19, cats[k]);
    fprintf(o, "<text x=\"%.0f\" y=\"%.0f\">0</text><text x=\"%.0f\" y=\"%.0f\" "
               "text-anchor=\"end\">%.3f ms</text>\n</svg>\n",
            left, top + n_lanes * lane_h + 14, W - 20, top + n_lanes * lane_h + 14, (t1 - t0) / 1e3);
    int rc = fclose(o) == 0 ? 0 : cli_fail("cannot write '%s'", out);
    free(sp);
    return rc;
}
