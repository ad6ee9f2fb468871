/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * One command line for every subcommand (controller, webhook, registry, catalog, agent ...).
 *
 * A subcommand describes its options in a table; cli_parse() runs getopt_long over the table
 * plus the common options every subcommand has, calls the subcommand's set() for each of its
 * options in command-line order, and handles the common ones itself:
 *
 *   --zap-log-level LEVEL   debug, info, warn, error (controller-runtime's name)
 *   --log-level LEVEL       alias of --zap-log-level
 *   --log-format FORMAT     json or text (--zap-encoder json|console is accepted too)
 *   -h, --help              the help, generated from the table: every flag is listed
 *
 * Usage errors (unknown option, missing or bad value, stray argument) are printed in one format,
 *   modelplane SUBCOMMAND: MESSAGE
 *   Try 'modelplane SUBCOMMAND --help'.
 * and give exit status 2 (cli_exit_status()).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>

enum cli_arg {
        CLI_ARG_NONE,
        CLI_ARG_REQUIRED,
        CLI_ARG_OPTIONAL, /* --name or --name=VALUE (booleans: --leader-elect[=false]) */
};

struct cli_option {
        const char *name; /* long name without "--" */
        int short_name;   /* a letter, or 0 */
        enum cli_arg arg;
        const char *metavar; /* "PATH" in --help; NULL when the option takes no value */
        const char *help;    /* "\n" starts an indented continuation line */
        int id;              /* handed to set(); any value the subcommand likes */
};

#define CLI_ERROR_MAX 512

struct cli_command {
        const char *name;     /* "controller" */
        const char *synopsis; /* printed after the usage line; may be NULL */
        const struct cli_option *options;
        size_t n_options;
        const char *epilog; /* printed after the options; may be NULL */
        /*
         * Called for each of the subcommand's options (arg is NULL when none was given). Returns
         * 0, or a negative errno: -EINVAL is a usage error with the message written to err (when
         * err is left empty, "invalid value for --NAME: 'ARG'" is used); other errors exit 1.
         */
        int (*set)(void *userdata, const struct cli_option *opt, const char *arg, char *err,
                   size_t err_size);
        /* Positional arguments: exactly n_args of them (0: none allowed), named args_usage in
         * the usage line ("SRC DST"), each handed to set_arg(userdata, index, arg). */
        unsigned n_args;
        const char *args_usage;
        void (*set_arg)(void *userdata, unsigned index, const char *arg);
};

/*
 * Parses argv (argv[0] is the subcommand's name). Returns 0 to go on, 1 when the help was
 * printed (exit 0), or a negative errno after printing the error (cli_exit_status()).
 */
int cli_parse(const struct cli_command *cmd, int argc, char **argv, void *userdata);

/* The exit status for cli_parse()'s result: 0 after --help, 2 for a usage error, else 1. */
int cli_exit_status(int r);

/* Writes the generated help (stdout for --help). */
void cli_help(const struct cli_command *cmd, FILE *f);

/*
 * Prints a usage error found after parsing (a missing required option, two options that
 * conflict) in the one format. Returns -EINVAL.
 */
int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/*
 * A listen address "HOST:PORT", "[V6]:PORT" or ":PORT" (host 0.0.0.0): *ret_host is a new
 * string. -EINVAL for a missing or bad port.
 */
int cli_parse_listen(const char *s, char **ret_host, uint16_t *ret_port);

/* A boolean option value: NULL (flag given alone) is true; else parse_boolean() rules. */
int cli_parse_bool(const char *arg, bool *ret);

/*
 * Blocks SIGTERM and SIGINT (for sigwait() on *ret_mask) and ignores SIGPIPE. Call before any
 * thread starts, so that every thread inherits the mask. Returns 0 or a negative errno.
 */
int cli_block_exit_signals(sigset_t *ret_mask);
