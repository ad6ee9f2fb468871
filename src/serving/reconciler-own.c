/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The TrainedModel controller's own writes (issue #12: no wasted requests): the answers of its
 * TrainedModel and ConfigMap writes that the informers have not delivered yet, overlaid on what
 * the caches hold. Declared in serving/reconciler-internal.h.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "json/json-util.h"
#include "kube/cache.h"
#include "serving/reconciler-internal.h"

/*
 * Own ConfigMap writes. The ConfigMap is read from the informer cache (issue #12: reads come
 * from the caches), but the informer delivers our own models.json patch some time after its
 * answer: a reconcile in between would plan from the older ConfigMap and be answered 409. So the
 * answer of each write is kept with the chain of resourceVersions this controller wrote from and
 * to ("rvs": the one planned from first, then each written one; the last is obj's). While the
 * cache holds one of the older ones, the reconcile plans from the answer; once it holds the
 * newest, the entry goes and the cache is the truth again; anything else (another writer's
 * version, or one older than a chain that began from a live GET) or nothing is read live once.
 * A 409 still re-reads fresh. One key is never reconciled by two workers at
 * once; own_lock guards the map.
 */
#define OWN_CONFIGMAP_CHAIN_MAX 16

int tm_configmap_key(const char *ns, const char *name, char *buf, size_t len)
{
        int n = snprintf(buf, len, "%s/%s", ns, name);

        return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The ConfigMap to plan from, given the cache's (borrowed, may be NULL). Returns: owned; NULL:
 * read it live (not cached, or the cache holds a version outside our chain: it may be older
 * than what we wrote, e.g. when the chain began from a live GET after a 409, and a plan from it
 * could release a finalizer of an entry that is still listed). */
json_t *tm_own_configmap_overlay(struct tm_reconciler *r, const char *key, json_t *cached)
{
        const char *rv = tm_obj_rv(cached);
        json_t *e, *rvs, *answer = NULL;
        bool caught_up = false;
        size_t n;

        (void)pthread_mutex_lock(&r->own_lock);
        e = json_object_get(r->own_configmaps, key);
        if (!e) {
                (void)pthread_mutex_unlock(&r->own_lock);
                return json_incref(cached);
        }
        rvs = json_object_get(e, "rvs");
        n = json_array_size(rvs);
        for (size_t i = 0; rv && i + 1 < n; i++)
                if (streq(rv, json_string_value(json_array_get(rvs, i))))
                        answer = json_incref(json_object_get(e, "obj"));
        caught_up = rv && n > 0 && streq(rv, json_string_value(json_array_get(rvs, n - 1)));
        if (!answer)
                (void)json_object_del(r->own_configmaps, key);
        (void)pthread_mutex_unlock(&r->own_lock);
        if (answer)
                return answer;
        return caught_up ? json_incref(cached) : NULL;
}

/* Records the answer (borrowed) of a ConfigMap write planned from from (borrowed, NULL: a
 * create). */
int tm_own_configmap_put(struct tm_reconciler *r, const char *key, const json_t *from,
                         const json_t *answer)
{
        const char *base = tm_obj_rv(from), *rv = tm_obj_rv(answer);
        json_t *e, *rvs;
        int k = -ENOMEM;

        if (!rv)
                return 0;
        (void)pthread_mutex_lock(&r->own_lock);
        e = json_object_get(r->own_configmaps, key);
        rvs = json_object_get(e, "rvs");
        /* a chain continues only from its own newest write */
        if (!e || !base ||
            !streq(base, json_string_value(json_array_get(rvs, json_array_size(rvs) - 1))) ||
            json_array_size(rvs) >= OWN_CONFIGMAP_CHAIN_MAX) {
                e = base ? json_pack("{s:[s],s:n}", "rvs", base, "obj")
                         : json_pack("{s:[],s:n}", "rvs", "obj");
                if (e && json_object_set_new(r->own_configmaps, key, e) < 0)
                        e = NULL;
                rvs = json_object_get(e, "rvs");
        }
        if (e && json_array_append_new(rvs, json_string(rv)) >= 0 &&
            json_object_set(e, "obj", (json_t *)answer) >= 0)
                k = 0;
        if (k < 0)
                (void)json_object_del(r->own_configmaps, key);
        (void)pthread_mutex_unlock(&r->own_lock);
        return k;
}

/*
 * Own writes (issue #12: no wasted requests). The informer delivers the answer of a write some
 * time after it: a reconcile in between would plan from the object as it was and send the same
 * status or finalizer patch again, or remove a finalizer of an object that is gone (404). So the
 * answer of every TrainedModel write is kept, keyed by the InferenceService and the TrainedModel,
 * with the resourceVersion the cache had when it was written ("rv"; obj null: the object is gone).
 * While the cache still holds exactly that resourceVersion, the next reconcile plans from the
 * answer instead (or leaves a gone object out); as soon as the cache holds anything else, the
 * entry is dropped and the cache is the truth again. Entries live only while their
 * InferenceService has TrainedModels in the cache that match them, so memory stays bounded by the
 * cache. One key is never reconciled by two workers at once; the lock guards the map itself.
 */
/* Replaces (or removes) the entries of tms the cache has not caught up with; drops the rest. */
int tm_own_writes_overlay(struct tm_reconciler *r, const char *key, json_t *tms)
{
        json_auto_t *kept = json_object();
        const char *name;
        json_t *mine, *e, *answer;
        void *tmp;
        int k = 0;

        if (!kept)
                return -ENOMEM;
        /* under the lock throughout: finalizer workers record their answers meanwhile */
        (void)pthread_mutex_lock(&r->own_lock);
        mine = json_object_get(r->own_writes, key);
        for (size_t i = json_array_size(tms); mine && k == 0 && i-- > 0;) {
                const json_t *o = json_array_get(tms, i);
                const char *rv = tm_obj_rv(o);

                name = json_get_string_path(o, "metadata", "name", NULL);
                e = name ? json_object_get(mine, name) : NULL;
                if (!e || !rv || !streq(rv, json_string_value(json_object_get(e, "rv"))))
                        continue;
                answer = json_object_get(e, "obj");
                if (json_object_set_new(kept, name, json_true()) < 0 ||
                    (json_is_null(answer) ? json_array_remove(tms, i) < 0
                                          : json_array_set(tms, i, answer) < 0))
                        k = -ENOMEM;
        }
        if (mine && k == 0) {
                json_object_foreach_safe(mine, tmp, name, e)
                        if (!json_object_get(kept, name))
                                (void)json_object_del(mine, name);
                if (json_object_size(mine) == 0)
                        (void)json_object_del(r->own_writes, key);
        }
        (void)pthread_mutex_unlock(&r->own_lock);
        return k;
}

/* Records the answer (borrowed; NULL: gone) of a write to TrainedModel cached, as planned from
 * the cache's object or from an earlier answer (whose entry keeps the cache's rv). */
int tm_own_writes_put(struct tm_reconciler *r, const char *key, const json_t *cached,
                      const json_t *answer)
{
        const char *name = json_get_string_path(cached, "metadata", "name", NULL);
        const char *rv = tm_obj_rv(cached);
        json_t *mine, *e;
        int k = -ENOMEM;

        if (!name || !rv)
                return 0;
        (void)pthread_mutex_lock(&r->own_lock);
        mine = json_object_get(r->own_writes, key);
        if (!mine && json_object_set_new(r->own_writes, key, mine = json_object()) < 0)
                mine = NULL;
        e = mine ? json_object_get(mine, name) : NULL;
        if (e) /* planned from an earlier answer: the cache still has the entry's rv */
                k = json_object_set(e, "obj", answer ? (json_t *)answer : json_null());
        else if (mine)
                k = json_object_set_new(mine, name,
                                        json_pack("{s:s,s:O}", "rv", rv, "obj",
                                                  answer ? (json_t *)answer : json_null()));
        (void)pthread_mutex_unlock(&r->own_lock);
        return k < 0 ? -ENOMEM : 0;
}

/* The answer recorded under InferenceService key for TrainedModel cached (borrowed), while the
 * cache still holds the version it was written from: true, *ret the answer (owned; NULL: gone). */
bool tm_own_writes_lookup(struct tm_reconciler *r, const char *key, const json_t *cached,
                          json_t **ret)
{
        const char *name = json_get_string_path(cached, "metadata", "name", NULL);
        const char *rv = tm_obj_rv(cached);
        json_t *e;
        bool found = false;

        *ret = NULL;
        if (!name || !rv)
                return false;
        (void)pthread_mutex_lock(&r->own_lock);
        e = json_object_get(json_object_get(r->own_writes, key), name);
        if (e && streq(rv, json_string_value(json_object_get(e, "rv")))) {
                json_t *obj = json_object_get(e, "obj");

                *ret = json_is_null(obj) ? NULL : json_incref(obj);
                found = true;
        }
        (void)pthread_mutex_unlock(&r->own_lock);
        return found;
}

/* The server's answer as the cache would store it (no managedFields). Returns: owned. */
json_t *tm_slim_answer(json_t *answer /* steals */)
{
        json_t *slim;

        if (!answer)
                return NULL;
        slim = cache_transform_strip_managed_fields(NULL, answer);
        json_decref(answer);
        return slim;
}
