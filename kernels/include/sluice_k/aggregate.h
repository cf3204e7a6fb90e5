/* GPU hash group-by (issue 7): count(*), count, sum, min, max, avg over int32/int64 keys
 * (one or several columns; null keys form one group) and int32/int64/float32/float64
 * values. STYLE.md §8 launchers: stream last, never allocate or synchronize, return
 * cudaGetLastError(); sizes the host must know (group counts) are read by the caller.
 *
 * States. Integer sums are exact in 128 bits (lo word + hi word, carries propagated with
 * atomics), so a sum overflows int64 only if its final value does, whatever the order;
 * the output kernels write SL_EOVERFLOW (-12, include/sluice/error.h) to *d_status when
 * one does. Float sums are float64 (atomicAdd order: not bit-reproducible, tests allow a
 * relative 1e-9). Min/max of floats compare an order-preserving int64 encoding (NaN not
 * specified).
 *
 * Three ways (chosen by the caller, decided by measurement, see bench/results_gpuagg.md):
 *  table       sl_k_agg_update: each block pre-aggregates its rows in a shared-memory
 *              table, then merges its groups into a global lock-free table (dense group
 *              ids); rows that do not fit the shared table go to the global table
 *              directly. Best while the groups are few (they fit shared memory).
 *  partitioned sl_k_agg_part_count + sl_k_agg_part_scatter radix-partition each batch by
 *              hash bits into a buffer; sl_k_agg_part_final aggregates one partition per
 *              block in shared memory (rounds if a partition has more groups than fit)
 *              and writes the output columns directly. For many groups.
 *  records     sl_k_agg_direct_*: one record per group in a global open-addressing table,
 *              for one integer key and integer aggregates without nulls (the common case)
 *              and many groups; the caller partitions by hash first (as above, few bits)
 *              so that the table region in use stays in L2.
 * No way can lose rows: a full global table sends rows to an overflow list, groups of a
 * shared table go to a spill table, and rows the record table found no room for are
 * counted; the caller grows the table and replays them.
 */
#ifndef SLUICE_K_AGGREGATE_H
#define SLUICE_K_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SL_K_AGG_MAX_KEYS 4
#define SL_K_AGG_MAX_AGGS 8

/* Same order as the CPU operator's enum agg_fn (operators/aggregate/agg_int.h). */
enum { SL_K_AGG_COUNT_STAR, SL_K_AGG_COUNT, SL_K_AGG_SUM, SL_K_AGG_MIN, SL_K_AGG_MAX,
       SL_K_AGG_AVG };
enum { SL_K_I32, SL_K_I64, SL_K_F32, SL_K_F64 };

struct sl_k_agg_spec {
    int n_keys;                       /* 0..SL_K_AGG_MAX_KEYS (0: one global group) */
    int key_type[SL_K_AGG_MAX_KEYS];  /* SL_K_I32 / SL_K_I64 */
    int n_aggs;                       /* 0..SL_K_AGG_MAX_AGGS */
    int fn[SL_K_AGG_MAX_AGGS];        /* SL_K_AGG_* */
    int in_type[SL_K_AGG_MAX_AGGS];   /* SL_K_* of the input column (unused for count(*)) */
    /* Integer sums written as 16-byte two's complement (decimal128: lo word, hi word),
     * which cannot overflow; 0 = int64 (overflow -> SL_EOVERFLOW). */
    int sum128[SL_K_AGG_MAX_AGGS];
    /* Divisor of an integer average before the count (a decimal's 10^scale; 0 = 1). */
    double avg_unit[SL_K_AGG_MAX_AGGS];
};

struct sl_k_agg_col {
    const void *d_data;               /* element 0 */
    const uint8_t *d_valid;           /* Arrow validity bitmap (LSB first) or NULL */
    int64_t valid_off;                /* bit of element 0 in d_valid */
};

/* Rows to aggregate: row i is element d_rowidx[i] (or i) of the columns. If d_nullbits is
 * set it replaces the bitmaps: bit j = key j null, bit 16 + a = value of aggregate a null. */
struct sl_k_agg_input {
    int64_t n;
    struct sl_k_agg_col keys[SL_K_AGG_MAX_KEYS];
    struct sl_k_agg_col vals[SL_K_AGG_MAX_AGGS];
    const uint32_t *d_nullbits;
    const uint32_t *d_rowidx;
};

/* A global table of at most `cap` groups with dense ids [0, *d_n). Carved out of one
 * device block by sl_k_agg_table_carve; cleared by sl_k_agg_table_clear. */
