/* Internal header of the built-in operators: their definitions and shared helpers. */
#ifndef SLUICE_OPERATORS_H
#define SLUICE_OPERATORS_H

#include "internal.h"

/* The node being bound (for built-ins that read data attached before bind). */
sl_op_t *sl__bind_op(sl_bind_t *b);
/* The table registered under `name` in the plan being bound (borrowed), or NULL. */
sl_table_t *sl__bind_named_table(sl_bind_t *b, const char *name);

/* Rows of morsel `index` when `total` rows are cut into morsels of `morsel` rows. */
static inline int64_t sl__morsel_len(int64_t total, int64_t morsel, int64_t index)
{
    int64_t off = index * morsel;
    int64_t left = total - off;
    return left < morsel ? left : morsel;
}

/* Cost functions (costs.c) from per-row figures of each built-in operator: `linear` for
 * the node's sink or source-only phase, `linear_source` for the phase that emits a
 * pipeline breaker's results. Seconds for `rows`, or -1 for an operator not listed. */
double sl__cost_linear(const sl_op_t *op, enum sl_device_kind kind, int64_t rows);
double sl__cost_linear_source(const sl_op_t *op, enum sl_device_kind kind, int64_t rows);

/* sl_op_def.can_split of nodes that work morsel by morsel the same on any device
 * (sources, streaming operators, host-side collectors): they allow co-processing. */
int sl__split_yes(const sl_op_t *op);

#endif /* SLUICE_OPERATORS_H */
