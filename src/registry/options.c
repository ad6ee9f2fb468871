/* SPDX-License-Identifier: Apache-2.0 */
#include "registry/options.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/yaml-doc.h"
#include "store/store.h"
#include "util/cidr.h"
#include "util/file-util.h"
#include "util/parse-util.h"

#define CONFIG_FILE_MAX (1024U * 1024U)

enum opt_type {
        T_STRING,
        T_UINT,
        T_BOOL,
        T_SSLMODE,
};

struct opt_def {
        const char *name;  /* long flag = config key */
        const char *alias; /* another long flag (and config key) for the same option */
        char short_opt;
        enum opt_type type;
        uint64_t min, max; /* T_UINT */
        const char *def;   /* default as text; NULL = none */
        bool flag_only;    /* neither environment nor config file */
        const char *env[3];
};

static const struct opt_def defs[REG_OPT__MAX] = {
        [REG_OPT_HOSTNAME] = { "hostname",
                               NULL,
                               'n',
                               T_STRING,
                               0,
                               0,
                               "localhost",
                               false,
                               { "MR_HOSTNAME" } },
        [REG_OPT_PORT] = { "port",
                           NULL,
                           'p',
                           T_UINT,
                           0,
                           65535,
                           "8080",
                           false,
                           { "MODEL_REGISTRY_REST_SERVICE_PORT", "MR_PORT" } },
        [REG_OPT_DATASTORE_TYPE] = { "datastore-type",
                                     NULL,
                                     0,
                                     T_STRING,
                                     0,
                                     0,
                                     "embedmd",
                                     false,
                                     { "MODEL_REGISTRY_DATA_STORE_TYPE", "MR_DATASTORE_TYPE" } },
        [REG_OPT_DSN] = { "embedmd-database-dsn",
                          "database",
                          'd',
                          T_STRING,
                          0,
                          0,
                          "model-registry.db",
                          false,
                          { "MODELPLANE_REGISTRY_DSN", "MR_EMBEDMD_DATABASE_DSN" } },
        [REG_OPT_DB_TYPE] = { "embedmd-database-type",
                              NULL,
                              0,
                              T_STRING,
                              0,
                              0,
                              NULL,
                              false,
                              { "MR_EMBEDMD_DATABASE_TYPE" } },
        [REG_OPT_SSL_MODE] = { "embedmd-database-ssl-mode",
                               NULL,
                               0,
                               T_SSLMODE,
                               0,
                               0,
                               NULL,
                               false,
                               { "MR_EMBEDMD_DATABASE_SSL_MODE" } },
        [REG_OPT_SSL_CERT] = { "embedmd-database-ssl-cert",
                               NULL,
                               0,
                               T_STRING,
                               0,
                               0,
                               NULL,
                               false,
                               { "MR_EMBEDMD_DATABASE_SSL_CERT" } },
        [REG_OPT_SSL_KEY] = { "embedmd-database-ssl-key",
                              NULL,
                              0,
                              T_STRING,
                              0,
                              0,
                              NULL,
                              false,
                              { "MR_EMBEDMD_DATABASE_SSL_KEY" } },
        [REG_OPT_SSL_ROOT_CERT] = { "embedmd-database-ssl-root-cert",
                                    NULL,
                                    0,
                                    T_STRING,
                                    0,
                                    0,
                                    NULL,
                                    false,
                                    { "MR_EMBEDMD_DATABASE_SSL_ROOT_CERT" } },
        [REG_OPT_SSL_CA] = { "embedmd-database-ssl-ca",
                             NULL,
                             0,
                             T_STRING,
                             0,
                             0,
                             NULL,
                             false,
                             { "MR_EMBEDMD_DATABASE_SSL_CA" } },
        [REG_OPT_SSL_CIPHER] = { "embedmd-database-ssl-cipher",
                                 NULL,
                                 0,
                                 T_STRING,
                                 0,
                                 0,
                                 NULL,
                                 false,
                                 { "MR_EMBEDMD_DATABASE_SSL_CIPHER" } },
        [REG_OPT_SSL_VERIFY_SERVER_CERT] = { "embedmd-database-ssl-verify-server-cert",
                                             NULL,
                                             0,
                                             T_BOOL,
                                             0,
                                             0,
                                             "false",
                                             false,
                                             { "MR_EMBEDMD_DATABASE_SSL_VERIFY_SERVER_CERT" } },
        [REG_OPT_POOL_SIZE] = { "pool-size",
                                NULL,
                                0,
                                T_UINT,
                                1,
                                256,
                                "8",
                                false,
                                { "MR_POOL_SIZE" } },
        [REG_OPT_BODY_MAX] = { "body-max",
                               NULL,
                               0,
                               T_UINT,
                               1,
                               UINT64_C(1) << 40,
                               "4194304",
                               false,
                               { "MR_BODY_MAX" } },
        [REG_OPT_TLS_CERT_FILE] = { "tls-cert-file",
                                    NULL,
                                    0,
                                    T_STRING,
                                    0,
                                    0,
                                    NULL,
                                    false,
                                    { "MR_TLS_CERT_FILE" } },
        [REG_OPT_TLS_KEY_FILE] = { "tls-key-file",
                                   NULL,
                                   0,
                                   T_STRING,
                                   0,
                                   0,
                                   NULL,
                                   false,
                                   { "MR_TLS_KEY_FILE" } },
        [REG_OPT_MAX_CONNECTIONS_PER_IP] = { "max-connections-per-ip",
                                             NULL,
                                             0,
                                             T_UINT,
                                             0,
                                             65536,
                                             "256",
                                             false,
                                             { "MR_MAX_CONNECTIONS_PER_IP" } },
        [REG_OPT_TRUSTED_PROXY] = { "trusted-proxy",
                                    NULL,
                                    0,
                                    T_STRING,
                                    0,
                                    0,
                                    NULL,
                                    false,
                                    { "MR_TRUSTED_PROXY" } },
        [REG_OPT_WIPE] = { "wipe", NULL, 0, T_BOOL, 0, 0, "false", true, { NULL } },
};

