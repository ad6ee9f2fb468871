/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../fakes/fake-clock.h"
#include "fake-apiserver.h"
#include "kube/events.h"
#include "util/log.h"

static const struct event_object_ref tm1 = {
        "serving.kserve.io/v1alpha1", "TrainedModel", "ns", "tm1", "uid-1", "7"
};
static const struct event_object_ref tm2 = {
        "serving.kserve.io/v1alpha1", "TrainedModel", "ns", "tm2", "uid-2", "8"
};

static struct event_correlator *corr(struct fake_clock *fc, size_t lru)
{
        struct event_correlator_options o = {
                .component = "modelplane", .host = "h", .lru_size = lru, .clock = &fc->clock
        };
        struct event_correlator *c = event_correlator_new(&o);

        cr_assert_not_null(c);
        return c;
}

static struct event_decision correlate(struct event_correlator *c, const struct event_object_ref *o,
                                       const char *reason, const char *msg)
{
        struct event_decision d;

        cr_assert_eq(event_correlate(c, o, EVENT_WARNING, reason, msg, 1700000000000000ULL, &d), 0);
        return d;
}

Test(events, identical_events_patch_the_first_one)
{
        struct fake_clock fc;
        fake_clock_init(&fc, USEC_PER_SEC);
        CLEANUP(event_correlator_freep) struct event_correlator *c = corr(&fc, 0);

        struct event_decision a = correlate(c, &tm1, "UpdateFailed", "boom");
        cr_assert_eq(a.action, EVENT_ACTION_CREATE);
        cr_assert_eq(a.count, 1);
        cr_assert_eq(strncmp(a.name, "tm1.", 4), 0);
        cr_assert_str_eq(a.message, "boom");
        fake_clock_advance(&fc, USEC_PER_SEC);
        struct event_decision b = correlate(c, &tm1, "UpdateFailed", "boom");
        cr_assert_eq(b.action, EVENT_ACTION_PATCH);
        cr_assert_eq(b.count, 2);
        cr_assert_str_eq(b.name, a.name);
        cr_assert_eq(b.first_seen, a.first_seen);
        /* another reason or object is another Event */
        cr_assert_eq(correlate(c, &tm1, "Other", "boom").action, EVENT_ACTION_CREATE);
        cr_assert_eq(correlate(c, &tm2, "UpdateFailed", "boom").action, EVENT_ACTION_CREATE);
}

Test(events, ten_similar_within_600s_are_aggregated)
{
        struct fake_clock fc;
        char msg[32];
        fake_clock_init(&fc, USEC_PER_SEC);
        CLEANUP(event_correlator_freep) struct event_correlator *c = corr(&fc, 0);
        struct event_decision d, agg;

        for (int i = 1; i <= 9; i++) {
                (void)snprintf(msg, sizeof(msg), "failure %d", i);
                d = correlate(c, &tm1, "UpdateFailed", msg);
                cr_assert_eq(d.action, EVENT_ACTION_CREATE, "message %d", i);
                cr_assert_str_eq(d.message, msg);
                fake_clock_advance(&fc, 10 * USEC_PER_SEC);
        }
        agg = correlate(c, &tm1, "UpdateFailed", "failure 10");
        cr_assert_eq(agg.action, EVENT_ACTION_CREATE);
        cr_assert_str_eq(agg.message, "(combined from similar events): failure 10");
        d = correlate(c, &tm1, "UpdateFailed", "failure 11");
        cr_assert_eq(d.action, EVENT_ACTION_PATCH);
        cr_assert_str_eq(d.name, agg.name);
        cr_assert_eq(d.count, 2);
        cr_assert_str_eq(d.message, "(combined from similar events): failure 11");

        /* 600 s of quiet: the aggregation window starts over */
        fake_clock_advance(&fc, 601 * USEC_PER_SEC);
        d = correlate(c, &tm1, "UpdateFailed", "failure 12");
        cr_assert_eq(d.action, EVENT_ACTION_CREATE);
        cr_assert_str_eq(d.message, "failure 12");
}

