/* SPDX-License-Identifier: Apache-2.0 */
/*
 * modelplane agent: the model agent of a KServe multi-model serving pod (docs/agent.md). Takes
 * the flags and environment KServe's pod mutator gives its agent container, so that setting
 * agent.image in inferenceservice-config is all it takes to switch.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/fetch.h"
#include "agent/integrity.h"
#include "agent/proxy.h"
#include "agent/readiness.h"
#include "agent/status-writer.h"
#include "agent/watch-configmap.h"
#include "agent/watch-file.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "kube/client.h"
#include "kube/config.h"
#include "serving/modelconfig.h"
#include "util/log.h"
#include "util/memory.h"
#include "util/parse-util.h"

#define AGENT_STATUS_PATH  "/modelplane/agent/models"
#define AGENT_METRICS_PATH "/modelplane/agent/metrics"

enum {
        OPT_PORT,
        OPT_COMPONENT_PORT,
        OPT_ENABLE_PULLER,
        OPT_CONFIG_DIR,
        OPT_MODEL_DIR,
        OPT_LISTEN,
        OPT_SERVER_URL,
        OPT_WORKERS,
        OPT_KUBECONFIG,
        OPT_CONFIGMAP,
        OPT_ISVC,
        OPT_NAMESPACE,
        OPT_API_WATCH,
        OPT_FILE_POLL,
        OPT_CONNECT_TIMEOUT,
        OPT_STALL_TIMEOUT,
        OPT_STATUS_HEARTBEAT,
        OPT_MAX_MODEL_SIZE,
        OPT_MAX_ARCHIVE_ENTRIES,
        OPT_STOP_TIMEOUT,
        OPT_IGNORED, /* KServe flags this agent does not implement */
};

#define IGNORED(name, kind)                                                              \
        {                                                                                \
                name, 0, kind, (kind) == CLI_ARG_OPTIONAL ? "BOOL" : "VALUE",            \
                        "KServe flag, not implemented: accepted and named in a warning", \
                        OPT_IGNORED                                                      \
        }

