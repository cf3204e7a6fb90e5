/* A growing text buffer for the JSON the engine writes (the query profile, explain as
 * JSON): appends never write past the buffer, whatever the lengths of names and numbers. */
#ifndef SLUICE_TEXT_BUF_H
#define SLUICE_TEXT_BUF_H

#include <stdbool.h>
#include <stddef.h>

#include "internal.h"

struct sl__text_buf {
    char *s;           /* NUL-terminated once anything was appended; sl__malloc'd */
    size_t len, cap;
    bool oom;          /* an append found no memory (or an encoding error): s is partial */
};

/* Appends printf-style text, growing the buffer; on failure sets b->oom, later appends
 * do nothing. */
void sl__text_put(struct sl__text_buf *b, const char *fmt, ...) SL__PRINTF(2, 3);

/* The text, owned by the caller (free with sl__free), or NULL (and the buffer freed) when
 * an append failed. */
char *sl__text_take(struct sl__text_buf *b);

#endif
