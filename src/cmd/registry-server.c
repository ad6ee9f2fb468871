/* SPDX-License-Identifier: Apache-2.0 */
/*
 * modelplane registry: the Kubeflow Model Registry REST server (spec Part B) on SQLite (default)
 * or PostgreSQL. Flags follow the upstream `model-registry proxy` command; the ConfigMap
 * variables MODEL_REGISTRY_REST_SERVICE_PORT / MODEL_REGISTRY_DATA_STORE_TYPE are read too.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "http/server.h"
#include "registry/options.h"
#include "registry/registry.h"
#include "store/entity.h"
#include "store/store.h"
#include "util/log.h"
#include "util/parse-util.h"
#include "util/time-util.h"

/* Help text per option, in the table's order (registry/options.c holds names and types). */
static const struct {
        const char *metavar, *help;
} reg_help[REG_OPT__MAX] = {
        [REG_OPT_HOSTNAME] = { "HOST", "listen address (default localhost = 127.0.0.1;\n"
                                       "env MR_HOSTNAME)" },
        [REG_OPT_PORT] = { "PORT", "listen port, 0 = any free port (default 8080;\n"
                                   "env MODEL_REGISTRY_REST_SERVICE_PORT, MR_PORT)" },
        [REG_OPT_DATASTORE_TYPE] = { "TYPE", "only 'embedmd' (env MODEL_REGISTRY_DATA_STORE_TYPE,\n"
                                             "MR_DATASTORE_TYPE)" },
        [REG_OPT_DSN] = { "DSN", "SQLite file (default ./model-registry.db),\n"
                                 "postgres://… or libpq key=value (env\n"
                                 "MODELPLANE_REGISTRY_DSN, MR_EMBEDMD_DATABASE_DSN)" },
        [REG_OPT_DB_TYPE] = { "T", "accepted and ignored (the DSN decides)" },
        [REG_OPT_SSL_MODE] = { "MODE", "PostgreSQL sslmode: disable, allow, prefer, require,\n"
                                       "verify-ca or verify-full (default: the DSN's\n"
                                       "sslmode, else libpq's 'prefer')" },
        [REG_OPT_SSL_CERT] = { "FILE", "client certificate (sslmode require)" },
        [REG_OPT_SSL_KEY] = { "FILE", "client key (sslmode require)" },
        [REG_OPT_SSL_ROOT_CERT] = { "FILE", "CA certificates (sslmode require)" },
        [REG_OPT_SSL_CA] = { "FILE", "same, when --embedmd-database-ssl-root-cert is not given" },
        [REG_OPT_SSL_CIPHER] = { "LIST", "accepted and ignored (libpq has none)" },
        [REG_OPT_SSL_VERIFY_SERVER_CERT] = { "BOOL", "sslmode verify-full" },
        [REG_OPT_POOL_SIZE] = { "N", "database connections, 1-256 (default 8; env MR_POOL_SIZE)" },
        [REG_OPT_BODY_MAX] = { "BYTES", "request body limit, larger bodies get 413\n"
                                        "(default 4 MiB; env MR_BODY_MAX)" },
        [REG_OPT_TLS_CERT_FILE] = { "FILE", "serve HTTPS with this PEM certificate (chain, leaf\n"
                                            "first); needs --tls-key-file (env MR_TLS_CERT_FILE)" },
        [REG_OPT_TLS_KEY_FILE] = { "FILE", "its PEM private key (env MR_TLS_KEY_FILE). TLS 1.2+;\n"
                                           "both files are re-read when they change (rotation)" },
        [REG_OPT_MAX_CONNECTIONS_PER_IP] = { "N",
                                             "concurrent connections from one client address,\n"
                                             "more get 429 with Retry-After; 0 = no limit\n"
                                             "(default 256; env MR_MAX_CONNECTIONS_PER_IP)" },
        [REG_OPT_TRUSTED_PROXY] = { "CIDRS", "client addresses exempt from that limit (proxies,\n"
                                             "ingresses: comma list of CIDRs; env\n"
                                             "MR_TRUSTED_PROXY)" },
        [REG_OPT_WIPE] = { NULL, "delete all stored entities at start (tests;\n"
                                 "command line only)" },
};

