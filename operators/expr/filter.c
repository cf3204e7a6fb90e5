/* filter: passes on the rows of each input batch where the predicate `where` is TRUE
 * (rows where it is FALSE or NULL are dropped). A batch whose rows all pass goes on
 * as it is, one whose passing rows form one run goes on as a zero-copy slice; others
 * are compacted into a new batch. Empty results emit nothing. */
#include <stdio.h>
#include <string.h>

#include "expr.h"
#include "operators.h"

struct filter_local {
    struct sl__pred_state pred;
};

static const struct sl_option_def filter_options[] = {
    {"where", SL_OPT_STRING, NULL, "predicate, e.g. \"x > 3 AND y IN (1, 2)\""},
};

static void filter_free(void *p)
{
    sl__expr_free(p);
}

static int filter_bind(sl_bind_t *b)
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
    sl_bind_set_data(b, e, filter_free);
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

static void filter_fini_local(const sl_op_t *op, void *gs, void *ls)
{
    (void)op;
    (void)gs;
    struct filter_local *l = ls;
    sl__pred_state_fini(&l->pred);
}

static int filter_execute(sl_task_t *t)
{
    const struct sl__expr *e = sl_op_data(sl_task_op(t));
    struct filter_local *l = sl_task_lstate(t);
    if (!l) /* the runtime recorded the failure */
        return SL_ENOMEM;
    sl_batch_t *out;
    int rc = sl__pred_apply(t, e, &l->pred, sl_task_input(t), &out);
    if (rc < 0 || !out)
        return rc;
    return sl_task_emit(t, out);
}

static const struct sl_impl filter_impls[] = {{.device = SL_DEVICE_CPU, .run = filter_execute}};
static const struct sl_phase filter_phase = {filter_impls, 1, sl__cost_linear};

const struct sl_op_def sl__filter_def = {
    .abi_version = SL_OP_ABI_VERSION,
    .flags = SL_OP_STREAM,
    .name = "filter",
    .doc = "keeps the rows where the predicate `where` is true",
    .min_inputs = 1,
    .max_inputs = 1,
    .options = filter_options,
    .n_options = sizeof filter_options / sizeof filter_options[0],
    .bind = filter_bind,
    .local_state_bytes = sizeof(struct filter_local),
    .fini_local = filter_fini_local,
    .execute = &filter_phase,
    .can_split = sl__split_yes,
};
