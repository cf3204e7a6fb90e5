/* gen.values: one column of random values of the types gen.uniform lacks: strings
 * (utf8, large_utf8, or dict sharing one dictionary across every batch) with a chosen
 * number of distinct values and a length range, dates and timestamps in a range,
 * decimals of any precision and scale in a range, and booleans. As every generator,
 * row i's value and null flag depend only on (seed, i), not on threads or morsels.
 *
 * Strings: row i takes string k = hash(i) mod cardinality; string k is k's digits in
 * base 36, always d of them (d = the digits of cardinality - 1), followed by letters
 * drawn from hash(seed, k) up to a length drawn in [min_len, max_len] (at least d). So
 * the strings are distinct, and exactly `cardinality` of them can occur. */
#include <stdio.h>
#include <string.h>

#include "gen_int.h"
#include "operators.h"
#include "value_text.h"

enum { S_LEN = 0x4c45, S_CHAR = 0x4348, S_PICK = 0x5049 }; /* hash streams */

struct val_data {
    int64_t rows;
    enum sl_type type;
    uint64_t seed;
    double null_rate;
    int64_t card;              /* strings: distinct values */
    int64_t min_len, max_len;  /* strings: lengths in bytes */
    int digits;                /* strings: base-36 digits of card - 1 */
    __int128 lo, span;         /* dates, timestamps, decimals: [lo, lo + span) */
};

struct val_global {
    struct sl__dict *dict; /* dict: every string, made once */
};

static const struct sl_option_def val_options[] = {
    {"rows", SL_OPT_INT, NULL, "number of rows (e.g. 1000000 or 2^24)"},
    {"seed", SL_OPT_INT, "1", "random seed"},
    {"type", SL_OPT_STRING, "utf8", "utf8, large_utf8, dict, date32, timestamp, "
                                    "decimal(P,S) or bool"},
    {"column", SL_OPT_STRING, "x", "column name"},
    {"null_rate", SL_OPT_FLOAT, "0", "fraction of null values"},
    {"cardinality", SL_OPT_INT, "1000", "strings: number of distinct strings"},
    {"min_len", SL_OPT_INT, "8", "strings: shortest length in bytes"},
    {"max_len", SL_OPT_INT, "16", "strings: longest length in bytes"},
    {"min", SL_OPT_STRING, "", "dates, timestamps, decimals: smallest value, as text "
                               "(defaults 1992-01-01, 1992-01-01 00:00:00, 0)"},
    {"max", SL_OPT_STRING, "", "dates, timestamps, decimals: largest value, as text "
                               "(defaults 1998-12-31, 1998-12-31 23:59:59, 10000)"},
};

int sl__gen_bind_common(sl_bind_t *b, struct sl__gen_common *out)
{
    int64_t seed;
    int rc;
    if ((rc = sl_bind_option_int(b, "rows", &out->rows)) < 0 ||
        (rc = sl_bind_option_int(b, "seed", &seed)) < 0 ||
        (rc = sl_bind_option_str(b, "type", &out->type)) < 0 ||
        (rc = sl_bind_option_str(b, "column", &out->column)) < 0 ||
        (rc = sl_bind_option_float(b, "null_rate", &out->null_rate)) < 0)
        return rc;
    out->seed = (uint64_t)seed;
    if (out->rows < 0)
        return sl_bind_fail(b, SL_EINVAL, "rows must be >= 0, got %lld", (long long)out->rows);
    if (!(out->null_rate >= 0.0 && out->null_rate <= 1.0))
        return sl_bind_fail(b, SL_EINVAL, "null_rate must be in [0, 1], got %g",
                            out->null_rate);
    return SL_OK;
}

static void val_free(void *p)
{
    sl__free(p, sizeof(struct val_data));
}

