/* SPDX-License-Identifier: Apache-2.0 */
#include "serving/reconciler.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "json/json-util.h"
#include "kube/cache.h"
#include "serving/modelconfig.h"
#include "serving/plan.h"
#include "util/log.h"

const struct gvr gvr_trainedmodels = { "serving.kserve.io", "v1alpha1", "trainedmodels" };
const struct gvr gvr_inferenceservices = { "serving.kserve.io", "v1beta1", "inferenceservices" };
const struct gvr gvr_configmaps = { "", "v1", "configmaps" };

/* How often one reconcile re-reads the ConfigMap after a 409 before handing the key back. */
#define CONFIGMAP_CONFLICT_TRIES 8
/* Safety net: a quiet InferenceService is reconciled again after this long (kube-rs advice). */
#define RESYNC_PERIOD (60 * USEC_PER_MINUTE)

struct tm_reconciler {
        struct kube_client *client; /* borrowed */
        struct informer *tms;       /* borrowed */
        struct informer *isvcs;     /* borrowed */
        tm_event_fn event;
        void *event_userdata;

        pthread_mutex_t pool_lock;
        struct kube_client **pool; /* owned clients not in use */
        size_t n_pool, n_pool_alloc;

        atomic_ulong configmap_gets, configmap_writes, configmap_conflicts;
        atomic_ulong tm_metadata_writes, tm_status_writes, tm_deletes;
        atomic_ullong configmap_bytes_written;
};

int tm_reconciler_new(const struct tm_reconciler_options *opts, struct tm_reconciler **ret)
{
        struct tm_reconciler *r;

        if (!opts || !opts->client || !opts->trainedmodels || !opts->inferenceservices)
                return -EINVAL;
        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->client = opts->client;
        r->tms = opts->trainedmodels;
        r->isvcs = opts->inferenceservices;
        r->event = opts->event;
        r->event_userdata = opts->event_userdata;
        (void)pthread_mutex_init(&r->pool_lock, NULL);
        *ret = r;
        return 0;
}

struct tm_reconciler *tm_reconciler_free(struct tm_reconciler *r)
{
        if (!r)
                return NULL;
        for (size_t i = 0; i < r->n_pool; i++)
                kube_client_free(r->pool[i]);
        free(r->pool);
        (void)pthread_mutex_destroy(&r->pool_lock);
        free(r);
        return NULL;
}

/* A client for this worker: one from the pool, or a new clone (libcurl: one handle per thread). */
static int client_acquire(struct tm_reconciler *r, struct kube_client **ret)
{
        (void)pthread_mutex_lock(&r->pool_lock);
        if (r->n_pool > 0) {
                *ret = r->pool[--r->n_pool];
                (void)pthread_mutex_unlock(&r->pool_lock);
                return 0;
        }
        (void)pthread_mutex_unlock(&r->pool_lock);
        return kube_client_dup(r->client, ret);
}

static void client_release(struct tm_reconciler *r, struct kube_client *c)
{
        (void)pthread_mutex_lock(&r->pool_lock);
        if (r->n_pool == r->n_pool_alloc) {
                size_t n = r->n_pool_alloc ? r->n_pool_alloc * 2 : 4;
                struct kube_client **p = reallocarray(r->pool, n, sizeof(*p));
                if (!p) {
                        (void)pthread_mutex_unlock(&r->pool_lock);
                        kube_client_free(c);
                        return;
                }
                r->pool = p;
                r->n_pool_alloc = n;
        }
        r->pool[r->n_pool++] = c;
        (void)pthread_mutex_unlock(&r->pool_lock);
}

void tm_reconciler_get_stats(struct tm_reconciler *r, struct tm_reconciler_stats *ret)
{
        *ret = (struct tm_reconciler_stats){
                .configmap_gets = atomic_load(&r->configmap_gets),
                .configmap_writes = atomic_load(&r->configmap_writes),
                .configmap_conflicts = atomic_load(&r->configmap_conflicts),
                .tm_metadata_writes = atomic_load(&r->tm_metadata_writes),
                .tm_status_writes = atomic_load(&r->tm_status_writes),
                .tm_deletes = atomic_load(&r->tm_deletes),
                .configmap_bytes_written = atomic_load(&r->configmap_bytes_written),
        };
}

