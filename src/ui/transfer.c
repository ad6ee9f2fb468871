/* SPDX-License-Identifier: Apache-2.0 */
#include "ui/transfer.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json/json-util.h"
#include "ui/deploy.h"
#include "util/base64.h"
#include "util/string-util.h"
#include "util/time-util.h"

#define F(m)            offsetof(struct ui_transfer_req, m)
#define STR_AT(q, off)  (*(char **)((char *)(q) + (off)))
#define CSTR_AT(q, off) (*(char *const *)((const char *)(q) + (off)))

static const size_t STRING_FIELDS[] = {
        F(name),          F(display_name),
        F(description),   F(ns),
        F(source_type),   F(bucket),
        F(key),           F(region),
        F(endpoint),      F(source_uri),
        F(aws_key_id),    F(aws_secret),
        F(dest_type),     F(dest_uri),
        F(dest_registry), F(username),
        F(password),      F(intent),
        F(rm_id),         F(rm_name),
        F(mv_id),         F(mv_name),
        F(ma_id),         F(ma_name),
        F(author),        F(version_description),
        F(format),        F(format_version),
};

void ui_transfer_req_done(struct ui_transfer_req *q)
{
        for (size_t i = 0; i < ELEMENTSOF(STRING_FIELDS); i++) {
                char **s = &STR_AT(q, STRING_FIELDS[i]);

                if (*s)
                        explicit_bzero(*s, strlen(*s)); /* credentials among them */
                free(*s);
                *s = NULL;
        }
        json_decref(q->model_props);
        json_decref(q->version_props);
        q->model_props = q->version_props = NULL;
}

static bool blank(char c)
{
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A string field: at most UI_TRANSFER_FIELD_MAX bytes, trimmed, NULL when empty. */
static int dispatch_text(const char *name, json_t *v, void *ret, struct error_detail *e)
{
        char **s = ret;
        const char *p;
        size_t n;
        int r;

        if (json_string_length(v) > UI_TRANSFER_FIELD_MAX)
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL, name,
                                              "field \"%s\" is longer than %u bytes", name,
                                              UI_TRANSFER_FIELD_MAX);
        r = json_dispatch_const_string(name, v, &p, e);
        if (r < 0)
                return r;
        while (blank(*p))
                p++;
        n = strlen(p);
        while (n > 0 && blank(p[n - 1]))
                n--;
        free(*s);
        *s = NULL;
        if (n == 0)
                return 0;
        *s = strndup(p, n);
        return *s ? 0 : -ENOMEM;
}

/* Custom properties: an object whose JSON text is at most UI_TRANSFER_PROPS_MAX bytes. */
static int dispatch_props(const char *name, json_t *v, void *ret, struct error_detail *e)
{
        json_t **p = ret;
        size_t n = json_dumpb(v, NULL, 0, JSON_COMPACT);

        if (n > UI_TRANSFER_PROPS_MAX)
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL, name,
                                              "field \"%s\" is larger than %u bytes", name,
                                              UI_TRANSFER_PROPS_MAX);
        json_decref(*p);
        *p = json_object_size(v) > 0 ? json_incref(v) : NULL;
        return 0;
}

#define TEXT(n, m)                                                 \
        {                                                          \
                n, JSON_STRING, dispatch_text, F(m), JSON_NULLABLE \
        }

static const struct json_field SOURCE_FIELDS[] = {
        TEXT("type", source_type),
        TEXT("bucket", bucket),
        TEXT("key", key),
        TEXT("region", region),
        TEXT("endpoint", endpoint),
        TEXT("uri", source_uri),
        TEXT("awsAccessKeyId", aws_key_id),
        TEXT("awsSecretAccessKey", aws_secret),
        { 0 },
};

static const struct json_field DEST_FIELDS[] = {
        TEXT("type", dest_type),    TEXT("uri", dest_uri),      TEXT("registry", dest_registry),
        TEXT("username", username), TEXT("password", password), { 0 },
};

static const struct json_field JOB_FIELDS[] = {
        TEXT("name", name),
        TEXT("jobDisplayName", display_name),
        TEXT("description", description),
        TEXT("namespace", ns),
        TEXT("uploadIntent", intent),
        TEXT("registeredModelId", rm_id),
        TEXT("registeredModelName", rm_name),
        TEXT("modelVersionId", mv_id),
        TEXT("modelVersionName", mv_name),
        TEXT("modelArtifactId", ma_id),
        TEXT("modelArtifactName", ma_name),
        TEXT("author", author),
        TEXT("versionDescription", version_description),
        TEXT("sourceModelFormat", format),
        TEXT("sourceModelFormatVersion", format_version),
        { "modelCustomProperties", JSON_OBJECT, dispatch_props, F(model_props), JSON_NULLABLE },
        { "versionCustomProperties", JSON_OBJECT, dispatch_props, F(version_props), JSON_NULLABLE },
        { 0 },
};

/* Dispatches the nested object member (may be absent or null) with its fields' path. */
static int read_nested(json_t *data, const char *member, const struct json_field *table,
                       struct ui_transfer_req *ret, struct error_detail *err)
{
        json_t *v = json_object_get(data, member);
        char field[sizeof(err->field) + 32];
        int r;

        if (!v || json_is_null(v))
                return 0;
        if (!json_is_object(v))
                return error_detail_set_field(err, ERROR_INVALID, -EINVAL, member,
                                              "field \"%s\" must be an object", member);
        r = json_dispatch(v, table, JSON_DISPATCH_ALLOW_UNKNOWN, ret, err);
        if (r < 0 && err) {
                (void)snprintf(field, sizeof(field), "%s.%s", member, err->field);
                (void)snprintf(err->field, sizeof(err->field), "%.127s", field);
        }
        return r;
}