static const struct cli_option agent_options[] = {
        { "port", 0, CLI_ARG_REQUIRED, "PORT", "serving/readiness port (default 9081)", OPT_PORT },
        { "component-port", 0, CLI_ARG_REQUIRED, "PORT", "the model server's port (default 8080)",
          OPT_COMPONENT_PORT },
        { "enable-puller", 0, CLI_ARG_OPTIONAL, "BOOL",
          "download and load the models of models.json", OPT_ENABLE_PULLER },
        { "config-dir", 0, CLI_ARG_REQUIRED, "DIR",
          "the mounted modelconfig ConfigMap (default /mnt/configs)", OPT_CONFIG_DIR },
        { "model-dir", 0, CLI_ARG_REQUIRED, "DIR",
          "where models are downloaded (default /mnt/models)", OPT_MODEL_DIR },
        { "listen-address", 0, CLI_ARG_REQUIRED, "ADDR", "(default 0.0.0.0)", OPT_LISTEN },
        { "model-server-url", 0, CLI_ARG_REQUIRED, "URL",
          "repository API base\n(default http://127.0.0.1:COMPONENT-PORT)", OPT_SERVER_URL },
        { "download-workers", 0, CLI_ARG_REQUIRED, "N",
          "concurrent downloads and load calls (default 4)", OPT_WORKERS },
        { "kubeconfig", 0, CLI_ARG_REQUIRED, "FILE",
          "API access for the ConfigMap watch (default: $KUBECONFIG,\nin-cluster, ~/.kube/config)",
          OPT_KUBECONFIG },
        { "configmap", 0, CLI_ARG_REQUIRED, "NAME",
          "watch this ConfigMap (default modelconfig-ISVC-0)", OPT_CONFIGMAP },
        { "inference-service", 0, CLI_ARG_REQUIRED, "NAME",
          "the InferenceService (default: this pod's label)", OPT_ISVC },
        { "namespace", 0, CLI_ARG_REQUIRED, "NS", "(default: the service account's namespace)",
          OPT_NAMESPACE },
        { "api-watch", 0, CLI_ARG_REQUIRED, "MODE",
          "auto, on or off: watch the ConfigMap through the API\n(default auto)", OPT_API_WATCH },
        { "file-poll", 0, CLI_ARG_REQUIRED, "SECS",
          "safety-net re-read of models.json (default 10)", OPT_FILE_POLL },
        { "connect-timeout", 0, CLI_ARG_REQUIRED, "SECS", "per download connection (default 10)",
          OPT_CONNECT_TIMEOUT },
        { "stall-timeout", 0, CLI_ARG_REQUIRED, "SECS",
          "abort a download below 1 byte/s for this long\n(default 30)", OPT_STALL_TIMEOUT },
        { "status-heartbeat", 0, CLI_ARG_REQUIRED, "SECS",
          "rewrite the status object at least this often\n(default 10)", OPT_STATUS_HEARTBEAT },
        { "max-model-size", 0, CLI_ARG_REQUIRED, "BYTES",
          "per model: bytes received and archive content,\nchecked as they arrive (default 64Gi)",
          OPT_MAX_MODEL_SIZE },
        { "max-archive-entries", 0, CLI_ARG_REQUIRED, "N",
          "per archive: files, directories and links\n(default 100000)", OPT_MAX_ARCHIVE_ENTRIES },
        { "stop-timeout", 0, CLI_ARG_REQUIRED, "SECS",
          "at SIGTERM, wait this long for load calls in flight\n(default 25)", OPT_STOP_TIMEOUT },
        /* KServe's logger, batcher and probe flags (cmd/agent/main.go) */
        IGNORED("log-url", CLI_ARG_REQUIRED),
        IGNORED("source-uri", CLI_ARG_REQUIRED),
        IGNORED("log-mode", CLI_ARG_REQUIRED),
        IGNORED("log-store-path", CLI_ARG_REQUIRED),
        IGNORED("log-store-format", CLI_ARG_REQUIRED),
        IGNORED("log-marshaller-url", CLI_ARG_REQUIRED),
        IGNORED("log-marshaller-port", CLI_ARG_REQUIRED),
        IGNORED("log-batch-size", CLI_ARG_REQUIRED),
        IGNORED("log-batch-interval", CLI_ARG_REQUIRED),
        IGNORED("endpoint", CLI_ARG_REQUIRED),
        IGNORED("component", CLI_ARG_REQUIRED),
        IGNORED("metadata-headers", CLI_ARG_REQUIRED),
        IGNORED("metadata-annotations", CLI_ARG_REQUIRED),
        IGNORED("logger-ca-cert-file", CLI_ARG_REQUIRED),
        IGNORED("logger-tls-skip-verify", CLI_ARG_OPTIONAL),
        IGNORED("workers", CLI_ARG_REQUIRED),
        IGNORED("enable-batcher", CLI_ARG_OPTIONAL),
        IGNORED("max-batchsize", CLI_ARG_REQUIRED),
        IGNORED("max-latency", CLI_ARG_REQUIRED),
        IGNORED("probe-period", CLI_ARG_REQUIRED),
};

struct agent_args {
        uint16_t port, component_port;
        bool puller;
        const char *config_dir, *model_dir, *listen, *server_url, *kubeconfig, *configmap;
        const char *isvc, *ns, *api_watch;
        uint32_t workers, file_poll, connect_timeout, stall_timeout, heartbeat, stop_timeout;
        uint64_t max_model_size, max_archive_entries;
        char ignored[1024];
};

