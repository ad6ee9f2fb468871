/* SPDX-License-Identifier: Apache-2.0 */
/* The settings routes' objects: a registry as ModelRegistryKind, the RoleBinding granting a
 * registry's use (checked and built as upstream's frontend builds it), the views. */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "json/json-util.h"
#include "ui/settings.h"

static json_t *load(const char *text)
{
        json_error_t e;
        json_t *v = json_loads(text, 0, &e);

        cr_assert(v, "%s: %s", text, e.text);
        return v;
}

static const char *str(const json_t *v, const char *a, const char *b, const char *c)
{
        const char *s = c   ? json_get_string_path(v, a, b, c, NULL)
                        : b ? json_get_string_path(v, a, b, NULL)
                            : json_get_string_path(v, a, NULL);

        return s ? s : "(none)";
}

Test(settings, registry_kind)
{
        json_t *svc = load("{\"metadata\":{\"name\":\"mr-b\",\"namespace\":\"regs\","
                           "\"uid\":\"u1\",\"resourceVersion\":\"7\",\"managedFields\":[],"
                           "\"annotations\":{\"displayName\":\"Team B\"}},"
                           "\"spec\":{\"ports\":[{\"name\":\"grpc-api\",\"port\":9090},"
                           "{\"name\":\"http-api\",\"port\":8080}]}}");
        json_t *k = ui_registry_kind(svc);

        cr_assert_str_eq(str(k, "metadata", "name", NULL), "mr-b");
        cr_assert_str_eq(str(k, "metadata", "namespace", NULL), "regs");
        cr_assert_str_eq(str(k, "metadata", "annotations", "displayName"), "Team B");
        cr_assert_null(json_get_path(k, "metadata", "managedFields", NULL));
        cr_assert_eq(json_integer_value(json_get_path(k, "spec", "rest", "port", NULL)), 8080);
        cr_assert(json_is_array(json_get_path(k, "status", "conditions", NULL)));
        json_decref(k);
        json_decref(svc);
}

Test(settings, role_binding_built_as_upstream)
{
        json_t *in = load("{\"metadata\":{\"name\":\"mr-b-frank\",\"labels\":{\"app."
                          "kubernetes.io/name\":\"mr-b\",\"team\":\"x\"}},"
                          "\"subjects\":[{\"kind\":\"User\",\"name\":\"frank@example.com\"},"
                          "{\"kind\":\"Group\",\"name\":\"ml-team\",\"apiGroup\":\"rbac."
                          "authorization.k8s.io\"}]}");
        json_t *rb = NULL;
        char msg[256];

        cr_assert_eq(ui_role_binding_request(in, "regs", &rb, msg, sizeof(msg)), 0, "%s", msg);
        cr_assert_str_eq(str(rb, "metadata", "name", NULL), "mr-b-frank");
        cr_assert_str_eq(str(rb, "metadata", "namespace", NULL), "regs");
        cr_assert_str_eq(str(rb, "metadata", "labels", "app.kubernetes.io/component"),
                         "model-registry");
        cr_assert_str_eq(str(rb, "metadata", "labels", "app"), "mr-b");
        cr_assert_str_eq(str(rb, "metadata", "labels", "team"), "x");
        cr_assert_str_eq(str(rb, "roleRef", "kind", NULL), "Role");
        cr_assert_str_eq(str(rb, "roleRef", "name", NULL), "registry-user-mr-b");
        cr_assert_eq(json_array_size(json_object_get(rb, "subjects")), 2);
        cr_assert_str_eq(json_string_value(
                                 json_object_get(json_array_get(json_object_get(rb, "subjects"), 0),
                                                 "apiGroup")),
                         "rbac.authorization.k8s.io");
        cr_assert(ui_role_binding_is_registry(rb));
        json_decref(rb);
        json_decref(in);

        /* no name, the registry from the roleRef: generateName */
        in = load("{\"roleRef\":{\"kind\":\"Role\",\"name\":\"registry-user-mr-c\"},"
                  "\"subjects\":[{\"kind\":\"User\",\"name\":\"u\"}]}");
        cr_assert_eq(ui_role_binding_request(in, "regs", &rb, msg, sizeof(msg)), 0, "%s", msg);
        cr_assert_str_eq(str(rb, "metadata", "generateName", NULL), "mr-c-permissions-");
        cr_assert_str_eq(str(rb, "metadata", "labels", "app.kubernetes.io/name"), "mr-c");
        json_decref(rb);
        json_decref(in);
}

Test(settings, role_binding_refusals)
{
        static const struct {
                const char *body, *why;
        } bad[] = {
                { "{\"subjects\":[{\"kind\":\"User\",\"name\":\"u\"}]}", "registry" },
                { "{\"metadata\":{\"labels\":{\"app.kubernetes.io/name\":\"Bad_Name\"}},"
                  "\"subjects\":[{\"kind\":\"User\",\"name\":\"u\"}]}",
                  "registry" },
                { "{\"metadata\":{\"labels\":{\"app.kubernetes.io/name\":\"mr-b\"}},"
                  "\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"cluster-admin\"},"
                  "\"subjects\":[{\"kind\":\"User\",\"name\":\"u\"}]}",
                  "registry-user-mr-b" },
                { "{\"metadata\":{\"labels\":{\"app.kubernetes.io/name\":\"mr-b\"}},"
                  "\"roleRef\":{\"kind\":\"Role\",\"name\":\"registry-user-other\"},"
                  "\"subjects\":[{\"kind\":\"User\",\"name\":\"u\"}]}",
                  "registry-user-mr-b" },
                { "{\"metadata\":{\"labels\":{\"app.kubernetes.io/name\":\"mr-b\"}},"
                  "\"subjects\":[]}",
                  "subjects" },
                { "{\"metadata\":{\"labels\":{\"app.kubernetes.io/name\":\"mr-b\"}},"
                  "\"subjects\":[{\"kind\":\"ServiceAccount\",\"name\":\"default\"}]}",
                  "User or a Group" },
                { "{\"metadata\":{\"labels\":{\"app.kubernetes.io/name\":\"mr-b\"}},"
                  "\"subjects\":[{\"kind\":\"User\",\"name\":\"a\\nb\"}]}",
                  "printable" },
                { "{\"metadata\":{\"name\":\"Not Valid\",\"labels\":{\"app.kubernetes.io/"
                  "name\":\"mr-b\"}},\"subjects\":[{\"kind\":\"User\",\"name\":\"u\"}]}",
                  "metadata.name" },
        };

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                json_t *in = load(bad[i].body);
                json_t *rb = NULL;
                char msg[256];

                cr_assert_eq(ui_role_binding_request(in, "regs", &rb, msg, sizeof(msg)), -EINVAL,
                             "%s", bad[i].body);
                cr_assert(strstr(msg, bad[i].why), "%s: %s", bad[i].body, msg);
                cr_assert_null(rb);
                json_decref(in);
        }
}

