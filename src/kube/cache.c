/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json-util.h"

struct cache_index {
        char *name; /* owned */
        cache_index_fn fn;
        void *userdata;
        json_t *map; /* owned; value -> object { key: true } */
};

/*
 * Stored values are the transformed objects, or for a compact cache JSON strings holding their
 * serialization (sorted keys, so equal objects serialize equally). load() turns a stored value
 * into what readers get.
 */
struct cache {
        pthread_rwlock_t lock;
        json_t *objects;             /* owned; key -> stored value */
        struct cache_index *indexes; /* owned */
        size_t n_indexes;
        cache_transform_fn transform;
        void *transform_userdata;
        bool compact;
        atomic_bool synced;
};

struct cache_batch {
        struct cache *c;  /* borrowed */
        json_t *objects;  /* owned; key -> stored value */
        json_t *values;   /* owned; key -> [index values of index 0, 1, ...] */
        size_t n_indexes; /* indexes known when the values were computed */
};

struct cache *cache_new(const struct cache_options *opts)
{
        struct cache *c = calloc(1, sizeof(*c));

        if (!c)
                return NULL;
        c->objects = json_object();
        if (!c->objects) {
                free(c);
                return NULL;
        }
        if (opts) {
                c->transform = opts->transform;
                c->transform_userdata = opts->transform_userdata;
                c->compact = opts->compact;
        }
        (void)pthread_rwlock_init(&c->lock, NULL);
        return c;
}

struct cache *cache_free(struct cache *c)
{
        if (!c)
                return NULL;
        for (size_t i = 0; i < c->n_indexes; i++) {
                free(c->indexes[i].name);
                json_decref(c->indexes[i].map);
        }
        free(c->indexes);
        json_decref(c->objects);
        (void)pthread_rwlock_destroy(&c->lock);
        free(c);
        return NULL;
}

int cache_key_of(const json_t *obj, char *buf, size_t len)
{
        const char *ns = json_get_string_path(obj, "metadata", "namespace", NULL);
        const char *name = json_get_string_path(obj, "metadata", "name", NULL);
        int n;

        if (!name || !*name)
                return -EINVAL;
        if (ns && *ns)
                n = snprintf(buf, len, "%s/%s", ns, name);
        else
                n = snprintf(buf, len, "%s", name);
        if (n < 0 || (size_t)n >= len)
                return -ENOBUFS;
        return 0;
}

int cache_key_split(const char *key, char **ret_ns, char **ret_name)
{
        const char *slash;
        char *ns = NULL, *name;

        if (!key || !*key || !ret_ns || !ret_name)
                return -EINVAL;
        slash = strchr(key, '/');
        if (slash) {
                if (slash == key || slash[1] == '\0' || strchr(slash + 1, '/'))
                        return -EINVAL;
                ns = strndup(key, (size_t)(slash - key));
                if (!ns)
                        return -ENOMEM;
                name = strdup(slash + 1);
        } else
                name = strdup(key);
        if (!name) {
                free(ns);
                return -ENOMEM;
        }
        *ret_ns = ns;
        *ret_name = name;
        return 0;
}

static json_t *transform(struct cache *c, json_t *obj)
{
        if (!c->transform)
                return json_incref(obj);
        return c->transform(c->transform_userdata, obj);
}

/* The value to store for obj, and (ret_plain, may be NULL) a new reference to the transformed
 * object itself. NULL on OOM. */
static json_t *store_new(struct cache *c, json_t *obj, json_t **ret_plain)
{
        json_auto_t *plain = transform(c, obj);
        json_t *stored;
        char *text;
        size_t n;

        if (!plain)
                return NULL;
        if (!c->compact) {
                if (ret_plain)
                        *ret_plain = json_incref(plain);
                return TAKE_PTR(plain);
        }
        n = json_dumpb(plain, NULL, 0, JSON_COMPACT | JSON_SORT_KEYS);
        if (n == 0)
                return NULL;
        text = malloc(n);
        if (!text)
                return NULL;
        if (json_dumpb(plain, text, n, JSON_COMPACT | JSON_SORT_KEYS) != n) {
                free(text);
                return NULL;
        }
        stored = json_stringn_nocheck(text, n);
        free(text);
        if (stored && ret_plain)
                *ret_plain = TAKE_PTR(plain);
        return stored;
}

