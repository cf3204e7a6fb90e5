/* join on a GPU: the sides filtered before partitioning (issues 6 and 19, low match
 * ratios).
 *
 * PHJ partitions both sides whole, so a probe side of which most rows have no partner
 * costs as much as one where all have. When samples say that most probe rows lie
 * outside the build keys' range [min, max] (so most have no partner), the probe rows
 * inside it are kept; then, when those are fewer than half of the build rows and the
 * range is at most FILTER_BITMAP_BITS keys, an exact bitmap of their keys over the range
 * (one bit a key, set by atomics in L2) keeps only the build rows with a partner (a
 * semi-join reduction: at a match ratio of 25%, uniform foreign keys meet about 22% of
 * the build rows), and the radix bits follow the build rows kept. The rows are selected
 * (CUB DeviceSelect), their keys gathered, and only the kept rows packed afterwards
 * (gj_prepare_rows). With debug_join_filter=mask (A/B runs) each side is filtered in two
 * passes of our own instead (both_sides_marked): sl_k_select_mask_* reads the keys once
 * and keeps a bit a row and a count a tile (one synchronization reads the total), then
 * sl_k_select_write_* writes the kept rows' keys and rows packed from the payload columns
 * at their place in row order; the probe side's write also sets the bitmap of its keys.
 * On the H100 (2026-11-27 11:09, 2^27 x 2^27, 2 payloads, same run) it was slower with
 * 4-byte keys (match 10%: 5.14 ms against 5.01; 25%: 7.70 against 7.55) and faster with
 * 8-byte keys (10%: 6.87 against 7.24). The prepare phase's steps (debug_join_phase_times,
 * match 10%, CUB path): sample 0.11 ms, range 0.23, probe select and key gather 0.57,
 * bitmap and build select over all 2^27 build keys 1.86, packing 0.72; in the two passes
 * the build side's mark (a random bitmap read in L2 a build key) took 1.10, its write
 * 0.73, the probe side's write with the bitmap's 13.4 M atomics 1.20. With
 * debug_join_filter=fused (A/B runs) each side is filtered in one
 * pass instead (sl_k_select_pack_*: CUB's select writing through an output iterator that
 * stores the kept row's key and its row packed from the payload columns; outputs sized
 * by the sample's estimate, a second pass when more rows are kept); it was slower on the
 * H100 (2^27 x 2^27, 2 payloads, match ratio 10%: prepare 4.12 ms against 3.53, 25%: 5.81
 * against 4.80, 2026-11-27): the gathers inside CUB's select kernel cost more than the
 * separate passes they replace. With debug_join_filter=range
 * (the old path, for A/B runs) every row is packed first and only the probe side is
 * filtered. (An exact bitmap of the build keys to filter the probe side too cost more
 * than it saved on the H100: 2^27 build keys, match ratio 25%, 12.2 ms against 8.7 with
 * the range alone, 2026-11-27.)
 * Kept rows are selected in order and their keys gathered (row ids in the rows keep
 * their numbers, so columns gathered by row id after the join still find theirs). Every
 * row with a partner is kept, so inner and semi joins are unchanged; anti and left outer
 * joins need the rows it drops and are never filtered.
 *
 * The samples (FILTER_SAMPLE strided keys of each side, one synchronization) also give
 * the build sample that picks the radix bits (gj_pick_bits), so a join that is not
 * filtered pays only the probe side's sample kernel. */

#include "join_cuda_int.h"
#include "sluice_k/join_filter.h"
#include "sluice_k/join_types.h"

#define FILTER_SAMPLE 4096
#define FILTER_MIN_ROWS ((int64_t)1 << 20) /* smaller probe sides: not worth the syncs */
#define FILTER_MAX_KEEP 0.5                 /* probe sample share inside the build's range */
/* Widest build key range of the bitmap filter: 2^28 bits, 32 MiB (stays in the H100's
 * 50 MB L2 cache while it is set and read). */
#define FILTER_BITMAP_BITS ((uint64_t)1 << 28)
/* The build side is filtered by the kept probe keys when these are fewer than this
 * share of its rows. */
#define FILTER_BUILD_SHARE 0.5

/* Share of the probe sample inside the build sample's [min, max] (keys compared as
 * unsigned values, as the kernels do). */
