/* SPDX-License-Identifier: Apache-2.0 */
/* serving/replicas.h: counting replicas, the ModelLoaded condition, Ready requires Loaded. */
#include <criterion/criterion.h>
#include <string.h>

#include "json/json-util.h"
#include "serving/conditions.h"
#include "serving/replicas.h"

#define NOW        ((usec_t)1700000000 * USEC_PER_SEC)
#define LATER      (NOW + 3600 * USEC_PER_SEC)
#define NOW_TEXT   "2023-11-14T22:13:20Z"
#define LATER_TEXT "2023-11-14T23:13:20Z"

/* A report of pod @pod for InferenceService "mm", owned by the pod, with models.json @models. */
static json_t *report(const char *pod, const char *models)
{
        char name[128];

        (void)snprintf(name, sizeof(name), "modelstatus-%s", pod);
        json_t *cm = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}, s:[{s:s, s:s, s:s, s:s}]},"
                               " s:{s:s, s:s}}",
                               "apiVersion", "v1", "kind", "ConfigMap", "metadata", "name", name,
                               "namespace", "ns", "labels", REPLICAS_ISVC_LABEL, "mm",
                               REPLICAS_STATUS_LABEL, "agent", "ownerReferences", "apiVersion",
                               "v1", "kind", "Pod", "name", pod, "uid", "u-1", "data",
                               "models.json", models, "pod", pod);
        cr_assert_not_null(cm);
        return cm;
}

static const char *loaded_v1 =
        "[{\"name\":\"iris\",\"state\":\"Loaded\",\"storageUri\":\"s3://m/v1\"}]";

static void summarize(json_t *cms, const char *model, const char *uri, struct model_loaded *ret)
{
        struct replica_set s = { 0 };

        cr_assert_eq(replica_set_build(cms, NOW, &s), 0);
        cr_assert_eq(model_loaded_summarize(&s, model, uri, ret), 0);
        replica_set_release(&s);
        json_decref(cms);
}

Test(replicas, counts_only_pod_owned_live_reports)
{
        json_t *cm = report("a", "[]");

        cr_assert(replica_report_counts(cm));
        json_object_set_new(json_object_get(cm, "metadata"), "deletionTimestamp",
                            json_string("2026-01-01T00:00:00Z"));
        cr_assert(!replica_report_counts(cm), "a report being deleted counted");
        json_decref(cm);

        cm = report("a", "[]");
        json_object_del(json_object_get(cm, "metadata"), "ownerReferences");
        cr_assert(!replica_report_counts(cm), "a report without a pod owner counted");
        json_decref(cm);

        cm = report("a", "[]");
        json_object_set_new(json_get_path(cm, "metadata", "labels", NULL), REPLICAS_STATUS_LABEL,
                            json_string("other"));
        cr_assert(!replica_report_counts(cm), "another label value counted");
        json_decref(cm);
}

Test(replicas, all_loaded)
{
        struct model_loaded m;

        summarize(json_pack("[o,o]", report("b", loaded_v1), report("a", loaded_v1)), "iris",
                  "s3://m/v1", &m);
        cr_assert_eq(m.loaded, 2);
        cr_assert_eq(m.total, 2);
        cr_assert_str_eq(m.status, "True");
        cr_assert_str_eq(m.reason, "Loaded");
        cr_assert_str_eq(m.message, "2/2 replicas loaded");
        AUTOFREE char *d = json_dumps(m.detail, JSON_COMPACT);
        cr_assert_str_eq(
                d, "[{\"pod\":\"a\",\"state\":\"Loaded\"},{\"pod\":\"b\",\"state\":\"Loaded\"}]");
        model_loaded_release(&m);
}