#define REG_ARG_CONFIG REG_OPT__MAX

static const char registry_epilog[] =
        "PostgreSQL TLS options read the environment as MR_<NAME>, e.g.\n"
        "MR_EMBEDMD_DATABASE_SSL_MODE.\n"
        "Precedence: command-line flag > environment variable > config file > default.\n"
        "The listener starts at once; until the database is connected and migrated\n"
        "every request gets 503, and a PostgreSQL that does not answer yet is retried\n"
        "(backoff up to 30 s). 'listening on HOST:PORT' is printed on stdout once ready.\n"
        "While PostgreSQL is unreachable, requests get 503 and /readyz/* reports not\n"
        "ready; the server reconnects by itself when the database is back.\n"
        "Each request is logged at info (method, path, status, duration, bytes).";

static int registry_set(void *userdata, const struct cli_option *opt, const char *arg, char *err,
                        size_t err_size)
{
        struct reg_options *o = userdata;
        char origin[96];

        if (opt->id == REG_ARG_CONFIG) {
                free(o->config_file);
                o->config_file = strdup(arg);
                return o->config_file ? 0 : -ENOMEM;
        }
        struct error_detail e = { 0 };
        int r;

        (void)snprintf(origin, sizeof(origin), "--%s", reg_option_name((enum reg_opt)opt->id));
        r = reg_options_set(o, (enum reg_opt)opt->id, arg ? arg : "true", REG_SRC_FLAG, origin, &e);
        if (r < 0)
                (void)snprintf(err, err_size, "%s", e.message);
        return r;
}

static const struct cli_command registry_cli_base = {
        .name = "registry",
        .synopsis = "Serves the Kubeflow Model Registry REST API v1alpha3.",
        .epilog = registry_epilog,
        .set = registry_set,
};

static const char *env_lookup(const char *name)
{
        /* start-up, before any thread */
        return getenv(name); /* NOLINT(concurrency-mt-unsafe) */
}

/* Reads flags, environment and the config file; exit status or -1 to go on. */
static int load_options(struct reg_options *o, int argc, char **argv)
{
        struct cli_option opts[2 * REG_OPT__MAX + 1];
        struct cli_command cli = registry_cli_base;
        struct error_detail err = { 0 };
        char alias_help[REG_OPT__MAX][96];
        const char *config;
        char home_config[4096];
        size_t n = 0;
        int r;

        /* The command line from the options table: every option, its alias, --config. */
        for (size_t i = 0; i < REG_OPT__MAX; i++) {
                enum cli_arg a = reg_option_is_bool(i) ? CLI_ARG_OPTIONAL : CLI_ARG_REQUIRED;
                const char *alias = reg_option_alias(i);

                opts[n++] = (struct cli_option){ reg_option_name(i),
                                                 reg_option_short(i),
                                                 a,
                                                 reg_help[i].metavar     ? reg_help[i].metavar
                                                 : a == CLI_ARG_OPTIONAL ? "BOOL"
                                                                         : "VALUE",
                                                 reg_help[i].help,
                                                 (int)i };
                if (alias) {
                        (void)snprintf(alias_help[i], sizeof(alias_help[i]), "same as --%s",
                                       reg_option_name(i));
                        opts[n++] = (struct cli_option){
                                alias, 0, a, reg_help[i].metavar, alias_help[i], (int)i
                        };
                }
        }
        opts[n++] = (struct cli_option){ "config",
                                         'c',
                                         CLI_ARG_REQUIRED,
                                         "FILE",
                                         "YAML file whose keys are the long option names\n"
                                         "(default ~/.model-registry.yaml when it exists)",
                                         REG_ARG_CONFIG };
        cli.options = opts;
        cli.n_options = n;
        r = cli_parse(&cli, argc, argv, o);
        if (r != 0)
                return cli_exit_status(r);
        r = reg_options_load_env(o, env_lookup, &err);
        if (r < 0) {
                fprintf(stderr, "modelplane registry: %s\n", err.message);
                return 2;
        }
        config = o->config_file;
        if (!config) {
                /* upstream's default; optional */
                const char *home = getenv("HOME"); /* NOLINT(concurrency-mt-unsafe): start-up */

                if (home && *home &&
                    (size_t)snprintf(home_config, sizeof(home_config), "%s/.model-registry.yaml",
                                     home) < sizeof(home_config) &&
                    access(home_config, F_OK) == 0)
                        config = home_config;
        }
        if (config) {
                r = reg_options_load_file(o, config, &err);
                if (r < 0) {
                        fprintf(stderr, "modelplane registry: %s\n",
                                err.message[0] ? err.message : "out of memory");
                        return 2;
                }
        }
        r = reg_options_check(o, &err);
        if (r < 0)
                return cli_exit_status(cli_usage_error(&cli, "%s", err.message));
        return -1;
}

