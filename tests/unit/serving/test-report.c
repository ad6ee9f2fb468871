/* SPDX-License-Identifier: Apache-2.0 */
/* The per-pod model report's codec (serving/report.h): both sides of one format. */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "serving/report.h"

#define BEAT ((usec_t)1796601600 * USEC_PER_SEC) /* 2026-12-07T00:00:00Z */

Test(report, round_trip_sorted)
{
        struct report_model in[] = {
                { .name = "zeta", .state = "Loading" },
                { .name = "alpha", .state = "Loaded", .storage_uri = "s3://b/a" },
                { .name = "mid", .state = "FailedToLoad", .reason = "model server said: <no>" },
        };
        json_t *data = report_data_encode(in, 3,
                                          &(struct report_meta){
                                                  .pod = "pod-0", .beat = BEAT, .period_sec = 15 });
        struct report r;

        cr_assert_not_null(data);
        cr_assert_str_eq(json_string_value(json_object_get(data, REPORT_KEY_MODELS)),
                         "[{\"name\":\"alpha\",\"state\":\"Loaded\",\"storageUri\":\"s3://b/a\"},"
                         "{\"name\":\"mid\",\"state\":\"FailedToLoad\",\"reason\":\"model server "
                         "said: <no>\"},{\"name\":\"zeta\",\"state\":\"Loading\"}]");
        cr_assert_str_eq(json_string_value(json_object_get(data, REPORT_KEY_POD)), "pod-0");
        cr_assert_str_eq(json_string_value(json_object_get(data, REPORT_KEY_HEARTBEAT)),
                         "2026-12-07T00:00:00Z");
        cr_assert_str_eq(json_string_value(json_object_get(data, REPORT_KEY_PERIOD)), "15");
        cr_assert_eq(report_data_decode(data, &r), 0);
        cr_assert_eq(r.n, 3);
        cr_assert_str_eq(r.models[0].name, "alpha");
        cr_assert_str_eq(r.models[0].storage_uri, "s3://b/a");
        cr_assert_null(r.models[0].reason);
        cr_assert_str_eq(report_find(&r, "mid")->reason, "model server said: <no>");
        cr_assert_null(report_find(&r, "absent"));
        cr_assert_str_eq(r.pod, "pod-0");
        cr_assert(r.has_heartbeat);
        cr_assert_eq(r.heartbeat, BEAT);
        cr_assert_eq(r.period_sec, 15);
        report_release(&r);
        json_decref(data);
}

Test(report, encode_refuses_a_model_without_name_or_state)
{
        struct report_model bad[] = { { .name = "a" } };
        struct report_model bad2[] = { { .state = "Loaded" } };

        cr_assert_null(report_data_encode(
                bad, 1, &(struct report_meta){ .pod = "p", .beat = BEAT, .period_sec = 10 }));
        cr_assert_null(report_data_encode(
                bad2, 1, &(struct report_meta){ .pod = "p", .beat = BEAT, .period_sec = 10 }));
        cr_assert_null(report_data_encode(NULL, 0,
                                          &(struct report_meta){
                                                  .pod = NULL, .beat = BEAT, .period_sec = 10 }),
                       "no pod");
}

Test(report, empty_list)
{
        json_t *data = report_data_encode(NULL, 0,
                                          &(struct report_meta){
                                                  .pod = "p", .beat = BEAT, .period_sec = 10 });
        struct report r;

        cr_assert_str_eq(json_string_value(json_object_get(data, REPORT_KEY_MODELS)), "[]");
        cr_assert_eq(report_data_decode(data, &r), 0);
        cr_assert_not_null(r.doc, "an empty list is readable");
        cr_assert_eq(r.n, 0);
        report_release(&r);
        json_decref(data);
}

static struct report decode_text(const char *models, const char *beat, const char *period)
{
        json_t *data = json_object();
        struct report r;