/* A new reference to what readers get for a stored value (NULL for NULL or on OOM). */
static json_t *load(const struct cache *c, json_t *stored)
{
        if (!stored)
                return NULL;
        if (!c->compact)
                return json_incref(stored);
        return json_loadb(json_string_value(stored), json_string_length(stored), JSON_ALLOW_NUL,
                          NULL);
}

/* The index values of a stored value (plain: the loaded object if the caller has it). */
static int index_values(const struct cache *c, const struct cache_index *idx, json_t *stored,
                        const json_t *plain, json_t **ret)
{
        json_auto_t *loaded = NULL;

        if (!plain) {
                loaded = load(c, stored);
                if (!loaded)
                        return -ENOMEM;
                plain = loaded;
        }
        *ret = NULL;
        return idx->fn(idx->userdata, plain, ret);
}

/* Adds (add=true) or removes key under each of values. Called write-locked. */
static int index_apply(struct cache_index *idx, const char *key, const json_t *values, bool add)
{
        size_t i;
        json_t *v;

        if (!json_is_array(values))
                return 0;
        json_array_foreach(values, i, v) {
                const char *s = json_string_value(v);
                json_t *set;

                if (!s)
                        continue;
                set = json_object_get(idx->map, s);
                if (add) {
                        if (!set) {
                                set = json_object();
                                if (!set || json_object_set_new_nocheck(idx->map, s, set) < 0)
                                        return -ENOMEM;
                        }
                        if (json_object_set_new_nocheck(set, key, json_true()) < 0)
                                return -ENOMEM;
                } else if (set) {
                        (void)json_object_del(set, key);
                        if (json_object_size(set) == 0)
                                (void)json_object_del(idx->map, s);
                }
        }
        return 0;
}

static int indexes_update(struct cache *c, const char *key, json_t *stored, const json_t *plain,
                          bool add)
{
        int r;

        for (size_t i = 0; i < c->n_indexes; i++) {
                json_auto_t *values = NULL;

                r = index_values(c, &c->indexes[i], stored, plain, &values);
                if (r < 0)
                        return r;
                r = index_apply(&c->indexes[i], key, values, add);
                if (r < 0)
                        return r;
        }
        return 0;
}

int cache_add_index(struct cache *c, const char *name, cache_index_fn fn, void *userdata)
{
        struct cache_index *n, idx = { .fn = fn, .userdata = userdata };
        const char *key;
        json_t *obj;
        int r = 0;

        if (!c || !name || !fn)
                return -EINVAL;
        idx.name = strdup(name);
        idx.map = json_object();
        if (!idx.name || !idx.map) {
                free(idx.name);
                json_decref(idx.map);
                return -ENOMEM;
        }
        (void)pthread_rwlock_wrlock(&c->lock);
        for (size_t i = 0; i < c->n_indexes; i++)
                if (streq(c->indexes[i].name, name)) {
                        r = -EEXIST;
                        goto out_unlock;
                }
        json_object_foreach(c->objects, key, obj) {
                json_t *values = NULL;

                r = index_values(c, &idx, obj, NULL, &values);
                if (r >= 0)
                        r = index_apply(&idx, key, values, true);
                json_decref(values);
                if (r < 0)
                        goto out_unlock;
        }
        n = reallocarray(c->indexes, c->n_indexes + 1, sizeof(*n));
        if (!n) {
                r = -ENOMEM;
                goto out_unlock;
        }
        c->indexes = n;
        n[c->n_indexes++] = idx;
        idx = (struct cache_index){ 0 };
out_unlock:
        (void)pthread_rwlock_unlock(&c->lock);
        free(idx.name);
        json_decref(idx.map);
        return r;
}

