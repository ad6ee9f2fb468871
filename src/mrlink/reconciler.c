/* SPDX-License-Identifier: Apache-2.0 */
#include "mrlink/reconciler.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json/json-util.h"
#include "kube/cache.h"
#include "kube/informer.h"
#include "mrlink/plan.h"
#include "registry-client/client.h"
#include "util/log.h"

#define CONTROLLER_NAME    "inferenceservice"
#define TM_CONTROLLER_NAME "trainedmodel-registry"
#define URL_MAX            2048
#define FINGERPRINT_MAX    4096
#define TOKEN_MAX          (64 * 1024)
/* An ambiguous or port-less registry Service: looked at again after this long (it is not
 * watched), besides every change of the InferenceService. */
#define MISCONFIGURED_REQUEUE (5 * USEC_PER_MINUTE)
/* Registry requests of one reconcile */
#define REGISTRY_TIMEOUT_MS 10000

static const struct gvr gvr_isvcs = { "serving.kserve.io", "v1beta1", "inferenceservices" };
static const struct gvr gvr_services = { "", "v1", "services" };

struct mrlink_reconciler {
        const struct mrlink_config *cfg;      /* borrowed */
        struct cache *isvcs;                  /* borrowed */
        struct cache *tms;                    /* borrowed, may be NULL */
        const struct mr_transport *transport; /* borrowed, may be NULL (libcurl) */
        char *token, *token_file;             /* owned */
        mrlink_event_fn event;
        void *event_userdata;

        pthread_mutex_t lock;    /* fingerprints, tm_fingerprints, se_ids, links */
        json_t *fingerprints;    /* key -> fingerprint of the last successful reconcile */
        json_t *tm_fingerprints; /* the same for TrainedModels */
        json_t *se_ids;          /* "<base URL>\x1f<namespace>" -> serving environment id */
        /* TrainedModel key -> {uid, id, base, since}: the DEPLOYED record to mark UNDEPLOYED
         * once the TrainedModel is gone (since: first failed attempt, RFC 3339) */
        json_t *links;

        atomic_ulong calls, errors, writes, skipped;
        struct metric *m_calls, *m_errors, *m_writes, *m_skipped; /* borrowed, may be NULL */
};

static void count(atomic_ulong *a, struct metric *m)
{
        atomic_fetch_add(a, 1);
        if (m)
                metric_inc(m);
}

static int counter_new(struct metrics_registry *reg, const char *name, const char *help,
                       struct metric **ret)
{
        struct metric_family *f;
        int k;

        k = metrics_register(reg, METRIC_COUNTER, name, help, NULL, NULL, 0, &f);
        return k < 0 ? k : metric_family_child(f, NULL, ret);
}

static int metrics_setup(struct mrlink_reconciler *r, struct metrics_registry *reg)
{
        int k;

        k = counter_new(reg, "modelplane_mrlink_registry_calls_total",
                        "HTTP calls to model registries", &r->m_calls);
        if (k >= 0)
                k = counter_new(reg, "modelplane_mrlink_registry_errors_total",
                                "Failed HTTP calls to model registries", &r->m_errors);
        if (k >= 0)
                k = counter_new(reg, "modelplane_mrlink_isvc_writes_total",
                                "InferenceService finalizer and label patches", &r->m_writes);
        if (k >= 0)
                k = counter_new(reg, "modelplane_mrlink_skipped_total",
                                "Reconciles skipped because nothing changed", &r->m_skipped);
        return k;
}

/* One reconcile. */
struct ctx {
        struct mrlink_reconciler *r;
        const struct reconcile_ctx *rc; /* the runner's: the API port, clock, log fields */
        struct mr_client *mr;
        const char *key;
        bool tm;        /* a TrainedModel's reconcile */
        json_t *fp_map; /* r->fingerprints or r->tm_fingerprints */
        json_t *obj;    /* owned; the InferenceService as last seen (cache or write answer) */
        json_t *parent; /* owned, may be NULL: a TrainedModel's InferenceService (cache) */
        struct mrlink_isvc v;
        char base[URL_MAX];
        char se_key[URL_MAX + 256];
};

int mrlink_reconciler_new(const struct mrlink_reconciler_options *opts,
                          struct mrlink_reconciler **ret)
{
        struct mrlink_reconciler *r;

