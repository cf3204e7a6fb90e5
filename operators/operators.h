/* Internal header of the built-in operators: their definitions and shared helpers. */
#ifndef SLUICE_OPERATORS_H
#define SLUICE_OPERATORS_H

#include "internal.h"

/* The node being bound (for built-ins that read data attached before bind). */
sl_op_t *sl__bind_op(sl_bind_t *b);

/* Rows of morsel `index` when `total` rows are cut into morsels of `morsel` rows. */
static inline int64_t sl__morsel_len(int64_t total, int64_t morsel, int64_t index)
{
    int64_t off = index * morsel;
    int64_t left = total - off;
    return left < morsel ? left : morsel;
}

#endif /* SLUICE_OPERATORS_H */
