/* SPDX-License-Identifier: Apache-2.0 */
#include "serving/reconciler.h"
#include "serving/reconciler-internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "json/json-util.h"
#include "kube/cache.h"
#include "kube/informer.h"
#include "kube/workqueue.h"
#include "serving/modelconfig.h"
#include "serving/plan.h"
#include "serving/spread.h"
#include "util/log.h"

const struct gvr gvr_trainedmodels = { "serving.kserve.io", "v1alpha1", "trainedmodels" };
const struct gvr gvr_inferenceservices = { "serving.kserve.io", "v1beta1", "inferenceservices" };
const struct gvr gvr_configmaps = { "", "v1", "configmaps" };

/* How often one reconcile re-reads the ConfigMap after a 409 before handing the key back. */
#define CONFIGMAP_CONFLICT_TRIES 8
/* Safety net: a quiet InferenceService is reconciled again after this long (kube-rs advice). */
#define RESYNC_PERIOD (60 * USEC_PER_MINUTE)
/* The time slice of one reconcile: TrainedModels whose status/finalizer it writes (phase 3).
 * Every pass plans all TrainedModels of the InferenceService again, so the slice is large. */
#define TM_WRITES_PER_PASS_DEFAULT 2000U

static void json_value_free(void *v)
{
        json_decref(v);
}

int tm_reconciler_new(const struct tm_reconciler_options *opts, struct tm_reconciler **ret)
{
        struct tm_reconciler *r;

        if (!opts || !opts->trainedmodels || !opts->inferenceservices)
                return -EINVAL;
        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        (void)pthread_mutex_init(&r->own_lock, NULL);
        r->own_writes = hashmap_new(own_inner_free);
        r->own_configmaps = hashmap_new(own_chain_free);
        r->last_writes = hashmap_new(free);
        r->own_assignments = hashmap_new(own_inner_free);
        r->own_isvc_status = hashmap_new(own_isvc_status_free);
        r->placement_pods = hashmap_new(json_value_free);
        r->releasing = hashmap_new(NULL);
        if (!r->own_writes || !r->own_configmaps || !r->last_writes || !r->own_assignments ||
            !r->own_isvc_status || !r->placement_pods || !r->releasing) {
                tm_reconciler_free(r);
                return -ENOMEM;
        }
        r->tms = opts->trainedmodels;
        r->isvcs = opts->inferenceservices;
        r->event = opts->event;
        r->event_userdata = opts->event_userdata;
        r->writes_per_pass = opts->writes_per_pass ? opts->writes_per_pass
                                                   : TM_WRITES_PER_PASS_DEFAULT;
        r->configmaps = opts->configmaps;
        r->ready_requires_loaded = opts->ready_requires_loaded;
        r->delete_batch_window = tm_delete_batch_window(opts);
        r->no_finalizer = opts->no_finalizer;
        r->clock = opts->clock ? opts->clock : &clock_realtime;
        *ret = r;
        return 0;
}

