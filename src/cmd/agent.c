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
#include "agent/batcher.h"
#include "agent/cloudevent.h"
#include "agent/fetch.h"
#include "agent/integrity.h"
#include "agent/logger.h"
#include "agent/proxy.h"
#include "agent/readiness.h"
#include "agent/routing.h"
#include "agent/status-writer.h"
#include "agent/watch-file.h"
#include "agent/watch-isvc.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "kube/client.h"
#include "kube/config.h"
#include "serving/modelconfig.h"
#include "serving/report.h"
#include "util/log.h"
#include "util/memory.h"
#include "util/parse-util.h"

#define AGENT_STATUS_PATH  "/modelplane/agent/models"
#define AGENT_METRICS_PATH "/modelplane/agent/metrics"
#define LIST_MAX           64 /* --metadata-headers / --metadata-annotations items */

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
        OPT_DRAIN_TIMEOUT,
        OPT_ADVERTISE_ADDRESS,
        OPT_FORWARD_WAIT,
        OPT_LOG_URL,
        OPT_SOURCE_URI,
        OPT_LOG_MODE,
        OPT_LOG_STORE_PATH,
        OPT_LOG_STORE_FORMAT,
        OPT_ENDPOINT,
        OPT_COMPONENT,
        OPT_METADATA_HEADERS,
        OPT_METADATA_ANNOTATIONS,
        OPT_LOGGER_CA,
        OPT_LOGGER_SKIP_VERIFY,
        OPT_LOG_WORKERS,
        OPT_LOG_QUEUE,
        OPT_LOG_MARSHALLER_URL,
        OPT_LOG_BATCH_SIZE,
        OPT_LOG_BATCH_INTERVAL,
        OPT_ENABLE_BATCHER,
        OPT_MAX_BATCHSIZE,
        OPT_MAX_LATENCY,
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
        { "drain-timeout", 0, CLI_ARG_REQUIRED, "SECS",
          "under placement, at SIGTERM, serve until other replicas\nhold this one's models, at most "
          "this long\n(default: --stop-timeout)",
          OPT_DRAIN_TIMEOUT },
        { "advertise-address", 0, CLI_ARG_REQUIRED, "HOST:PORT",
          "where other replicas reach this proxy (placement)\n(default POD_IP or the pod's IP, "
          "and --port)",
          OPT_ADVERTISE_ADDRESS },
        { "forward-wait", 0, CLI_ARG_REQUIRED, "SECS",
          "placement: how long a request for a model Loaded on\nno replica yet waits (default 10)",
          OPT_FORWARD_WAIT },
        /* KServe's logger and batcher flags (cmd/agent/main.go) */
        { "log-url", 0, CLI_ARG_REQUIRED, "URL",
          "log requests/responses as CloudEvents to this http(s) URL,\nor to file:///DIR",
          OPT_LOG_URL },
        { "source-uri", 0, CLI_ARG_REQUIRED, "URI", "ce-source of logged events", OPT_SOURCE_URI },
        { "log-mode", 0, CLI_ARG_REQUIRED, "MODE", "all, request or response (default all)",
          OPT_LOG_MODE },
        { "log-store-path", 0, CLI_ARG_REQUIRED, "PATH",
          "path segment of blob-store records (file:// log URL)", OPT_LOG_STORE_PATH },
        { "log-store-format", 0, CLI_ARG_REQUIRED, "FMT",
          "csv, else json (parquet: not supported,\nsee docs/agent.md)", OPT_LOG_STORE_FORMAT },
        { "endpoint", 0, CLI_ARG_REQUIRED, "NAME", "ce-endpoint of logged events", OPT_ENDPOINT },
        { "component", 0, CLI_ARG_REQUIRED, "NAME", "ce-component of logged events",
          OPT_COMPONENT },
        { "metadata-headers", 0, CLI_ARG_REQUIRED, "H1,H2", "request headers logged as ce-metadata",
          OPT_METADATA_HEADERS },
        { "metadata-annotations", 0, CLI_ARG_REQUIRED, "K=V,...", "logged as ce-annotations",
          OPT_METADATA_ANNOTATIONS },
        { "logger-ca-cert-file", 0, CLI_ARG_REQUIRED, "FILE",
          "CA of an https log URL, under /etc/tls/logger\n(default service-ca.crt)",
          OPT_LOGGER_CA },
        { "logger-tls-skip-verify", 0, CLI_ARG_OPTIONAL, "BOOL",
          "do not verify the log URL's certificate", OPT_LOGGER_SKIP_VERIFY },
        { "workers", 0, CLI_ARG_REQUIRED, "N", "logger workers (default 5)", OPT_LOG_WORKERS },
        { "log-queue-size", 0, CLI_ARG_REQUIRED, "N",
          "logger queue; a full queue drops (default 100)", OPT_LOG_QUEUE },
        { "enable-batcher", 0, CLI_ARG_OPTIONAL, "BOOL", "merge concurrent predict requests",
          OPT_ENABLE_BATCHER },
        { "max-batchsize", 0, CLI_ARG_REQUIRED, "N", "rows per batch (default 32)",
          OPT_MAX_BATCHSIZE },
        { "max-latency", 0, CLI_ARG_REQUIRED, "MS", "wait for a batch to fill (default 5000)",
          OPT_MAX_LATENCY },
        { "log-marshaller-url", 0, CLI_ARG_REQUIRED, "URL",
          "a blob store's batches are POSTed here and stored as\nanswered (default: marshalled "
          "in process)",
          OPT_LOG_MARSHALLER_URL },
        { "log-batch-size", 0, CLI_ARG_REQUIRED, "N", "records per blob-store object (default 1)",
          OPT_LOG_BATCH_SIZE },
        { "log-batch-interval", 0, CLI_ARG_REQUIRED, "DURATION",
          "store a partial batch after this long, e.g. 5s\n(default 0: wait for a full batch)",
          OPT_LOG_BATCH_INTERVAL },
        IGNORED("log-marshaller-port", CLI_ARG_REQUIRED),
        IGNORED("probe-period", CLI_ARG_REQUIRED),
};