static int agent_set(void *userdata, const struct cli_option *opt, const char *arg, char *err,
                     size_t err_size)
{
        struct agent_args *a = userdata;
        uint32_t *secs = NULL;
        size_t used;

        switch (opt->id) {
        case OPT_PORT:
                return safe_atou16(arg, &a->port) < 0 ? -EINVAL : 0;
        case OPT_COMPONENT_PORT:
                return safe_atou16(arg, &a->component_port) < 0 ? -EINVAL : 0;
        case OPT_ENABLE_PULLER:
                return cli_parse_bool(arg, &a->puller) < 0 ? -EINVAL : 0;
        case OPT_CONFIG_DIR:
                a->config_dir = arg;
                return 0;
        case OPT_MODEL_DIR:
                a->model_dir = arg;
                return 0;
        case OPT_LISTEN:
                a->listen = arg;
                return 0;
        case OPT_SERVER_URL:
                a->server_url = arg;
                return 0;
        case OPT_WORKERS:
                if (safe_atou32(arg, &a->workers) < 0 || a->workers == 0 || a->workers > 64) {
                        (void)snprintf(err, err_size, "invalid --download-workers '%s' (1-64)",
                                       arg);
                        return -EINVAL;
                }
                return 0;
        case OPT_KUBECONFIG:
                a->kubeconfig = arg;
                return 0;
        case OPT_CONFIGMAP:
                a->configmap = arg;
                return 0;
        case OPT_ISVC:
                a->isvc = arg;
                return 0;
        case OPT_NAMESPACE:
                a->ns = arg;
                return 0;
        case OPT_API_WATCH:
                if (!streq(arg, "auto") && !streq(arg, "on") && !streq(arg, "off")) {
                        (void)snprintf(err, err_size, "invalid --api-watch '%s' (auto, on or off)",
                                       arg);
                        return -EINVAL;
                }
                a->api_watch = arg;
                return 0;
        case OPT_FILE_POLL:
                secs = &a->file_poll;
                break;
        case OPT_CONNECT_TIMEOUT:
                secs = &a->connect_timeout;
                break;
        case OPT_STALL_TIMEOUT:
                secs = &a->stall_timeout;
                break;
        case OPT_STATUS_HEARTBEAT:
                secs = &a->heartbeat;
                break;
        case OPT_MAX_MODEL_SIZE:
                if (size_parse(arg, &a->max_model_size) < 0 || a->max_model_size == 0) {
                        (void)snprintf(err, err_size,
                                       "invalid --max-model-size '%s' (bytes, e.g. 64Gi or 500M)",
                                       arg);
                        return -EINVAL;
                }
                return 0;
        case OPT_MAX_ARCHIVE_ENTRIES:
                if (safe_atou64(arg, &a->max_archive_entries) < 0 || a->max_archive_entries == 0) {
                        (void)snprintf(err, err_size, "invalid --max-archive-entries '%s'", arg);
                        return -EINVAL;
                }
                return 0;
        case OPT_STOP_TIMEOUT:
                secs = &a->stop_timeout;
                break;
        case OPT_IGNORED:
                used = strlen(a->ignored);
                (void)snprintf(a->ignored + used, sizeof(a->ignored) - used, "%s--%s",
                               used ? " " : "", opt->name);
                return 0;
        default:
                return -EINVAL;
        }
        if (safe_atou32(arg, secs) < 0 || *secs == 0 || *secs > 86400) {
                (void)snprintf(err, err_size, "invalid --%s '%s' (1-86400 seconds)", opt->name,
                               arg);
                return -EINVAL;
        }
        return 0;
}

static const struct cli_command agent_cli = {
        .name = "agent",
        .synopsis = "The model agent of a multi-model serving pod (KServe's agent container):\n"
                    "proxies serving traffic to the model server and, with --enable-puller,\n"
                    "turns models.json into downloaded, loaded models (docs/agent.md).",
        .options = agent_options,
        .n_options = ELEMENTSOF(agent_options),
        .epilog =
                "KServe's logger and batcher flags are accepted and named in a startup warning.\n"
                "Go spellings work too: -port 9081, --enable-puller=true, --logger-tls-skip-verify false.",
        .set = agent_set,
};

static bool is_bool_word(const char *s)
{
        return s && (streq(s, "true") || streq(s, "false"));
}

static const struct cli_option *find_option(const char *name, size_t len)
{
        for (size_t i = 0; i < ELEMENTSOF(agent_options); i++)
                if (strlen(agent_options[i].name) == len &&
                    strneq(agent_options[i].name, name, len))
                        return &agent_options[i];
        return NULL;
}