Test(replicas, one_failure_names_pod_and_reason)
{
        struct model_loaded m;

        summarize(json_pack("[o,o]", report("a", loaded_v1),
                            report("b", "[{\"name\":\"iris\",\"state\":\"FailedToLoad\","
                                        "\"reason\":\"ValueError: bad pickle\"}]")),
                  "iris", "s3://m/v1", &m);
        cr_assert_eq(m.loaded, 1);
        cr_assert_str_eq(m.status, "False");
        cr_assert_str_eq(m.reason, "FailedToLoad");
        cr_assert_str_eq(m.message, "1/2 replicas loaded; b: FailedToLoad: ValueError: bad pickle");
        cr_assert_str_eq(json_get_string_path(json_array_get(m.detail, 1), "reason", NULL),
                         "ValueError: bad pickle");
        model_loaded_release(&m);

        summarize(json_pack("[o]", report("a", "[{\"name\":\"iris\",\"state\":\"FailedToDownload\","
                                               "\"reason\":\"HTTP 403\"}]")),
                  "iris", NULL, &m);
        cr_assert_str_eq(m.reason, "FailedToDownload");
        cr_assert_str_eq(m.message, "0/1 replicas loaded; a: FailedToDownload: HTTP 403");
        model_loaded_release(&m);
}

Test(replicas, in_progress_states)
{
        struct model_loaded m;

        /* absent -> Pending, which is less advanced than Loading */
        summarize(json_pack("[o,o,o]", report("a", loaded_v1),
                            report("b", "[{\"name\":\"iris\",\"state\":\"Loading\"}]"),
                            report("c", "[]")),
                  "iris", "s3://m/v1", &m);
        cr_assert_str_eq(m.status, "Unknown");
        cr_assert_str_eq(m.reason, "Pending");
        cr_assert_str_eq(m.message, "1/3 replicas loaded");
        model_loaded_release(&m);

        /* loaded from the old storageUri: the reload has not begun */
        summarize(json_pack("[o]", report("a", loaded_v1)), "iris", "s3://m/v2", &m);
        cr_assert_eq(m.loaded, 0);
        cr_assert_str_eq(m.reason, "Pending");
        model_loaded_release(&m);

        /* a report that does not parse: its models are Unknown, the replica still counts */
        summarize(json_pack("[o,o]", report("a", loaded_v1), report("b", "{garbage")), "iris",
                  "s3://m/v1", &m);
        cr_assert_eq(m.total, 2);
        cr_assert_str_eq(m.reason, "Unknown");
        model_loaded_release(&m);
}

Test(replicas, no_replicas)
{
        struct model_loaded m;
        json_t *no_owner = report("a", loaded_v1);

        json_object_del(json_object_get(no_owner, "metadata"), "ownerReferences");
        summarize(json_pack("[o]", no_owner), "iris", NULL, &m);
        cr_assert_eq(m.total, 0);
        cr_assert_str_eq(m.status, "Unknown");
        cr_assert_str_eq(m.reason, REPLICAS_REASON_NO_REPLICAS);
        model_loaded_release(&m);
}

Test(replicas, long_reason_cut_at_utf8_boundary)
{
        struct model_loaded m;
        char models[1024], reason[600];
        size_t n = 0;

        /* "é" is 2 bytes: 1 + 2k bytes puts a character across the limit */
        reason[n++] = 'x';
        while (n + 2 < 500) {
                reason[n++] = (char)0xC3;
                reason[n++] = (char)0xA9;
        }
        reason[n] = '\0';
        (void)snprintf(models, sizeof(models),
                       "[{\"name\":\"iris\",\"state\":\"FailedToLoad\",\"reason\":\"%s\"}]",
                       reason);
        summarize(json_pack("[o]", report("a", models)), "iris", NULL, &m);
        const char *r = json_get_string_path(json_array_get(m.detail, 0), "reason", NULL);
        cr_assert_not_null(r, "the cut reason is not valid UTF-8");
        cr_assert_leq(strlen(r), REPLICAS_REASON_MAX);
        cr_assert_geq(strlen(r), REPLICAS_REASON_MAX - 1);
        model_loaded_release(&m);
}

static const json_t *condition(const json_t *status, const char *type)
{
        size_t i;
        json_t *c;

        json_array_foreach(json_object_get(status, "conditions"), i, c)
                if (streq(json_string_value(json_object_get(c, "type")), type))
                        return c;
        return NULL;
}

