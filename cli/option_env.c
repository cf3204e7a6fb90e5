/* SLUICE_<NAME> variables of engine options (option_env.h). */
#include "option_env.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

#include <sluice/sluice.h>

int option_env_foreach(int (*fn)(void *user, const char *name, const char *var,
                                 const char *value),
                       void *user)
{
    for (int i = 0; i < sl_engine_option_count(); i++) {
        const char *name = sl_engine_option_info(i)->name;
        char var[80];
        int n = snprintf(var, sizeof var, "SLUICE_");
        for (const char *p = name; *p && n < (int)sizeof var - 1; p++)
            var[n++] = (char)toupper((unsigned char)*p);
        var[n] = 0;
        const char *v = getenv(var);
        int rc = v && *v ? fn(user, name, var, v) : 0;
        if (rc)
            return rc;
    }
    return 0;
}
