/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Registry contract suite: the REST API over real HTTP against a real store. The same binary
 * runs on SQLite and on PostgreSQL (MODELPLANE_TEST_BACKEND).
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "util/macro.h"

TestSuite(registry, .init = reg_setup, .fini = reg_teardown, .timeout = 60);

/* ---------------------------------------------------------------- basics */

Test(registry, root_is_404_and_unknown_paths)
{
        struct reply r;

        http_do("GET", "/", NULL, 0, &r);
        cr_assert_eq(r.status, 404);
        cr_assert_str_eq(r.body, "404 page not found\n");
        reply_done(&r);
        http_do("GET", API "/nope", NULL, 0, &r);
        cr_assert_eq(r.status, 404);
        reply_done(&r);
        http_do("GET", API "/registered_models/", NULL, 0, &r);
        cr_assert_eq(r.status, 404);
        reply_done(&r);
        http_do("DELETE", API "/registered_models", NULL, 0, &r);
        cr_assert_eq(r.status, 405);
        reply_done(&r);
        /* the same API under /v1 (newer Python clients) */
        http_do("GET", "/api/model_registry/v1/registered_models?pageSize=1", NULL, 0, &r);
        cr_assert_eq(r.status, 200);
        cr_assert(json_is_array(json_object_get(r.json, "items")));
        reply_done(&r);
        http_do("GET", "/api/model_registry/v2/registered_models", NULL, 0, &r);
        cr_assert_eq(r.status, 404);
        reply_done(&r);
}

Test(registry, readiness)
{
        struct reply r;

        http_do("GET", "/readyz/isDirty", NULL, 0, &r);
        cr_assert_eq(r.status, 200);
        cr_assert_str_eq(r.body, "OK");
        reply_done(&r);
        http_do("GET", "/readyz/health", NULL, 0, &r);
        cr_assert_eq(r.status, 200);
        reply_done(&r);
        http_do("GET", "/readyz/health?format=json", NULL, 0, &r);
        cr_assert_eq(r.status, 200);
        cr_assert_str_eq(json_string_value(json_object_get(r.json, "status")), "pass");
        reply_done(&r);
        http_do("POST", "/readyz/isDirty", "{}", 2, &r);
        cr_assert_eq(r.status, 405);
        reply_done(&r);
}

Test(registry, json_content_type_and_empty_list)
{
        struct reply r;

        http_do("GET", API "/registered_models", NULL, 0, &r);
        cr_assert_eq(r.status, 200);
        cr_assert_str_eq(r.ctype, "application/json; charset=UTF-8");
        cr_assert_eq(json_array_size(json_object_get(r.json, "items")), 0);
        cr_assert(json_is_array(json_object_get(r.json, "items")));
        cr_assert_str_eq(json_string_value(json_object_get(r.json, "nextPageToken")), "");
        cr_assert_eq(json_integer_value(json_object_get(r.json, "pageSize")), 0);
        cr_assert_eq(json_integer_value(json_object_get(r.json, "size")), 0);
        cr_assert(r.body[strlen(r.body) - 1] == '\n');
        reply_done(&r);
}

/* ---------------------------------------------------------------- registered models */

Test(registry, registered_model_lifecycle)
{
        json_t *j = NULL, *cp;
        char *id;
        const char *created;

        id = create(
                API "/registered_models",
                "{\"name\":\"mnist\",\"description\":\"d\",\"owner\":\"me\","
                "\"language\":[\"en\",\"fr\"],\"tasks\":[\"classify\"],\"externalId\":\"ext-1\","
                "\"customProperties\":{"
                "\"s\":{\"metadataType\":\"MetadataStringValue\",\"string_value\":\"a\"},"
                "\"i\":{\"metadataType\":\"MetadataIntValue\",\"int_value\":\"-42\"},"
                "\"d\":{\"metadataType\":\"MetadataDoubleValue\",\"double_value\":0.25},"
                "\"b\":{\"metadataType\":\"MetadataBoolValue\",\"bool_value\":true},"
                "\"st\":{\"metadataType\":\"MetadataStructValue\",\"struct_value\":\"eyJhIjogMX0=\"}}}",
                201);
        cr_assert_str_eq(id, "1");
        j = get_ok(API "/registered_models/1");
        cr_assert_str_eq(js(j, "name"), "mnist");
        cr_assert_str_eq(js(j, "state"), "LIVE");
        cr_assert_str_eq(js(j, "owner"), "me");
        cr_assert_str_eq(js(j, "externalId"), "ext-1");
        cr_assert_str_eq(js(j, "createTimeSinceEpoch"), js(j, "lastUpdateTimeSinceEpoch"));
        cr_assert_eq(json_array_size(json_object_get(j, "language")), 2);
        cp = json_object_get(j, "customProperties");
        cr_assert_str_eq(js(json_object_get(cp, "i"), "int_value"), "-42");
        cr_assert_str_eq(js(json_object_get(cp, "i"), "metadataType"), "MetadataIntValue");
        cr_assert_eq(json_real_value(json_object_get(json_object_get(cp, "d"), "double_value")),
                     0.25);
        cr_assert(json_is_true(json_object_get(json_object_get(cp, "b"), "bool_value")));
        cr_assert_str_eq(js(json_object_get(cp, "st"), "struct_value"), "{\"a\":1}");
        cr_assert_str_eq(js(json_object_get(cp, "s"), "string_value"), "a");
        created = strdup(js(j, "createTimeSinceEpoch"));
        json_decref(j);

        /* find */
        j = get_ok(API "/registered_model?name=mnist");
        cr_assert_str_eq(js(j, "id"), "1");
        json_decref(j);
        j = get_ok(API "/registered_model?externalId=ext-1");
        cr_assert_str_eq(js(j, "id"), "1");
        json_decref(j);
        expect("GET", API "/registered_model?name=nope", NULL, 404, "not found");
        expect("GET", API "/registered_model", NULL, 400, "invalid parameters call");
        expect("GET", API "/registered_model?name=", NULL, 400, "invalid parameters call");

        /* archive, then a PATCH without state keeps it archived (deviation from upstream) */
        cr_assert_eq(req("PATCH", API "/registered_models/1", "{\"state\":\"ARCHIVED\"}", &j), 200);
        cr_assert_str_eq(js(j, "state"), "ARCHIVED");
        json_decref(j);
        cr_assert_eq(req("PATCH", API "/registered_models/1", "{\"description\":\"new\"}", &j),
                     200);
        cr_assert_str_eq(js(j, "state"), "ARCHIVED");
        cr_assert_str_eq(js(j, "description"), "new");
        cr_assert_str_eq(js(j, "owner"), "me");
        cr_assert_str_eq(js(j, "createTimeSinceEpoch"), created);
        /* custom properties kept when absent */
        cr_assert_eq(json_object_size(json_object_get(j, "customProperties")), 5);
        json_decref(j);
        /* replaced when present; {} clears; null keeps */
        cr_assert_eq(
                req("PATCH", API "/registered_models/1",
                    "{\"customProperties\":{\"x\":{\"metadataType\":\"MetadataStringValue\",\"string_value\":\"y\"}}}",
                    &j),
                200);
        cr_assert_eq(json_object_size(json_object_get(j, "customProperties")), 1);
        json_decref(j);
        cr_assert_eq(req("PATCH", API "/registered_models/1", "{\"customProperties\":null}", &j),
                     200);
        cr_assert_eq(json_object_size(json_object_get(j, "customProperties")), 1);
        json_decref(j);
        cr_assert_eq(req("PATCH", API "/registered_models/1", "{\"customProperties\":{}}", &j),
                     200);
        cr_assert_eq(json_object_size(json_object_get(j, "customProperties")), 0);
        json_decref(j);

        /* immutable / read-only fields are unknown in the Update schema */
        expect("PATCH", API "/registered_models/1", "{\"name\":\"other\"}", 400,
               "unknown field \"name\"");
        expect("PATCH", API "/registered_models/1", "{\"id\":\"7\"}", 400, "unknown field");
        expect("PATCH", API "/registered_models/1", "{\"createTimeSinceEpoch\":\"1\"}", 400,
               "unknown field");
        expect("PATCH", API "/registered_models/1", "{\"state\":\"GONE\"}", 400, "is not a valid");
        expect("PATCH", API "/registered_models/99", "{}", 404, "not found");
        /* a missing entity is 404 before its body is judged (the body is decoded at the edge) */
        expect("PATCH", API "/registered_models/99", "{\"name\":\"other\"}", 404,
               "no registered model found for id 99");
        expect("PATCH", API "/artifacts/99", "{\"artifactType\":\"doc-artifact\"}", 404,
               "no artifact found for id 99");
        expect("GET", API "/registered_models/99", NULL, 404,
               "no registered model found for id 99: not found");
        expect("GET", API "/registered_models/abc", NULL, 400, "invalid registered model ID");
        expect("GET", API "/registered_models/99999999999", NULL, 400, "invalid");
        free((void *)created);
}

