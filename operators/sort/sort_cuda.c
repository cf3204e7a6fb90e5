/* sort on a GPU (issue 6): the CUDA finalize and source of the sort operator.
 *
 * sink, combine: the CPU bodies (sort.c), which only keep references to the batches, so
 *   on a GPU worker they keep device batches.
 * finalize: the batches in input order (sl__rows_order) form each column as one device
 *   array (zero-copy when they are consecutive slices of one buffer, else device copies
 *   into a temporary). A key that is a signed 4- or 8-byte integer (int32, int64, date32,
 *   timestamp, decimal(p <= 18)) with no payload or one 4- or 8-byte payload: CUB sorts
 *   (key, payload) straight into the output batch. Otherwise CUB sorts (key, row id)
 *   pairs and every other column is gathered by the sorted ids. Keys of the other
 *   integer types (bool, int8, int16, uint8..uint64) are sorted by codes whose signed
 *   order is theirs (sl_k_sort_codes: widened, unsigned ones with the top bit flipped),
 *   and then gathered like a payload. CUB's radix sort is stable, like the CPU sort.
 *   Several keys, or a dictionary-encoded (DICT) key: LSD over the keys (sort_keys),
 *   the last first, each a stable CUB sort of (key code, row id) pairs taken in the
 *   order the passes before left (the key gathered by the row ids), a DICT key coded
 *   by its dictionary's ranks (its strings' byte order, ranked on the host as the CPU
 *   sort ranks them: sl__sort_string_ranks; the small table uploaded), then every
 *   column gathered by the final row ids. DICT columns travel as their int32 codes, the
 *   output sharing the input's dictionary (TPC-H Q16 sorts its 27,840 groups by count
 *   DESC and two DICT strings, which had sent its sort to the host).
 *   Phases (CUDA events): gpu_concat (if any copy), gpu_sort, gpu_gather; where CUB
 *   writes the output, also gpu_sort_cub (gpu_sort from CUB's call on, comparable with
 *   cub_reference_times) and the host's time in the allocations before it and in CUB's
 *   call (profile values gpu_sort_host_alloc_ns, gpu_sort_host_cub_ns).
 * source: slices of the device result (sl__emit_morsel), downloaded for host consumers.
 *
 * Not on the GPU (the sink's can_run says no: the CPU sink and finalize run): a float
 * key, a column of a type other than the integer types above, DICT, float32 and float64
 * (utf8 strings, wide decimals). Left to the CPU finalize (the finalize's can_run says
 * no; the CPU finalize downloads the kept device batches first): nulls in any column
 * (the CPU places them as NULLS FIRST/LAST says), more than SG_MAX_COLS columns, a DICT
 * column whose batches hold different dictionaries.
 * Host batches among the kept ones (the sink keeps them on the host when the input
 * cannot sort in the budget, or once the budget is short), 2^31 rows or more, or device memory needs (output, copies, row ids, codes,
 * CUB temp) over sl_task_device_budget: the out-of-core sort (sort_cuda_ooc.c) where it
 * can, else the CPU. */
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "sluice_k/columns.h"
#include "common/mgpu_ids.h"
#include "common/rows_cuda.h"
#include "sluice_k/sort.h"
#include "sort_op.h"

/* Columns the GPU path takes (more: the CPU sorts). */
#define SG_MAX_COLS 64

/* How the GPU sorts a key of this type: as it is (KEY_NATIVE), by codes (KEY_CODED), by
 * its dictionary's ranks (KEY_DICT) or not at all (0: floats, whose NaN and -0.0 the
 * CPU orders, and other non-integer types). */
enum { KEY_NATIVE = 1, KEY_CODED = 2, KEY_DICT = 3 };
static int key_kind(enum sl_type t)
{
    if (sl__type_signed_word(t))
        return KEY_NATIVE;
    switch (t) {
    case SL_TYPE_BOOL: case SL_TYPE_INT8: case SL_TYPE_INT16: case SL_TYPE_UINT8:
    case SL_TYPE_UINT16: case SL_TYPE_UINT32: case SL_TYPE_UINT64: return KEY_CODED;
    case SL_TYPE_DICT: return KEY_DICT;
    default: return 0;
    }
}