Test(settings, views)
{
        json_t *rb = load("{\"metadata\":{\"name\":\"x\",\"namespace\":\"regs\",\"uid\":\"1\","
                          "\"managedFields\":[{}],\"labels\":{\"app.kubernetes.io/component\":"
                          "\"model-registry\"}},\"subjects\":[{\"kind\":\"User\",\"name\":\"u\"}],"
                          "\"roleRef\":{\"kind\":\"Role\",\"name\":\"registry-user-x\"}}");
        json_t *g = load("{\"metadata\":{\"name\":\"ml-team\",\"uid\":\"2\"}}");
        json_t *v = ui_role_binding_view(rb);
        json_t *gv = ui_group_view(g);

        cr_assert_str_eq(str(v, "kind", NULL, NULL), "RoleBinding");
        cr_assert_null(json_get_path(v, "metadata", "managedFields", NULL));
        cr_assert_str_eq(str(v, "roleRef", "name", NULL), "registry-user-x");
        cr_assert_eq(json_array_size(json_object_get(v, "subjects")), 1);
        cr_assert(ui_role_binding_is_registry(rb));
        json_object_del(json_object_get(json_object_get(rb, "metadata"), "labels"),
                        "app.kubernetes.io/component");
        cr_assert_not(ui_role_binding_is_registry(rb));
        cr_assert_str_eq(str(gv, "metadata", "name", NULL), "ml-team");
        cr_assert(json_is_array(json_object_get(gv, "users")));
        cr_assert_eq(json_array_size(json_object_get(gv, "users")), 0);
        json_decref(v);
        json_decref(gv);
        json_decref(rb);
        json_decref(g);
}

Test(settings, role_binding_update_replaces_the_subjects_only)
{
        json_t *cur = load("{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":"
                           "\"RoleBinding\",\"metadata\":{\"name\":\"mr-b-permissions-x\","
                           "\"namespace\":\"regs\",\"resourceVersion\":\"41\",\"labels\":{"
                           "\"app.kubernetes.io/component\":\"model-registry\"}},\"subjects\":[{"
                           "\"kind\":\"User\",\"name\":\"u\"}],\"roleRef\":{\"apiGroup\":"
                           "\"rbac.authorization.k8s.io\",\"kind\":\"Role\",\"name\":"
                           "\"registry-user-mr-b\"}}");
        json_t *in = load("{\"metadata\":{\"resourceVersion\":\"40\",\"labels\":{\"x\":\"y\"}},"
                          "\"subjects\":[{\"kind\":\"Group\",\"name\":\"ml-team\"},{\"kind\":"
                          "\"User\",\"name\":\"alice\"}]}");
        json_t *out = NULL;
        char msg[256];

        cr_assert_eq(ui_role_binding_update(cur, in, &out, msg, sizeof(msg)), 0, "%s", msg);
        cr_assert_eq(json_array_size(json_object_get(out, "subjects")), 2);
        cr_assert_str_eq(json_string_value(json_object_get(
                                 json_array_get(json_object_get(out, "subjects"), 0), "apiGroup")),
                         "rbac.authorization.k8s.io");
        /* the body's resourceVersion is the write's precondition; its labels change nothing */
        cr_assert_str_eq(str(out, "metadata", "resourceVersion", NULL), "40");
        cr_assert_null(json_get_path(out, "metadata", "labels", "x", NULL));
        cr_assert_str_eq(str(out, "roleRef", "name", NULL), "registry-user-mr-b");
        json_decref(out);
        json_decref(in);
        out = NULL;

        /* roleRef is immutable; subjects are checked as for a create */
        in = load("{\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"cluster-admin\"},"
                  "\"subjects\":[{\"kind\":\"User\",\"name\":\"u\"}]}");
        cr_assert_eq(ui_role_binding_update(cur, in, &out, msg, sizeof(msg)), -EINVAL);
        cr_assert(strstr(msg, "roleRef cannot change"), "%s", msg);
        json_decref(in);
        in = load("{\"subjects\":[{\"kind\":\"ServiceAccount\",\"name\":\"default\"}]}");
        cr_assert_eq(ui_role_binding_update(cur, in, &out, msg, sizeof(msg)), -EINVAL);
        cr_assert(strstr(msg, "User or a Group"), "%s", msg);
        json_decref(in);
        in = load("{}");
        cr_assert_eq(ui_role_binding_update(cur, in, &out, msg, sizeof(msg)), -EINVAL);
        cr_assert(strstr(msg, "subjects"), "%s", msg);
        cr_assert_null(out);
        json_decref(in);
        json_decref(cur);
}
