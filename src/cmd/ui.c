/* SPDX-License-Identifier: Apache-2.0 */
/*
 * modelplane ui: the web console (static files) and its BFF API (docs/ui.md), in front of the
 * registry, the catalog and the Kubernetes API.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "http/server.h"
#include "kube/config.h"
#include "ui/auth.h"
#include "ui/bff.h"
#include "ui/deploy.h"
#include "ui/views.h"
#include "util/file-util.h"
#include "util/log.h"
#include "util/parse-util.h"

#define UI_BODY_MAX   ((size_t)1024 * 1024)
#define UI_SECRET_MAX 4096U

enum {
        OPT_LISTEN,
        OPT_STATIC,
        OPT_REGISTRY,
        OPT_REGISTRY_NAME,
        OPT_CATALOG,
        OPT_KUBECONFIG,
        OPT_CONTEXT,
        OPT_USER_HEADER,
        OPT_GROUPS_HEADER,
        OPT_TRUSTED,
        OPT_PROXY_SECRET,
        OPT_CSRF_SECRET,
        OPT_DEV_USER,
        OPT_CA_FILE,
        OPT_TRANSFER_IMAGE,
        OPT_NO_KUBE,
        OPT_REGISTRY_SERVICE,
        OPT_CATALOG_SERVICE,
        OPT_SKIP_ACCESS_REVIEW,
        OPT_PER_IP,
        OPT_REGISTRY_NS,
        OPT_REGISTRY_EXTERNAL,
};

static const struct cli_option ui_options[] = {
        { "listen", 'l', CLI_ARG_REQUIRED, "HOST:PORT",
          "listen address (default 127.0.0.1:4000; port 0 = any)", OPT_LISTEN },
        { "static-dir", 0, CLI_ARG_REQUIRED, "DIR",
          "the built web console (default: <exe>/../share/modelplane/ui,\nelse the source tree's "
          "ui/dist)",
          OPT_STATIC },
        { "registry-url", 0, CLI_ARG_REQUIRED, "URL", "modelplane registry, e.g. http://host:8080",
          OPT_REGISTRY },
        { "registry-name", 0, CLI_ARG_REQUIRED, "NAME",
          "the registry's name in the API (default modelplane)", OPT_REGISTRY_NAME },
        { "catalog-url", 0, CLI_ARG_REQUIRED, "URL", "modelplane catalog, e.g. http://host:8080",
          OPT_CATALOG },
        { "registry-service", 0, CLI_ARG_REQUIRED, "NAMESPACE/NAME",
          "users who may get this Service may use the registry\n(default: the --registry-url's "
          "in-cluster Service, a short\nhost name in the server's namespace; else\n" UI_REGISTRY_SERVICE_DEFAULT
          ")",
          OPT_REGISTRY_SERVICE },
        { "catalog-service", 0, CLI_ARG_REQUIRED, "NAMESPACE/NAME",
          "users who may get this Service may use the catalog\n(default: the --catalog-url's "
          "in-cluster Service, a short\nhost name in the server's namespace; else\n" UI_CATALOG_SERVICE_DEFAULT
          ")",
          OPT_CATALOG_SERVICE },
        { "registry-namespace", 0, CLI_ARG_REQUIRED, "NS",
          "where more registries are discovered (Services\nlabelled component=model-registry; "
          "default: the\n--registry-service's namespace)",
          OPT_REGISTRY_NS },
        { "registry-external-address", 0, CLI_ARG_NONE, NULL,
          "reach discovered registries at their\n.../external-address-rest annotation "
          "(upstream's\nfederated mode)",
          OPT_REGISTRY_EXTERNAL },
        { "insecure-skip-access-review", 0, CLI_ARG_NONE, NULL,
          "let every signed-in user use the registry and the\ncatalog (no SubjectAccessReview)",
          OPT_SKIP_ACCESS_REVIEW },
        { "kubeconfig", 0, CLI_ARG_REQUIRED, "PATH", "else $KUBECONFIG, in-cluster, ~/.kube/config",
          OPT_KUBECONFIG },
        { "context", 0, CLI_ARG_REQUIRED, "NAME", "kubeconfig context", OPT_CONTEXT },
        { "no-kube", 0, CLI_ARG_NONE, NULL, "no Kubernetes API: deployment routes answer 503",
          OPT_NO_KUBE },
        { "user-header", 0, CLI_ARG_REQUIRED, "NAME",
          "identity header of the auth proxy (default kubeflow-userid)", OPT_USER_HEADER },
        { "groups-header", 0, CLI_ARG_REQUIRED, "NAME",
          "groups header of the auth proxy, impersonated too\n(default none; needs impersonate on groups)",
          OPT_GROUPS_HEADER },
        { "trusted-proxy", 0, CLI_ARG_REQUIRED, "CIDRS",
          "addresses whose user header is trusted (comma list);\nexempt from "
          "--max-connections-per-ip too",
          OPT_TRUSTED },
        { "proxy-secret-file", 0, CLI_ARG_REQUIRED, "PATH",
          "trust the user header when X-Proxy-Secret equals\nthis file's content",
          OPT_PROXY_SECRET },
        { "csrf-secret-file", 0, CLI_ARG_REQUIRED, "PATH",
          "CSRF key shared by replicas (default: random)", OPT_CSRF_SECRET },
        { "insecure-dev-user", 0, CLI_ARG_REQUIRED, "NAME",
          "requests without identity act as NAME (loopback\n--listen only; development)",
          OPT_DEV_USER },
        { "ca-file", 0, CLI_ARG_REQUIRED, "PATH", "CA bundle for https registry/catalog URLs",
          OPT_CA_FILE },
        { "transfer-job-image", 0, CLI_ARG_REQUIRED, "IMAGE",
          "image of the model transfer jobs' containers,\nwhich run `modelplane async-upload`, "
          "and of\nthe registries the console makes (default\n" UI_TRANSFER_IMAGE_DEFAULT ")",
          OPT_TRANSFER_IMAGE },
        { "max-connections-per-ip", 0, CLI_ARG_REQUIRED, "N",
          "concurrent connections from one client address,\nmore get 429 with Retry-After; "
          "0 = no limit\n(default 256)",
          OPT_PER_IP },
};

struct ui_args {
        char *host;
        uint16_t port;
        const char *static_dir, *registry_url, *registry_name, *catalog_url, *kubeconfig, *context,
                *user_header, *groups_header, *trusted, *proxy_secret_file, *csrf_secret_file,
                *dev_user, *ca_file, *transfer_image, *registry_service, *catalog_service,
                *registry_ns;
        bool no_kube, skip_access_review, registry_external;
        uint32_t max_per_ip;
};

static int ui_set(void *userdata, const struct cli_option *opt, const char *arg, char *err,
                  size_t err_size)
{
        struct ui_args *a = userdata;

        switch (opt->id) {
        case OPT_LISTEN:
                free(a->host);
                a->host = NULL;
                return cli_parse_listen(arg, &a->host, &a->port);
        case OPT_STATIC:
                a->static_dir = arg;
                return 0;
        case OPT_REGISTRY:
                a->registry_url = arg;
                return 0;
        case OPT_REGISTRY_NAME:
                if (!*arg || strlen(arg) > UI_K8S_NAME_MAX) {
                        (void)snprintf(err, err_size, "--registry-name must be 1 to %u bytes",
                                       UI_K8S_NAME_MAX);
                        return -EINVAL;
                }
                a->registry_name = arg;
                return 0;
        case OPT_CATALOG:
                a->catalog_url = arg;
                return 0;
        case OPT_KUBECONFIG:
                a->kubeconfig = arg;
                return 0;
        case OPT_CONTEXT:
                a->context = arg;
                return 0;
        case OPT_NO_KUBE:
                a->no_kube = true;
                return 0;
        case OPT_REGISTRY_SERVICE:
        case OPT_CATALOG_SERVICE: {
                struct ui_service_ref ref;

                if (ui_service_ref_parse(arg, &ref) < 0) {
                        (void)snprintf(err, err_size,
                                       "'%s' is not NAMESPACE/NAME (two names of lower-case "
                                       "letters, digits and '-', at most 63 each)",
                                       arg);
                        return -EINVAL;
                }
                if (opt->id == OPT_REGISTRY_SERVICE)
                        a->registry_service = arg;
                else
                        a->catalog_service = arg;
                return 0;
        }
        case OPT_SKIP_ACCESS_REVIEW:
                a->skip_access_review = true;
                return 0;
        case OPT_REGISTRY_NS:
                if (!ui_rfc1123_label(arg)) {
                        (void)snprintf(err, err_size, "'%s' is not a namespace name", arg);
                        return -EINVAL;
                }
                a->registry_ns = arg;
                return 0;
        case OPT_REGISTRY_EXTERNAL:
                a->registry_external = true;
                return 0;
        case OPT_USER_HEADER:
                a->user_header = arg;
                return 0;
        case OPT_GROUPS_HEADER:
                a->groups_header = arg;
                return 0;
        case OPT_TRUSTED:
                a->trusted = arg;
                return 0;
        case OPT_PROXY_SECRET:
                a->proxy_secret_file = arg;
                return 0;
        case OPT_CSRF_SECRET:
                a->csrf_secret_file = arg;
                return 0;
        case OPT_DEV_USER:
                a->dev_user = arg;
                return 0;
        case OPT_CA_FILE:
                a->ca_file = arg;
                return 0;
        case OPT_TRANSFER_IMAGE:
                if (!*arg || strlen(arg) > 1024) {
                        (void)snprintf(err, err_size,
                                       "invalid --transfer-job-image '%.80s' (an image reference "
                                       "of 1 to 1024 characters)",
                                       arg);
                        return -EINVAL;
                }
                a->transfer_image = arg;
                return 0;
        case OPT_PER_IP:
                if (safe_atou32(arg, &a->max_per_ip) < 0 || a->max_per_ip > 65536) {
                        (void)snprintf(err, err_size,
                                       "invalid --max-connections-per-ip '%s' (0-65536)", arg);
                        return -EINVAL;
                }
                return 0;
        default:
                (void)snprintf(err, err_size, "unknown option");
                return -EINVAL;
        }
}

static const struct cli_command ui_cli = {
        .name = "ui",
        .synopsis = "Serves the web console and its API (/api/v1, docs/ui.md), talking to the\n"
                    "registry, the catalog and the Kubernetes API as the user.",
        .options = ui_options,
        .n_options = ELEMENTSOF(ui_options),
        .set = ui_set,
};

/*
 * Reads a small secret file; a trailing newline is not part of the secret. -EFBIG over
 * UI_SECRET_MAX bytes, -EINVAL when it is empty or holds a NUL byte.
 */
