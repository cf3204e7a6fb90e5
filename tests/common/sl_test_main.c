/* main() of every test binary: runs one named case, or all cases when none is named. */
#include <string.h>

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

static int run_one(int i)
{
    struct CMUnitTest t = {cases[i].name, cases[i].fn, NULL, NULL, NULL};
    skipped = 0;
    int failed = _cmocka_run_group_tests(cases[i].name, &t, 1, NULL, NULL);
    if (failed)
        return 1;
    return skipped ? 77 : 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        for (int i = 0; i < n_cases; i++)
            printf("%s\n", cases[i].name);
        return 0;
    }
    if (argc > 1) {
        for (int i = 0; i < n_cases; i++) {
            if (strcmp(cases[i].name, argv[1]) == 0)
                return run_one(i);
        }
        fprintf(stderr, "no test case named '%s'\n", argv[1]);
        return 1;
    }
    int worst = 0;
    for (int i = 0; i < n_cases; i++) {
        int rc = run_one(i);
        if (rc == 1)
            worst = 1;
    }
    return worst;
}