int ui_transfer_req_read(json_t *data, struct ui_transfer_req *ret, struct error_detail *err)
{
        int r;

        r = json_dispatch(data, JOB_FIELDS, JSON_DISPATCH_ALLOW_UNKNOWN, ret, err);
        if (r >= 0)
                r = read_nested(data, "source", SOURCE_FIELDS, ret, err);
        if (r >= 0)
                r = read_nested(data, "destination", DEST_FIELDS, ret, err);
        return r;
}

/* An RFC 1123 subdomain of at most 63 characters (the Job's name is a label value too). */
static bool job_name_ok(const char *s)
{
        char part[UI_TRANSFER_NAME_MAX + 1];
        size_t n = strlen(s);

        if (n == 0 || n > UI_TRANSFER_NAME_MAX)
                return false;
        for (const char *p = s; *p;) {
                size_t k = strcspn(p, ".");

                memcpy(part, p, k);
                part[k] = '\0';
                if (!ui_rfc1123_label(part))
                        return false;
                p += k;
                if (*p == '.' && !*++p)
                        return false;
        }
        return true;
}

static int invalid(struct error_detail *err, const char *field, const char *msg)
{
        return error_detail_set_field(err, ERROR_INVALID, -EINVAL, field, "%s: %s", field, msg);
}

struct need {
        size_t off;
        const char *field, *msg;
};

static int needs(const struct ui_transfer_req *q, const struct need *n, size_t count,
                 struct error_detail *err)
{
        for (size_t i = 0; i < count; i++)
                if (!CSTR_AT(q, n[i].off))
                        return invalid(err, n[i].field, n[i].msg);
        return 0;
}

static int validate_name(const struct ui_transfer_req *q, struct error_detail *err)
{
        static const struct need head[] = {
                { F(name), "name", "the job's resource name is required" },
                { F(display_name), "jobDisplayName", "the job's display name is required" },
                { F(ns), "namespace", "the job's namespace is required" },
        };
        int r = needs(q, head, ELEMENTSOF(head), err);

        if (r < 0)
                return r;
        if (!job_name_ok(q->name))
                return invalid(err, "name",
                               "must be an RFC 1123 subdomain (lowercase letters, digits, '-' "
                               "and '.') of at most 63 characters");
        if (!ui_rfc1123_label(q->ns))
                return invalid(err, "namespace", "is not a namespace name");
        return 0;
}

static int validate_source(const struct ui_transfer_req *q, struct error_detail *err)
{
        static const struct need s3[] = {
                { F(bucket), "source.bucket", "a bucket is required for an s3 source" },
                { F(key), "source.key", "a key is required for an s3 source" },
                { F(aws_key_id), "source.awsAccessKeyId",
                  "an AWS access key ID is required for an s3 source" },
                { F(aws_secret), "source.awsSecretAccessKey",
                  "an AWS secret access key is required for an s3 source" },
        };
        static const struct need uri[] = {
                { F(source_uri), "source.uri", "a URI is required for a uri source" },
        };

        if (!q->source_type)
                return invalid(err, "source.type", "the source type is required (s3 or uri)");
        if (streq(q->source_type, "s3"))
                return needs(q, s3, ELEMENTSOF(s3), err);
        if (streq(q->source_type, "uri"))
                return needs(q, uri, ELEMENTSOF(uri), err);
        return error_detail_set_field(err, ERROR_INVALID, -EINVAL, "source.type",
                                      "source.type: \"%.80s\" is not a source type (s3 or uri)",
                                      q->source_type);
}

static int validate_destination(struct ui_transfer_req *q, bool reuse_creds,
                                struct error_detail *err)
{
        static const struct need creds[] = {
                { F(username), "destination.username",
                  "a username is required for an oci destination" },
                { F(password), "destination.password",
                  "a password is required for an oci destination" },
        };

        if (!q->dest_type)
                return invalid(err, "destination.type", "the destination type is required (oci)");
        if (!streq(q->dest_type, "oci"))
                return error_detail_set_field(err, ERROR_INVALID, -EINVAL, "destination.type",
                                              "destination.type: \"%.80s\" is not a destination "
                                              "type (oci)",
                                              q->dest_type);
        if (!q->dest_uri)
                return invalid(err, "destination.uri", "a URI is required for an oci destination");
        if (!q->dest_registry) {
                size_t n = strcspn(q->dest_uri, "/");

                if (n == 0)
                        return invalid(err, "destination.uri",
                                       "no registry in it (give destination.registry)");
                q->dest_registry = strndup(q->dest_uri, n);
                if (!q->dest_registry)
                        return -ENOMEM;
        }
        return reuse_creds ? 0 : needs(q, creds, ELEMENTSOF(creds), err);
}

static int validate_intent(const struct ui_transfer_req *q, struct error_detail *err)
{
        static const struct need create_model[] = {
                { F(rm_name), "registeredModelName",
                  "a registered model name is required for create_model" },
                { F(mv_name), "modelVersionName",
                  "a model version name is required for "
                  "create_model" },
        };
        static const struct need create_version[] = {
                { F(rm_id), "registeredModelId",
                  "a registered model ID is required for create_version" },
                { F(mv_name), "modelVersionName",
                  "a model version name is required for create_version" },
        };
        static const struct need update_artifact[] = {
                { F(ma_id), "modelArtifactId",
                  "a model artifact ID is required for update_artifact" },
        };

        if (!q->intent)
                return invalid(err, "uploadIntent",
                               "the upload intent is required (create_model, create_version or "
                               "update_artifact)");
        if (streq(q->intent, "create_model"))
                return needs(q, create_model, ELEMENTSOF(create_model), err);
        if (streq(q->intent, "create_version"))
                return needs(q, create_version, ELEMENTSOF(create_version), err);
        if (streq(q->intent, "update_artifact"))
                return needs(q, update_artifact, ELEMENTSOF(update_artifact), err);
        return error_detail_set_field(err, ERROR_INVALID, -EINVAL, "uploadIntent",
                                      "uploadIntent: \"%.80s\" is not an upload intent "
                                      "(create_model, create_version or update_artifact)",
                                      q->intent);
}

