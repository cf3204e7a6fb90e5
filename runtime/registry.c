/* The operator registry: definitions by name. Built-in operators register through the
 * same call as plugins; the registry finds them in sl__builtin_ops, a table the operators
 * layer defines, so the runtime never calls into an operator to learn of it. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "plugin_int.h"

/* A fixed table: the process-wide registry lives as long as the process, and a static
 * array keeps it out of the allocation counters that tests check for leaks. */
#define REGISTRY_MAX 1024

struct sl_registry {
    pthread_mutex_t mu;
    int n;
    const struct sl_op_def *defs[REGISTRY_MAX]; /* sorted by name */
};

static struct sl_registry global_reg = {PTHREAD_MUTEX_INITIALIZER, 0, {0}};
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;
static int builtin_rc;

static void register_builtins(void)
{
    for (size_t i = 0; i < sl__builtin_ops.n; i++) {
        int rc = sl_registry_add(&global_reg, sl__builtin_ops.defs[i]);
        if (rc < 0 && rc != SL_EEXIST) {
            builtin_rc = rc;
            return;
        }
    }
}

sl_registry_t *sl_registry_global(void)
{
    pthread_once(&builtin_once, register_builtins);
    return &global_reg;
}

static int find_index(const struct sl_registry *r, const char *name, int *pos)
{
    int lo = 0, hi = r->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        int c = strcmp(r->defs[mid]->name, name);
        if (c == 0) {
            *pos = mid;
            return 1;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *pos = lo;
    return 0;
}

int sl_registry_add(sl_registry_t *reg, const struct sl_op_def *def)
{
    if (!reg || !def || !def->name || !def->bind)
        return sl__set_last_error(SL_EINVAL, "operator definition needs a name and a bind "
                                  "function");
    char what[160];
    snprintf(what, sizeof what, "operator '%s'", def->name);
    if (sl__abi_check(def->abi_version, what) < 0)
        return SL_EABI;
    pthread_mutex_lock(&reg->mu);
    int pos;
    if (find_index(reg, def->name, &pos)) {
        pthread_mutex_unlock(&reg->mu);
        return sl__set_last_error(SL_EEXIST, "operator '%s' is already registered", def->name);
    }
    if (reg->n == REGISTRY_MAX) {
        pthread_mutex_unlock(&reg->mu);
        return sl__set_last_error(SL_ENOSPC, "the operator registry is full (%d operators)",
                                  REGISTRY_MAX);
    }
    memmove(&reg->defs[pos + 1], &reg->defs[pos], (size_t)(reg->n - pos) * sizeof *reg->defs);
    reg->defs[pos] = def;
    reg->n++;
    pthread_mutex_unlock(&reg->mu);
    return SL_OK;
}

const struct sl_op_def *sl_registry_find(sl_registry_t *reg, const char *name)
{
    if (!reg || !name)
        return NULL;
    pthread_mutex_lock(&reg->mu);
    int pos;
    const struct sl_op_def *d = find_index(reg, name, &pos) ? reg->defs[pos] : NULL;
    pthread_mutex_unlock(&reg->mu);
    return d;
}

void sl_registry_foreach(sl_registry_t *reg, void (*cb)(void *, const struct sl_op_def *),
                         void *user)
{
    if (!reg || !cb)
        return;
    static const struct sl_op_def *copy[REGISTRY_MAX];
    static pthread_mutex_t copy_mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&copy_mu);
    pthread_mutex_lock(&reg->mu);
    int n = reg->n;
    memcpy(copy, reg->defs, (size_t)n * sizeof *copy);
    pthread_mutex_unlock(&reg->mu);
    /* Called without the registry lock so that cb may look operators up. */
    for (int i = 0; i < n; i++)
        cb(user, copy[i]);
    pthread_mutex_unlock(&copy_mu);
}

/* Staging registries (plugin loads): heap objects, freed by the loader. */
sl_registry_t *sl__registry_new(void)
{
    struct sl_registry *r = sl__calloc(1, sizeof *r);
    if (r)
        pthread_mutex_init(&r->mu, NULL);
    return r;
}

void sl__registry_free(sl_registry_t *reg)
{
    if (!reg)
        return;
    pthread_mutex_destroy(&reg->mu);
    sl__free(reg, sizeof *reg);
}

int sl__registry_merge(sl_registry_t *dst, sl_registry_t *src)
{
    pthread_mutex_lock(&dst->mu);
    int pos, rc = SL_OK;
    if (dst->n + src->n > REGISTRY_MAX)
        rc = sl__set_last_error(SL_ENOSPC, "the operator registry is full (%d operators)",
                                REGISTRY_MAX);
    for (int i = 0; rc == SL_OK && i < src->n; i++)
        if (find_index(dst, src->defs[i]->name, &pos))
            rc = sl__set_last_error(SL_EEXIST, "operator '%s' is already registered",
                                    src->defs[i]->name);
    /* All names are free: insert them (src is sorted and holds no duplicates). */
    for (int i = 0; rc == SL_OK && i < src->n; i++) {
        find_index(dst, src->defs[i]->name, &pos);
        memmove(&dst->defs[pos + 1], &dst->defs[pos], (size_t)(dst->n - pos) * sizeof *dst->defs);
        dst->defs[pos] = src->defs[i];
        dst->n++;
    }
    pthread_mutex_unlock(&dst->mu);
    return rc;
}
