/* The environment variables of engine options: SLUICE_<NAME> for the option NAME. Read by
 * the sluice command (common.c) and by the test harness (tests/common/sl_test_engine.c),
 * never by the library. */
#ifndef SLUICE_CLI_OPTION_ENV_H
#define SLUICE_CLI_OPTION_ENV_H

/* Calls fn(user, name, var, value) for every engine option whose variable is set and not
 * empty, in the options' order; stops at the first nonzero return and returns it. */
int option_env_foreach(int (*fn)(void *user, const char *name, const char *var,
                                 const char *value),
                       void *user);

#endif /* SLUICE_CLI_OPTION_ENV_H */