struct sl_k_agg_table {
    int64_t cap;
    uint64_t n_slots;                        /* power of two >= 2 * cap */
    unsigned long long *d_slots;             /* 0 empty; hash tag << 32 | (gid + 1) */
    unsigned long long *d_n;                 /* [0] groups, [1] rows sent to overflow,
                                                [2] groups sent to spill, [3] groups lost
                                                (a spill table too small: must stay 0) */
    int64_t *d_keys;                         /* key j of group g: d_keys[j * cap + g] */
    uint32_t *d_nulls;                       /* key null mask per group */
    unsigned long long *d_rows;              /* rows per group */
    unsigned long long *d_v0[SL_K_AGG_MAX_AGGS]; /* lo of int sums, f64 sum bits, min/max */
    long long *d_v1[SL_K_AGG_MAX_AGGS];      /* hi of int sums (NULL otherwise) */
    unsigned long long *d_nn[SL_K_AGG_MAX_AGGS]; /* null values skipped (NULL for count(*)) */
};

/* Output columns: d_cols[j] for key j, d_cols[n_keys + a] for aggregate a (types as the
 * CPU operator: keys keep their type; count int64; sum int64, float64 or (spec.sum128)
 * 16 bytes; avg float64; min/max the input type). d_valid[c] are 32-bit-word bitmaps the caller set to all ones
 * (NULL where the column never has nulls: count columns); the kernels clear bits of null
 * values and add to d_null_count[c]. At most `cap` rows are written; *d_count receives the
 * number of groups (also those that did not fit, for count -> allocate -> write). */
struct sl_k_agg_out {
    void *d_cols[SL_K_AGG_MAX_KEYS + SL_K_AGG_MAX_AGGS];
    uint32_t *d_valid[SL_K_AGG_MAX_KEYS + SL_K_AGG_MAX_AGGS];
    unsigned long long *d_null_count;        /* n_keys + n_aggs counters, zeroed by caller */
    unsigned long long *d_count;             /* zeroed by caller */
    int64_t cap;
};

/* --- global table --- */
/* Device bytes of a table for cap groups. */
size_t sl_k_agg_table_bytes(const struct sl_k_agg_spec *spec, int64_t cap);
/* Fills *tb with pointers into d_mem (sl_k_agg_table_bytes bytes, 256-byte aligned). */
void sl_k_agg_table_carve(const struct sl_k_agg_spec *spec, int64_t cap, void *d_mem,
                          struct sl_k_agg_table *tb);
/* Empties the table (slots and counters). */
cudaError_t sl_k_agg_table_clear(const struct sl_k_agg_table *tb, cudaStream_t stream);

/* Aggregates `in` into tb (method table). Rows whose group cannot be added (tb full) get
 * their index appended to d_overflow_rows (room for in->n; tb->d_n[1] counts them; NULL:
 * only counted, for a caller that runs all rows again into a bigger table); a
 * block's shared-table groups that cannot be merged go to `spill` (a table of at least
 * sl_k_agg_spill_cap() groups, cleared by the caller; tb->d_n[2] counts them). Either may
 * only happen when tb->d_n[0] reaches tb->cap. shared_groups: capacity of each block's
 * shared table (0: default; -1: no shared table, global atomics only; measured). flags:
 * SL_K_AGG_PRELOAD loads the first two aggregates' values with the keys (one memory wait
 * per tile, one block per SM) instead of after the lookups (two waits, two blocks).
 * SL_K_AGG_SMALL (for an input expected to hold at most a few thousand groups): one int32
 * or int64 key and count/sum/avg/min/max of int32/int64 values, all without nulls, take
 * a per-block shared hash table of stored keys merged once per block (kernels/aggregate/
 * aggregate_small.cuh); other inputs ignore the flag. Same results and contract.
 * SL_K_AGG_SMALL_SPLIT (with SL_K_AGG_SMALL): the shared sums take two 32-bit atomics
 * (the high one rarely) instead of one 64-bit atomic.
 * SL_K_AGG_PACK (with SL_K_AGG_SMALL; implies SL_K_AGG_SMALL_SPLIT): a row's count and its
 * value of the first integer sum take one 32-bit shared atomic when the value is within
 * +-2^23 (aggregate_small.cuh, pack_add), instead of one for each; not where the extra
 * 8 bytes a slot would cost the shared table slots (many states: then as without it).
 * SL_K_AGG_LEAN (with SL_K_AGG_SMALL): a spec whose only state is one integer sum
 * (count(*), count, one sum or avg) takes a kernel specialized for it (lean_update_kernel);
 * before SL_K_AGG_PACK.
 * SL_K_AGG_FEW (for an input expected to hold a few dozen groups at most): no key, one
 * int32/int64 key or two int32 keys, count(*), count and up to six sum/avg/min/max of
 * int32/int64 values, all without nulls, take a kernel that keeps each thread's first
 * groups in registers (kernels/aggregate/aggregate_few.cuh; rows in place or by number,
 * d_rowidx); others as without it. */