static int add_key(json_t *keys, const char *ns, const char *name)
{
        char key[CACHE_KEY_MAX];
        int n;

        n = snprintf(key, sizeof(key), "%s/%s", ns, name);
        if (n < 0 || (size_t)n >= sizeof(key))
                return -ENAMETOOLONG;
        for (size_t i = 0; i < json_array_size(keys); i++)
                if (streq(json_string_value(json_array_get(keys, i)), key))
                        return 0;
        return json_array_append_new(keys, json_string(key)) < 0 ? -ENOMEM : 0;
}

int tm_index_isvc(void *userdata, const json_t *obj, json_t **ret_values)
{
        const char *ns = json_get_string_path(obj, "metadata", "namespace", NULL);
        const char *name = json_get_string_path(obj, "metadata", "name", NULL);
        const char *parent = json_get_string_path(obj, "spec", "inferenceService", NULL);
        const char *label = json_get_string_path(obj, "metadata", "labels", "inferenceservice",
                                                 NULL);
        json_auto_t *keys = json_array();
        int r;

        (void)userdata;
        if (!keys)
                return -ENOMEM;
        if (!ns || !name) {
                *ret_values = NULL;
                return 0;
        }
        if (parent && parent[0] != '\0') {
                r = add_key(keys, ns, parent);
                if (r < 0)
                        return r;
        }
        if (label && label[0] != '\0') {
                r = add_key(keys, ns, label);
                if (r < 0)
                        return r;
        }
        if (json_array_size(keys) == 0) {
                char key[CACHE_KEY_MAX];
                int n = snprintf(key, sizeof(key), TM_ORPHAN_KEY_PREFIX "%s/%s", ns, name);
                if (n < 0 || (size_t)n >= sizeof(key))
                        return -ENAMETOOLONG;
                if (json_array_append_new(keys, json_string(key)) < 0)
                        return -ENOMEM;
        }
        *ret_values = TAKE_PTR(keys);
        return 0;
}

static int map_tm(void *userdata, const json_t *obj, json_t **ret_keys)
{
        return tm_index_isvc(userdata, obj, ret_keys);
}

int tm_reconciler_watch(struct tm_reconciler *r, struct controller *c)
{
        int k;

        k = informer_enqueue_mapped(r->tms, controller_queue(c), map_tm, r);
        if (k < 0)
                return k;
        return informer_enqueue_self(r->isvcs, controller_queue(c));
}

static void emit(struct tm_reconciler *r, const json_t *obj, const struct tm_plan *p,
                 const char *only_type)
{
        if (!r->event || !p->event_type || !p->event_message)
                return;
        if (only_type && !streq(p->event_type, only_type))
                return;
        r->event(r->event_userdata, obj, p->event_type, p->event_reason, p->event_message);
}

static int patch_tm(struct kube_client *c, const char *ns, const char *name, const json_t *patch,
                    const char *subresource, json_t **ret_obj, const struct log_fields *lf)
{
        struct kube_write_options wo = { .subresource = subresource };
        struct kube_status st = { 0 };
        int r;

        r = kube_patch(c, &gvr_trainedmodels, ns, name, KUBE_PATCH_MERGE, patch, &wo, ret_obj,
                       &st);
        if (r == -ENOENT)
                return 0; /* gone meanwhile: nothing left to do for it */
        if (r < 0)
                return log_emit(r == -ESTALE ? LOG_LEVEL_DEBUG : LOG_LEVEL_ERROR, r, lf,
                                "Failed to patch %s of TrainedModel %s/%s: %s",
                                subresource ? subresource : "metadata", ns, name, st.message);
        return 0;
}

