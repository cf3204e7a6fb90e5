/* Schemas and types. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

enum sl_type sl_type_decimal(int precision, int scale)
{
    if (precision < 1 || precision > SL_DECIMAL_MAX_PRECISION || scale < 0 || scale > precision)
        return SL_TYPE_INVALID;
    return (enum sl_type)((unsigned)SL_TYPE_DECIMAL | (unsigned)precision << 8 |
                          (unsigned)scale << 16);
}

/* A type value is valid when its id is known and only a well-formed decimal carries
 * bits above the id. */
static bool type_valid(enum sl_type type)
{
    unsigned id = SL_TYPE_ID(type);
    if (id == SL_TYPE_DECIMAL) {
        unsigned p = ((unsigned)type >> 8) & 0xffu, sc = ((unsigned)type >> 16) & 0xffu;
        return ((unsigned)type >> 24) == 0 && p >= 1 && p <= SL_DECIMAL_MAX_PRECISION &&
               sc <= p;
    }
    return id >= SL_TYPE_INT32 && id <= SL_TYPE_DICT && (unsigned)type == id;
}

int sl_type_precision(enum sl_type type)
{
    return type_valid(type) && SL_TYPE_ID(type) == SL_TYPE_DECIMAL
               ? (int)(((unsigned)type >> 8) & 0xffu) : 0;
}

int sl_type_scale(enum sl_type type)
{
    return type_valid(type) && SL_TYPE_ID(type) == SL_TYPE_DECIMAL
               ? (int)(((unsigned)type >> 16) & 0xffu) : 0;
}

int sl_type_is_string(enum sl_type type)
{
    return type == SL_TYPE_UTF8 || type == SL_TYPE_LARGE_UTF8 || type == SL_TYPE_DICT;
}

size_t sl_type_width(enum sl_type type)
{
    /* UTF8, LARGE_UTF8: variable width (sl__col_value_width gives their offsets') */
    if (!type_valid(type) || type == SL_TYPE_UTF8 || type == SL_TYPE_LARGE_UTF8)
        return 0;
    return sl__col_value_width(type);
}

bool sl__type_valid(enum sl_type type)
{
    return type_valid(type);
}

static const char *const type_names[] = {
    "invalid", "int32",  "int64",  "float32", "float64",   "bool",
    "int8",    "int16",  "uint8",  "uint16",  "uint32",    "uint64",
    "date32",  "timestamp", "decimal", "utf8", "large_utf8", "dict"};

/* Interned "decimal(P,S)" names: one static string per precision and scale. */
static char decimal_names[SL_DECIMAL_MAX_PRECISION + 1][SL_DECIMAL_MAX_PRECISION + 1][16];
static pthread_once_t decimal_names_once = PTHREAD_ONCE_INIT;

static void make_decimal_names(void)
{
    for (int p = 1; p <= SL_DECIMAL_MAX_PRECISION; p++)
        for (int sc = 0; sc <= p; sc++)
            snprintf(decimal_names[p][sc], sizeof decimal_names[p][sc], "decimal(%d,%d)", p,
                     sc);
}

const char *sl_type_name(enum sl_type type)
{
    if (!type_valid(type))
        return "invalid";
    if (SL_TYPE_ID(type) == SL_TYPE_DECIMAL) {
        pthread_once(&decimal_names_once, make_decimal_names);
        return decimal_names[sl_type_precision(type)][sl_type_scale(type)];
    }
    return type_names[SL_TYPE_ID(type)];
}

static const struct {
    const char *name;
    enum sl_type type;
} type_aliases[] = {{"string", SL_TYPE_UTF8},   {"date", SL_TYPE_DATE32},
                    {"boolean", SL_TYPE_BOOL},  {"large_string", SL_TYPE_LARGE_UTF8},
                    {"timestamp[us]", SL_TYPE_TIMESTAMP}};

/* "decimal(P,S)" or "decimal(P)"; spaces allowed after the commas. */
static bool parse_decimal(const char *name, enum sl_type *out)
{
    int p = 0, sc = 0, n = 0;
    if (sscanf(name, "decimal(%d ,%d)%n", &p, &sc, &n) == 2 && name[n] == '\0') {
        *out = sl_type_decimal(p, sc);
        return *out != SL_TYPE_INVALID;
    }
    n = 0;
    if (sscanf(name, "decimal(%d)%n", &p, &n) == 1 && name[n] == '\0') {
        *out = sl_type_decimal(p, 0);
        return *out != SL_TYPE_INVALID;
    }
    return false;
}

