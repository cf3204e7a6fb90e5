/* Helpers the operators share (operators/common/): the CPU kernels of sorting, sort
 * specifications, the gathered input of materializing operators (sort, partition, merge)
 * and the machine's cache sizes. An operator folder includes only its own headers, the
 * headers of operators/common/, the runtime's published headers and include/sluice.
 *
 * Keys are sorted as unsigned "codes": order-preserving maps of the values
 * (sl__key_code_*), so one LSD radix sort serves int32/int64/float32/float64,
 * ascending and descending. A sort item carries a code and a row index:
 *   k32 items: uint64_t, code in bits 32..63, row index in bits 0..31 (n < 2^32 rows);
 *   k64 items: struct sl__kv64 {code, row index}.
 * Sorting items by code with a stable sort gives a stable permutation of the rows.
 *
 * Float codes: the sign bit is flipped for positive values and all bits for negative
 * ones, so -inf < ... < -0.0 < +0.0 < ... < +inf. Every NaN is first made the positive
 * quiet NaN, so NaNs are equal to each other and sort after +inf (ascending) or
 * before -inf (descending), as in PostgreSQL and DuckDB.
 */
#ifndef SLUICE_OPERATORS_OP_COMMON_H
#define SLUICE_OPERATORS_OP_COMMON_H

#include <math.h>
#include <string.h>

#include "operators.h"
#include "sort_spec.h"

#ifndef SL__RS_BITS
#define SL__RS_BITS 11
#endif
#define SL__RS_BUCKETS (1 << SL__RS_BITS)
#define SL__RS_MASK (SL__RS_BUCKETS - 1)
/* Digits of a k32 code (bits 32..63) and of a k64 code. */
#define SL__RS_DIGITS_K32 ((32 + SL__RS_BITS - 1) / SL__RS_BITS)
#define SL__RS_DIGITS_K64 ((64 + SL__RS_BITS - 1) / SL__RS_BITS)


/* ---------------- cache sizes (cpu_cache.c) ---------------- */

/* Bytes of the CPU's data cache of `level` (1, 2 or 3) from
 * /sys/devices/system/cpu/cpu0/cache, or a guess (48 KiB, 2 MiB, 32 MiB) if unknown. */
int64_t sl__cpu_cache_bytes(int level);

/* 1 if a scatter writing `bytes` should use non-temporal stores: bytes > 4 x L2.
 * Not the L3 size: on the shared 2-core VM sysfs reports the host's whole L3 (480 MiB),
 * yet streaming already won for 128 MiB of sort items (290 ms vs 400 ms, 2^24 rows). */
int sl__stream_stores(int64_t bytes);

/* ---------------- key codes ---------------- */

/* A signed 4- or 8-byte integer type, which the radix and GPU sorts read as int32 or
 * int64: int32, int64, date32, timestamp, decimal(p <= 18). */
static inline bool sl__type_signed_word(enum sl_type t)
{
    switch (SL_TYPE_ID(t)) {
    case SL_TYPE_INT32: case SL_TYPE_INT64: case SL_TYPE_DATE32: case SL_TYPE_TIMESTAMP:
        return true;
    case SL_TYPE_DECIMAL: return sl_type_width(t) == 8;
    default: return false;
    }
}

static inline uint32_t sl__key_code_i32(int32_t x)
{
    return (uint32_t)x ^ 0x80000000u;
}

static inline uint64_t sl__key_code_i64(int64_t x)
{
    return (uint64_t)x ^ 0x8000000000000000ull;
}

