/* SPDX-License-Identifier: Apache-2.0 */
/* Several model registries: a Service read as upstream reads it, the list entry, the names a
 * SelfSubjectRulesReview grants. */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "ui/registries.h"

static json_t *service(const char *extra_json)
{
        json_error_t e;
        json_t *s = json_loads(
                "{\"metadata\":{\"name\":\"mr-b\",\"namespace\":\"regs\","
                "\"labels\":{\"component\":\"model-registry\"},"
                "\"annotations\":{\"displayName\":\"Team B\",\"description\":\"B's <models>\","
                "\"modelregistry.kubeflow.org/external-address-rest\":\"127.0.0.1:9000\"}},"
                "\"spec\":{\"clusterIP\":\"10.0.0.7\",\"ports\":[{\"name\":\"grpc-api\","
                "\"port\":9090},{\"name\":\"http-api\",\"port\":8080}]}}",
                0, &e);

        cr_assert(s, "%s", e.text);
        if (extra_json) {
                json_t *x = json_loads(extra_json, 0, &e);

                cr_assert(x, "%s", e.text);
                cr_assert_eq(json_object_update_recursive(s, x), 0);
                json_decref(x);
        }
        return s;
}

Test(registry, from_service_cluster_ip_and_external)
{
        json_t *s = service(NULL);
        struct ui_registry r;
        char msg[256];

        cr_assert_eq(ui_registry_from_service(s, false, &r, msg, sizeof(msg)), 0, "%s", msg);
        cr_assert_str_eq(r.name, "mr-b");
        cr_assert_str_eq(r.svc.ns, "regs");
        cr_assert_str_eq(r.svc.name, "mr-b");
        cr_assert_str_eq(r.url, "http://10.0.0.7:8080");
        cr_assert_not(r.https);
        cr_assert_str_eq(r.display_name, "Team B");
        cr_assert_str_eq(r.description, "B's <models>");
        cr_assert_eq(ui_registry_from_service(s, true, &r, msg, sizeof(msg)), 0, "%s", msg);
        cr_assert_str_eq(r.url, "http://127.0.0.1:9000");
        json_decref(s);
}

Test(registry, https_port_and_ipv6)
{
        json_t *s = service("{\"spec\":{\"clusterIP\":\"fd00::7\",\"ports\":[{\"name\":"
                            "\"https-api\",\"port\":8443}]}}");
        struct ui_registry r;
        char msg[256];
        json_t *e;

        cr_assert_eq(ui_registry_from_service(s, false, &r, msg, sizeof(msg)), 0, "%s", msg);
        cr_assert_str_eq(r.url, "https://[fd00::7]:8443");
        cr_assert(r.https);
        e = ui_registry_entry(&r, true);
        cr_assert_str_eq(json_string_value(json_object_get(e, "serverAddress")),
                         "https://[fd00::7]:8443/api/model_registry/v1alpha3");
        cr_assert(json_is_true(json_object_get(e, "isHttps")));
        cr_assert(json_is_true(json_object_get(e, "isAvailable")));
        cr_assert_str_eq(json_string_value(json_object_get(e, "displayName")), "Team B");
        json_decref(e);
        json_decref(s);
}

Test(registry, endpoints_ready_and_unavailable_entry)
{
        json_error_t e;
        json_t *none = json_loads("{\"subsets\":[{\"notReadyAddresses\":[{\"ip\":\"10.1.0.4\"}]}]}",
                                  0, &e);
        json_t *ready = json_loads("{\"subsets\":[{\"notReadyAddresses\":[{\"ip\":\"10.1.0.4\"}]},"
                                   "{\"addresses\":[{\"ip\":\"10.1.0.5\"}]}]}",
                                   0, &e);
        json_t *empty = json_object();
        struct ui_registry r = { .name = "mr-b", .url = "http://10.0.0.7:8080" };
        json_t *entry = ui_registry_entry(&r, false);

        cr_assert_not(ui_endpoints_ready(none));
        cr_assert(ui_endpoints_ready(ready));
        cr_assert_not(ui_endpoints_ready(empty));
        cr_assert(json_is_false(json_object_get(entry, "isAvailable")));
        cr_assert_str_eq(json_string_value(json_object_get(entry, "displayName")), "");
        json_decref(entry);
        json_decref(none);
        json_decref(ready);
        json_decref(empty);
}