int sl_type_parse(const char *name, enum sl_type *out)
{
    if (!out)
        return sl__set_last_error(SL_EINVAL, "sl_type_parse: NULL out");
    for (unsigned i = 1; name && i < sizeof type_names / sizeof type_names[0]; i++) {
        if (i != SL_TYPE_DECIMAL && strcmp(name, type_names[i]) == 0) {
            *out = (enum sl_type)i;
            return SL_OK;
        }
    }
    for (unsigned i = 0; name && i < sizeof type_aliases / sizeof type_aliases[0]; i++) {
        if (strcmp(name, type_aliases[i].name) == 0) {
            *out = type_aliases[i].type;
            return SL_OK;
        }
    }
    if (name && strncmp(name, "decimal(", 8) == 0 && parse_decimal(name, out))
        return SL_OK;
    return sl__set_last_error(SL_EINVAL, "unknown type '%s' (expected one of int8, int16, "
                              "int32, int64, uint8..uint64, float32, float64, bool, date32, "
                              "timestamp, decimal(P,S) with 1 <= P <= 38, utf8, large_utf8, "
                              "dict)", name ? name : "(null)");
}

sl_schema_t *sl__schema_new(int n_fields)
{
    sl_schema_t *s = sl__calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->n_fields = n_fields;
    if (n_fields > 0) {
        s->fields = sl__calloc((size_t)n_fields, sizeof *s->fields);
        if (!s->fields) {
            sl__free(s, sizeof *s);
            return NULL;
        }
    }
    return s;
}

void sl__schema_free(sl_schema_t *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n_fields; i++)
        sl__free_str(s->fields[i].name);
    sl__free(s->fields, 0);
    sl__free(s, sizeof *s);
}

int sl__schema_set(sl_schema_t *s, int i, const char *name, enum sl_type type)
{
    char *n = sl__strdup(name ? name : "");
    if (!n)
        return SL_ENOMEM;
    sl__free_str(s->fields[i].name);
    s->fields[i].name = n;
    s->fields[i].type = type;
    return SL_OK;
}

sl_schema_t *sl__schema_copy(const sl_schema_t *src)
{
    sl_schema_t *s = sl__schema_new(src->n_fields);
    if (!s)
        return NULL;
    for (int i = 0; i < src->n_fields; i++) {
        if (sl__schema_set(s, i, src->fields[i].name, src->fields[i].type) != SL_OK) {
            sl__schema_free(s);
            return NULL;
        }
    }
    return s;
}

bool sl__schema_equal(const sl_schema_t *a, const sl_schema_t *b)
{
    if (a->n_fields != b->n_fields)
        return false;
    for (int i = 0; i < a->n_fields; i++) {
        if (a->fields[i].type != b->fields[i].type ||
            strcmp(a->fields[i].name, b->fields[i].name) != 0)
            return false;
    }
    return true;
}

int sl_schema_num_fields(const sl_schema_t *s)
{
    return s ? s->n_fields : 0;
}

int sl_schema_field(const sl_schema_t *s, int i, const char **name, enum sl_type *type)
{
    if (!s || i < 0 || i >= s->n_fields)
        return sl__set_last_error(SL_EINVAL, "field index %d out of range", i);
    if (name)
        *name = s->fields[i].name;
    if (type)
        *type = s->fields[i].type;
    return SL_OK;
}

int sl_schema_find(const sl_schema_t *s, const char *name)
{
    for (int i = 0; s && name && i < s->n_fields; i++) {
        if (strcmp(s->fields[i].name, name) == 0)
            return i;
    }
    return SL_ENOTFOUND;
}

int64_t sl__schema_row_bytes(const sl_schema_t *s)
{
    int64_t w = 0;
    for (int i = 0; s && i < s->n_fields; i++) {
        enum sl_type t = s->fields[i].type;
        if (t == SL_TYPE_UTF8 || t == SL_TYPE_LARGE_UTF8)
            w += (t == SL_TYPE_UTF8 ? 4 : 8) + SL__STRING_BYTES_GUESS;
        else
            w += (int64_t)sl_type_width(t);
    }
    return w;
}
