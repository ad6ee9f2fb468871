/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The AdmissionReview codec (webhook/admission) and, through it, every webhook case of
 * trainedmodel.md §9.6 with the real rules (serving/webhook-rules).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "json/json-util.h"
#include "serving/webhook-rules.h"
#include "tm-fixture.h"
#include "webhook/admission.h"
#include "util/macro.h"

/* A review body (owned string); object/old_object are stolen, NULL means absent. */
static char *review(const char *api_version, const char *uid, const char *op, json_t *object,
                    json_t *old_object)
{
        json_t *req = json_pack("{s:s,s:{s:s,s:s,s:s},s:{s:s,s:s,s:s},s:s,s:s,s:s}", "uid", uid,
                                "kind", "group", "serving.kserve.io", "version", "v1alpha1", "kind",
                                "TrainedModel", "resource", "group", "serving.kserve.io", "version",
                                "v1alpha1", "resource", "trainedmodels", "name", "bar", "namespace",
                                "default", "operation", op);
        json_t *r;
        char *s;

        cr_assert_not_null(req);
        json_object_set_new(req, "object", object ? object : json_null());
        json_object_set_new(req, "oldObject", old_object ? old_object : json_null());
        json_object_set_new(req, "dryRun", json_false());
        r = json_pack("{s:s,s:s,s:o}", "apiVersion", api_version, "kind", "AdmissionReview",
                      "request", req);
        s = json_dumps(r, JSON_COMPACT);
        json_decref(r);
        cr_assert_not_null(s);
        return s;
}

struct outcome {
        unsigned http_status;
        bool allowed;
        int code;
        char api_version[64];
        char uid[64];
        char reason[32];
        char message[1024];
};

static struct outcome run(const char *content_type, const char *body, size_t len)
{
        struct admission_answer a = { 0 };
        struct outcome o = { 0 };
        json_auto_t *v = NULL;
        json_error_t err;
        json_t *resp, *status;

        cr_assert_eq(webhook_review(content_type, body, len, tm_validate_admission, &a), 0);
        cr_assert_not_null(a.body);
        cr_assert_eq(strlen(a.body), a.body_len);
        cr_assert_eq(a.body[a.body_len - 1], '\n', "Go's encoder ends with a newline");
        v = json_loadb(a.body, a.body_len, JSON_REJECT_DUPLICATES, &err);
        cr_assert_not_null(v, "answer is JSON: %s", a.body);
        cr_assert_str_eq(json_string_value(json_object_get(v, "kind")), "AdmissionReview");
        resp = json_object_get(v, "response");
        status = json_object_get(resp, "status");
        cr_assert(json_is_object(json_object_get(status, "metadata")));
        o.http_status = a.http_status;
        o.allowed = json_is_true(json_object_get(resp, "allowed"));
        cr_assert_eq(o.allowed, a.allowed);
        o.code = (int)json_integer_value(json_object_get(status, "code"));
        cr_assert_eq(o.code, a.code);
        (void)snprintf(o.api_version, sizeof(o.api_version), "%s",
                       json_string_value(json_object_get(v, "apiVersion")));
        (void)snprintf(o.uid, sizeof(o.uid), "%s", json_string_value(json_object_get(resp, "uid")));
        if (json_object_get(status, "reason"))
                (void)snprintf(o.reason, sizeof(o.reason), "%s",
                               json_string_value(json_object_get(status, "reason")));
        if (json_object_get(status, "message"))
                (void)snprintf(o.message, sizeof(o.message), "%s",
                               json_string_value(json_object_get(status, "message")));
        admission_answer_release(&a);
        return o;
}

static struct outcome run_review(const char *api_version, const char *op, json_t *object,
                                 json_t *old_object)
{
        AUTOFREE char *body = review(api_version, "uid-1", op, object, old_object);

        return run("application/json", body, strlen(body));
}

static void expect_allowed(struct outcome o)
{
        cr_assert_eq(o.http_status, 200);
        cr_assert(o.allowed, "expected allowed, got %d: %s", o.code, o.message);
        cr_assert_eq(o.code, 200);
        cr_assert_str_eq(o.uid, "uid-1");
        cr_assert_str_eq(o.message, "");
}

