/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * A hash map from strings to owned values (issue 28: the reconciler's state, which lived in
 * json_t objects used as maps). Open addressing with linear probing over a power-of-two table;
 * keys are copied; each value belongs to the map and is freed with the map's free callback when
 * it is replaced, removed, or the map is freed. The hash is SipHash-1-3 keyed per map from
 * getrandom(2), so keys an outsider chooses (object names) cannot be made to collide.
 *
 * Not thread-safe: the caller's lock guards a map. Removal during iteration is allowed (the
 * current entry or any other); insertion during iteration is not (it may grow the table).
 */

#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"

/* Frees a value (may be NULL: values are never NULL when the map frees them). */
typedef void (*hashmap_free_fn)(void *value);

struct hashmap;

/* A new, empty map; @free_value may be NULL (values not freed). Returns: owned; NULL on OOM. */
struct hashmap *hashmap_new(hashmap_free_fn free_value);
/* Frees every value and the map. Returns NULL. */
struct hashmap *hashmap_free(struct hashmap *m);
DEFINE_CLEANUP_FUNC(struct hashmap *, hashmap_free)

/*
 * Sets @key (copied) to @value (non-NULL; the map takes ownership, also on failure: it is freed
 * then). A value already under @key is freed. Returns 0, -EINVAL (NULL key or value), -ENOMEM.
 */
_warn_unused_result_ int hashmap_put(struct hashmap *m, const char *key, void *value);

/* The value under @key, NULL when absent. Borrowed: valid until it is replaced or removed. */
void *hashmap_get(const struct hashmap *m, const char *key);

/* Removes @key and frees its value. Returns true when it was there. */
bool hashmap_remove(struct hashmap *m, const char *key);

/* Removes @key without freeing its value. Returns: owned (the caller frees it); NULL: absent. */
void *hashmap_steal(struct hashmap *m, const char *key);

size_t hashmap_size(const struct hashmap *m);

/* Iteration, in no particular order: struct hashmap_iter it = HASHMAP_ITER_INIT; then
 * hashmap_next() until it returns false. *ret_key and *ret_value are borrowed (either pointer
 * may be NULL). */
struct hashmap_iter {
        size_t next;
};
#define HASHMAP_ITER_INIT ((struct hashmap_iter){ 0 })
bool hashmap_next(const struct hashmap *m, struct hashmap_iter *it, const char **ret_key,
                  void **ret_value);

/* @it names the iterator the loop declares; @key and @value are lvalues it sets. */
#define HASHMAP_FOREACH(m, it, key, value)                                                        \
        for (struct hashmap_iter it = HASHMAP_ITER_INIT; /* NOLINT(bugprone-macro-parentheses) */ \
             hashmap_next((m), &(it), &(key), (void **)&(value));)