        if (!opts || !opts->config || !opts->inferenceservices)
                return -EINVAL;
        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->cfg = opts->config;
        r->isvcs = opts->inferenceservices;
        r->tms = opts->trainedmodels;
        r->transport = opts->transport;
        r->event = opts->event;
        r->event_userdata = opts->event_userdata;
        r->fingerprints = json_object();
        r->se_ids = json_object();
        r->tm_fingerprints = json_object();
        r->links = json_object();
        if (opts->token && *opts->token)
                r->token = strdup(opts->token);
        if (opts->token_file && *opts->token_file)
                r->token_file = strdup(opts->token_file);
        (void)pthread_mutex_init(&r->lock, NULL);
        if (!r->fingerprints || !r->se_ids || !r->tm_fingerprints || !r->links ||
            (opts->token && *opts->token && !r->token) ||
            (opts->token_file && *opts->token_file && !r->token_file)) {
                mrlink_reconciler_free(r);
                return -ENOMEM;
        }
        if (opts->metrics) {
                int k = metrics_setup(r, opts->metrics);
                if (k < 0) {
                        mrlink_reconciler_free(r);
                        return k;
                }
        }
        *ret = r;
        return 0;
}

struct mrlink_reconciler *mrlink_reconciler_free(struct mrlink_reconciler *r)
{
        if (!r)
                return NULL;
        json_decref(r->fingerprints);
        json_decref(r->se_ids);
        json_decref(r->tm_fingerprints);
        json_decref(r->links);
        free(r->token);
        free(r->token_file);
        (void)pthread_mutex_destroy(&r->lock);
        free(r);
        return NULL;
}

void mrlink_reconciler_get_stats(struct mrlink_reconciler *r, struct mrlink_reconciler_stats *ret)
{
        *ret = (struct mrlink_reconciler_stats){
                .registry_calls = atomic_load(&r->calls),
                .registry_errors = atomic_load(&r->errors),
                .isvc_writes = atomic_load(&r->writes),
                .skipped = atomic_load(&r->skipped),
        };
}

/* string map under the lock: get (copied into buf), set (value NULL = delete) */
static bool map_get(struct mrlink_reconciler *r, json_t *map, const char *key, char *buf,
                    size_t len)
{
        const char *s;
        bool found = false;

        (void)pthread_mutex_lock(&r->lock);
        s = json_string_value(json_object_get(map, key));
        if (s && strlen(s) < len) {
                memcpy(buf, s, strlen(s) + 1);
                found = true;
        }
        (void)pthread_mutex_unlock(&r->lock);
        return found;
}

static void map_set(struct mrlink_reconciler *r, json_t *map, const char *key, const char *value)
{
        (void)pthread_mutex_lock(&r->lock);
        if (value)
                (void)!json_object_set_new(map, key, json_string(value));
        else
                (void)!json_object_del(map, key);
        (void)pthread_mutex_unlock(&r->lock);
}

/* A TrainedModel's DEPLOYED record (r->links), copied out of the map. */
struct link {
        char uid[128], id[32], base[URL_MAX], since[64]; /* since: "" before a failed attempt */
};

static bool copy_member(const json_t *o, const char *name, char *buf, size_t len)
{
        const char *v = json_string_value(json_object_get(o, name));

        return v && snprintf(buf, len, "%s", v) < (int)len;
}

static bool link_get(struct mrlink_reconciler *r, const char *key, struct link *ret)
{
        json_t *l;
        bool ok;

        (void)pthread_mutex_lock(&r->lock);
        l = json_object_get(r->links, key);
        ok = l && copy_member(l, "uid", ret->uid, sizeof(ret->uid)) &&
             copy_member(l, "id", ret->id, sizeof(ret->id)) &&
             copy_member(l, "base", ret->base, sizeof(ret->base)) &&
             copy_member(l, "since", ret->since, sizeof(ret->since));
        (void)pthread_mutex_unlock(&r->lock);
        return ok;
}

/* l NULL: forgotten */
static int link_set(struct mrlink_reconciler *r, const char *key, const struct link *l)
{
        json_t *v = NULL;
        int k = 0;

        if (l && !(v = json_pack("{s:s,s:s,s:s,s:s}", "uid", l->uid, "id", l->id, "base", l->base,
                                 "since", l->since)))
                return -ENOMEM;
        (void)pthread_mutex_lock(&r->lock);
        if (v)
                k = json_object_set_new(r->links, key, v) < 0 ? -ENOMEM : 0;
        else
                (void)json_object_del(r->links, key);
        (void)pthread_mutex_unlock(&r->lock);
        return k;
}

static int map_isvc(void *userdata, const json_t *obj, json_t **ret_keys)
{
        struct mrlink_reconciler *r = userdata;
        char key[CACHE_KEY_MAX];

        *ret_keys = NULL;
        if (!mrlink_isvc_relevant(r->cfg, obj) || cache_key_of(obj, key, sizeof(key)) < 0)
                return 0;
        *ret_keys = json_pack("[s]", key);
        return *ret_keys ? 0 : -ENOMEM;
}

