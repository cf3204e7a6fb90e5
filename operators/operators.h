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

/* This rank's share [*lo, *hi) of a table's `rows` when a plan runs on several ranks
 * (options rank and ranks; docs/DISTRIBUTED.md): rank r of R holds rows
 * [rows * r / R, rows * (r + 1) / R), so the shares together are the whole table. */
static inline void sl__rank_share(const sl_task_t *t, int64_t rows, int64_t *lo, int64_t *hi)
{
    int64_t rank = 0, ranks = 1;
    sl_task_option_int(t, "rank", &rank);
    sl_task_option_int(t, "ranks", &ranks);
    if (ranks < 1 || rank < 0 || rank >= ranks)
        rank = 0, ranks = 1;
    *lo = (int64_t)((__int128)rows * rank / ranks);
    *hi = (int64_t)((__int128)rows * (rank + 1) / ranks);
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