static bool key_signed(enum sl_type t)
{
    return t == SL_TYPE_INT8 || t == SL_TYPE_INT16;
}

int sl__sort_gpu_can_run(const sl_task_t *t)
{
    const sl_op_t *op = sl_task_op((sl_task_t *)t);
    const struct sort_data *d = sl_op_data(op);
    const sl_schema_t *schema = sl_op_output_schema(op);
    if (d->spec.n_keys < 1)
        return 0;
    for (int c = 0; c < sl_schema_num_fields(schema); c++) {
        enum sl_type type;
        sl_schema_field(schema, c, NULL, &type);
        if (!key_kind(type) && type != SL_TYPE_FLOAT32 && type != SL_TYPE_FLOAT64)
            return 0;
    }
    for (int k = 0; k < d->spec.n_keys; k++) {
        enum sl_type type;
        sl_schema_field(schema, d->spec.keys[k].col, NULL, &type);
        if (!key_kind(type))
            return 0;
    }
    return 1;
}

/* Sorted by sort_keys: several keys, or one DICT key. */
static int by_keys(const struct sort_global *g, const struct sort_data *d)
{
    const sl_batch_t *b0 = g->m.rows.items[0].batch;
    return d->spec.n_keys > 1 || key_kind(b0->cols[d->spec.keys[0].col].type) == KEY_DICT;
}

/* Bytes of the codes a key of type t sorts by. */
static int sort_bytes_of(enum sl_type t)
{
    int kind = key_kind(t), w = (int)sl_type_width(t);
    return kind == KEY_DICT ? 4 : kind == KEY_CODED ? (w == 8 ? 8 : 4) : w;
}

/* Every DICT column has one dictionary in all kept batches (the output shares it). */
static int dicts_agree(const struct sort_global *g, const struct sort_data *d)
{
    const sl_batch_t *b0 = g->m.rows.items[0].batch;
    for (int c = 0; c < d->n_cols; c++) {
        if (b0->cols[c].type != SL_TYPE_DICT)
            continue;
        for (int64_t i = 1; i < g->m.rows.n; i++) {
            const sl_batch_t *b = g->m.rows.items[i].batch;
            if (b->n_rows > 0 && !sl__dict_same(b0->cols[c].dict, b->cols[c].dict))
                return 0;
        }
    }
    return 1;
}

/* The sink's CUDA impl: the key type above, and the batch fits what the budget leaves.
 * Host batches (sl__sort_sink_upload, sort_sink.c): by default (debug_sort_sink=auto)
 * none goes up when the pipeline's input, this batch's bytes times its morsels, could
 * not sort in the budget (3 x: input, output, CUB's scratch): the sort goes out of core
 * and its pass 1 reads every row from the host, at any budget, so a larger budget runs
 * the same plan or a larger one (docs/OUT_OF_CORE.md, "A larger budget never runs a worse plan").
 * Otherwise, and always with debug_sort_sink=upload (the rule before session 20), a
 * host batch goes up while three times what went up fits; past that later ones stay on
 * the host. */
int sl__sort_gpu_sink_can_run(const sl_task_t *t)
{
    if (!sl__sort_gpu_can_run(t) || !sl__rows_sink_fits(t))
        return 0;
    const sl_batch_t *b = sl_task_input(t);
    if (!b || sl_batch_device(b) >= 0)
        return 1;
    struct sort_global *g = sl_task_gstate((sl_task_t *)t);
    if (atomic_load(&g->sink_host))
        return 0;
    int64_t bytes = 0;
    for (int c = 0; c < sl_batch_num_columns(b); c++)
        bytes += sl_batch_num_rows(b) * (int64_t)sl_type_width(b->cols[c].type);
    int64_t mode = SL__SORT_SINK_AUTO;
    sl_task_option_int(t, "debug_sort_sink", &mode);
    int64_t up = atomic_fetch_add(&g->sink_dev_bytes, bytes);
    if (!sl__sort_sink_upload(bytes, sl_task_count(t), sl_task_device_budget(t), up,
                              (int)mode)) {
        atomic_store(&g->sink_host, 1);
        atomic_fetch_sub(&g->sink_dev_bytes, bytes);
        return 0;
    }
    return 1;
}

