/* SPDX-License-Identifier: Apache-2.0 */
/*
 * modelplane controller: the controller manager. Flags are named as controller-runtime managers
 * name them, so that manifests written for KServe's manager translate one to one.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "kube/cache.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/controller.h"
#include "kube/informer.h"
#include "kube/metrics.h"
#include "manager/manager.h"
#include "mrlink/config.h"
#include "mrlink/reconciler.h"
#include "serving/isvc.h"
#include "serving/reconciler.h"
#include "serving/replicas.h"
#include "util/log.h"
#include "util/memory.h"
#include "util/parse-util.h"
#include "webhook/server.h"

/* Command-line results: the one place process-global state may live (house style 5.6). */
static const char *arg_kubeconfig;
static const char *arg_context;
static const char *arg_metrics_bind = ":8080";
static const char *arg_probe_bind = ":8081";
static bool arg_leader_elect;
static const char *arg_leader_id = "modelplane-controller.serving.kserve.io";
static const char *arg_leader_namespace;
static unsigned arg_workers = 4;
static double arg_qps; /* 0: off, as controller-runtime >= 0.21 (API Priority and Fairness) */
static unsigned arg_burst = 100;
static unsigned arg_write_concurrency = 8;
static bool arg_webhook;
static unsigned arg_webhook_port = WEBHOOK_DEFAULT_PORT;
static const char *arg_webhook_cert_dir = WEBHOOK_DEFAULT_CERT_DIR;
static const char *arg_namespace;
static bool arg_registry_controller;
static bool arg_ready_requires_loaded;
static unsigned arg_delete_batch_ms = 1000; /* 0: no delete batching */
static bool arg_tm_finalizer;               /* docs/serving.md "Deletes and the finalizer" */

enum {
        ARG_KUBECONFIG,
        ARG_CONTEXT,
        ARG_METRICS,
        ARG_PROBE,
        ARG_LEADER_ELECT,
        ARG_LEADER_ID,
        ARG_LEADER_NS,
        ARG_WORKERS,
        ARG_QPS,
        ARG_BURST,
        ARG_WRITE_CONCURRENCY,
        ARG_NAMESPACE,
        ARG_WEBHOOK,
        ARG_WEBHOOK_PORT,
        ARG_WEBHOOK_CERT_DIR,
        ARG_REGISTRY_CONTROLLER,
        ARG_READY_REQUIRES_LOADED,
        ARG_DELETE_BATCH,
        ARG_TM_FINALIZER,
        ARG_VERBOSE,
};

