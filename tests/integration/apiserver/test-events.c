/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Event recorder against a real kube-apiserver (issue #12): a flood of 10,000 events (5,000
 * repeats of one event, and 100 objects x 50 distinct messages) ends as exactly the Events that
 * client-go's correlator would write (one per object and message, 10 per object before they are
 * combined), with the repeats counted on one Event, every emit accounted for (sent, aggregated,
 * folded into a queued write, dropped by the spam filter) and a queue that never exceeds its
 * bound. Counts are asserted, never times.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "it-helpers.h"
#include "json/json-util.h"
#include "kube/events.h"
#include "util/log.h"

enum { OBJECTS = 100, MESSAGES = 50, REPEATS = 5000 };

static const struct gvr events_gvr = { "", "v1", "events" };

Test(events, flood_of_10000_is_aggregated_and_counted, .timeout = 600)
{
        CLEANUP(kube_config_freep) struct kube_config *cfg = NULL;
        CLEANUP(kube_client_freep) struct kube_client *c = it_client(&cfg);
        CLEANUP(event_recorder_freep) struct event_recorder *r = NULL;
        struct event_recorder_stats st;
        json_auto_t *list = NULL;
        struct kube_status kst = { 0 };
        char ns[64], name[32], uid[48];
        size_t max_queued = 0, n_events;
        long long repeats_count = -1;
        json_t *items;

        log_set_max_level(LOG_LEVEL_ERROR);
        it_namespace_create(c, "events", ns, sizeof(ns));
        cr_assert_eq(event_recorder_new(
                             &(struct event_recorder_options){
                                     .client = c,
                                     .correlator = { .component = "modelplane-it" },
                             },
                             &r),
                     0);
        const struct event_object_ref hot = {
                "serving.kserve.io/v1alpha1", "TrainedModel", ns, "hot", "uid-hot", "1"
        };
        for (int i = 0; i < REPEATS; i++)
                (void)event_recorder_emit(r, &hot, EVENT_WARNING, "Flood", "the same message");
        for (int o = 0; o < OBJECTS; o++) {
                (void)snprintf(name, sizeof(name), "obj-%03d", o);
                (void)snprintf(uid, sizeof(uid), "uid-%03d", o);
                struct event_object_ref ref = {
                        "serving.kserve.io/v1alpha1", "TrainedModel", ns, name, uid, "1"
                };
                for (int m = 0; m < MESSAGES; m++) {
                        (void)event_recorder_emit(r, &ref, EVENT_NORMAL, "Flood", "message %d", m);
                        event_recorder_get_stats(r, &st);
                        max_queued = MAX(max_queued, st.queued);
                }
        }
        cr_assert_eq(event_recorder_flush(r, 300 * USEC_PER_SEC), 0, "the sender did not drain");
        event_recorder_get_stats(r, &st);
        cr_log_info(
                "emitted %lu sent %lu aggregated %lu coalesced %lu spam %lu full %lu failed %lu "
                "(max queued %zu of %zu)",
                st.emitted, st.sent, st.aggregated, st.coalesced, st.dropped_spam,
                st.dropped_queue_full, st.dropped_failed, max_queued, st.queue_max);
        cr_assert_eq(st.emitted, REPEATS + OBJECTS * MESSAGES);
        cr_assert_eq(st.dropped_spam, (REPEATS - 25) + OBJECTS * (MESSAGES - 25));
        cr_assert_eq(st.dropped_failed, 0);
        cr_assert_leq(max_queued, st.queue_max, "the queue stays bounded");
        cr_assert_eq(st.emitted,
                     st.dropped_spam + st.dropped_queue_full + st.dropped_failed + st.coalesced +
                             st.sent,
                     "every event is accounted for once");

        cr_assert_eq(kube_list(c, &events_gvr, ns, NULL, &list, &kst), 0, "%s", kst.message);
        items = json_object_get(list, "items");
        n_events = json_array_size(items);
        for (size_t i = 0; i < n_events; i++) {
                json_t *e = json_array_get(items, i);

                if (streq(json_get_string_path(e, "involvedObject", "name", NULL), "hot"))
                        repeats_count = json_integer_value(json_object_get(e, "count"));
        }
        if (st.dropped_queue_full == 0) {
                cr_assert_eq(n_events, 1 + OBJECTS * 10, "Events stored: %zu", n_events);
                cr_assert_eq(repeats_count, 25, "the repeats are counted on one Event");
        } else
                cr_assert_leq(n_events, 1 + OBJECTS * 10);
        it_namespace_delete(c, ns);
}