/* The value of `text` (or of `dflt` when it is empty) as an integer of the type. */
static int parse_bound(sl_bind_t *b, const struct val_data *d, const char *name,
                       const char *text, const char *dflt, __int128 *out)
{
    const char *s = *text ? text : dflt;
    int rc = 0;
    int32_t d32;
    int64_t us;
    switch (SL_TYPE_ID(d->type)) {
    case SL_TYPE_DATE32:
        rc = sl__date_parse(s, strlen(s), &d32);
        *out = d32;
        break;
    case SL_TYPE_TIMESTAMP:
        rc = sl__timestamp_parse(s, strlen(s), &us);
        *out = us;
        break;
    default:
        rc = sl__decimal_parse(s, strlen(s), sl_type_precision(d->type),
                               sl_type_scale(d->type), out);
    }
    if (rc < 0)
        return sl_bind_fail(b, SL_EINVAL, "%s=\"%s\" is not a %s (%s)", name, s,
                            sl_type_name(d->type), sl__text_err_str(rc));
    return SL_OK;
}

static int bind_range(sl_bind_t *b, struct val_data *d)
{
    const char *mn, *mx;
    int rc;
    if ((rc = sl_bind_option_str(b, "min", &mn)) < 0 ||
        (rc = sl_bind_option_str(b, "max", &mx)) < 0)
        return rc;
    bool ts = d->type == SL_TYPE_TIMESTAMP, date = d->type == SL_TYPE_DATE32;
    const char *dmin = ts ? "1992-01-01 00:00:00" : date ? "1992-01-01" : "0";
    const char *dmax = ts ? "1998-12-31 23:59:59" : date ? "1998-12-31" : "10000";
    char nines[48] = "0";
    int int_digits = sl_type_precision(d->type) - sl_type_scale(d->type);
    if (!date && !ts && int_digits < 5) { /* 10000 does not fit: the type's largest value */
        int k = 0;
        for (int i = 0; i < int_digits; i++)
            nines[k++] = '9';
        nines[k++] = '.';
        for (int i = 0; i < sl_type_scale(d->type); i++)
            nines[k++] = '9';
        nines[k] = '\0';
        dmax = nines;
    }
    __int128 lo, hi;
    if ((rc = parse_bound(b, d, "min", mn, dmin, &lo)) < 0 ||
        (rc = parse_bound(b, d, "max", mx, dmax, &hi)) < 0)
        return rc;
    if (lo > hi)
        return sl_bind_fail(b, SL_EINVAL, "min is above max");
    d->lo = lo;
    d->span = hi - lo + 1;
    return SL_OK;
}

static int bind_strings(sl_bind_t *b, struct val_data *d)
{
    int rc;
    if ((rc = sl_bind_option_int(b, "cardinality", &d->card)) < 0 ||
        (rc = sl_bind_option_int(b, "min_len", &d->min_len)) < 0 ||
        (rc = sl_bind_option_int(b, "max_len", &d->max_len)) < 0)
        return rc;
    int64_t card_max = d->type == SL_TYPE_DICT ? (1 << 26) : INT64_MAX;
    if (d->card < 1 || d->card > card_max)
        return sl_bind_fail(b, SL_EINVAL, "cardinality must be in [1, %lld], got %lld",
                            (long long)card_max, (long long)d->card);
    if (d->min_len < 0 || d->max_len < d->min_len || d->max_len > 4096)
        return sl_bind_fail(b, SL_EINVAL, "need 0 <= min_len <= max_len <= 4096, got %lld "
                            "and %lld", (long long)d->min_len, (long long)d->max_len);
    for (int64_t k = d->card - 1; k > 0; k /= 36)
        d->digits++;
    if (d->type == SL_TYPE_UTF8 && d->rows > 0 && (d->max_len > d->digits ? d->max_len :
                                                   d->digits) > INT32_MAX / d->rows)
        return sl_bind_fail(b, SL_EINVAL, "a utf8 column of %lld rows of up to %lld bytes may "
                            "pass 2^31 bytes: use type=large_utf8", (long long)d->rows,
                            (long long)d->max_len);
    return SL_OK;
}