/* How run_gpu sorts: the key's column, width and kind, the one payload (-1: none or
 * several) and the bytes of the value CUB moves with each key (0, 4 or 8), code_bytes:
 * the width of a coded key's codes (0: native key). */
struct sort_shape {
    int kc, kw, kind, pc, vb, code_bytes, direct; /* direct: CUB writes the output */
};

static struct sort_shape shape_of(const struct sort_global *g, const struct sort_data *d)
{
    const sl_batch_t *b0 = g->m.rows.items[0].batch;
    struct sort_shape sh = {.kc = d->spec.keys[0].col, .pc = -1};
    enum sl_type kt = b0->cols[sh.kc].type;
    sh.kw = (int)sl_type_width(kt);
    sh.kind = key_kind(kt);
    int np = d->n_cols - 1, pw = 0;
    for (int c = 0; c < d->n_cols && np == 1; c++)
        if (c != sh.kc)
            sh.pc = c, pw = (int)sl_type_width(b0->cols[c].type);
    sh.direct = sh.kind == KEY_NATIVE && (np == 0 || (np == 1 && pw >= 4));
    sh.vb = !sh.direct ? 4 : np == 0 ? 0 : pw;
    sh.code_bytes = sh.kind == KEY_CODED ? (sh.kw == 8 ? 8 : 4) : 0;
    return sh;
}

/* Device bytes the GPU finalize needs: the output, copies of columns that are not one
 * run of one buffer, row ids (unless CUB writes the output), a coded key's codes and
 * CUB's temp storage. */
static int64_t need_bytes(struct sort_global *g, const struct sort_data *d, int64_t n,
                          size_t *temp_bytes)
{
    const sl_batch_t *b0 = g->m.rows.items[0].batch;
    int64_t need;
    *temp_bytes = 0;
    if (by_keys(g, d)) { /* row ids twice, a gathered key, codes in and out, the ranks */
        need = 8 * n + 8 * n + 16 * n;
        for (int k = 0; k < d->spec.n_keys; k++) {
            const struct sl__col *kc = &b0->cols[d->spec.keys[k].col];
            size_t tb = 0;
            if (sl_k_sort_pairs(NULL, &tb, sort_bytes_of(kc->type), d->spec.keys[k].desc, NULL,
                                NULL, NULL, NULL, 4, n, 0) != cudaSuccess)
                return INT64_MAX;
            *temp_bytes = tb > *temp_bytes ? tb : *temp_bytes;
            if (kc->type == SL_TYPE_DICT && kc->dict)
                need += 4 * kc->dict->n + 256;
        }
        need += (int64_t)*temp_bytes;
    } else {
        struct sort_shape sh = shape_of(g, d);
        /* The can_run, the finalize and its body all ask, for the same rows and shape (the
         * shape is the operator's): asked once, since CUB's size query computes its
         * kernels' occupancy on the device each time. */
        if (g->gpu_temp_n != n) {
            size_t bytes = 0;
            if (sl_k_sort_pairs(NULL, &bytes, sh.code_bytes ? sh.code_bytes : sh.kw,
                                d->spec.keys[0].desc, NULL, NULL, NULL, NULL, sh.vb, n,
                                0) != cudaSuccess)
                return INT64_MAX;
            g->gpu_temp_n = n;
            g->gpu_temp_bytes = bytes;
        }
        *temp_bytes = g->gpu_temp_bytes;
        need = (int64_t)*temp_bytes + (sh.direct ? 0 : 8 * n) + 2 * sh.code_bytes * n;
    }
    need += sl__rows_copy_bytes(&g->m.rows, d->n_cols, n);
    for (int c = 0; c < d->n_cols; c++)
        need += (int64_t)sl_type_width(b0->cols[c].type) * n; /* the output */
    return need;
}

