/* Internal interface of plugin loading (plugin.c), the operator ABI checks and host
 * table (plugin_abi.c) and the staging registries they use (registry.c). */
#ifndef SLUICE_PLUGIN_INT_H
#define SLUICE_PLUGIN_INT_H

#include "internal.h"
#include "sluice/plugin.h"

/* plugin_abi.c: the host table handed to every plugin entry. */
const struct sl_host_api *sl__host_api(void);
/* SL_OK if a definition or plugin built for operator ABI `v` may be used by this
 * library; otherwise records why (naming `what`) as the thread's last error and returns
 * SL_EABI. */
int sl__abi_check(uint32_t v, const char *what);
/* sl_op_def.can_split (version 2) of node op: 0 for version 1 definitions and NULL. */
int sl__op_call_can_split(const struct sl_op_def *def, const sl_op_t *op);

/* plugin.c: host_api.declare_abi and host_api.registry_add. */
int sl__plugin_declare_abi(sl_registry_t *reg, uint32_t abi_version);
int sl__plugin_registry_add(sl_registry_t *reg, const struct sl_op_def *def);

/* registry.c: a private registry that a plugin's entry fills, then merged into another
 * one all at once or not at all (SL_EEXIST names the first taken name; SL_ENOSPC). */
sl_registry_t *sl__registry_new(void);
void sl__registry_free(sl_registry_t *reg);
int sl__registry_merge(sl_registry_t *dst, sl_registry_t *src);

#endif /* SLUICE_PLUGIN_INT_H */