static void expect_denied(struct outcome o, const char *message)
{
        cr_assert_eq(o.http_status, 200);
        cr_assert_not(o.allowed);
        cr_assert_eq(o.code, 403);
        cr_assert_str_eq(o.reason, "Forbidden");
        cr_assert_str_eq(o.uid, "uid-1");
        cr_assert_str_eq(o.message, message);
}

static json_t *base_with(const char *name, const char *isvc, const char *uri, const char *framework,
                         const char *memory)
{
        return tm_fixture(name ? name : "bar", isvc ? isvc : "Parent",
                          uri ? uri : "gs://kfserving/sklearn/iris",
                          framework ? framework : "sklearn",
                          json_string(memory ? memory : "100Mi"));
}

/* ---- §9.6 CREATE ---- */

Test(spec_9_6, create_base_allowed)
{
        expect_allowed(run_review(ADMISSION_V1BETA1, "CREATE", tm_fixture_base(), NULL));
        expect_allowed(run_review(ADMISSION_V1, "CREATE", tm_fixture_base(), NULL));
}

Test(spec_9_6, create_names_allowed)
{
        static const char *names[] = { "Abc-123", "4abc-3", "-abc-3", "abc-3-" };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                expect_allowed(run_review(ADMISSION_V1BETA1, "CREATE",
                                          base_with(names[i], NULL, NULL, NULL, NULL), NULL));
}

Test(spec_9_6, create_bad_names_denied)
{
        expect_denied(run_review(ADMISSION_V1BETA1, "CREATE",
                                 base_with("abc.123", NULL, NULL, NULL, NULL), NULL),
                      TM_NAME_ERR("abc.123"));
        expect_denied(run_review(ADMISSION_V1BETA1, "CREATE",
                                 base_with("abc 123", NULL, NULL, NULL, NULL), NULL),
                      TM_NAME_ERR("abc 123"));
}

Test(spec_9_6, create_bad_uri_denied)
{
        expect_denied(run_review(ADMISSION_V1BETA1, "CREATE",
                                 base_with(NULL, NULL, "foo://kfserving/sklearn/iris", NULL, NULL),
                                 NULL),
                      TM_URI_ERR("bar", "foo://kfserving/sklearn/iris"));
}

/* ---- §9.6 UPDATE (old = base) ---- */

Test(spec_9_6, update_allowed_changes)
{
        static const char *names[] = { "Abc-123", "4abc-3", "-abc-3", "abc-3-" };

        expect_allowed(
                run_review(ADMISSION_V1BETA1, "UPDATE", tm_fixture_base(), tm_fixture_base()));
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                expect_allowed(run_review(ADMISSION_V1BETA1, "UPDATE",
                                          base_with(names[i], NULL, NULL, NULL, NULL),
                                          tm_fixture_base()));
        expect_allowed(run_review(ADMISSION_V1BETA1, "UPDATE",
                                  base_with(NULL, "parent2", NULL, NULL, NULL), tm_fixture_base()));
        expect_allowed(run_review(ADMISSION_V1BETA1, "UPDATE",
                                  base_with(NULL, NULL, "gs://kfserving/sklearn2/iris", NULL, NULL),
                                  tm_fixture_base()));
        expect_allowed(run_review(ADMISSION_V1BETA1, "UPDATE",
                                  base_with(NULL, NULL, NULL, "sklearn2", NULL),
                                  tm_fixture_base()));
}

Test(spec_9_6, update_denied)
{
        expect_denied(run_review(ADMISSION_V1BETA1, "UPDATE",
                                 base_with("abc.123", NULL, NULL, NULL, NULL), tm_fixture_base()),
                      TM_NAME_ERR("abc.123"));
        expect_denied(run_review(ADMISSION_V1BETA1, "UPDATE",
                                 base_with("abc 123", NULL, NULL, NULL, NULL), tm_fixture_base()),
                      TM_NAME_ERR("abc 123"));
        expect_denied(run_review(ADMISSION_V1BETA1, "UPDATE",
                                 base_with(NULL, NULL, "foo://kfserving/sklearn/iris", NULL, NULL),
                                 tm_fixture_base()),
                      TM_URI_ERR("bar", "foo://kfserving/sklearn/iris"));
        expect_denied(run_review(ADMISSION_V1BETA1, "UPDATE",
                                 base_with(NULL, NULL, NULL, NULL, "300Mi"), tm_fixture_base()),
                      "the Trained Model \"bar\" memory field is immutable. The memory was "
                      "\"100Mi\" but it is updated to \"300Mi\"");
}

