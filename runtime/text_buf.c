/* sl__text_buf: see text_buf.h. */
#include "text_buf.h"

#include <stdarg.h>
#include <stdio.h>

void sl__text_put(struct sl__text_buf *b, const char *fmt, ...)
{
    for (int tries = 0; tries < 2 && !b->oom; tries++) {
        int n = -1;
        if (b->cap > b->len) {
            va_list ap;
            va_start(ap, fmt);
            n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
            va_end(ap);
            if (n < 0) {
                b->oom = true;
                return;
            }
            if ((size_t)n < b->cap - b->len) {
                b->len += (size_t)n;
                return;
            }
        } else {
            va_list ap;
            va_start(ap, fmt);
            n = vsnprintf(NULL, 0, fmt, ap);
            va_end(ap);
            if (n < 0) {
                b->oom = true;
                return;
            }
        }
        size_t cap = (b->cap + (size_t)n + 1) * 2;
        char *s = sl__realloc(b->s, b->cap, cap);
        if (!s) {
            b->oom = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

char *sl__text_take(struct sl__text_buf *b)
{
    if (b->oom || !b->s) {
        sl__free(b->s, b->cap);
        *b = (struct sl__text_buf){0};
        return NULL;
    }
    char *s = b->s;
    *b = (struct sl__text_buf){0};
    return s;
}