enum { SL_K_AGG_PRELOAD = 1, SL_K_AGG_SMALL = 2, SL_K_AGG_SMALL_SPLIT = 8, SL_K_AGG_FEW = 16,
       SL_K_AGG_PACK = 32, SL_K_AGG_LEAN = 64 };
cudaError_t sl_k_agg_update(const struct sl_k_agg_spec *spec, const struct sl_k_agg_input *in,
                            const struct sl_k_agg_table *tb, uint32_t *d_overflow_rows,
                            const struct sl_k_agg_table *spill, int shared_groups, int flags,
                            cudaStream_t stream);
/* Groups a spill table for sl_k_agg_update must hold (depends on the GPU). */
int64_t sl_k_agg_spill_cap(const struct sl_k_agg_spec *spec, int shared_groups);
/* Merges groups [0, *src->d_n) of src into dst (growing a table: carve a bigger one,
 * merge, drop the old). dst must have room (the caller checks dst->cap). */
cudaError_t sl_k_agg_table_merge(const struct sl_k_agg_spec *spec,
                                 const struct sl_k_agg_table *src,
                                 const struct sl_k_agg_table *dst, cudaStream_t stream);
/* Writes groups [0, *tb->d_n) as output rows [0, n) (n <= out->cap, the caller read n). */
cudaError_t sl_k_agg_table_output(const struct sl_k_agg_spec *spec,
                                  const struct sl_k_agg_table *tb, const struct sl_k_agg_out *out,
                                  int32_t *d_status, cudaStream_t stream);

/* Estimates distinct groups: inserts the 64-bit hashes of m rows spread over `in` into a
 * set in d_temp and adds the number of distinct hashes to d_counts[0], and the number of
 * those rows whose next row has another key to d_counts[1] (both zeroed by the caller).
 * Two-call temp storage. sl_k_agg_estimate_groups turns (n, m, distinct, changes) into an
 * estimate of the groups of all n rows (host function): the smaller of what the distinct
 * count says of equally likely groups drawn at random and of the bound 1 + changes
 * extrapolated to n rows (changes < 0: the first only); *clustered (may be NULL) is set
 * when the bound is below half the first (the input comes in runs of a key, as one sorted
 * by it does). */
cudaError_t sl_k_agg_sample_distinct(void *d_temp, size_t *temp_bytes,
                                     const struct sl_k_agg_spec *spec,
                                     const struct sl_k_agg_input *in, int64_t m,
                                     unsigned long long *d_counts, cudaStream_t stream);
double sl_k_agg_estimate_groups(int64_t n, int64_t m, int64_t distinct, int64_t changes,
                                int *clustered);

/* --- many groups: a table of records --- */
/* For what SL_K_AGG_SMALL takes (one int32/int64 key, count/sum/avg/min/max of int32/int64
 * values, no nulls) and many groups: each group is one record of 64-bit words [key, rows,
 * states] in an open-addressing table (slot: top bits of the key's 64-bit hash, the bits
 * the partitioned method partitions by; linear probing), so a row touches one record. An
 * input partitioned first (sl_k_agg_part_count/scatter) visits the table region by region.
 * Groups are counted (d_n[0]); rows that found no room within a probe limit are counted
 * (d_n[1]) and not aggregated: the caller runs every input again into a bigger table. */
struct sl_k_agg_dtable {
    uint64_t n_slots;                  /* power of two */
    int log_slots;
    int words;                         /* 64-bit words per record */
    unsigned long long *d_rec;         /* n_slots + 1 records (the last: the key INT64_MIN) */
    unsigned long long *d_n;           /* [0] groups, [1] rows that found no room */
};
/* Whether the spec and input take this path. */
int sl_k_agg_direct_ok(const struct sl_k_agg_spec *spec, const struct sl_k_agg_input *in);
/* Device bytes of a table for `groups` groups (load at most 2/3), and its carving. */
size_t sl_k_agg_direct_bytes(const struct sl_k_agg_spec *spec, int64_t groups);
void sl_k_agg_direct_carve(const struct sl_k_agg_spec *spec, int64_t groups, void *d_mem,
                           struct sl_k_agg_dtable *dt);
