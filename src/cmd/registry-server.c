/* SPDX-License-Identifier: Apache-2.0 */
/*
 * modelplane registry: the Kubeflow Model Registry REST server (spec Part B) on SQLite (default)
 * or PostgreSQL. Flags follow the upstream `model-registry proxy` command; the ConfigMap
 * variables MODEL_REGISTRY_REST_SERVICE_PORT / MODEL_REGISTRY_DATA_STORE_TYPE are read too.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "http/server.h"
#include "registry/registry.h"
#include "store/entity.h"
#include "store/store.h"
#include "util/log.h"
#include "util/parse-util.h"

#define DEFAULT_DSN        "model-registry.db"
#define DEFAULT_BODY_MAX   (4U * 1024U * 1024U)
#define DEFAULT_POOL_SIZE  8U

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: modelplane registry [OPTIONS]\n\n"
                "Serves the Kubeflow Model Registry REST API v1alpha3.\n\n"
                "  -n, --hostname HOST        listen address (default localhost = 127.0.0.1;\n"
                "                             env MR_HOSTNAME)\n"
                "  -p, --port PORT            listen port, 0 = any free port (default 8080;\n"
                "                             env MODEL_REGISTRY_REST_SERVICE_PORT, MR_PORT)\n"
                "      --datastore-type TYPE  only 'embedmd' (env MODEL_REGISTRY_DATA_STORE_TYPE,\n"
                "                             MR_DATASTORE_TYPE)\n"
                "  -d, --database DSN         SQLite file (default ./" DEFAULT_DSN ") or\n"
                "                             postgres://… (env MODELPLANE_REGISTRY_DSN)\n"
                "      --pool-size N          database connections (default 8)\n"
                "      --body-max BYTES       request body limit, larger bodies get 413 (default 4 MiB)\n"
                "      --wipe                 delete all stored entities at start (tests)\n"
                "  -h, --help                 show this help\n");
}

static const char *env_first(const char *a, const char *b)
{
        const char *v = getenv(a);

        if (v && *v)
                return v;
        v = b ? getenv(b) : NULL;
        return v && *v ? v : NULL;
}

int cmd_registry(int argc, char **argv)
{
        enum { ARG_DATASTORE = 0x100, ARG_POOL, ARG_BODY_MAX, ARG_WIPE, ARG_DB_TYPE, ARG_DB_DSN };
        static const struct option options[] = {
                { "hostname", required_argument, NULL, 'n' },
                { "port", required_argument, NULL, 'p' },
                { "datastore-type", required_argument, NULL, ARG_DATASTORE },
                { "database", required_argument, NULL, 'd' },
                { "embedmd-database-dsn", required_argument, NULL, ARG_DB_DSN },
                { "embedmd-database-type", required_argument, NULL, ARG_DB_TYPE },
                { "pool-size", required_argument, NULL, ARG_POOL },
                { "body-max", required_argument, NULL, ARG_BODY_MAX },
                { "wipe", no_argument, NULL, ARG_WIPE },
                { "help", no_argument, NULL, 'h' },
                { NULL, 0, NULL, 0 },
        };
        const char *host = env_first("MR_HOSTNAME", NULL);
        const char *port_s = env_first("MODEL_REGISTRY_REST_SERVICE_PORT", "MR_PORT");
        const char *datastore = env_first("MODEL_REGISTRY_DATA_STORE_TYPE", "MR_DATASTORE_TYPE");
        const char *dsn = env_first("MODELPLANE_REGISTRY_DSN", "MR_EMBEDMD_DATABASE_DSN");
        uint32_t pool = DEFAULT_POOL_SIZE;
        uint64_t body_max = DEFAULT_BODY_MAX;
        bool wipe = false;
        uint16_t port = 8080;
        CLEANUP(store_freep) struct store *store = NULL;
        CLEANUP(registry_freep) struct registry *reg = NULL;
        CLEANUP(http_server_freep) struct http_server *srv = NULL;
        sigset_t mask;
        int c, r, sig;

        optind = 1;
        while ((c = getopt_long(argc, argv, "n:p:d:h", options, NULL)) >= 0) {
                switch (c) {
                case 'n':
                        host = optarg;
                        break;
                case 'p':
                        port_s = optarg;
                        break;
                case 'd':
                case ARG_DB_DSN:
                        dsn = optarg;
                        break;
                case ARG_DATASTORE:
                        datastore = optarg;
                        break;
                case ARG_DB_TYPE:
                        /* accepted for compatibility; the DSN selects the database */
                        break;
                case ARG_POOL:
                        if (safe_atou32(optarg, &pool) < 0 || pool == 0 || pool > 256) {
                                fprintf(stderr, "registry: invalid --pool-size '%s'\n", optarg);
                                return 2;
                        }
                        break;
                case ARG_BODY_MAX:
                        if (safe_atou64(optarg, &body_max) < 0 || body_max == 0) {
                                fprintf(stderr, "registry: invalid --body-max '%s'\n", optarg);
                                return 2;
                        }
                        break;
                case ARG_WIPE:
                        wipe = true;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "registry: unexpected argument '%s'\n", argv[optind]);
                return 2;
        }
        if (datastore && !streq(datastore, "embedmd")) {
                fprintf(stderr, "registry: unsupported datastore type: %s. Supported types: [embedmd]\n",
                        datastore);
                return 1;
        }
        if (port_s && safe_atou16(port_s, &port) < 0) {
                fprintf(stderr, "registry: invalid port '%s'\n", port_s);
                return 2;
        }
        if (!host || streq(host, "localhost"))
                host = "127.0.0.1";
        if (!dsn)
                dsn = DEFAULT_DSN;

        r = store_open(dsn, pool, &store);
        if (r == -EPROTONOSUPPORT) {
                log_error("registry: this build has no PostgreSQL support (libpq)");
                return 1;
        }
        if (r < 0) {
                log_error_errno(r, "registry: error connecting to datastore");
                return 1;
        }
        if (wipe) {
                struct store_conn *conn;

                r = store_acquire(store, &conn);
                if (r >= 0) {
                        r = store_wipe(store, conn);
                        store_release(store, conn);
                }
                if (r < 0) {
                        log_error_errno(r, "registry: wiping the datastore failed");
                        return 1;
                }
        }
        r = registry_new(store, &reg);
        if (r < 0) {
                log_error_errno(r, "registry: out of memory");
                return 1;
        }

        /* Block the termination signals before any thread starts, then wait for them. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        (void)pthread_sigmask(SIG_BLOCK, &mask, NULL);
        (void)signal(SIGPIPE, SIG_IGN);

        {
                struct http_server_config cfg = {
                        HTTP_SERVER_CONFIG_DEFAULTS,
                        .handler = registry_handle,
                        .userdata = reg,
                        .too_large_json = REG_TOO_LARGE_JSON,
                };

                cfg.address = host;
                cfg.port = port;
                cfg.body_max = (size_t)body_max;
                r = http_server_start(&cfg, &srv);
        }
        if (r < 0) {
                log_error_errno(r, "registry: cannot listen on %s:%u", host, (unsigned)port);
                return 1;
        }
        log_info("registry: listening on %s:%u (schema version %d, database %s)", host,
                 (unsigned)http_server_port(srv), store_schema_version(store),
                 store_dialect(store) == STORE_DIALECT_POSTGRES ? "postgres" : "sqlite");
        /* Machine-readable line for scripts that start us on port 0. */
        printf("listening on %s:%u\n", host, (unsigned)http_server_port(srv));
        fflush(stdout);

        r = sigwait(&mask, &sig);
        log_info("registry: signal %d received, shutting down", r == 0 ? sig : -1);
        srv = http_server_free(srv);
        return 0;
}