Test(registry, required_fields_are_422)
{
        expect("POST", API "/registered_models", "{}", 422, "required field 'name' is zero value.");
        expect("POST", API "/registered_models", "{\"name\":\"\"}", 422, "required field 'name'");
        expect("POST", API "/model_versions", "{\"name\":\"v\"}", 422, "registeredModelId");
        expect("POST", API "/serving_environments", "{\"description\":\"x\"}", 422, "name");
        expect("POST", API "/inference_services", "{\"registeredModelId\":\"1\"}", 422,
               "servingEnvironmentId");
        expect("POST", API "/experiment_runs", "{\"name\":\"r\"}", 422, "experimentId");
        cr_assert_eq(list_size(API "/registered_models"), 0);
}

Test(registry, conflicts)
{
        create(API "/registered_models", "{\"name\":\"a\",\"externalId\":\"e1\"}", 201);
        expect("POST", API "/registered_models", "{\"name\":\"a\"}", 409,
               "registered model with name a already exists: conflict");
        /* externalId is unique across all context kinds */
        expect("POST", API "/experiments", "{\"name\":\"x\",\"externalId\":\"e1\"}", 409,
               "conflict");
        create(API "/registered_models", "{\"name\":\"b\"}", 201);
        /* version names are scoped by registered model */
        create(API "/model_versions", "{\"name\":\"v1\",\"registeredModelId\":\"1\"}", 201);
        create(API "/model_versions", "{\"name\":\"v1\",\"registeredModelId\":\"2\"}", 201);
        expect("POST", API "/model_versions", "{\"name\":\"v1\",\"registeredModelId\":\"1\"}", 409,
               "model version with name v1 already exists");
        /* externalId clash on PATCH */
        expect("PATCH", API "/registered_models/2", "{\"externalId\":\"e1\"}", 409, "conflict");
        cr_assert_eq(list_size(API "/registered_models"), 2);
        cr_assert_eq(list_size(API "/model_versions"), 2);
}

/* The body of one entity: extra members, the parent's id under parent_key, name, externalId. */
static void entity_body(char *buf, size_t size, const char *extra, const char *parent_key,
                        const char *parent_id, const char *name, const char *ext)
{
        char parent[128] = "";

        if (parent_key)
                (void)snprintf(parent, sizeof(parent), "\"%s\":\"%s\",", parent_key, parent_id);
        (void)snprintf(buf, size, "{%s%s\"name\":\"%s\",\"externalId\":\"%s\"}", extra, parent,
                       name, ext);
}

/* A second entity with a new name and a taken externalId gets a 409 that names externalId, not
 * the name, for every kind (issue 28 item 6). */
Test(registry, external_id_conflicts_name_the_external_id_for_every_kind)
{
        static const struct {
                const char *path, *word, *ext, *extra, *parent_key;
                size_t parent; /* the row whose id is the parent's (with parent_key) */
        } kinds[] = {
                { API "/registered_models", "registered model", "x-rm", "", NULL, 0 },
                { API "/model_versions", "model version", "x-mv", "", "registeredModelId", 0 },
                { API "/serving_environments", "serving environment", "x-se", "", NULL, 0 },
                { API "/inference_services", "inference service", "x-is",
                  "\"registeredModelId\":\"1\",", "servingEnvironmentId", 2 },
                { API "/experiments", "experiment", "x-ex", "", NULL, 0 },
                { API "/experiment_runs", "experiment run", "x-er", "", "experimentId", 4 },
                { API "/artifacts", "model artifact", "x-ma",
                  "\"artifactType\":\"model-artifact\",", NULL, 0 },
                { API "/artifacts", "doc artifact", "x-da", "\"artifactType\":\"doc-artifact\",",
                  NULL, 0 },
        };
        char ids[ELEMENTSOF(kinds)][32], body[512], want[256], path[256];

        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                const char *pid = kinds[i].parent_key ? ids[kinds[i].parent] : "";
                char name[64];

                (void)snprintf(name, sizeof(name), "first-%zu", i);
                entity_body(body, sizeof(body), kinds[i].extra, kinds[i].parent_key, pid, name,
                            kinds[i].ext);
                (void)snprintf(ids[i], sizeof(ids[i]), "%s", create(kinds[i].path, body, 201));
                (void)snprintf(name, sizeof(name), "second-%zu", i);
                entity_body(body, sizeof(body), kinds[i].extra, kinds[i].parent_key, pid, name,
                            kinds[i].ext);
                (void)snprintf(want, sizeof(want), "%s with externalId %s already exists: conflict",
                               kinds[i].word, kinds[i].ext);
                expect("POST", kinds[i].path, body, 409, want);
        }
        cr_assert_str_eq(ids[0], "1");
        /* the name clash still names the name */
        expect("POST", API "/registered_models", "{\"name\":\"first-0\"}", 409,
               "registered model with name first-0 already exists: conflict");
        /* a PATCH to a taken externalId names it too */
        (void)snprintf(path, sizeof(path), API "/registered_models/%s",
                       create(API "/registered_models", "{\"name\":\"other\"}", 201));
        expect("PATCH", path, "{\"externalId\":\"x-rm\"}", 409,
               "registered model with externalId x-rm already exists: conflict");
        /* serve models (executions) */
        (void)snprintf(path, sizeof(path), API "/inference_services/%s/serves", ids[3]);
        (void)snprintf(body, sizeof(body), "{\"modelVersionId\":\"%s\",\"externalId\":\"x-sm\"}",
                       ids[1]);
        create(path, body, 201);
        expect("POST", path, body, 409,
               "serve model with externalId x-sm already exists: conflict");
}