struct tm_reconciler *tm_reconciler_free(struct tm_reconciler *r)
{
        if (!r)
                return NULL;
        hashmap_free(r->own_writes);
        hashmap_free(r->own_configmaps);
        hashmap_free(r->last_writes);
        hashmap_free(r->own_assignments);
        hashmap_free(r->own_isvc_status);
        hashmap_free(r->placement_pods);
        hashmap_free(r->releasing);
        (void)pthread_mutex_destroy(&r->own_lock);
        free(r);
        return NULL;
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
                .passes = atomic_load(&r->passes),
                .plans = atomic_load(&r->plans),
                .passes_skipped = atomic_load(&r->passes_skipped),
                .events_posted = atomic_load(&r->events_posted),
                .events_skipped = atomic_load(&r->events_skipped),
                .assignment_writes = atomic_load(&r->assignment_writes),
                .placement_moved = atomic_load(&r->placement_moved),
                .isvc_status_writes = atomic_load(&r->isvc_status_writes),
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
        *ret_values = json_array_size(keys) > 0 ? TAKE_PTR(keys) : NULL;
        return 0;
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

static int patch_tm(const struct reconcile_ctx *ctx, const char *ns, const char *name,
                    const json_t *patch, const char *subresource, json_t **ret_obj)
{
        struct kube_write_options wo = { .subresource = subresource };
        struct kube_status st = { 0 };
        int r;

        r = kube_api_patch(ctx->api, &gvr_trainedmodels, ns, name, KUBE_PATCH_MERGE, patch, &wo,
                           ret_obj, &st);
        if (r == -ENOENT)
                return 0; /* gone meanwhile: nothing left to do for it */
        if (r < 0)
                return reconcile_errorf(ctx, r, "Failed to patch %s of TrainedModel %s/%s: %s",
                                        subresource ? subresource : "metadata", ns, name,
                                        st.message);
        return 0;
}

const char *tm_obj_rv(const json_t *o)
{
        return json_get_string_path(o, "metadata", "resourceVersion", NULL);
}

/* Reads the ConfigMap: from the informer cache (with our own writes it has not seen yet), or
 * live with fresh (after a 409) or when the cache does not hold it (not labelled yet, missing, no
 * cache). *ret is NULL when it does not exist. */
static int get_configmap(struct tm_reconciler *r, const struct reconcile_ctx *ctx, const char *ns,
                         const char *name, bool fresh, json_t **ret)
{
        struct kube_status st = { 0 };
        char key[CACHE_KEY_MAX];
        json_t *cm = NULL;
        int k;

        k = tm_configmap_key(ns, name, key, sizeof(key));
        if (k < 0)
                return reconcile_errorf(ctx, k, "ConfigMap key %s/%s too long", ns, name);
        if (r->configmaps && !fresh) {
                json_auto_t *cached = cache_get(r->configmaps, key);

                cm = tm_own_configmap_overlay(r, key, cached);
                if (cm) {
                        *ret = cm;
                        return 0;
                }
        }
        (void)pthread_mutex_lock(&r->own_lock);
        (void)hashmap_remove(r->own_configmaps, key);
        (void)pthread_mutex_unlock(&r->own_lock);
        atomic_fetch_add(&r->configmap_gets, 1);
        k = kube_api_get(ctx->api, &gvr_configmaps, ns, name, &cm, &st);
        if (k == -ENOENT) {
                *ret = NULL;
                return 0;
        }
        if (k < 0)
                return reconcile_errorf(ctx, k, "Failed to get ConfigMap %s/%s: %s", ns, name,
                                        st.message);
        *ret = cm;
        return 0;
}

/* Writes the ConfigMap the plan asks for. Returns 1 after a 409/AlreadyExists (re-read and
 * re-plan), 0 when written or nothing to write (*cm updated), < 0 on error. */
static int write_configmap(struct tm_reconciler *r, const struct reconcile_ctx *ctx, const char *ns,
                           const struct isvc_plan *plan, json_t **cm)
{
        struct kube_status st = { 0 };
        json_t *written = NULL;
        int k;

        if (plan->configmap_create) {
                k = kube_api_create(ctx->api, &gvr_configmaps, ns, plan->configmap_create, NULL,
                                    &written, &st);
                if (k == -EEXIST)
                        return 1;
        } else if (plan->configmap_patch) {
                k = kube_api_patch(ctx->api, &gvr_configmaps, ns, plan->configmap_name,
                                   KUBE_PATCH_MERGE, plan->configmap_patch, NULL, &written, &st);
                if (k == -ESTALE || k == -ENOENT)
                        return 1;
        } else
                return 0;
        if (k < 0)
                return reconcile_errorf(ctx, k, "Failed to write ConfigMap %s/%s: %s", ns,
                                        plan->configmap_name, st.message);
        atomic_fetch_add(&r->configmap_writes, 1);
        if (plan->models_json)
                atomic_fetch_add(&r->configmap_bytes_written, strlen(plan->models_json));
        if (written) {
                /* what the cache would hold (no managedFields) */
                json_t *slim = cache_transform_strip_managed_fields(NULL, written);

                json_decref(written);
                written = slim;
                if (!written)
                        return -ENOMEM;
        }
        if (written && r->configmaps) {
                char key[CACHE_KEY_MAX];

                k = tm_configmap_key(ns, plan->configmap_name, key, sizeof(key));
                if (k >= 0)
                        k = tm_own_configmap_put(r, key, plan->configmap_create ? NULL : *cm,
                                                 written);
                if (k < 0) {
                        json_decref(written);
                        return k;
                }
        }
        json_decref(*cm);
        *cm = written;
        return 0;
}

/* The release hand-off (reconciler.h) of TrainedModel ns/name: once while it is queued, added
 * rate-limited (the pace). Returns 1 when handed (or already queued), 0 when there is no release
 * queue or no key for it, < 0 on error. */
static int hand_off_release(struct tm_reconciler *r, const char *ns, const char *name)
{
        char key[CACHE_KEY_MAX];
        bool queued;
        int k;

        if (!r->release_queue)
                return 0;
        k = snprintf(key, sizeof(key), "%s/%s", ns, name);
        if (k < 0 || (size_t)k >= sizeof(key))
                return 0;
        (void)pthread_mutex_lock(&r->own_lock);
        queued = hashmap_get(r->releasing, key) != NULL;
        k = queued ? 0 : hashmap_put(r->releasing, key, r);
        (void)pthread_mutex_unlock(&r->own_lock);
        if (k < 0)
                return k;
        if (!queued)
                k = workqueue_add_rate_limited(r->release_queue, key);
        return k < 0 ? k : 1;
}

/* Phase 3's hand-offs of one TrainedModel: a deleting one's finalizer removal to the finalizer
 * queue (all its writes go there), a live one's release to the release queue. Returns 1 when
 * handed, 0 when not, < 0 on error. */
static int hand_off(struct tm_reconciler *r, const char *ns, const struct tm_plan *t)
{
        char key[CACHE_KEY_MAX];
        int k;

        if (t->metadata_phase != TM_METADATA_FINALIZE)
                return t->release_finalizer ? hand_off_release(r, ns, t->name) : 0;
        if (!r->finalize_queue)
                return 0;
        k = snprintf(key, sizeof(key), "%s/%s", ns, t->name);
        if (k < 0 || (size_t)k >= sizeof(key))
                return 0; /* released inline */
        k = workqueue_add(r->finalize_queue, key);
        return k < 0 ? k : 1;
}

/* The orphan controller: one reconcile per TrainedModel key ("ns/name") without a parent. */
static int tm_reconcile_orphan(const struct reconcile_ctx *ctx, const char *key,
                               struct reconcile_result *ret)
{
        struct tm_reconciler *r = ctx->userdata;
        CLEANUP(tm_plan_release) struct tm_plan p = { 0 };
        json_auto_t *tm = cache_get(r->tms, key);
        json_auto_t *parents = NULL;
        const char *ns, *name;
        int k;