Test(spec_9_6, delete_allowed)
{
        expect_allowed(run_review(ADMISSION_V1BETA1, "DELETE", NULL, tm_fixture_base()));
}

Test(spec_9_6, update_with_deletion_timestamp_allowed)
{
        json_t *o = base_with(NULL, NULL, "foo://bad", NULL, "300Mi");

        json_object_set_new(json_object_get(o, "metadata"), "deletionTimestamp",
                            json_string("2026-01-01T00:00:00Z"));
        expect_allowed(run_review(ADMISSION_V1BETA1, "UPDATE", o, tm_fixture_base()));
}

Test(spec_9_6, update_memory_same_value_allowed)
{
        expect_allowed(run_review(ADMISSION_V1BETA1, "UPDATE",
                                  tm_fixture("bar", "Parent", "gs://kfserving/sklearn/iris",
                                             "sklearn", json_string("104857600")),
                                  tm_fixture_base()));
        expect_allowed(run_review(ADMISSION_V1BETA1, "UPDATE",
                                  tm_fixture("bar", "Parent", "gs://kfserving/sklearn/iris",
                                             "sklearn", json_integer(104857600)),
                                  tm_fixture_base()));
}

/* ---- the exchange: versions, uid, bad input ---- */

Test(exchange, echoes_api_version_and_uid)
{
        struct outcome o;

        o = run_review(ADMISSION_V1BETA1, "CREATE", tm_fixture_base(), NULL);
        cr_assert_str_eq(o.api_version, ADMISSION_V1BETA1);
        o = run_review(ADMISSION_V1, "CREATE", tm_fixture_base(), NULL);
        cr_assert_str_eq(o.api_version, ADMISSION_V1);
        cr_assert_str_eq(o.uid, "uid-1");
}

Test(exchange, exact_bytes_like_go)
{
        AUTOFREE char *body = review(ADMISSION_V1BETA1, "d595e125-9ad4-4e36-a5ab-2ab1b8e1b5e4",
                                     "CREATE", tm_fixture_base(), NULL);
        struct admission_answer a = { 0 };

        cr_assert_eq(webhook_review("application/json", body, strlen(body), tm_validate_admission,
                                    &a),
                     0);
        cr_assert_str_eq(a.body, "{\"kind\":\"AdmissionReview\",\"apiVersion\":"
                                 "\"admission.k8s.io/v1beta1\",\"response\":{\"uid\":"
                                 "\"d595e125-9ad4-4e36-a5ab-2ab1b8e1b5e4\",\"allowed\":true,"
                                 "\"status\":{\"metadata\":{},\"code\":200}}}\n");
        admission_answer_release(&a);
}

Test(exchange, denied_bytes_like_go)
{
        AUTOFREE char *s = admission_review_format_response(ADMISSION_V1, "u", false, 403,
                                                            "Forbidden", "no \"way\"");

        cr_assert_str_eq(s, "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\","
                            "\"response\":{\"uid\":\"u\",\"allowed\":false,\"status\":{"
                            "\"metadata\":{},\"message\":\"no \\\"way\\\"\",\"reason\":"
                            "\"Forbidden\",\"code\":403}}}\n");
}

Test(exchange, escapes_like_go)
{
        AUTOFREE char *s = admission_review_format_response(ADMISSION_V1, "u", false, 403,
                                                            "Forbidden",
                                                            "a<b>&c\xe2\x80\xa8"
                                                            "d\xe2\x80\xa9\xc3\xa9");
        json_auto_t *v = NULL;

        cr_assert_str_eq(s, "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\","
                            "\"response\":{\"uid\":\"u\",\"allowed\":false,\"status\":{"
                            "\"metadata\":{},\"message\":\"a\\u003cb\\u003e\\u0026c\\u2028d"
                            "\\u2029\xc3\xa9\",\"reason\":\"Forbidden\",\"code\":403}}}\n");
        v = json_loads(s, 0, NULL);
        cr_assert_str_eq(json_get_string_path(v, "response", "status", "message", NULL),
                         "a<b>&c\xe2\x80\xa8"
                         "d\xe2\x80\xa9\xc3\xa9");
}

