/* SPDX-License-Identifier: Apache-2.0 */
#include "ui/settings.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "json/json-util.h"
#include "ui/deploy.h"
#include "ui/registries.h"
#include "util/error-detail.h"
#include "util/parse-util.h"

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

/* ---- registries made by the console ---- */

#define DB_KEY_DEFAULT "database-password"
#define PG_PORT        5432
#define SQLITE_PATH    "/data/model-registry.db"
#define PEM_CERT       "-----BEGIN CERTIFICATE-----"
/* PEM_CERT in base64: its 27 bytes are 9 whole groups, so a Secret's value starts with this */
#define PEM_CERT_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t"

static bool chars_ok(const char *s, const char *extra)
{
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                      (*s >= '0' && *s <= '9') || strchr(extra, *s)))
                        return false;
        return true;
}

/* A Service's name: an RFC 1123 label that starts with a letter (DNS-1035). */
static bool dns1035_label(const char *s)
{
        return ui_rfc1123_label(s) && s[0] >= 'a' && s[0] <= 'z';
}

static bool dns1123_subdomain(const char *s)
{
        size_t n = strlen(s);

        if (n == 0 || n > UI_K8S_SUBDOMAIN_MAX || !chars_ok(s, ".-") || s[0] == '.' ||
            s[0] == '-' || s[n - 1] == '.' || s[n - 1] == '-')
                return false;
        for (const char *p = s; *p; p++)
                if (*p >= 'A' && *p <= 'Z')
                        return false;
        return true;
}

/* Text a user typed: at most max bytes, no control characters (but \n and \t when lines). */
static bool text_ok(const char *s, size_t max, bool lines)
{
        size_t n = strlen(s);

        if (n > max)
                return false;
        for (size_t i = 0; i < n; i++) {
                unsigned char ch = (unsigned char)s[i];

                if ((ch < 0x20 && !(lines && (ch == '\n' || ch == '\t'))) || ch == 0x7f)
                        return false;
        }
        return true;
}

static int invalid(struct error_detail *err, const char *field, const char *what)
{
        return error_detail_set_field(err, ERROR_INVALID, -EINVAL, field, "%s %s", field, what);
}

static int unprocessable(struct error_detail *err, const char *field, const char *what)
{
        return error_detail_set_field(err, ERROR_UNPROCESSABLE, -EDOM, field, "%s %s", field, what);
}

/* obj[key] into dst (size len) when it is a string of 1 to len-1 bytes of [A-Za-z0-9] and
 * extra; missing: 422 when required, else dst stays; field names it. */
static int read_word(const json_t *obj, const char *key, const char *field, const char *extra,
                     bool required, char *dst, size_t len, struct error_detail *err)
{
        const json_t *v = json_object_get(obj, key);
        const char *s = json_string_value(v);

        if (!v || json_is_null(v))
                return required ? unprocessable(err, field, "is required") : 0;
        if (!s || !s[0] || strlen(s) >= len || !chars_ok(s, extra)) {
                char what[96];

                (void)snprintf(what, sizeof(what), "must be 1 to %zu bytes of [A-Za-z0-9%s]",
                               len - 1, extra);
                return invalid(err, field, what);
        }
        memcpy(dst, s, strlen(s) + 1);
        return 0;
}

static int read_password_secret(const json_t *ps, struct ui_registry_db *db,
                                struct error_detail *err)
{
        const char *name = json_string_value(json_object_get(ps, "name"));

        if (!ps || json_is_null(ps))
                return 0;
        if (!json_is_object(ps))
                return invalid(err, "spec.postgres.passwordSecret",
                               "must be an object {name, key}");
        if (!name)
                return unprocessable(err, "spec.postgres.passwordSecret.name", "is required");
        if (!dns1123_subdomain(name))
                return invalid(err, "spec.postgres.passwordSecret.name",
                               "must be a Secret's name (an RFC 1123 subdomain)");
        memcpy(db->secret, name, strlen(name) + 1);
        memcpy(db->secret_key, DB_KEY_DEFAULT, sizeof(DB_KEY_DEFAULT));
        return read_word(ps, "key", "spec.postgres.passwordSecret.key", "-._", false,
                         db->secret_key, sizeof(db->secret_key), err);
}