int mrlink_reconciler_watch(struct mrlink_reconciler *r, struct informer *inferenceservices,
                            struct controller *c)
{
        return informer_enqueue_mapped(inferenceservices, controller_queue(c), map_isvc, r);
}

/* TrainedModels with the RM-id label, and those whose record is still to be marked UNDEPLOYED */
static int map_tm(void *userdata, const json_t *obj, json_t **ret_keys)
{
        struct mrlink_reconciler *r = userdata;
        char key[CACHE_KEY_MAX];
        bool linked;

        *ret_keys = NULL;
        if (cache_key_of(obj, key, sizeof(key)) < 0)
                return 0;
        (void)pthread_mutex_lock(&r->lock);
        linked = json_object_get(r->links, key) != NULL;
        (void)pthread_mutex_unlock(&r->lock);
        if (!linked && !mrlink_tm_relevant(r->cfg, obj))
                return 0;
        *ret_keys = json_pack("[s]", key);
        return *ret_keys ? 0 : -ENOMEM;
}

int mrlink_reconciler_watch_trainedmodels(struct mrlink_reconciler *r,
                                          struct informer *trainedmodels, struct controller *c)
{
        if (!r->tms)
                return -EINVAL;
        return informer_enqueue_mapped(trainedmodels, controller_queue(c), map_tm, r);
}

static void emit(struct ctx *x, const char *type, const char *reason, const char *fmt, ...)
        _printf_(4, 5);
static void emit(struct ctx *x, const char *type, const char *reason, const char *fmt, ...)
{
        char msg[1024];
        va_list ap;

        va_start(ap, fmt);
        (void)vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        log_emit(streq(type, "Warning") ? LOG_LEVEL_WARN : LOG_LEVEL_INFO, 0, x->rc->log, "%s: %s",
                 reason, msg);
        if (x->r->event)
                x->r->event(x->r->event_userdata, x->obj, type, reason, msg);
}

/* Replaces the current object (stolen) and re-reads the view. */
static void set_obj(struct ctx *x, json_t *obj)
{
        json_decref(x->obj);
        x->obj = obj;
        (void)!mrlink_isvc_read(x->r->cfg, x->obj, &x->v);
}

static int patch_isvc(struct ctx *x, json_t *patch)
{
        struct kube_status st = { 0 };
        json_t *out = NULL;
        int k;

        if (!patch)
                return -ENOMEM;
        k = kube_api_patch(x->rc->api, &gvr_isvcs, x->v.ns, x->v.name, KUBE_PATCH_MERGE, patch,
                           NULL, &out, &st);
        json_decref(patch);
        count(&x->r->writes, x->r->m_writes);
        if (k == -ENOENT)
                return k; /* gone: the callers are done with it */
        if (k < 0)
                return reconcile_errorf(x->rc, k, "InferenceService patch failed: %s", st.message);
        set_obj(x, out);
        return 0;
}

static int finalizer_remove(struct ctx *x)
{
        int k;

        if (!x->v.has_finalizer)
                return 0;
        k = patch_isvc(x, mrlink_finalizer_patch(x->obj, x->r->cfg->finalizer, false,
                                                 x->v.resource_version));
        return k == -ENOENT ? 0 : k;
}

/* Registry errors are never terminal for the runner: a 400 (bad id label) is retried like
 * upstream does; OOM stays OOM. */
static int registry_errno(struct ctx *x, int k)
{
        count(&x->r->errors, x->r->m_errors);
        return k == -EINVAL || k == -EACCES ? -EPROTO : k;
}