static int val_bind(sl_bind_t *b)
{
    struct val_data d;
    memset(&d, 0, sizeof d);
    struct sl__gen_common g;
    int rc = sl__gen_bind_common(b, &g);
    if (rc < 0)
        return rc;
    const char *col = g.column, *type = g.type;
    d.rows = g.rows;
    d.seed = g.seed;
    d.null_rate = g.null_rate;
    if (sl_type_parse(type, &d.type) < 0 ||
        !(sl_type_is_string(d.type) || d.type == SL_TYPE_DATE32 ||
          d.type == SL_TYPE_TIMESTAMP || d.type == SL_TYPE_BOOL ||
          SL_TYPE_ID(d.type) == SL_TYPE_DECIMAL))
        return sl_bind_fail(b, SL_ETYPE, "type must be utf8, large_utf8, dict, date32, "
                            "timestamp, decimal(P,S) or bool (gen.uniform makes numbers), got "
                            "'%s'", type);
    if (sl_type_is_string(d.type))
        rc = bind_strings(b, &d);
    else if (d.type != SL_TYPE_BOOL)
        rc = bind_range(b, &d);
    if (rc < 0)
        return rc;
    struct val_data *p = sl__malloc(sizeof *p);
    if (!p)
        return sl_bind_fail(b, SL_ENOMEM, "out of memory");
    *p = d;
    sl_bind_set_data(b, p, val_free);
    sl_bind_set_rows(b, d.rows);
    return sl_bind_add_column(b, col, d.type);
}

/* ---------------- values ---------------- */

/* String k into buf (at most max(max_len, digits) bytes); returns its length. */
static int64_t make_string(const struct val_data *d, uint64_t k, char *buf)
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    uint64_t h = sl__gen_hash(d->seed, S_LEN, k);
    int64_t len = d->min_len + (int64_t)(h % (uint64_t)(d->max_len - d->min_len + 1));
    if (len < d->digits)
        len = d->digits;
    uint64_t v = k;
    for (int i = 0; i < d->digits; i++, v /= 36)
        buf[i] = letters[v % 36];
    for (int64_t i = d->digits; i < len; i++)
        buf[i] = letters[sl__gen_hash(d->seed ^ k, S_CHAR, (uint64_t)i) % 26];
    return len;
}

static uint64_t pick(const struct val_data *d, uint64_t row)
{
    return sl__gen_hash(d->seed, S_PICK, row) % (uint64_t)d->card;
}

/* A uniform draw in [lo, lo + span) from two hashes (the span may pass 2^64). */
static __int128 draw(const struct val_data *d, uint64_t row)
{
    unsigned __int128 h = (unsigned __int128)sl__gen_hash(d->seed, SL__GEN_S_VALUE, row) << 64 |
                          sl__gen_hash(d->seed, SL__GEN_S_VALUE, row + (1ull << 63));
    return d->lo + (__int128)(h % (unsigned __int128)d->span);
}

static int fill_strings(sl_task_t *t, const struct val_data *d, sl_batch_t *b, uint64_t first,
                        int64_t n)
{
    int64_t maxl = d->max_len > d->digits ? d->max_len : d->digits;
    char *chars = sl_batch_column_chars(b, 0, n * maxl);
    if (!chars && n * maxl > 0)
        return sl_task_fail(t, SL_ENOMEM, "out of memory for %lld string bytes",
                            (long long)(n * maxl));
    void *offs = sl_batch_column_data(b, 0);
    int64_t used = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!sl__gen_is_null(d->seed, d->null_rate, first + (uint64_t)i))
            used += make_string(d, pick(d, first + (uint64_t)i), chars + used);
        if (d->type == SL_TYPE_UTF8)
            ((int32_t *)offs)[i + 1] = (int32_t)used;
        else
            ((int64_t *)offs)[i + 1] = used;
    }
    return sl_batch_column_chars(b, 0, used) || used == 0 ? SL_OK
                                                          : sl_task_fail(t, SL_ENOMEM, "out "
                                                                         "of memory");
}

static void fill_fixed(const struct val_data *d, void *out, uint64_t first, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t row = first + (uint64_t)i;
        switch (SL_TYPE_ID(d->type)) {
        case SL_TYPE_DICT:
            ((int32_t *)out)[i] = (int32_t)pick(d, row);
            break;
        case SL_TYPE_BOOL:
            ((uint8_t *)out)[i] = sl__gen_hash(d->seed, SL__GEN_S_VALUE, row) & 1;
            break;
        case SL_TYPE_DATE32:
            ((int32_t *)out)[i] = (int32_t)draw(d, row);
            break;
        default: { /* timestamps, decimals */
            __int128 v = draw(d, row);
            memcpy((char *)out + i * (int64_t)sl_type_width(d->type), &v,
                   sl_type_width(d->type)); /* little endian: int64 is the low half */
        }
        }
    }
}