static json_t *ready_status(void)
{
        struct conditions c;
        json_t *st;

        conditions_init(&c);
        cr_assert_eq(conditions_mark_true(&c, CONDITION_INFERENCE_SERVICE_READY, NOW), 0);
        cr_assert_eq(conditions_mark_true(&c, CONDITION_IS_MMS_PREDICTOR, NOW), 0);
        cr_assert_eq(conditions_mark_true(&c, CONDITION_MEMORY_RESOURCE_AVAILABLE, NOW), 0);
        st = json_pack("{s:o}", "conditions", conditions_to_json(&c));
        conditions_release(&c);
        return st;
}

static const char *cond_field(const json_t *st, const char *type, const char *field)
{
        return json_string_value(json_object_get(condition(st, type), field));
}

Test(replicas, apply_is_idempotent)
{
        struct model_loaded m;
        json_t *st = ready_status(), *again;

        summarize(json_pack("[o,o]", report("a", loaded_v1), report("b", "[]")), "iris",
                  "s3://m/v1", &m);
        cr_assert_eq(model_loaded_apply(st, NULL, &m, false, NOW), 0);
        cr_assert_str_eq(cond_field(st, "ModelLoaded", "status"), "Unknown");
        cr_assert_str_eq(cond_field(st, "ModelLoaded", "severity"), "Info");
        cr_assert_str_eq(cond_field(st, "ModelLoaded", "message"), "1/2 replicas loaded");
        cr_assert_str_eq(cond_field(st, "Ready", "status"), "True", "flag off: Ready untouched");
        cr_assert_str_eq(json_get_string_path(st, "annotations", REPLICAS_ANNOTATION, NULL),
                         "[{\"pod\":\"a\",\"state\":\"Loaded\",\"since\":\"" NOW_TEXT "\"},"
                         "{\"pod\":\"b\",\"state\":\"Pending\",\"since\":\"" NOW_TEXT "\"}]");

        /* the same world an hour later: the same status, transition times kept */
        again = json_deep_copy(st);
        cr_assert_eq(model_loaded_apply(again, st, &m, false, LATER), 0);
        cr_assert(json_equal(again, st), "a second pass changed the status");
        json_decref(again);
        model_loaded_release(&m);
        json_decref(st);
}

Test(replicas, since_follows_each_pods_state)
{
        struct model_loaded m1, m2;
        json_t *st = ready_status(), *next = ready_status();

        summarize(json_pack("[o,o]", report("a", loaded_v1), report("b", "[]")), "iris",
                  "s3://m/v1", &m1);
        cr_assert_eq(model_loaded_apply(st, NULL, &m1, false, NOW), 0);
        /* an hour later b has loaded it too, and a third pod c is there, still pending */
        summarize(json_pack("[o,o,o]", report("a", loaded_v1), report("b", loaded_v1),
                            report("c", "[]")),
                  "iris", "s3://m/v1", &m2);
        cr_assert_eq(model_loaded_apply(next, st, &m2, false, LATER), 0);
        cr_assert_str_eq(json_get_string_path(next, "annotations", REPLICAS_ANNOTATION, NULL),
                         "[{\"pod\":\"a\",\"state\":\"Loaded\",\"since\":\"" NOW_TEXT "\"},"
                         "{\"pod\":\"b\",\"state\":\"Loaded\",\"since\":\"" LATER_TEXT "\"},"
                         "{\"pod\":\"c\",\"state\":\"Pending\",\"since\":\"" LATER_TEXT "\"}]",
                         "a kept its time, b changed state, c is new");
        /* an unreadable annotation as read: every pod starts now, nothing fails */
        json_object_set_new(json_object_get(st, "annotations"), REPLICAS_ANNOTATION,
                            json_string("not json"));
        cr_assert_eq(model_loaded_apply(next, st, &m2, false, LATER), 0);
        cr_assert(strstr(json_get_string_path(next, "annotations", REPLICAS_ANNOTATION, NULL),
                         "\"pod\":\"a\",\"state\":\"Loaded\",\"since\":\"" LATER_TEXT));
        model_loaded_release(&m1);
        model_loaded_release(&m2);
        json_decref(st);
        json_decref(next);
}

