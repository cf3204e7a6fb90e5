/* sluice options: every engine option (option.h), with the value this command line and
 * environment would give it. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *type_name(enum sl_engine_option_type t)
{
    static const char *const names[] = {"bool", "int", "float", "string", "enum"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

static void json_string(const char *s)
{
    putchar('"');
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            putchar('\\');
        putchar(*s);
    }
    putchar('"');
}

static void print_json(const struct sl_engine_config *cfg)
{
    printf("{\"options\":[");
    for (int i = 0; i < sl_engine_option_count(); i++) {
        const struct sl_engine_option_info *o = sl_engine_option_info(i);
        char value[256] = "";
        sl_engine_config_get(cfg, o->name, value, sizeof value);
        printf("%s{\"name\":\"%s\",\"type\":\"%s\",\"query\":%s,\"debug\":%s,\"default\":",
               i ? "," : "", o->name, type_name(o->type),
               o->flags & SL_ENGINE_OPT_QUERY ? "true" : "false",
               o->flags & SL_ENGINE_OPT_DEBUG ? "true" : "false");
        json_string(o->default_value);
        printf(",\"value\":");
        json_string(value);
        if (o->choices)
            printf(",\"choices\":\"%s\"", o->choices);
        printf(",\"description\":");
        json_string(o->description);
        printf("}");
    }
    printf("]}\n");
}

/* The table of docs/OPTIONS.md (cli.options checks that the file holds it). */
static void print_markdown(void)
{
    printf("| option | type | set | default | what it does |\n|---|---|---|---|---|\n");
    for (int i = 0; i < sl_engine_option_count(); i++) {
        const struct sl_engine_option_info *o = sl_engine_option_info(i);
        printf("| `%s` | %s | %s | `%s` | %s", o->name, type_name(o->type),
               o->flags & SL_ENGINE_OPT_QUERY ? "engine, plan" : "open", o->default_value,
               o->description);
        if (o->choices)
            printf(" One of: %s.", o->choices);
        printf(" |\n");
    }
}

static void print_text(const struct sl_engine_config *cfg)
{
    for (int i = 0; i < sl_engine_option_count(); i++) {
        const struct sl_engine_option_info *o = sl_engine_option_info(i);
        char value[256] = "";
        sl_engine_config_get(cfg, o->name, value, sizeof value);
        printf("%-24s %-6s %-5s = %-10s %s", o->name, type_name(o->type),
               o->flags & SL_ENGINE_OPT_QUERY ? "query" : "open", value[0] ? value : "\"\"",
               o->description);
        if (o->choices)
            printf(" (%s)", o->choices);
        if (strcmp(value, o->default_value))
            printf(" [default %s]", o->default_value[0] ? o->default_value : "\"\"");
        printf("\n");
    }
}

int cmd_options(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c);
    bool markdown = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: sluice options [--json | --markdown] [--set NAME=VALUE ...] [engine "
                   "options]\n"
                   "Lists the engine options: name, type, when they may change (open: when the\n"
                   "engine opens; query: also per plan with a `set` line), the value this\n"
                   "command line and environment give (SLUICE_<NAME>), and what each does.\n"
                   "--markdown prints the table of docs/OPTIONS.md.\n");
            return 0;
        }
        if (!strcmp(argv[i], "--markdown")) {
            markdown = true;
            continue;
        }
        int r = cli_common_option(&c, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r == 0) /* a command-line mistake: exit 2 */
            return cli_fail("options: unknown argument '%s' (see sluice options --help)",
                            argv[i]) + 1;
    }
    struct sl_engine_config cfg;
    if (cli_engine_config(&c, &cfg))
        return 2;
    if (markdown)
        print_markdown();
    else if (c.json)
        print_json(&cfg);
    else
        print_text(&cfg);
    return 0;
}