struct agent_args {
        uint16_t port, component_port;
        bool puller;
        const char *config_dir, *model_dir, *listen, *server_url, *kubeconfig, *configmap;
        const char *isvc, *ns, *api_watch;
        uint32_t workers, file_poll, connect_timeout, stall_timeout, heartbeat, stop_timeout;
        uint32_t drain_timeout; /* 0: stop_timeout */
        const char *advertise;
        uint32_t forward_wait;
        uint64_t max_model_size, max_archive_entries;
        /* logger and batcher */
        const char *log_url, *source_uri, *log_store_path, *log_store_format, *endpoint;
        const char *component, *logger_ca;
        enum logger_mode log_mode;
        const char *metadata_headers[LIST_MAX], *metadata_annotations[LIST_MAX];
        size_t n_metadata_headers, n_metadata_annotations;
        bool tls_skip_verify, batcher;
        uint32_t log_workers, log_queue, max_batchsize, max_latency;
        const char *log_marshaller;
        uint32_t log_batch_size;
        uint64_t log_batch_interval;
        char ignored[1024];
};

/* A Go StringSlice flag: repeatable, each value comma-separated (split later). */
static int list_add(const char **v, size_t *n, const char *arg, char *err, size_t err_size,
                    const char *name)
{
        if (*n >= LIST_MAX) {
                (void)snprintf(err, err_size, "too many --%s", name);
                return -EINVAL;
        }
        v[(*n)++] = arg;
        return 0;
}

/* A positive count flag within [1, max]. */
static int count_set(uint32_t *v, const char *arg, uint32_t max, const char *name, char *err,
                     size_t err_size)
{
        if (safe_atou32(arg, v) < 0 || *v == 0 || *v > max) {
                (void)snprintf(err, err_size, "invalid --%s '%s' (1-%u)", name, arg, max);
                return -EINVAL;
        }
        return 0;
}

