/* Engine options by name (option.h): parsing and printing values, the config, engine
 * and plan setters. The table itself is engine_option_table.c. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine_int.h"
#include "engine_option_int.h"
#include "plan_int.h"

_Static_assert(sizeof(enum sl_placement) == sizeof(int), "placement is stored as an int");

#define DEFAULT_MORSEL_CPU 122880
#define DEFAULT_MORSEL_GPU ((int64_t)16 << 20)
/* A table already on the GPU has no copies for small morsels to overlap: each morsel is
 * only launches, syncs and per-launch merges, so one morsel per 2^28 rows (issue 19). */
#define DEFAULT_MORSEL_GPU_RESIDENT ((int64_t)1 << 28)

static void *field(const struct sl__option *o, const struct sl_engine_config *cfg)
{
    return (char *)cfg + o->offset;
}

/* Edit distance of two short names, for "did you mean". */
static int distance(const char *a, const char *b)
{
    int la = (int)strlen(a), lb = (int)strlen(b), row[64];
    if (la > 63 || lb > 63)
        return 99;
    for (int j = 0; j <= lb; j++)
        row[j] = j;
    for (int i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = i;
        for (int j = 1; j <= lb; j++) {
            int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            best = up + 1 < best ? up + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

const struct sl__option *sl__option_find(const char *name)
{
    if (!name) {
        sl__set_last_error(SL_EINVAL, "option name is NULL");
        return NULL;
    }
    for (int i = 0; i < sl__n_options; i++)
        if (strcmp(sl__options[i].info.name, name) == 0)
            return &sl__options[i];
    int best = -1, best_d = 99; /* not found: the nearest name, for the hint */
    for (int i = 0; i < sl__n_options; i++) {
        int d = distance(name, sl__options[i].info.name);
        if (d < best_d)
            best = i, best_d = d;
    }
    if (best >= 0 && best_d <= 3)
        sl__set_last_error(SL_ENOTFOUND, "no option named '%s' (hint: did you mean '%s'? "
                           "`sluice options` lists them)", name, sl__options[best].info.name);
    else
        sl__set_last_error(SL_ENOTFOUND, "no option named '%s' (hint: `sluice options` lists "
                           "them)", name);
    return NULL;
}

/* 1 or 0 for the spellings of a boolean, -1 for anything else. */
static int parse_bool(const char *v)
{
    static const char *const words[][2] = {{"true", "false"}, {"on", "off"}, {"yes", "no"},
                                           {"1", "0"}};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        if (!strcasecmp(v, words[i][0]))
            return 1;
        if (!strcasecmp(v, words[i][1]))
            return 0;
    }
    return -1;
}

/* Index of v in the comma-separated list, or -1. */
static int parse_choice(const char *choices, const char *v)
{
    size_t n = strlen(v);
    int i = 0;
    for (const char *c = choices; *c; i++) {
        size_t len = strcspn(c, ",");
        if (len == n && strncasecmp(c, v, n) == 0)
            return i;
        c += len + (c[len] == ',');
    }
    return -1;
}

static int bad_value(const struct sl__option *o, const char *v, const char *why)
{
    return sl__set_last_error(SL_EINVAL, "option %s=%s: %s", o->info.name, v, why);
}

/* Parses v as o's type into *x (BOOL, INT, ENUM) or *f (FLOAT), checking the range. */
static int parse_value(const struct sl__option *o, const char *v, int64_t *xp, double *fp)
{
    const struct sl_engine_option_info *in = &o->info;
    int64_t x = 0;
    double f = 0;
    char msg[160];
    switch (in->type) {
    case SL_ENGINE_OPT_BOOL:
        if ((x = parse_bool(v)) < 0)
            return bad_value(o, v, "not a boolean (true, false, on, off, yes, no, 1, 0)");
        break;
    case SL_ENGINE_OPT_ENUM:
        if ((x = parse_choice(in->choices, v)) < 0) {
            snprintf(msg, sizeof msg, "not one of %s", in->choices);
            return bad_value(o, v, msg);
        }
        break;
    case SL_ENGINE_OPT_INT: {
        int bad = sl__parse_int(v, &x);
        if (bad == -1)
            return bad_value(o, v, "not an integer (examples: 8, 2^24, 512Mi)");
        if (bad < 0 || x < in->min || x > in->max) {
            snprintf(msg, sizeof msg, "out of range [%lld, %lld]", (long long)in->min,
                     (long long)in->max);
            return bad_value(o, v, msg);
        }
        break;
    }
    case SL_ENGINE_OPT_FLOAT: {
        char *end;
        errno = 0;
        f = strtod(v, &end);
        if (end == v || *end || errno || !isfinite(f))
            return bad_value(o, v, "not a number");
        if (f < (double)in->min) {
            snprintf(msg, sizeof msg, "below the minimum %lld", (long long)in->min);
            return bad_value(o, v, msg);
        }
        break;
    }
    case SL_ENGINE_OPT_STRING:
        break;
    }
    *xp = x;
    *fp = f;
    return SL_OK;
}

int sl__option_store(const struct sl__option *o, struct sl_engine_config *cfg, const char *v)
{
    if (!v)
        return sl__set_last_error(SL_EINVAL, "option %s: NULL value", o->info.name);
    int64_t x = 0;
    double f = 0;
    int rc = parse_value(o, v, &x, &f);
    if (rc < 0)
        return rc;
    switch (o->field) {
    case SL__OF_INT:
        *(int *)field(o, cfg) = (int)x;
        break;
    case SL__OF_I64:
        *(int64_t *)field(o, cfg) = x;
        break;
    case SL__OF_F64:
        *(double *)field(o, cfg) = f;
        break;
    case SL__OF_STR:
        *(const char **)field(o, cfg) = *v ? v : NULL;
        break;
    }
    return SL_OK;
}

int64_t sl__option_int(const struct sl__option *o, const struct sl_engine_config *cfg)
{
    return o->field == SL__OF_INT ? *(const int *)field(o, cfg)
           : o->field == SL__OF_I64 ? *(const int64_t *)field(o, cfg) : 0;
}

double sl__option_float(const struct sl__option *o, const struct sl_engine_config *cfg)
{
    return o->field == SL__OF_F64 ? *(const double *)field(o, cfg)
                                  : (double)sl__option_int(o, cfg);
}

/* Writes o's value as text: what sl__option_store reads back. */
static int format_value(const struct sl__option *o, const struct sl_engine_config *cfg,
                        char *buf, size_t len)
{
    if (!buf || len == 0)
        return sl__set_last_error(SL_EINVAL, "option %s: no buffer", o->info.name);
    int64_t x = sl__option_int(o, cfg);
    int n = 0;
    switch (o->info.type) {
    case SL_ENGINE_OPT_BOOL:
        n = snprintf(buf, len, "%s", x ? "true" : "false");
        break;
    case SL_ENGINE_OPT_ENUM: {
        const char *c = o->info.choices;
        for (int64_t i = 0; i < x && *c; i++)
            c += strcspn(c, ",") + (c[strcspn(c, ",")] == ',');
        n = snprintf(buf, len, "%.*s", (int)strcspn(c, ","), c);
        break;
    }
    case SL_ENGINE_OPT_INT:
        n = snprintf(buf, len, "%lld", (long long)x);
        break;
    case SL_ENGINE_OPT_FLOAT:
        n = snprintf(buf, len, "%.17g", sl__option_float(o, cfg));
        break;
    case SL_ENGINE_OPT_STRING: {
        const char *s = *(const char *const *)field(o, cfg);
        n = snprintf(buf, len, "%s", s ? s : "");
        break;
    }
    }
    if (n < 0 || (size_t)n >= len)
        return sl__set_last_error(SL_EINVAL, "option %s: its value needs %d bytes, the buffer "
                                  "has %zu", o->info.name, n + 1, len);
    return SL_OK;
}

void sl__options_resolve_query(struct sl_engine_config *cfg)
{
    if (cfg->morsel_rows_cpu == 0)
        cfg->morsel_rows_cpu = DEFAULT_MORSEL_CPU;
    if (cfg->morsel_rows_gpu == 0)
        cfg->morsel_rows_gpu = DEFAULT_MORSEL_GPU;
}

int64_t sl__options_resident_morsel_rows(const struct sl_engine_config *cfg)
{
    if (cfg->gpu_resident_morsel_rows > 0)
        return cfg->gpu_resident_morsel_rows;
    /* A gpu_morsel_rows set on purpose (tests cutting several morsels) holds here too. */
    return cfg->morsel_rows_gpu == DEFAULT_MORSEL_GPU ? DEFAULT_MORSEL_GPU_RESIDENT
                                                      : cfg->morsel_rows_gpu;
}

int sl__options_check(const struct sl_engine_config *cfg)
{
    for (int i = 0; i < sl__n_options; i++) {
        const struct sl__option *o = &sl__options[i];
        const struct sl_engine_option_info *in = &o->info;
        int64_t x = sl__option_int(o, cfg);
        bool bad = (in->type == SL_ENGINE_OPT_INT || in->type == SL_ENGINE_OPT_ENUM) &&
                   (x < in->min || x > in->max);
        if (in->type == SL_ENGINE_OPT_FLOAT)
            bad = !(sl__option_float(o, cfg) >= (double)in->min);
        if (bad)
            return sl__set_last_error(SL_EINVAL, "option %s is out of range", in->name);
    }
    return SL_OK;
}

/* ---------------- public API ---------------- */

int sl_engine_option_count(void)
{
    return sl__n_options;
}

const struct sl_engine_option_info *sl_engine_option_info(int i)
{
    return i >= 0 && i < sl__n_options ? &sl__options[i].info : NULL;
}

const struct sl_engine_option_info *sl_engine_option_find(const char *name)
{
    const struct sl__option *o = sl__option_find(name);
    return o ? &o->info : NULL;
}

static int check_config(const struct sl_engine_config *cfg, const char *call)
{
    if (!cfg)
        return sl__set_last_error(SL_EINVAL, "%s: NULL config", call);
    if (cfg->size != sizeof *cfg)
        return sl__set_last_error(SL_EABI, "%s: config size %u differs from the library's "
                                  "%zu; call sl_engine_config_init", call, cfg->size,
                                  sizeof *cfg);
    return SL_OK;
}

int sl_engine_config_set(struct sl_engine_config *cfg, const char *name, const char *value)
{
    int rc = check_config(cfg, "sl_engine_config_set");
    if (rc < 0)
        return rc;
    const struct sl__option *o = sl__option_find(name);
    return o ? sl__option_store(o, cfg, value) : SL_ENOTFOUND;
}

int sl_engine_config_get(const struct sl_engine_config *cfg, const char *name, char *buf,
                         size_t len)
{
    int rc = check_config(cfg, "sl_engine_config_get");
    if (rc < 0)
        return rc;
    const struct sl__option *o = sl__option_find(name);
    return o ? format_value(o, cfg, buf, len) : SL_ENOTFOUND;
}

/* An open option named on an open engine or a plan. */
static int not_at_run_time(const struct sl__option *o, const char *where)
{
    return sl__set_last_error(SL_ESTATE, "option '%s' is read when the engine opens; it "
                              "cannot be set %s (hint: set it on the config before "
                              "sl_engine_open, or with --set on the command line)",
                              o->info.name, where);
}

int sl_engine_option_set(sl_engine_t *eng, const char *name, const char *value)
{
    if (!eng)
        return sl__set_last_error(SL_EINVAL, "sl_engine_option_set: NULL engine");
    const struct sl__option *o = sl__option_find(name);
    int rc = !o ? SL_ENOTFOUND
             : !(o->info.flags & SL_ENGINE_OPT_QUERY) ? not_at_run_time(o, "on an open engine")
                                                  : SL_OK;
    if (rc == SL_OK) {
        pthread_mutex_lock(&eng->mu);
        rc = sl__option_store(o, &eng->cfg, value);
        sl__options_resolve_query(&eng->cfg);
        pthread_mutex_unlock(&eng->mu);
    }
    if (rc < 0) {
        char msg[SL__MSG_MAX];
        snprintf(msg, sizeof msg, "%s", sl_last_errmsg());
        return sl__errslot_set(&eng->err, rc, "%s", msg);
    }
    return SL_OK;
}

int sl_engine_option_get(sl_engine_t *eng, const char *name, char *buf, size_t len)
{
    if (!eng)
        return sl__set_last_error(SL_EINVAL, "sl_engine_option_get: NULL engine");
    const struct sl__option *o = sl__option_find(name);
    if (!o)
        return SL_ENOTFOUND;
    pthread_mutex_lock(&eng->mu);
    int rc = format_value(o, &eng->cfg, buf, len);
    pthread_mutex_unlock(&eng->mu);
    return rc;
}

int sl_plan_option_set(sl_plan_t *plan, const char *name, const char *value)
{
    if (!plan)
        return sl__set_last_error(SL_EINVAL, "sl_plan_option_set: NULL plan");
    int rc = SL_OK;
    const struct sl__option *o = sl__option_find(name);
    if (!o)
        rc = SL_ENOTFOUND;
    else if (!(o->info.flags & SL_ENGINE_OPT_QUERY))
        rc = not_at_run_time(o, "per plan");
    else if (atomic_load(&plan->frozen))
        rc = sl__set_last_error(SL_ESTATE, "the plan is in use by a query; options cannot "
                                "change");
    if (rc == SL_OK) { /* check the value now, so that queries cannot fail on it */
        struct sl_engine_config scratch;
        sl_engine_config_init(&scratch);
        rc = sl__option_store(o, &scratch, value);
    }
    if (rc == SL_OK)
        rc = sl__opts_put(&plan->settings, name, value);
    if (rc < 0) {
        char msg[SL__MSG_MAX];
        snprintf(msg, sizeof msg, "%s", sl_last_errmsg());
        return sl__errslot_set(&plan->err, rc, "%s", msg);
    }
    return SL_OK;
}

void sl__options_for_query(sl_engine_t *eng, const sl_plan_t *plan,
                           struct sl_engine_config *out)
{
    pthread_mutex_lock(&eng->mu);
    *out = eng->cfg;
    pthread_mutex_unlock(&eng->mu);
    for (int i = 0; i < plan->settings.n; i++) {
        const struct sl__option *o = sl__option_find(plan->settings.items[i].key);
        /* sl_plan_option_set checked name and value */
        if (o)
            sl__option_store(o, out, plan->settings.items[i].value);
    }
    sl__options_resolve_query(out);
}
