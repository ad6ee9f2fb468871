/* SPDX-License-Identifier: Apache-2.0 */
/* The settings routes' objects: a registry as ModelRegistryKind, the RoleBinding granting a
 * registry's use (checked and built as upstream's frontend builds it), the views. */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json-util.h"
#include "ui/settings.h"
#include "util/error-detail.h"

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

/* ---- registries made by the console ---- */

static const json_t *env0(const json_t *dep)
{
        return json_array_get(json_object_get(json_array_get(json_get_path(dep, "spec", "template",
                                                                           "spec", "containers",
                                                                           NULL),
                                                             0),
                                              "env"),
                              0);
}

static const char *arg(const json_t *dep, size_t i)
{
        const json_t *c = json_array_get(json_get_path(dep, "spec", "template", "spec",
                                                       "containers", NULL),
                                         0);
        const char *s = json_string_value(json_array_get(json_object_get(c, "args"), i));

        return s ? s : "(none)";
}

/* The last body read: q's strings are borrowed from it. */
static json_t *last_body;

static int read_req(const char *text, bool create, const char *name, struct ui_registry_req *q,
                    struct error_detail *err)
{
        json_decref(last_body);
        last_body = load(text);
        return ui_registry_req_read(last_body, "regs", create, name, q, err);
}

Test(settings, registry_sqlite_objects_as_the_operator_writes_them)
{
        json_t *data = load("{\"modelRegistry\":{\"metadata\":{\"name\":\"mr-c\",\"annotations\":"
                            "{\"displayName\":\"Team C\",\"description\":\"two\\nlines\"}}}}");
        struct ui_registry_req q = { 0 };
        struct error_detail err = { 0 };
        json_t *dep, *svc, *role, *pvc;

        cr_assert_eq(ui_registry_req_read(data, "regs", true, NULL, &q, &err), 0, "%s",
                     err.message);
        cr_assert_str_eq(q.name, "mr-c");
        cr_assert(q.has_db && !q.db.postgres);
        dep = ui_registry_deployment(&q, "regs", "img:1");
        svc = ui_registry_service(&q, "regs");
        role = ui_registry_role(q.name, "regs");
        /* the Deployment: modelplane registry on SQLite on its claim, one writer */
        cr_assert_str_eq(str(dep, "metadata", "name", NULL), "mr-c");
        cr_assert_str_eq(str(dep, "metadata", "namespace", NULL), "regs");
        cr_assert_str_eq(str(dep, "metadata", "labels", "app.kubernetes.io/managed-by"),
                         "modelplane-ui");
        cr_assert_str_eq(str(json_get_path(dep, "spec", NULL), "strategy", "type", NULL),
                         "Recreate");
        cr_assert_str_eq(str(json_get_path(dep, "spec", "selector", NULL), "matchLabels", "app",
                             NULL),
                         "mr-c");
        cr_assert_str_eq(arg(dep, 0), "registry");
        cr_assert_str_eq(arg(dep, 2), "--database=/data/model-registry.db");
        cr_assert_null(env0(dep));
        cr_assert_str_eq(str(json_array_get(json_get_path(dep, "spec", "template", "spec",
                                                          "volumes", NULL),
                                            0),
                             "persistentVolumeClaim", "claimName", NULL),
                         "mr-c-data");
        cr_assert_str_eq(str(json_array_get(json_get_path(dep, "spec", "template", "spec",
                                                          "containers", NULL),
                                            0),
                             "image", NULL, NULL),
                         "img:1");
        /* SQLite's claim, as deploy/overlays/registry-sqlite */
        pvc = ui_registry_pvc(q.name, "regs");
        cr_assert_str_eq(str(pvc, "metadata", "name", NULL), "mr-c-data");
        cr_assert_str_eq(str(pvc, "metadata", "labels", "app"), "mr-c");
        cr_assert_str_eq(str(json_get_path(pvc, "spec", "resources", NULL), "requests", "storage",
                             NULL),
                         "1Gi");
        cr_assert_str_eq(json_string_value(
                                 json_array_get(json_get_path(pvc, "spec", "accessModes", NULL),
                                                0)),
                         "ReadWriteOnce");
        json_decref(pvc);
        /* the Service: what the console's registry discovery reads */
        cr_assert_str_eq(str(svc, "metadata", "labels", "component"), "model-registry");
        cr_assert_str_eq(str(svc, "metadata", "annotations", "displayName"), "Team C");
        cr_assert_str_eq(str(svc, "metadata", "annotations", "description"), "two\nlines");
        cr_assert_str_eq(str(json_array_get(json_get_path(svc, "spec", "ports", NULL), 0), "name",
                             NULL, NULL),
                         "http-api");
        cr_assert_str_eq(str(svc, "spec", "selector", "app"), "mr-c");
        cr_assert(ui_registry_made_here(svc));
        /* the Role the console's access check uses */
        cr_assert_str_eq(str(role, "metadata", "name", NULL), "registry-user-mr-c");
        cr_assert_str_eq(str(json_array_get(json_object_get(role, "rules"), 0), "resourceNames",
                             NULL, NULL),
                         "(none)");
        cr_assert_str_eq(json_string_value(json_array_get(
                                 json_object_get(json_array_get(json_object_get(role, "rules"), 0),
                                                 "resourceNames"),
                                 0)),
                         "mr-c");
        json_decref(dep);
        json_decref(svc);
        json_decref(role);
        json_decref(data);
}