int cache_upsert(struct cache *c, json_t *obj, json_t **ret_old, json_t **ret_new)
{
        char key[CACHE_KEY_MAX];
        json_auto_t *stored = NULL, *plain = NULL, *old = NULL;
        int r;

        if (!c || !json_is_object(obj))
                return -EINVAL;
        r = cache_key_of(obj, key, sizeof(key));
        if (r < 0)
                return r;
        stored = store_new(c, obj, &plain);
        if (!stored)
                return -ENOMEM;

        (void)pthread_rwlock_wrlock(&c->lock);
        old = json_incref(json_object_get(c->objects, key));
        if (old)
                (void)indexes_update(c, key, old, NULL, false);
        r = json_object_set_nocheck(c->objects, key, stored);
        if (r < 0) {
                /* Keep the old object (and its index entries) on OOM. */
                if (old)
                        (void)indexes_update(c, key, old, NULL, true);
                (void)pthread_rwlock_unlock(&c->lock);
                return -ENOMEM;
        }
        r = indexes_update(c, key, stored, plain, true);
        (void)pthread_rwlock_unlock(&c->lock);
        if (r < 0)
                return r;
        if (ret_old)
                *ret_old = load(c, old);
        if (ret_new)
                *ret_new = TAKE_PTR(plain);
        return 0;
}

int cache_delete(struct cache *c, const char *key, json_t **ret_old)
{
        json_auto_t *old = NULL;

        if (!c || !key)
                return -EINVAL;
        (void)pthread_rwlock_wrlock(&c->lock);
        old = json_incref(json_object_get(c->objects, key));
        if (old) {
                (void)indexes_update(c, key, old, NULL, false);
                (void)json_object_del(c->objects, key);
        }
        (void)pthread_rwlock_unlock(&c->lock);
        if (!old)
                return -ENOENT;
        if (ret_old)
                *ret_old = load(c, old);
        return 0;
}

/* Whether two stored values are the same version of an object. */
static bool same_version(const struct cache *c, json_t *a, json_t *b)
{
        json_auto_t *la = NULL, *lb = NULL;
        const char *ra, *rb;

        if (c->compact && json_string_length(a) == json_string_length(b) &&
            memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0)
                return true;
        la = load(c, a);
        lb = load(c, b);
        if (!la || !lb)
                return false;
        ra = json_get_string_path(la, "metadata", "resourceVersion", NULL);
        rb = json_get_string_path(lb, "metadata", "resourceVersion", NULL);
        if (!ra || !rb)
                return json_equal(la, lb);
        return streq(ra, rb);
}

int cache_batch_new(struct cache *c, struct cache_batch **ret)
{
        struct cache_batch *b;

        if (!c || !ret)
                return -EINVAL;
        b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        b->c = c;
        b->objects = json_object();
        b->values = json_object();
        if (!b->objects || !b->values) {
                cache_batch_free(b);
                return -ENOMEM;
        }
        (void)pthread_rwlock_rdlock(&c->lock);
        b->n_indexes = c->n_indexes;
        (void)pthread_rwlock_unlock(&c->lock);
        *ret = b;
        return 0;
}

struct cache_batch *cache_batch_free(struct cache_batch *b)
{
        if (!b)
                return NULL;
        json_decref(b->objects);
        json_decref(b->values);
        free(b);
        return NULL;
}

void cache_batch_clear(struct cache_batch *b)
{
        json_object_clear(b->objects);
        json_object_clear(b->values);
}