/*
 * Go's flag package, which KServe's agent uses, also takes "-name" and, as KServe's pod mutator
 * writes it, a boolean followed by "true"/"false" as a separate word. Rewrites those into
 * getopt's spellings ("--name", "--name=false"). Returns an owned argv (strings owned too).
 */
static void strv_free(char **v)
{
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}
DEFINE_CLEANUP_FUNC(char **, strv_free)

/* One word in getopt's spelling: "-name[=v]" of a known option becomes "--name[=v]". Owned. */
static char *go_word(const char *a)
{
        char *s = NULL;

        if (a[0] != '-' || a[1] == '-' || !a[1] || !a[2])
                return strdup(a);
        if (!find_option(a + 1, strcspn(a + 1, "=")))
                return strdup(a);
        if (asprintf(&s, "-%s", a) < 0)
                return NULL;
        return s;
}

/* "--flag" of a boolean followed by "true"/"false" becomes "--flag=VALUE" (consumes @next). */
static char *go_bool_pair(char *s, const char *next, bool *ret_consumed)
{
        const struct cli_option *o;
        char *j = NULL;

        *ret_consumed = false;
        if (s[0] != '-' || s[1] != '-' || strchr(s, '='))
                return s;
        o = find_option(s + 2, strlen(s + 2));
        if (!o || o->arg != CLI_ARG_OPTIONAL || !is_bool_word(next))
                return s;
        if (asprintf(&j, "%s=%s", s, next) < 0)
                j = NULL;
        free(s);
        *ret_consumed = true;
        return j;
}

/*
 * Go's flag package, which KServe's agent uses, also takes "-name" and, as KServe's pod mutator
 * writes it, a boolean followed by "true"/"false" as a separate word. Rewrites those into
 * getopt's spellings ("--name", "--name=false"). Returns an owned argv (strings owned too).
 */
static char **go_flags_to_getopt(int argc, char **argv, int *ret_argc)
{
        CLEANUP(strv_freep) char **out = calloc((size_t)argc + 1, sizeof(char *));
        int n = 0;

        if (!out)
                return NULL;
        for (int i = 0; i < argc; i++) {
                bool consumed = false;
                char *s = i > 0 ? go_word(argv[i]) : strdup(argv[i]);

                if (s)
                        s = go_bool_pair(s, i + 1 < argc ? argv[i + 1] : NULL, &consumed);
                if (!s)
                        return NULL;
                if (consumed)
                        i++;
                out[n++] = s;
        }
        *ret_argc = n;
        return TAKE_PTR(out);
}

struct agent_ctx {
        struct readiness_probe probe;
        struct agent *agent;
};

static bool ctx_ready(void *userdata)
{
        struct agent_ctx *c = userdata;
        return readiness_probe_run(&c->probe);
}

static char *ctx_status(void *userdata)
{
        struct agent_ctx *c = userdata;
        json_t *j;
        char *s;

        if (!c->agent)
                return strdup("[]");
        j = agent_status(c->agent);
        s = j ? json_dumps(j, JSON_COMPACT) : NULL;
        json_decref(j);
        return s;
}

/* The agent's counters in Prometheus' text format (docs/agent.md "Status"). */
static char *ctx_metrics(void *userdata)
{
        struct agent_ctx *c = userdata;
        struct agent_counters k = { 0 };
        char *s = NULL;

        if (c->agent)
                agent_counters(c->agent, &k);
        if (asprintf(&s,
                     "# TYPE modelplane_agent_downloads_total counter\n"
                     "modelplane_agent_downloads_total{result=\"ok\"} %lu\n"
                     "modelplane_agent_downloads_total{result=\"failed\"} %lu\n"
                     "modelplane_agent_downloads_total{result=\"cancelled\"} %lu\n"
                     "# TYPE modelplane_agent_loads_total counter\n"
                     "modelplane_agent_loads_total{result=\"ok\"} %lu\n"
                     "modelplane_agent_loads_total{result=\"failed\"} %lu\n"
                     "# TYPE modelplane_agent_unloads_total counter\n"
                     "modelplane_agent_unloads_total %lu\n"
                     "# TYPE modelplane_agent_retries_total counter\n"
                     "modelplane_agent_retries_total %lu\n"
                     "# TYPE modelplane_agent_refused_entries_total counter\n"
                     "modelplane_agent_refused_entries_total %lu\n"
                     "# TYPE modelplane_agent_jobs_in_flight gauge\n"
                     "modelplane_agent_jobs_in_flight %lu\n",
                     k.downloads_ok, k.downloads_failed, k.downloads_cancelled, k.loads_ok,
                     k.loads_failed, k.unloads, k.retries, k.refused, k.in_flight) < 0)
                return NULL;
        return s;
}