/* ---------------------------------------------------------------- versions and artifacts */

Test(registry, model_versions)
{
        json_t *j;

        create(API "/registered_models", "{\"name\":\"rm\"}", 201);
        expect("POST", API "/model_versions", "{\"name\":\"v\",\"registeredModelId\":\"77\"}", 404,
               "not found");
        create(API "/model_versions",
               "{\"name\":\"v1\",\"registeredModelId\":\"1\",\"author\":\"me\"}", 201);
        /* nested create: body must carry registeredModelId (422), the path wins */
        expect("POST", API "/registered_models/1/versions", "{\"name\":\"v2\"}", 422,
               "registeredModelId");
        j = NULL;
        cr_assert_eq(
                req("POST", API "/registered_models/1/versions",
                    "{\"name\":\"v2\",\"registeredModelId\":\"999\",\"id\":\"5\",\"createTimeSinceEpoch\":\"1\"}",
                    &j),
                201);
        cr_assert_str_eq(js(j, "registeredModelId"), "1");
        cr_assert_str_eq(js(j, "id"), "3");
        cr_assert_str_eq(js(j, "state"), "LIVE");
        json_decref(j);
        cr_assert_eq(list_size(API "/registered_models/1/versions"), 2);
        cr_assert_eq(list_size(API "/registered_models/1/versions?name=v2"), 1);
        cr_assert_eq(list_size(API "/registered_models/42/versions"), 0);
        j = get_ok(API "/registered_models/1/versions?sortOrder=DESC");
        cr_assert_str_eq(js(json_array_get(json_object_get(j, "items"), 0), "name"), "v2");
        json_decref(j);
        j = get_ok(API "/model_version?name=v1&parentResourceId=1");
        cr_assert_str_eq(js(j, "author"), "me");
        json_decref(j);
        expect("GET", API "/model_version?name=v1", NULL, 400, "invalid parameters call");
        expect("GET", API "/model_version?name=v1&parentResourceId=2", NULL, 404, "not found");
        /* registeredModelId is immutable */
        expect("PATCH", API "/model_versions/2", "{\"registeredModelId\":\"3\"}", 400,
               "unknown field");
        cr_assert_eq(req("PATCH", API "/model_versions/2", "{\"state\":\"ARCHIVED\"}", &j), 200);
        cr_assert_str_eq(js(j, "state"), "ARCHIVED");
        json_decref(j);
        cr_assert_eq(filter_size("model_versions", "state = 'ARCHIVED'"), 1);
        cr_assert_eq(filter_size("model_versions", "registeredModelId = 1"), 2);
}

Test(registry, artifacts_upsert_and_union)
{
        json_t *j = NULL;

        create(API "/registered_models", "{\"name\":\"rm\"}", 201);
        create(API "/model_versions", "{\"name\":\"v1\",\"registeredModelId\":\"1\"}", 201);
        /* model and doc artifacts: 201; dataset/metric/parameter: 200 (upstream quirk) */
        cr_assert_eq(req("POST", API "/model_versions/2/artifacts",
                         "{\"artifactType\":\"model-artifact\",\"name\":\"m\",\"uri\":\"s3://b/p\","
                         "\"modelFormatName\":\"onnx\",\"modelFormatVersion\":\"1\"}",
                         &j),
                     201);
        cr_assert_str_eq(js(j, "id"), "1");
        cr_assert_str_eq(js(j, "artifactType"), "model-artifact");
        cr_assert_str_eq(js(j, "state"), "UNKNOWN");
        cr_assert_str_eq(js(j, "uri"), "s3://b/p");
        json_decref(j);
        create(API "/model_versions/2/artifacts",
               "{\"artifactType\":\"doc-artifact\",\"name\":\"readme\",\"uri\":\"u\"}", 201);
        create(API "/model_versions/2/artifacts",
               "{\"artifactType\":\"dataset-artifact\",\"name\":\"ds\",\"digest\":\"x\"}", 200);
        create(API "/model_versions/2/artifacts",
               "{\"artifactType\":\"parameter\",\"name\":\"lr\",\"value\":\"0.1\",\"parameterType\":\"number\"}",
               200);
        /* parameter logged again by name: updated in place */
        cr_assert_eq(req("POST", API "/model_versions/2/artifacts",
                         "{\"artifactType\":\"parameter\",\"name\":\"lr\",\"value\":\"0.2\"}", &j),
                     200);
        cr_assert_str_eq(js(j, "value"), "0.2");
        cr_assert_str_eq(js(j, "id"), "4");
        json_decref(j);
        expect("POST", API "/model_versions/2/artifacts",
               "{\"artifactType\":\"model-artifact\",\"name\":\"m\"}", 409, "conflict");
        expect("POST", API "/model_versions/2/artifacts", "{\"name\":\"m\"}", 400,
               "invalid artifact type");
        expect("POST", API "/model_versions/2/artifacts", "{\"artifactType\":\"bogus\"}", 400,
               "invalid artifact type");
        expect("POST", API "/model_versions/99/artifacts", "{\"artifactType\":\"doc-artifact\"}",
               404, "not found");

        cr_assert_eq(list_size(API "/model_versions/2/artifacts"), 4);
        cr_assert_eq(list_size(API "/model_versions/2/artifacts?artifactType=model-artifact"), 1);
        cr_assert_eq(list_size(API "/model_versions/2/artifacts?name=readme"), 1);
        expect("GET", API "/model_versions/2/artifacts?artifactType=nope", NULL, 400,
               "invalid artifact type");
        expect("GET", API "/artifacts?artifactType=", NULL, 400, "invalid artifact type");
        cr_assert_eq(list_size(API "/artifacts"), 4);
        cr_assert_eq(list_size(API "/model_artifacts"), 1);

        /* upsert with id updates and links */
        create(API "/model_versions", "{\"name\":\"v2\",\"registeredModelId\":\"1\"}", 201);
        cr_assert_eq(req("POST", API "/model_versions/3/artifacts",
                         "{\"artifactType\":\"model-artifact\",\"id\":\"1\",\"uri\":\"s3://new\"}",
                         &j),
                     200);
        cr_assert_str_eq(js(j, "uri"), "s3://new");
        cr_assert_str_eq(js(j, "modelFormatName"), "onnx");
        json_decref(j);
        cr_assert_eq(list_size(API "/model_versions/3/artifacts"), 1);
        expect("POST", API "/model_versions/3/artifacts",
               "{\"artifactType\":\"doc-artifact\",\"id\":\"1\"}", 400, "not a doc-artifact");

        /* generic artifact endpoints */
        j = get_ok(API "/artifacts/2");
        cr_assert_str_eq(js(j, "artifactType"), "doc-artifact");
        json_decref(j);
        expect("PATCH", API "/artifacts/2", "{\"artifactType\":\"model-artifact\"}", 400,
               "cannot change artifact type from 'doc-artifact' to 'model-artifact'");
        cr_assert_eq(req("PATCH", API "/artifacts/2",
                         "{\"artifactType\":\"doc-artifact\",\"state\":\"LIVE\"}", &j),
                     200);
        cr_assert_str_eq(js(j, "state"), "LIVE");
        json_decref(j);
        cr_assert_eq(req("PATCH", API "/artifacts/2", "{\"description\":\"x\"}", &j), 200);
        cr_assert_str_eq(js(j, "state"), "LIVE");
        json_decref(j);
        j = get_ok(API "/artifact?name=readme&parentResourceId=2");
        cr_assert_str_eq(js(j, "id"), "2");
        json_decref(j);
        expect("GET", API "/artifact?name=readme", NULL, 400, "invalid parameters call");
        create(API "/artifacts", "{\"artifactType\":\"doc-artifact\",\"name\":\"readme\"}", 201);
        create(API "/artifacts", "{\"artifactType\":\"doc-artifact\",\"name\":\"readme\"}", 201);
        expect("POST", API "/artifacts", "{\"name\":\"x\"}", 400, "invalid artifact type");
        expect("POST", API "/artifacts",
               "{\"artifactType\":\"doc-artifact\",\"modelFormatName\":\"x\"}", 400,
               "unknown field");

        /* model_artifacts collection */
        cr_assert_eq(req("POST", API "/model_artifacts", "{\"uri\":\"s3://x\"}", &j), 201);
        cr_assert_str_eq(js(j, "artifactType"), "model-artifact");
        cr_assert_eq(strlen(js(j, "name")), 36); /* generated UUID */
        json_decref(j);
        /* upstream ignores artifactType on POST /model_artifacts (test-registry-limits.c) */
        expect("POST", API "/model_artifacts", "{\"artifactType\":\"doc-artifact\"}", 201, NULL);
        cr_assert_eq(req("PATCH", API "/model_artifacts/1", "{\"storageKey\":\"k\"}", &j), 200);
        cr_assert_str_eq(js(j, "storageKey"), "k");
        json_decref(j);
        expect("GET", API "/model_artifacts/2", NULL, 404, "not found");
        j = get_ok(API "/model_artifact?name=m&parentResourceId=3");
        cr_assert_str_eq(js(j, "id"), "1");
        json_decref(j);
}

