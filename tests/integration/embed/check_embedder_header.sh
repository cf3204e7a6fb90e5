#!/usr/bin/env bash
# <sluice/sluice.h> is the embedder's header: it declares engines, plans, queries and
# plugin loading, but not the operator ABI (struct sl_op_def, sl_task_t), which
# operator code includes explicitly with <sluice/op.h>.
#
#   check_embedder_header.sh INCLUDE_DIR COMPILER [ARGS...]
set -euo pipefail
incdir=$1
shift
# compile SOURCE COMPILER...: syntax only, warnings as errors.
compile() { printf '%s\n' "$1" | "${@:2}" -x c -std=c17 -Wall -Wextra -Werror -fsyntax-only \
    -I "$incdir" -; }
uses_abi='int f(void); int f(void) { return (int)sizeof(struct sl_op_def) + (int)sizeof(sl_task_t *); }'
uses_embed='int f(void); int f(void) { sl_engine_t *e = 0; return sl_plugin_load("x.so") + sl_engine_num_threads(e); }'

if compile "#include <sluice/sluice.h>
$uses_abi" "$@" 2>/dev/null; then
    echo "FAIL: <sluice/sluice.h> declares the operator ABI"
    exit 1
fi
compile "#include <sluice/sluice.h>
$uses_embed" "$@" || { echo "FAIL: <sluice/sluice.h> lacks the embedder's API"; exit 1; }
compile "#include <sluice/sluice.h>
#include <sluice/op.h>
$uses_abi" "$@" || { echo "FAIL: <sluice/op.h> does not declare the operator ABI"; exit 1; }
# The growable structs' initializers compile without warnings (-Wextra's
# missing-field-initializers included).
inits='int f(void); int f(void) { struct sl_mem_stats m = SL_MEM_STATS_INIT;
struct sl_device_info d = SL_DEVICE_INFO_INIT; struct sl_error_info e = SL_ERROR_INFO_INIT;
struct sl_progress p = SL_PROGRESS_INIT;
return (int)(m.size + d.size + e.size + p.size) + SL_HAS_MEMBER(&m, struct sl_mem_stats, gpu_peak); }'
compile "#include <sluice/sluice.h>
$inits" "$@" || { echo "FAIL: the SL_*_INIT initializers warn"; exit 1; }
echo "ok: sluice.h is the embedder's header; op.h adds the operator ABI"