int ui_transfer_validate(struct ui_transfer_req *q, bool reuse_dest_creds, struct error_detail *err)
{
        int r = validate_name(q, err);

        if (r >= 0)
                r = validate_source(q, err);
        if (r >= 0)
                r = validate_destination(q, reuse_dest_creds, err);
        if (r >= 0)
                r = validate_intent(q, err);
        return r;
}

/* ---- the objects ---- */

static const char *str(const char *s)
{
        return s ? s : "";
}

static json_t *meta(const struct ui_transfer_req *q, const char *suffix, const char *job_id)
{
        char gen[UI_TRANSFER_NAME_MAX + 32];

        (void)snprintf(gen, sizeof(gen), "%s%s", q->name, suffix);
        return json_pack("{s:s,s:s,s:{s:s,s:s}}", "generateName", gen, "namespace", q->ns, "labels",
                         UI_TRANSFER_LABEL_TYPE, UI_TRANSFER_JOB_TYPE, UI_TRANSFER_LABEL_ID,
                         job_id);
}

static int set_str(json_t *o, const char *key, const char *v)
{
        return json_object_set_new(o, key, json_string(str(v)));
}

static int set_props(json_t *data, const char *key, const json_t *props)
{
        AUTOFREE char *text = NULL;

        if (!props)
                return 0;
        text = json_dumps_compact(props);
        return text ? set_str(data, key, text) : -ENOMEM;
}

static int cm_intent(json_t *d, const struct ui_transfer_req *q)
{
        int r = 0;

        if (streq(q->intent, "create_model")) {
                r |= set_str(d, "RegisteredModel.name", q->rm_name);
                r |= set_str(d, "RegisteredModel.description", q->description);
                r |= set_str(d, "RegisteredModel.owner", q->author);
        } else if (streq(q->intent, "create_version")) {
                r |= set_str(d, "RegisteredModel.id", q->rm_id);
        } else {
                r |= set_str(d, "RegisteredModel.id", q->rm_id);
                r |= set_str(d, "ModelVersion.id", q->mv_id);
                r |= set_str(d, "ModelArtifact.id", q->ma_id);
        }
        return r;
}

static int cm_data(json_t *d, const struct ui_transfer_req *q)
{
        int r = 0;

        r |= set_str(d, "ModelVersion.name", q->mv_name);
        r |= set_str(d, "ModelVersion.author", q->author);
        r |= set_str(d, "ModelArtifact.name", q->mv_name); /* as upstream: the version's name */
        if (q->version_description) {
                r |= set_str(d, "ModelVersion.description", q->version_description);
                r |= set_str(d, "ModelArtifact.description", q->version_description);
        }
        if (q->format)
                r |= set_str(d, "ModelArtifact.model_format_name", q->format);
        if (q->format_version)
                r |= set_str(d, "ModelArtifact.model_format_version", q->format_version);
        r |= set_props(d, "RegisteredModel.customProperties", q->model_props);
        r |= set_props(d, "ModelVersion.customProperties", q->version_props);
        r |= set_props(d, "ModelArtifact.customProperties", q->version_props);
        r |= cm_intent(d, q);
        r |= set_str(d, "ModelArtifact.model_source_kind", "transfer_job");
        r |= set_str(d, "ModelArtifact.model_source_class", "async-upload");
        r |= set_str(d, "ModelArtifact.model_source_group", q->ns);
        r |= set_str(d, "ModelArtifact.model_source_name", q->name);
        return r;
}

json_t *ui_transfer_configmap(const struct ui_transfer_req *q, const char *job_id)
{
        json_t *data = json_object();

        if (!data || cm_data(data, q) != 0) {
                json_decref(data);
                return NULL;
        }
        return json_pack("{s:s,s:s,s:o,s:o}", "apiVersion", "v1", "kind", "ConfigMap", "metadata",
                         meta(q, "-metadata-configmap-", job_id), "data", data);
}

json_t *ui_transfer_source_secret(const struct ui_transfer_req *q, const char *job_id)
{
        json_t *sd = json_pack("{s:s,s:s,s:s,s:s}", "AWS_ACCESS_KEY_ID", str(q->aws_key_id),
                               "AWS_SECRET_ACCESS_KEY", str(q->aws_secret), "AWS_S3_ENDPOINT",
                               str(q->endpoint), "AWS_S3_BUCKET", str(q->bucket));

        if (sd && q->region && set_str(sd, "AWS_DEFAULT_REGION", q->region) < 0) {
                json_decref(sd);
                return NULL;
        }
        return json_pack("{s:s,s:s,s:o,s:s,s:o}", "apiVersion", "v1", "kind", "Secret", "metadata",
                         meta(q, "-source-creds-", job_id), "type", "Opaque", "stringData", sd);
}

