/* SPDX-License-Identifier: Apache-2.0 */
/*
 * modelplane catalog: the read-only Kubeflow model catalog API (spec Part C) over YAML sources,
 * all in memory, hot-reloaded when the sources or catalog files change. Stateless: scale out by
 * running more replicas behind the Service.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/handlers.h"
#include "catalog/limits.h"
#include "catalog/service.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "http/server.h"
#include "util/cidr.h"
#include "util/log.h"
#include "util/parse-util.h"

#define CATALOG_BODY_MAX ((size_t)16U * 1024U * 1024U)

static int add_paths(char ***paths, size_t *n, const char *arg)
{
        const char *p = arg;

        while (p && *p) {
                const char *e = strchr(p, ',');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                char **v;

                if (len > 0) {
                        if (*n >= CATALOG_CONFIG_FILES_MAX)
                                return -E2BIG;
                        v = reallocarray(*paths, *n + 2, sizeof(*v));
                        if (!v)
                                return -ENOMEM;
                        *paths = v;
                        v[*n] = strndup(p, len);
                        if (!v[*n])
                                return -ENOMEM;
                        v[++*n] = NULL;
                }
                p = e ? e + 1 : NULL;
        }
        return 0;
}

static void log_sources(const struct catalog_index *idx)
{
        const struct catalog_config *cfg = catalog_index_config(idx);

        log_info("catalog: %zu models from %zu sources", catalog_index_n_models(idx),
                 cfg->n_sources);
        for (size_t i = 0; i < cfg->n_sources; i++) {
                enum catalog_source_state st = catalog_index_source_state(idx, cfg->sources[i].id);

                if (st == CATALOG_SOURCE_ERROR)
                        log_warn("catalog: source '%s' is in error state", cfg->sources[i].id);
        }
}

static void on_reload(void *userdata, int r, const struct error_detail *err,
                      const struct catalog_index *idx)
{
        char msg[1200];

        (void)userdata;
        if (r < 0) {
                log_error_errno(r, "catalog: reload rejected, previous catalog keeps serving: %s",
                                error_detail_format(err, msg, sizeof(msg)));
                return;
        }
        log_info("catalog: reloaded");
        log_sources(idx);
}

enum { OPT_LISTEN, OPT_CATALOGS, OPT_POLL, OPT_THREADS, OPT_PER_IP, OPT_TRUSTED };

/* Loop threads of the listener: the handlers only read the snapshot (CPU, never blocking), so
 * more threads than cores only add preemption; the default keeps the server's (8). */
#define CATALOG_THREADS_MAX 256U

static const struct cli_option catalog_options[] = {
        { "listen", 'l', CLI_ARG_REQUIRED, "HOST:PORT",
          "listen address (default 0.0.0.0:8080; port 0 = any)", OPT_LISTEN },
        { "catalogs-path", 0, CLI_ARG_REQUIRED, "PATHS",
          "sources file(s); repeat or comma-separate; later\nfiles override earlier ones per "
          "source id; a later\nfile that does not exist adds nothing\n(default sources.yaml)",
          OPT_CATALOGS },
        { "poll-interval", 0, CLI_ARG_REQUIRED, "SECS", "stat fallback for hot reload (default 5)",
          OPT_POLL },
        { "threads", 0, CLI_ARG_REQUIRED, "N",
          "connection loop threads, 1-256 (default 8;\nhandlers never block: the machine's "
          "cores suffice)",
          OPT_THREADS },
        { "max-connections-per-ip", 0, CLI_ARG_REQUIRED, "N",
          "concurrent connections from one client address,\nmore get 429 with Retry-After; "
          "0 = no limit\n(default 256)",
          OPT_PER_IP },
        { "trusted-proxy", 0, CLI_ARG_REQUIRED, "CIDRS",
          "client addresses exempt from that limit (proxies,\ningresses: comma list of CIDRs)",
          OPT_TRUSTED },
};