cudaError_t sl_k_agg_direct_clear(const struct sl_k_agg_spec *spec,
                                  const struct sl_k_agg_dtable *dt, cudaStream_t stream);
cudaError_t sl_k_agg_direct_update(const struct sl_k_agg_spec *spec,
                                   const struct sl_k_agg_input *in,
                                   const struct sl_k_agg_dtable *dt, cudaStream_t stream);
/* Partitions `in` (what sl_k_agg_direct_ok takes) by the top `bits` (1..8) bits of its
 * keys' hashes into `out` (out->keys[0] and out->vals[a] of every aggregate with a state,
 * in->n elements of the input's widths, caller-allocated), each partition contiguous,
 * so that sl_k_agg_direct_update on `out` visits the table region by region. At most
 * four aggregates with a state (count(*) and count have none): cudaErrorInvalidValue
 * otherwise, already from the size query (then use sl_k_agg_part_*). Two-call temp
 * storage; the size depends on in->n and bits. */
cudaError_t sl_k_agg_direct_partition(void *d_temp, size_t *temp_bytes,
                                      const struct sl_k_agg_spec *spec,
                                      const struct sl_k_agg_input *in, int bits,
                                      const struct sl_k_agg_input *out, cudaStream_t stream);
/* The same partitioner for the partitioned method: by the top `bits` (1..16) bits in one
 * pass up to 8 bits, else in two (the top (bits + 1) / 2 bits, then the rest within each
 * of those partitions: each pass writes runs of a partition, so that 13 bits cost two
 * streaming passes instead of a scatter row by row), and the partitions' offsets
 * (d_offsets: 2^bits + 1 entries; partition p at rows [d_offsets[p], d_offsets[p + 1])),
 * as sl_k_agg_part_scatter writes them for sl_k_agg_part_final (out's columns of count(*)
 * and count are not written: without nulls they are not read). Two-call temp storage (two
 * passes: it holds a copy of the moved columns). */
cudaError_t sl_k_agg_tile_partition(void *d_temp, size_t *temp_bytes,
                                    const struct sl_k_agg_spec *spec,
                                    const struct sl_k_agg_input *in, int bits,
                                    const struct sl_k_agg_input *out, int64_t *d_offsets,
                                    cudaStream_t stream);
/* The one-pass wide partitioner (issue 19), same contract as sl_k_agg_tile_partition for
 * 1..12 bits: one pass over the input however many bits (the blocks take each tile's
 * place in a partition with a global cursor, kernels/aggregate/aggregate_wide.cuh), no
 * copy of the moved columns in the temp block (two-call temp storage: 8 << bits bytes
 * and alignment). Slower than the tile partitioner's two passes where both run (2^28
 * rows, 2^11 partitions, H100: 10.6 ms against 8.6 for the two passes of 2^13): not the
 * driver's default (agg_gdrv.one_pass, to compare). */
cudaError_t sl_k_agg_wide_partition(void *d_temp, size_t *temp_bytes,
                                    const struct sl_k_agg_spec *spec,
                                    const struct sl_k_agg_input *in, int bits,
                                    const struct sl_k_agg_input *out, int64_t *d_offsets,
                                    cudaStream_t stream);
/* Writes every group (order unspecified) as output rows [0, n) (out->d_count zeroed by the
 * caller receives n; rows past out->cap are counted, not written). */
cudaError_t sl_k_agg_direct_output(const struct sl_k_agg_spec *spec,
                                   const struct sl_k_agg_dtable *dt,
                                   const struct sl_k_agg_out *out, int32_t *d_status,
                                   cudaStream_t stream);

/* --- partitioned --- */
/* A batch partitioned into 1 << bits partitions by the top bits of the row hash: SoA
 * columns (keys and values in their input widths), d_nullbits (or NULL when the input
 * had no nulls), partition p at rows [d_offsets[p], d_offsets[p + 1]). bit_base: index of
 * row 0 in the pending-row bitmap of sl_k_agg_part_final. */
struct sl_k_agg_pbatch {
    struct sl_k_agg_input in;                /* n = rows, d_rowidx NULL */
    const int64_t *d_offsets;
    int64_t bit_base;
};

/* d_counts[p] (1 << bits entries, zeroed by the caller) += rows of `in` in partition p. */
cudaError_t sl_k_agg_part_count(const struct sl_k_agg_spec *spec, const struct sl_k_agg_input *in,
                                int bits, unsigned long long *d_counts, cudaStream_t stream);
