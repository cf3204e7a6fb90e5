/* The generators on a GPU: each CUDA source fills a device batch for its task's morsel
 * on the task's stream (kernels/gen, the CPU's per-row functions from
 * sluice_k/gen_math.h) and emits it, so a pipeline placed on a GPU generates its data
 * in device memory instead of on the GPU worker's one host thread. The kernels are
 * enqueued and not waited for; the runtime orders what follows on the same stream.
 *
 * Validity bitmaps are device words from the same budgeted pool as the columns; their
 * null count is left unknown (-1) rather than read back, which would stall the stream. */
#include <cuda_runtime_api.h>

#include "common/rows_cuda.h"
#include "gen_int.h"
#include "gpu_ext.h"
#include "operators.h"
#include "sluice_k/gen.h"

/* The task's morsel of `rows` rows and a device batch of the output schema for it. */
static sl_batch_t *morsel_batch(sl_task_t *t, int64_t rows, int64_t *first, int64_t *n)
{
    sl__gen_morsel(t, rows, first, n);
    return sl_task_new_batch(t, sl_op_output_schema(sl_task_op(t)), *n);
}

/* A device validity bitmap for column c of b: (n + 31) / 32 words, filled by a kernel. */
static uint32_t *device_validity(sl_task_t *t, sl_batch_t *b, int c, int64_t n)
{
    struct sl__buf *buf = sl__device_words(t, (n + 31) / 32);
    if (!buf)
        return NULL;
    b->cols[c].validity = buf;
    b->cols[c].null_count = -1;
    return buf->ptr;
}

static int keys_on_gpu(sl_task_t *t, const struct sl__gen_keys *g, int key64,
                      enum sl__gen_vtype ptype, int payloads)
{
    int64_t first, n;
    sl_batch_t *b = morsel_batch(t, g->rows, &first, &n);
    if (!b)
        return SL_ENOMEM;
    cudaStream_t st = (cudaStream_t)sl_task_stream(t);
    uint32_t *valid = NULL;
    if (g->null_rate > 0 && !(valid = device_validity(t, b, 0, n))) {
        sl_batch_unref(b);
        return SL_ENOMEM;
    }
    cudaError_t e =
        SL_TASK_CUDA_CALL(sl_k_gen_keys(g, key64, first, n, sl__col_values(b, 0), valid, st));
    for (int j = 1; e == cudaSuccess && j <= payloads; j++)
        e = SL_TASK_CUDA_CALL(sl_k_gen_payload(ptype, j, first, n, sl__col_values(b, j), st));
    if (e != cudaSuccess) {
        sl_batch_unref(b);
        return SL_TASK_CUDA_FAIL(t, e, "gen.keys");
    }
    return sl_task_emit(t, b);
}

static int uniform_on_gpu(sl_task_t *t, const struct sl__gen_uni *u, int64_t rows)
{
    int64_t first, n;
    sl_batch_t *b = morsel_batch(t, rows, &first, &n);
    if (!b)
        return SL_ENOMEM;
    uint32_t *valid = NULL;
    if (u->null_rate > 0 && !(valid = device_validity(t, b, 0, n))) {
        sl_batch_unref(b);
        return SL_ENOMEM;
    }
    cudaError_t e = SL_TASK_CUDA_CALL(sl_k_gen_uniform(u, first, n, sl__col_values(b, 0), valid,
                                                       (cudaStream_t)sl_task_stream(t)));
    if (e != cudaSuccess) {
        sl_batch_unref(b);
        return SL_TASK_CUDA_FAIL(t, e, "gen.uniform");
    }
    return sl_task_emit(t, b);
}

static int sequence_on_gpu(sl_task_t *t, int64_t start, int64_t step, int is64, int64_t rows)
{
    int64_t first, n;
    sl_batch_t *b = morsel_batch(t, rows, &first, &n);
    if (!b)
        return SL_ENOMEM;
    cudaError_t e = SL_TASK_CUDA_CALL(sl_k_gen_sequence(
        start, step, is64, first, n, sl__col_values(b, 0), (cudaStream_t)sl_task_stream(t)));
    if (e != cudaSuccess) {
        sl_batch_unref(b);
        return SL_TASK_CUDA_FAIL(t, e, "gen.sequence");
    }
    return sl_task_emit(t, b);
}