        if (!tm)
                return reconcile_done(ret);
        /* it got a parent meanwhile: the InferenceService's reconcile owns it now */
        k = tm_index_isvc(r, tm, &parents);
        if (k < 0 || parents)
                return k < 0 ? k : reconcile_done(ret);
        ns = json_get_string_path(tm, "metadata", "namespace", NULL);
        name = json_get_string_path(tm, "metadata", "name", NULL);
        k = tm_plan_orphan(tm, reconcile_now(ctx), r->no_finalizer, &p);
        if (k < 0)
                return reconcile_terminal(ret, k);
        if (p.metadata_patch) {
                k = patch_tm(ctx, ns, name, p.metadata_patch, NULL, NULL);
                if (k < 0)
                        return k;
                atomic_fetch_add(&r->tm_metadata_writes, 1);
        }
        if (p.status_changed && p.status) {
                json_auto_t *sp = json_pack("{s:O}", "status", p.status);
                if (!sp)
                        return -ENOMEM;
                k = patch_tm(ctx, ns, name, sp, "status", NULL);
                if (k < 0)
                        return k;
                atomic_fetch_add(&r->tm_status_writes, 1);
                emit(r, tm, &p, NULL);
        }
        if (p.release_finalizer) {
                k = hand_off_release(r, ns, name);
                if (k < 0)
                        return k;
        }
        return reconcile_done(ret);
}

/* One phase of writes of one reconcile, run concurrently (reconcile_for_each). */
struct phase {
        struct tm_reconciler *r;
        const char *key, *ns;
        const struct isvc_plan *plan;
        json_t *tms;      /* read-only while the items run */
        json_t **answers; /* phase 1: the slimmed answer per index (owned), NULL: none */
};

static int metadata_item(const struct reconcile_ctx *ctx, size_t i, void *userdata)
{
        struct phase *ph = userdata;
        const struct tm_plan *p = &ph->plan->tms[i];
        json_t *obj = json_array_get(ph->tms, i), *updated = NULL;
        int k;

        if (p->metadata_phase != TM_METADATA_FIRST)
                return 0;
        k = patch_tm(ctx, ph->ns, p->name, p->metadata_patch, NULL, &updated);
        if (k < 0)
                return k;
        atomic_fetch_add(&ph->r->tm_metadata_writes, 1);
        /* keep what the second plan reads, not the server's managedFields */
        updated = tm_slim_answer(updated);
        if (updated && tm_own_writes_put(ph->r, ph->key, obj, updated) < 0) {
                json_decref(updated);
                return -ENOMEM;
        }
        ph->answers[i] = updated;
        return 0;
}

/* Phase 1: metadata patches of live TrainedModels (finalizer before models.json), concurrently;
 * all of them are answered before the ConfigMap is written. Replaces the patched objects in tms
 * with the server's answers so that the second plan sees them. */
static int apply_metadata(struct tm_reconciler *r, const struct reconcile_ctx *ctx, const char *key,
                          const char *ns, const struct isvc_plan *plan, json_t *tms)
{
        struct phase ph = { .r = r, .key = key, .ns = ns, .plan = plan, .tms = tms };
        int k, first;

        ph.answers = calloc(plan->n_tms + 1, sizeof(json_t *));
        if (!ph.answers)
                return -ENOMEM;
        first = reconcile_for_each(ctx, plan->n_tms, metadata_item, &ph);
        for (size_t i = 0; i < plan->n_tms; i++) {
                if (!ph.answers[i])
                        continue;
                k = json_array_set_new(tms, i, ph.answers[i]);
                if (k < 0 && first == 0)
                        first = -ENOMEM;
        }
        free(ph.answers);
        return first;
}

/* A status or finalizer patch of phase 3, its answer recorded as an own write. */
static int patch_tm_recorded(struct tm_reconciler *r, const struct reconcile_ctx *ctx,
                             const char *key, const char *ns, const json_t *cached,
                             const char *name, const json_t *patch, const char *subresource)
{
        json_t *answer = NULL;
        int k;

        k = patch_tm(ctx, ns, name, patch, subresource, &answer);
        if (k < 0)
                return k;
        answer = tm_slim_answer(answer); /* NULL: it was gone (404) */
        k = tm_own_writes_put(r, key, cached, answer);
        json_decref(answer);
        return k;
}

/* A live model's finalizer release without a release queue, planned from our last answer for it
 * (a status patch of this pass moved its resourceVersion: the release's precondition). */
static int release_inline(struct tm_reconciler *r, const struct reconcile_ctx *ctx,
                          const struct phase *ph, const json_t *obj, const char *name)
{
        json_auto_t *latest = NULL, *patch = NULL;
        int k;

        if (!tm_own_writes_lookup(r, ph->key, obj, &latest))
                latest = json_incref((json_t *)obj);
        if (!latest)
                return 0; /* gone */
        k = tm_plan_release_finalizer(latest, r->no_finalizer, &patch);
        if (k < 0 || !patch)
                return k;
        k = patch_tm_recorded(r, ctx, ph->key, ph->ns, obj, name, patch, NULL);
        if (k == 0)
                atomic_fetch_add(&r->tm_metadata_writes, 1);
        return k;
}

static int rest_item(const struct reconcile_ctx *ctx, size_t i, void *userdata)
{
        struct phase *ph = userdata;
        struct tm_reconciler *r = ph->r;
        const struct tm_plan *p = &ph->plan->tms[i];
        const char *ns = ph->ns;
        json_t *obj = json_array_get(ph->tms, i);
        struct kube_status st = { 0 };
        int k = 0;

        if (p->delete_object) {
                /* this object only: one deleted and created again under its name meanwhile
                 * (409, UID precondition) is another TrainedModel, with passes of its own */
                struct kube_delete_options del = {
                        .precondition_uid = json_get_string_path(obj, "metadata", "uid", NULL)
                };

                k = kube_api_delete(ctx->api, &gvr_trainedmodels, ns, p->name, &del, NULL, &st);
                if (k >= 0 || k == -ENOENT || k == -ESTALE) /* deleted, gone or replaced */
                        (void)tm_own_writes_put(r, ph->key, obj, NULL);
                if (k == -ENOENT || k == -ESTALE)
                        return 0;
                if (k < 0)
                        return reconcile_errorf(ctx, k, "Failed to delete TrainedModel %s/%s: %s",
                                                ns, p->name, st.message);
                atomic_fetch_add(&r->tm_deletes, 1);
                log_emit(LOG_LEVEL_INFO, 0, ctx->log,
                         "Deleted TrainedModel %s/%s: its InferenceService does not exist", ns,
                         p->name);
                return 0;
        }
        if (p->status && p->status_changed) {
                json_auto_t *sp = json_pack("{s:O}", "status", p->status);
                if (!sp)
                        return -ENOMEM;
                k = patch_tm_recorded(r, ctx, ph->key, ns, obj, p->name, sp, "status");
                if (k == 0) {
                        atomic_fetch_add(&r->tm_status_writes, 1);
                        emit(r, obj, p, "Warning");
                }
        }
        if (k == 0 && p->metadata_phase == TM_METADATA_FINALIZE) {
                k = patch_tm_recorded(r, ctx, ph->key, ns, obj, p->name, p->metadata_patch, NULL);
                if (k == 0)
                        atomic_fetch_add(&r->tm_metadata_writes, 1);
        }
        if (k == 0 && p->release_finalizer && !r->release_queue)
                k = release_inline(r, ctx, ph, obj, p->name);
        return k;
}

static bool rest_has_writes(const struct tm_plan *p)
{
        return p->delete_object || (p->status && p->status_changed) ||
               p->metadata_phase == TM_METADATA_FINALIZE || p->release_finalizer;
}

struct capped {
        struct phase *ph;
        size_t *index; /* the plan indexes this pass writes */
};

static int capped_item(const struct reconcile_ctx *ctx, size_t i, void *userdata)
{
        struct capped *c = userdata;

        return rest_item(ctx, c->index[i], c->ph);
}

/* Phase 3, after the ConfigMap write: status, finalizer removal, deletes, events, concurrently
 * (one TrainedModel's writes stay in order on one thread). A time slice: at most
 * writes_per_pass TrainedModels are written per reconcile; *ret_more tells that the rest
 * waits for the next pass (the key goes to the back of the queue: other InferenceServices get
 * their turn; what was written here is remembered as own writes, so nothing is sent twice). */
static int apply_rest(struct tm_reconciler *r, const struct reconcile_ctx *ctx, const char *key,
                      const char *ns, const struct isvc_plan *plan, json_t *tms, bool *ret_more,
                      size_t *ret_n, size_t *ret_handed)
{
        struct phase ph = { .r = r, .key = key, .ns = ns, .plan = plan, .tms = tms };
        struct capped c = { .ph = &ph };
        size_t n = 0;
        int k;

        *ret_more = false;
        c.index = calloc(plan->n_tms + 1, sizeof(*c.index));
        if (!c.index)
                return -ENOMEM;
        for (size_t i = 0; i < plan->n_tms; i++) {
                const struct tm_plan *t = &plan->tms[i];

                if (!rest_has_writes(t))
                        continue;
                /* a deleting model that models.json no longer lists (written above, or already
                 * so): its finalizer goes on the finalizer workers, while this key goes on; a
                 * live model's release goes on the release worker, at its pace */
                k = hand_off(r, ns, t);
                if (k < 0) {
                        free(c.index);
                        return k;
                }
                *ret_handed += (size_t)k;
                if (k > 0 && (t->metadata_phase == TM_METADATA_FINALIZE ||
                              !(t->status && t->status_changed)))
                        continue;
                if (n == r->writes_per_pass) {
                        *ret_more = true;
                        break;
                }
                c.index[n++] = i;
        }
        *ret_n = n;
        k = reconcile_for_each(ctx, n, capped_item, &c);
        free(c.index);
        return k;
}

/* (Re)computes *plan for the InferenceService name from the given objects (all borrowed). */
static int compute_plan(const struct tm_reconciler *r, const char *name, const json_t *isvc,
                        const json_t *cm, json_t *tms, const json_t *cms, usec_t now,
                        struct isvc_plan *plan)
{
        size_t n = json_array_size(tms);
        const json_t **arr = calloc(n + 1, sizeof(const json_t *));
        struct plan_input in;
        int k;