static const struct cli_option controller_options[] = {
        { "kubeconfig", 0, CLI_ARG_REQUIRED, "PATH",
          "kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)", ARG_KUBECONFIG },
        { "context", 0, CLI_ARG_REQUIRED, "NAME", "kubeconfig context (default: current-context)",
          ARG_CONTEXT },
        { "metrics-bind-address", 0, CLI_ARG_REQUIRED, "ADDR",
          "Prometheus /metrics (default :8080, 0 = off)", ARG_METRICS },
        { "health-probe-bind-address", 0, CLI_ARG_REQUIRED, "ADDR",
          "/healthz and /readyz (default :8081, 0 = off)", ARG_PROBE },
        { "leader-elect", 0, CLI_ARG_OPTIONAL, "BOOL",
          "use a coordination.k8s.io Lease (one active replica)", ARG_LEADER_ELECT },
        { "leader-election-id", 0, CLI_ARG_REQUIRED, "NAME",
          "Lease name (default modelplane-controller.serving.kserve.io)", ARG_LEADER_ID },
        { "leader-election-namespace", 0, CLI_ARG_REQUIRED, "NS",
          "Lease namespace (default: in-cluster namespace)", ARG_LEADER_NS },
        { "max-concurrent-reconciles", 0, CLI_ARG_REQUIRED, "N", "workers, 1-256 (default 4)",
          ARG_WORKERS },
        { "kube-api-qps", 0, CLI_ARG_REQUIRED, "N",
          "client-side rate limit, 0 = off (default 0: the API server's\n"
          "Priority and Fairness limits; its 429s are retried)",
          ARG_QPS },
        { "kube-api-burst", 0, CLI_ARG_REQUIRED, "N",
          "client-side burst when --kube-api-qps > 0 (default 100)", ARG_BURST },
        { "max-concurrent-writes", 0, CLI_ARG_REQUIRED, "N",
          "API writes in flight per reconcile, 1-64 (default 8)", ARG_WRITE_CONCURRENCY },
        { "namespace", 0, CLI_ARG_REQUIRED, "NS", "watch one namespace only (default: all)",
          ARG_NAMESPACE },
        { "enable-webhook", 0, CLI_ARG_OPTIONAL, "BOOL", "serve the TrainedModel admission webhook",
          ARG_WEBHOOK },
        { "webhook-port", 0, CLI_ARG_REQUIRED, "N", "webhook port (default 9443)",
          ARG_WEBHOOK_PORT },
        { "webhook-cert-dir", 0, CLI_ARG_REQUIRED, "DIR",
          "tls.crt and tls.key (default " WEBHOOK_DEFAULT_CERT_DIR ")", ARG_WEBHOOK_CERT_DIR },
        { "enable-registry-controller", 0, CLI_ARG_NONE, NULL,
          "link InferenceServices to the model registry\n"
          "(also INFERENCE_SERVICE_CONTROLLER=managed)",
          ARG_REGISTRY_CONTROLLER },
        { "ready-requires-loaded", 0, CLI_ARG_OPTIONAL, "BOOL",
          "a TrainedModel is Ready only once a serving replica loaded it\n"
          "(default false: Ready = listed in models.json, as KServe)",
          ARG_READY_REQUIRES_LOADED },
        { "delete-batch-window", 0, CLI_ARG_REQUIRED, "MS",
          "a delete starting this soon after its InferenceService's last\n"
          "models.json write waits for the rest of it, 0-10000 (default 1000, 0 = off)",
          ARG_DELETE_BATCH },
        { "trainedmodel-finalizer", 0, CLI_ARG_OPTIONAL, "BOOL",
          "keep KServe's finalizer on every TrainedModel: a delete waits\n"
          "until models.json no longer lists the model (default false: the\n"
          "entry goes in the next pass; leftover finalizers are removed)",
          ARG_TM_FINALIZER },
        { "verbose", 'v', CLI_ARG_NONE, NULL, "debug logging (same as --zap-log-level debug)",
          ARG_VERBOSE },
};

/* The numeric options: each is range-checked, with the range in the error. */
static int controller_set_number(const struct cli_option *opt, const char *arg, char *err,
                                 size_t err_size)
{
        static const struct {
                int id;
                uint32_t min, max;
                unsigned *dest;
        } table[] = {
                { ARG_WORKERS, 1, 256, &arg_workers },
                { ARG_BURST, 0, 100000, &arg_burst },
                { ARG_WRITE_CONCURRENCY, 1, 64, &arg_write_concurrency },
                { ARG_WEBHOOK_PORT, 0, 65535, &arg_webhook_port },
                { ARG_DELETE_BATCH, 0, 10000, &arg_delete_batch_ms },
                { ARG_QPS, 0, 100000, NULL },
        };
        uint32_t u;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                if (table[i].id != opt->id)
                        continue;
                if (safe_atou32(arg, &u) < 0 || u < table[i].min || u > table[i].max) {
                        (void)snprintf(err, err_size, "invalid --%s '%s' (%" PRIu32 "-%" PRIu32 ")",
                                       opt->name, arg, table[i].min, table[i].max);
                        return -EINVAL;
                }
                if (table[i].dest)
                        *table[i].dest = u;
                else
                        arg_qps = u;
                return 0;
        }
        return -EINVAL;
}

static int controller_set_bool(const struct cli_option *opt, const char *arg, char *err,
                               size_t err_size)
{
        bool b;

        if (cli_parse_bool(arg, &b) < 0) {
                (void)snprintf(err, err_size, "invalid --%s value '%s' (true or false)", opt->name,
                               arg);
                return -EINVAL;
        }
        *(opt->id == ARG_WEBHOOK        ? &arg_webhook
          : opt->id == ARG_LEADER_ELECT ? &arg_leader_elect
          : opt->id == ARG_TM_FINALIZER ? &arg_tm_finalizer
                                        : &arg_ready_requires_loaded) = b;
        return 0;
}

