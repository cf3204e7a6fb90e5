/* DICT group keys on the GPU (agg_cuda.c). The kernels group integers, so a DICT key goes
 * in as its int32 codes when every GPU batch's key column has one dictionary (the same
 * object, or equal strings in the same order: sl__dict_agree_add) whose strings are
 * distinct (else two codes of one string would make two groups where the CPU makes
 * one). The output's key column then gets that dictionary: the strings of each group
 * are the CPU's. A batch whose dictionary is another stays on the CPU (can_run says
 * no); finalize then merges the GPU's groups into the CPU's through the CPU's merged
 * dictionary (agg_dict.c). */
#include <stdatomic.h>

#include "agg_int.h"
#include "internal.h"

static void lock(struct agg_global *gs)
{
    while (atomic_exchange_explicit(&gs->gpu_dict_lock, 1, memory_order_acquire))
        ;
}

static void unlock(struct agg_global *gs)
{
    atomic_store_explicit(&gs->gpu_dict_lock, 0, memory_order_release);
}

/* Whether key j's dictionary in b agrees with the GPU's (taking it when first) and is
 * distinct. Called under the lock. */
static bool key_accepts(struct agg_global *gs, int j, const struct sl__dict *d)
{
    struct sl__dict_agree *a = &gs->gpu_dict[j];
    bool first = !a->ref;
    if (!sl__dict_agree_add(a, d))
        return false;
    if (first && a->ref)
        sl__dict_ref((struct sl__dict *)a->ref); /* freed by sl__agg_fini_global */
    if (!gs->gpu_dict_distinct[j]) /* out of memory counts as not distinct: the CPU's */
        gs->gpu_dict_distinct[j] = sl__dict_distinct(a->ref) == 1 ? 1 : -1;
    return gs->gpu_dict_distinct[j] == 1;
}

bool agg_gpu_dicts_accept(const struct agg_plan *p, struct agg_global *gs, const sl_batch_t *b)
{
    if (!sl__agg_dict_keys(p) || b->n_rows == 0) /* an empty batch's dictionary: no row */
        return true;
    bool ok = true;
    lock(gs);
    for (int j = 0; j < p->n_keys && ok; j++)
        if (p->key_types[j] == SL_TYPE_DICT)
            ok = key_accepts(gs, j, b->cols[p->key_cols[j]].dict);
    unlock(gs);
    return ok;
}

int agg_gpu_dicts_attach(const struct agg_plan *p, struct agg_global *gs, sl_batch_t *b)
{
    for (int j = 0; j < p->n_keys; j++) {
        if (p->key_types[j] != SL_TYPE_DICT)
            continue;
        struct sl__dict *d = (struct sl__dict *)gs->gpu_dict[j].ref;
        static const int32_t zero = 0;
        struct sl__dict *empty = d ? NULL : sl__dict_new(0, &zero, ""); /* no row sunk */
        if (!d && !empty)
            return SL_ENOMEM;
        sl__batch_share_dict(b, j, d ? d : empty);
        sl__dict_unref(empty);
    }
    return SL_OK;
}