static int blobs_on_gpu(sl_task_t *t, uint64_t seed, int64_t k, int dims, double spread,
                       int label, int64_t points)
{
    int64_t first, n;
    sl_batch_t *b = morsel_batch(t, points, &first, &n);
    if (!b)
        return SL_ENOMEM;
    cudaStream_t st = (cudaStream_t)sl_task_stream(t);
    cudaError_t e = cudaSuccess;
    /* SL_K_GEN_BLOBS_COLS columns per launch; the first launch also writes the labels. */
    for (int j0 = 0; e == cudaSuccess && j0 < dims; j0 += SL_K_GEN_BLOBS_COLS) {
        int nd = dims - j0 < SL_K_GEN_BLOBS_COLS ? dims - j0 : SL_K_GEN_BLOBS_COLS;
        float *cols[SL_K_GEN_BLOBS_COLS];
        for (int j = 0; j < nd; j++)
            cols[j] = sl__col_values(b, j0 + j);
        e = SL_TASK_CUDA_CALL(sl_k_gen_blobs_f32(seed, k, dims, spread, first, n, j0, nd, cols,
                                                 label && j0 == 0 ? sl__col_values(b, dims) : NULL,
                                                 st));
    }
    if (e != cudaSuccess) {
        sl_batch_unref(b);
        return SL_TASK_CUDA_FAIL(t, e, "gen.blobs");
    }
    return sl_task_emit(t, b);
}

/* ---------------- the GPU sources and definitions (SL__GEN_TABLE) ---------------- */

int sl__gen_sequence_cuda(sl_task_t *t)
{
    const struct sl__gen_sequence_data *d = sl_op_data(sl_task_op(t));
    return sequence_on_gpu(t, d->start, d->step, d->type == SL_TYPE_INT64, d->rows);
}

/* Every type and null rate: the values are bit-exact on the GPU (gen_math.h). */
int sl__gen_uniform_cuda(sl_task_t *t)
{
    const struct sl__gen_uniform_data *d = sl_op_data(sl_task_op(t));
    return uniform_on_gpu(t, &d->u, d->rows);
}

static enum sl__gen_vtype vtype(enum sl_type t)
{
    return t == SL_TYPE_INT32     ? SL__GEN_I32
           : t == SL_TYPE_INT64   ? SL__GEN_I64
           : t == SL_TYPE_FLOAT32 ? SL__GEN_F32
                                  : SL__GEN_F64;
}

int sl__gen_keys_cuda(sl_task_t *t)
{
    const struct sl__gen_keys_data *d = sl_op_data(sl_task_op(t));
    return keys_on_gpu(t, &d->g, d->type == SL_TYPE_INT64, vtype(d->ptype), d->payloads);
}

/* Zipf draws use log/exp, whose last bits differ between glibc and CUDA: the CPU makes
 * those (in a GPU pipeline, on the host thread; the batch is then moved). */
int sl__gen_keys_can_cuda(const sl_task_t *t)
{
    const struct sl__gen_keys_data *d = sl_op_data(sl_task_op((sl_task_t *)t));
    return !(d->zipf > 0);
}

int sl__gen_blobs_cuda(sl_task_t *t)
{
    const struct sl__gen_blobs_data *d = sl_op_data(sl_task_op(t));
    return blobs_on_gpu(t, d->seed, d->k, d->dims, d->spread, d->label, d->points);
}

/* float32 only: the GPU's log and cos may differ from glibc's in the last ulp of the
 * double, which float32 rounding hides (but for a rare 1-ulp tie, see tests/gpu/
 * test_gpu_gen.c); float64 columns would show it, so the CPU makes those. */
int sl__gen_blobs_can_cuda(const sl_task_t *t)
{
    const struct sl__gen_blobs_data *d = sl_op_data(sl_task_op((sl_task_t *)t));
    return d->type == SL_TYPE_FLOAT32;
}

#define CUDA_DEF(id, name_, doc_, n_options_, cost_, split_, can_cuda_)                    \
    static const struct sl_impl id##_impls[] = {                                           \
        {.device = SL_DEVICE_CPU, .run = sl__gen_##id##_source},                           \
        {.device = SL_DEVICE_CUDA, .flags = SL_IMPL_ASYNC, .run = sl__gen_##id##_cuda,     \
         .can_run = can_cuda_}};                                                           \
    SL__GEN_DEF(sl__gen_##id##_cuda_def, id, name_, doc_, n_options_, cost_, split_, id##_impls);
SL__GEN_TABLE(CUDA_DEF)
