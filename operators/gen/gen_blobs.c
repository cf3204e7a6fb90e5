/* gen.blobs: k-means test data. k centres uniform in [-10, 10]^dims from the seed; point
 * i belongs to centre c(i) = hash(seed, i) mod k (so classes are interleaved, not in
 * runs) and has coordinates centre + spread * N(0, 1) (Box–Muller on hashed uniforms).
 * Columns f0..f{dims-1}, plus an int32 "label" column (the true centre) with label=true.
 * Every value is a function of (seed, point, dimension): the data do not depend on the
 * thread count or morsel size. */
#include <stdio.h>
#include <string.h>

#include "gen_int.h"
#include "operators.h"

#define BLOBS_MAX_DIMS 4096

const struct sl_option_def sl__gen_blobs_options[] = {
    {"points", SL_OPT_INT, NULL, "number of points (rows)"},
    {"dims", SL_OPT_INT, NULL, "dimensions (columns f0..f{dims-1})"},
    {"k", SL_OPT_INT, NULL, "number of centres"},
    {"spread", SL_OPT_FLOAT, "1.0", "standard deviation around each centre"},
    {"seed", SL_OPT_INT, "1", "random seed"},
    {"type", SL_OPT_STRING, "float32", "float32 or float64"},
    {"label", SL_OPT_BOOL, "false", "add an int32 column 'label' with the true centre"},
};

static void blobs_free(void *p)
{
    struct sl__gen_blobs_data *d = p;
    sl__free(d->centres, (size_t)d->k * (size_t)d->dims * sizeof(double));
    sl__free(d, sizeof *d);
}

static int blobs_check(sl_bind_t *b, struct sl__gen_blobs_data *d, int64_t dims, const char *type)
{
    if (d->points < 0)
        return sl_bind_fail(b, SL_EINVAL, "points must be >= 0, got %lld", (long long)d->points);
    if (dims < 1 || dims > BLOBS_MAX_DIMS)
        return sl_bind_fail(b, SL_EINVAL, "dims must be in [1, %d], got %lld", BLOBS_MAX_DIMS,
                            (long long)dims);
    if (d->k < 1 || d->k > INT32_MAX || d->k * dims > (int64_t)1 << 26)
        return sl_bind_fail(b, SL_EINVAL, "k must be >= 1 with k*dims <= 2^26, got k=%lld",
                            (long long)d->k);
    if (!(d->spread >= 0.0))
        return sl_bind_fail(b, SL_EINVAL, "spread must be >= 0, got %g", d->spread);
    if (sl_type_parse(type, &d->type) < 0 ||
        (d->type != SL_TYPE_FLOAT32 && d->type != SL_TYPE_FLOAT64))
        return sl_bind_fail(b, SL_ETYPE, "type must be float32 or float64, got '%s'", type);
    d->dims = (int)dims;
    return SL_OK;
}

int sl__gen_blobs_bind(sl_bind_t *b)
{
    struct sl__gen_blobs_data d;
    memset(&d, 0, sizeof d);
    int64_t dims, seed;
    const char *type;
    int rc;
    if ((rc = sl_bind_option_int(b, "points", &d.points)) < 0 ||
        (rc = sl_bind_option_int(b, "dims", &dims)) < 0 ||
        (rc = sl_bind_option_int(b, "k", &d.k)) < 0 ||
        (rc = sl_bind_option_float(b, "spread", &d.spread)) < 0 ||
        (rc = sl_bind_option_int(b, "seed", &seed)) < 0 ||
        (rc = sl_bind_option_str(b, "type", &type)) < 0 ||
        (rc = sl_bind_option_bool(b, "label", &d.label)) < 0 ||
        (rc = blobs_check(b, &d, dims, type)) < 0)
        return rc;
    d.seed = (uint64_t)seed;
    struct sl__gen_blobs_data *p = sl__malloc(sizeof *p);
    size_t nc = (size_t)d.k * (size_t)d.dims;
    d.centres = sl__malloc(nc * sizeof(double));
    if (!p || !d.centres) {
        sl__free(p, sizeof *p);
        sl__free(d.centres, nc * sizeof(double));
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    }
    for (int64_t c = 0; c < d.k; c++)
        for (int j = 0; j < d.dims; j++)
            d.centres[c * d.dims + j] = sl__gen_centre(d.seed, c, d.dims, j);
    *p = d;
    sl_bind_set_data(b, p, blobs_free);
    sl_bind_set_rows(b, d.points);
    for (int j = 0; j < d.dims; j++) {
        char name[16];
        snprintf(name, sizeof name, "f%d", j);
        if ((rc = sl_bind_add_column(b, name, d.type)) < 0)
            return rc;
    }
    return d.label ? sl_bind_add_column(b, "label", SL_TYPE_INT32) : SL_OK;
}

int sl__gen_blobs_source(sl_task_t *t)
{
    const struct sl__gen_blobs_data *d = sl_op_data(sl_task_op(t));
    int64_t first, n;
    sl__gen_morsel(t, d->points, &first, &n);
    sl_batch_t *b = sl_task_new_batch(t, sl_op_output_schema(sl_task_op(t)), n);
    if (!b)
        return SL_ENOMEM;
    for (int64_t i = 0; i < n; i++) {
        uint64_t row = (uint64_t)(first + i);
        int64_t c = sl__gen_blob_class(d->seed, d->k, row);
        const double *ctr = d->centres + c * d->dims;
        for (int j = 0; j < d->dims; j++) {
            double v = sl__gen_blob_coord(d->seed, d->dims, d->spread, ctr[j], row, j);
            if (d->type == SL_TYPE_FLOAT32)
                ((float *)sl__col_values(b, j))[i] = (float)v;
            else
                ((double *)sl__col_values(b, j))[i] = v;
        }
        if (d->label)
            ((int32_t *)sl__col_values(b, d->dims))[i] = (int32_t)c;
    }
    return sl_task_emit(t, b);
}

/* float64 blobs cost what they cost on the CPU wherever the pipeline runs. */
double sl__gen_blobs_cost(const sl_op_t *op, enum sl_device_kind kind, int64_t rows)
{
    const struct sl__gen_blobs_data *d = sl_op_data(op);
    return sl__cost_linear(op, d && d->type == SL_TYPE_FLOAT64 ? SL_DEVICE_CPU : kind, rows);
}
