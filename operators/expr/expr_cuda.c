/* filter and project on a GPU (issue 17).
 *
 * filter: the predicate, compiled at bind into a program (expr_prog.c), runs over the
 * device batch, one thread per row (kernels/expr), or, when it is an OR of ANDs of
 * simple tests (expr_conj.c), those tests without the program; CUB compacts the
 * passing row numbers; their count is read back (one wait per batch: the output's
 * size), and every column is gathered by them (the fixed-width ones together),
 * validity included. A batch
 * whose rows all pass goes on as it is; one with none emits nothing. Predicates on DICT
 * columns are evaluated once per dictionary entry on the host (sl__expr_dict_hits, the
 * CPU evaluator's loop), and the kernel looks codes up in those tables.
 *
 * utf8/large_utf8 columns are gathered with their bytes (common/str_cuda.c), and string
 * predicates on them run in the program (sluice_k/expr_prog.h).
 *
 * can_run says no (the CPU filter runs, on the host, in the GPU pipeline) when the
 * predicate is not a program (filter_op.h's `why`) or a batch has 2^31 rows or more. A
 * host batch with strings is uploaded, strings too: the host stage of a GPU task runs on
 * the GPU worker's one thread (TPC-H Q13's o_comment NOT LIKE on pinned tables at SF 10:
 * 883 ms there, against about 17 ms to move the column).
 *
 * project: bare columns are passed on as they are; each computed item's program (in
 * registers where it can: sluice_k/expr_reg.h) writes its column and validity words into
 * a device batch of the computed columns; one read-back per batch for the error word and
 * the columns' null counts (a column without nulls drops its validity). can_run says no
 * when an item is not a program or gives strings, and to a batch in host memory that it
 * only selects from (then the next GPU stage uploads only the columns selected). */
#include <string.h>

#include <cuda_runtime_api.h>

#include "common/rows_cuda.h"
#include "common/str_cuda.h"
#include "filter_op.h"
#include "gpu_ext.h"
#include "project_op.h"
#include "sluice_k/expr.h"

/* Device memory of one batch's run: flags, row numbers, CUB's scratch, the error word
 * and the count, and the dictionary tables; carved from one allocation. */
struct xp_run {
    struct sl_xp_prog prog;   /* x->prog with the tables' offsets patched in */
    struct sl_xp_cols cols;
    uint8_t *d_tables;
    void *d_mem;
};

/* The program's columns and dictionary tables for batch b (tables uploaded). */
static int xp_prepare(sl_task_t *t, const struct sl__expr *e, const struct sl__xp *x,
                      const sl_batch_t *b, struct xp_run *run)
{
    run->prog = x->prog;
    run->d_tables = NULL;
    int64_t generic = 0; /* LIKE's search a byte at a time, as before the word search */
    sl_task_option_int(t, "debug_gpu_generic", &generic);
    for (int i = 0; generic && i < run->prog.n_ins; i++)
        if (run->prog.ins[i].op == SL_XP_LIKE)
            run->prog.ins[i].flag |= 2;
    sl__xp_cols(&run->prog, b, &run->cols);
    if (x->n_dicts == 0)
        return SL_OK;
    int64_t need = 0;
    sl__xp_tables(e, x, b, &run->prog, NULL, 0, &need);
    uint8_t *h = sl__malloc((size_t)need + 1);
    if (!h)
        return sl_task_fail(t, SL_ENOMEM, "out of memory for dictionary tables");
    sl__xp_tables(e, x, b, &run->prog, h, need, &need);
    run->d_tables = sl_task_device_alloc(t, (size_t)need + 1);
    cudaError_t err = cudaErrorMemoryAllocation;
    if (run->d_tables) /* pageable: the copy has read h when it returns */
        err = SL_TASK_CUDA_CALL(cudaMemcpyAsync(run->d_tables, h, (size_t)need,
                                                cudaMemcpyHostToDevice, sl_task_stream(t)));
    sl__free(h, (size_t)need + 1);
    if (!run->d_tables)
        return SL_ENOMEM;
    return err == cudaSuccess ? SL_OK : SL_TASK_CUDA_FAIL(t, err, "dictionary tables");
}