/*
 * Until the datastore is connected and migrated, every request gets upstream's 503 (spec B.1
 * startup sequence: the listener starts at once, the real router is installed afterwards).
 */
#define DATASTORE_DOWN_TEXT                                                                      \
        "Datastore service is down or unavailable. Please check that the database is reachable " \
        "and try again later.\n"
#define CONNECT_BACKOFF_MAX (30 * USEC_PER_SEC)

struct gate {
        _Atomic(struct registry *) reg;
        _Atomic uint64_t responses[5]; /* by status class: 1xx .. 5xx */
};

/* GET /metrics: the responses by status class, in the Prometheus text format. */
static int gate_metrics(struct gate *g, struct http_resp *resp)
{
        char text[1024];
        size_t n;

        n = (size_t)
                snprintf(text, sizeof(text),
                         "# HELP modelplane_registry_http_responses_total HTTP responses of the "
                         "registry API by status class.\n"
                         "# TYPE modelplane_registry_http_responses_total counter\n");
        for (size_t i = 0; i < ELEMENTSOF(g->responses) && n < sizeof(text); i++)
                n += (size_t)snprintf(text + n, sizeof(text) - n,
                                      "modelplane_registry_http_responses_total{code=\"%zuxx\"} "
                                      "%" PRIu64 "\n",
                                      i + 1, atomic_load(&g->responses[i]));
        http_resp_set_text(resp, 200, "text/plain; version=0.0.4; charset=utf-8", text);
        return 0;
}

/*
 * Every request: the API (or 503 until the datastore is ready), then one access-log line
 * (method, path, status, duration, bytes) at info, at warn for a 5xx, and the count of its
 * status class for /metrics. A handler error becomes the server's 500, logged as such.
 */
static int gate_handle(void *userdata, struct http_req *req, struct http_resp *resp)
{
        struct gate *g = userdata;
        struct registry *reg = atomic_load(&g->reg);
        usec_t start = now_monotonic(), took;
        unsigned status;
        int r = 0;

        if (streq(req->path, "/metrics") && streq(req->method, "GET"))
                return gate_metrics(g, resp);
        if (reg)
                r = registry_handle(reg, req, resp);
        else
                http_resp_set_text(resp, 503, "text/plain; charset=utf-8", DATASTORE_DOWN_TEXT);
        status = r < 0 ? 500 : resp->status;
        took = now_monotonic() - start;
        if (status >= 100 && status < 600)
                atomic_fetch_add(&g->responses[status / 100 - 1], 1);
        log_emit(status >= 500 ? LOG_LEVEL_WARN : LOG_LEVEL_INFO, r < 0 ? r : 0, NULL,
                 "registry: %s %s status=%u duration_ms=%.3f bytes=%zu", req->method, req->path,
                 status, (double)took / 1000.0, r < 0 ? (size_t)0 : resp->body.len);
        return r;
}

/*
 * Opens the datastore; while no PostgreSQL server answers (-EHOSTDOWN: a pod that starts before
 * its database), retries with backoff up to 30 s instead of exiting into a crash loop. Returns
 * 1 when a termination signal arrived meanwhile.
 */
static int open_datastore(const char *dsn, struct store_open_options *so, const sigset_t *mask,
                          struct store **ret)
{
        usec_t backoff = USEC_PER_SEC;