static int read_ssl_mode(const json_t *pg, struct ui_registry_db *db, struct error_detail *err)
{
        static const char *const modes[] = { "disable", "allow",     "prefer",
                                             "require", "verify-ca", "verify-full" };
        const json_t *v = json_object_get(pg, "sslMode");
        const char *s = json_string_value(v);

        if (!v || json_is_null(v))
                return 0;
        for (size_t i = 0; s && i < ELEMENTSOF(modes); i++)
                if (streq(s, modes[i])) {
                        memcpy(db->ssl_mode, s, strlen(s) + 1);
                        return 0;
                }
        return invalid(err, "spec.postgres.sslMode",
                       "must be one of disable, allow, prefer, require, verify-ca, verify-full");
}

static int read_postgres(const json_t *pg, struct ui_registry_db *db, struct error_detail *err)
{
        static const char *const later[] = { "sslRootCertificateConfigMap",
                                             "sslRootCertificateSecret" };
        const json_t *port = json_object_get(pg, "port");
        int r;

        if (!json_is_object(pg))
                return invalid(err, "spec.postgres", "must be an object (or null: SQLite)");
        db->postgres = true;
        db->port = PG_PORT;
        r = read_word(pg, "host", "spec.postgres.host", ".-:", true, db->host, sizeof(db->host),
                      err);
        if (r >= 0)
                r = read_word(pg, "database", "spec.postgres.database", "_.-", true, db->database,
                              sizeof(db->database), err);
        if (r >= 0)
                r = read_word(pg, "username", "spec.postgres.username", "_.-", true, db->username,
                              sizeof(db->username), err);
        if (r < 0)
                return r;
        if (port && !json_is_null(port)) {
                if (!json_is_integer(port) || json_integer_value(port) < 1 ||
                    json_integer_value(port) > 65535)
                        return invalid(err, "spec.postgres.port", "must be 1 to 65535");
                db->port = (unsigned)json_integer_value(port);
        }
        for (size_t i = 0; i < ELEMENTSOF(later); i++) {
                const json_t *v = json_object_get(pg, later[i]);

                if (v && !json_is_null(v) && !(json_is_string(v) && !json_string_value(v)[0])) {
                        char field[64];

                        (void)snprintf(field, sizeof(field), "spec.postgres.%s", later[i]);
                        return unprocessable(err, field,
                                             "is not supported: give the CA with sslMode and a "
                                             "database that modelplane's image trusts");
                }
        }
        r = read_password_secret(json_object_get(pg, "passwordSecret"), db, err);
        return r < 0 ? r : read_ssl_mode(pg, db, err);
}

static int read_text(const json_t *ann, const char *key, bool lines, const char **ret,
                     struct error_detail *err)
{
        const json_t *v = json_object_get(ann, key);
        char field[80];

        if (!v)
                return 0;
        (void)snprintf(field, sizeof(field), "metadata.annotations.%s", key);
        if (!json_is_string(v) || !text_ok(json_string_value(v), UI_REGISTRY_TEXT_MAX, lines)) {
                char what[96];

                (void)snprintf(what, sizeof(what),
                               "must be a string of at most %u bytes without control characters",
                               UI_REGISTRY_TEXT_MAX);
                return invalid(err, field, what);
        }
        *ret = json_string_value(v);
        return 0;
}

static int read_metadata(const json_t *meta, const char *ns, bool create, const char *name_or_null,
                         struct ui_registry_req *q, struct error_detail *err)
{
        const json_t *name = json_object_get(meta, "name"),
                     *mns = json_object_get(meta, "namespace");
        const json_t *ann = json_object_get(meta, "annotations");
        const char *s = json_string_value(name);
        int r;

        if (meta && !json_is_object(meta))
                return invalid(err, "metadata", "must be an object");
        if (create && !name)
                return unprocessable(err, "metadata.name", "is required");
        if (name && (!s || !dns1035_label(s)))
                return invalid(err, "metadata.name",
                               "must be a Service's name: 1 to 63 bytes of [a-z0-9-], starting "
                               "with a letter, not ending with '-'");
        if (name && name_or_null && !streq(s, name_or_null))
                return invalid(err, "metadata.name", "cannot change (delete and create instead)");
        if (mns && !(json_is_string(mns) && streq(json_string_value(mns), ns)))
                return invalid(err, "metadata.namespace", "must be the registries' namespace");
        (void)snprintf(q->name, sizeof(q->name), "%s", name ? s : name_or_null ? name_or_null : "");
        if (ann && !json_is_null(ann) && !json_is_object(ann))
                return invalid(err, "metadata.annotations", "must be an object");
        /* OpenShift's annotations, as ODH's frontend sets them on the CR, then upstream BFF's */
        r = read_text(ann, "openshift.io/display-name", false, &q->display_name, err);
        if (r >= 0)
                r = read_text(ann, "openshift.io/description", true, &q->description, err);
        if (r >= 0)
                r = read_text(ann, "displayName", false, &q->display_name, err);
        return r < 0 ? r : read_text(ann, "description", true, &q->description, err);
}

