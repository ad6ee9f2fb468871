/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The TrainedModel controller's placement writes (issue 30, serving/spread.h): the assignment
 * ConfigMaps (modelconfig-<isvc>-<pod>) a plan asks for, the InferenceService's status
 * annotation, and the controller's own writes of them that the informers have not delivered
 * yet. Declared in serving/reconciler-internal.h.
 *
 * Own assignment writes: as for modelconfig-<isvc>-0 (reconciler-own.c), the answer of each
 * write is kept with the chain of resourceVersions written from and to, per InferenceService
 * key and ConfigMap name ({"rvs": [...], "obj": answer | null (deleted), "created": bool}).
 * While the cache holds an older version of the chain (or nothing, after our create), the
 * plan reads the answer; once it holds the newest (or anything else: another writer, the
 * garbage collector), the entry goes and the cache is the truth again. There is no live read:
 * an assignment is only the planner's preference input, and its writes are unconditional merge
 * patches (one writer per InferenceService, W2).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json-util.h"
#include "kube/cache.h"
#include "serving/reconciler-internal.h"
#include "serving/replicas.h"
#include "serving/spread.h"

static const char *cm_name(const json_t *cm)
{
        return json_get_string_path(cm, "metadata", "name", NULL);
}

/* Is the cached version @rv (may be NULL) one the chain @e was written over (not its last)? */
static bool chain_behind(const struct own_chain *e, const char *rv)
{
        const char *last = own_chain_last(e);

        if (own_chain_has(e, rv, 0, true))
                return true;
        /* a delete leaves the deleted version last: the cache holding it is behind */
        return rv && last && !e->obj && streq(rv, last);
}

/* The cached assignments (@cms, modified in place) with an entry in @mine: the answer while the
 * cache is behind the chain (removed: deleted by us), else the entry goes. Names in @seen. */
