/* Data: types, columns, batches and tables in the Arrow memory layout.
 *
 * A column holds fixed-width values in one buffer and an optional validity bitmap
 * (bit i set = row i valid, least significant bit first, as in Arrow). A batch is a
 * set of equally long, named columns. A table is an ordered list of batches with one
 * schema; tables are what plans scan and what queries return.
 *
 * Row counts and offsets are int64_t everywhere: there is no 2^31-row limit.
 * Batches and tables are reference counted and immutable once shared; all functions
 * here are thread-safe on distinct objects and the ref/unref calls on any object.
 */
#ifndef SLUICE_DATA_H
#define SLUICE_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Column types, as Arrow has them (docs/TYPES.md says how each is laid out and how it
 * maps onto Arrow). A value of enum sl_type is a type id in its low 8 bits; a decimal
 * carries its precision and scale above them (make one with sl_type_decimal). Compare
 * whole values to compare types; use SL_TYPE_ID(t) in a switch. Types 5 and up were
 * added in 0.3. */
enum sl_type {
    SL_TYPE_INVALID = 0,
    SL_TYPE_INT32 = 1,
    SL_TYPE_INT64 = 2,
    SL_TYPE_FLOAT32 = 3,
    SL_TYPE_FLOAT64 = 4,
    SL_TYPE_BOOL = 5,       /* one byte per value, 0 or 1 (bit-packed only in Arrow) */
    SL_TYPE_INT8 = 6,
    SL_TYPE_INT16 = 7,
    SL_TYPE_UINT8 = 8,
    SL_TYPE_UINT16 = 9,
    SL_TYPE_UINT32 = 10,
    SL_TYPE_UINT64 = 11,
    SL_TYPE_DATE32 = 12,    /* int32 days since 1970-01-01 */
    SL_TYPE_TIMESTAMP = 13, /* int64 microseconds since 1970-01-01 00:00:00, no time zone */
    SL_TYPE_DECIMAL = 14,   /* scaled integer: int64 up to precision 18, else int128 */
    SL_TYPE_UTF8 = 15,      /* int32 offsets (length + 1 of them) in `data`, bytes in `chars` */
    SL_TYPE_LARGE_UTF8 = 16,/* the same with int64 offsets */
    SL_TYPE_DICT = 17       /* int32 codes in `data` into a dictionary of utf8 strings */
};

/* The type id of a type (drops a decimal's precision and scale). */
#define SL_TYPE_ID(t) ((enum sl_type)((unsigned)(t) & 0xffu))
/* Largest decimal precision; decimals up to SL_DECIMAL64_MAX_PRECISION digits are stored
 * as int64, wider ones as int128 (two's complement, little endian, as Arrow's
 * decimal128). */
#define SL_DECIMAL_MAX_PRECISION 38
#define SL_DECIMAL64_MAX_PRECISION 18

/* The decimal type of `precision` (1..38) digits, `scale` (0..precision) of them after
 * the point; SL_TYPE_INVALID if out of range. Added in 0.3. */
SL_API enum sl_type sl_type_decimal(int precision, int scale);
/* A decimal type's precision and scale; 0 for other types. Added in 0.3. */
SL_API int sl_type_precision(enum sl_type type);
SL_API int sl_type_scale(enum sl_type type);
/* True for the string types (UTF8, LARGE_UTF8, DICT). Added in 0.3. */
SL_API int sl_type_is_string(enum sl_type type);
/* Bytes per value of a fixed-width type (DICT: its 4-byte codes); 0 for the variable-
 * width UTF8 and LARGE_UTF8, for SL_TYPE_INVALID and unknown values. */
SL_API size_t sl_type_width(enum sl_type type);
/* The type's name as plan files, schemas and `sluice` print it: "int32", "int64",
 * "float32", "float64", "bool", "int8", "int16", "uint8", "uint16", "uint32", "uint64",
 * "date32", "timestamp", "decimal(P,S)", "utf8", "large_utf8", "dict"; "invalid"
 * otherwise. The returned string is static (decimal names are interned). */
SL_API const char *sl_type_name(enum sl_type type);
/* Parses a type name as printed by sl_type_name (also "string" for utf8, "date" for
 * date32, "boolean" for bool, "decimal(P)" for scale 0); SL_EINVAL if unknown. */
