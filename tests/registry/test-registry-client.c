/* SPDX-License-Identifier: Apache-2.0 */
/* The C client (registry-client/client.h) against the real server: the controller's calls (spec A.7). */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "helpers.h"
#include "registry-client/client.h"

TestSuite(client, .init = reg_setup, .fini = reg_teardown, .timeout = 60);

static struct mr_client *new_client(void)
{
        struct mr_client_config cfg = { .base_url = base_url(), .token = "secret-token" };
        struct mr_client *c = NULL;

        cr_assert_eq(mr_client_new(&cfg, &c), 0);
        return c;
}

Test(client, controller_flow)
{
        CLEANUP(mr_client_freep) struct mr_client *c = new_client();
        struct error_detail err = { 0 };
        json_t *se = NULL, *is = NULL, *again = NULL, *patch;
        struct mr_inference_service_create in = { 0 };
        char se_id[32], is_id[32];

        /* 1/2: find-or-create the serving environment */
        cr_assert_eq(mr_find_serving_environment(c, "team-ns", &se, &err), -ENOENT);
        cr_assert_eq(err.status, 404);
        cr_assert(strstr(err.message, "not found"));
        cr_assert_eq(mr_create_serving_environment(c, "team-ns", &se, &err), 201);
        (void)snprintf(se_id, sizeof(se_id), "%s", json_string_value(json_object_get(se, "id")));
        json_decref(se);
        cr_assert_eq(mr_find_serving_environment(c, "team-ns", &se, &err), 200);
        cr_assert_str_eq(json_string_value(json_object_get(se, "id")), se_id);
        json_decref(se);
        cr_assert_eq(mr_create_serving_environment(c, "team-ns", NULL, &err), -EEXIST);
        cr_assert_eq(err.status, 409);

        create(API "/registered_models", "{\"name\":\"rm\"}", 201);

        /* 5/6: find-or-create the inference service "<name>/<uid>" */
        cr_assert_eq(mr_find_inference_service(c, "isvc/0b6e-uid", se_id, &is, &err), -ENOENT);
        in.name = "isvc/0b6e-uid";
        in.registered_model_id = "2";
        in.serving_environment_id = se_id;
        in.runtime = "kserve-ovms";
        in.url = "http://isvc.team-ns.example";
        cr_assert_eq(mr_create_inference_service(c, &in, &is, &err), 201, "%s", err.message);
        cr_assert_str_eq(json_string_value(json_object_get(is, "desiredState")), "DEPLOYED");
        cr_assert_str_eq(json_string_value(json_object_get(is, "runtime")), "kserve-ovms");
        (void)snprintf(is_id, sizeof(is_id), "%s", json_string_value(json_object_get(is, "id")));
        json_decref(is);
        cr_assert_eq(mr_find_inference_service(c, "isvc/0b6e-uid", se_id, &is, &err), 200);
        cr_assert_str_eq(json_string_value(json_object_get(is, "id")), is_id);
        json_decref(is);

        /* 3/4: get by id, patch the url */
        cr_assert_eq(mr_get_inference_service(c, is_id, &is, &err), 200);
        patch = json_pack("{s:{s:{s:s,s:s}}}", "customProperties", "url", "metadataType",
                          "MetadataStringValue", "string_value", "http://new");
        cr_assert_eq(mr_update_inference_service(c, is_id, patch, &again, &err), 200);
        json_decref(patch);
        cr_assert_str_eq(json_string_value(json_object_get(
                                 json_object_get(json_object_get(again, "customProperties"), "url"),
                                 "string_value")),
                         "http://new");
        json_decref(again);
        json_decref(is);

        /* 7: undeploy */
        patch = json_pack("{s:s}", "desiredState", "UNDEPLOYED");
        cr_assert_eq(mr_update_inference_service(c, is_id, patch, &again, &err), 200);
        cr_assert_str_eq(json_string_value(json_object_get(again, "desiredState")), "UNDEPLOYED");
        json_decref(again);
        json_decref(patch);

        /* errors */
        cr_assert_eq(mr_get_inference_service(c, "999", &is, &err), -ENOENT);
        /* escaped, so "x/y" stays one segment (RFC 3986 2.2) and is refused as an id, not routed */
        cr_assert_eq(mr_get_inference_service(c, "x/y", &is, &err), -EINVAL);
        cr_assert_eq(err.status, 400);
        in.registered_model_id = "not-a-number";
        in.name = "other";
        cr_assert_eq(mr_create_inference_service(c, &in, &is, &err), -EINVAL);
        cr_assert_eq(err.status, 400);
        cr_assert_eq(mr_client_call(c, "GET", "/registered_models?pageSize=1", NULL, &is, &err),
                     200);
        cr_assert_eq(json_array_size(json_object_get(is, "items")), 1);
        json_decref(is);
}

Test(client, transport_errors)
{
        struct mr_client_config cfg = { .base_url = "http://127.0.0.1:1", .timeout_ms = 2000 };
        CLEANUP(mr_client_freep) struct mr_client *c = NULL;
        struct error_detail err = { 0 };
        json_t *j = NULL;

        cr_assert_eq(mr_client_new(&cfg, &c), 0);
        cr_assert_eq(mr_find_serving_environment(c, "x", &j, &err), -ECONNREFUSED);
        cr_assert_eq(err.status, 0);
        cr_assert_null(j);
        cr_assert_eq(mr_client_new(&(struct mr_client_config){ .base_url = "" }, &c), -EINVAL);
}