Test(events, spam_filter_burst_25_then_one_per_300s_per_object)
{
        struct fake_clock fc;
        fake_clock_init(&fc, USEC_PER_SEC);
        CLEANUP(event_correlator_freep) struct event_correlator *c = corr(&fc, 0);

        for (int i = 0; i < 25; i++)
                cr_assert_neq(correlate(c, &tm1, "Tick", "same").action, EVENT_ACTION_DROP,
                              "event %d", i);
        cr_assert_eq(correlate(c, &tm1, "Tick", "same").action, EVENT_ACTION_DROP);
        cr_assert_eq(correlate(c, &tm1, "Other", "x").action, EVENT_ACTION_DROP,
                     "the bucket is per object, not per reason");
        cr_assert_neq(correlate(c, &tm2, "Tick", "same").action, EVENT_ACTION_DROP);
        fake_clock_advance(&fc, 299 * USEC_PER_SEC);
        cr_assert_eq(correlate(c, &tm1, "Tick", "same").action, EVENT_ACTION_DROP);
        fake_clock_advance(&fc, 1 * USEC_PER_SEC);
        cr_assert_neq(correlate(c, &tm1, "Tick", "same").action, EVENT_ACTION_DROP);
        cr_assert_eq(correlate(c, &tm1, "Tick", "same").action, EVENT_ACTION_DROP);
}

Test(events, caches_are_lru_bounded)
{
        struct fake_clock fc;
        fake_clock_init(&fc, USEC_PER_SEC);
        CLEANUP(event_correlator_freep) struct event_correlator *c = corr(&fc, 3);

        cr_assert_eq(correlate(c, &tm1, "A", "m").action, EVENT_ACTION_CREATE);
        cr_assert_eq(correlate(c, &tm1, "B", "m").action, EVENT_ACTION_CREATE);
        cr_assert_eq(correlate(c, &tm1, "A", "m").action, EVENT_ACTION_PATCH); /* A is recent */
        cr_assert_eq(correlate(c, &tm1, "C", "m").action, EVENT_ACTION_CREATE);
        cr_assert_eq(correlate(c, &tm1, "D", "m").action, EVENT_ACTION_CREATE); /* evicts B */
        cr_assert_eq(correlate(c, &tm1, "A", "m").action, EVENT_ACTION_PATCH);
        cr_assert_eq(correlate(c, &tm1, "B", "m").action, EVENT_ACTION_CREATE);
}

Test(events, type_names)
{
        cr_assert_str_eq(event_type_to_string(EVENT_NORMAL), "Normal");
        cr_assert_str_eq(event_type_to_string(EVENT_WARNING), "Warning");
        cr_assert_null(event_type_to_string(EVENT_TYPE__MAX));
}

/* ---- recorder against the fake apiserver ---- */

static struct kube_client *client_for(const char *url)
{
        char server[64];
        struct kube_config cfg = { .server = server, .namespace = (char *)"default" };
        /* generous: under valgrind on a loaded machine a request to the in-process fake took
         * over 5 s (CI), and a create retried after a timeout is one POST more than the flood
         * test counts (timeouts have a test of their own, with a short timeout) */
        struct kube_client_options o = { .request_timeout = 60 * USEC_PER_SEC };
        struct kube_client *c = NULL;

        (void)snprintf(server, sizeof(server), "%s", url);
        cr_assert_eq(kube_client_new(&cfg, &o, &c), 0);
        return c;
}

