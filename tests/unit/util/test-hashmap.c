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

/* Puts "default/model-<i>" -> i for i < @n. Returns how many puts failed. */
static int fill(struct hashmap *m, int n)
{
        char key[32];
        int failed = 0;

        for (int i = 0; i < n; i++) {
                (void)snprintf(key, sizeof(key), "default/model-%d", i);
                failed += put(m, key, i) < 0;
        }
        return failed;
}

/* How many of "default/model-<i>", i < @n, are missing or carry another value. */
static int count_lost(const struct hashmap *m, int n)
{
        char key[32];
        int lost = 0;

        for (int i = 0; i < n; i++) {
                const int *v;

                (void)snprintf(key, sizeof(key), "default/model-%d", i);
                v = hashmap_get(m, key);
                lost += !v || *v != i;
        }
        return lost;
}

Test(hashmap, grows_and_finds_every_key)
{
        CLEANUP(hashmap_freep) struct hashmap *m = hashmap_new(count_free);

        cr_assert_eq(fill(m, 1000), 0);
        cr_assert_eq(hashmap_size(m), 1000);
        cr_assert_eq(count_lost(m, 1000), 0, "every key found with its value after growing");
        cr_assert_null(hashmap_get(m, "default/model-1000"));
}

/* Round @round of the churn: k<round> in, "stay" replaced, k<round - 3> out. Returns 0, or -1
 * when a step failed. */
static int churn_round(struct hashmap *m, int round)
{
        char key[32];

        (void)snprintf(key, sizeof(key), "k%d", round);
        if (put(m, key, round) < 0 || put(m, "stay", round) < 0)
                return -1;
        (void)snprintf(key, sizeof(key), "k%d", round - 3);
        if (round > 2 && !hashmap_remove(m, key))
                return -1;
        return hashmap_size(m) <= 4 ? 0 : -1;
}

/* Runs @rounds rounds; returns how many failed. */
static int churn(struct hashmap *m, int rounds)
{
        int failed = 0;

        for (int round = 0; round < rounds; round++)
                failed += churn_round(m, round) < 0;
        return failed;
}

/* Removes and re-adds churn tombstones through one small table: probes must still end and
 * find every live key. */
Test(hashmap, churn_through_tombstones)
{
        CLEANUP(hashmap_freep) struct hashmap *m = hashmap_new(count_free);

        cr_assert_eq(churn(m, 200), 0);
        cr_assert_eq(hashmap_size(m), 4);
        cr_assert_eq(*(int *)hashmap_get(m, "stay"), 199);
        cr_assert_not_null(hashmap_get(m, "k197"));
        cr_assert_null(hashmap_get(m, "k196"));
}

/* Iterates @m, counting each value in @seen (values < @n) and removing the even ones. Returns
 * how many entries had a key other than their value's. */
static int visit_removing_even(struct hashmap *m, int *seen, int n)
{
        const char *k;
        char key[32];
        int wrong = 0, *v;

        HASHMAP_FOREACH(m, it, k, v) {
                (void)snprintf(key, sizeof(key), "default/model-%d", *v);
                wrong += strcmp(k, key) != 0 || *v >= n;
                if (*v < n)
                        seen[*v]++;
                if (*v % 2 == 0)
                        wrong += !hashmap_remove(m, k);
        }
        return wrong;
}

/* How many of @seen[0..n - 1] are exactly 1. */
static int count_once(const int *seen, int n)
{
        int once = 0;

        for (int i = 0; i < n; i++)
                once += seen[i] == 1;
        return once;
}

/* How many values of @m are odd. */
static int count_odd(const struct hashmap *m)
{
        const char *k;
        int odd = 0, *v;

        HASHMAP_FOREACH(m, it, k, v)
                odd += *v % 2;
        return odd;
}

Test(hashmap, iteration_sees_each_entry_once_and_may_remove)
{
        CLEANUP(hashmap_freep) struct hashmap *m = hashmap_new(count_free);
        int seen[50] = { 0 };

        cr_assert_eq(fill(m, 50), 0);
        cr_assert_eq(visit_removing_even(m, seen, 50), 0);
        cr_assert_eq(count_once(seen, 50), 50, "every entry seen exactly once");
        cr_assert_eq(hashmap_size(m), 25);
        cr_assert_eq(freed, 25);
        cr_assert_eq(count_odd(m), 25, "only odd entries are left");
}

Test(hashmap, free_frees_every_value)
{
        struct hashmap *m = hashmap_new(count_free);

        cr_assert_eq(put(m, "a", 1), 0);
        cr_assert_eq(put(m, "b", 2), 0);
        cr_assert_null(hashmap_free(m));
        cr_assert_eq(freed, 2);
}

/* Without a free callback the values stay the caller's (a set: the value is any non-NULL). */
Test(hashmap, null_free_fn_frees_none)
{
        CLEANUP(hashmap_freep) struct hashmap *m = hashmap_new(NULL);
        static int fixed[3];

        cr_assert_not_null(m);
        cr_assert_eq(hashmap_put(m, "a", &fixed[0]), 0);
        cr_assert_eq(hashmap_put(m, "b", &fixed[1]), 0);
        cr_assert_eq(hashmap_put(m, "c", &fixed[2]), 0);
        cr_assert(hashmap_remove(m, "a"));
        cr_assert_eq(hashmap_get(m, "b"), &fixed[1]);
}
