/* Options shared by the sluice commands, and small helpers. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "option_env.h"

void cli_common_init(struct cli_common *c)
{
    memset(c, 0, sizeof *c);
    c->gpus = -1;
    c->placement = SL_PLACE_AUTO;
}

static void print_error(const char *fmt, va_list ap)
{
    fputs("sluice: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int cli_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    print_error(fmt, ap);
    va_end(ap);
    return 1;
}

int cli_usage_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    print_error(fmt, ap);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

int64_t cli_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t cli_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int cli_parse_count(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    const char *caret = strchr(s, '^');
    if (caret) {
        long long b = strtoll(s, &end, 10);
        if (end != caret)
            return -1;
        long long e = strtoll(caret + 1, &end, 10);
        if (*end || errno || b < 0 || e < 0 || e > 62 || powl(b, e) > 9.2e18L)
            return -1;
        *out = (int64_t)powl(b, e);
        return 0;
    }
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v) || v < 0)
        return -1;
    double mul = 1;
    if (!strcmp(end, "k") || !strcmp(end, "K"))
        mul = 1e3;
    else if (!strcmp(end, "M"))
        mul = 1e6;
    else if (!strcmp(end, "G"))
        mul = 1e9;
    else if (!strcmp(end, "Ki"))
        mul = 1024.0;
    else if (!strcmp(end, "Mi"))
        mul = 1024.0 * 1024;
    else if (!strcmp(end, "Gi"))
        mul = 1024.0 * 1024 * 1024;
    else if (*end)
        return -1;
    if (v * mul > 9.2e18 || v * mul != floor(v * mul)) /* a count is a whole number */
        return -1;
    *out = (int64_t)(v * mul);
    return 0;
}

static int need_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        cli_fail("%s needs a value", argv[*i]);
        return -1;
    }
    return 0;
}

int cli_common_option(struct cli_common *c, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    int64_t v;
    if (!strcmp(a, "--json")) {
        c->json = true;
        return 1;
    }
    /* Commands whose results are JSON or text only (devices, bench) take --format too;
     * run and explain read it themselves first. */
    if (!strcmp(a, "--format")) {
        if (need_value(argc, argv, i) < 0)
            return -1;
        const char *val = argv[++*i];
        if (strcmp(val, "json") && strcmp(val, "table") && strcmp(val, "text")) {
            cli_fail("%s --format: '%s' is not table or json", argv[0], val);
            return -1;
        }
        c->json = !strcmp(val, "json");
        return 1;
    }
    if (!strcmp(a, "--threads") || !strcmp(a, "--gpus") || !strcmp(a, "--gpu-mem") ||
        !strcmp(a, "--host-mem")) {
        if (need_value(argc, argv, i) < 0)
            return -1;
        const char *val = argv[++*i];
        if (cli_parse_count(val, &v) < 0) {
            cli_fail("%s: '%s' is not a count (examples: 8, 2^24, 512Mi)", a, val);
            return -1;
        }
        /* Checked now against the engine option's range: a count too large for it
         * must not wrap into another value (2^40 threads became 0, the default). */
        static const char *const names[][2] = {{"--threads", "threads"}, {"--gpus", "gpus"},
                                               {"--gpu-mem", "gpu_mem"},
                                               {"--host-mem", "host_mem"}};
        char num[24];
        snprintf(num, sizeof num, "%lld", (long long)v);
        struct sl_engine_config check;
        sl_engine_config_init(&check);
        for (int k = 0; k < 4; k++) {
            if (!strcmp(a, names[k][0]) && sl_engine_config_set(&check, names[k][1], num)) {
                cli_fail("%s %s: %s", a, val, sl_last_errmsg());
                return -1;
            }
        }
        if (!strcmp(a, "--threads"))
            c->threads = (int)v;
        else if (!strcmp(a, "--gpus"))
            c->gpus = (int)v;
        else if (!strcmp(a, "--gpu-mem"))
            c->gpu_mem = v;
        else
            c->host_mem = v;
        return 1;
    }
    if (!strcmp(a, "--split-gpu")) {
        c->split_gpu = true;
        return 1;
    }
    if (!strcmp(a, "--placement")) {
        if (need_value(argc, argv, i) < 0)
            return -1;
        const char *val = argv[++*i];
        if (!strcmp(val, "cpu"))
            c->placement = SL_PLACE_CPU;
        else if (!strcmp(val, "gpu"))
            c->placement = SL_PLACE_GPU;
        else if (!strcmp(val, "auto"))
            c->placement = SL_PLACE_AUTO;
        else if (!strcmp(val, "coprocess"))
            c->placement = SL_PLACE_COPROCESS;
        else {
            cli_fail("--placement: '%s' is not cpu, gpu, auto or coprocess", val);
            return -1;
        }
        return 1;
    }
    if (!strcmp(a, "--plugin")) { /* loaded at once: later options and plans may use it */
        if (need_value(argc, argv, i) < 0)
            return -1;
        if (sl_plugin_load(argv[++*i]) != SL_OK) {
            cli_fail("--plugin: %s", sl_last_errmsg());
            return -1;
        }
        return 1;
    }
    if (!strcmp(a, "--trace")) {
        if (need_value(argc, argv, i) < 0)
            return -1;
        c->trace = argv[++*i];
        return 1;
    }
    if (!strcmp(a, "--set"))
        return need_value(argc, argv, i) < 0 ? -1 : cli_common_set(c, argv[++*i]);
    return 0;
}