/* The logger's and batcher's flags. */
static int logger_batcher_set(struct agent_args *a, const struct cli_option *opt, const char *arg,
                              char *err, size_t err_size)
{
        switch (opt->id) {
        case OPT_LOG_URL:
                a->log_url = arg;
                return 0;
        case OPT_SOURCE_URI:
                a->source_uri = arg;
                return 0;
        case OPT_LOG_MODE:
                a->log_mode = logger_mode_from_string(arg);
                if (a->log_mode < 0) {
                        (void)snprintf(err, err_size,
                                       "invalid --log-mode '%s' (all, request or response)", arg);
                        return -EINVAL;
                }
                return 0;
        case OPT_LOG_STORE_PATH:
                a->log_store_path = arg;
                return 0;
        case OPT_LOG_STORE_FORMAT:
                a->log_store_format = arg;
                return 0;
        case OPT_ENDPOINT:
                a->endpoint = arg;
                return 0;
        case OPT_COMPONENT:
                a->component = arg;
                return 0;
        case OPT_METADATA_HEADERS:
                return list_add(a->metadata_headers, &a->n_metadata_headers, arg, err, err_size,
                                opt->name);
        case OPT_METADATA_ANNOTATIONS:
                return list_add(a->metadata_annotations, &a->n_metadata_annotations, arg, err,
                                err_size, opt->name);
        case OPT_LOGGER_CA:
                a->logger_ca = arg;
                return 0;
        case OPT_LOGGER_SKIP_VERIFY:
                return cli_parse_bool(arg, &a->tls_skip_verify) < 0 ? -EINVAL : 0;
        case OPT_LOG_WORKERS:
                return count_set(&a->log_workers, arg, 64, opt->name, err, err_size);
        case OPT_LOG_QUEUE:
                return count_set(&a->log_queue, arg, 1000000, opt->name, err, err_size);
        case OPT_LOG_MARSHALLER_URL:
                a->log_marshaller = arg;
                return 0;
        case OPT_LOG_BATCH_SIZE: {
                int32_t v;

                /* Go's flag.Int: any int; 1 or less stores each record alone */
                if (safe_atoi32(arg, &v) < 0 || v > (int32_t)LOGGER_BATCH_MAX) {
                        (void)snprintf(err, err_size, "invalid --log-batch-size '%s' (at most %u)",
                                       arg, LOGGER_BATCH_MAX);
                        return -EINVAL;
                }
                a->log_batch_size = v > 1 ? (uint32_t)v : 1;
                return 0;
        }
        case OPT_LOG_BATCH_INTERVAL:
                if (parse_go_duration_usec(arg, &a->log_batch_interval) < 0) {
                        (void)snprintf(err, err_size,
                                       "invalid --log-batch-interval '%s' (a Go duration: 500ms, "
                                       "5s, 1m)",
                                       arg);
                        return -EINVAL;
                }
                return 0;
        case OPT_ENABLE_BATCHER:
                return cli_parse_bool(arg, &a->batcher) < 0 ? -EINVAL : 0;
        case OPT_MAX_BATCHSIZE:
                return count_set(&a->max_batchsize, arg, 100000, opt->name, err, err_size);
        case OPT_MAX_LATENCY:
                return count_set(&a->max_latency, arg, 3600000, opt->name, err, err_size);
        default:
                return -EINVAL;
        }
}

