/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "agent/reflector.h"

#define S USEC_PER_SEC

static struct reflector rf;
static usec_t now = 1000 * S;

static void setup(void)
{
        reflector_init(&rf, 0, 0);
        now = 1000 * S;
}

TestSuite(reflector, .init = setup);

static void expect(struct reflector_step st, enum reflector_op op, usec_t delay_min,
                   usec_t delay_max, bool failed, bool expired)
{
        cr_assert_eq(st.op, op, "op %d, expected %d", st.op, op);
        cr_assert(st.delay >= delay_min && st.delay <= delay_max,
                  "delay %llu us, expected [%llu, %llu]", (unsigned long long)st.delay,
                  (unsigned long long)delay_min, (unsigned long long)delay_max);
        cr_assert_eq(st.failed, failed, "failed %d, expected %d", st.failed, failed);
        cr_assert_eq(st.expired, expired, "expired %d, expected %d", st.expired, expired);
}

/* start -> LIST ok at @rv -> WATCH from @rv */
static void listed_at(const char *rv)
{
        expect(reflector_start(&rf), REFLECTOR_LIST, 0, 0, false, false);
        expect(reflector_listed(&rf, 0, rv, now, 0.5), REFLECTOR_WATCH, 0, 0, false, false);
        cr_assert_str_eq(rf.rv, rv);
}

Test(reflector, lists_then_watches_from_the_lists_resource_version)
{
        listed_at("500");
}

Test(reflector, events_and_bookmarks_move_the_resource_version)
{
        listed_at("500");
        cr_assert_eq(reflector_observed(&rf, "501"), 0);
        cr_assert_eq(reflector_observed(&rf, "650"), 0); /* BOOKMARK */
        /* the server ends the watch (its timeout): watch on from the last rv, at once */
        expect(reflector_watch_ended(&rf, 0, 300 * S, now, 0.5), REFLECTOR_WATCH, 0, 0, false,
               false);
        cr_assert_str_eq(rf.rv, "650");
}

Test(reflector, expired_relists_at_once_and_is_no_failure)
{
        listed_at("500");
        expect(reflector_watch_ended(&rf, -ESTALE, 10 * S, now, 0.5), REFLECTOR_LIST, 0, 0, false,
               true);
        cr_assert_str_eq(rf.rv, "");
        expect(reflector_listed(&rf, 0, "900", now, 0.5), REFLECTOR_WATCH, 0, 0, false, false);
        cr_assert_str_eq(rf.rv, "900");
        cr_assert_eq(rf.failures, 0);
}

Test(reflector, api_server_restart_with_compaction)
{
        /* kube-apiserver killed: the established stream is cut (-EIO) and the watch resumes from
         * the last rv at once; refused while it restarts (backoff, failed); back, it no longer
         * holds that rv (its new watch cache, etcd compaction): 410, LIST at once (no failure),
         * WATCH from the new list's rv. */
        listed_at("500");
        cr_assert_eq(reflector_observed(&rf, "510"), 0);
        expect(reflector_watch_ended(&rf, -EIO, 60 * S, now, 0.0), REFLECTOR_WATCH, 0, 0, false,
               false);
        cr_assert_str_eq(rf.rv, "510");
        expect(reflector_watch_ended(&rf, -ECONNREFUSED, 0, now, 0.0), REFLECTOR_WATCH, S / 2,
               S / 2, true, false);
        now += S;
        expect(reflector_watch_ended(&rf, -ECONNREFUSED, 0, now, 0.0), REFLECTOR_WATCH, S, S, true,
               false);
        now += 2 * S;
        expect(reflector_watch_ended(&rf, -ESTALE, 0, now, 0.0), REFLECTOR_LIST, 0, 0, false, true);
        cr_assert_str_eq(rf.rv, "");
        expect(reflector_listed(&rf, 0, "800", now, 0.0), REFLECTOR_WATCH, 0, 0, false, false);
        cr_assert_str_eq(rf.rv, "800");
}

Test(reflector, a_watch_request_failing_at_once_relists_after_a_backoff)
{
        /* -EIO at once (a 5xx answer, not a cut stream), a garbled stream, a 403 */
        static const int errs[] = { -EIO, -EBADMSG, -EACCES };

        for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
                listed_at("500");
                expect(reflector_watch_ended(&rf, errs[i], 0, now, 0.0), REFLECTOR_LIST, S / 2,
                       4 * S, true, false);
                cr_assert_str_eq(rf.rv, "");
        }
        /* a garbled stream of an established watch relists too */
        listed_at("600");
        cr_assert_eq(reflector_observed(&rf, "601"), 0);
        expect(reflector_watch_ended(&rf, -EBADMSG, 60 * S, now, 0.0), REFLECTOR_LIST, S / 2, S / 2,
               true, false);
}

Test(reflector, refused_watch_resumes_from_the_resource_version)
{
        listed_at("500");
        cr_assert_eq(reflector_observed(&rf, "510"), 0);
        expect(reflector_watch_ended(&rf, -ECONNREFUSED, 0, now, 0.0), REFLECTOR_WATCH, S / 2,
               S / 2, true, false);
        cr_assert_str_eq(rf.rv, "510");
        /* it came back, but etcd compacted 510 meanwhile */
        expect(reflector_watch_ended(&rf, -ESTALE, 0, now, 0.0), REFLECTOR_LIST, 0, 0, false, true);
        /* throttled (429/503): resume too */
        expect(reflector_listed(&rf, 0, "900", now, 0.0), REFLECTOR_WATCH, 0, 0, false, false);
        expect(reflector_watch_ended(&rf, -EAGAIN, 0, now, 0.0), REFLECTOR_WATCH, 0, 10 * S, true,
               false);
        cr_assert_str_eq(rf.rv, "900");
}

