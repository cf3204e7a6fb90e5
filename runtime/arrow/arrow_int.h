/* Internal declarations shared by the Arrow interface files (arrow_import.c,
 * arrow_export.c, arrow_stream.c). Never installed. */
#ifndef SLUICE_ARROW_INT_H
#define SLUICE_ARROW_INT_H

#include <stdarg.h>
#include <string.h>

#include "internal.h"

/* Arrow format string of a sluice type; NULL for SL_TYPE_INVALID. The strings are
 * static, so exported schemas point at them without copying. */
static inline const char *sl__arrow_format(enum sl_type type)
{
    switch (type) {
    case SL_TYPE_INT32:
        return "i";
    case SL_TYPE_INT64:
        return "l";
    case SL_TYPE_FLOAT32:
        return "f";
    case SL_TYPE_FLOAT64:
        return "g";
    default:
        return NULL;
    }
}

/* The sluice type of an Arrow format string; SL_TYPE_INVALID when sluice lacks it. */
static inline enum sl_type sl__arrow_type(const char *format)
{
    if (!format || format[0] == '\0' || format[1] != '\0')
        return SL_TYPE_INVALID;
    switch (format[0]) {
    case 'i':
        return SL_TYPE_INT32;
    case 'l':
        return SL_TYPE_INT64;
    case 'f':
        return SL_TYPE_FLOAT32;
    case 'g':
        return SL_TYPE_FLOAT64;
    default:
        return SL_TYPE_INVALID;
    }
}

/* Where imported buffers live and what to wait on before reading them. */
struct sl__arrow_place {
    enum sl__mem_kind kind; /* SL__MEM_FOREIGN (host) or SL__MEM_DEVICE */
    int device;             /* GPU ordinal for SL__MEM_DEVICE, -1 otherwise */
    void *sync_event;       /* cudaEvent_t * to wait on after validation, or NULL */
};

/* Builds the sluice schema an import of `schema` produces: the children of a struct
 * schema ("+s"), or one column named by a primitive schema. Sets *is_struct to say
 * which. Errors go to the thread's last error; `fn` names the public call. */
int sl__arrow_parse_schema(const char *fn, const struct ArrowSchema *schema, bool *is_struct,
                           sl_schema_t **out);

/* Imports `array` described by `schema` (which is only read, never moved). On success
 * *array is moved (its release becomes NULL) and *out holds one reference; on failure
 * nothing is moved and the message is in the thread's last error. `fn` names the
 * public call in messages. */
int sl__arrow_import(const char *fn, struct ArrowArray *array, const struct ArrowSchema *schema,
                     const struct sl__arrow_place *place, sl_batch_t **out);

/* Exports a batch as a struct array. Device-resident columns are refused unless
 * allow_device is set. On failure *out is marked released (release == NULL). */
int sl__arrow_export_array(const char *fn, sl_batch_t *b, struct ArrowArray *out,
                           bool allow_device);
/* Exports a sluice schema as a struct schema; s may be NULL (no columns). On failure
 * *out is marked released. */
int sl__arrow_export_schema(const sl_schema_t *s, struct ArrowSchema *out);

#endif /* SLUICE_ARROW_INT_H */