/* --advertise-address HOST:PORT (an IPv6 host in brackets). */
static int advertise_set(struct agent_args *a, const char *arg, char *err, size_t err_size)
{
        const char *colon = strrchr(arg, ':');
        uint16_t port;

        if (!colon || colon == arg || safe_atou16(colon + 1, &port) < 0 || port == 0 ||
            strlen(arg) > REPORT_ADDRESS_MAX) {
                (void)snprintf(err, err_size, "invalid --advertise-address '%s' (HOST:PORT)", arg);
                return -EINVAL;
        }
        a->advertise = arg;
        return 0;
}

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
        case OPT_DRAIN_TIMEOUT:
                secs = opt->id == OPT_STOP_TIMEOUT ? &a->stop_timeout : &a->drain_timeout;
                break;
        case OPT_ADVERTISE_ADDRESS:
                return advertise_set(a, arg, err, err_size);
        case OPT_FORWARD_WAIT:
                secs = &a->forward_wait;
                break;
        case OPT_IGNORED:
                used = strlen(a->ignored);
                (void)snprintf(a->ignored + used, sizeof(a->ignored) - used, "%s--%s",
                               used ? " " : "", opt->name);
                return 0;
        default:
                return logger_batcher_set(a, opt, arg, err, err_size);
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
                "KServe's --log-marshaller-port and --probe-period are accepted and named in a\n"
                "startup warning.\n"
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
        struct logger *logger;
        struct batcher *batcher;
        uint64_t tap_skipped; /* messages too large to log (atomic) */
};

/* The proxy's tap: requests and responses to the logger, as this mode says. */
static void ctx_tap(void *userdata, const struct proxy_tap_msg *m)
{
        struct agent_ctx *c = userdata;

        if (!logger_wants(c->logger, m->response))
                return;
        logger_submit(c->logger, &(struct logger_msg){
                                         .response = m->response,
                                         .id = m->id,
                                         .content_type = m->content_type,
                                         .names = m->names,
                                         .values = m->values,
                                         .n_headers = m->n_headers,
                                         .body = m->body,
                                         .body_len = m->body_len,
                                         .time_usec = m->time_usec,
                                 });
}

static void ctx_tap_skipped(void *userdata)
{
        struct agent_ctx *c = userdata;

        __atomic_add_fetch(&c->tap_skipped, 1, __ATOMIC_RELAXED);
}

static int ctx_batch(void *userdata, const char *path, const char *body, size_t len,
                     unsigned *ret_code, char **ret_body)
{
        struct agent_ctx *c = userdata;

        return batcher_submit(c->batcher, path, body, len, ret_code, ret_body);
}

/* The logger's and batcher's counters, Prometheus text format (a part of ctx_metrics()). */
static char *logger_batcher_metrics(struct agent_ctx *c)
{
        struct logger_stats ls = { 0 };
        struct batcher_stats bs = { 0 };
        char *s = NULL;

        if (c->logger)
                logger_get_stats(c->logger, &ls);
        if (c->batcher)
                batcher_get_stats(c->batcher, &bs);
        if (asprintf(
                    &s,
                    "# TYPE modelplane_agent_log_queued_total counter\n"
                    "modelplane_agent_log_queued_total %llu\n"
                    "# TYPE modelplane_agent_log_sent_total counter\n"
                    "modelplane_agent_log_sent_total %llu\n"
                    "# TYPE modelplane_agent_log_failed_total counter\n"
                    "modelplane_agent_log_failed_total %llu\n"
                    "# HELP modelplane_agent_log_dropped_total messages not logged: queue full\n"
                    "# TYPE modelplane_agent_log_dropped_total counter\n"
                    "modelplane_agent_log_dropped_total %llu\n"
                    "# HELP modelplane_agent_log_blobs_total objects a blob store got (a batch each)\n"
                    "# TYPE modelplane_agent_log_blobs_total counter\n"
                    "modelplane_agent_log_blobs_total %llu\n"
                    "# TYPE modelplane_agent_log_too_large_total counter\n"
                    "modelplane_agent_log_too_large_total %llu\n"
                    "# TYPE modelplane_agent_batches_total counter\n"
                    "modelplane_agent_batches_total %llu\n"
                    "# TYPE modelplane_agent_batched_requests_total counter\n"
                    "modelplane_agent_batched_requests_total %llu\n"
                    "# TYPE modelplane_agent_batch_passthrough_total counter\n"
                    "modelplane_agent_batch_passthrough_total %llu\n"
                    "# TYPE modelplane_agent_batch_refused_total counter\n"
                    "modelplane_agent_batch_refused_total %llu\n",
                    (unsigned long long)ls.queued, (unsigned long long)ls.sent,
                    (unsigned long long)ls.failed, (unsigned long long)ls.dropped,
                    (unsigned long long)ls.blobs,
                    (unsigned long long)__atomic_load_n(&c->tap_skipped, __ATOMIC_RELAXED),
                    (unsigned long long)bs.batches, (unsigned long long)bs.requests,
                    (unsigned long long)bs.passthrough, (unsigned long long)bs.refused) < 0)
                return NULL;
        return s;
}