Test(replicas, nothing_added_without_reports)
{
        struct model_loaded m;
        json_t *st = ready_status(), *before = json_deep_copy(st), *seen;

        summarize(json_array(), "iris", NULL, &m);
        cr_assert_eq(model_loaded_apply(st, NULL, &m, false, NOW), 0);
        cr_assert(json_equal(st, before), "a condition appeared with no replica reporting");

        /* but one that was there says so */
        seen = json_deep_copy(st);
        json_array_append_new(json_object_get(seen, "conditions"),
                              json_pack("{s:s, s:s}", "type", "ModelLoaded", "status", "True"));
        cr_assert_eq(model_loaded_apply(st, seen, &m, false, NOW), 0);
        cr_assert_str_eq(cond_field(st, "ModelLoaded", "reason"), REPLICAS_REASON_NO_REPLICAS);
        model_loaded_release(&m);
        json_decref(st);
        json_decref(before);
        json_decref(seen);
}

Test(replicas, ready_requires_loaded)
{
        struct model_loaded m;
        json_t *st;

        /* nothing loaded yet: Ready Unknown with the reason */
        st = ready_status();
        summarize(json_pack("[o]", report("a", "[{\"name\":\"iris\",\"state\":\"Downloading\"}]")),
                  "iris", NULL, &m);
        cr_assert_eq(model_loaded_apply(st, NULL, &m, true, NOW), 0);
        cr_assert_str_eq(cond_field(st, "Ready", "status"), "Unknown");
        cr_assert_str_eq(cond_field(st, "Ready", "reason"), "Downloading");
        model_loaded_release(&m);
        json_decref(st);

        /* every replica failed: Ready False with the agent's message */
        st = ready_status();
        summarize(json_pack("[o]", report("a", "[{\"name\":\"iris\",\"state\":\"FailedToLoad\","
                                               "\"reason\":\"boom\"}]")),
                  "iris", NULL, &m);
        cr_assert_eq(model_loaded_apply(st, NULL, &m, true, NOW), 0);
        cr_assert_str_eq(cond_field(st, "Ready", "status"), "False");
        cr_assert_str_eq(cond_field(st, "Ready", "message"),
                         "0/1 replicas loaded; a: FailedToLoad: boom");
        model_loaded_release(&m);
        json_decref(st);

        /* one of two loaded is enough */
        st = ready_status();
        summarize(json_pack("[o,o]", report("a", loaded_v1),
                            report("b", "[{\"name\":\"iris\",\"state\":\"FailedToLoad\"}]")),
                  "iris", NULL, &m);
        cr_assert_eq(model_loaded_apply(st, NULL, &m, true, NOW), 0);
        cr_assert_str_eq(cond_field(st, "Ready", "status"), "True");
        cr_assert_str_eq(cond_field(st, "ModelLoaded", "status"), "False");
        model_loaded_release(&m);
        json_decref(st);

        /* no replica reports: not Ready */
        st = ready_status();
        summarize(json_array(), "iris", NULL, &m);
        cr_assert_eq(model_loaded_apply(st, NULL, &m, true, NOW), 0);
        cr_assert_str_eq(cond_field(st, "Ready", "status"), "Unknown");
        cr_assert_str_eq(cond_field(st, "Ready", "reason"), REPLICAS_REASON_NO_REPLICAS);
        model_loaded_release(&m);
        json_decref(st);
}

static const char *first_key(json_t *keys)
{
        return json_string_value(json_array_get(keys, 0));
}