/* This pod's name: $POD_NAME (downward API) or $HOSTNAME (a pod's hostname is its name). */
static const char *pod_name(void)
{
        /* getenv() races only with setenv(), and nothing in this process changes the
         * environment */
        const char *pod = getenv("POD_NAME"); /* NOLINT(concurrency-mt-unsafe) */

        if (!pod || !*pod)
                pod = getenv("HOSTNAME"); /* NOLINT(concurrency-mt-unsafe) */
        return pod && *pod ? pod : NULL;
}

/* The InferenceService of this pod, from its label (needs get on pods). */
static char *isvc_of_pod(struct kube_client *kc, const char *ns)
{
        static const struct gvr pods = { "", "v1", "pods" };
        const char *pod = pod_name();
        struct kube_status st = { 0 };
        json_t *obj = NULL;
        const char *isvc;
        char *ret = NULL;

        if (!pod)
                return NULL;
        if (kube_get(kc, &pods, ns, pod, &obj, &st) < 0) {
                log_warn("agent: cannot read pod %s/%s to find its InferenceService: %s", ns, pod,
                         st.message);
                return NULL;
        }
        isvc = json_string_value(
                json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"),
                                "serving.kserve.io/inferenceservice"));
        if (isvc)
                ret = strdup(isvc);
        json_decref(obj);
        return ret;
}

/* @isvc_opt: --inference-service (NULL: this pod's label, unless @configmap is given). */
static int start_api_watch(struct agent *a, const char *kubeconfig, const char *configmap,
                           const char *isvc_opt, const char *ns_opt, bool required,
                           uint32_t heartbeat, struct cm_watch **ret, struct status_writer **ret_sw)
{
        struct kube_config_options ko = { .kubeconfig_path = kubeconfig };
        CLEANUP(kube_config_freep) struct kube_config *cfg = NULL;
        CLEANUP(kube_client_freep) struct kube_client *kc = NULL;
        AUTOFREE char *isvc = NULL; /* owned: @isvc_opt's copy or the pod's label */
        char name[MODELCONFIG_NAME_MAX + 1], err[512] = "";
        const char *ns;
        int r;

        if (isvc_opt) {
                isvc = strdup(isvc_opt);
                if (!isvc)
                        return log_error_errno(-ENOMEM, "agent: cannot start the API watch");
        }
        r = kube_config_load(&ko, &cfg, err, sizeof(err));
        if (r < 0) {
                if (required)
                        return log_error_errno(r, "agent: --api-watch=on but no API access: %s",
                                               err);
                log_info("agent: no API access (%s); following the mounted file only", err);
                return 0;
        }
        r = kube_client_new(cfg, &(struct kube_client_options){ .user_agent = "modelplane-agent" },
                            &kc);
        if (r < 0)
                return log_error_errno(r, "agent: cannot create the API client");
        ns = ns_opt ? ns_opt : kube_client_namespace(kc);
        if (configmap) {
                (void)snprintf(name, sizeof(name), "%s", configmap);
        } else {
                if (!isvc)
                        isvc = isvc_of_pod(kc, ns);
                if (!isvc) {
                        if (required)
                                return log_error_errno(
                                        -EINVAL,
                                        "agent: --api-watch=on needs --configmap, --inference-service or a readable pod label");
                        log_warn(
                                "agent: API access but no InferenceService known (--inference-service, --configmap); following the mounted file only");
                        return 0;
                }
                r = modelconfig_name(isvc, name, sizeof(name));
                if (r < 0)
                        return log_error_errno(r, "agent: InferenceService name too long");
        }
        log_info("agent: watching ConfigMap %s/%s via %s", ns, name, cfg->source);
        if (isvc && pod_name()) {
                struct kube_client *sc = NULL;
                r = kube_client_dup(kc, &sc);
                if (r >= 0)
                        r = status_writer_start(a, sc, ns, pod_name(), isvc, 0,
                                                heartbeat * USEC_PER_SEC, ret_sw);
                if (r < 0)
                        return log_error_errno(r, "agent: cannot start the status writer");
                log_info("agent: per-model status in ConfigMap %s/modelstatus-%s (heartbeat %us)",
                         ns, pod_name(), heartbeat);
        }
        return cm_watch_start(a, TAKE_PTR(kc), ns, name, ret);
}

