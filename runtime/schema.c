/* Schemas and types. */
#include <string.h>

#include "internal.h"

size_t sl_type_width(enum sl_type type)
{
    switch (type) {
    case SL_TYPE_INT32:
    case SL_TYPE_FLOAT32:
        return 4;
    case SL_TYPE_INT64:
    case SL_TYPE_FLOAT64:
        return 8;
    default:
        return 0;
    }
}

static const char *const type_names[] = {"invalid", "int32", "int64", "float32", "float64"};

const char *sl_type_name(enum sl_type type)
{
    if ((unsigned)type < sizeof type_names / sizeof type_names[0])
        return type_names[type];
    return "invalid";
}

int sl_type_parse(const char *name, enum sl_type *out)
{
    for (unsigned i = 1; name && i < sizeof type_names / sizeof type_names[0]; i++) {
        if (strcmp(name, type_names[i]) == 0) {
            *out = (enum sl_type)i;
            return SL_OK;
        }
    }
    return sl__set_last_error(SL_EINVAL, "unknown type '%s' (expected int32, int64, float32 "
                              "or float64)", name ? name : "(null)");
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
