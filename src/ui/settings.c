/* SPDX-License-Identifier: Apache-2.0 */
#include "ui/settings.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "json/json-util.h"
#include "ui/deploy.h"
#include "ui/registries.h"

#define RBAC_GROUP    "rbac.authorization.k8s.io"
#define ROLE_PREFIX   "registry-user-"
#define LABEL_NAME    "app.kubernetes.io/name"
#define LABEL_COMP    "app.kubernetes.io/component"
#define LABEL_PART_OF "app.kubernetes.io/part-of"
#define COMPONENT     "model-registry"

/* Copies the members named in keys (NULL-terminated) that src has into dst; -ENOMEM. */
static int copy_keys(json_t *dst, const json_t *src, const char *const *keys)
{
        for (; *keys; keys++) {
                json_t *v = json_object_get(src, *keys);

                if (v && json_object_set(dst, *keys, v) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static const char *const META_KEYS[] = { "name",   "namespace",   "uid", "creationTimestamp",
                                         "labels", "annotations", NULL };

static json_t *meta_of(const json_t *obj, const char *const *keys)
{
        json_t *m = json_object();

        if (m && copy_keys(m, json_object_get(obj, "metadata"), keys) < 0) {
                json_decref(m);
                return NULL;
        }
        return m;
}

json_t *ui_registry_kind(const json_t *service)
{
        const json_t *p;
        json_int_t port = 0;
        size_t i;

        json_array_foreach(json_get_path(service, "spec", "ports", NULL), i, p) {
                const char *n = json_string_value(json_object_get(p, "name"));

                if (n && (streq(n, "http-api") || streq(n, "https-api"))) {
                        port = json_integer_value(json_object_get(p, "port"));
                        break;
                }
        }
        return json_pack("{s:s,s:s,s:o?,s:{s:{s:I},s:{}},s:{s:[]}}", "apiVersion", "v1", "kind",
                         "Service", "metadata", meta_of(service, META_KEYS), "spec", "rest", "port",
                         port, "grpc", "status", "conditions");
}

bool ui_role_binding_is_registry(const json_t *rb)
{
        const char *c = json_get_string_path(rb, "metadata", "labels", LABEL_COMP, NULL);

        return c && streq(c, COMPONENT);
}

json_t *ui_role_binding_view(const json_t *rb)
{
        static const char *const keys[] = { "name",   "namespace", "uid", "creationTimestamp",
                                            "labels", NULL };
        json_t *v = json_pack("{s:s,s:s,s:o?}", "apiVersion", RBAC_GROUP "/v1", "kind",
                              "RoleBinding", "metadata", meta_of(rb, keys));
        static const char *const rest[] = { "subjects", "roleRef", NULL };

        if (v && copy_keys(v, rb, rest) < 0) {
                json_decref(v);
                return NULL;
        }
        return v;
}

json_t *ui_group_view(const json_t *group)
{
        static const char *const keys[] = { "name",   "uid",         "creationTimestamp",
                                            "labels", "annotations", NULL };
        json_t *users = json_object_get(group, "users");

        users = json_is_array(users) ? json_incref(users) : json_array();
        return json_pack("{s:s,s:s,s:o?,s:o}", "apiVersion", "user.openshift.io/v1", "kind",
                         "Group", "metadata", meta_of(group, keys), "users", users);
}

/* ---- creating a RoleBinding ---- */

static bool printable(const char *s, size_t max)
{
        size_t n = s ? strlen(s) : 0;

        if (n == 0 || n > max)
                return false;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
                        return false;
        return true;
}

/* The registry a RoleBinding is for: its name label, else the roleRef's suffix; NULL. */
static const char *registry_of(const json_t *data)
{
        const char *l = json_get_string_path(data, "metadata", "labels", LABEL_NAME, NULL);
        const char *role = json_get_string_path(data, "roleRef", "name", NULL);

        if (l)
                return l;
        if (role && strneq(role, ROLE_PREFIX, strlen(ROLE_PREFIX)))
                return role + strlen(ROLE_PREFIX);
        return NULL;
}

/* The subjects, checked and copied into a new array; NULL with msg (or on OOM, msg empty). */
static json_t *subjects_of(const json_t *data, char *msg, size_t len)
{
        const json_t *in = json_object_get(data, "subjects"), *s;
        json_t *out;
        size_t i;

        if (!json_is_array(in) || json_array_size(in) == 0 ||
            json_array_size(in) > UI_ROLE_BINDING_SUBJECTS_MAX) {
                (void)snprintf(msg, len, "subjects must list 1 to %u users or groups",
                               UI_ROLE_BINDING_SUBJECTS_MAX);
                return NULL;
        }
        out = json_array();
        json_array_foreach(in, i, s) {
                const char *kind = json_string_value(json_object_get(s, "kind"));
                const char *name = json_string_value(json_object_get(s, "name"));
                const char *group = json_string_value(json_object_get(s, "apiGroup"));

                if (!out)
                        return NULL;
                if (!kind || (!streq(kind, "User") && !streq(kind, "Group")) ||
                    !printable(name, UI_SUBJECT_NAME_MAX) || (group && !streq(group, RBAC_GROUP))) {
                        (void)snprintf(msg, len,
                                       "subject %zu must be a User or a Group with a name (of at "
                                       "most %u printable bytes) in apiGroup " RBAC_GROUP,
                                       i + 1, UI_SUBJECT_NAME_MAX);
                        json_decref(out);
                        return NULL;
                }
                if (json_array_append_new(out, json_pack("{s:s,s:s,s:s}", "kind", kind, "name",
                                                         name, "apiGroup", RBAC_GROUP)) < 0) {
                        json_decref(out);
                        return NULL;
                }
        }
        return out;
}

/* The roleRef must be the registry's Role; -EINVAL with msg. */
static int check_role_ref(const json_t *data, const char *role, char *msg, size_t len)
{
        const json_t *ref = json_object_get(data, "roleRef");
        const char *kind = json_string_value(json_object_get(ref, "kind"));
        const char *name = json_string_value(json_object_get(ref, "name"));
        const char *group = json_string_value(json_object_get(ref, "apiGroup"));

        if (!ref || ((!kind || streq(kind, "Role")) && (!name || streq(name, role)) &&
                     (!group || streq(group, RBAC_GROUP))))
                return 0;
        (void)snprintf(msg, len, "roleRef must be the Role %s (a registry's user role)", role);
        return -EINVAL;
}

/* The labels: the body's, with upstream's registry labels set over them. */
static json_t *labels_of(const json_t *data, const char *reg)
{
        const json_t *in = json_get_path(data, "metadata", "labels", NULL);
        json_t *l = json_is_object(in) ? json_deep_copy(in) : json_object();

        if (l && (json_object_set_new(l, LABEL_NAME, json_string(reg)) < 0 ||
                  json_object_set_new(l, "app", json_string(reg)) < 0 ||
                  json_object_set_new(l, LABEL_COMP, json_string(COMPONENT)) < 0 ||
                  json_object_set_new(l, LABEL_PART_OF, json_string(COMPONENT)) < 0)) {
                json_decref(l);
                return NULL;
        }
        return l;
}

int ui_role_binding_request(const json_t *data, const char *ns, json_t **ret, char *msg, size_t len)
{
        const char *reg = registry_of(data);
        const char *name = json_get_string_path(data, "metadata", "name", NULL);
        char role[UI_K8S_NAME_MAX + sizeof(ROLE_PREFIX)], gen[UI_K8S_NAME_MAX + 16];
        json_t *subjects, *labels;

        msg[0] = '\0';
        if (!json_is_object(data) || !ui_rfc1123_label(reg)) {
                (void)snprintf(msg, len,
                               "the registry is the label " LABEL_NAME " (or the roleRef "
                               "Role " ROLE_PREFIX "<registry>), a registry's name");
                return -EINVAL;
        }
        if (name && !ui_rfc1123_label(name)) {
                (void)snprintf(msg, len, "metadata.name \"%.80s\" is not a valid name", name);
                return -EINVAL;
        }
        (void)snprintf(role, sizeof(role), ROLE_PREFIX "%s", reg);
        (void)snprintf(gen, sizeof(gen), "%s-permissions-", reg);
        if (check_role_ref(data, role, msg, len) < 0)
                return -EINVAL;
        subjects = subjects_of(data, msg, len);
        if (!subjects)
                return msg[0] ? -EINVAL : -ENOMEM;
        labels = labels_of(data, reg);
        if (!labels) {
                json_decref(subjects);
                return -ENOMEM;
        }
        *ret = json_pack("{s:s,s:s,s:{s:s,s:s,s:o},s:o,s:{s:s,s:s,s:s}}", "apiVersion",
                         RBAC_GROUP "/v1", "kind", "RoleBinding", "metadata",
                         name ? "name" : "generateName", name ? name : gen, "namespace", ns,
                         "labels", labels, "subjects", subjects, "roleRef", "apiGroup", RBAC_GROUP,
                         "kind", "Role", "name", role);
        return *ret ? 0 : -ENOMEM;
}

int ui_role_binding_update(const json_t *current, const json_t *data, json_t **ret, char *msg,
                           size_t len)
{
        const json_t *ref = json_object_get(data, "roleRef"), *cur_ref;
        const char *rv = json_get_string_path(data, "metadata", "resourceVersion", NULL);
        json_t *subjects, *out;

        msg[0] = '\0';
        if (!json_is_object(data)) {
                (void)snprintf(msg, len, "the body's data must be a RoleBinding object");
                return -EINVAL;
        }
        cur_ref = json_object_get(current, "roleRef");
        if (ref && !json_equal(ref, cur_ref)) {
                (void)snprintf(msg, len,
                               "roleRef cannot change (Kubernetes keeps it immutable): delete the "
                               "RoleBinding and create another");
                return -EINVAL;
        }
        subjects = subjects_of(data, msg, len);
        if (!subjects)
                return msg[0] ? -EINVAL : -ENOMEM;
        out = json_deep_copy(current);
        if (!out || json_object_set_new(out, "subjects", subjects) < 0 ||
            (rv && json_object_set_new(json_object_get(out, "metadata"), "resourceVersion",
                                       json_string(rv)) < 0)) {
                json_decref(out);
                return -ENOMEM;
        }
        *ret = out;
        return 0;
}