Test(exchange, content_type)
{
        AUTOFREE char *body = review(ADMISSION_V1, "uid-1", "CREATE", tm_fixture_base(), NULL);
        size_t len = strlen(body);
        struct outcome o;

        o = run(NULL, body, len);
        cr_assert_eq(o.http_status, 415);
        cr_assert_not(o.allowed);
        cr_assert_eq(o.code, 415);
        o = run("text/plain", body, len);
        cr_assert_eq(o.http_status, 415);
        cr_assert(strstr(o.message, "text/plain"));
        o = run("application/jsonx", body, len);
        cr_assert_eq(o.http_status, 415);
        o = run("application/yaml", body, len);
        cr_assert_eq(o.http_status, 415);
        o = run("Application/JSON; charset=utf-8", body, len);
        cr_assert_eq(o.http_status, 200);
        cr_assert(o.allowed);
        o = run("text/plain\xff", body, len); /* not UTF-8: not quoted back */
        cr_assert_eq(o.http_status, 415);
}

static void expect_bad(const char *body, unsigned http_status, const char *needle)
{
        struct outcome o = run("application/json", body, strlen(body));

        cr_assert_eq(o.http_status, http_status, "%s -> %u (%s)", body, o.http_status, o.message);
        cr_assert_not(o.allowed);
        cr_assert_eq(o.code, (int)http_status);
        cr_assert_str_eq(o.reason, "");
        cr_assert(strstr(o.message, needle), "message \"%s\" lacks \"%s\"", o.message, needle);
}

Test(exchange, unreadable_reviews_are_400)
{
        expect_bad("", 400, "empty");
        expect_bad("not json", 400, "not valid JSON");
        expect_bad("{\"apiVersion\":", 400, "not valid JSON");
        expect_bad("[]", 400, "not a JSON object");
        expect_bad("{}", 400, "apiVersion");
        expect_bad("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}", 400,
                   "request");
        expect_bad("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                   "\"request\":null}",
                   400, "request");
        expect_bad("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                   "\"request\":{\"operation\":\"CREATE\",\"kind\":{\"group\":\"g\",\"version\":"
                   "\"v\",\"kind\":\"k\"}}}",
                   400, "uid");
        expect_bad("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                   "\"request\":{\"uid\":\"\",\"operation\":\"CREATE\",\"kind\":{\"group\":\"g\","
                   "\"version\":\"v\",\"kind\":\"k\"}}}",
                   400, "uid");
        expect_bad("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                   "\"request\":{\"uid\":7,\"operation\":\"CREATE\"}}",
                   400, "uid");
        expect_bad("{\"apiVersion\":\"admission.k8s.io/v2\",\"kind\":\"AdmissionReview\","
                   "\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\"}}",
                   400, "apiVersion");
        expect_bad("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"Pod\","
                   "\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\"}}",
                   400, "AdmissionReview");
        expect_bad("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                   "\"extra\":1,\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\"}}",
                   400, "extra");
        expect_bad("{\"apiVersion\":\"admission.k8s.io/v1\",\"apiVersion\":\"admission.k8s.io/v1\","
                   "\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\"}}",
                   400, "not valid JSON");
        expect_bad("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                   "\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\",\"kind\":{\"group\":\"g\","
                   "\"version\":\"v\",\"kind\":\"k\"},\"object\":[1]}}",
                   400, "object");
}

Test(exchange, object_of_another_kind_is_400_in_a_review)
{
        json_t *pod = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Pod", "metadata",
                                "name", "bar");
        AUTOFREE char *body = review(ADMISSION_V1, "uid-1", "CREATE", pod, NULL);
        struct outcome o = run("application/json", body, strlen(body));
        char *kind_elsewhere;

        cr_assert_eq(o.http_status, 200);
        cr_assert_str_eq(o.uid, "uid-1");
        cr_assert_not(o.allowed);
        cr_assert_eq(o.code, 400);
        cr_assert(strstr(o.message, "Pod"));

        /* request.kind names another kind */
        kind_elsewhere = review(ADMISSION_V1, "uid-1", "CREATE", tm_fixture_base(), NULL);
        {
                json_auto_t *v = json_loads(kind_elsewhere, 0, NULL);
                AUTOFREE char *s = NULL;

                json_object_set_new(json_object_get(json_object_get(v, "request"), "kind"), "kind",
                                    json_string("InferenceService"));
                s = json_dumps(v, JSON_COMPACT);
                o = run("application/json", s, strlen(s));
                cr_assert_eq(o.http_status, 200);
                cr_assert_eq(o.code, 400);
                cr_assert(strstr(o.message, "InferenceService"));
        }
        free(kind_elsewhere);
}