/* The finalize runs on the GPU unless these batches need the CPU (top comment). It
 * orders the kept batches (idempotent) so that contiguity, and so the memory estimate,
 * is that of the input order the finalize sorts in. */
int sl__sort_gpu_finalize_can_run(const sl_task_t *tc)
{
    sl_task_t *t = (sl_task_t *)tc;
    struct sort_global *g = sl_task_gstate(t);
    const struct sort_data *d = sl_op_data(sl_task_op(t));
    if (!sl__sort_gpu_can_run(tc) || d->n_cols > SG_MAX_COLS)
        return 0;
    sl__rows_order(&g->m.rows);
    if (g->m.rows.n > 0 && !dicts_agree(g, d))
        return 0;
    int64_t n = sl__rows_gpu_rows(&g->m.rows, d->n_cols);
    size_t temp;
    if (n == 0 || (n > 0 && need_bytes(g, d, n, &temp) <= sl_task_device_budget(tc)))
        return 1;
    return sl__sort_ooc_can_run(tc); /* host batches, or over the budget: out of core */
}

/* 1 when the in-GPU finalize fits: every batch on this GPU and the budget covers it. */
static int fits_in_gpu(sl_task_t *t, struct sort_global *g, const struct sort_data *d)
{
    int64_t n = sl__rows_gpu_rows(&g->m.rows, d->n_cols);
    size_t temp;
    return n == 0 || (n > 0 && need_bytes(g, d, n, &temp) <= sl_task_device_budget(t));
}

/* The ranks of DICT column c's dictionary (as batch b0 holds it) in device memory (w's
 * scratch), uploaded on the task's stream; NULL after recording the failure. */
static const uint32_t *dict_ranks(struct sl__gpu_work *w, const sl_batch_t *b0, int c)
{
    sl_task_t *t = w->t;
    struct sl__colview v;
    uint64_t *rank = NULL;
    int64_t m = 0;
    int rc = sl__colview_get(b0, c, &v);
    if (rc == SL_OK)
        rc = sl__sort_string_ranks(&v, &rank, &m);
    if (rc < 0) {
        sl_task_fail(t, rc, "sort on the GPU: ranking a dictionary's strings");
        return NULL;
    }
    uint32_t *h = (uint32_t *)rank; /* narrowed in place: entry i's bytes lie at or below
                                      * rank[i]'s, already read */
    for (int64_t i = 0; i < m; i++)
        h[i] = (uint32_t)rank[i];
    uint32_t *dv = sl__gpu_work_alloc(w, (size_t)(m ? m : 1) * 4);
    cudaError_t e = cudaSuccess;
    if (dv && m) /* pageable: the copy has read h when it returns */
        e = SL_TASK_CUDA_CALL(cudaMemcpyAsync(dv, h, (size_t)m * 4, cudaMemcpyHostToDevice,
                                              sl_task_stream(t)));
    sl__free(rank, 0);
    if (!dv)
        return NULL; /* sl__gpu_work_alloc recorded it */
    if (e != cudaSuccess) {
        SL_TASK_CUDA_FAIL(t, e, "sort on the GPU: uploading dictionary ranks");
        return NULL;
    }
    return dv;
}

/* Several keys or a DICT key (top comment): LSD passes, the last key first, then every
 * column gathered into the output by the final row ids. */