json_t *ui_transfer_dest_secret(const struct ui_transfer_req *q, const char *job_id)
{
        CLEANUP(json_decrefp) json_t *cfg = NULL;
        AUTOFREE char *plain = NULL, *auth = NULL, *text = NULL;
        int n;

        n = asprintf(&plain, "%s:%s", str(q->username), str(q->password));
        if (n < 0)
                return NULL;
        auth = base64_encode(plain, (size_t)n);
        explicit_bzero(plain, (size_t)n);
        if (!auth)
                return NULL;
        cfg = json_pack("{s:{s:{s:s}}}", "auths", str(q->dest_registry), "auth", auth);
        explicit_bzero(auth, strlen(auth));
        text = cfg ? json_dumps_compact(cfg) : NULL;
        if (!text)
                return NULL;
        json_t *ret = json_pack("{s:s,s:s,s:o,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Secret",
                                "metadata", meta(q, "-dest-creds-", job_id), "type",
                                "kubernetes.io/dockerconfigjson", "stringData", ".dockerconfigjson",
                                text);
        explicit_bzero(text, strlen(text));
        return ret;
}

json_t *ui_transfer_dest_secret_copy(const struct ui_transfer_req *q, const char *job_id,
                                     json_t *data)
{
        return json_pack("{s:s,s:s,s:o,s:s,s:O}", "apiVersion", "v1", "kind", "Secret", "metadata",
                         meta(q, "-dest-creds-", job_id), "type", "kubernetes.io/dockerconfigjson",
                         "data", data);
}

/* Upstream's reading of the registry's address: origin (scheme://host), port, secure. */
struct reg_addr {
        char origin[512];
        char port[8];
        bool secure;
};

static int bad_address(struct error_detail *err, const char *url, const char *what)
{
        return error_detail_set(err, ERROR_INTERNAL, -EINVAL,
                                "the registry's address \"%.200s\" %s", url, what);
}

/* The host part of host[:port] (end: its end): *ret_hend its end, *ret_port the port or NULL;
 * an IPv6 host keeps its brackets. False when it cannot be read. */
static bool split_host(const char *host, const char *end, const char **ret_hend,
                       const char **ret_port)
{
        const char *hend;

        if (*host == '[') {
                const char *close = memchr(host, ']', (size_t)(end - host));

                if (!close || (close + 1 < end && close[1] != ':'))
                        return false;
                hend = close + 1;
                *ret_port = hend < end ? hend + 1 : NULL;
        } else {
                hend = memchr(host, ':', (size_t)(end - host));
                *ret_port = hend ? hend + 1 : NULL;
                if (!hend)
                        hend = end;
        }
        *ret_hend = hend;
        return hend > host;
}

static int registry_address(const char *url, struct reg_addr *ret, struct error_detail *err)
{
        const char *host, *end, *hend = NULL, *port = NULL;
        size_t scheme_len, port_len;

        ret->secure = strncasecmp(url, "https://", 8) == 0;
        if (!ret->secure && strncasecmp(url, "http://", 7) != 0)
                return bad_address(err, url, "is not an http(s) URL");
        scheme_len = ret->secure ? 5 : 4;
        host = url + scheme_len + 3;
        end = host + strcspn(host, "/?#");
        if (!split_host(host, end, &hend, &port) ||
            (size_t)(hend - host) + 8 >= sizeof(ret->origin))
                return bad_address(err, url, "has no usable host");
        port_len = port ? (size_t)(end - port) : 0;
        if (port && (port_len == 0 || port_len >= sizeof(ret->port)))
                return bad_address(err, url, "has a bad port");
        (void)snprintf(ret->origin, sizeof(ret->origin), "%s://%.*s",
                       ret->secure ? "https" : "http", (int)(hend - host), host);
        if (port)
                (void)snprintf(ret->port, sizeof(ret->port), "%.*s", (int)port_len, port);
        else
                (void)snprintf(ret->port, sizeof(ret->port), "%s", ret->secure ? "443" : "80");
        return 0;
}

int ui_transfer_registry_check(const char *url, struct error_detail *err)
{
        struct reg_addr a;

        return registry_address(url, &a, err);
}

static int env_add(json_t *env, const char *name, const char *value)
{
        return json_array_append_new(env,
                                     json_pack("{s:s,s:s}", "name", name, "value", str(value)));
}

static json_t *job_env(const struct ui_transfer_req *q, const struct reg_addr *a)
{
        CLEANUP(json_decrefp) json_t *env = json_array();
        bool s3 = streq(q->source_type, "s3");
        int r = 0;

        if (!env)
                return NULL;
        r |= env_add(env, "MODEL_SYNC_SOURCE_TYPE", q->source_type);
        r |= env_add(env, "MODEL_SYNC_DESTINATION_TYPE", q->dest_type);
        r |= env_add(env, "MODEL_SYNC_DESTINATION_OCI_URI", q->dest_uri);
        r |= env_add(env, "MODEL_SYNC_DESTINATION_OCI_REGISTRY", q->dest_registry);
        r |= env_add(env, "MODEL_SYNC_DESTINATION_OCI_CREDENTIALS_PATH",
                     UI_TRANSFER_DEST_CREDS_DIR "/.dockerconfigjson");
        r |= env_add(env, "MODEL_SYNC_REGISTRY_SERVER_ADDRESS", a->origin);
        r |= env_add(env, "MODEL_SYNC_REGISTRY_PORT", a->port);
        r |= env_add(env, "MODEL_SYNC_REGISTRY_IS_SECURE", a->secure ? "true" : "false");
        r |= env_add(env, "MODEL_SYNC_METADATA_CONFIGMAP_PATH", UI_TRANSFER_METADATA_DIR);
        r |= env_add(env, "MODEL_SYNC_MODEL_UPLOAD_INTENT", q->intent);
        if (streq(q->intent, "create_version") && q->rm_id)
                r |= env_add(env, "MODEL_SYNC_MODEL_ID", q->rm_id);
        if (streq(q->dest_registry, "quay.io"))
                r |= env_add(env, "MODEL_SYNC_DESTINATION_OCI_BASE_IMAGE",
                             "quay.io/quay/busybox:latest");
        if (s3) {
                r |= env_add(env, "MODEL_SYNC_SOURCE_AWS_KEY", q->key);
                r |= env_add(env, "MODEL_SYNC_SOURCE_S3_CREDENTIALS_PATH",
                             UI_TRANSFER_SOURCE_CREDS_DIR);
        } else
                r |= env_add(env, "MODEL_SYNC_SOURCE_URI", q->source_uri);
        return r == 0 ? TAKE_PTR(env) : NULL;
}