static int read_secret(const char *path, char **ret)
{
        char *s;
        size_t n;
        int r;

        r = read_file_bounded(path, UI_SECRET_MAX, READ_FILE_REFUSE_NUL | READ_FILE_SECRET, &s, &n,
                              NULL);
        if (r < 0)
                return r == -EBADMSG ? -EINVAL : r;
        while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
                s[--n] = '\0';
        if (n == 0) {
                free(s);
                return -EINVAL;
        }
        *ret = s;
        return 0;
}

static void wipe_freep(char **p)
{
        if (*p) {
                explicit_bzero(*p, strlen(*p));
                free(*p);
        }
}

static bool is_loopback(const char *host)
{
        return strneq(host, "127.", 4) || streq(host, "::1") || streq(host, "localhost");
}

/* The built console: <exe>/../share/modelplane/ui when installed, else the source tree's. */
static const char *default_static_dir(char *buf, size_t len)
{
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        struct stat st;

        if (n > 0) {
                char *slash;

                exe[n] = '\0';
                slash = strrchr(exe, '/');
                if (slash) {
                        *slash = '\0';
                        if ((size_t)snprintf(buf, len, "%s/../share/modelplane/ui", exe) < len &&
                            stat(buf, &st) == 0 && S_ISDIR(st.st_mode))
                                return buf;
                }
        }
        if (stat(MODELPLANE_SOURCE_UI_DIST, &st) == 0 && S_ISDIR(st.st_mode))
                return MODELPLANE_SOURCE_UI_DIST;
        return NULL;
}