SL_API int sl_type_parse(const char *name, enum sl_type *out);

/* A read-only view of one column of a batch. `data` and `validity` point at the start
 * of the buffers; `offset` (in rows) applies to both, as in Arrow, so value i lives at
 * data[offset + i] and its validity bit at bit (offset + i). The view is valid as
 * long as the batch it came from is referenced. */
struct sl_column {
    enum sl_type type;
    int64_t length;          /* rows */
    int64_t offset;          /* rows to skip in data and validity */
    int64_t null_count;      /* -1 when not yet counted */
    const void *data;        /* values (strings: offsets); may be any alignment if imported */
    const uint8_t *validity; /* NULL when every row is valid */
    const char *name;        /* column name, owned by the batch */
};

/* The string parts of a column (struct sl_column is frozen by the operator ABI, so they
 * come separately). UTF8/LARGE_UTF8: value i of the column is the bytes
 * chars[off[offset+i] .. off[offset+i+1]) where off = the column's data (int32 or int64
 * offsets). DICT: value i is dictionary string c = codes[offset+i], the bytes
 * dict_chars[dict_offsets[c] .. dict_offsets[c+1]), with 0 <= c < dict_length; columns
 * whose dict_offsets are the same pointer share one dictionary. Added in 0.3. */
struct sl_strings {
    const char *chars;
    int64_t dict_length;
    const int32_t *dict_offsets;
    const char *dict_chars;
};

typedef struct sl_batch sl_batch_t;
typedef struct sl_table sl_table_t;

/* --- batches --- */

/* Creates a batch of n_rows rows with the given column names and types; values are
 * allocated (64-byte aligned) and uninitialized, with no validity bitmaps. Fill them
 * through sl_batch_column_data before sharing the batch. String columns get their
 * offsets (n_rows + 1, all 0) and no bytes (sl_batch_column_chars); DICT columns an
 * empty dictionary (sl_batch_column_set_dictionary). The caller owns one reference.
 * Errors: SL_EINVAL (bad type, negative rows, NULL names), SL_ENOMEM. */
SL_API int sl_batch_create(sl_batch_t **out, int n_cols, const char *const names[],
                           const enum sl_type types[], int64_t n_rows);
SL_API void sl_batch_ref(sl_batch_t *b);
/* Drops one reference; the batch and its buffers are freed with the last one. NULL ok. */
SL_API void sl_batch_unref(sl_batch_t *b);
SL_API int sl_batch_num_columns(const sl_batch_t *b);
SL_API int64_t sl_batch_num_rows(const sl_batch_t *b);
/* Where the batch's values live: a GPU ordinal, or -1 for host memory (also for a batch
 * without columns). Added in 0.2. */
SL_API int sl_batch_device(const sl_batch_t *b);
/* Fills *col with a view of column i. SL_EINVAL if i is out of range. */
SL_API int sl_batch_column(const sl_batch_t *b, int i, struct sl_column *col);
/* Fills *out with the string parts of column i (all NULL/0 for a non-string column).
 * Valid as long as the batch is referenced. SL_EINVAL if i is out of range. Added in 0.3. */
SL_API int sl_batch_column_strings(const sl_batch_t *b, int i, struct sl_strings *out);
/* Index of the column named `name`, or SL_ENOTFOUND. */
SL_API int sl_batch_column_index(const sl_batch_t *b, const char *name);
/* Writable values of column i of a batch made by sl_batch_create and not yet shared
 * (its reference count is 1); NULL otherwise. */
SL_API void *sl_batch_column_data(sl_batch_t *b, int i);
/* The bytes of string column i (UTF8 or LARGE_UTF8) of an unshared batch made by
 * sl_batch_create, (re)allocated to `bytes` bytes (contents kept up to the smaller
 * size) and returned for writing; its offsets are sl_batch_column_data (length + 1
 * entries, the first 0, set by sl_batch_create to all 0). NULL on failure or for another
 * type. Added in 0.3. */
SL_API char *sl_batch_column_chars(sl_batch_t *b, int i, int64_t bytes);
/* Gives DICT column i of an unshared batch its dictionary: `n` utf8 strings given as
 * n + 1 int32 offsets into `chars` (copied; the batch does not keep the pointers).
 * Dictionaries are shared between batches by sl_batch_share_dictionary instead.
 * SL_EINVAL (not a DICT column, bad offsets), SL_ENOMEM. Added in 0.3. */