static int controller_set(void *userdata, const struct cli_option *opt, const char *arg, char *err,
                          size_t err_size)
{
        (void)userdata;
        switch (opt->id) {
        case ARG_KUBECONFIG:
                arg_kubeconfig = arg;
                return 0;
        case ARG_CONTEXT:
                arg_context = arg;
                return 0;
        case ARG_METRICS:
                arg_metrics_bind = arg;
                return 0;
        case ARG_PROBE:
                arg_probe_bind = arg;
                return 0;
        case ARG_LEADER_ELECT:
        case ARG_WEBHOOK:
        case ARG_READY_REQUIRES_LOADED:
        case ARG_TM_FINALIZER:
                return controller_set_bool(opt, arg, err, err_size);
        case ARG_LEADER_ID:
                arg_leader_id = arg;
                return 0;
        case ARG_LEADER_NS:
                arg_leader_namespace = arg;
                return 0;
        case ARG_NAMESPACE:
                arg_namespace = arg;
                return 0;
        case ARG_WEBHOOK_CERT_DIR:
                arg_webhook_cert_dir = arg;
                return 0;
        case ARG_REGISTRY_CONTROLLER:
                arg_registry_controller = true;
                return 0;
        case ARG_VERBOSE:
                log_set_max_level(LOG_LEVEL_DEBUG);
                return 0;
        default:
                return controller_set_number(opt, arg, err, err_size);
        }
}

static const struct cli_command controller_cli = {
        .name = "controller",
        .synopsis = "Runs the TrainedModel controller (KServe multi-model serving).",
        .options = controller_options,
        .n_options = ELEMENTSOF(controller_options),
        .set = controller_set,
};

/* rest_client_requests_total{code,method,host}: fed by the client's request observer. The
 * registry exists only once the manager does, so the observer finds it through this struct. */
struct request_metrics {
        _Atomic(struct metrics_registry *) reg;
        char host[256];
};

static void observe_request(void *userdata, const char *method, int code)
{
        struct request_metrics *rm = userdata;
        struct metrics_registry *reg = atomic_load(&rm->reg);
        struct metric *m;
        char code_s[16];

        if (!reg)
                return;
        if (code > 0)
                (void)snprintf(code_s, sizeof(code_s), "%d", code);
        else
                (void)snprintf(code_s, sizeof(code_s), "<error>");
        if (metrics_runtime_child(reg, RUNTIME_METRIC_REST_CLIENT_REQUESTS_TOTAL,
                                  (const char *const[]){ code_s, method, rm->host, NULL }, &m) >= 0)
                metric_inc(m);
}

/* modelplane_trainedmodel_* counters from the reconciler's own statistics. */
struct tm_metrics {
        struct tm_reconciler *rec;
        struct kube_client *client; /* throttling counters (shared by every clone) */
        struct metric *throttled, *throttle_exhausted;
        struct metric *configmap_gets, *configmap_writes, *configmap_conflicts, *configmap_bytes;
        struct metric *metadata_writes, *status_writes, *deletes;
        struct metric *passes, *plans, *passes_skipped, *events_posted, *events_skipped;
        struct metric *assignment_writes, *placement_moved, *isvc_status_writes;
        /* placement, per pod {namespace, inferenceservice, pod}: recomputed on each scrape */
        struct metric_family *pod_models, *pod_bytes, *pod_capacity;
};

/* One InferenceService's pods (serving/spread.h's summary) as gauges. */
static void collect_placement_isvc(struct tm_metrics *tm, const char *key, const json_t *pods)
{
        AUTOFREE char *ns = strdup(key);
        char *isvc = ns ? strchr(ns, '/') : NULL;
        size_t i;
        json_t *pod;

        if (!isvc)
                return;
        *isvc++ = '\0';
        json_array_foreach(pods, i, pod) {
                const char *labels[] = { ns, isvc, json_string_value(json_object_get(pod, "pod")),
                                         NULL };
                struct metric *m;

                if (!labels[2])
                        continue;
                if (metric_family_child(tm->pod_models, labels, &m) >= 0)
                        metric_set(m, (double)json_integer_value(json_object_get(pod, "models")));
                if (metric_family_child(tm->pod_bytes, labels, &m) >= 0)
                        metric_set(m, (double)json_integer_value(json_object_get(pod, "assigned")));
                if (metric_family_child(tm->pod_capacity, labels, &m) >= 0)
                        metric_set(m, (double)json_integer_value(json_object_get(pod, "capacity")));
        }
}