        if (models)
                json_object_set_new(data, REPORT_KEY_MODELS, json_string(models));
        if (beat)
                json_object_set_new(data, REPORT_KEY_HEARTBEAT, json_string(beat));
        if (period)
                json_object_set_new(data, REPORT_KEY_PERIOD, json_string(period));
        cr_assert_eq(report_data_decode(data, &r), 0);
        /* the strings are borrowed from r.doc and data: keep data alive with the report */
        json_decref(data);
        return r;
}

Test(report, lenient_decoding)
{
        struct report r;

        r = decode_text("{\"not\":\"a list\"}", NULL, NULL);
        cr_assert_null(r.doc, "not an array: unreadable");
        cr_assert_not(r.has_heartbeat);
        cr_assert_eq(r.period_sec, REPORT_PERIOD_DEFAULT);
        report_release(&r);
        r = decode_text("garbage", "yesterday", "0");
        cr_assert_null(r.doc);
        cr_assert_not(r.has_heartbeat, "a heartbeat that does not parse is absent");
        cr_assert_eq(r.period_sec, REPORT_PERIOD_DEFAULT, "0 is the default");
        report_release(&r);
        r = decode_text("[{\"name\":\"a\"},{\"state\":\"Loaded\"},{\"name\":1,\"state\":\"x\"},7,"
                        "{\"name\":\"ok\",\"state\":\"Loaded\",\"storageUri\":3}]",
                        "2026-12-07T00:00:00Z", "999999");
        cr_assert_not_null(r.doc);
        cr_assert_eq(r.n, 1, "entries without a string name and state are skipped");
        cr_assert_str_eq(r.models[0].name, "ok");
        cr_assert_null(r.models[0].storage_uri, "a non-string storageUri is absent");
        cr_assert(r.has_heartbeat);
        cr_assert_eq(r.period_sec, REPORT_PERIOD_DEFAULT, "past a day is the default");
        report_release(&r);
        r = decode_text("[{\"name\":\"a\",\"state\":\"x\",\"name\":\"b\"}]", NULL, "30");
        cr_assert_null(r.doc, "duplicate keys are refused");
        cr_assert_eq(r.period_sec, 30);
        report_release(&r);
}

Test(report, nothing_to_read)
{
        struct report r;

        cr_assert_eq(report_data_decode(NULL, &r), 0);
        cr_assert_null(r.doc);
        cr_assert_null(r.pod);
        cr_assert_eq(r.n, 0);
        cr_assert_null(report_find(&r, "x"));
        report_release(&r);
}

Test(report, address_and_draining_round_trip)
{
        struct report_model in[] = { { .name = "a", .state = "Loaded" } };
        json_t *data = report_data_encode(in, 1,
                                          &(struct report_meta){ .pod = "p",
                                                                 .address = "10.0.0.7:8080",
                                                                 .draining = true,
                                                                 .beat = BEAT,
                                                                 .period_sec = 10 });
        struct report r;

        cr_assert_not_null(data);
        cr_assert_str_eq(json_string_value(json_object_get(data, REPORT_KEY_ADDRESS)),
                         "10.0.0.7:8080");
        cr_assert_str_eq(json_string_value(json_object_get(data, REPORT_KEY_DRAINING)), "true");
        cr_assert_eq(report_data_decode(data, &r), 0);
        cr_assert_str_eq(r.address, "10.0.0.7:8080");
        cr_assert(r.draining);
        report_release(&r);
        json_decref(data);

        /* an older agent: neither key; a hostile one: an empty address, "yes" */
        data = report_data_encode(in, 1, &(struct report_meta){ .pod = "p", .beat = BEAT });
        cr_assert_null(json_object_get(data, REPORT_KEY_ADDRESS));
        cr_assert_null(json_object_get(data, REPORT_KEY_DRAINING));
        cr_assert_eq(json_object_set_new(data, REPORT_KEY_ADDRESS, json_string("")), 0);
        cr_assert_eq(json_object_set_new(data, REPORT_KEY_DRAINING, json_string("yes")), 0);
        cr_assert_eq(report_data_decode(data, &r), 0);
        cr_assert_null(r.address);
        cr_assert_not(r.draining);
        report_release(&r);
        json_decref(data);
}