Test(reflector, a_second_expiry_in_a_row_backs_off)
{
        listed_at("500");
        expect(reflector_watch_ended(&rf, -ESTALE, 0, now, 0.0), REFLECTOR_LIST, 0, 0, false, true);
        expect(reflector_listed(&rf, 0, "600", now, 0.0), REFLECTOR_WATCH, 0, 0, false, false);
        expect(reflector_watch_ended(&rf, -ESTALE, 0, now, 0.0), REFLECTOR_LIST, S / 2, S, false,
               true);
        expect(reflector_listed(&rf, 0, "700", now, 0.0), REFLECTOR_WATCH, 0, 0, false, false);
        /* something observed in between: at once again */
        cr_assert_eq(reflector_observed(&rf, "701"), 0);
        expect(reflector_watch_ended(&rf, -ESTALE, 0, now, 0.0), REFLECTOR_LIST, 0, 0, false, true);
}

Test(reflector, backoff_doubles_with_jitter_and_is_capped)
{
        expect(reflector_start(&rf), REFLECTOR_LIST, 0, 0, false, false);
        for (unsigned i = 1; i <= 12; i++) {
                usec_t step = i >= 6 ? 30 * S : S << (i - 1);

                now += S;
                /* the jitter scales the step by [0.5, 1.0): 0 gives half, 0.999 nearly all */
                expect(reflector_listed(&rf, -EACCES, NULL, now, i % 2 ? 0.0 : 0.999),
                       REFLECTOR_LIST, i % 2 ? step / 2 : step * 999 / 1000 - 1, step, true, false);
        }
}

Test(reflector, a_list_allowed_and_a_watch_refused_keeps_backing_off)
{
        usec_t last = 0;

        expect(reflector_start(&rf), REFLECTOR_LIST, 0, 0, false, false);
        for (unsigned i = 1; i <= 6; i++) {
                struct reflector_step st;

                now += S;
                expect(reflector_listed(&rf, 0, "42", now, 0.0), REFLECTOR_WATCH, 0, 0, false,
                       false);
                st = reflector_watch_ended(&rf, -EACCES, 0, now, 0.0);
                expect(st, REFLECTOR_LIST, 0, 30 * S, true, false);
                cr_assert(st.delay >= last, "step %u: %llu after %llu", i,
                          (unsigned long long)st.delay, (unsigned long long)last);
                last = st.delay;
        }
        cr_assert_eq(last, 15 * S);
}

Test(reflector, an_observed_watch_resets_the_backoff)
{
        listed_at("1");
        for (unsigned i = 0; i < 5; i++)
                (void)reflector_watch_ended(&rf, -ECONNREFUSED, 0, now, 0.0);
        cr_assert_eq(rf.failures, 5);
        cr_assert_eq(reflector_observed(&rf, "2"), 0);
        expect(reflector_watch_ended(&rf, -EBADMSG, 5 * S, now, 0.0), REFLECTOR_LIST, S / 2, S / 2,
               true, false);
}

Test(reflector, quiet_time_resets_the_backoff)
{
        expect(reflector_start(&rf), REFLECTOR_LIST, 0, 0, false, false);
        for (unsigned i = 0; i < 5; i++)
                (void)reflector_listed(&rf, -EIO, NULL, now, 0.0);
        now += REFLECTOR_BACKOFF_RESET + S;
        expect(reflector_listed(&rf, -EIO, NULL, now, 0.0), REFLECTOR_LIST, S / 2, S / 2, true,
               false);
}

Test(reflector, a_watch_that_ends_at_once_is_a_failure)
{
        listed_at("7");
        expect(reflector_watch_ended(&rf, 0, S / 10, now, 0.0), REFLECTOR_LIST, S / 2, S / 2, true,
               false);
        /* one that ran its course is not, nor one that observed something */
        listed_at("8");
        expect(reflector_watch_ended(&rf, 0, REFLECTOR_WATCH_MIN, now, 0.0), REFLECTOR_WATCH, 0, 0,
               false, false);
        cr_assert_eq(reflector_observed(&rf, "9"), 0);
        expect(reflector_watch_ended(&rf, 0, 0, now, 0.0), REFLECTOR_WATCH, 0, 0, false, false);
        cr_assert_str_eq(rf.rv, "9");
}

Test(reflector, a_list_without_a_resource_version_is_a_failure)
{
        char big[REFLECTOR_RV_MAX + 1];

        memset(big, '1', sizeof(big) - 1);
        big[sizeof(big) - 1] = 0;
        expect(reflector_start(&rf), REFLECTOR_LIST, 0, 0, false, false);
        expect(reflector_listed(&rf, 0, NULL, now, 0.0), REFLECTOR_LIST, S / 2, S, true, false);
        expect(reflector_listed(&rf, 0, "", now, 0.0), REFLECTOR_LIST, S / 2, 2 * S, true, false);
        expect(reflector_listed(&rf, 0, big, now, 0.0), REFLECTOR_LIST, S / 2, 4 * S, true, false);
}

Test(reflector, an_unusable_event_resource_version_means_a_relist)
{
        char big[REFLECTOR_RV_MAX + 1];

        memset(big, '1', sizeof(big) - 1);
        big[sizeof(big) - 1] = 0;
        listed_at("7");
        cr_assert_eq(reflector_observed(&rf, big), -E2BIG);
        cr_assert_str_eq(rf.rv, "");
        expect(reflector_watch_ended(&rf, 0, 300 * S, now, 0.0), REFLECTOR_LIST, 0, 0, false,
               false);
}