/* Reads back `bytes` bytes of d_small into h (which starts with the error word: the
 * filter's count follows it, the project's null counts); fails the task on a data error,
 * naming the expression of `e`/`x` (the first one, for project: the item is not known). */
static int read_back(sl_task_t *t, const char *what, const struct sl__expr *e,
                     const struct sl__xp *x, const void *d_small, void *h, size_t bytes)
{
    cudaStream_t s = sl_task_stream(t);
    SL_TASK_CUDA_TRY(t, cudaMemcpyAsync(h, d_small, bytes, cudaMemcpyDeviceToHost, s),
                     "filter count");
    SL_TASK_CUDA_TRY(t, cudaStreamSynchronize(s), "filter on the GPU");
    const struct sl_k_expr_err *err = h;
    if (err->code) {
        char msg[400];
        sl__xp_error_text(e, x, err->code, err->ins, err->row, msg, sizeof msg);
        return sl_task_fail(t, err->code == SL_XP_EOVERFLOW ? SL_EOVERFLOW : SL_EINTERNAL,
                            "%s: %s", what, msg);
    }
    return SL_OK;
}

static int is_utf8(enum sl_type t)
{
    return t == SL_TYPE_UTF8 || t == SL_TYPE_LARGE_UTF8;
}

/* The fixed-width columns of `in` at the k rows d_idx into `out`: their values by one
 * kernel per SL_K_GATHER_COLS columns (each row's index read once); then the validity of
 * every column with nulls, strings included (gather_strings moves only their bytes). */
static int gather_fixed(sl_task_t *t, sl_batch_t *in, sl_batch_t *out, const uint32_t *d_idx,
                        int64_t k)
{
    cudaStream_t s = sl_task_stream(t);
    struct sl_k_gather_cols g = {.n = 0};
    cudaError_t e = cudaSuccess;
    for (int c = 0; c < in->n_cols && e == cudaSuccess; c++) {
        if (!is_utf8(in->cols[c].type)) {
            g.width[g.n] = (int32_t)sl_type_width(in->cols[c].type);
            g.src[g.n] = sl__col_values(in, c);
            g.dst[g.n++] = sl__col_values(out, c);
        }
        if (g.n == SL_K_GATHER_COLS || (c == in->n_cols - 1 && g.n > 0)) {
            e = SL_TASK_CUDA_CALL(sl_k_expr_gather_cols(&g, d_idx, k, s));
            g.n = 0;
        }
    }
    for (int c = 0; c < in->n_cols && e == cudaSuccess; c++) {
        const struct sl__col *ic = &in->cols[c];
        if (!ic->validity || ic->null_count == 0) /* strings' validity too */
            continue;
        struct sl__buf *vb = sl__device_words(t, (k + 31) / 32);
        if (!vb)
            return SL_ENOMEM;
        out->cols[c].validity = vb;
        out->cols[c].null_count = -1;
        e = SL_TASK_CUDA_CALL(
            sl_k_expr_gather_valid(ic->validity->ptr, ic->offset, d_idx, vb->ptr, k, s));
    }
    return e == cudaSuccess ? SL_OK : SL_TASK_CUDA_FAIL(t, e, "filter gather");
}

/* The utf8/large_utf8 columns of `in` at the k rows d_idx into `out`, all at once (one
 * wait for their sizes): views of each, then common/str_cuda.c's gather. */
