/* Test operators with CPU and CUDA implementations (see test_ops.h). */
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "test_ops.h"

#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "sluice_k/testops.h"
#endif

/* ---------------- test.affine ---------------- */

struct affine_data {
    int64_t a, b;
};

static const struct sl_option_def affine_opts[] = {
    {"a", SL_OPT_INT, "1", "multiplier"},
    {"b", SL_OPT_INT, "0", "addend"},
};

static void free_data(void *p)
{
    sl__free(p, 0);
}

static int affine_bind(sl_bind_t *b)
{
    struct affine_data d;
    int rc;
    if ((rc = sl_bind_option_int(b, "a", &d.a)) < 0 || (rc = sl_bind_option_int(b, "b", &d.b)) < 0)
        return rc;
    const sl_schema_t *in = sl_bind_input_schema(b, 0);
    enum sl_type t;
    if (sl_schema_num_fields(in) != 1 || sl_schema_field(in, 0, NULL, &t) < 0 ||
        t != SL_TYPE_INT64)
        return sl_bind_fail(b, SL_ETYPE, "needs exactly one int64 column");
    struct sl_affine_alloc {
        struct affine_data d;
    } *p = sl__malloc(sizeof *p);
    if (!p)
        return SL_ENOMEM;
    p->d = d;
    sl_bind_set_data(b, p, free_data);
    return sl_bind_add_column(b, "x", SL_TYPE_INT64);
}

static int affine_cpu(sl_task_t *t)
{
    const struct affine_data *d = sl_op_data(sl_task_op(t));
    sl_batch_t *in = sl_task_input(t);
    int64_t n = sl_batch_num_rows(in);
    sl_batch_t *out = sl_task_new_batch(t, sl_op_output_schema(sl_task_op(t)), n);
    if (!out)
        return SL_ENOMEM;
    const int64_t *x = sl__col_values(in, 0);
    int64_t *y = sl__col_values(out, 0);
    for (int64_t i = 0; i < n; i++)
        y[i] = (int64_t)((uint64_t)d->a * (uint64_t)x[i] + (uint64_t)d->b);
    return sl_task_emit(t, out);
}

#ifdef SL_HAVE_CUDA
static int affine_cuda(sl_task_t *t)
{
    const struct affine_data *d = sl_op_data(sl_task_op(t));
    sl_batch_t *in = sl_task_input(t);
    int64_t n = sl_batch_num_rows(in);
    sl_batch_t *out = sl_task_new_batch(t, sl_op_output_schema(sl_task_op(t)), n);
    if (!out)
        return SL_ENOMEM;
    cudaError_t e = sl_k_affine_i64(sl__col_values(in, 0), sl__col_values(out, 0), n, d->a, d->b,
                                    (cudaStream_t)sl_task_stream(t));
    if (e != cudaSuccess) {
        sl_batch_unref(out);
        return sl_task_fail(t, SL_EDEVICE, "affine kernel: %s", cudaGetErrorName(e));
    }
    return sl_task_emit(t, out);
}
#endif

static const struct sl_impl affine_impls[] = {
    {.device = SL_DEVICE_CPU, .run = affine_cpu},
#ifdef SL_HAVE_CUDA
    {.device = SL_DEVICE_CUDA, .flags = SL_IMPL_ASYNC, .run = affine_cuda},
#endif
};
static const struct sl_phase affine_phase = {affine_impls, sizeof affine_impls / sizeof affine_impls[0], NULL};

static const struct sl_op_def affine_def = {
    .abi_version = SL_OP_ABI_VERSION,
    .flags = SL_OP_STREAM,
    .name = "test.affine",
    .doc = "y = a*x + b (test operator)",
    .min_inputs = 1,
    .max_inputs = 1,
    .options = affine_opts,
    .n_options = 2,
    .bind = affine_bind,
    .execute = &affine_phase,
};

/* ---------------- test.sum ---------------- */

struct sum_local {
    uint64_t sum;
    int64_t count;
    unsigned long long *d_sum; /* GPU worker: device accumulator */
};

struct sum_global {
    uint64_t sum;
    int64_t count;
};

static int tsum_bind(sl_bind_t *b)
{
    const sl_schema_t *in = sl_bind_input_schema(b, 0);
    enum sl_type t;
    if (sl_schema_find(in, "x") != 0 || sl_schema_field(in, 0, NULL, &t) < 0 || t != SL_TYPE_INT64)
        return sl_bind_fail(b, SL_ETYPE, "needs int64 column x first");
    int rc = sl_bind_add_column(b, "count", SL_TYPE_INT64);
    return rc < 0 ? rc : sl_bind_add_column(b, "sum", SL_TYPE_INT64);
}