static double kept_share(const uint64_t *h, const int64_t m[2])
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int64_t i = 0; i < m[0]; i++) {
        lo = h[i] < lo ? h[i] : lo;
        hi = h[i] > hi ? h[i] : hi;
    }
    int64_t in = 0;
    for (int64_t i = 0; i < m[1]; i++)
        in += h[FILTER_SAMPLE + i] >= lo && h[FILTER_SAMPLE + i] <= hi;
    return m[1] ? (double)in / (double)m[1] : 1.0;
}

/* After a select launched with result e: its count from d_count into *count (one
 * synchronization); fails the task with `what` on an error. */
static int read_count(sl_task_t *t, cudaError_t e, const int64_t *d_count, int64_t *count,
                      const char *what)
{
    cudaStream_t s = sl_task_stream(t);
    if (e == cudaSuccess)
        e = SL_TASK_CUDA_CALL(
            cudaMemcpyAsync(count, d_count, sizeof *count, cudaMemcpyDeviceToHost, s));
    if (e == cudaSuccess)
        e = SL_TASK_CUDA_CALL(cudaStreamSynchronize(s));
    return e == cudaSuccess ? SL_OK : SL_TASK_CUDA_FAIL(t, e, what);
}

/* The rows of side S whose key k has k - kmin < range and, with a bitmap, its bit set
 * replace the side. */
static int select_rows(sl_task_t *t, struct gj *g, struct gj_side *S, uint64_t kmin,
                       uint64_t range, const uint32_t *bm)
{
    cudaStream_t s = sl_task_stream(t);
    size_t kw = g->k8 ? 8 : 4, temp_bytes = 0;
    SL_TASK_CUDA_TRY(t,
                     g->k8 ? sl_k_select_in_range_k64(NULL, &temp_bytes, S->keys, S->n, kmin, range,
                                                      bm, NULL, NULL, s)
                           : sl_k_select_in_range_k32(NULL, &temp_bytes, S->keys, S->n,
                                                      (uint32_t)kmin, range, bm, NULL, NULL, s),
                     "filter size");
    uint32_t *idx = sl_task_device_alloc(t, (size_t)S->n * 4);
    int64_t *d_count = sl_task_device_alloc(t, sizeof *d_count), count = 0;
    void *temp = sl_task_device_alloc(t, temp_bytes ? temp_bytes : 8), *keys = NULL, *rows = NULL;
    int rc = idx && d_count && temp ? SL_OK : SL_ENOMEM;
    if (rc == SL_OK) {
        cudaError_t e = g->k8 ? sl_k_select_in_range_k64(temp, &temp_bytes, S->keys, S->n, kmin, range, bm,
                                                         idx, d_count, s)
                              : sl_k_select_in_range_k32(temp, &temp_bytes, S->keys, S->n, (uint32_t)kmin,
                                                         range, bm, idx, d_count, s);
        rc = read_count(t, e, d_count, &count, "filtering the probe side");
    }
    int rb = S->rows ? g->row_bytes : 0;
    uint32_t *sel = NULL; /* rows not packed yet: the kept rows' numbers, for the packing */
    if (rc == SL_OK && !g->rows_ready && S->sel && count > 0) {
        cudaError_t e = cudaSuccess;
        if (!(sel = sl_task_device_alloc(t, (size_t)count * 4)))
            rc = SL_ENOMEM;
        else if ((e = SL_TASK_CUDA_CALL(sl_k_gather_bytes(S->sel, 4, idx, count, sel, s))) !=
                 cudaSuccess)
            rc = SL_TASK_CUDA_FAIL(t, e, "composing the kept rows");
    } else if (rc == SL_OK && !g->rows_ready) {
        sel = idx;
        idx = NULL;
    }
    if (rc == SL_OK && count > 0) {
        keys = sl_task_device_alloc(t, (size_t)count * kw);
        rows = rb ? sl_task_device_alloc(t, (size_t)count * (size_t)rb) : NULL;
        if (!keys || (rb && !rows))
            rc = SL_ENOMEM;
        cudaError_t e = cudaSuccess;
        if (rc == SL_OK)
            e = SL_TASK_CUDA_CALL(sl_k_gather_bytes(S->keys, (int)kw, idx ? idx : sel, count, keys, s));
        if (rc == SL_OK && e == cudaSuccess && rb)
            e = SL_TASK_CUDA_CALL(sl_k_gather_bytes(S->rows, rb, idx, count, rows, s));
        if (rc == SL_OK && e != cudaSuccess)
            rc = SL_TASK_CUDA_FAIL(t, e, "gathering the kept probe rows");
    }
    sl_task_device_free(t, idx);
    sl_task_device_free(t, d_count);
    sl_task_device_free(t, temp);
    if (rc < 0) {
        sl_task_device_free(t, keys);
        sl_task_device_free(t, rows);
        sl_task_device_free(t, sel);
        return rc;
    }
    sl_task_device_free(t, S->keys_own);
    sl_task_device_free(t, S->rows_own);
    if (!g->rows_ready) {
        sl_task_device_free(t, S->sel);
        S->sel = sel;
    }
    S->keys = S->keys_own = keys;
    S->rows = S->rows_own = rows;
    S->n = count;
    return SL_OK;
}