        if (!arr)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                arr[i] = json_array_get(tms, i);
        in = (struct plan_input){ .isvc_name = name,
                                  .isvc = isvc,
                                  .configmap = cm,
                                  .tms = arr,
                                  .n_tms = n,
                                  .now = now,
                                  .configmaps = cms,
                                  .ready_requires_loaded = r->ready_requires_loaded,
                                  .no_finalizer = r->no_finalizer };
        isvc_plan_release(plan);
        k = isvc_plan_compute(&in, plan);
        free(arr);
        return k;
}

/* One pass of the InferenceService reconcile: its inputs, its plan and its profile. */
struct pass {
        const struct reconcile_ctx *ctx;
        struct tm_reconciler *r;
        const char *key;
        char *ns, *name;
        char cm_name[MODELCONFIG_NAME_MAX];
        json_t *isvc, *tms, *cm;
        json_t *cms; /* the reports and assignment ConfigMaps (placement), with our writes */
        struct isvc_plan plan;
        /* the pass's phases, for the debug line that profiles it */
        usec_t t_start, t_meta, t_cm;
        size_t n_meta, n_rest, n_handed, n_assign;
        unsigned attempts;
        bool cm_written, more;
        bool replan; /* the first plan's inputs changed (a write): pass_finish plans again */
};

static void pass_release(struct pass *p)
{
        free(p->ns);
        free(p->name);
        json_decref(p->isvc);
        json_decref(p->tms);
        json_decref(p->cm);
        json_decref(p->cms);
        isvc_plan_release(&p->plan);
}

/* A pass step's answer beyond 0 (go on) and < 0 (error): the reconcile's result is set. */
#define PASS_STOP 1

/* The inputs: the InferenceService and its TrainedModels (with our own writes) from the caches. */
static int pass_load(struct pass *p, struct reconcile_result *ret)
{
        const char *data;
        int k;

        k = cache_key_split(p->key, &p->ns, &p->name);
        if (k < 0 || !p->ns)
                return reconcile_terminal(ret, -EINVAL);
        k = modelconfig_name(p->name, p->cm_name, sizeof(p->cm_name));
        if (k < 0)
                return reconcile_terminal(ret, k);
        p->isvc = cache_get(p->r->isvcs, p->key);
        k = cache_by_index(p->r->tms, TM_INDEX_ISVC, p->key, &p->tms);
        if (k >= 0)
                k = tm_own_writes_overlay(p->r, p->key, p->tms);
        if (k >= 0)
                k = tm_spread_load(p->r, p->key, &p->cms);
        if (k < 0 || json_array_size(p->tms) > 0)
                return k;
        /* Nothing points here (any more). A TrainedModel moved to another parent may have been
         * relabelled by that parent's reconcile before this one ran (W7): its entry must still
         * leave this models.json. Only an existing, non-empty ConfigMap is touched (planned with
         * no TrainedModels: "[]"). */
        k = get_configmap(p->r, p->ctx, p->ns, p->cm_name, false, &p->cm);
        if (k < 0)
                return k;
        data = json_get_string_path(p->cm, "data", "models.json", NULL);
        if (!p->cm || !data || streq(data, "") || streq(data, "[]")) {
                if (!spread_enabled(p->isvc))
                        tm_spread_forget(p->r, p->key); /* its per-pod metrics go */
                (void)reconcile_done(ret);
                return PASS_STOP;
        }
        return 0;
}

/* The one Normal Event of a models.json write, on the InferenceService (or, without one, on the
 * ConfigMap as written); none for a write that only drops the entries of deleted models. */
static void emit_write_event(struct pass *p)
{
        AUTOFREE char *message = NULL;
        const char *reason;
        const json_t *on = p->isvc ? p->isvc : p->cm;
        int k;

        if (!p->r->event || !on)
                return;
        k = isvc_plan_write_event(&p->plan, &reason, &message);
        if (k == PLAN_EVENT_SKIPPED)
                atomic_fetch_add(&p->r->events_skipped, 1);
        if (k != PLAN_EVENT_POST)
                return;
        p->r->event(p->r->event_userdata, on, "Normal", reason, message);
        atomic_fetch_add(&p->r->events_posted, 1);
}

/* Plans, writes the metadata patches, then the ConfigMap; a 409 re-reads fresh and re-plans. */
static int pass_write(struct pass *p, struct reconcile_result *ret)
{
        size_t n_meta = 0;
        int k;

        for (unsigned attempt = 0;; attempt++) {
                json_decref(p->cm);
                p->cm = NULL;
                /* a 409 means the cache (or our view of it) is behind: read fresh */
                k = get_configmap(p->r, p->ctx, p->ns, p->cm_name, attempt > 0, &p->cm);
                if (k < 0)
                        return k;
                k = compute_plan(p->r, p->name, p->isvc, p->cm, p->tms, p->cms,
                                 reconcile_now(p->ctx), &p->plan);
                if (k < 0)
                        return k == -ENOMEM ? k : reconcile_terminal(ret, k);
                atomic_fetch_add(&p->r->plans, 1);
                n_meta = 0;
                for (size_t i = 0; i < p->plan.n_tms; i++)
                        n_meta += p->plan.tms[i].metadata_phase == TM_METADATA_FIRST;
                p->n_meta += n_meta;
                k = apply_metadata(p->r, p->ctx, p->key, p->ns, &p->plan, p->tms);
                if (k < 0)
                        return k;
                p->t_meta = reconcile_now(p->ctx);
                p->attempts++;
                /* placement: the replicas' assignments before the shared list (a model being
                 * deleted leaves them before its finalizer can go) */
                k = tm_spread_write(p->r, p->ctx, p->key, p->ns, p->name, &p->plan, p->cms);
                if (k < 0)
                        return k;
                p->n_assign += p->plan.n_assignment_writes;
                k = write_configmap(p->r, p->ctx, p->ns, &p->plan, &p->cm);
                if (k < 0)
                        return k;
                if (k == 0)
                        break;
                atomic_fetch_add(&p->r->configmap_conflicts, 1);
                if (attempt + 1 >= CONFIGMAP_CONFLICT_TRIES) {
                        (void)reconcile_retry(ret);
                        return PASS_STOP;
                }
        }
        p->cm_written = p->plan.configmap_patch || p->plan.configmap_create;
        /* the last plan's metadata answers replaced TrainedModels in tms, or the ConfigMap it
         * read was replaced by the one written: what follows the write must be planned anew */
        p->replan = p->cm_written || n_meta > 0 || p->plan.n_assignment_writes > 0;
        if (p->cm_written) {
                /* the write succeeded: what it added and removed is true now */
                emit_write_event(p);
                tm_batch_note_write(p->r, p->key, reconcile_now(p->ctx));
        }
        return 0;
}

/* Plans again with the written ConfigMap (Ready and finalizer removals follow the write; the
 * replicas' reports are the plan's too) and writes statuses, finalizer removals and deletes. A
 * pass that wrote nothing keeps its plan: its inputs are the same, only the clock moved
 * (milliseconds, within the second that lastTransitionTime records). The requeue: when a fresh
 * report turns stale (the plan's next_stale), a dead agent is noticed without any event. */
static int pass_finish(struct pass *p, struct reconcile_result *ret)
{
        usec_t now, after, next_stale;
        int k;

        p->t_cm = reconcile_now(p->ctx);
        if (p->replan) {
                atomic_fetch_add(&p->r->plans, 1);
                k = compute_plan(p->r, p->name, p->isvc, p->cm, p->tms, p->cms,
                                 reconcile_now(p->ctx), &p->plan);
                if (k < 0)
                        return k == -ENOMEM ? k : reconcile_terminal(ret, k);
        }
        now = reconcile_now(p->ctx);
        next_stale = p->plan.next_stale;
        k = apply_rest(p->r, p->ctx, p->key, p->ns, &p->plan, p->tms, &p->more, &p->n_rest,
                       &p->n_handed);
        if (k >= 0)
                k = tm_spread_isvc_status(p->r, p->ctx, p->key, p->ns, p->name, p->isvc, &p->plan);
        if (k < 0)
                return k;
        tm_spread_note(p->r, p->key, &p->plan);
        (void)log_emit(LOG_LEVEL_DEBUG, 0, p->ctx->log,
                       "Pass: %zu TrainedModels; %zu metadata writes in %.1f ms, ConfigMap %s "
                       "(%zu assignment writes) in %.1f ms (%u attempts), %zu "
                       "status/finalizer/delete writes in %.1f ms, %zu finalizers handed off%s",
                       p->plan.n_tms, p->n_meta, (double)(p->t_meta - p->t_start) / 1000.0,
                       p->cm_written ? "written" : "unchanged", p->n_assign,
                       (double)(p->t_cm - p->t_meta) / 1000.0, p->attempts, p->n_rest,
                       (double)(reconcile_now(p->ctx) - p->t_cm) / 1000.0, p->n_handed,
                       p->more ? "; more next pass" : "");
        after = RESYNC_PERIOD;
        if (next_stale > now && next_stale - now < after)
                after = next_stale - now;
        return reconcile_requeue_after(ret, p->more ? 0 : after);
}

/* The InferenceService controller: one reconcile per InferenceService key ("ns/isvc"). */
static int tm_reconcile_isvc(const struct reconcile_ctx *ctx, const char *key,
                             struct reconcile_result *ret)
{
        CLEANUP(pass_release)
        struct pass p = {
                .ctx = ctx, .r = ctx->userdata, .key = key, .t_start = reconcile_now(ctx)
        };
        int k;

