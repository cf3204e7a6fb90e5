/* Internal declarations shared by the Arrow interface files (arrow_import.c,
 * arrow_export.c, arrow_stream.c). Never installed. */
#ifndef SLUICE_ARROW_INT_H
#define SLUICE_ARROW_INT_H

#include <stdarg.h>
#include <string.h>

#include "internal.h"

/* How an Arrow field arrives in sluice (arrow_types.c). */
enum sl__arrow_conv {
    SL__ARROW_SHARE,     /* fixed-width values, same layout: zero-copy */
    SL__ARROW_BOOL_BITS, /* bit-packed booleans -> one byte per value */
    SL__ARROW_DEC_NARROW, /* decimal128 of precision <= 18 -> int64 */
    SL__ARROW_TS_SCALE,  /* timestamp in s, ms or ns -> microseconds */
    SL__ARROW_STRINGS,   /* utf8 / large_utf8: offsets and bytes, zero-copy */
    SL__ARROW_DICT       /* dictionary-encoded utf8 / large_utf8 -> DICT */
};

struct sl__arrow_field {
    enum sl_type type;          /* the sluice type */
    enum sl__arrow_conv conv;
    int64_t ts_mul, ts_div;     /* TS_SCALE: us = v * ts_mul / ts_div */
    int index_width;            /* DICT: bytes per index (1, 2, 4, 8) */
    bool index_signed;          /* DICT */
    bool large_values;          /* DICT: the dictionary is large_utf8 ('U') */
};

/* Reads the Arrow field `f` (column `i`; its format, dictionary, children) into *out.
 * SL_EUNSUPPORTED with a message naming the column and its format when sluice lacks
 * the type; SL_EFORMAT when the schema is malformed. */
int sl__arrow_field_parse(const char *fn, const struct ArrowSchema *f, int64_t i,
                          struct sl__arrow_field *out);

/* Arrow format string of a sluice type, written into buf (decimals need one);
 * NULL for an invalid type. DICT gives its index format "i". */
const char *sl__arrow_format(enum sl_type type, char buf[32]);

/* ---------------- conversions at the boundary (arrow_convert.c) ---------------- */

static inline bool sl__bit(const uint8_t *bits, int64_t i)
{
    return (bits[i >> 3] >> (i & 7)) & 1;
}
/* Zero bits (nulls) among bits [off, off + n). */
int64_t sl__bit_count_zeros(const uint8_t *bits, int64_t off, int64_t n);
/* Bits [off, off + n) of `bits` copied to a new buffer starting at bit 0. */
struct sl__buf *sl__bits_copy(const uint8_t *bits, int64_t off, int64_t n);
/* Bits [off, off + n) as bytes 0/1 in a new buffer. */
struct sl__buf *sl__bits_to_bytes(const uint8_t *bits, int64_t off, int64_t n);
/* Bytes (nonzero = true) packed into a new bitmap of n bits. */
struct sl__buf *sl__bytes_to_bits(const uint8_t *bytes, int64_t n);
/* decimal128 values (16 bytes, little endian, any alignment) of `precision` <= 18
 * digits narrowed to int64. Rows that are valid (validity NULL: all, bit voff + i) must
 * have at most `precision` digits; *bad gets the first row that does not, and the call
 * returns false. */
bool sl__dec128_narrow(const uint8_t *src, int64_t n, int precision, const uint8_t *validity,
                       int64_t voff, int64_t *dst, int64_t *bad);
/* int64 values widened to decimal128 (16 bytes each). */
void sl__dec64_widen(const int64_t *src, int64_t n, uint8_t *dst);
/* Timestamps v * mul / div (exact: a valid value that overflows or does not divide sets
 * *bad and returns false). */
bool sl__ts_scale(const uint8_t *src, int64_t n, const uint8_t *validity, int64_t voff,
                  int64_t mul, int64_t div, int64_t *dst, int64_t *bad);
/* Dictionary indexes of `width` bytes to int32 codes; a valid index must lie in
 * [0, dict_n) (*bad gets the first row that does not); null rows get code 0. dst may
 * be NULL to only check. */
bool sl__codes_to_i32(const uint8_t *src, int width, bool is_signed, int64_t n,
                      const uint8_t *validity, int64_t voff, int64_t dict_n, int32_t *dst,
                      int64_t *bad);
/* Checks n + 1 string offsets (int32 or int64, any alignment) starting at entry `first`:
 * non-negative and never decreasing. *last gets the final one; *bad the first entry
 * that breaks the rule. */
bool sl__offsets_check(const uint8_t *offsets, bool large, int64_t first, int64_t n,
                       int64_t *last, int64_t *bad);

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
/* The dictionaries of the previous batch of a stream, one per column, so that a batch
 * whose dictionary has the same strings shares it instead of holding a copy. */
struct sl__arrow_dicts {
    int n;
    struct sl__dict **dicts;
};
void sl__arrow_dicts_free(struct sl__arrow_dicts *d);

int sl__arrow_import(const char *fn, struct ArrowArray *array, const struct ArrowSchema *schema,
                     const struct sl__arrow_place *place, struct sl__arrow_dicts *dicts,
                     sl_batch_t **out);

/* Exports a batch as a struct array. Device-resident columns are refused unless
 * allow_device is set. On failure *out is marked released (release == NULL). */
int sl__arrow_export_array(const char *fn, sl_batch_t *b, struct ArrowArray *out,
                           bool allow_device);
/* Exports a sluice schema as a struct schema; s may be NULL (no columns). On failure
 * *out is marked released. */
int sl__arrow_export_schema(const sl_schema_t *s, struct ArrowSchema *out);

#endif /* SLUICE_ARROW_INT_H */