Test(registry, not_a_registry_or_unusable)
{
        static const char *const bad[] = {
                "{\"spec\":{\"ports\":[{\"name\":\"http\",\"port\":8080}]}}",
                "{\"spec\":{\"clusterIP\":\"None\"}}",
                "{\"spec\":{\"clusterIP\":\"\"}}",
                "{\"spec\":{\"clusterIP\":\"10.0.0.1/x\"}}",
                "{\"spec\":{\"ports\":[{\"name\":\"http-api\",\"port\":70000}]}}",
                "{\"metadata\":{\"name\":\"Bad_Name\"}}",
        };
        json_t *s = service("{\"metadata\":{\"labels\":{\"component\":\"model-catalog\"}}}");
        struct ui_registry r;
        char msg[256];

        cr_assert_eq(ui_registry_from_service(s, false, &r, msg, sizeof(msg)), -ENOENT);
        json_decref(s);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                s = service(bad[i]);
                msg[0] = '\0';
                cr_assert_eq(ui_registry_from_service(s, false, &r, msg, sizeof(msg)), -EINVAL,
                             "%s", bad[i]);
                cr_assert(msg[0], "%s: a reason", bad[i]);
                json_decref(s);
        }
        /* an external address with a path or user info is refused, not pasted into a URL */
        s = service("{\"metadata\":{\"annotations\":{\"x/external-address-rest\":"
                    "\"evil@host/path\",\"modelregistry.kubeflow.org/external-address-rest\":"
                    "\"evil@host/path\"}}}");
        cr_assert_eq(ui_registry_from_service(s, true, &r, msg, sizeof(msg)), -EINVAL);
        cr_assert(strstr(msg, "external-address-rest"), "%s", msg);
        json_decref(s);
}

Test(registry, rules_review_names)
{
        json_error_t e;
        json_t *review = json_loads(
                "{\"status\":{\"resourceRules\":["
                "{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"services\"],"
                "\"resourceNames\":[\"mr-a\",\"mr-b\"]},"
                "{\"verbs\":[\"*\"],\"apiGroups\":[\"*\"],\"resources\":[\"*\"],"
                "\"resourceNames\":[\"mr-c\",\"mr-a\",\"Not_A_Name\"]},"
                "{\"verbs\":[\"list\"],\"apiGroups\":[\"\"],\"resources\":[\"services\"],"
                "\"resourceNames\":[\"mr-d\"]},"
                "{\"verbs\":[\"get\"],\"apiGroups\":[\"apps\"],\"resources\":[\"services\"],"
                "\"resourceNames\":[\"mr-e\"]},"
                "{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"services\"]}]}}",
                0, &e);
        json_t *names = json_array();
        json_t *body = ui_rules_review_body("regs");

        cr_assert(review, "%s", e.text);
        cr_assert_eq(ui_rules_service_names(review, 10, names), 0);
        cr_assert_eq(json_array_size(names), 3);
        cr_assert_str_eq(json_string_value(json_array_get(names, 0)), "mr-a");
        cr_assert_str_eq(json_string_value(json_array_get(names, 1)), "mr-b");
        cr_assert_str_eq(json_string_value(json_array_get(names, 2)), "mr-c");
        json_array_clear(names);
        cr_assert_eq(ui_rules_service_names(review, 1, names), 0);
        cr_assert_eq(json_array_size(names), 1);
        cr_assert_str_eq(json_string_value(
                                 json_object_get(json_object_get(body, "spec"), "namespace")),
                         "regs");
        json_decref(body);
        json_decref(names);
        json_decref(review);
}