/* Reads the ConfigMap fresh; *ret is NULL when it does not exist. */
static int get_configmap(struct tm_reconciler *r, struct kube_client *c, const char *ns,
                         const char *name, json_t **ret, const struct log_fields *lf)
{
        struct kube_status st = { 0 };
        json_t *cm = NULL;
        int k;

        atomic_fetch_add(&r->configmap_gets, 1);
        k = kube_get(c, &gvr_configmaps, ns, name, &cm, &st);
        if (k == -ENOENT) {
                *ret = NULL;
                return 0;
        }
        if (k < 0)
                return log_emit(LOG_LEVEL_ERROR, k, lf, "Failed to get ConfigMap %s/%s: %s", ns,
                                name, st.message);
        *ret = cm;
        return 0;
}

/* Writes the ConfigMap the plan asks for. Returns 1 after a 409/AlreadyExists (re-read and
 * re-plan), 0 when written or nothing to write (*cm updated), < 0 on error. */
static int write_configmap(struct tm_reconciler *r, struct kube_client *c, const char *ns,
                           const struct isvc_plan *plan, json_t **cm, const struct log_fields *lf)
{
        struct kube_status st = { 0 };
        json_t *written = NULL;
        int k;

        if (plan->configmap_create) {
                k = kube_create(c, &gvr_configmaps, ns, plan->configmap_create, NULL, &written,
                                &st);
                if (k == -EEXIST)
                        return 1;
        } else if (plan->configmap_patch) {
                k = kube_patch(c, &gvr_configmaps, ns, plan->configmap_name, KUBE_PATCH_MERGE,
                               plan->configmap_patch, NULL, &written, &st);
                if (k == -ESTALE || k == -ENOENT)
                        return 1;
        } else
                return 0;
        if (k < 0)
                return log_emit(LOG_LEVEL_ERROR, k, lf, "Failed to write ConfigMap %s/%s: %s", ns,
                                plan->configmap_name, st.message);
        atomic_fetch_add(&r->configmap_writes, 1);
        if (plan->models_json)
                atomic_fetch_add(&r->configmap_bytes_written, strlen(plan->models_json));
        json_decref(*cm);
        *cm = written;
        return 0;
}

static bool tm_is_deleting(const json_t *tm)
{
        return json_get_path(tm, "metadata", "deletionTimestamp", NULL) != NULL;
}

static int reconcile_orphan(struct tm_reconciler *r, struct kube_client *c, const char *key,
                            const struct log_fields *lf, struct reconcile_result *ret)
{
        CLEANUP(tm_plan_release) struct tm_plan p = { 0 };
        json_auto_t *tm = cache_get(informer_cache(r->tms), key + strlen(TM_ORPHAN_KEY_PREFIX));
        const char *ns, *name;
        int k;

        if (!tm)
                return reconcile_done(ret);
        ns = json_get_string_path(tm, "metadata", "namespace", NULL);
        name = json_get_string_path(tm, "metadata", "name", NULL);
        k = tm_plan_orphan(tm, now_realtime(), &p);
        if (k < 0)
                return reconcile_terminal(ret, k);
        if (p.metadata_patch) {
                k = patch_tm(c, ns, name, p.metadata_patch, NULL, NULL, lf);
                if (k < 0)
                        return k;
                atomic_fetch_add(&r->tm_metadata_writes, 1);
        }
        if (p.status_changed && p.status && !tm_is_deleting(tm)) {
                json_auto_t *sp = json_pack("{s:O}", "status", p.status);
                if (!sp)
                        return -ENOMEM;
                k = patch_tm(c, ns, name, sp, "status", NULL, lf);
                if (k < 0)
                        return k;
                atomic_fetch_add(&r->tm_status_writes, 1);
                emit(r, tm, &p, NULL);
        }
        return reconcile_done(ret);
}

/* Phase 1: metadata patches of live TrainedModels (finalizer before models.json). Replaces the
 * patched objects in tms with the server's answers so that the second plan sees them. */
