/* Chrome trace-event JSON: one "X" (complete) event per span; pid = device (0 = CPU,
 * 1 + g = GPU g), tid = worker or stream, so Perfetto draws one track per worker and
 * per stream and copy/compute overlap is visible. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "trace.h"

int sl__trace_init(struct sl__trace *t, int n_workers, int n_cpu, int64_t origin_ns)
{
    memset(t, 0, sizeof *t);
    t->n_cpu = n_cpu;
    t->bufs = sl__calloc((size_t)n_workers, sizeof *t->bufs);
    if (!t->bufs)
        return SL_ENOMEM;
    t->n_bufs = n_workers;
    t->origin_ns = origin_ns;
    return SL_OK;
}

void sl__trace_fini(struct sl__trace *t)
{
    for (int i = 0; t->bufs && i < t->n_bufs; i++)
        sl__free(t->bufs[i].ev, 0);
    sl__free(t->bufs, 0);
    t->bufs = NULL;
}

void sl__trace_add(struct sl__trace *t, int w, const struct sl__trace_event *e)
{
    if (!t->bufs || w < 0 || w >= t->n_bufs)
        return;
    struct sl__trace_buf *b = &t->bufs[w];
    if (b->n == b->cap) {
        int64_t cap = b->cap ? b->cap * 2 : 1024;
        struct sl__trace_event *nv = sl__realloc(b->ev, (size_t)b->cap * sizeof *nv,
                                                 (size_t)cap * sizeof *nv);
        if (!nv)
            return;
        b->ev = nv;
        b->cap = cap;
    }
    b->ev[b->n++] = *e;
}

static const char *kind_cat(enum sl__trace_kind k)
{
    switch (k) {
    case SL__TR_COPY_H2D:
        return "copy_h2d";
    case SL__TR_COPY_D2H:
        return "copy_d2h";
    case SL__TR_KERNEL:
        return "kernel";
    default:
        return "task";
    }
}

int sl__trace_write(const struct sl__trace *t, const char *path, char *err, size_t err_len)
{
    /* Replaced whole (or written in place to a device or FIFO): out_file.c. */
    struct sl__out_file out;
    int rc = sl__out_file_open(&out, path, err, err_len);
    FILE *f = rc == SL_OK ? sl__out_file_stream(&out, err, err_len) : NULL;
    if (!f)
        return rc == SL_OK ? SL_EIO : rc;
    fprintf(f, "[\n");
    bool first = true;
    /* Name the tracks: process per device, thread per worker or stream (each lane that
     * has a span, in the order first seen; at most MAX_NAMED are named). */
    enum { MAX_NAMED = 512 };
    struct {
        int dev, lane;
    } seen[MAX_NAMED];
    int n_seen = 0, max_dev = -1;
    for (int w = 0; w < t->n_bufs; w++)
        for (int64_t i = 0; i < t->bufs[w].n; i++) {
            const struct sl__trace_event *e = &t->bufs[w].ev[i];
            max_dev = e->device > max_dev ? e->device : max_dev;
            int k = 0;
            while (k < n_seen && (seen[k].dev != e->device || seen[k].lane != e->lane))
                k++;
            if (k == n_seen && n_seen < MAX_NAMED) {
                seen[k].dev = e->device;
                seen[k].lane = e->lane;
                n_seen++;
            }
        }
    for (int d = -1; d <= max_dev; d++) {
        char name[32];
        snprintf(name, sizeof name, d < 0 ? "CPU" : "GPU %d", d);
        fprintf(f, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":"
                   "\"%s\"}}",
                first ? "" : ",\n", d + 1, name);
        first = false;
    }
    static const char *const streams[] = {SL_TRACE_GPU_STREAMS};
    for (int k = 0; k < n_seen; k++) {
        char name[64];
        int lane = seen[k].lane;
        if (seen[k].dev >= 0 && lane >= 0 && lane < 3)
            snprintf(name, sizeof name, "GPU %d %s", seen[k].dev, streams[lane]);
        else if (seen[k].dev >= 0)
            snprintf(name, sizeof name, "GPU %d stream %d", seen[k].dev, lane);
        else if (lane >= t->n_cpu)
            snprintf(name, sizeof name, "GPU worker %d (host)", lane - t->n_cpu);
        else
            snprintf(name, sizeof name, "CPU worker %d", lane);
        fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,"
                   "\"args\":{\"name\":\"%s\"}}",
                seen[k].dev + 1, lane, name);
    }
    for (int w = 0; w < t->n_bufs; w++) {
        for (int64_t i = 0; i < t->bufs[w].n; i++) {
            const struct sl__trace_event *e = &t->bufs[w].ev[i];
            int64_t skew = e->device >= 0 && e->device < SL__TRACE_MAX_GPU
                               ? t->gpu_skew_ns[e->device] : 0;
            fprintf(f,
                    ",\n{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"%s\",\"pid\":%d,\"tid\":%d,"
                    "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"bytes\":%" PRId64 ",\"rows\":%" PRId64
                    "}}",
                    e->name, kind_cat(e->kind), e->device + 1, e->lane,
                    (e->start_ns + skew - t->origin_ns) / 1e3, (e->end_ns - e->start_ns) / 1e3,
                    e->bytes, e->rows);
        }
    }
    fprintf(f, "\n]\n");
    return sl__out_file_commit(&out, err, err_len);
}