/* A.6. On failure why describes it (for events). */
static int resolve_url(struct ctx *x, char *why, size_t whylen)
{
        const struct mrlink_config *cfg = x->r->cfg;
        char url[URL_MAX], names[512];
        struct kube_status st = { 0 };
        json_auto_t *got = NULL;
        const json_t *svc = NULL;
        int k;

        if (x->v.mr_url && *x->v.mr_url) {
                k = snprintf(url, sizeof(url), "%s", x->v.mr_url);
                if (k < 0 || (size_t)k >= sizeof(url))
                        return -ENAMETOOLONG;
        } else {
                const char *ns = x->v.mr_namespace;

                if (x->v.mr_name && *x->v.mr_name) {
                        k = kube_api_get(x->rc->api, &gvr_services, ns, x->v.mr_name, &got, &st);
                        if (k < 0) {
                                (void)snprintf(why, whylen, "model registry Service %s/%s: %s", ns,
                                               x->v.mr_name, st.message);
                                return k;
                        }
                        svc = got;
                } else {
                        k = kube_api_list(x->rc->api, &gvr_services, ns,
                                          &(struct kube_list_options){
                                                  .label_selector = "component=model-registry" },
                                          &got, &st);
                        if (k < 0) {
                                (void)snprintf(why, whylen,
                                               "listing model registry Services in %s: %s", ns,
                                               st.message);
                                return k;
                        }
                        k = mrlink_pick_service(json_object_get(got, "items"), &svc, names,
                                                sizeof(names));
                        if (k == -ENOENT) {
                                (void)snprintf(
                                        why, whylen,
                                        "no model registry services found in the namespace %s", ns);
                                return k;
                        }
                        if (k == -ENOTUNIQ) {
                                (void)snprintf(
                                        why, whylen,
                                        "more than one model registry service found in the namespace %s (%s), consider to specify the name in the label %s",
                                        ns, names, cfg->name_label);
                                return k;
                        }
                }
                k = mrlink_service_url(cfg, svc, url, sizeof(url));
                if (k < 0) {
                        (void)snprintf(
                                why, whylen,
                                "unable to find the http port in the Model Registry service %s/%s",
                                ns, json_get_string_path(svc, "metadata", "name", NULL));
                        return k;
                }
        }
        k = mrlink_rewrite_url(cfg->url_rewrite, url, x->base, sizeof(x->base));
        if (k < 0)
                return k;
        log_emit(LOG_LEVEL_DEBUG, 0, x->rc->log, "model registry URL %s (requests go to %s)", url,
                 x->base);
        return 0;
}