static void tsum_fini_local(const sl_op_t *op, void *gs, void *ls)
{
    (void)op, (void)gs;
#ifdef SL_HAVE_CUDA
    struct sum_local *l = ls;
    if (l->d_sum)
        cudaFree(l->d_sum);
#else
    (void)ls;
#endif
}

static int tsum_sink_cpu(sl_task_t *t)
{
    struct sum_local *l = sl_task_lstate(t);
    sl_batch_t *in = sl_task_input(t);
    const int64_t *x = sl__col_values(in, 0);
    for (int64_t i = 0; i < sl_batch_num_rows(in); i++)
        l->sum += (uint64_t)x[i];
    l->count += sl_batch_num_rows(in);
    return SL_OK;
}

#ifdef SL_HAVE_CUDA
static int tsum_sink_cuda(sl_task_t *t)
{
    struct sum_local *l = sl_task_lstate(t);
    sl_batch_t *in = sl_task_input(t);
    if (!l->d_sum) {
        /* Test code may allocate directly; operators take memory from the runtime. */
        if (cudaMalloc((void **)&l->d_sum, sizeof *l->d_sum) != cudaSuccess ||
            cudaMemset(l->d_sum, 0, sizeof *l->d_sum) != cudaSuccess)
            return sl_task_fail(t, SL_EDEVICE, "cannot allocate the accumulator");
    }
    cudaError_t e = sl_k_sum_i64(sl__col_values(in, 0), sl_batch_num_rows(in), l->d_sum,
                                 (cudaStream_t)sl_task_stream(t));
    if (e != cudaSuccess)
        return sl_task_fail(t, SL_EDEVICE, "sum kernel: %s", cudaGetErrorName(e));
    l->count += sl_batch_num_rows(in);
    return SL_OK;
}

static int tsum_combine_cuda(sl_task_t *t)
{
    struct sum_global *g = sl_task_gstate(t);
    struct sum_local *l = sl_task_lstate(t);
    unsigned long long s = 0;
    if (l->d_sum && cudaMemcpy(&s, l->d_sum, sizeof s, cudaMemcpyDeviceToHost) != cudaSuccess)
        return sl_task_fail(t, SL_EDEVICE, "cannot read the accumulator");
    g->sum += s + l->sum;
    g->count += l->count;
    return SL_OK;
}
#endif

static int tsum_combine_cpu(sl_task_t *t)
{
    struct sum_global *g = sl_task_gstate(t);
    struct sum_local *l = sl_task_lstate(t);
    g->sum += l->sum;
    g->count += l->count;
    return SL_OK;
}

static int tsum_source(sl_task_t *t)
{
    const struct sum_global *g = sl_task_gstate(t);
    sl_batch_t *b = sl_task_new_batch(t, sl_op_output_schema(sl_task_op(t)), 1);
    if (!b)
        return SL_ENOMEM;
    ((int64_t *)sl__col_values(b, 0))[0] = g->count;
    ((int64_t *)sl__col_values(b, 1))[0] = (int64_t)g->sum;
    return sl_task_emit(t, b);
}

static const struct sl_impl tsum_sink_impls[] = {
    {.device = SL_DEVICE_CPU, .run = tsum_sink_cpu},
#ifdef SL_HAVE_CUDA
    {.device = SL_DEVICE_CUDA, .flags = SL_IMPL_ASYNC, .run = tsum_sink_cuda},
#endif
};
static const struct sl_impl tsum_combine_impls[] = {
    {.device = SL_DEVICE_CPU, .run = tsum_combine_cpu},
#ifdef SL_HAVE_CUDA
    {.device = SL_DEVICE_CUDA, .run = tsum_combine_cuda},
#endif
};
static const struct sl_impl tsum_source_impls[] = {{.device = SL_DEVICE_CPU, .run = tsum_source}};
static const struct sl_phase tsum_sink = {tsum_sink_impls, sizeof tsum_sink_impls / sizeof tsum_sink_impls[0], NULL};
static const struct sl_phase tsum_combine = {tsum_combine_impls, sizeof tsum_combine_impls / sizeof tsum_combine_impls[0], NULL};
static const struct sl_phase tsum_src = {tsum_source_impls, 1, NULL};