Test(replicas, informer_pieces)
{
        json_t *cm = report("a", loaded_v1), *keys = NULL, *slim;

        cr_assert_eq(replicas_map_configmap(NULL, cm, &keys), 0);
        cr_assert_str_eq(first_key(keys), "ns/mm");
        json_decref(keys);
        cr_assert_eq(replicas_index_isvc(NULL, cm, &keys), 0);
        cr_assert_str_eq(first_key(keys), "ns/mm");
        json_decref(keys);
        slim = replicas_transform_configmap(NULL, cm);
        cr_assert_str_eq(json_get_string_path(slim, "data", "models.json", NULL), loaded_v1);
        json_decref(slim);
        json_decref(cm);

        cm = json_pack("{s:{s:s, s:s, s:{s:s}, s:[]}, s:{s:s}}", "metadata", "name",
                       "modelconfig-my-isvc-0", "namespace", "ns", "labels", REPLICAS_ISVC_LABEL,
                       "my-isvc", "managedFields", "data", "models.json", "[garbage");
        cr_assert_eq(replicas_map_configmap(NULL, cm, &keys), 0);
        cr_assert_str_eq(first_key(keys), "ns/my-isvc");
        json_decref(keys);
        cr_assert_eq(replicas_index_isvc(NULL, cm, &keys), 0);
        cr_assert_null(keys, "a modelconfig ConfigMap indexed as a report");
        slim = replicas_transform_configmap(NULL, cm);
        cr_assert_str_eq(json_get_string_path(slim, "data", "models.json", NULL), "[garbage",
                         "models.json not cached: the reconcile plans from it");
        cr_assert_null(json_get_path(slim, "metadata", "managedFields", NULL));
        cr_assert_str_eq(json_get_string_path(slim, "metadata", "name", NULL),
                         "modelconfig-my-isvc-0");
        json_decref(slim);
        json_decref(cm);

        cm = json_pack("{s:{s:s, s:s, s:{s:s}}}", "metadata", "name", "unrelated", "namespace",
                       "ns", "labels", REPLICAS_ISVC_LABEL, "x");
        json_object_set_new(cm, "data", json_pack("{s:s}", "big", "value"));
        slim = replicas_transform_configmap(NULL, cm);
        cr_assert_null(json_object_get(slim, "data"), "an unrelated ConfigMap's data cached");
        json_decref(slim);
        cr_assert_eq(replicas_map_configmap(NULL, cm, &keys), 0);
        cr_assert_null(keys, "an unrelated ConfigMap enqueued");
        json_object_set_new(json_object_get(cm, "metadata"), "name", json_string("modelconfig--0"));
        cr_assert_eq(replicas_map_configmap(NULL, cm, &keys), 0);
        cr_assert_null(keys, "modelconfig--0 enqueued");
        json_decref(cm);
}

/* @cm with a heartbeat @ago seconds before NOW and the period @period (NULL: none). */
static json_t *with_heartbeat(json_t *cm, long ago, const char *period)
{
        char when[32];

        cr_assert_eq(format_rfc3339(NOW - (usec_t)ago * USEC_PER_SEC, when, sizeof(when)), 0);
        json_object_set_new(json_object_get(cm, "data"), REPORT_KEY_HEARTBEAT, json_string(when));
        if (period)
                json_object_set_new(json_object_get(cm, "data"), REPORT_KEY_PERIOD,
                                    json_string(period));
        return cm;
}

Test(replicas, fresh_heartbeat_counts_and_sets_the_next_check)
{
        json_t *cms = json_pack("[o]", with_heartbeat(report("a", loaded_v1), 5, "10"));
        struct replica_set s = { 0 };
        struct model_loaded m;

        cr_assert_eq(replica_set_build(cms, NOW, &s), 0);
        cr_assert(!s.items[0].stale);
        /* 4 periods of 10 s after the beat, plus a second */
        cr_assert_eq(s.next_stale, NOW - 5 * USEC_PER_SEC + 41 * USEC_PER_SEC);
        cr_assert_eq(model_loaded_summarize(&s, "iris", "s3://m/v1", &m), 0);
        cr_assert_str_eq(m.message, "1/1 replicas loaded");
        model_loaded_release(&m);
        replica_set_release(&s);
        json_decref(cms);
}