        for (;;) {
                struct timespec ts;
                int r = store_open_with(dsn, so, ret), sig;

                if (r != -EHOSTDOWN)
                        return r;
                log_warn("registry: database not reachable (%s), retrying in %us; answering 503 "
                         "meanwhile",
                         so->error && so->error[0] ? so->error : "no answer",
                         (unsigned)(backoff / USEC_PER_SEC));
                ts = (struct timespec){ .tv_sec = (time_t)(backoff / USEC_PER_SEC) };
                sig = sigtimedwait(mask, NULL, &ts);
                if (sig == SIGTERM || sig == SIGINT)
                        return 1;
                backoff = MIN(backoff * 2, CONNECT_BACKOFF_MAX);
        }
}

/* What cmd_registry reads from its options (borrowed from them). */
struct serve_settings {
        const char *host, *datastore, *dsn, *tls_cert, *tls_key;
        uint16_t port;
        bool wipe;
};

/* Step 1 of cmd_registry: the settings, and the database connection options into *so. */
static void read_settings(const struct reg_options *opts, struct serve_settings *ret,
                          struct store_open_options *so)
{
        *ret = (struct serve_settings){
                .host = reg_options_str(opts, REG_OPT_HOSTNAME),
                .port = (uint16_t)reg_options_uint(opts, REG_OPT_PORT),
                .datastore = reg_options_str(opts, REG_OPT_DATASTORE_TYPE),
                .dsn = reg_options_str(opts, REG_OPT_DSN),
                .wipe = reg_options_bool(opts, REG_OPT_WIPE),
                .tls_cert = reg_options_str(opts, REG_OPT_TLS_CERT_FILE),
                .tls_key = reg_options_str(opts, REG_OPT_TLS_KEY_FILE),
        };
        if (!ret->tls_cert || !*ret->tls_cert || !ret->tls_key || !*ret->tls_key)
                ret->tls_cert = ret->tls_key = NULL; /* reg_options_check(): both or neither */
        if (streq(ret->host, "localhost"))
                ret->host = "127.0.0.1";
        so->n_conns = (unsigned)reg_options_uint(opts, REG_OPT_POOL_SIZE);
        so->tls = (struct store_pg_tls){
                .sslmode = reg_options_sslmode(opts),
                .sslcert = reg_options_str(opts, REG_OPT_SSL_CERT),
                .sslkey = reg_options_str(opts, REG_OPT_SSL_KEY),
                .sslrootcert = reg_options_sslrootcert(opts),
        };
}

/* Step 2: listen (HTTP or HTTPS); every request gets 503 until the gate has a registry. */
static int start_http(const struct reg_options *opts, const struct serve_settings *set,
                      struct gate *gate, struct http_server **ret)
{
        struct http_server_config cfg = {
                HTTP_SERVER_CONFIG_DEFAULTS,
                .handler = gate_handle,
                .userdata = gate,
                .too_large_json = REG_TOO_LARGE_JSON,
                .error_style = HTTP_ERROR_REASON,
        };
        AUTOFREE struct cidr *trusted = NULL;
        struct error_detail err = { 0 };
        int r;

        /* checked by reg_options_check() at start: only out of memory is left */
        r = reg_options_trusted_proxies(opts, &trusted, &cfg.n_trusted_proxies, &err);
        if (r < 0)
                return log_error_errno(r, "registry: %s",
                                       err.message[0] ? err.message : "out of memory");
        cfg.trusted_proxies = trusted;
        cfg.max_per_ip = (unsigned)reg_options_uint(opts, REG_OPT_MAX_CONNECTIONS_PER_IP);
        cfg.address = set->host;
        cfg.port = set->port;
        cfg.body_max = (size_t)reg_options_uint(opts, REG_OPT_BODY_MAX);
        /* HTTPS from files: re-read on change, TLS >= 1.2 (http/server.h) */
        cfg.tls_cert_file = set->tls_cert;
        cfg.tls_key_file = set->tls_key;
        r = http_server_start(&cfg, ret);
        if (r < 0 && set->tls_cert && r != -EADDRINUSE) {
                /* the pair is loaded before listening: unreadable, not PEM, or a key that does
                 * not match the certificate (-EINVAL also covers a bad listen address) */
                log_error_errno(r,
                                "registry: cannot serve HTTPS on %s:%u with certificate %s "
                                "and key %s: %s",
                                set->host, (unsigned)set->port, set->tls_cert, set->tls_key,
                                errno_to_string(r));
                return r;
        }
        if (r < 0)
                return log_error_errno(r, "registry: cannot listen on %s:%u", set->host,
                                       (unsigned)set->port);
        return 0;
}