static int read_spec(const json_t *spec, bool create, struct ui_registry_req *q,
                     struct error_detail *err)
{
        const json_t *mysql = json_object_get(spec, "mysql"),
                     *pg = json_object_get(spec, "postgres");

        q->has_db = create;
        if (!spec || json_is_null(spec))
                return 0;
        if (!json_is_object(spec))
                return invalid(err, "spec", "must be an object");
        if (mysql && !json_is_null(mysql))
                return unprocessable(err, "spec.mysql",
                                     "is not supported: modelplane's registry stores its data in "
                                     "PostgreSQL (spec.postgres) or its embedded SQLite (neither)");
        if (!pg)
                return 0;
        q->has_db = true;
        return json_is_null(pg) ? 0 : read_postgres(pg, &q->db, err);
}

int ui_registry_req_read(const json_t *data, const char *ns, bool create, const char *name_or_null,
                         struct ui_registry_req *ret, struct error_detail *err)
{
        const json_t *kind = json_object_get(data, "modelRegistry");
        const json_t *pw = json_object_get(data, "databasePassword");
        const json_t *cert = json_object_get(data, "newDatabaseCACertificate");
        struct ui_registry_req q = { 0 };
        int r;

        if (!json_is_object(data))
                return invalid(err, "data", "must be a ModelRegistrySettingsPayload object");
        if (pw && !json_is_null(pw))
                return unprocessable(err, "databasePassword",
                                     "is not kept by modelplane: put the password in a Secret "
                                     "and name it in spec.postgres.passwordSecret");
        if (cert && !json_is_null(cert))
                return unprocessable(err, "newDatabaseCACertificate", "is not supported");
        if (!kind)
                kind = data;
        else if (!json_is_object(kind))
                return invalid(err, "modelRegistry", "must be a ModelRegistryKind object");
        r = read_metadata(json_object_get(kind, "metadata"), ns, create, name_or_null, &q, err);
        if (r >= 0)
                r = read_spec(json_object_get(kind, "spec"), create, &q, err);
        if (r < 0)
                return r;
        *ret = q;
        return 0;
}

void ui_registry_role_name(const char *name, char *role, size_t len)
{
        (void)snprintf(role, len, UI_REGISTRY_ROLE_PREFIX "%s", name);
}

void ui_registry_pvc_name(const char *name, char *pvc, size_t len)
{
        (void)snprintf(pvc, len, "%s" UI_REGISTRY_PVC_SUFFIX, name);
}

bool ui_registry_made_here(const json_t *service)
{
        const char *m = json_get_string_path(service, "metadata", "labels",
                                             "app.kubernetes.io/managed-by", NULL);

        return m && streq(m, UI_REGISTRY_MANAGED_BY);
}

static json_t *registry_labels(const char *name)
{
        return json_pack("{s:s,s:s,s:s,s:s,s:s}", "app", name, "component", COMPONENT, LABEL_COMP,
                         COMPONENT, LABEL_PART_OF, COMPONENT, "app.kubernetes.io/managed-by",
                         UI_REGISTRY_MANAGED_BY);
}

static json_t *registry_meta(const char *name, const char *ns)
{
        return json_pack("{s:s,s:s,s:o}", "name", name, "namespace", ns, "labels",
                         registry_labels(name));
}

/* The --database flag: libpq's key=value string (each value of a checked character set), or
 * the SQLite file. */
static void database_flag(const struct ui_registry_db *db, char *buf, size_t len)
{
        if (!db->postgres) {
                (void)snprintf(buf, len, "--database=" SQLITE_PATH);
                return;
        }
        (void)snprintf(buf, len, "--database=host=%s port=%u dbname=%s user=%s%s%s", db->host,
                       db->port, db->database, db->username, db->ssl_mode[0] ? " sslmode=" : "",
                       db->ssl_mode);
}

