/* Internal side of engine options (option.h): the table and the typed access the
 * runtime and the task accessors use. */
#ifndef SLUICE_RUNTIME_ENGINE_OPTION_INT_H
#define SLUICE_RUNTIME_ENGINE_OPTION_INT_H

#include "internal.h"

/* How an option's value is stored in struct sl_engine_config. */
enum sl__ofield { SL__OF_INT, SL__OF_I64, SL__OF_F64, SL__OF_STR };

struct sl__option {
    struct sl_engine_option_info info;
    size_t offset;               /* of the field in struct sl_engine_config */
    enum sl__ofield field;
};

extern const struct sl__option sl__options[];
extern const int sl__n_options;

/* The option called name; NULL with the thread's last error set (naming the nearest
 * option) when there is none. */
const struct sl__option *sl__option_find(const char *name);
/* Parses value into o's field of cfg; SL_EINVAL (last error set) when it does not parse
 * or is out of range. */
int sl__option_store(const struct sl__option *o, struct sl_engine_config *cfg,
                     const char *value);
/* o's field of cfg as an integer (BOOL, INT, ENUM) or a double (FLOAT). */
int64_t sl__option_int(const struct sl__option *o, const struct sl_engine_config *cfg);
double sl__option_float(const struct sl__option *o, const struct sl_engine_config *cfg);
/* SL_EINVAL (last error naming the option) when a field of cfg is outside its option's
 * range: a C caller may have written any value. */
int sl__options_check(const struct sl_engine_config *cfg);
/* Replaces the "0 = default" values of query options by the defaults they stand for. */
void sl__options_resolve_query(struct sl_engine_config *cfg);
/* Rows per GPU morsel of a table already in that GPU's memory (gpu_resident_morsel_rows;
 * resolved at use, since its default follows whether gpu_morsel_rows kept its own). */
int64_t sl__options_resident_morsel_rows(const struct sl_engine_config *cfg);

/* The options a query of plan runs with: the engine's, then the plan's settings. */
void sl__options_for_query(sl_engine_t *eng, const sl_plan_t *plan,
                           struct sl_engine_config *out);

#endif /* SLUICE_RUNTIME_ENGINE_OPTION_INT_H */