/* An invalid setting (kind ERROR_INVALID, -EINVAL) whose message names where it came from. */
static void set_err(struct error_detail *err, const char *fmt, ...) _printf_(2, 3);
static void set_err(struct error_detail *err, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        (void)error_detail_setv(err, ERROR_INVALID, -EINVAL, NULL, fmt, ap);
        va_end(ap);
}

void reg_options_init(struct reg_options *o)
{
        *o = (struct reg_options){ .config_file = NULL };
}

void reg_options_release(struct reg_options *o)
{
        for (size_t i = 0; i < REG_OPT__MAX; i++) {
                free(o->value[i]);
                o->value[i] = NULL;
                o->source[i] = REG_SRC_DEFAULT;
        }
        free(o->config_file);
        o->config_file = NULL;
}

const char *reg_option_name(enum reg_opt opt)
{
        return defs[opt].name;
}

const char *reg_option_alias(enum reg_opt opt)
{
        return defs[opt].alias;
}

char reg_option_short(enum reg_opt opt)
{
        return defs[opt].short_opt;
}

bool reg_option_is_bool(enum reg_opt opt)
{
        return defs[opt].type == T_BOOL;
}

int reg_option_lookup(const char *name, enum reg_opt *ret)
{
        for (size_t i = 0; i < REG_OPT__MAX; i++)
                if (streq(name, defs[i].name) || (defs[i].alias && streq(name, defs[i].alias))) {
                        *ret = (enum reg_opt)i;
                        return 0;
                }
        return -ENOENT;
}

/* Checks value against the option's type; writes the normalised text to buf. */
static int normalise(enum reg_opt opt, const char *value, char *buf, size_t n, const char *origin,
                     struct error_detail *err)
{
        const struct opt_def *d = &defs[opt];

        switch (d->type) {
        case T_UINT: {
                uint64_t u;

                if (safe_atou64(value, &u) < 0 || u < d->min || u > d->max) {
                        set_err(err,
                                "%s: invalid value '%s': expected an integer from %llu to %llu",
                                origin, value, (unsigned long long)d->min,
                                (unsigned long long)d->max);
                        return -EINVAL;
                }
                (void)snprintf(buf, n, "%llu", (unsigned long long)u);
                return 0;
        }
        case T_BOOL: {
                bool b;

                if (parse_boolean(value, &b) < 0) {
                        set_err(err, "%s: invalid value '%s': expected a boolean (true or false)",
                                origin, value);
                        return -EINVAL;
                }
                (void)snprintf(buf, n, "%s", b ? "true" : "false");
                return 0;
        }
        case T_SSLMODE:
                if (!store_pg_sslmode_valid(value)) {
                        set_err(err,
                                "%s: invalid TLS mode '%s': expected one of disable, allow, "
                                "prefer, require, verify-ca, verify-full",
                                origin, value);
                        return -EINVAL;
                }
                break;
        case T_STRING:
                break;
        }
        return 1; /* keep value as given */
}

