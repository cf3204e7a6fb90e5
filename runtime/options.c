/* Option lists: "key=value" pairs as written in C calls and plan files. */
#include <stdio.h>
#include <string.h>

#include "plan_int.h"

static int is_sep(char c)
{
    return c == ' ' || c == ',' || c == '\t' || c == '\n' || c == '\r';
}

static int is_key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '-';
}

static int push(struct sl__opts *o, char *key, char *value)
{
    struct sl__opt *nv = sl__realloc(o->items, (size_t)o->n * sizeof *nv,
                                     (size_t)(o->n + 1) * sizeof *nv);
    if (!nv)
        return SL_ENOMEM;
    o->items = nv;
    o->items[o->n].key = key;
    o->items[o->n].value = value;
    o->n++;
    return SL_OK;
}

static char *dup_range(const char *s, size_t n)
{
    char *d = sl__malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

int sl__opts_parse(const char *text, struct sl__opts *out, char *err, size_t err_len)
{
    out->n = 0;
    out->items = NULL;
    if (!text)
        return SL_OK;
    const char *p = text;
    for (;;) {
        while (is_sep(*p))
            p++;
        if (!*p)
            return SL_OK;
        const char *k = p;
        while (is_key_char(*p))
            p++;
        if (p == k || *p != '=') {
            snprintf(err, err_len, "expected key=value at position %d of options \"%s\"",
                     (int)(k - text) + 1, text);
            sl__opts_free(out);
            return SL_EINVAL;
        }
        size_t klen = (size_t)(p - k);
        p++; /* '=' */
        char *value;
        if (*p == '"') {
            p++;
            size_t cap = strlen(p) + 1, n = 0;
            value = sl__malloc(cap);
            if (!value)
                goto nomem;
            while (*p && *p != '"') {
                if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
                    p++;
                value[n++] = *p++;
            }
            if (*p != '"') {
                snprintf(err, err_len, "unterminated quote in options \"%s\"", text);
                sl__free(value, 0);
                sl__opts_free(out);
                return SL_EINVAL;
            }
            p++;
            value[n] = 0;
        } else {
            const char *v = p;
            while (*p && !is_sep(*p))
                p++;
            value = dup_range(v, (size_t)(p - v));
            if (!value)
                goto nomem;
        }
        char *key = dup_range(k, klen);
        if (!key) {
            sl__free(value, 0);
            goto nomem;
        }
        if (sl__opts_get(out, key)) {
            snprintf(err, err_len, "option '%s' given twice", key);
            sl__free(key, 0);
            sl__free(value, 0);
            sl__opts_free(out);
            return SL_EINVAL;
        }
        if (push(out, key, value) != SL_OK) {
            sl__free(key, 0);
            sl__free(value, 0);
            goto nomem;
        }
    }
nomem:
    snprintf(err, err_len, "out of memory parsing options");
    sl__opts_free(out);
    return SL_ENOMEM;
}

void sl__opts_free(struct sl__opts *o)
{
    for (int i = 0; i < o->n; i++) {
        sl__free(o->items[i].key, 0);
        sl__free(o->items[i].value, 0);
    }
    sl__free(o->items, 0);
    o->items = NULL;
    o->n = 0;
}

const char *sl__opts_get(const struct sl__opts *o, const char *key)
{
    for (int i = 0; i < o->n; i++) {
        if (strcmp(o->items[i].key, key) == 0)
            return o->items[i].value;
    }
    return NULL;
}

int sl__opts_put(struct sl__opts *o, const char *key, const char *value)
{
    char *v = dup_range(value, strlen(value));
    if (!v)
        return sl__set_last_error(SL_ENOMEM, "out of memory keeping option %s", key);
    for (int i = 0; i < o->n; i++) {
        if (strcmp(o->items[i].key, key) == 0) {
            sl__free(o->items[i].value, 0);
            o->items[i].value = v;
            return SL_OK;
        }
    }
    char *k = dup_range(key, strlen(key));
    if (!k || push(o, k, v) != SL_OK) {
        sl__free(k, 0);
        sl__free(v, 0);
        return sl__set_last_error(SL_ENOMEM, "out of memory keeping option %s", key);
    }
    return SL_OK;
}
