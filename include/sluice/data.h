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

enum sl_type {
    SL_TYPE_INVALID = 0,
    SL_TYPE_INT32 = 1,
    SL_TYPE_INT64 = 2,
    SL_TYPE_FLOAT32 = 3,
    SL_TYPE_FLOAT64 = 4
};

/* Bytes per value of a type; 0 for SL_TYPE_INVALID or unknown values. */
SL_API size_t sl_type_width(enum sl_type type);
/* "int32", "int64", "float32", "float64"; "invalid" otherwise. */
SL_API const char *sl_type_name(enum sl_type type);
/* Parses a type name as printed by sl_type_name; SL_EINVAL if unknown. */
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
    const void *data;        /* values; may be any alignment for imported data */
    const uint8_t *validity; /* NULL when every row is valid */
    const char *name;        /* column name, owned by the batch */
};

typedef struct sl_batch sl_batch_t;
typedef struct sl_table sl_table_t;

/* --- batches --- */

/* Creates a batch of n_rows rows with the given column names and types; values are
 * allocated (64-byte aligned) and uninitialized, with no validity bitmaps. Fill them
 * through sl_batch_column_data before sharing the batch. The caller owns one
 * reference. Errors: SL_EINVAL (bad type, negative rows, NULL names), SL_ENOMEM. */
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
/* Index of the column named `name`, or SL_ENOTFOUND. */
SL_API int sl_batch_column_index(const sl_batch_t *b, const char *name);
/* Writable values of column i of a batch made by sl_batch_create and not yet shared
 * (its reference count is 1); NULL otherwise. */
SL_API void *sl_batch_column_data(sl_batch_t *b, int i);
/* Adds an all-valid validity bitmap to column i (same preconditions) and returns it
 * for writing; NULL on failure. */
SL_API uint8_t *sl_batch_column_validity(sl_batch_t *b, int i);

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
 * are freed. Pinning is slow (about as slow as a copy) and limited by the machine:
 * pin tables that GPUs read more than once. SL_EUNSUPPORTED without CUDA or a driver;
 * the table is still usable then. Added in 0.1. */
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