/* Upstream's annotations: what the view reads back, and what a retry reuses. */
static json_t *job_annotations(const struct ui_transfer_req *q,
                               const struct ui_transfer_names *names, const char *registry)
{
        const char *const pairs[][2] = {
                { "display-name", q->display_name },
                { "source-type", q->source_type },
                { "dest-type", q->dest_type },
                { "dest-uri", q->dest_uri },
                { "dest-registry", q->dest_registry },
                { "upload-intent", q->intent },
                { "model-name", q->rm_name },
                { "version-name", q->mv_name },
                { "artifact-name", q->mv_name },
                { "description", q->description },
                { "author", q->author },
                { "configmap-name", names->configmap },
                { "dest-secret", names->dest_secret },
                { "registered-model-id", q->rm_id },
                { "model-version-id", q->mv_id },
                { "model-artifact-id", q->ma_id },
                { "model-registry-name", registry },
        };
        const char *const s3[][2] = {
                { "source-bucket", q->bucket },
                { "source-key", q->key },
                { "source-secret", names->source_secret },
        };
        CLEANUP(json_decrefp) json_t *a = json_object();
        char key[128];
        int r = 0;

        if (!a)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(pairs); i++) {
                (void)snprintf(key, sizeof(key), UI_TRANSFER_ANN "%s", pairs[i][0]);
                r |= set_str(a, key, pairs[i][1]);
        }
        if (streq(q->source_type, "s3"))
                for (size_t i = 0; i < ELEMENTSOF(s3); i++) {
                        (void)snprintf(key, sizeof(key), UI_TRANSFER_ANN "%s", s3[i][0]);
                        r |= set_str(a, key, s3[i][1]);
                }
        else
                r |= set_str(a, UI_TRANSFER_ANN "source-uri", q->source_uri);
        return r == 0 ? TAKE_PTR(a) : NULL;
}

static int job_volumes(const struct ui_transfer_req *q, const struct ui_transfer_names *names,
                       json_t **ret_volumes, json_t **ret_mounts)
{
        CLEANUP(json_decrefp) json_t *v = NULL, *m = NULL;

        v = json_pack("[{s:s,s:{s:s,s:[{s:s,s:s}]}},{s:s,s:{s:s}}]", "name",
                      "destination-credentials", "secret", "secretName", str(names->dest_secret),
                      "items", "key", ".dockerconfigjson", "path", ".dockerconfigjson", "name",
                      "model-metadata", "configMap", "name", str(names->configmap));
        m = json_pack("[{s:s,s:s,s:b},{s:s,s:s,s:b}]", "name", "destination-credentials",
                      "mountPath", UI_TRANSFER_DEST_CREDS_DIR, "readOnly", 1, "name",
                      "model-metadata", "mountPath", UI_TRANSFER_METADATA_DIR, "readOnly", 1);
        if (!v || !m)
                return -ENOMEM;
        if (streq(q->source_type, "s3") &&
            (json_array_append_new(v, json_pack("{s:s,s:{s:s}}", "name", "source-credentials",
                                                "secret", "secretName",
                                                str(names->source_secret))) < 0 ||
             json_array_append_new(m, json_pack("{s:s,s:s,s:b}", "name", "source-credentials",
                                                "mountPath", UI_TRANSFER_SOURCE_CREDS_DIR,
                                                "readOnly", 1)) < 0))
                return -ENOMEM;
        *ret_volumes = TAKE_PTR(v);
        *ret_mounts = TAKE_PTR(m);
        return 0;
}