/* ---------------------------------------------------------------- serving */

Test(registry, serving_environments_inference_services_serves)
{
        json_t *j = NULL;

        create(API "/registered_models", "{\"name\":\"rm\"}", 201);
        create(API "/model_versions", "{\"name\":\"v1\",\"registeredModelId\":\"1\"}", 201);
        create(API "/model_versions", "{\"name\":\"v2\",\"registeredModelId\":\"1\"}", 201);
        create(API "/serving_environments", "{\"name\":\"ns\"}", 201);
        j = get_ok(API "/serving_environment?name=ns");
        cr_assert_str_eq(js(j, "id"), "4");
        json_decref(j);
        expect("POST", API "/inference_services",
               "{\"name\":\"is\",\"registeredModelId\":\"1\",\"servingEnvironmentId\":\"99\"}", 404,
               "no serving environment found for id 99: not found");
        cr_assert_eq(
                req("POST", API "/inference_services",
                    "{\"name\":\"is\",\"registeredModelId\":\"1\",\"servingEnvironmentId\":\"4\",\"runtime\":\"kserve\"}",
                    &j),
                201);
        cr_assert_str_eq(js(j, "desiredState"), "DEPLOYED");
        cr_assert_str_eq(js(j, "id"), "5");
        json_decref(j);
        /* latest version when modelVersionId is unset */
        j = get_ok(API "/inference_services/5/version");
        cr_assert_str_eq(js(j, "name"), "v2");
        json_decref(j);
        j = get_ok(API "/inference_services/5/model");
        cr_assert_str_eq(js(j, "name"), "rm");
        json_decref(j);
        cr_assert_eq(req("PATCH", API "/inference_services/5",
                         "{\"modelVersionId\":\"2\",\"desiredState\":\"UNDEPLOYED\"}", &j),
                     200);
        json_decref(j);
        j = get_ok(API "/inference_services/5/version");
        cr_assert_str_eq(js(j, "name"), "v1");
        json_decref(j);
        cr_assert_eq(req("PATCH", API "/inference_services/5", "{\"runtime\":\"x\"}", &j), 200);
        cr_assert_str_eq(js(j, "desiredState"), "UNDEPLOYED");
        json_decref(j);
        expect("PATCH", API "/inference_services/5", "{\"servingEnvironmentId\":\"4\"}", 400,
               "unknown field");

        /* nested create: path wins */
        cr_assert_eq(
                req("POST", API "/serving_environments/4/inference_services",
                    "{\"name\":\"is2\",\"registeredModelId\":\"1\",\"servingEnvironmentId\":\"1\"}",
                    &j),
                201);
        cr_assert_str_eq(js(j, "servingEnvironmentId"), "4");
        json_decref(j);
        expect("POST", API "/serving_environments/4/inference_services",
               "{\"name\":\"is\",\"registeredModelId\":\"1\",\"servingEnvironmentId\":\"4\"}", 409,
               "conflict");
        cr_assert_eq(list_size(API "/serving_environments/4/inference_services"), 2);
        j = get_ok(API "/inference_service?name=is2&parentResourceId=4");
        cr_assert_str_eq(js(j, "id"), "6");
        json_decref(j);
        cr_assert_eq(filter_size("inference_services", "desiredState = 'UNDEPLOYED'"), 1);

        /* serve models (executions: own id sequence) */
        cr_assert_eq(req("POST", API "/inference_services/5/serves", "{\"modelVersionId\":\"2\"}",
                         &j),
                     201);
        cr_assert_str_eq(js(j, "id"), "1");
        cr_assert_str_eq(js(j, "lastKnownState"), "UNKNOWN");
        json_decref(j);
        expect("POST", API "/inference_services/5/serves", "{}", 422, "modelVersionId");
        expect("POST", API "/inference_services/77/serves", "{\"modelVersionId\":\"2\"}", 404,
               "not found");
        expect("POST", API "/inference_services/5/serves",
               "{\"modelVersionId\":\"2\",\"lastKnownState\":\"BAD\"}", 400, "not a valid");
        cr_assert_eq(list_size(API "/inference_services/5/serves"), 1);
        cr_assert_eq(list_size(API "/inference_services/6/serves"), 0);
        expect("GET", API "/inference_services/99/model", NULL, 404, "not found");
}