        atomic_fetch_add(&p.r->passes, 1);
        k = pass_load(&p, ret);
        if (k == 0)
                k = pass_write(&p, ret);
        if (k == 0)
                k = pass_finish(&p, ret);
        return k == PASS_STOP ? 0 : k;
}

/* The finalizer controller: one reconcile per TrainedModel key ("ns/name"), handed over by the
 * InferenceService reconcile once models.json no longer lists it (never from the informer); the
 * same for the release controller (no_finalizer: live models too). */
static int finalizer_release(const struct reconcile_ctx *ctx, struct tm_reconciler *r,
                             const char *key, struct reconcile_result *ret)
{
        json_auto_t *cached = cache_get(r->tms, key), *parents = NULL, *tm = NULL, *patch = NULL;
        json_t *answer = NULL;
        const char *ns, *name;
        int k;

        if (!cached)
                return reconcile_done(ret);
        k = tm_index_isvc(r, cached, &parents);
        if (k < 0)
                return k;
        tm = json_incref(cached);
        for (size_t i = 0; i < json_array_size(parents); i++) {
                json_t *mine;

                if (tm_own_writes_lookup(r, json_string_value(json_array_get(parents, i)), cached,
                                         &mine)) {
                        json_decref(tm);
                        tm = mine; /* NULL: already gone */
                        break;
                }
        }
        if (!tm)
                return reconcile_done(ret);
        ns = json_get_string_path(tm, "metadata", "namespace", NULL);
        name = json_get_string_path(tm, "metadata", "name", NULL);
        /* the finalizer removal, if it still has ours and may lose it (being deleted, or
         * no_finalizer) */
        k = tm_plan_release_finalizer(tm, r->no_finalizer, &patch);
        if (k < 0)
                return reconcile_terminal(ret, k);
        if (!patch || !ns || !name)
                return reconcile_done(ret);
        k = patch_tm(ctx, ns, name, patch, NULL, &answer);
        if (k < 0)
                return k;
        atomic_fetch_add(&r->tm_metadata_writes, 1);
        answer = tm_slim_answer(answer); /* NULL: it was gone (404), done as well */
        for (size_t i = 0; k >= 0 && i < json_array_size(parents); i++)
                k = tm_own_writes_put(r, json_string_value(json_array_get(parents, i)), cached,
                                      answer);
        json_decref(answer);
        return k < 0 ? k : reconcile_done(ret);
}

static int tm_reconcile_finalizer(const struct reconcile_ctx *ctx, const char *key,
                                  struct reconcile_result *ret)
{
        struct tm_reconciler *r = ctx->userdata;
        int k = finalizer_release(ctx, r, key, ret);