static const struct sl_op_def tsum_def = {
    .abi_version = SL_OP_ABI_VERSION,
    .flags = SL_OP_SINK | SL_OP_SOURCE,
    .name = "test.sum",
    .doc = "count and wrapping sum of int64 x (test operator)",
    .min_inputs = 1,
    .max_inputs = 1,
    .bind = tsum_bind,
    .global_state_bytes = sizeof(struct sum_global),
    .local_state_bytes = sizeof(struct sum_local),
    .fini_local = tsum_fini_local,
    .sink = &tsum_sink,
    .combine = &tsum_combine,
    .source = &tsum_src,
};

/* ---------------- test.positive: count -> allocate -> write ---------------- */

/* Per worker: where the current call of the task is (the implementation returns
 * SL_BLOCKED after counting and is called again to allocate and write). */
struct pos_local {
    int step;
    int64_t count;
    unsigned long long *h_count; /* CUDA: pinned counter the count kernel fills */
    unsigned long long *d_work;  /* CUDA: [0] count, [1] cursor */
};

static void pos_fini_local(const sl_op_t *op, void *gs, void *ls)
{
    (void)op, (void)gs;
#ifdef SL_HAVE_CUDA
    struct pos_local *l = ls;
    if (l->d_work)
        cudaFree(l->d_work);
    if (l->h_count)
        cudaFreeHost(l->h_count);
#else
    (void)ls;
#endif
}

static int pos_bind(sl_bind_t *b)
{
    const sl_schema_t *in = sl_bind_input_schema(b, 0);
    enum sl_type t;
    if (sl_schema_num_fields(in) != 1 || sl_schema_field(in, 0, NULL, &t) < 0 ||
        t != SL_TYPE_INT64)
        return sl_bind_fail(b, SL_ETYPE, "needs exactly one int64 column");
    return sl_bind_add_column(b, "x", SL_TYPE_INT64);
}

static int pos_cpu(sl_task_t *t)
{
    struct pos_local *l = sl_task_lstate(t);
    sl_batch_t *in = sl_task_input(t);
    const int64_t *x = sl__col_values(in, 0);
    int64_t n = sl_batch_num_rows(in);
    if (l->step == 0) {
        l->count = 0;
        for (int64_t i = 0; i < n; i++)
            l->count += x[i] > 0;
        l->step = 1;
        return SL_BLOCKED;
    }
    l->step = 0;
    sl_batch_t *out = sl_task_new_batch(t, sl_op_output_schema(sl_task_op(t)), l->count);
    if (!out)
        return SL_ENOMEM;
    int64_t *y = sl__col_values(out, 0), k = 0;
    for (int64_t i = 0; i < n; i++)
        if (x[i] > 0)
            y[k++] = x[i];
    return sl_task_emit(t, out);
}

#ifdef SL_HAVE_CUDA
static int pos_cuda(sl_task_t *t)
{
    struct pos_local *l = sl_task_lstate(t);
    sl_batch_t *in = sl_task_input(t);
    int64_t n = sl_batch_num_rows(in);
    cudaStream_t st = (cudaStream_t)sl_task_stream(t);
    cudaError_t e = cudaSuccess;
    if (!l->d_work) {
        if (cudaMalloc((void **)&l->d_work, 2 * sizeof *l->d_work) != cudaSuccess ||
            cudaHostAlloc((void **)&l->h_count, sizeof *l->h_count, 0) != cudaSuccess)
            return sl_task_fail(t, SL_EDEVICE, "cannot allocate the counters");
    }
    if (l->step == 0) {
        /* count: the result lands in pinned memory, read after the runtime's wait */
        if ((e = cudaMemsetAsync(l->d_work, 0, 2 * sizeof *l->d_work, st)) == cudaSuccess &&
            (e = sl_k_count_positive_i64(sl__col_values(in, 0), n, &l->d_work[0], st)) ==
                cudaSuccess)
            e = cudaMemcpyAsync(l->h_count, &l->d_work[0], sizeof *l->h_count,
                                cudaMemcpyDeviceToHost, st);
        if (e != cudaSuccess)
            return sl_task_fail(t, SL_EDEVICE, "count: %s", cudaGetErrorName(e));
        l->step = 1;
        return SL_BLOCKED;
    }
    l->step = 0;
    /* allocate exactly, then write */
    sl_batch_t *out = sl_task_new_batch(t, sl_op_output_schema(sl_task_op(t)),
                                        (int64_t)*l->h_count);
    if (!out)
        return SL_ENOMEM;
    e = sl_k_select_positive_i64(sl__col_values(in, 0), n, sl__col_values(out, 0), &l->d_work[1],
                                 st);
    if (e != cudaSuccess) {
        sl_batch_unref(out);
        return sl_task_fail(t, SL_EDEVICE, "select: %s", cudaGetErrorName(e));
    }
    return sl_task_emit(t, out);
}
#endif

