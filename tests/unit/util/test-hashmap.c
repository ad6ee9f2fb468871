/* SPDX-License-Identifier: Apache-2.0 */
/* util/hashmap.h: put, get, replace, remove, steal, iteration with removal, growth. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"

/* Values are heap-allocated counters; the free callback counts the frees. */
static int freed;

static void count_free(void *v)
{
        freed++;
        free(v);
}

static int *box(int v)
{
        int *p = malloc(sizeof(*p));

        cr_assert_not_null(p);
        *p = v;
        return p;
}

/* Puts @key -> @v, asserting success unless the allocation-fault torture failed it. */
static int put(struct hashmap *m, const char *key, int v)
{
        return hashmap_put(m, key, box(v));
}

static void init(void)
{
        freed = 0;
}

TestSuite(hashmap, .init = init);

Test(hashmap, put_get_replace_remove)
{
        CLEANUP(hashmap_freep) struct hashmap *m = hashmap_new(count_free);
        int *v;

        cr_assert_not_null(m);
        cr_assert_eq(hashmap_size(m), 0);
        cr_assert_null(hashmap_get(m, "a"), "an empty map holds nothing");
        cr_assert_eq(put(m, "a", 1), 0);
        cr_assert_eq(put(m, "b", 2), 0);
        cr_assert_eq(hashmap_size(m), 2);
        v = hashmap_get(m, "a");
        cr_assert_not_null(v);
        cr_assert_eq(*v, 1);
        cr_assert_eq(put(m, "a", 10), 0);
        cr_assert_eq(freed, 1, "the replaced value is freed");
        cr_assert_eq(hashmap_size(m), 2, "a replace adds no entry");
        cr_assert_eq(*(int *)hashmap_get(m, "a"), 10);
        cr_assert(hashmap_remove(m, "a"));
        cr_assert_eq(freed, 2);
        cr_assert_not(hashmap_remove(m, "a"), "removed twice");
        cr_assert_null(hashmap_get(m, "a"));
        cr_assert_eq(*(int *)hashmap_get(m, "b"), 2, "the other entry survives");
        cr_assert_eq(hashmap_size(m), 1);
}

Test(hashmap, the_same_value_put_again_is_kept)
{
        CLEANUP(hashmap_freep) struct hashmap *m = hashmap_new(count_free);
        int *v = box(7);

        cr_assert_eq(hashmap_put(m, "k", v), 0);
        cr_assert_eq(hashmap_put(m, "k", v), 0);
        cr_assert_eq(freed, 0, "putting the value it holds must not free it");
        cr_assert_eq(hashmap_get(m, "k"), v);
}

Test(hashmap, keys_are_copied)
{
        CLEANUP(hashmap_freep) struct hashmap *m = hashmap_new(count_free);
        char key[] = "ns/name";

        cr_assert_eq(put(m, key, 1), 0);
        key[0] = 'X';
        cr_assert_not_null(hashmap_get(m, "ns/name"), "the map keeps its own copy");
        cr_assert_null(hashmap_get(m, key));
}

Test(hashmap, steal_leaves_the_value_to_the_caller)
{
        CLEANUP(hashmap_freep) struct hashmap *m = hashmap_new(count_free);
        int *v;

        cr_assert_eq(put(m, "k", 3), 0);
        v = hashmap_steal(m, "k");
        cr_assert_not_null(v);
        cr_assert_eq(*v, 3);
        cr_assert_eq(freed, 0);
        cr_assert_eq(hashmap_size(m), 0);
        cr_assert_null(hashmap_steal(m, "k"));
        free(v);
}

Test(hashmap, invalid_arguments_free_the_value)
{
        CLEANUP(hashmap_freep) struct hashmap *m = hashmap_new(count_free);

        cr_assert_eq(hashmap_put(m, NULL, box(1)), -EINVAL);
        cr_assert_eq(freed, 1, "the map takes the value also on failure");
        cr_assert_eq(hashmap_put(m, "k", NULL), -EINVAL);
        cr_assert_null(hashmap_get(m, NULL));
        cr_assert_eq(hashmap_size(NULL), 0);
        cr_assert_null(hashmap_free(NULL));
}