/* The HTTP front's own refusals (414, 431, 400 ...) in the BFF's error envelope. */
static json_t *ui_refusal_body(unsigned status, const char *message)
{
        return ui_error_body(status, "ui", message);
}

/* What cmd_ui builds; ui_run_release() frees it, the servers first. */
struct ui_run {
        char *host;         /* owned */
        char *proxy_secret; /* owned, wiped */
        struct cidr *trusted;
        size_t n_trusted;
        struct kube_config *kcfg;
        struct ui_server *ui;
        struct http_server *srv;
        struct ui_config cfg;
        char dirbuf[PATH_MAX];
};

static void ui_run_release(struct ui_run *s)
{
        s->srv = http_server_free(s->srv);
        s->ui = ui_server_free(s->ui);
        s->kcfg = kube_config_free(s->kcfg);
        free(s->trusted);
        wipe_freep(&s->proxy_secret);
        free(s->host);
}

/* The listen address and the trusted proxies. Returns 0 or the exit status. */
static int ui_check_listen(struct ui_run *s, const struct ui_args *a)
{
        int r;

        if (!s->host) {
                s->host = strdup("127.0.0.1");
                if (!s->host)
                        return 1;
        }
        if (a->dev_user && !is_loopback(s->host))
                return cli_exit_status(cli_usage_error(
                        &ui_cli, "--insecure-dev-user needs a loopback --listen address, not %s",
                        s->host));
        if (a->trusted) {
                r = cidr_list_parse(a->trusted, &s->trusted, &s->n_trusted);
                if (r < 0)
                        return cli_exit_status(
                                cli_usage_error(&ui_cli, "invalid --trusted-proxy '%s'%s",
                                                a->trusted,
                                                r == -E2BIG ? " (more than 64 entries)" : ""));
        }
        return 0;
}

