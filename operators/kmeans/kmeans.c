/* kmeans: Lloyd's k-means over float32 or float64 feature columns.
 *
 *   features="f0,f1"  feature columns (all float32 or all float64); empty = every float
 *                     column of the input
 *   k=8               clusters (1 <= k <= rows)
 *   init=kmeans++     kmeans++ | random (k distinct rows) | given (option centroids, or
 *                     the rows of a second input with the same feature columns)
 *   centroids=""      for init=given: k rows of d numbers, rows separated by ';'
 *   max_iter=300, tol=1e-4, seed=0
 *   output=centroids  centroids | assignments
 *
 * Each iteration is a pipeline breaker: the points are kept (the input batches, by
 * reference) and every iteration spawns one task per equal range of rows (at most
 * KM_MAX_TASKS, whatever the batch sizes); a task assigns each point to its nearest
 * centroid (kmeans_dist.c) and adds the point to its own per-centroid float64 feature
 * sums and counts; the continuation adds the task sums in task order (so results do not
 * depend on the number of threads), divides, and starts the next iteration unless the
 * relative centroid shift sqrt(sum ||c' - c||^2) / sqrt(sum ||c||^2) is at most tol
 * (tol = 0: exactly max_iter iterations).
 * A cluster that gets no point keeps its previous centroid.
 *
 * output=centroids: k rows: the feature columns (float64, same names), "cluster"
 * (int64), "size" (points assigned), "inertia" (float64, the same on every row: the sum
 * of squared distances of the points to their centroids in the last assignment step,
 * the one the final centroids were computed from) and "iterations" (int64).
 * output=assignments: every input row with its columns and "cluster" (int64), from the
 * same last assignment step. Nulls in feature columns are an error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/op_common.h"
#include "kmeans_int.h"
#include "operators.h"

const struct sl_option_def sl__km_options[SL__KM_N_OPTIONS] = {
    {"features", SL_OPT_STRING, "", "comma-separated float feature columns (empty: all float)"},
    {"k", SL_OPT_INT, "8", "number of clusters"},
    {"init", SL_OPT_STRING, "kmeans++", "kmeans++, random or given"},
    {"centroids", SL_OPT_STRING, "", "init=given: k rows of d numbers separated by ';'"},
    {"max_iter", SL_OPT_INT, "300", "maximum Lloyd iterations"},
    {"tol", SL_OPT_FLOAT, "1e-4", "stop when the relative centroid shift is at most this"},
    {"seed", SL_OPT_INT, "0", "random seed of the initialisation"},
    {"output", SL_OPT_STRING, "centroids", "centroids or assignments"},
};

static void plan_free(void *p)
{
    struct km_plan *kp = p;
    if (kp->given)
        sl__free(kp->given, (size_t)kp->k * (size_t)kp->d * sizeof(double));
    sl__free(kp, sizeof *kp);
}

/* ---------------- bind ---------------- */

static int find_features(sl_bind_t *b, struct km_plan *p, const sl_schema_t *in, const char *list,
                         int *cols, int port)
{
    int d = 0;
    if (!*list) {
        for (int i = 0; i < sl_schema_num_fields(in) && d < KM_MAX_DIMS; i++) {
            enum sl_type ty;
            sl_schema_field(in, i, NULL, &ty);
            if (ty == SL_TYPE_FLOAT32 || ty == SL_TYPE_FLOAT64)
                cols[d++] = i;
        }
    } else {
        const char *s = list;
        while (*s) {
            while (*s == ' ' || *s == ',')
                s++;
            if (!*s)
                break;
            char name[128];
            size_t len = 0;
            while (s[len] && s[len] != ',' && s[len] != ' ' && len < sizeof name - 1)
                len++;
            memcpy(name, s, len);
            name[len] = 0;
            s += len;
            if (d == KM_MAX_DIMS)
                return sl_bind_fail(b, SL_EINVAL, "option features: at most %d", KM_MAX_DIMS);
            int idx = sl_schema_find(in, name);
            if (idx < 0)
                return sl_bind_fail(b, SL_ENOTFOUND, "option features: no column '%s' in input %d",
                                    name, port);
            cols[d++] = idx;
        }
    }
    if (d == 0)
        return sl_bind_fail(b, SL_EINVAL, "input %d has no float feature column", port);
    for (int j = 0; j < d; j++) {
        const char *name;
        enum sl_type ty;
        sl_schema_field(in, cols[j], &name, &ty);
        if (ty != SL_TYPE_FLOAT32 && ty != SL_TYPE_FLOAT64)
            return sl_bind_fail(b, SL_ETYPE, "feature column '%s' is %s, not float32/float64",
                                name, sl_type_name(ty));
        if (port == 0 && j == 0)
            p->type = ty;
        if (ty != p->type)
            return sl_bind_fail(b, SL_ETYPE, "feature column '%s' is %s but '%s' is %s: use one "
                                "float type", name, sl_type_name(ty),
                                "the first feature", sl_type_name(p->type));
    }
    if (port == 1 && d != p->d)
        return sl_bind_fail(b, SL_EINVAL, "input 1 has %d feature columns, input 0 has %d", d, p->d);
    if (port == 0)
        p->d = d;
    return SL_OK;
}