static void collect_placement(struct tm_metrics *tm)
{
        json_auto_t *all = NULL;
        const char *key;
        json_t *pods;

        if (tm_reconciler_placement_pods(tm->rec, &all) < 0)
                return;
        /* whole: a pod or InferenceService that went away leaves the exposition */
        metric_family_clear(tm->pod_models);
        metric_family_clear(tm->pod_bytes);
        metric_family_clear(tm->pod_capacity);
        json_object_foreach(all, key, pods)
                collect_placement_isvc(tm, key, pods);
}

static void counter_to(struct metric *m, double v)
{
        metric_raise_to(m, v);
}

static void collect_tm_metrics(void *userdata)
{
        struct tm_metrics *tm = userdata;
        struct tm_reconciler_stats st;

        tm_reconciler_get_stats(tm->rec, &st);
        if (tm->client) {
                unsigned long throttled, exhausted;

                kube_client_throttle_stats(tm->client, &throttled, &exhausted);
                counter_to(tm->throttled, (double)throttled);
                counter_to(tm->throttle_exhausted, (double)exhausted);
        }
        counter_to(tm->configmap_gets, (double)st.configmap_gets);
        counter_to(tm->configmap_writes, (double)st.configmap_writes);
        counter_to(tm->configmap_conflicts, (double)st.configmap_conflicts);
        counter_to(tm->configmap_bytes, (double)st.configmap_bytes_written);
        counter_to(tm->metadata_writes, (double)st.tm_metadata_writes);
        counter_to(tm->status_writes, (double)st.tm_status_writes);
        counter_to(tm->deletes, (double)st.tm_deletes);
        counter_to(tm->passes, (double)st.passes);
        counter_to(tm->plans, (double)st.plans);
        counter_to(tm->passes_skipped, (double)st.passes_skipped);
        counter_to(tm->events_posted, (double)st.events_posted);
        counter_to(tm->events_skipped, (double)st.events_skipped);
        counter_to(tm->assignment_writes, (double)st.assignment_writes);
        counter_to(tm->placement_moved, (double)st.placement_moved);
        counter_to(tm->isvc_status_writes, (double)st.isvc_status_writes);
        collect_placement(tm);
}

static int counter_new(struct metrics_registry *reg, const char *name, const char *help,
                       struct metric **ret)
{
        struct metric_family *f;
        int r;

        r = metrics_register(reg, METRIC_COUNTER, name, help, NULL, NULL, 0, &f);
        if (r < 0)
                return r;
        return metric_family_child(f, NULL, ret);
}

static int pod_gauges_register(struct metrics_registry *reg, struct tm_metrics *tm)
{
        static const char *const labels[] = { "namespace", "inferenceservice", "pod", NULL };
        int r;

        r = metrics_register(reg, METRIC_GAUGE, "modelplane_placement_models_assigned",
                             "Placement: models assigned to a serving pod", labels, NULL, 0,
                             &tm->pod_models);
        if (r >= 0)
                r = metrics_register(reg, METRIC_GAUGE, "modelplane_placement_bytes_assigned",
                                     "Placement: memory (bytes) of the models assigned to a pod",
                                     labels, NULL, 0, &tm->pod_bytes);
        if (r >= 0)
                r = metrics_register(reg, METRIC_GAUGE, "modelplane_placement_capacity_bytes",
                                     "Placement: memory (bytes) a pod may hold (the predictor's "
                                     "limit, less models being deleted)",
                                     labels, NULL, 0, &tm->pod_capacity);
        return r;
}

