/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <string.h>

#include "kube/cache.h"

static json_t *tm(const char *ns, const char *name, const char *rv, const char *isvc)
{
        json_t *o = json_pack("{s:{s:s,s:s,s:s},s:{s:s}}", "metadata", "namespace", ns, "name",
                              name, "resourceVersion", rv, "spec", "inferenceService", isvc);
        cr_assert_not_null(o);
        return o;
}

static size_t count_index(struct cache *c, const char *value)
{
        json_auto_t *arr = NULL;

        cr_assert_eq(cache_by_index(c, "isvc", value, &arr), 0);
        return json_array_size(arr);
}

Test(cache, keys)
{
        char key[CACHE_KEY_MAX], *ns = NULL, *name = NULL;
        json_auto_t *o = tm("default", "a", "1", "x");
        json_auto_t *cl = json_pack("{s:{s:s}}", "metadata", "name", "node1");

        cr_assert_eq(cache_key_of(o, key, sizeof(key)), 0);
        cr_assert_str_eq(key, "default/a");
        cr_assert_eq(cache_key_of(cl, key, sizeof(key)), 0);
        cr_assert_str_eq(key, "node1");
        cr_assert_eq(cache_key_of(o, key, 4), -ENOBUFS);
        cr_assert_eq(cache_key_split("default/a", &ns, &name), 0);
        cr_assert_str_eq(ns, "default");
        cr_assert_str_eq(name, "a");
        free(ns);
        free(name);
        cr_assert_eq(cache_key_split("node1", &ns, &name), 0);
        cr_assert_null(ns);
        cr_assert_str_eq(name, "node1");
        free(name);
        cr_assert_eq(cache_key_split("/x", &ns, &name), -EINVAL);
        cr_assert_eq(cache_key_split("a/b/c", &ns, &name), -EINVAL);
}

Test(cache, upsert_get_delete_and_refcounts)
{
        CLEANUP(cache_freep) struct cache *c = cache_new(NULL);
        json_t *o = tm("ns", "a", "1", "isvc1");
        json_t *old = NULL, *stored = NULL, *got;

        cr_assert_not(cache_has_synced(c));
        cr_assert_eq(cache_upsert(c, o, &old, &stored), 0);
        cr_assert_null(old);
        cr_assert_eq(stored, o);      /* no transform: the same object, shared */
        cr_assert_eq(o->refcount, 3); /* ours, the cache's, ret_new */
        json_decref(stored);

        got = cache_get(c, "ns/a");
        cr_assert_eq(got, o);
        cr_assert_eq(o->refcount, 3);
        json_decref(got);
        cr_assert_null(cache_get(c, "ns/b"));

        /* The reader keeps its reference across a replace of the key. */
        json_t *reader = cache_get_by_name(c, "ns", "a");
        json_t *o2 = tm("ns", "a", "2", "isvc2");
        cr_assert_eq(cache_upsert(c, o2, &old, NULL), 0);
        cr_assert_eq(old, o);
        json_decref(old);
        cr_assert_str_eq(json_string_value(json_object_get(json_object_get(reader, "metadata"),
                                                           "resourceVersion")),
                         "1");
        json_decref(reader);
        cr_assert_eq(o->refcount, 1); /* only ours left */
        json_decref(o);

        cr_assert_eq(cache_delete(c, "ns/a", &old), 0);
        cr_assert_eq(old, o2);
        json_decref(old);
        cr_assert_eq(o2->refcount, 1);
        json_decref(o2);
        cr_assert_eq(cache_delete(c, "ns/a", NULL), -ENOENT);
        cr_assert_eq(cache_len(c), 0);
}