static int sort_keys(struct sl__gpu_work *w, const struct sort_global *g,
                     const struct sort_data *d, const void *const *cols, int64_t n, void *temp,
                     size_t temp_bytes)
{
    sl_task_t *t = w->t;
    cudaStream_t s = sl_task_stream(t);
    const sl_batch_t *b0 = g->m.rows.items[0].batch;
    uint32_t *ids = sl__gpu_work_alloc(w, (size_t)n * 8);
    char *key = sl__gpu_work_alloc(w, (size_t)n * 8);
    char *codes = sl__gpu_work_alloc(w, (size_t)n * 16);
    if (!ids || !key || !codes)
        return sl_task_fail(t, SL_ENOMEM, "sort on the GPU: out of memory for %lld rows",
                            (long long)n);
    uint32_t *cur = ids, *next = ids + n;
    SL_TASK_CUDA_TRY(t, sl_k_iota_u32(cur, n, 0, s), "row ids");
    for (int k = d->spec.n_keys - 1; k >= 0; k--) {
        const struct sl__sort_key *sk = &d->spec.keys[k];
        enum sl_type kt = b0->cols[sk->col].type;
        int kw = (int)sl_type_width(kt), kind = key_kind(kt);
        const void *kin = cols[sk->col];
        if (k < d->spec.n_keys - 1) { /* the key in the order the passes so far left */
            SL_TASK_CUDA_TRY(t, sl_k_gather_width(kin, cur, key, kw, n, s), "gathering a key");
            kin = key;
        }
        if (kind == KEY_DICT) {
            const uint32_t *rank = dict_ranks(w, b0, sk->col);
            if (!rank)
                return SL_ENOMEM;
            SL_TASK_CUDA_TRY(t, sl_k_gather_b32(rank, kin, (uint32_t *)codes, n, s),
                             "dictionary ranks");
            kin = codes;
        } else if (kind == KEY_CODED) {
            SL_TASK_CUDA_TRY(t, sl_k_sort_codes(kin, kw, key_signed(kt), n, codes, s),
                             "key codes");
            kin = codes;
        }
        size_t tb = temp_bytes;
        SL_TASK_CUDA_TRY(t,
                         sl_k_sort_pairs(temp, &tb, sort_bytes_of(kt), sk->desc, kin,
                                         codes + (size_t)n * 8, cur, next, 4, n, s),
                         "sorting");
        uint32_t *x = cur;
        cur = next;
        next = x;
    }
    sl__gpu_work_mark(w, 2);
    int rc = sl__gpu_gather_columns(t, cols, d->n_cols, -1, cur, g->m.out, n);
    sl__gpu_work_mark(w, 3);
    return rc;
}