Test(events, recorder_creates_then_patches)
{
        CLEANUP(fake_apiserver_freep) struct fake_apiserver *f = NULL;
        CLEANUP(kube_client_freep) struct kube_client *c = NULL;
        CLEANUP(event_recorder_freep) struct event_recorder *r = NULL;
        struct event_recorder_options o = { .correlator = { .component = "modelplane-controller",
                                                            .host = "node-1" } };
        unsigned sent, dropped;

        cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
        cr_assert_eq(fake_apiserver_start(&f), 0);
        c = client_for(fake_apiserver_url(f));
        o.client = c;
        cr_assert_eq(event_recorder_new(&o, &r), 0);
        cr_assert_eq(event_recorder_emit(r, &tm1, EVENT_WARNING, "UpdateFailed", "code %d", 42), 0);
        cr_assert_eq(event_recorder_flush(r, 10 * USEC_PER_SEC), 0);
        cr_assert_eq(fake_apiserver_requests(f, "POST"), 1);
        cr_assert_eq(event_recorder_emit(r, &tm1, EVENT_WARNING, "UpdateFailed", "code %d", 42), 0);
        cr_assert_eq(event_recorder_flush(r, 10 * USEC_PER_SEC), 0);
        cr_assert_eq(fake_apiserver_requests(f, "PATCH"), 1);
        event_recorder_stats(r, &sent, &dropped);
        cr_assert_eq(sent, 2);
        cr_assert_eq(dropped, 0);

        /* The stored Event: name tm1.<hex>, count 2, the core/v1 fields. */
        json_auto_t *list = NULL;
        CLEANUP(kube_client_freep) struct kube_client *c2 = client_for(fake_apiserver_url(f));
        const struct gvr ev = { "", "v1", "events" };
        cr_assert_eq(kube_list(c2, &ev, "ns", NULL, &list, NULL), 0);
        json_t *e = json_array_get(json_object_get(list, "items"), 0);
        cr_assert_not_null(e);
        cr_assert_eq(json_integer_value(json_object_get(e, "count")), 2);
        cr_assert_str_eq(json_string_value(json_object_get(e, "type")), "Warning");
        cr_assert_str_eq(json_string_value(json_object_get(e, "reason")), "UpdateFailed");
        cr_assert_str_eq(json_string_value(json_object_get(e, "message")), "code 42");
        cr_assert_str_eq(json_string_value(json_object_get(e, "reportingComponent")),
                         "modelplane-controller");
        cr_assert_str_eq(json_string_value(
                                 json_object_get(json_object_get(e, "source"), "component")),
                         "modelplane-controller");
        json_t *io = json_object_get(e, "involvedObject");
        cr_assert_str_eq(json_string_value(json_object_get(io, "kind")), "TrainedModel");
        cr_assert_str_eq(json_string_value(json_object_get(io, "uid")), "uid-1");
        cr_assert_not_null(json_object_get(e, "firstTimestamp"));
        cr_assert_not_null(json_object_get(e, "lastTimestamp"));
        curl_global_cleanup();
}

/* A create whose answer was lost (the client timed out; the API server had stored it) is tried
 * again and gets 409: the Event is there, so it counts as written, not as dropped. */
Test(events, a_create_answered_too_late_and_retried_counts_as_written)
{
        CLEANUP(fake_apiserver_freep) struct fake_apiserver *f = NULL;
        CLEANUP(kube_client_freep) struct kube_client *c = NULL;
        CLEANUP(event_recorder_freep) struct event_recorder *r = NULL;
        char server[64];
        struct kube_config cfg = { .server = server, .namespace = (char *)"default" };
        struct event_recorder_options o = { .correlator = { .component = "modelplane" },
                                            .retry_sleep = 10 * USEC_PER_MSEC };
        struct event_recorder_stats st;

        log_set_max_level(LOG_LEVEL_ERROR);
        cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
        cr_assert_eq(fake_apiserver_start(&f), 0);
        (void)snprintf(server, sizeof(server), "%s", fake_apiserver_url(f));
        cr_assert_eq(kube_client_new(&cfg,
                                     &(struct kube_client_options){
                                             .request_timeout = 200 * USEC_PER_MSEC },
                                     &c),
                     0);
        o.client = c;
        fake_apiserver_slow_writes(f, 1500, 1);
        cr_assert_eq(event_recorder_new(&o, &r), 0);
        cr_assert_eq(event_recorder_emit(r, &tm1, EVENT_WARNING, "UpdateFailed", "lost answer"), 0);
        cr_assert_eq(event_recorder_flush(r, 30 * USEC_PER_SEC), 0);
        event_recorder_get_stats(r, &st);
        cr_assert_eq(fake_apiserver_requests(f, "POST"), 2, "the create was tried again");
        cr_assert_eq(st.dropped_failed, 0, "an Event the API server stored counted as dropped");
        cr_assert_eq(st.sent, 1);
        curl_global_cleanup();
}