Test(cache, indexes_follow_updates_and_deletes)
{
        CLEANUP(cache_freep) struct cache *c = cache_new(NULL);
        json_auto_t *a = tm("ns", "a", "1", "isvc1");
        json_auto_t *b = tm("ns", "b", "1", "isvc1");
        json_auto_t *a2 = tm("ns", "a", "2", "isvc2");
        json_auto_t *arr = NULL;

        cr_assert_eq(cache_upsert(c, a, NULL, NULL), 0);
        /* index added after content: existing objects are indexed */
        cr_assert_eq(cache_add_index(c, "isvc", cache_index_field, (void *)"spec.inferenceService"),
                     0);
        cr_assert_eq(cache_add_index(c, "isvc", cache_index_field, NULL), -EEXIST);
        cr_assert_eq(cache_add_index(c, "ns", cache_index_namespace, NULL), 0);
        cr_assert_eq(cache_upsert(c, b, NULL, NULL), 0);
        cr_assert_eq(count_index(c, "isvc1"), 2);
        cr_assert_eq(count_index(c, "isvc2"), 0);
        cr_assert_eq(cache_upsert(c, a2, NULL, NULL), 0);
        cr_assert_eq(count_index(c, "isvc1"), 1);
        cr_assert_eq(count_index(c, "isvc2"), 1);
        cr_assert_eq(cache_by_index(c, "isvc", "isvc2", &arr), 0);
        cr_assert_eq(json_array_get(arr, 0), a2);
        cr_assert_eq(cache_delete(c, "ns/b", NULL), 0);
        cr_assert_eq(count_index(c, "isvc1"), 0);
        cr_assert_eq(cache_by_index(c, "nope", "x", &arr), -ENOENT);
        json_decref(arr);
        cr_assert_eq(cache_by_index(c, "ns", "ns", &arr), 0);
        cr_assert_eq(json_array_size(arr), 1);
}

struct changes {
        int adds, updates, deletes;
        char log[512];
};

static void on_change(void *userdata, json_t *old, json_t *new)
{
        struct changes *ch = userdata;
        char k[CACHE_KEY_MAX];
        size_t l = strlen(ch->log);

        if (!old) {
                ch->adds++;
                (void)!cache_key_of(new, k, sizeof(k));
                (void)snprintf(ch->log + l, sizeof(ch->log) - l, "+%s ", k);
        } else if (!new) {
                ch->deletes++;
                (void)!cache_key_of(old, k, sizeof(k));
                (void)snprintf(ch->log + l, sizeof(ch->log) - l, "-%s ", k);
        } else {
                ch->updates++;
                (void)!cache_key_of(new, k, sizeof(k));
                (void)snprintf(ch->log + l, sizeof(ch->log) - l, "~%s ", k);
        }
}

Test(cache, replace_is_atomic_and_reports_the_diff)
{
        CLEANUP(cache_freep) struct cache *c = cache_new(NULL);
        struct changes ch = { 0 };
        json_auto_t *first = json_pack("[ooo]", tm("ns", "a", "1", "i"), tm("ns", "b", "1", "i"),
                                       tm("ns", "c", "1", "j"));
        json_auto_t *second = json_pack("[ooo]", tm("ns", "a", "1", "i"), tm("ns", "b", "5", "j"),
                                        tm("ns", "d", "6", "j"));
        json_auto_t *keys = NULL;

        cr_assert_eq(cache_add_index(c, "isvc", cache_index_field, (void *)"spec.inferenceService"),
                     0);
        cr_assert_eq(cache_replace(c, first, on_change, &ch), 0);
        cr_assert(cache_has_synced(c));
        cr_assert_eq(ch.adds, 3);
        cr_assert_eq(count_index(c, "i"), 2);

        memset(&ch, 0, sizeof(ch));
        cr_assert_eq(cache_replace(c, second, on_change, &ch), 0);
        /* c vanished, b changed, d appeared, a unchanged (same resourceVersion): no event */
        cr_assert_str_eq(ch.log, "-ns/c ~ns/b +ns/d ", "got %s", ch.log);
        cr_assert_eq(cache_len(c), 3);
        cr_assert_eq(count_index(c, "i"), 1);
        cr_assert_eq(count_index(c, "j"), 2);
        cr_assert_eq(cache_keys(c, &keys), 0);
        cr_assert_eq(json_array_size(keys), 3);
}

Test(cache, transform_strips_managed_fields)
{
        struct cache_options o = { .transform = cache_transform_strip_managed_fields };
        CLEANUP(cache_freep) struct cache *c = cache_new(&o);
        json_auto_t *obj = json_pack("{s:{s:s,s:s,s:[{s:s}]},s:{s:i}}", "metadata", "namespace",
                                     "ns", "name", "a", "managedFields", "manager", "kubectl",
                                     "spec", "x", 1);
        json_auto_t *stored = NULL, *list = NULL;

        cr_assert_eq(cache_upsert(c, obj, NULL, &stored), 0);
        cr_assert_null(json_object_get(json_object_get(stored, "metadata"), "managedFields"));
        cr_assert_not_null(json_object_get(json_object_get(obj, "metadata"), "managedFields"),
                           "the input must not be modified");
        /* the spec is shared, not copied */
        cr_assert_eq(json_object_get(stored, "spec"), json_object_get(obj, "spec"));
        cr_assert_eq(cache_list(c, &list), 0);
        cr_assert_eq(json_array_get(list, 0), stored);
}