int reg_options_set(struct reg_options *o, enum reg_opt opt, const char *value,
                    enum reg_opt_source src, const char *origin, struct error_detail *err)
{
        char buf[32];
        char *copy;
        int r;

        if ((unsigned)opt >= REG_OPT__MAX || !value)
                return -EINVAL;
        r = normalise(opt, value, buf, sizeof(buf), origin, err);
        if (r < 0)
                return r;
        if (src < o->source[opt])
                return 0; /* a stronger source already set it */
        copy = strdup(r == 0 ? buf : value);
        if (!copy)
                return -ENOMEM;
        free(o->value[opt]);
        o->value[opt] = copy;
        o->source[opt] = src;
        return 0;
}

enum { ARG_BASE = 0x100, ARG_CONFIG = 0x200, ARG_HELP = 0x201 };

/* getopt_long()'s tables for defs: every name and alias, -c/--config and -h/--help. */
static void getopt_tables(struct option *longopts, char *shortopts, size_t shortopts_size)
{
        size_t n = 0, ns = 1;

        shortopts[0] = ':';
        for (size_t i = 0; i < REG_OPT__MAX; i++) {
                int has = defs[i].type == T_BOOL ? optional_argument : required_argument;

                longopts[n++] = (struct option){ defs[i].name, has, NULL, (int)(ARG_BASE + i) };
                if (defs[i].alias)
                        longopts[n++] = (struct option){ defs[i].alias, has, NULL,
                                                         (int)(ARG_BASE + i) };
                if (defs[i].short_opt) {
                        shortopts[ns++] = defs[i].short_opt;
                        shortopts[ns++] = ':';
                }
        }
        longopts[n++] = (struct option){ "config", required_argument, NULL, ARG_CONFIG };
        longopts[n++] = (struct option){ "help", no_argument, NULL, ARG_HELP };
        longopts[n] = (struct option){ NULL, 0, NULL, 0 };
        (void)snprintf(shortopts + ns, shortopts_size - ns, "c:h");
}

/* The option that getopt_long() returned as c; REG_OPT__MAX when it is none of defs. */
static size_t option_of(int c)
{
        size_t i;

        if (c >= ARG_BASE && c < ARG_BASE + REG_OPT__MAX)
                return (size_t)(c - ARG_BASE);
        for (i = 0; i < REG_OPT__MAX && defs[i].short_opt != c; i++)
                ;
        return i;
}

/* What getopt_long() refused (c is ':' or '?'), as a message. */
static int getopt_refusal(int c, char **argv, struct error_detail *err)
{
        if (c == ':')
                set_err(err, "option '%s' requires an argument", argv[optind - 1]);
        else if (optopt && optopt < ARG_BASE)
                set_err(err, "unknown option '-%c'", optopt);
        else
                set_err(err, "unknown option '%s'", argv[optind - 1]);
        return -EINVAL;
}

/* One option getopt_long() returned: 1 for help, 0 when taken, < 0 on error. */
static int take_arg(struct reg_options *o, int c, char **argv, struct error_detail *err)
{
        char origin[96];
        size_t i;

        if (c == ARG_HELP || c == 'h')
                return 1;
        if (c == ARG_CONFIG || c == 'c') {
                free(o->config_file);
                o->config_file = strdup(optarg);
                return o->config_file ? 0 : -ENOMEM;
        }
        if (c == ':' || c == '?')
                return getopt_refusal(c, argv, err);
        i = option_of(c);
        if (i == REG_OPT__MAX)
                return -EINVAL;
        (void)snprintf(origin, sizeof(origin), "--%s", defs[i].name);
        return reg_options_set(o, (enum reg_opt)i, optarg ? optarg : "true", REG_SRC_FLAG, origin,
                               err);
}

int reg_options_parse_args(struct reg_options *o, int argc, char **argv, struct error_detail *err)
{
        struct option longopts[2 * REG_OPT__MAX + 3];
        char shortopts[64];
        int c, r;

        getopt_tables(longopts, shortopts, sizeof(shortopts));
        optind = 1;
        opterr = 0;
        for (;;) {
                /* getopt's state is process-global by design: this runs once, from main(),
                 * before any thread starts (options.h). */
                /* NOLINTNEXTLINE(concurrency-mt-unsafe) */
                c = getopt_long(argc, argv, shortopts, longopts, NULL);
                if (c < 0)
                        break;
                r = take_arg(o, c, argv, err);
                if (r != 0)
                        return r;
        }
        if (optind < argc) {
                set_err(err, "unexpected argument '%s'", argv[optind]);
                return -EINVAL;
        }
        return 0;
}

