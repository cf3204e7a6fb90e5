/* gen.keys: join and group-by keys with payloads, generated in parallel morsels.
 *
 *   kind=unique  the dense values offset .. offset+rows-1 in a shuffled order (a
 *                Feistel permutation of the row index): a primary key.
 *   kind=fk      keys referencing the domain [0, pk_rows): a fraction `match` of the
 *                rows (decided per row by a hash, so the realized fraction is binomial
 *                around it) draw a key in the domain, uniformly or Zipf-skewed
 *                (exponent `zipf`; Zipf rank r maps to a permuted key so hot keys are
 *                spread over the domain); the others draw a key in [pk_rows, type max],
 *                which never matches.
 *   kind=m2m     keys drawn from `distinct` values [0, distinct), uniform or Zipf.
 * Nulls (validity bitmap) at rate null_rate; payload columns p1..pN hold
 * p_j = row*31 + j (row = the global row position), truncated to payload_type, so a
 * join result can be checked row by row. Every value is a function of (seed, row), so
 * the data do not depend on the thread count or morsel size. */
#include <stdio.h>
#include <string.h>

#include "gen_int.h"
#include "operators.h"

#define MAX_PAYLOADS 64

const struct sl_option_def sl__gen_keys_options[] = {
    {"rows", SL_OPT_INT, NULL, "number of rows (e.g. 1000000 or 2^24)"},
    {"seed", SL_OPT_INT, "1", "random seed"},
    {"kind", SL_OPT_STRING, "unique", "unique (shuffled dense keys), fk or m2m"},
    {"type", SL_OPT_STRING, "int32", "key type: int32 or int64"},
    {"column", SL_OPT_STRING, "k", "key column name"},
    {"pk_rows", SL_OPT_INT, "0", "fk: size of the referenced key domain [0, pk_rows); set it (> 0) for kind=fk"},
    {"match", SL_OPT_FLOAT, "1.0", "fk: fraction of rows whose key is in the domain"},
    {"zipf", SL_OPT_FLOAT, "0", "fk, m2m: Zipf exponent over the keys (0 = uniform)"},
    {"distinct", SL_OPT_INT, "0", "m2m: number of distinct key values; set it (> 0) for kind=m2m"},
    {"null_rate", SL_OPT_FLOAT, "0", "fraction of null keys"},
    {"payloads", SL_OPT_INT, "0", "number of payload columns p1..pN (p_j = row*31 + j)"},
    {"payload_type", SL_OPT_STRING, "", "payload type (default: the key type)"},
    {"offset", SL_OPT_INT, "0", "unique: added to every key"},
};

static void keys_free(void *p)
{
    sl__free(p, sizeof(struct sl__gen_keys_data));
}

static int64_t type_max(enum sl_type t)
{
    return t == SL_TYPE_INT32 ? INT32_MAX : INT64_MAX;
}

static int parse_kind(sl_bind_t *b, struct sl__gen_keys_data *d)
{
    const char *kind, *type, *ptype;
    int rc;
    if ((rc = sl_bind_option_str(b, "kind", &kind)) < 0 ||
        (rc = sl_bind_option_str(b, "type", &type)) < 0 ||
        (rc = sl_bind_option_str(b, "payload_type", &ptype)) < 0)
        return rc;
    if (strcmp(kind, "unique") == 0)
        d->kind = K_UNIQUE;
    else if (strcmp(kind, "fk") == 0)
        d->kind = K_FK;
    else if (strcmp(kind, "m2m") == 0)
        d->kind = K_M2M;
    else
        return sl_bind_fail(b, SL_EINVAL, "kind must be unique, fk or m2m, got '%s'", kind);
    if (sl_type_parse(type, &d->type) < 0 || (d->type != SL_TYPE_INT32 && d->type != SL_TYPE_INT64))
        return sl_bind_fail(b, SL_ETYPE, "type must be int32 or int64, got '%s'", type);
    d->ptype = d->type;
    if (*ptype && (sl_type_parse(ptype, &d->ptype) < 0 || SL_TYPE_ID(d->ptype) < SL_TYPE_INT32 ||
                   SL_TYPE_ID(d->ptype) > SL_TYPE_FLOAT64)) /* new types: not as payloads */
        return sl_bind_fail(b, SL_ETYPE, "payload_type must be int32, int64, float32 or float64, "
                            "got '%s'", ptype);
    return SL_OK;
}