int ui_transfer_job(const struct ui_transfer_req *q, const char *job_id,
                    const struct ui_transfer_names *names, const struct ui_transfer_target *t,
                    json_t **ret, struct error_detail *err)
{
        struct reg_addr a = { 0 };
        json_t *volumes = NULL, *mounts = NULL, *env, *ann, *container, *job;
        int r;

        r = registry_address(t->registry_url, &a, err);
        if (r < 0)
                return r;
        r = job_volumes(q, names, &volumes, &mounts);
        if (r < 0)
                return r;
        env = job_env(q, &a);
        ann = job_annotations(q, names, t->registry_name);
        container = json_pack("{s:s,s:s,s:s,s:[s,s],s:o,s:o,s:{s:b,s:{s:[s]},s:{s:s}}}", "name",
                              UI_TRANSFER_JOB_TYPE, "image", t->image, "imagePullPolicy",
                              "IfNotPresent", "command", "modelplane", "async-upload",
                              "volumeMounts", mounts, "env", env, "securityContext",
                              "allowPrivilegeEscalation", 0, "capabilities", "drop", "ALL",
                              "seccompProfile", "type", "RuntimeDefault");
        job = json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s,s:s,s:s},s:o},s:{s:i,s:{s:{s:{s:s}},s:{s:s,"
                        "s:{s:b},s:o,s:[o]}}}}",
                        "apiVersion", "batch/v1", "kind", "Job", "metadata", "name", q->name,
                        "namespace", q->ns, "labels", UI_TRANSFER_LABEL_TYPE, UI_TRANSFER_JOB_TYPE,
                        UI_TRANSFER_LABEL_ID, job_id, UI_TRANSFER_LABEL_REGISTRY, t->registry_name,
                        "annotations", ann, "spec", "backoffLimit", 3, "template", "metadata",
                        "labels", UI_TRANSFER_LABEL_TYPE, UI_TRANSFER_JOB_TYPE, "spec",
                        "restartPolicy", "Never", "securityContext", "runAsNonRoot", 1, "volumes",
                        volumes, "containers", container);
        if (!job)
                return -ENOMEM;
        *ret = job;
        return 0;
}

json_t *ui_transfer_owner_patch(const json_t *job)
{
        return json_pack("{s:{s:[{s:s,s:s,s:s,s:s}]}}", "metadata", "ownerReferences", "apiVersion",
                         "batch/v1", "kind", "Job", "name",
                         str(json_get_string_path(job, "metadata", "name", NULL)), "uid",
                         str(json_get_string_path(job, "metadata", "uid", NULL)));
}

static const char *ann(const json_t *job, const char *key)
{
        char k[128];

        (void)snprintf(k, sizeof(k), UI_TRANSFER_ANN "%s", key);
        return json_get_string_path(job, "metadata", "annotations", k, NULL);
}

static const char *nonempty(const char *s)
{
        return s && *s ? s : NULL;
}

struct ui_transfer_names ui_transfer_names_of(const json_t *job)
{
        return (struct ui_transfer_names){
                .configmap = nonempty(ann(job, "configmap-name")),
                .source_secret = nonempty(ann(job, "source-secret")),
                .dest_secret = nonempty(ann(job, "dest-secret")),
        };
}

bool ui_transfer_job_of(const json_t *job, const char *registry_name)
{
        const json_t *labels = json_get_path(job, "metadata", "labels", NULL);

        return streq(str(json_string_value(json_object_get(labels, UI_TRANSFER_LABEL_TYPE))),
                     UI_TRANSFER_JOB_TYPE) &&
               streq(str(json_string_value(json_object_get(labels, UI_TRANSFER_LABEL_REGISTRY))),
                     registry_name);
}

/* ---- the view ---- */

const char *ui_transfer_status_name(enum ui_transfer_status s)
{
        static const char *const names[] = { "PENDING", "RUNNING", "COMPLETED", "FAILED",
                                             "CANCELLED" };

        return (size_t)s < ELEMENTSOF(names) ? names[s] : "PENDING";
}

/* The Job's condition of type (status True), or NULL. */
static const json_t *condition(const json_t *job, const char *type)
{
        const json_t *c;
        size_t i;

        json_array_foreach(json_get_path(job, "status", "conditions", NULL), i, c)
                if (streq(str(json_get_string_path(c, "type", NULL)), type) &&
                    streq(str(json_get_string_path(c, "status", NULL)), "True"))
                        return c;
        return NULL;
}

static json_int_t count(const json_t *job, const char *key)
{
        return json_integer_value(json_get_path(job, "status", key, NULL));
}

enum ui_transfer_status ui_transfer_status_of(const json_t *job, const char **ret_msg)
{
        const json_t *failed = condition(job, "Failed");

        if (ret_msg)
                *ret_msg = failed ? json_get_string_path(failed, "message", NULL) : NULL;
        if (condition(job, "Complete") || count(job, "succeeded") > 0)
                return UI_TRANSFER_COMPLETED;
        if (failed)
                return UI_TRANSFER_FAILED;
        if (json_is_true(json_get_path(job, "spec", "suspend", NULL)))
                return UI_TRANSFER_CANCELLED;
        if (count(job, "failed") > 0 && count(job, "active") == 0)
                return UI_TRANSFER_FAILED;
        if (count(job, "active") > 0)
                return UI_TRANSFER_RUNNING;
        return UI_TRANSFER_PENDING;
}

/* Milliseconds since the epoch of an RFC 3339 time, as upstream's decimal string; "0" when
 * absent (Go's zero time is earlier still; no Job lacks its creation time). */
static void epoch_ms(const char *t, char buf[32])
{
        usec_t u = 0;

        if (!t || parse_rfc3339(t, &u) < 0)
                u = 0;
        (void)snprintf(buf, 32, "%" PRIu64, (uint64_t)(u / 1000));
}

/* Sets key to an annotation's value when it is not empty (upstream's omitempty). */
static int opt_ann(json_t *o, const char *key, const json_t *job, const char *annotation)
{
        const char *v = nonempty(ann(job, annotation));

        return v ? json_object_set_new(o, key, json_string(v)) : 0;
}

static int opt_str(json_t *o, const char *key, const char *v)
{
        return nonempty(v) ? json_object_set_new(o, key, json_string(v)) : 0;
}

static json_t *view_source(const json_t *job)
{
        CLEANUP(json_decrefp) json_t *s = json_pack("{s:s}", "type", str(ann(job, "source-type")));
        int r = 0;

        if (!s)
                return NULL;
        r |= opt_ann(s, "bucket", job, "source-bucket");
        r |= opt_ann(s, "key", job, "source-key");
        r |= opt_ann(s, "uri", job, "source-uri");
        r |= opt_ann(s, "secretName", job, "source-secret");
        return r == 0 ? TAKE_PTR(s) : NULL;
}

static json_t *view_destination(const json_t *job)
{
        CLEANUP(json_decrefp) json_t *d = json_pack("{s:s}", "type", str(ann(job, "dest-type")));
        int r = 0;

        if (!d)
                return NULL;
        r |= opt_ann(d, "uri", job, "dest-uri");
        r |= opt_ann(d, "registry", job, "dest-registry");
        r |= opt_ann(d, "secretName", job, "dest-secret");
        return r == 0 ? TAKE_PTR(d) : NULL;
}

json_t *ui_transfer_view(const json_t *job)
{
        static const char *const optional[][2] = {
                { "description", "description" },
                { "registeredModelId", "registered-model-id" },
                { "registeredModelName", "model-name" },
                { "modelVersionId", "model-version-id" },
                { "modelVersionName", "version-name" },
                { "modelArtifactId", "model-artifact-id" },
                { "author", "author" },
                { "sourceSecretName", "source-secret" },
                { "destSecretName", "dest-secret" },
        };
        CLEANUP(json_decrefp) json_t *v = NULL;
        const char *msg = NULL, *artifact;
        const char *created = json_get_string_path(job, "metadata", "creationTimestamp", NULL);
        const char *done = json_get_string_path(job, "status", "completionTime", NULL);
        enum ui_transfer_status st = ui_transfer_status_of(job, &msg);
        char c_ms[32], u_ms[32];
        int r = 0;

        epoch_ms(created, c_ms);
        epoch_ms(done ? done : created, u_ms);
        v = json_pack("{s:s,s:s,s:s,s:o,s:o,s:s,s:s,s:s,s:s,s:s}", "id",
                      str(json_get_string_path(job, "metadata", "labels", UI_TRANSFER_LABEL_ID,
                                               NULL)),
                      "name", str(json_get_string_path(job, "metadata", "name", NULL)),
                      "jobDisplayName", str(ann(job, "display-name")), "source", view_source(job),
                      "destination", view_destination(job), "uploadIntent",
                      str(ann(job, "upload-intent")), "namespace",
                      str(json_get_string_path(job, "metadata", "namespace", NULL)), "status",
                      ui_transfer_status_name(st), "createTimeSinceEpoch", c_ms,
                      "lastUpdateTimeSinceEpoch", u_ms);
        if (!v)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(optional); i++)
                r |= opt_ann(v, optional[i][0], job, optional[i][1]);
        artifact = nonempty(ann(job, "artifact-name"));
        r |= opt_str(v, "modelArtifactName", artifact ? artifact : ann(job, "version-name"));
        r |= opt_str(v, "errorMessage", msg);
        return r == 0 ? TAKE_PTR(v) : NULL;
}