int reg_options_load_env(struct reg_options *o, const char *(*lookup)(const char *name),
                         struct error_detail *err)
{
        for (size_t i = 0; i < REG_OPT__MAX; i++) {
                if (defs[i].flag_only)
                        continue;
                for (size_t k = 0; k < ELEMENTSOF(defs[i].env) && defs[i].env[k]; k++) {
                        const char *v = lookup(defs[i].env[k]);
                        char origin[96];
                        int r;

                        if (!v || !*v)
                                continue;
                        (void)snprintf(origin, sizeof(origin), "environment variable %s",
                                       defs[i].env[k]);
                        r = reg_options_set(o, (enum reg_opt)i, v, REG_SRC_ENV, origin, err);
                        if (r < 0)
                                return r;
                        break; /* the first non-empty variable wins */
                }
        }
        return 0;
}

/* The config file's bounds: a small mapping of scalars. */
static const struct yaml_limits config_limits = {
        .size_max = (size_t)CONFIG_FILE_MAX,
        .depth_max = 8,
        .nodes_max = (size_t)64 * 1024,
        .cpu_usec_max = 2ULL * 1000000ULL,
};

/* One key of the config file's mapping: the option it names, its value, refusals in err. */
static int load_pair(struct reg_options *o, struct ydoc *d, const yaml_node_pair_t *p, bool *seen,
                     struct error_detail *err)
{
        const yaml_node_t *k = ydoc_node(d, p->key);
        const yaml_node_t *v = ydoc_node(d, p->value);
        const char *key = ynode_scalar(k), *path = d->file;
        char origin[REG_OPTIONS_ERROR_MAX / 2];
        enum reg_opt opt;

        if (!k || !v)
                return -EINVAL;
        if (!key) {
                set_err(err, "%s:%u: option names must be plain strings", path, ynode_line(k));
                return -EINVAL;
        }
        if (reg_option_lookup(key, &opt) < 0 || defs[opt].flag_only) {
                set_err(err, "%s:%u: unknown key '%.128s'", path, ynode_line(k), key);
                return -EINVAL;
        }
        if (seen[opt]) {
                set_err(err, "%s:%u: key '%.128s': option '%s' is set twice", path, ynode_line(k),
                        key, defs[opt].name);
                return -EINVAL;
        }
        seen[opt] = true;
        (void)snprintf(origin, sizeof(origin), "%s:%u: key '%s'", path, ynode_line(v),
                       defs[opt].name);
        if (v->type != YAML_SCALAR_NODE) {
                set_err(err, "%s: expected a single value, got a %s", origin,
                        v->type == YAML_MAPPING_NODE ? "mapping" : "list");
                return -EINVAL;
        }
        if (ynode_is_null(v))
                return 0;
        return reg_options_set(o, opt, ynode_scalar(v), REG_SRC_CONFIG, origin, err);
}

static int load_mapping(struct reg_options *o, struct ydoc *d, struct error_detail *err)
{
        yaml_node_t *root = ydoc_root(d);
        bool seen[REG_OPT__MAX] = { false };

        if (!root || ynode_is_null(root))
                return 0; /* empty file */
        if (root->type != YAML_MAPPING_NODE) {
                set_err(err, "%s:%u: expected a mapping of option names to values", d->file,
                        ynode_line(root));
                return -EINVAL;
        }
        for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
             p++) {
                int r = load_pair(o, d, p, seen, err);

                if (r < 0)
                        return r;
        }
        return 0;
}

/* The words of a file that cannot be read, by errno (read_file_bounded()). */
static int read_refused(const char *path, int r, struct error_detail *err)
{
        char msg[128];

        if (r == -EINVAL)
                set_err(err, "%s: not a regular file", path);
        else if (r == -EFBIG)
                set_err(err, "%s: config file too large (limit %u bytes)", path, CONFIG_FILE_MAX);
        else
                set_err(err, "%s: cannot read config file: %s", path,
                        strerror_r(-r, msg, sizeof(msg)));
        if (err)
                err->error = r;
        return r;
}

