/* The test harness: cases registered with SL_TEST(name), assertions from cmocka.
 *
 * Every case is its own meson test(): tests/meson.build reads each test source, finds
 * every "SL_TEST(" and registers `binary case_name`, so each case runs in its own
 * process under meson's timeout. Run a binary with no argument to run all its cases.
 * A case that calls SL_SKIP exits with 77, which meson counts as skipped.
 */
#ifndef SLUICE_TEST_H
#define SLUICE_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

typedef void (*sl_test_fn)(void **state);
void sl_test_register(const char *name, sl_test_fn fn);
/* Marks the running case as skipped (exit code 77) with a reason, and returns from it. */
void sl_test_mark_skipped(const char *why);
/* Inside a case: a fatal signal in any thread, or an exit() before the case returns,
 * prints a backtrace to stderr (cmocka's own handler may only exit with 255). */
void sl_test_trap_crashes(void);

#define SL_TEST(name)                                                   \
    static void sl_test_##name(void **state);                           \
    __attribute__((constructor)) static void sl_test_reg_##name(void)   \
    {                                                                   \
        sl_test_register(#name, sl_test_##name);                        \
    }                                                                   \
    static void sl_test_##name(void **state)

/* A step of xorshift64 on *s (nonzero): a case's own reproducible pseudo-random numbers. */
static inline uint64_t sl_test_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A uniform double in [0, 1) from sl_test_rand. */
static inline double sl_test_unit(uint64_t *s)
{
    return (double)(sl_test_rand(s) >> 11) * 0x1.0p-53;
}

#define SL_SKIP(why)                 \
    do {                             \
        sl_test_mark_skipped(why);   \
        return;                      \
    } while (0)

/* sl_engine_open with the test configuration of the environment (tests/configs/,
 * sl_test_engine.c): SLUICE_<NAME> sets engine option NAME over the test's value. Tests
 * open engines with it, except those about what the library itself does with the
 * environment (nothing). */
struct sl_engine;
struct sl_engine_config;
int sl_test_engine_open(struct sl_engine **out, const struct sl_engine_config *cfg);
/* An engine of `threads` CPU workers, no GPU and `morsel_rows` rows per morsel (0: the
 * default), opened as sl_test_engine_open does; fails the case if it cannot open. */
struct sl_engine *sl_test_cpu_engine(int threads, int64_t morsel_rows);
/* An engine on `threads` CPU workers and no GPU, with host budget `host_mem` (0 = the
 * default), opened with sl_test_engine_open; fails the case if it cannot open. */
struct sl_engine *sl_test_cpu_engine_budget(int threads, int64_t host_mem);
/* The same mapping onto a config the test fills itself. */
int sl_test_config_from_env(struct sl_engine_config *cfg);
/* on = 1: the running case's engines open as the case set them, outside the
 * configuration (for expectations computed from the settings: tasks per morsel, allocation
 * counts); reset before each case. */
void sl_test_config_off(int on);
/* The value the running configuration forces for option NAME, or NULL (the default run):
 * for tests whose expectations depend on it. */
const char *sl_test_forced_option(const char *name);
/* The text of file `path` (its first 64 KiB) in a buffer of this function, valid until
 * its next call; fails the case if the file cannot be opened. */
char *sl_test_read_text(const char *path);
/* A plan parsed from text (source name "t.plan"); fails the case on an error. */
struct sl_plan;
struct sl_plan *sl_test_plan_parse(const char *text);

/* SL_TEST_UNDER_TSAN is defined in a ThreadSanitizer build (gcc or clang): for cases
 * that must be smaller there, or skip. */
#if defined(__SANITIZE_THREAD__)
#define SL_TEST_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SL_TEST_UNDER_TSAN 1
#endif
#endif

/* Asserts that a sluice call returned SL_OK, printing the code and message if not. */
#define SL_ASSERT_OK(expr)                                                              \
    do {                                                                                \
        int sl_rc_ = (expr);                                                            \
        if (sl_rc_ != 0)                                                                \
            fail_msg("%s returned %d (%s): %s", #expr, sl_rc_, sl_err_name(sl_rc_),    \
                     sl_last_errmsg());                                                 \
    } while (0)

#endif /* SLUICE_TEST_H */
