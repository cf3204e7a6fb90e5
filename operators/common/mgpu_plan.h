/* The device-independent decisions of the multi-device join and sort (docs/MULTI_GPU.md):
 * which device takes which hash partitions (contiguous ranges balanced by size), the
 * splitters of a range-partitioned sort, where each sender's rows land on a receiver,
 * how rows are cut into packets, and what the exchange costs per link. Plain C, unit
 * tested without a GPU (tests/unit/test_mgpu_plan.c). */
#ifndef SL_OPERATORS_MGPU_PLAN_H
#define SL_OPERATORS_MGPU_PLAN_H

#include <stddef.h>
#include <stdint.h>

#define SL__MG_MAX_DEV 16

/* Cuts partitions 0..n_parts-1 (sizes[p] rows or bytes, any skew) into n_dev contiguous
 * ranges: device d takes [first[d], first[d + 1]), first[0] = 0, first[n_dev] = n_parts.
 * Each cut goes to the partition boundary nearest to the ideal share d * total / n_dev,
 * so the largest range exceeds the ideal by at most one partition. */
void sl__mg_balance_ranges(const int64_t *sizes, int n_parts, int n_dev, int *first);

/* n_dev - 1 splitters from `n` samples (sorted here, in place): split[j] = the sample at
 * rank (j + 1) * n / n_dev. Device d takes keys k with split[d - 1] <= k < split[d]
 * (device 0 everything below split[0], the last everything from split[n_dev - 2] on), so
 * equal keys never straddle two devices. n == 0 gives all splitters INT64_MAX (device 0
 * takes everything). */
void sl__mg_splitters_i64(int64_t *samples, int64_t n, int n_dev, int64_t *split);

/* Receive layout: count[s * n_dev + d] rows go from sender s to receiver d. base[s *
 * n_dev + d] = where sender s's rows start in receiver d's array (senders in order, so
 * a receiver keeps the input order of equal keys), total[d] = rows receiver d gets. */
void sl__mg_recv_layout(const int64_t *count, int n_dev, int64_t *base, int64_t *total);

/* The pipelined exchange's moves of one chunk of a device's rows (the multi-device hash
 * join): hist[p] = the chunk's rows in partition p, and the chunk, once partitioned,
 * holds them sorted by partition; receiver d takes partitions [first[d], first[d + 1]):
 * cnt[d] of the chunk's rows, from row off[d] of the partitioned chunk on. */
void sl__mg_chunk_moves(const uint32_t *hist, const int *first, int n_dev, int64_t *cnt,
                        int64_t *off);

/* Rows per packet for rows of row_bytes in packets of at most packet_bytes (>= 1). */
int64_t sl__mg_packet_rows(size_t packet_bytes, int row_bytes);
/* Packets needed for `rows` rows. */
int64_t sl__mg_packets(int64_t rows, int64_t packet_rows);

/* The exchange's estimate: bytes on each link (sender s to receiver d; s == d stays
 * local and is not counted), and the time if every receiver takes its incoming bytes at
 * gbps (GB/s) and receivers work in parallel. */
#define SL__MG_LINK_GBPS 200.0 /* a link's rate for the estimate, unless told another */
struct sl__mg_cost {
    int64_t link_bytes[SL__MG_MAX_DEV * SL__MG_MAX_DEV];
    int64_t total_bytes;
    double seconds;
};
void sl__mg_cost(const int64_t *count, int n_dev, int row_bytes, double gbps,
                 struct sl__mg_cost *out);
/* Writes the estimate as text, one line per link with bytes ("exchange: 0->1 12.0 MiB
 * ..."), then the total and the estimated time. Returns the length, as snprintf. */
int sl__mg_cost_text(const struct sl__mg_cost *c, int n_dev, char *buf, size_t len);

#endif