static int parse_given(sl_bind_t *b, struct km_plan *p, const char *text)
{
    size_t cnt = (size_t)p->k * (size_t)p->d;
    p->given = sl__malloc(cnt * sizeof(double));
    if (!p->given)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    size_t got = 0;
    const char *s = text;
    while (*s) {
        while (*s == ' ' || *s == ',' || *s == ';')
            s++;
        if (!*s)
            break;
        char *end;
        double v = strtod(s, &end);
        if (end == s)
            return sl_bind_fail(b, SL_EINVAL, "option centroids: '%.20s' is not a number", s);
        if (got < cnt)
            p->given[got] = v;
        got++;
        s = end;
    }
    if (got != cnt)
        return sl_bind_fail(b, SL_EINVAL, "option centroids: %zu numbers, need k*d = %zu", got, cnt);
    return SL_OK;
}

static int km_bind_output(sl_bind_t *b, struct km_plan *p)
{
    const sl_schema_t *in = sl_bind_input_schema(b, 0);
    int rc = SL_OK;
    if (p->assignments) {
        for (int i = 0; i < sl_schema_num_fields(in) && rc >= 0; i++) {
            const char *name;
            enum sl_type ty;
            sl_schema_field(in, i, &name, &ty);
            rc = sl_bind_add_column(b, name, ty);
        }
        return rc < 0 ? rc : sl_bind_add_column(b, "cluster", SL_TYPE_INT64);
    }
    for (int j = 0; j < p->d && rc >= 0; j++) {
        const char *name;
        sl_schema_field(in, p->cols[j], &name, NULL);
        rc = sl_bind_add_column(b, name, SL_TYPE_FLOAT64);
    }
    if (rc >= 0)
        rc = sl_bind_add_column(b, "cluster", SL_TYPE_INT64);
    if (rc >= 0)
        rc = sl_bind_add_column(b, "size", SL_TYPE_INT64);
    if (rc >= 0)
        rc = sl_bind_add_column(b, "inertia", SL_TYPE_FLOAT64);
    if (rc >= 0)
        rc = sl_bind_add_column(b, "iterations", SL_TYPE_INT64);
    sl_bind_set_rows(b, p->k);
    return rc;
}

