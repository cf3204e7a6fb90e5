/* The sort of rows of every column type (sort_any.c): row order by a sort specification
 * for sort.topk's heap, and the whole sort for types the radix sort does not read. */
#ifndef SLUICE_OPERATORS_SORT_ANY_H
#define SLUICE_OPERATORS_SORT_ANY_H

#include "common/values.h"
#include "common/sort_spec.h"

/* The key columns of one batch, ready to compare its rows. */
struct sl__sort_rows_cmp {
    const struct sl__sort_spec *spec;
    struct sl__colview v[SL__SORT_MAX_KEYS];
};

/* Views of batch b's key columns; SL_EINVAL if a key column is missing. */
int sl__sort_rows_cmp_init(struct sl__sort_rows_cmp *c, const sl_batch_t *b,
                           const struct sl__sort_spec *spec);

/* Order of rows a and b by the spec: -1, 0 or 1. Nulls go first or last per key as the
 * spec says, whatever the direction; NaN is the largest float, equal to itself. */
int sl__sort_rows_compare(const struct sl__sort_rows_cmp *c, int64_t a, int64_t b);

/* Whether every column of the schema is one the CPU radix sort (and the GPU's out-of-core
 * sort) reads: int32, int64, float32, float64, and date32, timestamp and decimals of
 * precision <= 18 as their integers. Other types take sl__sort_any on the CPU. */
bool sl__sort_radix_types(const sl_schema_t *schema);

/* *rank[i] for rows (or dictionary entries) i of string column v: equal strings equal
 * ranks, ranks in byte order, as this sort orders them; a DICT column (whose codes may
 * lie anywhere, e.g. on a GPU) the ranks of its dictionary's *n entries, read on the
 * host. The caller frees *rank with sl__free(*rank, 0). Errors: SL_ENOMEM. */
int sl__sort_string_ranks(const struct sl__colview *v, uint64_t **rank, int64_t *n);

/* Sorts the rows of host batches[0..n) (one schema, in input order) stably by spec into
 * *out (a new batch, the caller's reference), every column type carried along. Errors:
 * SL_ENOMEM, SL_EINVAL. */
int sl__sort_any(sl_batch_t *const *batches, int64_t n, const struct sl__sort_spec *spec,
                 sl_batch_t **out);

#endif /* SLUICE_OPERATORS_SORT_ANY_H */