/* The proxy secret and the CSRF key (from a file, or random). Returns 0 or the exit status. */
static int ui_load_secrets(struct ui_run *s, const struct ui_args *a)
{
        int r;

        if (a->proxy_secret_file) {
                r = read_secret(a->proxy_secret_file, &s->proxy_secret);
                if (r < 0) {
                        log_error_errno(r, "ui: cannot read --proxy-secret-file %s (1 to %u bytes)",
                                        a->proxy_secret_file, UI_SECRET_MAX);
                        return 1;
                }
        }
        if (a->csrf_secret_file) {
                CLEANUP(wipe_freep) char *secret = NULL;

                r = read_secret(a->csrf_secret_file, &secret);
                if (r >= 0)
                        r = ui_csrf_key_from_secret(secret, strlen(secret), s->cfg.csrf_key);
                if (r < 0) {
                        log_error_errno(r, "ui: cannot read --csrf-secret-file %s",
                                        a->csrf_secret_file);
                        return 1;
                }
        } else if (getrandom(s->cfg.csrf_key, sizeof(s->cfg.csrf_key), 0) !=
                   (ssize_t)sizeof(s->cfg.csrf_key)) {
                log_error_errno(negative_errno(), "ui: no random bytes for the CSRF key");
                return 1;
        }
        return 0;
}

/* The Kubernetes configuration for the deployment routes (none with --no-kube). */
static int ui_load_kube(struct ui_run *s, const struct ui_args *a)
{
        struct kube_config_options ko = { .kubeconfig_path = a->kubeconfig, .context = a->context };
        struct error_detail err = { 0 };
        int r;

        if (a->no_kube)
                return 0;
        r = kube_config_load(&ko, &s->kcfg, &err);
        if (r < 0) {
                log_error_errno(r,
                                "ui: cannot load the Kubernetes configuration: %s "
                                "(--no-kube runs without deployments)",
                                err.message);
                return 1;
        }
        return 0;
}

static void ui_build_config(struct ui_run *s, const struct ui_args *a)
{
        s->cfg.static_dir = a->static_dir ? a->static_dir
                                          : default_static_dir(s->dirbuf, sizeof(s->dirbuf));
        s->cfg.registry_url = a->registry_url;
        s->cfg.registry_name = a->registry_name;
        s->cfg.catalog_url = a->catalog_url;
        s->cfg.registry_service = a->registry_service;
        s->cfg.catalog_service = a->catalog_service;
        s->cfg.registry_namespace = a->registry_ns;
        s->cfg.registry_external = a->registry_external;
        s->cfg.skip_access_review = a->skip_access_review;
        s->cfg.ca_file = a->ca_file;
        s->cfg.transfer_image = a->transfer_image;
        s->cfg.kube = s->kcfg;
        s->cfg.auth = (struct ui_auth_config){
                .user_header = a->user_header ? a->user_header : "kubeflow-userid",
                .groups_header = a->groups_header,
                .trusted = s->trusted,
                .n_trusted = s->n_trusted,
                .proxy_secret = s->proxy_secret,
                .dev_user = a->dev_user,
        };
}

