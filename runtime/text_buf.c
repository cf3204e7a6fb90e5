/* sl__text_buf: see text_buf.h. */
#include "text_buf.h"

#include <stdarg.h>
#include <stdio.h>

void sl__text_put(struct sl__text_buf *b, const char *fmt, ...)
{
    /* The first try writes what fits (with no buffer yet, only measures); when it did not
     * fit, the buffer grows past what the text needs and the second try writes it. */
    for (int tries = 0; tries < 2 && !b->oom; tries++) {
        size_t room = b->cap - b->len;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(room ? b->s + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = true;
            return;
        }
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
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
    char *s = b->oom ? NULL : b->s;
    if (!s)
        sl__free(b->s, b->cap);
    *b = (struct sl__text_buf){0};
    return s;
}