static int gather_strings(sl_task_t *t, sl_batch_t *in, sl_batch_t *out, const uint32_t *d_idx,
                          int64_t k)
{
    int n_str = 0;
    for (int c = 0; c < in->n_cols; c++)
        n_str += is_utf8(in->cols[c].type);
    if (n_str == 0)
        return SL_OK;
    int64_t n = in->n_rows;
    struct sl__str_gather *g = sl_task_alloc(t, (size_t)n_str * sizeof *g);
    sl_k_strview_t *views = sl_task_device_alloc(t, (size_t)n_str * (size_t)n * sizeof *views);
    int rc = g && views ? SL_OK : SL_ENOMEM;
    for (int c = 0, j = 0; c < in->n_cols && rc == SL_OK; c++) {
        if (!is_utf8(in->cols[c].type))
            continue;
        g[j] = (struct sl__str_gather){views + (size_t)j * (size_t)n, c};
        rc = sl__str_views(t, in, c, views + (size_t)j * (size_t)n);
        j++;
    }
    if (rc == SL_OK)
        rc = sl__str_gather_columns(t, g, n_str, d_idx, k, k, out, "where");
    sl_task_device_free(t, views); /* stream-ordered: after the gather */
    sl_task_free(t, g);
    return rc;
}

int sl__gpu_take(sl_task_t *t, sl_batch_t *in, const uint32_t *d_idx, int64_t k,
                 sl_batch_t **out)
{
    *out = sl_task_new_batch(t, in->schema, k);
    if (!*out)
        return SL_ENOMEM;
    int rc = gather_fixed(t, in, *out, d_idx, k);
    if (rc == SL_OK)
        rc = gather_strings(t, in, *out, d_idx, k);
    if (rc < 0) {
        sl_batch_unref(*out);
        *out = NULL;
        return rc;
    }
    sl__batch_share_dicts(*out, in);
    return SL_OK;
}

int sl__xp_select_gpu(sl_task_t *t, const struct sl__expr *e, const struct sl__xp *x,
                      sl_batch_t *in, uint32_t *d_idx, int64_t *k)
{
    int64_t n = sl_batch_num_rows(in);
    *k = 0;
    if (n == 0)
        return SL_OK;
    struct xp_run run;
    int rc = xp_prepare(t, e, x, in, &run);
    if (rc < 0)
        return rc;
    size_t temp = 0;
    cudaStream_t s = sl_task_stream(t);
    SL_TASK_CUDA_TRY(t, sl_k_expr_select(NULL, &temp, NULL, NULL, NULL, n, s), "filter select");
    size_t small_at = ((size_t)n + 255) & ~(size_t)255, temp_at = small_at + 256;
    char *m = sl_task_device_alloc(t, temp_at + temp);
    if (!m) {
        sl_task_device_free(t, run.d_tables);
        return SL_ENOMEM;
    }
    uint8_t *d_flags = (uint8_t *)m;
    struct sl_k_expr_err *d_err = (struct sl_k_expr_err *)(m + small_at);
    int32_t *d_count = (int32_t *)(m + small_at + sizeof *d_err);
    struct sl_xj_conj conj;
    cudaError_t ce = SL_TASK_CUDA_CALL(cudaMemsetAsync(d_err, 0, 64, s));
    if (ce == cudaSuccess && sl__xj_from_prog(&run.prog, &conj))
        ce = SL_TASK_CUDA_CALL(
            sl_k_expr_conj_flags(&conj, &run.cols, run.d_tables, n, d_flags, s));
    else if (ce == cudaSuccess)
        ce = SL_TASK_CUDA_CALL(
            sl_k_expr_flags(&run.prog, &run.cols, run.d_tables, n, d_flags, d_err, s));
    if (ce == cudaSuccess)
        ce = SL_TASK_CUDA_CALL(sl_k_expr_select(m + temp_at, &temp, d_flags, d_idx, d_count, n, s));
    struct {
        struct sl_k_expr_err err;
        int32_t count, pad;
    } h;
    rc = ce == cudaSuccess ? read_back(t, "where", e, x, d_err, &h, sizeof h)
                           : SL_TASK_CUDA_FAIL(t, ce, "filter");
    *k = rc == SL_OK ? h.count : 0;
    sl_task_device_free(t, run.d_tables);
    sl_task_device_free(t, m); /* stream-ordered */
    return rc;
}