/* Placement's local state for the proxy: whether a model is Loaded here. */
static bool ctx_model_loaded(void *userdata, const char *model)
{
        struct agent_ctx *c = userdata;

        return c->agent && agent_model_loaded(c->agent, model);
}

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
        char *s = NULL, *more, *all;

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
                     "modelplane_agent_jobs_in_flight %lu\n"
                     "# TYPE modelplane_agent_model_dir_listings_total counter\n"
                     "modelplane_agent_model_dir_listings_total %lu\n"
                     "# TYPE modelplane_agent_server_index_reads_total counter\n"
                     "modelplane_agent_server_index_reads_total %lu\n",
                     k.downloads_ok, k.downloads_failed, k.downloads_cancelled, k.loads_ok,
                     k.loads_failed, k.unloads, k.retries, k.refused, k.in_flight, k.listings,
                     k.indexes) < 0)
                return NULL;
        more = logger_batcher_metrics(c);
        if (!more || asprintf(&all, "%s%s", s, more) < 0)
                all = NULL;
        free(s);
        free(more);
        return all;
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

/* What cmd_agent runs; agent_run_release() stops it, in this order. */
struct agent_run {
        struct agent_ctx ctx;
        struct fetch_config fc;
        struct proxy *proxy;
        struct file_watch *fw;
        struct isvc_watch *iw;
        struct status_writer *sw;
        struct routing *routing;
        struct agent_route_port route; /* the routing's port, handed to the proxy */
        struct agent *agent;
        const char *pod_ip; /* $POD_IP (the downward API), read at start-up; may be NULL */
        char **metadata_headers, **annotations; /* the split StringSlice flags */
        char *annotations_json;
        char default_url[64];
        char upstream_url[64];
};

/* The status writer, the routing and the watches, once the ConfigMap @name (and @isvc, may be
 * NULL) is known. Takes @kc over. */
static int start_watchers(struct agent_run *s, const struct agent_args *args,
                          struct kube_client *kc, const char *ns, const char *name,
                          const char *isvc)
{
        CLEANUP(kube_client_freep) struct kube_client *owned = kc;
        const char *pod = isvc ? pod_name() : NULL;
        int r;

        if (pod) {
                struct kube_client *sc = NULL;
                r = kube_client_dup(owned, &sc);
                if (r >= 0)
                        r = status_writer_start(s->agent, sc,
                                                &(struct status_writer_config){
                                                        .ns = ns,
                                                        .pod = pod,
                                                        .isvc = isvc,
                                                        .heartbeat = args->heartbeat * USEC_PER_SEC,
                                                },
                                                &s->sw);
                if (r < 0)
                        return log_error_errno(r, "agent: cannot start the status writer");
                log_info("agent: per-model status in ConfigMap %s/modelstatus-%s (heartbeat %us)",
                         ns, pod, args->heartbeat);
        }
        r = routing_new(&(struct routing_config){ .agent = s->agent, .isvc = isvc, .pod = pod },
                        &s->routing);
        if (r < 0)
                return log_error_errno(r, "agent: cannot start the API watch");
        return isvc_watch_start(s->routing, TAKE_PTR(owned), ns, name, isvc, &s->iw);
}