int cache_batch_add(struct cache_batch *b, json_t *obj)
{
        struct cache *c = b->c;
        char k[CACHE_KEY_MAX];
        json_auto_t *plain = NULL, *all = NULL, *stored = NULL;
        int r;

        if (!json_is_object(obj) || cache_key_of(obj, k, sizeof(k)) < 0)
                return 0; /* not an object we can key: the API server never sends one */
        stored = store_new(c, obj, &plain);
        if (!stored)
                return -ENOMEM;

        /* index values now, while the parsed object is at hand (the indexes are fixed once
         * informers run; a commit after a new index recomputes them) */
        all = json_array();
        if (!all)
                return -ENOMEM;
        (void)pthread_rwlock_rdlock(&c->lock);
        for (size_t j = 0; j < b->n_indexes && j < c->n_indexes; j++) {
                json_t *values = NULL;

                r = c->indexes[j].fn(c->indexes[j].userdata, plain, &values);
                if (r < 0) {
                        (void)pthread_rwlock_unlock(&c->lock);
                        return r;
                }
                if (json_array_append_new(all, values ? values : json_null()) < 0) {
                        (void)pthread_rwlock_unlock(&c->lock);
                        return -ENOMEM;
                }
        }
        (void)pthread_rwlock_unlock(&c->lock);
        /* the object goes in only with its index values: a refused object leaves no trace */
        if (json_object_set_new_nocheck(b->values, k, TAKE_PTR(all)) < 0)
                return -ENOMEM;
        if (json_object_set_new_nocheck(b->objects, k, TAKE_PTR(stored)) < 0) {
                (void)json_object_del(b->values, k);
                return -ENOMEM;
        }
        return 0;
}

/* Indexes being built for a replace (owned maps); released unless swapped in. */
struct new_indexes {
        struct cache_index *idx;
        size_t n; /* entries of idx whose map is owned here */
};

static void new_indexes_release(struct new_indexes *ni)
{
        for (size_t j = 0; j < ni->n; j++)
                json_decref(ni->idx[j].map);
        free(ni->idx);
}