static int64_t host_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int run_gpu(struct sl__gpu_work *w, void *arg)
{
    sl_task_t *t = w->t;
    struct sort_global *g = arg;
    const struct sort_data *d = sl_op_data(sl_task_op(t));
    cudaStream_t s = sl_task_stream(t);
    const sl_schema_t *schema = sl_op_output_schema(sl_task_op(t));
    int desc = d->spec.keys[0].desc;
    struct sort_shape sh = shape_of(g, d);
    int64_t n = g->m.n;
    size_t temp_bytes = 0;
    need_bytes(g, d, n, &temp_bytes);
    const void *cols[SG_MAX_COLS];
    sl__gpu_work_mark(w, 0);
    int rc = sl__gpu_work_columns(w, &g->m.rows, d->n_cols, n, cols);
    if (rc < 0)
        return rc;
    sl__gpu_work_mark(w, 1);
    int64_t h0 = host_ns(); /* the host's part of gpu_sort before CUB (profile values) */
    g->m.out = sl_task_new_batch(t, schema, n);
    if (g->m.out) /* DICT columns: codes move, the dictionary is shared */
        sl__batch_share_dicts(g->m.out, g->m.rows.items[0].batch);
    if (by_keys(g, d)) {
        void *tmp = sl__gpu_work_alloc(w, temp_bytes);
        if (!g->m.out || !tmp)
            return sl_task_fail(t, SL_ENOMEM, "sort on the GPU: out of memory for %lld rows",
                                (long long)n);
        return sort_keys(w, g, d, cols, n, tmp, temp_bytes);
    }
    void *temp = sl__gpu_work_alloc(w, temp_bytes);
    uint32_t *ids = sh.direct ? NULL : sl__gpu_work_alloc(w, (size_t)n * 8);
    char *codes = sh.code_bytes ? sl__gpu_work_alloc(w, (size_t)n * 2 * sh.code_bytes) : NULL;
    if (!g->m.out || !temp || (!sh.direct && !ids) || (sh.code_bytes && !codes))
        return sl_task_fail(t, SL_ENOMEM, "sort on the GPU: out of memory for %lld rows",
                            (long long)n);
    void *kout = sl__col_values(g->m.out, sh.kc);
    if (sh.direct) {
        int64_t h1 = host_ns();
        /* gpu_sort_cub: CUB's span alone (its launches and kernels), as
         * cub_reference_times measures CUB (issue 19's accounting of gpu_sort) */
        sl__gpu_work_mark(w, 4);
        w->span_name = "gpu_sort_cub";
        w->span_from = 4;
        w->span_to = 2;
        void *vout = sh.vb ? sl__col_values(g->m.out, sh.pc) : NULL;
        SL_TASK_CUDA_TRY(t,
                         sl_k_sort_pairs(temp, &temp_bytes, sh.kw, desc, cols[sh.kc], kout,
                                         sh.vb ? cols[sh.pc] : NULL, vout, sh.vb, n, s),
                         "sorting");
        /* Host nanoseconds of the output's and temp's allocation and of CUB's call (its
         * launches), both inside gpu_sort (issue 19's accounting). */
        sl_task_profile_value(t, "gpu_sort_host_alloc_ns", h1 - h0);
        sl_task_profile_value(t, "gpu_sort_host_cub_ns", host_ns() - h1);
        sl__gpu_work_mark(w, 2);
        sl__gpu_work_mark(w, 3);
        return SL_OK;
    }
    const void *kin = cols[sh.kc];
    int sort_bytes = sh.kw, skip = sh.kc;
    if (sh.code_bytes) { /* the codes sort; the key is gathered like a payload */
        enum sl_type kt = g->m.rows.items[0].batch->cols[sh.kc].type;
        SL_TASK_CUDA_TRY(t, sl_k_sort_codes(kin, sh.kw, key_signed(kt), n, codes, s), "key codes");
        kin = codes;
        kout = codes + (size_t)n * sh.code_bytes;
        sort_bytes = sh.code_bytes;
        skip = -1;
    }
    SL_TASK_CUDA_TRY(t, sl_k_iota_u32(ids, n, 0, s), "row ids");
    SL_TASK_CUDA_TRY(t,
                     sl_k_sort_pairs(temp, &temp_bytes, sort_bytes, desc, kin, kout, ids, ids + n,
                                     4, n, s),
                     "sorting");
    sl__gpu_work_mark(w, 2);
    if ((rc = sl__gpu_gather_columns(t, cols, d->n_cols, skip, ids + n, g->m.out, n)) < 0)
        return rc;
    sl__gpu_work_mark(w, 3);
    return SL_OK;
}

int sl__sort_gpu_finalize(sl_task_t *t)
{
    struct sort_global *g = sl_task_gstate(t);
    const struct sort_data *d = sl_op_data(sl_task_op(t));
    if (sl__mat_count(&g->m) == 0)
        return SL_OK;
    if (!fits_in_gpu(t, g, d))
        return sl__sort_ooc_finalize(t);
    if (sl__task_n_devices(t) > 1) { /* several devices: sort_mg_cuda.c, or why not */
        struct sl__mg_pick pick;
        int why = sl__sort_mg_choice(t, &pick);
        sl_task_profile_value(t, "multi_device_fallback", why);
        if (why == 0)
            return sl__sort_mg_finalize(t, &pick);
    }
    int concat = sl__rows_copy_bytes(&g->m.rows, d->n_cols, g->m.n) > 0;
    const char *const names[3] = {concat ? "gpu_concat" : NULL, "gpu_sort",
                                  !by_keys(g, d) && shape_of(g, d).direct ? NULL : "gpu_gather"};
    return sl__mat_gpu_run(t, &g->m, run_gpu, g, names, 3, "sort on the GPU");
}

/* The definition CUDA builds register (operators/sort/meson.build): sort.c's with the
 * GPU implementations added. */
SL__MAT_CUDA_DEF(sl__sort_cuda_def, SL__SORT_DEF_FIELDS, sl__sort_finalize_cpu, sl__mat_emit_morsel,
                 sl__sort_gpu_sink_can_run, sl__sort_gpu_finalize, sl__sort_gpu_finalize_can_run);