/* Id references in bodies are positive int32s: 0 or a negative id is a 400, nothing stored. */
Test(registry, id_references_must_be_positive)
{
        json_t *j = NULL;

        create(API "/registered_models", "{\"name\":\"rm\"}", 201);
        create(API "/serving_environments", "{\"name\":\"ns\"}", 201);
        create(API "/experiments", "{\"name\":\"ex\"}", 201);
        expect("POST", API "/inference_services",
               "{\"name\":\"is\",\"registeredModelId\":\"0\",\"servingEnvironmentId\":\"2\"}", 400,
               "invalid registeredModelId: \"0\" is not a positive id");
        expect("POST", API "/serving_environments/2/inference_services",
               "{\"name\":\"is\",\"registeredModelId\":\"1\",\"servingEnvironmentId\":\"2\",\"modelVersionId\":\"-4\"}",
               400, "invalid modelVersionId: \"-4\" is not a positive id");
        expect("POST", API "/model_versions", "{\"name\":\"v\",\"registeredModelId\":\"-1\"}", 400,
               "is not a positive id");
        expect("POST", API "/experiment_runs", "{\"experimentId\":\"0\"}", 400,
               "invalid experimentId: \"0\" is not a positive id");
        cr_assert_eq(list_size(API "/inference_services"), 0);
        cr_assert_eq(list_size(API "/model_versions"), 0);
        cr_assert_eq(list_size(API "/experiment_runs"), 0);

        cr_assert_eq(
                req("POST", API "/inference_services",
                    "{\"name\":\"is\",\"registeredModelId\":\"1\",\"servingEnvironmentId\":\"2\"}",
                    &j),
                201);
        json_decref(j);
        expect("PATCH", API "/inference_services/4", "{\"modelVersionId\":\"-1\"}", 400,
               "invalid modelVersionId: \"-1\" is not a positive id");
        /* an optional reference of "0" means none, as upstream reads it (B.3 #30) */
        cr_assert_eq(req("PATCH", API "/inference_services/4", "{\"modelVersionId\":\"0\"}", &j),
                     200);
        json_decref(j);
        j = get_ok(API "/inference_services/4");
        cr_assert_null(json_object_get(j, "modelVersionId"));
        json_decref(j);
        cr_assert_eq(
                req("POST", API "/inference_services",
                    "{\"name\":\"is0\",\"registeredModelId\":\"1\",\"servingEnvironmentId\":\"2\","
                    "\"modelVersionId\":\"0\"}",
                    &j),
                201);
        cr_assert_null(json_object_get(j, "modelVersionId"), "modelVersionId 0 was stored");
        json_decref(j);
        expect("POST", API "/inference_services/4/serves", "{\"modelVersionId\":\"-2\"}", 400,
               "is not a positive id");
        cr_assert_eq(list_size(API "/inference_services/4/serves"), 0);
}

/* ---------------------------------------------------------------- experiments */

Test(registry, experiments_runs_metrics)
{
        json_t *j = NULL;

        create(API "/experiments", "{\"name\":\"exp\",\"owner\":\"me\"}", 201);
        expect("POST", API "/experiment_runs", "{\"name\":\"r\",\"experimentId\":\"9\"}", 404,
               "experiment not found");
        cr_assert_eq(
                req("POST", API "/experiment_runs",
                    "{\"name\":\"r1\",\"experimentId\":\"1\",\"startTimeSinceEpoch\":\"1000\"}",
                    &j),
                201);
        cr_assert_str_eq(js(j, "status"), "RUNNING");
        cr_assert_str_eq(js(j, "state"), "LIVE");
        json_decref(j);
        expect("PATCH", API "/experiment_runs/2", "{\"endTimeSinceEpoch\":\"10\"}", 400,
               "endTimeSinceEpoch");
        expect("PATCH", API "/experiment_runs/2", "{\"startTimeSinceEpoch\":\"10\"}", 400,
               "unknown field");
        cr_assert_eq(req("PATCH", API "/experiment_runs/2",
                         "{\"endTimeSinceEpoch\":\"2000\",\"status\":\"FINISHED\"}", &j),
                     200);
        json_decref(j);
        cr_assert_eq(req("PATCH", API "/experiment_runs/2", "{\"owner\":\"x\"}", &j), 200);
        cr_assert_str_eq(js(j, "status"), "FINISHED");
        json_decref(j);
        create(API "/experiments/1/experiment_runs", "{\"name\":\"r2\",\"experimentId\":\"1\"}",
               201);
        cr_assert_eq(list_size(API "/experiments/1/experiment_runs"), 2);
        j = get_ok(API "/experiment_run?name=r2&parentResourceId=1");
        json_decref(j);
        j = get_ok(API "/experiment?name=exp");
        json_decref(j);

        /* metrics: value required, logged by name, history kept */
        expect("POST", API "/experiment_runs/2/artifacts",
               "{\"artifactType\":\"metric\",\"name\":\"acc\"}", 400, "metric value is required");
        cr_assert_eq(req("POST", API "/experiment_runs/2/artifacts",
                         "{\"artifactType\":\"metric\",\"name\":\"acc\",\"value\":0.5,\"step\":1}",
                         &j),
                     200);
        cr_assert_str_eq(js(j, "experimentRunId"), "2");
        cr_assert_str_eq(js(j, "experimentId"), "1");
        json_decref(j);
        cr_assert_eq(req("POST", API "/experiment_runs/2/artifacts",
                         "{\"artifactType\":\"metric\",\"name\":\"acc\",\"value\":0.75,\"step\":2}",
                         &j),
                     200);
        cr_assert_eq(json_real_value(json_object_get(j, "value")), 0.75);
        json_decref(j);
        cr_assert_eq(list_size(API "/experiment_runs/2/artifacts"), 1);
        cr_assert_eq(list_size(API "/experiment_runs/2/artifacts?artifactType=metric"), 1);
        cr_assert_eq(list_size(API "/experiment_runs/2/metric_history"), 2);
        cr_assert_eq(list_size(API "/experiment_runs/2/metric_history?stepIds=2"), 1);
        cr_assert_eq(list_size(API "/experiment_runs/2/metric_history?name=acc&stepIds=1,2"), 2);
        cr_assert_eq(list_size(API "/experiment_runs/metric_history?name=acc"), 2);
        cr_assert_eq(list_size(API "/experiment_runs/2/metric_history?name=loss"), 0);
        expect("GET", API "/experiment_runs/2/metric_history?stepIds=1,x", NULL, 400,
               "invalid step ID 'x'");
        /* a long multi-byte item is cut to 31 bytes mid-character in the message: still a 400 */
        expect("GET",
               API "/experiment_runs/metric_history?name=a&stepIds="
                   "%CE%A9%E2%89%88%C3%A7%E2%88%9A%E2%88%AB%CB%9C%C2%B5%E2%89%A4%E2%89%A5%C3%B7"
                   "%C3%A5%C3%9F%E2%88%82%C6%92",
               NULL, 400, "invalid step ID");
        /* history rows are not artifacts */
        cr_assert_eq(list_size(API "/artifacts"), 1);
}

