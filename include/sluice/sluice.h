/* sluice: an embeddable dataflow engine for joins and analytics on CPUs and GPUs.
 * Include this header to get the whole public C API. */
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
#include "op.h"
#include "plugin.h"
#include "sched.h"

#endif /* SLUICE_SLUICE_H */