/* The dictionary of a dict column: every string, once. */
static int64_t val_tasks(sl_task_t *t)
{
    const struct val_data *d = sl_op_data(sl_task_op(t));
    struct val_global *g = sl_task_gstate(t);
    if (d->type == SL_TYPE_DICT) {
        int64_t maxl = d->max_len > d->digits ? d->max_len : d->digits;
        int32_t *off = sl__malloc((size_t)(d->card + 1) * sizeof *off);
        char *chars = sl__malloc((size_t)(d->card * maxl + 1));
        int64_t used = 0;
        for (int64_t k = 0; off && chars && k < d->card && used <= INT32_MAX - maxl; k++) {
            off[k] = (int32_t)used;
            used += make_string(d, (uint64_t)k, chars + used);
        }
        if (off && chars && used <= INT32_MAX - maxl) {
            off[d->card] = (int32_t)used;
            g->dict = sl__dict_new(d->card, off, chars);
        }
        sl__free(off, (size_t)(d->card + 1) * sizeof *off);
        sl__free(chars, (size_t)(d->card * maxl + 1));
        if (!g->dict)
            return sl_task_fail(t, SL_ENOMEM, "out of memory for a dictionary of %lld strings "
                                "(or more than 2^31 bytes)", (long long)d->card);
    }
    return sl__gen_share_tasks(t, d->rows);
}

static void val_fini_global(const sl_op_t *op, void *gs)
{
    (void)op;
    sl__dict_unref(((struct val_global *)gs)->dict);
}

static int val_source(sl_task_t *t)
{
    const struct val_data *d = sl_op_data(sl_task_op(t));
    struct val_global *g = sl_task_gstate(t);
    int64_t first_row, n;
    sl__gen_morsel(t, d->rows, &first_row, &n);
    uint64_t first = (uint64_t)first_row;
    sl_batch_t *b = sl_task_new_batch(t, sl_op_output_schema(sl_task_op(t)), n);
    if (!b)
        return SL_ENOMEM;
    int rc = SL_OK;
    if (d->type == SL_TYPE_UTF8 || d->type == SL_TYPE_LARGE_UTF8)
        rc = fill_strings(t, d, b, first, n);
    else
        fill_fixed(d, sl__col_values(b, 0), first, n);
    if (rc == SL_OK && d->type == SL_TYPE_DICT) {
        sl__dict_unref(b->cols[0].dict);
        sl__dict_ref(g->dict);
        b->cols[0].dict = g->dict;
    }
    uint8_t *valid = rc == SL_OK && d->null_rate > 0 && n > 0 ? sl_batch_column_validity(b, 0)
                                                            : NULL;
    if (rc == SL_OK && d->null_rate > 0 && n > 0 && !valid)
        rc = sl_task_fail(t, SL_ENOMEM, "out of memory for a validity bitmap");
    for (int64_t i = 0; valid && i < n; i++)
        if (sl__gen_is_null(d->seed, d->null_rate, first + (uint64_t)i))
            valid[i >> 3] &= (uint8_t)~(1u << (i & 7));
    if (rc != SL_OK) {
        sl_batch_unref(b);
        return rc;
    }
    return sl_task_emit(t, b);
}

static const struct sl_impl val_impls[] = {{.device = SL_DEVICE_CPU, .run = val_source}};
static const struct sl_phase val_phase = {val_impls, 1, sl__cost_linear};

const struct sl_op_def sl__gen_values_def = {
    .abi_version = SL_OP_ABI_VERSION,
    .flags = SL_OP_SOURCE,
    .name = "gen.values",
    .doc = "generates strings (chosen cardinality and lengths; utf8 or dict), dates, "
           "timestamps, decimals in a range, or booleans",
    .min_inputs = 0,
    .max_inputs = 0,
    .options = val_options,
    .n_options = sizeof val_options / sizeof val_options[0],
    .bind = val_bind,
    .global_state_bytes = sizeof(struct val_global),
    .fini_global = val_fini_global,
    .source_tasks = val_tasks,
    .source = &val_phase,
    .can_split = sl__split_yes,
};