static int overlay_cached(struct hashmap *mine, json_t *cms, struct hashmap *seen)
{
        for (size_t i = json_array_size(cms); i-- > 0;) {
                const json_t *cm = json_array_get(cms, i);
                const char *name = cm_name(cm);
                const struct own_chain *e = name && replicas_is_assignment(cm)
                                                    ? hashmap_get(mine, name)
                                                    : NULL;

                if (!e)
                        continue;
                if (hashmap_put(seen, name, mine) < 0)
                        return -ENOMEM;
                if (!chain_behind(e, tm_obj_rv(cm))) {
                        (void)hashmap_remove(mine, name); /* caught up, or someone else's */
                        continue;
                }
                if (!e->obj ? json_array_remove(cms, i) < 0 : json_array_set(cms, i, e->obj) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Overlays the cached ConfigMaps (@cms, the InferenceService's, modified in place) with the
 * assignment writes of one InferenceService (@mine) the cache has not delivered yet; drops the
 * entries it has. */
static int overlay_locked(struct hashmap *mine, json_t *cms)
{
        CLEANUP(hashmap_freep) struct hashmap *seen = hashmap_new(NULL);
        struct own_chain *e;
        const char *name;
        int k;

        if (!seen)
                return -ENOMEM;
        k = overlay_cached(mine, cms, seen);
        if (k < 0)
                return k;
        HASHMAP_FOREACH(mine, it, name, e) {
                if (hashmap_get(seen, name))
                        continue;
                /* not cached: our create it has not seen yet, else it is gone (a delete) */
                if (e->created && json_is_object(e->obj)) {
                        if (json_array_append(cms, e->obj) < 0)
                                return -ENOMEM;
                } else
                        (void)hashmap_remove(mine, name);
        }
        return 0;
}

/* The InferenceService's reports and assignment ConfigMaps (the cache index REPLICAS_INDEX_ISVC)
 * with our own assignment writes the cache has not delivered; *ret NULL without a ConfigMap
 * cache. */
int tm_spread_load(struct tm_reconciler *r, const char *key, json_t **ret)
{
        json_auto_t *cms = NULL;
        struct hashmap *mine;
        int k;

        *ret = NULL;
        if (!r->configmaps)
                return 0;
        k = cache_by_index(r->configmaps, REPLICAS_INDEX_ISVC, key, &cms);
        if (k < 0)
                return k;
        (void)pthread_mutex_lock(&r->own_lock);
        mine = hashmap_get(r->own_assignments, key);
        k = mine ? overlay_locked(mine, cms) : 0;
        if (mine && hashmap_size(mine) == 0)
                (void)hashmap_remove(r->own_assignments, key);
        (void)pthread_mutex_unlock(&r->own_lock);
        if (k < 0)
                return k;
        *ret = TAKE_PTR(cms);
        return 0;
}

/* Records the answer (borrowed; NULL: deleted) of a write of assignment @name planned from
 * @from (borrowed; NULL: a create). */
static int own_put(struct tm_reconciler *r, const char *key, const char *name, const json_t *from,
                   const json_t *answer)
{
        const char *base = tm_obj_rv(from), *rv = answer ? tm_obj_rv(answer) : NULL;
        struct hashmap *mine;
        struct own_chain *e;
        int k = -ENOMEM;

        (void)pthread_mutex_lock(&r->own_lock);
        mine = own_inner(r->own_assignments, key, true, own_chain_free);
        e = mine ? hashmap_get(mine, name) : NULL;
        /* a chain continues only from its own newest write */
        if (mine && (!e || !base || e->n >= OWN_CHAIN_MAX || !own_chain_last(e) ||
                     !streq(base, own_chain_last(e)))) {
                e = own_chain_new(base, !from);
                if (e && hashmap_put(mine, name, e) < 0)
                        e = NULL; /* freed */
        }
        if (e && (!rv || own_chain_append(e, rv) >= 0)) {
                json_decref(e->obj);
                e->obj = answer ? json_incref((json_t *)answer) : NULL;
                k = 0;
        }
        if (k < 0 && mine)
                (void)hashmap_remove(mine, name);
        (void)pthread_mutex_unlock(&r->own_lock);
        return k;
}

/* Is @cm (an assignment as the informer delivers it) a version our own writes produced? */
bool tm_own_assignment_echo(struct tm_reconciler *r, const json_t *cm)
{
        const char *ns = json_get_string_path(cm, "metadata", "namespace", NULL);
        const char *isvc = json_get_string_path(cm, "metadata", "labels", REPLICAS_ISVC_LABEL,
                                                NULL);
        const char *name = cm_name(cm), *rv = tm_obj_rv(cm);
        char key[CACHE_KEY_MAX];
        const struct own_chain *e;
        bool ours;

        if (!ns || !isvc || !name || !rv || !replicas_is_assignment(cm) ||
            tm_configmap_key(ns, isvc, key, sizeof(key)) < 0)
                return false;
        (void)pthread_mutex_lock(&r->own_lock);
        e = hashmap_get(hashmap_get(r->own_assignments, key), name);
        /* the chain's first version is the one planned from (unless created): not ours */
        ours = e && own_chain_has(e, rv, e->created ? 0 : 1, false);
        (void)pthread_mutex_unlock(&r->own_lock);
        return ours;
}

/* The object planned from: the assignment called @name in @cms, or NULL. */
static const json_t *find_cm(const json_t *cms, const char *name, size_t *ret_i)
{
        for (size_t i = 0; i < json_array_size(cms); i++) {
                const json_t *cm = json_array_get(cms, i);

                if (replicas_is_assignment(cm) && streq(cm_name(cm), name)) {
                        if (ret_i)
                                *ret_i = i;
                        return cm;
                }
        }
        return NULL;
}

/* A ConfigMap to create from a patch of one that vanished (the garbage collector, a user). */
static json_t *object_of_patch(const json_t *patch, const char *ns, const char *name)
{
        json_auto_t *o = json_deep_copy(patch);
        json_t *meta = json_object_get(o, "metadata");

        if (!o || !meta || json_object_set_new(o, "apiVersion", json_string("v1")) < 0 ||
            json_object_set_new(o, "kind", json_string("ConfigMap")) < 0 ||
            json_object_set_new(meta, "name", json_string(name)) < 0 ||
            json_object_set_new(meta, "namespace", json_string(ns)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

struct spread_phase {
        struct tm_reconciler *r;
        const char *key, *ns, *isvc;
        const struct isvc_plan *plan;
        const json_t *cms; /* read-only while the items run */
        json_t **answers;  /* per write: the slimmed answer (owned); NULL: none / deleted */
};

/* A create whose name is taken: ours (the cache is behind) is patched; anything else is not
 * touched. */
static int create_taken(const struct reconcile_ctx *ctx, const struct spread_phase *ph,
                        const struct spread_write *w, json_t **ret)
{
        struct kube_status st = { 0 };
        json_auto_t *live = NULL;
        const char *isvc;
        int k;

        k = kube_api_get(ctx->api, &gvr_configmaps, ph->ns, w->name, &live, &st);
        if (k < 0)
                return reconcile_errorf(ctx, k, "Failed to get ConfigMap %s/%s: %s", ph->ns,
                                        w->name, st.message);
        isvc = json_get_string_path(live, "metadata", "labels", REPLICAS_ISVC_LABEL, NULL);
        if (!replicas_is_assignment(live) || !isvc || !streq(isvc, ph->isvc))
                return reconcile_errorf(ctx, -EEXIST,
                                        "ConfigMap %s/%s exists and is not a placement "
                                        "assignment: not overwritten",
                                        ph->ns, w->name);
        k = kube_api_patch(ctx->api, &gvr_configmaps, ph->ns, w->name, KUBE_PATCH_MERGE, w->body,
                           NULL, ret, &st);
        return k < 0 ? reconcile_errorf(ctx, k, "Failed to patch ConfigMap %s/%s: %s", ph->ns,
                                        w->name, st.message)
                     : 0;
}

static int write_item(const struct reconcile_ctx *ctx, size_t i, void *userdata)
{
        struct spread_phase *ph = userdata;
        const struct spread_write *w = &ph->plan->assignment_writes[i];
        struct kube_status st = { 0 };
        json_t *answer = NULL;
        int k = 0;

        if (w->op == SPREAD_DELETE) {
                k = kube_api_delete(ctx->api, &gvr_configmaps, ph->ns, w->name, NULL, NULL, &st);
                if (k == -ENOENT)
                        k = 0;
        } else if (w->op == SPREAD_PATCH) {
                k = kube_api_patch(ctx->api, &gvr_configmaps, ph->ns, w->name, KUBE_PATCH_MERGE,
                                   w->body, NULL, &answer, &st);
                if (k == -ENOENT) { /* gone meanwhile: made again */
                        json_auto_t *o = object_of_patch(w->body, ph->ns, w->name);

                        k = o ? kube_api_create(ctx->api, &gvr_configmaps, ph->ns, o, NULL, &answer,
                                                &st)
                              : -ENOMEM;
                }
        } else {
                k = kube_api_create(ctx->api, &gvr_configmaps, ph->ns, w->body, NULL, &answer, &st);
                if (k == -EEXIST) {
                        k = create_taken(ctx, ph, w, &answer);
                        if (k < 0)
                                return k; /* described */
                }
        }
        if (k < 0) {
                json_decref(answer);
                return reconcile_errorf(ctx, k, "Failed to write ConfigMap %s/%s: %s", ph->ns,
                                        w->name, st.message);
        }
        ph->answers[i] = tm_slim_answer(answer);
        return 0;
}

/* Puts the answers into @cms (what the second plan reads) and into the own-writes map. */
static int adopt_answers(struct spread_phase *ph, json_t *cms)
{
        for (size_t i = 0; i < ph->plan->n_assignment_writes; i++) {
                const struct spread_write *w = &ph->plan->assignment_writes[i];
                size_t at = 0;
                const json_t *from = find_cm(cms, w->name, &at);
                int k;

                if (w->op != SPREAD_DELETE && !ph->answers[i])
                        continue; /* this write failed */
                k = own_put(ph->r, ph->key, w->name, from, ph->answers[i]);
                if (k >= 0 && from)
                        k = ph->answers[i] ? json_array_set(cms, at, ph->answers[i])
                                           : json_array_remove(cms, at);
                else if (k >= 0 && ph->answers[i])
                        k = json_array_append(cms, ph->answers[i]);
                if (k < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* The plan's assignment writes (creates, patches, deletes), concurrently; their answers go into
 * @cms (what the next plan of this pass reads, may be NULL) and into the own writes. */
int tm_spread_write(struct tm_reconciler *r, const struct reconcile_ctx *ctx, const char *key,
                    const char *ns, const char *isvc, const struct isvc_plan *plan, json_t *cms)
{
        struct spread_phase ph = {
                .r = r, .key = key, .ns = ns, .isvc = isvc, .plan = plan, .cms = cms
        };
        size_t n = plan->n_assignment_writes;
        int first, k;

        if (n == 0)
                return 0;
        ph.answers = calloc(n, sizeof(json_t *));
        if (!ph.answers)
                return -ENOMEM;
        first = reconcile_for_each(ctx, n, write_item, &ph);
        k = cms ? adopt_answers(&ph, cms) : 0;
        for (size_t i = 0; i < n; i++) {
                const struct spread_write *w = &plan->assignment_writes[i];

                if (ph.answers[i] || w->op == SPREAD_DELETE)
                        atomic_fetch_add(&r->assignment_writes, 1);
                json_decref(ph.answers[i]);
        }
        free(ph.answers);
        if (first == 0 && k == 0)
                atomic_fetch_add(&r->placement_moved, plan->placement_moved);
        return first < 0 ? first : k;
}

/* The InferenceService's status annotation the plan asks for; not sent again while the cache
 * still holds the version our last write of the same value went over. */
int tm_spread_isvc_status(struct tm_reconciler *r, const struct reconcile_ctx *ctx, const char *key,
                          const char *ns, const char *name, const json_t *isvc,
                          const struct isvc_plan *plan)
{
        const char *rv = tm_obj_rv(isvc), *want = plan->placement_summary;
        struct kube_write_options wo = { .subresource = "status" };
        struct kube_status st = { 0 };
        const struct own_isvc_status *last;
        struct own_isvc_status *note;
        bool same;
        int k;

        if (!plan->isvc_status_patch || !rv)
                return 0;
        /* our last write of it, while the cache still holds the version it was written over */
        (void)pthread_mutex_lock(&r->own_lock);
        last = hashmap_get(r->own_isvc_status, key);
        same = last && streq(rv, last->rv) &&
               (want ? last->value && streq(want, last->value) : !last->value);
        (void)pthread_mutex_unlock(&r->own_lock);
        if (same)
                return 0;
        k = kube_api_patch(ctx->api, &gvr_inferenceservices, ns, name, KUBE_PATCH_MERGE,
                           plan->isvc_status_patch, &wo, NULL, &st);
        if (k == -ENOENT)
                return 0;
        if (k < 0)
                return reconcile_errorf(ctx, k,
                                        "Failed to patch the status of InferenceService %s/%s: %s",
                                        ns, name, st.message);
        atomic_fetch_add(&r->isvc_status_writes, 1);
        note = calloc(1, sizeof(*note));
        if (!note || !(note->rv = strdup(rv)) || (want && !(note->value = strdup(want)))) {
                own_isvc_status_free(note);
                return -ENOMEM;
        }
        (void)pthread_mutex_lock(&r->own_lock);
        k = hashmap_put(r->own_isvc_status, key, note);
        (void)pthread_mutex_unlock(&r->own_lock);
        return k;
}

/* Keeps the plan's per-pod summary for the metrics (tm_reconciler_placement_pods()). */
void tm_spread_note(struct tm_reconciler *r, const char *key, const struct isvc_plan *plan)
{
        json_t *pods = plan->placement_summary ? json_loads(plan->placement_summary, 0, NULL)
                                               : NULL;

        (void)pthread_mutex_lock(&r->own_lock);
        /* out of memory: no summary rather than an old one */
        if (!pods || hashmap_put(r->placement_pods, key, pods) < 0)
                (void)hashmap_remove(r->placement_pods, key);
        if (!plan->isvc_status_patch && !plan->placement)
                (void)hashmap_remove(r->own_isvc_status, key);
        (void)pthread_mutex_unlock(&r->own_lock);
}

/* Forgets an InferenceService that is not (any more) under placement. */
void tm_spread_forget(struct tm_reconciler *r, const char *key)
{
        (void)pthread_mutex_lock(&r->own_lock);
        (void)hashmap_remove(r->placement_pods, key);
        (void)hashmap_remove(r->own_isvc_status, key);
        (void)pthread_mutex_unlock(&r->own_lock);
}

int tm_reconciler_placement_pods(struct tm_reconciler *r, json_t **ret)
{
        json_auto_t *all = json_object();
        const char *key;
        json_t *pods;
        int k = all ? 0 : -ENOMEM;

        (void)pthread_mutex_lock(&r->own_lock);
        HASHMAP_FOREACH(r->placement_pods, it, key, pods)
                if (k == 0 && json_object_set_new(all, key, json_deep_copy(pods)) < 0)
                        k = -ENOMEM;
        (void)pthread_mutex_unlock(&r->own_lock);
        *ret = k == 0 ? TAKE_PTR(all) : NULL;
        return k;
}