static int apply_metadata(struct tm_reconciler *r, struct kube_client *c, const char *ns,
                          const struct isvc_plan *plan, json_t *tms, const struct log_fields *lf)
{
        for (size_t i = 0; i < plan->n_tms; i++) {
                const struct tm_plan *p = &plan->tms[i];
                json_t *obj = json_array_get(tms, i), *updated = NULL;
                int k;

                if (!p->metadata_patch || tm_is_deleting(obj) || p->delete_object)
                        continue;
                k = patch_tm(c, ns, p->name, p->metadata_patch, NULL, &updated, lf);
                if (k < 0)
                        return k;
                atomic_fetch_add(&r->tm_metadata_writes, 1);
                if (updated) {
                        /* keep what the second plan reads, not the server's managedFields */
                        json_t *slim = cache_transform_strip_managed_fields(NULL, updated);
                        json_decref(updated);
                        updated = slim;
                        if (!updated)
                                return -ENOMEM;
                }
                if (updated && json_array_set_new(tms, i, updated) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Phase 3: status, finalizer removal, deletes, events. */
static int apply_rest(struct tm_reconciler *r, struct kube_client *c, const char *ns,
                      const struct isvc_plan *plan, json_t *tms, const struct log_fields *lf)
{
        int first_error = 0;

        for (size_t i = 0; i < plan->n_tms; i++) {
                const struct tm_plan *p = &plan->tms[i];
                json_t *obj = json_array_get(tms, i);
                struct kube_status st = { 0 };
                int k = 0;

                if (p->delete_object) {
                        k = kube_delete(c, &gvr_trainedmodels, ns, p->name, NULL, NULL, &st);
                        if (k == -ENOENT)
                                k = 0;
                        else if (k < 0)
                                log_emit(LOG_LEVEL_ERROR, k, lf,
                                         "Failed to delete TrainedModel %s/%s: %s", ns, p->name,
                                         st.message);
                        else {
                                atomic_fetch_add(&r->tm_deletes, 1);
                                log_emit(LOG_LEVEL_INFO, 0, lf,
                                         "Deleted TrainedModel %s/%s: its InferenceService does not exist",
                                         ns, p->name);
                        }
                        if (k < 0 && first_error == 0)
                                first_error = k;
                        continue;
                }
                if (p->status && p->status_changed && !tm_is_deleting(obj)) {
                        json_auto_t *sp = json_pack("{s:O}", "status", p->status);
                        if (!sp)
                                return -ENOMEM;
                        k = patch_tm(c, ns, p->name, sp, "status", NULL, lf);
                        if (k == 0) {
                                atomic_fetch_add(&r->tm_status_writes, 1);
                                emit(r, obj, p, "Warning");
                        }
                }
                if (k == 0 && p->metadata_patch && tm_is_deleting(obj)) {
                        k = patch_tm(c, ns, p->name, p->metadata_patch, NULL, NULL, lf);
                        if (k == 0)
                                atomic_fetch_add(&r->tm_metadata_writes, 1);
                }
                if (k < 0 && first_error == 0)
                        first_error = k;
        }
        return first_error;
}

/* (Re)computes *plan for the InferenceService name from the given objects (all borrowed). */
static int compute_plan(const char *name, const json_t *isvc, const json_t *cm, json_t *tms,
                        struct isvc_plan *plan)
{
        size_t n = json_array_size(tms);
        const json_t **arr = calloc(n + 1, sizeof(*arr));
        struct plan_input in;
        int k;

        if (!arr)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                arr[i] = json_array_get(tms, i);
        in = (struct plan_input){ .isvc_name = name, .isvc = isvc, .configmap = cm, .tms = arr,
                                  .n_tms = n, .now = now_realtime() };
        isvc_plan_release(plan);
        k = isvc_plan_compute(&in, plan);
        free(arr);
        return k;
}

static int tm_reconcile_isvc(struct tm_reconciler *r, struct kube_client *c, const char *key,
                             const struct log_fields *lf, struct reconcile_result *ret)
{
        AUTOFREE char *ns = NULL, *name = NULL;
        CLEANUP(isvc_plan_releasep) struct isvc_plan plan = { 0 };
        json_auto_t *isvc = NULL, *tms = NULL, *cm = NULL;
        char cm_name[MODELCONFIG_NAME_MAX];
        int k;

        k = cache_key_split(key, &ns, &name);
        if (k < 0 || !ns)
                return reconcile_terminal(ret, -EINVAL);
        k = modelconfig_name(name, cm_name, sizeof(cm_name));
        if (k < 0)
                return reconcile_terminal(ret, k);

        isvc = cache_get(informer_cache(r->isvcs), key);
        k = cache_by_index(informer_cache(r->tms), TM_INDEX_ISVC, key, &tms);
        if (k < 0)
                return k;
        if (json_array_size(tms) == 0) {
                /* Nothing points here (any more). A TrainedModel moved to another parent may
                 * have been relabelled by that parent's reconcile before this one ran (W7): its
                 * entry must still leave this models.json. Only an existing, non-empty
                 * ConfigMap is touched (planned with no TrainedModels: "[]"). */
                const char *data;

                k = get_configmap(r, c, ns, cm_name, &cm, lf);
                if (k < 0)
                        return k;
                data = json_get_string_path(cm, "data", "models.json", NULL);
                if (!cm || !data || streq(data, "") || streq(data, "[]"))
                        return reconcile_done(ret);
        }

        for (unsigned attempt = 0;; attempt++) {
                json_decref(cm);
                cm = NULL;
                k = get_configmap(r, c, ns, cm_name, &cm, lf);
                if (k < 0)
                        return k;

                k = compute_plan(name, isvc, cm, tms, &plan);
                if (k == -ENOMEM)
                        return k;
                if (k < 0)
                        return reconcile_terminal(ret, k);

                k = apply_metadata(r, c, ns, &plan, tms, lf);
                if (k < 0)
                        return k;

                k = write_configmap(r, c, ns, &plan, &cm, lf);
                if (k < 0)
                        return k;
                if (k == 0) {
                        /* the write succeeded: the Normal events (added/removed) are true now */
                        for (size_t i = 0; i < plan.n_tms; i++)
                                if (plan.configmap_patch || plan.configmap_create)
                                        emit(r, json_array_get(tms, i), &plan.tms[i], "Normal");
                        break;
                }
                atomic_fetch_add(&r->configmap_conflicts, 1);
                if (attempt + 1 >= CONFIGMAP_CONFLICT_TRIES)
                        return reconcile_retry(ret);
        }

        /* second plan: with the written ConfigMap, Ready and finalizer removals follow the write */
        k = compute_plan(name, isvc, cm, tms, &plan);
        if (k == -ENOMEM)
                return k;
        if (k < 0)
                return reconcile_terminal(ret, k);
        k = apply_rest(r, c, ns, &plan, tms, lf);
        if (k < 0)
                return k;
        return reconcile_requeue_after(ret, RESYNC_PERIOD);
}

static int tm_reconcile(void *userdata, const char *key, struct reconcile_result *ret)
{
        struct tm_reconciler *r = userdata;
        struct log_fields lf = { .controller = "trainedmodel", .object = key };
        struct kube_client *c = NULL;
        int k;

        /* Workers may start before the caches are loaded (controller-runtime would wait for
         * the sync): an InferenceService absent from an unsynced cache is unknown, not gone
         * (planning with it would delete its TrainedModels), and a partial TrainedModel set
         * would mis-admit memory. Wait for both caches. */
        if (!informer_has_synced(r->isvcs) || !informer_has_synced(r->tms))
                return reconcile_requeue_after(ret, 200 * USEC_PER_MSEC);

        k = client_acquire(r, &c);
        if (k < 0)
                return k;
        if (strneq(key, TM_ORPHAN_KEY_PREFIX, strlen(TM_ORPHAN_KEY_PREFIX)))
                k = reconcile_orphan(r, c, key, &lf, ret);
        else
                k = tm_reconcile_isvc(r, c, key, &lf, ret);
        client_release(r, c);
        return k;
}

struct reconciler tm_reconciler_get(struct tm_reconciler *r)
{
        return (struct reconciler){ .name = "trainedmodel", .reconcile = tm_reconcile,
                                    .userdata = r };
}
