/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The TrainedModel controller's informer handlers (issue #12, deletes): which changes become
 * reconcile keys, and when.
 *
 *  - A TrainedModel's add or change enqueues its InferenceService keys (old and new) at once,
 *    except the start of a delete (deletionTimestamp appears): when the InferenceService's
 *    ConfigMap was written less than delete_batch_window ago, the key waits for the window's end,
 *    so that deletes arriving close together leave models.json in one write (the work queue
 *    keeps the earliest time of a key, and repeated adds collapse).
 *  - A TrainedModel's removal (DELETED, after its finalizer went) enqueues nothing when it was
 *    being deleted and neither the cached models.json nor our own last write of it lists the
 *    model: it then holds no memory and no entry, and the pass would plan all the others again
 *    to change nothing. (A hand edit that lists it again arrives as a ConfigMap change.)
 *  - Without the finalizer (no_finalizer), the removal of a TrainedModel that was not being
 *    deleted is where its delete starts: batched as above.
 *  - A modelconfig ConfigMap change (modelconfig-<isvc>-0, or a placement assignment
 *    modelconfig-<isvc>-<pod>) that is the echo of one of our own writes enqueues nothing: the
 *    pass that wrote it planned again from the answer already.
 */
#include <stdlib.h>
#include <string.h>

#include "json/json-util.h"
#include "kube/cache.h"
#include "kube/informer.h"
#include "kube/workqueue.h"
#include "serving/modelconfig.h"
#include "serving/reconciler-internal.h"
#include "serving/replicas.h"
#include "util/log.h"

#define DELETE_BATCH_WINDOW_DEFAULT (1 * USEC_PER_SEC)
/* last_writes entries beyond this are pruned of those older than the window */
#define LAST_WRITES_PRUNE_AT 1024

/* The informer's view of a TrainedModel's delete, which decides when a key is enqueued (what
 * a pass writes for it is the plan's: serving/plan.h). */
static bool tm_is_deleting(const json_t *tm)
{
        return json_get_path(tm, "metadata", "deletionTimestamp", NULL) != NULL;
}

usec_t tm_delete_batch_window(const struct tm_reconciler_options *opts)
{
        return opts->delete_batch_window ? opts->delete_batch_window : DELETE_BATCH_WINDOW_DEFAULT;
}

void tm_batch_note_write(struct tm_reconciler *r, const char *key, usec_t now)
{
        usec_t *v, *at;
        const char *k;

        if (r->delete_batch_window == USEC_INFINITY)
                return;
        at = malloc(sizeof(*at));
        if (!at)
                return; /* that write is not batched after: only a pass more */
        *at = now;
        (void)pthread_mutex_lock(&r->own_lock);
        if (hashmap_size(r->last_writes) >= LAST_WRITES_PRUNE_AT)
                HASHMAP_FOREACH(r->last_writes, it, k, v)
                        if (*v + r->delete_batch_window < now)
                                (void)hashmap_remove(r->last_writes, k);
        /* out of memory: no note (an older one would delay wrongly), only a pass more */
        if (hashmap_put(r->last_writes, key, at) < 0)
                (void)hashmap_remove(r->last_writes, key);
        (void)pthread_mutex_unlock(&r->own_lock);
}

/* The delay of a delete-start's key: what is left of the window after the last write (a wall
 * clock stepped back waits no longer than the window). */
static usec_t batch_delay(struct tm_reconciler *r, const char *key)
{
        usec_t now = clock_now(r->clock), last, delay = 0;
        const usec_t *v;

        if (r->delete_batch_window == USEC_INFINITY)
                return 0;
        (void)pthread_mutex_lock(&r->own_lock);
        v = hashmap_get(r->last_writes, key);
        if (v) {
                last = *v;
                if (now < last + r->delete_batch_window)
                        delay = MIN(last + r->delete_batch_window - now, r->delete_batch_window);
                else
                        (void)hashmap_remove(r->last_writes, key);
        }
        (void)pthread_mutex_unlock(&r->own_lock);
        return delay;
}