static json_t *registry_container(const struct ui_registry_db *db, const char *image)
{
        char flag[sizeof("--database=host= port=65535 dbname= user= sslmode=") + UI_DB_HOST_MAX +
                  (size_t)2 * UI_DB_IDENT_MAX + 16];
        json_t *c, *env = json_array();

        database_flag(db, flag, sizeof(flag));
        if (env && db->secret[0] &&
            json_array_append_new(env, json_pack("{s:s,s:{s:{s:s,s:s}}}", "name", "PGPASSWORD",
                                                 "valueFrom", "secretKeyRef", "name", db->secret,
                                                 "key", db->secret_key)) < 0) {
                json_decref(env);
                return NULL;
        }
        c = json_pack("{s:s,s:s,s:[s,s,s],s:o,s:[{s:s,s:i}],s:{s:{s:s,s:s},s:i},"
                      "s:{s:{s:s},s:i,s:i},s:{s:{s:s,s:s},s:{s:s}},s:{s:b,s:b,s:{s:[s]}}}",
                      "name", "registry", "image", image, "args", "registry", "--hostname=0.0.0.0",
                      flag, "env", env, "ports", "name", "http-api", "containerPort",
                      (int)UI_REGISTRY_PORT, "readinessProbe", "httpGet", "path", "/readyz/health",
                      "port", "http-api", "periodSeconds", 10, "livenessProbe", "tcpSocket", "port",
                      "http-api", "initialDelaySeconds", 5, "periodSeconds", 20, "resources",
                      "requests", "cpu", "50m", "memory", "32Mi", "limits", "memory", "512Mi",
                      "securityContext", "allowPrivilegeEscalation", 0, "readOnlyRootFilesystem", 1,
                      "capabilities", "drop", "ALL");
        if (c && !db->postgres &&
            json_object_set_new(c, "volumeMounts",
                                json_pack("[{s:s,s:s}]", "name", "data", "mountPath", "/data")) <
                    0) {
                json_decref(c);
                return NULL;
        }
        return c;
}

json_t *ui_registry_deployment(const struct ui_registry_req *req, const char *ns, const char *image)
{
        char pvc[UI_K8S_NAME_MAX + sizeof(UI_REGISTRY_PVC_SUFFIX)];
        json_t *pod, *d;

        ui_registry_pvc_name(req->name, pvc, sizeof(pvc));

        pod = json_pack("{s:b,s:{s:b,s:i,s:i,s:i,s:{s:s}},s:[o]}", "automountServiceAccountToken",
                        0, "securityContext", "runAsNonRoot", 1, "runAsUser", 65532, "runAsGroup",
                        65532, "fsGroup", 65532, "seccompProfile", "type", "RuntimeDefault",
                        "containers", registry_container(&req->db, image));
        if (pod && !req->db.postgres &&
            json_object_set_new(pod, "volumes",
                                json_pack("[{s:s,s:{s:s}}]", "name", "data",
                                          "persistentVolumeClaim", "claimName", pvc)) < 0) {
                json_decref(pod);
                return NULL;
        }
        /* SQLite has one writer: Recreate, as deploy/overlays/registry-sqlite */
        d = json_pack("{s:s,s:s,s:o,s:{s:i,s:{s:s},s:{s:{s:s,s:s}},s:{s:{s:o},s:o}}}", "apiVersion",
                      "apps/v1", "kind", "Deployment", "metadata", registry_meta(req->name, ns),
                      "spec", "replicas", 1, "strategy", "type",
                      req->db.postgres ? "RollingUpdate" : "Recreate", "selector", "matchLabels",
                      "app", req->name, "component", COMPONENT, "template", "metadata", "labels",
                      registry_labels(req->name), "spec", pod);
        return d;
}

static int set_annotation(json_t *ann, const char *key, const char *v)
{
        if (!v)
                return 0;
        if (!v[0])
                return json_object_del(ann, key), 0;
        return json_object_set_new(ann, key, json_string(v)) < 0 ? -ENOMEM : 0;
}

json_t *ui_registry_service(const struct ui_registry_req *req, const char *ns)
{
        json_t *svc, *ann = json_object();

        if (!ann || set_annotation(ann, "displayName", req->display_name) < 0 ||
            set_annotation(ann, "description", req->description) < 0) {
                json_decref(ann);
                return NULL;
        }
        svc = json_pack("{s:s,s:s,s:o,s:{s:{s:s,s:s},s:[{s:s,s:i,s:s,s:s,s:s}]}}", "apiVersion",
                        "v1", "kind", "Service", "metadata", registry_meta(req->name, ns), "spec",
                        "selector", "app", req->name, "component", COMPONENT, "ports", "name",
                        "http-api", "port", (int)UI_REGISTRY_PORT, "targetPort", "http-api",
                        "protocol", "TCP", "appProtocol", "http");
        if (!svc || json_object_set_new(json_object_get(svc, "metadata"), "annotations", ann) < 0) {
                json_decref(svc);
                return NULL;
        }
        return svc;
}

