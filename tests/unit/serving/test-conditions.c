/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <string.h>

#include "serving/conditions.h"

#define T0 ((usec_t)1700000000 * USEC_PER_SEC)
#define T1 (T0 + 60 * USEC_PER_SEC)
#define T2 (T0 + 120 * USEC_PER_SEC)

static void load(struct conditions *c, const char *json)
{
        json_auto_t *v = json_loads(json, 0, NULL);

        cr_assert_not_null(v, "bad test JSON: %s", json);
        cr_assert_eq(conditions_from_json(v, c), 0);
}

static void expect_json(const struct conditions *c, const char *want)
{
        json_auto_t *v = conditions_to_json(c);
        char *s;

        cr_assert_not_null(v);
        s = json_dumps(v, JSON_COMPACT);
        cr_assert_str_eq(s, want);
        free(s);
}

static void expect_cond(const struct conditions *c, const char *type, const char *status,
                        const char *reason)
{
        const struct condition *x = conditions_get(c, type);

        cr_assert_not_null(x, "condition %s missing", type);
        cr_assert_str_eq(x->status, status, "%s status", type);
        cr_assert_str_eq(x->reason, reason, "%s reason", type);
}

/* §9.4 IsReady */
Test(conditions, is_ready)
{
        static const struct {
                const char *json;
                bool ready;
        } cases[] = {
                { "[]", false },
                { "[{\"type\":\"Foo\",\"status\":\"True\"}]", false },
                { "[{\"type\":\"Ready\",\"status\":\"False\"}]", false },
                { "[{\"type\":\"Ready\",\"status\":\"Unknown\"}]", false },
                { "[{\"type\":\"ConfigurationReady\"}]", false },
                { "[{\"type\":\"ConfigurationsReady\",\"status\":\"True\"},{\"type\":\"RoutesReady\","
                  "\"status\":\"True\"},{\"type\":\"Ready\",\"status\":\"True\"}]",
                  true },
                { "[{\"type\":\"Foo\",\"status\":\"True\"},{\"type\":\"ConfigurationReady\","
                  "\"status\":\"False\"}]",
                  false },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                CLEANUP(conditions_releasep) struct conditions c;
                load(&c, cases[i].json);
                cr_assert_eq(conditions_is_ready(&c), cases[i].ready, "case %zu", i);
        }
}

/* §9.4 GetCondition and IsConditionReady */
Test(conditions, get_and_is_condition_ready)
{
        CLEANUP(conditions_releasep) struct conditions c;

        load(&c, "[]");
        cr_assert_null(conditions_get(&c, "Foo"));
        conditions_release(&c);

        load(&c, "[{\"type\":\"Foo\",\"status\":\"False\"}]");
        expect_cond(&c, "Foo", "False", "");
        cr_assert_not(conditions_is_true(&c, "Foo"));
        conditions_release(&c);

        load(&c, "[{\"type\":\"Ready\",\"status\":\"Unknown\"}]");
        expect_cond(&c, "Ready", "Unknown", "");
        conditions_release(&c);

        load(&c,
             "[{\"type\":\"Foo\",\"status\":\"True\"},{\"type\":\"Bar\",\"status\":\"False\"}]");
        cr_assert(conditions_is_true(&c, "Foo"));
        cr_assert_not(conditions_is_true(&c, "Bar"));
        cr_assert_not(conditions_is_true(&c, "Baz"));
}

/* §9.4 SetCondition */
Test(conditions, set_condition)
{
        CLEANUP(conditions_releasep) struct conditions c;

        conditions_init(&c);
        cr_assert_eq(conditions_set_condition(&c, "Foo", "True", NULL, NULL, T0), 0);
        expect_cond(&c, "Foo", "True", "");

        cr_assert_eq(conditions_set_condition(&c, "Foo", "False", NULL, NULL, T0), 0);
        expect_cond(&c, "Foo", "False", "");

        cr_assert_eq(conditions_set_condition(&c, "Foo", "Unknown", "For testing purpose", NULL,
                                              T0),
                     0);
        expect_cond(&c, "Foo", "Unknown", "For testing purpose");

        conditions_release(&c);
        conditions_init(&c);
        cr_assert_eq(conditions_set_condition(&c, "Foo", NULL, NULL, NULL, T0), 0);
        cr_assert_null(conditions_get(&c, "Foo"), "a nil condition is a no-op");
        cr_assert_eq(conditions_set_condition(&c, "Foo", "Maybe", NULL, NULL, T0), 0);
        cr_assert_null(conditions_get(&c, "Foo"), "an unknown status is a no-op");
}