Test(hashmap, grows_and_finds_every_key)
{
        CLEANUP(hashmap_freep) struct hashmap *m = hashmap_new(count_free);
        char key[32];

        for (int i = 0; i < 1000; i++) {
                (void)snprintf(key, sizeof(key), "default/model-%d", i);
                cr_assert_eq(put(m, key, i), 0, "put %s", key);
        }
        cr_assert_eq(hashmap_size(m), 1000);
        for (int i = 0; i < 1000; i++) {
                int *v;

                (void)snprintf(key, sizeof(key), "default/model-%d", i);
                v = hashmap_get(m, key);
                cr_assert_not_null(v, "%s lost", key);
                cr_assert_eq(*v, i);
        }
        cr_assert_null(hashmap_get(m, "default/model-1000"));
}

/* Removes and re-adds churn tombstones through one small table: probes must still end and
 * find every live key. */
Test(hashmap, churn_through_tombstones)
{
        CLEANUP(hashmap_freep) struct hashmap *m = hashmap_new(count_free);
        char key[32];

        for (int round = 0; round < 200; round++) {
                (void)snprintf(key, sizeof(key), "k%d", round);
                cr_assert_eq(put(m, key, round), 0);
                cr_assert_eq(put(m, "stay", round), 0);
                if (round > 2) {
                        (void)snprintf(key, sizeof(key), "k%d", round - 3);
                        cr_assert(hashmap_remove(m, key), "%s missing", key);
                }
                cr_assert_leq(hashmap_size(m), 4);
        }
        cr_assert_eq(hashmap_size(m), 4);
        cr_assert_eq(*(int *)hashmap_get(m, "stay"), 199);
        cr_assert_not_null(hashmap_get(m, "k197"));
        cr_assert_null(hashmap_get(m, "k196"));
}

Test(hashmap, iteration_sees_each_entry_once_and_may_remove)
{
        CLEANUP(hashmap_freep) struct hashmap *m = hashmap_new(count_free);
        int seen[50] = { 0 };
        char key[16];
        const char *k;
        int *v;

        for (int i = 0; i < 50; i++) {
                (void)snprintf(key, sizeof(key), "%d", i);
                cr_assert_eq(put(m, key, i), 0);
        }
        HASHMAP_FOREACH(m, it, k, v)
        {
                (void)snprintf(key, sizeof(key), "%d", *v);
                cr_assert_str_eq(k, key, "key %s carries %d", k, *v);
                seen[*v]++;
                if (*v % 2 == 0)
                        cr_assert(hashmap_remove(m, k));
        }
        for (int i = 0; i < 50; i++)
                cr_assert_eq(seen[i], 1, "entry %d seen %d times", i, seen[i]);
        cr_assert_eq(hashmap_size(m), 25);
        cr_assert_eq(freed, 25);
        HASHMAP_FOREACH(m, it, k, v)
        cr_assert_eq(*v % 2, 1, "only odd entries are left");
}

Test(hashmap, free_frees_every_value_and_null_free_fn_frees_none)
{
        struct hashmap *m = hashmap_new(count_free);
        static int fixed[3];

        cr_assert_eq(put(m, "a", 1), 0);
        cr_assert_eq(put(m, "b", 2), 0);
        cr_assert_null(hashmap_free(m));
        cr_assert_eq(freed, 2);

        m = hashmap_new(NULL);
        cr_assert_not_null(m);
        for (int i = 0; i < 3; i++) {
                char key[4] = { (char)('a' + i), 0 };

                cr_assert_eq(hashmap_put(m, key, &fixed[i]), 0);
        }
        cr_assert(hashmap_remove(m, "a"));
        cr_assert_eq(hashmap_get(m, "b"), &fixed[1]);
        hashmap_free(m);
}
