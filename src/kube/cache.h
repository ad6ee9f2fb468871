/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The informer cache (client-go Indexer, kube-rs reflector Store): a thread-safe map from
 * "namespace/name" (or "name" for cluster-scoped objects) to immutable, reference-counted
 * objects (jansson json_t, whose refcount is atomic).
 *
 * Invariants:
 *  - stored objects are never mutated by anyone: readers get new references and must treat them
 *    as read-only; writers store new objects;
 *  - the optional transform runs before an object is stored (to drop fields nobody reads, e.g.
 *    metadata.managedFields), outside the lock;
 *  - indexes are kept consistent with the objects under the same lock: an index function maps an
 *    object to zero or more string values, and cache_by_index() finds objects by value;
 *  - cache_replace() swaps the whole content at once (relist): readers see the old content or
 *    the new content, never a mix; the cache is "synced" after its first replace.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"

/* namespace (<= 63) + '/' + name (<= 253) + NUL, rounded up. */
#define CACHE_KEY_MAX 320

struct cache;

/* Returns a new reference to the object to store (json_incref(obj) to keep it whole), or NULL
 * on OOM. obj is borrowed and must not be modified. */
typedef json_t *(*cache_transform_fn)(void *userdata, json_t *obj);

/* Stores in *ret_values a new reference to a JSON array of strings (the object's index values),
 * or NULL for none. Returns 0 or a negative errno. Must be pure: the same object always gives
 * the same values. */
typedef int (*cache_index_fn)(void *userdata, const json_t *obj, json_t **ret_values);

/* Called by cache_replace() for each difference: add (old NULL), update (both, different
 * resourceVersion), delete (new NULL). Objects borrowed for the call. */
typedef void (*cache_change_fn)(void *userdata, json_t *old_obj, json_t *new_obj);

struct cache_options {
        cache_transform_fn transform; /* may be NULL */
        void *transform_userdata;
        /*
         * Store each object serialized (compact JSON with sorted keys) instead of as a jansson
         * tree, which takes about 7 times the object's JSON size. Readers then get freshly
         * parsed copies (still new references, still read-only by contract); index values are
         * computed once when an object is stored. For caches of many objects.
         */
        bool compact;
};

/* opts may be NULL. Returns NULL only on OOM. */
struct cache *cache_new(const struct cache_options *opts);
struct cache *cache_free(struct cache *c);
DEFINE_CLEANUP_FUNC(struct cache *, cache_free)

/* Adds an index (name copied); existing objects are indexed at once. -EEXIST for a duplicate name. */
_warn_unused_result_ int cache_add_index(struct cache *c, const char *name, cache_index_fn fn,
                                         void *userdata);

/* Writes the key of obj ("ns/name" or "name") into buf. -EINVAL without metadata.name, -ENOBUFS. */
_warn_unused_result_ int cache_key_of(const json_t *obj, char *buf, size_t len);
/* Splits "ns/name" into newly allocated parts (*ret_ns is NULL for "name"). */
_warn_unused_result_ int cache_key_split(const char *key, char **ret_ns, char **ret_name);

/*
 * Inserts or replaces obj (borrowed; the transform's result is stored). ret_old (may be NULL)
 * receives a new reference to the previous object or NULL; ret_new (may be NULL) a new reference
 * to the stored object.
 */
_warn_unused_result_ int cache_upsert(struct cache *c, json_t *obj, json_t **ret_old,
                                      json_t **ret_new);
/* Removes key; ret_old (may be NULL) receives a new reference to the removed object.
 * -ENOENT when absent. */
_warn_unused_result_ int cache_delete(struct cache *c, const char *key, json_t **ret_old);

/*
 * Replaces the whole content with the objects of the array items (borrowed), transformed, in one
 * step, and marks the cache synced. Then, outside the lock, calls fn (may be NULL) for every
 * difference with the previous content: deletes for vanished keys, adds for new ones, updates
 * where metadata.resourceVersion differs.
 */
_warn_unused_result_ int cache_replace(struct cache *c, json_t *items, cache_change_fn fn,
                                       void *userdata);

/*
 * A batch builds the content of a cache_replace() piece by piece, so that a paged list never
 * holds every object as a parsed tree at once: each object is transformed (and, for a compact
 * cache, serialized) when added. Commit swaps it in whole, exactly as cache_replace() does.
 */
struct cache_batch;
_warn_unused_result_ int cache_batch_new(struct cache *c, struct cache_batch **ret);
/* Adds obj (borrowed). Objects without a usable metadata.name are skipped. -ENOMEM, or an
 * index function's error (the object is then not added). */
_warn_unused_result_ int cache_batch_add(struct cache_batch *b, json_t *obj);
/* Empties the batch (a list that has to start over). */
void cache_batch_clear(struct cache_batch *b);
/* As cache_replace() with the batch's objects; the batch is empty afterwards. */
_warn_unused_result_ int cache_batch_commit(struct cache_batch *b, cache_change_fn fn,
                                            void *userdata);
struct cache_batch *cache_batch_free(struct cache_batch *b);
DEFINE_CLEANUP_FUNC(struct cache_batch *, cache_batch_free)

/* Returns: new reference to the object stored under key, or NULL when absent. */
json_t *cache_get(struct cache *c, const char *key);
/* As cache_get() with namespace (NULL for cluster-scoped) and name. */
json_t *cache_get_by_name(struct cache *c, const char *ns, const char *name);

/* Stores in *ret a new JSON array holding references to every object (a snapshot). */
_warn_unused_result_ int cache_list(struct cache *c, json_t **ret);
/* Same, for the objects whose index @index has @value. -ENOENT for an unknown index. */
_warn_unused_result_ int cache_by_index(struct cache *c, const char *index, const char *value,
                                        json_t **ret);
/* Stores in *ret a new JSON array of the keys (strings) of every object. */
_warn_unused_result_ int cache_keys(struct cache *c, json_t **ret);

size_t cache_len(struct cache *c);
bool cache_has_synced(struct cache *c);

/* Ready-made pieces. */
/* Index function: the object's namespace. */
int cache_index_namespace(void *userdata, const json_t *obj, json_t **ret_values);
/*
 * Index function: the string at a dotted path given as userdata (a const char *, e.g.
 * "spec.inferenceService"); no value when absent or not a string.
 */
int cache_index_field(void *userdata, const json_t *obj, json_t **ret_values);
/* Transform: drops metadata.managedFields (shallow copies; shares the rest of the object). */
json_t *cache_transform_strip_managed_fields(void *userdata, json_t *obj);