SL_API int sl_batch_column_set_dictionary(sl_batch_t *b, int i, int64_t n,
                                          const int32_t *offsets, const char *chars);
/* Makes DICT column i of unshared batch `b` use the dictionary of DICT column j of
 * batch `from` (shared, not copied), so codes of both compare as equal strings.
 * Added in 0.3. */
SL_API int sl_batch_share_dictionary(sl_batch_t *b, int i, const sl_batch_t *from, int j);
/* Adds an all-valid validity bitmap to column i (same preconditions) and returns it
 * for writing; NULL on failure. */
SL_API uint8_t *sl_batch_column_validity(sl_batch_t *b, int i);
/* Writes value `row` of column `col` as sluice prints it into buf (at most len bytes
 * with the terminating NUL; len 0 only measures): integers in decimal, floats with %.9g
 * (float32) or %.17g (float64), bool as true/false, date32 as YYYY-MM-DD, timestamps as
 * YYYY-MM-DD HH:MM:SS[.ffffff], decimals exactly with their scale ("-12.50"), strings
 * as their bytes (unescaped). A null writes "" and sets *is_null (may be NULL).
 * Returns the text's full length, as snprintf does (a result >= len means it was cut),
 * or SL_EINVAL (bad batch, column or row). Host batches only. Thread-safe. Added in
 * 0.3. */
SL_API int64_t sl_batch_value_format(const sl_batch_t *b, int col, int64_t row, char *buf,
                                     size_t len, int *is_null);

/* --- tables --- */

/* Creates an empty table. The caller owns one reference. */
SL_API int sl_table_create(sl_table_t **out);
SL_API void sl_table_ref(sl_table_t *t);
SL_API void sl_table_unref(sl_table_t *t);
/* Appends a batch (the table takes its own reference). The first batch sets the
 * schema; later batches must match it in names and types (SL_ETYPE otherwise). */
SL_API int sl_table_append(sl_table_t *t, sl_batch_t *b);
/* Page-locks the table's host buffers once (cudaHostRegister), so that GPU tasks copy
 * them directly and asynchronously instead of staging them; undone when the buffers
 * are freed. Runs of small batches (under 2^20 rows: a reader's are 122,880) are first
 * combined into batches of up to 2^23 rows in new host memory, and each DICT column
 * gets one dictionary for the table, so that a GPU task moves millions of rows at once:
 * pointers to the old batches (sl_table_batch) no longer name the table's then. Integer,
 * date, timestamp, decimal(p <= 18) and dict columns also get a pinned narrow copy (their
 * values as 1- to 4-byte offsets from the batch's minimum, when that is narrower),
 * which GPU uploads move and widen on the GPU (docs/TPCH.md, "Narrow uploads"). Pinning
 * is slow (about as slow as a copy) and limited by the machine: pin tables that GPUs
 * read more than once, before queries read them. SL_EUNSUPPORTED without CUDA or a
 * driver; the table is still usable then. Added in 0.1 (combining: 0.3). */
SL_API int sl_table_pin(sl_table_t *t);
/* Copies the table into the memory of GPU `gpu` of engine `eng` (its device pool, so
 * the engine's GPU budget applies) and returns the copy as a new table of device
 * batches (*out, owned by the caller), for plans whose inputs already live on a GPU
 * ("GPU-resident" data; an embedder's own device arrays come in through
 * sl_batch_import_device_arrow instead). The copy is complete when the call returns.
 * SL_ENODEV without that GPU; SL_EBUDGET over the budget. Added in 0.2. */
struct sl_engine;
SL_API int sl_table_to_device(struct sl_engine *eng, sl_table_t *t, int gpu, sl_table_t **out);
/* A copy of table `t` in host memory (*out, owned by the caller); batches already in
 * host memory are shared, device batches are copied back (waits). Added in 0.2. */
SL_API int sl_table_to_host(sl_table_t *t, sl_table_t **out);
SL_API int64_t sl_table_num_batches(const sl_table_t *t);
SL_API int64_t sl_table_num_rows(const sl_table_t *t);
/* Borrowed pointer to batch i, valid while the table is referenced. */
SL_API sl_batch_t *sl_table_batch(const sl_table_t *t, int64_t i);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_DATA_H */