Test(settings, registry_postgres_password_from_the_secret)
{
        struct ui_registry_req q = { 0 };
        struct error_detail err = { 0 };
        json_t *dep;

        cr_assert_eq(read_req("{\"metadata\":{\"name\":\"mr-pg\",\"namespace\":\"regs\"},"
                              "\"spec\":{\"postgres\":{\"host\":\"db.regs.svc\",\"port\":5433,"
                              "\"database\":\"mr\",\"username\":\"mr_user\",\"sslMode\":"
                              "\"verify-full\",\"passwordSecret\":{\"name\":\"db-pw\"}}}}",
                              true, NULL, &q, &err),
                     0, "%s", err.message);
        dep = ui_registry_deployment(&q, "regs", "img:1");
        cr_assert_str_eq(arg(dep, 2), "--database=host=db.regs.svc port=5433 dbname=mr "
                                      "user=mr_user sslmode=verify-full");
        cr_assert_str_eq(str(env0(dep), "name", NULL, NULL), "PGPASSWORD");
        cr_assert_str_eq(str(json_get_path(env0(dep), "valueFrom", NULL), "secretKeyRef", "name",
                             NULL),
                         "db-pw");
        cr_assert_str_eq(str(json_get_path(env0(dep), "valueFrom", NULL), "secretKeyRef", "key",
                             NULL),
                         "database-password");
        cr_assert_null(json_get_path(dep, "spec", "template", "spec", "volumes", NULL));
        cr_assert_str_eq(str(json_get_path(dep, "spec", NULL), "strategy", "type", NULL),
                         "RollingUpdate");
        json_decref(dep);
}

struct refusal {
        const char *body;
        int r;
        const char *field;
};