json_t *ui_registry_role(const char *name, const char *ns)
{
        char role[UI_K8S_NAME_MAX + sizeof(UI_REGISTRY_ROLE_PREFIX)];

        ui_registry_role_name(name, role, sizeof(role));
        return json_pack("{s:s,s:s,s:o,s:[{s:[s],s:[s],s:[s],s:[s]}]}", "apiVersion",
                         RBAC_GROUP "/v1", "kind", "Role", "metadata", registry_meta(role, ns),
                         "rules", "apiGroups", "", "resources", "services", "resourceNames", name,
                         "verbs", "get");
}

json_t *ui_registry_pvc(const char *name, const char *ns)
{
        char pvc[UI_K8S_NAME_MAX + sizeof(UI_REGISTRY_PVC_SUFFIX)];
        json_t *meta;

        ui_registry_pvc_name(name, pvc, sizeof(pvc));
        meta = json_pack("{s:s,s:s,s:o}", "name", pvc, "namespace", ns, "labels",
                         registry_labels(name));
        return json_pack("{s:s,s:s,s:o,s:{s:[s],s:{s:{s:s}}}}", "apiVersion", "v1", "kind",
                         "PersistentVolumeClaim", "metadata", meta, "spec", "accessModes",
                         "ReadWriteOnce", "resources", "requests", "storage", UI_REGISTRY_PVC_SIZE);
}

int ui_registry_service_update(const json_t *current, const struct ui_registry_req *req,
                               json_t **ret)
{
        json_t *out = json_deep_copy(current), *meta = json_object_get(out, "metadata"), *ann;

        ann = json_object_get(meta, "annotations");
        if (out && meta && !json_is_object(ann)) {
                ann = json_object();
                if (json_object_set_new(meta, "annotations", ann) < 0)
                        ann = NULL;
        }
        if (!ann || set_annotation(ann, "displayName", req->display_name) < 0 ||
            set_annotation(ann, "description", req->description) < 0) {
                json_decref(out);
                return -ENOMEM;
        }
        *ret = out;
        return 0;
}

int ui_registry_deployment_update(const json_t *current, const struct ui_registry_req *req,
                                  const char *default_image, json_t **ret)
{
        const char *ns = json_get_string_path(current, "metadata", "namespace", NULL);
        const char *image = default_image;
        const json_t *c;
        json_t *out, *meta = json_deep_copy(json_object_get(current, "metadata"));
        size_t i;

        json_array_foreach(json_get_path(current, "spec", "template", "spec", "containers", NULL),
                           i, c) {
                const char *n = json_string_value(json_object_get(c, "name"));
                const char *img = json_string_value(json_object_get(c, "image"));

                if (n && streq(n, "registry") && img)
                        image = img;
        }
        out = meta ? ui_registry_deployment(req, ns ? ns : "", image) : NULL;
        if (!out || json_object_set_new(out, "metadata", meta) < 0) {
                json_decref(out);
                return -ENOMEM;
        }
        *ret = out;
        return 0;
}

/* The keys of data (borrowed) whose value is a PEM certificate, as the item {name, keys}; NULL
 * (and *none) when there is none. */
static json_t *certificate_item(const json_t *obj, bool secret, bool *none)
{
        const char *name = json_get_string_path(obj, "metadata", "name", NULL);
        const char *prefix = secret ? PEM_CERT_B64 : PEM_CERT;
        json_t *keys = json_array();
        const char *k;
        const json_t *v;

        *none = false;
        json_object_foreach(json_object_get(obj, "data"), k, v) {
                const char *s = json_string_value(v);

                if (s && strneq(s, prefix, strlen(prefix)) &&
                    json_array_append_new(keys, json_string(k)) < 0) {
                        json_decref(keys);
                        return NULL;
                }
        }
        if (!keys || !name || json_array_size(keys) == 0) {
                *none = keys != NULL;
                json_decref(keys);
                return NULL;
        }
        return json_pack("{s:s,s:o}", "name", name, "keys", keys);
}