/* Checks the options of each kind; fills domain. */
static int check_kind(sl_bind_t *b, struct sl__gen_keys_data *d)
{
    int64_t tmax = type_max(d->type);
    const char *tn = sl_type_name(d->type);
    if (d->kind == K_UNIQUE) {
        if (d->offset < -tmax - 1 || d->offset > tmax ||
            (d->rows > 0 && (__int128)d->offset + d->rows - 1 > tmax))
            return sl_bind_fail(b, SL_EOVERFLOW, "unique keys offset=%lld .. offset+rows-1 do not "
                                "fit in %s", (long long)d->offset, tn);
        return SL_OK;
    }
    if (d->kind == K_FK) {
        if (!sl_bind_option_given(b, "pk_rows"))
            return sl_bind_fail(b, SL_EINVAL, "kind=fk needs pk_rows (the size of the "
                                "referenced key domain [0, pk_rows))");
        if (d->pk_rows < 1)
            return sl_bind_fail(b, SL_EINVAL, "pk_rows must be >= 1, got %lld",
                                (long long)d->pk_rows);
        if (d->pk_rows - 1 > tmax)
            return sl_bind_fail(b, SL_EOVERFLOW, "pk_rows=%lld does not fit in %s",
                                (long long)d->pk_rows, tn);
        if (d->match < 1.0 && d->pk_rows > tmax)
            return sl_bind_fail(b, SL_EOVERFLOW, "match < 1 needs keys outside [0, pk_rows), "
                                "but pk_rows=%lld fills %s", (long long)d->pk_rows, tn);
        d->domain = d->pk_rows;
        return SL_OK;
    }
    if (!sl_bind_option_given(b, "distinct"))
        return sl_bind_fail(b, SL_EINVAL, "kind=m2m needs distinct (the number of key values)");
    if (d->distinct < 1 || d->distinct - 1 > tmax)
        return sl_bind_fail(b, SL_EINVAL, "distinct must be in [1, %lld] for %s, got %lld",
                            (long long)tmax, tn, (long long)d->distinct);
    d->domain = d->distinct;
    return SL_OK;
}

