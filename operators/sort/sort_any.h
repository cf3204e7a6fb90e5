/* Row order by a sort specification over columns of any type (sort_any.c), for
 * sort.topk's heap. */
#ifndef SLUICE_OPERATORS_SORT_ANY_H
#define SLUICE_OPERATORS_SORT_ANY_H

#include "../common/values.h"
#include "sort_spec.h"

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

#endif /* SLUICE_OPERATORS_SORT_ANY_H */
