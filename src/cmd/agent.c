/* SPDX-License-Identifier: Apache-2.0 */
/*
 * modelplane agent: the model agent of a KServe multi-model serving pod (docs/agent.md). Takes
 * the flags and environment KServe's pod mutator gives its agent container, so that setting
 * agent.image in inferenceservice-config is all it takes to switch.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/agent.h"
#include "agent/fetch.h"
#include "agent/proxy.h"
#include "agent/readiness.h"
#include "agent/watch-configmap.h"
#include "agent/watch-file.h"
#include "cmd/commands.h"
#include "kube/client.h"
#include "kube/config.h"
#include "serving/modelconfig.h"
#include "util/log.h"
#include "util/parse-util.h"

#define AGENT_STATUS_PATH "/modelplane/agent/models"

static void agent_usage(FILE *f)
{
        fprintf(f,
                "Usage: modelplane agent [OPTIONS]\n\n"
                "The model agent of a multi-model serving pod: proxies serving traffic to the model\n"
                "server and, with --enable-puller, turns models.json into downloaded, loaded models.\n\n"
                "  --port PORT                 serving/readiness port (default 9081)\n"
                "  --component-port PORT       the model server's port (default 8080)\n"
                "  --enable-puller             download and load the models of models.json\n"
                "  --config-dir DIR            the mounted modelconfig ConfigMap (default /mnt/configs)\n"
                "  --model-dir DIR             where models are downloaded (default /mnt/models)\n"
                "  --listen-address ADDR       (default 0.0.0.0)\n"
                "  --model-server-url URL      repository API base (default http://127.0.0.1:COMPONENT-PORT)\n"
                "  --download-workers N        concurrent downloads (default 4)\n"
                "  --kubeconfig FILE           API access for the ConfigMap watch (default: $KUBECONFIG,\n"
                "                              in-cluster, ~/.kube/config)\n"
                "  --configmap NAME            watch this ConfigMap (default modelconfig-ISVC-0)\n"
                "  --inference-service NAME    the InferenceService (default: this pod's label)\n"
                "  --namespace NS              (default: the service account's namespace)\n"
                "  --api-watch auto|on|off     watch the ConfigMap through the API (default auto)\n"
                "  --file-poll SECS            safety-net re-read of models.json (default 10)\n"
                "  --connect-timeout SECS      per download connection (default 10)\n"
                "  --stall-timeout SECS        abort a download below 1 byte/s for this long (default 30)\n"
                "  --log-level LEVEL           debug, info, warn, error (default info)\n"
                "  -h, --help\n\n"
                "KServe's logger and batcher flags are accepted and ignored with a warning.\n");
}

enum {
        OPT_PORT = 1000,
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
        OPT_LOG_LEVEL,
        OPT_CONNECT_TIMEOUT,
        OPT_STALL_TIMEOUT,
        OPT_IGNORED,      /* takes a value */
        OPT_IGNORED_BOOL, /* Go bool flag: alone, =value, or followed by true/false */
};