/* ---------------------------------------------------------------- pagination */

static void walk_pages(const char *params, const char *const *want, size_t n_want)
{
        char path[2048], tok[1100] = "";
        size_t seen = 0;

        for (int guard = 0; guard < 20; guard++) {
                json_t *j, *items;
                char *enc = urlenc(tok);

                (void)snprintf(path, sizeof(path), API "/registered_models?pageSize=2&%s%s%s",
                               params, tok[0] ? "&nextPageToken=" : "", tok[0] ? enc : "");
                free(enc);
                j = get_ok(path);
                items = json_object_get(j, "items");
                cr_assert_eq(json_integer_value(json_object_get(j, "pageSize")), 2);
                for (size_t i = 0; i < json_array_size(items); i++) {
                        cr_assert_lt(seen, n_want);
                        cr_assert_str_eq(js(json_array_get(items, i), "name"), want[seen]);
                        seen++;
                }
                (void)snprintf(tok, sizeof(tok), "%s", js(j, "nextPageToken"));
                json_decref(j);
                if (!tok[0])
                        break;
        }
        cr_assert_eq(seen, n_want);
}

Test(registry, pagination)
{
        static const char *const asc[] = { "m1", "m2", "m3", "m4", "m5" };
        static const char *const desc[] = { "m5", "m4", "m3", "m2", "m1" };
        json_t *j;

        for (int i = 1; i <= 5; i++) {
                char body[64];
                (void)snprintf(body, sizeof(body), "{\"name\":\"m%d\"}", i);
                create(API "/registered_models", body, 201);
        }
        walk_pages("", asc, 5);
        walk_pages("sortOrder=DESC", desc, 5);
        walk_pages("orderBy=CREATE_TIME", asc, 5);
        walk_pages("orderBy=LAST_UPDATE_TIME&sortOrder=DESC", desc, 5);
        walk_pages("orderBy=BOGUS&sortOrder=bogus", asc, 5); /* unknown values fall back */

        /* token format: base64("<id>:<value>") */
        j = get_ok(API "/registered_models?pageSize=2");
        cr_assert_str_eq(js(j, "nextPageToken"), "Mjoy"); /* "2:2" */
        json_decref(j);
        j = get_ok(API "/registered_models?pageSize=0");
        cr_assert_eq(json_array_size(json_object_get(j, "items")), 5);
        cr_assert_str_eq(js(j, "nextPageToken"), "");
        json_decref(j);
        cr_assert_eq(list_size(API "/registered_models?pageSize=5"), 5);
        cr_assert_eq(list_size(API "/registered_models?pageSize=2147483647"), 5);
        expect("GET", API "/registered_models?pageSize=abc", NULL, 400, "invalid numeric string");
        expect("GET", API "/registered_models?pageSize=99999999999", NULL, 400,
               "invalid numeric string");
        expect("GET", API "/registered_models?nextPageToken=%21%21%21", NULL, 400,
               "invalid nextPageToken");
        expect("GET", API "/registered_models?nextPageToken=YWJj", NULL, 400,
               "invalid nextPageToken"); /* "abc" */
        /* a filter combined with pagination */
        cr_assert_eq(list_size(API
                               "/registered_models?pageSize=2&filterQuery=name%20%3E%20%27m2%27"),
                     2);
}

/* ---------------------------------------------------------------- filterQuery */