/* One pass of the fused select (sl_k_select_pack_*) over side s into outputs of cap
 * rows; *count = the rows selected (which may pass cap: then nothing past cap was
 * written). */
static int select_pack_pass(sl_task_t *t, struct gj *g, const struct gj_side *S,
                            uint64_t kmin, uint64_t range, const uint32_t *bm,
                            const sl_k_cols_t *kc, int rb, int64_t cap, void **keys, void **rows,
                            int64_t *count)
{
    cudaStream_t s = sl_task_stream(t);
    size_t kw = g->k8 ? 8 : 4, temp_bytes = 0;
#define SELECT_PACK(TEMP, KO, RO, CNT)                                                           \
    (g->k8 ? sl_k_select_pack_k64(TEMP, &temp_bytes, S->keys, S->n, kmin, range, bm, kc, rb, KO, \
                                  RO, cap, CNT, s)                                               \
           : sl_k_select_pack_k32(TEMP, &temp_bytes, S->keys, S->n, (uint32_t)kmin, range, bm,   \
                                  kc, rb, KO, RO, cap, CNT, s))
    SL_TASK_CUDA_TRY(t, SELECT_PACK(NULL, NULL, NULL, NULL), "filter size");
    g->filter_passes++;
    *keys = sl_task_device_alloc(t, (size_t)(cap > 0 ? cap : 1) * kw);
    *rows = rb ? sl_task_device_alloc(t, (size_t)(cap > 0 ? cap : 1) * (size_t)rb) : NULL;
    int64_t *d_count = sl_task_device_alloc(t, sizeof *d_count);
    void *temp = sl_task_device_alloc(t, temp_bytes ? temp_bytes : 8);
    int rc = *keys && (!rb || *rows) && d_count && temp ? SL_OK : SL_ENOMEM;
    if (rc == SL_OK) {
        rc = read_count(t, SELECT_PACK(temp, *keys, *rows, d_count), d_count, count,
                        "selecting and packing the kept rows");
    }
#undef SELECT_PACK
    sl_task_device_free(t, d_count);
    sl_task_device_free(t, temp);
    if (rc < 0) {
        sl_task_device_free(t, *keys);
        sl_task_device_free(t, *rows);
        *keys = *rows = NULL;
    }
    return rc;
}

/* The rows of side `side` whose key k has k - kmin < range and, with a bitmap, its bit
 * set replace the side, their keys and packed rows written in one pass (rows not packed
 * yet). The outputs are sized for `expect` rows (an estimate, at most the side's rows);
 * when more are kept, the pass runs again into outputs of their exact size. */
static int select_pack(sl_task_t *t, const struct join_state *st, struct gj *g, int side,
                       uint64_t kmin, uint64_t range, const uint32_t *bm, int64_t expect)
{
    struct gj_side *S = &g->s[side];
    sl_k_cols_t kc;
    void *own[5], *keys = NULL, *rows = NULL;
    int rb = 0;
    int64_t count = 0, cap = expect < S->n ? expect : S->n;
    int rc = gj_row_cols(t, st, side, g, &kc, own, &rb);
    if (rc >= 0)
        rc = select_pack_pass(t, g, S, kmin, range, bm, &kc, rb, cap, &keys, &rows, &count);
    if (rc >= 0 && count > cap) { /* the estimate was short */
        sl_task_device_free(t, keys);
        sl_task_device_free(t, rows);
        rc = select_pack_pass(t, g, S, kmin, range, bm, &kc, rb, count, &keys, &rows, &count);
    }
    gj_row_cols_free(t, own);
    if (rc < 0)
        return rc;
    sl_task_device_free(t, S->keys_own);
    S->keys = S->keys_own = keys;
    S->rows = S->rows_own = rows;
    S->n = count;
    return SL_OK;
}

