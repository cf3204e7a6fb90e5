/* filter: passes on the rows of each input batch where the predicate `where` is TRUE
 * (rows where it is FALSE or NULL are dropped). A batch whose rows all pass goes on
 * as it is, one whose passing rows form one run goes on as a zero-copy slice; others
 * are compacted into a new batch. Empty results emit nothing. */
#include <stdio.h>
#include <string.h>

#include "filter_op.h"

const struct sl_option_def sl__filter_options[1] = {
    {"where", SL_OPT_STRING, NULL, "predicate, e.g. \"x > 3 AND y IN (1, 2)\""},
};

static void filter_free(void *p)
{
    struct sl__filter_data *d = p;
    sl__expr_free(d->e);
    sl__free(d, sizeof *d);
}

/* Whether the GPU filter takes the predicate and the columns it carries (why not, else). */
static void filter_gpu_check(struct sl__filter_data *d, const sl_schema_t *in)
{
    if (sl__xp_compile(d->e, in, &d->xp, d->why, sizeof d->why) < 0)
        return;
    for (int i = 0; i < sl_schema_num_fields(in); i++) {
        const char *name;
        enum sl_type type;
        sl_schema_field(in, i, &name, &type);
        if (sl_type_width(type) == 0 && type != SL_TYPE_UTF8 && type != SL_TYPE_LARGE_UTF8) {
            snprintf(d->why, sizeof d->why, "column %s (%s) cannot be carried on the GPU", name,
                     sl_type_name(type));
            return;
        }
    }
    d->gpu_ok = true;
}

int sl__filter_bind(sl_bind_t *b)
{
    const char *where;
    int rc;
    if ((rc = sl_bind_option_str(b, "where", &where)) < 0)
        return rc;
    char err[400];
    struct sl__expr *e;
    if ((rc = sl__expr_parse(where, 0, -1, &e, err, sizeof err)) < 0)
        return sl_bind_fail(b, rc, "where: %s", err);
    const sl_schema_t *in = sl_bind_input_schema(b, 0);
    if ((rc = sl__expr_bind(e, in, err, sizeof err)) < 0) {
        sl__expr_free(e);
        return sl_bind_fail(b, rc, "where: %s", err);
    }
    if (sl__expr_kind(e) != SL__VK_BOOL) {
        enum sl_type type = sl__expr_type(e);
        sl__expr_free(e);
        return sl_bind_fail(b, SL_ETYPE, "where must be a condition, but \"%s\" gives %s values "
                            "(hint: compare it, e.g. %s != 0)", where, sl_type_name(type), where);
    }
    struct sl__filter_data *d = sl__calloc(1, sizeof *d);
    if (!d) {
        sl__expr_free(e);
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    }
    d->e = e;
    filter_gpu_check(d, in);
    sl_bind_set_data(b, d, filter_free);
    sl_bind_set_rows(b, sl_bind_input_rows(b, 0));
    for (int i = 0; i < sl_schema_num_fields(in); i++) {
        const char *name;
        enum sl_type type;
        sl_schema_field(in, i, &name, &type);
        if ((rc = sl_bind_add_column(b, name, type)) < 0)
            return rc;
    }
    return SL_OK;
}

void sl__filter_fini_local(const sl_op_t *op, void *gs, void *ls)
{
    (void)op;
    (void)gs;
    struct sl__filter_local *l = ls;
    sl__pred_state_fini(&l->pred);
}

int sl__filter_execute(sl_task_t *t)
{
    const struct sl__filter_data *d = sl_op_data(sl_task_op(t));
    struct sl__filter_local *l = sl_task_lstate(t);
    if (!l) /* the runtime recorded the failure */
        return SL_ENOMEM;
    sl_batch_t *out;
    int rc = sl__pred_apply(t, d->e, &l->pred, sl_task_input(t), &out);
    if (rc < 0 || !out)
        return rc;
    return sl_task_emit(t, out);
}

/* The CPU's figure on either device when the GPU filter cannot take the predicate (in a
 * GPU pipeline it then runs on the host), else the model's. */
double sl__filter_cost(const sl_op_t *op, enum sl_device_kind kind, int64_t rows)
{
    const struct sl__filter_data *d = sl_op_data(op);
    return sl__cost_linear(op, d && d->gpu_ok ? kind : SL_DEVICE_CPU, rows);
}

/* The CPU-only definition; CUDA builds register sl__filter_cuda_def (expr_cuda.c). */
static const struct sl_impl filter_impls[] = {{.device = SL_DEVICE_CPU, .run = sl__filter_execute}};
static const struct sl_phase filter_phase = {filter_impls, 1, sl__filter_cost};
SL__FILTER_DEF(sl__filter_def, filter_phase);
