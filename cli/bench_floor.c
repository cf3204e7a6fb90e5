/* Bandwidth floors of the benchmarks, right for where the data lives
 * (docs/BENCH_PROTOCOL.md, "Floors"):
 *   CPU run:                   (bytes in + bytes out) / host memory bandwidth
 *   GPU run, data on the GPU:  (bytes in + bytes out) / device copy bandwidth
 *   GPU run, data on the host: max(bytes in / host->device, bytes out / device->host);
 *                              for a sort the sum (its first output needs its last input)
 * Both memory bandwidths count bytes read + written (a copy of B bytes moves 2B), so a
 * floor is a time no run can beat. Every bandwidth is measured in the bench's own run,
 * with probes sized to the data: large enough to leave the caches, never more than the
 * benchmark needs (a 2^10-row sort does not copy 1 GiB). Only the public API is used. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define PROBE_MIN ((int64_t)64 << 20)
#define PROBE_MAX ((int64_t)1 << 30)

int64_t bench_probe_bytes(double data_bytes)
{
    double b = 2 * data_bytes;
    return b < (double)PROBE_MIN ? PROBE_MIN : b > (double)PROBE_MAX ? PROBE_MAX : (int64_t)b;
}

struct copy_arg {
    char *dst;
    const char *src;
    size_t bytes;
};

static void *copy_main(void *p)
{
    struct copy_arg *a = p;
    memcpy(a->dst, a->src, a->bytes);
    return NULL;
}

/* Median over 5 runs of `threads` threads each copying bytes / threads; GB/s read +
 * written. */
double bench_memcpy_gbps(int64_t bytes, int threads)
{
    char *src = malloc((size_t)bytes), *dst = malloc((size_t)bytes);
    if (!src || !dst || threads < 1) {
        free(src);
        free(dst);
        return 0;
    }
    memset(src, 1, (size_t)bytes);
    memset(dst, 2, (size_t)bytes);
    double ms[5];
    int n = threads > 64 ? 64 : threads;
    size_t part = (size_t)bytes / (size_t)n;
    for (int r = 0; r < 5; r++) {
        pthread_t th[64];
        struct copy_arg args[64];
        int64_t t0 = cli_now_ns();
        for (int i = 0; i < n; i++) {
            args[i] = (struct copy_arg){dst + part * (size_t)i, src + part * (size_t)i, part};
            pthread_create(&th[i], NULL, copy_main, &args[i]);
        }
        for (int i = 0; i < n; i++)
            pthread_join(th[i], NULL);
        ms[r] = (cli_now_ns() - t0) / 1e6;
    }
    free(src);
    free(dst);
    double med = bench_median(ms, 5);
    return med > 0 ? 2.0 * (double)(part * (size_t)n) / (med * 1e6) : 0;
}

/* The first usable GPU's device index, or -1. */
static int first_gpu(sl_engine_t *eng)
{
    struct sl_device_info d = SL_DEVICE_INFO_INIT;
    for (int i = 1; i < sl_engine_device_count(eng); i++)
        if (sl_engine_device_info(eng, i, &d) == SL_OK && d.usable)
            return i;
    return -1;
}

double bench_device_copy_gbps(sl_engine_t *eng, int64_t bytes)
{
    double gbps = 0;
    int dev = first_gpu(eng);
    if (dev < 0 || sl_engine_measure_device_copy(eng, dev, bytes, &gbps) < 0)
        return 0;
    return gbps;
}

double bench_gpu_fp32_peak(sl_engine_t *eng)
{
    double gflops = 0;
    int dev = first_gpu(eng);
    if (dev < 0 || sl_engine_device_fp32_peak(eng, dev, &gflops) < 0)
        return 0;
    return gflops;
}

void bench_floor_measure(sl_engine_t *eng, enum bench_where where, double bytes_in,
                         double bytes_out, struct bench_floor *f)
{
    memset(f, 0, sizeof *f);
    f->probe_bytes = bench_probe_bytes(bytes_in + bytes_out);
    if (where == BENCH_ON_CPU) {
        f->kind = "memory";
        f->in_gbps = f->out_gbps = bench_memcpy_gbps(f->probe_bytes, sl_engine_num_threads(eng));
    } else if (where == BENCH_ON_GPU) {
        f->kind = "device_copy";
        f->in_gbps = f->out_gbps = bench_device_copy_gbps(eng, f->probe_bytes);
    } else {
        f->kind = "link";
        f->probe_bytes = 0; /* sl_engine_measure_links uses its own 64 MiB copies */
        struct sl_device_info di = SL_DEVICE_INFO_INIT;
        int dev = first_gpu(eng);
        if (dev >= 0 && sl_engine_measure_links(eng) == SL_OK &&
            sl_engine_device_info(eng, dev, &di) == SL_OK) {
            f->in_gbps = di.h2d_gbps;
            f->out_gbps = di.d2h_gbps;
        }
    }
    if (f->in_gbps <= 0 || f->out_gbps <= 0)
        return; /* not measured: no floor */
    if (where == BENCH_LINK || where == BENCH_LINK_SERIAL) {
        double up = bytes_in / (f->in_gbps * 1e6), down = bytes_out / (f->out_gbps * 1e6);
        f->ms = where == BENCH_LINK_SERIAL ? up + down : up > down ? up : down;
    } else {
        f->ms = (bytes_in + bytes_out) / (f->in_gbps * 1e6);
    }
}

int bench_floor_json(const struct bench_floor *f, double time_ms, char *out, size_t len)
{
    if (!f->kind)
        return snprintf(out, len, "%s", "");
    return snprintf(out, len,
                    ",\"floor\":\"%s\",\"floor_in_gbps\":%.3f,\"floor_out_gbps\":%.3f"
                    ",\"probe_bytes\":%lld,\"floor_ms\":%.6g,\"x_floor\":%.2f",
                    f->kind, f->in_gbps, f->out_gbps, (long long)f->probe_bytes, f->ms,
                    f->ms > 0 ? time_ms / f->ms : 0);
}