/* Sets "NAME=VALUE" (its value kept, not copied) on cfg; what_ names the source in errors. */
static int set_pair(struct sl_engine_config *cfg, const char *pair, const char *what)
{
    const char *eq = strchr(pair, '=');
    char name[64];
    if (!eq || eq == pair || (size_t)(eq - pair) >= sizeof name) {
        cli_fail("%s: '%s' is not NAME=VALUE (sluice options lists the names)", what, pair);
        return -1;
    }
    snprintf(name, sizeof name, "%.*s", (int)(eq - pair), pair);
    if (sl_engine_config_set(cfg, name, eq + 1) != SL_OK) {
        cli_fail("%s: %s", what, sl_last_errmsg());
        return -1;
    }
    return 0;
}

int cli_common_set(struct cli_common *c, const char *pair)
{
    struct sl_engine_config check; /* the value is checked now: a command-line mistake */
    sl_engine_config_init(&check);
    if (set_pair(&check, pair, "--set") < 0)
        return -1;
    if (c->n_sets == CLI_MAX_SETS) {
        cli_fail("--set: more than %d settings", CLI_MAX_SETS);
        return -1;
    }
    c->sets[c->n_sets++] = pair;
    if (!strncmp(pair, "placement=", 10)) /* commands label results by it */
        c->placement = check.placement;
    return 1;
}

/* SLUICE_<NAME> for every option NAME: the defaults the environment gives. */
static int set_from_env(void *cfg, const char *name, const char *var, const char *value)
{
    if (sl_engine_config_set(cfg, name, value) == SL_OK)
        return 0;
    return cli_fail("environment variable %s: %s", var, sl_last_errmsg());
}

int cli_engine_config(const struct cli_common *c, struct sl_engine_config *cfg)
{
    sl_engine_config_init(cfg);
    if (option_env_foreach(set_from_env, cfg))
        return 2;
    if (cli_under_mpirun() && sl_engine_config_set(cfg, "mpi", "true") != SL_OK)
        return cli_fail("%s", sl_last_errmsg()) + 1;
    /* The flags, where given (or set by the command), as the options they stand for. */
    static const char *const places[] = {"auto", "cpu", "gpu", "coprocess"};
    char v[4][24];
    snprintf(v[0], sizeof v[0], "%d", c->threads);
    snprintf(v[1], sizeof v[1], "%d", c->gpus);
    snprintf(v[2], sizeof v[2], "%lld", (long long)c->gpu_mem);
    snprintf(v[3], sizeof v[3], "%lld", (long long)c->host_mem);
    const struct {
        bool given;
        const char *name, *value;
    } flags[] = {
        {c->threads != 0, "threads", v[0]},
        {c->gpus != -1, "gpus", v[1]},
        {c->split_gpu, "split_gpu", "true"},
        {c->gpu_mem != 0, "gpu_mem", v[2]},
        {c->host_mem != 0, "host_mem", v[3]},
        {c->placement != SL_PLACE_AUTO, "placement",
         (unsigned)c->placement < 4 ? places[c->placement] : "?"},
        {c->trace != NULL, "trace", c->trace},
    };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (flags[i].given && sl_engine_config_set(cfg, flags[i].name, flags[i].value) != SL_OK)
            return cli_fail("%s", sl_last_errmsg()) + 1;
    for (int i = 0; i < c->n_sets; i++)
        if (set_pair(cfg, c->sets[i], "--set") < 0)
            return 2;
    return 0;
}

sl_engine_t *cli_open_engine(const struct cli_common *c)
{
    struct sl_engine_config cfg;
    if (cli_engine_config(c, &cfg))
        return NULL;
    sl_engine_t *eng;
    int rc = sl_engine_open(&eng, &cfg);
    if (rc != SL_OK) {
        cli_fail("cannot start the engine: %s", eng ? sl_engine_errmsg(eng) : sl_last_errmsg());
        sl_engine_close(eng);
        return NULL;
    }
    return eng;
}

void cli_progress_start(struct cli_progress *pr)
{
    pr->t0 = cli_now_ns();
    pr->shown = false;
}

/* A bar on stderr: [#####-----]  50%  123/246 tasks  1.2 s. Callers register it only
 * when stderr is a terminal. Tasks are discovered as the query runs, so the total can
 * grow and the bar step back. */
void cli_progress_draw(void *user, const struct sl_progress *p)
{
    struct cli_progress *pr = user;
    if (p->tasks_total <= 0)
        return;
    enum { WIDTH = 30 };
    int fill = (int)(WIDTH * p->tasks_done / p->tasks_total);
    char bar[WIDTH + 1];
    for (int i = 0; i < WIDTH; i++)
        bar[i] = i < fill ? '#' : '-';
    bar[WIDTH] = 0;
    fprintf(stderr, "\r  [%s] %3d%%  %lld/%lld tasks  %.1f s ", bar,
            (int)(100 * p->tasks_done / p->tasks_total), (long long)p->tasks_done,
            (long long)p->tasks_total, (cli_now_ns() - pr->t0) / 1e9);
    pr->shown = true;
}

void cli_progress_clear(struct cli_progress *pr)
{
    if (pr->shown)
        fprintf(stderr, "\r%80s\r", "");
    pr->shown = false;
}
