/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The settings of `modelplane registry`, from four sources: a command-line flag, environment
 * variables, a YAML config file (`--config FILE`, as upstream's cobra/viper: a mapping whose
 * keys are the long flag names) and the built-in default. Precedence, per option:
 * flag > environment > config file > default, whatever order the sources are read in.
 *
 * One table (options.c) lists every option: its long name (= config key), an alias, a short
 * letter, its type and range, and the environment variables read for it (upstream's viper
 * names MR_<NAME>, plus the ConfigMap/legacy names; the first non-empty one wins). Values are
 * checked when set — a wrong type from any source is an error naming where it came from
 * ("FILE:LINE: key 'port': …", "environment variable MR_PORT: …", "--port: …") — and kept as
 * normalised text.
 *
 * No logging and no exit: errors are returned (negative errno) with a message in the caller's
 * buffer.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/cidr.h"
#include "util/error-detail.h"
#include "util/macro.h"

enum reg_opt {
        REG_OPT_HOSTNAME,
        REG_OPT_PORT,
        REG_OPT_DATASTORE_TYPE,
        REG_OPT_DSN, /* --embedmd-database-dsn, alias --database */
        REG_OPT_DB_TYPE,
        REG_OPT_SSL_MODE,
        REG_OPT_SSL_CERT,
        REG_OPT_SSL_KEY,
        REG_OPT_SSL_ROOT_CERT,
        REG_OPT_SSL_CA,
        REG_OPT_SSL_CIPHER,
        REG_OPT_SSL_VERIFY_SERVER_CERT,
        REG_OPT_POOL_SIZE,
        REG_OPT_BODY_MAX,
        REG_OPT_TLS_CERT_FILE, /* HTTPS: both or neither, see reg_options_check() */
        REG_OPT_TLS_KEY_FILE,
        REG_OPT_MAX_CONNECTIONS_PER_IP, /* 0: no limit */
        REG_OPT_TRUSTED_PROXY, /* CIDR list (util/cidr.h), checked by reg_options_check() */
        REG_OPT_WIPE,          /* command line only */
        REG_OPT__MAX,
};

enum reg_opt_source {
        REG_SRC_DEFAULT,
        REG_SRC_CONFIG,
        REG_SRC_ENV,
        REG_SRC_FLAG,
};

struct reg_options {
        char *value[REG_OPT__MAX]; /* owned normalised text; NULL = the default applies */
        enum reg_opt_source source[REG_OPT__MAX];
        char *config_file; /* owned: the --config argument, NULL when not given */
};

#define REG_OPTIONS_ERROR_MAX 768

/* Releases the values; o may be reused after reg_options_init(). */
void reg_options_release(struct reg_options *o);
void reg_options_init(struct reg_options *o);

/* The long name (= config key) of opt. */
const char *reg_option_name(enum reg_opt opt);
/* The command-line shape of opt, for a parser built from the table (src/cmd/cli.h): its alias
 * (NULL when none), its short letter (0 when none), and whether it is a boolean
 * (--name[=BOOL]; the others take a value). */
const char *reg_option_alias(enum reg_opt opt);
char reg_option_short(enum reg_opt opt);
bool reg_option_is_bool(enum reg_opt opt);
/* Looks an option up by long name or alias; -ENOENT when unknown. */
_warn_unused_result_ int reg_option_lookup(const char *name, enum reg_opt *ret);

/*
 * Sets opt from src when src ranks at least as high as the current value's source. The value is
 * checked against the option's type either way; origin names the source in the error message
 * ("--port", "environment variable MR_PORT", "FILE:LINE: key 'port'"). -EINVAL with err.
 */
_warn_unused_result_ int reg_options_set(struct reg_options *o, enum reg_opt opt, const char *value,
                                         enum reg_opt_source src, const char *origin,
                                         struct error_detail *err);

/*
 * Parses the command line (getopt_long, whose state is process-global: call it from main()
 * before threads start; argv[0] is the subcommand). Returns 0, 1 when --help
 * was given, or -EINVAL with err (unknown flag, bad value, stray argument).
 */
_warn_unused_result_ int reg_options_parse_args(struct reg_options *o, int argc, char **argv,
                                                struct error_detail *err);

/* Reads the environment through lookup (getenv in production). -EINVAL with err. */
_warn_unused_result_ int reg_options_load_env(struct reg_options *o,
                                              const char *(*lookup)(const char *name),
                                              struct error_detail *err);

/*
 * Reads the YAML config file at path: one mapping of option names to scalars. Unknown keys,
 * duplicate keys, non-scalar values, wrong types and YAML syntax errors are -EINVAL with
 * "PATH:LINE: …" in err; an unreadable file is -errno with "PATH: …". A null value (`key:`)
 * leaves the option unset. Files over 1 MiB are refused (-EFBIG).
 */
_warn_unused_result_ int reg_options_load_file(struct reg_options *o, const char *path,
                                               struct error_detail *err);

/*
 * Checks what no single value can show, once every source has been read: --tls-cert-file and
 * --tls-key-file come together (from any sources) or not at all; --trusted-proxy is a CIDR list.
 * -EINVAL with err naming the missing option and where the other one came from.
 */
_warn_unused_result_ int reg_options_check(const struct reg_options *o, struct error_detail *err);

/* --trusted-proxy parsed (util/cidr.h): a new array in *ret (NULL, *ret_n 0 when unset); ret
 * NULL only checks. -EINVAL with err naming the list and where it came from. */
_warn_unused_result_ int reg_options_trusted_proxies(const struct reg_options *o, struct cidr **ret,
                                                     size_t *ret_n, struct error_detail *err);

/* Typed getters; unset options give the table's default. */
const char *reg_options_str(const struct reg_options *o, enum reg_opt opt);
uint64_t reg_options_uint(const struct reg_options *o, enum reg_opt opt);
bool reg_options_bool(const struct reg_options *o, enum reg_opt opt);
enum reg_opt_source reg_options_source(const struct reg_options *o, enum reg_opt opt);

/*
 * The libpq sslmode that the TLS options give, as upstream maps them: the explicit
 * --embedmd-database-ssl-mode when set; else verify-full with
 * --embedmd-database-ssl-verify-server-cert; else require when a certificate, key, root
 * certificate or CA is given; else NULL (the DSN's or libpq's default, "prefer").
 * The root certificate is --embedmd-database-ssl-root-cert, else --embedmd-database-ssl-ca.
 */
const char *reg_options_sslmode(const struct reg_options *o);
const char *reg_options_sslrootcert(const struct reg_options *o);