Test(replicas, stale_heartbeat_is_not_loaded)
{
        struct model_loaded m;

        summarize(json_pack("[o]", with_heartbeat(report("a", loaded_v1), 41, "10")), "iris",
                  "s3://m/v1", &m);
        cr_assert_eq(m.loaded, 0);
        cr_assert_eq(m.total, 1);
        cr_assert_str_eq(m.status, "Unknown");
        cr_assert_str_eq(m.reason, "Stale");
        cr_assert_str_eq(m.message, "0/1 replicas loaded; a: Stale: no heartbeat since "
                                    "2023-11-14T22:12:39Z (over 40s)");
        AUTOFREE char *d = json_dumps(m.detail, JSON_COMPACT);
        cr_assert_str_eq(d, "[{\"pod\":\"a\",\"state\":\"Stale\",\"reason\":\"no heartbeat since "
                            "2023-11-14T22:12:39Z (over 40s)\"}]");
        model_loaded_release(&m);
}

Test(replicas, stale_message_does_not_change_while_stale)
{
        json_t *cm = with_heartbeat(report("a", loaded_v1), 41, "10");
        json_t *cms = json_pack("[O]", cm);
        struct replica_set s1 = { 0 }, s2 = { 0 };
        struct model_loaded m1, m2;

        cr_assert_eq(replica_set_build(cms, NOW, &s1), 0);
        cr_assert_eq(replica_set_build(cms, LATER, &s2), 0);
        cr_assert_eq(s1.next_stale, 0, "a stale report needs no timer");
        cr_assert_eq(model_loaded_summarize(&s1, "iris", NULL, &m1), 0);
        cr_assert_eq(model_loaded_summarize(&s2, "iris", NULL, &m2), 0);
        cr_assert_str_eq(m1.message, m2.message);
        model_loaded_release(&m1);
        model_loaded_release(&m2);
        replica_set_release(&s1);
        replica_set_release(&s2);
        json_decref(cms);
        json_decref(cm);
}

Test(replicas, failure_outranks_stale_and_one_stale_of_two)
{
        struct model_loaded m;
        const char *failed = "[{\"name\":\"iris\",\"state\":\"FailedToLoad\",\"reason\":\"bad\"}]";

        summarize(json_pack("[o,o]", with_heartbeat(report("a", loaded_v1), 100, "10"),
                            report("b", failed)),
                  "iris", NULL, &m);
        cr_assert_str_eq(m.reason, "FailedToLoad");
        cr_assert_str_eq(m.message, "0/2 replicas loaded; b: FailedToLoad: bad");
        model_loaded_release(&m);

        summarize(json_pack("[o,o]", with_heartbeat(report("a", loaded_v1), 100, "10"),
                            with_heartbeat(report("b", loaded_v1), 1, "10")),
                  "iris", NULL, &m);
        cr_assert_str_eq(m.status, "Unknown");
        cr_assert_str_eq(m.reason, "Stale");
        cr_assert(strncmp(m.message, "1/2 replicas loaded; a: Stale: ", 31) == 0, "%s", m.message);
        model_loaded_release(&m);
}

Test(replicas, heartbeat_period_rules)
{
        json_t *cm = report("a", loaded_v1);

        cr_assert(!replica_report_stale(cm, LATER), "a report without a heartbeat went stale");
        with_heartbeat(cm, 41, NULL);
        cr_assert(replica_report_stale(cm, NOW), "no period: the default 10 s");
        with_heartbeat(cm, 41, "60");
        cr_assert(!replica_report_stale(cm, NOW), "the agent's period is used");
        with_heartbeat(cm, 41, "garbage");
        cr_assert(replica_report_stale(cm, NOW), "an unreadable period: the default");
        with_heartbeat(cm, -3600, "10");
        cr_assert(!replica_report_stale(cm, NOW), "a heartbeat from the future is fresh");
        json_object_set_new(json_object_get(cm, "data"), REPORT_KEY_HEARTBEAT,
                            json_string("not a time"));
        cr_assert(!replica_report_stale(cm, NOW), "an unreadable heartbeat went stale");
        json_decref(cm);
}