struct catalog_args {
        char *host; /* owned */
        uint16_t port;
        char **paths; /* owned */
        size_t n_paths;
        uint32_t poll_s;
        uint32_t threads;
        uint32_t max_per_ip;
        struct cidr *trusted; /* owned */
        size_t n_trusted;
};

static int catalog_set(void *userdata, const struct cli_option *opt, const char *arg, char *err,
                       size_t err_size)
{
        struct catalog_args *a = userdata;
        int r;

        switch (opt->id) {
        case OPT_LISTEN:
                free(a->host);
                a->host = NULL;
                return cli_parse_listen(arg, &a->host, &a->port);
        case OPT_CATALOGS:
                r = add_paths(&a->paths, &a->n_paths, arg);
                if (r == -E2BIG) {
                        (void)snprintf(err, err_size, "--catalogs-path: more than %u files",
                                       (unsigned)CATALOG_CONFIG_FILES_MAX);
                        return -EINVAL;
                }
                return r;
        case OPT_POLL:
                if (safe_atou32(arg, &a->poll_s) < 0 || a->poll_s == 0 || a->poll_s > 86400) {
                        (void)snprintf(err, err_size,
                                       "invalid --poll-interval '%s' (1-86400 seconds)", arg);
                        return -EINVAL;
                }
                return 0;
        case OPT_PER_IP:
                if (safe_atou32(arg, &a->max_per_ip) < 0 || a->max_per_ip > 65536) {
                        (void)snprintf(err, err_size,
                                       "invalid --max-connections-per-ip '%s' (0-65536)", arg);
                        return -EINVAL;
                }
                return 0;
        case OPT_TRUSTED:
                free(a->trusted);
                a->trusted = NULL;
                a->n_trusted = 0;
                r = cidr_list_parse(arg, &a->trusted, &a->n_trusted);
                if (r == -EINVAL || r == -E2BIG) {
                        (void)snprintf(err, err_size,
                                       "invalid --trusted-proxy '%s'%s: a comma list of "
                                       "addresses or CIDR ranges such as 10.0.0.0/8, fd00::/8",
                                       arg, r == -E2BIG ? ": more than 64 ranges" : "");
                        return -EINVAL;
                }
                return r;
        case OPT_THREADS:
                if (safe_atou32(arg, &a->threads) < 0 || a->threads == 0 ||
                    a->threads > CATALOG_THREADS_MAX) {
                        (void)snprintf(err, err_size, "invalid --threads '%s' (1-%u)", arg,
                                       CATALOG_THREADS_MAX);
                        return -EINVAL;
                }
                return 0;
        default:
                return -EINVAL;
        }
}

static const struct cli_command catalog_cli = {
        .name = "catalog",
        .synopsis = "Serves the Kubeflow model catalog API (/api/model_catalog/v1alpha1),\n"
                    "with /healthz and /readyz for probes.",
        .options = catalog_options,
        .n_options = ELEMENTSOF(catalog_options),
        .set = catalog_set,
};

/* Probes, answered before the catalog API: alive while the process serves; ready once the
 * catalog is loaded, which happens before the listener starts. */
static int catalog_handle(void *userdata, struct http_req *req, struct http_resp *resp)
{
        if (streq(req->path, "/healthz") || streq(req->path, "/readyz")) {
                if (!streq(req->method, "GET") && !streq(req->method, "HEAD")) {
                        http_resp_set_text(resp, 405, "text/plain; charset=utf-8",
                                           "method not allowed\n");
                        return http_resp_add_header(resp, "Allow", "GET, HEAD");
                }
                http_resp_set_text(resp, 200, "text/plain; charset=utf-8", "ok\n");
                return 0;
        }
        return catalog_http_handle(userdata, req, resp);
}