static const struct option agent_options[] = {
        { "port", required_argument, NULL, OPT_PORT },
        { "component-port", required_argument, NULL, OPT_COMPONENT_PORT },
        { "enable-puller", optional_argument, NULL, OPT_ENABLE_PULLER },
        { "config-dir", required_argument, NULL, OPT_CONFIG_DIR },
        { "model-dir", required_argument, NULL, OPT_MODEL_DIR },
        { "listen-address", required_argument, NULL, OPT_LISTEN },
        { "model-server-url", required_argument, NULL, OPT_SERVER_URL },
        { "download-workers", required_argument, NULL, OPT_WORKERS },
        { "kubeconfig", required_argument, NULL, OPT_KUBECONFIG },
        { "configmap", required_argument, NULL, OPT_CONFIGMAP },
        { "inference-service", required_argument, NULL, OPT_ISVC },
        { "namespace", required_argument, NULL, OPT_NAMESPACE },
        { "api-watch", required_argument, NULL, OPT_API_WATCH },
        { "file-poll", required_argument, NULL, OPT_FILE_POLL },
        { "log-level", required_argument, NULL, OPT_LOG_LEVEL },
        { "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
        { "stall-timeout", required_argument, NULL, OPT_STALL_TIMEOUT },
        { "help", no_argument, NULL, 'h' },
        /* KServe's logger, batcher and probe flags (cmd/agent/main.go): not implemented */
        { "log-url", required_argument, NULL, OPT_IGNORED },
        { "source-uri", required_argument, NULL, OPT_IGNORED },
        { "log-mode", required_argument, NULL, OPT_IGNORED },
        { "log-store-path", required_argument, NULL, OPT_IGNORED },
        { "log-store-format", required_argument, NULL, OPT_IGNORED },
        { "log-marshaller-url", required_argument, NULL, OPT_IGNORED },
        { "log-marshaller-port", required_argument, NULL, OPT_IGNORED },
        { "log-batch-size", required_argument, NULL, OPT_IGNORED },
        { "log-batch-interval", required_argument, NULL, OPT_IGNORED },
        { "endpoint", required_argument, NULL, OPT_IGNORED },
        { "component", required_argument, NULL, OPT_IGNORED },
        { "metadata-headers", required_argument, NULL, OPT_IGNORED },
        { "metadata-annotations", required_argument, NULL, OPT_IGNORED },
        { "logger-ca-cert-file", required_argument, NULL, OPT_IGNORED },
        { "logger-tls-skip-verify", optional_argument, NULL, OPT_IGNORED_BOOL },
        { "workers", required_argument, NULL, OPT_IGNORED },
        { "enable-batcher", optional_argument, NULL, OPT_IGNORED_BOOL },
        { "max-batchsize", required_argument, NULL, OPT_IGNORED },
        { "max-latency", required_argument, NULL, OPT_IGNORED },
        { "probe-period", required_argument, NULL, OPT_IGNORED },
        { 0 },
};

static bool is_bool_word(const char *s)
{
        return s && (streq(s, "true") || streq(s, "false"));
}

/* Go's bool flags: "--x", "--x=true"; KServe also writes "--x false" (two words). */
static bool bool_value(int argc, char **argv, bool *ok)
{
        *ok = true;
        if (optarg)
                return streq(optarg, "true") || streq(optarg, "1") ||
                       (!(streq(optarg, "false") || streq(optarg, "0")) && !(*ok = false));
        if (optind < argc && is_bool_word(argv[optind]))
                return streq(argv[optind++], "true");
        return true;
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

/* The InferenceService of this pod, from its label (needs get on pods). */
static char *isvc_of_pod(struct kube_client *kc, const char *ns)
{
        static const struct gvr pods = { "", "v1", "pods" };
        const char *pod = getenv("POD_NAME");
        struct kube_status st = { 0 };
        json_t *obj = NULL;
        const char *isvc;
        char *ret = NULL;

        if (!pod || !*pod)
                pod = getenv("HOSTNAME");
        if (!pod || !*pod)
                return NULL;
        if (kube_get(kc, &pods, ns, pod, &obj, &st) < 0) {
                log_warn("agent: cannot read pod %s/%s to find its InferenceService: %s", ns, pod,
                         st.message);
                return NULL;
        }
        isvc = json_string_value(json_object_get(
                json_object_get(json_object_get(obj, "metadata"), "labels"),
                "serving.kserve.io/inferenceservice"));
        if (isvc)
                ret = strdup(isvc);
        json_decref(obj);
        return ret;
}

static int start_api_watch(struct agent *a, const char *kubeconfig, const char *configmap,
                           const char *isvc, const char *ns_opt, bool required,
                           struct cm_watch **ret)
{
        struct kube_config_options ko = { .kubeconfig_path = kubeconfig };
        CLEANUP(kube_config_freep) struct kube_config *cfg = NULL;
        CLEANUP(kube_client_freep) struct kube_client *kc = NULL;
        AUTOFREE char *found_isvc = NULL;
        char name[MODELCONFIG_NAME_MAX + 1], err[512] = "";
        const char *ns;
        int r;

        r = kube_config_load(&ko, &cfg, err, sizeof(err));
        if (r < 0) {
                if (required)
                        return log_error_errno(r, "agent: --api-watch=on but no API access: %s", err);
                log_info("agent: no API access (%s); following the mounted file only", err);
                return 0;
        }
        r = kube_client_new(cfg, &(struct kube_client_options){ .user_agent = "modelplane-agent" }, &kc);
        if (r < 0)
                return log_error_errno(r, "agent: cannot create the API client");
        ns = ns_opt ? ns_opt : kube_client_namespace(kc);
        if (configmap) {
                snprintf(name, sizeof(name), "%s", configmap);
        } else {
                if (!isvc)
                        isvc = found_isvc = isvc_of_pod(kc, ns);
                if (!isvc) {
                        if (required)
                                return log_error_errno(-EINVAL, "agent: --api-watch=on needs --configmap, --inference-service or a readable pod label");
                        log_warn("agent: API access but no InferenceService known (--inference-service, --configmap); following the mounted file only");
                        return 0;
                }
                r = modelconfig_name(isvc, name, sizeof(name));
                if (r < 0)
                        return log_error_errno(r, "agent: InferenceService name too long");
        }
        log_info("agent: watching ConfigMap %s/%s via %s", ns, name, cfg->source);
        return cm_watch_start(a, TAKE_PTR(kc), ns, name, ret);
}

int cmd_agent(int argc, char **argv)
{
        uint16_t port = 9081, component_port = 8080;
        bool puller = false, ok;
        const char *config_dir = "/mnt/configs", *model_dir = "/mnt/models", *listen = "0.0.0.0";
        const char *server_url = NULL, *kubeconfig = NULL, *configmap = NULL, *isvc = NULL;
        const char *ns = NULL, *api_watch = "auto";
        uint32_t workers = 4, file_poll = 10, connect_timeout = 10, stall_timeout = 30;
        char ignored[1024] = "", err[512] = "", default_url[64];
        struct agent_ctx ctx = { 0 };
        struct fetch_config fc = { 0 };
        CLEANUP(proxy_stopp) struct proxy *proxy = NULL;
        CLEANUP(agent_freep) struct agent *agent = NULL;
        CLEANUP(file_watch_stopp) struct file_watch *fw = NULL;
        CLEANUP(cm_watch_stopp) struct cm_watch *cw = NULL;
        sigset_t mask;
        int c, r, sig;

        if (getenv("MODELPLANE_LOG_FORMAT") && streq(getenv("MODELPLANE_LOG_FORMAT"), "text"))
                log_set_format(LOG_FORMAT_TEXT);
        optind = 1;
        for (int idx = -1; (c = getopt_long_only(argc, argv, "h", agent_options, &idx)) >= 0; idx = -1) {
                const char *name = idx >= 0 ? agent_options[idx].name : "?";
                switch (c) {
                case OPT_PORT:
                case OPT_COMPONENT_PORT:
                        if (safe_atou16(optarg, c == OPT_PORT ? &port : &component_port) < 0) {
                                fprintf(stderr, "agent: --%s: invalid port '%s'\n", name, optarg);
                                return 2;
                        }
                        break;
                case OPT_ENABLE_PULLER:
                        puller = bool_value(argc, argv, &ok);
                        if (!ok) {
                                fprintf(stderr, "agent: --enable-puller: invalid boolean '%s'\n", optarg);
                                return 2;
                        }
                        break;
                case OPT_CONFIG_DIR:
                        config_dir = optarg;
                        break;
                case OPT_MODEL_DIR:
                        model_dir = optarg;
                        break;
                case OPT_LISTEN:
                        listen = optarg;
                        break;
                case OPT_SERVER_URL:
                        server_url = optarg;
                        break;
                case OPT_WORKERS:
                        if (safe_atou32(optarg, &workers) < 0 || workers == 0 || workers > 256) {
                                fprintf(stderr, "agent: --download-workers: expected 1..256, got '%s'\n", optarg);
                                return 2;
                        }
                        break;
                case OPT_KUBECONFIG:
                        kubeconfig = optarg;
                        break;
                case OPT_CONFIGMAP:
                        configmap = optarg;
                        break;
                case OPT_ISVC:
                        isvc = optarg;
                        break;
                case OPT_NAMESPACE:
                        ns = optarg;
                        break;
                case OPT_API_WATCH:
                        if (!streq(optarg, "auto") && !streq(optarg, "on") && !streq(optarg, "off")) {
                                fprintf(stderr, "agent: --api-watch: expected auto, on or off, got '%s'\n", optarg);
                                return 2;
                        }
                        api_watch = optarg;
                        break;
                case OPT_FILE_POLL:
                        if (safe_atou32(optarg, &file_poll) < 0 || file_poll == 0) {
                                fprintf(stderr, "agent: --file-poll: expected seconds > 0, got '%s'\n", optarg);
                                return 2;
                        }
                        break;
                case OPT_CONNECT_TIMEOUT:
                case OPT_STALL_TIMEOUT:
                        if (safe_atou32(optarg, c == OPT_CONNECT_TIMEOUT ? &connect_timeout : &stall_timeout) < 0 ||
                            (c == OPT_CONNECT_TIMEOUT ? connect_timeout : stall_timeout) == 0) {
                                fprintf(stderr, "agent: --%s: expected seconds > 0, got '%s'\n", name, optarg);
                                return 2;
                        }
                        break;
                case OPT_LOG_LEVEL: {
                        enum log_level l = log_level_from_string(optarg);
                        if (l < 0) {
                                fprintf(stderr, "agent: --log-level: unknown level '%s'\n", optarg);
                                return 2;
                        }
                        log_set_max_level(l);
                        break;
                }
                case OPT_IGNORED_BOOL:
                        (void)bool_value(argc, argv, &ok);
                        __attribute__((fallthrough));
                case OPT_IGNORED: {
                        size_t used = strlen(ignored);
                        snprintf(ignored + used, sizeof(ignored) - used, "%s--%s", used ? " " : "", name);
                        break;
                }
                case 'h':
                        agent_usage(stdout);
                        return 0;
                default:
                        agent_usage(stderr);
                        return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "agent: unexpected argument '%s'\n", argv[optind]);
                return 2;
        }
        if (ignored[0])
                log_warn("agent: not implemented, ignored: %s (request logging and batching are "
                         "not done by this agent; see docs/agent.md)", ignored);

        r = readiness_probe_parse(getenv("SERVING_READINESS_PROBE"), component_port, &ctx.probe, err,
                                  sizeof(err));
        if (r < 0) {
                log_error("agent: %s", err);
                return 1;
        }

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        (void)pthread_sigmask(SIG_BLOCK, &mask, NULL);
        (void)signal(SIGPIPE, SIG_IGN);

        if (puller) {
                struct stat st;
                if (stat(model_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
                        log_error("agent: --model-dir %s is not a directory", model_dir);
                        r = 1;
                        goto out;
                }
                r = fetch_config_from_env(&fc);
                if (r < 0)
                        goto out;
                fc.connect_timeout_sec = connect_timeout;
                fc.stall_timeout_sec = stall_timeout;
                snprintf(default_url, sizeof(default_url), "http://127.0.0.1:%u", component_port);
                r = agent_new(&(struct agent_options){
                                      .model_dir = model_dir,
                                      .server_url = server_url ? server_url : default_url,
                                      .download_workers = workers,
                                      .fetch = &fc,
                              },
                              &agent);
                if (r >= 0)
                        r = agent_start(agent);
                if (r < 0) {
                        log_error_errno(r, "agent: cannot start the reconciler");
                        r = 1;
                        goto out;
                }
                ctx.agent = agent;
                if (!streq(api_watch, "off")) {
                        r = start_api_watch(agent, kubeconfig, configmap, isvc, ns,
                                            streq(api_watch, "on"), &cw);
                        if (r < 0) {
                                r = 1;
                                goto out;
                        }
                }
                r = file_watch_start(agent, config_dir, file_poll, &fw);
                if (r < 0) {
                        log_error_errno(r, "agent: cannot watch %s", config_dir);
                        r = 1;
                        goto out;
                }
                log_info("agent: puller on: models.json from %s%s, models in %s, model server %s",
                         config_dir, cw ? " and the API" : "", model_dir,
                         server_url ? server_url : default_url);
        }

        r = proxy_start(&(struct proxy_config){
                                .address = listen,
                                .port = port,
                                .upstream_host = "127.0.0.1",
                                .upstream_port = component_port,
                                .ready = ctx_ready,
                                .ready_userdata = &ctx,
                                .status_path = AGENT_STATUS_PATH,
                                .status = ctx_status,
                        },
                        &proxy);
        if (r < 0) {
                log_error_errno(r, "agent: cannot listen on %s:%u", listen, (unsigned)port);
                r = 1;
                goto out;
        }
        log_info("agent: serving on %s:%u, proxying to 127.0.0.1:%u", listen,
                 (unsigned)proxy_port(proxy), (unsigned)component_port);
        printf("listening on %s:%u\n", listen, (unsigned)proxy_port(proxy));
        fflush(stdout);

        r = sigwait(&mask, &sig);
        log_info("agent: signal %d received, shutting down", r == 0 ? sig : -1);
        r = 0;
out:
        proxy = proxy_stop(proxy);
        fw = file_watch_stop(fw);
        cw = cm_watch_stop(cw);
        agent = agent_free(agent);
        fetch_config_release(&fc);
        readiness_probe_release(&ctx.probe);
        return r;
}