Test(events, emit_never_blocks_and_the_queue_is_bounded, .timeout = 30)
{
        CLEANUP(kube_client_freep) struct kube_client *dead = client_for("http://127.0.0.1:1");
        struct event_recorder_options o = { .client = dead,
                                            .queue_max = 2,
                                            .retry_sleep = 3600 * USEC_PER_SEC };
        struct event_recorder *r = NULL;
        char reason[16];
        int full = 0;

        log_set_max_level(LOG_LEVEL_ERROR);
        cr_assert_eq(event_recorder_new(&o, &r), 0);
        /* the sender is stuck retrying the first one for an hour; emit returns at once */
        for (int i = 0; i < 10; i++) {
                (void)snprintf(reason, sizeof(reason), "R%d", i);
                if (event_recorder_emit(r, &tm1, EVENT_NORMAL, reason, "m") == -ENOBUFS)
                        full++;
        }
        cr_assert_geq(full, 7, "at most 1 in flight + 2 queued, got %d refused", full);
        cr_assert_eq(event_recorder_flush(r, 10 * USEC_PER_MSEC), -ETIMEDOUT);
        event_recorder_free(r); /* interrupts the retry sleep */
}

/* ---- a flood (issue #12): aggregated and counted, bounded, never blocking ---- */

enum { FLOOD_OBJECTS = 100, FLOOD_MESSAGES = 50, FLOOD_REPEATS = 5000 };

static void flood(struct event_recorder *r)
{
        char name[32], uid[32], msg[32];

        /* 5,000 repeats of one event of one object */
        for (int i = 0; i < FLOOD_REPEATS; i++)
                (void)event_recorder_emit(r, &tm1, EVENT_WARNING, "Flood", "same message");
        /* 100 objects x 50 distinct messages */
        for (int o = 0; o < FLOOD_OBJECTS; o++) {
                struct event_object_ref ref = tm2;

                (void)snprintf(name, sizeof(name), "obj-%d", o);
                (void)snprintf(uid, sizeof(uid), "uid-obj-%d", o);
                ref.name = name;
                ref.uid = uid;
                for (int m = 0; m < FLOOD_MESSAGES; m++) {
                        (void)snprintf(msg, sizeof(msg), "message %d", m);
                        (void)event_recorder_emit(r, &ref, EVENT_NORMAL, "Flood", "%s", msg);
                }
        }
}

/* Every emit is accounted for exactly once. */
static void assert_accounted(const struct event_recorder_stats *st, unsigned long extra,
                             unsigned long written)
{
        cr_assert_eq(st->emitted, extra + FLOOD_REPEATS + FLOOD_OBJECTS * FLOOD_MESSAGES);
        cr_assert_eq(st->emitted,
                     st->dropped_spam + st->dropped_queue_full + st->dropped_failed +
                             st->coalesced + written,
                     "emitted %lu != spam %lu + full %lu + failed %lu + coalesced %lu + "
                     "written %lu",
                     st->emitted, st->dropped_spam, st->dropped_queue_full, st->dropped_failed,
                     st->coalesced, written);
}