static int read_token(struct mrlink_reconciler *r, char **ret)
{
        char buf[TOKEN_MAX];
        ssize_t n;
        size_t len = 0;
        int fd;

        *ret = NULL;
        if (!r->token_file) {
                if (r->token && !(*ret = strdup(r->token)))
                        return -ENOMEM;
                return 0;
        }
        fd = open(r->token_file, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
                len += (size_t)n;
        (void)close(fd);
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
                len--;
        buf[len] = '\0';
        if (len > 0 && !(*ret = strdup(buf)))
                return -ENOMEM;
        return 0;
}

static int mr_open(struct ctx *x)
{
        AUTOFREE char *token = NULL;
        int k;

        k = read_token(x->r, &token);
        if (k < 0)
                log_emit(LOG_LEVEL_WARN, k, x->rc->log, "Cannot read the token file %s, ignoring",
                         x->r->token_file);
        return mr_client_new(
                &(struct mr_client_config){
                        .base_url = x->base,
                        .token = token,
                        .timeout_ms = REGISTRY_TIMEOUT_MS,
                        .ca_file = x->r->cfg->ca_file,
                        .ca_path = x->r->cfg->ca_path,
                        .insecure_skip_verify = x->r->cfg->skip_tls_verify,
                        .transport = x->r->transport,
                },
                &x->mr);
}

/* counts a registry call */
#define MR_CALL(x, call) (count(&(x)->r->calls, (x)->r->m_calls), (call))

/* Serving environment id for the InferenceService's namespace (calls 1-2), remembered. */
static int serving_environment(struct ctx *x, char *id, size_t len, char *why, size_t whylen)
{
        struct error_detail e = { 0 };
        json_auto_t *se = NULL;
        const char *s;
        int k;

        (void)snprintf(x->se_key, sizeof(x->se_key), "%s\x1f%s", x->base, x->v.ns);
        if (map_get(x->r, x->r->se_ids, x->se_key, id, len))
                return 0;
        k = MR_CALL(x, mr_find_serving_environment(x->mr, x->v.ns, &se, &e));
        if (k < 0) {
                if (k != -ENOENT)
                        count(&x->r->errors, x->r->m_errors);
                k = MR_CALL(x, mr_create_serving_environment(x->mr, x->v.ns, &se, &e));
                if (k < 0) {
                        (void)snprintf(why, whylen, "unable to create ServingEnvironment: %s",
                                       e.message);
                        return registry_errno(x, k);
                }
        }
        s = mrlink_record_id(se, id, len);
        if (!s) {
                (void)snprintf(why, whylen, "ServingEnvironment without an id");
                return -EBADMSG;
        }
        if (s != id)
                (void)snprintf(id, len, "%s", s);
        map_set(x->r, x->r->se_ids, x->se_key, id);
        return 0;
}

/* Step 9, linked: the record the InferenceService names, its url brought up to date. */
static int sync_linked_record(struct ctx *x, json_t **rec, char *why, size_t whylen)
{
        struct error_detail e = { 0 };
        json_auto_t *patch = NULL;
        const char *id;
        char idb[32];
        int k;

        k = MR_CALL(x, mr_get_inference_service(x->mr, x->v.isid ? x->v.isid : "", rec, &e));
        if (k < 0) {
                (void)snprintf(why, whylen,
                               "unable to find InferenceService with id %s in model registry: %s",
                               x->v.isid, e.message);
                return registry_errno(x, k);
        }
        if (x->v.deletion_timestamp)
                return 0;
        k = mrlink_record_patch(*rec, &(struct mrlink_record_want){ .url = x->v.status_url },
                                &patch);
        if (k < 0 || !patch)
                return k;
        id = mrlink_record_id(*rec, idb, sizeof(idb));
        k = MR_CALL(x, mr_update_inference_service(x->mr, id ? id : x->v.isid, patch, NULL, &e));
        if (k < 0) {
                (void)snprintf(
                        why, whylen,
                        "unable to update the url of InferenceService %s in model registry: %s",
                        x->v.isid, e.message);
                return registry_errno(x, k);
        }
        return 0;
}

/* Step 10, not linked yet: the record "<name>/<uid>" in @se_id, found or created. */
static int sync_new_record(struct ctx *x, const char *se_id, json_t **rec, char *why, size_t whylen)
{
        struct error_detail e = { 0 };
        json_auto_t *props = NULL;
        char name[320];
        int k;

        k = snprintf(name, sizeof(name), "%s/%s", x->v.name, x->v.uid ? x->v.uid : "");
        if (k < 0 || (size_t)k >= sizeof(name))
                return -ENAMETOOLONG;
        k = MR_CALL(x, mr_find_inference_service(x->mr, name, se_id, rec, &e));
        if (k >= 0)
                return 0;
        if (k != -ENOENT)
                count(&x->r->errors, x->r->m_errors);
        if (x->tm && !(props = mrlink_tm_properties(x->v.parent)))
                return -ENOMEM;
        k = MR_CALL(x,
                    mr_create_inference_service(x->mr,
                                                &(struct mr_inference_service_create){
                                                        .name = name,
                                                        .registered_model_id = x->v.rmid ? x->v.rmid
                                                                                         : "",
                                                        .serving_environment_id = se_id,
                                                        .model_version_id = x->v.mvid,
                                                        .runtime = x->v.runtime,
                                                        .url = x->v.status_url,
                                                        .custom_properties = props,
                                                },
                                                rec, &e));
        if (k < 0) {
                /* the remembered environment may be gone (registry wiped) */
                map_set(x->r, x->r->se_ids, x->se_key, NULL);
                (void)snprintf(why, whylen,
                               "unable to create InferenceService %s in model registry: %s", name,
                               e.message);
                return registry_errno(x, k);
        }
        return 0;
}

/* A live TrainedModel's record (found by name) follows it: url, modelVersionId, DEPLOYED. */
static int follow_record(struct ctx *x, const json_t *rec, char *why, size_t whylen)
{
        struct error_detail e = { 0 };
        json_auto_t *patch = NULL;
        const char *id;
        char idb[32];
        int k;

        k = mrlink_record_patch(rec,
                                &(struct mrlink_record_want){ .url = x->v.status_url,
                                                              .follow_version = true,
                                                              .mvid = x->v.mvid,
                                                              .deployed = true },
                                &patch);
        if (k < 0 || !patch)
                return k;
        id = mrlink_record_id(rec, idb, sizeof(idb));
        if (!id)
                return 0; /* reported by the caller */
        k = MR_CALL(x, mr_update_inference_service(x->mr, id, patch, NULL, &e));
        if (k < 0) {
                (void)snprintf(why, whylen,
                               "unable to update InferenceService %s in model registry: %s", id,
                               e.message);
                return registry_errno(x, k);
        }
        return 0;
}

/* Steps 9-10: the registry's record of this InferenceService (owned in *ret). */
static int sync_record(struct ctx *x, json_t **ret, char *why, size_t whylen)
{
        json_auto_t *rec = NULL;
        char se_id[64];
        int k;

        k = serving_environment(x, se_id, sizeof(se_id), why, whylen);
        if (k < 0)
                return k;
        if (x->v.has_isid)
                k = sync_linked_record(x, &rec, why, whylen);
        else
                k = sync_new_record(x, se_id, &rec, why, whylen);
        if (k < 0)
                return k;
        if (!rec) {
                (void)snprintf(why, whylen, "unexpected nil model registry InferenceService");
                return -EBADMSG;
        }
        if (x->tm && !x->v.deletion_timestamp) {
                k = follow_record(x, rec, why, whylen);
                if (k < 0)
                        return k;
        }
        *ret = TAKE_PTR(rec);
        return 0;
}

/* A deleted InferenceService whose record could not be marked UNDEPLOYED: keep the finalizer
 * and retry, until the undeploy timeout has passed since deletion. */
static int deletion_failed(struct ctx *x, int k, const char *why, struct reconcile_result *res)
{
        usec_t remaining, timeout = x->r->cfg->undeploy_timeout;
        char ts[64];
        int q;

        if (!mrlink_undeploy_expired(x->v.deletion_timestamp, reconcile_now(x->rc), timeout,
                                     &remaining)) {
                log_emit(
                        LOG_LEVEL_WARN, k, x->rc->log,
                        "Cannot mark the model registry record UNDEPLOYED yet (%s); retrying, finalizer kept for at most %llus more",
                        why, (unsigned long long)(remaining / USEC_PER_SEC));
                return reconcile_requeue_after(res, mrlink_undeploy_retry_delay(timeout - remaining,
                                                                                remaining));
        }
        (void)!format_rfc3339(timeout, ts, sizeof(ts));
        emit(x, "Warning", "UndeployFailed",
             "the model registry record could not be marked UNDEPLOYED within %llus of deletion: %s%s%s%s",
             (unsigned long long)(timeout / USEC_PER_SEC), why, x->tm ? "" : "; finalizer ",
             x->tm ? "" : x->r->cfg->finalizer, x->tm ? "" : " removed");
        if (x->tm) /* a TrainedModel has none of ours: only the record is given up */
                (void)link_set(x->r, x->key, NULL);
        q = finalizer_remove(x);
        if (q < 0)
                return q;
        map_set(x->r, x->fp_map, x->key, NULL);
        return reconcile_done(res);
}

static int resolve_failed(struct ctx *x, int k, const char *why, struct reconcile_result *res)
{
        if (x->v.deletion_timestamp) {
                if (k == -ENOENT) {
                        /* the registry Service is gone: nobody can be told any more */
                        emit(x, "Warning", "UndeployFailed",
                             "the model registry record could not be marked UNDEPLOYED: %s%s%s%s",
                             why, x->tm ? "" : "; finalizer ", x->tm ? "" : x->r->cfg->finalizer,
                             x->tm ? "" : " removed");
                        if (x->tm)
                                (void)link_set(x->r, x->key, NULL);
                        k = finalizer_remove(x);
                        if (k < 0)
                                return k;
                        map_set(x->r, x->fp_map, x->key, NULL);
                        return reconcile_done(res);
                }
                return deletion_failed(x, k, why, res);
        }
        if (k == -ENOTUNIQ || k == -ENOPROTOOPT) {
                emit(x, "Warning",
                     k == -ENOTUNIQ ? "RegistryServiceAmbiguous" : "RegistryServiceNoPort", "%s",
                     why);
                return reconcile_requeue_after(res, MISCONFIGURED_REQUEUE);
        }
        if (k == -ENOENT)
                emit(x, "Warning", "RegistryServiceNotFound", "%s", why);
        /* retried: RBAC or a bad label may be fixed without an InferenceService event */
        return reconcile_errorf(x->rc, k == -EINVAL || k == -EACCES ? -EPROTO : k,
                                "Cannot resolve the model registry: %s", why);
}

/* Step 5: a deleted InferenceService's record is marked UNDEPLOYED, then our finalizer goes. */
static int undeploy(struct ctx *x, const json_t *rec, const char *id, struct reconcile_result *res)
{
        char why[1024];
        int k;

        if (mrlink_needs_undeploy(rec)) {
                struct error_detail e = { 0 };
                json_auto_t *body = json_pack("{s:s}", "desiredState", "UNDEPLOYED");

                if (!body)
                        return -ENOMEM;
                k = MR_CALL(x, mr_update_inference_service(x->mr, id, body, NULL, &e));
                if (k < 0) {
                        (void)snprintf(why, sizeof(why),
                                       "failed to update DesiredState to UNDEPLOYED: %s",
                                       e.message);
                        return deletion_failed(x, registry_errno(x, k), why, res);
                }
        }
        k = finalizer_remove(x);
        if (k < 0)
                return k;
        map_set(x->r, x->fp_map, x->key, NULL);
        if (x->tm) {
                char fp[FINGERPRINT_MAX];

                /* nothing more to do for this TrainedModel: later events skip */
                (void)link_set(x->r, x->key, NULL);
                if (mrlink_fingerprint(&x->v, NULL, fp, sizeof(fp)) >= 0)
                        map_set(x->r, x->fp_map, x->key, fp);
        }
        return reconcile_done(res);
}

/* A TrainedModel's record gets the runtime of its InferenceService (from the shared cache). */
static void parent_runtime(struct ctx *x)
{
        char pk[CACHE_KEY_MAX];

        if (!x->v.parent ||
            snprintf(pk, sizeof(pk), "%s/%s", x->v.ns, x->v.parent) >= (int)sizeof(pk))
                return;
        x->parent = cache_get(x->r->isvcs, pk);
        x->v.runtime = json_get_string_path(x->parent, "spec", "predictor", "model", "runtime",
                                            NULL);
}

/* The cases that need no registry call: gone or unreadable, without the registry labels,
 * deleted without our finalizer, unchanged since the last success. Returns true when one applied,
 * with the reconcile's result in *ret_k. */
static bool reconcile_needless(struct ctx *x, struct reconcile_result *res, int *ret_k)
{
        struct mrlink_reconciler *r = x->r;
        char fp[FINGERPRINT_MAX], old_fp[FINGERPRINT_MAX];
        int k;

        if (!x->obj)
                x->obj = cache_get(x->tm ? r->tms : r->isvcs, x->key);
        if (!x->obj || (x->tm ? mrlink_tm_read(r->cfg, x->obj, &x->v)
                              : mrlink_isvc_read(r->cfg, x->obj, &x->v)) < 0) {
                map_set(r, x->fp_map, x->key, NULL);
                *ret_k = reconcile_done(res);
                return true;
        }
        if (!x->v.has_isid && !x->v.has_rmid) {
                log_emit(LOG_LEVEL_DEBUG, 0, x->rc->log,
                         "missing model registry specific label, skipping");
                map_set(r, x->fp_map, x->key, NULL);
                /* our finalizer on an InferenceService that lost its labels: let it go */
                k = finalizer_remove(x);
                *ret_k = k < 0 ? k : reconcile_done(res);
                return true;
        }
        if (!x->tm && x->v.deletion_timestamp && !x->v.has_finalizer) {
                *ret_k = reconcile_done(res);
                return true;
        }
        if (x->tm)
                parent_runtime(x);
        if (mrlink_fingerprint(&x->v, NULL, fp, sizeof(fp)) >= 0 &&
            map_get(r, x->fp_map, x->key, old_fp, sizeof(old_fp)) && streq(fp, old_fp)) {
                count(&r->skipped, r->m_skipped);
                *ret_k = reconcile_done(res);
                return true;
        }
        return false;
}

/* The record exists and is current: the InferenceService's id label, and the fingerprint that
 * lets the next unchanged reconcile skip the registry. */
static int record_linked(struct ctx *x, const char *id, struct reconcile_result *res)
{
        struct mrlink_reconciler *r = x->r;
        char fp[FINGERPRINT_MAX];
        int k;

        if (x->tm) {
                struct link l = { 0 };

                (void)snprintf(l.uid, sizeof(l.uid), "%s", x->v.uid ? x->v.uid : "");
                (void)snprintf(l.id, sizeof(l.id), "%s", id);
                (void)snprintf(l.base, sizeof(l.base), "%s", x->base);
                k = link_set(r, x->key, &l);
                if (k < 0)
                        return k;
        } else if (!x->v.isid || !streq(x->v.isid, id)) {
                k = patch_isvc(x, json_pack("{s:{s:{s:s}}}", "metadata", "labels",
                                            r->cfg->isid_label, id));
                if (k < 0)
                        return k == -ENOENT ? reconcile_done(res) : k;
        }
        /* a TrainedModel never carries the id: its fingerprint is taken without it */
        if (mrlink_fingerprint(&x->v, x->tm ? NULL : id, fp, sizeof(fp)) >= 0)
                map_set(r, x->fp_map, x->key, fp);
        return reconcile_done(res);
}

static int reconcile_one(struct ctx *x, struct reconcile_result *res)
{
        struct mrlink_reconciler *r = x->r;
        char why[1024] = "", idb[32];
        json_auto_t *rec = NULL;
        const char *id;
        bool deleting;
        int k;

        if (reconcile_needless(x, res, &k))
                return k;
        deleting = x->v.deletion_timestamp != NULL;
        if (!x->v.has_name && !x->v.has_url)
                log_emit(
                        LOG_LEVEL_DEBUG, 0, x->rc->log,
                        "neither the name label nor the URL annotation is set: looking for the model registry Service by label");

        k = resolve_url(x, why, sizeof(why));
        if (k < 0)
                return resolve_failed(x, k, why, res);

        if (!x->tm && !deleting && !x->v.has_finalizer) {
                k = patch_isvc(x, mrlink_finalizer_patch(x->obj, r->cfg->finalizer, true,
                                                         x->v.resource_version));
                if (k < 0)
                        return k == -ENOENT ? reconcile_done(res) : k;
        }

        k = mr_open(x);
        if (k < 0)
                return reconcile_errorf(x->rc, k, "Cannot make the model registry client for %s",
                                        x->base);
        k = sync_record(x, &rec, why, sizeof(why));
        if (k < 0) {
                if (deleting)
                        return deletion_failed(x, k, why, res);
                return reconcile_errorf(x->rc, k, "%s", why);
        }
        id = mrlink_record_id(rec, idb, sizeof(idb));
        if (!id) {
                if (deleting)
                        return deletion_failed(x, -EBADMSG, "record without id", res);
                return reconcile_errorf(x->rc, -EBADMSG,
                                        "model registry InferenceService without id");
        }
        if (deleting)
                return undeploy(x, rec, id, res);
        return record_linked(x, id, res);
}

static int reconcile(const struct reconcile_ctx *rc, const char *key, struct reconcile_result *res)
{
        struct ctx x = {
                .r = rc->userdata,
                .rc = rc,
                .key = key,
                .fp_map = ((struct mrlink_reconciler *)rc->userdata)->fingerprints,
        };
        int k;

        k = reconcile_one(&x, res);
        mr_client_free(x.mr);
        json_decref(x.obj);
        return k;
}

/*
 * A TrainedModel's remembered record when the TrainedModel is gone, lost its RM-id label or was
 * made again under its name (another uid): PATCHed UNDEPLOYED (a 404: nothing to do). On failure
 * retried after a growing delay until the undeploy timeout has passed since the first failure.
 * Returns 0 when done with it, 1 when requeued (res set), or a negative errno.
 */
static int undeploy_link(struct ctx *x, struct link *l, struct reconcile_result *res)
{
        usec_t remaining, now = reconcile_now(x->rc), timeout = x->r->cfg->undeploy_timeout;
        struct error_detail e = { 0 };
        json_auto_t *body = json_pack("{s:s}", "desiredState", "UNDEPLOYED");
        int k;

        if (!body)
                return -ENOMEM;
        (void)snprintf(x->base, sizeof(x->base), "%s", l->base);
        k = mr_open(x);
        if (k < 0)
                return reconcile_errorf(x->rc, k, "Cannot make the model registry client for %s",
                                        x->base);
        k = MR_CALL(x, mr_update_inference_service(x->mr, l->id, body, NULL, &e));
        x->mr = mr_client_free(x->mr);
        if (k >= 0 || k == -ENOENT)
                return link_set(x->r, x->key, NULL);
        k = registry_errno(x, k);
        if (!*l->since &&
            (format_rfc3339(now, l->since, sizeof(l->since)) < 0 || link_set(x->r, x->key, l) < 0))
                return -ENOMEM;
        if (mrlink_undeploy_expired(l->since, now, timeout, &remaining)) {
                log_emit(
                        LOG_LEVEL_WARN, k, x->rc->log,
                        "Gave up marking model registry InferenceService %s UNDEPLOYED at %s after %llus: %s",
                        l->id, l->base, (unsigned long long)(timeout / USEC_PER_SEC), e.message);
                return link_set(x->r, x->key, NULL);
        }
        log_emit(
                LOG_LEVEL_WARN, k, x->rc->log,
                "Cannot mark model registry InferenceService %s UNDEPLOYED yet (%s); retrying for at most %llus more",
                l->id, e.message, (unsigned long long)(remaining / USEC_PER_SEC));
        (void)reconcile_requeue_after(res,
                                      mrlink_undeploy_retry_delay(timeout - remaining, remaining));
        return 1;
}

static int reconcile_tm_one(struct ctx *x, struct reconcile_result *res)
{
        struct link l;
        const char *uid;
        int k;

        x->obj = cache_get(x->r->tms, x->key);
        uid = json_get_string_path(x->obj, "metadata", "uid", NULL);
        if (link_get(x->r, x->key, &l) &&
            (!x->obj || !uid || !streq(uid, l.uid) || !mrlink_tm_relevant(x->r->cfg, x->obj))) {
                k = undeploy_link(x, &l, res);
                if (k != 0)
                        return k < 0 ? k : 0;
                map_set(x->r, x->fp_map, x->key, NULL);
        }
        return reconcile_one(x, res);
}

static int reconcile_tm(const struct reconcile_ctx *rc, const char *key,
                        struct reconcile_result *res)
{
        struct ctx x = {
                .r = rc->userdata,
                .rc = rc,
                .key = key,
                .tm = true,
                .fp_map = ((struct mrlink_reconciler *)rc->userdata)->tm_fingerprints,
        };
        int k;

        k = reconcile_tm_one(&x, res);
        mr_client_free(x.mr);
        json_decref(x.obj);
        json_decref(x.parent);
        return k;
}

struct reconciler mrlink_reconciler_get(struct mrlink_reconciler *r)
{
        return (struct reconciler){ .name = CONTROLLER_NAME,
                                    .reconcile = reconcile,
                                    .userdata = r };
}

struct reconciler mrlink_reconciler_get_trainedmodels(struct mrlink_reconciler *r)
{
        return (struct reconciler){ .name = TM_CONTROLLER_NAME,
                                    .reconcile = reconcile_tm,
                                    .userdata = r };
}