/* Does models.json (data, may be NULL) possibly list name? A superset test: the quoted name
 * anywhere (names are DNS labels: no escapes), so a false "yes" costs only a pass. */
static bool models_json_may_list(const char *data, const char *name)
{
        char quoted[CACHE_KEY_MAX + 2];
        int n;

        if (!data)
                return false;
        n = snprintf(quoted, sizeof(quoted), "\"%s\"", name);
        return n < 0 || (size_t)n >= sizeof(quoted) || strstr(data, quoted) != NULL;
}

/* True when the removal of TrainedModel obj (borrowed, as last cached) from InferenceService
 * key can change nothing (see the file comment); drops its own-write entry then. */
static bool removal_changes_nothing(struct tm_reconciler *r, const char *key, const json_t *obj)
{
        const char *name = json_get_string_path(obj, "metadata", "name", NULL);
        AUTOFREE char *ns = NULL, *isvc = NULL;
        char cm_name[MODELCONFIG_NAME_MAX], cm_key[CACHE_KEY_MAX];
        json_auto_t *cached = NULL;
        const struct own_chain *own;
        bool listed;
        int n;

        if (!r->configmaps || !name || !tm_is_deleting(obj) ||
            cache_key_split(key, &ns, &isvc) < 0 || !ns ||
            modelconfig_name(isvc, cm_name, sizeof(cm_name)) < 0)
                return false;
        n = snprintf(cm_key, sizeof(cm_key), "%s/%s", ns, cm_name);
        if (n < 0 || (size_t)n >= sizeof(cm_key))
                return false;
        cached = cache_get(r->configmaps, cm_key);
        if (!cached)
                return false;
        listed = models_json_may_list(json_get_string_path(cached, "data", "models.json", NULL),
                                      name);
        (void)pthread_mutex_lock(&r->own_lock);
        own = hashmap_get(r->own_configmaps, cm_key);
        listed = listed || models_json_may_list(json_get_string_path(own ? own->obj : NULL, "data",
                                                                     "models.json", NULL),
                                                name);
        if (!listed)
                (void)hashmap_remove(hashmap_get(r->own_writes, key), name);
        (void)pthread_mutex_unlock(&r->own_lock);
        return !listed;
}

enum tm_change { TM_CHANGE_ADD, TM_CHANGE_UPDATE, TM_CHANGE_DELETE_START, TM_CHANGE_REMOVED };

static bool keys_have(const json_t *keys, const char *key)
{
        json_t *k;
        size_t i;

        json_array_foreach(keys, i, k)
                if (streq(json_string_value(k), key))
                        return true;
        return false;
}

/* Enqueues obj's InferenceService keys (but those in skip, may be NULL) for a change. */
static void enqueue_tm(struct tm_reconciler *r, const json_t *obj, const json_t *skip,
                       enum tm_change change)
{
        json_auto_t *keys = NULL;
        json_t *k;
        size_t i;
        int e;

        e = tm_index_isvc(r, obj, &keys);
        json_array_foreach(keys, i, k) {
                const char *key = json_string_value(k);
                usec_t delay = 0;

                if (e < 0)
                        break;
                if (skip && keys_have(skip, key))
                        continue;
                if (change == TM_CHANGE_REMOVED && removal_changes_nothing(r, key, obj)) {
                        atomic_fetch_add(&r->passes_skipped, 1);
                        continue;
                }
                if (change == TM_CHANGE_DELETE_START ||
                    (change == TM_CHANGE_REMOVED && r->no_finalizer && !tm_is_deleting(obj)))
                        delay = batch_delay(r, key);
                e = delay ? workqueue_add_after(r->isvc_queue, key, delay)
                          : workqueue_add(r->isvc_queue, key);
        }
        if (e < 0)
                (void)log_warn_errno(e, "Failed to enqueue a reconcile key, ignoring");
}