static int filter_gpu(sl_task_t *t)
{
    const struct sl__filter_data *d = sl_op_data(sl_task_op(t));
    sl_batch_t *in = sl_task_input(t);
    int64_t n = sl_batch_num_rows(in), k = 0;
    if (n == 0)
        return SL_OK;
    uint32_t *d_idx = sl_task_device_alloc(t, (size_t)n * 4);
    if (!d_idx)
        return SL_ENOMEM;
    int rc = sl__xp_select_gpu(t, d->e, &d->xp, in, d_idx, &k);
    if (rc == SL_OK && k == n) { /* every row passes: the batch goes on as it is */
        sl_task_device_free(t, d_idx);
        sl_batch_ref(in);
        return sl_task_emit(t, in);
    }
    sl_batch_t *out = NULL;
    if (rc == SL_OK && k > 0)
        rc = sl__gpu_take(t, in, d_idx, k, &out);
    sl_task_device_free(t, d_idx); /* stream-ordered: after the gathers */
    return out ? sl_task_emit(t, out) : rc;
}

/* Batches of fewer than 2^31 rows (CUB's counts) and a predicate the program takes. */
static int filter_gpu_can_run(const sl_task_t *t)
{
    const struct sl__filter_data *d = sl_op_data(sl_task_op((sl_task_t *)t));
    const sl_batch_t *b = sl_task_input(t);
    return d->gpu_ok && sl__xp_rows_fit(b);
}

static const struct sl_impl filter_cuda_impls[] = {
    {.device = SL_DEVICE_CPU, .run = sl__filter_execute},
    {.device = SL_DEVICE_CUDA, .run = filter_gpu, .can_run = filter_gpu_can_run},
};
static const struct sl_phase filter_cuda_phase = {filter_cuda_impls, 2, sl__filter_cost};

/* The definition CUDA builds register (operators/expr/meson.build). */
SL__FILTER_DEF(sl__filter_cuda_def, filter_cuda_phase);

/* ---------------- project ---------------- */

/* Computed item i of d into column c of tmp (values and validity), errors into d_err. */
static int project_item(sl_task_t *t, const struct proj_data *d, int i, sl_batch_t *in,
                        sl_batch_t *tmp, struct sl_k_expr_err *d_err,
                        unsigned long long *d_nulls)
{
    const struct proj_item *it = &d->items[i];
    int64_t n = sl_batch_num_rows(in);
    struct xp_run run;
    int rc = xp_prepare(t, it->e, &d->xp[i], in, &run);
    if (rc < 0)
        return rc;
    struct sl__buf *vb = sl__device_words(t, (n + 31) / 32);
    if (!vb) {
        sl_task_device_free(t, run.d_tables);
        return SL_ENOMEM;
    }
    tmp->cols[it->tmp_col].validity = vb;
    tmp->cols[it->tmp_col].null_count = -1;
    int64_t generic = 0;
    int store = sl__xp_store_of(sl__expr_type(it->e));
    sl_task_option_int(t, "debug_gpu_generic", &generic);
    void *out = sl__col_values(tmp, it->tmp_col);
    cudaError_t e = SL_TASK_CUDA_CALL(
        d->xp[i].reg_ok && !generic
            ? sl_k_expr_project_reg(&d->xp[i].reg, &run.prog, &run.cols, n, store, out, vb->ptr,
                                    d_nulls, d_err, sl_task_stream(t))
            : sl_k_expr_project(&run.prog, &run.cols, run.d_tables, n, store, out, vb->ptr,
                                d_nulls, d_err, sl_task_stream(t)));
    sl_task_device_free(t, run.d_tables);
    return e == cudaSuccess ? SL_OK : SL_TASK_CUDA_FAIL(t, e, "project");
}

/* The computed columns' null counts (read back with the error word): exact, and a column
 * without nulls drops its validity, so that the operators after it take their paths for
 * columns without nulls (the GPU group-by's few-groups kernels). */