static int tm_metrics_register(struct metrics_registry *reg, struct tm_metrics *tm)
{
        static const struct {
                const char *name, *help;
                size_t offset;
        } table[] = {
                { "modelplane_trainedmodel_configmap_gets_total",
                  "Live ConfigMap GETs by the TrainedModel controller (cache misses, conflicts)",
                  offsetof(struct tm_metrics, configmap_gets) },
                { "modelplane_trainedmodel_configmap_writes_total",
                  "ConfigMap creates and models.json patches",
                  offsetof(struct tm_metrics, configmap_writes) },
                { "modelplane_trainedmodel_configmap_conflicts_total",
                  "ConfigMap writes answered 409 (re-read and re-planned)",
                  offsetof(struct tm_metrics, configmap_conflicts) },
                { "modelplane_trainedmodel_configmap_bytes_written_total",
                  "Bytes of models.json written", offsetof(struct tm_metrics, configmap_bytes) },
                { "modelplane_trainedmodel_metadata_writes_total",
                  "TrainedModel metadata patches (finalizer, labels, owner reference)",
                  offsetof(struct tm_metrics, metadata_writes) },
                { "modelplane_trainedmodel_status_writes_total", "TrainedModel status patches",
                  offsetof(struct tm_metrics, status_writes) },
                { "modelplane_trainedmodel_deletes_total",
                  "TrainedModels deleted because their InferenceService does not exist",
                  offsetof(struct tm_metrics, deletes) },
                { "modelplane_trainedmodel_passes_total", "InferenceService reconciles run",
                  offsetof(struct tm_metrics, passes) },
                { "modelplane_trainedmodel_plans_total",
                  "Plans computed by those reconciles (1 for a pass that writes nothing, 2 when "
                  "it writes, more on conflicts)",
                  offsetof(struct tm_metrics, plans) },
                { "modelplane_trainedmodel_passes_skipped_total",
                  "TrainedModel and ConfigMap changes that started no reconcile (a removal no "
                  "models.json lists, the echo of an own write)",
                  offsetof(struct tm_metrics, passes_skipped) },
                { "modelplane_trainedmodel_write_events_total",
                  "Normal Events of models.json writes handed to the Event recorder",
                  offsetof(struct tm_metrics, events_posted) },
                { "modelplane_trainedmodel_write_events_skipped_total",
                  "models.json writes that only dropped models being deleted: no Event",
                  offsetof(struct tm_metrics, events_skipped) },
                { "modelplane_placement_assignment_writes_total",
                  "Placement: assignment ConfigMap (modelconfig-<isvc>-<pod>) creates, patches "
                  "and deletes",
                  offsetof(struct tm_metrics, assignment_writes) },
                { "modelplane_placement_moves_total",
                  "Placement: copies of models placed on a replica that did not hold them",
                  offsetof(struct tm_metrics, placement_moved) },
                { "modelplane_placement_status_writes_total",
                  "Placement: InferenceService status patches (per-pod memory assigned)",
                  offsetof(struct tm_metrics, isvc_status_writes) },
                { "modelplane_kube_client_throttled_total",
                  "API answers 429 (Priority and Fairness) or 503 with Retry-After; retried",
                  offsetof(struct tm_metrics, throttled) },
                { "modelplane_kube_client_throttle_exhausted_total",
                  "Requests that stayed throttled after every retry (their key was requeued)",
                  offsetof(struct tm_metrics, throttle_exhausted) },
        };
        int r;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                r = counter_new(reg, table[i].name, table[i].help,
                                (struct metric **)((char *)tm + table[i].offset));
                if (r < 0)
                        return r;
        }
        r = pod_gauges_register(reg, tm);
        if (r < 0)
                return r;
        return metrics_add_collector(reg, collect_tm_metrics, tm);
}

/* The agents' per-pod reports and the modelconfig ConfigMaps (serving/replicas.h), selected by
 * label so that no other ConfigMap is cached. */
static int configmap_informer_new(struct kube_client *client, struct informer **ret)
{
        int r = informer_new(
                &(struct informer_options){
                        .name = "configmaps",
                        .client = client,
                        .gvr = gvr_configmaps,
                        .namespace = arg_namespace,
                        .label_selector = REPLICAS_CONFIGMAP_SELECTOR,
                        .cache = { .transform = replicas_transform_configmap },
                },
                ret);
        if (r >= 0)
                r = cache_add_index(informer_cache(*ret), REPLICAS_INDEX_ISVC, replicas_index_isvc,
                                    NULL);
        return r;
}