/* Says who may use the registry and the catalog. */
static void ui_log_access(const struct ui_run *s, const struct ui_args *a)
{
        struct ui_service_ref reg, cat;

        if (a->skip_access_review) {
                log_warn("ui: --insecure-skip-access-review: every signed-in user may use the "
                         "registry and the catalog");
                return;
        }
        if (!s->kcfg) {
                log_warn("ui: --no-kube: registry and catalog routes answer 503 (nobody can be "
                         "authorized without the Kubernetes API; --insecure-skip-access-review "
                         "lets every signed-in user in)");
                return;
        }
        if (ui_access_service(a->registry_service, a->registry_url, s->kcfg->namespace,
                              UI_REGISTRY_SERVICE_DEFAULT, &reg) < 0 ||
            ui_access_service(a->catalog_service, a->catalog_url, s->kcfg->namespace,
                              UI_CATALOG_SERVICE_DEFAULT, &cat) < 0)
                return;
        log_info("ui: users who may get service %s/%s may use the registry, those who may get "
                 "service %s/%s the catalog",
                 reg.ns, reg.name, cat.ns, cat.name);
}

/* The BFF and its HTTP server. Returns 0 or the exit status. */
static int ui_start(struct ui_run *s, const struct ui_args *a)
{
        struct http_server_config hc = { HTTP_SERVER_CONFIG_DEFAULTS };
        int r;

        r = ui_server_new(&s->cfg, &s->ui);
        if (r < 0) {
                log_error_errno(r, "ui: cannot start%s%s", a->static_dir ? ": --static-dir " : "",
                                a->static_dir ? a->static_dir : "");
                return 1;
        }
        if (!ui_server_has_frontend(s->ui))
                log_warn("ui: no built web console (%s%s): serving the API and an explanatory "
                         "page",
                         s->cfg.static_dir ? s->cfg.static_dir : "no --static-dir and no ui/dist",
                         s->cfg.static_dir ? " has no index.html" : "");
        if (!a->registry_url)
                log_warn("ui: no --registry-url: registry routes answer 503");
        if (!a->catalog_url)
                log_warn("ui: no --catalog-url: catalog routes answer 503");
        ui_log_access(s, a);
        hc.address = s->host;
        hc.port = a->port;
        hc.body_max = UI_BODY_MAX;
        hc.threads = 16;
        hc.max_per_ip = a->max_per_ip;
        /* the auth proxy in front carries every user from one address */
        hc.trusted_proxies = s->trusted;
        hc.n_trusted_proxies = s->n_trusted;
        hc.handler = ui_server_handle;
        hc.userdata = s->ui;
        hc.error_body = ui_refusal_body;
        hc.too_large_json =
                "{\"error\":{\"code\":\"413\",\"message\":\"request body larger than 1 MiB\","
                "\"source\":\"ui\"}}";
        r = http_server_start(&hc, &s->srv);
        if (r < 0) {
                log_error_errno(r, "ui: cannot listen on %s:%u", s->host, (unsigned)a->port);
                return 1;
        }
        log_info("ui: listening on %s:%u", s->host, (unsigned)http_server_port(s->srv));
        (void)printf("listening on %s:%u\n", s->host, (unsigned)http_server_port(s->srv));
        (void)fflush(stdout);
        return 0;
}

int cmd_ui(int argc, char **argv)
{
        CLEANUP(ui_run_release) struct ui_run s = { 0 };
        struct ui_args a = { .port = 4000, .max_per_ip = 256 };
        sigset_t mask;
        int r, sig;

        r = cli_parse(&ui_cli, argc, argv, &a);
        s.host = a.host;
        if (r != 0)
                return cli_exit_status(r);
        r = ui_check_listen(&s, &a);
        if (r == 0)
                r = ui_load_secrets(&s, &a);
        if (r == 0)
                r = ui_load_kube(&s, &a);
        if (r != 0)
                return r;
        ui_build_config(&s, &a);

        (void)cli_block_exit_signals(&mask);

        r = ui_start(&s, &a);
        if (r != 0)
                return r;
        r = sigwait(&mask, &sig);
        log_info("ui: signal %d received, shutting down", r == 0 ? sig : -1);
        return 0;
}