static void set_null_counts(sl_batch_t *tmp, const unsigned long long *nulls)
{
    for (int c = 0; c < tmp->n_cols; c++) {
        tmp->cols[c].null_count = (int64_t)nulls[c];
        if (nulls[c] == 0) {
            sl__buf_unref(tmp->cols[c].validity);
            tmp->cols[c].validity = NULL;
        }
    }
}

/* Every computed item of d over `in` into tmp: errors and null counts into d_small (64
 * bytes of error word, then one counter per computed column), read back once. */
static int project_all(sl_task_t *t, const struct proj_data *d, sl_batch_t *in, sl_batch_t *tmp,
                       char *d_small, char *h_small, size_t small_bytes)
{
    cudaError_t ce = SL_TASK_CUDA_CALL(cudaMemsetAsync(d_small, 0, small_bytes,
                                                       sl_task_stream(t)));
    int rc = ce == cudaSuccess ? SL_OK : SL_TASK_CUDA_FAIL(t, ce, "project");
    int first = -1;
    unsigned long long *d_nulls = (unsigned long long *)(d_small + 64);
    for (int i = 0; rc == SL_OK && i < d->n; i++) {
        if (d->items[i].tmp_col < 0)
            continue;
        first = first < 0 ? i : first;
        rc = project_item(t, d, i, in, tmp, (struct sl_k_expr_err *)d_small,
                          d_nulls + d->items[i].tmp_col);
    }
    if (rc == SL_OK)
        rc = read_back(t, "project", d->items[first].e, &d->xp[first], d_small, h_small,
                       small_bytes);
    if (rc == SL_OK)
        set_null_counts(tmp, (const unsigned long long *)(h_small + 64));
    return rc;
}

static int project_gpu(sl_task_t *t)
{
    const struct proj_data *d = sl_op_data(sl_task_op(t));
    sl_batch_t *in = sl_task_input(t);
    int64_t n = sl_batch_num_rows(in);
    if (n == 0)
        return SL_OK;
    sl_batch_t *tmp = NULL;
    if (d->n_exprs) {
        size_t bytes = 64 + 8 * (size_t)d->n_exprs;
        tmp = sl_task_new_batch(t, d->computed, n);
        char *d_small = sl_task_device_alloc(t, bytes), *h_small = sl_task_alloc(t, bytes);
        int rc = tmp && d_small && h_small ? project_all(t, d, in, tmp, d_small, h_small, bytes)
                                           : SL_ENOMEM;
        sl_task_device_free(t, d_small);
        if (h_small)
            sl_task_free(t, h_small);
        if (rc < 0) {
            sl_batch_unref(tmp);
            return rc;
        }
    }
    return sl__project_emit(t, d, in, tmp);
}

/* Batches of any size whose computed items the program takes (bare columns of any type
 * are passed on as they are), strings read or not (as for the filter). A host batch that
 * is only selected from or renamed stays on the host: there that costs nothing, and the
 * GPU stage after it uploads the columns kept, not every column of the scanned table
 * (TPC-H Q1 on pinned tables uploaded all 16 of lineitem's columns, its comments
 * included, to read 7). */
static int project_gpu_can_run(const sl_task_t *t)
{
    const struct proj_data *d = sl_op_data(sl_task_op((sl_task_t *)t));
    const sl_batch_t *b = sl_task_input(t);
    if (!d->gpu_ok || !b || sl_batch_device(b) >= 0)
        return d->gpu_ok;
    return d->n_exprs > 0;
}

static const struct sl_impl project_cuda_impls[] = {
    {.device = SL_DEVICE_CPU, .run = sl__project_execute},
    {.device = SL_DEVICE_CUDA, .run = project_gpu, .can_run = project_gpu_can_run},
};
static const struct sl_phase project_cuda_phase = {project_cuda_impls, 2, sl__project_cost};

SL__PROJECT_DEF(sl__project_cuda_def, project_cuda_phase);
