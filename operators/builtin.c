/* The table of built-in operators that the runtime's registry registers (internal.h,
 * sl__builtin_ops). They use the same operator ABI and registry call as plugins do. The
 * list comes from each operator folder's meson.build (builtin_ops). */
#include "builtin_list.h"
#include "operators.h"

#define SL__DECLARE(def) extern const struct sl_op_def def;
SL__BUILTIN_OPS(SL__DECLARE)
#undef SL__DECLARE

#define SL__REF(def) &def,
static const struct sl_op_def *const builtins[] = {SL__BUILTIN_OPS(SL__REF)};
#undef SL__REF

int sl__split_yes(const sl_op_t *op)
{
    (void)op;
    return 1;
}

const struct sl__builtin_table sl__builtin_ops = {builtins, sizeof builtins / sizeof builtins[0]};