Test(events, flood_of_10000_is_aggregated_and_counted, .timeout = 120)
{
        CLEANUP(fake_apiserver_freep) struct fake_apiserver *f = NULL;
        CLEANUP(kube_client_freep) struct kube_client *c = NULL;
        CLEANUP(event_recorder_freep) struct event_recorder *r = NULL;
        struct event_recorder_options o = { .correlator = { .component = "modelplane" },
                                            .qps = 100000,
                                            .burst = 100000 };
        const struct gvr ev = { "", "v1", "events" };
        struct event_recorder_stats st;
        json_auto_t *list = NULL;
        size_t n_events;
        json_t *items;
        long long tm1_count = 0;

        log_set_max_level(LOG_LEVEL_ERROR);
        cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
        cr_assert_eq(fake_apiserver_start(&f), 0);
        c = client_for(fake_apiserver_url(f));
        o.client = c;
        cr_assert_eq(event_recorder_new(&o, &r), 0);
        flood(r);
        cr_assert_eq(event_recorder_flush(r, 100 * USEC_PER_SEC), 0);
        event_recorder_get_stats(r, &st);

        /* the spam filter lets 25 per object through (burst 25, one more per 300 s) */
        cr_assert_eq(st.dropped_spam, (FLOOD_REPEATS - 25) + FLOOD_OBJECTS * (FLOOD_MESSAGES - 25));
        cr_assert_eq(st.dropped_queue_full, 0);
        cr_assert_eq(st.dropped_failed, 0);
        /* of tm1's 25: 24 count increments; of each object's 25: 9 distinct + 16 combined, 15 of
         * which are increments of the combined Event */
        cr_assert_eq(st.aggregated, 24 + FLOOD_OBJECTS * 15, "aggregated %lu", st.aggregated);
        assert_accounted(&st, 0, st.sent);
        cr_assert_eq(st.queued, 0);

        cr_assert_eq(kube_list(c, &ev, "ns", NULL, &list, NULL), 0);
        items = json_object_get(list, "items");
        n_events = json_array_size(items);
        cr_assert_eq(n_events, 1 + FLOOD_OBJECTS * 10, "Events stored: %zu", n_events);
        for (size_t i = 0; i < n_events; i++) {
                json_t *e = json_array_get(items, i);
                const char *name = json_string_value(
                        json_object_get(json_object_get(e, "involvedObject"), "name"));

                if (streq(name, "tm1"))
                        tm1_count = json_integer_value(json_object_get(e, "count"));
        }
        cr_assert_eq(tm1_count, 25, "the repeats are counted on one Event: %lld", tm1_count);
        cr_assert_eq(fake_apiserver_requests(f, "POST"), 1 + FLOOD_OBJECTS * 10,
                     "one create per Event");
        cr_assert_leq(fake_apiserver_requests(f, "PATCH"), st.aggregated,
                      "repeats coalesce: at most one PATCH per increment");
        curl_global_cleanup();
}

Test(events, flood_while_the_api_server_is_down_is_bounded_and_never_blocks, .timeout = 120)
{
        CLEANUP(fake_apiserver_freep) struct fake_apiserver *f = NULL;
        CLEANUP(kube_client_freep) struct kube_client *c = NULL;
        struct event_recorder_options o = { .correlator = { .component = "modelplane" },
                                            .queue_max = 100,
                                            .retry_sleep = 3600 * USEC_PER_SEC };
        struct event_recorder *r = NULL;
        struct event_recorder_stats st;

        log_set_max_level(LOG_LEVEL_ERROR);
        cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
        cr_assert_eq(fake_apiserver_start(&f), 0);
        c = client_for(fake_apiserver_url(f));
        o.client = c;
        cr_assert_eq(fake_apiserver_set_down(f, true), 0);
        cr_assert_eq(event_recorder_new(&o, &r), 0);
        /* the sender takes a first event and is then stuck on it for an hour */
        cr_assert_eq(event_recorder_emit(r, &tm2, EVENT_NORMAL, "First", "m"), 0);
        for (int i = 0; i < 10000; i++) {
                event_recorder_get_stats(r, &st);
                if (st.queued == 0)
                        break;
                usleep(1000);
        }
        cr_assert_eq(st.queued, 0, "the sender never took the first event");
        /* every emit still returns */
        flood(r);
        event_recorder_get_stats(r, &st);
        cr_assert_leq(st.queued, 100, "the queue is bounded: %zu", st.queued);
        cr_assert_eq(st.sent, 0);
        cr_assert_gt(st.dropped_queue_full, 0, "the flood overflows 100 slots");
        cr_assert_gt(st.coalesced, 0, "repeats of a queued Event take no slot");
        /* queued now, or being sent (1), or folded, or dropped */
        assert_accounted(&st, 1, st.queued + 1);
        event_recorder_free(r);
        curl_global_cleanup();
}