int reg_options_load_file(struct reg_options *o, const char *path, struct error_detail *err)
{
        AUTOFREE char *data = NULL;
        struct error_detail yerr = { 0 };
        struct ydoc d;
        size_t len = 0;
        int r;

        r = read_file_bounded(path, (size_t)CONFIG_FILE_MAX, READ_FILE_REGULAR, &data, &len, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return read_refused(path, r, err);
        r = ydoc_load(&d, path, data, len, &config_limits, &yerr);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                char msg[sizeof(yerr.message) + 64];

                set_err(err, "%s", error_detail_format(&yerr, msg, sizeof(msg)));
                return -EINVAL;
        }
        r = load_mapping(o, &d, err);
        ydoc_release(&d);
        return r;
}

static const char *source_name(enum reg_opt_source src)
{
        switch (src) {
        case REG_SRC_FLAG:
                return "command line";
        case REG_SRC_ENV:
                return "environment";
        case REG_SRC_CONFIG:
                return "config file";
        case REG_SRC_DEFAULT:
                break;
        }
        return "default";
}

int reg_options_check(const struct reg_options *o, struct error_detail *err)
{
        const char *cert = reg_options_str(o, REG_OPT_TLS_CERT_FILE);
        const char *key = reg_options_str(o, REG_OPT_TLS_KEY_FILE);
        bool has_cert = cert && *cert, has_key = key && *key;

        if (has_cert != has_key) {
                enum reg_opt given = has_cert ? REG_OPT_TLS_CERT_FILE : REG_OPT_TLS_KEY_FILE;
                enum reg_opt missing = has_cert ? REG_OPT_TLS_KEY_FILE : REG_OPT_TLS_CERT_FILE;

                set_err(err,
                        "--%s (from the %s) needs --%s too: HTTPS takes a certificate and its "
                        "key (flags, MR_TLS_CERT_FILE/MR_TLS_KEY_FILE or the config file)",
                        defs[given].name, source_name(o->source[given]), defs[missing].name);
                return -EINVAL;
        }
        return reg_options_trusted_proxies(o, NULL, NULL, err);
}

int reg_options_trusted_proxies(const struct reg_options *o, struct cidr **ret, size_t *ret_n,
                                struct error_detail *err)
{
        const char *list = reg_options_str(o, REG_OPT_TRUSTED_PROXY);
        AUTOFREE struct cidr *v = NULL;
        size_t n = 0;
        int r;

        if (list) {
                r = cidr_list_parse(list, &v, &n);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        set_err(err,
                                "invalid --trusted-proxy '%s' (from the %s)%s: a comma list of "
                                "addresses or CIDR ranges such as 10.0.0.0/8, fd00::/8",
                                list, source_name(o->source[REG_OPT_TRUSTED_PROXY]),
                                r == -E2BIG ? ": more than 64 ranges" : "");
                        return -EINVAL;
                }
        }
        if (ret) {
                *ret = TAKE_PTR(v);
                *ret_n = n;
        }
        return 0;
}

const char *reg_options_str(const struct reg_options *o, enum reg_opt opt)
{
        return o->value[opt] ? o->value[opt] : defs[opt].def;
}

uint64_t reg_options_uint(const struct reg_options *o, enum reg_opt opt)
{
        const char *s = reg_options_str(o, opt);
        uint64_t u = 0;

        return s && safe_atou64(s, &u) >= 0 ? u : 0;
}

bool reg_options_bool(const struct reg_options *o, enum reg_opt opt)
{
        const char *s = reg_options_str(o, opt);

        return s && streq(s, "true");
}

enum reg_opt_source reg_options_source(const struct reg_options *o, enum reg_opt opt)
{
        return o->source[opt];
}

const char *reg_options_sslrootcert(const struct reg_options *o)
{
        const char *root = reg_options_str(o, REG_OPT_SSL_ROOT_CERT);

        return root && *root ? root : reg_options_str(o, REG_OPT_SSL_CA);
}

const char *reg_options_sslmode(const struct reg_options *o)
{
        static const enum reg_opt files[] = { REG_OPT_SSL_CERT, REG_OPT_SSL_KEY,
                                              REG_OPT_SSL_ROOT_CERT, REG_OPT_SSL_CA };
        const char *mode = reg_options_str(o, REG_OPT_SSL_MODE);

        if (mode && *mode)
                return mode;
        if (reg_options_bool(o, REG_OPT_SSL_VERIFY_SERVER_CERT))
                return "verify-full";
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                const char *v = reg_options_str(o, files[i]);

                if (v && *v)
                        return "require";
        }
        return NULL;
}