/* Everything cmd_controller builds, torn down in reverse order by controller_state_release(). */
struct controller_state {
        struct kube_config *cfg;
        struct kube_client *client;
        struct manager *m;
        struct informer *tms, *isvcs, *cms;
        struct tm_reconciler *rec;
        struct controller *finalizers; /* freed after ctrl, whose workers add to its queue */
        struct controller *releases;   /* the same; only without the finalizer */
        struct controller *ctrl, *orphans;
        struct webhook_server *wh;
        struct mrlink_config *mrcfg;
        struct mrlink_reconciler *mrrec;
        struct controller *mrtmctrl;
        struct controller *mrctrl;
        struct request_metrics rm; /* the client's observer: outlives the client */
        struct tm_metrics tmm;     /* the manager's collector: outlives the manager */
};

static void controller_state_release(struct controller_state *s)
{
        s->mrctrl = controller_free(s->mrctrl);
        s->mrtmctrl = controller_free(s->mrtmctrl);
        s->mrrec = mrlink_reconciler_free(s->mrrec);
        s->mrcfg = mrlink_config_free(s->mrcfg);
        s->wh = webhook_server_free(s->wh);
        s->orphans = controller_free(s->orphans);
        s->ctrl = controller_free(s->ctrl);
        s->finalizers = controller_free(s->finalizers);
        s->releases = controller_free(s->releases);
        s->rec = tm_reconciler_free(s->rec);
        s->cms = informer_free(s->cms);
        s->isvcs = informer_free(s->isvcs);
        s->tms = informer_free(s->tms);
        s->m = manager_free(s->m);
        s->client = kube_client_free(s->client);
        s->cfg = kube_config_free(s->cfg);
}