/*
 * Step 3: the store, waiting for the database, wiped on request. Returns 0 when ready, 1 when a
 * signal came first, negative errno on failure (logged).
 */
static int open_ready_store(const struct serve_settings *set, struct store_open_options *so,
                            const char *dberr, const sigset_t *mask, struct store **ret)
{
        struct store_conn *conn;
        int r;

        r = open_datastore(set->dsn, so, mask, ret);
        if (r == 1) {
                log_info("registry: signal received while waiting for the database, exiting");
                return 1;
        }
        if (r == -EPROTONOSUPPORT) {
                log_error("registry: this build has no PostgreSQL support (libpq)");
                return r;
        }
        if (r < 0 && dberr[0]) {
                log_error("registry: error connecting to datastore: %s", dberr);
                return r;
        }
        if (r < 0)
                return log_error_errno(r, "registry: error connecting to datastore");
        if (store_dialect(*ret) == STORE_DIALECT_SQLITE &&
            (so->tls.sslmode || so->tls.sslcert || so->tls.sslkey || so->tls.sslrootcert))
                log_warn("registry: the database TLS options apply to PostgreSQL only; "
                         "ignored for SQLite");
        if (!set->wipe)
                return 0;
        r = store_acquire(*ret, &conn);
        if (r >= 0) {
                r = store_wipe(*ret, conn);
                store_release(*ret, conn);
        }
        if (r < 0)
                return log_error_errno(r, "registry: wiping the datastore failed");
        return 0;
}

int cmd_registry(int argc, char **argv)
{
        CLEANUP(reg_options_release) struct reg_options opts = { 0 };
        CLEANUP(store_freep) struct store *store = NULL;
        CLEANUP(registry_freep) struct registry *reg = NULL;
        struct gate gate = { .reg = NULL, .responses = { 0 } };
        CLEANUP(http_server_freep) struct http_server *srv = NULL; /* freed first: it calls gate */
        char dberr[512] = "";
        struct store_open_options so = { .error = dberr, .error_size = sizeof(dberr) };
        struct serve_settings set;
        sigset_t mask;
        int r, sig;

        reg_options_init(&opts);
        r = load_options(&opts, argc, argv);
        if (r >= 0)
                return r;
        read_settings(&opts, &set, &so);
        if (!streq(set.datastore, "embedmd")) {
                fprintf(stderr,
                        "registry: unsupported datastore type: %s. Supported types: [embedmd]\n",
                        set.datastore);
                return 1;
        }
        if (reg_options_str(&opts, REG_OPT_SSL_CIPHER))
                log_warn("registry: --embedmd-database-ssl-cipher is not supported for PostgreSQL "
                         "connections (libpq), ignoring it");

        /* Block the termination signals before any thread starts, then wait for them. */
        (void)cli_block_exit_signals(&mask);

        if (start_http(&opts, &set, &gate, &srv) < 0)
                return 1;
        r = open_ready_store(&set, &so, dberr, &mask, &store);
        if (r != 0)
                return r > 0 ? 0 : 1;
        r = registry_new(store, &reg);
        if (r < 0) {
                log_error_errno(r, "registry: out of memory");
                return 1;
        }
        atomic_store(&gate.reg, reg);

        log_info("registry: listening on %s:%u (%s, schema version %d, database %s)", set.host,
                 (unsigned)http_server_port(srv), set.tls_cert ? "https" : "http",
                 store_schema_version(store),
                 store_dialect(store) == STORE_DIALECT_POSTGRES ? "postgres" : "sqlite");
        /* Machine-readable line for scripts that start us on port 0: printed once the database
         * is ready (before that, every request gets 503). */
        (void)printf("listening on %s:%u\n", set.host, (unsigned)http_server_port(srv));
        (void)fflush(stdout);

        r = sigwait(&mask, &sig);
        log_info("registry: signal %d received, shutting down", r == 0 ? sig : -1);
        srv = http_server_free(srv);
        return 0;
}