/* An empty bitmap of range bits in *bm (allocated on first use). */
static int bitmap_clear(sl_task_t *t, uint64_t range, uint32_t **bm)
{
    size_t bytes = (size_t)((range + 31) / 32) * 4;
    if (!*bm && !(*bm = sl_task_device_alloc(t, bytes)))
        return SL_ENOMEM;
    SL_TASK_CUDA_TRY(t, cudaMemsetAsync(*bm, 0, bytes, sl_task_stream(t)),
                     "clearing the key bitmap");
    return SL_OK;
}

/* A bitmap of side F's keys over [kmin, kmin + range) in *bm (allocated on first use,
 * zeroed here). */
static int key_bitmap(sl_task_t *t, const struct gj *g, const struct gj_side *F, uint64_t kmin,
                      uint64_t range, uint32_t **bm)
{
    cudaStream_t s = sl_task_stream(t);
    int rc = bitmap_clear(t, range, bm);
    if (rc < 0)
        return rc;
    SL_TASK_CUDA_TRY(t,
                     g->k8 ? sl_k_key_bitmap_k64(F->keys, F->n, kmin, range, *bm, s)
                           : sl_k_key_bitmap_k32(F->keys, F->n, (uint32_t)kmin, range, *bm, s),
                     "the key bitmap");
    return SL_OK;
}

/* ---- the two-pass select (debug_join_filter=mask): sl_k_select_mask_*, then
 * sl_k_select_write_* ---- */

/* A selection marked and counted, waiting for its write pass. */
struct marked {
    void *temp;
    size_t temp_bytes;
    int64_t count;
};

/* Marks the rows of side S whose key k has k - kmin < range and, with a bitmap, its bit
 * set, and counts them into q->count (one synchronization). */
static int mark_rows(sl_task_t *t, const struct gj *g, const struct gj_side *S, uint64_t kmin,
                     uint64_t range, const uint32_t *bm, struct marked *q)
{
    cudaStream_t s = sl_task_stream(t);
    memset(q, 0, sizeof *q);
#define SELECT_MASK(TEMP, CNT)                                                                   \
    (g->k8 ? sl_k_select_mask_k64(TEMP, &q->temp_bytes, S->keys, S->n, kmin, range, bm, CNT, s) \
           : sl_k_select_mask_k32(TEMP, &q->temp_bytes, S->keys, S->n, (uint32_t)kmin, range,   \
                                  bm, CNT, s))
    SL_TASK_CUDA_TRY(t, SELECT_MASK(NULL, NULL), "filter size");
    int64_t *d_count = sl_task_device_alloc(t, sizeof *d_count);
    q->temp = sl_task_device_alloc(t, q->temp_bytes);
    int rc = d_count && q->temp ? SL_OK : SL_ENOMEM;
    if (rc == SL_OK)
        rc = read_count(t, SELECT_MASK(q->temp, d_count), d_count, &q->count,
                        "marking the kept rows");
#undef SELECT_MASK
    sl_task_device_free(t, d_count);
    if (rc < 0) {
        sl_task_device_free(t, q->temp);
        q->temp = NULL;
    }
    return rc;
}

/* The rows q marked replace side `side`: their keys and their rows packed from the
 * columns (rows not packed yet), written in one pass that also sets the bits of their
 * keys in bm_out when it is not NULL (over [kmin, kmin + range)). Frees q's storage. */
