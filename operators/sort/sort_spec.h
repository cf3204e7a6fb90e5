/* Sort specifications ("a DESC NULLS FIRST, b") and the sort of rows of every column
 * type (sort_any.c), apart from sort_int.h so that code using operators/common/values.h
 * can include them (both headers define a struct sl__colview). */
#ifndef SLUICE_OPERATORS_SORT_SPEC_H
#define SLUICE_OPERATORS_SORT_SPEC_H

#include "operators.h"

/* A k64 sort item (sort_int.h): a 64-bit code and a row index. */
struct sl__kv64 {
    uint64_t key;
    uint64_t idx;
};

/* Plain single-threaded stable LSD radix sort of n items by code (`tmp` as large as
 * `a`; radix_sort.c); skips digits where every item falls in one bucket. Returns a or
 * tmp, whichever holds the result. */
struct sl__kv64 *sl__rsort_k64(struct sl__kv64 *a, struct sl__kv64 *tmp, int64_t n);

/* ---------------- sort specifications ("a DESC NULLS FIRST, b") ---------------- */

#define SL__SORT_MAX_KEYS 16

struct sl__sort_key {
    int col;          /* input column */
    int desc;         /* 1 = descending */
    int nulls_first;  /* default: last for ASC, first for DESC (nulls compare as largest) */
};

struct sl__sort_spec {
    int n_keys;
    struct sl__sort_key keys[SL__SORT_MAX_KEYS];
};

/* Parses `text` against `schema`; on error records it with sl_bind_fail. */
int sl__sort_spec_parse(sl_bind_t *b, const sl_schema_t *schema, const char *text,
                        struct sl__sort_spec *out);

/* Whether every column of the schema is one the radix sort reads: int32, int64, float32,
 * float64 on the GPU (gpu = 1); on the CPU (gpu = 0) also date32, timestamp and decimals
 * of precision <= 18 (as their integers). Other types take sl__sort_any. */
bool sl__sort_radix_types(const sl_schema_t *schema, int gpu);

/* Sorts the rows of host batches[0..n) (one schema, in input order) stably by spec into
 * *out (a new batch, the caller's reference), every column type carried along. Errors:
 * SL_ENOMEM, SL_EINVAL. */
int sl__sort_any(sl_batch_t *const *batches, int64_t n, const struct sl__sort_spec *spec,
                 sl_batch_t **out);

#endif /* SLUICE_OPERATORS_SORT_SPEC_H */