Test(registry, filter_query_grammar)
{
        create(API "/registered_models",
               "{\"name\":\"model-a\",\"owner\":\"alice\",\"customProperties\":{"
               "\"framework\":{\"metadataType\":\"MetadataStringValue\",\"string_value\":\"pytorch\"},"
               "\"accuracy\":{\"metadataType\":\"MetadataDoubleValue\",\"double_value\":0.97},"
               "\"epochs\":{\"metadataType\":\"MetadataIntValue\",\"int_value\":\"10\"},"
               "\"prod\":{\"metadataType\":\"MetadataBoolValue\",\"bool_value\":true},"
               "\"mlflow.source.type\":{\"metadataType\":\"MetadataStringValue\",\"string_value\":\"notebook\"}}}",
               201);
        create(API "/registered_models",
               "{\"name\":\"model-b\",\"owner\":\"bob\",\"state\":\"ARCHIVED\",\"customProperties\":{"
               "\"framework\":{\"metadataType\":\"MetadataStringValue\",\"string_value\":\"tensorflow\"},"
               "\"accuracy\":{\"metadataType\":\"MetadataDoubleValue\",\"double_value\":0.80},"
               "\"epochs\":{\"metadataType\":\"MetadataDoubleValue\",\"double_value\":3}}}",
               201);
        create(API "/registered_models", "{\"name\":\"m_c%\",\"owner\":\"carol\"}", 201);

        cr_assert_eq(filter_size("registered_models", ""), 3);
        cr_assert_eq(filter_size("registered_models", "   "), 3);
        cr_assert_eq(filter_size("registered_models", "name = \"model-a\""), 1);
        cr_assert_eq(filter_size("registered_models", "name = 'model-a'"), 1);
        cr_assert_eq(filter_size("registered_models", "name != 'model-a'"), 2);
        cr_assert_eq(filter_size("registered_models", "name <> 'model-a'"),
                     2); /* deviation: not-equal */
        cr_assert_eq(filter_size("registered_models", "name LIKE 'model-%'"), 2);
        cr_assert_eq(filter_size("registered_models", "name LIKE 'MODEL-%'"), 0);
        cr_assert_eq(filter_size("registered_models", "name ILIKE 'MODEL-%'"), 2);
        cr_assert_eq(filter_size("registered_models", "name like 'model-_'"), 2);
        /* '%' and '_' are literal under '=' */
        cr_assert_eq(filter_size("registered_models", "name = 'model-%'"), 0);
        cr_assert_eq(filter_size("registered_models", "name = 'm_c%'"), 1);
        cr_assert_eq(filter_size("registered_models", "name LIKE 'm\\_c\\%'"), 1);
        cr_assert_eq(filter_size("registered_models", "accuracy > 0.95"), 1);
        cr_assert_eq(filter_size("registered_models", "accuracy >= 0.80"), 2);
        cr_assert_eq(filter_size("registered_models", "epochs > 5"),
                     1); /* int literal: int or double */
        cr_assert_eq(filter_size("registered_models", "epochs < 5"), 1);
        cr_assert_eq(filter_size("registered_models", "epochs.int_value = 10"), 1);
        cr_assert_eq(filter_size("registered_models", "epochs.double_value = 3"), 1);
        cr_assert_eq(filter_size("registered_models", "prod = true"), 1);
        cr_assert_eq(filter_size("registered_models", "prod = FALSE"), 0);
        cr_assert_eq(filter_size("registered_models", "framework.string_value = 'pytorch'"), 1);
        cr_assert_eq(filter_size("registered_models", "`mlflow.source.type` = 'notebook'"), 1);
        cr_assert_eq(filter_size("registered_models", "mlflow.source.type = 'notebook'"), 1);
        cr_assert_eq(filter_size("registered_models",
                                 "(name = 'model-a' OR name = 'model-b') AND state = 'LIVE'"),
                     1);
        cr_assert_eq(filter_size("registered_models",
                                 "name = 'model-a' OR name = 'model-b' AND state = 'LIVE'"),
                     1);
        cr_assert_eq(filter_size("registered_models",
                                 "name = 'model-b' OR name = 'model-a' AND state = 'ARCHIVED'"),
                     1);
        cr_assert_eq(filter_size("registered_models", "owner IN ('alice', 'carol')"), 2);
        cr_assert_eq(filter_size("registered_models", "owner IN ()"), 0);
        cr_assert_eq(filter_size("registered_models", "id IN (1, 3)"), 2);
        cr_assert_eq(filter_size("registered_models", "id > 1 and id <= 3"), 2);
        cr_assert_eq(filter_size("registered_models", "createTimeSinceEpoch > 0"), 3);
        cr_assert_eq(filter_size("registered_models", "state = 5"),
                     0); /* type mismatch matches nothing */
        cr_assert_eq(filter_size("registered_models", "nosuch = 'x'"), 0);
        cr_assert_eq(filter_size("registered_models", "name = 'model-a' -- comment\n"), 1);
        cr_assert_eq(filter_size("registered_models", "name = 'it\\'s'"), 0);

        expect("GET", API "/registered_models?filterQuery=name%20%3D", NULL, 400,
               "invalid filter query");
        expect("GET", API "/registered_models?filterQuery=name%20%3D%20%27x", NULL, 400,
               "unterminated");
        expect("GET", API "/registered_models?filterQuery=%28name%20%3D%20%27x%27", NULL, 400,
               "invalid filter query");
        expect("GET", API "/registered_models?filterQuery=name%20%3D%20%27x%27%20garbage", NULL,
               400, "invalid filter query");
        expect("GET", API "/registered_models?filterQuery=%3D%3D", NULL, 400,
               "invalid filter query");
        /* bytes of UTF-8 in the query: a clean 400 whose body is valid JSON */
        expect("GET", API "/registered_models?filterQuery=%C2%95%07%C2%8D", NULL, 400,
               "invalid filter query");
}

Test(registry, filter_query_nesting_is_bounded)
{
        char q[512] = "", *e, path[2048];

        for (int i = 0; i < 100; i++)
                q[i] = '(';
        (void)snprintf(q + 100, sizeof(q) - 100, "name = 'x'");
        e = urlenc(q);
        (void)snprintf(path, sizeof(path), API "/registered_models?filterQuery=%s", e);
        free(e);
        expect("GET", path, NULL, 400, "too deep");
}

/* The documented bound: 256 comparisons work on both stores, the 257th is a clean 400. */
Test(registry, filter_query_256_comparisons)
{
        size_t cap = 256 * 48 + 64, k = 0;
        char *q = malloc(cap), *e, *path;
        json_t *j = NULL;
        long st;

        cr_assert_not_null(q);
        (void)create(API "/registered_models", "{\"name\":\"m-255\",\"owner\":\"o\"}", 201);
        /* the name AND (254 custom-property comparisons OR owner): 256, one match */
        k += (size_t)snprintf(q + k, cap - k, "name = 'm-255' AND (");
        for (int i = 0; i < 254; i++)
                k += (size_t)snprintf(q + k, cap - k, "%sp%d = %d", i ? " OR " : "", i, i);
        (void)snprintf(q + k, cap - k, " OR owner = 'o')");
        e = urlenc(q);
        cr_assert(asprintf(&path, API "/registered_models?filterQuery=%s", e) > 0);
        free(e);
        st = req("GET", path, NULL, &j);
        cr_assert_eq(st, 200, "256 comparisons -> %ld %s", st, j ? json_dumps(j, 0) : "");
        cr_assert_eq(json_array_size(json_object_get(j, "items")), 1);
        json_decref(j);
        free(path);

        (void)snprintf(q + k, cap - k, " OR owner = 'o' OR p9999 = 1)"); /* 257 */
        e = urlenc(q);
        cr_assert(asprintf(&path, API "/registered_models?filterQuery=%s", e) > 0);
        free(e);
        expect("GET", path, NULL, 400, "too many comparisons (limit 256)");
        free(path);
        free(q);
}

/* ---------------------------------------------------------------- bad input */