/* A compact cache stores serialized objects; readers get equal, independent copies. */
Test(cache, compact_storage_behaves_like_the_tree_cache)
{
        struct cache_options o = { .compact = true };
        CLEANUP(cache_freep) struct cache *c = cache_new(&o);
        struct changes ch = { 0 };
        json_auto_t *a = tm("ns", "a", "1", "i"), *got = NULL, *got2 = NULL, *old = NULL;
        json_auto_t *newer = NULL, *list = NULL;
        json_auto_t *first = json_pack("[ooo]", tm("ns", "a", "1", "i"), tm("ns", "b", "1", "i"),
                                       tm("ns", "c", "1", "j"));
        json_auto_t *second = json_pack("[ooo]", tm("ns", "a", "1", "i"), tm("ns", "b", "5", "j"),
                                        tm("ns", "d", "6", "j"));

        cr_assert_not_null(c);
        cr_assert_eq(cache_add_index(c, "isvc", cache_index_field, (void *)"spec.inferenceService"),
                     0);
        cr_assert_eq(cache_upsert(c, a, &old, &newer), 0);
        cr_assert_null(old);
        cr_assert(json_equal(newer, a));
        got = cache_get(c, "ns/a");
        got2 = cache_get(c, "ns/a");
        cr_assert(json_equal(got, a), "a compact cache must give back an equal object");
        cr_assert_neq(got, got2, "each reader gets its own copy");
        cr_assert_eq(count_index(c, "i"), 1);

        cr_assert_eq(cache_replace(c, first, on_change, &ch), 0);
        cr_assert_eq(ch.adds, 2, "a was there with the same version: only b and c are new");
        memset(&ch, 0, sizeof(ch));
        cr_assert_eq(cache_replace(c, second, on_change, &ch), 0);
        cr_assert_str_eq(ch.log, "-ns/c ~ns/b +ns/d ", "got %s", ch.log);
        cr_assert_eq(count_index(c, "i"), 1);
        cr_assert_eq(count_index(c, "j"), 2);
        cr_assert_eq(cache_list(c, &list), 0);
        cr_assert_eq(json_array_size(list), 3);
        cr_assert(json_is_object(json_array_get(list, 0)), "list gives objects, not their text");
        json_decref(old);
        old = NULL;
        cr_assert_eq(cache_delete(c, "ns/d", &old), 0);
        cr_assert_str_eq(json_string_value(
                                 json_object_get(json_object_get(old, "metadata"), "name")),
                         "d");
        cr_assert_eq(count_index(c, "j"), 1);
}

/* A batch fills a cache page by page and commits like cache_replace. */
Test(cache, batch_commit_swaps_whole)
{
        CLEANUP(cache_freep)
        struct cache *c = cache_new(&(struct cache_options){ .compact = true });
        CLEANUP(cache_batch_freep) struct cache_batch *b = NULL;
        struct changes ch = { 0 };
        json_auto_t *x = tm("ns", "x", "1", "i"), *y = tm("ns", "y", "1", "i");

        cr_assert_eq(cache_add_index(c, "isvc", cache_index_field, (void *)"spec.inferenceService"),
                     0);
        cr_assert_eq(cache_batch_new(c, &b), 0);
        cr_assert_eq(cache_batch_add(b, x), 0);
        cr_assert(!cache_has_synced(c));
        cr_assert_eq(cache_len(c), 0, "nothing is visible before the commit");
        cache_batch_clear(b);
        cr_assert_eq(cache_batch_add(b, y), 0);
        cr_assert_eq(cache_batch_commit(b, on_change, &ch), 0);
        cr_assert(cache_has_synced(c));
        cr_assert_str_eq(ch.log, "+ns/y ", "got %s", ch.log);
        cr_assert_eq(count_index(c, "i"), 1);
}
