/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The TrainedModel controller's own writes (issue #12: no wasted requests): the answers of its
 * TrainedModel and ConfigMap writes that the informers have not delivered yet, overlaid on what
 * the caches hold. Declared in serving/reconciler-internal.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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
int tm_configmap_key(const char *ns, const char *name, char *buf, size_t len)
{
        int n = snprintf(buf, len, "%s/%s", ns, name);

        return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

struct own_chain *own_chain_new(const char *base, bool created)
{
        struct own_chain *c = calloc(1, sizeof(*c));

        if (c)
                c->created = created;
        if (c && base && own_chain_append(c, base) < 0) {
                own_chain_free(c);
                c = NULL;
        }
        return c;
}

void own_chain_free(void *chain)
{
        struct own_chain *c = chain;

        if (!c)
                return;
        for (size_t i = 0; i < c->n; i++)
                free(c->rvs[i]);
        json_decref(c->obj);
        free(c);
}

int own_chain_append(struct own_chain *c, const char *rv)
{
        if (c->n >= OWN_CHAIN_MAX)
                return -E2BIG;
        c->rvs[c->n] = strdup(rv);
        if (!c->rvs[c->n])
                return -ENOMEM;
        c->n++;
        return 0;
}

const char *own_chain_last(const struct own_chain *c)
{
        return c && c->n > 0 ? c->rvs[c->n - 1] : NULL;
}

bool own_chain_has(const struct own_chain *c, const char *rv, size_t from, bool drop_last)
{
        size_t end = c && c->n > 0 && drop_last ? c->n - 1 : (c ? c->n : 0);

        for (size_t i = from; rv && i < end; i++)
                if (streq(rv, c->rvs[i]))
                        return true;
        return false;
}

void own_write_free(void *w)
{
        struct own_write *o = w;

        if (!o)
                return;
        free(o->rv);
        json_decref(o->obj);
        free(o);
}

void own_inner_free(void *inner)
{
        hashmap_free(inner);
}

struct hashmap *own_inner(struct hashmap *outer, const char *key, bool create,
                          hashmap_free_fn free_fn)
{
        struct hashmap *inner = hashmap_get(outer, key);

        if (inner || !create)
                return inner;
        inner = hashmap_new(free_fn);
        if (!inner || hashmap_put(outer, key, inner) < 0)
                return NULL; /* a failed put freed it */
        return inner;
}

void own_isvc_status_free(void *s)
{
        struct own_isvc_status *o = s;

        if (!o)
                return;
        free(o->rv);
        free(o->value);
        free(o);
}

/* The ConfigMap to plan from, given the cache's (borrowed, may be NULL). Returns: owned; NULL:
 * read it live (not cached, or the cache holds a version outside our chain: it may be older
 * than what we wrote, e.g. when the chain began from a live GET after a 409, and a plan from it
 * could release a finalizer of an entry that is still listed). */
json_t *tm_own_configmap_overlay(struct tm_reconciler *r, const char *key, json_t *cached)
{
        const char *rv = tm_obj_rv(cached);
        struct own_chain *e;
        json_t *answer = NULL;
        bool caught_up = false;

        (void)pthread_mutex_lock(&r->own_lock);
        e = hashmap_get(r->own_configmaps, key);
        if (!e) {
                (void)pthread_mutex_unlock(&r->own_lock);
                return json_incref(cached);
        }
        if (own_chain_has(e, rv, 0, true))
                answer = json_incref(e->obj);
        caught_up = rv && own_chain_last(e) && streq(rv, own_chain_last(e));
        if (!answer)
                (void)hashmap_remove(r->own_configmaps, key);
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
        struct own_chain *e;
        int k = -ENOMEM;

        if (!rv)
                return 0;
        (void)pthread_mutex_lock(&r->own_lock);
        e = hashmap_get(r->own_configmaps, key);
        /* a chain continues only from its own newest write */
        if (!e || !base || !own_chain_last(e) || !streq(base, own_chain_last(e)) ||
            e->n >= OWN_CHAIN_MAX) {
                e = own_chain_new(base, false);
                if (e && hashmap_put(r->own_configmaps, key, e) < 0)
                        e = NULL; /* freed */
        }
        if (e && own_chain_append(e, rv) >= 0) {
                json_decref(e->obj);
                e->obj = json_incref((json_t *)answer);
                k = 0;
        }
        if (k < 0)
                (void)hashmap_remove(r->own_configmaps, key);
        (void)pthread_mutex_unlock(&r->own_lock);
        return k;
}

/*
 * Own writes (issue #12: no wasted requests). The informer delivers the answer of a write some
 * time after it: a reconcile in between would plan from the object as it was and send the same
 * status or finalizer patch again, or remove a finalizer of an object that is gone (404). So the
 * answer of every TrainedModel write is kept, keyed by the InferenceService and the TrainedModel,
 * with the resourceVersion the cache had when it was written (rv; obj NULL: the object is gone).
 * While the cache still holds exactly that resourceVersion, the next reconcile plans from the
 * answer instead (or leaves a gone object out); as soon as the cache holds anything else, the
 * entry is dropped and the cache is the truth again. Entries live only while their
 * InferenceService has TrainedModels in the cache that match them, so memory stays bounded by the
 * cache. One key is never reconciled by two workers at once; the lock guards the map itself.
 */
/* Replaces (or removes) the entries of tms the cache has not caught up with; drops the rest. */
int tm_own_writes_overlay(struct tm_reconciler *r, const char *key, json_t *tms)
{
        CLEANUP(hashmap_freep) struct hashmap *kept = hashmap_new(NULL);
        struct hashmap *mine;
        struct own_write *e;
        const char *name;
        int k = 0;

        if (!kept)
                return -ENOMEM;
        /* under the lock throughout: finalizer workers record their answers meanwhile */
        (void)pthread_mutex_lock(&r->own_lock);
        mine = hashmap_get(r->own_writes, key);
        for (size_t i = json_array_size(tms); mine && k == 0 && i-- > 0;) {
                const json_t *o = json_array_get(tms, i);
                const char *rv = tm_obj_rv(o);

                name = json_get_string_path(o, "metadata", "name", NULL);
                e = name ? hashmap_get(mine, name) : NULL;
                if (!e || !rv || !streq(rv, e->rv))
                        continue;
                if (hashmap_put(kept, name, r) < 0 ||
                    (!e->obj ? json_array_remove(tms, i) < 0 : json_array_set(tms, i, e->obj) < 0))
                        k = -ENOMEM;
        }
        if (mine && k == 0) {
                HASHMAP_FOREACH(mine, it, name, e)
                        if (!hashmap_get(kept, name))
                                (void)hashmap_remove(mine, name);
                if (hashmap_size(mine) == 0)
                        (void)hashmap_remove(r->own_writes, key);
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
        struct hashmap *mine;
        struct own_write *e;
        int k = -ENOMEM;

        if (!name || !rv)
                return 0;
        (void)pthread_mutex_lock(&r->own_lock);
        mine = own_inner(r->own_writes, key, true, own_write_free);
        e = mine ? hashmap_get(mine, name) : NULL;
        if (!e && mine) {
                e = calloc(1, sizeof(*e));
                if (e)
                        e->rv = strdup(rv);
                if (e && (!e->rv || hashmap_put(mine, name, e) < 0)) {
                        if (!e->rv)
                                own_write_free(e);
                        e = NULL; /* freed */
                }
        }
        /* an existing entry was planned from an earlier answer: the cache still has its rv */
        if (e) {
                json_decref(e->obj);
                e->obj = answer ? json_incref((json_t *)answer) : NULL;
                k = 0;
        }
        (void)pthread_mutex_unlock(&r->own_lock);
        return k;
}

/* The answer recorded under InferenceService key for TrainedModel cached (borrowed), while the
 * cache still holds the version it was written from: true, *ret the answer (owned; NULL: gone). */
bool tm_own_writes_lookup(struct tm_reconciler *r, const char *key, const json_t *cached,
                          json_t **ret)
{
        const char *name = json_get_string_path(cached, "metadata", "name", NULL);
        const char *rv = tm_obj_rv(cached);
        const struct own_write *e;
        bool found = false;

        *ret = NULL;
        if (!name || !rv)
                return false;
        (void)pthread_mutex_lock(&r->own_lock);
        e = hashmap_get(hashmap_get(r->own_writes, key), name);
        if (e && streq(rv, e->rv)) {
                *ret = json_incref(e->obj);
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