/* From the counts: d_offsets ((1 << bits) + 1 entries) and scatters the rows of `in` into
 * out's columns (out->in.n rows of room; d_nullbits written when set). Order within a
 * partition unspecified. Two-call temp storage (scan and cursors). */
cudaError_t sl_k_agg_part_scatter(void *d_temp, size_t *temp_bytes,
                                  const struct sl_k_agg_spec *spec,
                                  const struct sl_k_agg_input *in, int bits,
                                  const unsigned long long *d_counts, int64_t *d_offsets,
                                  const struct sl_k_agg_pbatch *out, cudaStream_t stream);
/* Aggregates partition p of every batch (d_batches: n_batches descriptors in device
 * memory) in one block each and writes the groups to `out` (count -> allocate -> write:
 * groups past out->cap are counted, not written; run again with room). d_pending:
 * sl_k_agg_part_pending_bytes(rows of all batches, bits) bytes zeroed by the caller
 * (partitions and rows left for a second kernel or the next round of a partition with
 * more groups than a block holds). any_nulls: some batch has d_nullbits (else one-key
 * loops are specialized). Specs that SL_K_AGG_SMALL takes (without nulls) go first
 * through a kernel of per-partition shared tables of stored keys; flags
 * SL_K_AGG_NO_SMALL: only the generic kernel (to compare); SL_K_AGG_PACK: that kernel packs
 * row counts with the first integer sum as sl_k_agg_update does. */
enum { SL_K_AGG_NO_SMALL = 4 };
size_t sl_k_agg_part_pending_bytes(int64_t rows, int bits);
cudaError_t sl_k_agg_part_final(const struct sl_k_agg_spec *spec,
                                const struct sl_k_agg_pbatch *d_batches, int n_batches, int bits,
                                int any_nulls, int flags, uint32_t *d_pending,
                                const struct sl_k_agg_out *out, int32_t *d_status,
                                cudaStream_t stream);
/* Groups one block holds in shared memory in sl_k_agg_part_final (to choose bits). */
int64_t sl_k_agg_part_groups_per_block(const struct sl_k_agg_spec *spec);
/* SL_K_AGG_BIG (flags of sl_k_agg_part_final; specs SL_K_AGG_SMALL takes, without nulls):
 * the shared-table partition kernel runs one block of 1,024 threads an SM with a table of
 * all its shared memory (sl_k_agg_part_big_slots slots of any number, not a power of two;
 * 0: the spec does not take it), for partitions of a few thousand groups at a low load
 * (fewer probes). A partition that does not fit goes to the generic kernel as before. */
enum { SL_K_AGG_BIG = 128 };
int64_t sl_k_agg_part_big_slots(const struct sl_k_agg_spec *spec);
/* SL_K_AGG_CLUSTER(n) (flags of sl_k_agg_part_final, n = 2, 4, 8 or 16; what SL_K_AGG_BIG
 * takes, without min/max; issue 19): each partition is aggregated by a cluster of n
 * blocks (H100 distributed shared memory) in one table of n times the big table's slots,
 * spread over the n blocks (kernels/aggregate/aggregate_small.cuh, cl_find), so that one
 * partitioning pass of 8 bits suffices for partitions of 65,536 groups. A partition that
 * does not fit goes to the generic kernel as with SL_K_AGG_BIG. Slower: the remote
 * atomics (2^28 rows, 2^24 groups, H100: the partition kernel 15.5 ms over 8 blocks, 14.5
 * over 16, 9.4 over 2 at 10 bits, against 3.4 for the big table at 12 bits; the sums as
 * 64-bit reductions, no old value read, made no difference: 15.5 and 9.3), so the driver
 * takes it only when asked (agg_gdrv.cluster, A/B runs).
 * sl_k_agg_part_cluster_max: clusters of n such blocks the GPU holds at once (0: none, a
 * spec with min/max, or a GPU or build without clusters: do not ask for the flag). */
#define SL_K_AGG_CLUSTER_SHIFT 8
#define SL_K_AGG_CLUSTER_MASK (31 << SL_K_AGG_CLUSTER_SHIFT)
#define SL_K_AGG_CLUSTER(n) ((n) << SL_K_AGG_CLUSTER_SHIFT)
static inline int sl_k_agg_cluster_of(int flags)
{
    return (flags & SL_K_AGG_CLUSTER_MASK) >> SL_K_AGG_CLUSTER_SHIFT;
}
int sl_k_agg_part_cluster_max(const struct sl_k_agg_spec *spec, int cluster);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_K_AGGREGATE_H */