static void tm_on_add(void *userdata, json_t *obj)
{
        enqueue_tm(userdata, obj, NULL, TM_CHANGE_ADD);
}

/* The new object's keys by the kind of change; the old one's only where it moved away (W7). */
static void tm_on_update(void *userdata, json_t *old_obj, json_t *new_obj)
{
        json_auto_t *keys = NULL;

        (void)tm_index_isvc(userdata, new_obj, &keys);
        enqueue_tm(userdata, new_obj, NULL,
                   tm_is_deleting(new_obj) && !tm_is_deleting(old_obj) ? TM_CHANGE_DELETE_START
                                                                       : TM_CHANGE_UPDATE);
        enqueue_tm(userdata, old_obj, keys, TM_CHANGE_UPDATE);
}

static void tm_on_delete(void *userdata, json_t *obj)
{
        enqueue_tm(userdata, obj, NULL, TM_CHANGE_REMOVED);
}

/* An orphan's own key: a TrainedModel with neither spec.inferenceService nor the label. */
static int map_orphan(void *userdata, const json_t *obj, json_t **ret_keys)
{
        json_auto_t *parents = NULL;
        char key[CACHE_KEY_MAX];
        int k;

        *ret_keys = NULL;
        k = tm_index_isvc(userdata, obj, &parents);
        if (k < 0 || parents)
                return k;
        if (cache_key_of(obj, key, sizeof(key)) < 0)
                return 0;
        *ret_keys = json_pack("[s]", key);
        return *ret_keys ? 0 : -ENOMEM;
}

int tm_reconciler_watch(struct tm_reconciler *r, struct informer *trainedmodels,
                        struct informer *inferenceservices, struct controller *isvc_controller,
                        struct controller *orphan_controller)
{
        struct informer_handler h = { .on_add = tm_on_add,
                                      .on_update = tm_on_update,
                                      .on_delete = tm_on_delete,
                                      .userdata = r };
        int k;

        r->isvc_queue = controller_queue(isvc_controller);
        k = informer_add_handler(trainedmodels, &h);
        if (k >= 0)
                k = informer_enqueue_self(inferenceservices, controller_queue(isvc_controller));
        if (k >= 0 && orphan_controller)
                k = informer_enqueue_mapped(trainedmodels, controller_queue(orphan_controller),
                                            map_orphan, r);
        return k;
}

/* Is cm (borrowed) a version that one of our own writes produced (the echo of a write)? The
 * chain's first resourceVersion may be the one a write was planned from: not counted. */
static bool own_configmap_echo(struct tm_reconciler *r, const json_t *cm)
{
        const char *rv = tm_obj_rv(cm);
        char key[CACHE_KEY_MAX];
        bool ours;

        if (!rv || cache_key_of(cm, key, sizeof(key)) < 0)
                return false;
        (void)pthread_mutex_lock(&r->own_lock);
        ours = own_chain_has(hashmap_get(r->own_configmaps, key), rv, 1, false);
        (void)pthread_mutex_unlock(&r->own_lock);
        return ours;
}

/* A report's heartbeat refresh (every 10 s per replica by default) reconciles nothing, unless
 * the report was stale: then the replica is back. Staleness itself is noticed by the requeue
 * of the reconcile (apply_replica_status). */
static bool configmap_update_matters(void *userdata, const json_t *old_obj, const json_t *new_obj)
{
        struct tm_reconciler *r = userdata;

        if (own_configmap_echo(r, new_obj) || tm_own_assignment_echo(r, new_obj)) {
                atomic_fetch_add(&r->passes_skipped, 1);
                return false;
        }
        return !replica_report_heartbeat_only(old_obj, new_obj) ||
               replica_report_stale(old_obj, clock_now(r->clock));
}

int tm_reconciler_watch_configmaps(struct tm_reconciler *r, struct informer *configmaps,
                                   struct controller *isvc_controller)
{
        return informer_enqueue_mapped_if(configmaps, controller_queue(isvc_controller),
                                          replicas_map_configmap, configmap_update_matters, r);
}