static int write_rows(sl_task_t *t, const struct join_state *st, struct gj *g, int side,
                      struct marked *q, uint64_t kmin, uint64_t range, uint32_t *bm_out)
{
    struct gj_side *S = &g->s[side];
    size_t kw = g->k8 ? 8 : 4;
    sl_k_cols_t kc;
    void *own[5], *keys = NULL, *rows = NULL;
    int rb = 0, rc = gj_row_cols(t, st, side, g, &kc, own, &rb);
    if (rc >= 0 && q->count > 0) {
        keys = sl_task_device_alloc(t, (size_t)q->count * kw);
        rows = rb ? sl_task_device_alloc(t, (size_t)q->count * (size_t)rb) : NULL;
        if (!keys || (rb && !rows))
            rc = SL_ENOMEM;
    }
    if (rc >= 0 && q->count > 0) {
        cudaStream_t s = sl_task_stream(t);
        cudaError_t e = SL_TASK_CUDA_CALL(
            g->k8 ? sl_k_select_write_k64(q->temp, q->temp_bytes, S->keys, S->n, &kc, rb, keys,
                                          rows, bm_out, kmin, range, s)
                  : sl_k_select_write_k32(q->temp, q->temp_bytes, S->keys, S->n, &kc, rb, keys,
                                          rows, bm_out, (uint32_t)kmin, range, s));
        if (e != cudaSuccess)
            rc = SL_TASK_CUDA_FAIL(t, e, "writing the kept rows");
    }
    gj_row_cols_free(t, own);
    sl_task_device_free(t, q->temp);
    q->temp = NULL;
    if (rc < 0) {
        sl_task_device_free(t, keys);
        sl_task_device_free(t, rows);
        return rc;
    }
    sl_task_device_free(t, S->keys_own);
    S->keys = S->keys_own = keys;
    S->rows = S->rows_own = rows;
    S->n = q->count;
    return SL_OK;
}

/* The probe rows inside the range (their keys' bitmap set as they are written, when the
 * build side is filtered next), then the build rows whose bit is set: each side marked,
 * counted and written packed (top of the file). */
static int both_sides_marked(sl_task_t *t, const struct join_state *st, struct gj *g,
                             uint64_t kmin, uint64_t range)
{
    int b = g->build;
    struct gj_side *R = &g->s[b];
    struct marked q;
    int rc = mark_rows(t, g, &g->s[1 - b], kmin, range, NULL, &q);
    if (rc < 0)
        return rc;
    gj_step(t, g, "prepare_probe_mask");
    int by_bitmap = q.count > 0 && (double)q.count < FILTER_BUILD_SHARE * (double)R->n &&
                    range <= FILTER_BITMAP_BITS;
    uint32_t *bm = NULL;
    if (by_bitmap)
        rc = bitmap_clear(t, range, &bm);
    if (rc >= 0)
        rc = write_rows(t, st, g, 1 - b, &q, kmin, range, bm);
    else
        sl_task_device_free(t, q.temp);
    gj_step(t, g, "prepare_probe");
    if (rc >= 0 && by_bitmap && (rc = mark_rows(t, g, R, kmin, range, bm, &q)) >= 0) {
        gj_step(t, g, "prepare_build_mask");
        rc = write_rows(t, st, g, b, &q, kmin, range, NULL);
    }
    if (rc >= 0 && by_bitmap) {
        g->bits = gj_radix_bits(R->n); /* fewer build rows: fewer partitions */
        gj_step(t, g, "prepare_build");
    }
    sl_task_device_free(t, bm);
    return rc;
}

/* Output rows for a fused select expected to keep `share` of n rows: a quarter more and
 * 2^16 rows of slack (a short estimate costs a second pass, not a wrong result). */
static int64_t expect_rows(double share, int64_t n)
{
    double e = 1.25 * share * (double)n + 65536.0;
    return e < (double)n ? (int64_t)e : n;
}

/* The probe rows inside the range, then the build rows with a partner among them (top
 * of the file): selects, then gathers and packing (mode 0), or fused selects (mode 2). */
static int both_sides(sl_task_t *t, const struct join_state *st, struct gj *g, uint64_t kmin,
                      uint64_t range, double share, int mode)
{
    int b = g->build;
    struct gj_side *R = &g->s[b], *S = &g->s[1 - b];
    int rc = mode == 2 ? select_pack(t, st, g, 1 - b, kmin, range, NULL, expect_rows(share, S->n))
                       : select_rows(t, g, S, kmin, range, NULL);
    gj_step(t, g, "prepare_probe");
    if (rc < 0 || S->n == 0 || (double)S->n >= FILTER_BUILD_SHARE * (double)R->n ||
        range > FILTER_BITMAP_BITS)
        return rc;
    uint32_t *bm = NULL;
    /* Build rows with a partner: at most one a kept probe key when the build keys are
     * unique (the usual case); duplicates take the second pass. */
    if ((rc = key_bitmap(t, g, S, kmin, range, &bm)) >= 0)
        rc = mode == 2 ? select_pack(t, st, g, b, kmin, range, bm, S->n)
                       : select_rows(t, g, R, kmin, range, bm);
    if (rc >= 0) {
        g->bits = gj_radix_bits(R->n); /* fewer build rows: fewer partitions */
        gj_step(t, g, "prepare_build");
    }
    sl_task_device_free(t, bm);
    return rc;
}