/* Derived knative cases: Ready stays Unknown until all three dependents are present. */
Test(conditions, ready_waits_for_all_dependents)
{
        CLEANUP(conditions_releasep) struct conditions c;

        conditions_init(&c);
        cr_assert_eq(conditions_mark_true(&c, CONDITION_INFERENCE_SERVICE_READY, T0), 0);
        expect_cond(&c, CONDITION_READY, "Unknown", "");
        cr_assert_eq(conditions_mark_true(&c, CONDITION_IS_MMS_PREDICTOR, T0), 0);
        expect_cond(&c, CONDITION_READY, "Unknown", "");
        cr_assert_eq(conditions_mark_true(&c, CONDITION_MEMORY_RESOURCE_AVAILABLE, T0), 0);
        expect_cond(&c, CONDITION_READY, "True", "");
        expect_json(
                &c,
                "[{\"type\":\"InferenceServiceReady\",\"status\":\"True\",\"lastTransitionTime\":"
                "\"2023-11-14T22:13:20Z\"},{\"type\":\"IsMMSPredictor\",\"status\":\"True\","
                "\"lastTransitionTime\":\"2023-11-14T22:13:20Z\"},{\"type\":"
                "\"MemoryResourceAvailable\",\"status\":\"True\",\"lastTransitionTime\":"
                "\"2023-11-14T22:13:20Z\"},{\"type\":\"Ready\",\"status\":\"True\","
                "\"lastTransitionTime\":\"2023-11-14T22:13:20Z\"}]");
}

Test(conditions, mark_false_propagates_to_ready)
{
        CLEANUP(conditions_releasep) struct conditions c;

        conditions_init(&c);
        cr_assert_eq(conditions_mark_false(&c, CONDITION_INFERENCE_SERVICE_READY,
                                           REASON_INFERENCE_SERVICE_NOT_READY,
                                           MESSAGE_INFERENCE_SERVICE_NOT_READY, T0),
                     0);
        expect_cond(&c, CONDITION_READY, "False", REASON_INFERENCE_SERVICE_NOT_READY);
        cr_assert_str_eq(conditions_get(&c, CONDITION_READY)->message,
                         MESSAGE_INFERENCE_SERVICE_NOT_READY);

        /* a non-dependent does not touch Ready */
        cr_assert_eq(conditions_mark_false(&c, "Other", "R", "M", T1), 0);
        expect_cond(&c, CONDITION_READY, "False", REASON_INFERENCE_SERVICE_NOT_READY);
        cr_assert_str_eq(conditions_get(&c, "Other")->severity, "Info");
}

/* Marks InferenceServiceReady (message "a") and then IsMMSPredictor ("b") False at T0. */
static void mark_isvc_and_mms_false(struct conditions *c)
{
        cr_assert_eq(conditions_mark_false(c, CONDITION_INFERENCE_SERVICE_READY,
                                           REASON_INFERENCE_SERVICE_NOT_READY, "a", T0),
                     0);
        cr_assert_eq(conditions_mark_false(c, CONDITION_IS_MMS_PREDICTOR,
                                           REASON_IS_NOT_MMS_PREDICTOR, "b", T0),
                     0);
}

/* §3 table: several false in one pass → the last MarkFalse wins. */
Test(conditions, last_mark_false_wins)
{
        CLEANUP(conditions_releasep) struct conditions c;

        conditions_init(&c);
        mark_isvc_and_mms_false(&c);
        cr_assert_eq(conditions_mark_false(&c, CONDITION_MEMORY_RESOURCE_AVAILABLE,
                                           REASON_MEMORY_RESOURCE_NOT_AVAILABLE, "c", T0),
                     0);
        expect_cond(&c, CONDITION_READY, "False", REASON_MEMORY_RESOURCE_NOT_AVAILABLE);

        /* ending with a MarkTrue: the newest False dependent supplies Ready's reason */
        conditions_release(&c);
        conditions_init(&c);
        mark_isvc_and_mms_false(&c);
        cr_assert_eq(conditions_mark_true(&c, CONDITION_MEMORY_RESOURCE_AVAILABLE, T0), 0);
        expect_cond(&c, CONDITION_READY, "False", REASON_IS_NOT_MMS_PREDICTOR);
}

