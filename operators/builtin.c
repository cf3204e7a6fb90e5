/* Registers the built-in operators. They use the same operator ABI and registry call as
 * plugins do. */
#include "operators.h"

static const struct sl_op_def *const builtins[] = {
    &sl__scan_table_def,
    &sl__gen_sequence_def,
    &sl__aggregate_sum_def,
};

int sl__builtin_register(sl_registry_t *reg)
{
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
        int rc = sl_registry_add(reg, builtins[i]);
        if (rc < 0 && rc != SL_EEXIST)
            return rc;
    }
    return SL_OK;
}
