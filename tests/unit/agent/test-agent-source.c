/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "agent/source.h"

static struct source_state s;

static void teardown(void)
{
        source_state_release(&s);
}

TestSuite(source, .fini = teardown);

/* Offers a copy of @json; returns whether the effective view changed, checks the verdict. */
static bool offer(enum agent_source src, const char *json, uint64_t gen, enum source_verdict want)
{
        bool changed = false;
        enum source_verdict v = source_offer(&s, src, strdup(json), gen, &changed);

        cr_assert_eq(v, want, "offer %s gen %llu: verdict %d, expected %d", json,
                     (unsigned long long)gen, v, want);
        return changed;
}

static void effective(const char *want)
{
        const char *got = source_effective(&s);

        if (!want)
                cr_assert_null(got, "expected no desired set, got %s", got);
        else
                cr_assert(got && strcmp(got, want) == 0, "expected %s, got %s", want,
                          got ? got : "(null)");
}

Test(source, no_api_source_the_file_decides)
{
        effective(NULL);
        cr_assert_str_eq(source_effective_name(&s), "none");
        cr_assert(offer(AGENT_SOURCE_FILE, "[1]", 100, SOURCE_TAKEN));
        effective("[1]");
        cr_assert_str_eq(source_effective_name(&s), "file");
        cr_assert(offer(AGENT_SOURCE_FILE, "[2]", 200, SOURCE_TAKEN));
        effective("[2]");
}

Test(source, the_file_waits_while_the_api_starts)
{
        cr_assert_not(source_set_api(&s, SOURCE_API_STARTING));
        cr_assert_not(offer(AGENT_SOURCE_FILE, "[old]", 100, SOURCE_TAKEN));
        effective(NULL); /* an older file never acted on while the first LIST runs */
        cr_assert(offer(AGENT_SOURCE_API, "[new]", 7, SOURCE_TAKEN));
        effective("[new]");
        cr_assert_str_eq(source_effective_name(&s), "API");
}

Test(source, a_failing_api_that_never_answered_falls_back_to_the_file)
{
        cr_assert_not(source_set_api(&s, SOURCE_API_STARTING));
        cr_assert_not(offer(AGENT_SOURCE_FILE, "[f]", 100, SOURCE_TAKEN));
        cr_assert(source_set_api(&s, SOURCE_API_FAILING));
        effective("[f]");
        /* the API answers later: its view replaces the file's */
        cr_assert(offer(AGENT_SOURCE_API, "[a]", 9, SOURCE_TAKEN));
        effective("[a]");
}

Test(source, failing_without_a_file_is_nothing)
{
        cr_assert_not(source_set_api(&s, SOURCE_API_STARTING));
        cr_assert_not(source_set_api(&s, SOURCE_API_FAILING));
        effective(NULL);
        cr_assert(offer(AGENT_SOURCE_FILE, "[f]", 100, SOURCE_TAKEN));
        effective("[f]");
}

Test(source, once_answered_api_errors_keep_the_api_view)
{
        cr_assert_not(source_set_api(&s, SOURCE_API_STARTING));
        cr_assert(offer(AGENT_SOURCE_API, "[a,b]", 10, SOURCE_TAKEN));
        /* the lagging file still lists a model deleted since, and lacks a new one */
        cr_assert_not(offer(AGENT_SOURCE_FILE, "[a,gone]", 500, SOURCE_TAKEN));
        for (int i = 0; i < 9; i++) {
                cr_assert_not(source_set_api(&s, SOURCE_API_FAILING));
                effective("[a,b]");
        }
        cr_assert_eq(s.api, SOURCE_API_ANSWERED);
        cr_assert_not(source_set_api(&s, SOURCE_API_STARTING));
        effective("[a,b]");
        /* the file moving on changes nothing either */
        cr_assert_not(offer(AGENT_SOURCE_FILE, "[a,b,c]", 600, SOURCE_TAKEN));
        effective("[a,b]");
}

Test(source, a_relist_with_the_same_bytes_changes_nothing)
{
        cr_assert(offer(AGENT_SOURCE_API, "[a]", 10, SOURCE_TAKEN));
        cr_assert_not(offer(AGENT_SOURCE_API, "[a]", 50, SOURCE_SAME));
        cr_assert_eq(s.views[AGENT_SOURCE_API].generation, 50);
        effective("[a]");
}

Test(source, an_older_api_view_never_replaces_a_newer_one)
{
        cr_assert(offer(AGENT_SOURCE_API, "[a,b]", 20, SOURCE_TAKEN));
        cr_assert_not(offer(AGENT_SOURCE_API, "[a]", 19, SOURCE_OLDER));
        effective("[a,b]");
        cr_assert_eq(s.views[AGENT_SOURCE_API].generation, 20);
        /* equal is not older (a relist at the same revision) */
        cr_assert(offer(AGENT_SOURCE_API, "[c]", 20, SOURCE_TAKEN));
        effective("[c]");
}

Test(source, an_older_file_view_never_replaces_a_newer_one)
{
        cr_assert(offer(AGENT_SOURCE_FILE, "[new]", 2000, SOURCE_TAKEN));
        cr_assert_not(offer(AGENT_SOURCE_FILE, "[old]", 1000, SOURCE_OLDER));
        effective("[new]");
}

Test(source, unknown_generations_are_not_compared)
{
        cr_assert(offer(AGENT_SOURCE_API, "[a]", 20, SOURCE_TAKEN));
        cr_assert(offer(AGENT_SOURCE_API, "[b]", 0, SOURCE_TAKEN));
        cr_assert(offer(AGENT_SOURCE_API, "[c]", 5, SOURCE_TAKEN));
        effective("[c]");
}

Test(source, an_older_view_does_not_count_as_an_answer)
{
        cr_assert_not(source_set_api(&s, SOURCE_API_STARTING));
        cr_assert_not(offer(AGENT_SOURCE_FILE, "[f]", 100, SOURCE_TAKEN));
        cr_assert(source_set_api(&s, SOURCE_API_FAILING));
        cr_assert(offer(AGENT_SOURCE_API, "[a]", 30, SOURCE_TAKEN));
        cr_assert_not(offer(AGENT_SOURCE_API, "[z]", 29, SOURCE_OLDER));
        effective("[a]");
}

Test(source, empty_list_is_a_view)
{
        cr_assert_not(source_set_api(&s, SOURCE_API_STARTING));
        cr_assert(offer(AGENT_SOURCE_API, "", 3, SOURCE_TAKEN));
        effective("");
}

Test(source, ret_changed_may_be_null)
{
        cr_assert_eq(source_offer(&s, AGENT_SOURCE_FILE, strdup("[x]"), 1, NULL), SOURCE_TAKEN);
        effective("[x]");
}

Test(source, generation_from_rv)
{
        cr_assert_eq(source_generation_from_rv("12345"), 12345);
        cr_assert_eq(source_generation_from_rv("18446744073709551615"), UINT64_MAX);
        cr_assert_eq(source_generation_from_rv("18446744073709551616"), 0);
        cr_assert_eq(source_generation_from_rv(""), 0);
        cr_assert_eq(source_generation_from_rv(NULL), 0);
        cr_assert_eq(source_generation_from_rv("-1"), 0);
        cr_assert_eq(source_generation_from_rv(" 1"), 0);
        cr_assert_eq(source_generation_from_rv("abc"), 0);
        cr_assert_eq(source_generation_from_rv("12x"), 0);
}