        /* done with this hand-off (a retry keeps the key queued): the next pass may hand the
         * key over again if the finalizer is still there */
        if (k >= 0 || reconcile_error_is_terminal(k)) {
                (void)pthread_mutex_lock(&r->own_lock);
                (void)hashmap_remove(r->releasing, key);
                (void)pthread_mutex_unlock(&r->own_lock);
        }
        return k;
}

void tm_reconciler_hand_off_finalizers(struct tm_reconciler *r, struct controller *finalizers)
{
        r->finalize_queue = controller_queue(finalizers);
}

const struct ratelimiter_options tm_release_pace = { .qps = TM_RELEASE_PACE_QPS,
                                                     .burst = TM_RELEASE_PACE_BURST };

void tm_reconciler_hand_off_releases(struct tm_reconciler *r, struct controller *releases)
{
        r->release_queue = controller_queue(releases);
}

struct reconciler tm_finalizer_reconciler_get(struct tm_reconciler *r)
{
        return (struct reconciler){ .name = "trainedmodel-finalizer",
                                    .reconcile = tm_reconcile_finalizer,
                                    .userdata = r };
}

struct reconciler tm_release_reconciler_get(struct tm_reconciler *r)
{
        return (struct reconciler){ .name = "trainedmodel-finalizer-release",
                                    .reconcile = tm_reconcile_finalizer,
                                    .userdata = r };
}

struct reconciler tm_reconciler_get(struct tm_reconciler *r)
{
        return (struct reconciler){ .name = "trainedmodel",
                                    .reconcile = tm_reconcile_isvc,
                                    .userdata = r };
}

struct reconciler tm_orphan_reconciler_get(struct tm_reconciler *r)
{
        return (struct reconciler){ .name = "trainedmodel-orphan",
                                    .reconcile = tm_reconcile_orphan,
                                    .userdata = r };
}