/* The API source: --inference-service, else this pod's label, unless --configmap is given. */
static int start_api_watch(struct agent_run *s, const struct agent_args *args, bool required)
{
        struct kube_config_options ko = { .kubeconfig_path = args->kubeconfig };
        CLEANUP(kube_config_freep) struct kube_config *cfg = NULL;
        CLEANUP(kube_client_freep) struct kube_client *kc = NULL;
        AUTOFREE char *isvc = NULL; /* owned: --inference-service's copy or the pod's label */
        char name[MODELCONFIG_NAME_MAX + 1];
        struct error_detail kerr = { 0 };
        const char *err = kerr.message;
        const char *ns;
        int r;

        if (args->isvc) {
                isvc = strdup(args->isvc);
                if (!isvc)
                        return log_error_errno(-ENOMEM, "agent: cannot start the API watch");
        }
        r = kube_config_load(&ko, &cfg, &kerr);
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
        ns = args->ns ? args->ns : kube_client_namespace(kc);
        if (!isvc && !args->configmap)
                isvc = isvc_of_pod(kc, ns);
        if (args->configmap) {
                (void)snprintf(name, sizeof(name), "%s", args->configmap);
        } else if (!isvc) {
                if (required)
                        return log_error_errno(
                                -EINVAL,
                                "agent: --api-watch=on needs --configmap, --inference-service or a readable pod label");
                log_warn(
                        "agent: API access but no InferenceService known (--inference-service, --configmap); following the mounted file only");
                return 0;
        } else {
                r = modelconfig_name(isvc, name, sizeof(name));
                if (r < 0)
                        return log_error_errno(r, "agent: InferenceService name too long");
        }
        log_info("agent: watching ConfigMap %s/%s via %s", ns, name, cfg->source);
        return start_watchers(s, args, TAKE_PTR(kc), ns, name, isvc);
}

/* A StringSlice flag's values split at commas (Go's pflag), into an owned vector. */
static int split_list(const char *const *v, size_t n, char ***ret, size_t *ret_n)
{
        char **out = calloc((size_t)LIST_MAX * 8 + 1, sizeof(char *));
        size_t k = 0;

        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                for (const char *p = v[i]; *p;) {
                        size_t l = strcspn(p, ",");
                        if (k >= (size_t)LIST_MAX * 8) {
                                ce_strv_free(out);
                                return -E2BIG;
                        }
                        if (l > 0 && !(out[k++] = strndup(p, l))) {
                                ce_strv_free(out);
                                return -ENOMEM;
                        }
                        p += l + (p[l] == ',');
                }
        *ret = out;
        *ret_n = k;
        return 0;
}

/* The request logger (--log-url). Returns 0 or the exit status. */
static int start_logger(struct agent_run *s, const struct agent_args *args)
{
        size_t n_headers = 0, n_annotations = 0;
        char err[512] = "";
        bool remote;
        int r;

        if (!args->log_url)
                return 0;
        r = split_list(args->metadata_headers, args->n_metadata_headers, &s->metadata_headers,
                       &n_headers);
        if (r >= 0)
                r = split_list(args->metadata_annotations, args->n_metadata_annotations,
                               &s->annotations, &n_annotations);
        if (r < 0)
                return log_error_errno(r, "agent: --metadata-headers/--metadata-annotations"), 1;
        s->annotations_json = ce_annotations_json((const char *const *)s->annotations,
                                                  n_annotations);
        r = logger_start(
                &(struct logger_config){
                        .url = args->log_url,
                        .mode = args->log_mode,
                        .source_uri = args->source_uri,
                        .inference_service = args->isvc,
                        .namespace_ = args->ns,
                        .component = args->component,
                        .endpoint = args->endpoint,
                        .metadata_headers = s->metadata_headers,
                        .n_metadata_headers = n_headers,
                        .annotations_json = s->annotations_json,
                        .store_path = args->log_store_path,
                        .store_format = args->log_store_format,
                        .ca_cert_file = args->logger_ca ? args->logger_ca : "service-ca.crt",
                        .tls_skip_verify = args->tls_skip_verify,
                        .workers = args->log_workers,
                        .queue_size = args->log_queue,
                        .batch_size = args->log_batch_size,
                        .batch_interval_usec = args->log_batch_interval,
                        .marshaller_url = args->log_marshaller,
                },
                &s->ctx.logger, err, sizeof(err));
        if (r == -EOPNOTSUPP) {
                /* a destination KServe's agent has and this one not: serving goes on */
                log_error("agent: request logging is OFF: %s", err);
                return 0;
        }
        if (r < 0) {
                if (err[0])
                        log_error("agent: %s", err);
                else
                        log_error_errno(r, "agent: cannot start the request logger");
                return 1;
        }
        remote = logger_marshaller_remote(args->log_marshaller);
        log_info("agent: logging %s to %s (%u workers, queue %u, %u record%s per blob%s%s)",
                 args->log_mode == LOGGER_MODE_ALL       ? "requests and responses"
                 : args->log_mode == LOGGER_MODE_REQUEST ? "requests"
                                                         : "responses",
                 args->log_url, args->log_workers ? args->log_workers : 5,
                 args->log_queue ? args->log_queue : 100,
                 args->log_batch_size > 1 ? args->log_batch_size : 1,
                 args->log_batch_size > 1 ? "s" : "", remote ? ", marshaller " : "",
                 remote ? args->log_marshaller : "");
        return 0;
}

