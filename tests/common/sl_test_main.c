/* main() of every test binary: runs one named case, or all cases when none is named.
 * stdout is line-buffered, so that what a case printed survives a crash; a case may call
 * sl_test_trap_crashes() to have a fatal signal (in any thread) or an exit() before the
 * end print a backtrace (binary(+offset) lines, for addr2line) instead of dying
 * silently. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sl_test.h"

#define MAX_CASES 512

static struct {
    const char *name;
    sl_test_fn fn;
} cases[MAX_CASES];
static int n_cases;
static int skipped;

void sl_test_register(const char *name, sl_test_fn fn)
{
    if (n_cases < MAX_CASES) {
        cases[n_cases].name = name;
        cases[n_cases].fn = fn;
        n_cases++;
    }
}

void sl_test_mark_skipped(const char *why)
{
    skipped = 1;
    printf("SKIP: %s\n", why);
}

static volatile sig_atomic_t finished;

static void print_backtrace(const char *why)
{
    char msg[160];
    int n = snprintf(msg, sizeof msg, "\n*** %s in thread %ld (process %ld); backtrace:\n", why,
                     (long)syscall(SYS_gettid), (long)getpid());
    if (n > 0 && write(2, msg, (size_t)n) < 0)
        return;
    void *bt[64];
    int k = backtrace(bt, 64);
    backtrace_symbols_fd(bt, k, 2);
}

static void crash_handler(int sig)
{
    char why[64];
    snprintf(why, sizeof why, "signal %d (%s)", sig, strsignal(sig));
    print_backtrace(why);
    _exit(128 + sig);
}

/* An exit() before main returns (cmocka exits with 255 when it cannot longjmp). */
static void exit_trace(void)
{
    if (!finished)
        print_backtrace("exit() called before the test case returned");
}

void sl_test_trap_crashes(void)
{
    void *warm[2];
    backtrace(warm, 2); /* loads libgcc now, not inside the handler */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = crash_handler;
    sa.sa_flags = SA_RESETHAND;
    const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
}

static int run_one(int i)
{
    struct CMUnitTest t = {cases[i].name, cases[i].fn, NULL, NULL, NULL};
    skipped = 0;
    sl_test_config_off(0);
    int failed = _cmocka_run_group_tests(cases[i].name, &t, 1, NULL, NULL);
    if (failed)
        return 1;
    return skipped ? 77 : 0;
}

static int finish(int rc)
{
    finished = 1;
    return rc;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    atexit(exit_trace);
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        for (int i = 0; i < n_cases; i++)
            printf("%s\n", cases[i].name);
        return finish(0);
    }
    if (argc > 1) {
        for (int i = 0; i < n_cases; i++) {
            if (strcmp(cases[i].name, argv[1]) == 0)
                return finish(run_one(i));
        }
        fprintf(stderr, "no test case named '%s'\n", argv[1]);
        return finish(1);
    }
    int worst = 0;
    for (int i = 0; i < n_cases; i++) {
        int rc = run_one(i);
        if (rc == 1)
            worst = 1;
    }
    return finish(worst);
}
