/* Tracing: spans of tasks, copies and kernels, written as Chrome trace-event JSON
 * (opens in Perfetto and chrome://tracing). Each worker appends to its own buffer
 * without locks; the buffers are written out when the query ends. */
#ifndef SLUICE_RUNTIME_TRACE_H
#define SLUICE_RUNTIME_TRACE_H

#include <stdint.h>

#include "internal.h"

enum sl__trace_kind { SL__TR_TASK = 0, SL__TR_COPY_H2D = 1, SL__TR_COPY_D2H = 2, SL__TR_KERNEL = 3 };

struct sl__trace_event {
    int64_t start_ns, end_ns;        /* relative to the trace's origin */
    const char *name;                /* static string (operator name, "h2d", ...) */
    int32_t device;                  /* -1 = CPU, else GPU ordinal */
    int32_t lane;                    /* CPU worker id or GPU stream index */
    int64_t bytes;                   /* copies: bytes moved */
    int64_t rows;
    enum sl__trace_kind kind;
};

struct sl__trace_buf {
    struct sl__trace_event *ev;
    int64_t n, cap;
};

#define SL__TRACE_MAX_GPU 16
struct sl__trace {
    int n_bufs;                      /* one per worker */
    int64_t gpu_skew_ns[SL__TRACE_MAX_GPU]; /* added to GPU g's spans (sl__gpu_clock_skew) */
    int n_cpu;                       /* workers below it are CPU workers, the rest GPU ones */
    struct sl__trace_buf *bufs;
    int64_t origin_ns;
};

/* n_workers buffers, the first n_cpu of CPU workers (the rest the GPU workers' threads). */
int sl__trace_init(struct sl__trace *t, int n_workers, int n_cpu, int64_t origin_ns);
void sl__trace_fini(struct sl__trace *t);
/* Appends an event to worker w's buffer (only worker w appends there). Drops the event
 * if memory runs out: tracing never fails a query. */
void sl__trace_add(struct sl__trace *t, int w, const struct sl__trace_event *e);
/* Writes all events as a Chrome trace JSON array, with a name for every device
 * ("process") and lane ("thread"): CPU worker i, GPU worker i (the host work of a GPU
 * worker's thread), and per GPU its h2d, compute and d2h streams. */
int sl__trace_write(const struct sl__trace *t, const char *path, char *err, size_t err_len);

#endif /* SLUICE_RUNTIME_TRACE_H */