Test(replicas, heartbeat_only_updates)
{
        json_t *a = with_heartbeat(report("a", loaded_v1), 10, "10");
        json_t *b = with_heartbeat(report("a", loaded_v1), 0, "10");

        json_object_set_new(json_object_get(b, "metadata"), "resourceVersion", json_string("7"));
        cr_assert(replica_report_heartbeat_only(a, b));
        cr_assert(replica_report_heartbeat_only(a, a), "a resync");
        json_object_set_new(json_object_get(b, "data"), "models.json", json_string("[]"));
        cr_assert(!replica_report_heartbeat_only(a, b), "a state change was taken for a heartbeat");
        json_decref(b);

        b = with_heartbeat(report("a", loaded_v1), 0, "20");
        cr_assert(!replica_report_heartbeat_only(a, b), "a new period is a change");
        json_decref(b);

        b = with_heartbeat(report("a", loaded_v1), 0, "10");
        json_object_del(json_object_get(b, "metadata"), "ownerReferences");
        cr_assert(!replica_report_heartbeat_only(a, b), "losing the owner is a change");
        json_decref(b);

        b = report("a", loaded_v1);
        cr_assert(!replica_report_heartbeat_only(b, a), "a first heartbeat is a change");
        json_decref(b);
        json_decref(a);
}

/* Placement: copies counted over the assigned replicas only; the owner of a report read. */
Test(replicas, copies_over_assigned_replicas)
{
        struct replica_set s = { 0 };
        struct model_loaded m = { 0 };
        json_t *cms = json_pack("[o, o, o]", report("a", loaded_v1), report("b", "[]"),
                                report("c", loaded_v1));
        const char *const pods[] = { "c", "a" };

        cr_assert_eq(replica_set_build(cms, NOW, &s), 0);
        cr_assert_str_eq(s.items[0].owner_name, "a");
        cr_assert_str_eq(s.items[0].owner_uid, "u-1");
        cr_assert_eq(model_loaded_summarize_copies(&s, "iris", "s3://m/v1", pods, 2, &m), 0);
        cr_assert_eq(m.total, 2);
        cr_assert_eq(m.loaded, 2);
        cr_assert_str_eq(m.message, "2/2 copies loaded");
        cr_assert_eq(json_array_size(m.detail), 2, "b is not assigned: not listed");
        model_loaded_release(&m);
        cr_assert_eq(model_loaded_summarize_copies(&s, "iris", "s3://m/v1", pods + 1, 1, &m), 0);
        cr_assert_str_eq(m.message, "1/1 copies loaded");
        model_loaded_release(&m);
        cr_assert_eq(model_loaded_summarize(&s, "iris", "s3://m/v1", &m), 0);
        cr_assert_str_eq(m.message, "2/3 replicas loaded", "without placement: every replica");
        model_loaded_release(&m);
        replica_set_release(&s);
        json_decref(cms);
}

/* The assignment ConfigMaps (modelconfig-<isvc>-<pod>) in the controller's cache: indexed
 * under their InferenceService, mapped to it, their data kept. */
Test(replicas, assignment_configmaps_in_the_cache)
{
        json_t *cm = json_pack("{s:{s:s, s:s, s:{s:s, s:s}, s:[]}, s:{s:s}}", "metadata", "name",
                               "modelconfig-mm-pod-b-0", "namespace", "ns", "labels",
                               REPLICAS_ISVC_LABEL, "mm", REPLICAS_PLACEMENT_LABEL,
                               REPLICAS_PLACEMENT_ASSIGNMENT, "managedFields", "data",
                               "models.json", "[]");
        json_t *keys = NULL, *slim;

        cr_assert(replicas_is_assignment(cm));
        cr_assert_eq(replicas_index_isvc(NULL, cm, &keys), 0);
        cr_assert_str_eq(first_key(keys), "ns/mm");
        json_decref(keys);
        cr_assert_eq(replicas_map_configmap(NULL, cm, &keys), 0);
        cr_assert_str_eq(first_key(keys), "ns/mm", "by its label, not its name's -0");
        cr_assert_eq(json_array_size(keys), 1);
        json_decref(keys);
        slim = replicas_transform_configmap(NULL, cm);
        cr_assert_str_eq(json_get_string_path(slim, "data", "models.json", NULL), "[]");
        cr_assert_null(json_get_path(slim, "metadata", "managedFields", NULL));
        json_decref(slim);
        json_decref(cm);
}
