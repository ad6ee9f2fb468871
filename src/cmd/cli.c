/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one command-line parser of the subcommands (cli.h): getopt_long over the subcommand's
 * table plus the common options, one error format, a help generated from the tables.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "util/log.h"
#include "util/macro.h"
#include "util/parse-util.h"

enum {
        COMMON_LOG_LEVEL,
        COMMON_LOG_LEVEL_ALIAS,
        COMMON_LOG_FORMAT,
        COMMON_ZAP_ENCODER,
        COMMON_HELP,
        COMMON__MAX,
};

static const struct cli_option common_options[COMMON__MAX] = {
        [COMMON_LOG_LEVEL] = { "zap-log-level", 0, CLI_ARG_REQUIRED, "LEVEL",
                               "log level: debug, info, warn, error (default info)",
                               COMMON_LOG_LEVEL },
        [COMMON_LOG_LEVEL_ALIAS] = { "log-level", 0, CLI_ARG_REQUIRED, "LEVEL",
                                     "same as --zap-log-level", COMMON_LOG_LEVEL_ALIAS },
        [COMMON_LOG_FORMAT] = { "log-format", 0, CLI_ARG_REQUIRED, "FORMAT",
                                "log encoding: json or text (default json)", COMMON_LOG_FORMAT },
        [COMMON_ZAP_ENCODER] = { "zap-encoder", 0, CLI_ARG_REQUIRED, "ENC",
                                 "controller-runtime's spelling: json, or console (= text)",
                                 COMMON_ZAP_ENCODER },
        [COMMON_HELP] = { "help", 'h', CLI_ARG_NONE, NULL, "show this help and exit", COMMON_HELP },
};

/* getopt values: long options are numbered past any letter; common ones after the command's */
#define VAL_BASE 0x100

static int vprint_error(const struct cli_command *cmd, const char *fmt, va_list ap)
        __attribute__((format(printf, 2, 0)));
static int vprint_error(const struct cli_command *cmd, const char *fmt, va_list ap)
{
        (void)fprintf(stderr, "modelplane %s: ", cmd->name);
        (void)vfprintf(stderr, fmt, ap);
        (void)fprintf(stderr, "\nTry 'modelplane %s --help'.\n", cmd->name);
        return -EINVAL;
}