static inline uint32_t sl__key_code_f32(float x)
{
    uint32_t u;
    if (x != x)
        x = NAN;
    memcpy(&u, &x, sizeof u);
    if (x != x)
        u = 0x7fc00000u; /* one canonical NaN, above +inf */
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

static inline uint64_t sl__key_code_f64(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    if (x != x)
        u = 0x7ff8000000000000ull;
    return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
}

/* ---------------- LSD radix sort of items (radix_sort.c) ----------------
 * Digits are SL__RS_BITS (11) bits: 3 passes for 32-bit codes, 6 for 64-bit ones. The
 * building blocks work on a row range [lo, hi) of an item array so that a parallel
 * driver can run them per chunk: histogram per chunk, prefix sums over (digit, chunk),
 * scatter per chunk. The scatter buffers one cache line per
 * bucket (software write-combining) and writes full lines with non-temporal stores
 * when `stream` is set; `dst` must then be 64-byte aligned (otherwise plain stores are
 * used). All are thread-safe on disjoint output ranges. The scatter keeps its buffers
 * on the stack (about 150 KiB); the plain sort about 260 KiB. */

/* hist[b] += number of items of [lo, hi) whose digit at `shift` is b. */
void sl__rsort_hist_k32(const uint64_t *it, int64_t lo, int64_t hi, int shift, int64_t *hist);
void sl__rsort_hist_k64(const struct sl__kv64 *it, int64_t lo, int64_t hi, int shift,
                        int64_t *hist);
/* Histograms of every digit of the code at once: hist[d * SL__RS_BUCKETS + b], digit d
 * at bit 32 + SL__RS_BITS * d (k32) or SL__RS_BITS * d (k64). Used to skip passes with
 * a single bucket. */
void sl__rsort_hist_all_k32(const uint64_t *it, int64_t lo, int64_t hi, int64_t *hist);
void sl__rsort_hist_all_k64(const struct sl__kv64 *it, int64_t lo, int64_t hi, int64_t *hist);
/* Moves items [lo, hi) of src to dst[pos[b]++] by digit b at `shift` (stable). */
void sl__rsort_scatter_k32(const uint64_t *src, uint64_t *dst, int64_t lo, int64_t hi, int shift,
                           int64_t *pos, int stream);
void sl__rsort_scatter_k64(const struct sl__kv64 *src, struct sl__kv64 *dst, int64_t lo,
                           int64_t hi, int shift, int64_t *pos, int stream);
/* Plain single-threaded stable sort of n items by code (`tmp` as large as `a`); skips
 * digits where every item falls in one bucket. Returns a or tmp, whichever holds the
 * result. */
uint64_t *sl__rsort_k32(uint64_t *a, uint64_t *tmp, int64_t n);

/* ---------------- gathered input (rows.c) ----------------
 * Sink-side collection of batches shared by sort, merge and partition. Each worker keeps
 * the batches it sinks with their port, source task index and arrival number; combine
 * moves them into the global list; sl__rows_order puts them in input order (port, then
 * source task index, then arrival), which is what "stable" refers to. */

struct sl__rows_item {
    sl_batch_t *batch;
    int port;
    int64_t task, seq;
};

struct sl__rows {
    struct sl__rows_item *items;
    int64_t n, cap;
    int64_t seq;
};

int sl__rows_add(struct sl__rows *r, sl_batch_t *b, int port, int64_t task);
int sl__rows_move(struct sl__rows *dst, struct sl__rows *src);
void sl__rows_order(struct sl__rows *r);
void sl__rows_fini(struct sl__rows *r);

/* The glue that sort, merge and partition share (rows.c): */
/* A sink phase body: keeps a reference to the task's input batch (if it has rows). */
int sl__rows_sink(sl_task_t *t, struct sl__rows *local);
/* A combine phase body: moves a worker's batches into the global list. */
/* Rows in all kept batches. */
int64_t sl__rows_total(const struct sl__rows *r);
/* Replaces *b, if a device batch, by a host copy (dropping the device one). */
int sl__batch_keep_on_host(sl_task_t *t, sl_batch_t **b);
/* Replaces device batches (kept by a sink on a GPU) by host copies, for a CPU finalize. */
int sl__rows_to_host(sl_task_t *t, struct sl__rows *r);
int sl__rows_combine(sl_task_t *t, struct sl__rows *global, struct sl__rows *local);
/* Rows per parallel chunk for n rows: at least a morsel, about 64 chunks, a multiple of
 * 64 (bitmap bytes never shared between chunks). */
int64_t sl__chunk_rows(sl_task_t *t, int64_t n);
/* Sets each column's null count of `out` from per-chunk counts (nulls[k * n_cols + c]). */
void sl__sum_chunk_nulls(sl_batch_t *out, const int64_t *nulls, int64_t n_chunks, int n_cols);
/* Source tasks and source body that hand out a finished n-row batch in morsel slices
 * (a device batch: on the GPU for CUDA tasks, downloaded for host ones). */
int64_t sl__morsel_tasks(sl_task_t *t, const sl_batch_t *out, int64_t n);
int sl__emit_morsel(sl_task_t *t, sl_batch_t *out, int64_t n);
/* Emits rows [lo, lo + rows) of out (a host or device batch, as sl__emit_morsel). */
int sl__emit_rows(sl_task_t *t, sl_batch_t *out, int64_t lo, int64_t rows);

/* A column of all gathered rows as one array: either a view of one buffer the input
 * batches are consecutive slices of, or a copy. validity is NULL when no row is null;
 * bit (voff + i) is row i's. */
struct sl__rowsview {
    enum sl_type type;
    const void *data;
    const uint8_t *validity;
    int64_t voff;
    int64_t null_count;
};

/* Fills a view of column `col` of the batches [first, last) of r: zero-copy when they
 * are consecutive slices of one buffer, else a copy into memory from sl_task_alloc.
 * Returns SL_OK or an error recorded on the task. */
int sl__rows_view(sl_task_t *t, const struct sl__rows *r, int64_t first, int64_t last, int col,
                  struct sl__rowsview *out);

static inline bool sl__rowsview_valid(const struct sl__rowsview *v, int64_t i)
{
    if (!v->validity)
        return true;
    int64_t bit = v->voff + i;
    return (v->validity[bit >> 3] >> (bit & 7)) & 1;
}

/* Gathers out[i] = column[perm[i]] for i in [lo, hi) of a fixed-width column
 * (width 4 or 8), reading the row index from k32 or k64 items. Validity: if the column
 * has nulls, out_valid gets the gathered bits (lo and hi multiples of 8, except hi = n)
 * and the return value is the number of nulls in the range. */
int64_t sl__gather_k32(const struct sl__rowsview *c, const uint64_t *perm, int64_t lo, int64_t hi,
                       void *out, uint8_t *out_valid);
int64_t sl__gather_k64(const struct sl__rowsview *c, const struct sl__kv64 *perm, int64_t lo,
                       int64_t hi, void *out, uint8_t *out_valid);
/* The same with plain row indices. */
int64_t sl__gather_rows(const struct sl__rowsview *c, const uint64_t *rows, int64_t lo,
                        int64_t hi, void *out, uint8_t *out_valid);

#endif /* SLUICE_OPERATORS_OP_COMMON_H */