Test(registry, bad_input_changes_nothing)
{
        struct reply r;
        static const char *const bad[] = {
                "{",
                "{\"name\":\"x\",}",
                "[]",
                "\"x\"",
                "{\"name\":5}",
                "{\"name\":\"x\",\"description\":true}",
                "{\"name\":\"x\",\"language\":\"en\"}",
                "{\"name\":\"x\",\"language\":[1]}",
                "{\"name\":\"x\",\"bogus\":1}",
                "{\"name\":\"x\",\"customProperties\":[]}",
                "{\"name\":\"x\",\"customProperties\":{\"k\":{\"metadataType\":\"MetadataIntValue\",\"int_value\":\"1.5\"}}}",
                "{\"name\":\"x\",\"customProperties\":{\"k\":{\"metadataType\":\"MetadataIntValue\",\"int_value\":\"99999999999\"}}}",
                "{\"name\":\"x\",\"customProperties\":{\"k\":{\"metadataType\":\"MetadataProtoValue\",\"type\":\"t\",\"proto_value\":\"AA==\"}}}",
                "{\"name\":\"x\",\"customProperties\":{\"k\":{\"string_value\":\"a\"}}}",
                "{\"name\":\"x\",\"customProperties\":{\"k\":{\"metadataType\":\"MetadataStringValue\",\"string_value\":\"a\",\"extra\":1}}}",
                "{\"name\":\"x\",\"customProperties\":{\"k\":{\"metadataType\":\"MetadataStructValue\",\"struct_value\":\"not base64!\"}}}",
                "{\"name\":\"x\",\"customProperties\":{\"k\":{\"metadataType\":\"MetadataBoolValue\",\"bool_value\":\"yes\"}}}",
                "{\"name\":\"x\",\"state\":\"DEAD\"}",
                "{\"name\":\"x\",\"name\":\"y\"}",
                "{\"name\":\"x\\u0000y\"}",
        };

        create(API "/registered_models", "{\"name\":\"keep\"}", 201);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                json_t *j = NULL;
                long st = req("POST", API "/registered_models", bad[i], &j);

                cr_assert_eq(st, 400, "body %s -> %ld %s", bad[i], st, j ? json_dumps(j, 0) : "");
                cr_assert_not_null(j, "body %s: error is not JSON", bad[i]);
                json_decref(j);
                st = req("PATCH", API "/registered_models/1", bad[i], &j);
                cr_assert(st == 400, "PATCH %s -> %ld", bad[i], st);
                json_decref(j);
        }
        /* empty body, invalid UTF-8, a NUL byte */
        expect("POST", API "/registered_models", "", 400, NULL);
        http_do("POST", API "/registered_models", "{\"name\":\"\xff\xfe\"}", 13, &r);
        cr_assert_eq(r.status, 400);
        reply_done(&r);
        http_do("POST", API "/registered_models", "{\"name\":\"a\0b\"}", 14, &r);
        cr_assert_eq(r.status, 400);
        cr_assert(r.body && strstr(r.body, "a raw NUL byte at offset 10"), "%s", r.body);
        reply_done(&r);
        expect("GET", API "/registered_models?filterQuery=%5Cu0000", NULL, 400, "null bytes");

        /* nothing changed */
        {
                json_t *j = get_ok(API "/registered_models/1");
                cr_assert_str_eq(js(j, "name"), "keep");
                cr_assert_eq(json_object_size(json_object_get(j, "customProperties")), 0);
                cr_assert_str_eq(js(j, "createTimeSinceEpoch"), js(j, "lastUpdateTimeSinceEpoch"));
                json_decref(j);
        }
        cr_assert_eq(list_size(API "/registered_models"), 1);
}

Test(registry, body_over_limit_is_413)
{
        size_t n = 100 * 1024;
        char *big = malloc(n + 64);
        struct reply r;

        cr_assert_not_null(big);
        memset(big, 'a', n + 64);
        memcpy(big, "{\"name\":\"", 9);
        memcpy(big + n + 50, "\"}", 3);
        http_do("POST", API "/registered_models", big, n + 52, &r);
        cr_assert_eq(r.status, 413);
        cr_assert_str_eq(json_string_value(json_object_get(r.json, "code")),
                         "Request Entity Too Large");
        cr_assert(json_is_string(json_object_get(r.json, "message")));
        reply_done(&r);
        free(big);
        cr_assert_eq(list_size(API "/registered_models"), 0);
}

Test(registry, sql_looking_strings_are_data)
{
        static const char *const names[] = {
                "x'; DROP TABLE entity; --",         "\" OR 1=1 --", "%", "_", "a:b:c",
                "Robert'); DELETE FROM property;--",
        };
        char body[256], path[512];
        json_t *j;

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                json_t *s = json_string(names[i]);
                char *enc = json_dumps(s, JSON_ENCODE_ANY);

                (void)snprintf(
                        body, sizeof(body),
                        "{\"name\":%s,\"customProperties\":{\"k\":{\"metadataType\":\"MetadataStringValue\",\"string_value\":%s}}}",
                        enc, enc);
                create(API "/registered_models", body, 201);
                free(enc);
                json_decref(s);
        }
        cr_assert_eq(list_size(API "/registered_models"), 6);
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                char *e = urlenc(names[i]);

                (void)snprintf(path, sizeof(path), API "/registered_model?name=%s", e);
                free(e);
                j = get_ok(path);
                cr_assert_str_eq(js(j, "name"), names[i]);
                json_decref(j);
        }
        /* '%' is not a wildcard in find-by-name */
        j = get_ok(API "/registered_model?name=%25");
        cr_assert_str_eq(js(j, "id"), "3");
        json_decref(j);
        /* doubled quotes are not an escape (upstream lexer): two literals, a parse error */
        expect("GET",
               API "/registered_models?filterQuery=name%20%3D%20%27x%27%27%20OR%201%3D1%20--%27",
               NULL, 400, "invalid filter query");
        cr_assert_eq(filter_size("registered_models", "name = 'x\\' OR 1=1 --'"), 0);
        expect("GET", API "/registered_models?filterQuery=1%3D1", NULL, 400,
               "invalid filter query");
        cr_assert_eq(filter_size("registered_models", "k = 'x\\'; DROP TABLE entity; --'"),
                     1); /* the literal is data: it equals one stored value */
        cr_assert_eq(filter_size("registered_models", "`k' OR '1'='1` = 'a'"), 0);
        cr_assert_eq(list_size(API "/registered_models"), 6);
}

/* ---------------------------------------------------------------- concurrency */

struct racer {
        long status;
};

static void *race(void *ud)
{
        struct racer *rc = ud;
        rc->status = req("POST", API "/registered_models", "{\"name\":\"same\"}", NULL);
        return NULL;
}

Test(registry, concurrent_creates_one_wins)
{
        pthread_t t[8];
        struct racer rc[8];
        int ok = 0, conflict = 0;

        for (int i = 0; i < 8; i++)
                cr_assert_eq(pthread_create(&t[i], NULL, race, &rc[i]), 0);
        for (int i = 0; i < 8; i++) {
                pthread_join(t[i], NULL);
                if (rc[i].status == 201)
                        ok++;
                else if (rc[i].status == 409)
                        conflict++;
        }
        cr_assert_eq(ok, 1);
        cr_assert_eq(conflict, 7);
        cr_assert_eq(list_size(API "/registered_models"), 1);
}

Test(registry, cors)
{
        CURL *c;
        struct curl_slist *h = NULL;
        char url[256];
        long status = 0;

        curl_global_init(CURL_GLOBAL_DEFAULT);
        c = curl_easy_init();
        (void)snprintf(url, sizeof(url), "%s" API "/registered_models", base_url());
        h = curl_slist_append(h, "Origin: https://ui.example");
        h = curl_slist_append(h, "Access-Control-Request-Method: PATCH");
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "OPTIONS");
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_NOBODY, 0L);
        cr_assert_eq(curl_easy_perform(c), CURLE_OK);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        cr_assert_eq(status, 200);
        {
                struct curl_header *hd = NULL;
                cr_assert_eq(curl_easy_header(c, "Access-Control-Allow-Origin", 0, CURLH_HEADER, -1,
                                              &hd),
                             CURLHE_OK);
                cr_assert_str_eq(hd->value, "https://ui.example");
                cr_assert_eq(curl_easy_header(c, "Access-Control-Allow-Methods", 0, CURLH_HEADER,
                                              -1, &hd),
                             CURLHE_OK);
                cr_assert(strstr(hd->value, "PATCH"));
        }
        curl_slist_free_all(h);
        curl_easy_cleanup(c);
}