/* What cmd_agent runs; agent_run_release() stops it, in this order. */
struct agent_run {
        struct agent_ctx ctx;
        struct fetch_config fc;
        struct proxy *proxy;
        struct file_watch *fw;
        struct cm_watch *cw;
        struct status_writer *sw;
        struct agent *agent;
        char default_url[64];
};

static void agent_run_release(struct agent_run *s)
{
        s->proxy = proxy_stop(s->proxy);
        s->fw = file_watch_stop(s->fw);
        s->cw = cm_watch_stop(s->cw);
        s->sw = status_writer_stop(s->sw); /* one last write of the final state */
        if (!agent_free_checked(TAKE_PTR(s->agent))) {
                /* a download still runs: exit without tearing libcurl down under it */
                log_info("agent: exiting with a download in flight");
                (void)fflush(NULL);
                _exit(0);
        }
        fetch_config_release(&s->fc);
        readiness_probe_release(&s->ctx.probe);
}

static const char *agent_server_url(const struct agent_run *s, const struct agent_args *args)
{
        return args->server_url ? args->server_url : s->default_url;
}

/* The download-and-load reconciler. Returns 0 or the exit status. */
static int start_reconciler(struct agent_run *s, const struct agent_args *args)
{
        struct stat st;
        int r;

        if (stat(args->model_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
                log_error("agent: --model-dir %s is not a directory", args->model_dir);
                return 1;
        }
        r = fetch_config_from_env(&s->fc);
        if (r < 0)
                return r;
        s->fc.connect_timeout_sec = args->connect_timeout;
        s->fc.stall_timeout_sec = args->stall_timeout;
        s->fc.size_max = args->max_model_size;
        s->fc.entries_max = args->max_archive_entries;
        (void)snprintf(s->default_url, sizeof(s->default_url), "http://127.0.0.1:%u",
                       args->component_port);
        r = agent_new(
                &(struct agent_options){
                        .model_dir = args->model_dir,
                        .server_url = agent_server_url(s, args),
                        .download_workers = args->workers,
                        .fetch = &s->fc,
                        .stop_timeout = args->stop_timeout * USEC_PER_SEC,
                },
                &s->agent);
        if (r >= 0) {
                /* Start-up is over: the file pages it read (the linker's work on the libraries of
                 * the one binary, OpenSSL's initialisation) leave RSS before any thread runs; see
                 * docs/agent.md "Footprint". */
                unsigned long kib = memory_release_startup_pages();
                log_debug("agent: released %lu KiB of start-up file pages", kib);
                r = agent_start(s->agent);
        }
        if (r < 0) {
                log_error_errno(r, "agent: cannot start the reconciler");
                return 1;
        }
        s->ctx.agent = s->agent;
        return 0;
}

/* The puller: the reconciler and the sources of models.json (API watch, mounted file). Returns 0
 * or the exit status. */
static int start_puller(struct agent_run *s, const struct agent_args *args)
{
        int r;

        r = start_reconciler(s, args);
        if (r != 0)
                return r;
        if (!streq(args->api_watch, "off")) {
                r = start_api_watch(s->agent, args->kubeconfig, args->configmap, args->isvc,
                                    args->ns, streq(args->api_watch, "on"), args->heartbeat, &s->cw,
                                    &s->sw);
                if (r < 0)
                        return 1;
        }
        r = file_watch_start(s->agent, args->config_dir, args->file_poll, &s->fw);
        if (r < 0) {
                log_error_errno(r, "agent: cannot watch %s", args->config_dir);
                return 1;
        }
        log_info("agent: puller on: models.json from %s%s, models in %s, model server %s",
                 args->config_dir, s->cw ? " and the API" : "", args->model_dir,
                 agent_server_url(s, args));
        return 0;
}

/* The serving proxy in front of the model server. Returns 0 or the exit status. */
static int start_proxy(struct agent_run *s, const struct agent_args *args)
{
        int r;

        r = proxy_start(
                &(struct proxy_config){
                        .address = args->listen,
                        .port = args->port,
                        .upstream_host = "127.0.0.1",
                        .upstream_port = args->component_port,
                        .ready = ctx_ready,
                        .ready_userdata = &s->ctx,
                        .status_path = AGENT_STATUS_PATH,
                        .status = ctx_status,
                        .metrics_path = AGENT_METRICS_PATH,
                        .metrics = ctx_metrics,
                },
                &s->proxy);
        if (r < 0) {
                log_error_errno(r, "agent: cannot listen on %s:%u", args->listen,
                                (unsigned)args->port);
                return 1;
        }
        log_info("agent: serving on %s:%u, proxying to 127.0.0.1:%u", args->listen,
                 (unsigned)proxy_port(s->proxy), (unsigned)args->component_port);
        (void)printf("listening on %s:%u\n", args->listen, (unsigned)proxy_port(s->proxy));
        (void)fflush(stdout);
        return 0;
}

int cmd_agent(int argc, char **argv)
{
        struct agent_args args = {
                .port = 9081,
                .component_port = 8080,
                .config_dir = "/mnt/configs",
                .model_dir = "/mnt/models",
                .listen = "0.0.0.0",
                .api_watch = "auto",
                .workers = 4,
                .file_poll = 10,
                .connect_timeout = 10,
                .stall_timeout = 30,
                .heartbeat = 10,
                .max_model_size = FETCH_SIZE_MAX_DEFAULT,
                .max_archive_entries = FETCH_ENTRIES_MAX_DEFAULT,
                .stop_timeout = 25,
        };
        CLEANUP(strv_freep) char **av = NULL;
        CLEANUP(agent_run_release) struct agent_run s = { 0 };
        const char *probe_spec;
        char err[512] = "";
        sigset_t mask;
        int ac = 0, r, sig;

        av = go_flags_to_getopt(argc, argv, &ac);
        if (!av) {
                (void)fprintf(stderr, "modelplane agent: out of memory\n");
                return 1;
        }
        r = cli_parse(&agent_cli, ac, av, &args);
        if (r != 0)
                return cli_exit_status(r);
        if (args.ignored[0])
                log_warn("agent: not implemented, ignored: %s (request logging and batching are "
                         "not done by this agent; see docs/agent.md)",
                         args.ignored);

        /* start-up, before any thread: nothing in this process changes the environment */
        probe_spec = getenv("SERVING_READINESS_PROBE"); /* NOLINT(concurrency-mt-unsafe) */
        r = readiness_probe_parse(probe_spec, args.component_port, &s.ctx.probe, err, sizeof(err));
        if (r < 0) {
                log_error("agent: %s", err);
                return 1;
        }
        (void)cli_block_exit_signals(&mask);
        if (args.puller) {
                r = start_puller(&s, &args);
                if (r != 0)
                        return r;
        }
        r = start_proxy(&s, &args);
        if (r != 0)
                return r;

        r = sigwait(&mask, &sig);
        log_info("agent: signal %d received, shutting down", r == 0 ? sig : -1);
        /* no load call from now on; the ones in flight get up to --stop-timeout */
        if (s.agent)
                (void)agent_stop(s.agent);
        return 0;
}