static bool pod_waiting_failure(const char *reason)
{
        static const char *const reasons[] = { "ImagePullBackOff", "ErrImagePull",
                                               "CrashLoopBackOff", "CreateContainerConfigError",
                                               "InvalidImageName" };

        for (size_t i = 0; i < ELEMENTSOF(reasons); i++)
                if (streq(reason, reasons[i]))
                        return true;
        return false;
}

int ui_transfer_pod_error(const json_t *pod, char *msg, size_t len)
{
        const json_t *cs;
        size_t i;

        json_array_foreach(json_get_path(pod, "status", "containerStatuses", NULL), i, cs) {
                const json_t *w = json_get_path(cs, "state", "waiting", NULL);
                const json_t *t = json_get_path(cs, "state", "terminated", NULL);
                const char *reason = str(json_get_string_path(w, "reason", NULL));

                if (w && pod_waiting_failure(reason)) {
                        const char *m = nonempty(json_get_string_path(w, "message", NULL));

                        (void)snprintf(msg, len, "%s: %.400s", reason, m ? m : reason);
                        return 1;
                }
                if (t && json_integer_value(json_object_get(t, "exitCode")) != 0) {
                        const char *m = nonempty(json_get_string_path(t, "message", NULL));

                        (void)snprintf(msg, len,
                                       "Container exited with code %" JSON_INTEGER_FORMAT
                                       ": %.400s",
                                       json_integer_value(json_object_get(t, "exitCode")),
                                       m ? m : str(json_get_string_path(t, "reason", NULL)));
                        return 1;
                }
        }
        return 0;
}

#define TERMINATION_MESSAGE_MAX 4096U /* what the kubelet keeps of one */

/* The ids in an ended container's termination message, set on view. */
static int pod_result(json_t *view, const json_t *pod)
{
        static const char *const ids[][2] = { { "RegisteredModel", "registeredModelId" },
                                              { "ModelVersion", "modelVersionId" },
                                              { "ModelArtifact", "modelArtifactId" } };
        const json_t *cs;
        size_t i;

        json_array_foreach(json_get_path(pod, "status", "containerStatuses", NULL), i, cs) {
                const char *m = json_get_string_path(cs, "state", "terminated", "message", NULL);
                CLEANUP(json_decrefp) json_t *r = NULL;
                int q = 0;

                if (!m || strlen(m) > TERMINATION_MESSAGE_MAX ||
                    json_parse_bounded(m, strlen(m), &r, NULL) < 0)
                        continue;
                for (size_t k = 0; k < ELEMENTSOF(ids); k++) {
                        const char *id = nonempty(json_get_string_path(r, ids[k][0], "id", NULL));

                        if (id)
                                q |= json_object_set_new(view, ids[k][1], json_string(id));
                }
                if (q)
                        return -ENOMEM;
        }
        return 0;
}

int ui_transfer_view_pods(json_t *view, const json_t *pods)
{
        const char *status = json_string_value(json_object_get(view, "status"));
        char msg[512], last[512] = "";
        const json_t *pod;
        size_t i;
        int r;

        json_array_foreach(pods, i, pod) {
                if (ui_transfer_pod_error(pod, msg, sizeof(msg)))
                        memcpy(last, msg, sizeof(last));
                r = pod_result(view, pod);
                if (r < 0)
                        return r;
        }
        if (!last[0])
                return 0;
        if (!json_object_get(view, "errorMessage") &&
            json_object_set_new(view, "errorMessage", json_string(last)) < 0)
                return -ENOMEM;
        if ((streq(str(status), "RUNNING") || streq(str(status), "PENDING")) &&
            json_object_set_new(view, "status", json_string("FAILED")) < 0)
                return -ENOMEM;
        return 0;
}

