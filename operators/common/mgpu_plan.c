/* The multi-device plans (mgpu_plan.h). */
#include "mgpu_plan.h"

#include <stdio.h>
#include <stdlib.h>

void sl__mg_balance_ranges(const int64_t *sizes, int n_parts, int n_dev, int *first)
{
    int64_t total = 0;
    for (int p = 0; p < n_parts; p++)
        total += sizes[p];
    first[0] = 0;
    int p = 0;
    int64_t before = 0; /* sizes of partitions [0, p) */
    for (int d = 1; d < n_dev; d++) {
        /* ideal cut d * total / n_dev without overflow for large totals */
        int64_t ideal = total / n_dev * d + total % n_dev * d / n_dev;
        while (p < n_parts && before + sizes[p] <= ideal)
            before += sizes[p++];
        /* the boundary after partition p is nearer the ideal than the one before it */
        if (p < n_parts && ideal - before > before + sizes[p] - ideal)
            before += sizes[p++];
        first[d] = p;
    }
    first[n_dev] = n_parts;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void sl__mg_splitters_i64(int64_t *samples, int64_t n, int n_dev, int64_t *split)
{
    if (n == 0) {
        for (int j = 0; j + 1 < n_dev; j++)
            split[j] = INT64_MAX;
        return;
    }
    qsort(samples, (size_t)n, sizeof *samples, cmp_i64);
    for (int j = 0; j + 1 < n_dev; j++)
        split[j] = samples[(j + 1) * n / n_dev];
}

void sl__mg_recv_layout(const int64_t *count, int n_dev, int64_t *base, int64_t *total)
{
    for (int d = 0; d < n_dev; d++) {
        int64_t at = 0;
        for (int s = 0; s < n_dev; s++) {
            base[s * n_dev + d] = at;
            at += count[s * n_dev + d];
        }
        total[d] = at;
    }
}

void sl__mg_chunk_moves(const uint32_t *hist, const int *first, int n_dev, int64_t *cnt,
                        int64_t *off)
{
    int64_t at = 0;
    for (int d = 0; d < n_dev; d++) {
        int64_t rows = 0;
        for (int p = first[d]; p < first[d + 1]; p++)
            rows += hist[p];
        off[d] = at;
        cnt[d] = rows;
        at += rows;
    }
}

int64_t sl__mg_packet_rows(size_t packet_bytes, int row_bytes)
{
    int64_t r = (int64_t)(packet_bytes / (size_t)row_bytes);
    return r > 0 ? r : 1;
}

int64_t sl__mg_packets(int64_t rows, int64_t packet_rows)
{
    return (rows + packet_rows - 1) / packet_rows;
}

void sl__mg_cost(const int64_t *count, int n_dev, int row_bytes, double gbps,
                 struct sl__mg_cost *out)
{
    *out = (struct sl__mg_cost){0};
    double slowest = 0;
    for (int d = 0; d < n_dev; d++) {
        int64_t in = 0;
        for (int s = 0; s < n_dev; s++) {
            int64_t b = s == d ? 0 : count[s * n_dev + d] * row_bytes;
            out->link_bytes[s * SL__MG_MAX_DEV + d] = b;
            in += b;
        }
        out->total_bytes += in;
        double t = gbps > 0 ? (double)in / (gbps * 1e9) : 0;
        if (t > slowest)
            slowest = t;
    }
    out->seconds = slowest;
}

/* snprintf at buf + at, or only counting once the buffer is full. */
#define APPEND(...)                                                                        \
    do {                                                                                   \
        int w_ = at < len ? snprintf(buf + at, len - at, __VA_ARGS__)                      \
                          : snprintf(NULL, 0, __VA_ARGS__);                                \
        at += (size_t)(w_ > 0 ? w_ : 0);                                                   \
    } while (0)

int sl__mg_cost_text(const struct sl__mg_cost *c, int n_dev, char *buf, size_t len)
{
    size_t at = 0;
    for (int s = 0; s < n_dev; s++)
        for (int d = 0; d < n_dev; d++) {
            int64_t b = c->link_bytes[s * SL__MG_MAX_DEV + d];
            if (s == d || b == 0)
                continue;
            APPEND("exchange: %d->%d %.1f MiB\n", s, d, (double)b / (1 << 20));
        }
    APPEND("exchange: %.1f MiB over %d devices, estimated %.3f ms\n",
           (double)c->total_bytes / (1 << 20), n_dev, c->seconds * 1e3);
    return (int)at;
}