Test(exchange, unknown_operation_and_missing_object)
{
        struct outcome o;

        o = run_review(ADMISSION_V1, "PATCH", tm_fixture_base(), NULL);
        cr_assert_eq(o.http_status, 200);
        cr_assert_not(o.allowed);
        cr_assert_eq(o.code, 400);
        cr_assert(strstr(o.message, "PATCH"));
        o = run_review(ADMISSION_V1, "CREATE", NULL, NULL);
        cr_assert_eq(o.http_status, 200);
        cr_assert_not(o.allowed);
        cr_assert_eq(o.code, 400);
        expect_allowed(run_review(ADMISSION_V1, "CONNECT", NULL, NULL));
}

Test(exchange, oversized_body_is_413)
{
        size_t n = ADMISSION_BODY_MAX + 1;
        char *big = malloc(n);
        struct outcome o;

        cr_assert_not_null(big);
        memset(big, ' ', n);
        o = run("application/json", big, n);
        cr_assert_eq(o.http_status, 413);
        cr_assert_eq(o.code, 413);
        free(big);
}

/* ---- the decoder alone ---- */

Test(decode, fields)
{
        AUTOFREE char *body = review(ADMISSION_V1BETA1, "u-7", "UPDATE", tm_fixture_base(),
                                     tm_fixture_base());
        struct admission_request req;
        char err[256];

        cr_assert_eq(admission_review_decode(body, strlen(body), &req, err, sizeof(err)), 0, "%s",
                     err);
        cr_assert_str_eq(req.api_version, ADMISSION_V1BETA1);
        cr_assert_str_eq(req.uid, "u-7");
        cr_assert_str_eq(req.operation, "UPDATE");
        cr_assert_str_eq(req.kind_group, "serving.kserve.io");
        cr_assert_str_eq(req.kind_version, "v1alpha1");
        cr_assert_str_eq(req.kind_kind, "TrainedModel");
        cr_assert_str_eq(req.name, "bar");
        cr_assert_str_eq(req.namespace_, "default");
        cr_assert_null(req.sub_resource);
        cr_assert(json_is_object(req.object));
        cr_assert(json_is_object(req.old_object));
        cr_assert_not(req.dry_run);
        admission_request_release(&req);
        admission_request_release(&req); /* idempotent */
}

Test(decode, tolerates_unknown_request_fields_and_nulls)
{
        const char *body = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                           "\"request\":{\"uid\":\"u\",\"operation\":\"DELETE\",\"kind\":{"
                           "\"group\":\"serving.kserve.io\",\"version\":\"v1alpha1\",\"kind\":"
                           "\"TrainedModel\"},\"object\":null,\"oldObject\":null,"
                           "\"futureField\":{\"x\":1},\"dryRun\":true}}";
        struct admission_request req;

        cr_assert_eq(admission_review_decode(body, strlen(body), &req, NULL, 0), 0);
        cr_assert_null(req.object);
        cr_assert_null(req.old_object);
        cr_assert(req.dry_run);
        admission_request_release(&req);
}

Test(decode, bounded)
{
        struct admission_request req;
        char uid[ADMISSION_UID_MAX + 2];
        AUTOFREE char *body = NULL;
        char err[256];

        cr_assert_eq(admission_review_decode("{}", ADMISSION_BODY_MAX + 1, &req, err, sizeof(err)),
                     -EFBIG);
        memset(uid, 'a', sizeof(uid) - 1);
        uid[sizeof(uid) - 1] = '\0';
        body = review(ADMISSION_V1, uid, "CREATE", tm_fixture_base(), NULL);
        cr_assert_eq(admission_review_decode(body, strlen(body), &req, err, sizeof(err)), -EINVAL);
        cr_assert(strstr(err, "uid"));
        /* not NUL-terminated input: only len bytes are read */
        cr_assert_eq(admission_review_decode("{}garbage", 2, &req, err, sizeof(err)), -EINVAL);
        cr_assert(strstr(err, "apiVersion"), "%s", err);
}
