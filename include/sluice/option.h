/* Engine options by name: every setting of an engine, listed, read and written by name
 * at run time, as DuckDB's configuration API does (duckdb_config_count,
 * duckdb_get_config_flag, duckdb_set_config).
 *
 * Each option is also a field of struct sl_engine_config (engine.h), so a C embedder may
 * set either; docs/OPTIONS.md lists them all (checked against this library by a test).
 * Options come in two kinds:
 *   - open options (threads, memory limits, ...) are read once, by sl_engine_open: set
 *     them on the config before opening (sl_engine_config_set);
 *   - query options (SL_ENGINE_OPT_QUERY: placement, morsel sizes, ...) may also change on
 *     an open engine (sl_engine_option_set) and per plan (sl_plan_option_set, or a
 *     `set NAME = VALUE` line of a plan file); a query takes the engine's values when it
 *     is created, then the plan's.
 * Options flagged SL_ENGINE_OPT_DEBUG force a strategy for tests and experiments; they may
 * change or go without notice.
 *
 * Values are text in and out: integers accept 2^N and the suffixes k, M, G (x1000) and
 * Ki, Mi, Gi (x1024); booleans true/false, on/off, yes/no, 1/0; enumerations one of the
 * option's choices. The library never reads environment variables; the sluice command
 * maps its own (docs/CLI.md) onto these options.
 *
 * Errors (message in sl_last_errmsg, or sl_engine_errmsg / sl_plan_errmsg for calls on
 * those objects): SL_ENOTFOUND no option of that name (the message suggests the nearest);
 * SL_EINVAL a value that does not parse or is out of the option's range; SL_ESTATE an
 * open option set on an open engine or a plan, or a plan already used by a query.
 * All added in 0.2. */
#ifndef SLUICE_OPTION_H
#define SLUICE_OPTION_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sl_engine_config;
typedef struct sl_engine sl_engine_t;
typedef struct sl_plan sl_plan_t;

enum sl_engine_option_type {
    SL_ENGINE_OPT_BOOL = 0,
    SL_ENGINE_OPT_INT = 1,    /* a 64-bit integer within [min, max] */
    SL_ENGINE_OPT_FLOAT = 2,  /* a double, at least min */
    SL_ENGINE_OPT_STRING = 3, /* a path; "" is none */
    SL_ENGINE_OPT_ENUM = 4,   /* one of choices (a comma-separated list) */
};

/* The option may change on an open engine and per plan; it applies to queries created
 * afterwards. Without it the option is read only when the engine opens. */
#define SL_ENGINE_OPT_QUERY 1u
/* A switch for tests and experiments ("debug_" names): may change without notice. */
#define SL_ENGINE_OPT_DEBUG 2u

/* One option. The library owns it; it lives as long as the process. Fields are only
 * appended. */
struct sl_engine_option_info {
    const char *name;
    enum sl_engine_option_type type;
    unsigned flags;              /* SL_ENGINE_OPT_QUERY, SL_ENGINE_OPT_DEBUG */
    const char *default_value;   /* as text, as sl_engine_config_get prints it */
    const char *description;     /* one sentence; says what 0 or "" means where special */
    const char *choices;         /* SL_ENGINE_OPT_ENUM: "auto,cpu,gpu"; else NULL */
    int64_t min, max;            /* SL_ENGINE_OPT_INT: the accepted range; FLOAT: min only */
};

/* Number of options; they are numbered 0 .. count-1 in a fixed order. Thread-safe. */
SL_API int sl_engine_option_count(void);
/* Option i, or NULL when i is out of range. Thread-safe. */
SL_API const struct sl_engine_option_info *sl_engine_option_info(int i);
/* The option called `name`, or NULL (and sl_last_errmsg says why). Thread-safe. */
SL_API const struct sl_engine_option_info *sl_engine_option_find(const char *name);

/* Sets option `name` of a config filled by sl_engine_config_init. A string option keeps
 * the pointer `value` (not a copy), like the config's own string fields: it must stay
 * valid until sl_engine_open returns, which copies it. */
SL_API int sl_engine_config_set(struct sl_engine_config *cfg, const char *name,
                                const char *value);
/* Writes option `name` of cfg as text into buf (len bytes, always terminated). SL_EINVAL
 * when it does not fit. */
SL_API int sl_engine_config_get(const struct sl_engine_config *cfg, const char *name,
                                char *buf, size_t len);

/* Sets a query option of an open engine for queries created afterwards; running
 * queries keep the values they started with. SL_ESTATE for an open option. Thread-safe. */
SL_API int sl_engine_option_set(sl_engine_t *eng, const char *name, const char *value);
/* Writes the engine's current value of option `name` into buf: the value in use, with
 * defaults resolved (threads=0 reads as the number of workers started). Thread-safe. */
SL_API int sl_engine_option_get(sl_engine_t *eng, const char *name, char *buf, size_t len);

/* Sets a query option for every query of this plan, over the engine's value. The value
 * is checked now; the plan keeps a copy. Not thread-safe (as every plan call). */
SL_API int sl_plan_option_set(sl_plan_t *plan, const char *name, const char *value);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_OPTION_H */