static const struct sl_impl pos_impls[] = {
    {.device = SL_DEVICE_CPU, .run = pos_cpu},
#ifdef SL_HAVE_CUDA
    {.device = SL_DEVICE_CUDA, .flags = SL_IMPL_ASYNC, .run = pos_cuda},
#endif
};
static const struct sl_phase pos_phase = {pos_impls, sizeof pos_impls / sizeof pos_impls[0], NULL};

static const struct sl_op_def pos_def = {
    .abi_version = SL_OP_ABI_VERSION,
    .flags = SL_OP_STREAM,
    .name = "test.positive",
    .doc = "keeps the rows with x > 0, sized by count -> allocate -> write (test operator)",
    .min_inputs = 1,
    .max_inputs = 1,
    .bind = pos_bind,
    .local_state_bytes = sizeof(struct pos_local),
    .fini_local = pos_fini_local,
    .execute = &pos_phase,
};

/* ---------------- test.fail ---------------- */

static const struct sl_option_def fail_opts[] = {
    {"at", SL_OPT_INT, "0", "morsel index that fails"},
};

static int fail_bind(sl_bind_t *b)
{
    int64_t *at = sl__malloc(sizeof *at);
    if (!at)
        return SL_ENOMEM;
    int rc = sl_bind_option_int(b, "at", at);
    sl_bind_set_data(b, at, free_data);
    if (rc < 0)
        return rc;
    const sl_schema_t *in = sl_bind_input_schema(b, 0);
    for (int i = 0; i < sl_schema_num_fields(in); i++) {
        const char *n;
        enum sl_type ty;
        sl_schema_field(in, i, &n, &ty);
        if ((rc = sl_bind_add_column(b, n, ty)) < 0)
            return rc;
    }
    return SL_OK;
}

static int fail_cpu(sl_task_t *t)
{
    const int64_t *at = sl_op_data(sl_task_op(t));
    if (sl_task_index(t) == *at)
        return sl_task_fail(t, SL_EFORMAT, "planted failure at morsel %lld", (long long)*at);
    sl_batch_ref(sl_task_input(t));
    return sl_task_emit(t, sl_task_input(t));
}

#ifdef SL_HAVE_CUDA
static int fail_cuda(sl_task_t *t)
{
    const int64_t *at = sl_op_data(sl_task_op(t));
    if (sl_task_index(t) == *at) {
        /* As a kernel would: the error goes to the status word on the device. */
        int32_t code = SL_EFORMAT;
        cudaError_t e = cudaMemcpyAsync(sl_task_status(t), &code, sizeof code,
                                        cudaMemcpyHostToDevice, (cudaStream_t)sl_task_stream(t));
        if (e == cudaSuccess)
            e = cudaStreamSynchronize((cudaStream_t)sl_task_stream(t));
        if (e != cudaSuccess)
            return sl_task_fail(t, SL_EDEVICE, "%s", cudaGetErrorName(e));
    }
    sl_batch_ref(sl_task_input(t));
    return sl_task_emit(t, sl_task_input(t));
}
#endif

static const struct sl_impl fail_impls[] = {
    {.device = SL_DEVICE_CPU, .run = fail_cpu},
#ifdef SL_HAVE_CUDA
    {.device = SL_DEVICE_CUDA, .run = fail_cuda},
#endif
};
static const struct sl_phase fail_phase = {fail_impls, sizeof fail_impls / sizeof fail_impls[0], NULL};

static const struct sl_op_def fail_def = {
    .abi_version = SL_OP_ABI_VERSION,
    .flags = SL_OP_STREAM,
    .name = "test.fail",
    .doc = "passes batches through and fails at one morsel (test operator)",
    .min_inputs = 1,
    .max_inputs = 1,
    .options = fail_opts,
    .n_options = 1,
    .bind = fail_bind,
    .execute = &fail_phase,
};

int sl_test_ops_register(void)
{
    const struct sl_op_def *defs[] = {&affine_def, &tsum_def, &fail_def, &pos_def};
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
        int rc = sl_registry_add(sl_registry_global(), defs[i]);
        if (rc < 0 && rc != SL_EEXIST)
            return rc;
    }
    return SL_OK;
}