Test(conditions, transition_time_only_moves_on_change)
{
        CLEANUP(conditions_releasep) struct conditions c;

        conditions_init(&c);
        cr_assert_eq(conditions_mark_true(&c, CONDITION_INFERENCE_SERVICE_READY, T0), 0);
        cr_assert_eq(conditions_mark_true(&c, CONDITION_INFERENCE_SERVICE_READY, T1), 0);
        cr_assert_eq(conditions_get(&c, CONDITION_INFERENCE_SERVICE_READY)->ltt, T0);
        cr_assert_eq(conditions_mark_false(&c, CONDITION_INFERENCE_SERVICE_READY, "R", "M", T2), 0);
        cr_assert_eq(conditions_get(&c, CONDITION_INFERENCE_SERVICE_READY)->ltt, T2);
        /* a message change is a change */
        cr_assert_eq(conditions_mark_false(&c, CONDITION_INFERENCE_SERVICE_READY, "R", "M2",
                                           T2 + USEC_PER_SEC),
                     0);
        cr_assert_eq(conditions_get(&c, CONDITION_INFERENCE_SERVICE_READY)->ltt, T2 + USEC_PER_SEC);
}

Test(conditions, list_sorted_by_type_and_round_trips)
{
        CLEANUP(conditions_releasep) struct conditions c, back;
        json_auto_t *v = NULL;

        conditions_init(&c);
        cr_assert_eq(conditions_mark_true(&c, CONDITION_MEMORY_RESOURCE_AVAILABLE, T0), 0);
        cr_assert_eq(conditions_mark_false(&c, CONDITION_IS_MMS_PREDICTOR, "R", "a <b> & c", T0),
                     0);
        cr_assert_eq(conditions_mark_true(&c, CONDITION_INFERENCE_SERVICE_READY, T0), 0);
        cr_assert_eq(c.n, 4);
        cr_assert_str_eq(c.items[0].type, "InferenceServiceReady");
        cr_assert_str_eq(c.items[1].type, "IsMMSPredictor");
        cr_assert_str_eq(c.items[2].type, "MemoryResourceAvailable");
        cr_assert_str_eq(c.items[3].type, "Ready");

        v = conditions_to_json(&c);
        cr_assert_not_null(v);
        cr_assert_eq(conditions_from_json(v, &back), 0);
        cr_assert_eq(back.n, 4);
        for (size_t i = 0; i < 4; i++) {
                cr_assert_str_eq(back.items[i].type, c.items[i].type);
                cr_assert_str_eq(back.items[i].status, c.items[i].status);
                cr_assert_str_eq(back.items[i].reason, c.items[i].reason);
                cr_assert_str_eq(back.items[i].message, c.items[i].message);
                cr_assert_eq(back.items[i].ltt, c.items[i].ltt);
        }
}

Test(conditions, keep_transition_times)
{
        CLEANUP(conditions_releasep) struct conditions observed, c;

        load(&observed, "[{\"type\":\"Ready\",\"status\":\"False\",\"lastTransitionTime\":"
                        "\"2020-01-01T00:00:00Z\",\"reason\":\"X\",\"message\":\"m\"},"
                        "{\"type\":\"InferenceServiceReady\",\"status\":\"True\","
                        "\"lastTransitionTime\":\"2020-01-01T00:00:00Z\"}]");
        conditions_init(&c);
        cr_assert_eq(conditions_mark_true(&c, CONDITION_INFERENCE_SERVICE_READY, T2), 0);
        cr_assert_eq(conditions_mark_false(&c, CONDITION_READY, "X", "m", T2), 0);
        cr_assert_eq(conditions_mark_true(&c, CONDITION_IS_MMS_PREDICTOR, T2), 0);
        conditions_keep_transition_times(&c, &observed);
        cr_assert_eq(conditions_get(&c, CONDITION_INFERENCE_SERVICE_READY)->ltt,
                     (usec_t)1577836800 * USEC_PER_SEC);
        cr_assert_eq(conditions_get(&c, CONDITION_IS_MMS_PREDICTOR)->ltt, T2);
}

Test(conditions, from_json_rejects_non_arrays)
{
        struct conditions c;
        json_auto_t *v = json_object();

        cr_assert_eq(conditions_from_json(v, &c), -EINVAL);
        cr_assert_eq(conditions_from_json(NULL, &c), 0);
        cr_assert_eq(c.n, 0);
}