int gj_filter_mode(sl_task_t *t)
{
    int64_t mode = GJ_FILTER_AUTO;
    sl_task_option_int(t, "debug_join_filter", &mode);
    return (int)mode;
}

int gj_filter_probe(sl_task_t *t, const struct join_state *st, struct gj *g)
{
    struct gj_side *R = &g->s[g->build], *S = &g->s[1 - g->build];
    if (g->algo != GJ_PHJ || (g->kind != SL_K_JOIN_INNER && g->kind != SL_K_JOIN_SEMI) ||
        S->n < FILTER_MIN_ROWS || R->n < 2 || !R->keys || !S->keys)
        return SL_OK;
    const struct gj_side *sd[2] = {R, S};
    int64_t m[2];
    uint64_t *h = sl_task_alloc(t, 2 * FILTER_SAMPLE * sizeof *h);
    if (!h)
        return SL_ENOMEM;
    int rc = gj_sample_keys(t, g->k8, 2, sd, FILTER_SAMPLE, h, m);
    double share = 1.0;
    if (rc >= 0) {
        gj_bits_from_sample(g, h, m[0]); /* gj_pick_bits' work, from the same sample */
        share = kept_share(h, m);
    }
    sl_task_free(t, h);
    gj_step(t, g, "prepare_sample");
    if (rc < 0 || share > FILTER_MAX_KEEP)
        return rc;
    uint64_t kmin = 0, kmax = 0;
    if ((rc = gj_range_of(t, g->k8, 1, &R->keys, &R->n, &kmin, &kmax)) < 0)
        return rc;
    gj_step(t, g, "prepare_range");
    uint64_t range = kmax - kmin + 1; /* 0 (wrapped): every key */
    if (range == 0)
        return SL_OK;
    int mode = gj_filter_mode(t);
    if (mode == GJ_FILTER_MASK && !g->rows_ready && !S->sel && !R->sel)
        return both_sides_marked(t, st, g, kmin, range);
    if (mode != GJ_FILTER_RANGE)
        return both_sides(t, st, g, kmin, range, share, mode == GJ_FILTER_FUSED ? 2 : 0);
    rc = select_rows(t, g, S, kmin, range, NULL);
    gj_step(t, g, "prepare_probe");
    return rc;
}

/* ---- the prepare phase's steps (debug_join_phase_times) ---- */

void gj_steps_begin(sl_task_t *t, struct gj *g, int on)
{
    struct gj_steps *tr = &g->steps;
    memset(tr, 0, sizeof *tr);
    if (!on || cudaEventCreate(&tr->ev[0]) != cudaSuccess)
        return;
    tr->on = 1;
    tr->n = 1;
    if (cudaEventRecord(tr->ev[0], sl_task_stream(t)) != cudaSuccess)
        tr->on = 0;
}

void gj_step(sl_task_t *t, struct gj *g, const char *step)
{
    struct gj_steps *tr = &g->steps;
    if (!tr->on || tr->n >= GJ_STEPS_MAX)
        return;
    if (cudaEventCreate(&tr->ev[tr->n]) != cudaSuccess) {
        tr->on = 0;
        return;
    }
    tr->name[tr->n] = step;
    if (cudaEventRecord(tr->ev[tr->n], sl_task_stream(t)) != cudaSuccess) {
        cudaEventDestroy(tr->ev[tr->n]);
        tr->on = 0;
        return;
    }
    tr->n++;
}

void gj_steps_end(sl_task_t *t, struct gj *g, int report)
{
    struct gj_steps *tr = &g->steps;
    if (report && tr->on && tr->n > 1 && cudaEventSynchronize(tr->ev[tr->n - 1]) == cudaSuccess)
        for (int i = 1; i < tr->n; i++) {
            float ms = 0;
            if (cudaEventElapsedTime(&ms, tr->ev[i - 1], tr->ev[i]) == cudaSuccess)
                sl_task_phase_time(t, tr->name[i], ms);
        }
    for (int i = 0; i < tr->n; i++)
        cudaEventDestroy(tr->ev[i]);
    memset(tr, 0, sizeof *tr);
}