int sl__gen_keys_bind(sl_bind_t *b)
{
    struct sl__gen_keys_data d;
    memset(&d, 0, sizeof d);
    const char *col;
    int64_t seed, payloads;
    int rc;
    if ((rc = sl_bind_option_int(b, "rows", &d.rows)) < 0 ||
        (rc = sl_bind_option_int(b, "seed", &seed)) < 0 ||
        (rc = sl_bind_option_str(b, "column", &col)) < 0 ||
        (rc = sl_bind_option_int(b, "pk_rows", &d.pk_rows)) < 0 ||
        (rc = sl_bind_option_float(b, "match", &d.match)) < 0 ||
        (rc = sl_bind_option_float(b, "zipf", &d.zipf)) < 0 ||
        (rc = sl_bind_option_int(b, "distinct", &d.distinct)) < 0 ||
        (rc = sl_bind_option_float(b, "null_rate", &d.null_rate)) < 0 ||
        (rc = sl_bind_option_int(b, "payloads", &payloads)) < 0 ||
        (rc = sl_bind_option_int(b, "offset", &d.offset)) < 0 || (rc = parse_kind(b, &d)) < 0)
        return rc;
    d.seed = (uint64_t)seed;
    if (d.rows < 0)
        return sl_bind_fail(b, SL_EINVAL, "rows must be >= 0, got %lld", (long long)d.rows);
    if (!(d.match >= 0.0 && d.match <= 1.0))
        return sl_bind_fail(b, SL_EINVAL, "match must be in [0, 1], got %g", d.match);
    if (!(d.null_rate >= 0.0 && d.null_rate <= 1.0))
        return sl_bind_fail(b, SL_EINVAL, "null_rate must be in [0, 1], got %g", d.null_rate);
    if (!(d.zipf >= 0.0) || d.zipf > 100.0)
        return sl_bind_fail(b, SL_EINVAL, "zipf must be in [0, 100], got %g", d.zipf);
    if (d.zipf > 0 && d.kind == K_UNIQUE)
        return sl_bind_fail(b, SL_EINVAL, "zipf applies to kind=fk and kind=m2m, not unique");
    if (payloads < 0 || payloads > MAX_PAYLOADS)
        return sl_bind_fail(b, SL_EINVAL, "payloads must be in [0, %d], got %lld", MAX_PAYLOADS,
                            (long long)payloads);
    d.payloads = (int)payloads;
    if ((rc = check_kind(b, &d)) < 0)
        return rc;
    d.g = (struct sl__gen_keys){.kind = (enum sl__gen_keys_kind)d.kind, .seed = d.seed,
                                .rows = d.rows, .domain = d.domain, .offset = d.offset,
                                .match = d.match, .zipf = d.zipf, .null_rate = d.null_rate,
                                .type_max = type_max(d.type)};
    if (sl__gen_keys_init(&d.g) < 0)
        return sl_bind_fail(b, SL_EINVAL, "bad key domain or zipf=%g", d.zipf);
    struct sl__gen_keys_data *p = sl__malloc(sizeof *p);
    if (!p)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    *p = d;
    sl_bind_set_data(b, p, keys_free);
    sl_bind_set_rows(b, d.rows);
    if ((rc = sl_bind_add_column(b, col, d.type)) < 0)
        return rc;
    for (int j = 1; j <= d.payloads; j++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", j);
        if (strcmp(name, col) == 0)
            return sl_bind_fail(b, SL_EINVAL, "column=%s clashes with payload column %s", col,
                                name);
        if ((rc = sl_bind_add_column(b, name, d.ptype)) < 0)
            return rc;
    }
    return SL_OK;
}

static void fill_payload(void *out, enum sl_type t, int64_t first, int64_t n, int j)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t v = sl__gen_payload(first + i, j);
        switch (t) {
        case SL_TYPE_INT32: ((int32_t *)out)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
        case SL_TYPE_INT64: ((int64_t *)out)[i] = v; break;
        case SL_TYPE_FLOAT32: ((float *)out)[i] = (float)v; break;
        default: ((double *)out)[i] = (double)v; break;
        }
    }
}

int sl__gen_keys_source(sl_task_t *t)
{
    const struct sl__gen_keys_data *d = sl_op_data(sl_task_op(t));
    int64_t first, n;
    sl__gen_morsel(t, d->rows, &first, &n);
    sl_batch_t *b = sl_task_new_batch(t, sl_op_output_schema(sl_task_op(t)), n);
    if (!b)
        return SL_ENOMEM;
    void *k = sl__col_values(b, 0);
    uint8_t *valid = NULL;
    int64_t nulls = 0;
    if (d->null_rate > 0 && !(valid = sl_batch_column_validity(b, 0))) {
        sl_batch_unref(b);
        return sl_task_fail(t, SL_ENOMEM, "out of memory for a validity bitmap");
    }
    for (int64_t i = 0; i < n; i++) {
        bool ok;
        int64_t v = sl__gen_keys_at(&d->g, (uint64_t)(first + i), &ok);
        if (d->type == SL_TYPE_INT32)
            ((int32_t *)k)[i] = (int32_t)v;
        else
            ((int64_t *)k)[i] = v;
        if (!ok) {
            valid[i >> 3] &= (uint8_t) ~(1u << (i & 7));
            nulls++;
        }
    }
    b->cols[0].null_count = nulls;
    for (int j = 1; j <= d->payloads; j++)
        fill_payload(sl__col_values(b, j), d->ptype, first, n, j);
    return sl_task_emit(t, b);
}

/* Zipf keys cost what they cost on the CPU wherever the pipeline runs. */
double sl__gen_keys_cost(const sl_op_t *op, enum sl_device_kind kind, int64_t rows)
{
    const struct sl__gen_keys_data *d = sl_op_data(op);
    return sl__cost_linear(op, d && d->zipf > 0 ? SL_DEVICE_CPU : kind, rows);
}
