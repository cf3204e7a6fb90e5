/* gen.uniform: one column of uniform random values, generated in parallel morsels.
 * Integers are uniform in [min, max] (both included), floats in [min, max). Each value
 * and null flag is a function of (seed, row): the data do not depend on the thread
 * count or morsel size. */
#include <math.h>
#include <string.h>

#include "gen_int.h"
#include "operators.h"

const struct sl_option_def sl__gen_uniform_options[] = {
    {"rows", SL_OPT_INT, NULL, "number of rows (e.g. 1000000 or 2^24)"},
    {"seed", SL_OPT_INT, "1", "random seed"},
    {"type", SL_OPT_STRING, "float64", "int32, int64, float32 or float64"},
    {"min", SL_OPT_FLOAT, "0", "smallest value"},
    {"max", SL_OPT_FLOAT, "1", "largest value (integers) or upper bound (floats, excluded)"},
    {"column", SL_OPT_STRING, "x", "column name"},
    {"null_rate", SL_OPT_FLOAT, "0", "fraction of null values"},
};

static void uni_free(void *p)
{
    sl__free(p, sizeof(struct sl__gen_uniform_data));
}

static int uni_range(sl_bind_t *b, struct sl__gen_uniform_data *d)
{
    int rc;
    if (d->type == SL_TYPE_INT32 || d->type == SL_TYPE_INT64) {
        int64_t lo, hi;
        if ((rc = sl_bind_option_int(b, "min", &lo)) < 0 ||
            (rc = sl_bind_option_int(b, "max", &hi)) < 0)
            return rc;
        if (lo > hi)
            return sl_bind_fail(b, SL_EINVAL, "min=%lld is above max=%lld", (long long)lo,
                                (long long)hi);
        if (d->type == SL_TYPE_INT32 && (lo < INT32_MIN || hi > INT32_MAX))
            return sl_bind_fail(b, SL_EOVERFLOW, "min and max must fit in int32");
        d->u.imin = lo;
        d->u.ispan = (uint64_t)hi - (uint64_t)lo + 1;
        return SL_OK;
    }
    if ((rc = sl_bind_option_float(b, "min", &d->u.fmin)) < 0 ||
        (rc = sl_bind_option_float(b, "max", &d->u.fmax)) < 0)
        return rc;
    if (d->u.fmin > d->u.fmax)
        return sl_bind_fail(b, SL_EINVAL, "min=%g is above max=%g", d->u.fmin, d->u.fmax);
    if (d->type == SL_TYPE_FLOAT32 && (fabs(d->u.fmin) > 3.4e38 || fabs(d->u.fmax) > 3.4e38))
        return sl_bind_fail(b, SL_EOVERFLOW, "min and max must fit in float32");
    return SL_OK;
}

int sl__gen_uniform_bind(sl_bind_t *b)
{
    struct sl__gen_uniform_data d;
    memset(&d, 0, sizeof d);
    struct sl__gen_common g;
    int rc = sl__gen_bind_common(b, &g);
    if (rc < 0)
        return rc;
    const char *col = g.column, *type = g.type;
    d.rows = g.rows;
    d.u.seed = g.seed;
    d.u.null_rate = g.null_rate;
    /* Only these four: the other types have gen.values. */
    if (sl_type_parse(type, &d.type) < 0 || SL_TYPE_ID(d.type) < SL_TYPE_INT32 ||
        SL_TYPE_ID(d.type) > SL_TYPE_FLOAT64)
        return sl_bind_fail(b, SL_ETYPE, "type must be int32, int64, float32 or float64, got '%s'",
                            type);
    d.u.type = d.type == SL_TYPE_INT32   ? SL__GEN_I32
               : d.type == SL_TYPE_INT64 ? SL__GEN_I64
               : d.type == SL_TYPE_FLOAT32 ? SL__GEN_F32 : SL__GEN_F64;
    if ((rc = uni_range(b, &d)) < 0)
        return rc;
    struct sl__gen_uniform_data *p = sl__malloc(sizeof *p);
    if (!p)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    *p = d;
    sl_bind_set_data(b, p, uni_free);
    sl_bind_set_rows(b, d.rows);
    return sl_bind_add_column(b, col, d.type);
}

static void uni_fill(const struct sl__gen_uniform_data *d, void *out, uint64_t first, int64_t n)
{
    const struct sl__gen_uni *u = &d->u;
    for (int64_t i = 0; i < n; i++) {
        uint64_t h = sl__gen_hash(u->seed, SL__GEN_S_VALUE, first + (uint64_t)i);
        switch (u->type) {
        case SL__GEN_I32: ((int32_t *)out)[i] = (int32_t)sl__gen_uni_int(u, h); break;
        case SL__GEN_I64: ((int64_t *)out)[i] = sl__gen_uni_int(u, h); break;
        case SL__GEN_F32: ((float *)out)[i] = sl__gen_uni_f32(u, h); break;
        default: ((double *)out)[i] = sl__gen_uni_f64(u, h); break;
        }
    }
}

int sl__gen_uniform_source(sl_task_t *t)
{
    const struct sl__gen_uniform_data *d = sl_op_data(sl_task_op(t));
    int64_t first, n;
    sl__gen_morsel(t, d->rows, &first, &n);
    sl_batch_t *b = sl_task_new_batch(t, sl_op_output_schema(sl_task_op(t)), n);
    if (!b)
        return SL_ENOMEM;
    uni_fill(d, sl__col_values(b, 0), (uint64_t)first, n);
    if (d->u.null_rate > 0 && n > 0) {
        uint8_t *valid = sl_batch_column_validity(b, 0);
        if (!valid) {
            sl_batch_unref(b);
            return sl_task_fail(t, SL_ENOMEM, "out of memory for a validity bitmap");
        }
        int64_t nulls = 0;
        size_t w = sl_type_width(d->type);
        for (int64_t i = 0; i < n; i++) {
            if (sl__gen_is_null(d->u.seed, d->u.null_rate, (uint64_t)(first + i))) {
                valid[i >> 3] &= (uint8_t) ~(1u << (i & 7));
                memset((char *)sl__col_values(b, 0) + (size_t)i * w, 0, w);
                nulls++;
            }
        }
        b->cols[0].null_count = nulls;
    }
    return sl_task_emit(t, b);
}