int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        (void)vprint_error(cmd, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

int cli_exit_status(int r)
{
        if (r >= 0)
                return 0;
        return r == -EINVAL ? 2 : 1;
}

int cli_parse_bool(const char *arg, bool *ret)
{
        if (!arg) {
                *ret = true;
                return 0;
        }
        return parse_boolean(arg, ret);
}

static void help_line(FILE *f, const struct cli_option *o)
{
        char left[96];
        int n;

        if (o->short_name)
                n = snprintf(left, sizeof(left), "  -%c, --%s", o->short_name, o->name);
        else
                n = snprintf(left, sizeof(left), "      --%s", o->name);
        if (n > 0 && (size_t)n < sizeof(left) && o->metavar)
                (void)snprintf(left + n, sizeof(left) - (size_t)n,
                               o->arg == CLI_ARG_OPTIONAL ? "[=%s]" : " %s", o->metavar);
        if (strlen(left) < 34)
                (void)fprintf(f, "%-34s ", left);
        else
                (void)fprintf(f, "%s\n%-34s ", left, "");
        for (const char *p = o->help ? o->help : ""; *p; p++) {
                (void)fputc(*p, f);
                if (*p == '\n')
                        (void)fprintf(f, "%-34s ", "");
        }
        (void)fputc('\n', f);
}

void cli_help(const struct cli_command *cmd, FILE *f)
{
        (void)fprintf(f, "Usage: modelplane %s [OPTIONS]%s%s\n", cmd->name,
                      cmd->args_usage ? " " : "", cmd->args_usage ? cmd->args_usage : "");
        if (cmd->synopsis)
                (void)fprintf(f, "\n%s\n", cmd->synopsis);
        (void)fprintf(f, "\nOptions:\n");
        for (size_t i = 0; i < cmd->n_options; i++)
                help_line(f, &cmd->options[i]);
        (void)fprintf(f, "\nCommon options (every subcommand):\n");
        for (size_t i = 0; i < COMMON__MAX; i++)
                help_line(f, &common_options[i]);
        if (cmd->epilog)
                (void)fprintf(f, "\n%s\n", cmd->epilog);
}

static const struct cli_option *option_of(const struct cli_command *cmd, int val)
{
        size_t i;

        if (val >= VAL_BASE) {
                i = (size_t)(val - VAL_BASE);
                if (i < cmd->n_options)
                        return &cmd->options[i];
                i -= cmd->n_options;
                return i < COMMON__MAX ? &common_options[i] : NULL;
        }
        for (i = 0; i < cmd->n_options; i++)
                if (cmd->options[i].short_name == val)
                        return &cmd->options[i];
        for (i = 0; i < COMMON__MAX; i++)
                if (common_options[i].short_name == val)
                        return &common_options[i];
        return NULL;
}

static int set_common(const struct cli_command *cmd, const struct cli_option *o, const char *arg)
{
        enum log_level l;

        switch (o->id) {
        case COMMON_LOG_LEVEL:
        case COMMON_LOG_LEVEL_ALIAS:
                l = log_level_from_string(arg);
                if (l < 0)
                        return cli_usage_error(cmd,
                                               "invalid --%s '%s' (debug, info, warn or error)",
                                               o->name, arg);
                log_set_max_level(l);
                return 0;
        case COMMON_LOG_FORMAT:
        case COMMON_ZAP_ENCODER:
                if (streq(arg, "json"))
                        log_set_format(LOG_FORMAT_JSON);
                else if (streq(arg, o->id == COMMON_LOG_FORMAT ? "text" : "console"))
                        log_set_format(LOG_FORMAT_TEXT);
                else
                        return cli_usage_error(cmd, "invalid --%s '%s' (json or %s)", o->name, arg,
                                               o->id == COMMON_LOG_FORMAT ? "text" : "console");
                return 0;
        default:
                return -EINVAL;
        }
}

/* getopt_long's tables for the command's options followed by the common ones. */
static int getopt_tables(const struct cli_command *cmd, struct option **ret_longopts,
                         char **ret_shortopts)
{
        size_t n = cmd->n_options + COMMON__MAX;
        AUTOFREE struct option *longopts = calloc(n + 1, sizeof(*longopts));
        AUTOFREE char *shortopts = calloc(3 * n + 2, 1);
        size_t ns = 0;

        if (!longopts || !shortopts)
                return -ENOMEM;
        shortopts[ns++] = ':'; /* missing arguments as ':', not '?' */
        for (size_t i = 0; i < n; i++) {
                const struct cli_option *o = i < cmd->n_options
                                                     ? &cmd->options[i]
                                                     : &common_options[i - cmd->n_options];
                int has = o->arg == CLI_ARG_NONE       ? no_argument
                          : o->arg == CLI_ARG_REQUIRED ? required_argument
                                                       : optional_argument;

                longopts[i] = (struct option){ o->name, has, NULL, (int)(VAL_BASE + i) };
                if (o->short_name) {
                        shortopts[ns++] = (char)o->short_name;
                        if (has == required_argument)
                                shortopts[ns++] = ':';
                }
        }
        *ret_longopts = TAKE_PTR(longopts);
        *ret_shortopts = TAKE_PTR(shortopts);
        return 0;
}

/* The usage error for getopt's '?' (unknown option, argument not allowed) or ':' (missing). */
static int getopt_error(const struct cli_command *cmd, int c, char **argv)
{
        const struct cli_option *o = optopt ? option_of(cmd, optopt) : NULL;
        const char *a;

        if (c == ':' && o && optopt >= VAL_BASE)
                return cli_usage_error(cmd, "option '--%s' requires an argument", o->name);
        if (c == ':')
                return cli_usage_error(cmd, "option '-%c' requires an argument", optopt);
        if (o && optopt >= VAL_BASE)
                return cli_usage_error(cmd, "option '--%s' doesn't allow an argument", o->name);
        if (optopt)
                return cli_usage_error(cmd, "unknown option '-%c'", optopt);
        a = argv[optind - 1];
        return cli_usage_error(cmd, "unknown option '%.*s'", (int)strcspn(a, "="), a);
}

/* Applies one option. Returns 0, 1 after --help, or a negative errno after printing the error. */
static int apply_option(const struct cli_command *cmd, const struct cli_option *o, const char *arg,
                        void *userdata)
{
        char err[CLI_ERROR_MAX] = "";
        int r;

        if (o >= common_options && o < common_options + COMMON__MAX) {
                if (o->id == COMMON_HELP) {
                        cli_help(cmd, stdout);
                        return 1;
                }
                return set_common(cmd, o, arg);
        }
        r = cmd->set(userdata, o, arg, err, sizeof(err));
        if (r == -EINVAL) {
                if (err[0])
                        return cli_usage_error(cmd, "%s", err);
                return cli_usage_error(cmd, "invalid value for --%s: '%s'", o->name,
                                       arg ? arg : "");
        }
        if (r < 0) {
                (void)fprintf(stderr, "modelplane %s: --%s: %s\n", cmd->name, o->name,
                              err[0] ? err : errno_to_string(r));
                return r;
        }
        return 0;
}

int cli_parse(const struct cli_command *cmd, int argc, char **argv, void *userdata)
{
        AUTOFREE struct option *longopts = NULL;
        AUTOFREE char *shortopts = NULL;
        int c, r;

        r = getopt_tables(cmd, &longopts, &shortopts);
        if (r < 0) {
                (void)fprintf(stderr, "modelplane %s: out of memory\n", cmd->name);
                return r;
        }
        /* getopt's state is global: cli_parse() runs at start-up, before any thread */
        optind = 0; /* 0: glibc re-initialises, so that every call starts afresh */
        opterr = 0;
        for (;;) {
                const struct cli_option *o;

                /* NOLINTNEXTLINE(concurrency-mt-unsafe): start-up, single-threaded */
                c = getopt_long(argc, argv, shortopts, longopts, NULL);
                if (c < 0)
                        break;
                if (c == '?' || c == ':')
                        return getopt_error(cmd, c, argv);
                o = option_of(cmd, c);
                if (!o)
                        return cli_usage_error(cmd, "unknown option");
                r = apply_option(cmd, o, optarg, userdata);
                if (r != 0)
                        return r;
        }
        if (cmd->n_args > 0 && argc - optind != (int)cmd->n_args)
                return cli_usage_error(cmd, "expected %u arguments (%s), got %d", cmd->n_args,
                                       cmd->args_usage ? cmd->args_usage : "", argc - optind);
        if (cmd->n_args > 0) {
                for (unsigned i = 0; i < cmd->n_args; i++)
                        cmd->set_arg(userdata, i, argv[optind + (int)i]);
                return 0;
        }
        if (optind < argc)
                return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
        return 0;
}

int cli_parse_listen(const char *s, char **ret_host, uint16_t *ret_port)
{
        const char *colon = strrchr(s, ':');
        char *host;

        if (!colon || safe_atou16(colon + 1, ret_port) < 0)
                return -EINVAL;
        if (colon == s)
                host = strdup("0.0.0.0");
        else if (s[0] == '[' && colon > s + 1 && colon[-1] == ']')
                host = strndup(s + 1, (size_t)(colon - s - 2));
        else
                host = strndup(s, (size_t)(colon - s));
        if (!host)
                return -ENOMEM;
        *ret_host = host;
        return 0;
}

int cli_block_exit_signals(sigset_t *ret_mask)
{
        int r;

        (void)sigemptyset(ret_mask);
        (void)sigaddset(ret_mask, SIGTERM);
        (void)sigaddset(ret_mask, SIGINT);
        r = pthread_sigmask(SIG_BLOCK, ret_mask, NULL);
        (void)signal(SIGPIPE, SIG_IGN);
        return -r;
}