int sl__km_bind(sl_bind_t *b)
{
    const char *features, *init, *given, *output;
    int64_t k, seed;
    double tol;
    struct km_plan *p = sl__malloc(sizeof *p);
    if (!p)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    memset(p, 0, sizeof *p);
    sl_bind_set_data(b, p, plan_free);
    int rc = sl_bind_option_str(b, "features", &features);
    if (rc >= 0)
        rc = sl_bind_option_int(b, "k", &k);
    if (rc >= 0)
        rc = sl_bind_option_str(b, "init", &init);
    if (rc >= 0)
        rc = sl_bind_option_str(b, "centroids", &given);
    if (rc >= 0)
        rc = sl_bind_option_int(b, "max_iter", &p->max_iter);
    if (rc >= 0)
        rc = sl_bind_option_float(b, "tol", &tol);
    if (rc >= 0)
        rc = sl_bind_option_int(b, "seed", &seed);
    if (rc >= 0)
        rc = sl_bind_option_str(b, "output", &output);
    if (rc < 0)
        return rc;
    if (k < 1 || k > (1 << 20))
        return sl_bind_fail(b, SL_EINVAL, "option k: %lld clusters, need 1 to 2^20", (long long)k);
    if (p->max_iter < 1)
        return sl_bind_fail(b, SL_EINVAL, "option max_iter: must be at least 1");
    if (!(tol >= 0))
        return sl_bind_fail(b, SL_EINVAL, "option tol: must be >= 0");
    p->k = (int)k;
    p->kp = (p->k + 3) & ~3;
    p->tol = tol;
    p->seed = (uint64_t)seed;
    if (!strcmp(output, "assignments"))
        p->assignments = true;
    else if (strcmp(output, "centroids"))
        return sl_bind_fail(b, SL_EINVAL, "option output: '%s' (centroids or assignments)", output);
    if (!strcmp(init, "kmeans++"))
        p->init = KM_PLUSPLUS;
    else if (!strcmp(init, "random"))
        p->init = KM_RANDOM;
    else if (!strcmp(init, "given"))
        p->init = KM_GIVEN;
    else
        return sl_bind_fail(b, SL_EINVAL, "option init: '%s' (kmeans++, random or given)", init);
    if ((rc = find_features(b, p, sl_bind_input_schema(b, 0), features, p->cols, 0)) < 0)
        return rc;
    int n_in = sl_bind_num_inputs(b);
    if (n_in == 2 && p->init != KM_GIVEN)
        return sl_bind_fail(b, SL_EINVAL, "a second input (initial centroids) needs init=given");
    if (p->init == KM_GIVEN) {
        if (n_in == 2) {
            if (*given)
                return sl_bind_fail(b, SL_EINVAL, "init=given: option centroids and a second "
                                    "input both given");
            rc = find_features(b, p, sl_bind_input_schema(b, 1), features, p->cols1, 1);
        } else if (!*given) {
            return sl_bind_fail(b, SL_EINVAL, "init=given needs option centroids or a second "
                                "input with the initial centroids");
        } else {
            rc = parse_given(b, p, given);
        }
        if (rc < 0)
            return rc;
    }
    int64_t rows = sl_bind_input_rows(b, 0);
    if (rows >= 0 && rows < k)
        return sl_bind_fail(b, SL_EINVAL, "option k: %lld clusters but the input has %lld rows",
                            (long long)k, (long long)rows);
    return km_bind_output(b, p);
}

/* ---------------- sink and combine: keep the batches ---------------- */