/* The batcher (--enable-batcher). Returns 0 or the exit status. */
static int start_batcher(struct agent_run *s, const struct agent_args *args)
{
        int r;

        if (!args->batcher)
                return 0;
        (void)snprintf(s->upstream_url, sizeof(s->upstream_url), "http://127.0.0.1:%u",
                       args->component_port);
        r = batcher_start(
                &(struct batcher_config){
                        .upstream = s->upstream_url,
                        .max_batch_size = args->max_batchsize,
                        .max_latency_ms = args->max_latency,
                },
                &s->ctx.batcher);
        if (r < 0)
                return log_error_errno(r, "agent: cannot start the batcher"), 1;
        log_info("agent: batching predict/infer requests: max batch size %u, max latency %u ms",
                 args->max_batchsize ? args->max_batchsize : 32,
                 args->max_latency ? args->max_latency : 5000);
        return 0;
}

static void agent_run_release(struct agent_run *s)
{
        batcher_cancel(s->ctx.batcher);
        s->proxy = proxy_stop(s->proxy);
        s->ctx.logger = logger_stop(s->ctx.logger);
        s->ctx.batcher = batcher_stop(s->ctx.batcher);
        ce_strv_free(s->metadata_headers);
        ce_strv_free(s->annotations);
        free(s->annotations_json);
        s->fw = file_watch_stop(s->fw);
        s->iw = isvc_watch_stop(s->iw);
        s->sw = status_writer_stop(s->sw);     /* one last write of the final state */
        s->routing = routing_free(s->routing); /* the proxy and the watches used it */
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
                r = start_api_watch(s, args, streq(args->api_watch, "on"));
                if (r < 0)
                        return 1;
        }
        r = file_watch_start(s->agent, args->config_dir, args->file_poll, &s->fw);
        if (r < 0) {
                log_error_errno(r, "agent: cannot watch %s", args->config_dir);
                return 1;
        }
        log_info("agent: puller on: models.json from %s%s, models in %s, model server %s",
                 args->config_dir, s->iw ? " and the API" : "", args->model_dir,
                 agent_server_url(s, args));
        return 0;
}