/* The indexes of the batch's objects: values computed when added, or now. */
static int build_indexes(struct cache *c, struct cache_batch *b, struct new_indexes *ret)
{
        const char *key;
        json_t *obj;
        int r;

        if (c->n_indexes == 0)
                return 0;
        ret->idx = calloc(c->n_indexes, sizeof(*ret->idx));
        if (!ret->idx)
                return -ENOMEM;
        for (size_t j = 0; j < c->n_indexes; j++) {
                ret->idx[j] = c->indexes[j];
                ret->idx[j].map = json_object();
                ret->n = j + 1;
                if (!ret->idx[j].map)
                        return -ENOMEM;
                json_object_foreach(b->objects, key, obj) {
                        json_t *pre = j < b->n_indexes
                                              ? json_array_get(json_object_get(b->values, key), j)
                                              : NULL;
                        json_auto_t *values = NULL;

                        if (pre)
                                values = json_incref(pre);
                        else {
                                r = index_values(c, &c->indexes[j], obj, NULL, &values);
                                if (r < 0)
                                        return r;
                        }
                        r = index_apply(&ret->idx[j], key, values, true);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* The diff as [old, new] pairs: deletes first, then adds and updates. */
static int record_diff(struct cache *c, struct cache_batch *b, json_t *changes)
{
        const char *key;
        json_t *obj, *pair;

        json_object_foreach(c->objects, key, obj)
                if (!json_object_get(b->objects, key)) {
                        pair = json_pack("[OO]", obj, json_null());
                        if (!pair || json_array_append_new(changes, pair) < 0)
                                return -ENOMEM;
                }
        json_object_foreach(b->objects, key, obj) {
                json_t *prev = json_object_get(c->objects, key);

                if (prev && same_version(c, prev, obj))
                        continue;
                pair = json_pack("[OO]", prev ? prev : json_null(), obj);
                if (!pair || json_array_append_new(changes, pair) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Builds the new indexes, records the diff in changes and swaps. Called write-locked; on error
 * nothing changed. Takes the batch's objects on success. */
static int replace_locked(struct cache *c, struct cache_batch *b, json_t *changes, json_t **ret_old)
{
        CLEANUP(new_indexes_release) struct new_indexes ni = { 0 };
        int r;

        r = build_indexes(c, b, &ni);
        if (r < 0)
                return r;
        r = record_diff(c, b, changes);
        if (r < 0)
                return r;

        /* Swap: nothing below can fail. */
        *ret_old = c->objects;
        c->objects = b->objects;
        b->objects = json_object();
        json_object_clear(b->values);
        for (size_t j = 0; j < c->n_indexes; j++) {
                json_decref(c->indexes[j].map);
                c->indexes[j].map = ni.idx[j].map;
                ni.idx[j].map = NULL;
        }
        atomic_store(&c->synced, true);
        return 0;
}

int cache_batch_commit(struct cache_batch *b, cache_change_fn fn, void *userdata)
{
        struct cache *c = b->c;
        json_auto_t *changes = json_array(), *old_objects = NULL;
        json_t *pair;
        size_t i;
        int r;

        if (!changes)
                return -ENOMEM;
        (void)pthread_rwlock_wrlock(&c->lock);
        r = replace_locked(c, b, changes, &old_objects);
        (void)pthread_rwlock_unlock(&c->lock);
        if (!b->objects)
                return -ENOMEM; /* the swap happened; only the batch's fresh map failed */
        if (r < 0 || !fn)
                return r;
        json_array_foreach(changes, i, pair) {
                json_t *so = json_array_get(pair, 0), *sn = json_array_get(pair, 1);
                json_auto_t *o = json_is_null(so) ? NULL : load(c, so);
                json_auto_t *n = json_is_null(sn) ? NULL : load(c, sn);

                fn(userdata, o, n);
        }
        return 0;
}

int cache_replace(struct cache *c, json_t *items, cache_change_fn fn, void *userdata)
{
        CLEANUP(cache_batch_freep) struct cache_batch *b = NULL;
        json_t *obj;
        size_t i;
        int r;

        if (!c || !json_is_array(items))
                return -EINVAL;
        r = cache_batch_new(c, &b);
        if (r < 0)
                return r;
        json_array_foreach(items, i, obj) {
                r = cache_batch_add(b, obj);
                if (r < 0)
                        return r;
        }
        return cache_batch_commit(b, fn, userdata);
}

json_t *cache_get(struct cache *c, const char *key)
{
        json_auto_t *stored = NULL;

        if (!c || !key)
                return NULL;
        (void)pthread_rwlock_rdlock(&c->lock);
        stored = json_incref(json_object_get(c->objects, key));
        (void)pthread_rwlock_unlock(&c->lock);
        return load(c, stored);
}

json_t *cache_get_by_name(struct cache *c, const char *ns, const char *name)
{
        char key[CACHE_KEY_MAX];
        int n;

        if (!name)
                return NULL;
        if (ns && *ns)
                n = snprintf(key, sizeof(key), "%s/%s", ns, name);
        else
                n = snprintf(key, sizeof(key), "%s", name);
        if (n < 0 || (size_t)n >= sizeof(key))
                return NULL;
        return cache_get(c, key);
}

/* Loads an array of stored values (taken under the lock) into an array of objects, in place. */
static int load_all(const struct cache *c, json_t *arr)
{
        size_t i;
        json_t *v;

        if (!c->compact)
                return 0;
        json_array_foreach(arr, i, v) {
                json_t *obj = load(c, v);
                if (!obj || json_array_set_new(arr, i, obj) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int snapshot(struct cache *c, bool want_keys, json_t **ret)
{
        json_auto_t *arr = json_array();
        const char *key;
        json_t *obj;
        int r = 0;

        if (!arr)
                return -ENOMEM;
        (void)pthread_rwlock_rdlock(&c->lock);
        json_object_foreach(c->objects, key, obj) {
                if (json_array_append_new(arr, want_keys ? json_string(key) : json_incref(obj)) <
                    0) {
                        r = -ENOMEM;
                        break;
                }
        }
        (void)pthread_rwlock_unlock(&c->lock);
        if (r < 0)
                return r;
        if (!want_keys) {
                r = load_all(c, arr);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(arr);
        return 0;
}

int cache_list(struct cache *c, json_t **ret)
{
        if (!c || !ret)
                return -EINVAL;
        return snapshot(c, false, ret);
}

int cache_keys(struct cache *c, json_t **ret)
{
        if (!c || !ret)
                return -EINVAL;
        return snapshot(c, true, ret);
}

int cache_by_index(struct cache *c, const char *index, const char *value, json_t **ret)
{
        json_auto_t *arr = json_array();
        json_t *set = NULL, *unused;
        const char *key;
        bool found = false;
        int r = 0;

        if (!c || !index || !value || !ret)
                return -EINVAL;
        if (!arr)
                return -ENOMEM;
        (void)pthread_rwlock_rdlock(&c->lock);
        for (size_t i = 0; i < c->n_indexes; i++)
                if (streq(c->indexes[i].name, index)) {
                        found = true;
                        set = json_object_get(c->indexes[i].map, value);
                        break;
                }
        if (set)
                json_object_foreach(set, key, unused) {
                        json_t *obj = json_object_get(c->objects, key);
                        if (obj && json_array_append(arr, obj) < 0) {
                                r = -ENOMEM;
                                break;
                        }
                }
        (void)pthread_rwlock_unlock(&c->lock);
        if (!found)
                return -ENOENT;
        if (r < 0)
                return r;
        r = load_all(c, arr);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(arr);
        return 0;
}

size_t cache_len(struct cache *c)
{
        size_t n;

        (void)pthread_rwlock_rdlock(&c->lock);
        n = json_object_size(c->objects);
        (void)pthread_rwlock_unlock(&c->lock);
        return n;
}

bool cache_has_synced(struct cache *c)
{
        return c && atomic_load(&c->synced);
}

int cache_index_namespace(void *userdata, const json_t *obj, json_t **ret_values)
{
        const char *ns = json_get_string_path(obj, "metadata", "namespace", NULL);

        (void)userdata;
        if (!ns) {
                *ret_values = NULL;
                return 0;
        }
        *ret_values = json_pack("[s]", ns);
        return *ret_values ? 0 : -ENOMEM;
}

int cache_index_field(void *userdata, const json_t *obj, json_t **ret_values)
{
        const char *path = userdata;
        const json_t *cur = obj;
        char part[128];

        while (path && *path && cur) {
                const char *dot = strchr(path, '.');
                size_t n = dot ? (size_t)(dot - path) : strlen(path);

                if (n == 0 || n >= sizeof(part))
                        return -EINVAL;
                memcpy(part, path, n);
                part[n] = '\0';
                cur = json_object_get(cur, part);
                path = dot ? dot + 1 : NULL;
        }
        if (!json_is_string(cur)) {
                *ret_values = NULL;
                return 0;
        }
        *ret_values = json_pack("[s]", json_string_value(cur));
        return *ret_values ? 0 : -ENOMEM;
}

json_t *cache_transform_strip_managed_fields(void *userdata, json_t *obj)
{
        json_t *meta = json_object_get(obj, "metadata");
        json_auto_t *copy = NULL, *meta_copy = NULL;

        (void)userdata;
        if (!json_object_get(meta, "managedFields"))
                return json_incref(obj);
        copy = json_copy(obj);
        meta_copy = json_copy(meta);
        if (!copy || !meta_copy)
                return NULL;
        (void)json_object_del(meta_copy, "managedFields");
        if (json_object_set(copy, "metadata", meta_copy) < 0)
                return NULL;
        return TAKE_PTR(copy);
}