/* The kubeconfig, the client (with its request observer) and the manager. */
static int controller_setup_client(struct controller_state *s)
{
        struct kube_config_options copts = { .kubeconfig_path = arg_kubeconfig,
                                             .context = arg_context };
        struct kube_client_options kopts = { .qps = arg_qps,
                                             .burst = arg_burst,
                                             .observer = observe_request,
                                             .observer_userdata = &s->rm };
        const char *h;
        struct error_detail kerr = { 0 };
        const char *err = kerr.message;
        int r;

        r = kube_config_load(&copts, &s->cfg, &kerr);
        if (r < 0)
                return log_error_errno(r, "Failed to load Kubernetes configuration: %s", err);
        /* the host label: the server URL without scheme */
        h = strstr(s->cfg->server, "://");
        (void)snprintf(s->rm.host, sizeof(s->rm.host), "%s", h ? h + 3 : s->cfg->server);
        r = kube_client_new(s->cfg, &kopts, &s->client);
        if (r < 0)
                return log_error_errno(r, "Failed to create the Kubernetes client");

        r = manager_new(
                &(struct manager_options){
                        .client = s->client,
                        .metrics_bind_address = arg_metrics_bind,
                        .health_probe_bind_address = arg_probe_bind,
                        .leader_elect = arg_leader_elect,
                        .leader_election_id = arg_leader_id,
                        .leader_election_namespace = arg_leader_namespace,
                },
                &s->m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the manager");
        atomic_store(&s->rm.reg, manager_metrics(s->m));
        return 0;
}

/* The TrainedModel, InferenceService and ConfigMap informers. */
static int controller_setup_informers(struct controller_state *s)
{
        int r;

        r = informer_new(
                &(struct informer_options){
                        .name = "trainedmodels",
                        .client = s->client,
                        .gvr = gvr_trainedmodels,
                        .namespace = arg_namespace,
                        .cache = { .transform = cache_transform_strip_managed_fields,
                                   .compact = true },
                        .metrics = manager_metrics(s->m),
                },
                &s->tms);
        if (r >= 0)
                r = cache_add_index(informer_cache(s->tms), TM_INDEX_ISVC, tm_index_isvc, NULL);
        if (r >= 0)
                r = informer_new(
                        &(struct informer_options){
                                .name = "inferenceservices",
                                .client = s->client,
                                .gvr = gvr_inferenceservices,
                                .namespace = arg_namespace,
                                .cache = { .transform = isvc_cache_transform, .compact = true },
                                .metrics = manager_metrics(s->m),
                        },
                        &s->isvcs);
        if (r >= 0)
                r = configmap_informer_new(s->client, &s->cms);
        if (r < 0)
                return log_error_errno(r, "Failed to set up informers");
        return 0;
}

/* A controller for @reconciler that starts once @wait_for have synced. */
static int controller_add(struct controller_state *s, struct reconciler reconciler,
                          unsigned workers, unsigned write_fanout, struct informer *const *wait_for,
                          size_t n_wait_for, struct controller **ret)
{
        return controller_new(
                &(struct controller_options){
                        .reconciler = reconciler,
                        .workers = workers,
                        .metrics = manager_metrics(s->m),
                        .client = s->client,
                        .write_fanout = write_fanout,
                        .wait_for = wait_for,
                        .n_wait_for = n_wait_for,
                },
                ret);
}

/* Without the finalizer: the releases of the finalizers KServe or an older modelplane left on
 * live TrainedModels, one worker at the pace of tm_release_pace (serving/reconciler.h). */
static int controller_setup_releases(struct controller_state *s)
{
        int r;

        if (arg_tm_finalizer)
                return 0;
        r = controller_new(
                &(struct controller_options){
                        .reconciler = tm_release_reconciler_get(s->rec),
                        .workers = 1,
                        .ratelimit = &tm_release_pace,
                        .metrics = manager_metrics(s->m),
                        .client = s->client,
                        .wait_for = (struct informer *[]){ s->tms },
                        .n_wait_for = 1,
                },
                &s->releases);
        if (r >= 0) {
                tm_reconciler_hand_off_releases(s->rec, s->releases);
                r = manager_add_controller(s->m, s->releases);
        }
        return r;
}

/* The TrainedModel reconciler and its controllers: models, orphans, finalizers (and releases). */
static int controller_setup_trainedmodels(struct controller_state *s)
{
        int r;

        r = tm_reconciler_new(
                &(struct tm_reconciler_options){
                        .trainedmodels = informer_cache(s->tms),
                        .inferenceservices = informer_cache(s->isvcs),
                        .event = manager_event_fn,
                        .event_userdata = s->m,
                        .configmaps = informer_cache(s->cms),
                        .ready_requires_loaded = arg_ready_requires_loaded,
                        .delete_batch_window = arg_delete_batch_ms
                                                       ? (usec_t)arg_delete_batch_ms * USEC_PER_MSEC
                                                       : USEC_INFINITY,
                        .no_finalizer = !arg_tm_finalizer,
                },
                &s->rec);
        if (r >= 0)
                r = controller_add(s, tm_reconciler_get(s->rec), arg_workers,
                                   arg_write_concurrency - 1,
                                   (struct informer *[]){ s->tms, s->isvcs, s->cms }, 3, &s->ctrl);
        if (r >= 0)
                r = controller_add(s, tm_orphan_reconciler_get(s->rec), 1, 0,
                                   (struct informer *[]){ s->tms }, 1, &s->orphans);
        if (r >= 0)
                /* finalizer removals after a models.json write, --max-concurrent-writes at once */
                r = controller_add(s, tm_finalizer_reconciler_get(s->rec), arg_write_concurrency, 0,
                                   (struct informer *[]){ s->tms }, 1, &s->finalizers);
        if (r >= 0) {
                tm_reconciler_hand_off_finalizers(s->rec, s->finalizers);
                r = tm_reconciler_watch(s->rec, s->tms, s->isvcs, s->ctrl, s->orphans);
        }
        if (r >= 0)
                r = tm_reconciler_watch_configmaps(s->rec, s->cms, s->ctrl);
        if (r >= 0) {
                s->tmm.rec = s->rec;
                s->tmm.client = s->client;
                r = tm_metrics_register(manager_metrics(s->m), &s->tmm);
        }
        if (r >= 0)
                r = manager_add_informer(s->m, s->tms);
        if (r >= 0)
                r = manager_add_informer(s->m, s->isvcs);
        if (r >= 0)
                r = manager_add_informer(s->m, s->cms);
        if (r >= 0)
                r = manager_add_controller(s->m, s->ctrl);
        if (r >= 0)
                r = manager_add_controller(s->m, s->orphans);
        if (r >= 0)
                r = manager_add_controller(s->m, s->finalizers);
        if (r >= 0)
                r = controller_setup_releases(s);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the TrainedModel controller");
        return 0;
}

/* The InferenceService <-> model registry controller (docs/mrlink.md): enabled as upstream
 * enables it, on the same InferenceService informer (one watch, one cache). */
static int controller_setup_mrlink(struct controller_state *s)
{
        const char *token_file = s->cfg->token_file;
        char err[512] = "";
        int r;

        r = mrlink_config_from_env(mrlink_getenv, &s->mrcfg, err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "unable to create controller: %s", err);
        if (s->mrcfg->token_file)
                token_file = s->mrcfg->token_file;
        r = mrlink_reconciler_new(
                &(struct mrlink_reconciler_options){
                        .config = s->mrcfg,
                        .inferenceservices = informer_cache(s->isvcs),
                        .trainedmodels = informer_cache(s->tms),
                        .token = s->cfg->token,
                        .token_file = token_file,
                        .event = manager_event_fn,
                        .event_userdata = s->m,
                        .metrics = manager_metrics(s->m),
                },
                &s->mrrec);
        if (r >= 0)
                r = controller_add(s, mrlink_reconciler_get(s->mrrec), arg_workers, 0,
                                   (struct informer *[]){ s->isvcs }, 1, &s->mrctrl);
        if (r >= 0)
                r = mrlink_reconciler_watch(s->mrrec, s->isvcs, s->mrctrl);
        if (r >= 0)
                r = manager_add_controller(s->m, s->mrctrl);
        /* TrainedModels carrying the registry's labels (a console deploy): recorded the same way */
        if (r >= 0)
                r = controller_add(s, mrlink_reconciler_get_trainedmodels(s->mrrec), arg_workers, 0,
                                   (struct informer *[]){ s->tms, s->isvcs }, 2, &s->mrtmctrl);
        if (r >= 0)
                r = mrlink_reconciler_watch_trainedmodels(s->mrrec, s->tms, s->mrtmctrl);
        if (r >= 0)
                r = manager_add_controller(s->m, s->mrtmctrl);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the model registry controller");
        log_info("Model registry InferenceService controller enabled (registries namespace %s)",
                 s->mrcfg->registries_namespace);
        return 0;
}

static int controller_setup_webhook(struct controller_state *s)
{
        struct webhook_server_config wc = { WEBHOOK_SERVER_CONFIG_DEFAULTS };
        int r;

        wc.port = (uint16_t)arg_webhook_port;
        wc.cert_dir = arg_webhook_cert_dir;
        r = webhook_server_start(&wc, &s->wh);
        if (r < 0)
                return log_error_errno(
                        r,
                        "Failed to start the admission webhook on port %u with certificates from %s",
                        arg_webhook_port, arg_webhook_cert_dir);
        log_info("Serving the TrainedModel admission webhook on port %u",
                 webhook_server_port(s->wh));
        return 0;
}

static int controller_setup(struct controller_state *s)
{
        int r;

        r = controller_setup_client(s);
        if (r >= 0)
                r = controller_setup_informers(s);
        if (r >= 0)
                r = controller_setup_trainedmodels(s);
        if (r >= 0 && (arg_registry_controller || mrlink_enabled(mrlink_getenv)))
                r = controller_setup_mrlink(s);
        if (r >= 0 && arg_webhook)
                r = controller_setup_webhook(s);
        return r;
}

int cmd_controller(int argc, char **argv)
{
        CLEANUP(controller_state_release) struct controller_state s = { .rm = { .host = "" } };
        unsigned long kib;
        int r;

        r = cli_parse(&controller_cli, argc, argv, NULL);
        if (r != 0)
                return cli_exit_status(r);

        /* One malloc arena: a pass's trees (every TrainedModel of an InferenceService) are
         * allocated and freed by whichever worker runs it, and a second arena keeps another
         * pass's high-water mark resident (bench/convergence, N = 3,000: peak RSS 62-65 MiB
         * with one arena, 66-95 with two; the same times, up to a tenth more CPU in a create:
         * tcache serves most small allocations without the arena's lock). */
        memory_limit_arenas(1);
        /* Start-up's file pages (the linker's work on the libraries, their constructors) leave
         * RSS while this is the only thread; what the controller uses faults back in. */
        kib = memory_release_startup_pages();
        log_debug("controller: released %lu KiB of start-up file pages", kib);

        r = controller_setup(&s);
        if (r < 0)
                return 1;

        r = manager_run(s.m);
        atomic_store(&s.rm.reg, NULL);
        if (r < 0) {
                log_error_errno(r, "Controller manager stopped");
                return 1;
        }
        log_info("Controller manager stopped");
        return 0;
}