json_t *ui_certificate_items(const json_t *list, bool secrets)
{
        json_t *out = json_array();
        const json_t *it;
        size_t i;

        json_array_foreach(json_object_get(list, "items"), i, it) {
                const char *type = json_string_value(json_object_get(it, "type"));
                bool none;
                json_t *item;

                if (secrets &&
                    !(type && (streq(type, "Opaque") || streq(type, "kubernetes.io/tls"))))
                        continue;
                item = certificate_item(it, secrets, &none);
                if (!item && none)
                        continue;
                if (!out || json_array_append_new(out, item) < 0) {
                        json_decref(out);
                        return NULL;
                }
        }
        return out;
}

/* The registry container of a Deployment (borrowed), or NULL. */
static const json_t *registry_container_of(const json_t *deployment)
{
        const json_t *c;
        size_t i;

        json_array_foreach(json_get_path(deployment, "spec", "template", "spec", "containers",
                                         NULL),
                           i, c) {
                const char *n = json_string_value(json_object_get(c, "name"));

                if (n && streq(n, "registry"))
                        return c;
        }
        return NULL;
}

/* One "key=value" word of the flag into pg under name (port as a number); -ENOMEM. */
static int database_word(json_t *pg, char *word)
{
        static const char *const keys[][2] = { { "host", "host" },
                                               { "dbname", "database" },
                                               { "user", "username" },
                                               { "sslmode", "sslMode" } };
        char *eq = strchr(word, '=');

        if (!eq)
                return 0;
        *eq++ = '\0';
        if (streq(word, "port")) {
                uint16_t port;

                if (safe_atou16(eq, &port) < 0)
                        return 0;
                return json_object_set_new(pg, "port", json_integer(port)) < 0 ? -ENOMEM : 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (streq(word, keys[i][0]))
                        return json_object_set_new(pg, keys[i][1], json_string(eq)) < 0 ? -ENOMEM
                                                                                        : 0;
        return 0;
}

/* The PGPASSWORD Secret of container c (borrowed) into pg; -ENOMEM. */
static int database_secret(json_t *pg, const json_t *c)
{
        const json_t *e;
        size_t i;

        json_array_foreach(json_object_get(c, "env"), i, e) {
                const char *n = json_string_value(json_object_get(e, "name"));
                const json_t *ref = json_get_path(e, "valueFrom", "secretKeyRef", NULL);

                if (n && streq(n, "PGPASSWORD") && json_is_object(ref))
                        return json_object_set_new(
                                       pg, "passwordSecret",
                                       json_pack("{s:s?,s:s?}", "name",
                                                 json_string_value(json_object_get(ref, "name")),
                                                 "key",
                                                 json_string_value(json_object_get(ref, "key")))) <
                                               0
                                       ? -ENOMEM
                                       : 0;
        }
        return 0;
}

int ui_registry_kind_set_database(json_t *kind, const json_t *deployment)
{
        static const char prefix[] = "--database=";
        const json_t *c = registry_container_of(deployment), *a;
        char flag[sizeof("host= port=65535 dbname= user= sslmode=") + UI_DB_HOST_MAX +
                  (size_t)2 * UI_DB_IDENT_MAX + 16];
        json_t *pg, *spec = json_object_get(kind, "spec");
        size_t i;
        int r = 0;

        flag[0] = '\0';
        json_array_foreach(json_object_get(c, "args"), i, a) {
                const char *s = json_string_value(a);

                if (s && strneq(s, prefix, sizeof(prefix) - 1) &&
                    strlen(s) - (sizeof(prefix) - 1) < sizeof(flag))
                        memcpy(flag, s + sizeof(prefix) - 1, strlen(s) - (sizeof(prefix) - 1) + 1);
        }
        if (!flag[0] || !strstr(flag, "host=") || !json_is_object(spec))
                return 0; /* SQLite, or not the console's shape */
        pg = json_object();
        if (!pg || json_object_set_new(spec, "postgres", pg) < 0)
                return -ENOMEM;
        /* words of a checked character set, one space apart (database_flag()) */
        for (char *w = flag, *sp; w && r >= 0; w = sp ? sp + 1 : NULL) {
                sp = strchr(w, ' ');
                if (sp)
                        *sp = '\0';
                r = database_word(pg, w);
        }
        return r < 0 ? r : database_secret(pg, c);
}