json_t *ui_transfer_event_view(const json_t *ev)
{
        static const char *const keys[] = { "lastTimestamp", "eventTime", "firstTimestamp" };
        const char *t = NULL;
        char ts[32];

        for (size_t i = 0; i < ELEMENTSOF(keys) && !t; i++)
                t = nonempty(json_get_string_path(ev, keys[i], NULL));
        /* upstream's "2006-01-02T15:04:05Z": whole seconds (Kubernetes times are UTC) */
        if (t && strlen(t) >= 19)
                (void)snprintf(ts, sizeof(ts), "%.19sZ", t);
        else
                (void)snprintf(ts, sizeof(ts), "0001-01-01T00:00:00Z");
        return json_pack("{s:s,s:s,s:s,s:s}", "timestamp", ts, "type",
                         str(json_get_string_path(ev, "type", NULL)), "reason",
                         str(json_get_string_path(ev, "reason", NULL)), "message",
                         str(json_get_string_path(ev, "message", NULL)));
}

/* ---- retry ---- */

static int fill(char **field, const char *v)
{
        if (*field || !nonempty(v))
                return 0;
        *field = strdup(v);
        return *field ? 0 : -ENOMEM;
}

static int fill_props(json_t **field, const json_t *cm_data, const char *key)
{
        const char *text = json_get_string_path(cm_data, key, NULL);
        json_t *v = NULL;

        if (*field || !nonempty(text))
                return 0;
        if (json_parse_bounded(text, strlen(text), &v, NULL) < 0)
                return 0; /* upstream goes on without them */
        if (json_is_object(v))
                *field = v;
        else
                json_decref(v);
        return 0;
}

static int retry_from_cm(struct ui_transfer_req *q, const json_t *d)
{
        int r = 0;

        if (!d)
                return 0;
        r |= fill(&q->ma_name, json_get_string_path(d, "ModelArtifact.name", NULL));
        r |= fill(&q->version_description,
                  json_get_string_path(d, "ModelVersion.description", NULL));
        r |= fill(&q->format, json_get_string_path(d, "ModelArtifact.model_format_name", NULL));
        r |= fill(&q->format_version,
                  json_get_string_path(d, "ModelArtifact.model_format_version", NULL));
        r |= fill_props(&q->model_props, d, "RegisteredModel.customProperties");
        r |= fill_props(&q->version_props, d, "ModelVersion.customProperties");
        return r ? -ENOMEM : 0;
}

int ui_transfer_retry_fill(struct ui_transfer_req *q, const char *old_name, const json_t *old_job,
                           const json_t *old_cm_data, struct error_detail *err)
{
        static const struct {
                size_t off;
                const char *ann;
        } from_ann[] = {
                { F(source_type), "source-type" },
                { F(bucket), "source-bucket" },
                { F(key), "source-key" },
                { F(source_uri), "source-uri" },
                { F(dest_type), "dest-type" },
                { F(dest_registry), "dest-registry" },
                { F(dest_uri), "dest-uri" },
                { F(intent), "upload-intent" },
                { F(rm_name), "model-name" },
                { F(mv_name), "version-name" },
                { F(rm_id), "registered-model-id" },
                { F(mv_id), "model-version-id" },
                { F(ma_id), "model-artifact-id" },
                { F(author), "author" },
                { F(description), "description" },
                { F(display_name), "display-name" },
        };
        int r = 0;

        if (!q->ns)
                return invalid(err, "namespace",
                               "the namespace of the job is required for a retry");
        if (!q->name)
                return invalid(err, "name", "a name for the new job is required for a retry");
        if (!job_name_ok(q->name))
                return invalid(err, "name",
                               "must be an RFC 1123 subdomain (lowercase letters, digits, '-' "
                               "and '.') of at most 63 characters");
        if (streq(q->name, old_name))
                return invalid(err, "name", "the new job's name must differ from the old one's");
        if (ui_transfer_status_of(old_job, NULL) != UI_TRANSFER_FAILED)
                return error_detail_set_field(err, ERROR_INVALID, -EINVAL, "name",
                                              "job %s has not failed: only a failed job can be "
                                              "retried",
                                              old_name);
        for (size_t i = 0; i < ELEMENTSOF(from_ann); i++)
                r |= fill(&STR_AT(q, from_ann[i].off), ann(old_job, from_ann[i].ann));
        r |= fill(&q->display_name, old_name);
        if (r)
                return -ENOMEM;
        return retry_from_cm(q, old_cm_data);
}

static int fill_b64(char **field, const json_t *data, const char *key)
{
        const char *v = json_get_string_path(data, key, NULL);
        char *plain = NULL;
        size_t n = 0;
        int r;

        if (*field || !v)
                return 0;
        r = base64_decode(v, &plain, &n);
        if (r < 0)
                return r;
        if (n > 0 && !memchr(plain, '\0', n))
                *field = TAKE_PTR(plain);
        else
                free(plain);
        return 0;
}

int ui_transfer_retry_source_creds(struct ui_transfer_req *q, const json_t *secret_data)
{
        static const struct {
                size_t off;
                const char *key;
        } keys[] = {
                { F(aws_key_id), "AWS_ACCESS_KEY_ID" },
                { F(aws_secret), "AWS_SECRET_ACCESS_KEY" },
                { F(region), "AWS_DEFAULT_REGION" },
                { F(endpoint), "AWS_S3_ENDPOINT" },
        };
        bool had_key = q->aws_key_id != NULL;
        int r = 0;

        if (!streq(str(q->source_type), "s3") || had_key)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(keys) && r >= 0; i++)
                r = fill_b64(&STR_AT(q, keys[i].off), secret_data, keys[i].key);
        return r;
}