int sl__km_list_push(struct km_list *l, struct km_item it)
{
    if (l->n == l->cap) {
        int64_t cap = l->cap ? l->cap * 2 : 16;
        struct km_item *v = sl__realloc(l->v, (size_t)l->cap * sizeof *v, (size_t)cap * sizeof *v);
        if (!v)
            return SL_ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = it;
    return SL_OK;
}

static void list_fini(struct km_list *l)
{
    for (int64_t i = 0; i < l->n; i++)
        sl_batch_unref(l->v[i].batch);
    sl__free(l->v, (size_t)l->cap * sizeof *l->v);
    memset(l, 0, sizeof *l);
}

void sl__km_fini_local(const sl_op_t *op, void *gs, void *ls)
{
    (void)op;
    (void)gs;
    struct km_local *l = ls;
    list_fini(&l->in[0]);
    list_fini(&l->in[1]);
}

void sl__km_fini_global(const sl_op_t *op, void *gs)
{
    (void)op;
    struct km_global *g = gs;
    list_fini(&g->in[0]);
    list_fini(&g->in[1]);
}

/* Fails on a null in a feature column of host batch b (of input port). */
int sl__km_check_nulls(sl_task_t *t, const struct km_plan *p, const sl_batch_t *b, int port)
{
    for (int j = 0; j < p->d; j++) {
        const struct sl__col *c = &b->cols[port ? p->cols1[j] : p->cols[j]];
        if (!c->validity)
            continue;
        for (int64_t i = 0; i < b->n_rows; i++)
            if (!sl__col_valid(c, i))
                return sl_task_fail(t, SL_EINVAL, "kmeans: null in feature column %d of input %d",
                                    j, port);
    }
    return SL_OK;
}

/* Keeps batch b (a new reference) of input port in the local list. */
int sl__km_keep(sl_task_t *t, struct km_local *ls, sl_batch_t *b, int port)
{
    if (b->n_rows == 0)
        return SL_OK;
    sl_batch_ref(b);
    struct km_item it = {sl_task_index(t), ls->seq++, b};
    if (sl__km_list_push(&ls->in[port], it) < 0) {
        sl_batch_unref(b);
        return sl_task_fail(t, SL_ENOMEM, "out of memory");
    }
    return SL_OK;
}

int sl__km_sink(sl_task_t *t)
{
    const struct km_plan *p = sl_op_data(sl_task_op(t));
    struct km_local *ls = sl_task_lstate(t);
    sl_batch_t *b = sl_task_input(t);
    int port = sl_task_port(t);
    if (!ls)
        return SL_ENOMEM;
    int rc = sl__km_check_nulls(t, p, b, port);
    return rc < 0 ? rc : sl__km_keep(t, ls, b, port);
}

int sl__km_combine(sl_task_t *t)
{
    struct km_global *g = sl_task_gstate(t);
    struct km_local *ls = sl_task_lstate(t);
    for (int port = 0; port < 2 && ls; port++) {
        for (int64_t i = 0; i < ls->in[port].n; i++) {
            if (sl__km_list_push(&g->in[port], ls->in[port].v[i]) < 0)
                return sl_task_fail(t, SL_ENOMEM, "out of memory");
            ls->in[port].v[i].batch = NULL;
        }
        ls->in[port].n = 0;
    }
    return SL_OK;
}

static int item_cmp(const void *a, const void *b)
{
    const struct km_item *x = a, *y = b;
    if (x->index != y->index)
        return x->index < y->index ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* ---------------- the iterations ---------------- */

static double point_value(const struct km_plan *p, const sl_batch_t *b, int col, int64_t i)
{
    const void *v = sl__col_values(b, col);
    return p->type == SL_TYPE_FLOAT32 ? ((const float *)v)[i] : ((const double *)v)[i];
}

/* The last kept batch that starts at or before row r (g->start ascends). */
static int64_t batch_of(const struct km_global *g, int64_t r)
{
    int64_t lo = 0, hi = g->in[0].n - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (g->start[mid] <= r)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Row r of the input as doubles. */
static void get_point(const struct km_plan *p, const struct km_global *g, int64_t r, double *x)
{
    int64_t lo = batch_of(g, r);
    const sl_batch_t *b = g->in[0].v[lo].batch;
    for (int j = 0; j < p->d; j++)
        x[j] = point_value(p, b, p->cols[j], r - g->start[lo]);
}

/* kmeans++: the first centroid uniformly, each next one with probability proportional
 * to the squared distance to the nearest chosen centroid (serial; k passes). */
static int init_plusplus(sl_task_t *t, const struct km_plan *p, struct km_global *g)
{
    uint64_t s = p->seed;
    double *d2 = sl_task_alloc(t, (size_t)g->n * sizeof(double));
    double *x = sl_task_alloc(t, (size_t)p->d * sizeof(double));
    if (!d2 || !x)
        return SL_ENOMEM;
    get_point(p, g, (int64_t)(sl__km_rng_next(&s) % (uint64_t)g->n), g->c);
    for (int64_t r = 0; r < g->n; r++)
        d2[r] = INFINITY;
    for (int c = 1; c < p->k; c++) {
        const double *last = g->c + (size_t)(c - 1) * p->d;
        double total = 0;
        for (int64_t r = 0; r < g->n; r++) {
            get_point(p, g, r, x);
            double dd = 0;
            for (int j = 0; j < p->d; j++)
                dd += (x[j] - last[j]) * (x[j] - last[j]);
            if (dd < d2[r])
                d2[r] = dd;
            total += d2[r];
        }
        int64_t pick = (int64_t)(sl__km_rng_next(&s) % (uint64_t)g->n);
        if (total > 0) {
            double u = sl__km_rng_unit(&s) * total, acc = 0;
            for (pick = 0; pick < g->n - 1; pick++) {
                acc += d2[pick];
                if (acc > u && d2[pick] > 0)
                    break;
            }
        }
        get_point(p, g, pick, g->c + (size_t)c * p->d);
        if (sl_task_cancelled(t))
            return SL_ECANCELED;
    }
    return SL_OK;
}

/* random: k distinct rows drawn uniformly (rejection of repeats). */
static int init_random(sl_task_t *t, const struct km_plan *p, struct km_global *g)
{
    uint64_t s = p->seed;
    int64_t *pick = sl_task_alloc(t, (size_t)p->k * sizeof(int64_t));
    if (!pick)
        return SL_ENOMEM;
    for (int c = 0; c < p->k; c++) {
        int dup;
        do {
            pick[c] = (int64_t)(sl__km_rng_next(&s) % (uint64_t)g->n);
            dup = 0;
            for (int e = 0; e < c; e++)
                dup |= pick[e] == pick[c];
        } while (dup);
        get_point(p, g, pick[c], g->c + (size_t)c * p->d);
    }
    return SL_OK;
}

int sl__km_init_given_table(sl_task_t *t, const struct km_plan *p, struct km_global *g)
{
    int64_t rows = 0;
    for (int64_t i = 0; i < g->in[1].n; i++)
        rows += g->in[1].v[i].batch->n_rows;
    if (rows != p->k)
        return sl_task_fail(t, SL_EINVAL, "init=given: the centroids input has %lld rows, k=%d",
                            (long long)rows, p->k);
    int64_t r = 0;
    for (int64_t i = 0; i < g->in[1].n; i++) {
        const sl_batch_t *b = g->in[1].v[i].batch;
        for (int64_t q = 0; q < b->n_rows; q++, r++)
            for (int j = 0; j < p->d; j++)
                g->c[r * p->d + j] = point_value(p, b, p->cols1[j], q);
    }
    return SL_OK;
}

/* Copies the centroids into the kernel's layout (float or double, padded to kp). */
static void prepare_kernel(const struct km_plan *p, struct km_global *g)
{
    for (int c = 0; c < p->kp; c++) {
        double nn = 0;
        for (int j = 0; j < p->d; j++) {
            double v = c < p->k ? g->c[(size_t)c * p->d + j] : 0;
            nn += v * v;
            if (p->type == SL_TYPE_FLOAT32)
                ((float *)g->ct)[(size_t)c * p->d + j] = (float)v;
            else
                ((double *)g->ct)[(size_t)c * p->d + j] = v;
        }
        double h = c < p->k ? nn / 2 : INFINITY;
        if (p->type == SL_TYPE_FLOAT32) {
            /* The half norm of the float32 centroid, as the kernel sees it. */
            float fn = 0;
            for (int j = 0; j < p->d && c < p->k; j++) {
                float v = ((float *)g->ct)[(size_t)c * p->d + j];
                fn += v * v;
            }
            ((float *)g->hn)[c] = c < p->k ? fn / 2 : INFINITY;
        } else {
            ((double *)g->hn)[c] = h;
        }
    }
}

/* Spawned: assigns rows [n i / T, n (i + 1) / T) of the input (T tasks: equal shares
 * whatever the batch sizes, so that the workers finish together) and sums them. */
static int km_assign_task(sl_task_t *t)
{
    const struct km_plan *p = sl_op_data(sl_task_op(t));
    struct km_global *g = sl_task_gstate(t);
    int64_t i = sl_task_index(t), nb = g->in[0].n;
    int64_t r_lo = g->n * i / g->n_tasks, r_hi = g->n * (i + 1) / g->n_tasks;
    struct km_acc *a = &g->acc[i];
    int d = p->d;
    size_t w = p->type == SL_TYPE_FLOAT32 ? 4 : 8;
    memset(a->sums, 0, (size_t)p->k * (size_t)d * sizeof(double));
    memset(a->cnt, 0, (size_t)p->k * sizeof(int64_t));
    a->inertia = 0;
    for (int64_t bi = batch_of(g, r_lo); r_lo < r_hi && bi < nb && g->start[bi] < r_hi; bi++) {
        const sl_batch_t *b = g->in[0].v[bi].batch;
        /* This task's rows of the batch: [lo, lo + n) of it, rows r0.. of the input. */
        int64_t lo = r_lo > g->start[bi] ? r_lo - g->start[bi] : 0;
        int64_t end = r_hi < g->start[bi + 1] ? r_hi - g->start[bi] : b->n_rows;
        int64_t n = end - lo, r0 = g->start[bi] + lo;
        if (n <= 0)
            continue;
        int32_t *lab = g->labels + r0;
        const void *cols[KM_MAX_DIMS];
        for (int j = 0; j < d; j++)
            cols[j] = (const char *)sl__col_values(b, p->cols[j]) + (size_t)lo * w;
        double inertia = 0;
        if (p->type == SL_TYPE_FLOAT32) {
            float *dist = (float *)g->dist + r0;
            inertia = sl__km_assign_sum_f32((const float *const *)cols, n, d, g->ct, g->hn,
                                            p->kp, lab, dist, a->sums, a->cnt);
        } else {
            double *dist = (double *)g->dist + r0;
            sl__km_assign_f64((const double *const *)cols, n, d, g->ct, g->hn, p->kp, lab, dist);
            for (int64_t r = 0; r < n; r++) {
                double *s = a->sums + (size_t)lab[r] * d;
                for (int j = 0; j < d; j++)
                    s[j] += ((const double *)cols[j])[r];
                a->cnt[lab[r]]++;
                inertia += dist[r];
            }
        }
        a->inertia += inertia;
        if (sl_task_cancelled(t))
            return SL_ECANCELED;
    }
    return SL_OK;
}

static int km_update(sl_task_t *t);
static const struct sl_impl assign_impl[] = {SL__IMPL_CPU(km_assign_task)};
static const struct sl_impl update_impl[] = {SL__IMPL_CPU(km_update)};
static const struct sl_phase assign_phase = {assign_impl, 1, NULL};
static const struct sl_phase update_phase = {update_impl, 1, NULL};

/* The continuation of an iteration: combine in task order, divide, test, go on. */
static int km_update(sl_task_t *t)
{
    const struct km_plan *p = sl_op_data(sl_task_op(t));
    struct km_global *g = sl_task_gstate(t);
    int k = p->k, d = p->d;
    struct km_acc *a0 = &g->acc[0];
    for (int i = 1; i < g->n_tasks; i++) {
        for (size_t e = 0; e < (size_t)k * d; e++)
            a0->sums[e] += g->acc[i].sums[e];
        for (int c = 0; c < k; c++)
            a0->cnt[c] += g->acc[i].cnt[c];
        a0->inertia += g->acc[i].inertia;
    }
    double shift = 0, norm = 0;
    for (int c = 0; c < k; c++) {
        g->size[c] = a0->cnt[c];
        for (int j = 0; j < d; j++) {
            double old = g->c[(size_t)c * d + j];
            double nv = a0->cnt[c] ? a0->sums[(size_t)c * d + j] / (double)a0->cnt[c] : old;
            shift += (nv - old) * (nv - old);
            norm += old * old;
            g->c[(size_t)c * d + j] = nv;
        }
    }
    g->inertia = a0->inertia;
    g->iters++;
    if (g->iters >= p->max_iter || shift <= p->tol * p->tol * norm)
        return SL_OK;
    prepare_kernel(p, g);
    return sl_task_spawn(t, &assign_phase, g->n_tasks, NULL, &update_phase);
}

int sl__km_order(sl_task_t *t, const struct km_plan *p, struct km_global *g)
{
    /* qsort on an empty (NULL) list is undefined, hence the guards */
    if (g->in[0].n > 1)
        qsort(g->in[0].v, (size_t)g->in[0].n, sizeof *g->in[0].v, item_cmp);
    if (g->in[1].n > 1)
        qsort(g->in[1].v, (size_t)g->in[1].n, sizeof *g->in[1].v, item_cmp);
    int64_t nb = g->in[0].n;
    g->start = sl_task_alloc(t, (size_t)(nb + 1) * sizeof(int64_t));
    if (!g->start)
        return SL_ENOMEM;
    g->n = 0;
    for (int64_t i = 0; i < nb; i++) {
        g->start[i] = g->n;
        g->n += g->in[0].v[i].batch->n_rows;
    }
    g->start[nb] = g->n;
    if (g->n < p->k)
        return sl_task_fail(t, SL_EINVAL, "option k: %d clusters but the input has %lld rows",
                            p->k, (long long)g->n);
    return SL_OK;
}

/* Batches a GPU sink kept, in host memory (the CPU iterations and outputs read them). */
int sl__km_inputs_to_host(sl_task_t *t, struct km_global *g)
{
    for (int port = 0; port < 2; port++)
        for (int64_t i = 0; i < g->in[port].n; i++) {
            int rc = sl__batch_keep_on_host(t, &g->in[port].v[i].batch);
            if (rc < 0)
                return rc;
        }
    return SL_OK;
}

static int km_setup(sl_task_t *t, const struct km_plan *p, struct km_global *g)
{
    int rc = sl__km_inputs_to_host(t, g);
    if (rc >= 0)
        rc = sl__km_order(t, p, g);
    if (rc < 0)
        return rc;
    size_t w = p->type == SL_TYPE_FLOAT32 ? 4 : 8;
    g->labels = sl_task_alloc(t, (size_t)g->n * 4 + 64);
    g->dist = sl_task_alloc(t, (size_t)g->n * w + 64);
    g->c = sl_task_alloc(t, (size_t)p->k * p->d * sizeof(double));
    g->ct = sl_task_alloc(t, (size_t)p->kp * p->d * w + 64);
    g->hn = sl_task_alloc(t, (size_t)p->kp * w + 64);
    g->size = sl_task_alloc(t, (size_t)p->k * sizeof(int64_t));
    if (!g->labels || !g->dist || !g->c || !g->ct || !g->hn || !g->size)
        return SL_ENOMEM;
    /* Row ranges of at least KM_TASK_MIN_ROWS, at most KM_MAX_TASKS of them (n >= k >= 1). */
    int64_t tasks = (g->n + KM_TASK_MIN_ROWS - 1) / KM_TASK_MIN_ROWS;
    g->n_tasks = (int)(tasks < KM_MAX_TASKS ? tasks : KM_MAX_TASKS);
    for (int i = 0; i < g->n_tasks; i++) {
        g->acc[i].sums = sl_task_alloc(t, (size_t)p->k * p->d * sizeof(double));
        g->acc[i].cnt = sl_task_alloc(t, (size_t)p->k * sizeof(int64_t));
        if (!g->acc[i].sums || !g->acc[i].cnt)
            return SL_ENOMEM;
    }
    return SL_OK;
}

int sl__km_finalize(sl_task_t *t)
{
    const struct km_plan *p = sl_op_data(sl_task_op(t));
    struct km_global *g = sl_task_gstate(t);
    int rc = km_setup(t, p, g);
    if (rc < 0)
        return rc;
    if (p->init == KM_GIVEN && p->given)
        memcpy(g->c, p->given, (size_t)p->k * p->d * sizeof(double));
    else if (p->init == KM_GIVEN)
        rc = sl__km_init_given_table(t, p, g);
    else if (p->init == KM_RANDOM)
        rc = init_random(t, p, g);
    else
        rc = init_plusplus(t, p, g);
    if (rc < 0)
        return rc;
    prepare_kernel(p, g);
    return sl_task_spawn(t, &assign_phase, g->n_tasks, NULL, &update_phase);
}

/* ---------------- output ---------------- */

int64_t sl__km_source_tasks(sl_task_t *t)
{
    const struct km_plan *p = sl_op_data(sl_task_op(t));
    struct km_global *g = sl_task_gstate(t);
    return p->assignments ? (g->in[0].n ? g->in[0].n : 1) : 1;
}

static sl_batch_t *new_batch(sl_task_t *t, int64_t rows)
{
    sl_batch_t *b = sl__batch_new(sl_op_output_schema(sl_task_op(t)), rows);
    if (!b || sl__batch_alloc_columns(b) != SL_OK) {
        sl_batch_unref(b);
        sl_task_fail(t, SL_ENOMEM, "out of memory");
        return NULL;
    }
    return b;
}

static int emit_assignments_of(sl_task_t *t, struct km_global *g, int64_t i, const sl_batch_t *in);

/* Rows of input batch i with their clusters (a host copy of a batch kept on a GPU). */
static int emit_assignments(sl_task_t *t, const struct km_plan *p, struct km_global *g)
{
    (void)p;
    int64_t i = sl_task_index(t);
    if (i >= g->in[0].n)
        return SL_OK;
    sl_batch_t *in;
    int rc = sl_task_batch_to_host(t, g->in[0].v[i].batch, &in);
    if (rc < 0)
        return rc;
    rc = emit_assignments_of(t, g, i, in);
    sl_batch_unref(in);
    return rc;
}

static int emit_assignments_of(sl_task_t *t, struct km_global *g, int64_t i, const sl_batch_t *in)
{
    sl_batch_t *b = new_batch(t, in->n_rows);
    if (!b)
        return SL_ENOMEM;
    for (int c = 0; c < in->n_cols; c++) {
        memcpy(sl__col_values(b, c), sl__col_values(in, c),
               (size_t)in->n_rows * sl_type_width(in->cols[c].type));
        if (in->cols[c].validity) {
            uint8_t *v = sl_batch_column_validity(b, c);
            if (!v) {
                sl_batch_unref(b);
                return sl_task_fail(t, SL_ENOMEM, "out of memory");
            }
            for (int64_t r = 0; r < in->n_rows; r++)
                if (!sl__col_valid(&in->cols[c], r))
                    v[r >> 3] &= (uint8_t) ~(1u << (r & 7));
            b->cols[c].null_count = -1;
        }
    }
    int64_t *cl = sl__col_values(b, in->n_cols);
    for (int64_t r = 0; r < in->n_rows; r++)
        cl[r] = g->labels[g->start[i] + r];
    return sl_task_emit(t, b);
}

int sl__km_source(sl_task_t *t)
{
    const struct km_plan *p = sl_op_data(sl_task_op(t));
    struct km_global *g = sl_task_gstate(t);
    if (p->assignments)
        return emit_assignments(t, p, g);
    sl_batch_t *b = new_batch(t, p->k);
    if (!b)
        return SL_ENOMEM;
    for (int c = 0; c < p->k; c++) {
        for (int j = 0; j < p->d; j++)
            ((double *)sl__col_values(b, j))[c] = g->c[(size_t)c * p->d + j];
        ((int64_t *)sl__col_values(b, p->d))[c] = c;
        ((int64_t *)sl__col_values(b, p->d + 1))[c] = g->size[c];
        ((double *)sl__col_values(b, p->d + 2))[c] = g->inertia;
        ((int64_t *)sl__col_values(b, p->d + 3))[c] = g->iters;
    }
    return sl_task_emit(t, b);
}

/* Expected seconds for `rows` points through the whole sink (max_iter iterations, at
 * most 30 counted: most runs stop earlier). CPU, per worker: 2*rows*d*k flops per
 * iteration at 25 GFLOP/s (AVX2 FMAs on one core). CUDA: per iteration max(rows*d*4
 * bytes / 2.5 TB/s, 2*rows*d*k flops / 50 TFLOP/s) + 20 us of launches and the shift
 * read-back, plus one upload of the points at 20 GB/s (H100 figures, rounded down). */
double sl__km_cost(const sl_op_t *op, enum sl_device_kind kind, int64_t rows)
{
    const struct km_plan *p = sl_op_data(op);
    if (!p || rows < 0)
        return -1;
    double iters = p->max_iter < 30 ? (double)p->max_iter : 30;
    double flops = 2.0 * (double)rows * p->d * p->k, bytes = (double)rows * p->d * 4;
    if (kind == SL_DEVICE_CPU)
        return iters * flops / 25e9;
    double it = bytes / 2.5e12 > flops / 50e12 ? bytes / 2.5e12 : flops / 50e12;
    return iters * (it + 20e-6) + bytes / 20e9;
}

const struct sl_impl sl__km_combine_cpu[1] = {SL__IMPL_CPU(sl__km_combine)};
const struct sl_impl sl__km_source_cpu[1] = {SL__IMPL_CPU(sl__km_source)};

static const struct sl_impl sink_cpu[] = {SL__IMPL_CPU(sl__km_sink)};
static const struct sl_impl finalize_cpu[] = {SL__IMPL_CPU(sl__km_finalize)};
/* The CPU-only definition; CUDA builds register sl__kmeans_cuda_def (kmeans_cuda.c). */
SL__SINK_SOURCE_DEF(sl__kmeans_def, SL__KM_DEF_FIELDS, (), sl__km_cost, sink_cpu,
                    sl__km_combine_cpu, finalize_cpu, sl__km_source_cpu);
