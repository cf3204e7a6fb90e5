/* sluice: an embeddable dataflow engine for joins and analytics on CPUs and GPUs.
 *
 * The embedder's header: include it to open engines, build and run plans, move data
 * in and out (also as Arrow), load plugins and run task graphs. It does not declare
 * the operator ABI: code that implements operators (built-in ones and plugins)
 * includes <sluice/op.h> (or <sluice/plugin.h> / <sluice/plugin_host.h> for plugins)
 * explicitly. What these headers do not declare is not API.
 */
#ifndef SLUICE_SLUICE_H
#define SLUICE_SLUICE_H

#include "version.h"
#include "error.h"
#include "data.h"
#include "arrow.h"
#include "engine.h"
#include "option.h"
#include "plan.h"
#include "query.h"
#include "plugin_load.h"
#include "sched.h"

#endif /* SLUICE_SLUICE_H */
