/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Placement's switch of the API source (src/agent/spread.c, pure): the shared models.json, or
 * this pod's assignment while the shared ConfigMap carries modelplane.io/placement: spread.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "agent/spread.h"

static struct spread_state s;

static void teardown(void)
{
        spread_state_release(&s);
}

TestSuite(spread, .fini = teardown);

static void view_is(const char *want, uint64_t want_gen)
{
        uint64_t gen = 0;
        const char *got = spread_view(&s, &gen);

        if (!want) {
                cr_assert_null(got, "expected no view, got %s", got);
                return;
        }
        cr_assert(got && strcmp(got, want) == 0, "view %s, expected %s", got ? got : "(none)",
                  want);
        cr_assert_eq(gen, want_gen, "generation %llu, expected %llu", (unsigned long long)gen,
                     (unsigned long long)want_gen);
}

Test(spread, without_the_annotation_the_shared_list)
{
        spread_state_init(&s, true);
        view_is(NULL, 0);
        cr_assert_eq(spread_set_own(&s, "[own]", 5), 0);
        view_is(NULL, 0); /* the shared ConfigMap decides whether the assignment counts */
        cr_assert_eq(spread_set_shared(&s, "[all]", false, 7), 0);
        view_is("[all]", 7);
        cr_assert_not(spread_on(&s));
        cr_assert_eq(spread_set_shared(&s, NULL, false, 8), 0);
        view_is("", 8); /* a deleted shared ConfigMap: no models, as without placement */
}

Test(spread, with_it_the_assignment_once_the_set_is_listed)
{
        spread_state_init(&s, true);
        cr_assert_eq(spread_set_shared(&s, "[all]", true, 10), 0);
        cr_assert(spread_on(&s));
        view_is(NULL, 0); /* the assignment is not known yet: no view (nothing acted on) */
        cr_assert_eq(spread_set_own(&s, NULL, 12), 0);
        view_is("[]", 12); /* listed, no assignment for this pod: load nothing */
        cr_assert_eq(spread_set_own(&s, "[a]", 15), 0);
        view_is("[a]", 15);
        cr_assert_eq(spread_set_shared(&s, "[all,b]", true, 16), 0);
        view_is("[a]", 16); /* the shared list changes; the assignment is still what counts */
        cr_assert_eq(spread_set_own(&s, "[a,b]", 17), 0);
        view_is("[a,b]", 17);
}

Test(spread, the_annotation_going_away_brings_the_shared_list_back)
{
        spread_state_init(&s, true);
        cr_assert_eq(spread_set_shared(&s, "[all]", true, 10), 0);
        cr_assert_eq(spread_set_own(&s, "[a]", 11), 0);
        view_is("[a]", 11);
        cr_assert_eq(spread_set_shared(&s, "[all]", false, 20), 0);
        cr_assert_not(spread_on(&s));
        view_is("[all]", 20);
        cr_assert_eq(spread_set_shared(&s, "[all]", true, 21), 0);
        view_is("[a]", 21); /* back on: the assignment is known already */
}

Test(spread, the_generation_never_goes_back)
{
        spread_state_init(&s, true);
        /* the labelled set's watch is ahead of the shared one's: the shared ConfigMap's later
         * event carries an older resourceVersion than the set's last */
        cr_assert_eq(spread_set_shared(&s, "[all]", true, 10), 0);
        cr_assert_eq(spread_set_own(&s, "[a]", 30), 0);
        cr_assert_eq(spread_set_shared(&s, "[all]", false, 25), 0);
        view_is("[all]", 30);
}

Test(spread, without_a_pod_the_annotation_is_ignored)
{
        spread_state_init(&s, false);
        cr_assert_eq(spread_set_shared(&s, "[all]", true, 10), 0);
        cr_assert_not(spread_on(&s));
        view_is("[all]", 10);
}