Test(settings, registry_refusals_name_the_field)
{
        static const struct refusal cases[] = {
                { "[]", -EINVAL, "data" },
                { "{\"modelRegistry\":3}", -EINVAL, "modelRegistry" },
                { "{\"metadata\":{}}", -EDOM, "metadata.name" },
                { "{\"metadata\":{\"name\":\"9lives\"}}", -EINVAL, "metadata.name" },
                { "{\"metadata\":{\"name\":\"Upper\"}}", -EINVAL, "metadata.name" },
                { "{\"metadata\":{\"name\":"
                  "\"a234567890123456789012345678901234567890123456789012345678901234\"}}",
                  -EINVAL, "metadata.name" },
                { "{\"metadata\":{\"name\":\"a\",\"namespace\":\"other\"}}", -EINVAL,
                  "metadata.namespace" },
                { "{\"metadata\":{\"name\":\"a\",\"annotations\":{\"displayName\":\"x\\ny\"}}}",
                  -EINVAL, "metadata.annotations.displayName" },
                { "{\"metadata\":{\"name\":\"a\",\"annotations\":{\"description\":5}}}", -EINVAL,
                  "metadata.annotations.description" },
                { "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"mysql\":{\"host\":\"db\"}}}", -EDOM,
                  "spec.mysql" },
                { "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"postgres\":{\"database\":\"d\","
                  "\"username\":\"u\"}}}",
                  -EDOM, "spec.postgres.host" },
                { "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"postgres\":{\"host\":\"db x\","
                  "\"database\":\"d\",\"username\":\"u\"}}}",
                  -EINVAL, "spec.postgres.host" },
                { "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"postgres\":{\"host\":\"db\","
                  "\"database\":\"d\",\"username\":\"u\",\"port\":70000}}}",
                  -EINVAL, "spec.postgres.port" },
                { "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"postgres\":{\"host\":\"db\","
                  "\"database\":\"d;x\",\"username\":\"u\"}}}",
                  -EINVAL, "spec.postgres.database" },
                { "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"postgres\":{\"host\":\"db\","
                  "\"database\":\"d\"}}}",
                  -EDOM, "spec.postgres.username" },
                { "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"postgres\":{\"host\":\"db\","
                  "\"database\":\"d\",\"username\":\"u\",\"passwordSecret\":{\"name\":\"A_B\"}}}}",
                  -EINVAL, "spec.postgres.passwordSecret.name" },
                { "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"postgres\":{\"host\":\"db\","
                  "\"database\":\"d\",\"username\":\"u\",\"passwordSecret\":{\"key\":\"k\"}}}}",
                  -EDOM, "spec.postgres.passwordSecret.name" },
                { "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"postgres\":{\"host\":\"db\","
                  "\"database\":\"d\",\"username\":\"u\",\"passwordSecret\":{\"name\":\"s\","
                  "\"key\":\"a b\"}}}}",
                  -EINVAL, "spec.postgres.passwordSecret.key" },
                { "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"postgres\":{\"host\":\"db\","
                  "\"database\":\"d\",\"username\":\"u\",\"sslMode\":\"maybe\"}}}",
                  -EINVAL, "spec.postgres.sslMode" },
                { "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"postgres\":{\"host\":\"db\","
                  "\"database\":\"d\",\"username\":\"u\",\"sslRootCertificateConfigMap\":"
                  "\"ca\"}}}",
                  -EDOM, "spec.postgres.sslRootCertificateConfigMap" },
                { "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"postgres\":\"db\"}}", -EINVAL,
                  "spec.postgres" },
                { "{\"modelRegistry\":{\"metadata\":{\"name\":\"a\"}},\"databasePassword\":\"pw\"}",
                  -EDOM, "databasePassword" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct ui_registry_req q = { 0 };
                struct error_detail err = { 0 };
                int r = read_req(cases[i].body, true, NULL, &q, &err);

                cr_assert_eq(r, cases[i].r, "%s: %d, want %d (%s)", cases[i].body, r, cases[i].r,
                             err.message);
                cr_assert_str_eq(err.field, cases[i].field, "%s", cases[i].body);
                cr_assert(strstr(err.message, cases[i].field), "%s: %s", cases[i].body,
                          err.message);
        }
}

Test(settings, registry_limits)
{
        char body[4096];
        char text[UI_REGISTRY_TEXT_MAX + 2];
        struct ui_registry_req q = { 0 };
        struct error_detail err = { 0 };

        memset(text, 'x', UI_REGISTRY_TEXT_MAX);
        text[UI_REGISTRY_TEXT_MAX] = '\0';
        (void)snprintf(body, sizeof(body),
                       "{\"metadata\":{\"name\":\"a\",\"annotations\":{\"description\":\"%s\"}}}",
                       text);
        cr_assert_eq(read_req(body, true, NULL, &q, &err), 0, "%s", err.message);
        text[UI_REGISTRY_TEXT_MAX] = 'x';
        text[UI_REGISTRY_TEXT_MAX + 1] = '\0';
        (void)snprintf(body, sizeof(body),
                       "{\"metadata\":{\"name\":\"a\",\"annotations\":{\"description\":\"%s\"}}}",
                       text);
        cr_assert_eq(read_req(body, true, NULL, &q, &err), -EINVAL);
        /* a host of 254 bytes */
        memset(text, 'h', 254);
        text[254] = '\0';
        (void)snprintf(body, sizeof(body),
                       "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"postgres\":{\"host\":\"%s\","
                       "\"database\":\"d\",\"username\":\"u\"}}}",
                       text);
        cr_assert_eq(read_req(body, true, NULL, &q, &err), -EINVAL);
        cr_assert_str_eq(err.field, "spec.postgres.host");
}

Test(settings, registry_patch)
{
        json_t *svc = load("{\"metadata\":{\"name\":\"mr-c\",\"namespace\":\"regs\","
                           "\"resourceVersion\":\"9\",\"annotations\":{\"displayName\":\"Old\","
                           "\"description\":\"d\"}}}");
        json_t *dep = load("{\"metadata\":{\"name\":\"mr-c\",\"namespace\":\"regs\","
                           "\"resourceVersion\":\"4\"},\"spec\":{\"template\":{\"spec\":{"
                           "\"containers\":[{\"name\":\"registry\",\"image\":\"mine:2\"}]}}}}");
        struct ui_registry_req q = { 0 };
        struct error_detail err = { 0 };
        json_t *next = NULL;

        /* no name in the body: the route's; the annotations only */
        cr_assert_eq(read_req("{\"modelRegistry\":{\"metadata\":{\"annotations\":{"
                              "\"displayName\":\"New\",\"description\":\"\"}}}}",
                              false, "mr-c", &q, &err),
                     0, "%s", err.message);
        cr_assert_str_eq(q.name, "mr-c");
        cr_assert(!q.has_db);
        cr_assert_eq(ui_registry_service_update(svc, &q, &next), 0);
        cr_assert_str_eq(str(next, "metadata", "annotations", "displayName"), "New");
        cr_assert_null(json_get_path(next, "metadata", "annotations", "description", NULL));
        cr_assert_str_eq(str(next, "metadata", "resourceVersion", NULL), "9");
        json_decref(next);
        /* another name is refused */
        cr_assert_eq(read_req("{\"metadata\":{\"name\":\"mr-d\"}}", false, "mr-c", &q, &err),
                     -EINVAL);
        cr_assert_str_eq(err.field, "metadata.name");
        /* the database: the Deployment rebuilt, its metadata and image kept */
        cr_assert_eq(read_req("{\"spec\":{\"postgres\":{\"host\":\"db\",\"database\":\"d\","
                              "\"username\":\"u\"}}}",
                              false, "mr-c", &q, &err),
                     0, "%s", err.message);
        cr_assert(q.has_db && q.db.postgres);
        cr_assert_eq(ui_registry_deployment_update(dep, &q, "default:1", &next), 0);
        cr_assert_str_eq(str(next, "metadata", "resourceVersion", NULL), "4");
        cr_assert_str_eq(arg(next, 2), "--database=host=db port=5432 dbname=d user=u");
        cr_assert_str_eq(str(json_array_get(json_get_path(next, "spec", "template", "spec",
                                                          "containers", NULL),
                                            0),
                             "image", NULL, NULL),
                         "mine:2");
        json_decref(next);
        /* postgres: null is back to SQLite */
        cr_assert_eq(read_req("{\"spec\":{\"postgres\":null}}", false, "mr-c", &q, &err), 0);
        cr_assert(q.has_db && !q.db.postgres);
        cr_assert_eq(ui_registry_deployment_update(dep, &q, "default:1", &next), 0);
        cr_assert_str_eq(arg(next, 2), "--database=/data/model-registry.db");
        json_decref(next);
        json_decref(dep);
        json_decref(svc);
}

Test(settings, made_here)
{
        json_t *svc = load("{\"metadata\":{\"labels\":{\"component\":\"model-registry\"}}}");

        cr_assert(!ui_registry_made_here(svc));
        json_decref(svc);
}

Test(settings, certificates_names_and_keys_only)
{
        json_t *cms = load("{\"items\":[{\"metadata\":{\"name\":\"db-ca\"},\"data\":{"
                           "\"ca.crt\":\"-----BEGIN CERTIFICATE-----\\nMIIB\\n\",\"note\":\"x\"}},"
                           "{\"metadata\":{\"name\":\"plain\"},\"data\":{\"a\":\"b\"}},"
                           "{\"metadata\":{\"name\":\"empty\"}}]}");
        json_t *secrets = load("{\"items\":[{\"metadata\":{\"name\":\"db-tls\"},\"type\":"
                               "\"kubernetes.io/tls\",\"data\":{\"ca.crt\":"
                               "\"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUI=\",\"tls.key\":"
                               "\"LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t\"}},"
                               "{\"metadata\":{\"name\":\"sa\"},\"type\":"
                               "\"kubernetes.io/service-account-token\",\"data\":{\"ca.crt\":"
                               "\"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUI=\"}}]}");
        json_t *a = ui_certificate_items(cms, false), *b = ui_certificate_items(secrets, true);
        char *sa = json_dumps(a, JSON_COMPACT), *sb = json_dumps(b, JSON_COMPACT);

        cr_assert_str_eq(sa, "[{\"name\":\"db-ca\",\"keys\":[\"ca.crt\"]}]");
        cr_assert_str_eq(sb, "[{\"name\":\"db-tls\",\"keys\":[\"ca.crt\"]}]");
        free(sa);
        free(sb);
        json_decref(a);
        json_decref(b);
        json_decref(cms);
        json_decref(secrets);
}

Test(settings, registry_kind_shows_the_database_never_a_password)
{
        struct ui_registry_req q = { 0 };
        struct error_detail err = { 0 };
        json_t *dep, *svc, *kind;
        char *s;

        cr_assert_eq(read_req("{\"metadata\":{\"name\":\"mr-pg\"},\"spec\":{\"postgres\":{"
                              "\"host\":\"db.regs.svc\",\"port\":5433,\"database\":\"mr\","
                              "\"username\":\"mr_user\",\"sslMode\":\"require\","
                              "\"passwordSecret\":{\"name\":\"db-pw\",\"key\":\"pw\"}}}}",
                              true, NULL, &q, &err),
                     0, "%s", err.message);
        dep = ui_registry_deployment(&q, "regs", "img:1");
        svc = ui_registry_service(&q, "regs");
        kind = ui_registry_kind(svc);
        cr_assert_eq(ui_registry_kind_set_database(kind, dep), 0);
        s = json_dumps(json_get_path(kind, "spec", "postgres", NULL),
                       JSON_COMPACT | JSON_SORT_KEYS);
        cr_assert_str_eq(s, "{\"database\":\"mr\",\"host\":\"db.regs.svc\",\"passwordSecret\":"
                            "{\"key\":\"pw\",\"name\":\"db-pw\"},\"port\":5433,\"sslMode\":"
                            "\"require\",\"username\":\"mr_user\"}");
        free(s);
        json_decref(kind);
        json_decref(dep);
        /* SQLite, and a Deployment of another shape: no spec.postgres */
        cr_assert_eq(read_req("{\"metadata\":{\"name\":\"mr-c\"}}", true, NULL, &q, &err), 0);
        dep = ui_registry_deployment(&q, "regs", "img:1");
        kind = ui_registry_kind(svc);
        cr_assert_eq(ui_registry_kind_set_database(kind, dep), 0);
        cr_assert_null(json_get_path(kind, "spec", "postgres", NULL));
        cr_assert_eq(ui_registry_kind_set_database(kind, svc), 0);
        cr_assert_null(json_get_path(kind, "spec", "postgres", NULL));
        json_decref(kind);
        json_decref(dep);
        json_decref(svc);
}

Test(settings, registry_openshift_annotations)
{
        struct ui_registry_req q = { 0 };
        struct error_detail err = { 0 };

        cr_assert_eq(read_req("{\"metadata\":{\"name\":\"a\",\"annotations\":{"
                              "\"openshift.io/display-name\":\"Team A\","
                              "\"openshift.io/description\":\"A's\"}}}",
                              true, NULL, &q, &err),
                     0, "%s", err.message);
        cr_assert_str_eq(q.display_name, "Team A");
        cr_assert_str_eq(q.description, "A's");
        /* upstream BFF's own annotations win */
        cr_assert_eq(read_req("{\"metadata\":{\"name\":\"a\",\"annotations\":{"
                              "\"openshift.io/display-name\":\"Team A\","
                              "\"displayName\":\"Team B\"}}}",
                              true, NULL, &q, &err),
                     0, "%s", err.message);
        cr_assert_str_eq(q.display_name, "Team B");
        cr_assert_eq(read_req("{\"metadata\":{\"name\":\"a\",\"annotations\":{"
                              "\"openshift.io/display-name\":\"x\\u0001\"}}}",
                              true, NULL, &q, &err),
                     -EINVAL);
        cr_assert_str_eq(err.field, "metadata.annotations.openshift.io/display-name");
        json_decref(last_body);
        last_body = NULL;
}