/* Blocks the termination signals before any thread starts (main waits for them). */
/* Loads the sources and starts hot reload; logs its own failure (returns < 0). */
static int start_service(char **paths, size_t n_paths, uint32_t poll_s,
                         struct catalog_service **ret)
{
        CLEANUP(catalog_service_freep) struct catalog_service *svc = NULL;
        struct error_detail err = { 0 };
        struct catalog_index *idx;
        char msg[1200];
        int r;

        r = catalog_service_new(&(struct catalog_service_config){ .config_paths = paths,
                                                                  .n_config_paths = n_paths,
                                                                  .poll_interval_ms = poll_s * 1000,
                                                                  .on_reload = on_reload },
                                &svc, &err);
        if (r < 0)
                return log_error_errno(r, "error starting loader: model config: %s",
                                       error_detail_format(&err, msg, sizeof(msg)));
        idx = catalog_service_get(svc);
        log_sources(idx);
        catalog_index_unref(idx);
        r = catalog_service_watch_start(svc);
        if (r < 0)
                log_warn_errno(r, "catalog: cannot watch files, hot reload disabled, ignoring");
        *ret = TAKE_PTR(svc);
        return 0;
}

/* Starts the listener and prints "listening on HOST:PORT"; logs its own failure. */
static int start_server(const char *host, uint16_t port, const struct catalog_args *a,
                        struct catalog_service *svc, struct http_server **ret)
{
        struct http_server_config hc = { HTTP_SERVER_CONFIG_DEFAULTS };
        struct http_server *srv = NULL;
        int r;

        hc.address = host;
        hc.port = port;
        hc.body_max = CATALOG_BODY_MAX;
        hc.handler = catalog_handle;
        hc.error_style = HTTP_ERROR_REASON; /* the catalog API's Error: code is a string */
        hc.userdata = svc;
        hc.threads = a->threads;
        hc.max_per_ip = a->max_per_ip;
        hc.trusted_proxies = a->trusted;
        hc.n_trusted_proxies = a->n_trusted;
        r = http_server_start(&hc, &srv);
        if (r < 0)
                return log_error_errno(r, "catalog: cannot listen on %s:%u", host, (unsigned)port);
        log_info("catalog: listening on %s:%u", host, (unsigned)http_server_port(srv));
        printf("listening on %s:%u\n", host, (unsigned)http_server_port(srv));
        if (fflush(stdout) == EOF)
                log_warn_errno(-errno, "catalog: cannot write the listening line, ignoring");
        *ret = srv;
        return 0;
}

int cmd_catalog(int argc, char **argv)
{
        CLEANUP(catalog_strv_freep) char **paths = NULL; /* freed last: the service uses them */
        AUTOFREE char *host = NULL;
        CLEANUP(catalog_service_freep) struct catalog_service *svc = NULL;
        CLEANUP(http_server_freep) struct http_server *srv = NULL;
        struct catalog_args args = { .port = 8080, .poll_s = 5, .threads = 8, .max_per_ip = 256 };
        AUTOFREE struct cidr *trusted = NULL; /* the server copies it */
        size_t n_paths;
        sigset_t mask;
        int r, sig;

        r = cli_parse(&catalog_cli, argc, argv, &args);
        host = args.host;
        paths = args.paths;
        trusted = args.trusted;
        if (r != 0)
                return cli_exit_status(r);
        n_paths = args.n_paths;
        if (!host) {
                host = strdup("0.0.0.0");
                if (!host)
                        return 1;
        }
        if (n_paths == 0 && add_paths(&paths, &n_paths, "sources.yaml") < 0)
                return 1;

        (void)cli_block_exit_signals(&mask);
        if (start_service(paths, n_paths, args.poll_s, &svc) < 0 ||
            start_server(host, args.port, &args, svc, &srv) < 0)
                return 1;

        r = sigwait(&mask, &sig);
        log_info("catalog: signal %d received, shutting down", r == 0 ? sig : -1);
        /* stop accepting and finish in-flight requests before the catalog goes away */
        srv = http_server_free(srv);
        svc = catalog_service_free(svc);
        return 0;
}