/* The serving proxy in front of the model server. Returns 0 or the exit status. */
static int start_proxy(struct agent_run *s, const struct agent_args *args)
{
        int r;

        if (s->routing)
                s->route = routing_port(s->routing);
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
                        .tap = s->ctx.logger ? ctx_tap : NULL,
                        .tap_skipped = ctx_tap_skipped,
                        .tap_userdata = &s->ctx,
                        .batch = s->ctx.batcher ? ctx_batch : NULL,
                        .batch_userdata = &s->ctx,
                        .route = s->routing ? &s->route : NULL,
                        .model_loaded = ctx_model_loaded,
                        .pod_name = pod_name(),
                        .forward_wait_ms = args->forward_wait * 1000U,
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

/* The report's data.address: --advertise-address, else this pod's IP ($POD_IP, else the Pod's
 * status.podIP) and the proxy's port. */
static void advertise(struct agent_run *s, const struct agent_args *args)
{
        const char *ip = s->pod_ip ? s->pod_ip : s->sw ? status_writer_pod_ip(s->sw) : NULL;
        char address[REPORT_ADDRESS_MAX + 1];

        if (!s->sw)
                return;
        if (args->advertise)
                (void)snprintf(address, sizeof(address), "%s", args->advertise);
        else if (!ip) {
                log_info("agent: this pod's IP is not known (POD_IP, status.podIP): other replicas "
                         "cannot forward requests here (--advertise-address)");
                return;
        } else
                (void)snprintf(address, sizeof(address), strchr(ip, ':') ? "[%s]:%u" : "%s:%u", ip,
                               (unsigned)proxy_port(s->proxy));
        if (status_writer_set_address(s->sw, address) < 0)
                log_error("agent: out of memory setting the advertised address");
        else
                log_info("agent: other replicas reach this proxy at %s", address);
}

/*
 * SIGTERM under placement (docs/placement.md "Hand-over"): the report says draining at once,
 * nothing new is loaded (nor unloaded: what is loaded stays served), and the stop waits until
 * every model loaded here is Loaded on another replica that is not draining, --drain-timeout at
 * most; a second signal ends the wait.
 */
static void drain(struct agent_run *s, const struct agent_args *args, const sigset_t *mask)
{
        uint32_t secs = args->drain_timeout ? args->drain_timeout : args->stop_timeout;
        usec_t start = now_monotonic(), deadline = start + secs * USEC_PER_SEC;
        char first[256] = "";
        int left;

        agent_stop_begin(s->agent);
        if (s->sw)
                status_writer_set_draining(s->sw);
        log_info("agent: draining: serving the models loaded here until other replicas hold "
                 "them (at most %u s)",
                 secs);
        for (;;) {
                struct timespec ts = { .tv_nsec = 100L * 1000 * 1000 };

                left = routing_handover_left(s->routing, first, sizeof(first));
                if (left == 0) {
                        log_info("agent: handed over in %.1f s: every model loaded here is Loaded "
                                 "on another replica",
                                 (double)(now_monotonic() - start) / (double)USEC_PER_SEC);
                        return;
                }
                if (now_monotonic() >= deadline) {
                        log_warn("agent: drain timeout: %d models loaded here (%s, ...) are not "
                                 "Loaded on another replica",
                                 left, first);
                        return;
                }
                if (sigtimedwait(mask, NULL, &ts) > 0) {
                        log_warn(
                                "agent: second signal: stopping without waiting for the hand-over");
                        return;
                }
        }
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
                .forward_wait = 10,
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
                log_warn("agent: not implemented, ignored: %s (the embedded log marshaller "
                         "server and the probe period; see docs/agent.md)",
                         args.ignored);

        /* start-up, before any thread: nothing in this process changes the environment */
        probe_spec = getenv("SERVING_READINESS_PROBE"); /* NOLINT(concurrency-mt-unsafe) */
        s.pod_ip = getenv("POD_IP");                    /* NOLINT(concurrency-mt-unsafe) */
        if (s.pod_ip && !s.pod_ip[0])
                s.pod_ip = NULL;
        r = readiness_probe_parse(probe_spec, args.component_port, &s.ctx.probe, err, sizeof(err));
        if (r < 0) {
                log_error("agent: %s", err);
                return 1;
        }
        (void)cli_block_exit_signals(&mask);
        r = start_logger(&s, &args);
        if (r == 0)
                r = start_batcher(&s, &args);
        if (r != 0)
                return r;
        if (args.puller) {
                r = start_puller(&s, &args);
                if (r != 0)
                        return r;
        }
        r = start_proxy(&s, &args);
        if (r != 0)
                return r;
        advertise(&s, &args);

        r = sigwait(&mask, &sig);
        log_info("agent: signal %d received, shutting down", r == 0 ? sig : -1);
        if (s.agent && s.routing && routing_placement(s.routing))
                drain(&s, &args, &mask);
        /* no load call from now on; the ones in flight get what is left of --stop-timeout */
        if (s.agent)
                (void)agent_stop(s.agent);
        return 0;
}
